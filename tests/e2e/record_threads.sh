# Several application threads call OpenCL at once (tests/progs/threads.c:
# a shared queue and a private queue per thread, events handed between
# threads). In each of several recordings: every call the program made is in
# the trace exactly once (sequence numbers 1..N, no duplicates, no losses),
# each thread's calls are its own and in its program order (the function
# sequence per thread equals the program's log, and the kernel argument
# that encodes (thread, step) increases), every call's host times lie
# between the program's own CLOCK_MONOTONIC readings just before and just
# after it (the time-stamp counter clock, across its recalibrations every
# 10 ms, on runs that last over half a second: within 5 ms, plus twice
# what NTP moved CLOCK_MONOTONIC against CLOCK_MONOTONIC_RAW during the
# run, since the first recording on a freshly started H200 machine strayed
# by up to 2.9 ms where every later one kept within 106 ns (recorder/
# README.md, Host times); exactly, with clock_gettime, under
# --no-tsc-clock), and
# `clrr replay` verifies every read-back, also with --loop 2.
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
prog=$B/tests/progs/threads
need "$prog"
PY=/usr/bin/python3
[ -x $PY ] || skip "no python3"
slew_py='import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC) - time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW))'
# the host clock the recorder should choose: the counter where the kernel
# keeps time with it (rec_clock.c)
want_clock=monotonic
if [ "$(uname -m)" = x86_64 ] &&
   [ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)" = tsc ] &&
   grep -m1 '^flags' /proc/cpuinfo | grep -qw constant_tsc &&
   grep -m1 '^flags' /proc/cpuinfo | grep -qw nonstop_tsc; then
    want_clock=tsc
fi
runs=${CLRR_THREAD_RUNS:-5}
# thread counts per run (cycled), steps per thread
shapes=(4 8 3 4 2)
iters=30
[ "${CLRR_SAN:-0}" = 1 ] && iters=20
for i in $(seq 1 "$runs"); do
    n=${shapes[$(( (i - 1) % ${#shapes[@]} ))]}
    t=$TMP/t$i.clrr
    # every other run with a small memory budget, so that threads wait on
    # the writer, and a short flush period
    extra=()
    [ $((i % 2)) = 0 ] && extra=(--memory=256K --flush-ms=10)
    # runs 1 and 4 last over half a second (the clock recalibrates); run 3
    # reads clock_gettime
    clock=$want_clock
    pace=()
    case $i in
    1|4) pace=(--pace-us 20000) ;;
    3) extra=(--no-tsc-clock); clock=monotonic ;;
    esac
    rc=0
    # how far NTP moved CLOCK_MONOTONIC against the raw counter clock
    # during the run (the recorder's counter clock follows such a slew
    # within a period, so the allowance below grows with it)
    slew0=$($PY -c "$slew_py")
    "$CLRR" record -o "$t" "${extra[@]}" -- "$prog" --threads "$n" --iters $iters --log "$TMP/log$i" \
        --times "$TMP/times$i" "${pace[@]}" \
        >"$TMP/out$i" 2>"$TMP/err$i" || rc=$?
    slew1=$($PY -c "$slew_py")
    [ $rc = 0 ] || fail "run $i ($n threads): exit $rc: $(tail -3 "$TMP/err$i")"
    [ -s "$TMP/err$i" ] && fail "run $i: the recorder wrote to stderr: $(head -3 "$TMP/err$i")"
    grep -q "^threads=$n iters=$iters wrong=0$" "$TMP/out$i" || fail "run $i: $(head -1 "$TMP/out$i")"
    "$CLRR" dump --json "$t" >"$TMP/dump$i.json" 2>"$TMP/derr$i" || fail "run $i: dump: $(cat "$TMP/derr$i")"
    "$CLRR" info --json "$t" >"$TMP/info$i.json" || fail "run $i: info"
    $PY - "$TMP/dump$i.json" "$TMP/log$i" "$TMP/out$i" "$n" "$iters" "$TMP/times$i" "$TMP/info$i.json" "$clock" \
        $((slew1 - slew0)) <<'EOF' || fail "run $i ($n threads): trace does not match the program's calls"
import json, struct, sys
from collections import Counter, defaultdict
dump, logf, outf, n, iters = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
timesf, infof, want_clock = sys.argv[6], sys.argv[7], sys.argv[8]
got_clock = json.load(open(infof))["host_clock"]
assert got_clock == want_clock, "host clock %s, %s expected" % (got_clock, want_clock)
slew = abs(int(sys.argv[9]))
TOL = 5000000 + 2 * slew if got_clock == "tsc" else 0
worst = 0
times = {}
for line in open(timesf):
    who, *ts = line.split()
    times[who] = [int(x) for x in ts]
calls = [c for c in map(json.loads, open(dump)) if c["type"] == "call"]
seqs = sorted(c["seq"] for c in calls)
assert seqs == list(range(1, len(calls) + 1)), "sequence numbers are not 1..%d without gaps or duplicates" % len(calls)
assert all(c["complete"] for c in calls), "incomplete calls in a clean run"
assert all(c["ret"] == 0 or isinstance(c["ret"], int) and c["ret"] > 0 for c in calls), "a failed call"
log = {}
for line in open(logf):
    who, *fns = line.split()
    log[who] = fns
assert len(log) == n + 1, "log has %d threads" % len(log)
# the program's printed counts agree with its own log
printed = defaultdict(Counter)
for line in open(outf):
    if line.startswith("calls "):
        _, who, fn, k = line.split()
        printed[who][fn] = int(k)
for who, fns in log.items():
    assert Counter(fns) == printed[who], "program: counts and log disagree for " + who
by_tid = defaultdict(list)
for c in sorted(calls, key=lambda c: c["seq"]):
    by_tid[c["tid"]].append(c)
assert len(by_tid) == n + 1, "%d threads in the trace, %d expected" % (len(by_tid), n + 1)
seen = set()
for tid, cs in by_tid.items():
    fns = [c["fn"] for c in cs]
    tags = [struct.unpack("<i", bytes.fromhex(c["args"]["arg_value"]["bin"]))[0]
            for c in cs if c["fn"] == "clSetKernelArg" and c["args"]["arg_index"] == 2]
    if "clCreateContext" in fns:
        who = "main"
    else:
        owners = {(t if t >= 0 else -t - 1) // 100000 for t in tags}
        assert len(owners) == 1, "trace thread %d holds calls of threads %s" % (tid, owners)
        who = str(owners.pop())
        # program order: step s on the private queue (+tag), then the shared (-tag-1)
        t0 = int(who) * 100000
        want = [x for s in range(iters) for x in (t0 + s, -(t0 + s) - 1)]
        assert tags == want, "thread %s: kernel arguments out of order: %s..." % (who, tags[:8])
    assert who not in seen, "two trace threads for program thread " + who
    seen.add(who)
    if fns != log[who]:
        k = next((j for j, (a, b) in enumerate(zip(fns, log[who])) if a != b), min(len(fns), len(log[who])))
        sys.exit("thread %s: call %d is %s in the trace, %s in the program (%d vs %d calls)" % (
            who, k, fns[k] if k < len(fns) else "-", log[who][k] if k < len(log[who]) else "-",
            len(fns), len(log[who])))
    # each call's host times lie within the program's readings around it:
    # exactly with clock_gettime; within TOL ns with the counter, which is
    # calibrated against CLOCK_MONOTONIC. A thread's times never decrease.
    tw = times[who]
    prev = 0
    for k, c in enumerate(cs):
        before, after = tw[2 * k], tw[2 * k + 1]
        assert prev <= c["t_begin"] <= c["t_end"], "thread %s, call %d (seq %d): host times %d..%d after %d" % (
            who, k, c["seq"], c["t_begin"], c["t_end"], prev)
        prev = c["t_end"]
        off = max(before - c["t_begin"], c["t_end"] - after, 0)
        worst = max(worst, off)
        assert off <= TOL, (
            "thread %s, call %d (%s, seq %d): host times %d..%d outside the program's %d..%d by %d ns (%s clock)" % (
            who, k, c["fn"], c["seq"], c["t_begin"], c["t_end"], before, after, off, got_clock))
assert len(calls) == sum(len(v) for v in log.values())
print("run: %d calls, per thread %s; %s clock, %d ns at most outside the program's readings "
      "(NTP moved CLOCK_MONOTONIC %d ns)" % (len(calls), sorted(len(v) for v in log.values()), got_clock, worst, slew))
EOF
    for loop in 1 2; do
        "$CLRR" replay --json --loop $loop "$t" >"$TMP/rp$i.$loop" 2>"$TMP/rperr$i" ||
            fail "run $i: replay --loop $loop exit $?: $(tail -3 "$TMP/rperr$i") $(head -c 600 "$TMP/rp$i.$loop")"
        $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] and d["mismatches"] == 0 and d["readbacks"] > 0 and not d["truncated"], d' \
            "$TMP/rp$i.$loop" || fail "run $i: replay --loop $loop did not verify"
    done
done

# A capture range (--first-call/--last-call) numbers calls at entry, not
# under the record lock (rec_begin): four threads, the data of exactly the
# writes numbered within the range captured, every other write's marked
# not captured, and the numbers still 1..N without gaps.
t=$TMP/range.clrr
"$CLRR" record -o "$t" --first-call 150 --last-call 700 -- "$prog" --threads 4 --iters $iters \
    >"$TMP/rout" 2>"$TMP/rerr" || fail "range run: exit $?: $(tail -3 "$TMP/rerr")"
grep -q "^threads=4 iters=$iters wrong=0$" "$TMP/rout" || fail "range run: $(head -1 "$TMP/rout")"
"$CLRR" dump --json "$t" >"$TMP/range.json" || fail "range run: dump"
$PY - "$TMP/range.json" <<'EOF' || fail "range run: captured data does not follow the call range"
import json, sys
calls = [c for c in map(json.loads, open(sys.argv[1])) if c["type"] == "call"]
seqs = sorted(c["seq"] for c in calls)
assert seqs == list(range(1, len(calls) + 1)), "sequence numbers are not 1..%d" % len(calls)
writes = [c for c in calls if c["fn"] == "clEnqueueWriteBuffer"]
inside = [c for c in writes if 150 <= c["seq"] <= 700]
outside = [c for c in writes if not 150 <= c["seq"] <= 700]
assert inside and outside, "the range holds %d writes, %d outside" % (len(inside), len(outside))
for c in inside:
    assert isinstance(c["args"]["ptr"], dict), "write %d inside the range not captured: %s" % (c["seq"], c["args"]["ptr"])
for c in outside:
    assert c["args"]["ptr"] is False, "write %d outside the range captured" % c["seq"]
print("range: %d writes captured, %d not" % (len(inside), len(outside)))
EOF
echo "$runs multi-threaded recordings: every call once, in thread order, replay verified; a capture range"
