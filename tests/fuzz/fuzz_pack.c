/* fuzz_pack.c — converts between traces and fuzz inputs (fuzz.h), and
 * reseals traces; a tool for making seeds (tests/fuzz/seeds.sh) and the
 * corrupt traces of tests/corrupt/ (make.py). Inputs are trusted.
 *
 *   fuzz-pack [-p BYTES] [-s MAX] IN.clrr OUT
 *       a trace into the 'S' layout: every RECORD chunk becomes an 'R'
 *       section of its decompressed records, every BLOB chunk a 'B' section
 *       (extension + piece; 'Y' when it was byte-shuffled, codec 2), the index an 'I' section with no bytes
 *       (generated again when the input is written); other chunks and a
 *       torn last chunk are dropped.
 *       -p BYTES  bytes before 'S', comma-separated numbers (the replay
 *                 target's options byte and its arguments)
 *       -s MAX    cut every blob to at most MAX bytes, and its references
 *                 in the records with it (so that seeds stay small; the
 *                 calls still say the old sizes: the replay pads or
 *                 reports them)
 *   fuzz-pack -u [-k N] IN OUT
 *       the trace file that fuzz input IN stands for (fuzz_write_trace),
 *       after skipping N leading bytes (1: the replay target's options)
 *   fuzz-pack -r FILE
 *       reseals FILE in place: recomputes the file header check, the
 *       payload and header checks of every chunk that fits in the file,
 *       and the trailer check (when the last 32 bytes have its magic)
 * Exit status 0, 1 on error (one line on stderr). */
#include "tests/fuzz/fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

static uint64_t fp_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void fp_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

static void fp_section(FILE *f, char tag, const void *p, size_t n)
{
    uint8_t h[FUZZ_SEC_HDR] = { (uint8_t)tag, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24) };
    fwrite(h, 1, sizeof h, f);
    fwrite(p, 1, n, f);
}

#define FP_USAGE "usage: fuzz-pack [-p BYTES] [-s MAX] IN.clrr OUT | -u [-k N] IN OUT | -r FILE"

static int fp_fail(const char *what)
{
    fprintf(stderr, "fuzz_pack: %s\n", what);
    return 1;
}

static void fp_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

/* The whole of @p path in *len bytes (malloc'd), or NULL. */
static uint8_t *fp_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    long n;
    uint8_t *d = NULL;

    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (d = malloc(n ? (size_t)n : 1)) != NULL && fread(d, 1, (size_t)n, f) == (size_t)n) {
        *len = (size_t)n;
    } else {
        free(d);
        d = NULL;
    }
    if (f)
        fclose(f);
    return d;
}

/* -u: the trace an input stands for. */
static int fp_unpack(const char *in, const char *out, size_t skip)
{
    size_t n;
    uint8_t *d = fp_slurp(in, &n);
    int fd, rc;

    if (!d || n < skip)
        return fp_fail("cannot read the input");
    if ((fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0)
        return fp_fail("cannot create the output");
    rc = fuzz_write_trace(fd, d + skip, n - skip);
    free(d);
    if (close(fd) != 0 || rc != 0)
        return fp_fail("cannot write the output");
    return 0;
}

/* -r: every check recomputed from the bytes as they are. */
static int fp_reseal(const char *path)
{
    size_t n, off;
    uint8_t *t = fp_slurp(path, &n);
    FILE *f;

    if (!t || n < 32)
        return fp_fail("cannot read the trace");
    fp_put32(t + 28, (uint32_t)XXH3_64bits(t, 28));
    for (off = (size_t)(t[14] | t[15] << 8); off + 40 <= n && !memcmp(t + off, "\x89" "CHK", 4);) {
        uint8_t *h = t + off;
        size_t ext = (size_t)(h[6] | h[7] << 8);
        uint64_t stored = fp_get64(h + 8);
        if (off + 40 + ext > n || stored > n - off - 40 - ext)
            break;
        fp_put64(h + 24, XXH3_64bits(h + 40 + ext, (size_t)stored));
        memset(h + 36, 0, 4);
        fp_put32(h + 36, (uint32_t)XXH3_64bits(h, 40 + ext));
        off += 40 + ext + (size_t)stored;
    }
    if (n >= 64 && !memcmp(t + n - 32, "\x89" "CLRRIDX", 8))
        fp_put32(t + n - 4, (uint32_t)XXH3_64bits(t + n - 32, 28));
    if ((f = fopen(path, "wb")) == NULL || fwrite(t, 1, n, f) != n || fclose(f) != 0)
        return fp_fail("cannot write the trace");
    free(t);
    return 0;
}

/* Cuts blob references (msgpack ext 1 of 24 bytes: c7 18 01, hash, size
 * u64 LE) to @p max bytes. */
static void fp_cut_refs(uint8_t *p, size_t n, uint64_t max)
{
    for (size_t i = 0; i + 27 <= n; i++)
        if (p[i] == 0xc7 && p[i + 1] == 0x18 && p[i + 2] == 0x01 && fp_get64(p + i + 19) > max) {
            fp_put64(p + i + 19, max);
            i += 26;
        }
}

/* Undoes codec 2's byte shuffle in place: byte k of element e was stored
 * at k * (n / 4) + e; the last n % 4 bytes stayed where they were. */
static int fp_unshuffle4(uint8_t *p, size_t n)
{
    size_t m = n / 4;
    uint8_t *t = malloc(n ? n : 1);

    if (!t)
        return -1;
    memcpy(t, p, n);
    for (size_t i = 0; i < 4 * m; i++)
        p[i] = t[(i % 4) * m + i / 4];
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    uint8_t prefix[16];
    int nprefix = 0, c, unpack = 0, reseal = 0;
    uint64_t max = UINT64_MAX;
    size_t skip = 0;
    char *p, *end;

    while ((c = getopt(argc, argv, "p:s:uk:r")) != -1) {
        if (c == 'u') {
            unpack = 1;
        } else if (c == 'k') {
            skip = strtoul(optarg, NULL, 0);
        } else if (c == 'r') {
            reseal = 1;
        } else if (c == 'p') {
            for (p = optarg; *p && nprefix < (int)sizeof prefix; p = *end ? end + 1 : end) {
                prefix[nprefix++] = (uint8_t)strtoul(p, &end, 0);
                if (end == p)
                    return fp_fail("-p: not a list of numbers");
            }
        } else if (c == 's') {
            max = strtoull(optarg, NULL, 0);
        } else {
            return fp_fail(FP_USAGE);
        }
    }
    if (reseal)
        return argc - optind == 1 ? fp_reseal(argv[optind]) : fp_fail(FP_USAGE);
    if (argc - optind != 2)
        return fp_fail(FP_USAGE);
    if (unpack)
        return fp_unpack(argv[optind], argv[optind + 1], skip);
    FILE *in = fopen(argv[optind], "rb");
    if (!in)
        return fp_fail("cannot open the input");
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    uint8_t *t = malloc(size > 0 ? (size_t)size : 1);
    if (!t || fread(t, 1, (size_t)size, in) != (size_t)size)
        return fp_fail("cannot read the input");
    fclose(in);
    if (size < 32 || memcmp(t, "\x89" "CLRR", 5) != 0)
        return fp_fail("not a trace");
    FILE *out = fopen(argv[optind + 1], "wb");
    if (!out)
        return fp_fail("cannot create the output");
    fwrite(prefix, 1, (size_t)nprefix, out);
    fputc('S', out);
    size_t off = (size_t)(t[14] | t[15] << 8);
    while (off + 40 <= (size_t)size && !memcmp(t + off, "\x89" "CHK", 4)) {
        const uint8_t *h = t + off;
        size_t ext = (size_t)(h[6] | h[7] << 8);
        uint64_t stored = fp_get64(h + 8), raw = fp_get64(h + 16);
        const uint8_t *p = h + 40 + ext;
        if (off + 40 + ext + stored > (size_t)size)
            break;                                  /* a torn last chunk */
        uint8_t *buf = malloc(32 + raw + 1);
        if (!buf)
            return fp_fail("out of memory");
        if (h[5] == 1 || h[5] == 2) {
            size_t k = ZSTD_decompress(buf + 32, raw, p, stored);
            if (ZSTD_isError(k) || k != raw)
                return fp_fail("a zstd payload does not decompress");
            if (h[5] == 2 && fp_unshuffle4(buf + 32, raw) != 0)   /* FORMAT.md 3.2 */
                return fp_fail("out of memory");
        } else {
            memcpy(buf + 32, p, stored);
        }
        if (h[4] == 1) {
            fp_cut_refs(buf + 32, raw, max);
            fp_section(out, 'R', buf + 32, raw);
        } else if (h[4] == 2 && ext >= 32) {
            uint64_t bsize = fp_get64(h + 56), poff = fp_get64(h + 64);
            memcpy(buf, h + 40, 32);
            if (bsize > max) {
                fp_put64(buf + 16, max);
                raw = poff >= max ? 0 : raw < max - poff ? raw : max - poff;
            }
            if (raw > 0)
                fp_section(out, h[5] == 2 ? 'Y' : 'B', buf, 32 + raw);
        } else if (h[4] == 3) {
            fp_section(out, 'I', buf, 0);
        }
        free(buf);
        off += 40 + ext + stored;
    }
    free(t);
    if (fclose(out) != 0)
        return fp_fail("cannot write the output");
    return 0;
}
