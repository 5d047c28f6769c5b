#!/usr/bin/env bash
# Runs on a GPU machine (NVIDIA OpenCL + PoCL) over a build carried from
# here: every workload verified on the GPU and on PoCL's CPU device, every
# workload recorded on the GPU and read back, then `make bench`'s harness on
# the GPU. Results go to $OUT (or ./gpu-out). Usage: bench/gpu_run.sh [BUILD]
set -u
B=${1:-build}
OUT=${OUT:-gpu-out}
mkdir -p "$OUT" /tmp/vend
echo libnvidia-opencl.so.1 > /tmp/vend/nvidia.icd
cp /etc/OpenCL/vendors/pocl.icd /tmp/vend/ 2>/dev/null
export OCL_ICD_VENDORS=/tmp/vend
# CUDA's bundled libOpenCL.so.1 (first in the library path there) loads no layers: preload mode.
REC_OPTS=${REC_OPTS:---preload}
export BENCH_RECORD_OPTS=$REC_OPTS
{
    echo "== devices"; "$B/bin/clrr" devices
    for dev in gpu cpu; do
        echo "== workloads on $dev"
        for app in "$B"/apps/*; do
            CLRR_APP_DEVICE=$dev timeout 300 "$app" || echo "FAILED: $(basename "$app") on $dev"
        done
    done
    echo "== recorded on gpu"
    for app in "$B"/apps/*; do
        n=$(basename "$app")
        CLRR_APP_DEVICE=gpu timeout 300 "$B/bin/clrr" record --force $REC_OPTS -o "/tmp/$n.clrr" -- "$app" --quiet \
            || echo "FAILED: recording $n"
        "$B/bin/clrr" info "/tmp/$n.clrr" | grep -E "^(calls|kernels|transfers|device |ratios)" | sed "s/^/$n: /"
    done
    CLRR_APP_DEVICE=gpu "$B/bin/clrr" record --force $REC_OPTS -o /tmp/clinfo.clrr -- clinfo > /tmp/clinfo.rec 2>&1
    clinfo > /tmp/clinfo.plain 2>&1
    cmp -s /tmp/clinfo.plain /tmp/clinfo.rec && echo "clinfo: identical output under clrr record" \
        || echo "FAILED: clinfo output differs under clrr record"
} 2>&1 | tee "$OUT/gpu_check.txt"
BENCH_DEVICE=gpu BENCH_REPS=${BENCH_REPS:-5} /usr/bin/python3 bench/bench.py "$B" 2>&1 | tee "$OUT/bench_gpu.md"
cp bench/results/*.json "$OUT/" 2>/dev/null
exit 0
