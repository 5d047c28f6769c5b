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
static void rpl_split_learn(rpl_splitter *x, const rpl_split *sp, const rpl_split_job *jobs, const cl_event *kev,
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

#define RPL_CL(call, what)                                                                                  \
    do {                                                                                                    \
        cl_int e_ = (call);                                                                                 \
        if (e_ != CL_SUCCESS) {                                                                             \
            snprintf(err, cap, "split %s over %u devices: %s failed (error %d)", sp->kernel, sp->nparts, what, \
                     (int)e_);                                                                              \
            st = -1;                                                                                        \
            goto out;                                                                                       \
        }                                                                                                   \
    } while (0)
#define RPL_NOMEM()                              \
    do {                                         \
        snprintf(err, cap, "out of memory");     \
        st = -2;                                 \
        goto out;                                \
    } while (0)

int rpl_splitter_run(rpl_splitter *x, const rpl_split *sp, const rpl_split_launch *l, int *done, char *err,
                     size_t cap)
{
    *done = 0;
    err[0] = 0;
    cl_context qctx = NULL;
    cl_device_id qdev = NULL;
    char why[256] = "";
    rpl_split_job jobs[RPL_SPLIT_MAX_PARTS];
    memset(jobs, 0, sizeof jobs);
    uint64_t L = l->has_lsz && sp->dim < l->dim ? l->lsz[sp->dim] : 1, groups = 0;
    if (sp->dim < l->dim && L)
        groups = (l->gsz[sp->dim] + L - 1) / L;
    uint64_t sizes[RPL_SPLIT_MAX_ARGS] = {0};
    cl_mem live[RPL_SPLIT_MAX_ARGS] = {0};
    uint64_t keys[RPL_SPLIT_MAX_ARGS] = {0};
    /* what must hold for the split to run here; else the launch runs whole */
    if (sp->nparts > RPL_SPLIT_MAX_PARTS || sp->nargs > RPL_SPLIT_MAX_ARGS || sp->dim >= l->dim || l->dim > 3 ||
        groups != sp->groups)
        snprintf(why, sizeof why, "the launch's shape is not the plan's");
    else if (l->nargs < sp->nargs)
        snprintf(why, sizeof why, "the kernel's arguments are not all known");
    for (unsigned a = 0; !why[0] && a < sp->nargs; a++) {
        const rpl_split_arg *g = &l->args[a];
        if (!g->set)
            snprintf(why, sizeof why, "argument %u is not set", a);
        else if (sp->args[a] == RPL_SPLIT_ARG_MEM) {
            cl_mem_object_type ty = 0;
            cl_mem_flags fl = 0;
            cl_mem parent = NULL;
            size_t size = 0;
            if (g->size != sizeof(cl_mem) || !g->value || !g->key ||
                (memcpy(&live[a], g->value, sizeof live[a]), !live[a]) ||
                x->api.clGetMemObjectInfo(live[a], CL_MEM_TYPE, sizeof ty, &ty, NULL) != CL_SUCCESS ||
                x->api.clGetMemObjectInfo(live[a], CL_MEM_FLAGS, sizeof fl, &fl, NULL) != CL_SUCCESS ||
                x->api.clGetMemObjectInfo(live[a], CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS ||
                x->api.clGetMemObjectInfo(live[a], CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) !=
                    CL_SUCCESS ||
                ty != CL_MEM_OBJECT_BUFFER || (fl & CL_MEM_USE_HOST_PTR))
                snprintf(why, sizeof why, "argument %u is not a buffer clrr can copy", a);
            sizes[a] = size;
            /* a sub-buffer's version does not move with its parent's */
            keys[a] = parent ? RPL_SPLIT_KEY_UNTRUSTED | (uint64_t)(uintptr_t)live[a] : g->key;
        }
    }
    if (!why[0] && (x->api.clGetCommandQueueInfo(l->q, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL) != CL_SUCCESS ||
                    x->api.clGetCommandQueueInfo(l->q, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL) != CL_SUCCESS))
        snprintf(why, sizeof why, "the queue's device cannot be queried");
    for (unsigned p = 0; !why[0] && p < sp->nparts; p++) {
        int primary = 0;
        char e2[200] = "";
        jobs[p].part = &sp->parts[p];
        if (rpl_split_dev_of(x, sp->parts[p].device, qdev, &jobs[p].d, &primary, e2, sizeof e2) < 0) {
            snprintf(why, sizeof why, "%s", e2);
            break;
        }
        if (primary)
            jobs[p].d = NULL;
        jobs[p].k = rpl_split_kernel(x, sp, primary ? qctx : jobs[p].d->ctx, primary ? qdev : jobs[p].d->dev, 0, e2,
                                     sizeof e2);
        if (!jobs[p].k)
            snprintf(why, sizeof why, "%s does not build on %s: %s", sp->name, sp->parts[p].device, e2);
    }
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
    *done = 1;
    x->launches++;
    int st = 0;
    int64_t t0 = rpl_clock_ns();
    /* an adaptive split runs at the proportions its earlier launches measured */
    rpl_split lsp;
    rpl_split_part lparts[RPL_SPLIT_MAX_PARTS];
    rpl_split_region *lrg = NULL;
    cl_event kev[RPL_SPLIT_MAX_PARTS] = {0};
    if (ad && (lrg = malloc((size_t)sp->nparts * sp->nargs * sizeof *lrg + 1)) != NULL) {
        rpl_split_regions(sp, ad->bound, sizes, lrg);
        for (unsigned p = 0; p < sp->nparts; p++) {
            lparts[p] = sp->parts[p];
            lparts[p].lo = ad->bound[p];
            lparts[p].hi = ad->bound[p + 1];
            lparts[p].regions = lrg + (size_t)p * sp->nargs;
            jobs[p].part = &lparts[p];
        }
        lsp = *sp;
        lsp.parts = lparts;
        sp = &lsp;
        if (ad->launches)
            x->st.adapted++;
    } else {
        ad = NULL;
    }
    int timed = ad || x->o.learn;
    cl_ulong extra[9];
    for (unsigned d = 0; d < 3; d++) {
        extra[d] = d < l->dim ? l->gsz[d] : 1;
        extra[3 + d] = d < l->dim ? l->off[d] : 0;
        extra[6 + d] = d < l->dim ? (l->has_lsz ? l->lsz[d] : 0) : 1;
    }
    if (l->nwait)
        RPL_CL(x->api.clWaitForEvents(l->nwait, l->wait), "waiting for the launch's wait list");
    RPL_CL(x->api.clFinish(l->q), "clFinish before the parts");
    int64_t t_ready = rpl_clock_ns(), t_sent = 0;
    rpl_split_dev *prim = rpl_split_prim(x, qctx, qdev);
    cl_platform_id qplat = NULL;
    if (x->api.clGetDeviceInfo(qdev, CL_DEVICE_PLATFORM, sizeof qplat, &qplat, NULL) != CL_SUCCESS)
        qplat = NULL;
    /* the queue's own parts run on a queue of ours in its context (they can
     * be timed there); the application's queue is idle until we return */
    cl_command_queue pq = prim ? prim->q : l->q;
    /* the queue's own parts start now when nothing the others must be sent
     * depends on them: they run while the bytes go out */
    int early = rpl_split_early(sp, jobs, pq != l->q);
    /* the other devices' parts: first their bytes, read from the queue's
     * device (before its own parts may start: a read there would wait for
     * them), then written to theirs, then their launches */
    for (unsigned p = 0; p < sp->nparts; p++) {
        rpl_split_job *j = &jobs[p];
        if (!j->d)
            continue;
        j->arena = rpl_split_pinned(x, j->d, rpl_split_stage_need(sp, j->part));
        j->direct = j->arena && qplat && j->d->plat == qplat;
        int64_t ts = rpl_clock_ns();
        j->used = 0;
        for (unsigned a = 0; a < sp->nargs; a++) {
            if (sp->args[a] != RPL_SPLIT_ARG_MEM)
                continue;
            uint64_t size = sizes[a];
            if (!(j->copy[a] = rpl_split_copy_of(x, j->d, keys[a], size, err, cap))) {
                st = -1;
                goto out;
            }
            rpl_split_copy *cp = j->copy[a];
            j->mems[a] = cp->buf;
            const rpl_split_region *r = &j->part->regions[a];
            uint64_t lo, hi;
            rpl_split_span(r, &lo, &hi);
            if (hi > size)
                hi = size;
            if (lo >= hi)
                continue;
            rpl_split_epoch *ep = rpl_split_epoch_of(x, keys[a]);
            uint64_t epoch = ep ? ep->epoch : 0;
            int same = ep && cp->epoch == epoch && cp->gen == x->gen && cp->vlo < cp->vhi;
            int resident = same && cp->vlo <= lo && hi <= cp->vhi;
            int diff = r->write && sp->merge[a] == RPL_MERGE_DIFF;
            if (resident && !diff) {
                x->st.resident += hi - lo;
                continue;
            }
            if (same && !diff && lo < cp->vhi && cp->vlo < hi) {
                /* the device holds part of it (the proportions moved): only
                 * the bytes on either side of what it holds go */
                uint64_t pl[2] = {lo, cp->vhi}, ph[2] = {cp->vlo, hi};
                x->st.resident += rpl_min64(hi, cp->vhi) - (lo > cp->vlo ? lo : cp->vlo);
                for (unsigned q = 0; q < 2; q++) {
                    if (pl[q] >= ph[q])
                        continue;
                    uint64_t n = ph[q] - pl[q];
                    uint8_t *host = rpl_split_take(j, n);
                    if (!host)
                        RPL_NOMEM();
                    uint8_t *stage = prim && !j->direct ? rpl_split_pinned(x, prim, (size_t)n) : NULL;
                    cl_int e = x->api.clEnqueueReadBuffer(l->q, live[a], CL_TRUE, (size_t)pl[q], (size_t)n,
                                                          stage ? stage : host, 0, NULL, NULL);
                    if (e == CL_SUCCESS && stage)
                        memcpy(host, stage, (size_t)n);
                    if (e != CL_SUCCESS) {
                        if (!j->arena)
                            free(host);
                        RPL_CL(e, "sending a part's bytes");
                    }
                    x->st.bytes_out += n;
                    j->send[j->nsend++] = (struct rpl_split_send){cp->buf, (size_t)pl[q], (size_t)n, host, NULL};
                }
                cp->vlo = rpl_min64(cp->vlo, lo);
                cp->vhi = hi > cp->vhi ? hi : cp->vhi;
                continue;
            }
            uint8_t *host = rpl_split_take(j, hi - lo);
            if (!host)
                RPL_NOMEM();
            /* from the queue's device into its own pinned memory, then into
             * the other device's (each driver moves only its own pinned
             * memory at full speed) */
            uint8_t *stage = prim && !j->direct ? rpl_split_pinned(x, prim, (size_t)(hi - lo)) : NULL;
            cl_int e = x->api.clEnqueueReadBuffer(l->q, live[a], CL_TRUE, (size_t)lo, (size_t)(hi - lo),
                                                  stage ? stage : host, 0, NULL, NULL);
            if (e == CL_SUCCESS && stage)
                memcpy(host, stage, (size_t)(hi - lo));
            if (e != CL_SUCCESS) {
                if (!j->arena)
                    free(host);
                RPL_CL(e, "sending a part's bytes");
            }
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
            if (!resident)   /* written to the mirror below (host is freed with the job) */
                j->send[j->nsend++] = (struct rpl_split_send){cp->buf, (size_t)lo, (size_t)(hi - lo), host, NULL};
            else if (!j->arena)
                free(host);
        }
        j->send_ns = rpl_clock_ns() - ts;
    }
    if (early)
        RPL_CL(rpl_split_local(x, sp, jobs, l, extra, L, pq, timed && prim ? kev : NULL),
               "launching the queue's device's parts");
    for (unsigned p = 0; p < sp->nparts; p++) {
        rpl_split_job *j = &jobs[p];
        if (!j->d)
            continue;
        int64_t ts = rpl_clock_ns();
        /* not blocking: the devices' copies run side by side, each part's
         * launch after its own on its in-order queue (the bytes live until
         * every queue is finished) */
        for (unsigned i = 0; i < j->nsend; i++)
            RPL_CL(x->api.clEnqueueWriteBuffer(j->d->q, j->send[i].buf, CL_FALSE, j->send[i].lo, j->send[i].len,
                                               j->send[i].host, 0, NULL, ad ? &j->send[i].ev : NULL),
                   "sending a part's bytes");
        j->send_ns += rpl_clock_ns() - ts;
        size_t off[3], gsz[3];
        rpl_split_range(sp, j, l, L, off, gsz);
        RPL_CL(rpl_split_args(x, j->k, sp, l, j->mems, extra), "setting a part's arguments");
        RPL_CL(x->api.clEnqueueNDRangeKernel(j->d->q, j->k, l->dim, off, gsz, l->has_lsz ? l->lsz : NULL, 0, NULL,
                                             timed ? &kev[p] : NULL),
               "launching a part");
        RPL_CL(x->api.clFlush(j->d->q), "clFlush");
        x->st.parts++;
    }
    t_sent = rpl_clock_ns();
    /* the queue's own device's parts, in place (unless they started early) */
    if (!early)
        RPL_CL(rpl_split_local(x, sp, jobs, l, extra, L, pq, timed && prim ? kev : NULL),
               "launching the queue's device's parts");
    /* then what the other devices' parts write comes back (only once every
     * part is running: a driver may make a read block) */
    for (unsigned p = 0; p < sp->nparts; p++) {
        rpl_split_job *j = &jobs[p];
        for (unsigned a = 0; j->d && a < sp->nargs; a++) {
            const rpl_split_region *r = &j->part->regions[a];
            if (sp->args[a] != RPL_SPLIT_ARG_MEM || !r->write || r->whi > j->copy[a]->size)
                continue;
            if (!(j->after[a] = rpl_split_take(j, r->whi - r->wlo)))
                RPL_NOMEM();
            RPL_CL(x->api.clEnqueueReadBuffer(j->d->q, j->copy[a]->buf, CL_FALSE, (size_t)r->wlo,
                                              (size_t)(r->whi - r->wlo), j->after[a], 0, NULL, ad ? &j->rev[a] : NULL),
                   "reading a part's results");
        }
    }
    for (unsigned p = 0; p < sp->nparts; p++)
        if (jobs[p].d)
            RPL_CL(x->api.clFinish(jobs[p].d->q), "waiting for a part");
    if (pq != l->q)
        RPL_CL(x->api.clFinish(pq), "waiting for the queue's device's parts");
    int64_t t_parts = rpl_clock_ns();
    /* the results, into the application's buffers */
    for (unsigned a = 0; a < sp->nargs; a++) {
        if (sp->args[a] != RPL_SPLIT_ARG_MEM || sp->merge[a] == RPL_MERGE_NONE)
            continue;
        if (sp->merge[a] == RPL_MERGE_CONCAT) {
            for (unsigned p = 0; p < sp->nparts; p++) {
                const rpl_split_region *r = &sp->parts[p].regions[a];
                if (!jobs[p].after[a])
                    continue;
                size_t len = (size_t)(r->whi - r->wlo);
                uint8_t *stage = prim && !jobs[p].direct ? rpl_split_pinned(x, prim, len) : NULL;
                if (stage)
                    memcpy(stage, jobs[p].after[a], len);
                RPL_CL(x->api.clEnqueueWriteBuffer(l->q, live[a], CL_FALSE, (size_t)r->wlo, len,
                                                   stage ? stage : jobs[p].after[a], 0, NULL, NULL),
                       "writing a part's results back");
                x->st.bytes_in += r->whi - r->wlo;
            }
            continue;
        }
        /* diff: the bytes each other device changed, over what the queue's
         * own parts left */
        uint64_t lo = UINT64_MAX, hi = 0;
        for (unsigned p = 0; p < sp->nparts; p++)
            if (jobs[p].after[a] && jobs[p].before[a]) {
                lo = rpl_min64(lo, sp->parts[p].regions[a].wlo);
                hi = sp->parts[p].regions[a].whi > hi ? sp->parts[p].regions[a].whi : hi;
            }
        if (lo >= hi)
            continue;
        uint8_t *cur = malloc((size_t)(hi - lo));
        if (!cur)
            RPL_NOMEM();
        cl_int e = x->api.clEnqueueReadBuffer(l->q, live[a], CL_TRUE, (size_t)lo, (size_t)(hi - lo), cur, 0, NULL,
                                              NULL);
        for (unsigned p = 0; e == CL_SUCCESS && p < sp->nparts; p++) {
            const rpl_split_region *r = &sp->parts[p].regions[a];
            const uint8_t *b = jobs[p].before[a], *n = jobs[p].after[a];
            if (!b || !n)
                continue;
            for (uint64_t i = 0; i < r->whi - r->wlo; i++)
                if (n[i] != b[i])
                    cur[r->wlo - lo + i] = n[i];
            x->st.bytes_in += r->whi - r->wlo;
        }
        if (e == CL_SUCCESS)
            e = x->api.clEnqueueWriteBuffer(l->q, live[a], CL_TRUE, (size_t)lo, (size_t)(hi - lo), cur, 0, NULL,
                                            NULL);
        free(cur);
        RPL_CL(e, "merging a part's results");
    }
    RPL_CL(x->api.clFinish(l->q), "clFinish after the parts");
    int64_t t_done = rpl_clock_ns();
    x->st.wait_ns += t_ready - t0;
    x->st.send_ns += t_sent - t_ready;
    x->st.parts_ns += t_parts - t_sent;
    x->st.merge_ns += t_done - t_parts;
    if (x->st.nlaunch_ns < RPL_SPLIT_LAUNCH_TIMES)
        x->st.launch_ns[x->st.nlaunch_ns++] = t_done - t_ready;
    if (ad) {   /* what each part cost, then the next proportions */
        double ns[RPL_SPLIT_MAX_PARTS];
        int all = 1;
        for (unsigned p = 0; p < sp->nparts; p++) {
            cl_ulong b = 0, e = 0;
            all = all && kev[p] &&
                  x->api.clGetEventProfilingInfo(kev[p], CL_PROFILING_COMMAND_START, sizeof b, &b, NULL) == CL_SUCCESS &&
                  x->api.clGetEventProfilingInfo(kev[p], CL_PROFILING_COMMAND_END, sizeof e, &e, NULL) == CL_SUCCESS &&
                  e >= b;
            ns[p] = all ? (double)(e - b) : 0;
            /* another device's part also costs its transfers: what it was
             * sent, and its results back (read there, written here: twice
             * the read) */
            for (unsigned a = 0; all && jobs[p].d && a < sp->nargs; a++)
                if (jobs[p].rev[a] &&
                    x->api.clGetEventProfilingInfo(jobs[p].rev[a], CL_PROFILING_COMMAND_START, sizeof b, &b, NULL) ==
                        CL_SUCCESS &&
                    x->api.clGetEventProfilingInfo(jobs[p].rev[a], CL_PROFILING_COMMAND_END, sizeof e, &e, NULL) ==
                        CL_SUCCESS &&
                    e >= b)
                    ns[p] += 2.0 * (double)(e - b);
            for (unsigned i = 0; all && jobs[p].d && i < jobs[p].nsend; i++)
                if (jobs[p].send[i].ev &&
                    x->api.clGetEventProfilingInfo(jobs[p].send[i].ev, CL_PROFILING_COMMAND_START, sizeof b, &b, NULL) ==
                        CL_SUCCESS &&
                    x->api.clGetEventProfilingInfo(jobs[p].send[i].ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL) ==
                        CL_SUCCESS &&
                    e >= b)
                    ns[p] += (double)(e - b);
            if (all && jobs[p].d)
                ns[p] += (double)jobs[p].send_ns;
        }
        if (all) {
            /* the queue's device alone, at the rate its parts ran, against
             * what this split took (its transfers are not in parallel with
             * the parts): after a few launches to settle the proportions, a
             * split that loses runs whole for a while */
            double qgroups = 0, qns = 0;
            for (unsigned p = 0; p < sp->nparts; p++)
                if (!jobs[p].d) {
                    qgroups += (double)(sp->parts[p].hi - sp->parts[p].lo);
                    qns += ns[p];
                }
            int whole = ad->launches >= 2 && qgroups > 0 && qns > 0 &&
                        (double)sp->groups * qns / qgroups <= (double)(t_done - t_ready);
            rpl_split_refine(ad->bound, ad->nparts, sp->groups, ns, x->o.method, &ad->hist);
            ad->launches++;
            if (whole)
                ad->whole_left = RPL_SPLIT_REPROBE;
            int n = snprintf(x->st.shares, sizeof x->st.shares, "%.64s:", sp->kernel);
            for (unsigned p = 0; p < sp->nparts && n > 0 && (size_t)n < sizeof x->st.shares; p++)
                n += snprintf(x->st.shares + n, sizeof x->st.shares - (size_t)n, "%s %.32s %.1f%%", p ? "," : "",
                              sp->parts[p].device,
                              100.0 * (double)(ad->bound[p + 1] - ad->bound[p]) / (double)sp->groups);
            if (whole && n > 0 && (size_t)n < sizeof x->st.shares)
                snprintf(x->st.shares + n, sizeof x->st.shares - (size_t)n, "; whole on the queue's device is faster");
        }
    }
    if (x->o.learn)
        rpl_split_learn(x, sp, jobs, kev, l, qdev);
    /* versions: what the launch wrote moved on; each other device's mirror
     * still holds what it wrote itself when the parts did not overlap */
    for (unsigned a = 0; a < sp->nargs; a++) {
        if (sp->args[a] != RPL_SPLIT_ARG_MEM || sp->merge[a] == RPL_MERGE_NONE)
            continue;
        rpl_split_epoch *ep = rpl_split_epoch_of(x, keys[a]);
        if (ep)
            ep->epoch++;
        for (unsigned p = 0; p < sp->nparts; p++) {
            rpl_split_copy *cp = jobs[p].copy[a];
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
    /* the application's event: a marker after everything */
    if (l->event)
        RPL_CL(x->api.clEnqueueMarkerWithWaitList(l->q, 0, NULL, l->event), "the marker for the launch's event");
    x->st.launches++;
out:
    if (st < 0) {   /* transfers in flight may still use the jobs' memory */
        for (unsigned p = 0; p < sp->nparts; p++)
            if (jobs[p].d && jobs[p].d->q)
                x->api.clFinish(jobs[p].d->q);
        x->api.clFinish(l->q);
    }
    for (unsigned p = 0; p < RPL_SPLIT_MAX_PARTS; p++)
        if (kev[p])
            x->api.clReleaseEvent(kev[p]);
    rpl_split_jobs_free(x, jobs, sp->nparts, sp);
    free(lrg);
    return st;
}
