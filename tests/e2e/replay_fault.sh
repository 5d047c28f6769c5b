#!/usr/bin/env bash
# replay_fault.sh BUILD_DIR — a trace whose kernel writes outside its
# buffer on PoCL's CPU device: tests/progs/strided.c recorded, then its
# clSetKernelArg of the stride edited from 1 to 2^40 (every store but the
# first lands terabytes away, in unmapped memory: a clean fault). Such a
# kernel runs inside the replaying process and faults there; the commands
# that replay (replay, show --at, trim) run the trace in a child process
# (tools/clrr/cli_guard.c), so clrr says so in one line, exit 3, naming
# the launch, instead of dying of SIGSEGV. Also: SIGTERM sent to clrr
# (timeout) reaches the replaying child (a kernel made to run for minutes,
# tests/corrupt/pocl-pairs-2e31.clrr): nothing is left running and the
# status is the signal's.
. "$(dirname "$0")/lib.sh"
DIR=$(cd "$(dirname "$0")/../corrupt" && pwd)
PROG=$B/tests/progs/strided
need "$CLRR"; need "$LAYER"; need "$PROG"; need "$B/tests/fuzz-pack"
unset OPENCL_LAYERS LD_PRELOAD CLRR_STUB_LOG POCL_DEVICES CLRR_DEBUG OCL_ICD_VENDORS
"$CLRR" devices 2>/dev/null | grep -qi pocl || skip "no PoCL device here"
# the fault is PoCL's (a kernel's store), not ours: ASan must not take it
export ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:$ASAN_OPTIONS

"$CLRR" record -o "$TMP/s.clrr" -- "$PROG" >"$TMP/rec" 2>&1 || fail "record strided: $(cat "$TMP/rec")"
"$CLRR" replay -q "$TMP/s.clrr" || fail "the recorded trace does not replay"
python3 - "$DIR" "$B" "$TMP" <<'PY' || fail "editing the trace"
import struct, sys
sys.path.insert(0, sys.argv[1])
import make
P = make.Sections(sys.argv[2], trace=sys.argv[3] + "/s.clrr", out_dir=sys.argv[3])
recs = P.all_records()
sigs = {r[1]: r[2] for r in recs if isinstance(r, list) and r and r[0] == 1}
setarg = next(r[1] for r in recs if isinstance(r, list) and len(r) > 5 and r[0] == 2 and
              sigs.get(r[3]) == "clSetKernelArg" and r[5][1] == 1)
def f(r):
    if isinstance(r, list) and len(r) > 5 and r[0] == 2 and r[1] == setarg:
        r = list(r)
        r[5] = list(r[5])
        r[5][3] = struct.pack("<Q", 1 << 40)
    return r
P.edit_records("oob.clrr", f)
PY
launch=$("$CLRR" dump "$TMP/oob.clrr" | sed -n 's/^#\([0-9]*\) .*clEnqueueNDRangeKernel.*/\1/p' | head -1)
buf=$("$CLRR" dump "$TMP/oob.clrr" | sed -n 's/^#[0-9]* .*clCreateBuffer(.*) = #\([0-9]*\) .*/\1/p' | head -1)
[ -n "$launch" ] && [ -n "$buf" ] || fail "no launch or buffer in the trace"
T=$TMP/oob.clrr
for cmd in "replay $T" "show $T $buf --at $launch" "trim $T --range $((launch + 1)):$((launch + 2)) -o $TMP/cut.clrr"; do
    rc=0
    timeout 120 "$CLRR" $cmd >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ $rc = 3 ] || fail "clrr $cmd: exit $rc: $(head -c 2000 "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" = 1 ] || fail "clrr $cmd: not one line: $(head -c 2000 "$TMP/err")"
    grep -Eq "^clrr ${cmd%% *}: the replay's process died of SIGSEGV \(signal 11\) during or after call #$launch clEnqueueNDRangeKernel \(kernel put\), the last launch it started: .*outside its buffers" \
        "$TMP/err" || fail "clrr $cmd: $(cat "$TMP/err")"
done
[ ! -e "$TMP/cut.clrr" ] || fail "trim wrote its output although its replay died"

# SIGTERM reaches the child: nothing left running afterwards
rc=0
timeout -s TERM 3 "$CLRR" replay -q "$DIR/pocl-pairs-2e31.clrr" >/dev/null 2>"$TMP/err" || rc=$?
[ $rc = 124 ] || fail "timeout of a replay: exit $rc: $(cat "$TMP/err")"
sleep 0.5
! pgrep -f "clrr replay -q $DIR/pocl-pairs-2e31.clrr" >/dev/null || fail "a replaying process outlived its SIGTERM"
echo "replay_fault: ok"
