#!/usr/bin/env bash
# replay_user_events.sh BUILD_DIR — a blocking call recorded before the
# clSetUserEventStatus that released it (a second thread's set whose END
# came after the wait's) replays without hanging: the replay sets the user
# event before the wait (replayer/rpl_events.c), not before an unrelated
# blocking call, and every read-back still verifies. user_events runs four
# such cases on PoCL (in-order queue and blocking read, wait list and marker
# with clWaitForEvents, clFinish, and a kernel that must not start before an
# unrelated blocking write); move_sets.py moves each set after its wait. The
# fuzzer's two reproducers (tests/fuzz/crashes/replay/hang-*) replay on the
# stub driver in bounded time too.
. "$(dirname "$0")/lib.sh"
PROG=$B/tests/progs/user_events
need "$CLRR"; need "$PROG"; need "$B/tests/fuzz-pack"
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d['$1'])"; }

"$CLRR" record -o "$TMP/t.clrr" -- "$PROG" >"$TMP/rec.out" 2>&1 || fail "recording user_events: $(tail -2 "$TMP/rec.out")"
python3 "$(dirname "$0")/move_sets.py" "$B" "$TMP/t.clrr" "$TMP/m.clrr" >"$TMP/moved" 2>&1 ||
    fail "move_sets.py: $(tail -1 "$TMP/moved")"
[ "$(cat "$TMP/moved")" = 4 ] || fail "move_sets.py moved $(cat "$TMP/moved") sets, expected 4"

"$CLRR" replay --json "$TMP/t.clrr" >"$TMP/t.json" || fail "the recorded order does not replay verified"
[ "$(json user_events_early <"$TMP/t.json")" = 0 ] || fail "user events set early in the recorded order"

rc=0; timeout 120 "$CLRR" replay --json "$TMP/m.clrr" >"$TMP/m.json" 2>"$TMP/m.err" || rc=$?
[ $rc != 124 ] || fail "the replay hangs on a wait recorded before its user event was set"
[ $rc = 0 ] || fail "the moved sets do not replay verified (exit $rc): $(head -3 "$TMP/m.err")"
[ "$(json user_events_early <"$TMP/m.json")" = 4 ] || fail "expected 4 user events set early: $(cat "$TMP/m.json")"
[ "$(json readbacks <"$TMP/m.json")" = 4 ] || fail "expected 4 verified read-backs"
[ "$(json mismatches <"$TMP/m.json")" = 0 ] || fail "mismatches"
"$CLRR" replay "$TMP/m.clrr" | grep -q "4 user events set early" || fail "the summary does not say the events were set early"

# the fuzzer's reproducers, on the stub driver
if [ -e "$B/stub-vendors/clrrstub.icd" ]; then
    for f in "$(dirname "$0")"/../fuzz/crashes/replay/hang-*; do
        "$B/tests/fuzz-pack" -u -k 1 "$f" "$TMP/h.clrr" || fail "fuzz-pack -u $f"
        rc=0; OCL_ICD_VENDORS=$(realpath "$B/stub-vendors") timeout 60 "$CLRR" replay --json "$TMP/h.clrr" \
            >"$TMP/h.json" 2>/dev/null || rc=$?
        [ $rc != 124 ] || fail "$(basename "$f"): the replay hangs"
        [ "$(json user_events_early <"$TMP/h.json")" = 1 ] || fail "$(basename "$f"): no user event set early"
    done
fi
echo "ok"
