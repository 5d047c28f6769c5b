/* ana_kernel_int.h — the kernel-analysis layout shared by the plain part
 * (analyzer/ana_kernel.c, in libana.a) and the LLVM part
 * (analyzer/ana_llvm_*.c, in libclrr-ana.so). Not a public header.
 *
 * The LLVM part builds an ana_program whose kernels, arguments, accesses,
 * guards, loops and strings all live in the program's arena: a list of
 * malloc'ed chunks. The plain part frees it (ana_program_free) with
 * ana_arena_release() and free(), so both sides must use the same C
 * library allocator (they do: one process, one libc). Nothing in an
 * ana_program points into libclrr-ana.so itself (reasons are copied into
 * the arena), so the library could be unloaded without dangling strings.
 */
#ifndef CLRR_ANA_KERNEL_INT_H
#define CLRR_ANA_KERNEL_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analyzer/ana.h"

/* Bumped whenever ana_program, ana_kernel or the entry point change: the
 * plain part refuses a libclrr-ana.so built for another layout. */
#define ANA_LLVM_ABI_VERSION 1u

/* The symbol libclrr-ana.so exports (the only one). */
#define ANA_LLVM_ENTRY "ana_llvm_analyze"

/* One arena chunk; data follows, aligned for any object. */
typedef struct ana_chunk {
    struct ana_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} ana_chunk;

typedef struct ana_arena {
    ana_chunk *head;      /* newest chunk first */
} ana_arena;

struct ana_program {
    unsigned nkernels;
    ana_kernel *kernels;  /* in the arena */
    const char *notes;    /* in the arena; "" when none */
    ana_arena arena;
};

/* What the plain part passes to the entry point. */
typedef struct ana_llvm_request {
    unsigned abi;         /* ANA_LLVM_ABI_VERSION */
    const char *source;   /* len bytes, not necessarily NUL-terminated */
    size_t len;
    const char *options;  /* recorded build options, NULL = none */
} ana_llvm_request;

/*! The entry point's type: compiles and analyzes @p req->source. On
 *  success *out is a malloc'ed ana_program (freed by ana_program_free).
 *  @return ANA_OK, ANA_ERR_ARG (ABI mismatch, bad input), ANA_ERR_COMPILE,
 *  ANA_ERR_UNAVAILABLE (clang cannot run), ANA_ERR_NOMEM; a one-line
 *  reason in @p err. Not thread-safe with itself. */
typedef ana_status (*ana_llvm_analyze_fn)(const ana_llvm_request *req, ana_program **out,
                                          char *err, size_t err_cap);

/*! ana_arena_release() : frees every chunk of @p a; @p a is then empty. */
static inline void ana_arena_release(ana_arena *a)
{
    ana_chunk *c = a->head;
    while (c) {
        ana_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}


/* ------------------------------------------ affine-form arithmetic (ana_expr.c)
 * Linked into both libana.a and libclrr-ana.so. Forms are kept canonical:
 * no zero coefficients, no repeated (a, b) pair, a product's factors
 * ordered (ana_sym_order(a) >= ana_sym_order(b)), terms sorted by degree
 * (products first) then by their factors, the constant term last. Every
 * function that can fail (more than ANA_MAX_TERMS terms, a coefficient
 * overflow, a product of degree 3) makes the result unknown with a static
 * reason and returns 0. An unknown operand makes the result unknown with
 * the operand's reason. */

/*! ana_sym_make() : the symbol (kind, index). */
static inline ana_sym ana_sym_make(unsigned kind, unsigned index)
{
    ana_sym s;
    s.kind = (uint8_t)kind;
    s.index = (uint8_t)index;
    return s;
}
/*! ana_sym_order() : the key symbols are ordered by (kind, then index). */
static inline unsigned ana_sym_order(ana_sym s)
{
    return (unsigned)s.kind << 8 | s.index;
}
void ana_expr_set_const(ana_expr *e, int64_t c);
void ana_expr_set_sym(ana_expr *e, ana_sym s);
void ana_expr_set_unknown(ana_expr *e, const char *reason);
/*! ana_expr_add() : *dst = a + scale * b (dst may alias a or b). */
int ana_expr_add(ana_expr *dst, const ana_expr *a, const ana_expr *b, int64_t scale);
/*! ana_expr_scale() : *dst = scale * a. */
int ana_expr_scale(ana_expr *dst, const ana_expr *a, int64_t scale);
/*! ana_expr_mul() : *dst = a * b (degree at most 2). */
int ana_expr_mul(ana_expr *dst, const ana_expr *a, const ana_expr *b);
/*! ana_expr_const_value() : 1 and *c when @p e is a known constant. */
int ana_expr_const_value(const ana_expr *e, int64_t *c);
/*! ana_expr_equal() : 1 when both are known and identical. */
int ana_expr_equal(const ana_expr *a, const ana_expr *b);
/*! ana_expr_uses() : 1 when a term of @p e has the symbol @p s. */
int ana_expr_uses(const ana_expr *e, ana_sym s);

/* ---------------------------------- launch evaluation (plain part only) */

/* A closed interval of values; ok == 0: not computable at this launch. */
typedef struct ana_ival {
    int ok;
    int64_t lo, hi;
} ana_ival;

/* Every symbol's range for the work-groups of a box in one launch. */
typedef struct ana_env {
    const ana_kernel *k;
    const ana_launch *l;
    unsigned work_dim;
    uint64_t local[3];       /* effective local size (1 when the launch has 0) */
    uint64_t ngroups[3];
    ana_ival id[ANA_SYM_GLOBAL_OFFSET + 1][3];   /* by ana_sym_kind, dimension */
    ana_ival *args;          /* nargs */
    ana_ival *loops;         /* nloops */
} ana_env;

/*! ana_env_init() : ranges for the groups [group_lo, group_hi) of launch
 *  @p l (NULL box: every group); loop ranges evaluated. @return ANA_OK,
 *  ANA_ERR_ARG (bad launch or box), ANA_ERR_NOMEM. ana_env_free() after. */
ana_status ana_env_init(ana_env *env, const ana_kernel *k, const ana_launch *l,
                        const uint64_t *group_lo, const uint64_t *group_hi);
void ana_env_free(ana_env *env);
/*! ana_env_copy() : *dst = a copy of @p src (arrays duplicated). */
ana_status ana_env_copy(ana_env *dst, const ana_env *src);
/*! ana_sym_ival() : the range of symbol @p s in @p env. */
ana_ival ana_sym_ival(const ana_env *env, ana_sym s);
/*! ana_sym_range() : a pointer to the (tightenable) range of @p s, or NULL. */
ana_ival *ana_sym_range(ana_env *env, ana_sym s);
/*! ana_eval() : the range of @p e over @p env (ok == 0 if unknown/overflow). */
ana_ival ana_eval(const ana_env *env, const ana_expr *e);
/*! ana_env_tighten() : narrows @p env's ranges with the guards. @return 0
 *  when they cannot all hold (the access does not execute), else 1. */
int ana_env_tighten(ana_env *env, const ana_guard *g, unsigned n);
/*! ana_sym_is_varying() : 1 for the symbols that differ between
 *  work-items of one launch (ids in dimensions < work_dim, loop counters). */
int ana_sym_is_varying(const ana_env *env, ana_sym s);
/*! ana_loop_trips() : the trip-count range of loop @p i in @p env; 0 when
 *  not computable. */
int ana_loop_trips(const ana_env *env, unsigned i, uint64_t *lo, uint64_t *hi);

#endif /* CLRR_ANA_KERNEL_INT_H */
