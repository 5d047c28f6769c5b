/* opt_sched.c — the schedule pass: an in-order command queue's uploads
 * (writes from host memory) and downloads (reads into host memory) on
 * queues of their own, lanes beside its kernels, so that copies overlap
 * compute. Execution keeps the queue's order between every two commands
 * that conflict (the same memory, one of them writes), so a schedule is
 * safe on any run; the pass only decides where it pays. It plays the
 * queue's recorded device times twice, one command after another (as the
 * queue ran them) and over the lanes, and keeps the queue when the lanes
 * are predicted to take at least 5% less (optimizer/README.md). */
#include "optimizer/opt_int.h"

#include "analyzer/ana.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One step of a queue's timeline: a device command, or a host
 * synchronization (clFinish of the queue, any clWaitForEvents) before
 * whose end nothing later of the queue starts. */
typedef struct opt_sstep {
    const ana_cmd *c;
    uint8_t sync;             /* a host synchronization, not a command */
    uint8_t lane;             /* 0 kernels and the rest, 1 uploads, 2 downloads */
    uint8_t all;              /* conflicts with every command: a barrier, a command of
                                 unknown effects, or one that waits for an event that
                                 no earlier command of the queue produced */
    uint64_t dur;             /* device time (recorded, or the mean of its kind) */
    uint64_t end;             /* in the simulation being run */
} opt_sstep;

typedef struct opt_squeue {
    uint64_t id;
    opt_sstep *v;
    size_t n, cap;
    plan_map events;           /* event -> 1 + the index of the step that produced it */
    size_t *bylane[3];        /* the steps of each lane, in order */
    size_t nlane[3];
    int out_of_order;
    uint64_t commands, kernels, uploads, downloads;
} opt_squeue;

/* Kinds whose effects on memory the model does not bound, and markers and
 * barriers, which order everything around them. */
static int opt_sched_barrier(const ana_cmd *c)
{
    switch (c->kind) {
    case ANA_CMD_MARKER: case ANA_CMD_BARRIER: case ANA_CMD_NATIVE: case ANA_CMD_OTHER: case ANA_CMD_MIGRATE:
    case ANA_CMD_SVM_MEMCPY: case ANA_CMD_SVM_FILL: case ANA_CMD_SVM_MAP: case ANA_CMD_SVM_UNMAP:
    case ANA_CMD_SVM_MIGRATE: case ANA_CMD_SVM_FREE:
        return 1;
    default:
        return 0;
    }
}

/* Some memory both touch, one of them writing: a whole-object stand-in
 * overlaps every byte of its root. */
static int opt_sched_conflict(const ana_cmd *a, const ana_cmd *b)
{
    for (unsigned i = 0; i < a->nmem; i++)
        for (unsigned j = 0; j < b->nmem; j++) {
            const ana_memref *x = &a->mem[i], *y = &b->mem[j];
            if (x->root != y->root || !((x->access | y->access) & ANA_ACC_WRITE))
                continue;
            if (x->whole || y->whole || (x->lo < y->hi && y->lo < x->hi))
                return 1;
        }
    return 0;
}

static int opt_sched_push(opt_squeue *q, const opt_sstep *s)
{
    if (plan_grow((void **)&q->v, &q->cap, q->n + 1, sizeof *q->v))
        return -1;
    q->v[q->n++] = *s;
    return 0;
}

/* A device command of the queue as a step. */
static int opt_sched_command(opt_squeue *q, const ana_cmd *c)
{
    opt_sstep s = {.c = c, .lane = c->kind == ANA_CMD_WRITE ? 1 : c->kind == ANA_CMD_READ ? 2 : 0,
                   .all = (uint8_t)opt_sched_barrier(c)};
    for (unsigned w = 0; w < c->nwait && !s.all; w++)
        s.all = !c->wait[w] || !plan_map_get(&q->events, c->wait[w]);
    q->out_of_order |= !c->in_order;
    q->commands++;
    q->kernels += c->kind == ANA_CMD_KERNEL;
    q->uploads += s.lane == 1;
    q->downloads += s.lane == 2;
    if (opt_sched_push(q, &s))
        return -1;
    return c->event ? plan_map_put(&q->events, c->event, (void *)(uintptr_t)q->n) : 0;
}

/* The timeline of queue @p q: its device commands and the host
 * synchronizations that hold it, in call order; each command's device
 * time (one without takes the mean of the timed commands of its kind on
 * the queue, else 0); the steps of each lane. */
static plan_status opt_sched_build(const ana_model *m, opt_squeue *q)
{
    uint64_t sum[ANA_CMD_KIND_COUNT] = {0}, cnt[ANA_CMD_KIND_COUNT] = {0};
    for (size_t i = 0; i < ana_model_command_count(m); i++) {
        const ana_cmd *c = ana_model_command(m, i);
        int mine = c->queue == q->id && !ana_cmd_kind_is_host((ana_cmd_kind)c->kind);
        if ((c->kind == ANA_CMD_WAIT || (c->kind == ANA_CMD_FINISH && c->queue == q->id)) &&
            opt_sched_push(q, &(opt_sstep){.c = c, .sync = 1}))
            return PLAN_ERR_NOMEM;
        if (!mine)
            continue;
        if (opt_sched_command(q, c))
            return PLAN_ERR_NOMEM;
        if (c->has_devtime) {
            sum[c->kind] += c->dev_end - c->dev_start;
            cnt[c->kind]++;
        }
    }
    for (unsigned l = 0; l < 3; l++)
        if (!(q->bylane[l] = malloc((q->n ? q->n : 1) * sizeof *q->bylane[l])))
            return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < q->n; i++) {
        opt_sstep *s = &q->v[i];
        if (s->sync)
            continue;
        const ana_cmd *c = s->c;
        s->dur = c->has_devtime ? c->dev_end - c->dev_start : cnt[c->kind] ? sum[c->kind] / cnt[c->kind] : 0;
        q->bylane[s->lane][q->nlane[s->lane]++] = i;
    }
    return PLAN_OK;
}

/* When step @p k of @p q can start on lane @p l from @p start on, after
 * the last command of each other lane that it conflicts with (@p seen:
 * the steps of each lane before it). A lane's commands end in order, so
 * the scan back stops at the first that ends by then. */
static uint64_t opt_sched_after(const opt_squeue *q, size_t k, unsigned l, const size_t seen[3], uint64_t start)
{
    const opt_sstep *s = &q->v[k];
    for (unsigned o = 0; o < 3; o++) {
        if (o == l)
            continue;
        for (size_t j = seen[o]; j-- > 0;) {
            const opt_sstep *e = &q->v[q->bylane[o][j]];
            if (e->end <= start)
                break;
            if (s->all || e->all || opt_sched_conflict(s->c, e->c)) {
                start = e->end;
                break;
            }
        }
    }
    for (unsigned w = 0; w < s->c->nwait; w++) {   /* events of earlier commands of the queue */
        uintptr_t e = (uintptr_t)plan_map_get(&q->events, s->c->wait[w]);
        if (e && e - 1 < k && q->v[e - 1].end > start)
            start = q->v[e - 1].end;
    }
    return start;
}

/* The queue's device time from its first command's start to its last
 * one's end: over the lanes (@p lanes), or one command after another. A
 * blocking command holds the queue until it ends; a clFinish or
 * clWaitForEvents until every earlier command has ended. */
static uint64_t opt_sched_run(opt_squeue *q, int lanes)
{
    uint64_t end[3] = {0}, floor = 0;
    size_t seen[3] = {0};
    for (size_t k = 0; k < q->n; k++) {
        opt_sstep *s = &q->v[k];
        if (s->sync) {
            for (unsigned l = 0; l < 3; l++)
                floor = end[l] > floor ? end[l] : floor;
            continue;
        }
        unsigned l = lanes ? s->lane : 0;
        uint64_t start = end[l] > floor ? end[l] : floor;
        if (lanes)
            start = opt_sched_after(q, k, l, seen, start);
        s->end = start + s->dur;
        end[l] = s->end;
        seen[s->lane]++;
        if (s->c->blocking && s->end > floor)
            floor = s->end;
    }
    for (unsigned l = 0; l < 3; l++)
        floor = end[l] > floor ? end[l] : floor;
    return floor;
}

static void opt_sched_time(uint64_t ns, char *buf, size_t cap)
{
    if (ns < 1000000)
        snprintf(buf, cap, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, cap, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(buf, cap, "%.3f s", (double)ns / 1e9);
}

/* Queue @p q (the @p index-th created) into the plan when it pays. */
static plan_status opt_sched_queue(const ana_model *m, plan_file *p, opt_squeue *q, uint64_t index)
{
    plan_status st = opt_sched_build(m, q);
    if (st != PLAN_OK || q->out_of_order || !q->kernels || !(q->uploads + q->downloads))
        return st;
    plan_sched s = {.queue = index, .lanes = q->uploads && q->downloads ? 3 : 2, .commands = q->commands,
                   .uploads = q->uploads, .downloads = q->downloads};
    s.recorded_ns = opt_sched_run(q, 0);
    s.predicted_ns = opt_sched_run(q, 1);
    /* at least 5% saved: predicted <= floor(0.95 * recorded), without overflow */
    uint64_t r = s.recorded_ns, most = r / 20 * 19 + r % 20 * 19 / 20;
    if (s.predicted_ns >= r || s.predicted_ns > most)
        return PLAN_OK;
    char why[256], a[32], b[32], ud[96];
    opt_sched_time(s.recorded_ns, a, sizeof a);
    opt_sched_time(s.predicted_ns, b, sizeof b);
    if (q->uploads && q->downloads)
        snprintf(ud, sizeof ud, "%llu upload%s and %llu download%s", (unsigned long long)q->uploads,
                 q->uploads == 1 ? "" : "s", (unsigned long long)q->downloads, q->downloads == 1 ? "" : "s");
    else
        snprintf(ud, sizeof ud, "%llu %s%s", (unsigned long long)(q->uploads + q->downloads),
                 q->uploads ? "upload" : "download", q->uploads + q->downloads == 1 ? "" : "s");
    snprintf(why, sizeof why, "%s overlap%s %llu launch%s: %s of device time one after another, %s over %u lanes", ud,
             q->uploads + q->downloads == 1 ? "s" : "", (unsigned long long)q->kernels, q->kernels == 1 ? "" : "es",
             a, b, s.lanes);
    s.reason = why;
    st = plan_add_sched(p, &s);
    return st == PLAN_ERR_LIMIT ? PLAN_OK : st;
}

static int opt_create_cmp(const void *a, const void *b)
{
    const ana_object *x = *(const ana_object *const *)a, *y = *(const ana_object *const *)b;
    return x->create_seq < y->create_seq ? -1 : x->create_seq > y->create_seq;
}

plan_status opt_sched_plan(const ana_model *m, plan_file *p)
{
    /* the queues the trace created, in creation order: a plan names a
     * queue by its place in it */
    size_t nq = 0, no = ana_model_object_count(m);
    const ana_object **qs = malloc((no ? no : 1) * sizeof *qs);
    if (!qs)
        return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < no; i++) {
        const ana_object *o = ana_model_object(m, i);
        if (o->kind == ANA_OBJ_QUEUE && o->create_seq)
            qs[nq++] = o;
    }
    qsort(qs, nq, sizeof *qs, opt_create_cmp);
    plan_status st = PLAN_OK;
    for (size_t i = 0; i < nq && st == PLAN_OK; i++) {
        if (!qs[i]->uses)   /* nothing enqueued: each queue costs a pass over the commands */
            continue;
        opt_squeue q;
        memset(&q, 0, sizeof q);
        q.id = qs[i]->id;
        st = opt_sched_queue(m, p, &q, i);
        for (unsigned l = 0; l < 3; l++)
            free(q.bylane[l]);
        free(q.v);
        plan_map_free(&q.events);
    }
    free(qs);
    return st;
}
