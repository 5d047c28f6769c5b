#!/usr/bin/env bash
# Runs on the GPU machine over a build carried from here: the optimizer's
# plans on NVIDIA's driver. The machine has no LLVM/libclang, so the plans
# are made here (bench/gpu_opt.sh --plans DIR: records the workloads on
# PoCL with the same arguments and runs `clrr optimize`); there, each
# workload is recorded on the GPU and replayed REPS times without and with
# its plan (made from the PoCL recording of the same run: patterns name
# kernels, shapes and arguments, not devices), alternating, each replay
# running the trace LOOPS times (--loop): exec is the median over runs of
# the per-loop median time inside OpenCL calls (steady state: the first
# loop also pays for building and first launching the kernels), wall the
# whole session (one-time costs included: the fused programs' builds).
# Every replay must verify every read-back.
# Usage: bench/gpu_opt.sh --plans DIR [BUILD]   (here)
#        bench/gpu_opt.sh DIR [BUILD]           (on the GPU machine)
set -u
WORK="sobel:--iters 6|geomatrix:--iters 6|exposure:--iters 6|deadwork:--size 1048576 --iters 6 --work 8|vecadd:--iters 6"
if [ "${1:-}" = --plans ]; then
    D=$2; B=${3:-build}; mkdir -p "$D"
    IFS='|'; for w in $WORK; do
        app=${w%%:*} args=${w#*:}
        bin=$B/apps/$app; [ -x "$bin" ] || bin=$B/tests/progs/$app
        IFS=' '; "$B/bin/clrr" record --force -o "/tmp/$app.pocl.clrr" -- "$bin" $args --quiet || echo "FAILED: record $app"
        "$B/bin/clrr" optimize "/tmp/$app.pocl.clrr" -o "$D/$app.plan" | grep -E "^pass" | sed "s/^/$app: /"
        IFS='|'
    done
    exit 0
fi
D=${1:?usage: gpu_opt.sh DIR [BUILD]}; B=${2:-build}; REPS=${REPS:-5}; LOOPS=${LOOPS:-4}
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
C=$B/bin/clrr
py_med='import json,sys,statistics
rows=[json.loads(l) for l in sys.stdin]
def m(k, plan): return statistics.median([r[k] for r in rows if r["plan"]==plan])/1e6
# exec: per-loop medians
bad=[r for r in rows if not r["ok"]]
print("%8.2f %8.2f %6.2fx %9.1f %9.1f  fused=%d dropped=%d applied=%d/%d readbacks=%d%s" % (m("exec_ns",0), m("exec_ns",1), m("exec_ns",0)/m("exec_ns",1), m("wall_ns",0), m("wall_ns",1),
  rows[-1]["fused"], rows[-1]["dropped"], rows[-1]["applied"], rows[-1]["xf"], rows[-1]["readbacks"], "  NOT VERIFIED: %d" % len(bad) if bad else ""))'
echo "workload                 exec ms  --plan  speedup   wall ms   --plan"
IFS='|'; for w in $WORK; do
    app=${w%%:*} args=${w#*:}
    bin=$B/apps/$app; [ -x "$bin" ] || bin=$B/tests/progs/$app
    IFS=' '
    CLRR_APP_DEVICE=gpu "$C" record --force --preload -o "/tmp/$app.gpu.clrr" -- "$bin" $args --quiet >/dev/null 2>&1 || echo "FAILED: record $app"
    for i in $(seq "$REPS"); do
        for p in 0 1; do
            if [ $p = 1 ]; then a=(--plan "$D/$app.plan"); else a=(); fi
            "$C" replay --json --loop "$LOOPS" --tolerance rel=1e-4,abs=1e-5 "/tmp/$app.gpu.clrr" "${a[@]}" 2>/dev/null | python3 -c "import json,sys
d=json.load(sys.stdin); pl=d.get('plan',{})
print(json.dumps({'plan':$p,'ok':d['ok'],'exec_ns':d['exec_ns_loop_median'],'wall_ns':d['wall_ns'],'fused':pl.get('fused',0),'dropped':pl.get('dropped',0),'applied':pl.get('applied',0),'xf':pl.get('transformations',0),'readbacks':d['readbacks']}))"
        done
    done | python3 -c "$py_med" | sed "s/^/$(printf '%-22s' "$app")/"
    IFS='|'
done
