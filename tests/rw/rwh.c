/* rwh.c — the device half shared by the rewriter tests' helpers
 * (tests/rw/rwh.h). */
#include "tests/rw/rwh.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RWH_MAX_WORDS 256

static cl_device_id rwh_dev;
static cl_context rwh_ctx;
static cl_command_queue rwh_q;

int rwh_fail(const char *name, const char *what, cl_int e)
{
    fprintf(stderr, "%s: %s: %d\n", name, what, e);
    return 3;
}

int rwh_device(const char *name, cl_device_id *dev, cl_context *ctx, cl_command_queue *q)
{
    cl_platform_id plats[8];
    cl_uint np = 0, p, nd;
    cl_int e;

    if (rwh_q == NULL) {
        if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || np == 0)
            return rwh_fail(name, "clGetPlatformIDs", CL_INVALID_PLATFORM);
        for (p = 0; p < np && p < 8; p++)
            if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 1, &rwh_dev, &nd) == CL_SUCCESS)
                break;
        if (p == np || p == 8)
            return rwh_fail(name, "clGetDeviceIDs", CL_DEVICE_NOT_FOUND);
        if (rwh_ctx == NULL && (rwh_ctx = clCreateContext(NULL, 1, &rwh_dev, NULL, NULL, &e)) == NULL)
            return rwh_fail(name, "clCreateContext", e);
        if ((rwh_q = clCreateCommandQueue(rwh_ctx, rwh_dev, 0, &e)) == NULL)
            return rwh_fail(name, "clCreateCommandQueue", e);
    }
    *dev = rwh_dev;
    *ctx = rwh_ctx;
    *q = rwh_q;
    return 0;
}

char *rwh_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        s = malloc((size_t)n + 1);
        if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
            free(s);
            s = NULL;
        }
        if (s) {
            s[n] = '\0';
            *len = (size_t)n;
        }
    }
    fclose(f);
    return s;
}

cl_program rwh_build(const char *name, const char *src, size_t len, const char *options)
{
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_int e;

    if (rwh_device(name, &dev, &ctx, &q) != 0)
        return NULL;
    prog = clCreateProgramWithSource(ctx, 1, &src, &len, &e);
    if (!prog) {
        rwh_fail(name, "clCreateProgramWithSource", e);
        return NULL;
    }
    e = clBuildProgram(prog, 1, &dev, options, NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "%s: clBuildProgram: %d: %s\n", name, e, log);
        clReleaseProgram(prog);
        return NULL;
    }
    return prog;
}

static uint64_t rwh_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The same data for buffer @p which in every run. */
static void rwh_fill(unsigned char *d, size_t bytes, int ints, unsigned which)
{
    uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)(which + 1) * 0x100000001b3ull);
    size_t i;

    for (i = 0; i + 4 <= bytes; i += 4) {
        uint32_t r = (uint32_t)(rwh_next(&s) >> 11);
        if (ints) {
            int32_t v = (int32_t)(r % 1000u);
            memcpy(d + i, &v, 4);
        } else {
            float v = (float)(r & 0xffffff) / 16777216.0f;
            memcpy(d + i, &v, 4);
        }
    }
}

int rwh_buffers(const char *name, int argc, char **argv, int *a, cl_mem *mems, size_t *bytes,
                unsigned *nbufs)
{
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    cl_int e;

    if (rwh_device(name, &dev, &ctx, &q) != 0)
        return 3;
    for (; *a < argc && strcmp(argv[*a], "--"); (*a)++) {
        int ints = !strncmp(argv[*a], "i32:", 4);
        unsigned char *init;
        if (*nbufs == RWH_MAX_BUFS || (!ints && strncmp(argv[*a], "f32:", 4)))
            return 2;
        bytes[*nbufs] = strtoul(argv[*a] + 4, NULL, 10);
        init = calloc(1, bytes[*nbufs] ? bytes[*nbufs] : 1);
        if (!init)
            return 3;
        rwh_fill(init, bytes[*nbufs], ints, *nbufs);
        mems[*nbufs] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes[*nbufs],
                                      init, &e);
        free(init);
        if (!mems[*nbufs])
            return rwh_fail(name, "clCreateBuffer", e);
        (*nbufs)++;
    }
    return 0;
}

int rwh_set_arg(cl_kernel k, cl_uint i, const char *w, const cl_mem *mems, unsigned nbufs)
{
    const char *v = w + 1;
    unsigned long long bits = 0;
    size_t n = 0;   /* the bytes of a scalar in bits */
    cl_int e = CL_SUCCESS;

    switch (w[0]) {
    case 'b': {
        unsigned idx = (unsigned)strtoul(v, NULL, 10);
        if (idx >= nbufs)
            return -1;
        e = clSetKernelArg(k, i, sizeof(cl_mem), &mems[idx]);
        break;
    }
    case 's':
        e = clSetKernelArg(k, i, (size_t)strtoull(v, NULL, 10), NULL);
        break;
    case 'i':   /* int, uint, ulong: 4 or 8 bytes, little-endian (x86) */
    case 'u':
    case 'l':
        n = w[0] == 'l' ? 8 : 4;
        bits = w[0] == 'i' ? (unsigned long long)strtoll(v, NULL, 10) : strtoull(v, NULL, 10);
        break;
    case 'f':   /* a float's bits */
        n = 4;
        bits = strtoull(v, NULL, 16);
        break;
    case 'x': { /* xN:X */
        char *colon;
        n = (size_t)strtoul(v, &colon, 10);
        if (n < 1 || n > 8 || *colon != ':')
            return -1;
        bits = strtoull(colon + 1, NULL, 16);
        break;
    }
    default:
        return -1;
    }
    if (n) {
        unsigned char x[8];
        for (size_t b = 0; b < n; b++)
            x[b] = (unsigned char)(bits >> (8 * b));
        e = clSetKernelArg(k, i, n, x);
    }
    return e == CL_SUCCESS ? 0 : -1;
}

int rwh_write_out(const char *name, const char *path, const cl_mem *mems, const size_t *bytes,
                  unsigned nbufs)
{
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    FILE *out;
    cl_int e;
    unsigned i;

    if (rwh_device(name, &dev, &ctx, &q) != 0 || (out = fopen(path, "wb")) == NULL)
        return 3;
    for (i = 0; i < nbufs; i++) {
        unsigned char *d = malloc(bytes[i] ? bytes[i] : 1);
        e = d ? clEnqueueReadBuffer(q, mems[i], CL_TRUE, 0, bytes[i], d, 0, NULL, NULL)
              : CL_OUT_OF_HOST_MEMORY;
        if (e != CL_SUCCESS || fwrite(d, 1, bytes[i], out) != bytes[i]) {
            free(d);
            fclose(out);
            return rwh_fail(name, "clEnqueueReadBuffer", e);
        }
        free(d);
    }
    return fclose(out) == 0 ? 0 : 3;
}

void rwh_release(cl_program prog, cl_mem *mems, unsigned nbufs)
{
    unsigned i;

    if (rwh_q)
        clFinish(rwh_q);   /* a failed run may leave launches queued */
    for (i = 0; i < nbufs; i++)
        clReleaseMemObject(mems[i]);
    if (prog)
        clReleaseProgram(prog);
}

/* Reads one request from @p in into @p buf (words in argv). @return the
 * number of words, 0 at the end of the input, -1 on a malformed one. */
static int rwh_request(FILE *in, char *buf, size_t cap, char **words)
{
    unsigned n, i;
    size_t off = 0;
    int c;

    if (fscanf(in, "%u", &n) != 1)
        return feof(in) ? 0 : -1;
    if (fgetc(in) != '\n' || n == 0 || n > RWH_MAX_WORDS)
        return -1;
    for (i = 0; i < n; i++) {
        words[i] = buf + off;
        while ((c = fgetc(in)) != EOF && c != '\0' && off + 1 < cap)
            buf[off++] = (char)c;
        if (c != '\0')
            return -1;
        buf[off++] = '\0';
    }
    return (int)n;
}

int rwh_main(int argc, char **argv, rwh_run_fn run)
{
    static char buf[1 << 16];
    char *words[RWH_MAX_WORDS + 2];
    FILE *reply;
    int n, rc, log;

    if (argc != 2 || strcmp(argv[1], "--serve") != 0)
        return run(argc, argv);
    /* the answers keep the first stdout; the runs' stdout (a kernel's
     * printf) and stderr go to the run's log */
    if ((log = dup(1)) < 0 || (reply = fdopen(log, "w")) == NULL)
        return 3;
    while ((n = rwh_request(stdin, buf, sizeof buf, words + 1)) > 0) {
        /* words[1] is the log: the run's argv is words[1..n] with
         * argv[0] its name */
        fflush(stdout);
        fflush(stderr);
        log = open(words[1], O_WRONLY | O_TRUNC);
        if (log < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
            return 3;
        close(log);
        words[1] = argv[0];
        words[n + 1] = NULL;
        rc = run(n, words + 1);
        fflush(stdout);
        fflush(stderr);
        fprintf(reply, "%d\n", rc);
        if (fflush(reply) != 0)
            return 3;
    }
    return n == 0 ? 0 : 2;
}
