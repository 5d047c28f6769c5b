/* test_ana_kernel.c — the kernel analysis (analyzer/ana.h, first section)
 * on the workload applications' real kernels (the generated headers their
 * programs include): argument access modes, affine byte offsets and
 * guards, loop counters, regions for concrete launches, contiguity and
 * features; plus compile errors, build options and an unavailable library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "analyzer/ana.h"

static const char vecadd_cl[] =
#include "apps/vecadd_cl.h"
    ;
static const char blackscholes_cl[] =
#include "apps/blackscholes_cl.h"
    ;
static const char sobel_cl[] =
#include "apps/sobel_cl.h"
    ;
static const char jacobi_cl[] =
#include "apps/jacobi_cl.h"
    ;
static const char matmul_cl[] =
#include "apps/matmul_cl.h"
    ;
static const char histogram_cl[] =
#include "apps/histogram_cl.h"
    ;
static const char spmv_cl[] =
#include "apps/spmv_cl.h"
    ;
static const char nbody_cl[] =
#include "apps/nbody_cl.h"
    ;
static const char aes_cl[] =
#include "apps/aes_cl.h"
    ;
static const char ep_cl[] =
#include "apps/ep_cl.h"
    ;
static const char exposure_cl[] =
#include "apps/exposure_cl.h"
    ;
static const char geomatrix_cl[] =
#include "apps/geomatrix_cl.h"
    ;
static const char overlap_cl[] =
#include "apps/overlap_cl.h"
    ;

/* ------------------------------------------------------------- helpers */

static const struct app {
    const char *name;
    const char *src;
    size_t len;
} apps[] = {
#define APP(n) { #n, n##_cl, sizeof n##_cl - 1 }
    APP(vecadd), APP(blackscholes), APP(sobel), APP(jacobi), APP(matmul), APP(histogram),
    APP(spmv), APP(nbody), APP(aes), APP(ep), APP(exposure), APP(geomatrix), APP(overlap),
#undef APP
};
#define NAPPS (sizeof apps / sizeof apps[0])
static ana_program *progs[NAPPS];
static double analyze_ms[NAPPS];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The analysis of application @p app's kernels (analyzed once). */
static const ana_program *prog(const char *app)
{
    size_t i;
    for (i = 0; i < NAPPS; i++) {
        char err[512] = "";
        ana_status st;
        double t0;
        if (strcmp(apps[i].name, app))
            continue;
        if (progs[i])
            return progs[i];
        t0 = now_ms();
        st = ana_program_analyze(apps[i].src, apps[i].len, "-cl-std=CL1.2", &progs[i], err,
                                 sizeof err);
        analyze_ms[i] = now_ms() - t0;
        if (st != ANA_OK)
            fprintf(stderr, "\n%s: %s: %s\n", app, ana_strerror(st), err);
        CU_ASSERT_EQUAL_FATAL(st, ANA_OK);
        return progs[i];
    }
    CU_FAIL_FATAL("unknown application");
    return NULL;
}

static const ana_kernel *kern(const char *app, const char *name)
{
    const ana_kernel *k = ana_program_find(prog(app), name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_PTR_NULL(k->unsupported);
    return k;
}

static unsigned arg_of(const ana_kernel *k, const char *name)
{
    unsigned i;
    for (i = 0; i < k->nargs; i++)
        if (!strcmp(k->args[i].name, name))
            return i;
    CU_FAIL_FATAL("no such argument");
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The offsets of argument @p arg's reads (write 0) or writes (1), sorted,
 * distinct, joined by "; " into @p out. */
static const char *offsets(const ana_kernel *k, const char *arg, int write, char *out,
                           size_t cap)
{
    char *list[64];
    unsigned n = 0, i, a = arg_of(k, arg);
    size_t len = 0;
    out[0] = '\0';
    for (i = 0; i < k->naccesses && n < 64; i++) {
        const ana_mem_access *m = &k->accesses[i];
        char buf[256];
        if (m->arg != a || (m->is_write != 0) != (write != 0))
            continue;
        ana_expr_format(k, &m->offset, buf, sizeof buf);
        list[n++] = strdup(buf);
    }
    qsort(list, n, sizeof list[0], cmp_str);
    for (i = 0; i < n; i++) {
        if (i == 0 || strcmp(list[i], list[i - 1]))
            len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s%s",
                                    len ? "; " : "", list[i]);
    }
    for (i = 0; i < n; i++)
        free(list[i]);
    return out;
}

static const ana_mem_access *access_of(const ana_kernel *k, const char *arg, int write)
{
    unsigned i, a = arg_of(k, arg);
    for (i = 0; i < k->naccesses; i++)
        if (k->accesses[i].arg == a && (k->accesses[i].is_write != 0) == (write != 0))
            return &k->accesses[i];
    CU_FAIL_FATAL("no such access");
    return NULL;
}

/* Whether every access of @p arg (reads or writes) has guard @p g. */
static int all_guarded(const ana_kernel *k, const char *arg, int write, const char *g)
{
    unsigned i, j, a = arg_of(k, arg), seen = 0;
    for (i = 0; i < k->naccesses; i++) {
        const ana_mem_access *m = &k->accesses[i];
        int found = 0;
        if (m->arg != a || (m->is_write != 0) != (write != 0))
            continue;
        seen++;
        for (j = 0; j < m->nguards; j++) {
            char buf[256];
            ana_guard_format(k, &m->guards[j], buf, sizeof buf);
            found |= !strcmp(buf, g);
        }
        if (!found)
            return 0;
    }
    return seen > 0;
}

static char *fmt(const ana_kernel *k, const ana_expr *e)
{
    static char buf[4][256];
    static unsigned slot;
    char *b = buf[slot++ % 4];
    ana_expr_format(k, e, b, 256);
    return b;
}

#define SCAL(v) { 1, (int64_t)(v), 0 }
#define BUF(sz) { 0, 0, (uint64_t)(sz) }

static ana_launch launch2(unsigned dim, uint64_t g0, uint64_t g1, uint64_t l0, uint64_t l1,
                          const ana_argval *args, unsigned nargs)
{
    ana_launch l;
    memset(&l, 0, sizeof l);
    l.work_dim = dim;
    l.global[0] = g0;
    l.global[1] = dim > 1 ? g1 : 1;
    l.global[2] = 1;
    l.local[0] = l0;
    l.local[1] = dim > 1 ? l1 : 0;
    l.args = args;
    l.nargs = nargs;
    return l;
}

/* The read/write regions of @p arg for groups [x0,x1) x [y0,y1); every
 * argument's at once (ana_kernel_regions) must give the same. */
static void region(const ana_kernel *k, const ana_launch *l, const char *arg, uint64_t x0,
                   uint64_t x1, uint64_t y0, uint64_t y1, ana_region *rd, ana_region *wr)
{
    uint64_t lo[3] = { x0, y0, 0 }, hi[3] = { x1, y1, 1 };
    unsigned a = arg_of(k, arg);
    ana_region ar[32], aw[32];
    CU_ASSERT_EQUAL_FATAL(ana_kernel_region(k, l, a, lo, hi, rd, wr), ANA_OK);
    CU_ASSERT_FATAL(k->nargs <= 32);
    CU_ASSERT_EQUAL_FATAL(ana_kernel_regions(k, l, lo, hi, ar, aw), ANA_OK);
    CU_ASSERT(ar[a].empty == rd->empty && ar[a].whole == rd->whole && ar[a].lo == rd->lo &&
              ar[a].hi == rd->hi);
    CU_ASSERT(aw[a].empty == wr->empty && aw[a].whole == wr->whole && aw[a].lo == wr->lo &&
              aw[a].hi == wr->hi);
}

#define CU_ASSERT_REGION(r, l_, h_) \
    do { \
        CU_ASSERT(!(r).empty && !(r).whole); \
        CU_ASSERT_EQUAL((r).lo, (uint64_t)(l_)); \
        CU_ASSERT_EQUAL((r).hi, (uint64_t)(h_)); \
    } while (0)

/* -------------------------------------------------------------- vecadd */

static void test_vecadd(void)
{
    const ana_kernel *k = kern("vecadd", "vecadd");
    char buf[512];
    ana_argval av[] = { BUF(4000), BUF(4000), BUF(4000), SCAL(1000) };
    ana_launch l = launch2(1, 1024, 1, 256, 1, av, 4);
    ana_region rd, wr;
    ana_contiguity c;
    ana_features f;

    CU_ASSERT_EQUAL(k->nargs, 4);
    CU_ASSERT_EQUAL(k->args[0].kind, ANA_ARG_GLOBAL);
    CU_ASSERT_EQUAL(k->args[0].access, ANA_ACC_READ);
    CU_ASSERT(k->args[0].is_const);
    CU_ASSERT_EQUAL(k->args[0].elem_size, 4);
    CU_ASSERT_STRING_EQUAL(k->args[0].type, "float*");
    CU_ASSERT_EQUAL(k->args[1].access, ANA_ACC_READ);
    CU_ASSERT_EQUAL(k->args[2].access, ANA_ACC_WRITE);
    CU_ASSERT_EQUAL(k->args[3].kind, ANA_ARG_SCALAR);
    CU_ASSERT_EQUAL(k->args[3].access, ANA_ACC_NONE);
    CU_ASSERT_STRING_EQUAL(offsets(k, "a", 0, buf, sizeof buf), "4*gid0");
    CU_ASSERT_STRING_EQUAL(offsets(k, "b", 0, buf, sizeof buf), "4*gid0");
    CU_ASSERT_STRING_EQUAL(offsets(k, "c", 1, buf, sizeof buf), "4*gid0");
    CU_ASSERT(all_guarded(k, "c", 1, "gid0 < n"));
    CU_ASSERT(all_guarded(k, "a", 0, "gid0 < n"));
    CU_ASSERT_EQUAL(access_of(k, "c", 1)->size, 4);
    CU_ASSERT_EQUAL(access_of(k, "c", 1)->line, 6);
    CU_ASSERT(k->args[0].analyzable && k->args[2].analyzable);

    /* group 1 of 4: elements 256..511; the last group stops at n = 1000 */
    region(k, &l, "a", 1, 2, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(rd, 1024, 2048);
    CU_ASSERT(wr.empty);
    region(k, &l, "c", 3, 4, 0, 1, &rd, &wr);
    CU_ASSERT(rd.empty);
    CU_ASSERT_REGION(wr, 3072, 4000);
    region(k, &l, "c", 0, 4, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(wr, 0, 4000);

    CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, 2, &c), ANA_OK);
    CU_ASSERT(c.linear && c.dim[0]);
    CU_ASSERT_PTR_NULL(c.reason);

    CU_ASSERT_EQUAL(ana_kernel_features(k, &l, &f), ANA_OK);
    CU_ASSERT_EQUAL(f.work_items, 1024);
    CU_ASSERT_EQUAL(f.work_groups, 4);
    CU_ASSERT_EQUAL(f.accesses_by_stride[ANA_STRIDE_UNIT], 3);
    CU_ASSERT_EQUAL(f.stat.loads, 2);
    CU_ASSERT_EQUAL(f.stat.global_loads, 2);
    CU_ASSERT_EQUAL(f.stat.stores, 1);
    CU_ASSERT_EQUAL(f.stat.global_stores, 1);
    CU_ASSERT_EQUAL(f.stat.float_ops, 1);
    CU_ASSERT_EQUAL(f.stat.loops, 0);
    CU_ASSERT_EQUAL(f.stat.branches, 1);
    CU_ASSERT_EQUAL(f.dyn_loads, 2.0);
}

/* -------------------------------------------------------- blackscholes */

static void test_blackscholes(void)
{
    const ana_kernel *k = kern("blackscholes", "blackscholes");
    static const char *in[] = { "spot", "strike", "years" }, *out[] = { "call", "put" };
    ana_argval av[] = { BUF(4096), BUF(4096), BUF(4096), BUF(4096), BUF(4096),
                        { 0, 0, 0 }, { 0, 0, 0 }, SCAL(1024) };
    ana_launch l = launch2(1, 1024, 1, 128, 1, av, 8);
    char buf[256];
    unsigned i;

    for (i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(k->args[arg_of(k, in[i])].access, ANA_ACC_READ);
        CU_ASSERT_STRING_EQUAL(offsets(k, in[i], 0, buf, sizeof buf), "4*gid0");
    }
    for (i = 0; i < 2; i++) {
        ana_contiguity c;
        ana_region rd, wr;
        CU_ASSERT_EQUAL(k->args[arg_of(k, out[i])].access, ANA_ACC_WRITE);
        CU_ASSERT_STRING_EQUAL(offsets(k, out[i], 1, buf, sizeof buf), "4*gid0");
        CU_ASSERT(all_guarded(k, out[i], 1, "gid0 < n"));
        CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, arg_of(k, out[i]), &c), ANA_OK);
        CU_ASSERT(c.linear);
        region(k, &l, out[i], 2, 5, 0, 1, &rd, &wr);
        CU_ASSERT_REGION(wr, 1024, 2560);
    }
    CU_ASSERT_EQUAL(k->args[arg_of(k, "r")].kind, ANA_ARG_SCALAR);
    CU_ASSERT(k->features.float_ops > 20);
    CU_ASSERT(k->features.calls >= 4);   /* sqrt, log, exp ... */
}

/* --------------------------------------------------------------- sobel */

static void test_sobel(void)
{
    static const char *names[] = { "sobel_gx", "sobel_gy" }, *outs[] = { "gx", "gy" };
    ana_argval av[] = { BUF(64 * 64 * 4), BUF(64 * 64 * 4), SCAL(64), SCAL(64) };
    ana_launch l = launch2(2, 64, 64, 16, 16, av, 4);
    char buf[512];
    unsigned i;

    for (i = 0; i < 2; i++) {
        const ana_kernel *k = kern("sobel", names[i]);
        const ana_mem_access *m = access_of(k, "img", 0);
        ana_region rd, wr;
        ana_contiguity c;
        unsigned j, reads = 0;
        CU_ASSERT_EQUAL(k->args[0].access, ANA_ACC_READ);
        CU_ASSERT_EQUAL(k->args[1].access, ANA_ACC_WRITE);
        for (j = 0; j < k->naccesses; j++)
            if (k->accesses[j].arg == 0) {
                reads++;
                CU_ASSERT(!k->accesses[j].offset.known);
                CU_ASSERT_STRING_EQUAL(k->accesses[j].offset.reason, "index clamped by clamp()");
            }
        CU_ASSERT_EQUAL(reads, 6);
        CU_ASSERT(!m->offset.known);
        CU_ASSERT(!k->args[0].analyzable);
        CU_ASSERT(k->args[1].analyzable);
        CU_ASSERT_STRING_EQUAL(offsets(k, outs[i], 1, buf, sizeof buf), "4*w*gid1 + 4*gid0");
        CU_ASSERT(all_guarded(k, outs[i], 1, "gid0 < w"));
        CU_ASSERT(all_guarded(k, outs[i], 1, "gid1 < h"));
        /* a clamped read: the whole image; the write: the group's rows */
        region(k, &l, "img", 1, 2, 2, 3, &rd, &wr);
        CU_ASSERT(rd.whole && rd.lo == 0 && rd.hi == 64 * 64 * 4);
        region(k, &l, outs[i], 1, 2, 2, 3, &rd, &wr);
        CU_ASSERT_REGION(wr, 4 * (32 * 64 + 16), 4 * (47 * 64 + 31) + 4);
        region(k, &l, outs[i], 0, 4, 1, 3, &rd, &wr);
        CU_ASSERT_REGION(wr, 4 * 16 * 64, 4 * 48 * 64);
        CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, 1, &c), ANA_OK);
        CU_ASSERT(!c.linear && c.dim[1] && !c.dim[0]);
        CU_ASSERT_PTR_NOT_NULL(c.reason);
    }
    {
        const ana_kernel *k = kern("sobel", "sobel_magnitude");
        ana_argval mv[] = { BUF(64 * 64 * 4), BUF(64 * 64 * 4), BUF(64 * 64 * 4), SCAL(64),
                            SCAL(64) };
        ana_launch ml = launch2(2, 64, 64, 64, 4, mv, 5);
        ana_contiguity c;
        CU_ASSERT_STRING_EQUAL(offsets(k, "gx", 0, buf, sizeof buf), "4*w*gid1 + 4*gid0");
        CU_ASSERT_STRING_EQUAL(offsets(k, "gy", 0, buf, sizeof buf), "4*w*gid1 + 4*gid0");
        CU_ASSERT_STRING_EQUAL(offsets(k, "mag", 1, buf, sizeof buf), "4*w*gid1 + 4*gid0");
        CU_ASSERT(k->args[0].analyzable && k->args[1].analyzable && k->args[2].analyzable);
        /* rows of groups that span the whole width: consecutive groups are
         * consecutive rows */
        CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &ml, 2, &c), ANA_OK);
        CU_ASSERT(c.linear && c.dim[1]);
    }
}

/* -------------------------------------------------------------- jacobi */

static void test_jacobi(void)
{
    const ana_kernel *k = kern("jacobi", "jacobi");
    ana_argval av[] = { BUF(64 * 64 * 4), BUF(64 * 64 * 4), SCAL(64) };
    ana_launch l = launch2(2, 64, 64, 16, 16, av, 3);
    static const char *guards[] = { "gid0 >= 1", "gid1 >= 1", "gid0 < n - 1", "gid1 < n - 1" };
    ana_region rd, wr;
    ana_contiguity c;
    char buf[512];
    unsigned i;

    CU_ASSERT_EQUAL(k->args[0].access, ANA_ACC_READ);
    CU_ASSERT_EQUAL(k->args[1].access, ANA_ACC_WRITE);
    CU_ASSERT_EQUAL(k->args[2].kind, ANA_ARG_SCALAR);
    CU_ASSERT_STRING_EQUAL(offsets(k, "b", 1, buf, sizeof buf), "4*n*gid1 + 4*gid0");
    CU_ASSERT_STRING_EQUAL(offsets(k, "a", 0, buf, sizeof buf),
                           "4*n*gid1 + 4*gid0; 4*n*gid1 + 4*gid0 + 4; "
                           "4*n*gid1 + 4*gid0 + 4*n; 4*n*gid1 + 4*gid0 - 4; "
                           "4*n*gid1 + 4*gid0 - 4*n");
    for (i = 0; i < 4; i++) {
        CU_ASSERT(all_guarded(k, "b", 1, guards[i]));
        CU_ASSERT(all_guarded(k, "a", 0, guards[i]));
    }
    /* group (0,0): ids 1..15 once the guards bound them */
    region(k, &l, "b", 0, 1, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(wr, 4 * 65, 4 * 975 + 4);
    region(k, &l, "a", 0, 1, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(rd, 4, 4 * 1039 + 4);
    /* the whole grid: rows 1..62, columns 1..62 */
    region(k, &l, "b", 0, 4, 0, 4, &rd, &wr);
    CU_ASSERT_REGION(wr, 4 * 65, 4 * (62 * 64 + 62) + 4);
    /* the border columns are never written: gaps */
    CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, 1, &c), ANA_OK);
    CU_ASSERT(!c.linear && !c.dim[0] && !c.dim[1]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.reason);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.reason, "grid"));
    {
        /* one row of groups: consecutive groups along x, with the border gaps */
        ana_launch l1 = launch2(2, 64, 64, 64, 1, av, 3);
        CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l1, 1, &c), ANA_OK);
        CU_ASSERT(!c.linear && !c.dim[1]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c.reason);
        CU_ASSERT_STRING_EQUAL(c.reason, "groups along the split leave gaps between their bytes");
    }

    k = kern("jacobi", "copy");
    CU_ASSERT_STRING_EQUAL(offsets(k, "src", 0, buf, sizeof buf), "4*gid0");
    CU_ASSERT_STRING_EQUAL(offsets(k, "dst", 1, buf, sizeof buf), "4*gid0");
    CU_ASSERT(all_guarded(k, "dst", 1, "gid0 < count"));
    CU_ASSERT_EQUAL(k->args[2].elem_size, 8);
}

/* -------------------------------------------------------------- matmul */

static void test_matmul(void)
{
    const ana_kernel *k = kern("matmul", "matmul");
    ana_argval av[] = { BUF(64 * 64 * 4), BUF(64 * 64 * 4), BUF(64 * 64 * 4), SCAL(64) };
    ana_launch l = launch2(2, 64, 64, 16, 16, av, 4);
    ana_region rd, wr;
    ana_contiguity c;
    ana_features f;
    char buf[512];
    const ana_loop *t, *kk;

    CU_ASSERT_EQUAL_FATAL(k->nloops, 2);
    t = &k->loops[0];
    kk = &k->loops[1];
    CU_ASSERT_STRING_EQUAL(t->name, "t");
    CU_ASSERT_STRING_EQUAL(fmt(k, &t->start), "0");
    CU_ASSERT_STRING_EQUAL(fmt(k, &t->end), "n");
    CU_ASSERT_EQUAL(t->step, 16);
    CU_ASSERT_EQUAL(t->depth, 1);
    CU_ASSERT_STRING_EQUAL(kk->name, "k");
    CU_ASSERT_STRING_EQUAL(fmt(k, &kk->end), "16");
    CU_ASSERT_EQUAL(kk->step, 1);
    CU_ASSERT_EQUAL(kk->depth, 2);
    CU_ASSERT_EQUAL(kk->parent, 0);
    CU_ASSERT_STRING_EQUAL(offsets(k, "a", 0, buf, sizeof buf), "4*n*gid1 + 4*lid0 + 4*t");
    CU_ASSERT_STRING_EQUAL(offsets(k, "b", 0, buf, sizeof buf), "4*n*lid1 + 4*t*n + 4*gid0");
    CU_ASSERT_STRING_EQUAL(offsets(k, "c", 1, buf, sizeof buf), "4*n*gid1 + 4*gid0");
    CU_ASSERT(k->args[0].analyzable && k->args[1].analyzable && k->args[2].analyzable);

    /* tile (1, 2): rows 32..47, columns 16..31 of c; rows 32..47 of a;
     * columns 16..31 of b, every row */
    region(k, &l, "c", 1, 2, 2, 3, &rd, &wr);
    CU_ASSERT_REGION(wr, 4 * (32 * 64 + 16), 4 * (47 * 64 + 31) + 4);
    region(k, &l, "a", 1, 2, 2, 3, &rd, &wr);
    CU_ASSERT_REGION(rd, 4 * 32 * 64, 4 * (47 * 64 + 63) + 4);
    region(k, &l, "b", 1, 2, 2, 3, &rd, &wr);
    CU_ASSERT_REGION(rd, 4 * 16, 4 * (63 * 64 + 31) + 4);

    /* a tile is not contiguous; a band of tile rows is */
    CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, 2, &c), ANA_OK);
    CU_ASSERT(!c.linear && !c.dim[0] && c.dim[1]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.reason);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.reason, "grid"));

    CU_ASSERT_EQUAL(k->features.barriers, 2);
    CU_ASSERT_EQUAL(k->features.loops, 2);
    CU_ASSERT_EQUAL(k->features.local_loads, 2);
    CU_ASSERT_EQUAL(k->features.local_stores, 2);
    CU_ASSERT_EQUAL(ana_kernel_features(k, &l, &f), ANA_OK);
    CU_ASSERT_EQUAL(f.loops_known, 2);
    CU_ASSERT_EQUAL(f.max_trip_count, 16);
    CU_ASSERT_EQUAL(f.work_groups, 16);
    CU_ASSERT_EQUAL(f.accesses_by_stride[ANA_STRIDE_UNIT], 3);
    /* the inner loop runs 4 x 16 times per work-item */
    CU_ASSERT(f.dyn_loads >= 4 * 2 + 64 * 2);
    CU_ASSERT(f.dyn_ops > (double)(f.stat.int_ops + f.stat.float_ops));
}

/* ----------------------------------------------------------- histogram */

static void test_histogram(void)
{
    const ana_kernel *k = kern("histogram", "hist_local");
    ana_argval av[] = { BUF(64 * 64 * 4), SCAL(64 * 64 * 4), BUF(4 * 256 * 4) };
    ana_launch l = launch2(1, 256, 1, 64, 1, av, 3);
    const ana_mem_access *w = access_of(k, "partial", 1);
    const ana_loop *b = NULL;
    ana_region rd, wr;
    ana_contiguity c;
    char buf[512], want[128];
    unsigned i;

    CU_ASSERT_EQUAL(k->args[0].access, ANA_ACC_READ);
    CU_ASSERT_EQUAL(k->args[0].elem_size, 1);
    CU_ASSERT_EQUAL(k->args[2].access, ANA_ACC_WRITE);
    CU_ASSERT_STRING_EQUAL(offsets(k, "data", 0, buf, sizeof buf),
                           "64*lsz0*grp0 + k*lsz0 + lid0");
    CU_ASSERT(all_guarded(k, "data", 0, "64*lsz0*grp0 + k*lsz0 + lid0 < n"));
    /* partial[group * 256 + b], b from lid0 to 256 by lsz0 */
    CU_ASSERT_EQUAL_FATAL(w->offset.nterms, 2);
    for (i = 0; i < w->offset.nterms; i++)
        if (w->offset.terms[i].a.kind == ANA_SYM_LOOP)
            b = &k->loops[w->offset.terms[i].a.index];
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    snprintf(want, sizeof want, "1024*grp0 + 4*%s", b->name);
    CU_ASSERT_STRING_EQUAL(fmt(k, &w->offset), want);
    CU_ASSERT_STRING_EQUAL(fmt(k, &b->start), "lid0");
    CU_ASSERT_STRING_EQUAL(fmt(k, &b->end), "256");
    CU_ASSERT_EQUAL(b->step, 0);
    CU_ASSERT_STRING_EQUAL(fmt(k, &b->step_expr), "lsz0");
    CU_ASSERT_EQUAL(k->features.atomics, 1);
    CU_ASSERT_EQUAL(k->features.barriers, 2);

    /* group 2 reads bytes 8192..12287 and writes its row of 256 counts */
    region(k, &l, "data", 2, 3, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(rd, 8192, 12288);
    region(k, &l, "partial", 2, 3, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(wr, 2048, 3072);
    CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, 2, &c), ANA_OK);
    CU_ASSERT(!c.linear);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.reason);
    CU_ASSERT_STRING_EQUAL(c.reason,
                           "a loop's bounds or step vary between work-items or are unknown");

    k = kern("histogram", "hist_merge");
    CU_ASSERT_STRING_EQUAL(offsets(k, "hist", 1, buf, sizeof buf), "4*gid0");
    CU_ASSERT_STRING_EQUAL(offsets(k, "partial", 0, buf, sizeof buf), "4*gid0 + 1024*g");
    CU_ASSERT_EQUAL_FATAL(k->nloops, 1);
    CU_ASSERT_STRING_EQUAL(fmt(k, &k->loops[0].end), "groups");
    {
        ana_argval mv[] = { BUF(4 * 256 * 4), SCAL(4), BUF(256 * 4) };
        ana_launch ml = launch2(1, 256, 1, 64, 1, mv, 3);
        region(k, &ml, "partial", 1, 2, 0, 1, &rd, &wr);
        CU_ASSERT_REGION(rd, 256, 3 * 1024 + 512);
        CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &ml, 2, &c), ANA_OK);
        CU_ASSERT(c.linear);
    }
}

/* ---------------------------------------------------------------- spmv */

static void test_spmv(void)
{
    const ana_kernel *k = kern("spmv", "spmv_csr");
    ana_argval av[] = { SCAL(100), BUF(101 * 4), BUF(1000 * 4), BUF(1000 * 4), BUF(100 * 4),
                        BUF(100 * 4) };
    ana_launch l = launch2(1, 128, 1, 64, 1, av, 6);
    const ana_mem_access *x = access_of(k, "x", 0);
    ana_region rd, wr;
    ana_contiguity c;
    char buf[512];

    CU_ASSERT_EQUAL(k->args[0].kind, ANA_ARG_SCALAR);
    CU_ASSERT_STRING_EQUAL(offsets(k, "y", 1, buf, sizeof buf), "4*gid0");
    CU_ASSERT(all_guarded(k, "y", 1, "gid0 < rows"));
    CU_ASSERT(k->args[5].analyzable);
    CU_ASSERT_STRING_EQUAL(offsets(k, "row_ptr", 0, buf, sizeof buf), "4*gid0; 4*gid0 + 4");
    CU_ASSERT(k->args[1].analyzable);
    CU_ASSERT(!x->offset.known);
    CU_ASSERT_STRING_EQUAL(x->offset.reason, "index loaded from memory");
    CU_ASSERT(!k->args[4].analyzable);
    /* val[k], col[k]: k runs between two loaded bounds */
    CU_ASSERT_STRING_EQUAL(offsets(k, "val", 0, buf, sizeof buf), "4*k");
    CU_ASSERT_EQUAL_FATAL(k->nloops, 1);
    CU_ASSERT(!k->loops[0].start.known);
    CU_ASSERT_STRING_EQUAL(k->loops[0].start.reason, "index loaded from memory");
    CU_ASSERT(!k->loops[0].end.known);
    CU_ASSERT(!k->args[2].analyzable && !k->args[3].analyzable);

    region(k, &l, "row_ptr", 0, 1, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(rd, 0, 260);
    region(k, &l, "row_ptr", 1, 2, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(rd, 256, 404);   /* rows 64..99, clamped by the guard */
    region(k, &l, "x", 1, 2, 0, 1, &rd, &wr);
    CU_ASSERT(rd.whole && rd.hi == 400);
    region(k, &l, "val", 1, 2, 0, 1, &rd, &wr);
    CU_ASSERT(rd.whole);
    region(k, &l, "y", 1, 2, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(wr, 256, 400);
    CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, 5, &c), ANA_OK);
    CU_ASSERT(c.linear);
}

/* --------------------------------------------------------------- nbody */

static void test_nbody(void)
{
    const ana_kernel *k = kern("nbody", "nbody_step");
    ana_argval av[] = { BUF(1000 * 16), BUF(1000 * 16), BUF(1000 * 16), BUF(1000 * 16),
                        SCAL(1000), SCAL(100), SCAL(200), SCAL(0), SCAL(10),
                        { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } };
    ana_launch l = launch2(1, 128, 1, 64, 1, av, 12);
    ana_region rd, wr;
    ana_contiguity c;
    char buf[512];
    unsigned i, unknown = 0;

    CU_ASSERT_EQUAL(k->args[0].elem_size, 16);
    CU_ASSERT_STRING_EQUAL(k->args[0].type, "float4*");
    CU_ASSERT_STRING_EQUAL(offsets(k, "pos_out", 1, buf, sizeof buf), "16*gid0 + 16*first");
    CU_ASSERT_STRING_EQUAL(offsets(k, "vel_out", 1, buf, sizeof buf), "16*gid0 + 16*first");
    CU_ASSERT_STRING_EQUAL(offsets(k, "vel_in", 0, buf, sizeof buf), "16*gid0 + 16*first");
    CU_ASSERT(all_guarded(k, "pos_out", 1, "gid0 + first < end"));
    for (i = 0; i < k->naccesses; i++)
        if (k->accesses[i].arg == 0 && !k->accesses[i].offset.known) {
            unknown++;
            CU_ASSERT_STRING_EQUAL(k->accesses[i].offset.reason,
                                   "select between different values");
        }
    CU_ASSERT_EQUAL(unknown, 1);   /* pos_in[win + t wrapped around n] */
    CU_ASSERT_EQUAL(access_of(k, "pos_out", 1)->size, 16);
    CU_ASSERT_EQUAL(k->features.loops, 2);
    CU_ASSERT_EQUAL(k->args[0].access, ANA_ACC_READ);
    CU_ASSERT(!k->args[0].analyzable);

    /* group 1: ids 64..127, of which 64..99 pass first + gid0 < end */
    region(k, &l, "pos_out", 1, 2, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(wr, 16 * 164, 16 * 200);
    region(k, &l, "vel_in", 0, 1, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(rd, 16 * 100, 16 * 164);
    region(k, &l, "pos_in", 0, 1, 0, 1, &rd, &wr);
    CU_ASSERT(rd.whole);
    CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, 2, &c), ANA_OK);
    CU_ASSERT(c.linear);
}

/* --------------------------------------------------- the other programs */

static void test_others(void)
{
    const ana_kernel *k;
    char buf[512];
    size_t i;

    /* every kernel of every application is analyzed */
    for (i = 0; i < NAPPS; i++) {
        const ana_program *p = prog(apps[i].name);
        unsigned j;
        CU_ASSERT(ana_program_kernel_count(p) > 0);
        for (j = 0; j < ana_program_kernel_count(p); j++)
            CU_ASSERT_PTR_NULL(ana_program_kernel(p, j)->unsupported);
        CU_ASSERT_STRING_EQUAL(ana_program_notes(p), "");
    }
    CU_ASSERT_EQUAL(ana_program_kernel_count(prog("exposure")), 13);
    CU_ASSERT_PTR_NULL(ana_program_find(prog("exposure"), "nonexistent"));
    CU_ASSERT_PTR_NULL(ana_program_kernel(prog("exposure"), 13));

    /* aes: the 16-byte state in and out (copied as blocks) */
    k = kern("aes", "aes128_encrypt");
    CU_ASSERT_STRING_EQUAL(offsets(k, "in", 0, buf, sizeof buf), "16*gid0 - 16*goff0");
    CU_ASSERT_STRING_EQUAL(offsets(k, "out", 1, buf, sizeof buf), "16*gid0 - 16*goff0");
    CU_ASSERT_EQUAL(access_of(k, "out", 1)->size, 16);
    CU_ASSERT_EQUAL(k->args[2].kind, ANA_ARG_CONSTANT);
    CU_ASSERT(k->args[2].analyzable);      /* rk[16 * round + i] */
    CU_ASSERT(!k->args[3].analyzable);     /* sbox[s[i]] */
    CU_ASSERT_STRING_EQUAL(access_of(k, "sbox", 0)->offset.reason, "index loaded from memory");

    /* ep: 10 counters per work-item */
    k = kern("ep", "ep");
    CU_ASSERT_STRING_EQUAL(offsets(k, "counts", 1, buf, sizeof buf), "40*gid0 - 40*goff0");
    CU_ASSERT_EQUAL(access_of(k, "counts", 1)->size, 40);
    CU_ASSERT_STRING_EQUAL(offsets(k, "sums", 1, buf, sizeof buf), "8*gid0 - 8*goff0");

    /* exposure: division makes an index unknown, with the reason */
    k = kern("exposure", "decimate");
    CU_ASSERT_STRING_EQUAL(offsets(k, "src", 0, buf, sizeof buf), "8*w*gid1 + 8*gid0");
    CU_ASSERT_STRING_EQUAL(offsets(k, "dst", 1, buf, sizeof buf),
                           "unknown (non-affine operation sdiv)");
    k = kern("exposure", "accumulate");
    CU_ASSERT_EQUAL(k->args[0].access, ANA_ACC_RW);

    k = kern("geomatrix", "pow_scalar");
    CU_ASSERT_STRING_EQUAL(offsets(k, "c", 1, buf, sizeof buf), "4*gid0");

    k = kern("overlap", "combine");
    CU_ASSERT_EQUAL_FATAL(k->nloops, 1);
    CU_ASSERT_STRING_EQUAL(fmt(k, &k->loops[0].end), "rounds");
    CU_ASSERT_STRING_EQUAL(offsets(k, "c", 1, buf, sizeof buf), "4*gid0");
}

/* ---------------------------------------------- errors, options, formats */

static void test_compile_error(void)
{
    static const char src[] = "__kernel void k(__global int *a)\n{\n    a[0] = undefined_var;\n}\n";
    ana_program *p = (ana_program *)1;
    char err[256];
    ana_status st = ana_program_analyze(src, sizeof src - 1, NULL, &p, err, sizeof err);
    CU_ASSERT_EQUAL(st, ANA_ERR_COMPILE);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "error:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "undefined_var"));
    CU_ASSERT_EQUAL(strncmp(err, "3:", 2), 0);   /* line of the error, no file name */
    /* a small error buffer is still terminated */
    st = ana_program_analyze(src, sizeof src - 1, NULL, &p, err, 8);
    CU_ASSERT_EQUAL(st, ANA_ERR_COMPILE);
    CU_ASSERT(strlen(err) < 8);
    /* not NUL-terminated input: only len bytes count */
    st = ana_program_analyze(vecadd_cl, 40, NULL, &p, err, sizeof err);
    CU_ASSERT_EQUAL(st, ANA_ERR_COMPILE);
    CU_ASSERT_EQUAL(ana_program_analyze(NULL, 0, NULL, NULL, err, sizeof err), ANA_ERR_ARG);
}

static void test_options(void)
{
    static const char src[] =
        "__kernel void k(__global float *a, uint n)\n"
        "{\n"
        "    size_t i = get_global_id(0) * STRIDE + OFF;\n"
        "    if (i < n) a[i] = 0;\n"
        "}\n";
    ana_program *p = NULL;
    char err[256], buf[256], *big;
    const ana_kernel *k;
    ana_status st;

    st = ana_program_analyze(src, sizeof src - 1,
                             "-D STRIDE=4 -DOFF=\"(1 + 2)\" -cl-nv-verbose -Werror "
                             "-cl-mad-enable -cl-std=CL2.0 -I /nonexistent",
                             &p, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(st, ANA_OK);
    k = ana_program_find(p, "k");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_STRING_EQUAL(offsets(k, "a", 1, buf, sizeof buf), "16*gid0 + 12");
    CU_ASSERT_PTR_NOT_NULL(strstr(ana_program_notes(p), "-cl-nv-verbose"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ana_program_notes(p), "-Werror"));
    CU_ASSERT_PTR_NULL(strstr(ana_program_notes(p), "-cl-mad-enable"));
    ana_program_free(p);
    ana_program_free(NULL);

    /* an option can never smuggle another one in: "-D -fplugin=..." is a
     * (bad) macro name, not a clang option */
    st = ana_program_analyze(src, sizeof src - 1, "-D -fplugin=/x.so -DSTRIDE=1 -DOFF=0", &p,
                             err, sizeof err);
    CU_ASSERT_EQUAL(st, ANA_ERR_COMPILE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "macro name must be an identifier"));

    /* huge options: an error, not a crash */
    big = malloc(200000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    memset(big, 'x', 199999);
    big[0] = '-';
    big[1] = 'D';
    big[199999] = '\0';
    st = ana_program_analyze(src, sizeof src - 1, big, &p, err, sizeof err);
    CU_ASSERT_EQUAL(st, ANA_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "too long"));
    free(big);
}

/* Loop shapes beyond the applications': a decreasing counter, a loop LLVM
 * turns into memset, a while loop whose index LLVM keeps as a second
 * (widened) phi, a triangular loop. */
static void test_loop_shapes(void)
{
    static const char src[] =
        "__kernel void down2(__global float *a, int n) {\n"
        "  for (int i = n - 1; i >= 0; i -= 2) a[i] = 0;\n"
        "}\n"
        "__kernel void fill(__global float *a, int n) {\n"
        "  for (int i = 3; i <= n; i++) a[i] = 0;\n"
        "}\n"
        "__kernel void whilel(__global float *a, __global int *b, int n) {\n"
        "  int i = get_global_id(0);\n"
        "  while (b[i] > 0 && i < n) { a[i] = 1; i += 4; }\n"
        "}\n"
        "__kernel void tri(__global float *a, int n) {\n"
        "  int x = get_global_id(0);\n"
        "  for (int j = 0; j < x; j++) a[x * n + j] = 1;\n"
        "}\n";
    ana_argval av[] = { BUF(4000), SCAL(100) };
    ana_launch l = launch2(1, 64, 1, 0, 1, av, 2);
    ana_program *p = NULL;
    const ana_kernel *k;
    ana_region rd, wr;
    char err[256], buf[256];

    CU_ASSERT_EQUAL_FATAL(ana_program_analyze(src, sizeof src - 1, NULL, &p, err, sizeof err),
                          ANA_OK);
    k = ana_program_find(p, "down2");
    CU_ASSERT_EQUAL_FATAL(k->nloops, 1);
    CU_ASSERT_EQUAL(k->loops[0].step, -2);
    CU_ASSERT_STRING_EQUAL(fmt(k, &k->loops[0].start), "n - 1");
    CU_ASSERT_STRING_EQUAL(fmt(k, &k->loops[0].end), "-1");
    region(k, &l, "a", 0, 64, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(wr, 4, 400);   /* i = 99, 97, ..., 1 */

    /* a[3..n] became memset(a + 12, 0, 4n - 8): a bytes loop */
    k = ana_program_find(p, "fill");
    CU_ASSERT_EQUAL_FATAL(k->nloops, 1);
    CU_ASSERT(k->loops[0].bytes);
    CU_ASSERT_STRING_EQUAL(fmt(k, &k->loops[0].end), "4*n - 8");
    region(k, &l, "a", 0, 64, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(wr, 12, 404);

    k = ana_program_find(p, "whilel");
    CU_ASSERT_STRING_EQUAL(offsets(k, "a", 1, buf, sizeof buf), "4*i");
    CU_ASSERT_STRING_EQUAL(fmt(k, &k->loops[0].start), "gid0");
    CU_ASSERT_STRING_EQUAL(fmt(k, &k->loops[0].end), "n");
    CU_ASSERT_EQUAL(k->loops[0].step, 4);
    {
        ana_argval wv[] = { BUF(4000), BUF(4000), SCAL(100) };
        ana_launch wl = launch2(1, 64, 1, 0, 1, wv, 3);
        /* work-item 10: i = 10, 14, ..., 98; b[i + 4] is read before the test */
        region(k, &wl, "a", 10, 11, 0, 1, &rd, &wr);
        CU_ASSERT_REGION(wr, 40, 396);
        region(k, &wl, "b", 10, 11, 0, 1, &rd, &wr);
        CU_ASSERT_REGION(rd, 40, 412);
    }

    k = ana_program_find(p, "tri");
    CU_ASSERT_STRING_EQUAL(offsets(k, "a", 1, buf, sizeof buf), "4*n*gid0 + 4*j");
    CU_ASSERT_STRING_EQUAL(fmt(k, &k->loops[0].end), "gid0");
    region(k, &l, "a", 5, 6, 0, 1, &rd, &wr);
    CU_ASSERT_REGION(wr, 4 * 500, 4 * 504 + 4);
    ana_program_free(p);
}

static void test_format(void)
{
    ana_expr e;
    ana_guard g;
    char buf[64];
    int n;

    memset(&e, 0, sizeof e);
    e.known = 1;
    e.nterms = 3;
    e.terms[0] = (ana_term){ -4, { ANA_SYM_GLOBAL_ID, 1 }, { ANA_SYM_ARG, 2 } };
    e.terms[1] = (ana_term){ 1, { ANA_SYM_LOCAL_ID, 0 }, { ANA_SYM_NONE, 0 } };
    e.terms[2] = (ana_term){ -7, { ANA_SYM_NONE, 0 }, { ANA_SYM_NONE, 0 } };
    n = ana_expr_format(NULL, &e, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "-4*gid1*arg2 + lid0 - 7");
    CU_ASSERT_EQUAL(n, (int)strlen(buf));
    /* truncation reports the length needed, like snprintf */
    CU_ASSERT_EQUAL(ana_expr_format(NULL, &e, buf, 5), n);
    CU_ASSERT_STRING_EQUAL(buf, "-4*g");
    CU_ASSERT_EQUAL(ana_expr_format(NULL, &e, NULL, 0), n);
    e.nterms = 0;
    ana_expr_format(NULL, &e, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "0");
    e.known = 0;
    e.reason = "index loaded from memory";
    ana_expr_format(NULL, &e, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "unknown (index loaded from memory)");

    memset(&g, 0, sizeof g);
    g.expr.known = 1;
    g.expr.nterms = 2;
    g.expr.terms[0] = (ana_term){ 1, { ANA_SYM_GLOBAL_ID, 0 }, { ANA_SYM_NONE, 0 } };
    g.expr.terms[1] = (ana_term){ -1, { ANA_SYM_NONE, 0 }, { ANA_SYM_NONE, 0 } };
    g.cmp = ANA_CMP_GE;
    ana_guard_format(NULL, &g, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "gid0 >= 1");
}

static void test_bad_calls(void)
{
    const ana_kernel *k = kern("vecadd", "vecadd");
    ana_argval av[] = { BUF(4000), BUF(4000), BUF(4000), SCAL(1000) };
    ana_launch l = launch2(1, 1024, 1, 256, 1, av, 4);
    uint64_t lo[3] = { 0, 0, 0 }, hi[3] = { 5, 1, 1 };
    ana_region rd, wr;
    ana_contiguity c;

    /* group 5 of 4, a scalar argument, a bad dimension count */
    CU_ASSERT_EQUAL(ana_kernel_region(k, &l, 0, lo, hi, &rd, &wr), ANA_ERR_ARG);
    {
        ana_region ar[4], aw[4];
        CU_ASSERT_EQUAL(ana_kernel_regions(k, &l, lo, hi, ar, aw), ANA_ERR_ARG);
        hi[0] = 4;
        CU_ASSERT_EQUAL(ana_kernel_regions(k, &l, lo, hi, NULL, aw), ANA_ERR_ARG);
        CU_ASSERT_EQUAL(ana_kernel_regions(k, &l, lo, hi, ar, aw), ANA_OK);
        CU_ASSERT(ar[3].empty && aw[3].empty);   /* the scalar n */
        CU_ASSERT(!ar[0].empty && aw[0].empty && !aw[2].empty);
    }
    CU_ASSERT_EQUAL(ana_kernel_region(k, &l, 3, lo, hi, &rd, &wr), ANA_ERR_ARG);
    CU_ASSERT_EQUAL(ana_kernel_region(k, &l, 9, lo, hi, &rd, &wr), ANA_ERR_ARG);
    CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, 3, &c), ANA_ERR_ARG);
    l.work_dim = 0;
    CU_ASSERT_EQUAL(ana_kernel_region(k, &l, 0, lo, hi, &rd, &wr), ANA_ERR_ARG);
    l.work_dim = 1;
    /* a read-only argument is not contiguous output */
    CU_ASSERT_EQUAL(ana_kernel_contiguity(k, &l, 0, &c), ANA_OK);
    CU_ASSERT(!c.linear);
    CU_ASSERT_PTR_NOT_NULL(c.reason);
}

/* The library cannot be loaded: ANA_ERR_UNAVAILABLE with dlerror's text.
 * Run in a child, where nothing is loaded yet. */
static void test_unavailable(void)
{
    pid_t pid = fork();
    int status = 0;
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        char err[512];
        ana_program *p = NULL;
        ana_status st;
        setenv("CLRR_ANA_LIB", "/nonexistent/libclrr-ana.so", 1);
        st = ana_program_analyze(vecadd_cl, sizeof vecadd_cl - 1, NULL, &p, err, sizeof err);
        _exit(st == ANA_ERR_UNAVAILABLE && p == NULL && strstr(err, "/nonexistent") ? 0 : 1);
    }
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* clang cannot be run: ANA_ERR_UNAVAILABLE too. */
static void test_no_clang(void)
{
    ana_program *p = NULL;
    char err[512];
    ana_status st;
    setenv("CLRR_CLANG", "/nonexistent/clang", 1);
    st = ana_program_analyze(vecadd_cl, sizeof vecadd_cl - 1, NULL, &p, err, sizeof err);
    unsetenv("CLRR_CLANG");
    CU_ASSERT_EQUAL(st, ANA_ERR_UNAVAILABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/clang"));
}

/* Analysis time per program: reported, and well under 2 s each. */
static void test_timing(void)
{
    size_t i;
    double worst = 0, sum = 0;
    for (i = 0; i < NAPPS; i++) {
        prog(apps[i].name);
        sum += analyze_ms[i];
        if (analyze_ms[i] > worst)
            worst = analyze_ms[i];
    }
    printf("\n  analysis time per program: mean %.0f ms, worst %.0f ms (%zu programs)\n",
           sum / (double)NAPPS, worst, NAPPS);
    CU_ASSERT(worst < 2000);
}

static int cleanup(void)
{
    size_t i;
    for (i = 0; i < NAPPS; i++) {
        ana_program_free(progs[i]);
        progs[i] = NULL;
    }
    return 0;
}

int main(void)
{
    CU_pSuite s;
    unsigned failed;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("ana_kernel", NULL, cleanup);
    if (!s ||
        !CU_add_test(s, "unavailable library", test_unavailable) ||
        !CU_add_test(s, "clang missing", test_no_clang) ||
        !CU_add_test(s, "vecadd", test_vecadd) ||
        !CU_add_test(s, "blackscholes", test_blackscholes) ||
        !CU_add_test(s, "sobel", test_sobel) ||
        !CU_add_test(s, "jacobi", test_jacobi) ||
        !CU_add_test(s, "matmul", test_matmul) ||
        !CU_add_test(s, "histogram", test_histogram) ||
        !CU_add_test(s, "spmv", test_spmv) ||
        !CU_add_test(s, "nbody", test_nbody) ||
        !CU_add_test(s, "other programs", test_others) ||
        !CU_add_test(s, "compile errors", test_compile_error) ||
        !CU_add_test(s, "build options", test_options) ||
        !CU_add_test(s, "loop shapes", test_loop_shapes) ||
        !CU_add_test(s, "formatting", test_format) ||
        !CU_add_test(s, "bad arguments", test_bad_calls) ||
        !CU_add_test(s, "timing", test_timing)) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
