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
