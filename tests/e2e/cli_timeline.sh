#!/usr/bin/env bash
# cli_timeline.sh BUILD_DIR — `clrr timeline` slices people can read, on a
# trace of sobel recorded here on the real driver, from a program and into
# files whose paths are not ASCII: every kernel slice carries its NDRange
# (global, local, offset, as the application passed them) and its arguments
# (buffers by id and name, scalars by value: the image's width and height);
# every host slice its call's arguments, outputs and return value; timed
# commands their device start and end (the recorder gives those two: queued
# and submit are left out); the recorded program's UTF-8 path survives into
# the host process's name, and `-o -` writes to stdout.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/sobel"
CLRR=$(realpath "$CLRR")
d="$TMP/dossier-été-日本"
mkdir -p "$d" || fail "mkdir $d"
cp "$APPS/sobel" "$d/sobel-ü" || fail "copying sobel"
tr="$d/trace-ñ.clrr"
"$CLRR" record --force -o "$tr" -- "$d/sobel-ü" --size 96 --iters 2 >/dev/null ||
    fail "recording sobel from $d"
"$CLRR" timeline "$tr" -o "$d/zeit-ö.json" || fail "clrr timeline"
"$CLRR" timeline "$tr" -o - >"$TMP/stdout.json" 2>"$TMP/err" || fail "timeline -o -: $(cat "$TMP/err")"
cmp -s "$d/zeit-ö.json" "$TMP/stdout.json" || fail "timeline -o - differs from -o FILE"
"$CLRR" timeline "$tr" --no-flows -o "$TMP/noflows.json" || fail "timeline --no-flows"
# the width and height sobel passes, from its own launches in the trace
python3 - "$d/zeit-ö.json" "$TMP/noflows.json" "$d/sobel-ü" <<'PY' || fail "timeline members"
import json, sys
path, noflows, prog = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(path, encoding="utf-8"))
ev = d["traceEvents"]
def die(msg):
    print("FAIL:", msg); sys.exit(1)
names = [e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"]
if not any(prog in n for n in names):
    die("the program's UTF-8 path is not in the process names: %r" % names)
kern = [e for e in ev if e.get("ph") == "X" and e["cat"].startswith("kernel")]
if len(kern) != 6:   # sobel: gx, gy, magnitude per iteration, 2 iterations
    die("%d kernel slices, not 6" % len(kern))
for k in kern:
    a = k["args"]
    if a["work_dim"] != 2 or a["global"] != [96, 96] or a["offset"] != [0, 0]:
        die("NDRange of %s: %r" % (k["name"], a))
    if not (a["local"] is None or len(a["local"]) == 2):
        die("local size of %s: %r" % (k["name"], a["local"]))
    ka = a["kernel_args"]
    bufs = [x for x in ka if x["kind"] == "buffer"]
    scal = [x for x in ka if x["kind"] == "scalar"]
    if not bufs or not all(isinstance(x["id"], int) and x["id"] > 0 for x in bufs):
        die("buffer arguments of %s: %r" % (k["name"], ka))
    if [x["value"] for x in scal][-2:] != [96, 96]:
        die("scalar arguments (w, h) of %s: %r" % (k["name"], ka))
    if not all(x.get("name") for x in ka) or not all(x.get("type") for x in ka):
        die("argument names/types from the kernel analysis missing in %s: %r" % (k["name"], ka))
    if a["device_time"]:
        dn, du = a["device_ns"], a["device_us"]
        if not (0 < dn["start"] <= dn["end"]) or "queued" in dn or "submit" in dn:
            die("device times of %s: %r" % (k["name"], dn))
        if abs(du["start"] - k["ts"]) > 0.01:
            die("device start of %s is not where its slice starts: %r vs %r" % (k["name"], du, k["ts"]))
if not any(k["args"]["device_time"] for k in kern):
    die("no kernel slice has device times")
host = {e["args"]["seq"]: e for e in ev if e.get("ph") == "X" and e["cat"] == "api"}
nd = [e for e in host.values() if e["name"] == "clEnqueueNDRangeKernel"]
if len(nd) != 6:
    die("%d host slices of clEnqueueNDRangeKernel" % len(nd))
p = nd[0]["args"]["params"]
if p["work_dim"] != 2 or p["global_work_size"] != [96, 96] or not str(p["kernel"]).startswith("#"):
    die("host arguments of clEnqueueNDRangeKernel: %r" % p)
if nd[0]["args"].get("ret") != 0:
    die("return value of clEnqueueNDRangeKernel: %r" % nd[0]["args"])
cb = [e for e in host.values() if e["name"] == "clCreateBuffer"]
if not cb or not str(cb[0]["args"]["ret"]).startswith("#") or cb[0]["args"]["params"]["size"] != 96 * 96 * 4:
    die("clCreateBuffer slice: %r" % (cb[:1],))
sk = [e for e in host.values() if e["name"] == "clSetKernelArg"]
if not sk or "arg_index" not in sk[0]["args"]["params"]:
    die("clSetKernelArg slice: %r" % (sk[:1],))
# without the analysis: still the NDRange and the raw argument values
n = json.load(open(noflows, encoding="utf-8"))
nk = [e for e in n["traceEvents"] if e.get("ph") == "X" and e["cat"].startswith("kernel")]
if len(nk) != 6 or [x["value"] for x in nk[0]["args"]["kernel_args"] if x["kind"] == "scalar"][-2:] != [96, 96]:
    die("--no-flows kernel slices: %r" % (nk[:1],))
if any(e.get("ph") in ("s", "f") for e in n["traceEvents"]):
    die("--no-flows wrote flows")
PY
echo "ok"
