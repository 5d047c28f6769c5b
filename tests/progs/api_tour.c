/* api_tour.c — a walk through a broad slice of the OpenCL API, used the way
 * real applications use it, for record -> replay tests (and to drive the
 * stub driver in tests/stub-icd/): discovery and queries, contexts (by
 * device list and by type), an in-order profiling queue and an
 * out-of-order queue, a program built with options from source and again
 * from its binary, kernels (all in the program, and by name) with buffer,
 * scalar, local-memory and sampler arguments, COPY_HOST_PTR and
 * USE_HOST_PTR buffers (the host changes the latter between two launches),
 * a sub-buffer, blocking and non-blocking transfers with events and wait
 * lists, rectangles, fill, copy, maps, a 2D image (write, read, read by a
 * kernel through a sampler, copied to a buffer), a user event gating a
 * write, markers and barriers, event queries, profiling, an event callback,
 * coarse-grained SVM when the device has it, and the release of everything.
 *
 * All data is deterministic (a fixed-seed generator; nothing time-dependent
 * reaches the device). Every kernel result is checked against the host;
 * data that only moves (write, then read) is checked always, also with
 * --no-check.
 *
 * Usage: api_tour [--quiet] [--no-check] [--platforms-only]
 *   --no-check        do not verify kernel results (for the stub driver,
 *                     which runs no kernel)
 *   --platforms-only  call clGetPlatformIDs, print the count, and stop
 * Exit status 0, or 1 with one message on the first failure. */
#include <CL/cl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096            /* elements of the main buffers (a 64 x 64 grid) */
#define SUB_N 1024        /* ints in the sub-buffer */
#define IMG_W 16
#define IMG_H 8
#define OFFSET 3          /* passed to the build as -DOFFSET=3 */

static int quiet, check = 1;
/* the main buffers' host data, and what a check expects */
static float fa[N], fb[N], fwant[N];
static int ia[N], ib[N], iwant[N];
static uint32_t rng = 12345;

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "api_tour: %s failed: %d\n", what, (int)err);
    exit(1);
}

/* CHECK(call): a call that returns an error code. */
#define CHECK(call) do { cl_int e_ = (call); if (e_ != CL_SUCCESS) die(#call, e_); } while (0)
/* CREATE(lhs, call): a call that reports through errcode_ret, written as &err_. */
#define CREATE(lhs, call) do { cl_int err_ = CL_SUCCESS; (lhs) = (call); \
    if (err_ != CL_SUCCESS) die(#call, err_); } while (0)

static uint32_t next_u32(void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

/* Compares n ints; a kernel's result (from_kernel) only when checking. */
static void expect_int(const char *what, const int *got, const int *want, size_t n, int from_kernel)
{
    if (from_kernel && !check)
        return;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "api_tour: %s: element %zu is %d, expected %d\n", what, i, got[i], want[i]);
            exit(1);
        }
}

static void expect_float(const char *what, const float *got, const float *want, size_t n, int from_kernel)
{
    if (from_kernel && !check)
        return;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "api_tour: %s: element %zu is %g, expected %g\n", what, i, got[i], want[i]);
            exit(1);
        }
}

static void expect(const char *what, int ok)
{
    if (!ok) {
        fprintf(stderr, "api_tour: %s\n", what);
        exit(1);
    }
}

static const char *src_part1 =
    "__kernel void scale(__global float *dst, __global const float *src, float factor, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        dst[i] = src[i] * factor;\n"
    "}\n"
    "__kernel void add_local(__global const int *in, __global int *out, __local int *tmp)\n"
    "{\n"
    "    size_t l = get_local_id(0), g = get_global_id(0), n = get_local_size(0);\n"
    "    tmp[l] = in[g];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    out[g] = tmp[l] + tmp[n - 1 - l];\n"
    "}\n";
static const char *src_part2 =
    "__kernel void inc(__global int *a) { a[get_global_id(0)] += OFFSET; }\n"
    "__kernel void img_sum(__read_only image2d_t img, sampler_t s, __global float *out, int w)\n"
    "{\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    float4 p = read_imagef(img, s, (int2)(x, y));\n"
    "    out[y * w + x] = p.x + p.y + p.z + p.w;\n"
    "}\n"
    "__kernel void twice(__global int *p) { p[get_global_id(0)] *= 2; }\n";

static atomic_int callback_status = -1000;

static void CL_CALLBACK on_event(cl_event e, cl_int status, void *user)
{
    (void)e;
    (void)user;
    atomic_store(&callback_status, status);   /* no OpenCL call here: the call sequence stays fixed */
}

static void CL_CALLBACK on_context_error(const char *info, const void *priv, size_t cb, void *user)
{
    (void)priv;
    (void)cb;
    (void)user;
    fprintf(stderr, "api_tour: context error: %s\n", info);
}

static cl_device_id discover(cl_platform_id *plat_ret)
{
    cl_uint np = 0, nd = 0;
    CHECK(clGetPlatformIDs(0, NULL, &np));
    expect("no OpenCL platform", np > 0);
    cl_platform_id *plats = calloc(np, sizeof *plats);
    CHECK(clGetPlatformIDs(np, plats, NULL));
    cl_platform_id plat = plats[0];
    free(plats);
    size_t len = 0;
    CHECK(clGetPlatformInfo(plat, CL_PLATFORM_NAME, 0, NULL, &len));
    char *pname = malloc(len);
    CHECK(clGetPlatformInfo(plat, CL_PLATFORM_NAME, len, pname, NULL));
    char version[256];
    CHECK(clGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof version, version, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 0, NULL, &nd));
    cl_device_id *devs = calloc(nd, sizeof *devs);
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, nd, devs, NULL));
    cl_device_id dev = devs[0];
    free(devs);
    char dname[256];
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL));
    if (!quiet)
        printf("api_tour: platform \"%s\", device \"%s\"\n", pname, dname);
    free(pname);
    *plat_ret = plat;
    return dev;
}

/* The program from source (two strings), built with options; its kernels
 * all created, named and released. */
static cl_program build_from_source(cl_context ctx, cl_device_id dev)
{
    cl_program prog;
    const char *srcs[] = { src_part1, src_part2 };
    size_t lens[] = { strlen(src_part1), 0 };
    cl_build_status bstat;
    size_t nkern = 0, names_len = 0;
    CREATE(prog, clCreateProgramWithSource(ctx, 2, srcs, lens, &err_));
    CHECK(clBuildProgram(prog, 1, &dev, "-DOFFSET=3 -cl-std=CL1.2", NULL, NULL));
    CHECK(clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_STATUS, sizeof bstat, &bstat, NULL));
    expect("build status is not CL_BUILD_SUCCESS", bstat == CL_BUILD_SUCCESS);
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_NUM_KERNELS, sizeof nkern, &nkern, NULL));
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &names_len));
    expect("the program does not have 5 kernels", nkern == 5 && names_len > 1);
    cl_uint nk = 0;
    cl_kernel all[8];
    CHECK(clCreateKernelsInProgram(prog, 0, NULL, &nk));
    expect("clCreateKernelsInProgram counts other than 5", nk == 5);
    CHECK(clCreateKernelsInProgram(prog, nk, all, NULL));
    for (cl_uint i = 0; i < nk; i++) {
        char kname[64];
        CHECK(clGetKernelInfo(all[i], CL_KERNEL_FUNCTION_NAME, sizeof kname, kname, NULL));
        CHECK(clReleaseKernel(all[i]));
    }
    return prog;
}

/* The same program again from its binary (a kernel cache). */
static cl_program build_from_binary(cl_context ctx, cl_device_id dev, cl_program prog)
{
    cl_program prog_bin;
    size_t bin_size = 0;
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bin_size, &bin_size, NULL));
    unsigned char *bin = malloc(bin_size ? bin_size : 1);
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
    cl_int bin_status;
    const unsigned char *bins[] = { bin };
    CREATE(prog_bin, clCreateProgramWithBinary(ctx, 1, &dev, &bin_size, bins, &bin_status, &err_));
    CHECK(clBuildProgram(prog_bin, 1, &dev, "-DOFFSET=3", NULL, NULL));
    free(bin);
    return prog_bin;
}

/* Rectangles: a 16 x 8 block of the 64 x 64 grid of @p bufI, from a 32-wide host array. */
static void rectangles(cl_command_queue q, cl_mem bufI)
{
    static int host_rect[32 * 16], back_rect[16 * 8], want_rect[16 * 8];
    for (int i = 0; i < 32 * 16; i++)
        host_rect[i] = 100000 + i;
    size_t b_origin[3] = { 8 * sizeof(int), 4, 0 }, h_origin[3] = { 4 * sizeof(int), 2, 0 };
    size_t rect[3] = { 16 * sizeof(int), 8, 1 }, zero[3] = { 0, 0, 0 };
    CHECK(clEnqueueWriteBufferRect(q, bufI, CL_FALSE, b_origin, h_origin, rect, 64 * sizeof(int), 0,
                                   32 * sizeof(int), 0, host_rect, 0, NULL, NULL));
    CHECK(clEnqueueReadBufferRect(q, bufI, CL_TRUE, b_origin, zero, rect, 64 * sizeof(int), 0,
                                  16 * sizeof(int), 0, back_rect, 0, NULL, NULL));
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 16; x++)
            want_rect[y * 16 + x] = host_rect[(2 + y) * 32 + 4 + x];
    expect_int("rectangle write then read", back_rect, want_rect, 16 * 8, 0);
}

/* Fill, copy, map for write, a local-memory kernel, map for read: the two
 * buffers it makes into *bufF_ret, *bufG_ret. */
static void fill_copy_map(cl_context ctx, cl_command_queue q, cl_kernel k_local, size_t gws, size_t lws,
                          cl_mem *bufF_ret, cl_mem *bufG_ret)
{
    cl_mem bufF, bufG;
    CREATE(bufF, clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err_));
    CREATE(bufG, clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err_));
    int seven = 7, pair[2] = { 5, 6 };
    CHECK(clEnqueueFillBuffer(q, bufF, &seven, sizeof seven, 0, N / 2 * sizeof(int), 0, NULL, NULL));
    CHECK(clEnqueueFillBuffer(q, bufF, pair, sizeof pair, N / 2 * sizeof(int), N / 2 * sizeof(int), 0, NULL, NULL));
    CHECK(clEnqueueCopyBuffer(q, bufF, bufG, 0, 0, N * sizeof(int), 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, bufG, CL_TRUE, 0, sizeof ib, ib, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
        iwant[i] = i < N / 2 ? 7 : pair[i % 2];
    expect_int("fill then copy", ib, iwant, N, 0);
    int *m;
    CREATE(m, clEnqueueMapBuffer(q, bufF, CL_TRUE, CL_MAP_WRITE, 0, N * sizeof(int), 0, NULL, NULL, &err_));
    for (int i = 0; i < N; i++)
        m[i] = i * 3;
    CHECK(clEnqueueUnmapMemObject(q, bufF, m, 0, NULL, NULL));
    CHECK(clSetKernelArg(k_local, 0, sizeof bufF, &bufF));
    CHECK(clSetKernelArg(k_local, 1, sizeof bufG, &bufG));
    CHECK(clSetKernelArg(k_local, 2, lws * sizeof(int), NULL));
    CHECK(clEnqueueNDRangeKernel(q, k_local, 1, NULL, &gws, &lws, 0, NULL, NULL));
    CREATE(m, clEnqueueMapBuffer(q, bufG, CL_TRUE, CL_MAP_READ, 0, N * sizeof(int), 0, NULL, NULL, &err_));
    for (size_t i = 0; i < N; i++) {
        size_t base = i / lws * lws, l = i % lws;
        iwant[i] = (int)(i * 3 + (base + lws - 1 - l) * 3);
    }
    expect_int("add_local (map for read)", m, iwant, N, 1);
    CHECK(clEnqueueUnmapMemObject(q, bufG, m, 0, NULL, NULL));
    *bufF_ret = bufF;
    *bufG_ret = bufG;
}

/* USE_HOST_PTR: a kernel, the host changes the memory, the kernel again.
 * Direct host writes are seen where the buffer is the host memory (CPU
 * devices, the stub: @p host_is_device): checked there only. Returns the buffer. */
static cl_mem use_host_ptr(cl_context ctx, cl_command_queue q, cl_kernel k_inc_bin, size_t sub_gws, int host_is_device)
{
    static int uh[SUB_N];
    int *m;
    for (int i = 0; i < SUB_N; i++)
        uh[i] = i;
    cl_mem bufU;
    CREATE(bufU, clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof uh, uh, &err_));
    CHECK(clSetKernelArg(k_inc_bin, 0, sizeof bufU, &bufU));
    CHECK(clEnqueueNDRangeKernel(q, k_inc_bin, 1, NULL, &sub_gws, NULL, 0, NULL, NULL));
    CREATE(m, clEnqueueMapBuffer(q, bufU, CL_TRUE, CL_MAP_READ, 0, sizeof uh, 0, NULL, NULL, &err_));
    for (int i = 0; i < SUB_N; i++)
        iwant[i] = i + OFFSET;
    expect_int("inc on USE_HOST_PTR", m, iwant, SUB_N, 1);
    CHECK(clEnqueueUnmapMemObject(q, bufU, m, 0, NULL, NULL));
    CHECK(clFinish(q));
    for (int i = 0; i < SUB_N; i++)
        uh[i] = 1000 + i;
    CHECK(clEnqueueNDRangeKernel(q, k_inc_bin, 1, NULL, &sub_gws, NULL, 0, NULL, NULL));
    CREATE(m, clEnqueueMapBuffer(q, bufU, CL_TRUE, CL_MAP_READ, 0, sizeof uh, 0, NULL, NULL, &err_));
    for (int i = 0; i < SUB_N; i++)
        iwant[i] = 1000 + i + OFFSET;
    expect_int("inc after the host changed USE_HOST_PTR memory", m, iwant, SUB_N, host_is_device);
    CHECK(clEnqueueUnmapMemObject(q, bufU, m, 0, NULL, NULL));
    return bufU;
}

/* A 2D image: write, read, a kernel reading it through a sampler, copy to a
 * buffer; the image, sampler and buffers it makes into the *_ret. */
static void image_2d(cl_context ctx, cl_command_queue q, cl_kernel k_img, cl_mem *img_ret, cl_sampler *smp_ret,
                     cl_mem *bufSum_ret, cl_mem *bufImg_ret)
{
    cl_mem img, bufImg, bufSum;
    cl_sampler smp;
    static float px[IMG_W * IMG_H * 4], pback[IMG_W * IMG_H * 4], sums[IMG_W * IMG_H], swant[IMG_W * IMG_H];
    for (int i = 0; i < IMG_W * IMG_H * 4; i++)
        px[i] = (float)(next_u32() % 64) / 4.0f;
    cl_image_format fmt = { CL_RGBA, CL_FLOAT };
    cl_image_desc desc = { .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = IMG_W, .image_height = IMG_H };
    cl_uint nfmt = 0;
    size_t width = 0;
    CHECK(clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &nfmt));
    CREATE(img, clCreateImage(ctx, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err_));
    CHECK(clGetImageInfo(img, CL_IMAGE_WIDTH, sizeof width, &width, NULL));
    expect("image width", width == IMG_W);
    size_t io[3] = { 0, 0, 0 }, ir[3] = { IMG_W, IMG_H, 1 };
    CHECK(clEnqueueWriteImage(q, img, CL_TRUE, io, ir, 0, 0, px, 0, NULL, NULL));
    CHECK(clEnqueueReadImage(q, img, CL_TRUE, io, ir, 0, 0, pback, 0, NULL, NULL));
    expect_float("image write then read", pback, px, IMG_W * IMG_H * 4, 0);
    cl_sampler_properties sp[] = { CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE,
                                   CL_SAMPLER_ADDRESSING_MODE, CL_ADDRESS_CLAMP_TO_EDGE,
                                   CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0 };
    CREATE(smp, clCreateSamplerWithProperties(ctx, sp, &err_));
    CREATE(bufSum, clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof sums, NULL, &err_));
    int w = IMG_W;
    size_t igws[2] = { IMG_W, IMG_H };
    CHECK(clSetKernelArg(k_img, 0, sizeof img, &img));
    CHECK(clSetKernelArg(k_img, 1, sizeof smp, &smp));
    CHECK(clSetKernelArg(k_img, 2, sizeof bufSum, &bufSum));
    CHECK(clSetKernelArg(k_img, 3, sizeof w, &w));
    CHECK(clEnqueueNDRangeKernel(q, k_img, 2, NULL, igws, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, bufSum, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL));
    for (int i = 0; i < IMG_W * IMG_H; i++)
        swant[i] = px[4 * i] + px[4 * i + 1] + px[4 * i + 2] + px[4 * i + 3];
    expect_float("img_sum", sums, swant, IMG_W * IMG_H, 1);
    CREATE(bufImg, clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof px, NULL, &err_));
    CHECK(clEnqueueCopyImageToBuffer(q, img, bufImg, io, ir, 0, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, bufImg, CL_TRUE, 0, sizeof pback, pback, 0, NULL, NULL));
    expect_float("image copied to a buffer", pback, px, IMG_W * IMG_H * 4, 0);
    *img_ret = img;
    *smp_ret = smp;
    *bufSum_ret = bufSum;
    *bufImg_ret = bufImg;
}

/* Coarse-grained SVM: a copy in, a kernel, a copy back; a map for write, the kernel, a map for read. */
static void coarse_svm(cl_context ctx, cl_command_queue q, cl_kernel k_twice, size_t sub_gws)
{
    static int sh[SUB_N], sback[SUB_N];
    for (int i = 0; i < SUB_N; i++)
        sh[i] = (int)(next_u32() % 5000);
    int *p = clSVMAlloc(ctx, CL_MEM_READ_WRITE, sizeof sh, 0);
    expect("clSVMAlloc returned NULL", p != NULL);
    CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, p, sh, sizeof sh, 0, NULL, NULL));
    CHECK(clSetKernelArgSVMPointer(k_twice, 0, p));
    CHECK(clEnqueueNDRangeKernel(q, k_twice, 1, NULL, &sub_gws, NULL, 0, NULL, NULL));
    CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, sback, p, sizeof sback, 0, NULL, NULL));
    for (int i = 0; i < SUB_N; i++)
        iwant[i] = 2 * sh[i];
    expect_int("twice on SVM (memcpy back)", sback, iwant, SUB_N, 1);
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE, p, sizeof sh, 0, NULL, NULL));
    for (int i = 0; i < SUB_N; i++)
        p[i] = i;
    CHECK(clEnqueueSVMUnmap(q, p, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(q, k_twice, 1, NULL, &sub_gws, NULL, 0, NULL, NULL));
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, p, sizeof sh, 0, NULL, NULL));
    for (int i = 0; i < SUB_N; i++)
        iwant[i] = 2 * i;
    expect_int("twice on SVM (mapped)", p, iwant, SUB_N, 1);
    CHECK(clEnqueueSVMUnmap(q, p, 0, NULL, NULL));
    CHECK(clFinish(q));
    clSVMFree(ctx, p);
}

/* A user event gating a write to @p bufG: the two events into *ue, *gev. */
static void user_event_gate(cl_context ctx, cl_command_queue q, cl_mem bufG, cl_event *ue_ret, cl_event *gev_ret)
{
    cl_event ue, gev;
    static int gated[256], gback[256];
    for (int i = 0; i < 256; i++)
        gated[i] = -i;
    CREATE(ue, clCreateUserEvent(ctx, &err_));
    CHECK(clEnqueueWriteBuffer(q, bufG, CL_FALSE, 0, sizeof gated, gated, 1, &ue, &gev));
    CHECK(clSetUserEventStatus(ue, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &gev));
    CHECK(clEnqueueReadBuffer(q, bufG, CL_TRUE, 0, sizeof gback, gback, 0, NULL, NULL));
    expect_int("write gated by a user event", gback, gated, 256, 0);
    *ue_ret = ue;
    *gev_ret = gev;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
        else if (strcmp(argv[i], "--no-check") == 0)
            check = 0;
        else if (strcmp(argv[i], "--platforms-only") == 0) {
            cl_uint np = 0;
            CHECK(clGetPlatformIDs(0, NULL, &np));
            printf("api_tour: %u platform(s)\n", np);
            return 0;
        } else {
            fprintf(stderr, "usage: api_tour [--quiet] [--no-check] [--platforms-only]\n");
            return 2;
        }
    }

    /* ---- discovery and device queries */
    cl_platform_id plat;
    cl_device_id dev = discover(&plat);
    cl_device_type type;
    size_t max_wg, max_items[3];
    cl_uint align_bits;
    cl_bool images;
    cl_command_queue_properties qprops;
    cl_device_svm_capabilities svm = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof max_items, max_items, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof qprops, &qprops, NULL));
    if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL) != CL_SUCCESS)
        svm = 0;   /* an OpenCL 1.x device */

    /* ---- contexts: one by type (queried, released), one by device list (used) */
    cl_context_properties cprops[] = { CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0 };
    cl_context ctx, ctx2;
    cl_uint ndev_ctx = 0;
    CREATE(ctx2, clCreateContextFromType(cprops, CL_DEVICE_TYPE_ALL, on_context_error, NULL, &err_));
    CHECK(clGetContextInfo(ctx2, CL_CONTEXT_NUM_DEVICES, sizeof ndev_ctx, &ndev_ctx, NULL));
    expect("context from type has no device", ndev_ctx > 0);
    CHECK(clReleaseContext(ctx2));
    CREATE(ctx, clCreateContext(cprops, 1, &dev, on_context_error, NULL, &err_));
    CHECK(clRetainContext(ctx));
    CHECK(clReleaseContext(ctx));

    /* ---- queues: in-order with profiling; out-of-order when the device has it */
    cl_queue_properties qp_prof[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0 };
    cl_queue_properties qp_ooo[] = { CL_QUEUE_PROPERTIES,
                                     qprops & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0 };
    cl_command_queue q, oq;
    CREATE(q, clCreateCommandQueueWithProperties(ctx, dev, qp_prof, &err_));
    CREATE(oq, clCreateCommandQueueWithProperties(ctx, dev, qp_ooo, &err_));

    /* ---- program from source (two strings), with options; kernels */
    cl_program prog = build_from_source(ctx, dev);
    cl_kernel k_scale, k_local, k_inc, k_img, k_twice;
    CREATE(k_scale, clCreateKernel(prog, "scale", &err_));
    CREATE(k_local, clCreateKernel(prog, "add_local", &err_));
    CREATE(k_inc, clCreateKernel(prog, "inc", &err_));
    CREATE(k_img, clCreateKernel(prog, "img_sum", &err_));
    CREATE(k_twice, clCreateKernel(prog, "twice", &err_));
    size_t kwg, lws = 64;
    CHECK(clGetKernelWorkGroupInfo(k_local, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL));
    if (lws > kwg)
        lws = kwg;
    if (lws > max_items[0])
        lws = max_items[0];

    /* ---- the same program again from its binary (a kernel cache) */
    cl_program prog_bin = build_from_binary(ctx, dev, prog);
    cl_kernel k_inc_bin;
    CREATE(k_inc_bin, clCreateKernel(prog_bin, "inc", &err_));

    /* ---- COPY_HOST_PTR input, a kernel, a non-blocking read waiting for it */
    for (int i = 0; i < N; i++) {
        fa[i] = (float)(next_u32() % 100000) / 1024.0f;
        ia[i] = (int)(next_u32() % 1000);
    }
    cl_mem bufA, bufB, bufI;
    CREATE(bufA, clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof fa, fa, &err_));
    CREATE(bufB, clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof fb, NULL, &err_));
    CREATE(bufI, clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof ia, ia, &err_));
    float factor = 2.5f;
    cl_uint n = N;
    size_t gws = N;
    CHECK(clSetKernelArg(k_scale, 0, sizeof bufB, &bufB));
    CHECK(clSetKernelArg(k_scale, 1, sizeof bufA, &bufA));
    CHECK(clSetKernelArg(k_scale, 2, sizeof factor, &factor));
    CHECK(clSetKernelArg(k_scale, 3, sizeof n, &n));
    cl_event kev, rev;
    CHECK(clEnqueueNDRangeKernel(q, k_scale, 1, NULL, &gws, &lws, 0, NULL, &kev));
    CHECK(clSetEventCallback(kev, CL_COMPLETE, on_event, NULL));
    CHECK(clEnqueueReadBuffer(q, bufB, CL_FALSE, 0, sizeof fb, fb, 1, &kev, &rev));
    CHECK(clWaitForEvents(1, &rev));
    for (int i = 0; i < N; i++)
        fwant[i] = fa[i] * factor;
    expect_float("scale", fb, fwant, N, 1);
    cl_int status;
    cl_command_type ctype;
    cl_ulong t_start, t_end;
    CHECK(clGetEventInfo(kev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    CHECK(clGetEventInfo(kev, CL_EVENT_COMMAND_TYPE, sizeof ctype, &ctype, NULL));
    expect("kernel event is not a complete NDRange", status == CL_COMPLETE && ctype == CL_COMMAND_NDRANGE_KERNEL);
    CHECK(clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_START, sizeof t_start, &t_start, NULL));
    CHECK(clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_END, sizeof t_end, &t_end, NULL));
    expect("profiling: end before start", t_end >= t_start);

    /* ---- non-blocking write, then a blocking read that waits for it */
    cl_event wev;
    for (int i = 0; i < N; i++)
        fwant[i] = (float)i * 0.5f;
    CHECK(clEnqueueWriteBuffer(q, bufB, CL_FALSE, 0, sizeof fwant, fwant, 0, NULL, &wev));
    CHECK(clEnqueueReadBuffer(q, bufB, CL_TRUE, 0, sizeof fb, fb, 1, &wev, NULL));
    expect_float("write then read", fb, fwant, N, 0);

    /* ---- a sub-buffer, a kernel on it */
    size_t align = align_bits / 8 ? align_bits / 8 : 1, origin = (1024 + align - 1) / align * align;
    cl_buffer_region region = { origin, SUB_N * sizeof(int) };
    cl_mem sub;
    CREATE(sub, clCreateSubBuffer(bufI, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err_));
    size_t sub_gws = SUB_N;
    CHECK(clSetKernelArg(k_inc, 0, sizeof sub, &sub));
    CHECK(clEnqueueNDRangeKernel(q, k_inc, 1, NULL, &sub_gws, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, bufI, CL_TRUE, 0, sizeof ib, ib, 0, NULL, NULL));
    memcpy(iwant, ia, sizeof ia);
    for (size_t i = 0; i < SUB_N; i++)
        iwant[origin / sizeof(int) + i] += OFFSET;
    expect_int("inc on a sub-buffer", ib, iwant, N, 1);

    rectangles(q, bufI);

    cl_mem bufF, bufG;
    fill_copy_map(ctx, q, k_local, gws, lws, &bufF, &bufG);

    cl_mem bufU = use_host_ptr(ctx, q, k_inc_bin, sub_gws, (type & CL_DEVICE_TYPE_CPU) != 0);

    cl_mem img = NULL, bufImg = NULL, bufSum = NULL;
    cl_sampler smp = NULL;
    if (images)
        image_2d(ctx, q, k_img, &img, &smp, &bufSum, &bufImg);

    cl_event ue, gev;
    user_event_gate(ctx, q, bufG, &ue, &gev);

    /* ---- the out-of-order queue: two writes, a marker and a barrier waiting
     * for them, a kernel after the barrier, a read waiting for the kernel */
    cl_event e2[2], mev, bev, okev;
    for (int i = 0; i < N; i++)
        fwant[i] = (float)(N - i);
    CHECK(clEnqueueWriteBuffer(oq, bufA, CL_FALSE, 0, sizeof fwant, fwant, 0, NULL, &e2[0]));
    CHECK(clEnqueueWriteBuffer(oq, bufI, CL_FALSE, 0, sizeof ia, ia, 0, NULL, &e2[1]));
    CHECK(clEnqueueMarkerWithWaitList(oq, 2, e2, &mev));
    CHECK(clEnqueueBarrierWithWaitList(oq, 1, &mev, &bev));
    CHECK(clGetEventInfo(mev, CL_EVENT_COMMAND_TYPE, sizeof ctype, &ctype, NULL));
    expect("marker event type", ctype == CL_COMMAND_MARKER);
    CHECK(clEnqueueNDRangeKernel(oq, k_scale, 1, NULL, &gws, &lws, 1, &bev, &okev));   /* B = A * 2.5 */
    CHECK(clFlush(oq));
    CHECK(clEnqueueReadBuffer(oq, bufB, CL_TRUE, 0, sizeof fb, fb, 1, &okev, NULL));
    for (int i = 0; i < N; i++)
        fwant[i] *= factor;
    expect_float("scale on the out-of-order queue", fb, fwant, N, 1);
    CHECK(clFinish(oq));

    if (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)
        coarse_svm(ctx, q, k_twice, sub_gws);
    CHECK(clFinish(q));

    /* the callback runs on a driver thread, maybe after clFinish */
    for (int i = 0; i < 500 && atomic_load(&callback_status) == -1000; i++)
        nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
    expect("the event callback did not report CL_COMPLETE", atomic_load(&callback_status) == CL_COMPLETE);

    /* ---- release everything */
    cl_event evs[] = { kev, rev, wev, ue, gev, e2[0], e2[1], mev, bev, okev };
    for (size_t i = 0; i < sizeof evs / sizeof *evs; i++)
        CHECK(clReleaseEvent(evs[i]));
    if (images) {
        CHECK(clReleaseMemObject(bufImg));
        CHECK(clReleaseMemObject(bufSum));
        CHECK(clReleaseSampler(smp));
        CHECK(clReleaseMemObject(img));
    }
    cl_mem mems[] = { sub, bufA, bufB, bufI, bufF, bufG, bufU };
    for (size_t i = 0; i < sizeof mems / sizeof *mems; i++)
        CHECK(clReleaseMemObject(mems[i]));
    cl_kernel ks[] = { k_scale, k_local, k_inc, k_img, k_twice, k_inc_bin };
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++)
        CHECK(clReleaseKernel(ks[i]));
    CHECK(clReleaseProgram(prog_bin));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(oq));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    if (!quiet)
        printf("api_tour: ok\n");
    return 0;
}
