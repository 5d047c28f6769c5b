/* test_rw_spec.c — specialized kernels (rw_specialize, rewriter/rw.h).
 * Each case runs kernel K on the OpenCL device as written, and the kernel
 * specialized with some of the same launch's arguments as constants, on
 * the same random inputs and with the same arguments; every buffer must
 * be equal bit for bit (tests/rw/rwp.h, one launch each). Kernels: an
 * inline one taking every integer type a kernel may take and floats, run
 * with each type's extremes (INT_MIN, ULONG_MAX, -128, ...), -0.0f and a
 * NaN with a payload, then with ordinary values, all or some of them
 * specialized; doubles (skipped where the device has none); typedef and
 * macro types, a parameter the body assigns, build options; and the
 * workload kernels nbody_step, matmul (an attribute, __local tiles) and
 * hist_local. The oracle is shown to catch a constant that is not the
 * launch's. Then every refusal and bad request. */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "rewriter/rw.h"
#include "tests/rw/rwp.h"
#include "tests/rw/rwt.h"

static const char nbody_cl[] =
#include "apps/nbody_cl.h"
    ;
static const char matmul_cl[] =
#include "apps/matmul_cl.h"
    ;
static const char histogram_cl[] =
#include "apps/histogram_cl.h"
    ;
static const char vecadd_cl[] =
#include "apps/vecadd_cl.h"
    ;

#define BUF(n) { RWP_BUF, (n), 0, 0.0f }
#define UINT(v) { RWP_UINT, 0, (v), 0.0f }
#define FLT(v) { RWP_FLOAT, 0, 0, (v) }
#define RAW(bytes, bits) { RWP_RAW, (bytes), (long long)(bits), 0.0f }
#define SRC(s) (s), sizeof(s) - 1
#define FLOATS(n) { (size_t)(n) * 4, RWP_F32 }
#define INTS(n) { (size_t)(n) * 4, RWP_I32 }

#define NAME "clrr_spec"
#define ALL 0xffffffffu   /* every scalar argument of the case */

/* One launch, no split: the specialized kernel runs as K did. */
static const rwp_split whole = { 0, 1, { 0 } };

/* The constant that argument @p i of @p cs sets: its bytes as
 * clSetKernelArg gets them (rwp_run.c's set_arg). */
static rw_const arg_const(const rwp_case *cs, unsigned i)
{
    const rwp_arg *a = &cs->args[i];
    rw_const c;
    unsigned long long bits;
    uint32_t fb;
    unsigned b;

    memset(&c, 0, sizeof c);
    c.index = i;
    c.size = 4;
    bits = (unsigned long long)a->i;
    if (a->kind == RWP_RAW)
        c.size = (unsigned)a->n;
    else if (a->kind == RWP_ULONG)
        c.size = 8;
    else if (a->kind == RWP_FLOAT) {
        memcpy(&fb, &a->f, sizeof fb);
        bits = fb;
    }
    for (b = 0; b < c.size; b++)
        c.value[b] = (unsigned char)(bits >> (8 * b));
    return c;
}

/* The constants of the scalar arguments whose bit is set in @p which. */
static unsigned case_consts(const rwp_case *cs, unsigned which, rw_const *c)
{
    unsigned i, n = 0;

    for (i = 0; i < cs->nargs && i < 32; i++)
        if ((which >> i & 1) && cs->args[i].kind != RWP_BUF && cs->args[i].kind != RWP_LOCAL)
            c[n++] = arg_const(cs, i);
    return n;
}

/* Specializes cs->kernel with the arguments in @p which and checks the
 * result's shape and syntax; returns 0 (release with rw_specialize_free)
 * or -1. */
static int make(const rwp_case *cs, unsigned which, rw_spec_out *o)
{
    rw_const c[32];
    rw_spec_req r = { cs->src, cs->len, cs->options, cs->kernel, NAME, 0, c };
    char err[4096];
    rw_status st;

    r.nconsts = case_consts(cs, which, c);
    st = rw_specialize(&r, o, err, sizeof err);
    if (st != RW_OK)
        fprintf(stderr, "\n  rw_specialize(%s): %s\n", cs->kernel, err);
    CU_ASSERT_EQUAL(st, RW_OK);
    if (st != RW_OK)
        return -1;
    CU_ASSERT(o->len > cs->len && !memcmp(o->source, cs->src, cs->len));
    CU_ASSERT_EQUAL(strlen(o->source), o->len);
    CU_ASSERT_EQUAL(o->nparams, cs->nargs);
    CU_ASSERT_PTR_NOT_NULL(strstr(o->source + cs->len, "void " NAME "("));
    if (!rwt_syntax_ok(o->source, o->len, cs->options, err, sizeof err)) {
        fprintf(stderr, "\n  clang -fsyntax-only: %s\n%s\n", err, o->source + cs->len);
        CU_FAIL("the specialized source does not pass clang -fsyntax-only");
    }
    return 0;
}

/* make(), then runs K and the specialized kernel with cs's arguments. */
static void spec_run(const rwp_case *cs, unsigned which)
{
    rw_spec_out o;
    char err[4096];
    int rc;

    if (make(cs, which, &o) == 0) {
        rc = rwp_compare(cs, o.source, o.len, NAME, 0, &whole, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "\n  %s specialized (0x%x): %s\n%s\n", cs->kernel, which, err,
                    o.source + cs->len);
        CU_ASSERT_EQUAL(rc, 0);
    }
    rw_specialize_free(&o);
}

/* ------------------------------------------------------- every type */

/* Every argument's bits, arithmetic that depends on the type (signed
 * division and shifts, sign tests, a wrapping product), a loop bounded by
 * one, and a parameter the body assigns. */
static const char scalars_cl[] =
    "__kernel void scalars(__global uint *o, int i, uint u, long l, ulong ul, short s,\n"
    "                      char c, uchar uc, ushort us, float f, float g)\n"
    "{\n"
    "    size_t k = get_global_id(0);\n"
    "    __global uint *r = o + k * 20;\n"
    "    r[0] = (uint)i;\n"
    "    r[1] = u;\n"
    "    r[2] = (uint)l;\n"
    "    r[3] = (uint)(l >> 32);\n"
    "    r[4] = (uint)ul;\n"
    "    r[5] = (uint)(ul >> 32);\n"
    "    r[6] = (uint)(int)s;\n"
    "    r[7] = (uint)(int)c;\n"
    "    r[8] = uc;\n"
    "    r[9] = us;\n"
    "    r[10] = as_uint(f);\n"
    "    r[11] = as_uint(g);\n"
    "    r[12] = as_uint(f * (float)k + g);\n"
    "    r[13] = (uint)(i / 3 + (int)k);\n"
    "    r[14] = (uint)((l >> 3) + (long)k);\n"
    "    r[15] = (uint)(ul % 1000003UL) + (uint)(s * c) + (uint)(uc * us);\n"
    "    r[16] = (uint)(i < 0) | (uint)(l < 0) << 1 | (uint)(c < 0) << 2 | (uint)(s < 0) << 3 |\n"
    "            (uint)(f < 0.0f) << 4 | (uint)signbit(f) << 5 | (uint)isnan(g) << 6;\n"
    "    uint acc = 0;\n"
    "    for (uint j = 0; j < (u & 63u); j++)\n"
    "        acc = acc * 31u + j + (uint)k;\n"
    "    r[17] = acc;\n"
    "    for (int j = 0; j < 5; j++)\n"
    "        acc += (uint)(s + j) * (uint)c;\n"
    "    r[18] = acc;\n"
    "    u += (uint)k;\n"
    "    r[19] = u;\n"
    "}\n";

enum { SCALARS_N = 8 };

/* Each type's extremes; f = -0.0f, g a quiet NaN with a payload. */
static const rwp_case scalars_edge = {
    SRC(scalars_cl), NULL, "scalars", 1, { INTS(20 * SCALARS_N) }, 11,
    { BUF(0), RAW(4, 0x80000000u), RAW(4, 0xffffffffu), RAW(8, LLONG_MIN), RAW(8, -1LL),
      RAW(2, 0x8000u), RAW(1, 0x80u), RAW(1, 0xffu), RAW(2, 0xffffu), RAW(4, 0x80000000u),
      RAW(4, 0x7fc00123u) },
    1, { 0, 0, 0 }, { SCALARS_N, 1, 1 }, { 0, 0, 0 },
};

/* Ordinary values, negative ones too, and the other extremes. */
static const rwp_case scalars_plain = {
    SRC(scalars_cl), NULL, "scalars", 1, { INTS(20 * SCALARS_N) }, 11,
    { BUF(0), RAW(4, 0xfffffffbu), RAW(4, 37u), RAW(8, -123456789012LL),
      RAW(8, 1234567890123456789LL), RAW(2, 0xfed4u), RAW(1, 0xf9u), RAW(1, 200u),
      RAW(2, 40000u), RAW(4, 0x3fc00000u), RAW(4, 0xc0100000u) },
    1, { 0, 0, 0 }, { SCALARS_N, 1, 1 }, { 0, 0, 0 },
};

static const rwp_case scalars_max = {
    SRC(scalars_cl), NULL, "scalars", 1, { INTS(20 * SCALARS_N) }, 11,
    { BUF(0), RAW(4, 0x7fffffffu), RAW(4, 0u), RAW(8, LLONG_MAX), RAW(8, 0),
      RAW(2, 0x7fffu), RAW(1, 0x7fu), RAW(1, 0u), RAW(2, 0u), RAW(4, 0xff800000u),
      RAW(4, 0x00000001u) },
    1, { 0, 0, 0 }, { SCALARS_N, 1, 1 }, { 0, 0, 0 },
};

static void test_every_type(void)
{
    spec_run(&scalars_edge, ALL);
    spec_run(&scalars_plain, ALL);
    spec_run(&scalars_max, ALL);
}

/* Some of them: the others stay parameters, and the launch's arguments
 * still apply by position. */
static void test_some(void)
{
    spec_run(&scalars_plain, 1u << 2);                          /* u: the loop bound */
    spec_run(&scalars_edge, 1u << 1 | 1u << 5 | 1u << 10);      /* i, s, g */
    spec_run(&scalars_plain, 1u << 3 | 1u << 4 | 1u << 9);      /* l, ul, f */
}

/* The literals the constants become, exactly. */
static void test_literals(void)
{
    static const char *const want[] = {
        "    int i = (int)(-2147483647 - 1);\n",
        "    uint u = (uint)(4294967295u);\n",
        "    long l = (long)(-9223372036854775807L - 1L);\n",
        "    ulong ul = (ulong)(18446744073709551615UL);\n",
        "    short s = (short)(-32767 - 1);\n",
        "    char c = (char)(-127 - 1);\n",
        "    uchar uc = (uchar)(255u);\n",
        "    ushort us = (ushort)(65535u);\n",
        "    float f = as_float(0x80000000u);\n",
        "    float g = as_float(0x7fc00123u);\n",
        "void " NAME "(__global uint *o,\n        int __clrr_sp_i,\n        uint __clrr_sp_u,\n"
        "        long __clrr_sp_l,\n",
        "/* " NAME ": scalars with parameters i (= -2147483648), u (= 4294967295), "
        "l (= -9223372036854775808), ul (= 18446744073709551615), s (= -32768), c (= -128), "
        "uc (= 255), us (= 65535), f (= -0), g (= nan) as compile-time constants "
        "(generated by clrr's rewriter) */\n",
    };
    static const char *const plain[] = {
        "    int i = (int)(-5);\n", "    long l = (long)(-123456789012L);\n",
        "    short s = (short)(-300);\n", "    char c = (char)(-7);\n",
        "    float f = as_float(0x3fc00000u);\n",
    };
    rw_spec_out o;
    size_t i;

    if (make(&scalars_edge, ALL, &o) == 0)
        for (i = 0; i < sizeof want / sizeof want[0]; i++)
            if (!strstr(o.source, want[i])) {
                fprintf(stderr, "\n  no \"%s\" in:\n%s\n", want[i], o.source + scalars_edge.len);
                CU_FAIL("a constant is not written as expected");
            }
    rw_specialize_free(&o);
    if (make(&scalars_plain, ALL, &o) == 0)
        for (i = 0; i < sizeof plain / sizeof plain[0]; i++)
            if (!strstr(o.source, plain[i])) {
                fprintf(stderr, "\n  no \"%s\" in:\n%s\n", plain[i], o.source + scalars_plain.len);
                CU_FAIL("a constant is not written as expected");
            }
    rw_specialize_free(&o);
}

/* doubles, where the device has them: -0.0 and a NaN's payload as bits,
 * then arithmetic and a loop of the constants. */
static const char dbl_cl[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "__kernel void dbl(__global ulong *o, double d, double e, uint n)\n"
    "{\n"
    "    size_t k = get_global_id(0);\n"
    "    o[3 * k] = as_ulong(d);\n"
    "    o[3 * k + 1] = as_ulong(d * (double)k + e);\n"
    "    double acc = 0.0;\n"
    "    for (uint j = 0; j < n; j++)\n"
    "        acc += e / (double)(j + 1u) + d;\n"
    "    o[3 * k + 2] = as_ulong(acc);\n"
    "}\n";

static void test_double(void)
{
    rwp_case edge = {
        SRC(dbl_cl), NULL, "dbl", 1, { INTS(2 * 3 * 8) }, 4,
        { BUF(0), RAW(8, 0x8000000000000000ULL), RAW(8, 0x7ff8000000000123LL), UINT(3) },
        1, { 0, 0, 0 }, { 8, 1, 1 }, { 0, 0, 0 },
    };
    rwp_case plain = {
        SRC(dbl_cl), NULL, "dbl", 1, { INTS(2 * 3 * 8) }, 4,
        { BUF(0), RAW(8, 0x3ff4000000000000LL), RAW(8, 0xc00c000000000000ULL), UINT(7) },
        1, { 0, 0, 0 }, { 8, 1, 1 }, { 0, 0, 0 },
    };
    unsigned char *b = NULL;
    rw_spec_out o;
    char err[4096];

    /* the program as written must build and run, else the device has no doubles */
    if (rwp_parts(&plain, plain.src, plain.len, "dbl", 0, &whole, &b, err, sizeof err) < 0) {
        fprintf(stderr, "\n  doubles skipped: %s\n", err);
        return;
    }
    free(b);
    spec_run(&edge, ALL);
    spec_run(&plain, ALL);
    spec_run(&plain, 1u << 2);
    if (make(&edge, ALL, &o) == 0) {
        CU_ASSERT_PTR_NOT_NULL(
            strstr(o.source, "    double d = as_double(0x8000000000000000UL);\n"));
        CU_ASSERT_PTR_NOT_NULL(
            strstr(o.source, "    double e = as_double(0x7ff8000000000123UL);\n"));
    }
    rw_specialize_free(&o);
}

/* Types through a typedef and a macro, const or not, a parameter the
 * body assigns, another kernel of the program that the new one leaves
 * alone, a helper taking the constant. */
static const char typed_cl[] =
    "typedef uint count_t;\n"
    "#define REAL float\n"
    "#define SCALE(x) ((x) * 2)\n"
    "REAL twice(REAL v) { return SCALE(v); }\n"
    "__kernel void other(__global REAL *y, count_t n) { y[0] = (REAL)n; }\n"
    "__kernel void typed(__global REAL *y, const count_t n, REAL a,\n"
    "                    int steps)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    REAL v = y[i];\n"
    "    while (steps-- > 0)\n"
    "        v = twice(v) * a + (REAL)(n - i);\n"
    "    a = -a;\n"
    "    y[i] = v + a;\n"
    "}\n";

static void test_typedef_macro(void)
{
    rwp_case cs = {
        SRC(typed_cl), NULL, "typed", 1, { FLOATS(64) }, 4,
        { BUF(0), UINT(64), FLT(0.375f), RAW(4, 5) },
        1, { 0, 0, 0 }, { 64, 1, 1 }, { 16, 1, 1 },
    };
    rw_spec_out o;

    spec_run(&cs, ALL);
    spec_run(&cs, 1u << 3);
    if (make(&cs, ALL, &o) == 0) {
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "(__global REAL *y,\n"
                                                "        const count_t __clrr_sp_n,\n"
                                                "        REAL __clrr_sp_a,\n"
                                                "        int __clrr_sp_steps)\n"
                                                "{\n"
                                                "    const count_t n = (uint)(64u);\n"
                                                "    REAL a = as_float(0x3ec00000u);\n"
                                                "    int steps = (int)(5);\n"
                                                "\n"
                                                "    size_t i = get_global_id(0);\n"));
    }
    rw_specialize_free(&o);
}

/* The program's build options (-cl-std, -D) reach both parses and the
 * device build; an inactive branch stays inactive. */
static const char opts_cl[] =
    "__kernel void biased(__global int *y, int n, long m)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "#ifdef BIAS\n"
    "    for (int j = 0; j < n; j++)\n"
    "        y[i] += BIAS * j + (int)(m >> 40);\n"
    "#else\n"
    "    y[i] = -1;\n"
    "#endif\n"
    "}\n";

static void test_options(void)
{
    rwp_case cs = {
        SRC(opts_cl), "-cl-std=CL2.0 -DBIAS=3", "biased", 1, { INTS(32) }, 3,
        { BUF(0), RAW(4, 9), RAW(8, -(5LL << 40)) },
        1, { 0, 0, 0 }, { 32, 1, 1 }, { 0, 0, 0 },
    };

    spec_run(&cs, ALL);
    spec_run(&cs, 1u << 1);
}

/* ------------------------------------------------- the workload kernels */

static const rwp_case nbody_case = {
    SRC(nbody_cl), NULL, "nbody_step", 4,
    { FLOATS(4 * 96), FLOATS(4 * 96), FLOATS(4 * 96), FLOATS(4 * 96) },
    12, { BUF(0), BUF(1), BUF(2), BUF(3), UINT(96), UINT(0), UINT(96), UINT(10), UINT(20),
          FLT(2.0f), FLT(0.01f), FLT(0.01f) },
    1, { 0, 0, 0 }, { 96, 1, 1 }, { 16, 1, 1 },
};

/* n alone (the loop bound), then every scalar. */
static void test_nbody(void)
{
    rw_spec_out o;

    spec_run(&nbody_case, 1u << 4);
    spec_run(&nbody_case, ALL);
    if (make(&nbody_case, 1u << 4, &o) == 0) {
        CU_ASSERT_PTR_NOT_NULL(
            strstr(o.source, "const uint __clrr_sp_n,\n        const uint first"));
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "{\n    const uint n = (uint)(96u);\n\n"
                                                "    const uint i = first + get_global_id(0);"));
    }
    rw_specialize_free(&o);
}

/* An attribute (through the program's macro TS) and __local tiles, which
 * must stay in the kernel's outermost scope. */
static void test_matmul(void)
{
    rwp_case cs = {
        SRC(matmul_cl), NULL, "matmul", 3, { FLOATS(48 * 48), FLOATS(48 * 48), FLOATS(48 * 48) },
        4, { BUF(0), BUF(1), BUF(2), UINT(48) },
        2, { 0, 0, 0 }, { 48, 48, 1 }, { 16, 16, 1 },
    };
    rw_spec_out o;

    spec_run(&cs, ALL);
    if (make(&cs, ALL, &o) == 0)
        CU_ASSERT_PTR_NOT_NULL(strstr(o.source + cs.len, "__kernel __attribute__(("
                                                         "reqd_work_group_size(TS, TS, 1))) void "
                                                         NAME "("));
    rw_specialize_free(&o);
}

static void test_histogram(void)
{
    enum { L = 32, G = 6, N = L * 64 * G - 100 };
    rwp_case cs = {
        SRC(histogram_cl), NULL, "hist_local", 2, { INTS((N + 3) / 4), INTS(G * 256) },
        3, { BUF(0), UINT(N), BUF(1) },
        1, { 0, 0, 0 }, { L * G, 1, 1 }, { L, 1, 1 },
    };

    spec_run(&cs, ALL);
}

/* ----------------------------------------------------------- the oracle */

/* A constant that is not the launch's argument changes what the kernel
 * writes: the comparison sees it. */
static void test_oracle(void)
{
    rwp_case cs = {
        SRC(vecadd_cl), NULL, "vecadd", 3, { FLOATS(1000), FLOATS(1000), FLOATS(1000) },
        4, { BUF(0), BUF(1), BUF(2), UINT(1000) },
        1, { 0, 0, 0 }, { 1000, 1, 1 }, { 0, 0, 0 },
    };
    rw_const c = { 3, 4, { 0xf4, 0x01, 0, 0, 0, 0, 0, 0 } };   /* 500 */
    rw_spec_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME, 1, &c };
    rw_spec_out o;
    char err[1024];

    CU_ASSERT_EQUAL_FATAL(rw_specialize(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_EQUAL(rwp_compare(&cs, o.source, o.len, NAME, 0, &whole, err, sizeof err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "buffer 2 differs at byte 2000"));
    rw_specialize_free(&o);
    spec_run(&cs, ALL);   /* and with the launch's own value, nothing differs */
}

/* ------------------------------------------------------------ refusals */

static const char kinds_cl[] =
    "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
    "typedef struct pair { int a; int b; } pair;\n"
    "enum mode { M_A, M_B };\n"
    "__kernel void k(__global float *x, float4 v, pair p, uint n, half h, enum mode m,\n"
    "                __read_only image2d_t img, sampler_t smp)\n"
    "{\n"
    "    x[get_global_id(0)] = v.x + (float)p.a + (float)n + (float)h + (float)m +\n"
    "                          read_imagef(img, smp, (int2)(0, 0)).x;\n"
    "}\n"
    "float f(uint n) { return (float)n; }\n";

#define K(params, body) "__kernel void k(__global uint *o, " params ")\n{\n" body "\n}\n"
#define K_OK K("uint n", "    o[get_global_id(0)] = n;")

static const struct refusal {
    const char *what, *src, *options, *kernel, *name;
    unsigned index, size;
    rw_status st;
    const char *msg;
} refusals[] = {
    { "pointer", kinds_cl, NULL, "k", NAME, 0, 8, RW_ERR_REFUSED,
      "parameter 0 (x) of k is a pointer" },
    { "vector", kinds_cl, NULL, "k", NAME, 1, 16, RW_ERR_REFUSED,
      "parameter 1 (v) of k is a vector (float4)" },
    { "struct", kinds_cl, NULL, "k", NAME, 2, 8, RW_ERR_REFUSED,
      "parameter 2 (p) of k is a struct or union (pair)" },
    { "size mismatch", kinds_cl, NULL, "k", NAME, 3, 8, RW_ERR_REFUSED,
      "parameter 3 (n) of k is 4 bytes, the value 8" },
    { "size mismatch, smaller", kinds_cl, NULL, "k", NAME, 3, 2, RW_ERR_REFUSED,
      "parameter 3 (n) of k is 4 bytes, the value 2" },
    { "half", kinds_cl, NULL, "k", NAME, 4, 2, RW_ERR_REFUSED,
      "parameter 4 (h) of k is half: only integer, float and double scalars" },
    { "enum", kinds_cl, NULL, "k", NAME, 5, 4, RW_ERR_REFUSED,
      "parameter 5 (m) of k is enum mode: only integer" },
    { "image", kinds_cl, NULL, "k", NAME, 6, 8, RW_ERR_REFUSED, "parameter 6 (img) of k is " },
    { "sampler", kinds_cl, NULL, "k", NAME, 7, 4, RW_ERR_REFUSED,
      "parameter 7 (smp) of k is sampler_t" },
    { "index out of range", kinds_cl, NULL, "k", NAME, 8, 4, RW_ERR_ARG,
      "parameter 8: k has 8 parameters" },
    { "unknown kernel", kinds_cl, NULL, "nope", NAME, 0, 4, RW_ERR_REFUSED,
      "kernel nope not found" },
    { "a function, not a kernel", kinds_cl, NULL, "f", NAME, 0, 4, RW_ERR_REFUSED,
      "f is a function, not a kernel" },
    { "declared but not defined", "__kernel void k(uint n);\n", NULL, "k", NAME, 0, 4,
      RW_ERR_REFUSED, "kernel k is declared but not defined" },
    { "name already used", K_OK "void other(void) { }\n", NULL, "k", "other", 1, 4,
      RW_ERR_REFUSED, "the name other is already used" },
    { "name is the kernel's", K_OK, NULL, "k", "k", 1, 4, RW_ERR_REFUSED,
      "the name k is already used" },
    { "name not an identifier", K_OK, NULL, "k", "1st", 1, 4, RW_ERR_ARG, "not an identifier" },
    { "empty name", K_OK, NULL, "k", "", 1, 4, RW_ERR_ARG, "not an identifier" },
    { "body opens in a macro", "#define BEGIN {\n__kernel void k(__global uint *o, uint n)\n"
      "BEGIN\n    o[0] = n;\n}\n", NULL, "k", NAME, 1, 4, RW_ERR_REFUSED,
      "the body of k opens in macro BEGIN (line 3)" },
    { "parameter named by a macro", "#define N n\n" K("uint N", "    o[0] = n;"), NULL, "k",
      NAME, 1, 4, RW_ERR_REFUSED, "parameter 1 (n) of k is named through macro N (line 2)" },
    { "type through a macro redefined after the kernel",
      "#define T uint\n" K("T n", "    o[0] = n;") "#undef T\n#define T ushort\n", NULL, "k",
      NAME, 1, 4, RW_ERR_REFUSED, "macro T used at line 2 means something else" },
    { "condition false after the kernel",
      "#define ON\n" K("uint n", "#ifdef ON\n    o[0] = n;\n#endif") "#undef ON\n", NULL, "k",
      NAME, 1, 4, RW_ERR_REFUSED, "a preprocessor condition in the kernels' text is false" },
    { "the program defines as_float", "#define as_float(x) ((float)(x))\n"
      K("float f", "    o[0] = as_uint(f);"), NULL, "k", NAME, 1, 4, RW_ERR_REFUSED,
      "a name the rewriter generated is a macro (as_float)" },
    { "condition true after the kernel",
      K("uint n", "#ifdef ON\n    o[0] = n;\n#endif") "#define ON\n", NULL, "k", NAME, 1, 4,
      RW_ERR_REFUSED, "a preprocessor condition in the kernels' text is true" },
    { "macro undefined after the kernel",
      "#define W 2\n" K("uint n", "    o[0] = n * W;") "#undef W\n", NULL, "k", NAME, 1, 4,
      RW_ERR_REFUSED, "a macro the kernels use is undefined at the end" },
    { "parse error", K("uint n", "    o[0] = n"), NULL, "k", NAME, 1, 4, RW_ERR_PARSE,
      "program.cl:" },
    { "C++ for OpenCL", K_OK, "-cl-std=CLC++", "k", NAME, 1, 4, RW_ERR_REFUSED,
      "only OpenCL C" },
};

static void test_refusals(void)
{
    size_t i;

    for (i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        const struct refusal *t = &refusals[i];
        rw_const c = { t->index, t->size, { 1, 0, 0, 0, 0, 0, 0, 0 } };
        rw_spec_req r = { t->src, strlen(t->src), t->options, t->kernel, t->name, 1, &c };
        rw_spec_out o;
        char err[1024] = "";
        rw_status st = rw_specialize(&r, &o, err, sizeof err);
        int ok = st == t->st && strstr(err, t->msg) && !o.source && o.len == 0 && o.nparams == 0;
        if (!ok)
            fprintf(stderr, "\n  %s: status %d, err \"%s\" (want %d, \"%s\")\n", t->what, st, err,
                    t->st, t->msg);
        CU_ASSERT(ok);
        rw_specialize_free(&o);
    }
}

/* A kernel defined in a header the program includes (-I). */
static void test_included(void)
{
    static const char prog[] = "#include \"inc.h\"\n" K_OK;
    char dir[] = "/tmp/rws-XXXXXX", path[64], opts[64], err[1024];
    rw_const c = { 0, 4, { 3 } };
    rw_spec_req r = { SRC(prog), opts, "inc", NAME, 1, &c };
    rw_spec_out o;
    FILE *f;

    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/inc.h", dir);
    snprintf(opts, sizeof opts, "-I%s", dir);
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("__kernel void inc(uint n, __global uint *y) { y[0] = n; }\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "kernel inc is not defined in the program's text"));
    r.kernel = "k";
    c.index = 1;
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_OK);   /* the header stays */
    rw_specialize_free(&o);
    unlink(path);
    rmdir(dir);
}

/* The constants themselves: none, too many, one twice, none given. */
static void test_bad_consts(void)
{
    static const char prog[] = K("uint a, uint b", "    o[0] = a + b;");
    rw_const c[RW_MAX_CONSTS + 1];
    rw_spec_req r = { SRC(prog), NULL, "k", NAME, 0, c };
    rw_spec_out o;
    char err[256];
    unsigned i;

    memset(c, 0, sizeof c);
    for (i = 0; i <= RW_MAX_CONSTS; i++) {
        c[i].index = i;
        c[i].size = 4;
    }
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "0 constants: 1 to 16 are specialized"));
    r.nconsts = RW_MAX_CONSTS + 1;
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "17 constants"));
    c[1].index = 2;
    c[2].index = 2;
    r.nconsts = 3;
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "parameter 2 is given twice"));
    CU_ASSERT_PTR_NULL(o.source);
    c[1].index = 1;
    r.nconsts = 2;   /* a and b: fine */
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_REFUSED);   /* o: a pointer */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "parameter 0 (o) of k is a pointer"));
    c[0].index = 2;
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_EQUAL(o.nparams, 3);
    rw_specialize_free(&o);
    r.consts = NULL;
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_ARG);
}

/* The specialized parameters' new names avoid the program's identifiers. */
static void test_names(void)
{
    static const char prog[] =
        "__kernel void k(__global uint *o, uint n, uint m)\n"
        "{\n    uint __clrr_sp_n = 1;\n    o[0] = n + m + __clrr_sp_n;\n}\n";
    rw_const c[2] = { { 1, 4, { 7 } }, { 2, 4, { 9 } } };
    rw_spec_req r = { SRC(prog), NULL, "k", NAME, 2, c };
    rw_spec_out o;
    char err[1024];

    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.source, "(__global uint *o,\n        uint __clrr1_sp_n,\n"
                                            "        uint __clrr1_sp_m)\n{\n"
                                            "    uint n = (uint)(7u);\n"
                                            "    uint m = (uint)(9u);\n"));
    rw_specialize_free(&o);
}

static void test_bad_calls(void)
{
    rw_const c = { 3, 4, { 16 } };
    rw_spec_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME, 1, &c };
    rw_spec_out o;
    char err[256];

    CU_ASSERT_EQUAL(rw_specialize(NULL, &o, err, sizeof err), RW_ERR_ARG);
    CU_ASSERT_EQUAL(rw_specialize(&r, NULL, err, sizeof err), RW_ERR_ARG);
    r.name = "";
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, NULL, 0), RW_ERR_ARG);
    r.name = "a-b";
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.name = NULL;
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.name = NAME;
    r.kernel = NULL;
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.kernel = "vecadd";
    r.source = NULL;
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, sizeof err), RW_ERR_ARG);
    r.source = vecadd_cl;
    CU_ASSERT_EQUAL(rw_specialize(&r, &o, err, 1), RW_OK);   /* a tiny err is fine */
    CU_ASSERT_EQUAL(o.nparams, 4);
    rw_specialize_free(&o);
    rw_specialize_free(&o);   /* twice */
    rw_specialize_free(NULL);
}

/* libclrr-rw.so (../lib from the test) exports rw_specialize and
 * rw_specialize_free. */
static void test_shared_object(void)
{
    rw_status (*spec)(const rw_spec_req *, rw_spec_out *, char *, size_t);
    void (*release)(rw_spec_out *);
    rw_const c = { 3, 4, { 16 } };
    rw_spec_req r = { SRC(vecadd_cl), NULL, "vecadd", NAME, 1, &c };
    rw_spec_out o;
    char err[256];
    void *f, *g;
    int hidden;
    void *h = rwt_rw_so("rw_specialize", "rw_specialize_free", &f, &g, &hidden);

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT(hidden);   /* internals stay inside */
    if (f && g) {
        memcpy(&spec, &f, sizeof f);
        memcpy(&release, &g, sizeof g);
        CU_ASSERT_EQUAL(spec(&r, &o, err, sizeof err), RW_OK);
        CU_ASSERT(o.source && o.nparams == 4);
        release(&o);
    } else {
        CU_FAIL("libclrr-rw.so does not export rw_specialize and rw_specialize_free");
    }
    dlclose(h);
}

int main(void)
{
    CU_pSuite s;
    unsigned failed;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("rw_spec", NULL, NULL);
    if (!s ||
        !CU_add_test(s, "every integer type and float", test_every_type) ||
        !CU_add_test(s, "some of the parameters", test_some) ||
        !CU_add_test(s, "the literals", test_literals) ||
        !CU_add_test(s, "double", test_double) ||
        !CU_add_test(s, "typedef and macro types", test_typedef_macro) ||
        !CU_add_test(s, "build options", test_options) ||
        !CU_add_test(s, "nbody_step", test_nbody) ||
        !CU_add_test(s, "matmul", test_matmul) ||
        !CU_add_test(s, "hist_local", test_histogram) ||
        !CU_add_test(s, "the oracle catches a wrong constant", test_oracle) ||
        !CU_add_test(s, "refusals", test_refusals) ||
        !CU_add_test(s, "a header of the program's", test_included) ||
        !CU_add_test(s, "bad constants", test_bad_consts) ||
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
