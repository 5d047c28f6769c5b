/* rpl_events.c — user events that a blocking call waits for before any
 * replayed call has set them.
 *
 * The replay makes the calls in the order of their END records. In a
 * multi-threaded application a thread's clWaitForEvents (or clFinish, or a
 * blocking read) may return, and write its END, before the END of the
 * clSetUserEventStatus that released it on another thread. Replayed in that
 * order the wait would never return. So the replay tracks, by recorded id,
 * which unset user events each command depends on:
 *
 *   - a command depends on the user events of its wait list's events, of
 *     every earlier command of an in-order queue, of the last barriers of an
 *     out-of-order queue, and (markers and barriers without a wait list) of
 *     every earlier command of its queue;
 *   - its event, when the application asked for one, carries that set;
 *   - a queue carries the union over its commands (clFinish).
 *
 * Before a call that blocks (clWaitForEvents, clFinish, an enqueue with its
 * blocking flag set) every unset user event it depends on is set to
 * CL_COMPLETE: the recording shows the call returned, so the application
 * had set it by then. The later recorded clSetUserEventStatus of such an
 * event is answered with its recorded result (rpl_pre_clSetUserEventStatus)
 * and counted in the summary (user_events_early).
 *
 * Nothing is tracked while no user event is unset: a trace without user
 * events pays one test per call. */
#include "replayer/rpl_int.h"

#include <stdlib.h>
#include <string.h>

enum { UEV_EVENT = 0, UEV_QUEUE_ALL = 1, UEV_QUEUE_FLOOR = 2 };

/* One object's set of user events (recorded ids) it may wait for. */
struct rpl_uev {
    uint64_t key;             /* recorded id */
    int kind;                 /* UEV_* */
    uint64_t *ids;
    size_t n, cap;
};

/* Where an enqueue's queue, wait list, event and blocking flag are
 * (parameter indices, -1 when none), from the recorded signatures. */
typedef struct {
    int8_t queue, list, count, event, blocking;
    uint8_t barrier;          /* a barrier (later commands of an out-of-order queue wait for it) */
    uint8_t marker;           /* a marker or barrier: without a list it waits for the whole queue */
} uev_shape;

static uev_shape uev_shapes[RPL_FN_COUNT];
static int uev_shapes_ready;

static void uev_shapes_init(void)
{
    if (__atomic_load_n(&uev_shapes_ready, __ATOMIC_ACQUIRE))
        return;
    static uev_shape sh[RPL_FN_COUNT];
    for (unsigned fn = 0; fn < RPL_FN_COUNT; fn++) {
        uev_shape *u = &sh[fn];
        *u = (uev_shape){-1, -1, -1, -1, -1, 0, 0};
        const tf_sig *g = &rpl_gen_sigs[fn];
        const char *name = rpl_gen_table[fn].name;
        for (uint32_t i = 0; i < g->nparams && i < 127; i++) {
            const char *p = g->params[i].name;
            if (i == 0 && !strcmp(p, "command_queue"))
                u->queue = 0;
            else if (!strcmp(p, "event_wait_list") || (!strcmp(name, "clEnqueueWaitForEvents") && !strcmp(p, "event_list")))
                u->list = (int8_t)i;
            else if (!strcmp(p, "num_events_in_wait_list") || (!strcmp(name, "clEnqueueWaitForEvents") && !strcmp(p, "num_events")))
                u->count = (int8_t)i;
            else if (!strcmp(p, "event") && g->params[i].dir != 1)
                u->event = (int8_t)i;
            else if (!strncmp(p, "blocking", 8))
                u->blocking = (int8_t)i;
        }
        u->barrier = strstr(name, "Barrier") != NULL || !strcmp(name, "clEnqueueWaitForEvents");
        u->marker = u->barrier || strstr(name, "Marker") != NULL;
    }
    memcpy(uev_shapes, sh, sizeof sh);
    __atomic_store_n(&uev_shapes_ready, 1, __ATOMIC_RELEASE);
}

static const tf_value uev_nil = {.type = TF_NIL};

/* recorded input @p i of the call (nil when absent) */
static const tf_value *uev_in(rpl_cx *x, int i)
{
    return i >= 0 && (unsigned)i < x->c->sig->nparams && x->c->args ? &x->c->args[i] : &uev_nil;
}

/* recorded output @p i of the call (nil when absent) */
static const tf_value *uev_out(rpl_cx *x, int i)
{
    return i >= 0 && (unsigned)i < x->c->sig->nparams && x->c->outs ? &x->c->outs[i] : &uev_nil;
}

/* 1 when @p id names a user event no replayed call has set */
static int uev_unset(rpl_session *s, uint64_t id)
{
    rpl_obj *o = rpl_obj_find(s, id);
    return o && o->user_unset && o->live;
}

/* s->uev_index: open addressing on (kind, key), slots hold entry index + 1 */
static size_t uev_hash(int kind, uint64_t key, size_t cap)
{
    uint64_t h = (key ^ (uint64_t)kind << 61) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static struct rpl_uev *uev_find(rpl_session *s, int kind, uint64_t key)
{
    if (!s->cap_uev_index)
        return NULL;
    for (size_t h = uev_hash(kind, key, s->cap_uev_index);; h = (h + 1) & (s->cap_uev_index - 1)) {
        size_t slot = s->uev_index[h];
        if (!slot)
            return NULL;
        struct rpl_uev *e = &s->uev[slot - 1];
        if (e->kind == kind && e->key == key)
            return e;
    }
}

/* Indexes every entry again (index at most half full). */
static int uev_reindex(rpl_session *s)
{
    size_t cap = 64;
    while (cap < 2 * s->cap_uev)
        cap *= 2;
    if (cap != s->cap_uev_index) {
        size_t *p = realloc(s->uev_index, cap * sizeof *p);
        if (!p)
            return -1;
        s->uev_index = p;
        s->cap_uev_index = cap;
    }
    memset(s->uev_index, 0, cap * sizeof *s->uev_index);
    for (size_t i = 0; i < s->nuev; i++) {
        size_t h = uev_hash(s->uev[i].kind, s->uev[i].key, cap);
        while (s->uev_index[h])
            h = (h + 1) & (cap - 1);
        s->uev_index[h] = i + 1;
    }
    return 0;
}

/* Drops ids of events set since, and sets left empty. */
static void uev_prune(rpl_session *s)
{
    size_t w = 0;
    for (size_t i = 0; i < s->nuev; i++) {
        struct rpl_uev *e = &s->uev[i];
        size_t k = 0;
        for (size_t j = 0; j < e->n; j++)
            if (uev_unset(s, e->ids[j]))
                e->ids[k++] = e->ids[j];
        e->n = k;
        if (!k) {
            free(e->ids);
            continue;
        }
        s->uev[w++] = *e;
    }
    s->nuev = w;
    if (uev_reindex(s) < 0)
        s->cap_uev_index = 0;   /* looked up again after the next merge */
}

/* A set of ids under construction (small: the unset user events). */
typedef struct {
    uint64_t *ids;
    size_t n, cap;
} uev_set;

static int uev_set_add(uev_set *d, uint64_t id)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->ids[i] == id)
            return 0;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        uint64_t *p = realloc(d->ids, cap * sizeof *p);
        if (!p)
            return -1;
        d->ids = p;
        d->cap = cap;
    }
    d->ids[d->n++] = id;
    return 0;
}

static int uev_set_union(uev_set *d, const struct rpl_uev *e)
{
    for (size_t i = 0; e && i < e->n; i++)
        if (uev_set_add(d, e->ids[i]) < 0)
            return -1;
    return 0;
}

/* Adds @p d to the set of (kind, key), creating it. */
static int uev_merge(rpl_session *s, int kind, uint64_t key, const uev_set *d, int replace)
{
    if (!d->n && !replace)
        return 0;
    struct rpl_uev *e = uev_find(s, kind, key);
    if (!e) {
        if (!d->n)
            return 0;
        if (s->nuev == s->cap_uev) {
            size_t cap = s->cap_uev ? s->cap_uev * 2 : 16;
            struct rpl_uev *p = realloc(s->uev, cap * sizeof *p);
            if (!p)
                return -1;
            s->uev = p;
            s->cap_uev = cap;
        }
        e = &s->uev[s->nuev++];
        *e = (struct rpl_uev){.key = key, .kind = kind};
        if (s->cap_uev_index < 2 * s->cap_uev || !s->cap_uev_index) {
            if (uev_reindex(s) < 0)
                return -1;
        } else {
            size_t h = uev_hash(kind, key, s->cap_uev_index);
            while (s->uev_index[h])
                h = (h + 1) & (s->cap_uev_index - 1);
            s->uev_index[h] = s->nuev;
        }
    } else if (replace) {
        e->n = 0;
    }
    uev_set tmp = {e->ids, e->n, e->cap};
    int st = 0;
    for (size_t i = 0; i < d->n && st == 0; i++)
        st = uev_set_add(&tmp, d->ids[i]);
    e->ids = tmp.ids;
    e->n = tmp.n;
    e->cap = tmp.cap;
    return st;
}

/* The user events a command of call @p x depends on (see the top). */
static int uev_deps(rpl_cx *x, const uev_shape *u, uev_set *d)
{
    rpl_session *s = x->s;
    const tf_value *list = uev_in(x, u->list);
    size_t nlist = 0;
    if (list->type == TF_ARRAY) {
        uint64_t count = list->v.arr.n;
        if (u->count >= 0)
            tf_value_u64(uev_in(x, u->count), &count);
        nlist = count < list->v.arr.n ? (size_t)count : list->v.arr.n;
        for (size_t i = 0; i < nlist; i++) {
            uint64_t id = 0;
            if (tf_value_u64(&list->v.arr.items[i], &id) && id
                && uev_set_union(d, uev_find(s, UEV_EVENT, id)) < 0)
                return -1;
        }
    }
    if (u->queue < 0)
        return 0;
    uint64_t q = rpl_arg_id(x, 0);
    rpl_obj *qo = rpl_obj_find(s, q);
    int in_order = qo && qo->in_order;
    if (in_order || (u->marker && !nlist))
        return uev_set_union(d, uev_find(s, UEV_QUEUE_ALL, q));
    return uev_set_union(d, uev_find(s, UEV_QUEUE_FLOOR, q));
}

int rpl_uev_created(rpl_cx *x, uint64_t id)
{
    uev_set d = {NULL, 0, 0};
    if (uev_set_add(&d, id) < 0)
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    int st = uev_merge(x->s, UEV_EVENT, id, &d, 1);
    free(d.ids);
    return st < 0 ? rpl_call_error(x, RPL_ERR_NOMEM, "out of memory") : RPL_OK;
}

int rpl_uev_before(rpl_cx *x)
{
    rpl_session *s = x->s;
    if (!s->nuev)
        return RPL_OK;
    uev_shapes_init();
    const uev_shape *u = &uev_shapes[x->fn];
    uev_set d = {NULL, 0, 0};
    int st = 0;
    if (x->fn == RPL_FN_clWaitForEvents) {
        const tf_value *list = uev_in(x, 1);
        for (uint32_t i = 0; list->type == TF_ARRAY && i < list->v.arr.n && st == 0; i++) {
            uint64_t id = 0;
            if (tf_value_u64(&list->v.arr.items[i], &id) && id)
                st = uev_set_union(&d, uev_find(s, UEV_EVENT, id));
        }
    } else if (x->fn == RPL_FN_clFinish) {
        st = uev_set_union(&d, uev_find(s, UEV_QUEUE_ALL, rpl_arg_id(x, 0)));
    } else if (u->blocking >= 0) {
        uint64_t b = 0;
        if (tf_value_u64(uev_in(x, u->blocking), &b) && b)
            st = uev_deps(x, u, &d);
    }
    if (st < 0) {
        free(d.ids);
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    }
    int set = 0;
    for (size_t i = 0; i < d.n; i++) {
        rpl_obj *o = rpl_obj_find(s, d.ids[i]);
        if (!o || !o->user_unset || !o->live || !s->api.clSetUserEventStatus)
            continue;
        s->api.clSetUserEventStatus(o->live, CL_COMPLETE);
        o->user_unset = 0;
        o->user_early = 1;
        s->sum.user_events_early++;
        set = 1;
    }
    free(d.ids);
    if (set)
        uev_prune(s);
    return RPL_OK;
}

int rpl_uev_after(rpl_cx *x)
{
    rpl_session *s = x->s;
    if (x->fn == RPL_FN_clSetUserEventStatus) {
        uev_prune(s);
        return RPL_OK;
    }
    if (!s->nuev || !rpl_is_cat(x->fn, API_CAT_ENQUEUE))
        return RPL_OK;
    uev_shapes_init();
    const uev_shape *u = &uev_shapes[x->fn];
    if (u->queue < 0)
        return RPL_OK;
    uev_set d = {NULL, 0, 0};
    uint64_t q = rpl_arg_id(x, 0);
    int st = uev_deps(x, u, &d);
    if (st == 0)
        st = uev_merge(s, UEV_QUEUE_ALL, q, &d, 0);
    rpl_obj *qo = rpl_obj_find(s, q);
    if (st == 0 && u->barrier && !(qo && qo->in_order))
        st = uev_merge(s, UEV_QUEUE_FLOOR, q, &d, 0);
    uint64_t ev = 0;
    if (st == 0 && tf_value_u64(uev_out(x, u->event), &ev) && ev)
        st = uev_merge(s, UEV_EVENT, ev, &d, 1);
    free(d.ids);
    return st < 0 ? rpl_call_error(x, RPL_ERR_NOMEM, "out of memory") : RPL_OK;
}

int rpl_pre_clSetUserEventStatus(rpl_cx *x_, cl_event *event, cl_int *execution_status)
{
    (void)event;
    (void)execution_status;
    rpl_obj *o = rpl_obj_find(x_->s, rpl_arg_id(x_, 0));
    if (!o || !o->user_early)
        return 0;
    /* set early by rpl_uev_before: a second set would fail */
    x_->ret_override = x_->recorded_code == RPL_CL_UNKNOWN ? CL_SUCCESS : (cl_int)x_->recorded_code;
    return 1;
}

void rpl_uev_free(rpl_session *s)
{
    for (size_t i = 0; i < s->nuev; i++)
        free(s->uev[i].ids);
    free(s->uev);
    free(s->uev_index);
    s->uev = NULL;
    s->uev_index = NULL;
    s->nuev = s->cap_uev = s->cap_uev_index = 0;
}
