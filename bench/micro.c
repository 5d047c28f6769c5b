/* micro.c — recorder microbenchmarks (run plain and under `clrr record`
 * by bench/run.sh, which computes the overhead from the two).
 *
 *   micro calls N           N x (clSetKernelArg + clEnqueueNDRangeKernel of
 *                           one work-item), clFinish every 256 launches
 *   micro calls N timed     the same, with what device timing asks of the
 *                           driver done by the program itself: a profiling
 *                           queue, an event per launch, its START and END
 *                           read after each clFinish (the driver's own
 *                           cost of timing every command, without clrr)
 *   micro calls N profiled  the same on a profiling queue, with no event
 *                           (what a profiling queue alone costs)
 *   micro calls N ab        the same loop in blocks of 256 launches (one
 *                           clFinish each), alternating: a block through the
 *                           loader (and a layer, when one is loaded), then
 *                           a block through the driver's own entry points
 *                           (each object's ICD dispatch table: no loader,
 *                           no layer), on the same objects and thread.
 *                           Adds `ab_ns=D` to the line: the median over
 *                           adjacent pairs of blocks of the difference per
 *                           enqueue call of the blocks' enqueue time (up to,
 *                           not including, their clFinish). Plain, D is the loader's own cost; under
 *                           `clrr record`, the loader's and the layer's.
 *                           Blocks a millisecond apart see the same machine
 *                           speed, so D is far steadier than the difference
 *                           of two runs (bench.py's interleaved column).
 *   micro data N varying    N x (16 MiB write + kernel + 16 MiB read), the
 *                           input changes every iteration
 *   micro data N repeated   the same, with the same input every iteration
 *   micro data N random     as varying, with random 32-bit words (no
 *                           compressor can shrink them: what a trace of
 *                           incompressible data costs)
 *
 * The device: with CLRR_APP_DEVICE=gpu the first GPU of any platform
 * (exit 2 when there is none), else the first platform's first device.
 *
 * Prints one line: `mode=... iters=N calls=C bytes=B ns=T cpu_ns=U` where
 * calls is the number of OpenCL calls in the timed loop, bytes the bytes
 * moved between host and device, T the loop's wall time and U the CPU time
 * of the thread that ran it (the driver's and a layer's work on the
 * application's thread, without the time it slept waiting for the device,
 * or its VM was descheduled). The calls modes add `enq_ns=E enq_calls=K`:
 * the wall time of the blocks' clSetKernelArg and clEnqueueNDRangeKernel
 * calls (each block timed from its first call to just before its
 * clFinish), K of them: the cost on the application's thread of enqueueing,
 * without the wait for the device, which on a GPU that runs the tiny
 * launches slower than the host enqueues them hides a layer's work in the
 * wall time. The input is integer data with the structure of
 * real measurements (a slowly varying signal plus small noise), neither
 * random (incompressible) nor constant (trivially compressible). */
#include <CL/cl.h>
#include <CL/cl_icd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "micro: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char *src =
    "__kernel void tiny(int v, __global int *o) { if (get_global_id(0) == 0) o[0] = v; }\n"
    "__kernel void scale(__global const int *a, __global int *b) {\n"
    "    size_t i = get_global_id(0); b[i] = a[i] * 3 + 1; }\n";

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ICD objects begin with their driver's dispatch table. */
static const struct _cl_icd_dispatch *icd(const void *obj)
{
    return *(const struct _cl_icd_dispatch *const *)obj;
}

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "calls") && strcmp(argv[1], "data"))) {
        fprintf(stderr, "usage: micro calls N [timed|profiled] | micro data N varying|repeated|random\n");
        return 2;
    }
    long iters = atol(argv[2]);
    int repeated = argc > 3 && !strcmp(argv[3], "repeated");
    int random = argc > 3 && !strcmp(argv[3], "random");
    int timed = argc > 3 && !strcmp(argv[3], "timed");
    int profiled = argc > 3 && !strcmp(argv[3], "profiled");
    int ab = argc > 3 && !strcmp(argv[3], "ab");
    double ab_ns = 0, enq_ns = 0;
    cl_platform_id plats[16];
    cl_device_id dev = NULL;
    cl_uint nplat = 0;
    cl_int err;
    CHECK(clGetPlatformIDs(16, plats, &nplat));
    /* CLRR_APP_DEVICE=gpu: the first GPU of any platform (the H200
     * machine's loader lists PoCL's CPU first), and no GPU is an error;
     * else the first platform's first device */
    const char *want = getenv("CLRR_APP_DEVICE");
    int gpu = want && !strcmp(want, "gpu");
    for (cl_uint i = 0; i < (nplat < 16 ? nplat : 16) && !dev; i++)
        if (clGetDeviceIDs(plats[i], gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
            dev = NULL;
    if (!dev) {
        fprintf(stderr, "micro: no %s device\n", gpu ? "GPU" : "OpenCL");
        return 2;
    }
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, timed || profiled ? prof : NULL, &err);
    CHECK(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    double t0, t1, c0, c1;
    long calls = 0;
    unsigned long long bytes = 0;
    if (!strcmp(argv[1], "calls")) {
        cl_kernel k = clCreateKernel(p, "tiny", &err);
        CHECK(err);
        cl_mem o = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, 1, sizeof o, &o));
        size_t one = 1;
        cl_event evs[256];
        cl_ulong busy = 0;
        int nev = 0;
        long nblocks = (iters + 255) / 256;
        double *blk = ab ? calloc((size_t)nblocks + 1, sizeof *blk) : NULL, tb = 0;
        const struct _cl_icd_dispatch *dk = icd(k), *dq = icd(q);
        if (ab && !blk)
            return 2;
        t0 = now_ns();
        c0 = cpu_ns();
        for (long i = 0; i < iters; i++) {
            int v = (int)i, direct = ab && ((i >> 8) & 1);   /* ab: odd blocks call the driver */
            if ((i & 255) == 0)
                tb = now_ns();
            CHECK(direct ? dk->clSetKernelArg(k, 0, sizeof v, &v) : clSetKernelArg(k, 0, sizeof v, &v));
            cl_event *ev = timed ? &evs[nev++] : NULL;
            CHECK(direct ? dq->clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, ev)
                         : clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, ev));
            calls += 2;
            if ((i & 255) == 255 || i + 1 == iters) {
                double enq = now_ns() - tb;
                enq_ns += enq;
                /* ab: the block's enqueue calls alone, without its clFinish
                 * (where the device is slower than the host, the wait is
                 * most of a block's time and all of its noise) */
                if (ab)
                    blk[i >> 8] = enq / (double)(2 * ((i & 255) + 1));
                CHECK(direct ? dq->clFinish(q) : clFinish(q));
                calls++;
                for (int e = 0; e < nev; e++) {   /* timed: what clrr's event thread does */
                    cl_ulong s0, s1;
                    CHECK(clGetEventProfilingInfo(evs[e], CL_PROFILING_COMMAND_START, sizeof s0, &s0, NULL));
                    CHECK(clGetEventProfilingInfo(evs[e], CL_PROFILING_COMMAND_END, sizeof s1, &s1, NULL));
                    busy += s1 - s0;
                    CHECK(clReleaseEvent(evs[e]));
                }
                nev = 0;
            }
        }
        t1 = now_ns();
        c1 = cpu_ns();
        if (ab) {   /* pairs of whole blocks: loader/layer minus direct */
            long np = 0;
            for (long b = 0; b + 1 < nblocks && (b + 2) * 256 <= iters; b += 2)
                blk[np++] = blk[b] - blk[b + 1];
            qsort(blk, (size_t)np, sizeof *blk, cmp_d);
            ab_ns = np ? (np % 2 ? blk[np / 2] : 0.5 * (blk[np / 2 - 1] + blk[np / 2])) : 0;
            free(blk);
        }
        if (timed && busy == 0)
            fprintf(stderr, "micro: no device time reported\n");
        clReleaseMemObject(o);
        clReleaseKernel(k);
    } else {
        size_t n = (16u << 20) / sizeof(int);
        int *in = malloc(n * sizeof(int)), *out = malloc(n * sizeof(int));
        if (!in || !out)
            return 2;
        cl_kernel k = clCreateKernel(p, "scale", &err);
        CHECK(err);
        cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY, n * sizeof(int), NULL, &err);
        CHECK(err);
        cl_mem b = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof(int), NULL, &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, 0, sizeof a, &a));
        CHECK(clSetKernelArg(k, 1, sizeof b, &b));
        uint32_t rng = 12345;
        t0 = now_ns();
        c0 = cpu_ns();
        for (long it = 0; it < iters; it++) {
            if (!repeated || it == 0)
                for (size_t i = 0; i < n; i++) {
                    rng = rng * 1664525u + 1013904223u;
                    if (random) {   /* xorshift of the LCG: every bit random; * 3 + 1 wraps */
                        uint32_t x = rng ^ (rng >> 15);
                        x *= 0x2c1b3c6du;
                        in[i] = (int)((x ^ (x >> 12)) & 0x3fffffffu);
                    } else {
                        in[i] = (int)((i / 64 + (size_t)it * 7) % 4096) + (int)(rng >> 28);
                    }
                }
            CHECK(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, n * sizeof(int), in, 0, NULL, NULL));
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL));
            CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, n * sizeof(int), out, 0, NULL, NULL));
            if (out[n - 1] != in[n - 1] * 3 + 1) {
                fprintf(stderr, "micro: wrong result\n");
                return 1;
            }
            calls += 3;
            bytes += 2ull * n * sizeof(int);
        }
        t1 = now_ns();
        c1 = cpu_ns();
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        clReleaseKernel(k);
        free(in);
        free(out);
    }
    printf("mode=%s%s%s iters=%ld calls=%ld bytes=%llu ns=%.0f cpu_ns=%.0f", argv[1],
           !strcmp(argv[1], "data") ? (repeated ? "-repeated" : random ? "-random" : "-varying") : "",
           timed ? "-timed" : profiled ? "-profiled" : ab ? "-ab" : "", iters, calls,
           bytes, t1 - t0, c1 - c0);
    if (!strcmp(argv[1], "calls"))
        printf(" enq_ns=%.0f enq_calls=%ld", enq_ns, 2 * iters);
    if (ab)
        printf(" ab_ns=%.1f", ab_ns);
    printf("\n");
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
