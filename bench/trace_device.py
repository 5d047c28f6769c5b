#!/usr/bin/env python3
"""trace_device.py — the device(s) a trace's first clCreateContext used,
by name, from `clrr dump --json TRACE` on stdin (the recorder benchmarks
check that every recorded run ran where it should: on the GPU machine
PoCL's CPU is platform 0)."""
import json
import sys

names, ctx = {}, None
for line in sys.stdin:
    d = json.loads(line)
    if d.get("type") == "call" and d.get("fn") == "clCreateContext" and ctx is None:
        ctx = d.get("args", {}).get("devices")
    for dev in (d.get("devices") or []) if isinstance(d.get("devices"), list) else []:
        if isinstance(dev, dict) and "id" in dev:
            names[dev["id"]] = dev.get("name") or dev.get("CL_DEVICE_NAME")
ids = ctx if isinstance(ctx, list) else [ctx]
print(", ".join(str(names.get(i, "#%s" % i)) for i in ids))
