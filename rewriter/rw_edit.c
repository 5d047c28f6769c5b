/* rw_edit.c — edits by source range (the positions come from cursors) and
 * their application to a stretch of the program. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/rw_int.h"

rw_status rw_edit_add(rw_edits *e, unsigned start, unsigned end, const char *text,
                      const char *check)
{
    rw_edit *x;

    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 32;
        rw_edit *v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return RW_ERR_NOMEM;
        e->v = v;
        e->cap = cap;
    }
    x = &e->v[e->n++];
    x->start = start;
    x->end = end;
    snprintf(x->check, sizeof x->check, "%s", check ? check : "");
    snprintf(x->text, sizeof x->text, "%s", text);
    return RW_OK;
}

void rw_edits_free(rw_edits *e)
{
    if (!e)
        return;
    free(e->v);
    memset(e, 0, sizeof *e);
}

void rw_segs_free(rw_segs *s)
{
    if (!s)
        return;
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* By start; at one start, insertions first, then the longest range. */
static int rw_edit_cmp(const void *a, const void *b)
{
    const rw_edit *x = *(const rw_edit *const *)a, *y = *(const rw_edit *const *)b;

    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if ((x->end == x->start) != (y->end == y->start))
        return x->end == x->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return 0;
}

static rw_status rw_copy(const rw_tu *t, unsigned from, unsigned to, rw_buf *out, rw_segs *segs)
{
    if (to <= from)
        return RW_OK;
    if (segs->n == segs->cap) {
        size_t cap = segs->cap ? segs->cap * 2 : 32;
        rw_seg *v = realloc(segs->v, cap * sizeof *v);
        if (!v)
            return RW_ERR_NOMEM;
        segs->v = v;
        segs->cap = cap;
    }
    segs->v[segs->n].orig = from;
    segs->v[segs->n].out = out->len;
    segs->v[segs->n].len = to - from;
    segs->n++;
    rw_buf_add(out, t->src + from, to - from);
    return out->oom ? RW_ERR_NOMEM : RW_OK;
}

/* A replaced range must start and end in the program's own text and hold
 * whole macro invocations or lie inside one invocation's arguments; a
 * rename must find its identifier there. */
static rw_status rw_edit_valid(const rw_tu *t, const rw_edit *x, const char *what, char *err,
                               size_t cap)
{
    const rw_macro *m;

    if (x->end == x->start)
        return RW_OK;   /* insertions go right after a token of the program's text */
    m = rw_macro_edge(t, x->start, x->end);
    if (!m)
        m = rw_macro_crossing(t, x->start, x->end);
    if (m)
        return rw_fail(err, cap, RW_ERR_REFUSED,
                       "%s: line %u cannot be rewritten: the code to change there comes from "
                       "macro %s",
                       what, rw_line(t, x->start), m->name);
    if (x->check[0] &&
        (x->end - x->start != strlen(x->check) || !rw_token_is(t, x->start, x->check)))
        return rw_fail(err, cap, RW_ERR_REFUSED,
                       "%s: line %u cannot be rewritten: %s is not spelled there", what,
                       rw_line(t, x->start), x->check);
    return RW_OK;
}

rw_status rw_edits_apply(const rw_tu *t, rw_edits *e, unsigned from, unsigned to, rw_buf *out,
                         rw_segs *segs, const char *what, char *err, size_t cap)
{
    const rw_edit **v = NULL, *prev = NULL;
    size_t n = 0, i;
    unsigned pos = from, cover_s = UINT_MAX, cover_e = 0;
    rw_status st = RW_OK;

    if (e->n) {
        v = malloc(e->n * sizeof *v);
        if (!v)
            return RW_ERR_NOMEM;
    }
    for (i = 0; i < e->n; i++)
        if (e->v[i].start >= from && e->v[i].end <= to)
            v[n++] = &e->v[i];
    if (n > 1)
        qsort(v, n, sizeof *v, rw_edit_cmp);
    for (i = 0; i < n && st == RW_OK; i++) {
        const rw_edit *x = v[i];
        if (prev && prev->start == x->start && prev->end == x->end &&
            !strcmp(prev->text, x->text))
            continue;   /* the same node seen twice (a macro argument used twice) */
        prev = x;
        if (cover_s <= x->start && x->end <= cover_e && x->start < cover_e)
            continue;   /* inside a range already replaced */
        if (x->start < pos) {
            st = rw_fail(err, cap, RW_ERR_INTERNAL, "%s: overlapping edits at line %u", what,
                         rw_line(t, x->start));
            break;
        }
        st = rw_edit_valid(t, x, what, err, cap);
        if (st == RW_OK)
            st = rw_copy(t, pos, x->start, out, segs);
        if (st != RW_OK)
            break;
        rw_buf_adds(out, x->text);
        pos = x->end;
        if (x->end > x->start) {
            cover_s = x->start;
            cover_e = x->end;
        }
    }
    if (st == RW_OK)
        st = rw_copy(t, pos, to, out, segs);
    free(v);
    if (st == RW_OK && out->oom)
        st = RW_ERR_NOMEM;
    return st;
}

void rw_buf_program(rw_buf *b, const rw_tu *t)
{
    rw_buf_add(b, t->src, t->len);
    if (t->len && t->src[t->len - 1] != '\n')
        rw_buf_adds(b, "\n");
}

rw_status rw_kernel_head(const rw_tu *t, const rw_kernel *k, rw_edits *e, const char *name, rw_buf *b,
                         rw_segs *segs, char *err, size_t cap)
{
    rw_edits none = { 0 };
    unsigned i;

    rw_buf_adds(b, "__kernel ");
    for (i = 0; i < k->na; i++) {
        rw_buf_adds(b, "__attribute__((");
        RW_FORWARD(rw_edits_apply(t, e ? e : &none, k->a[i].start, k->a[i].end, b, segs, k->name, err, cap));
        rw_buf_adds(b, ")) ");
    }
    rw_buf_addf(b, "void %s(", name);
    return RW_OK;
}
