/* tf_rio.c — the reader's chunk I/O: read and check one chunk header at an
 * offset; read, verify and decompress one payload. Shared by streaming,
 * header scans and random blob access; all reads are pread(2), so they do
 * not disturb each other. */
#include "trace-format/tf_int.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

/* Reads up to @p n bytes at @p off; *got is what the file had. */
static tf_status tf_rio_pread(tf_reader *r, uint64_t off, void *dst, size_t n, size_t *got)
{
    uint8_t *p = dst;
    size_t done = 0;

    while (done < n) {
        ssize_t k = pread(r->fd, p + done, n - done, (off_t)(off + done));
        if (k < 0) {
            if (errno == EINTR)
                continue;
            tf_err_set(&r->err, "read at offset %llu: %s", (unsigned long long)(off + done), strerror(errno));
            return TF_ERR_IO;
        }
        if (k == 0)
            break;
        done += (size_t)k;
    }
    *got = done;
    return TF_OK;
}

static int tf_all_zero(const uint8_t *p, size_t n)
{
    while (n--)
        if (*p++)
            return 0;
    return 1;
}

tf_status tf_rio_header(tf_reader *r, uint64_t off, tf_chunk_hdr *h, int *truncated)
{
    tf_status status = TF_OK;
    uint8_t buf[TF_CHUNK_HDR_SIZE + TF_MAX_EXT];
    uint64_t left = off < r->fsize ? r->fsize - off : 0, index_off;
    size_t got = 0;
    unsigned long long o = (unsigned long long)off;

    *truncated = 0;
    if (left == 0)
        return TF_END;
    TF_FORWARD(&r->err, tf_rio_pread(r, off, buf, left < sizeof(buf) ? (size_t)left : sizeof(buf), &got));
    if (got == TF_TRAILER_SIZE && left == TF_TRAILER_SIZE && tf_trailer_get(buf, off, &index_off) == 0)
        return TF_END;                                     /* the trailer: a clean end */
    if (got < TF_CHUNK_HDR_SIZE)
        goto torn;
    if (tf_chunk_hdr_fixed(buf, h) != 0) {
        if (tf_all_zero(buf, TF_CHUNK_HDR_SIZE))
            goto torn;                                     /* zero-filled tail after a system crash */
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: bad chunk magic", o);
    }
    if (h->ext_len > TF_MAX_EXT)
        TF_FAIL(&r->err, TF_ERR_LIMIT, "chunk at offset %llu: header extension of %u bytes (limit %d)",
                o, h->ext_len, TF_MAX_EXT);
    if (got < h->hdr_len)
        goto torn;
    if (tf_chunk_hdr_rest(buf, h) != 0)
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: header checksum mismatch", o);
    if (h->payload_len > left - h->hdr_len)
        goto torn;
    if (h->type == TF_CHUNK_RECORD || h->type == TF_CHUNK_BLOB || h->type == TF_CHUNK_INDEX) {
        if (h->codec > (r->info.major >= 2 ? TF_CODEC_ZSTD_SHUF4 : TF_CODEC_ZSTD))
            TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: unknown codec %u", o, h->codec);
        if (h->raw_len > r->opts.max_chunk)
            TF_FAIL(&r->err, TF_ERR_LIMIT, "chunk at offset %llu: %llu bytes raw (limit %zu)",
                    o, (unsigned long long)h->raw_len, r->opts.max_chunk);
        if (h->codec == TF_CODEC_NONE ? h->payload_len != h->raw_len : h->payload_len > h->raw_len)
            TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: %llu bytes stored for %llu raw",
                    o, (unsigned long long)h->payload_len, (unsigned long long)h->raw_len);
    }
    if (h->type == TF_CHUNK_BLOB &&
        (h->ext_len < TF_BLOB_EXT_SIZE || h->raw_len == 0 || h->piece_off > h->blob_size ||
         h->raw_len > h->blob_size - h->piece_off))
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: blob piece outside its blob", o);
    return TF_OK;
torn:
    *truncated = 1;
    return TF_END;
out:
    return status;
}

/* Grows *buf (capacity *cap) to at least @p n bytes of counted memory. */
static tf_status tf_rio_reserve(tf_reader *r, uint8_t **buf, size_t *cap, size_t n)
{
    uint8_t *p;

    if (n <= *cap)
        return TF_OK;
    p = tf_mem_realloc(&r->mem, *buf, *cap, n);
    if (p == NULL) {
        tf_err_set(&r->err, "no memory for a chunk of %zu bytes (%zu of %zu in use)",
                   n, r->mem.used, r->mem.limit);
        return tf_mem_status(&r->mem, n - *cap);
    }
    *buf = p;
    *cap = n;
    return TF_OK;
}

tf_status tf_rio_payload(tf_reader *r, uint64_t off, const tf_chunk_hdr *h, uint8_t **dst, size_t *cap)
{
    tf_status status = TF_OK;
    unsigned long long o = (unsigned long long)off;
    uint8_t *src, *out;
    size_t got, n;

    TF_FORWARD(&r->err, tf_rio_reserve(r, dst, cap, (size_t)h->raw_len));
    if (h->codec == TF_CODEC_NONE) {
        src = *dst;
    } else {
        TF_FORWARD(&r->err, tf_rio_reserve(r, &r->zbuf, &r->zcap, (size_t)h->payload_len));
        src = r->zbuf;
    }
    TF_FORWARD(&r->err, tf_rio_pread(r, off + h->hdr_len, src, (size_t)h->payload_len, &got));
    if (got != h->payload_len)
        TF_FAIL(&r->err, TF_ERR_IO, "chunk at offset %llu: file shrank while reading", o);
    if (tf_checksum(src, got) != h->check)
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: payload checksum mismatch", o);
    if (h->codec == TF_CODEC_NONE)
        goto out;
    out = *dst;
    if (h->codec == TF_CODEC_ZSTD_SHUF4) {       /* decompressed here, then unshuffled into *dst */
        TF_FORWARD(&r->err, tf_rio_reserve(r, &r->ubuf, &r->ucap, (size_t)h->raw_len));
        out = r->ubuf;
    }
    if (ZSTD_getFrameContentSize(src, got) != h->raw_len)
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: zstd frame size is not the raw length", o);
    n = ZSTD_decompressDCtx(r->dctx, out, (size_t)h->raw_len, src, got);
    if (ZSTD_isError(n) || n != h->raw_len)
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "chunk at offset %llu: zstd: %s", o,
                ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output");
    if (out != *dst)
        tf_unshuffle4(*dst, out, n);
out:
    return status;
}
