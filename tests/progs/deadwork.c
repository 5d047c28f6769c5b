/* deadwork.c — an OpenCL program with work whose results nobody observes
 * and transfers of bytes the device already holds, known by construction,
 * for the optimizer's tests (tests/e2e/opt_plan.sh) and benchmark. Per
 * iteration, on one in-order queue:
 *   a  write coef (64 floats, the same bytes every iteration)   redundant from the 2nd
 *   b  write in = zeros (a placeholder)                         dead: overwritten by c
 *   c  write in = this iteration's data
 *   d  stats(in -> stats), event E: never read back             dead (E still waited for by h)
 *   e  scale(in, coef -> tmp)
 *   f  guess(-> out)                                            dead: overwritten by g
 *   g  fill out with 0
 *   h  fill bias with 0.25f (16 floats, the same every time)    redundant from the 2nd
 *   i  finish(tmp, bias, out -> out)
 *   j  read out, waiting for E; clFinish; checked on the host, and E must
 *      say it is a kernel launch's (CL_EVENT_COMMAND_TYPE)
 * So with --iters K a plan drops 3K commands as dead and 2(K-1) as
 * redundant. --seed changes the data (not the shapes); --work W is the
 * length of the stats kernel's loop (its cost).
 * --observe reads the stats buffer back at the end and prints its checksum:
 * a run that observes what a plan made without it thought dead
 * (tests/e2e/run_plan.sh).
 * --exec-info gives the guess kernel an SVM allocation through
 * clSetKernelExecInfo (which it never touches): the live plan mode does not
 * know what such a kernel may reach, so it does not defer its launches.
 * --time-stats asks E's profiling times (a profiling queue), as benchmarks
 * do: the stats launch is then measured by the program, and a plan keeps it.
 * Usage: deadwork [--size N] [--iters K] [--seed S] [--work W] [--observe] [--exec-info] [--time-stats] [--quiet]
 * Exit status 0 when every result is right, 1 otherwise (one message). */
#include <CL/cl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "__kernel void stats(__global const float *in, __global float *st, uint n, uint work)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    float x = in[i], acc = 0.0f;\n"
    "    for (uint k = 0; k < work; k++)\n"
    "        acc += sin(x + (float)k) * cos(x - (float)k);\n"
    "    st[i] = acc;\n"
    "}\n"
    "__kernel void scale(__global const float *in, __global const float *coef, __global float *tmp, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) tmp[i] = in[i] * coef[i % 64];\n"
    "}\n"
    "__kernel void guess(__global float *out, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) out[i] = 0.5f;\n"
    "}\n"
    "__kernel void finish(__global const float *tmp, __global const float *bias, __global float *out, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) out[i] = out[i] + tmp[i] + bias[i % 16];\n"
    "}\n";

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "deadwork: %s failed: %d\n", what, (int)err);
    exit(1);
}

#define CHECK(call) do { cl_int e_ = (call); if (e_ != CL_SUCCESS) die(#call, e_); } while (0)
#define CREATE(lhs, call) do { cl_int err_ = CL_SUCCESS; (lhs) = (call); \
    if (err_ != CL_SUCCESS) die(#call, err_); } while (0)

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static unsigned long opt_num(int argc, char **argv, int *i, const char *name)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "deadwork: %s takes a number\n", name);
        exit(2);
    }
    char *end;
    unsigned long v = strtoul(argv[++*i], &end, 10);
    if (*end || end == argv[*i]) {
        fprintf(stderr, "deadwork: %s takes a number, not '%s'\n", name, argv[*i]);
        exit(2);
    }
    return v;
}

static void args(cl_kernel k, unsigned n, const void *const *v, const size_t *sz)
{
    for (unsigned i = 0; i < n; i++)
        CHECK(clSetKernelArg(k, i, sz[i], v[i]));
}

int main(int argc, char **argv)
{
    cl_uint n = 65536, iters = 3, work = 64;
    uint64_t seed = 1;
    int quiet = 0, observe = 0, exec_info = 0, time_stats = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size"))
            n = (cl_uint)opt_num(argc, argv, &i, "--size");
        else if (!strcmp(argv[i], "--iters"))
            iters = (cl_uint)opt_num(argc, argv, &i, "--iters");
        else if (!strcmp(argv[i], "--seed"))
            seed = opt_num(argc, argv, &i, "--seed");
        else if (!strcmp(argv[i], "--work"))
            work = (cl_uint)opt_num(argc, argv, &i, "--work");
        else if (!strcmp(argv[i], "--observe"))
            observe = 1;
        else if (!strcmp(argv[i], "--exec-info"))
            exec_info = 1;
        else if (!strcmp(argv[i], "--time-stats"))
            time_stats = 1;
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else {
            fprintf(stderr, "usage: deadwork [--size N] [--iters K] [--seed S] [--work W] [--observe] [--exec-info] "
                            "[--time-stats] [--quiet]\n");
            return 2;
        }
    }
    if (n < 64 || n > (1u << 26)) {
        fprintf(stderr, "deadwork: --size from 64 to 67108864\n");
        return 2;
    }
    cl_platform_id plat;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    CREATE(ctx, clCreateContext(NULL, 1, &dev, NULL, NULL, &err_));
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    CREATE(q, clCreateCommandQueueWithProperties(ctx, dev, time_stats ? qp : NULL, &err_));
    CREATE(prog, clCreateProgramWithSource(ctx, 1, &source, NULL, &err_));
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel kstats, kscale, kguess, kfinish;
    CREATE(kstats, clCreateKernel(prog, "stats", &err_));
    CREATE(kscale, clCreateKernel(prog, "scale", &err_));
    CREATE(kguess, clCreateKernel(prog, "guess", &err_));
    CREATE(kfinish, clCreateKernel(prog, "finish", &err_));
    void *svm = NULL;
    if (exec_info) {
        if (!(svm = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 256, 0)))
            die("clSVMAlloc (--exec-info needs SVM)", -1);
        CHECK(clSetKernelExecInfo(kguess, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof svm, &svm));
    }
    size_t bytes = (size_t)n * sizeof(float);
    cl_mem in, coef, tmp, st, out, bias;
    CREATE(in, clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &err_));
    CREATE(coef, clCreateBuffer(ctx, CL_MEM_READ_ONLY, 64 * sizeof(float), NULL, &err_));
    CREATE(tmp, clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err_));
    CREATE(st, clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err_));
    CREATE(out, clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err_));
    CREATE(bias, clCreateBuffer(ctx, CL_MEM_READ_ONLY, 16 * sizeof(float), NULL, &err_));

    float *h_in = malloc(bytes), *h_zero = calloc(n, sizeof(float)), *h_out = malloc(bytes), h_coef[64];
    if (!h_in || !h_zero || !h_out)
        die("malloc", -1);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < 64; i++)
        h_coef[i] = (float)(next(&s) % 1000) / 250.0f;
    const float zero = 0.0f, quarter = 0.25f;
    size_t global = (n + 63) / 64 * 64, local = 64;
    int bad = 0;
    for (cl_uint it = 0; it < iters && !bad; it++) {
        for (cl_uint i = 0; i < n; i++)
            h_in[i] = (float)(next(&s) % 2001) / 100.0f - 10.0f;
        cl_event e_stats;
        CHECK(clEnqueueWriteBuffer(q, coef, CL_FALSE, 0, sizeof h_coef, h_coef, 0, NULL, NULL));   /* a */
        CHECK(clEnqueueWriteBuffer(q, in, CL_FALSE, 0, bytes, h_zero, 0, NULL, NULL));             /* b */
        CHECK(clEnqueueWriteBuffer(q, in, CL_FALSE, 0, bytes, h_in, 0, NULL, NULL));               /* c */
        args(kstats, 4, (const void *[]){&in, &st, &n, &work},
             (size_t[]){sizeof in, sizeof st, sizeof n, sizeof work});
        CHECK(clEnqueueNDRangeKernel(q, kstats, 1, NULL, &global, &local, 0, NULL, &e_stats));     /* d */
        args(kscale, 4, (const void *[]){&in, &coef, &tmp, &n}, (size_t[]){sizeof in, sizeof coef, sizeof tmp, sizeof n});
        CHECK(clEnqueueNDRangeKernel(q, kscale, 1, NULL, &global, &local, 0, NULL, NULL));        /* e */
        args(kguess, 2, (const void *[]){&out, &n}, (size_t[]){sizeof out, sizeof n});
        CHECK(clEnqueueNDRangeKernel(q, kguess, 1, NULL, &global, &local, 0, NULL, NULL));        /* f */
        CHECK(clEnqueueFillBuffer(q, out, &zero, sizeof zero, 0, bytes, 0, NULL, NULL));          /* g */
        CHECK(clEnqueueFillBuffer(q, bias, &quarter, sizeof quarter, 0, 16 * sizeof(float), 0, NULL, NULL));   /* h */
        args(kfinish, 4, (const void *[]){&tmp, &bias, &out, &n},
             (size_t[]){sizeof tmp, sizeof bias, sizeof out, sizeof n});
        CHECK(clEnqueueNDRangeKernel(q, kfinish, 1, NULL, &global, &local, 0, NULL, NULL));       /* i */
        CHECK(clEnqueueReadBuffer(q, out, CL_FALSE, 0, bytes, h_out, 1, &e_stats, NULL));          /* j */
        CHECK(clFinish(q));
        cl_command_type ty = 0;   /* whatever a tool did with it, it is the stats launch's event */
        CHECK(clGetEventInfo(e_stats, CL_EVENT_COMMAND_TYPE, sizeof ty, &ty, NULL));
        if (ty != CL_COMMAND_NDRANGE_KERNEL) {
            fprintf(stderr, "deadwork: the stats launch's event says command type 0x%x\n", (unsigned)ty);
            bad = 1;
        }
        if (time_stats) {
            cl_ulong t0 = 0, t1 = 0;
            CHECK(clGetEventProfilingInfo(e_stats, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
            CHECK(clGetEventProfilingInfo(e_stats, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
            if (!quiet)
                printf("deadwork: stats took %llu ns\n", (unsigned long long)(t1 - t0));
        }
        CHECK(clReleaseEvent(e_stats));
        for (cl_uint i = 0; i < n && !bad; i++) {
            float want = h_in[i] * h_coef[i % 64] + 0.25f;
            if (fabsf(h_out[i] - want) > 1e-4f * (1.0f + fabsf(want))) {
                fprintf(stderr, "deadwork: out[%u] = %g, expected %g (iteration %u)\n", i, h_out[i], want, it);
                bad = 1;
            }
        }
    }
    if (observe && !bad) {
        float *h_st = malloc(bytes);
        if (!h_st)
            return 2;
        CHECK(clEnqueueReadBuffer(q, st, CL_TRUE, 0, bytes, h_st, 0, NULL, NULL));
        double sum = 0;
        for (cl_uint i = 0; i < n; i++)
            sum += (double)h_st[i] * (double)((i % 97) + 1);
        printf("deadwork: stats checksum %.6e\n", sum);
        free(h_st);
    }
    clReleaseMemObject(in);
    clReleaseMemObject(coef);
    clReleaseMemObject(tmp);
    clReleaseMemObject(st);
    clReleaseMemObject(out);
    clReleaseMemObject(bias);
    clReleaseKernel(kstats);
    clReleaseKernel(kscale);
    clReleaseKernel(kguess);
    clReleaseKernel(kfinish);
    if (svm)
        clSVMFree(ctx, svm);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(h_in);
    free(h_zero);
    free(h_out);
    if (!bad && !quiet)
        printf("deadwork: ok size=%u iters=%u seed=%llu\n", n, iters, (unsigned long long)seed);
    return bad;
}
