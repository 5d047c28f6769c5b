/* ana_graph.c — the dependency graph of a model's commands, built in call
 * order: data edges from each memory object's access history, explicit
 * event waits, queue order where no data says it (markers, barriers,
 * commands of unknown effect, map -> unmap), the commands a clFinish waits
 * for, and host order after a synchronization point. analyzer/README.md
 * states the rules. */
#include "analyzer/ana_graph_int.h"
#include "analyzer/ana_model_int.h"

#include <stdlib.h>
#include <string.h>

/* Per queue while building. */
typedef struct ana_gq {
    uint64_t id;
    uint32_t *pending;       /* commands since the last finish not known complete */
    size_t npending, cappending, compact_at;
    uint32_t barrier;        /* 1 + the last barrier-like command, 0 none */
} ana_gq;

/* A command waiting on a user event that the host has not set yet. */
typedef struct ana_uwait {
    uint64_t event;
    uint32_t cmd;
} ana_uwait;

typedef struct ana_gb {
    const ana_model *m;
    ana_graph *g;
    uint32_t cur;            /* the command being added */
    const ana_memref *ref;   /* the range being added (data edges) */
    ana_idmap hmap;          /* root object -> history index */
    ana_hist *hist;
    size_t nhist, caphist;
    ana_idmap qmap;          /* queue id -> ana_gq index */
    ana_gq *q;
    size_t nq, capq;
    ana_idmap evmap;         /* event id -> producing command */
    ana_idmap tsync;         /* thread -> 1 + its last host sync point awaiting a command */
    ana_uwait *uw;
    size_t nuw, capuw;
    uint8_t *done;           /* per command: complete as far as the host knows, or covered */
} ana_gb;

/* ------------------------------------------------------------ edges */

static int ana_edge_add(ana_gb *b, uint32_t from, uint32_t to, ana_edge_kind kind, uint64_t object,
                        uint64_t lo, uint64_t hi, int whole, const char *why)
{
    ana_graph *g = b->g;
    if (from == to)
        return 0;
    if (ana_grow((void **)&g->e, &g->cap, g->ne + 1, sizeof *g->e))
        return -1;
    ana_edge *e = &g->e[g->ne++];
    memset(e, 0, sizeof *e);
    e->from = from;
    e->to = to;
    e->kind = (uint8_t)kind;
    e->object = object;
    e->lo = lo;
    e->hi = hi;
    e->whole = (uint8_t)!!whole;
    e->why = whole ? why : NULL;
    return 0;
}

static int ana_hist_cb(void *ctx, uint32_t from, ana_edge_kind kind, uint64_t lo, uint64_t hi,
                       int whole, const char *why)
{
    ana_gb *b = ctx;
    return ana_edge_add(b, from, b->cur, kind, b->ref->root, lo, hi, whole, why);
}

/* ------------------------------------------------------------ state */

static ana_hist *ana_hist_of(ana_gb *b, uint64_t root)
{
    uint32_t i;
    if (ana_idmap_get(&b->hmap, root, &i))
        return &b->hist[i];
    if (ana_grow((void **)&b->hist, &b->caphist, b->nhist + 1, sizeof *b->hist) ||
        ana_idmap_put(&b->hmap, root, (uint32_t)b->nhist))
        return NULL;
    memset(&b->hist[b->nhist], 0, sizeof b->hist[0]);
    return &b->hist[b->nhist++];
}

static ana_gq *ana_q_of(ana_gb *b, uint64_t id)
{
    uint32_t i;
    if (ana_idmap_get(&b->qmap, id, &i))
        return &b->q[i];
    if (ana_grow((void **)&b->q, &b->capq, b->nq + 1, sizeof *b->q) ||
        ana_idmap_put(&b->qmap, id, (uint32_t)b->nq))
        return NULL;
    memset(&b->q[b->nq], 0, sizeof b->q[0]);
    b->q[b->nq].id = id;
    return &b->q[b->nq++];
}

/* Appends @p cmd to the queue's pending commands; drops those known
 * complete or covered whenever the list has doubled (amortized O(1)). */
static int ana_pending_add(ana_gq *q, const uint8_t *done, uint32_t cmd)
{
    if (q->npending >= q->compact_at) {
        size_t k = 0;
        for (size_t j = 0; j < q->npending; j++)
            if (!done[q->pending[j]])
                q->pending[k++] = q->pending[j];
        q->npending = k;
        q->compact_at = k * 2 > 64 ? k * 2 : 64;
    }
    if (ana_grow((void **)&q->pending, &q->cappending, q->npending + 1, sizeof *q->pending))
        return -1;
    q->pending[q->npending++] = cmd;
    return 0;
}

/* The host knows command @p i complete: on an in-order queue so is
 * everything enqueued there before it. */
static void ana_host_waited(ana_gb *b, uint32_t i)
{
    const ana_cmd *c = ana_model_command(b->m, i);
    b->done[i] = 1;
    if (!c->queue || !c->in_order)
        return;
    ana_gq *q = ana_q_of(b, c->queue);
    if (!q)
        return;
    size_t k = 0;
    for (size_t j = 0; j < q->npending; j++)
        if (q->pending[j] > i && !b->done[q->pending[j]])
            q->pending[k++] = q->pending[j];
    q->npending = k;
}

/* ------------------------------------------------------------ one command */

static int ana_data_edges(ana_gb *b, const ana_cmd *c)
{
    for (int pass = 0; pass < 2; pass++) {   /* reads first, then writes */
        for (unsigned j = 0; j < c->nmem; j++) {
            const ana_memref *r = &c->mem[j];
            int acc = pass ? ANA_ACC_WRITE : ANA_ACC_READ;
            if (!(r->access & acc))
                continue;
            ana_hist *h = ana_hist_of(b, r->root);
            if (!h)
                return -1;
            b->ref = r;
            int rc = pass ? ana_hist_write(h, b->cur, r->lo, r->hi, r->whole, r->why, ana_hist_cb, b)
                          : ana_hist_read(h, b->cur, r->lo, r->hi, r->whole, r->why, ana_hist_cb, b);
            if (rc)
                return -1;
        }
    }
    return 0;
}

static int ana_event_edges(ana_gb *b, const ana_cmd *c)
{
    for (unsigned j = 0; j < c->nwait; j++) {
        uint32_t p;
        if (ana_idmap_get(&b->evmap, c->wait[j], &p)) {
            if (ana_edge_add(b, p, b->cur, ANA_EDGE_EVENT, c->wait[j], 0, 0, 0, NULL))
                return -1;
            continue;
        }
        const ana_object *o = ana_model_find(b->m, c->wait[j]);
        if (o && o->kind == ANA_OBJ_USER_EVENT) {   /* set by the host later */
            if (ana_grow((void **)&b->uw, &b->capuw, b->nuw + 1, sizeof *b->uw))
                return -1;
            b->uw[b->nuw].event = c->wait[j];
            b->uw[b->nuw++].cmd = b->cur;
        }
    }
    return 0;
}

static int ana_device_cmd(ana_gb *b, const ana_cmd *c, size_t first_edge)
{
    uint32_t i = b->cur, s;
    ana_gq *q = c->queue ? ana_q_of(b, c->queue) : NULL;
    if (c->queue && !q)
        return -1;
    if (ana_idmap_get(&b->tsync, c->tid, &s) && s) {
        if (ana_edge_add(b, s - 1, i, ANA_EDGE_HOST, 0, 0, 0, 0, NULL) || ana_idmap_put(&b->tsync, c->tid, 0))
            return -1;
    }
    if (ana_event_edges(b, c))
        return -1;
    if (q && q->barrier && ana_edge_add(b, q->barrier - 1, i, ANA_EDGE_ORDER, 0, 0, 0, 0, NULL))
        return -1;
    if (ana_data_edges(b, c))
        return -1;
    int all_before = (c->kind == ANA_CMD_MARKER || c->kind == ANA_CMD_BARRIER) && !c->nwait &&
                     strcmp(c->fn, "clEnqueueWaitForEvents");
    int unknown = c->kind == ANA_CMD_OTHER && !c->nmem && c->in_order;
    if (q && (all_before || unknown)) {
        for (size_t j = 0; j < q->npending; j++)
            if (!b->done[q->pending[j]] &&
                ana_edge_add(b, q->pending[j], i, ANA_EDGE_ORDER, 0, 0, 0, 0, NULL))
                return -1;
    }
    if (q && (c->kind == ANA_CMD_BARRIER || unknown))
        q->barrier = i + 1;
    if (c->map_seq) {
        long mi = ana_model_cmd_index(b->m, c->map_seq);
        int linked = 0;
        for (size_t j = first_edge; j < b->g->ne && !linked; j++)
            linked = b->g->e[j].from == (uint32_t)mi;
        if (mi >= 0 && !linked && ana_edge_add(b, (uint32_t)mi, i, ANA_EDGE_ORDER, 0, 0, 0, 0, NULL))
            return -1;
    }
    /* a predecessor on the same queue is covered by this command for clFinish */
    for (size_t j = first_edge; j < b->g->ne; j++) {
        const ana_cmd *p = ana_model_command(b->m, b->g->e[j].from);
        if (q && p->queue == c->queue && !ana_cmd_kind_is_host(p->kind))
            b->done[b->g->e[j].from] = 1;
    }
    if (q && ana_pending_add(q, b->done, i))
        return -1;
    if (c->event && ana_idmap_put(&b->evmap, c->event, i))
        return -1;
    if (c->blocking) {
        ana_host_waited(b, i);
        if (ana_idmap_put(&b->tsync, c->tid, i + 1))
            return -1;
    }
    return 0;
}

static int ana_host_cmd(ana_gb *b, const ana_cmd *c)
{
    uint32_t i = b->cur;
    switch (c->kind) {
    case ANA_CMD_FINISH: {
        ana_gq *q = c->queue ? ana_q_of(b, c->queue) : NULL;
        if (c->queue && !q)
            return -1;
        for (size_t j = 0; q && j < q->npending; j++) {
            uint32_t p = q->pending[j];
            if (!b->done[p] && ana_edge_add(b, p, i, ANA_EDGE_SYNC, 0, 0, 0, 0, NULL))
                return -1;
            b->done[p] = 1;
        }
        if (q)
            q->npending = 0;
        return ana_idmap_put(&b->tsync, c->tid, i + 1);
    }
    case ANA_CMD_WAIT:
        for (unsigned j = 0; j < c->nwait; j++) {
            uint32_t p;
            if (!ana_idmap_get(&b->evmap, c->wait[j], &p))
                continue;
            if (ana_edge_add(b, p, i, ANA_EDGE_EVENT, c->wait[j], 0, 0, 0, NULL))
                return -1;
            if (!ana_cmd_kind_is_host(ana_model_command(b->m, p)->kind))
                ana_host_waited(b, p);
        }
        return ana_idmap_put(&b->tsync, c->tid, i + 1);
    case ANA_CMD_SET_EVENT: {
        if (c->event && ana_idmap_put(&b->evmap, c->event, i))
            return -1;
        size_t k = 0;
        for (size_t j = 0; j < b->nuw; j++) {
            if (b->uw[j].event == c->event) {
                if (ana_edge_add(b, i, b->uw[j].cmd, ANA_EDGE_EVENT, c->event, 0, 0, 0, NULL))
                    return -1;
            } else {
                b->uw[k++] = b->uw[j];
            }
        }
        b->nuw = k;
        return 0;
    }
    default:   /* clFlush waits for nothing */
        return 0;
    }
}

/* ------------------------------------------------------------ finishing */

static int ana_edge_cmp(const void *a, const void *b)
{
    const ana_edge *x = a, *y = b;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->object != y->object)
        return x->object < y->object ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges edges of the same (to, from, kind, object): their
 * ranges become one hull. */
static void ana_edges_merge(ana_graph *g)
{
    if (!g->ne)
        return;
    qsort(g->e, g->ne, sizeof *g->e, ana_edge_cmp);
    size_t k = 0;
    for (size_t i = 1; i < g->ne; i++) {
        ana_edge *a = &g->e[k], *e = &g->e[i];
        if (a->to == e->to && a->from == e->from && a->kind == e->kind && a->object == e->object) {
            if (e->lo < a->lo)
                a->lo = e->lo;
            if (e->hi > a->hi)
                a->hi = e->hi;
            if (e->whole && !a->whole) {
                a->whole = 1;
                a->why = e->why;
            }
            continue;
        }
        g->e[++k] = *e;
    }
    g->ne = k + 1;
}

ana_status ana_graph_build(const ana_model *m, ana_graph **out)
{
    ana_status st = ANA_ERR_NOMEM;
    if (!m || !out)
        return ANA_ERR_ARG;
    *out = NULL;
    size_t n = ana_model_command_count(m);
    ana_gb b;
    memset(&b, 0, sizeof b);
    b.m = m;
    b.g = calloc(1, sizeof *b.g);
    b.done = calloc(n ? n : 1, 1);
    if (!b.g || !b.done)
        goto out;
    b.g->m = m;
    for (size_t i = 0; i < n; i++) {
        const ana_cmd *c = ana_model_command(m, i);
        size_t first = b.g->ne;
        b.cur = (uint32_t)i;
        if (ana_cmd_kind_is_host(c->kind) ? ana_host_cmd(&b, c) : ana_device_cmd(&b, c, first))
            goto out;
    }
    ana_edges_merge(b.g);
    if (ana_graph_mark_implied(b.g->e, b.g->ne, n))
        goto out;
    *out = b.g;
    b.g = NULL;
    st = ANA_OK;
out:
    for (size_t i = 0; i < b.nhist; i++)
        ana_hist_free(&b.hist[i]);
    for (size_t i = 0; i < b.nq; i++)
        free(b.q[i].pending);
    free(b.hist);
    free(b.q);
    free(b.uw);
    free(b.done);
    ana_idmap_free(&b.hmap);
    ana_idmap_free(&b.qmap);
    ana_idmap_free(&b.evmap);
    ana_idmap_free(&b.tsync);
    ana_graph_free(b.g);
    return st;
}

void ana_graph_free(ana_graph *g)
{
    if (!g)
        return;
    free(g->e);
    free(g);
}

size_t ana_graph_edge_count(const ana_graph *g)
{
    return g ? g->ne : 0;
}

const ana_edge *ana_graph_edge(const ana_graph *g, size_t i)
{
    return g && i < g->ne ? &g->e[i] : NULL;
}
