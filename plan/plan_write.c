/* plan_write.c — a plan as JSON (plan/PLAN.md): the header and
 * sections one per line group, each kernel and each transformation on one
 * line, so that plans diff well and stream in bounded memory. */
#include "plan/plan_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const plan_acc_names[] = {"none", "read", "write", "rw", "unknown"};

/* The names of the sections reserved for later versions (PLAN.md). */
const char *const plan_reserved[] = {"device_selection", NULL};
/* The sections after the transformations, in the order they are written. */
static const char *const plan_tail[] = {"device_selection", "splits", "fused_kernels", "specializations",
                                            "schedule", "coarsenings", "local_sizes", "staging", "unstaged",
                                            NULL};

static json_t *plan_u64(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *plan_hash_json(const uint8_t h[16])
{
    char hex[33];
    plan_hex(h, 16, hex);
    return json_string(hex);
}

static json_t *plan_effect_json(const plan_effect *e)
{
    return json_pack("{s:o,s:o,s:o,s:o,s:o}", "commands", plan_u64(e->commands), "kernels", plan_u64(e->kernels),
                     "bytes", plan_u64(e->bytes), "device_ns", plan_u64(e->device_ns), "timed", plan_u64(e->timed));
}

/* Writes @p v compactly (keys in insertion order); takes the reference. */
static int plan_put(FILE *f, json_t *v)
{
    if (!v)
        return -1;
    int rc = json_dumpf(v, f, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
    json_decref(v);
    return rc;
}

static json_t *plan_xform_json(const plan_xform *x)
{
    json_t *pat = json_loads(x->pattern, JSON_REJECT_DUPLICATES, NULL);
    if (!pat)
        return NULL;
    json_t *o = json_pack("{s:o,s:s,s:s,s:{s:o,s:s},s:o,s:o,s:o,s:o,s:s,s:s}", "id", plan_u64(x->id), "pass",
                          plan_pass_name((plan_pass)x->pass), "action", plan_action_name((plan_action)x->action), "call",
                          "seq", plan_u64(x->seq), "function", x->function, "occurrence", plan_u64(x->occurrence),
                          "pattern", pat, "effect", plan_effect_json(&x->effect), "holds",
                          x->holds_seq ? json_pack("{s:o}", "seq", plan_u64(x->holds_seq)) : json_null(), "reason",
                          x->reason, "verify", "readbacks");
    if (o && x->occurrences && json_object_set_new(o, "occurrences", plan_u64(x->occurrences))) {
        json_decref(o);
        return NULL;
    }
    if (o && x->repeat > 1 && json_object_set_new(o, "repeat", plan_u64(x->repeat))) {   /* 1.11 */
        json_decref(o);
        return NULL;
    }
    if (o && x->fused && json_object_set_new(o, "fused", plan_u64(x->fused))) {
        json_decref(o);
        return NULL;
    }
    if (o && x->split && json_object_set_new(o, "split", plan_u64(x->split))) {
        json_decref(o);
        return NULL;
    }
    if (o && x->spec && json_object_set_new(o, "specialization", plan_u64(x->spec))) {
        json_decref(o);
        return NULL;
    }
    if (o && x->local && json_object_set_new(o, "local_size", plan_u64(x->local))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *plan_dims_json(unsigned dim, const uint64_t *v)
{
    json_t *a = json_array();
    for (unsigned d = 0; a && d < dim; d++)
        if (json_array_append_new(a, plan_u64(v[d]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* A tuned launch shape (1.10): per device its local size and measurements. */
static json_t *plan_local_json(const plan_local *l)
{
    json_t *tuned = json_array();
    for (unsigned i = 0; tuned && i < l->ntuned; i++) {
        const plan_tuned *t = &l->tuned[i];
        int none = t->coarsen && !t->local[0] && !t->local[1] && !t->local[2];
        json_t *e = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o}", "device", t->device, "driver", t->driver, "local",
                              none ? json_null() : plan_dims_json(l->dim, t->local), "before_ns",
                              plan_u64(t->before_ns), "after_ns", plan_u64(t->after_ns), "noise_ns",
                              plan_u64(t->noise_ns), "reps", plan_u64(t->reps));
        if (e && t->coarsen && json_object_set_new(e, "coarsen", plan_u64(t->coarsen))) {
            json_decref(e);
            e = NULL;
        }
        if (json_array_append_new(tuned, e)) {
            json_decref(tuned);
            return NULL;
        }
    }
    if (!tuned)
        return NULL;
    return json_pack("{s:o,s:s,s:o,s:i,s:o,s:o,s:o}", "id", plan_u64(l->id), "kernel", l->kernel, "program",
                     plan_hash_json(l->program), "dim", (int)l->dim, "global", plan_dims_json(l->dim, l->global),
                     "recorded", l->has_recorded ? plan_dims_json(l->dim, l->recorded) : json_null(), "tuned", tuned);
}

/* A coarsened kernel (1.12). */
static json_t *plan_coarse_json(const plan_coarse *c)
{
    return json_pack("{s:o,s:s,s:s,s:o,s:o,s:i,s:i,s:s,s:s,s:s}", "id", plan_u64(c->id), "name", c->name, "kernel",
                     c->kernel, "program", plan_hash_json(c->program), "args", plan_u64(c->nargs), "dim", (int)c->dim,
                     "factor", (int)c->factor, "form", plan_coarse_form_name(c->form), "options", c->options,
                     "source", c->source);
}

/* A specialization (1.7): its constants as [INDEX, "BYTES"], the bytes in
 * lower-case hex, little-endian as the launches set them. */
static json_t *plan_spec_json(const plan_spec *z)
{
    json_t *cs = json_array();
    for (unsigned i = 0; cs && i < z->nconsts; i++) {
        char hex[17];
        for (unsigned b = 0; b < z->consts[i].size && b < 8; b++)
            snprintf(hex + 2 * b, 3, "%02x", z->consts[i].value[b]);
        if (json_array_append_new(cs, json_pack("[i,s]", (int)z->consts[i].index, hex))) {
            json_decref(cs);
            return NULL;
        }
    }
    if (!cs)
        return NULL;
    return json_pack("{s:o,s:s,s:s,s:o,s:o,s:o,s:s,s:s}", "id", plan_u64(z->id), "name", z->name, "kernel", z->kernel,
                     "program", plan_hash_json(z->program), "args", plan_u64(z->nargs), "constants", cs, "options",
                     z->options, "source", z->source);
}

/* A scheduled queue (1.8). */
static json_t *plan_sched_json(const plan_sched *s)
{
    return json_pack("{s:o,s:o,s:i,s:o,s:o,s:o,s:o,s:o,s:s}", "id", plan_u64(s->id), "queue", plan_u64(s->queue),
                     "lanes", (int)s->lanes, "commands", plan_u64(s->commands), "uploads", plan_u64(s->uploads),
                     "downloads", plan_u64(s->downloads), "recorded_ns", plan_u64(s->recorded_ns), "predicted_ns",
                     plan_u64(s->predicted_ns), "reason", s->reason);
}

static json_t *plan_stage_json(const plan_stage *s)
{
    return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:i}", "device", s->device, "driver", s->driver, "min_bytes",
                     plan_u64(s->min_bytes), "transfers", plan_u64(s->transfers), "bytes", plan_u64(s->bytes),
                     "before_ns", plan_u64(s->before_ns), "after_ns", plan_u64(s->after_ns), "noise_ns",
                     plan_u64(s->noise_ns), "reps", (int)s->reps);
}

static const char *const plan_split_arg_names[] = {"value", "mem", "local"};
static const char *const plan_merge_names[] = {"none", "concat", "diff"};

static json_t *plan_range_json(int on, uint64_t lo, uint64_t hi)
{
    return on ? json_pack("[o,o]", plan_u64(lo), plan_u64(hi)) : json_null();
}

static json_t *plan_split_json(const plan_split *z)
{
    json_t *args = json_array(), *merge = json_array(), *parts = json_array();
    int bad = !args || !merge || !parts;
    for (unsigned k = 0; !bad && k < z->nargs; k++)
        bad = json_array_append_new(args, json_string(plan_split_arg_names[z->args[k] <= 2 ? z->args[k] : 0])) ||
              json_array_append_new(merge, json_string(plan_merge_names[z->merge[k] <= 2 ? z->merge[k] : 0]));
    for (unsigned i = 0; !bad && i < z->nparts; i++) {
        const plan_split_part *pt = &z->parts[i];
        json_t *rg = json_array();
        bad = !rg;
        for (unsigned k = 0; !bad && k < z->nargs; k++) {
            const plan_split_region *r = &pt->regions[k];
            bad = json_array_append_new(rg, z->args[k] != PLAN_SPLIT_ARG_MEM ? json_null()
                                            : json_pack("{s:o,s:o}", "read", plan_range_json(r->read, r->rlo, r->rhi),
                                                        "write", plan_range_json(r->write, r->wlo, r->whi)));
        }
        bad = bad || json_array_append_new(parts, json_pack("{s:s,s:[o,o],s:o}", "device", pt->device, "groups",
                                                            plan_u64(pt->lo), plan_u64(pt->hi), "regions", rg));
    }
    if (bad) {
        json_decref(args);
        json_decref(merge);
        json_decref(parts);
        return NULL;
    }
    json_t *models = json_null();
    if (z->adaptive && z->models) {
        models = json_array();
        for (unsigned k = 0; models && k < z->nargs; k++) {
            const plan_split_model *m = &z->models[k];
            json_t *v = z->args[k] != PLAN_SPLIT_ARG_MEM ? json_null()
                        : json_pack("{s:o,s:o}", "read",
                                    m->read ? json_pack("[I,I,I,I]", (json_int_t)m->r[0], (json_int_t)m->r[1],
                                                        (json_int_t)m->r[2], (json_int_t)m->r[3])
                                            : json_null(),
                                    "write",
                                    m->write ? json_pack("[I,I,I,I]", (json_int_t)m->w[0], (json_int_t)m->w[1],
                                                         (json_int_t)m->w[2], (json_int_t)m->w[3])
                                             : json_null());
            if (json_array_append_new(models, v)) {
                json_decref(models);
                models = NULL;
            }
        }
    }
    if (!models) {
        json_decref(args);
        json_decref(merge);
        json_decref(parts);
        return NULL;
    }
    return json_pack("{s:o,s:s,s:o,s:s,s:i,s:o,s:o,s:o,s:o,s:o,s:s,s:s}", "id", plan_u64(z->id), "kernel", z->kernel,
                     "program", plan_hash_json(z->program), "name", z->name, "dim", (int)z->dim, "groups",
                     plan_u64(z->groups), "args", args, "merge", merge, "parts", parts, "models", models, "options",
                     z->options, "source", z->source);
}

plan_status plan_write(const plan_file *p, FILE *f)
{
    const plan_info *in = &p->info;
    char fp[17];
    snprintf(fp, sizeof fp, "%016llx", (unsigned long long)in->fingerprint);
    int rc = 0;
    fprintf(f, "{\n\"format\": \"%s\",\n\"version\": \"%u.%u\",\n", PLAN_FORMAT, in->major, in->minor);
    if (in->minor >= 9) {   /* 1.9: the features it uses (those it was read with, too) */
        unsigned req = in->requires | plan_features(p), n = 0;
        fputs("\"requires\": [", f);
        for (unsigned i = 0; i < PLAN_FEAT_COUNT; i++)
            if (req & 1u << i)
                fprintf(f, "%s\"%s\"", n++ ? ", " : "", plan_feature_name((plan_feature)i));
        fputs("],\n", f);
    }
    fputs("\"generator\": ", f);
    rc |= plan_put(f, json_string(in->generator));
    json_t *progs = json_array();
    for (unsigned i = 0; progs && i < in->nprograms; i++)
        if (json_array_append_new(progs, plan_hash_json(in->programs[i])))
            rc = -1;
    fputs(",\n\"trace\": ", f);
    rc |= plan_put(f, json_pack("{s:s,s:o,s:s,s:o}", "file", in->trace_file, "calls", plan_u64(in->trace_calls),
                               "fingerprint", fp, "programs", progs));
    /* a plan read and written back keeps its version's layout: the passes
     * it knew, and the sections it reserved (null) */
    unsigned npasses = in->minor == 0 ? PLAN_PASS_FUSE : in->minor < 4 ? PLAN_PASS_SPLIT
                       : in->minor < 7 ? PLAN_PASS_SPECIALIZE : in->minor < 8 ? PLAN_PASS_SCHEDULE
                       : in->minor < 10 ? PLAN_PASS_WGSIZE : PLAN_PASS_COUNT;
    fputs(",\n\"passes\": [", f);
    for (unsigned i = 0; i < npasses; i++) {
        const plan_pass_result *r = &p->passes[i];
        fputs(i ? ",\n  " : "\n  ", f);
        rc |= plan_put(f, json_pack("{s:s,s:b,s:o,s:o}", "name", plan_pass_name((plan_pass)i), "enabled", r->enabled,
                                   "transformations", plan_u64(r->transformations), "effect",
                                   plan_effect_json(&r->effect)));
    }
    fputs("\n],\n\"kernels\": [", f);
    for (size_t i = 0; i < p->nkf; i++) {
        const plan_kernel_facts *k = &p->kf[i];
        json_t *acc = json_array();
        for (unsigned a = 0; acc && a < k->nargs; a++)
            if (json_array_append_new(acc, json_string(plan_acc_names[k->access[a] <= PLAN_ACC_UNKNOWN ? k->access[a]
                                                                                                     : PLAN_ACC_UNKNOWN])))
                rc = -1;
        fputs(i ? ",\n  " : "\n  ", f);
        rc |= plan_put(f, json_pack("{s:s,s:o,s:o}", "name", k->name, "program", plan_hash_json(k->program), "args", acc));
    }
    fputs(p->nkf ? "\n],\n\"transformations\": [" : "],\n\"transformations\": [", f);
    for (size_t i = 0; i < p->nxf; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        rc |= plan_put(f, plan_xform_json(&p->xf[i]));
    }
    fputs(p->nxf ? "\n]" : "]", f);
    for (size_t t = 0; plan_tail[t]; t++) {
        if (!strcmp(plan_tail[t], "splits") && in->minor >= 4) {
            fputs(",\n\"splits\": [", f);
            for (size_t i = 0; i < p->nsp; i++) {
                fputs(i ? ",\n  " : "\n  ", f);
                rc |= plan_put(f, plan_split_json(&p->sp[i]));
            }
            fputs(p->nsp ? "\n]" : "]", f);
            continue;
        }
        if (!strcmp(plan_tail[t], "specializations") && in->minor >= 7) {
            fputs(",\n\"specializations\": [", f);
            for (size_t i = 0; i < p->nsz; i++) {
                fputs(i ? ",\n  " : "\n  ", f);
                rc |= plan_put(f, plan_spec_json(&p->sz[i]));
            }
            fputs(p->nsz ? "\n]" : "]", f);
            continue;
        }
        if (!strcmp(plan_tail[t], "schedule") && in->minor >= 8) {
            fputs(",\n\"schedule\": [", f);
            for (size_t i = 0; i < p->nsc; i++) {
                fputs(i ? ",\n  " : "\n  ", f);
                rc |= plan_put(f, plan_sched_json(&p->sc[i]));
            }
            fputs(p->nsc ? "\n]" : "]", f);
            continue;
        }
        if (!strcmp(plan_tail[t], "coarsenings")) {
            if (in->minor < 12 || !p->ncz)
                continue;   /* no such member before 1.12; left out when empty */
            fputs(",\n\"coarsenings\": [", f);
            for (size_t i = 0; i < p->ncz; i++) {
                fputs(i ? ",\n  " : "\n  ", f);
                rc |= plan_put(f, plan_coarse_json(&p->cz[i]));
            }
            fputs("\n]", f);
            continue;
        }
        if (!strcmp(plan_tail[t], "staging") || !strcmp(plan_tail[t], "unstaged")) {
            int kept = !strcmp(plan_tail[t], "staging");
            size_t n = kept ? p->nst : p->nun;
            if (in->minor < (kept ? 13u : 14u) || !n)
                continue;   /* no such member before 1.13 (1.14); left out when empty */
            fprintf(f, ",\n\"%s\": [", plan_tail[t]);
            for (size_t i = 0; i < n; i++) {
                fputs(i ? ",\n  " : "\n  ", f);
                rc |= plan_put(f, plan_stage_json(kept ? &p->st[i] : &p->un[i]));
            }
            fputs("\n]", f);
            continue;
        }
        if (!strcmp(plan_tail[t], "local_sizes")) {
            if (in->minor < 10)
                continue;   /* no such member before 1.10 */
            fputs(",\n\"local_sizes\": [", f);
            for (size_t i = 0; i < p->nlz; i++) {
                fputs(i ? ",\n  " : "\n  ", f);
                rc |= plan_put(f, plan_local_json(&p->lz[i]));
            }
            fputs(p->nlz ? "\n]" : "]", f);
            continue;
        }
        if (strcmp(plan_tail[t], "fused_kernels") || in->minor == 0) {
            fprintf(f, ",\n\"%s\": null", plan_tail[t]);
            continue;
        }
        fputs(",\n\"fused_kernels\": [", f);
        for (size_t i = 0; i < p->nfz; i++) {
            const plan_fused *z = &p->fz[i];
            json_t *prm = json_array();
            for (unsigned k = 0; prm && k < z->nparams; k++)
                if (json_array_append_new(prm, json_pack("[i,i]", (int)z->params[k][0], (int)z->params[k][1])))
                    rc = -1;
            fputs(i ? ",\n  " : "\n  ", f);
            json_t *o = json_pack("{s:o,s:s,s:s,s:s,s:o,s:b,s:o,s:s,s:s}", "id", plan_u64(z->id), "name", z->name,
                                  "producer", z->producer, "consumer", z->consumer, "program",
                                  plan_hash_json(z->program), "keep_store", z->keep_store, "params", prm, "options",
                                  z->options, "source", z->source);
            if (o && z->storing && json_object_set_new(o, "storing", plan_u64(z->storing)))
                rc = -1;
            if (o && z->launches > 2 && json_object_set_new(o, "launches", plan_u64(z->launches)))
                rc = -1;
            json_t *into = o && z->gather ? json_array() : NULL;
            for (unsigned k = 0; into && k + 1 < z->launches; k++)
                if (json_array_append_new(into, plan_u64(z->into[k])))
                    rc = -1;
            if (into && json_object_set_new(o, "into", into))
                rc = -1;
            if (o && z->horizontal && json_object_set_new(o, "horizontal", json_true()))
                rc = -1;
            rc |= plan_put(f, o);
        }
        fputs(p->nfz ? "\n]" : "]", f);
    }
    fputs("\n}\n", f);
    if (rc)
        return PLAN_ERR_NOMEM;
    return ferror(f) ? PLAN_ERR_IO : PLAN_OK;
}
