#!/usr/bin/env bash
# nbody (131072 bodies, 10 steps, a heavy window drifting by N/16 a step)
# live on 2 and 4 H200s: fixed splits at several shares, adaptive by the
# fixed point and by Broyden; per-launch times from the layer's report.
# Plans are made here from a recording of the same run (PoCL: `clrr record
# -- nbody --size 131072 --iters 10`): nb.none.plan (--passes none), nb.e2
# (--split gpu0:1,gpu1:1), nb.w3/w4/w6/w7 (gpu0:3,gpu1:7 ...), nb.e4 (four
# GPUs even). Results: bench/results/nvidia-h200-x4-split.md, part C.
set -u
B=${1:?usage: gpu_nbody_drift.sh BUILD DIR}; D=${2:?usage: gpu_nbody_drift.sh BUILD DIR}
C=$B/bin/clrr; A=$B/apps
mkdir -p /tmp/vend && echo libnvidia-opencl.so.1 >/tmp/vend/nvidia.icd && cp /etc/OpenCL/vendors/pocl.icd /tmp/vend/
export OCL_ICD_VENDORS=/tmp/vend
L=${OUT:-.}/nb.txt
for rep in 1 2; do
  for v in app none e2:fixed w3:fixed w4:fixed w6:fixed w7:fixed e2:fp e2:broyden e4:fixed e4:fp e4:broyden; do
    case $v in
      app) o=$($A/nbody --size 131072 --iters 10 --device gpu 2>&1) ;;
      none) o=$($C run --plan $D/nb.none.plan --report /tmp/rep.json -- $A/nbody --size 131072 --iters 10 --device gpu 2>&1) ;;
      *) p=${v%%:*}; m=${v##*:}
         case $m in fixed) a=--split-fixed;; fp) a="--split-method fixed-point";; broyden) a="--split-method broyden";; esac
         o=$($C run $a --no-learn --plan $D/nb.$p.plan --report /tmp/rep.json -- $A/nbody --size 131072 --iters 10 --device gpu 2>&1) ;;
    esac
    ms=$(echo "$o" | sed -n 's/.*ocl_ms=\([0-9.]*\).*/\1/p')
    sp=$(case $v in app|none) ;; *) python3 -c "import json; d=json.load(open('/tmp/rep.json')); print(d['split'], d['split_declined'], d['split_adapted'], [round(x/1e6,2) for x in d['split_launch_ns']], repr(d['split_shares']))";; esac)
    echo "nb $v rep=$rep ok=$(echo "$o" | grep -c ': ok') ocl_ms=$ms split: $sp" | tee -a $L
  done
done
