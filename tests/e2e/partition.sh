#!/usr/bin/env bash
# partition.sh BUILD_DIR — the partitioner (issue 8, item 4): `clrr
# optimize --split DEVICES` without weights takes each launch's devices and
# shares from the cost database that `clrr profile` filled, transfers
# included, on PoCL's unequal pair (basic: one thread, pthread: every
# core). Real costs first (whatever the machine measures, the plan must
# follow the prediction and replay verified), then databases edited so
# that the answer is known: equal devices and free transfers (an even
# split), the other device a hundred times faster (all on it: device
# selection, a one-part split), transfers that cost seconds (no split: the
# queue's device alone), a device never measured (left out), the queue's
# device never measured (even shares, with the reason). Split replays add
# their parts' times to the database. Bad options and a
# broken database give one line and a non-zero exit.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/nbody"
[ -e "$B/lib/libclrr-rw.so" ] || skip "the rewriter (libclrr-rw.so) is not built"
export POCL_DEVICES="basic pthread"

"$CLRR" record -o "$TMP/nb.clrr" -- "$APPS/nbody" --size 1024 --iters 3 --device 1 --quiet || fail "record nbody"
"$CLRR" profile "$TMP/nb.clrr" --reps 3 --costs "$TMP/real" >"$TMP/prof.txt" 2>&1 || fail "profile: $(tail -3 "$TMP/prof.txt")"

# plan PLAN DB [OPTIONS...]: optimize nbody with --split 1,0 (the queue's device first)
plan() {
    local out=$1 db=$2
    shift 2
    "$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/$out.plan" --passes none --split 1,0 --costs "$db" --json "$@" \
        >"$TMP/$out.json" 2>"$TMP/$out.err" || fail "optimize ($out): $(cat "$TMP/$out.err")"
}
# replayed PLAN: verified, every split launch ran split
replayed() {
    "$CLRR" replay --json --split-fixed "$TMP/nb.clrr" --plan "$TMP/$1.plan" >"$TMP/$1.r.json" 2>&1 ||
        fail "$1 does not replay verified: $(head -c 1500 "$TMP/$1.r.json")"
    [ "$(j "$TMP/$1.r.json" "(d['ok'], d['mismatches'], d['plan']['split_fallback'])")" = "(True, 0, 0)" ] ||
        fail "$1: $(j "$TMP/$1.r.json" "d['plan']")"
}
verdict() { j "$TMP/$1.json" "d['partitions'][0]['verdict']"; }
counts() { j "$TMP/$1.json" "[x['groups'] for x in d['partitions'][0]['devices']]"; }

# 1. the measured costs: a decision with a prediction, followed by the plan
plan real "$TMP/real"
v=$(verdict real)
case $v in split|device|whole) ;; *) fail "real costs: verdict $v: $(cat "$TMP/real.json")" ;; esac
[ "$(j "$TMP/real.json" "all(p['predicted_ns'] > 0 and p['predicted_ns'] <= p['alone_ns'] and p['predicted_ns'] <= p['best_single_ns'] * 1.0001 for p in d['partitions'])")" = True ] ||
    fail "a prediction worse than a single device: $(cat "$TMP/real.json")"
if [ "$v" = whole ]; then
    [ "$(j "$TMP/real.json" "d['splits']")" = 0 ] || fail "verdict whole, yet a split"
else
    [ "$(j "$TMP/real.plan" "sorted(x['groups'][1] - x['groups'][0] for s in d['splits'] for x in s['parts'])")" = \
      "$(j "$TMP/real.json" "sorted(x['groups'] for x in d['partitions'][0]['devices'] if x['groups'])")" ] ||
        fail "the plan's parts are not the partitioner's counts"
    replayed real
fi

# edit DB OUT PYTHON: a copy of the measured database with each k and x
# record's ns rewritten by expression PYTHON (f: the fields, ns: the time,
# basic: the record is the basic device's); records it drops: None
edit() {
    python3 - "$1" "$2" "$3" <<'PY' || fail "editing the database"
import sys
src, dst, expr = sys.argv[1:]
out = []
for line in open(src, encoding="utf-8"):
    f = line.rstrip("\n").split("\t")
    if f[0] in ("k", "x"):
        ns = int(f[8] if f[0] == "k" else f[4])
        basic = f[1].startswith("basic")
        v = eval(expr)
        if v is None:
            continue
        f[8 if f[0] == "k" else 4] = str(max(1, int(v)))
    out.append("\t".join(f) + "\n")
open(dst, "w", encoding="utf-8").writelines(out)
PY
}
# the pthread device's kernel times, per point, to copy onto basic's
python3 - "$TMP/real" >"$TMP/pt.py" <<'PY'
import sys
pts = {}
for line in open(sys.argv[1], encoding="utf-8"):
    f = line.rstrip("\n").split("\t")
    if f[0] == "k" and f[1].startswith("pthread"):
        pts.setdefault((f[2], f[3], f[5], f[6], f[7]), []).append(int(f[8]))
print("pts = %r" % {k: sorted(v)[len(v) // 2] for k, v in pts.items()})
PY
# 2. equal devices, free transfers: an even split
edit "$TMP/real" "$TMP/equal" "$(cat "$TMP/pt.py" | sed 's/^pts = //') .get((f[2], f[3], f[5], f[6], f[7]), ns) if f[0] == 'k' else 1"
plan equal "$TMP/equal"
[ "$(verdict equal)" = split ] || fail "equal devices: $(cat "$TMP/equal.json")"
python3 - "$TMP/equal.json" <<'PY' || fail "equal devices, uneven shares: $(counts equal)"
import json, sys
p = json.load(open(sys.argv[1]))["partitions"][0]
a, b = (x["groups"] for x in p["devices"])
assert abs(a - b) <= max(2, 0.15 * (a + b)), (a, b)
PY
replayed equal
# every split replay adds its parts' kernel times to the database, keyed
# as the profile's (same program hash, kernel, shape, device identities)
cp "$TMP/real" "$TMP/learn"
before=$(grep -c '^k' "$TMP/learn")
"$CLRR" replay --json "$TMP/nb.clrr" --plan "$TMP/equal.plan" --costs "$TMP/learn" >"$TMP/learn.json" ||
    fail "replay learning: $(head -c 800 "$TMP/learn.json")"
n=$(j "$TMP/learn.json" "d['plan']['split_learned']")
[ "$n" -ge 2 ] && [ "$(grep -c '^k' "$TMP/learn")" = $((before + n)) ] || fail "learned $n, file $(grep -c '^k' "$TMP/learn") from $before"
python3 - "$TMP/learn" "$before" <<'PY' || fail "learned samples keyed unlike the profile's"
import sys
ks = [l.split("\t") for l in open(sys.argv[1], encoding="utf-8") if l.startswith("k\t")]
old, new = ks[:int(sys.argv[2])], ks[int(sys.argv[2]):]
keys = {tuple(k[1:7]) for k in old}
assert new and all(tuple(k[1:7]) in keys for k in new), [k[1:7] for k in new]
assert len({k[1] for k in new}) == 2   # both devices
PY
"$CLRR" replay --json "$TMP/nb.clrr" --plan "$TMP/equal.plan" --costs "$TMP/learn" --no-learn >/dev/null 2>&1 &&
    fail "--costs with --no-learn accepted"
CLRR_COSTS=$TMP/learn "$CLRR" replay --json "$TMP/nb.clrr" --plan "$TMP/equal.plan" --no-learn >"$TMP/nl.json" ||
    fail "--no-learn"
[ "$(grep -c '^k' "$TMP/learn")" = $((before + n)) ] && [ "$(j "$TMP/nl.json" "d['plan']['split_learned']")" = 0 ] ||
    fail "--no-learn added samples"
"$CLRR" replay "$TMP/nb.clrr" --costs "$TMP/learn" >/dev/null 2>&1; [ $? = 2 ] || fail "--costs without --plan"
# 3. the other device a hundred times faster, transfers cheap: everything on it
edit "$TMP/real" "$TMP/fast" "(ns / 100 if basic else ns * 10) if f[0] == 'k' else 1"
plan fast "$TMP/fast"
[ "$(verdict fast)" = device ] || fail "a much faster other device: $(cat "$TMP/fast.json")"
[ "$(j "$TMP/fast.plan" "[[x['device'] for x in s['parts']] for s in d['splits']][0]")" = "['0']" ] ||
    fail "device selection: $(j "$TMP/fast.plan" "[s['parts'] for s in d['splits']]")"
replayed fast
[ "$(j "$TMP/fast.r.json" "d['plan']['split'] > 0 and d['plan']['split_parts'] == d['plan']['split']")" = True ] ||
    fail "device selection did not run on the other device: $(j "$TMP/fast.r.json" "d['plan']")"
# 4. transfers that cost seconds: the queue's device alone, no split
edit "$TMP/real" "$TMP/slow" "ns if f[0] == 'k' else ns * 10**6"
plan slow "$TMP/slow"
[ "$(verdict slow),$(j "$TMP/slow.json" "d['splits']")" = "whole,0" ] || fail "slow transfers: $(cat "$TMP/slow.json")"
grep -q "alone is predicted fastest" "$TMP/slow.json" || fail "no note for the launch left whole"
# 5. the other device never measured: left out (the queue's device alone)
edit "$TMP/real" "$TMP/onlyq" "None if basic and f[0] == 'k' else ns"
plan onlyq "$TMP/onlyq"
[ "$(verdict onlyq),$(j "$TMP/onlyq.json" "d['splits']")" = "whole,0" ] || fail "unmeasured device: $(cat "$TMP/onlyq.json")"
# 6. the queue's device never measured: even shares, and why
edit "$TMP/real" "$TMP/noq" "None if not basic and f[0] == 'k' else ns"
plan noq "$TMP/noq"
[ "$(verdict noq)" = even ] || fail "unmeasured queue device: $(cat "$TMP/noq.json")"
grep -q "no costs for this launch on 1" "$TMP/noq.json" || fail "no reason given: $(cat "$TMP/noq.json")"
replayed noq
# 7. weights: fixed shares, no partitioner; --no-costs: even shares
"$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/w.plan" --passes none --split 1:1,0:1 --costs "$TMP/fast" --json >"$TMP/w.json" ||
    fail "optimize with weights"
[ "$(j "$TMP/w.json" "(len(d['partitions']), d['splits'] > 0)")" = "(0, True)" ] || fail "weights: $(cat "$TMP/w.json")"
CLRR_COSTS=$TMP/fast "$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/nc.plan" --passes none --split 1,0 --no-costs --json \
    >"$TMP/nc.json" || fail "--no-costs"
[ "$(j "$TMP/nc.json" "len(d['partitions'])")" = 0 ] || fail "--no-costs read the costs"
# the machine's database (CLRR_COSTS) is read when it exists
CLRR_COSTS=$TMP/fast "$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/dflt.plan" --passes none --split 1,0 --json >"$TMP/dflt.json" ||
    fail "optimize with CLRR_COSTS"
[ "$(verdict dflt)" = device ] || fail "CLRR_COSTS not read: $(cat "$TMP/dflt.json")"
# --device names the queue's device: 0 is not in the list's first place, 1 is
plan dev1 "$TMP/fast" --device 1
[ "$(verdict dev1)" = device ] || fail "--device 1: $(cat "$TMP/dev1.json")"
# the text summary names the decision
"$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/t.plan" --passes none --split 1,0 --costs "$TMP/equal" >"$TMP/t.txt" ||
    fail "optimize (text)"
grep -q "^partition .*predicted .* ms, the queue's device alone" "$TMP/t.txt" || fail "summary: $(cat "$TMP/t.txt")"

# bad input: one line, non-zero
printf 'clrr-costs\t1\nk\tbroken\n' >"$TMP/broken"
"$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/b.plan" --passes none --split 1,0 --costs "$TMP/broken" 2>"$TMP/b.err" &&
    fail "a broken database was accepted"
[ "$(wc -l <"$TMP/b.err")" = 1 ] && grep -q "broken:2:" "$TMP/b.err" || fail "broken database: $(cat "$TMP/b.err")"
[ ! -e "$TMP/b.plan" ] || fail "a plan was left behind"
for bad in "--costs $TMP/real --no-costs" "--device 1"; do
    "$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/b.plan" $( [ "$bad" = "--device 1" ] || echo --split 1,0 ) $bad 2>"$TMP/b.err"
    [ $? = 2 ] && [ "$(wc -l <"$TMP/b.err")" -le 2 ] || fail "$bad: $(cat "$TMP/b.err")"
done
# a device the snapshot does not have: even shares, and why
plan nodev "$TMP/real" --device 7
[ "$(verdict nodev)" = even ] && grep -q "there are 2" "$TMP/nodev.json" || fail "--device 7: $(cat "$TMP/nodev.json")"
echo "partition: ok"
