/* ana_model_xfer.c — the memory ranges of transfers and other non-kernel
 * commands: buffer, rect and image reads/writes/copies/fills (byte hulls of
 * their regions), maps and their unmaps, migrations, native kernels, GL/EGL
 * objects, SVM copies, fills, maps, frees and migrations. Which parameter
 * holds what, and what is read or written, comes from the API description
 * (the effects of api_sem.h, generated from recorder/api.overlay). */
#include "analyzer/ana_model_int.h"

#include <CL/cl.h>
#include <string.h>

/* Byte hull of a buffer rectangle; @return its bytes. */
static uint64_t ana_rect(const uint64_t o[3], const uint64_t r[3], uint64_t row, uint64_t slice,
                         uint64_t *lo, uint64_t *hi)
{
    row = row ? row : r[0];
    slice = slice ? slice : ana_sat_mul(r[1], row);
    *lo = ana_sat_add(ana_sat_add(ana_sat_mul(o[2], slice), ana_sat_mul(o[1], row)), o[0]);
    if (!r[0] || !r[1] || !r[2]) {
        *hi = *lo;
        return 0;
    }
    uint64_t last = ana_sat_add(ana_sat_mul(r[2] - 1, slice), ana_sat_mul(r[1] - 1, row));
    *hi = ana_sat_add(ana_sat_add(*lo, last), r[0]);
    return ana_sat_mul(ana_sat_mul(r[0], r[1]), r[2]);
}

/* Byte hull of an image region in the image's tight layout. */
static uint64_t ana_img(ana_model *m, uint64_t id, const uint64_t o[3], const uint64_t r[3],
                        uint64_t *lo, uint64_t *hi)
{
    uint32_t i;
    uint64_t w = 1, h = 1, e = 1;
    if (ana_idmap_get(&m->objmap, id, &i) && m->xo[i].elem) {
        w = m->xo[i].img_w;
        h = m->xo[i].img_h;
        e = m->xo[i].elem;
    }
    uint64_t oo[3] = { ana_sat_mul(o[0], e), o[1], o[2] }, rr[3] = { ana_sat_mul(r[0], e), r[1], r[2] };
    return ana_rect(oo, rr, ana_sat_mul(w, e), ana_sat_mul(ana_sat_mul(w, e), h), lo, hi);
}

/* The mapping of pointer @p ptr, removed from the live list; 0 when none. */
static int ana_unmap_take(ana_model *m, uint64_t ptr, ana_mapping *out)
{
    for (size_t i = m->nmaps; i-- > 0;) {
        if (m->maps[i].ptr == ptr) {
            *out = m->maps[i];
            m->maps[i] = m->maps[--m->nmaps];
            return 1;
        }
    }
    return 0;
}

static ana_status ana_map_add(ana_model *m, uint64_t ptr, uint64_t seq, uint64_t obj, uint64_t lo,
                              uint64_t hi, uint64_t flags)
{
    if (!ptr)
        return ANA_OK;
    if (ana_grow((void **)&m->maps, &m->capmaps, m->nmaps + 1, sizeof *m->maps))
        return ANA_ERR_NOMEM;
    ana_mapping x = { ptr, seq, obj, lo, hi, flags };
    m->maps[m->nmaps++] = x;
    return ANA_OK;
}

/* Integer input parameter @p i of @p a (see ana_call_u64); 0 when absent. */
static int ana_p_u64(const tf_call *c, const api_sem *a, int i, uint64_t dflt, uint64_t *v)
{
    const char *n = api_sem_param(a, i);
    return n ? ana_call_u64(c, n, dflt, v) : 0;
}

/* ANA_ACC_* of an effect's plain access bits. */
static int ana_acc(unsigned access)
{
    return (access & API_ACC_READ ? ANA_ACC_READ : 0) | (access & API_ACC_WRITE ? ANA_ACC_WRITE : 0);
}

/* Memory of the list parameter @p name, each whole. */
static ana_status ana_ref_list(ana_cb *b, const char *name, int access, const char *why)
{
    const tf_value *v = ana_call_arg(b->c, name);
    uint64_t id;
    if (!v || v->type != TF_ARRAY)
        return ANA_OK;
    for (uint32_t i = 0; i < v->v.arr.n; i++) {
        if (v->v.arr.items[i].type == TF_BOOL || !tf_value_u64(&v->v.arr.items[i], &id))
            return ana_model_fail(b->m, b->c, "%s holds a non-object", name);
        ana_status st = ana_cb_ref(b, id, 0, 0, access, 1, why);
        if (st != ANA_OK)
            return st;
    }
    return ANA_OK;
}

/* The object, bytes and byte hull of a range effect (bytes, rect, image);
 * size=* (API_SIZE_REGION) is left for the caller. */
typedef struct ana_span { uint64_t id, lo, hi, bytes; int have; } ana_span;

static ana_status ana_effect_span(ana_cb *b, const api_sem *a, const api_effect *e, ana_span *sp)
{
    ana_model *m = b->m;
    const tf_call *c = b->c;
    const char *obj = api_sem_param(a, e->obj);
    uint64_t off = 0, size = 0, o[3], r[3], p[2] = { 0, 0 };
    ana_status st = ANA_OK;
    memset(sp, 0, sizeof *sp);
    switch (e->range) {
    case API_RANGE_BYTES:
        if (!ana_call_u64(c, obj, 0, &sp->id) || !ana_p_u64(c, a, e->off, 0, &off) ||
            (e->size >= 0 && !ana_p_u64(c, a, e->size, 0, &size)))
            return e->size >= 0 ? ana_model_fail(m, c, "%s, %s or %s is malformed", obj, api_sem_param(a, e->off),
                                                 api_sem_param(a, e->size))
                                : ana_model_fail(m, c, "%s or %s is malformed", obj, api_sem_param(a, e->off));
        sp->lo = off;
        sp->hi = ana_sat_add(off, size);
        sp->bytes = size;
        sp->have = e->size >= 0;
        return ANA_OK;
    case API_RANGE_RECT:
    case API_RANGE_IMAGE:
        if (!ana_call_u64(c, obj, 0, &sp->id) || (st = ana_cb_vec3(b, api_sem_param(a, e->origin), o, 0)) ||
            (st = ana_cb_vec3(b, api_sem_param(a, e->region), r, 1)))
            return st ? st : ana_model_fail(m, c, "%s is not an object", obj);
        if (e->range == API_RANGE_RECT) {
            ana_p_u64(c, a, e->row, 0, &p[0]);
            ana_p_u64(c, a, e->slice, 0, &p[1]);
            sp->bytes = ana_rect(o, r, p[0], p[1], &sp->lo, &sp->hi);
        } else {
            sp->bytes = ana_img(m, sp->id, o, r, &sp->lo, &sp->hi);
        }
        sp->have = 1;
        return ANA_OK;
    default:
        return ANA_OK;
    }
}

/* A map (op map, svm_map; effect 0): the mapping is remembered for its
 * unmap; the map reads what it shows. */
static ana_status ana_map(ana_cb *b, const api_sem *a, const api_effect *e)
{
    ana_model *m = b->m;
    const tf_call *c = b->c;
    ana_cmd *k = b->k;
    const char *obj = api_sem_param(a, e->obj), *fl = api_sem_param(a, e->flags);
    uint64_t id = 0, flags = 0, size = 0, ptr = 0;
    ana_status st;
    if (e->range == API_RANGE_SVM) {
        if (!ana_call_u64(c, obj, 0, &id) || !ana_p_u64(c, a, e->size, 0, &size) || !ana_call_u64(c, fl, 0, &flags))
            return ana_model_fail(m, c, "%s, %s or %s is malformed", obj, api_sem_param(a, e->size), fl);
        k->bytes = size;
        long s = ana_svm_find(m, id);
        if (s < 0)
            return ANA_OK;
        uint64_t base = m->objs[s].id;
        if ((st = ana_map_add(m, id, c->seq, base, id - base, ana_sat_add(id - base, size), flags)))
            return st;
        if (api_map_access(flags) & API_ACC_READ)
            return ana_cb_ref_svm(b, id, size, ANA_ACC_READ);
        return ANA_OK;
    }
    if (!ana_call_u64(c, obj, 0, &id) || !ana_call_u64(c, fl, 0, &flags))
        return ana_model_fail(m, c, "%s or %s is malformed", obj, fl);
    ana_span sp;
    if ((st = ana_effect_span(b, a, e, &sp)))
        return st;
    k->bytes = sp.bytes;
    if (c->ret.type != TF_BOOL)
        tf_value_u64(&c->ret, &ptr);
    if ((st = ana_map_add(m, ptr, c->seq, id, sp.lo, sp.hi, flags)))
        return st;
    if (api_map_access(flags) & API_ACC_READ)
        return ana_cb_ref(b, id, sp.lo, sp.hi, ANA_ACC_READ, 0, NULL);
    ana_cb_use(m, id, c->seq);
    return ANA_OK;
}

/* An unmap (access mapped): the mapping's range, written when it was
 * mapped for writing, else read. */
static ana_status ana_unmap(ana_cb *b, const api_sem *a, const api_effect *e)
{
    ana_model *m = b->m;
    const tf_call *c = b->c;
    uint64_t ptr = 0, id = 0;
    ana_mapping mp;
    int svm = e->range == API_RANGE_SVM;
    if (!ana_p_u64(c, a, e->ptr, 0, &ptr))
        return ana_model_fail(m, c, "the mapped pointer is malformed");
    if (!svm && ana_call_u64(c, api_sem_param(a, e->obj), 0, &id))
        ana_cb_use(m, id, c->seq);
    if (!ana_unmap_take(m, ptr, &mp))
        return ANA_OK;
    b->k->map_seq = mp.seq;
    b->k->bytes = mp.hi - mp.lo;
    int acc = api_map_access(mp.flags) & API_ACC_WRITE ? ANA_ACC_WRITE : ANA_ACC_READ;
    if (svm) {
        long s = ana_svm_find(m, mp.object);
        return s < 0 ? ANA_OK : ana_cb_ref_svm(b, mp.object + mp.lo, mp.hi - mp.lo, acc);
    }
    return ana_cb_ref(b, mp.object, mp.lo, mp.hi, acc, 0, NULL);
}

/* SVM addresses (range svm, svmlist). */
static ana_status ana_svm_effect(ana_cb *b, const api_sem *a, const api_effect *e, int acc)
{
    ana_model *m = b->m;
    const tf_call *c = b->c;
    const char *obj = api_sem_param(a, e->obj);
    uint64_t addr = 0, size = 0;
    ana_status st;
    if (e->range == API_RANGE_SVM) {
        if (!ana_p_u64(c, a, e->size, 0, &size))
            return ana_model_fail(m, c, "%s is malformed", api_sem_param(a, e->size));
        if (!b->k->bytes)
            b->k->bytes = size;
        /* host memory is recorded as its bytes, not as an address */
        const tf_value *v = ana_call_arg(c, obj);
        if (v && (v->type == TF_UINT || v->type == TF_INT) && tf_value_u64(v, &addr))
            return ana_cb_ref_svm(b, addr, size, acc);
        return ANA_OK;
    }
    const tf_value *v = ana_call_arg(c, obj);
    uint64_t sizes[ANA_CMD_MAXREF];
    int ns = e->sizes >= 0 ? ana_u64_array(ana_call_arg(c, api_sem_param(a, e->sizes)), sizes, ANA_CMD_MAXREF) : 0;
    for (uint32_t i = 0; v && v->type == TF_ARRAY && i < v->v.arr.n; i++) {
        if (v->v.arr.items[i].type == TF_BOOL || !tf_value_u64(&v->v.arr.items[i], &addr))
            return ana_model_fail(m, c, "%s holds a non-pointer", obj);
        if ((st = ana_cb_ref_svm(b, addr, ns > 0 && (int)i < ns ? sizes[i] : 0, acc)))
            return st;
        if (a->op == API_OP_SVM_FREE)
            ana_svm_release(m, addr, c->seq);
    }
    return ANA_OK;
}

ana_status ana_model_transfer(ana_cb *b, const api_sem *a)
{
    const tf_call *c = b->c;
    ana_cmd *k = b->k;
    ana_span sp[API_MAX_EFFECTS];
    ana_status st;
    if (!a || !a->neffects)
        return ANA_OK;
    if (a->eff[0].access & API_ACC_MAP)
        return ana_map(b, a, &a->eff[0]);
    if (a->eff[0].access & API_ACC_MAPPED)
        return ana_unmap(b, a, &a->eff[0]);
    /* the ranges first (the bytes of a command: its first sized range; a
     * size=* range takes them), then the references, in the listed order */
    int sized = 0;
    for (unsigned i = 0; i < a->neffects; i++) {
        if ((st = ana_effect_span(b, a, &a->eff[i], &sp[i])))
            return st;
        if (sp[i].have && !sized) {
            k->bytes = sp[i].bytes;
            sized = 1;
        }
    }
    for (unsigned i = 0; i < a->neffects; i++)
        if (a->eff[i].range == API_RANGE_BYTES && a->eff[i].size == API_SIZE_REGION)
            sp[i].hi = ana_sat_add(sp[i].lo, k->bytes);
    for (unsigned i = 0; i < a->neffects; i++) {
        const api_effect *e = &a->eff[i];
        int acc = ana_acc(e->access);
        if (e->access & API_ACC_MIGRATE) {
            uint64_t flags = 0;
            ana_p_u64(c, a, e->flags, 0, &flags);
            acc = ana_acc(api_migrate_access(flags));
        }
        switch (e->range) {
        case API_RANGE_BYTES:
        case API_RANGE_RECT:
        case API_RANGE_IMAGE:
            st = ana_cb_ref(b, sp[i].id, sp[i].lo, sp[i].hi, acc, 0, NULL);
            break;
        case API_RANGE_LIST:
            st = ana_ref_list(b, api_sem_param(a, e->obj), acc,
                              a->op == API_OP_MIGRATE  ? "migration of the whole object"
                              : a->op == API_OP_NATIVE ? "native kernel: effects unknown"
                                                       : "shared with GL/EGL");
            break;
        case API_RANGE_SVM:
        case API_RANGE_SVMLIST:
            st = ana_svm_effect(b, a, e, acc);
            break;
        default:
            st = ANA_OK;
            break;
        }
        if (st != ANA_OK)
            return st;
    }
    return ANA_OK;
}
