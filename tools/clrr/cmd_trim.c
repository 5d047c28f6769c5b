/* cmd_trim.c — `clrr trim`: cuts a trace down to a range of calls or one
 * kernel launch, as a trace that replays on its own (replayer/rpl_trim.c). */
#include "tools/clrr/cli.h"
#include "tools/clrr/cli_progress.h"

#include <jansson.h>
#include "replayer/rpl.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char cli_trim_usage[] =
    "Usage: clrr trim FILE -o OUT (--range A:B | --kernel ID) [--device SPEC]\n"
    "Writes OUT: a trace that replays on its own the calls A..B of FILE (or\n"
    "the kernel launch ID and the read-backs that follow it). It holds the\n"
    "calls that build the objects the range uses, the contents of every\n"
    "memory object the range uses as they were at its start (computed by\n"
    "replaying FILE up to there on this machine), and the range; for --kernel,\n"
    "reads of the kernel's memory arguments that verify its outputs. Calls are\n"
    "numbered from 1 in OUT.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT  the trimmed trace ('-': stdout, not a terminal); it must not\n"
    "                    be FILE, and it appears only when whole\n"
    "  --range A:B       calls A to B (call numbers as 'clrr dump' shows them)\n"
    "  --kernel ID       one kernel launch\n"
    "  --device SPEC     the device used to compute the state at the range\n"
    "                    start (as for 'clrr replay'; default: the recorded one)\n"
    "  --json            print the result as one JSON object\n"
    "\n"
    "With -o -, the summary goes to stderr.\n"
    "\n"
    "Exit status: 0 written, 2 usage error (OUT is FILE, ...), 3 failed (OUT is left\n"
    "as it was).\n";

static int cli_trim_run(int argc, char **argv)
{
    enum { O_RANGE = 256, O_KERNEL, O_DEVICE, O_JSON };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"range", required_argument, NULL, O_RANGE},
        {"kernel", required_argument, NULL, O_KERNEL}, {"device", required_argument, NULL, O_DEVICE},
        {"json", no_argument, NULL, O_JSON}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    rpl_opts o;
    rpl_opts_init(&o);
    o.max_memory = cli_max_memory();
    const char *out = NULL;
    int json = 0, c;
    char *end;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case O_RANGE: {
            unsigned long long a = strtoull(optarg, &end, 10), b;
            if (end == optarg || *end != ':' || !a)
                return cli_usage_err("--range takes A:B with 1 <= A <= B, not '%s'", optarg);
            const char *q = end + 1;
            b = strtoull(q, &end, 10);
            if (end == q || *end || b < a)
                return cli_usage_err("--range takes A:B with 1 <= A <= B, not '%s'", optarg);
            o.first = a;
            o.last = b;
            break;
        }
        case O_KERNEL:
            o.kernel = strtoull(optarg, &end, 10);
            if (end == optarg || *end || !o.kernel || optarg[0] == '-')
                return cli_usage_err("--kernel takes a call number, not '%s'", optarg);
            break;
        case O_DEVICE: o.device = optarg; break;
        case O_JSON: json = 1; break;
        case 'h': fputs(cli_trim_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    int urc = cli_one_file(argc, argv, &path);
    if (urc != CLI_EXIT_OK)
        return urc;
    if (!out)
        return cli_usage_err("missing -o OUT");
    if (!o.kernel == !o.first)
        return cli_usage_err("give exactly one of --range A:B and --kernel ID");
    if (json && !strcmp(out, "-"))
        return cli_usage_err("--json and -o - would both write to stdout");
    /* the trace goes to a temporary that replaces OUT only once whole */
    cli_out f;
    const char *inputs[] = { path, NULL };
    int rc = cli_out_open(&f, out, CLI_OUT_BINARY | CLI_OUT_PATH, inputs);
    if (rc != CLI_EXIT_OK)
        return rc;
    rpl_trim_result r;
    char err[1024];
    cli_progress *prog = cli_progress_new("trim", "call", 0, json);
    if (prog) {   /* the trim replays the trace up to its range's end */
        cli_progress_total(prog, o.kernel ? o.kernel : o.last ? o.last : cli_progress_count_calls(path));
        o.user = prog;
        o.on_progress = cli_progress_on_call;
    }
    rpl_status st = rpl_trim(path, cli_out_path(&f), &o, &r, err, sizeof err);
    cli_progress_end(prog);
    if (st != RPL_OK) {
        cli_out_fix_msg(&f, err, sizeof err);
        cli_err("%s: %s", path, err[0] ? err : rpl_strerror(st));
        cli_out_abort(&f);
        return CLI_EXIT_ERROR;
    }
    if ((rc = cli_out_commit(&f)) != CLI_EXIT_OK)
        return rc;
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP];
    if (json) {   /* docs/schemas/trim.json */
        json_t *o = json_object();
        json_object_set_new(o, "schema", json_string("clrr-trim/1"));
        json_object_set_new(o, "output", cli_json_ctext(out));
        json_object_set_new(o, "calls_in", cli_json_u64(r.calls_in));
        json_object_set_new(o, "calls_out", cli_json_u64(r.calls_out));
        json_object_set_new(o, "first", cli_json_u64(r.first_out));
        json_object_set_new(o, "kernel", cli_json_u64(r.kernel_out));
        json_object_set_new(o, "state_objects", cli_json_u64(r.state_objects));
        json_object_set_new(o, "state_bytes", cli_json_u64(r.state_bytes));
        json_object_set_new(o, "file_bytes", cli_json_u64(r.file_bytes));
        cli_json_put(stdout, o);
        putchar('\n');
        return CLI_EXIT_OK;
    }
    printf("wrote %s: %" PRIu64 " of %" PRIu64 " calls, %s", strcmp(out, "-") ? out : "stdout", r.calls_out, r.calls_in, cli_fmt_size(r.file_bytes, a));
    printf("; state of %" PRIu64 " memory objects (%s) at the start\n", r.state_objects, cli_fmt_size(r.state_bytes, b));
    if (r.kernel_out && !strcmp(out, "-"))
        printf("the launch is call #%" PRIu64 " there\n", r.kernel_out);
    else if (r.kernel_out)
        printf("the launch is call #%" PRIu64 " there: clrr replay %s --kernel %" PRIu64 "\n", r.kernel_out, out,
               r.kernel_out);
    else
        printf("the range starts at call #%" PRIu64 " there\n", r.first_out);
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_trim = {
    "trim", "cut a trace down to a range or one kernel, replayable on its own", cli_trim_usage, cli_trim_run, NULL,
};
