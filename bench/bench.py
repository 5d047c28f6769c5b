"""clrr benchmark harness (`make bench`).

Runs, side by side in one session and alternating so that drift affects
both equally, every measured configuration REPS times and prints Markdown
tables of medians and ratios; writes every raw figure, with the machine and
OpenCL device, to bench/results/<host>-<device>.json.

  recorder microbenchmarks: call-heavy and data-heavy loops, plain vs
  recorded: ns of overhead per call, time ratio, capture MB/s, trace size
  against raw bytes moved (varying, repeated and random data);
  workloads: every tests/apps program, plain vs recorded (time ratio on the
  application's own OpenCL time, trace size);
  replay: every tests/apps program recorded once, then the plain program
  against `clrr replay` of its trace (replay's time inside enqueue/map/sync
  calls, exec_ns, against the program's own OpenCL time, ocl_ms; target
  replay <= 1.05x), with and without verification of the read-backs.

Environment: BENCH_DEVICE (passed to the programs as CLRR_APP_DEVICE and to
`clrr replay` as --device), BENCH_REPS (default 5), BENCH_QUICK=1 (smaller
loops, at most 3 runs in the replay table), BENCH_RECORD_OPTS (extra `clrr
record` options, e.g. --preload where the loader has no layer support),
BENCH_ONLY (comma-separated sections: micro, instructions, workloads, replay).

  instructions (where valgrind is installed): the layer's instructions per
  call on the application's thread under callgrind, a figure that does not
  move with the machine's noise.
"""
import json, math, os, platform, re, shutil, subprocess, sys, tempfile, time

from benchlib import med, write_raw

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
    return [CLRR, "record", "--force"] + os.environ.get("BENCH_RECORD_OPTS", "").split() + ["-o", trace, "--"] + cmd


def device_name():
    out, _ = run([os.path.join(B, "apps", "vecadd"), "--size", "1024"])
    return kv(out).get("device", "?").strip('"')


def micro():
    m = os.path.join(B, "bench", "micro")
    n_calls = "20000" if QUICK else "100000"
    n_data = "5" if QUICK else "20"
    calls = [m, "calls", n_calls]
    # (name, plain command, measured command): measured is the plain one
    # under `clrr record` with the given record options
    cases = [("call-heavy", calls, []),
             ("call-heavy, --no-device-timing", calls, ["--no-device-timing"]),
             ("data-heavy, varying", [m, "data", n_data, "varying"], []),
             ("data-heavy, repeated", [m, "data", n_data, "repeated"], []),
             ("data-heavy, random (incompressible)", [m, "data", n_data, "random"], [])]
    rows, raw = [], {}
    trace = os.path.join(TMP, "micro.clrr")
    for name, cmd, opts in cases:
        plain, rec, sizes, pcpu, rcpu, penq, renq = [], [], [], [], [], [], []
        info = {}
        for _ in range(REPS):
            out, _ = run(cmd)
            info = kv(out)
            plain.append(float(info["ns"]))
            pcpu.append(float(info["cpu_ns"]))
            penq.append(float(info.get("enq_ns", "nan")))
            rc = recorded(cmd, trace)
            out, _ = run(rc[:2] + opts + rc[2:])
            rec.append(float(kv(out)["ns"]))
            rcpu.append(float(kv(out)["cpu_ns"]))
            renq.append(float(kv(out).get("enq_ns", "nan")))
            sizes.append(os.path.getsize(trace))
        calls_n, moved = int(info["calls"]), int(info["bytes"])
        p, r = med(plain), med(rec)
        # overhead per call: the median of each round's difference against
        # the plain run just before it (robust to drift between rounds)
        dif = med([x - y for x, y in zip(rec, plain)])
        # the same on the CPU time of the application's thread: the layer's
        # work there, less sensitive to the machine's noise than wall time
        cdif = med([x - y for x, y in zip(rcpu, pcpu)])
        # and on the time inside the enqueue calls alone (micro's enq_ns:
        # without the waits for the device, in which a GPU slower than the
        # host at tiny launches hides the layer's work)
        edif = (med([x - y for x, y in zip(renq, penq)]) / int(info["enq_calls"])
                if "enq_calls" in info else float("nan"))
        rows.append((name, calls_n, p / 1e6, r / 1e6, r / p, dif / calls_n,
                     moved / (r / 1e9) / 1e6 if moved else 0.0,
                     med(sizes) / moved if moved else float("nan"), cdif / calls_n, edif))
        raw[name] = {"cmd": cmd, "record_opts": opts, "plain_ns": plain, "recorded_ns": rec,
                     "plain_cpu_ns": pcpu, "recorded_cpu_ns": rcpu,
                     "plain_enq_ns": penq, "recorded_enq_ns": renq,
                     "trace_bytes": sizes, "calls": calls_n, "bytes_moved": moved}
    # the driver's own cost of device timing: the program itself asks for
    # an event per launch on a profiling queue and reads START/END
    plain, timed = [], []
    for _ in range(REPS):
        out, _ = run(calls)
        plain.append(float(kv(out)["ns"]))
        out, _ = run(calls + ["timed"])
        timed.append(float(kv(out)["ns"]))
    launches = int(n_calls)
    raw["driver timing"] = {"plain_ns": plain, "timed_ns": timed, "launches": launches}
    # interleaved in one process (micro's ab mode): blocks through the
    # loader (and the layer) against blocks through the driver's entry
    # points, a millisecond apart; plain, the difference is the loader's
    ab = {"plain": [], "recorded": [], "recorded, --no-device-timing": []}
    for _ in range(REPS):
        out, _ = run(calls + ["ab"])
        ab["plain"].append(float(kv(out)["ab_ns"]))
        for name, opts in (("recorded", []), ("recorded, --no-device-timing", ["--no-device-timing"])):
            rc = recorded(calls + ["ab"], trace)
            out, _ = run(rc[:2] + opts + rc[2:])
            ab[name].append(float(kv(out)["ab_ns"]))
    raw["interleaved"] = ab
    print("\n### Recorder overhead (medians of %d runs)\n" % REPS)
    print("| loop | calls | plain ms | recorded ms | ratio | overhead ns/call (paired) | CPU ns/call (paired) | enqueue ns/call (paired) | capture MB/s | trace / raw bytes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %d | %.1f | %.1f | %.2fx | %s | %s | %s | %s | %s |" % (
            r[0], r[1], r[2], r[3], r[4], "%.0f" % r[5] if not r[6] else "-",
            "%.0f" % r[8] if not r[6] else "-", "%.0f" % r[9] if r[9] == r[9] else "-",
            "%.0f" % r[6] if r[6] else "-",
            "%.3f" % r[7] if r[7] == r[7] else "-"))
    print("\nCPU ns/call: the same paired difference on the CPU time of the thread that runs")
    print("the loop (the layer's work on the application's thread, without waits for the device).")
    print("enqueue ns/call: the same on the wall time inside the loop's clSetKernelArg and")
    print("clEnqueueNDRangeKernel calls alone, per such call (micro's enq_ns: each block of 256")
    print("timed up to its clFinish); where the device runs the tiny launches slower than the")
    print("host enqueues them, the loop's wall time hides the layer's work and this shows it.")
    pab = med(ab["plain"])
    print("\nThe call-heavy loop interleaved in one process (`micro calls N ab`): blocks of 256")
    print("launches through the loader (and the layer, when recorded) alternate with blocks")
    print("through the driver's own entry points; per call, the median difference of adjacent")
    print("blocks' enqueue time (each block's clSetKernelArg and launch calls, not its clFinish).")
    print("Plain, that is the loader's cost; the layer's is the recorded figure less it.\n")
    print("| run | loader (+ layer) ns/call, runs | median | layer ns/call |")
    print("|---|---|---:|---:|")
    for name, v in ab.items():
        print("| %s | %s | %.0f | %s |" % (name, " ".join("%.0f" % x for x in v), med(v),
                                         "-" if name == "plain" else "%.0f" % (med(v) - pab)))
    p, t = med(plain), med(timed)
    print("\nDevice timing in the driver, without clrr: the call-heavy loop with an event per")
    print("launch on a profiling queue, START and END read after each clFinish.\n")
    print("| launches | plain ms | timed ms | ratio | driver ns per timed launch |")
    print("|---:|---:|---:|---:|---:|")
    print("| %d | %.1f | %.1f | %.2fx | %.0f |" % (launches, p / 1e6, t / 1e6, t / p, (t - p) / launches))
    return raw


def layer_instructions():
    """The layer's instructions per call on the application's thread, from
    callgrind (steadier than the times above, within a few percent: the main
    thread's count includes its waits in clFinish): the call-heavy loop
    at two lengths, plain and recorded with device timing off (under
    valgrind's slowdown the sampled timing would time far more launches
    than at full speed); the difference of the differences, per call."""
    vg = shutil.which("valgrind")
    if not vg:
        return None
    m = os.path.join(B, "bench", "micro")
    n1, n2 = 2000, 6000
    ir = {}
    for mode in ("plain", "recorded"):
        for n in (n1, n2):
            out = os.path.join(TMP, "cg.%s.%d" % (mode, n))
            cmd = [vg, "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + out, m, "calls", str(n)]
            if mode == "recorded":
                cmd = recorded(cmd, os.path.join(TMP, "cg.clrr"))
                cmd = cmd[:2] + ["--no-device-timing"] + cmd[2:]
            p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
            main_thread = out + "-01"
            if p.returncode != 0 or not os.path.exists(main_thread):
                return None
            with open(main_thread) as f:
                ir[mode, n] = next(int(l.split()[1]) for l in f if l.startswith("summary:"))
    per_iter = ((ir["recorded", n2] - ir["recorded", n1]) - (ir["plain", n2] - ir["plain", n1])) / (n2 - n1)
    plain_iter = (ir["plain", n2] - ir["plain", n1]) / (n2 - n1)
    print("\nInstructions on the application's thread (callgrind; call-heavy loop, %d vs %d" % (n1, n2))
    print("iterations of clSetKernelArg + launch, recorded with --no-device-timing):\n")
    print("| per iteration: driver | per iteration: layer | layer per call |")
    print("|---:|---:|---:|")
    print("| %.0f | %.0f | %.0f |" % (plain_iter, per_iter, per_iter / 2))
    return {"ir": {"%s-%d" % k: v for k, v in ir.items()}, "layer_per_call": per_iter / 2}


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


REPLAY_TARGET = 1.05


def replay_once(trace, verify):
    """One `clrr replay --json` run: (parsed JSON or None, process wall s, rc, error)."""
    cmd = [CLRR, "replay", "--json"] + (["--device", DEVICE] if DEVICE else []) + \
          ([] if verify else ["--no-verify"]) + [trace]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - t0, None, "timed out"
    wall = time.monotonic() - t0
    j = None
    try:
        j = json.loads(p.stdout)
    except ValueError:
        pass
    # exit 1: a read-back differed; the JSON still holds the figures
    if j is None or p.returncode not in (0, 1):
        err = p.stderr.strip()[-300:] or "no JSON"
        if p.returncode < 0:
            err = "killed by signal %d: %s" % (-p.returncode, err)
        return None, wall, p.returncode, err
    return j, wall, p.returncode, ""


def replays():
    apps = sorted(os.listdir(os.path.join(B, "apps")))
    reps = min(REPS, 3) if QUICK else REPS
    rows, raw, warnings = [], {}, []
    for a in apps:
        cmd = [os.path.join(B, "apps", a)]
        trace = os.path.join(TMP, a + ".replay.clrr")
        run(recorded(cmd + ["--quiet"], trace))
        r = {"cmd": cmd, "trace_bytes": os.path.getsize(trace), "app_ocl_ms": [], "app_wall_s": [],
             "replay_exec_ns": [], "replay_wall_ns": [], "replay_process_wall_s": [], "replay_device_ns": [],
             "readbacks": [], "unverified": [], "mismatches": [], "replay_failures": [],
             "noverify_exec_ns": [], "noverify_wall_ns": [], "noverify_process_wall_s": [],
             "noverify_failures": []}
        for _ in range(reps):
            out, w = run(cmd)
            r["app_ocl_ms"].append(float(kv(out)["ocl_ms"]))
            r["app_wall_s"].append(w)
            j, w, rc, err = replay_once(trace, True)
            if j is None:
                r["replay_failures"].append({"rc": rc, "error": err})
            else:
                r["replay_exec_ns"].append(j["exec_ns"])
                r["replay_wall_ns"].append(j["wall_ns"])
                r["replay_process_wall_s"].append(w)
                r["replay_device_ns"].append(j.get("device_ns", 0))
                r["readbacks"].append(j["readbacks"])
                r["unverified"].append(j.get("unverified", 0))
                r["mismatches"].append(j["mismatches"])
                for k in ("device", "recorded_device", "calls", "commands", "kernels"):
                    r[k] = j.get(k)
            j, w, rc, err = replay_once(trace, False)
            if j is None:
                r["noverify_failures"].append({"rc": rc, "error": err})
            else:
                r["noverify_exec_ns"].append(j["exec_ns"])
                r["noverify_wall_ns"].append(j["wall_ns"])
                r["noverify_process_wall_s"].append(w)
        os.remove(trace)
        raw[a] = r
        app = med(r["app_ocl_ms"])
        ex = med(r["replay_exec_ns"]) / 1e6 if r["replay_exec_ns"] else float("nan")
        nv = med(r["noverify_exec_ns"]) / 1e6 if r["noverify_exec_ns"] else float("nan")
        wv = med(r["replay_wall_ns"]) / 1e6 if r["replay_wall_ns"] else float("nan")
        wn = med(r["noverify_wall_ns"]) / 1e6 if r["noverify_wall_ns"] else float("nan")
        rb = max(r["readbacks"]) if r["readbacks"] else 0
        mm = max(r["mismatches"]) if r["mismatches"] else 0
        unv = max(r["unverified"]) if r["unverified"] else 0
        rows.append((a, app, ex, ex / app, nv, wv, wn, rb, unv, mm, len(r["replay_failures"]),
                     len(r["noverify_failures"]), reps))
        if mm:
            warnings.append("%s: %d read-back(s) differ from the recording" % (a, mm))
        for what, key in (("clrr replay", "replay_failures"), ("clrr replay --no-verify", "noverify_failures")):
            if r[key]:
                warnings.append("%s: %s failed in %d of %d runs (%s)" % (
                    a, what, len(r[key]), reps, r[key][0]["error"].splitlines()[-1] if r[key][0]["error"] else
                    "rc %s" % r[key][0]["rc"]))

    def ms(v, failed, n):
        if v != v:
            return "failed"
        return "%.1f" % v + (" (%d/%d failed)" % (failed, n) if failed else "")

    print("\n### Replay: application vs `clrr replay` (medians of %d runs, default sizes)\n" % reps)
    print("app: the program's own OpenCL time (ocl_ms); replay exec: `clrr replay` time inside "
          "enqueue/map/sync calls (exec_ns); replay wall: the whole replay session, trace opened to end "
          "(wall_ns, verification included unless --no-verify).\n")
    print("| workload | app OpenCL ms | replay exec ms | ratio | --no-verify exec ms | replay wall ms "
          "| --no-verify wall ms | verified read-backs | mismatches |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %.1f | %s | %s | %s | %s | %s | %s | %d |" % (
            r[0], r[1], ms(r[2], r[10], r[12]), "%.2fx" % r[3] if r[3] == r[3] else "-",
            ms(r[4], r[11], r[12]), ms(r[5], r[10], r[12]), ms(r[6], r[11], r[12]),
            "%d" % r[7] + (" (+%d unverified)" % r[8] if r[8] else ""), r[9]))
    ratios = [r[3] for r in rows if r[3] == r[3] and r[3] > 0]
    if ratios:
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        ok = sum(1 for x in ratios if x <= REPLAY_TARGET)
        print("\ngeometric mean ratio replay exec / app OpenCL: %.2fx; %d of %d workloads at <= %.2fx" % (
            gm, ok, len(rows), REPLAY_TARGET))
    for w in warnings:
        print("\n**WARNING: %s**" % w)
    return raw


def main():
    dev = device_name()
    print("## clrr bench — %s, device: %s, %d cores" % (platform.node(), dev, os.cpu_count()))
    only = os.environ.get("BENCH_ONLY", "")
    res = {}
    for name, fn in (("micro", micro), ("instructions", layer_instructions),
                     ("workloads", workloads), ("replay", replays)):
        if not only or name in only.split(","):
            res[name] = fn()
    write_raw(dev, "-" + re.sub(r"\W+", "-", only) if only else "", REPS, QUICK, res)
    shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
