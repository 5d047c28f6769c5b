/* test_rw_part.c — partition-ready kernels (rw_partition, rewriter/rw.h).
 * Each case runs kernel K's full launch once, and the partition-ready
 * kernel as several launches that each cover a range of work-groups along
 * one dimension (one group alone, ranges aligned to nothing, 2-D and 3-D
 * split along each dimension, a non-zero global offset, no local size
 * split by work-items), on the same random inputs; every buffer must be
 * equal bit for bit (tests/rw/rwp.h). Kernels: inline ones that write what
 * the five builtins return, a grid-stride loop, __local memory with
 * barriers, a macro of the program's calling get_global_size, an inactive
 * #ifdef branch; and the workload kernels vecadd, nbody_step,
 * blackscholes, hist_local, matmul, ep, aes128_encrypt. The oracle is
 * shown to catch the plain kernel run in parts. Then every refusal. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "rewriter/rw.h"
#include "tests/rw/rwp.h"
#include "tests/rw/rwt.h"

static const char vecadd_cl[] =
#include "apps/vecadd_cl.h"
    ;
static const char nbody_cl[] =
#include "apps/nbody_cl.h"
    ;
static const char blackscholes_cl[] =
#include "apps/blackscholes_cl.h"
    ;
static const char histogram_cl[] =
#include "apps/histogram_cl.h"
    ;
static const char matmul_cl[] =
#include "apps/matmul_cl.h"
    ;
static const char ep_cl[] =
#include "apps/ep_cl.h"
    ;
static const char aes_cl[] =
#include "apps/aes_cl.h"
    ;

#define BUF(n) { RWP_BUF, (n), 0, 0.0f }
#define LOCAL(bytes) { RWP_LOCAL, (bytes), 0, 0.0f }
#define INT(v) { RWP_INT, 0, (v), 0.0f }
#define UINT(v) { RWP_UINT, 0, (v), 0.0f }
#define ULONG(v) { RWP_ULONG, 0, (v), 0.0f }
#define FLT(v) { RWP_FLOAT, 0, 0, (v) }
#define SRC(s) (s), sizeof(s) - 1
#define FLOATS(n) { (size_t)(n) * 4, RWP_F32 }
#define INTS(n) { (size_t)(n) * 4, RWP_I32 }

#define NAME "clrr_part"

/* Makes cs->kernel partition-ready and checks the result's shape and
 * syntax; returns the program (release with rw_partition_free) or -1. */
static int make(const rwp_case *cs, rw_part_out *o)
{
    rw_part_req r = { cs->src, cs->len, cs->options, cs->kernel, NAME };
    char err[4096];
    rw_status st;

    st = rw_partition(&r, o, err, sizeof err);
    if (st != RW_OK)
        fprintf(stderr, "\n  rw_partition(%s): %s\n", cs->kernel, err);
    CU_ASSERT_EQUAL(st, RW_OK);
    if (st != RW_OK)
        return -1;
    CU_ASSERT(o->len > cs->len && !memcmp(o->source, cs->src, cs->len));
    CU_ASSERT_EQUAL(strlen(o->source), o->len);
    CU_ASSERT_PTR_NOT_NULL(strstr(o->source + cs->len, "void " NAME "("));
    CU_ASSERT_PTR_NOT_NULL(strstr(o->source + cs->len, "#undef get_group_id"));
    if (!rwt_syntax_ok(o->source, o->len, cs->options, err, sizeof err)) {
        fprintf(stderr, "\n  clang -fsyntax-only: %s\n%s\n", err, o->source + cs->len);
        CU_FAIL("the partition-ready source does not pass clang -fsyntax-only");
    }
    return 0;
}

/* Runs the partition-ready kernel of @p o in every split of @p sp against
 * K's full launch. */
static void run_splits(const rwp_case *cs, const rw_part_out *o, const rwp_split *sp, size_t n)
{
    char err[4096];
    size_t i;
    int rc;

    for (i = 0; i < n; i++) {
        rc = rwp_compare(cs, o->source, o->len, NAME, 1, &sp[i], err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "\n  %s split %zu (dimension %u, %u parts): %s\n", cs->kernel, i,
                    sp[i].dim, sp[i].nparts, err);
        CU_ASSERT_EQUAL(rc, 0);
    }
}

/* make() then run_splits(); checks the parameter count. */
static void part_run(const rwp_case *cs, const rwp_split *sp, size_t n)
{
    rw_part_out o;

    if (make(cs, &o) == 0) {
        CU_ASSERT_EQUAL(o.nparams, cs->nargs);
        run_splits(cs, &o, sp, n);
    }
    rw_partition_free(&o);
}

#define NSPLITS(a) (sizeof(a) / sizeof((a)[0]))

/* --------------------------------------------------- builtins written out */

/* Every work-item writes, at its place in the full launch, what the five
 * builtins return for dimensions 0 to 2 (and 3 where PoCL follows the
 * spec: test_beyond checks the rest), a dimension argument with a side
 * effect (evaluated once), and builtins that need no redirection. */
static const char ids_cl[] =
    "__kernel void ids(__global uint *o, uint k0)\n"
    "{\n"
    "    size_t x = get_global_id(0) - get_global_offset(0);\n"
    "    size_t y = get_global_id(1) - get_global_offset(1);\n"
    "    size_t z = get_global_id(2) - get_global_offset(2);\n"
    "    __global uint *r = o + ((z * get_global_size(1) + y) * get_global_size(0) + x) * 24;\n"
    "    for (uint d = 0; d < 3; d++) {\n"
    "        r[d] = get_group_id(d);\n"
    "        r[4 + d] = get_num_groups(d);\n"
    "        r[8 + d] = get_global_size(d);\n"
    "        r[12 + d] = get_global_offset(d);\n"
    "    }\n"
    "    r[3] = get_group_id(3);\n"
    "    r[7] = get_local_size(1);\n"
    "    r[11] = get_local_id(1);\n"
    "    r[15] = get_global_offset(3);\n"
    "    uint k = k0;\n"
    "    r[16] = get_global_size(k++);\n"
    "    r[17] = get_num_groups(k++);\n"
    "    r[18] = get_group_id(k++);\n"
    "    r[19] = get_global_offset(k++);\n"
    "    r[20] = k;\n"
    "    r[21] = get_work_dim();\n"
    "    r[22] = get_local_size(0) * 100 + get_local_id(0);\n"
    "    r[23] = get_global_id(0) * 1000 + get_global_id(1);\n"
    "}\n";

static void test_ids_2d(void)
{
    rwp_case cs = {
        SRC(ids_cl), NULL, "ids", 1, { INTS(24 * 15 * 24) }, 2, { BUF(0), UINT(0) },
        2, { 5, 7, 0 }, { 24, 15, 1 }, { 4, 3, 1 },
    };
    /* 6 x 5 groups: along 1 (one group, then two, two), along 0 (ranges
     * of 1, 1, 3, 1 groups), every group of dimension 1 alone */
    static const rwp_split sp[] = {
        { 1, 3, { 0, 1, 3 } }, { 0, 4, { 0, 1, 2, 5 } }, { 1, 5, { 0, 1, 2, 3, 4 } },
    };
    part_run(&cs, sp, NSPLITS(sp));
}

static void test_ids_1d_3d(void)
{
    rwp_case one = {
        SRC(ids_cl), NULL, "ids", 1, { INTS(40 * 24) }, 2, { BUF(0), UINT(1) },
        1, { 0, 0, 0 }, { 40, 1, 1 }, { 8, 1, 1 },
    };
    rwp_case three = {
        SRC(ids_cl), NULL, "ids", 1, { INTS(8 * 6 * 4 * 24) }, 2, { BUF(0), UINT(1) },
        3, { 1, 2, 3 }, { 8, 6, 4 }, { 2, 3, 2 },
    };
    static const rwp_split sp1[] = { { 0, 3, { 0, 3, 4 } } };
    static const rwp_split sp3[] = { { 2, 2, { 0, 1 } }, { 1, 2, { 0, 1 } }, { 0, 2, { 0, 3 } } };

    part_run(&one, sp1, NSPLITS(sp1));
    part_run(&three, sp3, NSPLITS(sp3));
}

/* Dimensions beyond 2 (the spec: group 0, 1 group, global size 1, offset
 * 0; PoCL 3.1's own get_num_groups(3) and get_global_size(3) give 0), by
 * a dimension known only at run time. */
static const char beyond_cl[] =
    "__kernel void beyond(__global uint *o, uint d)\n"
    "{\n"
    "    size_t i = 4 * (get_global_id(0) - get_global_offset(0));\n"
    "    o[i] = get_group_id(d);\n"
    "    o[i + 1] = get_num_groups(d);\n"
    "    o[i + 2] = get_global_size(d);\n"
    "    o[i + 3] = get_global_offset(d + 4u);\n"
    "}\n";

static void test_beyond(void)
{
    rwp_case cs = {
        SRC(beyond_cl), NULL, "beyond", 1, { INTS(4 * 16) }, 2, { BUF(0), UINT(3) },
        1, { 9, 0, 0 }, { 16, 1, 1 }, { 4, 1, 1 },
    };
    static const rwp_split sp = { 0, 2, { 0, 1 } };
    static const unsigned want[4] = { 0, 1, 1, 0 };
    unsigned char *b = NULL;
    rw_part_out o;
    char err[1024];
    unsigned v, i;

    if (make(&cs, &o) == 0) {
        CU_ASSERT_EQUAL(rwp_parts(&cs, o.source, o.len, NAME, 1, &sp, &b, err, sizeof err), 0);
        for (i = 0; b && i < 4 * 16; i++) {
            memcpy(&v, b + 4 * i, 4);
            CU_ASSERT_EQUAL(v, want[i % 4]);
        }
        free(b);
    }
    rw_partition_free(&o);
}

/* OpenCL C 3.0: get_global_linear_id places every work-item. */
static const char lin_cl[] =
    "__kernel void lin(__global uint *o)\n"
    "{\n"
    "    size_t i = get_global_linear_id();\n"
    "    o[3 * i] = get_global_id(0) + 100 * get_global_id(1) + 10000 * get_global_id(2);\n"
    "    o[3 * i + 1] = get_global_size(0) * get_global_size(1) * get_global_size(2);\n"
    "    o[3 * i + 2] = get_global_offset(0) + 10 * get_global_offset(1) +\n"
    "                   100 * get_global_offset(2) + 1000 * get_group_id(1);\n"
    "}\n";

static void test_linear_id(void)
{
    rwp_case cs = {
        SRC(lin_cl), "-cl-std=CL3.0", "lin", 1, { INTS(8 * 6 * 4 * 3) }, 1, { BUF(0) },
        3, { 1, 2, 3 }, { 8, 6, 4 }, { 2, 3, 2 },
    };
    static const rwp_split sp[] = { { 2, 2, { 0, 1 } }, { 0, 3, { 0, 1, 3 } } };

    part_run(&cs, sp, NSPLITS(sp));
}

/* No local size: the driver picks one per launch, the launch is split by
 * work-items; only builtins that do not depend on groups are used. */
static const char nolocal_cl[] =
    "__kernel void nolocal(__global uint *o)\n"
    "{\n"
    "    size_t i = get_global_linear_id();\n"
    "    o[2 * i] = get_global_id(0) + 100 * get_global_id(1);\n"
    "    o[2 * i + 1] = get_global_size(0) * 1000 + get_global_size(1) * 10 +\n"
    "                   get_global_offset(0) * 7 + get_global_offset(1);\n"
    "}\n";

static void test_no_local_size(void)
{
    rwp_case cs = {
        SRC(nolocal_cl), "-cl-std=CL3.0", "nolocal", 1, { INTS(20 * 6 * 2) }, 1, { BUF(0) },
        2, { 3, 1, 0 }, { 20, 6, 1 }, { 0, 0, 0 },
    };
    static const rwp_split sp[] = { { 1, 3, { 0, 1, 4 } }, { 0, 3, { 0, 7, 13 } } };

    part_run(&cs, sp, NSPLITS(sp));
}

/* ------------------------------------------------ kernels that use them */

/* A grid-stride loop: the stride is the full launch's size. */
static const char saxpy_cl[] =
    "__kernel void saxpy(__global float *y, __global const float *x, float a, uint n)\n"
    "{\n"
    "    for (size_t i = get_global_id(0) - get_global_offset(0); i < n; i += get_global_size(0))\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n";

static void test_grid_stride(void)
{
    rwp_case cs = {
        SRC(saxpy_cl), NULL, "saxpy", 2, { FLOATS(1000), FLOATS(1000) },
        4, { BUF(0), BUF(1), FLT(2.5f), UINT(1000) },
        1, { 3, 0, 0 }, { 64, 1, 1 }, { 8, 1, 1 },
    };
    rwp_case nl = cs;
    static const rwp_split sp[] = { { 0, 4, { 0, 1, 4, 7 } } };
    static const rwp_split items[] = { { 0, 4, { 0, 5, 37, 63 } } };

    part_run(&cs, sp, NSPLITS(sp));
    memset(nl.local, 0, sizeof nl.local);
    part_run(&nl, items, NSPLITS(items));
}

/* The program's own macros call the builtins inside the kernel's body
 * (also inside another macro's argument): the redirection reaches them. */
static const char macro_cl[] =
    "#define STRIDE get_global_size(0)\n"
    "#define FIRST (get_global_id(0) - get_global_offset(0))\n"
    "#define TAG(v, g) ((v) * 1000u + (uint)(g))\n"
    "__kernel void tagged(__global uint *o, uint n)\n"
    "{\n"
    "    for (size_t i = FIRST; i < n; i += STRIDE)\n"
    "        o[i] = TAG(o[i] % 1000u, get_group_id(0));\n"
    "}\n";

static void test_user_macro(void)
{
    rwp_case cs = {
        SRC(macro_cl), NULL, "tagged", 1, { INTS(500) }, 2, { BUF(0), UINT(500) },
        1, { 0, 0, 0 }, { 48, 1, 1 }, { 16, 1, 1 },
    };
    static const rwp_split sp[] = { { 0, 2, { 0, 1 } }, { 0, 2, { 0, 2 } } };

    part_run(&cs, sp, NSPLITS(sp));
}

/* A reduction per work-group in __local memory (a parameter and a
 * variable) with barriers, its result stored at get_group_id. */
static const char group_sum_cl[] =
    "__kernel void group_sum(__global const float *x, __global float *sums,\n"
    "                        __global uint *meta, __local float *s, uint n)\n"
    "{\n"
    "    __local uint first;\n"
    "    uint l = get_local_id(0);\n"
    "    size_t i = get_global_id(0) - get_global_offset(0);\n"
    "    s[l] = i < n ? x[i] : 0.0f;\n"
    "    if (l == 0)\n"
    "        first = (uint)i;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint h = get_local_size(0) / 2; h > 0; h /= 2) {\n"
    "        if (l < h)\n"
    "            s[l] += s[l + h];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (l == 0) {\n"
    "        sums[get_group_id(0)] = s[0];\n"
    "        meta[2 * get_group_id(0)] = get_num_groups(0);\n"
    "        meta[2 * get_group_id(0) + 1] = first;\n"
    "    }\n"
    "}\n";

static void test_local_barrier(void)
{
    rwp_case cs = {
        SRC(group_sum_cl), NULL, "group_sum", 3, { FLOATS(200), FLOATS(13), INTS(26) },
        5, { BUF(0), BUF(1), BUF(2), LOCAL(16 * 4), UINT(200) },
        1, { 32, 0, 0 }, { 208, 1, 1 }, { 16, 1, 1 },
    };
    static const rwp_split sp[] = { { 0, 5, { 0, 1, 2, 7, 12 } } };

    part_run(&cs, sp, NSPLITS(sp));
}

/* An inactive branch inside the body stays inactive in the copy. */
static const char branch_cl[] =
    "__kernel void branchy(__global uint *o)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "#ifdef USE_GROUPS\n"
    "    o[i] = get_group_id(0) * 10 + get_num_groups(0);\n"
    "#else\n"
    "    o[i] = 7;\n"
    "#endif\n"
    "}\n";

static void test_ifdef(void)
{
    rwp_case cs = {
        SRC(branch_cl), "-DUSE_GROUPS", "branchy", 1, { INTS(96) }, 1, { BUF(0) },
        1, { 0, 0, 0 }, { 96, 1, 1 }, { 8, 1, 1 },
    };
    static const rwp_split sp[] = { { 0, 3, { 0, 5, 6 } } };

    part_run(&cs, sp, NSPLITS(sp));
}

/* ------------------------------------------------- the workload kernels */

static void test_vecadd(void)
{
    rwp_case cs = {
        SRC(vecadd_cl), NULL, "vecadd", 3, { FLOATS(1000), FLOATS(1000), FLOATS(1000) },
        4, { BUF(0), BUF(1), BUF(2), UINT(1000) },
        1, { 0, 0, 0 }, { 1024, 1, 1 }, { 16, 1, 1 },
    };
    rwp_case nl = cs;
    static const rwp_split sp[] = { { 0, 4, { 0, 1, 33, 63 } } };
    static const rwp_split items[] = { { 0, 4, { 0, 1, 500, 999 } } };

    part_run(&cs, sp, NSPLITS(sp));
    memset(nl.local, 0, sizeof nl.local);
    part_run(&nl, items, NSPLITS(items));
}

/* Helper functions that call none of the five builtins. */
static void test_nbody(void)
{
    enum { N = 96 };
    rwp_case cs = {
        SRC(nbody_cl), NULL, "nbody_step", 4,
        { FLOATS(4 * N), FLOATS(4 * N), FLOATS(4 * N), FLOATS(4 * N) },
        12, { BUF(0), BUF(1), BUF(2), BUF(3), UINT(N), UINT(0), UINT(N), UINT(10), UINT(20),
              FLT(2.0f), FLT(0.01f), FLT(0.01f) },
        1, { 0, 0, 0 }, { N, 1, 1 }, { 16, 1, 1 },
    };
    static const rwp_split sp[] = { { 0, 3, { 0, 1, 4 } } };

    part_run(&cs, sp, NSPLITS(sp));
}

static void test_blackscholes(void)
{
    enum { N = 1000 };
    rwp_case cs = {
        SRC(blackscholes_cl), NULL, "blackscholes", 5,
        { FLOATS(N), FLOATS(N), FLOATS(N), FLOATS(N), FLOATS(N) },
        8, { BUF(0), BUF(1), BUF(2), BUF(3), BUF(4), FLT(0.02f), FLT(0.3f), UINT(N) },
        1, { 0, 0, 0 }, { N, 1, 1 }, { 0, 0, 0 },
    };
    static const rwp_split items[] = { { 0, 4, { 0, 1, 333, 999 } } };

    part_run(&cs, items, NSPLITS(items));
}

/* __local counts, barriers, and every group's row at get_group_id. */
static void test_histogram(void)
{
    enum { L = 32, G = 6, N = L * 64 * G - 100 };
    rwp_case cs = {
        SRC(histogram_cl), NULL, "hist_local", 2, { INTS((N + 3) / 4), INTS(G * 256) },
        3, { BUF(0), UINT(N), BUF(1) },
        1, { 0, 0, 0 }, { L * G, 1, 1 }, { L, 1, 1 },
    };
    static const rwp_split sp[] = { { 0, 4, { 0, 1, 3, 5 } } };

    part_run(&cs, sp, NSPLITS(sp));
}

/* 2-D, reqd_work_group_size(TS, TS, 1) through a macro, tiles in __local. */
static void test_matmul(void)
{
    enum { N = 48 };
    rwp_case cs = {
        SRC(matmul_cl), NULL, "matmul", 3, { FLOATS(N * N), FLOATS(N * N), FLOATS(N * N) },
        4, { BUF(0), BUF(1), BUF(2), UINT(N) },
        2, { 0, 0, 0 }, { N, N, 1 }, { 16, 16, 1 },
    };
    static const rwp_split sp[] = { { 1, 2, { 0, 1 } }, { 0, 2, { 0, 2 } } };
    rw_part_out o;

    if (make(&cs, &o) == 0) {
        CU_ASSERT_PTR_NOT_NULL(
            strstr(o.source + cs.len, "__attribute__((reqd_work_group_size(TS, TS, 1)))"));
        run_splits(&cs, &o, sp, NSPLITS(sp));
    }
    rw_partition_free(&o);
}

/* Slots counted from get_global_offset, with a non-zero offset. */
static void test_ep(void)
{
    enum { G = 256, OFF = 100 };
    rwp_case cs = {
        SRC(ep_cl), NULL, "ep", 2, { FLOATS(2 * G), INTS(10 * G) },
        5, { ULONG(12345), UINT(16), ULONG(G + OFF), BUF(0), BUF(1) },
        1, { OFF, 0, 0 }, { G, 1, 1 }, { 32, 1, 1 },
    };
    static const rwp_split sp[] = { { 0, 3, { 0, 1, 5 } } };

    part_run(&cs, sp, NSPLITS(sp));
}

static void test_aes(void)
{
    enum { G = 64, OFF = 7 };
    rwp_case cs = {
        SRC(aes_cl), NULL, "aes128_encrypt", 4, { INTS(4 * G), INTS(4 * G), INTS(44), INTS(64) },
        5, { BUF(0), BUF(1), BUF(2), BUF(3), ULONG(G + OFF) },
        1, { OFF, 0, 0 }, { G, 1, 1 }, { 16, 1, 1 },
    };
    static const rwp_split sp[] = { { 0, 3, { 0, 1, 3 } } };

    part_run(&cs, sp, NSPLITS(sp));
}

/* ----------------------------------------------------------- the oracle */

/* The plain kernel run in parts, without the redirection, describes the
 * parts: the oracle sees it. So do the partition-ready kernels given the
 * part's own sizes instead of the full launch's. */
static const char grp_cl[] =
    "__kernel void grp(__global uint *o)\n"
    "{\n"
    "    o[get_global_id(0)] = get_group_id(0);\n"
    "}\n";

static void test_oracle(void)
{
    rwp_case grp = {
        SRC(grp_cl), NULL, "grp", 1, { INTS(64) }, 1, { BUF(0) },
        1, { 0, 0, 0 }, { 64, 1, 1 }, { 8, 1, 1 },
    };
    rwp_case ep = {
        SRC(ep_cl), NULL, "ep", 2, { FLOATS(2 * 256), INTS(10 * 256) },
        5, { ULONG(12345), UINT(4), ULONG(356), BUF(0), BUF(1) },
        1, { 100, 0, 0 }, { 256, 1, 1 }, { 32, 1, 1 },
    };
    static const rwp_split sp[] = { { 0, 2, { 0, 3 } } };
    static const rwp_split whole[] = { { 0, 1, { 0 } } };
    char err[1024];
    rw_part_out o;

    CU_ASSERT_EQUAL(rwp_compare(&grp, grp.src, grp.len, "grp", 0, sp, err, sizeof err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "buffer 0 differs at byte 96"));   /* group 3 */
    CU_ASSERT_EQUAL(rwp_compare(&ep, ep.src, ep.len, "ep", 0, sp, err, sizeof err), 1);
    /* one part covering everything: the plain kernel is its own full launch */
    CU_ASSERT_EQUAL(rwp_compare(&grp, grp.src, grp.len, "grp", 0, whole, err, sizeof err), 0);
    if (make(&grp, &o) == 0) {
        CU_ASSERT_EQUAL(rwp_compare(&grp, o.source, o.len, NAME, 1, sp, err, sizeof err), 0);
        CU_ASSERT_EQUAL(rwp_compare(&grp, o.source, o.len, NAME, 1, whole, err, sizeof err), 0);
    }
    rw_partition_free(&o);
}

/* ------------------------------------------------------------ refusals */

#define K(body) "__kernel void k(__global ulong *y)\n{\n" body "\n}\n"
#define K_OK K("    y[get_global_id(0)] = get_group_id(0);")

static const struct refusal {
    const char *what, *src, *options, *kernel, *name;
    rw_status st;
    const char *msg;
} refusals[] = {
    { "helper calls a builtin", "size_t f(void) { return get_global_size(0); }\n"
      K("    y[0] = f();"), NULL, "k", NAME, RW_ERR_REFUSED,
      "helper f calls get_global_size (line 1): only calls in the kernel's own body are "
      "redirected" },
    { "helper of a helper calls a builtin",
      "uint g(uint d)\n{\n    return get_num_groups(d) + 1;\n}\nuint f(void) { return g(0) * 2; }\n"
      K("    y[0] = f();"), NULL, "k", NAME, RW_ERR_REFUSED,
      "helper g calls get_num_groups (line 3)" },
    { "another kernel called as a function",
      "__kernel void k2(__global ulong *y)\n{\n    y[1] = get_global_linear_id();\n}\n"
      K("    k2(y);"), "-cl-std=CL2.0", "k", NAME, RW_ERR_REFUSED,
      "helper k2 calls get_global_linear_id (line 3)" },
    { "helper calls a builtin through a macro",
      "#define GID get_group_id(0)\nulong f(void) { return GID; }\n" K("    y[0] = f();"), NULL,
      "k", NAME, RW_ERR_REFUSED, "helper f calls get_group_id (line 2)" },
    { "program defines a builtin's name", "#define get_group_id(d) 0\n" K_OK, NULL, "k", NAME,
      RW_ERR_REFUSED, "the program defines get_group_id as a macro (line 1)" },
    { "program defines one after the kernel", K_OK "#define get_global_offset(d) 0\n", NULL, "k",
      NAME, RW_ERR_REFUSED, "the program defines get_global_offset as a macro (line 5)" },
    { "build options define one", K_OK, "-Dget_num_groups(d)=1", "k", NAME, RW_ERR_REFUSED,
      "the program defines get_num_groups as a macro" },
    { "program defines its own function", "size_t get_global_linear_id(void)\n"
      "{\n    return get_global_id(0);\n}\n" K("    y[0] = get_global_linear_id();"), NULL, "k",
      NAME, RW_ERR_REFUSED, "the program defines its own get_global_linear_id (line 1)" },
    { "#undef in the body", K("#undef get_group_id\n    y[0] = get_group_id(0);"), NULL, "k",
      NAME, RW_ERR_REFUSED, "k calls get_group_id at line 4 where the redirecting macro is not "
      "defined" },
    { "kernel not found", K_OK, NULL, "nope", NAME, RW_ERR_REFUSED, "kernel nope not found" },
    { "a function, not a kernel", "ulong f(void) { return 1; }\n" K_OK, NULL, "f", NAME,
      RW_ERR_REFUSED, "f is a function, not a kernel" },
    { "declared but not defined", "__kernel void k(__global ulong *y);\n", NULL, "k", NAME,
      RW_ERR_REFUSED, "kernel k is declared but not defined" },
    { "C++ for OpenCL", K_OK, "-cl-std=CLC++", "k", NAME, RW_ERR_REFUSED, "only OpenCL C" },
    { "name already used", K_OK "__kernel void other(__global ulong *y) { y[0] = 1; }\n", NULL,
      "k", "other", RW_ERR_REFUSED, "the name other is already used" },
    { "name not an identifier", K_OK, NULL, "k", "1st", RW_ERR_ARG, "not an identifier" },
    { "condition false after the kernel",
      "#define ON\n" K("#ifdef ON\n    y[0] = get_group_id(0);\n#endif") "#undef ON\n", NULL, "k",
      NAME, RW_ERR_REFUSED, "a preprocessor condition in the kernels' text is false" },
    { "condition true after the kernel",
      K("#ifdef ON\n    y[0] = get_group_id(0);\n#endif") "#define ON\n", NULL, "k", NAME,
      RW_ERR_REFUSED, "a preprocessor condition in the kernels' text is true" },
    { "macro redefined after the kernel",
      "#define W 2\n" K("    y[0] = get_group_id(0) * W;") "#undef W\n#define W 3\n", NULL, "k",
      NAME, RW_ERR_REFUSED, "macro W used at line 4 means something else" },
    { "parse error", K("    y[0] = get_group_id(0)"), NULL, "k", NAME, RW_ERR_PARSE,
      "program.cl:" },
    { "get_global_linear_id before OpenCL C 2.0", K("    y[0] = get_global_linear_id();"), NULL,
      "k", NAME, RW_ERR_PARSE, "get_global_linear_id" },
};

static void test_refusals(void)
{
    size_t i;

    for (i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        const struct refusal *t = &refusals[i];
        rw_part_req r = { t->src, strlen(t->src), t->options, t->kernel, t->name };
        rw_part_out o;
        char err[1024] = "";
        rw_status st = rw_partition(&r, &o, err, sizeof err);
        int ok = st == t->st && strstr(err, t->msg) && !o.source && o.nparams == 0;
        if (!ok)
            fprintf(stderr, "\n  %s: status %d, err \"%s\" (want %d, \"%s\")\n", t->what, st, err,
                    t->st, t->msg);
        CU_ASSERT(ok);
        rw_partition_free(&o);
    }
}

/* A kernel and a helper defined in a header the program includes (-I). */
static void test_included(void)
{
    static const char prog[] = "#include \"inc.h\"\n" K("    y[0] = h();");
    char dir[] = "/tmp/rwp-XXXXXX", path[64], opts[64], err[1024];
    rw_part_req r = { SRC(prog), opts, "k", NAME };
    rw_part_out o;
    FILE *f;

    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/inc.h", dir);
    snprintf(opts, sizeof opts, "-I%s", dir);
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("__kernel void inc(__global ulong *y) { y[0] = 1; }\n"
          "ulong h(void)\n{\n    return get_group_id(0);\n}\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(rw_partition(&r, &o, err, sizeof err), RW_ERR_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "helper h calls get_group_id (inc.h:4)"));
    r.kernel = "inc";
    CU_ASSERT_EQUAL(rw_partition(&r, &o, err, sizeof err), RW_ERR_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "kernel inc is not defined in the program's text"));
    unlink(path);
    rmdir(dir);
}

/* Reserved names the program already uses get a number. */
static void test_names(void)
{
    static const char prog[] =
        "__kernel void k(__global ulong *__clrr_gsz0, ulong __clrr_part_grp)\n"
        "{\n    __clrr_gsz0[get_global_id(0)] = get_group_id(0) + __clrr_part_grp;\n}\n";
    rw_part_req r = { SRC(prog), NULL, "k", NAME };
    rw_part_out o;
    char err[1024];

    CU_ASSERT_EQUAL(rw_partition(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_EQUAL(o.nparams, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "ulong __clrr1_gsz0, ulong __clrr1_gsz1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "#define get_group_id(d) __clrr1_part_grp((d)"));
    rw_partition_free(&o);
}

static void test_bad_calls(void)
{
    rw_part_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME };
    rw_part_out o;
    char err[256];

    CU_ASSERT_EQUAL(rw_partition(NULL, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_EQUAL(rw_partition(&r, NULL, err, sizeof err), RW_ERR_ARG);
    r.name = "";
    CU_ASSERT_EQUAL(rw_partition(&r, &o, NULL, 0), RW_ERR_ARG);
    r.name = "a-b";
    CU_ASSERT_EQUAL(rw_partition(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.name = NULL;
    CU_ASSERT_EQUAL(rw_partition(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.name = NAME;
    r.kernel = NULL;
    CU_ASSERT_EQUAL(rw_partition(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.kernel = "vecadd";
    r.source = NULL;
    CU_ASSERT_EQUAL(rw_partition(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.source = vecadd_cl;
    CU_ASSERT_EQUAL(rw_partition(&r, &o, err, 1), RW_OK);   /* a tiny err is fine */
    CU_ASSERT_EQUAL(o.nparams, 4);
    rw_partition_free(&o);
    rw_partition_free(&o);   /* twice */
    rw_partition_free(NULL);
}

/* libclrr-rw.so (../lib from the test) exports rw_partition and
 * rw_partition_free. */
static void test_shared_object(void)
{
    rw_status (*part)(const rw_part_req *, rw_part_out *, char *, size_t);
    void (*release)(rw_part_out *);
    rw_part_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME };
    rw_part_out o;
    char err[256];
    void *f, *g;
    int hidden;
    void *h = rwt_rw_so("rw_partition", "rw_partition_free", &f, &g, &hidden);

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT(hidden);   /* internals stay inside */
    if (f && g) {
        memcpy(&part, &f, sizeof f);
        memcpy(&release, &g, sizeof g);
        CU_ASSERT_EQUAL(part(&r, &o, err, sizeof err), RW_OK);
        CU_ASSERT(o.source && o.nparams == 4);
        release(&o);
    } else {
        CU_FAIL("libclrr-rw.so does not export rw_partition and rw_partition_free");
    }
    dlclose(h);
}

int main(void)
{
    CU_pSuite s;
    unsigned failed;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("rw_part", NULL, NULL);
    if (!s ||
        !CU_add_test(s, "builtins written out, 2-D", test_ids_2d) ||
        !CU_add_test(s, "builtins written out, 1-D and 3-D", test_ids_1d_3d) ||
        !CU_add_test(s, "dimensions beyond 2", test_beyond) ||
        !CU_add_test(s, "get_global_linear_id (OpenCL C 3.0)", test_linear_id) ||
        !CU_add_test(s, "no local size, split by work-items", test_no_local_size) ||
        !CU_add_test(s, "grid-stride loop", test_grid_stride) ||
        !CU_add_test(s, "the program's macros", test_user_macro) ||
        !CU_add_test(s, "__local memory and barriers", test_local_barrier) ||
        !CU_add_test(s, "an inactive #ifdef branch", test_ifdef) ||
        !CU_add_test(s, "vecadd", test_vecadd) ||
        !CU_add_test(s, "nbody_step", test_nbody) ||
        !CU_add_test(s, "blackscholes", test_blackscholes) ||
        !CU_add_test(s, "hist_local", test_histogram) ||
        !CU_add_test(s, "matmul", test_matmul) ||
        !CU_add_test(s, "ep", test_ep) ||
        !CU_add_test(s, "aes128_encrypt", test_aes) ||
        !CU_add_test(s, "the oracle catches the plain kernel", test_oracle) ||
        !CU_add_test(s, "refusals", test_refusals) ||
        !CU_add_test(s, "a header of the program's", test_included) ||
        !CU_add_test(s, "reserved names", test_names) ||
        !CU_add_test(s, "bad arguments", test_bad_calls) ||
        !CU_add_test(s, "shared object", test_shared_object)) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
