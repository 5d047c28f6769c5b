/* opt_part.c — the partitioner (issue 8, item 4): how many work-groups of
 * a launch each device runs so that the predicted completion time is
 * least, transfers included.
 *
 * Each device d has a predicted time for n slices (work-groups along the
 * split dimension), non-decreasing in n:
 *     t_d(0) = 0,  t_d(n) = fixed_d + K_d(n * per_slice) + slice_ns_d * n
 * where K_d is its measured kernel curve (costs/cdb.h: time against work-
 * groups, SKMD's performance table), fixed_d its latencies and slice_ns_d
 * what moving one slice's bytes costs it. The launch takes max_d t_d(n_d).
 *
 * With t_d non-decreasing and 0 allowed, the least makespan is the least T
 * for which the devices' capacities cap_d(T) = max{n : t_d(n) <= T} sum to
 * at least the slices: any assignment finishing by T has n_d <= cap_d(T),
 * and conversely capacities summing to enough can be trimmed (a smaller n
 * takes no longer). So one bisection over T, each step a bisection over n
 * per device, finds it: no subset enumeration, and devices too slow to be
 * worth their fixed cost get nothing. A single device is one of the
 * assignments, so the prediction is never worse than the best single
 * device's.
 *
 * Coupling: the queue's device also reads, before its own part starts, the
 * bytes the other devices are sent (feed). That depends on the others'
 * shares, so the solution is repeated a few times with the primary's fixed
 * time grown by the feed of the previous solution. */
#include "optimizer/opt_int.h"

#include <math.h>
#include <string.h>

double opt_part_time(const opt_part_dev *d, uint64_t n)
{
    if (!n)
        return 0;
    double k = d->curve ? cdb_curve_at(d->curve, (double)n * d->per_slice) : 0;
    return d->fixed_ns + k + d->slice_ns * (double)n;
}

/* The most slices @p d finishes within @p t (extra: added to its fixed time). */
static uint64_t opt_part_cap(const opt_part_dev *d, double extra, uint64_t slices, double t)
{
    if (opt_part_time(d, 1) + extra > t)
        return 0;
    uint64_t lo = 1, hi = slices;
    if (opt_part_time(d, hi) + extra <= t)
        return hi;
    while (hi - lo > 1) {   /* t(lo) <= t < t(hi) */
        uint64_t mid = lo + (hi - lo) / 2;
        if (opt_part_time(d, mid) + extra <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The longest of the devices' times for shares @p count, the primary's
 * with @p extra added. */
static double opt_part_makespan(const opt_part_dev *devs, unsigned n, const uint64_t *count, double extra)
{
    double worst = 0;
    for (unsigned i = 0; i < n; i++)
        if (count[i]) {
            double t = opt_part_time(&devs[i], count[i]) + (devs[i].primary ? extra : 0);
            if (t > worst)
                worst = t;
        }
    return worst;
}

/* One solution with the primary's extra fixed time @p extra (the others 0). */
static double opt_part_solve(const opt_part_dev *devs, unsigned n, uint64_t slices, double extra, uint64_t *count)
{
    /* an upper bound that is feasible: the best single device */
    double hi = INFINITY;
    for (unsigned i = 0; i < n; i++) {
        if (!devs[i].usable)
            continue;
        double t = opt_part_time(&devs[i], slices) + (devs[i].primary ? extra : 0);
        if (t < hi)
            hi = t;
    }
    if (!isfinite(hi)) {
        memset(count, 0, n * sizeof *count);
        return INFINITY;
    }
    double lo = 0;
    for (int it = 0; it < 64 && hi - lo > hi * 1e-6; it++) {
        double mid = 0.5 * (lo + hi);
        uint64_t sum = 0;
        for (unsigned i = 0; i < n && sum < slices; i++)
            if (devs[i].usable)
                sum += opt_part_cap(&devs[i], devs[i].primary ? extra : 0, slices, mid);
        if (sum >= slices)
            hi = mid;
        else
            lo = mid;
    }
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        count[i] = devs[i].usable ? opt_part_cap(&devs[i], devs[i].primary ? extra : 0, slices, hi) : 0;
        sum += count[i];
    }
    /* trim the excess from the devices with the most (a smaller share takes no longer) */
    while (sum > slices) {
        unsigned big = 0;
        for (unsigned i = 1; i < n; i++)
            if (count[i] > count[big])
                big = i;
        uint64_t take = sum - slices < count[big] ? sum - slices : count[big];
        count[big] -= take;
        sum -= take;
    }
    return opt_part_makespan(devs, n, count, extra);
}

double opt_partition(const opt_part_dev *devs, unsigned n, uint64_t slices, uint64_t *count)
{
    if (!n || !slices)
        return INFINITY;
    double extra = 0, best = INFINITY;
    uint64_t tmp[PLAN_SPLIT_MAX_PARTS];
    if (n > PLAN_SPLIT_MAX_PARTS)
        n = PLAN_SPLIT_MAX_PARTS;
    memset(count, 0, n * sizeof *count);
    for (int round = 0; round < 4; round++) {
        double t = opt_part_solve(devs, n, slices, extra, tmp);
        if (!isfinite(t))
            return INFINITY;   /* no device is usable */
        /* what that assignment really takes, the primary's feed included */
        double feed = 0;
        for (unsigned i = 0; i < n; i++)
            if (tmp[i] && !devs[i].primary)
                feed += devs[i].feed_fixed_ns + devs[i].feed_slice_ns * (double)tmp[i];
        double worst = opt_part_makespan(devs, n, tmp, feed);
        if (worst < best) {
            best = worst;
            memcpy(count, tmp, n * sizeof *count);
        }
        if (fabs(feed - extra) <= 1e-3 * (worst > 0 ? worst : 1))
            break;
        extra = feed;
    }
    /* never worse than one device alone (the feed can push a mixed
     * assignment past it) */
    for (unsigned i = 0; i < n; i++) {
        double t = devs[i].usable ? opt_part_time(&devs[i], slices) : INFINITY;
        if (t < best) {
            best = t;
            memset(count, 0, n * sizeof *count);
            count[i] = slices;
        }
    }
    return best;
}
