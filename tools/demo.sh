#!/usr/bin/env bash
# `make demo`: record a bundled workload (Sobel, three kernels) through the
# clrr layer and show what the trace holds.
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
echo "trace kept in $trace"
