/* tf_wthread.c — the writer's worker pool and its queue.
 *
 * Jobs (sealed record chunks, blob pieces) get increasing ids as they are
 * queued. nworkers threads (opts.threads; by default three quarters of
 * the online CPUs, between 1 and 16), started with every signal blocked,
 * take jobs from the head of the queue in id order and compress them concurrently, each with
 * its own reused ZSTD_CCtx and output buffer, and build the chunk's header
 * and checksum there too. Writing is strictly in id order: a worker whose
 * job is not the next to write (w->wr_next) marks its chunk ready and waits
 * on turn_cv; the one whose turn it is writes its chunk and the ready
 * chunks that follow it without a gap (header + payload each, one
 * writev(2) for them all), records them in the index and hands the turn on
 * past them (tf_wjob_run says why). The file is therefore byte for byte
 * what one thread would write; the file offset and the index belong to the
 * worker in turn, the handover going through qmu.
 *
 * A job's budget (w->f.queued) is released once it is written, so the memory
 * budget counts jobs queued, being compressed and waiting for their turn.
 *
 * The application's thread waits until each blob's bytes are hashed and
 * copied into jobs (with a ticket, tf_writer_blob_begin, it first does
 * something else: the recorder calls the driver meanwhile, and waits at
 * tf_writer_blob_join); the leaves' hashes and the copies are posted as tasks
 * (tf_wblob.c) that a worker serves before taking a job, and between two 128 KiB slices of the
 * job it is compressing (zstd's streaming API, still one frame per chunk),
 * so a copy never waits for a whole compression. Blob pieces go to a faster
 * zstd setting while more than a quarter of the budget is waiting
 * (tf_wcompress(), tf_wzstd.c): then the application is about to wait for
 * the workers.
 *
 * Why several workers: on the data-heavy micro benchmark (bench/micro.c,
 * 20 x 16 MiB written and read back) on an H200 host's 16 CPUs, one
 * background thread left the application waiting for compression, several
 * times its plain time, where a pool keeps it near plain speed
 * (bench/results/nvidia-h200-recorder.txt). The XXH3 of the blobs is then
 * most of what the application's thread spends, hence leaf hashes
 * (format 1.2), which the workers share.
 *
 * The lead (worker 0) also seals the open record chunk every flush_ms and,
 * at close, once the queue is empty and no job is in flight, writes the
 * records that raced with close, then the index and the trailer. Every
 * write(2) of the writer after the file header runs on a worker, whose
 * signals are blocked: SIGXFSZ never reaches the application, the write
 * fails with EFBIG instead.
 *
 * The first write error puts the writer in the failed state: queued jobs
 * are dropped, workers drop the jobs they hold instead of writing them, and
 * every wait (budget, turn, flush) ends. */
#include "trace-format/tf_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#define TF_ZBUF_KEEP ((size_t)8 << 20)   /* compression buffer kept between jobs */
#define TF_DEF_WORKERS_MAX 16

static uint64_t tf_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

unsigned tf_wworkers_default(unsigned threads)
{
    long n;

    if (threads)
        return threads > TF_MAX_WORKERS ? TF_MAX_WORKERS : threads;
    /* three quarters of the processors: the rest stay with the application
     * and its driver's threads (on an H200 host's 16 CPUs the data-heavy
     * micro benchmark recorded fastest with 12 workers, slower with 8 or
     * 15: bench/results/nvidia-h200-recorder.txt) */
    n = sysconf(_SC_NPROCESSORS_ONLN) * 3 / 4;
    return n < 1 ? 1 : n > TF_DEF_WORKERS_MAX ? TF_DEF_WORKERS_MAX : (unsigned)n;
}

int tf_write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n > 0) {
        ssize_t k = write(fd, b, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (k == 0)
            return EIO;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

void tf_wq_push_locked(tf_writer *w, tf_job *j)
{
    j->next = NULL;
    j->id = atomic_load_explicit(&w->last_id, memory_order_relaxed) + 1;
    atomic_store(&w->last_id, j->id);
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    pthread_cond_signal(&w->qcv);
}

void tf_wwait_space_locked(tf_writer *w, size_t cost)
{
    int counted = 0;

    while (!atomic_load(&w->f.failed)) {
        /* not counting pending tickets' windows: a thread whose ticket
         * holds budget during a driver call that waits for this one (a
         * user event it sets) would otherwise never be back to free it */
        size_t q = atomic_load(&w->f.queued) - atomic_load(&w->held);
        if (q == 0 || q + cost <= w->f.budget)
            break;
        if (!counted) {
            w->st_waits++;
            counted = 1;
        }
        pthread_cond_wait(&w->space_cv, &w->qmu);
    }
}

void tf_wseal_locked(tf_writer *w)
{
    tf_job *j = w->open;

    atomic_store_explicit(&w->blob_unsealed, 0, memory_order_relaxed);
    if (j == NULL || j->len == 0)
        return;
    tf_wopen_set(w, NULL);
    j->type = TF_CHUNK_RECORD;
    j->cost = j->len + TF_HDR_ROOM;
    pthread_mutex_lock(&w->qmu);
    if (atomic_load(&w->f.failed)) {
        tf_job_put_locked(w, j);
        pthread_mutex_unlock(&w->qmu);
        return;
    }
    atomic_fetch_add(&w->f.queued, j->cost);
    tf_wq_push_locked(w, j);
    pthread_mutex_unlock(&w->qmu);
}

/* Marks @p id done and releases @p cost bytes of budget (qmu held). */
static void tf_wdone_locked(tf_writer *w, uint64_t id, size_t cost)
{
    atomic_fetch_sub(&w->f.queued, cost);
    if (id > atomic_load(&w->done_id))
        atomic_store(&w->done_id, id);
}

void tf_wfail(tf_writer *w, int errnum, const char *what)
{
    tf_job *j, *next;

    pthread_mutex_lock(&w->qmu);
    if (!atomic_load(&w->f.failed)) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s at offset %llu: %s",
                 w->path ? w->path : "trace", what, (unsigned long long)w->st_file_bytes,
                 strerror(errnum));
        atomic_store_explicit(&w->f.failed, 1, memory_order_release);
    }
    /* Drop everything queued: producers must never wait on a dead writer.
     * Jobs held by workers are dropped by them (tf_wjob_run). */
    for (j = w->head; j; j = next) {
        next = j->next;
        tf_wdone_locked(w, j->id, j->cost);
        tf_job_put_locked(w, j);
    }
    w->head = w->tail = NULL;
    pthread_cond_broadcast(&w->space_cv);
    pthread_cond_broadcast(&w->done_cv);
    pthread_cond_broadcast(&w->turn_cv);
    pthread_mutex_unlock(&w->qmu);
}

/* Puts the header of chunk @p h, its checksum computed, before @p
 * payload. Needs no turn. @return the chunk's first byte. */
static uint8_t *tf_wprep(tf_chunk_hdr *h, uint8_t *payload)
{
    uint8_t *start = payload - h->hdr_len;

    h->check = tf_checksum(payload, h->payload_len);
    tf_chunk_hdr_put(start, h);
    return start;
}

/* writev(2) all of @p iov (@p n entries, modified), retrying on EINTR and
 * short writes. @return 0 or errno. */
static int tf_writev_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t k = writev(fd, iov, n > IOV_MAX ? IOV_MAX : n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (k == 0)
            return EIO;
        while (n > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (uint8_t *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

/* Writes the @p n prepared chunks @p hs (first bytes at @p starts) at
 * w->off, in one writev(2), and indexes them; on error enters the failed
 * state. The caller has the turn. @return 0 or errno. */
static int tf_wput(tf_writer *w, tf_chunk_hdr *const *hs, uint8_t *const *starts, int n)
{
    struct iovec iov[TF_MAX_WORKERS];
    int e;

    for (int i = 0; i < n; i++) {
        iov[i].iov_base = starts[i];
        iov[i].iov_len = hs[i]->hdr_len + hs[i]->payload_len;
    }
    if ((e = tf_writev_all(w->fd, iov, n)) != 0) {
        tf_wfail(w, e, "writing a chunk");
        return e;
    }
    for (int i = 0; i < n; i++) {
        tf_widx_add(w, hs[i], w->off);
        w->off += hs[i]->hdr_len + hs[i]->payload_len;
    }
    return 0;
}

/* Writes the chunk @p h + @p payload at w->off and indexes it; on error
 * enters the failed state. The caller has the turn. @return 0 or errno. */
static int tf_wemit(tf_writer *w, tf_chunk_hdr *h, uint8_t *payload)
{
    uint8_t *start = tf_wprep(h, payload);

    return tf_wput(w, &h, &start, 1);
}

static void tf_wzbuf_trim(tf_wworker *wk)
{
    if (wk->zcap > TF_ZBUF_KEEP) {
        free(wk->zbuf);
        wk->zbuf = NULL;
        wk->zcap = 0;
    }
    if (wk->scap > TF_ZBUF_KEEP) {
        free(wk->sbuf);
        wk->sbuf = NULL;
        wk->scap = 0;
    }
}

int tf_wjob_write(tf_wworker *wk, tf_job *j)
{
    tf_chunk_hdr h;
    uint8_t *payload = tf_wcompress(wk, j, &h);
    int e = tf_wemit(wk->w, &h, payload);

    tf_wzbuf_trim(wk);
    return e;
}

/* The chunks ready after @p wk's (qmu held, @p wk in turn, its chunk
 * ready): wk's, then those of the workers holding the next ids, as long
 * as they follow without a gap. @return how many, in @p hs, @p starts
 * and @p ws. */
static int tf_wgather_locked(tf_writer *w, tf_wworker *wk, tf_chunk_hdr **hs, uint8_t **starts,
                             tf_wworker **ws)
{
    uint64_t id = wk->rj->id + 1;
    int n = 1, found = 1;

    hs[0] = &wk->rh;
    starts[0] = wk->rstart;
    ws[0] = wk;
    while (found && n < (int)w->nworkers) {
        found = 0;
        for (unsigned i = 0; i < w->nworkers; i++) {
            tf_wworker *o = &w->workers[i];
            if (o->rj && o->rj->id == id && !o->rdone) {
                hs[n] = &o->rh;
                starts[n] = o->rstart;
                ws[n++] = o;
                id++;
                found = 1;
                break;
            }
        }
    }
    return n;
}

/* A queued job, taken by @p wk (qmu held on entry and on return):
 * compressed and prepared (header, checksum) without the lock, then
 * marked ready. The worker whose turn it is writes its chunk and the
 * ready ones that follow it in one writev(2) and hands the turn on past
 * them; their workers, woken, find theirs written. Then each counts its
 * job done and recycles it. Dropped instead when the writer has failed.
 *
 * Why: with incompressible data (micro data 20 random, 640 MiB of raw
 * pieces) the turn is the writer's bottleneck. The checksum (XXH3-64 of
 * every payload) was computed inside the turn, serialized on top of the
 * write(2) of the page cache; and each 1 MiB chunk had a write and a
 * handover of its own. On the H200 machine (12 workers, trace on ext4),
 * per run of 40 x 16 MiB blobs: the application's time inside
 * tf_writer_blob went from 79-103 ms to 27-37 ms (workers held in the
 * turn's queue could not take its copy tasks, which it then did alone:
 * 246 of 641 tasks, against 60-120), 685 writes became 160-190, and the
 * loop's time from 292-352 ms to 257-294 ms (plain: 206-246 ms). */
static void tf_wjob_run(tf_wworker *wk, tf_job *j)
{
    tf_writer *w = wk->w;
    tf_chunk_hdr *hs[TF_MAX_WORKERS];
    uint8_t *starts[TF_MAX_WORKERS], *start = NULL;
    tf_wworker *ws[TF_MAX_WORKERS];
    int mine = 0, n = 0;

    w->inflight++;
    pthread_mutex_unlock(&w->qmu);
    if (!atomic_load(&w->f.failed))
        start = tf_wprep(&wk->rh, tf_wcompress(wk, j, &wk->rh));
    pthread_mutex_lock(&w->qmu);
    if (start) {
        wk->rstart = start;
        wk->rdone = 0;
        wk->rj = j;
    }
    while (!atomic_load(&w->f.failed) && w->wr_next != j->id && !wk->rdone)
        pthread_cond_wait(&w->turn_cv, &w->qmu);
    mine = start && !wk->rdone && !atomic_load(&w->f.failed);
    if (mine)
        n = tf_wgather_locked(w, wk, hs, starts, ws);
    pthread_mutex_unlock(&w->qmu);

    if (mine)
        tf_wput(w, hs, starts, n);
    tf_wzbuf_trim(wk);

    pthread_mutex_lock(&w->qmu);
    if (mine) {
        w->wr_next = j->id + (uint64_t)n;
        w->st_file_bytes = w->off;
        for (int i = 1; i < n; i++)
            ws[i]->rdone = 1;
    }
    wk->rj = NULL;
    wk->rdone = 0;
    tf_wdone_locked(w, j->id, j->cost);
    w->inflight--;
    pthread_cond_broadcast(&w->turn_cv);
    pthread_cond_broadcast(&w->space_cv);
    pthread_cond_broadcast(&w->done_cv);
    tf_job_put_locked(w, j);
}

/* Periodic flush: seal the open record chunk however small. */
static void tf_wperiodic(tf_writer *w)
{
    tf_rlock_lock(&w->f.rmu);
    tf_wseal_locked(w);
    tf_rlock_unlock(&w->f.rmu);
}

/* At close, by the lead once the queue is empty and no job is in flight:
 * the records that raced with close, then the index and the trailer. */
static void tf_wfinish(tf_wworker *wk)
{
    tf_writer *w = wk->w;
    tf_job *j;
    int e;

    tf_rlock_lock(&w->f.rmu);
    j = w->open;
    tf_wopen_set(w, NULL);
    tf_rlock_unlock(&w->f.rmu);
    if (j && j->len && !atomic_load(&w->f.failed)) {
        j->type = TF_CHUNK_RECORD;
        tf_wjob_write(wk, j);
    }
    free(j);
    if (!atomic_load(&w->f.failed) && (e = tf_widx_write(wk)) != 0)
        tf_wfail(w, e, "writing the index");
    pthread_mutex_lock(&w->qmu);
    w->st_file_bytes = w->off;
    pthread_mutex_unlock(&w->qmu);
}

void *tf_wworker_main(void *arg)
{
    tf_wworker *wk = arg;
    tf_writer *w = wk->w;
    int lead = wk == &w->workers[0];
    uint64_t period = (uint64_t)w->flush_ms * 1000000u;
    uint64_t next_flush = tf_now_ns() + period;
    struct timespec ts;
    tf_job *j;

    pthread_mutex_lock(&w->qmu);
    for (;;) {
        if (w->copies) {                   /* the application waits on these */
            tf_wcopy_run_locked(w);
            continue;
        }
        if (lead && tf_now_ns() >= next_flush) {
            pthread_mutex_unlock(&w->qmu);
            tf_wperiodic(w);
            next_flush = tf_now_ns() + period;
            pthread_mutex_lock(&w->qmu);
            continue;
        }
        if ((j = w->head) != NULL) {
            w->head = j->next;
            if (w->head == NULL)
                w->tail = NULL;
            tf_wjob_run(wk, j);
            continue;
        }
        if (w->stop)
            break;
        if (lead) {
            ts.tv_sec = (time_t)(next_flush / 1000000000u);
            ts.tv_nsec = (long)(next_flush % 1000000000u);
            pthread_cond_timedwait(&w->qcv, &w->qmu, &ts);
        } else {
            pthread_cond_wait(&w->qcv, &w->qmu);
        }
    }
    if (lead) {
        while (w->inflight > 0)
            pthread_cond_wait(&w->done_cv, &w->qmu);
    }
    pthread_mutex_unlock(&w->qmu);
    if (lead)
        tf_wfinish(wk);
    return NULL;
}
