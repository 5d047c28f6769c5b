#!/usr/bin/env bash
# record_platforms.sh BUILD_DIR — the recorder asks a platform for its
# devices only once the application has (FORMAT.md 1.1, DEVICES records):
# asking starts the platform's driver, and a driver the application never
# started must stay unstarted (PoCL's starts LLVM, whose signal handlers
# replace the application's). Two platforms, the stub driver first and
# PoCL; tests/progs/crash uses only the first. The trace lists both
# platforms, devices only under the stub's, in a DEVICES item that comes
# before the clGetDeviceIDs call that reached them; the stub's log shows
# the one clGetDeviceIDs the recorder adds; the trace replays verified.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$B/tests/progs/crash"; need "$B/stub-vendors/clrrstub.icd"
[ -e /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"
V=$TMP/vendors; mkdir -p "$V"
cp "$B/stub-vendors/clrrstub.icd" "$V/a-stub.icd"; cp /etc/OpenCL/vendors/pocl.icd "$V/b-pocl.icd"
export OCL_ICD_VENDORS=$V
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_FILENAMES
first=$(run_foreign clinfo -l 2>/dev/null | sed -n 's/^Platform #0: //p')
[ "$first" = "clrr stub" ] || skip "the ICD loader does not list the stub first ($first)"

CLRR_STUB_LOG=$TMP/plain.log "$B/tests/progs/crash" exit >"$TMP/plain.out" 2>&1 || fail "crash exit, plain"
CLRR_STUB_LOG=$TMP/rec.log "$CLRR" record -o "$TMP/t.clrr" -- "$B/tests/progs/crash" exit >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- crash exit: $(tail -2 "$TMP/rec.out")"
cmp -s "$TMP/plain.out" "$TMP/rec.out" || fail "the output differs under the recorder"
n_plain=$(tr ' ' '\n' <"$TMP/plain.log" | grep -c '^clGetDeviceIDs$')
n_rec=$(tr ' ' '\n' <"$TMP/rec.log" | grep -c '^clGetDeviceIDs$')
[ "$n_rec" = $((n_plain + 1)) ] || fail "the stub got $n_rec clGetDeviceIDs under the recorder, $n_plain without"

"$CLRR" info --json "$TMP/t.clrr" >"$TMP/info.json" || fail "clrr info"
"$CLRR" dump --json "$TMP/t.clrr" >"$TMP/dump.json" || fail "clrr dump"
python3 - "$TMP/info.json" "$TMP/dump.json" <<'PY' || fail "the trace's platforms and devices"
import json, sys
info = json.load(open(sys.argv[1]))
plats = {p["name"]: p for p in info["platforms"]}
assert set(plats) == {"clrr stub", "Portable Computing Language"}, plats.keys()
assert [d["name"] for d in plats["clrr stub"].get("devices", [])] == ["clrr stub device"], plats["clrr stub"]
assert not plats["Portable Computing Language"].get("devices"), "PoCL's devices were asked for"
items = [json.loads(l) for l in open(sys.argv[2])]
kinds = [(i["type"], i.get("fn")) for i in items]
dev = kinds.index(("devices", None))
first = kinds.index(("call", "clGetDeviceIDs"))
assert dev < first, "the DEVICES item comes after the call that reached the devices"
assert items[dev]["platform"] == plats["clrr stub"]["id"]
PY
"$CLRR" replay -q "$TMP/t.clrr" || fail "the trace does not replay verified"
echo "ok: devices of the platform the application used only; the other platform's driver was never asked"
