#!/usr/bin/env bash
# Runs on the GPU machine over a build carried from here: does the ICD
# loader there (Ubuntu 24.04's ocl-icd) load the recorder as a layer
# (OPENCL_LAYERS)? Prints the loader's version, its own diagnostics about
# layers (OCL_ICD_DEBUG), cllayerinfo when installed, and whether a layer
# run writes a trace. Usage: bench/gpu_layer.sh [BUILD]
set -u
B=${1:-build}
LAYER=$(realpath "$B/lib/libclrr.so")
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
echo "== loader"
dpkg -l 2>/dev/null | awk '/ocl-icd|opencl-icd|libopencl/ {print $2, $3}'
ls -la /usr/lib/x86_64-linux-gnu/libOpenCL.so* 2>/dev/null
strings /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 2>/dev/null | grep -E "OPENCL_LAYERS|clInitLayer|clGetLayerInfo|OCL_ICD_ENABLE" | sort -u
echo "== cllayerinfo"
command -v cllayerinfo >/dev/null && OPENCL_LAYERS=$LAYER cllayerinfo 2>&1 | head -20
echo "== a layer run (OCL_ICD_DEBUG=15)"
rm -f /tmp/layer.clrr
OCL_ICD_DEBUG=15 OPENCL_LAYERS=$LAYER CLRR_OUTPUT=/tmp/layer.clrr CLRR_APP_DEVICE=gpu "$B/apps/vecadd" --size 4096 \
    >/tmp/layer.out 2>/tmp/layer.err
echo "exit $?; stdout: $(tail -1 /tmp/layer.out)"
grep -i -E "layer|libclrr" /tmp/layer.err | head -20
[ -s /tmp/layer.clrr ] && "$B/bin/clrr" info /tmp/layer.clrr | head -4 || echo "no trace written"
echo "== clrr record (default mode) there"
"$B/bin/clrr" record --force -o /tmp/rec.clrr -- "$B/apps/vecadd" --size 4096 2>&1 | tail -2
"$B/bin/clrr" info /tmp/rec.clrr 2>&1 | sed -n 3p
