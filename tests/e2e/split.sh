#!/usr/bin/env bash
# split.sh BUILD_DIR — the split pass and its execution (issue 8): `clrr
# optimize --split DEVICES` plans every launch of a workload as parts over
# PoCL's unequal pair (basic: one thread, pthread: every core) and its equal
# pair, each part a range of work-groups with the bytes the kernel analysis
# says it reads and writes; `clrr replay --plan` runs the parts on their
# devices through the rewriter's partition-ready kernels and verifies every
# read-back against the unsplit recording. Awkward splits: one work-group
# on a device, both parts away from the queue's device, three parts, the
# diff merge (exposure's decimate), inputs that change between launches
# (vecadd, nbody) next to data that stays (resident bytes not sent again);
# adaptive proportions are split_adapt.sh's.
# The test can fail: a plan whose region misses bytes gives a mismatch.
# Broken split sections and bad --split lists are refused with one line.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/vecadd"
[ -e "$B/lib/libclrr-rw.so" ] || skip "the rewriter (libclrr-rw.so) is not built"
fail() { echo "FAIL: $*" >&2; exit 1; }   # also from inside $(split ...)
resident=0

# split PAIR APP ARGS SPEC [MIN_SPLITS]: record APP on the pair's device 1,
# plan the split, replay it verified; every planned launch ran split
split() {
    local pair=$1 app=$2 args=$3 spec=$4 tag
    tag=$app-${pair// /-}-$(echo "$spec" | sed 's/:/_/g; s/,/-/g; s/\./d/g')
    [ -e "$TMP/$app-${pair// /-}.clrr" ] || POCL_DEVICES=$pair "$CLRR" record -o "$TMP/$app-${pair// /-}.clrr" -- \
        "$APPS/$app" ${args//_/ } --device 1 --quiet || fail "recording $app on '$pair'"
    POCL_DEVICES=$pair "$CLRR" optimize "$TMP/$app-${pair// /-}.clrr" -o "$TMP/$tag.plan" --passes none \
        --split "$spec" --json >"$TMP/$tag.o.json" || fail "optimize $app --split $spec"
    local n; n=$(j "$TMP/$tag.plan" "sum(t['pass'] == 'split' for t in d['transformations'])")
    [ "$n" -ge 1 ] || fail "$app --split $spec: nothing split ($(j "$TMP/$tag.o.json" "d['split_note']"))"
    POCL_DEVICES=$pair "$CLRR" replay --json "$TMP/$app-${pair// /-}.clrr" --plan "$TMP/$tag.plan" >"$TMP/$tag.r.json" ||
        fail "$app --split $spec on '$pair' does not replay verified: $(head -c 2000 "$TMP/$tag.r.json")"
    # every planned launch ran split, or whole because its measurements said so
    [ "$(j "$TMP/$tag.r.json" "(d['ok'], d['mismatches'], d['plan']['split'] + d['plan']['split_declined'], d['plan']['split_fallback'], d['readbacks'] > 0, d['plan']['split'] > 0)")" \
        = "(True, 0, $n, 0, True, True)" ] || fail "$app --split $spec on '$pair': $(j "$TMP/$tag.r.json" "d['plan']")"
    # the partition-ready kernels were built when the replay built the program
    [ "$(j "$TMP/$tag.r.json" "(d['plan']['split_built_ahead'] > 0, d['plan']['split_built_late'])")" = "(True, 0)" ] ||
        fail "$app --split $spec: kernels not built ahead: $(j "$TMP/$tag.r.json" "d['plan']")"
    resident=$((resident + $(j "$TMP/$tag.r.json" "d['plan']['split_resident']")))
    echo "$TMP/$tag.plan"
}

# the unequal pair, every workload, the queue's device and the other (1:3)
while read -r app args; do
    split "basic pthread" "$app" "$args" "1:1,0:3" >/dev/null
done < <(split_workloads)
# exposure's decimate writes every other row of its output: merged by diff
[ "$(j "$TMP/exposure-basic-pthread-1_1-0_3.plan" "any(m == 'diff' for s in d['splits'] for m in s['merge'])")" = True ] ||
    fail "exposure: no diff merge"
# its 34 splits of 13 kernels share one program per kernel and device
[ "$(j "$TMP/exposure-basic-pthread-1_1-0_3.r.json" "(d['plan']['split_programs'], d['plan']['split_built_ahead'])")" = "(26, 68)" ] ||
    fail "exposure: programs built per split: $(j "$TMP/exposure-basic-pthread-1_1-0_3.r.json" "d['plan']")"
# one work-group on a device; both parts away from the queue's device; four parts, two on each
for spec in "0:0.0001,1:1" "0:1,0:1" "1:1,0:1,1:1,0:1"; do
    for a in "vecadd --size=10000_--iters=3" "sobel --size=128_--iters=2" "nbody --size=512_--iters=3"; do
        p=$(split "basic pthread" ${a% *} "${a#* }" "$spec")
    done
done
[ "$(j "$p" "min(x['groups'][1] - x['groups'][0] for s in d['splits'] for x in s['parts'])")" = 1 ] ||
    [ "$(j "$TMP/sobel-basic-pthread-0_0d0001-1_1.plan" "min(x['groups'][1] - x['groups'][0] for s in d['splits'] for x in s['parts'])")" = 1 ] ||
    fail "no part of exactly one work-group"
# the equal pair
for a in "vecadd --size=10000_--iters=3" "jacobi --size=128_--iters=3" "nbody --size=512_--iters=2"; do
    split "pthread pthread" ${a% *} "${a#* }" "cpu0:1,cpu1:1" >/dev/null
done
[ "$resident" -gt 0 ] || fail "no bytes were found already on a device"

# nbody --uniform (every body feels every body: the compute-bound all-pairs
# kind the GPU figures use) split over the equal pair, verified
POCL_DEVICES="pthread pthread" "$CLRR" record -o "$TMP/nbu.clrr" -- "$APPS/nbody" --size 384 --iters 2 --uniform \
    --device 1 --quiet || fail "recording nbody --uniform"
POCL_DEVICES="pthread pthread" "$CLRR" optimize "$TMP/nbu.clrr" -o "$TMP/nbu.plan" --passes none --split cpu0:1,cpu1:1 \
    >/dev/null || fail "optimize nbody --uniform"
POCL_DEVICES="pthread pthread" "$CLRR" replay --json "$TMP/nbu.clrr" --plan "$TMP/nbu.plan" >"$TMP/nbu.json" ||
    fail "nbody --uniform split does not replay verified: $(head -c 2000 "$TMP/nbu.json")"
[ "$(j "$TMP/nbu.json" "(d['ok'], d['mismatches'], d['plan']['split'])")" = "(True, 0, 2)" ] ||
    fail "nbody --uniform: $(j "$TMP/nbu.json" "d['plan']")"

# a launch of more than 65536 work-groups (bigblob: 393219 work-items, the
# local size left to the driver) still gets models, so its proportions adapt
POCL_DEVICES="pthread pthread" "$CLRR" record -o "$TMP/bb.clrr" -- "$B/tests/progs/bigblob" --quiet ||
    fail "recording bigblob"
POCL_DEVICES="pthread pthread" "$CLRR" optimize "$TMP/bb.clrr" -o "$TMP/bb.plan" --passes none \
    --split cpu0:1,cpu1:1 >/dev/null || fail "optimize bigblob"
[ "$(python3 -c 'import json, sys; print(bool(json.load(open(sys.argv[1]))["splits"][0]["models"]))' \
    "$TMP/bb.plan")" = True ] || fail "bigblob's split of 393219 work-groups has no models"
POCL_DEVICES="pthread pthread" "$CLRR" replay --json "$TMP/bb.clrr" --plan "$TMP/bb.plan" >"$TMP/bb.json" ||
    fail "bigblob split does not replay verified: $(head -c 2000 "$TMP/bb.json")"
[ "$(j "$TMP/bb.json" "(d['ok'], d['mismatches'], d['plan']['split'], d['plan']['split_adapted'])")" = \
    "(True, 0, 2, 1)" ] || fail "bigblob adaptive: $(j "$TMP/bb.json" "d['plan']")"

# the test can fail: a helper part that does not bring back 4 of its bytes,
# with the plan's proportions (--split-fixed: the parts' regions) and with
# measured ones (the models)
python3 - "$TMP/vecadd-basic-pthread-1_1-0_3.plan" "$TMP/short.plan" "$TMP/short-model.plan" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["splits"][0]
assert s["models"], "vecadd's split has no models"
s["parts"][1]["regions"][2]["write"][1] -= 4
json.dump(d, open(sys.argv[2], "w"))
d = json.load(open(sys.argv[1]))
d["splits"][0]["models"][2]["write"][0] += 4
json.dump(d, open(sys.argv[3], "w"))
PY
for v in "short.plan --split-fixed" "short-model.plan"; do
    POCL_DEVICES="basic pthread" "$CLRR" replay --json "$TMP/vecadd-basic-pthread.clrr" --plan "$TMP"/$v \
        >"$TMP/short.json" 2>"$TMP/short.err" && fail "a plan that loses bytes replays as verified ($v)"
    [ "$(j "$TMP/short.json" "d['mismatches'] > 0")" = True ] || fail "no mismatch for $v: $(cat "$TMP/short.err")"
done

# aes, 8 launches over the same input: when the adapted proportions move,
# a mirror that holds part of the new range gets only the bytes on either
# side (read from the queue's device); verified, so a piece missed or
# misplaced gives a mismatch
POCL_DEVICES="basic pthread" "$CLRR" record -o "$TMP/aes8.clrr" -- "$APPS/aes" --size 65536 --iters 8 --device 1 --quiet ||
    fail "recording aes"
POCL_DEVICES="basic pthread" "$CLRR" optimize "$TMP/aes8.clrr" -o "$TMP/aes8.plan" --passes none --split 1:1,0:1 >/dev/null ||
    fail "optimize aes"
POCL_DEVICES="basic pthread" "$CLRR" replay --json "$TMP/aes8.clrr" --plan "$TMP/aes8.plan" >"$TMP/aes8.json" ||
    fail "aes adaptive: $(head -c 1500 "$TMP/aes8.json")"
[ "$(j "$TMP/aes8.json" "(d['ok'], d['mismatches'], d['plan']['split_adapted'] >= 2, d['plan']['split_resident'] > 0, len(d['plan']['split_launch_ns']) == d['plan']['split'], min(d['plan']['split_launch_ns']) > 0)")" = \
  "(True, 0, True, True, True, True)" ] || fail "aes adaptive: $(j "$TMP/aes8.json" "d['plan']")"

# a device that is not here: the launches run whole, verified
POCL_DEVICES="pthread" "$CLRR" replay --json "$TMP/vecadd-basic-pthread.clrr" --plan \
    "$TMP/vecadd-basic-pthread-1_1-0_3.plan" >"$TMP/gone.json" 2>/dev/null || true
POCL_DEVICES="pthread" "$CLRR" replay "$TMP/vecadd-basic-pthread.clrr" --plan "$TMP/vecadd-basic-pthread-1_1-0_3.plan" \
    >"$TMP/gone.txt" 2>&1 || fail "a missing device: $(cat "$TMP/gone.txt")"
grep -q "split launches ran whole: vecadd: 1: there is one device here" "$TMP/gone.txt" || fail "missing device: $(cat "$TMP/gone.txt")"

# --split-kernel: only that kernel
POCL_DEVICES="basic pthread" "$CLRR" optimize "$TMP/sobel-basic-pthread.clrr" -o "$TMP/gx.plan" --passes none \
    --split 1,0 --split-kernel sobel_gx >/dev/null || fail "--split-kernel"
[ "$(j "$TMP/gx.plan" "sorted({s['kernel'] for s in d['splits']})")" = "['sobel_gx']" ] || fail "--split-kernel split others"

# bad lists: one line, exit 2
for bad in "" "0:0" "0:-1" "0," ":2" "0:1e99"; do
    "$CLRR" optimize "$TMP/vecadd-basic-pthread.clrr" -o "$TMP/bad.plan" --split "$bad" 2>"$TMP/err"; rc=$?
    [ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "--split '$bad': exit $rc: $(cat "$TMP/err")"
done
"$CLRR" optimize "$TMP/vecadd-basic-pthread.clrr" -o "$TMP/bad.plan" --split-kernel vecadd 2>/dev/null
[ $? = 2 ] || fail "--split-kernel without --split"

# broken split sections: refused with one line naming where
corrupt() {
    python3 - "$TMP/vecadd-basic-pthread-1_1-0_3.plan" "$TMP/c.plan" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["splits"][0]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
    POCL_DEVICES="basic pthread" "$CLRR" replay "$TMP/vecadd-basic-pthread.clrr" --plan "$TMP/c.plan" 2>"$TMP/err" >/dev/null &&
        fail "plan with $1 accepted"
    grep -q "$2" "$TMP/err" || fail "plan with $1: $(cat "$TMP/err")"
}
corrupt "s['parts'][1]['regions'][2]['write'] = [0, 8]" "parts 0 and 1 write overlapping bytes"
corrupt "s['parts'][1]['groups'][1] -= 1" "do not cover every work-group"
corrupt "s['parts'][0]['groups'] = [1, 2]" "cover the work-groups"
corrupt "s['parts'][0]['regions'][3] = {'read': None, 'write': None}" "not mem"
corrupt "s['merge'][2] = 'none'" "whose merge is none"
corrupt "s['dim'] = 3" "dim: 0, 1 or 2"
corrupt "s['parts'] = []" "parts: at least one"
corrupt "d['transformations'][0]['split'] = 9" "no split 9"
corrupt "d['version'] = '1.3'" "must be null before 1.4"
corrupt "s['parts'][0]['regions'][0]['read'] = [5, 5]" "0 <= LO < HI"
corrupt "s['models'][2]['write'] = [0, 4, 8, 4]" "never overlap"
corrupt "s['models'][0]['read'] = [0, -4, 0, 4]" "B and D not negative"
corrupt "s['models'][3] = {'read': None, 'write': None}" "not mem"
echo "ok: every workload split over PoCL's unequal and equal pairs, awkward splits, diff merge, resident data; bad plans refused"
