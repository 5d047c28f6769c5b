#!/usr/bin/env bash
# opt_plan.sh BUILD_DIR — `clrr optimize`, `clrr plan show` and
# `clrr replay --plan` end to end. tests/progs/deadwork has, per iteration,
# three dead commands (a placeholder write, a kernel nobody reads, a kernel
# overwritten by a fill) and two redundant ones from the second iteration
# (the same coefficients written, the same bias filled): with --iters 4 the
# plan must drop exactly 12 + 6 commands, as 6 + 2 transformations (a decision
# repeated over consecutive occurrences of a pattern is one, plan 1.11
# repeat; the placeholder write alternates with the live data write of the
# same pattern), replay verified with all of
# them applied (the dead kernel's event, waited for by the read, comes from
# a marker). The plan applies to a recording with other data (--seed) too;
# on a trace of another structure only redundant transfers whose bytes are
# really there apply, and on another program nothing does, verified all the
# same. helium (tests/progs/helium.c) loses its 6 unobserved commands; the
# golden traces in traces/ give their known counts. Pass selection, corrupt
# plans (one error line, exit 3) and usage errors (2).
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"; need "$B/tests/progs/deadwork"; need "$B/tests/progs/helium"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
DW=$B/tests/progs/deadwork
# j FILE EXPR: a value from a JSON file (python expression on d)

"$CLRR" record -o "$TMP/a.clrr" -- "$DW" --size 4096 --iters 4 --work 8 >/dev/null 2>"$TMP/err" ||
    fail "recording deadwork: $(cat "$TMP/err")"

# --- optimize: exactly what the program has by construction
"$CLRR" optimize "$TMP/a.clrr" -o "$TMP/a.plan" --json >"$TMP/o.json" 2>"$TMP/err" ||
    fail "clrr optimize: $(cat "$TMP/err")"
[ ! -s "$TMP/err" ] || fail "clrr optimize wrote to stderr: $(cat "$TMP/err")"
[ "$(j "$TMP/o.json" "d['transformations']")" = 8 ] || fail "expected 8 transformations: $(cat "$TMP/o.json")"
[ "$(j "$TMP/o.json" "[p['transformations'] for p in d['passes']]")" = "[6, 2, 0, 0, 0, 0, 0]" ] ||
    fail "expected 6 dead and 2 redundant: $(cat "$TMP/o.json")"
[ "$(j "$TMP/o.json" "[p['commands'] for p in d['passes']][:2]")" = "[12, 6]" ] ||
    fail "expected 12 dead and 6 redundant commands: $(cat "$TMP/o.json")"
[ "$(j "$TMP/o.json" "d['passes'][0]['kernels']")" = 8 ] || fail "expected 8 dead kernel launches"
[ "$(j "$TMP/o.json" "d['passes'][0]['bytes']")" = $((4 * 4096 * 4)) ] || fail "the 4 placeholder writes (64 KiB) are dead"
"$CLRR" optimize "$TMP/a.clrr" -o "$TMP/h.plan" >"$TMP/o.txt" || fail "clrr optimize (human)"
grep -q "^pass      dead       12 commands (8 kernel launches)" "$TMP/o.txt" || fail "summary: $(cat "$TMP/o.txt")"
cmp -s "$TMP/a.plan" "$TMP/h.plan" || fail "two runs of optimize wrote different plans"
# the program asks the stats launch's profiling times (it measures it): kept
"$CLRR" record -o "$TMP/t.clrr" -- "$DW" --size 4096 --iters 4 --work 8 --time-stats >/dev/null 2>"$TMP/err" ||
    fail "recording deadwork --time-stats: $(cat "$TMP/err")"
"$CLRR" optimize "$TMP/t.clrr" -o "$TMP/t.plan" >"$TMP/o.txt" || fail "clrr optimize (--time-stats)"
grep -q "^pass      dead       8 commands (4 kernel launches)" "$TMP/o.txt" ||
    fail "a launch whose event's profiling times the program asks was dropped: $(cat "$TMP/o.txt")"

# --- plan show: readable, and --json reads back as the same plan
"$CLRR" plan show "$TMP/a.plan" >"$TMP/show.txt" 2>"$TMP/err" || fail "clrr plan show: $(cat "$TMP/err")"
grep -q "^plan      .*a.plan (clrr-plan 1.14" "$TMP/show.txt" || fail "plan show: no header"
grep -q "^pass      dead       6 transformations" "$TMP/show.txt" || fail "plan show: no dead pass line"
grep -q "^pass      redundant  2 transformations" "$TMP/show.txt" || fail "plan show: no redundant pass line"
grep -q "pattern  clEnqueueNDRangeKernel args(.*kernel=stats@" "$TMP/show.txt" || fail "plan show: no stats pattern"
grep -q "why      the memory already holds these bytes" "$TMP/show.txt" || fail "plan show: no redundant reason"
[ "$(grep -c '^#' "$TMP/show.txt")" = 8 ] || fail "plan show does not list 8 transformations"
"$CLRR" plan show --json "$TMP/a.plan" >"$TMP/re.plan" || fail "clrr plan show --json"
cmp -s "$TMP/a.plan" "$TMP/re.plan" || fail "plan show --json differs from the plan it read"

# --- replay with the plan: every read-back verified, every change applied
"$CLRR" replay --json "$TMP/a.clrr" >"$TMP/r0.json" || fail "plain replay"
"$CLRR" replay --json "$TMP/a.clrr" --plan "$TMP/a.plan" >"$TMP/r1.json" 2>"$TMP/err" ||
    fail "replay --plan: exit $?: $(cat "$TMP/err") $(head -c 600 "$TMP/r1.json")"
[ ! -s "$TMP/err" ] || fail "replay --plan wrote to stderr: $(cat "$TMP/err")"
[ "$(j "$TMP/r1.json" "(d['ok'], d['mismatches'], d['readbacks'])")" = "(True, 0, 4)" ] || fail "not verified"
[ "$(j "$TMP/r1.json" "(d['plan']['applied'], d['plan']['fell_back'], d['plan']['unmatched'])")" = "(8, 0, 0)" ] ||
    fail "not every transformation applied: $(j "$TMP/r1.json" "d['plan']")"
[ "$(j "$TMP/r1.json" "(d['plan']['dropped'], d['plan']['markers'], d['plan']['same_trace'])")" = "(18, 4, True)" ] ||
    fail "dropped/markers: $(j "$TMP/r1.json" "d['plan']")"
[ "$(j "$TMP/r0.json" "d['kernels']") $(j "$TMP/r1.json" "d['kernels']")" = "16 8" ] || fail "kernels run: not 16 then 8"
"$CLRR" replay "$TMP/a.clrr" --plan "$TMP/a.plan" --timing --loop 3 >"$TMP/r.txt" 2>"$TMP/err" ||
    fail "replay --plan --timing --loop 3: $(cat "$TMP/err")"
grep -q "^plan      .*: 8 transformations, 8 applied, 0 fell back" "$TMP/r.txt" || fail "summary: $(cat "$TMP/r.txt")"
grep -q "^result    ok" "$TMP/r.txt" || fail "replay --plan --loop: not ok"
! grep -q " stats " "$TMP/r.txt" || fail "--timing lists a launch of the dead kernel"

# --- the same program with other data: the plan still applies and verifies
"$CLRR" record -o "$TMP/b.clrr" -- "$DW" --size 4096 --iters 4 --work 8 --seed 7 >/dev/null 2>&1 || fail "recording --seed 7"
"$CLRR" replay --json "$TMP/b.clrr" --plan "$TMP/a.plan" >"$TMP/r2.json" 2>"$TMP/err" || fail "seed 7: $(cat "$TMP/err")"
[ "$(j "$TMP/r2.json" "(d['ok'], d['plan']['same_trace'], d['plan']['applied'])")" = "(True, True, 8)" ] ||
    fail "the plan does not apply to a run with other data: $(j "$TMP/r2.json" "d['plan']")"

# --- another structure (2 iterations): the dead ones fall back, the redundant
#     ones of the 2nd iteration are checked as they run and apply
"$CLRR" record -o "$TMP/c.clrr" -- "$DW" --size 4096 --iters 2 --work 8 >/dev/null 2>&1 || fail "recording --iters 2"
rc=0; "$CLRR" replay --json "$TMP/c.clrr" --plan "$TMP/a.plan" >"$TMP/r3.json" 2>"$TMP/err" || rc=$?
[ $rc = 0 ] || fail "another structure: exit $rc: $(cat "$TMP/err")"
grep -q "warning: .*a.plan was made for a trace of another structure" "$TMP/err" || fail "no warning: $(cat "$TMP/err")"
[ "$(j "$TMP/r3.json" "(d['ok'], d['plan']['same_trace'], d['plan']['applied'])")" = "(True, False, 2)" ] ||
    fail "another structure: $(j "$TMP/r3.json" "d['plan']")"
# another program: nothing applies, the replay is verified as without a plan
"$CLRR" record -o "$TMP/he.clrr" -- "$B/tests/progs/helium" >/dev/null 2>&1 || fail "recording helium"
"$CLRR" replay --json "$TMP/he.clrr" --plan "$TMP/a.plan" >"$TMP/r4.json" 2>"$TMP/err" || fail "helium with deadwork's plan"
[ "$(j "$TMP/r4.json" "(d['ok'], d['plan']['applied'], d['plan']['fell_back'] + d['plan']['unmatched'])")" = "(True, 0, 8)" ] ||
    fail "a plan for another program: $(j "$TMP/r4.json" "d['plan']")"

# --- helium: its unobserved kernels and writes (one with an event a marker waits for)
"$CLRR" optimize "$TMP/he.clrr" -o "$TMP/he.plan" --json >"$TMP/ho.json" || fail "optimize helium"
[ "$(j "$TMP/ho.json" "[p['transformations'] for p in d['passes']]")" = "[5, 0, 0, 0, 0, 0, 0]" ] && [ "$(j "$TMP/ho.json" "d['passes'][0]['commands']")" = 6 ] ||
    fail "helium: $(cat "$TMP/ho.json")"
"$CLRR" replay --json "$TMP/he.clrr" --plan "$TMP/he.plan" >"$TMP/r5.json" || fail "replay helium --plan"
[ "$(j "$TMP/r5.json" "(d['ok'], d['plan']['applied'], d['plan']['markers'])")" = "(True, 5, 1)" ] ||
    fail "helium --plan: $(j "$TMP/r5.json" "d['plan']")"

# --- what the optimizer finds in the golden traces (a change shows up here):
#     api_tour writes 16 KiB nobody reads; the others are tight; nbody's
#     two launches run its step kernel specialized
TR=$(dirname "$0")/../../traces
while read -r name dead red spec; do
    [ -e "$TR/$name.clrr" ] || continue
    "$CLRR" optimize "$TR/$name.clrr" -o "$TMP/g.plan" --json >"$TMP/g.json" 2>"$TMP/err" ||
        fail "optimize $name: $(cat "$TMP/err")"
    got=$(j "$TMP/g.json" "' '.join(str(p['transformations']) for p in d['passes'])")
    [ "$got" = "$dead $red 0 0 $spec 0 0" ] ||
        fail "golden trace $name: dead/redundant/fuse/split/specialize/schedule/wgsize $got, expected $dead $red 0 0 $spec 0 0"
done <<'EOF2'
api_tour-pocl 1 0 0
image_map.h200 0 0 0
jacobi.h200 0 0 0
nbody.h200 0 0 2
vecadd-early-data 0 0 0
vecadd-pocl 0 0 0
vecadd-pocl-1.1 0 0 0
EOF2
# the golden api_tour holds a PoCL binary for the CPU it was recorded on: it
# replays (with its plan) where that binary loads; a fresh recording always
"$CLRR" optimize "$TR/api_tour-pocl.clrr" -o "$TMP/g.plan" >/dev/null || fail "optimize api_tour"
if "$CLRR" replay -q "$TR/api_tour-pocl.clrr" >/dev/null 2>&1; then
    "$CLRR" replay -q "$TR/api_tour-pocl.clrr" --plan "$TMP/g.plan" || fail "api_tour with its plan does not verify"
fi
"$CLRR" record -o "$TMP/at.clrr" -- "$B/tests/progs/api_tour" >/dev/null || fail "recording api_tour"
"$CLRR" optimize "$TMP/at.clrr" -o "$TMP/at.plan" --json >"$TMP/at.json" || fail "optimize a fresh api_tour"
[ "$(j "$TMP/at.json" "d['passes'][0]['transformations']")" = 1 ] || fail "a fresh api_tour: $(cat "$TMP/at.json")"
"$CLRR" replay -q "$TMP/at.clrr" --plan "$TMP/at.plan" || fail "a fresh api_tour with its plan does not verify"

# --- pass selection
pass_counts() { "$CLRR" optimize "$TMP/a.clrr" -o "$TMP/s.plan" --json "$@" | python3 -c \
    "import json,sys; d=json.load(sys.stdin); print([p['transformations'] if p['enabled'] else None for p in d['passes']])"; }
[ "$(pass_counts --passes dead)" = "[6, None, None, None, None, None, None]" ] || fail "--passes dead"
# (without the dead pass, the dead launches of deadwork's busy kernel,
# whose loop count is the same every time, run specialized: one
# transformation for their shape)
[ "$(pass_counts --no-dead)" = "[None, 2, 0, None, 1, 0, None]" ] || fail "--no-dead"
[ "$(pass_counts --passes redundant,dead --no-redundant)" = "[6, None, None, None, None, None, None]" ] || fail "--no-redundant"
[ "$(pass_counts --no-fuse)" = "[6, 2, None, None, 0, 0, None]" ] || fail "--no-fuse"
[ "$(pass_counts --no-specialize)" = "[6, 2, 0, None, None, 0, None]" ] || fail "--no-specialize"
[ "$(pass_counts --no-schedule)" = "[6, 2, 0, None, 0, None, None]" ] || fail "--no-schedule"
[ "$(pass_counts --schedule)" = "[6, 2, 0, None, 0, 0, None]" ] || fail "--schedule"
[ "$(pass_counts --passes all)" = "[6, 2, 0, None, 0, 0, None]" ] || fail "--passes all"
[ "$(pass_counts --passes specialize)" = "[None, None, None, None, 1, None, None]" ] || fail "--passes specialize"
[ "$(pass_counts --passes none)" = "[None, None, None, None, None, None, None]" ] || fail "--passes none"
# split runs when asked for with its devices (--split), not with "all"
pc=$(pass_counts --passes none --split 0)
case "$pc" in "[None, None, None, "[1-9]*) ;; *) fail "--passes none --split 0: $pc" ;; esac
"$CLRR" optimize "$TMP/a.clrr" -o "$TMP/s.plan" --passes split 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q "needs the devices" "$TMP/err" || fail "--passes split without devices: exit $rc: $(cat "$TMP/err")"
"$CLRR" replay -q "$TMP/a.clrr" --plan "$TMP/s.plan" || fail "an empty plan does not replay"

# --- errors: one line; exit 3 for a plan or trace that cannot be used, 2 for usage
one_line() {   # WANT CMD...
    want=$1; shift
    rc=0; "$CLRR" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ $rc = "$want" ] || fail "clrr $*: exit $rc, not $want: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" = 1 ] || fail "clrr $*: not one error line: $(cat "$TMP/err")"
}
head -c 300 "$TMP/a.plan" >"$TMP/bad1.plan"
sed 's/"version": "1.14"/"version": "9.0"/' "$TMP/a.plan" >"$TMP/bad2.plan"
sed 's/"transformations":6,/"transformations":99999999999,/' "$TMP/a.plan" >"$TMP/bad3.plan"
sed 's/"occurrence":0,/"occurrence":"zero",/' "$TMP/a.plan" >"$TMP/bad4.plan"
sed 's/"calls":[0-9]*/"calls":1e999/' "$TMP/a.plan" >"$TMP/bad5.plan"
printf 'not json at all\n' >"$TMP/bad6.plan"
sed 's/"splits": \[\]/"splits": [1]/' "$TMP/a.plan" >"$TMP/bad7.plan"
grep -q '"splits": \[1\]' "$TMP/bad7.plan" || fail "the plan has no empty splits section"
# 1.3: a pattern met fewer times than the call's own occurrence
sed 's/"occurrences":[0-9]*/"occurrences":0/' "$TMP/a.plan" >"$TMP/bad8.plan"
grep -q '"occurrences":0' "$TMP/bad8.plan" || fail "the plan says no occurrences"
for bad in bad1 bad2 bad3 bad4 bad5 bad6 bad7 bad8; do
    one_line 3 replay "$TMP/a.clrr" --plan "$TMP/$bad.plan"
    grep -q "$bad.plan: " "$TMP/err" || fail "$bad: the error does not name the plan: $(cat "$TMP/err")"
    one_line 3 plan show "$TMP/$bad.plan"
done
grep -q "version 9.0" <("$CLRR" plan show "$TMP/bad2.plan" 2>&1) || fail "a wrong version is not named"
grep -q "99999999999" <("$CLRR" plan show "$TMP/bad3.plan" 2>&1) || fail "a huge count is not named"
grep -q "occurrence" <("$CLRR" plan show "$TMP/bad4.plan" 2>&1) || fail "a wrong type is not named"
grep -q "occurrences: 0, but the call is occurrence" <("$CLRR" plan show "$TMP/bad8.plan" 2>&1) ||
    fail "too few occurrences are not named: $("$CLRR" plan show "$TMP/bad8.plan" 2>&1)"
one_line 3 plan show "$TMP/nope.plan"
one_line 3 plan show "$TMP"
one_line 3 replay "$TMP/nope.clrr" --plan "$TMP/a.plan"
one_line 3 optimize "$TMP/nope.clrr" -o "$TMP/x.plan"
[ ! -e "$TMP/x.plan" ] || fail "a failed optimize left its plan behind"
one_line 2 optimize "$TMP/a.clrr"
one_line 2 optimize "$TMP/a.clrr" -o "$TMP/x.plan" --passes fusion
one_line 2 optimize "$TMP/a.clrr" -o "$TMP/a.clrr"
one_line 2 replay "$TMP/a.clrr" --plan "$TMP/a.plan" --range 1:20
one_line 2 replay "$TMP/a.clrr" --plan "$TMP/a.plan" --compare cpu
one_line 2 plan
one_line 2 plan list "$TMP/a.plan"
one_line 2 plan show
echo ok
