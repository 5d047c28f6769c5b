"""clrr live-plan benchmark (`make bench-live`; also the last table of `make bench`).

The application itself, unmodified, without and with `clrr run --plan`:
for each workload, record it once (same arguments), `clrr optimize` the
trace, then run the real program REPS times plain and REPS times under
`clrr run --plan`, alternating so that drift affects both equally, and print
a Markdown table of medians. The time is the program's own `ocl_ms` (its
OpenCL loop, from its first enqueue to its last finish, as it prints it),
and the wall time of the whole process (start-up, program builds, the
plan's fused builds, exit). Every run must exit 0: each workload checks
every result against a host reference, so a wrong optimized result fails
the benchmark; the program's output line, less its time, must be the same
with and without the plan. The plan's report (`clrr run --report`) gives
what was applied.

Plans are made here (record + `optimize --measure --tune --budget
BENCH_BUDGET`, default 10 s: each pass kept only where measured faster
here, local sizes tuned, and the plan kept only where what it gains beats
what the layer costs a live run, docs/optimizing.md "Never slower live";
BENCH_MEASURE=0: the rules alone, as before; this needs LLVM/libclang), or
taken from a folder: `live.py BUILD --make-plans DIR` only makes them,
`live.py BUILD --plans DIR` uses them (the GPU machine has no LLVM;
patterns name kernels, shapes and arguments, not devices).

Environment: BENCH_DEVICE (the programs' CLRR_APP_DEVICE), BENCH_REPS
(default 5), BENCH_QUICK=1 (smaller workloads, 3 runs), BENCH_RUN_OPTS
(extra `clrr run` options, e.g. --preload), BENCH_ONLY=a,b (only these
workloads; a longer run takes its plan from its workload), BENCH_NOSTAGE=0
(no runs without staging), BENCH_AB=DIR (another build: its `clrr run
--plan` runs too, in turn with the others, with the same plan; the table
adds its time and this build's against it). Raw figures go to
bench/results/<device>-live.json.
"""
import json, os, re, subprocess, sys, tempfile, time

from benchlib import med, write_raw

args = sys.argv[1:]
B = args[0] if args and not args[0].startswith("--") else "build"
PLANS = MAKE_PLANS = None
if "--plans" in args:
    PLANS = args[args.index("--plans") + 1]
if "--make-plans" in args:
    MAKE_PLANS = args[args.index("--make-plans") + 1]
QUICK = os.environ.get("BENCH_QUICK") == "1"
REPS = min(int(os.environ.get("BENCH_REPS", "5")), 3 if QUICK else 1000)
DEVICE = os.environ.get("BENCH_DEVICE", "")
RUN_OPTS = os.environ.get("BENCH_RUN_OPTS", "").split()
NOSTAGE = os.environ.get("BENCH_NOSTAGE", "1") != "0"
MEASURE = os.environ.get("BENCH_MEASURE", "1") != "0"
BUDGET = os.environ.get("BENCH_BUDGET", "10")
AB = os.environ.get("BENCH_AB", "")
CLRR = os.path.join(B, "bin", "clrr")
CLRR_AB = os.path.join(AB, "bin", "clrr") if AB else None
TMP = tempfile.mkdtemp(prefix="clrr-bench-live.")


def app(name):
    p = os.path.join(B, "apps", name)
    return p if os.path.exists(p) else os.path.join(B, "tests", "progs", name)


def small(full, quick):
    return quick if QUICK else full


WORKLOADS = [
    # name, command, what the plan does there
    ("sobel", [app("sobel"), "--iters", "10"] + small([], ["--size", "256"]),
     "gx, gy -> magnitude fused, one gather (Helium's Sobel)"),
    ("geomatrix", [app("geomatrix"), "--iters", "10"] + small([], ["--size", "256"]),
     "the chain mul -> ... -> pow fused into one kernel (Helium's geoMatrix)"),
    ("exposure", [app("exposure"), "--iters", "6"] + small([], ["--size", "256"]),
     "well_exposed -> weight fused (Helium's exposure fusion)"),
    ("deadwork", [app("deadwork"), "--iters", "10", "--work", "64", "--size"] + small(["1048576"], ["65536"]),
     "dead kernels deferred and never run, redundant writes dropped"),
    ("overlap", [app("overlap"), "--iters", "10"] + small([], ["--size", "65536"]),
     "copies staged through pinned memory, overlapping the kernels (the layer's staging)"),
    ("nbody", [app("nbody"), "--iters", "10"] + small([], ["--size", "1024"]),
     "nbody_step specialized: the body count and window length as constants"),
    ("vecadd", [app("vecadd"), "--iters", "10"] + small([], ["--size", "65536"]), "nothing (control)"),
]
# Runs longer than their recording: (name, the workload whose plan it uses,
# the command run); the plan 1.3 steady state applies past the recording.
LONGER = [
    ("sobel x5", "sobel", [app("sobel"), "--iters", "50"] + small([], ["--size", "256"]),
     "sobel for 50 iterations with the 10-iteration plan (steady state)"),
    ("nbody x3", "nbody", [app("nbody"), "--iters", "30"] + small([], ["--size", "1024"]),
     "nbody for 30 iterations with the 10-iteration plan (windows the recording never saw, still specialized)"),
]
ONLY = [w for w in os.environ.get("BENCH_ONLY", "").split(",") if w]

OCL_MS = re.compile(r"\s*ocl_ms=([0-9.]+)")


def run(cmd, env=None, what=None):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    wall = (time.monotonic() - t0) * 1e3
    if p.returncode != 0:
        sys.exit("bench-live: %s failed (%d): %s" % (what or " ".join(cmd), p.returncode,
                                                     (p.stderr.strip() or p.stdout.strip())[-500:]))
    return p.stdout, p.stderr, wall


def app_env():
    env = dict(os.environ)
    if DEVICE:
        env["CLRR_APP_DEVICE"] = DEVICE
    return env


def make_plan(name, cmd, d):
    trace, plan = os.path.join(TMP, name + ".clrr"), os.path.join(d, name + ".plan")
    run([CLRR, "record", "--force", "-o", trace, "--"] + cmd + ["--quiet"], env=app_env())
    extra = ["--measure", "--tune", "--budget", BUDGET] if MEASURE else []
    o = json.loads(run([CLRR, "optimize", trace, "-o", plan, "--json"] + extra)[0])
    return plan, o


def one(cmd, plan, extra=(), clrr=CLRR):
    """One run: (ocl_ms or None, wall ms, output less the time, report)."""
    if plan:
        rep = os.path.join(TMP, "report.json")
        out, _, wall = run([clrr, "run", "--plan", plan, "--report", rep, "-q"] + RUN_OPTS + list(extra) + ["--"] + cmd,
                           env=app_env(), what="clrr run --plan %s -- %s" % (plan, " ".join(cmd)))
        with open(rep) as f:
            report = json.load(f)
    else:
        out, _, wall = run(cmd, env=app_env())
        report = None
    m = OCL_MS.search(out)
    return (float(m.group(1)) if m else None), wall, OCL_MS.sub("", out).strip(), report


def main():
    if MAKE_PLANS:
        os.makedirs(MAKE_PLANS, exist_ok=True)
        for name, cmd, _ in WORKLOADS:
            plan, o = make_plan(name, cmd, MAKE_PLANS)
            print("%s: %s" % (name, ", ".join("%s %d" % (p["name"], p["transformations"]) for p in o["passes"])))
        return
    rows, raw, dev, plans = [], {}, "?", {}
    runs = [(n, n, c, w) for n, c, w in WORKLOADS] + LONGER
    for name, of, cmd, what in runs:
        if ONLY and name not in ONLY and of not in ONLY:
            continue
        if not os.path.exists(cmd[0]):
            print("(skipping %s: %s is not built)" % (name, cmd[0]))
            continue
        if of not in plans:
            rec = next(c for n, c, _ in WORKLOADS if n == of)
            plans[of] = os.path.join(PLANS, of + ".plan") if PLANS else make_plan(of, rec, TMP)[0]
        plan = plans[of]
        r = {"cmd": cmd, "plain": [], "plan": [], "nostage": [], "other": []}
        kinds = [("plain", None, (), CLRR), ("plan", plan, (), CLRR)]
        kinds += [("other", plan, (), CLRR_AB)] if AB else []
        kinds += [("nostage", plan, ("--stage", "off"), CLRR)] if NOSTAGE else []
        for _ in range(REPS):
            for key, p, extra, clrr in kinds:
                ms, wall, text, rep = one(cmd, p, extra, clrr)
                r[key].append({"ocl_ms": ms, "wall_ms": wall, "out": text, "report": rep})
        outs = {x["out"] for x in r["plain"] + r["plan"] + r["nostage"] + r["other"]}
        if len(outs) != 1:
            sys.exit("bench-live: %s printed different results with and without the plan: %s" % (name, sorted(outs)))
        m = re.search(r'device="([^"]*)"', r["plain"][0]["out"])
        dev = m.group(1) if m else dev
        raw[name] = r
        rep = r["plan"][-1]["report"]
        have_ms = r["plain"][0]["ocl_ms"] is not None
        t0 = med([x["ocl_ms"] for x in r["plain"]]) if have_ms else float("nan")
        t1 = med([x["ocl_ms"] for x in r["plan"]]) if have_ms else float("nan")
        t2 = med([x["ocl_ms"] for x in r["nostage"]]) if have_ms and r["nostage"] else float("nan")
        t3 = med([x["ocl_ms"] for x in r["other"]]) if have_ms and r["other"] else float("nan")
        w0, w1 = med([x["wall_ms"] for x in r["plain"]]), med([x["wall_ms"] for x in r["plan"]])
        bld = med([x["report"].get("fused_build_us", 0) / 1e3 for x in r["plan"]])
        mat = med([x["report"].get("match_us", 0) / 1e3 for x in r["plan"]])
        mat3 = med([x["report"].get("match_us", 0) / 1e3 for x in r["other"]]) if r["other"] else float("nan")
        rep = dict(rep, kc_hits=med([x["report"].get("kernel_cache", {}).get("hits", 0) for x in r["plan"]]),
                   xforms=json.load(open(plan)).get("transformations", []).__len__())
        rows.append((name, what, rep, t0, t1, t2, w0, w1, bld, mat, t3, mat3))
    print("\n### Live runs: the application plain and under `clrr run --plan` (medians of %d runs, alternating)\n"
          % REPS)
    print("device: %s. ocl ms: the program's own timing of its OpenCL loop; wall ms: the whole process "
          "(start-up, builds, the plan's fused builds, exit). Every run checked every result against the "
          "program's host reference, and printed the same with and without the plan. applied/fell back: "
          "transformations of the plan; dropped, deferred, never ran, fused: commands; build ms: building the "
          "plan's fused kernels (at the program's set-up); match ms: the layer decoding calls and matching them "
          "against the plan (medians); steady: calls past the recording's calls of their pattern given its last "
          "transformation (a run longer than the recording, plan 1.3); staged: buffer transfers the layer moved through its pinned memory "
          "(`--stage`, on by default where the device does not share the host's memory); w/o staging: "
          "`clrr run --plan --stage off`, run alongside. plan: the plan's transformations (%s); layer: whether "
          "`clrr run` loaded the layer (no: nothing of the plan applies here, the program ran as it is); "
          "kc hits: generated programs made from the kernel binary cache (median). OpenCL and whole-process "
          "speedups side by side.\n" % (dev, "optimize --measure --tune --budget %s" % BUDGET if MEASURE
                                         else "optimize, rules not measured"))
    print("| workload | plan | layer | applied | fell back | dropped | deferred | ran after all | never ran "
          "| fused launches | steady | staged | build ms | kc hits | match ms | plain ocl ms | --plan ocl ms "
          "| OpenCL speedup | w/o staging ocl ms | speedup w/o staging | plain wall ms | --plan wall ms "
          "| whole-process speedup |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, what, rep, t0, t1, t2, w0, w1, bld, mat, _, _ in rows:
        sp = "%.2fx" % (t0 / t1) if t1 == t1 and t1 > 0 else "-"
        sp2 = "%.2fx" % (t0 / t2) if t2 == t2 and t2 > 0 else "-"
        print("| %s | %d | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.1f | %d | %.1f | %s | %s | %s | %s "
              "| %s | %.1f | %.1f | %.2fx |" % (
                  name, rep["xforms"], "no" if rep.get("layer") is False else "yes", rep.get("applied", 0),
                  rep.get("fell_back", 0), rep.get("dropped", 0), rep.get("deferred", 0), rep.get("ran_after_all", 0),
                  rep.get("never_ran", 0), rep.get("fused_launches", 0), rep.get("steady", 0),
                  rep.get("staged_writes", 0) + rep.get("staged_reads", 0),
                  bld, rep["kc_hits"], mat, "%.2f" % t0 if t0 == t0 else "-", "%.2f" % t1 if t1 == t1 else "-", sp,
                  "%.2f" % t2 if t2 == t2 else "-", sp2, w0, w1, w0 / w1))
    if AB:
        print("\nThe same plans under the other build (%s), run in turn with the runs above:\n" % AB)
        print("| workload | plain ocl ms | this build --plan ms | speedup | match ms | other build --plan ms "
              "| speedup | match ms | this / other |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, what, rep, t0, t1, t2, w0, w1, bld, mat, t3, mat3 in rows:
            print("| %s | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2fx | %.2f | %.2f |" % (
                name, t0, t1, t0 / t1, mat, t3, t0 / t3, mat3, t1 / t3))
    print()
    for name, what, *_ in rows:
        print("- %s: %s" % (name, what))
    write_raw(dev, "-live", REPS, QUICK, {"workloads": raw})


if __name__ == "__main__":
    main()
