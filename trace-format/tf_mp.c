/* tf_mp.c — a small bounds-checking msgpack walker and cursor for
 * untrusted bytes. msgpack-c allocates by the counts a buffer declares;
 * tf_mp_skip() runs first and guarantees that every declared length fits
 * in the bytes that remain, so those allocations are bounded by the input
 * size. The typed reads serve the INDEX chunk, which is decoded in place.
 * tf_mp_value() decodes a record of a feed (plan mode's own records, one
 * per call the application makes) straight into tf_values: msgpack-c's C
 * API only unpacks into its own object tree, and unpacking and converting
 * that tree cost twice what one pass does (FORMAT.md, 7.2). */
#include "trace-format/tf_int.h"

enum { TF_MP_RAW, TF_MP_ARRAY, TF_MP_MAP };

static size_t tf_mp_left(const tf_mpc *c) { return (size_t)(c->end - c->p); }

/* Big-endian unsigned of @p n bytes at c->p, consumed. @return -1 if short. */
static int tf_mp_be(tf_mpc *c, unsigned n, uint64_t *v)
{
    uint64_t x = 0;

    if (tf_mp_left(c) < n)
        return -1;
    for (unsigned i = 0; i < n; i++)
        x = x << 8 | c->p[i];
    c->p += n;
    *v = x;
    return 0;
}

/* Decodes the head of the next value and consumes it. *kind: TF_MP_RAW
 * (then *n payload bytes follow), TF_MP_ARRAY or TF_MP_MAP (*n entries).
 * *tag is the first byte. @return 0, or -1 on 0xc1 or a short head. */
static int tf_mp_head(tf_mpc *c, uint8_t *tag, int *kind, uint64_t *n)
{
    static const uint8_t fixed[] = {   /* payload bytes of 0xc0..0xdf, 0xff: by length field */
        0, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 4, 8, 1, 2, 4, 8,
        1, 2, 4, 8, 2, 3, 5, 9, 17, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    };
    uint8_t b;

    if (tf_mp_left(c) < 1)
        return -1;
    b = *c->p++;
    *tag = b;
    *kind = TF_MP_RAW;
    *n = 0;
    if (b <= 0x7f || b >= 0xe0)
        return 0;
    if (b <= 0x8f) { *kind = TF_MP_MAP; *n = b & 0x0f; return 0; }
    if (b <= 0x9f) { *kind = TF_MP_ARRAY; *n = b & 0x0f; return 0; }
    if (b <= 0xbf) { *n = b & 0x1f; return 0; }
    if (fixed[b - 0xc0] != 0xff) {
        *n = fixed[b - 0xc0];
        return 0;
    }
    switch (b) {
    case 0xc4: case 0xd9: return tf_mp_be(c, 1, n);            /* bin8, str8 */
    case 0xc5: case 0xda: return tf_mp_be(c, 2, n);            /* bin16, str16 */
    case 0xc6: case 0xdb: return tf_mp_be(c, 4, n);            /* bin32, str32 */
    case 0xc7: case 0xc8: case 0xc9:                           /* ext8/16/32 */
        if (tf_mp_be(c, 1u << (b - 0xc7), n) != 0)
            return -1;
        *n += 1;                                               /* the type byte */
        return 0;
    case 0xdc: case 0xdd:
        *kind = TF_MP_ARRAY;
        return tf_mp_be(c, b == 0xdc ? 2 : 4, n);
    case 0xde: case 0xdf:
        *kind = TF_MP_MAP;
        return tf_mp_be(c, b == 0xde ? 2 : 4, n);
    }
    return -1;                                                 /* 0xc1 */
}

static int tf_mp_walk(tf_mpc *c, unsigned depth, uint64_t *nobj)
{
    uint8_t tag;
    int kind;
    uint64_t n, items;

    if (tf_mp_head(c, &tag, &kind, &n) != 0)
        return -1;
    (*nobj)++;
    if (kind == TF_MP_RAW) {
        if (n > tf_mp_left(c))
            return -1;
        c->p += n;
        return 0;
    }
    if (depth >= TF_MAX_DEPTH)
        return -1;
    items = kind == TF_MP_MAP ? 2 * n : n;
    if (items > tf_mp_left(c))          /* every value takes at least one byte */
        return -1;
    while (items--)
        if (tf_mp_walk(c, depth + 1, nobj) != 0)
            return -1;
    return 0;
}

int tf_mp_skip(tf_mpc *c, uint64_t *nobj)
{
    return tf_mp_walk(c, 0, nobj);
}

/* Reads a container head of @p want kind whose count fits the bytes left. */
static int tf_mp_container(tf_mpc *c, int want, uint32_t *n)
{
    uint8_t tag;
    int kind;
    uint64_t v;

    if (tf_mp_head(c, &tag, &kind, &v) != 0 || kind != want || v > tf_mp_left(c))
        return -1;
    *n = (uint32_t)v;
    return 0;
}

int tf_mp_array(tf_mpc *c, uint32_t *n) { return tf_mp_container(c, TF_MP_ARRAY, n); }
int tf_mp_map(tf_mpc *c, uint32_t *n) { return tf_mp_container(c, TF_MP_MAP, n); }

int tf_mp_uint(tf_mpc *c, uint64_t *v)
{
    uint8_t b;

    if (tf_mp_left(c) < 1)
        return -1;
    b = *c->p;
    if (b <= 0x7f) {
        c->p++;
        *v = b;
        return 0;
    }
    if (b < 0xcc || b > 0xcf)
        return -1;
    c->p++;
    return tf_mp_be(c, 1u << (b - 0xcc), v);
}

/* Reads a str (@p want_str) or bin value without copying it. */
static int tf_mp_bytes(tf_mpc *c, int want_str, const uint8_t **p, uint32_t *n)
{
    uint8_t tag;
    int kind;
    uint64_t len;
    int is_str, is_bin;

    if (tf_mp_head(c, &tag, &kind, &len) != 0 || kind != TF_MP_RAW || len > tf_mp_left(c))
        return -1;
    is_str = (tag >= 0xa0 && tag <= 0xbf) || (tag >= 0xd9 && tag <= 0xdb);
    is_bin = tag >= 0xc4 && tag <= 0xc6;
    if (want_str ? !is_str : !is_bin)
        return -1;
    *p = c->p;
    *n = (uint32_t)len;
    c->p += len;
    return 0;
}

int tf_mp_str(tf_mpc *c, const uint8_t **p, uint32_t *n) { return tf_mp_bytes(c, 1, p, n); }
int tf_mp_bin(tf_mpc *c, const uint8_t **p, uint32_t *n) { return tf_mp_bytes(c, 0, p, n); }

/* Big-endian signed of @p n bytes (1, 2, 4 or 8) at p. */
static int64_t tf_mp_sbe(const uint8_t *p, unsigned n)
{
    uint64_t x = 0;

    for (unsigned i = 0; i < n; i++)
        x = x << 8 | p[i];
    if (n < 8 && (x >> (8 * n - 1)) & 1)
        x |= ~(uint64_t)0 << (8 * n);   /* sign-extend */
    return (int64_t)x;
}

static uint64_t tf_mp_ube(const uint8_t *p, unsigned n)
{
    uint64_t x = 0;

    for (unsigned i = 0; i < n; i++)
        x = x << 8 | p[i];
    return x;
}

/* A raw value (not a container) whose payload of @p n bytes is at c->p:
 * typed as tf_value_from_obj() types what msgpack-c makes of it (a
 * non-negative signed integer is TF_UINT, float32 widens to TF_F64). */
static int tf_mp_raw(tf_mpc *c, uint8_t tag, uint64_t n, tf_value *v)
{
    const uint8_t *p = c->p;

    if (n > tf_mp_left(c))
        return -1;
    c->p += n;
    if (tag <= 0x7f) {
        v->type = TF_UINT;
        v->v.u = tag;
    } else if (tag >= 0xe0) {
        v->type = TF_INT;
        v->v.i = (int8_t)tag;
    } else if ((tag >= 0xa0 && tag <= 0xbf) || (tag >= 0xd9 && tag <= 0xdb) || (tag >= 0xc4 && tag <= 0xc6)) {
        if (n > UINT32_MAX)
            return -1;
        v->type = tag >= 0xc4 && tag <= 0xc6 ? TF_BIN : TF_STR;
        v->v.str.ptr = n ? (const char *)p : "";   /* never NULL */
        v->v.str.len = (uint32_t)n;
    } else if (tag == 0xc0) {
        v->type = TF_NIL;
    } else if (tag == 0xc2 || tag == 0xc3) {
        v->type = TF_BOOL;
        v->v.b = tag == 0xc3;
    } else if (tag == 0xca) {
        uint32_t bits = (uint32_t)tf_mp_ube(p, 4);
        float f;
        memcpy(&f, &bits, sizeof f);
        v->type = TF_F64;
        v->v.f = f;
    } else if (tag == 0xcb) {
        uint64_t bits = tf_mp_ube(p, 8);
        memcpy(&v->v.f, &bits, sizeof v->v.f);
        v->type = TF_F64;
    } else if (tag >= 0xcc && tag <= 0xcf) {
        v->type = TF_UINT;
        v->v.u = tf_mp_ube(p, (unsigned)n);
    } else if (tag >= 0xd0 && tag <= 0xd3) {
        int64_t i = tf_mp_sbe(p, (unsigned)n);
        v->type = i < 0 ? TF_INT : TF_UINT;
        if (i < 0)
            v->v.i = i;
        else
            v->v.u = (uint64_t)i;
    } else {   /* ext: the payload is the type byte, then the data */
        if ((int8_t)p[0] != TF_EXT_BLOBREF || n - 1 != TF_BLOBREF_SIZE)
            return -1;
        v->type = TF_BLOB;
        memcpy(v->v.blob.hash, p + 1, 16);
        v->v.blob.size = tf_get64(p + 17);
    }
    return 0;
}

/* not inlined: the loops over entries then decode scalars without a call */
static int tf_mp_items(tf_mpc *c, tf_arena *a, unsigned depth, int kind, uint64_t n, tf_value *v)
    __attribute__((noinline));

/* One value: scalars here, without a call (most values of a record are);
 * containers in tf_mp_items(). */
static inline __attribute__((always_inline)) int tf_mp_one(tf_mpc *c, tf_arena *a, unsigned depth, tf_value *v)
{
    uint8_t tag;
    int kind;
    uint64_t n;

    memset(v, 0, sizeof(*v));
    if (c->p < c->end) {   /* the usual ones first: small integers, nil, short arrays */
        tag = *c->p;
        if (tag <= 0x7f) {
            c->p++;
            v->type = TF_UINT;
            v->v.u = tag;
            return 0;
        }
        if (tag == 0xc0) {
            c->p++;
            v->type = TF_NIL;
            return 0;
        }
        if ((tag & 0xf0) == 0x90) {
            c->p++;
            return tf_mp_items(c, a, depth, TF_MP_ARRAY, tag & 0x0f, v);
        }
    }
    if (tf_mp_head(c, &tag, &kind, &n) != 0)
        return -1;
    if (kind == TF_MP_RAW)
        return tf_mp_raw(c, tag, n, v);
    return tf_mp_items(c, a, depth, kind, n, v);
}

/* The @p n entries of an array or map (@p kind) whose head was read. */
static int tf_mp_items(tf_mpc *c, tf_arena *a, unsigned depth, int kind, uint64_t n, tf_value *v)
{
    static const tf_value none[1];
    uint64_t items = kind == TF_MP_MAP ? 2 * n : n;
    tf_value *x = NULL;
    int rc;

    if (depth >= TF_MAX_DEPTH || items > tf_mp_left(c))   /* every value takes at least one byte */
        return -1;
    if (items && (x = tf_arena_alloc(a, (size_t)items * sizeof(tf_value))) == NULL)
        return -2;
    if (kind == TF_MP_ARRAY) {
        for (uint64_t i = 0; i < n; i++)
            if ((rc = tf_mp_one(c, a, depth + 1, &x[i])) != 0)
                return rc;
        v->type = TF_ARRAY;
        v->v.arr.items = x ? x : none;
        v->v.arr.n = (uint32_t)n;
        return 0;
    }
    for (uint64_t i = 0; i < n; i++)   /* keys first, then the values: as tf_map_get() reads them */
        if ((rc = tf_mp_one(c, a, depth + 1, &x[i])) != 0 || (rc = tf_mp_one(c, a, depth + 1, &x[n + i])) != 0)
            return rc;
    v->type = TF_MAP;
    v->v.map.keys = x ? x : none;
    v->v.map.vals = x ? x + n : none;
    v->v.map.n = (uint32_t)n;
    return 0;
}

int tf_mp_value(tf_mpc *c, tf_arena *a, tf_value *v)
{
    return tf_mp_one(c, a, 0, v);
}
