/* ana_model.c — building the trace model: one pass over the trace's items
 * (calls to the object and command handlers, device times to their
 * commands), then commands put in call order; and the model's accessors. */
#include "analyzer/ana_model_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ host time per function */

static int ana_fn_slot_cmp(const void *a, const void *b)
{
    const ana_fn_slot *x = a, *y = b;
    return x->sig_id < y->sig_id ? -1 : x->sig_id > y->sig_id;
}

/* The function entry of call @p c's signature (created on first use). */
static ana_fn_time *ana_fn_of(ana_model *m, const tf_call *c)
{
    ana_fn_slot key = { c->sig->id, 0 };
    ana_fn_slot *s = m->nfnslots ? bsearch(&key, m->fnslots, m->nfnslots, sizeof *s, ana_fn_slot_cmp) : NULL;
    if (s)
        return &m->fns[s->fn];
    const char *name = c->sig->name ? c->sig->name : "?";
    size_t f;
    for (f = 0; f < m->nfns; f++)
        if (!strcmp(m->fns[f].fn, name))
            break;
    if (f == m->nfns) {
        if (ana_grow((void **)&m->fns, &m->capfns, m->nfns + 1, sizeof *m->fns))
            return NULL;
        char *n = ana_pool_strndup(&m->pool, name, strlen(name));
        if (!n)
            return NULL;
        memset(&m->fns[f], 0, sizeof m->fns[f]);
        m->fns[f].fn = n;
        m->nfns++;
    }
    if (ana_grow((void **)&m->fnslots, &m->capfnslots, m->nfnslots + 1, sizeof *m->fnslots))
        return NULL;
    size_t i = m->nfnslots;
    while (i > 0 && m->fnslots[i - 1].sig_id > key.sig_id) {
        m->fnslots[i] = m->fnslots[i - 1];
        i--;
    }
    m->fnslots[i].sig_id = key.sig_id;
    m->fnslots[i].fn = (uint32_t)f;
    m->nfnslots++;
    return &m->fns[f];
}

const ana_fn_time *ana_model_fn_of_call(const ana_model *m, const tf_call *c)
{
    ana_fn_slot key = { c->sig->id, 0 };
    const ana_fn_slot *s = m->nfnslots ? bsearch(&key, m->fnslots, m->nfnslots, sizeof *s, ana_fn_slot_cmp)
                                       : NULL;
    return s ? &m->fns[s->fn] : NULL;
}

static int ana_fn_by_total(const void *a, const void *b)
{
    const ana_fn_time *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->fn, y->fn);
}

/* ------------------------------------------------------------ calls */

/* Whether call @p c succeeded: a cl_int return of CL_SUCCESS, an
 * errcode_ret of CL_SUCCESS, or a non-NULL pointer/handle return. */
static int ana_call_ok(const tf_call *c)
{
    int64_t v;
    const char *rt = c->sig->ret_type ? c->sig->ret_type : "";
    if (!strcmp(rt, "cl_int"))
        return tf_value_i64(&c->ret, &v) && v == 0;
    const tf_value *e = ana_call_out(c, "errcode_ret");
    if (e && e->type != TF_NIL)
        return tf_value_i64(e, &v) && v == 0;
    if (!strcmp(rt, "void"))
        return 1;
    uint64_t u;
    return c->ret.type != TF_BOOL && tf_value_u64(&c->ret, &u) && u != 0;
}

static ana_status ana_model_call(ana_model *m, const tf_call *c)
{
    ana_model_info *in = &m->info;
    uint32_t dummy;
    in->calls++;
    if (!ana_idmap_get(&m->tids, c->tid, &dummy)) {
        if (ana_idmap_put(&m->tids, c->tid, 0))
            return ANA_ERR_NOMEM;
        in->threads++;
    }
    int64_t last = c->complete ? c->t_end : c->t_begin;
    if (in->calls == 1 || c->t_begin < in->t_first)
        in->t_first = c->t_begin;
    if (in->calls == 1 || last > in->t_last)
        in->t_last = last;
    if (!c->sig)
        return ana_model_fail(m, c, "no signature");
    if (!c->complete) {
        in->incomplete++;
        return ANA_OK;
    }
    ana_fn_time *f = ana_fn_of(m, c);
    if (!f)
        return ANA_ERR_NOMEM;
    uint64_t d = c->t_end >= c->t_begin ? (uint64_t)(c->t_end - c->t_begin) : 0;
    if (!f->calls || d < f->min_ns)
        f->min_ns = d;
    if (d > f->max_ns)
        f->max_ns = d;
    f->total_ns += d;
    f->calls++;
    if (!ana_call_ok(c)) {
        in->failed++;
        return ANA_OK;
    }
    ana_status st = ana_model_objects_call(m, c);
    if (st == ANA_OK && c->sig->name && ana_model_is_command(c->sig->name))
        st = ana_model_commands_call(m, c);
    return st;
}

/* ------------------------------------------------------------ device times */

static void ana_devtime_set(ana_cmd *k, const tf_devtime *d)
{
    k->dev_queued = d->queued;
    k->dev_submit = d->submit;
    k->dev_start = d->start;
    k->dev_end = d->end;
    k->has_devtime = d->start != 0 && d->end >= d->start;
}

static ana_status ana_model_devtime(ana_model *m, const tf_devtime *d)
{
    uint32_t i;
    m->info.devtimes++;
    if (ana_idmap_get(&m->seqmap, d->seq, &i)) {
        ana_devtime_set(&m->cmds[i], d);
        return ANA_OK;
    }
    /* the recorder may write it before the call's END: keep it for later */
    if (ana_grow((void **)&m->early, &m->capearly, m->nearly + 1, sizeof *m->early))
        return ANA_ERR_NOMEM;
    m->early[m->nearly++] = *d;
    return ANA_OK;
}

/* ------------------------------------------------------------ finishing */

static int ana_cmd_by_seq(const void *a, const void *b)
{
    const ana_cmd *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static ana_status ana_model_finish(ana_model *m)
{
    int sorted = 1;
    for (size_t i = 1; i < m->ncmds && sorted; i++)
        sorted = m->cmds[i - 1].seq < m->cmds[i].seq;
    if (!sorted) {
        qsort(m->cmds, m->ncmds, sizeof *m->cmds, ana_cmd_by_seq);
        ana_idmap_free(&m->seqmap);
        for (size_t i = 0; i < m->ncmds; i++)
            if (ana_idmap_put(&m->seqmap, m->cmds[i].seq, (uint32_t)i))
                return ANA_ERR_NOMEM;
    }
    for (size_t i = 0; i < m->nearly; i++) {
        uint32_t k;
        if (ana_idmap_get(&m->seqmap, m->early[i].seq, &k))
            ana_devtime_set(&m->cmds[k], &m->early[i]);
        else
            m->info.devtimes_unmatched++;
    }
    for (size_t i = 0; i < m->ncmds; i++) {
        uint32_t t;
        if (m->cmds[i].kind == ANA_CMD_KERNEL)
            m->info.launches++;
        if (m->cmds[i].event && ana_idmap_get(&m->timed, m->cmds[i].event, &t))
            m->cmds[i].timed = 1;
    }
    for (size_t i = 0; i < m->nobjs; i++) {
        ana_obj_x *x = &m->xo[i];
        if (m->objs[i].kind != ANA_OBJ_KERNEL)
            continue;
        if (!x->snap && x->ncur) {
            x->snap = ana_pool_dup(&m->pool, x->cur, x->ncur * sizeof *x->cur);
            if (!x->snap)
                return ANA_ERR_NOMEM;
        }
        m->objs[i].args = x->snap;
        m->objs[i].nargs = x->snap ? x->ncur : 0;
    }
    if (m->nfns)
        qsort(m->fns, m->nfns, sizeof *m->fns, ana_fn_by_total);
    m->info.nfns = (unsigned)m->nfns;
    return ANA_OK;
}

/* ------------------------------------------------------------ public */

ana_status ana_model_build(tf_reader *r, ana_model **out, char *err, size_t err_cap)
{
    ana_status st = ANA_OK;
    tf_status ts;
    tf_item it;
    if (err && err_cap)
        err[0] = '\0';
    if (!out || !r)
        return ANA_ERR_ARG;
    *out = NULL;
    ana_model *m = calloc(1, sizeof *m);
    if (!m)
        return ANA_ERR_NOMEM;
    m->r = r;
    m->err = err;
    m->err_cap = err_cap;
    if ((ts = tf_reader_rewind(r)) != TF_OK) {
        st = ana_model_fail(m, NULL, "%s: %s", tf_strerror(ts), tf_reader_error(r));
        goto out;
    }
    while ((ts = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type == TF_ITEM_CALL)
            st = ana_model_call(m, &it.u.call);
        else if (it.type == TF_ITEM_DEVTIME)
            st = ana_model_devtime(m, &it.u.devtime);
        if (st != ANA_OK)
            goto out;
    }
    if (ts != TF_END) {
        const char *d = tf_reader_error(r);
        st = ana_model_fail(m, NULL, "%s%s%s", tf_strerror(ts), d && *d ? ": " : "", d ? d : "");
        goto out;
    }
    m->info.truncated = tf_reader_get_info(r)->truncated;
    st = ana_model_finish(m);
out:
    for (size_t i = 0; i < m->nobjs; i++) {
        free(m->xo[i].cur);
        m->xo[i].cur = NULL;
    }
    free(m->early);
    m->early = NULL;
    m->nearly = m->capearly = 0;
    free(m->maps);
    m->maps = NULL;
    m->nmaps = m->capmaps = 0;
    m->r = NULL;
    m->err = NULL;
    if (st == ANA_ERR_NOMEM && err && err_cap && !err[0])
        snprintf(err, err_cap, "out of memory building the trace model");
    if (st != ANA_OK) {
        ana_model_free(m);
        return st;
    }
    *out = m;
    return ANA_OK;
}

void ana_model_free(ana_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nprogs; i++)
        ana_program_free(m->progs[i].p);
    if (m->xo)
        for (size_t i = 0; i < m->nobjs; i++)
            free(m->xo[i].cur);
    free(m->progs);
    free(m->objs);
    free(m->xo);
    free(m->svm);
    free(m->cmds);
    free(m->early);
    free(m->maps);
    free(m->fns);
    free(m->fnslots);
    ana_idmap_free(&m->objmap);
    ana_idmap_free(&m->svmmap);
    ana_idmap_free(&m->seqmap);
    ana_idmap_free(&m->labels);
    ana_idmap_free(&m->tids);
    ana_idmap_free(&m->timed);
    ana_pool_release(&m->pool);
    free(m);
}

const ana_model_info *ana_model_get_info(const ana_model *m)
{
    return &m->info;
}

size_t ana_model_object_count(const ana_model *m)
{
    return m ? m->nobjs : 0;
}

const ana_object *ana_model_object(const ana_model *m, size_t i)
{
    return m && i < m->nobjs ? &m->objs[i] : NULL;
}

const ana_object *ana_model_find(const ana_model *m, uint64_t id)
{
    uint32_t i;
    if (!m)
        return NULL;
    if (ana_idmap_get(&m->objmap, id, &i) || ana_idmap_get(&m->svmmap, id, &i))
        return &m->objs[i];
    return NULL;
}

const char *ana_model_label(const ana_model *m, uint64_t id, char *dst, size_t dst_cap)
{
    static const char *const shortk[ANA_OBJ_KIND_COUNT] = {
        "obj", "platform", "device", "ctx", "queue", "prog", "kernel",
        "buf", "sub", "img", "pipe", "svm", "sampler", "ev", "uev",
    };
    const ana_object *o = ana_model_find(m, id);
    if (!dst || !dst_cap)
        return dst;
    if (o && o->kind == ANA_OBJ_SUBBUFFER && o->parent && o->parent != id) {
        const ana_object *p = ana_model_find(m, o->parent);
        if (p && p->name && p->name[0])
            snprintf(dst, dst_cap, "%s+%" PRIu64, p->name, o->origin);
        else
            snprintf(dst, dst_cap, "buf#%" PRIu64 "+%" PRIu64, o->parent, o->origin);
    } else if (o && o->name && o->name[0])
        snprintf(dst, dst_cap, "%s", o->name);
    else if (o && o->kind == ANA_OBJ_SVM)
        snprintf(dst, dst_cap, "svm@%" PRIx64, id);
    else
        snprintf(dst, dst_cap, "%s#%" PRIu64, shortk[o && o->kind < ANA_OBJ_KIND_COUNT ? o->kind : 0],
                 id);
    return dst;
}

size_t ana_model_command_count(const ana_model *m)
{
    return m ? m->ncmds : 0;
}

const ana_cmd *ana_model_command(const ana_model *m, size_t i)
{
    return m && i < m->ncmds ? &m->cmds[i] : NULL;
}

long ana_model_cmd_index(const ana_model *m, uint64_t seq)
{
    uint32_t i;
    return ana_idmap_get(&m->seqmap, seq, &i) ? (long)i : -1;
}

const ana_fn_time *ana_model_fn_time(const ana_model *m, unsigned i)
{
    return m && i < m->nfns ? &m->fns[i] : NULL;
}
