#!/usr/bin/env bash
# Runs end-to-end test scripts. Usage: run.sh BUILD_DIR SCRIPT...
# Each script gets BUILD_DIR as $1 and exits 0 (pass), 77 (skip) or other (fail).
# Prints one closing line "e2e: N passed, N failed, N skipped".
b=$1; shift
pass=0; fail=0; skip=0; failed=()
for s in "$@"; do
    start=$(date +%s%N)
    out=$(bash "$s" "$b" 2>&1); rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 )); dt="$((ms/1000)).$(( (ms%1000)/100 ))"
    case $rc in
        0) pass=$((pass+1)); echo "PASS $s (${dt}s)";;
        77) skip=$((skip+1)); echo "SKIP $s: $(echo "$out" | tail -1)";;
        *) fail=$((fail+1)); failed+=("$s"); echo "FAIL $s (rc=$rc)"; echo "$out" | tail -40 | sed 's/^/    /';;
    esac
done
echo "e2e: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
