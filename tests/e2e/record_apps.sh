# Every workload application records through the layer with unchanged
# output and exit status, and its trace reads back with every call complete.
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
n=0
for app in "$APPS"/*; do
    name=$(basename "$app")
    args="--quiet"
    plain_rc=0; "$app" $args >"$TMP/$name.plain" 2>&1 || plain_rc=$?
    rec_rc=0; "$CLRR" record -o "$TMP/$name.clrr" -- "$app" $args >"$TMP/$name.rec" 2>&1 || rec_rc=$?
    [ "$plain_rc" = 0 ] || fail "$name fails without the recorder (rc=$plain_rc)"
    [ "$rec_rc" = "$plain_rc" ] || { cat "$TMP/$name.rec"; fail "$name: exit $rec_rc under the recorder, $plain_rc without"; }
    cmp -s "$TMP/$name.plain" "$TMP/$name.rec" || { diff "$TMP/$name.plain" "$TMP/$name.rec" | head; fail "$name: output differs under the recorder"; }
    "$CLRR" info --json "$TMP/$name.clrr" >"$TMP/$name.info" || fail "$name: clrr info failed"
    grep -q '"kernel' "$TMP/$name.info" || fail "$name: info has no kernel count"
    "$CLRR" dump "$TMP/$name.clrr" >"$TMP/$name.dump" || fail "$name: clrr dump failed"
    grep -q 'clEnqueueNDRangeKernel' "$TMP/$name.dump" || fail "$name: no kernel launch in the trace"
    grep -q 'clBuildProgram' "$TMP/$name.dump" || fail "$name: no program build in the trace"
    if grep -q 'never returned' "$TMP/$name.dump"; then fail "$name: incomplete calls in a clean run"; fi
    n=$((n+1))
done
[ $n -ge 10 ] || fail "only $n workload applications found"
echo "recorded $n applications"
