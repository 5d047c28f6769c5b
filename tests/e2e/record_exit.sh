#!/usr/bin/env bash
# record_exit.sh BUILD_DIR — the application exits while other threads of
# it are inside OpenCL calls (tests/progs/exit_threads.c). The recorder
# closes its trace at exit without freeing the writer
# (tf_writer_close_shared): the late calls find it closed and return. 24
# recordings: each exits 0 with the program's output, prints no
# "recording stopped" line (a late call used to report the closed writer
# as an error, with an empty reason), no sanitizer report (in the SAN
# flavour a late call used freed memory), and its trace reads.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
PROG=$B/tests/progs/exit_threads
need "$PROG"
for i in $(seq 1 24); do
    rc=0
    timeout 60 "$CLRR" record -o "$TMP/t$i.clrr" -- "$PROG" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ $rc = 0 ] || fail "record ($i): exit $rc: $(head -c 2000 "$TMP/err")"
    grep -q "exit_threads: exiting" "$TMP/out" || fail "record ($i): no output"
    ! grep -q "recording stopped\|Sanitizer" "$TMP/err" || fail "record ($i): $(head -c 2000 "$TMP/err")"
    "$CLRR" info "$TMP/t$i.clrr" >"$TMP/info" 2>&1 || fail "info ($i): $(cat "$TMP/info")"
done
echo "record_exit: ok"
