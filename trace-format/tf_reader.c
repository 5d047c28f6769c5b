/* tf_reader.c — the reader's life cycle and accessors: open (file header,
 * index, ENV), close, next, rewind, info, errors. Records are decoded in
 * tf_records.c, blobs served by tf_rblob.c. */
#include "trace-format/tf_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define TF_DEF_MAX_CHUNK  ((size_t)64 << 20)
#define TF_DEF_MAX_MEMORY ((size_t)1 << 30)
#define TF_ZONE_CHUNK     ((size_t)64 << 10)

static _Thread_local char tf_open_err[512];

const char *tf_reader_open_error(void)
{
    return tf_open_err;
}

/* Reads and checks the file header (FORMAT.md, "File header"). */
static tf_status tf_reader_header(tf_reader *r)
{
    tf_status status = TF_OK;
    uint8_t h[TF_FILE_HDR_SIZE];
    size_t n = r->fsize < sizeof(h) ? (size_t)r->fsize : sizeof(h);
    ssize_t k;

    if (n == 0)
        TF_FAIL(&r->err, TF_ERR_NOT_TRACE, "empty file: not a clrr trace");
    do
        k = pread(r->fd, h, n, 0);
    while (k < 0 && errno == EINTR);
    if (k != (ssize_t)n)
        TF_FAIL(&r->err, TF_ERR_IO, "reading the file header: %s", k < 0 ? strerror(errno) : "short read");
    if (memcmp(h, TF_FILE_MAGIC, n < TF_FILE_MAGIC_LEN ? n : TF_FILE_MAGIC_LEN) != 0)
        TF_FAIL(&r->err, TF_ERR_NOT_TRACE, "bad magic: not a clrr trace");
    if (n < TF_FILE_HDR_SIZE)
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "file header truncated (%zu of %d bytes)", n, TF_FILE_HDR_SIZE);
    r->info.major = tf_get16(h + 10);
    r->info.minor = tf_get16(h + 12);
    if (r->info.major < TF_FORMAT_MAJOR_OLDEST || r->info.major > TF_FORMAT_MAJOR)
        TF_FAIL(&r->err, TF_ERR_VERSION, "format version %u.%u; this build reads %d.x to %d.x",
                r->info.major, r->info.minor, TF_FORMAT_MAJOR_OLDEST, TF_FORMAT_MAJOR);
    if (tf_file_hdr_check(h) != 0)
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "file header checksum mismatch");
    /* feature bits (FORMAT.md 2.1): checked once the check says they are
     * the writer's; before 2.1 the flags were reserved and are ignored */
    if (r->info.major > 2 || (r->info.major == 2 && r->info.minor >= TF_FEATURES_SINCE_MINOR)) {
        r->info.features_required = tf_get32(h + 16);
        r->info.features_optional = tf_get32(h + 20);
        uint32_t unknown = r->info.features_required & ~TF_FEATURES_REQUIRED_KNOWN;
        if (unknown)
            TF_FAIL(&r->err, TF_ERR_VERSION,
                    "format %u.%u requires features 0x%08x that this build does not know (it knows 0x%08x)",
                    r->info.major, r->info.minor, unknown, TF_FEATURES_REQUIRED_KNOWN);
    }
    r->hdr_len = tf_get16(h + 14);
    if (r->hdr_len < TF_FILE_HDR_SIZE || r->hdr_len > r->fsize)
        TF_FAIL(&r->err, TF_ERR_CORRUPT, "file header length %u", r->hdr_len);
out:
    return status;
}

/* Limits, caches, arena and msgpack zone of a new reader. @return the zone's
 * success (0: out of memory). */
static int tf_reader_init(tf_reader *r, const tf_reader_opts *opts)
{
    r->fd = -1;
    r->opts.max_chunk = opts && opts->max_chunk ? opts->max_chunk : TF_DEF_MAX_CHUNK;
    r->opts.max_memory = opts && opts->max_memory ? opts->max_memory : TF_DEF_MAX_MEMORY;
    r->mem.limit = r->opts.max_memory;
    r->cache[0].off = r->cache[1].off = UINT64_MAX;
    tf_arena_init(&r->arena, &r->mem);
    r->zone_ok = msgpack_zone_init(&r->zone, TF_ZONE_CHUNK);
    return r->zone_ok;
}

tf_status tf_reader_open(tf_reader **out, const char *path, const tf_reader_opts *opts)
{
    tf_status status = TF_OK;
    tf_reader *r = NULL;
    struct stat st;

    tf_open_err[0] = '\0';
    if (out == NULL || path == NULL) {
        snprintf(tf_open_err, sizeof(tf_open_err), "tf_reader_open: NULL argument");
        return TF_ERR_ARG;
    }
    *out = NULL;
    if ((r = calloc(1, sizeof(*r))) == NULL) {
        snprintf(tf_open_err, sizeof(tf_open_err), "%s: out of memory", path);
        return TF_ERR_NOMEM;
    }
    if (!tf_reader_init(r, opts) || (r->dctx = ZSTD_createDCtx()) == NULL)
        TF_FAIL(&r->err, TF_ERR_NOMEM, "out of memory");
    if ((r->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(r->fd, &st) != 0)
        TF_FAIL(&r->err, TF_ERR_IO, "%s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        TF_FAIL(&r->err, TF_ERR_IO, "not a regular file");
    r->fsize = (uint64_t)st.st_size;
    r->info.file_bytes = r->fsize;
    TF_FORWARD(&r->err, tf_reader_header(r));
    r->pos = r->hdr_len;
    TF_FORWARD(&r->err, tf_rblob_load_index(r));
    TF_FORWARD(&r->err, tf_rec_read_env(r));
    *out = r;
out:
    if (status != TF_OK) {
        int e = errno;   /* callers may name errno for TF_ERR_IO */
        snprintf(tf_open_err, sizeof(tf_open_err), "%s: %s", path, r->err.msg);
        tf_reader_close(r);
        errno = e;
    }
    return status;
}

tf_status tf_reader_open_feed(tf_reader **out, const tf_reader_opts *opts)
{
    tf_reader *r;

    if (out == NULL)
        return TF_ERR_ARG;
    *out = NULL;
    if ((r = calloc(1, sizeof(*r))) == NULL)
        return TF_ERR_NOMEM;
    r->feed = 1;
    r->trusted = opts && opts->trusted_feed;
    if (!tf_reader_init(r, opts)) {
        tf_reader_close(r);
        return TF_ERR_NOMEM;
    }
    r->stream_end = 1;   /* no chunks: a record is decoded only when fed */
    *out = r;
    return TF_OK;
}

tf_status tf_reader_feed(tf_reader *r, const void *rec, size_t len, size_t *used, tf_item *item)
{
    if (r == NULL || item == NULL || used == NULL || !r->feed || (rec == NULL && len))
        return TF_ERR_ARG;
    return tf_rec_feed(r, rec, len, used, item);
}

void tf_reader_close(tf_reader *r)
{
    if (r == NULL)
        return;
    tf_rec_free(r);
    tf_rblob_free(r);
    tf_arena_free(&r->arena);
    if (r->zone_ok)
        msgpack_zone_destroy(&r->zone);
    ZSTD_freeDCtx(r->dctx);
    free(r->raw);
    free(r->zbuf);
    free(r->ubuf);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

const char *tf_reader_error(const tf_reader *r)
{
    return r ? r->err.msg : "";
}

const tf_value *tf_reader_env(tf_reader *r)
{
    return r ? r->env : NULL;
}

tf_status tf_reader_next(tf_reader *r, tf_item *item)
{
    if (r == NULL || item == NULL)
        return TF_ERR_ARG;
    return tf_rec_next(r, item);
}

tf_status tf_reader_rewind(tf_reader *r)
{
    if (r == NULL)
        return TF_ERR_ARG;
    tf_err_clear(&r->err);
    tf_rec_reset(r);
    return TF_OK;
}

const tf_reader_info *tf_reader_get_info(tf_reader *r)
{
    return r ? &r->info : NULL;
}
