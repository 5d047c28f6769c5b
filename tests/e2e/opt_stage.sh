#!/usr/bin/env bash
# opt_stage.sh BUILD_DIR — measured staging decisions (plan 1.13, issue
# 36): `clrr optimize --measure --stage MODE` times whole replays of the
# trace with its large buffer writes and blocking reads through pinned
# memory (making the blocks and the copies counted) against replays
# without, and keeps a decision for the device only when faster. On PoCL's
# CPU device (host-unified memory) `auto` does not try it and `all` times
# it; either way the plan replays verified. A staging decision for this
# device makes `clrr replay --plan` stage the transfers (counted, verified)
# and `clrr run --plan` load the layer (which stages them with --stage
# all) with the application's output unchanged; one for another device is
# not applied (replay stages nothing, run runs without the layer). Corrupt
# staging entries are refused with one line.
. "$(dirname "$0")/lib.sh"
V=$B/apps/vecadd
need "$CLRR"; need "$LAYER"; need "$V"
unset OPENCL_LAYERS LD_PRELOAD CLRR_APP_DEVICE CLRR_STAGE CLRR_STAGE_READS
export CLRR_COSTS=$TMP/costs CLRR_VERIFIED=$TMP/verified

"$V" --size 1048576 --iters 3 >"$TMP/plain.out" || fail "vecadd: $(cat "$TMP/plain.out")"
"$CLRR" record -o "$TMP/v.clrr" -- "$V" --size 1048576 --iters 3 >/dev/null || fail "recording vecadd"

# usage errors: one line, exit 2, no plan
for a in "--measure --stage sometimes" "--stage all"; do
    rc=0; "$CLRR" optimize "$TMP/v.clrr" -o "$TMP/u.plan" $a >/dev/null 2>"$TMP/u.err" || rc=$?
    [ $rc = 2 ] && [ "$(wc -l <"$TMP/u.err")" = 1 ] && [ ! -e "$TMP/u.plan" ] || fail "optimize $a: exit $rc: $(cat "$TMP/u.err")"
done
grep -q "needs --measure" "$TMP/u.err" || fail "--stage without --measure: $(cat "$TMP/u.err")"

# the default: no staging timed; auto: not tried on a device that shares the host's memory
"$CLRR" optimize "$TMP/v.clrr" -o "$TMP/d.plan" --measure=3 --budget 30 >/dev/null 2>"$TMP/d.err" || fail "optimize: $(cat "$TMP/d.err")"
! grep -q "staging" "$TMP/d.err" || fail "staging timed by default: $(cat "$TMP/d.err")"
"$CLRR" optimize "$TMP/v.clrr" -o "$TMP/a.plan" --measure=3 --stage auto --budget 30 >/dev/null 2>"$TMP/a.err" ||
    fail "optimize --stage auto: $(cat "$TMP/a.err")"
grep -q "^clrr optimize: verify: staging not tried: .* shares the host's memory" "$TMP/a.err" || fail "--stage auto: $(cat "$TMP/a.err")"
[ "$(j "$TMP/a.plan" "(d['version'], 'staging' in d)")" = "('1.13', False)" ] || fail "--stage auto plan: $(cat "$TMP/a.plan")"

# all: timed on the CPU device; kept or not, said with what was measured, and the plan replays verified
"$CLRR" optimize "$TMP/v.clrr" -o "$TMP/s.plan" --measure=3 --stage all --budget 60 >/dev/null 2>"$TMP/s.err" ||
    fail "optimize --stage all: $(cat "$TMP/s.err")"
grep -q "^clrr optimize: verify: staging \(kept\|not kept\) on .*: 6 transfers of 512 KiB or more (24.0 MiB): measured .* ms with it, .* ms without" \
    "$TMP/s.err" || fail "--stage all: $(cat "$TMP/s.err")"
"$CLRR" replay "$TMP/v.clrr" --plan "$TMP/s.plan" >"$TMP/sr.out" 2>&1 || fail "replay --plan s.plan: $(cat "$TMP/sr.out")"
if grep -q "staging kept" "$TMP/s.err"; then
    j "$TMP/s.plan" "d['staging'][0]['min_bytes'] == 524288 and d['staging'][0]['after_ns'] < d['staging'][0]['before_ns']" |
        grep -qx True || fail "the kept decision: $(cat "$TMP/s.plan")"
fi

# a staging decision for this device (made from the measured plan's header)
dev=$("$CLRR" devices | awk 'NR == 1 { $1 = $2 = ""; sub(/^ +/, ""); print }')
drv=$("$CLRR" devices | sed -n '3s/.*, driver //p')
[ -n "$dev" ] && [ -n "$drv" ] || fail "clrr devices: $("$CLRR" devices)"
python3 - "$TMP/d.plan" "$TMP/here.plan" "$dev" "$drv" <<'PY' || fail "making here.plan"
import json, sys
d = json.load(open(sys.argv[1]))
d["staging"] = [{"device": sys.argv[3], "driver": sys.argv[4], "min_bytes": 524288, "transfers": 6,
                 "bytes": 6 << 22, "before_ns": 2000000, "after_ns": 1000000, "noise_ns": 10000, "reps": 5}]
json.dump(d, open(sys.argv[2], "w"))
d["staging"][0]["device"] = "no such device"
json.dump(d, open(sys.argv[2].replace("here", "there"), "w"))
PY
"$CLRR" plan show "$TMP/here.plan" >"$TMP/show.txt" 2>&1 || fail "plan show: $(cat "$TMP/show.txt")"
grep -q "^staging   transfers of 512 KiB or more through pinned memory on $dev (driver $drv): 2.000 ms -> 1.000 ms (whole replays, 5 pairs" \
    "$TMP/show.txt" || fail "plan show: $(cat "$TMP/show.txt")"
# replay: the writes (3 x 2 of 4 MiB) staged, verified, and the blocks the
# layer would make ahead for vecadd's 3 buffers of 4 MiB (one each and one
# more) made at their creation (vecadd reads without blocking: a
# replay stages blocking reads only; the layer makes such a read blocking and stages it)
"$CLRR" replay "$TMP/v.clrr" --plan "$TMP/here.plan" --json >"$TMP/h.json" 2>"$TMP/h.err" || fail "replay --plan here.plan: $(cat "$TMP/h.err")"
[ "$(j "$TMP/h.json" "(d['ok'], d['mismatches'], d['plan']['staged']['transfers'], d['plan']['staged']['bytes'] >> 20, d['plan']['staged']['unpinned'], d['plan']['staged']['ahead'])")" \
    = "(True, 0, 6, 24, 0, 4)" ] || fail "replay staged: $(j "$TMP/h.json" "(d['ok'], d['mismatches'], d['plan']['staged'])")"
"$CLRR" replay "$TMP/v.clrr" --plan "$TMP/here.plan" >"$TMP/h.out" 2>&1 || fail "replay --plan here.plan: $(cat "$TMP/h.out")"
grep -q "6 transfers staged through pinned memory (24.0 MiB; staging; 4 blocks made ahead at buffer creation)" "$TMP/h.out" || fail "replay summary: $(cat "$TMP/h.out")"
"$CLRR" replay "$TMP/v.clrr" --plan "$TMP/there.plan" --json >"$TMP/t.json" 2>"$TMP/t.err" || fail "replay --plan there.plan: $(cat "$TMP/t.err")"
[ "$(j "$TMP/t.json" "(d['ok'], d['plan']['staged']['transfers'])")" = "(True, 0)" ] || fail "another device's staging applied in replay"

# run: this device's decision loads the layer, which stages (--stage all on a CPU device); same output
"$CLRR" run --plan "$TMP/here.plan" --trust-plan --stage all --report "$TMP/r.json" -- "$V" --size 1048576 --iters 3 \
    >"$TMP/run.out" 2>"$TMP/run.err" || fail "run --plan here.plan: $(cat "$TMP/run.err")"
cmp -s <(grep -v ocl_ms "$TMP/plain.out") <(grep -v ocl_ms "$TMP/run.out") || { sed 's/ ocl_ms=.*//' "$TMP/plain.out" >"$TMP/p1"
    sed 's/ ocl_ms=.*//' "$TMP/run.out" >"$TMP/p2"; cmp -s "$TMP/p1" "$TMP/p2" || fail "output under the plan: $(cat "$TMP/run.out")"; }
[ "$(j "$TMP/r.json" "(d['staged_writes'], d['staged_reads'])")" = "(6, 3)" ] ||
    fail "run report: $(j "$TMP/r.json" "(d.get('layer'), d.get('staged_writes'), d.get('staged_reads'))")"
"$CLRR" run --plan "$TMP/there.plan" --trust-plan -- "$V" --size 1048576 --iters 3 >/dev/null 2>"$TMP/rt.err" ||
    fail "run --plan there.plan: $(cat "$TMP/rt.err")"
grep -q "nothing in it applies here (its staging was measured on no such device (driver .*), not on a device here): .* runs without the layer" \
    "$TMP/rt.err" || fail "run with another device's staging: $(cat "$TMP/rt.err")"

# the blocks made ahead are the layer's: per context and block size, one
# per buffer and one more (spmv's buffers of 524292 and 2 x 524288 bytes
# share the 1 MiB blocks, its 2 of 8115464 the 8 MiB ones: 4 + 3), the
# replay's count equal to the layer's own in a live run
S=$B/apps/spmv
need "$S"
"$CLRR" record -o "$TMP/sp.clrr" -- "$S" --size 131072 --quiet >/dev/null || fail "recording spmv"
"$CLRR" optimize "$TMP/sp.clrr" -o "$TMP/spd.plan" >/dev/null 2>&1 || fail "optimize spmv"
python3 - "$TMP/spd.plan" "$TMP/here.plan" "$TMP/sp.plan" <<'PY' || fail "making sp.plan"
import json, sys
d, h = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
d["staging"] = h["staging"]
json.dump(d, open(sys.argv[3], "w"))
PY
"$CLRR" replay "$TMP/sp.clrr" --plan "$TMP/sp.plan" --json >"$TMP/sp.json" 2>"$TMP/sp.err" || fail "replay spmv: $(cat "$TMP/sp.err")"
"$CLRR" run --plan "$TMP/sp.plan" --trust-plan --stage all --report "$TMP/spr.json" -- "$S" --size 131072 --quiet \
    >/dev/null 2>"$TMP/spr.err" || fail "run spmv: $(cat "$TMP/spr.err")"
[ "$(j "$TMP/sp.json" "(d['ok'], d['plan']['staged']['ahead'])")" = "(True, 7)" ] &&
    [ "$(j "$TMP/spr.json" "d['stage_blocks_ahead']")" = 7 ] && [ "$(j "$TMP/r.json" "d['stage_blocks_ahead']")" = 4 ] ||
    fail "blocks made ahead: replay $(j "$TMP/sp.json" "d['plan']['staged']"), live $(j "$TMP/spr.json" "d['stage_blocks_ahead']")"

# corrupt entries: one line, exit 3
plan_refused "$TMP/here.plan" "$TMP/v.clrr" small "d['staging'][0]['min_bytes'] = 100" "staging\[0\].min_bytes: 100, at least 4096"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" slower "d['staging'][0]['after_ns'] = 3000000" "staging\[0\]: after_ns: above before_ns"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" twice "d['staging'].append(dict(d['staging'][0]))" "staging\[1\].device: .* is decided twice"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" reps "d['staging'][0]['reps'] = 0" "staging\[0\].reps: 0, expected 1 to 1000"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" bytes "d['staging'][0]['bytes'] = 1" "staging\[0\]: bytes: fewer than transfers"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" member "d['staging'][0]['extra'] = 1" "staging\[0\]"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" old "d['version'] = '1.12'" "plan.staging: comes with 1.13"
echo "opt_stage: ok"
