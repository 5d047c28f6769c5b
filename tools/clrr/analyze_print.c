/* analyze_print.c — `clrr analyze` output: one program's kernels, human
 * or JSON. Strings from the analysis come from an untrusted trace's
 * source (names): they are printed escaped. */
#include "tools/clrr/analyze_int.h"

#include <inttypes.h>
#include <string.h>

static const char *cli_an_kind(unsigned k)
{
    static const char *const n[] = { "global", "constant", "local", "scalar", "image", "sampler",
                                     "pipe", "other" };
    return k < sizeof n / sizeof n[0] ? n[k] : "other";
}

static const char *cli_an_access(unsigned a)
{
    static const char *const n[] = { "none", "read", "write", "read-write" };
    return a < 4 ? n[a] : "?";
}

static const char *cli_an_cmp(unsigned c)
{
    static const char *const n[] = { "<", "<=", ">", ">=", "==", "!=" };
    return c < 6 ? n[c] : "?";
}

static const char *cli_an_expr(const ana_kernel *k, const ana_expr *e, char *buf, size_t cap)
{
    if (ana_expr_format(k, e, buf, cap) < 0)
        snprintf(buf, cap, "?");
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    return buf;
}

static const char *cli_an_argname(const ana_kernel *k, unsigned i)
{
    return i < k->nargs && k->args[i].name && k->args[i].name[0] ? k->args[i].name : "?";
}

static int cli_an_is_ptr(const ana_arg *a)
{
    return a->kind == ANA_ARG_GLOBAL || a->kind == ANA_ARG_CONSTANT;
}

/* ------------------------------------------------------------ human */

static void cli_an_put(FILE *f, const char *s)
{
    for (; s && *s; s++)
        putc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static void cli_an_region_human(FILE *f, const char *what, const ana_region *r, uint64_t size)
{
    char a[CLI_FMT_CAP];
    if (r->empty)
        return;
    if (r->whole)
        fprintf(f, " %s whole (%s, range unknown)", what, cli_fmt_size(size, a));
    else
        fprintf(f, " %s [%" PRIu64 ", %" PRIu64 ") = %s", what, r->lo, r->hi, cli_fmt_size(r->hi - r->lo, a));
}

static void cli_an_kernel_human(FILE *f, const ana_model *m, const cli_an_kernel *x)
{
    const ana_kernel *k = x->k;
    char buf[1024];
    fputs("  kernel ", f);
    cli_an_put(f, x->name);
    fprintf(f, ": %" PRIu64 " launch%s", x->launches, x->launches == 1 ? "" : "es");
    if (x->shapes > 1)
        fprintf(f, " in %" PRIu64 " shapes", x->shapes);
    putc('\n', f);
    if (!k) {
        fputs("    not analyzed (no analysis of its program)\n", f);
        return;
    }
    if (k->unsupported) {
        fputs("    not analyzed: ", f);
        cli_an_put(f, k->unsupported);
        putc('\n', f);
        return;
    }
    fputs("    arguments\n", f);
    for (unsigned i = 0; i < k->nargs; i++) {
        const ana_arg *a = &k->args[i];
        fprintf(f, "      %u %-12s %-18s %-8s", i, cli_an_argname(k, i), a->type ? a->type : "?",
                cli_an_kind(a->kind));
        if (cli_an_is_ptr(a) || a->kind == ANA_ARG_IMAGE || a->kind == ANA_ARG_LOCAL)
            fprintf(f, " %s%s%s", cli_an_access(a->access), a->is_const ? ", const" : "",
                    cli_an_is_ptr(a) ? (a->analyzable ? ", every offset known" : ", some offsets unknown") : "");
        putc('\n', f);
    }
    if (k->naccesses)
        fputs("    accesses\n", f);
    for (unsigned i = 0; i < k->naccesses; i++) {
        const ana_mem_access *ac = &k->accesses[i];
        fprintf(f, "      %-6s %-10s %u B at %s", ac->is_atomic ? "atomic" : ac->is_write ? "write" : "read",
                cli_an_argname(k, ac->arg), ac->size, cli_an_expr(k, &ac->offset, buf, sizeof buf));
        for (unsigned g = 0; g < ac->nguards; g++)
            fprintf(f, "%s%s %s 0", g ? " and " : "  if ", cli_an_expr(k, &ac->guards[g].expr, buf, sizeof buf),
                    cli_an_cmp(ac->guards[g].cmp));
        if (ac->line)
            fprintf(f, "  (line %u)", ac->line);
        putc('\n', f);
    }
    for (unsigned i = 0; i < k->nloops; i++) {
        const ana_loop *lp = &k->loops[i];
        char b2[512];
        fprintf(f, "    loop %u (depth %u): from %s to %s step %" PRId64 "\n", i, lp->depth,
                cli_an_expr(k, &lp->start, buf, sizeof buf), cli_an_expr(k, &lp->end, b2, sizeof b2), lp->step);
    }
    if (!x->rep) {
        fputs("    never launched: no regions\n", f);
        return;
    }
    const ana_cmd *c = x->rep;
    fprintf(f, "    launch shape (%" PRIu64 " of %" PRIu64 " launches, e.g. #%" PRIu64 "): global ", x->shape_count,
            x->launches, c->seq);
    for (unsigned d = 0; d < c->work_dim; d++)
        fprintf(f, "%s%" PRIu64, d ? "x" : "", c->global[d]);
    fputs(", local ", f);
    for (unsigned d = 0; d < c->work_dim; d++)
        fprintf(f, d ? "x%" PRIu64 : "%" PRIu64, c->local[d]);
    for (unsigned i = 0; i < k->nargs; i++)
        if (k->args[i].kind == ANA_ARG_SCALAR && x->vals[i].known)
            fprintf(f, ", %s=%" PRId64, cli_an_argname(k, i), x->vals[i].value);
    fputs("\n    regions (all work-groups)\n", f);
    uint64_t lo[3] = { 0, 0, 0 };
    for (unsigned i = 0; i < k->nargs; i++) {
        ana_region rd, wr;
        if (!cli_an_is_ptr(&k->args[i]) || ana_kernel_region(k, &x->l, i, lo, x->groups, &rd, &wr) != ANA_OK)
            continue;
        fprintf(f, "      %-12s", cli_an_argname(k, i));
        cli_an_region_human(f, "read", &rd, x->vals[i].size);
        cli_an_region_human(f, "write", &wr, x->vals[i].size);
        if (rd.empty && wr.empty)
            fputs(" not accessed", f);
        putc('\n', f);
    }
    for (unsigned i = 0; i < k->nargs; i++) {
        ana_contiguity ct;
        if (!cli_an_is_ptr(&k->args[i]) || !(k->args[i].access & ANA_ACC_WRITE) ||
            ana_kernel_contiguity(k, &x->l, i, &ct) != ANA_OK)
            continue;
        fprintf(f, "    contiguity of %s: %s", cli_an_argname(k, i), ct.linear ? "contiguous" : "not contiguous");
        if (!ct.linear && ct.reason) {
            fputs(" (", f);
            cli_an_put(f, ct.reason);
            putc(')', f);
        }
        fputs("; splits along", f);
        int any = 0;
        for (unsigned d = 0; d < c->work_dim; d++)
            if (ct.dim[d])
                fprintf(f, " dim %u", d), any = 1;
        fputs(any ? "\n" : " none\n", f);
    }
    ana_features ft;
    if (ana_kernel_features(k, &x->l, &ft) == ANA_OK) {
        const ana_static_features *s = &ft.stat;
        fprintf(f, "    features: %" PRIu64 " work-items in %" PRIu64 " groups; int %u, float %u, loads %u"
                   " (global %u, local %u), stores %u (global %u, local %u), branches %u, barriers %u,"
                   " atomics %u, calls %u, loops %u (%u with known trip count, max %" PRIu64 ")\n",
                ft.work_items, ft.work_groups, s->int_ops, s->float_ops, s->loads, s->global_loads,
                s->local_loads, s->stores, s->global_stores, s->local_stores, s->branches, s->barriers,
                s->atomics, s->calls, s->loops, ft.loops_known, ft.max_trip_count);
        fprintf(f, "    strides along dim 0: invariant %u, unit %u, strided %u, unknown %u;"
                   " per work-item ~%.1f ops, %.1f loads, %.1f stores\n",
                ft.accesses_by_stride[ANA_STRIDE_INVARIANT], ft.accesses_by_stride[ANA_STRIDE_UNIT],
                ft.accesses_by_stride[ANA_STRIDE_STRIDED], ft.accesses_by_stride[ANA_STRIDE_UNKNOWN],
                ft.dyn_ops, ft.dyn_loads, ft.dyn_stores);
    }
    (void)m;
}

void cli_an_print_human(FILE *f, const ana_model *m, const cli_an_program *p)
{
    char a[CLI_FMT_CAP];
    fputs("program", f);
    for (size_t i = 0; i < p->nids; i++)
        fprintf(f, "%s#%" PRIu64, i ? ", " : " ", p->ids[i]);
    if (p->prog->source)
        fprintf(f, " (%s of source", cli_fmt_size(p->prog->source_len, a));
    else
        fputs(" (no source", f);
    if (p->prog->options) {
        fputs(", options \"", f);
        cli_an_put(f, p->prog->options);
        putc('"', f);
    }
    fprintf(f, "): %zu kernel%s\n", p->nkernels, p->nkernels == 1 ? "" : "s");
    if (!p->p) {
        fputs("  not analyzed: ", f);
        cli_an_put(f, p->why ? p->why : "?");
        putc('\n', f);
    }
    for (size_t i = 0; i < p->nkernels; i++)
        cli_an_kernel_human(f, m, &p->kernels[i]);
}

/* ------------------------------------------------------------ JSON */

static void cli_an_region_json(FILE *f, const ana_region *r)
{
    fprintf(f, "{\"empty\":%s,\"whole\":%s,\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 "}", r->empty ? "true" : "false",
            r->whole ? "true" : "false", r->lo, r->hi);
}

static void cli_an_expr_json(FILE *f, const ana_kernel *k, const ana_expr *e)
{
    char buf[1024];
    fputs("{\"text\":", f);
    cli_json_cstr(f, cli_an_expr(k, e, buf, sizeof buf));
    fprintf(f, ",\"known\":%s,\"reason\":", e->known ? "true" : "false");
    cli_json_cstr(f, e->known ? NULL : e->reason);
    putc('}', f);
}

static void cli_an_kernel_json(FILE *f, const cli_an_kernel *x)
{
    const ana_kernel *k = x->k;
    fputs("{\"name\":", f);
    cli_json_cstr(f, x->name);
    fprintf(f, ",\"launches\":%" PRIu64 ",\"shapes\":%" PRIu64 ",\"analyzed\":%s,\"unsupported\":", x->launches,
            x->shapes, k && !k->unsupported ? "true" : "false");
    cli_json_cstr(f, !k ? "no analysis of its program" : k->unsupported);
    if (!k || k->unsupported) {
        putc('}', f);
        return;
    }
    fputs(",\"args\":[", f);
    for (unsigned i = 0; i < k->nargs; i++) {
        const ana_arg *a = &k->args[i];
        fprintf(f, "%s{\"index\":%u,\"name\":", i ? "," : "", i);
        cli_json_cstr(f, a->name);
        fputs(",\"type\":", f);
        cli_json_cstr(f, a->type);
        fprintf(f, ",\"kind\":\"%s\",\"access\":\"%s\",\"elem_size\":%u,\"const\":%s,\"analyzable\":%s}",
                cli_an_kind(a->kind), cli_an_access(a->access), a->elem_size, a->is_const ? "true" : "false",
                a->analyzable ? "true" : "false");
    }
    fputs("],\"accesses\":[", f);
    for (unsigned i = 0; i < k->naccesses; i++) {
        const ana_mem_access *ac = &k->accesses[i];
        fprintf(f, "%s{\"arg\":%u,\"arg_name\":", i ? "," : "", ac->arg);
        cli_json_cstr(f, cli_an_argname(k, ac->arg));
        fprintf(f, ",\"write\":%s,\"atomic\":%s,\"size\":%u,\"line\":%u,\"offset\":", ac->is_write ? "true" : "false",
                ac->is_atomic ? "true" : "false", ac->size, ac->line);
        cli_an_expr_json(f, k, &ac->offset);
        fputs(",\"guards\":[", f);
        for (unsigned g = 0; g < ac->nguards; g++) {
            fprintf(f, "%s{\"cmp\":\"%s\",\"expr\":", g ? "," : "", cli_an_cmp(ac->guards[g].cmp));
            cli_an_expr_json(f, k, &ac->guards[g].expr);
            putc('}', f);
        }
        fputs("]}", f);
    }
    fputs("],\"loops\":[", f);
    for (unsigned i = 0; i < k->nloops; i++) {
        fprintf(f, "%s{\"depth\":%u,\"step\":%" PRId64 ",\"start\":", i ? "," : "", k->loops[i].depth,
                k->loops[i].step);
        cli_an_expr_json(f, k, &k->loops[i].start);
        fputs(",\"end\":", f);
        cli_an_expr_json(f, k, &k->loops[i].end);
        putc('}', f);
    }
    const ana_static_features *s = &k->features;
    fprintf(f, "],\"static_features\":{\"int_ops\":%u,\"float_ops\":%u,\"loads\":%u,\"stores\":%u,"
               "\"global_loads\":%u,\"global_stores\":%u,\"local_loads\":%u,\"local_stores\":%u,\"branches\":%u,"
               "\"barriers\":%u,\"atomics\":%u,\"calls\":%u,\"loops\":%u}",
            s->int_ops, s->float_ops, s->loads, s->stores, s->global_loads, s->global_stores, s->local_loads,
            s->local_stores, s->branches, s->barriers, s->atomics, s->calls, s->loops);
    if (!x->rep) {
        fputs(",\"launch\":null,\"regions\":[],\"contiguity\":[],\"features\":null}", f);
        return;
    }
    const ana_cmd *c = x->rep;
    fprintf(f, ",\"launch\":{\"seq\":%" PRIu64 ",\"count\":%" PRIu64 ",\"work_dim\":%u,\"global\":[", c->seq,
            x->shape_count, c->work_dim);
    for (unsigned d = 0; d < c->work_dim; d++)
        fprintf(f, "%s%" PRIu64, d ? "," : "", c->global[d]);
    fputs("],\"local\":[", f);
    for (unsigned d = 0; d < c->work_dim; d++)
        fprintf(f, "%s%" PRIu64, d ? "," : "", c->local[d]);
    fputs("],\"offset\":[", f);
    for (unsigned d = 0; d < c->work_dim; d++)
        fprintf(f, "%s%" PRIu64, d ? "," : "", c->goff[d]);
    fputs("],\"groups\":[", f);
    for (unsigned d = 0; d < c->work_dim; d++)
        fprintf(f, "%s%" PRIu64, d ? "," : "", x->groups[d]);
    fputs("],\"args\":[", f);
    for (unsigned i = 0; i < x->l.nargs; i++)
        fprintf(f, "%s{\"known\":%s,\"value\":%" PRId64 ",\"size\":%" PRIu64 "}", i ? "," : "",
                x->vals[i].known ? "true" : "false", x->vals[i].value, x->vals[i].size);
    fputs("]},\"regions\":[", f);
    uint64_t lo[3] = { 0, 0, 0 };
    int first = 1;
    for (unsigned i = 0; i < k->nargs; i++) {
        ana_region rd, wr;
        if (!cli_an_is_ptr(&k->args[i]) || ana_kernel_region(k, &x->l, i, lo, x->groups, &rd, &wr) != ANA_OK)
            continue;
        fprintf(f, "%s{\"arg\":%u,\"name\":", first ? "" : ",", i);
        cli_json_cstr(f, k->args[i].name);
        fprintf(f, ",\"size\":%" PRIu64 ",\"read\":", x->vals[i].size);
        cli_an_region_json(f, &rd);
        fputs(",\"write\":", f);
        cli_an_region_json(f, &wr);
        putc('}', f);
        first = 0;
    }
    fputs("],\"contiguity\":[", f);
    first = 1;
    for (unsigned i = 0; i < k->nargs; i++) {
        ana_contiguity ct;
        if (!cli_an_is_ptr(&k->args[i]) || !(k->args[i].access & ANA_ACC_WRITE) ||
            ana_kernel_contiguity(k, &x->l, i, &ct) != ANA_OK)
            continue;
        fprintf(f, "%s{\"arg\":%u,\"name\":", first ? "" : ",", i);
        cli_json_cstr(f, k->args[i].name);
        fprintf(f, ",\"linear\":%s,\"dim\":[%s,%s,%s],\"reason\":", ct.linear ? "true" : "false",
                ct.dim[0] ? "true" : "false", ct.dim[1] ? "true" : "false", ct.dim[2] ? "true" : "false");
        cli_json_cstr(f, ct.linear ? NULL : ct.reason);
        putc('}', f);
        first = 0;
    }
    fputs("],\"features\":", f);
    ana_features ft;
    if (ana_kernel_features(k, &x->l, &ft) != ANA_OK) {
        fputs("null}", f);
        return;
    }
    fprintf(f, "{\"work_items\":%" PRIu64 ",\"work_groups\":%" PRIu64 ",\"strides\":{\"invariant\":%u,\"unit\":%u,"
               "\"strided\":%u,\"unknown\":%u},\"dyn_ops\":%.3f,\"dyn_loads\":%.3f,\"dyn_stores\":%.3f,"
               "\"loops_known\":%u,\"max_trip_count\":%" PRIu64 "}}",
            ft.work_items, ft.work_groups, ft.accesses_by_stride[ANA_STRIDE_INVARIANT],
            ft.accesses_by_stride[ANA_STRIDE_UNIT], ft.accesses_by_stride[ANA_STRIDE_STRIDED],
            ft.accesses_by_stride[ANA_STRIDE_UNKNOWN], ft.dyn_ops, ft.dyn_loads, ft.dyn_stores, ft.loops_known,
            ft.max_trip_count);
}

void cli_an_print_json_program(FILE *f, const ana_model *m, const cli_an_program *p)
{
    (void)m;
    fputs("{\"ids\":[", f);
    for (size_t i = 0; i < p->nids; i++)
        fprintf(f, "%s%" PRIu64, i ? "," : "", p->ids[i]);
    fprintf(f, "],\"source_bytes\":%" PRIu64 ",\"options\":", p->prog->source_len);
    cli_json_cstr(f, p->prog->options);
    fprintf(f, ",\"analyzed\":%s,\"why\":", p->p ? "true" : "false");
    cli_json_cstr(f, p->p ? NULL : p->why);
    fputs(",\"kernels\":[", f);
    for (size_t i = 0; i < p->nkernels; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        cli_an_kernel_json(f, &p->kernels[i]);
    }
    fputs("]}", f);
}
