/* ana.h — the clrr analyzer: offline understanding of a trace.
 *
 * Two parts, one header:
 *
 *  1. Kernel analysis (this section). An OpenCL C program, with its build
 *     options, is compiled by Clang 16 to LLVM IR (spir64) and the IR is
 *     analyzed with the LLVM C API. The result is a plain-C summary per
 *     kernel: what each argument is and how it is accessed, and for each
 *     memory access its byte offset as an affine form of work-item ids,
 *     launch sizes, scalar arguments and bounded loop counters (or
 *     "unknown", with a reason), plus the guards under which it executes.
 *     The LLVM part lives in build/lib/libclrr-ana.so, which `clrr` loads
 *     on first use (dlopen), so that `clrr` itself (record, replay, ...)
 *     never needs LLVM at run time. Everything that evaluates a summary
 *     against one launch (regions, contiguity, features) is plain C.
 *
 *  2. Trace model, dependency graph, statistics, timeline (second section).
 *
 * Error convention: functions returning ana_status return ANA_OK (0) or a
 * negative ANA_ERR_*; those that take (err, err_cap) write a one-line reason
 * there. Summaries are immutable once built and may be read from several
 * threads; building them is not thread-safe.
 */
#ifndef CLRR_ANA_H
#define CLRR_ANA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ana_status {
    ANA_OK = 0,
    ANA_ERR_NOMEM = -1,
    ANA_ERR_ARG = -2,          /* bad argument from the caller */
    ANA_ERR_COMPILE = -3,      /* Clang rejected the source (message in err) */
    ANA_ERR_UNAVAILABLE = -4,  /* libclrr-ana.so or clang-16 cannot be loaded/run */
    ANA_ERR_TRACE = -5,        /* the trace cannot be read or is inconsistent */
    ANA_ERR_IO = -6            /* an output file cannot be written */
} ana_status;

/*! ana_strerror() : @return a static string naming @p s. Thread-safe. */
const char *ana_strerror(ana_status s);

/* ======================================================== kernel analysis */

/* What a kernel argument is. */
typedef enum ana_arg_kind {
    ANA_ARG_GLOBAL = 0,   /* __global pointer (a buffer, or SVM) */
    ANA_ARG_CONSTANT,     /* __constant pointer */
    ANA_ARG_LOCAL,        /* __local pointer (size given at launch) */
    ANA_ARG_SCALAR,       /* by-value scalar (or vector/struct, see type) */
    ANA_ARG_IMAGE,        /* image1d/2d/3d/... */
    ANA_ARG_SAMPLER,
    ANA_ARG_PIPE,
    ANA_ARG_OTHER
} ana_arg_kind;

/* How a pointer or image argument is used by the kernel. */
typedef enum ana_access {
    ANA_ACC_NONE = 0,     /* never read nor written */
    ANA_ACC_READ = 1,
    ANA_ACC_WRITE = 2,
    ANA_ACC_RW = 3
} ana_access;

/* A symbol an affine form may use. For the id and size symbols, @c index is
 * the dimension (0..2); for ANA_SYM_ARG the kernel argument index (a scalar
 * argument); for ANA_SYM_LOOP an index into ana_kernel.loops. */
typedef enum ana_sym_kind {
    ANA_SYM_NONE = 0,
    ANA_SYM_GLOBAL_ID,    /* get_global_id(d) */
    ANA_SYM_LOCAL_ID,     /* get_local_id(d) */
    ANA_SYM_GROUP_ID,     /* get_group_id(d) */
    ANA_SYM_GLOBAL_SIZE,  /* get_global_size(d) */
    ANA_SYM_LOCAL_SIZE,   /* get_local_size(d) */
    ANA_SYM_NUM_GROUPS,   /* get_num_groups(d) */
    ANA_SYM_GLOBAL_OFFSET,/* get_global_offset(d) */
    ANA_SYM_ARG,          /* value of a scalar kernel argument */
    ANA_SYM_LOOP          /* a loop counter (its range is in ana_loop) */
} ana_sym_kind;

typedef struct ana_sym {
    uint8_t kind;         /* ana_sym_kind */
    uint8_t index;
} ana_sym;

/* One term: coef * a * b, where a and/or b may be ANA_SYM_NONE (then the
 * term is coef * a, or the constant coef). Two factors cover the forms
 * OpenCL kernels index with (y * n + x, row * N + k, group * TS + lid). */
typedef struct ana_term {
    int64_t coef;
    ana_sym a, b;
} ana_term;

/* An affine form: the sum of its terms. known == 0: not affine (the
 * reason says why: "index loaded from memory", "pointer cast not followed",
 * "non-affine operation srem", ...). */
#define ANA_MAX_TERMS 8
typedef struct ana_expr {
    int known;
    unsigned nterms;
    ana_term terms[ANA_MAX_TERMS];
    const char *reason;   /* static or owned by the program; NULL when known */
} ana_expr;

/* A loop counter: it takes the values start, start+step, ... while < end
 * (or > end for a negative step). start/end are affine forms (of ids, sizes
 * and arguments); known == 0 in either means the range is unknown. */
typedef struct ana_loop {
    ana_expr start, end;
    int64_t step;         /* 0: unknown */
    unsigned depth;       /* 1 for an outermost loop */
} ana_loop;

/* A guard: the access executes only when (expr CMP 0) holds. Guards come from
 * the conditions of enclosing branches (and early returns) that the analysis
 * could express as affine comparisons; other conditions are not listed and
 * the access is treated as possibly executing. */
typedef enum ana_cmp { ANA_CMP_LT, ANA_CMP_LE, ANA_CMP_GT, ANA_CMP_GE, ANA_CMP_EQ, ANA_CMP_NE } ana_cmp;
typedef struct ana_guard {
    ana_expr expr;
    uint8_t cmp;          /* ana_cmp, comparing expr with 0 */
} ana_guard;

/* One memory access through a pointer argument (or an image access). */
typedef struct ana_mem_access {
    unsigned arg;         /* kernel argument index */
    int is_write;         /* 1 store (atomics count as read and write: is_atomic) */
    int is_atomic;
    unsigned size;        /* bytes accessed */
    ana_expr offset;      /* byte offset from the argument's base pointer */
    unsigned nguards;
    const ana_guard *guards;
    unsigned line;        /* source line when known, else 0 */
} ana_mem_access;

typedef struct ana_arg {
    const char *name;     /* from kernel arg info; "" when unknown */
    const char *type;     /* OpenCL C type spelling, e.g. "float*", "uint", "image2d_t" */
    uint8_t kind;         /* ana_arg_kind */
    uint8_t access;       /* ana_access: union of all accesses (images: from the calls) */
    unsigned elem_size;   /* pointee size in bytes for pointers, value size for scalars */
    int is_const;         /* declared const (pointers) */
    int analyzable;       /* 1: every access's offset is known */
} ana_arg;

/* Static code features of a kernel (counts of IR instructions, after the
 * analysis's simplification passes; per-launch features in ana_features). */
typedef struct ana_static_features {
    unsigned int_ops, float_ops, loads, stores, global_loads, global_stores,
             local_loads, local_stores, branches, barriers, atomics, calls, loops;
} ana_static_features;

typedef struct ana_kernel {
    const char *name;
    unsigned nargs;
    const ana_arg *args;
    unsigned naccesses;
    const ana_mem_access *accesses;
    unsigned nloops;
    const ana_loop *loops;
    ana_static_features features;
    const char *unsupported;  /* NULL, or why the kernel as a whole is not analyzed */
} ana_kernel;

typedef struct ana_program ana_program;

/*! ana_program_analyze() : compiles @p source (@p len bytes, not necessarily
 *  NUL-terminated) with @p options (recorded build options; NULL = none) and
 *  analyzes every kernel in it. On success *out owns everything the returned
 *  kernels point to. @return ANA_OK; ANA_ERR_COMPILE with the first compiler
 *  error in @p err; ANA_ERR_UNAVAILABLE when the LLVM part cannot be loaded. */
ana_status ana_program_analyze(const char *source, size_t len, const char *options,
                               ana_program **out, char *err, size_t err_cap);
/*! ana_program_free() : frees @p p and its kernels. Accepts NULL. */
void ana_program_free(ana_program *p);
/*! ana_program_kernel_count() / ana_program_kernel() / ana_program_find() :
 *  the kernels, in source order; find returns NULL when @p name is absent. */
unsigned ana_program_kernel_count(const ana_program *p);
const ana_kernel *ana_program_kernel(const ana_program *p, unsigned i);
const ana_kernel *ana_program_find(const ana_program *p, const char *name);

/*! ana_expr_format() : writes @p e in readable form ("4*gid0 + 4*n*gid1 - 4",
 *  "unknown (index loaded from memory)") into @p dst, using the names of
 *  @p k's arguments. @return the length it needed, like snprintf. */
int ana_expr_format(const ana_kernel *k, const ana_expr *e, char *dst, size_t dst_cap);

/* One launch's values: the NDRange and each argument's value. */
typedef struct ana_argval {
    int known;            /* scalars: value is the argument's value */
    int64_t value;        /* scalars (sign- or zero-extended from the type) */
    uint64_t size;        /* buffers/local: bytes of the buffer or __local
                             allocation; 0 when unknown */
} ana_argval;

typedef struct ana_launch {
    unsigned work_dim;    /* 1..3 */
    uint64_t offset[3];   /* global work offset (0 when not given) */
    uint64_t global[3];   /* global work size (1 for unused dimensions) */
    uint64_t local[3];    /* work-group size; 0 = chosen by the driver */
    unsigned nargs;
    const ana_argval *args;
} ana_launch;

/* A byte region [lo, hi) of a buffer argument, over-approximated. */
typedef struct ana_region {
    int empty;            /* no access of this kind */
    int whole;            /* unknown: the whole buffer (lo = 0, hi = size) */
    uint64_t lo, hi;
} ana_region;

/*! ana_kernel_region() : the bytes of argument @p arg that the work-groups
 *  in the box [group_lo[d], group_hi[d]) (d < work_dim) read and write in
 *  @p l. Guards that bound an id tighten the result; accesses that are
 *  unknown make it whole. With l->local 0, the groups are those of a local
 *  size of 1 in each dimension (group id == global id - offset). @return
 *  ANA_OK or ANA_ERR_ARG (bad argument index, kind or box). */
ana_status ana_kernel_region(const ana_kernel *k, const ana_launch *l, unsigned arg,
                             const uint64_t group_lo[3], const uint64_t group_hi[3],
                             ana_region *read, ana_region *write);

/* Whether the writes of argument @p arg split cleanly across work-groups
 * (SKMD's contiguous kernel): the write regions of disjoint ranges of
 * work-groups are disjoint, and a range's region is contiguous and is the
 * union of its parts. @c linear: in linear group order (dimension 0
 * fastest), i.e. any split into consecutive groups; @c dim[d]: for splits
 * along dimension d only (whole extent in the others). */
typedef struct ana_contiguity {
    int linear;
    int dim[3];
    const char *reason;   /* static; why not (linear), NULL when linear */
} ana_contiguity;

/*! ana_kernel_contiguity() : fills *out for argument @p arg (a pointer
 *  argument the kernel writes) in launch @p l. @return ANA_OK or ANA_ERR_ARG. */
ana_status ana_kernel_contiguity(const ana_kernel *k, const ana_launch *l, unsigned arg,
                                 ana_contiguity *out);

/* Per-launch features: the static counts plus what the launch's constants
 * make computable. */
typedef enum ana_stride { ANA_STRIDE_INVARIANT = 0, ANA_STRIDE_UNIT, ANA_STRIDE_STRIDED,
                          ANA_STRIDE_UNKNOWN, ANA_STRIDE_COUNT } ana_stride;
typedef struct ana_features {
    ana_static_features stat;
    uint64_t work_items, work_groups;
    /* memory accesses by stride class, along get_global_id(0) */
    unsigned accesses_by_stride[ANA_STRIDE_COUNT];
    /* estimated dynamic counts per work-item (loops multiplied by their trip
     * counts when computable; an unknown trip count counts once) */
    double dyn_ops, dyn_loads, dyn_stores;
    unsigned loops_known;     /* loops whose trip count is computable */
    uint64_t max_trip_count;  /* largest computable trip count */
} ana_features;

/*! ana_kernel_features() : fills *out for @p k in launch @p l. */
ana_status ana_kernel_features(const ana_kernel *k, const ana_launch *l, ana_features *out);

/* ============================================ trace model, graph, statistics */

/* (owned by the model/graph section; see analyzer/README.md) */

#ifdef __cplusplus
}
#endif

#endif /* CLRR_ANA_H */
