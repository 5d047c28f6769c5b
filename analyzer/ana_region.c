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

ana_status ana_kernel_region(const ana_kernel *k, const ana_launch *l, unsigned arg,
                             const uint64_t group_lo[3], const uint64_t group_hi[3],
                             ana_region *read, ana_region *write)
{
    ana_env env, acc_env;
    ana_status st;
    uint64_t size;
    unsigned i;
    uint8_t kind;

    if (!k || !l || !group_lo || !group_hi || !read || !write || arg >= k->nargs)
        return ANA_ERR_ARG;
    kind = k->args[arg].kind;
    if (kind != ANA_ARG_GLOBAL && kind != ANA_ARG_CONSTANT && kind != ANA_ARG_LOCAL &&
        kind != ANA_ARG_IMAGE)
        return ANA_ERR_ARG;
    st = ana_env_init(&env, k, l, group_lo, group_hi);
    if (st != ANA_OK)
        return st;
    size = arg < l->nargs ? l->args[arg].size : 0;
    ana_region_init(read);
    ana_region_init(write);
    if (k->unsupported) {
        if (k->args[arg].access & ANA_ACC_READ)
            ana_region_whole(read);
        if (k->args[arg].access & ANA_ACC_WRITE)
            ana_region_whole(write);
    }
    for (i = 0; i < k->naccesses && !k->unsupported; i++) {
        const ana_mem_access *a = &k->accesses[i];
        int rd = !a->is_write || a->is_atomic, wr = a->is_write || a->is_atomic;
        ana_ival off;
        if (a->arg != arg || ((!rd || read->whole) && (!wr || write->whole)))
            continue;
        if (!a->offset.known) {
            if (rd)
                ana_region_whole(read);
            if (wr)
                ana_region_whole(write);
            continue;
        }
        st = ana_env_copy(&acc_env, &env);
        if (st != ANA_OK)
            goto out;
        if (!ana_env_tighten(&acc_env, a->guards, a->nguards)) {
            ana_env_free(&acc_env);
            continue;   /* the guards exclude this box */
        }
        off = ana_eval(&acc_env, &a->offset);
        ana_env_free(&acc_env);
        if (!off.ok || off.hi > INT64_MAX - (int64_t)a->size) {
            if (rd)
                ana_region_whole(read);
            if (wr)
                ana_region_whole(write);
            continue;
        }
        if (rd)
            ana_region_add(read, off.lo, off.hi + (int64_t)a->size);
        if (wr)
            ana_region_add(write, off.lo, off.hi + (int64_t)a->size);
    }
    ana_region_finish(read, size);
    ana_region_finish(write, size);
    st = ANA_OK;
out:
    ana_env_free(&env);
    return st;
}
