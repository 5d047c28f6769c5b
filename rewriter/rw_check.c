/* rw_check.c — parses the fused program again and checks the generated
 * kernel before anyone builds it: it parses, it is a kernel with the
 * expected parameters, and the text copied from P and C means there what
 * it meant where it was written (same macro definitions, no preprocessor
 * branch turned off at the end of the program). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

/* The original offset of fused-program offset @p off, when the text there
 * was copied unchanged; else -1. */
static int rw_orig_off(const rw_segs *segs, size_t off, size_t *orig)
{
    size_t i;

    for (i = 0; i < segs->n; i++)
        if (off >= segs->v[i].out && off < segs->v[i].out + segs->v[i].len) {
            *orig = segs->v[i].orig + (off - segs->v[i].out);
            return 0;
        }
    return -1;
}

static const rw_macro *rw_macro_at(const rw_tu *t, size_t start)
{
    size_t lo = 0, hi = t->nmx;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->mx[mid].start < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->nmx && t->mx[lo].start == start ? &t->mx[lo] : NULL;
}

static rw_status rw_check_macros(const rw_tu *orig, const rw_tu *t, size_t kernel_off,
                                 const rw_segs *segs, char *err, size_t cap)
{
    size_t i, j, matched = 0, expected = 0, o;

    for (i = 0; i < t->nmx; i++) {
        const rw_macro *m = &t->mx[i], *om;
        if (m->start < kernel_off)
            continue;
        if (rw_orig_off(segs, m->start, &o) < 0)
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "a name the rewriter generated is a macro (%s)", m->name);
        om = rw_macro_at(orig, o);
        if (!om || om->def != m->def)
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "macro %s used at line %u means something else at the end of the "
                           "program, where the fused kernel goes",
                           m->name, rw_line(orig, (unsigned)o));
        matched++;
    }
    for (i = 0; i < segs->n; i++)
        for (j = 0; j < orig->nmx; j++)
            if (orig->mx[j].start >= segs->v[i].orig &&
                orig->mx[j].start < segs->v[i].orig + segs->v[i].len)
                expected++;
    if (matched != expected)
        return rw_fail(err, cap, RW_ERR_REFUSED,
                       "a macro the kernels use is undefined at the end of the program, where "
                       "the fused kernel goes");
    return RW_OK;
}

rw_status rw_check(const rw_tu *orig, const char *src, size_t len, const char *args, int nargs,
                   size_t kernel_off, const rw_segs *segs, const char *name, unsigned nparams,
                   char *err, size_t cap)
{
    rw_tu t;
    rw_kernel *k = NULL;
    char msg[1024];
    rw_status st;

    st = rw_tu_parse(&t, src, len, args, nargs, msg, sizeof msg);
    if (st == RW_ERR_PARSE && t.file) {
        /* a macro that changed meaning explains an error best */
        rw_status mst = rw_check_macros(orig, &t, kernel_off, segs, err, cap);
        if (mst != RW_OK) {
            st = mst;
            goto out;
        }
    }
    if (st == RW_ERR_PARSE) {
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "the fused kernel does not parse: %s", msg);
        goto out;
    }
    if (st != RW_OK) {
        rw_fail(err, cap, st, "%s", msg);
        goto out;
    }
    k = malloc(sizeof *k);
    if (!k) {
        st = RW_ERR_NOMEM;
        goto out;
    }
    st = rw_kernel_find(&t, name, k, msg, sizeof msg);
    if (st != RW_OK) {
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "the fused kernel: %s", msg);
        goto out;
    }
    if (k->np != nparams || k->start < kernel_off) {
        st = rw_fail(err, cap, RW_ERR_INTERNAL,
                     "the fused kernel has %u parameters where %u were generated", k->np,
                     nparams);
        goto out;
    }
    if (rw_skipped_in(&t, (unsigned)kernel_off, (unsigned)len)) {
        st = rw_fail(err, cap, RW_ERR_REFUSED,
                     "a preprocessor condition in the kernels' text is false at the end of the "
                     "program, where the fused kernel goes");
        goto out;
    }
    st = rw_check_macros(orig, &t, kernel_off, segs, err, cap);
out:
    free(k);
    rw_tu_close(&t);
    return st;
}
