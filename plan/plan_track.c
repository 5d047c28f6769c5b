/* plan_track.c — the call tracker: follows a run call by call (the recorded
 * calls when optimizing, the executed ones when a plan is applied) and
 * keeps what patterns and the redundancy check need: memory objects with
 * their creation order, size, flags and root, programs with their source
 * hash, kernels with their name and current arguments, queues with their
 * order; memory effects are in plan_track_mem.c. Also folds the structure
 * fingerprint. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define PLAN_MAX_KARGS 256
#define PLAN_MAX_BYTES_HEX 256    /* scalar arguments up to this many bytes are kept as hex */
#define CL_MEM_USE_HOST_PTR_ (1u << 3)
#define CL_MEM_COPY_HOST_PTR_ (1u << 5)
#define CL_QUEUE_OOO_ (1u << 0)
#define CL_QUEUE_PROPERTIES_ 0x1093
#define CL_KERNEL_FUNCTION_NAME_ 0x1190

void plan_track_init(plan_track *t, const plan_file *facts)
{
    memset(t, 0, sizeof *t);
    t->facts = facts;
    t->fp_state = 0x636c72722d706c61ull;   /* "clrr-pla" */
}

static void plan_obj_free(plan_obj *o)
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

void plan_track_free(plan_track *t)
{
    for (size_t i = 0; i < t->nall; i++)
        plan_obj_free(t->all[i]);
    free(t->all);
    free(t->open);
    free(t->pend);
    for (size_t i = 0; i < PLAN_PSIG_SLOTS; i++)
        free(t->psig[i]);
    plan_map_free(&t->objs);
    memset(t, 0, sizeof *t);
}

plan_obj *plan_track_obj(const plan_track *t, uint64_t id)
{
    return plan_map_get(&t->objs, id);
}

/* A new object for @p id (a later creation with the same id replaces it). */
static plan_obj *plan_obj_new(plan_track *t, uint64_t id, int kind)
{
    if (!id)
        return NULL;
    plan_obj *o = calloc(1, sizeof *o);
    if (!o || plan_grow((void **)&t->all, &t->capall, t->nall + 1, sizeof *t->all) ||
        plan_map_put(&t->objs, id, o)) {
        free(o);
        return NULL;
    }
    t->all[t->nall++] = o;
    o->id = id;
    o->kind = (uint8_t)kind;
    o->root = id;
    return o;
}

plan_obj *plan_mem_range(const plan_track *t, const plan_obj *o, uint64_t *lo, uint64_t *hi)
{
    plan_obj *root = o ? plan_track_obj(t, o->root) : NULL;
    if (!o || o->kind != PLAN_OBJ_MEM || !root)
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

int plan_droppable(const char *fn)
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

static uint64_t plan_ret_id(const tf_call *c)
{
    uint64_t id = 0;
    if (c->ret.type != TF_BOOL)
        tf_value_u64(&c->ret, &id);
    return id;
}

static plan_status plan_create_mem(plan_track *t, const tf_call *c, const char *fn)
{
    uint64_t id = plan_ret_id(c), flags = 0, size = 0;
    plan_obj *o = plan_obj_new(t, id, PLAN_OBJ_MEM);
    if (!o)
        return id ? PLAN_ERR_NOMEM : PLAN_OK;
    o->ordinal = ++t->next_ordinal;
    plan_arg_u64(c, "flags", &flags);
    o->flags = flags;
    if (flags & CL_MEM_USE_HOST_PTR_)
        o->visible = 1;
    if (flags & (CL_MEM_USE_HOST_PTR_ | CL_MEM_COPY_HOST_PTR_))
        o->writes = 2;   /* it holds bytes from the start */
    if (!strcmp(fn, "clCreateBuffer") || !strcmp(fn, "clCreateBufferWithProperties")) {
        plan_arg_u64(c, "size", &size);
        o->size = size;
        plan_content k = {.lo = 0, .hi = size, .origin = 0, .seq = c->seq, .settled = 1};
        if ((flags & CL_MEM_COPY_HOST_PTR_) && !o->visible && plan_value_hash(plan_arg(c, "host_ptr"), k.key) &&
            plan_hold_add(t, o, &k) != PLAN_OK)
            return PLAN_ERR_NOMEM;
        return PLAN_OK;
    }
    if (!strcmp(fn, "clCreateSubBuffer")) {
        uint64_t parent = 0, org = 0, sz = 0;
        plan_arg_u64(c, "buffer", &parent);
        const tf_value *info = plan_arg(c, "buffer_create_info");
        if (info && info->type == TF_ARRAY && info->v.arr.n >= 2) {
            tf_value_u64(&info->v.arr.items[0], &org);
            tf_value_u64(&info->v.arr.items[1], &sz);
        }
        plan_obj *p = plan_track_obj(t, parent);
        o->size = sz;
        if (p && p->kind == PLAN_OBJ_MEM && !p->image) {
            o->root = p->root;
            o->origin = p->origin + org;
            plan_obj *root = plan_track_obj(t, p->root);
            if (root)
                root->has_sub = 1;
            o->visible |= p->visible;
        } else {
            o->visible = 1;   /* a parent we do not know: do not rely on its bytes */
        }
        return PLAN_OK;
    }
    if (!strncmp(fn, "clCreateImage", 13)) {
        o->image = 1;
        const tf_value *desc = plan_arg(c, "image_desc");
        uint64_t buf = 0;
        /* cl_image_desc ends with the buffer (mem_object) it is made from */
        if (desc && desc->type == TF_ARRAY && desc->v.arr.n >= 10 &&
            desc->v.arr.items[desc->v.arr.n - 1].type != TF_BOOL)
            tf_value_u64(&desc->v.arr.items[desc->v.arr.n - 1], &buf);
        plan_obj *b = buf ? plan_track_obj(t, buf) : NULL;
        if (buf) {   /* two views of the same bytes: neither is tracked */
            o->visible = 1;
            plan_obj *root = b ? plan_track_obj(t, b->root) : NULL;
            if (root) {
                root->visible = 1;
                plan_hold_kill(root, 0, UINT64_MAX);
            }
        }
        return PLAN_OK;
    }
    o->visible = 1;   /* pipes, GL/EGL/D3D objects: not ours to track */
    return PLAN_OK;
}

static void plan_create_queue(plan_track *t, const tf_call *c, const char *fn)
{
    plan_obj *o = plan_obj_new(t, plan_ret_id(c), PLAN_OBJ_QUEUE);
    if (!o)
        return;
    uint64_t props = 0;
    if (!strcmp(fn, "clCreateCommandQueue")) {
        plan_arg_u64(c, "properties", &props);
    } else {
        const tf_value *p = plan_arg(c, "properties");
        for (uint32_t i = 0; p && p->type == TF_ARRAY && i + 1 < p->v.arr.n; i += 2) {
            uint64_t k = 0;
            if (tf_value_u64(&p->v.arr.items[i], &k) && k == CL_QUEUE_PROPERTIES_)
                tf_value_u64(&p->v.arr.items[i + 1], &props);
        }
    }
    o->in_order = !(props & CL_QUEUE_OOO_);
}

static plan_status plan_set_kname(plan_obj *k, const char *s, size_t n)
{
    while (n && !s[n - 1])
        n--;
    char *d = malloc(n + 1);
    if (!d)
        return PLAN_ERR_NOMEM;
    memcpy(d, s, n);
    d[n] = 0;
    free(k->name);
    k->name = d;
    k->facts_looked = 0;
    free(k->role);   /* (made again with the name) */
    k->role = NULL;
    return PLAN_OK;
}

static plan_status plan_create_program_kernel(plan_track *t, const tf_call *c, const char *fn)
{
    if (!strncmp(fn, "clCreateProgram", 15) || !strcmp(fn, "clLinkProgram")) {
        plan_obj *p = plan_obj_new(t, plan_ret_id(c), PLAN_OBJ_PROGRAM);
        if (p && !strcmp(fn, "clCreateProgramWithSource"))
            p->has_src = (uint8_t)plan_value_hash(plan_arg(c, "strings"), p->src);
        return PLAN_OK;
    }
    if (!strcmp(fn, "clCreateKernel")) {
        plan_obj *k = plan_obj_new(t, plan_ret_id(c), PLAN_OBJ_KERNEL);
        const tf_value *n = plan_arg(c, "kernel_name");
        if (!k)
            return PLAN_ERR_NOMEM;
        plan_arg_u64(c, "program", &k->program);
        if (n && (n->type == TF_STR || n->type == TF_BIN))
            return plan_set_kname(k, n->v.str.ptr, n->v.str.len);
        return PLAN_OK;
    }
    if (!strcmp(fn, "clCreateKernelsInProgram")) {
        const tf_value *ks = plan_out(c, "kernels");
        uint64_t prog = 0;
        plan_arg_u64(c, "program", &prog);
        for (uint32_t i = 0; ks && ks->type == TF_ARRAY && i < ks->v.arr.n; i++) {
            uint64_t id = 0;
            if (tf_value_u64(&ks->v.arr.items[i], &id) && id) {
                plan_obj *k = plan_obj_new(t, id, PLAN_OBJ_KERNEL);
                if (!k)
                    return PLAN_ERR_NOMEM;
                k->program = prog;
            }
        }
        return PLAN_OK;
    }
    if (!strcmp(fn, "clCloneKernel")) {
        uint64_t src = 0;
        plan_arg_u64(c, "source_kernel", &src);
        plan_obj *s = plan_track_obj(t, src);
        plan_obj *k = plan_obj_new(t, plan_ret_id(c), PLAN_OBJ_KERNEL);
        if (!k)
            return PLAN_ERR_NOMEM;
        if (!s || s->kind != PLAN_OBJ_KERNEL)
            return PLAN_OK;
        k->program = s->program;
        if (s->name && plan_set_kname(k, s->name, strlen(s->name)))
            return PLAN_ERR_NOMEM;
        if (s->nargs) {
            k->args = calloc(s->nargs, sizeof *k->args);
            if (!k->args)
                return PLAN_ERR_NOMEM;
            k->nargs = s->nargs;
            for (unsigned i = 0; i < s->nargs; i++) {
                k->args[i] = s->args[i];
                k->args[i].bytes = s->args[i].bytes ? strdup(s->args[i].bytes) : NULL;
                if (s->args[i].bytes && !k->args[i].bytes)
                    return PLAN_ERR_NOMEM;
            }
        }
    }
    return PLAN_OK;
}

/* ------------------------------------------------------------ kernel arguments */

static plan_status plan_set_karg(plan_track *t, const tf_call *c, int svm)
{
    uint64_t kid = 0, idx = 0, size = 0;
    plan_arg_u64(c, "kernel", &kid);
    plan_arg_u64(c, "arg_index", &idx);
    plan_arg_u64(c, "arg_size", &size);
    return plan_track_karg(t, kid, idx, size, plan_arg(c, "arg_value"), svm);
}

plan_status plan_track_karg(plan_track *t, uint64_t kid, uint64_t idx, uint64_t size, const tf_value *v, int svm)
{
    plan_obj *k = plan_track_obj(t, kid);
    if (!k || k->kind != PLAN_OBJ_KERNEL || idx >= PLAN_MAX_KARGS)
        return PLAN_OK;
    if (idx >= k->nargs) {
        plan_karg *a = realloc(k->args, (idx + 1) * sizeof *a);
        if (!a)
            return PLAN_ERR_NOMEM;
        memset(a + k->nargs, 0, (idx + 1 - k->nargs) * sizeof *a);
        k->args = a;
        k->nargs = (unsigned)idx + 1;
    }
    plan_karg *a = &k->args[idx];
    free(a->bytes);
    memset(a, 0, sizeof *a);
    a->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
    if (svm) {
        a->kind = PLAN_KARG_SVM;
        if (v && v->type != TF_BOOL)
            tf_value_u64(v, &a->id);
    } else if (!v || v->type == TF_NIL) {
        a->kind = PLAN_KARG_LOCAL;
    } else if (v->type == TF_UINT || v->type == TF_INT) {
        a->kind = PLAN_KARG_MEM;
        tf_value_u64(v, &a->id);
    } else {
        uint8_t h[16];
        a->kind = PLAN_KARG_BYTES;
        if ((v->type == TF_BIN || v->type == TF_STR) && v->v.str.len <= PLAN_MAX_BYTES_HEX) {
            a->bytes = malloc(2 * (size_t)v->v.str.len + 1);
            if (!a->bytes)
                return PLAN_ERR_NOMEM;
            plan_hex((const uint8_t *)v->v.str.ptr, v->v.str.len, a->bytes);
        } else if (plan_value_hash(v, h)) {
            a->bytes = malloc(4 + 33);
            if (!a->bytes)
                return PLAN_ERR_NOMEM;
            memcpy(a->bytes, "xxh:", 4);
            plan_hex(h, 16, a->bytes + 4);
        }
    }
    return PLAN_OK;
}

/* ------------------------------------------------------------ per call */

/* Calls that make the structure the fingerprint is about. */
static int plan_structural(const char *fn)
{
    return !strncmp(fn, "clEnqueue", 9) || !strncmp(fn, "clCreate", 8) || !strncmp(fn, "clSetKernelArg", 14) ||
           !strcmp(fn, "clBuildProgram") || !strcmp(fn, "clCompileProgram") || !strcmp(fn, "clLinkProgram") ||
           !strcmp(fn, "clFinish") || !strcmp(fn, "clWaitForEvents") || !strcmp(fn, "clSetUserEventStatus");
}

uint64_t plan_track_fingerprint(const plan_track *t)
{
    return t->fp_state;
}

plan_status plan_track_call(plan_track *t, const tf_call *c, plan_fate fate)
{
    const char *fn = c->sig->name;
    t->calls++;
    if (!plan_call_ok(c))
        return PLAN_OK;
    if (t->fp_on && plan_structural(fn)) {
        char *canon = NULL;
        uint64_t key = 0;
        plan_status st = plan_track_pattern(t, c, 1, &canon, &key);
        if (st == PLAN_ERR_NOMEM)
            return st;
        t->fp_state = XXH64(&key, sizeof key, t->fp_state);
        t->fp_calls++;
        free(canon);
    }
    if (!strncmp(fn, "clEnqueue", 9))
        return plan_track_enqueue(t, c, fn, fate);
    if (!strcmp(fn, "clSetKernelArg"))
        return plan_set_karg(t, c, 0);
    if (!strcmp(fn, "clSetKernelArgSVMPointer"))
        return plan_set_karg(t, c, 1);
    if (!strcmp(fn, "clFinish")) {
        uint64_t q = 0;
        plan_arg_u64(c, "command_queue", &q);
        if (q)
            plan_hold_settle(t, q);
        return PLAN_OK;
    }
    if (!strcmp(fn, "clGetKernelInfo")) {   /* names of kernels from clCreateKernelsInProgram */
        uint64_t kid = 0, pn = 0;
        const tf_value *pv = plan_out(c, "param_value");
        plan_arg_u64(c, "kernel", &kid);
        plan_arg_u64(c, "param_name", &pn);
        plan_obj *k = plan_track_obj(t, kid);
        if (k && k->kind == PLAN_OBJ_KERNEL && !k->name && pn == CL_KERNEL_FUNCTION_NAME_ && pv &&
            (pv->type == TF_BIN || pv->type == TF_STR))
            return plan_set_kname(k, pv->v.str.ptr, pv->v.str.len);
        return PLAN_OK;
    }
    if (!strncmp(fn, "clCreate", 8)) {
        const char *rt = c->sig->ret_type;
        if (strstr(rt, "cl_mem"))
            return plan_create_mem(t, c, fn);
        if (strstr(rt, "cl_command_queue")) {
            plan_create_queue(t, c, fn);
            return PLAN_OK;
        }
        return plan_create_program_kernel(t, c, fn);
    }
    if (!strcmp(fn, "clLinkProgram"))
        return plan_create_program_kernel(t, c, fn);
    return PLAN_OK;
}

void plan_track_data(plan_track *t, const tf_data *d)
{
    uint8_t h[16];
    if (d->key && !strcmp(d->key, "ptr") && plan_value_hash(&d->value, h))
        plan_hold_data(t, d->seq, h);
}

int plan_track_fresh_once(plan_track *t, uint64_t id)
{
    plan_obj *o = id ? plan_track_obj(t, id) : NULL;
    return o && o->kind == PLAN_OBJ_MEM && !o->image && !o->visible && o->root == id && !o->has_sub && o->writes <= 1;
}
