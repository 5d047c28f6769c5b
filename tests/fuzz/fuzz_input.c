/* fuzz_input.c — a fuzz input turned into a trace file (the layouts are in
 * fuzz.h). Headers, checksums and the index are written here from
 * FORMAT.md alone, as a second writer would, so that a mutated input
 * reaches the parsers behind the checksums. */
#include "tests/fuzz/fuzz.h"

#include <fcntl.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#define FZ_MAX_CHUNKS 4096

static void fz_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void fz_put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i); }
static void fz_put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i); }
static uint32_t fz_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t fz_get64(const uint8_t *p) { return fz_get32(p) | (uint64_t)fz_get32(p + 4) << 32; }

/* A chunk written so far, for a generated index. */
typedef struct fz_chunk {
    uint8_t type, codec;
    uint8_t hash[16];
    uint64_t blob_size, piece_off, off, raw, stored;
} fz_chunk;

/* The file being built in memory. */
typedef struct fz_out {
    uint8_t *p;
    size_t len, cap;
    int oom;
    fz_chunk *chunks;
    size_t nchunks;
} fz_out;

static uint8_t *fz_room(fz_out *o, size_t n)
{
    if (o->oom)
        return NULL;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n)
            cap *= 2;
        uint8_t *p = realloc(o->p, cap);
        if (!p) {
            o->oom = 1;
            return NULL;
        }
        o->p = p;
        o->cap = cap;
    }
    uint8_t *at = o->p + o->len;
    o->len += n;
    return at;
}

static void fz_bytes(fz_out *o, const void *p, size_t n)
{
    uint8_t *at = fz_room(o, n);
    if (at && n)
        memcpy(at, p, n);
}

static void fz_file_header(fz_out *o)
{
    uint8_t *h = fz_room(o, 32);
    if (!h)
        return;
    memset(h, 0, 32);
    memcpy(h, "\x89" "CLRR\r\n\x1a\n", 9);
    fz_put16(h + 10, 2);   /* format 2.0: codec 2 is valid */
    fz_put16(h + 14, 32);
    fz_put32(h + 28, (uint32_t)XXH3_64bits(h, 28));
}

/* Appends a chunk: header (with @p ext, ext_len bytes), then the payload
 * of @p stored bytes standing for @p raw bytes. */
static void fz_chunk_put(fz_out *o, uint8_t type, uint8_t codec, const uint8_t *ext, uint16_t ext_len,
                         const void *payload, size_t stored, size_t raw)
{
    uint64_t off = o->len;
    uint8_t *h = fz_room(o, 40 + (size_t)ext_len);
    if (!h)
        return;
    memset(h, 0, 40);
    memcpy(h, "\x89" "CHK", 4);
    h[4] = type;
    h[5] = codec;
    fz_put16(h + 6, ext_len);
    fz_put64(h + 8, stored);
    fz_put64(h + 16, raw);
    fz_put64(h + 24, XXH3_64bits(payload, stored));
    if (ext_len)
        memcpy(h + 40, ext, ext_len);
    fz_put32(h + 36, (uint32_t)XXH3_64bits(h, 40 + (size_t)ext_len));
    fz_bytes(o, payload, stored);
    if (o->oom || o->nchunks >= FZ_MAX_CHUNKS)
        return;
    fz_chunk *c = &o->chunks[o->nchunks++];
    memset(c, 0, sizeof *c);
    c->type = type;
    c->codec = codec;
    c->off = off;
    c->raw = raw;
    c->stored = stored;
    if (type == 2 && ext_len >= 32) {
        memcpy(c->hash, ext, 16);
        c->blob_size = fz_get64(ext + 16);
        c->piece_off = fz_get64(ext + 24);
    }
}

/* Appends a chunk whose payload is @p d (@p n bytes) compressed here as
 * one zstd frame, with codec @p codec (1, or 2 when d is already
 * shuffled). */
static void fz_zchunk(fz_out *o, uint8_t type, uint8_t codec, const uint8_t *ext, uint16_t ext_len,
                      const uint8_t *d, size_t n)
{
    size_t cap = ZSTD_compressBound(n);
    void *z = malloc(cap ? cap : 1);
    size_t k = z ? ZSTD_compress(z, cap, d, n, 1) : 0;

    if (!z || ZSTD_isError(k))
        o->oom = 1;
    else
        fz_chunk_put(o, type, codec, ext, ext_len, z, k, n);
    free(z);
}

static void fz_record(fz_out *o, const uint8_t *d, size_t n, int zstd)
{
    if (zstd)
        fz_zchunk(o, 1, 1, NULL, 0, d, n);
    else
        fz_chunk_put(o, 1, 0, NULL, 0, d, n, n);
}

/* A BLOB chunk; @p shuffled: stored byte-shuffled and compressed (codec
 * 2, FORMAT.md 3.2: byte k of 4-byte element e at k * (n / 4) + e, the
 * last n % 4 bytes in place), else as it is. */
static void fz_blob(fz_out *o, const uint8_t *d, size_t n, int shuffled)
{
    uint8_t ext[32] = { 0 };
    size_t e = n < 32 ? n : 32, raw = n - e, m = raw / 4;
    uint8_t *t;

    memcpy(ext, d, e);
    if (!shuffled) {
        fz_chunk_put(o, 2, 0, ext, 32, d + e, raw, raw);
        return;
    }
    if ((t = malloc(raw ? raw : 1)) == NULL) {
        o->oom = 1;
        return;
    }
    for (size_t i = 0; i < raw; i++)
        t[i < 4 * m ? (i % 4) * m + i / 4 : i] = d[e + i];
    fz_zchunk(o, 2, 2, ext, 32, t, raw);
    free(t);
}

/* The INDEX payload (FORMAT.md 6) of the chunks written so far. */
static void fz_index_of(fz_out *o, msgpack_sbuffer *sb)
{
    msgpack_packer pk;
    size_t nrec = 0, npiece = 0, i;

    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    for (i = 0; i < o->nchunks; i++) {
        nrec += o->chunks[i].type == 1;
        npiece += o->chunks[i].type == 2;
    }
    msgpack_pack_map(&pk, 2);
    msgpack_pack_str(&pk, 7);
    msgpack_pack_str_body(&pk, "records", 7);
    msgpack_pack_array(&pk, nrec);
    for (i = 0; i < o->nchunks; i++) {
        const fz_chunk *c = &o->chunks[i];
        if (c->type != 1)
            continue;
        msgpack_pack_array(&pk, 3);
        msgpack_pack_uint64(&pk, c->off);
        msgpack_pack_uint64(&pk, c->raw);
        msgpack_pack_uint64(&pk, c->stored);
    }
    msgpack_pack_str(&pk, 6);
    msgpack_pack_str_body(&pk, "pieces", 6);
    msgpack_pack_array(&pk, npiece);
    for (i = 0; i < o->nchunks; i++) {
        const fz_chunk *c = &o->chunks[i];
        if (c->type != 2)
            continue;
        msgpack_pack_array(&pk, 7);
        msgpack_pack_bin(&pk, 16);
        msgpack_pack_bin_body(&pk, c->hash, 16);
        msgpack_pack_uint64(&pk, c->blob_size);
        msgpack_pack_uint64(&pk, c->piece_off);
        msgpack_pack_uint64(&pk, c->off);
        msgpack_pack_uint64(&pk, c->raw);
        msgpack_pack_uint64(&pk, c->stored);
        msgpack_pack_uint64(&pk, c->codec);   /* since 2.0 */
    }
}

/* An INDEX chunk of @p n bytes at @p d (generated when n is 0), then the
 * trailer naming it. */
static void fz_index(fz_out *o, const uint8_t *d, size_t n)
{
    msgpack_sbuffer sb;
    uint64_t index_off = o->len;

    msgpack_sbuffer_init(&sb);
    if (n == 0) {
        fz_index_of(o, &sb);
        d = (const uint8_t *)sb.data;
        n = sb.size;
    }
    fz_chunk_put(o, 3, 0, NULL, 0, d, n, n);
    msgpack_sbuffer_destroy(&sb);
    uint64_t trailer_off = o->len;
    uint8_t *t = fz_room(o, 32);
    if (!t)
        return;
    memset(t, 0, 32);
    memcpy(t, "\x89" "CLRRIDX", 8);
    fz_put64(t + 8, index_off);
    fz_put64(t + 16, trailer_off);
    fz_put32(t + 28, (uint32_t)XXH3_64bits(t, 28));
}

static void fz_sections(fz_out *o, const uint8_t *d, size_t n)
{
    while (n >= FUZZ_SEC_HDR) {
        uint8_t tag = d[0];
        size_t len = fz_get32(d + 1);
        d += FUZZ_SEC_HDR;
        n -= FUZZ_SEC_HDR;
        if (len > n)
            len = n;
        switch (tag) {
        case 'R': fz_record(o, d, len, 0); break;
        case 'Z': fz_record(o, d, len, 1); break;
        case 'B': fz_blob(o, d, len, 0); break;
        case 'Y': fz_blob(o, d, len, 1); break;
        case 'I': fz_index(o, d, len); break;
        case 'X': fz_bytes(o, d, len); break;
        default: return;
        }
        d += len;
        n -= len;
    }
}

int fuzz_write_trace(int fd, const uint8_t *d, size_t n)
{
    static fz_chunk chunks[FZ_MAX_CHUNKS];
    fz_out o = { .chunks = chunks };
    const uint8_t *p = d;
    size_t len = n;
    int rc = 0;

    if (n > 0 && (d[0] == 'R' || d[0] == 'S')) {
        fz_file_header(&o);
        if (d[0] == 'R')
            fz_record(&o, d + 1, n - 1, 0);
        else
            fz_sections(&o, d + 1, n - 1);
        p = o.p;
        len = o.len;
        if (o.oom)
            rc = -1;
    }
    if (rc == 0 && ftruncate(fd, 0) != 0)
        rc = -1;
    for (size_t done = 0; rc == 0 && done < len;) {
        ssize_t k = pwrite(fd, p + done, len - done, (off_t)done);
        if (k <= 0)
            rc = -1;
        else
            done += (size_t)k;
    }
    free(o.p);
    return rc;
}

const char *fuzz_trace_path(int *fd)
{
    static char path[64];
    static int tfd = -1;

    if (tfd < 0) {
        tfd = memfd_create("clrr-fuzz.clrr", MFD_CLOEXEC);
        if (tfd >= 0) {
            snprintf(path, sizeof path, "/proc/self/fd/%d", tfd);
        } else {
            snprintf(path, sizeof path, "/tmp/clrr-fuzz.%d.clrr", (int)getpid());
            tfd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (tfd < 0) {
                perror(path);
                abort();
            }
            unlink(path);   /* nothing left behind; the name is free again */
            snprintf(path, sizeof path, "/proc/self/fd/%d", tfd);
        }
    }
    *fd = tfd;
    return path;
}
