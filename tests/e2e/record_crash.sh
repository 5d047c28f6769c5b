# A recorded application that dies of SIGSEGV (a bad store), SIGABRT
# (abort()) or SIGTERM (tests/progs/crash.c): with no handler of its own,
# with one installed before its first OpenCL call, after its OpenCL work
# (more calls follow), just before the crash, or one installed for a while
# and removed again. In each case its exit status (or signal) and its output
# are those of a run without the recorder, the recorder adds nothing to
# stderr, and the trace opens and holds every call made before the crash
# (the recorder's handler flushes it before the application's handler or
# the default action runs). Exception, documented in recorder/README.md: a
# handler installed after the last OpenCL call runs without our flush.
# record_sigkill.sh covers SIGKILL.
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
prog=$B/tests/progs/crash
need "$prog"
ulimit -c 0
# The sanitizer runtime must not handle these signals itself (in either run).
export ASAN_OPTIONS=$ASAN_OPTIONS:handle_segv=0:handle_abort=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0
# run OUT ERR CMD...: runs CMD quietly (no "Segmentation fault" from bash);
# the exit status as bash reports it (128+N for signal N).
run() { local o=$1 e=$2; shift 2; ( "$@" >"$o" 2>"$e"; exit $? ) 2>/dev/null; }
# the output without the call count, which depends on timing in after/temp
out() { grep -v '^calls: ' "$1"; }

cases="segv:none segv:before segv:after segv:last segv:temp abort:none abort:before abort:after
       abort:last term:none term:after exit:none"
for c in $cases; do
    mode=${c%%:*} when=${c#*:} n=$mode-$when
    run "$TMP/$n.plain" "$TMP/$n.plain.err" "$prog" "$mode" "$when"; prc=$?
    t=$TMP/$n.clrr
    run "$TMP/$n.out" "$TMP/$n.err" env OPENCL_LAYERS="$LAYER" CLRR_OUTPUT="$t" "$prog" "$mode" "$when"; rrc=$?
    [ "$rrc" = "$prc" ] || fail "$n: exit $rrc under the recorder, $prc without: $(head -3 "$TMP/$n.err")"
    [ "$mode" = exit ] || [ "$prc" != 0 ] || fail "$n: the program did not die"
    cmp -s <(out "$TMP/$n.plain") <(out "$TMP/$n.out") ||
        fail "$n: output differs: $(diff <(out "$TMP/$n.plain") <(out "$TMP/$n.out") | head -5)"
    [ ! -s "$TMP/$n.err" ] || fail "$n: stderr under the recorder: $(head -3 "$TMP/$n.err")"
    made=$(sed -n 's/^calls: //p' "$TMP/$n.out")
    [ -n "$made" ] || fail "$n: the program did not say how many calls it made"
    [ "$mode" = exit ] && made=$((made + 5))   # its releases
    "$CLRR" info --json "$t" >"$TMP/$n.info" 2>"$TMP/$n.ierr" || fail "$n: clrr info: $(cat "$TMP/$n.ierr")"
    got=$(sed -n 's/.*"calls":\([0-9][0-9]*\).*/\1/p' "$TMP/$n.info" | head -1)
    "$CLRR" dump "$t" >"$TMP/$n.dump" 2>"$TMP/$n.derr" || fail "$n: clrr dump: $(cat "$TMP/$n.derr")"
    if [ "$when" = last ]; then
        # the application's handler ran first: only what the periodic flush wrote
        [ "${got:-0}" -le "$made" ] || fail "$n: $got calls in the trace, $made made"
    else
        [ "$got" = "$made" ] || fail "$n: $got calls in the trace, the program made $made"
        if grep -q 'never returned' "$TMP/$n.dump"; then fail "$n: incomplete calls"; fi
    fi
    echo "$n: exit $rrc, $got of $made calls in the trace"
done

# Through `clrr record`: the status comes back, and one line says so.
run "$TMP/cr.out" "$TMP/cr.err" "$CLRR" record -o "$TMP/cr.clrr" -- "$prog" segv; rc=$?
[ $rc = 139 ] || fail "clrr record -- crash segv: exit $rc, expected 139: $(cat "$TMP/cr.err")"
[ "$(wc -l <"$TMP/cr.err")" = 1 ] && grep -q 'killed by signal 11 (trace kept' "$TMP/cr.err" ||
    fail "clrr record -- crash segv: stderr: $(cat "$TMP/cr.err")"
"$CLRR" info "$TMP/cr.clrr" >/dev/null 2>&1 || fail "clrr record -- crash segv: trace unreadable"
run "$TMP/cr2.out" "$TMP/cr2.err" "$CLRR" record -o "$TMP/cr2.clrr" -- "$prog" abort after; rc=$?
[ $rc = 42 ] && [ ! -s "$TMP/cr2.err" ] || fail "clrr record -- crash abort after: exit $rc: $(cat "$TMP/cr2.err")"
grep -q '^app handler: signal 6$' "$TMP/cr2.out" || fail "clrr record -- crash abort after: $(cat "$TMP/cr2.out")"
echo "fatal signals: the trace is flushed first, the application's fate unchanged"
