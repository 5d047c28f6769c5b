#!/usr/bin/env bash
# gpu_recorder_overlap.sh [BUILD] — the recorder's capture of host memory
# during the driver's call (issue 33, item 8; recorder/README.md "What a
# call record holds"): `micro data ITERS random|varying|repeated` plain,
# recorded with the overlap off (CLRR_REC_OVERLAP=0: captured before the
# driver's call) and recorded with it on, interleaved for ROUNDS rounds
# (the order of off and on alternating), each loop's own time (micro's
# ns=). Writes a markdown table (medians, ranges, ratios to plain, the
# median of each round's difference on - off) to $OUT/recorder-overlap.md
# and prints it.
#
# On a machine with NVIDIA's OpenCL (libnvidia-opencl.so.1) the loops run
# on the GPU (CLRR_APP_DEVICE=gpu, OCL_ICD_VENDORS=/tmp/vend naming it and
# PoCL, the layer preloaded: CUDA's libOpenCL loads no layers); elsewhere
# on the first platform's first device (PoCL here: the figures then mean
# little). The device each run used is checked (the recorded
# clCreateContext's device, by name: NVIDIA's, on the GPU machine) and
# printed.
#
# Environment: OUT (default bench-out), ROUNDS (7), ITERS (20), MODES
# ("random varying repeated"), TRACE (the trace's path, default
# /tmp/clrr-overlap.clrr: one file, replaced each run), LIMIT_S (230: no
# new round starts after this many seconds; the table says how many ran).
# On the H200 machine (16 cores) the whole run takes about 3-4 minutes.
set -u
B=${1:-build}
OUT=${OUT:-bench-out}
ROUNDS=${ROUNDS:-7}
ITERS=${ITERS:-20}
MODES=${MODES:-random varying repeated}
TRACE=${TRACE:-/tmp/clrr-overlap.clrr}
LIMIT_S=${LIMIT_S:-230}
M=$B/bench/micro
CLRR=$B/bin/clrr
[ -x "$M" ] && [ -x "$CLRR" ] || { echo "gpu_recorder_overlap.sh: no $M or $CLRR (make first)" >&2; exit 2; }
mkdir -p "$OUT"
unset CLRR_REC_OVERLAP
if ldconfig -p 2>/dev/null | grep -q "libnvidia-opencl.so.1"; then
    mkdir -p /tmp/vend
    echo libnvidia-opencl.so.1 >/tmp/vend/nvidia.icd
    cp /etc/OpenCL/vendors/pocl.icd /tmp/vend/ 2>/dev/null
    export OCL_ICD_VENDORS=/tmp/vend CLRR_APP_DEVICE=gpu
    REC_OPTS=${REC_OPTS:---preload}
    where="GPU (CLRR_APP_DEVICE=gpu)"
else
    REC_OPTS=${REC_OPTS:-}
    where="the first platform's first device (no NVIDIA OpenCL here)"
fi
RAW=$OUT/recorder-overlap.raw
: >"$RAW"
log=$(mktemp)
trap 'rm -f "$log" "$TRACE"' EXIT

ns() {   # the loop's ns= of micro's last line in $log
    tail -1 "$log" | sed -n 's/.* ns=\([0-9][0-9]*\) .*/\1/p'
}
# run MODE VARIANT: one micro run, its time appended to $RAW
run() {
    local mode=$1 v=$2 rc=0
    case $v in
    plain) "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    off) CLRR_REC_OVERLAP=0 "$CLRR" record --quiet --force $REC_OPTS -o "$TRACE" -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    on) "$CLRR" record --quiet --force $REC_OPTS -o "$TRACE" -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    esac
    local t; t=$(ns)
    if [ "$rc" != 0 ] || [ -z "$t" ]; then
        echo "gpu_recorder_overlap.sh: micro data $ITERS $mode ($v): exit $rc: $(tail -3 "$log")" >&2
        exit 1
    fi
    local size=0
    [ "$v" = plain ] || size=$(stat -c %s "$TRACE")
    echo "$mode $v $round $t $size" >>"$RAW"
}
# device MODE: the device of the recorded clCreateContext in $TRACE
device() {
    "$CLRR" dump --json "$TRACE" | python3 -c '
import json, sys
names, ctx = {}, None
for line in sys.stdin:
    d = json.loads(line)
    if d.get("type") == "call" and d.get("fn") == "clCreateContext" and ctx is None:
        ctx = d.get("args", {}).get("devices")
    for dev in (d.get("devices") or []) if isinstance(d.get("devices"), list) else []:
        if isinstance(dev, dict) and "id" in dev:
            names[dev["id"]] = dev.get("name") or dev.get("CL_DEVICE_NAME")
ids = ctx if isinstance(ctx, list) else [ctx]
print(", ".join(str(names.get(i, "#%s" % i)) for i in ids))'
}

echo "== clrr devices"
"$CLRR" devices
start=$(date +%s)
devs=""
done_rounds=0
for round in $(seq 1 "$ROUNDS"); do
    if [ $(( $(date +%s) - start )) -ge "$LIMIT_S" ]; then
        echo "time limit ($LIMIT_S s) reached before round $round" >&2
        break
    fi
    for mode in $MODES; do
        if [ $((round % 2)) = 1 ]; then order="plain off on"; else order="plain on off"; fi
        for v in $order; do
            run "$mode" "$v"
            if [ "$round" = 1 ] && [ "$v" != plain ]; then
                d=$(device)
                devs="$devs$mode/$v: $d; "
                if [ -n "${CLRR_APP_DEVICE:-}" ] && ! echo "$d" | grep -qi nvidia; then
                    echo "gpu_recorder_overlap.sh: micro data $mode ($v) ran on '$d', not NVIDIA's GPU" >&2
                    exit 1
                fi
            fi
        done
    done
    done_rounds=$round
    echo "round $round done ($(( $(date +%s) - start )) s)" >&2
done
[ "$done_rounds" -ge 1 ] || { echo "gpu_recorder_overlap.sh: no round ran" >&2; exit 1; }

python3 - "$RAW" "$OUT/recorder-overlap.md" "$ITERS" "$done_rounds" "$where" "$devs" "$(nproc)" <<'PY'
import statistics as st, sys
raw, out, iters, rounds, where, devs, cores = sys.argv[1:8]
rows = [l.split() for l in open(raw) if l.strip()]
modes = []
t = {}
size = {}
for mode, v, r, ns, sz in rows:
    if mode not in modes:
        modes.append(mode)
    t.setdefault((mode, v), {})[int(r)] = int(ns) / 1e6
    if v != "plain":
        size.setdefault((mode, v), []).append(int(sz))
def med(d): return st.median(d.values())
def rng(d): return "%.1f-%.1f" % (min(d.values()), max(d.values()))
L = []
L.append("# Recorder: capture during the driver's call (CLRR_REC_OVERLAP)\n")
L.append("`micro data %s MODE`, loop time in ms; %s rounds of plain / recorded with the "
         "overlap off (CLRR_REC_OVERLAP=0) / recorded with it on (the order of off and on "
         "alternating), on %s, %s CPUs. Devices used (the recorded clCreateContext's): %s\n"
         % (iters, rounds, where, cores, devs.strip() or "-"))
L.append("| data | plain median (range) | off median (range) | on median (range) | off / plain | on / plain | on - off, paired median ms (range) | trace MB off / on |")
L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
for m in modes:
    p, off, on = t[(m, "plain")], t[(m, "off")], t[(m, "on")]
    pm, om, nm = med(p), med(off), med(on)
    diffs = [on[r] - off[r] for r in on if r in off]
    so = st.median(size[(m, "off")]) / 1e6
    sn = st.median(size[(m, "on")]) / 1e6
    L.append("| %s | %.1f (%s) | %.1f (%s) | %.1f (%s) | %.3fx | %.3fx | %+.1f (%+.1f..%+.1f) | %.1f / %.1f |"
             % (m, pm, rng(p), om, rng(off), nm, rng(on), om / pm, nm / pm,
                st.median(diffs), min(diffs), max(diffs), so, sn))
L.append("")
L.append("Per round (ms), plain / off / on:\n")
for m in modes:
    rs = sorted(t[(m, "plain")])
    L.append("- %s: " % m + "; ".join("%.0f / %.0f / %.0f" % (t[(m, "plain")][r], t[(m, "off")].get(r, 0),
                                                           t[(m, "on")].get(r, 0)) for r in rs))
L.append("")
open(out, "w").write("\n".join(L))
print("\n".join(L))
PY
