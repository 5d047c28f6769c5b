#!/usr/bin/env bash
# Split launches on a GPU machine (issue 8), over a build carried from here.
# The GPU machine has no LLVM, so plans are made here from traces recorded
# there, in two steps:
#   bench/gpu_split.sh record BUILD OUT     records the workloads on GPU 0
#                                           into OUT (and `clrr devices`)
#                                           and profiles them on every
#                                           device (OUT/costs: clrr profile)
#   (here) clrr optimize OUT/APP.clrr -o OUT/APP.TAG.plan --passes none
#          --split SPEC [--costs OUT/costs --device gpu0], for each split to
#          measure (devices by the indices of OUT/devices.txt, or gpu0,
#          gpu1, cpu0; without weights and with the costs, the partitioner
#          decides); a plan named APP.TAG-fixed.plan runs with --split-fixed
#   bench/gpu_split.sh replay BUILD DIR OUT replays each trace plain and with
#                                           each of its plans, --loop 5,
#                                           verified; one JSON per run in OUT
# NVIDIA's driver and PoCL are both made visible.
# Read-backs are compared within a float tolerance (TOL, default
# rel=1e-3,abs=1e-5): traces recorded on
# another device (PoCL here), and parts on the CPU, round differently.
set -u
mode=${1:?usage: gpu_split.sh record|replay BUILD ...}
B=${2:?usage: gpu_split.sh record|replay BUILD ...}
mkdir -p /tmp/vend && echo libnvidia-opencl.so.1 >/tmp/vend/nvidia.icd && cp /etc/OpenCL/vendors/pocl.icd /tmp/vend/
export OCL_ICD_VENDORS=/tmp/vend
# compute-bound workloads at sizes a GPU takes milliseconds over, and two
# memory-bound ones; traces stay under 16 MiB (what comes back from $OUT)
WORKLOADS="ep --size=1048576_--pairs=4096 nbody --size=65536_--iters=2 blackscholes --size=524288
aes --size=262144_--iters=2 vecadd --size=524288_--iters=2 histogram --size=4194304"
case $mode in
record)
    OUT=${3:?usage: gpu_split.sh record BUILD OUT}
    "$B/bin/clrr" devices >"$OUT/devices.txt" 2>&1
    echo "$WORKLOADS" | tr ' ' '\n' | paste - - | while read -r app args; do
        "$B/bin/clrr" record --force -o "$OUT/$app.clrr" -- "$B/apps/$app" ${args//_/ } --device gpu 2>&1 | tail -1
    done
    # the costs of each launch on every device here (issue 8): the partitioner's input
    for t in "$OUT"/*.clrr; do
        CLRR_COSTS=$OUT/costs "$B/bin/clrr" profile "$t" --device gpu0 --devices "${PROFILE_DEVICES:-gpu0,gpu1,cpu0}" \
            --reps 5 --max-seconds 5 2>&1 | tail -12
    done
    ls -l "$OUT" ;;
replay)
    DIR=${3:?usage: gpu_split.sh replay BUILD DIR OUT}
    RES=${4:?usage: gpu_split.sh replay BUILD DIR OUT}
    OUT=$(mktemp -d)   # one JSON per run; the table goes to RES/split.md
    for rep in 1 2 3; do   # alternating runs, so drifts hit every variant
        for t in "$DIR"/*.clrr; do
            app=$(basename "$t" .clrr)
            for p in none "$DIR/$app".*.plan; do
                [ "$p" = none ] || [ -e "$p" ] || continue
                tag=$([ "$p" = none ] && echo plain || basename "$p" .plan | sed "s/^$app\.//")
                # a plan APP.TAG-fixed.plan runs with --split-fixed (the plan's proportions)
                "$B/bin/clrr" replay --json --loop 5 --device gpu --tolerance "${TOL:-rel=1e-3,abs=1e-5}" "$t" \
                    $([ "$p" = none ] || echo --plan "$p") $(case $tag in *-fixed) echo --split-fixed;; esac) \
                    >"$OUT/$app.$tag.$rep.json" 2>"$OUT/$app.$tag.$rep.err" ||
                    echo "FAILED: $app $tag: $(head -c 300 "$OUT/$app.$tag.$rep.err")"
            done
        done
    done
    python3 - "$OUT" <<'PY' | tee "$RES/split.md"
import glob, json, os, statistics, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    app, tag, rep = os.path.basename(f)[:-5].rsplit(".", 2)
    try:
        d = json.load(open(f))
    except Exception:
        continue
    pl = d.get("plan", {})
    rows.setdefault((app, tag), []).append((d["exec_ns_loop_median"] / 1e6, d["ok"], d["mismatches"],
                                            pl.get("split", 0), pl.get("split_fallback", 0), pl.get("split_adapted", 0),
                                            pl.get("split_shares", "")))
print("| workload | run | ms per loop (median of 3) | vs plain | verified | split launches | ran whole | adapted | last shares |")
print("|---|---|---|---|---|---|---|---|---|")
for (app, tag), v in sorted(rows.items()):
    ms = statistics.median(x[0] for x in v)
    base = rows.get((app, "plain"))
    b = statistics.median(x[0] for x in base) if base else None
    print(f"| {app} | {tag} | {ms:.2f} | {b / ms if b else 0:.2f}x | {all(x[1] and x[2] == 0 for x in v)} | {v[0][3]} | "
          f"{v[0][4]} | {v[0][5]} | {v[0][6]} |")
PY
    ;;
esac
