/* report_timeline.c — `clrr report`'s timeline and dependency graph: the
 * analyzer's own exports (ana_timeline_write, ana_graph_write_json with
 * the collapsed view), read back with jansson and cut to what the page
 * draws, so the report shows exactly what `clrr timeline` and `clrr graph
 * --collapse` write. */
#include "tools/clrr/report_int.h"

#include <stdlib.h>
#include <string.h>

/* Runs @p write into a memory stream and parses what it wrote. */
typedef ana_status (*cli_export_fn)(void *ctx, FILE *f, char *err, size_t err_cap);

static json_t *cli_export_json(cli_export_fn write, void *ctx, const char *what, char *err, size_t err_cap)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        snprintf(err, err_cap, "%s: out of memory", what);
        return NULL;
    }
    err[0] = '\0';
    ana_status st = write(ctx, f, err, err_cap);
    if (fclose(f) != 0 && st == ANA_OK)
        st = ANA_ERR_NOMEM;
    json_t *j = NULL;
    if (st == ANA_OK) {
        json_error_t je;
        j = json_loadb(buf, len, 0, &je);
        if (!j)
            snprintf(err, err_cap, "%s: the analyzer's JSON does not parse: %s (line %d)", what, je.text, je.line);
    } else if (!err[0]) {
        snprintf(err, err_cap, "%s: %s", what, ana_strerror(st));
    }
    free(buf);
    return j;
}

typedef struct cli_tl_ctx {
    tf_reader *r;
    const ana_model *m;
    const ana_graph *g;
} cli_tl_ctx;

static ana_status cli_tl_write(void *ctx, FILE *f, char *err, size_t err_cap)
{
    cli_tl_ctx *c = ctx;
    return ana_timeline_write(c->r, c->m, c->g, f, err, err_cap);
}

static ana_status cli_graph_write(void *ctx, FILE *f, char *err, size_t err_cap)
{
    (void)err;
    (void)err_cap;
    cli_tl_ctx *c = ctx;
    ana_graph_view v = { 0, UINT64_MAX, 1 };
    return ana_graph_write_json(c->m, c->g, &v, f);
}

/* Track index of (pid, tid), made on first sight. */
static size_t cli_track(json_t *tracks, json_t *index, json_int_t pid, json_int_t tid)
{
    char key[64];
    snprintf(key, sizeof key, "%lld/%lld", (long long)pid, (long long)tid);
    json_t *x = json_object_get(index, key);
    if (x)
        return (size_t)json_integer_value(x);
    size_t n = json_array_size(tracks);
    json_array_append_new(tracks, json_pack("{s:I,s:I,s:s,s:n,s:n}", "pid", pid, "tid", tid, "kind",
                                            pid == 1 ? "host" : "queue", "name", "process"));
    json_object_set_new(index, key, json_integer((json_int_t)n));
    return n;
}

json_t *cli_report_timeline(tf_reader *r, const ana_model *m, const ana_graph *g, char *err, size_t err_cap)
{
    cli_tl_ctx ctx = { r, m, g };
    json_t *tl = cli_export_json(cli_tl_write, &ctx, "timeline", err, err_cap);
    if (!tl)
        return NULL;
    json_t *ev = json_object_get(tl, "traceEvents");
    json_t *tracks = json_array(), *index = json_object(), *pnames = json_object();
    json_t *slices = json_array(), *args = json_array(), *names = json_array(), *nidx = json_object();
    json_t *flows = json_array(), *open = json_object();
    size_t left_slices = 0, left_flows = 0, device_slices = 0;
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        json_int_t pid = json_integer_value(json_object_get(e, "pid"));
        json_t *tidv = json_object_get(e, "tid");
        json_int_t tid = json_integer_value(tidv);
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!ph || !name)
            continue;
        if (!strcmp(ph, "M")) {
            json_t *nm = json_object_get(json_object_get(e, "args"), "name");
            if (!strcmp(name, "process_name") && nm) {
                char key[32];
                snprintf(key, sizeof key, "%lld", (long long)pid);
                json_object_set(pnames, key, nm);
            } else if (!strcmp(name, "thread_name") && nm && tidv) {
                size_t t = cli_track(tracks, index, pid, tid);
                json_object_set(json_array_get(tracks, t), "name", nm);
            }
            continue;
        }
        if (!strcmp(ph, "X")) {
            const char *cat = json_string_value(json_object_get(e, "cat"));
            int flags = !cat || !strcmp(cat, "api") ? 0 : !strncmp(cat, "kernel", 6) ? 1 : 2;
            if (cat && strstr(cat, "no_device_time"))
                flags |= 4;
            if (flags)
                device_slices++;
            if (json_array_size(slices) >= CLI_REPORT_MAX_SLICES) {
                left_slices++;
                continue;
            }
            json_t *ni = json_object_get(nidx, name);
            if (!ni) {
                ni = json_integer((json_int_t)json_array_size(names));
                json_object_set_new(nidx, name, ni);
                json_array_append_new(names, json_string(name));
            }
            size_t t = cli_track(tracks, index, pid, tid);
            json_t *a = json_object_get(e, "args");
            json_t *row = json_pack("[I,O,O,O,i,O]", (json_int_t)t, json_object_get(e, "ts"),
                                    json_object_get(e, "dur"), ni, flags, json_object_get(a, "seq"));
            if (!row)
                continue;
            json_array_append_new(slices, row);
            json_array_append(args, a ? a : json_null());
            continue;
        }
        if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
            char key[32];
            snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(e, "id")));
            size_t t = cli_track(tracks, index, pid, tid);
            json_t *ts = json_object_get(e, "ts");
            if (ph[0] == 's') {
                json_object_set_new(open, key, json_pack("[I,O]", (json_int_t)t, ts));
                continue;
            }
            json_t *s = json_object_get(open, key);
            if (!s)
                continue;
            if (json_array_size(flows) >= CLI_REPORT_MAX_FLOWS)
                left_flows++;
            else
                json_array_append_new(flows, json_pack("[O,O,I,O,s]", json_array_get(s, 0), json_array_get(s, 1),
                                                       (json_int_t)t, ts, name));
            json_object_del(open, key);
        }
    }
    /* each track gets its process' name */
    json_t *tk;
    json_array_foreach(tracks, i, tk) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(tk, "pid")));
        json_t *pn = json_object_get(pnames, key);
        json_object_set_new(tk, "process", pn ? json_incref(pn) : json_string("?"));
    }
    json_t *out = json_pack("{s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:I,s:O}", "tracks", tracks, "names", names, "slices",
                            slices, "args", args, "flows", flows, "device_slices", (json_int_t)device_slices,
                            "slices_left_out", (json_int_t)left_slices, "flows_left_out", (json_int_t)left_flows,
                            "device_clock_offsets_ns",
                            json_object_get(json_object_get(tl, "otherData"), "device_clock_offsets_ns"));
    json_decref(index);
    json_decref(pnames);
    json_decref(nidx);
    json_decref(open);
    json_decref(tl);
    if (!out)
        snprintf(err, err_cap, "timeline: out of memory");
    return out;
}

json_t *cli_report_graph(const ana_model *m, const ana_graph *g, char *err, size_t err_cap)
{
    cli_tl_ctx ctx = { NULL, m, g };
    json_t *j = cli_export_json(cli_graph_write, &ctx, "graph", err, err_cap);
    if (!j)
        return NULL;
    json_t *nodes = json_object_get(j, "nodes"), *edges = json_object_get(j, "edges");
    size_t n = json_array_size(nodes);
    json_object_del(j, "objects");   /* lifetimes: not drawn */
    if (n > CLI_REPORT_MAX_NODES) {
        json_int_t last = json_integer_value(json_object_get(json_array_get(nodes, CLI_REPORT_MAX_NODES - 1), "id"));
        while (json_array_size(nodes) > CLI_REPORT_MAX_NODES)
            json_array_remove(nodes, CLI_REPORT_MAX_NODES);
        for (size_t i = json_array_size(edges); i-- > 0;) {
            json_t *e = json_array_get(edges, i);
            if (json_integer_value(json_object_get(e, "from")) > last ||
                json_integer_value(json_object_get(e, "to")) > last)
                json_array_remove(edges, i);
        }
    }
    json_object_set_new(j, "nodes_left_out", json_integer((json_int_t)(n > CLI_REPORT_MAX_NODES ? n - CLI_REPORT_MAX_NODES : 0)));
    /* the node rows the page needs, not every member */
    json_t *x;
    size_t i;
    json_array_foreach(nodes, i, x) {
        json_object_del(x, "mem");
        json_object_del(x, "wait");
    }
    return j;
}
