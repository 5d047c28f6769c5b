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
