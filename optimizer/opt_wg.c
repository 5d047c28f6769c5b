/* opt_wg.c — the wgsize pass: measured work-group sizes. For each distinct
 * launch shape of a trace (kernel, program, global size, recorded local
 * size: one decision per shape, not per call, whatever buffers and values
 * the launches pass) that no other pass took, the candidates legal there
 * (opt_wg_candidates) and the recorded local size are run alternately on
 * the launch's exact recorded inputs (the caller's replayer, opt_tune's
 * hooks); the fastest candidate that beats the recorded size beyond the
 * measured noise, and leaves every memory argument bit-identical, becomes a
 * local_size transformation of the shape (plan 1.10) with the device's
 * measurements. A shape that keeps its local size is then offered
 * coarsened kernels (opt_coarsen.c, plan 1.12). optimizer/README.md,
 * "Work-group sizes". */
#include "optimizer/opt_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int opt_tune_mode_parse(const char *s, opt_tune_mode *m)
{
    if (!s)
        return -1;
    if (!strcmp(s, "rapid"))
        *m = OPT_TUNE_RAPID;
    else if (!strcmp(s, "normal"))
        *m = OPT_TUNE_NORMAL;
    else if (!strcmp(s, "exhaustive"))
        *m = OPT_TUNE_EXHAUSTIVE;
    else
        return -1;
    return 0;
}

/* ------------------------------------------------------------ candidates */

#define OPT_WG_VALS 48u

/* The values dimension @p d may take: powers of two, the preferred
 * multiple and the global size, each dividing the global size and within
 * the device's item size and @p maxwg. @return how many (ascending). */
static unsigned opt_wg_dim_values(const opt_wg_limits *l, unsigned d, uint64_t maxwg, uint64_t *v)
{
    uint64_t g = l->global[d], lim = maxwg;
    if (l->dev_max_items[d] && l->dev_max_items[d] < lim)
        lim = l->dev_max_items[d];
    if (g < lim)
        lim = g;
    unsigned n = 0;
    uint64_t cand[OPT_WG_VALS];
    unsigned nc = 0;
    for (uint64_t p = 1; p <= lim && nc < OPT_WG_VALS - 4; p <<= 1)
        cand[nc++] = p;
    uint64_t m = l->pref_multiple;
    if (m > 1)
        for (uint64_t k = 1; k <= 4 && m * k <= lim && nc < OPT_WG_VALS - 1; k++)
            cand[nc++] = m * k;
    if (g <= lim && nc < OPT_WG_VALS)
        cand[nc++] = g;
    for (unsigned i = 0; i < nc; i++) {
        uint64_t x = cand[i];
        if (!x || g % x)
            continue;
        unsigned j = 0;
        while (j < n && v[j] < x)
            j++;
        if (j < n && v[j] == x)
            continue;
        memmove(v + j + 1, v + j, (n - j) * sizeof *v);
        v[j] = x;
        n++;
    }
    return n;
}

typedef struct opt_wg_cand {
    uint64_t l[3];
    double score;
} opt_wg_cand;

static int opt_wg_cand_cmp(const void *a, const void *b)
{
    const opt_wg_cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    for (int d = 0; d < 3; d++)
        if (x->l[d] != y->l[d])
            return x->l[d] > y->l[d] ? -1 : 1;   /* the wider first dimension first */
    return 0;
}

unsigned opt_wg_candidates(const opt_wg_limits *l, opt_tune_mode mode, uint64_t (*out)[3], unsigned cap)
{
    if (!l || l->dim < 1 || l->dim > 3 || !cap)
        return 0;
    if (l->reqd[0] || l->reqd[1] || l->reqd[2])
        return 0;   /* reqd_work_group_size: the kernel says its size */
    uint64_t maxwg = PLAN_LOCAL_MAX_ITEMS;
    if (l->dev_max_wg && l->dev_max_wg < maxwg)
        maxwg = l->dev_max_wg;
    if (l->kernel_wg && l->kernel_wg < maxwg)
        maxwg = l->kernel_wg;
    uint64_t vals[3][OPT_WG_VALS];
    unsigned nv[3] = {1, 1, 1};
    vals[1][0] = vals[2][0] = 1;
    for (unsigned d = 0; d < l->dim; d++) {
        if (!l->global[d])
            return 0;
        nv[d] = opt_wg_dim_values(l, d, maxwg, vals[d]);
        if (!nv[d])
            return 0;
    }
    size_t total = (size_t)nv[0] * nv[1] * nv[2];
    opt_wg_cand *all = malloc(total * sizeof *all);
    if (!all)
        return 0;
    size_t n = 0;
    double target = log2(maxwg < 128 ? (double)maxwg : 128.0);
    for (unsigned a = 0; a < nv[0]; a++)
        for (unsigned b = 0; b < nv[1]; b++)
            for (unsigned c = 0; c < nv[2]; c++) {
                uint64_t x[3] = {vals[0][a], vals[1][b], vals[2][c]};
                uint64_t prod = x[0] * x[1] * x[2];
                if (prod > maxwg)
                    continue;
                if (l->has_local && x[0] == l->local[0] && (l->dim < 2 || x[1] == l->local[1]) &&
                    (l->dim < 3 || x[2] == l->local[2]))
                    continue;   /* the baseline */
                opt_wg_cand *k = &all[n++];
                memcpy(k->l, x, sizeof x);
                /* rank: work-groups near 64..256 work-items; a first dimension
                 * too narrow for the device's vector width ranks lower */
                double s = fabs(log2((double)prod) - target);
                if (l->dim > 1 && x[0] < 4 && l->global[0] >= 4)
                    s += 1.0;
                if (l->pref_multiple > 1 && prod % l->pref_multiple)
                    s += 0.5;
                k->score = s;
            }
    qsort(all, n, sizeof *all, opt_wg_cand_cmp);
    unsigned lim = mode == OPT_TUNE_RAPID ? OPT_TUNE_RAPID_MAX : mode == OPT_TUNE_NORMAL ? OPT_TUNE_NORMAL_MAX
                                                                                        : OPT_TUNE_EXHAUSTIVE_MAX;
    if (lim > cap)
        lim = cap;
    unsigned k = 0;
    for (; k < lim && k < n; k++)
        memcpy(out[k], all[k].l, sizeof out[k]);
    free(all);
    return k;
}

/* ------------------------------------------------------------ shapes */

typedef struct opt_wg_shape {
    char *canon;              /* its first launch's shape pattern (malloc'ed) */
    uint64_t key;
    uint64_t seq;             /* its first launch */
    uint64_t count;           /* launches of the recording */
    char *kernel;             /* malloc'ed */
    uint8_t program[16];
    plan_shape sh;            /* what names it (kernel: the member above) */
    int taken;                /* another pass transformed one of its launches */
    uint64_t rec_ns;          /* its first launch's recorded device time (0: not recorded) */
    uint64_t total_ns;        /* ... all its launches' */
} opt_wg_shape;

typedef struct opt_wg_run {
    opt_wg_shape *v;
    size_t n, cap;
    struct { uint64_t seq; size_t shape; } *launch;   /* every launch of a shape, seq ascending */
    size_t nlaunch, caplaunch;
    const uint64_t *taken;    /* seqs other passes transformed, sorted */
    size_t ntaken;
} opt_wg_run;

static int opt_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int opt_wg_is_taken(const opt_wg_run *x, uint64_t seq)
{
    return x->ntaken && bsearch(&seq, x->taken, x->ntaken, sizeof seq, opt_u64_cmp) != NULL;
}

static int opt_wg_same(const opt_wg_shape *a, const plan_shape *b)
{
    if (a->sh.dim != b->dim || a->sh.has_local != b->has_local || strcmp(a->kernel, b->kernel) ||
        memcmp(a->sh.program, b->program, 16))
        return 0;
    for (unsigned d = 0; d < 3; d++)
        if (a->sh.global[d] != b->global[d] || a->sh.local[d] != b->local[d])
            return 0;
    return 1;
}

static plan_status opt_wg_call(opt_wg_run *x, plan_track *t, const tf_call *c)
{
    plan_shape sh;
    if (strcmp(c->sig->name, "clEnqueueNDRangeKernel") || !plan_call_ok(c) || !plan_launch_shape(t, c, &sh))
        return plan_track_call(t, c, PLAN_FATE_RUN);
    size_t i = 0;
    while (i < x->n && !opt_wg_same(&x->v[i], &sh))
        i++;
    if (i == x->n) {
        char *canon = NULL;
        uint64_t key = 0;
        plan_status st = plan_track_pattern(t, c, 1, &canon, &key);
        if (st == PLAN_ERR_LIMIT)   /* too long to name */
            return plan_track_call(t, c, PLAN_FATE_RUN);
        if (st != PLAN_OK)
            return st;
        if (plan_grow((void **)&x->v, &x->cap, x->n + 1, sizeof *x->v)) {
            free(canon);
            return PLAN_ERR_NOMEM;
        }
        opt_wg_shape *s = &x->v[x->n];
        memset(s, 0, sizeof *s);
        s->canon = canon;
        s->key = key;
        s->seq = c->seq;
        s->kernel = strdup(sh.kernel);
        memcpy(s->program, sh.program, 16);
        s->sh = sh;
        if (!s->kernel) {
            free(canon);
            return PLAN_ERR_NOMEM;
        }
        s->sh.kernel = s->kernel;
        x->n++;
    }
    x->v[i].count++;
    x->v[i].taken |= opt_wg_is_taken(x, c->seq);
    if (plan_grow((void **)&x->launch, &x->caplaunch, x->nlaunch + 1, sizeof *x->launch))
        return PLAN_ERR_NOMEM;
    x->launch[x->nlaunch].seq = c->seq;
    x->launch[x->nlaunch++].shape = i;
    return plan_track_call(t, c, PLAN_FATE_RUN);
}

/* A launch's recorded device time: to its shape (the launches of a
 * shape are found by their seqs, noted as they come). */
static void opt_wg_devtime(opt_wg_run *x, uint64_t seq, uint64_t ns)
{
    size_t lo = 0, hi = x->nlaunch;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->launch[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == x->nlaunch || x->launch[lo].seq != seq)
        return;
    opt_wg_shape *s = &x->v[x->launch[lo].shape];
    if (seq == s->seq)
        s->rec_ns = ns;
    s->total_ns += ns;
}

/* The shapes of trace @p path (x->v, in trace order of their first launch). */
static plan_status opt_wg_shapes(opt_wg_run *x, const char *path, const plan_file *p, size_t max_memory, char *err,
                                 size_t err_cap)
{
    tf_reader *r = NULL;
    plan_status st = plan_open_trace(path, max_memory, &r, err, err_cap);
    if (st != PLAN_OK)
        return st;
    plan_track t;
    plan_track_init(&t, p);
    tf_item it;
    tf_status ts = TF_OK;
    while (st == PLAN_OK && (ts = tf_reader_next(r, &it)) == TF_OK) {
        if (it.type == TF_ITEM_CALL)
            st = opt_wg_call(x, &t, &it.u.call);
        else if (it.type == TF_ITEM_DATA)
            plan_track_data(&t, &it.u.data);
        else if (it.type == TF_ITEM_DEVTIME && it.u.devtime.end > it.u.devtime.start)
            opt_wg_devtime(x, it.u.devtime.seq, it.u.devtime.end - it.u.devtime.start);
    }
    if (st == PLAN_OK && ts != TF_END)
        st = plan_seterr(err, err_cap, PLAN_ERR_TRACE, "%s%s%s", tf_strerror(ts), *tf_reader_error(r) ? ": " : "",
                        tf_reader_error(r));
    else if (st != PLAN_OK && st != PLAN_ERR_TRACE)
        plan_seterr(err, err_cap, st, "%s", plan_strerror(st));
    plan_track_free(&t);
    tf_reader_close(r);
    return st;
}

/* ------------------------------------------------------------ measuring */

static double opt_wg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int opt_dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median, quartiles and spread (the interquartile range) of candidate
 * @p i's timed runs; 0 when a run has no device time. */
static int opt_wg_stats(const int64_t *ns, unsigned n, unsigned reps, unsigned i, double *med, double *spread,
                        double *q1, double *q3)
{
    double v[OPT_VERIFY_MAX_REPS];
    for (unsigned r = 0; r < reps; r++) {
        if (ns[r * n + i] < 0)
            return 0;
        v[r] = (double)ns[r * n + i];
    }
    qsort(v, reps, sizeof *v, opt_dbl_cmp);
    *med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
    *q1 = v[reps / 4];
    *q3 = v[(3 * reps) / 4];
    *spread = *q3 - *q1;
    return 1;
}

static void opt_wg_fmt(char *buf, size_t cap, unsigned dim, const uint64_t *l)
{
    if (!l) {
        snprintf(buf, cap, "NULL");
        return;
    }
    int n = snprintf(buf, cap, "%llu", (unsigned long long)l[0]);
    for (unsigned d = 1; d < dim && n > 0 && (size_t)n < cap; d++)
        n += snprintf(buf + n, cap - (size_t)n, "x%llu", (unsigned long long)l[d]);
}

static void opt_wg_say(const opt_tune *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void opt_wg_say(const opt_tune *t, const char *fmt, ...)
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

#define OPT_WG_MAX_CANDS (OPT_TUNE_EXHAUSTIVE_MAX + 1)

/* One shape: measured, maybe tuned (a transformation added to @p p). */
static plan_status opt_wg_tune_shape(const opt_tune *t, plan_file *p, const opt_wg_shape *s, double deadline,
                                     opt_tune_result *res)
{
    opt_wg_limits L;
    char err[512] = "", rec[64], best[64];
    memset(&L, 0, sizeof L);
    if (t->probe(t->user, s->seq, &L, err, sizeof err)) {
        res->skipped++;
        opt_wg_say(t, "%s (launch %llu): not measured: %s", s->kernel, (unsigned long long)s->seq, err);
        return PLAN_OK;
    }
    opt_wg_fmt(rec, sizeof rec, L.dim, L.has_local ? L.local : NULL);
    if (L.reqd[0] || L.reqd[1] || L.reqd[2]) {
        res->skipped++;
        opt_wg_say(t, "%s (launch %llu): kept %s: reqd_work_group_size", s->kernel, (unsigned long long)s->seq, rec);
        return PLAN_OK;
    }
    if (!L.hashable) {
        res->skipped++;
        opt_wg_say(t, "%s (launch %llu): kept %s: an argument is not a buffer (its outputs cannot be compared)",
                   s->kernel, (unsigned long long)s->seq, rec);
        return PLAN_OK;
    }
    uint64_t (*rows)[3] = calloc(OPT_WG_MAX_CANDS, sizeof *rows);
    int64_t *ns = NULL;
    plan_status st = PLAN_OK;
    if (!rows)
        return PLAN_ERR_NOMEM;
    unsigned nc = opt_wg_candidates(&L, t->mode, rows + 1, OPT_WG_MAX_CANDS - 1);
    if (!nc) {
        res->skipped++;
        opt_wg_say(t, "%s (launch %llu): kept %s: no other legal local size", s->kernel, (unsigned long long)s->seq,
                   rec);
        goto out;
    }
    unsigned reps = t->reps;
    /* 1. the outputs first: the launch run once with the recorded local
     *    size and once with each candidate (each its own replay: a size the
     *    kernel does not take fails that run alone), every memory argument
     *    hashed after it; only the candidates that leave them bit-identical
     *    are timed. The checks take at most half the budget left. */
    uint8_t h0[16];
    double t0 = opt_wg_now();
    if (t->hash(t->user, s->seq, NULL, h0, err, sizeof err)) {
        res->skipped++;
        opt_wg_say(t, "%s (launch %llu): kept %s: %s", s->kernel, (unsigned long long)s->seq, rec, err);
        goto out;
    }
    double check = opt_wg_now() - t0, half = t0 + (deadline - t0) / 2;
    unsigned same = 0, differ = 0, failed = 0, unchecked = 0;
    char first_fail[200] = "";
    for (unsigned i = 1; i <= nc; i++) {
        uint8_t h[16];
        if (opt_wg_now() + check > half) {
            unchecked = nc - i + 1;
            break;
        }
        if (t->hash(t->user, s->seq, rows[i], h, err, sizeof err)) {
            if (!failed++) {
                opt_wg_fmt(best, sizeof best, L.dim, rows[i]);
                snprintf(first_fail, sizeof first_fail, "%s: %.120s", best, err);
            }
            continue;
        }
        if (memcmp(h, h0, 16)) {
            differ++;
            continue;
        }
        memcpy(rows[1 + same++], rows[i], sizeof rows[i]);
    }
    if (differ)
        res->differ++;
    if (!same) {
        opt_wg_say(t, "%s (launch %llu): kept %s: of %u other local sizes, %u change the outputs, %u fail%s%s%s%s",
                   s->kernel, (unsigned long long)s->seq, rec, nc, differ, failed, failed ? " (" : "", first_fail,
                   failed ? ")" : "", unchecked ? ", the others out of budget" : "");
        goto out;
    }
    nc = same;
    /* 2. the timing, within the budget left: each candidate runs 1 + reps
     *    times, a launch counted twice its recorded time */
    double left = deadline - opt_wg_now();
    if (s->rec_ns) {
        double per = 2.0 * (double)s->rec_ns / 1e9 * (1 + reps);
        unsigned fit = per > 0 ? (unsigned)(left / per) : nc + 1;
        if (fit < 2) {
            res->left++;
            opt_wg_say(t, "%s (launch %llu): kept %s: out of budget (its launches take %.3f ms)", s->kernel,
                       (unsigned long long)s->seq, rec, (double)s->rec_ns / 1e6);
            goto out;
        }
        if (fit - 1 < nc)
            nc = fit - 1;
    }
    unsigned n = nc + 1;
    ns = malloc((size_t)n * reps * sizeof *ns);
    if (!ns) {
        st = PLAN_ERR_NOMEM;
        goto out;
    }
    if (t->time(t->user, s->seq, (const uint64_t(*)[3])rows, n, reps, ns, err, sizeof err)) {
        res->skipped++;
        opt_wg_say(t, "%s (launch %llu): not measured: %s", s->kernel, (unsigned long long)s->seq, err);
        goto out;
    }
    res->measured++;
    double bmed, bspread, bq1, bq3;
    if (!opt_wg_stats(ns, n, reps, 0, &bmed, &bspread, &bq1, &bq3) || bmed <= 0) {
        opt_wg_say(t, "%s (launch %llu): kept %s: the device gave no times", s->kernel, (unsigned long long)s->seq, rec);
        goto out;
    }
    /* the fastest that wins beyond the noise */
    unsigned win = 0;
    double wmed = 0, wnoise = 0;
    for (unsigned i = 1; i < n; i++) {
        double m, sp, q1, q3;
        if (!opt_wg_stats(ns, n, reps, i, &m, &sp, &q1, &q3))
            continue;
        double noise = sp > bspread ? sp : bspread;
        /* beyond the noise: the two interquartile ranges apart (the
         * candidate's slower quarter faster than the baseline's faster
         * quarter), and the medians more than 3% apart */
        if (q3 < bq1 && bmed - m > 0.03 * bmed && (!win || m < wmed)) {
            win = i;
            wmed = m;
            wnoise = noise;
        }
    }
    if (!win) {
        opt_wg_say(t, "%s (launch %llu, %llu launch%s): kept %s (%.3f ms): none of %u local sizes with the same "
                   "outputs is faster beyond the noise%s", s->kernel, (unsigned long long)s->seq,
                   (unsigned long long)s->count, s->count == 1 ? "" : "es", rec, bmed / 1e6, nc,
                   differ ? " (others change the outputs)" : "");
        goto out;
    }
    {
        unsigned i = win;
        opt_wg_fmt(best, sizeof best, L.dim, rows[i]);
        plan_tuned tu = {L.device, L.driver, {rows[i][0], rows[i][1], rows[i][2]}, (uint64_t)bmed, (uint64_t)wmed,
                         (uint64_t)wnoise, reps, 0};
        plan_local pl;
        memset(&pl, 0, sizeof pl);
        pl.kernel = s->kernel;
        memcpy(pl.program, s->program, 16);
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
        if (st == PLAN_ERR_ARG) {   /* out of the plan's range: not written */
            st = PLAN_OK;
            goto out;
        }
        if (st != PLAN_OK)
            goto out;
        char reason[640];
        snprintf(reason, sizeof reason, "measured on %s: local size %s instead of %s, %.3f ms instead of %.3f "
                 "(medians of %u alternated runs, noise %.3f ms); every memory argument bit-identical",
                 L.device, best, rec, wmed / 1e6, bmed / 1e6, reps, wnoise / 1e6);
        plan_xform x;
        memset(&x, 0, sizeof x);
        x.pass = PLAN_PASS_WGSIZE;
        x.action = PLAN_ACT_LOCAL_SIZE;
        x.seq = s->seq;
        x.function = "clEnqueueNDRangeKernel";
        x.pattern = s->canon;
        x.key = s->key;
        x.occurrence = 0;
        x.occurrences = s->count;
        x.reason = reason;
        x.local = id;
        if ((st = plan_add_xform(p, &x)) != PLAN_OK)
            goto out;
        plan_pass_mut(p, PLAN_PASS_WGSIZE)->transformations++;
        res->tuned++;
        if (t->costs && L.identity[0]) {   /* the cost database keeps the decision too */
            cdb_key ck;
            memset(&ck, 0, sizeof ck);
            memcpy(ck.program, s->program, 16);
            ck.kernel = s->kernel;
            ck.dim = L.dim;
            for (unsigned d = 0; d < 3; d++) {
                ck.gsz[d] = d < L.dim ? L.global[d] : 1;
                ck.lsz[d] = L.has_local ? (d < L.dim ? L.local[d] : 1) : 0;
            }
            cdb_tuned ct = {{rows[i][0], rows[i][1], rows[i][2]}, (uint64_t)bmed, (uint64_t)wmed, reps};
            if (cdb_add_tuned(t->costs, L.identity, &ck, &ct) == CDB_OK)
                res->recorded++;
        }
        opt_wg_say(t, "%s (launch %llu, %llu launch%s): local size %s instead of %s: %.3f ms instead of %.3f "
                   "(%.2fx, %u runs each, noise %.3f ms); outputs identical (%u of %u other sizes checked%s)",
                   s->kernel, (unsigned long long)s->seq, (unsigned long long)s->count, s->count == 1 ? "" : "es",
                   best, rec, wmed / 1e6, bmed / 1e6, bmed / wmed, reps, wnoise / 1e6, same + differ + failed,
                   same + differ + failed + unchecked, differ ? ", some change the outputs" : "");
    }
out:
    free(rows);
    free(ns);
    return st;
}

static int opt_wg_shape_cmp(const void *a, const void *b)
{
    const opt_wg_shape *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

plan_status opt_tune_plan(const char *path, plan_file *p, const opt_tune *t, size_t max_memory, opt_tune_result *res,
                          char *err, size_t err_cap)
{
    memset(res, 0, sizeof *res);
    double t0 = opt_wg_now(), deadline = t0 + (t->budget_s > 0 ? t->budget_s : 30);
    opt_wg_run x;
    memset(&x, 0, sizeof x);
    size_t nx = plan_xform_count(p);
    uint64_t *taken = malloc((nx ? nx : 1) * sizeof *taken);
    if (!taken)
        return plan_seterr(err, err_cap, PLAN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < nx; i++)
        taken[i] = plan_get_xform(p, i)->seq;
    qsort(taken, nx, sizeof *taken, opt_u64_cmp);
    x.taken = taken;
    x.ntaken = nx;
    plan_pass_mut(p, PLAN_PASS_WGSIZE)->enabled = 1;
    plan_status st = opt_wg_shapes(&x, path, p, max_memory, err, err_cap);
    opt_co_progs *progs = NULL;
    int progs_failed = 0;
    res->shapes = (unsigned)x.n;
    /* the budget goes first to the shapes the recording spent most device time in */
    if (st == PLAN_OK && x.n)   /* x.v is NULL when the trace has no launch shape (qsort's argument is nonnull) */
        qsort(x.v, x.n, sizeof *x.v, opt_wg_shape_cmp);
    for (size_t i = 0; st == PLAN_OK && i < x.n; i++) {
        if (t->on_progress)
            t->on_progress(t->user, (unsigned)i, (unsigned)x.n, opt_wg_now() - t0);
        if (x.v[i].taken) {
            res->taken++;
            continue;
        }
        if (opt_wg_now() > deadline) {
            res->left++;
            continue;
        }
        unsigned tuned = res->tuned;
        if (!t->force_factor)   /* --tune-force: only the coarsening is tried (not timing-dependent) */
            st = opt_wg_tune_shape(t, p, &x.v[i], deadline, res);
        /* a shape that kept its local size: coarsened kernels (1.12) */
        if (st == PLAN_OK && res->tuned == tuned && t->co_hash && t->co_time && opt_wg_now() < deadline) {
            if (!progs && !progs_failed) {
                char e2[512] = "";
                progs = opt_co_progs_open(path, max_memory, e2, sizeof e2);
                if (!progs) {
                    progs_failed = 1;
                    opt_wg_say(t, "no coarsening: %s", e2);
                }
            }
            if (progs)
                st = opt_co_shape(t, p, progs, x.v[i].seq, x.v[i].kernel, x.v[i].program, x.v[i].canon, x.v[i].key,
                                  x.v[i].count, x.v[i].rec_ns, deadline, res);
        }
    }
    opt_co_progs_close(progs);
    if (t->on_progress && st == PLAN_OK)
        t->on_progress(t->user, (unsigned)x.n, (unsigned)x.n, opt_wg_now() - t0);
    if (res->left)
        opt_wg_say(t, "out of budget (%.0f s): %u shape%s not measured (--budget)", t->budget_s, res->left,
                   res->left == 1 ? "" : "s");
    if (st == PLAN_OK && (res->tuned || res->coarsened) && t->replay) {
        char e2[512] = "";
        int r = t->replay(t->user, p, e2, sizeof e2);
        if (r != 0) {
            opt_wg_say(t, "the plan with its %u local size%s and %u coarsening%s does not replay verified here (%s): "
                       "removed", res->tuned, res->tuned == 1 ? "" : "s", res->coarsened,
                       res->coarsened == 1 ? "" : "s", r < 0 ? e2 : "a read-back mismatched");
            plan_remove_locals(p);
            res->removed = 1;
            res->tuned = 0;
            res->coarsened = 0;
        }
    }
    if (st != PLAN_OK && st != PLAN_ERR_TRACE)
        plan_seterr(err, err_cap, st, "%s", plan_strerror(st));
    res->seconds = opt_wg_now() - t0;
    for (size_t i = 0; i < x.n; i++) {
        free(x.v[i].canon);
        free(x.v[i].kernel);
    }
    free(x.v);
    free(x.launch);
    free(taken);
    return st;
}
