/* strided.c — one kernel that stores through a strided index, for
 * tests/e2e/replay_fault.sh: put(o, stride) sets o[gid * stride] = gid
 * over 64 work-items and a buffer of 64 uints, stride 1, and reads the
 * buffer back. The test edits the recorded stride into a value that
 * sends every store but the first far outside the buffer (unmapped
 * memory: a clean fault, nothing of the process overwritten). Exit 0 when
 * the read-back is right, 1 when not, 2 when a call fails. */
#include <CL/cl.h>
#include <stdio.h>

#define N 64

static const char src[] =
    "__kernel void put(__global uint *o, ulong stride) { size_t i = get_global_id(0); o[i * stride] = (uint)i; }\n";

int main(void)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    cl_uint out[N];
    cl_ulong stride = 1;
    size_t global = N;
    const char *s = src;

    if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return 2;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = err == CL_SUCCESS ? clCreateCommandQueue(ctx, dev, 0, &err) : NULL;
    cl_program prog = err == CL_SUCCESS ? clCreateProgramWithSource(ctx, 1, &s, NULL, &err) : NULL;
    if (err != CL_SUCCESS || clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
        return 2;
    cl_kernel k = clCreateKernel(prog, "put", &err);
    cl_mem o = err == CL_SUCCESS ? clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof out, NULL, &err) : NULL;
    if (err != CL_SUCCESS || clSetKernelArg(k, 0, sizeof o, &o) != CL_SUCCESS ||
        clSetKernelArg(k, 1, sizeof stride, &stride) != CL_SUCCESS ||
        clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) != CL_SUCCESS ||
        clEnqueueReadBuffer(q, o, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL) != CL_SUCCESS)
        return 2;
    for (cl_uint i = 0; i < N; i++)
        if (out[i] != i) {
            fprintf(stderr, "strided: element %u is %u\n", i, out[i]);
            return 1;
        }
    clReleaseMemObject(o);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("strided: ok\n");
    return 0;
}
