/* tf_wblob.c — the writer's blob store: content hashes (FORMAT.md 5.1:
 * XXH3-128, by 1 MiB leaves above 1 MiB), an
 * in-memory set of the blobs already stored (24 bytes per slot, open
 * addressing, at most half full), and pieces of at most TF_BLOB_PIECE bytes
 * queued as BLOB jobs.
 *
 * Ordering: the pieces of a blob are queued before tf_writer_blob()
 * returns, and a record chunk is queued only when sealed, after the records
 * in it were encoded. The queue is written in order, so a blob stored
 * before a record is encoded precedes that record's chunk in the file.
 * Before a blob of several pieces is hashed, or any blob once more than
 * TF_SEAL_BEHIND bytes of blobs came since the last seal, the open record
 * chunk is sealed: its records refer to no piece queued after them, and they would
 * otherwise wait behind every one of those pieces (records must not wait
 * behind blob data longer than the flush interval: a SIGKILL during a big
 * first upload then still leaves the calls made before it).
 * A blob enters the set only once all its pieces are queued; a concurrent
 * call with the same bytes meanwhile stores it again (harmless: readers use
 * the first copy), never returns before the bytes are queued.
 *
 * Capture: the bytes are copied into jobs (the caller may reuse its buffer
 * on return) a window of up to TF_WIN_PIECES pieces at a time, the budget
 * for a whole window reserved first. A piece is a hash leaf. The work on a
 * window of several pieces is posted as tasks that idle workers take before
 * any compression job (and between two slices of one); the caller takes
 * tasks one at a time too, then waits for those a worker is doing. When
 * the last blob of several pieces was new, a blob that fits one window is
 * captured speculatively: each task copies its piece and hashes the copy
 * as a leaf (one pass over the application's memory, in parallel), and the
 * copies are dropped if the root shows the blob is stored already.
 * Otherwise (repeated data, or a blob of several windows) the leaves are
 * hashed first, by tasks, and nothing is copied for a blob already stored.
 * On an H200 host's data-heavy benchmark (16 CPUs) this is what brings the
 * recording closer to plain speed, with varying and with repeated data
 * (bench/results/nvidia-h200-recorder.txt).
 *
 * In two halves (tf_writer_blob_begin, tf_writer_blob_join): begin posts
 * the first window's tasks (copy + hash when speculative, else the leaves'
 * hashes) and returns; the workers run them while the caller calls the
 * driver (the recorder, for the host memory a call reads: the 40 captures
 * of 16 MiB a run of `micro data 20 random` each waited 0.7-0.9 ms before
 * the driver's call started, bench/results/nvidia-h200-recorder-random.md);
 * join does what tf_writer_blob would have done after those tasks. The
 * pieces are queued at join, so the ordering above holds from join on.
 * A ticket may also be opened before its bytes are there and its tasks
 * posted as they arrive (tf_writer_blob_open, tf_writer_blob_avail: the
 * recorder's pipelined blocking reads, whose read-back comes in pieces of
 * 4 MiB while the driver reads the rest); the blob is the same one. */
#include "trace-format/tf_int.h"

#include <errno.h>
#include <stdlib.h>

#define XXH_STATIC_LINKING_ONLY   /* XXH3_state_t on the stack */
#include <xxhash.h>

#define TF_SET_MIN 1024
#define TF_SEAL_BEHIND ((size_t)4 << 20)   /* blob bytes a record chunk may wait behind */

#if defined(__x86_64__)
static _Atomic int tf_has_avx2 = -1;      /* -1 until asked */
#endif

void tf_hash_leaf(const void *data, size_t len, uint8_t out[16])
{
    XXH128_canonical_t c;

#if defined(__x86_64__)
    int avx2 = atomic_load_explicit(&tf_has_avx2, memory_order_relaxed);
    if (avx2 < 0) {
        __builtin_cpu_init();
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
        atomic_store_explicit(&tf_has_avx2, avx2, memory_order_relaxed);
    }
    if (avx2) {
        tf_hash_avx2(data, len, out);
        return;
    }
#endif
    XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
    memcpy(out, c.digest, 16);
}

/* The root of a blob of more than one leaf: XXH3-128, seeded with the
 * blob's length, of its leaves' digests in order (FORMAT.md 5.1). */
static void tf_hroot_begin(XXH3_state_t *st, uint64_t len)
{
    memset(st, 0, sizeof *st);   /* XXH3_INITSTATE: a state on the stack, reset with a seed */
    (void)XXH3_128bits_reset_withSeed(st, len);
}

static void tf_hroot_end(XXH3_state_t *st, tf_blobref *out)
{
    XXH128_canonical_t c;

    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
    memcpy(out->hash, c.digest, 16);
}

void tf_hash(const void *data, size_t len, tf_blobref *out)
{
    const uint8_t *p = data;
    XXH3_state_t st;
    uint8_t d[16];

    out->size = len;
    if (len <= TF_HASH_LEAF) {
        tf_hash_leaf(data, len, out->hash);
        return;
    }
    tf_hroot_begin(&st, len);
    for (size_t off = 0; off < len; off += TF_HASH_LEAF) {
        tf_hash_leaf(p + off, len - off < TF_HASH_LEAF ? len - off : TF_HASH_LEAF, d);
        (void)XXH3_128bits_update(&st, d, 16);
    }
    tf_hroot_end(&st, out);
}

void tf_wset_free(tf_writer *w)
{
    free(w->set);
    w->set = NULL;
    w->set_cap = w->set_n = 0;
}

/* Slot of @p ref in @p tab (capacity a power of two): its own, or the empty
 * one where it would go. */
static tf_bent *tf_wset_slot(tf_bent *tab, size_t cap, const uint8_t hash[16], uint64_t size1)
{
    size_t i = (size_t)tf_get64(hash) & (cap - 1);

    for (;; i = (i + 1) & (cap - 1)) {
        tf_bent *b = &tab[i];
        if (b->size1 == 0 || (b->size1 == size1 && memcmp(b->hash, hash, 16) == 0))
            return b;
    }
}

static int tf_wset_has(tf_writer *w, const tf_blobref *ref)
{
    return w->set_cap && tf_wset_slot(w->set, w->set_cap, ref->hash, ref->size + 1)->size1 != 0;
}

/* Adds @p ref (bmu held). @return 1 if added, 0 if present or no memory
 * (then the blob is merely not deduplicated later). */
static int tf_wset_add(tf_writer *w, const tf_blobref *ref)
{
    tf_bent *b;

    if ((w->set_n + 1) * 2 > w->set_cap) {
        size_t cap = w->set_cap ? w->set_cap * 2 : TF_SET_MIN, i;
        tf_bent *tab = calloc(cap, sizeof(*tab));
        if (tab == NULL)
            return 0;
        for (i = 0; i < w->set_cap; i++)
            if (w->set[i].size1)
                *tf_wset_slot(tab, cap, w->set[i].hash, w->set[i].size1) = w->set[i];
        free(w->set);
        w->set = tab;
        w->set_cap = cap;
    }
    b = tf_wset_slot(w->set, w->set_cap, ref->hash, ref->size + 1);
    if (b->size1)
        return 0;
    memcpy(b->hash, ref->hash, 16);
    b->size1 = ref->size + 1;
    w->set_n++;
    return 1;
}

/* Capture --------------------------------------------------------------- */

_Static_assert(TF_BLOB_PIECE == TF_HASH_LEAF, "a blob's pieces are its hash leaves");

/* Tasks for the workers: copies of pieces into jobs, hashes of leaves, or
 * both at once (the leaf is hashed from the copy, still in cache). */
static void tf_wtask_do(tf_wcopy *t)
{
    const uint8_t *src = t->src;
    size_t len = t->len;

    if (t->j) {
        memcpy(TF_JOB_PAYLOAD(t->j), t->src, t->j->len);
        src = TF_JOB_PAYLOAD(t->j);
        len = t->j->len;
    }
    if (t->digest)
        tf_hash_leaf(src, len, t->digest);
}

/* Posts @p n tasks for idle workers to take before any compression job,
 * counted in *pending (0 before the first post; added to here, under qmu,
 * which guards it from then on: a ticket posts its tasks in parts). */
static void tf_wtasks_post(tf_writer *w, tf_wcopy *tasks, unsigned n, unsigned *pending)
{
    if (n == 0)
        return;
    pthread_mutex_lock(&w->qmu);
    *pending += n;
    for (unsigned i = 0; i < n; i++) {
        tf_wcopy *t = &tasks[i];
        t->next = NULL;
        t->pending = pending;
        if (w->copies_tail)
            w->copies_tail->next = t;
        else
            w->copies = t;
        w->copies_tail = t;
    }
    atomic_fetch_add(&w->ncopies, n);
    pthread_cond_broadcast(&w->qcv);
    pthread_mutex_unlock(&w->qmu);
}

/* The poster of the tasks counted in *pending takes those no worker took
 * yet one at a time, as a worker does, so that workers waking up meanwhile
 * take the others (taking all at once would leave the caller doing them
 * alone); then it waits for those a worker is doing. */
static void tf_wtasks_finish(tf_writer *w, unsigned *pending)
{
    pthread_mutex_lock(&w->qmu);
    for (;;) {
        tf_wcopy **pp = &w->copies, *t, *prev = NULL;
        while ((t = *pp) != NULL && t->pending != pending) {
            prev = t;
            pp = &t->next;
        }
        if (t == NULL)
            break;
        *pp = t->next;
        if (w->copies_tail == t)
            w->copies_tail = prev;
        atomic_fetch_sub(&w->ncopies, 1);
        pthread_mutex_unlock(&w->qmu);
        tf_wtask_do(t);
        pthread_mutex_lock(&w->qmu);
        (*pending)--;
    }
    while (*pending > 0)
        pthread_cond_wait(&w->copy_cv, &w->qmu);
    pthread_mutex_unlock(&w->qmu);
}

/* Runs @p n tasks: one, the caller does; several are posted and the
 * caller takes part (tf_wtasks_finish). */
static void tf_wtasks_run(tf_writer *w, tf_wcopy *tasks, unsigned n)
{
    unsigned pending = 0;   /* tasks not done (qmu) */

    if (n == 1) {
        tf_wtask_do(&tasks[0]);
        return;
    }
    tf_wtasks_post(w, tasks, n, &pending);
    tf_wtasks_finish(w, &pending);
}

void tf_wcopy_run_locked(tf_writer *w)
{
    tf_wcopy *t = w->copies;

    w->copies = t->next;
    if (w->copies == NULL)
        w->copies_tail = NULL;
    atomic_fetch_sub(&w->ncopies, 1);
    pthread_mutex_unlock(&w->qmu);
    tf_wtask_do(t);
    pthread_mutex_lock(&w->qmu);
    if (--*t->pending == 0)                /* t's frame may be gone once qmu is released */
        pthread_cond_broadcast(&w->copy_cv);
}

void tf_wcopy_serve(tf_writer *w)
{
    pthread_mutex_lock(&w->qmu);
    while (w->copies)
        tf_wcopy_run_locked(w);
    pthread_mutex_unlock(&w->qmu);
}

/* Hashes the leaves of the @p len bytes at @p src from @p off (a multiple
 * of TF_HASH_LEAF) on into the root's state @p st, by the workers and the
 * caller together, a window of TF_WIN_PIECES at a time. */
static void tf_whash_leaves(tf_writer *w, const uint8_t *src, size_t len, size_t off, XXH3_state_t *st)
{
    tf_wcopy tasks[TF_WIN_PIECES];
    uint8_t dig[TF_WIN_PIECES][16];

    while (off < len) {
        unsigned n = 0;
        for (; n < TF_WIN_PIECES && off < len; n++, off += TF_HASH_LEAF) {
            tasks[n].src = src + off;
            tasks[n].j = NULL;
            tasks[n].len = len - off < TF_HASH_LEAF ? len - off : TF_HASH_LEAF;
            tasks[n].digest = dig[n];
        }
        tf_wtasks_run(w, tasks, n);
        (void)XXH3_128bits_update(st, dig, (size_t)n * 16);
    }
}

/* The hash of a blob of several leaves, the leaves hashed by the workers
 * and the caller together (tf_whash_leaves). */
static void tf_whash_par(tf_writer *w, const uint8_t *src, size_t len, tf_blobref *ref)
{
    XXH3_state_t st;

    if (len <= TF_HASH_LEAF) {
        tf_hash(src, len, ref);
        return;
    }
    ref->size = len;
    tf_hroot_begin(&st, len);
    tf_whash_leaves(w, src, len, 0, &st);
    tf_hroot_end(&st, ref);
}

/* A window of at most TF_WIN_PIECES pieces of a blob being captured: the
 * budget reserved for them, their jobs, and a task per piece. Lives in the
 * caller's frame. */
typedef struct tf_wcap {
    tf_job *jobs[TF_WIN_PIECES];
    tf_wcopy tasks[TF_WIN_PIECES];
    uint8_t dig[TF_WIN_PIECES][16];   /* with @p hash: the leaves' digests */
    unsigned n;
    size_t cost;
    int held;                         /* a ticket's: cost counted in w->held too */
} tf_wcap;

/* Gives back the budget and the jobs of @p c (not queued). */
static void tf_wcap_release(tf_writer *w, tf_wcap *c)
{
    pthread_mutex_lock(&w->qmu);
    atomic_fetch_sub(&w->f.queued, c->cost);
    if (c->held)
        atomic_fetch_sub(&w->held, c->cost);
    c->held = 0;
    for (unsigned i = 0; i < c->n; i++)
        tf_job_put_locked(w, c->jobs[i]);
    c->n = 0;
    pthread_cond_broadcast(&w->space_cv);
    pthread_mutex_unlock(&w->qmu);
}

/* Starts capturing @p len bytes at @p src, the part at @p off of a blob of
 * @p blob_size bytes (at most win_pieces pieces): waits for budget, gets
 * the jobs, and makes a task per piece that copies it (tf_wtasks_run runs
 * them), with @p hash also hashing it as a leaf into c->dig; with @p held
 * (a ticket's window) the budget is counted in w->held too until the pieces
 * are queued or given back. @return TF_OK, or TF_ERR_FAILED (nothing held). */
static tf_status tf_wcap_begin(tf_writer *w, tf_wcap *c, const uint8_t *src, uint64_t off, size_t len,
                               uint64_t blob_size, int hash, int held)
{
    unsigned n = (unsigned)((len + TF_BLOB_PIECE - 1) / TF_BLOB_PIECE);

    c->n = 0;
    c->held = 0;
    c->cost = len + (size_t)n * TF_HDR_ROOM;
    pthread_mutex_lock(&w->qmu);
    tf_wwait_space_locked(w, c->cost);
    if (atomic_load(&w->f.failed)) {
        pthread_mutex_unlock(&w->qmu);
        return TF_ERR_FAILED;
    }
    atomic_fetch_add(&w->f.queued, c->cost);
    if (held)
        atomic_fetch_add(&w->held, c->cost);
    c->held = held;
    pthread_mutex_unlock(&w->qmu);

    for (unsigned i = 0; i < n; i++) {
        size_t pn = len - (size_t)i * TF_BLOB_PIECE < TF_BLOB_PIECE ? len - (size_t)i * TF_BLOB_PIECE
                                                                    : TF_BLOB_PIECE;
        tf_job *j = tf_job_get(w, pn);
        if (j == NULL) {
            tf_wcap_release(w, c);
            tf_wfail(w, ENOMEM, "copying a blob");
            return TF_ERR_FAILED;
        }
        j->type = TF_CHUNK_BLOB;
        j->len = pn;
        j->cost = pn + TF_HDR_ROOM;
        j->blob_size = blob_size;
        j->piece_off = off + (uint64_t)i * TF_BLOB_PIECE;
        c->jobs[c->n++] = j;
        c->tasks[i].src = src + (size_t)i * TF_BLOB_PIECE;
        c->tasks[i].j = j;
        c->tasks[i].len = pn;
        c->tasks[i].digest = hash ? c->dig[i] : NULL;
    }
    return TF_OK;
}

/* Queues the pieces of @p c, in order, as pieces of @p ref. @return TF_OK,
 * or TF_ERR_FAILED (then they are dropped). */
static tf_status tf_wcap_push(tf_writer *w, tf_wcap *c, const tf_blobref *ref)
{
    for (unsigned i = 0; i < c->n; i++)
        memcpy(c->jobs[i]->hash, ref->hash, 16);
    pthread_mutex_lock(&w->qmu);
    if (atomic_load(&w->f.failed)) {
        pthread_mutex_unlock(&w->qmu);
        tf_wcap_release(w, c);
        return TF_ERR_FAILED;
    }
    for (unsigned i = 0; i < c->n; i++)
        tf_wq_push_locked(w, c->jobs[i]);
    c->n = 0;
    if (c->held)
        atomic_fetch_sub(&w->held, c->cost);
    c->held = 0;
    pthread_mutex_unlock(&w->qmu);
    return TF_OK;
}

/* Hashes first (workers hash leaves too; not with @p given, the caller's
 * *ref), then captures the pieces window by window (workers help with the
 * copies) unless the blob is already stored. */
static tf_status tf_wblob_plain(tf_writer *w, const uint8_t *src, size_t len, tf_blobref *ref, int *have,
                                int given)
{
    size_t win = (size_t)w->win_pieces * TF_BLOB_PIECE, off, n;
    tf_status status;
    tf_wcap c;

    if (!given)
        tf_whash_par(w, src, len, ref);
    pthread_mutex_lock(&w->bmu);
    w->st_blob_calls++;
    w->st_blob_in += len;
    *have = len == 0 || tf_wset_has(w, ref);
    pthread_mutex_unlock(&w->bmu);
    if (atomic_load(&w->f.failed))
        return TF_ERR_FAILED;
    if (*have)
        return TF_OK;
    for (off = 0; off < len; off += n) {
        n = len - off < win ? len - off : win;
        if ((status = tf_wcap_begin(w, &c, src + off, off, n, len, 0, 0)) != TF_OK)
            return status;
        tf_wtasks_run(w, c.tasks, c.n);
        if ((status = tf_wcap_push(w, &c, ref)) != TF_OK)
            return status;
    }
    return TF_OK;
}

/* Speculative capture of a blob of one window (several pieces), when the
 * last one was new: each piece is copied and hashed as a leaf in one task,
 * by the workers and the caller, one pass over the data in all; the copies
 * are dropped if the blob turns out to be stored already. */
static tf_status tf_wblob_spec(tf_writer *w, const uint8_t *src, size_t len, tf_blobref *ref, int *have)
{
    tf_wcap c;
    XXH3_state_t st;

    if (tf_wcap_begin(w, &c, src, 0, len, len, 1, 0) != TF_OK)
        return tf_wblob_plain(w, src, len, ref, have, 0);   /* failed: sets ref, counts */
    tf_wtasks_run(w, c.tasks, c.n);
    ref->size = len;
    tf_hroot_begin(&st, len);
    (void)XXH3_128bits_update(&st, c.dig, (size_t)c.n * 16);
    tf_hroot_end(&st, ref);
    pthread_mutex_lock(&w->bmu);
    w->st_blob_calls++;
    w->st_blob_in += len;
    *have = tf_wset_has(w, ref);
    pthread_mutex_unlock(&w->bmu);
    if (*have || atomic_load(&w->f.failed)) {
        tf_wcap_release(w, &c);
        return atomic_load(&w->f.failed) ? TF_ERR_FAILED : TF_OK;
    }
    return tf_wcap_push(w, &c, ref);
}

/* Before a blob of several pieces, or any blob once more than
 * TF_SEAL_BEHIND bytes of blobs came since the last seal: the records
 * encoded so far go first.
 * None refers to this blob's pieces, and sealed later they would wait
 * behind all of them, its hashing included (a kill during a big first
 * upload left no call, not even the ENV record). */
static void tf_wseal_before(tf_writer *w, size_t len)
{
    /* (counted by the producers, not from the queue: the file stays the
       same whatever the number of workers) */
    if (len > TF_BLOB_PIECE || atomic_fetch_add(&w->blob_unsealed, len) + len > TF_SEAL_BEHIND) {
        tf_rlock_lock(&w->f.rmu);
        tf_wseal_locked(w);
        tf_rlock_unlock(&w->f.rmu);
    }
}

/* Enters a stored blob in the set. @return TF_OK. */
static tf_status tf_wblob_added(tf_writer *w, const tf_blobref *ref)
{
    pthread_mutex_lock(&w->bmu);
    if (tf_wset_add(w, ref)) {
        w->st_blobs++;
        w->st_blob_stored += ref->size;
    }
    pthread_mutex_unlock(&w->bmu);
    return TF_OK;
}

tf_status tf_writer_blob(tf_writer *w, const void *data, size_t len, tf_blobref *ref)
{
    tf_status status;
    int have = 0, multi = len > TF_BLOB_PIECE;

    if (w == NULL || ref == NULL || (data == NULL && len > 0))
        return TF_ERR_ARG;
    if (w->sink) {   /* sink mode: the hash is all a reader of the records gets */
        tf_hash(data, len, ref);
        pthread_mutex_lock(&w->bmu);
        w->st_blob_calls++;
        w->st_blob_in += len;
        pthread_mutex_unlock(&w->bmu);
        return TF_OK;
    }
    tf_wseal_before(w, len);
    if (multi && len <= (size_t)w->win_pieces * TF_BLOB_PIECE && atomic_load(&w->blob_spec) &&
        !atomic_load(&w->f.failed))
        status = tf_wblob_spec(w, data, len, ref, &have);
    else
        status = tf_wblob_plain(w, data, len, ref, &have, 0);
    if (multi)
        atomic_store(&w->blob_spec, !have);
    if (status != TF_OK || have)
        return status;
    return tf_wblob_added(w, ref);
}

tf_status tf_writer_blob_ref(tf_writer *w, const void *data, size_t len, const tf_blobref *ref)
{
    tf_status status;
    tf_blobref r;
    int have = 0;

    if (w == NULL || ref == NULL || ref->size != len || (data == NULL && len > 0))
        return TF_ERR_ARG;
    r = *ref;
    if (w->sink) {
        pthread_mutex_lock(&w->bmu);
        w->st_blob_calls++;
        w->st_blob_in += len;
        pthread_mutex_unlock(&w->bmu);
        return TF_OK;
    }
    tf_wseal_before(w, len);
    status = tf_wblob_plain(w, data, len, &r, &have, 1);
    if (status != TF_OK || have)
        return status;
    return tf_wblob_added(w, &r);
}

/* Capture in two halves (tf_writer_blob_begin, tf_writer_blob_join) ------ */

/* A blob whose tasks are posted while the caller does something else (the
 * recorder: the driver's call). With spec, c holds the jobs and each task
 * copies and hashes its piece (tf_wblob_spec's capture); without, the
 * tasks hash the leaves of the first TF_WIN_PIECES MiB into c.dig, the
 * rest is hashed and the blob copied at join (tf_wblob_plain's, given the
 * hash). */
struct tf_wticket {
    const uint8_t *src;
    size_t len;
    tf_blobref *ref;
    int spec;
    unsigned ntasks;             /* made (c.tasks[0..ntasks), in the order of their bytes) */
    unsigned nposted;            /* posted so far (tf_writer_blob_avail) */
    unsigned pending;            /* posted tasks not done (qmu) */
    tf_wcap c;
};

tf_wticket *tf_writer_blob_open(tf_writer *w, const void *data, size_t len, tf_blobref *ref)
{
    tf_wticket *t;

    if (w == NULL || ref == NULL || data == NULL || len <= TF_BLOB_PIECE || w->sink ||
        atomic_load(&w->f.failed) || (t = malloc(sizeof *t)) == NULL)
        return NULL;
    tf_wseal_before(w, len);
    t->src = data;
    t->len = len;
    t->ref = ref;
    t->spec = len <= (size_t)w->win_pieces * TF_BLOB_PIECE && atomic_load(&w->blob_spec) &&
              tf_wcap_begin(w, &t->c, data, 0, len, len, 1, 1) == TF_OK;
    if (t->spec) {
        t->ntasks = t->c.n;
    } else {
        size_t off = 0;
        unsigned n = 0;
        for (; n < TF_WIN_PIECES && off < len; n++, off += TF_HASH_LEAF) {
            t->c.tasks[n].src = t->src + off;
            t->c.tasks[n].j = NULL;
            t->c.tasks[n].len = len - off < TF_HASH_LEAF ? len - off : TF_HASH_LEAF;
            t->c.tasks[n].digest = t->c.dig[n];
        }
        t->c.n = 0;   /* no jobs */
        t->c.held = 0;
        t->ntasks = n;
    }
    t->nposted = 0;
    t->pending = 0;
    return t;
}

void tf_writer_blob_avail(tf_writer *w, tf_wticket *t, size_t n)
{
    unsigned k = t->nposted;

    while (k < t->ntasks &&
           (n >= t->len || (size_t)(t->c.tasks[k].src - t->src) + t->c.tasks[k].len <= n))
        k++;
    tf_wtasks_post(w, t->c.tasks + t->nposted, k - t->nposted, &t->pending);
    t->nposted = k;
}

tf_wticket *tf_writer_blob_begin(tf_writer *w, const void *data, size_t len, tf_blobref *ref,
                                 tf_status *status)
{
    tf_wticket *t = tf_writer_blob_open(w, data, len, ref);

    if (t == NULL) {
        *status = tf_writer_blob(w, data, len, ref);
        return NULL;
    }
    tf_writer_blob_avail(w, t, len);
    *status = TF_OK;
    return t;
}

tf_status tf_writer_blob_join(tf_writer *w, tf_wticket *t)
{
    tf_blobref *ref = t->ref;
    tf_status status;
    XXH3_state_t st;
    int have = 0;

    tf_writer_blob_avail(w, t, t->len);   /* what is not posted yet */
    tf_wtasks_finish(w, &t->pending);
    ref->size = t->len;
    tf_hroot_begin(&st, t->len);
    (void)XXH3_128bits_update(&st, t->c.dig, (size_t)t->ntasks * 16);
    if (t->spec) {
        tf_hroot_end(&st, ref);
        pthread_mutex_lock(&w->bmu);
        w->st_blob_calls++;
        w->st_blob_in += t->len;
        have = tf_wset_has(w, ref);
        pthread_mutex_unlock(&w->bmu);
        if (have || atomic_load(&w->f.failed)) {
            tf_wcap_release(w, &t->c);
            status = atomic_load(&w->f.failed) ? TF_ERR_FAILED : TF_OK;
        } else {
            status = tf_wcap_push(w, &t->c, ref);
        }
    } else {
        tf_whash_leaves(w, t->src, t->len, (size_t)t->ntasks * TF_HASH_LEAF, &st);
        tf_hroot_end(&st, ref);
        status = tf_wblob_plain(w, t->src, t->len, ref, &have, 1);
    }
    atomic_store(&w->blob_spec, !have);
    free(t);
    if (status != TF_OK || have)
        return status;
    return tf_wblob_added(w, ref);
}
