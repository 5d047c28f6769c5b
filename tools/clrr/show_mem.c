/* show_mem.c — a memory object's contents after a call, from the trace
 * alone, where it holds them.
 *
 * The calls up to SEQ are walked in trace order with the API description's
 * memory effects (build/gen/api_sem.h). The contents are known from the
 * object's creation with host memory (CL_MEM_COPY_HOST_PTR; an image with
 * packed rows), a write of the whole object, or a read-back of the whole
 * object (its recorded bytes, inline or as late data) or a blocking map of
 * the whole buffer that recorded what it showed; writes of a part
 * of a known object patch it. Anything else that may write the object's
 * bytes (through it, its parent buffer, a sub-buffer or an image of the same
 * buffer): a kernel launch that has it as an argument, a copy, fill, map,
 * partial image write, migration, a call of unknown effect, makes them
 * unknown, and the caller replays. */
#include "tools/clrr/show_int.h"
#include "tools/clrr/cli.h"

#include "api_sem.h"

#include <stdlib.h>
#include <string.h>

typedef struct cli_show_track {
    tf_reader *r;
    const cli_show_scan *sc;
    const cli_show_obj *o;
    uint64_t root;            /* the buffer that holds the target's bytes (itself when none) */
    uint8_t *data;            /* o->size bytes when known */
    int known;
    uint64_t from;            /* the call the bytes come from */
    uint64_t pending;         /* a whole non-blocking read whose bytes come as DATA */
    uint64_t kargs[CLI_SHOW_MAX_ARGS];
    char *err;
    size_t cap;
} cli_show_track;

static uint64_t cli_show_root_of(const cli_show_scan *sc, uint64_t id)
{
    for (int depth = 0; depth < 4; depth++) {
        const cli_show_obj *o = cli_show_scan_find(sc, id);
        if (!o || !o->parent || (o->kind != CLI_SHOW_SUBBUFFER && o->kind != CLI_SHOW_IMAGE))
            return id;
        id = o->parent;
    }
    return id;
}

static uint64_t cli_show_val(const tf_call *c, int i)
{
    uint64_t u = 0;
    if (i >= 0 && c->args && (uint32_t)i < c->sig->nparams)
        tf_value_u64(&c->args[i], &u);
    return u;
}

static const tf_value *cli_show_val_ptr(const tf_call *c, int i)
{
    return i >= 0 && c->args && (uint32_t)i < c->sig->nparams ? &c->args[i] : NULL;
}

/* bytes [off, off + n) of the target from value @p v (a blob or bin of n bytes) */
static int cli_show_patch(cli_show_track *t, const tf_value *v, uint64_t off, uint64_t n)
{
    if (off > t->o->size || n > t->o->size - off)
        return 0;
    void *b;
    size_t len;
    tf_status s = cli_show_value_bytes(t->r, v, (size_t)n, &b, &len);
    if (s == TF_ERR_ARG || s == TF_ERR_LIMIT)
        return 0;
    if (s != TF_OK) {
        snprintf(t->err, t->cap, "%s", tf_reader_error(t->r));
        return -1;
    }
    if (len == n)
        memcpy(t->data + off, b, n);
    free(b);
    return len == n;
}

static void cli_show_unknown(cli_show_track *t)
{
    t->known = 0;
    t->pending = 0;
}

/* an image region that is the whole target, with packed rows */
static int cli_show_whole_image(const cli_show_track *t, const tf_call *c, const api_effect *e)
{
    const tf_value *org = cli_show_val_ptr(c, e->origin), *reg = cli_show_val_ptr(c, e->region);
    if (!org || !reg || org->type != TF_ARRAY || reg->type != TF_ARRAY || org->v.arr.n < 3 || reg->v.arr.n < 3)
        return 0;
    uint64_t o[3], g[3];
    for (int i = 0; i < 3; i++) {
        tf_value_u64(&org->v.arr.items[i], &o[i]);
        tf_value_u64(&reg->v.arr.items[i], &g[i]);
    }
    const cli_show_obj *x = t->o;
    if (o[0] || o[1] || o[2] || g[0] != x->w || g[1] != (x->h ? x->h : 1) || g[2] != (x->d ? x->d : 1))
        return 0;
    return cli_show_val(c, e->row) == 0 && cli_show_val(c, e->slice) == 0;
}

static int cli_show_effect(cli_show_track *t, const tf_call *c, const api_sem *sem, const api_effect *e)
{
    const cli_show_obj *o = t->o;
    unsigned acc = e->access;
    if (acc & API_ACC_MAP)
        acc = api_map_access(cli_show_val(c, e->flags));
    if (acc & API_ACC_MIGRATE)
        acc = api_migrate_access(cli_show_val(c, e->flags));
    if (acc & API_ACC_MAPPED)   /* an unmap: what the host wrote into a write map */
        acc = API_ACC_WRITE;
    if (e->range == API_RANGE_KERNEL) {
        for (unsigned i = 0; i < CLI_SHOW_MAX_ARGS; i++)
            if (t->kargs[i] && cli_show_root_of(t->sc, t->kargs[i]) == t->root)
                cli_show_unknown(t);
        return 0;
    }
    if (e->range == API_RANGE_LIST) {
        const tf_value *l = cli_show_val_ptr(c, e->obj);
        for (uint32_t i = 0; (acc & API_ACC_WRITE) && l && l->type == TF_ARRAY && i < l->v.arr.n; i++) {
            uint64_t id = 0;
            tf_value_u64(&l->v.arr.items[i], &id);
            if (cli_show_root_of(t->sc, id) == t->root)
                cli_show_unknown(t);
        }
        return 0;
    }
    if (e->range == API_RANGE_SVM || e->range == API_RANGE_SVMLIST)
        return 0;   /* SVM targets are always replayed */
    uint64_t id = cli_show_val(c, e->obj);
    if (!id || cli_show_root_of(t->sc, id) != t->root)
        return 0;
    int self = id == o->id;
    int ptr = -1;
    for (uint32_t i = 0; i < c->sig->nparams; i++)
        if (c->sig->params[i].name && !strcmp(c->sig->params[i].name, "ptr"))
            ptr = (int)i;
    if (sem->op == API_OP_READ && self && ptr >= 0 && (acc & API_ACC_READ)) {
        int whole = 0;
        uint64_t off = 0, n = 0;
        if (e->range == API_RANGE_BYTES && e->size != API_SIZE_REGION) {
            off = cli_show_val(c, e->off);
            n = cli_show_val(c, e->size);
            whole = off == 0 && n == o->size;
        } else if (e->range == API_RANGE_IMAGE || (e->range == API_RANGE_BYTES && e->size == API_SIZE_REGION)) {
            whole = o->kind == CLI_SHOW_IMAGE && cli_show_whole_image(t, c, e);
            n = o->size;
        }
        const tf_value *v = c->outs ? &c->outs[ptr] : NULL;
        if (whole && v && v->type == TF_NIL) {   /* its bytes come later, as DATA */
            t->pending = c->seq;
            return 0;
        }
        if (!v || (!whole && !t->known) || n == 0)
            return 0;
        int p = cli_show_patch(t, v, off, n);
        if (p < 0)
            return -1;
        if (p && whole) {
            t->known = 1;
            t->from = c->seq;
        }
        return 0;
    }
    if (sem->op == API_OP_MAP && self && o->kind != CLI_SHOW_IMAGE && e->range == API_RANGE_BYTES &&
        cli_show_val(c, e->off) == 0 && cli_show_val(c, e->size) == o->size && tf_map_get(c->post, "data")) {
        /* a blocking map of the whole buffer that showed its contents
         * (post.data); what the host writes into it comes with the unmap */
        int p = cli_show_patch(t, tf_map_get(c->post, "data"), 0, o->size);
        if (p < 0)
            return -1;
        if (p) {
            t->known = 1;
            t->from = c->seq;
            t->pending = 0;
        }
        return 0;
    }
    if (!(acc & API_ACC_WRITE))
        return 0;
    if (sem->op == API_OP_WRITE && self && ptr >= 0) {
        const tf_value *v = &c->args[ptr];
        uint64_t off = 0, n = 0;
        int whole = 0, ok = 0;
        if (e->range == API_RANGE_BYTES && e->size != API_SIZE_REGION) {
            off = cli_show_val(c, e->off);
            n = cli_show_val(c, e->size);
            whole = off == 0 && n == o->size;
            ok = 1;
        } else if (e->range == API_RANGE_IMAGE || e->range == API_RANGE_BYTES) {
            whole = o->kind == CLI_SHOW_IMAGE && cli_show_whole_image(t, c, e);
            n = o->size;
            ok = whole;
        }
        if (ok && (whole || t->known)) {
            int p = cli_show_patch(t, v, off, n);
            if (p < 0)
                return -1;
            if (p) {
                t->known = 1;
                t->from = c->seq;
                t->pending = 0;
                return 0;
            }
        }
    }
    cli_show_unknown(t);
    return 0;
}

static int cli_show_track_call(cli_show_track *t, const tf_call *c)
{
    const cli_show_obj *o = t->o;
    const char *fn = c->sig->name ? c->sig->name : "";
    if (c->seq == o->create_seq) {   /* its creation */
        cli_show_unknown(t);
        for (uint32_t i = 0; i < c->sig->nparams; i++)
            if (c->sig->params[i].name && !strcmp(c->sig->params[i].name, "host_ptr") && c->args &&
                (o->flags & (1u << 5)) && !(o->flags & (1u << 3)) &&   /* COPY_HOST_PTR, not USE_HOST_PTR */
                (o->kind == CLI_SHOW_BUFFER || (o->kind == CLI_SHOW_IMAGE && !o->row_pitch && !o->slice_pitch))) {
                int p = cli_show_patch(t, &c->args[i], 0, o->size);
                if (p < 0)
                    return -1;
                if (p) {
                    t->known = 1;
                    t->from = c->seq;
                }
            }
        return 0;
    }
    const api_sem *sem = api_sem_find(fn);
    if (!sem || sem->op == API_OP_NONE)
        return 0;
    if (sem->flags & API_F_UNKNOWN) {
        cli_show_unknown(t);
        return 0;
    }
    for (unsigned i = 0; i < sem->neffects; i++)
        if (cli_show_effect(t, c, sem, &sem->eff[i]) < 0)
            return -1;
    return 0;
}

/* The memory arguments of every kernel as last set (kernel id -> its
 * arguments' object ids): a launch's effects are those of its kernel's. */
typedef struct cli_show_kset {
    uint64_t kernel;
    uint64_t args[CLI_SHOW_MAX_ARGS];
} cli_show_kset;

int cli_show_mem_from_trace(tf_reader *r, const cli_show_scan *sc, const cli_show_obj *o, uint64_t at, void **data,
                        uint64_t *from, char *err, size_t cap)
{
    *data = NULL;
    *from = 0;
    size_t limit = cli_max_memory() ? cli_max_memory() : (size_t)1 << 30;   /* the reader's default */
    if (o->kind == CLI_SHOW_SVM || o->kind == CLI_SHOW_PIPE || !o->size || o->size > limit ||
        (o->kind == CLI_SHOW_IMAGE && !o->elem))
        return 0;
    cli_show_track t = {.r = r, .sc = sc, .o = o, .root = cli_show_root_of(sc, o->id), .err = err, .cap = cap};
    t.data = malloc((size_t)o->size);
    if (!t.data) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    cli_show_kset *ks = NULL;
    size_t nks = 0;
    int rc = 0;
    tf_status s = tf_reader_rewind(r);
    tf_item it;
    while (s == TF_OK && (s = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type == TF_ITEM_DATA) {
            const tf_data *d = &it.u.data;
            if (t.pending && d->seq == t.pending && d->key && !strcmp(d->key, "ptr")) {
                int p = cli_show_patch(&t, &d->value, 0, o->size);
                if (p < 0) {
                    rc = -1;
                    break;
                }
                if (p) {
                    t.known = 1;
                    t.from = d->seq;
                }
                t.pending = 0;
            }
            continue;
        }
        if (it.type != TF_ITEM_CALL)
            continue;
        const tf_call *c = &it.u.call;
        if (c->seq > at || !c->complete || !c->sig || cli_show_call_failed(c, NULL))
            continue;
        const char *fn = c->sig->name ? c->sig->name : "";
        if (!strcmp(fn, "clSetKernelArg") || !strcmp(fn, "clSetKernelArgSVMPointer")) {
            uint64_t k = cli_show_val(c, 0), idx = cli_show_val(c, 1);
            cli_show_kset *e = NULL;
            for (size_t i = 0; i < nks && !e; i++)
                if (ks[i].kernel == k)
                    e = &ks[i];
            if (!e) {
                cli_show_kset *n = realloc(ks, (nks + 1) * sizeof *n);
                if (!n) {
                    snprintf(err, cap, "out of memory");
                    rc = -1;
                    break;
                }
                ks = n;
                e = &ks[nks++];
                memset(e, 0, sizeof *e);
                e->kernel = k;
            }
            const tf_value *v = cli_show_val_ptr(c, 3);
            uint64_t id = 0;
            if (idx < CLI_SHOW_MAX_ARGS)
                e->args[idx] = v && (v->type == TF_UINT || v->type == TF_INT) && tf_value_u64(v, &id) &&
                                       strcmp(fn, "clSetKernelArgSVMPointer")
                                   ? id
                                   : 0;
            continue;
        }
        const api_sem *sem = api_sem_find(fn);
        if (sem && (sem->op == API_OP_KERNEL || sem->op == API_OP_TASK)) {
            memset(t.kargs, 0, sizeof t.kargs);
            uint64_t k = cli_show_val(c, 1);
            for (size_t i = 0; i < nks; i++)
                if (ks[i].kernel == k)
                    memcpy(t.kargs, ks[i].args, sizeof t.kargs);
        }
        if (cli_show_track_call(&t, c) < 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && s != TF_END) {
        snprintf(err, cap, "%s", tf_reader_error(r));
        rc = -1;
    }
    free(ks);
    if (rc == 0 && t.known) {
        *data = t.data;
        *from = t.from;
        return 1;
    }
    free(t.data);
    return rc;
}
