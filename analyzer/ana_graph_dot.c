/* ana_graph_dot.c — the graph as Graphviz DOT, meant to be read: one box
 * per command (kernel name and the buffers it reads -> writes; transfers
 * with their buffer and size), host sync points as octagons, one cluster
 * per queue, one arrow per pair of commands labelled with the reasons
 * ("RAW gx", "WAR img") and coloured by the strongest one. Edges that two
 * other edges already imply are left out, except RAW (the data flow). */
#include "analyzer/ana_graph_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ana_edge_color[ANA_EDGE_KIND_COUNT] = {
    "#1f5fbf", "#e08000", "#c0392b", "#7b3fb5", "#888888", "#555555", "#aaaaaa",
};
static const char *const ana_edge_style[ANA_EDGE_KIND_COUNT] = {
    "solid", "dashed", "dotted", "solid", "dashed", "dotted", "dotted",
};

/* Writes @p s as the inside of a DOT string: quotes and backslashes
 * escaped, anything unprintable as '?'. */
static void ana_dot_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            putc('\\', f), putc(c, f);
        else
            putc(c < 0x20 || c >= 0x7f ? '?' : c, f);
    }
}

static const char *ana_dot_size(uint64_t b, char *buf, size_t cap)
{
    if (b < 10000)
        snprintf(buf, cap, "%" PRIu64 " B", b);
    else if (b < 10000000)
        snprintf(buf, cap, "%.1f KiB", (double)b / 1024);
    else
        snprintf(buf, cap, "%.1f MiB", (double)b / 1048576);
    return buf;
}

static const char *ana_dot_fill(const ana_cmd *c)
{
    switch (c->kind) {
    case ANA_CMD_KERNEL: return "#d6e4ff";
    case ANA_CMD_READ: return "#ffe2b8";
    case ANA_CMD_WRITE: return "#d6f2d6";
    case ANA_CMD_MARKER: case ANA_CMD_BARRIER: case ANA_CMD_OTHER: case ANA_CMD_NATIVE: return "#eeeeee";
    default: return ana_cmd_kind_is_host((ana_cmd_kind)c->kind) ? "#f4f4f4" : "#efe3ff";
    }
}

/* "a, b -> c": the objects a launch reads, then those it writes ("-> c"
 * when it reads none, "a ->" when it writes none). */
static void ana_dot_flow(FILE *f, const ana_model *m, const ana_cmd *c)
{
    char l[64];
    int reads = 0;
    for (int side = 0; side < 2; side++) {
        int acc = side ? ANA_ACC_WRITE : ANA_ACC_READ, n = 0;
        if (side)
            fputs(reads ? " ->" : "->", f);
        for (unsigned i = 0; i < c->nmem; i++) {
            if (!(c->mem[i].access & acc))
                continue;
            int dup = 0;
            for (unsigned j = 0; j < i && !dup; j++)
                dup = (c->mem[j].access & acc) && c->mem[j].object == c->mem[i].object;
            if (dup)
                continue;
            fputs(n ? ", " : side ? " " : "", f);
            ana_dot_text(f, ana_model_label(m, c->mem[i].object, l, sizeof l));
            if (c->mem[i].whole)
                putc('?', f);
            n++;
        }
        if (!side)
            reads = n;
    }
}

static void ana_dot_node(FILE *f, const ana_model *m, const ana_view *v, size_t i)
{
    const ana_vnode *vn = &v->nodes[i];
    const ana_cmd *c = ana_model_command(m, vn->cmd);
    char t[160], sz[32];
    int host = ana_cmd_kind_is_host((ana_cmd_kind)c->kind);
    fprintf(f, "  n%zu [label=\"", i);
    ana_dot_text(f, ana_cmd_title(m, c, t, sizeof t));
    if (vn->repeat > 1)
        fprintf(f, "  x%" PRIu32 "\\n#%" PRIu64 " .. #%" PRIu64, vn->repeat, c->seq, vn->last_seq);
    else
        fprintf(f, "\\n#%" PRIu64, c->seq);
    if (c->kind == ANA_CMD_KERNEL) {
        fputs("  ", f);
        for (unsigned d = 0; d < c->work_dim; d++)
            fprintf(f, "%s%" PRIu64, d ? "x" : "", c->global[d]);
        fputs("\\n", f);
        ana_dot_flow(f, m, c);
    } else if (!host && c->bytes) {
        fprintf(f, "  %s", ana_dot_size(c->bytes, sz, sizeof sz));
    }
    if (c->blocking && !host)
        fputs("\\n(blocking)", f);
    fprintf(f, "\", fillcolor=\"%s\"%s%s];\n", ana_dot_fill(c),
            host ? ", shape=octagon" : "", vn->repeat > 1 ? ", peripheries=2" : "");
}

/* Whether view edge @p x is drawn. */
static int ana_dot_shown(const ana_vedge *x)
{
    return !x->e->implied || x->e->kind == ANA_EDGE_RAW;
}

static void ana_dot_edge_label(FILE *f, const ana_model *m, const ana_vedge *x)
{
    const ana_edge *e = x->e;
    char l[64], a[32], b[32];
    if (x->carried)
        fputs("loop ", f);
    switch (e->kind) {
    case ANA_EDGE_RAW: case ANA_EDGE_WAR: case ANA_EDGE_WAW: {
        const ana_object *o = ana_model_find(m, e->object);
        fprintf(f, "%s ", ana_edge_kind_name((ana_edge_kind)e->kind));
        ana_dot_text(f, ana_model_label(m, e->object, l, sizeof l));
        if (e->whole)
            fputs(" (whole)", f);
        else if (o && (e->lo || e->hi != o->size))
            fprintf(f, " [%s..%s)", ana_dot_size(e->lo, a, sizeof a), ana_dot_size(e->hi, b, sizeof b));
        break;
    }
    case ANA_EDGE_EVENT:
        fputs("event", f);
        break;
    case ANA_EDGE_ORDER:
        fputs("order", f);
        break;
    default:
        break;
    }
}

static int ana_vedge_by_pair(const void *a, const void *b)
{
    const ana_vedge *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->e->kind != y->e->kind)
        return x->e->kind < y->e->kind ? -1 : 1;
    return x->e->object < y->e->object ? -1 : x->e->object > y->e->object;
}

static void ana_dot_edges(FILE *f, const ana_model *m, ana_view *v)
{
    qsort(v->edges, v->nedges, sizeof *v->edges, ana_vedge_by_pair);
    for (size_t i = 0; i < v->nedges;) {
        size_t j = i;
        while (j < v->nedges && v->edges[j].from == v->edges[i].from && v->edges[j].to == v->edges[i].to)
            j++;
        const ana_vedge *top = NULL;
        int carried = 0, labelled = 0, implied = 1;
        for (size_t k = i; k < j; k++) {
            if (!ana_dot_shown(&v->edges[k]))
                continue;
            if (!top)
                top = &v->edges[k];
            carried |= v->edges[k].carried;
            implied &= v->edges[k].e->implied;
        }
        if (top) {
            /* a data flow that other edges already order: drawn light, and
             * left out of the layout's ranking (long edges would stretch it) */
            int kind = top->e->kind;
            const char *color = implied ? "#8fb0e0" : ana_edge_color[kind];
            fprintf(f, "  n%" PRIu32 " -> n%" PRIu32 " [color=\"%s\", fontcolor=\"%s\", style=%s%s%s, label=\"",
                    top->from, top->to, color, color, ana_edge_style[kind],
                    kind == ANA_EDGE_RAW && !implied ? ", penwidth=1.6" : "",
                    carried || implied || top->from >= top->to ? ", constraint=false" : "");
            for (size_t k = i; k < j; k++) {
                if (!ana_dot_shown(&v->edges[k]) || v->edges[k].e->kind > ANA_EDGE_ORDER)
                    continue;
                if (labelled++)
                    fputs("\\n", f);
                ana_dot_edge_label(f, m, &v->edges[k]);
            }
            fputs("\"];\n", f);
        }
        i = j;
    }
}

ana_status ana_graph_write_dot(const ana_model *m, const ana_graph *g, const ana_graph_view *v,
                               FILE *f)
{
    ana_view vw;
    ana_status st = ana_view_build(m, g, v, 1, &vw);
    if (st != ANA_OK)
        return st;
    size_t shown = 0;
    for (size_t i = 0; i < vw.nedges; i++)
        shown += ana_dot_shown(&vw.edges[i]);
    fprintf(f, "digraph clrr {\n"
               "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, nodesep=0.35, ranksep=0.4,"
               " labelloc=t, label=\"clrr graph: %zu nodes, %zu edges (%zu implied by others not drawn)%s\\n"
               "RAW blue, WAR orange dashed, WAW red dotted, event purple, order grey dashed,"
               " clFinish/host grey dotted; '?' = whole buffer (range unknown)\"];\n"
               "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
               "  edge [fontname=\"Helvetica\", fontsize=8, arrowsize=0.7];\n",
            vw.nnodes, shown, vw.nedges - shown, v && v->collapse ? ", repetitions folded" : "");
    /* one cluster per queue, in order of first appearance */
    uint8_t *done = calloc(vw.nnodes ? vw.nnodes : 1, 1);
    if (!done) {
        ana_view_free(&vw);
        return ANA_ERR_NOMEM;
    }
    for (size_t i = 0; i < vw.nnodes; i++) {
        const ana_cmd *c = ana_model_command(m, vw.nodes[i].cmd);
        if (done[i] || !c->queue) {
            continue;
        }
        const ana_object *q = ana_model_find(m, c->queue);
        fprintf(f, "  subgraph cluster_q%" PRIu64 " {\n    label=\"queue #%" PRIu64 " (%s)\";"
                   " style=\"rounded,dashed\"; color=\"#999999\"; fontcolor=\"#666666\";\n",
                c->queue, c->queue, q && (q->props & 1) ? "out of order" : "in order");
        for (size_t k = i; k < vw.nnodes; k++) {
            if (ana_model_command(m, vw.nodes[k].cmd)->queue != c->queue)
                continue;
            fputs("  ", f);
            ana_dot_node(f, m, &vw, k);
            done[k] = 1;
        }
        fputs("  }\n", f);
    }
    for (size_t i = 0; i < vw.nnodes; i++)
        if (!done[i])
            ana_dot_node(f, m, &vw, i);
    free(done);
    ana_dot_edges(f, m, &vw);
    fputs("}\n", f);
    ana_view_free(&vw);
    return ferror(f) ? ANA_ERR_IO : ANA_OK;
}
