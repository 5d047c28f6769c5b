"""clrr work-group size tuning benchmark (`make bench-tune`).

For each workload of build/apps/: record it once (--iters 3), run
`clrr optimize --passes none --tune` on the trace (the wgsize pass alone:
each launch shape's legal local sizes measured on its recorded inputs,
kept where faster beyond the noise with bit-identical outputs), then
replay the trace plain and with the plan, REPS times each, alternating,
every read-back verified. Prints one Markdown table per workload: per
launch shape tuned, the recorded and the tuned local size with their
medians as the tuner measured them (device time of the launch) and the
speedup, or the coarsening chosen (factor, dimension, form: plan 1.12)
with its speedup; the shapes kept as recorded (and why, in short); the
coarsening decision of each shape that kept its local size (coarsened,
not faster, changed outputs, or refused by the rewriter and why); and the whole
replay's OpenCL time plain and with the plan, medians, with the speedup
and whether the replay with the plan verified.

Environment: BENCH_DEVICE (replay --device), BENCH_REPS (default 3),
BENCH_TUNE_MODE (rapid, normal: the default, exhaustive), BENCH_TUNE_BUDGET
(seconds per workload, default 20), BENCH_ONLY=a,b (only these workloads),
BENCH_QUICK=1 (--size small where the app takes it). Raw figures go to
bench/results/<device>-tune.json.
"""
import json, os, re, subprocess, sys, tempfile

from benchlib import med, write_raw

args = sys.argv[1:]
B = args[0] if args else "build"
CLRR = os.path.join(B, "bin", "clrr")
REPS = int(os.environ.get("BENCH_REPS", "3"))
MODE = os.environ.get("BENCH_TUNE_MODE", "normal")
BUDGET = os.environ.get("BENCH_TUNE_BUDGET", "20")
DEVICE = os.environ.get("BENCH_DEVICE", "")
ONLY = [w for w in os.environ.get("BENCH_ONLY", "").split(",") if w]
QUICK = os.environ.get("BENCH_QUICK") == "1"
TMP = tempfile.mkdtemp(prefix="clrr-bench-tune.")


def run(cmd, ok=(0,)):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if p.returncode not in ok:
        sys.exit("bench-tune: %s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return p


def replay(trace, plan):
    cmd = [CLRR, "replay", "--json"] + (["--device", DEVICE] if DEVICE else []) + [trace] + \
          (["--plan", plan] if plan else [])
    j = json.loads(run(cmd, ok=(0, 1)).stdout)
    return j


def dims(v):
    return "NULL" if v is None else "x".join(str(x) for x in v)


def main():
    apps = sorted(a for a in os.listdir(os.path.join(B, "apps")) if os.access(os.path.join(B, "apps", a), os.X_OK))
    if ONLY:
        apps = [a for a in apps if a in ONLY]
    raw, dev = {}, "?"
    print("## Work-group sizes tuned per launch shape (`clrr optimize --passes none --tune=%s --budget %s`)\n" % (
        MODE, BUDGET))
    for name in apps:
        cmd = [os.path.join(B, "apps", name), "--iters", "3", "--quiet"] + (["--size", "256"] if QUICK else [])
        trace, plan = os.path.join(TMP, name + ".clrr"), os.path.join(TMP, name + ".plan")
        run([CLRR, "record", "--force", "-o", trace, "--"] + cmd)
        p = run([CLRR, "optimize", trace, "-o", plan, "--passes", "none", "--tune=" + MODE, "--budget", BUDGET] +
                (["--device", DEVICE] if False else []))
        lines = [l[len("clrr optimize: tune: "):] for l in p.stderr.splitlines() if l.startswith("clrr optimize: tune: ")]
        d = json.load(open(plan))
        plain_ns, plan_ns, verified = [], [], True
        for _ in range(REPS):
            a = replay(trace, None)
            b = replay(trace, plan)
            dev = a.get("device", dev)
            plain_ns.append(a["exec_ns"] if "exec_ns" in a else a["time"]["exec_ns"])
            plan_ns.append(b["exec_ns"] if "exec_ns" in b else b["time"]["exec_ns"])
            verified &= bool(b["ok"]) and not b["mismatches"]
        mp, mq = med(plain_ns), med(plan_ns)
        print("### %s (`%s`)\n" % (name, " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))))
        print("| kernel | global | local recorded | local tuned | coarsened | recorded (ms) | tuned (ms) | speedup | noise (ms) |")
        print("|---|---|---|---|---|---:|---:|---:|---:|")
        co = {c["id"]: c for c in d.get("coarsenings", [])}
        shapes = []
        for l in d.get("local_sizes", []):
            t = l["tuned"][0]
            c = co.get(t.get("coarsen"))
            cs = "%d along %d (%s)" % (c["factor"], c["dim"], c["form"]) if c else "-"
            shapes.append({"kernel": l["kernel"], "global": l["global"], "recorded": l["recorded"], "tuned": t["local"],
                           "before_ns": t["before_ns"], "after_ns": t["after_ns"], "noise_ns": t["noise_ns"],
                           "reps": t["reps"], "coarsen": ({"factor": c["factor"], "dim": c["dim"], "form": c["form"]}
                                                          if c else None)})
            print("| %s | %s | %s | %s | %s | %.3f | %.3f | %.2fx | %.3f |" % (
                l["kernel"], dims(l["global"]), dims(l["recorded"]), dims(t["local"]), cs, t["before_ns"] / 1e6,
                t["after_ns"] / 1e6, t["before_ns"] / max(t["after_ns"], 1), t["noise_ns"] / 1e6))
        kept = [l for l in lines if ": kept " in l or "change the outputs" in l and "coarsen" not in l or
                "not measured" in l]
        for l in kept:
            m = re.match(r"(\w+) \(launch (\d+)[^)]*\): (.*)", l)
            if m:
                print("| %s | | | (kept) | | | | | %s |" % (m.group(1), m.group(3).replace("|", "/")[:120]))
        cos = [l for l in lines if ": not coarsened: " in l or ": coarsened by " in l]
        if cos:
            print("\ncoarsening (each shape that kept its local size):\n")
            for l in cos:
                print("- %s" % l.replace("|", "/")[:260])
        summary = [l for l in lines if re.match(r"\d+ launch shapes?,", l)]
        print("\nwhole replay, OpenCL time, median of %d alternated: plain %.2f ms, with the plan %.2f ms: "
              "**%.2fx**, %s; %s\n" % (REPS, mp / 1e6, mq / 1e6, mp / mq if mq else 0,
                                      "verified" if verified else "**NOT verified**",
                                      summary[0] if summary else "no tuning summary"))
        raw[name] = {"command": cmd, "shapes": shapes, "lines": lines, "plain_ns": plain_ns, "plan_ns": plan_ns,
                     "verified": verified}
    write_raw(dev, "-tune", REPS, QUICK, {"mode": MODE, "budget_s": float(BUDGET), "workloads": raw})


if __name__ == "__main__":
    main()
