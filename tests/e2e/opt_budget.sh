#!/usr/bin/env bash
# opt_budget.sh BUILD_DIR — `clrr optimize --measure` keeps nothing whose
# gain it did not measure (issue 36, "never slower"). deadwork with a costly
# dead kernel (stats, --work 400: a replay without the plan takes about half
# a second here):
# - timed replays that mismatch (CLRR_TEST_TIMED_MISMATCH=1: every timed
#   replay after the first says it mismatched, as a nondeterministic
#   trace's would; the first one only sizes the budget's unit): the dead
#   and redundant passes are removed in one line, the plan keeps no
#   transformation and replays verified;
# - --budget 1: 3 alternated pairs of replays that long plus the final
#   check's reserve do not fit: the passes are removed as "not measured
#   within --budget", no timed replay runs, and the command ends in a
#   few replays' time (asserted on the counts, not on the clock); the
#   benchmark's note for an empty plan (bench/suites_tune.py why_empty)
#   says so from these lines;
# - --budget 1 with --tune: the tuning gets what is left less the final
#   check's reserve: not run, one line says so;
# - --budget without --measure or --tune is a usage error (exit 2).
# On PoCL.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
DW=$B/tests/progs/deadwork
need "$DW"
[ -f /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"

"$CLRR" record -o "$TMP/t.clrr" -- "$DW" --size 16384 --work 400 --iters 2 --quiet >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- deadwork: $(tail -3 "$TMP/rec.out")"
# the rules alone find the dead and redundant work (what the tests below remove)
"$CLRR" optimize --json "$TMP/t.clrr" -o "$TMP/r.plan" >"$TMP/r.json" 2>"$TMP/r.err" || fail "optimize: $(cat "$TMP/r.err")"

check() {   # check JSON: the plan has no transformation, verified, N timed replays at most
    python3 - "$1" "$2" <<'PY' || fail "the plan of $1: $(cat "${1%.json}.err")"
import json, sys
o = json.load(open(sys.argv[1]))
v = o["verify"]
assert v["status"] == "verified", v
assert all(p.get("transformations", 0) == 0 for p in o["passes"]), o["passes"]
assert v["timed"] <= int(sys.argv[2]), v
assert v["unmeasured"] >= 1 or v["final"] == "emptied", v
PY
}
python3 - "$TMP/r.json" <<'PY' || fail "the rules' plan: $(cat "$TMP/r.json")"
import json, sys
o = json.load(open(sys.argv[1]))
n = {p["name"]: p.get("transformations", 0) for p in o["passes"]}
assert n["dead"] >= 4 and n["redundant"] >= 1, n
PY

# --- timed replays that mismatch: nothing unmeasured is kept
CLRR_TEST_TIMED_MISMATCH=1 "$CLRR" optimize --measure=3 --json "$TMP/t.clrr" -o "$TMP/m.plan" >"$TMP/m.json" 2>"$TMP/m.err" ||
    fail "optimize --measure (mismatching): $(cat "$TMP/m.err")"
grep -q '^clrr optimize: verify: not measured (a timed replay mismatched (CLRR_TEST_TIMED_MISMATCH)): passes dead, redundant removed, their gain is not measured$' \
    "$TMP/m.err" || fail "no line for the passes not measured: $(cat "$TMP/m.err")"
check "$TMP/m.json" 0
"$CLRR" replay "$TMP/t.clrr" --plan "$TMP/m.plan" >"$TMP/rp.out" 2>&1 || fail "replay --plan: $(tail -3 "$TMP/rp.out")"

# --- --budget 1: not measured within it
"$CLRR" optimize --measure --budget 1 --json "$TMP/t.clrr" -o "$TMP/b.plan" >"$TMP/b.json" 2>"$TMP/b.err" ||
    fail "optimize --measure --budget 1: $(cat "$TMP/b.err")"
grep -Eq '^clrr optimize: verify: not measured within --budget \(3 alternated pairs of [0-9.]+ s replays need [0-9.]+ s, [0-9.]+ s left less the final check.s [0-9.]+ s\): passes dead, redundant removed, their gain is not measured$' \
    "$TMP/b.err" || fail "no line for --budget: $(cat "$TMP/b.err")"
check "$TMP/b.json" 0
# the benchmark's note for an empty plan (bench/suites_tune.py) says why, from these lines
python3 - "$(dirname "$0")/../../bench/suites_tune.py" "$TMP/b.err" "$TMP/m.err" <<'PY' || fail "suites_tune.py's why_empty"
import importlib.util, sys
s = importlib.util.spec_from_file_location('st', sys.argv[1]); m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
b = m.why_empty(m.opt_log(open(sys.argv[2]).read()))
assert b.startswith('dead, redundant not measured within --budget'), b
w = m.why_empty(m.opt_log(open(sys.argv[3]).read()))
assert w.startswith('dead, redundant not measured (a timed replay mismatched'), w
PY

# --- the tuning gets what is left, less the final check's reserve
"$CLRR" optimize --measure --tune=rapid --budget 1 --no-costs --json "$TMP/t.clrr" -o "$TMP/u.plan" >"$TMP/u.json" 2>"$TMP/u.err" ||
    fail "optimize --measure --tune --budget 1: $(cat "$TMP/u.err")"
grep -Eq '^clrr optimize: verify: tuning not run: [0-9.]+ s left within --budget, less the final check.s [0-9.]+ s$' "$TMP/u.err" ||
    fail "no line for the tuning: $(cat "$TMP/u.err")"
check "$TMP/u.json" 0

# --- usage
rc=0; "$CLRR" optimize --budget 5 "$TMP/t.clrr" -o "$TMP/x.plan" >/dev/null 2>"$TMP/err" || rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "--budget alone: exit $rc: $(cat "$TMP/err")"
echo "ok: --measure keeps nothing unmeasured: mismatching timed replays and --budget remove what they cannot measure"
