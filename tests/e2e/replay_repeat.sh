#!/usr/bin/env bash
# replay_repeat.sh BUILD_DIR — `clrr replay --repeat N` tells a program
# that is nondeterministic by itself from a replay that diverged
# (docs/replay.md, "Programs nondeterministic by themselves").
# - tests/progs/racy hands out tickets with atomic_inc over PoCL's threads:
#   its second read-back differs from run to run (checked natively first);
#   --repeat 3 names that call (the first read-back, the same every run,
#   is not), exit 4, in the summary and in --json;
# - tests/progs/firstdev is deterministic: --repeat 3 on PoCL, exit 0;
#   its trace replayed on the stub driver (which runs no kernel) twice
#   agrees with itself and not with the recording: the replay diverged,
#   exit 1;
# - bad counts and combinations: exit 2.
. "$(dirname "$0")/lib.sh"
R=$B/tests/progs/racy
F=$B/tests/progs/firstdev
need "$CLRR"; need "$R"; need "$F"; need "$B/stub-vendors/clrrstub.icd"
[ -e /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_FILENAMES OCL_ICD_VENDORS CLRR_DEVICE
# the program really varies here (several threads), else nothing to tell apart
for i in 1 2 3; do "$R" --size 65536 || fail "racy"; done >"$TMP/native"
[ "$(sort -u "$TMP/native" | wc -l)" -gt 1 ] || skip "racy gives the same tickets every run here: $(head -1 "$TMP/native")"

"$CLRR" record -o "$TMP/racy.clrr" -- "$R" --size 65536 >/dev/null || fail "clrr record -- racy"
rc=0; "$CLRR" replay --repeat 3 "$TMP/racy.clrr" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 4 ] || fail "racy --repeat 3: exit $rc, not 4: $(cat "$TMP/out" "$TMP/err")"
seq=$("$CLRR" dump --json "$TMP/racy.clrr" | python3 -c '
import json, sys
reads = [i["seq"] for i in map(json.loads, sys.stdin) if i.get("fn") == "clEnqueueReadBuffer"]
print(reads[1])')
grep -q "^repeat    the program itself gives different results at call #$seq clEnqueueReadBuffer ptr (3 replays disagree: replay [23] differs from replay 1 in [0-9]* of 262144 bytes, first at byte [0-9]*)$" "$TMP/out" ||
    fail "racy: the repeat line: $(cat "$TMP/out")"
grep -qx "result    NONDETERMINISTIC PROGRAM" "$TMP/out" || fail "racy: the result line: $(cat "$TMP/out")"
rc=0; "$CLRR" replay --json --repeat 2 "$TMP/racy.clrr" >"$TMP/j" 2>/dev/null || rc=$?
[ $rc = 4 ] || fail "racy --json --repeat 2: exit $rc"
python3 - "$TMP/j" "$seq" <<'PY' || fail "racy --json: the repeat member"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["repeat"]
assert d["ok"] is False and r["replays"] == 2 and r["agree"] is False and r["compared"] == 1, r
n = r["nondeterministic"]
assert n["seq"] == int(sys.argv[2]) and n["function"] == "clEnqueueReadBuffer" and n["replay"] == 2, n
assert n["reason"] == "different bytes" and 0 < n["differ"] <= n["elements"] == 262144, n
PY

# deterministic: agree, and match the recording
"$CLRR" record -o "$TMP/fd.clrr" -- "$F" >/dev/null || fail "clrr record -- firstdev"
"$CLRR" replay --repeat 3 "$TMP/fd.clrr" >"$TMP/out" 2>&1 || fail "firstdev --repeat 3: $(cat "$TMP/out")"
grep -qx "repeat    3 replays agree with each other and with the recording in all 1 read-backs" "$TMP/out" ||
    fail "firstdev: $(cat "$TMP/out")"
# another device that computes otherwise (the stub): the replays agree, the recording does not
V=$TMP/vendors; mkdir -p "$V"
cp "$B/stub-vendors/clrrstub.icd" "$V/a-stub.icd"; cp /etc/OpenCL/vendors/pocl.icd "$V/b-pocl.icd"
rc=0; OCL_ICD_VENDORS=$V "$CLRR" replay --device stub --repeat 2 "$TMP/fd.clrr" >"$TMP/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -qx "repeat    2 replays agree with each other in all 1 read-backs: the replay diverged from the recording (not the program's nondeterminism)" "$TMP/out" &&
    grep -qx "result    MISMATCH" "$TMP/out" || fail "firstdev on the stub: exit $rc: $(cat "$TMP/out")"

for bad in "--repeat 1" "--repeat 17" "--repeat x" "--repeat 2 --loop 2" "--repeat 2 --compare 0" "--repeat 2 --no-verify"; do
    rc=0; "$CLRR" replay $bad "$TMP/fd.clrr" >/dev/null 2>"$TMP/err" || rc=$?
    [ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "clrr replay $bad: exit $rc: $(cat "$TMP/err")"
done
echo "ok: --repeat names the call where the program itself varies (exit 4), else a divergence (exit 1)"
