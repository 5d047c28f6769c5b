/* test_tf_corrupt.c — trace-format: damaged and hostile traces. Every
 * truncation point, byte flips, hand-built chunks with hostile lengths
 * (built here from FORMAT.md alone, as a second writer would), malformed
 * records, version handling and reader limits: a clear TF_ERR_* or a clean
 * end, never a crash or a huge allocation (run it under ASan: make SAN=1). */
#include "test_tf_common.h"

#include <errno.h>
#include <xxhash.h>
#include <zstd.h>

/* ------------------------------------------- FORMAT.md, written by hand */

static void ct_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void ct_put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i); }
static void ct_put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i); }

/* File header: magic, 0x00, major, minor, header length, flags (required
 * features in the low 32 bits, optional in the high: FORMAT.md 2.1), check. */
static size_t ct_file_header_flags(uint8_t *out, uint16_t major, uint16_t minor, uint64_t flags)
{
    memset(out, 0, 32);
    memcpy(out, "\x89" "CLRR\r\n\x1a\n", 9);
    ct_put16(out + 10, major);
    ct_put16(out + 12, minor);
    ct_put16(out + 14, 32);
    ct_put64(out + 16, flags);
    ct_put32(out + 28, (uint32_t)XXH3_64bits(out, 28));
    return 32;
}

static size_t ct_file_header(uint8_t *out, uint16_t major, uint16_t minor)
{
    return ct_file_header_flags(out, major, minor, 0);
}

/* A chunk with no header extension; @p claim is the payload length the
 * header states, @p n the bytes actually appended. */
static size_t ct_chunk(uint8_t *out, uint8_t type, uint8_t codec, const void *payload, size_t n,
                       uint64_t claim, uint64_t raw, uint16_t ext_len)
{
    memset(out, 0, 40 + (size_t)ext_len);
    memcpy(out, "\x89" "CHK", 4);
    out[4] = type;
    out[5] = codec;
    ct_put16(out + 6, ext_len);
    ct_put64(out + 8, claim);
    ct_put64(out + 16, raw);
    ct_put64(out + 24, XXH3_64bits(payload, n));
    ct_put32(out + 36, (uint32_t)XXH3_64bits(out, 40 + (size_t)ext_len));
    memcpy(out + 40 + ext_len, payload, n);
    return 40 + ext_len + n;
}

static void ct_write(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");

    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT(fwrite(p, 1, n, f) == n);
    fclose(f);
}

/* A file of one RECORD chunk (codec none) holding @p rec; reads it. */
static tf_status ct_one_record(const void *rec, size_t n, char *msg, size_t msgcap)
{
    static uint8_t buf[1 << 16];
    char path[64];
    size_t len = ct_file_header(buf, 1, 0);
    tf_reader *r = NULL;
    tf_item it;
    tf_status s;

    len += ct_chunk(buf + len, 1, 0, rec, n, n, n, 0);
    tt_tmp(path);
    ct_write(path, buf, len);
    s = tf_reader_open(&r, path, NULL);
    if (s == TF_OK) {
        while ((s = tf_reader_next(r, &it)) == TF_OK)
            ;
        snprintf(msg, msgcap, "%s", tf_reader_error(r));
        tf_reader_close(r);
    }
    unlink(path);
    return s;
}

/* ----------------------------------------------------- a sample trace */

/* 300 calls and 30 blobs (with DATA records) in many small chunks. */
static void ct_sample(const char *path)
{
    tf_writer *w = NULL;
    tf_writer_opts o = { .chunk_size = 2048 };
    uint8_t data[2000];
    tf_blobref ref;

    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    for (uint64_t i = 1; i <= 300; i++) {
        if (i % 10 == 0) {
            tt_fill(data, sizeof(data), i, i % 20 == 0);
            tf_writer_blob(w, data, sizeof(data), &ref);
            tt_data_blob(w, i, &ref);
        }
        tt_begin(w, i, 1, 1, 2, i);
        tt_end(w, i, 2, 0);
    }
    CU_ASSERT(tf_writer_close(w) == TF_OK);
}

static uint8_t *ct_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p;

    CU_ASSERT_FATAL(f != NULL);
    *n = (size_t)tt_fsize(path);
    p = malloc(*n);
    CU_ASSERT(fread(p, 1, *n, f) == *n);
    fclose(f);
    return p;
}

/* Reads a possibly damaged trace to the end, including every blob that a
 * DATA record names. @return the final status; *calls the calls seen. */
static tf_status ct_read_everything(const char *path, tt_read *calls, tf_reader_info *info)
{
    tf_reader *r = NULL;
    tf_item it;
    tf_status s;
    uint8_t back[2000];

    tt_read_free(calls);                 /* calls is reused from call to call */
    memset(calls, 0, sizeof(*calls));
    s = tf_reader_open(&r, path, NULL);
    if (s != TF_OK)
        return s;
    calls->seqs = malloc(400 * sizeof(uint64_t));
    calls->complete = malloc(400 * sizeof(int));
    while ((s = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type == TF_ITEM_DATA && it.u.data.value.type == TF_BLOB &&
            it.u.data.value.v.blob.size <= sizeof(back)) {
            tf_status b = tf_reader_blob(r, &it.u.data.value.v.blob, 0, back, it.u.data.value.v.blob.size);
            CU_ASSERT(b == TF_OK || b == TF_ERR_NOT_FOUND || b == TF_ERR_CORRUPT || b == TF_ERR_LIMIT);
        }
        if (it.type == TF_ITEM_CALL && calls->ncalls < 400) {
            calls->seqs[calls->ncalls] = it.u.call.seq;
            calls->complete[calls->ncalls++] = it.u.call.complete;
            calls->ncomplete += it.u.call.complete != 0;
        }
    }
    if (info)
        *info = *tf_reader_get_info(r);
    tf_reader_close(r);
    return s;
}

/* ------------------------------------------------------------------ tests */

static void test_truncation(void)
{
    char full[64], cut[64];
    size_t n, bad = 0;
    uint8_t *bytes;
    tt_read rd = { 0 };
    tf_reader_info info;

    tt_tmp(full);
    tt_tmp(cut);
    ct_sample(full);
    bytes = ct_slurp(full, &n);
    for (size_t at = 0; at < n; at += at < 128 ? 1 : 11) {
        tf_status s;
        ct_write(cut, bytes, at);
        s = ct_read_everything(cut, &rd, &info);
        if (at < 32) {
            if (s != (at == 0 ? TF_ERR_NOT_TRACE : TF_ERR_CORRUPT))
                bad++;
            continue;
        }
        if (s != TF_END)
            bad++;
        if (!info.truncated && info.valid_bytes != at)
            bad++;
        if (info.truncated && info.valid_bytes >= at)
            bad++;
        /* complete calls form a prefix, in order; unfinished ones come last */
        for (size_t i = 0; i < rd.ncalls; i++) {
            if (i < rd.ncomplete ? (!rd.complete[i] || rd.seqs[i] != i + 1) : rd.complete[i])
                bad++;
        }
        tt_read_free(&rd);
    }
    CU_ASSERT(bad == 0);
    free(bytes);
    unlink(full);
    unlink(cut);
}

static void test_byte_flips(void)
{
    char full[64], dam[64], msg[512];
    size_t n, bad = 0;
    uint8_t *bytes;
    tt_read rd = { 0 };
    tf_reader *r = NULL;
    tf_item it;

    tt_tmp(full);
    tt_tmp(dam);
    ct_sample(full);
    bytes = ct_slurp(full, &n);
    for (size_t at = 0; at < n; at += at < 256 ? 1 : 29) {
        tf_status s;
        bytes[at] ^= 0x5a;
        ct_write(dam, bytes, n);
        bytes[at] ^= 0x5a;
        s = ct_read_everything(dam, &rd, NULL);
        if (s != TF_END && s != TF_ERR_CORRUPT && s != TF_ERR_LIMIT && s != TF_ERR_NOT_TRACE &&
            s != TF_ERR_VERSION)
            bad++;
        tt_read_free(&rd);
    }
    CU_ASSERT(bad == 0);

    /* A flip inside the first chunk's payload is a checksum error. */
    bytes[32 + 40 + 3] ^= 1;
    ct_write(dam, bytes, n);
    CU_ASSERT_FATAL(tf_reader_open(&r, dam, NULL) == TF_OK);
    CU_ASSERT(tf_reader_next(r, &it) == TF_ERR_CORRUPT);
    snprintf(msg, sizeof(msg), "%s", tf_reader_error(r));
    CU_ASSERT(strstr(msg, "chunk at offset 32") != NULL && strstr(msg, "checksum") != NULL);
    CU_ASSERT(tf_reader_next(r, &it) == TF_ERR_CORRUPT);   /* sticky until rewind */
    tf_reader_close(r);
    free(bytes);
    unlink(full);
    unlink(dam);
}

static void test_hostile_chunks(void)
{
    static uint8_t buf[1 << 16];
    uint8_t rec[64], z[256];
    char path[64], msg[512];
    size_t len, zn;
    tt_read rd = { 0 };
    tf_reader_info info;
    tf_reader *r = NULL;

    tt_tmp(path);
    /* A chunk claiming 2^40 payload bytes: the file just ends there. */
    len = ct_file_header(buf, 1, 0);
    len += ct_chunk(buf + len, 1, 0, "\x91\x07", 2, (uint64_t)1 << 40, (uint64_t)1 << 40, 0);
    ct_write(path, buf, len);
    CU_ASSERT(ct_read_everything(path, &rd, &info) == TF_END);
    CU_ASSERT(info.truncated == 1 && info.valid_bytes == 32 && rd.ncalls == 0);
    tt_read_free(&rd);

    /* zstd payload claiming 2^40 raw bytes: over the reader's limit. */
    zn = ZSTD_compress(z, sizeof(z), "\x91\x07", 2, 1);
    len = ct_file_header(buf, 1, 0);
    len += ct_chunk(buf + len, 1, 1, z, zn, zn, (uint64_t)1 << 40, 0);
    ct_write(path, buf, len);
    CU_ASSERT(ct_read_everything(path, &rd, NULL) == TF_ERR_LIMIT);

    /* zstd frame whose content size is not the stated raw length. */
    len = ct_file_header(buf, 1, 0);
    len += ct_chunk(buf + len, 1, 1, z, zn, zn, 3, 0);
    ct_write(path, buf, len);
    CU_ASSERT(ct_read_everything(path, &rd, NULL) == TF_ERR_CORRUPT);

    /* Codec 2 (zstd of the bytes shuffled by 4-byte elements): a RECORD
     * chunk of 33 records [9, nil] (a later minor's type, skipped), 99
     * bytes: 24 elements shuffled, the last 3 bytes in place. It reads in
     * a 2.x file; the shuffled bytes taken as they are do not (the test
     * would see a reader that skipped the unshuffle); the chunk is corrupt
     * in a 1.x file, and so is a frame of the wrong size or codec 3. */
    {
        uint8_t raw[99], shuf[99];
        for (size_t i = 0; i < sizeof(raw); i++)
            raw[i] = (uint8_t)"\x92\x09\xc0"[i % 3];
        for (size_t i = 0; i < sizeof(raw); i++)          /* byte k of element e goes to k * 24 + e */
            shuf[i < 96 ? (i % 4) * 24 + i / 4 : i] = raw[i];
        zn = ZSTD_compress(z, sizeof(z), shuf, sizeof(shuf), 1);
        CU_ASSERT_FATAL(!ZSTD_isError(zn) && zn < sizeof(shuf));
        len = ct_file_header(buf, 2, 0);
        len += ct_chunk(buf + len, 1, 2, z, zn, zn, sizeof(shuf), 0);
        ct_write(path, buf, len);
        CU_ASSERT(ct_read_everything(path, &rd, &info) == TF_END);
        CU_ASSERT(info.truncated == 0 && rd.ncalls == 0);
        tt_read_free(&rd);
        static const struct { uint16_t major; uint8_t codec; size_t extra; } bad[] = {
            { 2, 1, 0 },          /* the shuffled bytes taken as they are */
            { 1, 2, 0 },          /* codec 2 in a 1.x file */
            { 2, 2, 4 },          /* a frame of another size */
            { 2, 3, 0 },          /* codec 3 */
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            len = ct_file_header(buf, bad[i].major, 0);
            len += ct_chunk(buf + len, 1, bad[i].codec, z, zn, zn, sizeof(shuf) + bad[i].extra, 0);
            ct_write(path, buf, len);
            CU_ASSERT(ct_read_everything(path, &rd, NULL) == TF_ERR_CORRUPT);
        }
    }

    /* Unknown codec; oversized header extension. */
    len = ct_file_header(buf, 1, 0);
    len += ct_chunk(buf + len, 1, 9, "\x91\x07", 2, 2, 2, 0);
    ct_write(path, buf, len);
    CU_ASSERT(ct_read_everything(path, &rd, NULL) == TF_ERR_CORRUPT);
    len = ct_file_header(buf, 1, 0);
    len += ct_chunk(buf + len, 1, 0, "\x91\x07", 2, 2, 2, 2000);
    ct_write(path, buf, len);
    CU_ASSERT(ct_read_everything(path, &rd, NULL) == TF_ERR_LIMIT);

    /* An unknown chunk type between records is skipped; a record type
     * from the future too. */
    len = ct_file_header(buf, 1, 0);
    len += ct_chunk(buf + len, 77, 0, "whatever", 8, 8, 8, 16);
    len += ct_chunk(buf + len, 1, 0, "\x92\x09\xc0", 3, 3, 3, 0);
    ct_write(path, buf, len);
    CU_ASSERT(ct_read_everything(path, &rd, &info) == TF_END && info.truncated == 0);

    /* Hostile msgpack lengths inside a record chunk. */
    CU_ASSERT(ct_one_record("\xdd\xff\xff\xff\xff\x01", 6, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    CU_ASSERT(strstr(msg, "malformed msgpack") != NULL);
    CU_ASSERT(ct_one_record("\x92\x05\xdb\xff\xff\xff\xff", 7, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    CU_ASSERT(ct_one_record("\x92\x05\xdf\x7f\xff\xff\xff", 7, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    CU_ASSERT(ct_one_record("\x92\x05\xc6\xff\xff\xff\xf0", 7, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    CU_ASSERT(ct_one_record("\x92\x05\xc1", 3, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    memset(rec, 0x91, sizeof(rec));                          /* 63 nested arrays */
    rec[63] = 0x01;
    CU_ASSERT(ct_one_record(rec, sizeof(rec), msg, sizeof(msg)) == TF_ERR_CORRUPT);
    memset(rec, 0x91, 31);                                   /* 31 nested: fine */
    rec[0] = 0x92;
    rec[1] = 0x09;                                           /* [9, [[...]]] skipped */
    rec[31] = 0x01;
    CU_ASSERT(ct_one_record(rec, 32, msg, sizeof(msg)) == TF_END);
    /* ext type 5 is not defined */
    CU_ASSERT(ct_one_record("\x92\x00\xd4\x05\x00", 5, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    CU_ASSERT(strstr(msg, "ext type 5") != NULL);
    /* a blob ref of the wrong size */
    CU_ASSERT(ct_one_record("\x92\x09\xd5\x01\x00\x00", 6, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    /* records that are not arrays starting with a type */
    CU_ASSERT(ct_one_record("\x07", 1, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    CU_ASSERT(ct_one_record("\x90", 1, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    CU_ASSERT(ct_one_record("\x91\xa1x", 3, msg, sizeof(msg)) == TF_ERR_CORRUPT);
    /* a chunk ending inside a record */
    CU_ASSERT(ct_one_record("\x93\x05\x01", 3, msg, sizeof(msg)) == TF_ERR_CORRUPT);

    /* Bad chunk magic in the middle of the file. */
    len = ct_file_header(buf, 1, 0);
    len += ct_chunk(buf + len, 1, 0, "\x92\x09\xc0", 3, 3, 3, 0);
    memcpy(buf + len, "garbage that is not a chunk header at all, long enough", 54);
    ct_write(path, buf, len + 54);
    CU_ASSERT(ct_read_everything(path, &rd, NULL) == TF_ERR_CORRUPT);
    /* ... but a zero-filled tail (a crashed file system) ends the stream. */
    memset(buf + len, 0, 54);
    ct_write(path, buf, len + 54);
    CU_ASSERT(ct_read_everything(path, &rd, &info) == TF_END && info.truncated == 1);

    /* A blob chunk whose piece lies outside its blob (size 0, 3 bytes). */
    len = ct_file_header(buf, 1, 0);
    len += ct_chunk(buf + len, 2, 0, "abc", 3, 3, 3, 32);
    ct_write(path, buf, len);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(tf_reader_scan(r) == TF_ERR_CORRUPT);
    CU_ASSERT(strstr(tf_reader_error(r), "outside its blob") != NULL);
    tf_reader_close(r);
    tt_read_free(&rd);
    unlink(path);
}

/* Writes sig 1 ("clWork", 2 params) then calls @p bad; reads; checks the
 * status and that the message holds @p want. */
static void ct_shape(void (*bad)(tf_writer *), tf_status want_status, const char *want)
{
    char path[64], msg[512] = "";
    tf_writer *w = NULL;
    tf_writer_opts o = { .flush_ms = 100000 };   /* one chunk: record numbers are stable */
    tf_reader *r = NULL;
    tf_item it;
    tf_status s;

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, &o) == TF_OK);
    tt_sig(w, 1, "clWork", 2);
    tt_begin(w, 1, 1, 1, 2, 0);
    tt_end(w, 1, 2, 0);
    bad(w);
    CU_ASSERT(tf_writer_close(w) == TF_OK);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    while ((s = tf_reader_next(r, &it)) == TF_OK)
        ;
    snprintf(msg, sizeof(msg), "%s", tf_reader_error(r));
    CU_ASSERT(s == want_status);
    CU_ASSERT(strstr(msg, want) != NULL);
    if (s != want_status || !strstr(msg, want))
        fprintf(stderr, "\n  got %s: %s\n", tf_strerror(s), msg);
    tf_reader_close(r);
    unlink(path);
}

static void bad_short_begin(tf_writer *w)
{
    tf_enc *e = tf_writer_lock(w);
    tf_enc_array(e, 3);
    tf_enc_uint(e, 2);
    tf_enc_uint(e, 2);
    tf_enc_uint(e, 1);
    tf_writer_unlock(w);
}
static void bad_unknown_sig(tf_writer *w) { tt_begin(w, 2, 1, 99, 2, 0); }
static void bad_orphan_end(tf_writer *w) { tt_end(w, 77, 2, 0); }
static void bad_arg_count(tf_writer *w) { tt_begin(w, 2, 1, 1, 3, 0); }
static void bad_out_count(tf_writer *w) { tt_begin(w, 2, 1, 1, 2, 0); tt_end(w, 2, 1, 0); }
static void bad_dup_begin(tf_writer *w) { tt_begin(w, 2, 1, 1, 2, 0); tt_begin(w, 2, 1, 1, 2, 0); }
static void bad_sig_redefined(tf_writer *w) { tt_sig(w, 1, "clOther", 2); }
static void bad_pending(tf_writer *w)
{
    for (uint64_t i = 2; i < 6000; i++)
        tt_begin(w, i, 1, 1, 2, 0);
}
static void bad_sig_param(tf_writer *w)
{
    tf_enc *e = tf_writer_lock(w);
    tf_enc_array(e, 5);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, 5);
    tf_enc_cstr(e, "clX");
    tf_enc_cstr(e, "cl_int");
    tf_enc_array(e, 1);
    tf_enc_array(e, 2);
    tf_enc_cstr(e, "a");
    tf_enc_cstr(e, "b");
    tf_writer_unlock(w);
}
static void bad_env(tf_writer *w)
{
    tf_enc *e = tf_writer_lock(w);
    tf_enc_array(e, 2);
    tf_enc_uint(e, 0);
    tf_enc_uint(e, 0);
    tf_writer_unlock(w);
}
static void bad_devtime(tf_writer *w)
{
    tf_enc *e = tf_writer_lock(w);
    tf_enc_array(e, 6);
    tf_enc_uint(e, 4);
    tf_enc_uint(e, 1);
    tf_enc_int(e, -1);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, 1);
    tf_enc_uint(e, 1);
    tf_writer_unlock(w);
}

static void test_record_shapes(void)
{
    ct_shape(bad_short_begin, TF_ERR_CORRUPT, "record 3: BEGIN has 3 fields, expected 7");
    ct_shape(bad_unknown_sig, TF_ERR_CORRUPT, "unknown signature 99");
    ct_shape(bad_orphan_end, TF_ERR_CORRUPT, "END 77 without a pending BEGIN");
    ct_shape(bad_arg_count, TF_ERR_CORRUPT, "3 arguments, expected 2");
    ct_shape(bad_out_count, TF_ERR_CORRUPT, "1 outputs, expected 2");
    ct_shape(bad_dup_begin, TF_ERR_CORRUPT, "pending");
    ct_shape(bad_sig_redefined, TF_ERR_CORRUPT, "redefined");
    ct_shape(bad_pending, TF_ERR_LIMIT, "4096");
    ct_shape(bad_sig_param, TF_ERR_CORRUPT, "parameter 0");
    ct_shape(bad_env, TF_ERR_CORRUPT, "ENV");
    ct_shape(bad_devtime, TF_ERR_CORRUPT, "DEVTIME");
}

static void test_versions_and_files(void)
{
    char path[64];
    uint8_t buf[512];
    size_t len;
    tf_reader *r = NULL;

    tt_tmp(path);
    len = ct_file_header(buf, 1, 7);                  /* a later minor: readable */
    len += ct_chunk(buf + len, 1, 0, "\x92\x09\xc0", 3, 3, 3, 0);
    ct_write(path, buf, len);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(tf_reader_get_info(r)->minor == 7);
    tf_reader_close(r);

    ct_file_header(buf, 2, 0);                        /* 2.0: readable, as 1.x */
    ct_write(path, buf, len);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(tf_reader_get_info(r)->major == 2);
    tf_reader_close(r);

    ct_file_header(buf, 3, 0);                        /* a later major: refused */
    ct_write(path, buf, len);
    CU_ASSERT(tf_reader_open(&r, path, NULL) == TF_ERR_VERSION && r == NULL);
    CU_ASSERT(strstr(tf_reader_open_error(), "format version 3.0; this build reads 1.x to 2.x") != NULL);
    ct_file_header(buf, 0, 9);                        /* and an earlier one */
    ct_write(path, buf, len);
    CU_ASSERT(tf_reader_open(&r, path, NULL) == TF_ERR_VERSION && r == NULL);

    ct_file_header(buf, 1, 0);
    buf[20] ^= 1;                                     /* header check */
    ct_write(path, buf, len);
    CU_ASSERT(tf_reader_open(&r, path, NULL) == TF_ERR_CORRUPT);

    ct_write(path, "hello, world\n this is text and not a trace at all\n", 50);
    CU_ASSERT(tf_reader_open(&r, path, NULL) == TF_ERR_NOT_TRACE);
    ct_write(path, "", 0);
    CU_ASSERT(tf_reader_open(&r, path, NULL) == TF_ERR_NOT_TRACE);
    unlink(path);
    errno = 0;
    CU_ASSERT(tf_reader_open(&r, path, NULL) == TF_ERR_IO && errno == ENOENT);
    CU_ASSERT(strstr(tf_reader_open_error(), "No such file") != NULL);
    CU_ASSERT(tf_reader_open(&r, "/tmp", NULL) == TF_ERR_IO);
}

/* Feature bits (FORMAT.md 2.1): an unknown required one refuses the file
 * with one line naming it; an unknown optional one is ignored; in files
 * before 2.1 the flags were reserved and stay ignored. */
static void test_feature_bits(void)
{
    char path[64];
    uint8_t buf[512];
    size_t len, hdr;
    tf_reader *r = NULL;
    tf_item it;
    /* one record chunk holding a NOTE [6, 0, 0, "hi"] */
    static const uint8_t note[] = {0x94, 0x06, 0x00, 0x00, 0xa2, 'h', 'i'};

    tt_tmp(path);
    hdr = ct_file_header_flags(buf, 2, 1, 0);
    len = hdr + ct_chunk(buf + hdr, 1, 0, note, sizeof note, sizeof note, sizeof note, 0);

    /* 2.1, no bit: read; the writer's own files are 2.1 with no bit */
    ct_write(path, buf, len);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(tf_reader_get_info(r)->features_required == 0 && tf_reader_get_info(r)->features_optional == 0);
    tf_reader_close(r);

    /* an unknown required bit: refused, one line that names the bit */
    ct_file_header_flags(buf, 2, 1, (uint64_t)1 << 5);
    ct_write(path, buf, len);
    r = NULL;
    CU_ASSERT(tf_reader_open(&r, path, NULL) == TF_ERR_VERSION && r == NULL);
    CU_ASSERT(strstr(tf_reader_open_error(),
                     "format 2.1 requires features 0x00000020 that this build does not know") != NULL);
    CU_ASSERT(strchr(tf_reader_open_error(), '\n') == NULL);
    ct_file_header_flags(buf, 2, 9, (uint64_t)1 << 31);   /* any later minor, the top bit */
    ct_write(path, buf, len);
    CU_ASSERT(tf_reader_open(&r, path, NULL) == TF_ERR_VERSION && r == NULL);
    CU_ASSERT(strstr(tf_reader_open_error(), "requires features 0x80000000") != NULL);

    /* unknown optional bits (the high word): ignored, the records read */
    ct_file_header_flags(buf, 2, 1, (uint64_t)0xa5 << 32);
    ct_write(path, buf, len);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(tf_reader_get_info(r)->features_optional == 0xa5 && tf_reader_get_info(r)->features_required == 0);
    CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_NOTE && !strcmp(it.u.note.text, "hi"));
    CU_ASSERT(tf_reader_next(r, &it) == TF_END);
    tf_reader_close(r);

    /* 2.0 and 1.x: the flags were "reserved, ignored", and still are */
    for (int major = 1; major <= 2; major++) {
        ct_file_header_flags(buf, (uint16_t)major, 0, ~(uint64_t)0);
        ct_write(path, buf, len);
        r = NULL;
        CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
        CU_ASSERT(tf_reader_get_info(r)->features_required == 0 && tf_reader_get_info(r)->features_optional == 0);
        CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_NOTE);
        tf_reader_close(r);
    }

    /* a flag bit flipped after the check: corrupt, not an unknown feature */
    ct_file_header_flags(buf, 2, 1, 0);
    buf[16] ^= 1;
    ct_write(path, buf, len);
    CU_ASSERT(tf_reader_open(&r, path, NULL) == TF_ERR_CORRUPT);
    unlink(path);
}

static void test_reader_limits(void)
{
    char path[64], msg[512];
    tf_writer *w = NULL;
    tf_reader *r = NULL;
    tf_reader_opts small = { .max_memory = 512 << 10 }, tiny_chunk = { .max_chunk = 4096 };
    static uint8_t big[600 << 10];
    tf_item it;
    tf_enc *e;

    tt_tmp(path);
    CU_ASSERT_FATAL(tf_writer_open(&w, path, NULL) == TF_OK);
    e = tf_writer_lock(w);                            /* DATA with 600 KiB inline */
    tf_enc_array(e, 4);
    tf_enc_uint(e, 5);
    tf_enc_uint(e, 1);
    tf_enc_cstr(e, "big");
    tf_enc_bin(e, big, sizeof(big));
    tf_writer_unlock(w);
    CU_ASSERT(tf_writer_close(w) == TF_OK);

    CU_ASSERT_FATAL(tf_reader_open(&r, path, &small) == TF_OK);
    CU_ASSERT(tf_reader_next(r, &it) == TF_ERR_LIMIT);
    snprintf(msg, sizeof(msg), "%s", tf_reader_error(r));
    CU_ASSERT(strstr(msg, "memory") != NULL);
    tf_reader_close(r);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, &tiny_chunk) == TF_OK);
    CU_ASSERT(tf_reader_next(r, &it) == TF_ERR_LIMIT);
    CU_ASSERT(tf_reader_get_info(r)->has_index == 1);
    tf_reader_close(r);
    CU_ASSERT_FATAL(tf_reader_open(&r, path, NULL) == TF_OK);
    CU_ASSERT(tf_reader_next(r, &it) == TF_OK && it.type == TF_ITEM_DATA && it.u.data.value.v.str.len == sizeof(big));
    tf_reader_close(r);
    unlink(path);
}

int main(void)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("trace-format: damaged and hostile traces", NULL, NULL);
    CU_add_test(s, "truncated at every offset: a prefix, no crash", test_truncation);
    CU_add_test(s, "byte flips: a clear error, no crash", test_byte_flips);
    CU_add_test(s, "hostile chunk and msgpack lengths", test_hostile_chunks);
    CU_add_test(s, "malformed records: messages with offsets", test_record_shapes);
    CU_add_test(s, "versions, magic and files", test_versions_and_files);
    CU_add_test(s, "header feature bits: unknown required refused, optional ignored", test_feature_bits);
    CU_add_test(s, "reader memory and chunk limits", test_reader_limits);
    return tt_run();
}
