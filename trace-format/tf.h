/* tf.h — the clrr trace container: writer, reader, blob store.
 *
 * A trace is one append-only file (see FORMAT.md for the byte layout):
 * a file header, then chunks. RECORD chunks hold msgpack records (calls,
 * signatures, environment, late data); BLOB chunks hold pieces of
 * content-addressed blobs (XXH3-128). An optional INDEX chunk and trailer at
 * the end only speed up random access: a reader never needs them.
 *
 * Error convention: every function returning tf_status returns TF_OK (0) on
 * success, TF_END (1) at the end of a stream, or a negative TF_ERR_*.
 * tf_strerror() names a status; tf_reader_error() gives the detailed message
 * (with file offsets) of a reader's last error.
 *
 * Records are written only by this module: whole, by the tf_write_*
 * functions below, or, on the recorder's hot path, under the record lock
 * with the inline encoder of trace-format/tf_hot.h (which says who may use
 * it and how).
 */
#ifndef CLRR_TF_H
#define CLRR_TF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TF_FORMAT_MAJOR 2
#define TF_FORMAT_MINOR 2
#define TF_FORMAT_MAJOR_OLDEST 1   /* readers read every major from this one to TF_FORMAT_MAJOR */

/* Feature bits of the file header (FORMAT.md 2.1, since 2.1): the low 32
 * bits of its flags are required features (a reader refuses a file that
 * sets one it does not know), the high 32 bits optional ones (a reader
 * ignores those it does not know). A feature defined in a later minor gets
 * the next free bit of its kind here, in FORMAT.md's table, and in the
 * known masks below when this build implements it. A writer sets the
 * bits its opener asks for (tf_writer_opts.features_optional). */
#define TF_FEATURES_SINCE_MINOR 1         /* in 2.0 and 1.x files the flags are ignored */
#define TF_FEATURE_HASHED_READS 0x00000001u   /* optional bit 0 (2.2): read-backs recorded as
                                               * hashes (tf_value_hashref, FORMAT.md 11.4) */
#define TF_FEATURES_REQUIRED_KNOWN 0x00000000u
#define TF_FEATURES_OPTIONAL_KNOWN TF_FEATURE_HASHED_READS

typedef enum tf_status {
    TF_OK = 0,
    TF_END = 1,               /* no more items */
    TF_ERR_IO = -1,           /* open/read/write/seek failed (errno kept in the message) */
    TF_ERR_NOMEM = -2,
    TF_ERR_NOT_TRACE = -3,    /* bad magic: not a clrr trace */
    TF_ERR_VERSION = -4,      /* a major version this build cannot read */
    TF_ERR_CORRUPT = -5,      /* checksum, length or encoding error */
    TF_ERR_LIMIT = -6,        /* a size or count beyond the reader's limits */
    TF_ERR_ARG = -7,          /* bad argument from the caller */
    TF_ERR_NOT_FOUND = -8,    /* blob or signature not in the trace */
    TF_ERR_FAILED = -9        /* writer in failed state (earlier I/O error) */
} tf_status;

/*! tf_strerror() : @return a static string naming @p s. Thread-safe. */
const char *tf_strerror(tf_status s);

/* ---------------------------------------------------------------- values */

/* A blob reference: content hash (FORMAT.md 5.1: XXH3-128 up to
 * TF_HASH_LEAF bytes, a hash of the leaves' hashes above, canonical
 * big-endian bytes as produced by XXH128_canonicalFromHash) and total
 * length in bytes. */
typedef struct tf_blobref {
    uint8_t hash[16];
    uint64_t size;
} tf_blobref;

/* Blobs longer than this are hashed in leaves of this size, which the
 * writer's workers hash in parallel. */
#define TF_HASH_LEAF ((size_t)1 << 20)

/*! tf_hash() : the blob hash (FORMAT.md 5.1) of @p len bytes at @p data
 *  into @p out->hash; sets out->size = len. Thread-safe. */
void tf_hash(const void *data, size_t len, tf_blobref *out);

typedef enum tf_type {
    TF_NIL = 0, TF_BOOL, TF_INT, TF_UINT, TF_F64, TF_STR, TF_BIN,
    TF_ARRAY, TF_MAP, TF_BLOB
} tf_type;

/* A decoded value. Strings are NOT NUL-terminated (use len). Storage belongs
 * to the reader's arena: valid until the next tf_reader_next() or close. */
typedef struct tf_value tf_value;
struct tf_value {
    tf_type type;
    union {
        int b;
        int64_t i;
        uint64_t u;
        double f;
        struct { const char *ptr; uint32_t len; } str;   /* TF_STR, TF_BIN */
        struct { const tf_value *items; uint32_t n; } arr;
        struct { const tf_value *keys; const tf_value *vals; uint32_t n; } map;
        tf_blobref blob;
    } v;
};

/*! tf_map_get() : value of key @p key in map @p m, or NULL (also when m is
 *  not a map). */
const tf_value *tf_map_get(const tf_value *m, const char *key);
/*! tf_value_u64() : integer value of @p v (TF_UINT, non-negative TF_INT,
 *  TF_BOOL) into *out. @return 1 on success, 0 if not such a value. */
int tf_value_u64(const tf_value *v, uint64_t *out);
/*! tf_value_i64() : like tf_value_u64 for signed values. */
int tf_value_i64(const tf_value *v, int64_t *out);
/*! tf_value_hashref() : 1 when @p v is a hashed read-back (FORMAT.md 11.4:
 *  the map {"hash": bin 16, "size": uint}, the bytes' blob hash (5.1, as
 *  tf_hash() computes it) and length), with them in *out (may be NULL);
 *  0 otherwise. Thread-safe. */
int tf_value_hashref(const tf_value *v, tf_blobref *out);

/* ------------------------------------------------------------ signatures */

/* Parameter kinds, stored in SIG records (FORMAT.md, "Signatures"). */
typedef enum tf_kind {
    TF_KIND_VALUE = 0,    /* integer, enum, bitfield, float: TF_INT/UINT/F64 */
    TF_KIND_HANDLE = 1,   /* OpenCL object: stable id (uint, 0 = NULL) */
    TF_KIND_STRING = 2,   /* NUL-terminated string: TF_STR or nil */
    TF_KIND_ARRAY = 3,    /* array of values/handles/strings: TF_ARRAY or nil */
    TF_KIND_BLOB = 4,     /* bytes: TF_BLOB (blob store) or TF_BIN (small), nil */
    TF_KIND_CALLBACK = 5, /* function pointer: TF_BOOL (present) */
    TF_KIND_USERDATA = 6, /* opaque pointer: TF_UINT (pointer value, for identity only) */
    TF_KIND_PROPS = 7,    /* 0-terminated property list: TF_ARRAY of ints, or nil */
    TF_KIND_PTR = 8,      /* host/SVM/mapped pointer whose identity matters: TF_UINT id */
    TF_KIND_STRUCT = 9    /* struct by pointer (image format/desc): TF_ARRAY of fields */
} tf_kind;

typedef enum tf_dir { TF_DIR_IN = 1, TF_DIR_OUT = 2, TF_DIR_INOUT = 3 } tf_dir;

typedef struct tf_param {
    const char *name;     /* NUL-terminated */
    const char *type;     /* C type as declared, e.g. "const size_t *" */
    uint8_t kind;         /* tf_kind */
    uint8_t dir;          /* tf_dir */
} tf_param;

typedef struct tf_sig {
    uint32_t id;
    const char *name;     /* function name, e.g. "clEnqueueWriteBuffer" */
    const char *ret_type; /* e.g. "cl_int", "cl_mem" */
    uint32_t nparams;
    const tf_param *params;
} tf_sig;

/* ------------------------------------------------------------------ writer */

typedef struct tf_writer tf_writer;

typedef struct tf_writer_opts {
    int level;               /* zstd level; 0 = default (1); negative = fast */
    size_t memory_budget;    /* bytes queued before producers wait; 0 = 256 MiB */
    unsigned flush_ms;       /* periodic flush interval; 0 = 200 ms */
    size_t chunk_size;       /* raw record-chunk size that triggers a seal; 0 = 1 MiB */
    unsigned threads;        /* compression threads; 0 = 3/4 of online CPUs, 1 to 16 */
    /* Sink mode (no file): every record, once encoded, is handed to
     * sink(sink_ctx, bytes, len) on the encoding thread, with the record
     * mutex held (so in lock order); blobs are only hashed. The live plan
     * mode of the layer decodes them with tf_reader_feed(). */
    void (*sink)(void *sink_ctx, const void *rec, size_t len);
    void *sink_ctx;
    uint32_t features_optional;   /* optional feature bits (TF_FEATURE_*) the file uses:
                                   * written in its header (FORMAT.md 2.1) */
} tf_writer_opts;

/*! tf_writer_open() : creates (truncates) @p path, writes the file header and
 *  starts the writer's threads. @p opts may be NULL (defaults). With
 *  @p path NULL and opts->sink set, a writer in sink mode: no file, no
 *  threads; flushes do nothing.
 *  On success *out owns the writer; close it with tf_writer_close().
 *  On TF_ERR_IO (open or header write failed) errno says why. */
tf_status tf_writer_open(tf_writer **out, const char *path, const tf_writer_opts *opts);

/*! tf_writer_close() : seals and writes everything queued, writes the INDEX
 *  chunk and trailer, stops the thread, closes the file, frees @p w.
 *  Accepts NULL. @return the writer's status (first error seen, if any). */
tf_status tf_writer_close(tf_writer *w);
/*! tf_writer_close_msg() : tf_writer_close(); when it fails, the writer's
 *  message for the first error ("PATH: what at offset N: reason") is copied
 *  into @p msg (capacity @p msg_cap; "" when it succeeds). */
tf_status tf_writer_close_msg(tf_writer *w, char *msg, size_t msg_cap);
/*! tf_writer_close_shared() : tf_writer_close_msg() for a process whose
 *  other threads may still be calling the writer (the recorder at exit:
 *  an application thread in an OpenCL call): everything queued is written,
 *  then the index and trailer, the file is closed, but @p w is NOT freed:
 *  it stays in the failed state (status TF_ERR_FAILED, message
 *  "closed"), so that any later call returns at once without writing or
 *  waiting. @p w must not be used for anything else after; its memory goes
 *  with the process. @return the status before the close's end. */
tf_status tf_writer_close_shared(tf_writer *w, char *msg, size_t msg_cap);

/* ----------------------------------------------------------------- records */

/* Record types (FORMAT.md 4): the first field of every record. */
typedef enum tf_rec_type {
    TF_REC_ENV = 0, TF_REC_SIG = 1, TF_REC_BEGIN = 2, TF_REC_END = 3, TF_REC_DEVTIME = 4,
    TF_REC_DATA = 5, TF_REC_NOTE = 6, TF_REC_DEVICES = 7,
    TF_REC_COUNT = 8           /* types from here on are a later minor's: readers skip them */
} tf_rec_type;

/* Fields of each record type, its type included (FORMAT.md 4): what the
 * writers below write, and the least a reader accepts. */
enum {
    TF_REC_ENV_FIELDS = 2,     /* [0, env] */
    TF_REC_SIG_FIELDS = 5,     /* [1, sig_id, name, ret_type, params] */
    TF_REC_BEGIN_FIELDS = 7,   /* [2, seq, tid, sig_id, t_ns, args, pre] */
    TF_REC_END_FIELDS = 6,     /* [3, seq, t_ns, ret, outs, post] */
    TF_REC_DEVTIME_FIELDS = 6, /* [4, seq, queued, submit, start, end] */
    TF_REC_DATA_FIELDS = 4,    /* [5, seq, key, value] */
    TF_REC_NOTE_FIELDS = 4,    /* [6, seq, object, text] */
    TF_REC_DEVICES_FIELDS = 3, /* [7, platform, devices] */
    TF_SIG_PARAM_FIELDS = 4    /* a SIG parameter: [name, type, kind, dir] */
};

/* Record writers: each writes one whole record (FORMAT.md 4) of the given
 * fields, taking and releasing the writer's record lock itself (so never
 * while it is held: the recorder, which encodes records under the lock,
 * uses the encoder-level writers of tf_hot.h). Values are encoded as
 * tf_value trees (a reader's items can be written again as they are: clrr
 * trim); a NULL map stands for nil. Blobs that values refer to must be
 * stored first (tf_writer_blob, tf_writer_blob_ref). Thread-safe.
 * @return tf_writer_status() after the record: TF_OK, or TF_ERR_FAILED
 * when the writer has failed (the record is dropped). */

/*! tf_write_env() : ENV [0, env]; @p env a map, or NULL (an empty map). */
tf_status tf_write_env(tf_writer *w, const tf_value *env);
/*! tf_write_sig() : SIG [1, id, name, ret_type, params] of @p s (s->id is its id). */
tf_status tf_write_sig(tf_writer *w, const tf_sig *s);
/*! tf_write_begin() : BEGIN [2, seq, tid, sig_id, t_ns, args, pre];
 *  @p args: @p nargs values (one per parameter of the signature); @p pre a
 *  map or NULL. */
tf_status tf_write_begin(tf_writer *w, uint64_t seq, uint64_t tid, uint32_t sig_id, int64_t t_ns,
                         const tf_value *args, uint32_t nargs, const tf_value *pre);
/*! tf_write_end() : END [3, seq, t_ns, ret, outs, post]; @p ret NULL is
 *  nil; @p outs: @p nouts values, or NULL for @p nouts nils; @p post a map
 *  or NULL. */
tf_status tf_write_end(tf_writer *w, uint64_t seq, int64_t t_ns, const tf_value *ret,
                       const tf_value *outs, uint32_t nouts, const tf_value *post);
/*! tf_write_devtime() : DEVTIME [4, seq, queued, submit, start, end]
 *  (device ns, as in tf_devtime). */
tf_status tf_write_devtime(tf_writer *w, uint64_t seq, uint64_t queued, uint64_t submit, uint64_t start,
                           uint64_t end);
/*! tf_write_data() : DATA [5, seq, key, value]; @p key NUL-terminated. */
tf_status tf_write_data(tf_writer *w, uint64_t seq, const char *key, const tf_value *value);
/*! tf_write_note() : NOTE [6, seq, object, text]; @p text NUL-terminated. */
tf_status tf_write_note(tf_writer *w, uint64_t seq, uint64_t object, const char *text);
/*! tf_write_devices() : DEVICES [7, platform, devices]; @p devices an
 *  array of device maps. */
tf_status tf_write_devices(tf_writer *w, uint64_t platform, const tf_value *devices);


/*! tf_writer_blob() : stores @p len bytes at @p data in the blob store unless
 *  the same bytes are already stored, and sets *ref. Copies the data (the
 *  caller may reuse its buffer on return), in pieces of at most
 *  TF_BLOB_PIECE bytes; waits while the queue is over the memory budget.
 *  Must NOT be called while holding tf_writer_lock(). Thread-safe.
 *  Ordering: the blob is in the file before any record encoded after this
 *  call returns (so a reference in a readable record is readable).
 *  @return TF_OK, or TF_ERR_FAILED when the writer has failed (ref is still
 *  set, so the call record stays well-formed). */
#define TF_BLOB_PIECE ((size_t)1 << 20)
tf_status tf_writer_blob(tf_writer *w, const void *data, size_t len, tf_blobref *ref);
/*! tf_writer_blob_begin() / tf_writer_blob_join() : tf_writer_blob() in
 *  two halves, so that the caller can do something else (call the driver)
 *  while the writer's workers copy and hash the bytes. begin posts the
 *  copy + hash tasks of a blob of more than TF_BLOB_PIECE bytes and returns
 *  a ticket at once (after waiting for budget as tf_writer_blob does); the
 *  caller's thread takes no task until it calls join, which helps with the
 *  tasks left, waits for the others, sets *ref and queues the pieces.
 *  Between the two the @p len bytes at @p data must stay valid and
 *  unchanged, and *ref is unset; join exactly once, before any record that
 *  refers to the blob is encoded (the ordering of tf_writer_blob then holds
 *  from join's return). Neither may be called while holding
 *  tf_writer_lock(). begin returns NULL when it did the whole capture
 *  itself (a small blob, sink mode, a failed writer, no memory for the
 *  ticket; bad arguments: *status TF_ERR_ARG): then *status and *ref are
 *  what tf_writer_blob() gives. The ticket belongs to the writer (freed by
 *  join). join @return as tf_writer_blob(). Thread-safe: any number of
 *  tickets may be pending at once, on any threads; a ticket is used by one
 *  thread. The trace holds the same records and blobs as with
 *  tf_writer_blob(). */
typedef struct tf_wticket tf_wticket;
tf_wticket *tf_writer_blob_begin(tf_writer *w, const void *data, size_t len, tf_blobref *ref,
                                 tf_status *status);
tf_status tf_writer_blob_join(tf_writer *w, tf_wticket *t);
/*! tf_writer_blob_open() / tf_writer_blob_avail() : a ticket whose bytes
 *  arrive in order while the caller waits (the recorder: a blocking read
 *  issued as pieces). open is begin without posting any task: it makes
 *  the ticket (waiting for budget) and returns it, or NULL when begin
 *  would have done the capture itself (see above; nothing done then: the
 *  caller captures the bytes another way once they are there). avail says
 *  that the first @p n bytes at @p data are final: it posts the tasks of
 *  the pieces (TF_BLOB_PIECE each, from @p data on) that lie wholly within
 *  them, not posted yet, and returns at once; join posts the rest. The
 *  bytes of a posted piece must stay valid and unchanged until join; those
 *  not yet made available may be written meanwhile (not by the caller's
 *  thread's tasks: none run before join). Join exactly once, as after
 *  begin; the blob and the trace are the same as with tf_writer_blob()
 *  over the final bytes. Same thread rules as begin/join. */
tf_wticket *tf_writer_blob_open(tf_writer *w, const void *data, size_t len, tf_blobref *ref);
void tf_writer_blob_avail(tf_writer *w, tf_wticket *t, size_t n);
/*! tf_writer_blob_ref() : tf_writer_blob() for bytes copied from another
 *  trace, stored under the reference @p ref the records copied with them
 *  use (ref->size must be @p len), without hashing them again: a trace of
 *  an earlier format version may hash differently (FORMAT.md 5.1). The
 *  caller vouches that @p ref is that trace's reference to these bytes.
 *  @return TF_OK, TF_ERR_ARG, or TF_ERR_FAILED. */
tf_status tf_writer_blob_ref(tf_writer *w, const void *data, size_t len, const tf_blobref *ref);

/*! tf_writer_flush() : seals the open record chunk now. When @p wait is
 *  non-zero, returns once everything sealed so far is written to the file
 *  (write(2) done: it survives SIGKILL). Thread-safe. */
tf_status tf_writer_flush(tf_writer *w, int wait);

/*! tf_writer_crash_flush() : for fatal-signal handlers. Async-signal-safe
 *  best effort: seals the open record chunk uncompressed if its mutex can be
 *  taken, and waits up to @p timeout_ms for the background thread to write
 *  what is queued. Never blocks longer; never allocates. */
void tf_writer_crash_flush(tf_writer *w, unsigned timeout_ms);

/*! tf_writer_errmsg() : message for the first error ("" when none). */
const char *tf_writer_errmsg(const tf_writer *w);

typedef struct tf_writer_stats {
    uint64_t records, record_bytes_raw;   /* msgpack bytes before compression */
    uint64_t blob_calls, blob_bytes_in;   /* tf_writer_blob() calls and bytes passed */
    uint64_t blobs_stored, blob_bytes_stored; /* unique blobs and their bytes */
    uint64_t file_bytes;                  /* bytes written to the file so far */
    uint64_t waits;                       /* times a producer waited on the budget */
} tf_writer_stats;
void tf_writer_get_stats(tf_writer *w, tf_writer_stats *out);

/* ------------------------------------------------------------------ reader */

typedef struct tf_reader tf_reader;

typedef struct tf_reader_opts {
    size_t max_chunk;        /* largest raw chunk accepted; 0 = 64 MiB */
    size_t max_memory;       /* arena + tables cap; 0 = 1 GiB */
    int trusted_feed;        /* tf_reader_open_feed() only: the records come from
                              * this process's own writer (sink mode): each is
                              * decoded in one pass, which checks every length
                              * as it goes, instead of the bounds walk, msgpack-c's
                              * unpack and the conversion of its objects */
} tf_reader_opts;

/*! tf_reader_open() : opens @p path and reads the file header (and the ENV
 *  record if it is first). @p opts may be NULL. Reads the index when a
 *  valid trailer is present; never depends on it. */
tf_status tf_reader_open(tf_reader **out, const char *path, const tf_reader_opts *opts);
void tf_reader_close(tf_reader *r);   /* accepts NULL */

/*! tf_reader_open_error() : message of the last failed tf_reader_open() in
 *  the calling thread, e.g. "a.clrr: format version 2.0; this build reads
 *  1.x" ("" after a successful open). Thread-local storage. (Added in 1.0
 *  of this header: a failed open has no reader to ask tf_reader_error.) */
const char *tf_reader_open_error(void);

/*! tf_reader_error() : detailed message of the last error, "" if none. */
const char *tf_reader_error(const tf_reader *r);

/*! tf_reader_env() : the ENV map (recorder version, command line, platforms
 *  and devices), or NULL when the trace has none. Owned by the reader. From
 *  format 1.1 a platform's devices come in a DEVICES record when the
 *  application first reached them: the reader adds them to the map as it
 *  reads them (a platform the application never asked has no "devices"),
 *  so the map is complete once the stream has been read; a map returned
 *  earlier stays valid until the next tf_reader_next() that reads a
 *  DEVICES record, or close. */
const tf_value *tf_reader_env(tf_reader *r);

typedef enum tf_item_type {
    TF_ITEM_CALL = 1,     /* a call (BEGIN + END merged) */
    TF_ITEM_DEVTIME = 2,  /* device timing of an earlier enqueue */
    TF_ITEM_DATA = 3,     /* late data of an earlier call (e.g. non-blocking read) */
    TF_ITEM_NOTE = 4,     /* recorder note (e.g. data not capturable) */
    TF_ITEM_DEVICES = 5,  /* a platform's devices, described when the
                           * application first reached them (format 1.1) */
    TF_ITEM_BEGIN = 6     /* tf_reader_feed() only: a call that has begun
                           * (u.call with its inputs; complete 0, outs NULL) */
} tf_item_type;

typedef struct tf_call {
    uint64_t seq;            /* global call sequence number, from 1 */
    uint64_t tid;            /* recording thread (small integer, from 1) */
    const tf_sig *sig;
    int64_t t_begin, t_end;  /* host CLOCK_MONOTONIC ns; t_end = 0 if !complete */
    const tf_value *args;    /* sig->nparams values: inputs (nil for pure outputs) */
    int complete;            /* 0: the call never returned (crash, kill, hang) */
    tf_value ret;            /* return value (nil when !complete or void) */
    const tf_value *outs;    /* sig->nparams values: outputs (nil when none); NULL if !complete */
    const tf_value *pre;     /* map of extra data recorded before the call, or NULL */
    const tf_value *post;    /* map of extra data recorded after the call, or NULL */
} tf_call;

typedef struct tf_devtime {
    uint64_t seq;            /* the enqueue call */
    uint64_t queued, submit, start, end;  /* device ns (CL_PROFILING_COMMAND_*) */
} tf_devtime;

typedef struct tf_data {
    uint64_t seq;            /* the call the data belongs to */
    const char *key;         /* NUL-terminated, e.g. "read" */
    tf_value value;
} tf_data;

typedef struct tf_note {
    uint64_t seq;            /* 0 when not tied to a call */
    uint64_t object;         /* object id, 0 when none */
    const char *text;        /* NUL-terminated */
} tf_note;

/* The devices of a platform (format 1.1). The reader also adds them to the
 * environment: tf_reader_env() then lists them under that platform. */
typedef struct tf_devices {
    uint64_t platform;       /* the platform's id (ENV "platforms") */
    const tf_value *devices; /* array of device maps, as in ENV */
} tf_devices;

typedef struct tf_item {
    tf_item_type type;
    union { tf_call call; tf_devtime devtime; tf_data data; tf_note note; tf_devices devices; } u;
} tf_item;

/*! tf_reader_next() : next item in file order; calls are yielded when their
 *  END record is read (completion order), and calls that never completed
 *  at end of file. *item and everything it points to live in the reader's
 *  arena until the next call. @return TF_OK, TF_END, or an error (then
 *  tf_reader_error() says what and where). A truncated final chunk is not
 *  an error: it ends the stream and tf_reader_get_info()->truncated is set. */
tf_status tf_reader_next(tf_reader *r, tf_item *item);

/*! tf_reader_open_feed() : a reader with no file, fed records one by one
 *  by tf_reader_feed() (from a writer in sink mode, in the same process).
 *  @p opts may be NULL; max_memory bounds it as for a file. */
tf_status tf_reader_open_feed(tf_reader **out, const tf_reader_opts *opts);
/*! tf_reader_feed() : decodes the first record (FORMAT.md, "Records") of
 *  the @p len bytes at @p rec and sets *used to its length (a writer's
 *  sink may hand over several records at once). Items are those of
 *  tf_reader_next(), plus TF_ITEM_BEGIN when a call begins (its inputs;
 *  the merged call follows as TF_ITEM_CALL when its END is fed). *item
 *  lives until the next feed. @return TF_OK with *item set, TF_END when
 *  the record yields no item (SIG, ENV), or an error (tf_reader_error()). */
tf_status tf_reader_feed(tf_reader *r, const void *rec, size_t len, size_t *used, tf_item *item);

/*! tf_reader_rewind() : restart iteration at the first record. */
tf_status tf_reader_rewind(tf_reader *r);

/*! tf_reader_sig() : signature @p id, or NULL. Valid until close. */
const tf_sig *tf_reader_sig(tf_reader *r, uint32_t id);

/*! tf_reader_call_open() : 1 when the BEGIN of call @p seq has been read
 *  and its END not yet, i.e. a DATA or DEVTIME item of @p seq came before
 *  the call itself (FORMAT.md, "Record order"); else 0. */
int tf_reader_call_open(const tf_reader *r, uint64_t seq);

/*! tf_reader_blob() : copies @p len bytes from offset @p off of blob @p ref
 *  into @p dst (caller-owned, at least len bytes). Random access: uses the
 *  index, or a scan of chunk headers (once) when there is none.
 *  @return TF_OK, TF_ERR_NOT_FOUND if the blob (or that piece) is absent,
 *  TF_ERR_ARG if off+len > ref->size, or a read error. */
tf_status tf_reader_blob(tf_reader *r, const tf_blobref *ref, uint64_t off,
                         void *dst, size_t len);

typedef struct tf_reader_info {
    uint16_t major, minor;
    uint64_t file_bytes;
    uint64_t record_chunks, blob_chunks;
    uint64_t record_bytes_raw, record_bytes_stored;
    uint64_t blobs, blob_bytes_raw, blob_bytes_stored;  /* unique blobs */
    uint64_t blob_chunks_shuffled;   /* BLOB chunks stored byte-shuffled (codec 2, FORMAT.md 3.2) */
    uint32_t features_required;   /* the file's feature bits (FORMAT.md 2.1; 0 before 2.1):
                                   * all known to this build, else the open failed */
    uint32_t features_optional;   /* may hold bits this build does not know */
    int has_index;            /* a valid index/trailer was found */
    int truncated;            /* the file ends in an incomplete chunk */
    uint64_t valid_bytes;     /* bytes up to the end of the last whole chunk */
} tf_reader_info;

/*! tf_reader_get_info() : container-level facts. Blob and chunk totals are
 *  complete once the index was read or the headers scanned (tf_reader_blob
 *  or tf_reader_scan does that). */
const tf_reader_info *tf_reader_get_info(tf_reader *r);
/*! tf_reader_scan() : scans every chunk header (no decompression) so that
 *  tf_reader_get_info() totals are complete. */
tf_status tf_reader_scan(tf_reader *r);

/* ------------------------------------------------ recorded headers (FORMAT.md 11.1) */
/* The include rules shared by the recorder (which records the headers a
 * build reads), the replayer and the analyzer (which inline them into the
 * source, reading no file of their machine). */
#define TF_INC_NAME_MAX 1024          /* bytes of a header name, with its NUL */
#define TF_INC_OUT_MAX (32u << 20)    /* bytes of an inlined text */
#define TF_INC_DEPTH 32               /* headers nested in headers */
#define TF_INC_DIRS_MAX 64            /* -I directories used */

/*! tf_inc_join() : @p dir joined with @p name ("" dir or absolute name: the
 *  name itself), normalized lexically ("." segments dropped, "seg/.."
 *  collapsed, "/.." is "/"), into @p out (TF_INC_NAME_MAX bytes, caller's).
 *  Returns 1, or 0 when the result is too long or empty. Pure: thread-safe. */
int tf_inc_join(const char *dir, const char *name, char *out);

/*! tf_inc_bad_option() : the first build option of @p opts (NULL: none)
 *  that names a file the driver would read (-include, --include, -imacros,
 *  --imacros, @file), as a static string, or NULL. Pure: thread-safe. */
const char *tf_inc_bad_option(const char *opts);

/*! tf_inc_dirs() : the -I directories of the build options in @p buf (a
 *  writable copy, split in place: quotes removed), in order, into @p dirs
 *  (pointers into @p buf, at most @p max). Returns how many. Thread-safe. */
int tf_inc_dirs(char *buf, const char **dirs, int max);

/*! tf_inc_fetch_fn : returns the bytes of a recorded header's value @p v
 *  (a value of the headers map): 1 with *data (malloc'd, freed by the
 *  inliner; may be NULL for none) and *len set; 0: the header is empty;
 *  negative: an error code of the caller's, passed through (tf_inc_inline's
 *  *fetch_err), which stops the inlining. */
typedef int (*tf_inc_fetch_fn)(void *ctx, const tf_value *v, void **data, size_t *len);

typedef enum tf_inc_status {
    TF_INC_OK = 0,
    TF_INC_NOMEM,                     /* out of memory */
    TF_INC_LIMIT,                     /* the text would be over TF_INC_OUT_MAX */
    TF_INC_FETCH                      /* the fetch callback failed: *fetch_err */
} tf_inc_status;

/*! tf_inc_inline() : @p src (NUL-terminated) with every include directive
 *  replaced by the recorded header it resolves to (a quoted name beside the
 *  including file, then in each -I directory of @p opts; an angled one in
 *  the -I directories), between #line directives, recursively, with
 *  #pragma once honoured; a directive that resolves to none becomes an
 *  `#error clrr: ...` line. Trigraphs, backslash-newline splices and %: are
 *  undone before directives are looked for. Headers are the entries of
 *  @p headers (a TF_MAP name -> value; anything else: none), whose bytes
 *  @p fetch returns, then the @p ne input headers @p ename[i] (a name, or
 *  NULL) with text @p etext[i] (NUL-terminated, or NULL: not a header).
 *  On TF_INC_OK, *out is the inlined text (malloc'd, the caller frees it;
 *  *outlen its length) when an include directive was found, else NULL;
 *  *found (may be NULL) says whether one was. On error *out is NULL, and
 *  for TF_INC_FETCH *fetch_err (may be NULL) holds the callback's code.
 *  Thread-safe if @p fetch is. */
tf_inc_status tf_inc_inline(const char *src, const char *opts, const tf_value *headers,
                            const char *const *ename, const char *const *etext, uint32_t ne,
                            tf_inc_fetch_fn fetch, void *ctx, char **out, size_t *outlen, int *found,
                            int *fetch_err);

/* ------------------------------------------------ device specs (--device) */
/* Device types as OpenCL numbers them (CL_DEVICE_TYPE_*), the values the
 * trace records (FORMAT.md, DEVICES "type"). */
#define TF_DEVTYPE_CPU         (1u << 1)
#define TF_DEVTYPE_GPU         (1u << 2)
#define TF_DEVTYPE_ACCELERATOR (1u << 3)
#define TF_DEVTYPE_CUSTOM      (1u << 4)

/* One device as a spec is matched against it. */
typedef struct tf_devspec_dev {
    const char *name;         /* the device's name (NULL: none) */
    const char *pname;        /* its platform's name (NULL: none) */
    uint64_t type;            /* TF_DEVTYPE_* bits */
} tf_devspec_dev;

/*! tf_devspec_pick() : the index in @p devs (@p n of them, in `clrr
 *  devices` order: platforms in the loader's order, each one's devices of
 *  type ALL) of the device @p spec names: an index; a type (cpu, gpu,
 *  accelerator, custom: the first of that type); a type and a number
 *  ("gpu1": the second GPU); else the first whose device or platform name
 *  holds @p spec (case-insensitive). Returns the index, or -1 with
 *  "--device SPEC: why" in @p err (capacity @p cap). Pure: thread-safe. */
int tf_devspec_pick(const tf_devspec_dev *devs, unsigned n, const char *spec, char *err, size_t cap);

/* ------------------------------------------------ a growing trace (tf_grow.c) */
/* What the complete chunks of a trace being written hold so far, read
 * from their headers (no decompression): zero it, then call
 * tf_grow_scan() on the same path as often as wanted. */
typedef struct tf_grow {
    uint64_t off;       /* next chunk header to read (0: the file header) */
    uint64_t raw;       /* payload bytes of RECORD and BLOB chunks, raw */
    uint64_t stored;    /* the same, as stored (compressed) */
    uint64_t chunks;    /* complete chunks seen */
    uint64_t ino;       /* the file's inode: another file at the path starts again */
    int bad;            /* not a trace, or a damaged header: no more scans */
} tf_grow;

/*! tf_grow_scan() : adds to @p g the chunks of the file at @p path that
 *  were completed since the last call, reading only their headers (each
 *  checked: FORMAT.md 3.1); a chunk being written, or a file not there yet
 *  or shorter than its header, is left for the next call; another file at
 *  @p path (another inode, or shorter than what was read) starts again. The ratio of
 *  the recording so far is raw / stored. Opens the file read-only and
 *  closes it; never writes. Returns 0, or -1 once the file is not a
 *  trace or a header is damaged (g->bad; later calls return -1 at once).
 *  Thread-safe for distinct @p g. */
int tf_grow_scan(tf_grow *g, const char *path);

/* ------------------------------------------------ UTF-8 (tf_utf8.c) */
/*! tf_utf8_seq() : the length (1-4) of the valid UTF-8 sequence at @p s
 *  (at most @p n bytes), 0 when it is not one (bad lead or continuation
 *  byte, overlong form, surrogate, past U+10FFFF, cut short). Pure. */
size_t tf_utf8_seq(const char *s, size_t n);
/*! tf_utf8_valid() : the length of the longest valid UTF-8 prefix of the
 *  @p len bytes at @p s (@p len: all of them are valid). Pure. */
size_t tf_utf8_valid(const char *s, size_t len);
/*! tf_utf8_fix() : writes the @p len bytes at @p s to @p dst with each
 *  byte that is not part of a valid UTF-8 sequence replaced by U+FFFD
 *  (EF BF BD); @p dst (caller's) holds at least 3 * @p len bytes; no NUL
 *  is added. Returns the bytes written. Pure: thread-safe. */
size_t tf_utf8_fix(char *dst, const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_TF_H */
