/* diff_data.c — data bytes for `clrr diff`: two bins or blob references
 * compared through rpl_compare (exactly for inputs, with the tolerance for
 * read-backs), blobs read in pieces of CLI_DIFF_PIECE bytes so that memory stays
 * bounded; and late DATA items, kept per (call, key) until the other trace's
 * arrives. */
#include "tools/clrr/diff_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CLI_DIFF_PIECE ((size_t)1 << 20)   /* a multiple of every element size */

int cli_diff_is_data(const tf_value *v)
{
    return v && (v->type == TF_BIN || v->type == TF_BLOB || tf_value_hashref(v, NULL));
}

/* Read-backs recorded as hashes (--hash-reads, FORMAT.md 11.4) on either
 * side: compared by hash (a blob's reference is its bytes' hash, a bin is
 * hashed); no byte difference can be shown. 1 same, 0 different. */
static int cli_diff_hash_cmp(const tf_value *a, const tf_value *b, cli_diff_found *f)
{
    tf_blobref r[2];
    const tf_value *v[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (tf_value_hashref(v[i], &r[i]))
            continue;
        if (v[i]->type == TF_BLOB)
            r[i] = v[i]->v.blob;
        else
            tf_hash(v[i]->v.str.ptr, v[i]->v.str.len, &r[i]);
    }
    if (r[0].size == r[1].size && !memcmp(r[0].hash, r[1].hash, 16))
        return 1;
    f->size_a = r[0].size;
    f->size_b = r[1].size;
    memset(&f->cmp, 0, sizeof f->cmp);
    if (r[0].size != r[1].size)
        snprintf(f->text, sizeof f->text, "sizes differ: A %" PRIu64 " B %" PRIu64 " bytes", r[0].size, r[1].size);
    else
        snprintf(f->text, sizeof f->text, "the %" PRIu64 " bytes' hashes differ (recorded as a hash: "
                 "no byte difference to show, no tolerance applies)", r[0].size);
    return 0;
}

static uint64_t cli_diff_data_size(const tf_value *v)
{
    return v->type == TF_BLOB ? v->v.blob.size : v->v.str.len;
}

/* Bytes [off, off+len) of data value @p v of trace @p side: a pointer into
 * the bin, or a copy into @p buf. NULL on a read error (d->err set). */
static const unsigned char *cli_diff_data_piece(cli_diff_ctx *d, int side, const tf_value *v,
                                                uint64_t off, size_t len, unsigned char *buf)
{
    static const unsigned char none[1];
    if (len == 0)
        return none;
    if (v->type == TF_BIN)
        return (const unsigned char *)v->v.str.ptr + off;
    tf_status s = tf_reader_blob(d->side[side].r, &v->v.blob, off, buf, len);
    if (s == TF_OK)
        return buf;
    d->err = s;
    d->err_side = side;
    return NULL;
}

/* An element of @p es bytes at @p p as a double. */
static double cli_diff_elem(const unsigned char *p, size_t es)
{
    if (es == 8) {
        double x;
        memcpy(&x, p, 8);
        return x;
    }
    float x;
    memcpy(&x, p, 4);
    return (double)x;
}

/* Words for the result of a comparison that found a difference. */
static void cli_diff_data_text(const cli_diff_ctx *d, int readback, cli_diff_found *f,
                               unsigned va, unsigned vb, int have_bytes)
{
    const rpl_cmp *c = &f->cmp;
    int exact = !readback || rpl_tolerance_is_exact(&d->tol);
    if (!exact) {
        const char *en = c->elem_size == 8 ? "f64" : "f32";
        int n = snprintf(f->text, sizeof f->text,
                         "%" PRIu64 " of %" PRIu64 " %s elements, first at byte %" PRIu64,
                         c->differ, c->elems, en, c->first);
        if (n > 0 && (size_t)n < sizeof f->text && f->have_vals)
            snprintf(f->text + n, sizeof f->text - (size_t)n, " (A %.*g B %.*g), largest difference %.3g",
                     c->elem_size == 8 ? 17 : 9, f->va, c->elem_size == 8 ? 17 : 9, f->vb, c->max_abs);
        return;
    }
    int n;
    if (f->words)
        n = snprintf(f->text, sizeof f->text, "%" PRIu64 " of %" PRIu64 " bytes in %" PRIu64 " of %" PRIu64
                     " 4-byte words, first at byte %" PRIu64, c->differ, c->elems, f->words, c->elems / 4,
                     c->first);
    else
        n = snprintf(f->text, sizeof f->text, "%" PRIu64 " of %" PRIu64 " bytes, first at byte %" PRIu64,
                     c->differ, c->elems, c->first);
    if (n <= 0 || (size_t)n >= sizeof f->text)
        return;
    if (f->have_vals)
        snprintf(f->text + n, sizeof f->text - (size_t)n, " (as f32: A %.9g B %.9g)", f->va, f->vb);
    else if (have_bytes)
        snprintf(f->text + n, sizeof f->text - (size_t)n, " (A 0x%02x B 0x%02x)", va, vb);
}

int cli_diff_data_cmp(cli_diff_ctx *d, const tf_value *a, const tf_value *b, int readback,
                      cli_diff_found *f)
{
    if (tf_value_hashref(a, NULL) || tf_value_hashref(b, NULL))
        return cli_diff_hash_cmp(a, b, f);
    uint64_t sa = cli_diff_data_size(a), sb = cli_diff_data_size(b);
    if (a->type == TF_BLOB && b->type == TF_BLOB && sa == sb &&
        !memcmp(a->v.blob.hash, b->v.blob.hash, sizeof a->v.blob.hash))
        return 1;
    f->size_a = sa;
    f->size_b = sb;
    if (sa != sb) {
        snprintf(f->text, sizeof f->text, "sizes differ: A %" PRIu64 " B %" PRIu64 " bytes", sa, sb);
        memset(&f->cmp, 0, sizeof f->cmp);
        return 0;
    }
    const rpl_tolerance *t = readback ? &d->tol : NULL;
    unsigned char *ba = NULL, *bb = NULL;
    size_t cap = sa < CLI_DIFF_PIECE ? (size_t)sa : CLI_DIFF_PIECE;
    if ((a->type == TF_BLOB && !(ba = malloc(cap ? cap : 1))) ||
        (b->type == TF_BLOB && !(bb = malloc(cap ? cap : 1)))) {
        free(ba);
        d->err = TF_ERR_NOMEM;
        d->err_side = 0;
        return -1;
    }
    rpl_cmp tot;
    memset(&tot, 0, sizeof tot);
    unsigned byte_a = 0, byte_b = 0;
    int rc = 1, have_bytes = 0;
    for (uint64_t off = 0; off < sa || off == 0; off += CLI_DIFF_PIECE) {
        size_t n = sa - off < CLI_DIFF_PIECE ? (size_t)(sa - off) : CLI_DIFF_PIECE;
        const unsigned char *pa = cli_diff_data_piece(d, 0, a, off, n, ba);
        const unsigned char *pb = pa ? cli_diff_data_piece(d, 1, b, off, n, bb) : NULL;
        if (!pa || !pb) {
            rc = -1;
            break;
        }
        rpl_cmp c;
        rpl_compare(pa, pb, n, t, &c);
        tot.elems += c.elems;
        tot.elem_size = c.elem_size;
        if (c.max_abs > tot.max_abs)
            tot.max_abs = c.max_abs;
        if (c.differ && !tot.differ) {
            tot.first = off + c.first;
            /* the element holding the first difference, for the message */
            size_t es = c.elem_size > 1 ? c.elem_size : (sa % 4 == 0 ? 4 : 0);
            size_t at = es ? (size_t)c.first / es * es : 0;
            if (es && at + es <= n) {
                f->have_vals = 1;
                f->va = cli_diff_elem(pa + at, es);
                f->vb = cli_diff_elem(pb + at, es);
            } else if (c.elem_size == 1) {
                have_bytes = 1;
                byte_a = pa[c.first];
                byte_b = pb[c.first];
            }
        }
        tot.differ += c.differ;
        if (c.differ && c.elem_size == 1 && sa % 4 == 0)
            for (size_t k = 0; k < n; k += 4)
                f->words += memcmp(pa + k, pb + k, 4) != 0;
        if (sa - off <= CLI_DIFF_PIECE)
            break;
    }
    free(ba);
    free(bb);
    if (rc < 0)
        return -1;
    f->cmp = tot;
    if (!tot.differ)
        return 1;
    cli_diff_data_text(d, readback, f, byte_a, byte_b, have_bytes);
    return 0;
}

/* ------------------------------------------------------------ late data */

static void cli_diff_pending_drop(cli_diff_ctx *d, size_t i)
{
    free(d->pend[i].bin[0]);
    free(d->pend[i].bin[1]);
    d->pend[i] = d->pend[--d->npend];
}

/* Compares the two sides of pending entry @p i, then drops it. */
static int cli_diff_pending_compare(cli_diff_ctx *d, size_t i)
{
    cli_diff_pending *p = &d->pend[i];
    cli_diff_slot *s = cli_diff_slot_find(d, 0, p->seq_a);
    if (s)
        s->expect = 0;
    int rc = 0;
    if (cli_diff_is_data(&p->val[0]) && cli_diff_is_data(&p->val[1])) {
        cli_diff_found f;
        memset(&f, 0, sizeof f);
        d->readbacks++;
        int eq = cli_diff_data_cmp(d, &p->val[0], &p->val[1], 1, &f);
        if (eq < 0) {
            rc = -1;
        } else if (!eq) {
            f.kind = CLI_DIFF_DATA;
            f.output = 1;
            f.pos = s ? s->pos : p->pos;
            f.seq_a = s ? s->seq[0] : p->seq_a;
            f.seq_b = s ? s->seq[1] : p->seq_a;
            f.fn_a = f.fn_b = s ? s->fn : NULL;
            snprintf(f.what, sizeof f.what, "%s", p->key);
            if (s) {
                f.object = s->object;
                memcpy(f.objkind, s->objkind, sizeof f.objkind);
                memcpy(f.writers, s->writers, sizeof f.writers);
            }
            if (cli_diff_add(d, &f))
                rc = -1;
        }
    } else if (cli_diff_is_data(&p->val[0]) || cli_diff_is_data(&p->val[1])) {
        d->uncompared++;   /* captured on one side only (false: not captured) */
    }
    cli_diff_pending_drop(d, i);
    return rc;
}

int cli_diff_late_data(cli_diff_ctx *d, int side, const tf_data *data)
{
    const cli_diff_slot *s = cli_diff_slot_find(d, side, data->seq);
    uint64_t seq_a = s ? s->seq[0] : data->seq;
    const char *key = data->key ? data->key : "";
    size_t i;
    for (i = 0; i < d->npend; i++)
        if (d->pend[i].seq_a == seq_a && !strncmp(d->pend[i].key, key, sizeof d->pend[i].key - 1))
            break;
    if (i == d->npend) {
        if (d->npend == d->cappend) {
            size_t cap = d->cappend ? d->cappend * 2 : 16;
            cli_diff_pending *n = realloc(d->pend, cap * sizeof *n);
            if (!n) {
                d->err = TF_ERR_NOMEM;
                d->err_side = side;
                return -1;
            }
            d->pend = n;
            d->cappend = cap;
        }
        memset(&d->pend[i], 0, sizeof d->pend[i]);
        d->pend[i].seq_a = seq_a;
        d->pend[i].pos = s ? s->pos : 0;
        snprintf(d->pend[i].key, sizeof d->pend[i].key, "%s", key);
        d->npend++;
    }
    cli_diff_pending *p = &d->pend[i];
    free(p->bin[side]);
    p->bin[side] = NULL;
    p->val[side] = data->value;
    if (data->value.type == TF_BIN) {   /* copied: the reader's arena moves on */
        uint32_t n = data->value.v.str.len;
        p->bin[side] = malloc(n ? n : 1);
        if (!p->bin[side]) {
            d->err = TF_ERR_NOMEM;
            d->err_side = side;
            return -1;
        }
        memcpy(p->bin[side], data->value.v.str.ptr, n);
        p->val[side].v.str.ptr = (const char *)p->bin[side];
    } else if (tf_value_hashref(&data->value, NULL)) {
        /* kept as a map of our own: the reader's arena moves on */
        tf_blobref ref;
        tf_value_hashref(&data->value, &ref);
        p->bin[side] = malloc(sizeof(tf_value) * 4 + 16);
        if (!p->bin[side]) {
            d->err = TF_ERR_NOMEM;
            d->err_side = side;
            return -1;
        }
        tf_value *kv = (tf_value *)(void *)p->bin[side];
        char *h = (char *)(kv + 4);
        memcpy(h, ref.hash, 16);
        kv[0] = (tf_value){.type = TF_STR, .v.str = {"hash", 4}};
        kv[1] = (tf_value){.type = TF_STR, .v.str = {"size", 4}};
        kv[2] = (tf_value){.type = TF_BIN, .v.str = {h, 16}};
        kv[3] = (tf_value){.type = TF_UINT, .v.u = ref.size};
        p->val[side] = (tf_value){.type = TF_MAP, .v.map = {kv, kv + 2, 2}};
    } else if (data->value.type != TF_BLOB && data->value.type != TF_BOOL) {
        memset(&p->val[side], 0, sizeof p->val[side]);   /* kept as nil */
    }
    p->have[side] = 1;
    if (p->have[0] && p->have[1])
        return cli_diff_pending_compare(d, i);
    return 0;
}

void cli_diff_pending_finish(cli_diff_ctx *d)
{
    for (size_t i = 0; i < d->npend; i++) {
        if (cli_diff_is_data(&d->pend[i].val[0]) || cli_diff_is_data(&d->pend[i].val[1]))
            d->uncompared++;
        free(d->pend[i].bin[0]);
        free(d->pend[i].bin[1]);
    }
    free(d->pend);
    d->pend = NULL;
    d->npend = d->cappend = 0;
}
