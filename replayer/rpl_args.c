/* rpl_args.c — what the generated replay functions call: recorded
 * arguments decoded into C values (handles mapped to live objects, data
 * fetched from the blob store), results compared with the recording,
 * returned objects bound. Every value comes from an untrusted trace: kinds,
 * counts and sizes are checked, allocations are bounded. */
#include "replayer/rpl_int.h"
#include "trace-format/tf_len.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RPL_MAX_ELEMS (1u << 20)

typedef struct rpl_chunk {
    struct rpl_chunk *next;
    size_t size;
    void *pin;                /* in a pinned block (rpl_pin.c), given back when freed; NULL: malloc'ed */
    max_align_t data[];
} rpl_chunk;

static void rpl_chunk_free(rpl_chunk *c)
{
    if (c->pin)
        rpl_pin_give(c->pin);
    else
        free(c);
}

/* Transfers of at least this many bytes on a queue with lanes use pinned
 * memory (below it the driver's own copy costs no more). */
#define RPL_PIN_MIN_BYTES 4096

/* A chunk of @p len bytes in pinned memory for the call's transfer, when
 * its queue (argument 0) has lanes; else NULL. Not zeroed. */
static rpl_chunk *rpl_chunk_pinned(rpl_cx *x, size_t len)
{
    if (!x->s->nsq || len < RPL_PIN_MIN_BYTES || len > SIZE_MAX - sizeof(rpl_chunk))
        return NULL;
    rpl_obj *q = rpl_obj_find(x->s, rpl_arg_id(x, 0));
    void *pin = NULL;
    rpl_chunk *c = q && rpl_sched_lanes(x->s, q->live) ? rpl_pin_take(x->s, q->live, sizeof *c + len, &pin) : NULL;
    if (!c)
        return NULL;
    c->next = NULL;
    c->size = len;
    c->pin = pin;
    return c;
}

/* The plan's staging (rpl_plan_hook.stage_min) for the transfers of queue
 * @p q, asked once per queue: the least bytes staged, 0 none. */
static uint64_t rpl_stage_min(rpl_session *s, rpl_obj *q, size_t len)
{
    if (!q || q->kind != RPL_OBJ_QUEUE)
        return 0;
    int first = 0;   /* the probe's: the first large transfer's device */
    if (len >= RPL_STAGE_PROBE) {
        first = !s->sum.large_transfers++ && s->o.probe_stage && !s->o.exact_calls;
        s->sum.large_bytes += len;
    }
    int ask = !q->stage_asked && s->o.plan && s->o.plan->stage_min;
    if (!ask && !first)
        return q->stage_min;   /* driver queries only where the plan or the probe needs them */
    cl_device_id dev = NULL;
    char name[257], drv[257];
    q->stage_asked |= ask;
    if (!rpl_queue_device(&s->api, q->live, &dev, name, sizeof name, drv, sizeof drv))
        return q->stage_min;
    if (ask)
        q->stage_min = s->o.plan->stage_min(s->o.plan->user, name, drv);
    if (first) {
        cl_bool uni = CL_FALSE;
        memcpy(s->sum.large_device, name, sizeof name);
        memcpy(s->sum.large_driver, drv, sizeof drv);
        s->sum.large_unified = s->api.clGetDeviceInfo(dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof uni, &uni, NULL) ==
                               CL_SUCCESS && uni;
    }
    return q->stage_min;
}

/* A pinned chunk of @p len bytes for the call's staged transfer (the
 * plan's staging on its queue's device, @p len at least its least bytes),
 * counted, the time taking it took in x->stage_ns; NULL when the plan
 * stages nothing here or no block is left. */
static rpl_chunk *rpl_chunk_staged(rpl_cx *x, size_t len)
{
    rpl_session *s = x->s;
    rpl_obj *q = rpl_obj_find(s, rpl_arg_id(x, 0));
    uint64_t min = rpl_stage_min(s, q, len);
    if (!min || len < min || len > SIZE_MAX - sizeof(rpl_chunk))
        return NULL;
    /* a block made here pins memory (milliseconds per hundred MiB): the
     * layer pins its blocks in the application's run too (at buffer
     * creation), so that is counted in the call's time as well */
    void *pin = NULL;
    int64_t t0 = rpl_clock_ns();
    rpl_chunk *c = rpl_pin_take_staged(s, q->live, sizeof *c, len, &pin);
    x->stage_ns += rpl_clock_ns() - t0;
    if (!c) {
        s->sum.plan_stage_unpinned++;
        return NULL;
    }
    c->next = NULL;
    c->size = len;
    c->pin = pin;
    s->sum.plan_staged++;
    s->sum.plan_staged_bytes += len;
    return c;
}

int rpl_stage_buffer(rpl_cx *x, cl_context ctx, size_t size)
{
    rpl_session *s = x->s;
    rpl_obj *co = rpl_obj_find(s, rpl_arg_id(x, 0));
    if (!ctx || !co || !s->o.plan || !s->o.plan->stage_min || size < 4096)
        return RPL_OK;
    if (!co->stage_asked) {   /* the context's first device the plan stages on, as the layer's */
        cl_device_id devs[16];
        size_t bytes = 0;
        co->stage_asked = 1;
        if (s->api.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs, &bytes) != CL_SUCCESS)
            bytes = 0;
        for (size_t i = 0; i < bytes / sizeof *devs && !co->stage_min; i++) {
            char name[257], drv[257];
            if (rpl_device_names(&s->api, devs[i], name, sizeof name, drv, sizeof drv) &&
                (co->stage_min = s->o.plan->stage_min(s->o.plan->user, name, drv)) != 0)
                co->stage_dev = devs[i];
        }
    }
    if (!co->stage_min || size < co->stage_min || size > SIZE_MAX - sizeof(rpl_chunk))
        return RPL_OK;
    int64_t t0 = rpl_clock_ns();
    int made = rpl_pin_ahead(s, ctx, co->stage_dev, sizeof(rpl_chunk), size);
    x->stage_ns += rpl_clock_ns() - t0;
    if (made < 0)
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    s->sum.plan_stage_ahead += (unsigned)made;
    return RPL_OK;
}

int rpl_stage_out(rpl_cx *x)
{
    rpl_session *s = x->s;
    size_t n = x->stage_out;
    x->stage_out = 0;
    if (!x->readback || !n)
        return RPL_OK;
    if (s->stage_sink_cap < n) {   /* the application's memory is there already: made and touched untimed */
        unsigned char *d = realloc(s->stage_sink, n);
        if (!d)
            return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory (%zu bytes)", n);
        memset(d, 0, n);
        s->stage_sink = d;
        s->stage_sink_cap = n;
    }
    int64_t t0 = rpl_clock_ns();
    memcpy(s->stage_sink, x->readback, n);
    x->host_ns += rpl_clock_ns() - t0;
    return RPL_OK;
}

void rpl_noop_callback(void)
{
}

static const char *rpl_pname(rpl_cx *x, unsigned i)
{
    return i < x->c->sig->nparams ? x->c->sig->params[i].name : "?";
}

static const tf_value *rpl_arg(rpl_cx *x, unsigned i)
{
    static const tf_value nil = {.type = TF_NIL};
    return i < x->c->sig->nparams && x->c->args ? &x->c->args[i] : &nil;
}

static int rpl_bad(rpl_cx *x, unsigned i, const char *what)
{
    return rpl_call_error(x, RPL_ERR_INVALID, "argument '%s': %s", rpl_pname(x, i), what);
}

void *rpl_scratch(rpl_cx *x, size_t n)
{
    const rpl_opts *o = rpl_session_opts(x->s);
    if (n > o->max_memory || n > SIZE_MAX - sizeof(rpl_chunk)) {
        rpl_call_error(x, RPL_ERR_LIMIT, "needs %zu bytes at once, over the memory limit (%zu)", n,
                       o->max_memory);
        return NULL;
    }
    rpl_chunk *c = calloc(1, sizeof *c + (n ? n : 1));
    if (!c) {
        rpl_call_error(x, RPL_ERR_NOMEM, "out of memory (%zu bytes)", n);
        return NULL;
    }
    c->size = n;
    c->next = x->scratch;
    x->scratch = c;
    return c->data;
}

/* Read-back buffers are chunks too, so that one can join a call's scratch
 * list (and be held until its command completes). */
void *rpl_block_alloc(size_t len)
{
    rpl_chunk *c = calloc(1, sizeof *c + (len ? len : 1));
    if (!c)
        return NULL;
    c->size = len;
    return c->data;
}

static rpl_chunk *rpl_block_chunk(void *data)
{
    return (rpl_chunk *)((char *)data - offsetof(rpl_chunk, data));
}

void rpl_block_free(void *data)
{
    if (data)
        rpl_chunk_free(rpl_block_chunk(data));
}

void rpl_block_to_scratch(rpl_cx *x, void *data)
{
    rpl_chunk *c = rpl_block_chunk(data);
    c->next = x->scratch;
    x->scratch = c;
}

void rpl_scratch_list_free(void *chunks)
{
    for (rpl_chunk *c = chunks, *n; c; c = n) {
        n = c->next;
        rpl_chunk_free(c);
    }
}

void rpl_scratch_free(rpl_cx *x)
{
    rpl_scratch_list_free(x->scratch);
    x->scratch = NULL;
    rpl_block_free(x->readback);
    x->readback = NULL;
    free(x->host_pending);
    x->host_pending = NULL;
}

uint64_t rpl_arg_id(rpl_cx *x, unsigned i)
{
    uint64_t id = 0;
    tf_value_u64(rpl_arg(x, i), &id);
    return id;
}

int rpl_in_isnil(rpl_cx *x, unsigned i)
{
    return rpl_arg(x, i)->type == TF_NIL;
}

int rpl_in_present(rpl_cx *x, unsigned i)
{
    const tf_value *v = rpl_arg(x, i);
    return (v->type == TF_BOOL && v->v.b) || (v->type != TF_BOOL && v->type != TF_NIL);
}

int rpl_in_u64(rpl_cx *x, unsigned i, uint64_t *out)
{
    const tf_value *v = rpl_arg(x, i);
    switch (v->type) {
    case TF_UINT: *out = v->v.u; return RPL_OK;
    case TF_INT: *out = (uint64_t)v->v.i; return RPL_OK;
    case TF_BOOL: *out = (uint64_t)v->v.b; return RPL_OK;
    case TF_NIL: *out = 0; return RPL_OK;
    default: return rpl_bad(x, i, "expected an integer");
    }
}

int rpl_in_f64(rpl_cx *x, unsigned i, double *out)
{
    const tf_value *v = rpl_arg(x, i);
    switch (v->type) {
    case TF_F64: *out = v->v.f; return RPL_OK;
    case TF_UINT: *out = (double)v->v.u; return RPL_OK;
    case TF_INT: *out = (double)v->v.i; return RPL_OK;
    default: return rpl_bad(x, i, "expected a number");
    }
}

/* A release (clRelease*, object in argument 0) of an object that no
 * replayed call created is not an error of the trace: the object came from a
 * call that was not replayed (past a --range or --kernel, where only
 * releases run), or from a create that failed and still returned a handle
 * (PoCL's clCreateContextFromType answers CL_DEVICE_NOT_FOUND with a context
 * that clinfo then releases). The release is made with NULL (exact-calls
 * mode makes every recorded call) and its failure counts as a call_diff. */
static int rpl_release_of_unknown(rpl_cx *x, unsigned i)
{
    if (i != 0 || !rpl_is_cat(x->fn, API_CAT_RELEASE))
        return 0;
    uint64_t id = rpl_arg_id(x, 0);
    rpl_obj *o = id ? rpl_obj_find(x->s, id) : NULL;
    return id && (!o || !o->live);
}

/* The object kind parameter @p i takes ("cl_kernel", "const cl_event *"),
 * RPL_OBJ_UNKNOWN when not one of these. */
static unsigned rpl_param_kind(rpl_cx *x, unsigned i)
{
    static const struct { const char *t; unsigned k; } kinds[] = {
        {"cl_platform_id", RPL_OBJ_PLATFORM}, {"cl_device_id", RPL_OBJ_DEVICE}, {"cl_context", RPL_OBJ_CONTEXT},
        {"cl_command_queue", RPL_OBJ_QUEUE},  {"cl_mem", RPL_OBJ_MEM},          {"cl_program", RPL_OBJ_PROGRAM},
        {"cl_kernel", RPL_OBJ_KERNEL},        {"cl_event", RPL_OBJ_EVENT},      {"cl_sampler", RPL_OBJ_SAMPLER},
    };
    if (i >= x->c->sig->nparams || !x->c->sig->params[i].type)
        return RPL_OBJ_UNKNOWN;
    const char *t = x->c->sig->params[i].type;
    if (!strncmp(t, "const ", 6))
        t += 6;
    size_t n = strcspn(t, " *");
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (strlen(kinds[k].t) == n && !strncmp(t, kinds[k].t, n))
            return kinds[k].k;
    return RPL_OBJ_UNKNOWN;
}

static int rpl_lookup(rpl_cx *x, unsigned i, uint64_t id, void **h)
{
    if (!id) {
        *h = NULL;
        return RPL_OK;
    }
    rpl_obj *o = rpl_obj_find(x->s, id);
    if ((!o || !o->live) && rpl_release_of_unknown(x, i)) {
        *h = NULL;   /* nothing to release: the runtime says so, rpl_result() accepts it */
        return RPL_OK;
    }
    if (!o || !o->live)
        return rpl_call_error(x, RPL_ERR_INVALID, "argument '%s' refers to #%llu, which no replayed call created",
                              rpl_pname(x, i), (unsigned long long)id);
    /* an object of another kind would reach the driver as this one (PoCL
     * crashes on a buffer released as a kernel) */
    unsigned want = rpl_param_kind(x, i);
    if (want != RPL_OBJ_UNKNOWN && o->kind != RPL_OBJ_UNKNOWN && o->kind != want)
        return rpl_call_error(x, RPL_ERR_INVALID, "argument '%s' refers to #%llu, an object of another kind",
                              rpl_pname(x, i), (unsigned long long)id);
    *h = o->live;
    return RPL_OK;
}

int rpl_in_handle(rpl_cx *x, unsigned i, void **h)
{
    const tf_value *v = rpl_arg(x, i);
    uint64_t id = 0;
    if (v->type != TF_NIL && !tf_value_u64(v, &id))
        return rpl_bad(x, i, "expected an object id");
    return rpl_lookup(x, i, id, h);
}

static char *rpl_strdup_v(rpl_cx *x, const tf_value *v)
{
    char *s = rpl_scratch(x, (size_t)v->v.str.len + 1);
    if (s)
        memcpy(s, v->v.str.ptr, v->v.str.len);
    return s;
}

int rpl_in_str(rpl_cx *x, unsigned i, const char **out)
{
    const tf_value *v = rpl_arg(x, i);
    *out = NULL;
    if (v->type == TF_NIL)
        return RPL_OK;
    if (v->type != TF_STR)
        return rpl_bad(x, i, "expected a string");
    *out = rpl_strdup_v(x, v);
    return *out ? RPL_OK : RPL_ERR_NOMEM;
}

static void rpl_put_int(void *dst, size_t size, uint64_t u)
{
    switch (size) {
    case 1: { uint8_t t = (uint8_t)u; memcpy(dst, &t, 1); break; }
    case 2: { uint16_t t = (uint16_t)u; memcpy(dst, &t, 2); break; }
    case 4: { uint32_t t = (uint32_t)u; memcpy(dst, &t, 4); break; }
    default: memcpy(dst, &u, size < 8 ? size : 8); break;
    }
}

int rpl_in_array(rpl_cx *x, unsigned i, int el, size_t elem_size, int elem_signed, void **arr)
{
    (void)elem_signed;
    const tf_value *v = rpl_arg(x, i);
    *arr = NULL;
    if (v->type == TF_NIL)
        return RPL_OK;
    if (v->type != TF_ARRAY)
        return rpl_bad(x, i, "expected an array");
    uint32_t n = v->v.arr.n;
    if (n > RPL_MAX_ELEMS)
        return rpl_bad(x, i, "array too long");
    char *a = rpl_scratch(x, (size_t)(n ? n : 1) * elem_size);
    if (!a)
        return RPL_ERR_NOMEM;
    for (uint32_t k = 0; k < n; k++) {
        const tf_value *e = &v->v.arr.items[k];
        char *dst = a + (size_t)k * elem_size;
        uint64_t u = 0;
        void *p = NULL;
        switch (el) {
        case RPL_EL_VALUE:
            if (e->type == TF_INT)
                u = (uint64_t)e->v.i;
            else if (!tf_value_u64(e, &u))
                return rpl_bad(x, i, "array element is not an integer");
            rpl_put_int(dst, elem_size, u);
            break;
        case RPL_EL_HANDLE:
            if (e->type != TF_NIL && !tf_value_u64(e, &u))
                return rpl_bad(x, i, "array element is not an object id");
            RPL_TRY(rpl_lookup(x, i, u, &p));
            memcpy(dst, &p, sizeof p < elem_size ? sizeof p : elem_size);
            break;
        case RPL_EL_STRING:
            if (e->type == TF_STR && !(p = rpl_strdup_v(x, e)))
                return RPL_ERR_NOMEM;
            memcpy(dst, &p, sizeof p);
            break;
        case RPL_EL_PTR:
            if (!tf_value_u64(e, &u))
                return rpl_bad(x, i, "array element is not an address");
            if (u && !(p = rpl_addr(x->s, u)))
                return rpl_bad(x, i, "address not inside any mapped region or SVM allocation");
            memcpy(dst, &p, sizeof p);
            break;
        default:
            return rpl_bad(x, i, "unsupported array");
        }
    }
    *arr = a;
    return RPL_OK;
}

int rpl_in_count(rpl_cx *x, unsigned i, uint64_t count)
{
    const tf_value *v = rpl_arg(x, i);
    if (v->type != TF_ARRAY || count <= v->v.arr.n)
        return RPL_OK;
    char what[96];
    snprintf(what, sizeof what, "holds %u elements, but the call passes a count of %llu", v->v.arr.n,
             (unsigned long long)count);
    return rpl_bad(x, i, what);
}

/* The bytes data value @p v holds (bin or blob): *size, and *n = the larger
 * of it and @p len. @return 1, 0 when @p v is not data, or an error (over
 * the memory limit). */
static int rpl_data_size(rpl_session *s, const tf_value *v, size_t len, uint64_t *size, size_t *n)
{
    if (v->type == TF_BIN)
        *size = v->v.str.len;
    else if (v->type == TF_BLOB)
        *size = v->v.blob.size;
    else
        return 0;
    const rpl_opts *o = rpl_session_opts(s);
    *n = *size > len ? (size_t)*size : len;
    if (*size > o->max_memory)
        return rpl_set_error(s, RPL_ERR_LIMIT, "data of %llu bytes is over the memory limit (%zu)",
                             (unsigned long long)*size, o->max_memory);
    if (len == TF_LEN_OVERFLOW)   /* (tf_len.h: a region or pitches past SIZE_MAX) */
        return rpl_set_error(s, RPL_ERR_LIMIT, "the call's sizes and pitches span more bytes of host memory "
                             "than an address space holds (the recorded data is %llu bytes)", (unsigned long long)*size);
    if (*n > o->max_memory)
        return rpl_set_error(s, RPL_ERR_LIMIT, "the call's sizes need %zu bytes of host memory, over the memory "
                             "limit (%zu; the recorded data is %llu bytes)", len, o->max_memory,
                             (unsigned long long)*size);
    return 1;
}

/* Decodes data value @p v (@p size bytes, rpl_data_size) into @p d. */
static int rpl_data_to(rpl_session *s, const tf_value *v, void *d, uint64_t size)
{
    if (v->type == TF_BIN) {
        memcpy(d, v->v.str.ptr, (size_t)size);
        return RPL_OK;
    }
    tf_status st = tf_reader_blob(s->r, &v->v.blob, 0, d, (size_t)size);
    if (st != TF_OK)
        return rpl_set_error(s, RPL_ERR_TRACE, "blob of %llu bytes: %s%s%s", (unsigned long long)size,
                             tf_strerror(st), tf_reader_error(s->r)[0] ? ": " : "", tf_reader_error(s->r));
    return RPL_OK;
}

int rpl_fetch(rpl_session *s, const tf_value *v, size_t len, void **out, size_t *got)
{
    *out = NULL;
    *got = 0;
    uint64_t size;
    size_t n;
    int st = rpl_data_size(s, v, len, &size, &n);
    if (st <= 0)
        return st;
    char *p = calloc(1, n ? n : 1);
    if (!p)
        return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory (%zu bytes)", n);
    if ((st = rpl_data_to(s, v, p, size)) < 0) {
        free(p);
        return st;
    }
    *out = p;
    *got = (size_t)size;
    return 1;
}

int rpl_in_blob(rpl_cx *x, unsigned i, size_t len, const void **out)
{
    const tf_value *v = rpl_arg(x, i);
    *out = NULL;
    if (v->type == TF_NIL)
        return RPL_OK;
    if (v->type == TF_BOOL) {   /* not captured: zeros stand in */
        if (len > rpl_session_opts(x->s)->max_memory)
            return rpl_bad(x, i, "length over the memory limit");
        *out = rpl_scratch(x, len);
        return *out ? RPL_OK : RPL_ERR_NOMEM;
    }
    if (v->type == TF_UINT)     /* an address (host_ptr without data) */
        return RPL_OK;
    if (v->type != TF_BIN && v->type != TF_BLOB)
        return rpl_bad(x, i, "expected data");
    uint64_t size;
    size_t n;
    int st = rpl_data_size(x->s, v, len, &size, &n);
    if (st < 0)
        return rpl_fail(x, st);
    /* decoded straight into a chunk of the call's scratch list (a write on a
     * queue with lanes: in pinned memory, zeroed past the data here; else
     * calloc'ed) */
    rpl_chunk *c = x->fn == RPL_FN_clEnqueueWriteBuffer ? rpl_chunk_pinned(x, n) : NULL;
    if (c) {
        c->next = x->scratch;
        x->scratch = c;
        memset((char *)c->data + size, 0, n - (size_t)size);
    }
    char *d = c ? (char *)c->data : rpl_scratch(x, n);
    if (!d)
        return RPL_ERR_NOMEM;
    if ((st = rpl_data_to(x->s, v, d, size)) < 0)
        return rpl_fail(x, st);
    rpl_count_bytes_in(x->s, (size_t)size);
    /* a plan's staging: the bytes copied into pinned memory at the call, as
     * the layer's stager copies the application's (the copy timed with it) */
    rpl_chunk *sc = !c && x->fn == RPL_FN_clEnqueueWriteBuffer ? rpl_chunk_staged(x, n) : NULL;
    if (sc) {
        sc->next = x->scratch;
        x->scratch = sc;
        int64_t t0 = rpl_clock_ns();
        memcpy(sc->data, d, n);
        x->stage_ns += rpl_clock_ns() - t0;
        d = (char *)sc->data;
    }
    *out = d;
    return RPL_OK;
}

int rpl_in_props(rpl_cx *x, unsigned i, int flavour, void **out)
{
    const tf_value *v = rpl_arg(x, i);
    *out = NULL;
    if (v->type == TF_NIL)
        return RPL_OK;
    if (v->type != TF_ARRAY || v->v.arr.n > 256)
        return rpl_bad(x, i, "expected a property list");
    uint32_t n = v->v.arr.n;
    /* two zeros after it: a last name with no value still ends the list */
    uint64_t *p = rpl_scratch(x, ((size_t)n + 2) * sizeof *p);
    if (!p)
        return RPL_ERR_NOMEM;
    for (uint32_t k = 0; k < n; k++) {
        const tf_value *e = &v->v.arr.items[k];
        if (e->type == TF_INT)
            p[k] = (uint64_t)e->v.i;
        else if (!tf_value_u64(e, &p[k]))
            return rpl_bad(x, i, "property is not an integer");
    }
    for (uint32_t k = 0; k + 1 < n; k += 2) {
        if (!p[k])
            break;
        if (flavour == RPL_PROPS_context && p[k] == CL_CONTEXT_PLATFORM) {
            void *h;
            RPL_TRY(rpl_lookup(x, i, p[k + 1], &h));
            p[k + 1] = (uint64_t)(uintptr_t)h;
        }
    }
    *out = p;
    return RPL_OK;
}

int rpl_in_ptr(rpl_cx *x, unsigned i, void **out)
{
    uint64_t a = 0;
    *out = NULL;
    if (!tf_value_u64(rpl_arg(x, i), &a) && !rpl_in_isnil(x, i))
        return rpl_bad(x, i, "expected an address");
    if (!a)
        return RPL_OK;
    if (!(*out = rpl_addr(x->s, a)))
        return rpl_call_error(x, RPL_ERR_INVALID,
                              "argument '%s': address 0x%llx is not inside any mapped region or SVM allocation",
                              rpl_pname(x, i), (unsigned long long)a);
    /* the bytes a "size" parameter says the call reaches from it (SVM
     * memcpy, fill, map) lie in that region too (the parameter names are
     * this build's, not the trace's) */
    const tf_sig *sig = &rpl_gen_sigs[x->fn];
    uint64_t n = 0;
    for (uint32_t k = 0; k < sig->nparams; k++)
        if (!strcmp(sig->params[k].name, "size") && tf_value_u64(rpl_arg(x, k), &n) && n &&
            !rpl_addr_span(x->s, a, n))
            return rpl_call_error(x, RPL_ERR_INVALID,
                                  "argument '%s': %llu bytes from address 0x%llx run past its mapped region or SVM "
                                  "allocation", rpl_pname(x, i), (unsigned long long)n, (unsigned long long)a);
    return RPL_OK;
}

static int rpl_struct_fields(rpl_cx *x, unsigned i, uint64_t *f, uint32_t n)
{
    const tf_value *v = rpl_arg(x, i);
    if (v->type != TF_ARRAY || v->v.arr.n != n)
        return rpl_bad(x, i, "malformed structure");
    for (uint32_t k = 0; k < n; k++)
        if (!tf_value_u64(&v->v.arr.items[k], &f[k]))
            return rpl_bad(x, i, "malformed structure field");
    return RPL_OK;
}

int rpl_in_struct_cl_image_format(rpl_cx *x, unsigned i, cl_image_format *s)
{
    uint64_t f[2];
    RPL_TRY(rpl_struct_fields(x, i, f, 2));
    s->image_channel_order = (cl_channel_order)f[0];
    s->image_channel_data_type = (cl_channel_type)f[1];
    return RPL_OK;
}

int rpl_in_struct_cl_image_desc(rpl_cx *x, unsigned i, cl_image_desc *d)
{
    uint64_t f[10];
    RPL_TRY(rpl_struct_fields(x, i, f, 10));
    memset(d, 0, sizeof *d);
    d->image_type = (cl_mem_object_type)f[0];
    d->image_width = (size_t)f[1];
    d->image_height = (size_t)f[2];
    d->image_depth = (size_t)f[3];
    d->image_array_size = (size_t)f[4];
    d->image_row_pitch = (size_t)f[5];
    d->image_slice_pitch = (size_t)f[6];
    d->num_mip_levels = (cl_uint)f[7];
    d->num_samples = (cl_uint)f[8];
    void *m;
    RPL_TRY(rpl_lookup(x, i, f[9], &m));
    d->mem_object = m;
    return RPL_OK;
}

int rpl_in_struct_cl_buffer_region(rpl_cx *x, unsigned i, cl_buffer_region *r)
{
    uint64_t f[2];
    RPL_TRY(rpl_struct_fields(x, i, f, 2));
    r->origin = (size_t)f[0];
    r->size = (size_t)f[1];
    return RPL_OK;
}

int rpl_out_alloc(rpl_cx *x, size_t n, size_t elem_size, void **p)
{
    if (n > RPL_MAX_ELEMS * (size_t)64 || (elem_size && n > SIZE_MAX / elem_size))
        return rpl_call_error(x, RPL_ERR_LIMIT, "output of %zu elements is over the limit", n);
    *p = rpl_scratch(x, n * elem_size);
    return *p ? RPL_OK : RPL_ERR_NOMEM;
}

int rpl_readback_alloc(rpl_cx *x, size_t len, void **p)
{
    if (len > rpl_session_opts(x->s)->max_memory)
        return rpl_call_error(x, RPL_ERR_LIMIT, "a read-back of %zu bytes is over the memory limit (%zu)", len,
                              rpl_session_opts(x->s)->max_memory);
    rpl_block_free(x->readback);
    rpl_chunk *c = x->fn == RPL_FN_clEnqueueReadBuffer ? rpl_chunk_pinned(x, len) : NULL;
    uint64_t blocking = 0;
    /* staged as the layer stages: a blocking read, or a non-blocking one
       made blocking while no user event was made */
    if (!c && x->fn == RPL_FN_clEnqueueReadBuffer && tf_value_u64(rpl_arg(x, 2), &blocking) &&
        (blocking || !x->s->made_user_event) && (c = rpl_chunk_staged(x, len))) {
        x->stage_out = len;   /* copied out after the call (rpl_stage_out) */
        x->stage_block = !blocking;
    }
    x->readback = c ? (void *)c->data : rpl_block_alloc(len);
    if (!x->readback)
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory (%zu bytes)", len);
    *p = x->readback;
    return RPL_OK;
}

/* An id for a live object that no recorded id names (the call never
 * returned when recorded, or failed then and succeeds here): above every
 * id the recorder gives, unique while the object lives. Bound as created,
 * the session releases the object at the end. */
static uint64_t rpl_unnamed_id(const void *live)
{
    return (uint64_t)(uintptr_t)live | (uint64_t)1 << 63;
}

/* Binds one recorded output id to a live object. Platforms and root
 * devices are bound through the device map at open (outside exact mode);
 * those bindings are kept. */
static int rpl_bind_out(rpl_cx *x, uint64_t id, void *live, unsigned kind, int created)
{
    if (!id || !live)
        return RPL_OK;
    rpl_obj *o = rpl_obj_find(x->s, id);
    if (o && (kind == RPL_OBJ_PLATFORM || kind == RPL_OBJ_DEVICE) && !o->created && o->live)
        return RPL_OK;
    if (o && !created && o->live)   /* a query naming an object we already know */
        return RPL_OK;
    if (!rpl_obj_bind(x->s, id, live, kind, created))
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    return RPL_OK;
}

int rpl_out_handle(rpl_cx *x, unsigned i, void *live, unsigned kind)
{
    uint64_t id = 0;
    if (!x->c->outs || !tf_value_u64(&x->c->outs[i], &id) || !id)
        id = rpl_unnamed_id(live);
    return rpl_bind_out(x, id, live, kind, 1);
}

int rpl_out_handles(rpl_cx *x, unsigned i, void *const *live, size_t n, unsigned kind)
{
    int created = x->fn == RPL_FN_clCreateSubDevices || x->fn == RPL_FN_clCreateKernelsInProgram;
    const tf_value *a = x->c->outs && x->c->outs[i].type == TF_ARRAY ? &x->c->outs[i] : NULL;
    int discovery = x->fn == RPL_FN_clGetDeviceIDs || x->fn == RPL_FN_clGetPlatformIDs;
    for (size_t k = 0; k < n; k++) {
        uint64_t id = 0;
        if (!a || k >= a->v.arr.n || !tf_value_u64(&a->v.arr.items[k], &id) || !id) {
            if (created)   /* made here, named by no recorded id */
                RPL_TRY(rpl_bind_out(x, rpl_unnamed_id(live[k]), live[k], kind, 1));
            continue;
        }
        if (discovery && id && !live[k] && rpl_session_opts(x->s)->exact_calls)   /* bound by position */
            return rpl_call_error(x, RPL_ERR_DEVICE,
                                  "the application found %u %s when recorded, this machine has fewer; --exact-calls "
                                  "binds them one to one (replay without it to map them onto the ones here)",
                                  a->v.arr.n, x->fn == RPL_FN_clGetDeviceIDs ? "devices" : "platforms");
        RPL_TRY(rpl_bind_out(x, id, live[k], kind, created));
    }
    return RPL_OK;
}

/* Object-valued query answers: the recorder put their ids in post.handles. */
int rpl_out_query(rpl_cx *x, unsigned i, const void *value, size_t len)
{
    (void)i;
    const tf_value *h = x->c->post ? tf_map_get(x->c->post, "handles") : NULL;
    if (!h || h->type != TF_ARRAY || !value)
        return RPL_OK;
    size_t n = len / sizeof(void *);
    for (size_t k = 0; k < n && k < h->v.arr.n; k++) {
        uint64_t id = 0;
        void *live;
        memcpy(&live, (const char *)value + k * sizeof live, sizeof live);
        if (tf_value_u64(&h->v.arr.items[k], &id))
            RPL_TRY(rpl_bind_out(x, id, live, RPL_OBJ_UNKNOWN, 0));
    }
    return RPL_OK;
}

int rpl_ret_handle(rpl_cx *x, void *live, unsigned kind)
{
    uint64_t id = 0;
    if (!tf_value_u64(&x->c->ret, &id) || !id) {
        /* failed when recorded (rpl_result dealt with it) or never returned */
        if (!live || !x->live_ok)
            return RPL_OK;
        id = rpl_unnamed_id(live);
    }
    /* A create that fails here and still returns a handle (PoCL 3.1's
     * clCreateContextFromType with CL_DEVICE_NOT_FOUND, piglit's
     * cl-api-create-context-from-type) is bound for the calls that name it,
     * but not released at the end: the runtime asserts on that release.
     * One that succeeds here is released, whatever the recording says. */
    rpl_obj *o = rpl_obj_bind(x->s, id, live, kind, x->live_ok);
    if (!o)
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    if (x->fn == RPL_FN_clCreateKernel && x->c->args[1].type == TF_STR) {
        const tf_value *n = &x->c->args[1];
        o->name = strndup(n->v.str.ptr, n->v.str.len);
    }
    o->user_unset = x->fn == RPL_FN_clCreateUserEvent && x->live_ok;   /* rpl_user_events_abort */
    x->s->made_user_event |= x->fn == RPL_FN_clCreateUserEvent;
    if (o->user_unset)
        return rpl_uev_created(x, id);
    return RPL_OK;
}

static const char *rpl_code_name(int64_t code, char *buf, size_t cap)
{
    const char *n = code == RPL_CL_UNKNOWN ? "a failure" : rpl_cl_error_name(code);
    if (n)
        return n;
    snprintf(buf, cap, "error %lld", (long long)code);
    return buf;
}

int rpl_result(rpl_cx *x, int ok, cl_int code)
{
    x->live_ok = ok;
    if (ok && x->fn == RPL_FN_clSetUserEventStatus) {
        rpl_obj *ue = rpl_obj_find(x->s, rpl_arg_id(x, 0));
        if (ue)
            ue->user_unset = 0;
    }
    if (ok && x->s->nuev)
        RPL_TRY(rpl_uev_after(x));
    /* A command the runtime refused reads none of its data, and its queue
     * may be released before the replay ends (piglit's API tests enqueue on
     * a queue of another context, then release it): its data is held until
     * the end with no queue to wait on, not with that queue. */
    if (!ok && x->scratch && rpl_is_cat(x->fn, API_CAT_ENQUEUE)) {
        int st = rpl_hold(x->s, x->scratch, NULL, NULL);
        x->scratch = NULL;   /* rpl_hold owns it, or freed it on error */
        RPL_TRY(st);
    }
    if (!x->c->complete)
        return RPL_OK;   /* never returned when recorded: nothing to compare */
    if (ok == x->recorded_ok)
        return RPL_OK;
    int tolerated = rpl_is_cat(x->fn, API_CAT_QUERY) || x->fn == RPL_FN_clGetPlatformIDs || x->fn == RPL_FN_clGetDeviceIDs
                    || !x->recorded_ok || rpl_release_of_unknown(x, 0);
    if (tolerated) {
        rpl_count_call_diff(x->s);
        return RPL_OK;
    }
    char b1[32], b2[32];
    if (x->fn == RPL_FN_clBuildProgram)
        return RPL_OK;   /* the post hook reports the build log */
    if (x->fn == RPL_FN_clCreateProgramWithBinary) {
        char rec[256], live[256];
        rpl_devmap_names(x->s, rec, sizeof rec, live, sizeof live);
        uint64_t id = 0;
        tf_value_u64(&x->c->ret, &id);
        return rpl_call_error(x, RPL_ERR_DEVICE,
                              "program #%llu: its device binary (recorded on %s) cannot be loaded on %s (%s); "
                              "it was recorded without source or IL, so it replays only on the device it was built for",
                              (unsigned long long)id, rec, live, rpl_code_name(code, b2, sizeof b2));
    }
    return rpl_call_error(x, RPL_ERR_CL, "recorded %s, here %s",
                          rpl_code_name(x->recorded_code, b1, sizeof b1), rpl_code_name(code, b2, sizeof b2));
}

int rpl_need(rpl_cx *x, unsigned fn)
{
    if (x->s->nuev && fn == x->fn)   /* right before the call: it may wait for a user event */
        RPL_TRY(rpl_uev_before(x));
    void **slot = rpl_gen_api_slot(&x->s->api, fn);
    if (slot && *slot)
        return RPL_OK;
    /* extension functions: ask the platforms the replay uses */
    if (slot && x->s->api.clGetExtensionFunctionAddressForPlatform) {
        for (size_t i = 0; i < x->s->cap && !*slot; i++) {
            rpl_obj *o = x->s->by_id[i];
            if (o && (uintptr_t)o > 1 && o->kind == RPL_OBJ_PLATFORM && o->live)
                *slot = x->s->api.clGetExtensionFunctionAddressForPlatform(o->live, rpl_gen_table[fn].name);
        }
    }
    if (slot && !*slot && x->s->api.clGetExtensionFunctionAddress)
        *slot = x->s->api.clGetExtensionFunctionAddress(rpl_gen_table[fn].name);
    if (slot && *slot)
        return RPL_OK;
    return rpl_call_error(x, RPL_ERR_UNSUPPORTED, "the OpenCL runtime here does not provide %s",
                          rpl_gen_table[fn].name);
}

int rpl_want_event(rpl_cx *x)
{
    return !rpl_session_opts(x->s)->exact_calls;
}

void rpl_obj_retained(rpl_cx *x, unsigned i)
{
    rpl_obj *o = rpl_obj_find(x->s, rpl_arg_id(x, i));
    if (o && o->created)
        o->refs++;
}

void rpl_obj_released(rpl_cx *x, unsigned i)
{
    rpl_obj *o = rpl_obj_find(x->s, rpl_arg_id(x, i));
    if (o && o->created && --o->refs <= 0)
        rpl_obj_retire(x->s, o);
}

int rpl_fail(rpl_cx *x, int status)
{
    if (!x->s->err[0])
        rpl_call_error(x, status, "%s", rpl_strerror((rpl_status)status));
    return status;
}

/* Host bytes of rect and image transfers: trace-format/tf_len.h, the
 * recorder's own arithmetic; SIZE_MAX (TF_LEN_OVERFLOW) when it overflows
 * (absurd recorded pitches: the allocation is then refused). */
size_t rpl_len_rect(const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch)
{
    return tf_len_rect(origin, region, row_pitch, slice_pitch);
}

size_t rpl_len_image(rpl_cx *x, cl_mem image, const size_t *region, size_t row_pitch, size_t slice_pitch)
{
    rpl_obj *o = rpl_obj_by_live(x->s, image);
    if (!region || !o || !o->elem_size)
        return 0;
    return tf_len_image(o->elem_size, region, row_pitch, slice_pitch);
}

size_t rpl_image_elem_size(const cl_image_format *f)
{
    size_t ch;
    switch (f->image_channel_order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH: case CL_Rx:
        ch = 1;
        break;
    case CL_RG: case CL_RA: case CL_RGx:
        ch = 2;
        break;
    case CL_RGB: case CL_RGBx:
        ch = 3;
        break;
    default:
        ch = 4;
    }
    switch (f->image_channel_data_type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8:
        return ch;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:
        return 2 * ch;
    case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555:
        return 2;
    case CL_UNORM_INT_101010:
        return 4;
    default:
        return 4 * ch;
    }
}
