/* ana_llvm_access.c — memory accesses through kernel arguments: the base
 * argument of each pointer (through GEPs, casts, selects and phis) and the
 * byte offset from it; the walk over every instruction, which records
 * loads, stores and atomics (calls: ana_llvm_calls.c) and counts the static
 * features of the kernel and of each loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana_llvm_int.h"

enum { ANA_BASE_OTHER, ANA_BASE_ARG, ANA_BASE_MULTI, ANA_BASE_UNKNOWN, ANA_BASE_SELF };

/* Where a pointer points. */
typedef struct ana_base {
    int kind;
    unsigned arg;            /* ANA_BASE_ARG */
    ana_expr off;            /* ANA_BASE_ARG: byte offset from the argument */
    uint64_t mask;           /* ANA_BASE_MULTI: the arguments it may be */
    const char *reason;      /* ANA_BASE_MULTI / ANA_BASE_UNKNOWN */
} ana_base;

#define ANA_MAX_PTR_DEPTH 64

static void ana_base_set(ana_base *b, int kind, const char *reason)
{
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->reason = reason;
}

/* Byte offset that GEP @p gep adds to its base pointer. */
static void ana_gep_offset(ana_fn *f, LLVMValueRef gep, ana_expr *off)
{
    LLVMTypeRef ty = LLVMGetGEPSourceElementType(gep);
    unsigned n = (unsigned)LLVMGetNumOperands(gep), i;
    ana_expr idx;

    if (n < 2) {
        ana_expr_set_const(off, 0);
        return;
    }
    idx = *ana_affine(f, LLVMGetOperand(gep, 1));
    ana_expr_scale(off, &idx, (int64_t)LLVMABISizeOfType(f->td, ty));
    for (i = 2; i < n && off->known; i++) {
        LLVMValueRef op = LLVMGetOperand(gep, i);
        LLVMTypeKind k = LLVMGetTypeKind(ty);
        if (k == LLVMStructTypeKind) {
            ana_expr c;
            unsigned long long fi;
            if (!LLVMIsAConstantInt(op)) {
                ana_expr_set_unknown(off, "variable structure field");
                return;
            }
            fi = LLVMConstIntGetZExtValue(op);
            if (fi >= LLVMCountStructElementTypes(ty)) {
                ana_expr_set_unknown(off, "structure field out of range");
                return;
            }
            ana_expr_set_const(&c, (int64_t)LLVMOffsetOfElement(f->td, ty, (unsigned)fi));
            ana_expr_add(off, off, &c, 1);
            ty = LLVMStructGetTypeAtIndex(ty, (unsigned)fi);
        } else if (k == LLVMArrayTypeKind || k == LLVMVectorTypeKind) {
            ty = LLVMGetElementType(ty);
            idx = *ana_affine(f, op);
            ana_expr_add(off, off, &idx, (int64_t)LLVMABISizeOfType(f->td, ty));
        } else {
            ana_expr_set_unknown(off, "unsupported element access");
        }
    }
}

static void ana_base_combine(ana_base *acc, int *have, const ana_base *b)
{
    if (!*have) {
        *acc = *b;
        *have = 1;
        return;
    }
    if (acc->kind == ANA_BASE_UNKNOWN || b->kind == ANA_BASE_OTHER)
        return;
    if (b->kind == ANA_BASE_UNKNOWN) {
        *acc = *b;
        return;
    }
    if (acc->kind == ANA_BASE_OTHER) {
        if (b->kind == ANA_BASE_ARG) {
            ana_base_set(acc, ANA_BASE_MULTI,
                         "pointer is either an argument or another object");
            acc->mask = (uint64_t)1 << b->arg;
        } else {
            *acc = *b;
        }
        return;
    }
    if (acc->kind == ANA_BASE_ARG && b->kind == ANA_BASE_ARG && acc->arg == b->arg) {
        if (!ana_expr_equal(&acc->off, &b->off) && acc->off.known)
            ana_expr_set_unknown(&acc->off, b->off.known ? "pointer differs between paths"
                                                         : b->off.reason);
        return;
    }
    {
        uint64_t m = (acc->kind == ANA_BASE_ARG ? (uint64_t)1 << acc->arg : acc->mask) |
                     (b->kind == ANA_BASE_ARG ? (uint64_t)1 << b->arg : b->mask);
        ana_base_set(acc, ANA_BASE_MULTI, "pointer selects between arguments");
        acc->mask = m;
    }
}

static void ana_base_of(ana_fn *f, LLVMValueRef p, ana_base *out, unsigned depth,
                        LLVMValueRef *visiting, unsigned nvis)
{
    LLVMOpcode op;
    unsigned i;

    if (depth > ANA_MAX_PTR_DEPTH) {
        ana_base_set(out, ANA_BASE_UNKNOWN, "pointer expression too deep");
        return;
    }
    if (LLVMIsAArgument(p)) {
        for (i = 0; i < f->nparams; i++)
            if (f->params[i] == p)
                break;
        if (i == f->nparams || f->param_byval[i] || i >= 64) {
            ana_base_set(out, i < f->nparams && f->param_byval[i] ? ANA_BASE_OTHER
                                                                   : ANA_BASE_UNKNOWN,
                         "pointer parameter beyond the 64th");
            return;
        }
        ana_base_set(out, ANA_BASE_ARG, NULL);
        out->arg = i;
        ana_expr_set_const(&out->off, 0);
        return;
    }
    if (LLVMIsAGlobalValue(p) || LLVMIsAAllocaInst(p) || LLVMIsAConstantPointerNull(p) ||
        LLVMIsAUndefValue(p)) {
        ana_base_set(out, ANA_BASE_OTHER, NULL);
        return;
    }
    if (LLVMIsAInstruction(p))
        op = LLVMGetInstructionOpcode(p);
    else if (LLVMIsAConstantExpr(p))
        op = LLVMGetConstOpcode(p);
    else {
        ana_base_set(out, ANA_BASE_UNKNOWN, "pointer of unknown origin");
        return;
    }
    switch (op) {
    case LLVMGetElementPtr:
        ana_base_of(f, LLVMGetOperand(p, 0), out, depth + 1, visiting, nvis);
        if (out->kind == ANA_BASE_ARG && out->off.known) {
            ana_expr g;
            ana_gep_offset(f, p, &g);
            ana_expr_add(&out->off, &out->off, &g, 1);
        }
        return;
    case LLVMBitCast:
    case LLVMAddrSpaceCast:
    case LLVMFreeze:
        ana_base_of(f, LLVMGetOperand(p, 0), out, depth + 1, visiting, nvis);
        return;
    case LLVMSelect:
    case LLVMPHI: {
        ana_base acc, b;
        int have = 0, self = 0;
        unsigned n = op == LLVMSelect ? 2 : LLVMCountIncoming(p);
        LLVMValueRef vis[ANA_MAX_PTR_DEPTH + 1];
        for (i = 0; i < nvis; i++) {
            if (visiting[i] == p) {
                ana_base_set(out, ANA_BASE_SELF, NULL);
                return;
            }
            vis[i] = visiting[i];
        }
        vis[nvis] = p;
        for (i = 0; i < n; i++) {
            LLVMValueRef in;
            if (op == LLVMSelect) {
                in = LLVMGetOperand(p, i + 1);
            } else {
                if (ana_block_id(f, LLVMGetIncomingBlock(p, i)) < 0)
                    continue;
                in = LLVMGetIncomingValue(p, i);
            }
            ana_base_of(f, in, &b, depth + 1, vis, nvis + 1);
            if (b.kind == ANA_BASE_SELF)
                self = 1;
            else
                ana_base_combine(&acc, &have, &b);
        }
        if (!have)
            ana_base_set(&acc, ANA_BASE_OTHER, NULL);
        if (self && acc.kind == ANA_BASE_ARG)
            ana_expr_set_unknown(&acc.off, "pointer induction variable");
        *out = acc;
        return;
    }
    case LLVMLoad:
        ana_base_set(out, ANA_BASE_UNKNOWN, "pointer loaded from memory");
        return;
    case LLVMCall:
        ana_base_set(out, ANA_BASE_UNKNOWN, "pointer returned by a call");
        return;
    case LLVMIntToPtr:
        ana_base_set(out, ANA_BASE_UNKNOWN, "pointer made from an integer");
        return;
    default:
        ana_base_set(out, ANA_BASE_UNKNOWN, "pointer of unknown origin");
        return;
    }
}

/* -------------------------------------------------------------- recording */

static void ana_record(ana_walk *w, unsigned arg, int is_write, int is_atomic,
                       unsigned long long size, const ana_expr *off)
{
    ana_fn *f = w->f;
    ana_mem_access *a = ana_vec_push(&f->accesses);
    if (!a) {
        f->nomem = 1;
        return;
    }
    a->arg = arg;
    a->is_write = is_write;
    a->is_atomic = is_atomic;
    a->size = size > 0xffffffffull ? 0xffffffffu : (unsigned)size;
    a->offset = *off;
    a->line = LLVMGetDebugLocLine(w->inst);
    ana_block_guards(f, w->block, &a->guards, &a->nguards);
}

static int ana_kind_matches_as(unsigned kind, unsigned as)
{
    switch (kind) {
    case ANA_ARG_GLOBAL: return as == 1 || as == 4;
    case ANA_ARG_CONSTANT: return as == 2 || as == 4;
    case ANA_ARG_LOCAL: return as == 3 || as == 4;
    default: return 0;
    }
}

static int ana_is_buffer_kind(unsigned kind)
{
    return kind == ANA_ARG_GLOBAL || kind == ANA_ARG_CONSTANT || kind == ANA_ARG_LOCAL;
}

/* Records an access of @p size bytes through @p ptr, at @p extra bytes
 * beyond it (NULL: none). */
void ana_ptr_access(ana_walk *w, LLVMValueRef ptr, int is_write, int is_atomic,
                       unsigned long long size, const ana_expr *extra)
{
    ana_fn *f = w->f;
    ana_base b;
    ana_expr unk;
    unsigned i, as;

    ana_base_of(f, ptr, &b, 0, NULL, 0);
    switch (b.kind) {
    case ANA_BASE_ARG:
        if (!ana_is_buffer_kind(f->param_kind[b.arg]) && f->param_kind[b.arg] != ANA_ARG_IMAGE)
            return;
        if (extra)
            ana_expr_add(&b.off, &b.off, extra, 1);
        ana_record(w, b.arg, is_write, is_atomic, size, &b.off);
        return;
    case ANA_BASE_MULTI:
        ana_expr_set_unknown(&unk, b.reason);
        for (i = 0; i < f->nparams && i < 64; i++)
            if (b.mask & ((uint64_t)1 << i))
                ana_record(w, i, is_write, is_atomic, size, &unk);
        return;
    case ANA_BASE_UNKNOWN:
        as = LLVMGetTypeKind(LLVMTypeOf(ptr)) == LLVMPointerTypeKind
             ? LLVMGetPointerAddressSpace(LLVMTypeOf(ptr)) : 4;
        ana_expr_set_unknown(&unk, b.reason);
        for (i = 0; i < f->nparams; i++)
            if (ana_kind_matches_as(f->param_kind[i], as))
                ana_record(w, i, is_write, is_atomic, size, &unk);
        return;
    default:
        return;
    }
}

unsigned long long ana_store_size(ana_fn *f, LLVMTypeRef ty)
{
    return LLVMGetTypeKind(ty) == LLVMVoidTypeKind ? 0 : LLVMStoreSizeOfType(f->td, ty);
}

/* A copy or fill of @p len bytes (times @p elem) through @p ptr. */
static void ana_count(ana_fn *f, LLVMValueRef inst, LLVMOpcode op, int nl)
{
    unsigned as;
    ana_loop *l = NULL;

    if (nl >= 0 && f->nloops[nl].first_counter >= 0)
        l = ANA_VEC_AT(&f->loops, ana_loop, f->nloops[nl].first_counter);
    switch (op) {
    case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMUDiv: case LLVMSDiv: case LLVMURem:
    case LLVMSRem: case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr:
    case LLVMXor: case LLVMICmp:
        f->feat.int_ops++;
        break;
    case LLVMFAdd: case LLVMFSub: case LLVMFMul: case LLVMFDiv: case LLVMFRem: case LLVMFNeg:
    case LLVMFCmp:
        f->feat.float_ops++;
        break;
    case LLVMLoad:
        as = LLVMGetPointerAddressSpace(LLVMTypeOf(LLVMGetOperand(inst, 0)));
        f->feat.loads++;
        f->feat.global_loads += as == 1 || as == 2;
        f->feat.local_loads += as == 3;
        if (l)
            l->loads++;
        break;
    case LLVMStore:
        as = LLVMGetPointerAddressSpace(LLVMTypeOf(LLVMGetOperand(inst, 1)));
        f->feat.stores++;
        f->feat.global_stores += as == 1;
        f->feat.local_stores += as == 3;
        if (l)
            l->stores++;
        break;
    case LLVMAtomicRMW: case LLVMAtomicCmpXchg:
        f->feat.atomics++;
        break;
    case LLVMBr:
        f->feat.branches += LLVMIsConditional(inst) ? 1 : 0;
        break;
    case LLVMSwitch:
        f->feat.branches++;
        break;
    default:
        break;
    }
}

int ana_accesses_find(ana_fn *f)
{
    ana_walk w = { .f = f };
    unsigned b;

    for (b = 0; b < f->nblocks; b++) {
        LLVMValueRef i;
        int nl = f->block_loop[b];
        w.block = b;
        for (i = LLVMGetFirstInstruction(f->blocks[b]); i; i = LLVMGetNextInstruction(i)) {
            LLVMOpcode op = LLVMGetInstructionOpcode(i);
            unsigned ops0 = f->feat.int_ops + f->feat.float_ops;
            w.inst = i;
            ana_count(f, i, op, nl);
            switch (op) {
            case LLVMLoad:
                ana_ptr_access(&w, LLVMGetOperand(i, 0), 0, 0, ana_store_size(f, LLVMTypeOf(i)), NULL);
                break;
            case LLVMStore:
                ana_ptr_access(&w, LLVMGetOperand(i, 1), 1, 0,
                           ana_store_size(f, LLVMTypeOf(LLVMGetOperand(i, 0))), NULL);
                break;
            case LLVMAtomicRMW:
            case LLVMAtomicCmpXchg:
                ana_ptr_access(&w, LLVMGetOperand(i, 0), 1, 1,
                           ana_store_size(f, LLVMTypeOf(LLVMGetOperand(i, 1))), NULL);
                break;
            case LLVMCall:
                ana_call_access(&w, i);
                break;
            default:
                break;
            }
            if (nl >= 0 && f->nloops[nl].first_counter >= 0)
                ANA_VEC_AT(&f->loops, ana_loop, f->nloops[nl].first_counter)->ops +=
                    f->feat.int_ops + f->feat.float_ops - ops0;
            if (f->nomem)
                return -1;
        }
    }
    f->feat.loops = f->nnloops;
    return 0;
}
