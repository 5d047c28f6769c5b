#!/usr/bin/env bash
# replay_hostile.sh BUILD_DIR — hostile traces against this machine's own
# driver (PoCL), which, unlike the stub driver, does not refuse what it
# cannot do (docs/replay.md, "Traces are untrusted input"):
#  - every trace of tests/corrupt/ replays on PoCL with an exit status of
#    0, 1 or 3, at most one line on stderr (exactly one, "clrr replay: ...",
#    on exit 3), no signal, no hang, no sanitizer report (the replay fuzz
#    corpus on PoCL is build/tests/fuzz_replay_pocl's, a unit job);
#  - --timeout: a loop kernel made to run for minutes (pocl-pairs-2e31.clrr)
#    ends after the seconds given, with one line and exit 3; a bad value is
#    a usage error.
. "$(dirname "$0")/lib.sh"
DIR=$(cd "$(dirname "$0")/../corrupt" && pwd)
need "$CLRR"; need "$DIR/pocl-ep.clrr"
unset OPENCL_LAYERS LD_PRELOAD CLRR_STUB_LOG POCL_DEVICES CLRR_DEBUG
"$CLRR" devices 2>/dev/null | grep -qi pocl || skip "no PoCL device here"

check() {   # FILE
    local f=$1 rc=0 what
    what="clrr replay $(basename "$f") (PoCL)"
    timeout 60 "$CLRR" replay -q --timeout 10 "$f" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ $rc -ne 124 ] || fail "$what hangs"
    [ $rc -lt 128 ] || fail "$what died of signal $((rc - 128)): $(tail -5 "$TMP/err")"
    # the guard (cli_guard.c) turns a crash into exit 3: one of ours is still a crash
    ! grep -q "the replay's process died of" "$TMP/err" || fail "$what crashed: $(tail -5 "$TMP/err")"
    if grep -q 'AddressSanitizer\|LeakSanitizer\|UndefinedBehaviorSanitizer\|runtime error:' "$TMP/err"; then
        fail "$what: sanitizer report: $(head -20 "$TMP/err")"
    fi
    case $rc in 0|1|3) ;; *) fail "$what: exit $rc: $(head -3 "$TMP/err")";; esac
    local lines; lines=$(wc -l <"$TMP/err")
    [ "$lines" -le 1 ] || fail "$what: $lines lines on stderr: $(head -5 "$TMP/err")"
    if [ $rc = 3 ]; then
        [ "$lines" = 1 ] && grep -q '^clrr replay: ' "$TMP/err" || fail "$what: exit 3 without one error line: $(cat "$TMP/err")"
    fi
}
n=0
for f in "$DIR"/*.clrr; do
    [ "$(basename "$f")" != pocl-pairs-2e31.clrr ] || continue   # the --timeout test, below
    check "$f"
    n=$((n + 1))
done

# --timeout: the loop kernel of ep with 2^31 pairs per work-item runs for
# minutes on PoCL; the watchdog ends the replay after 2 s
t0=$(date +%s%N)
rc=0
timeout 60 "$CLRR" replay --timeout 2 "$DIR/pocl-pairs-2e31.clrr" >"$TMP/out" 2>"$TMP/err" || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc = 3 ] || fail "--timeout 2: exit $rc, not 3: $(head -3 "$TMP/err")"
[ "$(wc -l <"$TMP/err")" = 1 ] || fail "--timeout 2: not one line on stderr: $(head -5 "$TMP/err")"
grep -q "timed out (--timeout) in call #25 clFinish after 2\.[0-9] s" "$TMP/err" || fail "--timeout 2: $(cat "$TMP/err")"
[ $ms -ge 1900 ] && [ $ms -lt 15000 ] || fail "--timeout 2 ended after $ms ms"
# the same trace, unmodified, is well within any budget
rc=0
"$CLRR" replay -q --timeout 30 "$DIR/pocl-ep.clrr" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 0 ] || fail "pocl-ep.clrr --timeout 30: exit $rc: $(head -3 "$TMP/err")"
for bad in -1 abc ''; do
    rc=0
    "$CLRR" replay --timeout "$bad" "$DIR/pocl-ep.clrr" >/dev/null 2>"$TMP/err" || rc=$?
    [ $rc = 2 ] && grep -q -- "--timeout takes seconds" "$TMP/err" || fail "--timeout '$bad': exit $rc: $(cat "$TMP/err")"
done
echo "ok: $n hostile traces on PoCL, --timeout"
