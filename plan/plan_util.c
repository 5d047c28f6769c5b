/* plan_util.c — the optimizer's small tools: status and pass names, an
 * arena, an id map, hex, and helpers over recorded calls. */
#include "plan/plan_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *plan_strerror(plan_status s)
{
    switch (s) {
    case PLAN_OK: return "ok";
    case PLAN_ERR_NOMEM: return "out of memory";
    case PLAN_ERR_ARG: return "invalid argument";
    case PLAN_ERR_TRACE: return "the trace cannot be read";
    case PLAN_ERR_PLAN: return "invalid plan";
    case PLAN_ERR_VERSION: return "unsupported plan version";
    case PLAN_ERR_LIMIT: return "plan over a limit";
    case PLAN_ERR_IO: return "I/O error";
    }
    return "unknown status";
}

static const char *const plan_pass_names[PLAN_PASS_COUNT] = {"dead", "redundant", "fuse", "split", "specialize",
                                                              "schedule", "wgsize"};

const char *plan_pass_name(plan_pass p)
{
    return (unsigned)p < PLAN_PASS_COUNT ? plan_pass_names[p] : NULL;
}

const char *plan_coarse_form_name(unsigned form)
{
    static const char *const names[PLAN_COARSE_FORMS] = {"blocked", "strided", "vector", "group-blocked",
                                                         "group-strided"};
    return form < PLAN_COARSE_FORMS ? names[form] : NULL;
}

const char *plan_action_name(plan_action a)
{
    return a == PLAN_ACT_DROP ? "drop" : a == PLAN_ACT_HOLD ? "hold" : a == PLAN_ACT_FUSE ? "fuse"
           : a == PLAN_ACT_SPLIT ? "split" : a == PLAN_ACT_SPECIALIZE ? "specialize"
           : a == PLAN_ACT_LOCAL_SIZE ? "local_size" : a == PLAN_ACT_COARSEN ? "coarsen" : "?";
}

int plan_passes_parse(const char *list, unsigned *mask, char *err, size_t err_cap)
{
    unsigned m = 0;
    const char *p = list ? list : "";
    if (!strcmp(p, "all")) {
        *mask = PLAN_PASSES_ALL;
        return 0;
    }
    if (!strcmp(p, "none")) {
        *mask = 0;
        return 0;
    }
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int found = -1;
        for (unsigned i = 0; i < PLAN_PASS_COUNT; i++)
            if (strlen(plan_pass_names[i]) == n && !strncmp(p, plan_pass_names[i], n))
                found = (int)i;
        if (found < 0) {
            snprintf(err, err_cap, "unknown pass '%.*s' (passes: dead, redundant, fuse, split, specialize, schedule, "
                     "wgsize; "
                     "or all, none)", (int)(n > 40 ? 40 : n), p);
            return -1;
        }
        m |= 1u << found;
        p += n;
        if (*p == ',' && !*++p) {
            snprintf(err, err_cap, "a pass list cannot end with ','");
            return -1;
        }
    }
    if (!m) {
        snprintf(err, err_cap, "an empty pass list (say 'none' to run no pass)");
        return -1;
    }
    *mask = m;
    return 0;
}

/* ------------------------------------------------------------ arena */

struct plan_arena_chunk {
    plan_arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

void *plan_arena_alloc(plan_arena *a, size_t n)
{
    size_t al = sizeof(max_align_t);
    n = (n + al - 1) / al * al;
    if (!n)
        n = al;
    plan_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *plan_arena_strndup(plan_arena *a, const char *s, size_t n)
{
    char *d = plan_arena_alloc(a, n + 1);
    if (d && n)
        memcpy(d, s, n);
    return d;
}

void plan_arena_free(plan_arena *a)
{
    for (plan_arena_chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    a->head = NULL;
}

/* ------------------------------------------------------------ id map */

static size_t plan_map_slot(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

int plan_map_put(plan_map *m, uint64_t key, void *val)
{
    if (!key)
        return -1;
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        uint64_t *k = calloc(cap, sizeof *k);
        void **v = calloc(cap, sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = plan_map_slot(m->keys[i], cap);
                while (k[j])
                    j = (j + 1) & (cap - 1);
                k[j] = m->keys[i];
                v[j] = m->vals[i];
            }
        free(m->keys);
        free(m->vals);
        m->keys = k;
        m->vals = v;
        m->cap = cap;
    }
    size_t j = plan_map_slot(key, m->cap);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j])
        m->n++;
    m->keys[j] = key;
    m->vals[j] = val;
    return 0;
}

void *plan_map_get(const plan_map *m, uint64_t key)
{
    if (!m->cap || !key)
        return NULL;
    size_t j = plan_map_slot(key, m->cap);
    while (m->keys[j]) {
        if (m->keys[j] == key)
            return m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

void plan_map_free(plan_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------ helpers */

void plan_hex(const uint8_t *src, size_t n, char *dst)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        dst[2 * i] = d[src[i] >> 4];
        dst[2 * i + 1] = d[src[i] & 15];
    }
    dst[2 * n] = 0;
}

static int plan_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int plan_unhex(const char *s, uint8_t *dst, size_t n)
{
    if (strlen(s) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int a = plan_hexval(s[2 * i]), b = plan_hexval(s[2 * i + 1]);
        if (a < 0 || b < 0)
            return -1;
        dst[i] = (uint8_t)(a << 4 | b);
    }
    return 0;
}

int plan_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem)
            return -1;
        c *= 2;
    }
    void *p = realloc(*arr, c * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

plan_status plan_seterr(char *err, size_t cap, plan_status st, const char *fmt, ...)
{
    if (!err || !cap)
        return st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    for (char *p = err; *p; p++)   /* one line */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return st;
}

/* ------------------------------------------------------------ traces */

plan_status plan_open_trace(const char *path, size_t max_memory, tf_reader **r, char *err, size_t err_cap)
{
    tf_reader_opts ro = {.max_memory = max_memory};
    tf_status ts = tf_reader_open(r, path, &ro);
    if (ts == TF_OK)
        return PLAN_OK;
    /* the reader's message starts with the path; the caller names the file */
    const char *m = tf_reader_open_error();
    size_t pl = strlen(path);
    if (m && !strncmp(m, path, pl) && !strncmp(m + pl, ": ", 2))
        m += pl + 2;
    return plan_seterr(err, err_cap, PLAN_ERR_TRACE, "%s", m && *m ? m : tf_strerror(ts));
}

/* ------------------------------------------------------------ calls */

int plan_param(const tf_call *c, const char *name)
{
    const tf_sig *s = c->sig;
    for (uint32_t i = 0; i < s->nparams; i++)   /* the first letters tell most names apart */
        if (s->params[i].name[0] == name[0] && !strcmp(s->params[i].name, name))
            return (int)i;
    return -1;
}

const tf_value *plan_arg(const tf_call *c, const char *name)
{
    int i = plan_param(c, name);
    return i >= 0 && c->args ? &c->args[i] : NULL;
}

const tf_value *plan_out(const tf_call *c, const char *name)
{
    int i = plan_param(c, name);
    return i >= 0 && c->outs ? &c->outs[i] : NULL;
}

int plan_arg_u64(const tf_call *c, const char *name, uint64_t *v)
{
    const tf_value *a = plan_arg(c, name);
    *v = 0;
    return a && a->type != TF_BOOL && tf_value_u64(a, v);
}

int plan_call_ok(const tf_call *c)
{
    if (!c->complete)
        return 0;
    const tf_sig *s = c->sig;
    if (!strcmp(s->ret_type, "cl_int")) {
        int64_t v = -1;
        return tf_value_i64(&c->ret, &v) && v == 0;
    }
    const tf_value *e = plan_out(c, "errcode_ret");
    if (e && e->type != TF_NIL) {
        int64_t v = -1;
        return tf_value_i64(e, &v) && v == 0;
    }
    if (!strcmp(s->ret_type, "void"))
        return 1;
    uint64_t u = 0;
    return tf_value_u64(&c->ret, &u) && u != 0;
}

int plan_value_hash(const tf_value *v, uint8_t h[16])
{
    if (!v)
        return 0;
    if (v->type == TF_BLOB) {
        memcpy(h, v->v.blob.hash, 16);
        return 1;
    }
    if (v->type == TF_BIN || v->type == TF_STR) {
        tf_blobref r;
        tf_hash(v->v.str.ptr, v->v.str.len, &r);
        memcpy(h, r.hash, 16);
        return 1;
    }
    return 0;
}

/* The next occurrence of pattern @p key (from 0). Shared with live_match.c
 * through the same rule: the map holds count + 1. */
uint64_t plan_occurrence_count(const plan_map *occ, uint64_t key)
{
    uintptr_t n = (uintptr_t)plan_map_get(occ, key ? key : 1);
    return n ? (uint64_t)(n - 1) : 0;
}

uint64_t plan_occurrence_next(plan_map *occ, uint64_t key, int *nomem)
{
    uint64_t k = key ? key : 1;
    uintptr_t n = (uintptr_t)plan_map_get(occ, k);
    if (plan_map_put(occ, k, (void *)(n ? n + 1 : 2)))
        *nomem = 1;
    return n ? (uint64_t)(n - 1) : 0;
}
