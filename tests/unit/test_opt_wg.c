/* test_opt_wg.c — the wgsize pass's candidate generator
 * (optimizer/opt_wg.c, opt_wg_candidates): every candidate legal under the
 * device's and the kernel's limits (item sizes, work-group size, the
 * global size divisible, at most PLAN_LOCAL_MAX_ITEMS work-items), the
 * recorded local size never among them, none for a kernel with
 * reqd_work_group_size, the modes' bounds kept and their order (rapid's
 * candidates are normal's first ones), the preferred multiple offered. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt.h"

static opt_wg_limits limits(unsigned dim, uint64_t g0, uint64_t g1, uint64_t g2)
{
    opt_wg_limits l;
    memset(&l, 0, sizeof l);
    l.dim = dim;
    l.global[0] = g0;
    l.global[1] = g1;
    l.global[2] = g2;
    l.dev_max_wg = 4096;
    l.dev_max_items[0] = l.dev_max_items[1] = l.dev_max_items[2] = 4096;
    l.kernel_wg = 4096;
    l.pref_multiple = 8;
    l.hashable = 1;
    return l;
}

/* every row legal for @p l: returns the number of rows checked */
static unsigned check_legal(const opt_wg_limits *l, uint64_t (*v)[3], unsigned n)
{
    uint64_t maxwg = l->dev_max_wg < l->kernel_wg ? l->dev_max_wg : l->kernel_wg;
    for (unsigned i = 0; i < n; i++) {
        uint64_t prod = 1;
        for (unsigned d = 0; d < 3; d++) {
            if (d >= l->dim) {
                CU_ASSERT(v[i][d] == 1);
                continue;
            }
            CU_ASSERT(v[i][d] >= 1 && l->global[d] % v[i][d] == 0 && v[i][d] <= l->dev_max_items[d]);
            prod *= v[i][d];
        }
        CU_ASSERT(prod <= maxwg && prod <= 4096);
        if (l->has_local) {
            int same = 1;
            for (unsigned d = 0; d < l->dim; d++)
                same &= v[i][d] == l->local[d];
            CU_ASSERT(!same);
        }
        for (unsigned j = 0; j < i; j++)
            CU_ASSERT(memcmp(v[i], v[j], sizeof v[i]) != 0);
    }
    return n;
}

static void test_legal_2d(void)
{
    uint64_t v[256][3];
    opt_wg_limits l = limits(2, 256, 256, 1);
    l.has_local = 1;
    l.local[0] = l.local[1] = 1;
    for (int m = OPT_TUNE_RAPID; m <= OPT_TUNE_EXHAUSTIVE; m++) {
        unsigned n = opt_wg_candidates(&l, (opt_tune_mode)m, v, 256);
        unsigned want = m == OPT_TUNE_RAPID ? OPT_TUNE_RAPID_MAX : m == OPT_TUNE_NORMAL ? OPT_TUNE_NORMAL_MAX
                                                                                       : OPT_TUNE_EXHAUSTIVE_MAX;
        /* exhaustive: every legal one (powers of two of 1..256 both ways, the
         * multiples of 8 that divide 256 are among them, at most 4096 work-items) */
        unsigned legal = 0;
        for (uint64_t a = 1; a <= 256; a <<= 1)
            for (uint64_t b = 1; b <= 256; b <<= 1)
                legal += a * b <= 4096 && (a != 1 || b != 1);
        CU_ASSERT(n == (legal < want ? legal : want));
        check_legal(&l, v, n);
    }
    /* rapid's candidates are normal's first ones (one ranking, cut) */
    uint64_t r[16][3], q[16][3];
    unsigned nr = opt_wg_candidates(&l, OPT_TUNE_RAPID, r, 16), nq = opt_wg_candidates(&l, OPT_TUNE_NORMAL, q, 16);
    CU_ASSERT(nr <= nq && !memcmp(r, q, nr * sizeof r[0]));
    /* the first candidates are work-groups of 64 to 256 work-items */
    CU_ASSERT(v[0][0] * v[0][1] >= 64 && v[0][0] * v[0][1] <= 256);
}

static void test_device_limits(void)
{
    uint64_t v[256][3];
    /* a device of 64 work-items, 16 along y, and a kernel that takes 32 */
    opt_wg_limits l = limits(2, 1024, 512, 1);
    l.dev_max_wg = 64;
    l.dev_max_items[1] = 16;
    l.kernel_wg = 32;
    unsigned n = opt_wg_candidates(&l, OPT_TUNE_EXHAUSTIVE, v, 256);
    CU_ASSERT(n > 0);
    check_legal(&l, v, n);
    for (unsigned i = 0; i < n; i++)
        CU_ASSERT(v[i][0] * v[i][1] <= 32 && v[i][1] <= 16);
    /* the cap of the caller's array is kept */
    CU_ASSERT(opt_wg_candidates(&l, OPT_TUNE_EXHAUSTIVE, v, 3) == 3);
}

static void test_divisibility(void)
{
    uint64_t v[256][3];
    /* a prime global size: only 1 and itself divide it (and 1 is recorded) */
    opt_wg_limits l = limits(1, 97, 1, 1);
    l.has_local = 1;
    l.local[0] = 1;
    unsigned n = opt_wg_candidates(&l, OPT_TUNE_EXHAUSTIVE, v, 256);
    CU_ASSERT(n == 1 && v[0][0] == 97);
    /* ... larger than the device takes: none */
    l.dev_max_wg = 64;
    CU_ASSERT(opt_wg_candidates(&l, OPT_TUNE_EXHAUSTIVE, v, 256) == 0);
    /* 3-D: every dimension divides */
    l = limits(3, 12, 20, 6);
    n = opt_wg_candidates(&l, OPT_TUNE_EXHAUSTIVE, v, 256);
    CU_ASSERT(n > 0);
    check_legal(&l, v, n);
}

static void test_preferred_multiple(void)
{
    uint64_t v[256][3];
    /* 96 = 3 x 32: the preferred multiple 48 (and 96) divide it, no power of two above 32 does */
    opt_wg_limits l = limits(1, 96, 1, 1);
    l.pref_multiple = 48;
    unsigned n = opt_wg_candidates(&l, OPT_TUNE_EXHAUSTIVE, v, 256);
    int has48 = 0, has96 = 0;
    for (unsigned i = 0; i < n; i++) {
        has48 |= v[i][0] == 48;
        has96 |= v[i][0] == 96;
    }
    CU_ASSERT(has48 && has96);
    check_legal(&l, v, n);
}

static void test_reqd(void)
{
    uint64_t v[16][3];
    opt_wg_limits l = limits(2, 256, 256, 1);
    l.reqd[0] = l.reqd[1] = 16;
    l.reqd[2] = 1;
    CU_ASSERT(opt_wg_candidates(&l, OPT_TUNE_EXHAUSTIVE, v, 16) == 0);
    /* and bad limits: none, no crash */
    l = limits(0, 256, 1, 1);
    CU_ASSERT(opt_wg_candidates(&l, OPT_TUNE_NORMAL, v, 16) == 0);
    l = limits(4, 256, 1, 1);
    CU_ASSERT(opt_wg_candidates(&l, OPT_TUNE_NORMAL, v, 16) == 0);
    l = limits(2, 256, 0, 1);
    CU_ASSERT(opt_wg_candidates(&l, OPT_TUNE_NORMAL, v, 16) == 0);
    CU_ASSERT(opt_wg_candidates(NULL, OPT_TUNE_NORMAL, v, 16) == 0);
}

static void test_modes(void)
{
    opt_tune_mode m;
    CU_ASSERT(opt_tune_mode_parse("rapid", &m) == 0 && m == OPT_TUNE_RAPID);
    CU_ASSERT(opt_tune_mode_parse("normal", &m) == 0 && m == OPT_TUNE_NORMAL);
    CU_ASSERT(opt_tune_mode_parse("exhaustive", &m) == 0 && m == OPT_TUNE_EXHAUSTIVE);
    CU_ASSERT(opt_tune_mode_parse("fast", &m) < 0 && opt_tune_mode_parse(NULL, &m) < 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("opt_wg", NULL, NULL);
    CU_add_test(s, "2-D: every mode's candidates legal, bounded, ranked", test_legal_2d);
    CU_add_test(s, "device and kernel work-group limits", test_device_limits);
    CU_add_test(s, "the global size divisible; 3-D", test_divisibility);
    CU_add_test(s, "the preferred multiple", test_preferred_multiple);
    CU_add_test(s, "reqd_work_group_size: never retuned; bad limits", test_reqd);
    CU_add_test(s, "search modes", test_modes);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
