/* tf_records.c — the reader's record stream: RECORD chunks are loaded in
 * file order, each record is validated (tf_mp_skip), unpacked by msgpack-c
 * into a zone, converted into tf_value (arena) and checked against its
 * schema (FORMAT.md, "Records"). SIG records fill the signature table;
 * BEGINs wait, deep-copied, for their END; the merged call is yielded when
 * the END arrives, and BEGINs that never ended are yielded at the end
 * (signatures and call merging are in tf_rcalls.c). */
#include "trace-format/tf_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const tf_rec_names[TF_REC_COUNT] = { "ENV", "SIG", "BEGIN", "END", "DEVTIME", "DATA", "NOTE", "DEVICES" };
static const uint32_t tf_rec_fields[TF_REC_COUNT] = {
    TF_REC_ENV_FIELDS, TF_REC_SIG_FIELDS, TF_REC_BEGIN_FIELDS, TF_REC_END_FIELDS,
    TF_REC_DEVTIME_FIELDS, TF_REC_DATA_FIELDS, TF_REC_NOTE_FIELDS, TF_REC_DEVICES_FIELDS };

tf_status tf_rec_err(tf_reader *r, tf_status st, const char *fmt, ...)
{
    char msg[384];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tf_err_set(&r->err, "chunk at offset %llu: record %llu: %s",
               (unsigned long long)r->chunk_off, (unsigned long long)r->cur_rec, msg);
    return st;
}

/* ------------------------------------------------------------ the stream */

/* Loads the next RECORD chunk, skipping other chunk types. */
static tf_status tf_rec_load_chunk(tf_reader *r)
{
    tf_status status = TF_OK;
    tf_chunk_hdr h;
    uint64_t off;
    int truncated;

    for (;;) {
        if (r->stream_end)
            return TF_END;
        off = r->pos;
        TF_FORWARD(&r->err, status = tf_rio_header(r, off, &h, &truncated));
        if (status == TF_END) {
            r->stream_end = 1;
            r->info.truncated |= truncated;
            r->info.valid_bytes = truncated ? off : r->fsize;
            return TF_END;
        }
        r->pos = off + h.hdr_len + h.payload_len;
        if (h.type != TF_CHUNK_RECORD)
            continue;                    /* blobs, index, unknown types */
        TF_FORWARD(&r->err, tf_rio_payload(r, off, &h, &r->raw, &r->raw_cap));
        r->chunk_off = off;
        r->raw_len = (size_t)h.raw_len;
        r->rpos = 0;
        r->rec_no = 0;
        return TF_OK;
    }
out:
    return status;
}

/* Decodes the next record into *f (n fields, in the arena). */
static tf_status tf_rec_decode(tf_reader *r, const tf_value **f, uint32_t *n)
{
    tf_status status = TF_OK;
    tf_mpc c;
    uint64_t nobj = 0;
    const uint8_t *start;
    size_t len, off = 0;
    msgpack_object obj;
    msgpack_unpack_return ret;
    tf_value top;

    while (r->rpos >= r->raw_len)
        if ((status = tf_rec_load_chunk(r)) != TF_OK)
            return status;
    r->cur_rec = r->rec_no;
    start = r->raw + r->rpos;
    c.p = start;
    c.end = r->raw + r->raw_len;
    tf_arena_reset(&r->arena);
    if (r->trusted) {   /* our own writer's record, in one pass (tf_mp.c) */
        int rc = tf_mp_value(&c, &r->arena, &top);
        if (rc == -2)
            TF_REC_FAIL(r, tf_mem_status(&r->mem, TF_ARENA_BLK), "no memory for the values of a record");
        if (rc != 0)
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "malformed msgpack (a length past the record, nesting over %d, 0xc1 or an unknown ext)",
                        TF_MAX_DEPTH);
        len = (size_t)(c.p - start);
    } else {
        if (tf_mp_skip(&c, &nobj) != 0)
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "malformed msgpack (a length past the chunk, nesting over %d, or 0xc1)",
                        TF_MAX_DEPTH);
        len = (size_t)(c.p - start);
        if (nobj > (r->mem.limit - r->mem.used) / (sizeof(msgpack_object) + sizeof(tf_value)))
            TF_REC_FAIL(r, TF_ERR_LIMIT, "%llu values exceed the memory limit", (unsigned long long)nobj);
        msgpack_zone_clear(&r->zone);
        ret = msgpack_unpack((const char *)start, len, &off, &r->zone, &obj);
        if (ret == MSGPACK_UNPACK_NOMEM_ERROR)
            TF_REC_FAIL(r, TF_ERR_NOMEM, "msgpack-c: out of memory");
        if (ret != MSGPACK_UNPACK_SUCCESS || off != len)
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "msgpack-c cannot unpack it (%d)", (int)ret);
        if ((status = tf_value_from_obj(&r->arena, &obj, &top, &r->err)) != TF_OK)
            TF_REC_FAIL(r, status, "%s", r->err.msg);
    }
    r->rpos += len;
    r->rec_no++;
    if (top.type != TF_ARRAY || top.v.arr.n == 0 || top.v.arr.items[0].type != TF_UINT)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "not an array starting with the record type");
    *f = top.v.arr.items;
    *n = top.v.arr.n;
out:
    return status;
}

/* Copies a TF_STR into the arena as a C string. */
static const char *tf_arena_cstr(tf_reader *r, const tf_value *v)
{
    char *s = tf_arena_alloc(&r->arena, (size_t)v->v.str.len + 1);

    if (s) {
        memcpy(s, v->v.str.ptr, v->v.str.len);
        s[v->v.str.len] = '\0';
    }
    return s;
}

/* DEVTIME, DATA and NOTE records. */
static tf_status tf_rec_misc(tf_reader *r, uint64_t type, const tf_value *f, tf_item *item)
{
    tf_status status = TF_OK;

    memset(item, 0, sizeof(*item));
    if (type == TF_REC_DEVTIME) {
        tf_devtime *d = &item->u.devtime;
        item->type = TF_ITEM_DEVTIME;
        if (!tf_uint(&f[1], &d->seq) || !tf_uint(&f[2], &d->queued) || !tf_uint(&f[3], &d->submit) ||
            !tf_uint(&f[4], &d->start) || !tf_uint(&f[5], &d->end))
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "DEVTIME fields are not unsigned integers");
    } else if (type == TF_REC_DATA) {
        tf_data *d = &item->u.data;
        item->type = TF_ITEM_DATA;
        if (!tf_uint(&f[1], &d->seq) || !tf_is_str(&f[2]))
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "DATA fields are not [5, seq, str, any]");
        d->value = f[3];
        if ((d->key = tf_arena_cstr(r, &f[2])) == NULL)
            TF_REC_FAIL(r, tf_mem_status(&r->mem, f[2].v.str.len), "no memory for a DATA key");
    } else {
        tf_note *d = &item->u.note;
        item->type = TF_ITEM_NOTE;
        if (!tf_uint(&f[1], &d->seq) || !tf_uint(&f[2], &d->object) || !tf_is_str(&f[3]))
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "NOTE fields are not [6, seq, uint, str]");
        if ((d->text = tf_arena_cstr(r, &f[3])) == NULL)
            TF_REC_FAIL(r, tf_mem_status(&r->mem, f[3].v.str.len), "no memory for a NOTE");
    }
out:
    return status;
}

/* Keeps a deep copy of an ENV map (the first one seen). */
static tf_status tf_rec_env(tf_reader *r, const tf_value *map)
{
    size_t bytes;
    uint8_t *bump;

    if (map->type != TF_MAP)
        return tf_rec_err(r, TF_ERR_CORRUPT, "ENV holds no map");
    if (r->env)
        return TF_OK;
    bytes = sizeof(tf_value) + tf_value_deep_size(map);
    if ((r->env = tf_mem_alloc(&r->mem, bytes)) == NULL)
        return tf_rec_err(r, tf_mem_status(&r->mem, bytes), "no memory for the ENV record");
    r->env_len = bytes;
    bump = (uint8_t *)(r->env + 1);
    tf_value_deep_copy(map, r->env, &bump);
    return TF_OK;
}

/* A DEVICES record: the environment gets the devices under the platform
 * with that id (replacing what it had); the item points at them there. */
static tf_status tf_rec_devices(tf_reader *r, const tf_value *f, tf_item *item)
{
    tf_status status = TF_OK;
    const tf_value *plats = r->env ? tf_map_get(r->env, "platforms") : NULL;
    uint64_t pid = 0, id;
    uint32_t i, k, pi = UINT32_MAX;
    tf_value *keys = NULL, *vals = NULL, *pitems = NULL, *pkeys = NULL, *pvals = NULL, top, *dst;
    size_t bytes;
    uint8_t *bump;

    memset(item, 0, sizeof(*item));
    if (!tf_uint(&f[1], &pid) || f[2].type != TF_ARRAY)
        return tf_rec_err(r, TF_ERR_CORRUPT, "DEVICES fields are not [7, uint, array]");
    for (i = 0; i < f[2].v.arr.n; i++)
        if (f[2].v.arr.items[i].type != TF_MAP)
            return tf_rec_err(r, TF_ERR_CORRUPT, "DEVICES: device %u is not a map", i);
    item->type = TF_ITEM_DEVICES;
    item->u.devices.platform = pid;
    item->u.devices.devices = &f[2];
    for (i = 0; plats && plats->type == TF_ARRAY && i < plats->v.arr.n && pi == UINT32_MAX; i++)
        if (tf_value_u64(tf_map_get(&plats->v.arr.items[i], "id"), &id) && id == pid &&
            plats->v.arr.items[i].type == TF_MAP)
            pi = i;
    if (pi == UINT32_MAX)
        return TF_OK;   /* a platform the environment does not list: the item only */
    /* a shallow copy of the environment with the platform's devices in
     * place, then one deep copy of it */
    const tf_value *env = r->env, *pm = &plats->v.arr.items[pi];
    uint32_t pn = pm->v.map.n, en = env->v.map.n;
    keys = calloc(en, sizeof(*keys));
    vals = calloc(en, sizeof(*vals));
    pitems = calloc(plats->v.arr.n, sizeof(*pitems));
    pkeys = calloc((size_t)pn + 1, sizeof(*pkeys));
    pvals = calloc((size_t)pn + 1, sizeof(*pvals));
    if (!keys || !vals || !pitems || !pkeys || !pvals) {
        status = tf_rec_err(r, TF_ERR_NOMEM, "no memory for the devices of platform %llu", (unsigned long long)pid);
        goto out;
    }
    for (k = 0; k < pn; k++) {
        pkeys[k] = pm->v.map.keys[k];
        pvals[k] = pm->v.map.vals[k];
    }
    for (k = 0; k < pn; k++)
        if (pkeys[k].type == TF_STR && pkeys[k].v.str.len == 7 && !memcmp(pkeys[k].v.str.ptr, "devices", 7))
            break;
    if (k == pn) {
        pkeys[pn] = (tf_value){.type = TF_STR, .v.str = {"devices", 7}};
        pn++;
    }
    pvals[k] = f[2];
    for (k = 0; k < plats->v.arr.n; k++)
        pitems[k] = plats->v.arr.items[k];
    pitems[pi] = (tf_value){.type = TF_MAP, .v.map = {pkeys, pvals, pn}};
    for (k = 0; k < en; k++) {
        keys[k] = env->v.map.keys[k];
        vals[k] = &env->v.map.vals[k] == plats ? (tf_value){.type = TF_ARRAY, .v.arr = {pitems, plats->v.arr.n}}
                                                : env->v.map.vals[k];
    }
    top = (tf_value){.type = TF_MAP, .v.map = {keys, vals, en}};
    bytes = sizeof(tf_value) + tf_value_deep_size(&top);
    if ((dst = tf_mem_alloc(&r->mem, bytes)) == NULL) {
        status = tf_rec_err(r, tf_mem_status(&r->mem, bytes), "no memory for the devices of platform %llu",
                            (unsigned long long)pid);
        goto out;
    }
    bump = (uint8_t *)(dst + 1);
    tf_value_deep_copy(&top, dst, &bump);
    tf_mem_free(&r->mem, r->env, r->env_len);
    r->env = dst;
    r->env_len = bytes;
    item->u.devices.devices = tf_map_get(&tf_map_get(dst, "platforms")->v.arr.items[pi], "devices");
out:
    free(keys);
    free(vals);
    free(pitems);
    free(pkeys);
    free(pvals);
    return status;
}

/* Applies decoded record @p f (n fields): reader state, and *item when the
 * record yields one (*yielded = 1): an END, DEVICES, DATA, DEVTIME or NOTE,
 * and for a feed reader a BEGIN too. Record types from a later minor
 * version yield nothing. */
static tf_status tf_rec_apply(tf_reader *r, const tf_value *f, uint32_t n, tf_item *item, int *yielded)
{
    tf_status status = TF_OK;
    uint64_t type = f[0].v.u;

    *yielded = 0;
    if (type >= TF_REC_COUNT)
        return TF_OK;
    if (n < tf_rec_fields[type])
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "%s has %u fields, expected %u", tf_rec_names[type], n,
                    tf_rec_fields[type]);
    switch (type) {
    case TF_REC_ENV:
        TF_FORWARD(&r->err, tf_rec_env(r, &f[1]));
        break;
    case TF_REC_SIG:
        TF_FORWARD(&r->err, tf_rec_sig(r, f));
        break;
    case TF_REC_BEGIN:
        TF_FORWARD(&r->err, tf_rec_begin(r, f));
        if (r->feed) {
            tf_rec_begin_view(r, item);
            *yielded = 1;
        }
        break;
    case TF_REC_END:
        TF_FORWARD(&r->err, tf_rec_end(r, f, item));
        *yielded = 1;
        break;
    case TF_REC_DEVICES:
        TF_FORWARD(&r->err, tf_rec_devices(r, f, item));
        *yielded = 1;
        break;
    default:
        TF_FORWARD(&r->err, tf_rec_misc(r, type, f, item));
        *yielded = 1;
        break;
    }
out:
    return status;
}

/* Frees the block of the call yielded last. */
static void tf_rec_unyield(tf_reader *r)
{
    tf_err_clear(&r->err);
    if (r->yielded) {
        tf_mem_free(&r->mem, r->yielded, r->yielded_len);
        r->yielded = NULL;
    }
}

tf_status tf_rec_next(tf_reader *r, tf_item *item)
{
    tf_status status = TF_OK;
    const tf_value *f;
    uint32_t n;
    int yielded = 0;

    if (r->sticky)
        return r->sticky;
    tf_rec_unyield(r);
    while (!yielded) {
        status = tf_rec_decode(r, &f, &n);
        if (status == TF_END)
            return tf_rec_eof(r, item);
        if (status == TF_OK)
            status = tf_rec_apply(r, f, n, item, &yielded);
        if (status != TF_OK) {
            r->sticky = status;
            return status;
        }
    }
    return TF_OK;
}

tf_status tf_rec_feed(tf_reader *r, const void *rec, size_t len, size_t *used, tf_item *item)
{
    tf_status status = TF_OK;
    const tf_value *f;
    uint32_t n;
    int yielded = 0;

    tf_rec_unyield(r);
    if (len == 0)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "an empty record");
    r->raw = (uint8_t *)rec;   /* borrowed for this record only */
    r->raw_len = len;
    r->rpos = 0;
    status = tf_rec_decode(r, &f, &n);
    *used = status == TF_OK ? r->rpos : len;
    r->raw = NULL;
    r->raw_len = r->rpos = 0;
    if (status == TF_OK)
        status = tf_rec_apply(r, f, n, item, &yielded);
    if (status == TF_OK && !yielded)
        status = TF_END;
out:
    return status;
}

tf_status tf_rec_read_env(tf_reader *r)
{
    const tf_value *f;
    uint32_t n;

    if (tf_rec_decode(r, &f, &n) == TF_OK && f[0].v.u == TF_REC_ENV && n >= 2)
        tf_rec_env(r, &f[1]);
    tf_rec_reset(r);
    tf_err_clear(&r->err);
    return TF_OK;
}

void tf_rec_reset(tf_reader *r)
{
    size_t i;

    for (i = 0; i < r->npend; i++)
        tf_mem_free(&r->mem, r->pend[i].block, r->pend[i].block_len);
    r->npend = 0;
    if (r->yielded)
        tf_mem_free(&r->mem, r->yielded, r->yielded_len);
    r->yielded = NULL;
    r->pos = r->hdr_len;
    r->raw_len = r->rpos = 0;
    r->rec_no = r->cur_rec = 0;
    r->stream_end = 0;
    r->sticky = TF_OK;
    r->eof_sorted = 0;
    r->eof_next = 0;
}

void tf_rec_free(tf_reader *r)
{
    size_t i;

    tf_rec_reset(r);
    tf_mem_free(&r->mem, r->pend, r->cpend * sizeof(*r->pend));
    r->pend = NULL;
    r->cpend = 0;
    for (i = 0; i < r->sig_cap; i++)
        if (r->sigs[i])
            tf_mem_free(&r->mem, r->sigs[i], 0);   /* closing: the count no longer matters */
    tf_mem_free(&r->mem, r->sigs, r->sig_cap * sizeof(*r->sigs));
    r->sigs = NULL;
    r->sig_cap = r->nsigs = 0;
    tf_mem_free(&r->mem, r->env, r->env_len);
    r->env = NULL;
}
