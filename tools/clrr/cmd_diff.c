/* cmd_diff.c — `clrr diff A B`: compares two traces of the same application
 * (two devices, two drivers, two runs) call by call and data by data, and
 * prints the first divergence with its context. Both traces are read once,
 * side by side, in bounded memory: late DATA items wait in a small table
 * until the other trace's arrive (diff_data.c). */
#include "tools/clrr/cli.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/clrr/diff_int.h"

static const char cli_diff_usage[] =
    "Usage: clrr diff A.clrr B.clrr [--tolerance SPEC] [--queries] [--max N] [--json]\n"
    "Compare two traces of the same application (recorded on two devices or\n"
    "drivers, or two runs) call by call: functions, return values, inputs, and\n"
    "the data read back. Prints the first difference with the calls before it\n"
    "and the kernels that last wrote the memory read back.\n"
    "\n"
    "Options:\n"
    "  --tolerance SPEC  how read-backs are compared: exact (default, byte for\n"
    "                    byte) or a list of rel=X, abs=X, ulp=N and f32 (default)\n"
    "                    or f64, e.g. rel=1e-5,abs=1e-7 or ulp=4,f64\n"
    "  --queries         also compare what queries (clGet*) answered\n"
    "  --max N           list up to N differences (default 1); after the first,\n"
    "                    one line each\n"
    "  --json            one JSON object with the same facts\n"
    "  -h, --help        show this help\n"
    "\n"
    "Ignored: query results (without --queries), pointer values, threads,\n"
    "times, device timings, recorder notes and the devices themselves.\n"
    "Program sources, binaries and build options that differ are noted, not\n"
    "counted as differences.\n"
    "\n"
    "Exit status: 0 same, 1 different, 2 usage error, 3 a trace cannot be read\n"
    "(missing, corrupt, or cut inside a chunk).\n";

/* Reads items of trace @p s up to its next call; DATA items go to the
 * pending table. @return 1 with a call in *it, 0 at the end, -1 on error. */
static int cli_diff_next_call(cli_diff_ctx *d, int s, tf_item *it)
{
    cli_diff_side *sd = &d->side[s];
    if (sd->ended)
        return 0;
    for (;;) {
        tf_status st = tf_reader_next(sd->r, it);
        if (st == TF_END) {
            sd->ended = 1;
            return 0;
        }
        if (st != TF_OK) {
            d->err = st;
            d->err_side = s;
            return -1;
        }
        if (it->type == TF_ITEM_CALL) {
            sd->calls++;
            return 1;
        }
        if (it->type == TF_ITEM_DATA && it->u.data.seq && cli_diff_late_data(d, s, &it->u.data))
            return -1;
    }
}

/* One trace ended before the other (@p longer has call *first left):
 * counts the rest. @return 0, -1 on error. */
static int cli_diff_end(cli_diff_ctx *d, int longer, const tf_call *first)
{
    cli_diff_found f;
    char line[CLI_DIFF_LINE_CAP];
    memset(&f, 0, sizeof f);
    f.kind = CLI_DIFF_END;
    f.pos = d->pos + 1;
    f.ended = !longer;
    if (longer)
        f.seq_b = first->seq;
    else
        f.seq_a = first->seq;
    cli_diff_format_call(first, line, sizeof line);
    if (longer)
        f.line_b = strdup(line);
    else
        f.line_a = strdup(line);
    snprintf(f.what, sizeof f.what, "end");
    tf_item it;
    int r;
    f.more = 1;
    while ((r = cli_diff_next_call(d, longer, &it)) > 0)
        f.more++;
    if (r < 0) {
        cli_diff_found_free(&f);
        return -1;
    }
    return cli_diff_add(d, &f);
}

static uint64_t cli_diff_maxpos(const cli_diff_ctx *d)
{
    uint64_t m = 0;
    for (size_t i = 0; i < d->nfound; i++)
        if (d->found[i].pos > m)
            m = d->found[i].pos;
    return m;
}

/* Walks both traces. @return 0, -1 on error (d->err). */
static int cli_diff_walk(cli_diff_ctx *d)
{
    tf_item ia, ib;
    for (;;) {   /* pairing calls */
        int ra = cli_diff_next_call(d, 0, &ia);
        if (ra < 0)
            return -1;
        int rb = cli_diff_next_call(d, 1, &ib);
        if (rb < 0)
            return -1;
        if (!ra && !rb)
            return 0;
        if (!ra || !rb)
            return cli_diff_end(d, ra ? 0 : 1, ra ? &ia.u.call : &ib.u.call);
        d->pos++;
        int r = cli_diff_calls(d, &ia.u.call, &ib.u.call);
        if (r < 0)
            return -1;
        if (r == 0 || d->nfound >= d->max)
            break;
    }
    /* Stopped early: late data of the calls before the last difference may
     * still come (a read-back that differs before it); read on for it. */
    uint64_t limit = cli_diff_maxpos(d);
    while (cli_diff_expecting(d, limit + 1)) {
        int ra = cli_diff_next_call(d, 0, &ia);
        if (ra < 0)
            return -1;
        int rb = cli_diff_next_call(d, 1, &ib);
        if (rb < 0)
            return -1;
        if (!ra && !rb)
            break;
    }
    return 0;
}

/* Orders the differences by call position (unknown last), keeps d->max. */
static void cli_diff_sort(cli_diff_ctx *d)
{
    for (size_t i = 1; i < d->nfound; i++) {   /* insertion sort: stable, few items */
        cli_diff_found x = d->found[i];
        uint64_t kx = x.pos ? x.pos : UINT64_MAX;
        size_t j = i;
        for (; j > 0 && (d->found[j - 1].pos ? d->found[j - 1].pos : UINT64_MAX) > kx; j--)
            d->found[j] = d->found[j - 1];
        d->found[j] = x;
    }
    while (d->nfound > d->max)
        cli_diff_found_free(&d->found[--d->nfound]);
}

/* Name of the first device in the trace's environment ("" when none). From
 * format 1.1 devices come in DEVICES items: the first few thousand items
 * are read for one, then the trace is read from the start again. */
static void cli_diff_device(tf_reader *r, char *dst, size_t cap)
{
    dst[0] = 0;
    tf_item it;
    int have = 0;
    for (int n = 0; n < 4096 && tf_reader_next(r, &it) == TF_OK && !have; n++)
        have = it.type == TF_ITEM_DEVICES;
    if (tf_reader_rewind(r) != TF_OK)
        return;
    const tf_value *plats = tf_map_get(tf_reader_env(r), "platforms");
    for (uint32_t i = 0; plats && plats->type == TF_ARRAY && i < plats->v.arr.n; i++) {
        const tf_value *devs = tf_map_get(&plats->v.arr.items[i], "devices");
        for (uint32_t j = 0; devs && devs->type == TF_ARRAY && j < devs->v.arr.n; j++) {
            const tf_value *n = tf_map_get(&devs->v.arr.items[j], "name");
            if (n && n->type == TF_STR) {
                size_t len = n->v.str.len < cap ? n->v.str.len : cap - 1;
                for (size_t k = 0; k < len; k++)
                    dst[k] = (unsigned char)n->v.str.ptr[k] < 0x20 ? ' ' : n->v.str.ptr[k];
                dst[len] = 0;
                return;
            }
        }
    }
}

/* The one error line for a failed walk or a truncated trace. */
static void cli_diff_report_error(cli_diff_ctx *d)
{
    cli_diff_side *s = &d->side[d->err_side < 0 ? 0 : d->err_side];
    if (d->err == TF_ERR_NOMEM)
        cli_err("out of memory");
    else
        cli_trace_err(s->r, s->path, d->err);
}

static int cli_diff_truncated(cli_diff_ctx *d)
{
    for (int i = 0; i < 2; i++) {
        const tf_reader_info *info = d->side[i].ended ? cli_trace_info(d->side[i].r) : NULL;
        if (info && info->truncated) {
            cli_err("%s: the trace is cut short (inside a chunk after byte %" PRIu64
                    ", %" PRIu64 " calls readable); it cannot be compared",
                    d->side[i].path, info->valid_bytes, d->side[i].calls);
            return 1;
        }
    }
    return 0;
}

static void cli_diff_free(cli_diff_ctx *d)
{
    for (size_t i = 0; i < d->nfound; i++)
        cli_diff_found_free(&d->found[i]);
    for (size_t i = 0; i < d->nnotes; i++)
        cli_diff_found_free(&d->notes[i]);
    free(d->found);
    free(d->notes);
    cli_diff_pending_finish(d);
    cli_diff_track_free(d->track);
    free(d->ring);
    tf_reader_close(d->side[0].r);
    tf_reader_close(d->side[1].r);
}

static int cli_diff_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "tolerance", required_argument, NULL, 't' },
        { "queries", no_argument, NULL, 'q' },
        { "max", required_argument, NULL, 'm' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    cli_diff_ctx d;
    memset(&d, 0, sizeof d);
    d.max = 1;
    d.err_side = -1;
    d.tol_spec = "exact";
    int json = 0, c;
    char err[160];
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (rpl_tolerance_parse(optarg, &d.tol, err, sizeof err))
                return cli_usage_err("invalid tolerance '%s': %s", optarg, err);
            d.tol_spec = optarg;
            break;
        case 'q': d.queries = 1; break;
        case 'm': {
            char *end = NULL;
            unsigned long long v = optarg[0] >= '0' && optarg[0] <= '9' ? strtoull(optarg, &end, 10) : 0;
            if (!end || *end || v < 1 || v > 100000)
                return cli_usage_err("invalid --max '%s' (expected 1 to 100000)", optarg);
            d.max = (unsigned)v;
            break;
        }
        case 'j': json = 1; break;
        case 'h': fputs(cli_diff_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    if (argc - optind < 2)
        return cli_usage_err(argc - optind ? "missing the second trace" : "missing the traces to compare");
    if (argc - optind > 2)
        return cli_usage_err("unexpected argument '%s'", argv[optind + 2]);
    for (int i = 0; i < 2; i++) {
        d.side[i].path = argv[optind + i];
        d.side[i].r = cli_open_trace(d.side[i].path);
        if (!d.side[i].r) {
            cli_diff_free(&d);
            return CLI_EXIT_ERROR;
        }
        cli_diff_device(d.side[i].r, d.side[i].device, sizeof d.side[i].device);
    }
    d.ring = calloc(CLI_DIFF_RING, sizeof *d.ring);
    d.track = cli_diff_track_new();
    if (!d.ring || !d.track) {
        cli_err("out of memory");
        cli_diff_free(&d);
        return CLI_EXIT_ERROR;
    }
    if (cli_diff_walk(&d)) {
        cli_diff_report_error(&d);
        cli_diff_free(&d);
        return CLI_EXIT_ERROR;
    }
    if (cli_diff_truncated(&d)) {
        cli_diff_free(&d);
        return CLI_EXIT_ERROR;
    }
    if (d.side[0].ended && d.side[1].ended)
        cli_diff_pending_finish(&d);   /* what never found its pair */
    cli_diff_sort(&d);
    if (json)
        cli_diff_print_json(stdout, &d);
    else
        cli_diff_print_human(stdout, &d);
    int rc = d.nfound ? CLI_EXIT_DIFFERENT : CLI_EXIT_OK;
    cli_diff_free(&d);
    return rc;
}

const cli_command cli_cmd_diff = {
    "diff", "compare two traces call by call and data by data; show the first divergence",
    cli_diff_usage, cli_diff_run, NULL,
};
