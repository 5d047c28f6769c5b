/* kargs.c — kernel arguments a plan's patterns must see as the recording
 * stored them, for tests/e2e/run_plan.sh (plan mode hands clSetKernelArg
 * to the matcher without records: live_exec_karg):
 *   - a struct of 80 bytes by value (over the 64 stored inline: its hash),
 *     in a producer -> consumer pair the plan fuses;
 *   - a __local argument (nil), in a launch whose output nobody reads: the
 *     plan defers it and it never runs;
 *   - a clSetKernelArg that fails (a buffer argument of the wrong size)
 *     between the good one and the launch: neither the launch nor the
 *     matcher may take its value.
 * Per iteration (--iters K, default 3): write a (blocking), scale(a, t,
 * coef), offset(t, out), dead_local(u, __local), read out (blocking),
 * check every element. Exit 0 when all are right, 1 otherwise (one line). */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define NCOEF 20

static const char *source =
    "typedef struct { float k[20]; } coef_t;\n"
    "__kernel void scale(__global const float *a, __global float *t, coef_t c)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    t[i] = a[i] * c.k[i % 20];\n"
    "}\n"
    "__kernel void offset(__global const float *t, __global float *out)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = t[i] + 1.0f;\n"
    "}\n"
    "__kernel void dead_local(__global float *u, __local float *s)\n"
    "{\n"
    "    size_t i = get_global_id(0), l = get_local_id(0);\n"
    "    s[l] = (float)i;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    u[i] = s[get_local_size(0) - 1 - l];\n"
    "}\n";

typedef struct {
    cl_float k[NCOEF];
} coef_t;

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "kargs: %s failed (%d)\n", what, (int)err);
    exit(1);
}

#define CK(call) do { cl_int e_ = (call); if (e_ != CL_SUCCESS) die(#call, e_); } while (0)

int main(int argc, char **argv)
{
    unsigned iters = 3;
    if (argc == 3 && !strcmp(argv[1], "--iters"))
        iters = (unsigned)strtoul(argv[2], NULL, 10);
    else if (argc != 1) {
        fprintf(stderr, "usage: kargs [--iters K]\n");
        return 2;
    }
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CK(clGetPlatformIDs(1, &plat, NULL));
    CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CK(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CK(err);
    CK(clBuildProgram(p, 1, &dev, NULL, NULL, NULL));
    cl_kernel ks = clCreateKernel(p, "scale", &err);
    CK(err);
    cl_kernel ko = clCreateKernel(p, "offset", &err);
    CK(err);
    cl_kernel kd = clCreateKernel(p, "dead_local", &err);
    CK(err);
    size_t bytes = N * sizeof(float), global = N, local = 64;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &err);
    CK(err);
    cl_mem t = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CK(err);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    CK(err);
    cl_mem u = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CK(err);
    static float ha[N], hout[N];
    coef_t c;
    for (int j = 0; j < NCOEF; j++)
        c.k[j] = 0.5f + (float)j;
    unsigned char junk[7] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    for (unsigned it = 0; it < iters; it++) {
        for (int i = 0; i < N; i++)
            ha[i] = (float)((i * 7 + (int)it * 13) % 101) - 50.0f;
        CK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, bytes, ha, 0, NULL, NULL));
        CK(clSetKernelArg(ks, 0, sizeof a, &a));
        CK(clSetKernelArg(ks, 1, sizeof t, &t));
        CK(clSetKernelArg(ks, 2, sizeof c, &c));
        /* a wrong size: refused, and the argument stays t */
        if (clSetKernelArg(ks, 1, sizeof junk, junk) == CL_SUCCESS) {
            fprintf(stderr, "kargs: clSetKernelArg with a wrong size succeeded\n");
            return 1;
        }
        CK(clEnqueueNDRangeKernel(q, ks, 1, NULL, &global, &local, 0, NULL, NULL));
        CK(clSetKernelArg(ko, 0, sizeof t, &t));
        CK(clSetKernelArg(ko, 1, sizeof out, &out));
        CK(clEnqueueNDRangeKernel(q, ko, 1, NULL, &global, &local, 0, NULL, NULL));
        CK(clSetKernelArg(kd, 0, sizeof u, &u));
        CK(clSetKernelArg(kd, 1, local * sizeof(float), NULL));
        CK(clEnqueueNDRangeKernel(q, kd, 1, NULL, &global, &local, 0, NULL, NULL));
        CK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, bytes, hout, 0, NULL, NULL));
        for (int i = 0; i < N; i++) {
            float exp = ha[i] * c.k[i % NCOEF] + 1.0f;
            if (hout[i] != exp) {
                fprintf(stderr, "kargs: FAILED: iteration %u: element %d: got %g, expected %g\n", it, i,
                        (double)hout[i], (double)exp);
                return 1;
            }
        }
    }
    CK(clFinish(q));
    clReleaseMemObject(a);
    clReleaseMemObject(t);
    clReleaseMemObject(out);
    clReleaseMemObject(u);
    clReleaseKernel(ks);
    clReleaseKernel(ko);
    clReleaseKernel(kd);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("kargs: ok iters=%u\n", iters);
    return 0;
}
