#!/usr/bin/env bash
# suite_tune.sh BUILD_DIR — `clrr optimize` on third-party programs
# (bench/suites_tune.py over tests/suites/tune-ci.list: hashcat's mask
# attack, SHOC's Triad): each is recorded (its verdict under the recorder
# checked), its trace replayed verified, then optimized (`clrr optimize`
# with the passes' own rules: hashcat's plan drops dead launches of kernels
# made from binaries, issue 36 item 0) and replayed with the plan. Fails
# when a written plan does not replay verified, or when no program got a
# non-empty plan (then nothing was tested).
# What is not installed or fetched is named and skipped (77 when none is).
# The whole apps.list with timings and live runs: `make bench-suites`.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD PYOPENCL_CTX OCL_ICD_VENDORS POCL_DEVICES
S=$(cd "$(dirname "$0")/../suites" && pwd)
[ -f /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"
# SHOC's Spmv overflows a heap buffer of its own (ASan says so in a plain
# run with the runtime preloaded): not under SAN
grep -v -E "^${CLRR_SAN:-0}:" <(sed 's/^shoc-spmv$/1:&/' "$S/tune-ci.list") | sed 's/^[01]://' >"$TMP/ci.list"
rc=0
/usr/bin/python3 "$S/../../bench/suites_tune.py" --clrr "$CLRR" --subset "$TMP/ci.list" \
    --no-plain --no-measure --no-tune --reps 0 --live-reps 0 --keep --work "$TMP/w" --results "$TMP/r.jsonl" >"$TMP/out" 2>&1 || rc=$?
[ $rc = 77 ] && skip "$(grep -E '^skip' "$TMP/out")"
grep -E '^(absent|FAIL)' "$TMP/out"
[ $rc = 0 ] || fail "suites_tune.py exit $rc: $(grep -v '^|---' "$TMP/out" | tail -15)"
python3 - "$TMP/r.jsonl" <<'PY' || fail "$(grep -v '^|---' "$TMP/out" | tail -12)"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"absent"' not in l]
for r in rows:
    assert r['stage'] == 'tuned', '%s: %s' % (r['name'], r.get('reason'))
    assert isinstance(r.get('opt_log'), list), '%s: no opt_log' % r['name']   # optimize's tune:/verify: lines
assert any(r.get('verified') for r in rows), 'no program got a non-empty plan: nothing was tested'
print('suite_tune: %s' % '; '.join('%s: %s, plan verified' % (r['name'], ', '.join(
    '%s %d' % kv for kv in sorted(r['kinds'].items())) or 'empty') for r in rows))
PY
# --tune on a trace with no launch shape to tune (hashcat's kernels come
# from binaries): nothing to sort, no undefined behaviour (UBSan under SAN)
ht=$(python3 -c "import json,sys
for i,l in enumerate(l for l in open(sys.argv[1]) if '\"absent\"' not in l):
    print('$TMP/w/t%04d/trace.clrr' % i if json.loads(l)['name'] == 'hashcat-md5-mask' else '', end='')" "$TMP/r.jsonl")
if [ -n "$ht" ]; then
    "$CLRR" optimize --passes none --tune=rapid --budget 1 "$ht" -o "$TMP/h.plan" >"$TMP/h.out" 2>&1 ||
        fail "optimize --tune on hashcat's trace: $(tail -3 "$TMP/h.out")"
fi
