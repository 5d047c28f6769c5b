/* tf_util.c — status names, the error-message helpers behind TF_FAIL
 * and TF_FORWARD, and the byte shuffle of codec 2. */
#include "trace-format/tf_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *tf_strerror(tf_status s)
{
    switch (s) {
    case TF_OK:            return "success";
    case TF_END:           return "end of stream";
    case TF_ERR_IO:        return "I/O error";
    case TF_ERR_NOMEM:     return "out of memory";
    case TF_ERR_NOT_TRACE: return "not a clrr trace";
    case TF_ERR_VERSION:   return "unsupported trace format version";
    case TF_ERR_CORRUPT:   return "corrupt trace";
    case TF_ERR_LIMIT:     return "trace exceeds a reader limit";
    case TF_ERR_ARG:       return "invalid argument";
    case TF_ERR_NOT_FOUND: return "not found in the trace";
    case TF_ERR_FAILED:    return "trace writer failed earlier";
    }
    return "unknown status";
}

void tf_err_clear(tf_err *e)
{
    e->msg[0] = '\0';
    e->where_noted = 0;
}

void tf_err_set(tf_err *e, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    e->where_noted = 0;
}

void tf_err_where(tf_err *e, tf_status st, const char *file, int line, const char *expr)
{
    size_t n;

    if (e->where_noted)
        return;
    if (e->msg[0] == '\0')
        snprintf(e->msg, sizeof(e->msg), "%s", tf_strerror(st));
    /* the source location is for us, not for users: only with CLRR_DEBUG */
    n = strlen(e->msg);
    if (n < sizeof(e->msg) && getenv("CLRR_DEBUG"))
        snprintf(e->msg + n, sizeof(e->msg) - n, " [%s:%d: %s]", file, line, expr);
    e->where_noted = 1;
}

/* Plain loops: with restrict, gcc -O2 vectorizes them (33.9 GB/s one way
 * and 55.9 the other on this VM, for 1 MiB in cache), far faster than the
 * compression they serve. */
void tf_shuffle4(uint8_t *restrict dst, const uint8_t *restrict src, size_t n)
{
    size_t m = n / 4, i;

    for (i = 0; i < m; i++) {
        dst[i] = src[4 * i];
        dst[m + i] = src[4 * i + 1];
        dst[2 * m + i] = src[4 * i + 2];
        dst[3 * m + i] = src[4 * i + 3];
    }
    memcpy(dst + 4 * m, src + 4 * m, n - 4 * m);
}

void tf_unshuffle4(uint8_t *restrict dst, const uint8_t *restrict src, size_t n)
{
    size_t m = n / 4, i;

    for (i = 0; i < m; i++) {
        dst[4 * i] = src[i];
        dst[4 * i + 1] = src[m + i];
        dst[4 * i + 2] = src[2 * m + i];
        dst[4 * i + 3] = src[3 * m + i];
    }
    memcpy(dst + 4 * m, src + 4 * m, n - 4 * m);
}
