/* cmd_report.c — `clrr report TRACE [--plan PLAN] [--replay-json FILE] -o
 * report.html`: one self-contained HTML page (inline CSS and script, no
 * network) with a trace's summary, timeline, kernels, dependency graph,
 * failing calls and, with a plan, what it changes and what a replay with
 * it measured. The data is one JSON object (report_data.c,
 * report_timeline.c, report_plan.c) embedded in the template
 * tools/clrr/report/report.html, which draws it. */
#include "tools/clrr/cli_ana.h"
#include "tools/clrr/report_int.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* build/gen/report_html.c (tools/module.mk, from tools/clrr/report/report.html) */
extern const unsigned char cli_report_html[];
extern const unsigned int cli_report_html_len;

#define CLI_REPORT_PLACEHOLDER "@CLRR_REPORT_DATA@"

static const char cli_report_usage[] =
    "Usage: clrr report TRACE -o OUT.html [--plan PLAN] [--replay-json FILE]\n"
    "Write one self-contained HTML page about a trace (inline style and script: it\n"
    "loads nothing from the network) that any browser opens: a summary (program,\n"
    "devices, calls and failed calls, bytes moved, host and device time), the\n"
    "timeline (host calls per thread, device commands per queue at their recorded\n"
    "device time, dependency arrows; wheel to zoom, drag to pan, click a slice for\n"
    "its arguments), the kernels (device time, launches, bytes, work sizes and the\n"
    "kernel analysis' verdicts), the dependency graph (repeated iterations\n"
    "collapsed, as 'clrr graph --collapse'), and the calls that returned an error.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT      the page to write ('-': stdout); it must not be TRACE,\n"
    "                        and it appears only when whole\n"
    "  --plan PLAN           also show what each transformation of PLAN (from 'clrr\n"
    "                        optimize') changes and is expected to save\n"
    "  --replay-json FILE    also show the measured effect: FILE is the output of\n"
    "                        'clrr replay TRACE --plan PLAN --json'\n"
    "  --no-analysis         skip the kernel analysis (no verdicts; launches touch\n"
    "                        their whole buffers in the graph)\n"
    "  -h, --help            show this help\n"
    "\n"
    "Exit status: 0 written, 2 usage error (OUT is TRACE, ...), 3 error (an\n"
    "unreadable trace, plan or replay JSON: one line on stderr; OUT is left as it\n"
    "was).\n";

int cli_report_write(FILE *f, const json_t *data)
{
    const char *t = (const char *)cli_report_html;
    size_t n = cli_report_html_len, pl = strlen(CLI_REPORT_PLACEHOLDER), at = 0;
    while (at + pl <= n && memcmp(t + at, CLI_REPORT_PLACEHOLDER, pl))
        at++;
    if (at + pl > n)
        return -1;
    char *js = json_dumps(data, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!js)
        return -1;
    fwrite(t, 1, at, f);
    /* '<' appears only inside JSON strings: as \u003c no "</script" or
     * "<!--" can end or change the script element */
    for (const char *p = js; *p; p++) {
        if (*p == '<')
            fputs("\\u003c", f);
        else
            putc(*p, f);
    }
    free(js);
    fwrite(t + at + pl, 1, n - at - pl, f);
    return ferror(f) ? -1 : 0;
}

static int cli_report_run(int argc, char **argv)
{
    enum { O_PLAN = 256, O_REPLAY, O_NOAN };
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "plan", required_argument, NULL, O_PLAN },
        { "replay-json", required_argument, NULL, O_REPLAY },
        { "no-analysis", no_argument, NULL, O_NOAN },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *outp = NULL, *planp = NULL, *replayp = NULL;
    int analyze = 1, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outp = optarg; break;
        case O_PLAN: planp = optarg; break;
        case O_REPLAY: replayp = optarg; break;
        case O_NOAN: analyze = 0; break;
        case 'h': fputs(cli_report_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    int rc = cli_one_file(argc, argv, &path);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!outp)
        return cli_usage_err("missing -o OUT.html");
    tf_reader *r = NULL;
    ana_model *m = NULL;
    ana_graph *g = NULL;
    ana_stats *s = NULL;
    json_t *data = NULL, *part = NULL;
    cli_out o;
    char err[512] = "";
    const char *inputs[] = { path, planp, replayp, NULL };
    if (!planp)
        inputs[1] = replayp, inputs[2] = NULL;
    rc = cli_out_open(&o, outp, 0, inputs);
    if (rc != CLI_EXIT_OK)
        return rc;
    data = json_object();
    if (planp) {   /* a bad plan or replay file is said before the long work */
        if (!(part = cli_report_plan(planp, err, sizeof err))) {
            cli_err("%s: %s", planp, err);
            rc = CLI_EXIT_ERROR;
            goto out;
        }
        json_object_set_new(data, "plan", part);
    }
    if (replayp) {
        if (!(part = cli_report_replay(replayp, err, sizeof err))) {
            cli_err("%s: %s", replayp, err);
            rc = CLI_EXIT_ERROR;
            goto out;
        }
        json_object_set_new(data, "replay", part);
    }
    if ((rc = cli_ana_load(path, analyze, &r, &m)) != CLI_EXIT_OK)
        goto out;
    ana_status st = ana_graph_build(m, &g);
    if (st == ANA_OK)
        st = ana_stats_compute(m, &s);
    if (st != ANA_OK) {
        rc = cli_ana_status_err(path, st, NULL);
        goto out;
    }
    json_object_set_new(data, "generator", json_string("clrr " CLRR_VERSION));
    json_object_set_new(data, "summary", cli_report_summary(path, r, m, s));
    json_object_set_new(data, "kernels", cli_report_kernels(m, s));
    if (!(part = cli_report_errors(r, err, sizeof err)) ||
        json_object_set_new(data, "errors", part) ||
        !(part = cli_report_timeline(r, m, g, err, sizeof err)) ||
        json_object_set_new(data, "timeline", part) ||
        !(part = cli_report_graph(m, g, err, sizeof err)) ||
        json_object_set_new(data, "graph", part)) {
        cli_err("%s: %s", path, err[0] ? err : "out of memory");
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    if (cli_report_write(o.f, data) != 0) {
        cli_err("%s: cannot write the page", outp);
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    rc = cli_out_commit(&o);
out:
    cli_out_abort(&o);
    json_decref(data);
    ana_stats_free(s);
    ana_graph_free(g);
    ana_model_free(m);
    tf_reader_close(r);
    return rc;
}

const cli_command cli_cmd_report = {
    "report", "write a self-contained HTML report of a trace (timeline, kernels, graph, errors)",
    cli_report_usage, cli_report_run, NULL,
};
