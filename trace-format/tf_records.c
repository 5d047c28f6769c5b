/* tf_records.c — the reader's record stream: RECORD chunks are loaded in
 * file order, each record is validated (tf_mp_skip), unpacked by msgpack-c
 * into a zone, converted into tf_value (arena) and checked against its
 * schema (FORMAT.md, "Records"). SIG records fill the signature table;
 * BEGINs wait, deep-copied, for their END; the merged call is yielded when
 * the END arrives, and BEGINs that never ended are yielded at the end. */
#include "trace-format/tf_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const tf_rec_names[] = { "ENV", "SIG", "BEGIN", "END", "DEVTIME", "DATA", "NOTE" };
static const uint32_t tf_rec_fields[] = { 2, 5, 7, 6, 6, 4, 4 };

/* Sets a message prefixed with the chunk offset and record index. */
static tf_status tf_rec_err(tf_reader *r, tf_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tf_status tf_rec_err(tf_reader *r, tf_status st, const char *fmt, ...)
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

#define TF_REC_FAIL(r, st, ...) do { status = tf_rec_err((r), (st), __VA_ARGS__); goto out; } while (0)

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
    if (tf_mp_skip(&c, &nobj) != 0)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "malformed msgpack (a length past the chunk, nesting over %d, or 0xc1)",
                    TF_MAX_DEPTH);
    len = (size_t)(c.p - start);
    if (nobj > (r->mem.limit - r->mem.used) / (sizeof(msgpack_object) + sizeof(tf_value)))
        TF_REC_FAIL(r, TF_ERR_LIMIT, "%llu values exceed the memory limit", (unsigned long long)nobj);
    msgpack_zone_clear(&r->zone);
    tf_arena_reset(&r->arena);
    ret = msgpack_unpack((const char *)start, len, &off, &r->zone, &obj);
    if (ret == MSGPACK_UNPACK_NOMEM_ERROR)
        TF_REC_FAIL(r, TF_ERR_NOMEM, "msgpack-c: out of memory");
    if (ret != MSGPACK_UNPACK_SUCCESS || off != len)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "msgpack-c cannot unpack it (%d)", (int)ret);
    if ((status = tf_value_from_obj(&r->arena, &obj, &top, &r->err)) != TF_OK)
        TF_REC_FAIL(r, status, "%s", r->err.msg);
    r->rpos += len;
    r->rec_no++;
    if (top.type != TF_ARRAY || top.v.arr.n == 0 || top.v.arr.items[0].type != TF_UINT)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "not an array starting with the record type");
    *f = top.v.arr.items;
    *n = top.v.arr.n;
out:
    return status;
}

/* ------------------------------------------------------------ signatures */

static size_t tf_sig_slot(const tf_reader *r, uint32_t id)
{
    size_t i = (size_t)(id * 2654435761u) & (r->sig_cap - 1);

    while (r->sigs[i] && r->sigs[i]->id != id)
        i = (i + 1) & (r->sig_cap - 1);
    return i;
}

const tf_sig *tf_reader_sig(tf_reader *r, uint32_t id)
{
    return r && r->sig_cap ? r->sigs[tf_sig_slot(r, id)] : NULL;
}

/* Grows the signature table to keep it at most half full. */
static tf_status tf_sig_grow(tf_reader *r)
{
    size_t cap = r->sig_cap ? r->sig_cap * 2 : 64, i;
    tf_sig **old = r->sigs, **tab = tf_mem_alloc(&r->mem, cap * sizeof(*tab));
    size_t old_cap = r->sig_cap;

    if (tab == NULL)
        return tf_mem_status(&r->mem, cap * sizeof(*tab));
    memset(tab, 0, cap * sizeof(*tab));
    r->sigs = tab;
    r->sig_cap = cap;
    for (i = 0; i < old_cap; i++)
        if (old[i])
            r->sigs[tf_sig_slot(r, old[i]->id)] = old[i];
    tf_mem_free(&r->mem, old, old_cap * sizeof(*old));
    return TF_OK;
}

static int tf_is_str(const tf_value *v) { return v->type == TF_STR; }
static int tf_map_or_nil(const tf_value *v) { return v->type == TF_MAP || v->type == TF_NIL; }

/* @return 1 when @p v is an unsigned integer (*out), else 0. */
static int tf_uint(const tf_value *v, uint64_t *out)
{
    return v->type == TF_UINT ? (*out = v->v.u, 1) : 0;
}

/* Copies a TF_STR into *bump as a C string. */
static const char *tf_put_cstr(const tf_value *v, char **bump)
{
    char *s = *bump;

    memcpy(s, v->v.str.ptr, v->v.str.len);
    s[v->v.str.len] = '\0';
    *bump += v->v.str.len + 1;
    return s;
}

/* SIG [1, sig_id, name, ret_type, [[name, type, kind, dir], ...]] */
static tf_status tf_rec_sig(tf_reader *r, const tf_value *f)
{
    tf_status status = TF_OK;
    const tf_value *ps, *p;
    uint64_t id, kind, dir;
    size_t bytes, slot;
    uint32_t i, np;
    tf_sig *sig, *old;
    tf_param *params;
    char *bump;

    if (!tf_uint(&f[1], &id) || id > UINT32_MAX || !tf_is_str(&f[2]) ||
        !tf_is_str(&f[3]) || f[4].type != TF_ARRAY)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "SIG fields are not [1, uint, str, str, array]");
    ps = f[4].v.arr.items;
    np = f[4].v.arr.n;
    if (np > TF_MAX_PARAMS)
        TF_REC_FAIL(r, TF_ERR_LIMIT, "SIG %llu has %u parameters (limit %d)", (unsigned long long)id, np,
                    TF_MAX_PARAMS);
    bytes = sizeof(tf_sig) + np * sizeof(tf_param) + f[2].v.str.len + f[3].v.str.len + 2;
    for (i = 0; i < np; i++) {
        p = ps[i].v.arr.items;
        if (ps[i].type != TF_ARRAY || ps[i].v.arr.n < 4 || !tf_is_str(&p[0]) || !tf_is_str(&p[1]) ||
            p[2].type != TF_UINT || p[3].type != TF_UINT || p[2].v.u > 255 || p[3].v.u > 255)
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "SIG %llu: parameter %u is not [str, str, kind, dir]",
                        (unsigned long long)id, i);
        bytes += p[0].v.str.len + p[1].v.str.len + 2;
    }
    if (r->sig_cap && (old = r->sigs[tf_sig_slot(r, (uint32_t)id)]) != NULL) {
        if (old->nparams != np || strlen(old->name) != f[2].v.str.len ||
            memcmp(old->name, f[2].v.str.ptr, f[2].v.str.len) != 0)
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "SIG %llu redefined as a different function", (unsigned long long)id);
        return TF_OK;                    /* seen before (e.g. after a rewind) */
    }
    if (r->nsigs >= TF_MAX_SIGS)
        TF_REC_FAIL(r, TF_ERR_LIMIT, "more than %d signatures", TF_MAX_SIGS);
    if ((r->nsigs + 1) * 2 > r->sig_cap)
        TF_FORWARD(&r->err, tf_sig_grow(r));
    if ((sig = tf_mem_alloc(&r->mem, bytes)) == NULL)
        TF_REC_FAIL(r, tf_mem_status(&r->mem, bytes), "no memory for SIG %llu", (unsigned long long)id);
    params = (tf_param *)(sig + 1);
    bump = (char *)(params + np);
    sig->id = (uint32_t)id;
    sig->name = tf_put_cstr(&f[2], &bump);
    sig->ret_type = tf_put_cstr(&f[3], &bump);
    sig->nparams = np;
    sig->params = params;
    for (i = 0; i < np; i++) {
        p = ps[i].v.arr.items;
        params[i].name = tf_put_cstr(&p[0], &bump);
        params[i].type = tf_put_cstr(&p[1], &bump);
        kind = p[2].v.u;
        dir = p[3].v.u;
        params[i].kind = (uint8_t)kind;
        params[i].dir = (uint8_t)dir;
    }
    slot = tf_sig_slot(r, sig->id);
    r->sigs[slot] = sig;
    r->nsigs++;
out:
    return status;
}

/* --------------------------------------------------------------- calls */

/* BEGIN [2, seq, tid, sig_id, t_ns, args, pre] */
static tf_status tf_rec_begin(tf_reader *r, const tf_value *f)
{
    tf_status status = TF_OK;
    uint64_t seq, tid, sig_id;
    int64_t t;
    const tf_sig *sig;
    tf_pending *p;
    size_t bytes, i;
    uint8_t *bump;

    if (!tf_uint(&f[1], &seq) || !tf_uint(&f[2], &tid) || !tf_uint(&f[3], &sig_id) ||
        !tf_value_i64(&f[4], &t) || f[4].type == TF_BOOL || f[5].type != TF_ARRAY || !tf_map_or_nil(&f[6]))
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "BEGIN fields are not [2, seq, tid, sig, int, array, map|nil]");
    if (sig_id > UINT32_MAX || (sig = tf_reader_sig(r, (uint32_t)sig_id)) == NULL)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "BEGIN %llu names unknown signature %llu",
                    (unsigned long long)seq, (unsigned long long)sig_id);
    if (f[5].v.arr.n != sig->nparams)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "BEGIN %llu of %s has %u arguments, expected %u",
                    (unsigned long long)seq, sig->name, f[5].v.arr.n, sig->nparams);
    for (i = 0; i < r->npend; i++)
        if (r->pend[i].seq == seq)
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "BEGIN %llu while call %llu is pending",
                        (unsigned long long)seq, (unsigned long long)seq);
    if (r->npend >= TF_MAX_PENDING)
        TF_REC_FAIL(r, TF_ERR_LIMIT, "more than %d calls begun and not ended", TF_MAX_PENDING);
    if (r->npend == r->cpend) {
        size_t c = r->cpend ? r->cpend * 2 : 16;
        tf_pending *np = tf_mem_realloc(&r->mem, r->pend, r->cpend * sizeof(*np), c * sizeof(*np));
        if (np == NULL)
            TF_REC_FAIL(r, tf_mem_status(&r->mem, c * sizeof(*np)), "no memory for pending calls");
        r->pend = np;
        r->cpend = c;
    }
    bytes = tf_value_deep_size(&f[5]) + sizeof(tf_value) + tf_value_deep_size(&f[6]);
    p = &r->pend[r->npend];
    memset(p, 0, sizeof(*p));
    if ((p->block = tf_mem_alloc(&r->mem, bytes)) == NULL)
        TF_REC_FAIL(r, tf_mem_status(&r->mem, bytes), "no memory for BEGIN %llu", (unsigned long long)seq);
    p->block_len = bytes;
    bump = p->block;
    p->pre = (tf_value *)bump;           /* the args array node lives just after */
    bump += sizeof(tf_value);
    {
        tf_value args;
        tf_value_deep_copy(&f[5], &args, &bump);
        p->args = (tf_value *)args.v.arr.items;
    }
    tf_value_deep_copy(&f[6], p->pre, &bump);
    if (f[6].type == TF_NIL)
        p->pre = NULL;
    p->seq = seq;
    p->tid = tid;
    p->sig = sig;
    p->t_begin = t;
    r->npend++;
out:
    return status;
}

/* Moves pending call @p i into item (complete or not); its block is freed
 * on the next tf_reader_next(). */
static void tf_rec_yield(tf_reader *r, size_t i, tf_item *item)
{
    tf_pending *p = &r->pend[i];
    tf_call *c = &item->u.call;

    memset(item, 0, sizeof(*item));
    item->type = TF_ITEM_CALL;
    c->seq = p->seq;
    c->tid = p->tid;
    c->sig = p->sig;
    c->t_begin = p->t_begin;
    c->args = p->args;
    c->pre = p->pre;
    c->ret.type = TF_NIL;
    r->yielded = p->block;
    r->yielded_len = p->block_len;
    p->block = NULL;
}

/* END [3, seq, t_ns, ret, outs, post] */
static tf_status tf_rec_end(tf_reader *r, const tf_value *f, tf_item *item)
{
    tf_status status = TF_OK;
    uint64_t seq;
    int64_t t;
    size_t i;
    tf_call *c = &item->u.call;

    if (!tf_uint(&f[1], &seq) || !tf_value_i64(&f[2], &t) || f[2].type == TF_BOOL ||
        f[4].type != TF_ARRAY || !tf_map_or_nil(&f[5]))
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "END fields are not [3, seq, int, any, array, map|nil]");
    for (i = r->npend; i-- > 0;)
        if (r->pend[i].seq == seq)
            break;
    if (i == (size_t)-1)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "END %llu without a pending BEGIN", (unsigned long long)seq);
    if (f[4].v.arr.n != r->pend[i].sig->nparams)
        TF_REC_FAIL(r, TF_ERR_CORRUPT, "END %llu of %s has %u outputs, expected %u", (unsigned long long)seq,
                    r->pend[i].sig->name, f[4].v.arr.n, r->pend[i].sig->nparams);
    tf_rec_yield(r, i, item);
    c->complete = 1;
    c->t_end = t;
    c->ret = f[3];
    c->outs = f[4].v.arr.items;
    c->post = f[5].type == TF_MAP ? &f[5] : NULL;
    r->pend[i] = r->pend[--r->npend];
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

static int tf_pend_cmp(const void *a, const void *b)
{
    const tf_pending *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* End of the stream: yields the calls that never ended, by seq. */
static tf_status tf_rec_eof(tf_reader *r, tf_item *item)
{
    if (!r->eof_sorted) {
        if (r->npend > 1)
            qsort(r->pend, r->npend, sizeof(*r->pend), tf_pend_cmp);
        r->eof_sorted = 1;
        r->eof_next = 0;
    }
    if (r->eof_next >= r->npend)
        return TF_END;
    tf_rec_yield(r, r->eof_next++, item);
    return TF_OK;
}

tf_status tf_rec_next(tf_reader *r, tf_item *item)
{
    tf_status status = TF_OK;
    const tf_value *f;
    uint32_t n;
    uint64_t type;

    if (r->sticky)
        return r->sticky;
    tf_err_clear(&r->err);
    if (r->yielded) {
        tf_mem_free(&r->mem, r->yielded, r->yielded_len);
        r->yielded = NULL;
    }
    for (;;) {
        status = tf_rec_decode(r, &f, &n);
        if (status == TF_END)
            return tf_rec_eof(r, item);
        if (status != TF_OK)
            goto out;
        type = f[0].v.u;
        if (type > TF_REC_NOTE)
            continue;                    /* a record type from a later minor version */
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
            break;
        case TF_REC_END:
            TF_FORWARD(&r->err, tf_rec_end(r, f, item));
            return TF_OK;
        default:
            TF_FORWARD(&r->err, tf_rec_misc(r, type, f, item));
            return TF_OK;
        }
    }
out:
    r->sticky = status;
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
