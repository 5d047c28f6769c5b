#!/usr/bin/env bash
# record_device.sh BUILD_DIR — `clrr record --device SPEC` and `clrr run
# --device SPEC` present the device SPEC names as the application's first
# platform and device (docs/recording.md, "The device you choose").
# Two platforms, the stub driver first (ocl-icd sorts OCL_ICD_VENDORS'
# entries: a-stub.icd before b-pocl.icd) and PoCL. tests/progs/firstdev
# takes the first platform and its first device (or, with "context", the
# context clCreateContextFromType(DEFAULT) gives with no platform) and
# computes out[i] = a[i] * 3 + i, checked on the host: the stub runs no
# kernel, so "result: ok" means it ran on PoCL. Both are CPUs: `cpu` is the
# stub (the first CPU in `clrr devices` order), `cpu1`, `pthread` (part of
# PoCL's device name), `portable` (of its platform's) and the index 1 are
# PoCL. In layer and preload mode: the application's output is right, the
# trace names the override (ENV device_override, `clrr info`), replays
# verified; a SPEC that matches nothing is one line and exit 2, before the
# application runs.
. "$(dirname "$0")/lib.sh"
P=$B/tests/progs/firstdev
need "$CLRR"; need "$P"; need "$B/stub-vendors/clrrstub.icd"
[ -e /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"
V=$TMP/vendors; mkdir -p "$V"
cp "$B/stub-vendors/clrrstub.icd" "$V/a-stub.icd"; cp /etc/OpenCL/vendors/pocl.icd "$V/b-pocl.icd"
export OCL_ICD_VENDORS=$V
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_FILENAMES CLRR_DEVICE CLRR_DEVICE_ONLY
"$CLRR" devices --json >"$TMP/devs.json" || fail "clrr devices"
python3 - "$TMP/devs.json" <<'PY' || skip "the devices are not the stub's then PoCL's"
import json, sys
d = json.load(open(sys.argv[1]))["devices"]
assert [x["name"] for x in d][0] == "clrr stub device" and len(d) == 2, d
PY
POCL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][1]["name"])' "$TMP/devs.json")

# without clrr, and recorded without --device: the stub (the test means something)
"$P" >"$TMP/plain.out" 2>&1 && fail "firstdev succeeded on the stub: the test cannot tell the devices apart"
grep -qx "platform: clrr stub" "$TMP/plain.out" || fail "plain firstdev: $(cat "$TMP/plain.out")"
"$CLRR" record -o "$TMP/none.clrr" -- "$P" >"$TMP/none.out" 2>&1 && fail "recorded without --device, firstdev succeeded"
grep -qx "platform: clrr stub" "$TMP/none.out" || fail "recorded without --device: $(cat "$TMP/none.out")"

check_trace() {   # TRACE SPEC: the ENV entry names PoCL's device, `clrr info` says so, it replays verified
    "$CLRR" info --json "$1" >"$TMP/info.json" || fail "clrr info $1"
    python3 - "$TMP/info.json" "$2" "$POCL" <<'PY' || fail "$1: device_override"
import json, sys
o = json.load(open(sys.argv[1]))["device_override"]
assert o["spec"] == sys.argv[2] and o["device"] == sys.argv[3] and o["index"] == 1, o
assert o["platform"] == "Portable Computing Language", o
PY
    "$CLRR" info "$1" | grep -q "^override   --device $2: $POCL (Portable Computing Language) was the application's first platform and device$" ||
        fail "$1: clrr info does not say the override"
    "$CLRR" replay -q "$1" || fail "$1 does not replay verified"
}
for mode in layer preload; do
    flag=; [ $mode = preload ] && flag=--preload
    specs="pthread 1 cpu1 portable"; [ $mode = preload ] && specs="pthread 1"   # the spec rules are the layer's either way
    for spec in $specs; do
        for how in "" context; do
            t=$TMP/$mode-$spec${how:+-$how}.clrr
            "$CLRR" record $flag --device "$spec" -o "$t" -- "$P" $how >"$TMP/rec.out" 2>&1 ||
                fail "$mode, --device $spec $how: $(cat "$TMP/rec.out")"
            grep -qx "platform: Portable Computing Language" "$TMP/rec.out" && grep -qx "device: $POCL" "$TMP/rec.out" &&
                grep -qx "result: ok" "$TMP/rec.out" || fail "$mode, --device $spec $how: $(cat "$TMP/rec.out")"
            [ "$spec" = pthread ] || [ "$spec" = 1 ] && check_trace "$t" "$spec"
        done
    done
    # `cpu` is the first CPU of `clrr devices`: the stub
    "$CLRR" record $flag --device cpu -o "$TMP/$mode-cpu.clrr" -- "$P" >"$TMP/rec.out" 2>&1 &&
        fail "$mode, --device cpu: firstdev succeeded, on the stub?"
    grep -qx "platform: clrr stub" "$TMP/rec.out" || fail "$mode, --device cpu: $(cat "$TMP/rec.out")"
    # clrr run --device, without a plan: nothing recorded, the output right
    "$CLRR" run $flag -q --device pthread -- "$P" context >"$TMP/run.out" 2>"$TMP/run.err" ||
        fail "$mode, clrr run --device pthread: $(cat "$TMP/run.out" "$TMP/run.err")"
    grep -qx "result: ok" "$TMP/run.out" && [ ! -s "$TMP/run.err" ] || fail "$mode, clrr run: $(cat "$TMP/run.out" "$TMP/run.err")"
done

# clrr run --device with a plan
"$CLRR" optimize "$TMP/layer-pthread.clrr" -o "$TMP/fd.plan" >/dev/null || fail "clrr optimize"
"$CLRR" run -q --device 1 --plan "$TMP/fd.plan" -- "$P" >"$TMP/run.out" 2>&1 && grep -qx "result: ok" "$TMP/run.out" ||
    fail "clrr run --device 1 --plan: $(cat "$TMP/run.out")"
"$CLRR" run -q --plan "$TMP/fd.plan" -- "$P" >"$TMP/run.out" 2>&1 && fail "clrr run --plan without --device reached PoCL"

# a spec that matches nothing: one line, exit 2, the application never ran
for cmd in "record -o $TMP/bad.clrr" "run"; do
    for spec in nosuchdevice 7 gpu cpu5; do
        rc=0
        "$CLRR" $cmd --device $spec -- "$P" >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
        [ $rc = 2 ] && [ "$(wc -l <"$TMP/bad.err")" = 1 ] && [ ! -s "$TMP/bad.out" ] &&
            grep -q "^clrr ${cmd%% *}: --device $spec: .*(see 'clrr devices')$" "$TMP/bad.err" ||
            fail "clrr $cmd --device $spec: exit $rc: $(cat "$TMP/bad.out" "$TMP/bad.err")"
    done
done
[ -e "$TMP/bad.clrr" ] && fail "a refused recording left a trace"
rc=0; CLRR_DEVICE=nosuchdevice "$CLRR" record -o "$TMP/bad.clrr" -- "$P" >/dev/null 2>"$TMP/bad.err" || rc=$?
[ $rc = 2 ] || fail "CLRR_DEVICE=nosuchdevice clrr record: exit $rc"
rc=0; CLRR_DEVICE=nosuchdevice "$CLRR" run --plan "$TMP/fd.plan" -- "$P" >/dev/null 2>"$TMP/bad.err" || rc=$?
[ $rc = 2 ] || fail "CLRR_DEVICE=nosuchdevice clrr run --plan: exit $rc"
# the layer used directly with a spec that matches nothing: one line, the application's own choice
rc=0; CLRR_DEVICE=nosuchdevice CLRR_OUTPUT=$TMP/direct.clrr OPENCL_LAYERS=$LAYER "$P" >"$TMP/d.out" 2>"$TMP/d.err" || rc=$?
grep -qx "platform: clrr stub" "$TMP/d.out" && [ "$(wc -l <"$TMP/d.err")" = 1 ] &&
    grep -q "^clrr: --device nosuchdevice: no device here matches" "$TMP/d.err" || fail "the layer with a bad CLRR_DEVICE: $(cat "$TMP/d.out" "$TMP/d.err")"
"$CLRR" info "$TMP/direct.clrr" | grep -q "^override   --device nosuchdevice matched nothing" || fail "clrr info: the failed override"
# the device check's answer is kept (tools/clrr/cli_here.c): a second run
# starts no driver before the application; its description is the kept
# one; a spec that names nothing is never kept (the tests keep nothing
# elsewhere: lib.sh sets CLRR_KERNEL_CACHE, under which no answer is kept)
X=$TMP/xdg
env -u CLRR_KERNEL_CACHE XDG_CACHE_HOME=$X "$CLRR" run --device 0 -- /bin/true 2>"$TMP/k1.err" || fail "run --device 0: $(cat "$TMP/k1.err")"
kept=$(ls "$X/clrr/run-here/" 2>/dev/null)
[ "$(echo "$kept" | wc -w)" = 1 ] && grep -q "^ok	" "$X/clrr/run-here/$kept" || fail "no kept answer: $(ls -R "$X")"
printf 'ok\tKEPT DEVICE (kept)\n' >"$X/clrr/run-here/$kept"
env -u CLRR_KERNEL_CACHE XDG_CACHE_HOME=$X "$CLRR" run --device 0 -- /bin/true 2>"$TMP/k2.err" || fail "run --device 0, kept: $(cat "$TMP/k2.err")"
grep -q "^clrr run: KEPT DEVICE (kept) is /bin/true's first platform and device" "$TMP/k2.err" || fail "the kept answer was not used: $(cat "$TMP/k2.err")"
rc=0; env -u CLRR_KERNEL_CACHE XDG_CACHE_HOME=$X "$CLRR" run --device nosuchdevice -- /bin/true 2>/dev/null || rc=$?
[ $rc = 2 ] && [ "$(ls "$X/clrr/run-here/" | wc -l)" = 1 ] || fail "a spec that names nothing: exit $rc, kept $(ls "$X/clrr/run-here/")"
echo "ok: --device presents the chosen device first (layer and preload, record and run); traces replay verified"
