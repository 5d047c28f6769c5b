#!/usr/bin/env bash
# split_adapt.sh BUILD_DIR — adaptive split proportions (issue 8): over
# PoCL's unequal pair (basic: one thread, pthread: every core) a split
# launch repeated 8 times starts at the plan's proportions and moves
# work-groups to the faster device, by the default refinement and by
# Broyden's; --split-fixed keeps them; an unknown --split-method is refused.
# The shares depend on how fast each device really is, so tests/run.sh runs
# this script alone (tests/serial.txt): other jobs on the same cores would
# make the single-threaded device look as fast as the multi-threaded one.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/nbody"
[ -e "$B/lib/libclrr-rw.so" ] || skip "the rewriter (libclrr-rw.so) is not built"

# adaptive proportions: nbody over 8 steps on the unequal pair starts even
# and moves work-groups to the faster device; --split-fixed keeps 1:1
POCL_DEVICES="basic pthread" "$CLRR" record -o "$TMP/nb8.clrr" -- "$APPS/nbody" --size 4096 --iters 8 --device 1 \
    --quiet || fail "recording nbody"
POCL_DEVICES="basic pthread" "$CLRR" optimize "$TMP/nb8.clrr" -o "$TMP/nb8.plan" --passes none --split 1:1,0:1 \
    >/dev/null || fail "optimize nbody"
POCL_DEVICES="basic pthread" "$CLRR" replay --json "$TMP/nb8.clrr" --plan "$TMP/nb8.plan" >"$TMP/nb8.json" ||
    fail "nbody adaptive: $(head -c 1000 "$TMP/nb8.json")"
# 8 launches: the first at the plan's proportions, then measured ones; a
# split measured slower than the queue's device alone (likely here: both
# devices share this machine's cores) runs whole for the next 15
[ "$(j "$TMP/nb8.json" "(d['plan']['split'] + d['plan']['split_declined'], d['plan']['split_adapted'] + 1 == d['plan']['split'], d['plan']['split_adapted'] >= 2)")" = "(8, True, True)" ] ||
    fail "nbody: $(j "$TMP/nb8.json" "d['plan']")"
[ "$(j "$TMP/nb8.json" "d['plan']['split_declined'] == 0 or 'whole on the queue' in d['plan']['split_shares']")" = True ] ||
    fail "nbody: runs whole without saying why: $(j "$TMP/nb8.json" "d['plan']['split_shares']")"
python3 - "$TMP/nb8.json" <<'PY' || fail "nbody's shares: $(j "$TMP/nb8.json" "d['plan']['split_shares']")"
import json, re, sys
s = json.load(open(sys.argv[1]))["plan"]["split_shares"]
share = dict(re.findall(r" (\d) ([0-9.]+)%", s))
# pthread (every core) over basic (one), unless the refinement stopped early
# because its split measured slower than the queue's device alone (both
# devices share this machine's two cores; a busy moment once left the
# shares the other way round under ASan, 31.2% to 68.8%)
assert "whole on the queue" in s or (float(share["1"]) > 55 and float(share["0"]) < 45), s
PY
# Broyden's refinement (each part's slope from its last two launches) moves
# work-groups the same way, verified. It may stop after its third launch
# (measured slower than the queue's device alone: both devices share this
# machine's two cores), so it need only have moved past even (a fresh
# clone once stopped at 54.7%).
POCL_DEVICES="basic pthread" "$CLRR" replay --json "$TMP/nb8.clrr" --plan "$TMP/nb8.plan" --split-method broyden \
    >"$TMP/nb8b.json" || fail "nbody broyden: $(head -c 1000 "$TMP/nb8b.json")"
python3 - "$TMP/nb8b.json" <<'PY' || fail "nbody broyden: $(j "$TMP/nb8b.json" "d['plan']")"
import json, re, sys
d = json.load(open(sys.argv[1]))
p = d["plan"]
assert d["ok"] and d["mismatches"] == 0 and p["split_adapted"] >= 2, p
share = dict(re.findall(r" (\d) ([0-9.]+)%", p["split_shares"]))
assert float(share["1"]) > 50 and float(share["0"]) < 50, p["split_shares"]
PY
"$CLRR" replay "$TMP/nb8.clrr" --plan "$TMP/nb8.plan" --split-method newton 2>"$TMP/err" >/dev/null
[ $? = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "--split-method newton: $(cat "$TMP/err")"
POCL_DEVICES="basic pthread" "$CLRR" replay --json "$TMP/nb8.clrr" --plan "$TMP/nb8.plan" --split-fixed \
    >"$TMP/nb8f.json" || fail "nbody --split-fixed"
[ "$(j "$TMP/nb8f.json" "(d['plan']['split'], d['plan']['split_adapted'])")" = "(8, 0)" ] || fail "--split-fixed adapted"
echo "ok: nbody adapted towards the faster device (default and broyden), --split-fixed kept 1:1"
