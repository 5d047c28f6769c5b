#!/usr/bin/env bash
# opt_spec.sh BUILD_DIR — the specialize pass (issue 7): nbody's step
# kernel loops over n bodies (and over the window's bodies), both
# arguments the same in every launch of a recording; `clrr optimize` writes
# a specialized copy of the kernel (rewriter/rw.h rw_specialize) with them
# as compile-time constants, `clrr replay --plan` runs every launch as that
# copy with every read-back verified, and `clrr run --plan` does the same
# to the real application. A launch is named by its shape and must pass
# the constants: another seed and a longer run still specialize, another
# body count (other buffer sizes, another n) runs the original kernel; a
# kernel without loops (vecadd) gets nothing; broken specialization
# sections are refused with one line.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/nbody"; need "$APPS/vecadd"
[ -e "$B/lib/libclrr-rw.so" ] || skip "the rewriter (libclrr-rw.so) is not built"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE

"$CLRR" record -o "$TMP/nb.clrr" -- "$APPS/nbody" --size 1024 --iters 3 --quiet || fail "recording nbody"
"$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/nb.plan" >"$TMP/o.txt" || fail "optimize nbody: $(cat "$TMP/o.txt")"
launches=$("$CLRR" dump --json "$TMP/nb.clrr" | grep -c '"fn":"clEnqueueNDRangeKernel"')
[ "$launches" -gt 0 ] || fail "no launches recorded"
grep -q "^pass      specialize $launches launches specialized (1 specialized kernels)" "$TMP/o.txt" ||
    fail "optimize summary: $(cat "$TMP/o.txt")"
"$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/nbj.plan" --json >"$TMP/o.json" || fail "optimize --json"
[ "$(j "$TMP/o.json" "(d['specializations'], d['rewriter_note'])")" = "(1, '')" ] || fail "optimize --json: $(cat "$TMP/o.json")"
# the plan: one specialization of nbody_step, n (argument 4) = 1024 among
# its constants (little-endian bytes), every launch a `specialize`
[ "$(j "$TMP/nb.plan" "(d['version'], len(d['specializations']), d['specializations'][0]['kernel'], [4, '00040000'] in d['specializations'][0]['constants'], d['specializations'][0]['args'])")" \
    = "('1.14', 1, 'nbody_step', True, 12)" ] || fail "the plan: $(j "$TMP/nb.plan" "[(s['kernel'], s['constants']) for s in d['specializations']]")"
[ "$(j "$TMP/nb.plan" "sorted({(t['pass'], t['action'], t.get('specialization')) for t in d['transformations']})")" \
    = "[('specialize', 'specialize', 1)]" ] || fail "transformations: $(j "$TMP/nb.plan" "[(t['pass'], t['action']) for t in d['transformations']]")"
# the generated kernel: nbody_step's twelve parameters, n renamed, and n a
# local with the value, before the body as written
j "$TMP/nb.plan" "d['specializations'][0]['source']" >"$TMP/spec.cl"
python3 - "$TMP/spec.cl" <<'PY' || fail "the specialized kernel: $(tail -30 "$TMP/spec.cl")"
import re, sys
src = open(sys.argv[1]).read()
body = src[src.index("__kernel void __clrr_spec_1("):]
head = body[:body.index(")")]
assert head.count(",") == 11, head
assert not re.search(r"\bn\s*[,)]", head + ")"), "n is still a parameter"
assert re.search(r"\bn = \(uint\)\(?1024u?\)?;", body) or re.search(r"\bn = 1024u?;", body), body[:600]
assert "for (uint j = 0; j < n; ++j)" in body
PY
"$CLRR" plan show "$TMP/nb.plan" | grep -q "^specials  __clrr_spec_1: nbody_step with argument 4 = 0x400, argument 8 = 0x80 as constants, 12 parameters" ||
    fail "plan show: $("$CLRR" plan show "$TMP/nb.plan" | grep -A1 '^specials')"

# replay with the plan: every launch specialized, every read-back verified
"$CLRR" replay --json "$TMP/nb.clrr" --plan "$TMP/nb.plan" >"$TMP/r.json" || fail "replay --plan: $(cat "$TMP/r.json")"
[ "$(j "$TMP/r.json" "(d['ok'], d['mismatches'], d['plan']['specialized'], d['plan']['fell_back'] + d['plan']['unmatched'], d['readbacks'] > 0)")" \
    = "(True, 0, $launches, 0, True)" ] || fail "replay --plan: $(j "$TMP/r.json" "d['plan']")"
"$CLRR" replay "$TMP/nb.clrr" --plan "$TMP/nb.plan" | grep -q "$launches launches ran specialized" ||
    fail "replay summary: no specialized line"

# the application under the plan: the same output, every launch specialized
"$APPS/nbody" --size 1024 --iters 3 >"$TMP/plain.out" || fail "nbody"
"$CLRR" run --plan "$TMP/nb.plan" --report "$TMP/run.json" -- "$APPS/nbody" --size 1024 --iters 3 \
    >"$TMP/run.out" 2>"$TMP/run.err" || fail "nbody with the plan: $(cat "$TMP/run.err")"
grep -q "^nbody: ok" "$TMP/run.out" || fail "nbody with the plan: $(cat "$TMP/run.out")"
[ "$(sed 's/ ocl_ms=.*//' "$TMP/run.out")" = "$(sed 's/ ocl_ms=.*//' "$TMP/plain.out")" ] ||
    fail "output differs: $(cat "$TMP/run.out" "$TMP/plain.out")"
[ "$(j "$TMP/run.json" "(d['specialized_launches'], d['fell_back'], d['fused_unbuilt'])")" = "($launches, 0, 0)" ] ||
    fail "nbody with the plan: $(j "$TMP/run.json" d)"
grep -q "^clrr run: $launches launches ran specialized" "$TMP/run.err" || fail "run summary: $(cat "$TMP/run.err")"
# the launches are named by their shape (by-value arguments by size), and
# each must pass the constants: another seed (the window starts elsewhere,
# other scalars differ) and a longer run (windows the recording never saw)
# still run specialized, and right
"$CLRR" run -q --plan "$TMP/nb.plan" --report "$TMP/run2.json" -- "$APPS/nbody" --size 1024 --iters 3 --seed 5 \
    >"$TMP/run2.out" 2>&1 || fail "nbody --seed 5 with the plan: $(cat "$TMP/run2.out")"
grep -q "^nbody: ok" "$TMP/run2.out" || fail "nbody --seed 5: $(cat "$TMP/run2.out")"
[ "$(j "$TMP/run2.json" "(d['specialized_launches'], d['fell_back'])")" = "($launches, 0)" ] ||
    fail "--seed 5: $(j "$TMP/run2.json" d)"
"$CLRR" run -q --plan "$TMP/nb.plan" --report "$TMP/run4.json" -- "$APPS/nbody" --size 1024 --iters 8 \
    >"$TMP/run4.out" 2>&1 || fail "nbody --iters 8 with the plan: $(cat "$TMP/run4.out")"
grep -q "^nbody: ok" "$TMP/run4.out" || fail "nbody --iters 8: $(cat "$TMP/run4.out")"
[ "$(j "$TMP/run4.json" "d['specialized_launches']")" = "$(( launches * 8 / 3 ))" ] || fail "--iters 8: $(j "$TMP/run4.json" d)"
"$CLRR" record -o "$TMP/nb5.clrr" -- "$APPS/nbody" --size 1024 --iters 3 --seed 5 --quiet || fail "recording nbody --seed 5"
"$CLRR" replay --json "$TMP/nb5.clrr" --plan "$TMP/nb.plan" >"$TMP/r5.json" || fail "replay --seed 5 --plan"
# (one transformation per shape pattern: nbody's two buffers swap roles, two shapes)
nx=$(j "$TMP/nb.plan" "len(d['transformations'])")
[ "$nx" -ge 1 ] && [ "$nx" -lt "$launches" ] || fail "not one transformation per shape: $nx for $launches launches"
[ "$(j "$TMP/r5.json" "(d['ok'], d['mismatches'], d['plan']['specialized'], d['plan']['applied'])")" = "(True, 0, $launches, $nx)" ] ||
    fail "replay --seed 5: $(j "$TMP/r5.json" "d['plan']")"
# another body count: n differs, no pattern matches, the original kernel runs
"$CLRR" run -q --plan "$TMP/nb.plan" --report "$TMP/run3.json" -- "$APPS/nbody" --size 512 --iters 3 \
    >"$TMP/run3.out" 2>&1 || fail "nbody --size 512 with the plan: $(cat "$TMP/run3.out")"
grep -q "^nbody: ok" "$TMP/run3.out" || fail "nbody --size 512: $(cat "$TMP/run3.out")"
[ "$(j "$TMP/run3.json" "(d['specialized_launches'], d['applied'])")" = "(0, 0)" ] ||
    fail "--size 512: $(j "$TMP/run3.json" d)"
"$CLRR" record -o "$TMP/nb512.clrr" -- "$APPS/nbody" --size 512 --iters 2 --quiet || fail "recording nbody --size 512"
"$CLRR" replay --json "$TMP/nb512.clrr" --plan "$TMP/nb.plan" >"$TMP/r3.json" || fail "replay --size 512 --plan"
[ "$(j "$TMP/r3.json" "(d['ok'], d['plan']['specialized'], d['plan']['applied'])")" = "(True, 0, 0)" ] ||
    fail "other sizes: $(j "$TMP/r3.json" "d['plan']")"

# a kernel without loops: nothing to specialize; --no-specialize leaves the pass out
"$CLRR" record -o "$TMP/va.clrr" -- "$APPS/vecadd" --size 4096 --iters 2 --quiet || fail "recording vecadd"
"$CLRR" optimize "$TMP/va.clrr" -o "$TMP/va.plan" >/dev/null || fail "optimize vecadd"
[ "$(j "$TMP/va.plan" "len(d['specializations'])")" = 0 ] || fail "vecadd specialized"
"$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/ns.plan" --no-specialize >"$TMP/ns.txt" || fail "--no-specialize"
[ "$(j "$TMP/ns.plan" "(len(d['specializations']), [p['enabled'] for p in d['passes'] if p['name'] == 'specialize'])")" \
    = "(0, [False])" ] || fail "--no-specialize: $(j "$TMP/ns.plan" "d['passes']")"
grep -q "^pass      specialize off" "$TMP/ns.txt" || fail "--no-specialize summary: $(cat "$TMP/ns.txt")"

# constants that the launches do not pass (n = 1280 while they pass 1024):
# the shape matches, the constants do not, the original kernel runs
python3 - "$TMP/nb.plan" "$TMP/nbc.plan" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['specializations'][0]['constants'] = [[4, '00050000'] if c[0] == 4 else c for c in d['specializations'][0]['constants']]
json.dump(d, open(sys.argv[2], "w"))
PY
"$CLRR" replay --json "$TMP/nb.clrr" --plan "$TMP/nbc.plan" >"$TMP/nbc.json" 2>/dev/null || fail "other constants fail the replay"
[ "$(j "$TMP/nbc.json" "(d['ok'], d['plan']['specialized'], d['plan']['applied'])")" = "(True, 0, 0)" ] ||
    fail "other constants: $(j "$TMP/nbc.json" "d['plan']")"

# a specialized kernel that does not build here: its launches run as
# recorded, verified, and the summary says which and why
python3 - "$TMP/nb.plan" "$TMP/nbb.plan" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['specializations'][0]['source'] += '\nthis is not OpenCL C'
json.dump(d, open(sys.argv[2], "w"))
PY
"$CLRR" replay --json "$TMP/nb.clrr" --plan "$TMP/nbb.plan" >"$TMP/nbb.json" 2>/dev/null || fail "an unbuildable specialization fails the replay"
[ "$(j "$TMP/nbb.json" "(d['ok'], d['plan']['specialized'], d['plan']['unbuilt'].startswith('__clrr_spec_1: building it failed'))")" \
    = "(True, 0, True)" ] || fail "unbuildable specialization: $(j "$TMP/nbb.json" "d['plan']")"

# broken specialization sections: one line, exit 3
bad() { plan_refused "$TMP/nb.plan" "$TMP/nb.clrr" "$@"; }   # NAME PYTHON-EDIT-OF-d EXPECTED
bad sid "d['transformations'][0]['specialization'] = 9" "specialization: no specialization 9"
bad cidx "d['specializations'][0]['constants'][0][0] = 12" "constants\[0\]"
bad cbytes "d['specializations'][0]['constants'][0][1] = '0004'" "neither the bytes 0004 that specialization 1 makes a constant nor any 2 bytes"
bad old "d['version'] = '1.6'" "specializations: this section is reserved"
echo "ok: nbody specialized ($launches launches) and verified in replay and live; another seed and a longer run specialize, another size falls back; bad plans refused"
