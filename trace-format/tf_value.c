/* tf_value.c — decoded values: the reader's counted memory, the per-record
 * arena, conversion of msgpack-c objects into tf_value trees, deep copies
 * (for data that outlives a record), and the tf_value accessors. */
#include "trace-format/tf_int.h"

#include <stdlib.h>


/* ------------------------------------------------------------ counted memory */

void *tf_mem_alloc(tf_mem *m, size_t n)
{
    void *p;

    if (n > m->limit - m->used)
        return NULL;
    p = malloc(n ? n : 1);
    if (p)
        m->used += n;
    return p;
}

void *tf_mem_realloc(tf_mem *m, void *p, size_t old_n, size_t n)
{
    void *q;

    if (n > old_n && n - old_n > m->limit - m->used)
        return NULL;
    q = realloc(p, n ? n : 1);
    if (q)
        m->used = m->used - old_n + n;
    return q;
}

void tf_mem_free(tf_mem *m, void *p, size_t n)
{
    if (p) {
        free(p);
        m->used -= n;
    }
}

tf_status tf_mem_status(const tf_mem *m, size_t n)
{
    return n > m->limit - m->used ? TF_ERR_LIMIT : TF_ERR_NOMEM;
}

/* ----------------------------------------------------------------- arena */

struct tf_arena_blk {
    tf_arena_blk *prev;
    size_t size;                 /* bytes after the struct (16 bytes: 8-aligned) */
};

void tf_arena_init(tf_arena *a, tf_mem *mem)
{
    memset(a, 0, sizeof(*a));
    a->mem = mem;
}

void *tf_arena_alloc(tf_arena *a, size_t n)
{
    void *r;

    if (n > SIZE_MAX - 8)
        return NULL;
    n = n ? (n + 7) & ~(size_t)7 : 8;
    if (n > a->left) {
        size_t sz = n > TF_ARENA_BLK ? n : TF_ARENA_BLK;
        tf_arena_blk *b = tf_mem_alloc(a->mem, sizeof(*b) + sz);
        if (b == NULL)
            return NULL;
        b->prev = a->blk;
        b->size = sz;
        a->blk = b;
        a->p = (uint8_t *)(b + 1);
        a->left = sz;
    }
    r = a->p;
    a->p += n;
    a->left -= n;
    return r;
}

void tf_arena_reset(tf_arena *a)
{
    while (a->blk && a->blk->prev) {
        tf_arena_blk *b = a->blk;
        a->blk = b->prev;
        tf_mem_free(a->mem, b, sizeof(*b) + b->size);
    }
    if (a->blk) {
        a->p = (uint8_t *)(a->blk + 1);
        a->left = a->blk->size;
    }
}

void tf_arena_free(tf_arena *a)
{
    tf_arena_reset(a);
    if (a->blk)
        tf_mem_free(a->mem, a->blk, sizeof(*a->blk) + a->blk->size);
    a->blk = NULL;
    a->p = NULL;
    a->left = 0;
}

/* ------------------------------------------------------------ conversion */

/* Allocates @p n values in the arena (n may be 0: never written to). */
static tf_value *tf_values(tf_arena *a, uint32_t n, tf_status *st)
{
    static tf_value none[1];
    tf_value *v = n ? tf_arena_alloc(a, (size_t)n * sizeof(tf_value)) : none;

    if (v == NULL)   /* the arena asks for a whole block: over the limit when that is */
        *st = tf_mem_status(a->mem, (size_t)n * sizeof(tf_value) + TF_ARENA_BLK);
    return v;
}

tf_status tf_value_from_obj(tf_arena *a, const msgpack_object *o, tf_value *v, tf_err *e)
{
    tf_status status = TF_OK;
    tf_value *items, *keys, *vals;
    uint32_t i, n;

    memset(v, 0, sizeof(*v));
    switch (o->type) {
    case MSGPACK_OBJECT_NIL:
        v->type = TF_NIL;
        break;
    case MSGPACK_OBJECT_BOOLEAN:
        v->type = TF_BOOL;
        v->v.b = o->via.boolean;
        break;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        v->type = TF_UINT;
        v->v.u = o->via.u64;
        break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        v->type = TF_INT;
        v->v.i = o->via.i64;
        break;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        v->type = TF_F64;
        v->v.f = o->via.f64;
        break;
    case MSGPACK_OBJECT_STR:
        v->type = TF_STR;
        v->v.str.ptr = o->via.str.size ? o->via.str.ptr : "";   /* never NULL */
        v->v.str.len = o->via.str.size;
        break;
    case MSGPACK_OBJECT_BIN:
        v->type = TF_BIN;
        v->v.str.ptr = o->via.bin.size ? o->via.bin.ptr : "";
        v->v.str.len = o->via.bin.size;
        break;
    case MSGPACK_OBJECT_ARRAY:
        n = o->via.array.size;
        if ((items = tf_values(a, n, &status)) == NULL)
            TF_FAIL(e, status, "no memory for an array of %u values", n);
        for (i = 0; i < n; i++)
            TF_FORWARD(e, tf_value_from_obj(a, &o->via.array.ptr[i], &items[i], e));
        v->type = TF_ARRAY;
        v->v.arr.items = items;
        v->v.arr.n = n;
        break;
    case MSGPACK_OBJECT_MAP:
        n = o->via.map.size;
        if ((keys = tf_values(a, n, &status)) == NULL || (vals = tf_values(a, n, &status)) == NULL)
            TF_FAIL(e, status, "no memory for a map of %u entries", n);
        for (i = 0; i < n; i++) {
            TF_FORWARD(e, tf_value_from_obj(a, &o->via.map.ptr[i].key, &keys[i], e));
            TF_FORWARD(e, tf_value_from_obj(a, &o->via.map.ptr[i].val, &vals[i], e));
        }
        v->type = TF_MAP;
        v->v.map.keys = keys;
        v->v.map.vals = vals;
        v->v.map.n = n;
        break;
    case MSGPACK_OBJECT_EXT:
        if (o->via.ext.type != TF_EXT_BLOBREF || o->via.ext.size != TF_BLOBREF_SIZE)
            TF_FAIL(e, TF_ERR_CORRUPT, "msgpack ext type %d of %u bytes (only type %d of %d bytes is defined)",
                    o->via.ext.type, o->via.ext.size, TF_EXT_BLOBREF, TF_BLOBREF_SIZE);
        v->type = TF_BLOB;
        memcpy(v->v.blob.hash, o->via.ext.ptr, 16);
        v->v.blob.size = tf_get64((const uint8_t *)o->via.ext.ptr + 16);
        break;
    default:
        TF_FAIL(e, TF_ERR_CORRUPT, "unknown msgpack object type %d", (int)o->type);
    }
out:
    return status;
}

/* ------------------------------------------------------------ deep copies */

static size_t tf_align8(size_t n) { return (n + 7) & ~(size_t)7; }

size_t tf_value_deep_size(const tf_value *v)
{
    size_t n = 0;
    uint32_t i;

    switch (v->type) {
    case TF_STR:
    case TF_BIN:
        return tf_align8((size_t)v->v.str.len + 1);
    case TF_ARRAY:
        n = (size_t)v->v.arr.n * sizeof(tf_value);
        for (i = 0; i < v->v.arr.n; i++)
            n += tf_value_deep_size(&v->v.arr.items[i]);
        return n;
    case TF_MAP:
        n = 2 * (size_t)v->v.map.n * sizeof(tf_value);
        for (i = 0; i < v->v.map.n; i++)
            n += tf_value_deep_size(&v->v.map.keys[i]) + tf_value_deep_size(&v->v.map.vals[i]);
        return n;
    default:
        return 0;
    }
}

void tf_value_deep_copy(const tf_value *v, tf_value *dst, uint8_t **bump)
{
    tf_value *items, *keys, *vals;
    char *s;
    uint32_t i;

    *dst = *v;
    switch (v->type) {
    case TF_STR:
    case TF_BIN:
        s = (char *)*bump;
        if (v->v.str.len)
            memcpy(s, v->v.str.ptr, v->v.str.len);
        s[v->v.str.len] = '\0';
        dst->v.str.ptr = s;
        *bump += tf_align8((size_t)v->v.str.len + 1);
        break;
    case TF_ARRAY:
        items = (tf_value *)*bump;
        *bump += (size_t)v->v.arr.n * sizeof(tf_value);
        for (i = 0; i < v->v.arr.n; i++)
            tf_value_deep_copy(&v->v.arr.items[i], &items[i], bump);
        dst->v.arr.items = items;
        break;
    case TF_MAP:
        keys = (tf_value *)*bump;
        vals = keys + v->v.map.n;
        *bump += 2 * (size_t)v->v.map.n * sizeof(tf_value);
        for (i = 0; i < v->v.map.n; i++) {
            tf_value_deep_copy(&v->v.map.keys[i], &keys[i], bump);
            tf_value_deep_copy(&v->v.map.vals[i], &vals[i], bump);
        }
        dst->v.map.keys = keys;
        dst->v.map.vals = vals;
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------- accessors */

const tf_value *tf_map_get(const tf_value *m, const char *key)
{
    size_t klen;
    uint32_t i;

    if (m == NULL || key == NULL || m->type != TF_MAP)
        return NULL;
    klen = strlen(key);
    for (i = 0; i < m->v.map.n; i++) {
        const tf_value *k = &m->v.map.keys[i];
        if (k->type == TF_STR && k->v.str.len == klen && memcmp(k->v.str.ptr, key, klen) == 0)
            return &m->v.map.vals[i];
    }
    return NULL;
}

int tf_value_u64(const tf_value *v, uint64_t *out)
{
    if (v == NULL)
        return 0;
    switch (v->type) {
    case TF_UINT: *out = v->v.u; return 1;
    case TF_INT:
        if (v->v.i < 0)
            return 0;
        *out = (uint64_t)v->v.i;
        return 1;
    case TF_BOOL: *out = v->v.b != 0; return 1;
    default: return 0;
    }
}

int tf_value_i64(const tf_value *v, int64_t *out)
{
    if (v == NULL)
        return 0;
    switch (v->type) {
    case TF_INT: *out = v->v.i; return 1;
    case TF_UINT:
        if (v->v.u > (uint64_t)INT64_MAX)
            return 0;
        *out = (int64_t)v->v.u;
        return 1;
    case TF_BOOL: *out = v->v.b != 0; return 1;
    default: return 0;
    }
}

int tf_value_hashref(const tf_value *v, tf_blobref *out)
{
    const tf_value *h = tf_map_get(v, "hash"), *n = tf_map_get(v, "size");
    uint64_t size;
    if (!h || !n || h->type != TF_BIN || h->v.str.len != 16 || !tf_value_u64(n, &size))
        return 0;
    if (out) {
        memcpy(out->hash, h->v.str.ptr, 16);
        out->size = size;
    }
    return 1;
}
