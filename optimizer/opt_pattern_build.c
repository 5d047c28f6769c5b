/* opt_pattern_build.c — the pattern of a call (PLAN.md, "Patterns"): what
 * names it without sequence numbers, pointers or object ids. The function,
 * each input parameter that describes the work (sizes, offsets, shapes,
 * flags, strings), memory objects by role (creation order, size, flags),
 * kernels by name and program source hash, and for launches the kernel's
 * arguments as set. Data (written bytes, fill patterns) is never part of
 * it. Built straight into the canonical text — compact JSON, members sorted
 * by name, the form jansson gives with JSON_COMPACT | JSON_SORT_KEYS |
 * JSON_ENSURE_ASCII, which is how the reader canonicalizes a plan's
 * patterns (opt_pattern.c) — because this runs for every call of a run;
 * the strings written here are printable ASCII, so only '"' and '\' need
 * escaping. The same builder runs when optimizing and when a plan is
 * applied. */
#include "optimizer/opt_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPT_PAT_MAX_ARRAY 16
#define OPT_PAT_MAX_ARGS 256
#define OPT_PAT_MAX_STR 256
#define OPT_PAT_MAX_FIELDS 64

typedef struct opt_sbuf {
    char *p;
    size_t n, cap;
    int oom;
} opt_sbuf;

static void sb_putn(opt_sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 512;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_puts(opt_sbuf *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

static void sb_u64(opt_sbuf *b, uint64_t v)
{
    char t[24], *e = t + sizeof t, *q = e;   /* (this runs for every call of a run: no printf) */
    int quoted = v > (uint64_t)INT64_MAX;
    if (quoted)
        *--q = '"';
    do
        *--q = (char)('0' + v % 10);
    while (v /= 10);
    if (quoted)
        *--q = '"';
    sb_putn(b, q, (size_t)(e - q));
}

/* A quoted string of printable ASCII bytes. */
static void sb_str(opt_sbuf *b, const char *s, size_t n)
{
    sb_putn(b, "\"", 1);
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != '"' && s[j] != '\\')
            j++;
        sb_putn(b, s + i, j - i);   /* the run up to the next byte to escape */
        if (j < n) {
            char esc[2] = {'\\', s[j]};
            sb_putn(b, esc, 2);
            j++;
        }
        i = j;
    }
    sb_putn(b, "\"", 1);
}

static void sb_hash(opt_sbuf *b, const uint8_t h[16], const char *prefix)
{
    char hex[40];
    size_t k = strlen(prefix);
    memcpy(hex, prefix, k);
    opt_hex(h, 16, hex + k);
    sb_str(b, hex, strlen(hex));
}

/* Parameters that never belong to a pattern: where and when, not what.
 * (Every parameter of every call is looked up: the first letter first.) */
static int opt_pattern_skip(const char *name)
{
    static const char *const skip[] = {"command_queue", "context", "device", "platform", "num_events_in_wait_list",
                                       "event_wait_list", "event", "errcode_ret", "user_data", "pfn_notify",
                                       "num_devices", "device_list", "properties", "host_ptr", "ptr", "pattern",
                                       "fill_color", "mapped_ptr", "binaries", "lengths", "binary_status"};
    if (!strchr("cdpneuhfmbl", name[0]))
        return 0;
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (skip[i][0] == name[0] && !strcmp(name, skip[i]))
            return 1;
    return 0;
}

/* An object by its role (members in sorted order). */
static void sb_role(opt_sbuf *b, const opt_track *t, uint64_t id)
{
    if (!id) {
        sb_puts(b, "null");
        return;
    }
    const opt_obj *o = opt_track_obj(t, id), *p;
    if (!o) {
        sb_puts(b, "{\"object\":\"unknown\"}");
        return;
    }
    switch (o->kind) {
    case OPT_OBJ_MEM:
        sb_puts(b, "{\"flags\":");
        sb_u64(b, o->flags);
        sb_puts(b, ",\"mem\":");
        sb_u64(b, o->ordinal);
        sb_puts(b, ",\"size\":");
        sb_u64(b, o->size);
        sb_puts(b, "}");
        break;
    case OPT_OBJ_KERNEL:
        p = opt_track_obj(t, o->program);
        sb_puts(b, "{\"kernel\":");
        sb_str(b, o->name ? o->name : "", o->name ? strlen(o->name) : 0);
        sb_puts(b, ",\"program\":");
        if (p && p->has_src)
            sb_hash(b, p->src, "");
        else
            sb_puts(b, "null");
        sb_puts(b, "}");
        break;
    case OPT_OBJ_PROGRAM:
        sb_puts(b, "{\"program\":");
        if (o->has_src)
            sb_hash(b, o->src, "");
        else
            sb_puts(b, "null");
        sb_puts(b, "}");
        break;
    default:
        sb_puts(b, o->kind == OPT_OBJ_QUEUE ? "{\"object\":\"queue\"}" : "{\"object\":\"other\"}");
        break;
    }
}

/* A plain value; 0 when it has no pattern form. */
static int sb_value(opt_sbuf *b, const tf_value *v)
{
    char t[48];
    switch (v->type) {
    case TF_NIL: sb_puts(b, "null"); return 1;
    case TF_BOOL: sb_puts(b, v->v.b ? "1" : "0"); return 1;
    case TF_UINT: sb_u64(b, v->v.u); return 1;
    case TF_INT:
        snprintf(t, sizeof t, v->v.i >= 0 ? "%lld" : "\"%lld\"", (long long)v->v.i);
        sb_puts(b, t);
        return 1;
    case TF_F64:
        snprintf(t, sizeof t, "%.17g", v->v.f);
        sb_str(b, t, strlen(t));
        return 1;
    default: return 0;
    }
}

static int sb_string(opt_sbuf *b, const tf_value *v)
{
    if (v->type == TF_NIL) {
        sb_puts(b, "null");
        return 1;
    }
    if (v->type != TF_STR && v->type != TF_BIN)
        return 0;
    size_t n = v->v.str.len;
    while (n && !v->v.str.ptr[n - 1])
        n--;
    int printable = n <= OPT_PAT_MAX_STR;
    for (size_t i = 0; printable && i < n; i++)
        printable = isprint((unsigned char)v->v.str.ptr[i]);
    if (printable) {
        sb_str(b, v->v.str.ptr, n);
    } else {
        uint8_t h[16];
        opt_value_hash(v, h);
        sb_hash(b, h, "xxh:");
    }
    return 1;
}

static int sb_array(opt_sbuf *b, const tf_value *v)
{
    if (v->type == TF_NIL) {
        sb_puts(b, "null");
        return 1;
    }
    if (v->type != TF_ARRAY || v->v.arr.n > OPT_PAT_MAX_ARRAY)
        return 0;
    for (uint32_t i = 0; i < v->v.arr.n; i++) {   /* only plain values */
        int ty = v->v.arr.items[i].type;
        if (ty != TF_NIL && ty != TF_BOOL && ty != TF_UINT && ty != TF_INT && ty != TF_F64)
            return 0;
    }
    sb_puts(b, "[");
    for (uint32_t i = 0; i < v->v.arr.n; i++) {
        if (i)
            sb_puts(b, ",");
        sb_value(b, &v->v.arr.items[i]);
    }
    sb_puts(b, "]");
    return 1;
}

/* The arguments of a launch, as set. */
static void sb_args(opt_sbuf *b, const opt_track *t, const opt_obj *k, int shape)
{
    sb_puts(b, "[");
    for (unsigned i = 0; i < k->nargs && i < OPT_PAT_MAX_ARGS; i++) {
        const opt_karg *g = &k->args[i];
        if (i)
            sb_puts(b, ",");
        switch (g->kind) {
        case OPT_KARG_MEM: sb_role(b, t, g->id); break;
        case OPT_KARG_BYTES:
            if (shape || !g->bytes) {
                sb_puts(b, "{\"bytes_size\":");
                sb_u64(b, g->size);
                sb_puts(b, "}");
            } else {
                sb_puts(b, "{\"bytes\":");
                sb_str(b, g->bytes, strlen(g->bytes));
                sb_puts(b, "}");
            }
            break;
        case OPT_KARG_LOCAL:
            sb_puts(b, "{\"local\":");
            sb_u64(b, g->size);
            sb_puts(b, "}");
            break;
        case OPT_KARG_SVM: sb_puts(b, "{\"svm\":true}"); break;
        default: sb_puts(b, "null"); break;
        }
    }
    sb_puts(b, "]");
}

/* One member's value into @p b; 0 when the parameter has no pattern form. */
static int sb_param(opt_sbuf *b, const opt_track *t, const tf_call *c, const tf_param *p, const tf_value *v)
{
    if (!strcmp(p->name, "strings")) {
        uint8_t h[16];
        if (!opt_value_hash(v, h))
            return 0;
        sb_hash(b, h, "");
        return 1;
    }
    if (!strcmp(p->name, "arg_value") && !strcmp(c->sig->name, "clSetKernelArg")) {
        uint64_t id = 0, n = 0;
        if (v->type == TF_UINT || v->type == TF_INT) {
            tf_value_u64(v, &id);
            sb_role(b, t, id);
            return 1;
        }
        opt_arg_u64(c, "arg_size", &n);
        sb_puts(b, v->type == TF_NIL ? "{\"local\":" : "{\"bytes_size\":");
        sb_u64(b, n);
        sb_puts(b, "}");
        return 1;
    }
    switch (p->kind) {
    case TF_KIND_HANDLE: {
        uint64_t id = 0;
        if (v->type == TF_NIL) {
            sb_puts(b, "null");
            return 1;
        }
        if (!strstr(p->type, "cl_mem") && !strstr(p->type, "cl_kernel") && !strstr(p->type, "cl_program"))
            return 0;
        if (!tf_value_u64(v, &id))
            return 0;
        sb_role(b, t, id);
        return 1;
    }
    case TF_KIND_VALUE: return sb_value(b, v);
    case TF_KIND_STRING: return sb_string(b, v);
    case TF_KIND_ARRAY:
    case TF_KIND_STRUCT:
        if (strstr(p->type, "cl_mem") || strstr(p->type, "cl_event") || strstr(p->type, "cl_device") ||
            strstr(p->type, "cl_program") || strstr(p->type, "cl_kernel"))
            return 0;
        return sb_array(b, v);
    default: return 0;
    }
}

typedef struct opt_field {
    const char *name;
    size_t off, len;
} opt_field;

static int opt_field_cmp(const void *a, const void *b)
{
    return strcmp(((const opt_field *)a)->name, ((const opt_field *)b)->name);
}

opt_status opt_track_pattern(opt_track *t, const tf_call *c, int shape, char **canon, uint64_t *key)
{
    const tf_sig *s = c->sig;
    opt_sbuf vals = {0}, out = {0};
    opt_field f[OPT_PAT_MAX_FIELDS + 2];
    unsigned nf = 0;
    opt_status st = OPT_OK;
    *canon = NULL;
    f[nf].name = "function";
    f[nf].off = vals.n;
    sb_str(&vals, s->name, strlen(s->name));
    f[nf].len = vals.n - f[nf].off;
    nf++;
    for (uint32_t i = 0; c->args && i < s->nparams && nf < OPT_PAT_MAX_FIELDS; i++) {
        const tf_param *p = &s->params[i];
        if (!(p->dir & TF_DIR_IN) || opt_pattern_skip(p->name) || strlen(p->name) > 63 || !strcmp(p->name, "args") ||
            !strcmp(p->name, "function"))
            continue;
        size_t off = vals.n;
        if (!sb_param(&vals, t, c, p, &c->args[i])) {
            vals.n = off;
            continue;
        }
        f[nf++] = (opt_field){p->name, off, vals.n - off};
    }
    if (!strcmp(s->name, "clEnqueueNDRangeKernel") || !strcmp(s->name, "clEnqueueTask")) {
        uint64_t kid = 0;
        opt_arg_u64(c, "kernel", &kid);
        const opt_obj *k = opt_track_obj(t, kid);
        size_t off = vals.n;
        if (k && k->kind == OPT_OBJ_KERNEL)
            sb_args(&vals, t, k, shape);
        else
            sb_puts(&vals, "null");
        f[nf++] = (opt_field){"args", off, vals.n - off};
    }
    qsort(f, nf, sizeof *f, opt_field_cmp);
    sb_puts(&out, "{");
    for (unsigned i = 0; i < nf; i++) {
        if (i)
            sb_puts(&out, ",");
        sb_str(&out, f[i].name, strlen(f[i].name));
        sb_puts(&out, ":");
        if (!vals.oom)
            sb_putn(&out, vals.p + f[i].off, f[i].len);
    }
    sb_puts(&out, "}");
    if (vals.oom || out.oom)
        st = OPT_ERR_NOMEM;
    else if (out.n > OPT_PATTERN_MAX)
        st = OPT_ERR_LIMIT;
    free(vals.p);
    if (st != OPT_OK) {
        free(out.p);
        return st;
    }
    *canon = out.p;
    *key = opt_pattern_key(out.p, out.n);
    return OPT_OK;
}
