/*
 * aes — clrr workload: a block cipher, AES-128 in ECB mode.
 *
 * Each work-item encrypts one 16-byte block with the real AES-128 structure:
 * AddRoundKey, 9 rounds of SubBytes/ShiftRows/MixColumns/AddRoundKey, and a
 * final round without MixColumns. The S-box lives in a __constant buffer and
 * the 176 bytes of round keys (expanded on the host) in another; both are
 * kernel arguments. Every host-loop iteration uses a new key and plaintext.
 *
 * What clrr can exploit: integer work with table look-ups (data-dependent
 * __constant reads), 16 bytes in and 16 bytes out per work-item, so the
 * kernel is roughly balanced between memory and compute; input and output
 * regions are contiguous and proportional to the work-group range, so a split
 * pass only needs to transfer each device's slice. `--devices M` is the
 * hand-partitioned reference of that split: contiguous work-group ranges,
 * one queue and one input/output buffer pair per device, global work offset.
 *
 * Verification: exact (byte for byte) against a host AES-128, which is itself
 * checked against the FIPS-197 appendix C.1 test vector at start-up.
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

#define APP "aes"
#define MAX_DEVICES 64
#define APP_OPTS_DEFAULTS {.size = 262144, .iters = 1, .devices = 1, .seed = 1}
#define APP_SIZE_MAX (SIZE_MAX / 64)
#define LOCAL_SIZE 64
#define BLOCK 16
#define RK_BYTES 176 /* 11 round keys of 16 bytes */

/* The kernels live in tests/apps/aes.cl; the build turns that file into
 * a C string literal (build/gen/apps/aes_cl.h), which the unit tests
 * of the kernel analysis include too. */
static const char *kernel_source =
#include "apps/aes_cl.h"
    ;

/* ------------------------------------------------------------ options */

struct opts {
    size_t size;        /* 16-byte blocks */
    unsigned iters;     /* host loop repetitions */
    const char *device; /* --device or CLRR_APP_DEVICE; NULL: default */
    unsigned devices;   /* devices to split over */
    uint64_t seed;
    int quiet;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " APP " [--size N] [--iters K] [--device SPEC] [--devices M]\n"
            "           [--seed S] [--quiet] [--help]\n"
            "  --size N       16-byte blocks to encrypt, one per work-item (default 262144)\n"
            "  --iters K      repeat the host loop (write key and plaintext, encrypt, read\n"
            "                 back) K times with a new key and plaintext (default 1)\n"
            "  --device SPEC  device index over all platforms, cpu|gpu|accelerator, or a\n"
            "                 substring of the device or platform name (default: env\n"
            "                 CLRR_APP_DEVICE, else the first GPU, else the first device)\n"
            "  --devices M    split the blocks over M devices: the one SPEC designates\n"
            "                 and the next ones that match it (of the same type for an\n"
            "                 index or the default), in one context (default 1)\n"
            "  --seed S       seed of the generated inputs (default 1)\n"
            "  --quiet        print nothing on success\n");
}

#include "tests/apps/app_common.h"

/* ---------------------------------------------------------- host AES */

static const uint8_t sbox[256] = {
    0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76,
    0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0, 0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4, 0x72, 0xc0,
    0xb7, 0xfd, 0x93, 0x26, 0x36, 0x3f, 0xf7, 0xcc, 0x34, 0xa5, 0xe5, 0xf1, 0x71, 0xd8, 0x31, 0x15,
    0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a, 0x07, 0x12, 0x80, 0xe2, 0xeb, 0x27, 0xb2, 0x75,
    0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0, 0x52, 0x3b, 0xd6, 0xb3, 0x29, 0xe3, 0x2f, 0x84,
    0x53, 0xd1, 0x00, 0xed, 0x20, 0xfc, 0xb1, 0x5b, 0x6a, 0xcb, 0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf,
    0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85, 0x45, 0xf9, 0x02, 0x7f, 0x50, 0x3c, 0x9f, 0xa8,
    0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5, 0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2,
    0xcd, 0x0c, 0x13, 0xec, 0x5f, 0x97, 0x44, 0x17, 0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73,
    0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a, 0x90, 0x88, 0x46, 0xee, 0xb8, 0x14, 0xde, 0x5e, 0x0b, 0xdb,
    0xe0, 0x32, 0x3a, 0x0a, 0x49, 0x06, 0x24, 0x5c, 0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79,
    0xe7, 0xc8, 0x37, 0x6d, 0x8d, 0xd5, 0x4e, 0xa9, 0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08,
    0xba, 0x78, 0x25, 0x2e, 0x1c, 0xa6, 0xb4, 0xc6, 0xe8, 0xdd, 0x74, 0x1f, 0x4b, 0xbd, 0x8b, 0x8a,
    0x70, 0x3e, 0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e, 0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e,
    0xe1, 0xf8, 0x98, 0x11, 0x69, 0xd9, 0x8e, 0x94, 0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
    0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68, 0x41, 0x99, 0x2d, 0x0f, 0xb0, 0x54, 0xbb, 0x16,
};

/* FIPS-197 5.2: 16-byte key -> 11 round keys (176 bytes). */
static void expand_key(const uint8_t key[16], uint8_t rk[RK_BYTES])
{
    uint8_t rcon = 0x01;
    memcpy(rk, key, 16);
    for (int i = 16; i < RK_BYTES; i += 4) {
        uint8_t t[4] = {rk[i - 4], rk[i - 3], rk[i - 2], rk[i - 1]};
        if (i % 16 == 0) {
            uint8_t t0 = t[0];
            t[0] = sbox[t[1]] ^ rcon;
            t[1] = sbox[t[2]];
            t[2] = sbox[t[3]];
            t[3] = sbox[t0];
            rcon = (uint8_t)((rcon << 1) ^ ((rcon & 0x80) ? 0x1b : 0));
        }
        for (int j = 0; j < 4; j++)
            rk[i + j] = rk[i - 16 + j] ^ t[j];
    }
}

static uint8_t xtime(uint8_t b)
{
    return (uint8_t)((b << 1) ^ ((b & 0x80) ? 0x1b : 0x00));
}

static void add_round_key(uint8_t *s, const uint8_t *k)
{
    for (int i = 0; i < 16; i++)
        s[i] ^= k[i];
}

static void sub_bytes(uint8_t *s)
{
    for (int i = 0; i < 16; i++)
        s[i] = sbox[s[i]];
}

static void shift_rows(uint8_t *s)
{
    uint8_t t[16];
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++)
            t[r + 4 * c] = s[r + 4 * ((c + r) & 3)];
    memcpy(s, t, 16);
}

static void mix_columns(uint8_t *s)
{
    for (int c = 0; c < 4; c++) {
        uint8_t *col = s + 4 * c;
        uint8_t a0 = col[0], a1 = col[1], a2 = col[2], a3 = col[3];
        uint8_t all = a0 ^ a1 ^ a2 ^ a3;
        col[0] = a0 ^ all ^ xtime(a0 ^ a1);
        col[1] = a1 ^ all ^ xtime(a1 ^ a2);
        col[2] = a2 ^ all ^ xtime(a2 ^ a3);
        col[3] = a3 ^ all ^ xtime(a3 ^ a0);
    }
}

static void encrypt_block(const uint8_t rk[RK_BYTES], const uint8_t in[16], uint8_t out[16])
{
    uint8_t s[16];
    memcpy(s, in, 16);
    add_round_key(s, rk);
    for (int round = 1; round < 10; round++) {
        sub_bytes(s);
        shift_rows(s);
        mix_columns(s);
        add_round_key(s, rk + 16 * round);
    }
    sub_bytes(s);
    shift_rows(s);
    add_round_key(s, rk + 160);
    memcpy(out, s, 16);
}

/* FIPS-197 appendix C.1: the host implementation must reproduce it. */
static void self_test(void)
{
    static const uint8_t key[16] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
    static const uint8_t plain[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                      0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    static const uint8_t expect[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                       0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
    uint8_t rk[RK_BYTES], out[16];
    expand_key(key, rk);
    encrypt_block(rk, plain, out);
    if (memcmp(out, expect, 16) != 0) {
        fprintf(stderr, APP ": FAILED: host AES-128 does not reproduce FIPS-197 C.1\n");
        exit(1);
    }
}

/* ------------------------------------------------------------ workload */

/* One device's share: blocks [first, first + count). */
struct part {
    cl_device_id dev;
    cl_command_queue queue;
    cl_kernel kernel;
    cl_mem in, out; /* this part's blocks only */
    cl_mem rk;      /* round keys */
    size_t first, count;
};

struct app {
    struct opts o;
    cl_context ctx;
    cl_program prog;
    cl_mem sbox; /* shared, read-only */
    unsigned nparts;
    struct part part[MAX_DEVICES];
    char *label;
    uint8_t rk[RK_BYTES];
    uint8_t *plain, *cipher, *ref; /* size * 16 bytes each */
};

/* Contiguous work-group ranges, as even as possible, one per device. */
static void partition(struct app *a, const cl_device_id *devs)
{
    size_t groups = (a->o.size + LOCAL_SIZE - 1) / LOCAL_SIZE;
    for (unsigned d = 0; d < a->nparts; d++) {
        size_t g0 = groups * d / a->nparts, g1 = groups * (d + 1) / a->nparts;
        struct part *p = &a->part[d];
        p->dev = devs[d];
        p->first = g0 * LOCAL_SIZE;
        size_t end = g1 * LOCAL_SIZE < a->o.size ? g1 * LOCAL_SIZE : a->o.size;
        p->count = end > p->first ? end - p->first : 0;
    }
}

static void setup(struct app *a)
{
    cl_device_id devs[MAX_DEVICES];
    cl_int err;
    a->nparts = a->o.devices;
    open_context(a->o.device, a->nparts, devs, &a->ctx, NULL, &a->prog, &a->label);
    a->sbox = create_buffer(a->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof sbox,
                            (void *)sbox);
    partition(a, devs);
    for (unsigned d = 0; d < a->nparts; d++) {
        struct part *p = &a->part[d];
        p->queue = clCreateCommandQueueWithProperties(a->ctx, p->dev, NULL, &err);
        check(err, "clCreateCommandQueueWithProperties");
        p->kernel = clCreateKernel(a->prog, "aes128_encrypt", &err);
        check(err, "clCreateKernel");
        if (!p->count)
            continue;
        size_t bytes = mul_size(p->count, BLOCK);
        p->in = create_buffer(a->ctx, CL_MEM_READ_ONLY, bytes, NULL);
        p->out = create_buffer(a->ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
        p->rk = create_buffer(a->ctx, CL_MEM_READ_ONLY, RK_BYTES, NULL);
    }
    size_t bytes = mul_size(a->o.size, BLOCK);
    a->plain = xmalloc(bytes, 1);
    a->cipher = xmalloc(bytes, 1);
    a->ref = xmalloc(bytes, 1);
}

/* Key and plaintext of one iteration. */
static void make_inputs(struct app *a, uint64_t seed)
{
    struct xorshift r = xorshift_make(seed);
    uint8_t key[16];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)(xorshift_next(&r) >> 56);
    expand_key(key, a->rk);
    size_t bytes = a->o.size * BLOCK;
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t v = xorshift_next(&r);
        for (size_t j = 0; j < 8 && i + j < bytes; j++)
            a->plain[i + j] = (uint8_t)(v >> (8 * j));
    }
}

/* Writes key and plaintext, encrypts, reads back; returns the wall time in ms. */
static double run_iteration(struct app *a)
{
    cl_ulong n = a->o.size;
    double t0 = now_ms();
    for (unsigned d = 0; d < a->nparts; d++) {
        struct part *p = &a->part[d];
        if (!p->count)
            continue;
        size_t off = p->first * BLOCK, bytes = p->count * BLOCK;
        check(clEnqueueWriteBuffer(p->queue, p->rk, CL_FALSE, 0, RK_BYTES, a->rk, 0, NULL, NULL),
              "clEnqueueWriteBuffer");
        check(clEnqueueWriteBuffer(p->queue, p->in, CL_FALSE, 0, bytes, a->plain + off, 0, NULL,
                                   NULL),
              "clEnqueueWriteBuffer");
        check(clSetKernelArg(p->kernel, 0, sizeof p->in, &p->in), "clSetKernelArg");
        check(clSetKernelArg(p->kernel, 1, sizeof p->out, &p->out), "clSetKernelArg");
        check(clSetKernelArg(p->kernel, 2, sizeof p->rk, &p->rk), "clSetKernelArg");
        check(clSetKernelArg(p->kernel, 3, sizeof a->sbox, &a->sbox), "clSetKernelArg");
        check(clSetKernelArg(p->kernel, 4, sizeof n, &n), "clSetKernelArg");
        size_t offset = p->first, local = LOCAL_SIZE;
        size_t global = (p->count + LOCAL_SIZE - 1) / LOCAL_SIZE * LOCAL_SIZE;
        check(clEnqueueNDRangeKernel(p->queue, p->kernel, 1, &offset, &global, &local, 0, NULL,
                                     NULL),
              "clEnqueueNDRangeKernel");
        check(clEnqueueReadBuffer(p->queue, p->out, CL_FALSE, 0, bytes, a->cipher + off, 0, NULL,
                                  NULL),
              "clEnqueueReadBuffer");
    }
    for (unsigned d = 0; d < a->nparts; d++)
        check(clFinish(a->part[d].queue), "clFinish");
    return now_ms() - t0;
}

static int verify(const struct app *a, unsigned iter)
{
    for (size_t b = 0; b < a->o.size; b++)
        encrypt_block(a->rk, a->plain + b * BLOCK, a->ref + b * BLOCK);
    for (size_t i = 0; i < a->o.size * BLOCK; i++) {
        if (a->cipher[i] != a->ref[i]) {
            fprintf(stderr,
                    APP ": FAILED: iteration %u: block %zu byte %zu: got 0x%02x, expected "
                        "0x%02x\n",
                    iter, i / BLOCK, i % BLOCK, a->cipher[i], a->ref[i]);
            return 1;
        }
    }
    return 0;
}

static void teardown(struct app *a)
{
    for (unsigned d = 0; d < a->nparts; d++) {
        struct part *p = &a->part[d];
        if (p->count) {
            check(clReleaseMemObject(p->in), "clReleaseMemObject");
            check(clReleaseMemObject(p->out), "clReleaseMemObject");
            check(clReleaseMemObject(p->rk), "clReleaseMemObject");
        }
        check(clReleaseKernel(p->kernel), "clReleaseKernel");
        check(clReleaseCommandQueue(p->queue), "clReleaseCommandQueue");
    }
    check(clReleaseMemObject(a->sbox), "clReleaseMemObject");
    check(clReleaseProgram(a->prog), "clReleaseProgram");
    check(clReleaseContext(a->ctx), "clReleaseContext");
    free(a->plain);
    free(a->cipher);
    free(a->ref);
    free(a->label);
}

int main(int argc, char **argv)
{
    struct app a = {0};
    parse_opts(argc, argv, &a.o);
    self_test();
    setup(&a);
    double ms = 0.0;
    int failed = 0;
    for (unsigned it = 0; it < a.o.iters && !failed; it++) {
        make_inputs(&a, iter_seed(a.o.seed, it));
        ms += run_iteration(&a);
        failed = verify(&a, it);
    }
    if (!failed && !a.o.quiet)
        printf(APP ": ok size=%zu iters=%u device=\"%s\" ocl_ms=%.3f\n", a.o.size, a.o.iters,
               a.label, ms);
    teardown(&a);
    return failed;
}
