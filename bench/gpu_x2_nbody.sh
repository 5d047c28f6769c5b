#!/usr/bin/env bash
# nbody --uniform 1048576 x 3 steps (issue 8: the compute-bound N-body at a
# large size) on one H200 alone, under the layer with an empty plan, and
# split over two H200s (clrr run --plan, adaptive and --split-fixed), in
# turn, three rounds. Run on the GPU machine from a folder holding build/
# (bin, lib, apps) and the plans, made here from a calls-only recording
# made there (the GPU machine has no LLVM):
#   (there) clrr record --capture-data=0 -o nbu-1048576.clrr -- \
#               build/apps/nbody --uniform --size 1048576 --iters 3 --device gpu
#   (here)  clrr optimize nbu-1048576.clrr -o nbu2.plan --passes none \
#               --split gpu0:1,gpu1:1 --device gpu0
#           clrr optimize nbu-1048576.clrr -o nbu-none.plan --passes none
# Results: bench/results/nvidia-h200-x2-nbody.md.
cd "${1:-.}" || exit 1
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
B=build
A="$B/apps/nbody --uniform --size 1048576 --iters 3 --device gpu"
for r in 1 2 3; do
    echo "round $r"
    $A
    $B/bin/clrr run --quiet --plan nbu-none.plan -- $A
    $B/bin/clrr run --quiet --plan nbu2.plan --report ${OUT:-/tmp}/rep-$r.json -- $A
    $B/bin/clrr run --quiet --split-fixed --plan nbu2.plan -- $A
done 2>&1 | grep -v "does not load layers"
python3 - ${OUT:-/tmp}/rep-3.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print({k: v for k, v in d.items() if 'split' in k or k in ('launches', 'plan')})
PY
