#!/usr/bin/env bash
# opt_tune.sh BUILD_DIR — the wgsize pass (issue 36, items 1 and 2) on the
# real device: tests/progs/wgtune records a 2-D stencil (blur) with the
# local size 1x1, which costs a CPU device a work-group per work-item, and
# a kernel (ids) whose results depend on the local size. `clrr optimize
# --tune` measures other local sizes on the launches' recorded inputs:
# blur gets a local_size transformation (faster beyond the noise, outputs
# bit-identical), ids never does (every faster size changes its outputs);
# `clrr replay --plan` runs blur's launches with the tuned size, verified,
# and `clrr run --plan` gives the application the same output. A plan whose
# decisions were measured on another device is not applied (replay and run
# say so; run then runs the application without the layer), and corrupt
# local sizes in a plan are refused with one line.
. "$(dirname "$0")/lib.sh"
W=$B/tests/progs/wgtune
need "$CLRR"; need "$LAYER"; need "$W"
unset OPENCL_LAYERS LD_PRELOAD CLRR_APP_DEVICE
export CLRR_COSTS=$TMP/costs
# a layer that costs nothing (an `l` record): this tests the tuning, not
# the rule that weighs a plan against the layer (live_bincache.sh does)
printf 'clrr-costs\t1\nl\ttest\t1\t0\t0\t0\n' >"$CLRR_COSTS"

"$W" --size 256 >"$TMP/plain.out" || fail "wgtune: $(cat "$TMP/plain.out")"
"$CLRR" record -o "$TMP/w.clrr" -- "$W" --size 256 >/dev/null || fail "recording wgtune"
# --device: the tuning's replays run on the device named (here the first)
"$CLRR" optimize "$TMP/w.clrr" -o "$TMP/w.plan" --tune=rapid --budget 60 --device 0 >"$TMP/o.txt" 2>"$TMP/o.err" ||
    fail "optimize --tune --device 0: $(cat "$TMP/o.txt" "$TMP/o.err")"
if ! grep -q "^pass      wgsize     1 launch shape tuned" "$TMP/o.txt"; then
    # timing on a machine shared with other jobs: once more, saying why
    echo "note: the first tuning found nothing; its lines:"; cat "$TMP/o.err"
    "$CLRR" optimize "$TMP/w.clrr" -o "$TMP/w.plan" --tune=rapid --budget 60 >"$TMP/o.txt" 2>"$TMP/o.err" ||
        fail "optimize --tune: $(cat "$TMP/o.txt" "$TMP/o.err")"
fi
# a device that is not here: one line, exit 2, no plan written
rc=0; "$CLRR" optimize "$TMP/w.clrr" -o "$TMP/nodev.plan" --tune --device no-such-device >/dev/null 2>"$TMP/nd.err" || rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMP/nd.err")" = 1 ] && grep -q "no device here matches" "$TMP/nd.err" && [ ! -e "$TMP/nodev.plan" ] ||
    fail "--device no-such-device: exit $rc: $(cat "$TMP/nd.err")"
grep -q "^pass      wgsize     1 launch shape tuned" "$TMP/o.txt" || fail "optimize summary: $(cat "$TMP/o.txt" "$TMP/o.err")"
grep -q "^clrr optimize: tune: blur (launch [0-9]*, 2 launches): local size [0-9x]* instead of 1x1: .*outputs identical" \
    "$TMP/o.err" || fail "no tuning line for blur: $(cat "$TMP/o.err")"
grep -q "^clrr optimize: tune: ids (launch [0-9]*): kept 1: of \([0-9]*\) other local sizes, \1 change the outputs, 0 fail" "$TMP/o.err" ||
    fail "ids: no line saying every other size changes its outputs: $(cat "$TMP/o.err")"
# the cost database keeps the decision: one w record, blur, 1x1 -> the plan's size
grep -q "^clrr optimize: tune: 1 tuned local size added to $TMP/costs" "$TMP/o.err" || fail "costs: $(cat "$TMP/o.err")"
python3 - "$TMP/costs" "$TMP/w.plan" <<'PY' || fail "the cost database: $(cat "$TMP/costs")"
import json, sys
w = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.startswith("w\t")]
t = json.load(open(sys.argv[2]))["local_sizes"][0]["tuned"][0]
assert len(w) == 1 and w[0][3] == "blur" and w[0][6] == "1,1,1", w
assert w[0][7] == "%d,%d,1" % tuple(t["local"]) and int(w[0][8]) == t["before_ns"] and int(w[0][9]) == t["after_ns"], (w, t)
PY
# the plan: 1.14, requires local_size, one tuned shape (blur) by pattern,
# with this device's measurements; nothing for ids
[ "$(j "$TMP/w.plan" "(d['version'], 'local_size' in d['requires'], len(d['local_sizes']), d['local_sizes'][0]['kernel'], d['local_sizes'][0]['recorded'])")" \
    = "('1.14', True, 1, 'blur', [1, 1])" ] || fail "the plan: $(j "$TMP/w.plan" "d['local_sizes']")"
[ "$(j "$TMP/w.plan" "[(t['pass'], t['action'], t['occurrences']) for t in d['transformations'] if t['pass'] == 'wgsize']")" \
    = "[('wgsize', 'local_size', 2)]" ] || fail "transformations: $(j "$TMP/w.plan" "d['transformations']")"
[ "$(j "$TMP/w.plan" "[t for t in d['transformations'] if 'ids@' in json.dumps(t) or t['pattern'].get('kernel', {}).get('kernel') == 'ids']")" = "[]" ] ||
    fail "ids was retuned: $(j "$TMP/w.plan" "d['transformations']")"
python3 - "$TMP/w.plan" <<'PY' || fail "the tuned decision: $(j "$TMP/w.plan" "d['local_sizes']")"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["local_sizes"][0]["tuned"][0]
assert t["device"] and t["driver"] and t["reps"] >= 5, t
assert t["after_ns"] < t["before_ns"] * 0.97 and t["before_ns"] - t["after_ns"] > t["noise_ns"] / 2, t
assert t["local"] != [1, 1] and 256 % t["local"][0] == 0 and 256 % t["local"][1] == 0, t
PY

"$CLRR" plan show "$TMP/w.plan" | grep -q "^local     blur over 256x256, recorded 1x1; [0-9x]* on .* ms -> .* ms, [0-9]* runs" ||
    fail "plan show: $("$CLRR" plan show "$TMP/w.plan" | grep -A1 '^local')"

# replay with the plan: blur's launches with the tuned size, verified
"$CLRR" replay --json "$TMP/w.clrr" --plan "$TMP/w.plan" >"$TMP/r.json" || fail "replay --plan: $(cat "$TMP/r.json")"
[ "$(j "$TMP/r.json" "(d['ok'], d['mismatches'], d['plan']['local_size'], d['readbacks'] > 0)")" \
    = "(True, 0, {'applied': 2, 'unmeasured_device': 0, 'refused': 0}, True)" ] ||
    fail "replay --plan: $(j "$TMP/r.json" "d['plan']")"
# the application with the plan: the same output, blur retuned live
"$CLRR" run --plan "$TMP/w.plan" --report "$TMP/run.json" -- "$W" --size 256 >"$TMP/run.out" 2>"$TMP/run.err" ||
    fail "run --plan: $(cat "$TMP/run.err")"
cmp -s "$TMP/run.out" "$TMP/plain.out" || fail "output differs: $(cat "$TMP/run.out" "$TMP/plain.out")"
[ "$(j "$TMP/run.json" "(d['local_size_launches'], d['local_size_unmeasured'], d['local_size_refused'], d['fell_back'])")" \
    = "(2, 0, 0, 0)" ] || fail "run --plan report: $(cat "$TMP/run.json")"
grep -q "^clrr run: 2 launches ran with a tuned local size" "$TMP/run.err" || fail "run summary: $(cat "$TMP/run.err")"
# a longer run with other data: every launch of the shape retuned
"$CLRR" run -q --plan "$TMP/w.plan" --report "$TMP/run5.json" -- "$W" --size 256 --iters 5 >"$TMP/run5.out" 2>&1 ||
    fail "run --plan --iters 5: $(cat "$TMP/run5.out")"
grep -q "^wgtune: ok" "$TMP/run5.out" || fail "--iters 5: $(cat "$TMP/run5.out")"
[ "$(j "$TMP/run5.json" "d['local_size_launches']")" = 5 ] || fail "--iters 5: $(cat "$TMP/run5.json")"

# decisions for a device the plan did not measure: not applied, and said
sed 's/"device":"[^"]*","driver"/"device":"No Such GPU 9000","driver"/' "$TMP/w.plan" >"$TMP/other.plan"
grep -q "No Such GPU 9000" "$TMP/other.plan" || fail "editing the plan's device"
"$CLRR" replay --json "$TMP/w.clrr" --plan "$TMP/other.plan" >"$TMP/ro.json" || fail "replay other.plan"
[ "$(j "$TMP/ro.json" "(d['ok'], d['plan']['local_size'])")" = "(True, {'applied': 0, 'unmeasured_device': 2, 'refused': 0})" ] ||
    fail "replay other.plan: $(j "$TMP/ro.json" "d['plan']")"
"$CLRR" replay "$TMP/w.clrr" --plan "$TMP/other.plan" | grep -q "2 launches ran with their recorded local size: the plan did not measure this device" ||
    fail "replay other.plan: not said"
"$CLRR" run --trust-plan --plan "$TMP/other.plan" --report "$TMP/ro2.json" -- "$W" --size 256 >"$TMP/ro.out" 2>"$TMP/ro.err" ||
    fail "run other.plan: $(cat "$TMP/ro.err")"
cmp -s "$TMP/ro.out" "$TMP/plain.out" || fail "run other.plan: output differs"
grep -q "^clrr run: plan .*other.plan: nothing in it applies here (its 1 local size was measured on No Such GPU 9000 .*runs without the layer" \
    "$TMP/ro.err" || fail "run other.plan: $(cat "$TMP/ro.err")"
[ "$(j "$TMP/ro2.json" "(d['layer'], d['applied'], d['local_size_not_measured_here'])")" = "(False, 0, 1)" ] ||
    fail "run other.plan report: $(cat "$TMP/ro2.json")"
# a plan with no transformation: no layer either
"$CLRR" optimize "$TMP/w.clrr" -o "$TMP/none.plan" --passes none >/dev/null || fail "optimize --passes none"
"$CLRR" run --plan "$TMP/none.plan" -- "$W" --size 256 >"$TMP/n.out" 2>"$TMP/n.err" || fail "run none.plan"
grep -q "nothing in it applies here (it has no transformation" "$TMP/n.err" || fail "run none.plan: $(cat "$TMP/n.err")"

# corrupt local sizes: one line, exit 3 (replay), 1 (run)
one_line() {   # WANT CMD...
    want=$1; shift
    rc=0; "$CLRR" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ $rc = "$want" ] || fail "clrr $*: exit $rc, not $want: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" = 1 ] || fail "clrr $*: not one error line: $(cat "$TMP/err")"
}
python3 - "$TMP/w.plan" "$TMP" <<'PY' || fail "writing corrupt plans"
import json, sys, copy
d = json.load(open(sys.argv[1]))
def put(name, f):
    e = copy.deepcopy(d); f(e)
    json.dump(e, open(f"{sys.argv[2]}/{name}.plan", "w"))
put("zero", lambda e: e["local_sizes"][0]["tuned"][0].__setitem__("local", [0, 1]))
put("huge", lambda e: e["local_sizes"][0]["tuned"][0].__setitem__("local", [256, 256]))
put("dims", lambda e: e["local_sizes"][0]["tuned"][0].__setitem__("local", [16]))
put("past", lambda e: e["local_sizes"][0]["tuned"][0].__setitem__("local", [512, 1]))
put("noid", lambda e: [t.__setitem__("local_size", 7) for t in e["transformations"] if t["pass"] == "wgsize"])
put("noreq", lambda e: e.__setitem__("requires", [r for r in e["requires"] if r != "local_size"]))
PY
for bad in zero huge dims past noid noreq; do
    one_line 3 replay "$TMP/w.clrr" --plan "$TMP/$bad.plan"
    grep -q "$bad.plan: " "$TMP/err" || fail "$bad: the error does not name the plan: $(cat "$TMP/err")"
done
one_line 3 replay "$TMP/w.clrr" --plan "$TMP/zero.plan"
grep -q "local_sizes\[0\].tuned\[0\].local\[0\]: expected an integer from 1 to 4096" "$TMP/err" || fail "zero: $(cat "$TMP/err")"
one_line 3 replay "$TMP/w.clrr" --plan "$TMP/huge.plan"
grep -q "65536 work-items in a work-group, at most 4096" "$TMP/err" || fail "huge: $(cat "$TMP/err")"
one_line 3 replay "$TMP/w.clrr" --plan "$TMP/dims.plan"
grep -q "local: expected an array of 2 integers" "$TMP/err" || fail "dims: $(cat "$TMP/err")"
one_line 3 replay "$TMP/w.clrr" --plan "$TMP/past.plan"
grep -q "512 is larger than the global size 256" "$TMP/err" || fail "past: $(cat "$TMP/err")"
one_line 3 replay "$TMP/w.clrr" --plan "$TMP/noreq.plan"
grep -q "the plan uses 'local_size' but does not list it" "$TMP/err" || fail "noreq: $(cat "$TMP/err")"
rc=0; "$CLRR" run --plan "$TMP/zero.plan" -- "$W" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "run zero.plan: exit $rc: $(cat "$TMP/err")"
# usage errors
one_line 2 optimize "$TMP/w.clrr" -o "$TMP/x.plan" --tune=fast
one_line 2 optimize "$TMP/w.clrr" -o "$TMP/x.plan" --tune --budget 0
one_line 2 optimize "$TMP/w.clrr" -o "$TMP/x.plan" --tune --no-verify
# optimize's own process never starts an OpenCL driver (its replays run in
# processes of their own): on the H200, processes started by one that has
# made a context on NVIDIA's OpenCL found no GPU, so every tuning replay
# failed. Checked by the dynamic loader's log of each process: the
# drivers the ICD files name load in children only (each line of the log
# starts with the process's id).
icds=$(cat ${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}/*.icd 2>/dev/null | xargs -n1 basename 2>/dev/null | sed 's/\.so.*//' | sort -u)
[ -n "$icds" ] || fail "no ICD file names a driver"
LD_DEBUG=files LD_DEBUG_OUTPUT="$TMP/ld" "$CLRR" optimize "$TMP/w.clrr" -o "$TMP/ld.plan" --measure --tune=rapid --budget 10 \
    >/dev/null 2>"$TMP/ld.err" & opid=$!
wait $opid || fail "optimize under LD_DEBUG: $(cat "$TMP/ld.err")"
[ -s "$TMP/ld.$opid" ] || fail "no loader log of optimize's process ($TMP/ld.$opid)"
for d in $icds; do
    # (a forked child writes to its parent's log: each line names its process)
    ! grep -q "^ *$opid:[[:space:]]*file=[^ ]*$d" "$TMP/ld.$opid" || fail "optimize's own process loaded the driver $d"
    cat "$TMP"/ld.* | grep -q "file=[^ ]*$d" || fail "no process loaded the driver $d (the check cannot see it)"
done
rm -f "$TMP"/ld.*
echo "ok: blur retuned and verified in replay and live, ids never retuned; unmeasured devices not applied (no layer); corrupt local sizes refused"
