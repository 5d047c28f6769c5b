/* firstdev.c — an OpenCL program that, as many do, takes the first
 * platform and its first device and never asks which: what `clrr record
 * --device` and `clrr run --device` present first is where it runs
 * (tests/e2e/record_device.sh).
 * It prints the platform and device names it got, then computes
 * out[i] = a[i] * 3 + i on that device (a[i] = i * 7 % 1000) and checks
 * every element on the host.
 * Usage: firstdev [context]   (context: the context is made with
 *        clCreateContextFromType(CL_DEVICE_TYPE_DEFAULT) and no platform,
 *        the device taken from it; else clGetPlatformIDs, clGetDeviceIDs
 *        of type ALL, clCreateContext)
 * Output: "platform: NAME", "device: NAME", then "result: ok" or
 * "result: wrong at I"; exit 0 when right, 1 when wrong or on an OpenCL
 * error (one line), 2 usage. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static const char *source =
    "__kernel void triple(__global const uint *a, __global uint *out)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = a[i] * 3u + (uint)i;\n"
    "}\n";

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "firstdev: %s failed: %d\n", what, (int)err);
    exit(1);
}

int main(int argc, char **argv)
{
    int from_type = argc == 2 && !strcmp(argv[1], "context");
    if (argc > 2 || (argc == 2 && !from_type)) {
        fprintf(stderr, "usage: firstdev [context]\n");
        return 2;
    }
    cl_int err;
    cl_platform_id plat = NULL;
    cl_device_id dev = NULL;
    cl_context ctx;
    if (from_type) {
        ctx = clCreateContextFromType(NULL, CL_DEVICE_TYPE_DEFAULT, NULL, NULL, &err);
        if (!ctx || err != CL_SUCCESS)
            die("clCreateContextFromType", err);
        if ((err = clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL)) != CL_SUCCESS)
            die("clGetContextInfo", err);
        if ((err = clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL)) != CL_SUCCESS)
            die("clGetDeviceInfo", err);
    } else {
        cl_uint np = 0, nd = 0;
        if ((err = clGetPlatformIDs(1, &plat, &np)) != CL_SUCCESS || !np)
            die("clGetPlatformIDs", err);
        if ((err = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, &nd)) != CL_SUCCESS || !nd)
            die("clGetDeviceIDs", err);
        ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        if (!ctx || err != CL_SUCCESS)
            die("clCreateContext", err);
    }
    char pname[256] = "", dname[256] = "";
    clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
    printf("platform: %s\ndevice: %s\n", pname, dname);
    fflush(stdout);

    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    if (!q || err != CL_SUCCESS)
        die("clCreateCommandQueueWithProperties", err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    if (!prog || err != CL_SUCCESS)
        die("clCreateProgramWithSource", err);
    if ((err = clBuildProgram(prog, 1, &dev, "", NULL, NULL)) != CL_SUCCESS)
        die("clBuildProgram", err);
    cl_kernel k = clCreateKernel(prog, "triple", &err);
    if (!k || err != CL_SUCCESS)
        die("clCreateKernel", err);
    static cl_uint a[N], out[N];
    for (cl_uint i = 0; i < N; i++) {
        a[i] = i * 7u % 1000u;
        out[i] = 0xdeadbeefu;
    }
    cl_mem ba = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    if (!ba || err != CL_SUCCESS)
        die("clCreateBuffer", err);
    cl_mem bo = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof out, NULL, &err);
    if (!bo || err != CL_SUCCESS)
        die("clCreateBuffer", err);
    size_t gsz = N;
    if ((err = clSetKernelArg(k, 0, sizeof ba, &ba)) != CL_SUCCESS || (err = clSetKernelArg(k, 1, sizeof bo, &bo)))
        die("clSetKernelArg", err);
    if ((err = clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL)) != CL_SUCCESS)
        die("clEnqueueNDRangeKernel", err);
    if ((err = clEnqueueReadBuffer(q, bo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL)) != CL_SUCCESS)
        die("clEnqueueReadBuffer", err);
    int bad = -1;
    for (cl_uint i = 0; i < N && bad < 0; i++)
        if (out[i] != a[i] * 3u + i)
            bad = (int)i;
    if (bad < 0)
        printf("result: ok\n");
    else
        printf("result: wrong at %d\n", bad);
    clReleaseMemObject(ba);
    clReleaseMemObject(bo);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return bad < 0 ? 0 : 1;
}
