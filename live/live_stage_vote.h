/* live_stage_vote.h — whether a staged write's deferred copies paid for
 * themselves, as seen at one wait (live/live_stage.c, rs_async_sync).
 * Not a public header; pure, so that tests/unit/test_rec_stage.c checks the
 * rule without a driver. */
#ifndef CLRR_LIVE_STAGE_VOTE_H
#define CLRR_LIVE_STAGE_VOTE_H

#include <stdint.h>

/* The application's own work since its first deferred copy that makes a
 * wait that still finds copies running count as paid. */
#define LIVE_STAGE_OVERLAP_NS 250000

enum { LIVE_STAGE_EARLY = 0, LIVE_STAGE_LATE = 1, LIVE_STAGE_UNCOUNTED = -1 };

/* The vote of a wait (a blocking staged transfer, clFinish,
 * clWaitForEvents) that follows deferred copies: @p first, the run's first
 * such wait; @p inflight, copies still running; @p gap_ns, the time since
 * the first of them was posted.
 *
 * Late when the copies are still running and less than
 * LIVE_STAGE_OVERLAP_NS of the application's work overlapped them; early
 * (paid) otherwise. The run's first wait finds its copies slowed by one-time
 * costs (the copy threads' start, the first user event and write from each
 * block): on an H200 host geomatrix's found them running in most runs,
 * where its later waits rarely did (bench/results/nvidia-h200-s19.md),
 * and that one vote turned
 * deferral off for the run (6.6 ms against 6.1). So a late first wait is
 * not counted when at least half of LIVE_STAGE_OVERLAP_NS of work came
 * before it; one that came with less (sobel: a write, three launches, a
 * read) still is. */
static inline int live_stage_vote(int first, int inflight, int64_t gap_ns)
{
    int late = inflight && gap_ns < LIVE_STAGE_OVERLAP_NS;
    if (first && late && gap_ns >= LIVE_STAGE_OVERLAP_NS / 2)
        return LIVE_STAGE_UNCOUNTED;
    return late ? LIVE_STAGE_LATE : LIVE_STAGE_EARLY;
}

#endif
