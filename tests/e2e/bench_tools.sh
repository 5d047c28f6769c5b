#!/usr/bin/env bash
# bench_tools.sh BUILD_DIR — the measuring programs the benchmark tables
# come from, on PoCL's CPU device:
#  - `micro calls N ab`: blocks through the loader alternate with blocks
#    through the driver's entry points; prints ab_ns, a finite number, plain
#    and under `clrr record` (where the trace holds only the loader's
#    blocks: half the launches);
#  - `micro calls N`: enq_ns, the time inside the enqueue calls, is
#    positive and below the loop's wall time, and enq_calls is 2N;
#  - `CLRR_APP_DEVICE=gpu micro` without a GPU: one line, exit 2;
#  - `waves SOURCE N FROM TO STEP`: one line per work-group count, in order,
#    with positive times; bad arguments: one line, exit 2.
. "$(dirname "$0")/lib.sh"
M=$B/bench/micro W=$B/bench/waves
need "$CLRR"; need "$M"; need "$W"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS CLRR_APP_DEVICE POCL_DEVICES
SRC=$(dirname "$0")/../apps/nbody.cl

ab() {   # the ab_ns figure of a micro line, or empty
    sed -n 's/.* ab_ns=\(-\{0,1\}[0-9][0-9.]*\)$/\1/p' "$1"
}
"$M" calls 2048 ab >"$TMP/ab.out" 2>&1 || fail "micro calls 2048 ab: $(cat "$TMP/ab.out")"
grep -q "^mode=calls-ab iters=2048 calls=4104 " "$TMP/ab.out" || fail "micro ab: $(cat "$TMP/ab.out")"
[ -n "$(ab "$TMP/ab.out")" ] || fail "micro ab prints no ab_ns: $(cat "$TMP/ab.out")"
"$CLRR" record --quiet -o "$TMP/ab.clrr" -- "$M" calls 2048 ab >"$TMP/abr.out" 2>&1 ||
    fail "micro ab recorded: $(cat "$TMP/abr.out")"
[ -n "$(ab "$TMP/abr.out")" ] || fail "recorded micro ab prints no ab_ns: $(cat "$TMP/abr.out")"
# 8 blocks of 256: the four through the loader were recorded, with a
# clFinish each, the four through the driver's entry points were not
n=$("$CLRR" dump --json "$TMP/ab.clrr" | python3 -c '
import json, sys
calls = [json.loads(l) for l in sys.stdin]
print(sum(1 for c in calls if c.get("type") == "call" and c.get("fn") == "clEnqueueNDRangeKernel"))')
[ "$n" = 1024 ] || fail "the recorded ab run holds $n launches, want 1024 (the loader's blocks only)"

# the enqueue calls' own time: part of the loop's, both positive
"$M" calls 1000 >"$TMP/c.out" 2>&1 || fail "micro calls 1000: $(cat "$TMP/c.out")"
python3 - "$TMP/c.out" <<'PY' || fail "micro calls: $(cat "$TMP/c.out")"
import re, sys
kv = dict(re.findall(r'(\w+)=(\S+)', open(sys.argv[1]).read()))
assert kv["enq_calls"] == "2000", kv
assert 0 < float(kv["enq_ns"]) < float(kv["ns"]), kv
PY

# CLRR_APP_DEVICE=gpu where no platform has a GPU (PoCL's CPU here): one
# line, exit 2, never a silent run on another device (on the H200
# machine micro used to take PoCL's CPU, its loader's first platform)
if ! clinfo -l 2>/dev/null | grep -qi "gpu"; then
    rc=0; CLRR_APP_DEVICE=gpu "$M" calls 10 >"$TMP/g.out" 2>&1 || rc=$?
    [ $rc = 2 ] && [ "$(cat "$TMP/g.out")" = "micro: no GPU device" ] ||
        fail "micro with CLRR_APP_DEVICE=gpu and no GPU: exit $rc: $(cat "$TMP/g.out")"
fi

"$W" "$SRC" 256 2 8 3 >"$TMP/w.out" 2>&1 || fail "waves: $(cat "$TMP/w.out")"
python3 - "$TMP/w.out" <<'PY' || fail "waves output: $(cat "$TMP/w.out")"
import sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].startswith("# ") and lines[1] == "groups\tms\tus_per_group", lines[:2]
rows = [l.split("\t") for l in lines[2:]]
assert [int(r[0]) for r in rows] == [2, 5, 8], rows
assert all(float(r[1]) > 0 and float(r[2]) > 0 for r in rows), rows
PY
for bad in "x 1 1 1 1" "$SRC 0 1 1 1" "$SRC 64 4 2 1" "$SRC 64 1 2 1 99"; do
    "$W" $bad >"$TMP/bad.out" 2>&1 && fail "waves $bad: exit 0"
    [ "$(wc -l <"$TMP/bad.out")" = 1 ] || fail "waves $bad: $(cat "$TMP/bad.out")"
done
"$W" >/dev/null 2>&1; [ $? = 2 ] || fail "waves without arguments: not exit 2"
echo "ok: micro's interleaved mode plain and recorded, its enqueue time, waves' curve and bad arguments"
