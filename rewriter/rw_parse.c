/* rw_parse.c — parses a program with libclang the way the analyzer
 * compiles it (-x cl, spir64, the default OpenCL header, -cl-std=CL1.2
 * unless the options name another), from the build options that matter
 * to the parse; records its macro expansions and definitions and its
 * inactive branches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

#ifndef RW_CLANG_INCLUDE
#define RW_CLANG_INCLUDE "/usr/lib/llvm-16/lib/clang/16/include"
#endif

/* ------------------------------------------------------ build options */

/* Flags passed as they are: each may define a macro the program tests. */
static const char *const rw_cl_flags[] = {
    "-cl-single-precision-constant", "-cl-denorms-are-zero",
    "-cl-fp32-correctly-rounded-divide-sqrt", "-cl-mad-enable", "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations", "-cl-finite-math-only", "-cl-fast-relaxed-math",
    "-cl-uniform-work-group-size",
};
static const char *const rw_cl_stds[] = {
    "CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0", "cl1.0", "cl1.1", "cl1.2", "cl2.0", "cl3.0",
};

/* Splits @p opts like a shell without expansions into NUL-terminated
 * tokens appended to @p toks; returns their count. */
static int rw_tokenize_options(const char *opts, rw_buf *toks)
{
    const char *p = opts;
    int count = 0;

    while (*p) {
        int have = 0;
        char quote = 0;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        while (*p && (quote || !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))) {
            if (!quote && (*p == '"' || *p == '\'')) {
                quote = *p++;
                have = 1;
                continue;
            }
            if (quote && *p == quote) {
                quote = 0;
                p++;
                continue;
            }
            if (*p == '\\' && p[1] && quote != '\'')
                p++;
            rw_buf_add(toks, p, 1);
            have = 1;
            p++;
        }
        if (have) {
            rw_buf_add(toks, "", 1);
            count++;
        }
    }
    return count;
}

static void rw_arg(rw_buf *a, int *n, const char *s)
{
    rw_buf_add(a, s, strlen(s) + 1);
    (*n)++;
}

rw_status rw_parse_args(const char *options, char **args, int *nargs, char *err, size_t cap)
{
    static const char *const fixed[] = {
        "-x", "cl", "-target", "spir64", "-Xclang", "-finclude-default-header",
        "-isystem", RW_CLANG_INCLUDE, "-w",
    };
    rw_buf toks = { 0 }, a = { 0 };
    const char *t, *std = "-cl-std=CL1.2";
    int n, i, count = 0;
    size_t k;
    rw_status st = RW_OK;

    *args = NULL;
    *nargs = 0;
    if (options && strnlen(options, RW_MAX_OPTIONS + 1) > RW_MAX_OPTIONS)
        return rw_fail(err, cap, RW_ERR_ARG, "build options too long (over %u bytes)",
                       RW_MAX_OPTIONS);
    n = rw_tokenize_options(options ? options : "", &toks);
    if (toks.oom)
        return RW_ERR_NOMEM;
    for (k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        rw_arg(&a, &count, fixed[k]);
    for (i = 0, t = toks.s; i < n; i++, t += strlen(t) + 1) {
        if ((!strcmp(t, "-D") || !strcmp(t, "-U") || !strcmp(t, "-I")) && i + 1 < n) {
            /* a separate value joins its flag: it can never be read as an option */
            const char *v = t + strlen(t) + 1;
            rw_buf_add(&a, t, 2);
            rw_arg(&a, &count, v);
            t = v;
            i++;
        } else if ((!strncmp(t, "-D", 2) || !strncmp(t, "-U", 2) || !strncmp(t, "-I", 2)) &&
                   t[2]) {
            rw_arg(&a, &count, t);
        } else if (!strncmp(t, "-cl-std=", 8)) {
            if (!rw_in_set(t + 8, rw_cl_stds, sizeof rw_cl_stds / sizeof rw_cl_stds[0])) {
                st = rw_fail(err, cap, RW_ERR_REFUSED,
                             "build option %.64s: only OpenCL C 1.0 to 3.0 is rewritten", t);
                goto out;
            }
            std = t;
        } else if (!strncmp(t, "-cl-ext=", 8) ||
                   rw_in_set(t, rw_cl_flags, sizeof rw_cl_flags / sizeof rw_cl_flags[0])) {
            rw_arg(&a, &count, t);
        }   /* everything else does not change what the program means */
    }
    rw_arg(&a, &count, std);
    if (a.oom) {
        st = RW_ERR_NOMEM;
        goto out;
    }
    *args = a.s;
    a.s = NULL;
    *nargs = count;
out:
    rw_buf_free(&toks);
    rw_buf_free(&a);
    return st;
}

/* ------------------------------------------------------------- parsing */

static unsigned long long rw_hash(const char *s, unsigned long long h)
{
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static int rw_macro_cmp(const void *a, const void *b)
{
    const rw_macro *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

typedef struct rw_mx_ctx {
    rw_tu *t;
    size_t cap, dcap;
    int oom;
} rw_mx_ctx;

static int rw_mdef_cmp(const void *a, const void *b)
{
    return strcmp(((const rw_mdef *)a)->name, ((const rw_mdef *)b)->name);
}

static void rw_add_def(rw_mx_ctx *x, CXCursor c)
{
    rw_tu *t = x->t;

    if (t->ndefs == x->dcap) {
        size_t cap = x->dcap ? x->dcap * 2 : 256;
        rw_mdef *v = realloc(t->defs, cap * sizeof *v);
        if (!v) {
            x->oom = 1;
            return;
        }
        t->defs = v;
        x->dcap = cap;
    }
    rw_cxcopy(clang_getCursorSpelling(c), t->defs[t->ndefs].name, sizeof t->defs[0].name);
    t->defs[t->ndefs++].c = c;
}

/* The identity of the definition an expansion uses: where it is (file and
 * offset), or only the name for the compiler's own macros. */
static unsigned long long rw_macro_def(CXCursor exp, const char *name)
{
    CXCursor def = clang_getCursorReferenced(exp);
    CXFile f = NULL;
    unsigned off = 0;
    unsigned long long h = 14695981039346656037ull;

    if (!clang_Cursor_isNull(def) && clang_getCursorKind(def) == CXCursor_MacroDefinition)
        clang_getExpansionLocation(clang_getCursorLocation(def), &f, NULL, NULL, &off);
    if (f) {
        CXString fn = clang_getFileName(f);
        const char *s = clang_getCString(fn);
        h = rw_hash(s ? s : "", h);
        clang_disposeString(fn);
        return (h ^ off) * 1099511628211ull;
    }
    return rw_hash(name, rw_hash("<built-in>", h));
}

static enum CXChildVisitResult rw_visit_macros(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_mx_ctx *x = d;
    rw_tu *t = x->t;
    rw_macro *m;
    unsigned s, e;

    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_MacroDefinition) {
        rw_add_def(x, c);
        return x->oom ? CXChildVisit_Break : CXChildVisit_Continue;
    }
    if (clang_getCursorKind(c) != CXCursor_MacroExpansion || rw_extent(t, c, &s, &e) < 0)
        return CXChildVisit_Continue;
    if (t->nmx == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        rw_macro *v = realloc(t->mx, cap * sizeof *v);
        if (!v) {
            x->oom = 1;
            return CXChildVisit_Break;
        }
        t->mx = v;
        x->cap = cap;
    }
    m = &t->mx[t->nmx++];
    memset(m, 0, sizeof *m);
    m->start = s;
    m->end = e;
    rw_cxcopy(clang_getCursorSpelling(c), m->name, sizeof m->name);
    m->def = rw_macro_def(c, m->name);
    return CXChildVisit_Continue;
}

rw_status rw_tu_parse(rw_tu *t, const char *src, size_t len, const char *args, int nargs,
                      char *err, size_t cap)
{
    struct CXUnsavedFile uf;
    const char **argv = NULL;
    enum CXErrorCode ec;
    rw_mx_ctx x = { t, 0, 0, 0 };
    const char *a = args;
    unsigned nd, i;
    rw_status st = RW_OK;
    int k;

    memset(t, 0, sizeof *t);
    t->src = src;
    t->len = len;
    argv = calloc((size_t)nargs + 1, sizeof *argv);
    if (!argv)
        return RW_ERR_NOMEM;
    for (k = 0; k < nargs; k++, a += strlen(a) + 1)
        argv[k] = a;
    uf.Filename = RW_FILE;
    uf.Contents = src;
    uf.Length = (unsigned long)len;
    t->idx = clang_createIndex(0, 0);
    if (!t->idx) {
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "libclang: cannot create an index");
        goto out;
    }
    ec = clang_parseTranslationUnit2(t->idx, RW_FILE, argv, nargs, &uf, 1,
                                     CXTranslationUnit_DetailedPreprocessingRecord, &t->tu);
    if (ec != CXError_Success || !t->tu) {
        t->tu = NULL;
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "libclang could not parse the program (error %d)",
                     (int)ec);
        goto out;
    }
    nd = clang_getNumDiagnostics(t->tu);
    for (i = 0; i < nd && st == RW_OK; i++) {
        CXDiagnostic dg = clang_getDiagnostic(t->tu, i);
        if (clang_getDiagnosticSeverity(dg) >= CXDiagnostic_Error) {
            char msg[1024];
            rw_cxcopy(clang_formatDiagnostic(dg, CXDiagnostic_DisplaySourceLocation |
                                                     CXDiagnostic_DisplayColumn),
                      msg, sizeof msg);
            st = rw_fail(err, cap, RW_ERR_PARSE, "%s", msg);
        }
        clang_disposeDiagnostic(dg);
    }
    /* with errors too: the check of a generated kernel looks at its macros first */
    t->file = clang_getFile(t->tu, RW_FILE);
    if (!t->file) {
        st = rw_fail(err, cap, RW_ERR_INTERNAL, "libclang lost the program's file");
        goto out;
    }
    clang_visitChildren(clang_getTranslationUnitCursor(t->tu), rw_visit_macros, &x);
    if (x.oom) {
        st = RW_ERR_NOMEM;
        goto out;
    }
    if (t->nmx > 1)
        qsort(t->mx, t->nmx, sizeof *t->mx, rw_macro_cmp);
    if (t->ndefs > 1)
        qsort(t->defs, t->ndefs, sizeof *t->defs, rw_mdef_cmp);
    t->skipped = clang_getSkippedRanges(t->tu, t->file);
out:
    free(argv);
    return st;
}

void rw_tu_close(rw_tu *t)
{
    if (!t)
        return;
    if (t->skipped)
        clang_disposeSourceRangeList(t->skipped);
    if (t->tu)
        clang_disposeTranslationUnit(t->tu);
    if (t->idx)
        clang_disposeIndex(t->idx);
    free(t->mx);
    free(t->defs);
    memset(t, 0, sizeof *t);
}
