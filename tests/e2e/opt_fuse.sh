#!/usr/bin/env bash
# opt_fuse.sh BUILD_DIR — the fuse pass (issue 7): on the workloads where
# Helium fused kernels (sobel, geomatrix, exposure), `clrr optimize` finds
# producer -> consumer launch pairs, the rewriter makes one kernel of each
# kind (OpenCL C generated with libclang), and `clrr replay --plan` runs
# every pair as that kernel with every read-back verified against the
# unoptimized recording. The same plan on a run with other data (same
# shapes) still fuses and verifies; on a run with other shapes it matches
# nothing and verifies; --loop repeats fused launches; broken fusion
# sections of a plan are refused with one line.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/sobel"; need "$APPS/geomatrix"; need "$APPS/exposure"
[ -e "$B/lib/libclrr-rw.so" ] || skip "the rewriter (libclrr-rw.so) is not built"

# app  args  expected fused kernels (first>last launch's kernel)  fused
# launches per run  launches each fused kernel does
while read -r app args kinds pairs chain; do
    "$CLRR" record -o "$TMP/$app.clrr" -- "$APPS/$app" ${args//_/ } --quiet || fail "recording $app"
    "$CLRR" optimize "$TMP/$app.clrr" -o "$TMP/$app.plan" --json >"$TMP/$app.o.json" || fail "optimize $app"
    got=$(j "$TMP/$app.plan" "','.join(sorted({f['producer'] + '>' + f['consumer'] for f in d['fused_kernels']}))")
    [ "$got" = "$kinds" ] || fail "$app: fused kernels $got, expected $kinds"
    "$CLRR" replay --json "$TMP/$app.clrr" --plan "$TMP/$app.plan" >"$TMP/$app.r.json" ||
        fail "$app --plan does not replay verified: $(cat "$TMP/$app.r.json")"
    [ "$(j "$TMP/$app.r.json" "(d['ok'], d['mismatches'], d['plan']['fused'], d['plan']['fell_back'] + d['plan']['unmatched'])")" \
        = "(True, 0, $pairs, 0)" ] || fail "$app --plan: $(j "$TMP/$app.r.json" "d['plan']")"
    [ "$(j "$TMP/$app.r.json" "d['readbacks'] > 0")" = True ] || fail "$app: nothing verified"
    [ "$(j "$TMP/$app.plan" "','.join(map(str, sorted({f.get('launches', 2) for f in d['fused_kernels']})))")" = "$chain" ] ||
        fail "$app: launches per fused kernel $(j "$TMP/$app.plan" "[f.get('launches', 2) for f in d['fused_kernels']]")"
    # each kernel that does not store the buffer (a chain's: buffers) names
    # its storing twin (1.2)
    [ "$(j "$TMP/$app.plan" "all(not f['keep_store'] and (lambda t: t['keep_store'] and
        (t['producer'], t['consumer'], t['program'], t.get('launches', 2)) == (f['producer'], f['consumer'],
        f['program'], f.get('launches', 2)))(d['fused_kernels'][f['storing'] - 1])
        for f in d['fused_kernels'] if 'storing' in f) and any('storing' in f for f in d['fused_kernels'])")" = True ] ||
        fail "$app: storing twins: $(j "$TMP/$app.plan" "[(f['name'], f.get('storing')) for f in d['fused_kernels']]")"
done <<'EOF2'
sobel --size=256_--iters=3 sobel_gx>sobel_magnitude 3 3
geomatrix --size=128_--iters=2 mul>pow_scalar 2 8
exposure --size=128_--iters=2 well_exposed>weight 6 2
EOF2

# geomatrix's chain (t1 = m0*m1; t2 = t1*m2; ...; out = pow(t7)): one kernel
# of 8 launches; each parameter traced back to the launch it comes from
# (the inputs m0..m7 of the mul launches, the exponent and out of the last),
# every intermediate only as the fallback load of the launch that reads it
# (and its storing twin, listed first, stores t1..t7: P's parameter for each)
python3 - "$TMP/geomatrix.plan" <<'PY' || fail "geomatrix's chain: $(j "$TMP/geomatrix.plan" "d['fused_kernels'][1]['params']")"
import json, sys
t, f = json.load(open(sys.argv[1]))['fused_kernels']
p = [tuple(x) for x in f['params']]
assert f['launches'] == 8 and not f['keep_store'] and f['storing'] == 1
assert (0, 0) in p and (0, 1) in p and all((k, 1) in p for k in range(1, 7))   # the eight matrices
assert (7, 1) in p and (7, 2) in p and (0, 2) not in p                        # p, out; t1 never stored
assert all((k, 0) in p for k in range(1, 8))                                  # t1..t7, fallback loads only
assert max(k for k, _ in p) == 7 and "__clrr_fused_2_step6" in f['source']
q = [tuple(x) for x in t['params']]
assert t['launches'] == 8 and t['keep_store'] and all((k, 2) in q for k in range(0, 7))   # t1..t7 stored
PY
"$CLRR" plan show "$TMP/geomatrix.plan" | grep -q "^ *__clrr_fused_2: a chain of 8 launches, mul first, pow_scalar last, 25 parameters, no intermediate stored; a live run that needs them uses __clrr_fused_1" ||
    fail "plan show: no chain: $("$CLRR" plan show "$TMP/geomatrix.plan" | grep '^fused')"

# --horizontal: exposure divides its three weight maps by their sum, three
# launches of divide_by that read the same sum and write each its own map:
# one launch, every store kept, its parameters traced to each launch; the
# replay verifies, and so does the application run with the plan
"$CLRR" optimize "$TMP/exposure.clrr" -o "$TMP/exh.plan" --horizontal >/dev/null || fail "optimize --horizontal"
[ "$(j "$TMP/exh.plan" "[(f['launches'], f['keep_store'], 'storing' in f, sorted({p[0] for p in f['params']}), len(f['params'])) for f in d['fused_kernels'] if f.get('horizontal')]")" \
    = "[(3, True, False, [0, 1, 2], 9)]" ] || fail "exposure's horizontal group: $(j "$TMP/exh.plan" "[f.get('horizontal') for f in d['fused_kernels']]")"
"$CLRR" plan show "$TMP/exh.plan" | grep -q "^ *__clrr_fused_3: 3 launches beside each other, divide_by first, divide_by last, 9 parameters, every store kept" ||
    fail "plan show: no horizontal group: $("$CLRR" plan show "$TMP/exh.plan" | grep -A3 '^fused')"
"$CLRR" replay --json "$TMP/exposure.clrr" --plan "$TMP/exh.plan" >"$TMP/exh.json" || fail "replay --horizontal plan"
[ "$(j "$TMP/exh.json" "(d['ok'], d['mismatches'], d['plan']['fused'], d['plan']['fell_back'])")" = "(True, 0, 8, 0)" ] ||
    fail "replay --horizontal plan: $(j "$TMP/exh.json" "d['plan']")"
"$CLRR" run -q --plan "$TMP/exh.plan" -- "$APPS/exposure" --size 128 --iters 2 >"$TMP/exh.out" 2>&1 &&
    grep -q "^exposure: ok" "$TMP/exh.out" || fail "exposure with the --horizontal plan: $(cat "$TMP/exh.out")"

# sobel's gx and gy share their input and both feed the magnitude: one
# gather of 3 launches (gx -> magnitude, gy -> magnitude), and plan show
# says so
"$CLRR" plan show "$TMP/sobel.plan" | grep -q "^ *__clrr_fused_2: a gather of 3 launches (0>2 1>2), sobel_gx first, sobel_magnitude last, 11 parameters, no intermediate stored; a live run that needs them uses __clrr_fused_1" ||
    fail "plan show: no gather: $("$CLRR" plan show "$TMP/sobel.plan" | grep -A1 '^fused')"
[ "$(j "$TMP/sobel.plan" "[f.get('into') for f in d['fused_kernels']]")" = "[[2, 2], [2, 2]]" ] ||
    fail "sobel's gather: into $(j "$TMP/sobel.plan" "[f.get('into') for f in d['fused_kernels']]")"
[ "$(j "$TMP/geomatrix.plan" "[f.get('into') for f in d['fused_kernels']]")" = "[None, None]" ] ||
    fail "geomatrix's chain names into"

# the generated kernel: the producers' stores are gone; the consumer loads
# gx and gy only where their producer did not store (guards), never
# otherwise (and its storing twin, __clrr_fused_1, still stores both)
j "$TMP/sobel.plan" "[f['source'] for f in d['fused_kernels'] if not f['keep_store']][0]" >"$TMP/fused.cl"
j "$TMP/sobel.plan" "[f['source'] for f in d['fused_kernels'] if f['keep_store']][0]" >"$TMP/twin.cl"
python3 - "$TMP/twin.cl" <<'PY' || fail "sobel's storing twin: $(tail -20 "$TMP/twin.cl")"
import re, sys
src = open(sys.argv[1]).read()
body = src[src.index("__kernel void __clrr_fused_1("):]
for b in ("gx", "gy"):
    assert re.search(b + r"\[[^]]*\]\s*=[^=]", body), "the storing twin does not store " + b
PY
python3 - "$TMP/fused.cl" <<'PY' || fail "sobel's fused kernel: $(tail -20 "$TMP/fused.cl")"
import re, sys
src = open(sys.argv[1]).read()
body = src[src.index("__kernel void __clrr_fused_2("):]
for b in ("gx", "gy"):
    assert not re.search(b + r"\[[^]]*\]\s*=[^=]", body), "the fused kernel still stores " + b
    loads = [m.start() for m in re.finditer(r"\b\w*_" + b + r"\[", body)]
    assert loads and all(re.search(r"__clrr_stored\d* \? __clrr_v\d* : $", body[:i]) for i in loads), \
        b + " is loaded unguarded"
assert re.search(r"__clrr_v\d* = down - up", body) and re.search(r"__clrr_v\d* = right - left", body)
# the bodies run in command order: gx's, gy's, then the magnitude's
assert body.index("right - left") < body.index("down - up") < body.index("sqrt(")
PY

# another run of sobel, other data, same shapes: the plan applies and verifies
"$CLRR" record -o "$TMP/sobel2.clrr" -- "$APPS/sobel" --size 256 --iters 3 --seed 7 --quiet || fail "recording sobel --seed 7"
"$CLRR" replay --json "$TMP/sobel2.clrr" --plan "$TMP/sobel.plan" >"$TMP/s2.json" || fail "sobel --seed 7 with the plan"
[ "$(j "$TMP/s2.json" "(d['ok'], d['plan']['same_trace'], d['plan']['fused'])")" = "(True, True, 3)" ] ||
    fail "other data: $(j "$TMP/s2.json" "d['plan']")"
# other shapes: nothing matches, everything runs as recorded and verifies
"$CLRR" record -o "$TMP/sobel3.clrr" -- "$APPS/sobel" --size 128 --iters 2 --quiet || fail "recording sobel --size 128"
"$CLRR" replay --json "$TMP/sobel3.clrr" --plan "$TMP/sobel.plan" >"$TMP/s3.json" || fail "sobel --size 128 with the plan"
[ "$(j "$TMP/s3.json" "(d['ok'], d['plan']['fused'], d['plan']['applied'])")" = "(True, 0, 0)" ] ||
    fail "other shapes: $(j "$TMP/s3.json" "d['plan']")"
# --loop: the fused pairs run every iteration
"$CLRR" replay --json --loop 3 "$TMP/exposure.clrr" --plan "$TMP/exposure.plan" >"$TMP/l.json" ||
    fail "exposure --loop 3 --plan"
[ "$(j "$TMP/l.json" "(d['ok'], d['plan']['fused'])")" = "(True, 18)" ] || fail "--loop: $(j "$TMP/l.json" "d['plan']")"
# --timing: the fused launches are timed under the fused kernel's name
"$CLRR" replay --json --timing "$TMP/sobel.clrr" --plan "$TMP/sobel.plan" >"$TMP/t.json" || fail "sobel --timing --plan"
[ "$(j "$TMP/t.json" "[(k['name'], k['launches']) for k in d['kernels_timing'] if k['name'].startswith('__clrr')]")" \
    = "[('__clrr_fused_2', 3)]" ] || fail "--timing: $(j "$TMP/t.json" "d['kernels_timing']")"
# plan show names the twin
"$CLRR" plan show "$TMP/exposure.plan" | grep -q "__clrr_fused_2: .*no longer stored; a live run that needs it uses __clrr_fused_1" ||
    fail "plan show: no storing twin: $("$CLRR" plan show "$TMP/exposure.plan" | grep -A1 '^fused')"
# --no-fuse leaves the pass out
"$CLRR" optimize "$TMP/sobel.clrr" -o "$TMP/nf.plan" --no-fuse --json >"$TMP/nf.json" || fail "--no-fuse"
[ "$(j "$TMP/nf.plan" "len(d['fused_kernels'])")" = 0 ] || fail "--no-fuse still fused"

# broken fusion sections: one line, exit 3
bad() { plan_refused "$TMP/sobel.plan" "$TMP/sobel.clrr" "$@"; }   # NAME PYTHON-EDIT-OF-d EXPECTED
bad fid "d['transformations'][0]['fused'] = 9" "fused: no fused kernel 9"
bad param "d['fused_kernels'][0]['params'][0] = [0, 300]" "params\[0\]"
bad name "d['fused_kernels'][0]['name'] = 'a b'" "identifiers"
bad act "d['transformations'][0]['action'] = 'drop'" "'drop' is not an action of pass 'fuse'"
bad pass "d['transformations'][0]['pass'] = 'dead'; d['passes'][0]['transformations'] += 1; d['passes'][2]['transformations'] -= 1" "not an action of pass"
bad nosrc "del d['fused_kernels'][0]['source']" "source"
bad twin "d['fused_kernels'][1]['storing'] = 2" "storing: a kernel that does not store names an earlier one"
bad twin2 "d['fused_kernels'][0]['storing'] = 1" "storing"
bad chain1 "d['fused_kernels'][1]['launches'] = 1" "launches: 1, expected 2..16"
bad chain3 "d['fused_kernels'][1]['params'][0] = [3, 0]; del d['fused_kernels'][1]['storing']" "params\[0\]: expected \[FROM, INDEX\], FROM 0 (the first launch) to 2"
bad into1 "d['fused_kernels'][1]['into'] = [2, 1]" "into\[1\]: expected a later launch, 2 to 2"
bad into2 "d['fused_kernels'][1]['into'] = [2]" "into: 1 entries, expected launches - 1 = 2"
bad into3 "d['fused_kernels'][1]['into'] = [1, 2]" "storing: a kernel that does not store names an earlier one"
bad hz "d['fused_kernels'][1]['horizontal'] = True" "horizontal: true, only for a kernel that keeps every store"
# a fused kernel that does not build here: its pairs run as recorded, verified,
# and the summary says which kernel and why
python3 - "$TMP/sobel.plan" "$TMP/nb.plan" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['fused_kernels'][1]['source'] += '\nthis is not OpenCL C'
json.dump(d, open(sys.argv[2], "w"))
PY
"$CLRR" replay --json "$TMP/sobel.clrr" --plan "$TMP/nb.plan" >"$TMP/nb.json" 2>/dev/null || fail "an unbuildable fused kernel fails the replay"
[ "$(j "$TMP/nb.json" "(d['ok'], d['plan']['fused'], d['plan']['unheld'], d['plan']['unbuilt'].startswith('__clrr_fused_2: building it failed'))")" \
    = "(True, 0, 6, True)" ] || fail "unbuildable fused kernel: $(j "$TMP/nb.json" "d['plan']")"
echo "ok: sobel (one gather), geomatrix (one chain) and exposure (pairs; --horizontal: one horizontal group) fused and verified; other data fuses, other shapes fall back; bad plans refused"
