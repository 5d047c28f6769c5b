#!/usr/bin/env bash
# stub_icd.sh BUILD_DIR — the stub OpenCL driver (tests/stub-icd/): ocl-icd
# loads it alone from BUILD_DIR/stub-vendors; CLRR_STUB_LOG gets one line per
# call of the application that reaches the driver and none of the loader's
# own (those only with CLRR_STUB_LOG_LOADER=1); api_tour runs on it (and
# fails its checks there: the stub runs no kernel); recording api_tour on it
# leaves the program's output unchanged, and the trace holds exactly the
# calls of the log plus those ocl-icd answers without the driver.
. "$(dirname "$0")/lib.sh"
STUB=$B/lib/libclrrstub.so
VEND=$B/stub-vendors
TOUR=$B/tests/progs/api_tour
need "$STUB"; need "$VEND/clrrstub.icd"; need "$TOUR"
grep -qx "$(realpath "$STUB")" "$VEND/clrrstub.icd" || fail "$VEND/clrrstub.icd does not name $(realpath "$STUB")"
export OCL_ICD_VENDORS; OCL_ICD_VENDORS=$(realpath "$VEND")
unset OPENCL_LAYERS LD_PRELOAD CLRR_STUB_LOG CLRR_STUB_LOG_LOADER

# --- the loader's own calls (ocl-icd 2.3 loading a vendor) are not logged
out=$(CLRR_STUB_LOG=$TMP/none.log "$TOUR" --platforms-only) || fail "api_tour --platforms-only on the stub"
[ "$out" = "api_tour: 1 platform(s)" ] || fail "the stub is not the only platform: $out"
[ ! -s "$TMP/none.log" ] || fail "calls the loader makes on its own were logged: $(head -3 "$TMP/none.log")"
CLRR_STUB_LOG=$TMP/loader.log CLRR_STUB_LOG_LOADER=1 "$TOUR" --platforms-only >/dev/null ||
    fail "api_tour --platforms-only with CLRR_STUB_LOG_LOADER=1"
cat >"$TMP/loader.want" <<'EOF'
loader clGetExtensionFunctionAddress clIcdGetPlatformIDsKHR
loader clGetExtensionFunctionAddress clGetPlatformInfo
loader clIcdGetPlatformIDsKHR
loader clIcdGetPlatformIDsKHR
loader clGetPlatformInfo 0x904
loader clGetPlatformInfo 0x904
loader clGetPlatformInfo 0x920
loader clGetPlatformInfo 0x920
EOF
diff "$TMP/loader.want" "$TMP/loader.log" >"$TMP/loader.diff" ||
    fail "the loader's calls differ from those stub_icd.c documents: $(cat "$TMP/loader.diff")"

# --- api_tour on the stub
LOG=$TMP/tour.log
CLRR_STUB_LOG=$LOG "$TOUR" --no-check >"$TMP/plain.out" 2>"$TMP/plain.err" ||
    fail "api_tour --no-check on the stub: $(tail -3 "$TMP/plain.err")"
grep -qx "api_tour: ok" "$TMP/plain.out" || fail "api_tour did not print 'api_tour: ok': $(cat "$TMP/plain.out")"
[ -s "$LOG" ] || fail "CLRR_STUB_LOG is empty"
bad=$(grep -cvx 'cl[A-Za-z0-9]*' "$LOG")
[ "$bad" -eq 0 ] || fail "$bad log lines are not a bare function name: $(grep -vx 'cl[A-Za-z0-9]*' "$LOG" | head -3)"
# ocl-icd answers clGetPlatformIDs itself: the first call that reaches the
# driver is api_tour's clGetPlatformInfo
[ "$(head -1 "$LOG")" = clGetPlatformInfo ] || fail "the log starts with $(head -1 "$LOG"), not clGetPlatformInfo"
! grep -qx clGetPlatformIDs "$LOG" || fail "clGetPlatformIDs reached the driver (ocl-icd answers it)"
for fn in clGetDeviceIDs clCreateContext clBuildProgram clEnqueueNDRangeKernel clEnqueueMapBuffer \
          clSetUserEventStatus clEnqueueBarrierWithWaitList clReleaseContext; do
    grep -qx "$fn" "$LOG" || fail "no $fn in the log"
done
# one whole line per call, appended: a second run doubles the file
n=$(wc -l <"$LOG")
CLRR_STUB_LOG=$LOG "$TOUR" --no-check --quiet || fail "second run of api_tour on the stub"
[ "$(wc -l <"$LOG")" -eq $((2 * n)) ] || fail "a second run appended $(($(wc -l <"$LOG") - n)) lines, not $n"
[ "$(head -n "$n" "$LOG")" = "$(tail -n "$n" "$LOG")" ] || fail "two runs of api_tour made different calls"
head -n "$n" "$LOG" >"$TMP/once.log"
# the stub runs no kernel: api_tour's own checks must catch that
"$TOUR" --quiet >/dev/null 2>"$TMP/check.err" && fail "api_tour's kernel checks passed on the stub"
grep -q "^api_tour: scale: element" "$TMP/check.err" || fail "api_tour on the stub failed otherwise: $(cat "$TMP/check.err")"

# --- recorded on the stub: same output, and the trace holds the log's calls
need "$CLRR"; need "$LAYER"
CLRR_STUB_LOG=$TMP/rec.log "$CLRR" record -o "$TMP/t.clrr" -- "$TOUR" --no-check >"$TMP/rec.out" 2>"$TMP/rec.err" ||
    fail "clrr record -- api_tour on the stub: $(tail -5 "$TMP/rec.err")"
diff "$TMP/plain.out" "$TMP/rec.out" || fail "recording changed api_tour's output"
"$CLRR" dump --json "$TMP/t.clrr" >"$TMP/dump.json" 2>"$TMP/err" || fail "clrr dump --json: $(cat "$TMP/err")"
/usr/bin/python3 - "$TMP/dump.json" "$TMP/once.log" <<'EOF' || fail "the trace and the stub's log disagree"
import json, sys
calls = [c for c in map(json.loads, open(sys.argv[1])) if c.get("type") == "call"]
log = open(sys.argv[2]).read().split()
incomplete = [c["seq"] for c in calls if not c.get("complete")]
assert not incomplete, "incomplete calls: %s" % incomplete[:5]
# what ocl-icd answers without the driver never reaches the log
fns = [c["fn"] for c in calls if c["fn"] not in ("clGetPlatformIDs", "clUnloadCompiler", "clGetExtensionFunctionAddress")]
if fns != log:
    i = next((i for i, (a, b) in enumerate(zip(fns, log)) if a != b), min(len(fns), len(log)))
    sys.exit("first difference at call %d of %d/%d: trace %s, log %s"
             % (i, len(fns), len(log), fns[i:i + 3], log[i:i + 3]))
EOF
echo ok
