/* ana_llvm_entry.c — the entry point of libclrr-ana.so: compile the source
 * with clang-16 (-O0, every function made always-inline), read the bitcode
 * in memory, simplify it with LLVM's O1 pipeline without unrolling or
 * vectorization (so loops and indexing stay as written), and analyze every
 * kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "analyzer/ana_llvm_int.h"

#define ANA_EXPORT __attribute__((visibility("default")))

/* The first error LLVM reports while reading the bitcode. */
typedef struct ana_diag {
    char msg[256];
    int have;
} ana_diag;

static void ana_diag_handler(LLVMDiagnosticInfoRef di, void *ctx)
{
    ana_diag *d = ctx;
    char *s;
    if (d->have || LLVMGetDiagInfoSeverity(di) != LLVMDSError)
        return;
    s = LLVMGetDiagInfoDescription(di);
    snprintf(d->msg, sizeof d->msg, "%s", s ? s : "error");
    LLVMDisposeMessage(s);
    d->have = 1;
}

/* Removes noinline/optnone and adds alwaysinline on every definition, so
 * that helper functions (which may take argument pointers) are analyzed
 * inside the kernels that call them. */
static void ana_force_inline(LLVMContextRef ctx, LLVMModuleRef mod)
{
    unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
    unsigned optnone = LLVMGetEnumAttributeKindForName("optnone", 7);
    unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    LLVMValueRef fn;

    for (fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        if (LLVMIsDeclaration(fn))
            continue;
        LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, noinline);
        LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, optnone);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(ctx, always, 0));
    }
}

static ana_status ana_simplify(LLVMModuleRef mod, char *err, size_t err_cap)
{
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e;

    LLVMPassBuilderOptionsSetLoopUnrolling(opts, 0);
    LLVMPassBuilderOptionsSetLoopVectorization(opts, 0);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, 0);
    LLVMPassBuilderOptionsSetLoopInterleaving(opts, 0);
    e = LLVMRunPasses(mod, "default<O1>", NULL, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (e) {
        char *m = LLVMGetErrorMessage(e);
        snprintf(err, err_cap, "LLVM passes failed: %s", m ? m : "?");
        LLVMDisposeErrorMessage(m);
        return ANA_ERR_COMPILE;
    }
    return ANA_OK;
}

ANA_EXPORT ana_status ana_llvm_analyze(const ana_llvm_request *req, ana_program **out,
                                       char *err, size_t err_cap);

ana_status ana_llvm_analyze(const ana_llvm_request *req, ana_program **out, char *err,
                            size_t err_cap)
{
    ana_status st = ANA_OK;
    ana_compiled cc = { 0 };
    LLVMContextRef ctx = NULL;
    LLVMModuleRef mod = NULL;
    LLVMMemoryBufferRef buf = NULL;
    ana_program *p = NULL;
    ana_diag diag = { .have = 0 };
    LLVMValueRef fn;
    unsigned nk = 0;
    char dummy[1];

    if (!err || err_cap == 0) {
        err = dummy;
        err_cap = sizeof dummy;
    }
    err[0] = '\0';
    if (!req || !out || req->abi != ANA_LLVM_ABI_VERSION) {
        snprintf(err, err_cap, "libclrr-ana.so: ABI %u expected, caller has %u",
                 ANA_LLVM_ABI_VERSION, req ? req->abi : 0);
        return ANA_ERR_ARG;
    }
    *out = NULL;
    st = ana_compile(req->source, req->len, req->options, &cc, err, err_cap);
    if (st != ANA_OK)
        goto out;
    ctx = LLVMContextCreate();
    LLVMContextSetDiagnosticHandler(ctx, ana_diag_handler, &diag);
    buf = LLVMCreateMemoryBufferWithMemoryRange((const char *)cc.bitcode, cc.len, "clrr", 0);
    if (!ctx || !buf) {
        st = ANA_ERR_NOMEM;
        goto out;
    }
    if (LLVMParseBitcodeInContext2(ctx, buf, &mod)) {
        snprintf(err, err_cap, "cannot read clang's bitcode: %s",
                 diag.have ? diag.msg : "invalid bitcode");
        mod = NULL;
        st = ANA_ERR_COMPILE;
        goto out;
    }
    ana_force_inline(ctx, mod);
    st = ana_simplify(mod, err, err_cap);
    if (st != ANA_OK)
        goto out;
    p = calloc(1, sizeof *p);
    if (!p) {
        st = ANA_ERR_NOMEM;
        goto out;
    }
    for (fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        nk += ana_is_kernel(ctx, fn);
    p->kernels = ana_arena_alloc(&p->arena, (nk + 1) * sizeof *p->kernels);
    p->notes = ana_arena_strdup(&p->arena, cc.notes);
    if (!p->kernels || !p->notes) {
        st = ANA_ERR_NOMEM;
        goto out;
    }
    for (fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        if (!ana_is_kernel(ctx, fn))
            continue;
        if (ana_kernel_build(&p->arena, ctx, mod, fn, &p->kernels[p->nkernels]) < 0) {
            st = ANA_ERR_NOMEM;
            goto out;
        }
        p->nkernels++;
    }
out:
    if (st == ANA_ERR_NOMEM && !err[0])
        snprintf(err, err_cap, "out of memory");
    if (mod)
        LLVMDisposeModule(mod);
    if (buf)
        LLVMDisposeMemoryBuffer(buf);
    if (ctx)
        LLVMContextDispose(ctx);
    free(cc.bitcode);
    free(cc.notes);
    if (st == ANA_OK) {
        *out = p;
    } else if (p) {
        ana_arena_release(&p->arena);
        free(p);
    }
    return st;
}
