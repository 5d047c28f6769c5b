/* plan_hold.c — what the tracker knows about the bytes of memory objects:
 * per root, ranges whose contents are known (the bytes a write, fill or
 * read-back left there, named by a content key), cut by every command that
 * may write them. A write whose bytes a range already holds, from a
 * command it is ordered after, is redundant. Bounded: at most
 * PLAN_MAX_SEGS ranges per object (the oldest goes first). Settling looks
 * only at the roots that may hold a content not yet settled
 * (plan_track.open), late data at those that may hold one waiting for its
 * key (plan_track.pend), never at every object the run made. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define PLAN_MAX_SEGS 64

void plan_key_combine(const uint8_t h[16], const uint8_t g[16], uint8_t out[16])
{
    uint8_t buf[32];
    memcpy(buf, h, 16);
    memcpy(buf + 16, g, 16);
    XXH128_canonical_t cn;
    XXH128_canonicalFromHash(&cn, XXH3_128bits(buf, sizeof buf));
    memcpy(out, cn.digest, 16);
}

static void plan_seg_remove(plan_obj *r, unsigned i)
{
    memmove(&r->segs[i], &r->segs[i + 1], (r->nsegs - i - 1) * sizeof *r->segs);
    r->nsegs--;
}

void plan_hold_kill(plan_obj *r, uint64_t lo, uint64_t hi)
{
    if (!r || lo >= hi)
        return;
    for (unsigned i = 0; i < r->nsegs;) {
        plan_content *s = &r->segs[i];
        if (s->hi <= lo || s->lo >= hi) {
            i++;
            continue;
        }
        if (s->lo < lo && s->hi > hi && r->nsegs < r->capsegs) {   /* split around the hole */
            plan_content right = *s;
            right.lo = hi;
            s->hi = lo;
            memmove(&r->segs[i + 2], &r->segs[i + 1], (r->nsegs - i - 1) * sizeof *r->segs);
            r->segs[i + 1] = right;
            r->nsegs++;
            i += 2;
        } else if (s->lo < lo) {
            s->hi = lo;
            i++;
        } else if (s->hi > hi) {
            s->lo = hi;
            i++;
        } else {
            plan_seg_remove(r, i);
        }
    }
}

void plan_hold_kill_all(plan_track *t)
{
    for (size_t i = 0; i < t->nall; i++) {
        t->all[i]->nsegs = 0;
        t->all[i]->writes = 2;
    }
    for (size_t i = 0; i < t->nopen; i++)
        t->open[i]->open = 0;
    for (size_t i = 0; i < t->npend; i++)
        t->pend[i]->pend = 0;
    t->nopen = t->npend = 0;
}

/* 1 when root @p r still holds a content not settled (@p pending 0) or not
 * keyed (1). */
static int plan_hold_is_open(const plan_obj *r, int pending)
{
    for (unsigned j = 0; j < r->nsegs; j++)
        if (pending ? r->segs[j].pending != 0 : !r->segs[j].settled)
            return 1;
    return 0;
}

/* Drops the roots of t->open (@p pending 0) or t->pend (1) that hold
 * nothing of that kind any more. */
static void plan_hold_prune(plan_track *t, int pending)
{
    plan_obj **v = pending ? t->pend : t->open;
    size_t n = pending ? t->npend : t->nopen, k = 0;
    for (size_t i = 0; i < n; i++) {
        plan_obj *r = v[i];
        if (plan_hold_is_open(r, pending))
            v[k++] = r;
        else if (pending)
            r->pend = 0;
        else
            r->open = 0;
    }
    if (pending)
        t->npend = k;
    else
        t->nopen = k;
}

plan_status plan_hold_add(plan_track *t, plan_obj *r, const plan_content *c)
{
    if (!r || c->lo >= c->hi)
        return PLAN_OK;
    for (unsigned i = 0; i < r->nsegs; i++) {   /* the same content again: refresh it */
        plan_content *s = &r->segs[i];
        if (!s->pending && !c->pending && s->lo == c->lo && s->hi == c->hi && s->origin == c->origin &&
            !memcmp(s->key, c->key, 16)) {
            s->settled |= c->settled;   /* the first call that left them keeps its name */
            return PLAN_OK;
        }
    }
    if (r->nsegs == PLAN_MAX_SEGS)
        plan_seg_remove(r, 0);
    if (r->nsegs + 2 > r->capsegs) {
        size_t cap = r->capsegs;
        if (plan_grow((void **)&r->segs, &cap, r->nsegs + 2, sizeof *r->segs))
            return PLAN_ERR_NOMEM;
        r->capsegs = (unsigned)cap;
    }
    if (!c->settled && !r->open) {
        if (plan_grow((void **)&t->open, &t->capopen, t->nopen + 1, sizeof *t->open))
            return PLAN_ERR_NOMEM;
        t->open[t->nopen++] = r;
        r->open = 1;
    }
    if (c->pending && !r->pend) {
        if (plan_grow((void **)&t->pend, &t->cappend, t->npend + 1, sizeof *t->pend))
            return PLAN_ERR_NOMEM;
        t->pend[t->npend++] = r;
        r->pend = 1;
    }
    r->segs[r->nsegs++] = *c;
    return PLAN_OK;
}

const plan_content *plan_hold_find(const plan_track *t, const plan_obj *r, const uint8_t key[16], uint64_t origin,
                                 uint64_t lo, uint64_t hi, uint64_t queue)
{
    if (!r || r->visible)
        return NULL;
    const plan_obj *q = plan_track_obj(t, queue);
    for (unsigned i = r->nsegs; i-- > 0;) {
        const plan_content *s = &r->segs[i];
        if (s->pending || s->origin != origin || s->lo > lo || s->hi < hi || memcmp(s->key, key, 16))
            continue;
        /* the bytes must be there when this command runs: left by a command
         * known complete, or by one before it on the same in-order queue */
        if (s->settled || (s->queue == queue && q && q->kind == PLAN_OBJ_QUEUE && q->in_order))
            return s;
    }
    return NULL;
}

void plan_hold_data(plan_track *t, uint64_t seq, const uint8_t hash[16])
{
    for (size_t i = 0; i < t->npend; i++) {
        plan_obj *r = t->pend[i];
        for (unsigned j = 0; j < r->nsegs; j++) {
            plan_content *s = &r->segs[j];
            if (!s->pending || s->seq != seq)
                continue;
            if (s->pending == 2)
                plan_key_combine(hash, s->key, s->key);
            else
                memcpy(s->key, hash, 16);
            s->pending = 0;
        }
    }
    plan_hold_prune(t, 1);
}

void plan_hold_settle(plan_track *t, uint64_t queue)
{
    for (size_t i = 0; i < t->nopen; i++) {
        plan_obj *r = t->open[i];
        for (unsigned j = 0; j < r->nsegs; j++)
            if (!queue || r->segs[j].queue == queue)
                r->segs[j].settled = 1;
    }
    plan_hold_prune(t, 0);
}
