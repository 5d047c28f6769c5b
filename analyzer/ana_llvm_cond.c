/* ana_llvm_cond.c — branch conditions as facts: the conjuncts that hold on
 * an edge (through and/or/select/xor of i1), and an integer comparison as
 * "affine CMP 0". Unsigned comparisons are kept only in the direction in
 * which they say the same about mathematical values (their larger side
 * cannot be negative), since indexes are otherwise assumed not to wrap. */
#include <string.h>

#include "analyzer/ana_llvm_int.h"

void ana_cond_conjuncts(LLVMValueRef cond, int truth,
                        void (*fn)(void *ctx, LLVMValueRef icmp, int truth), void *ctx,
                        unsigned depth)
{
    LLVMOpcode op;
    if (depth > 16 || !ana_value_opcode(cond, &op))
        return;
    if (LLVMGetTypeKind(LLVMTypeOf(cond)) != LLVMIntegerTypeKind ||
        LLVMGetIntTypeWidth(LLVMTypeOf(cond)) != 1)
        return;
    switch (op) {
    case LLVMICmp:
        fn(ctx, cond, truth);
        return;
    case LLVMAnd:
    case LLVMOr:
        /* a && b holding, or a || b failing: both parts are facts */
        if ((op == LLVMAnd) == (truth != 0)) {
            ana_cond_conjuncts(LLVMGetOperand(cond, 0), truth, fn, ctx, depth + 1);
            ana_cond_conjuncts(LLVMGetOperand(cond, 1), truth, fn, ctx, depth + 1);
        }
        return;
    case LLVMSelect: {
        LLVMValueRef c = LLVMGetOperand(cond, 0), x = LLVMGetOperand(cond, 1),
                     y = LLVMGetOperand(cond, 2);
        int y_false = LLVMIsAConstantInt(y) && LLVMConstIntGetZExtValue(y) == 0;
        int x_true = LLVMIsAConstantInt(x) && LLVMConstIntGetZExtValue(x) == 1;
        if ((y_false && truth) || (x_true && !truth)) {   /* c && x / c || y */
            ana_cond_conjuncts(c, truth, fn, ctx, depth + 1);
            ana_cond_conjuncts(y_false ? x : y, truth, fn, ctx, depth + 1);
        }
        return;
    }
    case LLVMXor: {
        LLVMValueRef o = LLVMGetOperand(cond, 1);
        if (LLVMIsAConstantInt(o) && LLVMConstIntGetZExtValue(o) == 1)
            ana_cond_conjuncts(LLVMGetOperand(cond, 0), !truth, fn, ctx, depth + 1);
        return;
    }
    default:
        return;
    }
}

static int ana_sym_nonneg(const ana_fn *f, ana_sym s)
{
    if (s.kind >= ANA_SYM_GLOBAL_ID && s.kind <= ANA_SYM_GLOBAL_OFFSET)
        return 1;
    if (s.kind == ANA_SYM_ARG)
        return s.index < f->nparams && f->param_nonneg[s.index];
    if (s.kind == ANA_SYM_LOOP && s.index < f->loops.n) {
        const ana_loop *l = ANA_VEC_AT(&f->loops, ana_loop, s.index);
        return l->step > 0 && l->start.known && ana_surely_nonneg(f, &l->start);
    }
    return 0;
}

int ana_surely_nonneg(const ana_fn *f, const ana_expr *e)
{
    unsigned i;
    if (!e->known)
        return 0;
    for (i = 0; i < e->nterms; i++) {
        const ana_term *t = &e->terms[i];
        if (t->coef < 0)
            return 0;
        if (t->a.kind != ANA_SYM_NONE && !ana_sym_nonneg(f, t->a))
            return 0;
        if (t->b.kind != ANA_SYM_NONE && !ana_sym_nonneg(f, t->b))
            return 0;
    }
    return 1;
}

int ana_icmp_form(ana_fn *f, LLVMValueRef cmp, int truth, ana_expr *e, ana_cmp *c)
{
    LLVMIntPredicate p = LLVMGetICmpPredicate(cmp);
    LLVMValueRef x = LLVMGetOperand(cmp, 0), y = LLVMGetOperand(cmp, 1);
    ana_expr a, b;
    int is_unsigned = p == LLVMIntUGT || p == LLVMIntUGE || p == LLVMIntULT || p == LLVMIntULE;

    if (LLVMGetTypeKind(LLVMTypeOf(x)) != LLVMIntegerTypeKind)
        return 0;
    a = *ana_affine(f, x);
    b = *ana_affine(f, y);
    if (!a.known || !b.known)
        return 0;
    switch (p) {
    case LLVMIntEQ: *c = ANA_CMP_EQ; break;
    case LLVMIntNE: *c = ANA_CMP_NE; break;
    case LLVMIntUGT: case LLVMIntSGT: *c = ANA_CMP_GT; break;
    case LLVMIntUGE: case LLVMIntSGE: *c = ANA_CMP_GE; break;
    case LLVMIntULT: case LLVMIntSLT: *c = ANA_CMP_LT; break;
    case LLVMIntULE: case LLVMIntSLE: *c = ANA_CMP_LE; break;
    default: return 0;
    }
    if (!truth) {
        static const ana_cmp inv[] = { [ANA_CMP_LT] = ANA_CMP_GE, [ANA_CMP_LE] = ANA_CMP_GT,
                                       [ANA_CMP_GT] = ANA_CMP_LE, [ANA_CMP_GE] = ANA_CMP_LT,
                                       [ANA_CMP_EQ] = ANA_CMP_NE, [ANA_CMP_NE] = ANA_CMP_EQ };
        *c = inv[*c];
    }
    /* An unsigned comparison says the same about the mathematical values
     * only when its larger side cannot be negative (or for "!="). */
    if (is_unsigned) {
        int ok;
        switch (*c) {
        case ANA_CMP_LT: case ANA_CMP_LE: ok = ana_surely_nonneg(f, &b); break;
        case ANA_CMP_GT: case ANA_CMP_GE: ok = ana_surely_nonneg(f, &a); break;
        default: ok = 1; break;
        }
        if (!ok)
            return 0;
    }
    return ana_expr_add(e, &a, &b, -1);
}
