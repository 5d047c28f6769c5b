#!/usr/bin/env bash
# cli_diff.sh BUILD_DIR — `clrr diff` on recordings of tests/progs/diverge:
# two runs of the same variant are the same (exit 0, "same:"); a planted
# change in the second kernel is found at the first read-back after its
# launch, which names that kernel (exit 1, also in --json and with --max); a
# float tolerance absorbs a tiny change that the exact comparison reports;
# cut, corrupt and missing traces give one error line and exit 3; usage
# errors exit 2.
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
P=$B/tests/progs/diverge
need "$P"
CLRR=$(realpath "$CLRR"); P=$(realpath "$P")
# clrr itself must not hide a sanitizer report behind exit 1 or 3.
export ASAN_OPTIONS="$ASAN_OPTIONS:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
PY=/usr/bin/python3
cd "$TMP" || exit 1

rec() {
    local out=$1; shift
    "$CLRR" record -o "$out" -- "$P" --quiet "$@" >rec.out 2>rec.err ||
        fail "clrr record -- diverge $*: $(tail -3 rec.err)"
    [ ! -s rec.out ] || fail "diverge --quiet printed: $(head -3 rec.out)"
}
# d ARGS...: runs clrr diff; rc, stdout in out, stderr in err; never a crash.
d() {
    "$CLRR" diff "$@" >out 2>err
    rc=$?
    [ $rc -lt 80 ] || fail "clrr diff $*: exit $rc (crash or sanitizer): $(tail -20 err)"
}
# error_exit WANT ARGS...: exit WANT, nothing on stdout, one line on stderr.
error_exit() {
    local want=$1; shift
    d "$@"
    [ $rc -eq "$want" ] || fail "clrr diff $*: exit $rc, expected $want; stderr: $(cat err); stdout: $(head -5 out)"
    [ ! -s out ] || fail "clrr diff $*: wrote to stdout: $(head -3 out)"
    [ "$(wc -l <err)" -eq 1 ] || fail "clrr diff $*: expected one stderr line, got: $(cat err)"
    grep -q '^clrr diff: ' err || fail "clrr diff $*: stderr: $(cat err)"
}

rec a.clrr
rec b.clrr
rec v1.clrr --variant 1
rec v2.clrr --variant 2

# --- the same program twice
d a.clrr b.clrr
[ $rc -eq 0 ] || fail "same variant: exit $rc: $(cat out err)"
[ "$(wc -l <out)" -eq 1 ] && grep -q '^same: [0-9]* calls, [1-9][0-9]* read-backs\? compared' out ||
    fail "same variant: expected one 'same:' line: $(cat out)"
[ ! -s err ] || fail "same variant: stderr: $(cat err)"
d --json a.clrr b.clrr
[ $rc -eq 0 ] || fail "same variant --json: exit $rc"
$PY -c 'import json,sys; d=json.load(sys.stdin); assert d["same"] is True and d["differences"] == [], d' <out ||
    fail "same variant --json: $(head -c 400 out)"

# --- the planted divergence: where it must be found, from the trace itself
"$CLRR" dump --json a.clrr >a.json || fail "clrr dump --json a.clrr"
read -r want launch <<<"$($PY - <<'EOF'
import json
calls = [c for c in map(json.loads, open("a.json")) if c["type"] == "call"]
calls.sort(key=lambda c: c["seq"])
scale = [c["ret"] for c in calls if c["fn"] == "clCreateKernel" and c["args"]["kernel_name"] == "scale"][0]
launch = [c["seq"] for c in calls if c["fn"] == "clEnqueueNDRangeKernel" and c["args"]["kernel"] == scale][0]
read = [c["seq"] for c in calls if c["fn"].startswith("clEnqueueRead") and c["seq"] > launch][0]
print(read, launch)
EOF
)"
[ -n "$want" ] && [ -n "$launch" ] || fail "could not find the read after the scale kernel in a.clrr"

d a.clrr v1.clrr
[ $rc -eq 1 ] || fail "variant 1: exit $rc, expected 1: $(cat out err)"
grep -q "^first difference at call #$want clEnqueueReadBuffer (A #$want, B #$want): ptr differs" out ||
    fail "variant 1: the first difference is not the read #$want: $(cat out)"
grep -q "last written by kernel \"scale\" (#$launch)" out ||
    fail "variant 1: the scale kernel (#$launch) is not named: $(cat out)"
grep -q '^comparing A a.clrr (.*) with B v1.clrr (.*)$' out || fail "variant 1: no header line: $(head -3 out)"
grep -q "^> #$want clEnqueueReadBuffer(" out || fail "variant 1: the divergent call is not shown: $(cat out)"
[ "$(grep -c '  (both)$' out)" -eq 3 ] || fail "variant 1: expected 3 context calls: $(cat out)"
grep -q '^note: program code differs .*clCreateProgramWithSource' out ||
    fail "variant 1: the changed source is not noted: $(cat out)"
[ ! -s err ] || fail "variant 1: stderr: $(cat err)"

d --json a.clrr v1.clrr
[ $rc -eq 1 ] || fail "variant 1 --json: exit $rc"
WANT=$want LAUNCH=$launch $PY -c '
import json, os, sys
d = json.load(sys.stdin)
x = d["differences"][0]
assert d["same"] is False, d
assert x["kind"] == "data" and x["call"] == int(os.environ["WANT"]), x
assert x["fn_a"] == "clEnqueueReadBuffer" and x["what"] == "ptr" and x["output"] is True, x
assert "\"scale\" (#%s)" % os.environ["LAUNCH"] in x["writers"], x
assert 0 < x["differ"] < x["elements"] and x["size_a"] == x["size_b"] == 4000, x
assert len(x["context"]) == 3 and d["a"]["device"] and d["b"]["device"], d
' <out || fail "variant 1 --json: $(head -c 600 out)"

d --max 5 a.clrr v1.clrr
[ $rc -eq 1 ] || fail "variant 1 --max 5: exit $rc"
grep -q "^first difference at call #$want " out || fail "variant 1 --max 5: $(cat out)"
d v1.clrr a.clrr   # either order
[ $rc -eq 1 ] && grep -q "^first difference at call #$want " out || fail "variant 1 reversed: $(cat out)"

# --- tolerance: variant 2 is 1e-6 relative away
d a.clrr v2.clrr
[ $rc -eq 1 ] || fail "variant 2, exact: exit $rc, expected 1: $(cat out)"
d --tolerance rel=1e-5 a.clrr v2.clrr
[ $rc -eq 0 ] && grep -q '^same: ' out || fail "variant 2, rel=1e-5: exit $rc: $(cat out err)"
d --tolerance ulp=64 a.clrr v2.clrr
[ $rc -eq 0 ] || fail "variant 2, ulp=64: exit $rc: $(cat out err)"
d --tolerance abs=1e-9 a.clrr v2.clrr
[ $rc -eq 1 ] && grep -q "at call #$want .* f32 elements" out || fail "variant 2, abs=1e-9: exit $rc: $(cat out)"
d --tolerance rel=1e-5 a.clrr v1.clrr
[ $rc -eq 1 ] || fail "variant 1 with rel=1e-5: exit $rc, expected 1"

# --- traces that cannot be read: one line, exit 3
head -c 100 a.clrr >cut100.clrr
error_exit 3 a.clrr cut100.clrr
error_exit 3 cut100.clrr a.clrr
size=$(stat -c %s a.clrr)
head -c $((size - 1)) a.clrr >cut1.clrr
d a.clrr cut1.clrr
[ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "a trace without its last byte: exit $rc: $(cat err)"
error_exit 3 a.clrr /nonexistent/x.clrr
error_exit 3 "$TMP" a.clrr
head -c 4096 /dev/urandom >random.clrr
error_exit 3 a.clrr random.clrr
RANDOM=7
for i in 1 2 3 4 5 6 7 8; do
    cp a.clrr bad.clrr
    for _ in 1 2 3; do
        off=$(( (RANDOM * 32768 + RANDOM) % size ))
        [ "$off" -ge 8 ] || off=8
        printf "\\x$(printf %02x $((RANDOM % 256)))" | dd of=bad.clrr bs=1 seek="$off" conv=notrunc status=none
    done
    d a.clrr bad.clrr
    case $rc in
        0|1) ;;
        3) [ "$(wc -l <err)" -eq 1 ] || fail "corrupted trace $i: expected one stderr line: $(cat err)";;
        *) fail "corrupted trace $i: exit $rc: $(cat err)";;
    esac
done

# --- usage errors: exit 2, one line
error_exit 2
error_exit 2 a.clrr
error_exit 2 a.clrr b.clrr c.clrr
error_exit 2 --tolerance foo=1 a.clrr b.clrr
error_exit 2 --tolerance rel=-1 a.clrr b.clrr
error_exit 2 --tolerance abs=x a.clrr b.clrr
error_exit 2 --max 0 a.clrr b.clrr
error_exit 2 --max x a.clrr b.clrr
error_exit 2 --no-such-option a.clrr b.clrr
error_exit 2 a.clrr b.clrr --tolerance
d --help
[ $rc -eq 0 ] && grep -q '^Usage: clrr diff' out && grep -q 'Exit status: 0 same, 1 different, 2 usage error, 3' out ||
    fail "clrr diff --help: exit $rc: $(head -3 out)"
echo "ok: same, planted divergence at #$want (scale #$launch), tolerance, bad traces, usage"
