#!/usr/bin/env bash
# gpu_recorder_ab.sh NEW OLD — the recorder of two builds side by side
# (issue 33, item 8): `micro data ITERS MODE` plain, recorded by NEW's
# clrr and recorded by OLD's, interleaved for ROUNDS rounds (the order of
# the recorded ones turning each round), each loop's own time (micro's
# ns=). Prints a markdown table (medians, ranges, ratios to plain, the
# median of each round's difference NEW - OLD) and writes it to
# $OUT/recorder-ab.md. NEW's micro runs every loop.
#
# On a machine with NVIDIA's OpenCL the loops run on the GPU
# (CLRR_APP_DEVICE=gpu, the recorder preloaded) as in
# gpu_recorder_overlap.sh; the device of every recorded run is checked
# (its clCreateContext's device: NVIDIA's there).
#
# Environment: OUT (bench-out), ROUNDS (6), ITERS (20), MODES ("random
# repeated"), TRACE (/tmp/clrr-ab.clrr), LIMIT_S (200: no round starts
# after it).
set -u
NEW=${1:?usage: gpu_recorder_ab.sh NEW_BUILD OLD_BUILD}
OLD=${2:?usage: gpu_recorder_ab.sh NEW_BUILD OLD_BUILD}
OUT=${OUT:-bench-out}
ROUNDS=${ROUNDS:-6}
ITERS=${ITERS:-20}
MODES=${MODES:-random repeated}
TRACE=${TRACE:-/tmp/clrr-ab.clrr}
LIMIT_S=${LIMIT_S:-200}
M=$NEW/bench/micro
for c in "$M" "$NEW/bin/clrr" "$OLD/bin/clrr"; do
    [ -x "$c" ] || { echo "gpu_recorder_ab.sh: no $c (make first)" >&2; exit 2; }
done
mkdir -p "$OUT"
REC_OPTS=""
where="the first platform's first device"
if ldconfig -p 2>/dev/null | grep -q "libnvidia-opencl.so.1"; then
    mkdir -p /tmp/vend
    echo libnvidia-opencl.so.1 >/tmp/vend/nvidia.icd
    cp /etc/OpenCL/vendors/pocl.icd /tmp/vend/ 2>/dev/null
    export OCL_ICD_VENDORS=/tmp/vend CLRR_APP_DEVICE=gpu
    REC_OPTS=--preload
    where="GPU (CLRR_APP_DEVICE=gpu)"
fi
RAW=$OUT/recorder-ab.raw
: >"$RAW"
log=$(mktemp)
trap 'rm -f "$log" "$TRACE"' EXIT
devs=""
run() {   # run MODE VARIANT ROUND
    local rc=0 t
    case $2 in
    plain) "$M" data "$ITERS" "$1" >"$log" 2>&1 || rc=$? ;;
    new) "$NEW/bin/clrr" record --quiet --force $REC_OPTS -o "$TRACE" -- "$M" data "$ITERS" "$1" >"$log" 2>&1 || rc=$? ;;
    old) "$OLD/bin/clrr" record --quiet --force $REC_OPTS -o "$TRACE" -- "$M" data "$ITERS" "$1" >"$log" 2>&1 || rc=$? ;;
    esac
    t=$(tail -1 "$log" | sed -n 's/.* ns=\([0-9][0-9]*\) .*/\1/p')
    if [ "$rc" != 0 ] || [ -z "$t" ]; then
        echo "gpu_recorder_ab.sh: micro data $ITERS $1 ($2): exit $rc: $(tail -3 "$log")" >&2
        exit 1
    fi
    if [ "$2" != plain ] && [ "$3" = 1 ]; then
        local d
        d=$("$NEW/bin/clrr" dump --json "$TRACE" | python3 "$(dirname "$0")/trace_device.py")
        if [ -n "${CLRR_APP_DEVICE:-}" ] && ! echo "$d" | grep -qi nvidia; then
            echo "gpu_recorder_ab.sh: micro data $1 ($2) ran on '$d', not NVIDIA's GPU" >&2
            exit 1
        fi
        devs="$devs$1/$2: $d; "
    fi
    echo "$1 $2 $3 $t" >>"$RAW"
}
start=$(date +%s)
done_rounds=0
for round in $(seq 1 "$ROUNDS"); do
    [ $(( $(date +%s) - start )) -lt "$LIMIT_S" ] || { echo "time limit reached before round $round" >&2; break; }
    for mode in $MODES; do
        if [ $((round % 2)) = 1 ]; then order="plain new old"; else order="plain old new"; fi
        for v in $order; do run "$mode" "$v" "$round"; done
    done
    done_rounds=$round
    echo "round $round done ($(( $(date +%s) - start )) s)" >&2
done
[ "$done_rounds" -ge 1 ] || { echo "gpu_recorder_ab.sh: no round ran" >&2; exit 1; }
python3 - "$RAW" "$OUT/recorder-ab.md" "$ITERS" "$done_rounds" "$where" "$devs" "$NEW" "$OLD" <<'PY'
import statistics as st, sys
raw, out, iters, rounds, where, devs, new, old = sys.argv[1:9]
t, modes = {}, []
for mode, v, r, ns in (l.split() for l in open(raw) if l.strip()):
    if mode not in modes:
        modes.append(mode)
    t.setdefault((mode, v), {})[int(r)] = int(ns) / 1e6
med = lambda d: st.median(d.values())
rng = lambda d: "%.1f-%.1f" % (min(d.values()), max(d.values()))
L = ["# Recorder A/B: %s (new) against %s (old)\n" % (new, old),
     "`micro data %s MODE`, loop time in ms, %s rounds of plain / new / old (the order of the "
     "recorded ones turning each round), on %s. Recorded runs' devices: %s\n" % (iters, rounds, where, devs.strip() or "-"),
     "| data | plain median (range) | new median (range) | old median (range) | new / plain | old / plain | new - old, paired median ms (range) |",
     "|---|---:|---:|---:|---:|---:|---:|"]
for m in modes:
    p, n, o = t[(m, "plain")], t[(m, "new")], t[(m, "old")]
    d = [n[r] - o[r] for r in n if r in o]
    L.append("| %s | %.1f (%s) | %.1f (%s) | %.1f (%s) | %.3fx | %.3fx | %+.1f (%+.1f..%+.1f) |"
             % (m, med(p), rng(p), med(n), rng(n), med(o), rng(o), med(n) / med(p), med(o) / med(p),
                st.median(d), min(d), max(d)))
L.append("\nPer round (ms), plain / new / old:\n")
for m in modes:
    L.append("- %s: " % m + "; ".join("%.0f / %.0f / %.0f" % (t[(m, "plain")][r], t[(m, "new")].get(r, 0), t[(m, "old")].get(r, 0))
                                      for r in sorted(t[(m, "plain")])))
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
