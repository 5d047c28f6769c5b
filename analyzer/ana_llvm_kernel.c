/* ana_llvm_kernel.c — one kernel: its arguments from the arg-info metadata
 * (-cl-kernel-arg-info), the analysis passes over its body, and the
 * assembly of the plain-C ana_kernel in the program's arena. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana_llvm_int.h"

/* The kernel_arg_* metadata of a kernel: operand values per kind. */
typedef struct ana_md {
    LLVMValueRef *addr_space, *access_qual, *type, *base_type, *type_qual, *name;
    unsigned n_addr_space, n_access_qual, n_type, n_base_type, n_type_qual, n_name;
} ana_md;

static LLVMValueRef *ana_md_operands(ana_arena *tmp, LLVMContextRef ctx,
                                     LLVMValueMetadataEntry *md, size_t nmd, const char *kind,
                                     unsigned *n)
{
    unsigned id = LLVMGetMDKindIDInContext(ctx, kind, (unsigned)strlen(kind));
    size_t i;
    *n = 0;
    for (i = 0; i < nmd; i++) {
        LLVMValueRef node;
        LLVMValueRef *ops;
        if (LLVMValueMetadataEntriesGetKind(md, (unsigned)i) != id)
            continue;
        node = LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(md, (unsigned)i));
        if (!LLVMIsAMDNode(node))
            return NULL;
        *n = LLVMGetMDNodeNumOperands(node);
        ops = ana_arena_alloc(tmp, (*n + 1) * sizeof *ops);
        if (!ops) {
            *n = 0;
            return NULL;
        }
        LLVMGetMDNodeOperands(node, ops);
        return ops;
    }
    return NULL;
}

static void ana_md_read(ana_arena *tmp, LLVMContextRef ctx, LLVMValueRef fn, ana_md *m)
{
    size_t nmd = 0;
    LLVMValueMetadataEntry *md = LLVMGlobalCopyAllMetadata(fn, &nmd);
    memset(m, 0, sizeof *m);
    if (!md)
        return;
    m->addr_space = ana_md_operands(tmp, ctx, md, nmd, "kernel_arg_addr_space", &m->n_addr_space);
    m->access_qual = ana_md_operands(tmp, ctx, md, nmd, "kernel_arg_access_qual", &m->n_access_qual);
    m->type = ana_md_operands(tmp, ctx, md, nmd, "kernel_arg_type", &m->n_type);
    m->base_type = ana_md_operands(tmp, ctx, md, nmd, "kernel_arg_base_type", &m->n_base_type);
    m->type_qual = ana_md_operands(tmp, ctx, md, nmd, "kernel_arg_type_qual", &m->n_type_qual);
    m->name = ana_md_operands(tmp, ctx, md, nmd, "kernel_arg_name", &m->n_name);
    LLVMDisposeValueMetadataEntries(md);
}

/* The string operand @p i of @p ops, or "" (length in *len). */
static const char *ana_md_str(LLVMValueRef *ops, unsigned n, unsigned i, unsigned *len)
{
    const char *s = NULL;
    *len = 0;
    if (ops && i < n && ops[i] && LLVMIsAMDString(ops[i]))
        s = LLVMGetMDString(ops[i], len);
    if (!s) {
        *len = 0;
        return "";
    }
    return s;
}

int ana_is_kernel(LLVMContextRef ctx, LLVMValueRef fn)
{
    size_t nmd = 0, i;
    LLVMValueMetadataEntry *md;
    unsigned id;
    int found = 0;

    if (LLVMIsDeclaration(fn))
        return 0;
    if (LLVMGetFunctionCallConv(fn) == LLVMSPIRKERNELCallConv)
        return 1;
    md = LLVMGlobalCopyAllMetadata(fn, &nmd);
    id = LLVMGetMDKindIDInContext(ctx, "kernel_arg_addr_space", 21);
    for (i = 0; md && i < nmd; i++)
        found |= LLVMValueMetadataEntriesGetKind(md, (unsigned)i) == id;
    if (md)
        LLVMDisposeValueMetadataEntries(md);
    return found;
}

/* Bytes of an OpenCL C type named @p t (without '*'), 0 when not known. */
static unsigned ana_type_size(const char *t, size_t len)
{
    static const struct { const char *name; unsigned size; } base[] = {
        { "char", 1 }, { "uchar", 1 }, { "unsigned char", 1 }, { "signed char", 1 },
        { "bool", 1 }, { "short", 2 }, { "ushort", 2 }, { "unsigned short", 2 },
        { "half", 2 }, { "int", 4 }, { "uint", 4 }, { "unsigned int", 4 }, { "float", 4 },
        { "long", 8 }, { "ulong", 8 }, { "unsigned long", 8 }, { "double", 8 },
        { "size_t", 8 }, { "ptrdiff_t", 8 }, { "intptr_t", 8 }, { "uintptr_t", 8 },
    };
    size_t i, n = len;
    unsigned vec = 1;

    while (n > 0 && t[n - 1] >= '0' && t[n - 1] <= '9')
        n--;
    if (n < len) {
        size_t d;
        vec = 0;
        for (d = n; d < len && vec < 100; d++)
            vec = vec * 10 + (unsigned)(t[d] - '0');
        if (vec == 3)
            vec = 4;
        if (vec != 2 && vec != 4 && vec != 8 && vec != 16)
            return 0;
    }
    for (i = 0; i < sizeof base / sizeof base[0]; i++)
        if (strlen(base[i].name) == n && !memcmp(base[i].name, t, n))
            return base[i].size * vec;
    return 0;
}

/* Pointee bytes of a pointer argument: from its type ("float4*"), else
 * from its base type ("float*" behind a typedef; vectors are spelled
 * "float __attribute__((ext_vector_type(4)))*" there). 0 when unknown. */
static unsigned ana_pointee_size(const char *type, unsigned tlen, const char *btype,
                                 unsigned blen)
{
    static const char ext[] = " __attribute__((ext_vector_type(";
    const char *v;
    unsigned n = tlen, size;

    while (n > 0 && (type[n - 1] == '*' || type[n - 1] == ' '))
        n--;
    size = ana_type_size(type, n);
    if (size)
        return size;
    n = blen;
    while (n > 0 && (btype[n - 1] == '*' || btype[n - 1] == ' '))
        n--;
    size = ana_type_size(btype, n);
    v = size ? NULL : memmem(btype, n, ext, sizeof ext - 1);
    if (v) {
        const char *d = v + sizeof ext - 1;
        unsigned long vec = 0;
        while (d < btype + blen && *d >= '0' && *d <= '9' && vec < 100)
            vec = vec * 10 + (unsigned long)(*d++ - '0');
        size = ana_type_size(btype, (unsigned)(v - btype));
        size *= vec == 3 ? 4 : (vec == 2 || vec == 4 || vec == 8 || vec == 16) ? (unsigned)vec : 0;
    }
    return size;
}

static int ana_contains(const char *s, unsigned len, const char *w)
{
    size_t wl = strlen(w);
    return len >= wl && memmem(s, len, w, wl) != NULL;
}

/* Fills args from metadata (or the IR types when absent). */
static int ana_args_fill(ana_fn *f, ana_arg *args)
{
    ana_md m;
    unsigned i, byval = LLVMGetEnumAttributeKindForName("byval", 5);

    ana_md_read(&f->tmp, f->ctx, f->fn, &m);
    for (i = 0; i < f->nparams; i++) {
        ana_arg *a = &args[i];
        LLVMValueRef p = f->params[i];
        LLVMTypeRef ty = LLVMTypeOf(p);
        LLVMAttributeRef bv = LLVMGetEnumAttributeAtIndex(f->fn, i + 1, byval);
        unsigned len, nlen, blen, qlen, as;
        const char *type = ana_md_str(m.type, m.n_type, i, &len);
        const char *btype = ana_md_str(m.base_type, m.n_base_type, i, &blen);
        const char *qual = ana_md_str(m.type_qual, m.n_type_qual, i, &qlen);
        const char *name = ana_md_str(m.name, m.n_name, i, &nlen);
        int is_ptr = LLVMGetTypeKind(ty) == LLVMPointerTypeKind;

        a->name = ana_arena_strndup(f->out, name, nlen);
        a->type = ana_arena_strndup(f->out, type, len);
        if (!a->name || !a->type)
            return -1;
        if (!blen) {
            btype = type;
            blen = len;
        }
        as = is_ptr ? LLVMGetPointerAddressSpace(ty) : 0;
        if (m.addr_space && i < m.n_addr_space && m.addr_space[i] &&
            LLVMIsAConstantInt(m.addr_space[i]))
            as = (unsigned)LLVMConstIntGetZExtValue(m.addr_space[i]);
        f->param_byval[i] = bv != NULL;
        if (ana_contains(btype, blen, "image"))
            a->kind = ANA_ARG_IMAGE;
        else if (ana_contains(btype, blen, "sampler_t"))
            a->kind = ANA_ARG_SAMPLER;
        else if (ana_contains(qual, qlen, "pipe"))
            a->kind = ANA_ARG_PIPE;
        else if (ana_contains(btype, blen, "queue_t") || ana_contains(btype, blen, "clk_event_t") ||
                 ana_contains(btype, blen, "reserve_id_t"))
            a->kind = ANA_ARG_OTHER;
        else if (is_ptr && !bv)
            a->kind = as == 2 ? ANA_ARG_CONSTANT : as == 3 ? ANA_ARG_LOCAL
                    : as == 1 ? ANA_ARG_GLOBAL : ANA_ARG_OTHER;
        else
            a->kind = ANA_ARG_SCALAR;
        f->param_kind[i] = a->kind;
        a->is_const = ana_contains(qual, qlen, "const");
        if (a->kind == ANA_ARG_GLOBAL || a->kind == ANA_ARG_CONSTANT || a->kind == ANA_ARG_LOCAL)
            a->elem_size = ana_pointee_size(type, len, btype, blen);
        else if (a->kind == ANA_ARG_SCALAR) {
            LLVMTypeRef vt = bv ? LLVMGetTypeAttributeValue(bv) : ty;
            a->elem_size = vt ? (unsigned)LLVMABISizeOfType(f->td, vt) : 0;
            f->param_nonneg[i] = (blen > 0 && btype[0] == 'u') ||
                                 (blen == 6 && !memcmp(btype, "size_t", 6)) ||
                                 (blen == 4 && !memcmp(btype, "bool", 4));
        }
    }
    return 0;
}

/* Copies reasons into the program's arena (nothing then points into the
 * library). */
static const char *ana_intern(ana_fn *f, ana_pmap *seen, const char *r)
{
    size_t v;
    char *c;
    if (!r)
        return NULL;
    if (ana_pmap_get(seen, r, &v))
        return (const char *)(uintptr_t)v;
    c = ana_arena_strdup(f->out, r);
    if (!c || ana_pmap_put(seen, r, (size_t)(uintptr_t)c) < 0) {
        f->nomem = 1;
        return "out of memory";
    }
    return c;
}

static void ana_intern_expr(ana_fn *f, ana_pmap *seen, ana_expr *e)
{
    if (!e->known)
        e->reason = ana_intern(f, seen, e->reason);
}

/* Whether loop @p i has a known range (its bounds' loops too). */
static int ana_loop_ranged(const ana_loop *loops, unsigned n, const uint8_t *ranged,
                           const ana_expr *e, unsigned below)
{
    unsigned t;
    if (!e->known)
        return 0;
    for (t = 0; t < e->nterms; t++) {
        const ana_sym *s[2] = { &e->terms[t].a, &e->terms[t].b };
        for (unsigned k = 0; k < 2; k++)
            if (s[k]->kind == ANA_SYM_LOOP && (s[k]->index >= below || s[k]->index >= n ||
                                               !ranged[s[k]->index]))
                return 0;
    }
    (void)loops;
    return 1;
}

static int ana_assemble(ana_fn *f, ana_kernel *k, ana_arg *args)
{
    ana_pmap seen = { 0 };
    unsigned i, nl = (unsigned)f->loops.n, na = (unsigned)f->accesses.n;
    ana_loop *loops = ana_arena_alloc(f->out, (nl + 1) * sizeof *loops);
    ana_mem_access *acc = ana_arena_alloc(f->out, (na + 1) * sizeof *acc);
    uint8_t *ranged = ana_arena_alloc(&f->tmp, nl + 1);
    int rc = -1;

    if (!loops || !acc || !ranged)
        goto out;
    if (nl)
        memcpy(loops, f->loops.data, nl * sizeof *loops);
    if (na)
        memcpy(acc, f->accesses.data, na * sizeof *acc);
    for (i = 0; i < nl; i++) {
        ana_intern_expr(f, &seen, &loops[i].start);
        ana_intern_expr(f, &seen, &loops[i].end);
        ana_intern_expr(f, &seen, &loops[i].step_expr);
        ranged[i] = ana_loop_ranged(loops, nl, ranged, &loops[i].start, i) &&
                    ana_loop_ranged(loops, nl, ranged, &loops[i].end, i) &&
                    loops[i].step_expr.known;
    }
    for (i = 0; i < f->nparams; i++)
        args[i].analyzable = 1;
    for (i = 0; i < na; i++) {
        ana_arg *a = &args[acc[i].arg];
        ana_intern_expr(f, &seen, &acc[i].offset);
        a->access |= acc[i].is_atomic ? ANA_ACC_RW : acc[i].is_write ? ANA_ACC_WRITE
                                                                      : ANA_ACC_READ;
        if (!ana_loop_ranged(loops, nl, ranged, &acc[i].offset, nl))
            a->analyzable = 0;
    }
    k->loops = loops;
    k->nloops = nl;
    k->accesses = acc;
    k->naccesses = na;
    k->features = f->feat;
    rc = f->nomem ? -1 : 0;
out:
    ana_pmap_free(&seen);
    return rc;
}

static unsigned ana_count_insts(LLVMValueRef fn, unsigned limit)
{
    unsigned n = 0;
    LLVMBasicBlockRef bb;
    for (bb = LLVMGetFirstBasicBlock(fn); bb && n <= limit; bb = LLVMGetNextBasicBlock(bb)) {
        LLVMValueRef i;
        for (i = LLVMGetFirstInstruction(bb); i && n <= limit; i = LLVMGetNextInstruction(i))
            n++;
    }
    return n;
}

int ana_kernel_build(ana_arena *out, LLVMContextRef ctx, LLVMModuleRef mod, LLVMValueRef fn,
                     ana_kernel *k)
{
    ana_fn f;
    ana_arg *args;
    size_t len = 0;
    const char *name = LLVMGetValueName2(fn, &len);
    unsigned i;
    int rc = -1;

    memset(&f, 0, sizeof f);
    memset(k, 0, sizeof *k);
    f.out = out;
    f.ctx = ctx;
    f.mod = mod;
    f.td = LLVMGetModuleDataLayout(mod);
    f.fn = fn;
    f.loops.elem = sizeof(ana_loop);
    f.accesses.elem = sizeof(ana_mem_access);
    f.exprs.elem = sizeof(ana_expr);
    f.counters.elem = sizeof(ana_counter);
    f.nparams = LLVMCountParams(fn);
    k->name = ana_arena_strndup(out, name ? name : "", len);
    if (!k->name)
        goto out;
    if (f.nparams > ANA_MAX_ARGS) {
        k->unsupported = "more than 256 arguments";
        f.nparams = 0;
    }
    f.params = ana_arena_alloc(&f.tmp, (f.nparams + 1) * sizeof *f.params);
    f.param_byval = ana_arena_alloc(&f.tmp, f.nparams + 1);
    f.param_nonneg = ana_arena_alloc(&f.tmp, f.nparams + 1);
    f.param_kind = ana_arena_alloc(&f.tmp, f.nparams + 1);
    args = ana_arena_alloc(out, (f.nparams + 1) * sizeof *args);
    if (!f.params || !f.param_byval || !f.param_nonneg || !f.param_kind || !args)
        goto out;
    if (f.nparams)
        LLVMGetParams(fn, f.params);
    k->args = args;
    k->nargs = f.nparams;
    if (ana_args_fill(&f, args) < 0)
        goto out;
    if (!k->unsupported && ana_count_insts(fn, ANA_MAX_FN_INSTS) > ANA_MAX_FN_INSTS)
        k->unsupported = "kernel too large to analyze";
    if (k->unsupported) {
        /* nothing is known: every buffer may be read and written */
        for (i = 0; i < f.nparams; i++) {
            if (args[i].kind != ANA_ARG_SCALAR && args[i].kind != ANA_ARG_SAMPLER)
                args[i].access = ANA_ACC_RW;
            args[i].analyzable = 0;
        }
        rc = 0;
        goto out;
    }
    if (ana_cfg_build(&f) < 0 || ana_loops_find(&f) < 0 || ana_accesses_find(&f) < 0 ||
        ana_assemble(&f, k, args) < 0)
        goto out;
    rc = 0;
out:
    if (rc == 0 && k->unsupported) {
        k->unsupported = ana_arena_strdup(out, k->unsupported);
        if (!k->unsupported)
            rc = -1;
    }
    ana_vec_free(&f.loops);
    ana_vec_free(&f.accesses);
    ana_vec_free(&f.exprs);
    ana_vec_free(&f.counters);
    ana_pmap_free(&f.memo);
    ana_pmap_free(&f.block_index);
    ana_arena_release(&f.tmp);
    return rc;
}
