#!/usr/bin/env bash
# record_killupload.sh BUILD_DIR — calls are never queued behind data
# (issue 34, item 4): tests/progs/bigupload makes a context, a queue and a
# 1 GiB buffer, then uploads 1 GiB of incompressible bytes; SIGKILL
# 0.3 s into that first clEnqueueWriteBuffer (with its capture about 1.5 s
# on the 2-core VM; 256 MiB took 0.1 s, done before the kill: the test
# fails when the program is gone before it), with a flush interval longer
# than the run (the periodic flush cannot save them), must leave the ENV
# record and every call made before the upload in the trace: the writer
# seals the open record chunk before it queues the pieces of a large blob
# (trace-format/tf_wblob.c). 5 kills; `clrr info` reads each trace and says
# it did not close; layer and preload.
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
P=$B/tests/progs/bigupload
need "$P"
unset OPENCL_LAYERS LD_PRELOAD CLRR_APP_DEVICE
for i in 1 2 3 4 5; do
    t=$TMP/k$i.clrr
    if [ $i = 5 ]; then mode=LD_PRELOAD; else mode=OPENCL_LAYERS; fi
    env $mode="$LAYER" CLRR_OUTPUT="$t" CLRR_FLUSH_MS=60000 "$P" 1024 2>"$TMP/k$i.err" >/dev/null &
    pid=$!
    n=0   # until it is in its clEnqueueWriteBuffer
    while ! grep -q "uploading" "$TMP/k$i.err" 2>/dev/null && [ $n -lt 3000 ]; do
        sleep 0.01; n=$((n + 1))
    done
    sleep 0.3
    kill -0 $pid 2>/dev/null || fail "kill $i: bigupload finished before the kill: $(cat "$TMP/k$i.err")"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ $n -lt 3000 ] || fail "kill $i: the upload never started: $(cat "$TMP/k$i.err")"
    out=$("$CLRR" info "$t" 2>&1) || fail "kill $i: clrr info: $out"
    echo "$out" | grep -q "^command    .*bigupload 1024" || fail "kill $i ($mode): no ENV record: $out"
    echo "$out" | grep -qE "^ +(TRUNCATED|INCOMPLETE): " || fail "kill $i: not said to be incomplete: $out"
    for f in clGetPlatformIDs clGetDeviceIDs clCreateContext clCreateCommandQueueWithProperties clCreateBuffer; do
        echo "$out" | grep -q "^ *1  $f\$" || fail "kill $i ($mode): $f (before the upload) missing: $out"
    done
    "$CLRR" dump "$t" >/dev/null || fail "kill $i: dump failed"
done
echo "ok: 5 kills during a 1 GiB first upload (layer and preload), every trace with its ENV record and the calls before the upload"
