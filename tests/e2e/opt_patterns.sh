#!/usr/bin/env bash
# opt_patterns.sh BUILD_DIR — a decision that repeats is written once
# (issue 36, CLBlast's xim2col: 180,224 transformations, a 93 MB plan that
# `clrr replay --plan` refused). tests/progs/repeats does, 20,000 times, a
# dead fill and a redundant write of the same pattern: the plan has one
# transformation for each (plan 1.11 "repeat"), stays a few kilobytes,
# replays verified, and every one of the 39,999 calls is left out. On PoCL.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
BIN=$B/tests/progs/repeats
need "$BIN"
[ -f /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"

N=20000
"$CLRR" record -o "$TMP/t.clrr" -- "$BIN" --iters $N --size 256 --quiet >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- repeats: $(tail -3 "$TMP/rec.out")"
"$CLRR" optimize "$TMP/t.clrr" -o "$TMP/t.plan" --json >"$TMP/opt.json" 2>"$TMP/opt.err" ||
    fail "clrr optimize: $(cat "$TMP/opt.err")"
python3 - "$TMP/t.plan" $N <<'PY' || fail "the plan does not write the repeated decisions once"
import json, os, sys
path, n = sys.argv[1], int(sys.argv[2])
size = os.path.getsize(path)
assert size < 64 * 1024, "plan of %d bytes" % size
p = json.load(open(path))
assert p["version"] == "1.14", p["version"]
xs = p["transformations"]
assert len(xs) == 2, [(x["pass"], x["call"]) for x in xs]
dead = [x for x in xs if x["pass"] == "dead"]
red = [x for x in xs if x["pass"] == "redundant"]
assert len(dead) == 1 and dead[0]["call"]["function"] == "clEnqueueFillBuffer", dead
assert dead[0]["occurrence"] == 0 and dead[0]["repeat"] == n and dead[0]["occurrences"] == n, dead
assert dead[0]["effect"]["commands"] == n, dead
assert len(red) == 1 and red[0]["occurrence"] == 1 and red[0]["repeat"] == n - 1, red
passes = {q["name"]: q for q in p["passes"]}
assert passes["dead"]["effect"]["commands"] == n and passes["redundant"]["effect"]["commands"] == n - 1, passes
PY
"$CLRR" replay "$TMP/t.clrr" --plan "$TMP/t.plan" >"$TMP/rp.out" 2>&1 || fail "clrr replay --plan: $(tail -5 "$TMP/rp.out")"
grep -q '^result    ok' "$TMP/rp.out" || fail "replay --plan did not verify: $(tail -5 "$TMP/rp.out")"
grep -q '2 transformations, 2 applied, 0 fell back' "$TMP/rp.out" || fail "not every transformation applied: $(grep '^plan' "$TMP/rp.out")"
grep -q "$((2 * N - 1)) commands not executed" "$TMP/rp.out" ||
    fail "the repeated decisions did not leave out every call: $(grep 'not executed' "$TMP/rp.out")"
"$CLRR" plan show "$TMP/t.plan" >"$TMP/show.out" 2>&1 || fail "clrr plan show: $(head -3 "$TMP/show.out")"
grep -q "dead       drop call #[0-9]* clEnqueueFillBuffer (occurrences 0 to $((N - 1)) of its pattern)" "$TMP/show.out" ||
    fail "plan show does not say which occurrences: $(grep '^#' "$TMP/show.out")"
# a plan of an older version with repeat is refused, in one line
sed 's/"version": "1.14"/"version": "1.10"/' "$TMP/t.plan" >"$TMP/old.plan"
"$CLRR" plan show "$TMP/old.plan" >"$TMP/old.out" 2>&1 && fail "a 1.10 plan with repeat was read"
[ "$(wc -l <"$TMP/old.out")" -eq 1 ] && grep -q 'repeat' "$TMP/old.out" || fail "the refusal is not one line about repeat: $(cat "$TMP/old.out")"
echo "ok: $N repeated dead fills and redundant writes are one transformation each; the plan replays verified"
