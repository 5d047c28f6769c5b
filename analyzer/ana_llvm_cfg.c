/* ana_llvm_cfg.c — the control-flow facts the analysis needs and the LLVM C
 * API does not give: reachable blocks in reverse post-order, predecessors,
 * immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm)
 * and natural loops (back edges to a dominating header). */
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana_llvm_int.h"

#define ANA_UNDEF (-2)

int ana_block_id(const ana_fn *f, LLVMBasicBlockRef bb)
{
    size_t v;
    return ana_pmap_get(&f->block_index, bb, &v) ? (int)v : -1;
}

int ana_dominates(const ana_fn *f, unsigned a, unsigned b)
{
    int x = (int)b;
    while (x > (int)a)
        x = f->idom[x];
    return x == (int)a;
}

/* Successor blocks of @p bb's terminator. */
static unsigned ana_nsucc(LLVMBasicBlockRef bb)
{
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
    return t ? LLVMGetNumSuccessors(t) : 0;
}

static LLVMBasicBlockRef ana_succ(LLVMBasicBlockRef bb, unsigned i)
{
    return LLVMGetSuccessor(LLVMGetBasicBlockTerminator(bb), i);
}

/* Depth-first search from the entry; fills f->blocks in RPO. */
static int ana_rpo(ana_fn *f)
{
    unsigned nall = LLVMCountBasicBlocks(f->fn), sp = 0, npost = 0, i;
    LLVMBasicBlockRef *post = NULL, *stack_bb = NULL;
    unsigned *stack_it = NULL;
    ana_pmap seen = { 0 };
    int rc = -1;

    if (nall == 0)
        return -1;
    post = calloc(nall, sizeof *post);
    stack_bb = calloc(nall, sizeof *stack_bb);
    stack_it = calloc(nall, sizeof *stack_it);
    f->blocks = ana_arena_alloc(&f->tmp, nall * sizeof *f->blocks);
    if (!post || !stack_bb || !stack_it || !f->blocks)
        goto out;
    stack_bb[sp] = LLVMGetEntryBasicBlock(f->fn);
    stack_it[sp++] = 0;
    if (ana_pmap_put(&seen, stack_bb[0], 1) < 0)
        goto out;
    while (sp > 0) {
        LLVMBasicBlockRef bb = stack_bb[sp - 1];
        unsigned it = stack_it[sp - 1];
        if (it < ana_nsucc(bb)) {
            LLVMBasicBlockRef s = ana_succ(bb, it);
            stack_it[sp - 1]++;
            if (!ana_pmap_get(&seen, s, NULL)) {
                if (ana_pmap_put(&seen, s, 1) < 0 || sp >= nall)
                    goto out;
                stack_bb[sp] = s;
                stack_it[sp++] = 0;
            }
        } else {
            post[npost++] = bb;
            sp--;
        }
    }
    f->nblocks = npost;
    for (i = 0; i < npost; i++) {
        f->blocks[i] = post[npost - 1 - i];
        if (ana_pmap_put(&f->block_index, f->blocks[i], i) < 0)
            goto out;
    }
    rc = 0;
out:
    free(post);
    free(stack_bb);
    free(stack_it);
    ana_pmap_free(&seen);
    return rc;
}

static int ana_preds(ana_fn *f)
{
    unsigned b, i, n = f->nblocks;
    f->npreds = ana_arena_alloc(&f->tmp, n * sizeof *f->npreds);
    f->preds = ana_arena_alloc(&f->tmp, n * sizeof *f->preds);
    if (!f->npreds || !f->preds)
        return -1;
    for (b = 0; b < n; b++)
        for (i = 0; i < ana_nsucc(f->blocks[b]); i++) {
            int s = ana_block_id(f, ana_succ(f->blocks[b], i));
            if (s >= 0)
                f->npreds[s]++;
        }
    for (b = 0; b < n; b++) {
        f->preds[b] = ana_arena_alloc(&f->tmp, (f->npreds[b] + 1) * sizeof **f->preds);
        if (!f->preds[b])
            return -1;
        f->npreds[b] = 0;
    }
    for (b = 0; b < n; b++)
        for (i = 0; i < ana_nsucc(f->blocks[b]); i++) {
            int s = ana_block_id(f, ana_succ(f->blocks[b], i));
            if (s >= 0)
                f->preds[s][f->npreds[s]++] = b;
        }
    return 0;
}

static int ana_intersect(const int *idom, int a, int b)
{
    while (a != b) {
        while (a > b)
            a = idom[a];
        while (b > a)
            b = idom[b];
    }
    return a;
}

static int ana_doms(ana_fn *f)
{
    unsigned n = f->nblocks, b, i;
    int changed = 1;
    f->idom = ana_arena_alloc(&f->tmp, n * sizeof *f->idom);
    if (!f->idom)
        return -1;
    for (b = 0; b < n; b++)
        f->idom[b] = ANA_UNDEF;
    f->idom[0] = 0;
    while (changed) {
        changed = 0;
        for (b = 1; b < n; b++) {
            int nd = ANA_UNDEF;
            for (i = 0; i < f->npreds[b]; i++) {
                int p = (int)f->preds[b][i];
                if (f->idom[p] == ANA_UNDEF)
                    continue;
                nd = nd == ANA_UNDEF ? p : ana_intersect(f->idom, p, nd);
            }
            if (nd != ANA_UNDEF && f->idom[b] != nd) {
                f->idom[b] = nd;
                changed = 1;
            }
        }
    }
    f->idom[0] = -1;
    return 0;
}

/* Natural loops: one per header (its back edges merged), outer first. */
static int ana_find_loops(ana_fn *f)
{
    unsigned n = f->nblocks, b, i, j, nl = 0;
    int *loop_of_header = ana_arena_alloc(&f->tmp, n * sizeof(int));
    unsigned *work = ana_arena_alloc(&f->tmp, n * sizeof(unsigned));

    f->block_loop = ana_arena_alloc(&f->tmp, n * sizeof *f->block_loop);
    if (!loop_of_header || !work || !f->block_loop)
        return -1;
    for (b = 0; b < n; b++) {
        loop_of_header[b] = -1;
        f->block_loop[b] = -1;
    }
    /* headers, in RPO order */
    for (b = 0; b < n; b++)
        for (i = 0; i < f->npreds[b]; i++)
            if (ana_dominates(f, b, f->preds[b][i]) && loop_of_header[b] < 0)
                loop_of_header[b] = (int)nl++;
    f->nnloops = nl;
    f->nloops = ana_arena_alloc(&f->tmp, (nl + 1) * sizeof *f->nloops);
    if (!f->nloops)
        return -1;
    for (b = 0; b < n; b++) {
        ana_nloop *L;
        unsigned nw = 0;
        if (loop_of_header[b] < 0)
            continue;
        L = &f->nloops[loop_of_header[b]];
        L->header = b;
        L->parent = -1;
        L->first_counter = -1;
        L->in = ana_arena_alloc(&f->tmp, n);
        L->latches = ana_arena_alloc(&f->tmp, (f->npreds[b] + 1) * sizeof *L->latches);
        if (!L->in || !L->latches)
            return -1;
        L->in[b] = 1;
        for (i = 0; i < f->npreds[b]; i++) {
            unsigned p = f->preds[b][i];
            if (!ana_dominates(f, b, p))
                continue;
            L->latches[L->nlatches++] = p;
            if (!L->in[p]) {
                L->in[p] = 1;
                work[nw++] = p;
            }
        }
        while (nw > 0) {
            unsigned x = work[--nw];
            for (i = 0; i < f->npreds[x]; i++) {
                unsigned p = f->preds[x][i];
                if (!L->in[p]) {
                    L->in[p] = 1;
                    work[nw++] = p;
                }
            }
        }
    }
    for (j = 0; j < nl; j++) {
        ana_nloop *L = &f->nloops[j];
        for (i = j; i-- > 0;)
            if (f->nloops[i].in[L->header]) {
                L->parent = (int)i;
                break;
            }
        L->depth = L->parent < 0 ? 1 : f->nloops[L->parent].depth + 1;
        for (b = 0; b < n; b++)
            if (L->in[b])
                f->block_loop[b] = (int)j;
    }
    return 0;
}

int ana_cfg_build(ana_fn *f)
{
    if (ana_rpo(f) < 0 || ana_preds(f) < 0 || ana_doms(f) < 0 || ana_find_loops(f) < 0) {
        f->nomem = 1;
        return -1;
    }
    return 0;
}
