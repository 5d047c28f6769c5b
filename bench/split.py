"""Split launches on PoCL's pairs (`make bench-split`; also the last table of `make bench`).

For each workload: record it on PoCL's multi-threaded device of the unequal
pair (POCL_DEVICES="basic pthread": one single-threaded device, one using
every core) and of the equal pair ("pthread pthread"), `clrr optimize
--split` it at fixed proportions, and (partitioned) `clrr profile` it and
let the partitioner decide each launch from the measured costs, then
replay it REPS times without and with each plan
(--loop LOOPS, the per-loop median: steady state), alternating, and print a
Markdown table of medians. A second table runs the application itself:
alone, and under `clrr run` with the fixed-proportion plan (its own
OpenCL time, `ocl_ms`; it checks its results against the host). Every run must verify. On this machine's two
cores both devices share the same cores, so a split can only cost: the
table shows what the split's transfers and synchronization cost, not a
speedup (the GPU machine's table is bench/results/nvidia-h200-x2-split.md,
from bench/gpu_split.sh). Raw figures go to bench/results/<host>-split.json.

Environment: BENCH_REPS (default 3), BENCH_LOOPS (default 3), BENCH_QUICK=1.
"""
import json, os, subprocess, sys, tempfile

from benchlib import med, write_raw

B = sys.argv[1] if len(sys.argv) > 1 else "build"
QUICK = os.environ.get("BENCH_QUICK") == "1"
REPS = int(os.environ.get("BENCH_REPS", "3"))
LOOPS = int(os.environ.get("BENCH_LOOPS", "3"))
CLRR = os.path.join(B, "bin", "clrr")
APPS = os.path.join(B, "apps")
TMP = tempfile.mkdtemp(prefix="clrr-bench-split.")
S = 1 if QUICK else 4
WORKLOADS = [
    ("ep", ["--size", str(65536 * S), "--pairs", "64"], "compute"),
    ("nbody", ["--size", str(2048 * S), "--iters", "2"], "compute"),
    ("blackscholes", ["--size", str(262144 * S)], "compute"),
    ("aes", ["--size", str(65536 * S)], "compute"),
    ("vecadd", ["--size", str(262144 * S), "--iters", "2"], "memory"),
    ("histogram", ["--size", str(1048576 * S)], "memory"),
]
# (POCL_DEVICES, fixed shares, the partitioner's list: the queue's device first, what)
PAIRS = [("basic pthread", "1:3,0:1", "1,0", "unequal: pthread 3, basic 1"),
         ("pthread pthread", "cpu0:1,cpu1:1", "1,0", "equal: 1, 1")]


def run(cmd, env, ok=(0,)):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    if p.returncode not in ok:
        sys.exit("bench-split: %s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return p.stdout


def replay(trace, plan, env):
    j = json.loads(run([CLRR, "replay", "--json", "--loop", str(LOOPS), trace] + (["--plan", plan] if plan else []),
                       env))
    if not j["ok"] or j["mismatches"] or (plan and j["plan"]["split_fallback"]):
        sys.exit("bench-split: %s did not replay verified and split" % trace)
    return j["exec_ns_loop_median"] / 1e6, (j["plan"]["split"] if plan else 0)


def live(name, args, plan, env):
    """The application's own OpenCL time (ms), alone or under `clrr run --plan`."""
    cmd = [os.path.join(APPS, name)] + args + ["--device", "1"]
    if plan:
        cmd = [CLRR, "run", "-q", "--no-learn", "--plan", plan, "--report", plan + ".live.json", "--"] + cmd
    out = run(cmd, env)
    if not out.startswith(name + ": ok"):
        sys.exit("bench-split: %s did not say ok: %s" % (" ".join(cmd), out.strip()[-300:]))
    n = json.load(open(plan + ".live.json"))["split"] if plan else 0
    return float(out.split("ocl_ms=")[1].split()[0]), n


def main():
    rows, raw, lives = [], [], []
    for pair, spec, auto, what in PAIRS:
        env = dict(os.environ, POCL_DEVICES=pair, CLRR_COSTS=os.path.join(TMP, "costs-" + pair.replace(" ", "-")))
        for name, args, kind in WORKLOADS:
            tr = os.path.join(TMP, "%s-%s.clrr" % (name, pair.replace(" ", "-")))
            pl = tr[:-5] + ".plan"
            run([CLRR, "record", "--quiet", "--force", "-o", tr, "--", os.path.join(APPS, name)] + args + ["--device", "1", "--quiet"],
                env)
            run([CLRR, "optimize", tr, "-o", pl, "--passes", "none", "--split", spec], env)
            # the partitioner: the launches' costs measured, then each decided
            pa = tr[:-5] + ".auto.plan"
            run([CLRR, "profile", tr, "--reps", "5", "--max-seconds", "5"], env)
            d = json.loads(run([CLRR, "optimize", tr, "-o", pa, "--passes", "none", "--split", auto, "--json"], env))
            verdicts = ",".join(sorted({x["verdict"] for x in d["partitions"]})) or "-"
            plain, split, part, app, run_split = [], [], [], [], []
            for _ in range(REPS):
                plain.append(replay(tr, None, env)[0])
                ms, n = replay(tr, pl, env)
                split.append(ms)
                part.append(replay(tr, pa, env)[0])
                app.append(live(name, args, None, env)[0])
                ms, ln = live(name, args, pl, env)
                run_split.append(ms)
            lives.append((what, name, kind, med(app), med(run_split), ln))
            rows.append((what, name, kind, med(plain), med(split), n, med(part), verdicts))
            raw.append({"pair": pair, "split": spec, "workload": name, "args": args, "plain_ms": plain,
                        "split_ms": split, "split_launches": n, "partitioned_ms": part, "verdicts": verdicts,
                        "partitions": d["partitions"], "app_ms": app, "run_split_ms": run_split,
                        "run_split_launches": ln})
    print("\n### Split launches on PoCL's pairs (replay, ms per loop, median of %d; %d loops)\n" % (REPS, LOOPS))
    print("| pair and shares | workload | bound | plain | split | split/plain | launches split | partitioned | "
          "partitioned/plain | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for what, name, kind, p, s, n, a, v in rows:
        print("| %s | %s | %s | %.2f | %.2f | %.2fx | %d | %.2f | %.2fx | %s |" %
              (what, name, kind, p, s, p / s if s else 0, n, a, p / a if a else 0, v))
    print("\n### Split launches live on PoCL's pairs (the application's own OpenCL time, ms, median of %d)\n" % REPS)
    print("| pair and shares | workload | bound | application | `clrr run --plan` (split) | split/app | launches split |")
    print("|---|---|---|---|---|---|---|")
    for what, name, kind, a, r, n in lives:
        print("| %s | %s | %s | %.2f | %.2f | %.2fx | %d |" % (what, name, kind, a, r, a / r if r else 0, n))
    write_raw("pocl-pairs", "-split", REPS, QUICK, {"runs": raw})


main()
