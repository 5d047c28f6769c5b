#!/usr/bin/env bash
# blackscholes and aes at 16M (issue 8), on the 4-GPU machine: the
# application alone, under the layer with a plan that changes nothing
# (staged transfers), split over four GPUs (adaptive), and the
# application's own hand split (--devices 4), in turn. Run from a folder
# holding build/ (bin, lib, apps) and the plans, made here from calls-only
# recordings made there:
#   (there) clrr record --capture-data=0 -o bs.clrr -- \
#               build/apps/blackscholes --size 16777216 --iters 3 --device gpu
#           (aes.clrr likewise with build/apps/aes)
#   (here)  clrr optimize T.clrr -o T-none.plan --passes none
#           clrr optimize T.clrr -o T-4.plan --passes none \
#               --split gpu0:1,gpu1:1,gpu2:1,gpu3:1 --device gpu0
# ROUNDS_BS (default 3) and ROUNDS_AES (default 1) rounds; reports of the
# split runs go to $OUT/rep-T-N.json.
# Results: bench/results/nvidia-h200-x4-split.md, part E.
cd "${1:-.}" || exit 1
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
B=build
run() { "$@" 2>&1 | grep -v 'does not load layers'; }
one() { # T ROUNDS APP ARGS...
    local t=$1 n=$2 r
    shift 2
    for r in $(seq "$n"); do
        echo "$t r$r alone: $($B/apps/"$@" --device gpu)"
        echo "$t r$r layer: $(run $B/bin/clrr run --quiet --plan $t-none.plan -- $B/apps/"$@" --device gpu)"
        echo "$t r$r split4: $(run $B/bin/clrr run --quiet --plan $t-4.plan \
            --report ${OUT:-/tmp}/rep-$t-$r.json -- $B/apps/"$@" --device gpu)"
        echo "$t r$r hand4: $($B/apps/"$@" --device gpu --devices 4)"
    done
}
one bs "${ROUNDS_BS:-3}" blackscholes --size 16777216 --iters 3
one aes "${ROUNDS_AES:-1}" aes --size 16777216 --iters 3
