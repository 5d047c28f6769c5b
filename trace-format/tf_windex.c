/* tf_windex.c — the writer's index: where every record chunk and blob piece
 * went, written at close as an INDEX chunk followed by the trailer
 * (FORMAT.md, "Index and trailer"). The index is an optimisation: when an
 * entry cannot be kept (out of memory) no index is written at all. */
#include "trace-format/tf_int.h"

#include <stdlib.h>

/* Grows *p (elements of @p elem bytes) when *n == *cap. @return 0 or -1. */
static int tf_widx_grow(void **p, size_t n, size_t *cap, size_t elem)
{
    size_t c;
    void *q;

    if (n < *cap)
        return 0;
    c = *cap ? *cap * 2 : 256;
    q = realloc(*p, c * elem);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

void tf_widx_add(tf_writer *w, const tf_chunk_hdr *h, uint64_t off)
{
    if (w->index_lost)
        return;
    if (h->type == TF_CHUNK_RECORD) {
        if (tf_widx_grow((void **)&w->irec, w->nirec, &w->cirec, sizeof(*w->irec)) != 0)
            goto lost;
        w->irec[w->nirec++] = (tf_idx_rec){ off, h->raw_len, h->payload_len };
    } else if (h->type == TF_CHUNK_BLOB) {
        tf_idx_piece *p;
        if (tf_widx_grow((void **)&w->ipiece, w->nipiece, &w->cipiece, sizeof(*w->ipiece)) != 0)
            goto lost;
        p = &w->ipiece[w->nipiece++];
        memcpy(p->hash, h->hash, 16);
        p->blob_size = h->blob_size;
        p->piece_off = h->piece_off;
        p->off = off;
        p->raw = h->raw_len;
        p->stored = h->payload_len;
        p->codec = h->codec;
    }
    return;
lost:
    w->index_lost = 1;
}

/* Encodes the index payload (FORMAT.md): a map with "records" and "pieces".
 * @return 0, or -1 when out of memory. */
static int tf_widx_encode(tf_writer *w, msgpack_sbuffer *sb)
{
    msgpack_packer pk;
    int e = 0;
    size_t i;

    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    e |= msgpack_pack_map(&pk, 2);
    e |= msgpack_pack_str_with_body(&pk, "records", 7);
    e |= msgpack_pack_array(&pk, (uint32_t)w->nirec);
    for (i = 0; i < w->nirec && e == 0; i++) {
        e |= msgpack_pack_array(&pk, 3);
        e |= msgpack_pack_uint64(&pk, w->irec[i].off);
        e |= msgpack_pack_uint64(&pk, w->irec[i].raw);
        e |= msgpack_pack_uint64(&pk, w->irec[i].stored);
    }
    e |= msgpack_pack_str_with_body(&pk, "pieces", 6);
    e |= msgpack_pack_array(&pk, (uint32_t)w->nipiece);
    for (i = 0; i < w->nipiece && e == 0; i++) {
        const tf_idx_piece *p = &w->ipiece[i];
        e |= msgpack_pack_array(&pk, 7);
        e |= msgpack_pack_bin_with_body(&pk, p->hash, 16);
        e |= msgpack_pack_uint64(&pk, p->blob_size);
        e |= msgpack_pack_uint64(&pk, p->piece_off);
        e |= msgpack_pack_uint64(&pk, p->off);
        e |= msgpack_pack_uint64(&pk, p->raw);
        e |= msgpack_pack_uint64(&pk, p->stored);
        e |= msgpack_pack_uint64(&pk, p->codec);   /* since 2.0 */
    }
    return e ? -1 : 0;
}

int tf_widx_write(tf_wworker *wk)
{
    tf_writer *w = wk->w;
    msgpack_sbuffer sb;
    uint8_t trailer[TF_TRAILER_SIZE];
    uint64_t index_off;
    tf_job *j = NULL;
    int e = 0;

    if (w->index_lost || w->nirec > UINT32_MAX || w->nipiece > UINT32_MAX)
        return 0;   /* no index: readers scan the chunk headers */
    msgpack_sbuffer_init(&sb);
    if (tf_widx_encode(w, &sb) != 0 || (j = tf_job_new(sb.size)) == NULL)
        goto out;
    memcpy(TF_JOB_PAYLOAD(j), sb.data, sb.size);
    j->len = sb.size;
    j->type = TF_CHUNK_INDEX;
    index_off = w->off;
    if ((e = tf_wjob_write(wk, j)) != 0)
        goto out;
    tf_trailer_put(trailer, index_off, w->off);
    if ((e = tf_write_all(w->fd, trailer, sizeof(trailer))) != 0)
        goto out;
    w->off += sizeof(trailer);
out:
    free(j);
    msgpack_sbuffer_destroy(&sb);
    return e;
}
