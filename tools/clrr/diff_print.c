/* diff_print.c — the result of `clrr diff`: one line when the traces are the
 * same; otherwise a header naming both traces and devices, program-code
 * notes, the first difference with its context and the kernels that last
 * wrote what was read back, then one line per further difference. The JSON
 * form holds the same facts in one object. */
#include "tools/clrr/diff_int.h"

#include <jansson.h>
#include <math.h>

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

/* docs/schemas/diff.json, built with jansson. */

static json_t *cli_diff_json_side(const cli_diff_side *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", cli_json_ctext(s->path));
    json_object_set_new(o, "device", cli_json_ctext(s->device[0] ? s->device : NULL));
    json_object_set_new(o, "calls", cli_json_u64(s->calls));
    return o;
}

/* A value rendered as JSON text by cli_diff_value_text(); null if it is not. */
static json_t *cli_diff_json_parsed(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    return v ? v : json_null();
}

static json_t *cli_diff_json_found(const cli_diff_found *x)
{
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(cli_diff_kind_name(x->kind)));
    json_object_set_new(o, "call", cli_json_u64(x->pos));
    json_object_set_new(o, "seq_a", cli_json_u64(x->seq_a));
    json_object_set_new(o, "seq_b", cli_json_u64(x->seq_b));
    json_object_set_new(o, "fn_a", cli_json_ctext(x->fn_a));
    json_object_set_new(o, "fn_b", cli_json_ctext(x->fn_b));
    json_object_set_new(o, "what", cli_json_ctext(x->what));
    json_object_set_new(o, "output", json_boolean(x->output));
    json_object_set_new(o, "text", cli_json_ctext(x->text));
    if (x->a_json && x->b_json) {
        json_object_set_new(o, "a", cli_diff_json_parsed(x->a_json));
        json_object_set_new(o, "b", cli_diff_json_parsed(x->b_json));
    }
    if (x->kind == CLI_DIFF_DATA || (x->kind == CLI_DIFF_CODE && (x->size_a || x->size_b))) {
        json_object_set_new(o, "size_a", cli_json_u64(x->size_a));
        json_object_set_new(o, "size_b", cli_json_u64(x->size_b));
        json_object_set_new(o, "elem_size", cli_json_u64(x->cmp.elem_size));
        json_object_set_new(o, "elements", cli_json_u64(x->cmp.elems));
        json_object_set_new(o, "differ", cli_json_u64(x->cmp.differ));
        json_object_set_new(o, "first", cli_json_u64(x->cmp.first));
        json_object_set_new(o, "max_abs", cli_json_f64(x->cmp.max_abs));
        if (x->words)
            json_object_set_new(o, "words_differ", cli_json_u64(x->words));
        if (x->have_vals) {
            json_object_set_new(o, "a_value", cli_json_f64(x->va));
            json_object_set_new(o, "b_value", cli_json_f64(x->vb));
        }
    }
    if (x->object) {
        json_object_set_new(o, "object", cli_json_u64(x->object));
        json_object_set_new(o, "object_kind", cli_json_ctext(x->objkind));
        json_object_set_new(o, "writers", cli_json_ctext(x->writers[0] ? x->writers : NULL));
    }
    if (x->kind == CLI_DIFF_END) {
        json_object_set_new(o, "ends", json_string(x->ended ? "B" : "A"));
        json_object_set_new(o, "after", cli_json_u64(x->pos ? x->pos - 1 : 0));
        json_object_set_new(o, "more", cli_json_u64(x->more));
    }
    json_t *ctx = json_array();
    for (int i = 0; i < x->nctx; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "call", cli_json_u64(x->ctx_pos[i]));
        json_object_set_new(c, "line", cli_json_ctext(x->ctx[i]));
        json_object_set_new(c, "differs", json_boolean(x->ctx_differs[i]));
        json_array_append_new(ctx, c);
    }
    json_object_set_new(o, "context", ctx);
    json_object_set_new(o, "line_a", cli_json_ctext(x->line_a));
    json_object_set_new(o, "line_b", cli_json_ctext(x->line_b));
    return o;
}

void cli_diff_print_json(FILE *f, const cli_diff_ctx *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string("clrr-diff/1"));
    json_object_set_new(o, "same", json_boolean(!d->nfound));
    json_object_set_new(o, "a", cli_diff_json_side(&d->side[0]));
    json_object_set_new(o, "b", cli_diff_json_side(&d->side[1]));
    json_object_set_new(o, "tolerance", cli_json_ctext(d->tol_spec));
    json_object_set_new(o, "queries", json_boolean(d->queries));
    json_object_set_new(o, "calls_compared", cli_json_u64(d->pos));
    json_object_set_new(o, "readbacks_compared", cli_json_u64(d->readbacks));
    json_object_set_new(o, "captured_one_side", cli_json_u64(d->uncompared));
    json_t *notes = json_array(), *found = json_array();
    for (size_t i = 0; i < d->nnotes; i++)
        json_array_append_new(notes, cli_diff_json_found(&d->notes[i]));
    for (size_t i = 0; i < d->nfound; i++)
        json_array_append_new(found, cli_diff_json_found(&d->found[i]));
    json_object_set_new(o, "notes", notes);
    json_object_set_new(o, "differences", found);
    cli_json_put(f, o);
    putc('\n', f);
}
