/* test_plan_trust.c — trust in a plan (plan/plan_trust.c, PLAN.md
 * "Trust"): the key of a plan's bytes, this machine's record of verified
 * plans (devices added, lookups by device, records that are not ones or
 * name another key refused, a symlinked record refused), and the
 * comparison of a plan's generated kernels with the optimizer's (a
 * kernel's name aside; the first difference named). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/plan.h"

static char dir[64];

static void tt_rm_rf(const char *d)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", d);
}

static void test_key(void)
{
    char a[PLAN_TRUST_KEY_CAP], b[PLAN_TRUST_KEY_CAP];
    plan_trust_key("{}", 2, a);
    plan_trust_key("{} ", 3, b);
    CU_ASSERT_EQUAL(strlen(a), 32);
    CU_ASSERT(strcmp(a, b) != 0);   /* a byte of white space is another plan */
    plan_trust_key("{}", 2, b);
    CU_ASSERT_STRING_EQUAL(a, b);
}

static void test_record(void)
{
    char key[PLAN_TRUST_KEY_CAP], other[PLAN_TRUST_KEY_CAP], err[256], devs[256], path[256];
    plan_trust_key("plan one", 8, key);
    plan_trust_key("plan two", 8, other);
    snprintf(path, sizeof path, "%s/sub/verified", dir);
    setenv("CLRR_VERIFIED", path, 1);
    CU_ASSERT_EQUAL(plan_trust_lookup(key, NULL, NULL, 0), 0);
    CU_ASSERT_EQUAL(plan_trust_record(key, "pthread-cpu", err, sizeof err), PLAN_OK);   /* the directory made */
    CU_ASSERT_EQUAL(plan_trust_lookup(key, NULL, devs, sizeof devs), 1);
    CU_ASSERT_STRING_EQUAL(devs, "pthread-cpu");
    CU_ASSERT_EQUAL(plan_trust_lookup(key, "pthread-cpu", NULL, 0), 1);
    CU_ASSERT_EQUAL(plan_trust_lookup(key, "NVIDIA H200", NULL, 0), 0);
    CU_ASSERT_EQUAL(plan_trust_lookup(other, NULL, NULL, 0), 0);
    /* a second device is added, the first kept, none twice */
    CU_ASSERT_EQUAL(plan_trust_record(key, "NVIDIA H200", err, sizeof err), PLAN_OK);
    CU_ASSERT_EQUAL(plan_trust_record(key, "NVIDIA H200", err, sizeof err), PLAN_OK);
    CU_ASSERT_EQUAL(plan_trust_lookup(key, "NVIDIA H200", devs, sizeof devs), 1);
    CU_ASSERT_STRING_EQUAL(devs, "pthread-cpu, NVIDIA H200");
    /* a record under the wrong name (copied from another plan's) is none */
    char from[300], to[300];
    snprintf(from, sizeof from, "%s/%s", path, key);
    snprintf(to, sizeof to, "%s/%s", path, other);
    FILE *in = fopen(from, "r"), *out = fopen(to, "w");
    CU_ASSERT_FATAL(in && out);
    for (int c; (c = fgetc(in)) != EOF;)
        fputc(c, out);
    fclose(in);
    fclose(out);
    CU_ASSERT_EQUAL(plan_trust_lookup(other, NULL, NULL, 0), 0);
    /* a symlink is not followed */
    unlink(to);
    CU_ASSERT(symlink(from, to) == 0);
    CU_ASSERT_EQUAL(plan_trust_lookup(other, NULL, NULL, 0), 0);
    /* bad keys, no device */
    CU_ASSERT_EQUAL(plan_trust_lookup("../../etc/passwd", NULL, NULL, 0), 0);
    CU_ASSERT_EQUAL(plan_trust_record("nothex", "d", err, sizeof err), PLAN_ERR_ARG);
    CU_ASSERT_EQUAL(plan_trust_record(key, "", err, sizeof err), PLAN_ERR_ARG);
    /* a directory that cannot be made: one line */
    setenv("CLRR_VERIFIED", "/proc/clrr-no/verified", 1);
    CU_ASSERT_EQUAL(plan_trust_record(key, "d", err, sizeof err), PLAN_ERR_IO);
    CU_ASSERT_PTR_NULL(strchr(err, '\n'));
    unsetenv("CLRR_VERIFIED");
}

/* A plan with one specialization of kernel k, named @p name, whose source
 * is @p src and first constant @p c. */
static plan_file *tt_plan(const char *name, const char *src, unsigned char c)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"clrr-plan\", \"version\": \"1.9\", \"requires\": [\"specialize\"], \"generator\": \"t\",\n"
             "\"trace\": {\"file\": \"t.clrr\", \"calls\": 3, \"fingerprint\": \"0000000000000001\", \"programs\": []},\n"
             "\"passes\": [{\"name\": \"specialize\", \"enabled\": true, \"transformations\": 0, \"effect\": "
             "{\"commands\": 0, \"kernels\": 0, \"bytes\": 0, \"device_ns\": 0, \"timed\": 0}}],\n"
             "\"kernels\": [], \"transformations\": [], \"fused_kernels\": [], \"splits\": [],\n"
             "\"specializations\": [{\"id\": 1, \"name\": \"%s\", \"kernel\": \"k\", \"program\": "
             "\"0123456789abcdef0123456789abcdef\", \"args\": 2, \"constants\": [[1, \"%02x000000\"]], \"options\": \"\", "
             "\"source\": \"%s\"}],\n"
             "\"schedule\": [], \"device_selection\": null}\n", name, c, src);
    plan_file *p = NULL;
    char err[256];
    if (plan_parse(text, strlen(text), &p, err, sizeof err) != PLAN_OK) {
        fprintf(stderr, "tt_plan: %s\n", err);
        return NULL;
    }
    return p;
}

static void test_compare(void)
{
    char err[256];
    plan_file *want = tt_plan("__clrr_spec_1", "k(){}\\nkernel void __clrr_spec_1(int n) { int x = 4; }", 4);
    plan_file *got = tt_plan("__clrr_spec_3", "k(){}\\nkernel void __clrr_spec_3(int n) { int x = 4; }", 4);
    CU_ASSERT_FATAL(want && got);
    CU_ASSERT_EQUAL(plan_compare_generated(want, got, err, sizeof err), PLAN_OK);   /* names aside */
    plan_free(want);
    want = tt_plan("__clrr_spec_1", "k(){}\\nkernel void __clrr_spec_1(int n) { for (;;) { } }", 4);
    CU_ASSERT_EQUAL(plan_compare_generated(want, got, err, sizeof err), PLAN_ERR_PLAN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "specializations[0] (__clrr_spec_1): its source differs from the rewriter's at line 2"));
    plan_free(want);
    want = tt_plan("__clrr_spec_1", "k(){}\\nkernel void __clrr_spec_1(int n) { int x = 4; }", 5);
    CU_ASSERT_EQUAL(plan_compare_generated(want, got, err, sizeof err), PLAN_ERR_PLAN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "its constant 0 (argument 1) is not the recording's"));
    /* a name that is a prefix of another is not confused with it */
    plan_free(want);
    want = tt_plan("__clrr_spec_1", "k(){}\\nkernel void __clrr_spec_12(int n) { int x = 4; }", 4);
    CU_ASSERT_EQUAL(plan_compare_generated(want, got, err, sizeof err), PLAN_ERR_PLAN);
    plan_free(want);
    plan_free(got);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/clrr-trust-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("plan_trust", NULL, NULL);
    CU_add_test(s, "the key of a plan's bytes", test_key);
    CU_add_test(s, "the record: devices, other keys, symlinks, bad keys", test_record);
    CU_add_test(s, "generated kernels against the optimizer's", test_compare);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    tt_rm_rf(dir);
    return failed ? 1 : 0;
}
