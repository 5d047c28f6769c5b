/* test_rpl_refine.c — adaptive proportions (rpl.h, rpl_split_refine):
 * simulated devices whose part times are known functions of their share,
 * refined launch by launch by the fixed point and by Broyden. Checks: both
 * balance proportional devices; Broyden balances devices with fixed costs
 * (latency, transfers) in fewer launches than the fixed point; a drifting
 * load is followed; bounds always cover every work-group, each part keeps
 * at least one; settled parts stay put; bad part counts change nothing. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "replayer/rpl.h"

/* Device p's time for n work-groups: lat[p] + per[p] * n, plus the load
 * of a heavy window [w0, w0 + wlen) at heavy[p] per group. */
typedef struct sim {
    unsigned parts;
    uint64_t groups;
    double lat[4], per[4], heavy;
    uint64_t w0, wlen;
} sim;

static void times(const sim *m, const uint64_t *bound, double *ns)
{
    for (unsigned p = 0; p < m->parts; p++) {
        uint64_t lo = bound[p], hi = bound[p + 1], in = 0;
        for (uint64_t g = lo; g < hi; g++) {
            uint64_t r = (g + m->groups - m->w0 % m->groups) % m->groups;   /* position from the window's start */
            in += r < m->wlen;
        }
        ns[p] = m->lat[p] + m->per[p] * (double)(hi - lo) + m->heavy * m->per[p] * (double)in;
    }
}

static double makespan(const sim *m, const uint64_t *bound)
{
    double ns[4], t = 0;
    times(m, bound, ns);
    for (unsigned p = 0; p < m->parts; p++)
        t = ns[p] > t ? ns[p] : t;
    return t;
}

/* The best makespan over every bound of two parts (exhaustive). */
static double best2(const sim *m)
{
    double best = INFINITY;
    for (uint64_t b = 1; b < m->groups; b++) {
        uint64_t bound[3] = {0, b, m->groups};
        double t = makespan(m, bound);
        best = t < best ? t : best;
    }
    return best;
}

static void even(uint64_t *bound, unsigned parts, uint64_t groups)
{
    for (unsigned p = 0; p <= parts; p++)
        bound[p] = groups * p / parts;
}

static void check_bounds(const uint64_t *bound, unsigned parts, uint64_t groups)
{
    CU_ASSERT(bound[0] == 0);
    CU_ASSERT(bound[parts] == groups);
    for (unsigned p = 0; p < parts; p++)
        CU_ASSERT(bound[p + 1] >= bound[p] + 1);
}

/* Launches until the makespan is within @p tol of @p best (at most 20). */
static unsigned launches_to(const sim *m, int method, double best, double tol)
{
    uint64_t bound[5];
    rpl_split_history h;
    memset(&h, 0, sizeof h);
    even(bound, m->parts, m->groups);
    for (unsigned l = 1; l <= 20; l++) {
        double ns[4];
        times(m, bound, ns);
        if (makespan(m, bound) <= best * (1 + tol))
            return l;
        rpl_split_refine(bound, m->parts, m->groups, ns, method, &h);
        check_bounds(bound, m->parts, m->groups);
    }
    return 99;
}

static void test_proportional(void)
{
    /* a device 3x faster, no fixed costs: both methods balance at once */
    sim m = {2, 4096, {0, 0}, {3.0, 1.0}, 0, 0, 0};
    double best = best2(&m);
    CU_ASSERT(launches_to(&m, RPL_SPLIT_FIXED_POINT, best, 0.01) <= 2);
    CU_ASSERT(launches_to(&m, RPL_SPLIT_BROYDEN, best, 0.01) <= 2);
}

static void test_fixed_costs(void)
{
    /* the other device pays a large fixed cost (its transfers): the rate
     * misjudges its speed, the secant does not */
    sim m = {2, 4096, {0, 3000.0}, {1.0, 1.0}, 0, 0, 0};
    double best = best2(&m);
    unsigned fp = launches_to(&m, RPL_SPLIT_FIXED_POINT, best, 0.02);
    unsigned br = launches_to(&m, RPL_SPLIT_BROYDEN, best, 0.02);
    CU_ASSERT(br <= 4);
    CU_ASSERT(br < fp);
    fprintf(stderr, "fixed costs: within 2%% of the best after %u launches (fixed point), %u (Broyden)\n", fp, br);
}

static void test_four_devices(void)
{
    /* four unequal devices, two with fixed costs: within 5% in a few launches */
    sim m = {4, 16384, {0, 500.0, 800.0, 0}, {1.0, 1.2, 0.8, 2.0}, 0, 0, 0};
    uint64_t bound[5];
    rpl_split_history h;
    memset(&h, 0, sizeof h);
    even(bound, 4, m.groups);
    double ns[4];
    for (unsigned l = 0; l < 6; l++) {
        times(&m, bound, ns);
        rpl_split_refine(bound, 4, m.groups, ns, RPL_SPLIT_BROYDEN, &h);
        check_bounds(bound, 4, m.groups);
    }
    times(&m, bound, ns);
    double lo = ns[0], hi = ns[0];
    for (unsigned p = 1; p < 4; p++) {
        lo = ns[p] < lo ? ns[p] : lo;
        hi = ns[p] > hi ? ns[p] : hi;
    }
    CU_ASSERT(hi <= lo * 1.05);
}

static void test_drift(void)
{
    /* a heavy window (8x per group) that moves by 1/16 of the range every
     * launch (nbody's). The reference is the best fixed split chosen
     * afterwards, knowing every launch: per launch on average, adaptive
     * proportions (from the fourth launch on) stay within 10% of it */
    enum { L = 32 };
    sim m = {2, 1024, {0, 0}, {1.0, 1.0}, 7.0, 0, 128};
    double static_best = INFINITY;
    for (uint64_t b = 1; b < m.groups; b++) {
        uint64_t bound[3] = {0, b, m.groups};
        double total = 0;
        for (unsigned l = 3; l < L; l++) {
            m.w0 = l * (m.groups / 16);
            total += makespan(&m, bound);
        }
        static_best = total < static_best ? total : static_best;
    }
    for (int method = 0; method < 2; method++) {
        uint64_t bound[3];
        rpl_split_history h;
        memset(&h, 0, sizeof h);
        even(bound, 2, m.groups);
        double total = 0;
        for (unsigned l = 0; l < L; l++) {
            double ns[2];
            m.w0 = l * (m.groups / 16);
            times(&m, bound, ns);
            if (l >= 3)
                total += makespan(&m, bound);
            rpl_split_refine(bound, 2, m.groups, ns, method, &h);
            check_bounds(bound, 2, m.groups);
        }
        fprintf(stderr, "drift, %s: %.3fx the best fixed split chosen afterwards\n",
                method == RPL_SPLIT_BROYDEN ? "Broyden" : "fixed point", total / static_best);
        CU_ASSERT(total <= static_best * 1.10);
    }
}

static void test_settled_and_limits(void)
{
    uint64_t bound[3] = {0, 100, 200};
    rpl_split_history h;
    memset(&h, 0, sizeof h);
    double ns[2] = {1000.0, 1040.0};   /* within 5%: unchanged */
    rpl_split_refine(bound, 2, 200, ns, RPL_SPLIT_BROYDEN, &h);
    CU_ASSERT(bound[1] == 100);
    CU_ASSERT(h.have == 1);
    double slow[2] = {1.0, 1e12};      /* one part hopelessly slow: it keeps one group */
    rpl_split_refine(bound, 2, 200, slow, RPL_SPLIT_FIXED_POINT, &h);
    CU_ASSERT(bound[1] == 199 && bound[2] == 200);
    rpl_split_refine(bound, 2, 200, slow, RPL_SPLIT_BROYDEN, &h);
    check_bounds(bound, 2, 200);
    uint64_t one[2] = {0, 5};
    rpl_split_refine(one, 1, 5, ns, RPL_SPLIT_BROYDEN, &h);   /* one part: nothing to do */
    CU_ASSERT(one[1] == 5);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rpl_split_refine", NULL, NULL);
    CU_add_test(s, "proportional devices", test_proportional);
    CU_add_test(s, "fixed costs: Broyden beats the fixed point", test_fixed_costs);
    CU_add_test(s, "four devices", test_four_devices);
    CU_add_test(s, "a drifting load", test_drift);
    CU_add_test(s, "settled parts, one group at least, bad counts", test_settled_and_limits);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
