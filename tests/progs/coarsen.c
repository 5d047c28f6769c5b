/* coarsen.c — an OpenCL program for the coarsening tests
 * (tests/e2e/opt_coarsen.sh). Per iteration, on one in-order queue:
 *   axpb  a light element-wise kernel, y[i] = a * x[i] + b over a large 1-D
 *         range (--size N work-items, the local size left to the driver),
 *         with a bound check (n below the global size), where the cost per
 *         work-item dominates: what thread coarsening is for
 *   lid   writes get_local_id(0) + 1000 * get_group_id(0) (local size 4):
 *         coarsening dimension 0 would change it, so the rewriter refuses
 * then both outputs are read back and checked on the host, and a checksum
 * is printed ("coarsen: ok sum=..."), the same however axpb runs.
 * Usage: coarsen [--size N] [--iters K] [--quiet]
 * Exit status 0 when every result is right, 1 otherwise (one message). */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "__kernel void axpb(__global const float *x, __global float *y, float a, float b, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i >= n)\n"
    "        return;\n"
    "    y[i] = a * x[i] + b;\n"
    "}\n"
    "__kernel void lid(__global uint *out)\n"
    "{\n"
    "    out[get_global_id(0)] = (uint)get_local_id(0) + 1000u * (uint)get_group_id(0);\n"
    "}\n";

#define CHECK(e, what)                                                       \
    do {                                                                     \
        cl_int e_ = (e);                                                     \
        if (e_ != CL_SUCCESS) {                                              \
            fprintf(stderr, "coarsen: %s failed (%d)\n", what, (int)e_);     \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    size_t n = 1 << 20;
    unsigned iters = 2;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            n = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else {
            fprintf(stderr, "usage: coarsen [--size N] [--iters K] [--quiet]\n");
            return 2;
        }
    }
    if (n < 64 || n > (1u << 26) || n % 64 || !iters) {
        fprintf(stderr, "coarsen: --size must be a multiple of 64, 64..2^26\n");
        return 2;
    }
    cl_platform_id plat;
    cl_device_id dev;
    cl_int e;
    CHECK(clGetPlatformIDs(1, &plat, NULL), "clGetPlatformIDs");
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), "clGetDeviceIDs");
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(e, "clCreateContext");
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    CHECK(e, "clCreateCommandQueue");
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &e);
    CHECK(e, "clCreateProgramWithSource");
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL), "clBuildProgram");
    cl_kernel ka = clCreateKernel(prog, "axpb", &e);
    CHECK(e, "clCreateKernel axpb");
    cl_kernel kl = clCreateKernel(prog, "lid", &e);
    CHECK(e, "clCreateKernel lid");
    size_t nl = 256;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    uint32_t *ids = malloc(nl * sizeof *ids);
    if (!x || !y || !ids)
        return 1;
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY, n * sizeof *x, NULL, &e);
    CHECK(e, "clCreateBuffer");
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof *y, NULL, &e);
    CHECK(e, "clCreateBuffer");
    cl_mem bids = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, nl * sizeof *ids, NULL, &e);
    CHECK(e, "clCreateBuffer");
    float a = 1.5f, b = -0.25f;
    cl_uint valid = (cl_uint)(n - 17);   /* the last 17 work-items do nothing */
    CHECK(clSetKernelArg(ka, 0, sizeof bx, &bx), "clSetKernelArg");
    CHECK(clSetKernelArg(ka, 1, sizeof by, &by), "clSetKernelArg");
    CHECK(clSetKernelArg(ka, 2, sizeof a, &a), "clSetKernelArg");
    CHECK(clSetKernelArg(ka, 3, sizeof b, &b), "clSetKernelArg");
    CHECK(clSetKernelArg(ka, 4, sizeof valid, &valid), "clSetKernelArg");
    CHECK(clSetKernelArg(kl, 0, sizeof bids, &bids), "clSetKernelArg");
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        y[i] = -1.0f;
    CHECK(clEnqueueWriteBuffer(q, by, CL_TRUE, 0, n * sizeof *y, y, 0, NULL, NULL), "write");
    for (unsigned it = 0; it < iters; it++) {
        for (size_t i = 0; i < n; i++)
            x[i] = (float)((i * 7 + it * 13) % 101) * 0.25f;
        CHECK(clEnqueueWriteBuffer(q, bx, CL_TRUE, 0, n * sizeof *x, x, 0, NULL, NULL), "write");
        size_t g1 = n, gl = nl, ll = 4;
        CHECK(clEnqueueNDRangeKernel(q, ka, 1, NULL, &g1, NULL, 0, NULL, NULL), "axpb");
        CHECK(clEnqueueNDRangeKernel(q, kl, 1, NULL, &gl, &ll, 0, NULL, NULL), "lid");
        CHECK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, n * sizeof *y, y, 0, NULL, NULL), "read");
        CHECK(clEnqueueReadBuffer(q, bids, CL_TRUE, 0, nl * sizeof *ids, ids, 0, NULL, NULL), "read");
        for (size_t i = 0; i < n; i++) {
            float want = i < valid ? a * x[i] + b : -1.0f;
            if (y[i] != want) {
                fprintf(stderr, "coarsen: axpb wrong at %zu: %g, expected %g\n", i, y[i], want);
                return 1;
            }
            sum += y[i];
        }
        for (size_t i = 0; i < nl; i++) {
            if (ids[i] != (uint32_t)(i % 4 + 1000 * (i / 4))) {
                fprintf(stderr, "coarsen: lid wrong at %zu: %u\n", i, ids[i]);
                return 1;
            }
            sum += ids[i] * 1e-6;
        }
    }
    CHECK(clFinish(q), "clFinish");
    if (!quiet)
        printf("coarsen: ok sum=%.6f\n", sum);
    clReleaseMemObject(bx);
    clReleaseMemObject(by);
    clReleaseMemObject(bids);
    clReleaseKernel(ka);
    clReleaseKernel(kl);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(x);
    free(y);
    free(ids);
    return 0;
}
