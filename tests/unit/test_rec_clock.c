/* test_rec_clock.c — the recorder's time-stamp-counter clock
 * (recorder/rec_clock.h): the conversion is linear and continuous either
 * side of a segment's start; the rate is measured over the last period;
 * each recalibration starts where the last segment is and slews, within 1/8 of
 * the rate, toward CLOCK_MONOTONIC; only a clock far behind steps, forward.
 * A simulated counter and CLOCK_MONOTONIC, calibrated as rec_clock.c does
 * (the first segment after REC_CLOCK_FIRST_NS, one per REC_CLOCK_PERIOD_NS
 * after), with noisy readings: the times stay within a microsecond of the
 * true clock, follow it within microseconds while NTP slews it (a few
 * periods after the slew starts), and never decrease. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>

#include "recorder/rec_clock.h"

#define ONE ((uint64_t)1 << 32)

static void test_at(void)
{
    rec_clock_seg s = {1000, 5000000, ONE / 2, 0, 0};   /* 0.5 ns per tick, no slew end */
    CU_ASSERT_EQUAL(rec_clock_at(&s, 1000), 5000000);
    CU_ASSERT_EQUAL(rec_clock_at(&s, 3000), 5001000);
    CU_ASSERT_EQUAL(rec_clock_at(&s, 0), 4999500);          /* before c0: continuous */
    s.mul = 3 * ONE;
    CU_ASSERT_EQUAL(rec_clock_at(&s, 1000 + 10000000000ull), 5000000 + 30000000000ll);
    /* an hour of a 4 GHz counter: no overflow */
    s = (rec_clock_seg){0, 0, ONE / 4, 0, 0};
    CU_ASSERT_EQUAL(rec_clock_at(&s, 4000000000ull * 3600), 3600000000000ll);
}

static void test_rate(void)
{
    CU_ASSERT_EQUAL(rec_clock_rate(1000, 400), (uint64_t)(0.4 * ONE));
    CU_ASSERT_EQUAL(rec_clock_rate(2500000000ull, 1000000000), (uint64_t)(0.4 * ONE));
    CU_ASSERT_EQUAL(rec_clock_rate(0, 400), 0);              /* the counter did not move */
    CU_ASSERT_EQUAL(rec_clock_rate(1000, 0), 0);              /* nor the time */
    CU_ASSERT_EQUAL(rec_clock_rate(1000, -5), 0);
    CU_ASSERT_EQUAL(rec_clock_rate(1, INT64_MAX), 0);         /* past 32.32 */
}

static void test_next(void)
{
    rec_clock_seg cur = {0, 0, ONE, 0, 0};
    /* on time: the same rate, from where cur is */
    rec_clock_seg s = rec_clock_next(&cur, 1000, 1000, ONE);
    CU_ASSERT_EQUAL(s.c0, 1000);
    CU_ASSERT_EQUAL(s.n0, 1000);
    CU_ASSERT_EQUAL(s.mul, ONE);
    /* 1 us behind: continuous, a little faster, to make it up in a period */
    s = rec_clock_next(&cur, 1000, 2000, ONE);
    CU_ASSERT_EQUAL(s.n0, 1000);
    CU_ASSERT(s.mul > ONE);
    CU_ASSERT(llabs(rec_clock_at(&s, 1000 + REC_CLOCK_PERIOD_NS) - (2000 + REC_CLOCK_PERIOD_NS)) <= 1);
    /* 1 us ahead: slower, never back */
    s = rec_clock_next(&cur, 1000, 0, ONE);
    CU_ASSERT_EQUAL(s.n0, 1000);
    CU_ASSERT(s.mul < ONE);
    CU_ASSERT(llabs(rec_clock_at(&s, 1000 + REC_CLOCK_PERIOD_NS) - REC_CLOCK_PERIOD_NS) <= 1);
    /* far ahead: the slope is bounded (1/8 slower), still never back */
    s = rec_clock_next(&cur, 1000, 1000 - 50 * (int64_t)REC_CLOCK_STEP_NS, ONE);
    CU_ASSERT_EQUAL(s.n0, 1000);
    CU_ASSERT_EQUAL(s.mul, ONE - (ONE >> 3));
    /* 100 us behind: slewed, 1/100 faster */
    s = rec_clock_next(&cur, 1000, 101000, ONE);
    CU_ASSERT_EQUAL(s.n0, 1000);
    CU_ASSERT_EQUAL(s.mul, ONE + ONE * 100000 / REC_CLOCK_PERIOD_NS);
    /* behind by up to the step: slewed (1/10 faster, within the 1/8) */
    s = rec_clock_next(&cur, 1000, 1000 + REC_CLOCK_STEP_NS, ONE);
    CU_ASSERT_EQUAL(s.n0, 1000);
    CU_ASSERT_EQUAL(s.mul, ONE + ONE * REC_CLOCK_STEP_NS / REC_CLOCK_PERIOD_NS);
    CU_ASSERT(s.mul < ONE + (ONE >> 3));
    /* behind by more: stepped forward */
    s = rec_clock_next(&cur, 1000, 1001 + REC_CLOCK_STEP_NS, ONE);
    CU_ASSERT_EQUAL(s.n0, 1001 + REC_CLOCK_STEP_NS);
    CU_ASSERT_EQUAL(s.mul, ONE);
}

/* The slew ends with its period: a segment read long after (no call
 * recalibrated it: a blocking call of 300 ms, an idle program) is off by
 * the error it made up, never by 1/8 of the time since. Before, a clock
 * 0.9 ms behind at a recalibration was 27 ms ahead 300 ms later, and a
 * clock ahead is never stepped back. */
static void test_slew_ends(void)
{
    rec_clock_seg cur = {0, 0, ONE, 0, 0};
    const int64_t late = 300000000;   /* 300 ms after the recalibration */
    for (int64_t err = -900000; err <= 900000; err += 300000) {
        rec_clock_seg s = rec_clock_next(&cur, 1000, 1000 + err, ONE);
        CU_ASSERT_EQUAL(s.c1, 1000 + REC_CLOCK_PERIOD_NS);
        CU_ASSERT_EQUAL(s.rate, ONE);
        /* at the period's end: made up (within the 1/8 bound: all of it here) */
        CU_ASSERT(llabs(rec_clock_at(&s, 1000 + REC_CLOCK_PERIOD_NS) - (1000 + err + REC_CLOCK_PERIOD_NS)) <= 1);
        /* long after: still only that far from the true line */
        CU_ASSERT(llabs(rec_clock_at(&s, 1000 + late) - (1000 + err + late)) <= 1);
        /* continuous at c1, and never back */
        CU_ASSERT(rec_clock_at(&s, s.c1 + 1) >= rec_clock_at(&s, s.c1));
        CU_ASSERT(rec_clock_at(&s, s.c1) >= rec_clock_at(&s, s.c1 - 1));
    }
    /* a first segment (mul = rate): the same line either side of c1 */
    rec_clock_seg f = {500, 7000, ONE / 2, 500, ONE / 2};
    CU_ASSERT_EQUAL(rec_clock_at(&f, 500 + 2000000000ull), 7000 + 1000000000ll);
}

/* A counter of 1/tick_ns GHz against a true time that runs @p ppm faster
 * after the first second (CLOCK_MONOTONIC under an NTP slew), read with
 * +-@p noise ns: the worst distance from the true time over @p seconds
 * (*settled: only from 50 ms after the slew started), and whether a time
 * ever decreased (a call every 100 us). */
static double lcg_next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*x >> 11) / (double)(1ull << 53);
}

static int64_t simulate(double tick_ns, double ppm, double noise, int seconds, int *backwards, int64_t *settled)
{
    uint64_t rng = 42;
    const int64_t start = 1000000000000ll;
    uint64_t c_first = 123456789, c = c_first;
    int mode = 0;   /* 0: pending, 1: segments */
    rec_clock_seg seg = {0, 0, 0, 0, 0};
    uint64_t next = 0, c_prev = 0;
    int64_t worst = 0, last = 0, n_prev = 0;
    uint64_t step = (uint64_t)(100000 / tick_ns);   /* a call every 100 us */
    *backwards = 0;
    *settled = 0;
    /* the slew starts after the first second, once the rate was measured without it */
    const double t_slew = 1e9 / tick_ns;
#define TRUE_NS(cc) (start + (int64_t)((double)((cc) - c_first) * tick_ns + \
                     ((double)((cc) - c_first) > t_slew ? ((double)((cc) - c_first) - t_slew) * tick_ns * ppm * 1e-6 : 0)))
#define READ_NS(cc) (TRUE_NS(cc) + (int64_t)((lcg_next(&rng) * 2 - 1) * noise))
    while (c - c_first < (uint64_t)(seconds * 1e9 / tick_ns)) {
        c += step;
        int64_t n;
        if (mode == 0) {
            n = TRUE_NS(c);
            if (n - start >= REC_CLOCK_FIRST_NS) {
                int64_t r = READ_NS(c);
                uint64_t rate = rec_clock_rate(c - c_first, r - start);
                CU_ASSERT_FATAL(rate != 0);
                seg = (rec_clock_seg){c, r, rate, c, rate};
                next = c + (uint64_t)(REC_CLOCK_PERIOD_NS / tick_ns);
                c_prev = c;
                n_prev = r;
                mode = 1;
            }
        } else {
            if (c >= next) {
                int64_t r = READ_NS(c);
                uint64_t rate = rec_clock_rate(c - c_prev, r - n_prev);
                seg = rec_clock_next(&seg, c, r, rate);
                c_prev = c;
                n_prev = r;
                next = c + (uint64_t)(REC_CLOCK_PERIOD_NS / tick_ns);
            }
            n = rec_clock_at(&seg, c);
        }
        int64_t d = n - TRUE_NS(c);
        if (d < 0)
            d = -d;
        if (d > worst)
            worst = d;
        if ((double)(c - c_first) > t_slew + 5e7 / tick_ns && d > *settled)
            *settled = d;
        if (n < last)
            *backwards = 1;
        last = n;
    }
#undef TRUE_NS
#undef READ_NS
    return worst;
}

static void test_simulated(void)
{
    int back;
    int64_t settled;
    /* 2.5 GHz, readings +-20 ns: within 1 us over ten minutes */
    CU_ASSERT(simulate(0.4, 0, 20, 600, &back, &settled) < 1000);
    CU_ASSERT_FALSE(back);
    /* an odd rate, a 50 ppm slew of CLOCK_MONOTONIC: within 1 us */
    CU_ASSERT(simulate(1.0 / 3.1, 50, 20, 120, &back, &settled) < 1000);
    CU_ASSERT_FALSE(back);
    /* ntpd's largest slew (500 ppm), either way: within 500 ppm of a period */
    CU_ASSERT(simulate(0.5, 500, 20, 60, &back, &settled) < 5500);
    CU_ASSERT_FALSE(back);
    CU_ASSERT(simulate(0.5, -500, 20, 60, &back, &settled) < 5500);
    CU_ASSERT_FALSE(back);
    /* chrony's largest (8.3%), either way: a period's worth at its start,
     * then within a microsecond (the rate of the last period follows it) */
    CU_ASSERT(simulate(0.5, 83333, 20, 10, &back, &settled) < 1000000);
    CU_ASSERT(settled < 1000);
    CU_ASSERT_FALSE(back);
    CU_ASSERT(simulate(0.5, -83333, 20, 10, &back, &settled) < 1000000);
    CU_ASSERT(settled < 1000);
    CU_ASSERT_FALSE(back);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rec_clock", NULL, NULL);
    CU_add_test(s, "conversion: linear, continuous before c0, no overflow", test_at);
    CU_add_test(s, "rate: ns per tick, 0 when unusable", test_rate);
    CU_add_test(s, "next segment: continuous, slewed within 1/8, stepped only forward", test_next);
    CU_add_test(s, "simulated runs: near the true clock, through NTP slews, never back", test_simulated);
    CU_add_test(s, "the slew ends with its period: no drift across a long call", test_slew_ends);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
