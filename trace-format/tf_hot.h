/* tf_hot.h — THE hot-path interface of the trace writer: the record lock,
 * the inline msgpack encoder and the inline record heads.
 *
 * Who may include it: the recorder (recorder/rec_int.h, for the generated
 * entry points and recorder/rec_*.c), trace-format itself, and the tests
 * that build traces value by value. Everything else writes records with
 * the tf_write_* functions of tf.h, which take the lock themselves.
 *
 * The contract:
 *  - A record is encoded between tf_writer_lock() and tf_writer_unlock(),
 *    on the thread that took the lock, which holds the writer's record
 *    lock in between: records of concurrent threads never interleave, and
 *    file order is lock order. Exactly one record (one msgpack array) is
 *    encoded per lock/unlock.
 *  - Under the lock nothing may wait: no tf_writer_blob(), no other lock
 *    than the ones tf_writer_unlock() itself takes, no second
 *    tf_writer_lock() of the same writer.
 *  - A record is begun by one of the tf_wrec_* heads below (its array head,
 *    its type and its fixed fields); the caller then encodes exactly the
 *    fields the head says remain, with tf_enc_*. So record types and field
 *    counts are written only here (FORMAT.md 4 lists which function writes
 *    which record).
 *  - tf_enc, tf_wfast_ and tf_rlock fields are the writer's: they are in
 *    this header only so that the functions below can be inline. A caller
 *    uses the functions, never the fields.
 *
 * Everything here is inline where the recorder calls it once per value or
 * twice per call; its cost per recorded call is what tf_writer_lock(),
 * tf_writer_unlock() and the encoders below compile to.
 */
#ifndef CLRR_TF_HOT_H
#define CLRR_TF_HOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-format/tf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ the encoder */
typedef struct tf_enc tf_enc;

/* The encoder is a cursor into the open record chunk. Its fields are the
 * writer's; they are here only so that the encoders below can be inline:
 * the recorder encodes about 20 values per call, and a function call, a
 * generic size test and byte-by-byte stores per value were more than half
 * of the recorder's instructions per call (callgrind: 3675 per
 * clSetKernelArg + clEnqueueNDRangeKernel pair, 2100 of them in tf_enc_*).
 * Each encoder checks room for its largest form once and stores the value
 * with wide byte-swapped stores (below); the rare paths (no room, long
 * strings) are out of line. The bytes are exactly msgpack-c's (smallest format for each value;
 * test_tf.c compares them byte for byte). */
struct tf_writer;
struct tf_enc {
    uint8_t *p, *end;            /* next byte, end of capacity */
    struct tf_writer *w;
    int err;                     /* no memory: the record is lost */
};

/*! tf_enc_discard() : makes *e an encoder of no writer that keeps nothing:
 *  every value encoded with it is dropped (for a record that a writer in
 *  sink mode does not need to see). Values are written into @p scratch
 *  (@p n bytes, which may be 0) as long as they fit, so that dropping them
 *  takes the encoders' fast path; the rest are not written at all. */
void tf_enc_discard(tf_enc *e, void *scratch, size_t n);

/* Out of line: room for @p n more bytes (growing the chunk); NULL when the
 * record is lost. Called only when the cursor lacks it. */
uint8_t *tf_enc_room_slow(tf_enc *e, size_t n);

static inline __attribute__((always_inline)) uint8_t *tf_enc_room_(tf_enc *e, size_t n)
{
    if (__builtin_expect((size_t)(e->end - e->p) >= n, 1))
        return e->p;
    return tf_enc_room_slow(e, n);
}

/* Stores are 8 bytes wide, through a type that is not a character type:
 * the compiler may then assume they do not change the cursor (a uint8_t
 * store may alias anything, so every value reloaded e->p and e->end). Each
 * encoder checks room for 9 bytes; what a wide store writes past the value
 * is free capacity, overwritten by the next value or never part of the
 * chunk. */
typedef uint64_t tf_u64u_ __attribute__((aligned(1)));

/* @p tag, then @p v's low @p n bytes big-endian (n = 1, 2, 4, 8) at @p p. */
static inline __attribute__((always_inline)) uint8_t *tf_enc_put_(uint8_t *p, uint8_t tag, uint64_t v, unsigned n)
{
    if (n == 1)
        *(tf_u64u_ *)p = tag | (v & 0xff) << 8;
    else if (n == 2)
        *(tf_u64u_ *)p = tag | (uint64_t)__builtin_bswap16((uint16_t)v) << 8;
    else if (n == 4)
        *(tf_u64u_ *)p = tag | (uint64_t)__builtin_bswap32((uint32_t)v) << 8;
    else {
        *(tf_u64u_ *)p = tag;
        *(tf_u64u_ *)(p + 1) = __builtin_bswap64(v);
    }
    return p + 1 + n;
}

static inline __attribute__((always_inline)) void tf_enc_byte_(tf_enc *e, uint8_t b)
{
    uint8_t *p = tf_enc_room_(e, 8);
    if (p) {
        *(tf_u64u_ *)p = b;
        e->p = p + 1;
    }
}

static inline __attribute__((always_inline)) void tf_enc_nil(tf_enc *e) { tf_enc_byte_(e, 0xc0); }

/* @p n nils in a row (an END record's inputs): eight per store. */
static inline __attribute__((always_inline)) void tf_enc_nils(tf_enc *e, unsigned n)
{
    while (n) {
        unsigned k = n < 8 ? n : 8;
        uint8_t *p = tf_enc_room_(e, 8);
        if (!p)
            return;
        *(tf_u64u_ *)p = 0xc0c0c0c0c0c0c0c0ull;
        e->p = p + k;
        n -= k;
    }
}
static inline __attribute__((always_inline)) void tf_enc_bool(tf_enc *e, int v) { tf_enc_byte_(e, v ? 0xc3 : 0xc2); }

/* Values stored at @p p, which has room for their largest form (9 bytes;
 * a head 8): @return the byte after. The encoders below check room for
 * one value each; a record's fixed part can check once for all of its
 * values (tf_enc_reserve) and store them with these. */
static inline __attribute__((always_inline)) uint8_t *tf_put_uint(uint8_t *p, uint64_t v)
{
    if (v < 0x80) {                                  /* positive fixint */
        *(tf_u64u_ *)p = v;
        return p + 1;
    }
    if (v <= UINT8_MAX)
        return tf_enc_put_(p, 0xcc, v, 1);
    if (v <= UINT16_MAX)
        return tf_enc_put_(p, 0xcd, v, 2);
    if (v <= UINT32_MAX)
        return tf_enc_put_(p, 0xce, v, 4);
    return tf_enc_put_(p, 0xcf, v, 8);
}

static inline __attribute__((always_inline)) uint8_t *tf_put_int(uint8_t *p, int64_t v)
{
    if (v >= 0)
        return tf_put_uint(p, (uint64_t)v);
    if (v >= -32) {                                  /* negative fixint */
        *(tf_u64u_ *)p = (uint8_t)v;
        return p + 1;
    }
    if (v >= INT8_MIN)
        return tf_enc_put_(p, 0xd0, (uint64_t)v, 1);
    if (v >= INT16_MIN)
        return tf_enc_put_(p, 0xd1, (uint64_t)v, 2);
    if (v >= INT32_MIN)
        return tf_enc_put_(p, 0xd2, (uint64_t)v, 4);
    return tf_enc_put_(p, 0xd3, (uint64_t)v, 8);
}

/* A container head: the fix form below 16 elements, else 16/32-bit forms. */
static inline __attribute__((always_inline)) uint8_t *tf_put_head_(uint8_t *p, uint32_t n, uint8_t fix, uint8_t tag16,
                                                                    uint8_t tag32)
{
    if (n < 16) {
        *(tf_u64u_ *)p = (uint8_t)(fix | n);
        return p + 1;
    }
    if (n <= UINT16_MAX)
        return tf_enc_put_(p, tag16, n, 2);
    return tf_enc_put_(p, tag32, n, 4);
}

static inline __attribute__((always_inline)) uint8_t *tf_put_array(uint8_t *p, uint32_t n)
{
    return tf_put_head_(p, n, 0x90, 0xdc, 0xdd);
}

/*! tf_enc_reserve() : room for @p n bytes at once: @return where they go
 *  (store with tf_put_*, then set e->p to the byte after), or NULL when the
 *  record is lost (no memory; nothing more need be encoded). */
static inline __attribute__((always_inline)) uint8_t *tf_enc_reserve(tf_enc *e, size_t n)
{
    return tf_enc_room_(e, n);
}

static inline __attribute__((always_inline)) void tf_enc_uint(tf_enc *e, uint64_t v)
{
    uint8_t *p = tf_enc_room_(e, 9);
    if (p)
        e->p = tf_put_uint(p, v);
}

static inline __attribute__((always_inline)) void tf_enc_int(tf_enc *e, int64_t v)
{
    uint8_t *p = tf_enc_room_(e, 9);
    if (p)
        e->p = tf_put_int(p, v);
}

static inline __attribute__((always_inline)) void tf_enc_head_(tf_enc *e, uint32_t n, uint8_t fix, uint8_t tag16, uint8_t tag32)
{
    uint8_t *p = tf_enc_room_(e, 8);
    if (p)
        e->p = tf_put_head_(p, n, fix, tag16, tag32);
}

static inline __attribute__((always_inline)) void tf_enc_array(tf_enc *e, uint32_t n) { tf_enc_head_(e, n, 0x90, 0xdc, 0xdd); } /* then n values */
static inline __attribute__((always_inline)) void tf_enc_map(tf_enc *e, uint32_t n) { tf_enc_head_(e, n, 0x80, 0xde, 0xdf); }   /* then n pairs */

/* The record lock: taken twice per recorded call (its BEGIN and its END),
 * and held only while a record is encoded (or, in sink mode, handed on).
 * Uncontended it is one exchange and one store, where a pthread mutex is
 * two locked operations and two calls (callgrind: about 80 instructions
 * less per recorded call). Contended it spins briefly, then yields
 * (tf_rlock_wait, tf_writer.c): its holders do not wait for anything under
 * it but the queue's mutex. */
typedef struct tf_rlock {
    _Atomic int held;
} tf_rlock;

void tf_rlock_wait(tf_rlock *l);

static inline void tf_rlock_lock(tf_rlock *l)
{
    if (__builtin_expect(atomic_exchange_explicit(&l->held, 1, memory_order_acquire), 0))
        tf_rlock_wait(l);
}

/* @return 1 when taken. */
static inline int tf_rlock_try(tf_rlock *l)
{
    return !atomic_load_explicit(&l->held, memory_order_relaxed) &&
           !atomic_exchange_explicit(&l->held, 1, memory_order_acquire);
}

static inline void tf_rlock_unlock(tf_rlock *l)
{
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

/* The record path's hot state: the first member of every writer, here only
 * so that tf_writer_lock(), tf_writer_unlock() and tf_writer_status() can
 * be inline (a recorded call locks and unlocks twice and asks the status
 * twice; as calls into tf_writer.c that was about 150 of the recorder's
 * instructions per call). Its fields are the writer's (tf_writer.c): a
 * caller uses the three functions, never the fields. The cursor persists
 * between records: while a chunk is open, enc.p is where the next record
 * goes, and its length is set at every unlock. */
typedef struct tf_wfast_ {
    tf_rlock rmu;                /* the record lock: one exchange and one store uncontended */
    _Atomic int failed;          /* the writer failed: records are dropped */
    int sink;                    /* sink mode: every unlock hands the record on (slow path) */
    tf_enc enc;                  /* the cursor into the open record chunk */
    uint8_t *base;               /* the open chunk's payload; NULL: no chunk open */
    size_t *open_len;            /* the open chunk's length, set at unlock */
    size_t start;                /* where the record being encoded began (offset from base) */
    size_t chunk_size;           /* a record that ends past it seals the chunk */
    int prefetchw;               /* the CPU has PREFETCHW (tf_writer_lock) */
    uint64_t records, rec_bytes; /* records encoded, their bytes */
    _Alignas(64) _Atomic size_t queued;   /* bytes of jobs not yet written (the workers' line) */
    size_t budget;               /* producers wait while queued exceeds it */
} tf_wfast_;

/* The out-of-line parts (tf_writer.c). */
void tf_writer_wait_space_(tf_writer *w);   /* over the budget: wait (no lock held) */
void tf_writer_lock_open_(tf_writer *w);    /* lock held, no open chunk: open one */
void tf_writer_unlock_slow_(tf_writer *w);  /* a lost record, failure, sink mode, a full chunk */

/*! tf_writer_lock() : @return the encoder for the open record chunk; the
 *  caller holds the record lock until tf_writer_unlock(). Never NULL. */
static inline tf_enc *tf_writer_lock(tf_writer *w)
{
    tf_wfast_ *f = (tf_wfast_ *)(void *)w;

    if (__builtin_expect(atomic_load_explicit(&f->queued, memory_order_relaxed) > f->budget, 0))
        tf_writer_wait_space_(w);
    tf_rlock_lock(&f->rmu);
    if (__builtin_expect(f->base == NULL, 0)) {
        tf_writer_lock_open_(w);
    } else {
        f->enc.err = 0;
        f->start = (size_t)(f->enc.p - f->base);
    }
    /* The chunk's lines 2 KiB ahead (some thirty calls' records), for
     * writing: a recycled chunk was last read by a compression worker on
     * another core, and each record's first store to a line of it missed.
     * Measured on an H200 host, in-process (micro's ab): the layer's cost
     * per call fell from 317 to 271 ns. A prefetch never faults, so the
     * address may lie past the chunk. */
#if defined(__x86_64__)
    if (f->prefetchw)
        __asm__ volatile("prefetchw %0" ::"m"(*(const char *)(f->enc.p + 2048)));
#endif
    return &f->enc;
}

/*! tf_writer_unlock() : releases the record lock; seals the chunk when it
 *  has reached chunk_size (a worker thread compresses it). */
static inline void tf_writer_unlock(tf_writer *w)
{
    tf_wfast_ *f = (tf_wfast_ *)(void *)w;

    if (__builtin_expect((f->base == NULL) | f->enc.err | f->sink |
                         atomic_load_explicit(&f->failed, memory_order_relaxed), 0)) {
        tf_writer_unlock_slow_(w);
        return;
    }
    size_t len = (size_t)(f->enc.p - f->base);
    if (__builtin_expect(len >= f->chunk_size, 0)) {
        tf_writer_unlock_slow_(w);
        return;
    }
    *f->open_len = len;
    if (len > f->start) {
        f->records++;
        f->rec_bytes += len - f->start;
    }
    tf_rlock_unlock(&f->rmu);
}

/*! tf_writer_status() : TF_OK, or the first error the writer hit (then it
 *  drops further data without blocking producers). Thread-safe. */
static inline tf_status tf_writer_status(const tf_writer *w)
{
    if (w == NULL)
        return TF_ERR_ARG;
    return atomic_load_explicit(&((const tf_wfast_ *)(const void *)w)->failed, memory_order_acquire)
           ? TF_ERR_FAILED : TF_OK;
}

void tf_enc_f64(tf_enc *e, double v);
void tf_enc_str(tf_enc *e, const char *s, size_t len);
void tf_enc_cstr(tf_enc *e, const char *s);          /* nil when s == NULL */
void tf_enc_bin(tf_enc *e, const void *p, size_t len);
void tf_enc_blobref(tf_enc *e, const tf_blobref *b); /* msgpack ext type 1 */
void tf_enc_hashref(tf_enc *e, const tf_blobref *b); /* a hashed read-back (FORMAT.md 11.4) */

/*! tf_enc_value() : encodes value tree @p v as it is (a value a reader
 *  decoded is written back byte-equivalent: smallest encodings). */
void tf_enc_value(tf_enc *e, const tf_value *v);

/* --------------------------------------------------------- record heads
 * Each head writes a record's array head, its type and its leading fixed
 * fields; the comment says what the caller encodes after it. The inline
 * ones (BEGIN, END) are the recorder's per-call path: one room check for
 * the whole head, constants folded. */

/* BEGIN and END heads come in two forms. tf_wrec_*_head(e, ...) checks
 * room and writes. tf_wrec_*_put(p, ...) stores at @p p, which has room
 * for TF_WREC_*_HEAD_MAX bytes (tf_enc_reserve), and returns the byte
 * after: the recorder's per-call path reserves first and reads the call's
 * fields after, so that no value is kept across the room check's slow
 * path (which would cost register saves in every entry point). */

/* BEGIN [2, seq, tid, sig_id, t_ns: six values, 46 bytes at most. */
#define TF_WREC_BEGIN_HEAD_MAX (1 + 5 * 9)
static inline __attribute__((always_inline)) uint8_t *tf_wrec_begin_put(uint8_t *p, uint64_t seq, uint64_t tid,
                                                                        uint32_t sig_id, int64_t t_ns)
{
    p = tf_put_array(p, TF_REC_BEGIN_FIELDS);
    p = tf_put_uint(p, TF_REC_BEGIN);
    p = tf_put_uint(p, seq);
    p = tf_put_uint(p, tid);
    p = tf_put_uint(p, sig_id);
    return tf_put_int(p, t_ns);
}

/*! tf_wrec_begin_head() : BEGIN [2, seq, tid, sig_id, t_ns, ...; then the
 *  caller encodes 2 values: args (an array of one value per parameter of
 *  the signature) and pre (a map, or nil). */
static inline __attribute__((always_inline)) void tf_wrec_begin_head(tf_enc *e, uint64_t seq, uint64_t tid,
                                                                     uint32_t sig_id, int64_t t_ns)
{
    uint8_t *p = tf_enc_reserve(e, TF_WREC_BEGIN_HEAD_MAX);
    if (p)
        e->p = tf_wrec_begin_put(p, seq, tid, sig_id, t_ns);
}

/* END [3, seq, t_ns: four values, 20 bytes at most. */
#define TF_WREC_END_HEAD_MAX (2 + 2 * 9)
static inline __attribute__((always_inline)) uint8_t *tf_wrec_end_put(uint8_t *p, uint64_t seq, int64_t t_ns)
{
    p = tf_put_array(p, TF_REC_END_FIELDS);
    p = tf_put_uint(p, TF_REC_END);
    p = tf_put_uint(p, seq);
    return tf_put_int(p, t_ns);
}

/*! tf_wrec_end_head() : END [3, seq, t_ns, ...; then the caller encodes 3
 *  values: ret (nil for void), outs (an array of one value per parameter)
 *  and post (a map, or nil). */
static inline __attribute__((always_inline)) void tf_wrec_end_head(tf_enc *e, uint64_t seq, int64_t t_ns)
{
    uint8_t *p = tf_enc_reserve(e, TF_WREC_END_HEAD_MAX);
    if (p)
        e->p = tf_wrec_end_put(p, seq, t_ns);
}

/*! tf_wrec_env_head() : ENV [0, ...; then the caller encodes 1 value, the
 *  environment map. */
static inline void tf_wrec_env_head(tf_enc *e)
{
    tf_enc_array(e, TF_REC_ENV_FIELDS);
    tf_enc_uint(e, TF_REC_ENV);
}

/*! tf_wrec_sig() : the whole SIG record of @p s (s->id is its id). */
void tf_wrec_sig(tf_enc *e, const tf_sig *s);
/*! tf_wrec_devtime() : the whole DEVTIME record (device ns). */
void tf_wrec_devtime(tf_enc *e, uint64_t seq, uint64_t queued, uint64_t submit, uint64_t start, uint64_t end);
/*! tf_wrec_data_head() : DATA [5, seq, key, ...; then the caller encodes
 *  1 value, the data. @p key NUL-terminated. */
void tf_wrec_data_head(tf_enc *e, uint64_t seq, const char *key);
/*! tf_wrec_note() : the whole NOTE record; @p text NUL-terminated. */
void tf_wrec_note(tf_enc *e, uint64_t seq, uint64_t object, const char *text);
/*! tf_wrec_devices_head() : DEVICES [7, platform, ...; then the caller
 *  encodes 1 value: an array of @p ndevices device maps (this head writes
 *  the array's head: the caller encodes the ndevices maps). */
void tf_wrec_devices_head(tf_enc *e, uint64_t platform, uint32_t ndevices);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_TF_HOT_H */
