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

/* ======================================================== kernel analysis
 *
 * How it works, what it recognizes and what it reports as unknown:
 * analyzer/KERNELS.md. The LLVM part is found through CLRR_ANA_LIB (a path
 * to libclrr-ana.so), else <dir of the executable>/../lib/libclrr-ana.so,
 * else <dir>/../lib/clrr/libclrr-ana.so; it runs the clang-16 binary found
 * at build time (CLRR_CLANG overrides it) with a time limit of 120 s
 * (CLRR_ANA_TIMEOUT, in seconds). Offsets assume that index arithmetic does
 * not wrap (values fit their C types). */

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
 * (or > end for a negative step). start/end are affine forms (of ids, sizes,
 * arguments and the counters of enclosing loops); known == 0 in either
 * means the range is unknown. The first value, start, is always taken (a
 * loop whose test comes after its body runs at least once), so the values
 * lie in [start, max(start + 1, end)) for a positive step. Counters of
 * enclosing loops come first in ana_kernel.loops. The analysis also makes
 * a one-trip "loop" over the bytes of a copy or fill whose length is not a
 * constant (memcpy, memset, async_work_group_copy): start 0, step 1, end
 * the length (then the access's size is 1). */
typedef struct ana_loop {
    ana_expr start, end;
    int64_t step;         /* constant step; 0: not a constant (see step_expr) */
    ana_expr step_expr;   /* the step as an affine form (also when constant),
                             e.g. get_local_size(0) in a block-strided loop */
    unsigned depth;       /* 1 for an outermost loop */
    int parent;           /* index of the enclosing loop, -1 when outermost */
    int bytes;            /* 1: the synthetic loop over a copy's bytes */
    const char *name;     /* the source variable when known, else "" */
    /* IR instructions in this loop's own blocks (not in inner loops), for
     * dynamic estimates: all, loads, stores (see ana_static_features). */
    unsigned ops, loads, stores;
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
    unsigned size;        /* bytes accessed (1 per byte of a variable-length
                             copy, whose offset then uses a bytes loop) */
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
    int analyzable;       /* 1: every access's offset is known and every loop
                             counter in it has a known range (so regions are
                             exact up to guards); 1 for unaccessed and scalar
                             arguments */
} ana_arg;

/* Static code features of a kernel (counts of IR instructions, after the
 * analysis's simplification passes; per-launch features in ana_features):
 * int_ops integer arithmetic, logic and comparisons; float_ops
 * floating-point arithmetic and comparisons, fused multiply-adds as 2 and
 * calls returning floating-point values (math builtins) as 1; loads/stores
 * all of them, global_* those in the global and constant address spaces,
 * local_* in the local one; branches conditional branches and switches;
 * barriers barrier()/work_group_barrier(); atomics atomic instructions and
 * builtins; calls other calls (work-item functions, barriers, atomics and
 * LLVM intrinsics excluded); loops natural loops. */
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
 *  NUL-terminated) with @p options (recorded build options; NULL = none;
 *  those clang does not accept are dropped, see ana_program_notes) and
 *  analyzes every kernel in it. On success *out owns everything the returned
 *  kernels point to (*out is NULL on failure). @return ANA_OK;
 *  ANA_ERR_COMPILE with the first compiler error in @p err ("3:12: error:
 *  ..."); ANA_ERR_UNAVAILABLE when the LLVM part cannot be loaded (dlerror's
 *  text in @p err) or clang cannot be run; ANA_ERR_ARG for a NULL @p out,
 *  options over 64 KiB or a source over 64 MiB; ANA_ERR_NOMEM. Takes about
 *  50 ms for a small program, most of it in clang. */
ana_status ana_program_analyze(const char *source, size_t len, const char *options,
                               ana_program **out, char *err, size_t err_cap);
/*! ana_program_free() : frees @p p and its kernels. Accepts NULL. */
void ana_program_free(ana_program *p);
/*! ana_program_kernel_count() / ana_program_kernel() / ana_program_find() :
 *  the kernels, in source order; find returns NULL when @p name is absent. */
unsigned ana_program_kernel_count(const ana_program *p);
const ana_kernel *ana_program_kernel(const ana_program *p, unsigned i);
const ana_kernel *ana_program_find(const ana_program *p, const char *name);

/*! ana_program_notes() : what the analysis adjusted to compile the program
 *  (build options it dropped, "-cl-std" it chose), one note per line; ""
 *  when none. Owned by @p p. */
const char *ana_program_notes(const ana_program *p);

/*! ana_expr_format() : writes @p e in readable form ("4*n*gid1 + 4*gid0 - 4",
 *  "unknown (index loaded from memory)") into @p dst (at most @p dst_cap
 *  bytes, NUL-terminated when dst_cap > 0), using the names of @p k's
 *  arguments and loop counters (@p k may be NULL: arg3, loop0). Symbols:
 *  gidD, lidD, grpD (get_group_id), gszD, lszD, ngrpD, goffD. Products
 *  come first, the constant last. @return the length it needed, like
 *  snprintf. Thread-safe. */
int ana_expr_format(const ana_kernel *k, const ana_expr *e, char *dst, size_t dst_cap);
/*! ana_guard_format() : writes @p g as a comparison with the positive terms
 *  on the left and the constant on the right ("gid0 >= 1", "gid0 < n - 1");
 *  otherwise like ana_expr_format(). */
int ana_guard_format(const ana_kernel *k, const ana_guard *g, char *dst, size_t dst_cap);

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

/* A byte region [lo, hi) of a buffer argument, over-approximated: the hull
 * of the accesses' byte ranges, clamped to [0, size) when the size is
 * known (bytes outside the buffer would be out of bounds anyway). */
typedef struct ana_region {
    int empty;            /* no access of this kind */
    int whole;            /* unknown: the whole buffer (lo = 0, hi = size,
                             which is 0 when the launch gives no size) */
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

/*! ana_kernel_regions() : ana_kernel_region() for every argument at once,
 *  in one pass over the kernel's accesses: read[i] and write[i] for
 *  i < k->nargs (caller-owned arrays of k->nargs each; arguments that are
 *  not buffers, images or local arrays get empty regions). @return ANA_OK,
 *  ANA_ERR_ARG (bad box) or ANA_ERR_NOMEM. Thread-safe for distinct
 *  outputs. */
ana_status ana_kernel_regions(const ana_kernel *k, const ana_launch *l, const uint64_t group_lo[3],
                              const uint64_t group_hi[3], ana_region *read, ana_region *write);

/* Whether the writes of argument @p arg split cleanly across work-groups
 * (SKMD's contiguous kernel): the write regions of disjoint ranges of
 * work-groups are disjoint, and a range's region is contiguous and is the
 * union of its parts. @c linear: in linear group order (dimension 0
 * fastest), i.e. any split into consecutive groups; @c dim[d]: for splits
 * along dimension d only (whole extent in the others; 0 for d >= work_dim).
 * Regions here are the bytes the writes may touch: a write under a
 * condition the analysis cannot express counts as if it happened, so a
 * merge of split outputs must start from the buffer's previous contents.
 * Linear order is only claimed when at most one dimension has more than
 * one group (then it is that dimension's answer). */
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
 * make computable. A stride is the byte distance between the addresses two
 * neighbours along dimension 0 access (invariant: 0; unit: the access's
 * size; unknown: not affine, or moved by a loop whose range depends on
 * the id or is unknown). Trip counts are ranges over the launch; the
 * estimates use their middle. Bytes loops of copies are not counted in
 * loops_known. */
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

/* A trace is streamed once into a model: every OpenCL object with its
 * lifetime, and every command (enqueue) and host synchronization point with
 * its queue, events, memory, and recorded host and device times. The model
 * holds no data contents (only program sources are read from the blob
 * store); its memory is proportional to the objects and commands. On it:
 * the kernel analysis of each program (once per program), the dependency
 * graph, statistics, the Chrome/Perfetto timeline. analyzer/README.md
 * states the edge rules and the JSON schemas.
 *
 * Everything a model or graph returns points into it and lives until it
 * is freed. Building is not thread-safe; a built model may be read from
 * several threads (ana_model_analyze() writes to it). */
#include <stdio.h>

typedef struct tf_reader tf_reader;   /* trace-format/tf.h */

/* ---------------------------------------------------------------- objects */

typedef enum ana_obj_kind {
    ANA_OBJ_UNKNOWN = 0,  /* an id used but never created in the trace */
    ANA_OBJ_PLATFORM, ANA_OBJ_DEVICE, ANA_OBJ_CONTEXT, ANA_OBJ_QUEUE,
    ANA_OBJ_PROGRAM, ANA_OBJ_KERNEL,
    ANA_OBJ_BUFFER, ANA_OBJ_SUBBUFFER, ANA_OBJ_IMAGE, ANA_OBJ_PIPE,
    ANA_OBJ_SVM,          /* an SVM allocation; its id is its address */
    ANA_OBJ_SAMPLER, ANA_OBJ_EVENT, ANA_OBJ_USER_EVENT,
    ANA_OBJ_KIND_COUNT
} ana_obj_kind;

/*! ana_obj_kind_name() : "buffer", "queue", ... (static). */
const char *ana_obj_kind_name(ana_obj_kind k);

/* A kernel argument as set by clSetKernelArg / clSetKernelArgSVMPointer. */
typedef enum ana_karg_kind {
    ANA_KARG_UNSET = 0,   /* never set */
    ANA_KARG_MEM,         /* a memory object, sampler or queue: value = its id */
    ANA_KARG_BYTES,       /* by-value bytes: value = the first 8 bytes, little-endian
                             (a NULL memory object is 8 zero bytes) */
    ANA_KARG_LOCAL,       /* __local memory of size bytes (value NULL) */
    ANA_KARG_SVM          /* an SVM pointer: value = the address */
} ana_karg_kind;

typedef struct ana_karg {
    uint8_t kind;         /* ana_karg_kind */
    uint32_t size;        /* arg_size (SVM: 8) */
    uint64_t value;
} ana_karg;

/* One object. Fields that do not apply to a kind are 0 / NULL. Sequence
 * numbers are those of trace calls; 0 = never. */
typedef struct ana_object {
    uint64_t id;          /* trace id (SVM: the allocation's address) */
    uint8_t kind;         /* ana_obj_kind */
    uint64_t create_seq;  /* the call that created it */
    uint64_t last_use_seq;/* the last call that named it, queries, retains and releases
                             excluded; a launch names its arguments' objects */
    uint64_t release_seq; /* the release that dropped the application's last reference
                             (SVM: clSVMFree / clEnqueueSVMFree) */
    uint64_t uses;        /* commands that used it (memory, kernels, queues, events) */
    uint64_t context;     /* the owning context (queues, programs, memory, events) */
    uint64_t parent;      /* sub-buffer: its buffer; kernel: its program; queue: its
                             device; image: the buffer it is made from */
    uint64_t size;        /* memory: bytes (images: of their host layout) */
    uint64_t origin;      /* sub-buffer: byte offset in its parent */
    uint64_t flags;       /* memory: CL_MEM_* (SVM: CL_MEM_SVM_*) */
    uint64_t props;       /* queue: CL_QUEUE_PROPERTIES as the application asked */
    const char *name;     /* kernel: its function ("" when unknown); buffers, images,
                             SVM: the first kernel argument name they were bound to
                             (after ana_model_analyze; "a#12" when taken), or NULL;
                             others NULL (ana_model_label() names everything) */
    const char *source;   /* program: its source (not NUL-terminated), or NULL */
    uint64_t source_len;
    const char *options;  /* program: build/compile options, or NULL */
    unsigned nargs;       /* kernel: its arguments at the end of the trace */
    const ana_karg *args;
    const char *text;     /* program: what its compiler saw, self-contained: the source
                             with the headers recorded with its last build inlined
                             (FORMAT.md 11.1), or the source itself when it includes
                             nothing; NULL without source. What a rewrite starts from:
                             its output then builds with no header of any machine */
    uint64_t text_len;
} ana_object;

/* ---------------------------------------------------------------- commands */

typedef enum ana_cmd_kind {
    ANA_CMD_KERNEL = 0,   /* clEnqueueNDRangeKernel, clEnqueueTask */
    ANA_CMD_NATIVE,       /* clEnqueueNativeKernel (effects unknown) */
    ANA_CMD_READ,         /* read buffer / rect / image */
    ANA_CMD_WRITE,        /* write buffer / rect / image */
    ANA_CMD_COPY,         /* copy buffer / rect / image / image<->buffer */
    ANA_CMD_FILL,         /* fill buffer / image */
    ANA_CMD_MAP, ANA_CMD_UNMAP,
    ANA_CMD_MIGRATE,      /* clEnqueueMigrateMemObjects */
    ANA_CMD_SVM_MEMCPY, ANA_CMD_SVM_FILL, ANA_CMD_SVM_MAP, ANA_CMD_SVM_UNMAP,
    ANA_CMD_SVM_MIGRATE, ANA_CMD_SVM_FREE,
    ANA_CMD_MARKER,       /* clEnqueueMarker[WithWaitList] */
    ANA_CMD_BARRIER,      /* clEnqueueBarrier[WithWaitList], clEnqueueWaitForEvents */
    ANA_CMD_OTHER,        /* another enqueue (GL/EGL acquire/release, extensions) */
    /* host synchronization points (no device work) */
    ANA_CMD_FINISH,       /* clFinish */
    ANA_CMD_FLUSH,        /* clFlush (waits for nothing) */
    ANA_CMD_WAIT,         /* clWaitForEvents */
    ANA_CMD_SET_EVENT,    /* clSetUserEventStatus: the host completes a user event */
    ANA_CMD_KIND_COUNT
} ana_cmd_kind;

/*! ana_cmd_kind_name() : "kernel", "read", "finish", ... (static). */
const char *ana_cmd_kind_name(ana_cmd_kind k);
/*! ana_cmd_kind_is_host() : 1 for the host synchronization kinds (FINISH..SET_EVENT). */
int ana_cmd_kind_is_host(ana_cmd_kind k);

/* A byte range of memory that a command reads and/or writes. */
typedef struct ana_memref {
    uint64_t object;      /* as the command names it (a sub-buffer, an image, an SVM
                             allocation's address) */
    uint64_t root;        /* the object that holds the bytes: a sub-buffer's buffer,
                             else the object itself */
    uint64_t lo, hi;      /* [lo, hi) in root's bytes */
    uint8_t access;       /* ana_access: READ, WRITE or RW */
    uint8_t whole;        /* 1: the whole object stands for an unknown range */
    int16_t arg;          /* kernel argument index; -1 for other commands */
    const char *why;      /* when whole: why (static or owned by the model), else NULL */
} ana_memref;

typedef struct ana_cmd {
    uint64_t seq, tid;    /* the call */
    const char *fn;       /* function name (the reader's string, copied) */
    uint8_t kind;         /* ana_cmd_kind */
    uint8_t blocking;     /* the call returned only when the command had completed
                             (blocking read/write/map/SVM copy; FINISH and WAIT) */
    uint8_t has_devtime;  /* a DEVTIME record gave dev_start/dev_end */
    uint8_t in_order;     /* its queue executes in order */
    uint8_t timed;        /* the application asked its event's profiling times
                             (clGetEventProfilingInfo): it measures this command */
    uint64_t queue;       /* its queue (FINISH/FLUSH: the queue; WAIT, SET_EVENT: 0) */
    uint64_t device;      /* the queue's device, 0 when unknown */
    uint64_t kernel;      /* KERNEL: the kernel object */
    uint64_t event;       /* the event it produced (SET_EVENT: the user event), 0 none */
    unsigned nwait;       /* events waited for: the wait list (WAIT: its list) */
    const uint64_t *wait;
    uint64_t map_seq;     /* UNMAP, SVM_UNMAP: the map call it ends, 0 when unknown */
    uint64_t bytes;       /* bytes moved (transfers), filled or mapped; 0 for kernels */
    unsigned nmem;        /* memory it touches (launches: whole buffers, access from the
                             memory flags, until ana_model_analyze() refines them) */
    const ana_memref *mem;
    int64_t t_begin, t_end;        /* host CLOCK_MONOTONIC ns of the call */
    uint64_t dev_queued, dev_submit, dev_start, dev_end;   /* device ns; 0 unknown */
    /* KERNEL: the NDRange and the arguments at launch */
    unsigned work_dim;
    uint64_t goff[3], global[3], local[3];   /* local 0: chosen by the driver */
    unsigned nargs;
    const ana_karg *args;
} ana_cmd;

/* ---------------------------------------------------------------- model */

typedef struct ana_model ana_model;

/* Per API function: host time of its calls. */
typedef struct ana_fn_time {
    const char *fn;
    uint64_t calls;
    uint64_t total_ns, min_ns, max_ns;   /* t_end - t_begin of complete calls */
} ana_fn_time;

/* Whole-trace facts. */
typedef struct ana_model_info {
    uint64_t calls, incomplete, failed;  /* calls; never returned; returned an error */
    uint64_t threads;                    /* distinct recording threads */
    int64_t t_first, t_last;             /* earliest begin, latest end (host ns) */
    uint64_t devtimes, devtimes_unmatched;
    int truncated;                       /* the file ends in an incomplete chunk */
    uint64_t launches;                   /* KERNEL commands */
    unsigned nfns;                       /* ana_model_fn_time(): most total time first */
} ana_model_info;

/*! ana_model_build() : streams the trace of @p r from its first item and
 *  builds the model (the reader is rewound first and left at its end; the
 *  caller still owns it and may close it once this returns: program sources
 *  are copied). Calls that failed create nothing and are not commands.
 *  @return ANA_OK with *out owning the model; ANA_ERR_TRACE with a one-line
 *  reason in @p err (the reader's error, or the first inconsistency:
 *  "call #12 clEnqueueNDRangeKernel: work_dim 7"); ANA_ERR_NOMEM. */
ana_status ana_model_build(tf_reader *r, ana_model **out, char *err, size_t err_cap);

/*! ana_model_free() : frees @p m and everything it returned. Accepts NULL. */
void ana_model_free(ana_model *m);

/*! ana_model_analyze() : runs the kernel analysis once per program that has
 *  a source (ana_program_analyze with the recorded build options), then
 *  fills each launch's memory ranges (ana_cmd.mem) from the analysis (the
 *  whole buffer where it is unavailable or an access is unknown, with the
 *  reason in ana_memref.why) and labels memory objects with argument names.
 *  Idempotent. @return ANA_OK even when the analysis is unavailable or a
 *  program does not compile (ana_model_program() says why); ANA_ERR_NOMEM. */
ana_status ana_model_analyze(ana_model *m);

/*! ana_model_get_info() : the whole-trace facts. */
const ana_model_info *ana_model_get_info(const ana_model *m);

/*! ana_model_object_count() / ana_model_object() : objects in creation
 *  order (ids first seen without a creation come where first seen). */
size_t ana_model_object_count(const ana_model *m);
const ana_object *ana_model_object(const ana_model *m, size_t i);
/*! ana_model_find() : the object with trace id @p id (an SVM allocation by
 *  its address), or NULL. */
const ana_object *ana_model_find(const ana_model *m, uint64_t id);
/*! ana_model_label() : a short readable name for object @p id: the
 *  memory label or kernel name when there is one, else "buf#9", "queue#4"
 *  ... Written into @p dst; @return dst. */
const char *ana_model_label(const ana_model *m, uint64_t id, char *dst, size_t dst_cap);

/*! ana_model_command_count() / ana_model_command() : commands and host
 *  synchronization points in call order (seq). */
size_t ana_model_command_count(const ana_model *m);
const ana_cmd *ana_model_command(const ana_model *m, size_t i);

/*! ana_model_fn_time() : host time of function @p i (< info.nfns), most
 *  total time first. */
const ana_fn_time *ana_model_fn_time(const ana_model *m, unsigned i);

/*! ana_model_program() : the analysis of program @p program_id after
 *  ana_model_analyze(): NULL with *why set (static or owned by the model)
 *  when there is none ("not analyzed", "created from a binary", the
 *  compiler's first error, "kernel analysis unavailable: ..."). */
const ana_program *ana_model_program(const ana_model *m, uint64_t program_id, const char **why);
/*! ana_model_kernel() : the analysis of kernel object @p kernel_id (its
 *  program's kernel of that name), or NULL with *why set. */
const ana_kernel *ana_model_kernel(const ana_model *m, uint64_t kernel_id, const char **why);

/*! ana_model_launch() : fills @p l for launch @p c (a KERNEL command) of
 *  analyzed kernel @p k: the NDRange, scalar values (extended as k's
 *  argument types say), buffer and __local sizes. @p vals (capacity
 *  @p vals_cap) holds the argument values l->args points to.
 *  @return ANA_OK, or ANA_ERR_ARG when c is not a launch or vals is short. */
ana_status ana_model_launch(const ana_model *m, const ana_cmd *c, const ana_kernel *k,
                            ana_launch *l, ana_argval *vals, unsigned vals_cap);

/* ---------------------------------------------------------------- graph */

typedef enum ana_edge_kind {
    ANA_EDGE_RAW = 0,     /* read after write of overlapping bytes */
    ANA_EDGE_WAR,         /* write after read */
    ANA_EDGE_WAW,         /* write after write */
    ANA_EDGE_EVENT,       /* an explicit event wait (wait list, clWaitForEvents) */
    ANA_EDGE_ORDER,       /* queue order where no data says it: markers, barriers,
                             commands whose effects are unknown, map -> unmap */
    ANA_EDGE_SYNC,        /* a command the host waited for at clFinish */
    ANA_EDGE_HOST,        /* a host sync point -> the next command its thread issued */
    ANA_EDGE_KIND_COUNT
} ana_edge_kind;

/*! ana_edge_kind_name() : "RAW", "WAR", "WAW", "event", "order", "sync", "host". */
const char *ana_edge_kind_name(ana_edge_kind k);

typedef struct ana_edge {
    uint32_t from, to;    /* command indices (ana_model_command) */
    uint8_t kind;         /* ana_edge_kind */
    uint8_t whole;        /* data edges: a side's range is a whole-object stand-in */
    uint8_t implied;      /* another path of two edges orders the same pair */
    uint64_t object;      /* data edges: the root memory object; EVENT: the event */
    uint64_t lo, hi;      /* data edges: the overlapping bytes [lo, hi) of object */
    const char *why;      /* whole: why (see ana_memref.why), else NULL */
} ana_edge;

typedef struct ana_graph ana_graph;

/*! ana_graph_build() : the dependency graph of @p m's commands (the rules
 *  are in analyzer/README.md). Call ana_model_analyze() first for kernel
 *  regions; without it launches touch their whole buffers. @p m must
 *  outlive the graph. @return ANA_OK with *out owning the graph; ANA_ERR_NOMEM. */
ana_status ana_graph_build(const ana_model *m, ana_graph **out);
/*! ana_graph_free() : accepts NULL. */
void ana_graph_free(ana_graph *g);
/*! ana_graph_edge_count() / ana_graph_edge() : edges ordered by (to, from, kind). */
size_t ana_graph_edge_count(const ana_graph *g);
const ana_edge *ana_graph_edge(const ana_graph *g, size_t i);

/* What part of the graph an export shows. */
typedef struct ana_graph_view {
    uint64_t seq_lo, seq_hi;   /* only commands with seq_lo <= seq <= seq_hi */
    int collapse;              /* fold repeated iterations into one, with a count */
} ana_graph_view;

/*! ana_graph_write_dot() / ana_graph_write_json() : write the view @p v
 *  (NULL: everything, uncollapsed) of @p g to @p f. DOT: one node per
 *  command (host sync points as octagons), edges coloured by kind and
 *  labelled with the memory they are about; implied edges other than RAW
 *  are left out. JSON: nodes, every edge with its reason, and the objects
 *  with their lifetimes (schema in analyzer/README.md).
 *  @return ANA_OK, ANA_ERR_NOMEM, or ANA_ERR_IO when writing failed. */
ana_status ana_graph_write_dot(const ana_model *m, const ana_graph *g, const ana_graph_view *v,
                               FILE *f);
ana_status ana_graph_write_json(const ana_model *m, const ana_graph *g, const ana_graph_view *v,
                                FILE *f);

/* ---------------------------------------------------------------- statistics */

typedef struct ana_kernel_stats {
    const char *name;             /* kernel function name */
    uint64_t launches, timed;     /* launches; of which with device time */
    uint64_t dev_total_ns, dev_min_ns, dev_max_ns;
    uint64_t work_items;          /* summed global sizes */
    uint64_t bytes_read, bytes_written;   /* summed ranges of ana_cmd.mem */
    uint64_t whole_ranges;        /* ranges that were whole-buffer stand-ins */
} ana_kernel_stats;

typedef struct ana_xfer_stats {
    const char *kind;             /* ana_cmd_kind_name() */
    uint64_t count, timed, bytes, timed_bytes, dev_total_ns;
} ana_xfer_stats;

typedef struct ana_gap {
    uint64_t queue;
    uint64_t after_seq, before_seq;   /* the commands around the gap */
    uint64_t ns;
} ana_gap;

typedef struct ana_queue_stats {
    uint64_t queue, device;
    uint64_t commands, timed;
    uint64_t busy_ns;             /* union of the timed commands' device intervals */
    uint64_t span_ns;             /* first start to last end */
    uint64_t idle_ns, gaps;       /* gaps between timed commands with no untimed one
                                   * between them (span - busy when all are timed) */
    uint64_t max_gap_ns;
} ana_queue_stats;

typedef struct ana_stats {
    size_t nkernels;  const ana_kernel_stats *kernels;   /* most device time first */
    size_t nxfers;    const ana_xfer_stats *xfers;       /* most bytes first */
    size_t nqueues;   const ana_queue_stats *queues;     /* by queue id */
    size_t ngaps;     const ana_gap *gaps;               /* every gap, largest first */
    uint64_t launches, commands, timed;
    uint64_t kernel_ns, xfer_ns;  /* summed device time */
} ana_stats;

/*! ana_stats_compute() : statistics of @p m (call ana_model_analyze()
 *  first for bytes by analysis). @return ANA_OK with *out owned by the
 *  caller (ana_stats_free); ANA_ERR_NOMEM. Host time per function is
 *  ana_model_fn_time(). */
ana_status ana_stats_compute(const ana_model *m, ana_stats **out);
/*! ana_stats_free() : accepts NULL. */
void ana_stats_free(ana_stats *s);

/* ---------------------------------------------------------------- timeline */

/*! ana_timeline_write() : writes the Chrome/Perfetto trace-event JSON of
 *  the trace: every host call as an X event on its thread (pid 1), every
 *  command on its queue (one pid per device) from its device times mapped
 *  to the host clock (commands without device time at their call's host
 *  time, with args.device_time false; launches with their NDRange and
 *  arguments, host calls with theirs: schema in analyzer/README.md), and each edge of @p g (may be NULL)
 *  as a flow (ph "s"/"f"). Streams the trace of @p r a second time (it is
 *  rewound), so memory stays proportional to the model.
 *  @return ANA_OK; ANA_ERR_TRACE (reason in err); ANA_ERR_IO. */
ana_status ana_timeline_write(tf_reader *r, const ana_model *m, const ana_graph *g, FILE *f,
                              char *err, size_t err_cap);

#ifdef __cplusplus
}
#endif

#endif /* CLRR_ANA_H */
