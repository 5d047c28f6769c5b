#!/usr/bin/env bash
# Runs on a GPU machine over a build carried from here: every workload and
# test program plain and under `clrr run --plan` with every buffer transfer
# staged (CLRR_STAGE_MIN=0, the default --stage auto, which stages on a
# discrete GPU), compared line by line (less the programs' own timings).
# Usage: bench/gpu_stage.sh BUILD PLAN   (any plan will do: staging does
# not depend on what the plan transforms). Prints one line per program.
set -u
B=${1:?usage: gpu_stage.sh BUILD PLAN}
P=${2:?usage: gpu_stage.sh BUILD PLAN}
strip() { sed -E 's/ ?ocl_ms=[0-9.]+//; s/ [0-9.]+ ?ms\b//g' "$1"; }
export CLRR_STAGE=${CLRR_STAGE:-auto}   # all: on any device (PoCL here)
bad=0
for app in "$B"/apps/* "$B"/tests/progs/api_tour "$B"/tests/progs/user_events "$B"/tests/progs/image_map \
    "$B"/tests/progs/deadwork; do
    n=$(basename "$app")
    timeout 300 "$app" >/tmp/st-plain.out 2>&1; rc0=$?
    CLRR_STAGE_MIN=0 timeout 300 "$B/bin/clrr" run -q --preload --plan "$P" --report /tmp/st.json -- "$app" \
        >/tmp/st-staged.out 2>&1; rc1=$?
    staged=$(python3 -c "import json; d=json.load(open('/tmp/st.json')); print(d['staged_writes'], d['staged_reads'])" 2>/dev/null)
    if [ "$rc0" = "$rc1" ] && [ "$(strip /tmp/st-plain.out)" = "$(strip /tmp/st-staged.out)" ]; then
        echo "same: $n (exit $rc0; staged writes, reads: $staged)"
    else
        echo "DIFFERENT: $n (exit $rc0 plain, $rc1 staged)"; diff /tmp/st-plain.out /tmp/st-staged.out | head -5; bad=1
    fi
done
exit $bad
