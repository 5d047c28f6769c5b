/*
 * spmv — y = A x for a sparse N x N float matrix in CSR form, one
 * work-item per row (the "scalar" CSR kernel).
 *
 * What it is for clrr: an irregular, memory-bound workload whose cost is
 * very unevenly spread over the NDRange. Row lengths follow a power law in
 * the row index (row i has about 8 random entries plus a Zipf-like tail
 * A / (i + 1)^0.8 that carries as many entries again, capped at N), so the
 * first rows are very long and the last ones short: a work-group's cost
 * depends on which range of rows it covers, an equal split of the rows
 * over devices is badly unbalanced, and splitting must be weighted by
 * work, not by work-items. Reads of x are a data-dependent gather (the
 * region touched is not an affine function of the work-item id), reads of
 * row_ptr/col/val and writes of y are contiguous per row range.
 *
 * With --iters K, every iteration writes the matrix and x and reads y back.
 * The sparsity pattern (row_ptr, col) is fixed for a given --seed, so from
 * the second iteration on its uploads repeat the same bytes (redundant
 * transfers that an optimizer may drop); values and x are fresh each time.
 *
 * --devices M splits the rows into M equal contiguous ranges (equal rows,
 * hence unequal work), one per device (own context, queue and buffers
 * each, row_ptr rebased per device), by hand; x goes to every device.
 *
 * Usage: spmv [--size N] [--iters K] [--device SPEC] [--devices M]
 *             [--seed S] [--quiet]
 *   --size N   number of rows (and columns) (default 131072)
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

#define APP "spmv"
#define DEFAULT_SIZE ((size_t)1 << 17)
#define DEFAULT_ITERS 1u
#define MAX_DEVICES 64u
#define SIZE_HELP "number of rows (and columns)"
#define ITERS_HELP "iterations of write inputs, run, read back"
#define LOCAL_SIZE 128u
#define BASE_AVG 8u         /* average length of the uniform part of a row */
#define TAIL_AVG 8.0        /* average length of the power-law part */
#define TAIL_EXPONENT 0.8

/* A float dot product accumulates an error of about eps * sum |a_k x_k|
 * (eps = 6e-8); allow 1e-5 of that sum, plus 1e-6 absolute. */
#define TOL_REL 1e-5
#define TOL_ABS 1e-6

/* The kernels live in tests/apps/spmv.cl; the build turns that file into
 * a C string literal (build/gen/apps/spmv_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/spmv_cl.h"
    ;

/* Options, errors, random numbers, devices: the same in every workload
 * program of this kind. */
#include "tests/apps/app_common.h"

/* ===================================================================== */
/* The workload                                                          */
/* ===================================================================== */

/* The matrix (CSR) and vectors on the host. */
struct csr {
    size_t n, nnz;
    cl_uint *row_ptr, *col; /* fixed pattern */
    float *val, *x, *y;     /* fresh values and x each iteration; y read back */
};

/* One device's share: rows [first, first + count), i.e. entries
 * [row_ptr[first], row_ptr[first + count]). */
struct lane {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel kernel;
    cl_mem row_ptr, col, val, x, y;
    size_t first, count, nz_first, nz_count;
    cl_uint *local_ptr; /* row_ptr[first .. first + count], rebased to 0 */
};

/* Row lengths: uniform part plus a power-law tail in the row index. */
static void make_pattern(uint64_t seed, struct csr *m)
{
    uint64_t s = rng_seed(seed, UINT64_MAX);
    double z = 0.0, amp;
    size_t i, k, n = m->n, nnz = 0;

    for (i = 0; i < n; i++)
        z += pow((double)(i + 1), -TAIL_EXPONENT);
    amp = TAIL_AVG * (double)n / z;
    m->row_ptr = xmalloc(n + 1, sizeof(cl_uint));
    m->row_ptr[0] = 0;
    for (i = 0; i < n; i++) {
        double tail = amp * pow((double)(i + 1), -TAIL_EXPONENT);
        size_t len = 1 + rng_next(&s) % (2 * BASE_AVG - 1) + (size_t)tail;
        if (len > n)
            len = n;
        nnz += len;
        if (nnz > UINT32_MAX)
            die("--size %zu gives more than 2^32 non-zeros", n);
        m->row_ptr[i + 1] = (cl_uint)nnz;
    }
    m->nnz = nnz;
    /* Entry k of a row of length len lies in the k-th of len equal column
     * buckets: sorted, distinct, spread over the whole of x. */
    m->col = xmalloc(nnz, sizeof(cl_uint));
    for (i = 0; i < n; i++) {
        size_t start = m->row_ptr[i], len = m->row_ptr[i + 1] - start;
        for (k = 0; k < len; k++) {
            size_t lo = k * n / len, hi = (k + 1) * n / len;
            m->col[start + k] = (cl_uint)(lo + rng_next(&s) % (hi - lo));
        }
    }
}

static void make_values(uint64_t seed, unsigned iter, struct csr *m)
{
    uint64_t s = rng_seed(seed, iter);
    size_t k;
    for (k = 0; k < m->nnz; k++)
        m->val[k] = rng_float(&s, -1.0f, 1.0f);
    for (k = 0; k < m->n; k++)
        m->x[k] = rng_float(&s, -1.0f, 1.0f);
}

static void lane_open(struct lane *l, const struct csr *m)
{
    size_t r;
    l->nz_first = m->row_ptr[l->first];
    l->nz_count = m->row_ptr[l->first + l->count] - l->nz_first;
    l->local_ptr = xmalloc(l->count + 1, sizeof(cl_uint));
    for (r = 0; r <= l->count; r++)
        l->local_ptr[r] = (cl_uint)(m->row_ptr[l->first + r] - l->nz_first);
    open_device(l->dev, &l->ctx, &l->queue, &l->prog);
    l->kernel = make_kernel(l->prog, l->dev, "spmv_csr", LOCAL_SIZE);
    l->row_ptr = make_buffer(l->ctx, CL_MEM_READ_ONLY, (l->count + 1) * sizeof(cl_uint));
    l->col = make_buffer(l->ctx, CL_MEM_READ_ONLY, l->nz_count * sizeof(cl_uint));
    l->val = make_buffer(l->ctx, CL_MEM_READ_ONLY, l->nz_count * sizeof(float));
    l->x = make_buffer(l->ctx, CL_MEM_READ_ONLY, m->n * sizeof(float));
    l->y = make_buffer(l->ctx, CL_MEM_WRITE_ONLY, l->count * sizeof(float));
}

static void lane_close(struct lane *l)
{
    CHECK("clReleaseMemObject", clReleaseMemObject(l->row_ptr));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->col));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->val));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->x));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->y));
    CHECK("clReleaseKernel", clReleaseKernel(l->kernel));
    CHECK("clReleaseProgram", clReleaseProgram(l->prog));
    CHECK("clReleaseCommandQueue", clReleaseCommandQueue(l->queue));
    CHECK("clReleaseContext", clReleaseContext(l->ctx));
    free(l->local_ptr);
}

static void write_buffer(struct lane *l, cl_mem b, size_t bytes, const void *src)
{
    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, b, CL_FALSE, 0,
          bytes, src, 0, NULL, NULL));
}

/* Enqueues this lane's writes, kernel and read-back (all non-blocking). */
static void lane_enqueue(struct lane *l, struct csr *m)
{
    size_t global = round_up(l->count, LOCAL_SIZE), local = LOCAL_SIZE;
    cl_uint rows = (cl_uint)l->count;
    cl_kernel k = l->kernel;

    write_buffer(l, l->row_ptr, (l->count + 1) * sizeof(cl_uint), l->local_ptr);
    write_buffer(l, l->col, l->nz_count * sizeof(cl_uint), m->col + l->nz_first);
    write_buffer(l, l->val, l->nz_count * sizeof(float), m->val + l->nz_first);
    write_buffer(l, l->x, m->n * sizeof(float), m->x);
    CHECK("clSetKernelArg", clSetKernelArg(k, 0, sizeof rows, &rows));
    CHECK("clSetKernelArg", clSetKernelArg(k, 1, sizeof(cl_mem), &l->row_ptr));
    CHECK("clSetKernelArg", clSetKernelArg(k, 2, sizeof(cl_mem), &l->col));
    CHECK("clSetKernelArg", clSetKernelArg(k, 3, sizeof(cl_mem), &l->val));
    CHECK("clSetKernelArg", clSetKernelArg(k, 4, sizeof(cl_mem), &l->x));
    CHECK("clSetKernelArg", clSetKernelArg(k, 5, sizeof(cl_mem), &l->y));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, k, 1,
          NULL, &global, &local, 0, NULL, NULL));
    CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(l->queue, l->y, CL_FALSE, 0,
          l->count * sizeof(float), m->y + l->first, 0, NULL, NULL));
    CHECK("clFlush", clFlush(l->queue));
}

static void verify(const struct csr *m)
{
    size_t r, k;
    for (r = 0; r < m->n; r++) {
        double sum = 0.0, mag = 0.0;
        for (k = m->row_ptr[r]; k < m->row_ptr[r + 1]; k++) {
            double term = (double)m->val[k] * m->x[m->col[k]];
            sum += term;
            mag += fabs(term);
        }
        if (!(fabs(m->y[r] - sum) <= TOL_ABS + TOL_REL * mag)) {
            fprintf(stderr, APP ": FAILED: y[%zu] = %.9g, expected %.9g "
                    "(row of %u entries)\n", r, m->y[r], sum,
                    (unsigned)(m->row_ptr[r + 1] - m->row_ptr[r]));
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    struct options o;
    cl_device_id ids[MAX_DEVICES];
    struct lane lanes[MAX_DEVICES];
    struct csr m;
    char names[1024];
    double ms = 0;
    unsigned it, d;

    parse_options(argc, argv, &o);
    if (o.size > UINT32_MAX - LOCAL_SIZE)
        die("--size %zu too large (at most %u rows)", o.size,
            (unsigned)(UINT32_MAX - LOCAL_SIZE));
    if (o.size < o.devices)
        die("--size %zu too small for %u devices", o.size, o.devices);
    pick_devices(o.device, o.devices, ids, names, sizeof names);

    m.n = o.size;
    make_pattern(o.seed, &m);
    m.val = xmalloc(m.nnz, sizeof(float));
    m.x = xmalloc(m.n, sizeof(float));
    m.y = xmalloc(m.n, sizeof(float));
    memset(lanes, 0, sizeof lanes);
    for (d = 0; d < o.devices; d++) {
        lanes[d].dev = ids[d];
        lanes[d].first = m.n * d / o.devices;
        lanes[d].count = m.n * (d + 1) / o.devices - lanes[d].first;
        lane_open(&lanes[d], &m);
    }

    for (it = 0; it < o.iters; it++) {
        double t0;
        make_values(o.seed, it, &m);
        t0 = now_ms();
        for (d = 0; d < o.devices; d++)
            lane_enqueue(&lanes[d], &m);
        for (d = 0; d < o.devices; d++)
            CHECK("clFinish", clFinish(lanes[d].queue));
        ms += now_ms() - t0;
        verify(&m);
    }

    for (d = 0; d < o.devices; d++)
        lane_close(&lanes[d]);
    free(m.row_ptr);
    free(m.col);
    free(m.val);
    free(m.x);
    free(m.y);
    if (!o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n",
               o.size, o.iters, names, ms);
    return 0;
}
