/* rw_util.c — status names, growable strings, identifiers and their sets. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

const char *rw_strerror(rw_status s)
{
    switch (s) {
    case RW_OK: return "ok";
    case RW_ERR_NOMEM: return "out of memory";
    case RW_ERR_ARG: return "invalid argument";
    case RW_ERR_PARSE: return "the program does not parse";
    case RW_ERR_REFUSED: return "the kernels cannot be rewritten this way";
    case RW_ERR_INTERNAL: return "internal rewriter error";
    }
    return "unknown status";
}

rw_status rw_fail(char *err, size_t cap, rw_status st, const char *fmt, ...)
{
    va_list ap;

    if (err && cap > 0) {
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* ------------------------------------------------------------- strings */

static int rw_buf_grow(rw_buf *b, size_t n)
{
    size_t cap;
    char *s;

    if (b->oom)
        return -1;
    if (b->len + n + 1 <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n + 1)
        cap *= 2;
    s = realloc(b->s, cap);
    if (!s) {
        free(b->s);
        memset(b, 0, sizeof *b);
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void rw_buf_add(rw_buf *b, const char *p, size_t n)
{
    if (rw_buf_grow(b, n) < 0)
        return;
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void rw_buf_adds(rw_buf *b, const char *s)
{
    rw_buf_add(b, s, strlen(s));
}

void rw_buf_addf(rw_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || rw_buf_grow(b, (size_t)n) < 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void rw_buf_free(rw_buf *b)
{
    if (!b)
        return;
    free(b->s);
    memset(b, 0, sizeof *b);
}

void rw_cxcopy(CXString s, char *buf, size_t cap)
{
    const char *c = clang_getCString(s);

    snprintf(buf, cap, "%s", c ? c : "");
    clang_disposeString(s);
}

CXCursor rw_callee(CXCursor c, char *name, size_t cap)
{
    CXCursor f = clang_getCursorReferenced(c);

    if (clang_Cursor_isNull(f))
        name[0] = '\0';
    else
        rw_cxcopy(clang_getCursorSpelling(f), name, cap);
    return f;
}

int rw_in_set(const char *s, const char *const *set, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!strcmp(s, set[i]))
            return 1;
    return 0;
}

/* --------------------------------------------------------- identifiers */

int rw_is_ident(const char *s)
{
    const char *p;

    if (!s || !*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_'))
            return 0;
    return 1;
}

rw_status rw_names_add(rw_names *s, const char *name)
{
    char *d;

    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return RW_ERR_NOMEM;
        s->v = v;
        s->cap = cap;
    }
    d = strdup(name);
    if (!d)
        return RW_ERR_NOMEM;
    s->v[s->n++] = d;
    return RW_OK;
}

static int rw_names_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void rw_names_seal(rw_names *s)
{
    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, rw_names_cmp);
}

int rw_names_has(const rw_names *s, const char *name)
{
    return s->n > 0 && bsearch(&name, s->v, s->n, sizeof *s->v, rw_names_cmp) != NULL;
}

void rw_names_free(rw_names *s)
{
    size_t i;

    if (!s)
        return;
    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

typedef struct rw_own {
    const char *const *set;
    size_t n;
    const char *name;          /* the first builtin the program defines itself */
    unsigned line;
} rw_own;

static enum CXChildVisitResult rw_visit_own(CXCursor c, CXCursor parent, CXClientData d)
{
    rw_own *o = d;
    char name[RW_NAME_MAX];
    size_t i;

    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c) ||
        clang_Location_isInSystemHeader(clang_getCursorLocation(c)))
        return CXChildVisit_Continue;
    rw_cxcopy(clang_getCursorSpelling(c), name, sizeof name);
    for (i = 0; i < o->n; i++)
        if (!strcmp(name, o->set[i])) {
            o->name = o->set[i];
            clang_getExpansionLocation(clang_getCursorLocation(c), NULL, &o->line, NULL, NULL);
            return CXChildVisit_Break;
        }
    return CXChildVisit_Continue;
}

rw_status rw_own_names(const rw_tu *t, const char *const *set, size_t n, const char *what, char *err,
                       size_t cap)
{
    rw_own o = { set, n, NULL, 0 };
    size_t i;

    for (i = 0; i < t->ndefs; i++)
        if (rw_in_set(t->defs[i].name, set, n)) {
            clang_getExpansionLocation(clang_getCursorLocation(t->defs[i].c), NULL, &o.line, NULL,
                                       NULL);
            return rw_fail(err, cap, RW_ERR_REFUSED,
                           "the program defines %s as a macro (line %u): the %s redefines it",
                           t->defs[i].name, o.line, what);
        }
    clang_visitChildren(clang_getTranslationUnitCursor(t->tu), rw_visit_own, &o);
    if (o.name)
        return rw_fail(err, cap, RW_ERR_REFUSED, "the program defines its own %s (line %u): the %s redefines it",
                       o.name, o.line, what);
    return RW_OK;
}
