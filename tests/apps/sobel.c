/*
 * sobel — clrr workload: Sobel edge detection as three kernels.
 *
 * A float grey image (side --size) is written to the device, then three
 * separate launches on one in-order queue: sobel_gx and sobel_gy, two
 * independent 3x3 gradient stencils that each write their own buffer, and
 * sobel_magnitude, which reads both and writes sqrt(gx*gx + gy*gy). Only the
 * magnitude is read back. Image borders are clamped (every pixel is defined).
 *
 * What clrr can exploit (Helium fused exactly this): gx and gy read the same
 * input and are independent (horizontal fusion, or concurrent execution);
 * the magnitude reads each of them at the same pixel it writes (vertical
 * fusion with aligned indices), after which the gx and gy buffers are dead
 * intermediates that need not exist. Memory-bound; the stencils read a
 * contiguous 2D neighbourhood of what they write, so a split by rows needs a
 * one-row halo.
 *
 * Verification: gx and gy are exact in float (weights 1 and 2); the device's
 * sqrt may be 3 ulp off and gx*gx + gy*gy may be contracted into an fma, so
 * the magnitude must satisfy |got - exp| <= 1e-5 * |exp| + 1e-6.
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

#define APP "sobel"
#define MAX_DEVICES 64
#define APP_OPTS_DEFAULTS {.size = 1024, .iters = 1, .devices = 1, .seed = 1}
#define APP_SIZE_MAX (1u << 20)
#define APP_ONE_DEVICE
#define TILE 16 /* work-group is TILE x TILE */

/* The kernels live in tests/apps/sobel.cl; the build turns that file into
 * a C string literal (build/gen/apps/sobel_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/sobel_cl.h"
    ;

/* ------------------------------------------------------------ options */

struct opts {
    size_t size;        /* image side in pixels */
    unsigned iters;     /* host loop repetitions */
    const char *device; /* --device or CLRR_APP_DEVICE; NULL: default */
    unsigned devices;   /* --devices: 1 */
    uint64_t seed;
    int quiet;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " APP " [--size N] [--iters K] [--device SPEC] [--devices 1]\n"
            "             [--seed S] [--quiet] [--help]\n"
            "  --size N       image side in pixels, the image is N x N floats (default 1024)\n"
            "  --iters K      repeat the host loop (write image, 3 kernels, read back) K times\n"
            "                 with a new image each time (default 1)\n"
            "  --device SPEC  device index over all platforms, cpu|gpu|accelerator, or a\n"
            "                 substring of the device or platform name (default: env\n"
            "                 CLRR_APP_DEVICE, else the first GPU, else the first device)\n"
            "  --devices M    only 1 is supported (one device)\n"
            "  --seed S       seed of the generated inputs (default 1)\n"
            "  --quiet        print nothing on success\n");
}

#include "tests/apps/app_common.h"

/* ------------------------------------------------------------ workload */

struct app {
    struct opts o;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel gx_k, gy_k, mag_k;
    cl_mem img, gx, gy, mag;
    char *label;
    float *h_img, *h_mag;   /* input, device result */
    float *r_gx, *r_gy;     /* host reference */
};

static void setup(struct app *a)
{
    cl_device_id dev;
    open_context(a->o.device, 1, &dev, &a->ctx, &a->queue, &a->prog, &a->label);
    a->gx_k = create_kernel(a->prog, "sobel_gx");
    a->gy_k = create_kernel(a->prog, "sobel_gy");
    a->mag_k = create_kernel(a->prog, "sobel_magnitude");

    size_t bytes = mul_size(mul_size(a->o.size, a->o.size), sizeof(float));
    a->img = create_buffer(a->ctx, CL_MEM_READ_ONLY, bytes, NULL);
    a->gx = create_buffer(a->ctx, CL_MEM_READ_WRITE, bytes, NULL);
    a->gy = create_buffer(a->ctx, CL_MEM_READ_WRITE, bytes, NULL);
    a->mag = create_buffer(a->ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
    a->h_img = xmalloc(bytes, 1);
    a->h_mag = xmalloc(bytes, 1);
    a->r_gx = xmalloc(bytes, 1);
    a->r_gy = xmalloc(bytes, 1);
}

/* A smooth random pattern with sharp steps and noise, values in [0, 1). */
static void make_image(struct app *a, uint64_t seed)
{
    struct xorshift r = xorshift_make(seed);
    size_t n = a->o.size;
    float fx = 0.01f + 0.05f * xorshift_float(&r), fy = 0.01f + 0.05f * xorshift_float(&r);
    size_t step = 1 + n / (2 + (size_t)(8 * xorshift_float(&r)));
    for (size_t y = 0; y < n; y++)
        for (size_t x = 0; x < n; x++) {
            float v = 0.35f + 0.25f * sinf(fx * (float)x) * cosf(fy * (float)y);
            if (((x / step) + (y / step)) % 2)
                v += 0.3f;
            a->h_img[y * n + x] = v + 0.1f * xorshift_float(&r);
        }
}

static void set_image_args(cl_kernel k, int first, const struct app *a)
{
    cl_int w = (cl_int)a->o.size, h = (cl_int)a->o.size;
    check(clSetKernelArg(k, first, sizeof w, &w), "clSetKernelArg");
    check(clSetKernelArg(k, first + 1, sizeof h, &h), "clSetKernelArg");
}

/* Writes the image, runs the three kernels, reads back; returns wall ms. */
static double run_iteration(struct app *a)
{
    size_t n = a->o.size, bytes = n * n * sizeof(float);
    size_t global[2] = {(n + TILE - 1) / TILE * TILE, (n + TILE - 1) / TILE * TILE};
    size_t local[2] = {TILE, TILE};
    double t0 = now_ms();
    check(clEnqueueWriteBuffer(a->queue, a->img, CL_FALSE, 0, bytes, a->h_img, 0, NULL, NULL),
          "clEnqueueWriteBuffer");

    check(clSetKernelArg(a->gx_k, 0, sizeof a->img, &a->img), "clSetKernelArg");
    check(clSetKernelArg(a->gx_k, 1, sizeof a->gx, &a->gx), "clSetKernelArg");
    set_image_args(a->gx_k, 2, a);
    check(clEnqueueNDRangeKernel(a->queue, a->gx_k, 2, NULL, global, local, 0, NULL, NULL),
          "clEnqueueNDRangeKernel");

    check(clSetKernelArg(a->gy_k, 0, sizeof a->img, &a->img), "clSetKernelArg");
    check(clSetKernelArg(a->gy_k, 1, sizeof a->gy, &a->gy), "clSetKernelArg");
    set_image_args(a->gy_k, 2, a);
    check(clEnqueueNDRangeKernel(a->queue, a->gy_k, 2, NULL, global, local, 0, NULL, NULL),
          "clEnqueueNDRangeKernel");

    check(clSetKernelArg(a->mag_k, 0, sizeof a->gx, &a->gx), "clSetKernelArg");
    check(clSetKernelArg(a->mag_k, 1, sizeof a->gy, &a->gy), "clSetKernelArg");
    check(clSetKernelArg(a->mag_k, 2, sizeof a->mag, &a->mag), "clSetKernelArg");
    set_image_args(a->mag_k, 3, a);
    check(clEnqueueNDRangeKernel(a->queue, a->mag_k, 2, NULL, global, local, 0, NULL, NULL),
          "clEnqueueNDRangeKernel");

    check(clEnqueueReadBuffer(a->queue, a->mag, CL_FALSE, 0, bytes, a->h_mag, 0, NULL, NULL),
          "clEnqueueReadBuffer");
    check(clFinish(a->queue), "clFinish");
    return now_ms() - t0;
}

static float px(const float *img, long x, long y, long n)
{
    x = x < 0 ? 0 : x >= n ? n - 1 : x;
    y = y < 0 ? 0 : y >= n ? n - 1 : y;
    return img[(size_t)y * (size_t)n + (size_t)x];
}

static void reference(struct app *a)
{
    long n = (long)a->o.size;
    const float *img = a->h_img;
    for (long y = 0; y < n; y++)
        for (long x = 0; x < n; x++) {
            float right = px(img, x + 1, y - 1, n) + 2.0f * px(img, x + 1, y, n)
                          + px(img, x + 1, y + 1, n);
            float left = px(img, x - 1, y - 1, n) + 2.0f * px(img, x - 1, y, n)
                         + px(img, x - 1, y + 1, n);
            float down = px(img, x - 1, y + 1, n) + 2.0f * px(img, x, y + 1, n)
                         + px(img, x + 1, y + 1, n);
            float up = px(img, x - 1, y - 1, n) + 2.0f * px(img, x, y - 1, n)
                       + px(img, x + 1, y - 1, n);
            a->r_gx[y * n + x] = right - left;
            a->r_gy[y * n + x] = down - up;
        }
}

static int verify(struct app *a, unsigned iter)
{
    reference(a);
    size_t n = a->o.size;
    for (size_t i = 0; i < n * n; i++) {
        float gx = a->r_gx[i], gy = a->r_gy[i];
        double exp = sqrtf(gx * gx + gy * gy), got = a->h_mag[i];
        if (!(fabs(got - exp) <= 1e-5 * fabs(exp) + 1e-6)) {
            fprintf(stderr,
                    APP ": FAILED: iteration %u: magnitude at pixel %zu (x=%zu y=%zu): got "
                        "%.9g, expected %.9g\n",
                    iter, i, i % n, i / n, got, exp);
            return 1;
        }
    }
    return 0;
}

static void teardown(struct app *a)
{
    check(clReleaseMemObject(a->img), "clReleaseMemObject");
    check(clReleaseMemObject(a->gx), "clReleaseMemObject");
    check(clReleaseMemObject(a->gy), "clReleaseMemObject");
    check(clReleaseMemObject(a->mag), "clReleaseMemObject");
    check(clReleaseKernel(a->gx_k), "clReleaseKernel");
    check(clReleaseKernel(a->gy_k), "clReleaseKernel");
    check(clReleaseKernel(a->mag_k), "clReleaseKernel");
    check(clReleaseProgram(a->prog), "clReleaseProgram");
    check(clReleaseCommandQueue(a->queue), "clReleaseCommandQueue");
    check(clReleaseContext(a->ctx), "clReleaseContext");
    free(a->h_img);
    free(a->h_mag);
    free(a->r_gx);
    free(a->r_gy);
    free(a->label);
}

int main(int argc, char **argv)
{
    struct app a = {0};
    parse_opts(argc, argv, &a.o);
    setup(&a);
    double ms = 0.0;
    int failed = 0;
    for (unsigned it = 0; it < a.o.iters && !failed; it++) {
        make_image(&a, iter_seed(a.o.seed, it));
        ms += run_iteration(&a);
        failed = verify(&a, it);
    }
    if (!failed && !a.o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n", a.o.size, a.o.iters,
               a.label, ms);
    teardown(&a);
    return failed;
}
