#!/usr/bin/env bash
# replay_pitch.sh BUILD_DIR — image maps replayed where image rows have
# other pitches: image_map (a write map of a box, a read map of the whole
# 2-D and 3-D image) recorded on PoCL (tight rows) replays verified on the
# stub driver with rows padded by 12 bytes (as GPUs align them): the host's
# writes go into the padded rows and the read maps are compared in the
# recorded layout. Without the repacking, the read maps differ.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
PROG=$B/tests/progs/image_map
STUBV=$B/stub-vendors
need "$PROG"; need "$STUBV/clrrstub.icd"
PY=/usr/bin/python3

"$CLRR" record -o "$TMP/im.clrr" -- "$PROG" --quiet >"$TMP/rec.out" 2>&1 || fail "clrr record -- image_map: $(cat "$TMP/rec.out")"
# the program itself is right on the padded stub
CLRR_STUB_IMAGE_ROW_PAD=12 OCL_ICD_VENDORS=$(realpath "$STUBV") "$PROG" --quiet || fail "image_map on the padded stub"
for pad in 0 12 100; do
    rc=0
    CLRR_STUB_IMAGE_ROW_PAD=$pad OCL_ICD_VENDORS=$(realpath "$STUBV") "$CLRR" replay --json "$TMP/im.clrr" \
        >"$TMP/r$pad.json" 2>"$TMP/r$pad.err" || rc=$?
    [ $rc -eq 0 ] || fail "replay on the stub with rows padded by $pad: exit $rc: $(cat "$TMP/r$pad.err") $(cat "$TMP/r$pad.json")"
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["readbacks"] == 2 and d["mismatches"] == 0, d' \
        "$TMP/r$pad.json" || fail "rows padded by $pad: $(cat "$TMP/r$pad.json")"
done
# and back on PoCL
"$CLRR" replay --json "$TMP/im.clrr" >"$TMP/pocl.json" 2>"$TMP/pocl.err" || fail "replay on PoCL: $(cat "$TMP/pocl.err")"
echo "ok: image maps replay verified with row pitches of +0, +12 and +100 bytes"
