/* ana_graph_json.c — the graph as JSON: nodes (commands and host sync
 * points, identified by seq), every edge with its reason, and the objects
 * with their lifetimes. Schema in analyzer/README.md. */
#include "analyzer/ana_graph_int.h"

#include <inttypes.h>
#include <stdio.h>

static const char *ana_acc_name(int a)
{
    return a == ANA_ACC_RW ? "rw" : a == ANA_ACC_WRITE ? "write" : a == ANA_ACC_READ ? "read" : "none";
}

static void ana_json_u64_or_null(FILE *f, uint64_t v)
{
    if (v)
        fprintf(f, "%" PRIu64, v);
    else
        fputs("null", f);
}

static void ana_json_dims(FILE *f, const uint64_t *v, unsigned n)
{
    putc('[', f);
    for (unsigned d = 0; d < n; d++)
        fprintf(f, "%s%" PRIu64, d ? "," : "", v[d]);
    putc(']', f);
}

static void ana_json_node(FILE *f, const ana_model *m, const ana_vnode *vn)
{
    const ana_cmd *c = ana_model_command(m, vn->cmd);
    char t[160], l[64];
    fprintf(f, "{\"id\":%" PRIu64 ",\"kind\":\"%s\",\"fn\":", c->seq,
            ana_cmd_kind_name((ana_cmd_kind)c->kind));
    ana_json_cstr(f, c->fn);
    fputs(",\"name\":", f);
    ana_json_cstr(f, ana_cmd_title(m, c, t, sizeof t));
    fprintf(f, ",\"host\":%s,\"tid\":%" PRIu64 ",\"queue\":", ana_cmd_kind_is_host((ana_cmd_kind)c->kind)
            ? "true" : "false", c->tid);
    ana_json_u64_or_null(f, c->queue);
    fprintf(f, ",\"in_order\":%s,\"blocking\":%s,\"event\":", c->in_order ? "true" : "false",
            c->blocking ? "true" : "false");
    ana_json_u64_or_null(f, c->event);
    fputs(",\"wait\":[", f);
    for (unsigned i = 0; i < c->nwait; i++)
        fprintf(f, "%s%" PRIu64, i ? "," : "", c->wait[i]);
    fprintf(f, "],\"repeat\":%" PRIu32 ",\"last_seq\":%" PRIu64, vn->repeat, vn->last_seq);
    if (c->kind == ANA_CMD_KERNEL) {
        fprintf(f, ",\"kernel\":%" PRIu64 ",\"work_dim\":%u,\"global\":", c->kernel, c->work_dim);
        ana_json_dims(f, c->global, c->work_dim);
        fputs(",\"local\":", f);
        ana_json_dims(f, c->local, c->work_dim);
        fputs(",\"offset\":", f);
        ana_json_dims(f, c->goff, c->work_dim);
    }
    fprintf(f, ",\"bytes\":%" PRIu64 ",\"mem\":[", c->bytes);
    for (unsigned i = 0; i < c->nmem; i++) {
        const ana_memref *r = &c->mem[i];
        fprintf(f, "%s{\"object\":%" PRIu64 ",\"root\":%" PRIu64 ",\"name\":", i ? "," : "",
                r->object, r->root);
        ana_json_cstr(f, ana_model_label(m, r->object, l, sizeof l));
        fprintf(f, ",\"arg\":%d,\"access\":\"%s\",\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 ",\"whole\":%s,\"why\":",
                r->arg, ana_acc_name(r->access), r->lo, r->hi, r->whole ? "true" : "false");
        ana_json_cstr(f, r->why);
        putc('}', f);
    }
    fprintf(f, "],\"t_begin\":%" PRId64 ",\"t_end\":%" PRId64 ",\"device_time\":%s", c->t_begin,
            c->t_end, c->has_devtime ? "true" : "false");
    if (c->has_devtime)
        fprintf(f, ",\"dev_start\":%" PRIu64 ",\"dev_end\":%" PRIu64, c->dev_start, c->dev_end);
    putc('}', f);
}

static void ana_json_edge(FILE *f, const ana_model *m, const ana_view *v, const ana_vedge *x)
{
    const ana_edge *e = x->e;
    const ana_cmd *a = ana_model_command(m, v->nodes[x->from].cmd);
    const ana_cmd *b = ana_model_command(m, v->nodes[x->to].cmd);
    char l[64] = "", why[256];
    int data = e->kind <= ANA_EDGE_WAW;
    fprintf(f, "{\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"kind\":\"%s\",\"object\":", a->seq, b->seq,
            ana_edge_kind_name((ana_edge_kind)e->kind));
    ana_json_u64_or_null(f, e->object);
    fputs(",\"object_name\":", f);
    if (e->object)
        ana_json_cstr(f, ana_model_label(m, e->object, l, sizeof l));
    else
        fputs("null", f);
    if (data)
        fprintf(f, ",\"lo\":%" PRIu64 ",\"hi\":%" PRIu64, e->lo, e->hi);
    fprintf(f, ",\"whole\":%s,\"implied\":%s,\"carried\":%s,\"count\":%" PRIu32 ",\"reason\":",
            e->whole ? "true" : "false", e->implied ? "true" : "false", x->carried ? "true" : "false",
            x->count);
    switch (e->kind) {
    case ANA_EDGE_RAW: case ANA_EDGE_WAR: case ANA_EDGE_WAW:
        snprintf(why, sizeof why, "%s on %s bytes [%" PRIu64 ", %" PRIu64 ")%s%s",
                 ana_edge_kind_name((ana_edge_kind)e->kind), l, e->lo, e->hi,
                 e->whole ? ": whole object, " : "", e->whole ? (e->why ? e->why : "range unknown") : "");
        break;
    case ANA_EDGE_EVENT:
        snprintf(why, sizeof why, "waits for event %s", ana_model_label(m, e->object, l, sizeof l));
        break;
    case ANA_EDGE_ORDER:
        snprintf(why, sizeof why, "%s", b->kind == ANA_CMD_UNMAP || b->kind == ANA_CMD_SVM_UNMAP
                 ? "unmap of this map" : b->kind == ANA_CMD_MARKER || b->kind == ANA_CMD_BARRIER
                 ? "marker/barrier waits for the queue's earlier commands"
                 : a->kind == ANA_CMD_BARRIER ? "after a barrier" : "queue order (effects unknown)");
        break;
    case ANA_EDGE_SYNC:
        snprintf(why, sizeof why, "clFinish waits for it");
        break;
    default:
        snprintf(why, sizeof why, "issued by the host after it waited");
        break;
    }
    ana_json_cstr(f, why);
    putc('}', f);
}

static void ana_json_object(FILE *f, const ana_model *m, const ana_object *o)
{
    fprintf(f, "{\"id\":%" PRIu64 ",\"kind\":\"%s\",\"name\":", o->id,
            ana_obj_kind_name((ana_obj_kind)o->kind));
    ana_json_cstr(f, o->name);
    fputs(",\"create_seq\":", f);
    ana_json_u64_or_null(f, o->create_seq);
    fputs(",\"last_use_seq\":", f);
    ana_json_u64_or_null(f, o->last_use_seq);
    fputs(",\"release_seq\":", f);
    ana_json_u64_or_null(f, o->release_seq);
    fprintf(f, ",\"uses\":%" PRIu64, o->uses);
    if (o->context)
        fprintf(f, ",\"context\":%" PRIu64, o->context);
    if (o->parent)
        fprintf(f, ",\"parent\":%" PRIu64, o->parent);
    if (o->kind >= ANA_OBJ_BUFFER && o->kind <= ANA_OBJ_SVM)
        fprintf(f, ",\"size\":%" PRIu64 ",\"flags\":%" PRIu64, o->size, o->flags);
    if (o->kind == ANA_OBJ_SUBBUFFER)
        fprintf(f, ",\"origin\":%" PRIu64, o->origin);
    if (o->kind == ANA_OBJ_QUEUE)
        fprintf(f, ",\"properties\":%" PRIu64 ",\"in_order\":%s", o->props, o->props & 1 ? "false" : "true");
    if (o->kind == ANA_OBJ_PROGRAM) {
        const char *why = NULL;
        fprintf(f, ",\"source_bytes\":%" PRIu64 ",\"options\":", o->source_len);
        ana_json_cstr(f, o->options);
        fprintf(f, ",\"analyzed\":%s,\"why\":", ana_model_program(m, o->id, &why) ? "true" : "false");
        ana_json_cstr(f, why);
    }
    putc('}', f);
}

ana_status ana_graph_write_json(const ana_model *m, const ana_graph *g, const ana_graph_view *v,
                                FILE *f)
{
    ana_view vw;
    ana_status st = ana_view_build(m, g, v, 0, &vw);
    if (st != ANA_OK)
        return st;
    const ana_model_info *in = ana_model_get_info(m);
    fprintf(f, "{\"schema\":\"clrr-graph/1\",\"calls\":%" PRIu64 ",\"commands\":%zu,\"launches\":%" PRIu64 ",\"edges_total\":%zu,"
               "\"collapsed\":%s,\"range\":",
            in->calls, ana_model_command_count(m), in->launches, ana_graph_edge_count(g),
            v && v->collapse ? "true" : "false");
    if (v && (v->seq_lo || v->seq_hi != UINT64_MAX))
        fprintf(f, "[%" PRIu64 ",%" PRIu64 "]", v->seq_lo, v->seq_hi);   /* hi may be open: UINT64_MAX */
    else
        fputs("null", f);
    fputs(",\"nodes\":[", f);
    for (size_t i = 0; i < vw.nnodes; i++) {
        fputs(i ? ",\n" : "\n", f);
        ana_json_node(f, m, &vw.nodes[i]);
    }
    fputs("],\"edges\":[", f);
    for (size_t i = 0; i < vw.nedges; i++) {
        fputs(i ? ",\n" : "\n", f);
        ana_json_edge(f, m, &vw, &vw.edges[i]);
    }
    fputs("],\"objects\":[", f);
    for (size_t i = 0; i < ana_model_object_count(m); i++) {
        fputs(i ? ",\n" : "\n", f);
        ana_json_object(f, m, ana_model_object(m, i));
    }
    fputs("]}\n", f);
    ana_view_free(&vw);
    return ferror(f) ? ANA_ERR_IO : ANA_OK;
}
