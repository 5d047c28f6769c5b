#!/usr/bin/env bash
# opt_measure.sh BUILD_DIR — `clrr optimize --measure`: each pass left in
# the verified plan is timed here (the plan with it and without it replayed
# alternately) and kept only where it is faster beyond the noise. deadwork
# with a costly dead kernel (stats, --work 400): the dead pass saves most of
# the replay's device time, so it is measured faster and kept, with one
# line saying what was measured; 3 reps give 6 timed replays per pass (more
# pairs, up to 15, where 3 leave it undecided); the
# final check (the whole plan against no plan) keeps it too. --budget 600:
# a loaded machine (the sanitizer flavour beside the other tests) made
# replays of 6 s, and the default budget left the redundant pass unmeasured.
# Bad values of N are usage errors (exit 2). On PoCL.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
DW=$B/tests/progs/deadwork
need "$DW"
[ -f /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"

"$CLRR" record -o "$TMP/t.clrr" -- "$DW" --size 16384 --work 400 --iters 2 --quiet >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- deadwork: $(tail -3 "$TMP/rec.out")"
"$CLRR" optimize --measure=3 --budget 600 --json "$TMP/t.clrr" -o "$TMP/t.plan" >"$TMP/opt.json" 2>"$TMP/opt.err" ||
    fail "clrr optimize --measure: $(cat "$TMP/opt.err")"
grep -Eq '^clrr optimize: verify: pass dead kept: measured [0-9.]+ ms with it, [0-9.]+ ms without \(medians of 3 alternated replays, noise [0-9.]+%; faster in [0-9]+ of 3 pairs, median ratio [0-9.]+\)$' \
    "$TMP/opt.err" || fail "the dead pass was not measured faster: $(cat "$TMP/opt.err")"
# the final check: the whole plan against no plan (dead saves most of the time)
grep -Eq '^clrr optimize: verify: final check: the whole plan \(dead(, redundant)?\) kept: measured [0-9.]+ ms with it, [0-9.]+ ms without \(medians of 3 alternated replays, noise [0-9.]+%; faster in [0-9]+ of 3 pairs, median ratio [0-9.]+\)$' \
    "$TMP/opt.err" || fail "the final check: $(cat "$TMP/opt.err")"
python3 - "$TMP/opt.json" <<'PY' || fail "the measured plan: $(cat "$TMP/opt.err")"
import json, sys
o = json.load(open(sys.argv[1]))
v = o["verify"]
dead = [p for p in o["passes"] if p["name"] == "dead"][0]
assert v["status"] == "verified" and dead["kernels"] == 4, (v, dead)
# replays are timed in alternated pairs: at least 3 pairs for dead and 3
# for the final check, more where the pairs leave a pass undecided
assert v["timed"] >= 12 and v["timed"] % 2 == 0, v
assert v["final"] == "kept" and v["unmeasured"] == 0, v
PY
"$CLRR" replay "$TMP/t.clrr" --plan "$TMP/t.plan" >"$TMP/rp.out" 2>&1 || fail "replay --plan: $(tail -3 "$TMP/rp.out")"
for bad in "--measure=2" "--measure=x" "--measure --no-verify"; do
    rc=0
    "$CLRR" optimize $bad "$TMP/t.clrr" -o "$TMP/bad.plan" >/dev/null 2>"$TMP/err" || rc=$?
    [ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "optimize $bad: exit $rc: $(cat "$TMP/err")"
done
echo "ok: --measure keeps the dead pass that measures faster, says what it measured"
