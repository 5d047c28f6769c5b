"""clrr optimizer benchmark (`make bench-opt`; also the last table of `make bench`).

For each workload where the optimizer's passes find something (and one
where they find nothing, as a control): record it once, `clrr optimize` it,
then replay it REPS times without and with the plan (each replay running
the trace LOOPS times, --loop), alternating so that drift affects both
equally, and print a Markdown table of medians:
transformations per pass, commands the plan drops, replay time inside
enqueue/map/sync calls (the per-loop median: steady state, after the first
loop paid for builds and first launches) and of the whole session (wall_ns), the
speedup, and the device time the plan expected to save (from the recorded
device times). Every run must verify (exit 0, no mismatches, the plan fully
applied). Raw figures go to bench/results/<device>-opt.json.

Environment: BENCH_DEVICE (passed to `clrr replay` as --device), BENCH_REPS
(default 5), BENCH_LOOPS (default 3), BENCH_QUICK=1 (smaller workloads, 3 runs).
"""
import json, os, subprocess, sys, tempfile

from benchlib import med, write_raw

B = sys.argv[1] if len(sys.argv) > 1 else "build"
QUICK = os.environ.get("BENCH_QUICK") == "1"
REPS = min(int(os.environ.get("BENCH_REPS", "5")), 3 if QUICK else 1000)
DEVICE = os.environ.get("BENCH_DEVICE", "")
LOOPS = int(os.environ.get("BENCH_LOOPS", "3"))
CLRR = os.path.join(B, "bin", "clrr")
TMP = tempfile.mkdtemp(prefix="clrr-bench-opt.")

DW = os.path.join(B, "tests", "progs", "deadwork")
WORKLOADS = [
    # name, command (recorded), what the passes find there
    ("deadwork", [DW, "--size", "32768" if QUICK else "131072", "--iters", "6", "--work", "8", "--quiet"],
     "unread kernels, overwritten writes, same coefficients every iteration"),
    ("spmv", [os.path.join(B, "apps", "spmv"), "--iters", "6", "--quiet"] + (["--size", "16384"] if QUICK else []),
     "the matrix written again every iteration"),
    ("helium", [os.path.join(B, "tests", "progs", "helium")], "kernels and writes nobody reads"),
    ("sobel", [os.path.join(B, "apps", "sobel"), "--iters", "6", "--quiet"] + (["--size", "256"] if QUICK else []),
     "gy -> magnitude fused (Helium's Sobel)"),
    ("geomatrix", [os.path.join(B, "apps", "geomatrix"), "--iters", "6", "--quiet"] +
     (["--size", "256"] if QUICK else []), "the chain mul -> ... -> pow fused into one kernel (Helium's geoMatrix)"),
    ("exposure", [os.path.join(B, "apps", "exposure"), "--iters", "6", "--quiet"] +
     (["--size", "256"] if QUICK else []), "well_exposed -> weight fused (Helium's exposure fusion)"),
    ("vecadd", [os.path.join(B, "apps", "vecadd"), "--iters", "6", "--quiet"] + (["--size", "65536"] if QUICK else []),
     "nothing (control)"),
]


def run(cmd, ok=(0,)):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode not in ok:
        sys.exit("bench-opt: %s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return p.stdout


def replay(trace, plan):
    cmd = [CLRR, "replay", "--json", "--loop", str(LOOPS)] + (["--device", DEVICE] if DEVICE else []) + [trace] + \
          (["--plan", plan] if plan else [])
    j = json.loads(run(cmd))
    if not j["ok"] or j["mismatches"]:
        sys.exit("bench-opt: %s did not verify" % " ".join(cmd))
    if plan and (j["plan"]["applied"] != j["plan"]["transformations"]):
        sys.exit("bench-opt: %s applied %d of %d transformations" % (
            " ".join(cmd), j["plan"]["applied"], j["plan"]["transformations"]))
    return j


def main():
    rows, raw = [], {}
    dev = "?"
    for name, cmd, what in WORKLOADS:
        if not os.path.exists(cmd[0]):
            print("(skipping %s: %s is not built)" % (name, cmd[0]))
            continue
        trace, plan = os.path.join(TMP, name + ".clrr"), os.path.join(TMP, name + ".plan")
        run([CLRR, "record", "--force", "-o", trace, "--"] + cmd)
        o = json.loads(run([CLRR, "optimize", trace, "-o", plan, "--json"]))
        r = {"cmd": cmd, "optimize": o, "plain": [], "plan": []}
        for _ in range(REPS):
            for key, p in (("plain", None), ("plan", plan)):
                j = replay(trace, p)
                dev = j["device"]
                r[key].append({"exec_ns": j["exec_ns_loop_median"], "wall_ns": j["wall_ns"], "commands": j["commands"],
                               "kernels": j["kernels"], "readbacks": j["readbacks"],
                               "dropped": j.get("plan", {}).get("dropped", 0),
                               "fused": j.get("plan", {}).get("fused", 0),
                               "expected": j.get("plan", {}).get("expected")})
        raw[name] = r
        ex0 = med([x["exec_ns"] for x in r["plain"]]) / 1e6
        ex1 = med([x["exec_ns"] for x in r["plan"]]) / 1e6
        wa0 = med([x["wall_ns"] for x in r["plain"]]) / 1e6
        wa1 = med([x["wall_ns"] for x in r["plan"]]) / 1e6
        passes = {p["name"]: p for p in o["passes"]}
        exp = r["plan"][0]["expected"] or {}
        rows.append((name, what, o["calls"], passes["dead"]["transformations"],
                     passes["redundant"]["transformations"], exp.get("commands", 0),
                     (passes["dead"]["bytes"] + passes["redundant"]["bytes"]) / 1024,
                     exp.get("device_ns", 0) / 1e6, ex0, ex1, ex0 / ex1 if ex1 else float("nan"), wa0, wa1,
                     r["plain"][0]["readbacks"], r["plan"][0]["fused"] // LOOPS))
    print("\n### Optimizer: `clrr replay` without and with `--plan` (medians of %d runs, alternating)\n" % REPS)
    print("exec: time inside enqueue/map/sync calls, per-loop median of --loop %d (exec_ns_loop_median); "
          "wall: the whole replay session (wall_ns, all loops); " % LOOPS +
          "expected: recorded device time of the dropped commands (and of the producer launches fused away); fused launches: launches of a generated kernel, each in place of a pair or a chain of launches; commands saved: the plan's applied transformations' commands (dropped, and launches fused away). Every run verified every read-back.\n")
    print("| workload | calls | dead | redundant | fused launches | commands saved | KiB not moved | expected ms "
          "| replay exec ms | --plan exec ms | speedup | replay wall ms | --plan wall ms | read-backs |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %d | %d | %d | %d | %d | %.0f | %.1f | %.1f | %.1f | %.2fx | %.1f | %.1f | %d |" % (
            r[0], r[2], r[3], r[4], r[14], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13]))
    print()
    for r in rows:
        print("- %s: %s" % (r[0], r[1]))
    write_raw(dev, "-opt", REPS, QUICK, {"workloads": raw})


if __name__ == "__main__":
    main()
