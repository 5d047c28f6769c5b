#!/usr/bin/env bash
# record_nbread.sh BUILD_DIR — a non-blocking read whose completion the
# application learns from a later blocking command on the same in-order
# queue (a blocking read, a blocking map), not from clFinish or an event:
# the recorder captures its bytes when that blocking command returns, before
# the application overwrites and frees them (tests/progs/nbread.c; Parboil's
# mri-gridding crashed under clrr record on the freed memory, and recorded
# overwritten bytes before that). Recorded on PoCL 3 times a mode: the
# program's own check passes, every trace replays verified (2 of 2).
# Mode write: a blocking write from the memory the pending read fills (the
# write runs after the read, so it writes the read's bytes): the recorder
# waits for the read before capturing the write's source (rec_reads_settle;
# it recorded the bytes from before the read). Also at a size under 1 MiB
# (captured without the overlap). Mode uevent: the read waits for a user
# event set after a non-blocking write's call: no wait then (it would
# hang), one warning line. Modes write and uevent again with staged
# transfers (--stage all, and writes only): results right, no hang.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
PROG=$B/tests/progs/nbread
need "$PROG"
for m in read map write write-small; do
    for i in 1 2 3; do
        t=$TMP/$m$i.clrr
        args=$m
        [ $m = write-small ] && args="write --n 4096"
        "$CLRR" record -o "$t" -- "$PROG" $args >"$TMP/rec" 2>&1 || fail "record nbread $m ($i): $(cat "$TMP/rec")"
        grep -q "nbread ${m%-small}: .* ok" "$TMP/rec" || fail "nbread $m ($i) under clrr record: $(cat "$TMP/rec")"
        rc=0
        "$CLRR" replay --json "$t" >"$TMP/rpl.json" 2>"$TMP/rpl.err" || rc=$?
        python3 - "$TMP/rpl.json" <<'PY' || fail "replay nbread $m ($i): exit $rc: $(cat "$TMP/rpl.err") $(cat "$TMP/rpl.json")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d.get('mismatches') == 0 and d.get('readbacks') == 2 and d.get('unverified') == 0 and d.get('ok') else 1)
PY
        [ "$rc" = 0 ] || fail "replay nbread $m ($i): exit $rc"
    done
done
timeout 60 "$CLRR" record -o "$TMP/ue.clrr" -- "$PROG" uevent >"$TMP/rec" 2>&1 || fail "record nbread uevent: exit $?: $(cat "$TMP/rec")"
grep -q "nbread uevent: .* ok" "$TMP/rec" || fail "nbread uevent under clrr record: $(cat "$TMP/rec")"
grep -q "non-blocking read still fills.*user events" "$TMP/rec" || fail "nbread uevent: no warning: $(cat "$TMP/rec")"

# the same, its writes and reads staged (`--stage all`: how a discrete GPU
# records; CLRR_STAGE_READS=0: writes only): the program's results stay
# right and nothing hangs. A write staged from the memory the pending read
# fills would copy it before the read's bytes are in (uevent, writes only:
# the program saw stale bytes), and the layer, not told of the user event,
# made the read waiting for it blocking (uevent: the recording hung)
for m in write uevent; do
    for reads in 1 0; do
        rc=0
        CLRR_STAGE_READS=$reads timeout 60 "$CLRR" record --force --stage all -o "$TMP/st$m$reads.clrr" -- "$PROG" $m \
            >"$TMP/rec" 2>&1 || rc=$?
        [ $rc = 0 ] && grep -q "nbread $m: .* ok" "$TMP/rec" ||
            fail "nbread $m staged (reads $reads) under clrr record: exit $rc: $(cat "$TMP/rec")"
    done
done
echo "record_nbread: ok"
