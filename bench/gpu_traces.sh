#!/usr/bin/env bash
# GPU machine: small recordings of every workload (and api_tour, image_map)
# on the NVIDIA GPU, brought back under $OUT/traces for replays elsewhere
# (PoCL, Oclgrind) and as golden traces; each also replayed on the GPU with
# --compare against PoCL's CPU device.
set -u
mkdir -p /tmp/vend && echo libnvidia-opencl.so.1 > /tmp/vend/nvidia.icd && cp /etc/OpenCL/vendors/pocl.icd /tmp/vend/ && export OCL_ICD_VENDORS=/tmp/vend
B=build; C=$B/bin/clrr
mkdir -p "$OUT/traces"
out=$OUT/gpu-traces.txt
$C devices | tee -a "$out"
declare -A size=([vecadd]=65536 [blackscholes]=65536 [sobel]=256 [matmul]=128 [histogram]=65536 [nbody]=1024 [spmv]=4096 [jacobi]=128)
for app in vecadd blackscholes sobel matmul histogram nbody spmv jacobi; do
  CLRR_APP_DEVICE=gpu $C record --force --preload -o "$OUT/traces/$app.h200.clrr" -- $B/apps/$app --size ${size[$app]} --iters 2 --quiet \
      >/dev/null 2>&1 || echo "record $app failed" | tee -a "$out"
done
CLRR_APP_DEVICE=gpu $C record --force --preload -o "$OUT/traces/api_tour.h200.clrr" -- $B/tests/progs/api_tour --quiet >/dev/null 2>&1 || echo "record api_tour failed" | tee -a "$out"
$C record --force --preload -o "$OUT/traces/image_map.h200.clrr" -- $B/tests/progs/image_map --quiet >/dev/null 2>&1 || echo "record image_map failed" | tee -a "$out"
for t in "$OUT"/traces/*.clrr; do
  n=$(basename "$t" .clrr)
  r=$($C replay --json --device gpu --compare cpu --tolerance rel=1e-4,abs=1e-5 "$t" 2>&1); rc=$?
  echo "$n gpu-vs-cpu rc=$rc $(echo "$r" | python3 -c 'import json,sys
try:
  d=json.load(sys.stdin); c=d.get("compare",{}); print("readbacks=%d mismatches=%d compared=%s same=%s device=%s b=%s" % (d["readbacks"], d["mismatches"], c.get("compared"), c.get("same"), d["device"], c.get("device")))
except Exception as e: print("no json: %s" % sys.stdin.read()[:200])')" | tee -a "$out"
  [ $rc -eq 0 ] || echo "$r" | tail -3 | tee -a "$out"
done
ls -la "$OUT"/traces | tee -a "$out"
