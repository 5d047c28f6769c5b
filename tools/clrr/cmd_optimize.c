/* cmd_optimize.c — `clrr optimize`: runs the optimizer's passes over a
 * trace and writes the plan (optimizer/opt.h does the work; the plan
 * appears only when whole). */
#include "tools/clrr/cli.h"
#include "tools/clrr/cli_ana.h"
#include "tools/clrr/cli_opt.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char cli_optimize_usage[] =
    "Usage: clrr optimize FILE -o PLAN [--passes LIST] [--split DEVICES] [--json]\n"
    "Finds work in a trace that can be left out or merged without changing\n"
    "anything the application observes, and writes a plan (optimizer/PLAN.md) that\n"
    "'clrr replay FILE --plan PLAN' executes, verifying every read-back against\n"
    "the recording. Each change names its call by a pattern (function, kernel\n"
    "and program source hash, launch shape, argument roles and values), so a\n"
    "plan also applies to other runs of the same program.\n"
    "\n"
    "Passes:\n"
    "  dead        kernel launches, writes, copies and fills whose results are\n"
    "              never observed: every byte they write is overwritten before\n"
    "              anything reads it, or never read at all\n"
    "  redundant   writes and fills of bytes the memory already holds (the same\n"
    "              data over the same range, written or read back before and not\n"
    "              written since)\n"
    "  fuse        a launch whose output the next launch on its queue reads, each\n"
    "              work-item only the element the same work-item wrote: one\n"
    "              generated kernel does both, the value passed in a register\n"
    "              (the buffer is no longer stored when nothing reads it later)\n"
    "  split       (with --split) each launch runs as parts, ranges of work-groups\n"
    "              on several devices at once; each device gets only the bytes\n"
    "              its range reads and sends back what it writes\n"
    "\n"
    "Options:\n"
    "  -o, --output PLAN    the plan to write\n"
    "  --passes LIST        passes to run, comma-separated (default: all; none)\n"
    "  --no-dead, --no-redundant, --no-fuse\n"
    "                       leave a pass out\n"
    "  --split DEVICES      split launches over DEVICES, 'SPEC[:WEIGHT],...': a\n"
    "                       device as 'clrr devices' numbers or names it, and its\n"
    "                       share of the work-groups (default 1), e.g. 'cpu:1,gpu:3'\n"
    "  --split-kernel NAME  split only launches of kernel NAME\n"
    "  --max-memory N       bytes the trace reader may hold (default 1 GiB or\n"
    "                       CLRR_MAX_MEMORY; K/M/G suffixes)\n"
    "  --json               one JSON object on stdout instead of the summary\n"
    "\n"
    "Exit status: 0 plan written, 2 usage error, 3 failed (unreadable trace, plan\n"
    "not writable; nothing is left at PLAN).\n";

static void cli_optimize_print(const char *path, const char *out, const opt_plan *p, int json, const char *note)
{
    const opt_plan_info *in = opt_plan_get_info(p);
    if (json) {
        printf("{\"trace\":");
        cli_json_cstr(stdout, path);
        printf(",\"plan\":");
        cli_json_cstr(stdout, out);
        printf(",\"calls\":%" PRIu64 ",\"fingerprint\":\"%016" PRIx64 "\",\"transformations\":%zu,\"passes\":[",
               in->trace_calls, in->fingerprint, opt_plan_xform_count(p));
        for (unsigned i = 0; i < OPT_PASS_COUNT; i++) {
            const opt_pass_result *r = opt_plan_pass(p, (opt_pass)i);
            printf("%s{\"name\":\"%s\",\"enabled\":%s,\"transformations\":%" PRIu64 ",\"commands\":%" PRIu64
                   ",\"kernels\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"device_ns\":%" PRIu64 ",\"timed\":%" PRIu64 "}",
                   i ? "," : "", opt_pass_name((opt_pass)i), r->enabled ? "true" : "false", r->transformations,
                   r->effect.commands, r->effect.kernels, r->effect.bytes, r->effect.device_ns, r->effect.timed);
        }
        printf("],\"splits\":%zu,\"split_note\":", opt_plan_split_count(p));
        cli_json_cstr(stdout, note);
        printf("}\n");
        return;
    }
    printf("optimized %s (%" PRIu64 " calls) -> %s\n", path, in->trace_calls, out);
    for (unsigned i = 0; i < OPT_PASS_COUNT; i++) {
        const opt_pass_result *r = opt_plan_pass(p, (opt_pass)i);
        printf("pass      %-10s ", opt_pass_name((opt_pass)i));
        if (!r->enabled) {
            printf("off\n");
            continue;
        }
        if (i == OPT_PASS_SPLIT) {   /* nothing is left out: launches run in parts */
            printf("%" PRIu64 " launches split (%zu distinct splits)\n", r->transformations, opt_plan_split_count(p));
            continue;
        }
        cli_opt_effect_print(&r->effect);
        printf("\n");
    }
    if (opt_plan_pass(p, OPT_PASS_SPLIT)->enabled && note[0])
        printf("          %s\n", note);
    printf("plan      %zu transformation%s; run it with: clrr replay %s --plan %s\n", opt_plan_xform_count(p),
           opt_plan_xform_count(p) == 1 ? "" : "s", path, out);
}

static int cli_optimize_run(int argc, char **argv)
{
    enum { O_PASSES = 256, O_NO_DEAD, O_NO_REDUNDANT, O_NO_FUSE, O_MAXMEM, O_JSON, O_SPLIT, O_SPLIT_KERNEL };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"passes", required_argument, NULL, O_PASSES},
        {"no-dead", no_argument, NULL, O_NO_DEAD}, {"no-redundant", no_argument, NULL, O_NO_REDUNDANT},
        {"no-fuse", no_argument, NULL, O_NO_FUSE}, {"split", required_argument, NULL, O_SPLIT},
        {"split-kernel", required_argument, NULL, O_SPLIT_KERNEL},
        {"max-memory", required_argument, NULL, O_MAXMEM}, {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    char note[512] = "";
    opt_options o = {OPT_PASSES_ALL, NULL, cli_max_memory(), NULL, NULL, note, sizeof note};
    const char *out = NULL;
    unsigned off = 0;
    int json = 0, c;
    uint64_t v;
    char err[512];
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case O_PASSES:
            if (opt_passes_parse(optarg, &o.passes, err, sizeof err) < 0)
                return cli_usage_err("--passes: %s", err);
            break;
        case O_NO_DEAD: off |= 1u << OPT_PASS_DEAD; break;
        case O_NO_REDUNDANT: off |= 1u << OPT_PASS_REDUNDANT; break;
        case O_NO_FUSE: off |= 1u << OPT_PASS_FUSE; break;
        case O_MAXMEM:
            if (cli_parse_u64(optarg, &v, 1) < 0 || v < 4096)
                return cli_usage_err("--max-memory takes a byte count (at least 4096; K, M, G suffixes), not '%s'",
                                     optarg);
            o.max_memory = (size_t)v;
            break;
        case O_JSON: json = 1; break;
        case O_SPLIT:
            if (!*optarg)
                return cli_usage_err("--split takes devices, 'SPEC[:WEIGHT],...' (see 'clrr devices')");
            o.split = optarg;
            break;
        case O_SPLIT_KERNEL: o.split_kernel = optarg; break;
        case 'h': fputs(cli_optimize_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    o.passes &= ~off;
    if (o.split)
        o.passes |= 1u << OPT_PASS_SPLIT;
    else if (o.split_kernel)
        return cli_usage_err("--split-kernel needs --split DEVICES");
    const char *path;
    int rc = cli_one_file(argc, argv, &path);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!out)
        return cli_usage_err("missing -o PLAN");
    if (!strcmp(out, path))
        return cli_usage_err("PLAN must differ from FILE");
    opt_plan *p = NULL;
    opt_status st = opt_optimize(path, &o, &p, err, sizeof err);
    if (st == OPT_ERR_ARG)
        return cli_usage_err("%s", err);
    if (st != OPT_OK) {
        cli_err("%s: %s", path, err[0] ? err : opt_strerror(st));
        return CLI_EXIT_ERROR;
    }
    cli_out f;
    rc = cli_out_open(&f, out);
    if (rc == CLI_EXIT_OK) {
        st = opt_plan_write(p, f.f);
        if (st != OPT_OK)
            cli_err("%s: %s", out, opt_strerror(st));
        rc = cli_out_commit(&f, st == OPT_OK);
        if (st != OPT_OK)
            rc = CLI_EXIT_ERROR;
    }
    if (rc == CLI_EXIT_OK)
        cli_optimize_print(path, out, p, json, note);
    opt_plan_free(p);
    return rc;
}

const cli_command cli_cmd_optimize = {
    "optimize", "find work a trace can leave out and write a plan", cli_optimize_usage, cli_optimize_run, NULL,
};
