/* ana_llvm_guards.c — the guards of a block: the conditions of the branch
 * edges that dominate it (an edge dominates a block when its target has
 * that one predecessor and dominates the block), split into conjuncts and
 * kept when they are affine comparisons. Cached per block, in the
 * program's arena (accesses of one block share them). */
#include <string.h>

#include "analyzer/ana_llvm_int.h"

typedef struct ana_guard_ctx {
    ana_fn *f;
    ana_vec *gs;             /* ana_guard */
    unsigned block;          /* the block guarded */
} ana_guard_ctx;

/* A guard that names the counter of a loop the block is not in speaks of
 * that counter's value after its loop: true, but of no use; dropped. */
static int ana_guard_in_scope(const ana_fn *f, const ana_expr *e, unsigned block)
{
    unsigned t;
    for (t = 0; t < e->nterms; t++) {
        const ana_sym *s[2] = { &e->terms[t].a, &e->terms[t].b };
        for (unsigned k = 0; k < 2; k++) {
            const ana_counter *c;
            if (s[k]->kind != ANA_SYM_LOOP || s[k]->index >= f->counters.n)
                continue;
            c = ANA_VEC_AT(&f->counters, ana_counter, s[k]->index);
            if (c->nloop < 0 || !f->nloops[c->nloop].in[block])
                return 0;
        }
    }
    return 1;
}

/* Orients a guard so that its first id or counter term is positive
 * ("gid0 < n - 1" rather than "n > gid0 + 1"). */
static void ana_guard_orient(ana_guard *g)
{
    static const ana_cmp flip[] = { [ANA_CMP_LT] = ANA_CMP_GT, [ANA_CMP_LE] = ANA_CMP_GE,
                                    [ANA_CMP_GT] = ANA_CMP_LT, [ANA_CMP_GE] = ANA_CMP_LE,
                                    [ANA_CMP_EQ] = ANA_CMP_EQ, [ANA_CMP_NE] = ANA_CMP_NE };
    const ana_term *pick = NULL;
    unsigned t;
    for (t = 0; t < g->expr.nterms && !pick; t++) {
        const ana_term *x = &g->expr.terms[t];
        unsigned k = x->a.kind;
        if (x->b.kind == ANA_SYM_NONE && (k == ANA_SYM_GLOBAL_ID || k == ANA_SYM_LOCAL_ID ||
                                          k == ANA_SYM_GROUP_ID || k == ANA_SYM_LOOP))
            pick = x;
    }
    if (!pick && g->expr.nterms > 0 && g->expr.terms[0].a.kind != ANA_SYM_NONE)
        pick = &g->expr.terms[0];
    if (pick && pick->coef < 0) {
        ana_expr_scale(&g->expr, &g->expr, -1);
        g->cmp = (uint8_t)flip[g->cmp];
    }
}

static void ana_guard_add(void *ctx, LLVMValueRef icmp, int truth)
{
    ana_guard_ctx *g = ctx;
    ana_guard ng, *slot;
    ana_cmp c;
    size_t i;

    if (!ana_icmp_form(g->f, icmp, truth, &ng.expr, &c) ||
        !ana_guard_in_scope(g->f, &ng.expr, g->block))
        return;
    ng.cmp = (uint8_t)c;
    ana_guard_orient(&ng);
    for (i = 0; i < g->gs->n; i++) {
        const ana_guard *o = ANA_VEC_AT(g->gs, ana_guard, i);
        if (o->cmp == ng.cmp && ana_expr_equal(&o->expr, &ng.expr))
            return;
    }
    slot = ana_vec_push(g->gs);
    if (!slot)
        g->f->nomem = 1;
    else
        *slot = ng;
}

int ana_block_guards(ana_fn *f, unsigned b, const ana_guard **out, unsigned *n)
{
    ana_vec gs = { .elem = sizeof(ana_guard) };
    ana_guard_ctx ctx = { f, &gs, b };
    int x = (int)b;

    *out = NULL;
    *n = 0;
    if (!f->gdone) {
        f->gcache = ana_arena_alloc(&f->tmp, f->nblocks * sizeof *f->gcache);
        f->gn = ana_arena_alloc(&f->tmp, f->nblocks * sizeof *f->gn);
        f->gdone = ana_arena_alloc(&f->tmp, f->nblocks);
        if (!f->gcache || !f->gn || !f->gdone) {
            f->gdone = NULL;
            f->nomem = 1;
            return -1;
        }
    }
    if (!f->gdone[b]) {
        while (x > 0) {
            if (f->npreds[x] == 1) {
                LLVMValueRef t = LLVMGetBasicBlockTerminator(f->blocks[f->preds[x][0]]);
                if (t && LLVMIsABranchInst(t) && LLVMIsConditional(t) &&
                    LLVMGetSuccessor(t, 0) != LLVMGetSuccessor(t, 1))
                    ana_cond_conjuncts(LLVMGetCondition(t),
                                       LLVMGetSuccessor(t, 0) == f->blocks[x],
                                       ana_guard_add, &ctx, 0);
            }
            x = f->idom[x];
        }
        f->gcache[b] = NULL;
        if (gs.n) {
            f->gcache[b] = ana_arena_alloc(f->out, gs.n * sizeof(ana_guard));
            if (!f->gcache[b])
                f->nomem = 1;
            else
                memcpy(f->gcache[b], gs.data, gs.n * sizeof(ana_guard));
        }
        f->gn[b] = f->gcache[b] ? (unsigned)gs.n : 0;
        f->gdone[b] = 1;
        ana_vec_free(&gs);
    }
    *out = f->gcache[b];
    *n = f->gn[b];
    return f->nomem ? -1 : 0;
}
