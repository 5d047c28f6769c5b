/* rw_pos.c — questions about positions in a parsed program: file offsets
 * of cursors, lines, macro invocations around a position, inactive
 * branches, tokens, and what a macro's definition may do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

/* ----------------------------------------------------------- positions */

/* libclang's "spelling" location is the file location: a token of a macro
 * argument where it is written, a token of a macro body at the start
 * (range ends: the end) of the invocation. */
static int rw_off(const rw_tu *t, CXSourceLocation l, unsigned *off)
{
    CXFile f = NULL;

    clang_getSpellingLocation(l, &f, NULL, NULL, off);
    return f && clang_File_isEqual(f, t->file) && *off <= t->len ? 0 : -1;
}

int rw_extent(const rw_tu *t, CXCursor c, unsigned *start, unsigned *end)
{
    CXSourceRange r = clang_getCursorExtent(c);

    if (rw_off(t, clang_getRangeStart(r), start) < 0 || rw_off(t, clang_getRangeEnd(r), end) < 0 ||
        *end < *start)
        return -1;
    return 0;
}

unsigned rw_line(const rw_tu *t, unsigned off)
{
    unsigned line = 0;

    clang_getSpellingLocation(clang_getLocationForOffset(t->tu, t->file, off), NULL, &line, NULL,
                              NULL);
    return line;
}

const rw_macro *rw_macro_edge(const rw_tu *t, unsigned start, unsigned end)
{
    size_t i;

    for (i = 0; i < t->nmx; i++)
        if (t->mx[i].start == start || t->mx[i].end == end)
            return &t->mx[i];
    return NULL;
}

const rw_macro *rw_macro_crossing(const rw_tu *t, unsigned start, unsigned end)
{
    size_t i;

    for (i = 0; i < t->nmx; i++) {
        const rw_macro *m = &t->mx[i];
        int overlap = m->start < end && start < m->end;
        int inside = start > m->start && end < m->end;
        int contains = start <= m->start && m->end <= end;
        if (overlap && !inside && !contains)
            return m;
    }
    return NULL;
}

static int rw_mdef_name_cmp(const void *a, const void *b)
{
    return strcmp(((const rw_mdef *)a)->name, ((const rw_mdef *)b)->name);
}

/* 1 when definition @p def, or one of the macros its replacement names,
 * holds an operator that assigns, increments or decrements (or with @p amp
 * an '&'). */
static int rw_def_assigns(const rw_tu *t, CXCursor def, int amp, unsigned depth)
{
    static const char *const ops[] = {
        "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--", "&",
    };
    size_t nops = sizeof ops / sizeof ops[0] - (amp ? 0 : 1);
    CXToken *toks = NULL;
    unsigned n = 0, i;
    int bad = 0;

    if (depth > 8)
        return 1;
    clang_tokenize(t->tu, clang_getCursorExtent(def), &toks, &n);
    for (i = 1; i < n && !bad; i++) {   /* toks[0]: the macro's own name */
        char sp[64];
        rw_mdef key, *d;
        rw_cxcopy(clang_getTokenSpelling(t->tu, toks[i]), sp, sizeof sp);
        if (clang_getTokenKind(toks[i]) == CXToken_Punctuation) {
            bad = rw_in_set(sp, ops, nops);
            continue;
        }
        if (clang_getTokenKind(toks[i]) != CXToken_Identifier)
            continue;
        memcpy(key.name, sp, sizeof key.name);
        d = bsearch(&key, t->defs, t->ndefs, sizeof *t->defs, rw_mdef_name_cmp);
        while (d && d > t->defs && !strcmp(d[-1].name, sp))
            d--;   /* every definition of that name */
        for (; d && d < t->defs + t->ndefs && !strcmp(d->name, sp) && !bad; d++)
            if (!clang_equalCursors(d->c, def))
                bad = rw_def_assigns(t, d->c, amp, depth + 1);
    }
    if (toks)
        clang_disposeTokens(t->tu, toks, n);
    return bad;
}

int rw_macro_assigns(const rw_tu *t, unsigned off, int amp)
{
    const rw_macro *m = NULL;
    CXCursor c, def;
    size_t i;

    for (i = 0; i < t->nmx; i++) {
        if (t->mx[i].start == off) {
            m = &t->mx[i];
            break;
        }
        if (t->mx[i].start < off && off < t->mx[i].end &&
            (!m || t->mx[i].end - t->mx[i].start < m->end - m->start))
            m = &t->mx[i];
    }
    if (!m)
        return 1;
    c = clang_getCursor(t->tu, clang_getLocationForOffset(t->tu, t->file, m->start));
    if (clang_getCursorKind(c) != CXCursor_MacroExpansion)
        return 1;
    def = clang_getCursorReferenced(c);
    if (clang_Cursor_isNull(def) || clang_getCursorKind(def) != CXCursor_MacroDefinition)
        return 1;
    return rw_def_assigns(t, def, amp, 0);
}

int rw_skipped_in(const rw_tu *t, unsigned start, unsigned end)
{
    unsigned i, s, e;

    if (!t->skipped)
        return 0;
    for (i = 0; i < t->skipped->count; i++) {
        CXSourceRange r = t->skipped->ranges[i];
        if (rw_off(t, clang_getRangeStart(r), &s) < 0 || rw_off(t, clang_getRangeEnd(r), &e) < 0)
            continue;
        if (s < end && start < e)
            return 1;
    }
    return 0;
}

int rw_skipped_range(const rw_tu *t, unsigned i, unsigned *start, unsigned *end)
{
    CXSourceRange r;

    if (!t->skipped || i >= t->skipped->count)
        return -1;
    r = t->skipped->ranges[i];
    if (rw_off(t, clang_getRangeStart(r), start) < 0 || rw_off(t, clang_getRangeEnd(r), end) < 0)
        return -1;
    return 0;
}

static CXSourceRange rw_range(const rw_tu *t, unsigned start, unsigned end)
{
    return clang_getRange(clang_getLocationForOffset(t->tu, t->file, start),
                          clang_getLocationForOffset(t->tu, t->file, end));
}

int rw_one_token(const rw_tu *t, unsigned start, unsigned end, char *buf, size_t cap,
                 unsigned *tok_end)
{
    CXToken *toks = NULL;
    unsigned n = 0, i, found = 0, s, e;

    if (end <= start)
        return 0;
    clang_tokenize(t->tu, rw_range(t, start, end), &toks, &n);
    for (i = 0; i < n; i++) {
        CXSourceRange r = clang_getTokenExtent(t->tu, toks[i]);
        if (rw_off(t, clang_getRangeStart(r), &s) < 0 || rw_off(t, clang_getRangeEnd(r), &e) < 0 ||
            s < start || s >= end)
            continue;
        if (found++ == 0) {
            rw_cxcopy(clang_getTokenSpelling(t->tu, toks[i]), buf, cap);
            *tok_end = e;
        }
    }
    if (toks)
        clang_disposeTokens(t->tu, toks, n);
    return found == 1;
}

int rw_token_is(const rw_tu *t, unsigned off, const char *name)
{
    CXToken *tok = clang_getToken(t->tu, clang_getLocationForOffset(t->tu, t->file, off));
    char sp[RW_NAME_MAX];
    unsigned s;
    int ok;

    if (!tok)
        return 0;
    rw_cxcopy(clang_getTokenSpelling(t->tu, *tok), sp, sizeof sp);
    ok = (clang_getTokenKind(*tok) == CXToken_Identifier ||
          clang_getTokenKind(*tok) == CXToken_Keyword) &&
         !strcmp(sp, name) &&
         rw_off(t, clang_getRangeStart(clang_getTokenExtent(t->tu, *tok)), &s) == 0 && s == off;
    clang_disposeTokens(t->tu, tok, 1);
    return ok;
}

rw_status rw_idents(const rw_tu *t, rw_names *set)
{
    CXToken *toks = NULL;
    unsigned n = 0, i;
    rw_status st = RW_OK;

    clang_tokenize(t->tu, rw_range(t, 0, (unsigned)t->len), &toks, &n);
    for (i = 0; i < n && st == RW_OK; i++) {
        char sp[RW_NAME_MAX];
        if (clang_getTokenKind(toks[i]) != CXToken_Identifier)
            continue;
        rw_cxcopy(clang_getTokenSpelling(t->tu, toks[i]), sp, sizeof sp);
        st = rw_names_add(set, sp);
    }
    if (toks)
        clang_disposeTokens(t->tu, toks, n);
    rw_names_seal(set);
    return st;
}
