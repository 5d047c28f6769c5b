/* fuzz_plan.c — fuzz target for the plan reader (optimizer/opt_plan_read.c):
 * a plan is JSON (plan/PLAN.md) handed around with traces, so it is
 * untrusted input like them.
 *
 * Input: the plan file, byte for byte. The oracle: no crash, no sanitizer
 * report, no leak; a refused plan comes with a message; an accepted plan
 * is written back (plan_write) and that text is accepted again with
 * the same header and the same number of transformations and kernels.
 *
 * Corpus: tests/fuzz-corpus/plan/ (plans `clrr optimize` wrote for the
 * golden traces and test programs, and hand-cut variants); crashes:
 * tests/fuzz/crashes/plan/. */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/opt.h"

const char *const fuzz_dirs[] = { "tests/fuzz-corpus/plan", "tests/fuzz/crashes/plan", NULL };

static void fp_check(int ok, const char *what, const char *err)
{
    if (!ok) {
        fprintf(stderr, "fuzz_plan: %s%s%s\n", what, err && *err ? ": " : "", err ? err : "");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    plan_file *p = NULL, *q = NULL;
    char err[512] = "", err2[512] = "";
    char *text = NULL;
    size_t len = 0;

    plan_status st = plan_parse((const char *)d, n, &p, err, sizeof err);
    if (st != PLAN_OK) {
        fp_check(p == NULL, "a refused plan was returned", NULL);
        fp_check(err[0] != 0, "a refused plan without a message", NULL);
        return 0;
    }
    fp_check(p != NULL, "an accepted plan is NULL", NULL);
    FILE *f = open_memstream(&text, &len);
    if (f) {
        plan_status ws = plan_write(p, f);
        if (fclose(f) == 0 && ws == PLAN_OK) {
            st = plan_parse(text, len, &q, err2, sizeof err2);
            fp_check(st == PLAN_OK, "the written plan is refused", err2);
            const plan_info *a = plan_get_info(p), *b = plan_get_info(q);
            fp_check(a && b && plan_xform_count(p) == plan_xform_count(q)
                         && plan_kernel_count(p) == plan_kernel_count(q),
                     "the written plan reads back different", NULL);
        }
    }
    free(text);
    plan_free(q);
    plan_free(p);
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}
