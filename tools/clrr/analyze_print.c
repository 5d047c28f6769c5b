/* analyze_print.c — `clrr analyze` output: one program's kernels, human
 * or JSON. Strings from the analysis come from an untrusted trace's
 * source (names): they are printed escaped. */
#include "tools/clrr/analyze_int.h"

#include <inttypes.h>
#include <jansson.h>
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

static json_t *cli_an_region_json(const ana_region *r)
{
    json_t *o = json_object();
    CLI_JSET(o, "empty", json_boolean(r->empty));
    CLI_JSET(o, "whole", json_boolean(r->whole));
    CLI_JSET(o, "lo", cli_json_u64(r->lo));
    CLI_JSET(o, "hi", cli_json_u64(r->hi));
    return o;
}

static json_t *cli_an_expr_json(const ana_kernel *k, const ana_expr *e)
{
    char buf[1024];
    json_t *o = json_object();
    CLI_JSET(o, "text", cli_json_ctext(cli_an_expr(k, e, buf, sizeof buf)));
    CLI_JSET(o, "known", json_boolean(e->known));
    CLI_JSET(o, "reason", cli_json_ctext(e->known ? NULL : e->reason));
    return o;
}

static json_t *cli_an_dims_json(const uint64_t *v, unsigned n)
{
    json_t *a = json_array();
    for (unsigned d = 0; d < n; d++)
        json_array_append_new(a, cli_json_u64(v[d]));
    return a;
}

/* The representative launch's regions, contiguity and dynamic features. */
static void cli_an_launch_json(json_t *o, const cli_an_kernel *x)
{
    const ana_kernel *k = x->k;
    const ana_cmd *c = x->rep;
    json_t *l = json_object(), *a;
    CLI_JSET(l, "seq", cli_json_u64(c->seq));
    CLI_JSET(l, "count", cli_json_u64(x->shape_count));
    CLI_JSET(l, "work_dim", json_integer(c->work_dim));
    CLI_JSET(l, "global", cli_an_dims_json(c->global, c->work_dim));
    CLI_JSET(l, "local", cli_an_dims_json(c->local, c->work_dim));
    CLI_JSET(l, "offset", cli_an_dims_json(c->goff, c->work_dim));
    CLI_JSET(l, "groups", cli_an_dims_json(x->groups, c->work_dim));
    CLI_JSET(l, "args", a = json_array());
    for (unsigned i = 0; i < x->l.nargs; i++) {
        json_t *e = json_object();
        CLI_JSET(e, "known", json_boolean(x->vals[i].known));
        CLI_JSET(e, "value", json_integer(x->vals[i].value));
        CLI_JSET(e, "size", cli_json_u64(x->vals[i].size));
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "launch", l);
    CLI_JSET(o, "regions", a = json_array());
    uint64_t lo[3] = { 0, 0, 0 };
    for (unsigned i = 0; i < k->nargs; i++) {
        ana_region rd, wr;
        if (!cli_an_is_ptr(&k->args[i]) || ana_kernel_region(k, &x->l, i, lo, x->groups, &rd, &wr) != ANA_OK)
            continue;
        json_t *e = json_object();
        CLI_JSET(e, "arg", json_integer(i));
        CLI_JSET(e, "name", cli_json_ctext(k->args[i].name));
        CLI_JSET(e, "size", cli_json_u64(x->vals[i].size));
        CLI_JSET(e, "read", cli_an_region_json(&rd));
        CLI_JSET(e, "write", cli_an_region_json(&wr));
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "contiguity", a = json_array());
    for (unsigned i = 0; i < k->nargs; i++) {
        ana_contiguity ct;
        if (!cli_an_is_ptr(&k->args[i]) || !(k->args[i].access & ANA_ACC_WRITE) ||
            ana_kernel_contiguity(k, &x->l, i, &ct) != ANA_OK)
            continue;
        json_t *e = json_object(), *dim = json_array();
        CLI_JSET(e, "arg", json_integer(i));
        CLI_JSET(e, "name", cli_json_ctext(k->args[i].name));
        CLI_JSET(e, "linear", json_boolean(ct.linear));
        for (int d = 0; d < 3; d++)
            json_array_append_new(dim, json_boolean(ct.dim[d]));
        CLI_JSET(e, "dim", dim);
        CLI_JSET(e, "reason", cli_json_ctext(ct.linear ? NULL : ct.reason));
        json_array_append_new(a, e);
    }
    ana_features ft;
    if (ana_kernel_features(k, &x->l, &ft) != ANA_OK) {
        CLI_JSET(o, "features", json_null());
        return;
    }
    json_t *f = json_object(), *st = json_object();
    CLI_JSET(f, "work_items", cli_json_u64(ft.work_items));
    CLI_JSET(f, "work_groups", cli_json_u64(ft.work_groups));
    CLI_JSET(st, "invariant", json_integer(ft.accesses_by_stride[ANA_STRIDE_INVARIANT]));
    CLI_JSET(st, "unit", json_integer(ft.accesses_by_stride[ANA_STRIDE_UNIT]));
    CLI_JSET(st, "strided", json_integer(ft.accesses_by_stride[ANA_STRIDE_STRIDED]));
    CLI_JSET(st, "unknown", json_integer(ft.accesses_by_stride[ANA_STRIDE_UNKNOWN]));
    CLI_JSET(f, "strides", st);
    CLI_JSET(f, "dyn_ops", cli_json_f64(ft.dyn_ops));
    CLI_JSET(f, "dyn_loads", cli_json_f64(ft.dyn_loads));
    CLI_JSET(f, "dyn_stores", cli_json_f64(ft.dyn_stores));
    CLI_JSET(f, "loops_known", json_integer(ft.loops_known));
    CLI_JSET(f, "max_trip_count", cli_json_u64(ft.max_trip_count));
    CLI_JSET(o, "features", f);
}

static json_t *cli_an_kernel_json(const cli_an_kernel *x)
{
    const ana_kernel *k = x->k;
    json_t *o = json_object(), *a;
    CLI_JSET(o, "name", cli_json_ctext(x->name));
    CLI_JSET(o, "launches", cli_json_u64(x->launches));
    CLI_JSET(o, "shapes", cli_json_u64(x->shapes));
    CLI_JSET(o, "analyzed", json_boolean(k && !k->unsupported));
    CLI_JSET(o, "unsupported", cli_json_ctext(!k ? "no analysis of its program" : k->unsupported));
    if (!k || k->unsupported)
        return o;
    CLI_JSET(o, "args", a = json_array());
    for (unsigned i = 0; i < k->nargs; i++) {
        const ana_arg *g = &k->args[i];
        json_t *e = json_object();
        CLI_JSET(e, "index", json_integer(i));
        CLI_JSET(e, "name", cli_json_ctext(g->name));
        CLI_JSET(e, "type", cli_json_ctext(g->type));
        CLI_JSET(e, "kind", json_string(cli_an_kind(g->kind)));
        CLI_JSET(e, "access", json_string(cli_an_access(g->access)));
        CLI_JSET(e, "elem_size", json_integer(g->elem_size));
        CLI_JSET(e, "const", json_boolean(g->is_const));
        CLI_JSET(e, "analyzable", json_boolean(g->analyzable));
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "accesses", a = json_array());
    for (unsigned i = 0; i < k->naccesses; i++) {
        const ana_mem_access *ac = &k->accesses[i];
        json_t *e = json_object(), *gs = json_array();
        CLI_JSET(e, "arg", json_integer(ac->arg));
        CLI_JSET(e, "arg_name", cli_json_ctext(cli_an_argname(k, ac->arg)));
        CLI_JSET(e, "write", json_boolean(ac->is_write));
        CLI_JSET(e, "atomic", json_boolean(ac->is_atomic));
        CLI_JSET(e, "size", json_integer(ac->size));
        CLI_JSET(e, "line", json_integer(ac->line));
        CLI_JSET(e, "offset", cli_an_expr_json(k, &ac->offset));
        for (unsigned g = 0; g < ac->nguards; g++) {
            json_t *ge = json_object();
            CLI_JSET(ge, "cmp", json_string(cli_an_cmp(ac->guards[g].cmp)));
            CLI_JSET(ge, "expr", cli_an_expr_json(k, &ac->guards[g].expr));
            json_array_append_new(gs, ge);
        }
        CLI_JSET(e, "guards", gs);
        json_array_append_new(a, e);
    }
    CLI_JSET(o, "loops", a = json_array());
    for (unsigned i = 0; i < k->nloops; i++) {
        json_t *e = json_object();
        CLI_JSET(e, "depth", json_integer(k->loops[i].depth));
        CLI_JSET(e, "step", json_integer(k->loops[i].step));
        CLI_JSET(e, "start", cli_an_expr_json(k, &k->loops[i].start));
        CLI_JSET(e, "end", cli_an_expr_json(k, &k->loops[i].end));
        json_array_append_new(a, e);
    }
    const ana_static_features *s = &k->features;
    json_t *sf = json_object();
    CLI_JSET(sf, "int_ops", json_integer(s->int_ops));
    CLI_JSET(sf, "float_ops", json_integer(s->float_ops));
    CLI_JSET(sf, "loads", json_integer(s->loads));
    CLI_JSET(sf, "stores", json_integer(s->stores));
    CLI_JSET(sf, "global_loads", json_integer(s->global_loads));
    CLI_JSET(sf, "global_stores", json_integer(s->global_stores));
    CLI_JSET(sf, "local_loads", json_integer(s->local_loads));
    CLI_JSET(sf, "local_stores", json_integer(s->local_stores));
    CLI_JSET(sf, "branches", json_integer(s->branches));
    CLI_JSET(sf, "barriers", json_integer(s->barriers));
    CLI_JSET(sf, "atomics", json_integer(s->atomics));
    CLI_JSET(sf, "calls", json_integer(s->calls));
    CLI_JSET(sf, "loops", json_integer(s->loops));
    CLI_JSET(o, "static_features", sf);
    if (!x->rep) {
        CLI_JSET(o, "launch", json_null());
        CLI_JSET(o, "regions", json_array());
        CLI_JSET(o, "contiguity", json_array());
        CLI_JSET(o, "features", json_null());
        return o;
    }
    cli_an_launch_json(o, x);
    return o;
}

json_t *cli_an_program_json(const ana_model *m, const cli_an_program *p)
{
    (void)m;
    json_t *o = json_object(), *a = json_array();
    for (size_t i = 0; i < p->nids; i++)
        json_array_append_new(a, cli_json_u64(p->ids[i]));
    CLI_JSET(o, "ids", a);
    CLI_JSET(o, "source_bytes", cli_json_u64(p->prog->source_len));
    CLI_JSET(o, "options", cli_json_ctext(p->prog->options));
    CLI_JSET(o, "analyzed", json_boolean(p->p != NULL));
    CLI_JSET(o, "why", cli_json_ctext(p->p ? NULL : p->why));
    CLI_JSET(o, "kernels", a = json_array());
    for (size_t i = 0; i < p->nkernels; i++)
        json_array_append_new(a, cli_an_kernel_json(&p->kernels[i]));
    return o;
}
