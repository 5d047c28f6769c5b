#!/usr/bin/env bash
# gpu_suites.sh prepare | run [REGEX] — the third-party programs of
# tests/suites/apps.list on the GPU machine, which can fetch and build
# nothing: `prepare` (here) copies the suites tests/suites/fetch.sh built
# into .gpu/suites (their binaries, kernel files and inputs; ignored by git,
# carried to the machine), `run` (there) runs them with the NVIDIA GPU
# presented as the first platform and device (`--record-device gpu`: plainly
# through `clrr run --device gpu`, recorded through `clrr record --device
# gpu`), replays every trace on the GPU and on PoCL's CPU device (`--cross
# cpu`), and writes the table to $OUT/suites-gpu.md. REGEX: only the
# programs whose names match it (default: every suite's).
# `tune [1|2]` (there, after the same `prepare` here) runs the tuner on them
# instead (bench/suites_tune.py, `make bench-suites`'s script): each program
# recorded on the H200, `clrr optimize --measure --tune --budget
# $TUNE_BUDGET` run there (the tuning measures on the device it tunes for;
# the GPU machine has no LLVM, so the passes that need a kernel analysis
# treat every kernel as unanalyzed, as for binaries), replayed with the plan
# on the H200, timed, and run live with `clrr run --plan --device gpu`.
# Part 1 or 2 (every other program of the list) keeps one call within the
# device's 10 minutes; the parts' results merge with `bench/suites_tune.py
# --from suites-tune-1.jsonl suites-tune-2.jsonl`. Without a part: all.
# TUNE_REGEX: tune only the programs whose names match it (before the part).
# TUNE_STAGE=auto|all|off: `clrr optimize --stage` (default: its own, auto).
# PARBOIL_SIZE=large (run and tune): Parboil's programs get the large inputs
# instead of the small ones that `prepare` copied (those make microsecond
# kernels on the H200, too short to measure): written there first, over the
# small ones in .gpu/suites/parboil/inputs, by tests/suites/parboil_inputs.py
# --size large (about 380 MB; some tens of seconds of the call, and only when
# a Parboil program is selected). Default: small.
set -u
cmd=${1:?usage: gpu_suites.sh prepare|run [REGEX]|tune [1|2]}
if [ "$cmd" = prepare ]; then
    S=${CLRR_SUITES:-$HOME/.cache/clrr/suites}
    D=.gpu/suites
    rm -rf "$D" && mkdir -p "$D"
    for s in shoc chai heteromark mixbench parboil; do
        ls "$S/$s"/built.* >/dev/null 2>&1 || { echo "absent: $s"; continue; }
        mkdir -p "$D/$s" && cp "$S/$s"/built.* "$D/$s/"
    done
    # SHOC: the OpenCL programs
    (cd "$S" && find shoc/build/src/opencl -type f -executable ! -name '*.o' -print0 |
        xargs -0 -I{} cp --parents {} "$OLDPWD/$D/") 2>/dev/null
    # Chai: the small programs with their kernels and inputs (CEDD/CEDT hold 144 MiB of video each: left out)
    for b in BS HSTI HSTO PAD RSCD RSCT SC TRNS; do
        [ -d "$S/chai/build/$b" ] && mkdir -p "$D/chai/build" && cp -r "$S/chai/build/$b" "$D/chai/build/" &&
            rm -f "$D/chai/build/$b"/*.o "$D/chai/build/$b"/*.d
    done
    (cd "$S" && find heteromark/build/src -path '*cl12*' \( -name '*_cl12' -o -name '*.cl' \) -print0 |
        xargs -0 -I{} cp --parents {} "$OLDPWD/$D/") 2>/dev/null
    [ -d "$S/mixbench/build" ] && mkdir -p "$D/mixbench/build" &&
        cp "$S/mixbench/build/mixbench-ocl" "$S/mixbench/build/mix_kernels.cl" "$D/mixbench/build/"
    # Parboil: the programs with their src/ (kernels, headers) and our inputs
    [ -d "$S/parboil/build" ] && mkdir -p "$D/parboil" &&
        cp -r "$S/parboil/inputs" "$D/parboil/" &&
        (cd "$S" && find parboil/build -mindepth 1 -maxdepth 1 ! -name common -print0 |
            xargs -0 -I{} cp -r --parents {} "$OLDPWD/$D/")
    # inputs written before apps.list read the sizes from them (args) make the programs fail
    [ -d "$D/parboil/inputs" ] && [ ! -f "$D/parboil/inputs/fft/args" ] &&
        echo "warning: $S/parboil/inputs has no args files: run tests/suites/fetch.sh parboil again"
    du -sh "$D"
    exit 0
fi
# run, on the GPU machine
case ${PARBOIL_SIZE:=small} in
small | large) ;;
*) echo "gpu_suites.sh: PARBOIL_SIZE must be small or large, not '$PARBOIL_SIZE'"; exit 1 ;;
esac
# parboil_large: with PARBOIL_SIZE=large, the large inputs over the small ones
# (only when a Parboil program is selected: they take some tens of seconds)
parboil_large() {
    [ "$PARBOIL_SIZE" = large ] && grep -q '^parboil-' /tmp/gpu-subset.list || return 0
    local t0
    t0=$(date +%s.%N)
    if ! python3 tests/suites/parboil_inputs.py --size large .gpu/suites/parboil/inputs >/tmp/parboil-inputs.log 2>&1; then
        echo "gpu_suites.sh: PARBOIL_SIZE=large: parboil_inputs.py failed: $(tail -1 /tmp/parboil-inputs.log)"
        exit 1
    fi
    echo "parboil: large inputs written into .gpu/suites/parboil/inputs in $(echo "$t0 $(date +%s.%N)" |
        awk '{printf "%.1f", $2 - $1}') s"
}
mkdir -p /tmp/vend && echo libnvidia-opencl.so.1 >/tmp/vend/nvidia.icd &&
    cp /etc/OpenCL/vendors/pocl.icd /tmp/vend/ 2>/dev/null
export OCL_ICD_VENDORS=/tmp/vend CLRR_SUITES=$PWD/.gpu/suites
build/bin/clrr devices | grep -E '^ *[0-9]'
grep -v -E '^(#|$)' tests/suites/apps.list | cut -f1 | grep -E '^(shoc|chai|heteromark|mixbench|parboil)' \
    | grep -v -E '^chai-ced' >/tmp/gpu-subset.list
sel=${TUNE_REGEX:-.}; [ "$cmd" = run ] && sel=${2:-.}
if [ "$sel" != . ]; then   # REGEX: none matching runs none
    grep -E "$sel" /tmp/gpu-subset.list >/tmp/gpu-sel.list; mv /tmp/gpu-sel.list /tmp/gpu-subset.list
fi
if [ "$cmd" = tune ]; then
    part=${2:-}
    [ -n "$part" ] && awk -v p="$part" 'NR % 2 == p % 2' /tmp/gpu-subset.list >/tmp/gpu-part.list &&
        mv /tmp/gpu-part.list /tmp/gpu-subset.list
    parboil_large
    mkdir -p "$OUT" || exit 1
    export CLRR_COSTS=$OUT/costs CLRR_VERIFIED=/tmp/verified
    PYTHONUNBUFFERED=1 python3 bench/suites_tune.py --clrr build/bin/clrr --subset /tmp/gpu-subset.list \
        --record-device gpu --budget "${TUNE_BUDGET:-10}" --deadline "${TUNE_DEADLINE:-420}" -v \
        ${TUNE_STAGE:+--stage "$TUNE_STAGE"} \
        --title "clrr optimize on third-party programs, NVIDIA H200${part:+ (part $part)}" \
        --results "$OUT/suites-tune${part:+-$part}.jsonl" --table "$OUT/suites-tune${part:+-$part}.md"
    exit
fi
parboil_large
PYTHONUNBUFFERED=1 python3 tests/suites/suite_run.py apps --clrr build/bin/clrr --subset /tmp/gpu-subset.list \
    --known tests/suites/apps.known --record-device gpu --cross cpu --timing -v \
    --results "$OUT/suites-gpu.jsonl" --table "$OUT/suites-gpu.md"
