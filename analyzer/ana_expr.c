/* ana_expr.c — affine forms: canonical arithmetic (shared by libana.a and
 * libclrr-ana.so, see ana_kernel_int.h) and readable formatting. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/ana.h"
#include "analyzer/ana_kernel_int.h"

#define ANA_TMP_TERMS (ANA_MAX_TERMS * ANA_MAX_TERMS + 2 * ANA_MAX_TERMS)

static const ana_sym ana_sym_none = { ANA_SYM_NONE, 0 };

void ana_expr_set_const(ana_expr *e, int64_t c)
{
    memset(e, 0, sizeof *e);
    e->known = 1;
    if (c != 0) {
        e->nterms = 1;
        e->terms[0].coef = c;
    }
}

void ana_expr_set_sym(ana_expr *e, ana_sym s)
{
    memset(e, 0, sizeof *e);
    e->known = 1;
    e->nterms = 1;
    e->terms[0].coef = 1;
    e->terms[0].a = s;
}

void ana_expr_set_unknown(ana_expr *e, const char *reason)
{
    memset(e, 0, sizeof *e);
    e->reason = reason ? reason : "not affine";
}

static unsigned ana_term_degree(const ana_term *t)
{
    return (t->a.kind != ANA_SYM_NONE) + (t->b.kind != ANA_SYM_NONE);
}

static int ana_term_cmp(const ana_term *x, const ana_term *y)
{
    unsigned dx = ana_term_degree(x), dy = ana_term_degree(y);
    unsigned ax = ana_sym_order(x->a), ay = ana_sym_order(y->a);
    unsigned bx = ana_sym_order(x->b), by = ana_sym_order(y->b);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    if (ax != ay)
        return ax < ay ? -1 : 1;
    if (bx != by)
        return bx < by ? -1 : 1;
    return 0;
}

/* Orders a product's factors and moves a lone factor into a. */
static void ana_term_canon(ana_term *t)
{
    if (t->a.kind == ANA_SYM_NONE && t->b.kind != ANA_SYM_NONE) {
        t->a = t->b;
        t->b = ana_sym_none;
    } else if (t->b.kind != ANA_SYM_NONE && ana_sym_order(t->a) < ana_sym_order(t->b)) {
        ana_sym s = t->a;
        t->a = t->b;
        t->b = s;
    }
}

/* Builds the canonical form of @p n raw terms into @p dst. */
static int ana_expr_build(ana_expr *dst, ana_term *raw, unsigned n)
{
    unsigned i, j, out = 0;

    for (i = 0; i < n; i++)
        ana_term_canon(&raw[i]);
    /* insertion sort: n is small */
    for (i = 1; i < n; i++) {
        ana_term t = raw[i];
        for (j = i; j > 0 && ana_term_cmp(&raw[j - 1], &t) > 0; j--)
            raw[j] = raw[j - 1];
        raw[j] = t;
    }
    for (i = 0; i < n; i++) {
        if (out > 0 && ana_term_cmp(&raw[out - 1], &raw[i]) == 0) {
            if (__builtin_add_overflow(raw[out - 1].coef, raw[i].coef, &raw[out - 1].coef)) {
                ana_expr_set_unknown(dst, "coefficient overflow");
                return 0;
            }
        } else {
            raw[out++] = raw[i];
        }
        if (raw[out - 1].coef == 0)
            out--;
    }
    if (out > ANA_MAX_TERMS) {
        ana_expr_set_unknown(dst, "too many terms");
        return 0;
    }
    memset(dst, 0, sizeof *dst);
    dst->known = 1;
    dst->nterms = out;
    memcpy(dst->terms, raw, out * sizeof raw[0]);
    return 1;
}

int ana_expr_add(ana_expr *dst, const ana_expr *a, const ana_expr *b, int64_t scale)
{
    ana_term raw[ANA_TMP_TERMS];
    unsigned n = 0, i;

    if (!a->known || !b->known) {
        ana_expr_set_unknown(dst, !a->known ? a->reason : b->reason);
        return 0;
    }
    for (i = 0; i < a->nterms; i++)
        raw[n++] = a->terms[i];
    for (i = 0; i < b->nterms; i++) {
        raw[n] = b->terms[i];
        if (__builtin_mul_overflow(b->terms[i].coef, scale, &raw[n].coef)) {
            ana_expr_set_unknown(dst, "coefficient overflow");
            return 0;
        }
        n++;
    }
    return ana_expr_build(dst, raw, n);
}

int ana_expr_scale(ana_expr *dst, const ana_expr *a, int64_t scale)
{
    ana_expr zero;
    ana_expr_set_const(&zero, 0);
    return ana_expr_add(dst, &zero, a, scale);
}

int ana_expr_const_value(const ana_expr *e, int64_t *c)
{
    if (!e->known)
        return 0;
    if (e->nterms == 0) {
        *c = 0;
        return 1;
    }
    if (e->nterms == 1 && e->terms[0].a.kind == ANA_SYM_NONE) {
        *c = e->terms[0].coef;
        return 1;
    }
    return 0;
}

int ana_expr_mul(ana_expr *dst, const ana_expr *a, const ana_expr *b)
{
    ana_term raw[ANA_TMP_TERMS];
    unsigned n = 0, i, j;
    int64_t c;

    if (!a->known || !b->known) {
        ana_expr_set_unknown(dst, !a->known ? a->reason : b->reason);
        return 0;
    }
    if (ana_expr_const_value(a, &c))
        return ana_expr_scale(dst, b, c);
    if (ana_expr_const_value(b, &c))
        return ana_expr_scale(dst, a, c);
    for (i = 0; i < a->nterms; i++) {
        for (j = 0; j < b->nterms; j++) {
            const ana_term *x = &a->terms[i], *y = &b->terms[j];
            ana_term *t = &raw[n];
            if (ana_term_degree(x) + ana_term_degree(y) > 2) {
                ana_expr_set_unknown(dst, "product of more than two symbols");
                return 0;
            }
            if (__builtin_mul_overflow(x->coef, y->coef, &t->coef)) {
                ana_expr_set_unknown(dst, "coefficient overflow");
                return 0;
            }
            {
                ana_sym f[4];
                unsigned nf = 0;
                if (x->a.kind != ANA_SYM_NONE) f[nf++] = x->a;
                if (x->b.kind != ANA_SYM_NONE) f[nf++] = x->b;
                if (y->a.kind != ANA_SYM_NONE) f[nf++] = y->a;
                if (y->b.kind != ANA_SYM_NONE) f[nf++] = y->b;
                t->a = nf > 0 ? f[0] : ana_sym_none;
                t->b = nf > 1 ? f[1] : ana_sym_none;
            }
            n++;
        }
    }
    return ana_expr_build(dst, raw, n);
}

int ana_expr_equal(const ana_expr *a, const ana_expr *b)
{
    unsigned i;
    if (!a->known || !b->known || a->nterms != b->nterms)
        return 0;
    for (i = 0; i < a->nterms; i++)
        if (a->terms[i].coef != b->terms[i].coef ||
            ana_term_cmp(&a->terms[i], &b->terms[i]) != 0)
            return 0;
    return 1;
}

int ana_expr_uses(const ana_expr *e, ana_sym s)
{
    unsigned i;
    for (i = 0; e->known && i < e->nterms; i++)
        if ((e->terms[i].a.kind == s.kind && e->terms[i].a.index == s.index) ||
            (e->terms[i].b.kind == s.kind && e->terms[i].b.index == s.index))
            return 1;
    return 0;
}

/* ------------------------------------------------------------ formatting */

/* snprintf-like appender: writes what fits, counts everything. */
typedef struct ana_sbuf {
    char *dst;
    size_t cap, len;
} ana_sbuf;

static void ana_sbuf_printf(ana_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *at = b->len < b->cap ? b->dst + b->len : NULL;
    size_t room = b->len < b->cap ? b->cap - b->len : 0;

    va_start(ap, fmt);
    n = vsnprintf(at, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->len += (size_t)n;
}

static void ana_sym_print(ana_sbuf *b, const ana_kernel *k, ana_sym s)
{
    static const char *const id_names[] = {
        [ANA_SYM_GLOBAL_ID] = "gid", [ANA_SYM_LOCAL_ID] = "lid", [ANA_SYM_GROUP_ID] = "grp",
        [ANA_SYM_GLOBAL_SIZE] = "gsz", [ANA_SYM_LOCAL_SIZE] = "lsz",
        [ANA_SYM_NUM_GROUPS] = "ngrp", [ANA_SYM_GLOBAL_OFFSET] = "goff",
    };
    if (s.kind >= ANA_SYM_GLOBAL_ID && s.kind <= ANA_SYM_GLOBAL_OFFSET) {
        ana_sbuf_printf(b, "%s%u", id_names[s.kind], s.index);
    } else if (s.kind == ANA_SYM_ARG) {
        if (k && s.index < k->nargs && k->args[s.index].name && k->args[s.index].name[0])
            ana_sbuf_printf(b, "%s", k->args[s.index].name);
        else
            ana_sbuf_printf(b, "arg%u", s.index);
    } else if (s.kind == ANA_SYM_LOOP) {
        if (k && s.index < k->nloops && k->loops[s.index].name && k->loops[s.index].name[0])
            ana_sbuf_printf(b, "%s", k->loops[s.index].name);
        else
            ana_sbuf_printf(b, "loop%u", s.index);
    } else {
        ana_sbuf_printf(b, "?");
    }
}

/* Which terms ana_terms_print() prints. */
enum ana_side {
    ANA_SIDE_ALL,      /* every term, signed */
    ANA_SIDE_LEFT,     /* non-constant terms with a positive coefficient */
    ANA_SIDE_RIGHT     /* non-constant negative terms negated, then -constant */
};

static void ana_term_print(ana_sbuf *b, const ana_kernel *k, const ana_term *t, int neg,
                           unsigned printed)
{
    /* |coef| as unsigned survives INT64_MIN */
    uint64_t mag = t->coef < 0 ? 0 - (uint64_t)t->coef : (uint64_t)t->coef;
    if (printed == 0)
        ana_sbuf_printf(b, "%s", neg ? "-" : "");
    else
        ana_sbuf_printf(b, " %s ", neg ? "-" : "+");
    if (t->a.kind == ANA_SYM_NONE) {
        ana_sbuf_printf(b, "%llu", (unsigned long long)mag);
        return;
    }
    if (mag != 1)
        ana_sbuf_printf(b, "%llu*", (unsigned long long)mag);
    ana_sym_print(b, k, t->a);
    if (t->b.kind != ANA_SYM_NONE) {
        ana_sbuf_printf(b, "*");
        ana_sym_print(b, k, t->b);
    }
}

/* Prints the terms of @p e on @p side; returns how many it printed. */
static unsigned ana_terms_print(ana_sbuf *b, const ana_kernel *k, const ana_expr *e,
                                enum ana_side side)
{
    unsigned i, printed = 0;
    for (i = 0; i < e->nterms; i++) {
        const ana_term *t = &e->terms[i];
        int is_const = t->a.kind == ANA_SYM_NONE;
        switch (side) {
        case ANA_SIDE_ALL:
            ana_term_print(b, k, t, t->coef < 0, printed++);
            break;
        case ANA_SIDE_LEFT:
            if (!is_const && t->coef > 0)
                ana_term_print(b, k, t, 0, printed++);
            break;
        case ANA_SIDE_RIGHT:
            if (!is_const && t->coef < 0)
                ana_term_print(b, k, t, 0, printed++);
            break;
        }
    }
    if (side == ANA_SIDE_RIGHT && e->nterms > 0) {
        const ana_term *t = &e->terms[e->nterms - 1];
        if (t->a.kind == ANA_SYM_NONE)
            ana_term_print(b, k, t, t->coef > 0, printed++);
    }
    return printed;
}

int ana_expr_format(const ana_kernel *k, const ana_expr *e, char *dst, size_t dst_cap)
{
    ana_sbuf b = { dst, dst ? dst_cap : 0, 0 };
    if (b.cap)
        dst[0] = '\0';
    if (!e) {
        ana_sbuf_printf(&b, "(none)");
    } else if (!e->known) {
        ana_sbuf_printf(&b, "unknown (%s)", e->reason ? e->reason : "not affine");
    } else if (ana_terms_print(&b, k, e, ANA_SIDE_ALL) == 0) {
        ana_sbuf_printf(&b, "0");
    }
    return b.len > (size_t)INT32_MAX ? INT32_MAX : (int)b.len;
}

int ana_guard_format(const ana_kernel *k, const ana_guard *g, char *dst, size_t dst_cap)
{
    static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };
    ana_sbuf b = { dst, dst ? dst_cap : 0, 0 };
    if (b.cap)
        dst[0] = '\0';
    if (!g || !g->expr.known || g->cmp > ANA_CMP_NE) {
        ana_sbuf_printf(&b, "unknown condition");
    } else {
        if (ana_terms_print(&b, k, &g->expr, ANA_SIDE_LEFT) == 0)
            ana_sbuf_printf(&b, "0");
        ana_sbuf_printf(&b, " %s ", ops[g->cmp]);
        if (ana_terms_print(&b, k, &g->expr, ANA_SIDE_RIGHT) == 0)
            ana_sbuf_printf(&b, "0");
    }
    return b.len > (size_t)INT32_MAX ? INT32_MAX : (int)b.len;
}
