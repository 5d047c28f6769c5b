#!/usr/bin/env bash
# gpu_recorder_overlap.sh [BUILD] — the recorder's paths for moving data
# (issue 33, item 8; recorder/README.md "What a call record holds"):
# `micro data ITERS random|varying|repeated` plain and recorded several
# ways (VARIANTS), interleaved for ROUNDS rounds (the order of the recorded
# ones turning each round), each loop's own time (micro's ns=):
#   off    the capture before the driver's call, read-backs after it, no
#          staging (CLRR_REC_OVERLAP=0 CLRR_REC_PIPELINE_READS=0 --stage off)
#   ov     the capture during the driver's call, no pipelined reads, no
#          staging (CLRR_REC_PIPELINE_READS=0 --stage off)
#   on     the capture during the driver's call and pipelined reads, no
#          staging (--stage off: the capture's own cost)
#   stage  the default: transfers staged through the layer's pinned
#          memory (--stage auto) beside the capture, a staged read's
#          read-back captured from the layer's block after the call returns
#   stagecall  the same with staged read-backs captured from the
#          application's memory before the call returns
#          (CLRR_REC_STAGE_HOLD=0)
# Writes a markdown table (medians, ranges, ratios to plain, the median of
# each round's difference to the first recorded variant, what
# CLRR_REC_COUNTS counted in round 1: captures overlapped / reads
# pipelined / transfers staged per run) to $OUT/recorder-overlap.md and
# prints it.
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
# ("random varying repeated"), VARIANTS ("off on stage"), TRACE (the
# trace's path, default /tmp/clrr-overlap.clrr: one file, replaced each
# run), LIMIT_S (230: no new round starts after this many seconds; the
# table says how many ran). On the H200 machine (16 cores) a run took
# about 3 s.
set -u
B=${1:-build}
OUT=${OUT:-bench-out}
ROUNDS=${ROUNDS:-7}
ITERS=${ITERS:-20}
MODES=${MODES:-random varying repeated}
VARIANTS=${VARIANTS:-off on stage}
TRACE=${TRACE:-/tmp/clrr-overlap.clrr}
LIMIT_S=${LIMIT_S:-230}
M=$B/bench/micro
CLRR=$B/bin/clrr
[ -x "$M" ] && [ -x "$CLRR" ] || { echo "gpu_recorder_overlap.sh: no $M or $CLRR (make first)" >&2; exit 2; }
mkdir -p "$OUT"
unset CLRR_REC_OVERLAP CLRR_REC_PIPELINE_READS CLRR_REC_COUNTS CLRR_STAGE
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
    local rec=("$CLRR" record --quiet --force $REC_OPTS -o "$TRACE")
    case $v in
    plain) "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    off) CLRR_REC_COUNTS=$counts CLRR_REC_OVERLAP=0 CLRR_REC_PIPELINE_READS=0 "${rec[@]}" --stage off -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    ov) CLRR_REC_COUNTS=$counts CLRR_REC_PIPELINE_READS=0 "${rec[@]}" --stage off -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    on) CLRR_REC_COUNTS=$counts "${rec[@]}" --stage off -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    stage) CLRR_REC_COUNTS=$counts "${rec[@]}" -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    stagecall) CLRR_REC_COUNTS=$counts CLRR_REC_STAGE_HOLD=0 "${rec[@]}" -- "$M" data "$ITERS" "$mode" >"$log" 2>&1 || rc=$? ;;
    *) echo "gpu_recorder_overlap.sh: unknown variant '$v' (off ov on stage stagecall)" >&2; exit 2 ;;
    esac
    local t; t=$(ns)
    if [ "$rc" != 0 ] || [ -z "$t" ]; then
        echo "gpu_recorder_overlap.sh: micro data $ITERS $mode ($v): exit $rc: $(tail -3 "$log")" >&2
        exit 1
    fi
    local size=0 ovc=0 pipec=0 stc=0
    if [ "$v" != plain ]; then
        size=$(stat -c %s "$TRACE")
        ovc=$(sed -n 's/^overlapped_captures \([0-9]*\) .*/\1/p' "$counts" | tail -1)
        pipec=$(sed -n 's/.* pipelined_reads \([0-9]*\) .*/\1/p' "$counts" | tail -1)
        stc=$(sed -n 's/.* staged_transfers \([0-9]*\)$/\1/p' "$counts" | tail -1)
    fi
    echo "$mode $v $round $t $size ${ovc:-?}/${pipec:-?}/${stc:-?}" >>"$RAW"
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
        # plain first, then the recorded variants rotated by the round
        set -- $VARIANTS
        k=$(( (round - 1) % $# ))
        order="plain ${*:k+1} ${*:1:k}"
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

python3 - "$RAW" "$OUT/recorder-overlap.md" "$ITERS" "$done_rounds" "$where" "$devs" "$(nproc)" "$VARIANTS" <<'PY'
import statistics as st, sys
raw, out, iters, rounds, where, devs, cores, variants = sys.argv[1:9]
vs = variants.split()
rows = [l.split() for l in open(raw) if l.strip()]
modes = []
t = {}
size = {}
cnt = {}
for mode, v, r, ns, sz, counts in rows:
    if mode not in modes:
        modes.append(mode)
    t.setdefault((mode, v), {})[int(r)] = int(ns) / 1e6
    if v != "plain":
        size.setdefault((mode, v), []).append(int(sz))
        cnt.setdefault((mode, v), counts)
def med(d): return st.median(d.values())
def rng(d): return "%.1f-%.1f" % (min(d.values()), max(d.values()))
def paired(a, b):
    d = [a[r] - b[r] for r in a if r in b]
    return st.median(d), min(d), max(d)
L = []
L.append("# Recorder: the paths that move data (capture during the driver's call, pipelined reads, staged transfers)\n")
L.append("`micro data %s MODE`, loop time in ms; %s rounds of plain and the recorded variants %s "
         "(bench/gpu_recorder_overlap.sh says what each is), the order of the recorded ones turning each "
         "round, on %s, %s CPUs. Devices used (the recorded clCreateContext's): %s\n"
         % (iters, rounds, " / ".join(vs), where, cores, devs.strip() or "-"))
L.append("| data | plain median (range) | " + " | ".join("%s median (range)" % v for v in vs) + " | "
         + " | ".join("%s / plain" % v for v in vs) + " | "
         + " | ".join("%s - %s, paired median ms (range)" % (v, vs[0]) for v in vs[1:]) + " | trace MB "
         + " / ".join(vs) + " | counts " + " / ".join(vs) + " (overlapped/pipelined/staged per run) |")
L.append("|---|---:|" + "---:|" * (2 * len(vs) + len(vs) - 1) + "---:|---|")
for m in modes:
    p = t[(m, "plain")]
    cells = ["%s" % m, "%.1f (%s)" % (med(p), rng(p))]
    cells += ["%.1f (%s)" % (med(t[(m, v)]), rng(t[(m, v)])) for v in vs]
    cells += ["%.3fx" % (med(t[(m, v)]) / med(p)) for v in vs]
    for v in vs[1:]:
        d = paired(t[(m, v)], t[(m, vs[0])])
        cells.append("%+.1f (%+.1f..%+.1f)" % d)
    cells.append(" / ".join("%.1f" % (st.median(size[(m, v)]) / 1e6) for v in vs))
    cells.append(" / ".join(cnt.get((m, v), "-") for v in vs))
    L.append("| " + " | ".join(cells) + " |")
L.append("")
L.append("Per round (ms), plain / %s:\n" % " / ".join(vs))
for m in modes:
    rs = sorted(t[(m, "plain")])
    L.append("- %s: " % m + "; ".join(" / ".join("%.0f" % t[(m, v)].get(r, 0) for v in ["plain"] + vs) for r in rs))
L.append("")
open(out, "w").write("\n".join(L))
print("\n".join(L))
PY
