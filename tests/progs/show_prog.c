/* show_prog.c — a small program whose trace has something of everything
 * `clrr show` shows (tests/e2e/cli_show.sh):
 *
 *   show_prog [--quiet]
 *
 * - a program built from source with options (-DSCALE=3 -cl-kernel-arg-info)
 *   that draws a compiler warning; the application asks for its build log
 *   and for the arguments' info of one kernel;
 * - a program with a syntax error: clBuildProgram fails, and the
 *   application asks for its build log (as real programs do);
 * - calls that fail on purpose: a buffer of size 0, a kernel name that is
 *   not in the program;
 * - a float4 buffer written by a kernel (out[i] = (i, SCALE*i, -i, 0.5)),
 *   then read back; a sub-buffer of its second half; an int buffer written
 *   by the host and then doubled by a kernel (read back, then mapped for
 *   reading);
 * - a 16x8 RGBA UNORM_INT8 image written by a kernel and read back; a
 *   5x4x3 R UNORM_INT8 3D image created from host memory; a 4x4 RGBA
 *   SIGNED_INT32 image (no PNG form).
 * `show_prog --print-source` prints the good program's source as it is
 * passed (the test compares `clrr show` with it). Exit 0 when every
 * read-back is as expected. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64
#define IW 16
#define IH 8

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "show_prog: %s failed: %d\n", #x, e_); exit(2); } } while (0)

static const char src_good[] =
    "/* show_prog: the good program */\n"
    "__kernel void fill4(__global float4 *out, const float bias)\n"
    "{\n"
    "    int unused_var;\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = (float4)((float)i, SCALE * (float)i, -(float)i, 0.5f + bias);\n"
    "}\n"
    "__kernel void twice(__global int *v, __local int *tmp)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    tmp[get_local_id(0)] = v[i];\n"
    "    v[i] = 2 * tmp[get_local_id(0)];\n"
    "}\n"
    "__kernel void paint(__write_only image2d_t img)\n"
    "{\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    write_imagef(img, (int2)(x, y), (float4)(x / 15.0f, y / 7.0f, (x + y) / 22.0f, 1.0f));\n"
    "}\n";
static const char src_bad[] = "__kernel void broken(__global int *p) { p[0] = ; }\n";

int main(int argc, char **argv)
{
    int quiet = argc > 1 && !strcmp(argv[1], "--quiet");
    if (argc > 1 && !strcmp(argv[1], "--print-source")) {
        fputs(src_good, stdout);
        return 0;
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

    /* programs: one that builds (with a warning), one that does not */
    const char *s = src_good;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "-DSCALE=3 -cl-kernel-arg-info", NULL, NULL));
    size_t loglen = 0;
    CHECK(clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen));
    char *log = malloc(loglen + 1);
    CHECK(clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, loglen, log, NULL));
    free(log);
    s = src_bad;
    cl_program bad = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    CHECK(err);
    if (clBuildProgram(bad, 1, &dev, NULL, NULL, NULL) == CL_SUCCESS) {
        fprintf(stderr, "show_prog: the broken program built\n");
        return 2;
    }
    CHECK(clGetProgramBuildInfo(bad, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen));
    log = malloc(loglen + 1);
    CHECK(clGetProgramBuildInfo(bad, dev, CL_PROGRAM_BUILD_LOG, loglen, log, NULL));
    free(log);
    CHECK(clReleaseProgram(bad));

    cl_kernel kfill = clCreateKernel(prog, "fill4", &err);
    CHECK(err);
    cl_kernel ktwice = clCreateKernel(prog, "twice", &err);
    CHECK(err);
    cl_kernel kpaint = clCreateKernel(prog, "paint", &err);
    CHECK(err);
    for (cl_uint a = 0; a < 2; a++) {   /* what an application asks of its arguments */
        char name[64], type[64];
        cl_kernel_arg_address_qualifier aq;
        CHECK(clGetKernelArgInfo(kfill, a, CL_KERNEL_ARG_NAME, sizeof name, name, NULL));
        CHECK(clGetKernelArgInfo(kfill, a, CL_KERNEL_ARG_TYPE_NAME, sizeof type, type, NULL));
        CHECK(clGetKernelArgInfo(kfill, a, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL));
    }

    /* calls that fail on purpose */
    if (clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &err) || err == CL_SUCCESS)
        return 2;
    if (clCreateKernel(prog, "no_such_kernel", &err) || err == CL_SUCCESS)
        return 2;

    /* a float4 buffer a kernel fills, and its second half as a sub-buffer */
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * 4 * sizeof(float), NULL, &err);
    CHECK(err);
    float bias = 0.25f;
    CHECK(clSetKernelArg(kfill, 0, sizeof out, &out));
    CHECK(clSetKernelArg(kfill, 1, sizeof bias, &bias));
    size_t gsz = N, lsz = 16;
    CHECK(clEnqueueNDRangeKernel(q, kfill, 1, NULL, &gsz, &lsz, 0, NULL, NULL));
    float got[N * 4];
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
        if (got[4 * i] != (float)i || got[4 * i + 1] != 3.0f * i || got[4 * i + 2] != -(float)i ||
            got[4 * i + 3] != 0.75f) {
            fprintf(stderr, "show_prog: out[%d] is wrong\n", i);
            return 1;
        }
    cl_buffer_region half = {N * 2 * sizeof(float), N * 2 * sizeof(float)};
    cl_mem sub = clCreateSubBuffer(out, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &half, &err);
    CHECK(err);

    /* an int buffer the host writes and a kernel doubles */
    int iv[N], iback[N];
    for (int i = 0; i < N; i++)
        iv[i] = i * i - 100;
    cl_mem ib = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof iv, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(q, ib, CL_TRUE, 0, sizeof iv, iv, 0, NULL, NULL));
    CHECK(clSetKernelArg(ktwice, 0, sizeof ib, &ib));
    CHECK(clSetKernelArg(ktwice, 1, lsz * sizeof(int), NULL));
    CHECK(clEnqueueNDRangeKernel(q, ktwice, 1, NULL, &gsz, &lsz, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, ib, CL_TRUE, 0, sizeof iback, iback, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
        if (iback[i] != 2 * iv[i])
            return 1;
    int *mapped = clEnqueueMapBuffer(q, ib, CL_TRUE, CL_MAP_READ, 0, sizeof iv, 0, NULL, NULL, &err);
    CHECK(err);
    if (memcmp(mapped, iback, sizeof iback))
        return 1;
    CHECK(clEnqueueUnmapMemObject(q, ib, mapped, 0, NULL, NULL));

    /* images */
    cl_image_format rgba8 = {CL_RGBA, CL_UNORM_INT8}, r8 = {CL_R, CL_UNORM_INT8}, i32 = {CL_RGBA, CL_SIGNED_INT32};
    cl_image_desc d2 = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = IW, .image_height = IH};
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &rgba8, &d2, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(kpaint, 0, sizeof img, &img));
    size_t g2[2] = {IW, IH};
    CHECK(clEnqueueNDRangeKernel(q, kpaint, 2, NULL, g2, NULL, 0, NULL, NULL));
    unsigned char pix[IW * IH * 4];
    size_t o[3] = {0, 0, 0}, r2[3] = {IW, IH, 1};
    CHECK(clEnqueueReadImage(q, img, CL_TRUE, o, r2, 0, 0, pix, 0, NULL, NULL));
    unsigned char vol[5 * 4 * 3];
    for (size_t i = 0; i < sizeof vol; i++)
        vol[i] = (unsigned char)(i * 4);
    cl_image_desc d3 = {.image_type = CL_MEM_OBJECT_IMAGE3D, .image_width = 5, .image_height = 4, .image_depth = 3};
    cl_mem img3 = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &r8, &d3, vol, &err);
    CHECK(err);
    int iq[4 * 4 * 4];
    for (int i = 0; i < 64; i++)
        iq[i] = i - 32;
    cl_image_desc d4 = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 4, .image_height = 4};
    cl_mem imgi = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &i32, &d4, iq, &err);
    CHECK(err);
    CHECK(clFinish(q));

    cl_mem mems[] = {sub, out, ib, img, img3, imgi};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        CHECK(clReleaseMemObject(mems[i]));
    CHECK(clReleaseKernel(kfill));
    CHECK(clReleaseKernel(ktwice));
    CHECK(clReleaseKernel(kpaint));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    if (!quiet)
        printf("show_prog: ok\n");
    return 0;
}
