# tests/suites/: third-party test suites (piglit's OpenCL tests, pyopencl's
# own tests) run with and without `clrr record` (tests/suites/README.md).
# CI runs a fixed subset of each through tests/e2e/suite_piglit.sh and
# tests/e2e/suite_pyopencl.sh; with CLRR_LONG=1 the same scripts run every
# test.
# LONG_E2E: scripts that `make test-long` runs in full.
LONG_E2E := tests/e2e/suite_piglit.sh tests/e2e/suite_pyopencl.sh
