"""What the benchmark scripts (bench.py, opt.py, live.py) share: medians
and the raw figures' file, bench/results/<device><suffix>.json."""
import json, os, platform, re, statistics, time


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def write_raw(dev, suffix, reps, quick, data):
    """Writes the run's description and @data to bench/results/ and says where."""
    os.makedirs("bench/results", exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", dev).strip("-").lower()[:40]
    path = os.path.join("bench", "results", "%s%s.json" % (slug, suffix))
    with open(path, "w") as f:
        json.dump(dict({"host": platform.node(), "device": dev, "cpus": os.cpu_count(), "reps": reps, "quick": quick,
                        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, **data), f, indent=1)
    print("\nraw figures: %s" % path)
    return path
