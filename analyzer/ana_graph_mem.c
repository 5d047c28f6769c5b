/* ana_graph_mem.c — the access history of one memory object: which
 * command last wrote each byte range (disjoint write spans), and which
 * commands read each range since (read groups), so that a new access finds
 * its RAW, WAR and WAW dependencies on overlapping bytes. */
#include "analyzer/ana_graph_int.h"

#include <stdlib.h>
#include <string.h>

static uint64_t ana_max(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t ana_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static int ana_grow_n(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 8;
    while (c < need)
        c *= 2;
    if (c > SIZE_MAX / elem)
        return -1;
    void *p = realloc(*arr, c * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

static const char *ana_why(int s_whole, const char *s_why, int whole, const char *why)
{
    return whole && why ? why : s_whole ? s_why : NULL;
}

/* ------------------------------------------------------------ write spans */

static int ana_span_push(ana_hist *h, const ana_span *s)
{
    if (ana_grow_n((void **)&h->w, &h->capw, h->nw + 1, sizeof *h->w))
        return -1;
    h->w[h->nw++] = *s;
    return 0;
}

/* Removes [lo, hi) from the write spans (splitting one that straddles it). */
static int ana_span_cut(ana_hist *h, uint64_t lo, uint64_t hi)
{
    size_t old = h->nw;
    for (size_t i = 0; i < old; i++) {
        ana_span *s = &h->w[i];
        if (s->hi <= lo || s->lo >= hi)
            continue;
        if (s->lo < lo && s->hi > hi) {
            ana_span right = *s;
            right.lo = hi;
            s->hi = lo;
            if (ana_span_push(h, &right))
                return -1;
        } else if (s->lo < lo) {
            s->hi = lo;
        } else if (s->hi > hi) {
            s->lo = hi;
        } else {
            s->lo = s->hi = 0;   /* covered: dropped below */
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < h->nw; i++)
        if (h->w[i].lo < h->w[i].hi)
            h->w[k++] = h->w[i];
    h->nw = k;
    return 0;
}

/* ------------------------------------------------------------ read groups */

/* The group of readers of exactly [lo, hi) with whole/why, or NULL. */
static ana_rgroup *ana_group_find(ana_hist *h, uint64_t lo, uint64_t hi, int whole, const char *why)
{
    for (size_t i = h->nr; i-- > 0;) {
        ana_rgroup *g = &h->r[i];
        if (g->lo == lo && g->hi == hi && g->whole == whole && g->why == why)
            return g;
    }
    return NULL;
}

static int ana_group_add(ana_rgroup *g, uint32_t cmd)
{
    if (g->n && g->cmds[g->n - 1] == cmd)
        return 0;
    if (ana_grow_n((void **)&g->cmds, &g->cap, g->n + 1, sizeof *g->cmds))
        return -1;
    g->cmds[g->n++] = cmd;
    return 0;
}

/* A new group for [lo, hi) holding @p n readers @p cmds (copied). */
static ana_rgroup *ana_group_new(ana_hist *h, uint64_t lo, uint64_t hi, int whole, const char *why,
                                 const uint32_t *cmds, size_t n)
{
    if (ana_grow_n((void **)&h->r, &h->capr, h->nr + 1, sizeof *h->r))
        return NULL;
    ana_rgroup *g = &h->r[h->nr];
    memset(g, 0, sizeof *g);
    g->lo = lo;
    g->hi = hi;
    g->whole = (uint8_t)!!whole;
    g->why = whole ? why : NULL;
    if (n) {
        g->cmds = malloc(n * sizeof *g->cmds);
        if (!g->cmds)
            return NULL;
        memcpy(g->cmds, cmds, n * sizeof *g->cmds);
        g->n = g->cap = n;
    }
    h->nr++;
    return g;
}

/* Moves the readers of group @p i into an existing group of the same key,
 * if there is one (after a cut made the two ranges equal). */
static int ana_group_merge(ana_hist *h, size_t i)
{
    ana_rgroup *g = &h->r[i];
    for (size_t j = 0; j < h->nr; j++) {
        ana_rgroup *o = &h->r[j];
        if (j == i || o->lo != g->lo || o->hi != g->hi || o->whole != g->whole || o->why != g->why)
            continue;
        if (ana_grow_n((void **)&o->cmds, &o->cap, o->n + g->n, sizeof *o->cmds))
            return -1;
        memcpy(o->cmds + o->n, g->cmds, g->n * sizeof *g->cmds);
        o->n += g->n;
        g->lo = g->hi = 0;   /* emptied: dropped by the caller */
        return 0;
    }
    return 0;
}

/* Removes [lo, hi) from every read group (splitting those that straddle it). */
static int ana_group_cut(ana_hist *h, uint64_t lo, uint64_t hi)
{
    size_t old = h->nr;
    int changed = 0;
    for (size_t i = 0; i < old; i++) {
        ana_rgroup *g = &h->r[i];
        if (g->hi <= lo || g->lo >= hi)
            continue;
        changed = 1;
        if (g->lo < lo && g->hi > hi) {
            uint64_t ghi = g->hi;
            g->hi = lo;
            g = &h->r[i];
            if (!ana_group_new(h, hi, ghi, h->r[i].whole, h->r[i].why, h->r[i].cmds, h->r[i].n))
                return -1;
        } else if (g->lo < lo) {
            g->hi = lo;
        } else if (g->hi > hi) {
            g->lo = hi;
        } else {
            g->lo = g->hi = 0;
        }
    }
    if (!changed)
        return 0;
    for (size_t i = 0; i < h->nr; i++)
        if (h->r[i].lo < h->r[i].hi && ana_group_merge(h, i))
            return -1;
    size_t k = 0;
    for (size_t i = 0; i < h->nr; i++) {
        if (h->r[i].lo < h->r[i].hi)
            h->r[k++] = h->r[i];
        else
            free(h->r[i].cmds);
    }
    h->nr = k;
    return 0;
}

/* ------------------------------------------------------------ accesses */

int ana_hist_read(ana_hist *h, uint32_t cmd, uint64_t lo, uint64_t hi, int whole, const char *why,
                  ana_hist_edge_fn fn, void *ctx)
{
    if (lo >= hi)
        return 0;
    for (size_t i = 0; i < h->nw; i++) {
        const ana_span *s = &h->w[i];
        if (s->cmd == cmd || s->hi <= lo || s->lo >= hi)
            continue;
        if (fn(ctx, s->cmd, ANA_EDGE_RAW, ana_max(lo, s->lo), ana_min(hi, s->hi), whole || s->whole,
               ana_why(s->whole, s->why, whole, why)))
            return -1;
    }
    const char *w = whole ? why : NULL;
    ana_rgroup *g = ana_group_find(h, lo, hi, !!whole, w);
    if (!g)
        g = ana_group_new(h, lo, hi, whole, w, NULL, 0);
    return g ? ana_group_add(g, cmd) : -1;
}

int ana_hist_write(ana_hist *h, uint32_t cmd, uint64_t lo, uint64_t hi, int whole, const char *why,
                   ana_hist_edge_fn fn, void *ctx)
{
    if (lo >= hi)
        return 0;
    for (size_t i = 0; i < h->nw; i++) {
        const ana_span *s = &h->w[i];
        if (s->cmd == cmd || s->hi <= lo || s->lo >= hi)
            continue;
        if (fn(ctx, s->cmd, ANA_EDGE_WAW, ana_max(lo, s->lo), ana_min(hi, s->hi), whole || s->whole,
               ana_why(s->whole, s->why, whole, why)))
            return -1;
    }
    for (size_t i = 0; i < h->nr; i++) {
        const ana_rgroup *g = &h->r[i];
        if (g->hi <= lo || g->lo >= hi)
            continue;
        for (size_t j = 0; j < g->n; j++)
            if (g->cmds[j] != cmd &&
                fn(ctx, g->cmds[j], ANA_EDGE_WAR, ana_max(lo, g->lo), ana_min(hi, g->hi), whole || g->whole,
                   ana_why(g->whole, g->why, whole, why)))
                return -1;
    }
    if (ana_span_cut(h, lo, hi) || ana_group_cut(h, lo, hi))
        return -1;
    ana_span s = { lo, hi, cmd, (uint8_t)!!whole, whole ? why : NULL };
    return ana_span_push(h, &s);
}

void ana_hist_free(ana_hist *h)
{
    for (size_t i = 0; i < h->nr; i++)
        free(h->r[i].cmds);
    free(h->w);
    free(h->r);
    memset(h, 0, sizeof *h);
}
