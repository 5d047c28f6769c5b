/* cmd_plan.c — `clrr plan show`: reads a plan (validating it as the replay
 * does) and lists it: header, passes and their effect, kernel facts,
 * generated kernels, scheduled queues, and every transformation with its
 * pattern. --json writes the plan back as
 * the reader understood it. */
#include "tools/clrr/cli.h"
#include "tools/clrr/cli_opt.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char cli_plan_usage[] =
    "Usage: clrr plan show PLAN [--json]\n"
    "Reads a plan written by 'clrr optimize' (plan/PLAN.md), checks it, and\n"
    "lists it: the trace it was made from, each pass with its expected effect,\n"
    "the queues it schedules over lanes, the local sizes it tuned (per device,\n"
    "with what was measured), and each transformation with the call\n"
    "it applies to, its pattern, why it is safe and what it saves.\n"
    "\n"
    "Options:\n"
    "  --json     write the plan back as JSON, as the reader understood it\n"
    "  --max N    list at most N transformations (default: all)\n"
    "\n"
    "Exit status: 0 ok, 2 usage error, 3 the plan cannot be read or is invalid.\n";

void cli_opt_effect_print(const plan_effect *e)
{
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP];
    printf("%" PRIu64 " command%s (%" PRIu64 " kernel launch%s), %s of transfers", e->commands,
           e->commands == 1 ? "" : "s", e->kernels, e->kernels == 1 ? "" : "es", cli_fmt_size(e->bytes, a));
    if (e->timed)
        printf(", %s recorded device time", cli_fmt_ns((int64_t)e->device_ns, b));
    if (e->timed && e->timed < e->commands)   /* the recorder samples device times in fast loops */
        printf(" (of %" PRIu64 " timed command%s)", e->timed, e->timed == 1 ? "" : "s");
}

void cli_opt_sched_print(const plan_sched *s)
{
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP];
    printf("queue %" PRIu64 " over %u lanes: %" PRIu64 " upload%s, %" PRIu64 " download%s of %" PRIu64
           " command%s; %s of device time predicted %s (%.2fx)", s->queue, s->lanes, s->uploads,
           s->uploads == 1 ? "" : "s", s->downloads, s->downloads == 1 ? "" : "s", s->commands,
           s->commands == 1 ? "" : "s", cli_fmt_ns((int64_t)s->recorded_ns, a), cli_fmt_ns((int64_t)s->predicted_ns, b),
           s->predicted_ns ? (double)s->recorded_ns / (double)s->predicted_ns : 0.0);
}

static void cli_plan_list(const char *path, const plan_file *p, uint64_t max)
{
    static const char *const acc[] = {"-", "r", "w", "rw", "?"};
    const plan_info *in = plan_get_info(p);
    printf("plan      %s (%s %u.%u, written by %s)\n", path, PLAN_FORMAT, in->major, in->minor, in->generator);
    printf("trace     %s: %" PRIu64 " calls, fingerprint %016" PRIx64 ", %u program%s\n", in->trace_file,
           in->trace_calls, in->fingerprint, in->nprograms, in->nprograms == 1 ? "" : "s");
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++) {
        const plan_pass_result *r = plan_get_pass(p, (plan_pass)i);
        printf("pass      %-10s ", plan_pass_name((plan_pass)i));
        if (!r->enabled) {
            printf("off\n");
            continue;
        }
        if (i == PLAN_PASS_SCHEDULE) {   /* no transformation: queues run over lanes */
            printf("%zu queue%s scheduled\n", plan_sched_count(p), plan_sched_count(p) == 1 ? "" : "s");
            continue;
        }
        printf("%" PRIu64 " transformation%s: ", r->transformations, r->transformations == 1 ? "" : "s");
        cli_opt_effect_print(&r->effect);
        printf("\n");
    }
    for (size_t i = 0; i < plan_kernel_count(p); i++) {
        const plan_kernel_facts *k = plan_kernel(p, i);
        printf("%s %s(", i ? "         " : "kernels  ", k->name);
        for (unsigned a = 0; a < k->nargs; a++)
            printf("%s%s", a ? "," : "", acc[k->access[a] <= PLAN_ACC_UNKNOWN ? k->access[a] : PLAN_ACC_UNKNOWN]);
        printf(")\n");
    }
    for (size_t i = 0; i < plan_fused_count(p); i++) {
        const plan_fused *z = plan_get_fused(p, i);
        unsigned lines = 0;
        for (const char *c = z->source; *c; c++)
            lines += *c == '\n';
        const plan_fused *twin = z->storing ? plan_get_fused(p, z->storing - 1) : NULL;
        if (z->horizontal) {
            printf("%s %s: %u launches beside each other, %s first, %s last, %u parameters, every store kept "
                   "(program of %u lines)\n", i ? "         " : "fused    ", z->name, z->launches, z->producer,
                   z->consumer, z->nparams, lines);
        } else if (z->launches > 2) {
            char shape[3 * PLAN_CHAIN_MAX + 16] = "";   /* a gather: which launch feeds which */
            for (unsigned k = 0, n = 0; z->gather && k + 1 < z->launches && n < sizeof shape; k++)
                n += (unsigned)snprintf(shape + n, sizeof shape - n, "%s%u>%u", k ? " " : " (", k, z->into[k]);
            if (z->gather)
                strncat(shape, ")", sizeof shape - strlen(shape) - 1);
            printf("%s %s: a %s of %u launches%s, %s first, %s last, %u parameters, %s%s%s (program of %u lines)\n",
                   i ? "         " : "fused    ", z->name, z->gather ? "gather" : "chain", z->launches, shape,
                   z->producer, z->consumer, z->nparams,
                   z->keep_store ? "every intermediate stored" : "no intermediate stored",
                   twin ? "; a live run that needs them uses " : "", twin ? twin->name : "", lines);
        }
        else
            printf("%s %s: %s then %s, %u parameters, %s%s%s (program of %u lines)\n", i ? "         " : "fused    ",
                   z->name, z->producer, z->consumer, z->nparams,
                   z->keep_store ? "the buffer still stored" : "the buffer no longer stored",
                   twin ? "; a live run that needs it uses " : "", twin ? twin->name : "", lines);
    }
    for (size_t i = 0; i < plan_spec_count(p); i++) {
        const plan_spec *z = plan_get_spec(p, i);
        unsigned lines = 0;
        for (const char *c = z->source; *c; c++)
            lines += *c == '\n';
        printf("%s %s: %s with", i ? "         " : "specials ", z->name, z->kernel);
        for (unsigned k = 0; k < z->nconsts; k++) {
            uint64_t v = 0;
            memcpy(&v, z->consts[k].value, z->consts[k].size < 8 ? z->consts[k].size : 8);
            printf("%s argument %u = 0x%" PRIx64, k ? "," : "", z->consts[k].index, v);
        }
        printf(" as constants, %u parameters (program of %u lines)\n", z->nargs, lines);
    }
    for (size_t i = 0; i < plan_sched_count(p); i++) {
        const plan_sched *z = plan_get_sched(p, i);
        printf("schedule  ");
        cli_opt_sched_print(z);
        printf("\n          why      %s\n", z->reason);
    }
    for (size_t i = 0; i < plan_local_count(p); i++) {   /* tuned shapes (1.10) */
        const plan_local *l = plan_get_local(p, i);
        printf("%s %s over %" PRIu64, i ? "         " : "local    ", l->kernel, l->global[0]);
        for (unsigned d = 1; d < l->dim; d++)
            printf("x%" PRIu64, l->global[d]);
        if (l->has_recorded) {
            printf(", recorded %" PRIu64, l->recorded[0]);
            for (unsigned d = 1; d < l->dim; d++)
                printf("x%" PRIu64, l->recorded[d]);
        } else {
            printf(", recorded NULL");
        }
        for (unsigned k = 0; k < l->ntuned; k++) {
            const plan_tuned *t = &l->tuned[k];
            printf("; %" PRIu64, t->local[0]);
            for (unsigned d = 1; d < l->dim; d++)
                printf("x%" PRIu64, t->local[d]);
            printf(" on %s (driver %s): %.3f ms -> %.3f ms, %u runs, noise %.3f ms", t->device, t->driver,
                   t->before_ns / 1e6, t->after_ns / 1e6, t->reps, t->noise_ns / 1e6);
        }
        printf("\n");
    }
    size_t n = plan_xform_count(p);
    char *buf = malloc(PLAN_PATTERN_MAX + 1);
    for (size_t i = 0; i < n && i < max; i++) {
        const plan_xform *x = plan_get_xform(p, i);
        printf("#%-6u  %-10s %s call #%" PRIu64 " %s (occurrence %" PRIu64 " of its pattern)\n", x->id,
               plan_pass_name((plan_pass)x->pass), plan_action_name((plan_action)x->action), x->seq, x->function,
               x->occurrence);
        if (buf) {
            plan_pattern_format(x->pattern, buf, PLAN_PATTERN_MAX + 1);
            printf("         pattern  %s\n", buf);
        }
        printf("         why      %s\n", x->reason);
        printf("         saves    ");
        cli_opt_effect_print(&x->effect);
        printf("\n");
    }
    if (n > max)
        printf("(%zu more transformations not listed)\n", n - (size_t)max);
    free(buf);
}

static int cli_plan_run(int argc, char **argv)
{
    enum { O_JSON = 256, O_MAX };
    static const struct option opts[] = {
        {"json", no_argument, NULL, O_JSON}, {"max", required_argument, NULL, O_MAX},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(cli_plan_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 2 || argv[1][0] == '-')
        return cli_usage_err("missing the subcommand: clrr plan show PLAN");
    if (strcmp(argv[1], "show"))
        return cli_usage_err("unknown subcommand '%s' (clrr plan show PLAN)", argv[1]);
    argc--;
    argv++;
    int json = 0, c;
    uint64_t max = UINT64_MAX;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case O_JSON: json = 1; break;
        case O_MAX:
            if (cli_parse_u64(optarg, &max, 0) < 0)
                return cli_usage_err("--max takes a count, not '%s'", optarg);
            break;
        case 'h': fputs(cli_plan_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    int rc = cli_one_file(argc, argv, &path);
    if (rc != CLI_EXIT_OK)
        return rc;
    plan_file *p = NULL;
    char err[512];
    plan_status st = plan_read(path, &p, err, sizeof err);
    if (st != PLAN_OK) {
        cli_err("%s: %s", path, err[0] ? err : plan_strerror(st));
        return CLI_EXIT_ERROR;
    }
    if (json)
        st = plan_write(p, stdout);
    else
        cli_plan_list(path, p, max);
    plan_free(p);
    if (st != PLAN_OK) {
        cli_err("%s: %s", path, plan_strerror(st));
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_plan = {
    "plan", "show a plan: its passes and transformations", cli_plan_usage, cli_plan_run, NULL,
};
