/* test_rw_coarsen.c — coarsened kernels (rw_coarsen, rewriter/rw.h).
 * Each case runs kernel K on the OpenCL device as written (one launch),
 * and the kernel coarsened by 2, 4 and 8 along a dimension, blocked and
 * strided, over the global size divided by the factor, on the same random
 * inputs and with the same arguments; every buffer must be equal bit for
 * bit (tests/rw/rwp.h, rwp-run). Kernels: the workloads vecadd (a bound
 * check), blackscholes (a helper function, an early return), sobel_gx and
 * jacobi (2D, coarsened along x and along y), and an inline one that
 * writes get_global_id and get_global_size of a
 * launch with a global offset and uses get_local_id of the other
 * dimension. The oracle is shown to catch the plain kernel run over the
 * smaller size. Then every refusal (barrier, get_local_id in the
 * dimension, a dimension not known at compile time, __local memory,
 * reqd_work_group_size, a helper that calls
 * get_global_id, a program that
 * defines get_global_size) and bad request, and libclrr-rw.so's exports.
 * Parameters the body changes start from the launch's value in each
 * coarsened work-item. The group forms (group-blocked, group-strided: coarsened inside each
 * work-group, the local size divided too) run kernels that index by
 * work-group and local id in every dimension, one chosen at run time, with
 * a __local parameter; they refuse barriers and __local variables, and the
 * oracle catches a group-coarsened kernel launched with the local size
 * left as it was. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "rewriter/rw.h"
#include "tests/rw/rwp.h"
#include "tests/rw/rwt.h"

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

#define BUF(n) { RWP_BUF, (n), 0, 0.0f }
#define INT(v) { RWP_INT, 0, (v), 0.0f }
#define UINT(v) { RWP_UINT, 0, (v), 0.0f }
#define FLT(v) { RWP_FLOAT, 0, 0, (v) }
#define SRC(s) (s), sizeof(s) - 1
#define FLOATS(n) { (size_t)(n) * 4, RWP_F32 }
#define INTS(n) { (size_t)(n) * 4, RWP_I32 }

#define NAME "clrr_coarse"

/* Coarsens cs->kernel along @p dim by 2, 4 and 8 in forms @p first ..
 * @p last; each must build, pass clang -fsyntax-only and leave every
 * buffer as K does. The group forms: only the factors that divide the
 * case's local size there, launched with it divided too. */
static void co_forms(const rwp_case *cs, unsigned dim, unsigned first, unsigned last)
{
    static const unsigned fs[] = { 2, 4, 8 };
    unsigned char *full = NULL;
    char err[4096];
    unsigned i, form, ran = 0;

    if (rwp_full(cs, &full, err, sizeof err) < 0) {
        fprintf(stderr, "\n  %s as written: %s\n", cs->kernel, err);
        CU_FAIL("the kernel does not run as written");
        return;
    }
    for (form = first; form <= last; form++)
        for (i = 0; i < 3; i++) {
            int grouped = form >= RW_COARSEN_GROUP_BLOCKED;
            if (grouped && cs->local[dim] % fs[i])
                continue;
            rw_coarsen_req r = { cs->src, cs->len, cs->options, cs->kernel, NAME, dim, fs[i], form };
            rw_coarsen_out o;
            rw_status st = rw_coarsen(&r, &o, err, sizeof err);
            int rc;
            if (st != RW_OK)
                fprintf(stderr, "\n  rw_coarsen(%s, dim %u, %u, %s): %s\n", cs->kernel, dim, fs[i],
                        rw_coarsen_form_name(form), err);
            CU_ASSERT_EQUAL(st, RW_OK);
            if (st != RW_OK)
                continue;
            CU_ASSERT(o.len > cs->len && !memcmp(o.source, cs->src, cs->len));
            CU_ASSERT_EQUAL(strlen(o.source), o.len);
            CU_ASSERT_EQUAL(o.nparams, cs->nargs);
            CU_ASSERT_PTR_NOT_NULL(strstr(o.source + cs->len, "void " NAME "("));
            if (!rwt_syntax_ok(o.source, o.len, cs->options, err, sizeof err)) {
                fprintf(stderr, "\n  clang -fsyntax-only: %s\n%s\n", err, o.source + cs->len);
                CU_FAIL("the coarsened source does not pass clang -fsyntax-only");
            }
            rc = grouped ? rwp_compare_group(cs, full, o.source, o.len, NAME, dim, fs[i], err, sizeof err)
                         : rwp_compare_coarse(cs, full, o.source, o.len, NAME, dim, fs[i], err, sizeof err);
            if (rc != 0)
                fprintf(stderr, "\n  %s coarsened (dim %u, %u, %s): %s\n%s\n", cs->kernel, dim,
                        fs[i], rw_coarsen_form_name(form), err, o.source + cs->len);
            CU_ASSERT_EQUAL(rc, 0);
            ran++;
            rw_coarsen_free(&o);
        }
    CU_ASSERT(ran >= 2);
    free(full);
}

static void co_run(const rwp_case *cs, unsigned dim)
{
    co_forms(cs, dim, RW_COARSEN_BLOCKED, RW_COARSEN_STRIDED);
}

static void co_run_group(const rwp_case *cs, unsigned dim)
{
    co_forms(cs, dim, RW_COARSEN_GROUP_BLOCKED, RW_COARSEN_GROUP_STRIDED);
}

/* ------------------------------------------------------- workloads */

/* n below the global size: the bound check must stay per work-item */
static const rwp_case vecadd_case = {
    SRC(vecadd_cl), NULL, "vecadd", 3, { FLOATS(4096), FLOATS(4096), FLOATS(4096) }, 4,
    { BUF(0), BUF(1), BUF(2), UINT(4000) },
    1, { 0, 0, 0 }, { 4096, 1, 1 }, { 64, 1, 1 },
};

static void test_vecadd(void)
{
    co_run(&vecadd_case, 0);
}

static const rwp_case blackscholes_case = {
    SRC(blackscholes_cl), NULL, "blackscholes", 5,
    { FLOATS(2048), FLOATS(2048), FLOATS(2048), FLOATS(2048), FLOATS(2048) }, 8,
    { BUF(0), BUF(1), BUF(2), BUF(3), BUF(4), FLT(0.02f), FLT(0.3f), UINT(2000) },
    1, { 0, 0, 0 }, { 2048, 1, 1 }, { 0, 0, 0 },
};

static void test_blackscholes(void)
{
    co_run(&blackscholes_case, 0);
}

/* 64 x 32 work-items over a 60 x 30 image: returns in both dimensions */
static const rwp_case sobel_case = {
    SRC(sobel_cl), NULL, "sobel_gx", 2, { FLOATS(60 * 30), FLOATS(60 * 30) }, 4,
    { BUF(0), BUF(1), INT(60), INT(30) },
    2, { 0, 0, 0 }, { 64, 32, 1 }, { 8, 8, 1 },
};

static const rwp_case jacobi_case = {
    SRC(jacobi_cl), NULL, "jacobi", 2, { FLOATS(40 * 40), FLOATS(40 * 40) }, 3,
    { BUF(0), BUF(1), INT(40) },
    2, { 0, 0, 0 }, { 40, 40, 1 }, { 0, 0, 0 },
};

static void test_2d(void)
{
    co_run(&sobel_case, 0);
    co_run(&sobel_case, 1);
    co_run(&jacobi_case, 1);
}

/* What each work-item sees, written where its linear id says, with a
 * global offset; get_local_id and get_group_id of dimension 0 are fine
 * when dimension 1 is coarsened. */
static const char ids_cl[] =
    "__kernel void ids(__global uint *o)\n"
    "{\n"
    "    size_t l = (get_global_id(1) - get_global_offset(1)) * get_global_size(0) +\n"
    "               (get_global_id(0) - get_global_offset(0));\n"
    "    __global uint *r = o + l * 6;\n"
    "    r[0] = (uint)get_global_id(0);\n"
    "    r[1] = (uint)get_global_id(1);\n"
    "    r[2] = (uint)get_global_size(0);\n"
    "    r[3] = (uint)get_global_size(1);\n"
    "    r[4] = (uint)get_local_id(0) + 100u * (uint)get_group_id(0);\n"
    "    if (get_global_id(1) % 3 == 0)\n"
    "        return;\n"
    "    for (int k = 0; k < 4; k++) {\n"
    "        if (k == 2)\n"
    "            return;\n"
    "        r[5] += (uint)k + (uint)l;\n"
    "    }\n"
    "}\n";

static const rwp_case ids_case = {
    SRC(ids_cl), NULL, "ids", 1, { INTS(6 * 16 * 24) }, 1, { BUF(0) },
    2, { 3, 5, 0 }, { 16, 24, 1 }, { 4, 8, 1 },
};

static void test_ids(void)
{
    rwp_case c = ids_case;
    co_run(&c, 1);
    c.local[1] = 2;
    co_run(&c, 1);
}

/* The oracle has teeth: K itself over the smaller size leaves buffers
 * that differ; so does a coarsening along the other dimension's count. */
static void test_oracle(void)
{
    char err[512];
    rw_coarsen_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME, 0, 4, RW_COARSEN_BLOCKED };
    rw_coarsen_out o;
    unsigned char *full = NULL;

    CU_ASSERT_EQUAL_FATAL(rwp_full(&vecadd_case, &full, err, sizeof err), 0);
    CU_ASSERT_EQUAL(rwp_compare_coarse(&vecadd_case, full, SRC(vecadd_cl), "vecadd", 0, 4, err, sizeof err), 1);
    CU_ASSERT_EQUAL_FATAL(rw_coarsen(&r, &o, err, sizeof err), RW_OK);
    /* coarsened by 4, launched over an eighth */
    CU_ASSERT_EQUAL(rwp_compare_coarse(&vecadd_case, full, o.source, o.len, NAME, 0, 8, err, sizeof err), 1);
    rw_coarsen_free(&o);
    free(full);
}

/* OpenCL C 2.0: get_global_linear_id is redirected, work_group_barrier
 * refused (checked by the parse: a device run needs a 2.0 device). */
static void test_cl20(void)
{
    static const char lin[] =
        "__kernel void k(__global uint *o)\n{\n    o[get_global_linear_id()] = get_global_id(1);\n}\n";
    static const char wgb[] =
        "__kernel void k(__global int *a)\n{\n    work_group_barrier(CLK_GLOBAL_MEM_FENCE);\n}\n";
    rw_coarsen_req r = { SRC(lin), "-cl-std=CL2.0", "k", NAME, 1, 4, RW_COARSEN_STRIDED };
    rw_coarsen_out o;
    char err[1024];

    CU_ASSERT_EQUAL_FATAL(rw_coarsen(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "#define get_global_linear_id() __clrr_co_lin(__clrr_co_j)"));
    CU_ASSERT(rwt_syntax_ok(o.source, o.len, "-cl-std=CL2.0", err, sizeof err));
    rw_coarsen_free(&o);
    r.source = wgb;
    r.len = sizeof wgb - 1;
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "k calls work_group_barrier (line 3)"));
}

/* ----------------------------------------------------- group forms */

/* Parboil mri-q's way of finding its element: the group's first plus the
 * local id, with the block size a constant of the program; a loop over a
 * table every work-item reads. */
static const char byblock_cl[] =
    "#define BLOCK 64\n"
    "__kernel void byblock(__global float *x, __global float *q, __global const float *k, int nk)\n"
    "{\n"
    "    int i = get_group_id(0) * BLOCK + get_local_id(0);\n"
    "    float s = q[i];\n"
    "    for (int j = 0; j < nk; j++)\n"
    "        s += k[j] * cos(x[i] * (float)j);\n"
    "    q[i] = s;\n"
    "}\n";

static const rwp_case byblock_case = {
    SRC(byblock_cl), NULL, "byblock", 3, { FLOATS(1024), FLOATS(1024), FLOATS(32) }, 4,
    { BUF(0), BUF(1), BUF(2), INT(32) },
    1, { 0, 0, 0 }, { 1024, 1, 1 }, { 64, 1, 1 },
};

/* Every work-group builtin, each dimension, with a global offset; a
 * dimension known only at run time; a __local parameter each work-item
 * uses as its own scratch (no barrier: nothing is shared); returns. */
static const char groups_cl[] =
    "__kernel void groups(__global uint *o, __local uint *t, uint d)\n"
    "{\n"
    "    size_t l = (get_global_id(1) - get_global_offset(1)) * get_global_size(0) +\n"
    "               (get_global_id(0) - get_global_offset(0));\n"
    "    __global uint *r = o + l * 8;\n"
    "    size_t me = get_local_id(1) * get_local_size(0) + get_local_id(0);\n"
    "    t[me] = (uint)(get_global_id(0) * 7u + get_global_id(1));\n"
    "    r[0] = (uint)get_local_id(0) + 100u * (uint)get_group_id(0);\n"
    "    r[1] = (uint)get_local_id(1) + 100u * (uint)get_group_id(1);\n"
    "    r[2] = (uint)(get_local_size(0) * 1000u + get_local_size(1));\n"
    "    r[3] = (uint)(get_num_groups(0) * 1000u + get_num_groups(1));\n"
    "    r[4] = (uint)get_local_id(d) + 1000u * (uint)get_local_size(d);\n"
    "    r[5] = (uint)(get_global_size(0) * 1000u + get_global_size(1));\n"
    "    if (get_local_id(1) % 3 == 1)\n"
    "        return;\n"
    "    r[6] = t[me] + (uint)get_global_id(0);\n"
    "    r[7] = (uint)me;\n"
    "}\n";

static const rwp_case groups_case = {
    SRC(groups_cl), NULL, "groups", 1, { INTS(8 * 32 * 16) }, 3,
    { BUF(0), { RWP_LOCAL, 8 * 8 * 4, 0, 0.0f }, UINT(1) },
    2, { 3, 5, 0 }, { 32, 16, 1 }, { 8, 8, 1 },
};

static void test_group(void)
{
    rwp_case c = groups_case;
    co_run_group(&byblock_case, 0);
    co_run_group(&groups_case, 0);
    co_run_group(&groups_case, 1);
    c.args[2] = (rwp_arg)UINT(0);   /* the dimension asked at run time is the coarsened one */
    co_run_group(&c, 0);
}

/* The oracle has teeth for the group forms: the coarsened kernel launched
 * with its local size left as it was (its groups' ids then name other
 * work-items) leaves buffers that differ. */
static void test_group_oracle(void)
{
    char err[1024];
    rw_coarsen_req r = { SRC(byblock_cl), NULL, "byblock", NAME, 0, 4, RW_COARSEN_GROUP_BLOCKED };
    rw_coarsen_out o;
    unsigned char *full = NULL;

    CU_ASSERT_EQUAL_FATAL(rwp_full(&byblock_case, &full, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(rw_coarsen(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_EQUAL(rwp_compare_group(&byblock_case, full, o.source, o.len, NAME, 0, 4, err, sizeof err), 0);
    CU_ASSERT_EQUAL(rwp_compare_coarse(&byblock_case, full, o.source, o.len, NAME, 0, 4, err, sizeof err), 1);
    rw_coarsen_free(&o);
    /* the plain blocked form refuses it: its work-groups would change */
    r.form = RW_COARSEN_BLOCKED;
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "byblock calls get_group_id(0) (line 4)"));
    free(full);
}

/* What the group forms still refuse, and get_local_linear_id (OpenCL C
 * 2.0) redirected. */
/* Coarsening @p kernel of @p src along @p dim by @p factor in @p form is
 * refused, for a reason that holds @p why. */
static void refused_as(const char *src, const char *kernel, unsigned dim, unsigned factor, unsigned form,
                       const char *why)
{
    rw_coarsen_req r = { src, strlen(src), NULL, kernel, NAME, dim, factor, form };
    rw_coarsen_out o;
    char err[1024] = "";
    rw_status st = rw_coarsen(&r, &o, err, sizeof err);

    if (st != RW_ERR_REFUSED || !strstr(err, why))
        fprintf(stderr, "\n  %s: status %d, '%s' (expected '%s')\n", kernel, (int)st, err, why);
    CU_ASSERT_EQUAL(st, RW_ERR_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, why));
    CU_ASSERT_PTR_NULL(o.source);
}

static void group_refused(const char *src, const char *kernel, const char *why)
{
    refused_as(src, kernel, 0, 2, RW_COARSEN_GROUP_STRIDED, why);
}

static void test_group_refusals(void)
{
    static const char lin[] =
        "__kernel void k(__global uint *o)\n{\n    o[get_global_linear_id()] = get_local_linear_id();\n}\n";
    rw_coarsen_req r = { SRC(lin), "-cl-std=CL2.0", "k", NAME, 1, 2, RW_COARSEN_GROUP_BLOCKED };
    rw_coarsen_out o;
    char err[1024];

    group_refused("__kernel void k(__global float *a)\n{\n    size_t i = get_global_id(0);\n"
                  "    a[i] += 1.0f;\n    barrier(CLK_GLOBAL_MEM_FENCE);\n    a[i] *= 2.0f;\n}\n",
                  "k", "k calls barrier (line 5): its work-items do not run on their own");
    group_refused("__kernel void k(__global float *a)\n{\n    __local float t[64];\n"
                  "    t[get_local_id(0)] = a[get_global_id(0)];\n    a[get_global_id(0)] = t[0];\n}\n",
                  "k", "k declares __local t (line 3)");
    group_refused(matmul_cl, "matmul", "matmul has reqd_work_group_size");
    group_refused("size_t me(void) { return get_local_id(0); }\n"
                  "__kernel void k(__global float *a)\n{\n    a[me()] = 1.0f;\n}\n",
                  "k", "helper me calls get_local_id (line 1)");
    group_refused("#define get_local_size(d) 64\n"
                  "__kernel void k(__global float *a)\n{\n    a[get_global_id(0)] = get_local_size(0);\n}\n",
                  "k", "the program defines get_local_size as a macro (line 1)");
    CU_ASSERT_EQUAL_FATAL(rw_coarsen(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "#define get_local_linear_id() __clrr_co_llin(__clrr_co_j)"));
    CU_ASSERT(rwt_syntax_ok(o.source, o.len, "-cl-std=CL2.0", err, sizeof err));
    rw_coarsen_free(&o);
}

/* Parameters the body changes (Parboil mri-q's kGlobalIndex++, lbm's
 * srcGrid += ...): each coarsened work-item starts from the launch's
 * value, through a copy under the parameter's name (the parameter itself
 * renamed); an assignment, a pointer moved, an address taken. */
static const char params_cl[] =
    "void bump(uint *p) { *p += 3u; }\n"
    "__kernel void params(__global uint *a, __global uint *b, uint n, int m)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    n += (uint)i;\n"
    "    a += i;\n"
    "    *a = n;\n"
    "    bump(&n);\n"
    "    m = (int)n * 2;\n"
    "    if (i % 5 == 0)\n"
    "        return;\n"
    "    b[i] = n + (uint)m;\n"
    "}\n";

static const rwp_case params_case = {
    SRC(params_cl), NULL, "params", 2, { INTS(1024), INTS(1024) }, 4,
    { BUF(0), BUF(1), UINT(7), INT(-4) },
    1, { 0, 0, 0 }, { 1024, 1, 1 }, { 64, 1, 1 },
};

static void test_params(void)
{
    rw_coarsen_req r = { SRC(params_cl), NULL, "params", NAME, 0, 4, RW_COARSEN_BLOCKED };
    rw_coarsen_out o;
    char err[1024];

    co_run(&params_case, 0);
    CU_ASSERT_EQUAL_FATAL(rw_coarsen(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "__global uint *__clrr_co_p0,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "    __global uint *a = __clrr_co_p0;\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "    uint n = __clrr_co_p2;\n    int m = __clrr_co_p3;\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "__global uint *b,"));   /* b is not changed: as it was */
    rw_coarsen_free(&o);
    r.form = RW_COARSEN_VECTOR;
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "params changes or takes the address of its parameter n (line 5)"));
}

/* ------------------------------------------------------- refusals */

static void refused(const char *src, const char *kernel, unsigned dim, const char *why)
{
    refused_as(src, kernel, dim, 4, RW_COARSEN_BLOCKED, why);
}

static void test_refusals(void)
{
    refused("__kernel void k(__global float *a)\n{\n    size_t i = get_global_id(0);\n"
            "    a[i] += 1.0f;\n    barrier(CLK_GLOBAL_MEM_FENCE);\n    a[i] *= 2.0f;\n}\n",
            "k", 0, "k calls barrier (line 5): its work-items do not run on their own");
    refused("__kernel void k(__global uint *a)\n{\n    a[get_global_id(0)] = get_local_id(0);\n}\n",
            "k", 0, "k calls get_local_id(0) (line 3): coarsening dimension 0 changes its work-groups");
    refused("__kernel void k(__global uint *a)\n{\n    a[get_global_id(0)] = get_num_groups(1);\n}\n",
            "k", 1, "k calls get_num_groups(1) (line 3)");
    refused("__kernel void k(__global uint *a, uint d)\n{\n    a[get_global_id(0)] = get_group_id(d);\n}\n",
            "k", 0, "k calls get_group_id (line 3) with a dimension not known at compile time");
    refused("__kernel void k(__global float *a, __local float *t)\n{\n"
            "    t[0] = a[get_global_id(0)];\n}\n",
            "k", 0, "parameter 1 (t) of k is __local");
    refused("__kernel void k(__global float *a)\n{\n    __local float t[64];\n"
            "    t[get_local_id(1)] = a[get_global_id(0)];\n    a[get_global_id(0)] = t[0];\n}\n",
            "k", 0, "k declares __local t (line 3)");
    refused(matmul_cl, "matmul", 0, "matmul has reqd_work_group_size");
    refused("size_t me(void) { return get_global_id(0); }\n"
            "__kernel void k(__global float *a)\n{\n    a[me()] = 1.0f;\n}\n",
            "k", 0, "helper me calls get_global_id (line 1)");
    refused("void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
            "__kernel void k(__global float *a)\n{\n    a[get_global_id(0)] = 1.0f;\n    sync();\n}\n",
            "k", 0, "helper sync calls barrier (line 1): coarsening keeps only calls in the kernel's own body");
    refused("#define get_global_size(d) 64\n"
            "__kernel void k(__global float *a)\n{\n    a[get_global_id(0)] = get_global_size(0);\n}\n",
            "k", 0, "the program defines get_global_size as a macro (line 1)");
    refused(vecadd_cl, "nothere", 0, "nothere");
}

static void test_bad_requests(void)
{
    rw_coarsen_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME, 0, 4, RW_COARSEN_BLOCKED };
    rw_coarsen_out o;
    char err[256];

    CU_ASSERT_EQUAL(rw_coarsen(NULL, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_EQUAL(rw_coarsen(&r, NULL, err, sizeof err), RW_ERR_ARG);
    r.factor = 3;
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "factor 3: 2, 4 or 8"));
    r.factor = 16;
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.factor = 2;
    r.dim = 3;
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "dimension 3"));
    r.dim = 0;
    r.form = 5;   /* 2 is RW_COARSEN_VECTOR: test_rw_vector.c; 3 and 4 the group forms */
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_PTR_NULL(rw_coarsen_form_name(5));
    CU_ASSERT_STRING_EQUAL(rw_coarsen_form_name(RW_COARSEN_GROUP_BLOCKED), "group-blocked");
    CU_ASSERT_STRING_EQUAL(rw_coarsen_form_name(RW_COARSEN_GROUP_STRIDED), "group-strided");
    r.form = RW_COARSEN_STRIDED;
    r.name = "a b";
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.name = "vecadd";   /* taken */
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_REFUSED);
    r.name = NAME;
    r.kernel = NULL;
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.kernel = "vecadd";
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, 1), RW_OK);
    CU_ASSERT_EQUAL(o.nparams, 4);
    rw_coarsen_free(&o);
    rw_coarsen_free(&o);
    rw_coarsen_free(NULL);
}

/* The generated names avoid the program's identifiers. */
static void test_names(void)
{
    static const char prog[] =
        "__kernel void k(__global uint *o)\n"
        "{\n    uint __clrr_co_j = 1;\n    o[get_global_id(0)] = __clrr_co_j;\n}\n";
    rw_coarsen_req r = { SRC(prog), NULL, "k", NAME, 0, 2, RW_COARSEN_BLOCKED };
    rw_coarsen_out o;
    char err[1024];

    CU_ASSERT_EQUAL_FATAL(rw_coarsen(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "for (uint __clrr1_co_j = 0u; __clrr1_co_j < 2u;"));
    rw_coarsen_free(&o);
}

static void test_shared_object(void)
{
    rw_status (*co)(const rw_coarsen_req *, rw_coarsen_out *, char *, size_t);
    void (*release)(rw_coarsen_out *);
    rw_coarsen_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME, 0, 8, RW_COARSEN_STRIDED };
    rw_coarsen_out o;
    char err[256];
    void *f, *g;
    int hidden;
    void *h = rwt_rw_so("rw_coarsen", "rw_coarsen_free", &f, &g, &hidden);

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT(hidden);
    if (f && g) {
        memcpy(&co, &f, sizeof f);
        memcpy(&release, &g, sizeof g);
        CU_ASSERT_EQUAL(co(&r, &o, err, sizeof err), RW_OK);
        CU_ASSERT(o.source && o.nparams == 4);
        release(&o);
    } else {
        CU_FAIL("libclrr-rw.so does not export rw_coarsen and rw_coarsen_free");
    }
    CU_ASSERT_PTR_NOT_NULL(dlsym(h, "rw_coarsen_form_name"));
    dlclose(h);
}

int main(void)
{
    CU_pSuite s;
    unsigned failed;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("rw_coarsen", NULL, NULL);
    if (!s || !CU_add_test(s, "vecadd", test_vecadd) ||
        !CU_add_test(s, "blackscholes", test_blackscholes) ||
        !CU_add_test(s, "2D: sobel_gx and jacobi", test_2d) ||
        !CU_add_test(s, "ids, sizes, linear id, offset, returns", test_ids) ||
        !CU_add_test(s, "the oracle has teeth", test_oracle) ||
        !CU_add_test(s, "OpenCL C 2.0 builtins", test_cl20) ||
        !CU_add_test(s, "group forms: by work-group and local id", test_group) ||
        !CU_add_test(s, "group forms: the oracle has teeth", test_group_oracle) ||
        !CU_add_test(s, "group forms: refusals", test_group_refusals) ||
        !CU_add_test(s, "parameters the body changes", test_params) ||
        !CU_add_test(s, "refusals", test_refusals) ||
        !CU_add_test(s, "bad requests", test_bad_requests) ||
        !CU_add_test(s, "generated names", test_names) ||
        !CU_add_test(s, "libclrr-rw.so", test_shared_object)) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
