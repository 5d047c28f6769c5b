/* tf_wrec.c — the record writers under the record lock: every record
 * type's bytes (FORMAT.md 4) are written here or by the inline heads of
 * tf_hot.h, nowhere else. tf_wrec_* encode a record (or its head) into an
 * encoder whose lock the caller holds (the recorder's path); tf_write.c
 * builds the whole-record writers of tf.h on them. */
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
