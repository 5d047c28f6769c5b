/* diverge.c — a small program whose results change on request, for
 * `clrr diff` (tests/e2e/cli_diff.sh): two recordings with the same variant
 * are the same; with another variant the second kernel ("scale") computes
 * something else, so the first read-back after its launch differs.
 *
 *   diverge [--variant N] [--quiet]
 *     0  z = 2*y                    (default)
 *     1  z = 3*y for every 27th element, else 2*y (a planted divergence)
 *     2  z = 2*y*(1+1e-6)           (a difference a float tolerance absorbs)
 *
 * Calls: writes of x and y, saxpy (y = a*x + b), a blocking read of y, scale
 * (z from y), a non-blocking read of z finished by clFinish (late DATA),
 * saxpy again, a blocking read of y. Prints a checksum unless --quiet. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "diverge: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char *const scale_src[] = {
    "__kernel void scale(__global const float *y, __global float *z)\n"
    "{ size_t i = get_global_id(0); z[i] = 2.0f * y[i]; }\n",
    "__kernel void scale(__global const float *y, __global float *z)\n"
    "{ size_t i = get_global_id(0); z[i] = (i % 27 == 0 ? 3.0f : 2.0f) * y[i]; }\n",
    "__kernel void scale(__global const float *y, __global float *z)\n"
    "{ size_t i = get_global_id(0); z[i] = 2.0f * y[i] * 1.000001f; }\n",
};

static const char saxpy_src[] =
    "__kernel void saxpy(__global const float *x, __global float *y, float a, float b)\n"
    "{ size_t i = get_global_id(0); y[i] = a * x[i] + b; }\n";

enum { N = 1000 };

static cl_kernel build(cl_context ctx, cl_device_id dev, const char *src, const char *name)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(p, name, &err);
    CHECK(err);
    CHECK(clReleaseProgram(p));
    return k;
}

static void saxpy(cl_command_queue q, cl_kernel k, cl_mem x, cl_mem y, float a, float b)
{
    size_t gws = N;
    CHECK(clSetKernelArg(k, 0, sizeof x, &x));
    CHECK(clSetKernelArg(k, 1, sizeof y, &y));
    CHECK(clSetKernelArg(k, 2, sizeof a, &a));
    CHECK(clSetKernelArg(k, 3, sizeof b, &b));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
}

int main(int argc, char **argv)
{
    int variant = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--variant") && i + 1 < argc) {
            variant = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else {
            fprintf(stderr, "usage: diverge [--variant 0|1|2] [--quiet]\n");
            return 2;
        }
    }
    if (variant < 0 || variant > 2) {
        fprintf(stderr, "diverge: variant must be 0, 1 or 2\n");
        return 2;
    }

    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_kernel ksaxpy = build(ctx, dev, saxpy_src, "saxpy");
    cl_kernel kscale = build(ctx, dev, scale_src[variant], "scale");

    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
    if (!x || !y || !z)
        return 2;
    for (int i = 0; i < N; i++) {
        x[i] = (float)i * 0.25f;
        y[i] = 1.0f;
    }
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY, N * sizeof(float), NULL, &err);
    CHECK(err);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
    CHECK(err);
    cl_mem bz = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, N * sizeof(float), NULL, &err);
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(q, bx, CL_TRUE, 0, N * sizeof(float), x, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, by, CL_TRUE, 0, N * sizeof(float), y, 0, NULL, NULL));

    saxpy(q, ksaxpy, bx, by, 1.5f, 0.5f);
    CHECK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, N * sizeof(float), y, 0, NULL, NULL));

    size_t gws = N;
    CHECK(clSetKernelArg(kscale, 0, sizeof by, &by));
    CHECK(clSetKernelArg(kscale, 1, sizeof bz, &bz));
    CHECK(clEnqueueNDRangeKernel(q, kscale, 1, NULL, &gws, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, bz, CL_FALSE, 0, N * sizeof(float), z, 0, NULL, NULL));
    CHECK(clFinish(q));

    saxpy(q, ksaxpy, bx, by, -0.5f, 2.0f);
    CHECK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, N * sizeof(float), y, 0, NULL, NULL));

    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += (double)y[i] + (double)z[i];
    if (!quiet)
        printf("diverge: variant %d checksum %.6f\n", variant, sum);

    CHECK(clReleaseMemObject(bx));
    CHECK(clReleaseMemObject(by));
    CHECK(clReleaseMemObject(bz));
    CHECK(clReleaseKernel(ksaxpy));
    CHECK(clReleaseKernel(kscale));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    free(x);
    free(y);
    free(z);
    return 0;
}
