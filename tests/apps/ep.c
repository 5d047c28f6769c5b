/*
 * ep — clrr workload: embarrassingly parallel and compute-bound, in the
 * spirit of NPB EP.
 *
 * Each work-item draws `--pairs` pairs of uniform deviates from its own
 * 64-bit LCG (seeded by hashing the run seed with its global id), turns each
 * pair into two Gaussian deviates with Box–Muller (log, sqrt, cos, sin), and
 * writes the sums of the deviates and a 10-bin histogram of max(|x|,|y|) into
 * its own slots of two output buffers; the host reduces them.
 *
 * What clrr can exploit: no input buffer at all (only scalar arguments), a
 * tiny output, arithmetic-bound work, independent work-items that each write
 * one contiguous slot. A split pass can give contiguous work-group ranges to
 * several devices with no input transfer and a contiguous output merge.
 * `--devices M` is the hand-partitioned reference of that split: one queue and
 * one pair of output buffers per device, each launch covering a contiguous
 * range of work-groups through a global work offset. Nothing to fuse.
 *
 * Verification: the host replays the generator bit-exactly in C, but its
 * logf/sqrtf/cosf/sinf may differ from the device's by a few ulp (OpenCL 1.2
 * allows up to 4 ulp) and the device may contract a*b+c into fma. Hence:
 *   sums:   per work-item, |got - exp| <= 1e-5 * sum|deviates| + 1e-6;
 *   counts: per bin over all work-items, |got - exp| <= 1 + 1e-6 * pairs drawn
 *           (a deviate within a few ulp of an integer may land in the
 *           neighbouring bin).
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

#define APP "ep"
#define MAX_DEVICES 64
#define APP_OPTS_DEFAULTS {.size = 32768, .iters = 1, .devices = 1, .seed = 1, .pairs = 256, .every = 1}
#define APP_SIZE_MAX (SIZE_MAX / 64)
#define APP_EXTRA_OPTIONS \
    {"pairs", required_argument, NULL, O_PAIRS}, \
    {"check-every", required_argument, NULL, O_EVERY},
#define LOCAL_SIZE 64
#define NQ 10 /* histogram bins, as in NPB EP */

/* The kernels live in tests/apps/ep.cl; the build turns that file into
 * a C string literal (build/gen/apps/ep_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/ep_cl.h"
    ;

/* ------------------------------------------------------------ options */

struct opts {
    size_t size;        /* work-items */
    unsigned iters;     /* host loop repetitions */
    const char *device; /* --device or CLRR_APP_DEVICE; NULL: default */
    unsigned devices;   /* devices to split over */
    uint64_t seed;
    int quiet;
    unsigned pairs; /* --pairs: random pairs per work-item */
    size_t every;   /* --check-every: the host reference covers every N-th work-item */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " APP " [--size N] [--iters K] [--device SPEC] [--devices M]\n"
            "          [--seed S] [--quiet] [--pairs P] [--check-every N] [--help]\n"
            "  --size N       work-items (default 32768)\n"
            "  --iters K      repeat the host loop (run, read back) K times (default 1)\n"
            "  --device SPEC  device index over all platforms, cpu|gpu|accelerator, or a\n"
            "                 substring of the device or platform name (default: env\n"
            "                 CLRR_APP_DEVICE, else the first GPU, else the first device)\n"
            "  --devices M    split the work-items over M devices: the one SPEC designates\n"
            "                 and the next ones that match it (of the same type for an\n"
            "                 index or the default), in one context (default 1)\n"
            "  --seed S       seed of the generated inputs (default 1)\n"
            "  --quiet        print nothing on success\n"
            "  --pairs P      random pairs per work-item (default 256)\n"
            "  --check-every N  check work-items 0, N, 2N, ... against the host reference\n"
            "                 (default 1: every one; the reference costs what the device\n"
            "                 computes, on one core)\n");
}

/* getopt_long codes of the options of its own (O_EXTRA on) */
enum { O_PAIRS = 512, O_EVERY };

#include "tests/apps/app_common.h"

static void app_option(int c, const char *arg, struct opts *o)
{
    switch (c) {
    case O_PAIRS:
        o->pairs = parse_range("--pairs", arg, 1, 1u << 30);
        break;
    case O_EVERY:
        o->every = parse_range("--check-every", arg, 1, SIZE_MAX);
        break;
    }
}

/* ------------------------------------------------------------ workload */

/* One device's share: work-items [first, first + count). */
struct part {
    cl_device_id dev;
    cl_command_queue queue;
    cl_kernel kernel;
    cl_mem sums;   /* float2 per work-item of this part */
    cl_mem counts; /* NQ uints per work-item of this part */
    size_t first, count;
};

struct app {
    struct opts o;
    cl_context ctx;
    cl_program prog;
    unsigned nparts;
    struct part part[MAX_DEVICES];
    char *label;
    float *sums;      /* device results, 2 per work-item */
    cl_uint *counts;  /* device results, NQ per work-item */
    float *ref_sums;  /* host reference, 2 per work-item */
    float *ref_abs;   /* host reference: sum of |deviates| per work-item */
    cl_uint *ref_counts;
};

/* Contiguous work-group ranges, as even as possible, one per device. */
static void partition(struct app *a, const cl_device_id *devs)
{
    size_t groups = (a->o.size + LOCAL_SIZE - 1) / LOCAL_SIZE;
    for (unsigned d = 0; d < a->nparts; d++) {
        size_t g0 = groups * d / a->nparts, g1 = groups * (d + 1) / a->nparts;
        struct part *p = &a->part[d];
        p->dev = devs[d];
        p->first = g0 * LOCAL_SIZE;
        size_t end = g1 * LOCAL_SIZE < a->o.size ? g1 * LOCAL_SIZE : a->o.size;
        p->count = end > p->first ? end - p->first : 0;
    }
}

static void setup(struct app *a)
{
    cl_device_id devs[MAX_DEVICES];
    cl_int err;
    a->nparts = a->o.devices;
    open_context(a->o.device, a->nparts, devs, &a->ctx, NULL, &a->prog, &a->label);
    partition(a, devs);
    for (unsigned d = 0; d < a->nparts; d++) {
        struct part *p = &a->part[d];
        p->queue = clCreateCommandQueueWithProperties(a->ctx, p->dev, NULL, &err);
        check(err, "clCreateCommandQueueWithProperties");
        p->kernel = clCreateKernel(a->prog, "ep", &err);
        check(err, "clCreateKernel");
        if (!p->count)
            continue;
        p->sums = clCreateBuffer(a->ctx, CL_MEM_WRITE_ONLY, mul_size(p->count, 2 * sizeof(float)),
                                 NULL, &err);
        check(err, "clCreateBuffer");
        p->counts = clCreateBuffer(a->ctx, CL_MEM_WRITE_ONLY,
                                   mul_size(p->count, NQ * sizeof(cl_uint)), NULL, &err);
        check(err, "clCreateBuffer");
    }
    size_t n = a->o.size;
    a->sums = xmalloc(mul_size(n, 2 * sizeof(float)), 1);
    a->counts = xmalloc(mul_size(n, NQ * sizeof(cl_uint)), 1);
    a->ref_sums = xmalloc(mul_size(n, 2 * sizeof(float)), 1);
    a->ref_abs = xmalloc(mul_size(n, sizeof(float)), 1);
    a->ref_counts = xmalloc(mul_size(n, NQ * sizeof(cl_uint)), 1);
}

/* Launches every part, reads the results back; returns the wall time in ms. */
static double run_iteration(struct app *a, uint64_t seed)
{
    cl_ulong s = seed, n = a->o.size;
    cl_uint pairs = a->o.pairs;
    double t0 = now_ms();
    for (unsigned d = 0; d < a->nparts; d++) {
        struct part *p = &a->part[d];
        if (!p->count)
            continue;
        check(clSetKernelArg(p->kernel, 0, sizeof s, &s), "clSetKernelArg");
        check(clSetKernelArg(p->kernel, 1, sizeof pairs, &pairs), "clSetKernelArg");
        check(clSetKernelArg(p->kernel, 2, sizeof n, &n), "clSetKernelArg");
        check(clSetKernelArg(p->kernel, 3, sizeof p->sums, &p->sums), "clSetKernelArg");
        check(clSetKernelArg(p->kernel, 4, sizeof p->counts, &p->counts), "clSetKernelArg");
        size_t offset = p->first, local = LOCAL_SIZE;
        size_t global = (p->count + LOCAL_SIZE - 1) / LOCAL_SIZE * LOCAL_SIZE;
        check(clEnqueueNDRangeKernel(p->queue, p->kernel, 1, &offset, &global, &local, 0, NULL,
                                     NULL),
              "clEnqueueNDRangeKernel");
        check(clEnqueueReadBuffer(p->queue, p->sums, CL_FALSE, 0, p->count * 2 * sizeof(float),
                                  a->sums + 2 * p->first, 0, NULL, NULL),
              "clEnqueueReadBuffer");
        check(clEnqueueReadBuffer(p->queue, p->counts, CL_FALSE, 0,
                                  p->count * NQ * sizeof(cl_uint), a->counts + NQ * p->first, 0,
                                  NULL, NULL),
              "clEnqueueReadBuffer");
    }
    for (unsigned d = 0; d < a->nparts; d++)
        check(clFinish(a->part[d].queue), "clFinish");
    return now_ms() - t0;
}

/* Host mirror of the kernel's generator. */
static float next_uniform(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((uint32_t)(*s >> 40) | 1u) * (1.0f / 16777216.0f);
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void reference(struct app *a, uint64_t seed)
{
    for (size_t i = 0; i < a->o.size; i += a->o.every) {
        uint64_t s = mix64(seed + (uint64_t)i * 0x9E3779B97F4A7C15ull);
        cl_uint *q = a->ref_counts + NQ * i;
        memset(q, 0, NQ * sizeof *q);
        float sx = 0.0f, sy = 0.0f, sabs = 0.0f;
        for (unsigned p = 0; p < a->o.pairs; p++) {
            float u1 = next_uniform(&s);
            float u2 = next_uniform(&s);
            float r = sqrtf(-2.0f * logf(u1));
            float t = 6.28318530718f * u2;
            float x = r * cosf(t), y = r * sinf(t);
            sx += x;
            sy += y;
            sabs += fabsf(x) + fabsf(y);
            unsigned l = (unsigned)fmaxf(fabsf(x), fabsf(y));
            if (l < NQ)
                q[l]++;
        }
        a->ref_sums[2 * i] = sx;
        a->ref_sums[2 * i + 1] = sy;
        a->ref_abs[i] = sabs;
    }
}

/* Returns 0 when the device results match the reference (rules at the top). */
static int verify(const struct app *a, unsigned iter)
{
    size_t n = a->o.size, checked = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        if ((i / 2) % a->o.every)
            continue;
        double got = a->sums[i], exp = a->ref_sums[i];
        if (!(fabs(got - exp) <= 1e-5 * a->ref_abs[i / 2] + 1e-6)) {
            fprintf(stderr,
                    APP ": FAILED: iteration %u: sum %c of work-item %zu: got %.9g, expected "
                        "%.9g\n",
                    iter, i % 2 ? 'y' : 'x', i / 2, got, exp);
            return 1;
        }
    }
    for (size_t i = 0; i < n; i += a->o.every)
        checked++;
    double allowed = 1.0 + 1e-6 * (double)checked * a->o.pairs;
    for (unsigned l = 0; l < NQ; l++) {
        uint64_t got = 0, exp = 0;
        for (size_t i = 0; i < n; i += a->o.every) {
            got += a->counts[NQ * i + l];
            exp += a->ref_counts[NQ * i + l];
        }
        if (fabs((double)got - (double)exp) > allowed) {
            fprintf(stderr,
                    APP ": FAILED: iteration %u: count of bin %u: got %llu, expected %llu "
                        "(allowed difference %.0f)\n",
                    iter, l, (unsigned long long)got, (unsigned long long)exp, allowed);
            return 1;
        }
    }
    return 0;
}

static void teardown(struct app *a)
{
    for (unsigned d = 0; d < a->nparts; d++) {
        struct part *p = &a->part[d];
        if (p->sums)
            check(clReleaseMemObject(p->sums), "clReleaseMemObject");
        if (p->counts)
            check(clReleaseMemObject(p->counts), "clReleaseMemObject");
        check(clReleaseKernel(p->kernel), "clReleaseKernel");
        check(clReleaseCommandQueue(p->queue), "clReleaseCommandQueue");
    }
    check(clReleaseProgram(a->prog), "clReleaseProgram");
    check(clReleaseContext(a->ctx), "clReleaseContext");
    free(a->sums);
    free(a->counts);
    free(a->ref_sums);
    free(a->ref_abs);
    free(a->ref_counts);
    free(a->label);
}

int main(int argc, char **argv)
{
    struct app a = {0};
    parse_opts(argc, argv, &a.o);
    setup(&a);
    double ms = 0.0;
    int failed = 0;
    for (unsigned it = 0; it < a.o.iters && !failed; it++) {
        uint64_t seed = iter_seed(a.o.seed, it);
        ms += run_iteration(&a, seed);
        reference(&a, seed);
        failed = verify(&a, it);
    }
    if (!failed && !a.o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n", a.o.size, a.o.iters,
               a.label, ms);
    teardown(&a);
    return failed;
}
