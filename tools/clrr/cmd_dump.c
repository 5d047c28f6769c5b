/* cmd_dump.c — `clrr dump FILE [--json] [--range A:B]`: one line per trace
 * item, in reader order (calls appear when they return; calls that never
 * returned at the end). */
#include "tools/clrr/cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char cli_dump_usage[] =
    "Usage: clrr dump FILE [--json] [--range A:B]\n"
    "Print every item of a trace, one per line, in file order: calls (when they\n"
    "returned), device timings, late data and recorder notes.\n"
    "\n"
    "Options:\n"
    "  --json         one JSON object per line: {\"type\":\"call\"|\"devtime\"|\"data\"|\"note\",...}\n"
    "  --range A:B    only calls A <= seq <= B and the items that refer to them;\n"
    "                 either side may be empty (100: or :50); N alone means N:N\n"
    "  -h, --help     show this help\n"
    "\n"
    "Human form: #SEQ [tTID] function(param=value, ...) = result -> output=value  time\n"
    "Handles print as #id, data as <SIZE B blob HASH…> (first 8 hex digits).\n"
    "\n"
    "Exit status: 0 ok, 2 usage error, 3 the trace cannot be read (what was read\n"
    "before the damage is printed; one line on stderr).\n";

typedef struct cli_range {
    uint64_t lo, hi;    /* inclusive */
    int set;
} cli_range;

/* Parses "A:B", "A:", ":B" or "N". @return 0, or -1 when malformed. */
static int cli_parse_range(const char *s, cli_range *r)
{
    r->lo = 0;
    r->hi = UINT64_MAX;
    r->set = 1;
    const char *colon = strchr(s, ':');
    for (int side = 0; side < 2; side++) {
        const char *p = side ? (colon ? colon + 1 : s) : s;
        const char *end = side ? p + strlen(p) : (colon ? colon : s + strlen(s));
        if (p == end) {
            if (!colon)
                return -1;
            continue;
        }
        uint64_t v = 0;
        for (const char *q = p; q < end; q++) {
            if (!isdigit((unsigned char)*q) || v > (UINT64_MAX - 9) / 10)
                return -1;
            v = v * 10 + (uint64_t)(*q - '0');
        }
        if (side)
            r->hi = v;
        else
            r->lo = v;
    }
    return r->lo <= r->hi ? 0 : -1;
}

static int cli_in_range(const cli_range *r, uint64_t seq)
{
    if (!r->set)
        return 1;
    return seq != 0 && seq >= r->lo && seq <= r->hi;
}

static const char *cli_param_name(const tf_sig *sig, uint32_t i, char *buf, size_t cap)
{
    if (sig->params[i].name && sig->params[i].name[0])
        return sig->params[i].name;
    snprintf(buf, cap, "arg%" PRIu32, i);
    return buf;
}

/* Text of a note or key: control characters shown as spaces. */
static void cli_put_text(FILE *f, const char *s)
{
    for (; s && *s; s++)
        putc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

static void cli_dump_call_human(FILE *f, const tf_call *c)
{
    const tf_sig *sig = c->sig;
    char nb[24], tb[CLI_FMT_CAP];
    fprintf(f, "#%" PRIu64 " [t%" PRIu64 "] %s(", c->seq, c->tid, sig && sig->name ? sig->name : "?");
    for (uint32_t i = 0; sig && c->args && i < sig->nparams; i++) {
        fprintf(f, "%s%s=", i ? ", " : "", cli_param_name(sig, i, nb, sizeof nb));
        cli_print_param(f, sig, i, &c->args[i]);
    }
    putc(')', f);
    if (!c->complete) {
        fputs(" = <never returned>\n", f);
        return;
    }
    if (sig && !(c->ret.type == TF_NIL && sig->ret_type && !strcmp(sig->ret_type, "void"))) {
        fputs(" = ", f);
        cli_print_ret(f, sig, &c->ret);
    }
    int first = 1;
    for (uint32_t i = 0; sig && c->outs && i < sig->nparams; i++) {
        if (c->outs[i].type == TF_NIL)
            continue;
        fprintf(f, "%s%s=", first ? " -> " : ", ", cli_param_name(sig, i, nb, sizeof nb));
        cli_print_param(f, sig, i, &c->outs[i]);
        first = 0;
    }
    if (c->pre) {
        fputs(" pre", f);
        cli_print_value(f, c->pre);
    }
    if (c->post) {
        fputs(" post", f);
        cli_print_value(f, c->post);
    }
    fprintf(f, "  %s\n", cli_fmt_ns(c->t_end - c->t_begin, tb));
}

/* Every JSON line ends with its schema's name (docs/json.md), last so that
 * a line still starts {"type":... */
#define CLI_DUMP_JSON_END ",\"schema\":\"clrr-dump/1\"}\n"

static void cli_dump_call_json(FILE *f, const tf_call *c)
{
    const tf_sig *sig = c->sig;
    char nb[24];
    fprintf(f, "{\"type\":\"call\",\"seq\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"fn\":", c->seq, c->tid);
    cli_json_cstr(f, sig ? sig->name : NULL);
    fprintf(f, ",\"t_begin\":%" PRId64 ",\"t_end\":%" PRId64 ",\"complete\":%s,\"args\":{",
            c->t_begin, c->t_end, c->complete ? "true" : "false");
    for (uint32_t i = 0; sig && c->args && i < sig->nparams; i++) {
        if (i)
            putc(',', f);
        cli_json_cstr(f, cli_param_name(sig, i, nb, sizeof nb));
        putc(':', f);
        cli_json_value(f, &c->args[i]);
    }
    fputs("},\"ret\":", f);
    cli_json_value(f, c->complete ? &c->ret : NULL);
    fputs(",\"outs\":", f);
    if (c->outs && sig) {
        int first = 1;
        putc('{', f);
        for (uint32_t i = 0; i < sig->nparams; i++) {
            if (c->outs[i].type == TF_NIL)
                continue;
            if (!first)
                putc(',', f);
            cli_json_cstr(f, cli_param_name(sig, i, nb, sizeof nb));
            putc(':', f);
            cli_json_value(f, &c->outs[i]);
            first = 0;
        }
        putc('}', f);
    } else {
        fputs("null", f);
    }
    fputs(",\"pre\":", f);
    cli_json_value(f, c->pre);
    fputs(",\"post\":", f);
    cli_json_value(f, c->post);
    fputs(CLI_DUMP_JSON_END, f);
}

static void cli_dump_item(FILE *f, const tf_item *it, int json)
{
    char a[CLI_FMT_CAP], b[CLI_FMT_CAP];
    switch (it->type) {
    case TF_ITEM_CALL:
        if (json)
            cli_dump_call_json(f, &it->u.call);
        else
            cli_dump_call_human(f, &it->u.call);
        break;
    case TF_ITEM_DEVTIME: {
        const tf_devtime *d = &it->u.devtime;
        if (json) {
            fprintf(f, "{\"type\":\"devtime\",\"seq\":%" PRIu64 ",\"queued\":%" PRIu64
                    ",\"submit\":%" PRIu64 ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 CLI_DUMP_JSON_END,
                    d->seq, d->queued, d->submit, d->start, d->end);
        } else if (d->end >= d->start && d->queued && d->start >= d->queued) {
            fprintf(f, "   device time #%" PRIu64 ": %s (queued→end %s)\n", d->seq,
                    cli_fmt_ns((int64_t)(d->end - d->start), a),
                    cli_fmt_ns((int64_t)(d->end - d->queued), b));
        } else if (d->end >= d->start) {   /* queued/submit not recorded (0) */
            fprintf(f, "   device time #%" PRIu64 ": %s\n", d->seq,
                    cli_fmt_ns((int64_t)(d->end - d->start), a));
        } else {
            fprintf(f, "   device time #%" PRIu64 ": queued %" PRIu64 ", submit %" PRIu64
                    ", start %" PRIu64 ", end %" PRIu64 " (inconsistent)\n",
                    d->seq, d->queued, d->submit, d->start, d->end);
        }
        break;
    }
    case TF_ITEM_DATA: {
        const tf_data *d = &it->u.data;
        if (json) {
            fprintf(f, "{\"type\":\"data\",\"seq\":%" PRIu64 ",\"key\":", d->seq);
            cli_json_cstr(f, d->key);
            fputs(",\"value\":", f);
            cli_json_value(f, &d->value);
            fputs(CLI_DUMP_JSON_END, f);
        } else {
            fprintf(f, "   data #%" PRIu64 " ", d->seq);
            cli_put_text(f, d->key);
            fputs(": ", f);
            cli_print_value(f, &d->value);
            putc('\n', f);
        }
        break;
    }
    case TF_ITEM_NOTE: {
        const tf_note *n = &it->u.note;
        if (json) {
            fprintf(f, "{\"type\":\"note\",\"seq\":%" PRIu64 ",\"object\":%" PRIu64 ",\"text\":",
                    n->seq, n->object);
            cli_json_cstr(f, n->text);
            fputs(CLI_DUMP_JSON_END, f);
        } else {
            fputs("   note", f);
            if (n->seq)
                fprintf(f, " #%" PRIu64, n->seq);
            if (n->object)
                fprintf(f, " object #%" PRIu64, n->object);
            fputs(": ", f);
            cli_put_text(f, n->text);
            putc('\n', f);
        }
        break;
    }
    case TF_ITEM_DEVICES: {
        const tf_devices *d = &it->u.devices;
        if (json) {
            fprintf(f, "{\"type\":\"devices\",\"platform\":%" PRIu64 ",\"devices\":", d->platform);
            cli_json_value(f, d->devices);
            fputs(CLI_DUMP_JSON_END, f);
        } else {
            fprintf(f, "   devices of platform #%" PRIu64 ":", d->platform);
            for (uint32_t i = 0; d->devices && i < d->devices->v.arr.n; i++) {
                const tf_value *dv = &d->devices->v.arr.items[i], *n = tf_map_get(dv, "name");
                uint64_t id = 0;
                tf_value_u64(tf_map_get(dv, "id"), &id);
                fprintf(f, "%s #%" PRIu64 " ", i ? "," : "", id);
                if (n && n->type == TF_STR)
                    cli_print_value(f, n);
            }
            putc('\n', f);
        }
        break;
    }
    default:
        break;   /* an item type this build does not know: skipped */
    }
}

static uint64_t cli_item_seq(const tf_item *it)
{
    switch (it->type) {
    case TF_ITEM_CALL: return it->u.call.seq;
    case TF_ITEM_DEVTIME: return it->u.devtime.seq;
    case TF_ITEM_DATA: return it->u.data.seq;
    case TF_ITEM_NOTE: return it->u.note.seq;
    default: return 0;
    }
}

static int cli_dump_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "range", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    cli_range range = { 0, UINT64_MAX, 0 };
    int json = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'r':
            if (cli_parse_range(optarg, &range))
                return cli_usage_err("invalid range '%s' (expected A:B, A:, :B or N)", optarg);
            break;
        case 'h': fputs(cli_dump_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    const char *path;
    int urc = cli_one_file(argc, argv, &path);
    if (urc != CLI_EXIT_OK)
        return urc;
    tf_reader *r = cli_open_trace(path);
    if (!r)
        return CLI_EXIT_ERROR;
    int rc = CLI_EXIT_OK;
    tf_item it;
    tf_status s;
    while ((s = tf_reader_next(r, &it)) == TF_OK) {
        if (cli_in_range(&range, cli_item_seq(&it)))
            cli_dump_item(stdout, &it, json);
    }
    if (s != TF_END)
        rc = cli_trace_err(r, path, s);
    tf_reader_close(r);
    return rc;
}

const cli_command cli_cmd_dump = {
    "dump", "print every call and item of a trace, one per line (or JSON lines)",
    cli_dump_usage, cli_dump_run, NULL,
};
