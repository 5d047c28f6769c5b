/* info_print.c — `clrr info` output: the human summary and the JSON object.
 * Everything read from the ENV map is untrusted: missing keys and wrong
 * types are tolerated, strings are sanitized before they reach a terminal. */
#include "tools/clrr/info_int.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define CLI_TOP_FUNCTIONS 10

/* ------------------------------------------------------------ ENV access */

static const tf_value *cli_env_str(const tf_value *m, const char *key)
{
    const tf_value *v = tf_map_get(m, key);
    return v && v->type == TF_STR ? v : NULL;
}

static int cli_env_u64(const tf_value *m, const char *key, uint64_t *out)
{
    const tf_value *v = tf_map_get(m, key);
    return v && v->type != TF_BOOL && tf_value_u64(v, out);
}

static const tf_value *cli_env_array(const tf_value *m, const char *key)
{
    const tf_value *v = tf_map_get(m, key);
    return v && v->type == TF_ARRAY ? v : NULL;
}

/* A string with control characters shown as '?', at most 200 bytes. */
static void cli_put(FILE *f, const tf_value *s, const char *fallback)
{
    if (!s || s->type != TF_STR) {
        fputs(fallback, f);
        return;
    }
    uint32_t n = s->v.str.len < 200 ? s->v.str.len : 200;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s->v.str.ptr[i];
        putc(c < 0x20 || c == 0x7f ? '?' : c, f);
    }
    if (n < s->v.str.len)
        fputs("…", f);
}

/* A command-line word, quoted for a POSIX shell when it needs to be. */
static void cli_put_word(FILE *f, const tf_value *s)
{
    if (!s || s->type != TF_STR) {
        fputs("?", f);
        return;
    }
    const char *p = s->v.str.ptr;
    uint32_t n = s->v.str.len;
    int plain = n > 0;
    for (uint32_t i = 0; i < n && plain; i++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+-@%",
                       p[i]) && p[i];
    if (plain) {
        fwrite(p, 1, n, f);
        return;
    }
    putc('\'', f);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\'')
            fputs("'\\''", f);
        else
            putc(c < 0x20 || c == 0x7f ? '?' : c, f);
    }
    putc('\'', f);
}

static int cli_fmt_unix(uint64_t ns, char *buf, size_t cap, int iso)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        return 0;
    return strftime(buf, cap, iso ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S UTC", &tm) > 0;
}

static double cli_ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

/* ------------------------------------------------------------ human */

static void cli_info_env_human(FILE *f, const tf_value *env)
{
    uint64_t u;
    char tb[64];
    const tf_value *cmd = cli_env_array(env, "cmdline");
    fputs("command    ", f);
    if (!cmd || !cmd->v.arr.n)
        fputs("(unknown)", f);
    for (uint32_t i = 0; cmd && i < cmd->v.arr.n; i++) {
        if (i)
            putc(' ', f);
        cli_put_word(f, &cmd->v.arr.items[i]);
    }
    fputs("\nrecorded   ", f);
    if (cli_env_u64(env, "start_unix_ns", &u) && cli_fmt_unix(u, tb, sizeof tb, 0))
        fputs(tb, f);
    else
        fputs("(time unknown)", f);
    if (cli_env_str(env, "hostname")) {
        fputs(" on ", f);
        cli_put(f, cli_env_str(env, "hostname"), "");
    }
    if (cli_env_u64(env, "pid", &u))
        fprintf(f, ", pid %" PRIu64, u);
    if (cli_env_u64(env, "ppid", &u))
        fprintf(f, " (parent %" PRIu64 ")", u);
    fputs(", by ", f);
    cli_put(f, cli_env_str(env, "recorder"), "(unknown recorder)");
    if (cli_env_str(env, "layer_mode")) {
        fputs(" (", f);
        cli_put(f, cli_env_str(env, "layer_mode"), "");
        putc(')', f);
    }
    if (cli_env_str(env, "host_clock")) {
        fputs(", host clock ", f);
        cli_put(f, cli_env_str(env, "host_clock"), "");
    }
    putc('\n', f);
    const tf_value *plats = cli_env_array(env, "platforms");
    for (uint32_t p = 0; plats && p < plats->v.arr.n; p++) {
        const tf_value *pl = &plats->v.arr.items[p];
        fputs("platform   ", f);
        if (cli_env_u64(pl, "id", &u))
            fprintf(f, "#%" PRIu64 " ", u);
        cli_put(f, cli_env_str(pl, "name"), "(unnamed)");
        fputs(", ", f);
        cli_put(f, cli_env_str(pl, "version"), "(version unknown)");
        putc('\n', f);
        const tf_value *devs = cli_env_array(pl, "devices");
        for (uint32_t d = 0; devs && d < devs->v.arr.n; d++) {
            const tf_value *dv = &devs->v.arr.items[d];
            char sz[CLI_FMT_CAP];
            fputs("  device   ", f);
            if (cli_env_u64(dv, "id", &u))
                fprintf(f, "#%" PRIu64 " ", u);
            if (cli_env_u64(dv, "type", &u))
                fprintf(f, "%s ", cli_device_type_name(u));
            cli_put(f, cli_env_str(dv, "name"), "(unnamed)");
            if (cli_env_u64(dv, "compute_units", &u))
                fprintf(f, ", %" PRIu64 " compute units", u);
            if (cli_env_u64(dv, "global_mem", &u))
                fprintf(f, ", %s", cli_fmt_size(u, sz));
            if (cli_env_u64(dv, "max_wg_size", &u))
                fprintf(f, ", max work-group %" PRIu64, u);
            if (cli_env_str(dv, "opencl_c_version")) {
                fputs(", ", f);
                cli_put(f, cli_env_str(dv, "opencl_c_version"), "");
            }
            putc('\n', f);
        }
    }
    const tf_value *ov = env ? tf_map_get(env, "device_override") : NULL;   /* clrr record --device */
    if (ov && ov->type == TF_MAP) {
        fputs("override   --device ", f);
        cli_put(f, cli_env_str(ov, "spec"), "?");
        if (cli_env_str(ov, "error")) {
            fputs(" matched nothing (", f);
            cli_put(f, cli_env_str(ov, "error"), "");
            fputs("): the application chose its devices itself\n", f);
        } else {
            fputs(": ", f);
            cli_put(f, cli_env_str(ov, "device"), "(unnamed)");
            fputs(" (", f);
            cli_put(f, cli_env_str(ov, "platform"), "");
            fputs(") was the application's first platform and device\n", f);
        }
    }
}

void cli_info_print_human(FILE *f, const cli_info_stats *st)
{
    const tf_reader_info *in = st->info;
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP], c[CLI_FMT_CAP];
    fprintf(f, "trace      %s: %s, format %u.%u, %s\n", st->path, cli_fmt_size(in->file_bytes, a),
            (unsigned)in->major, (unsigned)in->minor, in->has_index ? "indexed" : "no index");
    if (in->truncated)
        fprintf(f, "           TRUNCATED: the recording ended abruptly (killed or crashed);"
                   " %s readable\n", cli_fmt_size(in->valid_bytes, a));
    else if (!in->has_index)   /* FORMAT.md 6: only a clean close writes the index */
        fputs("           INCOMPLETE: no index: the recording did not close (killed, crashed or out of space);"
              " every chunk readable\n", f);
    if (st->env)
        cli_info_env_human(f, st->env);
    else
        fputs("command    (no environment record)\n", f);
    fprintf(f, "calls      %" PRIu64, st->calls);
    if (st->incomplete)
        fprintf(f, " (%" PRIu64 " never returned)", st->incomplete);
    fprintf(f, ", %zu distinct functions\n", st->nfn);
    if (st->failed)
        fprintf(f, "failed     %" PRIu64 " of %" PRIu64 " calls failed ('clrr show %s errors' lists them)\n", st->failed,
                st->calls, st->path ? st->path : "TRACE");
    fprintf(f, "kernels    %" PRIu64 " launches\n", st->launches);
    fprintf(f, "transfers  %" PRIu64 "; data host→device %s, device→host %s\n", st->transfers,
            cli_fmt_size(st->h2d, a), cli_fmt_size(st->d2h, b));
    fprintf(f, "device     %" PRIu64 " timings, %s summed device time", st->devtimes,
            cli_fmt_ns((int64_t)st->devtime_ns, a));
    uint64_t timing = 1, every = 0;
    if (st->env && cli_env_u64(st->env, "device_timing", &timing) && !timing)
        fputs(" (device timing off)", f);
    else if (st->env && cli_env_u64(st->env, "timing_interval_us", &every) && every)
        fprintf(f, " (sampled: each kernel's or buffer's commands past 16, one per %" PRIu64 " us)", every);
    putc('\n', f);
    if (st->data_items || st->notes)
        fprintf(f, "late items %" PRIu64 " data, %" PRIu64 " notes\n", st->data_items, st->notes);
    if (st->hashed_reads)
        fprintf(f, "hashed     %" PRIu64 " read-backs (%s) recorded as hashes: replays verify them exactly, "
                "no tolerance or byte diff\n", st->hashed_reads, cli_fmt_size(st->hashed_bytes, a));
    fprintf(f, "duration   %s (first call to last return)\n",
            cli_fmt_ns(st->have_time ? st->t_last - st->t_first : 0, a));
    fprintf(f, "records    %s raw, %s stored in %" PRIu64 " chunks\n",
            cli_fmt_size(in->record_bytes_raw, a), cli_fmt_size(in->record_bytes_stored, b),
            in->record_chunks);
    fprintf(f, "blobs      %" PRIu64 ": %s referenced, %s unique, %s stored", in->blobs,
            cli_fmt_size(st->blob_refs, a), cli_fmt_size(in->blob_bytes_raw, b),
            cli_fmt_size(in->blob_bytes_stored, c));
    if (in->blob_chunks_shuffled)
        fprintf(f, " (%" PRIu64 " of %" PRIu64 " pieces byte-shuffled)", in->blob_chunks_shuffled,
                in->blob_chunks);
    putc('\n', f);
    fprintf(f, "ratios     compression %.2fx, dedup %.2fx\n",
            cli_ratio(in->record_bytes_raw + in->blob_bytes_raw,
                      in->record_bytes_stored + in->blob_bytes_stored),
            cli_ratio(st->blob_refs, in->blob_bytes_raw));
    if (st->bo.programs)
        cli_binonly_line(f, "programs   ", &st->bo);
    if (st->nfn)
        fputs("top functions\n", f);
    for (size_t i = 0; i < st->nfn && i < CLI_TOP_FUNCTIONS; i++)
        fprintf(f, "  %10" PRIu64 "  %s\n", st->fns[i].count, st->fns[i].name);
    if (st->set && st->set->n > 1) {
        fprintf(f, "processes  %zu traces of one recording (one per process; `clrr info` each for its calls)\n",
                st->set->n);
        cli_set_print_human(f, st->set);
    }
}

/* ------------------------------------------------------------ JSON */

static void cli_json_env_field(json_t *o, cli_json_doc *d, const tf_value *env, const char *key)
{
    CLI_JSET(o, key, cli_json_recorded(d, env ? tf_map_get(env, key) : NULL));
}

void cli_info_print_json(FILE *f, const cli_info_stats *st)
{
    const tf_reader_info *in = st->info;
    cli_json_doc d = {0};
    json_t *o = json_object();
    char fmt[32];
    CLI_JSET(o, "schema", json_string("clrr-info/1"));
    CLI_JSET(o, "file", cli_json_ctext(st->path));
    CLI_JSET(o, "file_bytes", cli_json_u64(in->file_bytes));
    snprintf(fmt, sizeof fmt, "%u.%u", (unsigned)in->major, (unsigned)in->minor);
    CLI_JSET(o, "format", json_string(fmt));
    CLI_JSET(o, "has_index", json_boolean(in->has_index));
    CLI_JSET(o, "truncated", json_boolean(in->truncated));
    CLI_JSET(o, "valid_bytes", cli_json_u64(in->valid_bytes));
    static const char *const keys[] = { "recorder", "cmdline", "pid", "ppid", "hostname", "layer_mode",
                                        "host_clock", "start_unix_ns", "device_override" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cli_json_env_field(o, &d, st->env, keys[i]);
    uint64_t u;
    char tb[64];
    if (st->env && cli_env_u64(st->env, "start_unix_ns", &u) && cli_fmt_unix(u, tb, sizeof tb, 1))
        CLI_JSET(o, "recorded_at", cli_json_ctext(tb));
    else
        CLI_JSET(o, "recorded_at", json_null());
    cli_json_env_field(o, &d, st->env, "platforms");
    CLI_JSET(o, "calls", cli_json_u64(st->calls));
    CLI_JSET(o, "failed_calls", cli_json_u64(st->failed));
    CLI_JSET(o, "incomplete_calls", cli_json_u64(st->incomplete));
    CLI_JSET(o, "functions", cli_json_u64(st->nfn));
    CLI_JSET(o, "kernel_launches", cli_json_u64(st->launches));
    CLI_JSET(o, "transfers", cli_json_u64(st->transfers));
    CLI_JSET(o, "bytes_host_to_device", cli_json_u64(st->h2d));
    CLI_JSET(o, "bytes_device_to_host", cli_json_u64(st->d2h));
    CLI_JSET(o, "device_timings", cli_json_u64(st->devtimes));
    CLI_JSET(o, "device_time_ns", cli_json_u64(st->devtime_ns));
    CLI_JSET(o, "data_items", cli_json_u64(st->data_items));
    CLI_JSET(o, "notes", cli_json_u64(st->notes));
    CLI_JSET(o, "hashed_reads", cli_json_u64(st->hashed_reads));
    CLI_JSET(o, "hashed_read_bytes", cli_json_u64(st->hashed_bytes));
    CLI_JSET(o, "duration_ns", json_integer((json_int_t)(st->have_time ? st->t_last - st->t_first : 0)));
    CLI_JSET(o, "record_chunks", cli_json_u64(in->record_chunks));
    CLI_JSET(o, "blob_chunks", cli_json_u64(in->blob_chunks));
    CLI_JSET(o, "blob_chunks_shuffled", cli_json_u64(in->blob_chunks_shuffled));
    CLI_JSET(o, "record_bytes_raw", cli_json_u64(in->record_bytes_raw));
    CLI_JSET(o, "record_bytes_stored", cli_json_u64(in->record_bytes_stored));
    CLI_JSET(o, "blobs", cli_json_u64(in->blobs));
    CLI_JSET(o, "blob_bytes_unique", cli_json_u64(in->blob_bytes_raw));
    CLI_JSET(o, "blob_bytes_stored", cli_json_u64(in->blob_bytes_stored));
    CLI_JSET(o, "blob_bytes_referenced", cli_json_u64(st->blob_refs));
    CLI_JSET(o, "compression_ratio", cli_json_f64(cli_ratio(in->record_bytes_raw + in->blob_bytes_raw,
                                                           in->record_bytes_stored + in->blob_bytes_stored)));
    CLI_JSET(o, "dedup_ratio", cli_json_f64(cli_ratio(st->blob_refs, in->blob_bytes_raw)));
    CLI_JSET(o, "binary_only_programs", cli_json_u64(st->bo.programs));
    CLI_JSET(o, "binary_only_devices", cli_json_ctext(st->bo.devices));
    json_t *a = json_array();
    for (size_t i = 0; i < st->nfn; i++) {
        json_t *e = json_object();
        CLI_JSET(e, "fn", cli_json_ctext(st->fns[i].name));
        CLI_JSET(e, "count", cli_json_u64(st->fns[i].count));
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "function_counts", a);
    if (st->set && st->set->n > 1)
        CLI_JSET(o, "processes", cli_set_json(st->set));
    if (cli_json_put_doc(f, o, &d) < 0)
        cli_err("info: out of memory");
    else
        putc('\n', f);
}

/* ------------------------------------------------------------ trace sets */

static int cli_set_add(cli_trace_set *s, size_t *cap, const char *dir, const char *name)
{
    if (s->n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        cli_set_member *m = realloc(s->m, c * sizeof *m);
        if (!m)
            return -1;
        s->m = m;
        *cap = c;
    }
    cli_set_member *m = &s->m[s->n];
    memset(m, 0, sizeof *m);
    if (!dir)
        m->path = strdup(name);
    else if (asprintf(&m->path, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] != '/' ? "/" : "", name) < 0)
        m->path = NULL;
    if (!m->path)
        return -1;
    s->n++;
    return 0;
}

static int cli_set_by_path(const void *a, const void *b)
{
    return strcmp(((const cli_set_member *)a)->path, ((const cli_set_member *)b)->path);
}

/* Whether @p name is STEM.<digits>EXT (@p ext "" or ".clrr"). */
static int cli_set_sibling(const char *name, const char *stem, size_t sl, const char *ext)
{
    size_t n = strlen(name), el = strlen(ext);
    if (n < sl + 2 + el || strncmp(name, stem, sl) || name[sl] != '.' || strcmp(name + n - el, ext))
        return 0;
    for (size_t i = sl + 1; i < n - el; i++)
        if (name[i] < '0' || name[i] > '9')
            return 0;
    return 1;
}

int cli_set_find(const char *path, int is_dir, cli_trace_set *s)
{
    size_t cap = 0;
    struct stat st;
    s->m = NULL;
    s->n = 0;
    char *dcopy = strdup(path), *bcopy = strdup(path);
    if (!dcopy || !bcopy) {
        free(dcopy);
        free(bcopy);
        errno = ENOMEM;
        return -1;
    }
    const char *dir = is_dir ? path : dirname(dcopy);
    const char *base = basename(bcopy);
    const char *dot = strrchr(base, '.');
    size_t sl = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    const char *ext = dot && dot != base ? dot : "";
    int rc = 0;
    if (!is_dir && stat(path, &st) == 0 && S_ISREG(st.st_mode) && cli_set_add(s, &cap, NULL, path))
        rc = -1;
    size_t first = s->n;
    DIR *d = opendir(dir);
    if (!d) {
        if (is_dir)
            rc = -1;
    }
    struct dirent *e;
    while (rc == 0 && d && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        int match = is_dir ? n > 5 && !strcmp(e->d_name + n - 5, ".clrr")
                           : cli_set_sibling(e->d_name, base, sl, ext);
        if (!match)
            continue;
        char *full = NULL;
        if (asprintf(&full, "%s/%s", dir, e->d_name) < 0) {
            rc = -1;
            break;
        }
        int reg = stat(full, &st) == 0 && S_ISREG(st.st_mode);
        free(full);
        if (reg && cli_set_add(s, &cap, is_dir || strcmp(dir, ".") || strchr(path, '/') ? dir : NULL, e->d_name))
            rc = -1;
    }
    if (d)
        closedir(d);
    int err = errno;
    if (s->n > first)
        qsort(s->m + first, s->n - first, sizeof *s->m, cli_set_by_path);
    free(dcopy);
    free(bcopy);
    if (rc)
        cli_set_free(s);
    errno = err;
    return rc;
}

/* The printable command line of @p env into @p m->cmd. */
static void cli_set_cmd(cli_set_member *m, const tf_value *env)
{
    const tf_value *cmd = cli_env_array(env, "cmdline");
    size_t k = 0, cap = sizeof m->cmd - 1;
    for (uint32_t i = 0; cmd && i < cmd->v.arr.n && k < cap; i++) {
        const tf_value *w = &cmd->v.arr.items[i];
        if (i && k < cap)
            m->cmd[k++] = ' ';
        for (uint32_t j = 0; w->type == TF_STR && j < w->v.str.len && k < cap; j++) {
            unsigned char c = (unsigned char)w->v.str.ptr[j];
            m->cmd[k++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    m->cmd[k] = 0;
}

static int cli_set_by_start(const void *a, const void *b)
{
    const cli_set_member *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

size_t cli_set_read(cli_trace_set *s)
{
    size_t bad = 0;
    for (size_t i = 0; i < s->n; i++) {
        cli_set_member *m = &s->m[i];
        struct stat st;
        if (stat(m->path, &st) == 0)
            m->size = (uint64_t)st.st_size;
        tf_reader *r = NULL;
        tf_status rs = tf_reader_open(&r, m->path, NULL);
        if (rs != TF_OK) {
            snprintf(m->err, sizeof m->err, "%s", tf_reader_open_error()[0] ? tf_reader_open_error()
                                                                           : tf_strerror(rs));
        } else if ((rs = tf_reader_scan(r)) != TF_OK && rs != TF_END) {
            snprintf(m->err, sizeof m->err, "%s", tf_reader_error(r)[0] ? tf_reader_error(r) : tf_strerror(rs));
        } else {
            const tf_value *env = tf_reader_env(r);
            m->ok = 1;
            if (env) {
                cli_env_u64(env, "pid", &m->pid);
                cli_env_u64(env, "ppid", &m->ppid);
                cli_env_u64(env, "start_unix_ns", &m->start_ns);
                cli_set_cmd(m, env);
            }
        }
        bad += !m->ok;
        tf_reader_close(r);
    }
    if (s->n)
        qsort(s->m, s->n, sizeof *s->m, cli_set_by_start);
    return bad;
}

void cli_set_print_human(FILE *f, const cli_trace_set *s)
{
    char sz[CLI_FMT_CAP], tb[64];
    for (size_t i = 0; i < s->n; i++) {
        const cli_set_member *m = &s->m[i];
        if (!m->ok) {
            fprintf(f, "  unreadable  %s: %s\n", m->path, m->err);
            continue;
        }
        if (!m->start_ns || !cli_fmt_unix(m->start_ns, tb, sizeof tb, 0))
            snprintf(tb, sizeof tb, "?");
        fprintf(f, "  pid %-7" PRIu64 " parent %-7" PRIu64 " %s  %9s  %s  %s\n", m->pid, m->ppid, tb,
                cli_fmt_size(m->size, sz), m->path, m->cmd[0] ? m->cmd : "(no environment record)");
    }
}

json_t *cli_set_json(const cli_trace_set *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->n; i++) {
        const cli_set_member *m = &s->m[i];
        json_t *e = json_object();
        CLI_JSET(e, "file", cli_json_ctext(m->path));
        CLI_JSET(e, "pid", cli_json_u64(m->pid));
        CLI_JSET(e, "ppid", cli_json_u64(m->ppid));
        CLI_JSET(e, "start_unix_ns", cli_json_u64(m->start_ns));
        CLI_JSET(e, "bytes", cli_json_u64(m->size));
        CLI_JSET(e, "readable", json_boolean(m->ok));
        CLI_JSET(e, "error", cli_json_ctext(m->ok ? NULL : m->err));
        CLI_JSET(e, "cmdline", cli_json_ctext(m->cmd));
        json_array_append_new(a, e);
    }
    return a;
}

void cli_set_free(cli_trace_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->m[i].path);
    free(s->m);
    s->m = NULL;
    s->n = 0;
}
