#!/usr/bin/env bash
# opt_dead_binary.sh BUILD_DIR — regression test for the dead pass dropping
# launches of kernels without an analysis (issue 36, hashcat's mask attack:
# 11 launches whose results are read back dropped as "it writes no memory",
# and `clrr replay --plan` then mismatched). binprog, as hashcat, creates
# its program from a device binary kept in a file (no source in the trace:
# no kernel analysis) and its kernels write buffers created
# CL_MEM_READ_ONLY. Without an analysis every memory argument is read and
# written in full, whatever its flags: no launch may be dropped, and the
# plan replays verified. On PoCL.
# Also `clrr optimize`'s own verification: it replays the plan before it
# writes it (one replay when that verifies; none with --no-verify). With
# --where, binprog reads back device addresses, which no replay reproduces:
# the trace mismatches here even without a plan, so no transformation can
# be verified and the plan keeps none (--no-verify keeps the dead launch).
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
BIN=$B/tests/progs/binprog
need "$BIN"
[ -f /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"

"$BIN" --save "$TMP/k.bin" || fail "binprog --save"
"$CLRR" record -o "$TMP/t.clrr" -- "$BIN" --load "$TMP/k.bin" --iters 3 --quiet >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- binprog: $(tail -3 "$TMP/rec.out")"
"$CLRR" dump "$TMP/t.clrr" >"$TMP/dump" || fail "clrr dump"
grep -q '\] clCreateProgramWithBinary(' "$TMP/dump" && ! grep -q '\] clCreateProgramWithSource(' "$TMP/dump" ||
    fail "the trace's program is not made from a binary alone"
[ "$(grep -c '\] clEnqueueNDRangeKernel(' "$TMP/dump")" -eq 9 ] || fail "binprog did not launch 9 kernels"
"$CLRR" optimize "$TMP/t.clrr" -o "$TMP/t.plan" --json >"$TMP/opt.json" 2>"$TMP/opt.err" ||
    fail "clrr optimize: $(cat "$TMP/opt.err")"
python3 - "$TMP/opt.json" "$TMP/t.plan" <<'PY' || fail "the plan drops launches whose results are read back"
import json, sys
o = json.load(open(sys.argv[1]))
dead = [p for p in o["passes"] if p["name"] == "dead"][0]
assert dead["enabled"], dead
assert dead["kernels"] == 0 and dead["commands"] == 0, dead
p = json.load(open(sys.argv[2]))
drops = [x for x in p.get("transformations", []) if x.get("action") == "drop" and "Kernel" in x.get("function", "")]
assert not drops, drops
PY
"$CLRR" replay "$TMP/t.clrr" --plan "$TMP/t.plan" >"$TMP/rp.out" 2>"$TMP/rp.err" ||
    fail "replay --plan: $(cat "$TMP/rp.err") $(tail -3 "$TMP/rp.out")"
grep -q '^result    ok' "$TMP/rp.out" || fail "replay --plan did not verify: $(tail -3 "$TMP/rp.out")"
# the verification, as a user sees it
"$CLRR" optimize "$TMP/t.clrr" -o "$TMP/t2.plan" >"$TMP/opt.out" 2>"$TMP/opt.err" || fail "optimize: $(cat "$TMP/opt.err")"
# (a schedule, when the recorded device times predict one, is replayed once)
grep -Eq '^verified  the plan (changes nothing|replayed here: 3 read-backs match the recording \(1 replay, 0 removed\))$' \
    "$TMP/opt.out" || fail "no verification line: $(cat "$TMP/opt.out")"
"$CLRR" optimize "$TMP/t.clrr" -o "$TMP/t3.plan" --no-verify >"$TMP/opt.out" 2>&1 || fail "optimize --no-verify"
! grep -q '^verified' "$TMP/opt.out" || fail "--no-verify verified: $(cat "$TMP/opt.out")"
"$CLRR" record -o "$TMP/w.clrr" -- "$BIN" --load "$TMP/k.bin" --where --quiet >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- binprog --where: $(tail -3 "$TMP/rec.out")"
"$CLRR" optimize "$TMP/w.clrr" -o "$TMP/w0.plan" --no-verify --json >"$TMP/w0.json" 2>"$TMP/opt.err" ||
    fail "optimize --no-verify: $(cat "$TMP/opt.err")"
"$CLRR" optimize "$TMP/w.clrr" -o "$TMP/w.plan" --json >"$TMP/w.json" 2>"$TMP/opt.err" ||
    fail "optimize (verified): $(cat "$TMP/opt.err")"
python3 - "$TMP/w0.json" "$TMP/w.json" <<'PY' || fail "the unverifiable plan: $(cat "$TMP/opt.err")"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["transformations"] == 1 and a["verify"]["status"] == "off", a
v = b["verify"]   # removed: the dead launch (and a schedule, when the device times predict one)
assert b["transformations"] == 0 and not b["schedule"], b
assert v["status"] == "baseline-mismatch" and v["replays"] == 2 and v["removed"] in (1, 2), v
PY
[ "$(wc -l <"$TMP/opt.err")" = 1 ] && grep -q 'verify: every transformation removed: the trace does not replay verified here even without a plan' "$TMP/opt.err" ||
    fail "not one line saying why: $(cat "$TMP/opt.err")"
echo "ok: launches of a program from a binary writing CL_MEM_READ_ONLY buffers are kept; the plan replays verified"
