/* tf_util.c — status names and the error-message helpers behind TF_FAIL
 * and TF_FORWARD. */
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
