#!/usr/bin/env bash
# opt_vector.sh BUILD_DIR — the vector form of coarsening (issue 36, item
# 3) on the real device: tests/progs/coarsen records axpb (y[i] = a*x[i]+b
# under `if (i >= n) return;`) and lid (refused: get_local_id). `clrr
# optimize --tune` offers the vector form beside blocked and strided; the
# decision is measured and said either way. `--tune-force=vector:4` (a
# testing aid) keeps it whatever its time: the plan's coarsened kernel has
# form "vector" and vload4/vstore4 of x and y with the guard's last-lane
# test and the scalar remainder, `clrr replay --plan` runs axpb's launches
# with it, verified, `clrr plan verify` regenerates it, `clrr run --plan`
# gives the application the same output live (the remainder at n not a
# multiple of F is tested in test_rw_vector). Corrupt
# vector entries (dimension 1, factor 16 with blocked) and bad
# --tune-force values get one line.
. "$(dirname "$0")/lib.sh"
P=$B/tests/progs/coarsen
need "$CLRR"; need "$LAYER"; need "$P"
unset OPENCL_LAYERS LD_PRELOAD CLRR_APP_DEVICE
export CLRR_COSTS=$TMP/costs CLRR_VERIFIED=$TMP/verified
printf 'clrr-costs\t1\nl\ttest\t1\t0\t0\t0\n' >"$CLRR_COSTS"   # a zero-cost layer (see opt_coarsen.sh)

"$P" --size 262144 >"$TMP/plain.out" || fail "coarsen: $(cat "$TMP/plain.out")"
"$CLRR" record -o "$TMP/c.clrr" -- "$P" --size 262144 >/dev/null || fail "recording coarsen"

# 1. measured (normal mode: vector 4, 8, 16 among the candidates): a decision either way
"$CLRR" optimize "$TMP/c.clrr" -o "$TMP/m.plan" --tune --budget 90 >"$TMP/m.txt" 2>"$TMP/m.err" ||
    fail "optimize --tune: $(cat "$TMP/m.txt" "$TMP/m.err")"
if ! grep -q "^clrr optimize: tune: axpb (launch [0-9]*, 2 launches): local size [0-9x]* instead of" "$TMP/m.err"; then
    grep -Eq "^clrr optimize: tune: axpb \(launch [0-9]+, 2 launches\): (coarsened by [0-9]+ along dimension 0 \((blocked|strided|vector)\): .*outputs identical \(9 of 9 coarsenings\)|not coarsened: .* ms as recorded; the fastest coarsening with the same outputs \((blocked|strided|vector), [0-9]+ along 0\) .* ms, not faster beyond the noise)" \
        "$TMP/m.err" || fail "no measured decision over 9 coarsenings (6 blocked/strided, 3 vector): $(cat "$TMP/m.err")"
fi

# 2. forced: the vector form by 4 kept, and said
"$CLRR" optimize "$TMP/c.clrr" -o "$TMP/f.plan" --tune=rapid --budget 90 --tune-force=vector:4 >"$TMP/f.txt" 2>"$TMP/f.err" ||
    fail "optimize --tune-force=vector:4: $(cat "$TMP/f.txt" "$TMP/f.err")"
grep -q "^clrr optimize: tune: axpb (launch [0-9]*, 2 launches): coarsened by 4 along dimension 0 (vector): .*outputs identical (1 of 1 coarsenings); forced by --tune-force" \
    "$TMP/f.err" || fail "forced: $(cat "$TMP/f.err")"
grep -q "^verified  the plan replayed here" "$TMP/f.txt" || fail "forced plan not verified: $(cat "$TMP/f.txt")"
python3 - "$TMP/f.plan" <<'PY' || fail "the vector kernel: $(j "$TMP/f.plan" "d['coarsenings']")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == "1.14", d["version"]
c, = d["coarsenings"]
assert (c["kernel"], c["dim"], c["factor"], c["form"], c["args"]) == ("axpb", 0, 4, "vector", 5), c
s = c["source"]
assert "vstore4((float4)(a * vload4(0, x + (i)) + b), 0, y + (i));" in s, s
assert "if ((i + 3) >= n) goto __clrr_co_vs;" in s, s
assert "for (uint __clrr_co_j = 0u; __clrr_co_j < 4u; __clrr_co_j++)" in s, s
PY
"$CLRR" plan show "$TMP/f.plan" | grep -q "^local     axpb over 262144, recorded NULL; coarsened by 4 along 0 (vector, __clrr_coarse_1_0)" ||
    fail "plan show: $("$CLRR" plan show "$TMP/f.plan" | grep '^local')"

# 3. replay with the plan, plan verify
"$CLRR" replay --json "$TMP/c.clrr" --plan "$TMP/f.plan" >"$TMP/r.json" || fail "replay --plan: $(cat "$TMP/r.json")"
[ "$(j "$TMP/r.json" "(d['ok'], d['mismatches'], d['plan']['coarsen'])")" = "(True, 0, {'applied': 2, 'fallback': 0})" ] ||
    fail "replay --plan: $(j "$TMP/r.json" "d['plan']")"
"$CLRR" plan verify "$TMP/f.plan" "$TMP/c.clrr" >"$TMP/v.txt" 2>&1 || fail "plan verify: $(cat "$TMP/v.txt")"
grep -q "^verified  .*: 1 generated kernels and 0 splits as the optimizer makes them" "$TMP/v.txt" || fail "plan verify: $(cat "$TMP/v.txt")"
# an edited last-lane test (the remainder skipped for lane 3) is caught
python3 - "$TMP/f.plan" "$TMP/edited.plan" <<'PY' || fail "editing the plan"
import json, sys
d = json.load(open(sys.argv[1]))
d["coarsenings"][0]["source"] = d["coarsenings"][0]["source"].replace("(i + 3)", "(i + 2)")
json.dump(d, open(sys.argv[2], "w"))
PY
rc=0; "$CLRR" plan verify "$TMP/edited.plan" "$TMP/c.clrr" >"$TMP/v2.txt" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "its source differs from the rewriter's at line" "$TMP/v2.txt" ||
    fail "an edited vector kernel verified (exit $rc): $(cat "$TMP/v2.txt")"

# 4. the application with the plan, live: the same output
"$CLRR" run --plan "$TMP/f.plan" --report "$TMP/run.json" -- "$P" --size 262144 >"$TMP/run.out" 2>"$TMP/run.err" ||
    fail "run --plan: $(cat "$TMP/run.err")"
cmp -s "$TMP/run.out" "$TMP/plain.out" || fail "output differs: $(cat "$TMP/run.out" "$TMP/plain.out")"
[ "$(j "$TMP/run.json" "(d['coarsened_launches'], d['coarsen_fallback'])")" = "(2, 0)" ] ||
    fail "run --plan report: $(cat "$TMP/run.json")"

# 5. corrupt vector entries, bad --tune-force: one line
one_line() {   # WANT CMD...
    want=$1; shift
    rc=0; "$CLRR" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ $rc = "$want" ] || fail "clrr $*: exit $rc, not $want: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" = 1 ] || fail "clrr $*: not one error line: $(cat "$TMP/err")"
}
python3 - "$TMP/f.plan" "$TMP" <<'PY' || fail "writing corrupt plans"
import json, sys, copy
d = json.load(open(sys.argv[1]))
def put(name, f):
    e = copy.deepcopy(d); f(e)
    json.dump(e, open(f"{sys.argv[2]}/{name}.plan", "w"))
put("vdim", lambda e: e["coarsenings"][0].__setitem__("dim", 1))
def f16(e):
    e["coarsenings"][0]["factor"] = 16
    e["coarsenings"][0]["form"] = "blocked"
put("bf16", f16)
put("v32", lambda e: e["coarsenings"][0].__setitem__("factor", 32))
PY
one_line 3 replay "$TMP/c.clrr" --plan "$TMP/vdim.plan"
grep -q "coarsenings\[0\].dim: 1, the vector form coarsens dimension 0" "$TMP/err" || fail "vdim: $(cat "$TMP/err")"
one_line 3 replay "$TMP/c.clrr" --plan "$TMP/bf16.plan"
grep -q "coarsenings\[0\].factor: 16, expected 2, 4 or 8$" "$TMP/err" || fail "bf16: $(cat "$TMP/err")"
one_line 3 replay "$TMP/c.clrr" --plan "$TMP/v32.plan"
grep -q "coarsenings\[0\].factor: 32, expected 2, 4 or 8 or 16" "$TMP/err" || fail "v32: $(cat "$TMP/err")"
one_line 2 optimize "$TMP/c.clrr" -o "$TMP/x.plan" --tune --tune-force=vector:3
grep -q "vector:16, not 'vector:3'" "$TMP/err" || fail "vector:3: $(cat "$TMP/err")"
echo "opt_vector: ok"
