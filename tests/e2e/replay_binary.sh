#!/usr/bin/env bash
# replay_binary.sh BUILD_DIR — a program created from a device binary that
# the application fetched from a program it built from source (api_tour
# does this) is rebuilt from that source when the replay runs on another
# device: the recorder stores CL_PROGRAM_BINARIES answers as blobs, the
# replay recognizes the binary. On the stub driver (another device), the
# call log shows two clCreateProgramWithSource and no
# clCreateProgramWithBinary; on the recorded device the binary is used.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
TOUR=$B/tests/progs/api_tour
STUBV=$B/stub-vendors
need "$TOUR"; need "$STUBV/clrrstub.icd"
[ -f /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"

"$CLRR" record -o "$TMP/t.clrr" -- "$TOUR" --quiet >"$TMP/rec.out" 2>&1 || fail "clrr record -- api_tour: $(tail -3 "$TMP/rec.out")"
"$CLRR" dump "$TMP/t.clrr" >"$TMP/dump" || fail "clrr dump"
grep -q 'clGetProgramInfo(.*param_name=CL_PROGRAM_BINARIES,.* post{.*binaries=\[<[0-9]* B blob' "$TMP/dump" ||
    fail "the binaries fetched are not in the trace: $(grep CL_PROGRAM_BINARIES "$TMP/dump" | head -2)"
[ "$(grep -c '\] clCreateProgramWithBinary(' "$TMP/dump")" -eq 1 ] || fail "api_tour creates no program from a binary"
# the recorded device: verified as before
"$CLRR" replay --json "$TMP/t.clrr" >"$TMP/same.json" 2>"$TMP/same.err" || fail "replay here: $(cat "$TMP/same.err")"
# another device: the stub, beside PoCL
mkdir -p "$TMP/vend"
cp "$STUBV/clrrstub.icd" /etc/OpenCL/vendors/pocl.icd "$TMP/vend/"
rc=0
CLRR_STUB_LOG=$TMP/stub.log OCL_ICD_VENDORS=$TMP/vend "$CLRR" replay --device stub "$TMP/t.clrr" >"$TMP/stub.out" \
    2>"$TMP/stub.err" || rc=$?
[ $rc -eq 1 ] || fail "replay on the stub: exit $rc, not 1 (mismatches: it runs no kernel): $(cat "$TMP/stub.err")"
[ "$(grep -c '^clCreateProgramWithSource$' "$TMP/stub.log")" -eq 2 ] && ! grep -q '^clCreateProgramWithBinary$' "$TMP/stub.log" ||
    fail "the binary program was not rebuilt from its source: $(grep clCreateProgram "$TMP/stub.log")"
echo "ok: a fetched binary is rebuilt from its source on another device"
