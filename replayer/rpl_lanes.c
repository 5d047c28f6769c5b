/* rpl_lanes.c — an in-order queue's commands over lanes (plan 1.8,
 * "schedule"): lane 0 is the queue itself, lanes 1 and 2 are queues of
 * ours on its context and device, for uploads and downloads. Each lane
 * runs in order; a command waits for the newest command of each other
 * lane whose memory it conflicts with (same root object, overlapping
 * bytes, one of the two writes). Every conflicting pair of commands
 * therefore runs in the order the application enqueued them, and the
 * rest may overlap: what an in-order queue promises about memory, kept,
 * without its total order.
 *
 * A lane keeps its commands that may still run (their events and
 * accesses). Past RPL_LANE_KEEP of them, those complete are forgotten, and
 * if none is, the oldest half becomes one entry that conflicts with
 * everything (its newest event): fewer overlaps, never a missed conflict.
 *
 * A wait on an event of another queue needs that queue flushed (OpenCL
 * 1.2, 5.13): lanes 1 and 2 are flushed after each command (they carry
 * transfers, few and large), lane 0 before a command of another lane waits
 * for one of its commands. */
#include "replayer/rpl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RPL_LANE_KEEP 64

typedef struct rpl_lane_ent {
    cl_event ev;              /* we hold one reference */
    unsigned nacc;
    rpl_access *acc;          /* owned; NULL with nacc 0: conflicts with everything */
} rpl_lane_ent;

typedef struct rpl_lane {
    cl_command_queue q;
    rpl_lane_ent *e;          /* oldest first */
    size_t n, cap;
    int unflushed;            /* commands enqueued since its last flush */
} rpl_lane;

typedef cl_int (*rpl_ln_flush_fn)(cl_command_queue);
typedef cl_int (*rpl_ln_event_fn)(cl_event);
typedef cl_int (*rpl_ln_evinfo_fn)(cl_event, cl_event_info, size_t, void *, size_t *);
typedef cl_int (*rpl_ln_meminfo_fn)(cl_mem, cl_mem_info, size_t, void *, size_t *);
typedef cl_int (*rpl_ln_qinfo_fn)(cl_command_queue, cl_command_queue_info, size_t, void *, size_t *);
typedef cl_int (*rpl_ln_barrier_fn)(cl_command_queue, cl_uint, const cl_event *, cl_event *);
typedef cl_command_queue (*rpl_ln_cq_fn)(cl_context, cl_device_id, cl_command_queue_properties, cl_int *);
typedef cl_command_queue (*rpl_ln_cqp_fn)(cl_context, cl_device_id, const cl_queue_properties *, cl_int *);

struct rpl_lanes {
    unsigned n;               /* lanes, 2 or 3 */
    rpl_lane lane[RPL_LANES_MAX];
    rpl_ln_flush_fn flush, finish, release_q;
    rpl_ln_event_fn retain_ev, release_ev;
    rpl_ln_evinfo_fn evinfo;
    rpl_ln_meminfo_fn meminfo;
    rpl_ln_barrier_fn barrier, marker;
    rpl_lanes_stats st;
};

static int rpl_ln_conflict(const rpl_access *a, unsigned na, const rpl_lane_ent *e)
{
    if (!e->acc || !na)
        return 1;
    for (unsigned i = 0; i < na; i++) {
        if (!a[i].root)
            return 1;
        for (unsigned j = 0; j < e->nacc; j++) {
            const rpl_access *b = &e->acc[j];
            if (!b->root || (b->root == a[i].root && (a[i].write || b->write) && a[i].lo < b->hi && b->lo < a[i].hi))
                return 1;
        }
    }
    return 0;
}

static void rpl_ln_drop(rpl_lanes *L, rpl_lane_ent *e)
{
    if (e->ev)
        L->release_ev(e->ev);
    free(e->acc);
    *e = (rpl_lane_ent){0};
}

/* Forgets @p lane's completed commands; past the cap, folds the oldest half. */
static void rpl_ln_prune(rpl_lanes *L, rpl_lane *ln)
{
    size_t k = 0;
    while (k < ln->n) {
        cl_int st = CL_QUEUED;
        if (L->evinfo(ln->e[k].ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS ||
            st > CL_COMPLETE)
            break;
        rpl_ln_drop(L, &ln->e[k++]);
    }
    if (k < ln->n / 2) {   /* mostly still running: fold the oldest half into its newest */
        size_t h = ln->n / 2;
        for (size_t i = k; i + 1 < h; i++)
            rpl_ln_drop(L, &ln->e[i]);
        free(ln->e[h - 1].acc);
        ln->e[h - 1].acc = NULL;
        ln->e[h - 1].nacc = 0;
        k = h - 1;
        L->st.folded++;
    }
    memmove(ln->e, ln->e + k, (ln->n - k) * sizeof *ln->e);
    ln->n -= k;
}

rpl_lanes *rpl_lanes_new(void *(*lookup)(void *user, const char *name), void *user, cl_command_queue q,
                         unsigned nlanes, char *err, size_t cap)
{
    rpl_lanes *L = calloc(1, sizeof *L);
    if (!L) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    L->n = nlanes < 2 ? 2 : nlanes > RPL_LANES_MAX ? RPL_LANES_MAX : nlanes;
    L->flush = (rpl_ln_flush_fn)lookup(user, "clFlush");
    L->finish = (rpl_ln_flush_fn)lookup(user, "clFinish");
    L->release_q = (rpl_ln_flush_fn)lookup(user, "clReleaseCommandQueue");
    L->retain_ev = (rpl_ln_event_fn)lookup(user, "clRetainEvent");
    L->release_ev = (rpl_ln_event_fn)lookup(user, "clReleaseEvent");
    L->evinfo = (rpl_ln_evinfo_fn)lookup(user, "clGetEventInfo");
    L->meminfo = (rpl_ln_meminfo_fn)lookup(user, "clGetMemObjectInfo");
    L->barrier = (rpl_ln_barrier_fn)lookup(user, "clEnqueueBarrierWithWaitList");
    L->marker = (rpl_ln_barrier_fn)lookup(user, "clEnqueueMarkerWithWaitList");
    rpl_ln_qinfo_fn qinfo = (rpl_ln_qinfo_fn)lookup(user, "clGetCommandQueueInfo");
    rpl_ln_cqp_fn cqp = (rpl_ln_cqp_fn)lookup(user, "clCreateCommandQueueWithProperties");
    rpl_ln_cq_fn cq = (rpl_ln_cq_fn)lookup(user, "clCreateCommandQueue");
    if (!L->flush || !L->finish || !L->release_q || !L->retain_ev || !L->release_ev || !L->evinfo || !L->meminfo ||
        !L->barrier || !L->marker || !qinfo || (!cqp && !cq)) {
        snprintf(err, cap, "the OpenCL runtime here lacks a function that lanes need (OpenCL 1.2)");
        free(L);
        return NULL;
    }
    cl_context ctx = NULL;
    cl_device_id dev = NULL;
    cl_command_queue_properties props = 0;
    if (qinfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS ||
        qinfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS ||
        qinfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL) != CL_SUCCESS) {
        snprintf(err, cap, "the queue's context, device or properties cannot be queried");
        free(L);
        return NULL;
    }
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
        snprintf(err, cap, "the queue executes out of order");
        free(L);
        return NULL;
    }
    L->lane[0].q = q;
    for (unsigned i = 1; i < L->n; i++) {
        cl_int e = CL_SUCCESS;
        cl_queue_properties p[] = {CL_QUEUE_PROPERTIES, props & CL_QUEUE_PROFILING_ENABLE, 0};
        L->lane[i].q = cqp ? cqp(ctx, dev, p, &e) : cq(ctx, dev, props & CL_QUEUE_PROFILING_ENABLE, &e);
        if (!L->lane[i].q || e != CL_SUCCESS) {
            snprintf(err, cap, "a lane's queue cannot be created (error %d)", (int)e);
            L->lane[i].q = NULL;
            rpl_lanes_free(L);
            return NULL;
        }
    }
    return L;
}

void rpl_lanes_free(rpl_lanes *L)
{
    if (!L)
        return;
    for (unsigned i = 0; i < L->n; i++) {
        rpl_lane *ln = &L->lane[i];
        if (i && ln->q) {
            L->finish(ln->q);
            L->release_q(ln->q);
        }
        for (size_t k = 0; k < ln->n; k++)
            rpl_ln_drop(L, &ln->e[k]);
        free(ln->e);
    }
    free(L);
}

void rpl_lanes_mem(rpl_lanes *L, cl_mem m, uint64_t lo, uint64_t hi, int write, rpl_access *out)
{
    cl_mem parent = NULL;
    size_t off = 0;
    *out = (rpl_access){m, lo, hi, (uint8_t)(write != 0)};
    if (L->meminfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) != CL_SUCCESS || !parent)
        return;
    cl_mem_object_type t = 0;
    if (L->meminfo(m, CL_MEM_TYPE, sizeof t, &t, NULL) == CL_SUCCESS && t == CL_MEM_OBJECT_BUFFER &&
        L->meminfo(m, CL_MEM_OFFSET, sizeof off, &off, NULL) == CL_SUCCESS && lo <= UINT64_MAX - off &&
        hi <= UINT64_MAX - off)
        *out = (rpl_access){parent, lo + off, hi + off, out->write};
    else   /* an image of a buffer: any of the buffer's bytes */
        *out = (rpl_access){parent, 0, UINT64_MAX, out->write};
}

int rpl_lanes_route(rpl_lanes *L, unsigned lane, const rpl_access *acc, unsigned nacc, cl_uint nwait,
                    const cl_event *wait, rpl_lane_cmd *c)
{
    memset(c, 0, sizeof *c);
    if (lane >= L->n)
        lane = L->n - 1;
    c->lane = lane;
    c->q = L->lane[lane].q;
    c->nacc = nacc;
    if (nacc && !(c->acc = malloc(nacc * sizeof *c->acc)))
        return -1;
    if (nacc)
        memcpy(c->acc, acc, nacc * sizeof *acc);
    c->buf = malloc((nwait + RPL_LANES_MAX) * sizeof *c->buf);
    if (!c->buf) {
        free(c->acc);
        c->acc = NULL;
        return -1;
    }
    if (nwait)
        memcpy(c->buf, wait, nwait * sizeof *wait);
    c->nwait = nwait;
    for (unsigned i = 0; i < L->n; i++) {
        rpl_lane *ln = &L->lane[i];
        if (i == lane)
            continue;
        for (size_t k = ln->n; k-- > 0;)
            if (rpl_ln_conflict(c->acc, nacc, &ln->e[k])) {
                c->buf[c->nwait++] = ln->e[k].ev;
                if (ln->unflushed) {
                    L->flush(ln->q);
                    ln->unflushed = 0;
                }
                L->st.waits++;
                break;
            }
    }
    c->wait = c->nwait ? c->buf : NULL;
    return 0;
}

/* Records the command on its lane (takes @p acc: owned, may be NULL). */
static int rpl_ln_push(rpl_lanes *L, unsigned lane, cl_event ev, rpl_access *acc, unsigned nacc)
{
    rpl_lane *ln = &L->lane[lane];
    if (ln->n >= RPL_LANE_KEEP)
        rpl_ln_prune(L, ln);
    if (ln->n == ln->cap) {
        size_t cap = ln->cap ? ln->cap * 2 : 16;
        rpl_lane_ent *e = realloc(ln->e, cap * sizeof *e);
        if (!e) {
            free(acc);
            return -1;
        }
        ln->e = e;
        ln->cap = cap;
    }
    L->retain_ev(ev);
    ln->e[ln->n++] = (rpl_lane_ent){ev, acc ? nacc : 0, acc};
    if (lane) {
        L->flush(ln->q);
        L->st.moved++;
    } else {
        ln->unflushed = 1;
    }
    return 0;
}

int rpl_lanes_done(rpl_lanes *L, rpl_lane_cmd *c, cl_event ev)
{
    rpl_access *acc = c->acc;   /* (NULL with nacc 0: everything) */
    free(c->buf);
    c->buf = NULL;
    c->acc = NULL;
    if (ev)
        return rpl_ln_push(L, c->lane, ev, acc, c->nacc);
    free(acc);
    return 0;
}

int rpl_lanes_join(rpl_lanes *L)
{
    cl_event w[RPL_LANES_MAX];
    cl_uint n = 0;
    for (unsigned i = 1; i < L->n; i++)
        if (L->lane[i].n)
            w[n++] = L->lane[i].e[L->lane[i].n - 1].ev;
    if (!n)
        return 0;
    L->st.joins++;
    return L->barrier(L->lane[0].q, n, w, NULL) == CL_SUCCESS ? 0 : -1;
}

int rpl_lanes_joined(rpl_lanes *L)
{
    cl_event ev = NULL;
    /* (even with the lanes empty: a later upload or download must wait for it) */
    if (L->marker(L->lane[0].q, 0, NULL, &ev) != CL_SUCCESS)
        return -1;
    int st = rpl_ln_push(L, 0, ev, NULL, 0);
    L->release_ev(ev);
    return st;
}

int rpl_lanes_flush(rpl_lanes *L)
{
    int st = 0;
    for (unsigned i = 1; i < L->n; i++)
        if (L->flush(L->lane[i].q) != CL_SUCCESS)
            st = -1;
    return st;
}

int rpl_lanes_finish(rpl_lanes *L)
{
    int st = 0;
    if (L->lane[0].unflushed && L->flush(L->lane[0].q) != CL_SUCCESS)
        st = -1;
    L->lane[0].unflushed = 0;
    for (unsigned i = 1; i < L->n; i++)
        if (L->finish(L->lane[i].q) != CL_SUCCESS)
            st = -1;
    for (unsigned i = 0; i < L->n; i++) {   /* lane 0's are done once the caller's clFinish returns */
        rpl_lane *ln = &L->lane[i];
        for (size_t k = 0; k < ln->n; k++)
            rpl_ln_drop(L, &ln->e[k]);
        ln->n = 0;
    }
    return st;
}

const rpl_lanes_stats *rpl_lanes_get_stats(const rpl_lanes *L)
{
    return &L->st;
}
