/* rpl_trim.c — `clrr trim`: a self-contained trace of a range of calls.
 *
 * Pass 1 reads the whole trace: object lifetimes (application reference
 * counts), kernel arguments, and the memory objects the range uses.
 * Pass 2 replays everything before the range here and reads back, at the
 * range start, the contents of those memory objects (for --kernel: also
 * their contents after the launch).
 * Pass 3 writes the output: the setup calls before the range whose objects
 * live into it (no commands, no objects released before the range), one
 * blocking write per memory object with its contents at the range start,
 * the range itself, and for --kernel blocking reads that verify the launch.
 * Calls are renumbered from 1. */
#include "replayer/rpl_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ u64 map */
typedef struct trim_map {
    uint64_t *k, *v;
    size_t cap, n;
} trim_map;

static uint64_t *trim_slot(trim_map *m, uint64_t key, int insert)
{
    if (insert && (m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        uint64_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return NULL;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->k[i])
                continue;
            size_t j = (m->k[i] * 0x9E3779B97F4A7C15ULL) & (cap - 1);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = m->k[i];
            v[j] = m->v[i];
        }
        free(m->k);
        free(m->v);
        m->k = k;
        m->v = v;
        m->cap = cap;
    }
    if (!m->cap || !key)
        return NULL;
    size_t j = (key * 0x9E3779B97F4A7C15ULL) & (m->cap - 1);
    while (m->k[j] && m->k[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->k[j]) {
        if (!insert)
            return NULL;
        m->k[j] = key;
        m->n++;
    }
    return &m->v[j];
}

static uint64_t trim_get(trim_map *m, uint64_t key)
{
    uint64_t *p = trim_slot(m, key, 0);
    return p ? *p : 0;
}

static int trim_put(trim_map *m, uint64_t key, uint64_t val)
{
    uint64_t *p = trim_slot(m, key, 1);
    if (!p)
        return key ? -1 : 0;
    *p = val;
    return 0;
}

static void trim_map_free(trim_map *m)
{
    free(m->k);
    free(m->v);
}

/* ------------------------------------------------------------ state */
#define TRIM_MAX_MEMS 4096

typedef struct trim_mem {
    uint64_t id, queue;       /* memory object, a queue of its context (recorded ids) */
    int image;
    size_t region[3];
    uint64_t size;
    tf_blobref data;          /* contents at the range start */
    tf_blobref after;         /* --kernel: contents after the launch */
    int have_after;
} trim_mem;

/* A DATA or DEVTIME item that came before its call's END (FORMAT.md,
 * "Record order"): written out once the call is. */
#define TRIM_MAX_EARLY 1024
typedef struct trim_early {
    uint64_t seq;
    int data;                 /* DATA, else DEVTIME */
    char key[64];
    tf_value value;           /* DATA: TF_BIN bytes are owned (bin) */
    void *bin;
    tf_devtime dt;
} trim_early;

typedef struct trim {
    rpl_session *s;
    tf_writer *w;
    uint64_t A, B, K;
    trim_map refs, death, kind, kargs, avail, seqmap, sigmap, blobs;
    uint64_t mems[TRIM_MAX_MEMS];
    size_t nmems;
    trim_mem state[TRIM_MAX_MEMS];
    size_t nstate;
    uint64_t next_seq, next_sig, kernel_queue;
    trim_early early[TRIM_MAX_EARLY];
    size_t nearly;
    rpl_trim_result *res;
    char *err;
    size_t err_cap;
} trim;

static int trim_err(trim *t, int st, const char *fmt, const char *a)
{
    snprintf(t->err, t->err_cap, fmt, a);
    return st;
}

static unsigned trim_kind_of_type(const char *type)
{
    static const struct { const char *t; unsigned k; } m[] = {
        {"cl_mem", RPL_OBJ_MEM}, {"cl_event", RPL_OBJ_EVENT}, {"cl_kernel", RPL_OBJ_KERNEL},
        {"cl_program", RPL_OBJ_PROGRAM}, {"cl_command_queue", RPL_OBJ_QUEUE}, {"cl_context", RPL_OBJ_CONTEXT},
        {"cl_sampler", RPL_OBJ_SAMPLER}, {"cl_device_id", RPL_OBJ_DEVICE}, {"cl_platform_id", RPL_OBJ_PLATFORM}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strstr(type, m[i].t))
            return m[i].k;
    return RPL_OBJ_UNKNOWN;
}

/* Calls fn(t, id, kind, param) for every object id a call refers to. */
typedef int (*trim_ref_fn)(trim *t, uint64_t id, unsigned kind, unsigned param);
static int trim_refs(trim *t, const tf_call *c, unsigned fn, trim_ref_fn cb)
{
    const tf_sig *sig = c->sig;
    for (unsigned i = 0; i < sig->nparams; i++) {
        const tf_param *p = &sig->params[i];
        const tf_value *v = &c->args[i];
        uint64_t id;
        if (!(p->dir & TF_DIR_IN))
            continue;
        if (p->kind == TF_KIND_HANDLE && tf_value_u64(v, &id) && id) {
            int st = cb(t, id, trim_kind_of_type(p->type), i);
            if (st)
                return st;
        } else if (p->kind == TF_KIND_ARRAY && v->type == TF_ARRAY && trim_kind_of_type(p->type)) {
            for (uint32_t k = 0; k < v->v.arr.n; k++)
                if (tf_value_u64(&v->v.arr.items[k], &id) && id) {
                    int st = cb(t, id, trim_kind_of_type(p->type), i);
                    if (st)
                        return st;
                }
        }
    }
    if (fn == RPL_FN_clSetKernelArg && c->args[3].type == TF_UINT && c->args[3].v.u)
        return cb(t, c->args[3].v.u, RPL_OBJ_UNKNOWN, 3);
    return 0;
}

/* ids a call creates: the returned handle, handle outputs */
typedef int (*trim_new_fn)(trim *t, uint64_t id, unsigned kind);
static int trim_created(trim *t, const tf_call *c, trim_new_fn cb)
{
    uint64_t id;
    unsigned rk = trim_kind_of_type(c->sig->ret_type);
    if (rk && tf_value_u64(&c->ret, &id) && id && cb(t, id, rk))
        return -1;
    for (unsigned i = 0; c->outs && i < c->sig->nparams; i++) {
        const tf_param *p = &c->sig->params[i];
        unsigned k = trim_kind_of_type(p->type);
        const tf_value *v = &c->outs[i];
        if (!k || !(p->dir & TF_DIR_OUT))
            continue;
        if (v->type == TF_ARRAY) {
            for (uint32_t j = 0; j < v->v.arr.n; j++)
                if (tf_value_u64(&v->v.arr.items[j], &id) && id && cb(t, id, k))
                    return -1;
        } else if (tf_value_u64(v, &id) && id && cb(t, id, k)) {
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ pass 1 */
static int trim_p1_new(trim *t, uint64_t id, unsigned kind)
{
    if (trim_get(&t->refs, id) == 0 && trim_put(&t->refs, id, 1) < 0)
        return -1;
    return trim_put(&t->kind, id, kind);
}

static int trim_add_mem(trim *t, uint64_t id)
{
    if (trim_get(&t->kind, id) != RPL_OBJ_MEM)
        return 0;
    for (size_t i = 0; i < t->nmems; i++)
        if (t->mems[i] == id)
            return 0;
    if (t->nmems == TRIM_MAX_MEMS)
        return -1;
    t->mems[t->nmems++] = id;
    return 0;
}

static int trim_p1_ref(trim *t, uint64_t id, unsigned kind, unsigned param)
{
    (void)kind;
    (void)param;
    return trim_add_mem(t, id);
}

static int trim_pass1(trim *t)
{
    rpl_session *s = t->s;
    tf_item it;
    tf_status ts;
    int in_kernel = 0;
    while ((ts = tf_reader_next(s->r, &it)) == TF_OK) {
        if (it.type != TF_ITEM_CALL)
            continue;
        const tf_call *c = &it.u.call;
        t->res->calls_in++;
        int fn = rpl_sig_fn(s, c->sig);
        if (fn < 0 || !c->complete)
            continue;
        if (trim_created(t, c, trim_p1_new) < 0)
            return trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory");
        uint64_t id = 0;
        tf_value_u64(&c->args[0], &id);
        if (rpl_is_cat((unsigned)fn, API_CAT_RETAIN) && trim_get(&t->refs, id)) {
            trim_put(&t->refs, id, trim_get(&t->refs, id) + 1);
        } else if (rpl_is_cat((unsigned)fn, API_CAT_RELEASE) && trim_get(&t->refs, id)) {
            uint64_t r = trim_get(&t->refs, id) - 1;
            trim_put(&t->refs, id, r ? r : (uint64_t)-1);   /* -1: dead (0 means unknown) */
            if (!r && !trim_get(&t->death, id))
                trim_put(&t->death, id, c->seq);
        }
        if (fn == RPL_FN_clSetKernelArg) {
            uint64_t idx = 0, v = 0;
            tf_value_u64(&c->args[1], &idx);
            if (c->args[3].type == TF_UINT)
                v = c->args[3].v.u;
            if (idx < 64 && trim_put(&t->kargs, id * 64 + idx + 1, v) < 0)
                return trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory");
        }
        /* the range (kernel mode: the launch, then until something may write) */
        int in_range = c->seq >= t->A && c->seq <= t->B;
        if (t->K) {
            if (c->seq == t->K) {
                if (fn != RPL_FN_clEnqueueNDRangeKernel && fn != RPL_FN_clEnqueueTask) {
                    char b[64];
                    snprintf(b, sizeof b, "%llu", (unsigned long long)t->K);
                    return trim_err(t, RPL_ERR_ARG, "call #%s is not a kernel launch", b);
                }
                in_kernel = 1;
                t->kernel_queue = id;
            } else if (in_kernel && c->seq > t->K && rpl_modifies((unsigned)fn, c)) {
                in_kernel = 0;
                t->B = c->seq - 1;
            }
            in_range = in_kernel && c->seq >= t->K;
        }
        if (!in_range)
            continue;
        if (trim_refs(t, c, (unsigned)fn, trim_p1_ref))
            return trim_err(t, RPL_ERR_LIMIT, "%s", "the range uses too many memory objects");
        if (fn == RPL_FN_clEnqueueNDRangeKernel || fn == RPL_FN_clEnqueueTask) {
            uint64_t k = 0;
            tf_value_u64(&c->args[1], &k);
            for (uint64_t i = 0; i < 64; i++)
                if (trim_add_mem(t, trim_get(&t->kargs, k * 64 + i + 1)) < 0)
                    return trim_err(t, RPL_ERR_LIMIT, "%s", "the range uses too many memory objects");
        }
    }
    if (ts < 0)
        return trim_err(t, RPL_ERR_TRACE, "%s", tf_reader_error(s->r));
    if (t->K && !t->kernel_queue) {
        char b[64];
        snprintf(b, sizeof b, "%llu", (unsigned long long)t->K);
        return trim_err(t, RPL_ERR_ARG, "the trace has no call #%s", b);
    }
    if (t->K && in_kernel)
        t->B = UINT64_MAX;
    return RPL_OK;
}

/* ------------------------------------------------------------ pass 2 */
/* Reads memory object @p m (live) into a new blob. */
static int trim_read(trim *t, trim_mem *m, cl_command_queue q, cl_mem mem, tf_blobref *out)
{
    const rpl_api_table *a = &t->s->api;
    size_t n = (size_t)m->size;
    if (n > t->s->o.max_memory)
        return trim_err(t, RPL_ERR_LIMIT, "%s", "a memory object is larger than the memory limit");
    char *buf = malloc(n ? n : 1);
    if (!buf)
        return trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory");
    size_t origin[3] = {0, 0, 0};
    cl_int e = m->image ? a->clEnqueueReadImage(q, mem, CL_TRUE, origin, m->region, 0, 0, buf, 0, NULL, NULL)
                        : a->clEnqueueReadBuffer(q, mem, CL_TRUE, 0, n, buf, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        free(buf);
        return trim_err(t, RPL_ERR_CL, "reading a memory object back failed (%s)",
                        rpl_cl_error_name(e) ? rpl_cl_error_name(e) : "error");
    }
    tf_status ts = tf_writer_blob(t->w, buf, n, out);
    free(buf);
    if (ts != TF_OK)
        return trim_err(t, RPL_ERR_TRACE, "%s", "writing the output failed");
    uint64_t key;   /* in the output already: trim_copy_blobs must not look for it in the input */
    memcpy(&key, out->hash, sizeof key);
    return trim_put(&t->blobs, key | 1, 1) < 0 ? trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory") : RPL_OK;
}

/* A queue of the object's context: the launch's queue, else any live one. */
static uint64_t trim_queue_for(trim *t, cl_mem mem, cl_command_queue *live)
{
    rpl_session *s = t->s;
    const rpl_api_table *a = &s->api;
    cl_context ctx = NULL;
    a->clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof ctx, &ctx, NULL);
    uint64_t best = 0;
    for (size_t i = 0; i < s->cap; i++) {
        rpl_obj *o = s->by_id[i];
        if (!o || (uintptr_t)o == 1 || o->kind != RPL_OBJ_QUEUE || !o->live || !trim_get(&t->avail, o->id))
            continue;
        cl_context qc = NULL;
        if (a->clGetCommandQueueInfo(o->live, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL) != CL_SUCCESS || qc != ctx)
            continue;
        if (!best || o->id == t->kernel_queue) {
            best = o->id;
            *live = o->live;
        }
    }
    return best;
}

static int trim_pass2(trim *t)
{
    rpl_session *s = t->s;
    s->pause_at = t->A;
    rpl_status st;
    while (!s->paused && (st = rpl_step(s, NULL, NULL)) == RPL_OK)
        ;
    if (!s->paused)
        return trim_err(t, st < 0 ? st : RPL_ERR_ARG, "%s", st < 0 ? rpl_error(s) : "the range is past the end of the trace");
    return RPL_OK;
}

/* The contents of every memory object the range uses and that lives at its start. */
static int trim_snapshot(trim *t)
{
    rpl_session *s = t->s;
    const rpl_api_table *a = &s->api;
    for (size_t i = 0; i < t->nmems; i++) {
        rpl_obj *o = rpl_obj_find(s, t->mems[i]);
        if (!o || !o->live || !trim_get(&t->avail, o->id))
            continue;   /* created inside the range */
        trim_mem *m = &t->state[t->nstate];
        memset(m, 0, sizeof *m);
        m->id = o->id;
        cl_mem_object_type type = 0;
        size_t size = 0;
        a->clGetMemObjectInfo(o->live, CL_MEM_TYPE, sizeof type, &type, NULL);
        a->clGetMemObjectInfo(o->live, CL_MEM_SIZE, sizeof size, &size, NULL);
        m->size = size;
        if (type != CL_MEM_OBJECT_BUFFER) {
            size_t w = 0, h = 0, d = 0, arr = 0, es = 0;
            a->clGetImageInfo(o->live, CL_IMAGE_WIDTH, sizeof w, &w, NULL);
            a->clGetImageInfo(o->live, CL_IMAGE_HEIGHT, sizeof h, &h, NULL);
            a->clGetImageInfo(o->live, CL_IMAGE_DEPTH, sizeof d, &d, NULL);
            a->clGetImageInfo(o->live, CL_IMAGE_ARRAY_SIZE, sizeof arr, &arr, NULL);
            a->clGetImageInfo(o->live, CL_IMAGE_ELEMENT_SIZE, sizeof es, &es, NULL);
            m->image = 1;
            m->region[0] = w;
            m->region[1] = type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? arr : h ? h : 1;
            m->region[2] = type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? arr : d ? d : 1;
            m->size = (uint64_t)w * m->region[1] * m->region[2] * es;
            if (type == CL_MEM_OBJECT_IMAGE1D_BUFFER)
                continue;   /* written through its buffer */
        }
        cl_command_queue q = NULL;
        m->queue = trim_queue_for(t, o->live, &q);
        if (!m->queue)
            continue;
        RPL_TRY(trim_read(t, m, q, o->live, &m->data));
        t->res->state_objects++;
        t->res->state_bytes += m->size;
        t->nstate++;
    }
    if (!t->K)
        return RPL_OK;
    /* --kernel: run the launch here and keep what it produced */
    tf_call *c = &s->paused_call;
    int fn = rpl_sig_fn(s, c->sig);
    if (fn < 0 || rpl_exec(s, c, (unsigned)fn, 0, 0) < 0)
        return trim_err(t, RPL_ERR_CL, "%s", rpl_error(s));
    rpl_obj *q = rpl_obj_find(s, t->kernel_queue);
    if (q && q->live)
        a->clFinish(q->live);
    for (size_t i = 0; i < t->nstate; i++) {
        trim_mem *m = &t->state[i];
        rpl_obj *o = rpl_obj_find(s, m->id), *mq = rpl_obj_find(s, m->queue);
        if (o && mq && o->live && mq->live) {
            RPL_TRY(trim_read(t, m, mq->live, o->live, &m->after));
            m->have_after = 1;
        }
    }
    return RPL_OK;
}

/* ------------------------------------------------------------ pass 3 */
/* Blobs a value refers to, copied into the output (before the record lock). */
static int trim_copy_blobs(trim *t, const tf_value *v)
{
    if (!v)
        return RPL_OK;
    if (v->type == TF_ARRAY || v->type == TF_MAP) {
        for (uint32_t i = 0; i < v->v.arr.n && v->type == TF_ARRAY; i++)
            RPL_TRY(trim_copy_blobs(t, &v->v.arr.items[i]));
        for (uint32_t i = 0; v->type == TF_MAP && i < v->v.map.n; i++)
            RPL_TRY(trim_copy_blobs(t, &v->v.map.vals[i]));
        return RPL_OK;
    }
    if (v->type != TF_BLOB)
        return RPL_OK;
    uint64_t key;
    memcpy(&key, v->v.blob.hash, sizeof key);
    key |= 1;
    if (trim_get(&t->blobs, key))
        return RPL_OK;
    void *p;
    size_t got;
    int st = rpl_fetch(t->s, v, 0, &p, &got);
    if (st < 0)
        return trim_err(t, st, "%s", rpl_error(t->s));
    /* under the input's reference, which the copied records use */
    tf_status ts = got == v->v.blob.size ? tf_writer_blob_ref(t->w, p, got, &v->v.blob) : TF_ERR_ARG;
    free(p);
    if (ts != TF_OK)
        return trim_err(t, RPL_ERR_TRACE, "%s", "writing the output failed");
    return trim_put(&t->blobs, key, 1) < 0 ? trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory") : RPL_OK;
}

static uint64_t trim_sig(trim *t, const tf_sig *sig, uint64_t in_id)
{
    uint64_t key = in_id ? in_id : ((uint64_t)1 << 40) + sig->id;
    uint64_t id = trim_get(&t->sigmap, key);
    if (id)
        return id;
    id = ++t->next_sig;
    trim_put(&t->sigmap, key, id);
    tf_sig out = *sig;
    out.id = (uint32_t)id;
    tf_write_sig(t->w, &out);   /* a failed writer is reported at close */
    return id;
}

/* Writes one call (BEGIN and END) with new number; @p args may replace c->args. */
static int trim_emit(trim *t, const tf_call *c, uint64_t sig_key, const tf_value *args)
{
    RPL_TRY(trim_copy_blobs(t, &(tf_value){.type = TF_ARRAY, .v.arr = {args, c->sig->nparams}}));
    if (c->outs)
        RPL_TRY(trim_copy_blobs(t, &(tf_value){.type = TF_ARRAY, .v.arr = {c->outs, c->sig->nparams}}));
    RPL_TRY(trim_copy_blobs(t, c->pre));
    RPL_TRY(trim_copy_blobs(t, c->post));
    uint64_t sid = trim_sig(t, c->sig, sig_key);
    uint64_t seq = ++t->next_seq;
    if (c->seq && trim_put(&t->seqmap, c->seq, seq) < 0)
        return trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory");
    tf_write_begin(t->w, seq, c->tid ? c->tid : 1, (uint32_t)sid, c->t_begin, args, c->sig->nparams, c->pre);
    if (!c->complete)
        return RPL_OK;
    tf_write_end(t->w, seq, c->t_end, &c->ret, c->outs, c->sig->nparams, c->post);
    t->res->calls_out++;
    return RPL_OK;
}

#define V_U(x) ((tf_value){.type = TF_UINT, .v.u = (x)})
#define V_B(x) ((tf_value){.type = TF_BOOL, .v.b = (x)})
#define V_NIL ((tf_value){.type = TF_NIL})

/* A blocking write (read, when @p read) of a whole memory object. */
static int trim_emit_transfer(trim *t, const trim_mem *m, int read)
{
    unsigned fn = m->image ? (read ? RPL_FN_clEnqueueReadImage : RPL_FN_clEnqueueWriteImage)
                           : (read ? RPL_FN_clEnqueueReadBuffer : RPL_FN_clEnqueueWriteBuffer);
    const tf_sig *sig = &rpl_gen_sigs[fn];
    tf_value data = {.type = TF_BLOB, .v.blob = read ? m->after : m->data};
    tf_value args[12], outs[12], origin[3], region[3];
    for (int i = 0; i < 12; i++)
        args[i] = outs[i] = V_NIL;
    for (int i = 0; i < 3; i++) {
        origin[i] = V_U(0);
        region[i] = V_U(m->region[i]);
    }
    args[0] = V_U(m->queue);
    args[1] = V_U(m->id);
    args[2] = V_U(CL_TRUE);
    unsigned p = 3;
    if (m->image) {
        args[3] = (tf_value){.type = TF_ARRAY, .v.arr = {origin, 3}};
        args[4] = (tf_value){.type = TF_ARRAY, .v.arr = {region, 3}};
        args[5] = V_U(0);
        args[6] = V_U(0);
        p = 7;
    } else {
        args[3] = V_U(0);
        args[4] = V_U(m->size);
        p = 5;
    }
    args[p] = read ? V_B(1) : data;
    if (read)
        outs[p] = data;
    args[p + 1] = V_U(0);
    args[p + 2] = V_NIL;
    args[p + 3] = V_B(0);
    tf_call c = {.seq = 0, .tid = 1, .sig = sig, .args = args, .complete = 1, .ret = (tf_value){.type = TF_INT},
                 .outs = outs};
    return trim_emit(t, &c, 0, args);
}

/* Is every object the call refers to in the output? */
static int trim_missing(trim *t, uint64_t id, unsigned kind, unsigned param)
{
    (void)kind;
    (void)param;
    return !trim_get(&t->avail, id);
}

static int trim_avail(trim *t, uint64_t id, unsigned kind)
{
    (void)kind;
    return trim_put(&t->avail, id, 1);
}

static int trim_dead_before(trim *t, uint64_t id, unsigned kind)
{
    (void)kind;
    uint64_t d = trim_get(&t->death, id);
    return d && d < t->A;
}

/* Writes a DATA (@p data) or DEVTIME item of output call @p ns. */
static int trim_emit_late(trim *t, uint64_t ns, int data, const char *key, const tf_value *v, const tf_devtime *d)
{
    if (data)
        RPL_TRY(trim_copy_blobs(t, v));
    if (data)
        tf_write_data(t->w, ns, key, v);
    else
        tf_write_devtime(t->w, ns, d->queued, d->submit, d->start, d->end);
    return RPL_OK;
}

static void trim_drop_early(trim *t, size_t i)
{
    free(t->early[i].bin);
    memmove(&t->early[i], &t->early[i + 1], (t->nearly - i - 1) * sizeof *t->early);
    t->nearly--;
}

/* Keeps an item that came before its call's END (FORMAT.md, "Record
 * order"). Scalars, blob references and byte strings are kept; a value of
 * any other shape is not data a recorder writes, and is dropped. */
static int trim_keep_early(trim *t, uint64_t seq, int data, const char *key, const tf_value *v, const tf_devtime *d)
{
    if (data && (v->type == TF_ARRAY || v->type == TF_MAP || v->type == TF_STR))
        return RPL_OK;
    if (t->nearly == TRIM_MAX_EARLY)
        trim_drop_early(t, 0);   /* bounded: the oldest goes */
    trim_early *x = &t->early[t->nearly];
    memset(x, 0, sizeof *x);
    x->seq = seq;
    x->data = data;
    if (data) {
        snprintf(x->key, sizeof x->key, "%s", key);
        x->value = *v;
        if (v->type == TF_BIN) {
            x->bin = malloc(v->v.str.len ? v->v.str.len : 1);
            if (!x->bin)
                return trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory");
            memcpy(x->bin, v->v.str.ptr, v->v.str.len);
            x->value.v.str.ptr = x->bin;
        }
    } else {
        x->dt = *d;
    }
    t->nearly++;
    return RPL_OK;
}

/* Call @p seq was delivered: its early items follow it when it was written
 * out, and are dropped when it was not. */
static int trim_flush_early(trim *t, uint64_t seq)
{
    uint64_t ns = trim_get(&t->seqmap, seq);
    for (size_t i = 0; i < t->nearly;) {
        trim_early *x = &t->early[i];
        if (x->seq != seq) {
            i++;
            continue;
        }
        if (ns)
            RPL_TRY(trim_emit_late(t, ns, x->data, x->key, &x->value, &x->dt));
        trim_drop_early(t, i);
    }
    return RPL_OK;
}

/* Range calls: wait lists lose the events of commands left out. */
static const tf_value *trim_fix_waits(trim *t, const tf_call *c, tf_value *args, tf_value *evs, int *drop)
{
    *drop = 0;
    const tf_sig *sig = c->sig;
    memcpy(args, c->args, sig->nparams * sizeof *args);
    for (unsigned i = 0; i < sig->nparams; i++) {
        const tf_param *p = &sig->params[i];
        if (p->kind != TF_KIND_ARRAY || !strstr(p->type, "cl_event") || args[i].type != TF_ARRAY)
            continue;
        uint32_t n = 0;
        for (uint32_t k = 0; k < args[i].v.arr.n && k < 4096; k++) {
            uint64_t id = 0;
            if (tf_value_u64(&args[i].v.arr.items[k], &id) && trim_get(&t->avail, id))
                evs[n++] = args[i].v.arr.items[k];
        }
        if (n == args[i].v.arr.n)
            continue;
        args[i] = n ? (tf_value){.type = TF_ARRAY, .v.arr = {evs, n}} : V_NIL;
        if (i > 0 && sig->params[i - 1].kind == TF_KIND_VALUE)
            args[i - 1] = V_U(n);   /* num_events_in_wait_list / num_events */
        if (!n && !strncmp(sig->name, "clWaitForEvents", 15))
            *drop = 1;
    }
    return args;
}

static int trim_pass3(trim *t, const char *in_path)
{
    rpl_session *s = t->s;
    const tf_value *env = tf_reader_env(s->r);
    tf_write_env(t->w, env);
    /* platforms and devices of the environment exist from the start */
    const tf_value *plats = env ? tf_map_get(env, "platforms") : NULL;
    for (uint32_t i = 0; plats && plats->type == TF_ARRAY && i < plats->v.arr.n; i++) {
        uint64_t id;
        if (tf_value_u64(tf_map_get(&plats->v.arr.items[i], "id"), &id))
            trim_put(&t->avail, id, 1);
        const tf_value *d = tf_map_get(&plats->v.arr.items[i], "devices");
        for (uint32_t k = 0; d && d->type == TF_ARRAY && k < d->v.arr.n; k++)
            if (tf_value_u64(tf_map_get(&d->v.arr.items[k], "id"), &id))
                trim_put(&t->avail, id, 1);
    }
    char note[1200];
    if (t->K)
        snprintf(note, sizeof note, "trimmed by clrr trim from %.1000s: kernel launch #%llu", in_path,
                 (unsigned long long)t->K);
    else
        snprintf(note, sizeof note, "trimmed by clrr trim from %.1000s: calls #%llu to #%llu", in_path,
                 (unsigned long long)t->A, (unsigned long long)t->B);
    tf_write_note(t->w, 0, 0, note);

    if (tf_reader_rewind(s->r) != TF_OK)
        return trim_err(t, RPL_ERR_TRACE, "%s", "rewinding the trace failed");
    tf_item it;
    tf_status ts;
    int state_done = 0;
    tf_value *args = NULL, *evs = NULL;
    int st = RPL_OK;
    args = calloc(64, sizeof *args);
    evs = calloc(4096, sizeof *evs);
    if (!args || !evs) {
        free(args);
        free(evs);
        return trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory");
    }
    uint64_t ended = 0;   /* the call just delivered: its early items follow it */
    while (st == RPL_OK && (ts = tf_reader_next(s->r, &it)) == TF_OK) {
        if (ended && (st = trim_flush_early(t, ended)) < 0)
            break;
        ended = 0;
        if (it.type == TF_ITEM_DATA || it.type == TF_ITEM_DEVTIME) {
            int data = it.type == TF_ITEM_DATA;
            uint64_t seq = data ? it.u.data.seq : it.u.devtime.seq;
            uint64_t ns = trim_get(&t->seqmap, seq);
            if (ns)
                st = trim_emit_late(t, ns, data, data ? it.u.data.key : NULL, data ? &it.u.data.value : NULL,
                                    data ? NULL : &it.u.devtime);
            else if (tf_reader_call_open(s->r, seq))
                st = trim_keep_early(t, seq, data, data ? it.u.data.key : NULL, data ? &it.u.data.value : NULL,
                                     data ? NULL : &it.u.devtime);
            continue;
        }
        if (it.type != TF_ITEM_CALL)
            continue;
        const tf_call *c = &it.u.call;
        ended = c->seq;
        int fn = rpl_sig_fn(s, c->sig);
        if (fn < 0 || c->sig->nparams > 64)
            continue;
        if (c->seq > t->B)
            continue;
        if (c->seq < t->A) {
            if (!c->complete || rpl_is_cat((unsigned)fn, API_CAT_ENQUEUE) || rpl_is_cat((unsigned)fn, API_CAT_MAP)
                || rpl_is_cat((unsigned)fn, API_CAT_SYNC))
                continue;
            if (trim_refs(t, c, (unsigned)fn, trim_missing) || trim_created(t, c, trim_dead_before))
                continue;
            /* contents written at the range start need no initial data */
            memcpy(args, c->args, c->sig->nparams * sizeof *args);
            uint64_t rid = 0;
            tf_value_u64(&c->ret, &rid);
            for (unsigned i = 0; i < c->sig->nparams && rid; i++) {
                if (strcmp(c->sig->params[i].name, "host_ptr") || (args[i].type != TF_BLOB && args[i].type != TF_BIN))
                    continue;
                for (size_t k = 0; k < t->nstate; k++)
                    if (t->state[k].id == rid)
                        args[i] = V_B(0);
            }
            for (unsigned i = 0; i < c->sig->nparams; i++)   /* ... unless it is the host's memory */
                if (!strcmp(c->sig->params[i].name, "flags")) {
                    uint64_t f = 0;
                    tf_value_u64(&c->args[i], &f);
                    if (f & CL_MEM_USE_HOST_PTR)
                        memcpy(args, c->args, c->sig->nparams * sizeof *args);
                }
            st = trim_emit(t, c, c->sig->id, args);
            if (st == RPL_OK && trim_created(t, c, trim_avail) < 0)
                st = trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory");
            continue;
        }
        if (!state_done) {
            state_done = 1;
            for (size_t k = 0; k < t->nstate && st == RPL_OK; k++)
                st = trim_emit_transfer(t, &t->state[k], 0);
            t->res->first_out = t->next_seq + 1;
            if (st < 0)
                break;
        }
        int drop;
        const tf_value *a = trim_fix_waits(t, c, args, evs, &drop);
        if (drop || (rpl_is_cat((unsigned)fn, API_CAT_RELEASE) && trim_refs(t, c, (unsigned)fn, trim_missing)))
            continue;
        st = trim_emit(t, c, c->sig->id, a);
        if (st == RPL_OK && trim_created(t, c, trim_avail) < 0)
            st = trim_err(t, RPL_ERR_NOMEM, "%s", "out of memory");
        if (st == RPL_OK && t->K && c->seq == t->K) {
            t->res->kernel_out = t->next_seq;
            for (size_t k = 0; k < t->nstate && st == RPL_OK; k++)
                if (t->state[k].have_after)
                    st = trim_emit_transfer(t, &t->state[k], 1);
        }
    }
    if (st == RPL_OK && ended)
        st = trim_flush_early(t, ended);
    free(args);
    free(evs);
    if (st < 0)
        return st;
    if (ts < 0)
        return trim_err(t, RPL_ERR_TRACE, "%s", tf_reader_error(s->r));
    return RPL_OK;
}

rpl_status rpl_trim(const char *in_path, const char *out_path, const rpl_opts *o, rpl_trim_result *res, char *err,
                    size_t err_cap)
{
    trim *t = calloc(1, sizeof *t);
    rpl_trim_result dummy;
    if (!res)
        res = &dummy;
    memset(res, 0, sizeof *res);
    if (!t) {
        snprintf(err, err_cap, "out of memory");
        return RPL_ERR_NOMEM;
    }
    t->res = res;
    t->err = err;
    t->err_cap = err_cap;
    err[0] = 0;
    t->K = o->kernel;
    t->A = o->kernel ? o->kernel : o->first ? o->first : 1;
    t->B = o->kernel ? UINT64_MAX : o->last ? o->last : UINT64_MAX;
    rpl_opts so = *o;
    so.first = so.last = so.kernel = 0;
    so.verify = 0;
    so.loop = 1;
    so.exact_calls = 0;
    so.timing = 0;
    so.on_mismatch = NULL;
    so.on_time = NULL;
    int st = rpl_open(&t->s, in_path, &so);
    if (st != RPL_OK) {
        snprintf(err, err_cap, "%s", rpl_open_error());
        free(t);
        return (rpl_status)st;
    }
    st = trim_pass1(t);
    if (st == RPL_OK && tf_reader_rewind(t->s->r) != TF_OK)
        st = trim_err(t, RPL_ERR_TRACE, "%s", "rewinding the trace failed");
    struct stat si, so_;
    if (st == RPL_OK && stat(in_path, &si) == 0 && stat(out_path, &so_) == 0 && si.st_dev == so_.st_dev &&
        si.st_ino == so_.st_ino)   /* opening it for writing would truncate the input */
        st = trim_err(t, RPL_ERR_ARG, "%s: the output is the input trace", out_path);
    if (st == RPL_OK && tf_writer_open(&t->w, out_path, NULL) != TF_OK) {
        snprintf(t->err, t->err_cap, "cannot write %s: %s", out_path, strerror(errno));
        st = RPL_ERR_ARG;
    }
    if (st == RPL_OK)
        st = trim_pass2(t);
    if (st == RPL_OK) {
        /* objects alive at the range start, as pass 3 will rebuild them */
        for (size_t i = 0; i < t->s->cap; i++) {
            rpl_obj *ob = t->s->by_id[i];
            if (ob && (uintptr_t)ob != 1 && ob->live)
                trim_put(&t->avail, ob->id, 1);
        }
        st = trim_snapshot(t);
        trim_map_free(&t->avail);
        memset(&t->avail, 0, sizeof t->avail);
    }
    if (st == RPL_OK)
        st = trim_pass3(t, in_path);
    if (t->w) {
        tf_status ts = tf_writer_close(t->w);
        struct stat sb;
        if (stat(out_path, &sb) == 0)
            res->file_bytes = (uint64_t)sb.st_size;
        if (st == RPL_OK && ts != TF_OK)
            st = trim_err(t, RPL_ERR_TRACE, "writing %s failed", out_path);
        if (st != RPL_OK)
            remove(out_path);
    }
    rpl_close(t->s);
    while (t->nearly)
        trim_drop_early(t, t->nearly - 1);
    trim_map *maps[] = {&t->refs, &t->death, &t->kind, &t->kargs, &t->avail, &t->seqmap, &t->sigmap, &t->blobs};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        trim_map_free(maps[i]);
    free(t);
    return (rpl_status)st;
}
