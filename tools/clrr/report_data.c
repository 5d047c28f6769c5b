/* report_data.c — `clrr report`'s summary, per-kernel table and failing
 * calls, from the trace model, its statistics and the kernel analysis. */
#include "tools/clrr/report_int.h"
#include "tools/clrr/names.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string of @p len bytes at @p s, at most @p max bytes of it (0:
 * all; then "..."): valid UTF-8 kept, every invalid byte U+FFFD. */
static json_t *cli_report_str(const char *s, size_t len, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t lim = max && len > max ? max : len;
    char *d = malloc(lim * 3 + 4);
    if (!d)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < lim;) {
        unsigned char c = p[i];
        size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        int ok = n && i + n <= lim && !(n == 1 && c == 0);
        for (size_t k = 1; ok && k < n; k++)
            ok = (p[i + k] & 0xc0) == 0x80;
        if (ok && n == 3)
            ok = !(c == 0xe0 && p[i + 1] < 0xa0) && !(c == 0xed && p[i + 1] >= 0xa0);
        if (ok && n == 4)
            ok = !(c == 0xf0 && p[i + 1] < 0x90) && !(c == 0xf4 && p[i + 1] >= 0x90);
        if (!ok) {
            memcpy(d + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
            continue;
        }
        memcpy(d + o, p + i, n);
        o += n;
        i += n;
    }
    if (lim < len) {
        memcpy(d + o, "...", 3);
        o += 3;
    }
    json_t *j = json_stringn(d, o);
    free(d);
    return j;
}

static json_t *cli_report_cstr(const char *s)
{
    return s ? cli_report_str(s, strlen(s), 0) : json_null();
}

json_t *cli_report_json_value(const tf_value *v, size_t max_str)
{
    switch (v->type) {
    case TF_NIL: return json_null();
    case TF_BOOL: return json_boolean(v->v.b);
    case TF_INT: return json_integer(v->v.i);
    case TF_UINT: return v->v.u <= INT64_MAX ? json_integer((json_int_t)v->v.u) : json_real((double)v->v.u);
    case TF_F64: return v->v.f == v->v.f && v->v.f - v->v.f == 0 ? json_real(v->v.f) : json_null();
    case TF_STR: return cli_report_str(v->v.str.ptr, v->v.str.len, max_str);
    case TF_BIN: return json_pack("{s:I}", "bin_bytes", (json_int_t)v->v.str.len);
    case TF_BLOB: return json_pack("{s:I}", "blob_bytes", (json_int_t)v->v.blob.size);
    case TF_ARRAY: {
        json_t *a = json_array();
        for (uint32_t i = 0; a && i < v->v.arr.n && i < 64; i++)
            json_array_append_new(a, cli_report_json_value(&v->v.arr.items[i], max_str));
        return a;
    }
    case TF_MAP: {
        json_t *o = json_object();
        for (uint32_t i = 0; o && i < v->v.map.n && i < 64; i++) {
            const tf_value *k = &v->v.map.keys[i];
            if (k->type != TF_STR)
                continue;
            json_t *ks = cli_report_str(k->v.str.ptr, k->v.str.len, 64);
            if (ks)
                json_object_set_new(o, json_string_value(ks), cli_report_json_value(&v->v.map.vals[i], max_str));
            json_decref(ks);
        }
        return o;
    }
    }
    return json_null();
}

static json_int_t cli_ji(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (json_int_t)v;
}

/* The devices the trace's ENV lists (platforms[].devices[]), with "used"
 * for those a queue of the trace was on. */
static json_t *cli_report_devices(tf_reader *r, const ana_model *m)
{
    json_t *out = json_array();
    const tf_value *env = tf_reader_env(r);
    const tf_value *plats = env ? tf_map_get(env, "platforms") : NULL;
    for (uint32_t p = 0; out && plats && plats->type == TF_ARRAY && p < plats->v.arr.n; p++) {
        const tf_value *pl = &plats->v.arr.items[p];
        const tf_value *pname = tf_map_get(pl, "name"), *devs = tf_map_get(pl, "devices");
        for (uint32_t d = 0; devs && devs->type == TF_ARRAY && d < devs->v.arr.n; d++) {
            const tf_value *dv = &devs->v.arr.items[d];
            json_t *o = json_object();
            json_object_set_new(o, "platform", pname ? cli_report_json_value(pname, 200) : json_null());
            static const char *const keys[] = { "id", "name", "vendor", "version", "driver_version",
                                                "compute_units", "global_mem", "max_wg_size" };
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
                const tf_value *x = tf_map_get(dv, keys[k]);
                if (x)
                    json_object_set_new(o, keys[k], cli_report_json_value(x, 200));
            }
            uint64_t id = 0, type = 0;
            const tf_value *tv = tf_map_get(dv, "type");
            if (tv && tf_value_u64(tv, &type))
                json_object_set_new(o, "type", json_string(cli_device_type_name(type)));
            const tf_value *idv = tf_map_get(dv, "id");
            int used = 0;
            if (idv && tf_value_u64(idv, &id))
                for (size_t i = 0; i < ana_model_object_count(m) && !used; i++) {
                    const ana_object *q = ana_model_object(m, i);
                    used = q->kind == ANA_OBJ_QUEUE && q->parent == id;
                }
            json_object_set_new(o, "used", json_boolean(used));
            json_array_append_new(out, o);
        }
    }
    return out;
}

json_t *cli_report_summary(const char *path, tf_reader *r, const ana_model *m, const ana_stats *s)
{
    const ana_model_info *in = ana_model_get_info(m);
    const tf_value *env = tf_reader_env(r);
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "file", cli_report_cstr(path));
    const tf_value *cmd = env ? tf_map_get(env, "cmdline") : NULL;
    json_object_set_new(o, "cmdline", cmd && cmd->type == TF_ARRAY ? cli_report_json_value(cmd, 400) : json_array());
    static const char *const keys[] = { "hostname", "recorder", "start_unix_ns", "host_clock", "device_timing" };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const tf_value *x = env ? tf_map_get(env, keys[k]) : NULL;
        if (x)
            json_object_set_new(o, keys[k], cli_report_json_value(x, 200));
    }
    json_object_set_new(o, "devices", cli_report_devices(r, m));
    uint64_t bytes = 0, host_ns = 0;
    json_t *xf = json_array();
    for (size_t i = 0; i < s->nxfers; i++) {
        const ana_xfer_stats *x = &s->xfers[i];
        bytes += x->bytes;
        json_array_append_new(xf, json_pack("{s:s,s:I,s:I,s:I,s:I}", "kind", x->kind, "count", cli_ji(x->count),
                                            "bytes", cli_ji(x->bytes), "timed", cli_ji(x->timed), "device_ns",
                                            cli_ji(x->dev_total_ns)));
    }
    json_t *fns = json_array();
    for (unsigned i = 0; i < in->nfns; i++) {
        const ana_fn_time *t = ana_model_fn_time(m, i);
        host_ns += t->total_ns;
        if (i < 12)
            json_array_append_new(fns, json_pack("{s:o,s:I,s:I,s:I}", "fn", cli_report_cstr(t->fn), "calls",
                                                 cli_ji(t->calls), "total_ns", cli_ji(t->total_ns), "max_ns",
                                                 cli_ji(t->max_ns)));
    }
    json_t *qs = json_array();
    for (size_t i = 0; i < s->nqueues; i++) {
        const ana_queue_stats *q = &s->queues[i];
        json_array_append_new(qs, json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "queue", cli_ji(q->queue),
                                            "device", cli_ji(q->device), "commands", cli_ji(q->commands), "timed",
                                            cli_ji(q->timed), "busy_ns", cli_ji(q->busy_ns), "span_ns",
                                            cli_ji(q->span_ns), "idle_ns", cli_ji(q->idle_ns), "gaps",
                                            cli_ji(q->gaps)));
    }
    json_object_set_new(o, "calls", json_integer(cli_ji(in->calls)));
    json_object_set_new(o, "failed", json_integer(cli_ji(in->failed)));
    json_object_set_new(o, "incomplete", json_integer(cli_ji(in->incomplete)));
    json_object_set_new(o, "threads", json_integer(cli_ji(in->threads)));
    json_object_set_new(o, "truncated", json_boolean(in->truncated));
    json_object_set_new(o, "duration_ns", json_integer(in->t_last - in->t_first));
    json_object_set_new(o, "commands", json_integer(cli_ji(s->commands)));
    json_object_set_new(o, "timed", json_integer(cli_ji(s->timed)));
    json_object_set_new(o, "launches", json_integer(cli_ji(s->launches)));
    json_object_set_new(o, "kernel_ns", json_integer(cli_ji(s->kernel_ns)));
    json_object_set_new(o, "transfer_ns", json_integer(cli_ji(s->xfer_ns)));
    json_object_set_new(o, "host_api_ns", json_integer(cli_ji(host_ns)));
    json_object_set_new(o, "bytes_moved", json_integer(cli_ji(bytes)));
    json_object_set_new(o, "transfers", xf);
    json_object_set_new(o, "host_api", fns);
    json_object_set_new(o, "queues", qs);
    return o;
}

/* ------------------------------------------------------------ kernels */

static json_t *cli_dims(const uint64_t *v, unsigned n)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < n && i < 3; i++)
        json_array_append_new(a, json_integer(cli_ji(v[i])));
    return a;
}

/* The launch shapes (global, local, offset) of kernel @p name with counts. */
static json_t *cli_report_shapes(const ana_model *m, const char *name, const ana_cmd **first)
{
    json_t *shapes = json_array();
    const ana_cmd *reps[8];
    json_t *objs[8];
    size_t n = 0, more = 0;
    char lab[128];
    *first = NULL;
    for (size_t i = 0; i < ana_model_command_count(m); i++) {
        const ana_cmd *c = ana_model_command(m, i);
        if (c->kind != ANA_CMD_KERNEL || strcmp(ana_model_label(m, c->kernel, lab, sizeof lab), name))
            continue;
        if (!*first)
            *first = c;
        size_t k;
        for (k = 0; k < n; k++)
            if (reps[k]->work_dim == c->work_dim && !memcmp(reps[k]->global, c->global, sizeof c->global) &&
                !memcmp(reps[k]->local, c->local, sizeof c->local) && !memcmp(reps[k]->goff, c->goff, sizeof c->goff))
                break;
        if (k < n) {
            json_object_set_new(objs[k], "launches",
                                json_integer(json_integer_value(json_object_get(objs[k], "launches")) + 1));
            continue;
        }
        if (n == 8) {
            more++;
            continue;
        }
        unsigned d = c->work_dim >= 1 && c->work_dim <= 3 ? c->work_dim : 1;
        int chosen = 1;
        for (unsigned x = 0; x < d; x++)
            chosen = chosen && !c->local[x];
        reps[n] = c;
        objs[n] = json_pack("{s:o,s:o,s:o,s:i}", "global", cli_dims(c->global, d), "local",
                            chosen ? json_null() : cli_dims(c->local, d), "offset", cli_dims(c->goff, d),
                            "launches", 1);
        json_array_append_new(shapes, objs[n]);
        n++;
    }
    if (more)
        json_array_append_new(shapes, json_pack("{s:I}", "other_launches", (json_int_t)more));
    return shapes;
}

/* The analysis' verdicts on kernel @p c->kernel, for its launch @p c. */
static json_t *cli_report_verdicts(const ana_model *m, const ana_cmd *c)
{
    static const char *const acc[] = { "none", "read", "write", "read-write" };
    static const char *const kinds[] = { "global", "constant", "local", "scalar", "image", "sampler", "pipe", "other" };
    const char *why = NULL;
    const ana_kernel *k = c ? ana_model_kernel(m, c->kernel, &why) : NULL;
    if (!k)
        return json_pack("{s:b,s:o}", "analyzed", 0, "why", cli_report_cstr(why ? why : "no launch"));
    if (k->unsupported)
        return json_pack("{s:b,s:o}", "analyzed", 0, "why", cli_report_cstr(k->unsupported));
    ana_argval *vals = calloc(k->nargs ? k->nargs : 1, sizeof *vals);
    ana_launch l;
    int have = vals && ana_model_launch(m, c, k, &l, vals, k->nargs) == ANA_OK;
    json_t *args = json_array();
    int split = 1, writes = 0;
    for (unsigned i = 0; i < k->nargs; i++) {
        const ana_arg *a = &k->args[i];
        json_t *o = json_pack("{s:I,s:o,s:o,s:s}", "index", (json_int_t)i, "name", cli_report_cstr(a->name),
                              "type", cli_report_cstr(a->type), "kind", kinds[a->kind < 8 ? a->kind : 7]);
        if (a->kind == ANA_ARG_SCALAR) {
            if (have && i < l.nargs && l.args[i].known)
                json_object_set_new(o, "value", json_integer(l.args[i].value));
            json_array_append_new(args, o);
            continue;
        }
        json_object_set_new(o, "access", json_string(acc[a->access & 3]));
        json_object_set_new(o, "offsets_known", json_boolean(a->analyzable));
        if ((a->kind == ANA_ARG_GLOBAL) && (a->access & ANA_ACC_WRITE)) {
            writes++;
            ana_contiguity ct;
            if (have && ana_kernel_contiguity(k, &l, i, &ct) == ANA_OK) {
                /* linear: any work-group range; else ranges along one dimension */
                json_t *dims = json_array();
                for (unsigned d = 0; d < l.work_dim && d < 3; d++)
                    if (ct.dim[d])
                        json_array_append_new(dims, json_integer(d));
                int any = ct.linear || json_array_size(dims) > 0;
                json_object_set_new(o, "writes_split", json_boolean(any));
                json_object_set_new(o, "split_linear", json_boolean(ct.linear));
                json_object_set_new(o, "split_dims", dims);
                if (!ct.linear)
                    json_object_set_new(o, "why_not_linear", cli_report_cstr(ct.reason));
                split = split && any;
            } else {
                split = 0;
            }
        }
        json_array_append_new(args, o);
    }
    free(vals);
    return json_pack("{s:b,s:o,s:b,s:I,s:I}", "analyzed", 1, "args", args, "splittable", split && writes,
                     "accesses", (json_int_t)k->naccesses, "loops", (json_int_t)k->nloops);
}

json_t *cli_report_kernels(const ana_model *m, const ana_stats *s)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < s->nkernels; i++) {
        const ana_kernel_stats *k = &s->kernels[i];
        const ana_cmd *first = NULL;
        json_t *shapes = cli_report_shapes(m, k->name, &first);
        json_t *o = json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "name", cli_report_cstr(k->name),
                              "launches", cli_ji(k->launches), "timed", cli_ji(k->timed), "device_ns",
                              cli_ji(k->dev_total_ns), "min_ns", cli_ji(k->dev_min_ns), "max_ns",
                              cli_ji(k->dev_max_ns), "work_items", cli_ji(k->work_items), "bytes_read",
                              cli_ji(k->bytes_read), "bytes_written", cli_ji(k->bytes_written), "whole_ranges",
                              cli_ji(k->whole_ranges), "shapes", shapes, "analysis", cli_report_verdicts(m, first));
        json_array_append_new(a, o);
    }
    return a;
}

/* ------------------------------------------------------------ errors */

/* As the model counts failures (ana_model.c): a cl_int return that is not
 * CL_SUCCESS, else an errcode_ret that is not, else a NULL handle.
 * @return 1 failed (*code the error, 0 when only the handle says so). */
static int cli_call_failed(const tf_call *c, int64_t *code)
{
    const char *rt = c->sig->ret_type ? c->sig->ret_type : "";
    *code = 0;
    if (!strcmp(rt, "cl_int"))
        return !tf_value_i64(&c->ret, code) || *code != 0;
    for (uint32_t i = 0; c->outs && i < c->sig->nparams; i++)
        if (!strcmp(c->sig->params[i].name, "errcode_ret") && c->outs[i].type != TF_NIL)
            return !tf_value_i64(&c->outs[i], code) || *code != 0;
    if (!strcmp(rt, "void"))
        return 0;
    uint64_t u;
    return c->ret.type == TF_BOOL || !tf_value_u64(&c->ret, &u) || u == 0;
}

json_t *cli_report_errors(tf_reader *r, char *err, size_t err_cap)
{
    json_t *list = json_array(), *byfn = json_object();
    uint64_t total = 0;
    tf_item it;
    tf_status ts = tf_reader_rewind(r);
    while (ts == TF_OK && (ts = tf_reader_next(r, &it)) == TF_OK) {
        const tf_call *c = &it.u.call;
        int64_t code;
        if (it.type != TF_ITEM_CALL || !c->sig || !c->complete || !cli_call_failed(c, &code))
            continue;
        total++;
        const char *fn = c->sig->name ? c->sig->name : "?";
        json_t *n = json_object_get(byfn, fn);
        json_object_set_new(byfn, fn, json_integer(n ? json_integer_value(n) + 1 : 1));
        if (json_array_size(list) < CLI_REPORT_MAX_ERRORS) {
            const char *en = code ? cli_error_name(code) : NULL;
            json_array_append_new(list, json_pack("{s:I,s:I,s:o,s:I,s:o}", "seq", cli_ji(c->seq), "tid",
                                                  cli_ji(c->tid), "fn", cli_report_cstr(fn), "code",
                                                  (json_int_t)code, "error",
                                                  en ? json_string(en) : code ? json_null() : json_string("NULL returned")));
        }
    }
    if (ts != TF_END) {
        snprintf(err, err_cap, "%s: %s", tf_strerror(ts), tf_reader_error(r));
        json_decref(list);
        json_decref(byfn);
        return NULL;
    }
    return json_pack("{s:I,s:o,s:o}", "total", cli_ji(total), "calls", list, "by_function", byfn);
}
