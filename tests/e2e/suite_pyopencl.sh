#!/usr/bin/env bash
# suite_pyopencl.sh BUILD_DIR — pyopencl's own test suite (the test_*.py
# files Debian ships in python-pyopencl-doc), one pytest run per test node,
# once plainly and once under `clrr record` (PYOPENCL_NO_CACHE=1, so that
# both runs build their programs): every node's outcome must be the same,
# and every trace must replay verified, except the nodes
# tests/suites/pyopencl.known names as nondeterministic (with the reason).
# CI runs the fixed subset tests/suites/pyopencl-ci.list (pyopencl-san.list
# under CLRR_SAN=1); CLRR_LONG=1 (make test-long) runs every node.
# CLRR_SUITE_JOBS=N runs N nodes at a time (default 1);
# CLRR_SUITE_RESULTS=FILE keeps one JSON line per node.
set -u
B=${1:?usage: suite_pyopencl.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
S=$(cd "$(dirname "$0")/../suites" && pwd)
[ -x "$B/bin/clrr" ] || { echo "FAIL: $B/bin/clrr is not built"; exit 1; }
[ -f "$B/lib/libclrr.so" ] || { echo "skip: $B/lib/libclrr.so is not built"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
unset OPENCL_LAYERS LD_PRELOAD PYOPENCL_CTX PYOPENCL_TEST
if [ "${CLRR_LONG:-0}" = 1 ]; then
    subset=()
elif [ "${CLRR_SAN:-0}" = 1 ]; then
    subset=(--subset "$S/pyopencl-san.list")
else
    subset=(--subset "$S/pyopencl-ci.list")
fi
exec /usr/bin/python3 "$S/suite_run.py" pyopencl --clrr "$B/bin/clrr" "${subset[@]}" --known "$S/pyopencl.known" \
    -j "${CLRR_SUITE_JOBS:-1}" ${CLRR_SUITE_RESULTS:+--results "$CLRR_SUITE_RESULTS"}
