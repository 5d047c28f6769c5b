/* rpl_objs.c — recorded ids to live handles (and back), and the address
 * maps of mapped regions and SVM allocations. Two open-addressing tables
 * of pointers to one rpl_obj per recorded id. */
#include "replayer/rpl_int.h"

#include <stdlib.h>
#include <string.h>

#define RPL_TOMB ((rpl_obj *)(uintptr_t)1)

static size_t rpl_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static rpl_obj **rpl_slot_id(rpl_session *s, uint64_t id, int for_insert)
{
    if (!s->cap)
        return NULL;
    size_t m = s->cap - 1, i = rpl_mix(id) & m;
    rpl_obj **tomb = NULL;
    for (size_t k = 0; k < s->cap; k++, i = (i + 1) & m) {
        rpl_obj *o = s->by_id[i];
        if (!o)
            return for_insert && tomb ? tomb : &s->by_id[i];
        if (o == RPL_TOMB) {
            if (!tomb)
                tomb = &s->by_id[i];
        } else if (o->id == id) {
            return &s->by_id[i];
        }
    }
    return tomb;
}

static rpl_obj **rpl_slot_live(rpl_session *s, const void *live, int for_insert)
{
    if (!s->cap)
        return NULL;
    size_t m = s->cap - 1, i = rpl_mix((uint64_t)(uintptr_t)live) & m;
    rpl_obj **tomb = NULL;
    for (size_t k = 0; k < s->cap; k++, i = (i + 1) & m) {
        rpl_obj *o = s->by_live[i];
        if (!o)
            return for_insert && tomb ? tomb : &s->by_live[i];
        if (o == RPL_TOMB) {
            if (!tomb)
                tomb = &s->by_live[i];
        } else if (o->live == live) {
            return &s->by_live[i];
        }
    }
    return tomb;
}

rpl_obj *rpl_obj_find(rpl_session *s, uint64_t id)
{
    rpl_obj **p = rpl_slot_id(s, id, 0);
    return p && *p && *p != RPL_TOMB ? *p : NULL;
}

rpl_obj *rpl_obj_by_live(rpl_session *s, const void *live)
{
    rpl_obj **p = rpl_slot_live(s, live, 0);
    return p && *p && *p != RPL_TOMB ? *p : NULL;
}

static int rpl_grow(rpl_session *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    rpl_obj **a = calloc(cap, sizeof *a), **b = calloc(cap, sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    rpl_obj **old_id = s->by_id;
    size_t old_cap = s->cap;
    free(s->by_live);
    s->by_id = a;
    s->by_live = b;
    s->cap = cap;
    s->n = s->n_live = 0;
    for (size_t i = 0; i < old_cap; i++) {
        rpl_obj *o = old_id[i];
        if (!o || o == RPL_TOMB)
            continue;
        *rpl_slot_id(s, o->id, 1) = o;
        s->n++;
        if (o->live) {
            rpl_obj **q = rpl_slot_live(s, o->live, 1);
            if (!*q || *q == RPL_TOMB)
                s->n_live++;
            *q = o;
        }
    }
    free(old_id);
    return 0;
}

static void rpl_live_unset(rpl_session *s, rpl_obj *o)
{
    if (!o->live)
        return;
    rpl_obj **q = rpl_slot_live(s, o->live, 0);
    if (q && *q == o)
        *q = RPL_TOMB;
}

/* Drops one reference to live object @p live of kind @p kind. */
static void rpl_release_live(const rpl_api_table *a, unsigned kind, void *live)
{
    switch (kind) {
    case RPL_OBJ_EVENT: if (a->clReleaseEvent) a->clReleaseEvent(live); break;
    case RPL_OBJ_KERNEL: if (a->clReleaseKernel) a->clReleaseKernel(live); break;
    case RPL_OBJ_SAMPLER: if (a->clReleaseSampler) a->clReleaseSampler(live); break;
    case RPL_OBJ_MEM: if (a->clReleaseMemObject) a->clReleaseMemObject(live); break;
    case RPL_OBJ_PROGRAM: if (a->clReleaseProgram) a->clReleaseProgram(live); break;
    case RPL_OBJ_QUEUE: if (a->clReleaseCommandQueue) a->clReleaseCommandQueue(live); break;
    case RPL_OBJ_CONTEXT: if (a->clReleaseContext) a->clReleaseContext(live); break;
    case RPL_OBJ_DEVICE: if (a->clReleaseDevice) a->clReleaseDevice(live); break;
    default: break;
    }
}

rpl_obj *rpl_obj_bind(rpl_session *s, uint64_t id, void *live, unsigned kind, int created)
{
    if ((s->n + 1) * 2 > s->cap || (s->n_live + 1) * 2 > s->cap)
        if (rpl_grow(s) < 0)
            return NULL;
    rpl_obj **p = rpl_slot_id(s, id, 1);
    rpl_obj *o = *p && *p != RPL_TOMB ? *p : NULL;
    if (kind == RPL_OBJ_MEM)   /* a new object: split mirrors of the id hold nothing of it */
        rpl_splitter_forget(s->split, id);
    if (!o) {
        o = calloc(1, sizeof *o);
        if (!o)
            return NULL;
        o->id = id;
        *p = o;
        s->n++;
    } else {
        /* The id names a new object while the replay still holds the old
         * one (an enqueue repeated by --loop returns a new event; a trace
         * that names two live objects alike): the old one is released. */
        if (o->created && o->live && o->live != live)
            for (; o->refs > 0; o->refs--)
                rpl_release_live(&s->api, o->kind, o->live);
        rpl_live_unset(s, o);
        if (o->host_owned)
            free(o->host);
        free(o->name);
        rpl_kargs_free(o);
        rpl_guard_forget(o);
        rpl_defined_forget(o);
        uint64_t keep = o->id;
        memset(o, 0, sizeof *o);
        o->id = keep;
    }
    o->live = live;
    o->kind = (uint8_t)kind;
    o->created = (uint8_t)created;
    o->refs = created ? 1 : 0;
    if (live) {
        rpl_obj **q = rpl_slot_live(s, live, 1);
        if (q) {
            /* an older object at the same address is superseded */
            if (!*q || *q == RPL_TOMB)
                s->n_live++;
            *q = o;
        }
    }
    return o;
}

void rpl_obj_unbind(rpl_session *s, rpl_obj *o)
{
    if (o->kind == RPL_OBJ_MEM)
        rpl_splitter_forget(s->split, o->id);
    rpl_live_unset(s, o);
    rpl_obj **p = rpl_slot_id(s, o->id, 0);
    if (p && *p == o)
        *p = RPL_TOMB;
    if (o->host_owned)
        free(o->host);
    free(o->name);
    rpl_kargs_free(o);
    rpl_guard_forget(o);
    rpl_defined_forget(o);
    free(o);
}

void rpl_obj_retire(rpl_session *s, rpl_obj *o)
{
    if (o->kind == RPL_OBJ_QUEUE && o->live)
        rpl_sched_queue_released(s, o->live);
    if (o->host_owned) {   /* the runtime may use the host memory until the release completes */
        rpl_live_unset(s, o);
        o->live = NULL;
        o->created = 0;
        return;
    }
    rpl_obj_unbind(s, o);
}

void rpl_objs_free(rpl_session *s)
{
    for (size_t i = 0; i < s->cap; i++) {
        rpl_obj *o = s->by_id[i];
        if (o && o != RPL_TOMB) {
            if (o->host_owned)
                free(o->host);
            free(o->name);
            rpl_kargs_free(o);
            rpl_guard_forget(o);
            rpl_defined_forget(o);
            free(o);
        }
    }
    free(s->by_id);
    free(s->by_live);
    s->by_id = s->by_live = NULL;
    s->cap = s->n = s->n_live = 0;
    free(s->regions);
    s->regions = NULL;
    s->nregions = s->cap_regions = 0;
}

/* Releases what the application never released, dependants first (the
 * runtime keeps parents alive for their sub-buffers and kernels). */
void rpl_objs_release_all(rpl_session *s)
{
    static const unsigned order[] = {RPL_OBJ_EVENT, RPL_OBJ_KERNEL, RPL_OBJ_SAMPLER, RPL_OBJ_MEM,
                                     RPL_OBJ_PROGRAM, RPL_OBJ_QUEUE, RPL_OBJ_CONTEXT, RPL_OBJ_DEVICE};
    const rpl_api_table *a = &s->api;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        {
            for (size_t i = 0; i < s->cap; i++) {
                rpl_obj *o = s->by_id[i];
                if (!o || o == RPL_TOMB || o->kind != order[k] || !o->created || !o->live)
                    continue;
                for (; o->refs > 0; o->refs--)
                    rpl_release_live(a, o->kind, o->live);
            }
        }
    }
}

void rpl_user_events_abort(rpl_session *s)
{
    for (size_t i = 0; i < s->cap; i++) {
        rpl_obj *o = s->by_id[i];
        if (!o || o == RPL_TOMB || !o->user_unset || !o->live)
            continue;
        if (s->api.clSetUserEventStatus)
            s->api.clSetUserEventStatus(o->live, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        o->user_unset = 0;
    }
}

/* ------------------------------------------------------------ regions */
int rpl_region_add(rpl_session *s, int kind, uint64_t rec, void *live, size_t size, uint64_t flags,
                   uint64_t mem)
{
    if (s->nregions == s->cap_regions) {
        size_t cap = s->cap_regions ? s->cap_regions * 2 : 32;
        rpl_region *r = realloc(s->regions, cap * sizeof *r);
        if (!r)
            return -1;
        s->regions = r;
        s->cap_regions = cap;
    }
    s->regions[s->nregions++] = (rpl_region){.rec = rec, .live = live, .size = size, .flags = flags, .mem = mem,
                                             .kind = kind};
    return 0;
}

rpl_region *rpl_region_find(rpl_session *s, int kind, uint64_t rec)
{
    for (size_t i = s->nregions; i-- > 0;)
        if (s->regions[i].kind == kind && s->regions[i].rec == rec)
            return &s->regions[i];
    return NULL;
}

void rpl_region_remove(rpl_session *s, rpl_region *r)
{
    size_t i = (size_t)(r - s->regions);
    if (i < s->nregions)
        s->regions[i] = s->regions[--s->nregions];
}

void *rpl_addr_span(rpl_session *s, uint64_t rec, uint64_t len)
{
    for (size_t i = s->nregions; i-- > 0;) {   /* as rpl_addr: newest first */
        rpl_region *r = &s->regions[i];
        if (rec >= r->rec && rec - r->rec < (r->size ? r->size : 1))
            return len <= r->size - (rec - r->rec) ? r->live + (rec - r->rec) : NULL;
    }
    return NULL;
}

void *rpl_addr(rpl_session *s, uint64_t rec)
{
    /* newest first: a region mapped again at the same address wins */
    for (size_t i = s->nregions; i-- > 0;) {
        rpl_region *r = &s->regions[i];
        if (rec >= r->rec && rec - r->rec < (r->size ? r->size : 1))
            return r->live + (rec - r->rec);
    }
    return NULL;
}
