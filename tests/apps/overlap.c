/*
 * overlap — clrr workload: the naive copy/compute pattern.
 *
 * Every iteration writes two input buffers (non-blocking clEnqueueWriteBuffer),
 * runs one kernel c = f(a, b) and reads c back (non-blocking, or blocking with
 * --blocking-read), all in ONE in-order queue, reusing the same three device
 * buffers; one clFinish at the end. The inputs of every iteration are
 * generated before the timed loop (host memory: 3 * iters * size floats).
 * f is a per-element recurrence of --work rounds of multiply-adds (a plane
 * rotation plus a decaying accumulator); --work sets the compute/transfer
 * balance: the default 32 is compute-bound on PoCL but transfer-bound on a
 * discrete GPU (on an H100 with pageable host memory, the copies take about
 * 1.2 ms per iteration, and the kernel as long at about 16000 rounds).
 *
 * What clrr can exploit: on one in-order queue nothing overlaps; the only
 * real dependencies are write(i) -> kernel(i) -> read(i), plus false
 * write-after-read dependencies from reusing the buffers. Renaming the
 * buffers (double buffering) and spreading iterations over two or three
 * queues lets the writes of iteration i+1 and the read of i-1 run during the
 * kernel of i. Contiguous, element-wise, memory/transfer-bound.
 *
 * Verification: every iteration's output against a host loop in C (for a
 * large --work, only a regular sample of the elements: see verify()). The
 * device may contract the multiply-adds into fmas, and the rounding drift of
 * the rotation grows with the rounds R, so
 * |got - exp| <= (1e-5 + 1e-7 * R) * (|exp| + 1).
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

#define APP "overlap"
#define MAX_DEVICES 64
#define APP_OPTS_DEFAULTS {.size = 262144, .iters = 16, .devices = 1, .seed = 1, .work = 32}
#define APP_SIZE_MAX (SIZE_MAX / 64)
#define APP_ONE_DEVICE
#define APP_EXTRA_OPTIONS \
    {"work", required_argument, NULL, O_WORK}, \
    {"blocking-read", no_argument, NULL, O_BLOCKING_READ},
#define LOCAL_SIZE 64

/* The kernels live in tests/apps/overlap.cl; the build turns that file into
 * a C string literal (build/gen/apps/overlap_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/overlap_cl.h"
    ;

/* ------------------------------------------------------------ options */

struct opts {
    size_t size;        /* elements per buffer */
    unsigned iters;     /* iterations of write, kernel, read */
    const char *device; /* --device or CLRR_APP_DEVICE; NULL: default */
    unsigned devices;   /* --devices: 1 */
    uint64_t seed;
    int quiet;
    unsigned work;      /* --work: rounds of the recurrence per element */
    int blocking_read;  /* --blocking-read */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " APP " [--size N] [--iters K] [--device SPEC] [--devices 1]\n"
            "               [--seed S] [--quiet] [--work R] [--blocking-read] [--help]\n"
            "  --size N         floats per buffer (default 262144, 1 MiB)\n"
            "  --iters K        iterations of write a and b, kernel, read c (default 16)\n"
            "  --device SPEC    device index over all platforms, cpu|gpu|accelerator, or a\n"
            "                   substring of the device or platform name (default: env\n"
            "                   CLRR_APP_DEVICE, else the first GPU, else the first device)\n"
            "  --devices M      only 1 is supported (one device)\n"
            "  --seed S         seed of the generated inputs (default 1)\n"
            "  --quiet          print nothing on success\n"
            "  --work R         rounds of multiply-adds per element (default 32)\n"
            "  --blocking-read  read c back with a blocking read in every iteration\n");
}

/* getopt_long codes of the options of its own (O_EXTRA on) */
enum { O_WORK = 512, O_BLOCKING_READ };

#include "tests/apps/app_common.h"

static void app_option(int c, const char *arg, struct opts *o)
{
    switch (c) {
    case O_WORK:
        o->work = parse_range("--work", arg, 0, 1u << 20);
        break;
    case O_BLOCKING_READ:
        o->blocking_read = 1;
        break;
    }
}

/* ------------------------------------------------------------ workload */

struct app {
    struct opts o;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel kernel;
    cl_mem a, b, c;
    char *label;
    float *h_a, *h_b, *h_c; /* iters * size each: inputs and device results */
};

static void setup(struct app *a)
{
    cl_device_id dev;
    cl_int err;
    open_context(a->o.device, 1, &dev, &a->ctx, &a->queue, &a->prog, &a->label);
    a->kernel = clCreateKernel(a->prog, "combine", &err);
    check(err, "clCreateKernel");

    size_t bytes = mul_size(a->o.size, sizeof(float));
    a->a = create_buffer(a->ctx, CL_MEM_READ_ONLY, bytes, NULL);
    a->b = create_buffer(a->ctx, CL_MEM_READ_ONLY, bytes, NULL);
    a->c = create_buffer(a->ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
    size_t all = mul_size(bytes, a->o.iters);
    a->h_a = xmalloc(all, 1);
    a->h_b = xmalloc(all, 1);
    a->h_c = xmalloc(all, 1);
}

/* Inputs of every iteration, each from (seed, iteration), in [-1, 1). */
static void make_inputs(struct app *a)
{
    size_t n = a->o.size;
    for (unsigned it = 0; it < a->o.iters; it++) {
        struct xorshift r = xorshift_make(iter_seed(a->o.seed, it));
        for (size_t i = 0; i < n; i++) {
            a->h_a[it * n + i] = 2.0f * xorshift_float(&r) - 1.0f;
            a->h_b[it * n + i] = 2.0f * xorshift_float(&r) - 1.0f;
        }
    }
}

/* All iterations on the one queue; returns wall ms. */
static double run(struct app *a)
{
    size_t n = a->o.size, bytes = n * sizeof(float);
    size_t global = (n + LOCAL_SIZE - 1) / LOCAL_SIZE * LOCAL_SIZE, local = LOCAL_SIZE;
    cl_uint rounds = a->o.work;
    cl_ulong count = n;
    cl_bool blocking = a->o.blocking_read ? CL_TRUE : CL_FALSE;
    double t0 = now_ms();
    for (unsigned it = 0; it < a->o.iters; it++) {
        check(clEnqueueWriteBuffer(a->queue, a->a, CL_FALSE, 0, bytes, a->h_a + it * n, 0, NULL,
                                   NULL),
              "clEnqueueWriteBuffer");
        check(clEnqueueWriteBuffer(a->queue, a->b, CL_FALSE, 0, bytes, a->h_b + it * n, 0, NULL,
                                   NULL),
              "clEnqueueWriteBuffer");
        check(clSetKernelArg(a->kernel, 0, sizeof a->a, &a->a), "clSetKernelArg");
        check(clSetKernelArg(a->kernel, 1, sizeof a->b, &a->b), "clSetKernelArg");
        check(clSetKernelArg(a->kernel, 2, sizeof a->c, &a->c), "clSetKernelArg");
        check(clSetKernelArg(a->kernel, 3, sizeof rounds, &rounds), "clSetKernelArg");
        check(clSetKernelArg(a->kernel, 4, sizeof count, &count), "clSetKernelArg");
        check(clEnqueueNDRangeKernel(a->queue, a->kernel, 1, NULL, &global, &local, 0, NULL, NULL),
              "clEnqueueNDRangeKernel");
        check(clEnqueueReadBuffer(a->queue, a->c, blocking, 0, bytes, a->h_c + it * n, 0, NULL,
                                  NULL),
              "clEnqueueReadBuffer");
    }
    check(clFinish(a->queue), "clFinish");
    return now_ms() - t0;
}

static float combine(float x, float y, unsigned rounds)
{
    float acc = 0.0f;
    for (unsigned r = 0; r < rounds; r++) {
        acc = acc * 0.5f + x * y;
        float t = x * 0.8f - y * 0.6f; /* rotation: no growth, no decay */
        y = x * 0.6f + y * 0.8f;
        x = t;
    }
    return acc;
}

/*
 * Checks every element, or, when that would cost the host more than about
 * 2^30 rounds of the recurrence (large --work), every stride-th element of
 * every iteration (the first included).
 */
static int verify(const struct app *a)
{
    size_t n = a->o.size;
    double tol = 1e-5 + 1e-7 * a->o.work; /* rounding drift grows with the rounds */
    double rounds = (double)n * a->o.iters * (a->o.work ? a->o.work : 1);
    size_t stride = rounds > 0x1p30 ? (size_t)ceil(rounds / 0x1p30) : 1;
    for (unsigned it = 0; it < a->o.iters; it++)
        for (size_t i = 0; i < n; i += stride) {
            size_t j = it * n + i;
            double exp = combine(a->h_a[j], a->h_b[j], a->o.work), got = a->h_c[j];
            if (!(fabs(got - exp) <= tol * (fabs(exp) + 1.0))) {
                fprintf(stderr,
                        APP ": FAILED: iteration %u: element %zu: got %.9g, expected %.9g\n", it,
                        i, got, exp);
                return 1;
            }
        }
    return 0;
}

static void teardown(struct app *a)
{
    check(clReleaseMemObject(a->a), "clReleaseMemObject");
    check(clReleaseMemObject(a->b), "clReleaseMemObject");
    check(clReleaseMemObject(a->c), "clReleaseMemObject");
    check(clReleaseKernel(a->kernel), "clReleaseKernel");
    check(clReleaseProgram(a->prog), "clReleaseProgram");
    check(clReleaseCommandQueue(a->queue), "clReleaseCommandQueue");
    check(clReleaseContext(a->ctx), "clReleaseContext");
    free(a->h_a);
    free(a->h_b);
    free(a->h_c);
    free(a->label);
}

int main(int argc, char **argv)
{
    struct app a = {0};
    parse_opts(argc, argv, &a.o);
    setup(&a);
    make_inputs(&a);
    double ms = run(&a);
    int failed = verify(&a);
    if (!failed && !a.o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n", a.o.size, a.o.iters,
               a.label, ms);
    teardown(&a);
    return failed;
}
