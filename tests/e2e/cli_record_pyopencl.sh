#!/usr/bin/env bash
# cli_record_pyopencl.sh BUILD_DIR — records a small pyopencl program (two
# arrays added by a kernel on the CPU device): its output must be identical
# with and without `clrr record`, and the trace must show the program build,
# the kernel launch with its global size, and the data moved.
set -u
B=${1:?usage: cli_record_pyopencl.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
CLRR=$B/bin/clrr
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CLRR" ] || fail "$CLRR is not built"
[ -f "$B/lib/libclrr.so" ] || { echo "skip: $B/lib/libclrr.so is not built"; exit 77; }
PY=/usr/bin/python3
$PY -c 'import numpy, pyopencl' 2>/dev/null || { echo "skip: $PY has no pyopencl"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
export PYOPENCL_NO_CACHE=1 PYOPENCL_COMPILER_OUTPUT=0
unset OPENCL_LAYERS LD_PRELOAD PYOPENCL_CTX
# Programs we did not build (sh, clinfo, python3) get the ASan runtime
# preloaded through `env` when the layer is an ASan build (CLRR_SAN=1): the
# layer needs it first, and only the recorded program may get it (clrr has
# its own). Preload mode cannot load the ASan layer into them at all.
FOREIGN=()
if [ "${CLRR_SAN:-0}" = 1 ]; then
    rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
    [ -f "$rt" ] || { echo "skip: no shared ASan runtime for programs we did not build"; exit 77; }
    FOREIGN=(env "LD_PRELOAD=$rt")
fi
cd "$T" || exit 1

cat >vadd.py <<'EOF'
import numpy as np
import pyopencl as cl

devs = [d for p in cl.get_platforms() for d in p.get_devices(device_type=cl.device_type.CPU)]
ctx = cl.Context([devs[0]])
queue = cl.CommandQueue(ctx)
n = 4096
a = np.arange(n, dtype=np.float32)
b = np.arange(n, dtype=np.float32) * 0.5
mf = cl.mem_flags
a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
b_buf = cl.Buffer(ctx, mf.READ_ONLY, b.nbytes)
c_buf = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
cl.enqueue_copy(queue, b_buf, b)
prg = cl.Program(ctx, """
__kernel void vadd(__global const float *a, __global const float *b, __global float *c)
{
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
""").build()
prg.vadd(queue, (n,), None, a_buf, b_buf, c_buf)
c = np.empty_like(a)
cl.enqueue_copy(queue, c, c_buf)
queue.finish()
print("device:", devs[0].name)
print("first:", c[:6].tolist())
print("sum:", float(c.sum()))
print("correct:", bool(np.array_equal(c, a + b)))
EOF

"${FOREIGN[@]}" $PY vadd.py >plain.out 2>plain.err || { echo "skip: the pyopencl program fails without clrr: $(tail -3 plain.err)"; exit 77; }
grep -q "correct: True" plain.out || fail "the pyopencl program computes wrong results: $(cat plain.out)"
"$CLRR" record -o vadd.clrr -- "${FOREIGN[@]}" $PY vadd.py >rec.out 2>rec.err
rc=$?
[ $rc -eq 0 ] || fail "clrr record -- python3 vadd.py: exit $rc: $(tail -5 rec.err)"
cmp -s plain.out rec.out || fail "stdout differs under clrr record: $(diff plain.out rec.out | head -20)"
cmp -s plain.err rec.err || fail "stderr differs under clrr record: $(diff plain.err rec.err | head -20)"
[ -s vadd.clrr ] || fail "no trace written"

"$CLRR" dump vadd.clrr >dump.txt 2>err || fail "clrr dump: $(cat err)"
for fn in clGetPlatformIDs clCreateContext clCreateBuffer clCreateProgramWithSource \
          clBuildProgram clCreateKernel clSetKernelArg clEnqueueNDRangeKernel; do
    grep -q "^#[0-9]* \[t[0-9]*\] $fn(" dump.txt || fail "the dump holds no $fn call"
done
grep -q "^#[0-9]* \[t[0-9]*\] clEnqueue\(Read\|Write\)Buffer" dump.txt || fail "the dump holds no buffer read/write"
grep "clEnqueueNDRangeKernel(" dump.txt | grep -q "global_work_size=\[4096\]" ||
    fail "the kernel launch does not show global_work_size=[4096]: $(grep clEnqueueNDRangeKernel dump.txt)"
grep "clCreateProgramWithSource(" dump.txt | grep -q "strings=.*blob" || fail "the program source is not in the trace"
grep "clCreateKernel(" dump.txt | grep -q 'kernel_name="vadd"' || fail "clCreateKernel does not show kernel_name=\"vadd\""
grep "clBuildProgram(" dump.txt | grep -q "= CL_SUCCESS" || fail "clBuildProgram did not return CL_SUCCESS"

"$CLRR" info --json vadd.clrr >info.json 2>err || fail "clrr info: $(cat err)"
/usr/bin/python3 - <<'EOF' || fail "clrr info --json: $(cat info.json)"
import json
i = json.load(open("info.json"))
assert i["kernel_launches"] == 1, i["kernel_launches"]
assert i["bytes_host_to_device"] >= 2 * 4096 * 4, i["bytes_host_to_device"]
assert i["bytes_device_to_host"] >= 4096 * 4, i["bytes_device_to_host"]
assert i["incomplete_calls"] == 0 and not i["truncated"] and i["has_index"], i
EOF
echo "ok: pyopencl vadd identical under clrr record; trace shows build, launch and data"
