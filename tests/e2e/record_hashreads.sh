#!/usr/bin/env bash
# record_hashreads.sh BUILD_DIR — read-backs recorded as hashes (issue 33,
# item 7; docs/recording.md, FORMAT.md 11.4): `clrr record --hash-reads`
# (every read-back) and `--hash-reads-over SIZE` (those larger) record a
# read-back as its hash and length. On PoCL:
# - vecadd's 1 MiB read-backs past 64K: the trace loses their bytes (much
#   smaller), `clrr info` counts them, the replay verifies them by hash
#   (and says a tolerance does not apply to them);
# - on the stub driver (kernels compute nothing) the hashes mismatch, and
#   the mismatch says no byte difference can be shown;
# - diverge (a blocking read, a non-blocking one with late DATA) and
#   image_map (read maps) with --hash-reads replay verified; `clrr diff`
#   of two --hash-reads recordings of different variants names the first
#   hashed read-back that differs, by hash; against a recording with bytes
#   the same run compares equal.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
VA=$APPS/vecadd
DV=$B/tests/progs/diverge
IM=$B/tests/progs/image_map
STUBV=$B/stub-vendors
need "$VA"; need "$DV"; need "$IM"; need "$STUBV/clrrstub.icd"
PY=/usr/bin/python3
field() { $PY -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

run() {   # NAME RECORD-OPTIONS... -- PROGRAM...
    local name=$1
    shift
    "$CLRR" record -o "$TMP/$name.clrr" "$@" >"$TMP/$name.rec" 2>&1 || fail "clrr record $*: $(cat "$TMP/$name.rec")"
}
run va_bytes -- "$VA" --size 262144 --iters 4 --quiet
run va_hash --hash-reads-over 64K -- "$VA" --size 262144 --iters 4 --quiet
sb=$(stat -c %s "$TMP/va_bytes.clrr"); sh=$(stat -c %s "$TMP/va_hash.clrr")
# 4 read-backs of 1 MiB of floats are gone (the inputs, 8 MiB, stay)
[ $((sb - sh)) -gt $((3 * 1024 * 1024)) ] || fail "--hash-reads-over 64K: $sh bytes against $sb with the bytes"
"$CLRR" info --json "$TMP/va_hash.clrr" >"$TMP/info.json" 2>"$TMP/err" || fail "clrr info: $(cat "$TMP/err")"
[ "$(field "$TMP/info.json" hashed_reads)" = 4 ] && [ "$(field "$TMP/info.json" hashed_read_bytes)" = 4194304 ] ||
    fail "clrr info --json: $(cat "$TMP/info.json")"
"$CLRR" info "$TMP/va_hash.clrr" | grep -q "^hashed     4 read-backs" || fail "clrr info: no 'hashed' line"
"$CLRR" info --json "$TMP/va_bytes.clrr" >"$TMP/info0.json" && [ "$(field "$TMP/info0.json" hashed_reads)" = 0 ] ||
    fail "a recording with bytes counts hashed read-backs: $(cat "$TMP/info0.json")"
"$CLRR" replay --json "$TMP/va_hash.clrr" >"$TMP/r.json" 2>"$TMP/r.err" || fail "replay: $(cat "$TMP/r.err") $(cat "$TMP/r.json")"
[ "$(field "$TMP/r.json" hashed)" = 4 ] && [ "$(field "$TMP/r.json" mismatches)" = 0 ] || fail "replay: $(cat "$TMP/r.json")"
"$CLRR" replay --tolerance rel=1e-6 "$TMP/va_hash.clrr" >"$TMP/r.out" 2>&1 || fail "replay --tolerance: $(cat "$TMP/r.out")"
grep -q "4 compared by hash (recorded with --hash-reads), tolerance not applicable" "$TMP/r.out" ||
    fail "replay --tolerance: $(cat "$TMP/r.out")"

# other results: the hashes differ, and say so
rc=0
OCL_ICD_VENDORS=$(realpath "$STUBV") "$CLRR" replay "$TMP/va_hash.clrr" >"$TMP/s.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "MISMATCH call #[0-9]* clEnqueueReadBuffer ptr .*hash differs (recorded as a hash: no byte difference" \
    "$TMP/s.out" || fail "stub replay: exit $rc: $(cat "$TMP/s.out")"

# every read-back: blocking, late DATA, read maps
run dv_hash --hash-reads -- "$DV" --quiet
run dv_bytes -- "$DV" --quiet
run dv_other --hash-reads -- "$DV" --quiet --variant 1
run im_hash --hash-reads -- "$IM" --quiet
for t in dv_hash im_hash; do
    "$CLRR" replay --json "$TMP/$t.clrr" >"$TMP/$t.json" 2>"$TMP/$t.err" || fail "replay $t: $(cat "$TMP/$t.err")"
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["readbacks"] > 0 and d["hashed"] == d["readbacks"] and d["mismatches"] == 0, d' \
        "$TMP/$t.json" || fail "replay $t: $(cat "$TMP/$t.json")"
done
rc=0
"$CLRR" diff "$TMP/dv_hash.clrr" "$TMP/dv_other.clrr" >"$TMP/d.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "first difference at call #[0-9]* clEnqueueRead.*hashes differ (recorded as a hash: no byte difference to show" \
    "$TMP/d.out" || fail "clrr diff of two variants: exit $rc: $(cat "$TMP/d.out")"
"$CLRR" diff "$TMP/dv_bytes.clrr" "$TMP/dv_hash.clrr" >"$TMP/d.out" 2>&1 || fail "clrr diff bytes/hashes: $(cat "$TMP/d.out")"
echo "ok: --hash-reads-over 64K: $sh bytes instead of $sb, 4 read-backs verified by hash; mismatches and diffs by hash"
