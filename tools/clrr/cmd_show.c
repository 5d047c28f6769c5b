/* cmd_show.c — `clrr show TRACE [WHAT] [options]`: what a trace holds,
 * object by object: the listing of its programs, kernels and memory
 * objects; a program (source as recorded, headers, builds, build logs,
 * binaries); a kernel (argument info, arguments as last set); a memory
 * object's contents after any call (from the trace where it holds them,
 * else by replay: rpl_peek), as a hex dump, typed text, raw bytes, .npy or
 * PNG; the calls that failed. The pass over the trace is show_scan.c, the
 * contents show_mem.c, the forms show_out.c; programs and kernels are
 * printed by show_prog.c. */
#include "tools/clrr/cli.h"
#include "tools/clrr/show_int.h"
#include "tools/clrr/names.h"
#include "replayer/rpl.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char cli_show_usage[] =
    "Usage: clrr show TRACE [WHAT] [options]\n"
    "Look inside a trace: its programs, kernels and memory objects, what a memory\n"
    "object held after any call, and the calls that failed (docs/show.md).\n"
    "\n"
    "WHAT:\n"
    "  (none)            list the programs, kernels and memory objects: id, kind,\n"
    "                    size, flags, the calls that created and released them\n"
    "  ID, #ID           the object with that id (as `clrr dump` shows it; an SVM\n"
    "                    allocation also as ptr#ID or its address 0xHEX)\n"
    "  NAME              the kernel of that name (the first one created)\n"
    "  errors            the calls that returned an error: call, function, error\n"
    "\n"
    "Options:\n"
    "  --json            the listing, a program, a kernel or the errors as JSON\n"
    "  programs:\n"
    "  --source          only the source, byte for byte as recorded\n"
    "  --log             only the build logs the application asked for; with\n"
    "                    --replay (--at SEQ, --device SPEC) the log the driver here\n"
    "                    gives after a replay up to the last build (or call SEQ)\n"
    "  --binary I        only binary I (from 0: the one of the I-th device; raw bytes)\n"
    "  memory objects:\n"
    "  --at SEQ          the contents after call SEQ (default: the last call before\n"
    "                    the object's release, or the trace's last call)\n"
    "  --replay          compute them by replay even where the trace holds them\n"
    "  --device SPEC     the device the replay runs on (as `clrr replay --device`)\n"
    "  --as TYPE         typed text, one element a line: [INDEX] values; TYPE is\n"
    "                    char, uchar, short, ushort, int, uint, long, ulong, half,\n"
    "                    float, double, or int8 .. uint64, float16/32/64, with an\n"
    "                    optional vector width 2, 3, 4, 8 or 16 (float4); also the\n"
    "                    element type of -o FILE.npy (default: uint8; images: their pixel)\n"
    "  --range A:B       only elements A..B (bytes in the hex dump); A: or :B\n"
    "  --count N         at most N elements (bytes in the hex dump; default 4096)\n"
    "  -o OUT            write the contents, or a program's source or binary, to OUT:\n"
    "                    raw bytes; OUT.npy numpy's .npy; OUT.png a PNG of a 2D image;\n"
    "                    OUT/ (a directory) one PNG per slice of a 3D image or array\n"
    "                    (OUT/slice-000.png ...); '-' stdout (not a terminal)\n"
    "  --format FORM     raw, npy or png, whatever OUT's name says\n"
    "  -h, --help        show this help\n"
    "\n"
    "PNG: channel orders R, A, INTENSITY, LUMINANCE, DEPTH (gray), RA, RG, RGB,\n"
    "RGBA, BGRA, ARGB, ABGR, sRGB(A/x); types UNORM_INT8 and UNSIGNED_INT8 (8 bits),\n"
    "UNORM_INT16 and UNSIGNED_INT16 (16 bits), HALF_FLOAT and FLOAT (clamped to\n"
    "[0,1], 16 bits). Other formats are refused.\n"
    "\n"
    "Exit status: 0 shown; 2 usage error (an unknown option, object or kernel, --at\n"
    "outside the object's life or past the trace, a TYPE or form that does not\n"
    "apply); 3 the trace cannot be read, or the replay failed.\n";

/* ------------------------------------------------------------ names */

static void cli_show_flags_human(FILE *f, uint64_t fl, int svm)
{
    static const struct { uint64_t bit; const char *name; } t[] = {
        {1, "READ_WRITE"}, {2, "WRITE_ONLY"}, {4, "READ_ONLY"}, {8, "USE_HOST_PTR"}, {16, "ALLOC_HOST_PTR"},
        {32, "COPY_HOST_PTR"}, {128, "HOST_WRITE_ONLY"}, {256, "HOST_READ_ONLY"}, {512, "HOST_NO_ACCESS"},
        {1024, "SVM_FINE_GRAIN_BUFFER"}, {2048, "SVM_ATOMICS"}, {4096, "KERNEL_READ_AND_WRITE"},
    };
    int first = 1;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (fl & t[i].bit) {
            fprintf(f, "%sCL_MEM_%s", first ? "" : "|", t[i].name);
            fl &= ~t[i].bit;
            first = 0;
        }
    if (fl)
        fprintf(f, "%s0x%" PRIx64, first ? "" : "|", fl);
    else if (first)
        fputs(svm ? "0" : "CL_MEM_READ_WRITE", f);
}

static const char *cli_show_img_type_name(uint32_t t)
{
    switch (t) {
    case 0x10F1: return "2D";
    case 0x10F2: return "3D";
    case 0x10F3: return "2D array";
    case 0x10F4: return "1D";
    case 0x10F5: return "1D array";
    case 0x10F6: return "1D buffer";
    default: return "?";
    }
}

static void cli_show_seqs_human(FILE *f, const cli_show_obj *o)
{
    fprintf(f, "created at call #%" PRIu64 " (%s)", o->create_seq, o->fn);
    if (o->release_seq)
        fprintf(f, ", released at call #%" PRIu64, o->release_seq);
}

static void cli_show_mem_line(FILE *f, const cli_show_obj *o)
{
    char sz[CLI_FMT_CAP];
    fprintf(f, "%-10s #%-6" PRIu64 " %10s  ", cli_show_kind_name(o->kind), o->id, cli_fmt_size(o->size, sz));
    cli_show_flags_human(f, o->flags, o->kind == CLI_SHOW_SVM);
    if (o->kind == CLI_SHOW_SUBBUFFER)
        fprintf(f, "  of #%" PRIu64 " at %" PRIu64, o->parent, o->origin);
    if (o->kind == CLI_SHOW_IMAGE) {
        const char *on = cli_show_order_name(o->order), *tn = cli_show_ctype_name(o->ctype);
        fprintf(f, "  %s %" PRIu64 "x%" PRIu64, cli_show_img_type_name(o->img_type), o->w, o->h ? o->h : 1);
        if (o->d)
            fprintf(f, "x%" PRIu64, o->d);
        fprintf(f, " %s %s", on ? on : "?", tn ? tn : "?");
        if (o->parent)
            fprintf(f, " of #%" PRIu64, o->parent);
    }
    fputs("  ", f);
    cli_show_seqs_human(f, o);
    putc('\n', f);
}

static json_t *cli_show_mem_json(const cli_show_obj *o)
{
    json_t *j = cli_show_obj_json_head(o);
    CLI_JSET(j, "size", cli_json_u64(o->size));
    CLI_JSET(j, "flags", cli_json_u64(o->flags));
    CLI_JSET(j, "context", cli_json_u64(o->context));
    if (o->kind == CLI_SHOW_SUBBUFFER) {
        CLI_JSET(j, "parent", cli_json_u64(o->parent));
        CLI_JSET(j, "origin", cli_json_u64(o->origin));
    }
    if (o->kind == CLI_SHOW_IMAGE) {
        json_t *im = json_object();
        CLI_JSET(im, "type", json_string(cli_show_img_type_name(o->img_type)));
        CLI_JSET(im, "width", cli_json_u64(o->w));
        CLI_JSET(im, "height", cli_json_u64(o->h ? o->h : 1));
        CLI_JSET(im, "depth", cli_json_u64(o->d ? o->d : 1));
        CLI_JSET(im, "channel_order", cli_json_ctext(cli_show_order_name(o->order)));
        CLI_JSET(im, "channel_type", cli_json_ctext(cli_show_ctype_name(o->ctype)));
        CLI_JSET(im, "pixel_bytes", cli_json_u64(o->elem));
        CLI_JSET(im, "buffer", cli_json_u64(o->parent));
        CLI_JSET(j, "image", im);
    }
    return j;
}

/* ------------------------------------------------------------ listing */

static void cli_show_list(const cli_show_scan *sc, const char *path, int json)
{
    static const int order[3][2] = {
        {CLI_SHOW_PROGRAM, CLI_SHOW_PROGRAM}, {CLI_SHOW_KERNEL, CLI_SHOW_KERNEL}, {CLI_SHOW_BUFFER, CLI_SHOW_SVM}};
    static const char *const title[3] = {"programs", "kernels", "memory"};
    FILE *f = stdout;
    json_t *j = NULL;
    if (json) {
        j = json_object();
        CLI_JSET(j, "file", cli_json_ctext(path));
        CLI_JSET(j, "calls", cli_json_u64(sc->calls));
        CLI_JSET(j, "failed_calls", cli_json_u64(sc->nfails));
    } else {
        fprintf(f, "trace      %s: %" PRIu64 " calls, %zu of them failed%s\n", path, sc->calls, sc->nfails,
                sc->nfails ? " ('errors' lists them)" : "");
    }
    for (int g = 0; g < 3; g++) {
        size_t n = 0;
        for (size_t i = 0; i < sc->n; i++)
            n += sc->objs[i].kind >= order[g][0] && sc->objs[i].kind <= order[g][1];
        json_t *a = json ? json_array() : NULL;
        if (!json)
            fprintf(f, "\n%s (%zu)\n", title[g], n);
        for (size_t i = 0; i < sc->n; i++) {
            const cli_show_obj *o = &sc->objs[i];
            if (o->kind < order[g][0] || o->kind > order[g][1])
                continue;
            if (json) {
                json_array_append_new(a, g == 0   ? cli_show_prog_brief_json(sc, o)
                                         : g == 1 ? cli_show_kernel_brief_json(o)
                                                  : cli_show_mem_json(o));
                continue;
            }
            fputs("  ", f);
            if (g == 0)
                cli_show_prog_brief(f, sc, o);
            else if (g == 1)
                cli_show_kernel_brief(f, o);
            else
                cli_show_mem_line(f, o);
        }
        if (json)
            CLI_JSET(j, title[g], a);
    }
    if (json)
        cli_show_json_put(j);
}

static void cli_show_errors(const cli_show_scan *sc, int json)
{
    FILE *f = stdout;
    json_t *j = NULL, *a = NULL;
    if (json) {
        j = json_object();
        a = json_array();
        CLI_JSET(j, "calls", cli_json_u64(sc->calls));
        CLI_JSET(j, "failed_calls", cli_json_u64(sc->nfails));
    } else {
        fprintf(f, "%zu of %" PRIu64 " calls failed\n", sc->nfails, sc->calls);
    }
    for (size_t i = 0; i < sc->nfails; i++) {
        const cli_show_fail *e = &sc->fails[i];
        const char *name = e->code != CLI_SHOW_NO_CODE ? cli_error_name(e->code) : NULL;
        if (json) {
            json_t *x = json_object();
            CLI_JSET(x, "seq", cli_json_u64(e->seq));
            CLI_JSET(x, "fn", cli_json_ctext(e->fn));
            CLI_JSET(x, "code", json_integer(e->code));
            CLI_JSET(x, "error", cli_json_ctext(name ? name : e->code == CLI_SHOW_NO_CODE ? "NULL" : NULL));
            json_array_append_new(a, x);
        } else if (name) {
            fprintf(f, "#%-8" PRIu64 " %-36s %s\n", e->seq, e->fn, name);
        } else {
            fprintf(f, "#%-8" PRIu64 " %-36s %s\n", e->seq, e->fn,
                    e->code == CLI_SHOW_NO_CODE ? "NULL (no error code recorded)" : "?");
        }
    }
    if (json) {
        CLI_JSET(j, "errors", a);
        cli_show_json_put(j);
    }
}

/* ------------------------------------------------------------ memory */

/* Where the contents go: -o's form. */
enum { CLI_SHOW_FORM_TEXT = 0, CLI_SHOW_FORM_RAW, CLI_SHOW_FORM_NPY, CLI_SHOW_FORM_PNG, CLI_SHOW_FORM_PNGDIR };

static int cli_show_ends(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcasecmp(s + n - m, suf);
}

static int cli_show_form(const cli_show_opts *o, int *form)
{
    *form = CLI_SHOW_FORM_TEXT;
    if (!o->out)
        return o->format ? cli_usage_err("--format needs -o OUT") : CLI_EXIT_OK;
    struct stat st;
    int dir = cli_show_ends(o->out, "/") || (stat(o->out, &st) == 0 && S_ISDIR(st.st_mode));
    const char *fm = o->format;
    if (fm && strcmp(fm, "raw") && strcmp(fm, "npy") && strcmp(fm, "png"))
        return cli_usage_err("--format %s: expected raw, npy or png", fm);
    if (dir) {
        if (fm && strcmp(fm, "png"))
            return cli_usage_err("%s is a directory: only PNG slices are written into one", o->out);
        *form = CLI_SHOW_FORM_PNGDIR;
    } else if (fm) {
        *form = !strcmp(fm, "raw") ? CLI_SHOW_FORM_RAW : !strcmp(fm, "npy") ? CLI_SHOW_FORM_NPY : CLI_SHOW_FORM_PNG;
    } else {
        *form = cli_show_ends(o->out, ".npy")   ? CLI_SHOW_FORM_NPY
                : cli_show_ends(o->out, ".png") ? CLI_SHOW_FORM_PNG
                                                : CLI_SHOW_FORM_RAW;
    }
    return CLI_EXIT_OK;
}

/* the image geometry of the bytes: rows, slices (1 for unused dimensions) */
static void cli_show_geom(const cli_show_obj *m, uint64_t *w, uint64_t *h, uint64_t *d)
{
    *w = m->w;
    *h = m->h ? m->h : 1;
    *d = m->d ? m->d : 1;
}

static int cli_show_write_out(const cli_show_opts *o, const char *path, int form, const cli_show_obj *m,
                              const void *data,
                          size_t len, uint64_t z)
{
    const char *inputs[] = {o->trace, NULL};
    cli_out out;
    int rc = cli_out_open(&out, path, CLI_OUT_BINARY, inputs);
    if (rc != CLI_EXIT_OK)
        return rc;
    char err[256] = "";
    int bad = 0;
    if (form == CLI_SHOW_FORM_RAW) {
        bad = len && fwrite(data, 1, len, out.f) != len;
    } else if (form == CLI_SHOW_FORM_NPY) {
        cli_show_type t;
        uint64_t dims[3];
        unsigned nd = 0;
        if (o->have_as || m->kind != CLI_SHOW_IMAGE || cli_show_type_of_image(m->order, m->ctype, &t)) {
            if (o->have_as)
                t = o->as;
            else
                cli_show_type_parse("uint8", &t);
        } else {
            uint64_t w, h, d;
            cli_show_geom(m, &w, &h, &d);
            if (m->d)
                dims[nd++] = d;
            if (m->h)
                dims[nd++] = h;
            dims[nd++] = w;
        }
        bad = cli_show_write_npy(out.f, data, len, &t, dims, nd);
    } else {
        uint64_t w, h, d;
        cli_show_geom(m, &w, &h, &d);
        size_t slice = (size_t)(w * h * m->elem);
        if (!slice || z >= len / slice) {
            cli_out_abort(&out);
            cli_err("image #%" PRIu64 ": %zu bytes hold no slice %" PRIu64 " of %" PRIu64 "x%" PRIu64, m->id, len, z,
                    w, h);
            return CLI_EXIT_ERROR;
        }
        bad = cli_show_write_png(out.f, (const uint8_t *)data + z * slice, w, h, m->order, m->ctype, m->elem, err,
                             sizeof err);
        if (bad && err[0]) {
            cli_out_abort(&out);
            cli_err("%s: %s", path, err);
            return CLI_EXIT_ERROR;
        }
    }
    if (bad) {
        cli_out_abort(&out);
        cli_err("%s: writing failed", path);
        return CLI_EXIT_ERROR;
    }
    return cli_out_commit(&out);
}

static int cli_show_mem_view(tf_reader *r, const cli_show_scan *sc, const cli_show_obj *m, const cli_show_opts *o)
{
    int form;
    int rc = cli_show_form(o, &form);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (o->json)
        return cli_usage_err("--json shows the listing, programs, kernels and errors, not contents");
    if (o->source || o->log || o->have_bin)
        return cli_usage_err("--source, --log and --binary are for programs; #%" PRIu64 " is a %s", m->id,
                             cli_show_kind_name(m->kind));
    if (m->kind == CLI_SHOW_PIPE)
        return cli_usage_err("#%" PRIu64 " is a pipe: its contents cannot be read", m->id);
    if (form == CLI_SHOW_FORM_PNG || form == CLI_SHOW_FORM_PNGDIR) {
        if (m->kind != CLI_SHOW_IMAGE)
            return cli_usage_err("#%" PRIu64 " is a %s: only images have a PNG form", m->id,
                                 cli_show_kind_name(m->kind));
        const char *why = cli_show_png_check(m->order, m->ctype);
        if (why) {
            const char *on = cli_show_order_name(m->order), *tn = cli_show_ctype_name(m->ctype);
            return cli_usage_err("image #%" PRIu64 " (%s, %s): %s", m->id, on ? on : "?", tn ? tn : "?", why);
        }
        if (form == CLI_SHOW_FORM_PNG && m->d > 1)
            return cli_usage_err("image #%" PRIu64 " has %" PRIu64 " slices: -o DIR/ writes one PNG each", m->id, m->d);
    }
    uint64_t at = o->have_at ? o->at : m->release_seq ? m->release_seq - 1 : sc->last_seq;
    if (o->have_at && at > sc->last_seq)
        return cli_usage_err("--at %" PRIu64 ": the trace ends at call #%" PRIu64, at, sc->last_seq);
    if (at < m->create_seq)
        return cli_usage_err("--at %" PRIu64 ": #%" PRIu64 " is created at call #%" PRIu64, at, m->id, m->create_seq);
    if (m->release_seq && at >= m->release_seq)
        return cli_usage_err("--at %" PRIu64 ": #%" PRIu64 " was released at call #%" PRIu64, at, m->id,
                             m->release_seq);
    void *data = NULL;
    size_t len = (size_t)m->size;
    uint64_t from = 0;
    char err[512] = "", how[512];
    int got = 0;
    if (!o->replay) {
        got = cli_show_mem_from_trace(r, sc, m, at, &data, &from, err, sizeof err);
        if (got < 0) {
            cli_err("%s: %s", o->trace, err);
            return CLI_EXIT_ERROR;
        }
    }
    if (got) {
        snprintf(how, sizeof how, "from the trace (call #%" PRIu64 ")", from);
    } else {
        rpl_opts ro;
        rpl_opts_init(&ro);
        ro.device = o->device;
        ro.max_memory = cli_max_memory();
        rpl_peek_result pr;
        rpl_status st = rpl_peek(o->trace, &ro, at, m->id, m->kind == CLI_SHOW_SVM ? m->size : 0, &pr, err, sizeof err);
        if (st != RPL_OK) {
            cli_err("%s: replay up to call #%" PRIu64 ": %s", o->trace, at, err);
            return CLI_EXIT_ERROR;
        }
        data = pr.data;
        len = pr.size;
        snprintf(how, sizeof how, "computed by replay up to call #%" PRIu64 " on %s", at, pr.device);
    }
    if (m->kind == CLI_SHOW_IMAGE && len != m->size) {
        free(data);
        cli_err("image #%" PRIu64 ": the replay read %zu bytes, its format says %" PRIu64, m->id, len, m->size);
        return CLI_EXIT_ERROR;
    }
    char sz[CLI_FMT_CAP];
    FILE *f = stdout;
    rc = CLI_EXIT_OK;
    if (form == CLI_SHOW_FORM_PNGDIR) {
        uint64_t w, h, d;
        cli_show_geom(m, &w, &h, &d);
        const char *sep = cli_show_ends(o->out, "/") ? "" : "/";
        if (mkdir(o->out, 0777) && errno != EEXIST) {
            cli_err("%s: %s", o->out, strerror(errno));
            free(data);
            return CLI_EXIT_ERROR;
        }
        for (uint64_t z = 0; z < d && rc == CLI_EXIT_OK; z++) {
            char path[4096];
            snprintf(path, sizeof path, "%s%sslice-%03" PRIu64 ".png", o->out, sep, z);
            rc = cli_show_write_out(o, path, CLI_SHOW_FORM_PNG, m, data, len, z);
        }
        if (rc == CLI_EXIT_OK)
            fprintf(f, "%s #%" PRIu64 " after call #%" PRIu64 ": %" PRIu64 " PNG slices in %s, %s\n",
                    cli_show_kind_name(m->kind), m->id, at, d, o->out, how);
    } else if (form != CLI_SHOW_FORM_TEXT) {
        rc = cli_show_write_out(o, o->out, form, m, data, len, 0);
        if (rc == CLI_EXIT_OK)
            fprintf(f, "%s #%" PRIu64 " after call #%" PRIu64 ": %s written to %s, %s\n", cli_show_kind_name(m->kind),
                    m->id, at, cli_fmt_size(len, sz), !strcmp(o->out, "-") ? "stdout" : o->out, how);
    } else {
        fprintf(f, "%s #%" PRIu64 " after call #%" PRIu64 ": %s, %s\n", cli_show_kind_name(m->kind), m->id, at,
                cli_fmt_size(len, sz), how);
        uint64_t first = o->have_range ? o->lo : 0;
        uint64_t count = o->have_count ? o->count : o->have_range ? UINT64_MAX : 4096;
        if (o->have_range && o->hi != UINT64_MAX && o->hi - first + 1 < count)
            count = o->hi - first + 1;
        if (o->have_as) {
            cli_show_print_typed(f, data, len, &o->as, first, count);
            uint64_t n = len / ((size_t)o->as.size * o->as.stride);
            if (!o->have_count && !o->have_range && n > count)
                fprintf(f, "... %" PRIu64 " more elements (--count, --range, or -o FILE)\n", n - count);
        } else {
            cli_show_print_hex(f, data, len, first, count);
            if (!o->have_count && !o->have_range && len > 4096)
                fprintf(f, "... %zu more bytes (--count, --range, or -o FILE)\n", len - 4096);
        }
    }
    free(data);
    return rc;
}

/* ------------------------------------------------------------ the command */

static int cli_show_parse_range(const char *s, uint64_t *lo, uint64_t *hi)
{
    const char *colon = strchr(s, ':');
    char *end;
    *lo = 0;
    *hi = UINT64_MAX;
    if (!colon)
        return -1;
    if (colon != s) {
        errno = 0;
        *lo = strtoull(s, &end, 10);
        if (errno || end != colon || *s == '-')
            return -1;
    }
    if (colon[1]) {
        errno = 0;
        *hi = strtoull(colon + 1, &end, 10);
        if (errno || *end || colon[1] == '-')
            return -1;
    }
    return *lo <= *hi ? 0 : -1;
}

static int cli_show_id(const char *s, uint64_t *id)
{
    if (!strncmp(s, "ptr#", 4))   /* an SVM allocation as dump shows it */
        s += 3;
    if (*s == '#')
        s++;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2]) {   /* an SVM address */
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s + 2, &end, 16);
        if (errno || *end)
            return 0;
        *id = v;
        return 1;
    }
    if (!*s)
        return 0;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    uint64_t v = 0;
    return cli_parse_u64(s, &v, 0) == 0 && (*id = v, 1);
}

static int cli_show_run(int argc, char **argv)
{
    enum { O_JSON = 256, O_SOURCE, O_LOG, O_BINARY, O_AT, O_REPLAY, O_DEVICE, O_AS, O_RANGE, O_COUNT, O_FORMAT };
    static const struct option opts[] = {
        {"json", no_argument, NULL, O_JSON},        {"source", no_argument, NULL, O_SOURCE},
        {"log", no_argument, NULL, O_LOG},          {"binary", required_argument, NULL, O_BINARY},
        {"at", required_argument, NULL, O_AT},      {"replay", no_argument, NULL, O_REPLAY},
        {"device", required_argument, NULL, O_DEVICE}, {"as", required_argument, NULL, O_AS},
        {"range", required_argument, NULL, O_RANGE}, {"count", required_argument, NULL, O_COUNT},
        {"format", required_argument, NULL, O_FORMAT}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cli_show_opts o;
    memset(&o, 0, sizeof o);
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        switch (c) {
        case O_JSON: o.json = 1; break;
        case O_SOURCE: o.source = 1; break;
        case O_LOG: o.log = 1; break;
        case O_BINARY:
            if (cli_parse_u64(optarg, &o.bin, 0))
                return cli_usage_err("--binary %s: expected a binary's index (0, 1, ...)", optarg);
            o.have_bin = 1;
            break;
        case O_AT:
            if (*optarg == '#')
                optarg++;
            if (cli_parse_u64(optarg, &o.at, 0) || !o.at)
                return cli_usage_err("--at %s: expected a call number (1, 2, ...)", optarg);
            o.have_at = 1;
            break;
        case O_REPLAY: o.replay = 1; break;
        case O_DEVICE: o.device = optarg; break;
        case O_AS:
            if (cli_show_type_parse(optarg, &o.as))
                return cli_usage_err("--as %s: not a type (float, float4, int, uint8, half, double2, ...)", optarg);
            o.have_as = 1;
            break;
        case O_RANGE:
            if (cli_show_parse_range(optarg, &o.lo, &o.hi))
                return cli_usage_err("invalid range '%s' (expected A:B, A: or :B)", optarg);
            o.have_range = 1;
            break;
        case O_COUNT:
            if (cli_parse_u64(optarg, &o.count, 0))
                return cli_usage_err("--count %s: expected a count", optarg);
            o.have_count = 1;
            break;
        case O_FORMAT: o.format = optarg; break;
        case 'o': o.out = optarg; break;
        case 'h': fputs(cli_show_usage, stdout); return CLI_EXIT_OK;
        default: return cli_opt_err(argv, c);
        }
    }
    if (optind >= argc)
        return cli_usage_err("a trace is required");
    o.trace = argv[optind++];
    if (optind < argc)
        o.what = argv[optind++];
    if (optind < argc)
        return cli_usage_err("unexpected argument '%s'", argv[optind]);
    int objwhat = o.what && strcmp(o.what, "errors");
    if (!objwhat && (o.out || o.format || o.source || o.log || o.have_bin || o.have_at || o.replay || o.device ||
                     o.have_as || o.have_range || o.have_count))
        return cli_usage_err("%s takes only --json", o.what ? "'errors'" : "the listing");
    tf_reader *r = cli_open_trace(o.trace);
    if (!r)
        return CLI_EXIT_ERROR;
    cli_show_scan sc;
    memset(&sc, 0, sizeof sc);
    int rc = CLI_EXIT_OK;
    if (cli_show_scan_run(r, &sc) != TF_OK) {
        cli_err("%s: %s", o.trace, sc.err);
        rc = CLI_EXIT_ERROR;
    } else if (!o.what) {
        cli_show_list(&sc, o.trace, o.json);
    } else if (!strcmp(o.what, "errors")) {
        cli_show_errors(&sc, o.json);
    } else {
        uint64_t id = 0;
        const cli_show_obj *ob = NULL;
        if (cli_show_id(o.what, &id)) {
            ob = cli_show_scan_find(&sc, id);
            if (!ob)
                rc = cli_usage_err("the trace has no program, kernel or memory object #%" PRIu64
                                   " ('clrr show %s' lists them)", id, o.trace);
        } else {
            for (size_t i = 0; i < sc.n && !ob; i++)
                if (sc.objs[i].kind == CLI_SHOW_KERNEL && !strcmp(sc.objs[i].name, o.what))
                    ob = &sc.objs[i];
            if (!ob)
                rc = cli_usage_err("the trace has no kernel named '%s' ('clrr show %s' lists them)", o.what, o.trace);
        }
        if (ob && ob->kind == CLI_SHOW_PROGRAM)
            rc = cli_show_prog_view(r, &sc, ob, &o);
        else if (ob && ob->kind == CLI_SHOW_KERNEL)
            rc = cli_show_kernel_view(r, &sc, ob, &o);
        else if (ob)
            rc = cli_show_mem_view(r, &sc, ob, &o);
    }
    cli_show_scan_free(&sc);
    tf_reader_close(r);
    return rc;
}

const cli_command cli_cmd_show = {
    "show", "look inside a trace: programs, kernels, memory contents at any call, failed calls",
    cli_show_usage, cli_show_run, NULL,
};
