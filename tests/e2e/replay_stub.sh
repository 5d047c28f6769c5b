#!/usr/bin/env bash
# replay_stub.sh BUILD_DIR — the replay oracle (docs/replay.md): on the stub
# OpenCL driver (tests/stub-icd, which logs every call it receives to
# $CLRR_STUB_LOG), `clrr replay --exact-calls` of a trace recorded on it
# makes exactly the recorded calls: the stub's log equals the trace's call
# sequence, line by line, less the calls ocl-icd answers itself
# (clGetPlatformIDs, clUnloadCompiler, clGetExtensionFunctionAddress).
# Without --exact-calls the replay may make calls of its own, and still
# verifies every read-back (the stub's results are deterministic).
. "$(dirname "$0")/lib.sh"
STUB=$B/lib/libclrrstub.so
VEND=$B/stub-vendors
TOUR=$B/tests/progs/api_tour
need "$CLRR"; need "$LAYER"; need "$STUB"; need "$VEND/clrrstub.icd"; need "$TOUR"
export OCL_ICD_VENDORS; OCL_ICD_VENDORS=$(realpath "$VEND")
unset OPENCL_LAYERS LD_PRELOAD CLRR_STUB_LOG CLRR_STUB_LOG_LOADER POCL_DEVICES

"$CLRR" record -o "$TMP/t.clrr" -- "$TOUR" --no-check --quiet >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- api_tour --no-check on the stub: $(tail -3 "$TMP/rec.out")"
"$CLRR" dump --json "$TMP/t.clrr" >"$TMP/dump.json" 2>"$TMP/err" || fail "clrr dump --json: $(cat "$TMP/err")"

# compare LOG: the calls of LOG are those of the trace, in order
compare() {
    /usr/bin/python3 - "$TMP/dump.json" "$1" <<'EOF'
import json, sys
calls = [c for c in map(json.loads, open(sys.argv[1])) if c.get("type") == "call"]
log = open(sys.argv[2]).read().split()
incomplete = [c["seq"] for c in calls if not c.get("complete")]
assert not incomplete, "incomplete calls: %s" % incomplete[:5]
# what ocl-icd answers without the driver never reaches the log
want = [(c["seq"], c["fn"]) for c in calls
        if c["fn"] not in ("clGetPlatformIDs", "clUnloadCompiler", "clGetExtensionFunctionAddress")]
fns = [f for _, f in want]
assert len(fns) > 100, "only %d calls in the trace" % len(fns)
if fns != log:
    i = next((i for i, (a, b) in enumerate(zip(fns, log)) if a != b), min(len(fns), len(log)))
    seq = want[i][0] if i < len(want) else "end"
    sys.exit("first difference at driver call %d of %d (trace %d calls, log %d): trace #%s %s, log %s"
             % (i + 1, len(fns), len(fns), len(log), seq, fns[i:i + 3], log[i:i + 3]))
EOF
}

# the recording itself: the trace holds the calls the driver got
CLRR_STUB_LOG=$TMP/app.log "$TOUR" --no-check --quiet || fail "api_tour --no-check on the stub"
compare "$TMP/app.log" || fail "the trace and the stub's log of api_tour disagree"

# --- exact-calls: the same calls, nothing more
rc=0
CLRR_STUB_LOG=$TMP/exact.log "$CLRR" replay --exact-calls --json "$TMP/t.clrr" >"$TMP/exact.json" 2>"$TMP/exact.err" || rc=$?
[ $rc -eq 0 ] || fail "clrr replay --exact-calls on the stub: exit $rc: $(head -3 "$TMP/exact.err")"
[ -s "$TMP/exact.log" ] || fail "the replay made no call that reached the stub"
compare "$TMP/exact.log" || fail "clrr replay --exact-calls made other calls than the trace holds"
cmp -s "$TMP/app.log" "$TMP/exact.log" || fail "the stub's logs of api_tour and of its exact replay differ"

# --- the default replay (own events, device discovery) still verifies everything
rc=0
CLRR_STUB_LOG=$TMP/default.log "$CLRR" replay --json "$TMP/t.clrr" >"$TMP/default.json" 2>"$TMP/default.err" || rc=$?
[ $rc -eq 0 ] || fail "clrr replay on the stub: exit $rc: $(head -3 "$TMP/default.err")"
for f in exact default; do
    /usr/bin/python3 - "$TMP/$f.json" <<'EOF' || fail "$f replay on the stub: $(cat "$TMP/$f.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True and d["readbacks"] > 0, d
assert d["mismatches"] == 0 and d["unverified"] == 0, d
assert "stub" in d["recorded_device"], d["recorded_device"]
EOF
done
grep -qx clEnqueueNDRangeKernel "$TMP/default.log" || fail "the default replay launched no kernel on the stub"
echo "ok: --exact-calls made exactly the $(wc -l <"$TMP/exact.log") recorded driver calls; the default replay verified every read-back"
