/* tf_wthread.c — the writer's background thread and its queue: jobs are
 * compressed (zstd, one reused context) and written in submission order,
 * one write(2) per chunk; the open record chunk is sealed every flush_ms;
 * the first write error puts the writer in the failed state. */
#include "trace-format/tf_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TF_ZBUF_KEEP ((size_t)8 << 20)   /* compression buffer kept between jobs */

static uint64_t tf_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

    while (!atomic_load(&w->failed)) {
        size_t q = atomic_load(&w->queued);
        if (q == 0 || q + cost <= w->budget)
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

    if (j == NULL || j->len == 0)
        return;
    w->open = NULL;
    j->type = TF_CHUNK_RECORD;
    j->cost = j->len + TF_HDR_ROOM;
    pthread_mutex_lock(&w->qmu);
    if (atomic_load(&w->failed)) {
        pthread_mutex_unlock(&w->qmu);
        free(j);
        return;
    }
    atomic_fetch_add(&w->queued, j->cost);
    tf_wq_push_locked(w, j);
    pthread_mutex_unlock(&w->qmu);
}

/* Marks @p id done and releases @p cost bytes of budget (qmu held). */
static void tf_wdone_locked(tf_writer *w, uint64_t id, size_t cost)
{
    atomic_fetch_sub(&w->queued, cost);
    if (id > atomic_load(&w->done_id))
        atomic_store(&w->done_id, id);
}

void tf_wfail(tf_writer *w, int errnum, const char *what)
{
    tf_job *j, *next;

    pthread_mutex_lock(&w->qmu);
    if (!atomic_load(&w->failed)) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s at offset %llu: %s",
                 w->path ? w->path : "trace", what, (unsigned long long)w->st_file_bytes,
                 strerror(errnum));
        atomic_store_explicit(&w->failed, 1, memory_order_release);
    }
    /* Drop everything queued: producers must never wait on a dead writer. */
    for (j = w->head; j; j = next) {
        next = j->next;
        tf_wdone_locked(w, j->id, j->cost);
        free(j);
    }
    w->head = w->tail = NULL;
    pthread_cond_broadcast(&w->space_cv);
    pthread_cond_broadcast(&w->done_cv);
    pthread_mutex_unlock(&w->qmu);
}

/* Compresses @p j into w->zbuf when that makes it smaller. @return the
 * payload to write (w->zbuf + TF_HDR_ROOM, or the job's own payload). */
static uint8_t *tf_wcompress(tf_writer *w, tf_job *j, tf_chunk_hdr *h)
{
    size_t bound, n;

    h->codec = TF_CODEC_NONE;
    h->payload_len = j->len;
    if (j->raw || j->len < 64)
        return TF_JOB_PAYLOAD(j);
    bound = ZSTD_compressBound(j->len);
    if (w->zcap < TF_HDR_ROOM + bound) {
        free(w->zbuf);
        w->zcap = 0;
        w->zbuf = malloc(TF_HDR_ROOM + bound);
        if (w->zbuf == NULL)
            return TF_JOB_PAYLOAD(j);   /* store it uncompressed */
        w->zcap = TF_HDR_ROOM + bound;
    }
    n = ZSTD_compressCCtx(w->cctx, w->zbuf + TF_HDR_ROOM, bound, TF_JOB_PAYLOAD(j), j->len, w->level);
    if (ZSTD_isError(n) || n >= j->len)
        return TF_JOB_PAYLOAD(j);
    h->codec = TF_CODEC_ZSTD;
    h->payload_len = n;
    return w->zbuf + TF_HDR_ROOM;
}

int tf_wjob_write(tf_writer *w, tf_job *j)
{
    tf_chunk_hdr h;
    uint8_t *payload, *start;
    int e;

    memset(&h, 0, sizeof(h));
    h.type = j->type;
    h.raw_len = j->len;
    if (j->type == TF_CHUNK_BLOB) {
        h.ext_len = TF_BLOB_EXT_SIZE;
        memcpy(h.hash, j->hash, 16);
        h.blob_size = j->blob_size;
        h.piece_off = j->piece_off;
    }
    h.hdr_len = TF_CHUNK_HDR_SIZE + h.ext_len;
    payload = tf_wcompress(w, j, &h);
    h.check = tf_checksum(payload, h.payload_len);
    start = payload - h.hdr_len;
    tf_chunk_hdr_put(start, &h);
    e = tf_write_all(w->fd, start, h.hdr_len + h.payload_len);
    if (w->zcap > TF_ZBUF_KEEP) {
        free(w->zbuf);
        w->zbuf = NULL;
        w->zcap = 0;
    }
    if (e != 0) {
        tf_wfail(w, e, "writing a chunk");
        return e;
    }
    tf_widx_add(w, &h, w->off);
    w->off += h.hdr_len + h.payload_len;
    return 0;
}

/* Periodic flush: seal the open record chunk however small. */
static void tf_wperiodic(tf_writer *w)
{
    pthread_mutex_lock(&w->rmu);
    tf_wseal_locked(w);
    pthread_mutex_unlock(&w->rmu);
}

/* At close, once the queue is empty: the records that raced with close,
 * then the index and the trailer. */
static void tf_wfinish(tf_writer *w)
{
    tf_job *j;
    int e;

    pthread_mutex_lock(&w->rmu);
    j = w->open;
    w->open = NULL;
    pthread_mutex_unlock(&w->rmu);
    if (j && j->len && !atomic_load(&w->failed)) {
        j->type = TF_CHUNK_RECORD;
        tf_wjob_write(w, j);
    }
    free(j);
    if (!atomic_load(&w->failed) && (e = tf_widx_write(w)) != 0)
        tf_wfail(w, e, "writing the index");
    pthread_mutex_lock(&w->qmu);
    w->st_file_bytes = w->off;
    pthread_mutex_unlock(&w->qmu);
}

void *tf_wthread_main(void *arg)
{
    tf_writer *w = arg;
    uint64_t period = (uint64_t)w->flush_ms * 1000000u;
    uint64_t next_flush = tf_now_ns() + period;
    struct timespec ts;
    tf_job *j;

    pthread_mutex_lock(&w->qmu);
    for (;;) {
        while (w->head == NULL && !w->stop && tf_now_ns() < next_flush) {
            ts.tv_sec = (time_t)(next_flush / 1000000000u);
            ts.tv_nsec = (long)(next_flush % 1000000000u);
            pthread_cond_timedwait(&w->qcv, &w->qmu, &ts);
        }
        if (w->head == NULL && w->stop)
            break;
        if (tf_now_ns() >= next_flush) {
            pthread_mutex_unlock(&w->qmu);
            tf_wperiodic(w);
            next_flush = tf_now_ns() + period;
            pthread_mutex_lock(&w->qmu);
            continue;
        }
        j = w->head;
        w->head = j->next;
        if (w->head == NULL)
            w->tail = NULL;
        pthread_mutex_unlock(&w->qmu);

        if (!atomic_load(&w->failed))
            tf_wjob_write(w, j);

        pthread_mutex_lock(&w->qmu);
        tf_wdone_locked(w, j->id, j->cost);
        w->st_file_bytes = w->off;
        pthread_cond_broadcast(&w->space_cv);
        pthread_cond_broadcast(&w->done_cv);
        tf_job_put_locked(w, j);
    }
    pthread_mutex_unlock(&w->qmu);
    tf_wfinish(w);
    return NULL;
}
