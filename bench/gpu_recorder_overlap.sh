#!/usr/bin/env bash
# gpu_recorder_overlap.sh [BUILD] — the recorder's capture of host memory
# during the driver's call and of large blocking reads in pieces (issue 33,
# item 8; recorder/README.md "What a call record holds"): `micro data ITERS
# random|varying|repeated` plain and recorded three ways, interleaved for
# ROUNDS rounds (the order of the recorded ones turning each round), each
# loop's own time (micro's ns=):
#   off  both off (CLRR_REC_OVERLAP=0 CLRR_REC_PIPELINE_READS=0: inputs
#        captured before the driver's call, read-backs after it)
#   ov   the overlap on, pipelined reads off (CLRR_REC_PIPELINE_READS=0)
#   on   both on (the default)
# Writes a markdown table (medians, ranges, ratios to plain, the median of
# each round's difference to off, what CLRR_REC_COUNTS counted in round 1:
# captures overlapped / reads pipelined per run) to
# $OUT/recorder-overlap.md and prints it.
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
# ("random varying repeated"; on the GPU machine's 300 s, MODES="random
# repeated" ROUNDS=6), TRACE (the trace's path, default
# /tmp/clrr-overlap.clrr: one file, replaced each run), LIMIT_S (230: no
# new round starts after this many seconds; the table says how many ran).
# On the H200 machine (16 cores) a run took about 3 s (the old three
# variants: 63 runs in 3-4 minutes); MODES="random repeated" ROUNDS=6 is
# 48 runs.
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
unset CLRR_REC_OVERLAP CLRR_REC_PIPELINE_READS CLRR_REC_COUNTS
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
counts=$(mktemp)
trap 'rm -f "$log" "$TRACE" "$counts"' EXIT

ns() {   # the loop's ns= of micro's last line in $log
    tail -1 "$log" | sed -n 's/.* ns=\([0-9][0-9]*\) .*/\1/p'
}
# run MODE VARIANT: one micro run, its time appended to $RAW
run() {
    local mode=$1 v=$2 rc=0
    : >"$counts"
    case $v in
    plain) "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    off) CLRR_REC_COUNTS=$counts CLRR_REC_OVERLAP=0 CLRR_REC_PIPELINE_READS=0 "$CLRR" record --quiet --force $REC_OPTS -o "$TRACE" -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    ov) CLRR_REC_COUNTS=$counts CLRR_REC_PIPELINE_READS=0 "$CLRR" record --quiet --force $REC_OPTS -o "$TRACE" -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    on) CLRR_REC_COUNTS=$counts "$CLRR" record --quiet --force $REC_OPTS -o "$TRACE" -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    esac
    local t; t=$(ns)
    if [ "$rc" != 0 ] || [ -z "$t" ]; then
        echo "gpu_recorder_overlap.sh: micro data $ITERS $mode ($v): exit $rc: $(tail -3 "$log")" >&2
        exit 1
    fi
    local size=0 ovc=0 pipec=0
    if [ "$v" != plain ]; then
        size=$(stat -c %s "$TRACE")
        ovc=$(sed -n 's/^overlapped_captures \([0-9]*\) .*/\1/p' "$counts" | tail -1)
        pipec=$(sed -n 's/.* pipelined_reads \([0-9]*\)$/\1/p' "$counts" | tail -1)
    fi
    echo "$mode $v $round $t $size ${ovc:-?} ${pipec:-?}" >>"$RAW"
}
# device MODE: the device of the recorded clCreateContext in $TRACE
device() {
    "$CLRR" dump --json "$TRACE" | python3 "$(dirname "$0")/trace_device.py"
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
        case $((round % 3)) in
        1) order="plain off ov on" ;;
        2) order="plain on off ov" ;;
        *) order="plain ov on off" ;;
        esac
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
cnt = {}
for mode, v, r, ns, sz, ovc, pipec in rows:
    if mode not in modes:
        modes.append(mode)
    t.setdefault((mode, v), {})[int(r)] = int(ns) / 1e6
    if v != "plain":
        size.setdefault((mode, v), []).append(int(sz))
        cnt.setdefault((mode, v), "%s/%s" % (ovc, pipec))
def med(d): return st.median(d.values())
def rng(d): return "%.1f-%.1f" % (min(d.values()), max(d.values()))
L = []
L.append("# Recorder: capture during the driver's call (CLRR_REC_OVERLAP) and pipelined reads (CLRR_REC_PIPELINE_READS)\n")
L.append("`micro data %s MODE`, loop time in ms; %s rounds of plain / recorded with both off "
         "(off) / with the overlap only (ov: CLRR_REC_PIPELINE_READS=0) / with both (on, the "
         "default), the order of the recorded ones turning each round, on %s, %s CPUs. Devices "
         "used (the recorded clCreateContext's): %s\n"
         % (iters, rounds, where, cores, devs.strip() or "-"))
L.append("| data | plain median (range) | off median (range) | ov median (range) | on median (range) | off / plain | ov / plain | on / plain | ov - off, paired median ms (range) | on - off, paired median ms (range) | on - ov, paired median ms | trace MB off / ov / on | counts off / ov / on (overlapped / pipelined per run) |")
L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
def paired(a, b):
    d = [a[r] - b[r] for r in a if r in b]
    return st.median(d), min(d), max(d)
for m in modes:
    p, off, ov, on = t[(m, "plain")], t[(m, "off")], t[(m, "ov")], t[(m, "on")]
    pm, om, vm, nm = med(p), med(off), med(ov), med(on)
    d1, d2, d3 = paired(ov, off), paired(on, off), paired(on, ov)
    sz = " / ".join("%.1f" % (st.median(size[(m, v)]) / 1e6) for v in ("off", "ov", "on"))
    L.append("| %s | %.1f (%s) | %.1f (%s) | %.1f (%s) | %.1f (%s) | %.3fx | %.3fx | %.3fx | %+.1f (%+.1f..%+.1f) | %+.1f (%+.1f..%+.1f) | %+.1f | %s | %s |"
             % (m, pm, rng(p), om, rng(off), vm, rng(ov), nm, rng(on), om / pm, vm / pm, nm / pm,
                d1[0], d1[1], d1[2], d2[0], d2[1], d2[2], d3[0], sz,
                " / ".join(cnt.get((m, v), "-") for v in ("off", "ov", "on"))))
L.append("")
L.append("Per round (ms), plain / off / ov / on:\n")
for m in modes:
    rs = sorted(t[(m, "plain")])
    L.append("- %s: " % m + "; ".join("%.0f / %.0f / %.0f / %.0f" % (t[(m, "plain")][r], t[(m, "off")].get(r, 0),
                                                                  t[(m, "ov")].get(r, 0), t[(m, "on")].get(r, 0))
                                      for r in rs))
L.append("")
open(out, "w").write("\n".join(L))
print("\n".join(L))
PY
