#!/usr/bin/env bash
# replay_limits.sh BUILD_DIR — what a replay refuses as over its memory
# limit is named by what is over it (issue 34, item 6): image_map's 3-D
# image (5x3x4, 240 bytes of host data) edited to 65535^3 pixels needs
# about 1 PB of host memory by its sizes, which the replay refuses with one
# line saying so (not "data of 240 bytes is over the memory limit"); with
# pitches whose slices overflow size_t, one line too (PoCL refuses the
# image: the replay says it differs from the recording). Traces edited
# with tests/corrupt/make.py's record editor.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$B/tests/fuzz-pack"
T=$(dirname "$0")/../../traces/image_map.h200.clrr
need "$T"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
# edit NAME SEQ ARG VALUE: BEGIN record SEQ of the trace with argument ARG
# set to VALUE (a python literal), into $TMP/NAME.clrr
edit() {
    python3 - "$(dirname "$0")/../corrupt" "$B" "$T" "$TMP" "$@" <<'PY' || fail "editing the trace"
import sys
sys.path.insert(0, sys.argv[1])
import make
build, trace, out, name, seq, arg, value = sys.argv[2:9]
S = make.Sections(build, trace=trace, out_dir=out)
def f(r):
    if isinstance(r, list) and len(r) > 5 and r[0] == 2 and r[1] == int(seq):
        r = list(r); r[5] = list(r[5]); r[5][int(arg)] = eval(value)
    return r
S.edit_records(name + ".clrr", f)
PY
}
# clCreateImage #12 (COPY_HOST_PTR, 240 bytes): image_desc 65535^3
edit big 12 3 "[4338, 65535, 65535, 65535, 0, 0, 0, 0, 0, 0]"
rc=0; timeout 60 "$CLRR" replay "$TMP/big.clrr" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 3 ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
    grep -q "the call's sizes need 1125848368021500 bytes of host memory, over the memory limit (.*; the recorded data is 240 bytes)" "$TMP/err" ||
    fail "a 65535^3 image: exit $rc: $(cat "$TMP/err")"
# the same image with a row pitch whose slice overflows size_t
edit wrap 12 3 "[4338, 5, 3, 4, 0, 2**62, 2**62, 0, 0, 0]"
rc=0; timeout 60 "$CLRR" replay "$TMP/wrap.clrr" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 3 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "pitches past size_t: exit $rc: $(cat "$TMP/err")"
grep -q "data of 240 bytes is over" "$TMP/err" && fail "pitches past size_t: the old message: $(cat "$TMP/err")"
echo "ok: a replay names what is over its memory limit: $(cat "$TMP/err")"
