/* threads.c — several application threads issue OpenCL calls at once, on a
 * shared in-order queue and on a private queue each, for
 * tests/e2e/record_threads.sh:
 *   - one context, one program and the shared queue, made by the main thread;
 *   - per thread: a private queue and its own kernel (clSetKernelArg is not
 *     thread-safe on one kernel object), then per step: two buffers, a
 *     blocking or non-blocking write, the kernel on the private queue and
 *     a blocking read, the kernel again on the shared queue with a
 *     non-blocking read waited by clWaitForEvents or clFinish, flushes;
 *   - events cross threads: each thread hands the event of its shared-queue
 *     kernel to the next thread, which waits on it and releases it;
 *   - before the threads start, the main thread reads a buffer with a
 *     non-blocking read, waits for it, and overwrites the memory at once,
 *     while ten kernels on the shared queue still wait for a user event
 *     (regression: the recorder captured such a read-back only after the
 *     application had reused the memory, when more than eight commands it
 *     tracks were still incomplete).
 * Every result is checked (exit 1 when one is wrong). The kernel's scalar
 * argument is TAG(thread, step), so a trace shows whose call it holds and in
 * which order. Prints the number of calls per thread and function; with
 * --log FILE, writes every thread's calls in program order, one line each:
 *   T fn fn fn ...   (T = main, or the thread number)
 * and with --times FILE, CLOCK_MONOTONIC read just before and just after
 * each of those calls, in the same order (a recorded call's host times
 * must lie between them):
 *   T before after before after ...
 * --pace-us N sleeps N microseconds after each thread's step, so that a run
 * spans many of the recorder's clock calibrations (every 10 ms).
 * Usage: threads [--threads N] [--iters M] [--size ELEMS] [--log FILE]
 *                [--times FILE] [--pace-us N] */
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG(t, s) ((t) * 100000 + (s))
#define MAX_THREADS 64

enum { F_GetPlatformIDs, F_GetDeviceIDs, F_CreateContext, F_CreateCommandQueueWithProperties,
       F_CreateProgramWithSource, F_BuildProgram, F_CreateKernel, F_CreateBuffer,
       F_EnqueueWriteBuffer, F_SetKernelArg, F_EnqueueNDRangeKernel, F_EnqueueReadBuffer,
       F_WaitForEvents, F_Finish, F_Flush, F_ReleaseEvent, F_ReleaseMemObject, F_ReleaseKernel,
       F_ReleaseCommandQueue, F_ReleaseProgram, F_ReleaseContext, F_CreateUserEvent,
       F_SetUserEventStatus, F_COUNT };
static const char *const fn_names[F_COUNT] = {
    "clGetPlatformIDs", "clGetDeviceIDs", "clCreateContext", "clCreateCommandQueueWithProperties",
    "clCreateProgramWithSource", "clBuildProgram", "clCreateKernel", "clCreateBuffer",
    "clEnqueueWriteBuffer", "clSetKernelArg", "clEnqueueNDRangeKernel", "clEnqueueReadBuffer",
    "clWaitForEvents", "clFinish", "clFlush", "clReleaseEvent", "clReleaseMemObject",
    "clReleaseKernel", "clReleaseCommandQueue", "clReleaseProgram", "clReleaseContext",
    "clCreateUserEvent", "clSetUserEventStatus"};

/* One thread's log of the calls it made, in order. */
typedef struct calls {
    unsigned count[F_COUNT];
    unsigned char *seq;
    long long *t;                /* before and after each call: 2 per call */
    size_t n, cap;
} calls;

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void note(calls *c, int f)
{
    c->count[f]++;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->seq = realloc(c->seq, c->cap);
        c->t = realloc(c->t, c->cap * 2 * sizeof *c->t);
        if (!c->seq || !c->t) {
            fprintf(stderr, "threads: out of memory\n");
            exit(2);
        }
    }
    c->seq[c->n] = (unsigned char)f;
    c->t[2 * c->n] = mono_ns();
    c->n++;
}

static void noted(calls *c)
{
    c->t[2 * c->n - 1] = mono_ns();
}

/* CL(log, Fn, args): counts the call, then makes it; exits on failure. */
#define CL(log, f, ...) do { note((log), F_##f); cl_int e_ = cl##f(__VA_ARGS__); noted(log); \
    if (e_ != CL_SUCCESS) { fprintf(stderr, "threads: cl%s failed: %d\n", #f, e_); exit(2); } \
    } while (0)
/* CLH(log, var, Fn, args): the same for calls returning an object. */
#define CLH(log, var, f, ...) do { note((log), F_##f); cl_int e_ = 0; (var) = cl##f(__VA_ARGS__, &e_); \
    noted(log); if (e_ != CL_SUCCESS) { fprintf(stderr, "threads: cl%s failed: %d\n", #f, e_); exit(2); } \
    } while (0)

static const char *src =
    "__kernel void scale(__global const int *a, __global int *b, int tag)\n"
    "{ size_t i = get_global_id(0); b[i] = a[i] * 2 + tag; }\n";

static cl_context ctx;
static cl_device_id dev;
static cl_program prog;
static cl_command_queue shared_q;
static int nthreads = 4, iters = 20, pace_us = 0;
static size_t base_elems = 1024;

/* Event hand-over: slot[t] holds the last event thread t offered. */
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static cl_event slot[MAX_THREADS];

typedef struct worker {
    int t;
    calls log;
    int wrong;
    pthread_t th;
} worker;

static int check(const int *a, const int *b, size_t n, int tag)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != a[i] * 2 + tag)
            return 1;
    return 0;
}

static void step(worker *w, cl_command_queue q, cl_kernel k, int s)
{
    calls *L = &w->log;
    int t = w->t;
    /* a size per thread and step: buffers of different threads differ */
    size_t n = base_elems + (size_t)((t * 7 + s) % 13) * 16, bytes = n * sizeof(int);
    int *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    if (!a || !b || !c) {
        fprintf(stderr, "threads: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < n; i++)
        a[i] = (int)(i * 3) + t * 1000 + s;
    cl_mem ba, bb;
    CLH(L, ba, CreateBuffer, ctx, CL_MEM_READ_ONLY, bytes, NULL);
    CLH(L, bb, CreateBuffer, ctx, CL_MEM_READ_WRITE, bytes, NULL);
    int tag = TAG(t, s);
    cl_event wev = NULL;
    if (s % 2 == 0) {
        CL(L, EnqueueWriteBuffer, q, ba, CL_TRUE, 0, bytes, a, 0, NULL, NULL);
    } else {
        CL(L, EnqueueWriteBuffer, q, ba, CL_FALSE, 0, bytes, a, 0, NULL, &wev);
    }
    CL(L, SetKernelArg, k, 0, sizeof ba, &ba);
    CL(L, SetKernelArg, k, 1, sizeof bb, &bb);
    CL(L, SetKernelArg, k, 2, sizeof tag, &tag);
    size_t gws = n;
    CL(L, EnqueueNDRangeKernel, q, k, 1, NULL, &gws, NULL, wev ? 1 : 0, wev ? &wev : NULL, NULL);
    CL(L, EnqueueReadBuffer, q, bb, CL_TRUE, 0, bytes, b, 0, NULL, NULL);
    if (wev)
        CL(L, ReleaseEvent, wev);
    w->wrong += check(a, b, n, tag);

    /* the same on the shared queue, with another tag; the private queue
     * is done with the buffers (its read was blocking) */
    tag = -TAG(t, s) - 1;
    CL(L, SetKernelArg, k, 2, sizeof tag, &tag);
    cl_event kev, rev;
    CL(L, EnqueueNDRangeKernel, shared_q, k, 1, NULL, &gws, NULL, 0, NULL, &kev);
    CL(L, EnqueueReadBuffer, shared_q, bb, CL_FALSE, 0, bytes, c, 1, &kev, &rev);
    if (s % 3 == 0)
        CL(L, Flush, shared_q);
    if (s % 2 == 0)
        CL(L, WaitForEvents, 1, &rev);
    else
        CL(L, Finish, shared_q);
    CL(L, ReleaseEvent, rev);
    w->wrong += check(a, c, n, tag);

    /* offer kev to the next thread; wait on what the previous one offered */
    cl_event old, theirs;
    pthread_mutex_lock(&slot_mu);
    old = slot[t];
    slot[t] = kev;
    theirs = slot[(t + nthreads - 1) % nthreads];
    slot[(t + nthreads - 1) % nthreads] = NULL;
    if (theirs == kev)   /* one thread: it takes its own */
        slot[t] = NULL;
    pthread_mutex_unlock(&slot_mu);
    if (old)
        CL(L, ReleaseEvent, old);
    if (theirs) {
        CL(L, WaitForEvents, 1, &theirs);
        CL(L, ReleaseEvent, theirs);
    }
    if (s % 5 == 4)
        CL(L, Flush, q);
    CL(L, ReleaseMemObject, ba);
    CL(L, ReleaseMemObject, bb);
    free(a);
    free(b);
    free(c);
}

/* A non-blocking read completes while ten kernels on the shared queue still
 * wait for a user event; the memory is overwritten as soon as the wait
 * returns. @return 1 when the read was wrong. */
static int pending_read(calls *L)
{
    enum { N = 4096, PENDING = 10 };
    static int a[N], b[N], got[N];
    for (int i = 0; i < N; i++)
        a[i] = i * 7 + 1;
    cl_command_queue side;
    cl_kernel k;
    cl_mem ba, bb;
    cl_event uev, rev;
    CLH(L, side, CreateCommandQueueWithProperties, ctx, dev, NULL);
    CLH(L, k, CreateKernel, prog, "scale");
    CLH(L, ba, CreateBuffer, ctx, CL_MEM_READ_WRITE, sizeof a, NULL);
    CLH(L, bb, CreateBuffer, ctx, CL_MEM_READ_WRITE, sizeof a, NULL);
    CLH(L, uev, CreateUserEvent, ctx);
    int tag = 5;
    CL(L, SetKernelArg, k, 0, sizeof ba, &ba);
    CL(L, SetKernelArg, k, 1, sizeof bb, &bb);
    CL(L, SetKernelArg, k, 2, sizeof tag, &tag);
    size_t gws = N;
    for (int i = 0; i < PENDING; i++)
        CL(L, EnqueueNDRangeKernel, shared_q, k, 1, NULL, &gws, NULL, 1, &uev, NULL);
    CL(L, EnqueueWriteBuffer, side, ba, CL_TRUE, 0, sizeof a, a, 0, NULL, NULL);
    CL(L, EnqueueReadBuffer, side, ba, CL_FALSE, 0, sizeof a, b, 0, NULL, &rev);
    CL(L, WaitForEvents, 1, &rev);
    memcpy(got, b, sizeof b);
    memset(b, 0xab, sizeof b);   /* the application reuses its memory at once */
    CL(L, SetUserEventStatus, uev, CL_COMPLETE);
    CL(L, Finish, shared_q);
    CL(L, ReleaseEvent, rev);
    CL(L, ReleaseEvent, uev);
    CL(L, ReleaseMemObject, ba);
    CL(L, ReleaseMemObject, bb);
    CL(L, ReleaseKernel, k);
    CL(L, ReleaseCommandQueue, side);
    return memcmp(got, a, sizeof a) != 0;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    cl_command_queue q;
    cl_kernel k;
    CLH(&w->log, q, CreateCommandQueueWithProperties, ctx, dev, NULL);
    CLH(&w->log, k, CreateKernel, prog, "scale");
    for (int s = 0; s < iters; s++) {
        step(w, q, k, s);
        if (pace_us) {
            struct timespec d = {pace_us / 1000000, (long)(pace_us % 1000000) * 1000};
            nanosleep(&d, NULL);
        }
    }
    CL(&w->log, Finish, q);
    CL(&w->log, ReleaseKernel, k);
    CL(&w->log, ReleaseCommandQueue, q);
    return NULL;
}

static void print_log(FILE *f, const char *who, const calls *c)
{
    fprintf(f, "%s", who);
    for (size_t i = 0; i < c->n; i++)
        fprintf(f, " %s", fn_names[c->seq[i]]);
    fputc('\n', f);
}

static void print_times(FILE *f, const char *who, const calls *c)
{
    fprintf(f, "%s", who);
    for (size_t i = 0; i < 2 * c->n; i++)
        fprintf(f, " %lld", c->t[i]);
    fputc('\n', f);
}

/* Writes @p print's line for the main thread, then for each worker, to
 * @p path. @return 0, or 1 when the file cannot be written. */
static int write_threads(const char *path, void (*print)(FILE *, const char *, const calls *),
                         const calls *main_log, const worker *ws)
{
    char who[16];
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    print(f, "main", main_log);
    for (int t = 0; t < nthreads; t++) {
        snprintf(who, sizeof who, "%d", t);
        print(f, who, &ws[t].log);
    }
    return fclose(f) != 0;
}

static void print_counts(const char *who, const calls *c)
{
    for (int f = 0; f < F_COUNT; f++)
        if (c->count[f])
            printf("calls %s %s %u\n", who, fn_names[f], c->count[f]);
}

int main(int argc, char **argv)
{
    const char *log_path = NULL, *times_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            base_elems = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--log") && i + 1 < argc)
            log_path = argv[++i];
        else if (!strcmp(argv[i], "--times") && i + 1 < argc)
            times_path = argv[++i];
        else if (!strcmp(argv[i], "--pace-us") && i + 1 < argc)
            pace_us = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: threads [--threads N] [--iters M] [--size ELEMS] [--log FILE] "
                    "[--times FILE] [--pace-us N]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > MAX_THREADS || iters < 1 || base_elems < 1 || pace_us < 0) {
        fprintf(stderr, "threads: 1..%d threads, at least one step and one element\n", MAX_THREADS);
        return 2;
    }
    calls main_log = {{0}, NULL, NULL, 0, 0};
    cl_platform_id plat;
    CL(&main_log, GetPlatformIDs, 1, &plat, NULL);
    CL(&main_log, GetDeviceIDs, plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    CLH(&main_log, ctx, CreateContext, NULL, 1, &dev, NULL, NULL);
    CLH(&main_log, shared_q, CreateCommandQueueWithProperties, ctx, dev, NULL);
    CLH(&main_log, prog, CreateProgramWithSource, ctx, 1, &src, NULL);
    CL(&main_log, BuildProgram, prog, 1, &dev, "", NULL, NULL);
    int wrong = pending_read(&main_log);

    worker *ws = calloc((size_t)nthreads, sizeof *ws);
    if (!ws)
        return 2;
    for (int t = 0; t < nthreads; t++) {
        ws[t].t = t;
        if (pthread_create(&ws[t].th, NULL, worker_main, &ws[t]) != 0) {
            fprintf(stderr, "threads: pthread_create failed\n");
            return 2;
        }
    }
    for (int t = 0; t < nthreads; t++) {
        pthread_join(ws[t].th, NULL);
        wrong += ws[t].wrong;
    }
    for (int t = 0; t < nthreads; t++)
        if (slot[t])
            CL(&main_log, ReleaseEvent, slot[t]);
    CL(&main_log, Finish, shared_q);
    CL(&main_log, ReleaseCommandQueue, shared_q);
    CL(&main_log, ReleaseProgram, prog);
    CL(&main_log, ReleaseContext, ctx);

    printf("threads=%d iters=%d wrong=%d\n", nthreads, iters, wrong);
    print_counts("main", &main_log);
    char who[16];
    for (int t = 0; t < nthreads; t++) {
        snprintf(who, sizeof who, "%d", t);
        print_counts(who, &ws[t].log);
    }
    if ((log_path && write_threads(log_path, print_log, &main_log, ws)) ||
        (times_path && write_threads(times_path, print_times, &main_log, ws)))
        return 2;
    for (int t = 0; t < nthreads; t++) {
        free(ws[t].log.seq);
        free(ws[t].log.t);
    }
    free(ws);
    free(main_log.seq);
    free(main_log.t);
    return wrong ? 1 : 0;
}
