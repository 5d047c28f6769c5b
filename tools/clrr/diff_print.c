/* diff_print.c — the result of `clrr diff`: one line when the traces are the
 * same; otherwise a header naming both traces and devices, program-code
 * notes, the first difference with its context and the kernels that last
 * wrote what was read back, then one line per further difference. The JSON
 * form holds the same facts in one object. */
#include "tools/clrr/diff_int.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static const char *cli_diff_fn(const cli_diff_found *x)
{
    return x->fn_a ? x->fn_a : x->fn_b ? x->fn_b : "?";
}

static const char *cli_diff_kind_name(cli_diff_kind k)
{
    switch (k) {
    case CLI_DIFF_SEQUENCE: return "sequence";
    case CLI_DIFF_END: return "end";
    case CLI_DIFF_VALUE: return "value";
    case CLI_DIFF_DATA: return "data";
    case CLI_DIFF_CODE: return "code";
    default: return "?";
    }
}

/* "at call #N ...: WHAT differs: TEXT" (no newline). */
static void cli_diff_head(FILE *f, const cli_diff_found *x)
{
    uint64_t pos = x->pos ? x->pos : x->seq_a;
    switch (x->kind) {
    case CLI_DIFF_SEQUENCE:
        fprintf(f, "at call #%" PRIu64 ": %s", pos, x->text);
        break;
    case CLI_DIFF_END:
        fprintf(f, "at call #%" PRIu64 ": %s ends after %" PRIu64 " calls; %s has %" PRIu64 " more",
                pos, x->ended ? "B" : "A", pos - 1, x->ended ? "A" : "B", x->more);
        break;
    default:
        fprintf(f, "at call #%" PRIu64 " %s (A #%" PRIu64 ", B #%" PRIu64 "): %s differs: %s", pos,
                cli_diff_fn(x), x->seq_a, x->seq_b, x->what, x->text);
        break;
    }
}

static void cli_diff_writers_line(FILE *f, const cli_diff_found *x, const char *indent)
{
    if (!x->object)
        return;
    if (x->writers[0])
        fprintf(f, "%sthe %s #%" PRIu64 " was last written by %s", indent, x->objkind, x->object,
                x->writers);
    else
        fprintf(f, "%sno call seen in A wrote the %s #%" PRIu64, indent, x->objkind, x->object);
}

static void cli_diff_print_first(FILE *f, const cli_diff_found *x)
{
    fputs("first difference ", f);
    cli_diff_head(f, x);
    putc('\n', f);
    if (x->nctx) {
        fputs("  context:\n", f);
        for (int i = 0; i < x->nctx; i++)
            fprintf(f, "  %s  (%s)\n", x->ctx[i], x->ctx_differs[i] ? "differs" : "both");
    }
    if (x->kind == CLI_DIFF_SEQUENCE || x->kind == CLI_DIFF_END) {
        if (x->line_a)
            fprintf(f, "> A: %s\n", x->line_a);
        if (x->line_b)
            fprintf(f, "> B: %s\n", x->line_b);
    } else if (x->line_a) {
        fprintf(f, "> %s\n", x->line_a);
    }
    if (x->object) {
        cli_diff_writers_line(f, x, "  ");
        putc('\n', f);
    }
}

void cli_diff_print_human(FILE *f, const cli_diff_ctx *d)
{
    if (!d->nfound) {
        fprintf(f, "same: %" PRIu64 " call%s, %" PRIu64 " read-back%s compared", d->pos,
                d->pos == 1 ? "" : "s", d->readbacks, d->readbacks == 1 ? "" : "s");
        if (d->uncompared)
            fprintf(f, ", %" PRIu64 " captured in one trace only", d->uncompared);
        if (d->nnotes)
            fprintf(f, "; program code differs at call #%" PRIu64 " %s%s", d->notes[0].pos,
                    cli_diff_fn(&d->notes[0]), d->nnotes > 1 ? " and later" : "");
        putc('\n', f);
        return;
    }
    fprintf(f, "comparing A %s (%s) with B %s (%s)\n", d->side[0].path,
            d->side[0].device[0] ? d->side[0].device : "no device recorded", d->side[1].path,
            d->side[1].device[0] ? d->side[1].device : "no device recorded");
    for (size_t i = 0; i < d->nnotes; i++) {
        fputs("note: program code differs ", f);
        cli_diff_head(f, &d->notes[i]);
        putc('\n', f);
    }
    for (size_t i = 0; i < d->nfound; i++) {
        const cli_diff_found *x = &d->found[i];
        if (i == 0) {
            cli_diff_print_first(f, x);
            continue;
        }
        fputs("difference ", f);
        cli_diff_head(f, x);
        if (x->object && x->writers[0]) {
            fputs(" (", f);
            cli_diff_writers_line(f, x, "");
            putc(')', f);
        }
        putc('\n', f);
    }
    fprintf(f, "compared: %" PRIu64 " calls, %" PRIu64 " read-backs\n", d->pos, d->readbacks);
}

/* ------------------------------------------------------------ JSON */

static void cli_diff_json_double(FILE *f, double v)
{
    tf_value x;
    memset(&x, 0, sizeof x);
    x.type = TF_F64;
    x.v.f = v;
    cli_json_value(f, &x);
}

static void cli_diff_json_side(FILE *f, const cli_diff_side *s)
{
    fputs("{\"path\":", f);
    cli_json_cstr(f, s->path);
    fputs(",\"device\":", f);
    cli_json_cstr(f, s->device[0] ? s->device : NULL);
    fprintf(f, ",\"calls\":%" PRIu64 "}", s->calls);
}

static void cli_diff_json_found(FILE *f, const cli_diff_found *x)
{
    fprintf(f, "{\"kind\":\"%s\",\"call\":%" PRIu64 ",\"seq_a\":%" PRIu64 ",\"seq_b\":%" PRIu64
            ",\"fn_a\":", cli_diff_kind_name(x->kind), x->pos, x->seq_a, x->seq_b);
    cli_json_cstr(f, x->fn_a);
    fputs(",\"fn_b\":", f);
    cli_json_cstr(f, x->fn_b);
    fputs(",\"what\":", f);
    cli_json_cstr(f, x->what);
    fprintf(f, ",\"output\":%s,\"text\":", x->output ? "true" : "false");
    cli_json_cstr(f, x->text);
    if (x->a_json && x->b_json)
        fprintf(f, ",\"a\":%s,\"b\":%s", x->a_json, x->b_json);
    if (x->kind == CLI_DIFF_DATA || (x->kind == CLI_DIFF_CODE && (x->size_a || x->size_b))) {
        fprintf(f, ",\"size_a\":%" PRIu64 ",\"size_b\":%" PRIu64 ",\"elem_size\":%" PRIu64
                ",\"elements\":%" PRIu64 ",\"differ\":%" PRIu64 ",\"first\":%" PRIu64 ",\"max_abs\":",
                x->size_a, x->size_b, x->cmp.elem_size, x->cmp.elems, x->cmp.differ, x->cmp.first);
        cli_diff_json_double(f, x->cmp.max_abs);
        if (x->words)
            fprintf(f, ",\"words_differ\":%" PRIu64, x->words);
        if (x->have_vals) {
            fputs(",\"a_value\":", f);
            cli_diff_json_double(f, x->va);
            fputs(",\"b_value\":", f);
            cli_diff_json_double(f, x->vb);
        }
    }
    if (x->object) {
        fprintf(f, ",\"object\":%" PRIu64 ",\"object_kind\":", x->object);
        cli_json_cstr(f, x->objkind);
        fputs(",\"writers\":", f);
        cli_json_cstr(f, x->writers[0] ? x->writers : NULL);
    }
    if (x->kind == CLI_DIFF_END)
        fprintf(f, ",\"ends\":\"%s\",\"after\":%" PRIu64 ",\"more\":%" PRIu64,
                x->ended ? "B" : "A", x->pos ? x->pos - 1 : 0, x->more);
    fputs(",\"context\":[", f);
    for (int i = 0; i < x->nctx; i++) {
        fprintf(f, "%s{\"call\":%" PRIu64 ",\"line\":", i ? "," : "", x->ctx_pos[i]);
        cli_json_cstr(f, x->ctx[i]);
        fprintf(f, ",\"differs\":%s}", x->ctx_differs[i] ? "true" : "false");
    }
    fputs("],\"line_a\":", f);
    cli_json_cstr(f, x->line_a);
    fputs(",\"line_b\":", f);
    cli_json_cstr(f, x->line_b);
    putc('}', f);
}

void cli_diff_print_json(FILE *f, const cli_diff_ctx *d)
{
    fprintf(f, "{\"schema\":\"clrr-diff/1\",\"same\":%s,\"a\":", d->nfound ? "false" : "true");
    cli_diff_json_side(f, &d->side[0]);
    fputs(",\"b\":", f);
    cli_diff_json_side(f, &d->side[1]);
    fputs(",\"tolerance\":", f);
    cli_json_cstr(f, d->tol_spec);
    fprintf(f, ",\"queries\":%s,\"calls_compared\":%" PRIu64 ",\"readbacks_compared\":%" PRIu64
            ",\"captured_one_side\":%" PRIu64 ",\"notes\":[",
            d->queries ? "true" : "false", d->pos, d->readbacks, d->uncompared);
    for (size_t i = 0; i < d->nnotes; i++) {
        if (i)
            putc(',', f);
        cli_diff_json_found(f, &d->notes[i]);
    }
    fputs("],\"differences\":[", f);
    for (size_t i = 0; i < d->nfound; i++) {
        if (i)
            putc(',', f);
        cli_diff_json_found(f, &d->found[i]);
    }
    fputs("]}\n", f);
}
