/* tf_rblob.c — the reader's blob store: a table of blob pieces sorted by
 * (hash, piece offset), built from the INDEX chunk when the trailer is
 * valid, else by one scan of the chunk headers (seeking over payloads);
 * random reads decompress only the pieces they touch, keeping the last two
 * in a small LRU cache. Also the container totals of tf_reader_info(). */
#include "trace-format/tf_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int tf_piece_cmp(const void *a, const void *b)
{
    const tf_piece *x = a, *y = b;
    int c = memcmp(x->hash, y->hash, 16);

    if (c)
        return c;
    if (x->piece_off != y->piece_off)
        return x->piece_off < y->piece_off ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

static void tf_hex(const uint8_t hash[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", hash[i]);
}

static void tf_rblob_drop(tf_reader *r)
{
    tf_mem_free(&r->mem, r->pieces, r->pieces_cap * sizeof(*r->pieces));
    r->pieces = NULL;
    r->npieces = r->pieces_cap = 0;
    r->table_ready = 0;
}

void tf_rblob_free(tf_reader *r)
{
    tf_rblob_drop(r);
    for (int i = 0; i < 2; i++) {
        tf_mem_free(&r->mem, r->cache[i].buf, r->cache[i].cap);
        r->cache[i].buf = NULL;
        r->cache[i].cap = 0;
    }
}

/* Appends @p p to the table. */
static tf_status tf_rblob_add(tf_reader *r, const tf_piece *p)
{
    if (r->npieces == r->pieces_cap) {
        size_t c = r->pieces_cap ? r->pieces_cap * 2 : 64;
        tf_piece *t = tf_mem_realloc(&r->mem, r->pieces, r->pieces_cap * sizeof(*t), c * sizeof(*t));
        if (t == NULL) {
            tf_err_set(&r->err, "no memory for a table of %zu blob pieces", c);
            return tf_mem_status(&r->mem, (c - r->pieces_cap) * sizeof(*t));
        }
        r->pieces = t;
        r->pieces_cap = c;
    }
    r->pieces[r->npieces++] = *p;
    return TF_OK;
}

/* Sorts the table, keeps the first copy of each piece, totals the blobs. */
static void tf_rblob_finish(tf_reader *r)
{
    size_t i, k = 0;

    if (r->npieces > 1)
        qsort(r->pieces, r->npieces, sizeof(*r->pieces), tf_piece_cmp);
    r->info.blobs = r->info.blob_bytes_raw = r->info.blob_bytes_stored = 0;
    for (i = 0; i < r->npieces; i++) {
        tf_piece *p = &r->pieces[i];
        if (k > 0 && memcmp(r->pieces[k - 1].hash, p->hash, 16) == 0) {
            if (r->pieces[k - 1].piece_off == p->piece_off)
                continue;
        } else {
            r->info.blobs++;
            r->info.blob_bytes_raw += p->blob_size;
        }
        r->info.blob_bytes_stored += p->stored;
        r->pieces[k++] = *p;
    }
    r->npieces = k;
    r->table_ready = 1;
}

/* Decodes the INDEX payload (FORMAT.md, "Index"). Any surprise: -1. */
static int tf_rblob_parse_index(tf_reader *r, const uint8_t *buf, size_t n, uint64_t index_off)
{
    tf_mpc c = { buf, buf + n };
    uint32_t nkeys, m, k, len, i;
    const uint8_t *key;
    uint64_t v[6], dummy, codec;

    if (tf_mp_map(&c, &nkeys) != 0)
        return -1;
    for (i = 0; i < nkeys; i++) {
        if (tf_mp_str(&c, &key, &len) != 0)
            return -1;
        if (len == 7 && memcmp(key, "records", 7) == 0) {
            if (tf_mp_array(&c, &m) != 0)
                return -1;
            while (m--) {
                if (tf_mp_array(&c, &k) != 0 || k < 3 || tf_mp_uint(&c, &v[0]) || tf_mp_uint(&c, &v[1]) ||
                    tf_mp_uint(&c, &v[2]) || v[0] >= index_off)
                    return -1;
                for (k -= 3; k > 0; k--)
                    if (tf_mp_skip(&c, &dummy) != 0)
                        return -1;
                r->info.record_chunks++;
                r->info.record_bytes_raw += v[1];
                r->info.record_bytes_stored += v[2];
            }
        } else if (len == 6 && memcmp(key, "pieces", 6) == 0) {
            if (tf_mp_array(&c, &m) != 0)
                return -1;
            while (m--) {
                const uint8_t *hash;
                uint32_t hlen;
                tf_piece p;
                if (tf_mp_array(&c, &k) != 0 || k < 6 || tf_mp_bin(&c, &hash, &hlen) != 0 || hlen != 16)
                    return -1;
                for (int j = 0; j < 5; j++)
                    if (tf_mp_uint(&c, &v[j]) != 0)
                        return -1;
                codec = 0;
                if (k > 6 && tf_mp_uint(&c, &codec) != 0)   /* the chunk's codec, since 2.0 */
                    return -1;
                for (k -= k > 6 ? 7 : 6; k > 0; k--)
                    if (tf_mp_skip(&c, &dummy) != 0)
                        return -1;
                memcpy(p.hash, hash, 16);
                p.blob_size = v[0];
                p.piece_off = v[1];
                p.off = v[2];
                p.raw = v[3];
                p.stored = v[4];
                if (p.off >= index_off || p.raw == 0 || p.raw > r->opts.max_chunk || p.piece_off > p.blob_size ||
                    p.raw > p.blob_size - p.piece_off)
                    return -1;
                if (tf_rblob_add(r, &p) != TF_OK)
                    return -1;
                r->info.blob_chunks++;
                r->info.blob_chunks_shuffled += codec == TF_CODEC_ZSTD_SHUF4;
            }
        } else if (tf_mp_skip(&c, &dummy) != 0) {
            return -1;
        }
    }
    return 0;
}

tf_status tf_rblob_load_index(tf_reader *r)
{
    uint8_t t[TF_TRAILER_SIZE];
    uint64_t trailer_off, index_off;
    tf_chunk_hdr h;
    uint8_t *buf = NULL;
    size_t bufcap = 0;
    int truncated, ok = 0;

    if (r->fsize < (uint64_t)r->hdr_len + TF_CHUNK_HDR_SIZE + TF_TRAILER_SIZE)
        return TF_OK;
    trailer_off = r->fsize - TF_TRAILER_SIZE;
    if (pread(r->fd, t, sizeof(t), (off_t)trailer_off) != (ssize_t)sizeof(t) ||
        tf_trailer_get(t, trailer_off, &index_off) != 0 || index_off < r->hdr_len)
        return TF_OK;
    if (tf_rio_header(r, index_off, &h, &truncated) == TF_OK && h.type == TF_CHUNK_INDEX &&
        index_off + h.hdr_len + h.payload_len == trailer_off &&
        tf_rio_payload(r, index_off, &h, &buf, &bufcap) == TF_OK)
        ok = tf_rblob_parse_index(r, buf, (size_t)h.raw_len, index_off) == 0;
    tf_mem_free(&r->mem, buf, bufcap);
    if (ok) {
        tf_rblob_finish(r);
        r->info.has_index = 1;
        r->info.valid_bytes = r->fsize;
    } else {
        tf_rblob_drop(r);
        r->info.record_chunks = r->info.record_bytes_raw = r->info.record_bytes_stored = 0;
        r->info.blob_chunks = r->info.blobs = r->info.blob_bytes_raw = r->info.blob_bytes_stored = 0;
        r->info.blob_chunks_shuffled = 0;
    }
    tf_err_clear(&r->err);   /* a bad index is not an error: readers never need it */
    return TF_OK;
}

tf_status tf_reader_scan(tf_reader *r)
{
    tf_status status = TF_OK;
    tf_chunk_hdr h;
    uint64_t off;
    int truncated;
    tf_piece p;

    if (r == NULL)
        return TF_ERR_ARG;
    tf_err_clear(&r->err);
    if (r->table_ready)
        return TF_OK;
    r->info.record_chunks = r->info.record_bytes_raw = r->info.record_bytes_stored = 0;
    r->info.blob_chunks = r->info.blob_chunks_shuffled = 0;
    for (off = r->hdr_len;; off += h.hdr_len + h.payload_len) {
        TF_FORWARD(&r->err, status = tf_rio_header(r, off, &h, &truncated));
        if (status == TF_END) {
            r->info.truncated |= truncated;
            r->info.valid_bytes = truncated ? off : r->fsize;
            break;
        }
        if (h.type == TF_CHUNK_RECORD) {
            r->info.record_chunks++;
            r->info.record_bytes_raw += h.raw_len;
            r->info.record_bytes_stored += h.payload_len;
        } else if (h.type == TF_CHUNK_BLOB) {
            r->info.blob_chunks++;
            r->info.blob_chunks_shuffled += h.codec == TF_CODEC_ZSTD_SHUF4;
            memcpy(p.hash, h.hash, 16);
            p.blob_size = h.blob_size;
            p.piece_off = h.piece_off;
            p.off = off;
            p.raw = h.raw_len;
            p.stored = h.payload_len;
            TF_FORWARD(&r->err, tf_rblob_add(r, &p));
        }
    }
    tf_rblob_finish(r);
out:
    if (status < 0)
        tf_rblob_drop(r);
    return status < 0 ? status : TF_OK;
}

/* Decompressed bytes of piece @p p, through the two-entry cache. */
static tf_status tf_rblob_piece(tf_reader *r, const tf_piece *p, const uint8_t **data)
{
    tf_status status = TF_OK;
    tf_chunk_hdr h;
    tf_pcache *c;
    int i, truncated;
    unsigned long long o = (unsigned long long)p->off;

    for (i = 0; i < 2; i++) {
        if (r->cache[i].off == p->off) {
            r->cache[i].used = ++r->cache_clock;
            *data = r->cache[i].buf;
            return TF_OK;
        }
    }
    c = &r->cache[r->cache[0].used <= r->cache[1].used ? 0 : 1];
    c->off = UINT64_MAX;
    TF_FORWARD(&r->err, status = tf_rio_header(r, p->off, &h, &truncated));
    if (status == TF_END)
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: blob piece missing (past the end)", o);
    if (h.type != TF_CHUNK_BLOB || memcmp(h.hash, p->hash, 16) != 0 || h.piece_off != p->piece_off ||
        h.raw_len != p->raw || h.blob_size != p->blob_size)
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: not the blob piece the index names", o);
    TF_FORWARD(&r->err, tf_rio_payload(r, p->off, &h, &c->buf, &c->cap));
    c->off = p->off;
    c->len = (size_t)h.raw_len;
    c->used = ++r->cache_clock;
    *data = c->buf;
out:
    return status;
}

tf_status tf_reader_blob(tf_reader *r, const tf_blobref *ref, uint64_t off, void *dst, size_t len)
{
    tf_status status = TF_OK;
    uint8_t *out = dst;
    size_t lo, hi, a, b, mid, k;
    const uint8_t *data;
    char hex[33];

    if (r == NULL || ref == NULL || (dst == NULL && len > 0))
        return TF_ERR_ARG;
    tf_err_clear(&r->err);
    if (off > ref->size || len > ref->size - off)
        TF_FAIL(&r->err, TF_ERR_ARG, "bytes %llu..+%zu outside a blob of %llu",
                (unsigned long long)off, len, (unsigned long long)ref->size);
    if (len == 0)
        goto out;
    if (!r->table_ready)
        TF_FORWARD(&r->err, tf_reader_scan(r));
    tf_hex(ref->hash, hex);
    /* [lo, hi): the pieces of this hash. */
    for (a = 0, b = r->npieces; a < b;) {
        mid = a + (b - a) / 2;
        if (memcmp(r->pieces[mid].hash, ref->hash, 16) < 0)
            a = mid + 1;
        else
            b = mid;
    }
    lo = a;
    for (b = r->npieces; a < b;) {
        mid = a + (b - a) / 2;
        if (memcmp(r->pieces[mid].hash, ref->hash, 16) <= 0)
            a = mid + 1;
        else
            b = mid;
    }
    hi = a;
    if (lo == hi)
        TF_FAIL(&r->err, TF_ERR_NOT_FOUND, "blob %s not in the trace", hex);
    while (len > 0) {
        const tf_piece *p;
        /* the last piece with piece_off <= off */
        for (a = lo, b = hi; a < b;) {
            mid = a + (b - a) / 2;
            if (r->pieces[mid].piece_off <= off)
                a = mid + 1;
            else
                b = mid;
        }
        p = a > lo ? &r->pieces[a - 1] : NULL;
        if (p == NULL || p->blob_size != ref->size || off >= p->piece_off + p->raw)
            TF_FAIL(&r->err, TF_ERR_NOT_FOUND, "blob %s: byte %llu not in the trace", hex,
                    (unsigned long long)off);
        TF_FORWARD(&r->err, tf_rblob_piece(r, p, &data));
        k = (size_t)(p->piece_off + p->raw - off);
        if (k > len)
            k = len;
        memcpy(out, data + (off - p->piece_off), k);
        out += k;
        off += k;
        len -= k;
    }
out:
    return status;
}
