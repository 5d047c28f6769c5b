#!/usr/bin/env bash
# run.sh FUZZ_DIR SECONDS MERGE TARGET... — `make fuzz`: runs each libFuzzer
# target (FUZZ_DIR/fuzz_TARGET) for SECONDS, one after the other, on a
# scratch copy of its corpus and crashes (FUZZ_DIR/work/TARGET/corpus, where
# new inputs go); crash, leak and timeout inputs go to
# FUZZ_DIR/work/TARGET/artifacts/. A run that stops on a crash is started
# again (on the grown corpus) until the time is used, at most 20 times.
# MERGE=1 then rewrites the committed corpus as a minimized set: its seeds
# (seed-*, from seeds.sh) and, of the other inputs of at most 16 KiB (the
# committed ones and the new ones), those that add coverage edges to them
# (libFuzzer -merge=1 -use_counters=0).
# Prints a table: target, seconds, executions, execs/s, corpus size (start
# -> end), new inputs, crashes; exit status 1 when a target crashed.
set -uo pipefail
DIR=${1:?usage: run.sh FUZZ_DIR SECONDS MERGE TARGET...}
SECS=${2:?}
MERGE=${3:?}
shift 3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# corpus TARGET: the committed corpus folder
corpus() {
    case $1 in trace) echo "$ROOT/tests/fuzz-corpus/trace-format";; *) echo "$ROOT/tests/fuzz-corpus/$1";; esac
}
MAXLEN=65536
rows=()
failed=0
for t in "$@"; do
    bin=$DIR/fuzz_$t
    work=$DIR/work/$t
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp "$(corpus "$t")"/* "$work/corpus/"
    [ -d "$ROOT/tests/fuzz/crashes/$t" ] && cp "$ROOT/tests/fuzz/crashes/$t"/* "$work/corpus/" 2>/dev/null
    n0=$(ls "$work/corpus" | wc -l)
    start=$(date +%s)
    execs=0 runs=0 news=0
    while :; do
        left=$((SECS - ($(date +%s) - start)))
        [ $left -ge 5 ] && [ $runs -lt 20 ] || break
        runs=$((runs + 1))
        log=$work/run$runs.log
        echo "fuzz_$t: run $runs, ${left}s (log $log)"
        # a real driver's program builds take seconds (PoCL's LLVM, more on a loaded machine)
        to=10; [ "$t" != replay_pocl ] || to=60
        timeout $((left + 120)) "$bin" -max_total_time=$left -timeout=$to -rss_limit_mb=2560 -max_len=$MAXLEN \
            -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" >"$log" 2>&1
        rc=$?
        e=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        a=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
        execs=$((execs + ${e:-0}))
        news=$((news + ${a:-0}))
        if [ $rc -ne 0 ]; then
            echo "fuzz_$t: run $runs stopped (exit $rc): $(grep -m1 -E 'ERROR|SUMMARY|fuzz_[a-z]+: ' "$log")"
        fi
    done
    secs=$(($(date +%s) - start))
    n1=$(ls "$work/corpus" | wc -l)
    crashes=$(ls "$work/artifacts" | wc -l)
    [ "$crashes" -eq 0 ] || failed=1
    rate=$((execs / (secs > 0 ? secs : 1)))
    rows+=("$(printf '%-8s %8s %12s %9s %16s %6s %8s' "$t" "$secs" "$execs" "$rate" "$n0 -> $n1" "$news" "$crashes")")
    if [ "$MERGE" = 1 ]; then
        c=$(corpus "$t")
        rm -rf "$work/merged" "$work/candidates"
        mkdir -p "$work/merged" "$work/candidates"
        cp "$c"/seed-* "$work/merged/"
        for f in "$work/corpus"/*; do
            b=$(basename "$f")
            case $b in seed-*) continue;; esac
            [ -e "$ROOT/tests/fuzz/crashes/$t/$b" ] && continue
            [ "$(stat -c %s "$f")" -le 16384 ] && cp "$f" "$work/candidates/"
        done
        if "$bin" -merge=1 -use_counters=0 -max_len=$MAXLEN "$work/merged" "$work/candidates" \
            >"$work/merge.log" 2>&1; then
            rm -f "$c"/*
            cp "$work/merged"/* "$c/"
            echo "fuzz_$t: corpus now $(ls "$c" | wc -l) files, $(du -sh "$c" | cut -f1) ($c)"
        else
            echo "fuzz_$t: merge failed: $(tail -1 "$work/merge.log")"
        fi
    fi
done
echo
printf '%-8s %8s %12s %9s %16s %6s %8s\n' target seconds executions execs/s "corpus" new crashes
for r in "${rows[@]}"; do echo "$r"; done
for t in "$@"; do
    for f in "$DIR/work/$t/artifacts"/*; do [ -e "$f" ] && echo "crash: $f"; done
done
exit $failed
