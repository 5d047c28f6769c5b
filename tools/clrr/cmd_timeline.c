/* cmd_timeline.c — `clrr timeline FILE -o OUT.json`: the Chrome/Perfetto
 * trace-event file of a trace (host calls per thread with their arguments,
 * device commands per queue, launches with their NDRange and arguments,
 * dependency edges as flows). Load it in ui.perfetto.dev or
 * chrome://tracing. */
#include "tools/clrr/cli_ana.h"

#include <getopt.h>
#include <string.h>

static const char cli_timeline_usage[] =
    "Usage: clrr timeline FILE -o OUT.json [--no-flows]\n"
    "Write a Chrome/Perfetto trace-event file (open it in ui.perfetto.dev or\n"
    "chrome://tracing): every host API call on its thread (process 'host') with\n"
    "its arguments, outputs and return value, every command on its queue (one\n"
    "process per device) at its recorded device time, brought onto the host clock\n"
    "(commands without device time are placed at their call's host time, category\n"
    "'no_device_time'), kernel launches with their NDRange (global, local, offset)\n"
    "and arguments (buffers by id, scalars by value), and the dependency edges of\n"
    "'clrr graph' as flow arrows. 'clrr report' shows the same offline.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT  the JSON file to write ('-': stdout); it must not be FILE,\n"
    "                    and it appears only when whole\n"
    "  --no-flows        leave out the dependency arrows (and the kernel analysis:\n"
    "                    kernel arguments then have no names and types)\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 written, 2 usage error (OUT is FILE, ...), 3 error (one line on\n"
    "stderr; OUT is left as it was).\n";

static int cli_timeline_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "no-flows", no_argument, NULL, 'n' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *outp = NULL;
    int flows = 1, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outp = optarg; break;
        case 'n': flows = 0; break;
        case 'h': fputs(cli_timeline_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    int urc = cli_one_file(argc, argv, &path);
    if (urc != CLI_EXIT_OK)
        return urc;
    if (!outp)
        return cli_usage_err("missing -o OUT.json");
    tf_reader *r = NULL;
    ana_model *m = NULL;
    ana_graph *g = NULL;
    cli_out o;
    char err[512];
    const char *inputs[] = { path, NULL };
    int rc = cli_out_open(&o, outp, 0, inputs);
    if (rc != CLI_EXIT_OK)
        return rc;
    if ((rc = cli_ana_load(path, flows, &r, &m)) != CLI_EXIT_OK)
        goto out;
    ana_status st = flows ? ana_graph_build(m, &g) : ANA_OK;
    if (st != ANA_OK) {
        rc = cli_ana_status_err(path, st, NULL);
        goto out;
    }
    st = ana_timeline_write(r, m, g, o.f, err, sizeof err);
    if (st != ANA_OK) {
        rc = cli_ana_status_err(st == ANA_ERR_IO ? outp : path, st, err);
        goto out;
    }
    rc = cli_out_commit(&o);
out:
    cli_out_abort(&o);
    ana_graph_free(g);
    ana_model_free(m);
    tf_reader_close(r);
    return rc;
}

const cli_command cli_cmd_timeline = {
    "timeline", "write a Chrome/Perfetto timeline of host calls and device commands",
    cli_timeline_usage, cli_timeline_run, NULL,
};
