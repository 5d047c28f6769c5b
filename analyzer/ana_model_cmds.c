/* ana_model_cmds.c — the command side of the model: every successful
 * enqueue and host synchronization call becomes an ana_cmd with its queue,
 * wait list, produced event, the byte ranges it reads and writes (launches
 * here, as whole buffers until ana_model_analyze() refines them; transfers
 * exactly, in ana_model_xfer.c), and its host time. Which calls make
 * commands, of which kind, with which wait list, comes from the API
 * description (api_sem.h, generated from recorder/api.overlay). */
#include "analyzer/ana_model_int.h"

#include <CL/cl.h>
#include <string.h>

/* The command kind of each operation of the API description. */
static const uint8_t ana_kind_of_op[API_OP_COUNT] = {
    [API_OP_NONE] = ANA_CMD_OTHER, [API_OP_KERNEL] = ANA_CMD_KERNEL, [API_OP_TASK] = ANA_CMD_KERNEL,
    [API_OP_NATIVE] = ANA_CMD_NATIVE, [API_OP_READ] = ANA_CMD_READ, [API_OP_WRITE] = ANA_CMD_WRITE,
    [API_OP_COPY] = ANA_CMD_COPY, [API_OP_FILL] = ANA_CMD_FILL, [API_OP_MAP] = ANA_CMD_MAP,
    [API_OP_UNMAP] = ANA_CMD_UNMAP, [API_OP_MIGRATE] = ANA_CMD_MIGRATE, [API_OP_SVM_MEMCPY] = ANA_CMD_SVM_MEMCPY,
    [API_OP_SVM_FILL] = ANA_CMD_SVM_FILL, [API_OP_SVM_MAP] = ANA_CMD_SVM_MAP, [API_OP_SVM_UNMAP] = ANA_CMD_SVM_UNMAP,
    [API_OP_SVM_FREE] = ANA_CMD_SVM_FREE, [API_OP_SVM_MIGRATE] = ANA_CMD_SVM_MIGRATE,
    [API_OP_MARKER] = ANA_CMD_MARKER, [API_OP_BARRIER] = ANA_CMD_BARRIER, [API_OP_WAIT_EVENTS] = ANA_CMD_BARRIER,
    [API_OP_FINISH] = ANA_CMD_FINISH, [API_OP_FLUSH] = ANA_CMD_FLUSH, [API_OP_WAIT] = ANA_CMD_WAIT,
    [API_OP_SET_EVENT] = ANA_CMD_SET_EVENT, [API_OP_OTHER] = ANA_CMD_OTHER,
};

/* An enqueue the API description does not know (a newer header's): a
 * command of unknown kind, its wait list where enqueues keep it. */
static const api_sem ana_sem_other = { .name = "", .op = API_OP_OTHER, .queue = -1, .blocking = -1,
                                       .nwait = -1, .wait = -1, .event = -1 };

/* The description of function @p fn when its calls make commands: every
 * operation of the API description (enqueues, host synchronization, user
 * event completion), and any other clEnqueue*; NULL otherwise. */
static const api_sem *ana_cmd_find(const char *fn)
{
    const api_sem *a = api_sem_find(fn);
    if (a)
        return a->op != API_OP_NONE ? a : NULL;
    return !strncmp(fn, "clEnqueue", 9) ? &ana_sem_other : NULL;
}

int ana_model_is_command(const char *fn)
{
    return ana_cmd_find(fn) != NULL;
}

/* ------------------------------------------------------------ building a command */

/* Counts a use of object @p id by the command. */
void ana_cb_use(ana_model *m, uint64_t id, uint64_t seq)
{
    uint32_t i;
    if (!id)
        return;
    if (!ana_idmap_get(&m->objmap, id, &i) && !ana_idmap_get(&m->svmmap, id, &i))
        return;
    m->objs[i].uses++;
    if (seq > m->objs[i].last_use_seq)
        m->objs[i].last_use_seq = seq;
}

/* Adds the range [lo, hi) of memory object @p id (hi = UINT64_MAX: to its
 * end; whole: the whole object because the range is unknown). */
ana_status ana_cb_ref(ana_cb *b, uint64_t id, uint64_t lo, uint64_t hi, int access, int whole,
                          const char *why)
{
    ana_model *m = b->m;
    if (!id)
        return ANA_OK;
    if (b->nrefs == ANA_CMD_MAXREF)
        return ana_model_fail(m, b->c, "more than %d memory objects", ANA_CMD_MAXREF);
    long k = ana_obj_get(m, id, ANA_OBJ_BUFFER);
    if (k < 0)
        return ANA_ERR_NOMEM;
    const ana_object *o = &m->objs[k];
    ana_memref *r = &b->refs[b->nrefs++];
    memset(r, 0, sizeof *r);
    r->object = id;
    r->root = id;
    r->arg = -1;
    r->access = (uint8_t)access;
    if (whole || hi == UINT64_MAX) {
        lo = whole ? 0 : lo;
        hi = o->size ? o->size : (whole ? 0 : lo);
        r->whole = (uint8_t)whole;
        r->why = whole ? why : NULL;
    }
    if (o->kind == ANA_OBJ_SUBBUFFER && o->parent) {
        r->root = o->parent;
        lo = ana_sat_add(lo, o->origin);
        hi = ana_sat_add(hi, o->origin);
    }
    r->lo = lo;
    r->hi = hi < lo ? lo : hi;
    ana_cb_use(m, id, b->c->seq);
    return ANA_OK;
}

/* SVM: the allocation containing @p addr, [addr, addr + size) of it. */
ana_status ana_cb_ref_svm(ana_cb *b, uint64_t addr, uint64_t size, int access)
{
    long k = ana_svm_find(b->m, addr);
    if (k < 0)
        return ANA_OK;   /* host memory, or an address no allocation holds */
    const ana_object *o = &b->m->objs[k];
    if (b->nrefs == ANA_CMD_MAXREF)
        return ana_model_fail(b->m, b->c, "more than %d memory objects", ANA_CMD_MAXREF);
    ana_memref *r = &b->refs[b->nrefs++];
    memset(r, 0, sizeof *r);
    r->object = r->root = o->id;
    r->arg = -1;
    r->access = (uint8_t)access;
    r->lo = addr - o->id;
    r->hi = size ? ana_sat_add(r->lo, size) : o->size;
    if (!size) {
        r->lo = 0;
        r->whole = 1;
        r->why = "whole SVM allocation";
    }
    ana_cb_use(b->m, o->id, b->c->seq);
    return ANA_OK;
}

/* A 3-element origin/region array. */
ana_status ana_cb_vec3(ana_cb *b, const char *name, uint64_t v[3], uint64_t dflt)
{
    v[0] = v[1] = v[2] = dflt;
    int n = ana_u64_array(ana_call_arg(b->c, name), v, 3);
    if (n < 0)
        return ana_model_fail(b->m, b->c, "%s is not a list of sizes", name);
    return ANA_OK;
}

/* ------------------------------------------------------------ kernels */

/* Fallback ranges of a launch before the kernel analysis: every memory
 * argument whole, read and/or written as its flags allow. */
static ana_status ana_kernel_refs(ana_cb *b)
{
    ana_model *m = b->m;
    const ana_cmd *k = b->k;
    for (unsigned i = 0; i < k->nargs; i++) {
        const ana_karg *a = &k->args[i];
        ana_status st = ANA_OK;
        if (a->kind == ANA_KARG_MEM && a->value) {
            uint32_t oi;
            if (!ana_idmap_get(&m->objmap, a->value, &oi))
                continue;
            const ana_object *o = &m->objs[oi];
            if (o->kind == ANA_OBJ_SAMPLER || o->kind == ANA_OBJ_QUEUE || o->kind == ANA_OBJ_EVENT)
                continue;
            int acc = o->flags & CL_MEM_READ_ONLY ? ANA_ACC_READ
                      : o->flags & CL_MEM_WRITE_ONLY ? ANA_ACC_WRITE : ANA_ACC_RW;
            st = ana_cb_ref(b, a->value, 0, 0, acc, 1, "kernel not analyzed");
        } else if (a->kind == ANA_KARG_SVM && a->value) {
            unsigned before = b->nrefs;
            st = ana_cb_ref_svm(b, a->value, 0, ANA_ACC_RW);
            if (b->nrefs > before)
                b->refs[before].why = "kernel not analyzed";
        } else {
            continue;
        }
        if (st != ANA_OK)
            return st;
        if (b->nrefs)
            b->refs[b->nrefs - 1].arg = (int16_t)i;
    }
    return ANA_OK;
}

static ana_status ana_kernel_cmd(ana_cb *b, int task)
{
    ana_model *m = b->m;
    ana_cmd *k = b->k;
    uint64_t kid = 0, dim = 1;
    if (!ana_call_u64(b->c, "kernel", 0, &kid) || !kid)
        return ana_model_fail(m, b->c, "kernel is not an object");
    k->kernel = kid;
    for (int d = 0; d < 3; d++)
        k->global[d] = k->local[d] = 1, k->goff[d] = 0;
    if (!task) {
        if (!ana_call_u64(b->c, "work_dim", 0, &dim) || dim < 1 || dim > 3)
            return ana_model_fail(m, b->c, "work_dim %llu", (unsigned long long)dim);
        if (ana_u64_array(ana_call_arg(b->c, "global_work_size"), k->global, (unsigned)dim) != (int)dim)
            return ana_model_fail(m, b->c, "global_work_size is not %llu sizes", (unsigned long long)dim);
        int n = ana_u64_array(ana_call_arg(b->c, "global_work_offset"), k->goff, (unsigned)dim);
        if (n < 0 || (n && n != (int)dim))
            return ana_model_fail(m, b->c, "global_work_offset is not %llu sizes", (unsigned long long)dim);
        n = ana_u64_array(ana_call_arg(b->c, "local_work_size"), k->local, (unsigned)dim);
        if (n < 0 || (n && n != (int)dim))
            return ana_model_fail(m, b->c, "local_work_size is not %llu sizes", (unsigned long long)dim);
        if (!n)
            k->local[0] = k->local[1] = k->local[2] = 0;
        for (unsigned d = (unsigned)dim; d < 3; d++)
            k->local[d] = n ? 1 : 0;
    }
    k->work_dim = (unsigned)dim;
    long ki = ana_obj_get(m, kid, ANA_OBJ_KERNEL);
    if (ki < 0)
        return ANA_ERR_NOMEM;
    ana_obj_x *x = &m->xo[ki];
    if (!x->snap && x->ncur) {
        x->snap = ana_pool_dup(&m->pool, x->cur, x->ncur * sizeof *x->cur);
        if (!x->snap)
            return ANA_ERR_NOMEM;
    }
    k->args = x->snap;
    k->nargs = x->snap ? x->ncur : 0;
    ana_cb_use(m, kid, b->c->seq);
    return ana_kernel_refs(b);
}

/* ------------------------------------------------------------ per call */

static ana_status ana_wait_list(ana_cb *b, const char *name)
{
    const tf_value *v = ana_call_arg(b->c, name);
    if (!v || v->type == TF_NIL)
        return ANA_OK;
    if (v->type != TF_ARRAY)
        return ana_model_fail(b->m, b->c, "%s is not a list of events", name);
    uint64_t *w = ana_pool_alloc(&b->m->pool, (v->v.arr.n ? v->v.arr.n : 1) * sizeof *w);
    if (!w)
        return ANA_ERR_NOMEM;
    for (uint32_t i = 0; i < v->v.arr.n; i++) {
        if (v->v.arr.items[i].type == TF_BOOL || !tf_value_u64(&v->v.arr.items[i], &w[i]))
            return ana_model_fail(b->m, b->c, "%s holds a non-event", name);
        ana_cb_use(b->m, w[i], b->c->seq);
    }
    b->k->wait = w;
    b->k->nwait = v->v.arr.n;
    return ANA_OK;
}

/* The blocking flag of a command (the API description's blocking_*
 * parameter); 0 when it has none. */
static int ana_blocking(const tf_call *c, const api_sem *d)
{
    static const char *const names[] = { "blocking_read", "blocking_write", "blocking_map",
                                         "blocking_copy" };
    uint64_t v;
    if (d != &ana_sem_other)
        return d->blocking >= 0 && ana_call_u64(c, api_sem_param(d, d->blocking), 0, &v) && v != 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)   /* an enqueue of a newer header */
        if (ana_call_u64(c, names[i], 0, &v))
            return v != 0;
    return 0;
}

ana_status ana_model_commands_call(ana_model *m, const tf_call *c)
{
    const api_sem *d = ana_cmd_find(c->sig->name);
    if (!d)
        return ANA_OK;
    if (m->ncmds >= UINT32_MAX - 1 ||
        ana_grow((void **)&m->cmds, &m->capcmds, m->ncmds + 1, sizeof *m->cmds))
        return ANA_ERR_NOMEM;
    ana_cb b;
    b.m = m;
    b.c = c;
    b.nrefs = 0;
    b.k = &m->cmds[m->ncmds];
    ana_cmd *k = b.k;
    memset(k, 0, sizeof *k);
    k->seq = c->seq;
    k->tid = c->tid;
    const ana_fn_time *fn = ana_model_fn_of_call(m, c);
    k->fn = fn ? fn->fn : "?";
    k->kind = ana_kind_of_op[d->op];
    k->t_begin = c->t_begin;
    k->t_end = c->t_end;
    k->in_order = 1;
    ana_status st = ANA_OK;
    uint64_t q = 0, ev = 0;
    if (ana_call_u64(c, "command_queue", 0, &q) && q) {
        long qi = ana_obj_get(m, q, ANA_OBJ_QUEUE);
        if (qi < 0)
            return ANA_ERR_NOMEM;
        k->queue = q;
        k->device = m->objs[qi].parent;
        k->in_order = !(m->objs[qi].props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        if (d->op != API_OP_FLUSH)
            ana_cb_use(m, q, c->seq);
    }
    const tf_value *e = ana_call_out(c, "event");
    if (e && e->type != TF_BOOL && tf_value_u64(e, &ev))
        k->event = ev;
    /* the wait list where the API description has it (`waits` in the overlay) */
    const char *wl = d == &ana_sem_other ? "event_wait_list" : api_sem_param(d, d->wait);
    switch (d->op) {
    case API_OP_WAIT:
    case API_OP_WAIT_EVENTS:
        st = wl ? ana_wait_list(&b, wl) : ANA_OK;
        k->blocking = d->op == API_OP_WAIT;
        break;
    case API_OP_FINISH:
        k->blocking = 1;
        break;
    case API_OP_SET_EVENT:
        if (!ana_call_u64(c, "event", 0, &ev))
            return ana_model_fail(m, c, "event is not an object");
        k->event = ev;
        ana_cb_use(m, ev, c->seq);
        break;
    case API_OP_FLUSH:
        break;
    default:
        if (wl && (st = ana_wait_list(&b, wl)) != ANA_OK)
            return st;
        k->blocking = (uint8_t)ana_blocking(c, d);
        if (d->op == API_OP_KERNEL || d->op == API_OP_TASK)
            st = ana_kernel_cmd(&b, d->op == API_OP_TASK);
        else
            st = ana_model_transfer(&b, d);
        break;
    }
    if (st != ANA_OK)
        return st;
    if (b.nrefs) {
        k->mem = ana_pool_dup(&m->pool, b.refs, b.nrefs * sizeof b.refs[0]);
        if (!k->mem)
            return ANA_ERR_NOMEM;
        k->nmem = b.nrefs;
    }
    if (ana_idmap_put(&m->seqmap, k->seq, (uint32_t)m->ncmds))
        return ANA_ERR_NOMEM;
    m->ncmds++;
    return ANA_OK;
}
