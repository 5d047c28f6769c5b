/*
 * histogram — 256-bin histogram of a byte stream, in two kernels: each
 * work-group counts its contiguous chunk into a __local histogram with
 * local atomics and writes it out as one row of a partial-histogram buffer;
 * a second kernel sums the rows into the final 256 bins.
 *
 * What it is for clrr: a reduction. The input is large and read once, the
 * output is 1 KiB, and the producer/consumer pair of kernels communicates
 * through an intermediate buffer (one row of 256 counts per work-group)
 * that the host never reads: the case for vertical fusion and for removing
 * a dead intermediate. The data are skewed (a few narrow peaks plus noise),
 * so local atomics contend on a few bins. Splitting it is not a matter of
 * disjoint outputs: every device produces a whole histogram and the results
 * must be merged by addition. With --iters K, every iteration counts fresh
 * data.
 *
 * --devices M splits the bytes into M equal contiguous ranges, one per
 * device (own context, queue and buffers each, both kernels on each); the
 * host adds the M histograms it reads back.
 *
 * Usage: histogram [--size N] [--iters K] [--device SPEC] [--devices M]
 *                  [--seed S] [--quiet]
 *   --size N   number of input bytes (default 16777216)
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

#define APP "histogram"
#define DEFAULT_SIZE ((size_t)1 << 24)
#define DEFAULT_ITERS 1u
#define MAX_DEVICES 64u
#define SIZE_HELP "number of input bytes"
#define ITERS_HELP "iterations of write inputs, run, read back"
#define BINS 256u
#define LOCAL_SIZE 256u
#define ITEMS 64u                        /* bytes per work-item */
#define CHUNK (LOCAL_SIZE * ITEMS)       /* bytes per work-group */
#define MERGE_LOCAL 64u

/* Counts are integers: the result must match the host exactly. */

/* The kernels live in tests/apps/histogram.cl; the build turns that file into
 * a C string literal (build/gen/apps/histogram_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/histogram_cl.h"
    ;

/* ===================================================================== */
/* Common part: options, errors, random numbers, devices (the same in    */
/* every workload program, so that scripts can drive them uniformly).    */
/* ===================================================================== */

struct options {
    size_t size;
    unsigned iters;
    const char *device; /* SPEC, or NULL for the default device */
    unsigned devices;
    uint64_t seed;
    int quiet;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " APP " [--size N] [--iters K] [--device SPEC] [--devices M]\n"
            "       [--seed S] [--quiet] [--help]\n"
            "  --size N       " SIZE_HELP " (default %zu)\n"
            "  --iters K      " ITERS_HELP " (default %u)\n"
            "  --device SPEC  device index over all platforms (0,1,...), cpu, gpu,\n"
            "                 accelerator, or a substring of the device or platform\n"
            "                 name; default $CLRR_APP_DEVICE, else the first GPU,\n"
            "                 else the first device\n"
            "  --devices M    split the work over the first M devices matching SPEC\n"
            "  --seed S       seed of the generated inputs (default 1)\n"
            "  --quiet        print nothing on success\n",
            DEFAULT_SIZE, DEFAULT_ITERS);
}

/* Prints "APP: message" on stderr and exits with status 2. */
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(APP ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static const char *cl_errname(cl_int err)
{
    switch (err) {
#define E(x) case x: return #x
    E(CL_SUCCESS); E(CL_DEVICE_NOT_FOUND); E(CL_DEVICE_NOT_AVAILABLE);
    E(CL_COMPILER_NOT_AVAILABLE); E(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    E(CL_OUT_OF_RESOURCES); E(CL_OUT_OF_HOST_MEMORY);
    E(CL_PROFILING_INFO_NOT_AVAILABLE); E(CL_MEM_COPY_OVERLAP);
    E(CL_IMAGE_FORMAT_MISMATCH); E(CL_IMAGE_FORMAT_NOT_SUPPORTED);
    E(CL_BUILD_PROGRAM_FAILURE); E(CL_MAP_FAILURE);
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET);
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    E(CL_COMPILE_PROGRAM_FAILURE); E(CL_LINKER_NOT_AVAILABLE);
    E(CL_LINK_PROGRAM_FAILURE); E(CL_DEVICE_PARTITION_FAILED);
    E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE); E(CL_INVALID_VALUE);
    E(CL_INVALID_DEVICE_TYPE); E(CL_INVALID_PLATFORM); E(CL_INVALID_DEVICE);
    E(CL_INVALID_CONTEXT); E(CL_INVALID_QUEUE_PROPERTIES);
    E(CL_INVALID_COMMAND_QUEUE); E(CL_INVALID_HOST_PTR);
    E(CL_INVALID_MEM_OBJECT); E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    E(CL_INVALID_IMAGE_SIZE); E(CL_INVALID_SAMPLER); E(CL_INVALID_BINARY);
    E(CL_INVALID_BUILD_OPTIONS); E(CL_INVALID_PROGRAM);
    E(CL_INVALID_PROGRAM_EXECUTABLE); E(CL_INVALID_KERNEL_NAME);
    E(CL_INVALID_KERNEL_DEFINITION); E(CL_INVALID_KERNEL);
    E(CL_INVALID_ARG_INDEX); E(CL_INVALID_ARG_VALUE); E(CL_INVALID_ARG_SIZE);
    E(CL_INVALID_KERNEL_ARGS); E(CL_INVALID_WORK_DIMENSION);
    E(CL_INVALID_WORK_GROUP_SIZE); E(CL_INVALID_WORK_ITEM_SIZE);
    E(CL_INVALID_GLOBAL_OFFSET); E(CL_INVALID_EVENT_WAIT_LIST);
    E(CL_INVALID_EVENT); E(CL_INVALID_OPERATION); E(CL_INVALID_GL_OBJECT);
    E(CL_INVALID_BUFFER_SIZE); E(CL_INVALID_MIP_LEVEL);
    E(CL_INVALID_GLOBAL_WORK_SIZE); E(CL_INVALID_PROPERTY);
    E(CL_INVALID_IMAGE_DESCRIPTOR); E(CL_INVALID_COMPILER_OPTIONS);
    E(CL_INVALID_LINKER_OPTIONS); E(CL_INVALID_DEVICE_PARTITION_COUNT);
    E(CL_INVALID_PIPE_SIZE); E(CL_INVALID_DEVICE_QUEUE);
    E(CL_INVALID_SPEC_ID); E(CL_MAX_SIZE_RESTRICTION_EXCEEDED);
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
    }
}

/* Reports a failed OpenCL call as "APP: fn failed: code (NAME)", exit 2. */
static void cl_fail(const char *fn, cl_int err)
{
    die("%s failed: %d (%s)", fn, (int)err, cl_errname(err));
}

#define CHECK(fn, expr)                          \
    do {                                         \
        cl_int check_err_ = (expr);              \
        if (check_err_ != CL_SUCCESS)            \
            cl_fail((fn), check_err_);           \
    } while (0)

/* malloc of count * elem bytes; exits on overflow or exhaustion. */
static void *xmalloc(size_t count, size_t elem)
{
    void *p;
    size_t bytes;
    if (elem && count > SIZE_MAX / elem)
        die("out of host memory (%zu x %zu bytes)", count, elem);
    bytes = count * elem;
    p = malloc(bytes > 0 ? bytes : 1);
    if (!p)
        die("out of host memory (%zu bytes)", bytes);
    return p;
}

static unsigned long long parse_u64(const char *opt, const char *arg)
{
    char *end;
    unsigned long long v;
    errno = 0;
    v = strtoull(arg, &end, 0);
    if (errno || end == arg || *end || strchr(arg, '-'))
        die("invalid %s '%s' (an unsigned integer)", opt, arg);
    return v;
}

static size_t parse_count(const char *opt, const char *arg, size_t max)
{
    unsigned long long v = parse_u64(opt, arg);
    if (v == 0 || v > max)
        die("invalid %s '%s' (a positive integer up to %zu)", opt, arg, max);
    return (size_t)v;
}

static void parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"size", required_argument, NULL, 'n'},
        {"iters", required_argument, NULL, 'k'},
        {"device", required_argument, NULL, 'd'},
        {"devices", required_argument, NULL, 'm'},
        {"seed", required_argument, NULL, 's'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    const char *env = getenv("CLRR_APP_DEVICE");

    o->size = DEFAULT_SIZE;
    o->iters = DEFAULT_ITERS;
    o->device = env && *env ? env : NULL;
    o->devices = 1;
    o->seed = 1;
    o->quiet = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': o->size = parse_count("--size", optarg, SIZE_MAX); break;
        case 'k': o->iters = (unsigned)parse_count("--iters", optarg, UINT32_MAX); break;
        case 'd': o->device = optarg; break;
        case 'm': o->devices = (unsigned)parse_count("--devices", optarg, MAX_DEVICES); break;
        case 's': o->seed = parse_u64("--seed", optarg); break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (optind < argc)
        die("unexpected argument '%s' (see --help)", argv[optind]);
}

/* Deterministic generator (splitmix64): the inputs depend only on the seed
 * and the iteration, never on rand() or the C library. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rng_seed(uint64_t seed, uint64_t stream)
{
    uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull);
    rng_next(&s);
    return s;
}

/* Uniform float in [lo, hi) (unused by the integer-only workloads). */
__attribute__((unused)) static float rng_float(uint64_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)(rng_next(s) >> 40) * (1.0f / 16777216.0f);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct devinfo {
    cl_device_id id;
    cl_device_type type;
    char name[256];
    char platform[256];
};

#define TYPE_MASK (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU | \
                   CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM)

/* Lists every device of every platform, in platform order. */
static size_t list_devices(struct devinfo **out)
{
    cl_uint np = 0, p;
    cl_platform_id *plats;
    struct devinfo *list = NULL;
    size_t n = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);

    if (err == -1001 || np == 0)
        die("no OpenCL platform found");
    CHECK("clGetPlatformIDs", err);
    plats = xmalloc(np, sizeof *plats);
    CHECK("clGetPlatformIDs", clGetPlatformIDs(np, plats, NULL));
    for (p = 0; p < np; p++) {
        cl_uint nd = 0, d;
        cl_device_id *ids;
        char pname[256];
        err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (err == CL_DEVICE_NOT_FOUND || nd == 0)
            continue;
        CHECK("clGetDeviceIDs", err);
        CHECK("clGetPlatformInfo", clGetPlatformInfo(plats[p], CL_PLATFORM_NAME,
                                                     sizeof pname, pname, NULL));
        ids = xmalloc(nd, sizeof *ids);
        CHECK("clGetDeviceIDs",
              clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL));
        list = realloc(list, (n + nd) * sizeof *list);
        if (!list)
            die("out of host memory");
        for (d = 0; d < nd; d++, n++) {
            list[n].id = ids[d];
            snprintf(list[n].platform, sizeof list[n].platform, "%s", pname);
            CHECK("clGetDeviceInfo", clGetDeviceInfo(ids[d], CL_DEVICE_TYPE,
                                                     sizeof list[n].type, &list[n].type, NULL));
            CHECK("clGetDeviceInfo", clGetDeviceInfo(ids[d], CL_DEVICE_NAME,
                                                     sizeof list[n].name, list[n].name, NULL));
        }
        free(ids);
    }
    free(plats);
    if (n == 0)
        die("no OpenCL device found");
    *out = list;
    return n;
}

static int spec_is_index(const char *spec)
{
    if (!*spec)
        return 0;
    for (; *spec; spec++)
        if (!isdigit((unsigned char)*spec))
            return 0;
    return 1;
}

static cl_device_type spec_type(const char *spec)
{
    if (!strcasecmp(spec, "cpu")) return CL_DEVICE_TYPE_CPU;
    if (!strcasecmp(spec, "gpu")) return CL_DEVICE_TYPE_GPU;
    if (!strcasecmp(spec, "accelerator")) return CL_DEVICE_TYPE_ACCELERATOR;
    return 0;
}

/* Picks m devices for SPEC into out[] and writes their names, joined by
 * " + ", into names. The first device is the one SPEC designates (an index,
 * the first of a type, the first whose device or platform name contains
 * SPEC; by default the first GPU, else device 0). The others are the next
 * devices that match too, in order (for an index: the same type). */
static void pick_devices(const char *spec, unsigned m, cl_device_id *out,
                         char *names, size_t names_cap)
{
    struct devinfo *d;
    size_t nd = list_devices(&d), first = nd, i, k;
    cl_device_type type = 0;
    unsigned got = 0;
    int by_name = 0;

    if (!spec) {
        for (i = 0; i < nd && first == nd; i++)
            if (d[i].type & CL_DEVICE_TYPE_GPU)
                first = i;
        if (first == nd)
            first = 0;
        type = d[first].type & TYPE_MASK;
    } else if (spec_is_index(spec)) {
        first = strtoul(spec, NULL, 10);
        if (first >= nd)
            die("no device with index %s (%zu devices)", spec, nd);
        type = d[first].type & TYPE_MASK;
    } else if ((type = spec_type(spec)) == 0) {
        by_name = 1;
    }
    names[0] = '\0';
    for (k = 0; k < nd && got < m; k++) {
        i = (first == nd ? 0 : first) + k;
        i %= nd;
        if (by_name ? !(strcasestr(d[i].name, spec) || strcasestr(d[i].platform, spec))
                    : !(d[i].type & type))
            continue;
        out[got++] = d[i].id;
        snprintf(names + strlen(names), names_cap - strlen(names), "%s%s",
                 got > 1 ? " + " : "", d[i].name + strspn(d[i].name, " "));
    }
    free(d);
    if (got == 0)
        die("no device matches '%s'", spec ? spec : "(default)");
    if (got < m)
        die("only %u device(s) match '%s', %u requested with --devices",
            got, spec ? spec : "(default)", m);
}

/* Creates a context, an in-order queue and the built program for one
 * device. On a build failure, prints the build log and exits 2. */
static void open_device(cl_device_id dev, cl_context *ctx, cl_command_queue *q,
                        cl_program *prog)
{
    cl_int err;
    *ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK("clCreateContext", err);
    *q = clCreateCommandQueueWithProperties(*ctx, dev, NULL, &err);
    CHECK("clCreateCommandQueueWithProperties", err);
    *prog = clCreateProgramWithSource(*ctx, 1, &kernel_source, NULL, &err);
    CHECK("clCreateProgramWithSource", err);
    err = clBuildProgram(*prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL);
    if (err == CL_BUILD_PROGRAM_FAILURE) {
        size_t len = 0;
        char *log;
        CHECK("clGetProgramBuildInfo", clGetProgramBuildInfo(*prog, dev,
              CL_PROGRAM_BUILD_LOG, 0, NULL, &len));
        log = xmalloc(len + 1, 1);
        CHECK("clGetProgramBuildInfo", clGetProgramBuildInfo(*prog, dev,
              CL_PROGRAM_BUILD_LOG, len, log, NULL));
        log[len] = '\0';
        fprintf(stderr, APP ": build log:\n%s\n", log);
        free(log);
    }
    CHECK("clBuildProgram", err);
}

static cl_kernel make_kernel(cl_program prog, cl_device_id dev, const char *name,
                             size_t local_size)
{
    cl_int err;
    size_t max_wg = 0;
    cl_kernel k = clCreateKernel(prog, name, &err);
    CHECK("clCreateKernel", err);
    CHECK("clGetKernelWorkGroupInfo", clGetKernelWorkGroupInfo(k, dev,
          CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL));
    if (max_wg < local_size)
        die("kernel %s: work-group size %zu needed, device allows %zu",
            name, local_size, max_wg);
    return k;
}

static cl_mem make_buffer(cl_context ctx, cl_mem_flags flags, size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, flags, bytes, NULL, &err);
    CHECK("clCreateBuffer", err);
    return m;
}

static size_t round_up(size_t x, size_t m)
{
    return (x + m - 1) / m * m;
}

/* ===================================================================== */
/* The workload                                                          */
/* ===================================================================== */

/* One device's share: bytes [first, first + count), counted into bins. */
struct lane {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel count_kernel, merge_kernel;
    cl_mem data, partial, hist;
    size_t first, count, groups;
    cl_uint bins[BINS];
};

static void lane_open(struct lane *l)
{
    l->groups = round_up(l->count, CHUNK) / CHUNK;
    open_device(l->dev, &l->ctx, &l->queue, &l->prog);
    l->count_kernel = make_kernel(l->prog, l->dev, "hist_local", LOCAL_SIZE);
    l->merge_kernel = make_kernel(l->prog, l->dev, "hist_merge", MERGE_LOCAL);
    l->data = make_buffer(l->ctx, CL_MEM_READ_ONLY, l->count);
    l->partial = make_buffer(l->ctx, CL_MEM_READ_WRITE,
                             l->groups * BINS * sizeof(cl_uint));
    l->hist = make_buffer(l->ctx, CL_MEM_WRITE_ONLY, BINS * sizeof(cl_uint));
}

static void lane_close(struct lane *l)
{
    CHECK("clReleaseMemObject", clReleaseMemObject(l->data));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->partial));
    CHECK("clReleaseMemObject", clReleaseMemObject(l->hist));
    CHECK("clReleaseKernel", clReleaseKernel(l->count_kernel));
    CHECK("clReleaseKernel", clReleaseKernel(l->merge_kernel));
    CHECK("clReleaseProgram", clReleaseProgram(l->prog));
    CHECK("clReleaseCommandQueue", clReleaseCommandQueue(l->queue));
    CHECK("clReleaseContext", clReleaseContext(l->ctx));
}

/* Enqueues this lane's write, both kernels and the read-back of its 256
 * bins into l->bins (all non-blocking). */
static void lane_enqueue(struct lane *l, const unsigned char *data)
{
    size_t global = l->groups * LOCAL_SIZE, local = LOCAL_SIZE;
    size_t mglobal = BINS, mlocal = MERGE_LOCAL;
    cl_uint n = (cl_uint)l->count, groups = (cl_uint)l->groups;
    cl_kernel k = l->count_kernel, m = l->merge_kernel;

    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, l->data, CL_FALSE, 0,
          l->count, data + l->first, 0, NULL, NULL));
    CHECK("clSetKernelArg", clSetKernelArg(k, 0, sizeof(cl_mem), &l->data));
    CHECK("clSetKernelArg", clSetKernelArg(k, 1, sizeof n, &n));
    CHECK("clSetKernelArg", clSetKernelArg(k, 2, sizeof(cl_mem), &l->partial));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, k, 1,
          NULL, &global, &local, 0, NULL, NULL));
    CHECK("clSetKernelArg", clSetKernelArg(m, 0, sizeof(cl_mem), &l->partial));
    CHECK("clSetKernelArg", clSetKernelArg(m, 1, sizeof groups, &groups));
    CHECK("clSetKernelArg", clSetKernelArg(m, 2, sizeof(cl_mem), &l->hist));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, m, 1,
          NULL, &mglobal, &mlocal, 0, NULL, NULL));
    CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(l->queue, l->hist, CL_FALSE, 0,
          sizeof l->bins, l->bins, 0, NULL, NULL));
    CHECK("clFlush", clFlush(l->queue));
}

/* Skewed bytes: 90% from three narrow peaks (triangular, random centre and
 * width per iteration), 10% uniform noise. */
static void generate(uint64_t seed, unsigned iter, unsigned char *data, size_t n)
{
    uint64_t s = rng_seed(seed, iter);
    int centre[3], width[3];
    size_t i;
    int p;

    for (p = 0; p < 3; p++) {
        centre[p] = (int)(rng_next(&s) % BINS);
        width[p] = 2 + (int)(rng_next(&s) % 24);
    }
    for (i = 0; i < n; i++) {
        uint64_t r = rng_next(&s);
        unsigned pick = (unsigned)(r & 0xff);
        if (pick < 26) {
            data[i] = (unsigned char)(r >> 8);
        } else {
            int k = pick % 3;
            int off = (int)((r >> 8) & 0xff) + (int)((r >> 16) & 0xff) - 255;
            int v = centre[k] + off * width[k] / 256;
            data[i] = (unsigned char)(v & 0xff);
        }
    }
}

static void verify(const unsigned char *data, size_t n, const cl_uint *hist)
{
    size_t *want = xmalloc(BINS, sizeof *want);
    size_t i;
    unsigned b;

    memset(want, 0, BINS * sizeof *want);
    for (i = 0; i < n; i++)
        want[data[i]]++;
    for (b = 0; b < BINS; b++) {
        if (hist[b] != want[b]) {
            fprintf(stderr, APP ": FAILED: bin %u = %u, expected %zu\n",
                    b, (unsigned)hist[b], want[b]);
            exit(1);
        }
    }
    free(want);
}

int main(int argc, char **argv)
{
    struct options o;
    cl_device_id ids[MAX_DEVICES];
    struct lane lanes[MAX_DEVICES];
    char names[1024];
    unsigned char *data;
    cl_uint hist[BINS];
    double ms = 0;
    unsigned it, d, b;

    parse_options(argc, argv, &o);
    if (o.size > UINT32_MAX - CHUNK)
        die("--size %zu too large (at most %u bytes)", o.size,
            (unsigned)(UINT32_MAX - CHUNK));
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
    data = xmalloc(o.size, 1);

    for (it = 0; it < o.iters; it++) {
        double t0;
        generate(o.seed, it, data, o.size);
        t0 = now_ms();
        for (d = 0; d < o.devices; d++)
            lane_enqueue(&lanes[d], data);
        for (d = 0; d < o.devices; d++)
            CHECK("clFinish", clFinish(lanes[d].queue));
        ms += now_ms() - t0;
        for (b = 0; b < BINS; b++)
            for (hist[b] = 0, d = 0; d < o.devices; d++)
                hist[b] += lanes[d].bins[b];
        verify(data, o.size, hist);
    }

    for (d = 0; d < o.devices; d++)
        lane_close(&lanes[d]);
    free(data);
    if (!o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n",
               o.size, o.iters, names, ms);
    return 0;
}
