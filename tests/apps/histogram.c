/*
 * histogram — 256-bin histogram of a byte stream, in two kernels: each
 * work-group counts its contiguous chunk into a __local histogram with
 * local atomics and writes it out as one row of a partial-histogram buffer;
 * a second kernel sums the rows into the final 256 bins.
 *
 * What it is for clrr: a reduction. The input is large and read once, the
 * output is 1 KiB, and the producer/consumer pair of kernels communicates
 * through an intermediate buffer (one row of 256 counts per work-group)
 * that the host never reads: the case for vertical fusion and for removing
 * a dead intermediate. The data are skewed (a few narrow peaks plus noise),
 * so local atomics contend on a few bins. Splitting it is not a matter of
 * disjoint outputs: every device produces a whole histogram and the results
 * must be merged by addition. With --iters K, every iteration counts fresh
 * data.
 *
 * --devices M splits the bytes into M equal contiguous ranges, one per
 * device (own context, queue and buffers each, both kernels on each); the
 * host adds the M histograms it reads back.
 *
 * Usage: histogram [--size N] [--iters K] [--device SPEC] [--devices M]
 *                  [--seed S] [--quiet]
 *   --size N   number of input bytes (default 16777216)
 */
#include <CL/cl.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define APP "histogram"
#define DEFAULT_SIZE ((size_t)1 << 24)
#define DEFAULT_ITERS 1u
#define MAX_DEVICES 64u
#define SIZE_HELP "number of input bytes"
#define ITERS_HELP "iterations of write inputs, run, read back"
#define BINS 256u
#define LOCAL_SIZE 256u
#define ITEMS 64u                        /* bytes per work-item */
#define CHUNK (LOCAL_SIZE * ITEMS)       /* bytes per work-group */
#define MERGE_LOCAL 64u

/* Counts are integers: the result must match the host exactly. */

/* The kernels live in tests/apps/histogram.cl; the build turns that file into
 * a C string literal (build/gen/apps/histogram_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/histogram_cl.h"
    ;

/* Options, errors, random numbers, devices: the same in every workload
 * program of this kind. */
#include "tests/apps/app_common.h"

/* ===================================================================== */
/* The workload                                                          */
/* ===================================================================== */

/* One device's share: bytes [first, first + count), counted into bins. */
struct lane {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel count_kernel, merge_kernel;
    cl_mem data, partial, hist;
    size_t first, count, groups;
    cl_uint bins[BINS];
};

static void lane_open(struct lane *l)
{
    l->groups = round_up(l->count, CHUNK) / CHUNK;
    open_device(l->dev, &l->ctx, &l->queue, &l->prog);
    l->count_kernel = make_kernel(l->prog, l->dev, "hist_local", LOCAL_SIZE);
    l->merge_kernel = make_kernel(l->prog, l->dev, "hist_merge", MERGE_LOCAL);
    l->data = make_buffer(l->ctx, CL_MEM_READ_ONLY, l->count);
    l->partial = make_buffer(l->ctx, CL_MEM_READ_WRITE,
                             l->groups * BINS * sizeof(cl_uint));
    l->hist = make_buffer(l->ctx, CL_MEM_WRITE_ONLY, BINS * sizeof(cl_uint));
}

static void lane_close(struct lane *l)
{
    CHECK("clReleaseMemObject", clReleaseMemObject(l->data));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->partial));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->hist));
    CHECK("clReleaseKernel", clReleaseKernel(l->count_kernel));
    CHECK("clReleaseKernel", clReleaseKernel(l->merge_kernel));
    CHECK("clReleaseProgram", clReleaseProgram(l->prog));
    CHECK("clReleaseCommandQueue", clReleaseCommandQueue(l->queue));
    CHECK("clReleaseContext", clReleaseContext(l->ctx));
}

/* Enqueues this lane's write, both kernels and the read-back of its 256
 * bins into l->bins (all non-blocking). */
static void lane_enqueue(struct lane *l, const unsigned char *data)
{
    size_t global = l->groups * LOCAL_SIZE, local = LOCAL_SIZE;
    size_t mglobal = BINS, mlocal = MERGE_LOCAL;
    cl_uint n = (cl_uint)l->count, groups = (cl_uint)l->groups;
    cl_kernel k = l->count_kernel, m = l->merge_kernel;

    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, l->data, CL_FALSE, 0,
          l->count, data + l->first, 0, NULL, NULL));
    CHECK("clSetKernelArg", clSetKernelArg(k, 0, sizeof(cl_mem), &l->data));
    CHECK("clSetKernelArg", clSetKernelArg(k, 1, sizeof n, &n));
    CHECK("clSetKernelArg", clSetKernelArg(k, 2, sizeof(cl_mem), &l->partial));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, k, 1,
          NULL, &global, &local, 0, NULL, NULL));
    CHECK("clSetKernelArg", clSetKernelArg(m, 0, sizeof(cl_mem), &l->partial));
    CHECK("clSetKernelArg", clSetKernelArg(m, 1, sizeof groups, &groups));
    CHECK("clSetKernelArg", clSetKernelArg(m, 2, sizeof(cl_mem), &l->hist));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, m, 1,
          NULL, &mglobal, &mlocal, 0, NULL, NULL));
    CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(l->queue, l->hist, CL_FALSE, 0,
          sizeof l->bins, l->bins, 0, NULL, NULL));
    CHECK("clFlush", clFlush(l->queue));
}

/* Skewed bytes: 90% from three narrow peaks (triangular, random centre and
 * width per iteration), 10% uniform noise. */
static void generate(uint64_t seed, unsigned iter, unsigned char *data, size_t n)
{
    uint64_t s = rng_seed(seed, iter);
    int centre[3], width[3];
    size_t i;
    int p;

    for (p = 0; p < 3; p++) {
        centre[p] = (int)(rng_next(&s) % BINS);
        width[p] = 2 + (int)(rng_next(&s) % 24);
    }
    for (i = 0; i < n; i++) {
        uint64_t r = rng_next(&s);
        unsigned pick = (unsigned)(r & 0xff);
        if (pick < 26) {
            data[i] = (unsigned char)(r >> 8);
        } else {
            int k = pick % 3;
            int off = (int)((r >> 8) & 0xff) + (int)((r >> 16) & 0xff) - 255;
            int v = centre[k] + off * width[k] / 256;
            data[i] = (unsigned char)(v & 0xff);
        }
    }
}

static void verify(const unsigned char *data, size_t n, const cl_uint *hist)
{
    size_t *want = xmalloc(BINS, sizeof *want);
    size_t i;
    unsigned b;

    memset(want, 0, BINS * sizeof *want);
    for (i = 0; i < n; i++)
        want[data[i]]++;
    for (b = 0; b < BINS; b++) {
        if (hist[b] != want[b]) {
            fprintf(stderr, APP ": FAILED: bin %u = %u, expected %zu\n",
                    b, (unsigned)hist[b], want[b]);
            exit(1);
        }
    }
    free(want);
}

int main(int argc, char **argv)
{
    struct options o;
    cl_device_id ids[MAX_DEVICES];
    struct lane lanes[MAX_DEVICES];
    char names[1024];
    unsigned char *data;
    cl_uint hist[BINS];
    double ms = 0;
    unsigned it, d, b;

    parse_options(argc, argv, &o);
    if (o.size > UINT32_MAX - CHUNK)
        die("--size %zu too large (at most %u bytes)", o.size,
            (unsigned)(UINT32_MAX - CHUNK));
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
    data = xmalloc(o.size, 1);

    for (it = 0; it < o.iters; it++) {
        double t0;
        generate(o.seed, it, data, o.size);
        t0 = now_ms();
        for (d = 0; d < o.devices; d++)
            lane_enqueue(&lanes[d], data);
        for (d = 0; d < o.devices; d++)
            CHECK("clFinish", clFinish(lanes[d].queue));
        ms += now_ms() - t0;
        for (b = 0; b < BINS; b++)
            for (hist[b] = 0, d = 0; d < o.devices; d++)
                hist[b] += lanes[d].bins[b];
        verify(data, o.size, hist);
    }

    for (d = 0; d < o.devices; d++)
        lane_close(&lanes[d]);
    free(data);
    if (!o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n",
               o.size, o.iters, names, ms);
    return 0;
}
