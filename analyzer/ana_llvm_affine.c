/* ana_llvm_affine.c — affine forms of integer values: the walk over
 * add/sub/mul/shl/casts/or-disjoint down to work-item functions, scalar
 * arguments, constants and loop counters.
 *
 * Integer casts (zext, sext, trunc, and masks of 32 bits or more, which is
 * how LLVM writes zext(trunc x)) are taken as the identity: the analysis
 * assumes that index arithmetic does not wrap. Comparisons keep that
 * assumption only where it is sound for the direction they are used in
 * (ana_llvm_cond.c). */
#include <stdio.h>
#include <string.h>

#include "analyzer/ana_llvm_int.h"

static const ana_expr ana_expr_too_deep = { 0, 0, { { 0, { 0, 0 }, { 0, 0 } } },
                                            "expression too deep" };
static const ana_expr ana_expr_nomem = { 0, 0, { { 0, { 0, 0 }, { 0, 0 } } },
                                         "out of memory" };

/* The work-item functions, as symbols (and their value beyond dimension 2). */
static const struct {
    const char *name;
    unsigned kind;
    int64_t beyond;
} ana_wi[] = {
    { "get_global_id", ANA_SYM_GLOBAL_ID, 0 },
    { "get_local_id", ANA_SYM_LOCAL_ID, 0 },
    { "get_group_id", ANA_SYM_GROUP_ID, 0 },
    { "get_global_size", ANA_SYM_GLOBAL_SIZE, 1 },
    { "get_local_size", ANA_SYM_LOCAL_SIZE, 1 },
    { "get_enqueued_local_size", ANA_SYM_LOCAL_SIZE, 1 },
    { "get_num_groups", ANA_SYM_NUM_GROUPS, 1 },
    { "get_global_offset", ANA_SYM_GLOBAL_OFFSET, 0 },
};

void ana_affine_unknown(ana_fn *f, ana_expr *e, const char *fmt, const char *arg)
{
    char *r = ana_arena_printf(f->out, fmt, arg);
    if (!r)
        f->nomem = 1;
    ana_expr_set_unknown(e, r ? r : "not affine");
}

/* Mask 2^k - 1 with k >= 32: the zext(trunc x) idiom. */
static int ana_is_wide_mask(LLVMValueRef c)
{
    unsigned long long m;
    if (!LLVMIsAConstantInt(c) || LLVMGetIntTypeWidth(LLVMTypeOf(c)) > 64)
        return 0;
    m = LLVMConstIntGetZExtValue(c);
    return m >= 0xffffffffull && (m & (m + 1)) == 0;
}

LLVMValueRef ana_strip_int_casts(LLVMValueRef v)
{
    unsigned guard = 0;
    LLVMOpcode op;
    while (guard++ < 64 && ana_value_opcode(v, &op)) {
        if (op == LLVMZExt || op == LLVMSExt || op == LLVMTrunc || op == LLVMFreeze)
            v = LLVMGetOperand(v, 0);
        else if (op == LLVMAnd && ana_is_wide_mask(LLVMGetOperand(v, 1)))
            v = LLVMGetOperand(v, 0);
        else
            break;
    }
    return v;
}

/* Known trailing zero bits of integer @p v (a lower bound). */
static unsigned ana_tz(LLVMValueRef v, unsigned depth)
{
    LLVMOpcode op;
    unsigned a, b;
    if (depth > 8)
        return 0;
    if (LLVMIsAConstantInt(v) && LLVMGetIntTypeWidth(LLVMTypeOf(v)) <= 64) {
        unsigned long long c = LLVMConstIntGetZExtValue(v);
        return c ? (unsigned)__builtin_ctzll(c) : 64;
    }
    if (!ana_value_opcode(v, &op))
        return 0;
    switch (op) {
    case LLVMShl:
        if (LLVMIsAConstantInt(LLVMGetOperand(v, 1))) {
            unsigned long long k = LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1));
            a = ana_tz(LLVMGetOperand(v, 0), depth + 1);
            return k >= 64 ? 64 : (a + (unsigned)k > 64 ? 64 : a + (unsigned)k);
        }
        return 0;
    case LLVMMul:
        a = ana_tz(LLVMGetOperand(v, 0), depth + 1);
        b = ana_tz(LLVMGetOperand(v, 1), depth + 1);
        return a + b > 64 ? 64 : a + b;
    case LLVMAdd:
    case LLVMSub:
        a = ana_tz(LLVMGetOperand(v, 0), depth + 1);
        b = ana_tz(LLVMGetOperand(v, 1), depth + 1);
        return a < b ? a : b;
    case LLVMAnd:
        a = ana_tz(LLVMGetOperand(v, 0), depth + 1);
        b = ana_tz(LLVMGetOperand(v, 1), depth + 1);
        return a > b ? a : b;
    case LLVMZExt:
    case LLVMSExt:
    case LLVMFreeze:
        return ana_tz(LLVMGetOperand(v, 0), depth + 1);
    default:
        return 0;
    }
}

/* `or a, b` that is an addition: b a constant below a's known zero bits. */
static int ana_or_is_add(LLVMValueRef v, unsigned *const_op)
{
    unsigned i;
    for (i = 0; i < 2; i++) {
        LLVMValueRef c = LLVMGetOperand(v, i);
        if (LLVMIsAConstantInt(c) && LLVMGetIntTypeWidth(LLVMTypeOf(c)) <= 64) {
            unsigned long long cv = LLVMConstIntGetZExtValue(c);
            unsigned tz = ana_tz(LLVMGetOperand(v, 1 - i), 0);
            if (tz >= 64 || (tz > 0 && cv < (1ull << tz))) {
                *const_op = i;
                return 1;
            }
        }
    }
    return 0;
}

/* Symbol for a call to a work-item function; 0 when @p name is not one. */
static int ana_workitem(ana_fn *f, LLVMValueRef call, const char *name, ana_expr *e)
{
    size_t i;
    for (i = 0; i < sizeof ana_wi / sizeof ana_wi[0]; i++) {
        LLVMValueRef d;
        unsigned long long dim;
        if (strcmp(name, ana_wi[i].name))
            continue;
        if (LLVMGetNumArgOperands(call) < 1 ||
            !LLVMIsAConstantInt(d = LLVMGetOperand(call, 0))) {
            ana_affine_unknown(f, e, "%s() with a variable dimension", name);
            return 1;
        }
        dim = LLVMConstIntGetZExtValue(d);
        if (dim > 2)
            ana_expr_set_const(e, ana_wi[i].beyond);
        else
            ana_expr_set_sym(e, ana_sym_make(ana_wi[i].kind, (unsigned)dim));
        return 1;
    }
    return 0;
}

static void ana_affine_call(ana_fn *f, LLVMValueRef v, ana_expr *e)
{
    char name[128];
    ana_expr a, b, c;
    unsigned n = LLVMGetNumArgOperands(v);

    ana_callee_name(v, name, sizeof name);
    if (!name[0]) {
        ana_expr_set_unknown(e, "result of an indirect call");
        return;
    }
    if (ana_workitem(f, v, name, e))
        return;
    if ((!strcmp(name, "mul24") && n == 2) || (!strcmp(name, "mad24") && n == 3)) {
        a = *ana_affine(f, LLVMGetOperand(v, 0));
        b = *ana_affine(f, LLVMGetOperand(v, 1));
        ana_expr_mul(e, &a, &b);
        if (n == 3) {
            c = *ana_affine(f, LLVMGetOperand(v, 2));
            a = *e;
            ana_expr_add(e, &a, &c, 1);
        }
        return;
    }
    if (!strcmp(name, "min") || !strcmp(name, "max") || !strcmp(name, "clamp") ||
        !strncmp(name, "llvm.smin", 9) || !strncmp(name, "llvm.smax", 9) ||
        !strncmp(name, "llvm.umin", 9) || !strncmp(name, "llvm.umax", 9)) {
        ana_affine_unknown(f, e, "index clamped by %s()", name);
        return;
    }
    ana_affine_unknown(f, e, "result of a call to %s()", name);
}

static int ana_param_index(const ana_fn *f, LLVMValueRef v)
{
    unsigned i;
    for (i = 0; i < f->nparams; i++)
        if (f->params[i] == v)
            return (int)i;
    return -1;
}

/* 1 when @p phi sits in a loop header and is fed from inside the loop. */
static int ana_is_loop_carried(const ana_fn *f, LLVMValueRef phi)
{
    int b = ana_block_id(f, LLVMGetInstructionParent(phi));
    unsigned i, k;
    if (b < 0)
        return 0;
    for (i = 0; i < f->nnloops; i++) {
        const ana_nloop *L = &f->nloops[i];
        if (L->header != (unsigned)b)
            continue;
        for (k = 0; k < LLVMCountIncoming(phi); k++) {
            int p = ana_block_id(f, LLVMGetIncomingBlock(phi, k));
            if (p >= 0 && L->in[p])
                return 1;
        }
    }
    return 0;
}

static void ana_affine_phi(ana_fn *f, LLVMValueRef v, ana_expr *e)
{
    unsigned k, n = LLVMCountIncoming(v), seen = 0;
    ana_expr first, x;

    if (ana_is_loop_carried(f, v)) {
        ana_expr_set_unknown(e, "loop-carried value that is not an induction variable");
        return;
    }
    for (k = 0; k < n; k++) {
        if (ana_block_id(f, LLVMGetIncomingBlock(v, k)) < 0)
            continue;
        x = *ana_affine(f, LLVMGetIncomingValue(v, k));
        if (!x.known) {
            *e = x;
            return;
        }
        if (seen++ == 0) {
            first = x;
        } else if (!ana_expr_equal(&first, &x)) {
            ana_expr_set_unknown(e, "value differs between paths (phi)");
            return;
        }
    }
    if (!seen)
        ana_expr_set_unknown(e, "phi without reachable inputs");
    else
        *e = first;
}

static void ana_affine_compute(ana_fn *f, LLVMValueRef v, ana_expr *e)
{
    LLVMTypeRef ty = LLVMTypeOf(v);
    LLVMOpcode op;
    ana_expr a, b;
    int p;

    if (LLVMGetTypeKind(ty) != LLVMIntegerTypeKind) {
        ana_expr_set_unknown(e, "not an integer value");
        return;
    }
    if (LLVMIsAConstantInt(v)) {
        unsigned w = LLVMGetIntTypeWidth(ty);
        if (w > 64)
            ana_expr_set_unknown(e, "constant wider than 64 bits");
        else
            ana_expr_set_const(e, w == 1 ? (int64_t)LLVMConstIntGetZExtValue(v)
                                         : LLVMConstIntGetSExtValue(v));
        return;
    }
    if (LLVMIsAArgument(v)) {
        p = ana_param_index(f, v);
        if (p < 0 || p > 255)
            ana_expr_set_unknown(e, "parameter not of this kernel");
        else
            ana_expr_set_sym(e, ana_sym_make(ANA_SYM_ARG, (unsigned)p));
        return;
    }
    if (LLVMIsAUndefValue(v) || LLVMIsAPoisonValue(v)) {
        ana_expr_set_unknown(e, "undefined value");
        return;
    }
    if (!ana_value_opcode(v, &op)) {
        ana_expr_set_unknown(e, "not an instruction");
        return;
    }
    switch (op) {
    case LLVMAdd:
    case LLVMSub:
        a = *ana_affine(f, LLVMGetOperand(v, 0));
        b = *ana_affine(f, LLVMGetOperand(v, 1));
        ana_expr_add(e, &a, &b, op == LLVMAdd ? 1 : -1);
        return;
    case LLVMMul:
        a = *ana_affine(f, LLVMGetOperand(v, 0));
        b = *ana_affine(f, LLVMGetOperand(v, 1));
        ana_expr_mul(e, &a, &b);
        return;
    case LLVMShl: {
        LLVMValueRef k = LLVMGetOperand(v, 1);
        unsigned long long sh;
        if (!LLVMIsAConstantInt(k) || (sh = LLVMConstIntGetZExtValue(k)) > 62) {
            ana_expr_set_unknown(e, "non-affine operation shl");
            return;
        }
        a = *ana_affine(f, LLVMGetOperand(v, 0));
        ana_expr_scale(e, &a, (int64_t)1 << sh);
        return;
    }
    case LLVMOr: {
        unsigned ci;
        if (!ana_or_is_add(v, &ci)) {
            ana_expr_set_unknown(e, "non-affine operation or");
            return;
        }
        a = *ana_affine(f, LLVMGetOperand(v, 0));
        b = *ana_affine(f, LLVMGetOperand(v, 1));
        ana_expr_add(e, &a, &b, 1);
        return;
    }
    case LLVMAnd:
        if (ana_is_wide_mask(LLVMGetOperand(v, 1))) {
            *e = *ana_affine(f, LLVMGetOperand(v, 0));
            return;
        }
        ana_expr_set_unknown(e, "non-affine operation and");
        return;
    case LLVMZExt:
    case LLVMSExt:
    case LLVMTrunc:
    case LLVMFreeze:
        *e = *ana_affine(f, LLVMGetOperand(v, 0));
        return;
    case LLVMSelect:
        a = *ana_affine(f, LLVMGetOperand(v, 1));
        b = *ana_affine(f, LLVMGetOperand(v, 2));
        if (ana_expr_equal(&a, &b))
            *e = a;
        else if (!a.known || !b.known)
            *e = !a.known ? a : b;
        else
            ana_expr_set_unknown(e, "select between different values");
        return;
    case LLVMPHI:
        ana_affine_phi(f, v, e);
        return;
    case LLVMCall:
        ana_affine_call(f, v, e);
        return;
    case LLVMLoad:
        ana_expr_set_unknown(e, "index loaded from memory");
        return;
    case LLVMFPToSI:
    case LLVMFPToUI:
        ana_expr_set_unknown(e, "index computed from a floating-point value");
        return;
    case LLVMPtrToInt:
        ana_expr_set_unknown(e, "pointer converted to an integer");
        return;
    case LLVMICmp:
        ana_expr_set_unknown(e, "comparison result used as a value");
        return;
    case LLVMExtractElement:
    case LLVMExtractValue:
        ana_expr_set_unknown(e, "element of a vector or aggregate");
        return;
    default:
        ana_affine_unknown(f, e, "non-affine operation %s", ana_opcode_name(op));
        return;
    }
}

const ana_expr *ana_affine(ana_fn *f, LLVMValueRef v)
{
    size_t idx;
    ana_expr e, *slot;

    if (ana_pmap_get(&f->memo, v, &idx))
        return ANA_VEC_AT(&f->exprs, ana_expr, idx);
    if (f->depth >= ANA_MAX_DEPTH)
        return &ana_expr_too_deep;
    slot = ana_vec_push(&f->exprs);
    if (!slot) {
        f->nomem = 1;
        return &ana_expr_nomem;
    }
    idx = f->exprs.n - 1;
    /* seen again while being computed: a cycle through a phi */
    ana_expr_set_unknown(slot, "value depends on itself (loop-carried)");
    if (ana_pmap_put(&f->memo, v, idx) < 0) {
        f->nomem = 1;
        return &ana_expr_nomem;
    }
    f->depth++;
    ana_affine_compute(f, v, &e);
    f->depth--;
    *ANA_VEC_AT(&f->exprs, ana_expr, idx) = e;
    return ANA_VEC_AT(&f->exprs, ana_expr, idx);
}
