#!/usr/bin/env bash
# record_nbread.sh BUILD_DIR — a non-blocking read whose completion the
# application learns from a later blocking command on the same in-order
# queue (a blocking read, a blocking map), not from clFinish or an event:
# the recorder captures its bytes when that blocking command returns, before
# the application overwrites and frees them (tests/progs/nbread.c; Parboil's
# mri-gridding crashed under clrr record on the freed memory, and recorded
# overwritten bytes before that). Recorded on PoCL 3 times a mode: the
# program's own check passes, every trace replays verified (2 of 2).
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
PROG=$B/tests/progs/nbread
need "$PROG"
for m in read map; do
    for i in 1 2 3; do
        t=$TMP/$m$i.clrr
        "$CLRR" record -o "$t" -- "$PROG" $m >"$TMP/rec" 2>&1 || fail "record nbread $m ($i): $(cat "$TMP/rec")"
        grep -q "nbread $m: .* ok" "$TMP/rec" || fail "nbread $m ($i) under clrr record: $(cat "$TMP/rec")"
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
echo "record_nbread: ok"
