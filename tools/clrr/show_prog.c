/* show_prog.c — `clrr show` of programs and kernels: a program's source as
 * recorded, the headers its builds recorded, its builds' options and
 * results, the build logs the application asked for (per device), its
 * binaries (size and hash, or the bytes); a kernel's argument info (what
 * the application asked with clGetKernelArgInfo, else what the kernel
 * analysis finds in its program's recorded source) and its arguments as
 * last set. */
#include "tools/clrr/cli.h"
#include "tools/clrr/show_int.h"
#include "tools/clrr/names.h"
#include "analyzer/ana.h"
#include "replayer/rpl.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* the recorded name of device @p id (ENV platforms[].devices[]), or NULL */
static const char *cli_show_dev_name(tf_reader *r, uint64_t id, size_t *len)
{
    const tf_value *plats = tf_map_get(tf_reader_env(r), "platforms");
    for (uint32_t p = 0; plats && plats->type == TF_ARRAY && p < plats->v.arr.n; p++) {
        const tf_value *devs = tf_map_get(&plats->v.arr.items[p], "devices");
        for (uint32_t d = 0; devs && devs->type == TF_ARRAY && d < devs->v.arr.n; d++) {
            uint64_t did = 0;
            const tf_value *n = tf_map_get(&devs->v.arr.items[d], "name");
            if (tf_value_u64(tf_map_get(&devs->v.arr.items[d], "id"), &did) && did == id && n && n->type == TF_STR) {
                *len = n->v.str.len;
                return n->v.str.ptr;
            }
        }
    }
    return NULL;
}

static const char *cli_show_err_name(int64_t code)
{
    const char *n = code != CLI_SHOW_NO_CODE ? cli_error_name(code) : NULL;
    return n ? n : "?";
}

static const cli_show_build *cli_show_last_ok_build(const cli_show_obj *p)
{
    for (uint32_t i = p->nbuilds; i-- > 0;)
        if (!p->builds[i].ret)
            return &p->builds[i];
    return p->nbuilds ? &p->builds[p->nbuilds - 1] : NULL;
}

void cli_show_json_put(json_t *j)
{
    if (json_is_object(j))   /* every form names the schema (docs/schemas/show.json) */
        json_object_set_new(j, "schema", json_string("clrr-show/1"));
    if (cli_json_put(stdout, j) < 0)
        cli_err("show: out of memory");
    else
        putchar('\n');
}

json_t *cli_show_obj_json_head(const cli_show_obj *o)
{
    json_t *j = json_object();
    CLI_JSET(j, "id", cli_json_u64(o->id));
    CLI_JSET(j, "kind", json_string(cli_show_kind_name(o->kind)));
    CLI_JSET(j, "created_at", cli_json_u64(o->create_seq));
    CLI_JSET(j, "created_by", cli_json_ctext(o->fn));
    CLI_JSET(j, "released_at", o->release_seq ? cli_json_u64(o->release_seq) : json_null());
    return j;
}

json_t *cli_show_prog_brief_json(const cli_show_scan *sc, const cli_show_obj *p)
{
    const cli_show_build *b = p->nbuilds ? &p->builds[p->nbuilds - 1] : NULL;
    json_t *j = cli_show_obj_json_head(p), *a = json_array();
    CLI_JSET(j, "source_bytes", cli_json_u64(p->source ? p->source_len : 0));
    CLI_JSET(j, "binaries", json_integer(p->nbins));
    CLI_JSET(j, "builds", json_integer(p->nbuilds));
    CLI_JSET(j, "build_logs", json_integer(p->nlogs));
    CLI_JSET(j, "last_build", cli_json_ctext(b ? cli_show_err_name(b->ret) : NULL));
    for (size_t i = 0; i < sc->n; i++)
        if (sc->objs[i].kind == CLI_SHOW_KERNEL && sc->objs[i].program == p->id)
            json_array_append_new(a, cli_json_u64(sc->objs[i].id));
    CLI_JSET(j, "kernels", a);
    return j;
}

void cli_show_prog_brief(FILE *f, const cli_show_scan *sc, const cli_show_obj *p)
{
    char sz[CLI_FMT_CAP];
    const cli_show_build *b = p->nbuilds ? &p->builds[p->nbuilds - 1] : NULL;
    fprintf(f, "%-10s #%-6" PRIu64 " ", "program", p->id);
    if (p->source)
        fprintf(f, "source %s", cli_fmt_size(p->source_len, sz));
    else if (p->nbins)
        fprintf(f, "%" PRIu32 " binar%s", p->nbins, p->nbins == 1 ? "y" : "ies");
    else
        fputs("no source", f);
    if (b)
        fprintf(f, ", %s %s", b->fn, cli_show_err_name(b->ret));
    int first = 1;
    for (size_t i = 0; i < sc->n; i++) {
        const cli_show_obj *k = &sc->objs[i];
        if (k->kind != CLI_SHOW_KERNEL || k->program != p->id)
            continue;
        int seen = 0;   /* each name once (kernels made again, clCreateKernelsInProgram) */
        for (size_t j = 0; j < i && !seen; j++)
            seen = sc->objs[j].kind == CLI_SHOW_KERNEL && sc->objs[j].program == p->id &&
                   !strcmp(sc->objs[j].name, k->name);
        if (seen)
            continue;
        fprintf(f, "%s%s", first ? ", kernels " : " ", k->name[0] ? k->name : "?");
        first = 0;
    }
    fprintf(f, "  created at call #%" PRIu64 " (%s)", p->create_seq, p->fn);
    if (p->release_seq)
        fprintf(f, ", released at call #%" PRIu64, p->release_seq);
    putc('\n', f);
}

json_t *cli_show_kernel_brief_json(const cli_show_obj *k)
{
    json_t *j = json_object();
    CLI_JSET(j, "id", cli_json_u64(k->id));
    CLI_JSET(j, "kind", json_string("kernel"));
    CLI_JSET(j, "name", cli_json_ctext(k->name));
    CLI_JSET(j, "program", cli_json_u64(k->program));
    CLI_JSET(j, "created_at", cli_json_u64(k->create_seq));
    CLI_JSET(j, "created_by", cli_json_ctext(k->fn));
    CLI_JSET(j, "released_at", k->release_seq ? cli_json_u64(k->release_seq) : json_null());
    return j;
}

void cli_show_kernel_brief(FILE *f, const cli_show_obj *k)
{
    fprintf(f, "%-10s #%-6" PRIu64 " %s of program #%" PRIu64 "  created at call #%" PRIu64 " (%s)", "kernel", k->id,
            k->name[0] ? k->name : "?", k->program, k->create_seq, k->fn);
    if (k->release_seq)
        fprintf(f, ", released at call #%" PRIu64, k->release_seq);
    putc('\n', f);
}

/* ------------------------------------------------------------ programs */

/* the bytes of binary @p i, read from the trace */
static int cli_show_bin_bytes(tf_reader *r, const cli_show_obj *p, uint64_t i, void **data, size_t *len)
{
    tf_value v = {.type = TF_BLOB, .v.blob = p->bins[i]};
    return cli_show_value_bytes(r, &v, (size_t)1 << 31, data, len) == TF_OK ? 0 : -1;
}

static int cli_show_raw_out(const cli_show_opts *o, const void *data, size_t len, int binary)
{
    const char *inputs[] = {o->trace, NULL};
    cli_out out;
    int rc = cli_out_open(&out, o->out ? o->out : "-", binary ? CLI_OUT_BINARY : 0, inputs);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (len && fwrite(data, 1, len, out.f) != len) {
        cli_out_abort(&out);
        cli_err("%s: writing failed", o->out ? o->out : "stdout");
        return CLI_EXIT_ERROR;
    }
    return cli_out_commit(&out);
}

static void cli_show_prog_json(tf_reader *r, const cli_show_scan *sc, const cli_show_obj *p)
{
    json_t *j = cli_show_obj_json_head(p), *a;
    CLI_JSET(j, "context", cli_json_u64(p->context));
    CLI_JSET(j, "source", p->source ? cli_json_text(p->source, p->source_len) : json_null());
    CLI_JSET(j, "builds", a = json_array());
    for (uint32_t i = 0; i < p->nbuilds; i++) {
        const cli_show_build *b = &p->builds[i];
        json_t *e = json_object(), *hs = json_array(), *ms = json_array();
        CLI_JSET(e, "seq", cli_json_u64(b->seq));
        CLI_JSET(e, "fn", cli_json_ctext(b->fn));
        CLI_JSET(e, "options", cli_json_ctext(b->options));
        CLI_JSET(e, "code", json_integer(b->ret == CLI_SHOW_NO_CODE ? -1 : b->ret));
        CLI_JSET(e, "result", cli_json_ctext(cli_show_err_name(b->ret)));
        for (uint32_t h = 0; h < b->nheaders; h++) {
            json_t *he = json_object();
            CLI_JSET(he, "name", cli_json_ctext(b->hnames[h]));
            CLI_JSET(he, "size", cli_json_u64(b->hsizes[h]));
            json_array_append_new(hs, he);
        }
        CLI_JSET(e, "headers", hs);
        for (uint32_t h = 0; h < b->nmissing; h++)
            json_array_append_new(ms, cli_json_ctext(b->missing[h]));
        CLI_JSET(e, "headers_missing", ms);
        json_array_append_new(a, e);
    }
    CLI_JSET(j, "build_logs", a = json_array());
    for (uint32_t i = 0; i < p->nlogs; i++) {
        const cli_show_log *l = &p->logs[i];
        size_t nl = 0;
        const char *dn = cli_show_dev_name(r, l->device, &nl);
        json_t *e = json_object();
        CLI_JSET(e, "device", cli_json_u64(l->device));
        CLI_JSET(e, "device_name", dn ? cli_json_text(dn, nl) : json_null());
        CLI_JSET(e, "seq", cli_json_u64(l->seq));
        CLI_JSET(e, "log", cli_json_text(l->text, l->len));
        json_array_append_new(a, e);
    }
    CLI_JSET(j, "binaries_from",
            json_string(p->bins_fetched ? "query" : !strcmp(p->fn, "clCreateProgramWithIL") ? "il" : "creation"));
    CLI_JSET(j, "binaries", a = json_array());
    for (uint32_t i = 0; i < p->nbins; i++) {
        char hb[CLI_FMT_CAP + 4];
        json_t *e = json_object();
        CLI_JSET(e, "index", json_integer(i));
        CLI_JSET(e, "size", cli_json_u64(p->bins[i].size));
        CLI_JSET(e, "hash", json_string(cli_fmt_hash(&p->bins[i], 32, hb)));
        json_array_append_new(a, e);
    }
    CLI_JSET(j, "kernels", a = json_array());
    for (size_t i = 0; i < sc->n; i++)
        if (sc->objs[i].kind == CLI_SHOW_KERNEL && sc->objs[i].program == p->id) {
            json_t *e = json_object();
            CLI_JSET(e, "id", cli_json_u64(sc->objs[i].id));
            CLI_JSET(e, "name", cli_json_ctext(sc->objs[i].name));
            json_array_append_new(a, e);
        }
    cli_show_json_put(j);
}

static void cli_show_logs_human(tf_reader *r, FILE *f, const cli_show_obj *p)
{
    for (uint32_t i = 0; i < p->nlogs; i++) {
        const cli_show_log *l = &p->logs[i];
        size_t nl = 0;
        const char *dn = cli_show_dev_name(r, l->device, &nl);
        fprintf(f, "-- build log of device #%" PRIu64 " %.*s (asked at call #%" PRIu64 "): ", l->device, (int)nl,
                dn ? dn : "", l->seq);
        if (!l->len) {
            fputs("empty\n", f);
            continue;
        }
        fputs("\n", f);
        fwrite(l->text, 1, l->len, f);
        if (l->text[l->len - 1] != '\n')
            putc('\n', f);
    }
    if (!p->nlogs)
        fputs("no build log recorded: the application did not ask for one (CL_PROGRAM_BUILD_LOG);"
              " --log --replay builds it here\n", f);
}

/* --log --replay: the log the driver here gives after a replay up to the
 * program's last build (or --at) */
static int cli_show_log_replay(const cli_show_opts *o, const cli_show_obj *p)
{
    uint64_t at = o->have_at ? o->at : p->nbuilds ? p->builds[p->nbuilds - 1].seq : 0;
    if (!at)
        return cli_usage_err("program #%" PRIu64 " was never built in the trace: give --at SEQ", p->id);
    if (at < p->create_seq || (p->release_seq && at >= p->release_seq))
        return cli_usage_err("--at %" PRIu64 ": program #%" PRIu64 " lives from call #%" PRIu64 " to #%" PRIu64, at,
                             p->id, p->create_seq, p->release_seq ? p->release_seq - 1 : UINT64_MAX);
    rpl_opts ro;
    rpl_opts_init(&ro);
    ro.device = o->device;
    ro.max_memory = cli_max_memory();
    char err[512], *log = NULL;
    if (rpl_peek_build_log(o->trace, &ro, at, p->id, &log, err, sizeof err) != RPL_OK) {
        cli_err("%s: replay up to call #%" PRIu64 ": %s", o->trace, at, err);
        return CLI_EXIT_ERROR;
    }
    printf("build log of program #%" PRIu64 " after call #%" PRIu64 ", computed by replay here:\n%s", p->id, at, log);
    free(log);
    return CLI_EXIT_OK;
}

int cli_show_prog_view(tf_reader *r, const cli_show_scan *sc, const cli_show_obj *p, const cli_show_opts *o)
{
    if (o->have_as || o->have_range || o->have_count || o->format)
        return cli_usage_err("#%" PRIu64 " is a program: --as, --range, --count and --format are for memory objects",
                             p->id);
    if ((o->have_at || o->replay || o->device) && !o->log)
        return cli_usage_err("#%" PRIu64 " is a program: --at, --replay and --device go with --log", p->id);
    if (o->source + o->log + o->have_bin > 1)
        return cli_usage_err("--source, --log and --binary: one at a time");
    if (o->json && (o->source || o->log || o->have_bin || o->out))
        return cli_usage_err("--json shows the whole program (no --source, --log, --binary or -o)");
    if (o->json) {
        cli_show_prog_json(r, sc, p);
        return CLI_EXIT_OK;
    }
    if (o->source || (o->out && !o->have_bin && !o->log)) {
        if (!p->source)
            return cli_usage_err("program #%" PRIu64 " was created by %s: it has no source%s", p->id, p->fn,
                                 p->nbins ? " (--binary 0 writes its binary)" : "");
        return cli_show_raw_out(o, p->source, p->source_len, 0);
    }
    if (o->have_bin) {
        if (o->bin >= p->nbins)
            return cli_usage_err("program #%" PRIu64 " has %" PRIu32 " recorded binar%s: no binary %" PRIu64, p->id,
                                 p->nbins, p->nbins == 1 ? "y" : "ies", o->bin);
        void *d;
        size_t n;
        if (cli_show_bin_bytes(r, p, o->bin, &d, &n)) {
            cli_err("%s: binary %" PRIu64 " of program #%" PRIu64 " cannot be read: %s", o->trace, o->bin, p->id,
                    tf_reader_error(r));
            return CLI_EXIT_ERROR;
        }
        int rc = cli_show_raw_out(o, d, n, 1);
        free(d);
        return rc;
    }
    FILE *f = stdout;
    if (o->log) {
        if (o->out)
            return cli_usage_err("--log prints the logs (no -o)");
        if (o->replay || o->have_at || o->device)
            return cli_show_log_replay(o, p);
        cli_show_logs_human(r, f, p);
        return CLI_EXIT_OK;
    }
    char sz[CLI_FMT_CAP], hb[CLI_FMT_CAP + 4];
    fprintf(f, "program #%" PRIu64 "  created at call #%" PRIu64 " (%s)", p->id, p->create_seq, p->fn);
    if (p->release_seq)
        fprintf(f, ", released at call #%" PRIu64, p->release_seq);
    fprintf(f, ", context #%" PRIu64 "\n", p->context);
    if (p->source) {
        tf_blobref h;
        tf_hash(p->source, p->source_len, &h);
        fprintf(f, "source     %s, hash %s (--source prints it alone)\n", cli_fmt_size(p->source_len, sz),
                cli_fmt_hash(&h, 8, hb));
    }
    for (uint32_t i = 0; i < p->nbuilds; i++) {
        const cli_show_build *b = &p->builds[i];
        fprintf(f, "build      call #%" PRIu64 " %s: %s, options ", b->seq, b->fn, cli_show_err_name(b->ret));
        if (b->options)
            cli_print_str(f, b->options, strlen(b->options), 0);
        else
            fputs("none", f);
        putc('\n', f);
        for (uint32_t h = 0; h < b->nheaders; h++)
            fprintf(f, "           header %s (%s, recorded)\n", b->hnames[h], cli_fmt_size(b->hsizes[h], sz));
        for (uint32_t h = 0; h < b->nmissing; h++)
            fprintf(f, "           header %s (not found when recorded)\n", b->missing[h]);
    }
    if (!p->nbuilds)
        fputs("build      none recorded\n", f);
    int il = !strcmp(p->fn, "clCreateProgramWithIL");
    for (uint32_t i = 0; i < p->nbins; i++)
        fprintf(f, "%s %-3" PRIu32 " %s, hash %s (%s; --binary %" PRIu32 " -o FILE writes it)\n",
                il ? "IL    " : "binary", i, cli_fmt_size(p->bins[i].size, sz), cli_fmt_hash(&p->bins[i], 8, hb),
                p->bins_fetched ? "the application fetched it" : "created from it", i);
    int first = 1;
    for (size_t i = 0; i < sc->n; i++)
        if (sc->objs[i].kind == CLI_SHOW_KERNEL && sc->objs[i].program == p->id) {
            fprintf(f, "%s%s #%" PRIu64, first ? "kernels    " : ", ", sc->objs[i].name[0] ? sc->objs[i].name : "?",
                    sc->objs[i].id);
            first = 0;
        }
    if (!first)
        putc('\n', f);
    cli_show_logs_human(r, f, p);
    if (p->source) {
        fputs("-- source --\n", f);
        fwrite(p->source, 1, p->source_len, f);
        if (p->source_len && p->source[p->source_len - 1] != '\n')
            putc('\n', f);
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------ kernels */

static const char *cli_show_addr_name(uint64_t q)
{
    switch (q) {
    case 0x119B: return "__global";
    case 0x119C: return "__local";
    case 0x119D: return "__constant";
    case 0x119E: return "__private";
    default: return "?";
    }
}

static const char *cli_show_access_name(uint64_t q)
{
    switch (q) {
    case 0x11A0: return "read_only";
    case 0x11A1: return "write_only";
    case 0x11A2: return "read_write";
    case 0x11A3: return "";   /* CL_KERNEL_ARG_ACCESS_NONE */
    default: return "?";
    }
}

static const char *cli_show_kind_addr(uint8_t kind)
{
    switch (kind) {
    case ANA_ARG_GLOBAL: return "__global";
    case ANA_ARG_CONSTANT: return "__constant";
    case ANA_ARG_LOCAL: return "__local";
    case ANA_ARG_IMAGE: return "__global";
    case ANA_ARG_PIPE: return "__global";
    default: return "__private";
    }
}

static const char *cli_show_use_name(uint8_t acc)
{
    switch (acc) {
    case ANA_ACC_READ: return "reads";
    case ANA_ACC_WRITE: return "writes";
    case ANA_ACC_RW: return "reads, writes";
    default: return "unused";
    }
}

/* One argument as shown: recorded info first, the analysis where it has none. */
typedef struct cli_show_argrow {
    const char *name, *type, *addr, *access, *use, *from;
    int is_const;
} cli_show_argrow;

static void cli_show_argrow_of(const cli_show_obj *k, const ana_kernel *ak, uint32_t i, cli_show_argrow *a)
{
    const cli_show_arginfo *ri = k->arginfo && i < CLI_SHOW_MAX_ARGS ? &k->arginfo[i] : NULL;
    const ana_arg *aa = ak && i < ak->nargs ? &ak->args[i] : NULL;
    memset(a, 0, sizeof *a);
    int rec = ri && (ri->have_name || ri->have_type || ri->have_addr || ri->have_access);
    a->from = rec && aa ? "recorded, analysis" : rec ? "recorded" : aa ? "analysis" : "";
    a->name = ri && ri->have_name ? ri->name : aa && aa->name && aa->name[0] ? aa->name : "?";
    a->type = ri && ri->have_type ? ri->type : aa && aa->type ? aa->type : "?";
    a->addr = ri && ri->have_addr ? cli_show_addr_name(ri->addr) : aa ? cli_show_kind_addr(aa->kind) : "?";
    a->access = ri && ri->have_access ? cli_show_access_name(ri->access) : "";
    a->use = aa ? cli_show_use_name(aa->access) : "";
    a->is_const = ri && ri->have_tq ? (ri->tq & 1) != 0 : aa ? aa->is_const : 0;
}

int cli_show_kernel_view(tf_reader *r, const cli_show_scan *sc, const cli_show_obj *k, const cli_show_opts *o)
{
    (void)r;
    if (o->have_at || o->replay || o->have_as || o->have_range || o->have_count || o->format || o->device ||
        o->out || o->source || o->log || o->have_bin)
        return cli_usage_err("#%" PRIu64 " is a kernel: it takes --json only (its program #%" PRIu64
                             " has the source, logs and binaries)", k->id, k->program);
    const cli_show_obj *p = cli_show_scan_find(sc, k->program);
    ana_program *ap = NULL;
    const ana_kernel *ak = NULL;
    char aerr[512] = "";
    if (p && p->kind == CLI_SHOW_PROGRAM && p->source && k->name[0]) {
        const cli_show_build *b = cli_show_last_ok_build(p);
        if (ana_program_analyze(p->source, p->source_len, b ? b->options : NULL, &ap, aerr, sizeof aerr) == ANA_OK)
            ak = ana_program_find(ap, k->name);
    } else {
        snprintf(aerr, sizeof aerr, "%s", "its program has no recorded source");
    }
    uint32_t n = k->nargs;
    if (ak && ak->nargs > n)
        n = ak->nargs;
    if (n > CLI_SHOW_MAX_ARGS)
        n = CLI_SHOW_MAX_ARGS;
    FILE *f = stdout;
    if (o->json) {
        json_t *j = json_object(), *args = json_array();
        CLI_JSET(j, "id", cli_json_u64(k->id));
        CLI_JSET(j, "kind", json_string("kernel"));
        CLI_JSET(j, "name", cli_json_ctext(k->name));
        CLI_JSET(j, "program", cli_json_u64(k->program));
        CLI_JSET(j, "created_at", cli_json_u64(k->create_seq));
        CLI_JSET(j, "released_at", k->release_seq ? cli_json_u64(k->release_seq) : json_null());
        CLI_JSET(j, "analysis",
                 ak ? json_null() : cli_json_ctext(aerr[0] ? aerr : "the analysis found no such kernel"));
        for (uint32_t i = 0; i < n; i++) {
            cli_show_argrow a;
            cli_show_argrow_of(k, ak, i, &a);
            json_t *e = json_object(), *set;
            CLI_JSET(e, "index", json_integer(i));
            CLI_JSET(e, "name", cli_json_ctext(a.name));
            CLI_JSET(e, "type", cli_json_ctext(a.type));
            CLI_JSET(e, "address", cli_json_ctext(a.addr));
            CLI_JSET(e, "access", cli_json_ctext(a.access));
            CLI_JSET(e, "const", json_boolean(a.is_const));
            CLI_JSET(e, "use", cli_json_ctext(a.use));
            CLI_JSET(e, "from", cli_json_ctext(a.from));
            const cli_show_karg *ka = k->kargs ? &k->kargs[i] : NULL;
            if (!ka || !ka->set) {
                set = json_null();
            } else {
                set = json_object();
                if (ka->set == 2)
                    CLI_JSET(set, "object", cli_json_u64(ka->id));
                else if (ka->set == 3)
                    CLI_JSET(set, "local", cli_json_u64(ka->size));
                else if (ka->set == 4)
                    CLI_JSET(set, "svm", cli_json_u64(ka->id));
                else
                    CLI_JSET(set, "size", cli_json_u64(ka->size));
            }
            CLI_JSET(e, "set", set);
            json_array_append_new(args, e);
        }
        CLI_JSET(j, "args", args);
        cli_show_json_put(j);
        ana_program_free(ap);
        return CLI_EXIT_OK;
    }
    fprintf(f, "kernel #%" PRIu64 " %s  program #%" PRIu64 ", created at call #%" PRIu64 " (%s)", k->id,
            k->name[0] ? k->name : "?", k->program, k->create_seq, k->fn);
    if (k->release_seq)
        fprintf(f, ", released at call #%" PRIu64, k->release_seq);
    putc('\n', f);
    fprintf(f, "arguments  %" PRIu32 " (info: [recorded] what the application asked with clGetKernelArgInfo,"
               " [analysis] the kernel analysis of the recorded source%s%s)\n", n, ak ? "" : ": ",
            ak ? "" : aerr[0] ? aerr : "no such kernel");
    if (n)
        fprintf(f, "  %-3s %-16s %-14s %-22s %-14s %s\n", "#", "name", "type", "qualifiers", "kernel use", "from");
    for (uint32_t i = 0; i < n; i++) {
        cli_show_argrow a;
        cli_show_argrow_of(k, ak, i, &a);
        char qual[64];
        snprintf(qual, sizeof qual, "%s%s%s%s", a.addr, a.is_const ? " const" : "", a.access[0] ? " " : "", a.access);
        fprintf(f, "  %-3" PRIu32 " %-16s %-14s %-22s %-14s [%s]\n", i, a.name, a.type, qual, a.use, a.from);
        const cli_show_karg *ka = k->kargs ? &k->kargs[i] : NULL;
        char sz[CLI_FMT_CAP];
        if (!ka || !ka->set)
            continue;
        if (ka->set == 2) {
            const cli_show_obj *m = cli_show_scan_find(sc, ka->id);
            fprintf(f, "      set: #%" PRIu64 " (%s, %s)\n", ka->id, m ? cli_show_kind_name(m->kind) : "?",
                    m ? cli_fmt_size(m->size, sz) : "?");
        } else if (ka->set == 3) {
            fprintf(f, "      set: __local, %s\n", cli_fmt_size(ka->size, sz));
        } else if (ka->set == 4) {
            fprintf(f, "      set: SVM pointer 0x%" PRIx64 "\n", ka->id);
        } else {
            fprintf(f, "      set: %" PRIu64 " B:", ka->size);
            for (uint64_t b = 0; b < ka->size && b < sizeof ka->bytes; b++)
                fprintf(f, " %02x", ka->bytes[b]);
            putc('\n', f);
        }
    }
    ana_program_free(ap);
    return CLI_EXIT_OK;
}
