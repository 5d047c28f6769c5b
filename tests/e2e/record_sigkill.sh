# A recording killed with SIGKILL at a random moment leaves a trace that
# `clrr info` and `clrr dump` read, holding the calls up to the last flush
# (the moment is drawn once a flush holding calls is on disk).
# (make test: 3 kills; CLRR_KILLS=100 for the long version.)
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
kills=${CLRR_KILLS:-3}
app=$APPS/nbody
need "$app"
for i in $(seq 1 "$kills"); do
    t=$TMP/k$i.clrr
    OPENCL_LAYERS=$LAYER CLRR_OUTPUT=$t CLRR_FLUSH_MS=50 "$app" --iters 100000 --quiet &
    pid=$!
    # the random moment falls after the first flush that holds calls: on a
    # loaded machine, with the sanitizers, the program's start alone can
    # take longer than the whole random delay, and a flush may carry only
    # a blob chunk (the program's source) before the first record chunk
    for _ in $(seq 1 300); do
        [ "$("$CLRR" info --json "$t" 2>/dev/null | sed -n 's/.*"calls":\([0-9][0-9]*\).*/\1/p' | head -1)" -gt 0 ] 2>/dev/null && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.1
    done
    sleep "0.$(( RANDOM % 8 ))"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ -s "$t" ] || fail "kill $i: no trace"
    out=$("$CLRR" info --json "$t") || fail "kill $i: clrr info cannot read the killed trace: $out"
    calls=$(echo "$out" | sed -n 's/.*"calls":\([0-9][0-9]*\).*/\1/p' | head -1)
    [ -n "$calls" ] && [ "$calls" -gt 0 ] || fail "kill $i: no calls recovered ($out)"
    "$CLRR" dump "$t" >/dev/null || fail "kill $i: dump failed"
done
echo "$kills kills, every trace readable"
