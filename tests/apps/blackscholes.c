/*
 * blackscholes — European call and put prices of N options (Black-Scholes
 * formula with the usual polynomial approximation of the normal CDF).
 *
 * What it is for clrr: a compute-heavy, perfectly contiguous workload. Each
 * option is independent: three float inputs (spot, strike, years) and two
 * float outputs (call, put) per work-item, with a logarithm, two
 * exponentials, a square root and two polynomial CDFs in between, i.e.
 * roughly ten times vecadd's arithmetic per byte moved. Two outputs per
 * work-group range make it the reference for splitting a kernel with several
 * contiguous outputs, and for device selection when compute rather than
 * transfer dominates. Risk-free rate and volatility are scalar kernel
 * arguments that never change: candidates for scalar specialization.
 * With --iters K, every iteration prices a fresh set of options.
 *
 * --devices M splits the options into M equal contiguous ranges, one per
 * device (own context, queue and buffers each), by hand.
 *
 * Usage: blackscholes [--size N] [--iters K] [--device SPEC] [--devices M]
 *                     [--seed S] [--quiet]
 *   --size N   number of options (default 1048576)
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

#define APP "blackscholes"
#define DEFAULT_SIZE ((size_t)1 << 20)
#define DEFAULT_ITERS 1u
#define MAX_DEVICES 64u
#define SIZE_HELP "number of options"
#define ITERS_HELP "iterations of write inputs, run, read back"
#define LOCAL_SIZE 256u

#define RISKFREE 0.02f
#define VOLATILITY 0.30f

/* Prices are at most about 100 (currency units). Device exp/log/sqrt are
 * accurate to a few ulp in float, the host works in double with the same
 * CDF polynomial: allow 1e-4 relative plus 1e-4 absolute (1/100 cent). */
#define TOL_REL 1e-4
#define TOL_ABS 1e-4

/* The kernels live in tests/apps/blackscholes.cl; the build turns that file into
 * a C string literal (build/gen/apps/blackscholes_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/blackscholes_cl.h"
    ;

/* Options, errors, random numbers, devices: the same in every workload
 * program of this kind. */
#include "tests/apps/app_common.h"

/* ===================================================================== */
/* The workload                                                          */
/* ===================================================================== */

/* The options of one iteration (host side): inputs and prices read back. */
struct book {
    float *spot, *strike, *years; /* inputs */
    float *call, *put;            /* outputs read back */
};

/* One device's share: options [first, first + count). */
struct lane {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel kernel;
    cl_mem spot, strike, years, call, put;
    size_t first, count;
};

static void lane_open(struct lane *l)
{
    size_t bytes = l->count * sizeof(float);
    open_device(l->dev, &l->ctx, &l->queue, &l->prog);
    l->kernel = make_kernel(l->prog, l->dev, "blackscholes", LOCAL_SIZE);
    l->spot = make_buffer(l->ctx, CL_MEM_READ_ONLY, bytes);
    l->strike = make_buffer(l->ctx, CL_MEM_READ_ONLY, bytes);
    l->years = make_buffer(l->ctx, CL_MEM_READ_ONLY, bytes);
    l->call = make_buffer(l->ctx, CL_MEM_WRITE_ONLY, bytes);
    l->put = make_buffer(l->ctx, CL_MEM_WRITE_ONLY, bytes);
}

static void lane_close(struct lane *l)
{
    CHECK("clReleaseMemObject", clReleaseMemObject(l->spot));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->strike));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->years));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->call));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->put));
    CHECK("clReleaseKernel", clReleaseKernel(l->kernel));
    CHECK("clReleaseProgram", clReleaseProgram(l->prog));
    CHECK("clReleaseCommandQueue", clReleaseCommandQueue(l->queue));
    CHECK("clReleaseContext", clReleaseContext(l->ctx));
}

static void write_slice(struct lane *l, cl_mem m, const float *host)
{
    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, m, CL_FALSE, 0,
          l->count * sizeof(float), host + l->first, 0, NULL, NULL));
}

static void read_slice(struct lane *l, cl_mem m, float *host)
{
    CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(l->queue, m, CL_FALSE, 0,
          l->count * sizeof(float), host + l->first, 0, NULL, NULL));
}

/* Enqueues this lane's writes, kernel and read-backs (all non-blocking). */
static void lane_enqueue(struct lane *l, struct book *h)
{
    size_t global = round_up(l->count, LOCAL_SIZE), local = LOCAL_SIZE;
    cl_float r = RISKFREE, v = VOLATILITY;
    cl_uint n = (cl_uint)l->count;

    write_slice(l, l->spot, h->spot);
    write_slice(l, l->strike, h->strike);
    write_slice(l, l->years, h->years);
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 0, sizeof(cl_mem), &l->spot));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 1, sizeof(cl_mem), &l->strike));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 2, sizeof(cl_mem), &l->years));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 3, sizeof(cl_mem), &l->call));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 4, sizeof(cl_mem), &l->put));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 5, sizeof r, &r));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 6, sizeof v, &v));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 7, sizeof n, &n));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, l->kernel, 1,
          NULL, &global, &local, 0, NULL, NULL));
    read_slice(l, l->call, h->call);
    read_slice(l, l->put, h->put);
    CHECK("clFlush", clFlush(l->queue));
}

static void generate(uint64_t seed, unsigned iter, struct book *h, size_t n)
{
    uint64_t s = rng_seed(seed, iter);
    size_t i;
    for (i = 0; i < n; i++) {
        h->spot[i] = rng_float(&s, 5.0f, 30.0f);
        h->strike[i] = rng_float(&s, 1.0f, 100.0f);
        h->years[i] = rng_float(&s, 0.25f, 10.0f);
    }
}

static double cnd_ref(double d)
{
    const double a1 = 0.31938153, a2 = -0.356563782, a3 = 1.781477937,
                 a4 = -1.821255978, a5 = 1.330274429,
                 rsqrt2pi = 0.39894228040143267794;
    double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
    double c = rsqrt2pi * exp(-0.5 * d * d) *
               (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0 ? 1.0 - c : c;
}

static void check_value(const char *what, size_t i, float got, double want)
{
    if (!(fabs(got - want) <= TOL_ABS + TOL_REL * fabs(want))) {
        fprintf(stderr, APP ": FAILED: %s[%zu] = %.9g, expected %.9g\n",
                what, i, got, want);
        exit(1);
    }
}

static void verify(const struct book *h, size_t n)
{
    const double r = RISKFREE, v = VOLATILITY;
    size_t i;
    for (i = 0; i < n; i++) {
        double s = h->spot[i], x = h->strike[i], t = h->years[i];
        double d1 = (log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt(t));
        double d2 = d1 - v * sqrt(t);
        double disc = x * exp(-r * t);
        check_value("call", i, h->call[i], s * cnd_ref(d1) - disc * cnd_ref(d2));
        check_value("put", i, h->put[i],
                    disc * (1.0 - cnd_ref(d2)) - s * (1.0 - cnd_ref(d1)));
    }
}

int main(int argc, char **argv)
{
    struct options o;
    cl_device_id ids[MAX_DEVICES];
    struct lane lanes[MAX_DEVICES];
    struct book h;
    char names[1024];
    double ms = 0;
    unsigned it, d;

    parse_options(argc, argv, &o);
    if (o.size > UINT32_MAX - LOCAL_SIZE)
        die("--size %zu too large (at most %u options)", o.size,
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
    h.spot = xmalloc(o.size, sizeof(float));
    h.strike = xmalloc(o.size, sizeof(float));
    h.years = xmalloc(o.size, sizeof(float));
    h.call = xmalloc(o.size, sizeof(float));
    h.put = xmalloc(o.size, sizeof(float));

    for (it = 0; it < o.iters; it++) {
        double t0;
        generate(o.seed, it, &h, o.size);
        t0 = now_ms();
        for (d = 0; d < o.devices; d++)
            lane_enqueue(&lanes[d], &h);
        for (d = 0; d < o.devices; d++)
            CHECK("clFinish", clFinish(lanes[d].queue));
        ms += now_ms() - t0;
        verify(&h, o.size);
    }

    for (d = 0; d < o.devices; d++)
        lane_close(&lanes[d]);
    free(h.spot);
    free(h.strike);
    free(h.years);
    free(h.call);
    free(h.put);
    if (!o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n",
               o.size, o.iters, names, ms);
    return 0;
}
