/* fuzz_trace.c — fuzz target for the trace reader (trace-format/): the
 * file header, chunk headers and payloads (checksums, zstd), records and
 * the values in them, signatures and call merging, blob pieces read by
 * random access (tf_reader_blob), the index and trailer, and the
 * container totals (tf_reader_scan, tf_reader_get_info).
 *
 * Input: see fuzz.h ('R' one record chunk, 'S' sections, else the file).
 * Every item is read and every value walked (so that ASan sees each byte
 * the reader hands out); every blob reference is read whole (at most
 * 64 KiB of it) and at its last byte. The oracle: no crash, no sanitizer
 * report, no leak, an error status always comes with a message, and a
 * second pass after tf_reader_rewind() yields the same items and ends the
 * same way as the first.
 *
 * And, for an 'R' input, its records fed one by one to two feed readers:
 * one as plan mode opens it (trusted_feed: decoded in one pass by
 * tf_mp_value) and one that walks, unpacks with msgpack-c and converts.
 * The oracle: both give the same status, consume the same bytes and
 * yield the same item, value for value.
 *
 * Corpus: tests/fuzz-corpus/trace-format/; crashes: tests/fuzz/crashes/trace/. */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace-format/tf.h"

const char *const fuzz_dirs[] = { "tests/fuzz-corpus/trace-format", "tests/fuzz/crashes/trace", NULL };

#define FT_MAX_ITEMS 100000
#define FT_BLOB_MAX  (64u << 10)

static uint8_t ft_buf[FT_BLOB_MAX];
static volatile uint64_t ft_sink;   /* keeps the reads of every byte */

static void ft_check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_trace: %s\n", what);
        abort();
    }
}

/* Reads blob @p b whole (up to FT_BLOB_MAX) and at its last byte. */
static void ft_blob(tf_reader *r, const tf_blobref *b)
{
    size_t n = b->size < FT_BLOB_MAX ? (size_t)b->size : FT_BLOB_MAX;
    tf_status st = tf_reader_blob(r, b, 0, ft_buf, n);

    ft_check(st == TF_OK || tf_reader_error(r)[0], "tf_reader_blob failed without a message");
    if (st == TF_OK)
        for (size_t i = 0; i < n; i++)
            ft_sink += ft_buf[i];
    if (b->size > 0) {
        st = tf_reader_blob(r, b, b->size - 1, ft_buf, 1);
        ft_check(st == TF_OK || tf_reader_error(r)[0], "tf_reader_blob failed without a message");
    }
    /* one past the end is the caller's error, never a read */
    ft_check(tf_reader_blob(r, b, b->size, ft_buf, 1) == TF_ERR_ARG, "a read past the blob was not refused");
}

/* Walks a value: every byte of every string, every blob. */
static void ft_value(tf_reader *r, const tf_value *v, unsigned depth)
{
    uint64_t u;
    int64_t i;

    if (v == NULL)
        return;
    ft_check(depth <= 64, "values nested deeper than the reader's limit");
    ft_sink += tf_value_u64(v, &u) + tf_value_i64(v, &i);
    switch (v->type) {
    case TF_STR:
    case TF_BIN:
        for (uint32_t k = 0; k < v->v.str.len; k++)
            ft_sink += (uint8_t)v->v.str.ptr[k];
        break;
    case TF_ARRAY:
        for (uint32_t k = 0; k < v->v.arr.n; k++)
            ft_value(r, &v->v.arr.items[k], depth + 1);
        break;
    case TF_MAP:
        for (uint32_t k = 0; k < v->v.map.n; k++) {
            ft_value(r, &v->v.map.keys[k], depth + 1);
            ft_value(r, &v->v.map.vals[k], depth + 1);
        }
        ft_sink += tf_map_get(v, "data") != NULL;
        break;
    case TF_BLOB:
        if (r)
            ft_blob(r, &v->v.blob);
        break;
    default:
        break;
    }
}

static void ft_cstr(const char *s)
{
    ft_check(s != NULL, "a NULL string from the reader");
    ft_sink += strlen(s);
}

static void ft_item(tf_reader *r, const tf_item *it, int blobs)
{
    tf_reader *br = blobs ? r : NULL;

    switch (it->type) {
    case TF_ITEM_CALL: {
        const tf_call *c = &it->u.call;
        const tf_sig *sig = c->sig;
        ft_check(sig != NULL && sig == tf_reader_sig(r, sig->id), "a call whose signature the reader does not know");
        ft_cstr(sig->name);
        ft_cstr(sig->ret_type);
        for (uint32_t k = 0; k < sig->nparams; k++) {
            ft_cstr(sig->params[k].name);
            ft_cstr(sig->params[k].type);
            ft_value(br, &c->args[k], 1);
            if (c->complete)
                ft_value(br, &c->outs[k], 1);
        }
        ft_check(c->complete || c->outs == NULL, "an incomplete call with outputs");
        ft_value(br, &c->ret, 1);
        ft_value(br, c->pre, 1);
        ft_value(br, c->post, 1);
        ft_check(!tf_reader_call_open(r, c->seq), "a call delivered while still pending");
        break;
    }
    case TF_ITEM_DATA:
        ft_cstr(it->u.data.key);
        ft_value(br, &it->u.data.value, 1);
        ft_sink += tf_reader_call_open(r, it->u.data.seq);
        break;
    case TF_ITEM_NOTE:
        ft_cstr(it->u.note.text);
        break;
    case TF_ITEM_DEVTIME:
        ft_sink += it->u.devtime.end - it->u.devtime.start;
        break;
    case TF_ITEM_DEVICES:
        ft_check(it->u.devices.devices && it->u.devices.devices->type == TF_ARRAY, "DEVICES without an array");
        ft_value(br, it->u.devices.devices, 1);
        ft_value(br, tf_reader_env(r), 1);   /* the environment it was merged into */
        break;
    default:
        ft_check(0, "an item of an unknown type");
    }
}

/* One pass over the items. @return the final status; *n the item count,
 * *types a hash of their types and sequence numbers. */
static tf_status ft_pass(tf_reader *r, int blobs, size_t *n, uint64_t *types)
{
    tf_item it;
    tf_status st;

    *n = 0;
    *types = 0;
    while ((st = tf_reader_next(r, &it)) == TF_OK && *n < FT_MAX_ITEMS) {
        ft_item(r, &it, blobs);
        (*n)++;
        *types = *types * 31 + it.type * 7 + (it.type == TF_ITEM_CALL ? it.u.call.seq : 0);
    }
    ft_check(st == TF_OK || st == TF_END || tf_reader_error(r)[0], "a stream error without a message");
    return st;
}

/* A hash of value @p v, its type and every byte of it. */
static uint64_t ft_vhash(const tf_value *v, uint64_t h)
{
    h = (h ^ (v ? (uint64_t)v->type + 1 : 0)) * 0x100000001b3ull;
    if (v == NULL)
        return h;
    switch (v->type) {
    case TF_BOOL: return (h ^ (uint64_t)v->v.b) * 0x100000001b3ull;
    case TF_INT: return (h ^ (uint64_t)v->v.i) * 0x100000001b3ull;
    case TF_UINT: return (h ^ v->v.u) * 0x100000001b3ull;
    case TF_F64: {
        uint64_t bits;
        memcpy(&bits, &v->v.f, sizeof bits);
        return (h ^ bits) * 0x100000001b3ull;
    }
    case TF_STR:
    case TF_BIN:
        h = (h ^ v->v.str.len) * 0x100000001b3ull;
        for (uint32_t k = 0; k < v->v.str.len; k++)
            h = (h ^ (uint8_t)v->v.str.ptr[k]) * 0x100000001b3ull;
        return h;
    case TF_ARRAY:
        h = (h ^ v->v.arr.n) * 0x100000001b3ull;
        for (uint32_t k = 0; k < v->v.arr.n; k++)
            h = ft_vhash(&v->v.arr.items[k], h);
        return h;
    case TF_MAP:
        h = (h ^ v->v.map.n) * 0x100000001b3ull;
        for (uint32_t k = 0; k < v->v.map.n; k++)
            h = ft_vhash(&v->v.map.vals[k], ft_vhash(&v->v.map.keys[k], h));
        return h;
    case TF_BLOB:
        for (int k = 0; k < 16; k++)
            h = (h ^ v->v.blob.hash[k]) * 0x100000001b3ull;
        return (h ^ v->v.blob.size) * 0x100000001b3ull;
    default:
        return h;
    }
}

static uint64_t ft_shash(const char *s, uint64_t h)
{
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return (h ^ (s != NULL)) * 0x100000001b3ull;
}

/* A hash of everything item @p it says (a feed reader's: no blobs). */
static uint64_t ft_ihash(const tf_item *it)
{
    uint64_t h = 0xcbf29ce484222325ull ^ it->type;
    switch (it->type) {
    case TF_ITEM_CALL:
    case TF_ITEM_BEGIN: {
        const tf_call *c = &it->u.call;
        h = ft_shash(c->sig->name, h ^ c->seq ^ c->tid << 20 ^ (uint64_t)c->t_begin << 7 ^ (uint64_t)c->t_end);
        for (uint32_t k = 0; k < c->sig->nparams; k++) {
            h = ft_vhash(&c->args[k], h);
            h = ft_vhash(c->outs ? &c->outs[k] : NULL, h);
        }
        return ft_vhash(c->post, ft_vhash(c->pre, ft_vhash(&c->ret, h ^ (uint64_t)c->complete)));
    }
    case TF_ITEM_DATA: return ft_vhash(&it->u.data.value, ft_shash(it->u.data.key, h ^ it->u.data.seq));
    case TF_ITEM_NOTE: return ft_shash(it->u.note.text, h ^ it->u.note.object);
    case TF_ITEM_DEVTIME: return h ^ it->u.devtime.seq ^ it->u.devtime.start << 3 ^ it->u.devtime.end << 5;
    case TF_ITEM_DEVICES: return ft_vhash(it->u.devices.devices, h);
    default: return h;
    }
}

/* Feeds the records of @p d to a trusted and an untrusted feed reader:
 * they must agree record by record. */
static void ft_feeds(const uint8_t *d, size_t n)
{
    tf_reader_opts o = { .max_memory = 64 << 20 }, ot = o;
    tf_reader *r = NULL, *t = NULL;

    ot.trusted_feed = 1;
    if (tf_reader_open_feed(&r, &o) != TF_OK || tf_reader_open_feed(&t, &ot) != TF_OK) {
        tf_reader_close(r);
        tf_reader_close(t);
        return;
    }
    for (size_t k = 0; n > 0 && k < FT_MAX_ITEMS; k++) {
        tf_item a, b;
        size_t ua = 0, ub = 0;
        tf_status sa = tf_reader_feed(r, d, n, &ua, &a), sb = tf_reader_feed(t, d, n, &ub, &b);
        ft_check(sa == sb && ua == ub, "the trusted feed decodes a record otherwise than msgpack-c");
        ft_check(ua > 0 && ua <= n, "a feed consumed no bytes or more than it was given");
        ft_check(sa == TF_OK || sa == TF_END || (tf_reader_error(r)[0] && tf_reader_error(t)[0]),
                 "a feed error without a message");
        if (sa == TF_OK)
            ft_check(a.type == b.type && ft_ihash(&a) == ft_ihash(&b), "the trusted feed yields another item");
        d += ua;
        n -= ua;
    }
    tf_reader_close(r);
    tf_reader_close(t);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    tf_reader_opts o = { .max_memory = 64 << 20, .max_chunk = 8 << 20 };
    tf_reader *r = NULL;
    int fd;
    const char *path = fuzz_trace_path(&fd);
    tf_status st, st2;
    size_t n1, n2;
    uint64_t h1, h2;

    if (n > 0 && d[0] == 'R')
        ft_feeds(d + 1, n - 1);
    if (fuzz_write_trace(fd, d, n) != 0)
        return 0;
    if ((st = tf_reader_open(&r, path, &o)) != TF_OK) {
        ft_check(r == NULL && tf_reader_open_error()[0], "a failed open without a message");
        return 0;
    }
    ft_value(NULL, tf_reader_env(r), 1);
    st = ft_pass(r, 1, &n1, &h1);
    if (tf_reader_scan(r) != TF_OK)
        ft_check(tf_reader_error(r)[0], "a scan error without a message");
    const tf_reader_info *info = tf_reader_get_info(r);
    ft_check(info->valid_bytes <= info->file_bytes, "more valid bytes than the file holds");
    ft_check(tf_reader_rewind(r) == TF_OK, "rewind failed");
    st2 = ft_pass(r, 0, &n2, &h2);
    if (n1 < FT_MAX_ITEMS)
        ft_check(st == st2 && n1 == n2 && h1 == h2, "the second pass after a rewind differs from the first");
    tf_reader_close(r);
    return 0;
}
