# Shared helpers for end-to-end tests (sourced). $B is the build folder.
B=${1:?usage: test.sh BUILD_DIR}
CLRR=$B/bin/clrr
LAYER=$B/lib/libclrr.so
APPS=$B/apps
TMP=$(mktemp -d "${TMPDIR:-/tmp}/clrr-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The layer built with ASan runs inside programs that are not: preload the
# runtime for those (third-party clients), and never report their leaks.
export ASAN_OPTIONS=detect_leaks=0:${ASAN_OPTIONS:-}
# the cost database: never this machine's (clrr optimize reads it when it exists)
export CLRR_COSTS=$TMP/costs
# the record of verified plans (plan/PLAN.md, "Trust"): the test's own
export CLRR_VERIFIED=$TMP/verified
# generated kernels' binaries: the test's own (and with it no kept
# "did the plan measure a device here" answer: clrr run asks every time)
export CLRR_KERNEL_CACHE=$TMP/kernels
asan_rt() {
    [ "${CLRR_SAN:-0}" = 1 ] && clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null
}
# run_foreign CMD...: run a program we did not build (clinfo, python) so
# that an ASan layer can load into it.
run_foreign() {
    local rt; rt=$(asan_rt)
    if [ -n "$rt" ]; then LD_PRELOAD="$rt${LD_PRELOAD:+:$LD_PRELOAD}" "$@"; else "$@"; fi
}
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }
need() { [ -e "$1" ] || skip "missing $1"; }
# plan_refused PLAN TRACE NAME EDIT EXPECTED: PLAN edited by the python
# statement EDIT (on d, the plan's JSON) into $TMP/NAME.plan must make
# `clrr replay TRACE --plan` exit 3 with one line matching EXPECTED.
plan_refused() {
    python3 - "$1" "$TMP/$3.plan" "$4" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
    local rc=0
    "$CLRR" replay "$2" --plan "$TMP/$3.plan" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ $rc = 3 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q "$5" "$TMP/err" ||
        fail "$3: exit $rc: $(cat "$TMP/err")"
}
# Every workload at a size the split tests (split.sh, run_split.sh) take
# quickly: one "APP ARGS" per line, arguments joined by "_".
split_workloads() {
    cat <<'EOF'
vecadd --size=10000_--iters=3
sobel --size=128_--iters=2
geomatrix --size=64_--iters=2
exposure --size=96
jacobi --size=128_--iters=3
matmul --size=64
nbody --size=512_--iters=3
blackscholes --size=20000
ep --size=2048
aes --size=4096
spmv --size=4096
histogram --size=100000
overlap --size=16384
EOF
}
