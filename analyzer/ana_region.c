/* ana_region.c — the bytes of a buffer argument that a box of work-groups
 * reads and writes in one launch: each access's offset evaluated over the
 * box's ranges, narrowed by its guards, hulled, clamped to the buffer. */
#include <string.h>

#include "analyzer/ana.h"
#include "analyzer/ana_kernel_int.h"

static void ana_region_init(ana_region *r)
{
    memset(r, 0, sizeof *r);
    r->empty = 1;
}

/* Adds [lo, hi) to @p r (a hull). */
static void ana_region_add(ana_region *r, int64_t lo, int64_t hi)
{
    uint64_t l = lo < 0 ? 0 : (uint64_t)lo, h = hi < 0 ? 0 : (uint64_t)hi;
    if (r->whole)
        return;
    if (r->empty) {
        r->lo = l;
        r->hi = h;
        r->empty = 0;
        return;
    }
    if (l < r->lo)
        r->lo = l;
    if (h > r->hi)
        r->hi = h;
}

static void ana_region_whole(ana_region *r)
{
    r->empty = 0;
    r->whole = 1;
}

static void ana_region_finish(ana_region *r, uint64_t size)
{
    if (r->whole) {
        r->lo = 0;
        r->hi = size;
        return;
    }
    if (r->empty)
        return;
    if (size && r->hi > size)
        r->hi = size;
    if (r->lo >= r->hi) {
        ana_region_init(r);   /* only out-of-bounds bytes: nothing real */
    }
}

/* Whether argument @p arg has regions (a buffer, image or local array). */
static int ana_region_kind(const ana_kernel *k, unsigned arg)
{
    uint8_t kind = k->args[arg].kind;
    return kind == ANA_ARG_GLOBAL || kind == ANA_ARG_CONSTANT || kind == ANA_ARG_LOCAL ||
           kind == ANA_ARG_IMAGE;
}

/* The regions over the box @p env holds, in one pass over the accesses:
 * of every argument in read[arg] and write[arg] (k->nargs each) when
 * @p only is negative, else of argument @p only alone in read[0] and
 * write[0] (argument i goes to index i - first). */
static ana_status ana_regions_in(const ana_kernel *k, const ana_launch *l, const ana_env *env, int only,
                                 ana_region *read, ana_region *write)
{
    ana_env acc_env;
    ana_status st;
    unsigned i, first = only < 0 ? 0 : (unsigned)only, last = only < 0 ? k->nargs : first + 1;

    for (i = first; i < last; i++) {
        ana_region *r = &read[i - first], *w = &write[i - first];
        ana_region_init(r);
        ana_region_init(w);
        if (k->unsupported && ana_region_kind(k, i)) {
            if (k->args[i].access & ANA_ACC_READ)
                ana_region_whole(r);
            if (k->args[i].access & ANA_ACC_WRITE)
                ana_region_whole(w);
        }
    }
    for (i = 0; i < k->naccesses && !k->unsupported; i++) {
        const ana_mem_access *a = &k->accesses[i];
        int rd = !a->is_write || a->is_atomic, wr = a->is_write || a->is_atomic;
        ana_region *r, *w;
        ana_ival off;
        if (a->arg < first || a->arg >= last || !ana_region_kind(k, a->arg))
            continue;
        r = &read[a->arg - first];
        w = &write[a->arg - first];
        if ((!rd || r->whole) && (!wr || w->whole))
            continue;
        if (!a->offset.known) {
            if (rd)
                ana_region_whole(r);
            if (wr)
                ana_region_whole(w);
            continue;
        }
        if (a->nguards) {
            st = ana_env_copy(&acc_env, env);
            if (st != ANA_OK)
                return st;
            if (!ana_env_tighten(&acc_env, a->guards, a->nguards)) {
                ana_env_free(&acc_env);
                continue;   /* the guards exclude this box */
            }
            off = ana_eval(&acc_env, &a->offset);
            ana_env_free(&acc_env);
        } else {
            off = ana_eval(env, &a->offset);
        }
        if (!off.ok || off.hi > INT64_MAX - (int64_t)a->size) {
            if (rd)
                ana_region_whole(r);
            if (wr)
                ana_region_whole(w);
            continue;
        }
        if (rd)
            ana_region_add(r, off.lo, off.hi + (int64_t)a->size);
        if (wr)
            ana_region_add(w, off.lo, off.hi + (int64_t)a->size);
    }
    for (i = first; i < last; i++) {
        uint64_t size = i < l->nargs ? l->args[i].size : 0;
        ana_region_finish(&read[i - first], size);
        ana_region_finish(&write[i - first], size);
    }
    return ANA_OK;
}

ana_status ana_kernel_region(const ana_kernel *k, const ana_launch *l, unsigned arg,
                             const uint64_t group_lo[3], const uint64_t group_hi[3],
                             ana_region *read, ana_region *write)
{
    ana_env env;
    ana_status st;

    if (!k || !l || !group_lo || !group_hi || !read || !write || arg >= k->nargs ||
        !ana_region_kind(k, arg))
        return ANA_ERR_ARG;
    st = ana_env_init(&env, k, l, group_lo, group_hi);
    if (st != ANA_OK)
        return st;
    st = ana_regions_in(k, l, &env, (int)arg, read, write);
    ana_env_free(&env);
    return st;
}

ana_status ana_kernel_regions(const ana_kernel *k, const ana_launch *l, const uint64_t group_lo[3],
                              const uint64_t group_hi[3], ana_region *read, ana_region *write)
{
    ana_env env;
    ana_status st;

    if (!k || !l || !group_lo || !group_hi || !read || !write)
        return ANA_ERR_ARG;
    st = ana_env_init(&env, k, l, group_lo, group_hi);
    if (st != ANA_OK)
        return st;
    st = ana_regions_in(k, l, &env, -1, read, write);
    ana_env_free(&env);
    return st;
}
