/* ana_contig.c — whether a kernel's writes to an argument split cleanly
 * across work-groups (SKMD's "contiguous" kernels).
 *
 * Each write's offset, with the launch's constants substituted, is a sum
 * of varying "digits" (ids, or group and local ids, and loop counters with
 * constant bounds) times byte strides. The footprint of a range of groups
 * along dimension d is one gap-free interval, and disjoint ranges give
 * disjoint intervals, exactly when the digits form a mixed-radix number:
 * sorted by stride, each stride equals the bytes covered by the digits
 * below it, and the digit that dimension d's groups select comes last. */
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana.h"
#include "analyzer/ana_kernel_int.h"

#define ANA_MAX_VARS 16
#define ANA_MAX_SHAPES 64

typedef struct ana_var {
    ana_sym s;               /* GLOBAL_ID, LOCAL_ID, GROUP_ID or LOOP */
    int64_t coef;            /* bytes per step, > 0 once normalized */
    uint64_t count;          /* values it takes, > 1 */
} ana_var;

typedef struct ana_shape {
    unsigned nv;
    ana_var v[ANA_MAX_VARS];
    int64_t k;               /* byte offset of the first element */
    uint64_t size;
} ana_shape;

static int ana_sym_eq(ana_sym a, ana_sym b)
{
    return a.kind == b.kind && a.index == b.index;
}

/* Whether "v CMP 0" holds for every v in @p v. */
static int ana_cmp_certain(ana_ival v, unsigned cmp)
{
    if (!v.ok)
        return 0;
    switch (cmp) {
    case ANA_CMP_LT: return v.hi < 0;
    case ANA_CMP_LE: return v.hi <= 0;
    case ANA_CMP_GT: return v.lo > 0;
    case ANA_CMP_GE: return v.lo >= 0;
    case ANA_CMP_EQ: return v.lo == 0 && v.hi == 0;
    default: return v.lo > 0 || v.hi < 0;
    }
}

static unsigned ana_count_varying(const ana_env *env, const ana_expr *e)
{
    ana_sym seen[2 * ANA_MAX_TERMS];
    unsigned n = 0, t, i, k;
    for (t = 0; t < e->nterms; t++) {
        ana_sym f[2] = { e->terms[t].a, e->terms[t].b };
        for (k = 0; k < 2; k++) {
            if (f[k].kind == ANA_SYM_NONE || !ana_sym_is_varying(env, f[k]))
                continue;
            for (i = 0; i < n && !ana_sym_eq(seen[i], f[k]); i++)
                ;
            if (i == n)
                seen[n++] = f[k];
        }
    }
    return n;
}

static int ana_var_add(ana_shape *sh, ana_sym s, __int128 coef)
{
    unsigned i;
    for (i = 0; i < sh->nv; i++)
        if (ana_sym_eq(sh->v[i].s, s))
            break;
    if (i == sh->nv) {
        if (sh->nv == ANA_MAX_VARS)
            return 0;
        sh->v[sh->nv].s = s;
        sh->v[sh->nv].coef = 0;
        sh->nv++;
    }
    coef += sh->v[i].coef;
    if (coef > INT64_MAX / 4 || coef < -(INT64_MAX / 4))
        return 0;
    sh->v[i].coef = (int64_t)coef;
    return 1;
}

static int ana_var_cmp(const void *x, const void *y)
{
    const ana_var *a = x, *b = y;
    unsigned oa = ana_sym_order(a->s), ob = ana_sym_order(b->s);
    return oa < ob ? -1 : oa > ob;
}

/* The shape of write @p a. @return 1 (shape in *sh), 0 (the write never
 * happens in this launch), -1 (not expressible: *why set), -2 (ENOMEM). */
static int ana_shape_of(const ana_env *full, const ana_mem_access *a, const int digits[3],
                        ana_shape *sh, const char **why)
{
    ana_env env;
    __int128 k = 0;
    unsigned t, i;
    int rc = -1;

    memset(sh, 0, sizeof *sh);
    if (ana_env_copy(&env, full) != ANA_OK)
        return -2;
    if (!ana_env_tighten(&env, a->guards, a->nguards)) {
        rc = 0;
        goto out;
    }
    for (i = 0; i < a->nguards; i++) {
        const ana_guard *g = &a->guards[i];
        unsigned nv = ana_count_varying(&env, &g->expr);
        if (ana_cmp_certain(ana_eval(&env, &g->expr), g->cmp) || nv == 0)
            continue;
        if (nv > 1) {
            *why = "a write is guarded by a condition on several ids or counters";
            goto out;
        }
        if (g->cmp == ANA_CMP_NE) {
            *why = "a write is guarded by a '!=' condition";
            goto out;
        }
    }
    for (t = 0; t < a->offset.nterms; t++) {
        const ana_term *x = &a->offset.terms[t];
        ana_sym f[2] = { x->a, x->b }, var = { ANA_SYM_NONE, 0 };
        __int128 c = x->coef;
        unsigned nvar = 0;
        for (i = 0; i < 2; i++) {
            ana_ival v;
            if (f[i].kind == ANA_SYM_NONE)
                continue;
            if (ana_sym_is_varying(&env, f[i])) {
                var = f[i];
                nvar++;
                continue;
            }
            v = ana_sym_ival(full, f[i]);
            if (!v.ok || v.lo != v.hi) {
                *why = "a write depends on a value not known at this launch";
                goto out;
            }
            c *= v.lo;
        }
        if (nvar > 1) {
            *why = "a write's offset multiplies two varying values";
            goto out;
        }
        if (c > INT64_MAX / 4 || c < -(INT64_MAX / 4)) {
            *why = "offsets too large";
            goto out;
        }
        if (nvar == 0)
            k += c;
        else if (!ana_var_add(sh, var, c)) {
            *why = "a write's offset has too many terms";
            goto out;
        }
    }
    /* global ids of dimensions written through group/local ids: split */
    for (i = 0; i < sh->nv; i++) {
        ana_var *v = &sh->v[i];
        unsigned d = v->s.index;
        if (v->s.kind == ANA_SYM_GLOBAL_ID && digits[d] && v->coef) {
            int64_t c = v->coef;
            ana_ival gi = env.id[ANA_SYM_GLOBAL_ID][d], gf = full->id[ANA_SYM_GLOBAL_ID][d];
            if (gi.lo != gf.lo || gi.hi != gf.hi) {
                *why = "a guard bounds a global id while the offset uses group or local ids";
                goto out;
            }
            v->coef = 0;
            k += (__int128)c * full->id[ANA_SYM_GLOBAL_OFFSET][d].lo;
            if (!ana_var_add(sh, ana_sym_make(ANA_SYM_GROUP_ID, d),
                             (__int128)c * (int64_t)full->local[d]) ||
                !ana_var_add(sh, ana_sym_make(ANA_SYM_LOCAL_ID, d), c)) {
                *why = "a write's offset has too many terms";
                goto out;
            }
            v = &sh->v[i];
        }
    }
    /* each digit: its first value, its count, a positive stride */
    for (i = 0; i < sh->nv; i++) {
        ana_var *v = &sh->v[i];
        int64_t lo, step = 1;
        uint64_t count;
        if (v->coef == 0)
            continue;
        if (v->s.kind == ANA_SYM_LOOP) {
            const ana_loop *L = &full->k->loops[v->s.index];
            ana_ival s = ana_eval(full, &L->start), e = ana_eval(full, &L->end);
            ana_ival st = L->step ? (ana_ival){ 1, L->step, L->step }
                                  : ana_eval(full, &L->step_expr);
            ana_ival nat = full->loops[v->s.index], now = env.loops[v->s.index];
            uint64_t tlo, thi;
            if (!s.ok || !e.ok || !st.ok || s.lo != s.hi || e.lo != e.hi || st.lo != st.hi) {
                *why = "a loop's bounds or step vary between work-items or are unknown";
                goto out;
            }
            if (nat.lo != now.lo || nat.hi != now.hi) {
                *why = "a write is guarded by a condition on a loop counter";
                goto out;
            }
            if (!ana_loop_trips(full, v->s.index, &tlo, &thi) || tlo != thi) {
                *why = "a loop's trip count is unknown";
                goto out;
            }
            if (thi == 0) {
                rc = 0;
                goto out;
            }
            lo = s.lo;
            step = st.lo;
            count = thi;
        } else {
            ana_ival r = env.id[v->s.kind][v->s.index];
            if (!r.ok) {
                *why = "an id's range is unknown";
                goto out;
            }
            lo = r.lo;
            count = (uint64_t)(r.hi - r.lo) + 1;
        }
        k += (__int128)v->coef * lo;
        if ((__int128)v->coef * step > INT64_MAX / 4 || (__int128)v->coef * step < -(INT64_MAX / 4)) {
            *why = "offsets too large";
            goto out;
        }
        v->coef *= step;
        v->count = count;
        if (v->coef < 0) {   /* walk it backwards */
            k += (__int128)v->coef * (__int128)(count - 1);
            v->coef = -v->coef;
        }
    }
    /* keep the digits that move */
    {
        unsigned n = 0;
        for (i = 0; i < sh->nv; i++)
            if (sh->v[i].coef != 0 && sh->v[i].count > 1)
                sh->v[n++] = sh->v[i];
        sh->nv = n;
    }
    qsort(sh->v, sh->nv, sizeof sh->v[0], ana_var_cmp);
    if (k > INT64_MAX / 4 || k < -(INT64_MAX / 4)) {
        *why = "offsets too large";
        goto out;
    }
    sh->k = (int64_t)k;
    sh->size = a->size;
    rc = 1;
out:
    ana_env_free(&env);
    return rc;
}

static int ana_same_digits(const ana_shape *a, const ana_shape *b)
{
    unsigned i;
    if (a->nv != b->nv)
        return 0;
    for (i = 0; i < a->nv; i++)
        if (!ana_sym_eq(a->v[i].s, b->v[i].s) || a->v[i].coef != b->v[i].coef ||
            a->v[i].count != b->v[i].count)
            return 0;
    return 1;
}

static int ana_k_cmp(const void *x, const void *y)
{
    const ana_shape *a = x, *b = y;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* The mixed-radix test for splits along dimension @p d. */
static int ana_split_ok(const ana_env *env, ana_shape *sh, unsigned n, const int digits[3],
                        unsigned d, const char **why)
{
    ana_sym split = ana_sym_make(digits[d] ? ANA_SYM_GROUP_ID : ANA_SYM_GLOBAL_ID, d);
    const ana_var *sv = NULL;
    ana_var others[ANA_MAX_VARS];
    unsigned no = 0, i, j;
    __int128 block, end;

    qsort(sh, n, sizeof *sh, ana_k_cmp);
    end = (__int128)sh[0].k + sh[0].size;
    for (i = 1; i < n; i++) {   /* the inner block: the writes' bytes side by side */
        if (sh[i].k > end) {
            *why = "the writes of one work-item leave gaps";
            return 0;
        }
        if ((__int128)sh[i].k + sh[i].size > end)
            end = (__int128)sh[i].k + sh[i].size;
    }
    block = end - sh[0].k;
    for (i = 0; i < sh[0].nv; i++) {
        if (ana_sym_eq(sh[0].v[i].s, split))
            sv = &sh[0].v[i];
        else
            others[no++] = sh[0].v[i];
    }
    for (i = 1; i < no; i++)   /* by stride */
        for (j = i; j > 0 && others[j - 1].coef > others[j].coef; j--) {
            ana_var t = others[j];
            others[j] = others[j - 1];
            others[j - 1] = t;
        }
    for (i = 0; i < no; i++) {
        if (others[i].coef != block) {
            *why = others[i].coef > block ? "the written bytes have gaps between work-items"
                                          : "work-items write overlapping bytes";
            return 0;
        }
        block *= others[i].count;
        if (block > INT64_MAX / 4) {
            *why = "offsets too large";
            return 0;
        }
    }
    if (!sv) {
        if (env->ngroups[d] > 1) {
            *why = "every range of groups along the split writes the same bytes";
            return 0;
        }
        return 1;
    }
    if (sv->coef != block) {
        *why = sv->coef > block ? "groups along the split leave gaps between their bytes"
                                : "groups along the split write overlapping bytes";
        return 0;
    }
    return 1;
}

ana_status ana_kernel_contiguity(const ana_kernel *k, const ana_launch *l, unsigned arg,
                                 ana_contiguity *out)
{
    ana_env env;
    ana_status st;
    ana_shape *sh = NULL;
    unsigned i, n = 0, d, nmulti = 0, multi_dim = 0;
    int digits[3] = { 0, 0, 0 };
    const char *why = NULL, *dim_why[3] = { NULL, NULL, NULL };
    uint8_t kind;

    if (!k || !l || !out || arg >= k->nargs)
        return ANA_ERR_ARG;
    kind = k->args[arg].kind;
    if (kind != ANA_ARG_GLOBAL && kind != ANA_ARG_CONSTANT && kind != ANA_ARG_LOCAL)
        return ANA_ERR_ARG;
    st = ana_env_init(&env, k, l, NULL, NULL);
    if (st != ANA_OK)
        return st;
    memset(out, 0, sizeof *out);
    if (k->unsupported) {
        why = "the kernel is not analyzed";
        goto out;
    }
    if (!(k->args[arg].access & ANA_ACC_WRITE)) {
        why = "the kernel does not write this argument";
        goto out;
    }
    sh = calloc(ANA_MAX_SHAPES, sizeof *sh);
    if (!sh) {
        st = ANA_ERR_NOMEM;
        goto out;
    }
    for (i = 0; i < k->naccesses; i++) {
        const ana_mem_access *a = &k->accesses[i];
        if (a->arg != arg || !(a->is_write || a->is_atomic))
            continue;
        if (!a->offset.known) {
            why = "a write's offset is unknown";
            goto out;
        }
        for (unsigned t = 0; t < a->offset.nterms; t++) {
            ana_sym f[2] = { a->offset.terms[t].a, a->offset.terms[t].b };
            for (unsigned q = 0; q < 2; q++)
                if ((f[q].kind == ANA_SYM_LOCAL_ID || f[q].kind == ANA_SYM_GROUP_ID) &&
                    f[q].index < env.work_dim)
                    digits[f[q].index] = 1;
        }
    }
    for (d = 0; d < env.work_dim; d++)
        if (digits[d] && l->global[d] % env.local[d] != 0) {
            why = "non-uniform work-groups";
            goto out;
        }
    for (i = 0; i < k->naccesses; i++) {
        const ana_mem_access *a = &k->accesses[i];
        int r;
        if (a->arg != arg || !(a->is_write || a->is_atomic))
            continue;
        if (n == ANA_MAX_SHAPES) {
            why = "too many writes";
            goto out;
        }
        r = ana_shape_of(&env, a, digits, &sh[n], &why);
        if (r == -2)
            st = ANA_ERR_NOMEM;
        if (r < 0)
            goto out;
        if (r == 0)
            continue;
        if (n > 0 && !ana_same_digits(&sh[0], &sh[n])) {
            why = "writes of different shapes";
            goto out;
        }
        n++;
    }
    if (n == 0) {
        why = "no write happens in this launch";
        goto out;
    }
    for (d = 0; d < env.work_dim; d++) {
        out->dim[d] = ana_split_ok(&env, sh, n, digits, d, &dim_why[d]);
        if (env.ngroups[d] > 1) {
            nmulti++;
            multi_dim = d;
        }
    }
    if (nmulti > 1) {
        why = "the work-groups form a grid: a run of consecutive groups is not a box";
    } else {
        out->linear = out->dim[multi_dim];
        why = out->linear ? NULL : dim_why[multi_dim];
    }
out:
    if (st == ANA_OK)
        out->reason = out->linear ? NULL : why ? why : "not contiguous";
    free(sh);
    ana_env_free(&env);
    return st;
}
