/* tf_write.c — the whole-record writers of tf.h: tf_write_* take the
 * record lock, write one record from tf_value trees with the tf_wrec_*
 * heads (tf_wrec.c, tf_hot.h), and release it (clrr trim, tests, any
 * writer that is not the recorder's hot path). A file of its own, so that
 * the recorder's layer, which never calls them, does not link them. */
#include "trace-format/tf_int.h"

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
