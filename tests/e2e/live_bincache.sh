#!/usr/bin/env bash
# live_bincache.sh BUILD_DIR — whole-process gains of `clrr run --plan`
# (issue 36, item 5) on the real device:
# - the kernel binary cache: the first run builds sobel's fused kernels from
#   source and keeps their binaries; the second makes them from the binaries
#   (the report counts hits, no build); a corrupted, a truncated and a
#   foreign entry are each rebuilt from source (the report says so) with the
#   same output; a cache folder that cannot be made leaves the run working,
#   with one line on stderr at most;
# - past CLRR_KERNEL_CACHE_MAX bytes the least recently used entries go;
# - the report gives the whole process and the OpenCL time;
# - never slower: `clrr optimize --tune` weighs the measured gain against
#   what the layer costs (a layer cost injected through the cost database,
#   an `l` record, so that the outcome does not depend on timing): with a
#   layer dearer than any gain every transformation goes, and `clrr run`
#   runs the application without the layer.
. "$(dirname "$0")/lib.sh"
S=$B/apps/sobel
W=$B/tests/progs/wgtune
need "$CLRR"; need "$LAYER"; need "$S"; need "$W"
unset OPENCL_LAYERS LD_PRELOAD CLRR_APP_DEVICE
export CLRR_COSTS=$TMP/costs CLRR_KERNEL_CACHE=$TMP/kc
args=(--size 128 --iters 2)

"$S" "${args[@]}" | sed 's/ ocl_ms=.*//' >"$TMP/plain.out" || fail "sobel"
"$CLRR" record -o "$TMP/s.clrr" -- "$S" "${args[@]}" --quiet >/dev/null || fail "recording sobel"
"$CLRR" optimize "$TMP/s.clrr" -o "$TMP/s.plan" >"$TMP/o.txt" 2>&1 || fail "optimize: $(cat "$TMP/o.txt")"
[ "$(j "$TMP/s.plan" "len(d['fused_kernels'])")" -ge 1 ] || fail "no fused kernel in the plan: $(cat "$TMP/o.txt")"

run() {   # run N [env...]: clrr run --plan, report r$N.json, stderr e$N.txt, output checked
    local n=$1; shift
    env "$@" "$CLRR" run --plan "$TMP/s.plan" --report "$TMP/r$n.json" -- "$S" "${args[@]}" >"$TMP/o$n.out" \
        2>"$TMP/e$n.txt" || fail "run $n: $(cat "$TMP/o$n.out" "$TMP/e$n.txt")"
    sed 's/ ocl_ms=.*//' "$TMP/o$n.out" | cmp -s - "$TMP/plain.out" ||
        fail "run $n printed $(cat "$TMP/o$n.out"), plain $(cat "$TMP/plain.out")"
}
kc() { j "$TMP/r$1.json" "' '.join('%s=%d' % (k, d['kernel_cache'][k]) for k in ('hits', 'misses', 'rebuilt', 'stored', 'store_errors'))"; }

# 1. cold: built from source, kept
run 1
n=$(j "$TMP/r1.json" "d['kernel_cache']['misses']")
[ "$n" -ge 1 ] && [ "$(kc 1)" = "hits=0 misses=$n rebuilt=0 stored=$n store_errors=0" ] || fail "first run: $(kc 1)"
[ "$(ls "$TMP/kc" | grep -c '^[0-9a-f]\{32\}\.bin$')" = "$n" ] || fail "cache folder: $(ls -la "$TMP/kc")"
# the report: the whole process (measured by clrr run) and the OpenCL time
[ "$(j "$TMP/r1.json" "d['process_us'] > 0 and d['ocl_us'] > 0 and d['ocl_calls'] > 0 and d['ocl_us'] <= d['process_us']")" = True ] ||
    fail "process/OpenCL time: $(j "$TMP/r1.json" "(d.get('process_us'), d.get('ocl_us'), d.get('ocl_calls'))")"
grep -q "^clrr run: whole process [0-9.]* ms; its [0-9]* OpenCL calls [0-9.]* ms" "$TMP/e1.txt" || fail "summary: $(cat "$TMP/e1.txt")"

# 2. warm: every generated program from its binary, nothing built
run 2
[ "$(kc 2)" = "hits=$n misses=0 rebuilt=0 stored=0 store_errors=0" ] || fail "second run: $(kc 2)"
[ "$(j "$TMP/r2.json" "d['kernel_cache']['build_us']")" = 0 ] || fail "second run built: $(j "$TMP/r2.json" "d['kernel_cache']")"
grep -q "^clrr run: kernel binary cache: $n generated programs loaded from it (.* ms of builds saved), 0 built from source" \
    "$TMP/e2.txt" || fail "summary: $(cat "$TMP/e2.txt")"

# 3. broken entries: bytes changed, cut short, another key's entry: rebuilt
set -- "$TMP"/kc/*.bin
printf 'XXXXXXXX' | dd of="$1" bs=1 seek=100 conv=notrunc 2>/dev/null
broken=1
[ $# -ge 2 ] && truncate -s 30 "$2" && broken=2
run 3
[ "$(kc 3)" = "hits=$((n - broken)) misses=0 rebuilt=$broken stored=$broken store_errors=0" ] || fail "broken entries: $(kc 3)"
grep -q "rebuilt (an entry that was not one)" "$TMP/e3.txt" || fail "summary: $(cat "$TMP/e3.txt")"
run 4
[ "$(kc 4)" = "hits=$n misses=0 rebuilt=0 stored=0 store_errors=0" ] || fail "rewritten entries: $(kc 4)"
if [ $# -ge 2 ]; then   # a foreign entry: another program's binary under this key
    cp "$2" "$1"
    run 5
    [ "$(j "$TMP/r5.json" "d['kernel_cache']['rebuilt']")" = 1 ] || fail "foreign entry: $(kc 5)"
fi

# 4. a cache folder that cannot be made: the run works, one line at most
: >"$TMP/file"
run 6 CLRR_KERNEL_CACHE="$TMP/file/kc"
[ "$(j "$TMP/r6.json" "(d['kernel_cache']['hits'], d['kernel_cache']['store_errors'] > 0)")" = "(0, True)" ] ||
    fail "unwritable: $(kc 6)"
[ "$(grep -c "kernel binary cache" "$TMP/e6.txt")" -le 2 ] && [ "$(grep -c "^clrr: " "$TMP/e6.txt")" = 1 ] ||
    fail "unwritable: stderr $(cat "$TMP/e6.txt")"

# 5. bounded: a folder that holds one entry keeps the last one kept
if [ "$n" -ge 2 ]; then
    max=$(( $(stat -c %s "$TMP"/kc/*.bin | sort -n | tail -1) + 100 ))
    run 7 CLRR_KERNEL_CACHE="$TMP/kc2" CLRR_KERNEL_CACHE_MAX=$max
    [ "$(ls "$TMP/kc2" | grep -c '\.bin$')" = 1 ] || fail "eviction: $(ls -la "$TMP/kc2")"
    run 8 CLRR_KERNEL_CACHE="$TMP/kc2" CLRR_KERNEL_CACHE_MAX=$max
    [ "$(ls "$TMP/kc2" | grep -c '\.bin$')" = 1 ] &&
        [ "$(j "$TMP/r8.json" "d['kernel_cache']['hits'] + d['kernel_cache']['misses']")" = "$n" ] ||
        fail "eviction: $(kc 8); $(ls -la "$TMP/kc2")"
fi

# 6. never slower: a layer that costs more than any gain
"$CLRR" record -o "$TMP/w.clrr" -- "$W" --size 256 >/dev/null || fail "recording wgtune"
printf 'clrr-costs\t1\nl\ttest\t1\t1000000000000\t0\t0\n' >"$TMP/dear"
CLRR_COSTS=$TMP/dear "$CLRR" optimize "$TMP/w.clrr" -o "$TMP/w.plan" --tune=rapid --budget 10 >"$TMP/w.txt" 2>"$TMP/w.err" ||
    fail "optimize --tune: $(cat "$TMP/w.txt" "$TMP/w.err")"
if grep -q "^clrr optimize: tune: blur .*: local size" "$TMP/w.err"; then
    grep -q "^clrr optimize: verify: live: the plan's measured gain [0-9.]* ms against what the layer costs a run, [0-9.]* ms (35 calls x 1000000000.00 us + 0.000 ms; medians of the cost database's layer records): every transformation removed" \
        "$TMP/w.err" || fail "no line for the live-cost rule: $(cat "$TMP/w.err")"
else
    echo "note: the tuning found nothing faster here this time: the rule had nothing to weigh"
fi
[ "$(j "$TMP/w.plan" "len(d['transformations'])")" = 0 ] || fail "the plan kept: $(j "$TMP/w.plan" "d['transformations']")"
"$CLRR" run --plan "$TMP/w.plan" -- "$W" --size 256 >/dev/null 2>"$TMP/wr.err" || fail "run: $(cat "$TMP/wr.err")"
grep -q "nothing in it applies here (it has no transformation).*runs without the layer" "$TMP/wr.err" ||
    fail "run: $(cat "$TMP/wr.err")"
# ... and one that costs nothing: what the tuning found stays
printf 'clrr-costs\t1\nl\ttest\t1\t0\t0\t0\n' >"$TMP/free"
CLRR_COSTS=$TMP/free "$CLRR" optimize "$TMP/w.clrr" -o "$TMP/w2.plan" --tune=rapid --budget 10 >"$TMP/w2.txt" 2>"$TMP/w2.err" ||
    fail "optimize --tune: $(cat "$TMP/w2.txt" "$TMP/w2.err")"
if grep -q "^clrr optimize: tune: blur .*: local size" "$TMP/w2.err"; then
    grep -q "^clrr optimize: verify: live: .*0.000 ms; medians of the cost database's layer records): kept" "$TMP/w2.err" ||
        fail "the rule removed a gain from a free layer: $(cat "$TMP/w2.err")"
    [ "$(j "$TMP/w2.plan" "len(d['transformations'])")" = 1 ] || fail "the plan: $(j "$TMP/w2.plan" "d['transformations']")"
fi
# a malformed layer record is refused with its line
printf 'clrr-costs\t1\nl\ttest\t0\t1\t1\t0\n' >"$TMP/bad"
CLRR_COSTS=$TMP/bad "$CLRR" optimize "$TMP/w.clrr" -o "$TMP/w3.plan" --tune=rapid --budget 1 >/dev/null 2>"$TMP/w3.err" &&
    fail "a bad layer record was accepted"
grep -q "bad:2: layer record: CALLS is 0" "$TMP/w3.err" || fail "bad record: $(cat "$TMP/w3.err")"
echo "ok"
