/* bigblob.c — buffers of more than 1 MiB with compressible contents, so
 * that a trace holding blobs hashed by leaves (FORMAT.md 5.1, since 1.2),
 * or whole (1.0 and 1.1), stays small enough to keep in traces/.
 *
 *   bigblob [--quiet]
 *
 * Calls: an input buffer of 1.5 MiB + 12 bytes (COPY_HOST_PTR), an output
 * buffer, a kernel that doubles every int plus one, a blocking read of the
 * output (1.5 MiB + 12), then a write of the same input again (a repeated
 * blob) and a second launch and read. Exit 0 when both read-backs are right. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "bigblob: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char *src =
    "__kernel void twice(__global const int *a, __global int *b) {\n"
    "    size_t i = get_global_id(0); b[i] = a[i] * 2 + 1; }\n";

int main(int argc, char **argv)
{
    int quiet = argc > 1 && !strcmp(argv[1], "--quiet");
    size_t n = (((size_t)3 << 19) + 12) / sizeof(int);   /* 1.5 MiB + 12 bytes */
    int *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    if (!in || !out)
        return 2;
    for (size_t i = 0; i < n; i++)
        in[i] = (int)(i / 512);   /* slowly rising steps: compresses well */
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(p, "twice", &err);
    CHECK(err);
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *in, in, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof *out, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof a, &a));
    CHECK(clSetKernelArg(k, 1, sizeof b, &b));
    int bad = 0;
    for (int round = 0; round < 2; round++) {
        if (round)
            CHECK(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, n * sizeof *in, in, 0, NULL, NULL));
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, n * sizeof *out, out, 0, NULL, NULL));
        for (size_t i = 0; i < n; i++)
            bad += out[i] != in[i] * 2 + 1;
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(in);
    free(out);
    if (!quiet)
        printf("bigblob: %zu ints, %s\n", n, bad ? "WRONG" : "ok");
    return bad ? 1 : 0;
}
