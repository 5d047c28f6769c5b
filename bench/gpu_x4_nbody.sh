#!/usr/bin/env bash
# nbody --uniform SIZE x 3 steps (issue 8) on one H200 alone, under the
# layer with an empty plan, and split over two and four H200s (clrr run
# --plan; four also with --split-fixed), in turn, three rounds, for each
# size in $SIZES (default 1048576). Run on the 4-GPU machine from a folder
# holding build/ (bin, lib, apps) and, per size, the plans made here from the
# calls-only recording nbu-SIZE.clrr that bench/gpu_x2_nbody.sh describes:
#   clrr optimize nbu-SIZE.clrr -o nbu4-SIZE.plan --passes none \
#       --split gpu0:1,gpu1:1,gpu2:1,gpu3:1 --device gpu0
#   clrr optimize nbu-SIZE.clrr -o nbu2-SIZE.plan --passes none \
#       --split gpu0:1,gpu1:1 --device gpu0
#   clrr optimize nbu-SIZE.clrr -o nbu-none-SIZE.plan --passes none
# Reports of the adaptive 4-way runs go to $OUT/rep4-SIZE-N.json.
# Results: bench/results/nvidia-h200-x4-nbody.md.
cd "${1:-.}" || exit 1
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
B=build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { "$@" 2>&1 | grep -v 'does not load layers'; }
for s in ${SIZES:-1048576}; do
    A="$B/apps/nbody --uniform --size $s --iters 3 --device gpu"
    for r in 1 2 3; do
        echo "size $s round $r"
        echo "alone: $($A)"
        echo "layer: $(run $B/bin/clrr run --quiet --plan nbu-none-$s.plan -- $A)"
        echo "split2: $(run $B/bin/clrr run --quiet --plan nbu2-$s.plan -- $A)"
        echo "split4: $(run $B/bin/clrr run --quiet --plan nbu4-$s.plan \
            --report ${OUT:-/tmp}/rep4-$s-$r.json -- $A)"
        echo "split4 fixed: $(run $B/bin/clrr run --quiet --split-fixed --plan nbu4-$s.plan -- $A)"
    done
done
