/* test_opt_part.c — the partitioner (optimizer/opt_part.c): devices with
 * known cost curves, transfer costs and feeds; the shares must be the
 * best ones (checked against exhaustive search on small cases), sum to
 * the launch, never predict worse than the best single device, leave out
 * a device whose transfers cost more than it saves, and put everything on
 * another device when that alone is fastest. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "optimizer/opt_int.h"

/* a curve of points (groups, ns) */
typedef struct curve {
    uint64_t g[8];
    double ns[8];
    unsigned s[8];
    cdb_curve c;
} curve;

static void curve_set(curve *c, unsigned n, const uint64_t *g, const double *ns)
{
    for (unsigned i = 0; i < n; i++) {
        c->g[i] = g[i];
        c->ns[i] = ns[i];
        c->s[i] = 5;
    }
    c->c = (cdb_curve){n, c->g, c->ns, c->s};
}

/* a linear device: @p per ns per group, from 1 to @p max groups */
static void curve_linear(curve *c, double per, uint64_t max)
{
    uint64_t g[2] = {1, max};
    double ns[2] = {per, per * (double)max};
    curve_set(c, 2, g, ns);
}

static opt_part_dev dev_of(const curve *c, int primary)
{
    opt_part_dev d;
    memset(&d, 0, sizeof d);
    d.curve = &c->c;
    d.per_slice = 1;
    d.primary = primary;
    d.usable = 1;
    return d;
}

static double makespan(const opt_part_dev *d, unsigned n, const uint64_t *count)
{
    double feed = 0, worst = 0;
    for (unsigned i = 0; i < n; i++)
        if (count[i] && !d[i].primary)
            feed += d[i].feed_fixed_ns + d[i].feed_slice_ns * (double)count[i];
    for (unsigned i = 0; i < n; i++)
        if (count[i]) {
            double t = opt_part_time(&d[i], count[i]) + (d[i].primary ? feed : 0);
            worst = t > worst ? t : worst;
        }
    return worst;
}

static void test_equal_pair(void)
{
    curve a, b;
    curve_linear(&a, 1000, 1000);
    curve_linear(&b, 1000, 1000);
    opt_part_dev d[2] = {dev_of(&a, 1), dev_of(&b, 0)};
    uint64_t n[2];
    double t = opt_partition(d, 2, 1000, n);
    CU_ASSERT_EQUAL(n[0] + n[1], 1000);
    CU_ASSERT(n[0] >= 499 && n[0] <= 501);
    CU_ASSERT(fabs(t - 500 * 1000.0) <= 1000.0 + 1);
}

static void test_unequal(void)
{
    curve a, b;
    curve_linear(&a, 3000, 4000);   /* three times slower */
    curve_linear(&b, 1000, 4000);
    opt_part_dev d[2] = {dev_of(&a, 1), dev_of(&b, 0)};
    uint64_t n[2];
    double t = opt_partition(d, 2, 4000, n);
    CU_ASSERT_EQUAL(n[0] + n[1], 4000);
    CU_ASSERT(n[0] >= 999 && n[0] <= 1001);   /* 1:3 */
    CU_ASSERT(t <= 3000.0 * 1001 + 1);
}

/* transfers: a device whose slices cost twice the primary's (its bytes)
 * still takes the share it finishes in time; one whose fixed cost is more
 * than the whole launch on the primary takes nothing */
static void test_transfers(void)
{
    curve a, b;
    curve_linear(&a, 1000, 1000);
    curve_linear(&b, 100, 1000);
    opt_part_dev d[2] = {dev_of(&a, 1), dev_of(&b, 0)};
    d[1].slice_ns = 2000;   /* 2100 ns a slice there against 1000 here: 1000 / 3.1 slices */
    uint64_t n[2];
    double t = opt_partition(d, 2, 1000, n);
    CU_ASSERT_EQUAL(n[0] + n[1], 1000);
    CU_ASSERT(n[1] >= 320 && n[1] <= 324);
    CU_ASSERT(t < 0.7 * 1000.0 * 1000);
    d[1].slice_ns = 0;
    d[1].fixed_ns = 2e6;
    t = opt_partition(d, 2, 1000, n);
    CU_ASSERT_EQUAL(n[0], 1000);
    CU_ASSERT_EQUAL(n[1], 0);
    CU_ASSERT(fabs(t - 1000.0 * 1000) < 1);
}

/* another device fast enough to pay its transfers, and more: all on it */
static void test_device_selection(void)
{
    curve a, b;
    curve_linear(&a, 10000, 1000);
    curve_linear(&b, 10, 1000);
    opt_part_dev d[2] = {dev_of(&a, 1), dev_of(&b, 0)};
    d[1].fixed_ns = 1e5;
    d[1].slice_ns = 10;
    uint64_t n[2];
    double t = opt_partition(d, 2, 1000, n);
    CU_ASSERT_EQUAL(n[0] + n[1], 1000);
    CU_ASSERT(n[0] <= 12);   /* at most the few groups the primary finishes meanwhile */
    CU_ASSERT(t <= opt_part_time(&d[1], 1000) + 1);
}

/* a GPU-like curve: a flat floor (too few groups to fill it) then linear */
static void test_curve_floor(void)
{
    curve a, b;
    uint64_t g[3] = {1, 100, 1000};
    double ns[3] = {50000, 50000, 500000};
    curve_set(&a, 3, g, ns);
    curve_linear(&b, 400, 1000);
    opt_part_dev d[2] = {dev_of(&a, 1), dev_of(&b, 0)};
    uint64_t n[2];
    double t = opt_partition(d, 2, 1000, n);
    CU_ASSERT_EQUAL(n[0] + n[1], 1000);
    /* best: a takes x with 500*x == 400*(1000-x): x ~ 444 */
    CU_ASSERT(n[0] >= 440 && n[0] <= 448);
    CU_ASSERT(t < 500000 * 0.5);
}

/* the feed (the primary reads the others' inputs first) moves work away from it */
static void test_feed(void)
{
    curve a, b;
    curve_linear(&a, 1000, 1000);
    curve_linear(&b, 1000, 1000);
    opt_part_dev d[2] = {dev_of(&a, 1), dev_of(&b, 0)};
    d[1].feed_slice_ns = 500;
    uint64_t n[2];
    double t = opt_partition(d, 2, 1000, n);
    CU_ASSERT_EQUAL(n[0] + n[1], 1000);
    CU_ASSERT(n[0] < 450);
    CU_ASSERT(fabs(t - makespan(d, 2, n)) < 1);
    CU_ASSERT(t < 1000.0 * 1000);
    /* a feed so large that any share on the primary costs more than the
     * other device alone: never worse than that device */
    curve c;
    curve_linear(&c, 900, 1000);
    opt_part_dev e[2] = {dev_of(&a, 1), dev_of(&c, 0)};
    e[1].feed_slice_ns = 5000;
    t = opt_partition(e, 2, 1000, n);
    CU_ASSERT_EQUAL(n[0] + n[1], 1000);
    CU_ASSERT(t <= 900.0 * 1000 + 1);
    CU_ASSERT(fabs(t - makespan(e, 2, n)) < 1);
}

/* random devices: counts sum up, no worse than any single device, and
 * (three devices, 60 slices) within 1% of the exhaustive optimum */
static void test_random(void)
{
    srand(7);
    for (int round = 0; round < 300; round++) {
        curve c[3];
        opt_part_dev d[3];
        for (unsigned i = 0; i < 3; i++) {
            uint64_t g[3] = {1, 20, 60};
            double base = 100 + rand() % 5000, per = 10 + rand() % 3000;
            double ns[3] = {base + per, base + per * 20 * (0.5 + (rand() % 100) / 100.0), 0};
            ns[2] = ns[1] + per * 40;
            curve_set(&c[i], 3, g, ns);
            d[i] = dev_of(&c[i], i == 0);
            if (i) {
                d[i].fixed_ns = rand() % 20000;
                d[i].slice_ns = rand() % 500;
                d[i].feed_slice_ns = rand() % 100;
            }
        }
        uint64_t n[3];
        double t = opt_partition(d, 3, 60, n);
        CU_ASSERT_EQUAL(n[0] + n[1] + n[2], 60);
        CU_ASSERT(fabs(t - makespan(d, 3, n)) < 1e-6 * t + 1);
        for (unsigned i = 0; i < 3; i++)
            CU_ASSERT(t <= opt_part_time(&d[i], 60) + (d[i].primary ? 0 : 0) + 1e-6);
        double best = INFINITY;
        for (uint64_t x = 0; x <= 60; x++)
            for (uint64_t y = 0; x + y <= 60; y++) {
                uint64_t m[3] = {x, y, 60 - x - y};
                double v = makespan(d, 3, m);
                best = v < best ? v : best;
            }
        CU_ASSERT(t <= best * 1.01 + 1);
    }
}

/* unusable devices get nothing; none usable: infinity, all zero */
static void test_unusable(void)
{
    curve a, b;
    curve_linear(&a, 1000, 100);
    curve_linear(&b, 1, 100);
    opt_part_dev d[2] = {dev_of(&a, 1), dev_of(&b, 0)};
    d[1].usable = 0;
    uint64_t n[2];
    opt_partition(d, 2, 100, n);
    CU_ASSERT_EQUAL(n[0], 100);
    CU_ASSERT_EQUAL(n[1], 0);
    d[0].usable = 0;
    CU_ASSERT(isinf(opt_partition(d, 2, 100, n)));
    CU_ASSERT_EQUAL(n[0] + n[1], 0);
}

/* sixteen devices and a million work-groups: what one solution costs
 * (printed, not asserted: speed is measured, not tested) */
static void test_scale(void)
{
    curve c[PLAN_SPLIT_MAX_PARTS];
    opt_part_dev d[PLAN_SPLIT_MAX_PARTS];
    for (unsigned i = 0; i < PLAN_SPLIT_MAX_PARTS; i++) {
        uint64_t g[6] = {1, 1000, 10000, 100000, 500000, 1000000};
        double ns[6];
        for (unsigned j = 0; j < 6; j++)
            ns[j] = 5000 + (double)g[j] * (1 + i);
        curve_set(&c[i], 6, g, ns);
        d[i] = dev_of(&c[i], i == 0);
        d[i].slice_ns = i ? 0.5 : 0;
    }
    uint64_t n[PLAN_SPLIT_MAX_PARTS], sum = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    opt_partition(d, PLAN_SPLIT_MAX_PARTS, 1000000, n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (unsigned i = 0; i < PLAN_SPLIT_MAX_PARTS; i++)
        sum += n[i];
    CU_ASSERT_EQUAL(sum, 1000000);
    CU_ASSERT(n[0] > n[PLAN_SPLIT_MAX_PARTS - 1]);
    printf("(16 devices, 10^6 groups: %.0f us) ",
           ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("opt_part", NULL, NULL);
    CU_add_test(s, "equal pair: halves", test_equal_pair);
    CU_add_test(s, "unequal pair: in proportion to speed", test_unequal);
    CU_add_test(s, "transfers: a share in proportion; a fixed cost too high: unused", test_transfers);
    CU_add_test(s, "another device alone is fastest: all on it", test_device_selection);
    CU_add_test(s, "a curve with a floor", test_curve_floor);
    CU_add_test(s, "the primary's feed", test_feed);
    CU_add_test(s, "random: sums, never worse than one device, optimal", test_random);
    CU_add_test(s, "unusable devices", test_unusable);
    CU_add_test(s, "16 devices, 10^6 groups", test_scale);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
