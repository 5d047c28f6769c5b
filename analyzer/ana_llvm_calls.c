/* ana_llvm_calls.c — memory accesses made by calls: LLVM's memcpy,
 * memmove and memset, OpenCL atomics, vloadN/vstoreN (and the half
 * variants), async_work_group_copy, image reads and writes, the math
 * builtins that write through a pointer, and any other call given an
 * argument pointer (then an unknown read and write). Also counts calls,
 * barriers, atomics and math as features. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana_llvm_int.h"

static void ana_access_bytes(ana_walk *w, LLVMValueRef ptr, int is_write, LLVMValueRef len,
                             unsigned long long elem, int *loop_idx)
{
    ana_expr n = *ana_affine(w->f, len), extra;
    int64_t c;

    ana_expr_scale(&n, &n, (int64_t)elem);
    if (ana_expr_const_value(&n, &c) && c > 0 && c <= 0xffffffffll) {
        ana_ptr_access(w, ptr, is_write, 0, (unsigned long long)c, NULL);
        return;
    }
    if (*loop_idx < 0)
        *loop_idx = ana_loop_add_bytes(w->f, &n, w->block);
    if (*loop_idx < 0) {
        ana_expr_set_unknown(&extra, "copy of a variable length (too many loops)");
        ana_ptr_access(w, ptr, is_write, 0, 1, &extra);
        return;
    }
    ana_expr_set_sym(&extra, ana_sym_make(ANA_SYM_LOOP, (unsigned)*loop_idx));
    ana_ptr_access(w, ptr, is_write, 0, 1, &extra);
}

/* vloadN / vstoreN / vload_halfN / vstore_halfN / vloada_halfN ... */
static int ana_vload_store(ana_walk *w, const char *name, LLVMValueRef call)
{
    int is_store = !strncmp(name, "vstore", 6);
    const char *p = name + (is_store ? 6 : 5);
    unsigned long long n = 0, esize, mult;
    int half = 0, aligned = 0;
    LLVMValueRef data, offset, ptr;
    LLVMTypeRef ty;
    ana_expr idx;

    if (!is_store && strncmp(name, "vload", 5))
        return 0;
    if (!strncmp(p, "a_half", 6)) {
        half = aligned = 1;
        p += 6;
    } else if (!strncmp(p, "_half", 5)) {
        half = 1;
        p += 5;
    }
    while (*p >= '0' && *p <= '9' && n < 100)
        n = n * 10 + (unsigned long long)(*p++ - '0');
    if (n == 0) {
        if (!half)
            return 0;
        n = 1;
    }
    if (LLVMGetNumArgOperands(call) < (is_store ? 3u : 2u))
        return 0;
    data = is_store ? LLVMGetOperand(call, 0) : call;
    offset = LLVMGetOperand(call, is_store ? 1 : 0);
    ptr = LLVMGetOperand(call, is_store ? 2 : 1);
    ty = LLVMTypeOf(data);
    if (LLVMGetTypeKind(ty) == LLVMVectorTypeKind)
        ty = LLVMGetElementType(ty);
    esize = half ? 2 : ana_store_size(w->f, ty);
    mult = aligned && n == 3 ? 4 : n;
    idx = *ana_affine(w->f, offset);
    ana_expr_scale(&idx, &idx, (int64_t)(mult * esize));
    ana_ptr_access(w, ptr, is_store, 0, n * esize, &idx);
    return 1;
}

/* Bytes of an Itanium-mangled builtin type code at @p t (< @p end). */
static unsigned ana_mangled_type_size(const char *t, const char *end)
{
    unsigned vn = 0, us;
    if (t >= end)
        return 0;
    switch (*t) {
    case 'c': case 'h': case 'a': return 1;
    case 's': case 't': return 2;
    case 'i': case 'j': case 'f': return 4;
    case 'l': case 'm': case 'd': return 8;
    case 'D':
        if (t + 1 < end && t[1] == 'h')
            return 2;
        if (t + 1 >= end || t[1] != 'v')
            return 0;
        for (t += 2; t < end && *t >= '0' && *t <= '9' && vn < 100; t++)
            vn = vn * 10 + (unsigned)(*t - '0');
        if (t >= end || *t != '_' || vn == 0)
            return 0;
        us = ana_mangled_type_size(t + 1, end);
        return us * (vn == 3 ? 4 : vn);
    default:
        return 0;
    }
}

/* Bytes of the pointee of the first address-space-qualified pointer in a
 * mangled name ("_Z21async_work_group_copyPU3AS3fPU3AS1Kfmj" -> 4). */
static unsigned ana_mangled_pointee_size(const char *m, size_t len)
{
    const char *end = m + len, *t = memmem(m, len, "PU3AS", 5);
    if (!t || t + 6 > end)
        return 0;
    t += 6;
    while (t < end && (*t == 'K' || *t == 'V' || *t == 'r'))
        t++;
    return ana_mangled_type_size(t, end);
}

static int ana_starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

void ana_call_access(ana_walk *w, LLVMValueRef call)
{
    ana_fn *f = w->f;
    char name[128];
    unsigned n = LLVMGetNumArgOperands(call), i;
    int loop_idx = -1;
    LLVMTypeRef rty = LLVMTypeOf(call);

    ana_callee_name(call, name, sizeof name);
    if (ana_starts(name, "llvm.")) {
        if ((ana_starts(name, "llvm.memcpy") || ana_starts(name, "llvm.memmove")) && n >= 3) {
            ana_access_bytes(w, LLVMGetOperand(call, 0), 1, LLVMGetOperand(call, 2), 1, &loop_idx);
            ana_access_bytes(w, LLVMGetOperand(call, 1), 0, LLVMGetOperand(call, 2), 1, &loop_idx);
        } else if (ana_starts(name, "llvm.memset") && n >= 3) {
            ana_access_bytes(w, LLVMGetOperand(call, 0), 1, LLVMGetOperand(call, 2), 1, &loop_idx);
        } else if (ana_starts(name, "llvm.fmuladd") || ana_starts(name, "llvm.fma")) {
            f->feat.float_ops += 2;
        }
        return;
    }
    if (ana_starts(name, "get_") || !strcmp(name, "prefetch") ||
        !strcmp(name, "wait_group_events"))
        return;
    if (!strcmp(name, "barrier") || !strcmp(name, "work_group_barrier")) {
        f->feat.barriers++;
        return;
    }
    if ((ana_starts(name, "atomic_") || ana_starts(name, "atom_")) && n >= 1) {
        unsigned long long size = ana_store_size(f, rty);
        if (size == 0 && n >= 2)
            size = ana_store_size(f, LLVMTypeOf(LLVMGetOperand(call, 1)));
        f->feat.atomics++;
        ana_ptr_access(w, LLVMGetOperand(call, 0), 1, 1, size ? size : 4, NULL);
        return;
    }
    f->feat.calls++;
    if (LLVMGetTypeKind(rty) == LLVMVectorTypeKind)
        rty = LLVMGetElementType(rty);
    if (LLVMGetTypeKind(rty) == LLVMFloatTypeKind || LLVMGetTypeKind(rty) == LLVMDoubleTypeKind ||
        LLVMGetTypeKind(rty) == LLVMHalfTypeKind)
        f->feat.float_ops++;
    if (ana_vload_store(w, name, call))
        return;
    if (ana_starts(name, "async_work_group_copy") && n >= 3) {
        /* (dst, src, num_elements, event); opaque pointers do not keep the
         * element type, the mangled name does */
        LLVMValueRef callee = LLVMGetCalledValue(call);
        size_t len = 0;
        const char *mangled = callee ? LLVMGetValueName2(callee, &len) : NULL;
        unsigned long long es = mangled ? ana_mangled_pointee_size(mangled, len) : 0;
        if (es == 0) {
            ana_expr unk;
            ana_expr_set_unknown(&unk, "async copy of an unknown element type");
            ana_ptr_access(w, LLVMGetOperand(call, 0), 1, 0, 1, &unk);
            ana_ptr_access(w, LLVMGetOperand(call, 1), 0, 0, 1, &unk);
            return;
        }
        ana_access_bytes(w, LLVMGetOperand(call, 0), 1, LLVMGetOperand(call, 2), es, &loop_idx);
        ana_access_bytes(w, LLVMGetOperand(call, 1), 0, LLVMGetOperand(call, 2), es, &loop_idx);
        return;
    }
    if ((ana_starts(name, "read_image") || ana_starts(name, "write_image")) && n >= 2) {
        int wr = name[0] == 'w';
        ana_expr unk;
        ana_expr_set_unknown(&unk, "image access (coordinates not modeled)");
        ana_ptr_access(w, LLVMGetOperand(call, 0), wr, 0,
                   ana_store_size(f, wr ? LLVMTypeOf(LLVMGetOperand(call, n - 1)) : LLVMTypeOf(call)),
                   &unk);
        return;
    }
    if ((!strcmp(name, "fract") || !strcmp(name, "modf") || !strcmp(name, "sincos") ||
         !strcmp(name, "frexp") || !strcmp(name, "lgamma_r") || !strcmp(name, "remquo")) &&
        n >= 2) {
        /* fract, modf, sincos write a value of the result's type; frexp,
         * lgamma_r, remquo an int (vector) with as many elements */
        LLVMTypeRef t = LLVMTypeOf(call);
        unsigned long long size = ana_store_size(f, t);
        if (!strcmp(name, "frexp") || !strcmp(name, "lgamma_r") || !strcmp(name, "remquo"))
            size = 4ull * (LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 1);
        ana_ptr_access(w, LLVMGetOperand(call, n - 1), 1, 0, size, NULL);
        return;
    }
    /* anything else given a pointer may read and write through it */
    for (i = 0; i < n; i++) {
        LLVMValueRef a = LLVMGetOperand(call, i);
        ana_expr unk;
        const char *r;
        if (LLVMGetTypeKind(LLVMTypeOf(a)) != LLVMPointerTypeKind)
            continue;
        r = ana_arena_printf(f->out, "pointer passed to %s()", name[0] ? name : "a function");
        ana_expr_set_unknown(&unk, r ? r : "pointer passed to a function");
        ana_ptr_access(w, a, 0, 0, 1, &unk);
        ana_ptr_access(w, a, 1, 0, 1, &unk);
    }
}

/* Counts @p inst into the kernel's and its loop's features. */
