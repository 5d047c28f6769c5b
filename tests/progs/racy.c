/* racy.c — an OpenCL program nondeterministic by itself, for `clrr replay
 * --repeat` (tests/e2e/replay_repeat.sh): its second kernel hands out
 * tickets with atomic_inc in whatever order the device runs its work-items
 * (on PoCL's CPU device the work-groups go to several threads), so the
 * read-back of the tickets differs from run to run although every run is
 * right: they are a permutation of 0..N-1, which the program checks.
 * Calls: a buffer of squares (square: sq[i] = i * i), read back (the same
 * every run); a counter set to 0; ticket (each work-item spins a while,
 * so that the threads overlap, then t[i] = atomic_inc(counter)), read
 * back.
 * Usage: racy [--size N] (N work-items, a multiple of 64; default 262144)
 * Prints "racy: ok, checksum C" (C: a hash of the ticket order, which
 * varies) and exits 0; 1 on a wrong result or an OpenCL error; 2 usage. */
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "racy: %s failed: %d\n", #x, e_); exit(1); } } while (0)

static const char *source =
    "__kernel void square(__global uint *sq)\n"
    "{\n"
    "    uint i = (uint)get_global_id(0);\n"
    "    sq[i] = i * i;\n"
    "}\n"
    "__kernel void ticket(__global volatile uint *counter, __global uint *t, uint spin, __global uint *junk)\n"
    "{\n"
    "    uint x = (uint)get_global_id(0);\n"
    "    for (uint k = 0; k < spin; k++)\n"   /* time for the other threads to run */
    "        x = x * 1664525u + 1013904223u;\n"
    "    junk[get_global_id(0)] = x;\n"
    "    t[get_global_id(0)] = atomic_inc(counter);\n"
    "}\n";

int main(int argc, char **argv)
{
    size_t n = 262144;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            n = strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: racy [--size N]\n");
            return 2;
        }
    }
    if (!n || n % 64 || n > (1u << 26)) {
        fprintf(stderr, "racy: --size takes a multiple of 64 up to 2^26\n");
        return 2;
    }
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel ksq = clCreateKernel(prog, "square", &err);
    CHECK(err);
    cl_kernel kt = clCreateKernel(prog, "ticket", &err);
    CHECK(err);
    cl_uint *h = malloc(n * sizeof *h);
    unsigned char *seen = calloc(n, 1);
    if (!h || !seen) {
        fprintf(stderr, "racy: out of memory\n");
        return 1;
    }
    cl_mem sq = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof *h, NULL, &err);
    CHECK(err);
    cl_mem t = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof *h, NULL, &err);
    CHECK(err);
    cl_mem junk = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof *h, NULL, &err);   /* the spin's result */
    CHECK(err);
    cl_uint zero = 0;
    cl_mem counter = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
    CHECK(err);
    size_t local = 64;
    CHECK(clSetKernelArg(ksq, 0, sizeof sq, &sq));
    CHECK(clEnqueueNDRangeKernel(q, ksq, 1, NULL, &n, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, sq, CL_TRUE, 0, n * sizeof *h, h, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++)
        if (h[i] != (cl_uint)(i * i)) {
            fprintf(stderr, "racy: sq[%zu] = %u\n", i, h[i]);
            return 1;
        }
    CHECK(clSetKernelArg(kt, 0, sizeof counter, &counter));
    CHECK(clSetKernelArg(kt, 1, sizeof t, &t));
    cl_uint spin = 200;
    CHECK(clSetKernelArg(kt, 2, sizeof spin, &spin));
    CHECK(clSetKernelArg(kt, 3, sizeof junk, &junk));
    CHECK(clEnqueueNDRangeKernel(q, kt, 1, NULL, &n, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, t, CL_TRUE, 0, n * sizeof *h, h, 0, NULL, NULL));
    uint64_t sum = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        if (h[i] >= n || seen[h[i]]) {
            fprintf(stderr, "racy: ticket %u at %zu is not part of a permutation\n", h[i], i);
            return 1;
        }
        seen[h[i]] = 1;
        sum = (sum ^ h[i]) * 1099511628211ull;
    }
    printf("racy: ok, checksum %016llx\n", (unsigned long long)sum);
    clReleaseMemObject(sq);
    clReleaseMemObject(t);
    clReleaseMemObject(counter);
    clReleaseMemObject(junk);
    clReleaseKernel(ksq);
    clReleaseKernel(kt);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(h);
    free(seen);
    return 0;
}
