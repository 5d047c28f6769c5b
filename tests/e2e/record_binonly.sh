#!/usr/bin/env bash
# record_binonly.sh BUILD_DIR — programs built from binaries only
# (docs/recording.md, "Programs built from binaries only"). tests/progs/binprog
# --load creates its program from a binary file, as applications with a
# binary cache do: `clrr record` says at the end, in one line, that the
# trace replays only on the device it was recorded on, and `clrr info` says
# it too (human and JSON); a run that builds from source (binprog --save),
# and api_tour, which creates a program from a binary it fetched from a
# program built from source, have none. Where the driver reports a binary
# program's source (the stub driver with CLRR_STUB_BINARY_SOURCE=1; PoCL
# does not) the recorder keeps it (post.source), the program does not
# count, and a replay on another device (PoCL) builds from it instead of
# failing on the binary.
. "$(dirname "$0")/lib.sh"
BP=$B/tests/progs/binprog
need "$CLRR"; need "$BP"; need "$B/tests/progs/api_tour"; need "$B/stub-vendors/clrrstub.icd"
[ -e /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_FILENAMES OCL_ICD_VENDORS CLRR_QUIET CLRR_STUB_BINARY_SOURCE CLRR_DEVICE
POCL=$("$CLRR" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["name"])')

# PoCL: from a binary, then from source
"$BP" --save "$TMP/bp.bin" >/dev/null || fail "binprog --save"
"$CLRR" record -o "$TMP/bin.clrr" -- "$BP" --load "$TMP/bp.bin" --iters 2 --quiet >"$TMP/out" 2>"$TMP/err" ||
    fail "clrr record -- binprog --load: $(cat "$TMP/out" "$TMP/err")"
[ "$(wc -l <"$TMP/err")" = 1 ] && grep -qx "clrr record: 1 program was built from binaries only (no source or IL recorded): the trace replays only on $POCL; record a run that builds from source to replay it elsewhere (e.g. PYOPENCL_NO_CACHE=1 for pyopencl, or clear the application's binary cache)" "$TMP/err" ||
    fail "clrr record's line: $(cat "$TMP/err")"
"$CLRR" info "$TMP/bin.clrr" | grep -q "^programs   1 program was built from binaries only (no source or IL recorded): the trace replays only on $POCL;" ||
    fail "clrr info does not say it"
"$CLRR" info --json "$TMP/bin.clrr" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["binary_only_programs"] == 1 and d["binary_only_devices"] == sys.argv[1], d' "$POCL" || fail "clrr info --json"
"$CLRR" record --quiet -o "$TMP/q.clrr" -- "$BP" --load "$TMP/bp.bin" --iters 1 --quiet >/dev/null 2>"$TMP/err" || fail "--quiet"
[ ! -s "$TMP/err" ] || fail "clrr record --quiet printed: $(cat "$TMP/err")"
for t in src:"$BP --save $TMP/bp2.bin" tour:"$B/tests/progs/api_tour --quiet"; do
    name=${t%%:*}
    "$CLRR" record -o "$TMP/$name.clrr" -- ${t#*:} >/dev/null 2>"$TMP/err" || fail "clrr record $name: $(cat "$TMP/err")"
    grep -q "binaries only" "$TMP/err" && fail "$name: $(cat "$TMP/err")"
    "$CLRR" info --json "$TMP/$name.clrr" | python3 -c '
import json, sys
assert json.load(sys.stdin)["binary_only_programs"] == 0' || fail "$name: clrr info counts binary-only programs"
done

# the source a driver reports is kept: the stub first, PoCL second
V=$TMP/vendors; mkdir -p "$V"
cp "$B/stub-vendors/clrrstub.icd" "$V/a-stub.icd"; cp /etc/OpenCL/vendors/pocl.icd "$V/b-pocl.icd"
export OCL_ICD_VENDORS=$V
"$BP" --save "$TMP/stub.bin" >/dev/null || fail "binprog --save on the stub"
# (the stub runs no kernel: binprog's check fails, exit 1, under both)
rc=0; CLRR_STUB_BINARY_SOURCE=1 "$CLRR" record -o "$TMP/kept.clrr" -- "$BP" --load "$TMP/stub.bin" --iters 1 --quiet >/dev/null 2>"$TMP/err" || rc=$?
[ $rc = 1 ] && ! grep -q "binaries only" "$TMP/err" || fail "recorded with the source reported: exit $rc: $(cat "$TMP/err")"
"$CLRR" dump --json "$TMP/kept.clrr" | python3 -c '
import json, sys
c = [json.loads(l) for l in sys.stdin]
c = [i for i in c if i.get("fn") == "clCreateProgramWithBinary"]
assert len(c) == 1 and "source" in c[0].get("post", {}), c' || fail "no post.source"
rc=0; "$CLRR" record -o "$TMP/lost.clrr" -- "$BP" --load "$TMP/stub.bin" --iters 1 --quiet >/dev/null 2>"$TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "the trace replays only on clrr stub device;" "$TMP/err" || fail "the stub, no source: $(cat "$TMP/err")"
# on PoCL the stub's "binary" loads only as the source kept: it builds and runs
# (its read-back differs from the stub's, which ran nothing: exit 1), else the
# replay stops at the binary (exit 3)
rc=0; "$CLRR" replay --device pthread "$TMP/kept.clrr" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "^verified  1 read-backs, 1 mismatches" "$TMP/out" || fail "replay of the kept source on PoCL: exit $rc: $(cat "$TMP/out" "$TMP/err")"
rc=0; "$CLRR" replay --device pthread "$TMP/lost.clrr" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 3 ] || fail "replay of the binary alone on PoCL: exit $rc: $(cat "$TMP/out" "$TMP/err")"
echo "ok: binary-only programs said by record and info; a source the driver reports is kept and replayed from"
