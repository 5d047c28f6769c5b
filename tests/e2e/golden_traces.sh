#!/usr/bin/env bash
# golden_traces.sh BUILD_DIR — every trace in traces/ (written by earlier
# builds, on PoCL and on an NVIDIA H200) is still read: `clrr info` and
# `clrr dump --json` succeed and every dumped line is JSON; traces without a
# device binary replay here with every read-back verified (within a float
# tolerance for GPU recordings).
. "$(dirname "$0")/lib.sh"
need "$CLRR"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
PY=/usr/bin/python3
DIR=$(dirname "$0")/../../traces
n=0
for t in "$DIR"/*.clrr; do
    name=$(basename "$t")
    "$CLRR" info "$t" >"$TMP/info" 2>"$TMP/err" || fail "clrr info $name: $(cat "$TMP/err")"
    grep -q '^trace .*format [12]\.' "$TMP/info" || fail "clrr info $name: $(head -3 "$TMP/info")"
    "$CLRR" dump --json "$t" >"$TMP/dump" 2>"$TMP/err" || fail "clrr dump $name: $(cat "$TMP/err")"
    $PY -c 'import json, sys; n = sum(1 for l in open(sys.argv[1]) if json.loads(l)["type"] == "call"); assert n > 10, n' \
        "$TMP/dump" || fail "clrr dump --json $name: not JSON lines with calls"
    case $name in api_tour-*) n=$((n + 1)); continue;; esac   # holds a PoCL device binary
    rc=0
    "$CLRR" replay --json --tolerance rel=1e-4,abs=1e-5 "$t" >"$TMP/r.json" 2>"$TMP/err" || rc=$?
    [ $rc -eq 0 ] || fail "clrr replay $name: exit $rc: $(cat "$TMP/err")"
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["ok"] and d["readbacks"] >= 1 and d["mismatches"] == 0, d' \
        "$TMP/r.json" || fail "clrr replay $name: $(cat "$TMP/r.json")"
    n=$((n + 1))
done
# DATA before its call's END (recorded under load): replay verifies the
# read, and a trim of the launch before it keeps that DATA
t=$DIR/vecadd-early-data.clrr
"$CLRR" dump "$t" | awk '/^   data #24 /{d=1} /^#24 /{if (!d) exit 1; exit 0}' || fail "vecadd-early-data: DATA #24 is not before call #24"
"$CLRR" trim "$t" -o "$TMP/early-k.clrr" --kernel 23 >/dev/null || fail "clrr trim --kernel 23 of vecadd-early-data"
"$CLRR" replay --json "$TMP/early-k.clrr" >"$TMP/r.json" || fail "the trimmed vecadd-early-data does not replay verified"
$PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["readbacks"] == 4 and d["unverified"] == 0, d' \
    "$TMP/r.json" || fail "trim dropped the early DATA of read #24: $(cat "$TMP/r.json")"

# format 2.2: read-backs as hashes, verified by hash; the header's optional bit
t=$DIR/diverge-hashreads-2.2.clrr
"$CLRR" replay --json "$t" >"$TMP/r.json" || fail "diverge-hashreads-2.2 does not replay verified"
$PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["readbacks"] == 3 and d["hashed"] == 3, d' \
    "$TMP/r.json" || fail "diverge-hashreads-2.2: $(cat "$TMP/r.json")"
"$CLRR" info --json "$t" | $PY -c 'import json, sys; d = json.load(sys.stdin); assert d["hashed_reads"] == 3, d' ||
    fail "diverge-hashreads-2.2: clrr info does not count its hashed read-backs"
[ "$(od -An -tx1 -j20 -N4 "$t" | tr -d ' ')" = 01000000 ] || fail "diverge-hashreads-2.2: optional feature bit 32 not set"

# format 1.1: the devices come in a DEVICES item, and info lists them
t=$DIR/vecadd-pocl-1.1.clrr
"$CLRR" dump --json "$t" | grep -q '^{"type":"devices","platform":1,' || fail "vecadd-pocl-1.1: no DEVICES item"
"$CLRR" info "$t" | grep -q '^  device   #2 CPU ' || fail "vecadd-pocl-1.1: clrr info lists no device"

# format 1.2: blobs over 1 MiB are named by the hash of their leaves'
# hashes; the same run recorded in 1.1 names its 1.5 MiB read-back by the
# whole blob's XXH3. Both replay verified and read the same; a trim copies
# the 1.1 trace's blobs under the references its records use, so the
# trimmed trace replays verified too (without it, the read-back's blob is
# not found: "result FAILED").
rb() { "$CLRR" dump --json "$1" | $PY -c 'import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if d["type"] == "call" and d["fn"] == "clEnqueueReadBuffer":
        print(d["outs"]["ptr"]["blob"]); break'; }
[ -n "$(rb "$DIR/bigblob-pocl-1.1.clrr")" ] && [ "$(rb "$DIR/bigblob-pocl-1.1.clrr")" != "$(rb "$DIR/bigblob-pocl-1.2.clrr")" ] ||
    fail "bigblob: 1.1 and 1.2 name the 1.5 MiB read-back alike ($(rb "$DIR/bigblob-pocl-1.2.clrr"))"
"$CLRR" diff "$DIR/bigblob-pocl-1.1.clrr" "$DIR/bigblob-pocl-1.2.clrr" | grep -q "^same: " || fail "bigblob: 1.1 and 1.2 differ"
# format 2.0: blob pieces of 4-byte numbers are stored byte-shuffled
# (codec 2); the same run reads the same as in 1.2, and says so in info
"$CLRR" diff "$DIR/bigblob-pocl-1.2.clrr" "$DIR/bigblob-pocl-2.0.clrr" | grep -q "^same: " || fail "bigblob: 1.2 and 2.0 differ"
"$CLRR" info --json "$DIR/bigblob-pocl-2.0.clrr" | $PY -c 'import json, sys; d = json.load(sys.stdin); assert d["blob_chunks_shuffled"] == 1 and d["blob_chunks"] == 5, d' ||
    fail "bigblob-pocl-2.0: not one of five pieces byte-shuffled"
"$CLRR" info "$DIR/bigblob-pocl-2.0.clrr" | grep -q "^blobs .*(1 of 5 pieces byte-shuffled)$" || fail "bigblob-pocl-2.0: clrr info does not say so"
for v in 1.1 1.2 2.0; do
    "$CLRR" trim "$DIR/bigblob-pocl-$v.clrr" -o "$TMP/bb.clrr" --range 14:16 >/dev/null || fail "clrr trim bigblob-pocl-$v"
    "$CLRR" replay --json "$TMP/bb.clrr" >"$TMP/r.json" || fail "the trimmed bigblob-pocl-$v does not replay verified"
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["ok"] and d["readbacks"] == 1 and d["mismatches"] == 0, d' \
        "$TMP/r.json" || fail "trimmed bigblob-pocl-$v: $(cat "$TMP/r.json")"
done

[ $n -ge 5 ] || fail "only $n golden traces in $DIR"
echo "ok: $n golden traces read (and replayed verified where they can be)"
