/* opt_track.c — the call tracker: follows a run call by call (the recorded
 * calls when optimizing, the executed ones when a plan is applied) and
 * keeps what patterns and the redundancy check need: memory objects with
 * their creation order, size, flags and root, programs with their source
 * hash, kernels with their name and current arguments, queues with their
 * order; memory effects are in opt_track_mem.c. Also folds the structure
 * fingerprint. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define OPT_MAX_KARGS 256
#define OPT_MAX_BYTES_HEX 256    /* scalar arguments up to this many bytes are kept as hex */
#define CL_MEM_USE_HOST_PTR_ (1u << 3)
#define CL_MEM_COPY_HOST_PTR_ (1u << 5)
#define CL_QUEUE_OOO_ (1u << 0)
#define CL_QUEUE_PROPERTIES_ 0x1093
#define CL_KERNEL_FUNCTION_NAME_ 0x1190

void opt_track_init(opt_track *t, const opt_plan *facts)
{
    memset(t, 0, sizeof *t);
    t->facts = facts;
    t->fp_state = 0x636c72722d706c61ull;   /* "clrr-pla" */
}

static void opt_obj_free(opt_obj *o)
{
    if (!o)
        return;
    for (unsigned i = 0; i < o->nargs; i++)
        free(o->args[i].bytes);
    free(o->args);
    free(o->name);
    free(o->segs);
    free(o->role);
    free(o);
}

void opt_track_free(opt_track *t)
{
    for (size_t i = 0; i < t->nall; i++)
        opt_obj_free(t->all[i]);
    free(t->all);
    for (size_t i = 0; i < OPT_PSIG_SLOTS; i++)
        free(t->psig[i]);
    opt_map_free(&t->objs);
    memset(t, 0, sizeof *t);
}

opt_obj *opt_track_obj(const opt_track *t, uint64_t id)
{
    return opt_map_get(&t->objs, id);
}

/* A new object for @p id (a later creation with the same id replaces it). */
static opt_obj *opt_obj_new(opt_track *t, uint64_t id, int kind)
{
    if (!id)
        return NULL;
    opt_obj *o = calloc(1, sizeof *o);
    if (!o || opt_grow((void **)&t->all, &t->capall, t->nall + 1, sizeof *t->all) ||
        opt_map_put(&t->objs, id, o)) {
        free(o);
        return NULL;
    }
    t->all[t->nall++] = o;
    o->id = id;
    o->kind = (uint8_t)kind;
    o->root = id;
    return o;
}

opt_obj *opt_mem_range(const opt_track *t, const opt_obj *o, uint64_t *lo, uint64_t *hi)
{
    opt_obj *root = o ? opt_track_obj(t, o->root) : NULL;
    if (!o || o->kind != OPT_OBJ_MEM || !root)
        return NULL;
    if (o->image || !o->size) {   /* no tracked layout: all of it */
        *lo = 0;
        *hi = UINT64_MAX;
    } else {
        *lo = o->origin;
        *hi = o->origin + o->size < o->origin ? UINT64_MAX : o->origin + o->size;
    }
    return root;
}

int opt_droppable(const char *fn)
{
    static const char *const fns[] = {
        "clEnqueueNDRangeKernel", "clEnqueueTask", "clEnqueueWriteBuffer", "clEnqueueWriteBufferRect",
        "clEnqueueWriteImage", "clEnqueueFillBuffer", "clEnqueueFillImage", "clEnqueueCopyBuffer",
        "clEnqueueCopyBufferRect", "clEnqueueCopyImage", "clEnqueueCopyImageToBuffer", "clEnqueueCopyBufferToImage",
    };
    if (strncmp(fn, "clEnqueue", 9))   /* most calls: kernel arguments, queries */
        return 0;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(fn, fns[i]))
            return 1;
    return 0;
}

/* ------------------------------------------------------------ creations */

static uint64_t opt_ret_id(const tf_call *c)
{
    uint64_t id = 0;
    if (c->ret.type != TF_BOOL)
        tf_value_u64(&c->ret, &id);
    return id;
}

static opt_status opt_create_mem(opt_track *t, const tf_call *c, const char *fn)
{
    uint64_t id = opt_ret_id(c), flags = 0, size = 0;
    opt_obj *o = opt_obj_new(t, id, OPT_OBJ_MEM);
    if (!o)
        return id ? OPT_ERR_NOMEM : OPT_OK;
    o->ordinal = ++t->next_ordinal;
    opt_arg_u64(c, "flags", &flags);
    o->flags = flags;
    if (flags & CL_MEM_USE_HOST_PTR_)
        o->visible = 1;
    if (flags & (CL_MEM_USE_HOST_PTR_ | CL_MEM_COPY_HOST_PTR_))
        o->writes = 2;   /* it holds bytes from the start */
    if (!strcmp(fn, "clCreateBuffer") || !strcmp(fn, "clCreateBufferWithProperties")) {
        opt_arg_u64(c, "size", &size);
        o->size = size;
        opt_content k = {.lo = 0, .hi = size, .origin = 0, .seq = c->seq, .settled = 1};
        if ((flags & CL_MEM_COPY_HOST_PTR_) && !o->visible && opt_value_hash(opt_arg(c, "host_ptr"), k.key) &&
            opt_hold_add(o, &k) != OPT_OK)
            return OPT_ERR_NOMEM;
        return OPT_OK;
    }
    if (!strcmp(fn, "clCreateSubBuffer")) {
        uint64_t parent = 0, org = 0, sz = 0;
        opt_arg_u64(c, "buffer", &parent);
        const tf_value *info = opt_arg(c, "buffer_create_info");
        if (info && info->type == TF_ARRAY && info->v.arr.n >= 2) {
            tf_value_u64(&info->v.arr.items[0], &org);
            tf_value_u64(&info->v.arr.items[1], &sz);
        }
        opt_obj *p = opt_track_obj(t, parent);
        o->size = sz;
        if (p && p->kind == OPT_OBJ_MEM && !p->image) {
            o->root = p->root;
            o->origin = p->origin + org;
            opt_obj *root = opt_track_obj(t, p->root);
            if (root)
                root->has_sub = 1;
            o->visible |= p->visible;
        } else {
            o->visible = 1;   /* a parent we do not know: do not rely on its bytes */
        }
        return OPT_OK;
    }
    if (!strncmp(fn, "clCreateImage", 13)) {
        o->image = 1;
        const tf_value *desc = opt_arg(c, "image_desc");
        uint64_t buf = 0;
        /* cl_image_desc ends with the buffer (mem_object) it is made from */
        if (desc && desc->type == TF_ARRAY && desc->v.arr.n >= 10 &&
            desc->v.arr.items[desc->v.arr.n - 1].type != TF_BOOL)
            tf_value_u64(&desc->v.arr.items[desc->v.arr.n - 1], &buf);
        opt_obj *b = buf ? opt_track_obj(t, buf) : NULL;
        if (buf) {   /* two views of the same bytes: neither is tracked */
            o->visible = 1;
            opt_obj *root = b ? opt_track_obj(t, b->root) : NULL;
            if (root) {
                root->visible = 1;
                opt_hold_kill(root, 0, UINT64_MAX);
            }
        }
        return OPT_OK;
    }
    o->visible = 1;   /* pipes, GL/EGL/D3D objects: not ours to track */
    return OPT_OK;
}

static void opt_create_queue(opt_track *t, const tf_call *c, const char *fn)
{
    opt_obj *o = opt_obj_new(t, opt_ret_id(c), OPT_OBJ_QUEUE);
    if (!o)
        return;
    uint64_t props = 0;
    if (!strcmp(fn, "clCreateCommandQueue")) {
        opt_arg_u64(c, "properties", &props);
    } else {
        const tf_value *p = opt_arg(c, "properties");
        for (uint32_t i = 0; p && p->type == TF_ARRAY && i + 1 < p->v.arr.n; i += 2) {
            uint64_t k = 0;
            if (tf_value_u64(&p->v.arr.items[i], &k) && k == CL_QUEUE_PROPERTIES_)
                tf_value_u64(&p->v.arr.items[i + 1], &props);
        }
    }
    o->in_order = !(props & CL_QUEUE_OOO_);
}

static opt_status opt_set_kname(opt_obj *k, const char *s, size_t n)
{
    while (n && !s[n - 1])
        n--;
    char *d = malloc(n + 1);
    if (!d)
        return OPT_ERR_NOMEM;
    memcpy(d, s, n);
    d[n] = 0;
    free(k->name);
    k->name = d;
    k->facts_looked = 0;
    free(k->role);   /* (made again with the name) */
    k->role = NULL;
    return OPT_OK;
}

static opt_status opt_create_program_kernel(opt_track *t, const tf_call *c, const char *fn)
{
    if (!strncmp(fn, "clCreateProgram", 15) || !strcmp(fn, "clLinkProgram")) {
        opt_obj *p = opt_obj_new(t, opt_ret_id(c), OPT_OBJ_PROGRAM);
        if (p && !strcmp(fn, "clCreateProgramWithSource"))
            p->has_src = (uint8_t)opt_value_hash(opt_arg(c, "strings"), p->src);
        return OPT_OK;
    }
    if (!strcmp(fn, "clCreateKernel")) {
        opt_obj *k = opt_obj_new(t, opt_ret_id(c), OPT_OBJ_KERNEL);
        const tf_value *n = opt_arg(c, "kernel_name");
        if (!k)
            return OPT_ERR_NOMEM;
        opt_arg_u64(c, "program", &k->program);
        if (n && (n->type == TF_STR || n->type == TF_BIN))
            return opt_set_kname(k, n->v.str.ptr, n->v.str.len);
        return OPT_OK;
    }
    if (!strcmp(fn, "clCreateKernelsInProgram")) {
        const tf_value *ks = opt_out(c, "kernels");
        uint64_t prog = 0;
        opt_arg_u64(c, "program", &prog);
        for (uint32_t i = 0; ks && ks->type == TF_ARRAY && i < ks->v.arr.n; i++) {
            uint64_t id = 0;
            if (tf_value_u64(&ks->v.arr.items[i], &id) && id) {
                opt_obj *k = opt_obj_new(t, id, OPT_OBJ_KERNEL);
                if (!k)
                    return OPT_ERR_NOMEM;
                k->program = prog;
            }
        }
        return OPT_OK;
    }
    if (!strcmp(fn, "clCloneKernel")) {
        uint64_t src = 0;
        opt_arg_u64(c, "source_kernel", &src);
        opt_obj *s = opt_track_obj(t, src);
        opt_obj *k = opt_obj_new(t, opt_ret_id(c), OPT_OBJ_KERNEL);
        if (!k)
            return OPT_ERR_NOMEM;
        if (!s || s->kind != OPT_OBJ_KERNEL)
            return OPT_OK;
        k->program = s->program;
        if (s->name && opt_set_kname(k, s->name, strlen(s->name)))
            return OPT_ERR_NOMEM;
        if (s->nargs) {
            k->args = calloc(s->nargs, sizeof *k->args);
            if (!k->args)
                return OPT_ERR_NOMEM;
            k->nargs = s->nargs;
            for (unsigned i = 0; i < s->nargs; i++) {
                k->args[i] = s->args[i];
                k->args[i].bytes = s->args[i].bytes ? strdup(s->args[i].bytes) : NULL;
                if (s->args[i].bytes && !k->args[i].bytes)
                    return OPT_ERR_NOMEM;
            }
        }
    }
    return OPT_OK;
}

/* ------------------------------------------------------------ kernel arguments */

static opt_status opt_set_karg(opt_track *t, const tf_call *c, int svm)
{
    uint64_t kid = 0, idx = 0, size = 0;
    opt_arg_u64(c, "kernel", &kid);
    opt_arg_u64(c, "arg_index", &idx);
    opt_arg_u64(c, "arg_size", &size);
    return opt_track_karg(t, kid, idx, size, opt_arg(c, "arg_value"), svm);
}

opt_status opt_track_karg(opt_track *t, uint64_t kid, uint64_t idx, uint64_t size, const tf_value *v, int svm)
{
    opt_obj *k = opt_track_obj(t, kid);
    if (!k || k->kind != OPT_OBJ_KERNEL || idx >= OPT_MAX_KARGS)
        return OPT_OK;
    if (idx >= k->nargs) {
        opt_karg *a = realloc(k->args, (idx + 1) * sizeof *a);
        if (!a)
            return OPT_ERR_NOMEM;
        memset(a + k->nargs, 0, (idx + 1 - k->nargs) * sizeof *a);
        k->args = a;
        k->nargs = (unsigned)idx + 1;
    }
    opt_karg *a = &k->args[idx];
    free(a->bytes);
    memset(a, 0, sizeof *a);
    a->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
    if (svm) {
        a->kind = OPT_KARG_SVM;
        if (v && v->type != TF_BOOL)
            tf_value_u64(v, &a->id);
    } else if (!v || v->type == TF_NIL) {
        a->kind = OPT_KARG_LOCAL;
    } else if (v->type == TF_UINT || v->type == TF_INT) {
        a->kind = OPT_KARG_MEM;
        tf_value_u64(v, &a->id);
    } else {
        uint8_t h[16];
        a->kind = OPT_KARG_BYTES;
        if ((v->type == TF_BIN || v->type == TF_STR) && v->v.str.len <= OPT_MAX_BYTES_HEX) {
            a->bytes = malloc(2 * (size_t)v->v.str.len + 1);
            if (!a->bytes)
                return OPT_ERR_NOMEM;
            opt_hex((const uint8_t *)v->v.str.ptr, v->v.str.len, a->bytes);
        } else if (opt_value_hash(v, h)) {
            a->bytes = malloc(4 + 33);
            if (!a->bytes)
                return OPT_ERR_NOMEM;
            memcpy(a->bytes, "xxh:", 4);
            opt_hex(h, 16, a->bytes + 4);
        }
    }
    return OPT_OK;
}

/* ------------------------------------------------------------ per call */

/* Calls that make the structure the fingerprint is about. */
static int opt_structural(const char *fn)
{
    return !strncmp(fn, "clEnqueue", 9) || !strncmp(fn, "clCreate", 8) || !strncmp(fn, "clSetKernelArg", 14) ||
           !strcmp(fn, "clBuildProgram") || !strcmp(fn, "clCompileProgram") || !strcmp(fn, "clLinkProgram") ||
           !strcmp(fn, "clFinish") || !strcmp(fn, "clWaitForEvents") || !strcmp(fn, "clSetUserEventStatus");
}

uint64_t opt_track_fingerprint(const opt_track *t)
{
    return t->fp_state;
}

opt_status opt_track_call(opt_track *t, const tf_call *c, opt_fate fate)
{
    const char *fn = c->sig->name;
    t->calls++;
    if (!opt_call_ok(c))
        return OPT_OK;
    if (t->fp_on && opt_structural(fn)) {
        char *canon = NULL;
        uint64_t key = 0;
        opt_status st = opt_track_pattern(t, c, 1, &canon, &key);
        if (st == OPT_ERR_NOMEM)
            return st;
        t->fp_state = XXH64(&key, sizeof key, t->fp_state);
        t->fp_calls++;
        free(canon);
    }
    if (!strncmp(fn, "clEnqueue", 9))
        return opt_track_enqueue(t, c, fn, fate);
    if (!strcmp(fn, "clSetKernelArg"))
        return opt_set_karg(t, c, 0);
    if (!strcmp(fn, "clSetKernelArgSVMPointer"))
        return opt_set_karg(t, c, 1);
    if (!strcmp(fn, "clFinish")) {
        uint64_t q = 0;
        opt_arg_u64(c, "command_queue", &q);
        if (q)
            opt_hold_settle(t, q);
        return OPT_OK;
    }
    if (!strcmp(fn, "clGetKernelInfo")) {   /* names of kernels from clCreateKernelsInProgram */
        uint64_t kid = 0, pn = 0;
        const tf_value *pv = opt_out(c, "param_value");
        opt_arg_u64(c, "kernel", &kid);
        opt_arg_u64(c, "param_name", &pn);
        opt_obj *k = opt_track_obj(t, kid);
        if (k && k->kind == OPT_OBJ_KERNEL && !k->name && pn == CL_KERNEL_FUNCTION_NAME_ && pv &&
            (pv->type == TF_BIN || pv->type == TF_STR))
            return opt_set_kname(k, pv->v.str.ptr, pv->v.str.len);
        return OPT_OK;
    }
    if (!strncmp(fn, "clCreate", 8)) {
        const char *rt = c->sig->ret_type;
        if (strstr(rt, "cl_mem"))
            return opt_create_mem(t, c, fn);
        if (strstr(rt, "cl_command_queue")) {
            opt_create_queue(t, c, fn);
            return OPT_OK;
        }
        return opt_create_program_kernel(t, c, fn);
    }
    if (!strcmp(fn, "clLinkProgram"))
        return opt_create_program_kernel(t, c, fn);
    return OPT_OK;
}

void opt_track_data(opt_track *t, const tf_data *d)
{
    uint8_t h[16];
    if (d->key && !strcmp(d->key, "ptr") && opt_value_hash(&d->value, h))
        opt_hold_data(t, d->seq, h);
}

int opt_track_fresh_once(opt_track *t, uint64_t id)
{
    opt_obj *o = id ? opt_track_obj(t, id) : NULL;
    return o && o->kind == OPT_OBJ_MEM && !o->image && !o->visible && o->root == id && !o->has_sub && o->writes <= 1;
}
