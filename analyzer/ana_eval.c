/* ana_eval.c — evaluation of affine forms over one launch: the range of
 * every symbol for a box of work-groups (ids, sizes, argument values, loop
 * counters), interval arithmetic, and the narrowing of those ranges by an
 * access's guards. Used by regions, contiguity and features. */
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana.h"
#include "analyzer/ana_kernel_int.h"

#define ANA_VAL_MAX ((int64_t)1 << 62)

static ana_ival ana_iv(int64_t lo, int64_t hi)
{
    ana_ival v = { 1, lo, hi };
    return v;
}

static const ana_ival ana_iv_none = { 0, 0, 0 };

static ana_ival ana_iv_fit(__int128 lo, __int128 hi)
{
    if (lo < -(__int128)INT64_MAX || hi > (__int128)INT64_MAX)
        return ana_iv_none;
    return ana_iv((int64_t)lo, (int64_t)hi);
}

static ana_ival ana_iv_mul(ana_ival a, ana_ival b)
{
    __int128 p[4], lo, hi;
    int i;
    if (!a.ok || !b.ok)
        return ana_iv_none;
    p[0] = (__int128)a.lo * b.lo;
    p[1] = (__int128)a.lo * b.hi;
    p[2] = (__int128)a.hi * b.lo;
    p[3] = (__int128)a.hi * b.hi;
    lo = hi = p[0];
    for (i = 1; i < 4; i++) {
        if (p[i] < lo) lo = p[i];
        if (p[i] > hi) hi = p[i];
    }
    return ana_iv_fit(lo, hi);
}

static ana_ival ana_iv_add(ana_ival a, ana_ival b)
{
    if (!a.ok || !b.ok)
        return ana_iv_none;
    return ana_iv_fit((__int128)a.lo + b.lo, (__int128)a.hi + b.hi);
}

ana_ival *ana_sym_range(ana_env *env, ana_sym s)
{
    if (s.kind >= ANA_SYM_GLOBAL_ID && s.kind <= ANA_SYM_GLOBAL_OFFSET && s.index < 3)
        return &env->id[s.kind][s.index];
    if (s.kind == ANA_SYM_ARG && s.index < env->k->nargs)
        return &env->args[s.index];
    if (s.kind == ANA_SYM_LOOP && s.index < env->k->nloops)
        return &env->loops[s.index];
    return NULL;
}

ana_ival ana_sym_ival(const ana_env *env, ana_sym s)
{
    const ana_ival *r = ana_sym_range((ana_env *)env, s);
    return r ? *r : ana_iv_none;
}

int ana_sym_is_varying(const ana_env *env, ana_sym s)
{
    if (s.kind == ANA_SYM_LOOP)
        return 1;
    return (s.kind == ANA_SYM_GLOBAL_ID || s.kind == ANA_SYM_LOCAL_ID ||
            s.kind == ANA_SYM_GROUP_ID) && s.index < env->work_dim;
}

ana_ival ana_eval(const ana_env *env, const ana_expr *e)
{
    ana_ival sum = ana_iv(0, 0);
    unsigned i;
    if (!e || !e->known)
        return ana_iv_none;
    for (i = 0; i < e->nterms && sum.ok; i++) {
        const ana_term *t = &e->terms[i];
        ana_ival v = ana_iv(t->coef, t->coef);
        if (t->a.kind != ANA_SYM_NONE)
            v = ana_iv_mul(v, ana_sym_ival(env, t->a));
        if (t->b.kind != ANA_SYM_NONE)
            v = ana_iv_mul(v, ana_sym_ival(env, t->b));
        sum = ana_iv_add(sum, v);
    }
    return sum;
}

/* Ranges of the loop counters, outer (lower index) first. */
static void ana_env_loops(ana_env *env)
{
    unsigned i;
    for (i = 0; i < env->k->nloops; i++) {
        const ana_loop *L = &env->k->loops[i];
        ana_ival s, e, st;
        env->loops[i] = ana_iv_none;   /* a loop may not name itself */
        s = ana_eval(env, &L->start);
        e = ana_eval(env, &L->end);
        st = L->step ? ana_iv(L->step, L->step) : ana_eval(env, &L->step_expr);
        if (!s.ok || !e.ok || !st.ok || (st.lo <= 0 && st.hi >= 0))
            continue;
        if (s.lo == s.hi && e.lo == e.hi && st.lo == st.hi) {
            /* one value each: the exact last value start + step * (trips - 1) */
            __int128 span = st.lo > 0 ? (__int128)e.lo - s.lo : (__int128)s.lo - e.lo;
            __int128 mag = st.lo > 0 ? st.lo : -(__int128)st.lo;
            __int128 trips = span <= 0 ? 1 : (span + mag - 1) / mag;
            __int128 last = (__int128)s.lo + (__int128)st.lo * (trips - 1);
            env->loops[i] = st.lo > 0 ? ana_iv_fit(s.lo, last) : ana_iv_fit(last, s.lo);
        } else if (st.lo > 0) {
            env->loops[i] = ana_iv(s.lo, e.hi - 1 > s.hi ? e.hi - 1 : s.hi);
        } else {
            env->loops[i] = ana_iv(e.lo + 1 < s.lo ? e.lo + 1 : s.lo, s.hi);
        }
    }
}

ana_status ana_env_init(ana_env *env, const ana_kernel *k, const ana_launch *l,
                        const uint64_t *group_lo, const uint64_t *group_hi)
{
    unsigned d, i;

    memset(env, 0, sizeof *env);
    if (!k || !l || l->work_dim < 1 || l->work_dim > 3 || (l->nargs && !l->args))
        return ANA_ERR_ARG;
    env->k = k;
    env->l = l;
    env->work_dim = l->work_dim;
    for (d = 0; d < 3; d++) {
        if (d >= l->work_dim) {
            env->local[d] = env->ngroups[d] = 1;
            env->id[ANA_SYM_GLOBAL_ID][d] = env->id[ANA_SYM_LOCAL_ID][d] =
                env->id[ANA_SYM_GROUP_ID][d] = env->id[ANA_SYM_GLOBAL_OFFSET][d] = ana_iv(0, 0);
            env->id[ANA_SYM_GLOBAL_SIZE][d] = env->id[ANA_SYM_LOCAL_SIZE][d] =
                env->id[ANA_SYM_NUM_GROUPS][d] = ana_iv(1, 1);
            continue;
        }
        {
            uint64_t G = l->global[d], L = l->local[d] ? l->local[d] : 1, off = l->offset[d];
            uint64_t glo = group_lo ? group_lo[d] : 0, ghi;
            if (G == 0 || G > (uint64_t)ANA_VAL_MAX || off > (uint64_t)ANA_VAL_MAX ||
                L > G)
                return ANA_ERR_ARG;
            env->local[d] = L;
            env->ngroups[d] = (G + L - 1) / L;
            ghi = group_hi ? group_hi[d] : env->ngroups[d];
            if (glo >= ghi || ghi > env->ngroups[d])
                return ANA_ERR_ARG;
            env->id[ANA_SYM_GROUP_ID][d] = ana_iv((int64_t)glo, (int64_t)ghi - 1);
            env->id[ANA_SYM_GLOBAL_ID][d] =
                ana_iv((int64_t)(off + glo * L),
                       (int64_t)(off + (ghi * L < G ? ghi * L : G)) - 1);
            env->id[ANA_SYM_LOCAL_ID][d] = ana_iv(0, (int64_t)L - 1);
            env->id[ANA_SYM_GLOBAL_SIZE][d] = ana_iv((int64_t)G, (int64_t)G);
            env->id[ANA_SYM_LOCAL_SIZE][d] = ana_iv((int64_t)L, (int64_t)L);
            env->id[ANA_SYM_NUM_GROUPS][d] =
                ana_iv((int64_t)env->ngroups[d], (int64_t)env->ngroups[d]);
            env->id[ANA_SYM_GLOBAL_OFFSET][d] = ana_iv((int64_t)off, (int64_t)off);
        }
    }
    env->args = calloc(k->nargs + 1, sizeof *env->args);
    env->loops = calloc(k->nloops + 1, sizeof *env->loops);
    if (!env->args || !env->loops) {
        ana_env_free(env);
        return ANA_ERR_NOMEM;
    }
    for (i = 0; i < k->nargs && i < l->nargs; i++)
        if (l->args[i].known && k->args[i].kind == ANA_ARG_SCALAR)
            env->args[i] = ana_iv(l->args[i].value, l->args[i].value);
    ana_env_loops(env);
    return ANA_OK;
}

void ana_env_free(ana_env *env)
{
    if (!env)
        return;
    free(env->args);
    free(env->loops);
    env->args = env->loops = NULL;
}

ana_status ana_env_copy(ana_env *dst, const ana_env *src)
{
    *dst = *src;
    dst->args = malloc((src->k->nargs + 1) * sizeof *dst->args);
    dst->loops = malloc((src->k->nloops + 1) * sizeof *dst->loops);
    if (!dst->args || !dst->loops) {
        ana_env_free(dst);
        return ANA_ERR_NOMEM;
    }
    memcpy(dst->args, src->args, (src->k->nargs + 1) * sizeof *dst->args);
    memcpy(dst->loops, src->loops, (src->k->nloops + 1) * sizeof *dst->loops);
    return ANA_OK;
}

/* ---------------------------------------------------------------- guards */

static int64_t ana_floor_div(int64_t a, int64_t b)   /* b > 0 */
{
    return a / b - (a % b != 0 && a < 0);
}

static int64_t ana_ceil_div(int64_t a, int64_t b)    /* b > 0 */
{
    return a / b + (a % b != 0 && a > 0);
}

/* Whether "v CMP 0" can hold for some v in @p v. */
static int ana_cmp_possible(ana_ival v, unsigned cmp)
{
    if (!v.ok)
        return 1;
    switch (cmp) {
    case ANA_CMP_LT: return v.lo < 0;
    case ANA_CMP_LE: return v.lo <= 0;
    case ANA_CMP_GT: return v.hi > 0;
    case ANA_CMP_GE: return v.hi >= 0;
    case ANA_CMP_EQ: return v.lo <= 0 && v.hi >= 0;
    default: return !(v.lo == 0 && v.hi == 0);
    }
}

/* From c*s + R CMP 0: narrows the range of s. Returns 0 when empty. */
static int ana_narrow(ana_ival *s, int64_t c, ana_ival R, unsigned cmp)
{
    int has_up = 0, has_low = 0;
    __int128 up = 0, low = 0;   /* c*s <= up, c*s >= low */

    if (!R.ok || !s->ok || c == 0)
        return 1;
    switch (cmp) {
    case ANA_CMP_LT: has_up = 1; up = -(__int128)R.lo - 1; break;
    case ANA_CMP_LE: has_up = 1; up = -(__int128)R.lo; break;
    case ANA_CMP_GT: has_low = 1; low = -(__int128)R.hi + 1; break;
    case ANA_CMP_GE: has_low = 1; low = -(__int128)R.hi; break;
    case ANA_CMP_EQ: has_up = has_low = 1; up = -(__int128)R.lo; low = -(__int128)R.hi; break;
    default: return 1;
    }
    if (up > ANA_VAL_MAX || up < -ANA_VAL_MAX || low > ANA_VAL_MAX || low < -ANA_VAL_MAX)
        return 1;
    if (c < 0) {    /* c*s <= up  <=>  (-c)*s >= -up */
        __int128 t = up;
        int th = has_up;
        up = -low;
        has_up = has_low;
        low = -t;
        has_low = th;
        c = -c;
    }
    if (has_up) {
        int64_t b = ana_floor_div((int64_t)up, c);
        if (b < s->hi)
            s->hi = b;
    }
    if (has_low) {
        int64_t b = ana_ceil_div((int64_t)low, c);
        if (b > s->lo)
            s->lo = b;
    }
    return s->lo <= s->hi;
}

int ana_env_tighten(ana_env *env, const ana_guard *g, unsigned n)
{
    unsigned pass, i, t;
    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < n; i++) {
            const ana_expr *e = &g[i].expr;
            if (!ana_cmp_possible(ana_eval(env, e), g[i].cmp))
                return 0;
            for (t = 0; t < e->nterms; t++) {
                const ana_term *x = &e->terms[t];
                ana_ival *r;
                ana_expr rest;
                if (x->b.kind != ANA_SYM_NONE || x->a.kind == ANA_SYM_NONE ||
                    !ana_sym_is_varying(env, x->a) || !(r = ana_sym_range(env, x->a)))
                    continue;
                rest = *e;
                memmove(&rest.terms[t], &rest.terms[t + 1],
                        (rest.nterms - t - 1) * sizeof rest.terms[0]);
                rest.nterms--;
                if (!ana_narrow(r, x->coef, ana_eval(env, &rest), g[i].cmp))
                    return 0;
            }
        }
    }
    return 1;
}

int ana_loop_trips(const ana_env *env, unsigned i, uint64_t *lo, uint64_t *hi)
{
    const ana_loop *L;
    ana_ival s, e, st;
    __int128 a, b;

    if (i >= env->k->nloops)
        return 0;
    L = &env->k->loops[i];
    s = ana_eval(env, &L->start);
    e = ana_eval(env, &L->end);
    st = L->step ? ana_iv(L->step, L->step) : ana_eval(env, &L->step_expr);
    if (!s.ok || !e.ok || !st.ok || (st.lo <= 0 && st.hi >= 0))
        return 0;
    if (st.lo > 0) {
        a = (__int128)e.lo - s.hi;   /* fewest: shortest span, largest step */
        b = (__int128)e.hi - s.lo;
        a = a <= 0 ? 0 : (a + st.hi - 1) / st.hi;
        b = b <= 0 ? 0 : (b + st.lo - 1) / st.lo;
    } else {
        a = (__int128)s.lo - e.hi;
        b = (__int128)s.hi - e.lo;
        a = a <= 0 ? 0 : (a - st.lo - 1) / -(__int128)st.lo;
        b = b <= 0 ? 0 : (b - st.hi - 1) / -(__int128)st.hi;
    }
    if (b > ANA_VAL_MAX)
        return 0;
    *lo = (uint64_t)a;
    *hi = (uint64_t)b;
    return 1;
}
