/* rw.h — OpenCL C source rewriting with Clang (the libclang C API).
 *
 * Three rewrites. Vertical fusion of a producer kernel P and a consumer
 * kernel C that run back to back with the same launch shape, where each C
 * work-item reads from an intermediate buffer B only the element that the
 * same P work-item writes, when it writes it (the caller proves that; see
 * rewriter/README.md). The fused kernel computes P's value into a private
 * variable and hands it to C's body, so B is not loaded, and not stored at
 * all unless the caller says B is read later:
 *
 *   __kernel <C's attributes> void NAME(<P's parameters>, <C's parameters>)
 *   {
 *       T __clrr_v;                     T: B's element type as spelled
 *   {   P's body: its store `B[i] = e;` becomes `__clrr_v = e;`
 *       (`B[i] = __clrr_v = e;` with keep_store), every `return` becomes
 *       `goto __clrr_p_done;`   }
 *   __clrr_p_done: ;
 *   {   C's body: every read `B[j]` becomes `__clrr_v`   }
 *   }
 *
 * B is a parameter only when the store stays (P's). When P's store may not
 * run (it is under a condition, or a return comes before it), the store
 * also sets `int __clrr_stored` and C's reads become
 * `(__clrr_stored ? __clrr_v : B[j])`: a work-item whose P did not store
 * reads B as C would have, so P's and C's guards need not match; B is then
 * also C's parameter when the store does not stay. rw_fuse_out.params
 * says, either way, where each parameter comes from.
 *
 * Parameters are renamed with a prefix per kernel (p_, c_; another when
 * those collide) so the two never clash. The program is parsed with libclang
 * and every change is an edit of a source range that a cursor gives (never
 * a text search); the result is parsed again and checked before it is
 * returned. Linking this module links libclang (-lclang): a process that
 * also runs an OpenCL driver built on another LLVM (PoCL) must not link it
 * (load it with dlopen in a process of its own, or keep it out).
 *
 * And a partition-ready copy of a kernel K (rw_partition), for a launch
 * split by work-groups along one dimension into several launches, each
 * with its own global offset and size (possibly on different devices):
 * the copy takes the full launch's sizes and offset as nine more
 * parameters, and its get_global_size, get_global_offset, get_num_groups,
 * get_group_id and get_global_linear_id return what the full launch would
 * have returned. K's body is copied as written; macros defined just
 * before the copy send those calls to helper functions.
 *
 * And a coarsened copy of a kernel K (rw_coarsen): each work-item does
 * the work of 2, 4 or 8 work-items along one dimension.
 *
 * And a specialized copy of a kernel K (rw_specialize): the same
 * parameters, some scalar ones turned into compile-time constants
 * declared at the top of the body, for launches that always pass those
 * values.
 *
 * Error convention: functions returning rw_status return RW_OK (0) or a
 * negative RW_ERR_*; with (err, err_cap) they write a one-line reason.
 * Thread-safety: every call owns its own CXIndex and shares no state of
 * ours, so calls on different threads are as safe as libclang makes them.
 */
#ifndef CLRR_RW_H
#define CLRR_RW_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rw_status {
    RW_OK = 0,
    RW_ERR_NOMEM = -1,
    RW_ERR_ARG = -2,       /* bad request: NULL or empty field, too long source */
    RW_ERR_PARSE = -3,     /* the program does not parse (err: its first error) */
    RW_ERR_REFUSED = -4,   /* the kernels cannot be rewritten this way (err: why) */
    RW_ERR_INTERNAL = -5   /* libclang failed, or the generated kernel failed its check */
} rw_status;

/*! rw_strerror() : @return a static string naming @p s. Thread-safe. */
const char *rw_strerror(rw_status s);

/* The most parameters a fused kernel may have. */
#define RW_MAX_PARAMS 128

/* p_buf and c_buf of a horizontal fusion: P and C share no buffer (the
 * caller proves them independent); the fused kernel does P's body (its
 * returns go to the label) then C's, each as written, every store kept. */
#define RW_NO_BUF (~0u)

/* A fusion request. Every pointer is borrowed for the duration of the call. */
typedef struct rw_fuse_req {
    const char *source;    /* the whole program source as the application passed it */
    size_t len;            /* its length in bytes (no terminating NUL needed) */
    const char *options;   /* the program's build options, or NULL: -D/-U/-I, -cl-std=
                            * and the -cl-* flags that define macros reach the parse,
                            * the rest is ignored */
    const char *producer;  /* P's kernel name */
    const char *consumer;  /* C's kernel name (may equal P's) */
    unsigned p_buf;        /* index of B among P's parameters; RW_NO_BUF (both): horizontal */
    unsigned c_buf;        /* index of B among C's parameters */
    int keep_store;        /* 1: B is read later, P's store to B stays */
    const char *name;      /* the fused kernel's name: an identifier not used in the program */
} rw_fuse_req;

/* Where a parameter of the fused kernel comes from. */
#define RW_FROM_PRODUCER 0
#define RW_FROM_CONSUMER 1
typedef struct rw_param_src {
    unsigned char from;    /* RW_FROM_PRODUCER or RW_FROM_CONSUMER */
    unsigned char index;   /* the parameter's index in that kernel */
} rw_param_src;

/* A fused program. */
typedef struct rw_fuse_out {
    char *source;          /* malloc'd: the original source, then the fused kernel */
    size_t len;            /* its length (a NUL follows it) */
    unsigned nparams;      /* parameters of the fused kernel */
    rw_param_src params[RW_MAX_PARAMS];   /* params[i]: where parameter i comes from */
} rw_fuse_out;

/*! rw_fuse() : builds the kernel req->name that does P then C through a
 *  private variable (see the top of this file), appended to a copy of
 *  req->source; build the result with the program's own options. On
 *  success *out owns a malloc'd source (release it with rw_fuse_free());
 *  its parameter i takes the argument that params[i] names, as P's or C's
 *  launch set it. Takes about 40 ms (two parses). On failure *out is empty and
 *  err (capacity cap, may be NULL when cap is 0) holds one line: the first
 *  parse error, or why the pair cannot be fused ("sobel_gx stores gx twice
 *  (lines 9 and 11)", "sobel_magnitude writes gx (line 14)", ...);
 *  rewriter/README.md lists every refusal.
 *  @return RW_OK, RW_ERR_PARSE, RW_ERR_REFUSED, RW_ERR_ARG, RW_ERR_NOMEM
 *  or RW_ERR_INTERNAL. */
rw_status rw_fuse(const rw_fuse_req *req, rw_fuse_out *out, char *err, size_t cap);

/*! rw_fuse_free() : releases what rw_fuse() put in *out and empties it;
 *  accepts NULL and an empty *out. */
void rw_fuse_free(rw_fuse_out *out);

/* ------------------------------------------------- partition-ready kernels */

/* Trailing parameters of a partition-ready kernel, all ulong, in this
 * order: the full launch's global size of dimensions 0, 1, 2; its global
 * offset of dimensions 0, 1, 2; its enqueued local size of dimensions 0,
 * 1, 2 (0: the driver chose it, get_local_size(d) stands in). Dimensions
 * beyond the launch's work_dim get global 1, offset 0, local 1. */
#define RW_PART_EXTRA 9

/* A partition request. Every pointer is borrowed for the duration of the call. */
typedef struct rw_part_req {
    const char *source;    /* the whole program source, as rw_fuse_req's */
    size_t len;            /* its length in bytes (no terminating NUL needed) */
    const char *options;   /* the program's build options, or NULL (as rw_fuse_req's) */
    const char *kernel;    /* K: the kernel to make partition-ready */
    const char *name;      /* the new kernel's name: an identifier not used in the program */
} rw_part_req;

/* A program with a partition-ready kernel. */
typedef struct rw_part_out {
    char *source;          /* malloc'd: the original source, then the new kernel */
    size_t len;            /* its length (a NUL follows it) */
    unsigned nparams;      /* K's parameter count; the new kernel has nparams + RW_PART_EXTRA */
} rw_part_out;

/*! rw_partition() : appends to a copy of req->source the kernel req->name:
 *  K's attributes, K's parameters (same order, names and types), then the
 *  RW_PART_EXTRA ulong parameters above, and K's body as written, where
 *  get_global_size(d), get_global_offset(d), get_num_groups(d),
 *  get_group_id(d) (d evaluated once) and get_global_linear_id() mean the
 *  full launch: d >= 3 gives 1, 0, 1, 0; a group id is
 *  (get_global_id(d) - get_local_id(d) - offset) / local. Launch a part
 *  covering groups [f, e) of dimension d with global_work_offset[d] =
 *  offset[d] + f * local[d] and global[d] = min(e * local[d], global[d])
 *  - f * local[d], the other dimensions and the local size as in the full
 *  launch, and K's arguments followed by the nine values; get_global_id,
 *  get_local_id, get_local_size and get_work_dim are then right as they
 *  are. Build the result with the program's own options. On success *out
 *  owns a malloc'd source (release it with rw_partition_free()). Takes
 *  about 40 ms (two parses). On failure *out is empty and err (capacity
 *  cap, may be NULL when cap is 0) holds one line: the first parse error,
 *  or why K cannot be made partition-ready ("helper f calls
 *  get_global_size (line 12): only calls in the kernel's own body are
 *  redirected", "the program defines get_group_id as a macro (line 3)",
 *  ...); rewriter/README.md lists every refusal. Thread-safety: as
 *  rw_fuse().
 *  @return RW_OK, RW_ERR_PARSE, RW_ERR_REFUSED, RW_ERR_ARG (NULL or
 *  incomplete request, name not an identifier), RW_ERR_NOMEM or
 *  RW_ERR_INTERNAL. */
rw_status rw_partition(const rw_part_req *req, rw_part_out *out, char *err, size_t cap);

/*! rw_partition_free() : releases what rw_partition() put in *out and
 *  empties it; accepts NULL and an empty *out. */
void rw_partition_free(rw_part_out *out);

/* ------------------------------------------------- specialized kernels */

/* The most parameters one specialization turns into constants. */
#define RW_MAX_CONSTS 16

/* A scalar parameter's value, as the launches set it. */
typedef struct rw_const {
    unsigned index;           /* the parameter: a scalar of an integer type, float or double */
    unsigned size;            /* bytes in value: the parameter type's size (1, 2, 4 or 8) */
    unsigned char value[8];   /* the argument's bytes, as clSetKernelArg passed them (little-endian) */
} rw_const;

/* A specialization request. Every pointer is borrowed for the duration of the call. */
typedef struct rw_spec_req {
    const char *source;       /* the whole program source, as rw_fuse_req's */
    size_t len;               /* its length in bytes (no terminating NUL needed) */
    const char *options;      /* the program's build options, or NULL (as rw_fuse_req's) */
    const char *kernel;       /* K: the kernel to specialize */
    const char *name;         /* the new kernel's name: an identifier not used in the program */
    unsigned nconsts;         /* 1..RW_MAX_CONSTS, distinct indices */
    const rw_const *consts;
} rw_spec_req;

/* A program with a specialized kernel. */
typedef struct rw_spec_out {
    char *source;             /* malloc'd: the original source, then the new kernel */
    size_t len;               /* its length (a NUL follows it) */
    unsigned nparams;         /* K's parameter count, which the new kernel keeps */
} rw_spec_out;

/*! rw_specialize() : appends to a copy of req->source the kernel req->name:
 *  K's attributes, K's parameters (same order and types, so a launch's
 *  arguments apply as they are; each specialized one renamed so that
 *  nothing uses it), and a body that first declares each specialized
 *  parameter's name as a local of its type initialized with the exact
 *  value (integers as literals of the type, float and double through
 *  as_float/as_double of their bits), then the rest of K's body as
 *  written (the locals open K's own block, where __local variables may
 *  stay): the
 *  compiler sees compile-time constants where K saw arguments (loop trip
 *  counts, branch conditions). Build the result with the program's own
 *  options. On success *out owns a malloc'd source (release it with
 *  rw_specialize_free()). On failure *out is empty and err (capacity cap,
 *  may be NULL when cap is 0) holds one line: the first parse error, or
 *  why K cannot be specialized this way ("parameter 2 (n) of nbody is a
 *  pointer", "parameter 3 is 4 bytes, the value 8", ...). Thread-safety:
 *  as rw_fuse().
 *  @return RW_OK, RW_ERR_PARSE, RW_ERR_REFUSED, RW_ERR_ARG (NULL or
 *  incomplete request, name not an identifier, no or too many constants,
 *  an index twice), RW_ERR_NOMEM or RW_ERR_INTERNAL. */
rw_status rw_specialize(const rw_spec_req *req, rw_spec_out *out, char *err, size_t cap);

/*! rw_specialize_free() : releases what rw_specialize() put in *out and
 *  empties it; accepts NULL and an empty *out. */
void rw_specialize_free(rw_spec_out *out);

/* ------------------------------------------------- coarsened kernels */

/* How the F work-items one coarsened work-item does are chosen along
 * dimension D (i: the original work-item's index from the global offset,
 * i' the coarsened one's, G the original global size, j = 0 .. F-1):
 * blocked i = i' * F + j (consecutive work-items), strided
 * i = i' + j * (G / F) (work-items G/F apart). */
#define RW_COARSEN_BLOCKED 0u
#define RW_COARSEN_STRIDED 1u
/* vector: blocked along dimension 0, the F work-items' global accesses
 * p[gid] as one vloadF/vstoreF and their arithmetic on vector types (see
 * rw_coarsen below and rewriter/README.md). */
#define RW_COARSEN_VECTOR 2u
/* group-blocked, group-strided: the same inside each work-group (l the
 * original work-item's local index along D, l' the coarsened one's, L the
 * original local size): blocked l = l' * F + j, strided l = l' + j * (L / F);
 * the local size is divided by F as the global size is, so the work-groups,
 * their ids and their count stay the launch's. */
#define RW_COARSEN_GROUP_BLOCKED 3u
#define RW_COARSEN_GROUP_STRIDED 4u

/*! rw_coarsen_form_name() : "blocked", "strided", "vector", "group-blocked",
 *  "group-strided", or NULL for another value (static). Thread-safe. */
const char *rw_coarsen_form_name(unsigned form);

/* A coarsening request. Every pointer is borrowed for the duration of the call. */
typedef struct rw_coarsen_req {
    const char *source;       /* the whole program source, as rw_fuse_req's */
    size_t len;               /* its length in bytes (no terminating NUL needed) */
    const char *options;      /* the program's build options, or NULL (as rw_fuse_req's) */
    const char *kernel;       /* K: the kernel to coarsen */
    const char *name;         /* the new kernel's name: an identifier not used in the program */
    unsigned dim;             /* D: 0, 1 or 2 */
    unsigned factor;          /* F: 2, 4 or 8 (also 16 for RW_COARSEN_VECTOR) */
    unsigned form;            /* RW_COARSEN_BLOCKED, _STRIDED, _VECTOR, _GROUP_BLOCKED or _GROUP_STRIDED */
} rw_coarsen_req;

/* A program with a coarsened kernel. */
typedef struct rw_coarsen_out {
    char *source;             /* malloc'd: the original source, then the new kernel */
    size_t len;               /* its length (a NUL follows it) */
    unsigned nparams;         /* K's parameter count, which the new kernel keeps */
} rw_coarsen_out;

/*! rw_coarsen() : appends to a copy of req->source the kernel req->name:
 *  K's attributes and parameters (same order, names and types, so a
 *  launch's arguments apply as they are), and a body that runs K's body
 *  as written F times, `for (uint j = 0; j < F; j++) { K's body }`, where
 *  get_global_id(D) is the original work-item j of the form above,
 *  get_global_size(D) is F times the launch's, get_global_linear_id()
 *  follows them, and each `return` of K's body goes to the next j
 *  (`goto NEXT`). Launch it over the same global offset and work_dim,
 *  global size G/F in dimension D (the caller makes sure F divides G: no
 *  bound check is generated) and a local size whose dimension D divides
 *  that, the other dimensions' as the launch had them (K may ask for
 *  them; it does not ask for dimension D's). Refused where the F
 *  work-items could tell they run as one: a barrier or another
 *  work-group or sub-group function (async copies, get_local_linear_id),
 *  __local memory (parameters or variables), get_local_id, get_group_id,
 *  get_local_size, get_num_groups or get_enqueued_local_size in
 *  dimension D or in a dimension not known at compile time,
 *  reqd_work_group_size, static variables, a function K calls that calls
 *  a redirected builtin or one of those (only K's own body is
 *  redirected), a program that defines get_global_id, get_global_size or
 *  get_global_linear_id itself. A parameter the body assigns, increments
 *  or takes the address of is renamed PREFIX co_pN in the new kernel's
 *  parameters, and each iteration of the loop first declares it again
 *  under its name from that (`uint n = __clrr_co_p2;`), so each of the F
 *  work-items starts from the launch's value (the vector form refuses
 *  such a parameter). Atomics are not refused: the order of
 *  their updates changes, and only a measurement of the outputs tells
 *  whether that shows (the optimizer keeps a coarsening only where the
 *  outputs are bit-identical). The vector form (dimension 0 only, F up
 *  to 16) launches the same way; its body is K's body once, for the F
 *  work-items together: each access p[gid] of a global buffer of int,
 *  uint, long, ulong, float or double indexed by get_global_id(0) (or a local
 *  holding it) is a vloadF/vstoreF of the F elements, locals holding
 *  loaded values are TF, scalars broadcast; a bounds guard
 *  `if (gid < n) ...` / `if (gid >= n) return;` first tests the last
 *  lane and, when it is out of bounds, runs the blocked loop instead.
 *  Anything else that vectors could change is refused with one line
 *  ("vecadd compares loaded values (line 5): ...", "blackscholes passes
 *  a loaded value to its function cnd (line 22)"; the list is in
 *  rewriter/README.md). The group forms (F 2, 4 or 8, any dimension)
 *  coarsen inside each work-group: launch them over G/F and a local size
 *  of L/F in dimension D (L the launch's own local size, which must be
 *  given and divide G; the others as the launch had them); besides the
 *  global builtins, get_local_id(D), get_local_size(D),
 *  get_enqueued_local_size(D) and get_local_linear_id() are the original
 *  work-item's, and get_group_id and get_num_groups are untouched, so they
 *  take kernels that index by work-group and local id, in any dimension
 *  (one not known at compile time included), and __local parameters;
 *  barriers, work-group and sub-group functions, async copies and
 *  __local variables stay refused, as does reqd_work_group_size. Build the result with the program's own
 *  options. On success *out owns a malloc'd source (release it with
 *  rw_coarsen_free()). On failure *out is empty and err (capacity cap,
 *  may be NULL when cap is 0) holds one line: the first parse error, or
 *  why K cannot be coarsened ("stencil calls barrier (line 9): its
 *  work-items do not run on their own", "reduce calls get_local_id(0)
 *  (line 4): coarsening dimension 0 changes its work-groups", ...).
 *  Thread-safety: as rw_fuse().
 *  @return RW_OK, RW_ERR_PARSE, RW_ERR_REFUSED, RW_ERR_ARG (NULL or
 *  incomplete request, name not an identifier, dim, factor or form out
 *  of range, the vector form in a dimension other than 0), RW_ERR_NOMEM or RW_ERR_INTERNAL. */
rw_status rw_coarsen(const rw_coarsen_req *req, rw_coarsen_out *out, char *err, size_t cap);

/*! rw_coarsen_free() : releases what rw_coarsen() put in *out and empties
 *  it; accepts NULL and an empty *out. */
void rw_coarsen_free(rw_coarsen_out *out);

#ifdef __cplusplus
}
#endif

#endif
