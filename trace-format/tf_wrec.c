/* tf_wrec.c — the record writers: every record type's bytes (FORMAT.md 4)
 * are written here or by the inline heads of tf_hot.h, nowhere else.
 *
 * Two levels: tf_wrec_* encode a record (or its head) into an encoder the
 * caller holds the record lock for (tf_hot.h, the recorder's path);
 * tf_write_* (tf.h) take the lock, write a whole record from tf_value
 * trees, and release it (clrr trim, tests, any other writer). */
#include "trace-format/tf_int.h"

/* ------------------------------------------------- under the record lock */

void tf_enc_value(tf_enc *e, const tf_value *v)
{
    switch (v->type) {
    case TF_NIL: tf_enc_nil(e); break;
    case TF_BOOL: tf_enc_bool(e, v->v.b); break;
    case TF_INT: tf_enc_int(e, v->v.i); break;
    case TF_UINT: tf_enc_uint(e, v->v.u); break;
    case TF_F64: tf_enc_f64(e, v->v.f); break;
    case TF_STR: tf_enc_str(e, v->v.str.ptr, v->v.str.len); break;
    case TF_BIN: tf_enc_bin(e, v->v.str.ptr, v->v.str.len); break;
    case TF_BLOB: tf_enc_blobref(e, &v->v.blob); break;
    case TF_ARRAY:
        tf_enc_array(e, v->v.arr.n);
        for (uint32_t i = 0; i < v->v.arr.n; i++)
            tf_enc_value(e, &v->v.arr.items[i]);
        break;
    case TF_MAP:
        tf_enc_map(e, v->v.map.n);
        for (uint32_t i = 0; i < v->v.map.n; i++) {
            tf_enc_value(e, &v->v.map.keys[i]);
            tf_enc_value(e, &v->v.map.vals[i]);
        }
        break;
    }
}

void tf_wrec_sig(tf_enc *e, const tf_sig *s)
{
    tf_enc_array(e, TF_REC_SIG_FIELDS);
    tf_enc_uint(e, TF_REC_SIG);
    tf_enc_uint(e, s->id);
    tf_enc_cstr(e, s->name);
    tf_enc_cstr(e, s->ret_type);
    tf_enc_array(e, s->nparams);
    for (uint32_t i = 0; i < s->nparams; i++) {
        tf_enc_array(e, TF_SIG_PARAM_FIELDS);
        tf_enc_cstr(e, s->params[i].name);
        tf_enc_cstr(e, s->params[i].type);
        tf_enc_uint(e, s->params[i].kind);
        tf_enc_uint(e, s->params[i].dir);
    }
}

void tf_wrec_devtime(tf_enc *e, uint64_t seq, uint64_t queued, uint64_t submit, uint64_t start, uint64_t end)
{
    tf_enc_array(e, TF_REC_DEVTIME_FIELDS);
    tf_enc_uint(e, TF_REC_DEVTIME);
    tf_enc_uint(e, seq);
    tf_enc_uint(e, queued);
    tf_enc_uint(e, submit);
    tf_enc_uint(e, start);
    tf_enc_uint(e, end);
}

void tf_wrec_data_head(tf_enc *e, uint64_t seq, const char *key)
{
    tf_enc_array(e, TF_REC_DATA_FIELDS);
    tf_enc_uint(e, TF_REC_DATA);
    tf_enc_uint(e, seq);
    tf_enc_cstr(e, key);
}

void tf_wrec_note(tf_enc *e, uint64_t seq, uint64_t object, const char *text)
{
    tf_enc_array(e, TF_REC_NOTE_FIELDS);
    tf_enc_uint(e, TF_REC_NOTE);
    tf_enc_uint(e, seq);
    tf_enc_uint(e, object);
    tf_enc_cstr(e, text);
}

void tf_wrec_devices_head(tf_enc *e, uint64_t platform, uint32_t ndevices)
{
    tf_enc_array(e, TF_REC_DEVICES_FIELDS);
    tf_enc_uint(e, TF_REC_DEVICES);
    tf_enc_uint(e, platform);
    tf_enc_array(e, ndevices);
}

/* ------------------------------------------- whole records, lock taken */

/* A map, or nil for NULL. */
static void tf_enc_map_or_nil(tf_enc *e, const tf_value *m)
{
    if (m)
        tf_enc_value(e, m);
    else
        tf_enc_nil(e);
}

static tf_status tf_write_done(tf_writer *w)
{
    tf_writer_unlock(w);
    return tf_writer_status(w);
}

tf_status tf_write_env(tf_writer *w, const tf_value *env)
{
    if (w == NULL)
        return TF_ERR_ARG;
    tf_enc *e = tf_writer_lock(w);
    tf_wrec_env_head(e);
    if (env)
        tf_enc_value(e, env);
    else
        tf_enc_map(e, 0);
    return tf_write_done(w);
}

tf_status tf_write_sig(tf_writer *w, const tf_sig *s)
{
    if (w == NULL || s == NULL)
        return TF_ERR_ARG;
    tf_wrec_sig(tf_writer_lock(w), s);
    return tf_write_done(w);
}

tf_status tf_write_begin(tf_writer *w, uint64_t seq, uint64_t tid, uint32_t sig_id, int64_t t_ns,
                         const tf_value *args, uint32_t nargs, const tf_value *pre)
{
    if (w == NULL || (args == NULL && nargs))
        return TF_ERR_ARG;
    tf_enc *e = tf_writer_lock(w);
    tf_wrec_begin_head(e, seq, tid, sig_id, t_ns);
    tf_enc_array(e, nargs);
    for (uint32_t i = 0; i < nargs; i++)
        tf_enc_value(e, &args[i]);
    tf_enc_map_or_nil(e, pre);
    return tf_write_done(w);
}

tf_status tf_write_end(tf_writer *w, uint64_t seq, int64_t t_ns, const tf_value *ret,
                       const tf_value *outs, uint32_t nouts, const tf_value *post)
{
    if (w == NULL)
        return TF_ERR_ARG;
    tf_enc *e = tf_writer_lock(w);
    tf_wrec_end_head(e, seq, t_ns);
    if (ret)
        tf_enc_value(e, ret);
    else
        tf_enc_nil(e);
    tf_enc_array(e, nouts);
    if (outs)
        for (uint32_t i = 0; i < nouts; i++)
            tf_enc_value(e, &outs[i]);
    else
        tf_enc_nils(e, nouts);
    tf_enc_map_or_nil(e, post);
    return tf_write_done(w);
}

tf_status tf_write_devtime(tf_writer *w, uint64_t seq, uint64_t queued, uint64_t submit, uint64_t start,
                           uint64_t end)
{
    if (w == NULL)
        return TF_ERR_ARG;
    tf_wrec_devtime(tf_writer_lock(w), seq, queued, submit, start, end);
    return tf_write_done(w);
}

tf_status tf_write_data(tf_writer *w, uint64_t seq, const char *key, const tf_value *value)
{
    if (w == NULL || key == NULL || value == NULL)
        return TF_ERR_ARG;
    tf_enc *e = tf_writer_lock(w);
    tf_wrec_data_head(e, seq, key);
    tf_enc_value(e, value);
    return tf_write_done(w);
}

tf_status tf_write_note(tf_writer *w, uint64_t seq, uint64_t object, const char *text)
{
    if (w == NULL || text == NULL)
        return TF_ERR_ARG;
    tf_wrec_note(tf_writer_lock(w), seq, object, text);
    return tf_write_done(w);
}

tf_status tf_write_devices(tf_writer *w, uint64_t platform, const tf_value *devices)
{
    if (w == NULL || devices == NULL || devices->type != TF_ARRAY)
        return TF_ERR_ARG;
    tf_enc *e = tf_writer_lock(w);
    tf_wrec_devices_head(e, platform, devices->v.arr.n);
    for (uint32_t i = 0; i < devices->v.arr.n; i++)
        tf_enc_value(e, &devices->v.arr.items[i]);
    return tf_write_done(w);
}
