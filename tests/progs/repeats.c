/* repeats.c — an OpenCL program whose dead and redundant commands repeat,
 * one decision over and over, for the optimizer's tests of plans that
 * write such a decision once (plan 1.11 "repeat"; tests/e2e/opt_patterns.sh).
 * Per iteration, on one in-order queue:
 *   a  fill t with 0                                   dead: overwritten by c
 *   b  write coef (256 floats, the same every time)    redundant from the 2nd
 *   c  write t = this iteration's data
 *   d  add(t, coef -> o)
 *   e  read o (blocking), checked on the host
 * So with --iters K a plan without repeats has K dead fills and K - 1
 * redundant writes; with them, one transformation each.
 * Usage: repeats [--iters K] [--size N] [--quiet]
 * Exit status 0 when every result is right, 1 otherwise (one message). */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "__kernel void add(__global const float *t, __global const float *coef, __global float *o, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) o[i] = t[i] + coef[i % 256];\n"
    "}\n";

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "repeats: %s failed (%d)\n", what, (int)err);
    exit(1);
}

int main(int argc, char **argv)
{
    unsigned iters = 1000, n = 1024;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            n = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else {
            fprintf(stderr, "usage: repeats [--iters K] [--size N] [--quiet]\n");
            return 2;
        }
    }
    if (!iters || n < 256 || n > (1u << 24)) {
        fprintf(stderr, "repeats: --iters at least 1, --size 256 to 16777216\n");
        return 2;
    }
    cl_int err;
    cl_platform_id plat;
    cl_device_id dev;
    if ((err = clGetPlatformIDs(1, &plat, NULL)) != CL_SUCCESS)
        die("clGetPlatformIDs", err);
    if ((err = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL)) != CL_SUCCESS)
        die("clGetDeviceIDs", err);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (!ctx)
        die("clCreateContext", err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    if (!q)
        die("clCreateCommandQueue", err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    if (!prog)
        die("clCreateProgramWithSource", err);
    if ((err = clBuildProgram(prog, 1, &dev, "", NULL, NULL)) != CL_SUCCESS)
        die("clBuildProgram", err);
    cl_kernel k = clCreateKernel(prog, "add", &err);
    if (!k)
        die("clCreateKernel", err);
    size_t bytes = (size_t)n * sizeof(float);
    cl_mem t = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem coef = clCreateBuffer(ctx, CL_MEM_READ_ONLY, 256 * sizeof(float), NULL, &err);
    cl_mem o = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    if (!t || !coef || !o)
        die("clCreateBuffer", err);
    float *data = malloc(bytes), *out = malloc(bytes), cf[256], zero = 0.0f;
    if (!data || !out)
        die("malloc", 0);
    for (unsigned i = 0; i < 256; i++)
        cf[i] = (float)i * 0.5f;
    clSetKernelArg(k, 0, sizeof t, &t);
    clSetKernelArg(k, 1, sizeof coef, &coef);
    clSetKernelArg(k, 2, sizeof o, &o);
    clSetKernelArg(k, 3, sizeof n, &n);
    size_t global = n;
    for (unsigned it = 0; it < iters; it++) {
        for (unsigned i = 0; i < n; i++)
            data[i] = (float)((it * 7u + i) % 1000u);
        if ((err = clEnqueueFillBuffer(q, t, &zero, sizeof zero, 0, bytes, 0, NULL, NULL)) != CL_SUCCESS)
            die("clEnqueueFillBuffer", err);
        if ((err = clEnqueueWriteBuffer(q, coef, CL_FALSE, 0, sizeof cf, cf, 0, NULL, NULL)) != CL_SUCCESS)
            die("clEnqueueWriteBuffer coef", err);
        if ((err = clEnqueueWriteBuffer(q, t, CL_FALSE, 0, bytes, data, 0, NULL, NULL)) != CL_SUCCESS)
            die("clEnqueueWriteBuffer t", err);
        if ((err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL)) != CL_SUCCESS)
            die("clEnqueueNDRangeKernel", err);
        if ((err = clEnqueueReadBuffer(q, o, CL_TRUE, 0, bytes, out, 0, NULL, NULL)) != CL_SUCCESS)
            die("clEnqueueReadBuffer", err);
        for (unsigned i = 0; i < n; i++)
            if (out[i] != data[i] + cf[i % 256]) {
                fprintf(stderr, "repeats: iteration %u: o[%u] = %g, expected %g\n", it, i, out[i],
                        data[i] + cf[i % 256]);
                return 1;
            }
    }
    if (!quiet)
        printf("repeats: %u iterations of %u floats right\n", iters, n);
    free(data);
    free(out);
    clReleaseMemObject(t);
    clReleaseMemObject(coef);
    clReleaseMemObject(o);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
