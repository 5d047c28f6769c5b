# tests/suites/: third-party test suites (piglit's OpenCL tests, pyopencl's
# own tests) run with and without `clrr record`.
# LONG_E2E: scripts that `make test-long` runs in full.
LONG_E2E :=
