/* diff_call.c — one pair of calls for `clrr diff`: function, completion,
 * return value, inputs and outputs per parameter kind, and the extra maps
 * (pre: data the application wrote; post: read maps).
 *
 * What is compared: values, strings, arrays, property lists and structs
 * exactly; handles as ids; data (bins, blobs) by hash and size, then byte by
 * byte (inputs) or within the tolerance (read-backs); user data and pointer
 * identities never (addresses differ between runs). Query calls (clGet*)
 * without --queries: only what is asked (handles and selectors), not sizes,
 * results or return values, which depend on the device. */
#include "tools/clrr/diff_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const tf_value cli_diff_nil = { TF_NIL, { 0 } };

/* ------------------------------------------------------------ text */

/* How a value is written by cli_diff_value_text(). */
typedef enum { CLI_DIFF_AS_PARAM, CLI_DIFF_AS_RET, CLI_DIFF_AS_VALUE, CLI_DIFF_AS_JSON } cli_diff_as;

/* @p v written @p how, into a new string (NULL when out of memory). */
static char *cli_diff_value_text(const tf_sig *sig, uint32_t i, cli_diff_as how, const tf_value *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    switch (how) {
    case CLI_DIFF_AS_PARAM: cli_print_param(f, sig, i, v); break;
    case CLI_DIFF_AS_RET: cli_print_ret(f, sig, v); break;
    case CLI_DIFF_AS_VALUE: cli_print_value(f, v); break;
    case CLI_DIFF_AS_JSON: cli_json_value(f, v); break;
    }
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ------------------------------------------------------------ values */

static int cli_diff_num_eq(const tf_value *a, const tf_value *b)
{
    int64_t x, y;
    uint64_t u, w;
    if (tf_value_u64(a, &u) && tf_value_u64(b, &w))
        return u == w;
    if (tf_value_i64(a, &x) && tf_value_i64(b, &y))
        return x == y;
    return 0;
}

static int cli_diff_key_eq(const tf_value *k, const tf_value *l)
{
    if (k->type == TF_STR && l->type == TF_STR)
        return k->v.str.len == l->v.str.len && !memcmp(k->v.str.ptr, l->v.str.ptr, k->v.str.len);
    return 0;
}

/* Value of key @p k (a string value) in map @p m, or NULL. */
static const tf_value *cli_diff_map_find(const tf_value *m, const tf_value *k)
{
    for (uint32_t i = 0; m && m->type == TF_MAP && i < m->v.map.n; i++)
        if (cli_diff_key_eq(&m->v.map.keys[i], k))
            return &m->v.map.vals[i];
    return NULL;
}

/* Finds the first pair of sub-values where @p a and @p b differ.
 * @return 1 (with *xa and *xb set) when they differ, 0 when equal. */
static int cli_diff_value_first(const tf_value *a, const tf_value *b, const tf_value **xa,
                                const tf_value **xb, int depth)
{
    *xa = a;
    *xb = b;
    int ints = (a->type == TF_INT || a->type == TF_UINT) && (b->type == TF_INT || b->type == TF_UINT);
    if (ints)
        return !cli_diff_num_eq(a, b);
    if (a->type != b->type)
        return 1;
    switch (a->type) {
    case TF_NIL: return 0;
    case TF_BOOL: return !a->v.b != !b->v.b;
    case TF_F64:
        return memcmp(&a->v.f, &b->v.f, sizeof a->v.f) && !(a->v.f != a->v.f && b->v.f != b->v.f);
    case TF_STR:
    case TF_BIN:
        return a->v.str.len != b->v.str.len ||
               (a->v.str.len && memcmp(a->v.str.ptr, b->v.str.ptr, a->v.str.len));
    case TF_BLOB:
        return a->v.blob.size != b->v.blob.size ||
               memcmp(a->v.blob.hash, b->v.blob.hash, sizeof a->v.blob.hash);
    case TF_ARRAY:
        if (a->v.arr.n != b->v.arr.n || depth > 64)
            return a->v.arr.n != b->v.arr.n;
        for (uint32_t i = 0; i < a->v.arr.n; i++)
            if (cli_diff_value_first(&a->v.arr.items[i], &b->v.arr.items[i], xa, xb, depth + 1))
                return 1;
        *xa = a;
        *xb = b;
        return 0;
    case TF_MAP:
        if (a->v.map.n != b->v.map.n || depth > 64)
            return a->v.map.n != b->v.map.n;
        for (uint32_t i = 0; i < a->v.map.n; i++) {
            const tf_value *k = &a->v.map.keys[i], *vb = cli_diff_map_find(b, k);
            if (!vb && k->type == TF_STR) {
                *xa = a;
                *xb = b;
                return 1;
            }
            if (vb && cli_diff_value_first(&a->v.map.vals[i], vb, xa, xb, depth + 1))
                return 1;
        }
        *xa = a;
        *xb = b;
        return 0;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------ one value */

/* Where a compared value sits in the call. */
typedef struct cli_diff_at {
    const char *what;          /* name for the report */
    cli_diff_as how;               /* how to print it */
    uint32_t param;            /* parameter index (CLI_DIFF_AS_PARAM) */
    int output, readback, code;
} cli_diff_at;

static void cli_diff_found_init(cli_diff_found *f, const cli_diff_ctx *d, const tf_call *ca,
                                const tf_call *cb, const cli_diff_at *at)
{
    memset(f, 0, sizeof *f);
    f->pos = d->pos;
    f->seq_a = ca->seq;
    f->seq_b = cb->seq;
    f->fn_a = ca->sig->name;
    f->fn_b = cb->sig->name;
    f->output = at->output;
    snprintf(f->what, sizeof f->what, "%s", at->what);
}

/* Compares one value of both calls and records a difference.
 * @return 0 (equal or recorded), -1 on error. */
static int cli_diff_one(cli_diff_ctx *d, cli_diff_slot *s, const tf_call *ca, const tf_call *cb,
                        const cli_diff_at *at, const tf_value *va, const tf_value *vb)
{
    int da = cli_diff_is_data(va), db = cli_diff_is_data(vb);
    if (at->readback && (da || db)) {
        if (!da || !db) {
            d->uncompared++;   /* captured on one side only */
            return 0;
        }
        d->readbacks++;
    }
    /* data not captured (false) on either side: nothing to compare */
    if (at->param != UINT32_MAX && at->how == CLI_DIFF_AS_PARAM &&
        ca->sig->params[at->param].kind == TF_KIND_BLOB &&
        ((va->type == TF_BOOL && !va->v.b && db) || (vb->type == TF_BOOL && !vb->v.b && da)))
        return 0;
    const tf_value *xa = va, *xb = vb;
    /* a hashed read-back (a map) is compared whole, by hash (diff_data.c) */
    int hashed = da && db && (tf_value_hashref(va, NULL) || tf_value_hashref(vb, NULL));
    if (!hashed && !cli_diff_value_first(va, vb, &xa, &xb, 0))
        return 0;
    cli_diff_found f;
    cli_diff_found_init(&f, d, ca, cb, at);
    if (cli_diff_is_data(xa) && cli_diff_is_data(xb)) {
        int eq = cli_diff_data_cmp(d, xa, xb, at->readback, &f);
        if (eq)
            return eq < 0 ? -1 : 0;
        f.kind = at->code ? CLI_DIFF_CODE : CLI_DIFF_DATA;
        if (at->readback && s) {
            f.object = s->object;
            memcpy(f.objkind, s->objkind, sizeof f.objkind);
            memcpy(f.writers, s->writers, sizeof f.writers);
        }
    } else {
        f.kind = at->code ? CLI_DIFF_CODE : CLI_DIFF_VALUE;
        char *ta = cli_diff_value_text(ca->sig, at->param, at->how, va);
        char *tb = cli_diff_value_text(ca->sig, at->param, at->how, vb);
        char *both = NULL;
        if (ta && tb && asprintf(&both, "A %s B %s", ta, tb) > 0)
            cli_diff_copy_cut(f.text, sizeof f.text, both, strlen(both));
        free(both);
        free(ta);
        free(tb);
        f.a_json = cli_diff_value_text(NULL, 0, CLI_DIFF_AS_JSON, va);
        f.b_json = cli_diff_value_text(NULL, 0, CLI_DIFF_AS_JSON, vb);
    }
    return cli_diff_add(d, &f);
}

/* ------------------------------------------------------------ parameters */

static int cli_diff_is_query(const char *fn)
{
    return !strncmp(fn, "clGet", 5);
}

/* Program code and build options: differences are notes (a changed kernel
 * is what one compares results for). */
static int cli_diff_is_code(const char *fn, const tf_param *p)
{
    if (!strncmp(fn, "clCreateProgramWith", 19))
        return p->kind != TF_KIND_HANDLE && p->dir != TF_DIR_OUT;
    return p->name && !strcmp(p->name, "options") &&
           (!strcmp(fn, "clBuildProgram") || !strcmp(fn, "clCompileProgram") ||
            !strcmp(fn, "clLinkProgram"));
}

/* Inputs of a query that follow from earlier answers (buffer sizes). */
static int cli_diff_is_size(const tf_param *p)
{
    size_t n = p->name ? strlen(p->name) : 0;
    return p->kind == TF_KIND_VALUE && n &&
           ((n >= 5 && !strcmp(p->name + n - 5, "_size")) || !strcmp(p->name, "num_entries"));
}

/* Index of B's parameter matching A's parameter @p i, or -1. */
static int cli_diff_param_b(const tf_sig *sa, const tf_sig *sb, uint32_t i)
{
    const char *name = sa->params[i].name ? sa->params[i].name : "";
    if (i < sb->nparams && sb->params[i].name && !strcmp(sb->params[i].name, name) &&
        sb->params[i].kind == sa->params[i].kind)
        return (int)i;
    for (uint32_t j = 0; j < sb->nparams; j++)
        if (sb->params[j].name && !strcmp(sb->params[j].name, name) &&
            sb->params[j].kind == sa->params[i].kind)
            return (int)j;
    return -1;
}

static const tf_value *cli_diff_val(const tf_value *vals, uint32_t i)
{
    return vals ? &vals[i] : &cli_diff_nil;
}

static int cli_diff_params(cli_diff_ctx *d, cli_diff_slot *s, const tf_call *ca,
                           const tf_call *cb, int output, int query)
{
    const tf_sig *sa = ca->sig;
    const tf_value *va = output ? ca->outs : ca->args, *vb = output ? cb->outs : cb->args;
    char what[64];
    for (uint32_t i = 0; i < sa->nparams; i++) {
        const tf_param *p = &sa->params[i];
        int j = cli_diff_param_b(sa, cb->sig, i);
        if (j < 0 || p->kind == TF_KIND_USERDATA || p->kind == TF_KIND_PTR)
            continue;
        if (query && cli_diff_is_size(p))
            continue;
        const tf_value *x = cli_diff_val(va, i), *y = cli_diff_val(vb, (uint32_t)j);
        /* an integer in a data slot is an address, except object ids */
        if (p->kind == TF_KIND_BLOB && x->type == TF_UINT && y->type == TF_UINT &&
            !(!strcmp(sa->name, "clSetKernelArg") && p->name && !strcmp(p->name, "arg_value")))
            continue;
        snprintf(what, sizeof what, output ? "%s (output)" : "%s", p->name ? p->name : "?");
        cli_diff_at at = { what, CLI_DIFF_AS_PARAM, i, output, 0, cli_diff_is_code(sa->name, p) };
        if (output && p->kind == TF_KIND_BLOB && !cli_diff_is_query(sa->name)) {
            int64_t ret = 0;
            at.readback = 1;
            at.what = p->name ? p->name : "?";
            int ok = ca->ret.type == TF_NIL || (tf_value_i64(&ca->ret, &ret) && ret == 0);
            if (x->type == TF_NIL && y->type == TF_NIL && ok)
                s->expect = 1;   /* a read that completes later: DATA */
            if (ok && (x->type == TF_NIL) != (y->type == TF_NIL) && cli_diff_is_data(x->type == TF_NIL ? y : x)) {
                /* captured at the call on one side, later (DATA) on the
                   other (a read-back recorded when its command completed,
                   or from a staged read's block): the inline one waits for
                   the other's DATA as if it were late too */
                int side = x->type == TF_NIL;
                tf_data late = {.seq = side ? cb->seq : ca->seq, .key = p->name ? p->name : "?",
                                .value = side ? *y : *x};
                s->expect = 1;
                if (cli_diff_late_data(d, side, &late))
                    return -1;
                continue;
            }
        }
        if (cli_diff_one(d, s, ca, cb, &at, x, y))
            return -1;
    }
    return 0;
}

/* The extra maps: @p post selects read-back semantics for "data". */
static int cli_diff_maps(cli_diff_ctx *d, cli_diff_slot *s, const tf_call *ca, const tf_call *cb,
                         const tf_value *ma, const tf_value *mb, int post)
{
    char what[64];
    const char *prefix = post ? "post." : "pre.";
    for (int pass = 0; pass < 2; pass++) {
        const tf_value *m = pass ? mb : ma, *o = pass ? ma : mb;
        for (uint32_t i = 0; m && m->type == TF_MAP && i < m->v.map.n; i++) {
            const tf_value *k = &m->v.map.keys[i];
            if (k->type != TF_STR)
                continue;
            int is_data = k->v.str.len == 4 && !memcmp(k->v.str.ptr, "data", 4);
            if (post && !d->queries && k->v.str.len == 7 && !memcmp(k->v.str.ptr, "handles", 7))
                continue;   /* objects a query answered */
            snprintf(what, sizeof what, "%s%.*s", prefix, (int)(k->v.str.len > 40 ? 40 : k->v.str.len),
                     k->v.str.ptr);
            const tf_value *other = cli_diff_map_find(o, k);
            cli_diff_at at = { what, CLI_DIFF_AS_VALUE, UINT32_MAX, post, post && is_data, 0 };
            if (!other) {
                cli_diff_found f;
                cli_diff_found_init(&f, d, ca, cb, &at);
                f.kind = CLI_DIFF_VALUE;
                snprintf(f.text, sizeof f.text, "only in %s", pass ? "B" : "A");
                if (cli_diff_add(d, &f))
                    return -1;
                continue;
            }
            if (pass)
                continue;   /* keys on both sides were compared in the first pass */
            if (cli_diff_one(d, s, ca, cb, &at, &m->v.map.vals[i], other))
                return -1;
        }
    }
    return 0;
}

/* The memory object a read-back call reads, and what kind it is. */
static void cli_diff_read_object(const tf_call *c, cli_diff_slot *s)
{
    const char *fn = c->sig->name;
    if (strncmp(fn, "clEnqueueRead", 13) && strncmp(fn, "clEnqueueMap", 12))
        return;
    for (uint32_t i = 0; c->args && i < c->sig->nparams; i++) {
        const char *n = c->sig->params[i].name;
        uint64_t id;
        if (!n || c->sig->params[i].kind != TF_KIND_HANDLE || (strcmp(n, "buffer") && strcmp(n, "image")))
            continue;
        if (c->args[i].type == TF_BOOL || !tf_value_u64(&c->args[i], &id) || !id)
            continue;
        s->object = id;
        snprintf(s->objkind, sizeof s->objkind, "%s", n);
        return;
    }
}

static int cli_diff_ret_compared(const tf_sig *sig)
{
    const char *rt = sig->ret_type ? sig->ret_type : "";
    return !strchr(rt, '*') || cli_type_is_handle(rt);   /* not a host pointer */
}

int cli_diff_calls(cli_diff_ctx *d, const tf_call *ca, const tf_call *cb)
{
    static const tf_sig none = { 0, "?", "void", 0, NULL };
    tf_call a = *ca, b = *cb;
    if (!a.sig || !a.sig->name)
        a.sig = &none;
    if (!b.sig || !b.sig->name)
        b.sig = &none;
    cli_diff_slot *s = &d->ring[d->pos % CLI_DIFF_RING];
    memset(s, 0, sizeof *s);
    s->pos = d->pos;
    s->seq[0] = a.seq;
    s->seq[1] = b.seq;
    s->fn = a.sig->name;
    cli_diff_format_call(&a, s->line, sizeof s->line);
    if (strcmp(a.sig->name, b.sig->name)) {
        cli_diff_found f;
        cli_diff_at at = { "function", CLI_DIFF_AS_VALUE, UINT32_MAX, 0, 0, 0 };
        cli_diff_found_init(&f, d, &a, &b, &at);
        f.kind = CLI_DIFF_SEQUENCE;
        snprintf(f.text, sizeof f.text, "A calls %s, B calls %s", a.sig->name, b.sig->name);
        char line[CLI_DIFF_LINE_CAP];
        cli_diff_format_call(&b, line, sizeof line);
        f.line_b = strdup(line);
        return cli_diff_add(d, &f) ? -1 : 0;
    }
    cli_diff_read_object(&a, s);
    if (s->object)
        cli_diff_track_writers(d->track, s->object, s->writers, sizeof s->writers);
    int query = cli_diff_is_query(a.sig->name) && !d->queries;
    int rc = 0;
    if (a.complete != b.complete) {
        cli_diff_found f;
        cli_diff_at at = { "return", CLI_DIFF_AS_VALUE, UINT32_MAX, 1, 0, 0 };
        cli_diff_found_init(&f, d, &a, &b, &at);
        f.kind = CLI_DIFF_VALUE;
        snprintf(f.text, sizeof f.text, "%s returned, %s never returned", a.complete ? "A" : "B",
                 a.complete ? "B" : "A");
        rc = cli_diff_add(d, &f);
    } else if (a.complete && !query && cli_diff_ret_compared(a.sig)) {
        cli_diff_at at = { "return value", CLI_DIFF_AS_RET, UINT32_MAX, 1, 0, 0 };
        rc = cli_diff_one(d, s, &a, &b, &at, &a.ret, &b.ret);
    }
    if (!rc)
        rc = cli_diff_params(d, s, &a, &b, 0, query);
    if (!rc)
        rc = cli_diff_maps(d, s, &a, &b, a.pre, b.pre, 0);
    if (!rc && a.complete && b.complete && !query) {
        rc = cli_diff_params(d, s, &a, &b, 1, 0);
        if (!rc)
            rc = cli_diff_maps(d, s, &a, &b, a.post, b.post, 1);
    }
    cli_diff_track_call(d->track, &a);   /* out of memory: writers stay unknown */
    return rc ? -1 : 1;
}
