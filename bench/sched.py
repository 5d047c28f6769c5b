"""clrr schedule benchmark (`make bench-sched`): what lanes (plan 1.8,
replayer/rpl_lanes.c) do to a replay.

For each workload: record it once, `clrr optimize` it twice, with the
schedule pass (what the pass decides: its prediction from the recorded
device times) and with --no-schedule (plan A); plan B is plan A with its
first queue scheduled over 3 lanes whatever the pass decided, so that the
runtime is measured on every workload. Then replay REPS times with A and
with B, alternating, each replay running the trace LOOPS times (--loop),
and print a Markdown table of medians: the per-loop median of the time
spent inside enqueue/map/sync calls (steady state) and of the whole
session (wall_ns), the ratio, the commands moved to lanes and the
conflicts waited for. Every replay must verify (exit 0, no mismatches).
Raw figures go to bench/results/<device>-sched.json.

Environment: BENCH_DEVICE (passed to `clrr replay` as --device),
BENCH_LANES (--lanes: auto, the default, leaves devices that share the
host's memory alone, so on PoCL nothing changes; always measures lanes there),
BENCH_REPS (default 5), BENCH_LOOPS (default 3), BENCH_QUICK=1 (smaller
workloads, 3 runs), BENCH_ONLY (a comma-separated list of workload names).
"""
import json, os, subprocess, sys, tempfile

from benchlib import med, write_raw

B = sys.argv[1] if len(sys.argv) > 1 else "build"
QUICK = os.environ.get("BENCH_QUICK") == "1"
REPS = min(int(os.environ.get("BENCH_REPS", "5")), 3 if QUICK else 1000)
DEVICE = os.environ.get("BENCH_DEVICE", "")
LOOPS = int(os.environ.get("BENCH_LOOPS", "3"))
LANES = os.environ.get("BENCH_LANES", "auto")
ONLY = [w for w in os.environ.get("BENCH_ONLY", "").split(",") if w]
CLRR = os.path.join(B, "bin", "clrr")
TMP = tempfile.mkdtemp(prefix="clrr-bench-sched.")


def app(name):
    return os.path.join(B, "apps", name)


SIZE = ["--size", "65536"] if QUICK else []
WORKLOADS = [
    # name, command (recorded), what overlaps
    ("overlap", [app("overlap"), "--iters", "16", "--work", "1", "--quiet"] + SIZE,
     "the writes of iteration i+1 with the read of i (the buffers are reused: nothing else may)"),
    ("overlap w32", [app("overlap"), "--iters", "16", "--quiet"] + SIZE,
     "the same, with 32 rounds of work per element"),
    ("sobel", [app("sobel"), "--iters", "6", "--quiet"] + (["--size", "256"] if QUICK else []),
     "the next image's write with the last launch and read"),
    ("geomatrix", [app("geomatrix"), "--iters", "6", "--quiet"] + (["--size", "256"] if QUICK else []),
     "eight writes with the chain of the iteration before"),
    ("exposure", [app("exposure"), "--iters", "4", "--quiet"] + (["--size", "256"] if QUICK else []),
     "pyramid levels' writes and reads with the launches of other levels"),
    ("nbody", [app("nbody"), "--iters", "6", "--quiet"] + (["--size", "4096"] if QUICK else []),
     "little: each step reads what the one before wrote"),
    ("vecadd", [app("vecadd"), "--iters", "6", "--quiet"] + (["--size", "65536"] if QUICK else []),
     "the writes of a and b with the read of c"),
]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode:
        sys.exit("bench-sched: %s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return p.stdout


def replay(trace, plan):
    cmd = [CLRR, "replay", "--json", "--loop", str(LOOPS), "--lanes", LANES] + \
          (["--device", DEVICE] if DEVICE else []) + [trace, "--plan", plan]
    j = json.loads(run(cmd))
    if not j["ok"] or j["mismatches"]:
        sys.exit("bench-sched: %s did not verify" % " ".join(cmd))
    return j


def with_lanes(src, dst):
    d = json.load(open(src))
    d["version"] = "1.8"
    zero = {"commands": 0, "kernels": 0, "bytes": 0, "device_ns": 0, "timed": 0}
    d["passes"] = [p for p in d["passes"] if p["name"] != "schedule"] + \
        [{"name": "schedule", "enabled": True, "transformations": 0, "effect": zero}]
    d["schedule"] = [{"id": 1, "queue": 0, "lanes": 3, "commands": 3, "uploads": 1, "downloads": 1,
                      "recorded_ns": 2, "predicted_ns": 1, "reason": "bench/sched.py: every workload"}]
    json.dump(d, open(dst, "w"))


def ms(ns):
    return "%.2f" % (ns / 1e6)


def main():
    rows, raw, dev = [], {}, "?"
    for name, cmd, what in WORKLOADS:
        if ONLY and name not in ONLY:
            continue
        if not os.path.exists(cmd[0]):
            print("(skipping %s: %s is not built)" % (name, cmd[0]))
            continue
        base = os.path.join(TMP, name.replace(" ", "_"))
        trace = base + ".clrr"
        run([CLRR, "record", "--force", "-o", trace, "--"] + cmd)
        o = json.loads(run([CLRR, "optimize", trace, "-o", base + ".pass.plan", "--schedule", "--json"]))
        run([CLRR, "optimize", trace, "-o", base + ".a.plan", "--no-schedule"])
        with_lanes(base + ".a.plan", base + ".b.plan")
        r = {"cmd": cmd, "pass": o.get("schedule"), "a": [], "b": []}
        for _ in range(REPS):
            for key in ("a", "b"):
                j = replay(trace, base + "." + key + ".plan")
                dev = j.get("device", dev)
                r[key].append({"exec_loop": j["exec_ns_loop_median"], "wall": j["wall_ns"], "lanes": j["plan"]["lanes"]})
        raw[name] = r
        ea, eb = med([x["exec_loop"] for x in r["a"]]), med([x["exec_loop"] for x in r["b"]])
        wa, wb = med([x["wall"] for x in r["a"]]), med([x["wall"] for x in r["b"]])
        ln = r["b"][-1]["lanes"]
        sched = o.get("schedule") or []
        chose = ("%.2fx predicted" % (sched[0]["recorded_ns"] / max(sched[0]["predicted_ns"], 1))) if sched else "no"
        rows.append((name, ms(ea), ms(eb), "%.2fx" % (ea / eb if eb else 0), ms(wa), ms(wb),
                     "%d / %d" % (ln["moved"] // LOOPS, ln["waits"] // LOOPS), chose, what))
    print("\n### Lanes in replay (%s, --lanes %s; medians of %d replays of %d loops each, every read-back verified)\n" %
          (dev, LANES, REPS, LOOPS))
    print("| workload | exec/loop, no lanes (ms) | with lanes (ms) | ratio | wall, no lanes (ms) | with lanes (ms) | "
          "moved / waits per loop | the pass schedules | what may overlap |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    write_raw(dev, "-sched", REPS, QUICK, {"loops": LOOPS, "workloads": raw})


if __name__ == "__main__":
    main()
