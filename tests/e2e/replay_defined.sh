#!/usr/bin/env bash
# replay_defined.sh BUILD_DIR — the verifier compares only defined bytes
# (issue 33, item 3; docs/replay.md, "Undefined bytes"). Programs recorded
# on PoCL (tests/progs/undefined.c, usehost_pingpong.c):
# - a buffer read back that nothing wrote (PoCL hands out memory holding
#   what an earlier buffer left, which differs from run to run): verified,
#   every byte counted as undefined; --strict compares them;
# - a kernel that writes the first half of a buffer (the kernel analysis
#   bounds its write region): the other half is not compared;
# - float3 stores through a float3 pointer: the 4th float of each element
#   is padding, not compared; vstore3 (packed) leaves nothing undefined;
# - a host write of one half and a fill of a quarter: the last quarter;
# - a copy of a half-written buffer into a larger one: the destination's
#   defined bytes are the source's, moved; a write map of a quarter;
# - a coarse-grained SVM allocation half written by an SVM copy, read by
#   an SVM copy to the host and an SVM map (where the device has SVM);
# - replayed on the stub driver (zeroed buffers, kernels that compute
#   nothing): the unwritten read verifies by default and mismatches with
#   --strict; the half-written one mismatches in both (its defined bytes
#   differ: undefined bytes are skipped, not defined ones);
# - kernels ping-ponging over two USE_HOST_PTR buffers with non-blocking
#   launches (the torn host-pointer snapshots of the issue), recorded 3
#   times: every recording replays verified.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
PROG=$B/tests/progs/undefined
PP=$B/tests/progs/usehost_pingpong
STUBV=$B/stub-vendors
need "$PROG"; need "$PP"; need "$STUBV/clrrstub.icd"
PY=/usr/bin/python3
N=4096

# field FILE KEY: a member of the JSON object in FILE
field() { $PY -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# replay_json NAME WANT_RC [OPTIONS...]: replay $TMP/NAME.clrr into $TMP/NAME.json
replay_json() {
    local name=$1 want=$2 rc=0
    shift 2
    "$CLRR" replay --json "$TMP/$name.clrr" "$@" >"$TMP/$name.json" 2>"$TMP/$name.err" || rc=$?
    [ "$rc" = "$want" ] || fail "replay $name $*: exit $rc (want $want): $(cat "$TMP/$name.err") $(cat "$TMP/$name.json")"
}

for m in unwritten half float3 vstore3 host copy map svm; do
    "$CLRR" record -o "$TMP/$m.clrr" -- "$PROG" $m --n $N >"$TMP/$m.rec" 2>&1 ||
        fail "clrr record -- undefined $m: $(cat "$TMP/$m.rec")"
done

# on PoCL, by default: verified, the undefined bytes counted
expect_undef() {   # MODE BYTES
    replay_json "$1" 0
    [ "$(field "$TMP/$1.json" mismatches)" = 0 ] && [ "$(field "$TMP/$1.json" undefined_bytes)" = "$2" ] ||
        fail "$1: want 0 mismatches and $2 undefined bytes: $(cat "$TMP/$1.json")"
}
expect_undef unwritten $((N * 4))
expect_undef half $((N * 2))
expect_undef float3 $((N * 4))
expect_undef vstore3 0
expect_undef copy $((N * 8 - N * 2))
expect_undef map $((N * 3))
if grep -q "no SVM" "$TMP/svm.rec"; then echo "note: no coarse-grained SVM here: the SVM case is not shown"
else expect_undef svm $((N * 4)); fi
# --compare: two sessions' garbage differs as well; skipped between them too
"$CLRR" replay --compare 0 "$TMP/unwritten.clrr" >"$TMP/cmp.out" 2>&1 || fail "replay --compare 0: $(cat "$TMP/cmp.out")"
# the human summary says it (and --strict counts none: it compares them)
"$CLRR" replay "$TMP/host.clrr" >"$TMP/host.out" 2>&1 || fail "replay host: $(cat "$TMP/host.out")"
grep -q "^verified  1 read-backs, 0 mismatches; $N undefined bytes not compared (in 1 read-back; --strict" \
    "$TMP/host.out" || fail "no 'undefined bytes' line: $(cat "$TMP/host.out")"

# on the stub driver: new buffers are zeros, kernels compute nothing
stub() { OCL_ICD_VENDORS=$(realpath "$STUBV") "$@"; }
nonzero=$(sed -n 's/.*unwritten: \([0-9]*\) of .*/\1/p' "$TMP/unwritten.rec")
stub replay_json unwritten 0
[ "$(field "$TMP/unwritten.json" undefined_bytes)" = $((N * 4)) ] || fail "stub unwritten: $(cat "$TMP/unwritten.json")"
if [ "${nonzero:-0}" -gt 0 ]; then
    stub replay_json unwritten 1 --strict
    [ "$(field "$TMP/unwritten.json" mismatches)" = 1 ] && [ "$(field "$TMP/unwritten.json" undefined_bytes)" = 0 ] ||
        fail "stub --strict unwritten: $(cat "$TMP/unwritten.json")"
else
    echo "note: PoCL handed out zeroed memory ($(cat "$TMP/unwritten.rec")): --strict on the stub not shown"
fi
# defined bytes that differ still mismatch, undefined ones do not count
stub replay_json half 1
$PY - "$TMP/half.json" $N <<'EOF' || fail "stub half: $(cat "$TMP/half.json")"
import json, sys
d, n = json.load(open(sys.argv[1])), int(sys.argv[2])
m = d["mismatch_list"]
assert d["mismatches"] == 1 and d["undefined_bytes"] == n * 2, d
# i*3+1 in 4-byte ints: only the written half differs from zeros, at most its bytes
assert len(m) == 1 and m[0]["differ"] <= n * 2 and m[0]["first_offset"] == 0, m
EOF

# USE_HOST_PTR ping-pong: snapshots before launches are whole, not torn
for i in 1 2 3; do
    "$CLRR" record -o "$TMP/pp$i.clrr" -- "$PP" --quiet >"$TMP/pp$i.rec" 2>&1 ||
        fail "clrr record -- usehost_pingpong ($i): $(cat "$TMP/pp$i.rec")"
    replay_json pp$i 0
    [ "$(field "$TMP/pp$i.json" readbacks)" = 1 ] && [ "$(field "$TMP/pp$i.json" mismatches)" = 0 ] ||
        fail "usehost_pingpong recording $i: $(cat "$TMP/pp$i.json")"
done
echo "ok: undefined bytes of 5 read-backs skipped and counted (--strict compares them), defined ones compared; 3 USE_HOST_PTR ping-pong recordings verified"
