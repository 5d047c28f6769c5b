/* cli_util.c — helpers shared by the subcommands: error lines, opening a
 * trace, human sizes and times, JSON strings and values. */
#include "tools/clrr/cli.h"
#include "tools/clrr/cli_progress.h"
#include <jansson.h>
#include "replayer/rpl.h"

#include <CL/cl.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *cli_cmd_name;

void cli_set_command(const char *name)
{
    cli_cmd_name = name;
}

static int64_t cli_t0_ns;

void cli_mark_start(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    cli_t0_ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t cli_started_ns(void)
{
    return cli_t0_ns;
}

void cli_print_usage(const cli_command *cmd, FILE *f)
{
    if (cmd->help)
        cmd->help(f);
    else if (cmd->usage)
        fputs(cmd->usage, f);
}

/* Formats the message into one line: control characters become spaces. */
static void cli_verr(const char *suffix, const char *fmt, va_list ap)
{
    char msg[2048];
    cli_progress_clear_all();   /* the line starts on a clean terminal line */
    vsnprintf(msg, sizeof msg, fmt, ap);
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    fflush(stdout);
    if (cli_cmd_name)
        fprintf(stderr, "clrr %s: %s%s\n", cli_cmd_name, msg, suffix);
    else
        fprintf(stderr, "clrr: %s%s\n", msg, suffix);
}

void cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_verr("", fmt, ap);
    va_end(ap);
}

int cli_usage_err(const char *fmt, ...)
{
    char hint[96];
    if (cli_cmd_name)
        snprintf(hint, sizeof hint, " (see 'clrr %s --help')", cli_cmd_name);
    else
        snprintf(hint, sizeof hint, " (see 'clrr --help')");
    va_list ap;
    va_start(ap, fmt);
    cli_verr(hint, fmt, ap);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_opt_err(char **argv, int c)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    if (c == ':')
        return cli_usage_err("option '%s' needs a value", arg);
    if (strncmp(arg, "--", 2) && optopt > 0x20 && optopt < 0x7f)
        return cli_usage_err("invalid option '-%c'", optopt);
    return cli_usage_err("invalid option '%s'", arg);
}

/* ------------------------------------------------------------ traces */

int cli_trace_err(tf_reader *r, const char *path, tf_status s)
{
    const char *detail = r ? tf_reader_error(r) : "";
    if (detail && *detail)
        cli_err("%s: %s: %s", path, tf_strerror(s), detail);
    else
        cli_err("%s: %s", path, tf_strerror(s));
    return CLI_EXIT_ERROR;
}

int cli_parse_u64(const char *s, uint64_t *v, int suffixes)
{
    char *end;
    if (!*s || *s == '-')
        return -1;
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    if (suffixes && *end) {
        unsigned sh = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
                      : *end == 'G' || *end == 'g' ? 30 : 0;
        if (!sh || end[1] || x > (UINT64_MAX >> sh))
            return -1;
        x <<= sh;
        end++;
    }
    if (*end)
        return -1;
    *v = x;
    return 0;
}

size_t cli_max_memory(void)
{
    const char *e = getenv("CLRR_MAX_MEMORY");
    uint64_t v = 0;
    if (!e || cli_parse_u64(e, &v, 1) < 0 || v < 4096 || v > SIZE_MAX)
        return 0;
    return (size_t)v;
}

int cli_check_env(void)
{
    const char *e = getenv("CLRR_MAX_MEMORY");
    uint64_t v = 0;
    if (e && (cli_parse_u64(e, &v, 1) < 0 || v < 4096 || v > SIZE_MAX))
        return cli_usage_err("CLRR_MAX_MEMORY takes a byte count (at least 4096; K, M, G suffixes), not '%s'", e);
    return CLI_EXIT_OK;
}

tf_reader *cli_open_trace(const char *path)
{
    tf_reader *r = NULL;
    tf_reader_opts ro = {.max_memory = cli_max_memory()};
    tf_status s = tf_reader_open(&r, path, &ro);
    if (s == TF_OK && r)
        return r;
    if (s == TF_OK)
        s = TF_ERR_FAILED;
    /* The detail often starts with the path already: do not repeat it. */
    const char *detail = tf_reader_open_error();
    size_t plen = strlen(path);
    if (detail && !strncmp(detail, path, plen) && detail[plen] == ':')
        detail += plen + 1 + (detail[plen + 1] == ' ');
    if (detail && *detail && strstr(detail, tf_strerror(s)))   /* it says so already */
        cli_err("%s: %s", path, detail);
    else if (detail && *detail)
        cli_err("%s: %s: %s", path, tf_strerror(s), detail);
    else
        cli_trace_err(r, path, s);
    tf_reader_close(r);
    return NULL;
}

const tf_reader_info *cli_trace_info(tf_reader *r)
{
    return tf_reader_get_info(r);
}

/* ------------------------------------------------------------ formatting */

char *cli_fmt_size(uint64_t bytes, char buf[CLI_FMT_CAP])
{
    static const char *units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (bytes < 1024) {
        snprintf(buf, CLI_FMT_CAP, "%" PRIu64 " B", bytes);
        return buf;
    }
    double v = (double)bytes;
    int u = -1;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, CLI_FMT_CAP, v < 10.0 ? "%.2f %s" : v < 100.0 ? "%.1f %s" : "%.0f %s",
             v, units[u]);
    return buf;
}

char *cli_fmt_ns(int64_t ns, char buf[CLI_FMT_CAP])
{
    const char *sign = "";
    uint64_t a = (uint64_t)ns;
    if (ns < 0) {
        sign = "-";
        a = -(uint64_t)ns;
    }
    double v = (double)a;
    if (a < 1000)
        snprintf(buf, CLI_FMT_CAP, "%s%" PRIu64 "ns", sign, a);
    else if (a < 1000000)
        snprintf(buf, CLI_FMT_CAP, "%s%.*fus", sign, a < 10000 ? 2 : 1, v / 1e3);
    else if (a < 1000000000)
        snprintf(buf, CLI_FMT_CAP, "%s%.*fms", sign, a < 10000000 ? 2 : 1, v / 1e6);
    else if (a < 60000000000ULL)
        snprintf(buf, CLI_FMT_CAP, "%s%.3fs", sign, v / 1e9);
    else
        snprintf(buf, CLI_FMT_CAP, "%s%" PRIu64 "m%04.1fs", sign, (uint64_t)(a / 60000000000ULL),
                 (double)(a % 60000000000ULL) / 1e9);
    return buf;
}

const char *cli_device_type_name(uint64_t type)
{
    if (type & CL_DEVICE_TYPE_GPU) return "GPU";
    if (type & CL_DEVICE_TYPE_CPU) return "CPU";
    if (type & CL_DEVICE_TYPE_ACCELERATOR) return "ACCELERATOR";
    if (type & CL_DEVICE_TYPE_CUSTOM) return "CUSTOM";
    return "OTHER";
}

char *cli_fmt_hash(const tf_blobref *ref, int ndigits, char buf[CLI_FMT_CAP + 4])
{
    static const char hex[] = "0123456789abcdef";
    if (ndigits > 32)
        ndigits = 32;
    for (int i = 0; i < ndigits; i++)
        buf[i] = hex[(ref->hash[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    buf[ndigits] = 0;
    return buf;
}

void cli_mismatch_print(const rpl_mismatch *m)
{
    printf("MISMATCH call #%" PRIu64 " %s %s", m->seq, m->function, m->what);
    if (m->object)
        printf(" (object #%" PRIu64 "%s%s)", m->object, m->writers[0] ? ", last written by " : "", m->writers);
    if (m->by_hash) {
        printf(": the %" PRIu64 " bytes' hash differs (recorded as a hash: no byte difference to show", m->size);
        if (m->undefined)
            printf("; %" PRIu64 " of them undefined, which a hash cannot skip", m->undefined);
        printf(")\n");
        return;
    }
    printf(": %" PRIu64 " of %" PRIu64 " %s differ, first at byte %" PRIu64 "\n", m->cmp.differ, m->cmp.elems,
           m->cmp.elem_size == 1 ? "bytes" : "elements", m->cmp.first);
}

/* ------------------------------------------------------------ JSON */

json_t *cli_json_text(const char *s, size_t len)
{
    if (!s)
        return json_null();
    /* jansson takes valid UTF-8 only: invalid bytes become U+FFFD first */
    if (tf_utf8_valid(s, len) == len)
        return json_stringn_nocheck(s, len);
    char *buf = malloc(len * 3 + 1);
    if (!buf)
        return NULL;
    json_t *v = json_stringn_nocheck(buf, tf_utf8_fix(buf, s, len));
    free(buf);
    return v;
}

json_t *cli_json_ctext(const char *s)
{
    return s ? cli_json_text(s, strlen(s)) : json_null();
}

json_t *cli_json_f64(double v)
{
    if (isnan(v))
        return json_string("NaN");
    if (isinf(v))
        return json_string(v > 0 ? "Infinity" : "-Infinity");
    return json_real(v);
}

json_t *cli_json_u64(uint64_t v)
{
    return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

int cli_json_put(FILE *f, json_t *v)
{
    int rc = v ? json_dumpf(v, f, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)) : -1;
    json_decref(v);
    return rc;
}

void cli_json_str(FILE *f, const char *s, size_t len)
{
    if (cli_json_put(f, cli_json_text(s, len)) < 0)
        fputs("null", f);   /* out of memory */
}

void cli_json_cstr(FILE *f, const char *s)
{
    if (s)
        cli_json_str(f, s, strlen(s));
    else
        fputs("null", f);
}

static void cli_json_hex(FILE *f, const void *data, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        putc(hex[p[i] >> 4], f);
        putc(hex[p[i] & 15], f);
    }
}

#define CLI_MAX_DEPTH 64

static void cli_json_value_d(FILE *f, const tf_value *v, int depth)
{
    if (!v) {
        fputs("null", f);
        return;
    }
    if (depth > CLI_MAX_DEPTH) {
        fputs("\"...\"", f);
        return;
    }
    switch (v->type) {
    case TF_NIL: fputs("null", f); break;
    case TF_BOOL: fputs(v->v.b ? "true" : "false", f); break;
    case TF_INT: fprintf(f, "%" PRId64, v->v.i); break;
    case TF_UINT: fprintf(f, "%" PRIu64, v->v.u); break;
    case TF_F64:
        if (isnan(v->v.f))
            fputs("\"NaN\"", f);
        else if (isinf(v->v.f))
            fputs(v->v.f > 0 ? "\"Infinity\"" : "\"-Infinity\"", f);
        else
            fprintf(f, "%.17g", v->v.f);
        break;
    case TF_STR: cli_json_str(f, v->v.str.ptr, v->v.str.len); break;
    case TF_BIN:
        fputs("{\"bin\":\"", f);
        cli_json_hex(f, v->v.str.ptr, v->v.str.len);
        fputs("\"}", f);
        break;
    case TF_BLOB:
        fputs("{\"blob\":\"", f);
        cli_json_hex(f, v->v.blob.hash, sizeof v->v.blob.hash);
        fprintf(f, "\",\"size\":%" PRIu64 "}", v->v.blob.size);
        break;
    case TF_ARRAY:
        putc('[', f);
        for (uint32_t i = 0; i < v->v.arr.n; i++) {
            if (i)
                putc(',', f);
            cli_json_value_d(f, &v->v.arr.items[i], depth + 1);
        }
        putc(']', f);
        break;
    case TF_MAP:
        putc('{', f);
        for (uint32_t i = 0; i < v->v.map.n; i++) {
            const tf_value *k = &v->v.map.keys[i];
            if (i)
                putc(',', f);
            if (k->type == TF_STR) {
                cli_json_str(f, k->v.str.ptr, k->v.str.len);
            } else {
                /* Keys must be strings: write the key's JSON text as one. */
                char *text = NULL;
                size_t tlen = 0;
                FILE *m = open_memstream(&text, &tlen);
                if (m) {
                    cli_json_value_d(m, k, depth + 1);
                    fclose(m);
                }
                cli_json_str(f, text ? text : "", text ? tlen : 0);
                free(text);
            }
            putc(':', f);
            cli_json_value_d(f, &v->v.map.vals[i], depth + 1);
        }
        putc('}', f);
        break;
    default:
        fputs("null", f);
        break;
    }
}

void cli_json_value(FILE *f, const tf_value *v)
{
    cli_json_value_d(f, v, 0);
}

/* A placeholder is the object {"\u0001":N}: jansson writes every other
 * '"' inside a string as \", so `{"\u0001":` never occurs in the text of
 * a string, and the document's own keys are the emitter's. */
#define CLI_JRAW_KEY "\x01"
#define CLI_JRAW_TEXT "{\"\\u0001\":"

json_t *cli_json_recorded(cli_json_doc *d, const tf_value *v)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        const tf_value **nv = realloc(d->v, cap * sizeof *nv);
        if (!nv)
            return NULL;
        d->v = nv;
        d->cap = cap;
    }
    json_t *o = json_object();
    if (!o || json_object_set_new(o, CLI_JRAW_KEY, json_integer((json_int_t)d->n)) < 0) {
        json_decref(o);
        return NULL;
    }
    d->v[d->n++] = v;
    return o;
}

int cli_json_put_doc(FILE *f, json_t *doc, cli_json_doc *d)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(doc);
    int rc = -1;
    if (text) {
        const char *p = text, *q;
        size_t klen = strlen(CLI_JRAW_TEXT);
        while ((q = strstr(p, CLI_JRAW_TEXT)) != NULL) {
            char *end;
            unsigned long long i = strtoull(q + klen, &end, 10);
            fwrite(p, 1, (size_t)(q - p), f);
            if (*end == '}' && i < d->n) {
                cli_json_value(f, d->v[i]);
                p = end + 1;
            } else {   /* not one of ours (cannot happen): as it is */
                fwrite(q, 1, klen, f);
                p = q + klen;
            }
        }
        fputs(p, f);
        free(text);
        rc = 0;
    }
    free(d->v);
    d->v = NULL;
    d->n = d->cap = 0;
    return rc;
}

int cli_one_file(int argc, char **argv, const char **path)
{
    *path = NULL;
    if (optind >= argc)
        return cli_usage_err("missing trace file");
    if (optind + 1 < argc)
        return cli_usage_err("unexpected argument '%s'", argv[optind + 1]);
    *path = argv[optind];
    return CLI_EXIT_OK;
}

int cli_split_method(const char *name)
{
    return !strcmp(name, "fixed-point") ? RPL_SPLIT_FIXED_POINT : !strcmp(name, "broyden") ? RPL_SPLIT_BROYDEN : -1;
}
