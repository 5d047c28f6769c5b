/* cmd_info.c — `clrr info FILE [--json]`: what a trace holds. Reads the ENV
 * record, streams every item once (bounded memory: one counter per
 * signature), and asks the reader for the container totals. */
#include "tools/clrr/cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/clrr/info_int.h"
#include "tools/clrr/show_int.h"

static const char cli_info_usage[] =
    "Usage: clrr info FILE|DIR [--json]\n"
    "Summarize a trace: the recorded command and devices, counts of calls, kernel\n"
    "launches and transfers, bytes moved each way, durations, storage and\n"
    "compression, and the most frequent functions.\n"
    "A recording of several processes is a set of traces, one per process:\n"
    "FILE's siblings FILE.PID.clrr (listed after FILE's summary), or every\n"
    "*.clrr of DIR (`clrr record -o DIR/`): then one line per process (pid,\n"
    "parent, start, size, trace, command).\n"
    "\n"
    "Options:\n"
    "  --json         one JSON object with the same facts\n"
    "  -h, --help     show this help\n"
    "\n"
    "Exit status: 0 ok, 2 usage error, 3 the trace cannot be read (DIR: one of its\n"
    "traces cannot be read; the others are listed; one line on stderr).\n";

/* Prefixes of the function names that count as transfers. */
static const char *const cli_transfer_prefixes[] = {
    "clEnqueueRead", "clEnqueueWrite", "clEnqueueCopy", "clEnqueueFill",
    "clEnqueueMap", "clEnqueueUnmap", "clEnqueueSVMMemcpy", "clEnqueueSVMMemFill",
    "clEnqueueSVMMap", "clEnqueueSVMUnmap",
};

static int cli_is_transfer(const char *fn)
{
    for (size_t i = 0; i < sizeof cli_transfer_prefixes / sizeof cli_transfer_prefixes[0]; i++)
        if (!strncmp(fn, cli_transfer_prefixes[i], strlen(cli_transfer_prefixes[i])))
            return 1;
    return 0;
}

static int cli_is_launch(const char *fn)
{
    return !strcmp(fn, "clEnqueueNDRangeKernel") || !strcmp(fn, "clEnqueueTask");
}

/* ------------------------------------------------------------ per function */

/* Open-addressing table: signature id -> count. */
static int cli_fn_add(cli_info_stats *st, const tf_sig *sig)
{
    if (st->nfn * 2 >= st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 256;
        cli_fn_count *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < st->cap; i++) {
            if (!st->fns[i].name)
                continue;
            size_t h = (st->fns[i].id * 2654435761u) & (cap - 1);
            while (t[h].name)
                h = (h + 1) & (cap - 1);
            t[h] = st->fns[i];
        }
        free(st->fns);
        st->fns = t;
        st->cap = cap;
    }
    size_t h = (sig->id * 2654435761u) & (st->cap - 1);
    while (st->fns[h].name && st->fns[h].id != sig->id)
        h = (h + 1) & (st->cap - 1);
    if (!st->fns[h].name) {
        st->fns[h].name = sig->name ? sig->name : "?";
        st->fns[h].id = sig->id;
        st->nfn++;
    }
    st->fns[h].count++;
    return 0;
}

static int cli_fn_by_name(const void *a, const void *b)
{
    const cli_fn_count *x = a, *y = b;
    if (!x->name || !y->name)
        return !x->name - !y->name;
    return strcmp(x->name, y->name);
}

static int cli_fn_by_count(const void *a, const void *b)
{
    const cli_fn_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* Compacts the table into st->fns[0..nfn), one entry per function name
 * (signatures of the same name merged), most frequent first. */
static void cli_fn_finish(cli_info_stats *st)
{
    if (!st->fns)
        return;
    qsort(st->fns, st->cap, sizeof *st->fns, cli_fn_by_name);
    size_t n = 0;
    for (size_t i = 0; i < st->cap && st->fns[i].name; i++) {
        if (n && !strcmp(st->fns[n - 1].name, st->fns[i].name))
            st->fns[n - 1].count += st->fns[i].count;
        else
            st->fns[n++] = st->fns[i];
    }
    st->nfn = n;
    qsort(st->fns, n, sizeof *st->fns, cli_fn_by_count);
}

/* `clrr info DIR`: the processes of a recording made with -o DIR/. */
static int cli_info_dir(const char *path, int json)
{
    cli_trace_set set;
    if (cli_set_find(path, 1, &set)) {
        cli_err("%s: cannot read the directory: %s", path, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    if (!set.n) {
        cli_err("%s: no traces (*.clrr) in this directory", path);
        return CLI_EXIT_ERROR;
    }
    size_t bad = cli_set_read(&set);
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "schema", json_string("clrr-info-set/1"));
        json_object_set_new(o, "set", cli_json_ctext(path));
        json_object_set_new(o, "processes", cli_set_json(&set));
        if (cli_json_put(stdout, o) < 0)
            cli_err("info: out of memory");
        else
            putchar('\n');
    } else {
        printf("set        %s: %zu trace%s, one per process\n", path, set.n, set.n == 1 ? "" : "s");
        cli_set_print_human(stdout, &set);
    }
    if (bad)
        cli_err("%s: %zu of %zu traces unreadable (listed)", path, bad, set.n);
    cli_set_free(&set);
    return bad ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

/* ------------------------------------------------------------ streaming */

/* A read-back recorded as its hash (FORMAT.md 11.4): counted with its length. */
static void cli_info_hashed(cli_info_stats *st, const tf_value *v)
{
    tf_blobref r;
    if (v && tf_value_hashref(v, &r)) {
        st->hashed_reads++;
        st->hashed_bytes += r.size;
    }
}

static void cli_info_call(cli_info_stats *st, const tf_call *c)
{
    st->calls++;
    if (!c->complete)
        st->incomplete++;
    else if (cli_show_call_failed(c, NULL))
        st->failed++;
    if (!st->have_time || c->t_begin < st->t_first)
        st->t_first = c->t_begin;
    int64_t last = c->complete ? c->t_end : c->t_begin;
    if (!st->have_time || last > st->t_last)
        st->t_last = last;
    st->have_time = 1;
    const tf_sig *sig = c->sig;
    if (!sig)
        return;
    if (cli_fn_add(st, sig))
        st->oom = 1;
    const char *fn = sig->name ? sig->name : "";
    if (cli_is_launch(fn))
        st->launches++;
    if (cli_is_transfer(fn))
        st->transfers++;
    for (uint32_t i = 0; i < sig->nparams; i++) {
        if (c->args)
            st->h2d += cli_value_data_bytes(&c->args[i], &st->blob_refs);
        if (c->outs) {
            st->d2h += cli_value_data_bytes(&c->outs[i], &st->blob_refs);
            cli_info_hashed(st, &c->outs[i]);
        }
    }
    cli_info_hashed(st, tf_map_get(c->post, "data"));
    st->h2d += cli_value_data_bytes(c->pre, &st->blob_refs);
    st->d2h += cli_value_data_bytes(c->post, &st->blob_refs);
}

static void cli_info_item(cli_info_stats *st, const tf_item *it)
{
    switch (it->type) {
    case TF_ITEM_CALL:
        cli_info_call(st, &it->u.call);
        break;
    case TF_ITEM_DEVTIME:
        st->devtimes++;
        if (it->u.devtime.end >= it->u.devtime.start && it->u.devtime.start)
            st->devtime_ns += it->u.devtime.end - it->u.devtime.start;
        break;
    case TF_ITEM_DATA:
        st->data_items++;
        st->d2h += cli_value_data_bytes(&it->u.data.value, &st->blob_refs);
        cli_info_hashed(st, &it->u.data.value);
        break;
    case TF_ITEM_NOTE:
        st->notes++;
        break;
    default:
        break;
    }
}

static int cli_info_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int json = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'h': fputs(cli_info_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    int urc = cli_one_file(argc, argv, &path);
    if (urc != CLI_EXIT_OK)
        return urc;
    struct stat dst;
    if (stat(path, &dst) == 0 && S_ISDIR(dst.st_mode))
        return cli_info_dir(path, json);
    tf_reader *r = cli_open_trace(path);
    if (!r)
        return CLI_EXIT_ERROR;

    int rc = CLI_EXIT_OK;
    cli_info_stats st = { 0 };
    tf_item it;
    tf_status s;
    cli_binonly_env(&st.bo, tf_reader_env(r));
    while ((s = tf_reader_next(r, &it)) == TF_OK) {
        cli_info_item(&st, &it);
        cli_binonly_item(&st.bo, &it);
    }
    if (s != TF_END) {
        rc = cli_trace_err(r, path, s);
        goto out;
    }
    if ((s = tf_reader_scan(r)) != TF_OK && s != TF_END) {
        rc = cli_trace_err(r, path, s);
        goto out;
    }
    if (st.oom) {
        cli_err("%s: out of memory counting functions", path);
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    cli_fn_finish(&st);
    st.path = path;
    st.info = cli_trace_info(r);
    st.env = tf_reader_env(r);
    cli_trace_set set = { 0 };
    if (cli_set_find(path, 0, &set) == 0 && set.n > 1) {
        cli_set_read(&set);
        st.set = &set;
    }
    if (json)
        cli_info_print_json(stdout, &st);
    else
        cli_info_print_human(stdout, &st);
    cli_set_free(&set);
out:
    cli_binonly_free(&st.bo);
    free(st.fns);
    tf_reader_close(r);
    return rc;
}

const cli_command cli_cmd_info = {
    "info", "summarize a trace: command, devices, counts, bytes, durations, storage",
    cli_info_usage, cli_info_run, NULL,
};
