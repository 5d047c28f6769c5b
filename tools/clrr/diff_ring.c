/* diff_ring.c — what `clrr diff` remembers: the ring of recent calls (the
 * context of a difference, and the call a late DATA item belongs to), the
 * differences found with their context, and the human form of a call. */
#include "tools/clrr/diff_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ text */

/* Copies @p n bytes of @p s into dst (cap), cut with "..." when longer. */
void cli_diff_copy_cut(char *dst, size_t cap, const char *s, size_t n)
{
    if (!s)
        s = "";
    if (n < cap) {
        memcpy(dst, s, n);
        dst[n] = 0;
        return;
    }
    size_t k = cap - 4;
    while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
        k--;   /* not inside a UTF-8 sequence */
    memcpy(dst, s, k);
    memcpy(dst + k, "...", 4);
}

void cli_diff_format_call(const tf_call *c, char *dst, size_t cap)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        snprintf(dst, cap, "#%" PRIu64 " ?", c->seq);
        return;
    }
    const tf_sig *sig = c->sig;
    fprintf(f, "#%" PRIu64 " %s(", c->seq, sig && sig->name ? sig->name : "?");
    for (uint32_t i = 0; sig && c->args && i < sig->nparams && ftell(f) < (long)cap; i++) {
        fprintf(f, "%s%s=", i ? ", " : "", sig->params[i].name ? sig->params[i].name : "?");
        cli_print_param(f, sig, i, &c->args[i]);
    }
    putc(')', f);
    if (!c->complete) {
        fputs(" = <never returned>", f);
    } else if (sig && !(c->ret.type == TF_NIL && sig->ret_type && !strcmp(sig->ret_type, "void"))) {
        fputs(" = ", f);
        cli_print_ret(f, sig, &c->ret);
    }
    if (fclose(f) || !buf) {
        free(buf);
        snprintf(dst, cap, "#%" PRIu64 " ?", c->seq);
        return;
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] < 0x20)
            buf[i] = ' ';
    cli_diff_copy_cut(dst, cap, buf, len);
    free(buf);
}

/* ------------------------------------------------------------ ring */

cli_diff_slot *cli_diff_slot_find(cli_diff_ctx *d, int side, uint64_t seq)
{
    if (!d->ring || !seq)
        return NULL;
    cli_diff_slot *s = &d->ring[seq % CLI_DIFF_RING];
    if (s->pos && s->seq[side] == seq)
        return s;
    for (size_t i = 0; i < CLI_DIFF_RING; i++)
        if (d->ring[i].pos && d->ring[i].seq[side] == seq)
            return &d->ring[i];
    return NULL;
}

static cli_diff_slot *cli_diff_slot_at(cli_diff_ctx *d, uint64_t pos)
{
    cli_diff_slot *s = pos ? &d->ring[pos % CLI_DIFF_RING] : NULL;
    return s && s->pos == pos ? s : NULL;
}

int cli_diff_expecting(const cli_diff_ctx *d, uint64_t pos)
{
    for (size_t i = 0; i < d->npend; i++)
        if (d->pend[i].pos && d->pend[i].pos < pos)
            return 1;
    for (size_t i = 0; i < CLI_DIFF_RING; i++)
        if (d->ring[i].pos && d->ring[i].pos < pos && d->ring[i].expect)
            return 1;
    return 0;
}

void cli_diff_found_free(cli_diff_found *f)
{
    free(f->a_json);
    free(f->b_json);
    for (int i = 0; i < f->nctx; i++)
        free(f->ctx[i]);
    free(f->line_a);
    free(f->line_b);
    memset(f, 0, sizeof *f);
}

int cli_diff_add(cli_diff_ctx *d, cli_diff_found *f)
{
    int note = f->kind == CLI_DIFF_CODE;
    cli_diff_found **list = note ? &d->notes : &d->found;
    size_t *n = note ? &d->nnotes : &d->nfound, *cap = note ? &d->capnotes : &d->capfound;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        cli_diff_found *l = realloc(*list, nc * sizeof *l);
        if (!l) {
            cli_diff_found_free(f);
            d->err = TF_ERR_NOMEM;
            d->err_side = 0;
            return -1;
        }
        *list = l;
        *cap = nc;
    }
    cli_diff_slot *s = cli_diff_slot_at(d, f->pos);
    if (!note && s)
        s->differs = 1;
    if (!note && f->kind != CLI_DIFF_END) {
        for (uint64_t k = CLI_DIFF_CONTEXT; k >= 1; k--) {
            const cli_diff_slot *c = f->pos > k ? cli_diff_slot_at(d, f->pos - k) : NULL;
            if (!c)
                continue;
            f->ctx_pos[f->nctx] = c->pos;
            f->ctx_differs[f->nctx] = c->differs;
            f->ctx[f->nctx] = strdup(c->line);
            if (f->ctx[f->nctx])
                f->nctx++;
        }
        if (!f->line_a && s)
            f->line_a = strdup(s->line);
    }
    (*list)[(*n)++] = *f;
    memset(f, 0, sizeof *f);
    return 0;
}
