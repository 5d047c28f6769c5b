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
# python3: Debian's (/usr/bin/python3: the one whose modules the Makefile
# installs, numpy, jsonschema, pyopencl), not a version manager's shim
# ahead of it in PATH (pyenv's costs 0.15 s a start on the 2-core VM)
PY3=python3; [ -x /usr/bin/python3 ] && PY3=/usr/bin/python3
python3() { "$PY3" "$@"; }
# j FILE EXPR: prints the Python expression EXPR, d being the JSON document
# in FILE (as `print(EXPR)` would); exit 1, the error on stderr, when EXPR
# fails. One python3 (jserve.py, started at the first call) answers every
# call of the script through two FIFOs: a python3 start costs 0.2 s of CPU
# on the 2-core VM, and the scripts ask hundreds of such questions.
j() {
    local out rc pid
    {
        flock 9
        pid=$(cat "$TMP/.j.pid" 2>/dev/null)
        if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$TMP/.j.req" "$TMP/.j.ans"
            mkfifo "$TMP/.j.req" "$TMP/.j.ans" || return 1
            "$PY3" "$(dirname "${BASH_SOURCE[0]}")/jserve.py" "$TMP/.j.req" "$TMP/.j.ans" $$ \
                </dev/null >/dev/null 2>"$TMP/.j.log" 9>&- &
            echo $! >"$TMP/.j.pid"
        fi
        if [[ $1 == /* ]]; then printf '%s\0%s' "$1" "$2"; else printf '%s\0%s' "$PWD/$1" "$2"; fi >"$TMP/.j.req"
        out=$(cat "$TMP/.j.ans"; echo .)
    } 9>"$TMP/.j.lock"
    out=${out%.}; rc=${out%%$'\n'*}; out=${out#*$'\n'}
    if [ "$rc" = 0 ]; then printf '%s' "$out"; else printf '%s' "$out" >&2; return 1; fi
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
