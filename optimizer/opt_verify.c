/* opt_verify.c — a plan that replays verified: opt_optimize(), then the
 * caller's replay of the trace with the candidate plan (the optimizer does
 * not link the replayer: opt_verify.replay does it). When the replay
 * mismatches, the offending transformations are found and the calls they
 * change are kept as recorded (opt_options.keep), the passes run again:
 *   1. a replay without any plan: when that mismatches too, the trace does
 *      not replay verified here and no transformation can be judged (all
 *      are removed);
 *   2. each pass alone: the passes whose plan mismatches are bad;
 *   3. per bad pass, bisection over its transformations (by call): a half
 *      that replays verified is clean, a single call that mismatches is an
 *      offender; halves that are clean alone but not together are removed
 *      together;
 *   4. all passes again with the offenders kept; when that still mismatches
 *      (passes that are wrong only together), passes are left out from the
 *      last (schedule) to the first (dead) until it verifies.
 * Every replay counts against opt_verify.max_replays: when it runs out, a
 * group still in doubt is removed whole.
 * With opt_verify.time (`clrr optimize --measure`), each pass left in the
 * verified plan is then timed: the plan with it and without it replayed
 * alternately, reps times each; it stays only when the median with it is
 * faster than without by more than the noise (half the spread of the runs
 * without it, at least 2%), or faster in enough of the alternated pairs
 * (a sign test, opt_vdecide; more pairs are timed while that is in doubt).
 * With opt_verify.stage, a staging decision for the device of the trace's
 * large transfers is then timed the same way (the plan with it against
 * the plan without it) and kept only when faster (opt_vstage).
 * opt_live_check then weighs what was measured against what applying the
 * plan live costs (the layer's per-call and per-run cost, costs/cdb.h
 * cdb_get_layer): a plan that does not gain OPT_LIVE_MARGIN times that
 * loses every transformation, and `clrr run` runs without the layer. */
#include "optimizer/opt_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The pairs' test (opt_vdecide): a median ratio at least 1% below 1 and a
 * one-sided sign test at 5% (5 of 5 pairs, 7 of 8, 12 of 15). */
#define OPT_PAIRED_MIN 0.01
#define OPT_PAIRED_P 0.05

typedef struct opt_vrun {
    const char *path;
    opt_options o;            /* the caller's, keep and passes changed */
    const opt_verify *v;
    opt_verify_result *res;
    uint64_t *keep;           /* the offenders so far, sorted */
    size_t nkeep, capkeep;
    char *err;
    size_t err_cap;
    int plan_fails;           /* the trace replays verified alone: a replay that fails is the plan's */
    int whole_pass;           /* pass + 1 whose timing compared the whole plan with no plan */
    int stage_due;            /* opt_vstage will time a staging: its pairs are reserved too */
    int none_timed;           /* a replay without the plan took its part in the budget's unit */
} opt_vrun;

double opt_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A replay that took @p s seconds: the budget's unit is the longest. */
static void opt_vtook(opt_vrun *x, double s)
{
    if (s > x->res->replay_s)
        x->res->replay_s = s;
}

static int opt_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void opt_vsay(opt_vrun *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void opt_vsay(opt_vrun *x, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (x->v->on_removed)
        x->v->on_removed(x->v->user, line);
}

/* The plan of @p passes with the offenders and @p extra (n) kept, into *p. */
static plan_status opt_vbuild(opt_vrun *x, unsigned passes, const uint64_t *extra, size_t n, plan_file **p)
{
    uint64_t *all = malloc((x->nkeep + n + 1) * sizeof *all);
    if (!all)
        return plan_seterr(x->err, x->err_cap, PLAN_ERR_NOMEM, "out of memory");
    if (x->nkeep)
        memcpy(all, x->keep, x->nkeep * sizeof *all);
    if (n)
        memcpy(all + x->nkeep, extra, n * sizeof *all);
    qsort(all, x->nkeep + n, sizeof *all, opt_u64_cmp);
    opt_options o = x->o;
    o.passes = passes;
    o.on_partition = NULL;   /* said by the first run */
    o.keep = all;
    o.nkeep = x->nkeep + n;
    plan_status st = opt_optimize(x->path, &o, p, x->err, x->err_cap);
    free(all);
    return st;
}

/* Whether plan @p p changes anything a replay would see. */
static int opt_vchanges(const plan_file *p)
{
    return plan_xform_count(p) || plan_sched_count(p);
}

/* Replays @p p: 1 verified, 0 mismatched, -1 could not replay (x->err). */
static int opt_vreplay(opt_vrun *x, const plan_file *p)
{
    if (!opt_vchanges(p))
        return 1;
    x->res->replays++;
    double t0 = opt_now();
    int r = x->v->replay(x->v->user, p, x->err, x->err_cap);
    opt_vtook(x, opt_now() - t0);
    x->err[0] = r > 0 ? 0 : x->err[0];
    if (r < 0 && x->plan_fails)
        return 0;   /* as a mismatch: the transformations that make it fail are looked for */
    return r < 0 ? -1 : r == 0;
}

/* Builds and replays: 1 verified, 0 mismatched, -1 failed (PLAN status in *st). */
static int opt_vtry(opt_vrun *x, unsigned passes, const uint64_t *extra, size_t n, plan_status *st)
{
    plan_file *p = NULL;
    *st = opt_vbuild(x, passes, extra, n, &p);
    if (*st != PLAN_OK)
        return -1;
    int r = opt_vreplay(x, p);
    plan_free(p);
    if (r < 0)
        *st = PLAN_ERR_TRACE;
    return r;
}

static int opt_vkeep(opt_vrun *x, const uint64_t *seqs, size_t n)
{
    if (plan_grow((void **)&x->keep, &x->capkeep, x->nkeep + n + 1, sizeof *x->keep))
        return -1;
    if (n)
        memcpy(x->keep + x->nkeep, seqs, n * sizeof *seqs);
    x->nkeep += n;
    qsort(x->keep, x->nkeep, sizeof *x->keep, opt_u64_cmp);
    return 0;
}

/* The calls of pass @p pass in u[0..n) that mismatch, appended to *bad
 * (capacity n of the whole search). Only u is applied: every other call
 * of @p all (nall) is kept. @return 0, -1 failed (*st). */
static int opt_bisect(opt_vrun *x, plan_pass pass, const uint64_t *all, size_t nall, const uint64_t *u, size_t n,
                      int known_bad, uint64_t *bad, size_t *nbad, plan_status *st)
{
    if (!n)
        return 0;
    if (!known_bad) {
        if (x->res->replays >= x->v->max_replays) {   /* out of replays: the group goes whole */
            memcpy(bad + *nbad, u, n * sizeof *u);
            *nbad += n;
            return 0;
        }
        /* keep every call of the pass that is not in u */
        uint64_t *others = malloc((nall + 1) * sizeof *others);
        if (!others) {
            *st = plan_seterr(x->err, x->err_cap, PLAN_ERR_NOMEM, "out of memory");
            return -1;
        }
        size_t no = 0;
        for (size_t i = 0, j = 0; i < nall; i++) {
            while (j < n && u[j] < all[i])
                j++;
            if (j >= n || u[j] != all[i])
                others[no++] = all[i];
        }
        int r = opt_vtry(x, 1u << pass, others, no, st);
        free(others);
        if (r < 0)
            return -1;
        if (r)
            return 0;
    }
    if (n == 1) {
        bad[(*nbad)++] = u[0];
        return 0;
    }
    size_t before = *nbad, h = n / 2;
    if (opt_bisect(x, pass, all, nall, u, h, 0, bad, nbad, st) ||
        opt_bisect(x, pass, all, nall, u + h, n - h, 0, bad, nbad, st))
        return -1;
    if (*nbad == before) {   /* each half verifies alone, not both: both go */
        memcpy(bad + *nbad, u, n * sizeof *u);
        *nbad += n;
    }
    return 0;
}

/* Pass @p pass alone mismatched: its offending calls kept. */
static plan_status opt_vpass(opt_vrun *x, plan_pass pass, const plan_file *alone_rep)
{
    size_t n = 0;
    /* its calls one by one: a drop that repeats names only its first call */
    plan_file *alone = NULL;
    (void)alone_rep;
    x->o.no_repeat = 1;
    plan_status bs = opt_vbuild(x, 1u << pass, NULL, 0, &alone);
    x->o.no_repeat = 0;
    if (bs != PLAN_OK)
        return bs;
    uint64_t *all = malloc((plan_xform_count(alone) + 1) * sizeof *all);
    uint64_t *bad = malloc((plan_xform_count(alone) + 1) * sizeof *bad);
    plan_status st = PLAN_OK;
    if (!all || !bad) {
        st = plan_seterr(x->err, x->err_cap, PLAN_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < plan_xform_count(alone); i++)
        if (plan_get_xform(alone, i)->pass == pass)
            all[n++] = plan_get_xform(alone, i)->seq;
    qsort(all, n, sizeof *all, opt_u64_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)   /* one entry per call */
        if (!m || all[m - 1] != all[i])
            all[m++] = all[i];
    n = m;
    size_t nbad = 0;
    if (!n) {   /* nothing to bisect (a schedule): the pass goes */
        x->o.passes &= ~(1u << pass);
        x->res->removed++;
        opt_vsay(x, "pass %s removed: its plan does not replay verified here", plan_pass_name(pass));
        goto out;
    }
    if (opt_bisect(x, pass, all, n, all, n, 1, bad, &nbad, &st))
        goto out;
    if (opt_vkeep(x, bad, nbad)) {
        st = plan_seterr(x->err, x->err_cap, PLAN_ERR_NOMEM, "out of memory");
        goto out;
    }
    x->res->removed += nbad;
    char list[160] = "";
    for (size_t i = 0, k = 0; i < nbad && k + 24 < sizeof list; i++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s#%llu", i ? ", " : "", (unsigned long long)bad[i]);
    opt_vsay(x, "pass %s: %zu of %zu transformation%s removed, their replay mismatched (call%s %s%s)",
             plan_pass_name(pass), nbad, n, n == 1 ? "" : "s", nbad == 1 ? "" : "s", list,
             strlen(list) + 24 >= sizeof list && nbad > 1 ? ", ..." : "");
out:
    plan_free(alone);
    free(all);
    free(bad);
    return st;
}

static int opt_dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double opt_median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, opt_dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The seconds left of opt_verify.end_s (INFINITY: unbounded). */
static double opt_vleft(const opt_vrun *x)
{
    return x->v->end_s > 0 ? x->v->end_s - opt_now() : INFINITY;
}

/* The alternated pairs a timing may run in @p avail seconds: the caller's
 * reps at most, 0 when fewer than 3 fit (the replays as long as the
 * longest so far). */
static unsigned opt_vfit(const opt_vrun *x, double avail)
{
    unsigned n = x->v->reps < 3 ? 3 : x->v->reps > OPT_VERIFY_MAX_REPS ? OPT_VERIFY_MAX_REPS : x->v->reps;
    if (isinf(avail))
        return n;
    if (avail <= 0)
        return 0;
    if (x->res->replay_s <= 0)
        return n;
    double fit = avail / (2 * x->res->replay_s);
    if (fit < 3)
        return 0;
    return fit < n ? (unsigned)fit : n;
}

/* The seconds the final check's minimum (3 alternated pairs) takes, and
 * with @p stage the staging's after it (opt_vstage) when the trace has
 * transfers it would take. The passes' timings reserve the final check
 * only (a pass's gain comes before a staging decision's: the decisions
 * measured so far rarely won, a dead-work pass does), the tuning both. */
static double opt_vreserve(const opt_vrun *x, int stage)
{
    return (stage && x->stage_due ? 12 : 6) * x->res->replay_s;
}

/* What opt_vcompare measured: the medians with and without (ns), the
 * noise (relative), and the pairs: how many were timed, in how many the
 * plan with was the faster, the median of their ratios (with / without). */
typedef struct opt_vcmp {
    double mw, mo, noise, ratio;
    unsigned n, wins;
} opt_vcmp;

/* P[X >= @p k] for X ~ Binomial(@p n, 1/2): the one-sided sign test's
 * p-value of k wins in n pairs. */
static double opt_sign_p(unsigned k, unsigned n)
{
    double c = 1, sum = 0;   /* C(n, i), from i = 0 */
    for (unsigned i = 0; i <= n; i++) {
        if (i >= k)
            sum += c;
        c = c * (double)(n - i) / (double)(i + 1);
    }
    return sum / ldexp(1.0, (int)n);
}

/* The decision of the timings so far: 1 faster beyond the noise (the
 * median with below the median without by more than the noise, or the
 * pairs: a median ratio below 1 - OPT_PAIRED_MIN and a sign test at
 * OPT_PAIRED_P), 0 not yet. The pairs catch what the medians miss on a
 * machine whose speed drifts between replays far more than between the
 * two replays of one pair (cutcp on the H200: a gain of 9% against a
 * spread of 20% of whole replays). */
static int opt_vdecide(const double *with, const double *without, unsigned n, opt_vcmp *c)
{
    double a[OPT_VERIFY_MAX_REPS], b[OPT_VERIFY_MAX_REPS], r[OPT_VERIFY_MAX_REPS];
    double lo_o = without[0], hi_o = without[0];
    c->wins = 0;
    for (unsigned k = 0; k < n; k++) {
        a[k] = with[k];
        b[k] = without[k];
        r[k] = without[k] > 0 ? with[k] / without[k] : 1;
        c->wins += with[k] < without[k];
        lo_o = without[k] < lo_o ? without[k] : lo_o;
        hi_o = without[k] > hi_o ? without[k] : hi_o;
    }
    c->n = n;
    c->mw = opt_median(a, n);
    c->mo = opt_median(b, n);
    c->ratio = opt_median(r, n);
    /* the noise: half the spread of the runs without, at least 2% */
    double nz = c->mo > 0 ? (hi_o - lo_o) / 2 / c->mo : 0;
    c->noise = nz < 0.02 ? 0.02 : nz;
    return c->mw < c->mo * (1 - c->noise) ||
           (c->ratio < 1 - OPT_PAIRED_MIN && opt_sign_p(c->wins, n) <= OPT_PAIRED_P);
}

/* Plans @p p and @p q timed, *@p pn alternated pairs (the first of each
 * pair switching), for stage @p stage, into @p c. When that does not
 * decide but the pairs point to p (a median ratio below 1 -
 * OPT_PAIRED_MIN) and could still pass the sign test, more pairs are
 * timed, up to OPT_VERIFY_MAX_REPS, while they fit before @p until.
 * @return 1 p is faster beyond the noise, 0 not, -1 a replay failed or
 * mismatched (err). */
static int opt_vcompare(opt_vrun *x, const char *stage, const plan_file *p, const plan_file *q, unsigned *pn,
                        double until, opt_vcmp *c)
{
    unsigned n = *pn;
    double with[OPT_VERIFY_MAX_REPS] = {0}, without[OPT_VERIFY_MAX_REPS] = {0};
    int keep = 0;
    n = n < 1 ? 1 : n > OPT_VERIFY_MAX_REPS ? OPT_VERIFY_MAX_REPS : n;
    for (unsigned k = 0; k < n; k++) {
        const plan_file *a = k & 1 ? q : p, *b = k & 1 ? p : q;
        double ta = 0, tb = 0, t0;
        if (x->v->on_stage)
            x->v->on_stage(x->v->user, stage, 2 * k + 1, 2 * n, x->v->end_s > 0 ? opt_vleft(x) : -1);
        t0 = opt_now();
        if (x->v->time(x->v->user, a, &ta, x->err, x->err_cap))
            return -1;
        opt_vtook(x, opt_now() - t0);
        if (x->v->on_stage)
            x->v->on_stage(x->v->user, stage, 2 * k + 2, 2 * n, x->v->end_s > 0 ? opt_vleft(x) : -1);
        t0 = opt_now();
        if (x->v->time(x->v->user, b, &tb, x->err, x->err_cap))
            return -1;
        opt_vtook(x, opt_now() - t0);
        with[k] = k & 1 ? tb : ta;
        without[k] = k & 1 ? ta : tb;
        x->res->timed += 2;
        int fits = opt_now() + 2 * x->res->replay_s <= until;
        if (k + 1 >= 3 && k + 1 < n && !fits)
            n = k + 1;   /* the replays took longer than foreseen: the minimum is enough */
        if (k + 1 == n && n < OPT_VERIFY_MAX_REPS && fits) {
            keep = opt_vdecide(with, without, n, c);
            /* undecided, pointing to p, and all wins from here on would pass */
            if (!keep && c->ratio < 1 - OPT_PAIRED_MIN &&
                opt_sign_p(c->wins + (OPT_VERIFY_MAX_REPS - n), OPT_VERIFY_MAX_REPS) <= OPT_PAIRED_P)
                n++;
        }
    }
    *pn = n;
    return opt_vdecide(with, without, n, c);
}

/* Whether plan @p p (with pass @p pass) and @p q (without it) were timed
 * (@p n pairs, more while they fit before the end less @p reserve
 * seconds): 1 p is faster beyond the noise, 0 not, -1 a replay failed or
 * mismatched. */
static int opt_vtime(opt_vrun *x, plan_pass pass, const plan_file *p, const plan_file *q, unsigned n, double reserve)
{
    opt_vcmp c;
    int keep = opt_vcompare(x, plan_pass_name(pass), p, q, &n, x->v->end_s > 0 ? x->v->end_s - reserve : INFINITY, &c);
    if (keep < 0)
        return -1;
    if (keep) {
        x->res->gain_ns += c.mo - c.mw;
        x->res->pass_gain_ns[pass] = c.mo - c.mw;
    }
    opt_vsay(x, "pass %s %s: measured %.3f ms with it, %.3f ms without (medians of %u alternated replays, noise %.1f%%; "
             "faster in %u of %u pairs, median ratio %.3f)", plan_pass_name(pass), keep ? "kept" : "removed", c.mw / 1e6,
             c.mo / 1e6, c.n, c.noise * 100, c.wins, c.n, c.ratio);
    return keep;
}

/* Whether plan @p p has pass @p i's transformations (or schedule). */
static int opt_vhas(const plan_file *p, unsigned i)
{
    return plan_get_pass(p, (plan_pass)i)->transformations || (i == PLAN_PASS_SCHEDULE && plan_sched_count(p));
}

/* Every pass of *p that is not measured (not yet, or its timing cannot
 * run) is removed: nothing is kept for a gain that was not measured. */
static plan_status opt_vmeasure(opt_vrun *x, plan_file **p)
{
    if (!x->v->time)
        return PLAN_OK;
    x->res->measured = 1;
    if (x->v->end_s > 0 && opt_vchanges(*p) && !x->none_timed) {   /* the budget's unit: a replay without
                                                                      the plan (the plan's own may be far
                                                                      shorter) */
        plan_file *none = NULL;
        plan_status st = opt_vbuild(x, 0, NULL, 0, &none);
        if (st != PLAN_OK)
            return st;
        double ns = 0, t0 = opt_now();
        if (!x->v->time(x->v->user, none, &ns, x->err, x->err_cap))
            x->res->replay_s = opt_now() - t0;   /* the unit from here: the verification's first replay
                                                    built the programs cold (PoCL's kernel compiler: 0.8
                                                    s for chai-hsti's 0.1 s replay), the driver's cache
                                                    spares a later one that */
        x->err[0] = 0;
        plan_free(none);
    }
    unsigned drop = 0;
    char why[400] = "";
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++) {
        if (!((x->o.passes >> i) & 1))
            continue;
        if (why[0]) {   /* the timing stopped: no pass left is kept unmeasured (nor one that would take
                           what a removed pass leaves) */
            drop |= 1u << i;
            continue;
        }
        if (!opt_vhas(*p, i))
            continue;
        plan_file *q = NULL;
        plan_status st = opt_vbuild(x, x->o.passes & ~(1u << i), NULL, 0, &q);
        if (st != PLAN_OK)
            return st;
        /* a pass that is the whole plan is timed against no plan: kept, the
           final check would time the same again unless the tuning adds to
           it, which it does only where the check still fits */
        double left = opt_vleft(x), reserve = opt_vchanges(q) ? opt_vreserve(x, 0) : 0;
        unsigned n = opt_vfit(x, left - reserve);
        if (!n) {
            plan_free(q);
            snprintf(why, sizeof why, "not measured within --budget (3 alternated pairs of %.1f s replays need %.1f s, "
                     "%.1f s left less the final check's %.1f s)", x->res->replay_s, 6 * x->res->replay_s,
                     left > 0 ? left : 0, reserve);
            drop |= 1u << i;
            continue;
        }
        int keep = opt_vtime(x, (plan_pass)i, *p, q, n, reserve);
        if (keep == 0) {
            x->o.passes &= ~(1u << i);
            x->res->removed += plan_get_pass(*p, (plan_pass)i)->transformations +
                               (i == PLAN_PASS_SCHEDULE ? plan_sched_count(*p) : 0);
            x->res->slower++;
            plan_free(*p);
            *p = q;
            continue;
        }
        if (keep > 0 && !opt_vchanges(q))
            x->whole_pass = (int)i + 1;   /* this timing was the whole plan against no plan */
        plan_free(q);
        if (keep < 0) {   /* cannot measure here: this pass and those after it are not measured */
            snprintf(why, sizeof why, "not measured (%s)", x->err);
            x->err[0] = 0;
            drop |= 1u << i;
        }
    }
    if (!drop)
        return PLAN_OK;
    char names[160] = "";
    unsigned nd = 0;
    for (unsigned i = 0, k = 0; i < PLAN_PASS_COUNT; i++)
        if (((drop >> i) & 1) && opt_vhas(*p, i)) {
            x->res->removed += plan_get_pass(*p, (plan_pass)i)->transformations +
                               (i == PLAN_PASS_SCHEDULE ? plan_sched_count(*p) : 0);
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", nd ? ", " : "", plan_pass_name((plan_pass)i));
            nd++;
        }
    x->res->unmeasured += nd;
    x->o.passes &= ~drop;
    if (!nd)
        return PLAN_OK;   /* nothing of them in the plan */
    if (x->whole_pass && ((drop >> (x->whole_pass - 1)) & 1))
        x->whole_pass = 0;
    plan_file *q = NULL;
    plan_status st = opt_vbuild(x, x->o.passes, NULL, 0, &q);
    if (st != PLAN_OK)
        return st;
    plan_free(*p);
    *p = q;
    opt_vsay(x, "%s: pass%s %s removed, %s gain is not measured", why, nd == 1 ? "" : "es", names,
             nd == 1 ? "its" : "their");
    return PLAN_OK;
}

/* The tuning's transformations (local sizes, coarsenings) of @p p, and
 * their measured gain (before less after, on the device that measured
 * it, times the launches of the shape) into *gain. */
static int opt_vtuned(const plan_file *p, double *gain)
{
    int any = 0;
    *gain = 0;
    for (size_t i = 0; i < plan_xform_count(p); i++) {
        const plan_xform *x = plan_get_xform(p, i);
        if (x->action != PLAN_ACT_LOCAL_SIZE && x->action != PLAN_ACT_COARSEN)
            continue;
        any = 1;
        const plan_local *l = x->local ? plan_get_local(p, x->local - 1) : NULL;
        double best = 0;
        for (unsigned t = 0; l && t < l->ntuned; t++) {
            double g = (double)l->tuned[t].before_ns - (double)l->tuned[t].after_ns;
            best = g > best ? g : best;
        }
        *gain += best * (double)(x->occurrences ? x->occurrences : 1);
    }
    return any;
}

/* The tuning's transformations of @p from added to @p to (a plan of the
 * same trace with fewer passes): its coarsened kernels, tuned shapes and
 * local_size / coarsen transformations, in order (ids as in @p from, @p to
 * having none); a launch @p to transforms otherwise is left alone. */
static plan_status opt_vcopy_tuning(const plan_file *from, plan_file *to)
{
    plan_status st = PLAN_OK;
    for (size_t i = 0; st == PLAN_OK && i < plan_coarse_count(from); i++)
        st = plan_add_coarse(to, plan_get_coarse(from, i), NULL);
    for (size_t i = 0; st == PLAN_OK && i < plan_local_count(from); i++)
        st = plan_add_local(to, plan_get_local(from, i), NULL);
    size_t n0 = plan_xform_count(to);
    for (size_t i = 0; st == PLAN_OK && i < plan_xform_count(from); i++) {
        const plan_xform *x = plan_get_xform(from, i);
        if (x->action != PLAN_ACT_LOCAL_SIZE && x->action != PLAN_ACT_COARSEN)
            continue;
        int taken = 0;
        for (size_t j = 0; j < n0 && !taken; j++)
            taken = plan_get_xform(to, j)->seq == x->seq;
        if (taken)
            continue;
        if ((st = plan_add_xform(to, x)) == PLAN_OK)
            plan_pass_mut(to, PLAN_PASS_WGSIZE)->transformations++;
    }
    return st;
}

/* The plan of the passes in x->o.passes (and the tuning of @p p unless
 * @p no_tuning), the passes listed as in @p p, into *q. */
static plan_status opt_vremake(opt_vrun *x, const plan_file *p, int no_tuning, plan_file **q)
{
    plan_status st = opt_vbuild(x, x->o.passes, NULL, 0, q);
    if (st == PLAN_OK && !no_tuning)
        st = opt_vcopy_tuning(p, *q);
    if (st != PLAN_OK) {
        plan_free(*q);
        *q = NULL;
        return st;
    }
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++)
        plan_pass_mut(*q, (plan_pass)i)->enabled = plan_get_pass(p, (plan_pass)i)->enabled;
    return PLAN_OK;
}

/* *p replaced by opt_vremake's plan. */
static plan_status opt_vrebuild(opt_vrun *x, plan_file **p, int no_tuning)
{
    plan_file *q = NULL;
    plan_status st = opt_vremake(x, *p, no_tuning, &q);
    if (st != PLAN_OK)
        return st;
    plan_free(*p);
    *p = q;
    return PLAN_OK;
}

/* The final check: the whole plan *p against no plan; a class removed at a
 * time (least measured gain first) while it is not faster beyond the
 * noise; the plan emptied when one class is left and still not faster, or
 * when the check cannot be timed. */
static plan_status opt_vfinal(opt_vrun *x, plan_file **p)
{
    if (!x->v->time || !opt_vchanges(*p))
        return PLAN_OK;
    plan_status st;
    for (;;) {
        /* the classes left: the passes with transformations, the tuning */
        int cls[PLAN_PASS_COUNT + 1];
        double gain[PLAN_PASS_COUNT + 1], tg = 0;
        unsigned nc = 0;
        char names[200] = "";
        for (unsigned i = 0; i < PLAN_PASS_COUNT; i++)
            if (i != PLAN_PASS_WGSIZE && ((x->o.passes >> i) & 1) && opt_vhas(*p, i)) {
                cls[nc] = (int)i;
                gain[nc++] = x->res->pass_gain_ns[i];
            }
        if (opt_vtuned(*p, &tg)) {
            cls[nc] = -1;
            gain[nc++] = tg;
        }
        for (unsigned c = 0, k = 0; c < nc; c++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", c ? ", " : "",
                                  cls[c] < 0 ? "tuning" : plan_pass_name((plan_pass)cls[c]));
        if (!nc)
            return PLAN_OK;
        if (nc == 1 && cls[0] >= 0 && x->whole_pass == cls[0] + 1) {   /* measured so above */
            x->res->final_checked = x->res->final_kept = 1;
            x->res->final_gain_ns = gain[0];
            opt_vsay(x, "final check: the plan is pass %s alone, measured against no plan above: kept", names);
            return PLAN_OK;
        }
        /* the staging's pairs after it, unless only they make it fit: the
           passes' gains come first */
        double sres = x->stage_due ? 6 * x->res->replay_s : 0;
        double left = opt_vleft(x) - sres;
        unsigned n = opt_vfit(x, left);
        if (!n && sres > 0 && (n = opt_vfit(x, left + sres)) != 0) {
            left += sres;
            sres = 0;
        }
        int r = -2;
        opt_vcmp c = {0};
        plan_file *none = NULL;
        if (n) {
            if ((st = opt_vbuild(x, 0, NULL, 0, &none)) != PLAN_OK)
                return st;
            r = opt_vcompare(x, "final", *p, none, &n, x->v->end_s > 0 ? x->v->end_s - sres : INFINITY, &c);
            plan_free(none);
        }
        if (r == 1) {
            x->res->final_checked = x->res->final_kept = 1;
            x->res->final_gain_ns = c.mo - c.mw;
            opt_vsay(x, "final check: the whole plan (%s) kept: measured %.3f ms with it, %.3f ms without (medians "
                     "of %u alternated replays, noise %.1f%%; faster in %u of %u pairs, median ratio %.3f)", names,
                     c.mw / 1e6, c.mo / 1e6, c.n, c.noise * 100, c.wins, c.n, c.ratio);
            return PLAN_OK;
        }
        char what[400];
        if (r == -2)
            snprintf(what, sizeof what, "not measured within --budget (3 alternated pairs of %.1f s replays need "
                     "%.1f s, %.1f s left)", x->res->replay_s, 6 * x->res->replay_s, left > 0 ? left : 0);
        else if (r < 0)
            snprintf(what, sizeof what, "not measured (%s)", x->err);
        else
            snprintf(what, sizeof what, "not faster: measured %.3f ms with it, %.3f ms without (medians of %u "
                     "alternated replays, noise %.1f%%; faster in %u of %u pairs, median ratio %.3f)", c.mw / 1e6,
                     c.mo / 1e6, c.n, c.noise * 100, c.wins, c.n, c.ratio);
        x->err[0] = 0;
        x->res->final_checked = r >= 0;
        if (r < 0 || nc == 1) {   /* emptied: nothing is kept that is not measured faster */
            x->res->final_empty = 1;
            x->res->final_removed += nc;
            x->res->removed += plan_xform_count(*p) + plan_sched_count(*p);
            x->o.passes = 0;
            if ((st = opt_vrebuild(x, p, 1)) != PLAN_OK)
                return st;
            opt_vsay(x, "final check: the whole plan (%s) %s: every transformation removed", names, what);
            return PLAN_OK;
        }
        unsigned least = 0;
        for (unsigned c = 1; c < nc; c++)
            least = gain[c] < gain[least] ? c : least;
        x->res->final_removed++;
        if (cls[least] < 0) {
            x->res->removed += plan_get_pass(*p, PLAN_PASS_WGSIZE)->transformations;
            plan_remove_locals(*p);
        } else {
            x->res->removed += plan_get_pass(*p, (plan_pass)cls[least])->transformations +
                               (cls[least] == PLAN_PASS_SCHEDULE ? plan_sched_count(*p) : 0);
            x->o.passes &= ~(1u << cls[least]);
            if ((st = opt_vrebuild(x, p, 0)) != PLAN_OK)
                return st;
        }
        opt_vsay(x, "final check: the whole plan (%s) %s: %s removed (the least measured gain, %.3f ms), checked again",
                 names, what, cls[least] < 0 ? "the tuning's local sizes and coarsenings" : plan_pass_name((plan_pass)cls[least]),
                 gain[least] / 1e6);
    }
}

/* The last replay's large transfers into *ri: 1 a staging would be timed
 * for their device, 2 not, as it shares the host's memory and the mode is
 * auto, 0 none (or no staging asked, or nothing replayed yet). */
static int opt_vstage_info(const opt_vrun *x, opt_replay_info *ri)
{
    memset(ri, 0, sizeof *ri);
    if (!x->v->time || !x->v->replay_info || x->v->stage == OPT_STAGE_OFF)
        return 0;
    x->v->replay_info(x->v->user, ri);
    if (!ri->transfers || !ri->device[0] || ri->min_bytes < PLAN_STAGE_MIN_BYTES)
        return 0;
    return ri->unified && x->v->stage != OPT_STAGE_ALL ? 2 : 1;
}

/* Whether opt_vstage will time a staging (its pairs reserved). */
static void opt_vstage_due(opt_vrun *x)
{
    opt_replay_info ri;
    x->stage_due = opt_vstage_info(x, &ri) == 1;
}

/* A staging decision (plan 1.13) for the device of the last replay's
 * large transfers, timed as a pass: *p with it against *p without it. */
static plan_status opt_vstage(opt_vrun *x, plan_file **p)
{
    if (!x->v->time || !x->v->replay_info || x->v->stage == OPT_STAGE_OFF)
        return PLAN_OK;
    opt_replay_info ri;
    int want = opt_vstage_info(x, &ri);
    if (!ri.device[0] && x->res->replay_s <= 0) {   /* nothing replayed yet (a plan that changes nothing) */
        double ns = 0, t0 = opt_now();
        if (x->v->time(x->v->user, *p, &ns, x->err, x->err_cap)) {
            x->err[0] = 0;
            return PLAN_OK;   /* not replayable verified: nothing to decide */
        }
        opt_vtook(x, opt_now() - t0);
        x->res->timed++;
        want = opt_vstage_info(x, &ri);
    }
    if (!want)
        return PLAN_OK;   /* nothing a staging would take */
    if (want == 2) {
        if (x->v->stage == OPT_STAGE_DEFAULT)
            return PLAN_OK;   /* not asked for: nothing to say on every CPU device */
        opt_vsay(x, "staging not tried: %.200s shares the host's memory (its transfers are copies in host memory; "
                 "--stage all tries it)", ri.device);
        return PLAN_OK;
    }
    double left = opt_vleft(x);
    unsigned n = opt_vfit(x, left);
    if (!n) {
        opt_vsay(x, "staging not measured within --budget (3 alternated pairs of %.1f s replays need %.1f s, %.1f s "
                 "left)", x->res->replay_s, 6 * x->res->replay_s, left > 0 ? left : 0);
        return PLAN_OK;
    }
    plan_file *q = NULL;   /* *p with the decision */
    plan_stage e = {.device = ri.device, .driver = ri.driver, .min_bytes = ri.min_bytes, .transfers = ri.transfers,
                    .bytes = ri.bytes, .reps = 1};
    plan_status st = opt_vremake(x, *p, 0, &q);
    if (st == PLAN_OK && (st = plan_add_stage(q, &e)) != PLAN_OK)
        plan_free(q);
    if (st != PLAN_OK)
        return st;
    opt_vcmp c = {0};
    int r = opt_vcompare(x, "stage", q, *p, &n, x->v->end_s > 0 ? x->v->end_s : INFINITY, &c);
    x->res->stage_timed = r >= 0;
    /* not asked for (OPT_STAGE_DEFAULT), a faster staging is not written:
       the replays leave costs of the layer's out (on the H200, lbm's live
       staging lost more than its blocks' pinning), and a decision alone
       would load the layer where the plan has nothing else; a live run
       stages there by the layer's rule, as without it. A staging measured
       slower is written (unstaged): the rule then does not apply there. */
    int faster = r == 1 && c.mw < c.mo, quiet_win = faster && x->v->stage == OPT_STAGE_DEFAULT;
    plan_free(q);   /* rebuilt with the measured figures, or not kept */
    if (r >= 0 && !quiet_win) {   /* staging, or unstaged (1.14): the layer does not stage there by its rule */
        e.before_ns = (uint64_t)c.mo;
        e.after_ns = (uint64_t)c.mw;
        e.noise_ns = (uint64_t)(c.noise * c.mo);
        e.reps = c.n ? c.n : 1;
        if ((st = faster ? plan_add_stage(*p, &e) : plan_add_unstaged(*p, &e)) != PLAN_OK)
            return st;
        x->res->stage_kept = faster;
        x->res->stage_gain_ns = faster ? c.mo - c.mw : 0;
    }
    if (r < 0) {
        opt_vsay(x, "staging not measured (%s)", x->err);
        x->err[0] = 0;
        return PLAN_OK;
    }
    opt_vsay(x, "staging %s on %.200s: %llu transfers of %llu KiB or more (%.1f MiB): measured %.3f ms with it, %.3f "
             "ms without (medians of %u alternated replays, noise %.1f%%; faster in %u of %u pairs, median ratio "
             "%.3f)%s", x->res->stage_kept ? "kept" : quiet_win ? "faster, not written" : "not kept", ri.device, (unsigned long long)ri.transfers,
             (unsigned long long)(ri.min_bytes >> 10), (double)ri.bytes / 1048576.0, c.mw / 1e6, c.mo / 1e6, c.n,
             c.noise * 100, c.wins, c.n, c.ratio,
             x->res->stage_kept ? ""
             : quiet_win ? ": --stage auto writes it; a live run stages there by the layer's rule"
                         : "; written as unstaged: a live run does not stage there");
    return PLAN_OK;
}

/* After the verification: each pass measured, the caller's own measuring
 * (the tuning), the final check, the staging. */
static plan_status opt_vfinish(opt_vrun *x, plan_file **p)
{
    opt_vstage_due(x);
    plan_status st = opt_vmeasure(x, p);
    if (st != PLAN_OK)
        return st;
    if (x->v->after && x->v->time && x->res->replay_s <= 0) {   /* the budget's unit, before the tuning takes it */
        double ns = 0, t0 = opt_now();
        if (!x->v->time(x->v->user, *p, &ns, x->err, x->err_cap))
            opt_vtook(x, opt_now() - t0);
        x->err[0] = 0;
        opt_vstage_due(x);
    }
    if (x->v->after) {
        /* with end_s: what is left less the final check's reserve and the
         * replay that verifies what the tuning added */
        double b = x->v->end_s > 0 ? opt_vleft(x) - (x->v->time ? opt_vreserve(x, 1) : 0) - x->res->replay_s
                                   : x->v->after_budget_s;
        if (b < 1)
            opt_vsay(x, "tuning not run: %.1f s left within --budget, less the final check's %.1f s", opt_vleft(x) > 0 ? opt_vleft(x) : 0,
                     opt_vreserve(x, 1));
        else if ((st = x->v->after(x->v->user, *p, b, x->err, x->err_cap)) != PLAN_OK)
            return st;
    }
    if ((st = opt_vfinal(x, p)) != PLAN_OK)
        return st;
    return opt_vstage(x, p);
}

plan_status opt_optimize_verified(const char *path, const opt_options *o, const opt_verify *v, plan_file **out,
                                  opt_verify_result *res, char *err, size_t err_cap)
{
    opt_vrun x;
    memset(&x, 0, sizeof x);
    memset(res, 0, sizeof *res);
    x.path = path;
    x.o = *o;
    x.v = v;
    x.res = res;
    x.err = err;
    x.err_cap = err_cap;
    *out = NULL;
    plan_file *p = NULL;
    plan_status st = opt_optimize(path, o, &p, err, err_cap);
    if (st != PLAN_OK)
        return st;
    int r = opt_vreplay(&x, p);
    if (r < 0) {   /* failed with the plan: when the trace alone replays verified, the failure is the plan's */
        opt_options z = *o;
        z.passes = 0;
        plan_file *empty = NULL;
        char e2[512] = "";
        if (opt_optimize(path, &z, &empty, e2, sizeof e2) == PLAN_OK) {
            res->replays++;
            int r0 = v->replay(v->user, empty, e2, sizeof e2);
            plan_free(empty);
            if (r0 == 0) {
                x.plan_fails = 1;
                r = 0;
                opt_vsay(&x, "the plan's replay failed (%s), the trace alone replays verified: the transformations "
                         "that make it fail are left out", err);
                err[0] = 0;
            }
        }
    }
    if (r != 0) {   /* verified, or not replayable here (res->unverified says) */
        if (r < 0) {
            res->unverified = 1;
            snprintf(res->why, sizeof res->why, "%s", err);
            err[0] = 0;
        }
        for (unsigned i = 0; i < PLAN_PASS_COUNT; i++)
            plan_pass_mut(p, (plan_pass)i)->enabled = (o->passes >> i) & 1;
        if (r > 0 && (st = opt_vfinish(&x, &p)) != PLAN_OK) {
            plan_free(p);
            free(x.keep);
            return st;
        }
        *out = p;
        free(x.keep);
        return PLAN_OK;
    }
    uint64_t first = plan_xform_count(p) + plan_sched_count(p);
    /* 1. the trace alone */
    res->replays++;
    {
        opt_options z = *o;
        z.passes = 0;
        plan_file *empty = NULL;
        if ((st = opt_optimize(path, &z, &empty, err, err_cap)) != PLAN_OK)
            goto out;
        double t0 = opt_now();
        r = v->replay(v->user, empty, err, err_cap);
        plan_free(empty);
        if (r < 0) {
            st = PLAN_ERR_TRACE;
            goto out;
        }
        res->replay_s = opt_now() - t0;   /* the budget's unit (after the plan's replay, which built the
                                             programs): opt_vmeasure need not time one more */
        x.none_timed = 1;
        if (r == 2) {   /* another device: nothing here says what the results should be */
            res->unverified = 1;
            snprintf(res->why, sizeof res->why, "%s%smismatches even without a plan", err, err[0] ? ", which " : "");
            err[0] = 0;
            *out = p;
            return PLAN_OK;
        }
        plan_free(p);
        p = NULL;
        err[0] = 0;
        if (r) {
            res->baseline = 1;
            res->removed = first;
            x.o.passes = 0;
            opt_vsay(&x, "every transformation removed: the trace does not replay verified here even without a plan");
            goto last;
        }
    }
    /* 2., 3. each pass alone */
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++) {
        if (!((o->passes >> i) & 1))
            continue;
        plan_file *alone = NULL;
        if ((st = opt_vbuild(&x, 1u << i, NULL, 0, &alone)) != PLAN_OK)
            goto out;
        r = opt_vchanges(alone) ? (res->replays >= v->max_replays ? 0 : opt_vreplay(&x, alone)) : 1;
        if (r == 0)
            st = opt_vpass(&x, (plan_pass)i, alone);
        plan_free(alone);
        if (r < 0) {
            st = PLAN_ERR_TRACE;
            goto out;
        }
        if (st != PLAN_OK)
            goto out;
    }
    /* 4. together; passes wrong only together go from the last */
    for (;;) {
        if ((st = opt_vbuild(&x, x.o.passes, NULL, 0, &p)) != PLAN_OK)
            goto out;
        int out_of = res->replays >= v->max_replays && opt_vchanges(p);
        r = out_of ? 0 : opt_vreplay(&x, p);
        if (r < 0) {
            st = PLAN_ERR_TRACE;
            goto out;
        }
        if (r)
            break;   /* a plan that changes nothing always ends it */
        plan_free(p);
        p = NULL;
        int i = PLAN_PASS_COUNT - 1;
        while (i > 0 && !((x.o.passes >> i) & 1))
            i--;
        x.o.passes &= ~(1u << i);
        res->removed++;
        opt_vsay(&x, "pass %s removed: with the other passes its plan does not replay verified here%s",
                 plan_pass_name((plan_pass)i), out_of ? " (out of verification replays)" : "");
    }
last:
    if (!p && (st = opt_vbuild(&x, x.o.passes, NULL, 0, &p)) != PLAN_OK)
        goto out;
    /* the passes the caller asked for stay listed, with what is left of them */
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++)
        plan_pass_mut(p, (plan_pass)i)->enabled = (o->passes >> i) & 1;
    if (!res->baseline && (st = opt_vfinish(&x, &p)) != PLAN_OK)
        goto out;
    *out = p;
    p = NULL;
    st = PLAN_OK;
out:
    plan_free(p);
    free(x.keep);
    return st;
}

/* ------------------------------------------------------------ never slower live */

plan_status opt_live_check(const char *path, const opt_options *o, const opt_verify_result *vr, const struct cdb *costs,
                           void (*say)(void *user, const char *line), void *user, plan_file **p,
                           opt_live_result *res, char *err, size_t err_cap)
{
    memset(res, 0, sizeof *res);
    size_t nx = plan_xform_count(*p);
    int whole = vr && vr->final_checked;   /* the final check measured the whole plan */
    /* the parts: the passes' own timings and the tuned shapes' per-launch
       ones; the whole plan is credited with no more than they add up to
       (a whole replay's noise can exceed the tuning's gain many times) */
    double parts = vr && vr->measured ? vr->gain_ns : 0;
    int tuned = 0, others = 0;
    for (size_t i = 0; i < nx; i++) {
        const plan_xform *x = plan_get_xform(*p, i);
        if (x->action != PLAN_ACT_LOCAL_SIZE && x->action != PLAN_ACT_COARSEN) {
            others = 1;
            continue;
        }   /* a coarsening's measurements are its tuned shape's, as a local size's */
        const plan_local *l = x->local ? plan_get_local(*p, x->local - 1) : NULL;
        if (!l || !l->ntuned)
            continue;
        double best = 0;   /* the device it was measured on (one per tuning run) */
        for (unsigned t = 0; t < l->ntuned; t++) {
            double g = (double)l->tuned[t].before_ns - (double)l->tuned[t].after_ns;
            best = g > best ? g : best;
        }
        parts += best * (double)(x->occurrences ? x->occurrences : 1);
        tuned = 1;
    }
    double gain = whole && vr->final_gain_ns < parts ? vr->final_gain_ns : parts;
    /* a staging decision: its own timing, against the plan it was added to */
    int staged = plan_stage_count(*p) > 0 && vr && vr->stage_kept;
    gain += staged ? vr->stage_gain_ns : 0;
    if ((!nx && !staged) || (others && !(vr && vr->measured)) || (!others && !tuned && !staged))
        return PLAN_OK;   /* nothing to weigh, or rules that were not measured */
    cdb_layer_cost lc;
    cdb_get_layer(costs, &lc);
    res->checked = 1;
    res->calls = plan_get_info(*p)->trace_calls;
    res->cost_ns = (double)res->calls * lc.call_ns + lc.fixed_ns;
    res->gain_ns = gain;
    res->layer_runs = lc.runs;
    char line[640], how[160] = "";
    if (whole)
        snprintf(how, sizeof how, "; the smaller of the whole plan's %.3f ms and its parts' %.3f ms",
                 vr->final_gain_ns / 1e6, parts / 1e6);
    snprintf(line, sizeof line,
             "live: the plan's measured gain %.3f ms against what the layer costs a run, %.3f ms (%llu calls x %.2f us "
             "+ %.3f ms; %s): %s%s",
             gain / 1e6, res->cost_ns / 1e6, (unsigned long long)res->calls, lc.call_ns / 1e3, lc.fixed_ns / 1e6,
             lc.runs ? "medians of the cost database's layer records" : "the defaults, no run recorded one",
             gain > OPT_LIVE_MARGIN * res->cost_ns ? "kept" : "every transformation removed (clrr run will run without the layer)",
             how);
    if (say)
        say(user, line);
    if (gain > OPT_LIVE_MARGIN * res->cost_ns)
        return PLAN_OK;
    opt_options z = *o;
    z.passes = 0;
    plan_file *q = NULL;
    plan_status st = opt_optimize(path, &z, &q, err, err_cap);
    if (st != PLAN_OK)
        return st;
    for (unsigned i = 0; i < PLAN_PASS_COUNT; i++)
        plan_pass_mut(q, (plan_pass)i)->enabled = plan_get_pass(*p, (plan_pass)i)->enabled;
    plan_free(*p);
    *p = q;
    res->dropped = 1;
    return PLAN_OK;
}
