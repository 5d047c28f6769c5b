#!/usr/bin/env bash
# The learned device-selection model (model/README.md) on this machine's
# devices: records our workloads (build/apps/*) at several input sizes,
# profiles every trace on every device (clrr profile: per-device times of
# every launch shape, and its features), adds the committed traces/ and any
# suite traces given, then trains and cross-validates (clrr model eval,
# grouped by kernel) with gradient boosting and with the random forest,
# and prints a table.
#
# Usage: bench/model.sh [--build B] [--out DIR] [--scale F] [TRACE...]
#        bench/model.sh --features DIR [--build B] [--scale F]
#   --scale F     input sizes x F (default 1: each app at 1/64, 1/16, 1/4 and
#                 1x its default size)
#   --features DIR  here, where the kernel analysis (LLVM) is: record the same
#                 runs and write only their features into DIR/features.costs;
#                 a machine without LLVM (the GPU machine) appends them to its
#                 cost database (give --features-from DIR there).
#   --features-from DIR  append DIR/features.costs's `f` records first.
#   --traces-only  record nothing and add no traces/: profile only the
#                 TRACEs given (third-party traces recorded elsewhere:
#                 their features made there with --features DIR TRACE...).
# The cost database is OUT/costs (default OUT: /tmp/clrr-model); the model
# OUT/model.json. On the GPU machine (no LLVM, no libxgboost): run
# `bench/model.sh --features DIR` here first and carry DIR, then there
# `bench/model.sh --features-from DIR`; give CLRR_XGBOOST=/path/libxgboost.so.0
# (from the libxgboost0 and libdmlc0 packages, unpacked with dpkg -x, with
# LD_LIBRARY_PATH for libdmlc) or evaluate the printed cost database here.
# POCL_DEVICES="basic pthread" gives PoCL's single- and
# multi-threaded CPU devices (two devices on a machine with one CPU).
set -u
B=build OUT=/tmp/clrr-model SCALE=1 FEAT= FROM= ONLY=
TRACES=()
while [ $# -gt 0 ]; do
    case $1 in
    --build) B=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --features) FEAT=$2; shift 2 ;;
    --features-from) FROM=$2; shift 2 ;;
    --traces-only) ONLY=1; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) TRACES+=("$1"); shift ;;
    esac
done
C=$B/bin/clrr
[ -x "$C" ] || { echo "bench/model.sh: no $C (make first)" >&2; exit 3; }
mkdir -p "$OUT/traces"
export CLRR_COSTS=$OUT/costs
[ -n "$FEAT" ] && { mkdir -p "$FEAT"; export CLRR_COSTS=$FEAT/features.costs; rm -f "$CLRR_COSTS"; }
# app default-size iters: the sizes are default * SCALE / {64,16,4,1}
APPS="aes:262144:2 blackscholes:1048576:2 ep:32768:1 exposure:1024:1 geomatrix:512:1 histogram:16777216:1
      jacobi:1024:2 matmul:512:1 nbody:4096:2 overlap:262144:2 sobel:1024:1 spmv:131072:1 vecadd:4194304:1"
t0=$(date +%s)
n=0
[ -n "$ONLY" ] && APPS=
for w in $APPS; do
    IFS=: read -r app def iters <<<"$w"
    [ -x "$B/apps/$app" ] || continue
    for div in 64 16 4 1; do
        size=$(python3 -c "import sys; print(max(16, int($def * $SCALE / $div)))")
        t=$OUT/traces/$app-$size.clrr
        [ -s "$t" ] || "$C" record --force -o "$t" -- "$B/apps/$app" --size "$size" --iters "$iters" --quiet \
            >/dev/null 2>"$OUT/err.txt" || { echo "record $app --size $size: $(tail -1 "$OUT/err.txt")"; rm -f "$t"; continue; }
        TRACES+=("$t")
        n=$((n + 1))
    done
done
[ -n "$ONLY" ] || for t in traces/*.clrr; do TRACES+=("$t"); done
if [ -n "$ONLY" ]; then
    echo "traces    ${#TRACES[@]} (given)"
else
    echo "traces    ${#TRACES[@]} ($n recorded from build/apps at 4 sizes each, $(ls traces/*.clrr | wc -l) from traces/, the rest given)"
fi
if [ -n "$FEAT" ]; then
    for t in "${TRACES[@]}"; do "$C" model features "$t" >/dev/null 2>&1 || echo "features $t: failed"; done
    echo "features  $(grep -c '^f' "$CLRR_COSTS") launch shapes in $CLRR_COSTS"
    exit 0
fi
if [ -n "$FROM" ]; then
    [ -s "$CLRR_COSTS" ] || printf 'clrr-costs\t1\n' >"$CLRR_COSTS"
    grep '^f' "$FROM/features.costs" >>"$CLRR_COSTS"
fi
prof=0
for t in "${TRACES[@]}"; do
    if "$C" profile "$t" --reps 3 --max-seconds 3 >"$OUT/prof.txt" 2>&1; then
        prof=$((prof + 1))
    else
        echo "profile   $t: $(grep -v '^ ' "$OUT/prof.txt" | tail -1)"
    fi
done
echo "profiled  $prof traces in $(( $(date +%s) - t0 )) s; devices:"
"$C" devices 2>/dev/null | grep -E '^[0-9]'
if ! "$C" model train -o "$OUT/model.json"; then
    echo "bench/model.sh: no model trained here; the samples are in $OUT/costs: copy it to a machine with"
    echo "  libxgboost (or set CLRR_XGBOOST) and run: clrr model eval --costs FILE; clrr model eval --forest --costs FILE"
    exit 3
fi
printf '\n%-18s %9s %9s %8s %8s %9s %9s %7s\n' method accuracy baseline samples kernels "sum x" "geomean x" worst
for m in boost forest; do
    f=; [ $m = forest ] && f=--forest
    "$C" model eval $f --json >"$OUT/eval-$m.json" || { echo "$m: eval failed"; continue; }
    python3 - "$OUT/eval-$m.json" $m <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
print("%-18s %8.1f%% %8.1f%% %8d %8d %9.3f %9.3f %6.2fx" % (sys.argv[2] + " (%d-fold)" % e["folds"], 100 * e["accuracy"],
      100 * e["baseline_accuracy"], e["samples"], e["kernels"], e["chosen_ns"] / e["oracle_ns"], e["geomean_ratio"], e["max_ratio"]))
PY
done
echo
echo "accuracy: the model picked the measured fastest device (cross-validated, a kernel's shapes never in its own training folds)"
echo "baseline: always the device fastest most often in the training folds; sum x: the choices' total time / the oracle's"
"$C" model eval
