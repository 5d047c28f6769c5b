/* tf_writer.c — the writer's life cycle and record path: open, lock/unlock
 * around record encoding, flush, crash flush, close, status and stats.
 * The worker pool is in tf_wthread.c, blobs in tf_wblob.c. */
#include "trace-format/tf_int.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TF_DEF_LEVEL     1
#define TF_DEF_BUDGET    ((size_t)256 << 20)
#define TF_DEF_FLUSH_MS  200
#define TF_DEF_CHUNK     ((size_t)1 << 20)
#define TF_CHUNK_SLACK   ((size_t)64 << 10)   /* room past chunk_size for the record that fills it */
#define TF_POOL_MIN      2                    /* recycled big buffers kept whatever the budget */

static int tf_failed(const tf_writer *w)
{
    return atomic_load_explicit(&w->f.failed, memory_order_acquire);
}

/* Initializes the locks and condition variables (the thread's wakeup uses
 * CLOCK_MONOTONIC). @return 0 or an errno value. */
static int tf_writer_init_sync(tf_writer *w)
{
    pthread_condattr_t ca;
    int e;

    if ((e = pthread_condattr_init(&ca)) != 0)
        return e;
    e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (e == 0)
        e = pthread_cond_init(&w->qcv, &ca);
    pthread_condattr_destroy(&ca);
    if (e != 0)
        return e;
    pthread_mutex_init(&w->qmu, NULL);
    pthread_mutex_init(&w->bmu, NULL);
    pthread_cond_init(&w->space_cv, NULL);
    pthread_cond_init(&w->done_cv, NULL);
    pthread_cond_init(&w->turn_cv, NULL);
    pthread_cond_init(&w->copy_cv, NULL);
    return 0;
}

/* Allocates @p n workers, each with its compression context. @return 0 or
 * -1 (no memory). */
static int tf_writer_workers(tf_writer *w, unsigned n)
{
    w->workers = calloc(n, sizeof(*w->workers));
    if (w->workers == NULL)
        return -1;
    for (; w->nworkers < n; w->nworkers++) {
        tf_wworker *wk = &w->workers[w->nworkers];
        wk->w = w;
        if ((wk->cctx = ZSTD_createCCtx()) == NULL)
            return -1;
    }
    return 0;
}

/* Starts the workers with every signal blocked, so that the application's
 * signals are never delivered to them. When only some start, the writer
 * goes on with those. @return 0, or the error of the first (none started). */
static int tf_writer_start(tf_writer *w)
{
    sigset_t all, old;
    int e = 0;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (unsigned i = 0; i < w->nworkers && e == 0; i++) {
        e = pthread_create(&w->workers[i].thread, NULL, tf_wworker_main, &w->workers[i]);
        if (e == 0)
            w->nstarted++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return w->nstarted ? 0 : e;
}

/* Stops the workers: the lead writes what is left, the index and the
 * trailer (tf_wthread.c); joins them all. */
static void tf_writer_stop(tf_writer *w)
{
    pthread_mutex_lock(&w->qmu);
    w->stop = 1;
    pthread_cond_broadcast(&w->qcv);
    pthread_mutex_unlock(&w->qmu);
    for (unsigned i = 0; i < w->nstarted; i++)
        pthread_join(w->workers[i].thread, NULL);
    w->nstarted = 0;
}

/* Writes the file header on the caller's thread with SIGXFSZ blocked:
 * past RLIMIT_FSIZE the write fails with EFBIG instead of killing the
 * application. The SIGXFSZ it raised is taken back (one already pending
 * is left alone); the caller's signal mask is restored. Every later write
 * is made by a worker thread, which blocks all signals. */
static int tf_write_header(int fd, const void *p, size_t n)
{
    struct timespec zero = { 0, 0 };
    sigset_t xfsz, old, pending;
    int was_pending, e;

    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    sigpending(&pending);
    was_pending = sigismember(&pending, SIGXFSZ);
    e = tf_write_all(fd, p, n);
    if (e == EFBIG && !was_pending)
        sigtimedwait(&xfsz, NULL, &zero);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}

static void tf_writer_free(tf_writer *w)
{
    tf_job *j, *next;

    if (w->fd >= 0)
        close(w->fd);
    for (j = w->head; j; j = next) {
        next = j->next;
        free(j);
    }
    for (j = w->pool; j; j = next) {
        next = j->next;
        free(j);
    }
    free(w->open);
    tf_wset_free(w);
    for (unsigned i = 0; i < w->nworkers; i++) {
        ZSTD_freeCCtx(w->workers[i].cctx);
        free(w->workers[i].zbuf);
        free(w->workers[i].sbuf);
    }
    free(w->workers);
    free(w->irec);
    free(w->ipiece);
    free(w->path);
    pthread_mutex_destroy(&w->qmu);
    pthread_mutex_destroy(&w->bmu);
    pthread_cond_destroy(&w->qcv);
    pthread_cond_destroy(&w->space_cv);
    pthread_cond_destroy(&w->done_cv);
    pthread_cond_destroy(&w->turn_cv);
    pthread_cond_destroy(&w->copy_cv);
    free(w);
}

tf_status tf_writer_open(tf_writer **out, const char *path, const tf_writer_opts *opts)
{
    tf_status status = TF_OK;
    tf_writer *w = NULL;
    uint8_t hdr[TF_FILE_HDR_SIZE];
    int e;

    if (out == NULL || (path == NULL && (opts == NULL || opts->sink == NULL)))
        return TF_ERR_ARG;
    *out = NULL;
    w = calloc(1, sizeof(*w));
    if (w == NULL)
        return TF_ERR_NOMEM;
    w->fd = -1;
    w->f.enc.w = w;
    tf_wopen_set(w, NULL);
#if defined(__x86_64__)
    {
        unsigned a, b, c, d;   /* CPUID 0x80000001: ECX bit 8, PRFCHW */
        w->f.prefetchw = __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & (1u << 8));
    }
#endif
    if ((e = tf_writer_init_sync(w)) != 0) {
        free(w);
        errno = e;
        return TF_ERR_NOMEM;
    }
    w->level = opts && opts->level ? opts->level : TF_DEF_LEVEL;
    w->adaptive = w->level <= TF_DEF_LEVEL;
    w->f.budget = opts && opts->memory_budget ? opts->memory_budget : TF_DEF_BUDGET;
    w->flush_ms = opts && opts->flush_ms ? opts->flush_ms : TF_DEF_FLUSH_MS;
    w->f.chunk_size = opts && opts->chunk_size ? opts->chunk_size : TF_DEF_CHUNK;
    w->open_cap = w->f.chunk_size + TF_CHUNK_SLACK;
    w->big_cap = w->open_cap > TF_BLOB_PIECE ? w->open_cap : TF_BLOB_PIECE;
    w->pool_min = TF_POOL_MIN;
    w->win_pieces = (unsigned)(w->f.budget / 4 / TF_BLOB_PIECE);
    w->win_pieces = w->win_pieces < 1 ? 1 : w->win_pieces > TF_WIN_PIECES ? TF_WIN_PIECES : w->win_pieces;
    atomic_init(&w->blob_spec, 1);
    w->wr_next = 1;

    if (path == NULL) {   /* sink mode: records are handed over as they are made */
        w->sink = opts->sink;
        w->sink_ctx = opts->sink_ctx;
        w->f.sink = 1;
        *out = w;
        return TF_OK;
    }
    w->path = strdup(path);
    if (w->path == NULL || tf_writer_workers(w, tf_wworkers_default(opts ? opts->threads : 0)) != 0) {
        status = TF_ERR_NOMEM;
        goto out;
    }
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        status = TF_ERR_IO;
        goto out;
    }
    tf_file_hdr_put(hdr, opts ? opts->features_optional & TF_FEATURES_OPTIONAL_KNOWN : 0);
    if ((e = tf_write_header(w->fd, hdr, sizeof(hdr))) != 0) {
        errno = e;
        status = TF_ERR_IO;
        goto out;
    }
    w->off = sizeof(hdr);
    w->st_file_bytes = w->off;
    if ((e = tf_writer_start(w)) != 0) {
        errno = e;
        status = TF_ERR_NOMEM;
        goto out;
    }
    *out = w;
out:
    if (status != TF_OK) {
        e = errno;
        tf_writer_free(w);
        errno = e;
    }
    return status;
}

/* tf_rlock_lock's contended path: spin a little (a record takes well under
 * a microsecond), then yield, then sleep, until the lock is free. */
void tf_rlock_wait(tf_rlock *l)
{
    for (unsigned n = 0;; n++) {
        if (tf_rlock_try(l))
            return;
        if (n < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else if (n < 256) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};   /* held long (a plan's matcher in sink mode) */
            nanosleep(&ts, NULL);
        }
    }
}

/* The record path's cold parts; the hot ones are inline in tf_hot.h. */
void tf_writer_wait_space_(tf_writer *w)
{
    pthread_mutex_lock(&w->qmu);
    tf_wwait_space_locked(w, 0);
    pthread_mutex_unlock(&w->qmu);
}

void tf_writer_lock_open_(tf_writer *w)
{
    tf_wopen_set(w, tf_job_get(w, w->open_cap));   /* NULL: the encoders try again, then lose the record */
    w->f.enc.err = 0;
    w->f.start = w->open ? w->open->len : 0;
}

void tf_writer_unlock_slow_(tf_writer *w)
{
    tf_wfast_ *f = &w->f;
    tf_job *j = w->open;
    int lost = f->enc.err;

    if (j && !lost)
        j->len = (size_t)(f->enc.p - f->base);
    if (lost || tf_failed(w)) {
        if (j) {
            j->len = tf_failed(w) ? 0 : f->start;   /* drop the partial record */
            tf_wopen_set(w, j);                     /* the cursor back at its end */
        }
    } else if (j && j->len > f->start) {
        f->records++;
        f->rec_bytes += j->len - f->start;
        if (w->sink) {
            w->sink(w->sink_ctx, f->base + f->start, j->len - f->start);
            j->len = 0;
            tf_wopen_set(w, j);
        } else if (j->len >= f->chunk_size)
            tf_wseal_locked(w);
    }
    tf_rlock_unlock(&f->rmu);
    if (lost)
        tf_wfail(w, ENOMEM, "encoding a record");
}

tf_status tf_writer_flush(tf_writer *w, int wait)
{
    uint64_t target;

    if (w == NULL)
        return TF_ERR_ARG;
    if (w->sink)
        return tf_writer_status(w);
    tf_rlock_lock(&w->f.rmu);
    tf_wseal_locked(w);
    tf_rlock_unlock(&w->f.rmu);
    if (wait) {
        pthread_mutex_lock(&w->qmu);
        target = atomic_load(&w->last_id);
        while (!tf_failed(w) && atomic_load(&w->done_id) < target)
            pthread_cond_wait(&w->done_cv, &w->qmu);
        pthread_mutex_unlock(&w->qmu);
    }
    return tf_writer_status(w);
}

/* Crash flush, holding rmu (taken with trylock): hands the open chunk to the
 * thread as an uncompressed job. Takes qmu only by trylock. @return 1 when
 * nothing is left to hand over. */
static int tf_crash_seal(tf_writer *w)
{
    tf_job *j = w->open;

    if (j == NULL || j->len == 0)
        return 1;
    if (pthread_mutex_trylock(&w->qmu) != 0)
        return 0;
    tf_wopen_set(w, NULL);
    j->type = TF_CHUNK_RECORD;
    j->raw = 1;
    j->cost = j->len + TF_HDR_ROOM;
    atomic_fetch_add(&w->f.queued, j->cost);
    tf_wq_push_locked(w, j);
    pthread_mutex_unlock(&w->qmu);
    return 1;
}

void tf_writer_crash_flush(tf_writer *w, unsigned timeout_ms)
{
    struct timespec tick = { 0, 1000000 };   /* 1 ms */
    unsigned waited = 0;
    int sealed = 0;

    if (w == NULL || w->nstarted == 0)
        return;
    for (;;) {
        if (!sealed && tf_rlock_try(&w->f.rmu)) {
            sealed = tf_crash_seal(w);
            tf_rlock_unlock(&w->f.rmu);
        }
        if (tf_failed(w) || (sealed && atomic_load(&w->done_id) >= atomic_load(&w->last_id)))
            return;
        if (waited >= timeout_ms)
            return;
        nanosleep(&tick, NULL);
        waited++;
    }
}

/* Everything of a close but the free: queued data, index and trailer
 * written, threads stopped, file closed. @return the writer's status. */
static tf_status tf_writer_end(tf_writer *w, char *msg, size_t msg_cap)
{
    tf_status status;

    if (msg && msg_cap)
        msg[0] = 0;
    if (w == NULL)
        return TF_OK;
    if (w->nstarted) {
        /* the lead worker writes the last records, the index and the
         * trailer (tf_wthread.c): no write(2) of the writer runs on a
         * caller's thread, whose signals (SIGXFSZ) are the application's */
        tf_writer_flush(w, 1);
        tf_writer_stop(w);
    }
    if (w->fd >= 0) {
        if (close(w->fd) != 0 && !tf_failed(w))
            tf_wfail(w, errno, "closing the file");
        w->fd = -1;
    }
    status = tf_writer_status(w);
    if (status != TF_OK && msg && msg_cap)
        snprintf(msg, msg_cap, "%s", w->errmsg);
    return status;
}

tf_status tf_writer_close_msg(tf_writer *w, char *msg, size_t msg_cap)
{
    tf_status status = tf_writer_end(w, msg, msg_cap);

    if (w)
        tf_writer_free(w);
    return status;
}

tf_status tf_writer_close_shared(tf_writer *w, char *msg, size_t msg_cap)
{
    tf_status status = tf_writer_end(w, msg, msg_cap);

    if (w == NULL)
        return status;
    /* late callers: the failed state drops their records and never waits */
    pthread_mutex_lock(&w->qmu);
    if (!atomic_load(&w->f.failed)) {
        snprintf(w->errmsg, sizeof(w->errmsg), "closed");
        atomic_store_explicit(&w->f.failed, 1, memory_order_release);
    }
    pthread_cond_broadcast(&w->space_cv);
    pthread_mutex_unlock(&w->qmu);
    return status;
}

tf_status tf_writer_close(tf_writer *w)
{
    return tf_writer_close_msg(w, NULL, 0);
}

const char *tf_writer_errmsg(const tf_writer *w)
{
    return w && tf_failed(w) ? w->errmsg : "";
}

void tf_writer_get_stats(tf_writer *w, tf_writer_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (w == NULL)
        return;
    tf_rlock_lock(&w->f.rmu);
    out->records = w->f.records;
    out->record_bytes_raw = w->f.rec_bytes;
    tf_rlock_unlock(&w->f.rmu);
    pthread_mutex_lock(&w->bmu);
    out->blob_calls = w->st_blob_calls;
    out->blob_bytes_in = w->st_blob_in;
    out->blobs_stored = w->st_blobs;
    out->blob_bytes_stored = w->st_blob_stored;
    pthread_mutex_unlock(&w->bmu);
    pthread_mutex_lock(&w->qmu);
    out->file_bytes = w->st_file_bytes;
    out->waits = w->st_waits;
    pthread_mutex_unlock(&w->qmu);
}
