# The recorder changes nothing the application observes (queue properties,
# profiling answers, data) and captures what it must: late data of a
# non-blocking read, unmap data, host-pointer snapshots, device times,
# deduplicated repeated writes; in layer and preload modes.
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
P=$B/tests/progs/rec_probe
need "$P"
"$P" >"$TMP/plain.txt" || fail "rec_probe fails on its own"
for mode in layer preload; do
    opt=""; [ $mode = preload ] && opt="--preload"
    "$CLRR" record $opt -o "$TMP/$mode.clrr" -- "$P" >"$TMP/$mode.txt" || fail "$mode: recorded run failed"
    diff "$TMP/plain.txt" "$TMP/$mode.txt" || fail "$mode: the application saw something different"
    "$CLRR" dump --json "$TMP/$mode.clrr" >"$TMP/$mode.json" || fail "$mode: dump failed"
    j="$TMP/$mode.json"
    grep -q '"type":"data".*"key":"ptr"' "$j" || fail "$mode: no late data for the non-blocking read"
    grep '"fn":"clEnqueueUnmapMemObject"' "$j" | grep -q '"pre":{"data"' || fail "$mode: no unmap data"
    grep '"fn":"clEnqueueNDRangeKernel"' "$j" | grep -q '"host\.' || fail "$mode: no host-pointer snapshot"
    n=$(grep -c '"type":"devtime"' "$j"); [ "$n" -ge 2 ] || fail "$mode: $n device times (want >= 2)"
    grep -q '"layer_mode":"'$mode'"' <("$CLRR" info --json "$TMP/$mode.clrr") || \
        "$CLRR" info "$TMP/$mode.clrr" | grep -qi "$mode" || fail "$mode: mode not recorded"
    # names come from the generated tables: whole-value and combined bitfields
    "$CLRR" dump "$TMP/$mode.clrr" >"$TMP/$mode.txt" || fail "$mode: dump failed"
    grep -q 'device_type=CL_DEVICE_TYPE_ALL' "$TMP/$mode.txt" || fail "$mode: CL_DEVICE_TYPE_ALL not named"
    grep -q 'flags=CL_MEM_READ_WRITE|CL_MEM_USE_HOST_PTR' "$TMP/$mode.txt" || fail "$mode: buffer flags not named"
    # buffers made and released in turn, their addresses possibly reused:
    # each write names the buffer made just before it, twelve different ids
    python3 - "$j" <<'EOF' || fail "$mode: a write names another buffer than the one just made"
import json, sys
calls = [c for c in map(json.loads, open(sys.argv[1])) if c["type"] == "call"]
made, pairs = None, []
for c in calls:
    if c["fn"] == "clCreateBuffer" and c["args"]["size"] == 4096:
        made = c["ret"]
    elif c["fn"] == "clEnqueueWriteBuffer" and c["args"]["size"] == 4 and made is not None:
        pairs.append((made, c["args"]["buffer"]))
        made = None
assert len(pairs) == 12, pairs
assert all(a == b for a, b in pairs), pairs
assert len({a for a, _ in pairs}) == 12, pairs
EOF
    # 8 writes of the same MiB are stored once: the trace is far below 8 MiB
    size=$(stat -c %s "$TMP/$mode.clrr")
    [ "$size" -lt 3000000 ] || fail "$mode: trace is $size bytes; repeated data not deduplicated"
done
# a loader whose dispatch table is shorter than our headers' (Ubuntu 24.04's
# ocl-icd 2.3.2): the layer takes the entries it gets, and records through them
LI=$B/tests/progs/layer_init
need "$LI"
for n in 3 10; do
    CLRR_OUTPUT="$TMP/li$n.clrr" "$LI" "$LAYER" $n >"$TMP/li.out" 2>&1 || fail "layer with a $n-entry table: $(cat "$TMP/li.out")"
    grep -q "^entries $n platforms [1-9]" "$TMP/li.out" || fail "layer with a $n-entry table: $(cat "$TMP/li.out")"
    "$CLRR" dump "$TMP/li$n.clrr" | grep -q '^#1 \[t1\] clGetPlatformIDs' || fail "no trace through a $n-entry table"
done
echo ok
