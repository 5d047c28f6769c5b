/* tf_enc.c — record encoding into the writer's open record chunk.
 *
 * tf_enc is a cursor into the chunk buffer and tf_enc_* write msgpack
 * directly there: one bounds check and a few stores per value. The bytes
 * are exactly those msgpack-c's msgpack_packer produces (smallest format
 * for each value; test_tf.c compares the two byte for byte). Going through
 * msgpack_packer itself cost an indirect call and a memcpy per value, and
 * its template's byte-buffer stores stall store forwarding: 105-155 ns per
 * 11-value record on the reference VM, against ~60 ns this way.
 * Every function here runs with the record mutex held (tf_writer_lock). */
#include "trace-format/tf_int.h"

#include <stdlib.h>

/* Buffer jobs ------------------------------------------------------------ */

tf_job *tf_job_new(size_t cap)
{
    tf_job *j = malloc(sizeof(*j) + TF_HDR_ROOM + cap);

    if (j) {
        memset(j, 0, sizeof(*j));
        j->cap = cap;
    }
    return j;
}

tf_job *tf_job_get(tf_writer *w, size_t cap)
{
    tf_job *j = NULL;

    if (cap > w->big_cap || cap < w->big_cap / 4)
        return tf_job_new(cap);
    pthread_mutex_lock(&w->qmu);
    if ((j = w->pool) != NULL) {
        w->pool = j->next;
        w->npool--;
    }
    pthread_mutex_unlock(&w->qmu);
    if (j) {
        memset(j, 0, sizeof(*j));
        j->cap = w->big_cap;
        return j;
    }
    return tf_job_new(w->big_cap);
}

/* The pool keeps pool_min big buffers, and more while the pool and the
 * queue together stay within the budget: a recycled buffer spares the page
 * faults of fresh memory (copying 16 MiB into new malloc'd buffers took
 * 8-10 ms on the H200 machine, 1.3-2.5 ms into reused ones), and the memory
 * held stays what the budget allows. */
void tf_job_put_locked(tf_writer *w, tf_job *j)
{
    if (j->cap == w->big_cap &&
        (w->npool < w->pool_min || atomic_load(&w->f.queued) + (w->npool + 1) * w->big_cap <= w->f.budget)) {
        j->next = w->pool;
        w->pool = j;
        w->npool++;
    } else {
        free(j);
    }
}

/* The sink --------------------------------------------------------------- */

uint8_t tf_enc_none[1];   /* p == end: no buffer, every write takes the slow path */

void tf_enc_discard(tf_enc *e, void *scratch, size_t n)
{
    e->p = scratch && n ? scratch : tf_enc_none;
    e->end = e->p + (scratch ? n : 0);
    e->w = NULL;
    e->err = 1;   /* tf_enc_room_slow() answers NULL at once */
}

/* Slow path of tf_enc_room_ (tf_hot.h): no open chunk yet, or it is full (a
 * record larger than the slack): get or grow it, keeping what is there. On
 * failure the record is marked lost (tf_writer_unlock drops it).
 * @return e->p with at least @p n bytes free, or NULL. */
uint8_t *tf_enc_room_slow(tf_enc *e, size_t n)
{
    tf_writer *w = e->w;
    tf_job *j, *q;
    size_t cap;

    if (e->err)
        return NULL;
    /* e is w->f.enc: tf_wopen_set moves it to the new chunk's end, and the
     * record's start (f.start) is an offset, kept across a move */
    j = w->open;
    if (j == NULL) {
        j = tf_job_get(w, w->open_cap > n ? w->open_cap : n);
        if (j)
            w->f.start = j->len;
    } else {
        j->len = (size_t)(e->p - TF_JOB_PAYLOAD(j));
        cap = j->cap * 2 > j->len + n ? j->cap * 2 : j->len + n;
        q = realloc(j, sizeof(*j) + TF_HDR_ROOM + cap);
        if (q != NULL)
            q->cap = cap;
        j = q;   /* NULL: the old chunk stays open; tf_writer_unlock drops the lost record */
    }
    if (j == NULL) {
        e->p = e->end = tf_enc_none;
        e->err = 1;
        return NULL;
    }
    tf_wopen_set(w, j);
    return e->p;
}

/* msgpack formats (the small ones are inline in tf_hot.h) -------------------- */

/* A length-prefixed head for str and bin: the fix form when n < fix_lim,
 * else 8/16/32-bit forms. */
static inline int tf_enc_len(tf_enc *e, size_t n, uint8_t fix, size_t fix_lim, uint8_t tag8, uint8_t tag16,
                             uint8_t tag32)
{
    uint8_t *p = tf_enc_room_(e, 9);

    if (p == NULL)
        return -1;
    if (n < fix_lim) {
        *p = (uint8_t)(fix | n);
        e->p = p + 1;
    } else if (n <= UINT8_MAX) {
        e->p = tf_enc_put_(p, tag8, n, 1);
    } else if (n <= UINT16_MAX) {
        e->p = tf_enc_put_(p, tag16, n, 2);
    } else if (n <= UINT32_MAX) {
        e->p = tf_enc_put_(p, tag32, n, 4);
    } else {
        e->err = 1;                                  /* not representable: drop the record */
        return -1;
    }
    return 0;
}

static inline void tf_enc_body(tf_enc *e, const void *s, size_t n)
{
    uint8_t *p;

    if (n && (p = tf_enc_room_(e, n)) != NULL) {
        memcpy(p, s, n);
        e->p = p + n;
    }
}

/* The out-of-line encoders ------------------------------------------------ */

void tf_enc_f64(tf_enc *e, double v)
{
    uint64_t bits;
    uint8_t *p = tf_enc_room_(e, 9);

    memcpy(&bits, &v, 8);
    if (p)
        e->p = tf_enc_put_(p, 0xcb, bits, 8);
}

void tf_enc_str(tf_enc *e, const char *s, size_t len)
{
    if (tf_enc_len(e, len, 0xa0, 32, 0xd9, 0xda, 0xdb) == 0)
        tf_enc_body(e, s, len);
}

void tf_enc_cstr(tf_enc *e, const char *s)
{
    if (s == NULL)
        tf_enc_nil(e);
    else
        tf_enc_str(e, s, strlen(s));
}

void tf_enc_bin(tf_enc *e, const void *p, size_t len)
{
    if (tf_enc_len(e, len, 0, 0, 0xc4, 0xc5, 0xc6) == 0)
        tf_enc_body(e, p, len);
}

void tf_enc_blobref(tf_enc *e, const tf_blobref *b)
{
    uint8_t *p = tf_enc_room_(e, 3 + TF_BLOBREF_SIZE);

    if (p == NULL)
        return;
    p[0] = 0xc7;                                     /* ext 8 */
    p[1] = TF_BLOBREF_SIZE;
    p[2] = TF_EXT_BLOBREF;
    memcpy(p + 3, b->hash, 16);
    tf_put64(p + 3 + 16, b->size);
    e->p = p + 3 + TF_BLOBREF_SIZE;
}

void tf_enc_hashref(tf_enc *e, const tf_blobref *b)
{
    tf_enc_map(e, 2);
    tf_enc_str(e, "hash", 4);
    tf_enc_bin(e, b->hash, 16);
    tf_enc_str(e, "size", 4);
    tf_enc_uint(e, b->size);
}
