/* opt_coarsen.c — the coarsening half of the wgsize pass (`clrr optimize
 * --tune`, plan 1.12): for a launch shape that kept its local size, the
 * rewriter's coarsened kernels (rewriter/rw.h rw_coarsen: each work-item
 * does 2, 4 or 8 work-items along a dimension) are run on the shape's
 * first launch with its exact recorded inputs (the caller's hooks, as for
 * local sizes); those that leave every memory argument bit-identical are
 * timed alternately with the recorded launch, and the fastest that wins
 * beyond the measured noise becomes a coarsen transformation of the
 * shape, with the device's measurements. optimizer/README.md,
 * "Coarsening". */
#include "optimizer/opt_int.h"

#include "analyzer/ana.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct opt_co_prog {
    uint8_t hash[16];
    const char *source;       /* the model's text (ana_object.text); hash: of its recorded source */
    size_t len;
    const char *options;
} opt_co_prog;

struct opt_co_progs {
    tf_reader *r;
    ana_model *m;
    opt_co_prog *v;
    size_t n;
};

opt_co_progs *opt_co_progs_open(const char *path, size_t max_memory, char *err, size_t err_cap)
{
    opt_co_progs *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, err_cap, "out of memory");
        return NULL;
    }
    if (plan_open_trace(path, max_memory, &g->r, err, err_cap) != PLAN_OK) {
        free(g);
        return NULL;
    }
    char aerr[512] = "";
    if (ana_model_build(g->r, &g->m, aerr, sizeof aerr) != ANA_OK) {
        snprintf(err, err_cap, "%s", aerr[0] ? aerr : "the trace cannot be modelled");
        opt_co_progs_close(g);
        return NULL;
    }
    size_t n = ana_model_object_count(g->m);
    g->v = calloc(n ? n : 1, sizeof *g->v);
    if (!g->v) {
        snprintf(err, err_cap, "out of memory");
        opt_co_progs_close(g);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const ana_object *o = ana_model_object(g->m, i);
        if (!o || o->kind != ANA_OBJ_PROGRAM || !o->source)
            continue;
        tf_blobref h;
        tf_hash(o->source, (size_t)o->source_len, &h);
        opt_co_prog *q = &g->v[g->n++];
        memcpy(q->hash, h.hash, 16);
        q->source = o->text;   /* headers inlined: the coarsened program builds anywhere */
        q->len = (size_t)o->text_len;
        q->options = o->options ? o->options : "";
    }
    return g;
}

void opt_co_progs_close(opt_co_progs *g)
{
    if (!g)
        return;
    ana_model_free(g->m);
    tf_reader_close(g->r);
    free(g->v);
    free(g);
}

static const opt_co_prog *opt_co_prog_of(const opt_co_progs *g, const uint8_t program[16])
{
    for (size_t i = 0; g && i < g->n; i++)
        if (!memcmp(g->v[i].hash, program, 16))
            return &g->v[i];
    return NULL;
}

/* The forms' names (the plan's: this process does not link the rewriter). */
static const char *opt_co_form(unsigned form)
{
    const char *n = plan_coarse_form_name(form);
    return n ? n : "?";
}

static int opt_co_grouped(unsigned form)
{
    return form == RW_COARSEN_GROUP_BLOCKED || form == RW_COARSEN_GROUP_STRIDED;
}

static double opt_co_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void opt_co_say(const opt_tune *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void opt_co_say(const opt_tune *t, const char *fmt, ...)
{
    if (!t->on_line)
        return;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    t->on_line(t->user, line);
}

static int opt_co_dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and quartiles of candidate @p i (0 or 1) of ns[r * 2 + i]. */
static int opt_co_stats(const int64_t *ns, unsigned reps, unsigned i, double *med, double *q1, double *q3)
{
    double v[OPT_VERIFY_MAX_REPS];
    for (unsigned r = 0; r < reps; r++) {
        if (ns[r * 2 + i] < 0)
            return 0;
        v[r] = (double)ns[r * 2 + i];
    }
    qsort(v, reps, sizeof *v, opt_co_dbl_cmp);
    *med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
    *q1 = v[reps / 4];
    *q3 = v[(3 * reps) / 4];
    return 1;
}

/* A candidate: dimension, factor, form; its source once generated. */
typedef struct opt_co_try {
    unsigned dim, factor, form;
    rw_coarsen_out out;
    char name[48];
    int same;                 /* outputs bit-identical */
    double med, q1, q3;
} opt_co_try;

#define OPT_CO_MAX 48u

static void opt_co_add(opt_co_try *v, unsigned *n, const uint64_t *global, unsigned d, unsigned f, unsigned form)
{
    if (!global[d] || global[d] % f || global[d] / f < 1 || *n == OPT_CO_MAX)
        return;
    memset(&v[*n], 0, sizeof v[*n]);
    v[*n].dim = d;
    v[*n].factor = f;
    v[*n].form = form;
    (*n)++;
}

/* The candidates of mode @p mode for a launch of @p dim dimensions over
 * @p global: rapid dimension 0, factors 2 and 4 blocked and 4 vector;
 * normal dimension 0, 2, 4 and 8 blocked and strided, 4, 8 and 16 vector;
 * exhaustive every dimension (vector: dimension 0 only). Only factors
 * dividing the global size. --tune-force: its one factor and form along
 * dimension 0 (OPT_TUNE_FORCE_VECTOR in force_factor: the vector form; the
 * blocked and strided forms otherwise, the blocked kept where its outputs
 * are the same: the choice does not depend on the timings). Then, for a
 * launch with a local size, the group forms with the same factors and
 * dimensions where the factor divides the local size (opt_co_shape tries
 * them only when the rewriter refused every plain form). */
static unsigned opt_co_plain(const opt_tune *t, unsigned dim, const uint64_t *global, opt_co_try *v);
static unsigned opt_co_cands(const opt_tune *t, const opt_wg_limits *L, opt_co_try *v)
{
    unsigned n = opt_co_plain(t, L->dim, L->global, v), np = n;
    if (!L->has_local)
        return n;
    for (unsigned i = 0; i < np && n < OPT_CO_MAX; i++) {
        unsigned d = v[i].dim, f = v[i].factor;
        if (v[i].form == RW_COARSEN_VECTOR || !L->local[d] || L->local[d] % f)
            continue;
        for (uint64_t k = 0; k < L->dim; k++)
            if (!L->local[k] || L->global[k] % L->local[k])
                goto next;   /* non-uniform work-groups */
        opt_co_add(v, &n, L->global, d, f, v[i].form == RW_COARSEN_STRIDED ? RW_COARSEN_GROUP_STRIDED
                                                                          : RW_COARSEN_GROUP_BLOCKED);
    next:;
    }
    return n;
}

static unsigned opt_co_plain(const opt_tune *t, unsigned dim, const uint64_t *global, opt_co_try *v)
{
    static const unsigned fs[] = {2, 4, 8}, vfs[] = {4, 8, 16};
    unsigned n = 0, dims = t->mode == OPT_TUNE_EXHAUSTIVE ? dim : 1;
    unsigned ff = t->force_factor & ~OPT_TUNE_FORCE_VECTOR;
    int fvec = (t->force_factor & OPT_TUNE_FORCE_VECTOR) != 0;
    if (t->force_factor) {
        if (fvec)
            opt_co_add(v, &n, global, 0, ff, RW_COARSEN_VECTOR);
        else
            for (unsigned form = 0; form < 2; form++)
                opt_co_add(v, &n, global, 0, ff, form);
        return n;
    }
    for (unsigned d = 0; d < dims; d++)
        for (unsigned form = 0; form < (t->mode == OPT_TUNE_RAPID ? 1u : 2u); form++)
            for (unsigned k = 0; k < 3; k++)
                if (t->mode != OPT_TUNE_RAPID || fs[k] != 8)
                    opt_co_add(v, &n, global, d, fs[k], form);
    for (unsigned k = 0; k < (t->mode == OPT_TUNE_RAPID ? 1u : 3u); k++)
        opt_co_add(v, &n, global, 0, vfs[k], RW_COARSEN_VECTOR);
    return n;
}

/* The local size of a coarsened launch: the recorded one with dimension
 * D's halved until it divides the coarsened global size (the others kept:
 * the kernel may ask for them), or none when the recording had none; a
 * group form's: the recorded one with D's divided by the factor. */
static void opt_co_local(const opt_wg_limits *L, unsigned d, unsigned f, unsigned form, opt_coarse_cand *c)
{
    c->has_local = L->has_local;
    memset(c->local, 0, sizeof c->local);
    if (!L->has_local)
        return;
    for (unsigned k = 0; k < 3; k++)
        c->local[k] = k < L->dim ? L->local[k] : 1;
    if (opt_co_grouped(form)) {
        c->local[d] /= f;
        return;
    }
    uint64_t g = L->global[d] / f;
    while (c->local[d] > 1 && g % c->local[d])
        c->local[d] /= 2;
}

plan_status opt_co_shape(const opt_tune *t, plan_file *p, opt_co_progs *g, uint64_t seq, const char *kernel,
                         const uint8_t program[16], const char *canon, uint64_t key, uint64_t count, uint64_t rec_ns,
                         double deadline, opt_tune_result *res)
{
    if (!t->co_hash || !t->co_time)
        return PLAN_OK;
    const opt_co_prog *pg = opt_co_prog_of(g, program);
    if (!pg) {
        opt_co_say(t, "%s (launch %llu): not coarsened: its program has no source in the trace", kernel,
                   (unsigned long long)seq);
        return PLAN_OK;
    }
    opt_wg_limits L;
    char err[512] = "";
    memset(&L, 0, sizeof L);
    if (t->probe(t->user, seq, &L, err, sizeof err)) {
        opt_co_say(t, "%s (launch %llu): not coarsened: %s", kernel, (unsigned long long)seq, err);
        return PLAN_OK;
    }
    if (!L.hashable) {
        opt_co_say(t, "%s (launch %llu): not coarsened: an argument is not a buffer (its outputs cannot be "
                   "compared)", kernel, (unsigned long long)seq);
        return PLAN_OK;
    }
    opt_co_try *v = calloc(OPT_CO_MAX, sizeof *v);
    if (!v)
        return PLAN_ERR_NOMEM;
    plan_status st = PLAN_OK;
    unsigned n = opt_co_cands(t, &L, v), made = 0, same = 0, differ = 0, failed = 0, unchecked = 0;
    char refusal[320] = "", fail1[320] = "";
    uint8_t h0[16];
    int64_t *ns = NULL;
    if (!n) {
        opt_co_say(t, "%s (launch %llu): not coarsened: no factor of 2, 4 or 8 divides its global size", kernel,
                   (unsigned long long)seq);
        goto out;
    }
    /* 1. the sources (the rewriter refuses what it cannot prove safe) and
     * 2. the outputs: each coarsening once, every memory argument hashed
     *    and compared with the recorded launch's. The group forms only
     *    where no plain form got that far: every one refused by the
     *    rewriter, or failing at its launch (for a kernel that asks nothing
     *    of its work-group, group-blocked is blocked; a plain form keeps
     *    the local size, which the coarsened kernel may no longer run at:
     *    Parboil's sgemm at 32x32 on the H200, "its local size is not
     *    legal here", where the group forms halve it) */
    char grefusal[320] = "";
    int hashed0 = 0;
    for (unsigned pass = 0; pass < 2; pass++) {
        if (pass == 1 && (same || (made && !failed)))
            break;
        unsigned made_here = 0;
        for (unsigned i = 0; i < n; i++) {
            if (opt_co_grouped(v[i].form) != (pass == 1))
                continue;
            snprintf(v[i].name, sizeof v[i].name, "__clrr_coarse_%zu_%u", plan_coarse_count(p) + 1, i);
            rw_coarsen_req rq = {pg->source, pg->len, pg->options, kernel, v[i].name, v[i].dim, v[i].factor, v[i].form};
            char why[320] = "";
            rw_status rs = opt_rw_coarsen(&rq, &v[i].out, why, sizeof why);
            if (rs == RW_ERR_NOMEM) {
                st = PLAN_ERR_NOMEM;
                goto out;
            }
            if (rs != RW_OK) {
                char *to = pass ? grefusal : refusal;
                if (!to[0])
                    snprintf(to, sizeof refusal, "%s", why);
                continue;
            }
            made_here++;
        }
        made += made_here;
        if (!made_here)
            continue;
        if (!hashed0) {
            if (t->hash(t->user, seq, NULL, h0, err, sizeof err)) {
                opt_co_say(t, "%s (launch %llu): not coarsened: %s", kernel, (unsigned long long)seq, err);
                goto out;
            }
            hashed0 = 1;
        }
        for (unsigned i = 0; i < n; i++) {
            if (!v[i].out.source || opt_co_grouped(v[i].form) != (pass == 1))
                continue;
            if (opt_co_now() > deadline) {
                unchecked++;
                continue;
            }
            opt_coarse_cand c = {v[i].out.source, v[i].out.len, pg->options, v[i].name, v[i].dim, v[i].factor,
                                 v[i].form, 0, {0, 0, 0}};
            opt_co_local(&L, v[i].dim, v[i].factor, v[i].form, &c);
            uint8_t h[16];
            if (t->co_hash(t->user, seq, &c, h, err, sizeof err)) {
                if (!failed++)
                    snprintf(fail1, sizeof fail1, "%s", err);
                continue;
            }
            if (memcmp(h, h0, 16)) {
                differ++;
                continue;
            }
            v[i].same = 1;
            same++;
        }
    }
    if (!made) {
        res->co_refused++;
        opt_co_say(t, "%s (launch %llu): not coarsened: %s%s%.300s", kernel, (unsigned long long)seq, refusal,
                   grefusal[0] ? "; inside its work-groups: " : "", grefusal);
        goto out;
    }
    if (differ)
        res->co_differ++;
    if (!same) {
        opt_co_say(t, "%s (launch %llu): not coarsened: of %u coarsenings, %u change the outputs, %u fail%s%.200s%s%s",
                   kernel, (unsigned long long)seq, made, differ, failed, failed ? " (" : "", fail1,
                   failed ? ")" : "", unchecked ? ", the others out of budget" : "");
        goto out;
    }
    /* 3. the timing, alternated with the recorded launch, within the budget */
    unsigned reps = t->reps;
    ns = malloc((size_t)2 * reps * sizeof *ns);
    if (!ns) {
        st = PLAN_ERR_NOMEM;
        goto out;
    }
    double bmed = 0, bq1 = 0, bq3 = 0;
    int timed = 0, win = -1;
    for (unsigned i = 0; i < n; i++) {
        if (!v[i].same)
            continue;
        double left = deadline - opt_co_now();
        if (left <= 0 || (rec_ns && 2.0 * (double)rec_ns / 1e9 * 2 * (1 + reps) > left))
            break;
        opt_coarse_cand c = {v[i].out.source, v[i].out.len, pg->options, v[i].name, v[i].dim, v[i].factor,
                             v[i].form, 0, {0, 0, 0}};
        opt_co_local(&L, v[i].dim, v[i].factor, v[i].form, &c);
        if (t->co_time(t->user, seq, &c, reps, ns, err, sizeof err)) {
            v[i].same = 0;
            continue;
        }
        double m0, a, b;
        if (!opt_co_stats(ns, reps, 0, &m0, &a, &b) || !opt_co_stats(ns, reps, 1, &v[i].med, &v[i].q1, &v[i].q3)) {
            v[i].same = 0;
            continue;
        }
        if (!timed++ || m0 < bmed) {   /* the baseline: its fastest timing of all */
            bmed = m0;
            bq1 = a;
            bq3 = b;
        }
        timed = timed ? timed : 1;
    }
    (void)bq3;
    if (!timed) {
        opt_co_say(t, "%s (launch %llu): not coarsened: out of budget before its timing (%u coarsening%s with the "
                   "same outputs)", kernel, (unsigned long long)seq, same, same == 1 ? "" : "s");
        goto out;
    }
    res->co_measured++;
    for (unsigned i = 0; i < n; i++) {
        if (!v[i].same || v[i].med <= 0)
            continue;
        int faster = v[i].q3 < bq1 && bmed - v[i].med > 0.03 * bmed;
        if (t->force_factor) {   /* forced: the first form with the same outputs, whatever the timings */
            if (win < 0)
                win = (int)i;
        } else if (faster && (win < 0 || v[i].med < v[win].med))
            win = (int)i;
    }
    if (win < 0) {
        unsigned best = 0;
        for (unsigned i = 0; i < n; i++)
            if (v[i].same && v[i].med > 0 && (!best || v[i].med < v[best - 1].med))
                best = i + 1;
        opt_co_say(t, "%s (launch %llu, %llu launch%s): not coarsened: %.3f ms as recorded; the fastest coarsening "
                   "with the same outputs (%s, %u along %u) %.3f ms, not faster beyond the noise", kernel,
                   (unsigned long long)seq, (unsigned long long)count, count == 1 ? "" : "es", bmed / 1e6,
                   best ? opt_co_form(v[best - 1].form) : "?", best ? v[best - 1].factor : 0,
                   best ? v[best - 1].dim : 0, best ? v[best - 1].med / 1e6 : 0.0);
        goto out;
    }
    {
        opt_co_try *w = &v[win];
        opt_coarse_cand c = {w->out.source, w->out.len, pg->options, w->name, w->dim, w->factor, w->form, 0,
                             {0, 0, 0}};
        opt_co_local(&L, w->dim, w->factor, w->form, &c);
        plan_coarse pc;
        memset(&pc, 0, sizeof pc);
        pc.name = w->name;
        pc.kernel = kernel;
        memcpy(pc.program, program, 16);
        pc.source = w->out.source;
        pc.options = pg->options;
        pc.dim = w->dim;
        pc.factor = w->factor;
        pc.form = w->form;
        pc.nargs = w->out.nparams;
        if (w->out.len > PLAN_FUSED_MAX_SOURCE || !pc.nargs || pc.nargs > PLAN_FUSED_MAX_PARAMS)
            goto out;
        uint32_t cid = 0;
        if ((st = plan_add_coarse(p, &pc, &cid)) != PLAN_OK) {
            st = st == PLAN_ERR_ARG ? PLAN_OK : st;
            goto out;
        }
        double noise = (v[win].q3 - v[win].q1) > (bq3 - bq1) ? v[win].q3 - v[win].q1 : bq3 - bq1;
        plan_tuned tu = {L.device, L.driver, {c.local[0], c.local[1], c.local[2]}, (uint64_t)bmed,
                         (uint64_t)w->med, (uint64_t)noise, reps, cid};
        plan_local pl;
        memset(&pl, 0, sizeof pl);
        pl.kernel = kernel;
        memcpy(pl.program, program, 16);
        pl.dim = L.dim;
        pl.has_recorded = L.has_local;
        for (unsigned d = 0; d < 3; d++) {
            pl.global[d] = d < L.dim ? L.global[d] : 1;
            pl.recorded[d] = L.has_local && d < L.dim ? L.local[d] : 0;
        }
        pl.ntuned = 1;
        pl.tuned = &tu;
        uint32_t id = 0;
        st = plan_add_local(p, &pl, &id);
        if (st != PLAN_OK) {
            st = st == PLAN_ERR_ARG ? PLAN_OK : st;
            goto out;
        }
        char reason[640], lsz[64];
        if (c.has_local)
            snprintf(lsz, sizeof lsz, "local %llux%llux%llu", (unsigned long long)c.local[0],
                     (unsigned long long)c.local[1], (unsigned long long)c.local[2]);
        else
            snprintf(lsz, sizeof lsz, "the driver's local size");
        snprintf(reason, sizeof reason, "measured on %s: coarsened by %u along dimension %u (%s, %s), %.3f ms instead "
                 "of %.3f (medians of %u alternated runs, noise %.3f ms)%s; every memory argument bit-identical",
                 L.device, w->factor, w->dim, opt_co_form(w->form), lsz, w->med / 1e6, bmed / 1e6, reps,
                 noise / 1e6, t->force_factor ? "; forced by --tune-force" : "");
        plan_xform x;
        memset(&x, 0, sizeof x);
        x.pass = PLAN_PASS_WGSIZE;
        x.action = PLAN_ACT_COARSEN;
        x.seq = seq;
        x.function = "clEnqueueNDRangeKernel";
        x.pattern = canon;
        x.key = key;
        x.occurrence = 0;
        x.occurrences = count;
        x.reason = reason;
        x.local = id;
        if ((st = plan_add_xform(p, &x)) != PLAN_OK)
            goto out;
        plan_pass_mut(p, PLAN_PASS_WGSIZE)->transformations++;
        res->coarsened++;
        opt_co_say(t, "%s (launch %llu, %llu launch%s): coarsened by %u along dimension %u (%s): %.3f ms instead of "
                   "%.3f (%.2fx, %u runs each, noise %.3f ms); outputs identical (%u of %u coarsenings)%s", kernel,
                   (unsigned long long)seq, (unsigned long long)count, count == 1 ? "" : "es", w->factor, w->dim,
                   opt_co_form(w->form), w->med / 1e6, bmed / 1e6, bmed / w->med, reps, noise / 1e6, same,
                   made, t->force_factor ? "; forced by --tune-force" : "");
    }
out:
    for (unsigned i = 0; i < OPT_CO_MAX; i++)
        opt_rw_coarsen_free(&v[i].out);
    free(v);
    free(ns);
    return st;
}

plan_status opt_coarsen_regenerate(const char *path, size_t max_memory, const plan_file *want, plan_file *got, char *err,
                                   size_t err_cap)
{
    if (!plan_coarse_count(want))
        return PLAN_OK;
    opt_co_progs *g = opt_co_progs_open(path, max_memory, err, err_cap);
    if (!g)
        return PLAN_ERR_TRACE;
    plan_status st = PLAN_OK;
    for (size_t i = 0; st == PLAN_OK && i < plan_coarse_count(want); i++) {
        const plan_coarse *z = plan_get_coarse(want, i);
        const opt_co_prog *pg = opt_co_prog_of(g, z->program);
        if (!pg)
            continue;
        rw_coarsen_req rq = {pg->source, pg->len, pg->options, z->kernel, z->name, z->dim, z->factor, z->form};
        rw_coarsen_out out;
        char why[320] = "";
        rw_status rs = opt_rw_coarsen(&rq, &out, why, sizeof why);
        if (rs == RW_ERR_NOMEM)
            st = PLAN_ERR_NOMEM;
        if (rs == RW_OK) {
            plan_coarse c = *z;
            c.source = out.source;
            c.options = pg->options;
            c.nargs = out.nparams;
            st = plan_add_coarse(got, &c, NULL);
            if (st == PLAN_ERR_ARG)
                st = PLAN_OK;
        }
        opt_rw_coarsen_free(&out);
    }
    opt_co_progs_close(g);
    if (st != PLAN_OK && st != PLAN_ERR_TRACE)
        plan_seterr(err, err_cap, st, "%s", plan_strerror(st));
    return st;
}
