/* plan_pattern_build.c — the pattern of a call (PLAN.md, "Patterns"): what
 * names it without sequence numbers, pointers or object ids. The function,
 * each input parameter that describes the work (sizes, offsets, shapes,
 * flags, strings), memory objects by role (creation order, size, flags),
 * kernels by name and program source hash, and for launches the kernel's
 * arguments as set. Data (written bytes, fill patterns) is never part of
 * it. Built straight into the canonical text — compact JSON, members sorted
 * by name, the form jansson gives with JSON_COMPACT | JSON_SORT_KEYS |
 * JSON_ENSURE_ASCII, which is how the reader canonicalizes a plan's
 * patterns (plan_pattern.c) — because this runs for every call of a run;
 * the strings written here are printable ASCII, so only '"' and '\' need
 * escaping. The same builder runs when optimizing and when a plan is
 * applied. What does not change from call to call is made once: per
 * function, its members in sorted order with their `"name":` heads and how
 * each value is made (plan_psig_of, by signature); per object, its role
 * (set at its creation, kept in the plan_obj). A launch's pattern then
 * costs a quarter of what it did (callgrind, geomatrix's launches: 12.8k
 * instructions each, 3.7k). tests/unit/test_opt_pattern.c checks the text
 * against the plan reader's canonical form on every call of the committed
 * recordings. */
#include "plan/plan_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_PAT_MAX_ARRAY 16
#define PLAN_PAT_MAX_ARGS 256
#define PLAN_PAT_MAX_STR 256
#define PLAN_PAT_MAX_FIELDS 64

typedef struct plan_sbuf {
    char *p;
    size_t n, cap;
    int oom;
} plan_sbuf;

/* Room for @p n more bytes and the NUL; 0 when out of memory. */
static int sb_grow(plan_sbuf *b, size_t n)
{
    if (b->oom)
        return 0;
    size_t cap = b->cap ? b->cap : 512;
    while (cap < b->n + n + 1)
        cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) {
        b->oom = 1;
        return 0;
    }
    b->p = q;
    b->cap = cap;
    return 1;
}

static inline int sb_room(plan_sbuf *b, size_t n)
{
    return b->n + n + 1 <= b->cap ? !b->oom : sb_grow(b, n);
}

static inline void sb_putn(plan_sbuf *b, const char *s, size_t n)
{
    if (!sb_room(b, n))
        return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static inline void sb_puts(plan_sbuf *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

static void sb_u64(plan_sbuf *b, uint64_t v)
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
static void sb_str(plan_sbuf *b, const char *s, size_t n)
{
    if (!sb_room(b, 2 * n + 2))
        return;
    char *d = b->p + b->n;
    *d++ = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            *d++ = '\\';
        *d++ = s[i];
    }
    *d++ = '"';
    *d = 0;
    b->n = (size_t)(d - b->p);
}

static void sb_hash(plan_sbuf *b, const uint8_t h[16], const char *prefix)
{
    char hex[40];
    size_t k = strlen(prefix);
    memcpy(hex, prefix, k);
    plan_hex(h, 16, hex + k);
    sb_str(b, hex, strlen(hex));
}

/* Parameters that never belong to a pattern: where and when, not what.
 * (Every parameter of every call is looked up: the first letter first.) */
static int plan_pattern_skip(const char *name)
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

/* What object @p o is, by role (members in sorted order). */
static void sb_role_make(plan_sbuf *b, const plan_track *t, const plan_obj *o)
{
    const plan_obj *p;
    switch (o->kind) {
    case PLAN_OBJ_MEM:
        sb_puts(b, "{\"flags\":");
        sb_u64(b, o->flags);
        sb_puts(b, ",\"mem\":");
        sb_u64(b, o->ordinal);
        sb_puts(b, ",\"size\":");
        sb_u64(b, o->size);
        sb_puts(b, "}");
        break;
    case PLAN_OBJ_KERNEL:
        p = plan_track_obj(t, o->program);
        sb_puts(b, "{\"kernel\":");
        sb_str(b, o->name ? o->name : "", o->name ? strlen(o->name) : 0);
        sb_puts(b, ",\"program\":");
        if (p && p->has_src)
            sb_hash(b, p->src, "");
        else
            sb_puts(b, "null");
        sb_puts(b, "}");
        break;
    case PLAN_OBJ_PROGRAM:
        sb_puts(b, "{\"program\":");
        if (o->has_src)
            sb_hash(b, o->src, "");
        else
            sb_puts(b, "null");
        sb_puts(b, "}");
        break;
    default:
        sb_puts(b, o->kind == PLAN_OBJ_QUEUE ? "{\"object\":\"queue\"}" : "{\"object\":\"other\"}");
        break;
    }
}

/* An object by its role: made once per object (a launch names each of its
 * memory arguments so, every time). */
static void sb_role(plan_sbuf *b, const plan_track *t, uint64_t id)
{
    if (!id) {
        sb_puts(b, "null");
        return;
    }
    plan_obj *o = plan_track_obj(t, id);
    if (!o) {
        sb_puts(b, "{\"object\":\"unknown\"}");
        return;
    }
    if (!o->role) {
        plan_sbuf r = {0};
        sb_role_make(&r, t, o);
        if (r.oom || r.n > UINT32_MAX) {
            free(r.p);
            b->oom = 1;
            return;
        }
        char *q = realloc(r.p, r.n + 1);   /* (kept for the object's life) */
        o->role = q ? q : r.p;
        o->nrole = (uint32_t)r.n;
    }
    sb_putn(b, o->role, o->nrole);
}

/* A plain value; 0 when it has no pattern form. */
static int sb_value(plan_sbuf *b, const tf_value *v)
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

static int sb_string(plan_sbuf *b, const tf_value *v)
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
    int printable = n <= PLAN_PAT_MAX_STR;
    for (size_t i = 0; printable && i < n; i++)
        printable = isprint((unsigned char)v->v.str.ptr[i]);
    if (printable) {
        sb_str(b, v->v.str.ptr, n);
    } else {
        uint8_t h[16];
        plan_value_hash(v, h);
        sb_hash(b, h, "xxh:");
    }
    return 1;
}

static int sb_array(plan_sbuf *b, const tf_value *v)
{
    if (v->type == TF_NIL) {
        sb_puts(b, "null");
        return 1;
    }
    if (v->type != TF_ARRAY || v->v.arr.n > PLAN_PAT_MAX_ARRAY)
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
static void sb_args(plan_sbuf *b, const plan_track *t, const plan_obj *k, int shape)
{
    sb_puts(b, "[");
    for (unsigned i = 0; i < k->nargs && i < PLAN_PAT_MAX_ARGS; i++) {
        const plan_karg *g = &k->args[i];
        if (i)
            sb_puts(b, ",");
        switch (g->kind) {
        case PLAN_KARG_MEM: sb_role(b, t, g->id); break;
        case PLAN_KARG_BYTES:
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
        case PLAN_KARG_LOCAL:
            sb_puts(b, "{\"local\":");
            sb_u64(b, g->size);
            sb_puts(b, "}");
            break;
        case PLAN_KARG_SVM: sb_puts(b, "{\"svm\":true}"); break;
        default: sb_puts(b, "null"); break;
        }
    }
    sb_puts(b, "]");
}

/* ------------------------------------------------------------ the members of a function's patterns */

/* How a member's value is made (decided once per signature, from the
 * parameter's name, kind and type). */
enum {
    PF_FUNCTION,    /* the function's name (all in the head) */
    PF_ARGS,        /* a launch's kernel arguments */
    PF_STRINGS,     /* program sources: their hash */
    PF_KARG_VALUE,  /* clSetKernelArg's value: a role, or its size */
    PF_ROLE,        /* a memory object, kernel or program: its role */
    PF_HANDLE,      /* another handle: only when NULL (null) */
    PF_VALUE,       /* a number */
    PF_STRING,      /* a string */
    PF_ARRAY        /* an array of numbers */
};

typedef struct plan_pfield {
    const char *name;         /* the member's name (sort order) */
    const char *head;         /* `"name":`, escaped */
    uint32_t nhead;
    uint16_t param;           /* the parameter */
    uint8_t cls;              /* PF_* */
} plan_pfield;

struct plan_psig {
    const tf_sig *sig;        /* whose (checked, with its name and count) */
    const char *sname;
    uint32_t nparams;
    unsigned nf;
    plan_pfield f[];           /* sorted by name; then the heads' text */
};

static int plan_type_has(const char *type, const char *const *names)
{
    for (; *names; names++)
        if (strstr(type, *names))
            return 1;
    return 0;
}

/* The class of parameter @p p of function @p fn's patterns; -1: never a member. */
static int plan_pfield_class(const char *fn, const tf_param *p)
{
    static const char *const roles[] = {"cl_mem", "cl_kernel", "cl_program", NULL};
    static const char *const handles[] = {"cl_mem", "cl_event", "cl_device", "cl_program", "cl_kernel", NULL};
    if (!(p->dir & TF_DIR_IN) || plan_pattern_skip(p->name) || strlen(p->name) > 63 || !strcmp(p->name, "args") ||
        !strcmp(p->name, "function"))
        return -1;
    if (!strcmp(p->name, "strings"))
        return PF_STRINGS;
    if (!strcmp(p->name, "arg_value") && !strcmp(fn, "clSetKernelArg"))
        return PF_KARG_VALUE;
    switch (p->kind) {
    case TF_KIND_HANDLE: return plan_type_has(p->type, roles) ? PF_ROLE : PF_HANDLE;
    case TF_KIND_VALUE: return PF_VALUE;
    case TF_KIND_STRING: return PF_STRING;
    case TF_KIND_ARRAY:
    case TF_KIND_STRUCT: return plan_type_has(p->type, handles) ? -1 : PF_ARRAY;
    default: return -1;
    }
}

/* The members signature @p s's patterns may have, sorted by name; one
 * malloc'ed block; NULL when out of memory. At most PLAN_PAT_MAX_FIELDS - 1
 * parameters (the first in the signature's order), besides `function` and
 * `args`. */
static struct plan_psig *plan_psig_make(const tf_sig *s)
{
    plan_pfield f[PLAN_PAT_MAX_FIELDS + 1];
    unsigned nf = 0;
    plan_sbuf heads = {0};
    size_t off[PLAN_PAT_MAX_FIELDS + 1];
    f[nf] = (plan_pfield){.name = "function", .cls = PF_FUNCTION};
    off[nf++] = heads.n;
    sb_str(&heads, "function", 8);
    sb_putn(&heads, ":", 1);
    sb_str(&heads, s->name, strlen(s->name));
    for (uint32_t i = 0; i < s->nparams && nf < PLAN_PAT_MAX_FIELDS; i++) {
        int cls = plan_pfield_class(s->name, &s->params[i]);
        if (cls < 0)
            continue;
        f[nf] = (plan_pfield){.name = s->params[i].name, .param = (uint16_t)i, .cls = (uint8_t)cls};
        off[nf++] = heads.n;
        sb_str(&heads, s->params[i].name, strlen(s->params[i].name));
        sb_putn(&heads, ":", 1);
    }
    if (!strcmp(s->name, "clEnqueueNDRangeKernel") || !strcmp(s->name, "clEnqueueTask")) {
        f[nf] = (plan_pfield){.name = "args", .cls = PF_ARGS};
        off[nf++] = heads.n;
        sb_puts(&heads, "\"args\":");
    }
    struct plan_psig *ps = heads.oom ? NULL : malloc(sizeof *ps + nf * sizeof *f + heads.n + 1);
    if (!ps) {
        free(heads.p);
        return NULL;
    }
    char *text = (char *)(ps->f + nf);
    memcpy(text, heads.p, heads.n + 1);
    for (unsigned i = 0; i < nf; i++) {
        f[i].head = text + off[i];
        f[i].nhead = (uint32_t)((i + 1 < nf ? off[i + 1] : heads.n) - off[i]);
    }
    free(heads.p);
    for (unsigned i = 1; i < nf; i++) {   /* by name (a dozen members at most: insertion) */
        plan_pfield x = f[i];
        unsigned j = i;
        while (j && strcmp(f[j - 1].name, x.name) > 0) {
            f[j] = f[j - 1];
            j--;
        }
        f[j] = x;
    }
    memcpy(ps->f, f, nf * sizeof *f);
    ps->sig = s;
    ps->sname = s->name;
    ps->nparams = s->nparams;
    ps->nf = nf;
    return ps;
}

/* The members of @p s's patterns, made at its first call. A slot is the
 * signature's id (a trace's ids are the recorder's, 137 functions today);
 * a signature that shares one with another (a hostile trace) is made again
 * when the other took it. A slot is trusted when it was made from this very
 * signature: a reader's signatures live as long as its tracker's calls. */
static const struct plan_psig *plan_psig_of(plan_track *t, const tf_sig *s)
{
    struct plan_psig **slot = &t->psig[s->id % PLAN_PSIG_SLOTS];
    if (*slot && (*slot)->sig == s && (*slot)->sname == s->name && (*slot)->nparams == s->nparams)
        return *slot;
    struct plan_psig *ps = plan_psig_make(s);
    if (ps) {
        free(*slot);
        *slot = ps;
    }
    return ps;
}

/* Member @p f's value into @p b; 0 when this call has none. A parameter's
 * member only when the call has its arguments (plan_track_pattern). */
static int sb_member(plan_sbuf *b, const plan_track *t, const tf_call *c, const plan_pfield *f, int shape)
{
    const tf_value *v = f->cls == PF_FUNCTION || f->cls == PF_ARGS ? NULL : &c->args[f->param];
    uint64_t id = 0, n = 0;
    switch (f->cls) {
    case PF_FUNCTION: return 1;
    case PF_ARGS: {
        plan_arg_u64(c, "kernel", &id);
        const plan_obj *k = plan_track_obj(t, id);
        if (k && k->kind == PLAN_OBJ_KERNEL)
            sb_args(b, t, k, shape);
        else
            sb_puts(b, "null");
        return 1;
    }
    case PF_STRINGS: {
        uint8_t h[16];
        if (!plan_value_hash(v, h))
            return 0;
        sb_hash(b, h, "");
        return 1;
    }
    case PF_KARG_VALUE:
        if (v->type == TF_UINT || v->type == TF_INT) {
            tf_value_u64(v, &id);
            sb_role(b, t, id);
            return 1;
        }
        plan_arg_u64(c, "arg_size", &n);
        sb_puts(b, v->type == TF_NIL ? "{\"local\":" : "{\"bytes_size\":");
        sb_u64(b, n);
        sb_puts(b, "}");
        return 1;
    case PF_ROLE:
    case PF_HANDLE:
        if (v->type == TF_NIL) {
            sb_puts(b, "null");
            return 1;
        }
        if (f->cls == PF_HANDLE || !tf_value_u64(v, &id))
            return 0;
        sb_role(b, t, id);
        return 1;
    case PF_VALUE: return sb_value(b, v);
    case PF_STRING: return sb_string(b, v);
    case PF_ARRAY: return sb_array(b, v);
    default: return 0;
    }
}

plan_status plan_track_pattern(plan_track *t, const tf_call *c, int shape, char **canon, uint64_t *key)
{
    plan_sbuf out = {0};
    *canon = NULL;
    const struct plan_psig *ps = plan_psig_of(t, c->sig);
    if (!ps)
        return PLAN_ERR_NOMEM;
    sb_putn(&out, "{", 1);
    int first = 1;
    for (unsigned i = 0; i < ps->nf; i++) {
        const plan_pfield *f = &ps->f[i];
        size_t mark = out.n;
        if (f->cls != PF_FUNCTION && f->cls != PF_ARGS && !c->args)
            continue;
        if (!first)
            sb_putn(&out, ",", 1);
        sb_putn(&out, f->head, f->nhead);
        if (!sb_member(&out, t, c, f, shape)) {
            out.n = mark;   /* (no member) */
            if (out.p)
                out.p[mark] = 0;
            continue;
        }
        first = 0;
    }
    sb_putn(&out, "}", 1);
    plan_status st = out.oom ? PLAN_ERR_NOMEM : out.n > PLAN_PATTERN_MAX ? PLAN_ERR_LIMIT : PLAN_OK;
    if (st != PLAN_OK) {
        free(out.p);
        return st;
    }
    *canon = out.p;
    *key = plan_pattern_key(out.p, out.n);
    return PLAN_OK;
}
