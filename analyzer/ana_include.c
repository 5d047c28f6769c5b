/* ana_include.c — the headers recorded with a build, inlined into the
 * source for the kernel analysis: the analysis of a trace reads no file of
 * this machine. The same rules as the replay's (trace-format/tf_inc.c
 * tf_inc_inline, FORMAT.md 11.1): every include directive is replaced by
 * the recorded header it resolves to, or by #error when none does, after
 * trigraphs, splices and %: are undone. */
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana_model_int.h"

/* tf_inc_fetch_fn: a recorded header's bytes, read with the reader @p ctx.
 * A blob the trace lacks, or a value of another type: the header is empty. */
static int ana_inc_fetch(void *ctx, const tf_value *hv, void **data, size_t *len)
{
    tf_reader *r = ctx;
    char *p;
    size_t got;
    *data = NULL;
    *len = 0;
    if (hv->type == TF_BLOB) {
        if (hv->v.blob.size > TF_INC_OUT_MAX)
            return ANA_ERR_ARG;
        got = (size_t)hv->v.blob.size;
        p = malloc(got + 1);
        if (!p)
            return ANA_ERR_NOMEM;
        if (tf_reader_blob(r, &hv->v.blob, 0, p, got) != TF_OK) {
            free(p);
            return 0;   /* a missing blob: the header is empty */
        }
    } else if (hv->type == TF_BIN || hv->type == TF_STR) {
        got = hv->v.str.len;
        p = malloc(got + 1);
        if (!p)
            return ANA_ERR_NOMEM;
        memcpy(p, hv->v.str.ptr, got);
    } else {
        return 0;
    }
    *data = p;
    *len = got;
    return 1;
}

ana_status ana_source_inline(tf_reader *r, const char *src, const char *opts, const tf_value *headers,
                             char **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (!src)
        return ANA_OK;
    int ferr = 0;
    tf_inc_status st = tf_inc_inline(src, opts, headers, NULL, NULL, 0, ana_inc_fetch, r, out, outlen, NULL,
                                     &ferr);
    switch (st) {
    case TF_INC_OK:    return ANA_OK;
    case TF_INC_LIMIT: return ANA_ERR_ARG;
    case TF_INC_FETCH: return (ana_status)ferr;
    default:           return ANA_ERR_NOMEM;
    }
}
