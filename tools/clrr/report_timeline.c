/* report_timeline.c — `clrr report`'s timeline and dependency graph: the
 * analyzer's own exports (ana_timeline_write, read back event by event as
 * it writes them; ana_graph_write_json with the collapsed view), cut to
 * what the page draws, so the report shows exactly what `clrr timeline`
 * and `clrr graph --collapse` write. */
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
    uint64_t seq_hi;
} cli_tl_ctx;

static ana_status cli_graph_write(void *ctx, FILE *f, char *err, size_t err_cap)
{
    (void)err;
    (void)err_cap;
    cli_tl_ctx *c = ctx;
    ana_graph_view v = { 0, c->seq_hi, 1 };
    return ana_graph_write_json(c->m, c->g, &v, f);
}

/* The timeline, read as ana_timeline_write() writes it (one event per
 * line, strings escaped: no raw newline inside one), event by event, so
 * that memory stays within what the page gets. */
typedef struct cli_tl_sink {
    json_t *out;                  /* the result's members below, owned */
    json_t *tracks, *slices, *args, *names, *flows;
    json_t *index, *pnames, *nidx, *open;   /* lookups */
    size_t host, dev, left_host, left_dev, left_flows;
    char *line;
    size_t len, cap;
    int failed;                   /* out of memory, or a line that does not parse */
} cli_tl_sink;

/* Track index of (pid, tid), made on first sight. */
static size_t cli_track(cli_tl_sink *k, json_int_t pid, json_int_t tid)
{
    char key[64];
    snprintf(key, sizeof key, "%lld/%lld", (long long)pid, (long long)tid);
    json_t *x = json_object_get(k->index, key);
    if (x)
        return (size_t)json_integer_value(x);
    size_t n = json_array_size(k->tracks);
    json_array_append_new(k->tracks, json_pack("{s:I,s:I,s:s,s:n,s:n}", "pid", pid, "tid", tid, "kind",
                                               pid == 1 ? "host" : "queue", "name", "process"));
    json_object_set_new(k->index, key, json_integer((json_int_t)n));
    return n;
}

static void cli_tl_event(cli_tl_sink *k, json_t *e)
{
    const char *ph = json_string_value(json_object_get(e, "ph"));
    json_int_t pid = json_integer_value(json_object_get(e, "pid"));
    json_t *tidv = json_object_get(e, "tid");
    json_int_t tid = json_integer_value(tidv);
    const char *name = json_string_value(json_object_get(e, "name"));
    if (!ph || !name)
        return;
    if (!strcmp(ph, "M")) {
        json_t *nm = json_object_get(json_object_get(e, "args"), "name");
        if (!strcmp(name, "process_name") && nm) {
            char key[32];
            snprintf(key, sizeof key, "%lld", (long long)pid);
            json_object_set(k->pnames, key, nm);
        } else if (!strcmp(name, "thread_name") && nm && tidv) {
            json_object_set(json_array_get(k->tracks, cli_track(k, pid, tid)), "name", nm);
        }
        return;
    }
    if (!strcmp(ph, "X")) {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        int flags = !cat || !strcmp(cat, "api") ? 0 : !strncmp(cat, "kernel", 6) ? 1 : 2;
        if (cat && strstr(cat, "no_device_time"))
            flags |= 4;
        if (flags ? k->dev >= CLI_REPORT_MAX_DEVICE_SLICES : k->host >= CLI_REPORT_MAX_HOST_SLICES) {
            *(flags ? &k->left_dev : &k->left_host) += 1;
            return;
        }
        json_t *ni = json_object_get(k->nidx, name);
        if (!ni) {
            ni = json_integer((json_int_t)json_array_size(k->names));
            json_object_set_new(k->nidx, name, ni);
            json_array_append_new(k->names, json_string(name));
        }
        size_t t = cli_track(k, pid, tid);
        json_t *a = json_object_get(e, "args");
        json_t *row = json_pack("[I,O,O,O,i,O]", (json_int_t)t, json_object_get(e, "ts"), json_object_get(e, "dur"),
                                ni, flags, json_object_get(a, "seq"));
        if (!row)
            return;
        json_array_append_new(k->slices, row);
        json_array_append(k->args, a ? a : json_null());
        *(flags ? &k->dev : &k->host) += 1;
        return;
    }
    if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(e, "id")));
        size_t t = cli_track(k, pid, tid);
        json_t *ts = json_object_get(e, "ts");
        if (ph[0] == 's') {
            if (json_array_size(k->flows) < CLI_REPORT_MAX_FLOWS)
                json_object_set_new(k->open, key, json_pack("[I,O]", (json_int_t)t, ts));
            else
                k->left_flows++;
            return;
        }
        json_t *s = json_object_get(k->open, key);
        if (s)
            json_array_append_new(k->flows, json_pack("[O,O,I,O,s]", json_array_get(s, 0), json_array_get(s, 1),
                                                      (json_int_t)t, ts, name));
        json_object_del(k->open, key);
    }
}

/* One line of the timeline: the header (its otherData), an event (with
 * the separator after it), or the closing "]}". */
static void cli_tl_line(cli_tl_sink *k, char *l, size_t n)
{
    while (n && (l[n - 1] == ',' || l[n - 1] == '\r'))
        n--;
    if (!n || l[0] != '{')
        return;
    json_error_t je;
    if (!strncmp(l, "{\"ph\"", 5)) {
        json_t *e = json_loadb(l, n, 0, &je);
        if (!e) {
            k->failed = 1;
            return;
        }
        cli_tl_event(k, e);
        json_decref(e);
        return;
    }
    /* the header: {"displayTimeUnit":...,"otherData":{...},"traceEvents":[ */
    char *h = malloc(n + 3);
    if (!h) {
        k->failed = 1;
        return;
    }
    memcpy(h, l, n);
    memcpy(h + n, "]}", 3);
    json_t *j = json_loads(h, 0, &je);
    free(h);
    if (!j) {
        k->failed = 1;
        return;
    }
    json_object_set(k->out, "device_clock_offsets_ns",
                    json_object_get(json_object_get(j, "otherData"), "device_clock_offsets_ns"));
    json_decref(j);
}

static ssize_t cli_tl_cookie_write(void *c, const char *buf, size_t n)
{
    cli_tl_sink *k = c;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            cli_tl_line(k, k->line, k->len);
            k->len = 0;
            continue;
        }
        if (k->len + 1 >= k->cap) {
            size_t cap = k->cap ? 2 * k->cap : 4096;
            char *p = realloc(k->line, cap);
            if (!p) {
                k->failed = 1;
                return 0;
            }
            k->line = p;
            k->cap = cap;
        }
        k->line[k->len++] = buf[i];
    }
    return (ssize_t)n;
}

json_t *cli_report_timeline(tf_reader *r, const ana_model *m, const ana_graph *g, char *err, size_t err_cap)
{
    cli_tl_sink k;
    memset(&k, 0, sizeof k);
    k.out = json_object();
    k.tracks = json_array();
    k.slices = json_array();
    k.args = json_array();
    k.names = json_array();
    k.flows = json_array();
    k.index = json_object();
    k.pnames = json_object();
    k.nidx = json_object();
    k.open = json_object();
    cookie_io_functions_t io = { NULL, cli_tl_cookie_write, NULL, NULL };
    FILE *f = k.out && k.open ? fopencookie(&k, "w", io) : NULL;
    ana_status st = ANA_ERR_NOMEM;
    err[0] = '\0';
    if (f) {
        st = ana_timeline_write(r, m, g, f, err, err_cap);
        if (fclose(f) != 0 && st == ANA_OK)
            st = ANA_ERR_NOMEM;
        if (k.len)
            cli_tl_line(&k, k.line, k.len);
    }
    json_t *out = NULL;
    if (st != ANA_OK || k.failed) {
        if (!err[0])
            snprintf(err, err_cap, "timeline: %s", k.failed ? "cannot read the analyzer's timeline" : ana_strerror(st));
    } else {
        /* each track gets its process' name */
        size_t i;
        json_t *tk;
        json_array_foreach(k.tracks, i, tk) {
            char key[32];
            snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(tk, "pid")));
            json_t *pn = json_object_get(k.pnames, key);
            json_object_set_new(tk, "process", pn ? json_incref(pn) : json_string("?"));
        }
        out = k.out;
        k.out = NULL;
        if (json_object_set(out, "tracks", k.tracks) || json_object_set(out, "names", k.names) ||
            json_object_set(out, "slices", k.slices) || json_object_set(out, "args", k.args) ||
            json_object_set(out, "flows", k.flows) ||
            json_object_set_new(out, "device_slices", json_integer((json_int_t)(k.dev + k.left_dev))) ||
            json_object_set_new(out, "host_slices", json_integer((json_int_t)(k.host + k.left_host))) ||
            json_object_set_new(out, "slices_left_out", json_integer((json_int_t)(k.left_host + k.left_dev))) ||
            json_object_set_new(out, "flows_left_out", json_integer((json_int_t)k.left_flows))) {
            json_decref(out);
            out = NULL;
            snprintf(err, err_cap, "timeline: out of memory");
        }
    }
    json_decref(k.out);
    json_decref(k.tracks);
    json_decref(k.slices);
    json_decref(k.args);
    json_decref(k.names);
    json_decref(k.flows);
    json_decref(k.index);
    json_decref(k.pnames);
    json_decref(k.nidx);
    json_decref(k.open);
    free(k.line);
    return out;
}

json_t *cli_report_graph(const ana_model *m, const ana_graph *g, char *err, size_t err_cap)
{
    /* at most CLI_REPORT_GRAPH_COMMANDS commands go into the view (then
     * collapsed), so that a long trace's graph stays the size of a page */
    size_t nc = ana_model_command_count(m);
    cli_tl_ctx ctx = { NULL, m, g, UINT64_MAX };
    if (nc > CLI_REPORT_GRAPH_COMMANDS)
        ctx.seq_hi = ana_model_command(m, CLI_REPORT_GRAPH_COMMANDS - 1)->seq;
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
    json_object_set_new(j, "view_seq_hi", ctx.seq_hi == UINT64_MAX ? json_null() : json_integer((json_int_t)ctx.seq_hi));
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
