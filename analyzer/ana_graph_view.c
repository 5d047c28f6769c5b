/* ana_graph_view.c — what an export shows: the commands of a seq range,
 * with repeated iterations folded into one (--collapse), and the edges
 * between shown commands merged per (from, to, kind, object).
 *
 * Folding: each command gets a signature (kind, function, queue, kernel,
 * NDRange, argument values, memory ranges; not its events or times).
 * Scanning the commands in order, at each position the period p (1..64)
 * whose block repeats most often back to back (largest p * repeats, at
 * least two repeats; the shorter period on ties) is folded: the first
 * iteration stands for all, with the repeat count, and edges between
 * iterations become "carried" edges on the representatives. */
#include "analyzer/ana_graph_int.h"
#include "analyzer/ana_model_int.h"

#include <stdlib.h>
#include <string.h>

#define ANA_FOLD_MAX_PERIOD 64

static uint64_t ana_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static uint64_t ana_sig(const ana_cmd *c)
{
    uint64_t h = ana_mix(c->kind, c->queue);
    for (const char *s = c->fn; s && *s; s++)
        h = ana_mix(h, (unsigned char)*s);
    h = ana_mix(h, c->kernel);
    h = ana_mix(h, c->blocking);
    h = ana_mix(h, c->nwait);
    h = ana_mix(h, c->event != 0);
    h = ana_mix(h, c->work_dim);
    for (int d = 0; d < 3; d++)
        h = ana_mix(ana_mix(ana_mix(h, c->global[d]), c->local[d]), c->goff[d]);
    for (unsigned i = 0; i < c->nargs; i++)
        h = ana_mix(ana_mix(ana_mix(h, c->args[i].kind), c->args[i].size), c->args[i].value);
    for (unsigned i = 0; i < c->nmem; i++) {
        const ana_memref *r = &c->mem[i];
        h = ana_mix(ana_mix(ana_mix(ana_mix(h, r->object), r->lo), r->hi), r->access);
    }
    return h;
}

/* Repeats of block [i, i+p) starting at i in sig[0..n). */
static size_t ana_repeats(const uint64_t *sig, size_t n, size_t i, size_t p)
{
    size_t k = 1;
    while (i + (k + 1) * p <= n) {
        size_t j;
        for (j = 0; j < p; j++)
            if (sig[i + j] != sig[i + k * p + j])
                break;
        if (j < p)
            break;
        k++;
    }
    return k;
}

static int ana_vedge_cmp(const void *a, const void *b)
{
    const ana_vedge *x = a, *y = b;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->e->kind != y->e->kind)
        return x->e->kind < y->e->kind ? -1 : 1;
    if (x->e->object != y->e->object)
        return x->e->object < y->e->object ? -1 : 1;
    return x->carried - y->carried;
}

ana_status ana_view_build(const ana_model *m, const ana_graph *g, const ana_graph_view *v,
                          int skip_flush, ana_view *out)
{
    ana_status st = ANA_ERR_NOMEM;
    size_t n = ana_model_command_count(m), ns = 0;
    uint64_t lo = v ? v->seq_lo : 0, hi = v ? v->seq_hi : UINT64_MAX;
    uint32_t *sel = NULL, *iter = NULL, *block = NULL;
    uint64_t *sig = NULL;
    memset(out, 0, sizeof *out);
    sel = malloc((n ? n : 1) * sizeof *sel);
    out->node_of = calloc(n ? n : 1, sizeof *out->node_of);
    iter = calloc(n ? n : 1, sizeof *iter);
    block = calloc(n ? n : 1, sizeof *block);
    out->nodes = malloc((n ? n : 1) * sizeof *out->nodes);
    if (!sel || !out->node_of || !iter || !block || !out->nodes)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const ana_cmd *c = ana_model_command(m, i);
        if (c->seq < lo || c->seq > hi || (skip_flush && c->kind == ANA_CMD_FLUSH))
            continue;
        sel[ns++] = (uint32_t)i;
    }
    if (v && v->collapse) {
        sig = malloc((ns ? ns : 1) * sizeof *sig);
        if (!sig)
            goto out;
        for (size_t i = 0; i < ns; i++)
            sig[i] = ana_sig(ana_model_command(m, sel[i]));
    }
    uint32_t nblocks = 0;
    for (size_t i = 0; i < ns;) {
        size_t best_p = 1, best_k = 1;
        for (size_t p = 1; sig && p <= ANA_FOLD_MAX_PERIOD && i + 2 * p <= ns; p++) {
            if (sig[i] != sig[i + p])
                continue;
            size_t k = ana_repeats(sig, ns, i, p);
            if (k >= 2 && p * k > best_p * best_k)
                best_p = p, best_k = k;
        }
        nblocks++;
        for (size_t j = 0; j < best_p; j++) {
            ana_vnode *vn = &out->nodes[out->nnodes];
            vn->cmd = sel[i + j];
            vn->repeat = (uint32_t)best_k;
            vn->last_seq = ana_model_command(m, sel[i + (best_k - 1) * best_p + j])->seq;
            for (size_t k = 0; k < best_k; k++) {
                uint32_t c = sel[i + k * best_p + j];
                out->node_of[c] = (uint32_t)out->nnodes + 1;
                iter[c] = (uint32_t)k;
                block[c] = nblocks;
            }
            out->nnodes++;
        }
        i += best_p * best_k;
    }
    size_t ne = ana_graph_edge_count(g), k = 0;
    out->edges = malloc((ne ? ne : 1) * sizeof *out->edges);
    if (!out->edges)
        goto out;
    for (size_t i = 0; i < ne; i++) {
        const ana_edge *e = ana_graph_edge(g, i);
        uint32_t a = out->node_of[e->from], b = out->node_of[e->to];
        if (!a || !b)
            continue;
        ana_vedge *x = &out->edges[k++];
        x->from = a - 1;
        x->to = b - 1;
        x->e = e;
        x->count = 1;
        x->carried = block[e->from] == block[e->to] && iter[e->from] != iter[e->to];
    }
    qsort(out->edges, k, sizeof *out->edges, ana_vedge_cmp);
    size_t w = 0;
    for (size_t i = 0; i < k; i++) {
        if (w && !ana_vedge_cmp(&out->edges[w - 1], &out->edges[i])) {
            ana_vedge *p = &out->edges[w - 1];
            p->count++;
            if (!out->edges[i].e->implied && p->e->implied)
                p->e = out->edges[i].e;   /* prefer one that is not implied */
            continue;
        }
        out->edges[w++] = out->edges[i];
    }
    out->nedges = w;
    st = ANA_OK;
out:
    free(sel);
    free(iter);
    free(block);
    free(sig);
    if (st != ANA_OK)
        ana_view_free(out);
    return st;
}

void ana_view_free(ana_view *v)
{
    free(v->nodes);
    free(v->edges);
    free(v->node_of);
    memset(v, 0, sizeof *v);
}
