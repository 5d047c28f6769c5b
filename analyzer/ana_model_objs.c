/* ana_model_objs.c — the object side of the model: the object table,
 * retain/release and lifetimes, kernel arguments, SVM allocations, the last
 * call that used each object, and the dispatch of each call to them (what
 * a creation records is in ana_model_create.c). */
#include "analyzer/ana_model_int.h"

#include <CL/cl.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ handle types */

int ana_type_kind(const char *ctype)
{
    static const struct { const char *t; int k; } map[] = {
        { "cl_platform_id", ANA_OBJ_PLATFORM }, { "cl_device_id", ANA_OBJ_DEVICE },
        { "cl_context", ANA_OBJ_CONTEXT }, { "cl_command_queue", ANA_OBJ_QUEUE },
        { "cl_mem", ANA_OBJ_BUFFER }, { "cl_program", ANA_OBJ_PROGRAM },
        { "cl_kernel", ANA_OBJ_KERNEL }, { "cl_event", ANA_OBJ_EVENT },
        { "cl_sampler", ANA_OBJ_SAMPLER },
    };
    char base[40];
    size_t n = 0;
    const char *p = ctype ? ctype : "";
    while (*p) {
        if (isspace((unsigned char)*p) || *p == '*') {
            p++;
            continue;
        }
        const char *w = p;
        while (*p && !isspace((unsigned char)*p) && *p != '*')
            p++;
        size_t len = (size_t)(p - w);
        if (len == 5 && !strncmp(w, "const", 5))
            continue;
        if (n || len >= sizeof base)
            return -1;
        memcpy(base, w, len);
        base[len] = 0;
        n = len;
    }
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (n && !strcmp(base, map[i].t))
            return map[i].k;
    return -1;
}

/* ------------------------------------------------------------ the table */

long ana_obj_get(ana_model *m, uint64_t id, ana_obj_kind kind_hint)
{
    uint32_t i;
    if (ana_idmap_get(&m->objmap, id, &i)) {
        if (m->objs[i].kind == ANA_OBJ_UNKNOWN)
            m->objs[i].kind = (uint8_t)kind_hint;
        return i;
    }
    size_t oldcap = m->capobjs;
    if (m->nobjs >= UINT32_MAX - 1 ||
        ana_grow((void **)&m->objs, &m->capobjs, m->nobjs + 1, sizeof *m->objs))
        return -1;
    if (!m->xo || m->capobjs != oldcap) {   /* xo has the capacity of objs */
        ana_obj_x *x = realloc(m->xo, m->capobjs * sizeof *x);
        if (!x)
            return -1;
        m->xo = x;
    }
    i = (uint32_t)m->nobjs;
    memset(&m->objs[i], 0, sizeof m->objs[i]);
    memset(&m->xo[i], 0, sizeof m->xo[i]);
    m->objs[i].id = id;
    m->objs[i].kind = (uint8_t)kind_hint;
    if (kind_hint != ANA_OBJ_SVM && ana_idmap_put(&m->objmap, id, i))
        return -1;
    m->nobjs++;
    return i;
}

long ana_obj_new(ana_model *m, const tf_call *c, uint64_t id, ana_obj_kind kind)
{
    if (!id) {
        ana_model_fail(m, c, "a successful creation returned a NULL handle");
        return -1;
    }
    uint32_t i;
    if (ana_idmap_get(&m->objmap, id, &i) && m->objs[i].create_seq) {
        ana_model_fail(m, c, "object #%llu created twice (first by call #%llu)",
                       (unsigned long long)id, (unsigned long long)m->objs[i].create_seq);
        return -1;
    }
    long k = ana_obj_get(m, id, kind);
    if (k < 0)
        return -1;
    m->objs[k].kind = (uint8_t)kind;
    m->objs[k].create_seq = c->seq;
    m->xo[k].refs = 1;
    return k;
}

/* Marks @p id as used by call @p seq (an object the call named). */
static void ana_obj_use(ana_model *m, uint64_t id, uint64_t seq)
{
    uint32_t i;
    if (id && ana_idmap_get(&m->objmap, id, &i) && seq > m->objs[i].last_use_seq)
        m->objs[i].last_use_seq = seq;
}

/* ------------------------------------------------------------ SVM */

long ana_svm_find(const ana_model *m, uint64_t addr)
{
    for (size_t i = 0; i < m->nsvm; i++) {
        const ana_object *o = &m->objs[m->svm[i]];
        if (addr >= o->id && addr - o->id < (o->size ? o->size : 1))
            return m->svm[i];
    }
    return -1;
}

static ana_status ana_svm_alloc(ana_model *m, const tf_call *c)
{
    uint64_t addr, size = 0, flags = 0, ctx = 0;
    if (c->ret.type == TF_BOOL || !tf_value_u64(&c->ret, &addr) || !addr)
        return ANA_OK;
    if (!ana_call_u64(c, "size", 0, &size) || !ana_call_u64(c, "flags", 0, &flags))
        return ana_model_fail(m, c, "size or flags is not an integer");
    ana_call_u64(c, "context", 0, &ctx);
    long k = ana_obj_get(m, addr, ANA_OBJ_SVM);
    if (k < 0 || ana_grow((void **)&m->svm, &m->capsvm, m->nsvm + 1, sizeof *m->svm) ||
        ana_idmap_put(&m->svmmap, addr, (uint32_t)k))
        return ANA_ERR_NOMEM;
    m->objs[k].create_seq = c->seq;
    m->objs[k].size = size;
    m->objs[k].flags = flags;
    m->objs[k].context = ctx;
    m->xo[k].refs = 1;
    m->svm[m->nsvm++] = (uint32_t)k;
    return ANA_OK;
}

void ana_svm_release(ana_model *m, uint64_t addr, uint64_t seq)
{
    for (size_t i = 0; i < m->nsvm; i++) {
        ana_object *o = &m->objs[m->svm[i]];
        if (o->id == addr) {
            o->release_seq = seq;
            m->svm[i] = m->svm[--m->nsvm];
            return;
        }
    }
}

/* ------------------------------------------------------------ kernel arguments */

static ana_status ana_set_karg(ana_model *m, const tf_call *c, int svm)
{
    uint64_t kid = 0, idx = 0, size = 0;
    if (!ana_call_u64(c, "kernel", 0, &kid) || !ana_call_u64(c, "arg_index", 0, &idx))
        return ana_model_fail(m, c, "kernel or arg_index is not an integer");
    if (idx >= ANA_MAX_KARGS)
        return ana_model_fail(m, c, "argument index %llu (at most %d are modelled)",
                              (unsigned long long)idx, ANA_MAX_KARGS);
    long k = ana_obj_get(m, kid, ANA_OBJ_KERNEL);
    if (k < 0)
        return ANA_ERR_NOMEM;
    ana_obj_x *x = &m->xo[k];
    if (idx >= x->ncur) {
        ana_karg *n = realloc(x->cur, (idx + 1) * sizeof *n);
        if (!n)
            return ANA_ERR_NOMEM;
        memset(n + x->ncur, 0, (idx + 1 - x->ncur) * sizeof *n);
        x->cur = n;
        x->ncur = (unsigned)idx + 1;
    }
    ana_karg a = { 0, 0, 0 };
    const tf_value *v = ana_call_arg(c, "arg_value");
    ana_call_u64(c, "arg_size", 0, &size);
    a.size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
    if (svm) {
        a.kind = ANA_KARG_SVM;
        a.size = 8;
        if (v && v->type != TF_BOOL)
            tf_value_u64(v, &a.value);
    } else if (!v || v->type == TF_NIL) {
        a.kind = ANA_KARG_LOCAL;
    } else if (v->type == TF_UINT || v->type == TF_INT) {
        a.kind = ANA_KARG_MEM;
        tf_value_u64(v, &a.value);
        ana_obj_use(m, a.value, c->seq);
    } else if (v->type == TF_BIN) {
        a.kind = ANA_KARG_BYTES;
        for (uint32_t i = v->v.str.len < 8 ? v->v.str.len : 8; i-- > 0;)
            a.value = a.value << 8 | (unsigned char)v->v.str.ptr[i];
    } else {
        a.kind = ANA_KARG_BYTES;   /* a large struct (blob) or not captured */
    }
    x->cur[idx] = a;
    x->snap = NULL;
    return ANA_OK;
}

/* ------------------------------------------------------------ per call */

/* Marks every object the call names through its handle parameters. */
static void ana_mark_uses(ana_model *m, const tf_call *c)
{
    const tf_sig *s = c->sig;
    uint64_t id;
    for (uint32_t i = 0; c->args && i < s->nparams; i++) {
        const tf_param *p = &s->params[i];
        const tf_value *v = &c->args[i];
        if (!(p->dir & TF_DIR_IN) || ana_type_kind(p->type) < 0)
            continue;
        if (p->kind == TF_KIND_HANDLE && v->type != TF_BOOL && tf_value_u64(v, &id)) {
            ana_obj_use(m, id, c->seq);
        } else if (p->kind == TF_KIND_ARRAY && v->type == TF_ARRAY) {
            for (uint32_t j = 0; j < v->v.arr.n; j++)
                if (v->v.arr.items[j].type != TF_BOOL && tf_value_u64(&v->v.arr.items[j], &id))
                    ana_obj_use(m, id, c->seq);
        }
    }
}

static void ana_refcount(ana_model *m, const tf_call *c, int delta)
{
    const tf_sig *s = c->sig;
    uint64_t id;
    if (!s->nparams || !c->args || c->args[0].type == TF_BOOL || !tf_value_u64(&c->args[0], &id))
        return;
    uint32_t i;
    if (!ana_idmap_get(&m->objmap, id, &i))
        return;
    m->xo[i].refs += delta;
    if (delta < 0 && m->xo[i].refs <= 0 && !m->objs[i].release_seq)
        m->objs[i].release_seq = c->seq;
}

ana_status ana_model_objects_call(ana_model *m, const tf_call *c)
{
    const char *fn = c->sig->name ? c->sig->name : "";
    ana_status st;
    if (!strncmp(fn, "clRetain", 8)) {
        ana_refcount(m, c, +1);
        return ANA_OK;
    }
    if (!strncmp(fn, "clRelease", 9)) {
        ana_refcount(m, c, -1);
        return ANA_OK;
    }
    if (!strncmp(fn, "clGet", 5)) {
        if ((st = ana_model_created_outs(m, c, fn)) != ANA_OK)
            return st;
        uint64_t kid, pn;
        const tf_value *pv = ana_call_out(c, "param_value");
        uint32_t k;
        if (!strcmp(fn, "clGetEventProfilingInfo") && ana_call_u64(c, "event", 0, &kid) && kid &&
            ana_idmap_put(&m->timed, kid, 1))
            return ANA_ERR_NOMEM;
        if (!strcmp(fn, "clGetKernelInfo") && ana_call_u64(c, "kernel", 0, &kid) &&
            ana_call_u64(c, "param_name", 0, &pn) && pn == CL_KERNEL_FUNCTION_NAME && pv &&
            (pv->type == TF_BIN || pv->type == TF_STR) && ana_idmap_get(&m->objmap, kid, &k) &&
            (!m->objs[k].name || !m->objs[k].name[0]))
            return ana_model_set_kname(m, k, pv->v.str.ptr, pv->v.str.len);
        return ANA_OK;
    }
    ana_mark_uses(m, c);
    if (!strcmp(fn, "clSetKernelArg"))
        return ana_set_karg(m, c, 0);
    if (!strcmp(fn, "clSetKernelArgSVMPointer"))
        return ana_set_karg(m, c, 1);
    if (!strcmp(fn, "clSVMAlloc"))
        return ana_svm_alloc(m, c);
    if (!strcmp(fn, "clSVMFree")) {
        uint64_t addr;
        if (ana_call_u64(c, "svm_pointer", 0, &addr) && addr)
            ana_svm_release(m, addr, c->seq);
        return ANA_OK;
    }
    if (!strcmp(fn, "clBuildProgram") || !strcmp(fn, "clCompileProgram")) {
        uint64_t prog = 0;
        if (!ana_call_u64(c, "program", 0, &prog) || !prog)
            return ana_model_fail(m, c, "program is not an object");
        return ana_model_set_options(m, c, prog);
    }
    if ((st = ana_model_created(m, c, fn)) != ANA_OK)
        return st;
    return ana_model_created_outs(m, c, fn);
}
