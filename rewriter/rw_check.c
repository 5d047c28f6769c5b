/* rw_check.c — parses a generated program again and checks the new
 * kernel before anyone builds it: it parses, it is a kernel with the
 * expected parameters, and the text copied from the program means there
 * what it meant where it was written (same macro definitions, the same
 * preprocessor branches compiled); a partition-ready kernel calls none of
 * the builtins its macros redirect. */
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

/* 1 when the expansion at @p off uses a macro that a system header
 * defines: the compiler's own spelling of a builtin the generated text
 * calls (as_float is a macro of clang's default header), not one of the
 * program's (-D or #define). */
static int rw_system_macro(const rw_tu *t, size_t off)
{
    CXCursor c = clang_getCursor(t->tu, clang_getLocationForOffset(t->tu, t->file, (unsigned)off));
    CXCursor def;

    if (clang_getCursorKind(c) != CXCursor_MacroExpansion)
        return 0;
    def = clang_getCursorReferenced(c);
    return !clang_Cursor_isNull(def) && clang_getCursorKind(def) == CXCursor_MacroDefinition &&
           clang_Location_isInSystemHeader(clang_getCursorLocation(def));
}

/* 1 when @p name is one of the NULL-terminated @p set (NULL: none). */
static int rw_in_list(const char *name, const char *const *set)
{
    for (; set && *set; set++)
        if (!strcmp(name, *set))
            return 1;
    return 0;
}

static rw_status rw_check_macros(const rw_check_req *r, const rw_tu *t, char *err, size_t cap)
{
    const rw_tu *orig = r->orig;
    const rw_segs *segs = r->segs;
    size_t i, j, matched = 0, expected = 0, o;

    for (i = 0; i < t->nmx; i++) {
        const rw_macro *m = &t->mx[i], *om;
        if (m->start < r->gen_off)
            continue;
        if (rw_orig_off(segs, m->start, &o) < 0) {
            if (rw_system_macro(t, m->start))
                continue;   /* the generated text's own call of a builtin */
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "a name the rewriter generated is a macro (%s)", m->name);
        }
        om = rw_macro_at(orig, o);
        if (!om && rw_in_list(m->name, r->redirected))
            continue;   /* a builtin the generated text redirects (the program defines none) */
        if (!om || om->def != m->def)
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "macro %s used at line %u means something else at the end of the "
                           "program, where the new kernel goes",
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
                       "the new kernel goes");
    return RW_OK;
}

/* Every inactive branch of the copied text maps onto one of the program
 * at the same place, and as many: a condition that changed at the end of
 * the program would compile other code. */
static rw_status rw_check_skipped(const rw_check_req *r, const rw_tu *t, char *err, size_t cap)
{
    const rw_tu *orig = r->orig;
    unsigned i, j, s, e, os, oe, n_new = 0, n_orig = 0, nt, no;
    size_t k, o1, o2;
    int moved = 0;

    nt = t->skipped ? t->skipped->count : 0;
    no = orig->skipped ? orig->skipped->count : 0;
    for (i = 0; i < nt && !moved; i++) {
        if (rw_skipped_range(t, i, &s, &e) < 0 || e <= r->gen_off)
            continue;
        n_new++;
        moved = s < r->gen_off || rw_orig_off(r->segs, s, &o1) < 0 ||
                rw_orig_off(r->segs, e - 1, &o2) < 0 || o2 + 1 - o1 != e - s;
        for (j = 0; !moved && j < no; j++)
            if (rw_skipped_range(orig, j, &os, &oe) == 0 && os == o1 && oe == o2 + 1)
                break;
        moved = moved || j == no;
    }
    for (j = 0; j < no; j++)
        for (k = 0; k < r->segs->n; k++)
            if (rw_skipped_range(orig, j, &os, &oe) == 0 && os >= r->segs->v[k].orig &&
                oe <= r->segs->v[k].orig + r->segs->v[k].len) {
                n_orig++;
                break;
            }
    if (!moved && n_new == n_orig)
        return RW_OK;
    return rw_fail(err, cap, RW_ERR_REFUSED,
                   "a preprocessor condition in the kernels' text is %s at the end of the "
                   "program, where the new kernel goes",
                   n_new < n_orig ? "true" : "false");
}

typedef struct rw_left {
    const rw_check_req *r;
    const rw_tu *t;
    rw_status st;
    char *err;
    size_t cap;
} rw_left;

/* A call of a redirected builtin in the new kernel: the macro did not
 * reach it (an #undef in K's body; OpenCL C has no function pointers, so
 * every other call spells the name where the macro expands). */
static enum CXChildVisitResult rw_visit_left(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_left *x = d;
    CXCursor f;
    CXFile file = NULL;
    char name[RW_NAME_MAX];
    unsigned off = 0;
    size_t o;

    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_CallExpr)
        return CXChildVisit_Recurse;
    f = rw_callee(c, name, sizeof name);
    if (clang_Cursor_isNull(f))
        return CXChildVisit_Recurse;
    if (!rw_in_list(name, x->r->redirected))
        return CXChildVisit_Recurse;
    clang_getExpansionLocation(clang_getCursorLocation(c), &file, NULL, NULL, &off);
    if (file && clang_File_isEqual(file, x->t->file) && rw_orig_off(x->r->segs, off, &o) == 0)
        x->st = rw_fail(x->err, x->cap, RW_ERR_REFUSED,
                        "%s calls %s at line %u where the redirecting macro is not defined "
                        "(an #undef in the kernel)",
                        x->r->from, name, rw_line(x->r->orig, (unsigned)o));
    else
        x->st = rw_fail(x->err, x->cap, RW_ERR_REFUSED,
                        "%s calls %s where the redirecting macro is not defined", x->r->from,
                        name);
    return CXChildVisit_Break;
}

rw_status rw_check(const rw_check_req *r, char *err, size_t cap)
{
    rw_tu t;
    rw_kernel *k = NULL;
    char msg[1024];
    rw_status st;

    st = rw_tu_parse(&t, r->src, r->len, r->args, r->nargs, msg, sizeof msg);
    if (st == RW_ERR_PARSE && t.file) {
        /* a macro that changed meaning explains an error best */
        rw_status mst = rw_check_macros(r, &t, err, cap);
        if (mst != RW_OK) {
            st = mst;
            goto out;
        }
    }
    if (st == RW_ERR_PARSE) {
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "the generated kernel does not parse: %s", msg);
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
    st = rw_kernel_find(&t, r->name, k, msg, sizeof msg);
    if (st != RW_OK) {
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "the generated kernel: %s", msg);
        goto out;
    }
    if (k->np != r->nparams || k->start < r->gen_off) {
        st = rw_fail(err, cap, RW_ERR_INTERNAL,
                     "the generated kernel has %u parameters where %u were generated", k->np,
                     r->nparams);
        goto out;
    }
    st = rw_check_skipped(r, &t, err, cap);
    if (st == RW_OK)
        st = rw_check_macros(r, &t, err, cap);
    if (st == RW_OK && r->redirected) {
        rw_left x = { r, &t, RW_OK, err, cap };
        clang_visitChildren(k->body, rw_visit_left, &x);
        st = x.st;
    }
out:
    free(k);
    rw_tu_close(&t);
    return st;
}
