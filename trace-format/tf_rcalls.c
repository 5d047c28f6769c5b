/* tf_rcalls.c — the reader's signature table (SIG records) and call
 * merging: BEGINs wait, deep-copied out of the per-record arena, for their
 * END; the merged call is yielded when the END arrives; at the end of the
 * stream the BEGINs that never ended are yielded by seq. */
#include "trace-format/tf_int.h"

#include <stdlib.h>

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
tf_status tf_rec_sig(tf_reader *r, const tf_value *f)
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
        if (ps[i].type != TF_ARRAY || ps[i].v.arr.n < TF_SIG_PARAM_FIELDS || !tf_is_str(&p[0]) || !tf_is_str(&p[1]) ||
            p[2].type != TF_UINT || p[3].type != TF_UINT || p[2].v.u > 255 || p[3].v.u > 255)
            TF_REC_FAIL(r, TF_ERR_CORRUPT, "SIG %llu: parameter %u is not [str, str, kind, dir]",
                        (unsigned long long)id, i);
        bytes += p[0].v.str.len + p[1].v.str.len + 2;
    }
    if (r->sig_cap && (old = r->sigs[tf_sig_slot(r, (uint32_t)id)]) != NULL) {
        /* the stored name's length, NULs in it included: ret_type follows
         * the name and its NUL (tf_put_cstr) */
        size_t old_len = (size_t)(old->ret_type - old->name) - 1;
        if (old->nparams != np || old_len != f[2].v.str.len ||
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
tf_status tf_rec_begin(tf_reader *r, const tf_value *f)
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

/* The call of pending @p p as an item of type @p type (inputs only). */
static void tf_call_of(const tf_pending *p, tf_item_type type, tf_item *item)
{
    tf_call *c = &item->u.call;

    memset(item, 0, sizeof(*item));
    item->type = type;
    c->seq = p->seq;
    c->tid = p->tid;
    c->sig = p->sig;
    c->t_begin = p->t_begin;
    c->args = p->args;
    c->pre = p->pre;
    c->ret.type = TF_NIL;
}

/* Moves pending call @p i into item (complete or not); its block is freed
 * on the next tf_reader_next(). */
static void tf_rec_yield(tf_reader *r, size_t i, tf_item *item)
{
    tf_pending *p = &r->pend[i];

    tf_call_of(p, TF_ITEM_CALL, item);
    r->yielded = p->block;
    r->yielded_len = p->block_len;
    p->block = NULL;
}

void tf_rec_begin_view(tf_reader *r, tf_item *item)
{
    tf_call_of(&r->pend[r->npend - 1], TF_ITEM_BEGIN, item);
}

/* END [3, seq, t_ns, ret, outs, post] */
tf_status tf_rec_end(tf_reader *r, const tf_value *f, tf_item *item)
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

int tf_reader_call_open(const tf_reader *r, uint64_t seq)
{
    size_t i;

    for (i = 0; r && i < r->npend; i++)
        if (r->pend[i].seq == seq && r->pend[i].block)
            return 1;
    return 0;
}

static int tf_pend_cmp(const void *a, const void *b)
{
    const tf_pending *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* End of the stream: yields the calls that never ended, by seq. */
tf_status tf_rec_eof(tf_reader *r, tf_item *item)
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
