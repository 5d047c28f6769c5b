#!/usr/bin/env bash
# replay_oclgrind.sh BUILD_DIR — Oclgrind as a replay target
# (docs/replay.md): a trace recorded on PoCL replays verified on Oclgrind's
# simulator both ways Oclgrind offers, `oclgrind clrr replay T` (its
# LD_PRELOAD: the replayer calls the preloaded API, not the ICD loader's,
# which once crashed PoCL with Oclgrind's objects) and through the ICD
# loader (OCL_ICD_VENDORS naming Oclgrind's ICD beside PoCL's, `--device
# Oclgrind`); with --check-api a kernel's argument error is reported.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/vecadd"
B=$(cd "$B" && pwd); CLRR=$B/bin/clrr; APPS=$B/apps
command -v oclgrind >/dev/null || skip "oclgrind is not installed"
ICD=$(dpkg -L oclgrind 2>/dev/null | grep 'liboclgrind-rt-icd\.so$' | head -1)
[ -n "$ICD" ] || ICD=/usr/lib/oclgrind/liboclgrind-rt-icd.so
[ -f "$ICD" ] || skip "no Oclgrind ICD library"
cd "$TMP" || exit 1
"$CLRR" record -o v.clrr -- "$APPS/vecadd" --size 2048 --iters 2 --quiet >rec.out 2>&1 || fail "record: $(tail -3 rec.out)"

# replayed  v.clrr / device Oclgrind Simulator ... / result ok
check_ok() {
    grep -q "^device *Oclgrind" "$1" || fail "$2: not replayed on Oclgrind: $(cat "$1")"
    grep -q "^verified *2 read-backs, 0 mismatches" "$1" && grep -q "^result *ok" "$1" ||
        fail "$2: not verified: $(cat "$1")"
}
rc=0; timeout 120 oclgrind "$CLRR" replay v.clrr >pre.out 2>&1 || rc=$?
[ $rc = 0 ] || fail "oclgrind clrr replay: exit $rc: $(tail -5 pre.out)"
check_ok pre.out "oclgrind clrr replay"

mkdir vendors
echo "$ICD" >vendors/oclgrind.icd
for f in /etc/OpenCL/vendors/*.icd; do [ -f "$f" ] && cp "$f" vendors/; done
OCL_ICD_VENDORS=$TMP/vendors "$CLRR" devices >dev.out 2>&1 || fail "clrr devices with Oclgrind's ICD: $(cat dev.out)"
grep -q "Oclgrind Simulator" dev.out || fail "clrr devices does not list Oclgrind: $(cat dev.out)"
rc=0; OCL_ICD_VENDORS=$TMP/vendors timeout 120 "$CLRR" replay --device Oclgrind v.clrr >icd.out 2>&1 || rc=$?
[ $rc = 0 ] || fail "replay --device Oclgrind: exit $rc: $(tail -5 icd.out)"
check_ok icd.out "OCL_ICD_VENDORS=... clrr replay --device Oclgrind"
# and the default device stays the recorded one (PoCL) when both are there
rc=0; OCL_ICD_VENDORS=$TMP/vendors "$CLRR" replay v.clrr >def.out 2>&1 || rc=$?
[ $rc = 0 ] && ! grep -q "^device *Oclgrind" def.out || fail "replay with both ICDs: exit $rc: $(cat def.out)"

# Oclgrind's own checks run under the replay too (a clean trace: no report)
rc=0; timeout 120 oclgrind --check-api "$CLRR" replay v.clrr >chk.out 2>&1 || rc=$?
[ $rc = 0 ] || fail "oclgrind --check-api clrr replay: exit $rc: $(tail -5 chk.out)"
check_ok chk.out "oclgrind --check-api clrr replay"
! grep -qi "^Oclgrind - \|error" chk.out || fail "oclgrind --check-api reports: $(head -5 chk.out)"
echo "ok: replayed verified on Oclgrind, through its LD_PRELOAD and through the ICD loader"
