/* ana_json.c — small output helpers shared by the analyzer's exports:
 * JSON strings (jansson: valid UTF-8 kept, invalid bytes as U+FFFD), and the short title of a command ("sobel_gx", "write img"). */
#include "analyzer/ana_graph_int.h"
#include "trace-format/tf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ana_json_strmax(FILE *f, const char *s, size_t len, size_t max)
{
    /* one encoder: jansson, after tf_utf8_fix() (as cli_json_text() in
     * tools/clrr, which the analyzer may not call) */
    int cut = max && len > max;
    size_t lim = cut ? max : len;
    char *buf = malloc(lim * 3 + 4);
    json_t *v = NULL;
    if (buf) {
        size_t n = tf_utf8_fix(buf, s, lim);
        if (cut) {
            memcpy(buf + n, "...", 3);
            n += 3;
        }
        v = json_stringn_nocheck(buf, n);
        free(buf);
    }
    if (!v || json_dumpf(v, f, JSON_ENCODE_ANY) < 0)
        fputs("null", f);   /* out of memory */
    json_decref(v);
}

void ana_json_str(FILE *f, const char *s, size_t len)
{
    ana_json_strmax(f, s, len, 0);
}

void ana_json_cstr(FILE *f, const char *s)
{
    if (s)
        ana_json_str(f, s, strlen(s));
    else
        fputs("null", f);
}

/* The label of the first memory range of @p c with access @p acc. */
static const char *ana_ref_label(const ana_model *m, const ana_cmd *c, int acc, char *dst, size_t cap)
{
    for (unsigned i = 0; i < c->nmem; i++)
        if (c->mem[i].access & acc)
            return ana_model_label(m, c->mem[i].object, dst, cap);
    dst[0] = '\0';
    return dst;
}

const char *ana_cmd_title(const ana_model *m, const ana_cmd *c, char *dst, size_t cap)
{
    char a[64], b[64];
    const char *kind = ana_cmd_kind_name((ana_cmd_kind)c->kind);
    switch (c->kind) {
    case ANA_CMD_KERNEL:
        ana_model_label(m, c->kernel, dst, cap);
        break;
    case ANA_CMD_READ: case ANA_CMD_MAP: case ANA_CMD_SVM_MAP: case ANA_CMD_MIGRATE:
    case ANA_CMD_SVM_MIGRATE:
        snprintf(dst, cap, "%s %s", kind, ana_ref_label(m, c, ANA_ACC_READ, a, sizeof a));
        break;
    case ANA_CMD_WRITE: case ANA_CMD_FILL: case ANA_CMD_SVM_FILL: case ANA_CMD_SVM_FREE:
        snprintf(dst, cap, "%s %s", kind, ana_ref_label(m, c, ANA_ACC_WRITE, a, sizeof a));
        break;
    case ANA_CMD_UNMAP: case ANA_CMD_SVM_UNMAP:
        snprintf(dst, cap, "%s %s", kind, ana_ref_label(m, c, ANA_ACC_RW, a, sizeof a));
        break;
    case ANA_CMD_COPY: case ANA_CMD_SVM_MEMCPY:
        ana_ref_label(m, c, ANA_ACC_READ, a, sizeof a);
        ana_ref_label(m, c, ANA_ACC_WRITE, b, sizeof b);
        snprintf(dst, cap, "%s %s%s%s", kind, a[0] ? a : "host", " -> ", b[0] ? b : "host");
        break;
    case ANA_CMD_FINISH: case ANA_CMD_FLUSH:
        snprintf(dst, cap, "%s %s", kind, ana_model_label(m, c->queue, a, sizeof a));
        break;
    case ANA_CMD_SET_EVENT:
        snprintf(dst, cap, "set %s", ana_model_label(m, c->event, a, sizeof a));
        break;
    default:
        snprintf(dst, cap, "%s", kind);
        break;
    }
    /* trace strings may hold anything: no control characters in a title
     * (bytes past ASCII stay: the JSON writer keeps valid UTF-8 and turns
     * the rest into U+FFFD, the DOT writer prints '?' for them) */
    for (char *p = dst; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
            *p = '?';
    return dst;
}
