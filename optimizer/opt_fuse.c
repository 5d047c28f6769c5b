/* opt_fuse.c — the fuse pass's search: producer -> consumer launches that
 * vertical fusion can merge (PLAN.md, "Fusion").
 *
 * A pair (P, C) qualifies when, in the model's command order:
 *   - C is the command right after P, both launches on the same in-order
 *     queue, with the same NDRange (dimensions, offset, global and local
 *     sizes); P waits for no event and the application asked for no event
 *     of P (nothing else can observe P on its own);
 *   - P writes exactly one memory argument, B, through exactly one store
 *     (the kernel analysis: an exact offset, not in a loop), and reads
 *     nothing C writes; C reads B (never writes it) through no other
 *     argument, and every read of B is at P's store offset, as affine forms
 *     of the work-item ids once each launch's scalar arguments and sizes
 *     are put in (so the C work-item reads the element the same P
 *     work-item wrote, and no other);
 *   - the offset depends on get_global_id(0) (distinct work-items store
 *     distinct elements).
 * Where P does not store (a guard), the fused kernel reads B as C would
 * have (rewriter/rw.h): guards need not match. B is "dead after" the pair
 * when no later command reads it before the next run of the same P launch
 * overwrites it (or the trace ends): the fused kernel then never stores it.
 *
 * Such a dead pair grows into a chain (plan 1.5) while the launch after
 * its consumer forms a qualifying pair with the consumer, its own
 * intermediate is dead after it too, and it writes nothing any launch of
 * the chain touches: an array library's `t1 = a*b; t2 = t1*c; ...` becomes
 * one launch, and none of its temporaries is ever stored.
 *
 * A dead pair also grows backwards into a gather: while the launch before
 * its producer is another producer of the same consumer (a qualifying
 * pair with it, through another argument), independent of the producers
 * after it, with a dead output too: sobel's gx and gy, which share their
 * input image and are both read by the magnitude, become one launch with
 * it (horizontal fusion of gx and gy through their consumer). A gather's
 * consumer can then go on as a chain.
 *
 * Launches that no pair, chain or gather took are then grouped
 * horizontally: consecutive launches on one in-order queue with the same
 * NDRange, none of which passes memory another one writes, at least two of
 * which read the same memory object: one launch does each one's work, every
 * store kept (each keeps its own outputs; the shared input is loaded by one
 * kernel, its loads close together). */
#include "optimizer/opt_int.h"

#include "analyzer/ana.h"

#include <stdlib.h>
#include <string.h>

/* An affine form with the launch's values put in: sorted (symbol pair,
 * coefficient) terms and a constant. */
#define FZ_MAX 16
typedef struct fz_form {
    unsigned n;
    uint32_t key[FZ_MAX];     /* (a.kind, a.index, b.kind, b.index), 0 = constant */
    int64_t coef[FZ_MAX];
} fz_form;

static uint32_t fz_symkey(ana_sym s)
{
    return s.kind == ANA_SYM_NONE ? 0 : (uint32_t)s.kind << 8 | s.index;
}

/* The value of a size symbol in launch @p l (1 when known), or 0. */
static int fz_value(const ana_launch *l, ana_sym s, int64_t *v)
{
    unsigned d = s.index;
    switch (s.kind) {
    case ANA_SYM_ARG:
        if (s.index < l->nargs && l->args[s.index].known) {
            *v = l->args[s.index].value;
            return 1;
        }
        return 0;
    case ANA_SYM_GLOBAL_SIZE:
        if (d >= 3)
            return 0;
        *v = (int64_t)l->global[d];
        return 1;
    case ANA_SYM_GLOBAL_OFFSET:
        if (d >= 3)
            return 0;
        *v = (int64_t)l->offset[d];
        return 1;
    case ANA_SYM_LOCAL_SIZE:
        if (d >= 3 || !l->local[d])
            return 0;
        *v = (int64_t)l->local[d];
        return 1;
    case ANA_SYM_NUM_GROUPS:
        if (d >= 3 || !l->local[d])
            return 0;
        *v = (int64_t)(l->global[d] / l->local[d]);
        return 1;
    default:
        return 0;
    }
}

static int fz_add(fz_form *f, uint32_t key, int64_t coef)
{
    for (unsigned i = 0; i < f->n; i++)
        if (f->key[i] == key) {
            f->coef[i] += coef;
            return 0;
        }
    if (f->n == FZ_MAX)
        return -1;
    f->key[f->n] = key;
    f->coef[f->n++] = coef;
    return 0;
}

/* @p e with @p l's values put in; -1 when not affine, over a loop counter,
 * or too large. */
static int fz_norm(const ana_expr *e, const ana_launch *l, fz_form *f)
{
    memset(f, 0, sizeof *f);
    if (!e->known)
        return -1;
    for (unsigned t = 0; t < e->nterms; t++) {
        ana_sym s[2] = {e->terms[t].a, e->terms[t].b};
        int64_t coef = e->terms[t].coef;
        uint32_t keys[2] = {0, 0};
        unsigned nk = 0;
        for (int i = 0; i < 2; i++) {
            int64_t v;
            if (s[i].kind == ANA_SYM_NONE)
                continue;
            if (s[i].kind == ANA_SYM_LOOP)
                return -1;
            if (fz_value(l, s[i], &v)) {
                if (__builtin_mul_overflow(coef, v, &coef))
                    return -1;
            } else {
                keys[nk++] = fz_symkey(s[i]);
            }
        }
        if (nk == 2 && keys[0] > keys[1]) {
            uint32_t k = keys[0];
            keys[0] = keys[1];
            keys[1] = k;
        }
        uint32_t key = nk == 0 ? 0 : nk == 1 ? keys[0] : keys[0] << 16 | keys[1];
        if (fz_add(f, key, coef))
            return -1;
    }
    /* drop zero terms, sort by key */
    unsigned w = 0;
    for (unsigned i = 0; i < f->n; i++)
        if (f->coef[i]) {
            f->key[w] = f->key[i];
            f->coef[w++] = f->coef[i];
        }
    f->n = w;
    for (unsigned i = 1; i < f->n; i++)
        for (unsigned j = i; j > 0 && f->key[j - 1] > f->key[j]; j--) {
            uint32_t k = f->key[j];
            int64_t c = f->coef[j];
            f->key[j] = f->key[j - 1];
            f->coef[j] = f->coef[j - 1];
            f->key[j - 1] = k;
            f->coef[j - 1] = c;
        }
    return 0;
}

static int fz_equal(const fz_form *a, const fz_form *b)
{
    if (a->n != b->n)
        return 0;
    for (unsigned i = 0; i < a->n; i++)
        if (a->key[i] != b->key[i] || a->coef[i] != b->coef[i])
            return 0;
    return 1;
}

static int fz_has_gid0(const fz_form *f)
{
    uint32_t k = (uint32_t)ANA_SYM_GLOBAL_ID << 8;
    for (unsigned i = 0; i < f->n; i++)
        if (f->key[i] == k && f->coef[i])
            return 1;
    return 0;
}

static int fz_same_range(const ana_cmd *p, const ana_cmd *c)
{
    if (p->work_dim != c->work_dim || p->queue != c->queue || !p->in_order)
        return 0;
    for (unsigned d = 0; d < 3; d++)
        if (p->goff[d] != c->goff[d] || p->global[d] != c->global[d] || p->local[d] != c->local[d])
            return 0;
    return 1;
}

/* The memory object of argument @p a of launch @p c, 0 when none. */
static uint64_t fz_mem(const ana_cmd *c, unsigned a)
{
    return a < c->nargs && c->args[a].kind == ANA_KARG_MEM ? c->args[a].value : 0;
}

static int fz_is_mem_arg(const ana_arg *g)
{
    return g->kind == ANA_ARG_GLOBAL || g->kind == ANA_ARG_CONSTANT;
}

/* Why (P, C) does not qualify, or NULL (then *pb, *cb are B's indices). */
static const char *fz_check(const ana_model *m, const ana_cmd *p, const ana_cmd *c, unsigned *pb, unsigned *cb)
{
    const char *why = NULL;
    if (p->kind != ANA_CMD_KERNEL || c->kind != ANA_CMD_KERNEL)
        return "not two launches";
    if (!fz_same_range(p, c))
        return "not the same NDRange on one in-order queue";
    if (p->nwait || p->event)
        return "the producer has a wait list or an event";
    const ana_kernel *kp = ana_model_kernel(m, p->kernel, &why), *kc = ana_model_kernel(m, c->kernel, &why);
    if (!kp || !kc || kp->unsupported || kc->unsupported)
        return "a kernel is not analyzed";
    if (kp->features.barriers || kc->features.barriers || kp->features.atomics || kc->features.atomics)
        return "barriers or atomics";
    /* P writes one memory argument, B, once */
    int b = -1;
    for (unsigned a = 0; a < kp->nargs; a++) {
        const ana_arg *g = &kp->args[a];
        if (g->kind == ANA_ARG_LOCAL || g->kind == ANA_ARG_IMAGE || g->kind == ANA_ARG_PIPE || g->kind == ANA_ARG_OTHER)
            return "the producer has local, image or pipe arguments";
        if (!fz_is_mem_arg(g) || !(g->access & ANA_ACC_WRITE))
            continue;
        if (b >= 0)
            return "the producer writes two arguments";
        b = (int)a;
    }
    if (b < 0 || kp->args[b].access != ANA_ACC_WRITE)
        return "the producer does not only write one argument";
    uint64_t B = fz_mem(p, (unsigned)b);
    if (!B)
        return "the producer's output is not a memory object";
    const ana_mem_access *store = NULL;
    for (unsigned i = 0; i < kp->naccesses; i++) {
        const ana_mem_access *x = &kp->accesses[i];
        if (x->arg != (unsigned)b)
            continue;
        if (store || !x->is_write || x->is_atomic)
            return "the producer's output is accessed more than once";
        store = x;
    }
    if (!store)
        return "no store to the producer's output";
    /* C reads B through one argument, and writes nothing P touches */
    int cbuf = -1;
    for (unsigned a = 0; a < kc->nargs; a++) {
        const ana_arg *g = &kc->args[a];
        if (g->kind == ANA_ARG_LOCAL)
            return "the consumer has local arguments";
        uint64_t mem = fz_mem(c, a);
        if (!mem)
            continue;
        if (mem == B) {
            if (cbuf >= 0)
                return "the consumer names the buffer twice";
            if (g->access != ANA_ACC_READ || !fz_is_mem_arg(g))
                return "the consumer does not only read the buffer";
            cbuf = (int)a;
        } else if (g->access & ANA_ACC_WRITE) {
            for (unsigned q = 0; q < kp->nargs; q++)
                if (fz_mem(p, q) == mem)
                    return "the consumer writes memory the producer reads";
        }
    }
    if (cbuf < 0)
        return "the consumer does not read the producer's output";
    for (unsigned q = 0; q < kp->nargs; q++)
        if ((int)q != b && fz_mem(p, q) == B)
            return "the producer names its output twice";
    /* offsets: every C read of B at P's store offset */
    ana_argval pv[256], cv[256];
    ana_launch pl, cl;
    if (ana_model_launch(m, p, kp, &pl, pv, 256) != ANA_OK || ana_model_launch(m, c, kc, &cl, cv, 256) != ANA_OK)
        return "launch values unknown";
    fz_form fs, fr;
    if (fz_norm(&store->offset, &pl, &fs) || !fz_has_gid0(&fs))
        return "the store's offset is not an affine form of get_global_id(0)";
    unsigned reads = 0;
    for (unsigned i = 0; i < kc->naccesses; i++) {
        const ana_mem_access *x = &kc->accesses[i];
        if (x->arg != (unsigned)cbuf)
            continue;
        if (x->is_write || x->size != store->size)
            return "the consumer accesses the buffer otherwise";
        if (fz_norm(&x->offset, &cl, &fr) || !fz_equal(&fs, &fr))
            return "the consumer reads other elements than the producer's work-item wrote";
        reads++;
    }
    if (!reads)
        return "no read of the buffer";
    *pb = (unsigned)b;
    *cb = (unsigned)cbuf;
    return NULL;
}

/* 1 when the bytes of @p root are read after command index @p after before
 * a launch like @p p (same kernel, same NDRange) writes them again. */
static int fz_read_later(const ana_model *m, size_t after, const ana_cmd *p, uint64_t root)
{
    size_t n = ana_model_command_count(m);
    for (size_t i = after + 1; i < n; i++) {
        const ana_cmd *x = ana_model_command(m, i);
        int touches = 0, reads = 0;
        for (unsigned k = 0; k < x->nmem; k++)
            if (x->mem[k].root == root) {
                touches = 1;
                reads |= (x->mem[k].access & ANA_ACC_READ) != 0;
            }
        if (x->kind == ANA_CMD_NATIVE)
            return 1;
        if (!touches)
            continue;
        if (reads)
            return 1;
        if (x->kind == ANA_CMD_KERNEL && x->kernel == p->kernel && fz_same_range(p, x))
            return 0;   /* written again, the same elements */
        return 1;       /* another write: keep the stores, to be safe */
    }
    return 0;
}

/* 1 when launch @p next may join the chain @p f (launches f->seq[0..n-1]
 * at command indices @p at): what it writes none of them touches (it
 * writes its own output only; the pair check saw the last link). */
static int fz_chain_ok(const ana_model *m, const opt_fuse_pair *f, const size_t *at, const ana_cmd *next)
{
    const char *why = NULL;
    const ana_kernel *kn = ana_model_kernel(m, next->kernel, &why);
    if (!kn)
        return 0;
    for (unsigned a = 0; a < kn->nargs && a < next->nargs; a++) {
        uint64_t mem = fz_mem(next, a);
        if (!mem || !(kn->args[a].access & ANA_ACC_WRITE))
            continue;
        for (unsigned j = 0; j < f->n; j++) {
            const ana_cmd *x = ana_model_command(m, at[j]);
            for (unsigned q = 0; q < x->nargs; q++)
                if (fz_mem(x, q) == mem)
                    return 0;
        }
    }
    return 1;
}

/* 1 when launch @p q may be a producer of the gather whose other producers
 * are launches @p at[0..n-1] of @p f (in any order against them): it
 * passes none of their outputs and they pass none of its own (each writes
 * only its output, the pair checks saw to that). */
static int fz_gather_ok(const ana_model *m, const opt_fuse_pair *f, const size_t *at, const ana_cmd *q,
                        unsigned qout)
{
    uint64_t mine = fz_mem(q, qout);
    for (unsigned j = 0; j < f->n; j++) {
        const ana_cmd *x = ana_model_command(m, at[j]);
        uint64_t theirs = fz_mem(x, f->out[j]);
        for (unsigned a = 0; a < q->nargs; a++)
            if (fz_mem(q, a) == theirs)
                return 0;
        for (unsigned a = 0; a < x->nargs; a++)
            if (fz_mem(x, a) == mine)
                return 0;
    }
    return 1;
}

/* A dead pair (commands @p i, @p i + 1) grows backwards into a gather:
 * while the launch before the first producer is another producer of the
 * same consumer, independent of the others, whose output is dead after
 * the consumer too (sobel's gx and gy, both read by the magnitude: they
 * share their input, and neither intermediate is ever stored). @p lo: the
 * first command no earlier group took. Fills f and at with the producers
 * then the consumer. */
static void fz_gather(const ana_model *m, size_t i, size_t lo, opt_fuse_pair *f, size_t *at)
{
    const ana_cmd *c = ana_model_command(m, i + 1);
    unsigned np = 1;   /* producers found: at[PLAN_CHAIN_MAX - np ..] */
    size_t pat[PLAN_CHAIN_MAX];
    opt_fuse_pair g;   /* the producers found, in f's layout, for fz_gather_ok */
    memset(&g, 0, sizeof g);
    pat[0] = i;
    g.n = 1;
    g.out[0] = f->out[0];
    while (np + 1 < PLAN_CHAIN_MAX && i >= lo + np) {
        size_t k = i - np;
        const ana_cmd *q = ana_model_command(m, k);
        unsigned qb = 0, cb = 0;
        if (fz_check(m, q, c, &qb, &cb) || fz_read_later(m, i + 1, q, fz_mem(q, qb)) ||
            !fz_gather_ok(m, &g, pat, q, qb))
            break;
        pat[np] = k;
        g.out[np] = qb;
        g.in[np] = cb;
        g.n = ++np;
    }
    if (np == 1)
        return;
    unsigned cin = f->in[0];
    for (unsigned j = 0; j < np; j++) {   /* in command order: the earliest producer first */
        unsigned from = np - 1 - j;
        const ana_cmd *q = ana_model_command(m, pat[from]);
        at[j] = pat[from];
        f->seq[j] = q->seq;
        f->kernel[j] = q->kernel;
        f->out[j] = g.out[from];
        f->in[j] = from ? g.in[from] : cin;
        f->to[j] = np;
    }
    at[np] = i + 1;
    f->seq[np] = c->seq;
    f->kernel[np] = c->kernel;
    f->n = np + 1;
}

/* 1 when launch @p c may run in one kernel with a launch like @p p (the
 * group's first): the same NDRange on the same in-order queue, analyzed
 * kernels without barriers, atomics, __local memory, images or pipes. */
static int fz_side_ok(const ana_model *m, const ana_cmd *p, const ana_cmd *c)
{
    const char *why = NULL;
    if (c->kind != ANA_CMD_KERNEL || !fz_same_range(p, c))
        return 0;
    const ana_kernel *k = ana_model_kernel(m, c->kernel, &why);
    if (!k || k->unsupported || k->features.barriers || k->features.atomics)
        return 0;
    for (unsigned a = 0; a < k->nargs; a++) {
        const ana_arg *g = &k->args[a];
        if (g->kind == ANA_ARG_LOCAL || g->kind == ANA_ARG_IMAGE || g->kind == ANA_ARG_PIPE ||
            g->kind == ANA_ARG_OTHER || (fz_is_mem_arg(g) && a < c->nargs && c->args[a].kind != ANA_KARG_MEM))
            return 0;
    }
    return 1;
}

/* 1 when launches @p x and @p y are independent: no memory (by the bytes
 * that hold it: a sub-buffer by its buffer) that one writes and the other
 * touches (the kernel analysis's regions, as the model refined them);
 * *shared: both read some memory. */
static int fz_independent(const ana_cmd *x, const ana_cmd *y, int *shared)
{
    for (unsigned a = 0; a < x->nmem; a++)
        for (unsigned b = 0; b < y->nmem; b++) {
            const ana_memref *u = &x->mem[a], *v = &y->mem[b];
            if (u->root != v->root)
                continue;
            if ((u->access | v->access) & ANA_ACC_WRITE)
                return 0;
            *shared = 1;
        }
    return 1;
}

/* The horizontal groups among the launches no pair, chain or gather took
 * (*out holds those, in command order): appended to *out. */
static plan_status fz_horizontal(const ana_model *m, opt_fuse_pair **out, size_t *nout, size_t *cap)
{
    size_t n = ana_model_command_count(m), taken = 0, nvert = *nout;
    for (size_t i = 0; i + 1 < n; i++) {
        const ana_cmd *p = ana_model_command(m, i);
        /* skip launches a vertical group holds (groups are in command order) */
        while (taken < nvert && (*out)[taken].seq[(*out)[taken].n - 1] < p->seq)
            taken++;
        if (taken < nvert && (*out)[taken].seq[0] <= p->seq)
            continue;
        if (p->kind != ANA_CMD_KERNEL || p->nwait || p->event || !fz_side_ok(m, p, p))
            continue;
        size_t at[PLAN_CHAIN_MAX] = {i};
        unsigned k = 1;
        int shared = 0;
        while (k < PLAN_CHAIN_MAX && i + k < n) {
            const ana_cmd *c = ana_model_command(m, i + k);
            if (taken < nvert && (*out)[taken].seq[0] <= c->seq)
                break;   /* a vertical group's launch */
            if (!fz_side_ok(m, p, c))
                break;
            int ok = 1, sh = shared;
            for (unsigned j = 0; j < k && ok; j++)
                ok = fz_independent(ana_model_command(m, at[j]), c, &sh);
            const ana_cmd *last = ana_model_command(m, at[k - 1]);
            if (!ok || last->nwait || last->event)
                break;   /* (every launch but the group's last is held: no wait list, no event) */
            at[k] = i + k;
            k++;
            shared = sh;
        }
        while (k > 1 && !shared)   /* nothing read in common: nothing to gain */
            k = 1;
        if (k < 2)
            continue;
        if (plan_grow((void **)out, cap, *nout + 1, sizeof **out))
            return PLAN_ERR_NOMEM;
        opt_fuse_pair *f = &(*out)[(*nout)++];
        memset(f, 0, sizeof *f);
        f->n = k;
        f->horizontal = 1;
        f->keep_store = 1;
        for (unsigned j = 0; j < k; j++) {
            const ana_cmd *c = ana_model_command(m, at[j]);
            f->seq[j] = c->seq;
            f->kernel[j] = c->kernel;
        }
        i = at[k - 1];
    }
    return PLAN_OK;
}

plan_status opt_fuse_find(const ana_model *m, int horizontal, opt_fuse_pair **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    size_t n = ana_model_command_count(m), cap = 0, lo = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        const ana_cmd *p = ana_model_command(m, i), *c = ana_model_command(m, i + 1);
        unsigned pb = 0, cb = 0;
        if (fz_check(m, p, c, &pb, &cb))
            continue;
        if (plan_grow((void **)out, &cap, *nout + 1, sizeof **out)) {
            free(*out);
            *out = NULL;
            *nout = 0;
            return PLAN_ERR_NOMEM;
        }
        opt_fuse_pair *f = &(*out)[(*nout)++];
        memset(f, 0, sizeof *f);
        size_t at[PLAN_CHAIN_MAX] = {i, i + 1};
        f->n = 2;
        f->seq[0] = p->seq;
        f->seq[1] = c->seq;
        f->kernel[0] = p->kernel;
        f->kernel[1] = c->kernel;
        f->out[0] = pb;
        f->to[0] = 1;
        f->in[0] = cb;
        f->keep_store = fz_read_later(m, i + 1, p, fz_mem(p, pb));
        if (!f->keep_store)
            fz_gather(m, i, lo, f, at);
        /* a chain: while the next launch consumes what the last one made,
         * and every intermediate is dead after its consumer (so none is
         * stored and none is read but by the next link) */
        while (!f->keep_store && f->n < PLAN_CHAIN_MAX && at[f->n - 1] + 1 < n) {
            size_t li = at[f->n - 1];
            const ana_cmd *last = ana_model_command(m, li), *next = ana_model_command(m, li + 1);
            unsigned lb = 0, nb = 0;
            if (fz_check(m, last, next, &lb, &nb) || fz_read_later(m, li + 1, last, fz_mem(last, lb)) ||
                !fz_chain_ok(m, f, at, next))
                break;
            f->out[f->n - 1] = lb;
            f->to[f->n - 1] = f->n;
            f->in[f->n - 1] = nb;
            f->seq[f->n] = next->seq;
            f->kernel[f->n] = next->kernel;
            at[f->n++] = li + 1;
        }
        i = at[f->n - 1];   /* the consumer is not also the producer of the next pair */
        lo = i + 1;
    }
    return horizontal ? fz_horizontal(m, out, nout, &cap) : PLAN_OK;
}
