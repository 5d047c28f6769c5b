/* test_rec_stage.c — plan mode's rule for deferred staged copies
 * (live_stage_vote, live/live_stage_vote.h): a wait that finds the copies
 * done, or comes after enough of the application's work, says deferring
 * paid; one that finds them running soon after they were posted says it
 * did not; the run's first wait is not counted when it found them running
 * after at least half that much work (its copies pay one-time costs), and
 * is when it came sooner (a write, a few launches, a read). */
#include <CUnit/Basic.h>

#include "live/live_stage_vote.h"

#define T LIVE_STAGE_OVERLAP_NS

static void test_later_waits(void)
{
    CU_ASSERT_EQUAL(live_stage_vote(0, 0, 0), LIVE_STAGE_EARLY);            /* copies done */
    CU_ASSERT_EQUAL(live_stage_vote(0, 0, 10 * T), LIVE_STAGE_EARLY);
    CU_ASSERT_EQUAL(live_stage_vote(0, 1, 0), LIVE_STAGE_LATE);             /* waited at once */
    CU_ASSERT_EQUAL(live_stage_vote(0, 1, T / 2), LIVE_STAGE_LATE);         /* not counted only first */
    CU_ASSERT_EQUAL(live_stage_vote(0, 1, T - 1), LIVE_STAGE_LATE);
    CU_ASSERT_EQUAL(live_stage_vote(0, 1, T), LIVE_STAGE_EARLY);            /* enough work overlapped */
}

static void test_first_wait(void)
{
    CU_ASSERT_EQUAL(live_stage_vote(1, 0, 0), LIVE_STAGE_EARLY);
    CU_ASSERT_EQUAL(live_stage_vote(1, 0, T / 2), LIVE_STAGE_EARLY);
    CU_ASSERT_EQUAL(live_stage_vote(1, 1, 50000), LIVE_STAGE_LATE);         /* sobel-like: counted */
    CU_ASSERT_EQUAL(live_stage_vote(1, 1, T / 2 - 1), LIVE_STAGE_LATE);
    CU_ASSERT_EQUAL(live_stage_vote(1, 1, T / 2), LIVE_STAGE_UNCOUNTED);
    CU_ASSERT_EQUAL(live_stage_vote(1, 1, 200000), LIVE_STAGE_UNCOUNTED);   /* geomatrix-like */
    CU_ASSERT_EQUAL(live_stage_vote(1, 1, T - 1), LIVE_STAGE_UNCOUNTED);
    CU_ASSERT_EQUAL(live_stage_vote(1, 1, T), LIVE_STAGE_EARLY);
    CU_ASSERT_EQUAL(live_stage_vote(1, 1, -1), LIVE_STAGE_LATE);            /* a clock step back */
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rec_stage", NULL, NULL);
    CU_add_test(s, "later waits: done or overlapped is early, else late", test_later_waits);
    CU_add_test(s, "the first wait: late after half the work is not counted", test_first_wait);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
