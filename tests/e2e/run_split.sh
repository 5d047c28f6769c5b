#!/usr/bin/env bash
# run_split.sh BUILD_DIR — split launches in live runs (issue 8, item 6):
# `clrr run --plan` with a plan from `clrr optimize --split` runs each
# planned launch of the real application in parts over PoCL's unequal pair
# (basic: one thread, pthread: every core), through the layer and the
# replayer's split engine, on the application's own buffers. Every
# workload checks its results against a host reference, so "APP: ok" and
# exit 0 mean the split run computed what a plain run does.
#  - every workload, the queue's device and the other (1:3); the diff
#    merge (exposure); other data (--seed); other shapes fall back;
#  - adaptive proportions and --split-fixed; bytes already on a device
#    are not sent again (aes over 8 launches);
#  - through OPENCL_LAYERS and LD_PRELOAD;
#  - a plan naming a device that is not here: the launches run whole;
#  - a split launch's event answers CL_EVENT_COMMAND_TYPE as the launch's
#    (deadwork checks it);
#  - the test can fail: a plan whose part loses 4 bytes makes vecadd fail.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"; need "$APPS/vecadd"
[ -e "$B/lib/libclrr-rw.so" ] || skip "the rewriter (libclrr-rw.so) is not built"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS CLRR_APP_DEVICE CLRR_SPLIT_FIXED
export POCL_DEVICES="basic pthread"

# live APP ARGS SPEC [RUN OPTIONS]: record APP on device 1, plan the split,
# run the application with the plan; it must say ok, and every launch the
# plan splits ran split (or whole because its measurements said so)
live() {
    local app=$1 args=$2 spec=$3 tag n
    shift 3
    local t=$TMP/$app${args//[^0-9]/}.clrr   # one recording per workload and size
    tag=$app-$(echo "$spec" | sed 's/:/_/g; s/,/-/g; s/\./d/g')
    [ -e "$t" ] || "$CLRR" record -o "$t" -- "$APPS/$app" ${args//_/ } --device 1 --quiet || fail "recording $app"
    "$CLRR" optimize "$t" -o "$TMP/$tag.plan" --passes none --split "$spec" >/dev/null ||
        fail "optimize $app --split $spec"
    n=$(j "$TMP/$tag.plan" "sum(t['pass'] == 'split' for t in d['transformations'])")
    [ "$n" -ge 1 ] || fail "$app --split $spec: nothing split"
    "$CLRR" run "$@" --plan "$TMP/$tag.plan" --report "$TMP/$tag.json" -- "$APPS/$app" ${args//_/ } --device 1 \
        >"$TMP/$tag.out" 2>"$TMP/$tag.err" || fail "$app split live: $(cat "$TMP/$tag.err" "$TMP/$tag.out")"
    grep -q "^$app: ok" "$TMP/$tag.out" || fail "$app split live: $(cat "$TMP/$tag.out")"
    [ "$(j "$TMP/$tag.json" "(d['split'] + d['split_declined'], d['split_fallback'], d['split_errors'], d['split'] > 0, d['stopped'])")" \
        = "($n, 0, 0, True, False)" ] || fail "$app split live ($n planned): $(j "$TMP/$tag.json" d)"
    grep -q "^clrr run: .* launches split into .* parts" "$TMP/$tag.err" || fail "$app: no split summary: $(cat "$TMP/$tag.err")"
    # the partition-ready kernels were built when the application built its
    # program (its set-up), not at its first split launch
    [ "$(j "$TMP/$tag.json" "(d['split_build_us'] > 0, d['split_built_ahead'] > 0, d['split_built_late'])")" = "(True, True, 0)" ] ||
        fail "$app: kernels not built ahead: $(j "$TMP/$tag.json" d)"
}

while read -r app args; do
    live "$app" "$args" "1:1,0:3"
done < <(split_workloads)
# exposure's decimate writes every other row of its output: merged by diff
[ "$(j "$TMP/exposure-1_1-0_3.plan" "any(m == 'diff' for s in d['splits'] for m in s['merge'])")" = True ] ||
    fail "exposure: no diff merge"
# one work-group on a device; four parts, two on each device; the layer preloaded
live sobel --size=128_--iters=2 "0:0.0001,1:1"
live nbody --size=512_--iters=3 "1:1,0:1,1:1,0:1" --preload

# deadwork's four kernels split, one of them with an event the program
# waits for and asks the command type of: a kernel launch's, though a
# marker stands for it
DW=$B/tests/progs/deadwork
"$CLRR" record -o "$TMP/dw.clrr" -- "$DW" --iters 2 --quiet || fail "recording deadwork"
"$CLRR" optimize "$TMP/dw.clrr" -o "$TMP/dw.plan" --passes none --split 0:1,1:1 >/dev/null || fail "optimize deadwork"
"$CLRR" run --no-learn --plan "$TMP/dw.plan" --report "$TMP/dw.json" -- "$DW" --iters 2 >"$TMP/dw.out" 2>&1 ||
    fail "deadwork split live: $(cat "$TMP/dw.out")"
[ "$(j "$TMP/dw.json" "(d['split'], d['split_fallback'])")" = "(8, 0)" ] || fail "deadwork split live: $(j "$TMP/dw.json" d)"

# ep checks a sample of its work-items when asked (what the GPU machine's
# sizes need), split live as well; --check-every 0 is refused
"$CLRR" run -q --no-learn --plan "$TMP/ep-1_1-0_3.plan" -- "$APPS/ep" --size 2048 --check-every 7 --device 1 \
    >"$TMP/epc.out" 2>&1 || fail "ep --check-every 7: $(cat "$TMP/epc.out")"
grep -q "^ep: ok" "$TMP/epc.out" || fail "ep --check-every 7: $(cat "$TMP/epc.out")"
"$APPS/ep" --size 2048 --check-every 0 >/dev/null 2>&1
[ $? = 2 ] || fail "ep --check-every 0 was accepted"

# other data, same shapes: split again, still right
"$CLRR" run -q --plan "$TMP/vecadd-1_1-0_3.plan" --report "$TMP/seed.json" -- "$APPS/vecadd" --size 10000 --iters 3 \
    --device 1 --seed=5 >"$TMP/seed.out" 2>&1 || fail "vecadd --seed=5: $(cat "$TMP/seed.out")"
grep -q "^vecadd: ok" "$TMP/seed.out" || fail "vecadd --seed=5: $(cat "$TMP/seed.out")"
[ "$(j "$TMP/seed.json" "d['split'] > 0")" = True ] || fail "vecadd --seed=5 did not split: $(j "$TMP/seed.json" d)"
# other shapes: nothing matches, nothing splits, still right
"$CLRR" run -q --plan "$TMP/vecadd-1_1-0_3.plan" --report "$TMP/shape.json" -- "$APPS/vecadd" --size 5000 --iters 3 \
    --device 1 >"$TMP/shape.out" 2>&1 || fail "vecadd --size=5000: $(cat "$TMP/shape.out")"
grep -q "^vecadd: ok" "$TMP/shape.out" || fail "vecadd --size=5000: $(cat "$TMP/shape.out")"
[ "$(j "$TMP/shape.json" "(d['split'], d['applied'])")" = "(0, 0)" ] || fail "other shapes split: $(j "$TMP/shape.json" d)"

# adaptive proportions over 8 launches of aes on the same input: shares
# move, a device keeps what it already holds (only the bytes on either side
# go); --split-fixed keeps the plan's proportions
live aes --size=65536_--iters=8 "1:1,0:1"
[ "$(j "$TMP/aes-1_1-0_1.json" "(d['split_adapted'] >= 2 or d['split_declined'] > 0, d['split_resident'] > 0, len(d['split_launch_ns']) == d['split'])")" \
    = "(True, True, True)" ] || fail "aes adaptive live: $(j "$TMP/aes-1_1-0_1.json" d)"
"$CLRR" run -q --split-fixed --plan "$TMP/aes-1_1-0_1.plan" --report "$TMP/aesf.json" -- "$APPS/aes" --size 65536 \
    --iters 8 --device 1 >"$TMP/aesf.out" 2>&1 || fail "aes --split-fixed: $(cat "$TMP/aesf.out")"
grep -q "^aes: ok" "$TMP/aesf.out" || fail "aes --split-fixed: $(cat "$TMP/aesf.out")"
[ "$(j "$TMP/aesf.json" "(d['split'], d['split_adapted'], d['split_resident'] > 0)")" = "(8, 0, True)" ] ||
    fail "aes --split-fixed: $(j "$TMP/aesf.json" d)"

# every optimized run adds its own measurements: each part's kernel time,
# on its device, to the cost database (CLRR_COSTS, from lib.sh); --no-learn
# adds nothing, --costs names another
kn() { grep -c "^k	[^	]*	[0-9a-f]*	$1	" "$2" 2>/dev/null; }
before=$(kn vecadd "$CLRR_COSTS")
"$CLRR" run -q --no-learn --plan "$TMP/vecadd-1_1-0_3.plan" --report "$TMP/nl.json" -- "$APPS/vecadd" --size 10000 \
    --iters 3 --device 1 >/dev/null 2>&1 || fail "vecadd --no-learn"
[ "$(kn vecadd "$CLRR_COSTS")" = "$before" ] || fail "--no-learn added samples"
"$CLRR" run --costs "$TMP/other-costs" --plan "$TMP/vecadd-1_1-0_3.plan" --report "$TMP/ln.json" -- "$APPS/vecadd" \
    --size 10000 --iters 3 --device 1 >/dev/null 2>"$TMP/ln.err" || fail "vecadd --costs: $(cat "$TMP/ln.err")"
[ "$(j "$TMP/ln.json" "(d['split_learned'] > 0, d['costs'].endswith('other-costs'))")" = "(True, True)" ] ||
    fail "--costs: $(j "$TMP/ln.json" d)"
[ "$(kn vecadd "$TMP/other-costs")" = "$(j "$TMP/ln.json" "d['split_learned']")" ] || fail "--costs: $(cat "$TMP/other-costs")"
# both devices' parts (the key is built by the engine for replay and live runs alike; partition.sh checks it)
[ "$(grep "^k	" "$TMP/other-costs" | cut -f2 | sort -u | wc -l)" = 2 ] || fail "not both devices: $(cat "$TMP/other-costs")"
grep -q "^clrr run: .* part times added to .*other-costs" "$TMP/ln.err" || fail "no learning line: $(cat "$TMP/ln.err")"
[ "$(kn vecadd "$CLRR_COSTS")" -gt 0 ] || fail "the default database got nothing from the runs above"

# Broyden's refinement live: aes's 8 launches adapt, still right
"$CLRR" run -q --split-method broyden --plan "$TMP/aes-1_1-0_1.plan" --report "$TMP/aesb.json" -- "$APPS/aes" \
    --size 65536 --iters 8 --device 1 >"$TMP/aesb.out" 2>&1 || fail "aes broyden: $(cat "$TMP/aesb.out")"
grep -q "^aes: ok" "$TMP/aesb.out" || fail "aes broyden: $(cat "$TMP/aesb.out")"
[ "$(j "$TMP/aesb.json" "(d['split'] + d['split_declined'], d['split_adapted'] >= 2 or d['split_declined'] > 0)")" = "(8, True)" ] ||
    fail "aes broyden: $(j "$TMP/aesb.json" d)"
"$CLRR" run --split-method x --plan "$TMP/aes-1_1-0_1.plan" -- true 2>"$TMP/err"
[ $? = 2 ] || fail "--split-method x: $(cat "$TMP/err")"

# a device that is not here: the launches run whole, and the run says why
POCL_DEVICES=pthread "$CLRR" run --plan "$TMP/vecadd-1_1-0_3.plan" --report "$TMP/gone.json" -- "$APPS/vecadd" \
    --size 10000 --iters 3 --device 0 >"$TMP/gone.out" 2>"$TMP/gone.err" || fail "a missing device: $(cat "$TMP/gone.err")"
grep -q "^vecadd: ok" "$TMP/gone.out" || fail "a missing device: $(cat "$TMP/gone.out")"
[ "$(j "$TMP/gone.json" "(d['split'], d['split_fallback'])")" = "(0, 3)" ] || fail "missing device: $(j "$TMP/gone.json" d)"
grep -q "first launch run whole: vecadd: 1: there is one device here" "$TMP/gone.err" ||
    fail "missing device: no reason: $(cat "$TMP/gone.err")"

# the test can fail: the helper part does not bring back 4 of its bytes
python3 - "$TMP/vecadd-1_1-0_3.plan" "$TMP/short.plan" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["splits"][0]["parts"][1]["regions"][2]["write"][1] -= 4
json.dump(d, open(sys.argv[2], "w"))
PY
"$CLRR" run -q --split-fixed --trust-plan --plan "$TMP/short.plan" -- "$APPS/vecadd" --size 10000 --iters 3 --device 1 \
    >"$TMP/short.out" 2>&1 && fail "a plan that loses bytes gives right results: $(cat "$TMP/short.out")"
grep -q "^vecadd: ok" "$TMP/short.out" && fail "a plan that loses bytes: vecadd says ok"
echo "ok: every workload split live over PoCL's unequal pair (layer and preload), diff merge, adaptive and fixed shares, resident data, fallbacks; a lossy plan is caught"
