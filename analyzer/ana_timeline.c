/* ana_timeline.c — the Chrome/Perfetto trace-event JSON of a trace:
 * host calls per recording thread (pid 1), device commands per queue (one
 * pid per device) from their device times brought onto the host clock,
 * and dependency edges as flow events.
 *
 * Clocks: device timestamps need not share the host's clock (PoCL's are
 * ~100 ms apart from CLOCK_MONOTONIC). Per device, the offset is the
 * smallest (device start - host call begin) over its timed commands, so
 * that no command starts before its enqueue call began; when that smallest
 * difference is already in [0, 1 s) the clocks are taken as the same. */
#include "analyzer/ana_graph_int.h"
#include "analyzer/ana_model_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ana_tdev {
    uint64_t device;
    int64_t offset;           /* device ns - offset = host ns */
    int have;
} ana_tdev;

typedef struct ana_tl {
    const ana_model *m;
    FILE *f;
    int64_t t0;
    ana_tdev *dev;
    size_t ndev;
    int first;                /* no event written yet */
} ana_tl;

static void ana_tl_sep(ana_tl *t)
{
    fputs(t->first ? "\n" : ",\n", t->f);
    t->first = 0;
}

static double ana_us(int64_t ns)
{
    return (double)ns / 1000.0;
}

#define ANA_TL_STR_MAX 160    /* bytes of a string argument shown */
#define ANA_TL_ARRAY_MAX 32   /* elements of an array argument shown */

/* Writes value @p v of a parameter of kind @p kind (tf_kind) as JSON:
 * handles as "#id" (null for NULL), blobs as {"blob_bytes": N}, small
 * binary data as {"bin_bytes": N}, long strings and arrays shortened. */
static void ana_tl_value(FILE *f, int kind, const tf_value *v, int depth)
{
    switch (v->type) {
    case TF_NIL: fputs("null", f); break;
    case TF_BOOL: fputs(v->v.b ? "true" : "false", f); break;
    case TF_INT: fprintf(f, "%" PRId64, v->v.i); break;
    case TF_UINT:
        if (kind == TF_KIND_HANDLE)
            v->v.u ? fprintf(f, "\"#%" PRIu64 "\"", v->v.u) : fputs("null", f);
        else
            fprintf(f, "%" PRIu64, v->v.u);
        break;
    case TF_F64:
        if (v->v.f == v->v.f && v->v.f - v->v.f == 0)
            fprintf(f, "%.17g", v->v.f);
        else
            fputs("null", f);
        break;
    case TF_STR: ana_json_strmax(f, v->v.str.ptr, v->v.str.len, ANA_TL_STR_MAX); break;
    case TF_BIN: fprintf(f, "{\"bin_bytes\":%" PRIu32 "}", v->v.str.len); break;
    case TF_BLOB: fprintf(f, "{\"blob_bytes\":%" PRIu64 "}", v->v.blob.size); break;
    case TF_ARRAY:
        if (depth > 4) {
            fputs("\"...\"", f);
            break;
        }
        putc('[', f);
        for (uint32_t i = 0; i < v->v.arr.n && i < ANA_TL_ARRAY_MAX; i++) {
            if (i)
                putc(',', f);
            ana_tl_value(f, kind, &v->v.arr.items[i], depth + 1);
        }
        if (v->v.arr.n > ANA_TL_ARRAY_MAX)
            fprintf(f, ",\"(%" PRIu32 " more)\"", v->v.arr.n - ANA_TL_ARRAY_MAX);
        putc(']', f);
        break;
    case TF_MAP:
        if (depth > 4) {
            fputs("\"...\"", f);
            break;
        }
        putc('{', f);
        for (uint32_t i = 0; i < v->v.map.n && i < ANA_TL_ARRAY_MAX; i++) {
            const tf_value *k = &v->v.map.keys[i];
            if (i)
                putc(',', f);
            if (k->type == TF_STR)
                ana_json_strmax(f, k->v.str.ptr, k->v.str.len, ANA_TL_STR_MAX);
            else
                fprintf(f, "\"%" PRIu32 "\"", i);
            putc(':', f);
            ana_tl_value(f, TF_KIND_VALUE, &v->v.map.vals[i], depth + 1);
        }
        putc('}', f);
        break;
    }
}

/* The call's inputs as {"name": value}, its outputs (when it returned and
 * wrote any) as "outs", and its return value as "ret". */
static void ana_tl_call_args(FILE *f, const tf_call *c)
{
    const tf_sig *sig = c->sig;
    if (!sig)
        return;
    fputs(",\"params\":{", f);
    int first = 1;
    for (uint32_t i = 0; i < sig->nparams; i++) {
        const tf_param *p = &sig->params[i];
        if (!(p->dir & TF_DIR_IN))
            continue;
        if (!first)
            putc(',', f);
        first = 0;
        ana_json_cstr(f, p->name);
        putc(':', f);
        ana_tl_value(f, p->kind, &c->args[i], 0);
    }
    putc('}', f);
    if (c->complete && c->outs) {
        first = 1;
        for (uint32_t i = 0; i < sig->nparams; i++) {
            const tf_param *p = &sig->params[i];
            if (!(p->dir & TF_DIR_OUT) || c->outs[i].type == TF_NIL)
                continue;
            fputs(first ? ",\"outs\":{" : ",", f);
            first = 0;
            ana_json_cstr(f, p->name);
            putc(':', f);
            ana_tl_value(f, p->kind, &c->outs[i], 0);
        }
        if (!first)
            putc('}', f);
    }
    if (c->complete && c->ret.type != TF_NIL) {
        fputs(",\"ret\":", f);
        int handle = sig->ret_type && strcmp(sig->ret_type, "cl_int") && !strncmp(sig->ret_type, "cl_", 3) &&
                     c->ret.type == TF_UINT;
        ana_tl_value(f, handle ? TF_KIND_HANDLE : TF_KIND_VALUE, &c->ret, 0);
    }
}

static size_t ana_tl_dev_index(const ana_tl *t, uint64_t device)
{
    for (size_t i = 0; i < t->ndev; i++)
        if (t->dev[i].device == device)
            return i;
    return 0;
}

/* Device pid of command @p c: 2 + its device's index. */
static int ana_tl_pid(const ana_tl *t, const ana_cmd *c)
{
    return 2 + (int)ana_tl_dev_index(t, c->device);
}

/* Host-clock [begin, end) of command @p c on its device track (its call's
 * host time when it has no device time). */
static void ana_tl_span(const ana_tl *t, const ana_cmd *c, int64_t *b, int64_t *e)
{
    if (c->has_devtime && !ana_cmd_kind_is_host((ana_cmd_kind)c->kind)) {
        const ana_tdev *d = &t->dev[ana_tl_dev_index(t, c->device)];
        *b = (int64_t)c->dev_start - d->offset;
        *e = (int64_t)c->dev_end - d->offset;
    } else {
        *b = c->t_begin;
        *e = c->t_end > c->t_begin ? c->t_end : c->t_begin;
    }
}

static ana_status ana_tl_devices(ana_tl *t)
{
    const ana_model *m = t->m;
    size_t n = ana_model_command_count(m);
    for (size_t i = 0; i < n; i++) {
        const ana_cmd *c = ana_model_command(m, i);
        if (ana_cmd_kind_is_host((ana_cmd_kind)c->kind))
            continue;
        size_t k;
        for (k = 0; k < t->ndev; k++)
            if (t->dev[k].device == c->device)
                break;
        if (k == t->ndev) {
            ana_tdev *d = realloc(t->dev, (t->ndev + 1) * sizeof *d);
            if (!d)
                return ANA_ERR_NOMEM;
            t->dev = d;
            memset(&d[k], 0, sizeof d[k]);
            d[k].device = c->device;
            t->ndev++;
        }
        if (c->has_devtime) {
            int64_t off = (int64_t)c->dev_start - c->t_begin;
            if (!t->dev[k].have || off < t->dev[k].offset)
                t->dev[k].offset = off;
            t->dev[k].have = 1;
        }
    }
    for (size_t k = 0; k < t->ndev; k++)
        if (t->dev[k].offset >= 0 && t->dev[k].offset < 1000000000)
            t->dev[k].offset = 0;
    return ANA_OK;
}

/* The recorded name of device @p id from the ENV record, or NULL. */
static const tf_value *ana_env_device_name(const tf_value *env, uint64_t id)
{
    const tf_value *plats = env ? tf_map_get(env, "platforms") : NULL;
    for (uint32_t p = 0; plats && plats->type == TF_ARRAY && p < plats->v.arr.n; p++) {
        const tf_value *devs = tf_map_get(&plats->v.arr.items[p], "devices");
        for (uint32_t d = 0; devs && devs->type == TF_ARRAY && d < devs->v.arr.n; d++) {
            uint64_t x;
            const tf_value *dv = &devs->v.arr.items[d];
            const tf_value *idv = tf_map_get(dv, "id"), *nm = tf_map_get(dv, "name");
            if (idv && tf_value_u64(idv, &x) && x == id && nm && nm->type == TF_STR)
                return nm;
        }
    }
    return NULL;
}

static void ana_tl_meta(ana_tl *t, int pid, int64_t tid, const char *what, const char *name,
                        const tf_value *extra)
{
    ana_tl_sep(t);
    fprintf(t->f, "{\"ph\":\"M\",\"pid\":%d,", pid);
    if (tid >= 0)
        fprintf(t->f, "\"tid\":%" PRId64 ",", tid);
    fprintf(t->f, "\"name\":\"%s\",\"args\":{\"name\":", what);
    if (extra) {
        size_t en = extra->v.str.len < 120 ? extra->v.str.len : 120;
        char buf[256];
        snprintf(buf, sizeof buf, "%s%.*s", name, (int)en, extra->v.str.ptr);
        ana_json_cstr(t->f, buf);
    } else {
        ana_json_cstr(t->f, name);
    }
    fputs("}}", t->f);
}

static void ana_tl_sort(ana_tl *t, int pid, int idx)
{
    ana_tl_sep(t);
    fprintf(t->f, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}",
            pid, idx);
}

static void ana_tl_device_meta(ana_tl *t, const tf_value *env)
{
    const ana_model *m = t->m;
    char buf[96];
    for (size_t k = 0; k < t->ndev; k++) {
        snprintf(buf, sizeof buf, "device #%" PRIu64 "%s", t->dev[k].device,
                 ana_env_device_name(env, t->dev[k].device) ? ": " : "");
        ana_tl_meta(t, 2 + (int)k, -1, "process_name", buf, ana_env_device_name(env, t->dev[k].device));
        ana_tl_sort(t, 2 + (int)k, 1 + (int)k);
    }
    for (size_t i = 0; i < ana_model_object_count(m); i++) {
        const ana_object *o = ana_model_object(m, i);
        if (o->kind != ANA_OBJ_QUEUE || !o->uses)
            continue;
        ana_cmd probe;
        memset(&probe, 0, sizeof probe);
        probe.device = o->parent;
        snprintf(buf, sizeof buf, "queue #%" PRIu64 " (%s)", o->id, o->props & 1 ? "out of order" : "in order");
        ana_tl_meta(t, ana_tl_pid(t, &probe), (int64_t)o->id, "thread_name", buf, NULL);
    }
}

static ana_status ana_tl_host(ana_tl *t, tf_reader *r, char *err, size_t err_cap)
{
    ana_idmap seen = { 0 };
    tf_item it;
    tf_status ts = tf_reader_rewind(r);
    ana_status st = ANA_OK;
    char buf[64];
    if (ts != TF_OK)
        goto bad;
    while ((ts = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type != TF_ITEM_CALL)
            continue;
        const tf_call *c = &it.u.call;
        uint32_t x;
        if (!ana_idmap_get(&seen, c->tid, &x)) {
            if (ana_idmap_put(&seen, c->tid, 1)) {
                st = ANA_ERR_NOMEM;
                goto out;
            }
            snprintf(buf, sizeof buf, "thread %" PRIu64, c->tid);
            ana_tl_meta(t, 1, (int64_t)c->tid, "thread_name", buf, NULL);
        }
        int64_t d = c->complete && c->t_end > c->t_begin ? c->t_end - c->t_begin : 0;
        ana_tl_sep(t);
        fputs("{\"ph\":\"X\",\"cat\":\"api\",\"name\":", t->f);
        ana_json_cstr(t->f, c->sig && c->sig->name ? c->sig->name : "?");
        fprintf(t->f, ",\"pid\":1,\"tid\":%" PRIu64 ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"seq\":%" PRIu64 "%s",
                c->tid, ana_us(c->t_begin - t->t0), d ? ana_us(d) : 0.001, c->seq,
                c->complete ? "" : ",\"incomplete\":true");
        ana_tl_call_args(t->f, c);
        fputs("}}", t->f);
    }
    if (ts == TF_END)
        goto out;
bad:
    snprintf(err, err_cap, "%s: %s", tf_strerror(ts), tf_reader_error(r));
    st = ANA_ERR_TRACE;
out:
    ana_idmap_free(&seen);
    return st;
}

/* The device's own timestamps of @p c (ns on the device's clock, as
 * CL_PROFILING_COMMAND_QUEUED/SUBMIT/START/END gave them; the ones it did
 * not report are left out), and each on the timeline's clock (µs). */
static void ana_tl_devtimes(ana_tl *t, const ana_cmd *c)
{
    if (!c->has_devtime)
        return;
    const ana_tdev *d = &t->dev[ana_tl_dev_index(t, c->device)];
    const char *names[4] = { "queued", "submit", "start", "end" };
    uint64_t v[4] = { c->dev_queued, c->dev_submit, c->dev_start, c->dev_end };
    int n = 0;
    fputs(",\"device_ns\":{", t->f);
    for (int i = 0; i < 4; i++)
        if (v[i])
            fprintf(t->f, "%s\"%s\":%" PRIu64, n++ ? "," : "", names[i], v[i]);
    fputs("},\"device_us\":{", t->f);
    n = 0;
    for (int i = 0; i < 4; i++)
        if (v[i])
            fprintf(t->f, "%s\"%s\":%.3f", n++ ? "," : "", names[i],
                    ana_us((int64_t)v[i] - d->offset - t->t0));
    putc('}', t->f);
}

static void ana_tl_dims(FILE *f, const char *name, const uint64_t *v, unsigned n)
{
    fprintf(f, ",\"%s\":[", name);
    for (unsigned i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu64, i ? "," : "", v[i]);
    putc(']', f);
}

/* A launch's NDRange ("global", "local": null when the driver chose it,
 * "offset") and its arguments as set at the launch: buffers and other
 * objects by id, scalars by value (typed as the kernel analysis says when
 * it ran), __local sizes, SVM addresses. */
static void ana_tl_launch(ana_tl *t, const ana_cmd *c)
{
    const ana_model *m = t->m;
    FILE *f = t->f;
    unsigned dim = c->work_dim >= 1 && c->work_dim <= 3 ? c->work_dim : 1;
    fprintf(f, ",\"work_dim\":%u", c->work_dim);
    ana_tl_dims(f, "global", c->global, dim);
    int chosen = 1;
    for (unsigned i = 0; i < dim; i++)
        chosen = chosen && !c->local[i];
    if (chosen)
        fputs(",\"local\":null", f);
    else
        ana_tl_dims(f, "local", c->local, dim);
    ana_tl_dims(f, "offset", c->goff, dim);
    const char *why = NULL;
    const ana_kernel *k = m->analyzed ? ana_model_kernel(m, c->kernel, &why) : NULL;
    ana_argval vals[ANA_MAX_KARGS];
    ana_launch l;
    memset(&l, 0, sizeof l);
    if (k && ana_model_launch(m, c, k, &l, vals, ANA_MAX_KARGS) != ANA_OK)
        k = NULL;
    fputs(",\"kernel_args\":[", f);
    for (unsigned i = 0; i < c->nargs; i++) {
        const ana_karg *a = &c->args[i];
        const ana_arg *ka = k && i < k->nargs ? &k->args[i] : NULL;
        fprintf(f, "%s{\"index\":%u", i ? "," : "", i);
        if (ka) {
            fputs(",\"name\":", f);
            ana_json_cstr(f, ka->name);
            fputs(",\"type\":", f);
            ana_json_cstr(f, ka->type);
        }
        switch (a->kind) {
        case ANA_KARG_MEM: {
            const ana_object *o = ana_model_find(m, a->value);
            char lab[64];
            fprintf(f, ",\"kind\":\"%s\",\"id\":%" PRIu64 ",\"label\":",
                    o ? ana_obj_kind_name((ana_obj_kind)o->kind) : "object", a->value);
            ana_json_cstr(f, ana_model_label(m, a->value, lab, sizeof lab));
            break;
        }
        case ANA_KARG_LOCAL: fprintf(f, ",\"kind\":\"local\",\"size\":%" PRIu32, a->size); break;
        case ANA_KARG_SVM: fprintf(f, ",\"kind\":\"svm\",\"address\":%" PRIu64, a->value); break;
        case ANA_KARG_BYTES:
            fprintf(f, ",\"kind\":\"scalar\",\"size\":%" PRIu32, a->size);
            if (ka && i < l.nargs && l.args[i].known)
                fprintf(f, ",\"value\":%" PRId64, l.args[i].value);
            else if (a->size <= 8)
                fprintf(f, ",\"value\":%" PRIu64,
                        a->size >= 8 ? a->value : a->value & ((UINT64_C(1) << (8 * a->size)) - 1));
            else
                fprintf(f, ",\"first8\":\"0x%016" PRIx64 "\"", a->value);
            break;
        default: fputs(",\"kind\":\"unset\"", f); break;
        }
        putc('}', f);
    }
    putc(']', f);
}

static void ana_tl_commands(ana_tl *t)
{
    const ana_model *m = t->m;
    char title[160];
    for (size_t i = 0; i < ana_model_command_count(m); i++) {
        const ana_cmd *c = ana_model_command(m, i);
        if (ana_cmd_kind_is_host((ana_cmd_kind)c->kind))
            continue;
        int64_t b, e;
        ana_tl_span(t, c, &b, &e);
        ana_tl_sep(t);
        fputs("{\"ph\":\"X\",\"cat\":", t->f);
        fprintf(t->f, "\"%s%s\",\"name\":", c->kind == ANA_CMD_KERNEL ? "kernel" : "transfer",
                c->has_devtime ? "" : ",no_device_time");
        ana_json_cstr(t->f, ana_cmd_title(m, c, title, sizeof title));
        fprintf(t->f, ",\"pid\":%d,\"tid\":%" PRIu64 ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"seq\":%" PRIu64
                      ",\"fn\":", ana_tl_pid(t, c), c->queue, ana_us(b - t->t0),
                e > b ? ana_us(e - b) : 0.001, c->seq);
        ana_json_cstr(t->f, c->fn);
        fprintf(t->f, ",\"bytes\":%" PRIu64 ",\"device_time\":%s", c->bytes,
                c->has_devtime ? "true" : "false");
        ana_tl_devtimes(t, c);
        if (c->kind == ANA_CMD_KERNEL)
            ana_tl_launch(t, c);
        fputs("}}", t->f);
    }
}

/* Track (pid, tid) and the middle of command @p c's slice. */
static void ana_tl_anchor(const ana_tl *t, const ana_cmd *c, int *pid, uint64_t *tid, double *ts)
{
    int64_t b, e;
    if (ana_cmd_kind_is_host((ana_cmd_kind)c->kind)) {
        *pid = 1;
        *tid = c->tid;
        b = c->t_begin;
        e = c->t_end > b ? c->t_end : b;
    } else {
        *pid = ana_tl_pid(t, c);
        *tid = c->queue;
        ana_tl_span(t, c, &b, &e);
    }
    *ts = ana_us(b - t->t0) + (e > b ? ana_us(e - b) / 2 : 0.0005);
}

static void ana_tl_flows(ana_tl *t, const ana_graph *g)
{
    const ana_model *m = t->m;
    uint64_t id = 0;
    for (size_t i = 0; i < ana_graph_edge_count(g); i++) {
        const ana_edge *e = ana_graph_edge(g, i);
        if (e->implied && e->kind != ANA_EDGE_RAW)
            continue;
        const ana_cmd *a = ana_model_command(m, e->from), *b = ana_model_command(m, e->to);
        int pa, pb;
        uint64_t ta, tb;
        double sa, sb;
        ana_tl_anchor(t, a, &pa, &ta, &sa);
        ana_tl_anchor(t, b, &pb, &tb, &sb);
        id++;
        ana_tl_sep(t);
        fprintf(t->f, "{\"ph\":\"s\",\"cat\":\"dep\",\"name\":\"%s\",\"id\":%" PRIu64 ",\"pid\":%d,\"tid\":%"
                      PRIu64 ",\"ts\":%.3f}", ana_edge_kind_name((ana_edge_kind)e->kind), id, pa, ta, sa);
        ana_tl_sep(t);
        fprintf(t->f, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dep\",\"name\":\"%s\",\"id\":%" PRIu64
                      ",\"pid\":%d,\"tid\":%" PRIu64 ",\"ts\":%.3f}",
                ana_edge_kind_name((ana_edge_kind)e->kind), id, pb, tb, sb);
    }
}

ana_status ana_timeline_write(tf_reader *r, const ana_model *m, const ana_graph *g, FILE *f,
                              char *err, size_t err_cap)
{
    char dummy[8];
    if (!err || !err_cap) {
        err = dummy;
        err_cap = sizeof dummy;
    }
    err[0] = '\0';
    if (!r || !m || !f)
        return ANA_ERR_ARG;
    ana_tl t;
    memset(&t, 0, sizeof t);
    t.m = m;
    t.f = f;
    t.first = 1;
    t.t0 = ana_model_get_info(m)->t_first;
    ana_status st = ana_tl_devices(&t);
    if (st != ANA_OK)
        goto out;
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"clrr timeline\","
          "\"device_clock_offsets_ns\":{", f);
    for (size_t k = 0; k < t.ndev; k++)
        fprintf(f, "%s\"%" PRIu64 "\":%" PRId64, k ? "," : "", t.dev[k].device, t.dev[k].offset);
    fputs("}},\"traceEvents\":[", f);
    const tf_value *env = tf_reader_env(r);
    const tf_value *cmd = env ? tf_map_get(env, "cmdline") : NULL;
    const tf_value *argv0 = cmd && cmd->type == TF_ARRAY && cmd->v.arr.n &&
                            cmd->v.arr.items[0].type == TF_STR ? &cmd->v.arr.items[0] : NULL;
    ana_tl_meta(&t, 1, -1, "process_name", argv0 ? "host: " : "host", argv0);
    ana_tl_sort(&t, 1, 0);
    ana_tl_device_meta(&t, env);
    if ((st = ana_tl_host(&t, r, err, err_cap)) != ANA_OK)
        goto out;
    ana_tl_commands(&t);
    if (g)
        ana_tl_flows(&t, g);
    fputs("\n]}\n", f);
    if (ferror(f))
        st = ANA_ERR_IO;
out:
    free(t.dev);
    return st;
}
