/* test_rw_vector.c — the vector form of coarsened kernels (rw_coarsen
 * with RW_COARSEN_VECTOR, rewriter/rw.h). Each case runs kernel K on the
 * OpenCL device as written (one launch) and the vector form by 2, 4, 8
 * and 16 over the global size divided by the factor, on the same random
 * inputs and arguments; every buffer must be equal bit for bit
 * (tests/rw/rwp.h, rwp-run). Kernels: vecadd with a bound that is not a
 * multiple of the factors (the scalar remainder runs), the elementwise
 * kernels of the exposure workload (+=, /=, a ulong bound), SHOC's
 * triad (no guard) with a global offset, an int kernel, vector locals
 * with builtins that take a broadcast scalar, and the `return` guard. The
 * oracle is shown to catch a wrong launch size, and the generated text to
 * hold vloads. Then every refusal (a builtin without a kept vector form:
 * blackscholes's log, exposure's exp, which PoCL's exp4 does not match bit
 * for bit; a user function taking a loaded value; another index: contrast; control flow, comparisons, ?:,
 * casts, conversions, the global id as a value, a condition on it that is
 * not a bounds guard, a guard with an else, a store before the guard,
 * short, char and struct buffers, atomics, barriers) and bad requests;
 * doubles where the device runs them. */
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
static const char exposure_cl[] =
#include "apps/exposure_cl.h"
    ;

#define BUF(n) { RWP_BUF, (n), 0, 0.0f }
#define INT(v) { RWP_INT, 0, (v), 0.0f }
#define UINT(v) { RWP_UINT, 0, (v), 0.0f }
#define ULONG(v) { RWP_ULONG, 0, (v), 0.0f }
#define FLT(v) { RWP_FLOAT, 0, 0, (v) }
#define SRC(s) (s), sizeof(s) - 1
#define FLOATS(n) { (size_t)(n) * 4, RWP_F32 }
#define INTS(n) { (size_t)(n) * 4, RWP_I32 }

#define NAME "clrr_vec"

/* The vector form of cs->kernel by 2, 4, 8 and 16; each must build, pass
 * clang -fsyntax-only, hold a vload or vstore of its width and leave every
 * buffer as K does. */
static void vec_run(const rwp_case *cs)
{
    static const unsigned fs[] = { 2, 4, 8, 16 };
    unsigned char *full = NULL;
    char err[4096], want[16];
    unsigned i;

    if (rwp_full(cs, &full, err, sizeof err) < 0) {
        fprintf(stderr, "\n  %s as written: %s\n", cs->kernel, err);
        CU_FAIL("the kernel does not run as written");
        return;
    }
    for (i = 0; i < 4; i++) {
        rw_coarsen_req r = { cs->src, cs->len, cs->options, cs->kernel, NAME, 0, fs[i], RW_COARSEN_VECTOR };
        rw_coarsen_out o;
        rw_status st = rw_coarsen(&r, &o, err, sizeof err);
        int rc;
        if (st != RW_OK)
            fprintf(stderr, "\n  rw_coarsen(%s, vector %u): %s\n", cs->kernel, fs[i], err);
        CU_ASSERT_EQUAL(st, RW_OK);
        if (st != RW_OK)
            continue;
        CU_ASSERT(o.len > cs->len && !memcmp(o.source, cs->src, cs->len));
        CU_ASSERT_EQUAL(o.nparams, cs->nargs);
        snprintf(want, sizeof want, "vstore%u(", fs[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source + cs->len, want));
        if (!rwt_syntax_ok(o.source, o.len, cs->options, err, sizeof err)) {
            fprintf(stderr, "\n  clang -fsyntax-only: %s\n%s\n", err, o.source + cs->len);
            CU_FAIL("the vector source does not pass clang -fsyntax-only");
        }
        rc = rwp_compare_coarse(cs, full, o.source, o.len, NAME, 0, fs[i], err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "\n  %s vector %u: %s\n%s\n", cs->kernel, fs[i], err, o.source + cs->len);
        CU_ASSERT_EQUAL(rc, 0);
        rw_coarsen_free(&o);
    }
    free(full);
}

/* n = 4001 of 4096: the last lanes of work-item 1000 (F = 4) straddle the
 * bound, so the scalar remainder runs there */
static const rwp_case vecadd_case = {
    SRC(vecadd_cl), NULL, "vecadd", 3, { FLOATS(4096), FLOATS(4096), FLOATS(4096) }, 4,
    { BUF(0), BUF(1), BUF(2), UINT(4001) },
    1, { 0, 0, 0 }, { 4096, 1, 1 }, { 64, 1, 1 },
};

static void test_vecadd(void)
{
    vec_run(&vecadd_case);
}

#define EXPO2(k, nb) { SRC(exposure_cl), NULL, k, nb, { FLOATS(2048), FLOATS(2048), FLOATS(2048) }, \
                       nb + 1, { BUF(0), BUF(1), BUF(2), ULONG(2043) }, 1, { 0, 0, 0 }, { 2048, 1, 1 }, \
                       { 0, 0, 0 } }

static void test_exposure(void)
{
    static const rwp_case cases[] = {
        { SRC(exposure_cl), NULL, "copy", 2, { FLOATS(2048), FLOATS(2048) }, 3,
          { BUF(0), BUF(1), ULONG(2048) }, 1, { 0, 0, 0 }, { 2048, 1, 1 }, { 0, 0, 0 } },
        { SRC(exposure_cl), NULL, "accumulate", 2, { FLOATS(2048), FLOATS(2048) }, 3,
          { BUF(0), BUF(1), ULONG(2043) }, 1, { 0, 0, 0 }, { 2048, 1, 1 }, { 0, 0, 0 } },
        { SRC(exposure_cl), NULL, "divide_by", 2, { FLOATS(2048), FLOATS(2048) }, 3,
          { BUF(0), BUF(1), ULONG(2043) }, 1, { 0, 0, 0 }, { 2048, 1, 1 }, { 0, 0, 0 } },
        EXPO2("weight", 3),
        EXPO2("madd", 3),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        vec_run(&cases[i]);
}

/* SHOC's triad as its source has it: no guard; launched with an offset */
static const char triad_cl[] =
    "__kernel void Triad(__global const float *memA, __global const float *memB,\n"
    "                    __global float *memC, const float s)\n"
    "{\n"
    "    int gid = get_global_id(0);\n"
    "    memC[gid] = memA[gid] + s*memB[gid];\n"
    "}\n";

static void test_triad(void)
{
    rwp_case c = { SRC(triad_cl), NULL, "Triad", 3, { FLOATS(2048 + 64), FLOATS(2048 + 64), FLOATS(2048 + 64) },
                   4, { BUF(0), BUF(1), BUF(2), FLT(1.75f) }, 1, { 64, 0, 0 }, { 2048, 1, 1 }, { 32, 1, 1 } };
    vec_run(&c);
}

/* ints, vector locals over several statements, a broadcast scalar in a
 * builtin, the return guard, get_global_id(0) itself as the index */
static const char mixed_cl[] =
    "__kernel void ints(__global const int *a, __global const int *b, __global int *c, int k, int n)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    if (i >= n)\n"
    "        return;\n"
    "    int x = a[i] * 3, y;\n"
    "    y = (x + b[i]) >> 1;\n"
    "    y ^= k;\n"
    "    c[i] = max(y, k) - min(a[i], 500) + (int)abs_diff(k, n);\n"
    "}\n"
    "__kernel void locals(__global const float *a, __global float *o, float t, uint n)\n"
    "{\n"
    "    if (get_global_id(0) < n && t > 0.0f) {\n"
    "        const float v = a[get_global_id(0)];\n"
    "        float w = fmax(v, t), acc = 0.0f;\n"
    "        for (int r = 0; r < 3; r++)\n"
    "            acc += sqrt(w + (float)r) * t;\n"
    "        o[get_global_id(0)] = fma(acc, v, t) / (1.0f + w);\n"
    "    }\n"
    "}\n";

static void test_mixed(void)
{
    rwp_case ints = { SRC(mixed_cl), NULL, "ints", 3, { INTS(1024), INTS(1024), INTS(1024) }, 5,
                      { BUF(0), BUF(1), BUF(2), INT(77), INT(1001) }, 1, { 0, 0, 0 }, { 1024, 1, 1 },
                      { 0, 0, 0 } };
    rwp_case locals = { SRC(mixed_cl), NULL, "locals", 2, { FLOATS(1024), FLOATS(1024) }, 4,
                        { BUF(0), BUF(1), FLT(0.25f), UINT(1019) }, 1, { 0, 0, 0 }, { 1024, 1, 1 },
                        { 16, 1, 1 } };
    vec_run(&ints);
    vec_run(&locals);
}

/* doubles (the kernel as written needs fp64: skipped where it does not run) */
static const char dbl_cl[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "__kernel void dbl(__global const double *a, __global double *b, double s, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n) {\n"
    "        double t = a[i] * s + 1.0;\n"
    "        b[i] = sqrt(fabs(t)) / (t + 3.0);\n"
    "    }\n"
    "}\n";

static void test_double(void)
{
    rwp_case c = { SRC(dbl_cl), NULL, "dbl", 2, { FLOATS(2048), FLOATS(2048) }, 4,
                   { BUF(0), BUF(1), { RWP_RAW, 8, 0x3ff8000000000000LL, 0.0f }, UINT(1001) }, 1, { 0, 0, 0 },
                   { 1024, 1, 1 }, { 0, 0, 0 } };
    unsigned char *full = NULL;
    char err[1024];

    if (rwp_full(&c, &full, err, sizeof err) < 0) {
        fprintf(stderr, "\n  doubles skipped: %s\n", err);
        return;
    }
    free(full);
    vec_run(&c);
}

/* The oracle has teeth: the vector form by 4 launched over an eighth of the
 * global size leaves buffers that differ; so does one whose remainder
 * would be skipped (checked through the text: the guard's last-lane test). */
static void test_oracle(void)
{
    char err[512];
    rw_coarsen_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME, 0, 4, RW_COARSEN_VECTOR };
    rw_coarsen_out o;
    unsigned char *full = NULL;

    CU_ASSERT_EQUAL_FATAL(rwp_full(&vecadd_case, &full, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(rw_coarsen(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_EQUAL(rwp_compare_coarse(&vecadd_case, full, o.source, o.len, NAME, 0, 8, err, sizeof err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "if (!((i + 3) < n)) goto __clrr_co_vs;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "vstore4((float4)(vload4(0, a + (i)) + vload4(0, b + (i))), 0, c + (i));"));
    /* without the remainder: the straddling work-item loses its in-bounds lanes */
    char *cut = strstr(o.source, "goto __clrr_co_vs;");
    if (cut) {
        memcpy(cut, "            ;     ", 18);
        CU_ASSERT_EQUAL(rwp_compare_coarse(&vecadd_case, full, o.source, o.len, NAME, 0, 4, err, sizeof err), 1);
    }
    rw_coarsen_free(&o);
    free(full);
}

/* ------------------------------------------------------- refusals */

static void refused_src(const char *src, size_t len, const char *kernel, const char *why)
{
    rw_coarsen_req r = { src, len, NULL, kernel, NAME, 0, 4, RW_COARSEN_VECTOR };
    rw_coarsen_out o;
    char err[1024] = "";
    rw_status st = rw_coarsen(&r, &o, err, sizeof err);

    if (st != RW_ERR_REFUSED || !strstr(err, why))
        fprintf(stderr, "\n  %s: status %d, '%s' (expected '%s')\n", kernel, (int)st, err, why);
    CU_ASSERT_EQUAL(st, RW_ERR_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, why));
    CU_ASSERT_PTR_NULL(o.source);
}

#define refused(src, k, why) refused_src((src), strlen(src), (k), (why))
#define K(body) "__kernel void k(__global float *a, __global float *b, uint n)\n{\n    size_t i = get_global_id(0);\n" body "}\n"

static void test_refusals(void)
{
    refused_src(SRC(blackscholes_cl), "blackscholes", "blackscholes calls log on a loaded value (line 24)");
    refused_src(SRC(exposure_cl), "contrast", "contrast accesses src with an index other than the global id (line 52)");
    refused_src(SRC(exposure_cl), "expand", "expand accesses");
    /* PoCL's exp4 differs from exp in the last bit (seen here): exp is not kept */
    refused_src(SRC(exposure_cl), "well_exposed", "well_exposed calls exp on a loaded value (line 62)");
    refused(K("    if (a[i] > 0.0f)\n        b[i] = 1.0f;\n"), "k", "k: control flow at line 4 depends on a loaded value");
    refused("__kernel void k(__global int *a)\n{\n    size_t i = get_global_id(0);\n    a[i] = a[i] < 5;\n}\n", "k",
            "k compares loaded values (line 4)");
    refused(K("    if (a[i])\n        b[i] = 1.0f;\n"), "k", "k: control flow at line 4 depends on a loaded value");
    refused(K("    b[i] = a[i] > 0.5f ? a[i] : 0.0f;\n"), "k", "k chooses with ?: on or between loaded values (line 4)");
    refused(K("    b[i] = exp(a[i]);\n"), "k", "k calls exp on a loaded value (line 4): no vector overload kept");
    refused(K("    float t[2];\n    t[0] = a[i];\n    b[i] = t[0];\n"), "k", "k stores a loaded value other than into a buffer element or a local (line 5)");
    refused(K("    b[i] = (float)(int)a[i];\n"), "k", "k casts a loaded value (line 4)");
    refused(K("    int t = a[i];\n    b[i] = t;\n"), "k", "k converts a loaded value from float to int (line 4)");
    refused(K("    b[i] = i;\n"), "k", "k uses the global id i at line 4 other than as the index of a buffer or in the bounds guard");
    refused(K("    b[i + 1] = a[i];\n"), "k", "k accesses b with an index other than the global id (line 4)");
    refused(K("    if (i % 2 == 0)\n        b[i] = a[i];\n"), "k", "k: the condition on the global id at line 4 is not a plain bounds guard");
    refused(K("    if (i < n)\n        b[i] = a[i];\n    else\n        return;\n"), "k", "k: the bounds guard at line 4 has an else");
    refused(K("    b[i] = 0.0f;\n    if (i >= n)\n        return;\n    b[i] = a[i];\n"), "k", "k stores (line 4) before the bounds guard");
    refused(K("    b[i] = a[i];\n    if (n > 3 && i > 2)\n        b[i] = 2.0f;\n"), "k", "not a plain bounds guard");
    refused(K("    __global float *p = a + i;\n    b[i] = *p;\n"), "k", "k uses a other than as a[global id] (line 4)");
    refused(K("    b[i] = lgamma(a[i]);\n"), "k", "k calls lgamma on a loaded value (line 4): no vector overload kept");
    refused(K("    b[i] = a[i];\n    barrier(CLK_GLOBAL_MEM_FENCE);\n"), "k", "k calls barrier (line 5)");
    refused("float f(float x) { return x * 2.0f; }\n" K("    b[i] = f(a[i]);\n"), "k", "k passes a loaded value to its function f (line 5)");
    refused("__kernel void k(__global uchar *a)\n{\n    a[get_global_id(0)] += 1;\n}\n", "k",
            "k: a holds __global uchar (line 3): no vector form here");
    refused("typedef struct { float x, y; } pair;\n__kernel void k(__global pair *a)\n{\n    a[get_global_id(0)].x = 1.0f;\n}\n", "k",
            "k: a holds __global pair (line 4): no vector form here");
    refused("__kernel void k(__global int *a)\n{\n    atomic_inc(&a[get_global_id(0)]);\n}\n", "k",
            "k calls atomic_inc (line 3): atomics are not vectorized");
    refused("__kernel void k(__global float *a, float s)\n{\n    s = 1.0f;\n}\n", "k", "k changes or takes the address of its parameter s");
    refused("__kernel void k(__global float *a, float s)\n{\n    a[0] = s;\n}\n", "k", "k accesses a with an index other than the global id (line 3)");
    refused("__kernel void k(__global float *a, float s)\n{\n    float t = s * 2.0f;\n    t += 1.0f;\n}\n", "k",
            "k has no access p[global id] of a buffer to vectorize");
    refused("__kernel void k(__global short *a)\n{\n    a[get_global_id(0)] *= 2;\n}\n", "k",
            "k: a holds __global short (line 3): no vector form here");
    refused("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n__kernel void k(__global float *a, __global double *b)\n{\n"
            "    size_t i = get_global_id(0);\n    b[i] = a[i] * 2.0;\n}\n", "k",
            "k converts a loaded value from float to double (line 5)");
    refused(K("    if (n == 0)\n        goto out;\n    b[i] = a[i];\nout:\n    ;\n"), "k", "k uses goto or a label (line 5)");
    refused(K("    typedef float real;\n    real t = a[i];\n    b[i] = t;\n"), "k", "the type of t (line 5) is not spelled float");
}

static void test_bad_requests(void)
{
    rw_coarsen_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME, 1, 4, RW_COARSEN_VECTOR };
    rw_coarsen_out o;
    char err[512];

    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "the vector form coarsens dimension 0 only"));
    r.dim = 0;
    r.factor = 3;
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.factor = 16;
    r.form = RW_COARSEN_BLOCKED;
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "16 for the vector form"));
    r.form = RW_COARSEN_GROUP_BLOCKED;   /* 16: the vector form only */
    CU_ASSERT_EQUAL(rw_coarsen(&r, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_STRING_EQUAL(rw_coarsen_form_name(RW_COARSEN_VECTOR), "vector");
    CU_ASSERT_PTR_NULL(rw_coarsen_form_name(5));
}

int main(void)
{
    CU_pSuite s;
    unsigned failed;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("rw_vector", NULL, NULL);
    if (!s || !CU_add_test(s, "vecadd (remainder)", test_vecadd) ||
        !CU_add_test(s, "exposure's elementwise kernels", test_exposure) ||
        !CU_add_test(s, "SHOC triad, global offset", test_triad) ||
        !CU_add_test(s, "ints, locals, broadcasts, return guard", test_mixed) ||
        !CU_add_test(s, "doubles", test_double) ||
        !CU_add_test(s, "the oracle has teeth", test_oracle) ||
        !CU_add_test(s, "refusals", test_refusals) ||
        !CU_add_test(s, "bad requests", test_bad_requests)) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
