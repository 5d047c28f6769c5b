/*
 * exposure — clrr workload: exposure fusion (after Mertens et al.), grey
 * float images, built from many small generic kernels.
 *
 * Per host-loop iteration, K images (--images) of one scene at different
 * exposures are written to the device and fused with pyramids of depth D
 * (--depth):
 *   weights    per image: contrast (|Laplacian|), well-exposedness
 *              (exp(-(v-0.5)^2 / 0.08)), weight = contrast * exposedness + eps;
 *              normalized by their sum over the images
 *   pyramids   Gaussian pyramid of each weight map and of each image,
 *              Laplacian pyramid of each image (level - upsample(next level))
 *   blend      per level, sum over images of weight * Laplacian
 *   collapse   from the top level: level += upsample(level above)
 * and the fused image is read back. downsample = blur_h, blur_v, decimate;
 * upsample = expand (zero insertion), blur_h, blur_v (5-tap binomial filter,
 * borders clamped). Each step is a separate launch of a small kernel:
 * 5K + 10K(D-1) + KD + 4(D-1) launches per iteration, 166 at K=3, D=5.
 *
 * What clrr can exploit: long chains of element-wise and stencil kernels on
 * the same index space (vertical fusion: blur_h+blur_v+decimate, expand+blur,
 * subtract, multiply-add), independent chains per image (horizontal fusion,
 * concurrent queues), scratch buffers reused across chains (false write-after-
 * read dependencies that renaming removes), and launches whose size shrinks
 * by 4 per level, down to a few pixels (launch overhead dominates; a cost
 * model should keep the small levels on one device). Memory-bound; at the
 * default size launch-bound on a GPU (166 launches in about 5 ms on an H200).
 *
 * Verification: the host runs the same pipeline in C. The device may
 * contract the filters into fmas, its exp may be 3 ulp and its division
 * 2.5 ulp off, so the fused image must satisfy |got - exp| <= 1e-4 * |exp|
 * + 1e-4 (the largest error seen on PoCL was 7e-6).
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

#define APP "exposure"
#define MAX_DEVICES 64
#define APP_OPTS_DEFAULTS {.size = 1024, .iters = 1, .devices = 1, .seed = 1, .images = 3, .depth = 5}
#define APP_SIZE_MAX (1u << 20)
#define APP_ONE_DEVICE
#define APP_EXTRA_OPTIONS \
    {"images", required_argument, NULL, O_IMAGES}, \
    {"depth", required_argument, NULL, O_DEPTH},
#define MAX_IMAGES 64
#define MAX_DEPTH 16
#define LOCAL_SIZE 64
#define TILE 16 /* 2D work-groups are TILE x TILE */

/* The kernels live in tests/apps/exposure.cl; the build turns that file into
 * a C string literal (build/gen/apps/exposure_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/exposure_cl.h"
    ;

/* ------------------------------------------------------------ options */

struct opts {
    size_t size;        /* image side */
    unsigned iters;     /* host loop repetitions */
    const char *device; /* --device or CLRR_APP_DEVICE; NULL: default */
    unsigned devices;   /* --devices: 1 */
    uint64_t seed;
    int quiet;
    unsigned images; /* --images */
    unsigned depth;  /* --depth */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " APP " [--size N] [--iters K] [--device SPEC] [--devices 1]\n"
            "                [--seed S] [--quiet] [--images K] [--depth D] [--help]\n"
            "  --size N       image side, each image is N x N floats (default 1024)\n"
            "  --iters K      repeat the host loop (write images, fuse, read back) K times\n"
            "                 with new images each time (default 1)\n"
            "  --device SPEC  device index over all platforms, cpu|gpu|accelerator, or a\n"
            "                 substring of the device or platform name (default: env\n"
            "                 CLRR_APP_DEVICE, else the first GPU, else the first device)\n"
            "  --devices M    only 1 is supported (one device)\n"
            "  --seed S       seed of the generated inputs (default 1)\n"
            "  --quiet        print nothing on success\n"
            "  --images K     exposures to fuse, 1..64 (default 3)\n"
            "  --depth D      pyramid levels, 1..16 (default 5)\n");
}

/* getopt_long codes of the options of its own (O_EXTRA on) */
enum { O_IMAGES = 512, O_DEPTH };

#include "tests/apps/app_common.h"

static void app_option(int c, const char *arg, struct opts *o)
{
    switch (c) {
    case O_IMAGES:
        o->images = parse_range("--images", arg, 1, MAX_IMAGES);
        break;
    case O_DEPTH:
        o->depth = parse_range("--depth", arg, 1, MAX_DEPTH);
        break;
    }
}

/* ---------------------------------------------------------- operations */

/*
 * Every step of the pipeline is one operation on buffer ids; the device
 * executor enqueues the kernel of the same name, the host executor computes
 * it in C, so one description of the pipeline drives both.
 * 2D operations take (src, dst, int w, int h), element-wise ones their
 * buffers and (ulong n).
 */
enum op {
    OP_BLUR_H, OP_BLUR_V, OP_DECIMATE, OP_EXPAND, OP_CONTRAST,
    OP_WELL_EXPOSED, OP_WEIGHT, OP_COPY, OP_ACCUMULATE, OP_DIVIDE_BY,
    OP_SUBTRACT, OP_MUL, OP_MADD, NOPS
};

static const struct {
    const char *kernel;
    int nbuf;
    int is_2d;
} ops[NOPS] = {
    [OP_BLUR_H] = {"blur_h", 2, 1},
    [OP_BLUR_V] = {"blur_v", 2, 1},
    [OP_DECIMATE] = {"decimate", 2, 1},
    [OP_EXPAND] = {"expand", 2, 1},
    [OP_CONTRAST] = {"contrast", 2, 1},
    [OP_WELL_EXPOSED] = {"well_exposed", 2, 0},
    [OP_WEIGHT] = {"weight", 3, 0},
    [OP_COPY] = {"copy", 2, 0},
    [OP_ACCUMULATE] = {"accumulate", 2, 0},
    [OP_DIVIDE_BY] = {"divide_by", 2, 0},
    [OP_SUBTRACT] = {"subtract", 3, 0},
    [OP_MUL] = {"mul", 3, 0},
    [OP_MADD] = {"madd", 3, 0},
};

#define MAX_BUFS (3 * MAX_IMAGES * MAX_DEPTH + MAX_DEPTH + 8)

struct app {
    struct opts o;
    size_t w[MAX_DEPTH], h[MAX_DEPTH]; /* level sizes */
    /* buffer ids; gauss[k][0] is img[k], lap[k][depth-1] is gauss[k][depth-1] */
    int img[MAX_IMAGES], gauss[MAX_IMAGES][MAX_DEPTH], lap[MAX_IMAGES][MAX_DEPTH];
    int weight[MAX_IMAGES][MAX_DEPTH], blend[MAX_DEPTH];
    int con, expo, sum, t1, t2, up; /* level-0 scratch */
    int nbufs;
    size_t buf_elems[MAX_BUFS];
    cl_mem dev[MAX_BUFS];
    float *host[MAX_BUFS]; /* host mirror of every buffer */
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel kern[NOPS];
    char *label;
    float *result; /* device result */
    unsigned long launches;
};

typedef void exec_fn(struct app *a, enum op op, const int *buf, size_t w, size_t h);

static size_t clampi(long v, size_t n)
{
    return v < 0 ? 0 : (size_t)v >= n ? n - 1 : (size_t)v;
}

/* The kernels' 5-tap binomial filter, same expression. */
static float binomial5(float m2, float m1, float c, float p1, float p2)
{
    return 0.375f * c + 0.25f * (m1 + p1) + 0.0625f * (m2 + p2);
}

/* Host version of each kernel, same expressions. */
static void host_op(struct app *a, enum op op, const int *buf, size_t w, size_t h)
{
    float *s = a->host[buf[0]], *d = a->host[buf[1]];
    float *e = ops[op].nbuf > 2 ? a->host[buf[2]] : NULL;
    size_t n = w * h;
    switch (op) {
    case OP_BLUR_H:
        for (size_t y = 0; y < h; y++) {
            const float *row = s + y * w;
            for (size_t x = 0; x < w; x++) {
                size_t xm2 = clampi((long)x - 2, w), xm1 = clampi((long)x - 1, w);
                size_t xp1 = clampi((long)x + 1, w), xp2 = clampi((long)x + 2, w);
                d[y * w + x] = binomial5(row[xm2], row[xm1], row[x], row[xp1], row[xp2]);
            }
        }
        break;
    case OP_BLUR_V:
        for (size_t y = 0; y < h; y++) {
            size_t ym2 = clampi((long)y - 2, h) * w, ym1 = clampi((long)y - 1, h) * w;
            size_t yp1 = clampi((long)y + 1, h) * w, yp2 = clampi((long)y + 2, h) * w;
            size_t y0 = y * w;
            for (size_t x = 0; x < w; x++)
                d[y0 + x] = binomial5(s[ym2 + x], s[ym1 + x], s[y0 + x], s[yp1 + x], s[yp2 + x]);
        }
        break;
    case OP_DECIMATE:
        for (size_t y = 0; y < (h + 1) / 2; y++)
            for (size_t x = 0; x < (w + 1) / 2; x++)
                d[y * ((w + 1) / 2) + x] = s[2 * y * w + 2 * x];
        break;
    case OP_EXPAND:
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                d[y * w + x] = ((x | y) & 1) ? 0.0f : 4.0f * s[(y / 2) * ((w + 1) / 2) + x / 2];
        break;
    case OP_CONTRAST:
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++) {
                float c = s[y * w + x];
                float l = s[y * w + clampi((long)x - 1, w)], r = s[y * w + clampi((long)x + 1, w)];
                float u = s[clampi((long)y - 1, h) * w + x], dn = s[clampi((long)y + 1, h) * w + x];
                d[y * w + x] = fabsf(4.0f * c - l - r - u - dn);
            }
        break;
    case OP_WELL_EXPOSED:
        for (size_t i = 0; i < n; i++)
            d[i] = expf(-12.5f * (s[i] - 0.5f) * (s[i] - 0.5f));
        break;
    case OP_WEIGHT:
        for (size_t i = 0; i < n; i++)
            e[i] = s[i] * d[i] + 1e-6f;
        break;
    case OP_COPY: memcpy(d, s, n * sizeof *d); break;
    case OP_ACCUMULATE:
        for (size_t i = 0; i < n; i++)
            s[i] += d[i];
        break;
    case OP_DIVIDE_BY:
        for (size_t i = 0; i < n; i++)
            s[i] /= d[i];
        break;
    case OP_SUBTRACT:
        for (size_t i = 0; i < n; i++)
            e[i] = s[i] - d[i];
        break;
    case OP_MUL:
        for (size_t i = 0; i < n; i++)
            e[i] = s[i] * d[i];
        break;
    case OP_MADD:
        for (size_t i = 0; i < n; i++)
            s[i] += d[i] * e[i];
        break;
    case NOPS: break;
    }
}

/* Enqueues the kernel of op; for 2D ops (w, h) as in the kernel's arguments. */
static void device_op(struct app *a, enum op op, const int *buf, size_t w, size_t h)
{
    cl_kernel k = a->kern[op];
    int nbuf = ops[op].nbuf;
    for (int i = 0; i < nbuf; i++)
        check(clSetKernelArg(k, i, sizeof(cl_mem), &a->dev[buf[i]]), "clSetKernelArg");
    if (ops[op].is_2d) {
        cl_int wi = (cl_int)w, hi = (cl_int)h;
        check(clSetKernelArg(k, nbuf, sizeof wi, &wi), "clSetKernelArg");
        check(clSetKernelArg(k, nbuf + 1, sizeof hi, &hi), "clSetKernelArg");
        size_t gw = op == OP_DECIMATE ? (w + 1) / 2 : w, gh = op == OP_DECIMATE ? (h + 1) / 2 : h;
        size_t global[2] = {(gw + TILE - 1) / TILE * TILE, (gh + TILE - 1) / TILE * TILE};
        size_t local[2] = {TILE, TILE};
        check(clEnqueueNDRangeKernel(a->queue, k, 2, NULL, global, local, 0, NULL, NULL),
              "clEnqueueNDRangeKernel");
    } else {
        cl_ulong n = w * h;
        check(clSetKernelArg(k, nbuf, sizeof n, &n), "clSetKernelArg");
        size_t global = (w * h + LOCAL_SIZE - 1) / LOCAL_SIZE * LOCAL_SIZE, local = LOCAL_SIZE;
        check(clEnqueueNDRangeKernel(a->queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
              "clEnqueueNDRangeKernel");
    }
    a->launches++;
}

/* ------------------------------------------------------------ pipeline */

static void op2(exec_fn *ex, struct app *a, enum op op, int b0, int b1, size_t w, size_t h)
{
    ex(a, op, (int[]){b0, b1}, w, h);
}

static void op3(exec_fn *ex, struct app *a, enum op op, int b0, int b1, int b2, size_t w,
                size_t h)
{
    ex(a, op, (int[]){b0, b1, b2}, w, h);
}

/* dst (level l+1) = decimate(blur(src (level l))) */
static void downsample(exec_fn *ex, struct app *a, int src, int dst, unsigned l)
{
    op2(ex, a, OP_BLUR_H, src, a->t1, a->w[l], a->h[l]);
    op2(ex, a, OP_BLUR_V, a->t1, a->t2, a->w[l], a->h[l]);
    op2(ex, a, OP_DECIMATE, a->t2, dst, a->w[l], a->h[l]);
}

/* dst (level l) = blur(expand(src (level l+1))) */
static void upsample(exec_fn *ex, struct app *a, int src, int dst, unsigned l)
{
    op2(ex, a, OP_EXPAND, src, a->t1, a->w[l], a->h[l]);
    op2(ex, a, OP_BLUR_H, a->t1, a->t2, a->w[l], a->h[l]);
    op2(ex, a, OP_BLUR_V, a->t2, dst, a->w[l], a->h[l]);
}

static void make_weights(exec_fn *ex, struct app *a)
{
    unsigned K = a->o.images;
    size_t w = a->w[0], h = a->h[0];
    for (unsigned k = 0; k < K; k++) {
        op2(ex, a, OP_CONTRAST, a->img[k], a->con, w, h);
        op2(ex, a, OP_WELL_EXPOSED, a->img[k], a->expo, w, h);
        op3(ex, a, OP_WEIGHT, a->con, a->expo, a->weight[k][0], w, h);
    }
    op2(ex, a, OP_COPY, a->weight[0][0], a->sum, w, h);
    for (unsigned k = 1; k < K; k++)
        op2(ex, a, OP_ACCUMULATE, a->sum, a->weight[k][0], w, h);
    for (unsigned k = 0; k < K; k++)
        op2(ex, a, OP_DIVIDE_BY, a->weight[k][0], a->sum, w, h);
}

static void make_pyramids(exec_fn *ex, struct app *a)
{
    unsigned K = a->o.images, D = a->o.depth;
    for (unsigned k = 0; k < K; k++)
        for (unsigned l = 1; l < D; l++)
            downsample(ex, a, a->weight[k][l - 1], a->weight[k][l], l - 1);
    for (unsigned k = 0; k < K; k++) {
        for (unsigned l = 1; l < D; l++)
            downsample(ex, a, a->gauss[k][l - 1], a->gauss[k][l], l - 1);
        for (unsigned l = 0; l + 1 < D; l++) {
            upsample(ex, a, a->gauss[k][l + 1], a->up, l);
            op3(ex, a, OP_SUBTRACT, a->gauss[k][l], a->up, a->lap[k][l], a->w[l], a->h[l]);
        }
    }
}

static void blend_and_collapse(exec_fn *ex, struct app *a)
{
    unsigned K = a->o.images, D = a->o.depth;
    for (unsigned l = 0; l < D; l++) {
        op3(ex, a, OP_MUL, a->weight[0][l], a->lap[0][l], a->blend[l], a->w[l], a->h[l]);
        for (unsigned k = 1; k < K; k++)
            op3(ex, a, OP_MADD, a->blend[l], a->weight[k][l], a->lap[k][l], a->w[l], a->h[l]);
    }
    for (unsigned l = D - 1; l-- > 0;) {
        upsample(ex, a, a->blend[l + 1], a->up, l);
        op2(ex, a, OP_ACCUMULATE, a->blend[l], a->up, a->w[l], a->h[l]);
    }
}

/* The whole fusion; the result is blend[0]. */
static void pipeline(exec_fn *ex, struct app *a)
{
    make_weights(ex, a);
    make_pyramids(ex, a);
    blend_and_collapse(ex, a);
}

/* ------------------------------------------------------------ workload */

static int new_buffer(struct app *a, unsigned level)
{
    cl_int err;
    int id = a->nbufs++;
    size_t n = mul_size(a->w[level], a->h[level]);
    a->buf_elems[id] = n;
    a->dev[id] = clCreateBuffer(a->ctx, CL_MEM_READ_WRITE, mul_size(n, sizeof(float)), NULL, &err);
    check(err, "clCreateBuffer");
    a->host[id] = xmalloc(n * sizeof(float), 1);
    return id;
}

static void create_buffers(struct app *a)
{
    unsigned K = a->o.images, D = a->o.depth;
    for (unsigned l = 0; l < D; l++) {
        a->w[l] = l ? (a->w[l - 1] + 1) / 2 : a->o.size;
        a->h[l] = l ? (a->h[l - 1] + 1) / 2 : a->o.size;
    }
    for (unsigned k = 0; k < K; k++) {
        a->img[k] = a->gauss[k][0] = new_buffer(a, 0);
        for (unsigned l = 1; l < D; l++)
            a->gauss[k][l] = new_buffer(a, l);
        for (unsigned l = 0; l + 1 < D; l++)
            a->lap[k][l] = new_buffer(a, l);
        a->lap[k][D - 1] = a->gauss[k][D - 1];
        for (unsigned l = 0; l < D; l++)
            a->weight[k][l] = new_buffer(a, l);
    }
    for (unsigned l = 0; l < D; l++)
        a->blend[l] = new_buffer(a, l);
    a->con = new_buffer(a, 0);
    a->expo = new_buffer(a, 0);
    a->sum = new_buffer(a, 0);
    a->t1 = new_buffer(a, 0);
    a->t2 = new_buffer(a, 0);
    a->up = new_buffer(a, 0);
}

static void setup(struct app *a)
{
    cl_device_id dev;
    cl_int err;
    open_context(a->o.device, 1, &dev, &a->ctx, &a->queue, &a->prog, &a->label);
    for (int op = 0; op < NOPS; op++) {
        a->kern[op] = clCreateKernel(a->prog, ops[op].kernel, &err);
        check(err, "clCreateKernel");
    }
    create_buffers(a);
    a->result = xmalloc(mul_size(a->buf_elems[a->blend[0]], sizeof(float)), 1);
}

/* K exposures of one scene (radiance up to about 1.2), clipped to [0, 1]. */
static void make_images(struct app *a, uint64_t seed)
{
    struct xorshift r = xorshift_make(seed);
    size_t n = a->o.size;
    float fx = 0.005f + 0.03f * xorshift_float(&r), fy = 0.005f + 0.03f * xorshift_float(&r);
    float cx = (float)n * xorshift_float(&r), cy = (float)n * xorshift_float(&r);
    float *scene = a->host[a->t1]; /* scratch, overwritten by the pipeline */
    for (size_t y = 0; y < n; y++)
        for (size_t x = 0; x < n; x++) {
            float dx = (float)x - cx, dy = (float)y - cy;
            float v = 0.3f + 0.25f * sinf(fx * (float)x) * cosf(fy * (float)y);
            if (dx * dx + dy * dy < 0.05f * (float)(n * n))
                v += 0.6f; /* a bright disc */
            scene[y * n + x] = v + 0.05f * xorshift_float(&r);
        }
    unsigned K = a->o.images;
    for (unsigned k = 0; k < K; k++) {
        float gain = exp2f((float)k - 0.5f * (float)(K - 1));
        float *img = a->host[a->img[k]];
        for (size_t i = 0; i < n * n; i++)
            img[i] = fminf(scene[i] * gain, 1.0f);
    }
}

/* Writes the images, runs the pipeline, reads back; returns wall ms. */
static double run_iteration(struct app *a)
{
    size_t bytes = a->buf_elems[a->img[0]] * sizeof(float);
    double t0 = now_ms();
    for (unsigned k = 0; k < a->o.images; k++)
        check(clEnqueueWriteBuffer(a->queue, a->dev[a->img[k]], CL_FALSE, 0, bytes,
                                   a->host[a->img[k]], 0, NULL, NULL),
              "clEnqueueWriteBuffer");
    pipeline(device_op, a);
    check(clEnqueueReadBuffer(a->queue, a->dev[a->blend[0]], CL_FALSE, 0, bytes, a->result, 0,
                              NULL, NULL),
          "clEnqueueReadBuffer");
    check(clFinish(a->queue), "clFinish");
    return now_ms() - t0;
}

static int verify(struct app *a, unsigned iter)
{
    pipeline(host_op, a);
    const float *exp = a->host[a->blend[0]];
    size_t n = a->buf_elems[a->blend[0]];
    for (size_t i = 0; i < n; i++) {
        if (!(fabsf(a->result[i] - exp[i]) <= 1e-4f * fabsf(exp[i]) + 1e-4f)) {
            fprintf(stderr,
                    APP ": FAILED: iteration %u: fused pixel %zu (x=%zu y=%zu): got %.9g, "
                        "expected %.9g\n",
                    iter, i, i % a->o.size, i / a->o.size, a->result[i], exp[i]);
            return 1;
        }
    }
    return 0;
}

static void teardown(struct app *a)
{
    for (int i = 0; i < a->nbufs; i++) {
        check(clReleaseMemObject(a->dev[i]), "clReleaseMemObject");
        free(a->host[i]);
    }
    for (int op = 0; op < NOPS; op++)
        check(clReleaseKernel(a->kern[op]), "clReleaseKernel");
    check(clReleaseProgram(a->prog), "clReleaseProgram");
    check(clReleaseCommandQueue(a->queue), "clReleaseCommandQueue");
    check(clReleaseContext(a->ctx), "clReleaseContext");
    free(a->result);
    free(a->label);
}

int main(int argc, char **argv)
{
    static struct app a; /* large: buffer tables */
    parse_opts(argc, argv, &a.o);
    setup(&a);
    double ms = 0.0;
    int failed = 0;
    for (unsigned it = 0; it < a.o.iters && !failed; it++) {
        make_images(&a, iter_seed(a.o.seed, it));
        ms += run_iteration(&a);
        failed = verify(&a, it);
    }
    if (!failed && !a.o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n", a.o.size, a.o.iters,
               a.label, ms);
    teardown(&a);
    return failed;
}
