/* test_rw.c — the rewriter (rewriter/rw.h): vertical fusion of the
 * workload kernels (sobel, geomatrix, exposure: the generated headers
 * their programs include) and of inline kernels that exercise macros,
 * vectors, attributes, renames and build options. Every fused source is
 * checked by clang -fsyntax-only and then RUN on the OpenCL driver against
 * P followed by C on the same random inputs, every buffer compared bit for
 * bit (tests/rw/rwt_cl.c); the oracle itself is shown to catch a wrong
 * kernel. Then every refusal, with its reason. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "rewriter/rw.h"
#include "tests/rw/rwt.h"

static const char sobel_cl[] =
#include "apps/sobel_cl.h"
    ;
static const char geomatrix_cl[] =
#include "apps/geomatrix_cl.h"
    ;
static const char exposure_cl[] =
#include "apps/exposure_cl.h"
    ;

#define BUF(n) { RWT_BUF, (n), 0, 0.0f }
#define INT(v) { RWT_INT, 0, (v), 0.0f }
#define UINT(v) { RWT_UINT, 0, (v), 0.0f }
#define ULONG(v) { RWT_ULONG, 0, (v), 0.0f }
#define FLT(v) { RWT_FLOAT, 0, 0, (v) }
#define SRC(s) (s), sizeof(s) - 1
#define FLOATS(n) { (n) * 4, RWT_F32 }
#define INTS(n) { (n) * 4, RWT_I32 }

#define NAME "clrr_fused"

/* Fuses @p cs's kernels, checks the result's shape and syntax, runs it
 * against P then C; returns the fused program (release with rw_fuse_free). */
static int fuse_run(const rwt_case *cs, unsigned p_buf, unsigned c_buf, int keep,
                    rw_fuse_out *o)
{
    rw_fuse_req r = { cs->src, cs->len, cs->options, cs->p, cs->c, p_buf, c_buf, keep, NAME };
    char err[4096];
    rw_status st;
    unsigned i;
    int rc, fallback;

    st = rw_fuse(&r, o, err, sizeof err);
    if (st != RW_OK)
        fprintf(stderr, "\n  rw_fuse(%s, %s): %s\n", cs->p, cs->c, err);
    CU_ASSERT_EQUAL(st, RW_OK);
    if (st != RW_OK)
        return -1;
    CU_ASSERT(o->len > cs->len && !memcmp(o->source, cs->src, cs->len));
    CU_ASSERT_EQUAL(strlen(o->source), o->len);
    /* B is P's parameter when the store stays, else C's when C may have to
     * load it (P's store may not run), else no parameter at all */
    fallback = strstr(o->source + cs->len, "__clrr_stored") != NULL;
    CU_ASSERT_EQUAL(o->nparams, cs->np + cs->nc - 2u + (keep || fallback ? 1u : 0u));
    for (i = 0; i < o->nparams; i++) {
        const rw_param_src *s = &o->params[i];
        CU_ASSERT(s->from == RW_FROM_PRODUCER || s->from == RW_FROM_CONSUMER);
        CU_ASSERT(s->from == RW_FROM_PRODUCER
                      ? s->index < cs->np && (keep || s->index != p_buf)
                      : s->index < cs->nc && (s->index != c_buf || (fallback && !keep)));
        if (i > 0)   /* P's parameters first, each kernel's in order */
            CU_ASSERT(s->from > o->params[i - 1].from ||
                      (s->from == o->params[i - 1].from && s->index > o->params[i - 1].index));
    }
    if (!rwt_syntax_ok(o->source, o->len, cs->options, err, sizeof err)) {
        fprintf(stderr, "\n  clang -fsyntax-only: %s\n%s\n", err, o->source + cs->len);
        CU_FAIL("the fused source does not pass clang -fsyntax-only");
    }
    rc = rwt_compare(cs, o, NAME, keep, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "\n  %s -> %s (keep_store %d): %s\n%s\n", cs->p, cs->c, keep, err,
                o->source + cs->len);
    CU_ASSERT_EQUAL(rc, 0);
    return rc;
}

static void fuse_run_both(const rwt_case *cs, unsigned p_buf, unsigned c_buf)
{
    rw_fuse_out o;
    int keep;

    for (keep = 0; keep <= 1; keep++) {
        if (fuse_run(cs, p_buf, c_buf, keep, &o) == 0 && !keep) {
            /* the comparison of B has teeth: without the store, B differs */
            char err[256];
            CU_ASSERT_EQUAL(rwt_compare(cs, &o, NAME, 1, err, sizeof err), 1);
        }
        rw_fuse_free(&o);
    }
}

/* ------------------------------------------------- the workload kernels */

/* sobel_gx -> sobel_magnitude through gx: 2-D, early returns at the border
 * of a launch rounded up past the image, a helper function. */
static void test_sobel(void)
{
    enum { W = 37, H = 23 };
    rwt_case cs = {
        SRC(sobel_cl), NULL, "sobel_gx", "sobel_magnitude",
        4, { FLOATS(W * H), FLOATS(W * H), FLOATS(W * H), FLOATS(W * H) },
        4, 5, { BUF(0), BUF(1), INT(W), INT(H) }, { BUF(1), BUF(2), BUF(3), INT(W), INT(H) },
        2, { 40, 24 }, { 0, 0 }, 1,
    };
    fuse_run_both(&cs, 1, 0);
}

/* sobel_gx beside sobel_gy (horizontal: no buffer between them, both read
 * the image): one kernel of both parameter lists, no private variable, P's
 * early return jumps over nothing of C's, every store kept; every buffer
 * as the two launches left it. Naming a buffer on one side only is
 * refused. */
static void test_horizontal(void)
{
    enum { W = 37, H = 23 };
    rwt_case cs = {
        SRC(sobel_cl), NULL, "sobel_gx", "sobel_gy",
        3, { FLOATS(W * H), FLOATS(W * H), FLOATS(W * H) },
        4, 4, { BUF(0), BUF(1), INT(W), INT(H) }, { BUF(0), BUF(2), INT(W), INT(H) },
        2, { 40, 24 }, { 0, 0 }, 1,
    };
    rw_fuse_req r = { cs.src, cs.len, NULL, cs.p, cs.c, RW_NO_BUF, RW_NO_BUF, 1, NAME };
    rw_fuse_out o;
    char err[4096];
    CU_ASSERT_FATAL(rw_fuse(&r, &o, err, sizeof err) == RW_OK);
    CU_ASSERT(o.nparams == 8 && o.params[3].from == RW_FROM_PRODUCER && o.params[4].from == RW_FROM_CONSUMER &&
              o.params[4].index == 0);
    CU_ASSERT(!strstr(o.source + cs.len, "__clrr_v") && strstr(o.source + cs.len, "goto __clrr_p_done;"));
    CU_ASSERT(rwt_syntax_ok(o.source, o.len, NULL, err, sizeof err));
    int rc = rwt_compare(&cs, &o, NAME, 1, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "\n  horizontal: %s\n%s\n", err, o.source + cs.len);
    CU_ASSERT_EQUAL(rc, 0);
    rw_fuse_free(&o);
    r.c_buf = 1;
    CU_ASSERT(rw_fuse(&r, &o, err, sizeof err) == RW_ERR_ARG && strstr(err, "horizontal"));
}

/* mul -> pow_scalar through c (P's third parameter, C's first). */
static void test_geomatrix(void)
{
    enum { N = 1000 };
    rwt_case cs = {
        SRC(geomatrix_cl), NULL, "mul", "pow_scalar",
        4, { FLOATS(N), FLOATS(N), FLOATS(N), FLOATS(N) },
        4, 4, { BUF(0), BUF(1), BUF(2), ULONG(N) }, { BUF(2), FLT(1.7f), BUF(3), ULONG(N) },
        1, { 1024, 1 }, { 0, 0 }, 2,
    };
    fuse_run_both(&cs, 2, 0);
}

/* well_exposed -> weight through well_exposed's dst, weight's e. */
static void test_exposure(void)
{
    enum { N = 777 };
    rwt_case cs = {
        SRC(exposure_cl), NULL, "well_exposed", "weight",
        4, { FLOATS(N), FLOATS(N), FLOATS(N), FLOATS(N) },
        3, 4, { BUF(0), BUF(1), ULONG(N) }, { BUF(2), BUF(1), BUF(3), ULONG(N) },
        1, { 800, 1 }, { 0, 0 }, 1,
    };
    fuse_run_both(&cs, 1, 1);
}

/* ------------------------------------------------------ inline kernels */

/* Macros around B and the parameters (in macro arguments), float4 with
 * components, a store with no space after '=', and a local named like the
 * p_ prefix (so P's parameters get another one). */
static const char vec_cl[] =
    "#define IDX(x, y, w) ((size_t)(y) * (w) + (x))\n"
    "#define MX(a, b) ((a) > (b) ? (a) : (b))\n"
    "#define SCALE 0.5f\n"
    "__kernel void produce(__global const float4 *in, __global float4 *mid, int w, int h)\n"
    "{\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    int p_w = 3;\n"
    "    if (x >= w || y >= h)\n"
    "        return;\n"
    "    float4 v = in[IDX(x, y, w)] * SCALE;\n"
    "    mid[IDX(x, y, w)]=SCALE + v + (float4)(p_w);\n"
    "}\n"
    "__kernel void consume(__global const float4 *mid, __global float *out, int w, int h)\n"
    "{\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    if (x >= w || y >= h) { return; }\n"
    "    float4 m = mid[IDX(x, y, w)];\n"
    "    out[IDX(x, y, w)] = MX(mid[IDX(x, y, w)].x, 0.9f) + m.y * m.z - (mid)[IDX(x, y, w)].s3;\n"
    "}\n";

static void test_vectors_macros(void)
{
    enum { W = 19, H = 7 };
    rwt_case cs = {
        SRC(vec_cl), NULL, "produce", "consume",
        3, { FLOATS(4 * W * H), FLOATS(4 * W * H), FLOATS(W * H) },
        4, 4, { BUF(0), BUF(1), INT(W), INT(H) }, { BUF(1), BUF(2), INT(W), INT(H) },
        2, { 24, 8 }, { 0, 0 }, 1,
    };
    rw_fuse_out o;

    if (fuse_run(&cs, 1, 0, 0, &o) == 0) {
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source + cs.len, "p1_in"));
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source + cs.len, "float4 __clrr_v;"));
    }
    rw_fuse_free(&o);
    fuse_run_both(&cs, 1, 0);
}

/* reqd_work_group_size on both (kept), ints, the store under a switch
 * case; C reads B under the condition P stored it. */
static const char attr_cl[] =
    "__kernel __attribute__((reqd_work_group_size(8, 1, 1)))\n"
    "void square_even(__global const int *a, __global int *t, uint n)\n"
    "{\n"
    "    uint i = get_global_id(0);\n"
    "    if (i >= n)\n"
    "        return;\n"
    "    int v = a[i];\n"
    "    switch (v & 1) {\n"
    "    case 0:\n"
    "        t[i] = v * v - 7;\n"
    "        break;\n"
    "    default:\n"
    "        return;\n"
    "    }\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(8, 1, 1)))\n"
    "void add_one(__global const int *a, __global const int *t, __global int *o, uint n)\n"
    "{\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n && (a[i] & 1) == 0)\n"
    "        o[i] = t[i] + 1;\n"
    "}\n";

static void test_attributes(void)
{
    enum { N = 61 };
    rwt_case cs = {
        SRC(attr_cl), NULL, "square_even", "add_one",
        3, { INTS(N), INTS(N), INTS(N) },
        3, 4, { BUF(0), BUF(1), UINT(N) }, { BUF(0), BUF(1), BUF(2), UINT(N) },
        1, { 64, 1 }, { 8, 1 }, 1,
    };
    rw_fuse_out o;

    if (fuse_run(&cs, 1, 1, 0, &o) == 0)
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source + cs.len, "reqd_work_group_size(8, 1, 1)"));
    rw_fuse_free(&o);
    fuse_run_both(&cs, 1, 1);
}

/* Macros from the build options, in the parse and in the driver's build. */
static const char opts_cl[] =
    "__kernel void affine(__global const float *in, __global float *mid, uint n)\n"
    "{\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        mid[i] = in[i] * FACTOR + OFFSET;\n"
    "}\n"
    "__kernel void halve(__global const float *mid, __global float *out, uint n)\n"
    "{\n"
    "    uint i = get_global_id(0);\n"
    "#ifdef HALVE\n"
    "    if (i < n)\n"
    "        out[i] = mid[i] * 0.5f;\n"
    "#endif\n"
    "}\n";

static void test_options(void)
{
    enum { N = 100 };
    rwt_case cs = {
        SRC(opts_cl), "-D FACTOR=3 -DOFFSET=1.5f -DHALVE -cl-mad-enable -Werror -g",
        "affine", "halve",
        3, { FLOATS(N), FLOATS(N), FLOATS(N) },
        3, 3, { BUF(0), BUF(1), UINT(N) }, { BUF(1), BUF(2), UINT(N) },
        1, { 128, 1 }, { 0, 0 }, 1,
    };
    rw_fuse_req r = { SRC(sobel_cl), "-cl-std=CL2.0", "sobel_gx", "sobel_magnitude", 1, 0, 0,
                      NAME };
    rw_fuse_out o;
    char err[1024];

    fuse_run_both(&cs, 1, 0);
    /* OpenCL C 2.0 */
    CU_ASSERT_EQUAL(rw_fuse(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT(o.source && rwt_syntax_ok(o.source, o.len, "-cl-std=CL2.0", err, sizeof err));
    rw_fuse_free(&o);
}

/* P stores only where a[i] is even; C reads B everywhere: where P did not
 * store, the fused kernel loads B as C would have. */
static const char guard_cl[] =
    "__kernel void triple_even(__global const int *a, __global int *t)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (a[i] & 1)\n"
    "        return;\n"
    "    t[i] = 3 * a[i];\n"
    "}\n"
    "__kernel void plus_one(__global const int *t, __global int *o)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    o[i] = t[i] + 1;\n"
    "}\n";

static void test_guards(void)
{
    enum { N = 300 };
    rwt_case cs = {
        SRC(guard_cl), NULL, "triple_even", "plus_one",
        3, { INTS(N), INTS(N), INTS(N) },
        2, 2, { BUF(0), BUF(1) }, { BUF(1), BUF(2) },
        1, { N, 1 }, { 0, 0 }, 1,
    };
    rw_fuse_out o;

    if (fuse_run(&cs, 1, 0, 0, &o) == 0) {
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source + cs.len, "__clrr_stored = 1, __clrr_v = "));
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source + cs.len, "(__clrr_stored ? __clrr_v : c_t[i])"));
    }
    rw_fuse_free(&o);
    fuse_run_both(&cs, 1, 0);
}

/* A kernel fused with itself: scale, then scale again. Its store always
 * runs: B is no parameter at all, and never loaded. */
static const char self_cl[] =
    "__kernel void scale(__global const float *a, __global float *b, float s)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    b[i] = a[i] * s;\n"
    "}\n";

static void test_self(void)
{
    enum { N = 256 };
    rwt_case cs = {
        SRC(self_cl), NULL, "scale", "scale",
        3, { FLOATS(N), FLOATS(N), FLOATS(N) },
        3, 3, { BUF(0), BUF(1), FLT(3.0f) }, { BUF(1), BUF(2), FLT(-0.25f) },
        1, { N, 1 }, { 0, 0 }, 1,
    };
    rw_fuse_out o;

    if (fuse_run(&cs, 1, 0, 0, &o) == 0) {
        CU_ASSERT_EQUAL(o.nparams, 4);
        CU_ASSERT_PTR_NULL(strstr(o.source + cs.len, "__clrr_stored"));
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source + cs.len, "c_b[i] = __clrr_v * c_s;"));
    }
    rw_fuse_free(&o);
    fuse_run_both(&cs, 1, 0);
}

/* The oracle is not blind: a hand-written "fusion" that is off by a
 * rounding error is caught. */
static void test_oracle(void)
{
    enum { N = 1000 };
    static const char wrong[] =
        "__kernel void " NAME "(__global const float *a, __global const float *b, ulong n,\n"
        "                       float p, __global float *c, ulong n2)\n"
        "{\n"
        "    size_t i = get_global_id(0);\n"
        "    if (i < n2)\n"
        "        c[i] = pow(a[i] * b[i] * 1.0000001f, p);\n"
        "}\n";
    rwt_case cs = {
        SRC(geomatrix_cl), NULL, "mul", "pow_scalar",
        4, { FLOATS(N), FLOATS(N), FLOATS(N), FLOATS(N) },
        4, 4, { BUF(0), BUF(1), BUF(2), ULONG(N) }, { BUF(2), FLT(1.7f), BUF(3), ULONG(N) },
        1, { 1024, 1 }, { 0, 0 }, 2,
    };
    rw_fuse_out o;
    char err[1024];

    memset(&o, 0, sizeof o);
    o.len = strlen(geomatrix_cl) + strlen(wrong);
    o.source = malloc(o.len + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o.source);
    strcpy(o.source, geomatrix_cl);
    strcat(o.source, wrong);
    o.nparams = 6;
    o.params[0] = (rw_param_src){ RW_FROM_PRODUCER, 0 };
    o.params[1] = (rw_param_src){ RW_FROM_PRODUCER, 1 };
    o.params[2] = (rw_param_src){ RW_FROM_PRODUCER, 3 };
    o.params[3] = (rw_param_src){ RW_FROM_CONSUMER, 1 };
    o.params[4] = (rw_param_src){ RW_FROM_CONSUMER, 2 };
    o.params[5] = (rw_param_src){ RW_FROM_CONSUMER, 3 };
    CU_ASSERT_EQUAL(rwt_compare(&cs, &o, NAME, 0, err, sizeof err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "buffer 3 differs"));
    rw_fuse_free(&o);
}

/* ------------------------------------------------------------ refusals */

#define PROD(body)                                                                 \
    "__kernel void prod(__global const float *a, __global float *b, uint n)\n{\n" \
    "    uint i = get_global_id(0);\n" body "\n}\n"
#define PROD_OK PROD("    if (i < n)\n        b[i] = a[i] + 1.0f;")
#define CONS(body)                                                                 \
    "__kernel void cons(__global const float *b, __global float *o, uint n)\n{\n" \
    "    uint i = get_global_id(0);\n" body "\n}\n"
#define CONS_OK CONS("    if (i < n)\n        o[i] = b[i] * 2.0f;")

static const struct refusal {
    const char *what, *src, *options, *p, *c;
    unsigned pb, cb;
    const char *name;
    rw_status st;
    const char *msg;
} refusals[] = {
    { "P stores twice", PROD("    b[i] = a[i];\n    b[i] = 2.0f;") CONS_OK, NULL, "prod", "cons",
      1, 0, NAME, RW_ERR_REFUSED, "prod stores b twice (lines 4 and 5)" },
    { "P stores in a for loop", PROD("    for (uint k = 0; k < 2; k++)\n        b[i] = a[i] * k;")
      CONS_OK, NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod stores b inside a loop" },
    { "P stores in a while loop", PROD("    while (n > 0) {\n        b[i] = a[i];\n        break;\n    }")
      CONS_OK, NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "inside a loop (line 5)" },
    { "P store in an expression", PROD("    float t = (b[i] = a[i]);") CONS_OK, NULL, "prod",
      "cons", 1, 0, NAME, RW_ERR_REFUSED, "is not a plain statement" },
    { "P store is a compound assignment", PROD("    b[i] += a[i];") CONS_OK, NULL, "prod", "cons",
      1, 0, NAME, RW_ERR_REFUSED, "prod updates b in place" },
    { "P reads B", PROD("    b[i] = a[i];\n    if (b[i] > 0.5f)\n        return;") CONS_OK, NULL,
      "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod reads b (line 5)" },
    { "P passes B to a function",
      "void put(__global float *d, uint i, float v) { d[i] = v; }\n" PROD("    put(b, i, a[i]);")
      CONS_OK, NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod passes b to a function" },
    { "P takes the address", PROD("    __global float *q = &b[i];\n    *q = a[i];") CONS_OK, NULL,
      "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod takes the address of an element of b" },
    { "P never stores", PROD("    if (a[i] > 2.0f)\n        return;") CONS_OK, NULL, "prod",
      "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod never stores b" },
    { "P uses goto", PROD("    if (i >= n)\n        goto end;\n    b[i] = a[i];\nend:;") CONS_OK,
      NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod uses goto" },
    { "C writes B",
      PROD_OK "__kernel void cons(__global float *b, __global float *o)\n{\n"
              "    uint i = get_global_id(0);\n    o[i] = b[i];\n    b[i] = 0.0f;\n}\n",
      NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "cons writes b (line 11)" },
    { "C increments B",
      PROD_OK "__kernel void cons(__global float *b)\n{\n    b[get_global_id(0)]++;\n}\n", NULL,
      "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "cons writes b (line 9)" },
    { "C writes a component of B",
      "__kernel void prod2(__global float2 *b)\n{\n    b[get_global_id(0)] = (float2)(1.0f, 2.0f);\n}\n"
      "__kernel void cons2(__global float2 *b, __global float *o)\n{\n"
      "    size_t i = get_global_id(0);\n    o[i] = b[i].y;\n    b[i].x = 0.0f;\n}\n",
      NULL, "prod2", "cons2", 0, 0, NAME, RW_ERR_REFUSED, "cons2 writes b (line 9)" },
    { "C passes B to a function", PROD_OK CONS("    o[i] = vload2(0, b).x;"), NULL, "prod", "cons",
      1, 0, NAME, RW_ERR_REFUSED, "cons passes b to a function" },
    { "C uses pointer arithmetic", PROD_OK CONS("    o[i] = *(b + i);"), NULL, "prod", "cons", 1,
      0, NAME, RW_ERR_REFUSED, "cons uses b other than as b[index]" },
    { "C index with a side effect", PROD_OK CONS("    uint j = i;\n    o[i] = b[j++];"), NULL,
      "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "holds an increment" },
    { "barrier in P", PROD("    b[i] = a[i];\n    barrier(CLK_GLOBAL_MEM_FENCE);") CONS_OK, NULL,
      "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod calls barrier() (line 5)" },
    { "barrier in a function C calls",
      "void wait_all(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
      "float twice(float x) { wait_all(); return 2.0f * x; }\n" PROD_OK
          CONS("    o[i] = twice(b[i]);"),
      NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "wait_all calls barrier() (line 1)" },
    { "__local variable in P", PROD("    __local float t[4];\n    t[0] = a[i];\n    b[i] = t[0];")
      CONS_OK, NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod declares __local t" },
    { "__local parameter in C",
      PROD_OK "__kernel void cons(__global const float *b, __global float *o, __local float *s)\n"
              "{\n    o[get_global_id(0)] = b[get_global_id(0)];\n}\n",
      NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "cons takes __local memory (s)" },
    { "B __constant in C",
      PROD_OK "__kernel void cons(__constant float *b, __global float *o)\n"
              "{\n    o[get_global_id(0)] = b[get_global_id(0)];\n}\n",
      NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "cons: parameter 0 (b) is not a __global" },
    { "B is a scalar", PROD_OK CONS_OK, NULL, "prod", "cons", 2, 0, NAME, RW_ERR_REFUSED,
      "prod: parameter 2 (n) is not a __global pointer" },
    { "B index out of range", PROD_OK CONS_OK, NULL, "prod", "cons", 7, 0, NAME, RW_ERR_ARG,
      "prod has 3 parameters" },
    { "element types differ",
      PROD_OK "__kernel void cons(__global const int *b, __global float *o)\n"
              "{\n    o[get_global_id(0)] = b[get_global_id(0)];\n}\n",
      NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod's b holds float but cons's b holds int" },
    { "attributes differ",
      "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
      "void prod(__global float *b)\n{\n    b[get_global_id(0)] = 1.0f;\n}\n" CONS_OK,
      NULL, "prod", "cons", 0, 0, NAME, RW_ERR_REFUSED, "different attributes" },
    { "store spelled through a macro", "#define OUT b\n" PROD("    OUT[i] = a[i];") CONS_OK, NULL,
      "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "comes from macro OUT" },
    { "parameter used in a macro body", "#define A_AT(k) a[k]\n" PROD("    b[i] = A_AT(i);")
      CONS_OK, NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "comes from macro A_AT" },
    { "return spelled through a macro", "#define GUARD if (i >= n) return\n"
      PROD("    GUARD;\n    b[i] = a[i];") CONS_OK, NULL, "prod", "cons", 1, 0, NAME,
      RW_ERR_REFUSED, "comes from macro GUARD" },
    { "inactive branch in P",
      PROD("#ifdef NOPE\n    b[i] = 0.0f;\n#else\n    b[i] = a[i];\n#endif") CONS_OK, NULL,
      "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "prod holds a preprocessor branch" },
    { "macro redefined after the kernels",
      "#define K 2.0f\n" PROD("    b[i] = a[i] * K;") CONS_OK "#undef K\n#define K 3.0f\n",
      NULL, "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "macro K used at line 5 means something" },
    { "macro undefined after the kernels",
      "#define K 2.0f\n" PROD("    b[i] = a[i] * K;") CONS_OK "#undef K\n", NULL, "prod", "cons",
      1, 0, NAME, RW_ERR_REFUSED, "is undefined at the end of the program" },
    { "condition false after the kernels",
      "#define ON\n" PROD("#ifdef ON\n    b[i] = a[i];\n#endif") CONS_OK "#undef ON\n", NULL,
      "prod", "cons", 1, 0, NAME, RW_ERR_REFUSED, "preprocessor condition" },
    { "kernel not found", PROD_OK CONS_OK, NULL, "nope", "cons", 1, 0, NAME, RW_ERR_REFUSED,
      "kernel nope not found" },
    { "a function, not a kernel",
      "float twice(float x) { return 2.0f * x; }\n" PROD_OK CONS_OK, NULL, "prod", "twice", 1,
      0, NAME, RW_ERR_REFUSED, "twice is a function, not a kernel" },
    { "name already used", PROD_OK CONS_OK, NULL, "prod", "cons", 1, 0, "cons", RW_ERR_REFUSED,
      "the name cons is already used" },
    { "name not an identifier", PROD_OK CONS_OK, NULL, "prod", "cons", 1, 0, "1st",
      RW_ERR_ARG, "not an identifier" },
    { "C++ for OpenCL", PROD_OK CONS_OK, "-cl-std=CLC++", "prod", "cons", 1, 0, NAME,
      RW_ERR_REFUSED, "only OpenCL C" },
    { "parse error", PROD("    b[i] = a[i]") CONS_OK, NULL, "prod", "cons", 1, 0, NAME,
      RW_ERR_PARSE, "program.cl:4:" },
    { "parse error from an option", PROD("    b[i] = a[i] * K;") CONS_OK, "-DK=", "prod", "cons",
      1, 0, NAME, RW_ERR_PARSE, "error: " },
};

static void test_refusals(void)
{
    size_t i;

    for (i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        const struct refusal *t = &refusals[i];
        rw_fuse_req r = { t->src, strlen(t->src), t->options, t->p, t->c, t->pb, t->cb, 0,
                          t->name };
        rw_fuse_out o;
        char err[1024] = "";
        rw_status st = rw_fuse(&r, &o, err, sizeof err);
        int ok = st == t->st && strstr(err, t->msg) && !o.source && o.nparams == 0;
        if (!ok)
            fprintf(stderr, "\n  %s: status %d, err \"%s\" (want %d, \"%s\")\n", t->what, st, err,
                    t->st, t->msg);
        CU_ASSERT(ok);
        rw_fuse_free(&o);
        /* keep_store changes no refusal */
        r.keep_store = 1;
        st = rw_fuse(&r, &o, err, sizeof err);
        if (st == RW_OK)
            fprintf(stderr, "\n  %s: fused with keep_store\n", t->what);
        CU_ASSERT(st != RW_OK);
        rw_fuse_free(&o);
    }
}

static void test_bad_calls(void)
{
    rw_fuse_req r = { SRC(geomatrix_cl), NULL, "mul", "pow_scalar", 2, 0, 0, NAME };
    rw_fuse_out o;
    char err[256];

    CU_ASSERT_EQUAL(rw_fuse(NULL, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_EQUAL(rw_fuse(&r, NULL, err, sizeof err), RW_ERR_ARG);
    r.name = "";
    CU_ASSERT_EQUAL(rw_fuse(&r, &o, NULL, 0), RW_ERR_ARG);
    r.name = "a-b";
    CU_ASSERT_EQUAL(rw_fuse(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.name = NAME;
    r.producer = NULL;
    CU_ASSERT_EQUAL(rw_fuse(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.producer = "mul";
    CU_ASSERT_EQUAL(rw_fuse(&r, &o, err, 1), RW_OK);   /* a tiny err is fine */
    rw_fuse_free(&o);
    rw_fuse_free(&o);   /* twice */
    rw_fuse_free(NULL);
    CU_ASSERT_STRING_EQUAL(rw_strerror(RW_ERR_REFUSED), "the kernels cannot be rewritten this way");
    CU_ASSERT_STRING_EQUAL(rw_strerror((rw_status)42), "unknown status");
}

/* libclrr-rw.so (../lib from the test) exports rw.h and nothing else. */
static void test_shared_object(void)
{
    rw_status (*fuse)(const rw_fuse_req *, rw_fuse_out *, char *, size_t);
    void (*release)(rw_fuse_out *);
    rw_fuse_req r = { SRC(geomatrix_cl), NULL, "mul", "pow_scalar", 2, 0, 0, NAME };
    rw_fuse_out o;
    char err[256];
    void *f, *g;
    int hidden;
    void *h = rwt_rw_so("rw_fuse", "rw_fuse_free", &f, &g, &hidden);

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT(hidden);   /* rw_strerror exported, internals stay inside */
    if (f && g) {
        memcpy(&fuse, &f, sizeof f);
        memcpy(&release, &g, sizeof g);
        CU_ASSERT_EQUAL(fuse(&r, &o, err, sizeof err), RW_OK);
        CU_ASSERT(o.source && o.nparams == 7);
        release(&o);
    } else {
        CU_FAIL("libclrr-rw.so does not export rw_fuse and rw_fuse_free");
    }
    dlclose(h);
}

int main(void)
{
    CU_pSuite s;
    unsigned failed;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("rw", NULL, NULL);
    if (!s ||
        !CU_add_test(s, "sobel_gx -> sobel_magnitude", test_sobel) ||
        !CU_add_test(s, "sobel_gx beside sobel_gy (horizontal)", test_horizontal) ||
        !CU_add_test(s, "mul -> pow_scalar", test_geomatrix) ||
        !CU_add_test(s, "well_exposed -> weight", test_exposure) ||
        !CU_add_test(s, "vectors and macros", test_vectors_macros) ||
        !CU_add_test(s, "attributes", test_attributes) ||
        !CU_add_test(s, "build options", test_options) ||
        !CU_add_test(s, "guards that differ", test_guards) ||
        !CU_add_test(s, "a kernel with itself", test_self) ||
        !CU_add_test(s, "the oracle catches a wrong kernel", test_oracle) ||
        !CU_add_test(s, "refusals", test_refusals) ||
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
