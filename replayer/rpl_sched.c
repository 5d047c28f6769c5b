/* rpl_sched.c — a plan's schedule (1.8) in the replay session: the queues
 * the plan names (by creation order, rpl_plan_hook.lanes_of) get lanes
 * (rpl_lanes.c), and every command enqueued on them is routed from the
 * generated call (rpl_lane_pre / rpl_lane_post; an enqueue without a wait
 * list, such as clEnqueueBarrier, rpl_sched_join / _joined): writes to lane 1, reads
 * to lane 2, the rest stays on the queue; each command's memory from its
 * arguments (kernels: every memory argument, read and written; rect and
 * image transfers: the whole object). Commands the plan's own paths
 * enqueue (fused and held launches, splits, markers) are bracketed by
 * rpl_sched_join / rpl_sched_joined. */
#include "replayer/rpl_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rpl_sched_q {
    cl_command_queue q;
    rpl_lanes *L;
};

static void *rpl_sched_lookup(void *user, const char *name)
{
    return dlsym(((rpl_session *)user)->libcl, name);
}

rpl_lanes *rpl_sched_lanes(rpl_session *s, cl_command_queue q)
{
    for (size_t i = 0; q && i < s->nsq; i++)
        if (s->sq[i].q == q)
            return s->sq[i].L;
    return NULL;
}

static void rpl_sched_note(rpl_session *s, const char *why)
{
    if (!s->sum.plan_lane_note[0])
        snprintf(s->sum.plan_lane_note, sizeof s->sum.plan_lane_note, "%s", why);
}

/* 1 when @p q's device shares the host's memory (a CPU, most integrated
 * GPUs): there a transfer is a copy by the host's cores, which lanes only
 * set against the kernels on the same cores (PoCL, 2 cores: 0.76-0.97x). */
static int rpl_sched_unified(rpl_session *s, cl_command_queue q)
{
    cl_device_id dev = NULL;
    cl_bool uni = CL_FALSE;
    return s->api.clGetCommandQueueInfo && s->api.clGetDeviceInfo &&
           s->api.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) == CL_SUCCESS &&
           s->api.clGetDeviceInfo(dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof uni, &uni, NULL) == CL_SUCCESS && uni;
}

int rpl_sched_queue_created(rpl_session *s, cl_command_queue q)
{
    uint64_t k = s->nqueues++;
    if (!q || !s->o.plan || !s->o.plan->lanes_of || s->o.exact_calls)
        return RPL_OK;
    unsigned n = s->o.lanes == RPL_LANES_OFF ? 0 : s->o.plan->lanes_of(s->o.plan->user, k);
    if (!n)
        return RPL_OK;
    if (s->o.lanes == RPL_LANES_AUTO && rpl_sched_unified(s, q)) {
        char why[160];
        snprintf(why, sizeof why, "queue %llu: its device shares the host's memory (its copies are the host's; "
                 "--lanes always)", (unsigned long long)k);
        rpl_sched_note(s, why);
        return RPL_OK;
    }
    struct rpl_sched_q *a = realloc(s->sq, (s->nsq + 1) * sizeof *a);
    if (!a)
        return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
    s->sq = a;
    char err[256];
    rpl_lanes *L = rpl_lanes_new(rpl_sched_lookup, s, q, n, err, sizeof err);
    if (!L) {   /* the queue runs as it is */
        char why[320];
        snprintf(why, sizeof why, "queue %llu: %s", (unsigned long long)k, err);
        rpl_sched_note(s, why);
        return RPL_OK;
    }
    s->sq[s->nsq++] = (struct rpl_sched_q){q, L};
    s->sum.plan_lane_queues++;
    return RPL_OK;
}

/* Adds @p L's counts to @p sum (when its lanes go, and for a summary). */
static void rpl_sched_sum(rpl_summary *sum, const rpl_lanes *L)
{
    const rpl_lanes_stats *st = rpl_lanes_get_stats(L);
    sum->plan_lane_moved += st->moved;
    sum->plan_lane_waits += st->waits;
    sum->plan_lane_joins += st->joins;
}

void rpl_sched_queue_released(rpl_session *s, cl_command_queue q)
{
    for (size_t i = 0; i < s->nsq; i++)
        if (s->sq[i].q == q) {
            rpl_sched_sum(&s->sum, s->sq[i].L);
            rpl_lanes_free(s->sq[i].L);
            s->sq[i] = s->sq[--s->nsq];
            return;
        }
}

void rpl_sched_free(rpl_session *s)
{
    for (size_t i = 0; i < s->nsq; i++) {
        rpl_sched_sum(&s->sum, s->sq[i].L);
        rpl_lanes_free(s->sq[i].L);
    }
    free(s->sq);
    s->sq = NULL;
    s->nsq = 0;
}

/* A launch's memory: every memory argument, read and written (the
 * plan's kernel facts could say less; a launch is rarely what a transfer
 * would overlap with otherwise); 0 (everything) when one cannot be named
 * or SVM is in use (pointers hidden in any argument). */
static unsigned rpl_sched_kernel(rpl_cx *x, rpl_lanes *L, rpl_access *acc)
{
    rpl_session *s = x->s;
    rpl_obj *k = rpl_obj_find(s, rpl_arg_id(x, 1));
    if (!k)
        return 0;
    for (size_t i = 0; i < s->nregions; i++)
        if (s->regions[i].kind == RPL_REGION_SVM)
            return 0;
    unsigned n = 0;
    for (unsigned i = 0; i < RPL_MAX_KARGS; i++) {
        rpl_obj *m = k->args[i] ? rpl_obj_find(s, k->args[i]) : NULL;
        if (k->args[i] && !m)
            return 0;
        if (m)
            rpl_lanes_mem(L, m->live, 0, UINT64_MAX, 1, &acc[n++]);
    }
    return n;
}

/* The lane of function @p fn's commands. */
static unsigned rpl_sched_lane(unsigned fn)
{
    switch (fn) {
    case RPL_FN_clEnqueueWriteBuffer: case RPL_FN_clEnqueueWriteBufferRect: case RPL_FN_clEnqueueWriteImage:
        return 1;
    case RPL_FN_clEnqueueReadBuffer: case RPL_FN_clEnqueueReadBufferRect: case RPL_FN_clEnqueueReadImage:
        return 2;
    default:
        return 0;
    }
}

static int rpl_sched_live(rpl_cx *x, unsigned i, cl_mem *m)
{
    rpl_obj *o = rpl_obj_find(x->s, rpl_arg_id(x, i));
    *m = o ? o->live : NULL;
    return o != NULL;
}

/* A transfer's or copy's memory: the whole object for rects and images. */
static unsigned rpl_sched_xfer(rpl_cx *x, rpl_lanes *L, rpl_access *acc)
{
    cl_mem a = NULL, b = NULL;
    uint64_t off = 0, size = 0;
    switch (x->fn) {
    case RPL_FN_clEnqueueWriteBuffer: case RPL_FN_clEnqueueReadBuffer:
        if (!rpl_sched_live(x, 1, &a) || !tf_value_u64(&x->c->args[3], &off) ||
            !tf_value_u64(&x->c->args[4], &size) || off > UINT64_MAX - size)
            return 0;
        rpl_lanes_mem(L, a, off, off + size, x->fn == RPL_FN_clEnqueueReadBuffer ? 0 : 1, &acc[0]);
        return 1;
    case RPL_FN_clEnqueueWriteBufferRect: case RPL_FN_clEnqueueWriteImage: case RPL_FN_clEnqueueFillBuffer:
    case RPL_FN_clEnqueueFillImage:
        if (!rpl_sched_live(x, 1, &a))
            return 0;
        rpl_lanes_mem(L, a, 0, UINT64_MAX, 1, &acc[0]);
        return 1;
    case RPL_FN_clEnqueueReadBufferRect: case RPL_FN_clEnqueueReadImage:
        if (!rpl_sched_live(x, 1, &a))
            return 0;
        rpl_lanes_mem(L, a, 0, UINT64_MAX, 0, &acc[0]);
        return 1;
    case RPL_FN_clEnqueueMapBuffer: case RPL_FN_clEnqueueMapImage: case RPL_FN_clEnqueueUnmapMemObject:
        if (!rpl_sched_live(x, 1, &a))
            return 0;
        rpl_lanes_mem(L, a, 0, UINT64_MAX, 1, &acc[0]);
        return 1;
    case RPL_FN_clEnqueueCopyBuffer: case RPL_FN_clEnqueueCopyBufferRect: case RPL_FN_clEnqueueCopyImage:
    case RPL_FN_clEnqueueCopyImageToBuffer: case RPL_FN_clEnqueueCopyBufferToImage:
        if (!rpl_sched_live(x, 1, &a) || !rpl_sched_live(x, 2, &b))
            return 0;
        rpl_lanes_mem(L, a, 0, UINT64_MAX, 0, &acc[0]);
        rpl_lanes_mem(L, b, 0, UINT64_MAX, 1, &acc[1]);
        return 2;
    default:
        return 0;
    }
}

int rpl_lane_pre(rpl_cx *x, cl_command_queue *q, cl_uint *nwait, const cl_event **wait)
{
    rpl_lanes *L = rpl_sched_lanes(x->s, *q);
    if (!L)
        return RPL_OK;
    rpl_access acc[RPL_MAX_KARGS];
    unsigned n = x->fn == RPL_FN_clEnqueueNDRangeKernel || x->fn == RPL_FN_clEnqueueTask ? rpl_sched_kernel(x, L, acc)
                                                                                         : rpl_sched_xfer(x, L, acc);
    unsigned lane = n ? rpl_sched_lane(x->fn) : 0;
    x->lanes = L;
    if (rpl_lanes_route(L, lane, acc, n, *nwait, *wait, &x->lane_cmd) < 0) {
        x->lanes = NULL;
        return rpl_set_error(x->s, RPL_ERR_NOMEM, "out of memory");
    }
    *q = x->lane_cmd.q;
    *nwait = x->lane_cmd.nwait;
    *wait = x->lane_cmd.wait;
    return RPL_OK;
}

int rpl_lane_post(rpl_cx *x, int ok, cl_event ev)
{
    rpl_lanes *L = x->lanes;
    if (!L)
        return RPL_OK;
    x->lanes = NULL;
    if (rpl_lanes_done(L, &x->lane_cmd, ok ? ev : NULL) < 0)
        return rpl_set_error(x->s, RPL_ERR_NOMEM, "out of memory");
    return RPL_OK;
}

int rpl_sched_join(rpl_session *s, cl_command_queue q)
{
    rpl_lanes *L = rpl_sched_lanes(s, q);
    if (L && rpl_lanes_join(L) < 0)
        return rpl_set_error(s, RPL_ERR_CL, "a barrier between a queue and its lanes failed");
    return RPL_OK;
}

int rpl_sched_joined(rpl_session *s, cl_command_queue q)
{
    rpl_lanes *L = rpl_sched_lanes(s, q);
    if (L && rpl_lanes_joined(L) < 0)
        return rpl_set_error(s, RPL_ERR_CL, "a marker between a queue and its lanes failed");
    return RPL_OK;
}

int rpl_sched_sync(rpl_cx *x, cl_command_queue q, int finish)
{
    rpl_lanes *L = rpl_sched_lanes(x->s, q);
    if (L && (finish ? rpl_lanes_finish(L) : rpl_lanes_flush(L)) < 0)
        return rpl_call_error(x, RPL_ERR_CL, "%s of the queue's lanes failed", finish ? "clFinish" : "clFlush");
    return RPL_OK;
}

void rpl_sched_summary(const rpl_session *s, rpl_summary *out)
{
    for (size_t i = 0; i < s->nsq; i++)
        rpl_sched_sum(out, s->sq[i].L);
    rpl_pin_stats(s, &out->plan_lane_pinned, &out->plan_lane_unpinned, &out->plan_lane_pin_evicted);
}
