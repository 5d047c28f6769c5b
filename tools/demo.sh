#!/usr/bin/env bash
# `make demo`: record a bundled workload (Sobel, three kernels) through the
# clrr layer, show what the trace holds, replay it with every read-back
# verified, cut one kernel out of it, and analyze it (kernel accesses,
# statistics, the dependency graph as SVG, a Perfetto timeline).
set -euo pipefail
B=${1:-build}
out=${CLRR_DEMO_DIR:-$(mktemp -d /tmp/clrr-demo.XXXXXX)}
trace=$out/sobel.clrr
echo "== clrr record -o $trace -- $B/apps/sobel --size 512 --iters 3"
"$B/bin/clrr" record -o "$trace" -- "$B/apps/sobel" --size 512 --iters 3
echo
echo "== clrr info $trace"
"$B/bin/clrr" info "$trace"
echo
echo "== clrr dump --range 1:25 $trace"
"$B/bin/clrr" dump --range 1:25 "$trace"
echo
echo "== clrr replay --timing $trace"
"$B/bin/clrr" replay --timing "$trace"
echo
# (awk reads all of dump's output: an early exit would kill dump with SIGPIPE)
k=$("$B/bin/clrr" dump "$trace" | awk '/clEnqueueNDRangeKernel/ && !k { k = substr($1, 2) } END { print k }')
echo "== clrr trim $trace -o $out/kernel.clrr --kernel $k, then replay it"
"$B/bin/clrr" trim "$trace" -o "$out/kernel.clrr" --kernel "$k"
"$B/bin/clrr" replay "$out/kernel.clrr"
echo
echo "== clrr analyze $trace"
"$B/bin/clrr" analyze "$trace"
echo
echo "== clrr stats $trace"
"$B/bin/clrr" stats "$trace"
echo
echo "== clrr graph $trace --collapse -o $out/sobel.svg; clrr timeline $trace -o $out/sobel.json"
"$B/bin/clrr" graph "$trace" --collapse -o "$out/sobel.svg"
"$B/bin/clrr" timeline "$trace" -o "$out/sobel.json"
echo "(open $out/sobel.svg in a browser, $out/sobel.json in https://ui.perfetto.dev)"
echo
echo "traces and pictures kept in $out"
