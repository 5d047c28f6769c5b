/* tf_enc.c — record encoding: tf_enc_* wrap msgpack-c's packer, whose
 * write callback appends to the writer's open record chunk. Every function
 * here runs with the writer's record mutex held (tf_writer_lock). */
#include "trace-format/tf_int.h"

#include <stdlib.h>

tf_job *tf_job_new(size_t cap)
{
    tf_job *j = malloc(sizeof(*j) + TF_HDR_ROOM + cap);

    if (j) {
        memset(j, 0, sizeof(*j));
        j->cap = cap;
    }
    return j;
}

/* Makes room for @p len more bytes in the open chunk: allocates it when
 * absent (after a seal), or grows it for an oversized record. */
static int tf_enc_grow(tf_writer *w, size_t len)
{
    tf_job *j = w->open;
    size_t cap;

    if (j == NULL) {
        cap = w->open_cap > len ? w->open_cap : len;
        w->open = tf_job_new(cap);
        return w->open ? 0 : -1;
    }
    cap = j->cap * 2;
    if (cap < j->len + len)
        cap = j->len + len;
    j = realloc(j, sizeof(*j) + TF_HDR_ROOM + cap);
    if (j == NULL)
        return -1;
    j->cap = cap;
    w->open = j;
    return 0;
}

/* msgpack_packer write callback. */
static int tf_enc_write(void *data, const char *buf, size_t len)
{
    tf_writer *w = data;
    tf_job *j = w->open;

    if (__builtin_expect(j == NULL || len > j->cap - j->len, 0)) {
        if (w->enc_err || tf_enc_grow(w, len) != 0) {
            w->enc_err = 1;
            return -1;
        }
        j = w->open;
    }
    memcpy(TF_JOB_PAYLOAD(j) + j->len, buf, len);
    j->len += len;
    return 0;
}

void tf_enc_init(tf_writer *w)
{
    msgpack_packer_init(&w->enc.pk, w, tf_enc_write);
}

void tf_enc_nil(tf_enc *e) { msgpack_pack_nil(&e->pk); }

void tf_enc_bool(tf_enc *e, int v)
{
    if (v)
        msgpack_pack_true(&e->pk);
    else
        msgpack_pack_false(&e->pk);
}

void tf_enc_int(tf_enc *e, int64_t v) { msgpack_pack_int64(&e->pk, v); }
void tf_enc_uint(tf_enc *e, uint64_t v) { msgpack_pack_uint64(&e->pk, v); }
void tf_enc_f64(tf_enc *e, double v) { msgpack_pack_double(&e->pk, v); }

void tf_enc_str(tf_enc *e, const char *s, size_t len)
{
    msgpack_pack_str(&e->pk, len);
    msgpack_pack_str_body(&e->pk, s, len);
}

void tf_enc_cstr(tf_enc *e, const char *s)
{
    if (s == NULL)
        msgpack_pack_nil(&e->pk);
    else
        tf_enc_str(e, s, strlen(s));
}

void tf_enc_bin(tf_enc *e, const void *p, size_t len)
{
    msgpack_pack_bin(&e->pk, len);
    msgpack_pack_bin_body(&e->pk, p, len);
}

void tf_enc_array(tf_enc *e, uint32_t n) { msgpack_pack_array(&e->pk, n); }
void tf_enc_map(tf_enc *e, uint32_t n) { msgpack_pack_map(&e->pk, n); }

void tf_enc_blobref(tf_enc *e, const tf_blobref *b)
{
    uint8_t body[TF_BLOBREF_SIZE];

    memcpy(body, b->hash, 16);
    tf_put64(body + 16, b->size);
    msgpack_pack_ext(&e->pk, TF_BLOBREF_SIZE, TF_EXT_BLOBREF);
    msgpack_pack_ext_body(&e->pk, body, TF_BLOBREF_SIZE);
}
