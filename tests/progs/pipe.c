/* pipe.c — blocking reads around the size the recorder issues in pieces
 * (recorder/rec_data.c rec_read_pipe), for tests/e2e/record_pipeline.sh.
 *
 *   pipe SEED main|threads|host
 *
 * A kernel fills a buffer of 72 MiB + 8 with pseudo-random words from
 * SEED; every read below is blocking, into fresh host memory, and is
 * compared at once with what the host computes (so a read that returned
 * before all its bytes were there fails).
 *   main: 16 MiB from offset 0; the last 9 MiB + 7 bytes (offset > 0, an
 *     odd size); exactly 8 MiB; 8 MiB - 1; the whole 72 MiB (more than
 *     16 pieces of 4 MiB, more than one capture window); the first 16 MiB
 *     again (a blob stored already); 12 MiB with an event the program
 *     asks for; 12 MiB on an out-of-order queue ("ooo: none" when the
 *     device has none). Pipelined by the recorder (pipeline on): 5 reads.
 *   threads: 12 MiB whose wait list holds a user event that another
 *     thread sets 150 ms later (the read must not return before: checked
 *     with a flag the setter raises before setting it); then two threads
 *     reading 12 MiB each from the same in-order queue at once. Pipelined:
 *     3 reads.
 *   host: the parts of the buffer read written by the host (blocking
 *     writes of the same words: runs on the stub driver, which runs no
 *     kernel), then 16 MiB
 *     from offset 0 and the last 9 MiB + 7 bytes. Pipelined: 2 reads.
 * Prints a line per read (size, offset, a fold of its words) and the
 * device's name. Exit 0 unless a call fails or a value is wrong. */
#include <CL/cl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "pipe: %s failed: %d\n", #x, e_); exit(2); } } while (0)

#define MIB ((size_t)1 << 20)
#define NBUF (72 * MIB + 8)

static const char src[] =
    "__kernel void gen(__global uint *a, uint seed) {\n"
    "    uint i = get_global_id(0), x = i * 2654435761u ^ seed;\n"
    "    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;\n"
    "    a[i] = x;\n"
    "}\n";

static uint32_t seed;
static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;
static cl_mem buf;

static uint32_t word(uint32_t i)
{
    uint32_t x = i * 2654435761u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static uint8_t *xalloc(size_t n)
{
    uint8_t *p = malloc(n);
    if (!p) {
        fprintf(stderr, "pipe: out of memory\n");
        exit(2);
    }
    return p;
}

/* The bytes [off, off + n) of the buffer as the kernel wrote them
 * (little-endian words), compared with @p got. @return a fold of them. */
static uint32_t verify(const char *what, const uint8_t *got, size_t off, size_t n)
{
    uint32_t fold = 0;
    for (size_t b = 0; b < n; b++) {
        size_t at = off + b;
        uint8_t want = (uint8_t)(word((uint32_t)(at / 4)) >> (8 * (at % 4)));
        if (got[b] != want) {
            fprintf(stderr, "pipe: %s: byte %zu of the read (offset %zu) is %02x, not %02x\n", what, b, off,
                    got[b], want);
            exit(1);
        }
        fold = fold * 31u + got[b];
    }
    return fold;
}

static void rd(const char *what, cl_command_queue qq, size_t off, size_t n, cl_uint nw, const cl_event *wl,
               cl_event *ev)
{
    uint8_t *p = xalloc(n);
    memset(p, 0xa5, n);
    CHECK(clEnqueueReadBuffer(qq, buf, CL_TRUE, off, n, p, nw, wl, ev));
    printf("%s: %zu bytes at %zu, fold %08x\n", what, n, off, verify(what, p, off, n));
    free(p);
}

static cl_event uev;
static atomic_int uev_set;

static void *setter(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 150 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store(&uev_set, 1);
    CHECK(clSetUserEventStatus(uev, CL_COMPLETE));
    return NULL;
}

static uint32_t folds[2];   /* the readers', printed once both are done */

static void *reader(void *arg)
{
    size_t off = (size_t)(uintptr_t)arg;
    uint8_t *p = xalloc(12 * MIB);
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, off, 12 * MIB, p, 0, NULL, NULL));
    folds[off != 0] = verify(off ? "thread b" : "thread a", p, off, 12 * MIB);
    free(p);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "main") && strcmp(argv[2], "threads") && strcmp(argv[2], "host"))) {
        fprintf(stderr, "usage: pipe SEED main|threads|host\n");
        return 2;
    }
    seed = (uint32_t)strtoul(argv[1], NULL, 10);
    cl_platform_id plat;
    cl_int err;
    char name[256] = "";
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    const char *s = src;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "gen", &err);
    CHECK(err);
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, NBUF, NULL, &err);
    CHECK(err);
    size_t g = NBUF / 4;
    if (!strcmp(argv[2], "host")) {
        size_t nh = 16 * MIB, tail = NBUF - 12 * MIB;   /* the parts read below */
        uint32_t *h = (uint32_t *)xalloc(nh);
        for (size_t i = 0; i < nh / 4; i++)
            h[i] = word((uint32_t)i);   /* (little-endian hosts: the bytes verify() expects) */
        CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, nh, h, 0, NULL, NULL));
        for (size_t i = 0; i < 12 * MIB / 4; i++)
            h[i] = word((uint32_t)(tail / 4 + i));
        CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, tail, 12 * MIB, h, 0, NULL, NULL));
        free(h);
        rd("16 MiB", q, 0, 16 * MIB, 0, NULL, NULL);
        rd("last bytes", q, NBUF - (9 * MIB + 7), 9 * MIB + 7, 0, NULL, NULL);
        CHECK(clFinish(q));
        printf("pipe: device %s ok\n", name);
        return 0;
    }
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(k, 1, sizeof seed, &seed));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));

    if (!strcmp(argv[2], "main")) {
        rd("16 MiB", q, 0, 16 * MIB, 0, NULL, NULL);
        rd("last bytes", q, NBUF - (9 * MIB + 7), 9 * MIB + 7, 0, NULL, NULL);
        rd("8 MiB", q, 4 * MIB + 4, 8 * MIB, 0, NULL, NULL);
        rd("8 MiB - 1", q, 3, 8 * MIB - 1, 0, NULL, NULL);
        rd("all", q, 0, NBUF, 0, NULL, NULL);
        rd("16 MiB again", q, 0, 16 * MIB, 0, NULL, NULL);
        cl_event ev;
        rd("with event", q, 20 * MIB, 12 * MIB, 0, NULL, &ev);
        cl_int st;
        CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        if (st != CL_COMPLETE) {
            fprintf(stderr, "pipe: with event: status %d after a blocking read\n", st);
            return 1;
        }
        CHECK(clReleaseEvent(ev));
        cl_command_queue_properties qp = 0;
        cl_command_queue qo = NULL;
        if (clGetDeviceInfo(dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof qp, &qp, NULL) == CL_SUCCESS &&
            (qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
            qo = clCreateCommandQueue(ctx, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
        if (qo) {
            CHECK(clFinish(q));
            rd("out of order", qo, 40 * MIB, 12 * MIB, 0, NULL, NULL);
            CHECK(clReleaseCommandQueue(qo));
        } else {
            printf("ooo: none\n");
        }
    } else {
        pthread_t th, ta, tb;
        uev = clCreateUserEvent(ctx, &err);
        CHECK(err);
        if (pthread_create(&th, NULL, setter, NULL)) {
            fprintf(stderr, "pipe: no thread\n");
            return 2;
        }
        rd("user event", q, 8 * MIB, 12 * MIB, 1, &uev, NULL);
        if (!atomic_load(&uev_set)) {
            fprintf(stderr, "pipe: the read waiting for the user event returned before it was set\n");
            return 1;
        }
        pthread_join(th, NULL);
        CHECK(clReleaseEvent(uev));
        if (pthread_create(&ta, NULL, reader, (void *)(uintptr_t)0) ||
            pthread_create(&tb, NULL, reader, (void *)(uintptr_t)(30 * MIB))) {
            fprintf(stderr, "pipe: no thread\n");
            return 2;
        }
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        printf("threads: folds %08x %08x\n", folds[0], folds[1]);
    }
    CHECK(clFinish(q));
    printf("pipe: device %s ok\n", name);
    return 0;
}
