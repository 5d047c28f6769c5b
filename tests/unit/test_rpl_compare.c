/* test_rpl_compare.c — replayer comparison (rpl.h, "comparison"): tolerance
 * specs and their errors, exact comparison counts and offsets, each float
 * criterion, NaN/inf/-0, f64, and trailing bytes shorter than an element. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "replayer/rpl.h"

static rpl_tolerance tol(const char *spec)
{
    rpl_tolerance t;
    char err[128];
    memset(&t, 0xa5, sizeof t);
    CU_ASSERT_FATAL(rpl_tolerance_parse(spec, &t, err, sizeof err) == 0);
    CU_ASSERT(err[0] == 0);
    return t;
}

static void parse_fails(const char *spec, const char *reason_word)
{
    rpl_tolerance t = { 1, 2, 3, RPL_ELEM_F64 };
    char err[128] = "";
    CU_ASSERT(rpl_tolerance_parse(spec, &t, err, sizeof err) == -1);
    CU_ASSERT(err[0] != 0);
    CU_ASSERT(strchr(err, '\n') == NULL);
    if (reason_word && !strstr(err, reason_word)) {
        fprintf(stderr, "spec '%s': error '%s' lacks '%s'\n", spec, err, reason_word);
        CU_FAIL("error message does not say why");
    }
    /* *out is untouched on failure */
    CU_ASSERT(t.rel == 1 && t.abs == 2 && t.ulp == 3 && t.elem == RPL_ELEM_F64);
}

static void test_parse(void)
{
    rpl_tolerance t = tol("exact");
    CU_ASSERT(t.rel == 0 && t.abs == 0 && t.ulp == 0 && t.elem == RPL_ELEM_F32);
    CU_ASSERT(rpl_tolerance_is_exact(&t));
    CU_ASSERT(rpl_tolerance_is_exact(NULL));

    t = tol("rel=1e-5,abs=1e-7");
    CU_ASSERT(t.rel == 1e-5 && t.abs == 1e-7 && t.ulp == 0 && t.elem == RPL_ELEM_F32);
    CU_ASSERT(!rpl_tolerance_is_exact(&t));
    t = tol("ulp=4,f64");
    CU_ASSERT(t.ulp == 4 && t.elem == RPL_ELEM_F64 && t.rel == 0 && t.abs == 0);
    t = tol("f64,f32,abs=0.5");
    CU_ASSERT(t.elem == RPL_ELEM_F32 && t.abs == 0.5);
    t = tol("ulp=18446744073709551615");
    CU_ASSERT(t.ulp == UINT64_MAX);
    t = tol("f64");     /* element type only: still byte for byte */
    CU_ASSERT(rpl_tolerance_is_exact(&t));

    parse_fails("", "empty");
    parse_fails("foo=1", "unknown");
    parse_fails("f16", "unknown");
    parse_fails("rel", "unknown");
    parse_fails("exact,rel=1", "unknown");
    parse_fails("rel=abc", "bad number");
    parse_fails("rel=", "bad number");
    parse_fails("abs=1e-5x", "bad number");
    parse_fails("abs= 1", "bad number");
    parse_fails("abs=nan", "bad number");
    parse_fails("abs=inf", "bad number");
    parse_fails("abs=1e999", "bad number");
    parse_fails("ulp=1.5", "bad number");
    parse_fails("ulp=18446744073709551616", "bad number");
    parse_fails("rel=-1", "negative");
    parse_fails("abs=-0.1", "negative");
    parse_fails("ulp=-2", "negative");
    parse_fails("rel=1,,abs=2", "empty");
    parse_fails("rel=1,", "empty");
    CU_ASSERT(rpl_tolerance_parse(NULL, &t, NULL, 0) == -1);
}

static void test_exact(void)
{
    unsigned char a[100], b[100];
    rpl_cmp c;
    for (int i = 0; i < 100; i++)
        a[i] = b[i] = (unsigned char)(i * 7);
    CU_ASSERT(rpl_compare(a, b, 100, NULL, &c) == 1);
    CU_ASSERT(c.elems == 100 && c.differ == 0 && c.elem_size == 1);
    CU_ASSERT(rpl_compare(a, b, 0, NULL, &c) == 1 && c.elems == 0);
    CU_ASSERT(rpl_compare(NULL, NULL, 0, NULL, NULL) == 1);
    b[13] ^= 1;
    b[14] ^= 0x80;
    b[40] ^= 2;
    b[99] ^= 4;   /* in the tail after the 8-byte words */
    CU_ASSERT(rpl_compare(a, b, 100, NULL, &c) == 0);
    CU_ASSERT(c.differ == 4 && c.first == 13 && c.elems == 100 && c.elem_size == 1);
    CU_ASSERT(c.max_abs == 0);
    rpl_tolerance ex = tol("exact");
    CU_ASSERT(rpl_compare(a, b, 13, &ex, &c) == 1 && c.differ == 0);
    CU_ASSERT(rpl_compare(a + 1, b + 1, 99, &ex, &c) == 0 && c.first == 12 && c.differ == 4);
    /* exact mode is byte for byte: -0 differs from +0, NaN payloads differ */
    float fa = 0.0f, fb = -0.0f;
    CU_ASSERT(rpl_compare(&fa, &fb, sizeof fa, NULL, &c) == 0 && c.differ == 1 && c.first == 3);
}

/* Compares two float arrays of @p n under @p spec. */
static int cmp_f32(const float *a, const float *b, size_t n, const char *spec, rpl_cmp *c)
{
    rpl_tolerance t = tol(spec);
    return rpl_compare(a, b, n * sizeof(float), &t, c);
}

static void test_f32_criteria(void)
{
    float a[4] = { 1.0f, 100.0f, -3.0f, 0.5f };
    float b[4] = { 1.0f, 100.0f, -3.0f, 0.5f };
    rpl_cmp c;
    CU_ASSERT(cmp_f32(a, b, 4, "abs=1e-9", &c) == 1);
    CU_ASSERT(c.elems == 4 && c.elem_size == 4 && c.differ == 0 && c.max_abs == 0);
    /* all criteria zero is the exact comparison (byte for byte) */
    CU_ASSERT(cmp_f32(a, b, 4, "abs=0,rel=0,ulp=0", &c) == 1);
    CU_ASSERT(c.elems == 16 && c.elem_size == 1);

    b[1] = 100.01f;   /* abs diff ~0.01, rel ~1e-4 */
    CU_ASSERT(cmp_f32(a, b, 4, "abs=0.001", &c) == 0);
    CU_ASSERT(c.differ == 1 && c.first == 4);
    CU_ASSERT(fabs(c.max_abs - 0.01) < 1e-4);
    CU_ASSERT(cmp_f32(a, b, 4, "abs=0.02", &c) == 1);
    CU_ASSERT(c.differ == 0 && fabs(c.max_abs - 0.01) < 1e-4);
    CU_ASSERT(cmp_f32(a, b, 4, "rel=1e-5", &c) == 0);
    CU_ASSERT(cmp_f32(a, b, 4, "rel=2e-4", &c) == 1);
    /* either criterion suffices */
    CU_ASSERT(cmp_f32(a, b, 4, "rel=1e-6,abs=0.02", &c) == 1);
    CU_ASSERT(cmp_f32(a, b, 4, "rel=2e-4,abs=1e-9", &c) == 1);

    /* ULPs: one step up and down */
    b[1] = nextafterf(100.0f, 200.0f);
    b[2] = nextafterf(nextafterf(-3.0f, -10.0f), -10.0f);   /* 2 ulp */
    CU_ASSERT(cmp_f32(a, b, 4, "ulp=1", &c) == 0);
    CU_ASSERT(c.differ == 1 && c.first == 8);
    CU_ASSERT(cmp_f32(a, b, 4, "ulp=2", &c) == 1);
    CU_ASSERT(cmp_f32(a, b, 4, "abs=1e-30", &c) == 0 && c.differ == 2 && c.first == 4);

    /* ULPs across zero: smallest subnormals of both signs are 2 apart */
    float z[2] = { 1.4e-45f, -1.4e-45f }, zz[2] = { -1.4e-45f, 1.4e-45f };
    CU_ASSERT(cmp_f32(z, zz, 2, "ulp=1", &c) == 0 && c.differ == 2);
    CU_ASSERT(cmp_f32(z, zz, 2, "ulp=2", &c) == 1);
    /* large ULP tolerance does not make opposite huge values equal by wrap-around */
    float h[1] = { 3e38f }, hh[1] = { -3e38f };
    CU_ASSERT(cmp_f32(h, hh, 1, "ulp=1000", &c) == 0);
}

static void test_special(void)
{
    float nan1 = nanf("1"), nan2 = -nanf("7");
    float inf = INFINITY;
    float a[6] = { nan1, 0.0f, inf, -inf, inf, 1.0f };
    float b[6] = { nan2, -0.0f, inf, -inf, -inf, nan1 };
    rpl_cmp c;
    /* NaN == NaN (any payload), +0 == -0, inf == inf; +inf != -inf; NaN != 1 */
    CU_ASSERT(cmp_f32(a, b, 6, "abs=1e30", &c) == 0);
    CU_ASSERT(c.differ == 2 && c.first == 16 && c.elems == 6);
    CU_ASSERT(isinf(c.max_abs));
    CU_ASSERT(cmp_f32(a, b, 4, "ulp=1", &c) == 1 && c.max_abs == 0);
    CU_ASSERT(cmp_f32(a, b, 4, "rel=1e-30", &c) == 1);
    CU_ASSERT(cmp_f32(a, b, 4, "exact", &c) == 0 && c.elem_size == 1);
    /* a huge ULP budget does not make inf equal to the largest finite */
    float m[1] = { inf }, mm[1] = { 3.4028235e38f };
    CU_ASSERT(cmp_f32(m, mm, 1, "ulp=10", &c) == 0);
    CU_ASSERT(cmp_f32(m, mm, 1, "rel=1", &c) == 0);
}

static void test_f64_and_tail(void)
{
    double a[3] = { 1.0, 1e300, -0.0 }, b[3] = { 1.0 + 1e-12, -1e300, 0.0 };
    rpl_tolerance t = tol("f64,abs=1e-9");
    rpl_cmp c;
    CU_ASSERT(rpl_compare(a, b, sizeof a, &t, &c) == 0);
    CU_ASSERT(c.elem_size == 8 && c.elems == 3 && c.differ == 1 && c.first == 8);
    CU_ASSERT(isinf(c.max_abs) || c.max_abs >= 1e300);   /* 1e300 - -1e300 overflows */
    t = tol("f64,ulp=5000");
    CU_ASSERT(rpl_compare(a, b, 8, &t, &c) == 1);   /* 1e-12 is ~4504 ulp at 1.0 */
    t = tol("f64,ulp=4000");
    CU_ASSERT(rpl_compare(a, b, 8, &t, &c) == 0);
    /* read as f32, the same bytes are other elements */
    t = tol("f32,abs=1e-9");
    CU_ASSERT(rpl_compare(a, a, sizeof a, &t, &c) == 1 && c.elems == 6 && c.elem_size == 4);

    /* 10 bytes as f32: 2 elements + a 2-byte tail compared exactly */
    unsigned char x[10], y[10];
    float one = 1.0f, near = 1.0000001f;
    memcpy(x, &one, 4);
    memcpy(x + 4, &one, 4);
    memcpy(y, &one, 4);
    memcpy(y + 4, &near, 4);
    x[8] = y[8] = 5;
    x[9] = 6;
    y[9] = 6;
    t = tol("abs=1e-3");
    CU_ASSERT(rpl_compare(x, y, 10, &t, &c) == 1 && c.elems == 3 && c.differ == 0);
    y[9] = 7;
    CU_ASSERT(rpl_compare(x, y, 10, &t, &c) == 0);
    CU_ASSERT(c.elems == 3 && c.differ == 1 && c.first == 8);
    /* shorter than one element: the tail alone */
    CU_ASSERT(rpl_compare(x + 8, y + 8, 2, &t, &c) == 0 && c.elems == 1 && c.first == 0);
    /* unaligned buffers are fine (memcpy reads) */
    unsigned char ua[17], ub[17];
    memset(ua, 0, sizeof ua);
    memset(ub, 0, sizeof ub);
    memcpy(ua + 1, &one, 4);
    memcpy(ub + 1, &near, 4);
    CU_ASSERT(rpl_compare(ua + 1, ub + 1, 16, &t, &c) == 1 && c.elems == 4);
    CU_ASSERT(rpl_compare(ua + 1, ub + 1, 16, NULL, &c) == 0 && c.elem_size == 1);
}

static void test_counts(void)
{
    enum { N = 1000 };
    static float a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = b[i] = (float)i * 0.5f;
    for (int k = 0; k < 37; k++)
        b[32 + 25 * k] += 0.25f;   /* 37 elements: 32, 57, ..., 932 */
    rpl_cmp c;
    CU_ASSERT(cmp_f32(a, b, N, "abs=0.1", &c) == 0);
    CU_ASSERT(c.differ == 37 && c.first == 128 && c.elems == N);
    CU_ASSERT(fabs(c.max_abs - 0.25) < 1e-6);
    CU_ASSERT(cmp_f32(a, b, N, "abs=0.25", &c) == 1);
    /* exact: bytes that differ */
    CU_ASSERT(rpl_compare(a, b, sizeof a, NULL, &c) == 0);
    CU_ASSERT(c.first >= 128 && c.first < 132 && c.differ >= 37 && c.differ <= 4 * 37);
}

int main(void)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("replayer comparison", NULL, NULL);
    CU_add_test(s, "tolerance specs and their errors", test_parse);
    CU_add_test(s, "exact: first byte and count", test_exact);
    CU_add_test(s, "f32: abs, rel, ulp", test_f32_criteria);
    CU_add_test(s, "NaN, infinities, signed zeros", test_special);
    CU_add_test(s, "f64 and trailing bytes", test_f64_and_tail);
    CU_add_test(s, "counts and first offset", test_counts);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
