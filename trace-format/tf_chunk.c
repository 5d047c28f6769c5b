/* tf_chunk.c — byte layouts of the file header, chunk headers and the
 * trailer (FORMAT.md, "File header", "Chunks", "Trailer"). Pure functions:
 * no I/O, no allocation. */
#include "trace-format/tf_int.h"

#include <xxhash.h>

uint64_t tf_checksum(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

/* Low 32 bits of XXH3-64 of @p n bytes: the check of fixed structures. */
static uint32_t tf_check32(const uint8_t *p, size_t n)
{
    return (uint32_t)XXH3_64bits(p, n);
}

void tf_file_hdr_put(uint8_t out[TF_FILE_HDR_SIZE], uint32_t optional)
{
    memset(out, 0, TF_FILE_HDR_SIZE);
    memcpy(out, TF_FILE_MAGIC, TF_FILE_MAGIC_LEN);
    tf_put16(out + 10, TF_FORMAT_MAJOR);
    tf_put16(out + 12, TF_FORMAT_MINOR);
    tf_put16(out + 14, TF_FILE_HDR_SIZE);
    tf_put32(out + 16, 0);   /* required features this writer uses: none (tf.h) */
    tf_put32(out + 20, optional);   /* optional features the opener said the file uses */
    tf_put32(out + 28, tf_check32(out, 28));
}

int tf_file_hdr_check(const uint8_t h[TF_FILE_HDR_SIZE])
{
    return tf_get32(h + 28) == tf_check32(h, 28) ? 0 : -1;
}

size_t tf_chunk_hdr_put(uint8_t *out, const tf_chunk_hdr *h)
{
    size_t n = TF_CHUNK_HDR_SIZE + h->ext_len;

    memset(out, 0, n);
    memcpy(out, TF_CHUNK_MAGIC, 4);
    out[4] = h->type;
    out[5] = h->codec;
    tf_put16(out + 6, h->ext_len);
    tf_put64(out + 8, h->payload_len);
    tf_put64(out + 16, h->raw_len);
    tf_put64(out + 24, h->check);
    if (h->type == TF_CHUNK_BLOB && h->ext_len >= TF_BLOB_EXT_SIZE) {
        memcpy(out + 40, h->hash, 16);
        tf_put64(out + 56, h->blob_size);
        tf_put64(out + 64, h->piece_off);
    }
    tf_put32(out + 36, tf_check32(out, n));   /* computed with bytes 36..39 = 0 */
    return n;
}

int tf_chunk_hdr_fixed(const uint8_t *p, tf_chunk_hdr *h)
{
    if (memcmp(p, TF_CHUNK_MAGIC, 4) != 0)
        return -1;
    memset(h, 0, sizeof(*h));
    h->type = p[4];
    h->codec = p[5];
    h->ext_len = tf_get16(p + 6);
    h->hdr_len = TF_CHUNK_HDR_SIZE + h->ext_len;
    h->payload_len = tf_get64(p + 8);
    h->raw_len = tf_get64(p + 16);
    h->check = tf_get64(p + 24);
    return 0;
}

int tf_chunk_hdr_rest(const uint8_t *p, tf_chunk_hdr *h)
{
    uint8_t tmp[TF_CHUNK_HDR_SIZE + TF_MAX_EXT];
    uint32_t want = tf_get32(p + 36);

    if (h->hdr_len > sizeof(tmp))
        return -1;
    memcpy(tmp, p, h->hdr_len);
    memset(tmp + 36, 0, 4);
    if (tf_check32(tmp, h->hdr_len) != want)
        return -1;
    if (h->type == TF_CHUNK_BLOB && h->ext_len >= TF_BLOB_EXT_SIZE) {
        memcpy(h->hash, p + 40, 16);
        h->blob_size = tf_get64(p + 56);
        h->piece_off = tf_get64(p + 64);
    }
    return 0;
}

void tf_trailer_put(uint8_t out[TF_TRAILER_SIZE], uint64_t index_off, uint64_t trailer_off)
{
    memset(out, 0, TF_TRAILER_SIZE);
    memcpy(out, TF_TRAILER_MAGIC, 8);
    tf_put64(out + 8, index_off);
    tf_put64(out + 16, trailer_off);
    tf_put32(out + 28, tf_check32(out, 28));
}

int tf_trailer_get(const uint8_t p[TF_TRAILER_SIZE], uint64_t trailer_off, uint64_t *index_off)
{
    if (memcmp(p, TF_TRAILER_MAGIC, 8) != 0 || tf_get32(p + 28) != tf_check32(p, 28))
        return -1;
    if (tf_get64(p + 16) != trailer_off || tf_get64(p + 8) >= trailer_off)
        return -1;
    *index_off = tf_get64(p + 8);
    return 0;
}
