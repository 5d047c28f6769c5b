/* test_cdb.c — the cost database (costs/cdb.h, costs/COSTS.md): records
 * added read back the same after a flush and a reopen; appends keep one
 * header; the robust statistics (outliers, too few samples, the window of
 * the latest samples); curves interpolated, extrapolated and never
 * decreasing; the transfer fit on exact data; device specs resolved on a
 * snapshot; a cut last line skipped and closed by the next append; a table
 * of malformed files, each refused with "path:line:"; other versions;
 * random mutations never crash; the default path and identities. */
#include <CUnit/Basic.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "costs/cdb.h"

static char dir[] = "/tmp/test_cdb.XXXXXX";
static int serial;

/* A fresh path in the temporary folder. */
static const char *tpath(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%d-%s", dir, serial++, name);
    return buf;
}

static void put_file(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT(fwrite(text, 1, n, f) == n);
    fclose(f);
}

/* The file's contents (NUL-terminated, caller frees); *n its length. */
static char *get_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = malloc(1 << 20);
    *n = fread(b, 1, (1 << 20) - 1, f);
    b[*n] = 0;
    fclose(f);
    return b;
}

static cdb_key key(const char *kernel, uint64_t g0)
{
    cdb_key k;
    memset(&k, 0, sizeof k);
    for (int i = 0; i < 16; i++)
        k.program[i] = (uint8_t)(0xa0 + i);
    k.kernel = kernel;
    k.dim = 1;
    k.gsz[0] = g0;
    k.gsz[1] = k.gsz[2] = 1;
    k.lsz[0] = 64;
    k.lsz[1] = k.lsz[2] = 1;
    return k;
}

static const char *GPU = "NVIDIA H100 | NVIDIA CUDA | 550.54 | 132 CU";
static const char *CPU = "Xeon | Portable Computing Language | 5.0 | 32 CU";

static void fill(cdb *db)
{
    cdb_key k = key("scale", 1 << 20);
    for (int r = 0; r < 5; r++) {
        CU_ASSERT(cdb_add_kernel(db, GPU, &k, 1024, 10000 + (uint64_t)r) == CDB_OK);
        CU_ASSERT(cdb_add_kernel(db, GPU, &k, 2048, 19000 + (uint64_t)r) == CDB_OK);
        CU_ASSERT(cdb_add_kernel(db, GPU, &k, 4096, 37000 + (uint64_t)r) == CDB_OK);
        CU_ASSERT(cdb_add_kernel(db, CPU, &k, 4096, 900000 + (uint64_t)r) == CDB_OK);
        for (uint64_t b = 4096; b <= (1u << 24); b *= 8) {
            CU_ASSERT(cdb_add_xfer(db, GPU, CDB_H2D, b, 5000 + b / 10) == CDB_OK);
            CU_ASSERT(cdb_add_xfer(db, GPU, CDB_D2H, b, 6000 + b / 12) == CDB_OK);
        }
    }
    cdb_device devs[3] = {{CPU, "cpu", "Xeon", "Portable Computing Language"},
                          {GPU, "gpu", "NVIDIA H100 80GB HBM3", "NVIDIA CUDA"},
                          {"NVIDIA H200 | NVIDIA CUDA | 550.54 | 132 CU", "gpu", "NVIDIA H200", "NVIDIA CUDA"}};
    CU_ASSERT(cdb_set_devices(db, devs, 3) == CDB_OK);
}

static int same_curve(const cdb_curve *a, const cdb_curve *b)
{
    if (a->n != b->n)
        return 0;
    for (unsigned i = 0; i < a->n; i++)
        if (a->groups[i] != b->groups[i] || a->ns[i] != b->ns[i] || a->samples[i] != b->samples[i])
            return 0;
    return 1;
}

static void test_roundtrip(void)
{
    char p[512], err[512];
    snprintf(p, sizeof p, "%s/a/b/costs", dir);   /* its folders are made by the flush */
    cdb *db, *db2;
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(!strcmp(cdb_path(db), p) && cdb_device_count(db) == 0);
    cdb_key k = key("scale", 1 << 20);
    cdb_curve c, c2;
    CU_ASSERT(!cdb_kernel_curve(db, GPU, &k, &c));
    fill(db);
    CU_ASSERT_FATAL(cdb_kernel_curve(db, GPU, &k, &c));
    CU_ASSERT(c.n == 3 && c.groups[0] == 1024 && c.groups[2] == 4096 && c.ns[0] == 10002 && c.samples[1] == 5);
    double lat, nspb, lat2, nspb2;
    CU_ASSERT(cdb_xfer(db, GPU, CDB_H2D, &lat, &nspb));
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);   /* nothing pending */
    CU_ASSERT_FATAL(cdb_open(p, &db2, err, sizeof err) == CDB_OK);
    CU_ASSERT_FATAL(cdb_kernel_curve(db2, GPU, &k, &c2));
    CU_ASSERT(same_curve(&c, &c2));
    CU_ASSERT(cdb_kernel_curve(db2, CPU, &k, &c2) && c2.n == 1 && c2.ns[0] == 900002);
    CU_ASSERT(cdb_xfer(db2, GPU, CDB_H2D, &lat2, &nspb2) && lat == lat2 && nspb == nspb2);
    CU_ASSERT(cdb_xfer(db2, GPU, CDB_D2H, &lat2, &nspb2) && lat2 > 5900 && lat2 < 6100);
    CU_ASSERT(!cdb_xfer(db2, CPU, CDB_H2D, &lat2, &nspb2));
    CU_ASSERT(cdb_device_count(db2) == 3 && !strcmp(cdb_device_at(db2, 1)->identity, GPU) &&
              !strcmp(cdb_device_at(db2, 2)->name, "NVIDIA H200") && cdb_device_at(db2, 3) == NULL);
    /* another key, another kernel, sizes beyond dim ignored */
    cdb_key o = key("scale", 1 << 19), q = k;
    q.gsz[1] = 77;
    q.lsz[2] = 5;
    CU_ASSERT(!cdb_kernel_curve(db2, GPU, &o, &c2));
    CU_ASSERT(cdb_kernel_curve(db2, GPU, &q, &c2) && c2.n == 3);
    q.kernel = "other";
    CU_ASSERT(!cdb_kernel_curve(db2, GPU, &q, &c2));
    cdb_close(db);
    cdb_close(db2);
    cdb_close(NULL);
    size_t n;
    char *t = get_file(p, &n);
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT(!strncmp(t, "clrr-costs\t1\nk\t", 15) && t[n - 1] == '\n');
    free(t);
}

static void test_append_twice(void)
{
    char p[512], err[512];
    tpath(p, sizeof p, "twice");
    cdb *db, *db2;
    cdb_key k = key("k", 64);
    cdb_curve c;
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    CU_ASSERT_FATAL(cdb_open(p, &db2, err, sizeof err) == CDB_OK);   /* a second writer, opened before */
    for (int i = 0; i < 2; i++)
        CU_ASSERT(cdb_add_kernel(db, GPU, &k, 1, 100) == CDB_OK);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);
    CU_ASSERT(!cdb_kernel_curve(db, GPU, &k, &c));   /* 2 samples: not trusted */
    CU_ASSERT(cdb_add_kernel(db, GPU, &k, 1, 100) == CDB_OK);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_add_kernel(db2, GPU, &k, 1, 100) == CDB_OK);
    CU_ASSERT(cdb_flush(db2, err, sizeof err) == CDB_OK);
    cdb_close(db);
    cdb_close(db2);
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_kernel_curve(db, GPU, &k, &c) && c.n == 1 && c.samples[0] == 4 && c.ns[0] == 100);
    cdb_close(db);
    size_t n;
    char *t = get_file(p, &n);
    CU_ASSERT(t && strstr(t, "clrr-costs") == t && !strstr(t + 1, "clrr-costs"));
    free(t);
}

/* Four processes appending at once: no line is torn, every sample is there. */
static void test_concurrent(void)
{
    char p[512], err[512];
    tpath(p, sizeof p, "concurrent");
    cdb_key k = key("c", 64);
    pid_t kids[4];
    for (int c = 0; c < 4; c++) {
        if ((kids[c] = fork()) == 0) {
            cdb *db;
            int bad = cdb_open(p, &db, err, sizeof err) != CDB_OK;
            for (int i = 0; i < 50 && !bad; i++) {
                for (int r = 0; r < 3; r++)
                    bad |= cdb_add_kernel(db, GPU, &k, (uint64_t)(c * 1000 + i + 1), 100) != CDB_OK;
                bad |= cdb_flush(db, err, sizeof err) != CDB_OK;
            }
            cdb_close(db);
            _exit(bad);
        }
        CU_ASSERT_FATAL(kids[c] > 0);
    }
    for (int c = 0; c < 4; c++) {
        int ws;
        CU_ASSERT(waitpid(kids[c], &ws, 0) == kids[c] && WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    }
    cdb *db;
    cdb_curve c;
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_kernel_curve(db, GPU, &k, &c) && c.n == 200);
    cdb_close(db);
}

static void test_robust(void)
{
    char p[512], err[512];
    cdb *db;
    cdb_curve c;
    cdb_key k = key("r", 64);
    CU_ASSERT_FATAL(cdb_open(tpath(p, sizeof p, "robust"), &db, err, sizeof err) == CDB_OK);
    static const uint64_t xs[] = {100, 101, 99, 102, 98, 10000};
    for (unsigned i = 0; i < 6; i++)
        CU_ASSERT(cdb_add_kernel(db, GPU, &k, 8, xs[i]) == CDB_OK);
    CU_ASSERT(cdb_kernel_curve(db, GPU, &k, &c) && c.n == 1 && c.ns[0] == 100 && c.samples[0] == 5);
    /* identical samples and one far away: the floor keeps them */
    for (unsigned i = 0; i < 5; i++)
        CU_ASSERT(cdb_add_kernel(db, GPU, &k, 16, 500) == CDB_OK);
    CU_ASSERT(cdb_add_kernel(db, GPU, &k, 16, 50000) == CDB_OK);
    CU_ASSERT(cdb_kernel_curve(db, GPU, &k, &c) && c.n == 2 && c.groups[1] == 16 && c.ns[1] == 500 &&
              c.samples[1] == 5);
    /* a point with two samples is not part of the curve */
    CU_ASSERT(cdb_add_kernel(db, GPU, &k, 32, 900) == CDB_OK && cdb_add_kernel(db, GPU, &k, 32, 900) == CDB_OK);
    CU_ASSERT(cdb_kernel_curve(db, GPU, &k, &c) && c.n == 2);
    /* the window: CDB_KEEP old samples, then a drifted device's new ones win */
    for (int i = 0; i < CDB_KEEP; i++)
        CU_ASSERT(cdb_add_kernel(db, GPU, &k, 64, 1000) == CDB_OK);
    CU_ASSERT(cdb_kernel_curve(db, GPU, &k, &c) && c.n == 3 && c.ns[2] == 1000 && c.samples[2] == CDB_KEEP);
    for (int i = 0; i < CDB_KEEP / 2 + 1; i++)
        CU_ASSERT(cdb_add_kernel(db, GPU, &k, 64, 2000) == CDB_OK);
    CU_ASSERT(cdb_kernel_curve(db, GPU, &k, &c) && c.ns[2] == 2000);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);
    cdb_close(db);
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);   /* file order is time order */
    CU_ASSERT(cdb_kernel_curve(db, GPU, &k, &c) && c.n == 3 && c.ns[2] == 2000 && c.ns[0] == 100);
    cdb_close(db);
}

static void test_curve_at(void)
{
    uint64_t g[3] = {10, 20, 40};
    double y[3] = {100, 200, 300};
    unsigned s[3] = {3, 3, 3};
    cdb_curve c = {3, g, y, s}, one = {1, g, y, s}, none = {0, NULL, NULL, NULL};
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&c, 10), 100, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&c, 15), 150, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&c, 30), 250, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&c, 40), 300, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&c, 5), 50, 1e-9);     /* the first two points' line */
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&c, 0), 0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&c, -5), 0, 1e-9);     /* clamped */
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&c, 80), 500, 1e-9);   /* the last two points' slope */
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&one, 20), 200, 1e-9); /* time per group */
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&one, 5), 50, 1e-9);
    CU_ASSERT(cdb_curve_at(&none, 100) == 0 && cdb_curve_at(NULL, 1) == 0);
    /* a point below an earlier one: never decreasing */
    double z[3] = {100, 80, 300};
    cdb_curve m = {3, g, z, s};
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&m, 20), 100, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&m, 15), 100, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&m, 30), 200, 1e-9);
    double w[3] = {300, 200, 100};   /* decreasing all along: flat */
    cdb_curve d = {3, g, w, s};
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&d, 80), 300, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cdb_curve_at(&d, 1), 300, 1e-9);
    const cdb_curve *all[] = {&c, &one, &m, &d};
    for (int i = 0; i < 4; i++) {
        double prev = -1;
        for (double x = -10; x < 100; x += 0.5) {
            double v = cdb_curve_at(all[i], x);
            CU_ASSERT(v >= prev && v >= 0);
            prev = v;
        }
    }
}

static void test_xfer_fit(void)
{
    char p[512], err[512];
    cdb *db;
    double lat, nspb;
    CU_ASSERT_FATAL(cdb_open(tpath(p, sizeof p, "xfer"), &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(!cdb_xfer(db, GPU, CDB_H2D, &lat, &nspb));
    for (int r = 0; r < 3; r++)
        CU_ASSERT(cdb_add_xfer(db, GPU, CDB_H2D, 1 << 20, 5000 + (1 << 20) / 10) == CDB_OK);
    CU_ASSERT(!cdb_xfer(db, GPU, CDB_H2D, &lat, &nspb));   /* one size */
    for (uint64_t b = 1024; b <= (1u << 28); b *= 4)
        for (int r = 0; r < 3; r++)
            CU_ASSERT(cdb_add_xfer(db, GPU, CDB_H2D, b, 5000 + b / 10) == CDB_OK);
    CU_ASSERT_FATAL(cdb_xfer(db, GPU, CDB_H2D, &lat, &nspb));
    CU_ASSERT(lat > 4950 && lat < 5050);
    CU_ASSERT(nspb > 0.099 && nspb < 0.101);
    CU_ASSERT(!cdb_xfer(db, GPU, CDB_D2H, &lat, &nspb));
    /* times that fall with size (noise): the largest size's time per byte, the smallest's as latency */
    for (int r = 0; r < 3; r++) {
        CU_ASSERT(cdb_add_xfer(db, CPU, CDB_D2H, 100, 9000) == CDB_OK);
        CU_ASSERT(cdb_add_xfer(db, CPU, CDB_D2H, 1000, 8000) == CDB_OK);
    }
    CU_ASSERT(cdb_xfer(db, CPU, CDB_D2H, &lat, &nspb) && lat == 9000 && nspb == 8.0);
    CU_ASSERT(cdb_add_xfer(db, GPU, 2, 100, 1) == CDB_ERR_ARG && cdb_add_xfer(db, GPU, 0, 0, 1) == CDB_ERR_ARG);
    cdb_close(db);
}

static void test_resolve(void)
{
    char p[512], err[512];
    cdb *db;
    CU_ASSERT_FATAL(cdb_open(tpath(p, sizeof p, "resolve"), &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_resolve(db, "gpu", err, sizeof err) == -1 && strstr(err, "no device snapshot in ") &&
              strstr(err, "run clrr profile"));
    cdb_device one = {"x", "gpu", "Old", "P"};
    CU_ASSERT(cdb_set_devices(db, &one, 1) == CDB_OK);
    fill(db);   /* a later snapshot replaces it */
    for (int pass = 0; pass < 2; pass++) {
        CU_ASSERT(cdb_resolve(db, "0", err, sizeof err) == 0);
        CU_ASSERT(cdb_resolve(db, "2", err, sizeof err) == 2);
        CU_ASSERT(cdb_resolve(db, "3", err, sizeof err) == -1 && strstr(err, "there are 3 devices"));
        CU_ASSERT(cdb_resolve(db, "gpu1", err, sizeof err) == 2);
        CU_ASSERT(cdb_resolve(db, "GPU0", err, sizeof err) == 1);
        CU_ASSERT(cdb_resolve(db, "cpu0", err, sizeof err) == 0);
        CU_ASSERT(cdb_resolve(db, "gpu2", err, sizeof err) == -1 && strstr(err, "there are 2 gpu devices"));
        CU_ASSERT(cdb_resolve(db, "cpu1", err, sizeof err) == -1 && strstr(err, "there is 1 cpu device"));
        CU_ASSERT(cdb_resolve(db, "gpu", err, sizeof err) == 1);
        CU_ASSERT(cdb_resolve(db, "Cpu", err, sizeof err) == 0);
        CU_ASSERT(cdb_resolve(db, "accelerator", err, sizeof err) == -1 && strstr(err, "no accelerator device"));
        CU_ASSERT(cdb_resolve(db, "h200", err, sizeof err) == 2);
        CU_ASSERT(cdb_resolve(db, "portable", err, sizeof err) == 0);
        CU_ASSERT(cdb_resolve(db, "cuda", err, sizeof err) == 1);
        CU_ASSERT(cdb_resolve(db, "Old", err, sizeof err) == -1 && strstr(err, "no device in"));
        CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);
        cdb_close(db);
        CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);   /* the same from the file */
    }
    cdb_device bad = {"x", "gpu", "a\tb", "P"};
    CU_ASSERT(cdb_set_devices(db, &bad, 1) == CDB_ERR_ARG && cdb_set_devices(db, &one, 0) == CDB_ERR_ARG);
    CU_ASSERT(cdb_device_count(db) == 3);
    cdb_close(db);
}

static const char *HDR = "clrr-costs\t1\n";
static const char *KLINE = "k\tdev A\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1\t4\t1000\t1700000000\n";

static void test_cut_line(void)
{
    char p[512], err[512], text[2048];
    cdb *db;
    cdb_curve c;
    cdb_key k = key("kern", 256);
    for (int i = 0; i < 16; i++)
        k.program[i] = (uint8_t)i;
    /* three samples, a snapshot, then a write cut short in a second snapshot */
    snprintf(text, sizeof text, "%s%s%s%ss\t1\t1\nd\t0\tgpu\tdev A\tA\tP\ns\t1\t2\nd\t0\tcpu\tdev B\tB\tP\nd\t1\tgp", HDR,
             KLINE, KLINE, KLINE);
    put_file(tpath(p, sizeof p, "cut"), text, strlen(text));
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_kernel_curve(db, "dev A", &k, &c) && c.samples[0] == 3 && c.ns[0] == 1000);
    CU_ASSERT(cdb_device_count(db) == 1 && !strcmp(cdb_device_at(db, 0)->name, "A"));
    /* the next append closes the cut line (CAN) and the file reads again */
    CU_ASSERT(cdb_add_kernel(db, "dev A", &k, 4, 1000) == CDB_OK);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);
    cdb_close(db);
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_kernel_curve(db, "dev A", &k, &c) && c.samples[0] == 4 && cdb_device_count(db) == 1);
    cdb_close(db);
    size_t n;
    char *t = get_file(p, &n);
    CU_ASSERT(t && strstr(t, "\tgp\x18\nk\t"));
    free(t);
    /* a file cut while its header was written: empty, and made right by the next flush */
    put_file(tpath(p, sizeof p, "cuthdr"), "clrr-co", 7);
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_add_kernel(db, "dev A", &k, 4, 1000) == CDB_OK && cdb_flush(db, err, sizeof err) == CDB_OK);
    cdb_close(db);
    CU_ASSERT(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    cdb_close(db);
    /* a file that is not ours is not appended to */
    put_file(tpath(p, sizeof p, "foreign"), "hello\n", 6);
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_ERR_FORMAT && !db);
    CU_ASSERT(cdb_open(tpath(p, sizeof p, "foreign2"), &db, err, sizeof err) == CDB_OK);
    put_file(p, "hello\n", 6);
    CU_ASSERT(cdb_add_kernel(db, "dev A", &k, 4, 1000) == CDB_OK);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_ERR_FORMAT && strstr(err, "not a clrr cost database"));
    cdb_close(db);
    t = get_file(p, &n);
    CU_ASSERT(t && n == 6);
    free(t);
}

static void test_malformed(void)
{
    static const struct { const char *body; size_t line; const char *what; } cases[] = {
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1\t4\t10x0\t1\n", 2, "NS is not a number"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1\t4\t1000\n", 2, "10 fields expected, 9"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1\t4\t1000\t1\t\n", 2, "10 fields"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1\t18446744073709551616\t1\t1\n", 2,
         "GROUPS is not a number"},
        {"k\t\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1\t4\t1000\t1\n", 2, "empty device identity"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t4\t256,1,1\t64,1,1\t4\t1000\t1\n", 2, "DIM 4"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1\t0\t1000\t1\n", 2, "GROUPS is 0"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1\t4\t0\t1\n", 2, "NS is 0"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0g\tkern\t1\t256,1,1\t64,1,1\t4\t9\t1\n", 2, "32 hexadecimal"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1\t64,1,1\t4\t9\t1\n", 2, "three numbers"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1,1\t4\t9\t1\n", 2, "three numbers"},
        {"k\tdev\t000102030405060708090a0b0c0d0e0f\tkern\t1\t256,1,1\t64,1,1\t+4\t9\t1\n", 2, "not a number"},
        {"x\tdev\tup\t100\t100\t1\n", 2, "not h2d or d2h"},
        {"x\tdev\th2d\t0\t100\t1\n", 2, "BYTES is 0"},
        {"# fine\n\n", 3, "empty line"},
        {"K\tdev\n", 2, "not a record"},
        {"kx\tdev\n", 2, "not a record"},
        {"d\t0\tgpu\tdev\tn\tp\n", 2, "outside a snapshot"},
        {"s\t1\t2\nd\t0\tgpu\tdev\tn\tp\nk\tdev\n", 4, "announces 2 devices, 1 found"},
        {"s\t1\t2\nd\t0\tgpu\tdev\tn\tp\n", 2, "announces 2 devices, 1 found"},
        {"s\t1\t1\nd\t1\tgpu\tdev\tn\tp\n", 3, "index 1, 0 expected"},
        {"s\t1\t0\n", 2, "0 devices"},
        {"s\t1\t99999\n", 2, "99999 devices"},
        {"clrr-costs\t3\n", 2, "version 3"},
        {NULL, 3, "NUL byte"},
    };
    static const char nul[] = "x\tdev\th2d\t1\t1\t1\nx\tde\0v\th2d\t1\t1\t1\n";
    char p[512], err[512], text[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *body = cases[i].body ? cases[i].body : nul;
        size_t bl = cases[i].body ? strlen(body) : sizeof nul - 1;
        memcpy(text, HDR, strlen(HDR));
        memcpy(text + strlen(HDR), body, bl);
        put_file(tpath(p, sizeof p, "bad"), text, strlen(HDR) + bl);
        cdb *db = (cdb *)1;
        err[0] = 0;
        CU_ASSERT(cdb_open(p, &db, err, sizeof err) == CDB_ERR_FORMAT && db == NULL);
        char where[600];
        snprintf(where, sizeof where, "%s:%zu: ", p, cases[i].line);
        int ok = !strncmp(err, where, strlen(where)) && strstr(err, cases[i].what);
        if (!ok)
            printf("\n  case %zu: '%s'\n", i, err);
        CU_ASSERT(ok);
    }
    /* no header, another major version; minor versions, comments, repeated headers, unknown records read */
    cdb *db;
    put_file(tpath(p, sizeof p, "nohdr"), KLINE, strlen(KLINE));
    CU_ASSERT(cdb_open(p, &db, err, sizeof err) == CDB_ERR_FORMAT && strstr(err, ":1: not a clrr cost database"));
    put_file(tpath(p, sizeof p, "v2"), "clrr-costs\t2\n", 13);
    CU_ASSERT(cdb_open(p, &db, err, sizeof err) == CDB_ERR_FORMAT && strstr(err, ":1: ") &&
              strstr(err, "version 2; this clrr reads version 1"));
    put_file(tpath(p, sizeof p, "v2x"), "clrr-costs\t1x\n", 14);
    CU_ASSERT(cdb_open(p, &db, err, sizeof err) == CDB_ERR_FORMAT && strstr(err, "bad format version"));
    snprintf(text, sizeof text, "clrr-costs\t1.7\n# a comment\tx\nclrr-costs\t1\nz\tsomething new\t1\n%s", KLINE);
    put_file(tpath(p, sizeof p, "minor"), text, strlen(text));
    CU_ASSERT(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    cdb_close(db);
    put_file(tpath(p, sizeof p, "empty"), "", 0);
    CU_ASSERT(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    cdb_close(db);
    CU_ASSERT(cdb_open(dir, &db, err, sizeof err) == CDB_ERR_IO && strstr(err, dir));
}

static void test_missing_and_args(void)
{
    char p[512], err[512];
    cdb *db;
    cdb_curve c;
    CU_ASSERT_FATAL(cdb_open(tpath(p, sizeof p, "missing"), &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_device_count(db) == 0 && cdb_device_at(db, 0) == NULL);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK && access(p, F_OK) != 0);   /* nothing to write */
    cdb_key k = key("k", 64), bad = k;
    CU_ASSERT(cdb_add_kernel(db, "a\tb", &k, 1, 1) == CDB_ERR_ARG);
    CU_ASSERT(cdb_add_kernel(db, "a\nb", &k, 1, 1) == CDB_ERR_ARG);
    CU_ASSERT(cdb_add_kernel(db, "", &k, 1, 1) == CDB_ERR_ARG);
    CU_ASSERT(cdb_add_kernel(db, NULL, &k, 1, 1) == CDB_ERR_ARG);
    CU_ASSERT(cdb_add_kernel(db, "a", &k, 0, 1) == CDB_ERR_ARG && cdb_add_kernel(db, "a", &k, 1, 0) == CDB_ERR_ARG);
    bad.dim = 0;
    CU_ASSERT(cdb_add_kernel(db, "a", &bad, 1, 1) == CDB_ERR_ARG);
    bad = k;
    bad.kernel = "k\r";
    CU_ASSERT(cdb_add_kernel(db, "a", &bad, 1, 1) == CDB_ERR_ARG);
    CU_ASSERT(!cdb_kernel_curve(db, "a", &k, &c));
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK && access(p, F_OK) != 0);
    cdb_close(db);
    CU_ASSERT(cdb_open(NULL, &db, err, sizeof err) == CDB_ERR_ARG);
    /* a folder in the way: the flush fails and the records stay pending */
    char f[600];
    snprintf(f, sizeof f, "%s/sub", tpath(p, sizeof p, "file"));
    CU_ASSERT_FATAL(cdb_open(f, &db, err, sizeof err) == CDB_OK);
    put_file(p, "x", 1);
    CU_ASSERT(cdb_add_kernel(db, "a", &k, 1, 1) == CDB_OK);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_ERR_IO && strstr(err, f));
    unlink(p);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);
    cdb_close(db);
    CU_ASSERT(!strcmp(cdb_strerror(CDB_ERR_FORMAT), "cost database: malformed file"));
}

static void test_default_path(void)
{
    char buf[256];
    const char *home = getenv("HOME");
    char *saved_home = home ? strdup(home) : NULL;
    setenv("CLRR_COSTS", "rel/costs", 1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    CU_ASSERT(cdb_default_path(buf, sizeof buf) && !strcmp(buf, "rel/costs"));
    unsetenv("CLRR_COSTS");
    CU_ASSERT(cdb_default_path(buf, sizeof buf) && !strcmp(buf, "/xdg/clrr/costs"));
    CU_ASSERT(cdb_default_path(buf, 10) == NULL);
    setenv("XDG_CACHE_HOME", "relative", 1);   /* ignored (XDG) */
    setenv("HOME", "/home/u", 1);
    CU_ASSERT(cdb_default_path(buf, sizeof buf) && !strcmp(buf, "/home/u/.cache/clrr/costs"));
    unsetenv("XDG_CACHE_HOME");
    CU_ASSERT(cdb_default_path(buf, sizeof buf) && !strcmp(buf, "/home/u/.cache/clrr/costs"));
    unsetenv("HOME");
    CU_ASSERT(cdb_default_path(buf, sizeof buf) == NULL);
    if (saved_home)
        setenv("HOME", saved_home, 1);
    free(saved_home);
}

static void test_identity(void)
{
    char b[128];
    CU_ASSERT(!strcmp(cdb_identity(b, sizeof b, "  NVIDIA H100\t", "NVIDIA\nCUDA", "550.54", 132),
                      "NVIDIA H100 | NVIDIA CUDA | 550.54 | 132 CU"));
    CU_ASSERT(!strcmp(cdb_identity(b, sizeof b, NULL, "", "d", 0), " |  | d | 0 CU"));
    /* cut at a character boundary: "é" is two bytes */
    CU_ASSERT(!strcmp(cdb_identity(b, 5, "abc\xc3\xa9", "p", "d", 1), "abc"));
    CU_ASSERT(!strcmp(cdb_identity(b, 6, "abc\xc3\xa9", "p", "d", 1), "abc\xc3\xa9"));
    CU_ASSERT(!strcmp(cdb_identity(b, 8, "abc\xc3\xa9", "p", "d", 1), "abc\xc3\xa9 |"));
    CU_ASSERT(!strcmp(cdb_identity(b, 1, "abc", "p", "d", 1), ""));
    b[0] = 'z';
    CU_ASSERT(cdb_identity(b, 0, "abc", "p", "d", 1) == b && b[0] == 'z');
}

/* Random mutations of a valid file: the open succeeds or fails with a message, never crashes. */
static void test_mutations(void)
{
    char p[512], err[512];
    cdb *db;
    CU_ASSERT_FATAL(cdb_open(tpath(p, sizeof p, "mut"), &db, err, sizeof err) == CDB_OK);
    fill(db);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);
    cdb_close(db);
    size_t n;
    char *orig = get_file(p, &n);
    CU_ASSERT_FATAL(orig != NULL);
    char *m = malloc(n + 64);
    char q[512];
    tpath(q, sizeof q, "mutated");
    unsigned seed = 12345, ok = 0, bad = 0;
    static const char bytes[] = "\t\n,0189afk\x18\0-#sdx";
    for (int round = 0; round < 1500; round++) {
        memcpy(m, orig, n);
        size_t len = n;
        int edits = 1 + (int)(rand_r(&seed) % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = (size_t)rand_r(&seed) % len;
            m[at] = rand_r(&seed) % 2 ? (char)rand_r(&seed) : bytes[(size_t)rand_r(&seed) % (sizeof bytes - 1)];
        }
        if (rand_r(&seed) % 4 == 0)
            len = (size_t)rand_r(&seed) % len;
        put_file(q, m, len);
        cdb_status st = cdb_open(q, &db, err, sizeof err);
        if (st == CDB_OK) {
            cdb_key k = key("scale", 1 << 20);
            cdb_curve c;
            double a, b;
            if (cdb_kernel_curve(db, GPU, &k, &c))
                (void)cdb_curve_at(&c, 3000);
            (void)cdb_xfer(db, GPU, CDB_H2D, &a, &b);
            (void)cdb_resolve(db, "gpu1", err, sizeof err);
            cdb_close(db);
            ok++;
        } else {
            CU_ASSERT(st == CDB_ERR_FORMAT && !strncmp(err, q, strlen(q)) && !strchr(err, '\n'));
            bad++;
        }
    }
    CU_ASSERT(ok > 0 && bad > 0);
    free(m);
    free(orig);
}

static int rm_tree(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

/* w records: the latest tuned local size per device and launch shape, kept
 * across a flush and a reopen; bad ones refused. */
static void test_tuned(void)
{
    char p[256];
    cdb *db = NULL;
    char err[256];
    tpath(p, sizeof p, "tuned");
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    cdb_key k = key("blur", 256);
    k.dim = 2;
    k.gsz[1] = 256;
    k.lsz[0] = k.lsz[1] = 1;
    cdb_tuned t = {{16, 16, 1}, 500000, 60000, 5}, u = {{128, 1, 1}, 500000, 50000, 7}, g;
    CU_ASSERT(cdb_add_tuned(db, CPU, &k, &t) == CDB_OK);
    CU_ASSERT(cdb_add_tuned(db, CPU, &k, &u) == CDB_OK);
    CU_ASSERT(cdb_get_tuned(db, CPU, &k, &g) == 1 && g.local[0] == 128 && g.local[1] == 1 && g.reps == 7);
    CU_ASSERT(cdb_get_tuned(db, GPU, &k, &g) == 0);
    cdb_key other = k;
    other.gsz[0] = 512;
    CU_ASSERT(cdb_get_tuned(db, CPU, &other, &g) == 0);
    cdb_tuned bad = {{0, 1, 1}, 1, 1, 1};
    CU_ASSERT(cdb_add_tuned(db, CPU, &k, &bad) == CDB_ERR_ARG);
    bad.local[0] = 4;
    bad.reps = 0;
    CU_ASSERT(cdb_add_tuned(db, CPU, &k, &bad) == CDB_ERR_ARG);
    CU_ASSERT(cdb_flush(db, err, sizeof err) == CDB_OK);
    cdb_close(db);
    db = NULL;
    CU_ASSERT_FATAL(cdb_open(p, &db, err, sizeof err) == CDB_OK);
    CU_ASSERT(cdb_get_tuned(db, CPU, &k, &g) == 1 && g.local[0] == 128 && g.before_ns == 500000 &&
              g.after_ns == 50000 && g.reps == 7);
    cdb_close(db);
    /* a w record with a 0 local size, or short: refused with path:line */
    static const char *const bads[] = {
        "clrr-costs\t1\nw\tdev\t000102030405060708090a0b0c0d0e0f\tk\t1\t256,1,1\t64,1,1\t0,1,1\t5\t4\t5\t1\n",
        "clrr-costs\t1\nw\tdev\t000102030405060708090a0b0c0d0e0f\tk\t1\t256,1,1\t64,1,1\t32,1,1\t5\t4\n",
    };
    for (unsigned b = 0; b < 2; b++) {
        tpath(p, sizeof p, "badw");
        put_file(p, bads[b], strlen(bads[b]));
        db = NULL;
        CU_ASSERT(cdb_open(p, &db, err, sizeof err) == CDB_ERR_FORMAT && db == NULL && strstr(err, ":2: tuned record"));
    }
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("cdb", NULL, NULL);
    CU_add_test(s, "add, flush, reopen: the same curves, transfers, devices", test_roundtrip);
    CU_add_test(s, "two flushes, two writers: one header, all samples", test_append_twice);
    CU_add_test(s, "four processes appending at once", test_concurrent);
    CU_add_test(s, "robust medians: outliers, too few samples, the window", test_robust);
    CU_add_test(s, "curves: interpolation, extrapolation, never decreasing", test_curve_at);
    CU_add_test(s, "transfer fit on exact data; fallback", test_xfer_fit);
    CU_add_test(s, "device specs resolved on the snapshot", test_resolve);
    CU_add_test(s, "a cut last line is skipped and closed by the next append", test_cut_line);
    CU_add_test(s, "malformed files: refused with path:line", test_malformed);
    CU_add_test(s, "missing file, bad arguments, failed flush", test_missing_and_args);
    CU_add_test(s, "default path: CLRR_COSTS, XDG_CACHE_HOME, HOME", test_default_path);
    CU_add_test(s, "identities", test_identity);
    CU_add_test(s, "tuned local sizes (w records)", test_tuned);
    CU_add_test(s, "random mutations never crash", test_mutations);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    if (rm_tree())
        failed++;
    return failed ? 1 : 0;
}
