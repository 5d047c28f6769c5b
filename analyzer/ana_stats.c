/* ana_stats.c — statistics of a model: per kernel (launches, device time,
 * work-items, bytes by analysis), per transfer kind (count, bytes, device
 * time), per queue (busy time, idle gaps between device intervals). Host
 * time per API function is gathered by the model while it streams. */
#include "analyzer/ana_model_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct ana_ival {
    uint64_t queue, start, end, seq;
    int after_untimed;    /* an untimed command of its queue came since the last timed one */
} ana_ival;

/* By queue, then device start. */
static int ana_ival_cmp(const void *a, const void *b)
{
    const ana_ival *x = a, *y = b;
    if (x->queue != y->queue)
        return x->queue < y->queue ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ana_kstat_cmp(const void *a, const void *b)
{
    const ana_kernel_stats *x = a, *y = b;
    if (x->dev_total_ns != y->dev_total_ns)
        return x->dev_total_ns < y->dev_total_ns ? 1 : -1;
    if (x->launches != y->launches)
        return x->launches < y->launches ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int ana_xstat_cmp(const void *a, const void *b)
{
    const ana_xfer_stats *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return strcmp(x->kind, y->kind);
}

static int ana_gap_cmp(const void *a, const void *b)
{
    const ana_gap *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return x->before_seq < y->before_seq ? -1 : x->before_seq > y->before_seq;
}

/* Internal layout: the public struct first, the arrays after. */
typedef struct ana_stats_x {
    ana_stats pub;
    ana_kernel_stats *k;
    ana_xfer_stats *x;
    ana_queue_stats *q;
    ana_gap *g;
    struct ana_kname { char s[128]; } *names;   /* kernel names, parallel to k until sorted */
    size_t capk, capg, capq, capn;
} ana_stats_x;

static int ana_is_xfer(ana_cmd_kind k)
{
    return (k >= ANA_CMD_READ && k <= ANA_CMD_SVM_FREE);
}

static ana_status ana_stats_kernel(ana_stats_x *s, ana_idmap *kmap, const ana_model *m, const ana_cmd *c)
{
    uint32_t i;
    char name[128];
    if (!ana_idmap_get(kmap, c->kernel, &i)) {
        ana_model_label(m, c->kernel, name, sizeof name);
        for (i = 0; i < s->pub.nkernels; i++)
            if (!strcmp(s->names[i].s, name))
                break;
        if (i == s->pub.nkernels) {
            if (ana_grow((void **)&s->k, &s->capk, i + 1, sizeof *s->k) ||
                ana_grow((void **)&s->names, &s->capn, i + 1, sizeof *s->names))
                return ANA_ERR_NOMEM;
            memset(&s->k[i], 0, sizeof s->k[i]);
            memcpy(s->names[i].s, name, sizeof name);
            s->pub.nkernels++;
        }
        if (ana_idmap_put(kmap, c->kernel, i))
            return ANA_ERR_NOMEM;
    }
    ana_kernel_stats *k = &s->k[i];
    k->launches++;
    uint64_t wi = 1;
    for (unsigned d = 0; d < c->work_dim; d++)
        wi = c->global[d] && wi > UINT64_MAX / c->global[d] ? UINT64_MAX : wi * c->global[d];
    k->work_items += wi;
    for (unsigned j = 0; j < c->nmem; j++) {
        const ana_memref *r = &c->mem[j];
        if (r->access & ANA_ACC_READ)
            k->bytes_read += r->hi - r->lo;
        if (r->access & ANA_ACC_WRITE)
            k->bytes_written += r->hi - r->lo;
        k->whole_ranges += r->whole;
    }
    if (c->has_devtime) {
        uint64_t d = c->dev_end - c->dev_start;
        if (!k->timed || d < k->dev_min_ns)
            k->dev_min_ns = d;
        if (d > k->dev_max_ns)
            k->dev_max_ns = d;
        k->dev_total_ns += d;
        k->timed++;
        s->pub.kernel_ns += d;
    }
    return ANA_OK;
}

/* Busy time and idle gaps of one queue's device intervals @p iv (by start). */
static ana_status ana_stats_queue(ana_stats_x *s, ana_queue_stats *q, ana_ival *iv, size_t n)
{
    if (!n)
        return ANA_OK;
    uint64_t cur_end = iv[0].end, cur_seq = iv[0].seq, busy = 0, seg_start = iv[0].start;
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start > cur_end && iv[i].after_untimed) {
            busy += cur_end - seg_start;   /* busy in between is not known: not idle either */
            seg_start = iv[i].start;
            cur_end = iv[i].end;
            cur_seq = iv[i].seq;
        } else if (iv[i].start > cur_end) {
            busy += cur_end - seg_start;
            uint64_t gap = iv[i].start - cur_end;
            if (ana_grow((void **)&s->g, &s->capg, s->pub.ngaps + 1, sizeof *s->g))
                return ANA_ERR_NOMEM;
            ana_gap *g = &s->g[s->pub.ngaps++];
            g->queue = q->queue;
            g->after_seq = cur_seq;
            g->before_seq = iv[i].seq;
            g->ns = gap;
            q->gaps++;
            q->idle_ns += gap;
            if (gap > q->max_gap_ns)
                q->max_gap_ns = gap;
            seg_start = iv[i].start;
            cur_end = iv[i].end;
            cur_seq = iv[i].seq;
        } else if (iv[i].end > cur_end) {
            cur_end = iv[i].end;
            cur_seq = iv[i].seq;
        }
    }
    busy += cur_end - seg_start;
    q->busy_ns = busy;
    q->span_ns = cur_end - iv[0].start;
    return ANA_OK;
}

ana_status ana_stats_compute(const ana_model *m, ana_stats **out)
{
    ana_status st = ANA_ERR_NOMEM;
    if (!m || !out)
        return ANA_ERR_ARG;
    *out = NULL;
    ana_stats_x *s = calloc(1, sizeof *s);
    ana_idmap kmap = { 0 }, qmap = { 0 };
    ana_ival *iv = NULL;
    uint8_t *untimed = NULL;
    size_t n = ana_model_command_count(m);
    if (!s)
        return ANA_ERR_NOMEM;
    s->x = calloc(ANA_CMD_KIND_COUNT, sizeof *s->x);
    iv = malloc((n ? n : 1) * sizeof *iv);
    if (!s->x || !iv)
        goto out;
    /* commands: kernels, transfers, queues */
    for (size_t i = 0; i < n; i++) {
        const ana_cmd *c = ana_model_command(m, i);
        if (ana_cmd_kind_is_host((ana_cmd_kind)c->kind))
            continue;
        s->pub.commands++;
        s->pub.timed += c->has_devtime;
        if (c->kind == ANA_CMD_KERNEL) {
            s->pub.launches++;
            if ((st = ana_stats_kernel(s, &kmap, m, c)) != ANA_OK)
                goto out;
            st = ANA_ERR_NOMEM;
        } else if (ana_is_xfer((ana_cmd_kind)c->kind)) {
            ana_xfer_stats *x = &s->x[c->kind];
            x->kind = ana_cmd_kind_name((ana_cmd_kind)c->kind);
            x->count++;
            x->bytes += c->bytes;
            if (c->has_devtime) {
                x->timed++;
                x->timed_bytes += c->bytes;
                x->dev_total_ns += c->dev_end - c->dev_start;
                s->pub.xfer_ns += c->dev_end - c->dev_start;
            }
        }
        if (!c->queue)
            continue;
        uint32_t qi;
        if (!ana_idmap_get(&qmap, c->queue, &qi)) {
            qi = (uint32_t)s->pub.nqueues;
            if (ana_grow((void **)&s->q, &s->capq, qi + 1, sizeof *s->q) || ana_idmap_put(&qmap, c->queue, qi))
                goto out;
            memset(&s->q[qi], 0, sizeof s->q[qi]);
            s->q[qi].queue = c->queue;
            s->q[qi].device = c->device;
            s->pub.nqueues++;
        }
        s->q[qi].commands++;
        s->q[qi].timed += c->has_devtime;
    }
    /* per queue: its timed intervals, all queues sorted together; with
     * sampled device times (the recorder's default in fast loops), a gap
     * across an untimed command is not known to be idle */
    size_t k = 0;
    untimed = calloc(s->pub.nqueues ? s->pub.nqueues : 1, 1);
    if (!untimed)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const ana_cmd *c = ana_model_command(m, i);
        uint32_t qi;
        if (!c->queue || ana_cmd_kind_is_host((ana_cmd_kind)c->kind) || !ana_idmap_get(&qmap, c->queue, &qi))
            continue;
        if (!c->has_devtime) {
            untimed[qi] = 1;
            continue;
        }
        iv[k].queue = c->queue;
        iv[k].start = c->dev_start;
        iv[k].end = c->dev_end;
        iv[k].after_untimed = untimed[qi];
        untimed[qi] = 0;
        iv[k++].seq = c->seq;
    }
    if (k)
        qsort(iv, k, sizeof *iv, ana_ival_cmp);
    for (size_t i = 0; i < k;) {
        size_t j = i;
        uint32_t qi;
        while (j < k && iv[j].queue == iv[i].queue)
            j++;
        if (ana_idmap_get(&qmap, iv[i].queue, &qi) &&
            (st = ana_stats_queue(s, &s->q[qi], iv + i, j - i)) != ANA_OK)
            goto out;
        st = ANA_ERR_NOMEM;
        i = j;
    }
    /* compact transfer kinds that occurred */
    size_t nx = 0;
    for (size_t i = 0; i < ANA_CMD_KIND_COUNT; i++)
        if (s->x[i].count)
            s->x[nx++] = s->x[i];
    s->pub.nxfers = nx;
    for (size_t i = 0; i < s->pub.nkernels; i++)
        s->k[i].name = s->names[i].s;
    if (s->pub.nkernels)
        qsort(s->k, s->pub.nkernels, sizeof *s->k, ana_kstat_cmp);
    qsort(s->x, nx, sizeof *s->x, ana_xstat_cmp);
    if (s->pub.ngaps)
        qsort(s->g, s->pub.ngaps, sizeof *s->g, ana_gap_cmp);
    s->pub.kernels = s->k;
    s->pub.xfers = s->x;
    s->pub.queues = s->q;
    s->pub.gaps = s->g;
    *out = &s->pub;
    s = NULL;
    st = ANA_OK;
out:
    free(iv);
    free(untimed);
    ana_idmap_free(&kmap);
    ana_idmap_free(&qmap);
    ana_stats_free(s ? &s->pub : NULL);
    return st;
}

void ana_stats_free(ana_stats *p)
{
    if (!p)
        return;
    ana_stats_x *s = (ana_stats_x *)p;
    free(s->k);
    free(s->x);
    free(s->q);
    free(s->g);
    free(s->names);
    free(s);
}
