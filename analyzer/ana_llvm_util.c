/* ana_llvm_util.c — arenas, pointer maps, growable arrays and names for
 * the LLVM part of the kernel analysis. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/ana_llvm_int.h"

#define ANA_CHUNK_MIN ((size_t)16 << 10)

void *ana_arena_alloc(ana_arena *a, size_t n)
{
    ana_chunk *c = a->head;
    size_t need = (n + 15) & ~(size_t)15;
    void *p;

    if (n == 0)
        need = 16;
    if (need < n)
        return NULL;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > ANA_CHUNK_MIN ? need : ANA_CHUNK_MIN;
        if (cap > SIZE_MAX - sizeof *c)
            return NULL;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    p = c->data + c->used;
    c->used += need;
    memset(p, 0, need);
    return p;
}

char *ana_arena_strndup(ana_arena *a, const char *s, size_t n)
{
    char *d;
    if (n == SIZE_MAX)
        return NULL;
    d = ana_arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *ana_arena_strdup(ana_arena *a, const char *s)
{
    return ana_arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

char *ana_arena_printf(ana_arena *a, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *d;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    d = ana_arena_alloc(a, (size_t)n + 1);
    if (!d)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}

/* ------------------------------------------------------------ pointer map */

static size_t ana_pmap_hash(const void *key)
{
    uint64_t x = (uint64_t)(uintptr_t)key;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

int ana_pmap_get(const ana_pmap *m, const void *key, size_t *val)
{
    size_t i;
    if (!m->cap || !key)
        return 0;
    for (i = ana_pmap_hash(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) {
            if (val)
                *val = m->vals[i];
            return 1;
        }
    }
    return 0;
}

static int ana_pmap_grow(ana_pmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64, i;
    ana_pmap nm = { NULL, NULL, cap, 0 };

    if (cap < m->cap || cap > SIZE_MAX / sizeof(size_t))
        return -1;
    nm.keys = calloc(cap, sizeof *nm.keys);
    nm.vals = calloc(cap, sizeof *nm.vals);
    if (!nm.keys || !nm.vals) {
        free(nm.keys);
        free(nm.vals);
        return -1;
    }
    for (i = 0; i < m->cap; i++) {
        if (m->keys[i] && ana_pmap_put(&nm, m->keys[i], m->vals[i]) < 0) {
            ana_pmap_free(&nm);   /* cannot happen: nm is large enough */
            return -1;
        }
    }
    ana_pmap_free(m);
    *m = nm;
    return 0;
}

int ana_pmap_put(ana_pmap *m, const void *key, size_t val)
{
    size_t i;
    if (!key)
        return -1;
    if ((m->n + 1) * 2 > m->cap && ana_pmap_grow(m) < 0)
        return -1;
    for (i = ana_pmap_hash(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return 0;
        }
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return 0;
}

void ana_pmap_free(ana_pmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->n = 0;
}

/* -------------------------------------------------------------- vectors */

void *ana_vec_push(ana_vec *v)
{
    void *p;
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        void *d;
        if (cap < v->cap || cap > SIZE_MAX / v->elem)
            return NULL;
        d = realloc(v->data, cap * v->elem);
        if (!d)
            return NULL;
        v->data = d;
        v->cap = cap;
    }
    p = (char *)v->data + v->n * v->elem;
    memset(p, 0, v->elem);
    v->n++;
    return p;
}

void ana_vec_free(ana_vec *v)
{
    free(v->data);
    v->data = NULL;
    v->n = v->cap = 0;
}

/* ---------------------------------------------------------------- names */

size_t ana_builtin_name(const char *mangled, size_t len, char *dst, size_t cap)
{
    size_t n = 0, i = 2, w;
    if (cap == 0)
        return 0;
    if (len > 2 && mangled[0] == '_' && mangled[1] == 'Z' && mangled[2] >= '0' &&
        mangled[2] <= '9') {
        while (i < len && mangled[i] >= '0' && mangled[i] <= '9' && n < 100000)
            n = n * 10 + (size_t)(mangled[i++] - '0');
        if (n <= len - i) {
            mangled += i;
            len = n;
        }
    }
    w = len < cap - 1 ? len : cap - 1;
    memcpy(dst, mangled, w);
    dst[w] = '\0';
    return w;
}

int ana_value_opcode(LLVMValueRef v, LLVMOpcode *op)
{
    if (LLVMIsAInstruction(v)) {
        *op = LLVMGetInstructionOpcode(v);
        return 1;
    }
    if (LLVMIsAConstantExpr(v)) {
        *op = LLVMGetConstOpcode(v);
        return 1;
    }
    return 0;
}

void ana_callee_name(LLVMValueRef call, char *dst, size_t cap)
{
    LLVMValueRef callee = LLVMGetCalledValue(call);
    const char *name;
    size_t len = 0;

    if (cap)
        dst[0] = '\0';
    if (!callee || !LLVMIsAFunction(callee))
        return;
    name = LLVMGetValueName2(callee, &len);
    if (name)
        ana_builtin_name(name, len, dst, cap);
}

const char *ana_opcode_name(LLVMOpcode op)
{
    switch (op) {
    case LLVMAdd: return "add";
    case LLVMSub: return "sub";
    case LLVMMul: return "mul";
    case LLVMUDiv: return "udiv";
    case LLVMSDiv: return "sdiv";
    case LLVMURem: return "urem";
    case LLVMSRem: return "srem";
    case LLVMShl: return "shl";
    case LLVMLShr: return "lshr";
    case LLVMAShr: return "ashr";
    case LLVMAnd: return "and";
    case LLVMOr: return "or";
    case LLVMXor: return "xor";
    case LLVMSelect: return "select";
    case LLVMPHI: return "phi";
    case LLVMLoad: return "load";
    case LLVMCall: return "call";
    case LLVMFPToSI: return "fptosi";
    case LLVMFPToUI: return "fptoui";
    case LLVMPtrToInt: return "ptrtoint";
    case LLVMIntToPtr: return "inttoptr";
    case LLVMExtractElement: return "extractelement";
    case LLVMExtractValue: return "extractvalue";
    case LLVMICmp: return "icmp";
    case LLVMFCmp: return "fcmp";
    case LLVMBitCast: return "bitcast";
    default: return "instruction";
    }
}
