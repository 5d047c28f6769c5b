/* tf_wblob.c — the writer's blob store: XXH3-128 content hashes, an
 * in-memory set of the blobs already stored (24 bytes per slot, open
 * addressing, at most half full), and pieces of at most TF_BLOB_PIECE bytes
 * queued as BLOB jobs.
 *
 * Ordering: the pieces of a blob are queued before tf_writer_blob()
 * returns, and a record chunk is queued only when sealed, after the records
 * in it were encoded. The queue is written in order, so a blob stored
 * before a record is encoded precedes that record's chunk in the file.
 * A blob enters the set only once all its pieces are queued; a concurrent
 * call with the same bytes meanwhile stores it again (harmless: readers use
 * the first copy), never returns before the bytes are queued. */
#include "trace-format/tf_int.h"

#include <errno.h>
#include <stdlib.h>

#include <xxhash.h>

#define TF_SET_MIN 1024

void tf_hash(const void *data, size_t len, tf_blobref *out)
{
    XXH128_canonical_t c;

    XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
    memcpy(out->hash, c.digest, 16);
    out->size = len;
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

/* Copies one piece into a new BLOB job and queues it, waiting for budget
 * first (the bytes are reserved before they are copied). */
static tf_status tf_wpiece(tf_writer *w, const tf_blobref *ref, const uint8_t *src,
                           uint64_t off, size_t n)
{
    size_t cost = n + TF_HDR_ROOM;
    tf_job *j;

    pthread_mutex_lock(&w->qmu);
    tf_wwait_space_locked(w, cost);
    if (atomic_load(&w->failed)) {
        pthread_mutex_unlock(&w->qmu);
        return TF_ERR_FAILED;
    }
    atomic_fetch_add(&w->queued, cost);
    pthread_mutex_unlock(&w->qmu);

    j = tf_job_get(w, n);
    if (j) {
        j->type = TF_CHUNK_BLOB;
        j->len = n;
        j->cost = cost;
        memcpy(j->hash, ref->hash, 16);
        j->blob_size = ref->size;
        j->piece_off = off;
        memcpy(TF_JOB_PAYLOAD(j), src, n);
    }

    pthread_mutex_lock(&w->qmu);
    if (j == NULL || atomic_load(&w->failed)) {
        atomic_fetch_sub(&w->queued, cost);
        pthread_cond_broadcast(&w->space_cv);
        pthread_mutex_unlock(&w->qmu);
        free(j);
        if (j == NULL)
            tf_wfail(w, ENOMEM, "copying a blob");
        return TF_ERR_FAILED;
    }
    tf_wq_push_locked(w, j);
    pthread_mutex_unlock(&w->qmu);
    return TF_OK;
}

tf_status tf_writer_blob(tf_writer *w, const void *data, size_t len, tf_blobref *ref)
{
    const uint8_t *src = data;
    tf_status status = TF_OK;
    size_t off, n;
    int have;

    if (w == NULL || ref == NULL || (data == NULL && len > 0))
        return TF_ERR_ARG;
    tf_hash(data, len, ref);

    pthread_mutex_lock(&w->bmu);
    w->st_blob_calls++;
    w->st_blob_in += len;
    have = len == 0 || tf_wset_has(w, ref);
    pthread_mutex_unlock(&w->bmu);
    if (atomic_load(&w->failed))
        return TF_ERR_FAILED;
    if (have)
        return TF_OK;

    for (off = 0; off < len; off += n) {
        n = len - off < TF_BLOB_PIECE ? len - off : TF_BLOB_PIECE;
        if ((status = tf_wpiece(w, ref, src + off, off, n)) != TF_OK)
            return status;
    }

    pthread_mutex_lock(&w->bmu);
    if (tf_wset_add(w, ref)) {
        w->st_blobs++;
        w->st_blob_stored += len;
    }
    pthread_mutex_unlock(&w->bmu);
    return status;
}
