/* opt_split.c — the split pass (plan 1.4): a kernel launch runs as parts,
 * each a range of work-groups along one dimension on one device, in the
 * proportions the caller gives (opt_options.split). For each launch the
 * kernel analysis (analyzer/ana.h) gives, per part, the bytes of every
 * buffer argument the part may read and write; the parts' outputs are
 * concatenated when their write regions are disjoint, merged by comparison
 * with the previous contents otherwise. The rewriter (rewriter/rw.h,
 * rw_partition) makes the kernel variant whose id and size queries answer
 * for the whole launch. A launch is left alone, with the first reason kept
 * for the summary, when any of this cannot be established: no analysis,
 * an argument that is not a plain buffer, a scalar or __local memory
 * (images, samplers, pipes, SVM), atomics (a diff cannot merge them),
 * a region the analysis cannot bound within a buffer of known size,
 * memory the host shares (USE_HOST_PTR), or fewer work-groups than parts. */
#include "optimizer/opt_int.h"

#include "analyzer/ana.h"
#include "model/model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most work-groups along the split dimension whose regions are checked
 * one by one for models (PLAN.md, "Splits"): about 7 us each for aes's
 * kernel (four buffers, guarded table look-ups) on the 2-core build
 * machine, so up to 7 s for a distinct split of that kind. */
#define OPT_SPLIT_MODEL_GROUPS ((uint64_t)1 << 20)

#ifndef CL_MEM_USE_HOST_PTR
#define CL_MEM_USE_HOST_PTR (1 << 3)
#endif

typedef struct opt_split_dev {
    char spec[257];
    double weight;
} opt_split_dev;

static plan_status opt_split_devices(const char *list, opt_split_dev *devs, unsigned *ndevs, int *weighted, char *err,
                                     size_t cap)
{
    *weighted = 0;
    unsigned n = 0;
    const char *p = list ? list : "";
    if (!*p)
        return plan_seterr(err, cap, PLAN_ERR_ARG, "--split takes devices, 'SPEC[:WEIGHT],SPEC[:WEIGHT]...'");
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (n == PLAN_SPLIT_MAX_PARTS)
            return plan_seterr(err, cap, PLAN_ERR_ARG, "--split: at most %u parts", PLAN_SPLIT_MAX_PARTS);
        if (!len || len > 256)
            return plan_seterr(err, cap, PLAN_ERR_ARG, "--split: an empty or over-long device in '%.64s'", list);
        opt_split_dev *d = &devs[n];
        memcpy(d->spec, p, len);
        d->spec[len] = 0;
        d->weight = 1.0;
        char *colon = strrchr(d->spec, ':');
        if (colon) {
            char *end;
            errno = 0;
            double w = strtod(colon + 1, &end);
            if (colon[1] && !*end) {
                if (errno || !(w > 0) || w > 1e9)
                    return plan_seterr(err, cap, PLAN_ERR_ARG, "--split: weight '%s' is not a positive number",
                                      colon + 1);
                d->weight = w;
                *colon = 0;
                *weighted = 1;
            }
        }
        if (!d->spec[0])
            return plan_seterr(err, cap, PLAN_ERR_ARG, "--split: a weight without a device in '%.64s'", list);
        n++;
        p += len;
        if (*p == ',' && !*++p)
            return plan_seterr(err, cap, PLAN_ERR_ARG, "--split: a device list cannot end with ','");
    }
    *ndevs = n;
    return PLAN_OK;
}

/* A partition-ready kernel made once per program and kernel. */
typedef struct opt_part_made {
    uint64_t program;
    const char *kernel;
    char *source;             /* NULL: the rewriter refused */
} opt_part_made;

typedef struct opt_split_run {
    const ana_model *m;
    plan_file *p;
    opt_split_dev devs[PLAN_SPLIT_MAX_PARTS];
    unsigned ndevs;
    int weighted;             /* the list gave weights: no partitioner */
    const opt_options *o;
    const char *only;
    cdb_key *told;            /* launches the partitioner's decision was reported for */
    size_t ntold, captold;
    opt_part_made *made;
    size_t nmade, capmade;
    opt_split_role *roles;
    size_t nroles, caproles;
    char *note;
    size_t note_cap;
} opt_split_run;

static void opt_split_note(opt_split_run *x, const char *kernel, const char *why)
{
    if (x->note && x->note_cap && !x->note[0])
        snprintf(x->note, x->note_cap, "%s not split: %s", kernel, why);
}

/* The partition-ready source of @p kname in program @p prog (made once).
 * @return PLAN_OK with *src NULL when the rewriter refused. */
static plan_status opt_split_source(opt_split_run *x, const ana_object *prog, const char *kname, const char **src)
{
    *src = NULL;
    for (size_t i = 0; i < x->nmade; i++)
        if (x->made[i].program == prog->id && !strcmp(x->made[i].kernel, kname)) {
            *src = x->made[i].source;
            return PLAN_OK;
        }
    if (plan_grow((void **)&x->made, &x->capmade, x->nmade + 1, sizeof *x->made))
        return PLAN_ERR_NOMEM;
    opt_part_made *m = &x->made[x->nmade++];
    *m = (opt_part_made){prog->id, kname, NULL};
    char name[300], why[512] = "";
    snprintf(name, sizeof name, "__clrr_part_%s", kname);
    rw_part_req req = {prog->text, (size_t)prog->text_len, prog->options, kname, name};
    rw_part_out out;
    rw_status rs = opt_rw_partition(&req, &out, why, sizeof why);
    if (rs == RW_ERR_NOMEM)
        return PLAN_ERR_NOMEM;
    if (rs != RW_OK) {
        opt_split_note(x, kname, why);
        return PLAN_OK;
    }
    m->source = strdup(out.source);
    opt_rw_partition_free(&out);
    if (!m->source)
        return PLAN_ERR_NOMEM;
    *src = m->source;
    return PLAN_OK;
}

/* Work-groups of launch @p c along each dimension (work-items when the
 * driver chooses the local size: ana_kernel_region's convention). */
static void opt_split_groups(const ana_cmd *c, uint64_t g[3])
{
    for (unsigned d = 0; d < 3; d++) {
        if (d >= c->work_dim)
            g[d] = 1;
        else if (c->local[0])
            g[d] = c->local[d] ? (c->global[d] + c->local[d] - 1) / c->local[d] : c->global[d];
        else
            g[d] = c->global[d];
    }
}

/* Work-groups per part: shares in proportion to the weights, each at
 * least one, summing to @p groups (>= parts). */
static void opt_split_shares(const opt_split_run *x, uint64_t groups, uint64_t *lo, uint64_t *hi)
{
    double total = 0;
    for (unsigned i = 0; i < x->ndevs; i++)
        total += x->devs[i].weight;
    uint64_t n[PLAN_SPLIT_MAX_PARTS], sum = 0;
    for (unsigned i = 0; i < x->ndevs; i++) {
        double v = floor((double)groups * x->devs[i].weight / total + 0.5);
        n[i] = v < 1 ? 1 : (uint64_t)v;
        sum += n[i];
    }
    /* fix rounding: take from (or give to) the largest share */
    while (sum != groups) {
        unsigned big = 0;
        for (unsigned i = 1; i < x->ndevs; i++)
            if (n[i] > n[big])
                big = i;
        if (sum > groups) {
            uint64_t take = sum - groups < n[big] - 1 ? sum - groups : n[big] - 1;
            n[big] -= take;
            sum -= take;
        } else {
            n[big] += groups - sum;
            sum = groups;
        }
    }
    uint64_t at = 0;
    for (unsigned i = 0; i < x->ndevs; i++) {
        lo[i] = at;
        at += n[i];
        hi[i] = at;
    }
}

/* One argument's read or write model while it is fitted: the analysis's
 * region of every single work-group g, [L(g), H(g)), must be
 * [A + B*g, C + D*(g+1)) clamped to [0, size) with B, D >= 0 (so the region
 * of [lo, hi), the hull of its groups', is [A + B*lo, C + D*hi) clamped).
 * The candidate comes from the two middle groups; then every group is
 * checked against it, one by one, without storing the regions. */
typedef struct opt_split_fitting {
    int have;      /* a candidate (both middle groups touch the bytes) */
    int any;       /* some group touches them */
    int bad;       /* some group does not fit */
    int64_t m[4];
} opt_split_fitting;

/* A work-group's region of an argument clamped to [0, size): @return 1
 * with [*lo, *hi) when it is not empty. */
static int opt_split_clamp(const ana_region *r, uint64_t size, uint64_t *lo, uint64_t *hi)
{
    if (r->empty)
        return 0;
    *lo = r->whole ? 0 : r->lo > size ? size : r->lo;
    *hi = r->whole ? size : r->hi > size ? size : r->hi;
    return *lo < *hi;
}

static void opt_split_fit_start(opt_split_fitting *f, const ana_region *r1, const ana_region *r2, uint64_t g1,
                                uint64_t g2, uint64_t size)
{
    uint64_t l1, h1, l2, h2;
    memset(f, 0, sizeof *f);
    if (!opt_split_clamp(r1, size, &l1, &h1) || !opt_split_clamp(r2, size, &l2, &h2))
        return;
    int64_t b = g2 > g1 ? (int64_t)(l2 - l1) : 0, d = g2 > g1 ? (int64_t)(h2 - h1) : 0;
    if (b < 0 || d < 0)
        return;
    f->have = 1;
    f->m[0] = (int64_t)l1 - b * (int64_t)g1;
    f->m[1] = b;
    f->m[2] = (int64_t)h1 - d * (int64_t)(g1 + 1);
    f->m[3] = d;
}

static void opt_split_fit_check(opt_split_fitting *f, const ana_region *r, uint64_t g, uint64_t size)
{
    uint64_t lo, hi;
    if (!opt_split_clamp(r, size, &lo, &hi)) {
        f->bad |= f->have;   /* a model needs every group to touch the bytes */
        return;
    }
    f->any = 1;
    if (!f->have) {
        f->bad = 1;
        return;
    }
    int64_t l = f->m[0] + f->m[1] * (int64_t)g, h = f->m[2] + f->m[3] * (int64_t)(g + 1);
    uint64_t cl = l < 0 ? 0 : (uint64_t)l > size ? size : (uint64_t)l;
    uint64_t ch = h < 0 ? 0 : (uint64_t)h > size ? size : (uint64_t)h;
    if (cl != lo || ch != hi)
        f->bad = 1;
}

/* The models of every buffer argument of a launch split along @p dim
 * (PLAN.md, "Splits"): 1 when all hold (the proportions may then change
 * while the application runs). Every work-group is checked, one by one
 * (one pass over the kernel's accesses each), up to OPT_SPLIT_MODEL_GROUPS
 * of them; more: no models. */
static int opt_split_models(const ana_kernel *k, const ana_launch *l, const uint8_t *args, const uint8_t *merge,
                            const uint64_t g[3], unsigned dim, const ana_argval *vals, plan_split_model *md)
{
    uint64_t n = g[dim];
    for (unsigned a = 0; a < k->nargs; a++)
        memset(&md[a], 0, sizeof md[a]);
    if (n > OPT_SPLIT_MODEL_GROUPS || n < 2)
        return 0;
    size_t na = k->nargs;
    ana_region *rd = calloc(4 * na + 1, sizeof *rd);
    opt_split_fitting *fr = calloc(2 * na + 1, sizeof *fr);
    uint64_t g1 = n / 2, g2 = g1 + 1 < n ? g1 + 1 : g1;
    int ok = rd && fr;
    /* the candidates, from the two middle groups */
    for (unsigned pass = 0; ok && pass < 2; pass++) {
        uint64_t glo[3] = {0, 0, 0}, ghi[3] = {g[0], g[1], g[2]};
        glo[dim] = pass ? g2 : g1;
        ghi[dim] = glo[dim] + 1;
        ok = ana_kernel_regions(k, l, glo, ghi, rd + 2 * pass * na, rd + (2 * pass + 1) * na) == ANA_OK;
    }
    for (unsigned a = 0; ok && a < na; a++) {
        if (args[a] != PLAN_SPLIT_ARG_MEM)
            continue;
        opt_split_fit_start(&fr[a], &rd[a], &rd[2 * na + a], g1, g2, vals[a].size);
        opt_split_fit_start(&fr[na + a], &rd[na + a], &rd[3 * na + a], g1, g2, vals[a].size);
    }
    /* every group against them; stops at the first one that does not fit */
    for (uint64_t i = 0; ok && i < n; i++) {
        uint64_t glo[3] = {0, 0, 0}, ghi[3] = {g[0], g[1], g[2]};
        glo[dim] = i;
        ghi[dim] = i + 1;
        ok = ana_kernel_regions(k, l, glo, ghi, rd, rd + na) == ANA_OK;
        for (unsigned a = 0; ok && a < na; a++) {
            if (args[a] != PLAN_SPLIT_ARG_MEM)
                continue;
            opt_split_fit_check(&fr[a], &rd[a], i, vals[a].size);
            opt_split_fit_check(&fr[na + a], &rd[na + a], i, vals[a].size);
            ok = !fr[a].bad && !fr[na + a].bad;
        }
    }
    for (unsigned a = 0; ok && a < na; a++) {
        if (args[a] != PLAN_SPLIT_ARG_MEM)
            continue;
        if ((md[a].read = (uint8_t)fr[a].any))
            memcpy(md[a].r, fr[a].m, sizeof md[a].r);
        if ((md[a].write = (uint8_t)fr[na + a].any))
            memcpy(md[a].w, fr[na + a].m, sizeof md[a].w);
        /* concatenation needs ranges that never overlap, whatever the proportions */
        if (merge[a] == PLAN_MERGE_CONCAT)
            ok = md[a].write && md[a].w[1] == md[a].w[3] && md[a].w[2] <= md[a].w[0];
        if (ok && merge[a] != PLAN_MERGE_NONE && !md[a].write)
            ok = 0;
    }
    free(rd);
    free(fr);
    return ok;
}

static int opt_split_model(const opt_split_run *x, const ana_cmd *c, const ana_kernel *k, const ana_launch *l,
                           const opt_cost_launch *in, uint64_t *count, opt_partition_info *info, const char *nocost,
                           char *why, size_t cap);

/* With measured costs and a list without weights: the partitioner's
 * devices and shares for launch @p c. *decided 0 (use the weights) when
 * there are no costs or they do not cover the launch; else the parts in
 * @p lo, @p hi, @p pspec (*np of them; 0: the queue's device alone). */
static plan_status opt_split_costed(opt_split_run *x, const ana_cmd *c, const uint8_t program[16],
                                   const ana_kernel *k, const ana_launch *l, const uint8_t *args, const ana_argval *vals, const uint64_t g[3], unsigned dim,
                                   int diff, uint64_t *lo, uint64_t *hi, const char **pspec, unsigned *np,
                                   int *decided)
{
    *decided = 0;
    *np = 0;
    if (!x->o->costs || x->weighted)
        return PLAN_OK;
    const ana_object *ko = ana_model_find(x->m, c->kernel);
    const char *specs[PLAN_SPLIT_MAX_PARTS];
    uint64_t sizes[PLAN_SPLIT_MAX_ARGS];
    for (unsigned i = 0; i < x->ndevs; i++)
        specs[i] = x->devs[i].spec;
    for (unsigned a = 0; a < k->nargs; a++)
        sizes[a] = vals[a].size;
    opt_cost_launch in;
    memset(&in, 0, sizeof in);
    in.db = x->o->costs;
    in.specs = specs;
    in.ndevs = x->ndevs;
    in.primary = x->o->device ? x->o->device : x->devs[0].spec;
    memcpy(in.key.program, program, 16);
    in.key.kernel = ko->name;
    in.key.dim = c->work_dim;
    for (unsigned d = 0; d < 3; d++) {
        in.key.gsz[d] = d < c->work_dim ? c->global[d] : 1;
        in.key.lsz[d] = d < c->work_dim ? c->local[d] : 0;
    }
    in.k = k;
    in.l = l;
    in.args = args;
    in.sizes = sizes;
    memcpy(in.g, g, sizeof in.g);
    in.dim = dim;
    in.diff = diff;
    uint64_t count[PLAN_SPLIT_MAX_PARTS];
    opt_partition_info info;
    char why[320];
    int ok = opt_split_cost(&in, count, &info, why, sizeof why);
    char mwhy[400];
    if (!ok && x->o->model)   /* not measured: the model decides, where it can */
        ok = opt_split_model(x, c, k, l, &in, count, &info, why, mwhy, sizeof mwhy);
    /* tell the caller once per kind of launch */
    int told = 0;
    for (size_t i = 0; i < x->ntold && !told; i++)
        told = !memcmp(x->told[i].program, in.key.program, 16) && !strcmp(x->told[i].kernel, in.key.kernel) &&
               x->told[i].dim == in.key.dim && !memcmp(x->told[i].gsz, in.key.gsz, sizeof in.key.gsz) &&
               !memcmp(x->told[i].lsz, in.key.lsz, sizeof in.key.lsz);
    if (!told) {
        if (plan_grow((void **)&x->told, &x->captold, x->ntold + 1, sizeof *x->told))
            return PLAN_ERR_NOMEM;
        x->told[x->ntold++] = in.key;
        if (!ok) {
            memset(&info, 0, sizeof info);
            info.verdict = "even";
            info.why = why;
            for (unsigned i = 0; i < x->ndevs; i++)
                count[i] = 0;
        }
        info.kernel = ko->name;
        info.seq = c->seq;
        info.dim = dim;
        info.slices = g[dim];
        info.ndevs = x->ndevs;
        info.devices = specs;
        info.count = count;
        if (x->o->on_partition)
            x->o->on_partition(x->o->user, &info);
    }
    if (!ok)
        return PLAN_OK;
    *decided = 1;
    if (!strcmp(info.verdict, "model") && !strcmp(specs[info.best_single], in.primary)) {
        opt_split_note(x, ko->name, info.why);   /* the queue's device: run as recorded */
        return PLAN_OK;
    }
    if (!strcmp(info.verdict, "whole")) {
        char n[160];
        snprintf(n, sizeof n, "%.64s alone is predicted fastest (no split pays)", in.primary);
        opt_split_note(x, ko->name, n);
        return PLAN_OK;
    }
    uint64_t at = 0;
    for (unsigned i = 0; i < x->ndevs; i++)
        if (count[i]) {
            lo[*np] = at;
            at += count[i];
            hi[*np] = at;
            pspec[(*np)++] = x->devs[i].spec;
        }
    return PLAN_OK;
}

/* A launch the costs do not cover (@p nocost says why), with a
 * device-selection model (opt_options.model): all its work-groups on the
 * device the model picks among the split list's, from the launch's
 * features. @return 1 with @p count and @p info filled (verdict "model",
 * why in @p why), or 0 when the model cannot say (its device is not in the
 * list, no features). */
static int opt_split_model(const opt_split_run *x, const ana_cmd *c, const ana_kernel *k, const ana_launch *l,
                           const opt_cost_launch *in, uint64_t *count, opt_partition_info *info, const char *nocost,
                           char *why, size_t cap)
{
    ana_features f;
    if (ana_kernel_features(k, l, &f) != ANA_OK)
        return 0;
    model_launch_bytes b = {0, 0};
    for (unsigned a = 0; a < c->nmem; a++) {
        uint64_t len = c->mem[a].hi > c->mem[a].lo ? c->mem[a].hi - c->mem[a].lo : 0;
        if (c->mem[a].access & ANA_ACC_READ)
            b.in += len;
        if (c->mem[a].access & ANA_ACC_WRITE)
            b.out += len;
    }
    char vec[2048];
    float fx[MODEL_NFEAT];
    unsigned best;
    double p;
    if (model_features_format(&f, c->work_dim, in->key.lsz, &b, vec, sizeof vec) < 0 ||
        model_features_parse(vec, fx) < 0 || model_predict(x->o->model, fx, &best, &p) != MODEL_OK)
        return 0;
    const char *id = model_device(x->o->model, best);
    int pick = -1;
    for (unsigned i = 0; i < in->ndevs && pick < 0; i++) {
        char e[256];
        int idx = cdb_resolve(in->db, in->specs[i], e, sizeof e);
        if (idx >= 0 && !strcmp(cdb_device_at(in->db, (unsigned)idx)->identity, id))
            pick = (int)i;
    }
    if (pick < 0)
        return 0;
    memset(info, 0, sizeof *info);
    memset(count, 0, in->ndevs * sizeof *count);
    count[pick] = in->g[in->dim];
    info->verdict = "model";
    info->best_single = (unsigned)pick;
    snprintf(why, cap, "the model picks %.64s (probability %.2f): %.200s", in->specs[pick], p, nocost);
    info->why = why;
    return 1;
}

/* Plans launch @p c; *sid 0 when it is left alone (the reason noted). */
static plan_status opt_split_launch(opt_split_run *x, const ana_cmd *c, uint32_t *sid)
{
    *sid = 0;
    const ana_object *ko = ana_model_find(x->m, c->kernel);
    const char *kname = ko && ko->name ? ko->name : "?";
    if (x->only && strcmp(kname, x->only))
        return PLAN_OK;
    if (strcmp(c->fn, "clEnqueueNDRangeKernel"))
        return PLAN_OK;
    const char *why = NULL;
    const ana_kernel *k = ko ? ana_model_kernel(x->m, ko->id, &why) : NULL;
    const ana_object *prog = ko ? ana_model_find(x->m, ko->parent) : NULL;
    if (!k || k->unsupported || !prog || !prog->source) {
        opt_split_note(x, kname, k && k->unsupported ? k->unsupported : why ? why : "no kernel analysis");
        return PLAN_OK;
    }
    if (k->nargs != c->nargs || k->nargs > PLAN_SPLIT_MAX_ARGS) {
        opt_split_note(x, kname, "its arguments do not match the analysis");
        return PLAN_OK;
    }
    for (unsigned i = 0; i < k->naccesses; i++)
        if (k->accesses[i].is_atomic) {
            opt_split_note(x, kname, "it uses atomics (parts cannot be merged)");
            return PLAN_OK;
        }
    ana_argval vals[PLAN_SPLIT_MAX_ARGS];
    ana_launch l;
    if (ana_model_launch(x->m, c, k, &l, vals, PLAN_SPLIT_MAX_ARGS) != ANA_OK)
        return PLAN_OK;
    uint8_t args[PLAN_SPLIT_MAX_ARGS], merge[PLAN_SPLIT_MAX_ARGS];
    for (unsigned a = 0; a < k->nargs; a++) {
        const ana_arg *g = &k->args[a];
        const ana_karg *v = &c->args[a];
        merge[a] = PLAN_MERGE_NONE;
        if (g->kind == ANA_ARG_SCALAR && v->kind == ANA_KARG_BYTES) {
            args[a] = PLAN_SPLIT_ARG_VALUE;
        } else if (g->kind == ANA_ARG_LOCAL && v->kind == ANA_KARG_LOCAL) {
            args[a] = PLAN_SPLIT_ARG_LOCAL;
        } else if ((g->kind == ANA_ARG_GLOBAL || g->kind == ANA_ARG_CONSTANT) && v->kind == ANA_KARG_MEM) {
            const ana_object *mo = ana_model_find(x->m, v->value);
            if (!mo || (mo->kind != ANA_OBJ_BUFFER && mo->kind != ANA_OBJ_SUBBUFFER) || !vals[a].size) {
                opt_split_note(x, kname, "an argument is not a buffer of known size");
                return PLAN_OK;
            }
            const ana_object *root = mo->kind == ANA_OBJ_SUBBUFFER ? ana_model_find(x->m, mo->parent) : mo;
            if ((mo->flags | (root ? root->flags : 0)) & CL_MEM_USE_HOST_PTR) {
                opt_split_note(x, kname, "a buffer uses the host's memory (CL_MEM_USE_HOST_PTR)");
                return PLAN_OK;
            }
            args[a] = PLAN_SPLIT_ARG_MEM;
        } else if ((g->kind == ANA_ARG_GLOBAL || g->kind == ANA_ARG_CONSTANT) && v->kind == ANA_KARG_BYTES &&
                   g->access == ANA_ACC_NONE) {
            args[a] = PLAN_SPLIT_ARG_VALUE;   /* a NULL buffer the kernel never touches */
        } else {
            opt_split_note(x, kname, "an argument is an image, sampler, pipe or SVM pointer");
            return PLAN_OK;
        }
    }
    /* the dimension: the highest with enough groups where every written
     * buffer splits into disjoint pieces; else the one with the most groups */
    uint64_t g[3];
    opt_split_groups(c, g);
    int dim = -1, concat_dim = -1;
    for (int d = (int)c->work_dim - 1; d >= 0; d--) {
        if (g[d] < x->ndevs)
            continue;
        if (dim < 0 || g[d] > g[dim])
            dim = d;
        int all = 1;
        for (unsigned a = 0; a < k->nargs && all; a++) {
            ana_contiguity ct;
            if (args[a] == PLAN_SPLIT_ARG_MEM && (k->args[a].access & ANA_ACC_WRITE))
                all = ana_kernel_contiguity(k, &l, a, &ct) == ANA_OK && ct.dim[d];
        }
        if (all && concat_dim < 0)
            concat_dim = d;
    }
    if (concat_dim >= 0)
        dim = concat_dim;
    if (dim < 0) {
        opt_split_note(x, kname, "fewer work-groups than parts");
        return PLAN_OK;
    }
    uint64_t lo[PLAN_SPLIT_MAX_PARTS], hi[PLAN_SPLIT_MAX_PARTS];
    const char *pspec[PLAN_SPLIT_MAX_PARTS];
    unsigned np = 0;
    int decided = 0;
    tf_blobref h;   /* the program's hash: the costs' key and the plan's */
    tf_hash(prog->source, (size_t)prog->source_len, &h);
    plan_status st0 = opt_split_costed(x, c, h.hash, k, &l, args, vals, g, (unsigned)dim, dim != concat_dim, lo, hi, pspec,
                                      &np, &decided);
    if (st0 != PLAN_OK)
        return st0;
    if (decided && !np)
        return PLAN_OK;   /* the queue's device alone is predicted fastest */
    if (!decided) {
        opt_split_shares(x, g[dim], lo, hi);
        for (np = 0; np < x->ndevs; np++)
            pspec[np] = x->devs[np].spec;
    }
    static plan_split_region rg[PLAN_SPLIT_MAX_PARTS][PLAN_SPLIT_MAX_ARGS];
    plan_split_part parts[PLAN_SPLIT_MAX_PARTS];
    for (unsigned i = 0; i < np; i++) {
        uint64_t glo[3] = {0, 0, 0}, ghi[3] = {g[0], g[1], g[2]};
        glo[dim] = lo[i];
        ghi[dim] = hi[i];
        for (unsigned a = 0; a < k->nargs; a++) {
            plan_split_region *r = &rg[i][a];
            memset(r, 0, sizeof *r);
            if (args[a] != PLAN_SPLIT_ARG_MEM)
                continue;
            ana_region rd, wr;
            if (ana_kernel_region(k, &l, a, glo, ghi, &rd, &wr) != ANA_OK) {
                opt_split_note(x, kname, "the analysis gives no region for an argument");
                return PLAN_OK;
            }
            uint64_t size = vals[a].size;
            if (!rd.empty) {
                r->read = 1;
                r->rlo = rd.whole ? 0 : rd.lo;
                r->rhi = rd.whole ? size : rd.hi > size ? size : rd.hi;
            }
            if (!wr.empty) {
                r->write = 1;
                r->wlo = wr.whole ? 0 : wr.lo;
                r->whi = wr.whole ? size : wr.hi > size ? size : wr.hi;
            }
            if (r->read && r->rlo >= r->rhi)
                r->read = 0;
            if (r->write && r->wlo >= r->whi)
                r->write = 0;
        }
        parts[i] = (plan_split_part){pspec[i], lo[i], hi[i], rg[i]};
    }
    for (unsigned a = 0; a < k->nargs; a++) {
        int any = 0, overlap = 0;
        for (unsigned i = 0; i < np; i++) {
            const plan_split_region *r = &rg[i][a];
            any |= r->write;
            for (unsigned j = i + 1; r->write && j < np; j++)
                if (rg[j][a].write && r->wlo < rg[j][a].whi && rg[j][a].wlo < r->whi)
                    overlap = 1;
        }
        merge[a] = !any ? PLAN_MERGE_NONE : overlap ? PLAN_MERGE_DIFF : PLAN_MERGE_CONCAT;
    }
    const char *src = NULL;
    plan_status st = opt_split_source(x, prog, kname, &src);
    if (st != PLAN_OK || !src)
        return st;
    char name[300];
    snprintf(name, sizeof name, "__clrr_part_%s", kname);
    static plan_split_model md[PLAN_SPLIT_MAX_ARGS];
    int adaptive = opt_split_models(k, &l, args, merge, g, (unsigned)dim, vals, md);
    plan_split z = {0, kname, {0}, name, src, prog->options ? prog->options : "", (unsigned)dim, g[dim],
                   k->nargs, args, merge, np, parts, adaptive, adaptive ? md : NULL};
    memcpy(z.program, h.hash, 16);
    for (size_t i = 0; i < plan_split_count(x->p); i++)
        if (plan_split_same(plan_get_split(x->p, i), &z)) {
            *sid = plan_get_split(x->p, i)->id;
            return PLAN_OK;
        }
    return plan_add_split(x->p, &z, sid);
}

plan_status opt_split_plan(const ana_model *m, plan_file *p, const opt_options *o,
                          int (*taken)(void *user, uint64_t seq), void *user, opt_split_role **roles,
                          size_t *nroles, char *note, size_t note_cap, char *err, size_t err_cap)
{
    opt_split_run x;
    memset(&x, 0, sizeof x);
    x.m = m;
    x.p = p;
    x.only = o->split_kernel;
    x.note = note;
    x.note_cap = note_cap;
    *roles = NULL;
    *nroles = 0;
    x.o = o;
    plan_status st = opt_split_devices(o->split, x.devs, &x.ndevs, &x.weighted, err, err_cap);
    for (size_t i = 0; st == PLAN_OK && i < ana_model_command_count(m); i++) {
        const ana_cmd *c = ana_model_command(m, i);
        if (c->kind != ANA_CMD_KERNEL || taken(user, c->seq))
            continue;
        uint32_t sid = 0;
        st = opt_split_launch(&x, c, &sid);
        if (st == PLAN_OK && sid) {
            if (plan_grow((void **)&x.roles, &x.caproles, x.nroles + 1, sizeof *x.roles))
                st = PLAN_ERR_NOMEM;
            else
                x.roles[x.nroles++] = (opt_split_role){c->seq, sid};
        }
    }
    free(x.told);
    for (size_t i = 0; i < x.nmade; i++)
        free(x.made[i].source);
    free(x.made);
    if (st != PLAN_OK) {
        free(x.roles);
        if (st != PLAN_ERR_ARG)
            plan_seterr(err, err_cap, st, "split: %s", plan_strerror(st));
        return st;
    }
    *roles = x.roles;
    *nroles = x.nroles;
    return PLAN_OK;
}
