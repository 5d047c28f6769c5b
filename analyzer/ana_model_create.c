/* ana_model_create.c — what the model records when a call creates objects:
 * the handle it returned (contexts, queues with their properties, buffers,
 * sub-buffers, images with their layout, pipes, programs with their source,
 * kernels with their name, samplers, user events) or wrote to an output
 * parameter (events of enqueues, kernels of clCreateKernelsInProgram,
 * discovered platforms and devices, sub-devices); build options. */
#include "analyzer/ana_model_int.h"

#include <CL/cl.h>
#include <stdlib.h>
#include <string.h>

static size_t ana_image_elem(uint64_t order, uint64_t type)
{
    size_t ch;
    switch (type) {
    case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555: return 2;
    case CL_UNORM_INT_101010:
#ifdef CL_UNORM_INT_101010_2
    case CL_UNORM_INT_101010_2:
#endif
        return 4;
    default: break;
    }
    switch (order) {
    case CL_RG: case CL_RA: case CL_RGx: ch = 2; break;
    case CL_RGB: case CL_RGBx: case CL_sRGB: case CL_sRGBx: ch = 3; break;
    case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_sRGBA: case CL_sBGRA: case CL_ABGR: ch = 4; break;
    default: ch = 1; break;
    }
    switch (type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8: return ch;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16:
    case CL_HALF_FLOAT: return 2 * ch;
    default: return 4 * ch;
    }
}

/* Image layout: width, height, depth (array layers count as depth). */
static void ana_image_set(ana_model *m, long k, uint64_t elem, uint64_t w, uint64_t h, uint64_t d)
{
    ana_obj_x *x = &m->xo[k];
    x->elem = elem ? elem : 1;
    x->img_w = w ? w : 1;
    x->img_h = h ? h : 1;
    x->img_d = d ? d : 1;
    m->objs[k].size = ana_sat_mul(ana_sat_mul(ana_sat_mul(x->img_w, x->img_h), x->img_d), x->elem);
}

static ana_status ana_create_image(ana_model *m, const tf_call *c, long k, const char *fn)
{
    uint64_t fmt[2] = { 0, 0 }, desc[10] = { 0 };
    if (ana_u64_array(ana_call_arg(c, "image_format"), fmt, 2) < 0)
        return ana_model_fail(m, c, "image_format is not a list of integers");
    uint64_t elem = ana_image_elem(fmt[0], fmt[1]);
    if (!strcmp(fn, "clCreateImage2D") || !strcmp(fn, "clCreateImage3D")) {
        uint64_t w = 0, h = 0, d = 1;
        ana_call_u64(c, "image_width", 0, &w);
        ana_call_u64(c, "image_height", 0, &h);
        ana_call_u64(c, "image_depth", 1, &d);
        ana_image_set(m, k, elem, w, h, d);
        return ANA_OK;
    }
    int n = ana_u64_array(ana_call_arg(c, "image_desc"), desc, 10);
    if (n < 0)
        return ana_model_fail(m, c, "image_desc is not a list of integers");
    uint64_t type = desc[0], w = desc[1], h = desc[2], d = desc[3], arr = desc[4];
    if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        h = arr;
    else if (type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
        d = arr;
    if (type == CL_MEM_OBJECT_IMAGE1D || type == CL_MEM_OBJECT_IMAGE1D_BUFFER)
        h = d = 1;
    else if (type != CL_MEM_OBJECT_IMAGE3D && type != CL_MEM_OBJECT_IMAGE2D_ARRAY)
        d = 1;
    ana_image_set(m, k, elem, w, h, d);
    if (n >= 10 && desc[9]) {
        uint32_t p;
        if (ana_idmap_get(&m->objmap, desc[9], &p))
            m->objs[k].parent = desc[9];
    }
    return ANA_OK;
}

static ana_status ana_create_mem(ana_model *m, const tf_call *c, long k, const char *fn)
{
    ana_object *o = &m->objs[k];
    uint64_t v = 0;
    if (ana_call_u64(c, "flags", 0, &v))
        o->flags = v;
    if (!strcmp(fn, "clCreateSubBuffer")) {
        uint64_t reg[2] = { 0, 0 }, parent = 0;
        if (!ana_call_u64(c, "buffer", 0, &parent) ||
            ana_u64_array(ana_call_arg(c, "buffer_create_info"), reg, 2) < 0)
            return ana_model_fail(m, c, "buffer or buffer_create_info is malformed");
        o->parent = parent;
        o->origin = reg[0];
        o->size = reg[1];
        long p = parent ? ana_obj_get(m, parent, ANA_OBJ_BUFFER) : -1;
        o = &m->objs[k];   /* the table may have moved */
        if (p >= 0) {
            o->flags |= m->objs[p].flags & ~(uint64_t)(CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY);
            if (!(o->flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY)))
                o->flags |= m->objs[p].flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY);
            if (m->objs[p].kind == ANA_OBJ_SUBBUFFER) {   /* not valid OpenCL: flatten */
                o->parent = m->objs[p].parent;
                o->origin += m->objs[p].origin;
            }
        }
        return ANA_OK;
    }
    if (strstr(fn, "Image"))
        return strstr(fn, "GL") || strstr(fn, "EGL") ? ANA_OK : ana_create_image(m, c, k, fn);
    if (!strcmp(fn, "clCreatePipe")) {
        uint64_t ps = 0, np = 0;
        ana_call_u64(c, "pipe_packet_size", 0, &ps);
        ana_call_u64(c, "pipe_max_packets", 0, &np);
        o->size = ana_sat_mul(ps, np);
        return ANA_OK;
    }
    if (ana_call_u64(c, "size", 0, &v))
        o->size = v;
    return ANA_OK;
}

static ana_status ana_create_queue(ana_model *m, const tf_call *c, long k)
{
    ana_object *o = &m->objs[k];
    uint64_t dev = 0, props = 0, list[64];
    ana_call_u64(c, "device", 0, &dev);
    o->parent = dev;
    const tf_value *p = ana_call_arg(c, "properties");
    if (p && p->type == TF_ARRAY) {
        int n = ana_u64_array(p, list, 64);
        for (int i = 0; i + 1 < n; i += 2) {
            if (list[i] == 0)
                break;
            if (list[i] == CL_QUEUE_PROPERTIES)
                props = list[i + 1];
        }
    } else if (p) {
        ana_call_u64(c, "properties", 0, &props);
    }
    o->props = props;
    return ANA_OK;
}

static ana_status ana_create_program(ana_model *m, const tf_call *c, long k, const char *fn)
{
    ana_obj_x *x = &m->xo[k];
    if (!strcmp(fn, "clCreateProgramWithBinary")) {
        x->why = "created from a binary (no source)";
        return ANA_OK;
    }
    if (strstr(fn, "WithIL")) {
        x->why = "created from IL (no source)";
        return ANA_OK;
    }
    if (strstr(fn, "BuiltIn")) {
        x->why = "built-in kernels (no source)";
        return ANA_OK;
    }
    if (strcmp(fn, "clCreateProgramWithSource")) {
        x->why = "no source";
        return ANA_OK;
    }
    const tf_value *s = ana_call_arg(c, "strings");
    char *src = NULL;
    uint64_t len = 0;
    if (s && s->type == TF_BLOB) {
        len = s->v.blob.size;
        if (len > ANA_MAX_SOURCE) {
            x->why = "source larger than 64 MiB";
            return ANA_OK;
        }
        src = ana_pool_alloc(&m->pool, (size_t)len + 1);
        if (!src)
            return ANA_ERR_NOMEM;
        tf_status ts = tf_reader_blob(m->r, &s->v.blob, 0, src, (size_t)len);
        if (ts == TF_ERR_NOT_FOUND) {   /* a writer that failed: the program only loses its analysis */
            x->why = "source blob missing from the trace";
            return ANA_OK;
        }
        if (ts != TF_OK)
            return ana_model_fail(m, c, "program source: %s%s%s", tf_strerror(ts),
                                  *tf_reader_error(m->r) ? ": " : "", tf_reader_error(m->r));
    } else if (s && (s->type == TF_BIN || s->type == TF_STR)) {
        len = s->v.str.len;
        src = ana_pool_strndup(&m->pool, s->v.str.ptr, (size_t)len);
        if (!src)
            return ANA_ERR_NOMEM;
    } else {
        x->why = "source not recorded";
        return ANA_OK;
    }
    m->objs[k].source = src;
    m->objs[k].source_len = len;
    m->objs[k].text = src;
    m->objs[k].text_len = len;
    return ANA_OK;
}

/* The text the analysis and the rewrites compile (ana_object.text): the
 * source with the recorded headers inlined (pool), or the source itself. */
static ana_status ana_model_set_built(ana_model *m, const tf_call *c, long k)
{
    char *t = NULL;
    size_t n = 0;
    m->objs[k].text = m->objs[k].source;
    m->objs[k].text_len = m->objs[k].source_len;
    ana_status st = ana_source_inline(m->r, m->objs[k].source, m->objs[k].options,
                                      c->post ? tf_map_get(c->post, "headers") : NULL, &t, &n);
    if (st == ANA_ERR_ARG) {
        m->xo[k].why = "source with its headers larger than 32 MiB";
        return ANA_OK;
    }
    if (st != ANA_OK || !t)
        return st;
    char *p = ana_pool_strndup(&m->pool, t, n);
    free(t);
    if (!p)
        return ANA_ERR_NOMEM;
    m->objs[k].text = p;
    m->objs[k].text_len = n;
    return ANA_OK;
}

ana_status ana_model_set_options(ana_model *m, const tf_call *c, uint64_t prog)
{
    const tf_value *o = ana_call_arg(c, "options");
    long k = ana_obj_get(m, prog, ANA_OBJ_PROGRAM);
    if (k < 0)
        return ANA_ERR_NOMEM;
    if (!o || o->type != TF_STR) {
        m->objs[k].options = NULL;
        return ana_model_set_built(m, c, k);
    }
    char *s = ana_pool_strndup(&m->pool, o->v.str.ptr, o->v.str.len);
    if (!s)
        return ANA_ERR_NOMEM;
    m->objs[k].options = s;
    return ana_model_set_built(m, c, k);
}

ana_status ana_model_set_kname(ana_model *m, long k, const char *s, size_t n)
{
    while (n && !s[n - 1])
        n--;
    char *d = ana_pool_strndup(&m->pool, s, n);
    if (!d)
        return ANA_ERR_NOMEM;
    m->objs[k].name = d;
    return ANA_OK;
}

ana_status ana_model_created(ana_model *m, const tf_call *c, const char *fn)
{
    int tk = ana_type_kind(c->sig->ret_type);
    uint64_t id;
    if (tk < 0 || c->ret.type == TF_BOOL || !tf_value_u64(&c->ret, &id))
        return ANA_OK;
    ana_obj_kind kind = (ana_obj_kind)tk;
    if (kind == ANA_OBJ_BUFFER) {
        if (!strcmp(fn, "clCreateSubBuffer"))
            kind = ANA_OBJ_SUBBUFFER;
        else if (strstr(fn, "Image") || strstr(fn, "Texture") || strstr(fn, "Renderbuffer"))
            kind = ANA_OBJ_IMAGE;
        else if (!strcmp(fn, "clCreatePipe"))
            kind = ANA_OBJ_PIPE;
    } else if (kind == ANA_OBJ_EVENT && !strcmp(fn, "clCreateUserEvent")) {
        kind = ANA_OBJ_USER_EVENT;
    }
    long k = ana_obj_new(m, c, id, kind);
    if (k < 0)
        return m->failed ? ANA_ERR_TRACE : ANA_ERR_NOMEM;
    uint64_t ctx = 0;
    if (ana_call_u64(c, "context", 0, &ctx))
        m->objs[k].context = ctx;
    switch (kind) {
    case ANA_OBJ_QUEUE:
        return ana_create_queue(m, c, k);
    case ANA_OBJ_BUFFER: case ANA_OBJ_SUBBUFFER: case ANA_OBJ_IMAGE: case ANA_OBJ_PIPE:
        return ana_create_mem(m, c, k, fn);
    case ANA_OBJ_PROGRAM:
        if (!strcmp(fn, "clLinkProgram")) {
            uint64_t in[2] = { 0, 0 };
            int n = ana_u64_array(ana_call_arg(c, "input_programs"), in, 2);
            m->xo[k].inputs = n > 0 ? (uint64_t)n : 0;
            if (ana_call_arg(c, "input_programs") && ana_call_arg(c, "input_programs")->type == TF_ARRAY)
                m->xo[k].inputs = ana_call_arg(c, "input_programs")->v.arr.n;
            m->xo[k].input0 = in[0];
            return ana_model_set_options(m, c, id);
        }
        return ana_create_program(m, c, k, fn);
    case ANA_OBJ_KERNEL: {
        uint64_t prog = 0;
        if (!strcmp(fn, "clCloneKernel")) {
            uint64_t src = 0;
            ana_call_u64(c, "source_kernel", 0, &src);
            long s = src ? ana_obj_get(m, src, ANA_OBJ_KERNEL) : -1;
            if (s < 0)
                return src ? ANA_ERR_NOMEM : ANA_OK;
            ana_object *o = &m->objs[k];
            o->name = m->objs[s].name;
            o->parent = m->objs[s].parent;
            if (m->xo[s].ncur) {
                m->xo[k].cur = malloc(m->xo[s].ncur * sizeof *m->xo[k].cur);
                if (!m->xo[k].cur)
                    return ANA_ERR_NOMEM;
                memcpy(m->xo[k].cur, m->xo[s].cur, m->xo[s].ncur * sizeof *m->xo[k].cur);
                m->xo[k].ncur = m->xo[s].ncur;
            }
            return ANA_OK;
        }
        ana_call_u64(c, "program", 0, &prog);
        m->objs[k].parent = prog;
        const tf_value *nm = ana_call_arg(c, "kernel_name");
        if (nm && nm->type == TF_STR)
            return ana_model_set_kname(m, k, nm->v.str.ptr, nm->v.str.len);
        return ana_model_set_kname(m, k, "", 0);
    }
    default:
        return ANA_OK;
    }
}

ana_status ana_model_created_outs(ana_model *m, const tf_call *c, const char *fn)
{
    const tf_sig *s = c->sig;
    for (uint32_t i = 0; c->outs && i < s->nparams; i++) {
        const tf_param *p = &s->params[i];
        const tf_value *v = &c->outs[i];
        int tk = ana_type_kind(p->type);
        if (tk < 0 || !(p->dir & TF_DIR_OUT) || v->type == TF_NIL)
            continue;
        uint64_t id;
        if (p->kind == TF_KIND_HANDLE) {
            if (v->type == TF_BOOL || !tf_value_u64(v, &id) || !id)
                continue;
            if (tk != ANA_OBJ_EVENT)
                continue;
            long k = ana_obj_new(m, c, id, ANA_OBJ_EVENT);
            if (k < 0)
                return m->failed ? ANA_ERR_TRACE : ANA_ERR_NOMEM;
            uint64_t q = 0;
            uint32_t qi;
            if (ana_call_u64(c, "command_queue", 0, &q) && ana_idmap_get(&m->objmap, q, &qi))
                m->objs[k].context = m->objs[qi].context;
            continue;
        }
        if (p->kind != TF_KIND_ARRAY || v->type != TF_ARRAY)
            continue;
        int discover = tk == ANA_OBJ_PLATFORM || (tk == ANA_OBJ_DEVICE && strcmp(fn, "clCreateSubDevices")
                                                  && strcmp(fn, "clCreateSubDevicesEXT"));
        for (uint32_t j = 0; j < v->v.arr.n; j++) {
            const tf_value *e = &v->v.arr.items[j];
            if (e->type == TF_BOOL || !tf_value_u64(e, &id) || !id)
                continue;
            long k;
            if (discover) {
                k = ana_obj_get(m, id, (ana_obj_kind)tk);
                if (k >= 0 && !m->objs[k].create_seq) {
                    m->objs[k].create_seq = c->seq;
                    m->xo[k].refs = 1;
                    ana_call_u64(c, "platform", 0, &m->objs[k].parent);
                }
            } else {
                k = ana_obj_new(m, c, id, (ana_obj_kind)tk);
            }
            if (k < 0)
                return m->failed ? ANA_ERR_TRACE : ANA_ERR_NOMEM;
            if (tk == ANA_OBJ_KERNEL) {
                ana_call_u64(c, "program", 0, &m->objs[k].parent);
                m->xo[k].kip_index = j + 1;
                ana_status st = ana_model_set_kname(m, k, "", 0);
                if (st != ANA_OK)
                    return st;
            } else if (tk == ANA_OBJ_DEVICE && !discover) {
                ana_call_u64(c, "in_device", 0, &m->objs[k].parent);
            }
        }
    }
    return ANA_OK;
}
