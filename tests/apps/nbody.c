/*
 * nbody — K steps of a softened gravitational N-body simulation (float4
 * positions with the base mass in w, float4 velocities, semi-implicit
 * Euler), with a heavy cluster whose membership drifts from step to step.
 *
 * At step s the bodies whose index lies in the window
 * [win_s, win_s + N/8) (mod N) form the heavy cluster: their mass is
 * HEAVY times their base mass, and win_s advances by N/16 every step.
 * A heavy body feels every body (N interactions); a light body is a test
 * particle that feels only the heavy ones (N/8 interactions). So the cost
 * of a work-group depends on whether it covers the cluster, and the
 * expensive range moves at every launch: a split that was balanced for
 * one launch is unbalanced for the next (the case for adaptive
 * partitioning refined over repeated launches). The window start is a
 * scalar argument that changes at every launch, the other scalars never do.
 * Base masses follow a Pareto law (non-uniform), normalised to sum 1.
 *
 * What it is for clrr: a compute-bound, naturally iterative workload on
 * device-resident data: positions and velocities are double-buffered
 * (step s reads buffer s % 2 and writes the other), the initial state is
 * written once and the state is read back once after the last step.
 * Reads of positions cover the whole array, writes are contiguous.
 * --iters K is the number of steps (default 10); inputs are generated once.
 *
 * --devices M splits the bodies into M equal contiguous ranges, one per
 * device (own context, queue and full-size buffers each; the range's
 * first body is a kernel argument rather than a global work offset: PoCL
 * 5.0 aborts at release when two of its devices ran the same kernel, one
 * with a non-zero offset);
 * after every step but the last, each device's new positions are read back
 * and written to every other device (host-staged all-gather).
 *
 * Verification: the last step is recomputed on the host in double from
 * the state before it (as read back; every body for N <= 16384, else a
 * spread sample); and when N * N * K <= 2^29 and K <= 200, the whole
 * trajectory is also simulated on the host in double from the initial
 * state (after several hundred steps, the float and double trajectories
 * of close pairs drift apart by more than any useful tolerance).
 *
 * Usage: nbody [--size N] [--iters K] [--device SPEC] [--devices M]
 *              [--seed S] [--quiet]
 *   --size N   number of bodies (default 4096)
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

#define APP "nbody"
#define DEFAULT_SIZE ((size_t)4096)
#define DEFAULT_ITERS 10u
#define MAX_DEVICES 64u
#define SIZE_HELP "number of bodies"
#define ITERS_HELP "number of simulation steps"
#define LOCAL_SIZE 64u

#define HEAVY 20.0f     /* mass factor of the bodies in the cluster */
#define EPS2 0.01f      /* softening length squared */
#define DT 0.005f       /* time step */
#define PARETO_ALPHA 1.5
#define PARETO_CAP 20.0 /* largest raw base mass (smallest is 1) */

#define FULL_CHECK_BUDGET ((double)(1u << 29)) /* N * N * K for the trajectory */
#define FULL_CHECK_MAX_STEPS 200u
#define STEP_CHECK_BUDGET ((size_t)1 << 28)    /* N * bodies for the last step */

/* Last step, from the same state: float vs double differ by rounding of
 * sums of at most N terms, far below 1e-5 of the magnitudes (about 1;
 * measured: under 2% of the tolerance). Whole trajectory: rounding
 * differences grow step after step, so a looser 1e-3 (measured: under 6%
 * of it up to 200 steps). Both relative plus absolute. */
#define TOL_STEP 1e-5
#define TOL_TRAJ 1e-3

/* The kernels live in tests/apps/nbody.cl; the build turns that file into
 * a C string literal (build/gen/apps/nbody_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/nbody_cl.h"
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

/* The simulation's fixed parameters; state arrays hold 4 floats per body
 * (x, y, z, base mass for positions; x, y, z, 0 for velocities). */
struct sim {
    size_t n;
    unsigned steps;
    cl_uint win0, win_len, win_shift;
};

static cl_uint window_at(const struct sim *s, unsigned step)
{
    return (cl_uint)((s->win0 + (uint64_t)step * s->win_shift) % s->n);
}

/* One device's share: bodies [first, first + count); buffers hold all n. */
struct lane {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel kernel;
    cl_mem pos[2], vel[2];
    size_t first, count;
};

static void lane_open(struct lane *l, size_t n)
{
    int b;
    open_device(l->dev, &l->ctx, &l->queue, &l->prog);
    l->kernel = make_kernel(l->prog, l->dev, "nbody_step", LOCAL_SIZE);
    for (b = 0; b < 2; b++) {
        l->pos[b] = make_buffer(l->ctx, CL_MEM_READ_WRITE, n * 4 * sizeof(float));
        l->vel[b] = make_buffer(l->ctx, CL_MEM_READ_WRITE, n * 4 * sizeof(float));
    }
}

static void lane_close(struct lane *l)
{
    int b;
    for (b = 0; b < 2; b++) {
        CHECK("clReleaseMemObject", clReleaseMemObject(l->pos[b]));
        CHECK("clReleaseMemObject", clReleaseMemObject(l->vel[b]));
    }
    CHECK("clReleaseKernel", clReleaseKernel(l->kernel));
    CHECK("clReleaseProgram", clReleaseProgram(l->prog));
    CHECK("clReleaseCommandQueue", clReleaseCommandQueue(l->queue));
    CHECK("clReleaseContext", clReleaseContext(l->ctx));
}

/* Bodies [first, first + count) of a 4-float-per-body array. */
static void write_bodies(struct lane *l, cl_mem m, size_t first, size_t count,
                         const float *host)
{
    CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(l->queue, m, CL_FALSE,
          first * 4 * sizeof(float), count * 4 * sizeof(float), host + first * 4,
          0, NULL, NULL));
}

static void read_bodies(struct lane *l, cl_mem m, size_t first, size_t count,
                        float *host)
{
    CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(l->queue, m, CL_FALSE,
          first * 4 * sizeof(float), count * 4 * sizeof(float), host + first * 4,
          0, NULL, NULL));
}

/* Enqueues step `step` (buffers step % 2 -> the other) on this lane. */
static void lane_step(struct lane *l, const struct sim *s, unsigned step)
{
    int in = step % 2, out = 1 - in;
    size_t global = round_up(l->count, LOCAL_SIZE), local = LOCAL_SIZE;
    cl_uint n = (cl_uint)s->n, first = (cl_uint)l->first;
    cl_uint end = (cl_uint)(l->first + l->count);
    cl_uint win = window_at(s, step);
    cl_float heavy = HEAVY, eps2 = EPS2, dt = DT;
    cl_kernel k = l->kernel;

    CHECK("clSetKernelArg", clSetKernelArg(k, 0, sizeof(cl_mem), &l->pos[in]));
    CHECK("clSetKernelArg", clSetKernelArg(k, 1, sizeof(cl_mem), &l->vel[in]));
    CHECK("clSetKernelArg", clSetKernelArg(k, 2, sizeof(cl_mem), &l->pos[out]));
    CHECK("clSetKernelArg", clSetKernelArg(k, 3, sizeof(cl_mem), &l->vel[out]));
    CHECK("clSetKernelArg", clSetKernelArg(k, 4, sizeof n, &n));
    CHECK("clSetKernelArg", clSetKernelArg(k, 5, sizeof first, &first));
    CHECK("clSetKernelArg", clSetKernelArg(k, 6, sizeof end, &end));
    CHECK("clSetKernelArg", clSetKernelArg(k, 7, sizeof win, &win));
    CHECK("clSetKernelArg", clSetKernelArg(k, 8, sizeof s->win_len, &s->win_len));
    CHECK("clSetKernelArg", clSetKernelArg(k, 9, sizeof heavy, &heavy));
    CHECK("clSetKernelArg", clSetKernelArg(k, 10, sizeof eps2, &eps2));
    CHECK("clSetKernelArg", clSetKernelArg(k, 11, sizeof dt, &dt));
    CHECK("clEnqueueNDRangeKernel", clEnqueueNDRangeKernel(l->queue, k, 1,
          NULL, &global, &local, 0, NULL, NULL));
}

/* Runs all the steps on all lanes. pos0/vel0: initial state; stage[2]:
 * host staging for the exchange of positions (alternating, so that a
 * device still writing the previous step's positions to its buffers never
 * sees them overwritten); prev_* and last_*: states K-1 and K read back. */
static void run(struct lane *lanes, unsigned m, const struct sim *s,
                const float *pos0, const float *vel0, float *stage[2],
                float *prev_pos, float *prev_vel, float *last_pos, float *last_vel)
{
    unsigned step, d, e;

    for (d = 0; d < m; d++) {
        write_bodies(&lanes[d], lanes[d].pos[0], 0, s->n, pos0);
        write_bodies(&lanes[d], lanes[d].vel[0], 0, s->n, vel0);
    }
    for (step = 0; step < s->steps; step++) {
        int out = 1 - step % 2;
        float *x = stage[step % 2];
        int exchange = m > 1 && step + 1 < s->steps;
        for (d = 0; d < m; d++) {
            lane_step(&lanes[d], s, step);
            if (exchange)
                read_bodies(&lanes[d], lanes[d].pos[out], lanes[d].first,
                            lanes[d].count, x);
            CHECK("clFlush", clFlush(lanes[d].queue));
        }
        if (!exchange)
            continue;
        for (d = 0; d < m; d++)
            CHECK("clFinish", clFinish(lanes[d].queue));
        for (d = 0; d < m; d++) {
            for (e = 0; e < m; e++)
                if (e != d)
                    write_bodies(&lanes[d], lanes[d].pos[out], lanes[e].first,
                                 lanes[e].count, x);
            CHECK("clFlush", clFlush(lanes[d].queue));
        }
    }
    for (d = 0; d < m; d++) {
        struct lane *l = &lanes[d];
        int last = s->steps % 2;
        read_bodies(l, l->pos[1 - last], l->first, l->count, prev_pos);
        read_bodies(l, l->vel[1 - last], l->first, l->count, prev_vel);
        read_bodies(l, l->pos[last], l->first, l->count, last_pos);
        read_bodies(l, l->vel[last], l->first, l->count, last_vel);
        CHECK("clFlush", clFlush(l->queue));
    }
    for (d = 0; d < m; d++)
        CHECK("clFinish", clFinish(lanes[d].queue));
}

/* Positions in the cube [-1, 1)^3, Pareto base masses normalised to sum
 * 1, small random velocities. */
static void generate(uint64_t seed, struct sim *s, float *pos, float *vel)
{
    uint64_t r = rng_seed(seed, 0);
    double total = 0.0;
    size_t i, n = s->n;

    for (i = 0; i < n; i++) {
        double u = rng_float(&r, 0.0f, 1.0f);
        double mass = pow(1.0 - u, -1.0 / PARETO_ALPHA);
        pos[4 * i + 0] = rng_float(&r, -1.0f, 1.0f);
        pos[4 * i + 1] = rng_float(&r, -1.0f, 1.0f);
        pos[4 * i + 2] = rng_float(&r, -1.0f, 1.0f);
        pos[4 * i + 3] = (float)(mass < PARETO_CAP ? mass : PARETO_CAP);
        total += pos[4 * i + 3];
        vel[4 * i + 0] = rng_float(&r, -0.05f, 0.05f);
        vel[4 * i + 1] = rng_float(&r, -0.05f, 0.05f);
        vel[4 * i + 2] = rng_float(&r, -0.05f, 0.05f);
        vel[4 * i + 3] = 0.0f;
    }
    for (i = 0; i < n; i++)
        pos[4 * i + 3] = (float)(pos[4 * i + 3] / total);
    s->win_len = (cl_uint)(n / 8 > 0 ? n / 8 : 1);
    s->win_shift = (cl_uint)(n / 16 > 0 ? n / 16 : 1);
    s->win0 = (cl_uint)(rng_next(&r) % n);
}

/* ------------------------------------------------------- host reference */

static int host_in_window(size_t j, size_t n, size_t win, size_t len)
{
    size_t d = j >= win ? j - win : j + n - win;
    return d < len;
}

/* One step of body i in double: p and v hold the state before the step
 * (4 per body), np and nv receive body i's new position and velocity. */
static void host_step_body(const struct sim *s, unsigned step, size_t i,
                           const double *p, const double *v, double np[3],
                           double nv[3])
{
    size_t n = s->n, win = window_at(s, step), len = s->win_len, t, j, c;
    int heavy_i = host_in_window(i, n, win, len);
    double acc[3] = {0, 0, 0};

    for (t = 0; t < (heavy_i ? n : len); t++) {
        double d[3], r2, inv, mj;
        j = heavy_i ? t : (win + t) % n;
        mj = p[4 * j + 3] * (host_in_window(j, n, win, len) ? HEAVY : 1.0);
        for (c = 0; c < 3; c++)
            d[c] = p[4 * j + c] - p[4 * i + c];
        r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + EPS2;
        inv = 1.0 / sqrt(r2);
        for (c = 0; c < 3; c++)
            acc[c] += d[c] * (mj * inv * inv * inv);
    }
    for (c = 0; c < 3; c++) {
        nv[c] = v[4 * i + c] + acc[c] * DT;
        np[c] = p[4 * i + c] + nv[c] * DT;
    }
}

static void to_double(const float *f, double *d, size_t count)
{
    size_t i;
    for (i = 0; i < count; i++)
        d[i] = f[i];
}

static void check_body(const char *what, size_t i, const float *got,
                       const double want[3], double tol)
{
    int c;
    for (c = 0; c < 3; c++) {
        if (!(fabs(got[4 * i + c] - want[c]) <= tol + tol * fabs(want[c]))) {
            fprintf(stderr, APP ": FAILED: %s of body %zu, component %d = %.9g, "
                    "expected %.9g\n", what, i, c, got[4 * i + c], want[c]);
            exit(1);
        }
    }
}

/* Recomputes the last step from the state before it, for every body or a
 * spread sample. */
static void verify_last_step(const struct sim *s, const float *prev_pos,
                             const float *prev_vel, const float *pos,
                             const float *vel)
{
    size_t n = s->n, count = n, k;
    double *p = xmalloc(4 * n, sizeof *p), *v = xmalloc(4 * n, sizeof *v);

    if (n * n > STEP_CHECK_BUDGET)
        count = STEP_CHECK_BUDGET / n;
    to_double(prev_pos, p, 4 * n);
    to_double(prev_vel, v, 4 * n);
    for (k = 0; k < count; k++) {
        size_t i = count == n ? k : k * n / count + k % LOCAL_SIZE;
        double np[3], nv[3];
        i = i < n ? i : n - 1;
        host_step_body(s, s->steps - 1, i, p, v, np, nv);
        check_body("last-step position", i, pos, np, TOL_STEP);
        check_body("last-step velocity", i, vel, nv, TOL_STEP);
    }
    free(p);
    free(v);
}

/* Simulates all the steps in double from the initial state. */
static void verify_trajectory(const struct sim *s, const float *pos0,
                              const float *vel0, const float *pos,
                              const float *vel)
{
    size_t n = s->n, i;
    double *p = xmalloc(4 * n, sizeof *p), *v = xmalloc(4 * n, sizeof *v);
    double *np = xmalloc(4 * n, sizeof *np), *nv = xmalloc(4 * n, sizeof *nv);
    unsigned step;

    to_double(pos0, p, 4 * n);
    to_double(vel0, v, 4 * n);
    for (step = 0; step < s->steps; step++) {
        double *t;
        for (i = 0; i < n; i++) {
            host_step_body(s, step, i, p, v, np + 4 * i, nv + 4 * i);
            np[4 * i + 3] = p[4 * i + 3];
            nv[4 * i + 3] = 0.0;
        }
        t = p, p = np, np = t;
        t = v, v = nv, nv = t;
    }
    for (i = 0; i < n; i++) {
        check_body("position", i, pos, p + 4 * i, TOL_TRAJ);
        check_body("velocity", i, vel, v + 4 * i, TOL_TRAJ);
    }
    free(p);
    free(v);
    free(np);
    free(nv);
}

int main(int argc, char **argv)
{
    struct options o;
    cl_device_id ids[MAX_DEVICES];
    struct lane lanes[MAX_DEVICES];
    struct sim s;
    char names[1024];
    float *pos0, *vel0, *stage[2], *prev_pos, *prev_vel, *pos, *vel;
    double t0, ms;
    unsigned d;

    parse_options(argc, argv, &o);
    if (o.size > UINT32_MAX / 2)
        die("--size %zu too large (at most %u bodies)", o.size, UINT32_MAX / 2);
    if (o.size < o.devices)
        die("--size %zu too small for %u devices", o.size, o.devices);
    pick_devices(o.device, o.devices, ids, names, sizeof names);

    s.n = o.size;
    s.steps = o.iters;
    pos0 = xmalloc(4 * s.n, sizeof(float));
    vel0 = xmalloc(4 * s.n, sizeof(float));
    stage[0] = xmalloc(4 * s.n, sizeof(float));
    stage[1] = xmalloc(4 * s.n, sizeof(float));
    prev_pos = xmalloc(4 * s.n, sizeof(float));
    prev_vel = xmalloc(4 * s.n, sizeof(float));
    pos = xmalloc(4 * s.n, sizeof(float));
    vel = xmalloc(4 * s.n, sizeof(float));
    generate(o.seed, &s, pos0, vel0);
    memset(lanes, 0, sizeof lanes);
    for (d = 0; d < o.devices; d++) {
        lanes[d].dev = ids[d];
        lanes[d].first = s.n * d / o.devices;
        lanes[d].count = s.n * (d + 1) / o.devices - lanes[d].first;
        lane_open(&lanes[d], s.n);
    }

    t0 = now_ms();
    run(lanes, o.devices, &s, pos0, vel0, stage, prev_pos, prev_vel, pos, vel);
    ms = now_ms() - t0;
    verify_last_step(&s, prev_pos, prev_vel, pos, vel);
    if ((double)s.n * (double)s.n * s.steps <= FULL_CHECK_BUDGET &&
        s.steps <= FULL_CHECK_MAX_STEPS)
        verify_trajectory(&s, pos0, vel0, pos, vel);

    for (d = 0; d < o.devices; d++)
        lane_close(&lanes[d]);
    free(pos0);
    free(vel0);
    free(stage[0]);
    free(stage[1]);
    free(prev_pos);
    free(prev_vel);
    free(pos);
    free(vel);
    if (!o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n",
               o.size, o.iters, names, ms);
    return 0;
}
