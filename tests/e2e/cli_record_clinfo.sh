#!/usr/bin/env bash
# cli_record_clinfo.sh BUILD_DIR — records Debian's clinfo, which queries
# every platform and device property: its output must be byte-identical with
# and without `clrr record` (layer and --preload), and the trace must hold
# one clGetDeviceInfo call per query, the same number in every recording.
set -u
B=${1:?usage: cli_record_clinfo.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
CLRR=$B/bin/clrr
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CLRR" ] || fail "$CLRR is not built"
[ -f "$B/lib/libclrr.so" ] || { echo "skip: $B/lib/libclrr.so is not built"; exit 77; }
CLINFO=$(command -v clinfo) || { echo "skip: clinfo is not installed"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
unset OPENCL_LAYERS LD_PRELOAD
# Programs we did not build (sh, clinfo, python3) get the ASan runtime
# preloaded through `env` when the layer is an ASan build (CLRR_SAN=1): the
# layer needs it first, and only the recorded program may get it (clrr has
# its own). Preload mode cannot load the ASan layer into them at all.
FOREIGN=()
if [ "${CLRR_SAN:-0}" = 1 ]; then
    rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
    [ -f "$rt" ] || { echo "skip: no shared ASan runtime for programs we did not build"; exit 77; }
    FOREIGN=(env "LD_PRELOAD=$rt")
fi
cd "$T" || exit 1

"${FOREIGN[@]}" "$CLINFO" >plain.out 2>plain.err
plain_rc=$?
grep -q "Number of devices" plain.out || { echo "skip: clinfo finds no OpenCL device"; exit 77; }

# record NAME [record options]: records clinfo into NAME.clrr, compares its
# output with the plain run, dumps the trace into NAME.dump.
record() {
    local name=$1
    shift
    "$CLRR" record "$@" -o "$name.clrr" -- "${FOREIGN[@]}" "$CLINFO" >"$name.out" 2>"$name.err"
    local rc=$?
    [ $rc -eq $plain_rc ] || fail "$name: clrr record -- clinfo: exit $rc, clinfo alone $plain_rc: $(tail -5 "$name.err")"
    cmp -s plain.out "$name.out" ||
        fail "$name: clinfo's stdout differs under clrr record: $(diff plain.out "$name.out" | head -20)"
    cmp -s plain.err "$name.err" ||
        fail "$name: clinfo's stderr differs under clrr record: $(diff plain.err "$name.err" | head -20)"
    [ -s "$name.clrr" ] || fail "$name: no trace written"
    "$CLRR" dump "$name.clrr" >"$name.dump" 2>dump.err || fail "$name: clrr dump: $(cat dump.err)"
    "$CLRR" info --json "$name.clrr" >"$name.info" 2>info.err || fail "$name: clrr info: $(cat info.err)"
}
# queries FILE: the number of clGetDeviceInfo calls in a dump.
queries() { grep -c '^#[0-9]* \[t[0-9]*\] clGetDeviceInfo(' "$1"; }
# calls FILE: the function name of every call, in order.
calls() { sed -n 's/^#[0-9]* \[t[0-9]*\] \([A-Za-z0-9_]*\)(.*/\1/p' "$1"; }

record one
record two
grep -q '^#[0-9]* \[t[0-9]*\] clGetPlatformIDs(' one.dump || fail "the dump holds no clGetPlatformIDs call"
grep -q '^#[0-9]* \[t[0-9]*\] clGetPlatformInfo(' one.dump || fail "the dump holds no clGetPlatformInfo call"
n1=$(queries one.dump)
n2=$(queries two.dump)
[ "$n1" -gt 100 ] || fail "only $n1 clGetDeviceInfo calls recorded (clinfo makes hundreds)"
[ "$n1" -eq "$n2" ] || fail "two recordings of clinfo hold $n1 and $n2 clGetDeviceInfo calls"
calls one.dump >one.calls
calls two.dump >two.calls
cmp -s one.calls two.calls || fail "two recordings of clinfo differ in their calls: $(diff one.calls two.calls | head)"
grep -q 'param_name=CL_DEVICE_NAME' one.dump || fail "no clGetDeviceInfo(param_name=CL_DEVICE_NAME) in the dump"
/usr/bin/python3 - one.info one.calls <<'EOF' || fail "clrr info disagrees with the dump"
import json, sys
info = json.load(open(sys.argv[1]))
n = sum(1 for _ in open(sys.argv[2]))
assert info["calls"] == n, (info["calls"], n)
assert info["incomplete_calls"] == 0 and not info["truncated"], info
EOF

if [ ${#FOREIGN[@]} -gt 0 ]; then
    echo "ok: clinfo output identical under clrr record, $n1 device queries (preload mode not testable with an ASan layer)"
    exit 0
fi
record pre --preload
np=$(queries pre.dump)
[ "$np" -eq "$n1" ] || fail "--preload recorded $np clGetDeviceInfo calls, the layer $n1"
echo "ok: clinfo output identical under clrr record (layer and preload), $n1 device queries"
