/*
 * geomatrix — clrr workload: element-wise geometric mean of n matrices,
 * composed from generic array kernels the way an array library does it.
 *
 * Per host-loop iteration: write the n input matrices (side --size), then
 *   t1 = mul(m0, m1); t2 = mul(t1, m2); ...; t(n-1) = mul(t(n-2), m(n-1));
 *   out = pow_scalar(t(n-1), 1/n)
 * where every t is a fresh temporary buffer created just before its launch
 * and released right after the launch that consumes it (as a reference-
 * counted array library would), and read back out. That is n launches per
 * iteration (n-1 mul, 1 pow_scalar), n input writes, one read.
 *
 * What clrr can exploit: a chain of element-wise kernels with identical
 * index spaces, each reading what the previous one wrote at the same index:
 * vertical fusion collapses the chain into one kernel that reads the n
 * inputs once and writes out once, and every temporary becomes dead (no
 * allocation, no traffic). Memory-bound; contiguous; trivially splittable.
 *
 * Verification: the products are correctly rounded on both sides, but the
 * device's pow may be 16 ulp off (OpenCL 1.2), so |got - exp| <= 1e-5 * |exp|
 * + 1e-30. Inputs are in [0.5, 1.5), and --n is capped at 256 so that the
 * products stay far from float overflow and denormals.
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

#define APP "geomatrix"
#define MAX_DEVICES 64
#define APP_OPTS_DEFAULTS {.size = 512, .iters = 1, .devices = 1, .seed = 1, .n = 8}
#define APP_SIZE_MAX (1u << 20)
#define APP_ONE_DEVICE
#define APP_EXTRA_OPTIONS \
    {"n", required_argument, NULL, O_N},
#define LOCAL_SIZE 64
#define MAX_N 256

/* The kernels live in tests/apps/geomatrix.cl; the build turns that file into
 * a C string literal (build/gen/apps/geomatrix_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/geomatrix_cl.h"
    ;

/* ------------------------------------------------------------ options */

struct opts {
    size_t size;        /* matrix side */
    unsigned iters;     /* host loop repetitions */
    const char *device; /* --device or CLRR_APP_DEVICE; NULL: default */
    unsigned devices;   /* --devices: 1 */
    uint64_t seed;
    int quiet;
    unsigned n; /* --n: number of matrices */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " APP " [--size N] [--iters K] [--device SPEC] [--devices 1]\n"
            "                 [--seed S] [--quiet] [--n M] [--help]\n"
            "  --size N       matrix side, each matrix is N x N floats (default 512)\n"
            "  --iters K      repeat the host loop (write matrices, n kernels, read back)\n"
            "                 K times with new matrices each time (default 1)\n"
            "  --device SPEC  device index over all platforms, cpu|gpu|accelerator, or a\n"
            "                 substring of the device or platform name (default: env\n"
            "                 CLRR_APP_DEVICE, else the first GPU, else the first device)\n"
            "  --devices M    only 1 is supported (one device)\n"
            "  --seed S       seed of the generated inputs (default 1)\n"
            "  --quiet        print nothing on success\n"
            "  --n M          number of matrices, 1..256 (default 8)\n");
}

/* getopt_long codes of the options of its own (O_EXTRA on) */
enum { O_N = 512 };

#include "tests/apps/app_common.h"

static void app_option(int c, const char *arg, struct opts *o)
{
    switch (c) {
    case O_N:
        o->n = parse_range("--n", arg, 1, MAX_N);
        break;
    }
}

/* ------------------------------------------------------------ workload */

struct app {
    struct opts o;
    size_t elems; /* size * size */
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel mul_k, pow_k;
    cl_mem in[MAX_N]; /* the n input matrices */
    cl_mem out;
    char *label;
    float *h_in;  /* n matrices back to back */
    float *h_out; /* device result */
};

static void setup(struct app *a)
{
    cl_device_id dev;
    open_context(a->o.device, 1, &dev, &a->ctx, &a->queue, &a->prog, &a->label);
    a->mul_k = create_kernel(a->prog, "mul");
    a->pow_k = create_kernel(a->prog, "pow_scalar");

    a->elems = mul_size(a->o.size, a->o.size);
    size_t bytes = mul_size(a->elems, sizeof(float));
    for (unsigned k = 0; k < a->o.n; k++)
        a->in[k] = create_buffer(a->ctx, CL_MEM_READ_ONLY, bytes, NULL);
    a->out = create_buffer(a->ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
    a->h_in = xmalloc(mul_size(bytes, a->o.n), 1);
    a->h_out = xmalloc(bytes, 1);
}

static void make_inputs(struct app *a, uint64_t seed)
{
    struct xorshift r = xorshift_make(seed);
    size_t total = a->elems * a->o.n;
    for (size_t i = 0; i < total; i++)
        a->h_in[i] = 0.5f + xorshift_float(&r);
}

/* Enqueues c = mul(x, y) over all elements. */
static void enqueue_mul(struct app *a, cl_mem x, cl_mem y, cl_mem c)
{
    cl_ulong n = a->elems;
    size_t global = (a->elems + LOCAL_SIZE - 1) / LOCAL_SIZE * LOCAL_SIZE, local = LOCAL_SIZE;
    check(clSetKernelArg(a->mul_k, 0, sizeof x, &x), "clSetKernelArg");
    check(clSetKernelArg(a->mul_k, 1, sizeof y, &y), "clSetKernelArg");
    check(clSetKernelArg(a->mul_k, 2, sizeof c, &c), "clSetKernelArg");
    check(clSetKernelArg(a->mul_k, 3, sizeof n, &n), "clSetKernelArg");
    check(clEnqueueNDRangeKernel(a->queue, a->mul_k, 1, NULL, &global, &local, 0, NULL, NULL),
          "clEnqueueNDRangeKernel");
}

/* Enqueues c = pow(x, p) over all elements. */
static void enqueue_pow(struct app *a, cl_mem x, float p, cl_mem c)
{
    cl_ulong n = a->elems;
    size_t global = (a->elems + LOCAL_SIZE - 1) / LOCAL_SIZE * LOCAL_SIZE, local = LOCAL_SIZE;
    check(clSetKernelArg(a->pow_k, 0, sizeof x, &x), "clSetKernelArg");
    check(clSetKernelArg(a->pow_k, 1, sizeof p, &p), "clSetKernelArg");
    check(clSetKernelArg(a->pow_k, 2, sizeof c, &c), "clSetKernelArg");
    check(clSetKernelArg(a->pow_k, 3, sizeof n, &n), "clSetKernelArg");
    check(clEnqueueNDRangeKernel(a->queue, a->pow_k, 1, NULL, &global, &local, 0, NULL, NULL),
          "clEnqueueNDRangeKernel");
}

/* Writes the inputs, runs the chain, reads back; returns wall ms. */
static double run_iteration(struct app *a)
{
    size_t bytes = a->elems * sizeof(float);
    double t0 = now_ms();
    for (unsigned k = 0; k < a->o.n; k++)
        check(clEnqueueWriteBuffer(a->queue, a->in[k], CL_FALSE, 0, bytes,
                                   a->h_in + k * a->elems, 0, NULL, NULL),
              "clEnqueueWriteBuffer");
    cl_mem acc = a->in[0]; /* a temporary from the second step on */
    for (unsigned k = 1; k < a->o.n; k++) {
        cl_mem t = create_buffer(a->ctx, CL_MEM_READ_WRITE, bytes, NULL);
        enqueue_mul(a, acc, a->in[k], t);
        if (k > 1) /* released after use; freed when the launch completes */
            check(clReleaseMemObject(acc), "clReleaseMemObject");
        acc = t;
    }
    enqueue_pow(a, acc, 1.0f / (float)a->o.n, a->out);
    if (a->o.n > 1)
        check(clReleaseMemObject(acc), "clReleaseMemObject");
    check(clEnqueueReadBuffer(a->queue, a->out, CL_FALSE, 0, bytes, a->h_out, 0, NULL, NULL),
          "clEnqueueReadBuffer");
    check(clFinish(a->queue), "clFinish");
    return now_ms() - t0;
}

static int verify(const struct app *a, unsigned iter)
{
    float p = 1.0f / (float)a->o.n;
    for (size_t i = 0; i < a->elems; i++) {
        float prod = a->h_in[i];
        for (unsigned k = 1; k < a->o.n; k++)
            prod *= a->h_in[k * a->elems + i];
        double exp = powf(prod, p), got = a->h_out[i];
        if (!(fabs(got - exp) <= 1e-5 * fabs(exp) + 1e-30)) {
            fprintf(stderr, APP ": FAILED: iteration %u: element %zu: got %.9g, expected %.9g\n",
                    iter, i, got, exp);
            return 1;
        }
    }
    return 0;
}

static void teardown(struct app *a)
{
    for (unsigned k = 0; k < a->o.n; k++)
        check(clReleaseMemObject(a->in[k]), "clReleaseMemObject");
    check(clReleaseMemObject(a->out), "clReleaseMemObject");
    check(clReleaseKernel(a->mul_k), "clReleaseKernel");
    check(clReleaseKernel(a->pow_k), "clReleaseKernel");
    check(clReleaseProgram(a->prog), "clReleaseProgram");
    check(clReleaseCommandQueue(a->queue), "clReleaseCommandQueue");
    check(clReleaseContext(a->ctx), "clReleaseContext");
    free(a->h_in);
    free(a->h_out);
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
        make_inputs(&a, iter_seed(a.o.seed, it));
        ms += run_iteration(&a);
        failed = verify(&a, it);
    }
    if (!failed && !a.o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n", a.o.size, a.o.iters,
               a.label, ms);
    teardown(&a);
    return failed;
}
