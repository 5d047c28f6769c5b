/* tf_mp.c — a small bounds-checking msgpack walker and cursor for
 * untrusted bytes. msgpack-c allocates by the counts a buffer declares;
 * tf_mp_skip() runs first and guarantees that every declared length fits
 * in the bytes that remain, so those allocations are bounded by the input
 * size. The typed reads serve the INDEX chunk, which is decoded in place. */
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
