# tests/fuzz/: libFuzzer targets for every parser of untrusted input.
# FUZZ_BINS: each target built as a plain program that runs its corpus
# (make test-unit runs them); `make fuzz FUZZ_SECONDS=N` runs each target
# under libFuzzer for N seconds.
FUZZ_BINS :=
