#!/usr/bin/env bash
# replay_lanes.sh BUILD_DIR — schedules in replay (plan 1.8, issue 7):
# `clrr replay --plan` runs a scheduled queue's writes and reads on lanes
# of their own (replayer/rpl_lanes.c), each command waiting for the newest
# conflicting command of every other lane, their bytes in pinned memory
# (replayer/rpl_pin.c), and verifies every read-back.
# Whether the pass schedules a queue depends on the recording's device
# times (tests/e2e/opt_schedule.sh), so the runtime is tested on plans
# whose schedule section is written here: overlap's queue (two writes, a
# launch run specialized by the plan, a read per iteration) over 3 and 2
# lanes, in loop mode, and a plan with nothing but the schedule; sobel; and
# geomatrix, whose chain the plan fuses into one launch (the plan's own
# launches wait for the lanes); spmv, whose transfers of three sizes
# share a pinned pool bounded by --pinned (blocks released for another
# size, transfers in ordinary memory when none is free; a bad --pinned is
# refused). A queue the schedule names that the trace
# never creates changes nothing; `clrr run --plan` says it does not apply
# schedules.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/overlap"; need "$APPS/sobel"; need "$APPS/geomatrix"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE

# with_schedule IN OUT QUEUE LANES [bare]: OUT is plan IN scheduling the
# QUEUE-th queue over LANES lanes (whatever the pass decided); "bare": and
# nothing else (no transformation, no generated kernel)
with_schedule() {
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if len(sys.argv) > 5:
    d["transformations"], d["fused_kernels"], d["specializations"] = [], [], []
    for p in d["passes"]:
        p["transformations"] = 0
        p["effect"] = {"commands": 0, "kernels": 0, "bytes": 0, "device_ns": 0, "timed": 0}
for p in d["passes"]:
    if p["name"] == "schedule":
        p["enabled"] = True
d["schedule"] = [{"id": 1, "queue": int(sys.argv[3]), "lanes": int(sys.argv[4]), "commands": 3, "uploads": 1,
                  "downloads": 1, "recorded_ns": 2000, "predicted_ns": 1000, "reason": "written by replay_lanes.sh"}]
if "schedule" not in d["requires"]:   # plan 1.9: what a plan uses, it lists
    d["requires"].append("schedule")
json.dump(d, open(sys.argv[2], "w"))
PY
}

# replay_lanes TRACE PLAN NAME: a verified replay over lanes; prints
# "moved waits joins" of the replay's JSON
replay_lanes() {
    "$CLRR" replay --json --lanes always "$1" --plan "$2" >"$TMP/$3.json" || fail "$3: replay --plan: $(cat "$TMP/$3.json")"
    [ "$(j "$TMP/$3.json" "(d['ok'], d['mismatches'], d['readbacks'] > 0, d['plan']['lanes']['queues'], d['plan']['lanes']['note'])")" \
        = "(True, 0, True, 1, '')" ] || fail "$3: replay --plan: $(j "$TMP/$3.json" "(d['ok'], d['mismatches'], d['plan']['lanes'])")"
    j "$TMP/$3.json" "'%d %d %d' % (d['plan']['lanes']['moved'], d['plan']['lanes']['waits'], d['plan']['lanes']['joins'])"
}

# overlap: 8 iterations of two writes, a launch and a read
"$CLRR" record -o "$TMP/ov.clrr" -- "$APPS/overlap" --size 65536 --iters 8 --work 1 --quiet || fail "recording overlap"
"$CLRR" optimize "$TMP/ov.clrr" -o "$TMP/ovn.plan" --no-schedule >/dev/null || fail "optimize --no-schedule"
with_schedule "$TMP/ovn.plan" "$TMP/ov3.plan" 0 3
read -r moved waits joins <<<"$(replay_lanes "$TMP/ov.clrr" "$TMP/ov3.plan" overlap3)"
# 16 writes and 8 reads left the queue; each launch (run specialized, by
# the plan: a barrier on the lanes) waits for its writes, each read for
# the launch's marker, each write after the first pair for the launch
# that read the buffer before
[ "$moved" = 24 ] && [ "$waits" -ge 22 ] && [ "$joins" = 8 ] || fail "overlap over 3 lanes: moved $moved, waits $waits, joins $joins"
# every transfer on the lanes went through pinned memory (replayer/rpl_pin.c;
# the read-backs verified above were read into it)
[ "$(j "$TMP/overlap3.json" "(d['plan']['lanes']['pinned'], d['plan']['lanes']['unpinned'])")" = "(24, 0)" ] ||
    fail "overlap over 3 lanes: pinned transfers: $(j "$TMP/overlap3.json" "d['plan']['lanes']")"
"$CLRR" replay --lanes always "$TMP/ov.clrr" --plan "$TMP/ov3.plan" | grep -q "1 queues over lanes (schedule): 24 transfers on their own lanes" ||
    fail "replay summary: no lanes line"
with_schedule "$TMP/ovn.plan" "$TMP/ov2.plan" 0 2
read -r moved waits joins <<<"$(replay_lanes "$TMP/ov.clrr" "$TMP/ov2.plan" overlap2)"
[ "$moved" = 24 ] || fail "overlap over 2 lanes: moved $moved"
# nothing but the schedule: every launch is routed as recorded
with_schedule "$TMP/ovn.plan" "$TMP/ovb.plan" 0 3 bare
read -r moved waits joins <<<"$(replay_lanes "$TMP/ov.clrr" "$TMP/ovb.plan" bare)"
[ "$moved" = 24 ] && [ "$joins" = 0 ] && [ "$waits" -ge 30 ] || fail "a bare schedule: moved $moved, waits $waits, joins $joins"
# a queue the trace does not create: nothing changes
with_schedule "$TMP/ovn.plan" "$TMP/ov9.plan" 9 3
"$CLRR" replay --json --lanes always "$TMP/ov.clrr" --plan "$TMP/ov9.plan" >"$TMP/ov9.json" || fail "replay, queue 9"
[ "$(j "$TMP/ov9.json" "(d['ok'], d['plan']['lanes']['queues'], d['plan']['lanes']['moved'])")" = "(True, 0, 0)" ] ||
    fail "queue 9: $(j "$TMP/ov9.json" "d['plan']['lanes']")"
# loop mode: the lanes go on across iterations
"$CLRR" replay --json --lanes always --loop 3 "$TMP/ov.clrr" --plan "$TMP/ov3.plan" >"$TMP/loop.json" || fail "replay --loop 3 --plan"
[ "$(j "$TMP/loop.json" "(d['ok'], d['mismatches'], d['plan']['lanes']['moved'], d['plan']['lanes']['pinned'])")" = "(True, 0, 72, 72)" ] ||
    fail "replay --loop 3: $(j "$TMP/loop.json" "(d['ok'], d['mismatches'], d['plan']['lanes'])")"
# --timing: profiling lanes, every command timed
"$CLRR" replay --json --lanes always --timing "$TMP/ov.clrr" --plan "$TMP/ov3.plan" >"$TMP/timing.json" || fail "replay --timing --plan"
[ "$(j "$TMP/timing.json" "(d['ok'], d['mismatches'], d['plan']['lanes']['moved'])")" = "(True, 0, 24)" ] ||
    fail "replay --timing: $(j "$TMP/timing.json" "(d['ok'], d['plan']['lanes'])")"

# the pinned pool within --pinned: spmv's lane transfers come in three
# block sizes (64 KiB, 128 KiB and 1 MiB: 65536-, 65540- and 1014024-byte
# writes and reads); a pool of 1 MiB holds the 1 MiB block alone, so the
# other sizes' free blocks are released to make room for it, and a transfer
# that finds every block busy uses ordinary memory. Every read-back still
# verifies; with the default budget nothing falls back or is released.
"$CLRR" record -o "$TMP/sp.clrr" -- "$APPS/spmv" --size 16384 --iters 2 --quiet || fail "recording spmv"
"$CLRR" optimize "$TMP/sp.clrr" -o "$TMP/spn.plan" --no-schedule >/dev/null || fail "optimize spmv"
with_schedule "$TMP/spn.plan" "$TMP/sp2.plan" 0 2
"$CLRR" replay --json --lanes always "$TMP/sp.clrr" --plan "$TMP/sp2.plan" >"$TMP/sp.json" || fail "spmv over lanes: $(cat "$TMP/sp.json")"
[ "$(j "$TMP/sp.json" "(d['ok'], d['mismatches'], d['plan']['lanes']['moved'], d['plan']['lanes']['pinned'], d['plan']['lanes']['unpinned'], d['plan']['lanes']['pin_evicted'])")" \
    = "(True, 0, 8, 8, 0, 0)" ] || fail "spmv over lanes: $(j "$TMP/sp.json" "d['plan']['lanes']")"
"$CLRR" replay --json --lanes always --pinned 1M "$TMP/sp.clrr" --plan "$TMP/sp2.plan" >"$TMP/spm.json" ||
    fail "spmv over lanes, --pinned 1M: $(cat "$TMP/spm.json")"
[ "$(j "$TMP/spm.json" "(d['ok'], d['mismatches'], d['plan']['lanes']['moved'], d['plan']['lanes']['pinned'] + d['plan']['lanes']['unpinned'], d['plan']['lanes']['pin_evicted'] > 0, d['plan']['lanes']['unpinned'] > 0)")" \
    = "(True, 0, 8, 8, True, True)" ] || fail "spmv over lanes, --pinned 1M: $(j "$TMP/spm.json" "d['plan']['lanes']")"
rc=0; "$CLRR" replay --lanes always --pinned 1000 "$TMP/sp.clrr" --plan "$TMP/sp2.plan" 2>"$TMP/err" || rc=$?
[ $rc = 2 ] && grep -q "pinned takes a byte count (at least 64K" "$TMP/err" || fail "--pinned 1000: exit $rc: $(cat "$TMP/err")"
rc=0; "$CLRR" replay --pinned 1M "$TMP/sp.clrr" 2>"$TMP/err" || rc=$?
[ $rc = 2 ] && grep -q "^clrr replay: --pinned applies to a plan's scheduled queues: it needs --plan" "$TMP/err" ||
    fail "--pinned without --plan: exit $rc: $(cat "$TMP/err")"

# --lanes auto (the default) leaves PoCL's queues alone: a CPU device's
# copies are its cores'; off, none
"$CLRR" replay --json "$TMP/ov.clrr" --plan "$TMP/ov3.plan" >"$TMP/auto.json" || fail "replay, --lanes auto"
[ "$(j "$TMP/auto.json" "(d['ok'], d['plan']['lanes']['queues'], 'shares the host' in d['plan']['lanes']['note'])")" = "(True, 0, True)" ] ||
    fail "--lanes auto on PoCL: $(j "$TMP/auto.json" "d['plan']['lanes']")"
"$CLRR" replay --json --lanes off "$TMP/ov.clrr" --plan "$TMP/ov3.plan" >"$TMP/off.json" || fail "replay, --lanes off"
[ "$(j "$TMP/off.json" "(d['ok'], d['plan']['lanes']['queues'], d['plan']['lanes']['note'])")" = "(True, 0, '')" ] ||
    fail "--lanes off: $(j "$TMP/off.json" "d['plan']['lanes']")"
rc=0; "$CLRR" replay --lanes sometimes "$TMP/ov.clrr" --plan "$TMP/ov3.plan" 2>"$TMP/err" || rc=$?
[ $rc = 2 ] && grep -q "lanes takes auto, always or off" "$TMP/err" || fail "--lanes sometimes: exit $rc: $(cat "$TMP/err")"
rc=0; "$CLRR" replay --lanes always "$TMP/ov.clrr" 2>"$TMP/err" || rc=$?
[ $rc = 2 ] && grep -q "it needs --plan" "$TMP/err" || fail "--lanes without --plan: exit $rc: $(cat "$TMP/err")"

# the application under a plan with a schedule: as without, and said
"$CLRR" run --trust-plan --plan "$TMP/ov3.plan" -- "$APPS/overlap" --size 65536 --iters 8 --work 1 >"$TMP/run.out" 2>"$TMP/run.err" ||
    fail "overlap under the plan: $(cat "$TMP/run.err")"
grep -q "^overlap: ok" "$TMP/run.out" && grep -q "the plan's schedule (1 queues over lanes) applies to replays only" "$TMP/run.err" ||
    fail "clrr run with a schedule: $(cat "$TMP/run.out" "$TMP/run.err")"

# sobel (an image written, three launches fused by the plan, a read) and
# geomatrix (eight writes, a chain fused into one launch, a read)
"$CLRR" record -o "$TMP/sb.clrr" -- "$APPS/sobel" --size 256 --iters 3 --quiet || fail "recording sobel"
"$CLRR" optimize "$TMP/sb.clrr" -o "$TMP/sb.plan" >/dev/null || fail "optimize sobel"
with_schedule "$TMP/sb.plan" "$TMP/sb3.plan" 0 3
read -r moved waits joins <<<"$(replay_lanes "$TMP/sb.clrr" "$TMP/sb3.plan" sobel)"
[ "$moved" -gt 0 ] || fail "sobel: nothing moved"
"$CLRR" record -o "$TMP/gm.clrr" -- "$APPS/geomatrix" --size 64 --iters 3 --quiet || fail "recording geomatrix"
"$CLRR" optimize "$TMP/gm.clrr" -o "$TMP/gm.plan" >/dev/null || fail "optimize geomatrix"
with_schedule "$TMP/gm.plan" "$TMP/gm3.plan" 0 3
read -r moved waits joins <<<"$(replay_lanes "$TMP/gm.clrr" "$TMP/gm3.plan" geomatrix)"
[ "$moved" -gt 0 ] && [ "$joins" -gt 0 ] || fail "geomatrix: moved $moved, joins $joins"
[ "$(j "$TMP/geomatrix.json" "d['plan']['fused'] > 0")" = "True" ] || fail "geomatrix: nothing fused: $(j "$TMP/geomatrix.json" "d['plan']")"
echo "replay_lanes: ok"
