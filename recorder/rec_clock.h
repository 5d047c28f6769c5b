/* rec_clock.h — host times from the CPU's time-stamp counter: the
 * conversion and its recalibration against CLOCK_MONOTONIC (recorder/
 * rec_clock.c keeps the state and reads the clocks). Not a public header;
 * pure, so that tests/unit/test_rec_clock.c checks the arithmetic without
 * a clock.
 *
 * Why: every recorded call reads the host clock twice (its BEGIN and END
 * times). clock_gettime(CLOCK_MONOTONIC) orders the counter read against
 * the instructions around it (lfence or rdtscp in the vDSO) and scales it
 * with the kernel's parameters under a sequence count: about twice what a
 * plain rdtsc and the scaling below cost, a large share of the layer's
 * cost per call (measured on an H200 host: bench/results/nvidia-h200-s20.md). */
#ifndef CLRR_REC_CLOCK_H
#define CLRR_REC_CLOCK_H

#include <stdint.h>

/* A segment of the counter-to-time line: time @p n0 at counter @p c0,
 * @p mul nanoseconds per tick in 32.32 fixed point up to counter @p c1,
 * then @p rate (the counter's measured rate) past it; @p rate 0: @p mul
 * throughout. mul is the rate slewed to make up an error over one period
 * (rec_clock_next): applied past the period, a segment no call
 * recalibrated in time (a long blocking call, an idle application) drifted
 * by up to 1/8 of the time since, and a clock ahead is never stepped back
 * (a recorded clEnqueueReadBuffer ended 27 ms after the application's own
 * clock said it had returned, under a loaded test machine). */
typedef struct rec_clock_seg {
    uint64_t c0;
    int64_t n0;
    uint64_t mul;
    uint64_t c1;
    uint64_t rate;
} rec_clock_seg;

#define REC_CLOCK_FIRST_NS  5000000    /* the first calibration: 5 ms after the start */
#define REC_CLOCK_PERIOD_NS 10000000   /* then one every 10 ms of calls */
#define REC_CLOCK_STEP_NS   1000000    /* behind by more: step, not slew */

/* The time at counter @p c (before c0 too: continuous either side; past
 * c1 at the measured rate, continuous there too). */
static inline int64_t rec_clock_at(const rec_clock_seg *s, uint64_t c)
{
    int64_t d = (int64_t)(c - s->c0);
    int64_t d1 = (int64_t)(s->c1 - s->c0);
    if (s->rate && d1 >= 0 && d > d1)
        return s->n0 + (int64_t)(((__int128)d1 * (__int128)s->mul) >> 32) +
               (int64_t)(((__int128)(d - d1) * (__int128)s->rate) >> 32);
    return s->n0 + (int64_t)(((__int128)d * (__int128)s->mul) >> 32);
}

/* Ticks in one period at @p rate. */
static inline uint64_t rec_clock_period_ticks(uint64_t rate)
{
    unsigned __int128 t = ((unsigned __int128)REC_CLOCK_PERIOD_NS << 32) / (rate ? rate : 1);
    return t > (unsigned __int128)(UINT64_MAX >> 2) ? UINT64_MAX >> 2 : (uint64_t)t;
}

/* The counter's rate, nanoseconds per tick (32.32), from two readings of
 * both clocks @p dc ticks and @p dn nanoseconds apart; 0 when they are not
 * usable (the counter did not advance, or the time went back). */
static inline uint64_t rec_clock_rate(uint64_t dc, int64_t dn)
{
    if (dc == 0 || dn <= 0)
        return 0;
    unsigned __int128 r = ((unsigned __int128)(uint64_t)dn << 32) / dc;
    return r > (unsigned __int128)UINT64_MAX ? 0 : (uint64_t)r;
}

/* The segment that follows @p cur at counter @p c, where CLOCK_MONOTONIC
 * read @p n, for a counter of rate @p rate (rec_clock_rate over the last
 * period: CLOCK_MONOTONIC's own rate changes while NTP slews it, by up to
 * 8% under chrony). It starts where @p cur is at c, so that times never
 * jump, and its slope makes up the difference n - cur(c) over the next
 * REC_CLOCK_PERIOD_NS (then the rate alone: c1): a slew of at most 1/8 of
 * the rate either way. Only
 * a time more than REC_CLOCK_STEP_NS behind is stepped, forward; a time
 * ahead is never stepped back, so that the times one thread reads never
 * decrease. */
static inline rec_clock_seg rec_clock_next(const rec_clock_seg *cur, uint64_t c, int64_t n, uint64_t rate)
{
    rec_clock_seg s = {c, rec_clock_at(cur, c), rate, c + rec_clock_period_ticks(rate), rate};
    int64_t err = n - s.n0;                 /* > 0: this clock is behind */

    if (err > REC_CLOCK_STEP_NS) {
        s.n0 = n;
        return s;
    }
    __int128 adj = (__int128)rate * err / REC_CLOCK_PERIOD_NS;
    __int128 lim = (__int128)(rate >> 3);
    if (adj > lim)
        adj = lim;
    if (adj < -lim)
        adj = -lim;
    s.mul = (uint64_t)((__int128)rate + adj);
    return s;
}

#endif
