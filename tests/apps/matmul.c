/*
 * matmul — C = A x B for square float matrices, with a tiled kernel that
 * stages 16x16 tiles of A and B in __local memory.
 *
 * What it is for clrr: the compute-bound workload with data reuse. Each
 * work-group (one 16x16 tile of C) reads a 16-row band of A and a 16-column
 * band of B and synchronises with barriers, so it exercises __local memory,
 * barriers and a 2-D NDRange. Splitting it by work-group rows gives each
 * device a contiguous band of A and C but the whole of B: the reference
 * case for region analysis with one partitioned and one replicated input.
 * With --iters K, every iteration multiplies fresh matrices.
 *
 * --size N is the matrix side, rounded up to a multiple of the 16x16 tile
 * (the line printed on success shows the rounded size). --devices M splits
 * the tile rows of C into M equal contiguous bands, one per device (own
 * context, queue and buffers each), by hand; B goes to every device.
 *
 * Verification: every element for N <= 512; above, a spread sample of rows
 * (about 2^28 multiply-adds on the host), covering every device's band.
 *
 * Usage: matmul [--size N] [--iters K] [--device SPEC] [--devices M]
 *               [--seed S] [--quiet]
 *   --size N   matrix side (default 512)
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

#define APP "matmul"
#define DEFAULT_SIZE ((size_t)512)
#define DEFAULT_ITERS 1u
#define MAX_DEVICES 64u
#define SIZE_HELP "matrix side, rounded up to a multiple of 16"
#define ITERS_HELP "iterations of write inputs, run, read back"
#define TILE 16u            /* must match TS in the kernel */
#define MAX_SIDE 65535u     /* keeps every index within 32 bits per factor */
#define FULL_CHECK_SIDE 512u
#define CHECK_BUDGET ((size_t)1 << 28) /* host multiply-adds when sampling */

/* A float dot product of length N accumulates an error of about
 * eps * sum |a_ik * b_kj| (eps = 6e-8); allow 1e-5 of that sum, plus an
 * absolute 1e-6 for sums that cancel to zero. */
#define TOL_REL 1e-5
#define TOL_ABS 1e-6

/* The kernels live in tests/apps/matmul.cl; the build turns that file into
 * a C string literal (build/gen/apps/matmul_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/matmul_cl.h"
    ;

/* Options, errors, random numbers, devices: the same in every workload
 * program of this kind. */
#include "tests/apps/app_common.h"

/* ===================================================================== */
/* The workload                                                          */
/* ===================================================================== */

/* One device's share: rows [first, first + count) of A and C, all of B. */
struct lane {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel kernel;
    cl_mem a, b, c;
    size_t first, count;
};

static void lane_open(struct lane *l, size_t n)
{
    open_device(l->dev, &l->ctx, &l->queue, &l->prog);
    l->kernel = make_kernel(l->prog, l->dev, "matmul", TILE * TILE);
    l->a = make_buffer(l->ctx, CL_MEM_READ_ONLY, l->count * n * sizeof(float));
    l->b = make_buffer(l->ctx, CL_MEM_READ_ONLY, n * n * sizeof(float));
    l->c = make_buffer(l->ctx, CL_MEM_WRITE_ONLY, l->count * n * sizeof(float));
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
static void lane_enqueue(struct lane *l, size_t n, const float *a, const float *b,
                         float *c)
{
    size_t band = l->count * n * sizeof(float);
    size_t global[2] = {n, l->count}, local[2] = {TILE, TILE};
    cl_uint side = (cl_uint)n;

    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, l->a, CL_FALSE, 0,
          band, a + l->first * n, 0, NULL, NULL));
    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, l->b, CL_FALSE, 0,
          n * n * sizeof(float), b, 0, NULL, NULL));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 0, sizeof(cl_mem), &l->a));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 1, sizeof(cl_mem), &l->b));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 2, sizeof(cl_mem), &l->c));
    CHECK("clSetKernelArg", clSetKernelArg(l->kernel, 3, sizeof side, &side));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, l->kernel, 2,
          NULL, global, local, 0, NULL, NULL));
    CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(l->queue, l->c, CL_FALSE, 0,
          band, c + l->first * n, 0, NULL, NULL));
    CHECK("clFlush", clFlush(l->queue));
}

static void generate(uint64_t seed, unsigned iter, float *a, float *b, size_t n)
{
    uint64_t s = rng_seed(seed, iter);
    size_t i;
    for (i = 0; i < n * n; i++) {
        a[i] = rng_float(&s, -1.0f, 1.0f);
        b[i] = rng_float(&s, -1.0f, 1.0f);
    }
}

/* Checks row i of C against a double-precision product; sum and mag are
 * n-element scratch rows (the exact value and the sum of |terms|). */
static void verify_row(size_t i, size_t n, const float *a, const float *b,
                       const float *c, double *sum, double *mag)
{
    size_t j, k;
    for (j = 0; j < n; j++)
        sum[j] = mag[j] = 0.0;
    for (k = 0; k < n; k++) {
        double aik = a[i * n + k];
        const float *brow = b + k * n;
        for (j = 0; j < n; j++) {
            double term = aik * brow[j];
            sum[j] += term;
            mag[j] += fabs(term);
        }
    }
    for (j = 0; j < n; j++) {
        float got = c[i * n + j];
        if (!(fabs(got - sum[j]) <= TOL_ABS + TOL_REL * mag[j])) {
            fprintf(stderr, APP ": FAILED: c[%zu][%zu] (index %zu) = %.9g, "
                    "expected %.9g\n", i, j, i * n + j, got, sum[j]);
            exit(1);
        }
    }
}

/* Every row for small matrices; otherwise rows spread over the whole
 * matrix (at every position inside a tile), within CHECK_BUDGET. */
static void verify(size_t n, const float *a, const float *b, const float *c)
{
    double *sum = xmalloc(n, sizeof *sum), *mag = xmalloc(n, sizeof *mag);
    size_t rows = n, r;

    if (n > FULL_CHECK_SIDE) {
        rows = CHECK_BUDGET / (n * n);
        if (rows < 2 * TILE)
            rows = 2 * TILE;
        if (rows > n)
            rows = n;
    }
    for (r = 0; r < rows; r++) {
        size_t i = rows == n ? r : r * n / rows + r % TILE;
        verify_row(i < n ? i : n - 1, n, a, b, c, sum, mag);
    }
    if (rows < n)
        verify_row(n - 1, n, a, b, c, sum, mag);
    free(sum);
    free(mag);
}

int main(int argc, char **argv)
{
    struct options o;
    cl_device_id ids[MAX_DEVICES];
    struct lane lanes[MAX_DEVICES];
    char names[1024];
    float *a, *b, *c;
    size_t n, tiles;
    double ms = 0;
    unsigned it, d;

    parse_options(argc, argv, &o);
    if (o.size > MAX_SIDE)
        die("--size %zu too large (at most %u)", o.size, MAX_SIDE);
    n = round_up(o.size, TILE);
    tiles = n / TILE;
    if (tiles < o.devices)
        die("--size %zu too small for %u devices (one %u-row band each)",
            o.size, o.devices, TILE);
    pick_devices(o.device, o.devices, ids, names, sizeof names);

    memset(lanes, 0, sizeof lanes);
    for (d = 0; d < o.devices; d++) {
        lanes[d].dev = ids[d];
        lanes[d].first = tiles * d / o.devices * TILE;
        lanes[d].count = tiles * (d + 1) / o.devices * TILE - lanes[d].first;
        lane_open(&lanes[d], n);
    }
    a = xmalloc(n * n, sizeof *a);
    b = xmalloc(n * n, sizeof *b);
    c = xmalloc(n * n, sizeof *c);

    for (it = 0; it < o.iters; it++) {
        double t0;
        generate(o.seed, it, a, b, n);
        t0 = now_ms();
        for (d = 0; d < o.devices; d++)
            lane_enqueue(&lanes[d], n, a, b, c);
        for (d = 0; d < o.devices; d++)
            CHECK("clFinish", clFinish(lanes[d].queue));
        ms += now_ms() - t0;
        verify(n, a, b, c);
    }

    for (d = 0; d < o.devices; d++)
        lane_close(&lanes[d]);
    free(a);
    free(b);
    free(c);
    if (!o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n",
               n, o.iters, names, ms);
    return 0;
}
