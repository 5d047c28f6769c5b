/* app_common.h — the common part of the workload programs vecadd,
 * blackscholes, histogram, matmul, nbody and spmv: options, errors, random
 * numbers, device selection (the same in each, so that scripts drive them
 * uniformly). Included once, by the program's .c file, after it defines
 * APP, DEFAULT_SIZE, DEFAULT_ITERS, MAX_DEVICES, SIZE_HELP, ITERS_HELP and
 * kernel_source (the program source that open_device builds). */
#ifndef CLRR_APP_COMMON_H
#define CLRR_APP_COMMON_H

#include <CL/cl.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#if !defined(APP) || !defined(DEFAULT_SIZE) || !defined(DEFAULT_ITERS) || !defined(MAX_DEVICES) \
    || !defined(SIZE_HELP) || !defined(ITERS_HELP)
#error "define APP, DEFAULT_SIZE, DEFAULT_ITERS, MAX_DEVICES, SIZE_HELP and ITERS_HELP first"
#endif


struct options {
    size_t size;
    unsigned iters;
    const char *device; /* SPEC, or NULL for the default device */
    unsigned devices;
    uint64_t seed;
    int quiet;
    int flag;           /* the app's own switch (APP_FLAG), when it has one */
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
#ifdef APP_FLAG
    fprintf(f, "  --%-12s %s\n", APP_FLAG, APP_FLAG_HELP);
#endif
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
#ifdef APP_FLAG
        {APP_FLAG, no_argument, NULL, 'f'},
#endif
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
    o->flag = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': o->size = parse_count("--size", optarg, SIZE_MAX); break;
        case 'k': o->iters = (unsigned)parse_count("--iters", optarg, UINT32_MAX); break;
        case 'd': o->device = optarg; break;
        case 'm': o->devices = (unsigned)parse_count("--devices", optarg, MAX_DEVICES); break;
        case 's': o->seed = parse_u64("--seed", optarg); break;
        case 'q': o->quiet = 1; break;
        case 'f': o->flag = 1; break;
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

#endif /* CLRR_APP_COMMON_H */
