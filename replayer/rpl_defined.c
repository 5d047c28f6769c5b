/* rpl_defined.c — which bytes of each buffer are defined, so that the
 * verifier compares only those (rpl.h, rpl_opts.strict; docs/replay.md,
 * "Undefined bytes").
 *
 * A buffer made by clCreateBuffer[WithProperties] without host data starts
 * with no defined byte; one made from host data (COPY_HOST_PTR,
 * USE_HOST_PTR) is defined whole. Every executed call then defines bytes by
 * its memory effects (the API description, api_sem.h): a write, a fill, a
 * map that lets the host write (its range, from the map on), a copy (the
 * destination takes the definedness of the source bytes), a kernel launch
 * (each memory argument: the bytes rpl_opts.write_hints bounds for it,
 * else the whole buffer). A launch that stores through a pointer to a
 * 3-component vector (`float3 *`, the element 16 bytes of which 4 are
 * padding) leaves the padding of what it writes undefined: the compiler
 * stores 4 lanes, the 4th with whatever value (PoCL: 0). Definedness only
 * grows, so the errors go one way: a byte may be compared that no one
 * defined, never the other way, except where the hints say a launch did not
 * write what it did.
 *
 * Coarse-grained SVM allocations (clSVMAlloc without FINE_GRAIN_BUFFER)
 * are tracked alike, by recorded address: SVM copies into them, fills and
 * maps for writing define their ranges; a kernel launch (which may write
 * any allocation through any pointer) makes every one defined whole, as
 * does a buffer over SVM memory (USE_HOST_PTR). Fine-grained SVM, which
 * the host writes without the API, is always defined.
 *
 * Anything this does not model makes the buffers concerned defined whole
 * (untracked): sub-buffers (and their parent), images made from a buffer,
 * calls of unknown effects (then every buffer, for the rest of the replay).
 * Rectangle read-backs and images are compared whole. */
#include "replayer/rpl_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct rpl_span {
    uint64_t lo, hi;
} rpl_span;

/* Padding: the bytes b in [lo, hi) with b % stride in [off, off + len). */
typedef struct rpl_pad {
    uint64_t lo, hi;
    uint32_t stride, off, len;
} rpl_pad;

#define RPL_DEF_MAX_SPANS 4096   /* past it, the buffer is defined whole */
#define RPL_DEF_MAX_PADS 256     /* past it, older padding counts as defined */

struct rpl_def {
    uint64_t size;
    rpl_span *v;              /* defined bytes: sorted, disjoint, not touching */
    size_t n, cap;
    rpl_pad *pad;             /* inside defined bytes */
    size_t npad, cap_pad;
};

/* A coarse-grained SVM allocation's defined bytes (rpl_session.svmdefs). */
struct rpl_svmdef {
    uint64_t rec, size;       /* recorded address, bytes */
    struct rpl_def *def;
};

/* The undefined bytes of one read-back, relative to its first byte. */
struct rpl_undef {
    rpl_span *v;
    size_t n;
    rpl_pad *pad;             /* absolute offsets; base is the read's offset */
    size_t npad;
    uint64_t base;
};

static void rpl_def_free(struct rpl_def *d)
{
    if (!d)
        return;
    free(d->v);
    free(d->pad);
    free(d);
}

void rpl_defined_forget(rpl_obj *o)
{
    rpl_def_free(o->def);
    o->def = NULL;
    free(o->pad3);
    o->pad3 = NULL;
    o->pad3_asked = 0;
}

/* The object's bytes are all defined from now on. */
static void rpl_def_untrack(rpl_obj *o)
{
    if (o && o->def) {
        rpl_def_free(o->def);
        o->def = NULL;
    }
}

/* Removes padding from [lo, hi): the bytes were written by something
 * that defines every byte. */
static void rpl_def_unpad(struct rpl_def *d, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < d->npad;) {
        rpl_pad *p = &d->pad[i];
        if (p->hi <= lo || p->lo >= hi) {
            i++;
            continue;
        }
        if (p->lo < lo && p->hi > hi && d->npad < RPL_DEF_MAX_PADS) {   /* split in two */
            if (d->npad == d->cap_pad) {
                size_t cap = d->cap_pad ? d->cap_pad * 2 : 8;
                rpl_pad *a = realloc(d->pad, cap * sizeof *a);
                if (!a) {   /* out of memory: the padding counts as defined */
                    d->pad[i] = d->pad[--d->npad];
                    continue;
                }
                d->pad = a;
                d->cap_pad = cap;
                p = &d->pad[i];
            }
            rpl_pad tail = *p;
            tail.lo = hi;
            p->hi = lo;
            d->pad[d->npad++] = tail;
            i++;
        } else if (p->lo < lo) {
            p->hi = lo;
            i++;
        } else if (p->hi > hi) {
            p->lo = hi;
            i++;
        } else {
            d->pad[i] = d->pad[--d->npad];
        }
    }
}

/* Defines [lo, hi). 0, or -1 when the table cannot grow (the caller
 * untracks the buffer). */
static int rpl_def_add(struct rpl_def *d, uint64_t lo, uint64_t hi)
{
    if (hi > d->size)
        hi = d->size;
    if (lo >= hi)
        return 0;
    rpl_def_unpad(d, lo, hi);
    /* first span that ends at or after lo, last that starts at or before hi */
    size_t a = 0;
    while (a < d->n && d->v[a].hi < lo)
        a++;
    size_t b = a;
    while (b < d->n && d->v[b].lo <= hi)
        b++;
    if (a < b) {   /* merge spans a..b-1 with [lo, hi) */
        uint64_t nlo = d->v[a].lo < lo ? d->v[a].lo : lo;
        uint64_t nhi = d->v[b - 1].hi > hi ? d->v[b - 1].hi : hi;
        d->v[a] = (rpl_span){nlo, nhi};
        memmove(&d->v[a + 1], &d->v[b], (d->n - b) * sizeof *d->v);
        d->n -= b - a - 1;
        return 0;
    }
    if (d->n >= RPL_DEF_MAX_SPANS)
        return -1;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 4;
        rpl_span *v = realloc(d->v, cap * sizeof *v);
        if (!v)
            return -1;
        d->v = v;
        d->cap = cap;
    }
    memmove(&d->v[a + 1], &d->v[a], (d->n - a) * sizeof *d->v);
    d->v[a] = (rpl_span){lo, hi};
    d->n++;
    return 0;
}

static void rpl_def_define(rpl_obj *o, uint64_t lo, uint64_t hi)
{
    if (o && o->def && rpl_def_add(o->def, lo, hi) < 0)
        rpl_def_untrack(o);
}

/* Padding of a 3-vector store over [lo, hi) (already defined). */
static void rpl_def_pad(rpl_obj *o, uint64_t lo, uint64_t hi, uint32_t scalar)
{
    struct rpl_def *d = o ? o->def : NULL;
    if (!d || !scalar || lo >= hi || d->npad >= RPL_DEF_MAX_PADS)
        return;
    if (d->npad == d->cap_pad) {
        size_t cap = d->cap_pad ? d->cap_pad * 2 : 8;
        rpl_pad *a = realloc(d->pad, cap * sizeof *a);
        if (!a)
            return;
        d->pad = a;
        d->cap_pad = cap;
    }
    d->pad[d->npad++] = (rpl_pad){lo, hi, 4 * scalar, 3 * scalar, scalar};
}

/* ------------------------------------------------------------ arguments */

static int rpl_def_u64(const rpl_cx *x, int i, uint64_t *v)
{
    return i >= 0 && (uint32_t)i < x->c->sig->nparams && tf_value_u64(&x->c->args[i], v);
}

static int rpl_def_param(const rpl_cx *x, const char *name)
{
    for (uint32_t i = 0; i < x->c->sig->nparams; i++)
        if (!strcmp(x->c->sig->params[i].name, name))
            return (int)i;
    return -1;
}

static rpl_obj *rpl_def_obj(rpl_cx *x, int i)
{
    uint64_t id = 0;
    if (!rpl_def_u64(x, i, &id) || !id)
        return NULL;
    rpl_obj *o = rpl_obj_find(x->s, id);
    return o && o->kind == RPL_OBJ_MEM ? o : NULL;
}

/* Element k of array argument @p i. */
static int rpl_def_elem(const rpl_cx *x, int i, uint32_t k, uint64_t *v)
{
    if (i < 0 || (uint32_t)i >= x->c->sig->nparams)
        return 0;
    const tf_value *a = &x->c->args[i];
    return a->type == TF_ARRAY && k < a->v.arr.n && tf_value_u64(&a->v.arr.items[k], v);
}

/* [lo, hi): the hull of a buffer rectangle's bytes. 0 when malformed. */
static int rpl_def_rect(const rpl_cx *x, const api_effect *e, uint64_t *lo, uint64_t *hi)
{
    uint64_t o[3], r[3], row = 0, slice = 0;
    for (uint32_t k = 0; k < 3; k++)
        if (!rpl_def_elem(x, e->origin, k, &o[k]) || !rpl_def_elem(x, e->region, k, &r[k]))
            return 0;
    rpl_def_u64(x, e->row, &row);
    rpl_def_u64(x, e->slice, &slice);
    if (!r[0] || !r[1] || !r[2])
        return 0;
    if (!row)
        row = r[0];
    if (!slice)
        slice = r[1] * row;
    if (o[0] > (1ull << 48) || o[1] > (1ull << 32) || o[2] > (1ull << 32) || row > (1ull << 40)
        || slice > (1ull << 48) || r[0] > (1ull << 48) || r[1] > (1ull << 32) || r[2] > (1ull << 32))
        return 0;
    *lo = o[0] + o[1] * row + o[2] * slice;
    *hi = *lo + r[0] + (r[1] - 1) * row + (r[2] - 1) * slice;
    return 1;
}

/* The byte range [*lo, *hi) of a BYTES effect; whole when the size is unknown. */
static int rpl_def_bytes(const rpl_cx *x, const api_effect *e, const rpl_obj *o, uint64_t *lo, uint64_t *hi)
{
    uint64_t off = 0, size = 0;
    if (e->off >= 0 && !rpl_def_u64(x, e->off, &off))
        return 0;
    if (e->size < 0 || !rpl_def_u64(x, e->size, &size)) {
        *lo = 0;
        *hi = o && o->def ? o->def->size : UINT64_MAX;
        return 1;
    }
    if (off > UINT64_MAX - size)
        return 0;
    *lo = off;
    *hi = off + size;
    return 1;
}

/* ------------------------------------------------------------ kernels */

/* Per argument of kernel @p k: the scalar size of the 3-component vector
 * a non-const global pointer argument points to, 0 otherwise (asked of the
 * driver once; unknown when it gives no argument info). */
static uint32_t rpl_def_pad3(rpl_session *s, rpl_obj *k, unsigned arg)
{
    if (!k->pad3_asked) {
        k->pad3_asked = 1;
        cl_uint n = 0;
        if (s->o.exact_calls || !k->live || !s->api.clGetKernelInfo || !s->api.clGetKernelArgInfo
            || s->api.clGetKernelInfo(k->live, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL) != CL_SUCCESS || !n
            || n > RPL_MAX_KARGS)
            return 0;
        uint8_t *a = calloc((size_t)n + 1, 1);
        if (!a)
            return 0;
        a[0] = (uint8_t)n;
        static const struct { const char *name; uint8_t size; } types[] = {
            {"char3", 1}, {"uchar3", 1}, {"short3", 2}, {"ushort3", 2}, {"half3", 2}, {"int3", 4},
            {"uint3", 4}, {"float3", 4}, {"long3", 8}, {"ulong3", 8}, {"double3", 8},
        };
        for (cl_uint i = 0; i < n; i++) {
            cl_kernel_arg_address_qualifier q = 0;
            cl_kernel_arg_type_qualifier tq = 0;
            char type[64] = "";
            if (s->api.clGetKernelArgInfo(k->live, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, NULL)
                    != CL_SUCCESS || q != CL_KERNEL_ARG_ADDRESS_GLOBAL
                || s->api.clGetKernelArgInfo(k->live, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL)
                       != CL_SUCCESS || (tq & CL_KERNEL_ARG_TYPE_CONST)
                || s->api.clGetKernelArgInfo(k->live, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type, NULL)
                       != CL_SUCCESS)
                continue;
            size_t len = strlen(type);
            if (len < 2 || type[len - 1] != '*')
                continue;
            type[len - 1] = 0;
            for (size_t t = 0; t < sizeof types / sizeof *types; t++)
                if (!strcmp(type, types[t].name))
                    a[1 + i] = types[t].size;
        }
        k->pad3 = a;
    }
    return k->pad3 && arg < k->pad3[0] ? k->pad3[1 + arg] : 0;
}

/* The hint for (@p seq, @p mem): 1 with [*lo, *hi) and *pad3, 0 when there is none. */
static int rpl_def_hint(const rpl_session *s, uint64_t seq, uint64_t mem, uint64_t *lo, uint64_t *hi,
                        uint32_t *pad3)
{
    const rpl_write_hint *h = s->o.write_hints;
    size_t a = 0, b = s->o.nwrite_hints;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (h[m].seq < seq || (h[m].seq == seq && h[m].mem < mem))
            a = m + 1;
        else
            b = m;
    }
    if (a < s->o.nwrite_hints && h[a].seq == seq && h[a].mem == mem) {
        *lo = h[a].lo;
        *hi = h[a].hi;
        *pad3 = h[a].pad3;
        return 1;
    }
    return 0;
}

static void rpl_def_kernel(rpl_cx *x, const api_effect *e)
{
    uint64_t kid = 0;
    if (!rpl_def_u64(x, e->obj, &kid))
        return;
    rpl_obj *k = rpl_obj_find(x->s, kid);
    if (!k)
        return;
    for (unsigned i = 0; i < RPL_MAX_KARGS; i++) {
        rpl_obj *m = k->args[i] ? rpl_obj_find(x->s, k->args[i]) : NULL;
        if (!m || m->kind != RPL_OBJ_MEM || !m->def)
            continue;
        uint64_t lo = 0, hi = m->def->size;
        uint32_t pad = 0;
        if (!rpl_def_hint(x->s, x->c->seq, m->id, &lo, &hi, &pad))   /* else: the whole buffer */
            pad = rpl_def_pad3(x->s, k, i);
        if (hi > m->def->size)
            hi = m->def->size;
        rpl_def_define(m, lo, hi);
        if (pad && m->def)
            rpl_def_pad(m, lo, hi, pad);
    }
}

/* ------------------------------------------------------------ SVM */

static void rpl_svm_drop(rpl_session *s, size_t i)
{
    rpl_def_free(s->svmdefs[i].def);
    s->svmdefs[i] = s->svmdefs[--s->nsvmdefs];
}

static void rpl_svm_untrack_all(rpl_session *s)
{
    while (s->nsvmdefs)
        rpl_svm_drop(s, s->nsvmdefs - 1);
}

/* The allocation holding recorded address @p a, its index; -1 when none. */
static long rpl_svm_find(const rpl_session *s, uint64_t a)
{
    for (size_t i = s->nsvmdefs; i-- > 0;)
        if (a >= s->svmdefs[i].rec && a - s->svmdefs[i].rec < s->svmdefs[i].size)
            return (long)i;
    return -1;
}

static void rpl_svm_alloc(rpl_cx *x)
{
    rpl_session *s = x->s;
    uint64_t rec = 0, flags = 0, size = 0;
    if (!tf_value_u64(&x->c->ret, &rec) || !rec || !rpl_def_u64(x, rpl_def_param(x, "flags"), &flags)
        || !rpl_def_u64(x, rpl_def_param(x, "size"), &size) || !size || (flags & CL_MEM_SVM_FINE_GRAIN_BUFFER))
        return;
    long old = rpl_svm_find(s, rec);
    if (old >= 0)
        rpl_svm_drop(s, (size_t)old);
    if (s->nsvmdefs == s->cap_svmdefs) {
        size_t cap = s->cap_svmdefs ? s->cap_svmdefs * 2 : 8;
        struct rpl_svmdef *a = realloc(s->svmdefs, cap * sizeof *a);
        if (!a)
            return;
        s->svmdefs = a;
        s->cap_svmdefs = cap;
    }
    struct rpl_def *d = calloc(1, sizeof *d);
    if (!d)
        return;
    d->size = size;
    s->svmdefs[s->nsvmdefs++] = (struct rpl_svmdef){rec, size, d};
}

/* An SVM effect of @p x on [addr, addr + size) (range API_RANGE_SVM):
 * the allocation's index and the offset range in it; -1 when untracked. */
static long rpl_svm_range(rpl_cx *x, const api_effect *e, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = 0, size = 0;
    if (!rpl_def_u64(x, e->obj, &a) || !a)
        return -1;
    long i = rpl_svm_find(x->s, a);
    if (i < 0)
        return -1;
    const struct rpl_svmdef *sd = &x->s->svmdefs[i];
    *lo = a - sd->rec;
    if (e->size < 0 || !rpl_def_u64(x, e->size, &size) || size > sd->size - *lo)
        size = sd->size - *lo;
    *hi = *lo + size;
    return i;
}

void rpl_defined_free(rpl_session *s)
{
    rpl_svm_untrack_all(s);
    free(s->svmdefs);
    s->svmdefs = NULL;
    s->cap_svmdefs = 0;
}

/* ------------------------------------------------------------ calls */

static void rpl_def_untrack_all(rpl_session *s)
{
    rpl_svm_untrack_all(s);
    s->def_off = 1;
    for (size_t i = 0; i < s->cap; i++) {
        rpl_obj *o = s->by_id[i];
        if (o && (uintptr_t)o > 1 && o->def)
            rpl_def_untrack(o);
    }
}

static void rpl_def_created(rpl_cx *x)
{
    uint64_t id = 0, flags = 0, size = 0;
    if (x->s->def_off || !tf_value_u64(&x->c->ret, &id) || !id)
        return;
    rpl_obj *o = rpl_obj_find(x->s, id);
    if (!o || o->kind != RPL_OBJ_MEM || !rpl_def_u64(x, rpl_def_param(x, "flags"), &flags)
        || !rpl_def_u64(x, rpl_def_param(x, "size"), &size) || !size)
        return;
    rpl_def_untrack(o);
    if (flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR))
        return;   /* defined whole */
    o->def = calloc(1, sizeof *o->def);
    if (o->def)
        o->def->size = size;
}

void rpl_defined_after(rpl_cx *x)
{
    rpl_session *s = x->s;
    unsigned fn = x->fn;
    if (s->def_off || !s->o.verify || s->o.strict || !x->recorded_ok)
        return;
    if (fn == RPL_FN_clCreateBuffer || fn == RPL_FN_clCreateBufferWithProperties) {
        /* a buffer over SVM memory (host_ptr recorded as an address): its
         * writes are the allocation's, which this does not follow */
        const tf_value *hp = rpl_def_param(x, "host_ptr") >= 0 ? &x->c->args[rpl_def_param(x, "host_ptr")] : NULL;
        if (hp && (hp->type == TF_UINT || hp->type == TF_INT))
            rpl_svm_untrack_all(s);
        rpl_def_created(x);
        return;
    }
    if (fn == RPL_FN_clSVMAlloc) {
        rpl_svm_alloc(x);
        return;
    }
    if (fn == RPL_FN_clSVMFree) {
        uint64_t a = 0;
        long i = rpl_def_u64(x, 1, &a) ? rpl_svm_find(s, a) : -1;
        if (i >= 0)
            rpl_svm_drop(s, (size_t)i);
        return;
    }
    if (fn == RPL_FN_clCreateSubBuffer) {   /* bytes shared with the parent: not modelled */
        rpl_def_untrack(rpl_def_obj(x, 0));
        return;
    }
    if (fn == RPL_FN_clCreateImage || fn == RPL_FN_clCreateImageWithProperties) {   /* an image of a buffer */
        int d = rpl_def_param(x, "image_desc");
        const tf_value *v = d >= 0 ? &x->c->args[d] : NULL;
        uint64_t id = 0;
        if (v && v->type == TF_ARRAY && v->v.arr.n >= 10 && tf_value_u64(&v->v.arr.items[9], &id) && id)
            rpl_def_untrack(rpl_obj_find(s, id));
        return;
    }
    const api_sem *a = rpl_gen_table[fn].sem;
    if (!(a->cat & (API_CAT_ENQUEUE | API_CAT_MAP)))
        return;
    if (a->flags & API_F_UNKNOWN) {
        rpl_def_untrack_all(s);
        return;
    }
    /* a copy of bytes: the destination takes the source's definedness */
    if (a->op == API_OP_COPY && a->neffects == 2 && a->eff[0].range == API_RANGE_BYTES
        && a->eff[1].range == API_RANGE_BYTES && (a->eff[0].access & API_ACC_READ)
        && (a->eff[1].access & API_ACC_WRITE) && a->eff[0].size >= 0 && a->eff[0].size == a->eff[1].size) {
        rpl_obj *src = rpl_def_obj(x, a->eff[0].obj), *dst = rpl_def_obj(x, a->eff[1].obj);
        uint64_t slo, shi, dlo, dhi;
        if (!dst || !dst->def)
            return;
        if (!rpl_def_bytes(x, &a->eff[0], src, &slo, &shi) || !rpl_def_bytes(x, &a->eff[1], dst, &dlo, &dhi)) {
            rpl_def_untrack(dst);
            return;
        }
        if (!src || !src->def || src == dst) {
            rpl_def_define(dst, dlo, dhi);
            return;
        }
        /* the source's defined spans inside [slo, shi), moved to dlo (padding too: whole) */
        struct rpl_def *sd = src->def;
        for (size_t i = 0; i < sd->n && dst->def; i++) {
            uint64_t lo = sd->v[i].lo > slo ? sd->v[i].lo : slo, hi = sd->v[i].hi < shi ? sd->v[i].hi : shi;
            if (lo < hi)
                rpl_def_define(dst, lo - slo + dlo, hi - slo + dlo);
        }
        return;
    }
    for (unsigned i = 0; i < a->neffects; i++) {
        const api_effect *e = &a->eff[i];
        unsigned acc = e->access;
        if (acc & API_ACC_MAP) {
            uint64_t f = 0;
            rpl_def_u64(x, e->flags, &f);
            acc = api_map_access(f);
        }
        if (!(acc & API_ACC_WRITE))
            continue;   /* reads, migrations, unmaps (a map defines its range) */
        if (e->range == API_RANGE_KERNEL) {
            rpl_def_kernel(x, e);
            rpl_svm_untrack_all(s);   /* any SVM pointer may be among its arguments */
            continue;
        }
        if (e->range == API_RANGE_SVM) {
            uint64_t lo, hi;
            long k = rpl_svm_range(x, e, &lo, &hi);
            if (k >= 0 && rpl_def_add(s->svmdefs[k].def, lo, hi) < 0)
                rpl_svm_drop(s, (size_t)k);
            continue;
        }
        if (e->range == API_RANGE_SVMLIST) {   /* clEnqueueSVMFree: the allocations go */
            uint64_t a;
            for (uint32_t k = 0; rpl_def_elem(x, e->obj, k, &a); k++) {
                long j = rpl_svm_find(s, a);
                if (j >= 0)
                    rpl_svm_drop(s, (size_t)j);
            }
            continue;
        }
        if (e->range == API_RANGE_LIST) {
            uint64_t id;
            for (uint32_t k = 0; rpl_def_elem(x, e->obj, k, &id); k++)
                rpl_def_untrack(rpl_obj_find(s, id));
            continue;
        }
        rpl_obj *o = rpl_def_obj(x, e->obj);
        if (!o || !o->def)
            continue;
        uint64_t lo = 0, hi = o->def->size;
        if (e->range == API_RANGE_BYTES && rpl_def_bytes(x, e, o, &lo, &hi))
            rpl_def_define(o, lo, hi);
        else if (e->range == API_RANGE_RECT && rpl_def_rect(x, e, &lo, &hi))
            rpl_def_define(o, lo, hi);
        else
            rpl_def_untrack(o);
    }
}

/* ------------------------------------------------------------ read-backs */

int rpl_defined_readback(rpl_cx *x, uint64_t mem, size_t len, struct rpl_undef **out)
{
    *out = NULL;
    rpl_session *s = x->s;
    if (s->def_off || s->o.strict || !len)
        return RPL_OK;
    const api_sem *a = rpl_gen_table[x->fn].sem;
    struct rpl_def *d = NULL;
    uint64_t lo = 0, hi = 0;
    for (unsigned i = 0; i < a->neffects && !d; i++) {
        const api_effect *e = &a->eff[i];
        if (!(e->access & (API_ACC_READ | API_ACC_MAP)))
            continue;
        if (e->range == API_RANGE_BYTES && mem) {
            rpl_obj *o = rpl_obj_find(s, mem);
            if (o && o->kind == RPL_OBJ_MEM && o->def && rpl_def_bytes(x, e, o, &lo, &hi))
                d = o->def;
        } else if (e->range == API_RANGE_SVM && !mem) {   /* an SVM copy to the host, an SVM map */
            long k = rpl_svm_range(x, e, &lo, &hi);
            if (k >= 0)
                d = s->svmdefs[k].def;
        }
    }
    if (!d || hi - lo != len)
        return RPL_OK;   /* untracked; rectangles, images: compared whole */
    struct rpl_undef *u = calloc(1, sizeof *u);
    if (!u)
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    u->base = lo;
    /* gaps between the defined spans, inside [lo, hi) */
    size_t cap = d->n + 1;
    u->v = malloc(cap * sizeof *u->v);
    if (d->npad)
        u->pad = malloc(d->npad * sizeof *u->pad);
    if (!u->v || (d->npad && !u->pad)) {
        rpl_undef_free(u);
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    }
    uint64_t at = lo;
    for (size_t i = 0; i <= d->n && at < hi; i++) {
        uint64_t glo = at, ghi = i < d->n ? d->v[i].lo : hi;
        if (ghi > hi)
            ghi = hi;
        if (glo < ghi)
            u->v[u->n++] = (rpl_span){glo - lo, ghi - lo};
        if (i < d->n && d->v[i].hi > at)
            at = d->v[i].hi;
    }
    for (size_t i = 0; i < d->npad; i++)
        if (d->pad[i].hi > lo && d->pad[i].lo < hi)
            u->pad[u->npad++] = d->pad[i];
    if (!u->n && !u->npad) {
        rpl_undef_free(u);
        return RPL_OK;
    }
    *out = u;
    return RPL_OK;
}

uint64_t rpl_undef_apply(const struct rpl_undef *u, void *expected, const void *actual, size_t n)
{
    if (!u)
        return 0;
    unsigned char *e = expected;
    const unsigned char *a = actual;
    uint64_t skipped = 0;
    for (size_t i = 0; i < u->n; i++) {
        uint64_t lo = u->v[i].lo, hi = u->v[i].hi < n ? u->v[i].hi : n;
        if (lo < hi) {
            if (e)
                memcpy(e + lo, a + lo, (size_t)(hi - lo));
            skipped += hi - lo;
        }
    }
    uint64_t end = u->base + n;
    for (size_t i = 0; i < u->npad; i++) {
        const rpl_pad *p = &u->pad[i];
        uint64_t lo = p->lo > u->base ? p->lo : u->base, hi = p->hi < end ? p->hi : end;
        /* each element's padding that lies in [lo, hi) */
        for (uint64_t el = lo - lo % p->stride; el < hi; el += p->stride) {
            uint64_t plo = el + p->off, phi = plo + p->len;
            if (plo < lo)
                plo = lo;
            if (phi > hi)
                phi = hi;
            if (plo < phi) {
                if (e)
                    memcpy(e + (plo - u->base), a + (plo - u->base), (size_t)(phi - plo));
                skipped += phi - plo;
            }
        }
    }
    return skipped;
}

void rpl_undef_free(struct rpl_undef *u)
{
    if (!u)
        return;
    free(u->v);
    free(u->pad);
    free(u);
}
