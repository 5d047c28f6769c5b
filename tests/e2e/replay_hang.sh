#!/usr/bin/env bash
# replay_hang.sh BUILD_DIR — a trace that ends inside a call that never
# returned (the recorded program was killed in a clFinish that waits for a
# kernel spinning on a flag nothing sets: tests/progs/hang) replays until
# the watchdog ends it, and its one line says that the call never returned
# when recorded either (docs/replay.md, "Time limits"; Chai's sc in
# tests/suites/README.md), instead of comparing with a recorded time of 0.
. "$(dirname "$0")/lib.sh"
H=$B/tests/progs/hang
need "$CLRR"; need "$LAYER"; need "$H"
[ -e /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_FILENAMES OCL_ICD_VENDORS CLRR_DEVICE
t=$TMP/hang.clrr
OPENCL_LAYERS=$LAYER CLRR_OUTPUT=$t "$H" >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 300); do grep -q launched "$TMP/out" && break; sleep 0.1; done
grep -q launched "$TMP/out" || { kill -KILL $pid; fail "hang did not launch: $(cat "$TMP/err")"; }
sleep 0.5
kill -0 $pid 2>/dev/null || fail "hang ended by itself: $(cat "$TMP/out" "$TMP/err")"
kill -TERM $pid; wait $pid 2>/dev/null
"$CLRR" dump "$t" >"$TMP/dump" 2>"$TMP/derr" || fail "clrr dump: $(cat "$TMP/derr")"
last=$(grep '^#[0-9]' "$TMP/dump" | tail -1)
case $last in *clFinish*"never returned"*) ;; *) fail "the trace does not end inside clFinish: $last" ;; esac
seq=${last%% *}; seq=${seq#\#}

rc=0; "$CLRR" replay --timeout 3 "$t" >"$TMP/rout" 2>"$TMP/rerr" || rc=$?
[ $rc = 3 ] || fail "replay --timeout 3: exit $rc, not 3: $(cat "$TMP/rout" "$TMP/rerr")"
[ "$(wc -l <"$TMP/rerr")" = 1 ] || fail "replay: not one line: $(cat "$TMP/rerr")"
grep -q "timed out (--timeout) in call #$seq clFinish after .* s of replay; it never returned when recorded either" \
    "$TMP/rerr" || fail "replay: $(cat "$TMP/rerr")"
echo "ok: $(cat "$TMP/rerr")"
