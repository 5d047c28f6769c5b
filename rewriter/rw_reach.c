/* rw_reach.c — the functions a kernel reaches through calls (directly or
 * through one another), wherever they are defined outside the system
 * headers, and whether one of them calls a given builtin. A
 * partition-ready kernel (rw_part.c) redirects the builtins only where
 * its own body calls them; a copy in another function would still
 * describe the part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

typedef struct rw_reach {
    const rw_tu *t;
    const char *const *names;
    size_t n;
    CXCursor fns[RW_MAX_HELPERS];   /* definitions reached, in the order met */
    unsigned nfns;
    const char *fn;                 /* the function being walked; NULL: the kernel */
    rw_status st;
    char *err;
    size_t cap;
} rw_reach;

/* "line 12" in the program, "util.h:12" in another file. */
static void rw_where(const rw_tu *t, CXCursor c, char *buf, size_t cap)
{
    CXFile f = NULL;
    unsigned line = 0;

    clang_getExpansionLocation(clang_getCursorLocation(c), &f, &line, NULL, NULL);
    if (!f || clang_File_isEqual(f, t->file)) {
        snprintf(buf, cap, "line %u", line);
    } else {
        char name[RW_NAME_MAX];
        const char *base;
        rw_cxcopy(clang_getFileName(f), name, sizeof name);
        base = strrchr(name, '/');
        snprintf(buf, cap, "%s:%u", base ? base + 1 : name, line);
    }
}

static enum CXChildVisitResult rw_visit_reach(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_reach *r = d;
    CXCursor f, def;
    char name[RW_NAME_MAX], where[RW_NAME_MAX + 16];
    unsigned i;

    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_CallExpr)
        return CXChildVisit_Recurse;
    f = rw_callee(c, name, sizeof name);
    if (clang_Cursor_isNull(f))
        return CXChildVisit_Recurse;
    if (r->fn && rw_in_set(name, r->names, r->n)) {
        rw_where(r->t, c, where, sizeof where);
        r->st = rw_fail(r->err, r->cap, RW_ERR_REFUSED,
                        "helper %s calls %s (%s): only calls in the kernel's own body are "
                        "redirected",
                        r->fn, name, where);
        return CXChildVisit_Break;
    }
    def = clang_getCursorDefinition(f);
    if (clang_Cursor_isNull(def) || clang_Location_isInSystemHeader(clang_getCursorLocation(def)))
        return CXChildVisit_Recurse;
    for (i = 0; i < r->nfns; i++)
        if (clang_equalCursors(r->fns[i], def))
            return CXChildVisit_Recurse;
    if (r->nfns == RW_MAX_HELPERS) {
        r->st = rw_fail(r->err, r->cap, RW_ERR_REFUSED, "the kernel reaches more than %u functions",
                        RW_MAX_HELPERS);
        return CXChildVisit_Break;
    }
    r->fns[r->nfns++] = def;
    return CXChildVisit_Recurse;
}

rw_status rw_reach_check(const rw_tu *t, const rw_kernel *k, const char *const *names, size_t n,
                         char *err, size_t cap)
{
    static rw_reach zero;
    rw_reach *r = malloc(sizeof *r);
    char fn[RW_NAME_MAX];
    rw_status st;
    unsigned h;

    if (!r)
        return RW_ERR_NOMEM;
    *r = zero;
    r->t = t;
    r->names = names;
    r->n = n;
    r->err = err;
    r->cap = cap;
    clang_visitChildren(k->body, rw_visit_reach, r);
    /* every function reached, also those found on the way (nfns grows) */
    for (h = 0; r->st == RW_OK && h < r->nfns; h++) {
        rw_cxcopy(clang_getCursorSpelling(r->fns[h]), fn, sizeof fn);
        r->fn = fn;
        clang_visitChildren(r->fns[h], rw_visit_reach, r);
    }
    st = r->st;
    free(r);
    return st;
}
