/* show_scan.c — one pass over a trace for `clrr show`: its programs (source,
 * binaries, builds with their options and recorded headers, the build logs
 * the application asked for), kernels (name, program, argument info the
 * application asked for, arguments as last set), memory objects (kind,
 * size, flags, image format, created and released at which call) and the
 * calls that failed. */
#include "tools/clrr/show_int.h"
#include "tools/clrr/cli.h"

#include <stdlib.h>
#include <string.h>

#define CLI_SHOW_SOURCE_MAX ((size_t)64 << 20)
#define CLI_SHOW_LOG_MAX ((size_t)16 << 20)
#define CLI_SHOW_OBJS_MAX ((size_t)1 << 24)
#define CLI_SHOW_FAILS_MAX ((size_t)1 << 24)

/* OpenCL enumerants (CL/cl.h values, kept here so that the scan reads
 * numbers as the trace stores them) */
#define CLI_SHOW_CL_PROGRAM_BINARIES 0x1166
#define CLI_SHOW_CL_PROGRAM_KERNEL_NAMES 0x1168
#define CLI_SHOW_CL_PROGRAM_BUILD_LOG 0x1183
#define CLI_SHOW_CL_KERNEL_FUNCTION_NAME 0x1190
#define CLI_SHOW_CL_KERNEL_NUM_ARGS 0x1191
#define CLI_SHOW_CL_KERNEL_ARG_ADDRESS_QUALIFIER 0x1196
#define CLI_SHOW_CL_KERNEL_ARG_ACCESS_QUALIFIER 0x1197
#define CLI_SHOW_CL_KERNEL_ARG_TYPE_NAME 0x1198
#define CLI_SHOW_CL_KERNEL_ARG_TYPE_QUALIFIER 0x1199
#define CLI_SHOW_CL_KERNEL_ARG_NAME 0x119A

int cli_show_call_failed(const tf_call *c, int64_t *code)
{
    int64_t v = 0, dummy;
    if (!code)
        code = &dummy;
    *code = 0;
    if (!c->complete || !c->sig)
        return 0;
    const char *rt = c->sig->ret_type ? c->sig->ret_type : "";
    if (!strcmp(rt, "cl_int")) {
        if (tf_value_i64(&c->ret, &v) && v == 0)
            return 0;
        *code = tf_value_i64(&c->ret, &v) ? v : CLI_SHOW_NO_CODE;
        return 1;
    }
    for (uint32_t i = 0; c->outs && i < c->sig->nparams; i++) {
        if (!c->sig->params[i].name || strcmp(c->sig->params[i].name, "errcode_ret"))
            continue;
        const tf_value *e = &c->outs[i];
        if (e->type == TF_NIL)
            break;
        if (tf_value_i64(e, &v) && v == 0)
            return 0;
        *code = tf_value_i64(e, &v) ? v : CLI_SHOW_NO_CODE;
        return 1;
    }
    if (!strcmp(rt, "void"))
        return 0;
    uint64_t u;
    if (c->ret.type != TF_BOOL && tf_value_u64(&c->ret, &u) && u != 0)
        return 0;
    *code = CLI_SHOW_NO_CODE;
    return 1;
}

const char *cli_show_kind_name(int kind)
{
    switch (kind) {
    case CLI_SHOW_BUFFER: return "buffer";
    case CLI_SHOW_SUBBUFFER: return "sub-buffer";
    case CLI_SHOW_IMAGE: return "image";
    case CLI_SHOW_PIPE: return "pipe";
    case CLI_SHOW_SVM: return "svm";
    case CLI_SHOW_PROGRAM: return "program";
    case CLI_SHOW_KERNEL: return "kernel";
    default: return "?";
    }
}

/* ------------------------------------------------------------ helpers */

static int cli_show_param(const tf_call *c, const char *name)
{
    for (uint32_t i = 0; c->sig && i < c->sig->nparams; i++)
        if (c->sig->params[i].name && !strcmp(c->sig->params[i].name, name))
            return (int)i;
    return -1;
}

static const tf_value *cli_show_arg(const tf_call *c, const char *name)
{
    int i = cli_show_param(c, name);
    return i >= 0 && c->args ? &c->args[i] : NULL;
}

static const tf_value *cli_show_out(const tf_call *c, const char *name)
{
    int i = cli_show_param(c, name);
    return i >= 0 && c->outs ? &c->outs[i] : NULL;
}

static uint64_t cli_show_u64(const tf_value *v)
{
    uint64_t u = 0;
    return v && tf_value_u64(v, &u) ? u : 0;
}

/* element @p i of array/struct value @p v as an integer */
static uint64_t cli_show_elem(const tf_value *v, uint32_t i)
{
    return v && v->type == TF_ARRAY && i < v->v.arr.n ? cli_show_u64(&v->v.arr.items[i]) : 0;
}

tf_status cli_show_value_bytes(tf_reader *r, const tf_value *v, size_t max, void **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!v)
        return TF_ERR_ARG;
    if (v->type == TF_BIN || v->type == TF_STR) {
        if (v->v.str.len > max)
            return TF_ERR_LIMIT;
        *out = malloc(v->v.str.len + 1);
        if (!*out)
            return TF_ERR_NOMEM;
        memcpy(*out, v->v.str.ptr, v->v.str.len);
        ((char *)*out)[v->v.str.len] = 0;
        *len = v->v.str.len;
        return TF_OK;
    }
    if (v->type != TF_BLOB)
        return TF_ERR_ARG;
    if (v->v.blob.size > max)
        return TF_ERR_LIMIT;
    size_t n = (size_t)v->v.blob.size;
    *out = malloc(n + 1);
    if (!*out)
        return TF_ERR_NOMEM;
    tf_status s = tf_reader_blob(r, &v->v.blob, 0, *out, n);
    if (s != TF_OK) {
        free(*out);
        *out = NULL;
        return s;
    }
    ((char *)*out)[n] = 0;
    *len = n;
    return TF_OK;
}

static char *cli_show_strdup_val(const tf_value *v)
{
    if (!v || v->type != TF_STR)
        return NULL;
    return strndup(v->v.str.ptr, v->v.str.len);
}

/* ------------------------------------------------------------ the table */

cli_show_obj *cli_show_scan_find(const cli_show_scan *sc, uint64_t id)
{
    if (!sc->nslots || !id)
        return NULL;
    size_t mask = sc->nslots - 1;
    for (size_t h = (size_t)(id * 0x9E3779B97F4A7C15ull) & mask;; h = (h + 1) & mask) {
        uint64_t s = sc->slots[h];
        if (!s)
            return NULL;
        if (sc->objs[s - 1].id == id)
            return &sc->objs[s - 1];
    }
}

static int cli_show_rehash(cli_show_scan *sc, size_t nslots)
{
    uint64_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    free(sc->slots);
    sc->slots = slots;
    sc->nslots = nslots;
    for (size_t i = 0; i < sc->n; i++) {
        size_t h = (size_t)(sc->objs[i].id * 0x9E3779B97F4A7C15ull) & (nslots - 1);
        while (slots[h] && sc->objs[slots[h] - 1].id != sc->objs[i].id)
            h = (h + 1) & (nslots - 1);
        slots[h] = i + 1;
    }
    return 0;
}

/* A new object (an id created again replaces the old entry's place in the
 * index: the newest one wins). */
static cli_show_obj *cli_show_add(cli_show_scan *sc, uint64_t id, int kind, const tf_call *c)
{
    if (!id)
        return NULL;
    cli_show_obj *old = cli_show_scan_find(sc, id);
    if (old && old->kind == kind && !old->release_seq)
        return old;   /* the same object, seen again (clCreateKernelsInProgram ...) */
    if (sc->n >= CLI_SHOW_OBJS_MAX)
        return NULL;
    if (sc->n == sc->cap) {
        size_t cap = sc->cap ? sc->cap * 2 : 64;
        cli_show_obj *o = realloc(sc->objs, cap * sizeof *o);
        if (!o)
            return NULL;
        sc->objs = o;
        sc->cap = cap;
    }
    cli_show_obj *o = &sc->objs[sc->n++];
    memset(o, 0, sizeof *o);
    o->id = id;
    o->kind = kind;
    o->refs = 1;
    o->create_seq = c->seq;
    snprintf(o->fn, sizeof o->fn, "%s", c->sig && c->sig->name ? c->sig->name : "?");
    if (sc->n * 2 > sc->nslots && cli_show_rehash(sc, sc->nslots ? sc->nslots * 2 : 256)) {
        sc->n--;
        return NULL;
    }
    /* the index names the newest object of an id */
    size_t h = (size_t)(id * 0x9E3779B97F4A7C15ull) & (sc->nslots - 1);
    while (sc->slots[h] && sc->objs[sc->slots[h] - 1].id != id)
        h = (h + 1) & (sc->nslots - 1);
    sc->slots[h] = sc->n;
    return o;
}

static uint64_t cli_show_ctype_size(uint32_t t)
{
    switch (t) {
    case 0x10D0: case 0x10D2: case 0x10D7: case 0x10DA: return 1;   /* (S/UN)NORM_INT8, (UN)SIGNED_INT8 */
    case 0x10D1: case 0x10D3: case 0x10D8: case 0x10DB: case 0x10DD: return 2;   /* 16-bit, HALF */
    case 0x10D9: case 0x10DC: case 0x10DE: return 4;   /* INT32, UINT32, FLOAT */
    default: return 0;
    }
}

static unsigned cli_show_order_channels(uint32_t o)
{
    switch (o) {
    case 0x10B0: case 0x10B1: case 0x10B8: case 0x10B9: case 0x10BD: return 1;   /* R A INTENSITY LUMINANCE DEPTH */
    case 0x10B2: case 0x10B3: case 0x10BA: return 2;   /* RG RA Rx */
    case 0x10B4: case 0x10BB: case 0x10BF: return 3;   /* RGB RGx sRGB */
    case 0x10B5: case 0x10B6: case 0x10B7: case 0x10BC: case 0x10C0: case 0x10C1: case 0x10C2: case 0x10C3:
        return 4;   /* RGBA BGRA ARGB RGBx sRGBx sRGBA sBGRA ABGR */
    default: return 0;
    }
}

uint64_t cli_show_image_elem(uint32_t order, uint32_t type)
{
    if (type == 0x10D4 || type == 0x10D5)   /* UNORM_SHORT_565, _555 */
        return 2;
    if (type == 0x10D6 || type == 0x10E0)   /* UNORM_INT_101010(_2) */
        return 4;
    return cli_show_order_channels(order) * cli_show_ctype_size(type);
}

const char *cli_show_order_name(uint32_t o)
{
    static const char *const n[] = {"CL_R", "CL_A", "CL_RG", "CL_RA", "CL_RGB", "CL_RGBA", "CL_BGRA", "CL_ARGB",
                                    "CL_INTENSITY", "CL_LUMINANCE", "CL_Rx", "CL_RGx", "CL_RGBx", "CL_DEPTH",
                                    "CL_DEPTH_STENCIL", "CL_sRGB", "CL_sRGBx", "CL_sRGBA", "CL_sBGRA", "CL_ABGR"};
    return o >= 0x10B0 && o <= 0x10C3 ? n[o - 0x10B0] : NULL;
}

const char *cli_show_ctype_name(uint32_t t)
{
    static const char *const n[] = {"CL_SNORM_INT8", "CL_SNORM_INT16", "CL_UNORM_INT8", "CL_UNORM_INT16",
                                    "CL_UNORM_SHORT_565", "CL_UNORM_SHORT_555", "CL_UNORM_INT_101010",
                                    "CL_SIGNED_INT8", "CL_SIGNED_INT16", "CL_SIGNED_INT32", "CL_UNSIGNED_INT8",
                                    "CL_UNSIGNED_INT16", "CL_UNSIGNED_INT32", "CL_HALF_FLOAT", "CL_FLOAT",
                                    "CL_UNORM_INT24", "CL_UNORM_INT_101010_2"};
    return t >= 0x10D0 && t <= 0x10E0 ? n[t - 0x10D0] : NULL;
}

/* ------------------------------------------------------------ calls */

static void cli_show_mem_created(cli_show_scan *sc, const tf_call *c, const char *fn)
{
    int sub = !strcmp(fn, "clCreateSubBuffer"), img = !strncmp(fn, "clCreateImage", 13),
        pipe = !strcmp(fn, "clCreatePipe");
    int kind = sub ? CLI_SHOW_SUBBUFFER : img ? CLI_SHOW_IMAGE : pipe ? CLI_SHOW_PIPE : CLI_SHOW_BUFFER;
    cli_show_obj *o = cli_show_add(sc, cli_show_u64(&c->ret), kind, c);
    if (!o)
        return;
    o->context = cli_show_u64(cli_show_arg(c, "context"));
    o->flags = cli_show_u64(cli_show_arg(c, "flags"));
    const tf_value *hp = cli_show_arg(c, "host_ptr");
    o->host_data = hp && (hp->type == TF_BLOB || hp->type == TF_BIN);
    if (sub) {
        const tf_value *info = cli_show_arg(c, "buffer_create_info");
        o->parent = cli_show_u64(cli_show_arg(c, "buffer"));
        o->origin = cli_show_elem(info, 0);
        o->size = cli_show_elem(info, 1);
        cli_show_obj *p = cli_show_scan_find(sc, o->parent);
        if (p)
            o->context = p->context;
        return;
    }
    if (pipe) {
        o->size = cli_show_u64(cli_show_arg(c, "pipe_packet_size")) * cli_show_u64(cli_show_arg(c, "pipe_max_packets"));
        return;
    }
    if (!img) {
        o->size = cli_show_u64(cli_show_arg(c, "size"));
        return;
    }
    const tf_value *fmt = cli_show_arg(c, "image_format"), *desc = cli_show_arg(c, "image_desc");
    o->order = (uint32_t)cli_show_elem(fmt, 0);
    o->ctype = (uint32_t)cli_show_elem(fmt, 1);
    if (desc) {
        o->img_type = (uint32_t)cli_show_elem(desc, 0);
        o->w = cli_show_elem(desc, 1);
        o->h = cli_show_elem(desc, 2);
        o->d = cli_show_elem(desc, 3);
        o->arr = cli_show_elem(desc, 4);
        o->row_pitch = cli_show_elem(desc, 5);
        o->slice_pitch = cli_show_elem(desc, 6);
        o->parent = cli_show_elem(desc, 9);
    } else {   /* clCreateImage2D / 3D */
        int three = !strcmp(fn, "clCreateImage3D");
        o->img_type = three ? 0x10F2 : 0x10F1;
        o->w = cli_show_u64(cli_show_arg(c, "image_width"));
        o->h = cli_show_u64(cli_show_arg(c, "image_height"));
        o->d = three ? cli_show_u64(cli_show_arg(c, "image_depth")) : 0;
        o->row_pitch = cli_show_u64(cli_show_arg(c, "image_row_pitch"));
        o->slice_pitch = three ? cli_show_u64(cli_show_arg(c, "image_slice_pitch")) : 0;
    }
    /* rows and slices as a replay reads them back: 1D arrays' rows are
     * their array size, 2D arrays' slices too */
    if (o->img_type == 0x10F5)        /* IMAGE1D_ARRAY */
        o->h = o->arr, o->d = 0;
    else if (o->img_type == 0x10F3)   /* IMAGE2D_ARRAY */
        o->d = o->arr;
    if (o->img_type == 0x10F4 || o->img_type == 0x10F6)   /* 1D, 1D buffer */
        o->h = 0, o->d = 0;
    o->elem = cli_show_image_elem(o->order, o->ctype);
    uint64_t dims[4] = {o->elem, o->w, o->h ? o->h : 1, o->d ? o->d : 1}, size = 1;
    for (int i = 0; i < 4; i++) {
        if (dims[i] && size > UINT64_MAX / dims[i]) {   /* a hostile trace's sizes */
            o->elem = 0;
            size = 0;
            break;
        }
        size *= dims[i];
    }
    o->size = size;
}

static int cli_show_build_add(cli_show_scan *sc, cli_show_obj *p, const tf_call *c, const char *fn)
{
    cli_show_build *b = realloc(p->builds, (p->nbuilds + 1) * sizeof *b);
    if (!b)
        return -1;
    p->builds = b;
    b = &b[p->nbuilds++];
    memset(b, 0, sizeof *b);
    b->seq = c->seq;
    b->fn = !strcmp(fn, "clBuildProgram") ? "clBuildProgram" : !strcmp(fn, "clCompileProgram") ? "clCompileProgram"
                                                                                               : "clLinkProgram";
    b->options = cli_show_strdup_val(cli_show_arg(c, "options"));
    int64_t v = 0;
    b->ret = tf_value_i64(&c->ret, &v) ? v : CLI_SHOW_NO_CODE;
    if (!strcmp(fn, "clLinkProgram")) {
        int64_t code = 0;
        b->ret = cli_show_call_failed(c, &code) ? code : 0;
    }
    const tf_value *h = tf_map_get(c->post, "headers");
    if (h && h->type == TF_MAP && h->v.map.n) {
        b->hnames = calloc(h->v.map.n, sizeof *b->hnames);
        b->hsizes = calloc(h->v.map.n, sizeof *b->hsizes);
        if (!b->hnames || !b->hsizes)
            return -1;
        for (uint32_t i = 0; i < h->v.map.n; i++) {
            const tf_value *k = &h->v.map.keys[i], *val = &h->v.map.vals[i];
            b->hnames[i] = k->type == TF_STR ? strndup(k->v.str.ptr, k->v.str.len) : strdup("?");
            b->hsizes[i] = val->type == TF_BLOB ? val->v.blob.size : val->type == TF_BIN ? val->v.str.len : 0;
            b->nheaders++;
        }
    }
    const tf_value *m = tf_map_get(c->post, "headers_missing");
    if (m && m->type == TF_ARRAY && m->v.arr.n) {
        b->missing = calloc(m->v.arr.n, sizeof *b->missing);
        if (!b->missing)
            return -1;
        for (uint32_t i = 0; i < m->v.arr.n; i++)
            if ((b->missing[b->nmissing] = cli_show_strdup_val(&m->v.arr.items[i])))
                b->nmissing++;
    }
    (void)sc;
    return 0;
}

static int cli_show_log_add(tf_reader *r, cli_show_obj *p, const tf_call *c)
{
    const tf_value *pv = cli_show_out(c, "param_value");
    void *data;
    size_t len;
    if (!pv || cli_show_value_bytes(r, pv, CLI_SHOW_LOG_MAX, &data, &len) != TF_OK)
        return 0;   /* the size query, or a log not captured */
    while (len && !((char *)data)[len - 1])
        len--;
    uint64_t dev = cli_show_u64(cli_show_arg(c, "device"));
    for (uint32_t i = 0; i < p->nlogs; i++)   /* the newest log of each device */
        if (p->logs[i].device == dev) {
            free(p->logs[i].text);
            p->logs[i].text = data;
            p->logs[i].len = len;
            p->logs[i].seq = c->seq;
            return 0;
        }
    cli_show_log *l = realloc(p->logs, (p->nlogs + 1) * sizeof *l);
    if (!l) {
        free(data);
        return -1;
    }
    p->logs = l;
    l[p->nlogs++] = (cli_show_log){c->seq, dev, data, len};
    return 0;
}

static int cli_show_bins(cli_show_obj *p, const tf_value *arr, int fetched)
{
    if (!arr || arr->type != TF_ARRAY || !arr->v.arr.n)
        return 0;
    tf_blobref *b = calloc(arr->v.arr.n, sizeof *b);
    if (!b)
        return -1;
    for (uint32_t i = 0; i < arr->v.arr.n; i++) {
        const tf_value *v = &arr->v.arr.items[i];
        if (v->type == TF_BLOB)
            b[i] = v->v.blob;
        else if (v->type == TF_BIN)
            tf_hash(v->v.str.ptr, v->v.str.len, &b[i]);
    }
    free(p->bins);
    p->bins = b;
    p->nbins = arr->v.arr.n;
    p->bins_fetched = fetched;
    return 0;
}

static int cli_show_kernel_lists(cli_show_obj *k)
{
    if (!k->arginfo)
        k->arginfo = calloc(CLI_SHOW_MAX_ARGS, sizeof *k->arginfo);
    if (!k->kargs)
        k->kargs = calloc(CLI_SHOW_MAX_ARGS, sizeof *k->kargs);
    return k->arginfo && k->kargs ? 0 : -1;
}

static void cli_show_str_into(const tf_value *v, char *dst, size_t cap)
{
    size_t n = 0;
    if (v && (v->type == TF_STR || v->type == TF_BIN)) {
        n = v->v.str.len < cap - 1 ? v->v.str.len : cap - 1;
        memcpy(dst, v->v.str.ptr, n);
    }
    dst[n] = 0;
    while (n && !dst[n - 1])
        n--;
}

/* little-endian integer of a bin (queries' param_value) */
static uint64_t cli_show_bin_u64(const tf_value *v)
{
    uint64_t u = 0;
    if (v && v->type == TF_BIN)
        for (uint32_t i = 0; i < v->v.str.len && i < 8; i++)
            u |= (uint64_t)(uint8_t)v->v.str.ptr[i] << (8 * i);
    else if (v)
        tf_value_u64(v, &u);
    return u;
}

static int cli_show_kernel_call(cli_show_scan *sc, const tf_call *c, const char *fn)
{
    cli_show_obj *k = cli_show_scan_find(sc, cli_show_u64(cli_show_arg(c, "kernel")));
    if (!k || k->kind != CLI_SHOW_KERNEL)
        return 0;
    if (!strcmp(fn, "clGetKernelInfo")) {
        uint64_t pn = cli_show_u64(cli_show_arg(c, "param_name"));
        const tf_value *pv = cli_show_out(c, "param_value");
        if (pn == CLI_SHOW_CL_KERNEL_NUM_ARGS && pv && pv->type != TF_NIL)
            k->nargs = (uint32_t)cli_show_bin_u64(pv);
        else if (pn == CLI_SHOW_CL_KERNEL_FUNCTION_NAME && pv && pv->type != TF_NIL && !k->name[0])
            cli_show_str_into(pv, k->name, sizeof k->name);
        return 0;
    }
    uint64_t idx = cli_show_u64(cli_show_arg(c, !strcmp(fn, "clGetKernelArgInfo") ? "arg_indx" : "arg_index"));
    if (idx >= CLI_SHOW_MAX_ARGS || cli_show_kernel_lists(k))
        return idx >= CLI_SHOW_MAX_ARGS ? 0 : -1;
    if (idx + 1 > k->nargs)
        k->nargs = (uint32_t)idx + 1;
    if (!strcmp(fn, "clGetKernelArgInfo")) {
        cli_show_arginfo *a = &k->arginfo[idx];
        const tf_value *pv = cli_show_out(c, "param_value");
        if (!pv || pv->type == TF_NIL)
            return 0;
        switch (cli_show_u64(cli_show_arg(c, "param_name"))) {
        case CLI_SHOW_CL_KERNEL_ARG_NAME: cli_show_str_into(pv, a->name, sizeof a->name); a->have_name = 1; break;
        case CLI_SHOW_CL_KERNEL_ARG_TYPE_NAME: cli_show_str_into(pv, a->type, sizeof a->type); a->have_type = 1; break;
        case CLI_SHOW_CL_KERNEL_ARG_ADDRESS_QUALIFIER: a->addr = cli_show_bin_u64(pv); a->have_addr = 1; break;
        case CLI_SHOW_CL_KERNEL_ARG_ACCESS_QUALIFIER: a->access = cli_show_bin_u64(pv); a->have_access = 1; break;
        case CLI_SHOW_CL_KERNEL_ARG_TYPE_QUALIFIER: a->tq = cli_show_bin_u64(pv); a->have_tq = 1; break;
        default: break;
        }
        return 0;
    }
    cli_show_karg *ka = &k->kargs[idx];
    memset(ka, 0, sizeof *ka);
    const tf_value *v = cli_show_arg(c, "arg_value");
    ka->size = cli_show_u64(cli_show_arg(c, "arg_size"));
    if (!strcmp(fn, "clSetKernelArgSVMPointer")) {
        ka->set = 4;
        ka->id = cli_show_u64(v);
    } else if (!v || v->type == TF_NIL) {
        ka->set = 3;
    } else if (v->type == TF_UINT || v->type == TF_INT) {
        ka->set = 2;
        ka->id = cli_show_u64(v);
    } else {
        ka->set = 1;
        if (v->type == TF_BIN)
            memcpy(ka->bytes, v->v.str.ptr, v->v.str.len < sizeof ka->bytes ? v->v.str.len : sizeof ka->bytes);
    }
    return 0;
}

static int cli_show_call(tf_reader *r, cli_show_scan *sc, const tf_call *c)
{
    const char *fn = c->sig && c->sig->name ? c->sig->name : "";
    int64_t code;
    if (cli_show_call_failed(c, &code)) {
        if (sc->nfails == sc->capfails) {
            if (sc->capfails >= CLI_SHOW_FAILS_MAX)
                return 0;
            size_t cap = sc->capfails ? sc->capfails * 2 : 64;
            cli_show_fail *f = realloc(sc->fails, cap * sizeof *f);
            if (!f)
                return -1;
            sc->fails = f;
            sc->capfails = cap;
        }
        cli_show_fail *f = &sc->fails[sc->nfails++];
        f->seq = c->seq;
        snprintf(f->fn, sizeof f->fn, "%s", fn);
        f->code = code;
        if (strcmp(fn, "clBuildProgram") && strcmp(fn, "clCompileProgram"))
            return 0;   /* a failed build is still a build (its log tells why) */
    }
    if (!c->complete)
        return 0;
    if (!strncmp(fn, "clCreateBuffer", 14) || !strcmp(fn, "clCreateSubBuffer") || !strncmp(fn, "clCreateImage", 13) ||
        !strcmp(fn, "clCreatePipe")) {
        cli_show_mem_created(sc, c, fn);
    } else if (!strcmp(fn, "clSVMAlloc")) {
        cli_show_obj *o = cli_show_add(sc, cli_show_u64(&c->ret), CLI_SHOW_SVM, c);
        if (o) {
            o->context = cli_show_u64(cli_show_arg(c, "context"));
            o->flags = cli_show_u64(cli_show_arg(c, "flags"));
            o->size = cli_show_u64(cli_show_arg(c, "size"));
        }
    } else if (!strncmp(fn, "clCreateProgramWith", 19) || !strcmp(fn, "clLinkProgram")) {
        cli_show_obj *p = cli_show_add(sc, cli_show_u64(&c->ret), CLI_SHOW_PROGRAM, c);
        if (!p)
            return 0;
        p->context = cli_show_u64(cli_show_arg(c, "context"));
        const tf_value *src = cli_show_arg(c, !strcmp(fn, "clCreateProgramWithIL") ? "il" : "strings");
        if (src && !strcmp(fn, "clCreateProgramWithSource")) {
            void *d;
            size_t n;
            if (cli_show_value_bytes(r, src, CLI_SHOW_SOURCE_MAX, &d, &n) == TF_OK) {
                free(p->source);
                p->source = d;
                p->source_len = n;
            }
        } else if (src && !strcmp(fn, "clCreateProgramWithIL") && (src->type == TF_BLOB || src->type == TF_BIN)) {
            tf_value a = {.type = TF_ARRAY, .v.arr = {src, 1}};
            if (cli_show_bins(p, &a, 0))
                return -1;
        } else if (!strcmp(fn, "clCreateProgramWithBinary") && cli_show_bins(p, cli_show_arg(c, "binaries"), 0)) {
            return -1;
        }
        if (!strcmp(fn, "clLinkProgram") && cli_show_build_add(sc, p, c, fn))
            return -1;
    } else if (!strcmp(fn, "clBuildProgram") || !strcmp(fn, "clCompileProgram")) {
        cli_show_obj *p = cli_show_scan_find(sc, cli_show_u64(cli_show_arg(c, "program")));
        if (p && p->kind == CLI_SHOW_PROGRAM && cli_show_build_add(sc, p, c, fn))
            return -1;
    } else if (!strcmp(fn, "clGetProgramBuildInfo")) {
        cli_show_obj *p = cli_show_scan_find(sc, cli_show_u64(cli_show_arg(c, "program")));
        if (p && p->kind == CLI_SHOW_PROGRAM && cli_show_u64(cli_show_arg(c, "param_name")) == CLI_SHOW_CL_PROGRAM_BUILD_LOG &&
            cli_show_log_add(r, p, c))
            return -1;
    } else if (!strcmp(fn, "clGetProgramInfo")) {
        cli_show_obj *p = cli_show_scan_find(sc, cli_show_u64(cli_show_arg(c, "program")));
        uint64_t pn = cli_show_u64(cli_show_arg(c, "param_name"));
        if (p && p->kind == CLI_SHOW_PROGRAM && pn == CLI_SHOW_CL_PROGRAM_BINARIES && !p->nbins &&
            cli_show_bins(p, tf_map_get(c->post, "binaries"), 1))
            return -1;
        if (p && p->kind == CLI_SHOW_PROGRAM && pn == CLI_SHOW_CL_PROGRAM_KERNEL_NAMES)
            cli_show_str_into(cli_show_out(c, "param_value"), p->kernel_names, sizeof p->kernel_names);
    } else if (!strcmp(fn, "clCreateKernel") || !strcmp(fn, "clCloneKernel")) {
        cli_show_obj *k = cli_show_add(sc, cli_show_u64(&c->ret), CLI_SHOW_KERNEL, c);
        if (!k)
            return 0;
        if (!strcmp(fn, "clCreateKernel")) {
            k->program = cli_show_u64(cli_show_arg(c, "program"));
            cli_show_str_into(cli_show_arg(c, "kernel_name"), k->name, sizeof k->name);
        } else {
            cli_show_obj *src = cli_show_scan_find(sc, cli_show_u64(cli_show_arg(c, "source_kernel")));
            if (src && src->kind == CLI_SHOW_KERNEL) {
                k->program = src->program;
                memcpy(k->name, src->name, sizeof k->name);
            }
        }
    } else if (!strcmp(fn, "clCreateKernelsInProgram")) {
        const tf_value *ks = cli_show_out(c, "kernels");
        for (uint32_t i = 0; ks && ks->type == TF_ARRAY && i < ks->v.arr.n; i++) {
            cli_show_obj *k = cli_show_add(sc, cli_show_u64(&ks->v.arr.items[i]), CLI_SHOW_KERNEL, c);
            if (k)
                k->program = cli_show_u64(cli_show_arg(c, "program"));
        }
    } else if (!strcmp(fn, "clGetKernelArgInfo") || !strcmp(fn, "clSetKernelArg") ||
               !strcmp(fn, "clSetKernelArgSVMPointer") || !strcmp(fn, "clGetKernelInfo")) {
        if (cli_show_kernel_call(sc, c, fn))
            return -1;
    } else if (!strncmp(fn, "clRetain", 8) || !strncmp(fn, "clRelease", 9) || !strcmp(fn, "clSVMFree")) {
        const tf_value *h = c->sig && c->sig->nparams ? &c->args[c->sig->nparams == 1 ? 0 : 1] : NULL;
        cli_show_obj *o = cli_show_scan_find(sc, cli_show_u64(h));
        if (!o || o->release_seq)
            return 0;
        int kind_ok = (!strcmp(fn, "clRetainMemObject") || !strcmp(fn, "clReleaseMemObject"))
                          ? o->kind <= CLI_SHOW_PIPE
                      : (!strcmp(fn, "clRetainProgram") || !strcmp(fn, "clReleaseProgram")) ? o->kind == CLI_SHOW_PROGRAM
                      : (!strcmp(fn, "clRetainKernel") || !strcmp(fn, "clReleaseKernel")) ? o->kind == CLI_SHOW_KERNEL
                      : !strcmp(fn, "clSVMFree") ? o->kind == CLI_SHOW_SVM
                                                 : 0;
        if (!kind_ok)
            return 0;
        o->refs += fn[2] == 'R' && fn[4] == 't' ? 1 : -1;   /* clRetain... : clRelease... / clSVMFree */
        if (!strcmp(fn, "clSVMFree") || o->refs <= 0)
            o->release_seq = c->seq;
    }
    return 0;
}

tf_status cli_show_scan_run(tf_reader *r, cli_show_scan *sc)
{
    tf_status s = tf_reader_rewind(r);
    tf_item it;
    while (s == TF_OK && (s = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type != TF_ITEM_CALL)
            continue;
        sc->calls++;
        if (it.u.call.seq > sc->last_seq)
            sc->last_seq = it.u.call.seq;
        if (cli_show_call(r, sc, &it.u.call)) {
            snprintf(sc->err, sizeof sc->err, "out of memory");
            return TF_ERR_NOMEM;
        }
    }
    if (s != TF_END) {
        snprintf(sc->err, sizeof sc->err, "%s", tf_reader_error(r));
        return s;
    }
    return TF_OK;
}

void cli_show_scan_free(cli_show_scan *sc)
{
    for (size_t i = 0; i < sc->n; i++) {
        cli_show_obj *o = &sc->objs[i];
        free(o->source);
        free(o->bins);
        for (uint32_t b = 0; b < o->nbuilds; b++) {
            cli_show_build *x = &o->builds[b];
            free(x->options);
            for (uint32_t h = 0; h < x->nheaders; h++)
                free(x->hnames[h]);
            for (uint32_t h = 0; h < x->nmissing; h++)
                free(x->missing[h]);
            free(x->hnames);
            free(x->hsizes);
            free(x->missing);
        }
        free(o->builds);
        for (uint32_t l = 0; l < o->nlogs; l++)
            free(o->logs[l].text);
        free(o->logs);
        free(o->arginfo);
        free(o->kargs);
    }
    free(sc->objs);
    free(sc->slots);
    free(sc->fails);
    memset(sc, 0, sizeof *sc);
}
