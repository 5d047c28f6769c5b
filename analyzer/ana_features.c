/* ana_features.c — per-launch kernel features: sizes of the launch, the
 * stride class of every access along get_global_id(0), and dynamic
 * operation counts with loop trip counts the launch's constants make
 * computable. */
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana.h"
#include "analyzer/ana_kernel_int.h"

/* Whether loop @p i runs the same values for neighbours along dimension
 * 0: its range is known and its bounds do not name ids of dimension 0. */
static int ana_loop_steady(const ana_env *env, unsigned i)
{
    const ana_loop *L;
    ana_sym g = ana_sym_make(ANA_SYM_GLOBAL_ID, 0), l = ana_sym_make(ANA_SYM_LOCAL_ID, 0);
    if (i >= env->k->nloops || !env->loops[i].ok)
        return 0;
    L = &env->k->loops[i];
    return !ana_expr_uses(&L->start, g) && !ana_expr_uses(&L->start, l) &&
           !ana_expr_uses(&L->end, g) && !ana_expr_uses(&L->end, l);
}

/* The byte stride of @p a between neighbours along dimension 0. */
static ana_stride ana_stride_of(const ana_env *env, const ana_mem_access *a)
{
    __int128 stride = 0;
    unsigned t;
    if (!a->offset.known)
        return ANA_STRIDE_UNKNOWN;
    for (t = 0; t < a->offset.nterms; t++) {
        const ana_term *x = &a->offset.terms[t];
        ana_sym f[2] = { x->a, x->b };
        int along = 0, other_varying = 0;
        __int128 c = x->coef;
        for (unsigned i = 0; i < 2; i++) {
            if (f[i].kind == ANA_SYM_NONE)
                continue;
            if ((f[i].kind == ANA_SYM_GLOBAL_ID || f[i].kind == ANA_SYM_LOCAL_ID) &&
                f[i].index == 0) {
                along++;
            } else if (f[i].kind == ANA_SYM_LOOP && !ana_loop_steady(env, f[i].index)) {
                return ANA_STRIDE_UNKNOWN;
            } else if (ana_sym_is_varying(env, f[i])) {
                other_varying = 1;
            } else {
                ana_ival v = ana_sym_ival(env, f[i]);
                if (!v.ok || v.lo != v.hi)
                    other_varying = 1;
                else
                    c *= v.lo;
            }
        }
        if (!along)
            continue;
        if (along > 1 || other_varying)
            return ANA_STRIDE_UNKNOWN;
        stride += c;
    }
    if (stride == 0)
        return ANA_STRIDE_INVARIANT;
    if (stride == a->size || stride == -(__int128)a->size)
        return ANA_STRIDE_UNIT;
    return ANA_STRIDE_STRIDED;
}

ana_status ana_kernel_features(const ana_kernel *k, const ana_launch *l, ana_features *out)
{
    ana_env env;
    ana_status st;
    double *mult = NULL;
    unsigned i, d;
    double own_ops = 0, own_loads = 0, own_stores = 0;
    double dyn_ops = 0, dyn_loads = 0, dyn_stores = 0;

    if (!k || !l || !out)
        return ANA_ERR_ARG;
    st = ana_env_init(&env, k, l, NULL, NULL);
    if (st != ANA_OK)
        return st;
    memset(out, 0, sizeof *out);
    out->stat = k->features;
    out->work_items = out->work_groups = 1;
    for (d = 0; d < env.work_dim; d++) {
        out->work_items *= l->global[d];
        out->work_groups *= env.ngroups[d];
    }
    for (i = 0; i < k->naccesses; i++)
        out->accesses_by_stride[ana_stride_of(&env, &k->accesses[i])]++;
    mult = calloc(k->nloops + 1, sizeof *mult);
    if (!mult) {
        st = ANA_ERR_NOMEM;
        goto out;
    }
    /* each loop's iterations per work-item: its trip count (the middle of
     * its range; 1 when unknown) times its parent's */
    for (i = 0; i < k->nloops; i++) {
        const ana_loop *L = &k->loops[i];
        uint64_t lo, hi;
        double trips = 1;
        if (ana_loop_trips(&env, i, &lo, &hi)) {
            if (!L->bytes) {
                out->loops_known++;
                if (hi > out->max_trip_count)
                    out->max_trip_count = hi;
            }
            trips = ((double)lo + (double)hi) / 2;
        }
        mult[i] = trips * (L->parent >= 0 && (unsigned)L->parent < i ? mult[L->parent] : 1);
        own_ops += L->ops;
        own_loads += L->loads;
        own_stores += L->stores;
        dyn_ops += L->ops * mult[i];
        dyn_loads += L->loads * mult[i];
        dyn_stores += L->stores * mult[i];
    }
    out->dyn_ops = (double)k->features.int_ops + k->features.float_ops - own_ops + dyn_ops;
    out->dyn_loads = (double)k->features.loads - own_loads + dyn_loads;
    out->dyn_stores = (double)k->features.stores - own_stores + dyn_stores;
    st = ANA_OK;
out:
    free(mult);
    ana_env_free(&env);
    return st;
}
