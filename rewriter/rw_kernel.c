/* rw_kernel.c — finds a kernel's definition in a parsed program: its
 * parameters (declaration text, name), its attributes, its body. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

typedef struct rw_find {
    const char *name;
    CXCursor def;
    int have_def, have_decl;
} rw_find;

static enum CXChildVisitResult rw_visit_find(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_find *f = d;
    char name[RW_NAME_MAX];

    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl)
        return CXChildVisit_Continue;
    rw_cxcopy(clang_getCursorSpelling(c), name, sizeof name);
    if (strcmp(name, f->name))
        return CXChildVisit_Continue;
    if (clang_isCursorDefinition(c)) {
        f->def = c;
        f->have_def = 1;
        return CXChildVisit_Break;
    }
    f->have_decl = 1;
    return CXChildVisit_Continue;
}

/* 1 when the macro invoked at @p off is defined as the one token __kernel
 * (or kernel). */
static int rw_macro_is_kernel(const rw_tu *t, unsigned off)
{
    CXCursor c = clang_getCursor(t->tu, clang_getLocationForOffset(t->tu, t->file, off));
    CXCursor def;
    CXToken *toks = NULL;
    unsigned n = 0;
    int ok = 0;

    if (clang_getCursorKind(c) != CXCursor_MacroExpansion)
        return 0;
    def = clang_getCursorReferenced(c);
    if (clang_Cursor_isNull(def) || clang_getCursorKind(def) != CXCursor_MacroDefinition)
        return 0;
    clang_tokenize(t->tu, clang_getCursorExtent(def), &toks, &n);
    if (n == 2) {   /* the macro's name, then its replacement */
        char sp[32];
        rw_cxcopy(clang_getTokenSpelling(t->tu, toks[1]), sp, sizeof sp);
        ok = !strcmp(sp, "__kernel") || !strcmp(sp, "kernel");
    }
    if (toks)
        clang_disposeTokens(t->tu, toks, n);
    return ok;
}

/* The tokens of [start, end) joined by single spaces. */
static void rw_token_key(const rw_tu *t, unsigned start, unsigned end, char *buf, size_t cap)
{
    CXToken *toks = NULL;
    unsigned n = 0, i;
    size_t len = 0;
    CXSourceRange r = clang_getRange(clang_getLocationForOffset(t->tu, t->file, start),
                                     clang_getLocationForOffset(t->tu, t->file, end));

    buf[0] = '\0';
    clang_tokenize(t->tu, r, &toks, &n);
    for (i = 0; i < n && len + 1 < cap; i++) {
        char sp[RW_NAME_MAX];
        rw_cxcopy(clang_getTokenSpelling(t->tu, toks[i]), sp, sizeof sp);
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", sp);
    }
    if (toks)
        clang_disposeTokens(t->tu, toks, n);
}

typedef struct rw_kctx {
    const rw_tu *t;
    rw_kernel *k;
    int is_kernel;
    rw_status st;
    char *err;
    size_t cap;
} rw_kctx;

static enum CXChildVisitResult rw_visit_kernel(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_kctx *x = d;
    rw_kernel *k = x->k;
    enum CXCursorKind kind = clang_getCursorKind(c);
    unsigned s, e;
    char one[32];
    unsigned tend;

    (void)parent;
    if (kind == CXCursor_CompoundStmt) {
        k->body = c;
        if (rw_extent(x->t, c, &k->body_start, &k->body_end) < 0) {
            x->st = rw_fail(x->err, x->cap, RW_ERR_REFUSED,
                            "the body of %s is not in the program's text", k->name);
            return CXChildVisit_Break;
        }
        return CXChildVisit_Continue;
    }
    if (!clang_isAttribute(kind))
        return CXChildVisit_Continue;
    if (rw_extent(x->t, c, &s, &e) < 0) {
        x->st = rw_fail(x->err, x->cap, RW_ERR_REFUSED,
                        "an attribute of %s is not in the program's text", k->name);
        return CXChildVisit_Break;
    }
    if (rw_macro_edge(x->t, s, UINT_MAX)) {
        if (rw_macro_is_kernel(x->t, s)) {
            x->is_kernel = 1;
            return CXChildVisit_Continue;
        }
        x->st = rw_fail(x->err, x->cap, RW_ERR_REFUSED,
                        "an attribute of %s is spelled through a macro (line %u)", k->name,
                        rw_line(x->t, s));
        return CXChildVisit_Break;
    }
    if (rw_one_token(x->t, s, e, one, sizeof one, &tend) &&
        (!strcmp(one, "__kernel") || !strcmp(one, "kernel"))) {
        x->is_kernel = 1;
        return CXChildVisit_Continue;
    }
    if (rw_macro_edge(x->t, UINT_MAX, e) || rw_macro_crossing(x->t, s, e)) {
        x->st = rw_fail(x->err, x->cap, RW_ERR_REFUSED,
                        "an attribute of %s is spelled through a macro (line %u)", k->name,
                        rw_line(x->t, s));
        return CXChildVisit_Break;
    }
    if (k->na == RW_MAX_ATTRS) {
        x->st = rw_fail(x->err, x->cap, RW_ERR_REFUSED, "%s has more than %u attributes",
                        k->name, RW_MAX_ATTRS);
        return CXChildVisit_Break;
    }
    k->a[k->na].start = s;
    k->a[k->na].end = e;
    rw_token_key(x->t, s, e, k->a[k->na].key, sizeof k->a[k->na].key);
    k->na++;
    return CXChildVisit_Continue;
}

static rw_status rw_params(const rw_tu *t, rw_kernel *k, char *err, size_t cap)
{
    int n = clang_Cursor_getNumArguments(k->fn);
    int i;

    if (n < 0)
        return rw_fail(err, cap, RW_ERR_INTERNAL, "libclang gives no parameters for %s", k->name);
    if (n > (int)RW_MAX_PARAMS)
        return rw_fail(err, cap, RW_ERR_REFUSED, "%s has more than %u parameters", k->name,
                       RW_MAX_PARAMS);
    k->np = (unsigned)n;
    for (i = 0; i < n; i++) {
        rw_param *p = &k->p[i];
        CXFile f = NULL;
        p->c = clang_Cursor_getArgument(k->fn, (unsigned)i);
        rw_cxcopy(clang_getCursorSpelling(p->c), p->name, sizeof p->name);
        if (!p->name[0])
            return rw_fail(err, cap, RW_ERR_REFUSED, "parameter %d of %s has no name", i,
                           k->name);
        if (strlen(p->name) > RW_NAME_MAX - 16)
            return rw_fail(err, cap, RW_ERR_REFUSED, "parameter %d of %s: name too long", i,
                           k->name);
        /* the declaration's text, and its name where the cursor's location is */
        clang_getSpellingLocation(clang_getCursorLocation(p->c), &f, NULL, NULL, &p->name_off);
        if (rw_extent(t, p->c, &p->start, &p->end) < 0 || !f || !clang_File_isEqual(f, t->file))
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "parameter %s of %s is not in the program's text", p->name, k->name);
        if (rw_macro_crossing(t, p->start, p->end))
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "parameter %s of %s is declared across a macro (line %u)", p->name,
                           k->name, rw_line(t, p->start));
    }
    return RW_OK;
}

rw_status rw_kernel_find(const rw_tu *t, const char *name, rw_kernel *k, char *err, size_t cap)
{
    rw_find f;
    rw_kctx x;

    memset(&f, 0, sizeof f);
    memset(k, 0, sizeof *k);
    f.name = name;
    snprintf(k->name, sizeof k->name, "%s", name);
    clang_visitChildren(clang_getTranslationUnitCursor(t->tu), rw_visit_find, &f);
    if (!f.have_def)
        return rw_fail(err, cap, RW_ERR_REFUSED,
                       f.have_decl ? "kernel %s is declared but not defined"
                                   : "kernel %s not found", name);
    k->fn = f.def;
    if (!clang_Location_isFromMainFile(clang_getCursorLocation(f.def)) ||
        rw_extent(t, f.def, &k->start, &k->end) < 0)
        return rw_fail(err, cap, RW_ERR_REFUSED, "kernel %s is not defined in the program's text",
                       name);
    memset(&x, 0, sizeof x);
    x.t = t;
    x.k = k;
    x.err = err;
    x.cap = cap;
    clang_visitChildren(f.def, rw_visit_kernel, &x);
    RW_FORWARD(x.st);
    if (!x.is_kernel)
        return rw_fail(err, cap, RW_ERR_REFUSED, "%s is a function, not a kernel", name);
    if (clang_Cursor_isNull(k->body) || clang_getCursorKind(k->body) != CXCursor_CompoundStmt)
        return rw_fail(err, cap, RW_ERR_REFUSED, "kernel %s has no body", name);
    if (rw_macro_crossing(t, k->body_start, k->body_end))
        return rw_fail(err, cap, RW_ERR_REFUSED, "the body of %s crosses a macro", name);
    return rw_params(t, k, err, cap);
}

int rw_param_as(const rw_kernel *k, unsigned i)
{
    CXType ty = clang_getCursorType(k->p[i].c);

    if (ty.kind != CXType_Pointer)
        return -1;
    return (int)clang_getAddressSpace(clang_getPointeeType(ty));
}
