/* wgtune.c — an OpenCL program with launch shapes whose best work-group
 * size is known by construction, for the wgsize pass's tests
 * (tests/e2e/opt_tune.sh). Per iteration, on one in-order queue:
 *   blur  a 2-D 5-point stencil over a W x H float image, launched with the
 *         local size --local X,Y (default 1,1: one work-item per work-group,
 *         the worst there is on a CPU device); its result does not depend on
 *         the local size, so a tuner may retune it
 *   ids   writes, per work-item, get_local_id(0) + 1000 * get_group_id(0):
 *         its result depends on the local size (recorded with 1, equally
 *         bad): a tuner must never retune it
 * then both outputs are read back and checked on the host, and a checksum
 * of both is printed ("wgtune: ok sum=..."), the same whatever local size
 * runs blur.
 * Usage: wgtune [--size N] [--iters K] [--local X,Y] [--quiet]
 * Exit status 0 when every result is right, 1 otherwise (one message). */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "__kernel void blur(__global const float *in, __global float *out, uint w, uint h)\n"
    "{\n"
    "    uint x = get_global_id(0), y = get_global_id(1);\n"
    "    uint xl = x ? x - 1 : x, xr = x + 1 < w ? x + 1 : x;\n"
    "    uint yu = y ? y - 1 : y, yd = y + 1 < h ? y + 1 : y;\n"
    "    out[y * w + x] = (in[y * w + x] * 4.0f + in[y * w + xl] + in[y * w + xr] + in[yu * w + x] +\n"
    "                      in[yd * w + x]) * 0.125f;\n"
    "}\n"
    "__kernel void ids(__global uint *out)\n"
    "{\n"
    "    out[get_global_id(0)] = (uint)get_local_id(0) + 1000u * (uint)get_group_id(0);\n"
    "}\n";

#define CHECK(e, what)                                                       \
    do {                                                                     \
        cl_int e_ = (e);                                                     \
        if (e_ != CL_SUCCESS) {                                              \
            fprintf(stderr, "wgtune: %s failed (%d)\n", what, (int)e_);      \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    size_t n = 256, lx = 1, ly = 1;
    unsigned iters = 2;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            n = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--local") && i + 1 < argc) {
            if (sscanf(argv[++i], "%zu,%zu", &lx, &ly) != 2 || !lx || !ly) {
                fprintf(stderr, "wgtune: --local takes X,Y\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else {
            fprintf(stderr, "usage: wgtune [--size N] [--iters K] [--local X,Y] [--quiet]\n");
            return 2;
        }
    }
    if (n < 16 || n > 4096 || n % lx || n % ly || !iters) {
        fprintf(stderr, "wgtune: --size must be 16..4096 and divisible by the local size\n");
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
    cl_kernel kb = clCreateKernel(prog, "blur", &e);
    CHECK(e, "clCreateKernel blur");
    cl_kernel ki = clCreateKernel(prog, "ids", &e);
    CHECK(e, "clCreateKernel ids");
    size_t cells = n * n;
    float *in = malloc(cells * sizeof *in), *out = malloc(cells * sizeof *out);
    uint32_t *ids = malloc(cells * sizeof *ids);
    if (!in || !out || !ids)
        return 1;
    cl_mem bin = clCreateBuffer(ctx, CL_MEM_READ_ONLY, cells * sizeof *in, NULL, &e);
    CHECK(e, "clCreateBuffer");
    cl_mem bout = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, cells * sizeof *out, NULL, &e);
    CHECK(e, "clCreateBuffer");
    cl_mem bids = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, cells * sizeof *ids, NULL, &e);
    CHECK(e, "clCreateBuffer");
    cl_uint w = (cl_uint)n, h = (cl_uint)n;
    CHECK(clSetKernelArg(kb, 0, sizeof bin, &bin), "clSetKernelArg");
    CHECK(clSetKernelArg(kb, 1, sizeof bout, &bout), "clSetKernelArg");
    CHECK(clSetKernelArg(kb, 2, sizeof w, &w), "clSetKernelArg");
    CHECK(clSetKernelArg(kb, 3, sizeof h, &h), "clSetKernelArg");
    CHECK(clSetKernelArg(ki, 0, sizeof bids, &bids), "clSetKernelArg");
    double sum = 0;
    for (unsigned it = 0; it < iters; it++) {
        for (size_t i = 0; i < cells; i++)
            in[i] = (float)((i * 7 + it * 13) % 101) * 0.25f;
        CHECK(clEnqueueWriteBuffer(q, bin, CL_TRUE, 0, cells * sizeof *in, in, 0, NULL, NULL), "write");
        size_t g2[2] = {n, n}, l2[2] = {lx, ly}, g1 = cells, l1 = 1;
        CHECK(clEnqueueNDRangeKernel(q, kb, 2, NULL, g2, l2, 0, NULL, NULL), "blur");
        CHECK(clEnqueueNDRangeKernel(q, ki, 1, NULL, &g1, &l1, 0, NULL, NULL), "ids");
        CHECK(clEnqueueReadBuffer(q, bout, CL_TRUE, 0, cells * sizeof *out, out, 0, NULL, NULL), "read");
        CHECK(clEnqueueReadBuffer(q, bids, CL_TRUE, 0, cells * sizeof *ids, ids, 0, NULL, NULL), "read");
        for (size_t y = 0; y < n; y++)
            for (size_t x = 0; x < n; x++) {
                size_t xl = x ? x - 1 : x, xr = x + 1 < n ? x + 1 : x, yu = y ? y - 1 : y, yd = y + 1 < n ? y + 1 : y;
                float want = (in[y * n + x] * 4.0f + in[y * n + xl] + in[y * n + xr] + in[yu * n + x] +
                              in[yd * n + x]) * 0.125f;
                if (out[y * n + x] != want) {
                    fprintf(stderr, "wgtune: blur wrong at %zu,%zu: %g, expected %g\n", x, y, out[y * n + x], want);
                    return 1;
                }
                sum += out[y * n + x];
            }
        for (size_t i = 0; i < cells; i++) {
            if (ids[i] != 1000u * (uint32_t)i) {
                fprintf(stderr, "wgtune: ids wrong at %zu: %u\n", i, ids[i]);
                return 1;
            }
            sum += ids[i] * 1e-6;
        }
    }
    CHECK(clFinish(q), "clFinish");
    if (!quiet)
        printf("wgtune: ok sum=%.6f\n", sum);
    clReleaseMemObject(bin);
    clReleaseMemObject(bout);
    clReleaseMemObject(bids);
    clReleaseKernel(kb);
    clReleaseKernel(ki);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(in);
    free(out);
    free(ids);
    return 0;
}
