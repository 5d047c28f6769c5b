#!/usr/bin/env bash
# GPU-machine replay checks: record on NVIDIA, replay on NVIDIA / PoCL CPU; record on PoCL, replay on NVIDIA.
set -u
mkdir -p /tmp/vend && echo libnvidia-opencl.so.1 > /tmp/vend/nvidia.icd && cp /etc/OpenCL/vendors/pocl.icd /tmp/vend/ && export OCL_ICD_VENDORS=/tmp/vend
B=build; C=$B/bin/clrr
$C devices | grep -E "^[0-9]"
out=$OUT/replay.txt
for app in vecadd blackscholes sobel matmul histogram nbody spmv jacobi; do
  for dev in gpu cpu; do
    CLRR_APP_DEVICE=$dev $C record --force --preload -o /tmp/$app.$dev.clrr -- $B/apps/$app --quiet >/dev/null 2>&1 || echo "record $app $dev failed"
  done
  for pair in "gpu gpu" "gpu cpu" "cpu gpu"; do
    set -- $pair
    r=$($C replay --json --device $2 --tolerance rel=1e-4,abs=1e-5 /tmp/$app.$1.clrr 2>&1); rc=$?
    echo "$app rec=$1 replay=$2 rc=$rc $(echo "$r" | python3 -c 'import json,sys
try:
  d=json.load(sys.stdin); print("readbacks=%d mismatches=%d device=%s exec_ms=%.2f" % (d["readbacks"], d["mismatches"], d["device"], d["exec_ns"]/1e6))
except Exception as e: print("no json")' )" | tee -a $out
  done
done
# app time vs replay time on the GPU (same device), 5 reps
for app in vecadd blackscholes sobel matmul nbody jacobi; do
  for i in 1 2 3 4 5; do
    a=$(CLRR_APP_DEVICE=gpu $B/apps/$app | sed -n 's/.*ocl_ms=\([0-9.]*\).*/\1/p')
    r=$($C replay --json --device gpu /tmp/$app.gpu.clrr | python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["exec_ns"]/1e6))')
    echo "time $app app_ms=$a replay_ms=$r" | tee -a $out
  done
done
K=$($C dump /tmp/vecadd.gpu.clrr | grep NDRange | tail -1 | sed 's/^#\([0-9]*\).*/\1/')
$C trim /tmp/vecadd.gpu.clrr -o /tmp/vk.clrr --kernel $K && $C replay --device cpu /tmp/vk.clrr | tail -3 | tee -a $out
ls -la /tmp/vecadd.gpu.clrr /tmp/vk.clrr | tee -a $out
