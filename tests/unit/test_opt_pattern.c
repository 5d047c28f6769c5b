/* test_opt_pattern.c — the pattern builder (optimizer/opt_pattern_build.c)
 * on real recordings: for every call of the committed traces, the text it
 * builds is the canonical text (PLAN.md, "Patterns") that the plan reader
 * makes of the same JSON, its key matches, and building it again (from the
 * per-object roles and per-function members it keeps) gives the same
 * text. The builder writes the canonical form directly and keeps what it
 * made, for speed; this is what would catch it drifting from jansson's
 * form or reusing a stale member list or role. */
#include <CUnit/Basic.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_int.h"

static const char *const traces[] = {
    "traces/api_tour-pocl.clrr", "traces/vecadd-pocl.clrr", "traces/image_map.h200.clrr",
    "traces/nbody.h200.clrr",    "traces/jacobi.h200.clrr",
};

/* The reader's canonical text of @p text (a builder's output). */
static char *canon_of(const char *text, uint64_t *key)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    char *out = NULL;
    if (!j)
        return NULL;
    if (plan_pattern_canon(j, &out, key) != PLAN_OK)
        out = NULL;
    json_decref(j);
    return out;
}

static void check_trace(const char *path, unsigned *patterns, unsigned *launches)
{
    tf_reader *r = NULL;
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    plan_track t;
    plan_track_init(&t, NULL);
    tf_item it;
    while (tf_reader_next(r, &it) == TF_OK) {
        if (it.type != TF_ITEM_CALL)
            continue;
        const tf_call *c = &it.u.call;
        for (int shape = 0; shape < 2; shape++) {
            char *a = NULL, *b = NULL;
            uint64_t ka = 0, kb = 0, kc = 0;
            plan_status st = plan_track_pattern(&t, c, shape, &a, &ka);
            CU_ASSERT(st == PLAN_OK || st == PLAN_ERR_LIMIT);
            if (st != PLAN_OK)
                continue;
            CU_ASSERT_FATAL(plan_track_pattern(&t, c, shape, &b, &kb) == PLAN_OK);
            CU_ASSERT_STRING_EQUAL(a, b);
            CU_ASSERT(ka == kb);
            char *canon = canon_of(a, &kc);
            CU_ASSERT_PTR_NOT_NULL(canon);
            if (canon) {
                CU_ASSERT_STRING_EQUAL(a, canon);
                CU_ASSERT(ka == kc);
                if (strcmp(a, canon))
                    fprintf(stderr, "\n%s: built     %s\n%s: canonical %s\n", path, a, path, canon);
            }
            (*patterns)++;
            *launches += !shape && !strcmp(c->sig->name, "clEnqueueNDRangeKernel");
            free(canon);
            free(a);
            free(b);
        }
        CU_ASSERT(plan_track_call(&t, c, PLAN_FATE_RUN) == PLAN_OK);
    }
    plan_track_free(&t);
    tf_reader_close(r);
}

static void test_canonical(void)
{
    unsigned patterns = 0, launches = 0;
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++)
        check_trace(traces[i], &patterns, &launches);
    CU_ASSERT(patterns >= 600);   /* 340 calls, two patterns each */
    CU_ASSERT(launches >= 15);
}

/* The members of a launch's pattern name each memory argument by role, in
 * order, and change when the kernel's arguments do (a role is kept per
 * object, the arguments are read at each launch). */
static void test_roles_follow_arguments(void)
{
    tf_reader *r = NULL;
    CU_ASSERT_FATAL(tf_reader_open(&r, "traces/jacobi.h200.clrr", NULL) == TF_OK);
    plan_track t;
    plan_track_init(&t, NULL);
    tf_item it;
    char *prev = NULL;
    unsigned launches = 0, changed = 0;
    while (tf_reader_next(r, &it) == TF_OK) {
        if (it.type != TF_ITEM_CALL)
            continue;
        const tf_call *c = &it.u.call;
        if (!strcmp(c->sig->name, "clEnqueueNDRangeKernel")) {
            char *p = NULL;
            uint64_t k;
            CU_ASSERT_FATAL(plan_track_pattern(&t, c, 0, &p, &k) == PLAN_OK);
            CU_ASSERT_PTR_NOT_NULL(strstr(p, "\"args\":[{\"flags\":"));
            CU_ASSERT_PTR_NOT_NULL(strstr(p, "\"function\":\"clEnqueueNDRangeKernel\""));
            launches++;
            changed += prev && strcmp(prev, p) != 0;
            free(prev);
            prev = p;
        }
        CU_ASSERT(plan_track_call(&t, c, PLAN_FATE_RUN) == PLAN_OK);
    }
    free(prev);
    plan_track_free(&t);
    tf_reader_close(r);
    CU_ASSERT(launches >= 4);
    CU_ASSERT(changed >= 1);   /* jacobi swaps its two grids between sweeps */
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("opt_pattern", NULL, NULL);
    CU_add_test(s, "every call of five recordings: canonical text, stable", test_canonical);
    CU_add_test(s, "launches: roles follow the arguments", test_roles_follow_arguments);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
