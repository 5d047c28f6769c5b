#!/usr/bin/env bash
# Runs on the GPU machine over a build carried from here (NVIDIA's OpenCL
# driver only): the reliability checks of tests/e2e on a real GPU driver —
# multi-threaded recordings replayed verified (tests/progs/threads), fatal
# signals under the recorder (tests/progs/crash: same exit status and output
# as without it, every call before the crash in the trace), and a recording
# onto a file-size limit (the application finishes with identical output).
# The layer is preloaded (CUDA's bundled libOpenCL.so.1, first in the library path there, does not load it as a
# layer). Results: $OUT/gpu_reliability.txt. Usage: bench/gpu_reliability.sh [BUILD]
set -u
B=${1:-build}
OUT=${OUT:-gpu-out}
mkdir -p "$OUT" /tmp/rel
# NVIDIA's platform first (the test programs take the first one); its ICD
# registry lists only PoCL, which ocl-icd reads whatever OCL_ICD_VENDORS says
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
CLRR=$B/bin/clrr
LAYER=$(realpath "$B/lib/libclrr.so")
T=/tmp/rel
py_summary='import json,sys; d=json.load(sys.stdin); print("recorded on %s, replayed on %s: readbacks=%d mismatches=%d unverified=%d ok=%s" % (d["recorded_device"], d["device"], d["readbacks"], d["mismatches"], d["unverified"], d["ok"]))'
{
    echo "== devices"; "$CLRR" devices | grep -v '^  '
    echo "== threads: record on the GPU, replay on the GPU (verified)"
    for n in 2 4 8 16; do
        "$CLRR" record --force --preload -o $T/th$n.clrr -- "$B/tests/progs/threads" --threads $n --iters 30 --log $T/th$n.log \
            >$T/th$n.out 2>&1 || echo "FAILED: threads $n under clrr: $(tail -2 $T/th$n.out)"
        calls=$("$CLRR" info --json $T/th$n.clrr | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"])')
        r=$("$CLRR" replay --json $T/th$n.clrr | python3 -c "$py_summary")
        echo "threads=$n trace_calls=$calls replay: $r"
    done
    echo "== fatal signals (crash MODE HANDLER): exit status and output with and without the recorder"
    for c in segv:none segv:before segv:after abort:none abort:before term:none exit:none; do
        mode=${c%%:*} when=${c#*:}
        ( "$B/tests/progs/crash" $mode $when >$T/p.out 2>/dev/null; exit $? ) 2>/dev/null; prc=$?
        ( LD_PRELOAD=$LAYER CLRR_OUTPUT=$T/c.clrr "$B/tests/progs/crash" $mode $when >$T/r.out 2>$T/r.err; exit $? ) 2>/dev/null; rrc=$?
        made=$(sed -n 's/^calls: //p' $T/r.out)
        got=$("$CLRR" info --json $T/c.clrr 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"])' 2>/dev/null)
        same=$(cmp -s <(grep -v '^calls: ' $T/p.out) <(grep -v '^calls: ' $T/r.out) && echo yes || echo NO)
        echo "$c: exit plain=$prc recorded=$rrc output_identical=$same calls_made=$made calls_in_trace=${got:-none} stderr_lines=$(wc -l <$T/r.err)"
    done
    echo "== user events: each set moved after the blocking call it released (a second thread's END order), replayed on the GPU"
    "$CLRR" record --force --preload -o $T/ue.clrr -- "$B/tests/progs/user_events" >$T/ue.out 2>&1 || echo "FAILED: user_events under clrr: $(tail -2 $T/ue.out)"
    python3 tests/e2e/move_sets.py "$B" $T/ue.clrr $T/uem.clrr >$T/ue.moved 2>&1 || echo "FAILED: move_sets.py: $(tail -1 $T/ue.moved)"
    for t in ue uem; do
        r=$(timeout 120 "$CLRR" replay --json $T/$t.clrr | python3 -c "$py_summary" 2>&1)
        early=$(timeout 120 "$CLRR" replay --json $T/$t.clrr | python3 -c 'import json,sys; print(json.load(sys.stdin)["user_events_early"])' 2>&1)
        echo "$t.clrr (sets moved: $([ $t = uem ] && cat $T/ue.moved || echo 0)): $r, user events set early: $early"
    done
    echo "== file-size limit 4 MiB while recording vecadd (8 MiB per buffer)"
    CLRR_APP_DEVICE=gpu "$B/apps/vecadd" --size 2097152 --iters 3 >$T/v.plain 2>&1; prc=$?
    ( ulimit -f 4096; CLRR_APP_DEVICE=gpu LD_PRELOAD=$LAYER CLRR_OUTPUT=$T/v.clrr "$B/apps/vecadd" --size 2097152 --iters 3 >$T/v.rec 2>$T/v.err; exit $? ); rrc=$?
    mask() { sed "s/ocl_ms=[0-9.]*//" "$1"; }
    echo "exit plain=$prc recorded=$rrc output_identical=$(cmp -s <(mask $T/v.plain) <(mask $T/v.rec) && echo yes || echo NO) stderr: $(cat $T/v.err)"
    "$CLRR" info $T/v.clrr 2>&1 | grep -E "^(trace|calls)"
} 2>&1 | tee "$OUT/gpu_reliability.txt"
exit 0
