/* ana_model_util.c — the model's plumbing: pool allocator, id maps,
 * growable arrays, access to a call's parameters by name, kind names. */
#include "analyzer/ana_model_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ pool */

#define ANA_POOL_CHUNK ((size_t)64 << 10)

struct ana_pool_chunk {
    ana_pool_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *ana_pool_alloc(ana_pool *p, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!n)
        n = 16;
    ana_pool_chunk *c = p->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ANA_POOL_CHUNK / 4 ? n : ANA_POOL_CHUNK;
        if (cap > SIZE_MAX - sizeof *c)
            return NULL;
        ana_pool_chunk *nc = malloc(sizeof *nc + cap);
        if (!nc)
            return NULL;
        nc->used = 0;
        nc->cap = cap;
        if (c && cap != ANA_POOL_CHUNK) {
            /* a big block: keep the current chunk open for small ones */
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            p->head = nc;
        }
        c = nc;
    }
    void *r = c->data + c->used;
    c->used += n;
    memset(r, 0, n);
    return r;
}

void *ana_pool_dup(ana_pool *p, const void *src, size_t n)
{
    void *d = ana_pool_alloc(p, n);
    if (d && n)
        memcpy(d, src, n);
    return d;
}

char *ana_pool_strndup(ana_pool *p, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *d = ana_pool_alloc(p, n + 1);
    if (d && n)
        memcpy(d, s, n);
    return d;
}

void ana_pool_release(ana_pool *p)
{
    ana_pool_chunk *c = p->head;
    while (c) {
        ana_pool_chunk *next = c->next;
        free(c);
        c = next;
    }
    p->head = NULL;
}

/* ------------------------------------------------------------ id maps */

static size_t ana_idmap_slot(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

int ana_idmap_put(ana_idmap *m, uint64_t key, uint32_t val)
{
    if (key == ANA_IDMAP_EMPTY) {
        m->has_empty = 1;
        m->empty_val = val;
        return 0;
    }
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        uint64_t *keys = malloc(cap * sizeof *keys);
        uint32_t *vals = malloc(cap * sizeof *vals);
        if (!keys || !vals || cap > SIZE_MAX / 2 / sizeof *keys) {
            free(keys);
            free(vals);
            return -1;
        }
        memset(keys, 0xff, cap * sizeof *keys);
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i] == ANA_IDMAP_EMPTY)
                continue;
            size_t h = ana_idmap_slot(m->keys[i], cap);
            while (keys[h] != ANA_IDMAP_EMPTY)
                h = (h + 1) & (cap - 1);
            keys[h] = m->keys[i];
            vals[h] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    size_t h = ana_idmap_slot(key, m->cap);
    while (m->keys[h] != ANA_IDMAP_EMPTY && m->keys[h] != key)
        h = (h + 1) & (m->cap - 1);
    if (m->keys[h] == ANA_IDMAP_EMPTY)
        m->n++;
    m->keys[h] = key;
    m->vals[h] = val;
    return 0;
}

int ana_idmap_get(const ana_idmap *m, uint64_t key, uint32_t *val)
{
    if (key == ANA_IDMAP_EMPTY) {
        if (m->has_empty)
            *val = m->empty_val;
        return m->has_empty;
    }
    if (!m->cap)
        return 0;
    size_t h = ana_idmap_slot(key, m->cap);
    while (m->keys[h] != ANA_IDMAP_EMPTY) {
        if (m->keys[h] == key) {
            *val = m->vals[h];
            return 1;
        }
        h = (h + 1) & (m->cap - 1);
    }
    return 0;
}

void ana_idmap_free(ana_idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

int ana_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (n > SIZE_MAX / elem)
        return -1;
    void *p = realloc(*arr, n * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

/* ------------------------------------------------------------ errors */

ana_status ana_model_fail(ana_model *m, const tf_call *c, const char *fmt, ...)
{
    if (m->failed || !m->err || !m->err_cap) {
        m->failed = 1;
        return ANA_ERR_TRACE;
    }
    m->failed = 1;
    int n = 0;
    if (c)
        n = snprintf(m->err, m->err_cap, "call #%llu %s: ", (unsigned long long)c->seq,
                     c->sig && c->sig->name ? c->sig->name : "?");
    if (n < 0 || (size_t)n >= m->err_cap)
        return ANA_ERR_TRACE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err + n, m->err_cap - (size_t)n, fmt, ap);
    va_end(ap);
    for (char *p = m->err; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    return ANA_ERR_TRACE;
}

/* ------------------------------------------------------------ parameters */

int ana_call_param(const tf_call *c, const char *name)
{
    const tf_sig *s = c->sig;
    if (!s)
        return -1;
    for (uint32_t i = 0; i < s->nparams; i++)
        if (s->params[i].name && !strcmp(s->params[i].name, name))
            return (int)i;
    return -1;
}

const tf_value *ana_call_arg(const tf_call *c, const char *name)
{
    int i = ana_call_param(c, name);
    return i < 0 || !c->args ? NULL : &c->args[i];
}

const tf_value *ana_call_out(const tf_call *c, const char *name)
{
    int i = ana_call_param(c, name);
    return i < 0 || !c->outs ? NULL : &c->outs[i];
}

int ana_call_u64(const tf_call *c, const char *name, uint64_t dflt, uint64_t *v)
{
    const tf_value *x = ana_call_arg(c, name);
    if (!x)
        return 0;
    if (x->type == TF_NIL) {
        *v = dflt;
        return 1;
    }
    if (x->type == TF_BOOL)
        return 0;
    return tf_value_u64(x, v);
}

int ana_u64_array(const tf_value *v, uint64_t *dst, unsigned cap)
{
    if (!v || v->type == TF_NIL)
        return 0;
    if (v->type != TF_ARRAY)
        return -1;
    unsigned n = v->v.arr.n < cap ? v->v.arr.n : cap;
    for (unsigned i = 0; i < n; i++)
        if (v->v.arr.items[i].type == TF_BOOL || !tf_value_u64(&v->v.arr.items[i], &dst[i]))
            return -1;
    return (int)n;
}

/* ------------------------------------------------------------ names */

const char *ana_obj_kind_name(ana_obj_kind k)
{
    static const char *const names[ANA_OBJ_KIND_COUNT] = {
        "unknown", "platform", "device", "context", "queue", "program", "kernel",
        "buffer", "subbuffer", "image", "pipe", "svm", "sampler", "event", "user_event",
    };
    return (unsigned)k < ANA_OBJ_KIND_COUNT ? names[k] : "unknown";
}

const char *ana_cmd_kind_name(ana_cmd_kind k)
{
    static const char *const names[ANA_CMD_KIND_COUNT] = {
        "kernel", "native", "read", "write", "copy", "fill", "map", "unmap", "migrate",
        "svm_memcpy", "svm_fill", "svm_map", "svm_unmap", "svm_migrate", "svm_free",
        "marker", "barrier", "other", "finish", "flush", "wait", "set_event",
    };
    return (unsigned)k < ANA_CMD_KIND_COUNT ? names[k] : "other";
}

int ana_cmd_kind_is_host(ana_cmd_kind k)
{
    return k >= ANA_CMD_FINISH && k < ANA_CMD_KIND_COUNT;
}

const char *ana_edge_kind_name(ana_edge_kind k)
{
    static const char *const names[ANA_EDGE_KIND_COUNT] = {
        "RAW", "WAR", "WAW", "event", "order", "sync", "host",
    };
    return (unsigned)k < ANA_EDGE_KIND_COUNT ? names[k] : "?";
}
