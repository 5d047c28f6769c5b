/* cmd_stats.c — `clrr stats FILE [--json] [--top N]`: per kernel, per
 * transfer kind, per API function and per queue, from the trace model and
 * the kernel analysis (bytes by analysis). */
#include "tools/clrr/cli_ana.h"

#include <getopt.h>
#include <jansson.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char cli_stats_usage[] =
    "Usage: clrr stats FILE [--json] [--top N]\n"
    "Statistics of a trace: per kernel (launches, device time total/mean/min/max,\n"
    "work-items, bytes read and written by the kernel analysis), per transfer kind\n"
    "(count, bytes, device time, bandwidth), host time per API function, device\n"
    "busy time and idle gaps per queue, and the largest of each.\n"
    "\n"
    "Options:\n"
    "  --json         one JSON object (every kernel, transfer kind, function and\n"
    "                 queue; the N largest gaps)\n"
    "  --top N        rows of each top list (default 10)\n"
    "  -h, --help     show this help\n"
    "\n"
    "Exit status: 0 ok, 2 usage error, 3 error (one line on stderr).\n";

static double cli_gbps(uint64_t bytes, uint64_t ns)
{
    return ns ? (double)bytes / (double)ns : 0.0;   /* bytes per ns = GB/s */
}

static void cli_stats_human(FILE *f, const char *path, const ana_model *m, const ana_stats *s,
                            unsigned top)
{
    const ana_model_info *in = ana_model_get_info(m);
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP], c[CLI_FMT_CAP], d[CLI_FMT_CAP], e[CLI_FMT_CAP], w[CLI_FMT_CAP];
    fprintf(f, "trace      %s: %" PRIu64 " calls, %" PRIu64 " commands (%" PRIu64 " with device time),"
               " %" PRIu64 " kernel launches, %s\n", path, in->calls, s->commands, s->timed, s->launches,
            cli_fmt_ns(in->t_last - in->t_first, a));
    if (in->failed)
        fprintf(f, "failed     %" PRIu64 " of %" PRIu64 " calls failed ('clrr show %s errors' lists them)\n", in->failed,
                in->calls, path);
    fprintf(f, "device     kernels %s, transfers %s\n", cli_fmt_ns((int64_t)s->kernel_ns, a),
            cli_fmt_ns((int64_t)s->xfer_ns, b));
    if (s->nkernels)
        fprintf(f, "\nkernels (by device time)\n  %-24s %8s %10s %10s %10s %10s %12s %10s %10s\n", "name",
                "launches", "total", "mean", "min", "max", "work-items", "read", "written");
    for (size_t i = 0; i < s->nkernels && i < top; i++) {
        const ana_kernel_stats *k = &s->kernels[i];
        char part[48] = "";   /* sampled device timing: total and mean are of the timed ones */
        if (k->timed < k->launches)
            snprintf(part, sizeof part, "  (%" PRIu64 " timed)", k->timed);
        fprintf(f, "  %-24.24s %8" PRIu64 " %10s %10s %10s %10s %12" PRIu64 " %10s %10s%s%s\n", k->name,
                k->launches, cli_fmt_ns((int64_t)k->dev_total_ns, a),
                cli_fmt_ns(k->timed ? (int64_t)(k->dev_total_ns / k->timed) : 0, b),
                cli_fmt_ns((int64_t)k->dev_min_ns, c), cli_fmt_ns((int64_t)k->dev_max_ns, d), k->work_items,
                cli_fmt_size(k->bytes_read, e), cli_fmt_size(k->bytes_written, w),
                k->whole_ranges ? "  (some whole buffers)" : "", part);
    }
    if (s->nxfers)
        fprintf(f, "\ntransfers\n  %-12s %8s %12s %10s %12s\n", "kind", "count", "bytes", "time", "bandwidth");
    for (size_t i = 0; i < s->nxfers; i++) {
        const ana_xfer_stats *x = &s->xfers[i];
        fprintf(f, "  %-12s %8" PRIu64 " %12s %10s %9.2f GB/s\n", x->kind, x->count, cli_fmt_size(x->bytes, a),
                cli_fmt_ns((int64_t)x->dev_total_ns, b), cli_gbps(x->timed_bytes, x->dev_total_ns));
    }
    fprintf(f, "\nhost API (by total time)\n  %-36s %8s %10s %10s %10s\n", "function", "calls", "total",
            "mean", "max");
    for (unsigned i = 0; i < in->nfns && i < top; i++) {
        const ana_fn_time *t = ana_model_fn_time(m, i);
        fprintf(f, "  %-36.36s %8" PRIu64 " %10s %10s %10s\n", t->fn, t->calls, cli_fmt_ns((int64_t)t->total_ns, a),
                cli_fmt_ns(t->calls ? (int64_t)(t->total_ns / t->calls) : 0, b), cli_fmt_ns((int64_t)t->max_ns, c));
    }
    if (s->nqueues)
        fputs("\nqueues\n", f);
    for (size_t i = 0; i < s->nqueues; i++) {
        const ana_queue_stats *q = &s->queues[i];
        fprintf(f, "  queue #%" PRIu64 " (device #%" PRIu64 "): %" PRIu64 " commands, busy %s of %s span"
                   " (%.0f%%), idle %s in %" PRIu64 " gaps, largest %s%s\n", q->queue, q->device, q->commands,
                cli_fmt_ns((int64_t)q->busy_ns, a), cli_fmt_ns((int64_t)q->span_ns, b),
                q->span_ns ? 100.0 * (double)q->busy_ns / (double)q->span_ns : 0.0,
                cli_fmt_ns((int64_t)q->idle_ns, c), q->gaps, cli_fmt_ns((int64_t)q->max_gap_ns, d),
                q->timed < q->commands ? " (of its timed commands)" : "");
    }
    if (s->ngaps)
        fputs("\nlargest device idle gaps\n", f);
    for (size_t i = 0; i < s->ngaps && i < top; i++) {
        const ana_gap *g = &s->gaps[i];
        fprintf(f, "  %10s  queue #%" PRIu64 " between #%" PRIu64 " and #%" PRIu64 "\n",
                cli_fmt_ns((int64_t)g->ns, a), g->queue, g->after_seq, g->before_seq);
    }
}

static void cli_stats_json(FILE *f, const char *path, const ana_model *m, const ana_stats *s,
                           unsigned top)
{
    const ana_model_info *in = ana_model_get_info(m);
    json_t *o = json_object(), *a;
    CLI_JSET(o, "schema", json_string("clrr-stats/1"));
    CLI_JSET(o, "file", cli_json_ctext(path));
    CLI_JSET(o, "calls", cli_json_u64(in->calls));
    CLI_JSET(o, "failed_calls", cli_json_u64(in->failed));
    CLI_JSET(o, "commands", cli_json_u64(s->commands));
    CLI_JSET(o, "timed", cli_json_u64(s->timed));
    CLI_JSET(o, "launches", cli_json_u64(s->launches));
    CLI_JSET(o, "duration_ns", json_integer((json_int_t)(in->t_last - in->t_first)));
    CLI_JSET(o, "kernel_ns", cli_json_u64(s->kernel_ns));
    CLI_JSET(o, "transfer_ns", cli_json_u64(s->xfer_ns));
    CLI_JSET(o, "kernels", a = json_array());
    for (size_t i = 0; i < s->nkernels; i++) {
        const ana_kernel_stats *k = &s->kernels[i];
        json_t *e = json_object(), *d = json_object();
        CLI_JSET(e, "name", cli_json_ctext(k->name));
        CLI_JSET(e, "launches", cli_json_u64(k->launches));
        CLI_JSET(e, "timed", cli_json_u64(k->timed));
        CLI_JSET(d, "total", cli_json_u64(k->dev_total_ns));
        CLI_JSET(d, "mean", cli_json_u64(k->timed ? k->dev_total_ns / k->timed : 0));
        CLI_JSET(d, "min", cli_json_u64(k->dev_min_ns));
        CLI_JSET(d, "max", cli_json_u64(k->dev_max_ns));
        CLI_JSET(e, "device_ns", d);
        CLI_JSET(e, "work_items", cli_json_u64(k->work_items));
        CLI_JSET(e, "bytes_read", cli_json_u64(k->bytes_read));
        CLI_JSET(e, "bytes_written", cli_json_u64(k->bytes_written));
        CLI_JSET(e, "whole_ranges", cli_json_u64(k->whole_ranges));
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "transfers", a = json_array());
    for (size_t i = 0; i < s->nxfers; i++) {
        const ana_xfer_stats *x = &s->xfers[i];
        json_t *e = json_object();
        CLI_JSET(e, "kind", cli_json_ctext(x->kind));
        CLI_JSET(e, "count", cli_json_u64(x->count));
        CLI_JSET(e, "bytes", cli_json_u64(x->bytes));
        CLI_JSET(e, "timed", cli_json_u64(x->timed));
        CLI_JSET(e, "device_ns", cli_json_u64(x->dev_total_ns));
        CLI_JSET(e, "gb_per_s", cli_json_f64(cli_gbps(x->timed_bytes, x->dev_total_ns)));
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "host_api", a = json_array());
    for (unsigned i = 0; i < in->nfns; i++) {
        const ana_fn_time *t = ana_model_fn_time(m, i);
        json_t *e = json_object();
        CLI_JSET(e, "fn", cli_json_ctext(t->fn));
        CLI_JSET(e, "calls", cli_json_u64(t->calls));
        CLI_JSET(e, "total_ns", cli_json_u64(t->total_ns));
        CLI_JSET(e, "min_ns", cli_json_u64(t->min_ns));
        CLI_JSET(e, "max_ns", cli_json_u64(t->max_ns));
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "queues", a = json_array());
    for (size_t i = 0; i < s->nqueues; i++) {
        const ana_queue_stats *q = &s->queues[i];
        json_t *e = json_object();
        CLI_JSET(e, "queue", cli_json_u64(q->queue));
        CLI_JSET(e, "device", cli_json_u64(q->device));
        CLI_JSET(e, "commands", cli_json_u64(q->commands));
        CLI_JSET(e, "timed", cli_json_u64(q->timed));
        CLI_JSET(e, "busy_ns", cli_json_u64(q->busy_ns));
        CLI_JSET(e, "span_ns", cli_json_u64(q->span_ns));
        CLI_JSET(e, "idle_ns", cli_json_u64(q->idle_ns));
        CLI_JSET(e, "gaps", cli_json_u64(q->gaps));
        CLI_JSET(e, "max_gap_ns", cli_json_u64(q->max_gap_ns));
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "top_gaps", a = json_array());
    for (size_t i = 0; i < s->ngaps && i < top; i++) {
        const ana_gap *g = &s->gaps[i];
        json_t *e = json_object();
        CLI_JSET(e, "queue", cli_json_u64(g->queue));
        CLI_JSET(e, "after_seq", cli_json_u64(g->after_seq));
        CLI_JSET(e, "before_seq", cli_json_u64(g->before_seq));
        CLI_JSET(e, "ns", cli_json_u64(g->ns));
        json_array_append_new(a, e);
    }
    if (cli_json_put(f, o) < 0)
        cli_err("stats: out of memory");
    else
        putc('\n', f);
}

static int cli_stats_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "top", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int json = 0, c;
    unsigned top = 10;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 't': {
            char *end;
            unsigned long v = strtoul(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-' || v < 1 || v > 1000000)
                return cli_usage_err("invalid --top '%s' (a count from 1)", optarg);
            top = (unsigned)v;
            break;
        }
        case 'h': fputs(cli_stats_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    int urc = cli_one_file(argc, argv, &path);
    if (urc != CLI_EXIT_OK)
        return urc;
    tf_reader *r = NULL;
    ana_model *m = NULL;
    ana_stats *s = NULL;
    int rc = cli_ana_load(path, 1, &r, &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    ana_status st = ana_stats_compute(m, &s);
    if (st != ANA_OK) {
        rc = cli_ana_status_err(path, st, NULL);
        goto out;
    }
    if (json)
        cli_stats_json(stdout, path, m, s, top);
    else
        cli_stats_human(stdout, path, m, s, top);
out:
    ana_stats_free(s);
    ana_model_free(m);
    tf_reader_close(r);
    return rc;
}

const cli_command cli_cmd_stats = {
    "stats", "statistics per kernel, transfer, API function and queue (idle gaps)",
    cli_stats_usage, cli_stats_run, NULL,
};
