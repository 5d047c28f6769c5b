#!/usr/bin/env bash
# record_overlap.sh BUILD_DIR — host memory a call reads is captured while
# the driver runs (recorder/rec_data.c rec_slot_fill_ov; the writer's
# tf_writer_blob_begin/join), or before the call with CLRR_REC_OVERLAP=0.
# tests/progs/overlap.c on PoCL: random data above the inline limit in
# non-blocking and blocking writes, a blob written twice, one of 40 MiB
# (more than one capture window), a rect, COPY_HOST_PTR and USE_HOST_PTR
# buffers, an image made from host memory and written, an SVM copy from
# host memory. Recorded both ways (and the overlap twice, another seed
# once): the program's output is what it prints unrecorded, each trace
# replays verified, `clrr diff` finds the two recordings the same and
# `clrr dump` prints the same calls and blobs (times, device timings and
# addresses aside); a recording
# of other data differs (the comparison can fail).
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_REC_OVERLAP
PROG=$B/tests/progs/overlap
need "$PROG"

"$PROG" 7 >"$TMP/plain.out" 2>&1 || fail "overlap unrecorded: $(cat "$TMP/plain.out")"
grep -q "^overlap: device .*checksum [0-9a-f]* ok$" "$TMP/plain.out" || fail "overlap: $(cat "$TMP/plain.out")"
grep -qi "stub" "$TMP/plain.out" && fail "ran on the stub driver: $(tail -1 "$TMP/plain.out")"

rec() {   # NAME SEED [ENV=VALUE]
    env ${3:-} "$CLRR" record -o "$TMP/$1.clrr" -- "$PROG" "$2" >"$TMP/$1.out" 2>"$TMP/$1.err" ||
        fail "record $1: $(cat "$TMP/$1.err" "$TMP/$1.out")"
    "$CLRR" replay --json "$TMP/$1.clrr" >"$TMP/$1.json" 2>"$TMP/$1.rerr" ||
        fail "replay $1: $(cat "$TMP/$1.rerr" "$TMP/$1.json")"
    python3 - "$TMP/$1.json" <<'PY' || fail "replay $1: $(cat "$TMP/$1.json")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d['ok'] and d['mismatches'] == 0 and d['unverified'] == 0 and d['readbacks'] >= 20
         and d['bytes_in'] > 80 << 20 else 1)
PY
    "$CLRR" dump "$TMP/$1.clrr" >"$TMP/$1.dump0" || fail "dump $1"
    grep -v "^   device time #" "$TMP/$1.dump0" | sed -E -e 's/  [0-9.]+(ns|us|ms|s)$//' -e 's/0x[0-9a-f]+/0xADDR/g' -e 's/ptr#[0-9]+/ptr#ADDR/g' >"$TMP/$1.dump"
}
rec off 7 CLRR_REC_OVERLAP=0
rec on 7
rec on2 7 CLRR_REC_OVERLAP=1
rec other 8
for t in off on on2; do
    cmp -s "$TMP/plain.out" "$TMP/$t.out" || fail "$t: the program's output changed under clrr record: $(diff "$TMP/plain.out" "$TMP/$t.out")"
done
for t in on on2; do
    "$CLRR" diff "$TMP/off.clrr" "$TMP/$t.clrr" >"$TMP/d.out" 2>&1 || fail "clrr diff off $t: $(cat "$TMP/d.out")"
    cmp -s "$TMP/off.dump" "$TMP/$t.dump" || fail "dump off/$t: $(diff "$TMP/off.dump" "$TMP/$t.dump" | head -5)"
done
grep -q "ptr=<6291456 B blob" "$TMP/on.dump" && grep -q "host_ptr=<3145728 B blob" "$TMP/on.dump" &&
    grep -q "clEnqueueWriteImage(.*ptr=<2457600 B blob" "$TMP/on.dump" || fail "dump: blobs missing: $(head -40 "$TMP/on.dump")"
rc=0
"$CLRR" diff "$TMP/on.clrr" "$TMP/other.clrr" >"$TMP/d.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "first difference at call #[0-9]* clEnqueueWriteBuffer .*ptr differs" "$TMP/d.out" ||
    fail "diff of other data: exit $rc: $(cat "$TMP/d.out")"
cmp -s "$TMP/on.dump" "$TMP/other.dump" && fail "dumps of other data are the same"
echo "record_overlap: ok ($(grep -c . "$TMP/on.dump") items, $(tail -1 "$TMP/on.out"))"
