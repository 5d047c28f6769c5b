/* tf_int.h — internals of the trace container library (trace-format/).
 *
 * Not a public header: only the .c files of trace-format/ include it. FORMAT.md is the
 * byte-level specification; the constants below are its numbers.
 *
 * Error convention inside the library: a function that can fail declares
 * `tf_status status = TF_OK;`, ends with one `out:` label that cleans up,
 * and uses TF_FAIL (raise, with a message) and TF_FORWARD (propagate, noting
 * file, line and expression once) to get there.
 */
#ifndef CLRR_TF_INT_H
#define CLRR_TF_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <msgpack.h>
#include <zstd.h>

#include "trace-format/tf.h"
#include "trace-format/tf_hot.h"

/* ------------------------------------------------------------ the format */

#define TF_FILE_MAGIC      "\x89" "CLRR\r\n\x1a\n"   /* 9 bytes, then NUL */
#define TF_FILE_MAGIC_LEN  9
#define TF_FILE_HDR_SIZE   32

#define TF_CHUNK_MAGIC     "\x89" "CHK"
#define TF_CHUNK_HDR_SIZE  40              /* fixed part; extension follows */
#define TF_BLOB_EXT_SIZE   32              /* hash[16], blob size, piece offset */
#define TF_HDR_ROOM        (TF_CHUNK_HDR_SIZE + TF_BLOB_EXT_SIZE)
#define TF_MAX_EXT         1024            /* reader limit on ext_len */

#define TF_TRAILER_MAGIC   "\x89" "CLRRIDX"
#define TF_TRAILER_SIZE    32

enum { TF_CHUNK_RECORD = 1, TF_CHUNK_BLOB = 2, TF_CHUNK_INDEX = 3 };
enum { TF_CODEC_NONE = 0, TF_CODEC_ZSTD = 1, TF_CODEC_ZSTD_SHUF4 = 2 };

/* tf_util.c: the byte shuffle of codec 2 (FORMAT.md 3.2) and its inverse.
 * With m = n / 4, byte k of element i goes to k * m + i; the last n % 4
 * bytes stay where they are. @p dst and @p src do not overlap. */
void tf_shuffle4(uint8_t *restrict dst, const uint8_t *restrict src, size_t n);
void tf_unshuffle4(uint8_t *restrict dst, const uint8_t *restrict src, size_t n);

#define TF_EXT_BLOBREF     1               /* msgpack ext type of a blob ref */
#define TF_BLOBREF_SIZE    24

/* Reader limits (FORMAT.md, "Limits"). */
#define TF_MAX_DEPTH       32              /* nested containers per record */
#define TF_MAX_PENDING     4096            /* BEGINs waiting for their END */
#define TF_MAX_SIGS        65536
#define TF_MAX_PARAMS      255

/* Little-endian stores and loads. */
static inline void tf_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void tf_put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void tf_put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline uint16_t tf_get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t tf_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tf_get64(const uint8_t *p) { return tf_get32(p) | (uint64_t)tf_get32(p + 4) << 32; }

/* A chunk header, decoded. hdr_len = TF_CHUNK_HDR_SIZE + ext_len. */
typedef struct tf_chunk_hdr {
    uint8_t type, codec;
    uint16_t ext_len;
    uint32_t hdr_len;
    uint64_t payload_len, raw_len, check;
    uint8_t hash[16];                      /* BLOB only */
    uint64_t blob_size, piece_off;         /* BLOB only */
} tf_chunk_hdr;

/* tf_chunk.c: pure encoders/decoders of the fixed structures. */
void tf_file_hdr_put(uint8_t out[TF_FILE_HDR_SIZE], uint32_t optional);
int tf_file_hdr_check(const uint8_t h[TF_FILE_HDR_SIZE]);   /* 0 when the check matches */
size_t tf_chunk_hdr_put(uint8_t *out, const tf_chunk_hdr *h);   /* returns h->hdr_len */
/* Decodes the fixed part of a header from @p n >= TF_CHUNK_HDR_SIZE bytes;
 * checks the magic. @return 0, or -1 (bad magic). */
int tf_chunk_hdr_fixed(const uint8_t *p, tf_chunk_hdr *h);
/* Checks the header checksum and decodes the extension; @p p holds
 * h->hdr_len bytes. @return 0, or -1 (bad header checksum). */
int tf_chunk_hdr_rest(const uint8_t *p, tf_chunk_hdr *h);
void tf_trailer_put(uint8_t out[TF_TRAILER_SIZE], uint64_t index_off, uint64_t trailer_off);
/* @return 0 and *index_off when @p p is a valid trailer located at
 * @p trailer_off, else -1. */
int tf_trailer_get(const uint8_t p[TF_TRAILER_SIZE], uint64_t trailer_off, uint64_t *index_off);
uint64_t tf_checksum(const void *p, size_t n);   /* payload checksum (XXH3-64) */

/* ------------------------------------------------------- errors (tf_util.c) */

typedef struct tf_err {
    char msg[512];
    int where_noted;                       /* a TF_FORWARD location is in msg */
} tf_err;

void tf_err_clear(tf_err *e);
/* Sets the message (printf-style), replacing any earlier one. */
void tf_err_set(tf_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Notes where a status was propagated: appends " [file:line: expr]" the
 * first time (so the innermost site is kept) when CLRR_DEBUG is set in the
 * environment; supplies a message naming the status when none was set. */
void tf_err_where(tf_err *e, tf_status st, const char *file, int line, const char *expr);

#define TF_FAIL(err, st, ...) \
    do { tf_err_set((err), __VA_ARGS__); status = (st); goto out; } while (0)
#define TF_FORWARD(err, expr) \
    do { \
        tf_status tf_st_ = (expr); \
        if (tf_st_ < 0) { \
            tf_err_where((err), tf_st_, __FILE__, __LINE__, #expr); \
            status = tf_st_; \
            goto out; \
        } \
    } while (0)

/* -------------------------------------------------------------- writer */

/* One unit of work for the worker pool: a sealed record chunk or a blob
 * piece. Allocated as one block: the struct, TF_HDR_ROOM bytes where the
 * chunk header is built, then the payload (so header + payload go out in
 * one write(2) when it is stored uncompressed). */
typedef struct tf_job tf_job;
struct tf_job {
    tf_job *next;
    uint64_t id;                 /* submission number, from 1 (under qmu) */
    size_t cap, len;             /* payload capacity and bytes used */
    size_t cost;                 /* bytes counted against the budget */
    uint8_t type;                /* TF_CHUNK_RECORD or TF_CHUNK_BLOB */
    uint8_t raw;                 /* 1: write uncompressed (crash flush) */
    uint8_t hash[16];            /* BLOB: blob hash, size, piece offset */
    uint64_t blob_size, piece_off;
};
#define TF_JOB_PAYLOAD(j) ((uint8_t *)((j) + 1) + TF_HDR_ROOM)

tf_job *tf_job_new(size_t cap);            /* malloc; NULL on failure */
/* A job of at least @p cap payload bytes: a recycled one from the pool
 * when cap is close to big_cap, else a new one. Takes qmu briefly. */
tf_job *tf_job_get(tf_writer *w, size_t cap);
/* Returns a job no longer needed to the pool, or frees it (qmu held). */
void tf_job_put_locked(tf_writer *w, tf_job *j);

/* The record encoder (w->f.enc): a cursor into the open record chunk,
 * moved by tf_wopen_set() and the encoders, used under f.rmu. */
extern uint8_t tf_enc_none[1];             /* p == end: no buffer (tf_enc.c) */

typedef struct tf_idx_rec { uint64_t off, raw, stored; } tf_idx_rec;
typedef struct tf_idx_piece {
    uint8_t hash[16];
    uint64_t blob_size, piece_off, off, raw, stored;
    uint8_t codec;
} tf_idx_piece;

/* A dedup-set entry: size1 = blob size + 1; 0 marks an empty slot. */
typedef struct tf_bent { uint8_t hash[16]; uint64_t size1; } tf_bent;

/* A blob piece to copy into its job, posted by tf_writer_blob() so that idle
 * workers copy while the caller hashes (tf_wblob.c). The task lives in the
 * caller's frame; the caller waits until *pending (under qmu) is 0. */
typedef struct tf_wcopy tf_wcopy;
struct tf_wcopy {                /* a task: copy a piece, hash a leaf, or both */
    tf_wcopy *next;
    unsigned *pending;           /* the poster's count of tasks not done */
    const uint8_t *src;
    tf_job *j;                   /* copy: destination, j->len bytes of payload; NULL: no copy */
    size_t len;                  /* bytes at src when j is NULL */
    uint8_t *digest;             /* hash: the leaf's 16 bytes go here (tf_hash_leaf); NULL: no hash */
};

/* A compression worker (tf_wthread.c). Worker 0, the lead, also runs the
 * periodic flush and, at close, writes the last records, index and trailer. */
typedef struct tf_wworker {
    tf_writer *w;
    pthread_t thread;
    ZSTD_CCtx *cctx;             /* reused for every job of this worker */
    uint8_t *zbuf;               /* TF_HDR_ROOM + compressed payload */
    size_t zcap;
    uint8_t *sbuf;               /* a blob piece, byte-shuffled (codec 2) */
    size_t scap;
    /* Under qmu: the chunk this worker has ready (compressed, header and
     * checksum in place) while it waits for its turn, so that the worker
     * in turn can write it with its own (tf_wjob_run). */
    tf_job *rj;                  /* NULL: none */
    tf_chunk_hdr rh;
    uint8_t *rstart;             /* the chunk's first byte (header) */
    int rdone;                   /* written by the worker in turn */
} tf_wworker;

#define TF_MAX_WORKERS 64        /* cap on an explicit opts->threads */
#define TF_WIN_PIECES  32        /* most pieces of a blob captured at once */

struct tf_writer {
    /* Record path, under f.rmu. Lock order: rmu, then qmu; bmu alone.
     * f is first: tf_hot.h's inline lock and unlock read it through the
     * writer's pointer. f.base, f.open_len and f.enc follow open
     * (tf_wopen_set). */
    tf_wfast_ f;
    tf_job *open;                /* open record chunk, NULL until first byte */
    size_t open_cap;

    /* Queue, under qmu. Jobs are taken from head in id order by the
     * workers, compressed concurrently and written in id order: the worker
     * whose job has id wr_next writes it (turn_cv wakes the others). */
    pthread_mutex_t qmu;
    pthread_cond_t qcv;          /* work for the workers */
    pthread_cond_t space_cv;     /* budget freed */
    pthread_cond_t done_cv;      /* a job was written (or dropped) */
    pthread_cond_t turn_cv;      /* wr_next moved on */
    pthread_cond_t copy_cv;      /* a poster's copies are all done */
    tf_job *head, *tail;
    _Atomic uint64_t last_id;    /* id of the last job submitted (set under qmu) */
    _Atomic uint64_t done_id;    /* id of the last job written or dropped */
    uint64_t wr_next;            /* id of the job to write next */
    unsigned inflight;           /* jobs taken by workers, not yet done */
    tf_wcopy *copies, *copies_tail;   /* copy tasks, served before jobs */
    _Atomic unsigned ncopies;    /* tasks in copies (set under qmu) */
    int stop;
    uint64_t st_waits, st_file_bytes;
    tf_job *pool;                /* written jobs of big_cap bytes, for reuse: */
    size_t npool, pool_min, big_cap;   /* pool_min, or as many as fit the budget */

    /* Dedup set, under bmu. */
    pthread_mutex_t bmu;
    tf_bent *set;
    size_t set_cap, set_n;
    uint64_t st_blob_calls, st_blob_in, st_blobs, st_blob_stored;
    _Atomic int blob_spec;       /* the last multi-piece blob was new: copy while hashing */
    _Atomic size_t blob_unsealed;   /* blob bytes stored since the record chunk was last
                                       sealed (tf_wseal_before, tf_wblob.c) */
    unsigned win_pieces;         /* pieces captured at once (budget / 4) */
    _Atomic size_t held;         /* budget of the windows of pending tickets
                                    (tf_writer_blob_begin), in f.queued too; no one
                                    waits for it: it is freed only when the
                                    ticket's thread is back from the driver */

    /* Workers: fixed after open. */
    tf_wworker *workers;
    unsigned nworkers;           /* allocated (with a ZSTD_CCtx each) */
    unsigned nstarted;           /* threads running; close() joins them */
    int level;
    int adaptive;                /* level <= default: blob pieces go fast under backlog */
    unsigned flush_ms;

    /* Owned by the worker whose turn it is to write (by the lead at close,
     * once the others are idle; by close() once all are joined). */
    int fd;
    char *path;
    uint64_t off;                /* file offset of the next chunk */
    tf_idx_rec *irec;
    size_t nirec, cirec;
    tf_idx_piece *ipiece;
    size_t nipiece, cipiece;
    int index_lost;              /* an index entry could not be kept */

    /* Failure: errmsg is written once, before f.failed is set (release). */
    char errmsg[512];

    /* Sink mode (tf_writer_opts.sink): records go to sink, not to a file. */
    void (*sink)(void *sink_ctx, const void *rec, size_t len);
    void *sink_ctx;
};

/* Makes @p j (NULL: none) the open record chunk, with the inline record
 * path's view of it: its payload, its length's address, and the cursor at
 * its end (f.rmu held, or the writer not yet shared). */
static inline void tf_wopen_set(tf_writer *w, tf_job *j)
{
    w->open = j;
    if (j) {
        w->f.base = TF_JOB_PAYLOAD(j);
        w->f.open_len = &j->len;
        w->f.enc.p = w->f.base + j->len;
        w->f.enc.end = w->f.base + j->cap;
    } else {
        w->f.base = NULL;
        w->f.open_len = NULL;
        w->f.enc.p = w->f.enc.end = tf_enc_none;
    }
}

/* tf_wthread.c */
void *tf_wworker_main(void *arg);         /* arg: a tf_wworker */
/* Number of workers for opts->threads = @p threads (0: three quarters of
 * the online CPUs, between 1 and 16; else at most TF_MAX_WORKERS). */
unsigned tf_wworkers_default(unsigned threads);
/* Appends @p j to the queue (qmu held by the caller); wakes a worker.
 * The caller has already added j->cost to w->queued. */
void tf_wq_push_locked(tf_writer *w, tf_job *j);
/* Seals the open record chunk if it holds records (rmu held). */
void tf_wseal_locked(tf_writer *w);
/* Waits (qmu held) until @p cost more bytes fit the budget or the writer
 * failed; counts the wait. */
void tf_wwait_space_locked(tf_writer *w, size_t cost);
/* Enters the failed state (first call wins) with a message naming errno. */
void tf_wfail(tf_writer *w, int errnum, const char *what);
/* tf_wzstd.c: builds @p h for @p j and compresses j into wk->zbuf when
 * that makes it smaller. @return the payload to write, with h->hdr_len
 * bytes of room before it for the header. */
uint8_t *tf_wcompress(tf_wworker *wk, tf_job *j, tf_chunk_hdr *h);
/* Writes @p j as one chunk (header + payload in one write(2)), compressed
 * with @p wk's context unless j->raw; adds it to the index. On error
 * enters the failed state. Only by the lead once every other worker is
 * idle (close). @return 0 or errno. */
int tf_wjob_write(tf_wworker *wk, tf_job *j);
/* write(2) all of it, retrying on EINTR and short writes. @return 0 or errno. */
int tf_write_all(int fd, const void *p, size_t n);

/* tf_windex.c */
void tf_widx_add(tf_writer *w, const tf_chunk_hdr *h, uint64_t off);
/* Writes the INDEX chunk and trailer (the lead, at close, every other
 * worker idle). @return 0 or errno. */
int tf_widx_write(tf_wworker *wk);

/* tf_wblob.c */
void tf_wset_free(tf_writer *w);
/* tf_hash_avx2.c (x86-64 only): XXH3-128, canonical bytes, built for AVX2;
 * only on a CPU that has it. */
void tf_hash_avx2(const void *data, size_t len, uint8_t out[16]);
/* tf_wblob.c: the hash of one leaf (at most TF_HASH_LEAF bytes) of a blob,
 * canonical bytes; the hash of a blob of at most TF_HASH_LEAF bytes. */
void tf_hash_leaf(const void *data, size_t len, uint8_t out[16]);
/* A worker's share of blob captures: takes the first posted copy task
 * (qmu held, w->copies not NULL), copies it with qmu released, counts it
 * done. Returns with qmu held. */
void tf_wcopy_run_locked(tf_writer *w);
/* Runs every posted copy task (qmu not held): a worker between two slices
 * of a compression. */
void tf_wcopy_serve(tf_writer *w);

/* ------------------------------------------------------------ msgpack walk */

/* A bounds-checked cursor over untrusted msgpack bytes. */
typedef struct tf_mpc { const uint8_t *p, *end; } tf_mpc;

/* Validates one value at c->p and moves past it: every length must fit in
 * the bytes left, nesting at most TF_MAX_DEPTH containers, no 0xc1.
 * *nobj counts the values (for an allocation estimate). @return 0 or -1. */
int tf_mp_skip(tf_mpc *c, uint64_t *nobj);
/* Typed reads; each returns 0 on success, -1 (cursor unspecified) if the
 * next value is not of that type or does not fit. */
int tf_mp_array(tf_mpc *c, uint32_t *n);
int tf_mp_map(tf_mpc *c, uint32_t *n);
int tf_mp_uint(tf_mpc *c, uint64_t *v);
int tf_mp_str(tf_mpc *c, const uint8_t **p, uint32_t *n);
int tf_mp_bin(tf_mpc *c, const uint8_t **p, uint32_t *n);

/* ----------------------------------------------------- reader memory */

/* Every byte the reader holds is counted against opts.max_memory. */
typedef struct tf_mem { size_t used, limit; } tf_mem;
void *tf_mem_alloc(tf_mem *m, size_t n);
void *tf_mem_realloc(tf_mem *m, void *p, size_t old_n, size_t n);
void tf_mem_free(tf_mem *m, void *p, size_t n);
/* Status for a failed tf_mem_alloc of @p n bytes: LIMIT or NOMEM. */
tf_status tf_mem_status(const tf_mem *m, size_t n);

/* Bump allocator for decoded values; reset per record. */
#define TF_ARENA_BLK ((size_t)64 << 10)   /* an arena's block, unless a value needs more */
typedef struct tf_arena_blk tf_arena_blk;
typedef struct tf_arena {
    tf_mem *mem;
    tf_arena_blk *blk;           /* current block; older ones chained */
    uint8_t *p;
    size_t left;
} tf_arena;
void tf_arena_init(tf_arena *a, tf_mem *mem);
void *tf_arena_alloc(tf_arena *a, size_t n);      /* 8-aligned; NULL on failure */
void tf_arena_reset(tf_arena *a);                 /* keeps the first block */
void tf_arena_free(tf_arena *a);

/* tf_mp.c: decodes the value at c->p into *v and moves past it; arrays and
 * maps are allocated in @p a, strings and bins point into the bytes. Every
 * length is checked against the bytes left, nesting is at most
 * TF_MAX_DEPTH, and values are typed as tf_value_from_obj() types
 * msgpack-c's objects. @return 0, -1 (malformed: cursor unspecified) or
 * -2 (the arena is out of memory). */
int tf_mp_value(tf_mpc *c, tf_arena *a, tf_value *v);

/* tf_value.c: msgpack-c objects to tf_value; deep copies. */
tf_status tf_value_from_obj(tf_arena *a, const msgpack_object *o, tf_value *v, tf_err *e);
size_t tf_value_deep_size(const tf_value *v);
/* Copies @p v into *dst; nodes and bytes come from *bump, which must hold
 * tf_value_deep_size(v) bytes (8-aligned). Strings gain a NUL. */
void tf_value_deep_copy(const tf_value *v, tf_value *dst, uint8_t **bump);

/* -------------------------------------------------------------- reader */

typedef struct tf_pending {
    uint64_t seq, tid;
    const tf_sig *sig;
    int64_t t_begin;
    tf_value *args;              /* sig->nparams values, in block */
    tf_value *pre;               /* in block, or NULL */
    void *block;
    size_t block_len;
} tf_pending;

typedef struct tf_piece {
    uint8_t hash[16];
    uint64_t blob_size, piece_off, off, raw, stored;
} tf_piece;

typedef struct tf_pcache {
    uint64_t off;                /* chunk offset; UINT64_MAX when empty */
    uint8_t *buf;
    size_t len, cap;
    uint64_t used;               /* LRU clock */
} tf_pcache;

struct tf_reader {
    int fd;
    uint64_t fsize;
    uint32_t hdr_len;            /* file header length */
    tf_reader_opts opts;
    tf_reader_info info;
    tf_err err;
    tf_mem mem;
    ZSTD_DCtx *dctx;

    /* Streaming. */
    uint64_t pos;                /* offset of the next chunk header */
    uint64_t chunk_off;          /* offset of the current record chunk */
    uint8_t *raw;                /* current record chunk, decompressed */
    size_t raw_cap, raw_len, rpos;
    uint64_t rec_no;             /* index of the next record in the chunk */
    uint8_t *zbuf;               /* compressed payload (stream and blobs) */
    size_t zcap;
    uint8_t *ubuf;               /* a codec 2 payload before its unshuffle */
    size_t ucap;
    int stream_end;              /* no more chunks */
    tf_status sticky;            /* a stream error repeats until rewind */
    uint64_t cur_rec;            /* index of the record being decoded */
    int eof_sorted;              /* pending BEGINs sorted for the final yield */
    size_t eof_next;             /* next of them to yield */
    msgpack_zone zone;           /* msgpack-c objects of the current record */
    int zone_ok;
    tf_arena arena;              /* tf_value trees of the current record */
    void *yielded;               /* pending block of the last call yielded */
    size_t yielded_len;

    /* Signatures: open addressing on id. */
    tf_sig **sigs;
    size_t sig_cap, nsigs;

    tf_pending *pend;
    size_t npend, cpend;

    tf_value *env;
    size_t env_len;

    /* Blob pieces sorted by (hash, piece_off); built from index or scan. */
    tf_piece *pieces;
    size_t npieces, pieces_cap;
    int table_ready;
    tf_pcache cache[2];
    uint64_t cache_clock;
    int feed;                    /* tf_reader_open_feed(): raw is borrowed per record */
    int trusted;                 /* a feed of our own writer's records: no tf_mp_skip */
};

/* tf_rio.c: chunk I/O shared by streaming, scanning and blob reads. */
/* Reads and checks the chunk header at @p off. @return TF_OK, TF_END (no
 * complete chunk there: end of file or the trailer; or a torn chunk, then
 * *truncated = 1), or an error with r->err set. */
tf_status tf_rio_header(tf_reader *r, uint64_t off, tf_chunk_hdr *h, int *truncated);
/* Reads the payload of the chunk at @p off, checks the checksum, and
 * decompresses into *dst (grown up to max_chunk; *cap its capacity).
 * Lengths were checked by tf_rio_header. */
tf_status tf_rio_payload(tf_reader *r, uint64_t off, const tf_chunk_hdr *h,
                         uint8_t **dst, size_t *cap);

/* tf_records.c */
/* Sets r->err to a message prefixed with the chunk offset and record
 * index. @return st. */
tf_status tf_rec_err(tf_reader *r, tf_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define TF_REC_FAIL(r, st, ...) do { status = tf_rec_err((r), (st), __VA_ARGS__); goto out; } while (0)
/* Decodes records from the stream until one yields an item. */
tf_status tf_rec_next(tf_reader *r, tf_item *item);
/* Reads the first record; keeps it as the ENV if it is one. */
tf_status tf_rec_read_env(tf_reader *r);
void tf_rec_reset(tf_reader *r);          /* drop stream and pending state */
void tf_rec_free(tf_reader *r);           /* free sigs, pending, env */

/* tf_rcalls.c: records of fields @p f (lengths checked by the caller). */
tf_status tf_rec_sig(tf_reader *r, const tf_value *f);
tf_status tf_rec_begin(tf_reader *r, const tf_value *f);
tf_status tf_rec_end(tf_reader *r, const tf_value *f, tf_item *item);   /* yields the call */
tf_status tf_rec_eof(tf_reader *r, tf_item *item);   /* the unended calls, then TF_END */
tf_status tf_rec_feed(tf_reader *r, const void *rec, size_t len, size_t *used, tf_item *item);
void tf_rec_begin_view(tf_reader *r, tf_item *item);   /* the call just begun, as TF_ITEM_BEGIN */

static inline int tf_is_str(const tf_value *v) { return v->type == TF_STR; }
static inline int tf_map_or_nil(const tf_value *v) { return v->type == TF_MAP || v->type == TF_NIL; }
/* @return 1 when @p v is an unsigned integer (*out), else 0. */
static inline int tf_uint(const tf_value *v, uint64_t *out)
{
    return v->type == TF_UINT ? (*out = v->v.u, 1) : 0;
}

/* tf_rblob.c */
tf_status tf_rblob_load_index(tf_reader *r);   /* TF_OK even when absent */
void tf_rblob_free(tf_reader *r);

#endif /* CLRR_TF_INT_H */
