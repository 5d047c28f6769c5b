/* xfer.c — how fast can a layer move an application's pageable bytes?
 *
 * Measures, on one device, the ways a write (host -> device) and a read
 * (device -> host) of B bytes from/to ordinary malloc'd memory can be done:
 *
 *   pageable      clEnqueueWrite/ReadBuffer straight from the malloc'd block
 *   pinned        the same from a CL_MEM_ALLOC_HOST_PTR buffer's mapping (the
 *                 bytes already there: the ceiling)
 *   staged        memcpy into such a pinned block, then transfer from it
 *   staged-pipe   the same in C pieces, two pinned blocks, the memcpy of
 *                 piece k+1 running while piece k transfers
 *   duplex        a pageable write on one queue and a pageable read on a
 *                 second, at once
 *   fresh         pageable, from and to a block calloc'ed and filled just
 *                 before each transfer and freed after it (what a replay's
 *                 per-call data does); only the transfer is timed
 *
 * Usage: xfer [MiB [reps]] (CLRR_APP_DEVICE=gpu: on the first GPU). Prints
 * one Markdown table of medians (GB/s). */
#include <CL/cl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "xfer: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct ctx {
    cl_context c;
    cl_command_queue q, q2;
    cl_mem dev, dev2, pin[2];
    void *pin_p[2];
    unsigned char *host, *host2;
    size_t bytes;
};

static void write_pageable(struct ctx *x)
{
    CHECK(clEnqueueWriteBuffer(x->q, x->dev, CL_FALSE, 0, x->bytes, x->host, 0, NULL, NULL));
    CHECK(clFinish(x->q));
}

static void read_pageable(struct ctx *x)
{
    CHECK(clEnqueueReadBuffer(x->q, x->dev, CL_FALSE, 0, x->bytes, x->host, 0, NULL, NULL));
    CHECK(clFinish(x->q));
}

/* GB/s of a transfer from (or, @p read, to) a block calloc'ed and filled
 * just before it and freed after it; the transfer alone timed. */
static double fresh(struct ctx *x, int read, int reps)
{
    double t[64];
    if (reps > 64)
        reps = 64;
    for (int r = 0; r < reps; r++) {
        unsigned char *p = calloc(1, x->bytes);
        if (!p)
            exit(2);
        memcpy(p, x->host, x->bytes);
        double t0 = now_s();
        if (read)
            CHECK(clEnqueueReadBuffer(x->q, x->dev, CL_FALSE, 0, x->bytes, p, 0, NULL, NULL));
        else
            CHECK(clEnqueueWriteBuffer(x->q, x->dev, CL_FALSE, 0, x->bytes, p, 0, NULL, NULL));
        CHECK(clFinish(x->q));
        t[r] = (double)x->bytes / (now_s() - t0) / 1e9;
        free(p);
    }
    return median(t, reps);
}

static void write_pinned(struct ctx *x)
{
    CHECK(clEnqueueWriteBuffer(x->q, x->dev, CL_FALSE, 0, x->bytes, x->pin_p[0], 0, NULL, NULL));
    CHECK(clFinish(x->q));
}

static void read_pinned(struct ctx *x)
{
    CHECK(clEnqueueReadBuffer(x->q, x->dev, CL_FALSE, 0, x->bytes, x->pin_p[0], 0, NULL, NULL));
    CHECK(clFinish(x->q));
}

static void write_staged(struct ctx *x)
{
    memcpy(x->pin_p[0], x->host, x->bytes);
    CHECK(clEnqueueWriteBuffer(x->q, x->dev, CL_FALSE, 0, x->bytes, x->pin_p[0], 0, NULL, NULL));
    CHECK(clFinish(x->q));
}

static void read_staged(struct ctx *x)
{
    CHECK(clEnqueueReadBuffer(x->q, x->dev, CL_TRUE, 0, x->bytes, x->pin_p[0], 0, NULL, NULL));
    memcpy(x->host, x->pin_p[0], x->bytes);
}

static size_t g_pieces = 8;

static void write_pipe(struct ctx *x)
{
    size_t piece = (x->bytes + g_pieces - 1) / g_pieces;
    cl_event ev[2] = {NULL, NULL};
    for (size_t k = 0, off = 0; off < x->bytes; k++, off += piece) {
        size_t n = x->bytes - off < piece ? x->bytes - off : piece;
        int s = (int)(k & 1);
        if (ev[s]) { /* the block is free once its last transfer is done */
            CHECK(clWaitForEvents(1, &ev[s]));
            clReleaseEvent(ev[s]);
        }
        memcpy((unsigned char *)x->pin_p[s], x->host + off, n);
        CHECK(clEnqueueWriteBuffer(x->q, x->dev, CL_FALSE, off, n, x->pin_p[s], 0, NULL, &ev[s]));
        clFlush(x->q);
    }
    CHECK(clFinish(x->q));
    for (int s = 0; s < 2; s++)
        if (ev[s])
            clReleaseEvent(ev[s]);
}

static void read_pipe(struct ctx *x)
{
    size_t piece = (x->bytes + g_pieces - 1) / g_pieces, count = (x->bytes + piece - 1) / piece;
    cl_event ev[2] = {NULL, NULL};
    size_t off_of[2] = {0, 0}, n_of[2] = {0, 0};
    for (size_t k = 0; k <= count; k++) {
        if (k < count) {
            int s = (int)(k & 1);
            size_t off = k * piece, n = x->bytes - off < piece ? x->bytes - off : piece;
            CHECK(clEnqueueReadBuffer(x->q, x->dev, CL_FALSE, off, n, x->pin_p[s], 0, NULL,
                                      &ev[s]));
            clFlush(x->q);
            off_of[s] = off, n_of[s] = n;
        }
        if (k > 0) {
            int s = (int)((k - 1) & 1);
            CHECK(clWaitForEvents(1, &ev[s]));
            clReleaseEvent(ev[s]);
            ev[s] = NULL;
            memcpy(x->host + off_of[s], x->pin_p[s], n_of[s]);
        }
    }
}

static void duplex(struct ctx *x)
{
    CHECK(clEnqueueWriteBuffer(x->q, x->dev, CL_FALSE, 0, x->bytes, x->host, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(x->q2, x->dev2, CL_FALSE, 0, x->bytes, x->host2, 0, NULL, NULL));
    clFlush(x->q);
    clFlush(x->q2);
    CHECK(clFinish(x->q));
    CHECK(clFinish(x->q2));
}

static void host_memcpy(struct ctx *x)
{
    memcpy(x->host2, x->host, x->bytes);
}

/* A pool of T threads that copy one block in T slices (a barrier per job). */
static struct pool {
    pthread_barrier_t go, done;
    unsigned t;
    unsigned char *dst;
    const unsigned char *src;
    size_t n;
    int quit;
    pthread_t th[16];
} g_pool;

static void pool_slice(unsigned i)
{
    size_t per = (g_pool.n / g_pool.t + 63) & ~(size_t)63, off = per * i;
    if (off < g_pool.n)
        memcpy(g_pool.dst + off, g_pool.src + off, g_pool.n - off < per ? g_pool.n - off : per);
}

static void *pool_main(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&g_pool.go);
        if (g_pool.quit)
            return NULL;
        pool_slice(i);
        pthread_barrier_wait(&g_pool.done);
    }
}

static void pool_copy(void *dst, const void *src, size_t n)
{
    g_pool.dst = dst, g_pool.src = src, g_pool.n = n;
    pthread_barrier_wait(&g_pool.go);
    pool_slice(0);
    pthread_barrier_wait(&g_pool.done);
}

static void pool_start(unsigned t)
{
    g_pool.t = t;
    pthread_barrier_init(&g_pool.go, NULL, t);
    pthread_barrier_init(&g_pool.done, NULL, t);
    for (unsigned i = 1; i < t; i++)
        pthread_create(&g_pool.th[i], NULL, pool_main, (void *)(uintptr_t)i);
}

static void pool_stop(void)
{
    g_pool.quit = 1;
    pthread_barrier_wait(&g_pool.go);
    for (unsigned i = 1; i < g_pool.t; i++)
        pthread_join(g_pool.th[i], NULL);
    pthread_barrier_destroy(&g_pool.go);
    pthread_barrier_destroy(&g_pool.done);
    g_pool.quit = 0;
}

static void write_mt(struct ctx *x)
{
    pool_copy(x->pin_p[0], x->host, x->bytes);
    CHECK(clEnqueueWriteBuffer(x->q, x->dev, CL_FALSE, 0, x->bytes, x->pin_p[0], 0, NULL, NULL));
    CHECK(clFinish(x->q));
}

static void read_mt(struct ctx *x)
{
    CHECK(clEnqueueReadBuffer(x->q, x->dev, CL_TRUE, 0, x->bytes, x->pin_p[0], 0, NULL, NULL));
    pool_copy(x->host, x->pin_p[0], x->bytes);
}

static void memcpy_mt(struct ctx *x)
{
    pool_copy(x->host2, x->host, x->bytes);
}

static double run(struct ctx *x, void (*f)(struct ctx *), int reps, double bytes)
{
    double t[64];
    f(x); /* warm */
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        f(x);
        t[r] = now_s() - t0;
    }
    return bytes / median(t, reps) / 1e9;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 4;
    int reps = argc > 2 ? atoi(argv[2]) : 15;
    if (mib < 1 || mib > 4096 || reps < 1 || reps > 64) {
        fprintf(stderr, "usage: xfer [MiB 1..4096 [reps 1..64]]\n");
        return 2;
    }
    cl_platform_id plats[8];
    cl_device_id dev = NULL;
    cl_uint np = 0;
    cl_int err;
    CHECK(clGetPlatformIDs(8, plats, &np));
    /* the first device, or with CLRR_APP_DEVICE=gpu the first GPU of any platform */
    const char *want = getenv("CLRR_APP_DEVICE");
    int gpu = want && !strcmp(want, "gpu");
    for (cl_uint i = 0; i < np && i < 8 && !dev; i++)
        if (clGetDeviceIDs(plats[i], gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
            dev = NULL;
    if (!dev) {
        fprintf(stderr, "xfer: no %sdevice\n", gpu ? "GPU " : "");
        return 2;
    }
    char name[256] = "";
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    struct ctx x = {.bytes = mib << 20};
    x.c = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    x.q = clCreateCommandQueueWithProperties(x.c, dev, NULL, &err);
    CHECK(err);
    x.q2 = clCreateCommandQueueWithProperties(x.c, dev, NULL, &err);
    CHECK(err);
    x.dev = clCreateBuffer(x.c, CL_MEM_READ_WRITE, x.bytes, NULL, &err);
    CHECK(err);
    x.dev2 = clCreateBuffer(x.c, CL_MEM_READ_WRITE, x.bytes, NULL, &err);
    CHECK(err);
    for (int s = 0; s < 2; s++) {
        x.pin[s] = clCreateBuffer(x.c, CL_MEM_ALLOC_HOST_PTR, x.bytes, NULL, &err);
        CHECK(err);
        x.pin_p[s] = clEnqueueMapBuffer(x.q, x.pin[s], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                        x.bytes, 0, NULL, NULL, &err);
        CHECK(err);
    }
    x.host = malloc(x.bytes);
    x.host2 = malloc(x.bytes);
    if (!x.host || !x.host2)
        return 2;
    for (size_t i = 0; i < x.bytes; i++)
        x.host[i] = (unsigned char)(i * 131u), x.host2[i] = 0;
    double b = (double)x.bytes;
    printf("xfer: %s, %zu MiB, median of %d\n\n", name, mib, reps);
    printf("| path | write GB/s | read GB/s |\n|---|---:|---:|\n");
    printf("| pageable | %.2f | %.2f |\n", run(&x, write_pageable, reps, b),
           run(&x, read_pageable, reps, b));
    printf("| fresh | %.2f | %.2f |\n", fresh(&x, 0, reps), fresh(&x, 1, reps));
    printf("| pinned (ceiling) | %.2f | %.2f |\n", run(&x, write_pinned, reps, b),
           run(&x, read_pinned, reps, b));
    printf("| staged (memcpy + pinned) | %.2f | %.2f |\n", run(&x, write_staged, reps, b),
           run(&x, read_staged, reps, b));
    size_t pieces[] = {4, 8, 16};
    for (int i = 0; i < 3; i++) {
        g_pieces = pieces[i];
        printf("| staged-pipe x%zu | %.2f | %.2f |\n", g_pieces, run(&x, write_pipe, reps, b),
               run(&x, read_pipe, reps, b));
    }
    unsigned threads[] = {2, 4, 8};
    for (int i = 0; i < 3; i++) {
        pool_start(threads[i]);
        printf("| staged, %u threads | %.2f | %.2f |\n", threads[i], run(&x, write_mt, reps, b),
               run(&x, read_mt, reps, b));
        printf("| host memcpy, %u threads | %.2f | |\n", threads[i], run(&x, memcpy_mt, reps, b));
        pool_stop();
    }
    printf("| duplex (write+read, both bytes) | %.2f | |\n", run(&x, duplex, reps, 2 * b));
    printf("| host memcpy | %.2f | |\n", run(&x, host_memcpy, reps, b));
    memset(x.host2, 0, x.bytes);
    pool_start(4);
    write_mt(&x);
    pool_stop();
    read_pageable(&x);
    CHECK(clEnqueueReadBuffer(x.q, x.dev, CL_TRUE, 0, x.bytes, x.host2, 0, NULL, NULL));
    if (memcmp(x.host, x.host2, x.bytes) != 0)
        fprintf(stderr, "xfer: staged write + read differ\n");
    return 0;
}
