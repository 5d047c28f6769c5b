#!/usr/bin/env bash
# Runs end-to-end test scripts. Usage: run.sh BUILD_DIR SCRIPT...
# Each script gets BUILD_DIR as $1 and exits 0 (pass), 77 (skip) or other
# (fail); CLRR_SAN=1 runs them as the sanitizer flavour's. The scripts run in
# parallel through tests/run.sh (CLRR_TEST_JOBS sets how many at a time),
# which prints the closing line "e2e: N passed, N failed, N skipped".
b=${1:?usage: run.sh BUILD_DIR SCRIPT...}; shift
jobs=()
for s in "$@"; do jobs+=("$b:$s$([ "${CLRR_SAN:-0}" = 1 ] && echo :san)"); done
exec bash "$(dirname "$0")/../run.sh" -t e2e "${jobs[@]}"
