#!/usr/bin/env bash
# suite_piglit.sh BUILD_DIR — piglit's OpenCL tests (Debian's piglit, the
# `cl` profile: API tests, custom tests and cl-program-tester programs), each
# run once plainly and once under `clrr record`: every test's outcome
# (result and subtests, as piglit reads them) must be the same, and every
# trace must replay verified, except the tests tests/suites/piglit.known
# names as nondeterministic (with the reason).
# CI runs the fixed subset tests/suites/piglit-ci.list (49 tests, under
# CLRR_SAN=1 too); CLRR_LONG=1 (make test-long) runs all 710 tests.
# CLRR_SUITE_JOBS=N runs N tests at a time (default 1);
# CLRR_SUITE_RESULTS=FILE keeps one JSON line per test.
set -u
B=${1:?usage: suite_piglit.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
S=$(cd "$(dirname "$0")/../suites" && pwd)
[ -x "$B/bin/clrr" ] || { echo "FAIL: $B/bin/clrr is not built"; exit 1; }
[ -f "$B/lib/libclrr.so" ] || { echo "skip: $B/lib/libclrr.so is not built"; exit 77; }
command -v piglit >/dev/null || [ -d /usr/lib/x86_64-linux-gnu/piglit ] || { echo "skip: piglit is not installed"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
unset OPENCL_LAYERS LD_PRELOAD
if [ "${CLRR_LONG:-0}" = 1 ]; then
    subset=()
else
    subset=(--subset "$S/piglit-ci.list")
fi
exec /usr/bin/python3 "$S/suite_run.py" piglit --clrr "$B/bin/clrr" "${subset[@]}" --known "$S/piglit.known" \
    -j "${CLRR_SUITE_JOBS:-1}" ${CLRR_SUITE_RESULTS:+--results "$CLRR_SUITE_RESULTS"}
