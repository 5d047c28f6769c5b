/* rpl_guard.c — what a trace may hand the driver.
 *
 * A trace is untrusted input, and drivers are not strict: PoCL crashes,
 * corrupts its heap or runs for minutes on arguments a strict driver (the
 * stub ICD) refuses. Before each recorded call is made, the values it would
 * pass are checked against what the recorded objects allow (docs/replay.md,
 * "Traces are untrusted input", lists the rules):
 *
 *  - a count with no array: a count parameter above 0 whose array (wait
 *    lists, event lists, memory object lists, global sizes, device lists,
 *    program lists) is NULL; counts above the array's length are refused
 *    by the generated decoding (rpl_in_count);
 *  - ranges: the byte, rectangle and image ranges of the call's memory
 *    effects (api_sem.h) must not wrap and must lie inside the object (its
 *    size and image dimensions, asked of the driver once per object);
 *  - launches: work_dim 1 to 3, no global offset + size past 2^40 in a
 *    dimension, at most 2^40 work-items in all, local sizes not 0; every
 *    memory object set as an argument of the kernel still alive;
 *  - clSetKernelArg: arg_size equals the bytes recorded for the value (a
 *    handle: the size of a handle), local memory under 4 GiB, and, where the
 *    driver reports the kernel's argument info, the size of the argument's
 *    type (scalars and vectors), of a handle (global, constant, images,
 *    samplers);
 *  - queues: no device-side queue (CL_QUEUE_ON_DEVICE).
 *
 * A call that breaks a rule and succeeded when recorded is refused: one
 * error naming the call and the value (exit 3 from `clrr replay`). A call
 * that failed when recorded is not made (a strict driver refuses it too;
 * its recorded error stands) and counts as skipped. In exact-calls mode the
 * driver is asked nothing, so only the rules that need no object size are
 * checked. */
#include "replayer/rpl_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RPL_GUARD_MAX_ITEMS ((uint64_t)1 << 40)   /* work-items of one launch, and each dimension's end */
#define RPL_GUARD_MAX_LOCAL ((uint64_t)1 << 32)   /* bytes of one local memory argument */

static const tf_value rpl_guard_nil;

static const tf_value *rpl_garg(const rpl_cx *x, int i)
{
    return i >= 0 && (uint32_t)i < x->c->sig->nparams ? &x->c->args[i] : &rpl_guard_nil;
}

static const char *rpl_gname(const rpl_cx *x, int i)
{
    return i >= 0 && (uint32_t)i < x->c->sig->nparams ? x->c->sig->params[i].name : "?";
}

static int rpl_gu64(const tf_value *v, uint64_t *u)
{
    *u = 0;
    if (v->type == TF_INT) {
        *u = (uint64_t)v->v.i;
        return 1;
    }
    return v->type == TF_NIL || tf_value_u64(v, u);
}

/* Up to @p n integers of array value @p v into @p out (the rest 0): how
 * many it holds, -1 when it is not an array of integers. */
static int rpl_gints(const tf_value *v, uint64_t *out, unsigned n)
{
    memset(out, 0, n * sizeof *out);
    if (v->type != TF_ARRAY)
        return -1;
    for (uint32_t k = 0; k < v->v.arr.n && k < n; k++)
        if (!rpl_gu64(&v->v.arr.items[k], &out[k]))
            return -1;
    return (int)(v->v.arr.n < n ? v->v.arr.n : n);
}

static int rpl_gparam(const rpl_cx *x, const char *name)
{
    for (uint32_t i = 0; i < x->c->sig->nparams; i++)
        if (!strcmp(x->c->sig->params[i].name, name))
            return (int)i;
    return -1;
}

/* A rule is broken: refused, or (failed when recorded) not made. */
static int rpl_grefuse(rpl_cx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rpl_grefuse(rpl_cx *x, const char *fmt, ...)
{
    if (x->c->complete && !x->recorded_ok) {
        x->s->sum.skipped++;
        return 1;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rpl_call_error(x, RPL_ERR_INVALID, "%s: not handed to the driver", msg);
}

/* ------------------------------------------------------------ counts */
static const char *const rpl_gpairs[][2] = {
    {"num_events_in_wait_list", "event_wait_list"}, {"num_events", "event_list"},
    {"num_mem_objects", "mem_objects"},              {"work_dim", "global_work_size"},
    {"num_devices", "devices"},                      {"num_devices", "device_list"},
    {"num_devices", "lengths"},                      {"num_input_programs", "input_programs"},
    {"num_input_headers", "input_headers"},          {"num_svm_pointers", "svm_pointers"},
};

static int rpl_guard_counts(rpl_cx *x)
{
    for (size_t k = 0; k < sizeof rpl_gpairs / sizeof rpl_gpairs[0]; k++) {
        int ci = rpl_gparam(x, rpl_gpairs[k][0]), ai = rpl_gparam(x, rpl_gpairs[k][1]);
        if (ci < 0 || ai < 0 || !(x->c->sig->params[ai].dir & TF_DIR_IN) || x->c->sig->params[ai].dir == TF_DIR_INOUT
            || x->c->sig->params[ci].dir != TF_DIR_IN || x->c->sig->params[ci].kind != TF_KIND_VALUE)
            continue;
        uint64_t n = 0;
        if (!rpl_gu64(rpl_garg(x, ci), &n) || n == 0 || rpl_garg(x, ai)->type != TF_NIL)
            continue;
        return rpl_grefuse(x, "argument '%s' is NULL, but the call passes a count of %llu", rpl_gname(x, ai),
                           (unsigned long long)n);
    }
    return 0;
}

/* ------------------------------------------------------------ objects */
/* The size (and image dimensions) of memory object @p o, asked once. */
static void rpl_guard_ask_mem(rpl_session *s, rpl_obj *o)
{
    if (o->guard_asked || s->o.exact_calls || !o->live || !s->api.clGetMemObjectInfo)
        return;
    o->guard_asked = 1;
    size_t sz = 0;
    if (s->api.clGetMemObjectInfo(o->live, CL_MEM_SIZE, sizeof sz, &sz, NULL) == CL_SUCCESS)
        o->guard_size = sz;
    cl_mem_object_type t = 0;
    if (s->api.clGetMemObjectInfo(o->live, CL_MEM_TYPE, sizeof t, &t, NULL) != CL_SUCCESS || t == CL_MEM_OBJECT_BUFFER
        || !s->api.clGetImageInfo)
        return;
    size_t w = 0, h = 0, d = 0, arr = 0;
    if (s->api.clGetImageInfo(o->live, CL_IMAGE_WIDTH, sizeof w, &w, NULL) != CL_SUCCESS
        || s->api.clGetImageInfo(o->live, CL_IMAGE_HEIGHT, sizeof h, &h, NULL) != CL_SUCCESS
        || s->api.clGetImageInfo(o->live, CL_IMAGE_DEPTH, sizeof d, &d, NULL) != CL_SUCCESS)
        return;
    s->api.clGetImageInfo(o->live, CL_IMAGE_ARRAY_SIZE, sizeof arr, &arr, NULL);
    if (t == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        h = arr;
    else if (t == CL_MEM_OBJECT_IMAGE2D_ARRAY)
        d = arr;
    o->guard_dims[0] = w ? w : 1;
    o->guard_dims[1] = h ? h : 1;
    o->guard_dims[2] = d ? d : 1;
}

static rpl_obj *rpl_guard_mem(rpl_cx *x, int i)
{
    uint64_t id = 0;
    if (!tf_value_u64(rpl_garg(x, i), &id) || !id)
        return NULL;
    rpl_obj *o = rpl_obj_find(x->s, id);
    if (!o || !o->live || (o->kind != RPL_OBJ_MEM && o->kind != RPL_OBJ_UNKNOWN))
        return NULL;
    rpl_guard_ask_mem(x->s, o);
    return o;
}

/* [off, off + len) inside an object of @p size bytes (0: unknown). */
static int rpl_guard_span(rpl_cx *x, const char *what, uint64_t id, uint64_t off, uint64_t len, uint64_t size)
{
    if (off + len < off)
        return rpl_grefuse(x, "%s: offset %llu plus %llu bytes wraps", what, (unsigned long long)off,
                           (unsigned long long)len);
    if (size && off + len > size)
        return rpl_grefuse(x, "%s: bytes %llu to %llu lie past the end of memory object #%llu (%llu bytes)", what,
                           (unsigned long long)off, (unsigned long long)(off + len), (unsigned long long)id,
                           (unsigned long long)size);
    return 0;
}

static int rpl_mul(uint64_t a, uint64_t b, uint64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

static int rpl_guard_effect(rpl_cx *x, const api_effect *e)
{
    if (e->range != API_RANGE_BYTES && e->range != API_RANGE_RECT && e->range != API_RANGE_IMAGE)
        return 0;
    rpl_obj *o = rpl_guard_mem(x, e->obj);
    uint64_t id = o ? o->id : 0, size = o ? o->guard_size : 0;
    const char *what = rpl_gname(x, e->obj);
    if (e->range == API_RANGE_BYTES) {
        uint64_t off = 0, len = 0;
        if (e->off >= 0 && !rpl_gu64(rpl_garg(x, e->off), &off))
            return 0;
        if (e->size >= 0) {
            if (!rpl_gu64(rpl_garg(x, e->size), &len))
                return 0;
        } else {
            return 0;   /* the whole object, or an image region's bytes */
        }
        return rpl_guard_span(x, what, id, off, len, size);
    }
    uint64_t org[3], reg[3];
    if (rpl_gints(rpl_garg(x, e->origin), org, 3) < 0 || rpl_gints(rpl_garg(x, e->region), reg, 3) < 3)
        return 0;   /* nil or short: the generated decoding and the driver answer */
    if (!reg[0] || !reg[1] || !reg[2])
        return 0;   /* an empty region: the driver refuses it */
    if (e->range == API_RANGE_IMAGE) {
        for (int d = 0; d < 3; d++)
            if (org[d] + reg[d] < org[d] || (o && o->guard_dims[d] && org[d] + reg[d] > o->guard_dims[d]))
                return rpl_grefuse(x, "%s: origin %llu plus region %llu in dimension %d lie past the image's %llu",
                                   what, (unsigned long long)org[d], (unsigned long long)reg[d], d,
                                   (unsigned long long)(o ? o->guard_dims[d] : 0));
        return 0;
    }
    uint64_t row = 0, slice = 0;
    if ((e->row >= 0 && !rpl_gu64(rpl_garg(x, e->row), &row)) || (e->slice >= 0 && !rpl_gu64(rpl_garg(x, e->slice), &slice)))
        return 0;
    if (!row)
        row = reg[0];
    if (!slice && !rpl_mul(reg[1], row, &slice))
        return rpl_grefuse(x, "%s: a rectangle whose slice pitch wraps", what);
    /* first byte: origin; last: origin + (region - 1) in each dimension */
    uint64_t a, b, c2, start, end;
    int ok = rpl_mul(org[2], slice, &a) && rpl_mul(org[1], row, &b) && !__builtin_add_overflow(a, b, &start)
             && !__builtin_add_overflow(start, org[0], &start) && rpl_mul(reg[2] - 1, slice, &a)
             && rpl_mul(reg[1] - 1, row, &b) && !__builtin_add_overflow(a, b, &c2)
             && !__builtin_add_overflow(c2, reg[0], &c2) && !__builtin_add_overflow(start, c2, &end);
    if (!ok)
        return rpl_grefuse(x, "%s: a rectangle (origin %llu,%llu,%llu, region %llu,%llu,%llu) whose extent wraps", what,
                           (unsigned long long)org[0], (unsigned long long)org[1], (unsigned long long)org[2],
                           (unsigned long long)reg[0], (unsigned long long)reg[1], (unsigned long long)reg[2]);
    return rpl_guard_span(x, what, id, start, end - start, size);
}

/* ------------------------------------------------------------ launches */
static int rpl_guard_launch(rpl_cx *x)
{
    uint64_t kid = 0;
    tf_value_u64(rpl_garg(x, 1), &kid);
    rpl_obj *k = kid ? rpl_obj_find(x->s, kid) : NULL;
    for (unsigned i = 0; k && i < RPL_MAX_KARGS; i++) {
        if (!k->args[i])
            continue;
        rpl_obj *m = rpl_obj_find(x->s, k->args[i]);
        if (!m || !m->live)
            return rpl_grefuse(x, "argument %u of kernel #%llu is memory object #%llu, which was released", i,
                               (unsigned long long)kid, (unsigned long long)k->args[i]);
    }
    if (x->fn != RPL_FN_clEnqueueNDRangeKernel)
        return 0;
    uint64_t dim = 0, off[3], gsz[3], lsz[3];
    if (!rpl_gu64(rpl_garg(x, 2), &dim))
        return 0;
    if (dim < 1 || dim > 3)
        return rpl_grefuse(x, "work_dim %llu (1 to 3)", (unsigned long long)dim);
    int no = rpl_gints(rpl_garg(x, 3), off, 3), ng = rpl_gints(rpl_garg(x, 4), gsz, 3),
        nl = rpl_gints(rpl_garg(x, 5), lsz, 3);
    if (ng < (int)dim)
        return 0;   /* nil or short: rpl_guard_counts and rpl_in_count */
    uint64_t total = 1;
    for (unsigned d = 0; d < dim; d++) {
        uint64_t o = no >= 0 ? off[d] : 0;
        if (o + gsz[d] < o || o + gsz[d] > RPL_GUARD_MAX_ITEMS)
            return rpl_grefuse(x, "global offset %llu plus global size %llu in dimension %u: past 2^40",
                               (unsigned long long)o, (unsigned long long)gsz[d], d);
        if (!rpl_mul(total, gsz[d], &total) || total > RPL_GUARD_MAX_ITEMS)
            return rpl_grefuse(x, "global sizes of more than 2^40 work-items (dimension %u: %llu)", d,
                               (unsigned long long)gsz[d]);
        if (nl >= (int)dim && lsz[d] == 0)
            return rpl_grefuse(x, "local size 0 in dimension %u", d);
    }
    return 0;
}

/* ------------------------------------------------------------ kernel arguments */
/* Bytes of OpenCL C type @p t (a scalar or vector), 0 when not known here. */
static uint32_t rpl_type_size(const char *t)
{
    static const struct { const char *n; uint32_t sz; } base[] = {
        {"char", 1},  {"uchar", 1},  {"bool", 1},   {"short", 2}, {"ushort", 2},
        {"half", 2},  {"int", 4},    {"uint", 4},   {"float", 4}, {"long", 8},
        {"ulong", 8}, {"double", 8}, {"unsigned char", 1}, {"unsigned short", 2},
        {"unsigned int", 4}, {"unsigned long", 8},
    };
    while (!strncmp(t, "const ", 6) || !strncmp(t, "volatile ", 9))
        t += t[0] == 'c' ? 6 : 9;
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
        size_t n = strlen(base[i].n);
        if (strncmp(t, base[i].n, n))
            continue;
        const char *v = t + n;
        if (!*v)
            return base[i].sz;
        char *end;
        unsigned long w = strtoul(v, &end, 10);
        if (*end || (w != 2 && w != 3 && w != 4 && w != 8 && w != 16))
            continue;
        return base[i].sz * (uint32_t)(w == 3 ? 4 : w);
    }
    return 0;
}

/* The size each argument of kernel @p k takes, asked of the driver once
 * (CL_KERNEL_ARG_INFO_NOT_AVAILABLE, or exact-calls mode: unknown). */
static void rpl_guard_ask_kernel(rpl_session *s, rpl_obj *k)
{
    if (k->guard_asked || s->o.exact_calls || !k->live || !s->api.clGetKernelInfo || !s->api.clGetKernelArgInfo)
        return;
    k->guard_asked = 1;
    cl_uint n = 0;
    if (s->api.clGetKernelInfo(k->live, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL) != CL_SUCCESS || n > 4096)
        return;
    uint32_t *a = calloc((size_t)n + 1, sizeof *a);
    if (!a)
        return;
    a[0] = n;
    for (cl_uint i = 0; i < n; i++) {
        cl_kernel_arg_address_qualifier q = 0;
        char type[128] = "";
        if (s->api.clGetKernelArgInfo(k->live, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, NULL) != CL_SUCCESS)
            continue;
        if (q == CL_KERNEL_ARG_ADDRESS_LOCAL) {
            a[1 + i] = RPL_ARGSZ_LOCAL;
            continue;
        }
        if (s->api.clGetKernelArgInfo(k->live, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type, NULL) != CL_SUCCESS)
            continue;
        if (q == CL_KERNEL_ARG_ADDRESS_GLOBAL || q == CL_KERNEL_ARG_ADDRESS_CONSTANT || strchr(type, '*')
            || !strncmp(type, "image", 5) || !strcmp(type, "sampler_t") || !strcmp(type, "queue_t"))
            a[1 + i] = sizeof(void *);
        else
            a[1 + i] = rpl_type_size(type);
    }
    k->guard_args = a;
}

static int rpl_guard_setarg(rpl_cx *x)
{
    uint64_t idx = 0, size = 0, kid = 0;
    if (!rpl_gu64(rpl_garg(x, 1), &idx) || !rpl_gu64(rpl_garg(x, 2), &size))
        return 0;
    const tf_value *v = rpl_garg(x, 3);
    if (v->type == TF_UINT && size != sizeof(void *))
        return rpl_grefuse(x, "argument %llu: arg_size %llu for an object handle (%zu bytes)", (unsigned long long)idx,
                           (unsigned long long)size, sizeof(void *));
    uint64_t have = v->type == TF_BIN ? v->v.str.len : v->type == TF_BLOB ? v->v.blob.size : size;
    if (have != size)
        return rpl_grefuse(x, "argument %llu: arg_size %llu, but %llu bytes are recorded for its value",
                           (unsigned long long)idx, (unsigned long long)size, (unsigned long long)have);
    if (v->type == TF_NIL && size > RPL_GUARD_MAX_LOCAL)
        return rpl_grefuse(x, "argument %llu: %llu bytes of local memory (at most 4 GiB)", (unsigned long long)idx,
                           (unsigned long long)size);
    tf_value_u64(rpl_garg(x, 0), &kid);
    rpl_obj *k = kid ? rpl_obj_find(x->s, kid) : NULL;
    if (!k || !k->live)
        return 0;
    rpl_guard_ask_kernel(x->s, k);
    if (!k->guard_args || idx >= k->guard_args[0])
        return 0;   /* unknown, or an index the driver refuses */
    uint32_t want = k->guard_args[1 + idx];
    if (want == RPL_ARGSZ_UNKNOWN || want == RPL_ARGSZ_LOCAL || v->type == TF_NIL)
        return 0;
    if (size != want)
        return rpl_grefuse(x, "argument %llu of kernel '%s': arg_size %llu, but the argument takes %u bytes",
                           (unsigned long long)idx, k->name ? k->name : "?", (unsigned long long)size, want);
    return 0;
}

/* ------------------------------------------------------------ queues */
/* Device-side queues (CL_QUEUE_ON_DEVICE) are not replayed: the replay
 * enqueues nothing on them, and PoCL ends the process on one. */
static int rpl_guard_queue(rpl_cx *x)
{
    uint64_t props = 0, v[64];
    if (x->fn == RPL_FN_clCreateCommandQueue) {
        if (!rpl_gu64(rpl_garg(x, 2), &props))
            return 0;
    } else {
        int n = rpl_gints(rpl_garg(x, 2), v, 64);
        for (int k = 0; k + 1 < n && v[k]; k += 2)
            if (v[k] == CL_QUEUE_PROPERTIES)
                props = v[k + 1];
    }
    if (props & CL_QUEUE_ON_DEVICE)
        return rpl_grefuse(x, "a device-side queue (CL_QUEUE_ON_DEVICE in properties 0x%llx) is not replayed",
                           (unsigned long long)props);
    return 0;
}

/* ------------------------------------------------------------ entry */
int rpl_guard(rpl_cx *x)
{
    int st = rpl_guard_counts(x);
    if (st)
        return st;
    if (x->fn == RPL_FN_clCreateCommandQueue || x->fn == RPL_FN_clCreateCommandQueueWithProperties)
        return rpl_guard_queue(x);
    if (x->fn == RPL_FN_clSetKernelArg)
        return rpl_guard_setarg(x);
    if (x->fn == RPL_FN_clEnqueueNDRangeKernel || x->fn == RPL_FN_clEnqueueTask)
        if ((st = rpl_guard_launch(x)))
            return st;
    const api_sem *a = rpl_gen_table[x->fn].sem;
    if (!a || a->nparams != x->c->sig->nparams)
        return 0;
    for (unsigned i = 0; i < a->neffects; i++)
        if ((st = rpl_guard_effect(x, &a->eff[i])))
            return st;
    return 0;
}

void rpl_guard_forget(rpl_obj *o)
{
    free(o->guard_args);
    o->guard_args = NULL;
    o->guard_asked = 0;
}
