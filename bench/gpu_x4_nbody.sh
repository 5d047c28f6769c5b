#!/usr/bin/env bash
# nbody --uniform 1048576 x 3 steps (issue 8) on one H200 alone, under the
# layer with an empty plan, and split over two and four H200s (clrr run
# --plan; four also with --split-fixed), in turn, three rounds. Run on the
# 4-GPU machine from a folder holding build/ (bin, lib, apps) and the plans,
# made here from the calls-only recording bench/gpu_x2_nbody.sh describes:
#   clrr optimize nbu-1048576.clrr -o nbu4.plan --passes none \
#       --split gpu0:1,gpu1:1,gpu2:1,gpu3:1 --device gpu0
# (nbu2.plan and nbu-none.plan as in gpu_x2_nbody.sh). Reports of the
# adaptive 4-way runs go to $OUT/rep4-N.json.
# Results: bench/results/nvidia-h200-x4-nbody.md.
cd "${1:-.}" || exit 1
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
B=build
A="$B/apps/nbody --uniform --size 1048576 --iters 3 --device gpu"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1 2 3; do
    echo "round $r"
    echo "alone: $($A)"
    echo "layer: $($B/bin/clrr run --quiet --plan nbu-none.plan -- $A 2>&1 | grep -v 'does not load layers')"
    echo "split2: $($B/bin/clrr run --quiet --plan nbu2.plan -- $A 2>&1 | grep -v 'does not load layers')"
    echo "split4: $($B/bin/clrr run --quiet --plan nbu4.plan --report ${OUT:-/tmp}/rep4-$r.json -- $A 2>&1 | grep -v 'does not load layers')"
    echo "split4 fixed: $($B/bin/clrr run --quiet --split-fixed --plan nbu4.plan -- $A 2>&1 | grep -v 'does not load layers')"
done
