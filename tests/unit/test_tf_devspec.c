/* test_tf_devspec.c — the device spec rules of --device (trace-format's
 * tf_devspec_pick, shared by the replayer and the layer's device
 * override): an index, a type, a type and its number, part of a device or
 * platform name (case-insensitive, the first that matches); each refusal
 * says why in one "--device SPEC: ..." line. */
#include <CUnit/Basic.h>
#include <string.h>

#include "trace-format/tf.h"

static const tf_devspec_dev devs[] = {
    {"clrr stub device", "clrr stub", TF_DEVTYPE_CPU},
    {"pthread-skylake-avx512", "Portable Computing Language", TF_DEVTYPE_CPU},
    {"NVIDIA H200", "NVIDIA CUDA", TF_DEVTYPE_GPU},
    {"NVIDIA H200", "NVIDIA CUDA", TF_DEVTYPE_GPU},
};
#define N (unsigned)(sizeof devs / sizeof devs[0])

static int pick(const char *spec, char *err)
{
    return tf_devspec_pick(devs, N, spec, err, 256);
}

static void test_matches(void)
{
    char err[256];
    CU_ASSERT_EQUAL(pick("0", err), 0);
    CU_ASSERT_EQUAL(pick("3", err), 3);
    CU_ASSERT_EQUAL(pick("cpu", err), 0);        /* the first of the type */
    CU_ASSERT_EQUAL(pick("CPU1", err), 1);
    CU_ASSERT_EQUAL(pick("gpu", err), 2);
    CU_ASSERT_EQUAL(pick("gpu1", err), 3);
    CU_ASSERT_EQUAL(pick("pthread", err), 1);    /* part of the device's name */
    CU_ASSERT_EQUAL(pick("portable", err), 1);   /* ... or of its platform's */
    CU_ASSERT_EQUAL(pick("h200", err), 2);       /* the first that matches */
}

static void test_refusals(void)
{
    char err[256];
    CU_ASSERT_EQUAL(pick("4", err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--device 4: there are 4 devices here, 0 to 3 (see 'clrr devices')");
    CU_ASSERT_EQUAL(pick("gpu2", err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--device gpu2: there are 2 gpu devices here (see 'clrr devices')");
    CU_ASSERT_EQUAL(pick("accelerator", err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--device accelerator: no accelerator device here (see 'clrr devices')");
    CU_ASSERT_EQUAL(pick("oclgrind", err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--device oclgrind: no device here matches (see 'clrr devices')");
    CU_ASSERT_EQUAL(pick("", err), -1);
    CU_ASSERT_EQUAL(tf_devspec_pick(devs, 1, "1", err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "--device 1: there is one device here, 0 (see 'clrr devices')");
    CU_ASSERT_EQUAL(tf_devspec_pick(NULL, 0, "cpu", err, sizeof err), -1);
    char small[8];
    CU_ASSERT_EQUAL(tf_devspec_pick(devs, N, "nothing-at-all", small, sizeof small), -1);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);   /* cut, terminated */
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("tf_devspec", NULL, NULL);
    CU_add_test(s, "index, type, typeN, part of a name", test_matches);
    CU_add_test(s, "refusals say why", test_refusals);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned fails = CU_get_number_of_failures();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
