/*
 * jacobi — clrr workload: Jacobi iteration on a 2D grid (PolyBench
 * jacobi-2d style), device-resident.
 *
 * The grid (side --size) is written once to A and copied to B on the device
 * (clEnqueueCopyBuffer); then --iters times: jacobi (reads A, writes the
 * interior of B: 0.2 * (centre + 4 neighbours)) and copy (B -> A, every
 * element); A is read back at the end. 2 * iters launches, no transfer in
 * between.
 *
 * What clrr can exploit: data that stays on the device across many small
 * launches (no redundant transfers to remove; a recorder must not assume
 * reads follow every kernel); the copy kernel is pure data movement that
 * fusion with the stencil (or buffer swapping) removes; the stencil reads a
 * one-row halo around the rows it writes, so a split by rows needs halo
 * exchange after every iteration (a cost model should see that). Memory-bound.
 *
 * Verification: the host runs the same iterations in C with the same
 * summation order; results are expected to be identical, the tolerance
 * |got - exp| <= 1e-6 * |exp| + 1e-7 only allows for a compiler that
 * reorders the additions.
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

#define APP "jacobi"
#define MAX_DEVICES 64
#define APP_OPTS_DEFAULTS {.size = 1024, .iters = 20, .devices = 1, .seed = 1}
#define APP_SIZE_MAX (1u << 20)
#define APP_ONE_DEVICE
#define LOCAL_SIZE 64
#define TILE 16 /* the stencil's work-groups are TILE x TILE */

/* The kernels live in tests/apps/jacobi.cl; the build turns that file into
 * a C string literal (build/gen/apps/jacobi_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/jacobi_cl.h"
    ;

/* ------------------------------------------------------------ options */

struct opts {
    size_t size;        /* grid side */
    unsigned iters;     /* Jacobi iterations */
    const char *device; /* --device or CLRR_APP_DEVICE; NULL: default */
    unsigned devices;   /* --devices: 1 */
    uint64_t seed;
    int quiet;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " APP " [--size N] [--iters K] [--device SPEC] [--devices 1]\n"
            "              [--seed S] [--quiet] [--help]\n"
            "  --size N       grid side, the grid is N x N floats (default 1024)\n"
            "  --iters K      Jacobi iterations, each a stencil and a copy launch (default 20)\n"
            "  --device SPEC  device index over all platforms, cpu|gpu|accelerator, or a\n"
            "                 substring of the device or platform name (default: env\n"
            "                 CLRR_APP_DEVICE, else the first GPU, else the first device)\n"
            "  --devices M    only 1 is supported (one device)\n"
            "  --seed S       seed of the generated inputs (default 1)\n"
            "  --quiet        print nothing on success\n");
}

#include "tests/apps/app_common.h"

/* ------------------------------------------------------------ workload */

struct app {
    struct opts o;
    size_t elems; /* size * size */
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel jacobi_k, copy_k;
    cl_mem a, b;
    char *label;
    float *h_grid;   /* input */
    float *h_result; /* device result */
    float *r_a, *r_b; /* host reference */
};

static void setup(struct app *a)
{
    cl_device_id dev;
    open_context(a->o.device, 1, &dev, &a->ctx, &a->queue, &a->prog, &a->label);
    a->jacobi_k = create_kernel(a->prog, "jacobi");
    a->copy_k = create_kernel(a->prog, "copy");

    a->elems = mul_size(a->o.size, a->o.size);
    size_t bytes = mul_size(a->elems, sizeof(float));
    a->a = create_buffer(a->ctx, CL_MEM_READ_WRITE, bytes, NULL);
    a->b = create_buffer(a->ctx, CL_MEM_READ_WRITE, bytes, NULL);
    a->h_grid = xmalloc(bytes, 1);
    a->h_result = xmalloc(bytes, 1);
    a->r_a = xmalloc(bytes, 1);
    a->r_b = xmalloc(bytes, 1);
}

/* Random interior in [0, 1), a hot top edge (1) and a warm left edge (0.5). */
static void make_grid(struct app *a)
{
    struct xorshift r = xorshift_make(iter_seed(a->o.seed, 0));
    size_t n = a->o.size;
    for (size_t y = 0; y < n; y++)
        for (size_t x = 0; x < n; x++)
            a->h_grid[y * n + x] = y == 0 ? 1.0f : x == 0 ? 0.5f : xorshift_float(&r);
}

/* Writes the grid, iterates, reads back; returns wall ms. */
static double run(struct app *a)
{
    size_t n = a->o.size, bytes = a->elems * sizeof(float);
    size_t global2[2] = {(n + TILE - 1) / TILE * TILE, (n + TILE - 1) / TILE * TILE};
    size_t local2[2] = {TILE, TILE};
    size_t global1 = (a->elems + LOCAL_SIZE - 1) / LOCAL_SIZE * LOCAL_SIZE, local1 = LOCAL_SIZE;
    cl_int side = (cl_int)n;
    cl_ulong count = a->elems;
    check(clSetKernelArg(a->jacobi_k, 0, sizeof a->a, &a->a), "clSetKernelArg");
    check(clSetKernelArg(a->jacobi_k, 1, sizeof a->b, &a->b), "clSetKernelArg");
    check(clSetKernelArg(a->jacobi_k, 2, sizeof side, &side), "clSetKernelArg");
    check(clSetKernelArg(a->copy_k, 0, sizeof a->b, &a->b), "clSetKernelArg");
    check(clSetKernelArg(a->copy_k, 1, sizeof a->a, &a->a), "clSetKernelArg");
    check(clSetKernelArg(a->copy_k, 2, sizeof count, &count), "clSetKernelArg");

    double t0 = now_ms();
    check(clEnqueueWriteBuffer(a->queue, a->a, CL_FALSE, 0, bytes, a->h_grid, 0, NULL, NULL),
          "clEnqueueWriteBuffer");
    check(clEnqueueCopyBuffer(a->queue, a->a, a->b, 0, 0, bytes, 0, NULL, NULL),
          "clEnqueueCopyBuffer");
    for (unsigned it = 0; it < a->o.iters; it++) {
        check(clEnqueueNDRangeKernel(a->queue, a->jacobi_k, 2, NULL, global2, local2, 0, NULL,
                                     NULL),
              "clEnqueueNDRangeKernel");
        check(clEnqueueNDRangeKernel(a->queue, a->copy_k, 1, NULL, &global1, &local1, 0, NULL,
                                     NULL),
              "clEnqueueNDRangeKernel");
    }
    check(clEnqueueReadBuffer(a->queue, a->a, CL_FALSE, 0, bytes, a->h_result, 0, NULL, NULL),
          "clEnqueueReadBuffer");
    check(clFinish(a->queue), "clFinish");
    return now_ms() - t0;
}

static void reference(struct app *a)
{
    size_t n = a->o.size;
    float *A = a->r_a, *B = a->r_b;
    memcpy(A, a->h_grid, a->elems * sizeof *A);
    memcpy(B, a->h_grid, a->elems * sizeof *B);
    for (unsigned it = 0; it < a->o.iters; it++) {
        for (size_t y = 1; y + 1 < n; y++)
            for (size_t x = 1; x + 1 < n; x++) {
                size_t i = y * n + x;
                B[i] = 0.2f * (A[i] + A[i - 1] + A[i + 1] + A[i - n] + A[i + n]);
            }
        memcpy(A, B, a->elems * sizeof *A);
    }
}

static int verify(struct app *a)
{
    reference(a);
    size_t n = a->o.size;
    for (size_t i = 0; i < a->elems; i++) {
        double got = a->h_result[i], exp = a->r_a[i];
        if (!(fabs(got - exp) <= 1e-6 * fabs(exp) + 1e-7)) {
            fprintf(stderr,
                    APP ": FAILED: element %zu (x=%zu y=%zu) after %u iterations: got %.9g, "
                        "expected %.9g\n",
                    i, i % n, i / n, a->o.iters, got, exp);
            return 1;
        }
    }
    return 0;
}

static void teardown(struct app *a)
{
    check(clReleaseMemObject(a->a), "clReleaseMemObject");
    check(clReleaseMemObject(a->b), "clReleaseMemObject");
    check(clReleaseKernel(a->jacobi_k), "clReleaseKernel");
    check(clReleaseKernel(a->copy_k), "clReleaseKernel");
    check(clReleaseProgram(a->prog), "clReleaseProgram");
    check(clReleaseCommandQueue(a->queue), "clReleaseCommandQueue");
    check(clReleaseContext(a->ctx), "clReleaseContext");
    free(a->h_grid);
    free(a->h_result);
    free(a->r_a);
    free(a->r_b);
    free(a->label);
}

int main(int argc, char **argv)
{
    struct app a = {0};
    parse_opts(argc, argv, &a.o);
    setup(&a);
    make_grid(&a);
    double ms = run(&a);
    int failed = verify(&a);
    if (!failed && !a.o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n", a.o.size, a.o.iters,
               a.label, ms);
    teardown(&a);
    return failed;
}
