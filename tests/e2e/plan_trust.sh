#!/usr/bin/env bash
# plan_trust.sh BUILD_DIR — plans from strangers (issue 34, item 2;
# plan/PLAN.md, "Trust"), on PoCL:
#  - `clrr optimize` here records its plan as verified: `clrr run --plan`
#    applies it; `clrr plan verify PLAN TRACE` verifies it again (exit 0);
#  - a plan mutated by someone else (a specialization constant that makes
#    the kernel index far out of its buffers, an endless loop in a
#    generated kernel, a fused kernel's body, a split's model or region):
#    `clrr run --plan` refuses it before the application runs (exit 1, one
#    line), the layer alone runs the application without it (one line),
#    and `clrr plan verify` rejects it with one line naming what differs
#    (exit 1), never recording it;
#  - a replay of the endless plan ends within its --timeout (exit 3);
#  - with --trust-plan, a split region outside its buffer is bounded: the
#    launch runs whole (split_fallback), the application's results right;
#  - the record is by the plan's bytes: a plan edited after verification is
#    not verified; one verified on another device does not run its kernels
#    here.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"; need "$APPS/nbody"; need "$APPS/sobel"; need "$APPS/vecadd"
[ -e "$B/lib/libclrr-rw.so" ] || skip "the rewriter (libclrr-rw.so) is not built"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE CLRR_TRUST_PLAN
T() { timeout 60 "$@"; }   # nothing here may hang
# mutate IN OUT PYTHON-EDIT-OF-d
mutate() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
# refused NAME TRACE EXPECTED APP ARGS...: $TMP/NAME.plan is refused by
# clrr run (the application does not run) and by clrr plan verify (one
# line matching EXPECTED), and the layer alone runs the application without it
refused() {
    local n=$1 t=$2 want=$3 rc=0
    shift 3
    T "$CLRR" run --plan "$TMP/$n.plan" -- "$@" >"$TMP/$n.out" 2>"$TMP/$n.err" || rc=$?
    [ $rc = 1 ] && [ ! -s "$TMP/$n.out" ] && [ "$(wc -l <"$TMP/$n.err")" = 1 ] &&
        grep -q "not verified here: run clrr plan verify" "$TMP/$n.err" || fail "$n: clrr run: exit $rc: $(cat "$TMP/$n.err" "$TMP/$n.out")"
    rc=0; T "$CLRR" plan verify "$TMP/$n.plan" "$t" >"$TMP/$n.vout" 2>"$TMP/$n.verr" || rc=$?
    [ $rc = 1 ] && [ "$(wc -l <"$TMP/$n.verr")" = 1 ] && grep -q "not verified: $want" "$TMP/$n.verr" ||
        fail "$n: clrr plan verify: exit $rc: $(cat "$TMP/$n.verr" "$TMP/$n.vout")"
    rc=0; CLRR_PLAN=$TMP/$n.plan OPENCL_LAYERS=$LAYER T "$@" >"$TMP/$n.out" 2>"$TMP/$n.err" || rc=$?
    [ $rc = 0 ] && grep -q ": ok" "$TMP/$n.out" && grep -q "^clrr: plan .* not verified here.*the application runs without it" "$TMP/$n.err" ||
        fail "$n: the layer alone: exit $rc: $(cat "$TMP/$n.err" "$TMP/$n.out")"
}

# --- a specialization (nbody): verified by optimize, and by verify
T "$CLRR" record -o "$TMP/nb.clrr" -- "$APPS/nbody" --size 1024 --iters 3 --quiet || fail "recording nbody"
T "$CLRR" optimize "$TMP/nb.clrr" -o "$TMP/nb.plan" >/dev/null || fail "optimize nbody"
[ "$(ls "$CLRR_VERIFIED" | wc -l)" = 1 ] || fail "optimize recorded no verified plan: $(ls -la "$CLRR_VERIFIED")"
T "$CLRR" run --plan "$TMP/nb.plan" --report "$TMP/nb.json" -- "$APPS/nbody" --size 1024 --iters 3 >"$TMP/nb.out" 2>&1 ||
    fail "run nbody: $(cat "$TMP/nb.out")"
[ "$(j "$TMP/nb.json" "(d['trusted'], d['untrusted'], d['specialized_launches'] > 0)")" = "(False, 0, True)" ] ||
    fail "nbody under its verified plan: $(j "$TMP/nb.json" d)"
T "$CLRR" plan verify "$TMP/nb.plan" "$TMP/nb.clrr" >"$TMP/v.out" 2>&1 || fail "verify nbody: $(cat "$TMP/v.out")"
grep -q "^verified  .*1 generated kernels and 0 splits as the optimizer makes them" "$TMP/v.out" || fail "verify: $(cat "$TMP/v.out")"

# n = 2^30: the kernel reads far out of its buffers
mutate "$TMP/nb.plan" "$TMP/oob.plan" "s = d['specializations'][0]; s['source'] = s['source'].replace('(uint)(1024u)', '(uint)(1073741824u)')"
cmp -s "$TMP/nb.plan" "$TMP/oob.plan" && fail "the mutation changed nothing"
refused oob "$TMP/nb.clrr" "specializations\[0\] (__clrr_spec_1): its source differs from the rewriter's at line" \
    "$APPS/nbody" --size 1024 --iters 3
# an endless loop in the generated kernel
mutate "$TMP/nb.plan" "$TMP/loop.plan" "s = d['specializations'][0]; s['source'] = s['source'].replace('const uint win_len = (uint)(128u);', 'const uint win_len = (uint)(128u); for (volatile uint k_ = 0; k_ < 1u; k_ += 0u) { }')"
cmp -s "$TMP/nb.plan" "$TMP/loop.plan" && fail "the loop mutation changed nothing"
refused loop "$TMP/nb.clrr" "specializations\[0\] (__clrr_spec_1): its source differs" "$APPS/nbody" --size 1024 --iters 3
# a replay of it ends in bounded time (the replay's budget)
rc=0; s0=$(date +%s)
T "$CLRR" replay "$TMP/nb.clrr" --plan "$TMP/loop.plan" --timeout 5 >/dev/null 2>"$TMP/loop.rerr" || rc=$?
[ $rc = 3 ] && [ $(( $(date +%s) - s0 )) -lt 30 ] && grep -q "time" "$TMP/loop.rerr" ||
    fail "a replay of the endless kernel: exit $rc: $(cat "$TMP/loop.rerr")"
# a constant the recording did not pass
mutate "$TMP/nb.plan" "$TMP/konst.plan" "d['specializations'][0]['constants'] = [[4, '00050000'] if c[0] == 4 else c for c in d['specializations'][0]['constants']]"
refused konst "$TMP/nb.clrr" "specializations\[0\] (__clrr_spec_1): its constant .* (argument 4) is not the recording's" \
    "$APPS/nbody" --size 1024 --iters 3
# kernel facts that hide a write
mutate "$TMP/nb.plan" "$TMP/facts.plan" "d['kernels'][0]['args'] = ['none' if a == 'write' else a for a in d['kernels'][0]['args']]"
refused facts "$TMP/nb.clrr" "kernels\[0\] (.*): its accesses differ from the kernel analysis'" "$APPS/nbody" --size 1024 --iters 3
# the trace must be the plan's
T "$CLRR" record -o "$TMP/va0.clrr" -- "$APPS/vecadd" --size 4096 --iters 2 --quiet || fail "recording vecadd"
rc=0; T "$CLRR" plan verify "$TMP/nb.plan" "$TMP/va0.clrr" 2>"$TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "made from a trace of another structure" "$TMP/err" || fail "another trace: exit $rc: $(cat "$TMP/err")"

# --- a fused kernel (sobel)
T "$CLRR" record -o "$TMP/s.clrr" -- "$APPS/sobel" --size 256 --iters 2 --quiet || fail "recording sobel"
T "$CLRR" optimize "$TMP/s.clrr" -o "$TMP/s.plan" >/dev/null || fail "optimize sobel"
[ "$(j "$TMP/s.plan" "len(d['fused_kernels']) > 0")" = True ] || fail "sobel: nothing fused"
mutate "$TMP/s.plan" "$TMP/fz.plan" "z = d['fused_kernels'][0]; i = z['source'].rindex('}'); z['source'] = z['source'][:i] + ' for (;;) { }\n' + z['source'][i:]"
refused fz "$TMP/s.clrr" "fused_kernels\[0\] (__clrr_fused_1): its source differs from the rewriter's at line" \
    "$APPS/sobel" --size 256 --iters 2
mutate "$TMP/s.plan" "$TMP/fp.plan" "z = d['fused_kernels'][0]; z['params'][0], z['params'][1] = z['params'][1], z['params'][0]"
refused fp "$TMP/s.clrr" "fused_kernels\[0\] (__clrr_fused_1): its parameters" "$APPS/sobel" --size 256 --iters 2
# edited after verification (a byte of white space): another plan
cp "$TMP/s.plan" "$TMP/ws.plan"; echo " " >>"$TMP/ws.plan"
rc=0; T "$CLRR" run --plan "$TMP/ws.plan" -- "$APPS/sobel" --size 256 --iters 2 >/dev/null 2>"$TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "not verified here" "$TMP/err" || fail "an edited plan: exit $rc: $(cat "$TMP/err")"
# ... which verify then verifies: run applies it
T "$CLRR" plan verify "$TMP/ws.plan" "$TMP/s.clrr" >/dev/null 2>"$TMP/err" || fail "verify ws: $(cat "$TMP/err")"
T "$CLRR" run --plan "$TMP/ws.plan" --report "$TMP/ws.json" -- "$APPS/sobel" --size 256 --iters 2 >"$TMP/ws.out" 2>&1 ||
    fail "run ws: $(cat "$TMP/ws.out")"
[ "$(j "$TMP/ws.json" "d['fused_launches'] > 0")" = True ] || fail "the verified plan fused nothing: $(j "$TMP/ws.json" d)"
# a record naming another device: the plan's kernels run as the application's
key=$(ls "$CLRR_VERIFIED" | head -1)
for k in $(ls "$CLRR_VERIFIED"); do
    sed -i 's/^device .*/device some other GPU/' "$CLRR_VERIFIED/$k"
done
T "$CLRR" run --plan "$TMP/ws.plan" --report "$TMP/od.json" -- "$APPS/sobel" --size 256 --iters 2 >"$TMP/od.out" 2>"$TMP/od.err" ||
    fail "run on another device: $(cat "$TMP/od.err")"
grep -q "^sobel: ok" "$TMP/od.out" && grep -q "the plan was verified on some other GPU, not on" "$TMP/od.err" ||
    fail "another device: $(cat "$TMP/od.out" "$TMP/od.err")"
[ "$(j "$TMP/od.json" "(d['fused_launches'], d['untrusted'] > 0)")" = "(0, True)" ] || fail "another device: $(j "$TMP/od.json" d)"
[ -n "$key" ] || fail "no record"

# --- a split (vecadd over PoCL's unequal pair)
export POCL_DEVICES="basic pthread"
T "$CLRR" record -o "$TMP/va.clrr" -- "$APPS/vecadd" --size 65536 --iters 2 --device 1 --quiet || fail "recording vecadd"
T "$CLRR" optimize "$TMP/va.clrr" -o "$TMP/va.plan" --passes none --split 1:1,0:1 >/dev/null || fail "optimize --split"
T "$CLRR" plan verify "$TMP/va.plan" "$TMP/va.clrr" >/dev/null 2>"$TMP/err" || fail "verify va: $(cat "$TMP/err")"
# the write model moved by 4 KiB: inside the buffer, but the wrong bytes come back
mutate "$TMP/va.plan" "$TMP/vm.plan" "m = d['splits'][0]['models'][2]['write']; m[0] += 4096; m[2] += 4096"
refused vm "$TMP/va.clrr" "splits\[0\] (__clrr_part_vecadd): its model of argument 2 differs from the analysis'" \
    "$APPS/vecadd" --size 65536 --iters 2 --device 1
# a part's write region past the end of its buffer
mutate "$TMP/va.plan" "$TMP/vr.plan" "d['splits'][0]['parts'][1]['regions'][2]['write'][1] += 65536"
refused vr "$TMP/va.clrr" "splits\[0\] (__clrr_part_vecadd): part 1's region of argument 2 differs from the analysis'" \
    "$APPS/vecadd" --size 65536 --iters 2 --device 1
# ... with --trust-plan: bounded, the launches run whole, the results right
T "$CLRR" run --trust-plan --split-fixed --plan "$TMP/vr.plan" --report "$TMP/vr.json" -- "$APPS/vecadd" --size 65536 \
    --iters 2 --device 1 >"$TMP/vr.out" 2>"$TMP/vr.err" || fail "vr --trust-plan: $(cat "$TMP/vr.err" "$TMP/vr.out")"
grep -q "^vecadd: ok" "$TMP/vr.out" || fail "vr --trust-plan: $(cat "$TMP/vr.out")"
[ "$(j "$TMP/vr.json" "(d['trusted'], d['split'], d['split_fallback'], 'not inside its buffer' in d['split_note'])")" = "(True, 0, 2, True)" ] ||
    fail "vr --trust-plan: $(j "$TMP/vr.json" d)"
# ... and so does a replay with it (verified)
T "$CLRR" replay --split-fixed "$TMP/va.clrr" --plan "$TMP/vr.plan" >"$TMP/vr.rout" 2>&1 || fail "replay vr: $(cat "$TMP/vr.rout")"
# two concatenated parts writing the same bytes, parts that do not cover
# the launch: the reader refuses them, --trust-plan or not
for e in "d['splits'][0]['parts'][1]['regions'][2]['write'][0] -= 4096" "d['splits'][0]['parts'][0]['groups'][1] -= 8"; do
    mutate "$TMP/va.plan" "$TMP/vo.plan" "$e"
    rc=0; T "$CLRR" run --trust-plan --plan "$TMP/vo.plan" -- "$APPS/vecadd" --size 65536 --iters 2 --device 1 \
        >"$TMP/vo.out" 2>"$TMP/vo.err" || rc=$?
    [ $rc = 1 ] && [ "$(wc -l <"$TMP/vo.err")" = 1 ] && grep -q "splits\[0\]" "$TMP/vo.err" ||
        fail "$e: exit $rc: $(cat "$TMP/vo.err" "$TMP/vo.out")"
done
# bad command lines
rc=0; "$CLRR" plan verify "$TMP/va.plan" 2>/dev/null || rc=$?; [ $rc = 2 ] || fail "verify without TRACE: exit $rc"
rc=0; "$CLRR" plan verify "$TMP/va.plan" "$TMP/va.clrr" --timeout x 2>/dev/null || rc=$?; [ $rc = 2 ] || fail "--timeout x: exit $rc"
rc=0; "$CLRR" plan verify "$TMP/nope.plan" "$TMP/va.clrr" 2>"$TMP/err" || rc=$?
[ $rc = 3 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "a missing plan: exit $rc: $(cat "$TMP/err")"
echo "ok: plans verified here run; mutated plans (specialization out of bounds, endless loops, fused body and parameters, kernel facts, split model and regions) are refused by clrr run and the layer and rejected by plan verify; --trust-plan keeps split regions bounded"
