/* ana_llvm_loops.c — loop counters: integer phis in a natural loop's header
 * whose value on every back edge is the phi plus a loop-invariant affine
 * step; their start (the value on entry) and their end, read from an exit
 * test that compares the counter with a loop-invariant affine bound. */
#include <string.h>

#include "analyzer/ana_llvm_int.h"

/* Instructions in the header that touch memory (then the header's test
 * does not precede every access of an iteration). */
static int ana_header_touches_memory(LLVMBasicBlockRef bb)
{
    LLVMValueRef i;
    for (i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        if (LLVMIsALoadInst(i) || LLVMIsAStoreInst(i) || LLVMIsAAtomicRMWInst(i) ||
            LLVMIsAAtomicCmpXchgInst(i))
            return 1;
        if (LLVMIsACallInst(i)) {
            char name[64];
            ana_callee_name(i, name, sizeof name);
            if (strncmp(name, "get_", 4) && strncmp(name, "llvm.dbg", 8) &&
                strncmp(name, "llvm.lifetime", 13))
                return 1;
        }
    }
    return 0;
}

/* The step of counter candidate @p phi along latch value @p next into *s:
 * next = phi + X, X + phi, phi - X, or phi | C (disjoint). */
static int ana_match_step(ana_fn *f, LLVMValueRef phi, LLVMValueRef next, ana_expr *s)
{
    LLVMValueRef v = ana_strip_int_casts(next), x = NULL;
    int neg = 0;
    if (!LLVMIsAInstruction(v))
        return 0;
    switch (LLVMGetInstructionOpcode(v)) {
    case LLVMAdd:
    case LLVMOr:   /* an or that is not an add makes the step unknown below */
        if (ana_strip_int_casts(LLVMGetOperand(v, 0)) == phi)
            x = LLVMGetOperand(v, 1);
        else if (ana_strip_int_casts(LLVMGetOperand(v, 1)) == phi)
            x = LLVMGetOperand(v, 0);
        if (x && LLVMGetInstructionOpcode(v) == LLVMOr) {
            /* only as an addition: the affine walk decides */
            const ana_expr *whole = ana_affine(f, v);
            if (!whole->known)
                return 0;
        }
        break;
    case LLVMSub:
        if (ana_strip_int_casts(LLVMGetOperand(v, 0)) == phi) {
            x = LLVMGetOperand(v, 1);
            neg = 1;
        }
        break;
    default:
        break;
    }
    if (!x)
        return 0;
    *s = *ana_affine(f, x);
    if (!s->known)
        return 0;
    if (neg)
        ana_expr_scale(s, s, -1);
    return s->known;
}

/* Whether @p e uses a counter of natural loop @p j (then it is not invariant). */
static int ana_uses_loop_of(const ana_fn *f, const ana_expr *e, int j)
{
    unsigned i;
    for (i = 0; i < f->counters.n; i++)
        if (ANA_VEC_AT(&f->counters, ana_counter, i)->nloop == j &&
            ana_expr_uses(e, ana_sym_make(ANA_SYM_LOOP, i)))
            return 1;
    return 0;
}

static char *ana_value_short_name(ana_fn *f, LLVMValueRef v)
{
    size_t len = 0, n;
    const char *name = LLVMGetValueName2(v, &len);
    if (!name)
        return ana_arena_strdup(f->out, "");
    for (n = 0; n < len && name[n] != '.'; n++)
        ;
    return ana_arena_strndup(f->out, name, n > 64 ? 64 : n);
}

/* Adds a loop entry (and its counter record). @return its index, or -1. */
static int ana_loop_add(ana_fn *f, LLVMValueRef phi, int j, const ana_expr *step)
{
    ana_loop *l;
    ana_counter *c;
    int64_t k;

    if (f->loops.n >= 255)   /* ana_sym.index is 8 bits */
        return -1;
    l = ana_vec_push(&f->loops);
    c = ana_vec_push(&f->counters);
    if (!l || !c) {
        f->nomem = 1;
        return -1;
    }
    c->phi = phi;
    c->nloop = j;
    ana_expr_set_unknown(&l->start, "no induction variable recognized");
    ana_expr_set_unknown(&l->end, "no induction variable recognized");
    l->step_expr = *step;
    l->step = ana_expr_const_value(step, &k) ? k : 0;
    l->depth = j >= 0 ? f->nloops[j].depth : 1;
    l->parent = -1;
    l->name = phi ? ana_value_short_name(f, phi) : "";
    if (!l->name) {
        f->nomem = 1;
        l->name = "";
    }
    return (int)f->loops.n - 1;
}

/* Registers @p phi of natural loop @p j as a counter when it is one. */
static int ana_counter_detect(ana_fn *f, unsigned j, LLVMValueRef phi)
{
    const ana_nloop *L = &f->nloops[j];
    unsigned k, latches = 0;
    ana_expr step, s;
    ana_expr *sym;
    int idx;

    ana_expr_set_unknown(&step, "no step");
    for (k = 0; k < LLVMCountIncoming(phi); k++) {
        int b = ana_block_id(f, LLVMGetIncomingBlock(phi, k));
        if (b < 0 || !L->in[b])
            continue;
        if (!ana_match_step(f, phi, LLVMGetIncomingValue(phi, k), &s))
            return -1;
        if (latches++ == 0)
            step = s;
        else if (!ana_expr_equal(&step, &s))
            return -1;
    }
    if (latches == 0 || !step.known || ana_uses_loop_of(f, &step, (int)j) || step.nterms == 0)
        return -1;
    idx = ana_loop_add(f, phi, (int)j, &step);
    if (idx < 0)
        return -1;
    sym = ana_vec_push(&f->exprs);
    if (!sym || ana_pmap_put(&f->memo, phi, f->exprs.n - 1) < 0) {
        f->nomem = 1;
        return -1;
    }
    ana_expr_set_sym(sym, ana_sym_make(ANA_SYM_LOOP, (unsigned)idx));
    return idx;
}

/* The value of phi @p in of natural loop @p j on the edges into its header:
 * from outside (*outside) and along every back edge (*back, all equal).
 * @return 0 when they differ or are not affine. */
static int ana_phi_edges(ana_fn *f, unsigned j, LLVMValueRef phi, ana_expr *outside,
                         ana_expr *back)
{
    const ana_nloop *L = &f->nloops[j];
    unsigned k, nin = 0, nback = 0;
    for (k = 0; k < LLVMCountIncoming(phi); k++) {
        int b = ana_block_id(f, LLVMGetIncomingBlock(phi, k));
        ana_expr x;
        if (b < 0)
            continue;
        x = *ana_affine(f, LLVMGetIncomingValue(phi, k));
        if (!x.known)
            return 0;
        if (L->in[b]) {
            if (nback++ && !ana_expr_equal(back, &x))
                return 0;
            *back = x;
        } else {
            if (nin++ && !ana_expr_equal(outside, &x))
                return 0;
            *outside = x;
        }
    }
    return nin > 0 && nback > 0;
}

/* A phi that moves in step with counter C of the same loop (LLVM keeps a
 * widened copy of a counter, "sext(i)", as a phi of its own): when it
 * starts at start(C) + d and its back-edge value is C's plus d, it is
 * C + d throughout. Its memo entry becomes that form. */
static void ana_counter_derive(ana_fn *f, unsigned j, LLVMValueRef phi)
{
    ana_expr ps, pb, d1, d2, form, sym;
    unsigned i;

    for (i = 0; i < f->counters.n; i++) {
        const ana_counter *c = ANA_VEC_AT(&f->counters, ana_counter, i);
        ana_expr cs, cb;
        ana_expr *slot;
        if (c->nloop != (int)j || !c->phi || c->phi == phi)
            continue;
        if (!ana_phi_edges(f, j, c->phi, &cs, &cb) || !ana_phi_edges(f, j, phi, &ps, &pb))
            return;
        if (!ana_expr_add(&d1, &ps, &cs, -1) || !ana_expr_add(&d2, &pb, &cb, -1) ||
            !ana_expr_equal(&d1, &d2) || ana_uses_loop_of(f, &d1, (int)j))
            continue;
        ana_expr_set_sym(&sym, ana_sym_make(ANA_SYM_LOOP, i));
        if (!ana_expr_add(&form, &sym, &d1, 1))
            continue;
        slot = ana_vec_push(&f->exprs);
        if (!slot || ana_pmap_put(&f->memo, phi, f->exprs.n - 1) < 0) {
            f->nomem = 1;
            return;
        }
        *slot = form;
        return;
    }
}

/* ---------------------------------------------------------- exit tests */

typedef struct ana_conj {
    LLVMValueRef icmp[16];
    int truth[16];
    unsigned n;
} ana_conj;

static void ana_conj_add(void *ctx, LLVMValueRef icmp, int truth)
{
    ana_conj *c = ctx;
    if (c->n < 16) {
        c->icmp[c->n] = icmp;
        c->truth[c->n++] = truth;
    }
}

/* +1 / -1 when the step is surely positive / negative, else 0. */
static int ana_step_sign(const ana_fn *f, const ana_loop *l)
{
    ana_expr neg;
    if (l->step)
        return l->step > 0 ? 1 : -1;
    if (ana_surely_nonneg(f, &l->step_expr))
        return 1;
    ana_expr_scale(&neg, &l->step_expr, -1);
    return ana_surely_nonneg(f, &neg) ? -1 : 0;
}

/* From "e CMP 0" about counter @p idx, the bound it continues under:
 * *end is the exclusive end of the values (before the after-body shift). */
static int ana_bound_from(unsigned idx, ana_expr e, ana_cmp c, int sign,
                          ana_expr *bx)
{
    ana_sym L = ana_sym_make(ANA_SYM_LOOP, idx);
    ana_expr r, one;
    int64_t coef = 0;
    unsigned i;

    for (i = 0; i < e.nterms; i++) {
        const ana_term *t = &e.terms[i];
        int hits = (t->a.kind == L.kind && t->a.index == L.index) +
                   (t->b.kind == L.kind && t->b.index == L.index);
        if (!hits)
            continue;
        if (t->b.kind != ANA_SYM_NONE)
            return 0;   /* a product with the counter */
        coef = t->coef;
    }
    if (coef != 1 && coef != -1)
        return 0;
    if (coef == -1) {
        static const ana_cmp flip[] = { [ANA_CMP_LT] = ANA_CMP_GT, [ANA_CMP_LE] = ANA_CMP_GE,
                                        [ANA_CMP_GT] = ANA_CMP_LT, [ANA_CMP_GE] = ANA_CMP_LE,
                                        [ANA_CMP_EQ] = ANA_CMP_EQ, [ANA_CMP_NE] = ANA_CMP_NE };
        ana_expr_scale(&e, &e, -1);
        c = flip[c];
    }
    /* e = L + R: continue while L CMP -R */
    ana_expr_set_sym(&one, L);
    if (!ana_expr_add(&r, &e, &one, -1) || !ana_expr_scale(bx, &r, -1))
        return 0;
    ana_expr_set_const(&one, 1);
    if (sign > 0 && (c == ANA_CMP_LT || c == ANA_CMP_NE))
        return 1;
    if (sign > 0 && c == ANA_CMP_LE)
        return ana_expr_add(bx, bx, &one, 1);
    if (sign < 0 && (c == ANA_CMP_GT || c == ANA_CMP_NE))
        return 1;
    if (sign < 0 && c == ANA_CMP_GE)
        return ana_expr_add(bx, bx, &one, -1);
    return 0;
}

/* Finds the end of counter @p idx (natural loop j) from an exit test. */
static void ana_counter_end(ana_fn *f, unsigned idx, unsigned j)
{
    const ana_nloop *L = &f->nloops[j];
    ana_loop *l = ANA_VEC_AT(&f->loops, ana_loop, idx);
    int sign = ana_step_sign(f, l);
    unsigned b, i;

    if (sign == 0) {
        ana_expr_set_unknown(&l->end, "loop step of unknown sign");
        return;
    }
    ana_expr_set_unknown(&l->end, "no exit test on this counter");
    for (b = 0; b < f->nblocks; b++) {
        LLVMValueRef t = LLVMGetBasicBlockTerminator(f->blocks[b]);
        ana_conj conj = { .n = 0 };
        int s0, s1, in0, in1, dom = 1;
        if (!L->in[b] || !t || !LLVMIsABranchInst(t) || !LLVMIsConditional(t))
            continue;
        s0 = ana_block_id(f, LLVMGetSuccessor(t, 0));
        s1 = ana_block_id(f, LLVMGetSuccessor(t, 1));
        in0 = s0 >= 0 && L->in[s0];
        in1 = s1 >= 0 && L->in[s1];
        if (in0 == in1)
            continue;
        for (i = 0; i < L->nlatches; i++)
            dom &= ana_dominates(f, b, L->latches[i]);
        if (!dom)
            continue;
        ana_cond_conjuncts(LLVMGetCondition(t), in0, ana_conj_add, &conj, 0);
        for (i = 0; i < conj.n; i++) {
            ana_expr e, bx, x, y;
            ana_cmp c;
            if (!ana_icmp_form(f, conj.icmp[i], conj.truth[i], &e, &c)) {
                /* a test of this counter against a bound that is not affine */
                x = *ana_affine(f, LLVMGetOperand(conj.icmp[i], 0));
                y = *ana_affine(f, LLVMGetOperand(conj.icmp[i], 1));
                if (ana_expr_uses(&x, ana_sym_make(ANA_SYM_LOOP, idx)) && !y.known)
                    ana_affine_unknown(f, &l->end, "loop bound: %s", y.reason);
                else if (ana_expr_uses(&y, ana_sym_make(ANA_SYM_LOOP, idx)) && !x.known)
                    ana_affine_unknown(f, &l->end, "loop bound: %s", x.reason);
                continue;
            }
            if (!ana_bound_from(idx, e, c, sign, &bx))
                continue;
            l = ANA_VEC_AT(&f->loops, ana_loop, idx);
            if (b == L->header && !ana_header_touches_memory(f->blocks[b]))
                l->end = bx;                        /* tested before the body */
            else
                ana_expr_add(&l->end, &bx, &l->step_expr, 1);   /* after it */
            return;
        }
    }
}

static void ana_counter_start(ana_fn *f, unsigned idx, unsigned j)
{
    const ana_nloop *L = &f->nloops[j];
    LLVMValueRef phi = ANA_VEC_AT(&f->counters, ana_counter, idx)->phi;
    unsigned k, seen = 0;
    ana_expr first, x;

    for (k = 0; k < LLVMCountIncoming(phi); k++) {
        int b = ana_block_id(f, LLVMGetIncomingBlock(phi, k));
        if (b < 0 || L->in[b])
            continue;
        x = *ana_affine(f, LLVMGetIncomingValue(phi, k));
        if (seen++ == 0) {
            first = x;
        } else if (!ana_expr_equal(&first, &x)) {
            ana_expr_set_unknown(&first, first.known && x.known
                                 ? "loop entered with different start values"
                                 : (!first.known ? first.reason : x.reason));
        }
    }
    if (!seen)
        ana_expr_set_unknown(&first, "loop without an entry");
    ANA_VEC_AT(&f->loops, ana_loop, idx)->start = first;
}

int ana_loop_add_bytes(ana_fn *f, const ana_expr *len, unsigned block)
{
    ana_expr one;
    int j = f->block_loop[block], idx;
    ana_loop *l;

    ana_expr_set_const(&one, 1);
    idx = ana_loop_add(f, NULL, -1, &one);
    if (idx < 0)
        return -1;
    l = ANA_VEC_AT(&f->loops, ana_loop, idx);
    ana_expr_set_const(&l->start, 0);
    l->end = *len;
    l->depth = j >= 0 ? f->nloops[j].depth + 1 : 1;
    l->parent = j >= 0 ? f->nloops[j].first_counter : -1;
    l->name = "";
    l->bytes = 1;
    return idx;
}

int ana_loops_find(ana_fn *f)
{
    unsigned j, i;
    ana_expr none;

    ana_expr_set_unknown(&none, "no induction variable recognized");
    for (j = 0; j < f->nnloops; j++) {
        ana_nloop *L = &f->nloops[j];
        LLVMValueRef v;
        L->first_counter = -1;
        for (v = LLVMGetFirstInstruction(f->blocks[L->header]); v && LLVMIsAPHINode(v);
             v = LLVMGetNextInstruction(v)) {
            int idx;
            if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind)
                continue;
            idx = ana_counter_detect(f, j, v);
            if (idx >= 0 && L->first_counter < 0)
                L->first_counter = idx;
        }
        if (f->nomem)
            return -1;
        /* the phis that are not counters may follow one */
        for (v = LLVMGetFirstInstruction(f->blocks[L->header]); v && LLVMIsAPHINode(v);
             v = LLVMGetNextInstruction(v)) {
            size_t m;
            const ana_expr *e;
            if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind ||
                (ana_pmap_get(&f->memo, v, &m) &&
                 (e = ANA_VEC_AT(&f->exprs, ana_expr, m))->known))
                continue;
            ana_counter_derive(f, j, v);
        }
        if (f->nomem)
            return -1;
        if (L->first_counter < 0)
            L->first_counter = ana_loop_add(f, NULL, (int)j, &none);
    }
    for (i = 0; i < f->counters.n; i++) {
        ana_counter *c = ANA_VEC_AT(&f->counters, ana_counter, i);
        if (!c->phi || c->nloop < 0)
            continue;
        ana_counter_start(f, i, (unsigned)c->nloop);
        ana_counter_end(f, i, (unsigned)c->nloop);
    }
    /* the representative of each loop: its first counter with a known end */
    for (j = 0; j < f->nnloops; j++) {
        ana_nloop *L = &f->nloops[j];
        for (i = 0; i < f->counters.n; i++) {
            ana_counter *c = ANA_VEC_AT(&f->counters, ana_counter, i);
            ana_loop *l = ANA_VEC_AT(&f->loops, ana_loop, i);
            if (c->nloop == (int)j && l->end.known && l->start.known) {
                L->first_counter = (int)i;
                break;
            }
        }
    }
    for (i = 0; i < f->counters.n; i++) {
        ana_counter *c = ANA_VEC_AT(&f->counters, ana_counter, i);
        ana_loop *l = ANA_VEC_AT(&f->loops, ana_loop, i);
        if (c->nloop >= 0 && f->nloops[c->nloop].parent >= 0)
            l->parent = f->nloops[f->nloops[c->nloop].parent].first_counter;
    }
    return f->nomem ? -1 : 0;
}
