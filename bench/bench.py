"""clrr benchmark harness (`make bench`).

Runs, side by side in one session and alternating so that drift affects
both equally, every measured configuration REPS times and prints Markdown
tables of medians and ratios; writes every raw figure, with the machine and
OpenCL device, to bench/results/<host>-<device>.json.

  recorder microbenchmarks: call-heavy and data-heavy loops, plain vs
  recorded: ns of overhead per call, time ratio, capture MB/s, trace size
  against raw bytes moved (varying and repeated data);
  workloads: every tests/apps program, plain vs recorded (time ratio on the
  application's own OpenCL time, trace size).

Environment: BENCH_DEVICE (passed to the programs as CLRR_APP_DEVICE),
BENCH_REPS (default 5), BENCH_QUICK=1 (smaller loops), BENCH_RECORD_OPTS (extra
`clrr record` options, e.g. --preload where the loader has no layer support).
"""
import json, os, platform, re, statistics, subprocess, sys, tempfile, time

B = sys.argv[1] if len(sys.argv) > 1 else "build"
REPS = int(os.environ.get("BENCH_REPS", "5"))
QUICK = os.environ.get("BENCH_QUICK") == "1"
DEVICE = os.environ.get("BENCH_DEVICE", "")
CLRR = os.path.join(B, "bin", "clrr")
ENV = dict(os.environ)
if DEVICE:
    ENV["CLRR_APP_DEVICE"] = DEVICE
TMP = tempfile.mkdtemp(prefix="clrr-bench.")


def run(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("bench: %s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return p.stdout, wall


def kv(line):
    return dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))


def recorded(cmd, trace):
    return [CLRR, "record"] + os.environ.get("BENCH_RECORD_OPTS", "").split() + ["-o", trace, "--"] + cmd


def med(xs):
    return statistics.median(xs)


def device_name():
    out, _ = run([os.path.join(B, "apps", "vecadd"), "--size", "1024"])
    return kv(out).get("device", "?").strip('"')


def micro():
    m = os.path.join(B, "bench", "micro")
    n_calls = "20000" if QUICK else "100000"
    n_data = "5" if QUICK else "20"
    cases = [("call-heavy", [m, "calls", n_calls]),
             ("data-heavy, varying", [m, "data", n_data, "varying"]),
             ("data-heavy, repeated", [m, "data", n_data, "repeated"])]
    rows, raw = [], {}
    for name, cmd in cases:
        plain, rec, sizes = [], [], []
        info = {}
        trace = os.path.join(TMP, "micro.clrr")
        for _ in range(REPS):
            out, _ = run(cmd)
            info = kv(out)
            plain.append(float(info["ns"]))
            out, _ = run(recorded(cmd, trace))
            rec.append(float(kv(out)["ns"]))
            sizes.append(os.path.getsize(trace))
        calls, moved = int(info["calls"]), int(info["bytes"])
        p, r = med(plain), med(rec)
        rows.append((name, calls, p / 1e6, r / 1e6, r / p, (r - p) / calls,
                     moved / (r / 1e9) / 1e6 if moved else 0.0,
                     med(sizes) / moved if moved else float("nan")))
        raw[name] = {"cmd": cmd, "plain_ns": plain, "recorded_ns": rec, "trace_bytes": sizes,
                     "calls": calls, "bytes_moved": moved}
    print("\n### Recorder overhead (medians of %d runs)\n" % REPS)
    print("| loop | calls | plain ms | recorded ms | ratio | overhead ns/call | capture MB/s | trace / raw bytes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %d | %.1f | %.1f | %.2fx | %s | %s | %s |" % (
            r[0], r[1], r[2], r[3], r[4], "%.0f" % r[5] if not r[6] else "-",
            "%.0f" % r[6] if r[6] else "-",
            "%.3f" % r[7] if r[7] == r[7] else "-"))
    return raw


def workloads():
    apps = sorted(os.listdir(os.path.join(B, "apps")))
    rows, raw = [], {}
    for a in apps:
        cmd = [os.path.join(B, "apps", a)]
        trace = os.path.join(TMP, a + ".clrr")
        plain, rec, wall_p, wall_r, sizes = [], [], [], [], []
        for _ in range(REPS):
            out, w = run(cmd)
            plain.append(float(kv(out)["ocl_ms"]))
            wall_p.append(w)
            out, w = run(recorded(cmd, trace))
            rec.append(float(kv(out)["ocl_ms"]))
            wall_r.append(w)
            sizes.append(os.path.getsize(trace))
        rows.append((a, med(plain), med(rec), med(rec) / med(plain), med(wall_p), med(wall_r), med(sizes)))
        raw[a] = {"plain_ocl_ms": plain, "recorded_ocl_ms": rec, "plain_wall_s": wall_p,
                  "recorded_wall_s": wall_r, "trace_bytes": sizes}
    print("\n### Workloads: plain vs recorded (medians of %d runs, default sizes)\n" % REPS)
    print("| workload | plain OpenCL ms | recorded OpenCL ms | ratio | plain wall s | recorded wall s | trace KiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %.1f | %.1f | %.2fx | %.2f | %.2f | %.0f |" % (r[0], r[1], r[2], r[3], r[4], r[5], r[6] / 1024))
    return raw


def main():
    dev = device_name()
    print("## clrr bench — %s, device: %s, %d cores" % (platform.node(), dev, os.cpu_count()))
    res = {"host": platform.node(), "device": dev, "cpus": os.cpu_count(), "reps": REPS,
           "quick": QUICK, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    res["micro"] = micro()
    res["workloads"] = workloads()
    os.makedirs("bench/results", exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", dev).strip("-").lower()[:40]
    path = os.path.join("bench", "results", "%s.json" % slug)
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print("\nraw figures: %s" % path)


if __name__ == "__main__":
    main()
