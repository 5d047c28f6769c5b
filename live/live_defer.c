/* live_defer.c — the matcher in a live run (opt.h, "live"): calls arrive as
 * they begin, before they run; dead work and the producers of unstored
 * intermediates are kept rather than dropped, and every later call is
 * checked against what is kept: a call that may read memory a kept call
 * writes, or write memory it reads or writes, makes it run first; a call
 * that overwrites all of what it writes, or the release of that memory,
 * frees it. Memory is compared by root object (a sub-buffer is its root),
 * whole objects: conservative, and cheap enough for every call. */
#include "live/live_int.h"

#include <stdlib.h>
#include <string.h>

#define LIVE_MAX_KEPT 256      /* beyond this the oldest kept call runs */
#define CL_MAP_WRITE_ (1u << 1)
#define CL_MAP_WRITE_INVALIDATE_REGION_ (1u << 2)

static void live_kept_free(live_kept *k)
{
    free(k->roots);
    free(k->ro);
    memset(k, 0, sizeof *k);
}

void live_free(live_exec *x)
{
    for (size_t i = 0; i < x->nkept; i++)
        live_kept_free(&x->kept[i]);
    for (unsigned i = 0; i < PLAN_CHAIN_MAX; i++)
        live_kept_free(&x->held_sets[i]);
    free(x->kept);
    free(x->force);
    free(x->discard);
    free(x->begun);
    free(x->fz_forced);
}

static int live_push_u64(uint64_t **arr, size_t *n, size_t *cap, uint64_t v)
{
    if (plan_grow((void **)arr, cap, *n + 1, sizeof **arr))
        return -1;
    (*arr)[(*n)++] = v;
    return 0;
}

/* ------------------------------------------------------------ memory sets */

typedef struct live_sets {
    uint64_t *r, *w;
    size_t nr, nw, cr, cw;
    int all;
    uint64_t full;
    int nomem;
    live_launch_id launch;
} live_sets;

/* The launch identity of @p c into @p l (kernel name and program, NDRange). */
static void live_launch_of(live_exec *x, const tf_call *c, const plan_obj *k, live_launch_id *l)
{
    memset(l, 0, sizeof *l);
    plan_obj *p = plan_track_obj(&x->t, k->program);
    if (!k->name || !p || !p->has_src)
        return;
    l->name = k->name;
    memcpy(l->program, p->src, 16);
    uint64_t dim = 1;
    plan_arg_u64(c, "work_dim", &dim);
    l->range[0] = dim;
    static const char *const arrs[] = {"global_work_size", "global_work_offset", "local_work_size"};
    for (int a = 0; a < 3; a++) {
        const tf_value *v = plan_arg(c, arrs[a]);
        for (uint32_t i = 0; v && v->type == TF_ARRAY && i < v->v.arr.n && i < 3; i++)
            tf_value_u64(&v->v.arr.items[i], &l->range[1 + 3 * a + i]);
    }
}

static int live_launch_same(const live_launch_id *a, const live_launch_id *b)
{
    return a->name && b->name && !strcmp(a->name, b->name) && !memcmp(a->program, b->program, 16) &&
           !memcmp(a->range, b->range, sizeof a->range);
}

static uint64_t live_root_of(const plan_track *t, uint64_t id)
{
    plan_obj *o = plan_track_obj(t, id);
    return o && o->kind == PLAN_OBJ_MEM ? o->root : id;
}

static void live_sets_add(live_sets *s, int write, uint64_t root)
{
    if (!root)
        return;
    uint64_t **a = write ? &s->w : &s->r;
    size_t *n = write ? &s->nw : &s->nr, *cap = write ? &s->cw : &s->cr;
    for (size_t i = 0; i < *n; i++)
        if ((*a)[i] == root)
            return;
    if (live_push_u64(a, n, cap, root))
        s->nomem = 1;
}

/* Root @p root is overwritten in full by a write, fill or copy of @p size
 * bytes at @p off into memory object @p id. */
static uint64_t live_full_cover(const plan_track *t, uint64_t id, uint64_t off, uint64_t size)
{
    plan_obj *o = plan_track_obj(t, id);
    if (!o || o->kind != PLAN_OBJ_MEM || o->image || o->root != o->id || o->has_sub || o->visible)
        return 0;
    return off == 0 && size == o->size && size ? o->id : 0;
}

/* What enqueue @p c may read and write, by root. */
static void live_sets_of(live_exec *x, const tf_call *c, live_sets *s)
{
    const char *fn = c->sig->name;
    uint64_t id = 0, v = 0, off = 0, size = 0;
    memset(s, 0, sizeof *s);
    if (!strcmp(fn, "clEnqueueNDRangeKernel") || !strcmp(fn, "clEnqueueTask")) {
        plan_arg_u64(c, "kernel", &id);
        plan_obj *k = plan_track_obj(&x->t, id);
        if (!k || k->kind != PLAN_OBJ_KERNEL) {
            s->all = 1;
            return;
        }
        live_launch_of(x, c, k, &s->launch);
        for (unsigned i = 0; i < k->nargs; i++) {
            if (k->args[i].kind != PLAN_KARG_MEM || !k->args[i].id)
                continue;
            uint8_t a = plan_track_access(&x->t, k, i);
            uint64_t root = live_root_of(&x->t, k->args[i].id);
            if (a == PLAN_ACC_READ || a == PLAN_ACC_RW || a == PLAN_ACC_UNKNOWN)
                live_sets_add(s, 0, root);
            if (a == PLAN_ACC_WRITE || a == PLAN_ACC_RW || a == PLAN_ACC_UNKNOWN)
                live_sets_add(s, 1, root);
        }
        return;
    }
    if (!strncmp(fn, "clEnqueueSVM", 12) || !strncmp(fn, "clEnqueueMarker", 15) ||
        !strncmp(fn, "clEnqueueBarrier", 16) || !strcmp(fn, "clEnqueueWaitForEvents"))
        return;   /* SVM is never kept (plans keep launches of SVM traces); markers move no bytes */
    if (!strcmp(fn, "clEnqueueMigrateMemObjects")) {
        const tf_value *l = plan_arg(c, "mem_objects");
        for (uint32_t i = 0; l && l->type == TF_ARRAY && i < l->v.arr.n; i++)
            if (tf_value_u64(&l->v.arr.items[i], &id)) {
                live_sets_add(s, 0, live_root_of(&x->t, id));
                live_sets_add(s, 1, live_root_of(&x->t, id));
            }
        return;
    }
    if (!strncmp(fn, "clEnqueueRead", 13)) {
        plan_arg_u64(c, fn[13] == 'I' ? "image" : "buffer", &id);
        live_sets_add(s, 0, live_root_of(&x->t, id));
        return;
    }
    if (!strncmp(fn, "clEnqueueWrite", 14) || !strncmp(fn, "clEnqueueFill", 13)) {
        int image = !strcmp(fn, "clEnqueueWriteImage") || !strcmp(fn, "clEnqueueFillImage");
        plan_arg_u64(c, image ? "image" : "buffer", &id);
        live_sets_add(s, 1, live_root_of(&x->t, id));
        if (!strcmp(fn, "clEnqueueWriteBuffer") || !strcmp(fn, "clEnqueueFillBuffer")) {
            plan_arg_u64(c, "offset", &off);
            plan_arg_u64(c, "size", &size);
            s->full = live_full_cover(&x->t, id, off, size);
        }
        return;
    }
    if (!strncmp(fn, "clEnqueueCopy", 13)) {
        uint64_t src = 0, dst = 0;
        if (!plan_arg_u64(c, "src_buffer", &src))
            plan_arg_u64(c, "src_image", &src);
        if (!plan_arg_u64(c, "dst_buffer", &dst))
            plan_arg_u64(c, "dst_image", &dst);
        live_sets_add(s, 0, live_root_of(&x->t, src));
        live_sets_add(s, 1, live_root_of(&x->t, dst));
        if (!strcmp(fn, "clEnqueueCopyBuffer")) {
            plan_arg_u64(c, "dst_offset", &off);
            plan_arg_u64(c, "size", &size);
            if (live_root_of(&x->t, src) != live_root_of(&x->t, dst))
                s->full = live_full_cover(&x->t, dst, off, size);
        }
        return;
    }
    if (!strncmp(fn, "clEnqueueMap", 12)) {
        plan_arg_u64(c, fn[12] == 'B' ? "buffer" : "image", &id);
        plan_arg_u64(c, "map_flags", &v);
        live_sets_add(s, 0, live_root_of(&x->t, id));
        if (v & (CL_MAP_WRITE_ | CL_MAP_WRITE_INVALIDATE_REGION_))
            live_sets_add(s, 1, live_root_of(&x->t, id));
        return;
    }
    if (!strcmp(fn, "clEnqueueUnmapMemObject")) {
        plan_arg_u64(c, "memobj", &id);
        live_sets_add(s, 0, live_root_of(&x->t, id));
        live_sets_add(s, 1, live_root_of(&x->t, id));
        return;
    }
    s->all = 1;   /* native kernels, GL/EGL, extensions: anything */
}

static void live_sets_free(live_sets *s)
{
    free(s->r);
    free(s->w);
}

static int live_has(const uint64_t *a, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] == v)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ kept calls */

static plan_status live_keep(live_kept *k, uint64_t seq, uint32_t xform, const live_sets *s)
{
    memset(k, 0, sizeof *k);
    k->seq = seq;
    k->xform = xform;
    k->all = s->all;
    k->full = s->full;
    k->roots = malloc((s->nr + s->nw + 1) * sizeof *k->roots);
    if (!k->roots)
        return PLAN_ERR_NOMEM;
    if (s->nr)
        memcpy(k->roots, s->r, s->nr * sizeof *k->roots);
    if (s->nw)
        memcpy(k->roots + s->nr, s->w, s->nw * sizeof *k->roots);
    k->nr = (uint32_t)s->nr;
    k->nw = (uint32_t)s->nw;
    k->launch = s->launch;
    return PLAN_OK;
}

static plan_status live_kept_add(live_exec *x, const live_kept *k)
{
    if (plan_grow((void **)&x->kept, &x->capkept, x->nkept + 1, sizeof *x->kept))
        return PLAN_ERR_NOMEM;
    x->kept[x->nkept++] = *k;
    x->nkept_total++;
    return PLAN_OK;
}

/* Removes kept call @p i (order kept) and lists it to run or to free. */
static plan_status live_kept_out(live_exec *x, size_t i, int run)
{
    live_kept k = x->kept[i];
    memmove(&x->kept[i], &x->kept[i + 1], (x->nkept - i - 1) * sizeof *x->kept);
    x->nkept--;
    int bad = run ? live_push_u64(&x->force, &x->nforce, &x->capforce, k.seq)
                  : live_push_u64(&x->discard, &x->ndiscard, &x->capdiscard, k.seq);
    if (run) {
        x->nforced++;
        const plan_xform *f = k.xform ? plan_get_xform(x->p, k.xform - 1) : NULL;
        if (f) {   /* applied, then undone: listed with its reason */
            x->state[f->id - 1] = LIVE_X_PENDING;
            live_exec_fell_back(x, f, k.seq, "a later call needed its results (or overwrote its inputs): it ran after all");
        }
        if (f && f->action == PLAN_ACT_HOLD && f->fused && x->fz_forced && f->fused <= plan_fused_count(x->p))
            x->fz_forced[f->fused - 1]++;
    } else {
        x->nfreed++;
    }
    live_kept_free(&k);
    return bad ? PLAN_ERR_NOMEM : PLAN_OK;
}

/* A call with memory sets @p s is about to run: the kept calls it may
 * observe or disturb run first; those whose output it overwrites in full
 * are freed. */
static plan_status live_hazards(live_exec *x, const live_sets *s)
{
    plan_status st = PLAN_OK;
    for (size_t i = 0; i < x->nkept && st == PLAN_OK;) {
        const live_kept *k = &x->kept[i];
        const uint64_t *kr = k->roots, *kw = k->roots + k->nr;
        int conflict = s->all || k->all, covered = 0;
        for (uint32_t j = 0; j < k->nw && !conflict; j++)
            conflict = live_has(s->r, s->nr, kw[j]) || live_has(s->w, s->nw, kw[j]);
        for (uint32_t j = 0; j < k->nr && !conflict; j++)
            conflict = live_has(s->w, s->nw, kr[j]);
        if (conflict && !s->all && !k->all && s->full && k->nw == 1 && kw[0] == s->full &&
            !live_has(s->r, s->nr, s->full))
            covered = 1;   /* what it would write is overwritten in full before anyone reads it */
        if (conflict && !s->all && !k->all && live_launch_same(&k->launch, &s->launch)) {
            /* the same kernel over the same range writes the same elements
             * again (the rule the fuse pass applies to the recording) */
            covered = 1;
            for (uint32_t j = 0; j < k->nw && covered; j++)
                covered = live_has(s->w, s->nw, kw[j]) && !live_has(s->r, s->nr, kw[j]);
            for (uint32_t j = 0; j < k->nr && covered; j++)
                covered = !live_has(s->w, s->nw, kr[j]) || live_has(kw, k->nw, kr[j]);
        }
        if (conflict)
            st = live_kept_out(x, i, !covered);
        else
            i++;
    }
    return st;
}

static plan_status live_begun_push(live_exec *x, uint64_t seq, plan_fate fate)
{
    if (plan_grow((void **)&x->begun, &x->capbegun, x->nbegun + 1, sizeof *x->begun))
        return PLAN_ERR_NOMEM;
    x->begun[x->nbegun].seq = seq;
    x->begun[x->nbegun].fate = (uint8_t)fate;
    x->nbegun++;
    return PLAN_OK;
}

/* A held launch's memory arguments (live_kept.ro: those its kernel only
 * reads, then all), from its kernel's arguments as set now. */
static plan_status live_held_ro(live_exec *x, const tf_call *c, live_kept *h)
{
    uint64_t kid = 0;
    plan_arg_u64(c, "kernel", &kid);
    plan_obj *k = plan_track_obj(&x->t, kid);
    if (!k || k->kind != PLAN_OBJ_KERNEL || !k->nargs)
        return PLAN_OK;
    h->ro = calloc(2 * (size_t)k->nargs, sizeof *h->ro);
    if (!h->ro)
        return PLAN_ERR_NOMEM;
    h->nro = k->nargs;
    for (uint32_t i = 0; i < k->nargs; i++)
        if (k->args[i].kind == PLAN_KARG_MEM) {
            h->ro[k->nargs + i] = k->args[i].id;
            if (plan_track_access(&x->t, k, i) == PLAN_ACC_READ)
                h->ro[i] = k->args[i].id;
        }
    return PLAN_OK;
}

/* The memory object parameter @p i of fused kernel @p z takes, when the
 * launch it comes from only reads it (0 otherwise): a held launch's
 * (x->held_sets, @p nh of them) or consumer kernel @p k's. */
static uint64_t live_param_ro(live_exec *x, const plan_fused *z, unsigned i, unsigned nh, plan_obj *k)
{
    unsigned from = z->params[i][0], idx = z->params[i][1];
    if (from < nh)
        return idx < x->held_sets[from].nro ? x->held_sets[from].ro[idx] : 0;
    if (from == nh && k && idx < k->nargs && k->args[idx].kind == PLAN_KARG_MEM &&
        plan_track_access(&x->t, k, idx) == PLAN_ACC_READ)
        return k->args[idx].id;
    return 0;
}

/* 1 when some parameter of @p z passes memory object @p id other than as
 * a read-only argument (or a held launch may touch any memory). */
static int live_param_other(live_exec *x, const plan_fused *z, unsigned nh, plan_obj *k, uint64_t id)
{
    for (unsigned i = 0; i < z->nparams; i++) {
        unsigned from = z->params[i][0], idx = z->params[i][1];
        if (from < nh) {
            const live_kept *h = &x->held_sets[from];
            if (h->all || idx >= h->nro || (!h->ro[idx] && h->ro[h->nro + idx] == id))
                return 1;
        } else if (from == nh && k && idx < k->nargs && k->args[idx].kind == PLAN_KARG_MEM &&
                   k->args[idx].id == id && plan_track_access(&x->t, k, idx) != PLAN_ACC_READ) {
            return 1;
        }
    }
    return 0;
}

/* LIVE_FUSE of a fused kernel that does not store the intermediate buffers,
 * after @p nh held launches: the parameters that pass an intermediate
 * (a buffer a launch before the one it comes from wrote (in a chain the
 * launch right before, in a gather any producer), only read by that
 * launch, made without contents and written by nothing else, passed by no
 * other parameter) (live_answer.fresh). */
static void live_fresh_params(live_exec *x, const tf_call *c, const plan_fused *z, unsigned nh, live_answer *a)
{
    uint64_t kid = 0;
    plan_arg_u64(c, "kernel", &kid);
    plan_obj *k = plan_track_obj(&x->t, kid);
    if (!k || k->kind != PLAN_OBJ_KERNEL)
        return;
    for (unsigned i = 0; i < z->nparams && a->nfresh < PLAN_CHAIN_MAX; i++) {
        unsigned from = z->params[i][0];
        uint64_t id = from ? live_param_ro(x, z, i, nh, k) : 0;
        int wrote = 0;
        for (unsigned j = 0; id && j < from && j < nh; j++) {
            const live_kept *w = &x->held_sets[j];
            if (w->all) {
                wrote = 0;   /* it may write anything: no answer */
                break;
            }
            wrote |= live_has(w->roots + w->nr, w->nw, id);
        }
        if (!wrote)
            continue;   /* not an intermediate */
        unsigned same = 0;
        for (unsigned j = 0; j < z->nparams; j++)
            same += live_param_ro(x, z, j, nh, k) == id;
        plan_obj *m = plan_track_obj(&x->t, id);
        if (same != 1 || live_param_other(x, z, nh, k, id) || !m || !m->size || !plan_track_fresh_once(&x->t, id))
            continue;
        a->fresh[a->nfresh++] = (uint8_t)i;
        if (m->size > a->fresh_size)
            a->fresh_size = m->size;
    }
}

static void live_answer_fill(live_exec *x, live_answer *a, int verdict)
{
    a->verdict = verdict;
    a->force = x->force;
    a->nforce = x->nforce;
    a->discard = x->discard;
    a->ndiscard = x->ndiscard;
}

plan_status live_exec_begin(live_exec *x, const tf_call *c, live_answer *a)
{
    memset(a, 0, sizeof *a);
    x->nforce = x->ndiscard = 0;
    x->hold_new = NULL;
    const char *fn = c->sig->name;
    plan_fate fate = PLAN_FATE_RUN;
    unsigned nheld = x->nheld;
    int v = LIVE_RUN, droppable = plan_droppable(fn);
    plan_status st = PLAN_OK;
    if (x->n && droppable)
        v = live_exec_decide(x, c, &fate);
    if (v < 0)
        return PLAN_ERR_NOMEM;
    unsigned nrun = live_exec_unhold(x, v, fn);
    for (unsigned i = 0; i < nrun; i++) {
        /* the chain did not go on: its held launches run as recorded, first */
        if (live_push_u64(&x->force, &x->nforce, &x->capforce, x->held_sets[i].seq))
            return PLAN_ERR_NOMEM;
        live_kept_free(&x->held_sets[i]);
    }
    int holds = v == LIVE_HOLD || v == LIVE_LINK;
    if (!strncmp(fn, "clEnqueue", 9) && v != LIVE_DROP && (x->nkept || v == LIVE_DEFER || holds)) {
        /* (what it reads and writes matters only against kept calls, or to keep it) */
        live_sets s;
        live_sets_of(x, c, &s);
        st = s.nomem ? PLAN_ERR_NOMEM : live_hazards(x, &s);
        live_kept k;
        if (st == PLAN_OK && v == LIVE_DEFER) {
            st = live_keep(&k, c->seq, x->deferred ? x->deferred->id : 0, &s);
            if (st == PLAN_OK && (st = live_kept_add(x, &k)) != PLAN_OK)
                live_kept_free(&k);
            while (st == PLAN_OK && x->nkept > LIVE_MAX_KEPT)
                st = live_kept_out(x, 0, 1);
        } else if (st == PLAN_OK && holds && x->nheld) {
            live_kept *h = &x->held_sets[x->nheld - 1];
            live_kept_free(h);
            st = live_keep(h, c->seq, x->held[x->nheld - 1]->id, &s);
            if (st == PLAN_OK)
                st = live_held_ro(x, c, h);
        }
        live_sets_free(&s);
    }
    if (st == PLAN_OK && v == LIVE_FUSE) {
        const plan_fused *z = live_exec_fused(x);
        int keep = z && !z->keep_store && nheld;
        if (keep)
            live_fresh_params(x, c, z, nheld, a);
        for (unsigned i = 0; i < nheld && st == PLAN_OK; i++) {
            /* the live calls held become kept calls, in order; one whose
             * output the application released meanwhile is freed at once */
            live_kept *h = &x->held_sets[i];
            free(h->ro);
            h->ro = NULL;
            h->nro = 0;
            if (keep && !h->gone && (st = live_kept_add(x, h)) == PLAN_OK) {
                a->keep_held |= 1u << i;
                memset(h, 0, sizeof *h);
                continue;
            }
            if (keep && h->gone) {
                x->nkept_total++;
                x->nfreed++;
            }
            live_kept_free(h);
        }
    }
    if (st == PLAN_OK && droppable)
        st = live_begun_push(x, c->seq, fate);
    live_answer_fill(x, a, v);
    return st;
}

int live_item(live_exec *x, const tf_item *it)
{
    const tf_call *c = &it->u.call;
    plan_fate fate = PLAN_FATE_RUN;
    for (size_t i = x->nbegun; i-- > 0;)
        if (x->begun[i].seq == c->seq) {
            fate = (plan_fate)x->begun[i].fate;
            x->begun[i] = x->begun[--x->nbegun];
            break;
        }
    return plan_track_call(&x->t, c, fate) == PLAN_OK ? LIVE_RUN : PLAN_ERR_NOMEM;
}

plan_status live_exec_karg(live_exec *x, uint64_t kernel, uint32_t index, uint64_t size, const tf_value *value)
{
    return plan_track_karg(&x->t, kernel, index, size, value, 0);
}

/* 1 when what kept (or held) call @p k writes is memory object @p id alone. */
static int live_kept_writes_only(const live_kept *k, uint64_t id)
{
    return !k->all && k->nw == 1 && k->roots[k->nr] == id;
}

void live_exec_released(live_exec *x, uint64_t id, live_answer *a)
{
    memset(a, 0, sizeof *a);
    x->nforce = x->ndiscard = 0;
    plan_obj *o = plan_track_obj(&x->t, id);
    if (o && o->kind == PLAN_OBJ_MEM && o->root == o->id && !o->has_sub) {
        /* nobody can read what they write any more: kept calls are freed,
         * held ones will be at their fused launch */
        for (unsigned i = 0; i < x->nheld; i++)
            x->held_sets[i].gone |= live_kept_writes_only(&x->held_sets[i], id);
        for (size_t i = 0; i < x->nkept;) {
            if (live_kept_writes_only(&x->kept[i], id) && live_kept_out(x, i, 0) == PLAN_OK)
                continue;
            i++;
        }
    }
    live_answer_fill(x, a, LIVE_RUN);
}

void live_exec_live_end(live_exec *x, live_answer *a)
{
    memset(a, 0, sizeof *a);
    x->nforce = x->ndiscard = 0;
    while (x->nkept && live_kept_out(x, 0, 0) == PLAN_OK) {
    }
    live_answer_fill(x, a, LIVE_RUN);
}

void live_exec_unkept(live_exec *x, uint64_t seq)
{
    for (size_t i = 0; i < x->nkept; i++)
        if (x->kept[i].seq == seq) {
            live_kept_free(&x->kept[i]);
            memmove(&x->kept[i], &x->kept[i + 1], (x->nkept - i - 1) * sizeof *x->kept);
            x->nkept--;
            x->nkept_total--;   /* never kept after all */
            return;
        }
}
