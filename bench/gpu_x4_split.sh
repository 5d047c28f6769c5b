#!/usr/bin/env bash
# ep split over the GPUs of one machine (issue 8), replayed and live, over a
# build carried from here (the GPU machine has no LLVM: plans are made here).
#   bench/gpu_x4_split.sh record BUILD OUT   records ep5 (131072 x 32768 pairs,
#                                            5 launches), epbig (1048576 x
#                                            16384, 1 launch) and ephuge
#                                            (1048576 x 65536, 1 launch) on
#                                            gpu0, and profiles them on
#                                            gpu0..gpu3 (each trace < 16 MiB)
#   (here) clrr optimize OUT/T.clrr -o DIR/T.gpu4part.plan --passes none
#          --split gpu0,gpu1,gpu2,gpu3 --costs OUT/costs --device gpu0; likewise
#          gpu2part (gpu0,gpu1), gpu4even (gpu0:1,...,gpu3:1), gpu2even, and
#          T.none.plan (--passes none: the layer alone)
#   bench/gpu_x4_split.sh replay BUILD DIR OUT   replays each trace plain and
#                                            split (OUT/replay.jsonl), then
#                                            runs the application plain, under
#                                            the layer alone and with each plan
#                                            (OUT/live.txt: its ocl_ms)
# Three runs, variants alternating. Results: bench/results/nvidia-h200-x4-split.md.
set -u
mode=${1:?usage: gpu_x4_split.sh record|replay BUILD ...}
B=${2:?usage: gpu_x4_split.sh record|replay BUILD ...}
C=$B/bin/clrr; A=$B/apps
mkdir -p /tmp/vend && echo libnvidia-opencl.so.1 >/tmp/vend/nvidia.icd && cp /etc/OpenCL/vendors/pocl.icd /tmp/vend/
export OCL_ICD_VENDORS=/tmp/vend
case $mode in
record)
    OUT=${3:?usage: gpu_x4_split.sh record BUILD OUT}
    $C devices >"$OUT/devices.txt" 2>&1
    # the application checks a sample of its work-items on the host: all of
    # them would take minutes on one core
    $C record --force -o "$OUT/ep5.clrr" -- "$A/ep" --size 131072 --pairs 32768 --iters 5 --check-every 64 --device gpu --quiet
    $C record --force -o "$OUT/epbig.clrr" -- "$A/ep" --size 1048576 --pairs 16384 --check-every 1024 --device gpu --quiet
    $C record --force -o "$OUT/ephuge.clrr" -- "$A/ep" --size 1048576 --pairs 65536 --check-every 4096 --device gpu --quiet
    for t in ep5 epbig ephuge; do
        CLRR_COSTS=$OUT/costs $C profile "$OUT/$t.clrr" --device gpu0 --devices gpu0,gpu1,gpu2,gpu3 --reps 3 \
            --max-seconds 10 2>&1 | tail -8
    done ;;
replay)
    D=${3:?usage: gpu_x4_split.sh replay BUILD DIR OUT}
    OUT=${4:?usage: gpu_x4_split.sh replay BUILD DIR OUT}
    R=$OUT/replay.jsonl; L=$OUT/live.txt
    for rep in 1 2 3; do
        for t in ephuge:3 epbig:5 ep5:2; do
            tr=${t%%:*}; loops=${t##*:}
            for v in plain gpu4part-fixed gpu4part gpu4even-fixed gpu2part-fixed gpu2even-fixed; do
                p=${v%-fixed}; args=""
                [ $v = plain ] || args="--plan $D/$tr.$p.plan --no-learn"
                case $v in *-fixed) args="$args --split-fixed";; esac
                out=$($C replay --json --loop "$loops" --device gpu0 --tolerance rel=1e-3,abs=1e-5 "$D/$tr.clrr" $args \
                      2>/tmp/err) || echo "FAILED $tr $v: $(head -c 300 /tmp/err)"
                echo "{\"trace\":\"$tr\",\"variant\":\"$v\",\"rep\":$rep,\"r\":$out}" >>"$R"
            done
        done
        for t in "ephuge:--size 1048576 --pairs 65536 --iters 1" "epbig:--size 1048576 --pairs 16384 --iters 1" \
                 "ep5:--size 131072 --pairs 32768 --iters 5"; do
            tr=${t%%:*}; args=${t#*:}
            for v in app none gpu4part gpu4part-fixed gpu4even-fixed gpu2part-fixed; do
                p=${v%-fixed}
                case $v in
                app) o=$("$A/ep" $args --check-every 4096 --device gpu 2>&1) ;;
                *) o=$($C run $(case $v in *-fixed) echo --split-fixed;; esac) --plan "$D/$tr.$p.plan" \
                       --report /tmp/rep.json -- "$A/ep" $args --check-every 4096 --device gpu 2>&1) ;;
                esac
                ms=$(echo "$o" | sed -n 's/.*ocl_ms=\([0-9.]*\).*/\1/p')
                sp=$([ $v = app ] || python3 -c "import json; d=json.load(open('/tmp/rep.json')); print(d['split'], d['split_fallback'], d['split_declined'], d['split_adapted'], round(d['split_build_us']/1000,1), [round(x/1e6,2) for x in d['split_launch_ns']], repr(d['split_shares']))")
                echo "$tr $v rep=$rep ok=$(echo "$o" | grep -c ': ok') ocl_ms=$ms split: $sp" | tee -a "$L"
            done
        done
    done ;;
esac
