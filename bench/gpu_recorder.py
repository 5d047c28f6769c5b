"""Recorder overhead before and after a change, side by side (issue 2):
bench/micro.c's call-heavy and data-heavy loops, plain and under `clrr
record` with two builds, every configuration run in turn in each of REPS
rounds; medians, and the overhead per call as the median of each round's
difference against the plain run just before it.

  python3 bench/gpu_recorder.py    (from a folder holding build/ (after:
                                    bin, lib, bench) and old/ (before: bin,
                                    lib), e.g. carried to the GPU machine)

Environment: REPS (default 5), ONLY (run only the groups whose name holds
it: "call-heavy", "data", "interval", "timing parts", "ab"; the last three
run only when named; "ab": `micro calls N ab`, the loader's and layer's
cost per call within each process, before and after, with and without
device timing: medians of the processes' figures), SHORT=1 (call-heavy without the slow configurations), SWEEP=1 (add the
compression-thread sweep of the data-heavy loops), DROP (comma-separated
parts of configuration names to leave out, e.g. "interval-us=0,timed by"). The programs run on the
GPU (CLRR_APP_DEVICE=gpu), the layer preloaded (`clrr record --preload`;
PRELOAD=0: as `clrr record` chooses). Results: bench/results/nvidia-h200-recorder.txt.
"""
import os, re, subprocess, sys, statistics
REPS = int(os.environ.get("REPS", "5"))
os.environ["CLRR_APP_DEVICE"] = "gpu"
def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("failed: %s: %s" % (" ".join(cmd), p.stderr[-400:]))
    return dict(re.findall(r'(\w+)=(\S+)', p.stdout.strip().splitlines()[-1]))
PRELOAD = ["--preload"] if os.environ.get("PRELOAD", "1") != "0" else []   # the GPU machine's loader loads no layers
def rec(b, opts, cmd, out):
    return [b + "/bin/clrr", "record", "--quiet", "--force"] + PRELOAD + opts + ["-o", out, "--"] + cmd
M = "build/bench/micro"
calls = [M, "calls", "100000"]
groups = [
  ("call-heavy", calls, [("plain", calls),
      ("before", rec("old", [], calls, "/tmp/o.clrr")),
      ("after", rec("build", [], calls, "/tmp/n.clrr")),
      ("after, --timing-interval-us=0", rec("build", ["--timing-interval-us=0"], calls, "/tmp/n0.clrr")),
      ("before, --no-device-timing", rec("old", ["--no-device-timing"], calls, "/tmp/o1.clrr")),
      ("after, --no-device-timing", rec("build", ["--no-device-timing"], calls, "/tmp/n1.clrr")),
      ("timed by the program, no clrr", calls + ["timed"]),
      ("profiling queue, no event, no clrr", calls + ["profiled"])]),
]
groups.append(("interval", calls, [("plain", calls),
      ("after", rec("build", [], calls, "/tmp/n.clrr")),
      ("after, --timing-interval-us=10000", rec("build", ["--timing-interval-us=10000"], calls, "/tmp/n3.clrr")),
      ("after, --no-device-timing", rec("build", ["--no-device-timing"], calls, "/tmp/n1.clrr"))]))
groups.append(("timing parts", calls, [("plain", calls),
      ("after", rec("build", [], calls, "/tmp/n.clrr")),
      ("after, first 16 per kind only", rec("build", ["--timing-interval-us=1000000000"], calls, "/tmp/n2.clrr")),
      ("after, --no-device-timing", rec("build", ["--no-device-timing"], calls, "/tmp/n1.clrr")),
      ("profiling queue, no event, no clrr", calls + ["profiled"])]))
for mode in ("varying", "repeated"):
    d = [M, "data", "20", mode]
    groups.append(("data-heavy, " + mode, d, [("plain", d),
        ("before", rec("old", [], d, "/tmp/o.clrr")), ("after", rec("build", [], d, "/tmp/n.clrr"))]))
if os.environ.get("SWEEP"):
  d = [M, "data", "20", "varying"]
  groups.append(("threads, data-heavy, varying", d, [("plain", d)] + [
    ("after, --compress-threads=%d" % n, rec("build", ["--compress-threads=%d" % n], d, "/tmp/t%d.clrr" % n))
    for n in (8, 12, 15)]))
  d = [M, "data", "20", "repeated"]
  groups.append(("threads, data-heavy, repeated", d, [("plain", d)] + [
    ("after, --compress-threads=%d" % n, rec("build", ["--compress-threads=%d" % n], d, "/tmp/t%d.clrr" % n))
    for n in (8, 15)]))
ab = calls + ["ab"]
groups.append(("ab", ab, [("plain", ab),
      ("before", rec("old", [], ab, "/tmp/o.clrr")), ("after", rec("build", [], ab, "/tmp/n.clrr")),
      ("before, --no-device-timing", rec("old", ["--no-device-timing"], ab, "/tmp/o1.clrr")),
      ("after, --no-device-timing", rec("build", ["--no-device-timing"], ab, "/tmp/n1.clrr"))]))
for name, base, confs in groups:
    only = os.environ.get("ONLY", "")
    if (only and only not in name) or (name in ("interval", "timing parts", "ab") and only not in name):
        continue
    if name == "ab":
        got = {c: [] for c, _ in confs}
        for _ in range(REPS):
            for c, cmd in confs:
                got[c].append(float(run(cmd)["ab_ns"]))
        print("\nab: the loader's (and layer's) ns per call, interleaved with the driver's own entry points "
              "in each process (medians of %d processes)" % REPS)
        for c, _ in confs:
            print("  %-34s %+7.0f ns/call  runs: %s" % (c, statistics.median(got[c]),
                                                       " ".join("%.0f" % x for x in got[c])))
        continue
    drop = [d for d in os.environ.get("DROP", "").split(",") if d]
    confs = [x for x in confs if not any(d in x[0] for d in drop)]
    if os.environ.get("SHORT"):
        confs = [x for x in confs if "interval" not in x[0] and "timed by" not in x[0] and x[0] != "before" and "before" not in x[0]]
    t = {c: [] for c, _ in confs}
    cpu = {c: [] for c, _ in confs}
    enq = {c: [] for c, _ in confs}
    info = {}
    for _ in range(REPS):
        for c, cmd in confs:
            info = run(cmd)
            t[c].append(float(info["ns"]))
            cpu[c].append(float(info.get("cpu_ns", "nan")))
            enq[c].append(float(info.get("enq_ns", "nan")))
    calls_n = int(info["calls"])
    p = statistics.median(t["plain"])
    print("\n%s (%d calls, medians of %d, ms)" % (name, calls_n, REPS))
    for c, _ in confs:
        m = statistics.median(t[c])
        # overhead: the median of the differences within a round (a
        # configuration against the plain run just before it), robust to
        # the machine's drift from round to round
        dif = statistics.median([x - y for x, y in zip(t[c], t["plain"])])
        cdif = statistics.median([x - y for x, y in zip(cpu[c], cpu["plain"])])
        # the enqueue calls' own time (micro's enq_ns), per such call
        edif = (statistics.median([x - y for x, y in zip(enq[c], enq["plain"])]) / int(info["enq_calls"])
                if "enq_calls" in info else float("nan"))
        print("  %-34s %9.1f  %5.2fx  %+7.0f ns/call (paired)  %+7.0f CPU ns/call  %+7.0f enqueue ns/call  runs: %s" % (
              c, m / 1e6, m / p, dif / calls_n, cdif / calls_n, edif, " ".join("%.0f" % (x / 1e6) for x in t[c])))
    if "data" in name and "threads" not in name:
        for c, f in (("before", "/tmp/o.clrr"), ("after", "/tmp/n.clrr")):
            print("  trace %s: %d bytes (%.3f of raw)" % (c, os.path.getsize(f), os.path.getsize(f) / float(info["bytes"])))
