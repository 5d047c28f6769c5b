/*
 * vecadd — c = a + b over float vectors.
 *
 * What it is for clrr: the simplest memory-bound workload. One kernel, one
 * contiguous input range and one contiguous output range per work-group, and
 * 12 bytes moved per flop, so transfer cost dominates: the reference case
 * for splitting (every work-group range touches exactly its own slice of
 * a, b and c), for transfer/compute overlap, and for the recorder's
 * per-call overhead. With --iters K, every iteration writes fresh inputs,
 * runs the kernel and reads c back.
 *
 * --devices M splits the elements into M equal contiguous ranges, one per
 * device (own context, queue and buffers each), by hand: the baseline that
 * automatic splitting is compared with.
 *
 * Usage: vecadd [--size N] [--iters K] [--device SPEC] [--devices M]
 *               [--seed S] [--quiet]
 *   --size N   number of elements (default 4194304)
 */
#include <CL/cl.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define APP "vecadd"
#define DEFAULT_SIZE ((size_t)1 << 22)
#define DEFAULT_ITERS 1u
#define MAX_DEVICES 64u
#define SIZE_HELP "number of elements"
#define ITERS_HELP "iterations of write inputs, run, read back"
#define LOCAL_SIZE 256u

/* float addition is correctly rounded everywhere, so the results should be
 * exact; the tolerance only absorbs a device that flushes denormals. */
#define TOL_REL 1e-6
#define TOL_ABS 1e-6

/* The kernels live in tests/apps/vecadd.cl; the build turns that file into
 * a C string literal (build/gen/apps/vecadd_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/vecadd_cl.h"
    ;

/* Options, errors, random numbers, devices: the same in every workload
 * program of this kind. */
#include "tests/apps/app_common.h"

/* ===================================================================== */
/* The workload                                                          */
/* ===================================================================== */

/* One device's share: elements [first, first + count). */
struct lane {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel kernel;
    cl_mem a, b, c;
    size_t first, count;
};

static void lane_open(struct lane *l)
{
    size_t bytes = l->count * sizeof(float);
    open_device(l->dev, &l->ctx, &l->queue, &l->prog);
    l->kernel = make_kernel(l->prog, l->dev, "vecadd", LOCAL_SIZE);
    l->a = make_buffer(l->ctx, CL_MEM_READ_ONLY, bytes);
    l->b = make_buffer(l->ctx, CL_MEM_READ_ONLY, bytes);
    l->c = make_buffer(l->ctx, CL_MEM_WRITE_ONLY, bytes);
}

static void lane_close(struct lane *l)
{
    CHECK("clReleaseMemObject", clReleaseMemObject(l->a));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->b));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->c));
    CHECK("clReleaseKernel", clReleaseKernel(l->kernel));
    CHECK("clReleaseProgram", clReleaseProgram(l->prog));
    CHECK("clReleaseCommandQueue", clReleaseCommandQueue(l->queue));
    CHECK("clReleaseContext", clReleaseContext(l->ctx));
}

/* Enqueues this lane's writes, kernel and read-back (all non-blocking). */
static void lane_enqueue(struct lane *l, const float *a, const float *b, float *c)
{
    size_t bytes = l->count * sizeof(float);
    size_t global = round_up(l->count, LOCAL_SIZE), local = LOCAL_SIZE;
    cl_uint n = (cl_uint)l->count;

    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, l->a, CL_FALSE, 0,
          bytes, a + l->first, 0, NULL, NULL));
    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, l->b, CL_FALSE, 0,
          bytes, b + l->first, 0, NULL, NULL));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 0, sizeof(cl_mem), &l->a));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 1, sizeof(cl_mem), &l->b));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 2, sizeof(cl_mem), &l->c));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 3, sizeof n, &n));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, l->kernel, 1,
          NULL, &global, &local, 0, NULL, NULL));
    CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(l->queue, l->c, CL_FALSE, 0,
          bytes, c + l->first, 0, NULL, NULL));
    CHECK("clFlush", clFlush(l->queue));
}

static void generate(uint64_t seed, unsigned iter, float *a, float *b, size_t n)
{
    uint64_t s = rng_seed(seed, iter);
    size_t i;
    for (i = 0; i < n; i++) {
        a[i] = rng_float(&s, -100.0f, 100.0f);
        b[i] = rng_float(&s, -100.0f, 100.0f);
    }
}

static void verify(const float *a, const float *b, const float *c, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        double want = (double)(a[i] + b[i]);
        if (!(fabs(c[i] - want) <= TOL_ABS + TOL_REL * fabs(want))) {
            fprintf(stderr, APP ": FAILED: c[%zu] = %.9g, expected %.9g\n",
                    i, c[i], want);
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    struct options o;
    cl_device_id ids[MAX_DEVICES];
    struct lane lanes[MAX_DEVICES];
    char names[1024];
    float *a, *b, *c;
    double ms = 0;
    unsigned it, d;

    parse_options(argc, argv, &o);
    if (o.size > UINT32_MAX - LOCAL_SIZE)
        die("--size %zu too large (at most %u elements)", o.size,
            (unsigned)(UINT32_MAX - LOCAL_SIZE));
    if (o.size < o.devices)
        die("--size %zu too small for %u devices", o.size, o.devices);
    pick_devices(o.device, o.devices, ids, names, sizeof names);

    memset(lanes, 0, sizeof lanes);
    for (d = 0; d < o.devices; d++) {
        lanes[d].dev = ids[d];
        lanes[d].first = o.size * d / o.devices;
        lanes[d].count = o.size * (d + 1) / o.devices - lanes[d].first;
        lane_open(&lanes[d]);
    }
    a = xmalloc(o.size, sizeof *a);
    b = xmalloc(o.size, sizeof *b);
    c = xmalloc(o.size, sizeof *c);

    for (it = 0; it < o.iters; it++) {
        double t0;
        generate(o.seed, it, a, b, o.size);
        t0 = now_ms();
        for (d = 0; d < o.devices; d++)
            lane_enqueue(&lanes[d], a, b, c);
        for (d = 0; d < o.devices; d++)
            CHECK("clFinish", clFinish(lanes[d].queue));
        ms += now_ms() - t0;
        verify(a, b, c, o.size);
    }

    for (d = 0; d < o.devices; d++)
        lane_close(&lanes[d]);
    free(a);
    free(b);
    free(c);
    if (!o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n",
               o.size, o.iters, names, ms);
    return 0;
}
