/* rpl_splitter.c — the split engine (rpl.h, "split engine"): one launch
 * runs as parts, each a range of work-groups along one dimension, on the
 * devices a plan names, through the partition-ready kernel. Used by the
 * replay session (rpl_split.c) and by the layer in plan mode.
 *
 * A part whose device is the queue's runs there, on the application's
 * buffers. A part on any other device runs in a context and queue of the
 * engine's own (one per device, made on first use), on buffers of its
 * own that mirror the application's: before the part runs they receive
 * the bytes its regions name (what it may read, and the previous contents
 * of what it may write), read from the application's buffers. A mirror
 * remembers which bytes it holds and of which version of the object (an
 * epoch per key, moved by every command the caller reports as a possible
 * writer, and a generation moved by commands whose writes no key names),
 * so data already there from an earlier launch is not sent again. After
 * the parts, each other device's written bytes come back: written over
 * the application's buffer (concatenation: the parts' write regions are
 * disjoint), or merged byte by byte where they differ from the contents
 * before the launch (diff). The launch is complete when the call returns.
 *
 * Bytes go through pinned memory on both sides (a mapped
 * CL_MEM_ALLOC_HOST_PTR buffer per device): each driver moves only its
 * own pinned memory at full speed. Every part is launched before any
 * read-back (a driver may make a read block).
 *
 * Adaptive splits (a plan's models hold for every range) get each part's
 * share from the rate it ran at (Huchant's fixed point), a part on another
 * device counting its transfers; from the third launch on, a split slower
 * than its queue's device alone runs whole for RPL_SPLIT_REPROBE launches,
 * then is measured again. */
#include "replayer/rpl_split_int.h"
#include "costs/cdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ one launch */

/* One part, while it runs. */
typedef struct rpl_split_job {
    const rpl_split_part *part;
    rpl_split_dev *d;         /* NULL: the queue's own device */
    cl_kernel k;
    rpl_split_copy *copy[RPL_SPLIT_MAX_ARGS];
    uint8_t *before[RPL_SPLIT_MAX_ARGS];   /* diff: the bytes [wlo, whi) before the launch */
    uint8_t *after[RPL_SPLIT_MAX_ARGS];    /* the bytes [wlo, whi) the part left */
    uint8_t *arena;           /* pinned staging the buffers above come from, or NULL (malloc) */
    size_t used;
    int64_t send_ns;          /* host time spent sending its bytes */
    cl_mem mems[RPL_SPLIT_MAX_ARGS];       /* its buffers (mirrors) per argument */
    struct rpl_split_send {   /* bytes read from the queue's device, to write to its mirror */
        cl_mem buf;
        size_t lo, len;
        uint8_t *host;
        cl_event ev;          /* its write (adaptive: timed) */
    } send[2 * RPL_SPLIT_MAX_ARGS];
    int direct;               /* its staging is pinned by the queue's device's driver too
                               * (the same platform): transfers with the queue's device
                               * use it as they are, without a copy through the queue's
                               * device's own staging */
    unsigned nsend;
    cl_event rev[RPL_SPLIT_MAX_ARGS];   /* its read-backs (adaptive: timed) */
} rpl_split_job;

/* @p n bytes of job @p j's staging (pinned, or malloc'ed without it). */
static uint8_t *rpl_split_take(rpl_split_job *j, uint64_t n)
{
    if (!j->arena)
        return malloc(n ? (size_t)n : 1);
    uint8_t *p = j->arena + j->used;
    j->used += ((size_t)n + 63) & ~(size_t)63;
    return p;
}

static uint64_t rpl_min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Sets the partition kernel's arguments: the launch's (memory replaced by
 * @p mems where given), then the whole launch's sizes. */
static cl_int rpl_split_args(rpl_splitter *x, cl_kernel k, const rpl_split *sp, const rpl_split_launch *l,
                             cl_mem *mems, const cl_ulong extra[9])
{
    for (unsigned i = 0; i < sp->nargs; i++) {
        cl_int e;
        if (mems && mems[i])
            e = x->api.clSetKernelArg(k, i, sizeof(cl_mem), &mems[i]);
        else
            e = x->api.clSetKernelArg(k, i, l->args[i].size, l->args[i].value);
        if (e != CL_SUCCESS)
            return e;
    }
    for (unsigned i = 0; i < 9; i++) {
        cl_int e = x->api.clSetKernelArg(k, sp->nargs + i, sizeof(cl_ulong), &extra[i]);
        if (e != CL_SUCCESS)
            return e;
    }
    return CL_SUCCESS;
}

static void rpl_split_jobs_free(rpl_splitter *x, rpl_split_job *jobs, unsigned n, const rpl_split *sp)
{
    for (unsigned p = 0; p < n; p++)
        for (unsigned a = 0; a < sp->nargs; a++)
            if (jobs[p].rev[a])
                x->api.clReleaseEvent(jobs[p].rev[a]);
    for (unsigned p = 0; p < n; p++)
        for (unsigned i = 0; i < jobs[p].nsend; i++)
            if (jobs[p].send[i].ev)
                x->api.clReleaseEvent(jobs[p].send[i].ev);
    for (unsigned p = 0; p < n; p++)
        for (unsigned i = 0; !jobs[p].arena && i < jobs[p].nsend; i++)
            free(jobs[p].send[i].host);
    for (unsigned p = 0; p < n; p++)
        for (unsigned a = 0; !jobs[p].arena && a < sp->nargs; a++) {
            free(jobs[p].before[a]);
            free(jobs[p].after[a]);
        }
}

/* The offsets and sizes of part @p j of launch @p l. */
static void rpl_split_range(const rpl_split *sp, const rpl_split_job *j, const rpl_split_launch *l, uint64_t L,
                            size_t off[3], size_t gsz[3])
{
    for (unsigned d = 0; d < l->dim; d++) {
        off[d] = l->off[d];
        gsz[d] = l->gsz[d];
    }
    off[sp->dim] = l->off[sp->dim] + (size_t)(j->part->lo * L);
    gsz[sp->dim] = (size_t)(rpl_min64(j->part->hi * L, l->gsz[sp->dim]) - j->part->lo * L);
}

/* Launches the parts on the queue's own device (jobs without a device) on
 * @p pq, then flushes it so that they start alongside the others; their
 * events into @p kev when given. */
static cl_int rpl_split_local(rpl_splitter *x, const rpl_split *sp, rpl_split_job *jobs, const rpl_split_launch *l,
                              const cl_ulong extra[9], uint64_t L, cl_command_queue pq, cl_event *kev)
{
    for (unsigned p = 0; p < sp->nparts; p++) {
        rpl_split_job *j = &jobs[p];
        if (j->d)
            continue;
        size_t off[3], gsz[3];
        rpl_split_range(sp, j, l, L, off, gsz);
        cl_int e = rpl_split_args(x, j->k, sp, l, NULL, extra);
        if (e == CL_SUCCESS)
            e = x->api.clEnqueueNDRangeKernel(pq, j->k, l->dim, off, gsz, l->has_lsz ? l->lsz : NULL, 0, NULL,
                                              kev ? &kev[p] : NULL);
        if (e != CL_SUCCESS)
            return e;
        x->st.parts++;
    }
    return x->api.clFlush(pq);
}

/* Whether the queue's own parts may start before the other devices' bytes
 * are sent: they run on a queue of ours, every merge is a concatenation,
 * and nothing they write is a byte another part must be sent. */
static int rpl_split_early(const rpl_split *sp, const rpl_split_job *jobs, int own_queue)
{
    if (!own_queue)
        return 0;
    for (unsigned a = 0; a < sp->nargs; a++) {
        if (sp->merge[a] == RPL_MERGE_DIFF)
            return 0;
        for (unsigned p = 0; p < sp->nparts; p++) {
            const rpl_split_region *w = &jobs[p].part->regions[a];
            if (jobs[p].d || !w->write)
                continue;
            for (unsigned q = 0; q < sp->nparts; q++) {
                const rpl_split_region *r = &jobs[q].part->regions[a];
                if (!jobs[q].d)
                    continue;
                if ((r->read && r->rlo < w->whi && w->wlo < r->rhi) || (r->write && r->wlo < w->whi && w->wlo < r->whi))
                    return 0;
            }
        }
    }
    return 1;
}

/* Each part's kernel time, to the learn callback, keyed like `clrr
 * profile`'s samples (costs/cdb.h). */
static void rpl_split_learn_costs(rpl_splitter *x, const rpl_split *sp, const rpl_split_job *jobs, const cl_event *kev,
                            const rpl_split_launch *l, cl_device_id qdev)
{
    cdb_key key;
    memset(&key, 0, sizeof key);
    memcpy(key.program, sp->program, sizeof key.program);
    key.kernel = sp->kernel;
    key.dim = l->dim;
    double other = 1;
    for (unsigned d = 0; d < 3; d++) {
        key.gsz[d] = d < l->dim ? l->gsz[d] : 1;
        key.lsz[d] = d < l->dim && l->has_lsz ? l->lsz[d] : 0;
        uint64_t g = !l->has_lsz ? key.gsz[d] : key.lsz[d] ? (key.gsz[d] + key.lsz[d] - 1) / key.lsz[d] : 1;
        if (d != sp->dim && d < l->dim)
            other *= (double)g;
    }
    for (unsigned p = 0; p < sp->nparts; p++) {
        cl_ulong b = 0, e = 0;
        if (!kev[p] || x->api.clGetEventProfilingInfo(kev[p], CL_PROFILING_COMMAND_START, sizeof b, &b, NULL) ||
            x->api.clGetEventProfilingInfo(kev[p], CL_PROFILING_COMMAND_END, sizeof e, &e, NULL) || e <= b)
            continue;
        char id[1024];
        rpl_device_identity_of(&x->api, jobs[p].d ? jobs[p].d->dev : qdev, id, sizeof id);
        double groups = (double)(jobs[p].part->hi - jobs[p].part->lo) * other;
        if (x->o.learn(x->o.user, id, &key, (uint64_t)groups, (uint64_t)(e - b)) > 0)
            x->st.learned++;
    }
}

/* A launch that runs whole: counted, the first reason kept. */
static int rpl_split_whole(rpl_splitter *x, const rpl_split *sp, const char *why)
{
    x->st.fallback++;
    if (!x->st.note[0])
        snprintf(x->st.note, sizeof x->st.note, "%.64s: %s", sp->kernel, why);
    return 0;
}

/* One launch's state, carried from step to step of rpl_splitter_run:
 * prepare (is the split possible here, its parts' devices and kernels),
 * shares (an adaptive split's proportions), transfer (the bytes the other
 * devices' parts need), launch (every part), merge (their results into
 * the application's buffers), learn (times, next proportions, costs),
 * versions (what the mirrors hold afterwards). */
typedef struct rpl_split_work {
    rpl_splitter *x;
    const rpl_split *sp;      /* the plan's split, or lsp: at the measured proportions */
    const rpl_split_launch *l;
    char *err;                /* the error of a failing step, cap bytes */
    size_t cap;
    cl_context qctx;          /* the launch's queue: its context, device and platform */
    cl_device_id qdev;
    cl_platform_id qplat;     /* NULL when it cannot be queried */
    rpl_split_dev *prim;      /* the queue's device's pinned staging, or NULL */
    cl_command_queue pq;      /* where the queue's own parts run */
    int early;                /* the queue's own parts start before the others' bytes are sent */
    int timed;                /* the parts' kernels are timed (adaptive, or learning) */
    uint64_t L;               /* work-items per group along the split dimension */
    uint64_t sizes[RPL_SPLIT_MAX_ARGS];   /* each memory argument's size */
    cl_mem live[RPL_SPLIT_MAX_ARGS];      /* ... its application buffer */
    uint64_t keys[RPL_SPLIT_MAX_ARGS];    /* ... and the key its versions go by */
    cl_ulong extra[9];        /* the whole launch's sizes, offsets and local sizes */
    rpl_split_job jobs[RPL_SPLIT_MAX_PARTS];
    cl_event kev[RPL_SPLIT_MAX_PARTS];    /* the parts' kernels (timed) */
    rpl_split_adapt *ad;      /* an adaptive split's proportions, or NULL */
    rpl_split lsp;            /* the split at those proportions */
    rpl_split_part lparts[RPL_SPLIT_MAX_PARTS];
    rpl_split_region *lrg;    /* lparts' regions */
    int64_t t0, t_ready, t_sent, t_parts, t_done;
} rpl_split_work;

/* In a step: a failed call sets the error and returns -1. */
#define RPL_CL(call, what)                                                                                   \
    do {                                                                                                     \
        cl_int e_ = (call);                                                                                  \
        if (e_ != CL_SUCCESS) {                                                                              \
            snprintf(w->err, w->cap, "split %s over %u devices: %s failed (error %d)", w->sp->kernel,         \
                     w->sp->nparts, what, (int)e_);                                                          \
            return -1;                                                                                       \
        }                                                                                                    \
    } while (0)
#define RPL_NOMEM()                                \
    do {                                           \
        snprintf(w->err, w->cap, "out of memory"); \
        return -2;                                 \
    } while (0)

/* Whether memory argument @p a of the launch is a buffer the engine can
 * mirror: its application buffer, size and key into @p w. */
static int rpl_split_mem_arg(rpl_split_work *w, unsigned a)
{
    const rpl_split_arg *g = &w->l->args[a];
    cl_mem_object_type ty = 0;
    cl_mem_flags fl = 0;
    cl_mem parent = NULL;
    size_t size = 0;
    int ok = !(g->size != sizeof(cl_mem) || !g->value || !g->key ||
               (memcpy(&w->live[a], g->value, sizeof w->live[a]), !w->live[a]) ||
               w->x->api.clGetMemObjectInfo(w->live[a], CL_MEM_TYPE, sizeof ty, &ty, NULL) != CL_SUCCESS ||
               w->x->api.clGetMemObjectInfo(w->live[a], CL_MEM_FLAGS, sizeof fl, &fl, NULL) != CL_SUCCESS ||
               w->x->api.clGetMemObjectInfo(w->live[a], CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS ||
               w->x->api.clGetMemObjectInfo(w->live[a], CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent,
                                            NULL) != CL_SUCCESS ||
               ty != CL_MEM_OBJECT_BUFFER || (fl & CL_MEM_USE_HOST_PTR));
    w->sizes[a] = size;
    /* a sub-buffer's version does not move with its parent's */
    w->keys[a] = parent ? RPL_SPLIT_KEY_UNTRUSTED | (uint64_t)(uintptr_t)w->live[a] : g->key;
    return ok;
}

/* Prepare: what must hold for the split to run here (the launch's shape,
 * its arguments, the queue, each part's device and kernel). Empty @p why
 * when it holds; else why the launch runs whole. */
static void rpl_split_step_prepare(rpl_split_work *w, char *why, size_t why_cap)
{
    rpl_splitter *x = w->x;
    const rpl_split *sp = w->sp;
    const rpl_split_launch *l = w->l;
    uint64_t groups = 0;
    w->L = l->has_lsz && sp->dim < l->dim ? l->lsz[sp->dim] : 1;
    if (sp->dim < l->dim && w->L)
        groups = (l->gsz[sp->dim] + w->L - 1) / w->L;
    if (sp->nparts > RPL_SPLIT_MAX_PARTS || sp->nargs > RPL_SPLIT_MAX_ARGS || sp->dim >= l->dim || l->dim > 3 ||
        groups != sp->groups)
        snprintf(why, why_cap, "the launch's shape is not the plan's");
    else if (l->nargs < sp->nargs)
        snprintf(why, why_cap, "the kernel's arguments are not all known");
    for (unsigned a = 0; !why[0] && a < sp->nargs; a++) {
        if (!l->args[a].set)
            snprintf(why, why_cap, "argument %u is not set", a);
        else if (sp->args[a] == RPL_SPLIT_ARG_MEM && !rpl_split_mem_arg(w, a))
            snprintf(why, why_cap, "argument %u is not a buffer clrr can copy", a);
    }
    if (!why[0] &&
        (x->api.clGetCommandQueueInfo(l->q, CL_QUEUE_CONTEXT, sizeof w->qctx, &w->qctx, NULL) != CL_SUCCESS ||
         x->api.clGetCommandQueueInfo(l->q, CL_QUEUE_DEVICE, sizeof w->qdev, &w->qdev, NULL) != CL_SUCCESS))
        snprintf(why, why_cap, "the queue's device cannot be queried");
    for (unsigned p = 0; !why[0] && p < sp->nparts; p++) {
        rpl_split_job *j = &w->jobs[p];
        int primary = 0;
        char e2[200] = "";
        j->part = &sp->parts[p];
        if (rpl_split_dev_of(x, sp->parts[p].device, w->qdev, &j->d, &primary, e2, sizeof e2) < 0) {
            snprintf(why, why_cap, "%s", e2);
            break;
        }
        if (primary)
            j->d = NULL;
        j->k = rpl_split_kernel(x, sp, primary ? w->qctx : j->d->ctx, primary ? w->qdev : j->d->dev, 0, e2,
                                sizeof e2);
        if (!j->k)
            snprintf(why, why_cap, "%s does not build on %s: %s", sp->name, sp->parts[p].device, e2);
    }
}

/* Shares: an adaptive split (@p ad) runs at the proportions its earlier
 * launches measured (w->sp becomes the split at them; without the memory
 * for their regions, at the plan's); then the launch's sizes. */
static void rpl_split_step_shares(rpl_split_work *w, rpl_split_adapt *ad)
{
    const rpl_split *sp = w->sp;
    const rpl_split_launch *l = w->l;
    if (ad && (w->lrg = malloc((size_t)sp->nparts * sp->nargs * sizeof *w->lrg + 1)) != NULL) {
        rpl_split_regions(sp, ad->bound, w->sizes, w->lrg);
        for (unsigned p = 0; p < sp->nparts; p++) {
            w->lparts[p] = sp->parts[p];
            w->lparts[p].lo = ad->bound[p];
            w->lparts[p].hi = ad->bound[p + 1];
            w->lparts[p].regions = w->lrg + (size_t)p * sp->nargs;
            w->jobs[p].part = &w->lparts[p];
        }
        w->lsp = *sp;
        w->lsp.parts = w->lparts;
        w->sp = &w->lsp;
        if (ad->launches)
            w->x->st.adapted++;
        w->ad = ad;
    }
    w->timed = w->ad || w->x->o.learn;
    for (unsigned d = 0; d < 3; d++) {
        w->extra[d] = d < l->dim ? l->gsz[d] : 1;
        w->extra[3 + d] = d < l->dim ? l->off[d] : 0;
        w->extra[6 + d] = d < l->dim ? (l->has_lsz ? l->lsz[d] : 0) : 1;
    }
}

/* Bounds: the parts (the plan's, or at the measured proportions) cover the
 * launch's work-groups in order, every region lies inside its argument's
 * buffer, only merged arguments are written, and a concatenation's parts
 * write disjoint bytes: what a plan from someone else may get wrong
 * (plan/PLAN.md, "Trust"). Empty @p why when they hold; else why the
 * launch runs whole. */
static void rpl_split_step_bounds(rpl_split_work *w, char *why, size_t why_cap)
{
    const rpl_split *sp = w->sp;
    uint64_t next = 0;
    for (unsigned p = 0; !why[0] && p < sp->nparts; p++) {
        const rpl_split_part *q = &sp->parts[p];
        if (q->lo != next || q->hi <= q->lo || q->hi > sp->groups) {
            snprintf(why, why_cap, "part %u's work-groups [%llu, %llu) do not follow the parts before it within "
                     "the launch's %llu", p, (unsigned long long)q->lo, (unsigned long long)q->hi,
                     (unsigned long long)sp->groups);
            break;
        }
        next = q->hi;
        for (unsigned a = 0; !why[0] && a < sp->nargs; a++) {
            const rpl_split_region *r = &q->regions[a];
            if (sp->args[a] != RPL_SPLIT_ARG_MEM)
                continue;
            if ((r->read && (r->rlo >= r->rhi || r->rhi > w->sizes[a])) ||
                (r->write && (r->wlo >= r->whi || r->whi > w->sizes[a])))
                snprintf(why, why_cap, "part %u's region of argument %u is not inside its buffer of %llu bytes", p, a,
                         (unsigned long long)w->sizes[a]);
            else if (r->write && sp->merge[a] == RPL_MERGE_NONE)
                snprintf(why, why_cap, "part %u writes argument %u, which no merge brings back", p, a);
            for (unsigned o = 0; !why[0] && r->write && sp->merge[a] == RPL_MERGE_CONCAT && o < p; o++) {
                const rpl_split_region *s2 = &sp->parts[o].regions[a];
                if (s2->write && s2->wlo < r->whi && r->wlo < s2->whi)
                    snprintf(why, why_cap, "parts %u and %u write the same bytes of argument %u (a concatenation)", o,
                             p, a);
            }
        }
    }
    if (!why[0] && next != sp->groups)
        snprintf(why, why_cap, "the parts cover %llu of the launch's %llu work-groups", (unsigned long long)next,
                 (unsigned long long)sp->groups);
}

/* Reads bytes [@p lo, @p lo + @p n) of argument @p a's application buffer
 * into @p j's staging, *host (from the queue's device into its own pinned
 * memory, then into the other device's: each driver moves only its own
 * pinned memory at full speed; directly when @p j's is pinned there too). */
static int rpl_split_fetch(rpl_split_work *w, rpl_split_job *j, unsigned a, uint64_t lo, uint64_t n,
                           uint8_t **host)
{
    uint8_t *h = rpl_split_take(j, n);
    if (!h)
        RPL_NOMEM();
    uint8_t *stage = w->prim && !j->direct ? rpl_split_pinned(w->x, w->prim, (size_t)n) : NULL;
    cl_int e = w->x->api.clEnqueueReadBuffer(w->l->q, w->live[a], CL_TRUE, (size_t)lo, (size_t)n, stage ? stage : h,
                                             0, NULL, NULL);
    if (e == CL_SUCCESS && stage)
        memcpy(h, stage, (size_t)n);
    if (e != CL_SUCCESS) {
        if (!j->arena)
            free(h);
        RPL_CL(e, "sending a part's bytes");
    }
    *host = h;
    return 0;
}

/* The bytes of [@p lo, @p hi) on either side of what @p j's mirror @p cp
 * of argument @p a already holds of this version (the proportions moved):
 * read now, written to the mirror by the launch step. */
static int rpl_split_send_edges(rpl_split_work *w, rpl_split_job *j, unsigned a, rpl_split_copy *cp, uint64_t lo,
                                uint64_t hi)
{
    uint64_t pl[2] = {lo, cp->vhi}, ph[2] = {cp->vlo, hi};
    w->x->st.resident += rpl_min64(hi, cp->vhi) - (lo > cp->vlo ? lo : cp->vlo);
    for (unsigned q = 0; q < 2; q++) {
        if (pl[q] >= ph[q])
            continue;
        uint64_t n = ph[q] - pl[q];
        uint8_t *host;
        int st = rpl_split_fetch(w, j, a, pl[q], n, &host);
        if (st)
            return st;
        w->x->st.bytes_out += n;
        j->send[j->nsend++] = (struct rpl_split_send){cp->buf, (size_t)pl[q], (size_t)n, host, NULL};
    }
    cp->vlo = rpl_min64(cp->vlo, lo);
    cp->vhi = hi > cp->vhi ? hi : cp->vhi;
    return 0;
}

/* What part @p j on another device needs of argument @p a: its mirror,
 * the bytes its region names that the mirror does not hold of this
 * version (read now, written by the launch step), and for a diff merge
 * the previous contents of what it may write. */
static int rpl_split_send_arg(rpl_split_work *w, rpl_split_job *j, unsigned a)
{
    rpl_splitter *x = w->x;
    uint64_t size = w->sizes[a];
    if (!(j->copy[a] = rpl_split_copy_of(x, j->d, w->keys[a], size, w->err, w->cap)))
        return -1;
    rpl_split_copy *cp = j->copy[a];
    j->mems[a] = cp->buf;
    const rpl_split_region *r = &j->part->regions[a];
    uint64_t lo, hi;
    rpl_split_span(r, &lo, &hi);
    if (hi > size)
        hi = size;
    if (lo >= hi)
        return 0;
    rpl_split_epoch *ep = rpl_split_epoch_of(x, w->keys[a]);
    uint64_t epoch = ep ? ep->epoch : 0;
    int same = ep && cp->epoch == epoch && cp->gen == x->gen && cp->vlo < cp->vhi;
    int resident = same && cp->vlo <= lo && hi <= cp->vhi;
    int diff = r->write && w->sp->merge[a] == RPL_MERGE_DIFF;
    if (resident && !diff) {
        x->st.resident += hi - lo;
        return 0;
    }
    if (same && !diff && lo < cp->vhi && cp->vlo < hi)
        return rpl_split_send_edges(w, j, a, cp, lo, hi);
    uint8_t *host;
    int st = rpl_split_fetch(w, j, a, lo, hi - lo, &host);
    if (st)
        return st;
    if (!resident) {
        x->st.bytes_out += hi - lo;
        cp->epoch = epoch;
        cp->gen = x->gen;
        cp->vlo = ep ? lo : 0;   /* untrusted keys hold nothing for later */
        cp->vhi = ep ? hi : 0;
    } else {
        x->st.resident += hi - lo;
    }
    if (diff) {   /* the previous contents of what it may write */
        uint8_t *b = rpl_split_take(j, r->whi - r->wlo);
        if (!b) {
            if (!j->arena)
                free(host);
            RPL_NOMEM();
        }
        memcpy(b, host + (r->wlo - lo), (size_t)(r->whi - r->wlo));
        j->before[a] = b;
    }
    if (!resident)   /* written to the mirror by the launch step (host is freed with the job) */
        j->send[j->nsend++] = (struct rpl_split_send){cp->buf, (size_t)lo, (size_t)(hi - lo), host, NULL};
    else if (!j->arena)
        free(host);
    return 0;
}

/* Transfer: once the launch's wait list is done and its queue idle, the
 * bytes of the other devices' parts, read from the queue's device (before
 * its own parts may start: a read there would wait for them). */
static int rpl_split_step_transfer(rpl_split_work *w)
{
    rpl_splitter *x = w->x;
    const rpl_split *sp = w->sp;
    const rpl_split_launch *l = w->l;
    if (l->nwait)
        RPL_CL(x->api.clWaitForEvents(l->nwait, l->wait), "waiting for the launch's wait list");
    RPL_CL(x->api.clFinish(l->q), "clFinish before the parts");
    w->t_ready = rpl_clock_ns();
    w->prim = rpl_split_prim(x, w->qctx, w->qdev);
    if (x->api.clGetDeviceInfo(w->qdev, CL_DEVICE_PLATFORM, sizeof w->qplat, &w->qplat, NULL) != CL_SUCCESS)
        w->qplat = NULL;
    /* the queue's own parts run on a queue of ours in its context (they can
     * be timed there); the application's queue is idle until we return */
    w->pq = w->prim ? w->prim->q : l->q;
    /* the queue's own parts start now when nothing the others must be sent
     * depends on them: they run while the bytes go out */
    w->early = rpl_split_early(sp, w->jobs, w->pq != l->q);
    for (unsigned p = 0; p < sp->nparts; p++) {
        rpl_split_job *j = &w->jobs[p];
        if (!j->d)
            continue;
        j->arena = rpl_split_pinned(x, j->d, rpl_split_stage_need(sp, j->part));
        j->direct = j->arena && w->qplat && j->d->plat == w->qplat;
        int64_t ts = rpl_clock_ns();
        j->used = 0;
        for (unsigned a = 0; a < sp->nargs; a++) {
            if (sp->args[a] != RPL_SPLIT_ARG_MEM)
                continue;
            int st = rpl_split_send_arg(w, j, a);
            if (st)
                return st;
        }
        j->send_ns = rpl_clock_ns() - ts;
    }
    return 0;
}

/* Launch: the queue's own parts (first when they may start early), each
 * other device's bytes to its mirrors and then its part. */
static int rpl_split_step_launch(rpl_split_work *w)
{
    rpl_splitter *x = w->x;
    const rpl_split *sp = w->sp;
    const rpl_split_launch *l = w->l;
    cl_event *qkev = w->timed && w->prim ? w->kev : NULL;
    if (w->early)
        RPL_CL(rpl_split_local(x, sp, w->jobs, l, w->extra, w->L, w->pq, qkev), "launching the queue's device's parts");
    for (unsigned p = 0; p < sp->nparts; p++) {
        rpl_split_job *j = &w->jobs[p];
        if (!j->d)
            continue;
        int64_t ts = rpl_clock_ns();
        /* not blocking: the devices' copies run side by side, each part's
         * launch after its own on its in-order queue (the bytes live until
         * every queue is finished) */
        for (unsigned i = 0; i < j->nsend; i++)
            RPL_CL(x->api.clEnqueueWriteBuffer(j->d->q, j->send[i].buf, CL_FALSE, j->send[i].lo, j->send[i].len,
                                               j->send[i].host, 0, NULL, w->ad ? &j->send[i].ev : NULL),
                   "sending a part's bytes");
        j->send_ns += rpl_clock_ns() - ts;
        size_t off[3], gsz[3];
        rpl_split_range(sp, j, l, w->L, off, gsz);
        RPL_CL(rpl_split_args(x, j->k, sp, l, j->mems, w->extra), "setting a part's arguments");
        RPL_CL(x->api.clEnqueueNDRangeKernel(j->d->q, j->k, l->dim, off, gsz, l->has_lsz ? l->lsz : NULL, 0, NULL,
                                             w->timed ? &w->kev[p] : NULL),
               "launching a part");
        RPL_CL(x->api.clFlush(j->d->q), "clFlush");
        x->st.parts++;
    }
    w->t_sent = rpl_clock_ns();
    /* the queue's own device's parts, in place (unless they started early) */
    if (!w->early)
        RPL_CL(rpl_split_local(x, sp, w->jobs, l, w->extra, w->L, w->pq, qkev), "launching the queue's device's parts");
    return 0;
}

/* Argument @p a's parts' results written over the application's buffer
 * (their write regions are disjoint). */
static int rpl_split_merge_concat(rpl_split_work *w, unsigned a)
{
    const rpl_split *sp = w->sp;
    for (unsigned p = 0; p < sp->nparts; p++) {
        const rpl_split_region *r = &sp->parts[p].regions[a];
        rpl_split_job *j = &w->jobs[p];
        if (!j->after[a])
            continue;
        size_t len = (size_t)(r->whi - r->wlo);
        uint8_t *stage = w->prim && !j->direct ? rpl_split_pinned(w->x, w->prim, len) : NULL;
        if (stage)
            memcpy(stage, j->after[a], len);
        RPL_CL(w->x->api.clEnqueueWriteBuffer(w->l->q, w->live[a], CL_FALSE, (size_t)r->wlo, len,
                                              stage ? stage : j->after[a], 0, NULL, NULL),
               "writing a part's results back");
        w->x->st.bytes_in += r->whi - r->wlo;
    }
    return 0;
}

/* Argument @p a's bytes each other device changed, over what the queue's
 * own parts left. */
static int rpl_split_merge_diff(rpl_split_work *w, unsigned a)
{
    const rpl_split *sp = w->sp;
    rpl_split_job *jobs = w->jobs;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (unsigned p = 0; p < sp->nparts; p++)
        if (jobs[p].after[a] && jobs[p].before[a]) {
            lo = rpl_min64(lo, sp->parts[p].regions[a].wlo);
            hi = sp->parts[p].regions[a].whi > hi ? sp->parts[p].regions[a].whi : hi;
        }
    if (lo >= hi)
        return 0;
    uint8_t *cur = malloc((size_t)(hi - lo));
    if (!cur)
        RPL_NOMEM();
    cl_int e = w->x->api.clEnqueueReadBuffer(w->l->q, w->live[a], CL_TRUE, (size_t)lo, (size_t)(hi - lo), cur, 0,
                                             NULL, NULL);
    for (unsigned p = 0; e == CL_SUCCESS && p < sp->nparts; p++) {
        const rpl_split_region *r = &sp->parts[p].regions[a];
        const uint8_t *b = jobs[p].before[a], *n = jobs[p].after[a];
        if (!b || !n)
            continue;
        for (uint64_t i = 0; i < r->whi - r->wlo; i++)
            if (n[i] != b[i])
                cur[r->wlo - lo + i] = n[i];
        w->x->st.bytes_in += r->whi - r->wlo;
    }
    if (e == CL_SUCCESS)
        e = w->x->api.clEnqueueWriteBuffer(w->l->q, w->live[a], CL_TRUE, (size_t)lo, (size_t)(hi - lo), cur, 0, NULL,
                                           NULL);
    free(cur);
    RPL_CL(e, "merging a part's results");
    return 0;
}

/* Merge: what the other devices' parts wrote comes back (only once every
 * part is running: a driver may make a read block), every part finishes,
 * and the results go into the application's buffers. */
static int rpl_split_step_merge(rpl_split_work *w)
{
    rpl_splitter *x = w->x;
    const rpl_split *sp = w->sp;
    for (unsigned p = 0; p < sp->nparts; p++) {
        rpl_split_job *j = &w->jobs[p];
        for (unsigned a = 0; j->d && a < sp->nargs; a++) {
            const rpl_split_region *r = &j->part->regions[a];
            if (sp->args[a] != RPL_SPLIT_ARG_MEM || !r->write || r->whi > j->copy[a]->size)
                continue;
            if (!(j->after[a] = rpl_split_take(j, r->whi - r->wlo)))
                RPL_NOMEM();
            RPL_CL(x->api.clEnqueueReadBuffer(j->d->q, j->copy[a]->buf, CL_FALSE, (size_t)r->wlo,
                                              (size_t)(r->whi - r->wlo), j->after[a], 0, NULL,
                                              w->ad ? &j->rev[a] : NULL),
                   "reading a part's results");
        }
    }
    for (unsigned p = 0; p < sp->nparts; p++)
        if (w->jobs[p].d)
            RPL_CL(x->api.clFinish(w->jobs[p].d->q), "waiting for a part");
    if (w->pq != w->l->q)
        RPL_CL(x->api.clFinish(w->pq), "waiting for the queue's device's parts");
    w->t_parts = rpl_clock_ns();
    for (unsigned a = 0; a < sp->nargs; a++) {
        if (sp->args[a] != RPL_SPLIT_ARG_MEM || sp->merge[a] == RPL_MERGE_NONE)
            continue;
        int st = sp->merge[a] == RPL_MERGE_CONCAT ? rpl_split_merge_concat(w, a) : rpl_split_merge_diff(w, a);
        if (st)
            return st;
    }
    RPL_CL(x->api.clFinish(w->l->q), "clFinish after the parts");
    w->t_done = rpl_clock_ns();
    return 0;
}

/* The profiled duration of @p ev into *ns; 0 when it has none. */
static int rpl_split_event_ns(rpl_splitter *x, cl_event ev, double *ns)
{
    cl_ulong b = 0, e = 0;
    if (!ev || x->api.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof b, &b, NULL) != CL_SUCCESS ||
        x->api.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL) != CL_SUCCESS || e < b)
        return 0;
    *ns = (double)(e - b);
    return 1;
}

/* What each part of an adaptive split cost, then its next proportions,
 * and whether the queue's device alone would have been faster. */
static void rpl_split_adapt_next(rpl_split_work *w)
{
    rpl_splitter *x = w->x;
    const rpl_split *sp = w->sp;
    rpl_split_adapt *ad = w->ad;
    double ns[RPL_SPLIT_MAX_PARTS];
    int all = 1;
    for (unsigned p = 0; p < sp->nparts; p++) {
        const rpl_split_job *j = &w->jobs[p];
        double t = 0;
        all = all && rpl_split_event_ns(x, w->kev[p], &t);
        ns[p] = all ? t : 0;
        /* another device's part also costs its transfers: what it was
         * sent, and its results back (read there, written here: twice
         * the read) */
        for (unsigned a = 0; all && j->d && a < sp->nargs; a++)
            if (rpl_split_event_ns(x, j->rev[a], &t))
                ns[p] += 2.0 * t;
        for (unsigned i = 0; all && j->d && i < j->nsend; i++)
            if (rpl_split_event_ns(x, j->send[i].ev, &t))
                ns[p] += t;
        if (all && j->d)
            ns[p] += (double)j->send_ns;
    }
    if (!all)
        return;
    /* the queue's device alone, at the rate its parts ran, against what
     * this split took (its transfers are not in parallel with the parts):
     * after a few launches to settle the proportions, a split that loses
     * runs whole for a while */
    double qgroups = 0, qns = 0;
    for (unsigned p = 0; p < sp->nparts; p++)
        if (!w->jobs[p].d) {
            qgroups += (double)(sp->parts[p].hi - sp->parts[p].lo);
            qns += ns[p];
        }
    int whole = ad->launches >= 2 && qgroups > 0 && qns > 0 &&
                (double)sp->groups * qns / qgroups <= (double)(w->t_done - w->t_ready);
    rpl_split_refine(ad->bound, ad->nparts, sp->groups, ns, x->o.method, &ad->hist);
    ad->launches++;
    if (whole)
        ad->whole_left = RPL_SPLIT_REPROBE;
    int n = snprintf(x->st.shares, sizeof x->st.shares, "%.64s:", sp->kernel);
    for (unsigned p = 0; p < sp->nparts && n > 0 && (size_t)n < sizeof x->st.shares; p++)
        n += snprintf(x->st.shares + n, sizeof x->st.shares - (size_t)n, "%s %.32s %.1f%%", p ? "," : "",
                      sp->parts[p].device, 100.0 * (double)(ad->bound[p + 1] - ad->bound[p]) / (double)sp->groups);
    if (whole && n > 0 && (size_t)n < sizeof x->st.shares)
        snprintf(x->st.shares + n, sizeof x->st.shares - (size_t)n, "; whole on the queue's device is faster");
}

/* Learn: the launch's times into the statistics, an adaptive split's next
 * proportions, each part's kernel time to the learn callback. */
static void rpl_split_step_learn(rpl_split_work *w)
{
    rpl_splitter *x = w->x;
    x->st.wait_ns += w->t_ready - w->t0;
    x->st.send_ns += w->t_sent - w->t_ready;
    x->st.parts_ns += w->t_parts - w->t_sent;
    x->st.merge_ns += w->t_done - w->t_parts;
    if (x->st.nlaunch_ns < RPL_SPLIT_LAUNCH_TIMES)
        x->st.launch_ns[x->st.nlaunch_ns++] = w->t_done - w->t_ready;
    if (w->ad)
        rpl_split_adapt_next(w);
    if (x->o.learn)
        rpl_split_learn_costs(x, w->sp, w->jobs, w->kev, w->l, w->qdev);
}

/* Versions: what the launch wrote moved on; each other device's mirror
 * still holds what it wrote itself when the parts did not overlap. */
static void rpl_split_step_versions(rpl_split_work *w)
{
    rpl_splitter *x = w->x;
    const rpl_split *sp = w->sp;
    for (unsigned a = 0; a < sp->nargs; a++) {
        if (sp->args[a] != RPL_SPLIT_ARG_MEM || sp->merge[a] == RPL_MERGE_NONE)
            continue;
        rpl_split_epoch *ep = rpl_split_epoch_of(x, w->keys[a]);
        if (ep)
            ep->epoch++;
        for (unsigned p = 0; p < sp->nparts; p++) {
            rpl_split_copy *cp = w->jobs[p].copy[a];
            const rpl_split_region *r = &sp->parts[p].regions[a];
            if (!cp)
                continue;
            int keep = ep && sp->merge[a] == RPL_MERGE_CONCAT && r->write;
            cp->epoch = keep ? ep->epoch : 0;
            cp->gen = x->gen;
            cp->vlo = keep ? r->wlo : 0;
            cp->vhi = keep ? r->whi : 0;
        }
    }
}

/* Transfer, launch, merge, learn and versions, then the application's
 * event: a marker after everything. */
static int rpl_split_steps(rpl_split_work *w)
{
    int st = rpl_split_step_transfer(w);
    if (!st)
        st = rpl_split_step_launch(w);
    if (!st)
        st = rpl_split_step_merge(w);
    if (st)
        return st;
    rpl_split_step_learn(w);
    rpl_split_step_versions(w);
    if (w->l->event)
        RPL_CL(w->x->api.clEnqueueMarkerWithWaitList(w->l->q, 0, NULL, w->l->event),
               "the marker for the launch's event");
    w->x->st.launches++;
    return 0;
}

int rpl_splitter_run(rpl_splitter *x, const rpl_split *sp, const rpl_split_launch *l, int *done, char *err,
                     size_t cap)
{
    *done = 0;
    err[0] = 0;
    char why[256] = "";
    rpl_split_work work = {.x = x, .sp = sp, .l = l, .err = err, .cap = cap}, *w = &work;
    rpl_split_step_prepare(w, why, sizeof why);
    if (why[0])
        return rpl_split_whole(x, sp, why);   /* *done 0: the caller runs the launch as it is */
    /* a split its measurements say is slower than the queue's device alone
     * runs whole, and is measured again now and then */
    rpl_split_adapt *ad = sp->adaptive && sp->models && !x->o.fixed ? rpl_split_adapt_of(x, sp) : NULL;
    if (ad && ad->whole_left) {
        ad->whole_left--;
        x->st.declined++;
        return 0;
    }
    rpl_split_step_shares(w, ad);
    rpl_split_step_bounds(w, why, sizeof why);
    if (why[0]) {
        free(w->lrg);
        return rpl_split_whole(x, sp, why);
    }
    *done = 1;
    x->launches++;
    w->t0 = rpl_clock_ns();
    int st = rpl_split_steps(w);
    if (st < 0) {   /* transfers in flight may still use the jobs' memory */
        for (unsigned p = 0; p < w->sp->nparts; p++)
            if (w->jobs[p].d && w->jobs[p].d->q)
                x->api.clFinish(w->jobs[p].d->q);
        x->api.clFinish(l->q);
    }
    for (unsigned p = 0; p < RPL_SPLIT_MAX_PARTS; p++)
        if (w->kev[p])
            x->api.clReleaseEvent(w->kev[p]);
    rpl_split_jobs_free(x, w->jobs, w->sp->nparts, w->sp);
    free(w->lrg);
    return st;
}
