/* app_common.h — what the workload programs of tests/apps share: errors,
 * memory, the command line, deterministic inputs, timing, the listing of
 * the OpenCL devices of every platform and their selection by --device
 * SPEC (by default the first GPU of any platform, else the first device),
 * program builds with their log (the same in each, so that scripts drive
 * them uniformly). Included once, by the program's .c file, after it
 * defines APP (its name in messages), MAX_DEVICES, kernel_source (the
 * program source) and one of two sets of options:
 *
 *  - the uniform options (vecadd, blackscholes, histogram, matmul, nbody,
 *    spmv): DEFAULT_SIZE, DEFAULT_ITERS, SIZE_HELP, ITERS_HELP and, for a
 *    switch of its own, APP_FLAG and APP_FLAG_HELP; struct options,
 *    usage() and parse_options() are here. Each device of --devices gets
 *    a context of its own (pick_devices, open_device), and OpenCL errors
 *    print with their name (CHECK).
 *  - its own options (aes, ep, exposure, geomatrix, jacobi, overlap,
 *    sobel): the program defines struct opts (with at least size, iters,
 *    device, devices, seed and quiet) and usage() before including this
 *    header, and APP_OPTS_DEFAULTS (struct opts' initializer),
 *    APP_SIZE_MAX (the largest --size), APP_ONE_DEVICE when --devices
 *    must be 1, APP_EXTRA_OPTIONS (more struct option entries, their
 *    codes from 512 (O_EXTRA) on, handled by the program's app_option());
 *    parse_opts() is here. Its devices share one context (open_context),
 *    and OpenCL errors print with their code (check).
 */
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

#if !defined(APP) || !defined(MAX_DEVICES)
#error "define APP and MAX_DEVICES first"
#endif
#if !defined(APP_OPTS_DEFAULTS) && (!defined(DEFAULT_SIZE) || !defined(DEFAULT_ITERS) || \
                                    !defined(SIZE_HELP) || !defined(ITERS_HELP))
#error "define APP_OPTS_DEFAULTS, or DEFAULT_SIZE, DEFAULT_ITERS, SIZE_HELP and ITERS_HELP first"
#endif

/* Helpers that not every program calls. */
#define APP_UNUSED __attribute__((unused))

/* --------------------------------------------------------------- errors */

/* Prints "APP: message" on stderr and exits with status 2. */
static _Noreturn void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(APP ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

APP_UNUSED static const char *cl_errname(cl_int err)
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
APP_UNUSED static void cl_fail(const char *fn, cl_int err)
{
    die("%s failed: %d (%s)", fn, (int)err, cl_errname(err));
}

#define CHECK(fn, expr)                          \
    do {                                         \
        cl_int check_err_ = (expr);              \
        if (check_err_ != CL_SUCCESS)            \
            cl_fail((fn), check_err_);           \
    } while (0)

/* Reports a failed OpenCL call as "APP: fn failed: code", exit 2. */
APP_UNUSED static void check(cl_int err, const char *fn)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, APP ": %s failed: %d\n", fn, err);
        exit(2);
    }
}

/* --------------------------------------------------------------- memory */

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

/* a * b; exits on overflow. */
APP_UNUSED static size_t mul_size(size_t a, size_t b)
{
    if (b && a > SIZE_MAX / b)
        die("size overflow (%zu * %zu)", a, b);
    return a * b;
}

APP_UNUSED static size_t round_up(size_t x, size_t m)
{
    return (x + m - 1) / m * m;
}

/* --------------------------------------------------------------- options */

#ifndef APP_OPTS_DEFAULTS

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

/* An unsigned integer (C syntax: decimal, 0x hexadecimal, 0 octal). */
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

#else /* APP_OPTS_DEFAULTS: the program's own struct opts and usage() */

/* An unsigned integer in [min, max] (decimal, or 0x hexadecimal). */
static uint64_t parse_range(const char *opt, const char *s, uint64_t min, uint64_t max)
{
    char *end;
    int base = s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10; /* no octal */
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
        die("bad value for %s: '%s' (expected %llu..%llu)", opt, s,
            (unsigned long long)min, (unsigned long long)max);
    return v;
}

/* getopt_long's codes of the common options; the program's own, in
 * APP_EXTRA_OPTIONS, are from O_EXTRA on (512: it declares them first). */
enum { O_SIZE = 256, O_ITERS, O_DEVICE, O_DEVICES, O_SEED, O_QUIET, O_HELP, O_EXTRA = 512 };

#ifdef APP_EXTRA_OPTIONS
/* The program's option @p c (from O_EXTRA on), its argument @p arg (NULL
 * for a switch), into @p o. */
static void app_option(int c, const char *arg, struct opts *o);
#endif

/* --size, --iters, --device (default $CLRR_APP_DEVICE), --devices,
 * --seed, --quiet, --help and the program's APP_EXTRA_OPTIONS into @p o,
 * from APP_OPTS_DEFAULTS; a bad one prints why, or the usage, and exits 2. */
static void parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"size", required_argument, NULL, O_SIZE},
        {"iters", required_argument, NULL, O_ITERS},
        {"device", required_argument, NULL, O_DEVICE},
        {"devices", required_argument, NULL, O_DEVICES},
        {"seed", required_argument, NULL, O_SEED},
        {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},
#ifdef APP_EXTRA_OPTIONS
        APP_EXTRA_OPTIONS
#endif
        {NULL, 0, NULL, 0},
    };
    *o = (struct opts)APP_OPTS_DEFAULTS;
    o->device = getenv("CLRR_APP_DEVICE");
    if (o->device && !*o->device)
        o->device = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_SIZE: o->size = parse_range("--size", optarg, 1, APP_SIZE_MAX); break;
        case O_ITERS: o->iters = parse_range("--iters", optarg, 1, 1000000); break;
        case O_DEVICE: o->device = optarg; break;
        case O_DEVICES: o->devices = parse_range("--devices", optarg, 1, MAX_DEVICES); break;
        case O_SEED: o->seed = parse_range("--seed", optarg, 0, UINT64_MAX); break;
        case O_QUIET: o->quiet = 1; break;
        case O_HELP: usage(stdout); exit(0);
        default:
#ifdef APP_EXTRA_OPTIONS
            if (c >= O_EXTRA) {
                app_option(c, optarg, o);
                break;
            }
#endif
            usage(stderr);
            exit(2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, APP ": unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        exit(2);
    }
#ifdef APP_ONE_DEVICE
    if (o->devices > 1)
        die("--devices %u: this workload runs on one device only", o->devices);
#endif
}

#endif /* APP_OPTS_DEFAULTS */

/* --------------------------------------------------- inputs and timing */

/* splitmix64's output function of state z (the state moves by the constant). */
static uint64_t splitmix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Deterministic generator (splitmix64): the inputs depend only on the seed
 * and the iteration, never on rand() or the C library. */
APP_UNUSED static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = *s;
    *s += 0x9E3779B97F4A7C15ull;
    return splitmix64(z);
}

/* The state of stream @p stream of seed @p seed, for rng_next. */
APP_UNUSED static uint64_t rng_seed(uint64_t seed, uint64_t stream)
{
    uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull);
    rng_next(&s);
    return s;
}

/* Uniform float in [lo, hi) from rng_next. */
APP_UNUSED static float rng_float(uint64_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)(rng_next(s) >> 40) * (1.0f / 16777216.0f);
}

/* Seed of one host-loop iteration, derived from (--seed, iteration). */
APP_UNUSED static uint64_t iter_seed(uint64_t seed, unsigned iter)
{
    return splitmix64(seed ^ splitmix64(iter));
}

/* xorshift64* generator of the inputs, seeded from (--seed, iteration). */
struct xorshift {
    uint64_t s;
};

APP_UNUSED static struct xorshift xorshift_make(uint64_t seed)
{
    return (struct xorshift){splitmix64(seed) | 1};
}

APP_UNUSED static uint64_t xorshift_next(struct xorshift *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1), 24 random bits. */
APP_UNUSED static float xorshift_float(struct xorshift *r)
{
    return (float)(xorshift_next(r) >> 40) * (1.0f / 16777216.0f);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* -------------------------------------------------------------- devices */

#define TYPE_MASK \
    (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM)

/* Whether SPEC is a device index (digits only). */
static int spec_is_index(const char *spec)
{
    if (!*spec)
        return 0;
    for (; *spec; spec++)
        if (!isdigit((unsigned char)*spec))
            return 0;
    return 1;
}

/* The device type SPEC names, or 0 when SPEC is not a type. */
static cl_device_type spec_type(const char *spec)
{
    if (!strcasecmp(spec, "cpu"))
        return CL_DEVICE_TYPE_CPU;
    if (!strcasecmp(spec, "gpu"))
        return CL_DEVICE_TYPE_GPU;
    if (!strcasecmp(spec, "accelerator"))
        return CL_DEVICE_TYPE_ACCELERATOR;
    return 0;
}

#ifndef APP_OPTS_DEFAULTS
/* One context per device: every device listed with its type and names up
 * front (pick_devices), each opened on its own (open_device). */

struct devinfo {
    cl_device_id id;
    cl_device_type type;
    char name[256];
    char platform[256];
};

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

#else /* APP_OPTS_DEFAULTS */
/* The devices in one context: queried as they are matched (select_devices),
 * opened together (open_context). */

/* Device or platform string property, malloc'ed. */
static char *info_string(cl_device_id dev, cl_platform_id plat, cl_uint param)
{
    size_t n = 0;
    if (dev)
        check(clGetDeviceInfo(dev, param, 0, NULL, &n), "clGetDeviceInfo");
    else
        check(clGetPlatformInfo(plat, param, 0, NULL, &n), "clGetPlatformInfo");
    char *s = xmalloc(n + 1, 1);
    if (dev)
        check(clGetDeviceInfo(dev, param, n, s, NULL), "clGetDeviceInfo");
    else
        check(clGetPlatformInfo(plat, param, n, s, NULL), "clGetPlatformInfo");
    s[n] = '\0';
    return s;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return n == 0;
}

static cl_device_type device_type(cl_device_id dev)
{
    cl_device_type type;
    check(clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL), "clGetDeviceInfo");
    return type & TYPE_MASK;
}

static int name_matches(cl_device_id dev, cl_platform_id plat, const char *spec)
{
    char *dname = info_string(dev, NULL, CL_DEVICE_NAME);
    char *pname = info_string(NULL, plat, CL_PLATFORM_NAME);
    int hit = contains_nocase(dname, spec) || contains_nocase(pname, spec);
    free(dname);
    free(pname);
    return hit;
}

/* Every device of every platform, in order, with its platform; returns the count. */
static unsigned list_device_ids(cl_device_id *all, cl_platform_id *owner, unsigned cap)
{
    cl_uint nplat = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &nplat);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && nplat == 0))
        die("no OpenCL platform found");
    check(err, "clGetPlatformIDs");
    cl_platform_id *plats = xmalloc(nplat, sizeof *plats);
    check(clGetPlatformIDs(nplat, plats, NULL), "clGetPlatformIDs");
    unsigned nall = 0;
    for (cl_uint p = 0; p < nplat && nall < cap; p++) {
        cl_uint nd = 0;
        err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (err == CL_DEVICE_NOT_FOUND || nd == 0)
            continue;
        check(err, "clGetDeviceIDs");
        if (nd > cap - nall)
            nd = cap - nall;
        check(clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, all + nall, NULL), "clGetDeviceIDs");
        for (cl_uint d = 0; d < nd; d++)
            owner[nall + d] = plats[p];
        nall += nd;
    }
    free(plats);
    if (nall == 0)
        die("no OpenCL device found");
    return nall;
}

/*
 * Picks `want` devices for SPEC into devs[]: the device SPEC designates (an
 * index; the first of a type; the first whose device or platform name
 * contains SPEC; by default the first GPU, else device 0), then the next
 * devices, in order and wrapping around, that match too (for an index or the
 * default: those of the same type). Returns their platform; they must all
 * belong to it, since they share one context.
 */
static cl_platform_id select_devices(const char *spec, unsigned want, cl_device_id *devs)
{
    cl_device_id all[256];
    cl_platform_id owner[256], chosen[MAX_DEVICES];
    unsigned nall = list_device_ids(all, owner, 256), first = 0;
    cl_device_type type = 0;
    if (!spec) {
        first = nall;
        for (unsigned i = 0; i < nall && first == nall; i++)
            if (device_type(all[i]) & CL_DEVICE_TYPE_GPU)
                first = i;
        if (first == nall)
            first = 0;
        type = device_type(all[first]);
    } else if (spec_is_index(spec)) {
        unsigned long idx = strtoul(spec, NULL, 10);
        if (idx >= nall)
            die("no device with index %s (%u devices)", spec, nall);
        first = (unsigned)idx;
        type = device_type(all[first]);
    } else {
        type = spec_type(spec); /* 0: match by name */
    }
    unsigned n = 0;
    for (unsigned k = 0; k < nall && n < want; k++) {
        unsigned i = (first + k) % nall;
        if (type ? (device_type(all[i]) & type) != 0 : name_matches(all[i], owner[i], spec)) {
            chosen[n] = owner[i];
            devs[n++] = all[i];
        }
    }
    if (n == 0)
        die("no device matches '%s'", spec ? spec : "(default)");
    if (n < want)
        die("only %u device(s) match '%s', %u requested with --devices", n,
            spec ? spec : "(default)", want);
    for (unsigned d = 1; d < n; d++)
        if (chosen[d] != chosen[0])
            die("the selected devices belong to several platforms; pick devices of one");
    return chosen[0];
}

/* Names of the devices joined with " + ", malloc'ed. */
static char *device_label(const cl_device_id *devs, unsigned n)
{
    size_t len = 1;
    char *names[MAX_DEVICES];
    for (unsigned i = 0; i < n; i++) {
        names[i] = info_string(devs[i], NULL, CL_DEVICE_NAME);
        len += strlen(names[i]) + 3;
        memmove(names[i], names[i] + strspn(names[i], " "), strlen(names[i]) + 1);
    }
    char *s = xmalloc(len, 1);
    s[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        if (i)
            strcat(s, " + ");
        strcat(s, names[i]);
        free(names[i]);
    }
    return s;
}

static cl_program build_program(cl_context ctx, unsigned ndev, const cl_device_id *devs,
                                const char *src)
{
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(prog, ndev, devs, "-cl-std=CL1.2", NULL, NULL);
    if (err == CL_BUILD_PROGRAM_FAILURE) {
        for (unsigned i = 0; i < ndev; i++) {
            size_t n = 0;
            check(clGetProgramBuildInfo(prog, devs[i], CL_PROGRAM_BUILD_LOG, 0, NULL, &n),
                  "clGetProgramBuildInfo");
            char *log = xmalloc(n + 1, 1);
            check(clGetProgramBuildInfo(prog, devs[i], CL_PROGRAM_BUILD_LOG, n, log, NULL),
                  "clGetProgramBuildInfo");
            log[n] = '\0';
            fprintf(stderr, APP ": build log (device %u):\n%s\n", i, log);
            free(log);
        }
    }
    check(err, "clBuildProgram");
    return prog;
}

/* Selects @p n devices for --device @p spec into devs[] (select_devices),
 * creates their context, then (@p queue given: one device) its in-order
 * queue, and builds kernel_source for them; their names into *label
 * (malloc'ed). Exits 2 on an error. */
static void open_context(const char *spec, unsigned n, cl_device_id *devs, cl_context *ctx,
                         cl_command_queue *queue, cl_program *prog, char **label)
{
    cl_int err;
    cl_platform_id plat = select_devices(spec, n, devs);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    *ctx = clCreateContext(props, n, devs, NULL, NULL, &err);
    check(err, "clCreateContext");
    if (queue) {
        *queue = clCreateCommandQueueWithProperties(*ctx, devs[0], NULL, &err);
        check(err, "clCreateCommandQueueWithProperties");
    }
    *prog = build_program(*ctx, n, devs, kernel_source);
    *label = device_label(devs, n);
}

APP_UNUSED static cl_mem create_buffer(cl_context ctx, cl_mem_flags flags, size_t bytes, void *host)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, flags, bytes, host, &err);
    check(err, "clCreateBuffer");
    return m;
}

APP_UNUSED static cl_kernel create_kernel(cl_program prog, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    check(err, "clCreateKernel");
    return k;
}
#endif /* APP_OPTS_DEFAULTS */

#endif /* CLRR_APP_COMMON_H */
