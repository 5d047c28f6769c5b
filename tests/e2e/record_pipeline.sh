#!/usr/bin/env bash
# record_pipeline.sh BUILD_DIR — a large blocking clEnqueueReadBuffer is
# issued in pieces whose capture runs while the driver reads the next
# (recorder/rec_data.c rec_read_pipe; the writer's tf_writer_blob_open/
# avail/join), or in one call with CLRR_REC_PIPELINE_READS=0.
# tests/progs/pipe.c on PoCL, kernel-written pseudo-random data, each read
# checked by the program as soon as it returns: "main" (16 MiB; the last
# 9 MiB + 7 bytes; exactly 8 MiB; 8 MiB - 1; 72 MiB; 16 MiB again; one with
# an event; one on an out-of-order queue) and "threads" (a wait list on a
# user event another thread sets 150 ms later; two threads reading at
# once). Both recorded with the pipeline on and off: the program's output
# is what it prints unrecorded, each trace replays verified, CLRR_REC_COUNTS
# says how many reads went in pieces (main 5, threads 3; none when off);
# for main, `clrr diff` finds the two recordings the same and `clrr dump`
# prints the same calls and blobs (times and addresses aside), and a
# recording of other data differs (the comparison can fail). On the stub
# driver ("host": two reads of a buffer the host wrote), a piece the driver
# refuses (CLRR_STUB_REFUSE_NB_READ): the first one (the read goes the plain
# way: one pipelined read, not two), a later one (the rest is read at once:
# still two); the program's output, the verified replay and the dump are
# the same as without a refusal.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_REC_OVERLAP CLRR_REC_PIPELINE_READS CLRR_REC_COUNTS
PROG=$B/tests/progs/pipe
need "$PROG"

for m in main threads; do
    "$PROG" 7 $m >"$TMP/plain.$m.out" 2>&1 || fail "pipe $m unrecorded: $(cat "$TMP/plain.$m.out")"
    grep -q "^pipe: device .* ok$" "$TMP/plain.$m.out" || fail "pipe $m: $(cat "$TMP/plain.$m.out")"
done
grep -qi "stub" "$TMP/plain.main.out" && fail "ran on the stub driver: $(tail -1 "$TMP/plain.main.out")"

rec() {   # NAME SEED MODE PIPELINED [ENV=VALUE]
    env CLRR_REC_COUNTS="$TMP/$1.counts" ${5:-} "$CLRR" record -o "$TMP/$1.clrr" -- "$PROG" "$2" "$3" \
        >"$TMP/$1.out" 2>"$TMP/$1.err" || fail "record $1: $(cat "$TMP/$1.err" "$TMP/$1.out")"
    [ -s "$TMP/$1.err" ] && fail "record $1 printed: $(cat "$TMP/$1.err")"
    grep -q "^overlapped_captures [0-9]* pipelined_reads $4 staged_transfers 0$" "$TMP/$1.counts" ||
        fail "$1: not $4 pipelined reads: $(cat "$TMP/$1.counts" 2>&1)"
    "$CLRR" replay --json "$TMP/$1.clrr" >"$TMP/$1.json" 2>"$TMP/$1.rerr" ||
        fail "replay $1: $(cat "$TMP/$1.rerr" "$TMP/$1.json")"
    python3 - "$TMP/$1.json" <<'PY' || fail "replay $1: $(cat "$TMP/$1.json")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d['ok'] and d['mismatches'] == 0 and d['unverified'] == 0 and d['readbacks'] >= 2 else 1)
PY
    "$CLRR" dump "$TMP/$1.clrr" >"$TMP/$1.dump0" || fail "dump $1"
    grep -v "^   device time #" "$TMP/$1.dump0" | sed -E -e 's/  [0-9.]+(ns|us|ms|s)$//' -e 's/0x[0-9a-f]+/0xADDR/g' -e 's/ptr#[0-9]+/ptr#ADDR/g' >"$TMP/$1.dump"
}
rec off 7 main 0 CLRR_REC_PIPELINE_READS=0
rec on 7 main 5
rec toff 7 threads 0 CLRR_REC_PIPELINE_READS=0
rec ton 7 threads 3 CLRR_REC_PIPELINE_READS=1
for t in off on; do
    cmp -s "$TMP/plain.main.out" "$TMP/$t.out" || fail "$t: the program's output changed under clrr record: $(diff "$TMP/plain.main.out" "$TMP/$t.out")"
done
for t in toff ton; do
    cmp -s "$TMP/plain.threads.out" "$TMP/$t.out" || fail "$t: the program's output changed under clrr record: $(diff "$TMP/plain.threads.out" "$TMP/$t.out")"
done
"$CLRR" diff "$TMP/off.clrr" "$TMP/on.clrr" >"$TMP/d.out" 2>&1 || fail "clrr diff off on: $(cat "$TMP/d.out")"
cmp -s "$TMP/off.dump" "$TMP/on.dump" || fail "dump off/on: $(diff "$TMP/off.dump" "$TMP/on.dump" | head -5)"
n=$(grep -c "clEnqueueReadBuffer(.*ptr=<[0-9]* B blob" "$TMP/on.dump")
[ "$n" -ge 7 ] || fail "dump: read-back blobs missing ($n): $(grep clEnqueueReadBuffer "$TMP/on.dump" | head)"
grep -q "clEnqueueReadBuffer(.*ptr=<75497480 B blob" "$TMP/on.dump" || fail "dump: no 72 MiB read-back: $(grep clEnqueueReadBuffer "$TMP/on.dump" | head)"
CLRR_REC_COUNTS=$TMP/other.counts "$CLRR" record -o "$TMP/other.clrr" -- "$PROG" 8 main >"$TMP/other.out" 2>&1 || fail "record other: $(cat "$TMP/other.out")"
rc=0
"$CLRR" diff "$TMP/on.clrr" "$TMP/other.clrr" >"$TMP/d.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "first difference at call #[0-9]* clSetKernelArg .*arg_value differs" "$TMP/d.out" ||
    fail "diff of other data: exit $rc: $(cat "$TMP/d.out")"
STUBV=$B/stub-vendors
need "$STUBV/clrrstub.icd"
for r in none 1 2; do
    n=2; [ $r = 1 ] && n=1
    e=""; [ $r = none ] || e=CLRR_STUB_REFUSE_NB_READ=$r
    OCL_ICD_VENDORS=$(realpath "$STUBV") rec stub$r 7 host $n $e
    cmp -s "$TMP/stubnone.out" "$TMP/stub$r.out" || fail "stub $r: output: $(diff "$TMP/stubnone.out" "$TMP/stub$r.out")"
    cmp -s "$TMP/stubnone.dump" "$TMP/stub$r.dump" || fail "stub $r: dump: $(diff "$TMP/stubnone.dump" "$TMP/stub$r.dump" | head -5)"
done
grep -q "^pipe: device clrr stub device ok" "$TMP/stubnone.out" || fail "host mode on the stub: $(cat "$TMP/stubnone.out")"
echo "record_pipeline: ok ($(grep -c . "$TMP/on.dump") items, $(grep -c "pipelined_reads [1-9]" "$TMP"/*.counts) recordings pipelined, $(tail -1 "$TMP/on.out"))"
