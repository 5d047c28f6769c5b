#!/usr/bin/env bash
# opt_stage.sh BUILD_DIR — measured staging decisions (plan 1.13, 1.14,
# issue 36): `clrr optimize --measure --stage MODE` (auto by default with
# --measure) times whole replays of the trace with its large buffer writes
# and blocking reads through pinned memory (making the blocks and the
# copies counted) against replays without, and keeps a decision for the
# device only when faster, or says in `unstaged` that it was not. On
# PoCL's CPU device (host-unified memory) `auto` does not try it and `all`
# times it; either way the plan replays verified. A staging decision for
# this device makes `clrr replay --plan` stage the transfers (counted,
# verified) and `clrr run --plan` load the layer, which stages them (by
# the decision: no --stage needed on a CPU device, where the rule stages
# nothing) with the application's output unchanged; an `unstaged` entry
# for this device makes the layer stage nothing there, an explicit
# --stage overrides both; a decision for another device is not applied
# (replay stages nothing, run runs without the layer). Corrupt entries are
# refused with one line.
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

# off: no staging timed; auto (the default with --measure, when it says
# nothing of it): not tried on a device that shares the host's memory,
# and nothing said of it in the plan
"$CLRR" optimize "$TMP/v.clrr" -o "$TMP/d.plan" --measure=3 --stage off --budget 30 >/dev/null 2>"$TMP/d.err" ||
    fail "optimize --stage off: $(cat "$TMP/d.err")"
! grep -q "staging" "$TMP/d.err" || fail "staging timed with --stage off: $(cat "$TMP/d.err")"
"$CLRR" optimize "$TMP/v.clrr" -o "$TMP/n.plan" --measure=3 --budget 30 >/dev/null 2>"$TMP/n.err" ||
    fail "optimize --measure: $(cat "$TMP/n.err")"
! grep -q "staging" "$TMP/n.err" || fail "staging said by default on a CPU device: $(cat "$TMP/n.err")"
[ "$(j "$TMP/n.plan" "('staging' in d, 'unstaged' in d)")" = "(False, False)" ] || fail "default plan: $(cat "$TMP/n.plan")"
"$CLRR" optimize "$TMP/v.clrr" -o "$TMP/a.plan" --measure=3 --stage auto --budget 30 >/dev/null 2>"$TMP/a.err" ||
    fail "optimize --stage auto: $(cat "$TMP/a.err")"
grep -q "^clrr optimize: verify: staging not tried: .* shares the host's memory" "$TMP/a.err" || fail "--stage auto: $(cat "$TMP/a.err")"
[ "$(j "$TMP/a.plan" "(d['version'], 'staging' in d, 'unstaged' in d)")" = "('1.14', False, False)" ] ||
    fail "--stage auto plan: $(cat "$TMP/a.plan")"

# all: timed on the CPU device; kept or not, said with what was measured, and the plan replays verified
"$CLRR" optimize "$TMP/v.clrr" -o "$TMP/s.plan" --measure=3 --stage all --budget 60 >/dev/null 2>"$TMP/s.err" ||
    fail "optimize --stage all: $(cat "$TMP/s.err")"
grep -q "^clrr optimize: verify: staging \(kept\|not kept\) on .*: 9 transfers of 512 KiB or more (36.0 MiB): measured .* ms with it, .* ms without" \
    "$TMP/s.err" || fail "--stage all: $(cat "$TMP/s.err")"
"$CLRR" replay "$TMP/v.clrr" --plan "$TMP/s.plan" >"$TMP/sr.out" 2>&1 || fail "replay --plan s.plan: $(cat "$TMP/sr.out")"
if grep -q "staging kept" "$TMP/s.err" && grep -q "^clrr optimize: verify: live: .* every transformation removed" "$TMP/s.err"; then
    # kept, then weighed live: its gain below what the layer costs a run, the plan made again empty
    j "$TMP/s.plan" "'staging' not in d and 'unstaged' not in d and not d['transformations']" | grep -qx True ||
        fail "the decision removed live: $(cat "$TMP/s.plan")"
elif grep -q "staging kept" "$TMP/s.err"; then
    j "$TMP/s.plan" "d['staging'][0]['min_bytes'] == 524288 and d['staging'][0]['after_ns'] < d['staging'][0]['before_ns'] and 'unstaged' not in d" |
        grep -qx True || fail "the kept decision: $(cat "$TMP/s.plan")"
else   # measured, not kept: said so, with what was measured
    j "$TMP/s.plan" "'staging' not in d and d['unstaged'][0]['min_bytes'] == 524288 and d['unstaged'][0]['transfers'] == 9 and d['unstaged'][0]['reps'] >= 3" |
        grep -qx True || fail "the unstaged entry: $(cat "$TMP/s.plan")"
    "$CLRR" plan show "$TMP/s.plan" | grep -q "^unstaged  not staged on .*, measured slower or no faster: .* a live run does not stage there" ||
        fail "plan show s.plan: $("$CLRR" plan show "$TMP/s.plan")"
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
# replay: the writes (3 x 2 of 4 MiB) and the reads (3 of 4 MiB: vecadd
# reads without blocking, and made no user event, so the replay makes each
# read blocking and stages it, as the layer does) staged, verified, and the
# blocks the layer would make ahead for vecadd's 3 buffers of 4 MiB (one
# each and one more) made at their creation
"$CLRR" replay "$TMP/v.clrr" --plan "$TMP/here.plan" --json >"$TMP/h.json" 2>"$TMP/h.err" || fail "replay --plan here.plan: $(cat "$TMP/h.err")"
[ "$(j "$TMP/h.json" "(d['ok'], d['mismatches'], d['plan']['staged']['transfers'], d['plan']['staged']['bytes'] >> 20, d['plan']['staged']['unpinned'], d['plan']['staged']['ahead'])")" \
    = "(True, 0, 9, 36, 0, 4)" ] || fail "replay staged: $(j "$TMP/h.json" "(d['ok'], d['mismatches'], d['plan']['staged'])")"
"$CLRR" replay "$TMP/v.clrr" --plan "$TMP/here.plan" >"$TMP/h.out" 2>&1 || fail "replay --plan here.plan: $(cat "$TMP/h.out")"
grep -q "9 transfers staged through pinned memory (36.0 MiB; staging; 4 blocks made ahead at buffer creation)" "$TMP/h.out" || fail "replay summary: $(cat "$TMP/h.out")"
"$CLRR" replay "$TMP/v.clrr" --plan "$TMP/there.plan" --json >"$TMP/t.json" 2>"$TMP/t.err" || fail "replay --plan there.plan: $(cat "$TMP/t.err")"
[ "$(j "$TMP/t.json" "(d['ok'], d['plan']['staged']['transfers'])")" = "(True, 0)" ] || fail "another device's staging applied in replay"

# run: this device's decision loads the layer, which stages by it (the
# rule would not, on a CPU device); same output
"$CLRR" run --plan "$TMP/here.plan" --trust-plan --report "$TMP/r.json" -- "$V" --size 1048576 --iters 3 \
    >"$TMP/run.out" 2>"$TMP/run.err" || fail "run --plan here.plan: $(cat "$TMP/run.err")"
cmp -s <(grep -v ocl_ms "$TMP/plain.out") <(grep -v ocl_ms "$TMP/run.out") || { sed 's/ ocl_ms=.*//' "$TMP/plain.out" >"$TMP/p1"
    sed 's/ ocl_ms=.*//' "$TMP/run.out" >"$TMP/p2"; cmp -s "$TMP/p1" "$TMP/p2" || fail "output under the plan: $(cat "$TMP/run.out")"; }
[ "$(j "$TMP/r.json" "(d['staged_writes'], d['staged_reads'], d['stage_plan'], d['stage_plan_kept'], d['stage_plan_unstaged'])")" = "(6, 3, True, 1, 0)" ] ||
    fail "run report: $(j "$TMP/r.json" "(d.get('layer'), d.get('staged_writes'), d.get('staged_reads'), d.get('stage_plan'), d.get('stage_plan_kept'))")"
# the replay staged what the layer stages: 9 transfers, of 6 + 3
[ "$(j "$TMP/h.json" "d['plan']['staged']['transfers']")" = "$(j "$TMP/r.json" "d['staged_writes'] + d['staged_reads']")" ] ||
    fail "replay staged $(j "$TMP/h.json" "d['plan']['staged']"), the layer $(j "$TMP/r.json" "(d['staged_writes'], d['staged_reads'])")"
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
"$CLRR" run --plan "$TMP/sp.plan" --trust-plan --report "$TMP/spr.json" -- "$S" --size 131072 --quiet \
    >/dev/null 2>"$TMP/spr.err" || fail "run spmv: $(cat "$TMP/spr.err")"
[ "$(j "$TMP/sp.json" "(d['ok'], d['plan']['staged']['ahead'])")" = "(True, 7)" ] &&
    [ "$(j "$TMP/spr.json" "d['stage_blocks_ahead']")" = 7 ] && [ "$(j "$TMP/r.json" "d['stage_blocks_ahead']")" = 4 ] ||
    fail "blocks made ahead: replay $(j "$TMP/sp.json" "d['plan']['staged']"), live $(j "$TMP/spr.json" "d['stage_blocks_ahead']")"
# ... and of the layer's sizes: the replay pins the bytes the layer pins
# (its blocks also hold a chunk header; a 4 MiB transfer took an 8 MiB block
# before), spmv 4 + 3 blocks of 1 and 8 MiB, vecadd 4 of 4 MiB
[ "$(j "$TMP/sp.json" "d['plan']['staged']['block_bytes']")" = "$(j "$TMP/spr.json" "d['stage_block_bytes']")" ] &&
    [ "$(j "$TMP/spr.json" "d['stage_block_bytes']")" = $(((4 + 3 * 8) << 20)) ] &&
    [ "$(j "$TMP/h.json" "d['plan']['staged']['block_bytes']")" = "$(j "$TMP/r.json" "d['stage_block_bytes']")" ] &&
    [ "$(j "$TMP/r.json" "d['stage_block_bytes']")" = $((16 << 20)) ] ||
    fail "blocks' bytes: replay spmv $(j "$TMP/sp.json" "d['plan']['staged']"), live $(j "$TMP/spr.json" "d['stage_block_bytes']"); replay vecadd $(j "$TMP/h.json" "d['plan']['staged']"), live $(j "$TMP/r.json" "d['stage_block_bytes']")"

# unstaged (1.14): a plan whose layer runs anyway (deadwork's dead and
# redundant transfers), with this device's staging measured and not kept:
# the layer stages nothing there; kept instead, it stages; --stage all
# stages whatever the plan says
D=$B/tests/progs/deadwork
need "$D"
"$CLRR" record -o "$TMP/dw.clrr" -- "$D" --size 262144 --iters 3 --quiet >/dev/null || fail "recording deadwork"
"$CLRR" optimize "$TMP/dw.clrr" -o "$TMP/dw.plan" >/dev/null 2>&1 || fail "optimize deadwork"
python3 - "$TMP/dw.plan" "$TMP/here.plan" <<'PY' || fail "making the deadwork plans"
import json, sys
d, h = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
e = dict(h["staging"][0], before_ns=1000000, after_ns=2000000)
d["unstaged"] = [e]
json.dump(d, open(sys.argv[1].replace("dw.plan", "dwu.plan"), "w"))
del d["unstaged"]
d["staging"] = h["staging"]
json.dump(d, open(sys.argv[1].replace("dw.plan", "dwk.plan"), "w"))
PY
"$CLRR" plan show "$TMP/dwu.plan" | grep -q "^unstaged  not staged on $dev (driver $drv), measured slower or no faster: 1.000 ms without, 2.000 ms with" ||
    fail "plan show dwu.plan: $("$CLRR" plan show "$TMP/dwu.plan")"
# (2 copy threads: with one, as on a 2-core machine, the rule is off anyway)
for c in "dwu:--stage-threads 2:(0, True, 0, 1)" "dwk:--stage-threads 2:(True, True, 1, 0)" "dwu:--stage all:(True, False, 0, 0)"; do
    n=${c%%:*}; rest=${c#*:}; opt=${rest%%:*}; want=${rest#*:}
    "$CLRR" run --plan "$TMP/$n.plan" --trust-plan $opt --report "$TMP/$n.json" -- "$D" --size 262144 --iters 3 --quiet \
        >/dev/null 2>"$TMP/$n.err" || fail "run --plan $n.plan $opt: $(cat "$TMP/$n.err")"
    got=$(j "$TMP/$n.json" "(d['staged_writes'] and True, d['stage_plan'], d['stage_plan_kept'], d['stage_plan_unstaged'])")
    [ "$got" = "$want" ] || fail "run --plan $n.plan $opt: (staged, stage_plan, kept, unstaged) $got, expected $want"
done

# a staged write never copies memory a pending non-blocking read still
# fills (the layer makes every such read it does not stage and follows its
# event): nbread's modes under this device's decision, and writes only
# (CLRR_STAGE_READS=0, as --stage writes on a GPU), right results; uevent
# (the read waits for a user event, so it is not made blocking) keeps its
# write unstaged (write, writes only: when the read is still running then;
# on a CPU device it has often finished: either, x)
N=$B/tests/progs/nbread
need "$N"
for c in "read::0" "map::0" "write::0" "uevent::1" "write:0:x" "uevent:0:1"; do
    m=${c%%:*}; rest=${c#*:}; reads=${rest%%:*}; kept=${rest#*:}
    rc=0
    env ${reads:+CLRR_STAGE=all CLRR_STAGE_READS=$reads} timeout 60 "$CLRR" run -q --plan "$TMP/here.plan" --trust-plan \
        --report "$TMP/nb.json" -- "$N" $m >"$TMP/nb.out" 2>&1 || rc=$?
    [ $rc = 0 ] && grep -q "nbread $m: .* ok" "$TMP/nb.out" || fail "nbread $m (reads ${reads:-staged}) under the plan: exit $rc: $(cat "$TMP/nb.out")"
    [ "$kept" = x ] || [ "$(j "$TMP/nb.json" "d['stage_fill_kept']")" = "$kept" ] ||
        fail "nbread $m (reads ${reads:-staged}): stage_fill_kept $(j "$TMP/nb.json" "(d['stage_fill_kept'], d['staged_writes'], d['staged_reads'])"), expected $kept"
done

# corrupt entries: one line, exit 3
plan_refused "$TMP/here.plan" "$TMP/v.clrr" small "d['staging'][0]['min_bytes'] = 100" "staging\[0\].min_bytes: 100, at least 4096"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" slower "d['staging'][0]['after_ns'] = 3000000" "staging\[0\]: after_ns: above before_ns"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" twice "d['staging'].append(dict(d['staging'][0]))" "staging\[1\].device: .* is decided twice"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" reps "d['staging'][0]['reps'] = 0" "staging\[0\].reps: 0, expected 1 to 1000"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" bytes "d['staging'][0]['bytes'] = 1" "staging\[0\]: bytes: fewer than transfers"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" member "d['staging'][0]['extra'] = 1" "staging\[0\]"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" old "d['version'] = '1.12'" "plan.staging: comes with 1.13"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" uold "d['version'] = '1.13'; d['unstaged'] = d.pop('staging')" "plan.unstaged: comes with 1.14"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" both "d['unstaged'] = [dict(d['staging'][0])]" "unstaged\[0\].device: .* is decided twice"
plan_refused "$TMP/here.plan" "$TMP/v.clrr" usmall "d['unstaged'] = [dict(d.pop('staging')[0], min_bytes=4095)]" "unstaged\[0\].min_bytes: 4095, at least 4096"
echo "opt_stage: ok"
