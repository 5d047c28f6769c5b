/* cmd_stats.c — `clrr stats FILE [--json] [--top N]`: per kernel, per
 * transfer kind, per API function and per queue, from the trace model and
 * the kernel analysis (bytes by analysis). */
#include "tools/clrr/cli_ana.h"

#include <getopt.h>
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
    fputs("{\"schema\":\"clrr-stats/1\",\"file\":", f);
    cli_json_cstr(f, path);
    fprintf(f, ",\"calls\":%" PRIu64 ",\"failed_calls\":%" PRIu64, in->calls, in->failed);
    fprintf(f, ",\"commands\":%" PRIu64 ",\"timed\":%" PRIu64 ",\"launches\":%" PRIu64
               ",\"duration_ns\":%" PRId64 ",\"kernel_ns\":%" PRIu64 ",\"transfer_ns\":%" PRIu64 ",\"kernels\":[",
            s->commands, s->timed, s->launches, in->t_last - in->t_first, s->kernel_ns, s->xfer_ns);
    for (size_t i = 0; i < s->nkernels; i++) {
        const ana_kernel_stats *k = &s->kernels[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        cli_json_cstr(f, k->name);
        fprintf(f, ",\"launches\":%" PRIu64 ",\"timed\":%" PRIu64 ",\"device_ns\":{\"total\":%" PRIu64
                   ",\"mean\":%" PRIu64 ",\"min\":%" PRIu64 ",\"max\":%" PRIu64 "},\"work_items\":%" PRIu64
                   ",\"bytes_read\":%" PRIu64 ",\"bytes_written\":%" PRIu64 ",\"whole_ranges\":%" PRIu64 "}",
                k->launches, k->timed, k->dev_total_ns, k->timed ? k->dev_total_ns / k->timed : 0,
                k->dev_min_ns, k->dev_max_ns, k->work_items, k->bytes_read, k->bytes_written, k->whole_ranges);
    }
    fputs("],\"transfers\":[", f);
    for (size_t i = 0; i < s->nxfers; i++) {
        const ana_xfer_stats *x = &s->xfers[i];
        fprintf(f, "%s{\"kind\":\"%s\",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"timed\":%" PRIu64
                   ",\"device_ns\":%" PRIu64 ",\"gb_per_s\":%.4f}", i ? "," : "", x->kind, x->count, x->bytes,
                x->timed, x->dev_total_ns, cli_gbps(x->timed_bytes, x->dev_total_ns));
    }
    fputs("],\"host_api\":[", f);
    for (unsigned i = 0; i < in->nfns; i++) {
        const ana_fn_time *t = ana_model_fn_time(m, i);
        fputs(i ? ",{\"fn\":" : "{\"fn\":", f);
        cli_json_cstr(f, t->fn);
        fprintf(f, ",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "}",
                t->calls, t->total_ns, t->min_ns, t->max_ns);
    }
    fputs("],\"queues\":[", f);
    for (size_t i = 0; i < s->nqueues; i++) {
        const ana_queue_stats *q = &s->queues[i];
        fprintf(f, "%s{\"queue\":%" PRIu64 ",\"device\":%" PRIu64 ",\"commands\":%" PRIu64 ",\"timed\":%" PRIu64
                   ",\"busy_ns\":%" PRIu64 ",\"span_ns\":%" PRIu64 ",\"idle_ns\":%" PRIu64 ",\"gaps\":%" PRIu64
                   ",\"max_gap_ns\":%" PRIu64 "}", i ? "," : "", q->queue, q->device, q->commands, q->timed,
                q->busy_ns, q->span_ns, q->idle_ns, q->gaps, q->max_gap_ns);
    }
    fputs("],\"top_gaps\":[", f);
    for (size_t i = 0; i < s->ngaps && i < top; i++) {
        const ana_gap *g = &s->gaps[i];
        fprintf(f, "%s{\"queue\":%" PRIu64 ",\"after_seq\":%" PRIu64 ",\"before_seq\":%" PRIu64 ",\"ns\":%" PRIu64 "}",
                i ? "," : "", g->queue, g->after_seq, g->before_seq, g->ns);
    }
    fputs("]}\n", f);
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
