/* plan_track_mem.c — the tracker's view of memory effects: what each
 * enqueue does to the known contents of memory (plan_hold.c) — writes and
 * fills leave their bytes, read-backs the bytes they read, and everything
 * that may write cuts what was known — and the redundancy check of a write
 * or fill about to run. Which call does what comes from the API
 * description (api_sem.h, generated from recorder/api.overlay). */
#include "plan/plan_int.h"

#include <string.h>
#include <xxhash.h>

#include "api_sem.h"

/* ------------------------------------------------------------ memory effects */

/* Kills the bytes of memory object @p id (all of them, or [off, off+len)). */
static void plan_kill_obj(plan_track *t, uint64_t id, int part, uint64_t off, uint64_t len)
{
    plan_obj *o = plan_track_obj(t, id);
    uint64_t lo, hi;
    plan_obj *root = plan_mem_range(t, o, &lo, &hi);
    if (!root)
        return;
    plan_obj_written(root);
    if (part && !o->image && o->size) {
        uint64_t a = lo + off, b = a + len;
        lo = a < lo ? hi : a;
        hi = b < a || b > hi ? hi : b;
    }
    plan_hold_kill(root, lo, hi);
}

/* Which arguments a launch may write: from the plan's kernel facts (a
 * kernel without them writes every memory argument). */
uint8_t plan_track_access(plan_track *t, plan_obj *k, unsigned arg)
{
    if (!k->facts_looked) {
        k->facts_looked = 1;
        plan_obj *p = plan_track_obj(t, k->program);
        k->facts = t->facts && k->name && p && p->has_src ? plan_find_kernel(t->facts, k->name, p->src) : NULL;
    }
    return !k->facts || arg >= k->facts->nargs ? PLAN_ACC_UNKNOWN : k->facts->access[arg];
}

static int plan_launch_writes(plan_track *t, plan_obj *k, unsigned arg)
{
    uint8_t a = plan_track_access(t, k, arg);
    return a == PLAN_ACC_WRITE || a == PLAN_ACC_RW || a == PLAN_ACC_UNKNOWN;
}

static void plan_launch(plan_track *t, const tf_call *c)
{
    uint64_t kid = 0;
    plan_arg_u64(c, "kernel", &kid);
    plan_obj *k = plan_track_obj(t, kid);
    if (!k || k->kind != PLAN_OBJ_KERNEL) {
        plan_hold_kill_all(t);
        return;
    }
    for (unsigned i = 0; i < k->nargs; i++)
        if (k->args[i].kind == PLAN_KARG_MEM && k->args[i].id && plan_launch_writes(t, k, i))
            plan_kill_obj(t, k->args[i].id, 0, 0, 0);
}

static int plan_blocking(const tf_call *c)
{
    static const char *const names[] = {"blocking_write", "blocking_read", "blocking_map", "blocking_copy"};
    uint64_t b = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (plan_arg_u64(c, names[i], &b))
            return b != 0;
    return 0;
}

/* The geometry part of the key of a transfer whose bytes follow a
 * geometry (rects, images, fills): the key is plan_key_combine() of the
 * data's hash with it. */
static void plan_geom_key(const tf_call *c, const char *tag, uint8_t g[16])
{
    static const char *const geom[] = {"buffer_origin", "host_origin", "origin", "region", "buffer_row_pitch",
                                       "buffer_slice_pitch", "host_row_pitch", "host_slice_pitch", "input_row_pitch",
                                       "input_slice_pitch", "row_pitch", "slice_pitch", "pattern_size"};
    uint64_t buf[1 + 13 * 3];
    size_t n = 0;
    buf[n++] = XXH64(tag, strlen(tag), 0);
    for (size_t i = 0; i < sizeof geom / sizeof geom[0]; i++) {
        const tf_value *v = plan_arg(c, geom[i]);
        uint64_t x[3] = {0, 0, 0};
        if (v && v->type == TF_ARRAY)
            for (uint32_t j = 0; j < v->v.arr.n && j < 3; j++)
                tf_value_u64(&v->v.arr.items[j], &x[j]);
        else if (v)
            tf_value_u64(v, &x[0]);
        for (int j = 0; j < 3; j++)
            buf[n++] = x[j];
    }
    XXH128_canonical_t cn;
    XXH128_canonicalFromHash(&cn, XXH3_128bits(buf, n * sizeof buf[0]));
    memcpy(g, cn.digest, 16);
}

/* The key of a fill: its pattern bytes, size and place. */
static int plan_fill_key(const tf_call *c, uint8_t key[16])
{
    uint8_t h[16], g[16];
    if (!plan_value_hash(plan_arg(c, "pattern"), h) && !plan_value_hash(plan_arg(c, "fill_color"), h))
        return 0;
    plan_geom_key(c, "fill", g);
    plan_key_combine(h, g, key);
    return 1;
}

/* Where a plain write, read or fill of @p c lands (effect @p e of @p a, a
 * byte range): root, [lo, hi). */
static plan_obj *plan_xfer_range(plan_track *t, const tf_call *c, const api_sem *a, const api_effect *e, uint64_t *lo,
                               uint64_t *hi)
{
    uint64_t id = 0, off = 0, size = 0;
    plan_arg_u64(c, api_sem_param(a, e->obj), &id);
    plan_obj *o = plan_track_obj(t, id);
    uint64_t olo, ohi;
    plan_obj *root = plan_mem_range(t, o, &olo, &ohi);
    if (!root || o->image || !o->size)
        return NULL;
    plan_arg_u64(c, api_sem_param(a, e->off), &off);
    plan_arg_u64(c, api_sem_param(a, e->size), &size);
    if (off > o->size || size > o->size - off)
        return NULL;
    *lo = olo + off;
    *hi = *lo + size;
    return root;
}

/* The one effect of a host write or fill (op write or fill), NULL for any
 * other call. */
static const api_effect *plan_host_write(const api_sem *a)
{
    if (!a || (a->op != API_OP_WRITE && a->op != API_OP_FILL) || a->neffects != 1 ||
        !(a->eff[0].access & API_ACC_WRITE))
        return NULL;
    return &a->eff[0];
}

/* What the redundancy check compares for a write or fill @p c: the
 * content key, its origin, and the bytes [lo, hi) of root. */
static plan_obj *plan_write_content(plan_track *t, const tf_call *c, const api_sem *a, plan_content *k)
{
    uint8_t h[16];
    memset(k, 0, sizeof *k);
    plan_arg_u64(c, "command_queue", &k->queue);
    k->seq = c->seq;
    const api_effect *e = plan_host_write(a);
    if (!e)
        return NULL;
    int fill = a->op == API_OP_FILL;
    if (e->range == API_RANGE_BYTES) {
        plan_obj *root = plan_xfer_range(t, c, a, e, &k->lo, &k->hi);
        if (!root || root->visible)
            return NULL;
        k->origin = k->lo;
        if (!fill ? !plan_value_hash(plan_arg(c, "ptr"), k->key) : !plan_fill_key(c, k->key))
            return NULL;
        return root;
    }
    if (e->range != API_RANGE_RECT && e->range != API_RANGE_IMAGE)
        return NULL;
    uint64_t id = 0;
    plan_arg_u64(c, api_sem_param(a, e->obj), &id);
    plan_obj *root = plan_mem_range(t, plan_track_obj(t, id), &k->lo, &k->hi);
    if (!root || root->visible)
        return NULL;
    if (fill) {
        if (!plan_fill_key(c, k->key))
            return NULL;
    } else {
        uint8_t g[16];
        if (!plan_value_hash(plan_arg(c, "ptr"), h))
            return NULL;
        plan_geom_key(c, "rect", g);
        plan_key_combine(h, g, k->key);
    }
    return root;
}

int plan_track_redundant(plan_track *t, const tf_call *c, uint64_t *holds_seq)
{
    plan_content k;
    /* a call about to run (live: no result yet), or one that succeeded */
    plan_obj *root = !c->complete || plan_call_ok(c) ? plan_write_content(t, c, api_sem_find(c->sig->name), &k) : NULL;
    if (!root || k.lo >= k.hi)
        return 0;
    const plan_content *h = plan_hold_find(t, root, k.key, k.origin, k.lo, k.hi, k.queue);
    if (!h)
        return 0;
    *holds_seq = h->seq;
    return 1;
}

/* A host read-back (effect @p e of @p a): its bytes are now known (or will
 * be, with its DATA). */
static plan_status plan_track_read(plan_track *t, const tf_call *c, const api_sem *a, const api_effect *e)
{
    plan_content k;
    memset(&k, 0, sizeof k);
    k.seq = c->seq;
    k.settled = plan_blocking(c);
    plan_arg_u64(c, "command_queue", &k.queue);
    uint8_t h[16];
    int have = plan_value_hash(plan_out(c, "ptr"), h);
    int bytes = e->range == API_RANGE_BYTES;
    plan_obj *root;
    if (bytes) {
        root = plan_xfer_range(t, c, a, e, &k.lo, &k.hi);
        k.origin = k.lo;
        if (have)
            memcpy(k.key, h, 16);
    } else {
        uint64_t id = 0;
        plan_arg_u64(c, api_sem_param(a, e->obj), &id);
        root = plan_mem_range(t, plan_track_obj(t, id), &k.lo, &k.hi);
        plan_geom_key(c, "rect", k.key);   /* pending: combined with the data when it comes */
        if (have)
            plan_key_combine(h, k.key, k.key);
    }
    if (!root || root->visible || k.lo >= k.hi)
        return PLAN_OK;
    k.pending = !have;
    if (k.pending && !bytes)
        k.pending = 2;   /* a rect: combine the geometry with the data's hash */
    return plan_hold_add(t, root, &k);
}

/* Memory effects of an enqueue that runs (or was dropped as dead: its
 * outputs are then unknown, which the same kills express). */
plan_status plan_track_enqueue(plan_track *t, const tf_call *c, const char *fn, plan_fate fate)
{
    uint64_t id = 0, v = 0, queue = 0;
    if (fate == PLAN_FATE_REDUNDANT)   /* the bytes were there already: nothing changes */
        return PLAN_OK;
    plan_arg_u64(c, "command_queue", &queue);
    const api_sem *a = api_sem_find(fn);
    const api_effect *hw = plan_host_write(a);
    if (!a || (a->flags & API_F_UNKNOWN)) {
        plan_hold_kill_all(t);   /* native kernels, GL/EGL, extensions: anything may change */
    } else if (hw) {   /* a host write or fill: its bytes are known */
        plan_content k;
        plan_obj *root = plan_write_content(t, c, a, &k);
        if (root) {
            plan_obj_written(root);
            plan_hold_kill(root, k.lo, k.hi);
            k.settled = plan_blocking(c);
            if (fate == PLAN_FATE_RUN && plan_hold_add(t, root, &k) != PLAN_OK)
                return PLAN_ERR_NOMEM;
        } else {
            plan_arg_u64(c, api_sem_param(a, hw->obj), &id);
            plan_kill_obj(t, id, 0, 0, 0);
        }
    } else {
        /* every effect on memory objects (SVM memory is not tracked) */
        for (unsigned i = 0; i < a->neffects; i++) {
            const api_effect *e = &a->eff[i];
            const char *obj = api_sem_param(a, e->obj);
            if (e->range == API_RANGE_SVM || e->range == API_RANGE_SVMLIST)
                continue;
            if (e->range == API_RANGE_KERNEL) {
                plan_launch(t, c);
            } else if (e->access == API_ACC_READ) {
                if (a->op == API_OP_READ && fate == PLAN_FATE_RUN && plan_track_read(t, c, a, e) != PLAN_OK)
                    return PLAN_ERR_NOMEM;   /* a read-back; a copy's source changes nothing */
            } else if (e->access & API_ACC_MAP) {
                plan_arg_u64(c, api_sem_param(a, e->flags), &v);
                plan_arg_u64(c, obj, &id);
                if (api_map_access(v) & API_ACC_WRITE)
                    plan_kill_obj(t, id, 0, 0, 0);
            } else if (e->access & API_ACC_MIGRATE) {
                const tf_value *l = plan_arg(c, obj);
                plan_arg_u64(c, api_sem_param(a, e->flags), &v);
                for (uint32_t j = 0; (api_migrate_access(v) & API_ACC_WRITE) && l && l->type == TF_ARRAY &&
                                     j < l->v.arr.n; j++)
                    if (tf_value_u64(&l->v.arr.items[j], &id))
                        plan_kill_obj(t, id, 0, 0, 0);
            } else if (e->access & (API_ACC_WRITE | API_ACC_MAPPED)) {
                uint64_t off = 0, size = 0;
                int part = e->range == API_RANGE_BYTES && e->size >= 0;   /* else the whole object */
                plan_arg_u64(c, obj, &id);
                if (part) {
                    plan_arg_u64(c, api_sem_param(a, e->off), &off);
                    plan_arg_u64(c, api_sem_param(a, e->size), &size);
                }
                plan_kill_obj(t, id, part, off, size);
            }
        }
    }
    if (fate == PLAN_FATE_RUN && plan_blocking(c)) {   /* a blocking command: on an in-order queue, all before it is done */
        plan_obj *q = plan_track_obj(t, queue);
        if (q && q->in_order)
            plan_hold_settle(t, queue);
    }
    return PLAN_OK;
}
