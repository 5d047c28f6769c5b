/* ana_llvm_int.h — internals of libclrr-ana.so, the LLVM part of the
 * kernel analysis (analyzer/ana_llvm_*.c). Not a public header; only
 * these files include it (they alone see LLVM's headers).
 *
 *   ana_llvm_entry.c    the entry point: compile, parse, simplify, per kernel
 *   ana_llvm_options.c  the recorded build options clang is given
 *   ana_llvm_compile.c  the clang-16 subprocess
 *   ana_llvm_cond.c     branch conditions as affine comparisons
 *   ana_llvm_util.c     arenas, pointer maps, growable arrays, names
 *   ana_llvm_cfg.c      blocks, dominators, natural loops
 *   ana_llvm_affine.c   affine forms of integer values
 *   ana_llvm_loops.c    loop counters: step, start, end
 *   ana_llvm_access.c   pointer bases, the instruction walk, features
 *   ana_llvm_calls.c    accesses made by builtins and intrinsics
 *   ana_llvm_guards.c   the guards of a block
 *   ana_llvm_kernel.c   kernel arguments (arg-info metadata), features,
 *                       assembly of the ana_kernel
 */
#ifndef CLRR_ANA_LLVM_INT_H
#define CLRR_ANA_LLVM_INT_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "analyzer/ana.h"
#include "analyzer/ana_kernel_int.h"

/* Limits that keep a hostile program from exhausting memory or stack. */
#define ANA_MAX_SOURCE      ((size_t)64 << 20)   /* bytes of source */
#define ANA_MAX_OPTIONS     ((size_t)64 << 10)   /* bytes of build options */
#define ANA_MAX_BITCODE     ((size_t)512 << 20)  /* bytes clang may write */
#define ANA_MAX_STDERR      ((size_t)64 << 10)   /* bytes of diagnostics kept */
#define ANA_COMPILE_TIMEOUT_S 120                /* default; env CLRR_ANA_TIMEOUT */
#define ANA_MAX_FN_INSTS    200000u              /* instructions per kernel */
#define ANA_MAX_DEPTH       256                  /* recursion of value walks */
#define ANA_MAX_ARGS        256u

/* -------------------------------------------------------------- util */

/*! ana_arena_alloc() : @p n zeroed bytes from @p a (16-aligned); NULL on ENOMEM. */
void *ana_arena_alloc(ana_arena *a, size_t n);
/*! ana_arena_strndup() / ana_arena_strdup() : a NUL-terminated copy. */
char *ana_arena_strndup(ana_arena *a, const char *s, size_t n);
char *ana_arena_strdup(ana_arena *a, const char *s);
/*! ana_arena_printf() : a formatted string in @p a, or NULL. */
char *ana_arena_printf(ana_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Open-addressing map from a non-NULL pointer to a size_t (memos, indexes). */
typedef struct ana_pmap {
    const void **keys;
    size_t *vals;
    size_t cap, n;       /* cap: power of two, or 0 */
} ana_pmap;
/*! ana_pmap_get() : 1 and *val when @p key is present. */
int ana_pmap_get(const ana_pmap *m, const void *key, size_t *val);
/*! ana_pmap_put() : inserts or replaces. @return 0, or -1 on ENOMEM. */
int ana_pmap_put(ana_pmap *m, const void *key, size_t val);
void ana_pmap_free(ana_pmap *m);

/* A growable array of fixed-size elements (malloc'ed; freed by the owner). */
typedef struct ana_vec {
    void *data;
    size_t n, cap, elem;
} ana_vec;
/*! ana_vec_push() : appends a zeroed element; returns it, or NULL on ENOMEM. */
void *ana_vec_push(ana_vec *v);
void ana_vec_free(ana_vec *v);
#define ANA_VEC_AT(v, type, i) (&((type *)(v)->data)[(i)])

/*! ana_builtin_name() : the OpenCL name in a mangled builtin "_Z13get_global_idj"
 *  -> "get_global_id" (written into @p dst, truncated to @p cap), or the name
 *  itself when not mangled. @return the length written. */
size_t ana_builtin_name(const char *mangled, size_t len, char *dst, size_t cap);
/*! ana_value_opcode() : the opcode of an instruction or constant expression
 *  @p v into *op. @return 0 for other values. */
int ana_value_opcode(LLVMValueRef v, LLVMOpcode *op);
/*! ana_callee_name() : the called function's name for call @p call into
 *  @p dst (demangled as above); "" for indirect calls. */
void ana_callee_name(LLVMValueRef call, char *dst, size_t cap);
/*! ana_opcode_name() : "add", "udiv", ... for messages. */
const char *ana_opcode_name(LLVMOpcode op);

/* ------------------------------------------------------------ compile */

/* The result of running clang: bitcode, and notes about the options. */
typedef struct ana_compiled {
    unsigned char *bitcode;  /* malloc'ed */
    size_t len;
    char *notes;             /* malloc'ed, "" when none */
} ana_compiled;

/*! ana_options_filter() : the options of @p opts (NULL: none) clang is
 *  given, NUL-separated in *args, and a note per dropped one in *notes
 *  (both malloc'ed, never NULL on success); *has_std when a valid -cl-std
 *  was given. @return the number of accepted options, or -1 on ENOMEM. */
int ana_options_filter(const char *opts, char **args, char **notes, int *has_std);

/*! ana_compile() : runs clang-16 on @p source with the recorded @p options
 *  (filtered, see KERNELS.md) and collects the bitcode it writes.
 *  @return ANA_OK; ANA_ERR_COMPILE (first error line in err);
 *  ANA_ERR_UNAVAILABLE (clang cannot be run); ANA_ERR_ARG (options too
 *  long); ANA_ERR_NOMEM. On success the caller frees out->bitcode/notes. */
ana_status ana_compile(const char *source, size_t len, const char *options,
                       ana_compiled *out, char *err, size_t err_cap);

/* ------------------------------------------------------- per function */

/* A natural loop (blocks indexed in reverse post-order). */
typedef struct ana_nloop {
    unsigned header;
    int parent;              /* enclosing natural loop, -1 */
    unsigned depth;
    uint8_t *in;             /* in[b]: block b belongs to the loop (tmp arena) */
    unsigned nlatches;
    unsigned *latches;
    int first_counter;       /* index into the kernel's ana_loop list, -1 */
    unsigned ops, loads, stores;  /* own blocks only */
} ana_nloop;

/* A loop counter being recognized (parallel to ana_fn.loops). */
typedef struct ana_counter {
    LLVMValueRef phi;        /* NULL: a loop without a recognized counter,
                                or a synthetic byte loop of a copy */
    int nloop;               /* natural loop, -1 for synthetic loops */
} ana_counter;

/* Everything known about the kernel being analyzed. Arrays live in tmp. */
typedef struct ana_fn {
    ana_arena *out;          /* the program's arena (results) */
    ana_arena tmp;           /* released after the kernel */
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMTargetDataRef td;
    LLVMValueRef fn;
    unsigned nparams;
    LLVMValueRef *params;
    uint8_t *param_byval;    /* by-value aggregate (pointer with byval) */
    uint8_t *param_as;       /* address space of pointer parameters */
    /* CFG */
    unsigned nblocks;
    LLVMBasicBlockRef *blocks;   /* reverse post-order; blocks[0] is the entry */
    ana_pmap block_index;
    unsigned *npreds;
    unsigned **preds;
    int *idom;               /* -1 for the entry */
    /* loops */
    unsigned nnloops;
    ana_nloop *nloops;       /* by header order (outer first) */
    int *block_loop;         /* innermost natural loop of each block, -1 */
    /* results being built */
    ana_vec loops;           /* ana_loop */
    ana_vec accesses;        /* ana_mem_access */
    ana_static_features feat;
    /* memo of affine forms: value -> index into exprs */
    ana_pmap memo;
    ana_vec exprs;           /* ana_expr */
    unsigned depth;          /* recursion depth of the value walks */
    uint8_t *param_nonneg;   /* integer parameter of an unsigned type */
    uint8_t *param_kind;     /* ana_arg_kind of each parameter */
    /* loop counters (parallel to loops): phi, natural loop, step form */
    ana_vec counters;        /* ana_counter */
    /* guards per block (ana_block_guards), allocated on first use */
    ana_guard **gcache;
    unsigned *gn;
    uint8_t *gdone;
    const char *unsupported;
    int nomem;               /* an allocation failed somewhere */
} ana_fn;

/* Where the instruction walk is (for recording accesses). */
typedef struct ana_walk {
    ana_fn *f;
    unsigned block;          /* RPO index of the block */
    LLVMValueRef inst;       /* the instruction being walked */
} ana_walk;

/* cfg */
/*! ana_cfg_build() : blocks in RPO, predecessors, dominators, natural
 *  loops. @return 0, or -1 (nomem or too large: fn->unsupported set). */
int ana_cfg_build(ana_fn *f);
/*! ana_block_id() : the RPO index of @p bb, or -1 when unreachable. */
int ana_block_id(const ana_fn *f, LLVMBasicBlockRef bb);
/*! ana_dominates() : 1 when block a dominates block b (indexes). */
int ana_dominates(const ana_fn *f, unsigned a, unsigned b);

/* affine */
/*! ana_affine() : the affine form of integer value @p v (memoized; the
 *  returned pointer stays valid until the next call). */
const ana_expr *ana_affine(ana_fn *f, LLVMValueRef v);
/*! ana_loops_find() : recognizes the loop counters of every natural loop
 *  (outer first) and fills f->loops / f->counters. @return 0 or -1 (nomem). */
int ana_loops_find(ana_fn *f);
/*! ana_loop_add_bytes() : a synthetic loop over the @p len bytes of a copy
 *  or fill in block @p block (start 0, step 1). @return its index or -1. */
int ana_loop_add_bytes(ana_fn *f, const ana_expr *len, unsigned block);
/*! ana_affine_unknown() : makes *e unknown with a reason formatted into the
 *  program's arena (a static fallback when out of memory). */
void ana_affine_unknown(ana_fn *f, ana_expr *e, const char *fmt, const char *arg);
/*! ana_surely_nonneg() : 1 when @p e cannot be negative (ids, sizes,
 *  unsigned arguments, counters counting up from a non-negative start,
 *  non-negative coefficients). */
int ana_surely_nonneg(const ana_fn *f, const ana_expr *e);
/*! ana_strip_int_casts() : @p v without zext/sext/trunc/freeze/and-with-a-
 *  wide-mask around it. */
LLVMValueRef ana_strip_int_casts(LLVMValueRef v);
/*! ana_cond_conjuncts() : splits the condition that holds on an edge
 *  (@p cond taken when @p truth) into comparisons: calls @p fn with each
 *  (icmp instruction, whether it holds true). Recognizes and/or/select of
 *  i1 and xor with true. */
void ana_cond_conjuncts(LLVMValueRef cond, int truth,
                        void (*fn)(void *ctx, LLVMValueRef icmp, int truth), void *ctx,
                        unsigned depth);
/*! ana_icmp_form() : for icmp @p cmp holding when @p truth: *e = lhs - rhs
 *  and *c the comparison with 0. @return 1, or 0 when not affine. */
int ana_icmp_form(ana_fn *f, LLVMValueRef cmp, int truth, ana_expr *e, ana_cmp *c);

/* access */
/*! ana_accesses_find() : every memory access through a kernel argument,
 *  with its offset and guards, into f->accesses; counts features.
 *  @return 0 or -1 (nomem). */
int ana_accesses_find(ana_fn *f);
/*! ana_ptr_access() : records an access of @p size bytes through @p ptr at
 *  @p extra bytes beyond it (NULL: none) for every argument it may reach. */
void ana_ptr_access(ana_walk *w, LLVMValueRef ptr, int is_write, int is_atomic,
                    unsigned long long size, const ana_expr *extra);
/*! ana_store_size() : bytes a value of @p ty occupies in memory (0: void). */
unsigned long long ana_store_size(ana_fn *f, LLVMTypeRef ty);
/*! ana_call_access() : the accesses and features of call @p call. */
void ana_call_access(ana_walk *w, LLVMValueRef call);
/*! ana_block_guards() : the guards of block @p b (cached; in f->out).
 *  @return 0 or -1 (nomem). */
int ana_block_guards(ana_fn *f, unsigned b, const ana_guard **out, unsigned *n);

/* kernel */
/*! ana_kernel_build() : analyzes kernel function @p fn into *k (strings
 *  and arrays in @p out). @return 0, or -1 when out of memory. */
int ana_kernel_build(ana_arena *out, LLVMContextRef ctx, LLVMModuleRef mod,
                     LLVMValueRef fn, ana_kernel *k);
/*! ana_is_kernel() : 1 for a kernel (SPIR_KERNEL or kernel_arg metadata). */
int ana_is_kernel(LLVMContextRef ctx, LLVMValueRef fn);

#endif /* CLRR_ANA_LLVM_INT_H */
