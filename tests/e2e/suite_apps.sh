#!/usr/bin/env bash
# suite_apps.sh BUILD_DIR — third-party programs (tests/suites/apps.list:
# Debian clients and the public benchmark suites tests/suites/fetch.sh
# builds), natively and under `clrr record`: the same verdict, and every
# trace of each replays verified (tests/suites/README.md, "Applications").
# CI runs tests/suites/apps-ci.list; CLRR_LONG=1 every program. What is not
# installed or fetched is named and skipped (exit 77 when none is).
set -u
B=${1:?usage: suite_apps.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
S=$(cd "$(dirname "$0")/../suites" && pwd)
[ -x "$B/bin/clrr" ] || { echo "FAIL: $B/bin/clrr is not built"; exit 1; }
[ -f "$B/lib/libclrr.so" ] || { echo "skip: $B/lib/libclrr.so is not built"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
unset OPENCL_LAYERS LD_PRELOAD PYOPENCL_CTX
subset=(--subset "$S/apps-ci.list")
[ "${CLRR_LONG:-0}" = 1 ] && subset=()
exec /usr/bin/python3 "$S/suite_run.py" apps --clrr "$B/bin/clrr" "${subset[@]}" --known "$S/apps.known" \
    -j "${CLRR_SUITE_JOBS:-1}" ${CLRR_SUITE_RESULTS:+--results "$CLRR_SUITE_RESULTS"}
