/* opt_int.h — optimizer internals shared by optimizer/opt_*.c: the plan's
 * layout, an arena and an id map, trace-call helpers, and the call tracker
 * that both the passes (offline) and the plan matcher (while a run
 * executes) feed with the same calls, so that patterns, occurrences and
 * "this memory already holds these bytes" are computed by one piece of
 * code on both sides. Not a public header. */
#ifndef CLRR_OPT_INT_H
#define CLRR_OPT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "costs/cdb.h"
#include "optimizer/opt.h"
#include "rewriter/rw.h"
#include "trace-format/tf.h"

/* ------------------------------------------------------------ arena */

/* Bump allocator: everything freed at once (plans, tracker strings). */
typedef struct opt_arena_chunk opt_arena_chunk;
typedef struct opt_arena {
    opt_arena_chunk *head;
} opt_arena;

/*! opt_arena_alloc() : @p n zeroed bytes, aligned for any object, or NULL. */
void *opt_arena_alloc(opt_arena *a, size_t n);
/*! opt_arena_strdup() : NUL-terminated copy of @p n bytes at @p s, or NULL. */
char *opt_arena_strndup(opt_arena *a, const char *s, size_t n);
void opt_arena_free(opt_arena *a);

/* ------------------------------------------------------------ id map */

/* Open addressing u64 -> pointer (key 0 is never stored: ids are non-zero). */
typedef struct opt_map {
    uint64_t *keys;
    void **vals;
    size_t n, cap;
} opt_map;

int opt_map_put(opt_map *m, uint64_t key, void *val);   /* 0, or -1 out of memory */
void *opt_map_get(const opt_map *m, uint64_t key);
void opt_map_free(opt_map *m);

/* ------------------------------------------------------------ helpers */

/*! opt_hex() : @p n bytes as lower-case hex into @p dst (2n+1 bytes). */
void opt_hex(const uint8_t *src, size_t n, char *dst);
/*! opt_unhex() : exactly 2n hex digits at @p s into @p dst. @return 0 or -1. */
int opt_unhex(const char *s, uint8_t *dst, size_t n);
/*! opt_grow() : room for @p need elements in *arr (capacity *cap). 0 or -1. */
int opt_grow(void **arr, size_t *cap, size_t need, size_t elem);
/*! opt_seterr() : formats a one-line message into (err, cap). @return st. */
opt_status opt_seterr(char *err, size_t cap, opt_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*! opt_open_trace() : opens trace @p path for reading (reader limit
 *  @p max_memory, 0 = default). @return OPT_OK, or OPT_ERR_TRACE with the
 *  reader's reason (without the path) in @p err. */
opt_status opt_open_trace(const char *path, size_t max_memory, tf_reader **r, char *err, size_t err_cap);

/* Trace calls. */
int opt_param(const tf_call *c, const char *name);              /* index or -1 */
const tf_value *opt_arg(const tf_call *c, const char *name);     /* input or NULL */
const tf_value *opt_out(const tf_call *c, const char *name);     /* output or NULL */
int opt_arg_u64(const tf_call *c, const char *name, uint64_t *v);   /* 1 when an integer */
/*! opt_call_ok() : 1 when @p c returned and succeeded (cl_int 0, errcode_ret
 *  0, or a non-NULL handle / pointer). */
int opt_call_ok(const tf_call *c);
/*! opt_value_hash() : the content hash of a data value (blob: its
 *  reference; bin/str: XXH3-128 of its bytes) into @p h. @return 1, or 0
 *  when @p v carries no data (nil: not captured). */
int opt_value_hash(const tf_value *v, uint8_t h[16]);

/* ------------------------------------------------------------ the plan */

struct opt_plan {
    opt_arena arena;
    opt_plan_info info;
    uint8_t (*programs)[16];
    size_t capprograms;
    opt_pass_result passes[OPT_PASS_COUNT];
    opt_xform *xf;
    size_t nxf, capxf;
    opt_kernel_facts *kf;
    size_t nkf, capkf;
    opt_fused *fz;
    size_t nfz, capfz;
    opt_split *sp;
    size_t nsp, capsp;
    opt_spec *sz;
    size_t nsz, capsz;
    opt_sched *sc;
    size_t nsc, capsc;
};

#define OPT_PLAN_MAX_FUSED 65536u
#define OPT_FUSED_MAX_PARAMS 128u
#define OPT_FUSED_MAX_SOURCE ((size_t)4 << 20)

/*! opt_plan_add_fused() : appends a copy of @p f; *id (may be NULL) gets its id. */
opt_status opt_plan_add_fused(opt_plan *p, const opt_fused *f, uint32_t *id);

#define OPT_PLAN_MAX_SPLITS 65536u
#define OPT_SPLIT_MAX_ARGS 128u
/*! opt_plan_add_split() : appends a copy of @p sp (its id assigned; *id may
 *  be NULL). @return OPT_OK, OPT_ERR_NOMEM or OPT_ERR_LIMIT. */
opt_status opt_plan_add_split(opt_plan *p, const opt_split *sp, uint32_t *id);
#define OPT_PLAN_MAX_SPECS 65536u
/*! opt_plan_add_spec() : appends a copy of @p z (its id and execution view
 *  `as` assigned; *id may be NULL). @return OPT_OK, OPT_ERR_NOMEM or
 *  OPT_ERR_LIMIT. */
opt_status opt_plan_add_spec(opt_plan *p, const opt_spec *z, uint32_t *id);
#define OPT_PLAN_MAX_SCHEDS 65536u
/*! opt_plan_add_sched() : appends a copy of @p s (its id assigned).
 *  @return OPT_OK, OPT_ERR_NOMEM or OPT_ERR_LIMIT. */
opt_status opt_plan_add_sched(opt_plan *p, const opt_sched *s);
/*! opt_split_same() : 1 when @p a and @p b do the same thing (ids aside). */
int opt_split_same(const opt_split *a, const opt_split *b);

/* ------------------------------------------------------------ fusion */

/* A producer -> consumer pair the fuse pass may merge (opt_fuse.c), or a
 * group of launches: every launch but the last writes one intermediate
 * that exactly one later launch of the group reads (a chain: the next
 * one; a gather: several producers, one consumer). */
typedef struct opt_fuse_pair {
    unsigned n;               /* launches: 2 (a pair) .. OPT_CHAIN_MAX (a group) */
    uint64_t seq[OPT_CHAIN_MAX];      /* the launches, in order */
    uint64_t kernel[OPT_CHAIN_MAX];   /* their kernel objects */
    unsigned out[OPT_CHAIN_MAX];      /* out[i] (i < n - 1): launch i's intermediate buffer argument */
    unsigned to[OPT_CHAIN_MAX];       /* to[i] (i < n - 1): the launch that reads it (i < to[i] < n) */
    unsigned in[OPT_CHAIN_MAX];       /* in[i] (i < n - 1): the argument launch to[i] reads it through */
    int keep_store;           /* a pair whose intermediate is read later: still written
                                 (a group's intermediates never are) */
    int horizontal;           /* independent launches that share inputs: no intermediate
                                 (out, to, in unused), every store kept (keep_store 1) */
} opt_fuse_pair;

typedef struct ana_model ana_model;
/*! opt_fuse_find() : every qualifying pair, chain or gather of the model,
 *  in trace order, then (@p horizontal) the horizontal groups among the
 *  launches left (*out malloc'ed). @return OPT_OK or OPT_ERR_NOMEM. */
opt_status opt_fuse_find(const ana_model *m, int horizontal, opt_fuse_pair **out, size_t *nout);

/* The specialize pass's search (opt_spec.c): a kernel object whose
 * launches (those no other pass took) all set the same bytes for scalar
 * arguments that bound its loops. */
typedef struct opt_spec_cand {
    uint64_t kernel;          /* the kernel object */
    unsigned nconsts;
    opt_const consts[OPT_SPEC_MAX_CONSTS];
    char why[320];            /* "n (argument 4) = 0x400 bounds the loop over j" */
} opt_spec_cand;
/*! opt_spec_find() : the candidates of @p m, launches that @p taken claims
 *  left out (*out malloc'ed). @return OPT_OK or OPT_ERR_NOMEM. */
opt_status opt_spec_find(const ana_model *m, int (*taken)(void *user, uint64_t seq), void *user,
                         opt_spec_cand **out, size_t *nout);

/*! opt_sched_plan() : the schedule pass (opt_sched.c): each in-order queue
 *  of @p m whose transfers, on lanes of their own, are predicted from the
 *  recorded device times to take at least 5% less, as an entry of @p p's
 *  schedule. @return OPT_OK or OPT_ERR_NOMEM. */
opt_status opt_sched_plan(const ana_model *m, opt_plan *p);

/* The split pass (opt_split.c): a launch it splits, and the split. */
typedef struct opt_split_role {
    uint64_t seq;
    uint32_t split;
} opt_split_role;
/*! opt_split_plan() : splits every launch of @p m (commands in seq order, so
 *  *roles comes sorted) that @p taken does not claim, over the devices of
 *  o->split; adds the splits to @p p. The first launch left alone and why
 *  go to @p note. @return OPT_OK, OPT_ERR_ARG (a bad device list, message
 *  in @p err) or OPT_ERR_NOMEM. */
opt_status opt_split_plan(const ana_model *m, opt_plan *p, const opt_options *o,
                          int (*taken)(void *user, uint64_t seq), void *user, opt_split_role **roles,
                          size_t *nroles, char *note, size_t note_cap, char *err, size_t err_cap);

/* The partitioner (opt_part.c). A device's predicted time for n slices
 * (work-groups along the split dimension): 0 for none, else
 * fixed_ns + curve(n * per_slice) + slice_ns * n. */
typedef struct opt_part_dev {
    const cdb_curve *curve;   /* kernel time against work-groups in all (NULL: 0) */
    double per_slice;         /* work-groups in all per slice */
    double fixed_ns;          /* latencies and overheads of running a part at all */
    double slice_ns;          /* moving one slice's bytes (to it and back) */
    double feed_fixed_ns, feed_slice_ns;   /* another device's part: what the queue's
                                 device spends reading its bytes first */
    int primary;              /* the queue's device (its parts run in place) */
    int usable;               /* has what a prediction needs */
} opt_part_dev;
/*! opt_part_time() : @p d's predicted time for @p n slices (feed aside). */
double opt_part_time(const opt_part_dev *d, uint64_t n);
/*! opt_partition() : slices per device (@p count, n entries, 0: unused)
 *  summing to @p slices, least predicted completion time, which it
 *  returns (INFINITY when no device is usable: counts all 0). At most
 *  OPT_SPLIT_MAX_PARTS devices. */
double opt_partition(const opt_part_dev *devs, unsigned n, uint64_t slices, uint64_t *count);

/* opt_split_cost.c: one launch, as the split pass sees it. */
typedef struct ana_kernel ana_kernel;
typedef struct ana_launch ana_launch;
typedef struct opt_cost_launch {
    cdb *db;
    const char *const *specs; /* the devices to split over */
    unsigned ndevs;
    const char *primary;      /* the queue's device (a spec) */
    cdb_key key;
    const ana_kernel *k;
    const ana_launch *l;
    const uint8_t *args;      /* per argument: OPT_SPLIT_ARG_* */
    const uint64_t *sizes;    /* per argument: the buffer's size */
    uint64_t g[3];            /* work-groups per dimension */
    unsigned dim;             /* the dimension split */
    int diff;                 /* written buffers may need the diff merge */
} opt_cost_launch;
/*! opt_split_cost() : slices per device (@p count, in->ndevs entries)
 *  from the measured costs, and what was predicted (@p info; verdict
 *  "whole" puts every slice on the queue's device). @return 1, or 0 with
 *  why in @p why when the costs do not cover the launch. */
int opt_split_cost(const opt_cost_launch *in, uint64_t *count, opt_partition_info *info, char *why, size_t cap);

/* opt_rw.c: rewriter/rw.h through libclrr-rw.so, loaded on first use
 * (RW_ERR_INTERNAL with the reason when it cannot be loaded). */
rw_status opt_rw_fuse(const rw_fuse_req *req, rw_fuse_out *out, char *err, size_t cap);
void opt_rw_fuse_free(rw_fuse_out *out);
rw_status opt_rw_partition(const rw_part_req *req, rw_part_out *out, char *err, size_t cap);
void opt_rw_partition_free(rw_part_out *out);
rw_status opt_rw_specialize(const rw_spec_req *req, rw_spec_out *out, char *err, size_t cap);
void opt_rw_specialize_free(rw_spec_out *out);

/*! opt_plan_new() : an empty plan of this build's version. NULL on ENOMEM. */
opt_plan *opt_plan_new(void);
/*! opt_plan_add_xform() : appends a copy of @p x (strings copied into the
 *  plan); the id is assigned. @return OPT_OK or OPT_ERR_NOMEM/LIMIT. */
opt_status opt_plan_add_xform(opt_plan *p, const opt_xform *x);
opt_status opt_plan_add_kernel(opt_plan *p, const char *name, const uint8_t program[16], unsigned nargs,
                               const uint8_t *access);
opt_status opt_plan_add_program(opt_plan *p, const uint8_t hash[16]);
opt_status opt_plan_set_strings(opt_plan *p, const char *generator, const char *trace_file);
/*! opt_plan_find_kernel() : facts for kernel @p name of the program with
 *  source hash @p program, or NULL. */
const opt_kernel_facts *opt_plan_find_kernel(const opt_plan *p, const char *name, const uint8_t program[16]);

/* ------------------------------------------------------------ patterns */

/*! opt_pattern_canon() : the canonical text of pattern object @p pat
 *  (compact JSON, keys sorted) into a malloc'ed string (*out, caller frees)
 *  and its key. @return OPT_OK, OPT_ERR_LIMIT (over OPT_PATTERN_MAX) or
 *  OPT_ERR_NOMEM. */
opt_status opt_pattern_canon(const json_t *pat, char **out, uint64_t *key);
/*! opt_pattern_key() : XXH64 of a canonical text. */
uint64_t opt_pattern_key(const char *canon, size_t len);
/*! opt_pattern_check() : validates an untrusted pattern object (PLAN.md,
 *  "Patterns"); on error writes "where: what" using @p where. */
opt_status opt_pattern_check(const json_t *pat, const char *where, char *err, size_t err_cap);

/* ------------------------------------------------------------ the tracker */

/* Known contents of a root: bytes [lo, hi) equal the content named by key,
 * whose first byte sits at origin (opt_hold.c). */
typedef struct opt_content {
    uint8_t key[16];          /* what the bytes are (data hash, or a fill/rect key) */
    uint64_t origin;          /* position of the content's first byte in the root */
    uint64_t lo, hi;          /* the bytes it covers, in the root */
    uint64_t seq;             /* the call that left them */
    uint64_t queue;           /* its queue */
    int settled;              /* known complete (blocking, or a creation) */
    int pending;              /* the key comes later (a DATA item of seq) */
} opt_content;

/* A kernel argument as last set. */
typedef struct opt_karg {
    uint8_t kind;             /* OPT_KARG_* */
    uint32_t size;            /* arg_size */
    uint64_t id;              /* MEM: the object; SVM: the address */
    char *bytes;              /* BYTES: hex of the value (malloc'ed), or "xxh:<hash>" */
} opt_karg;
enum { OPT_KARG_UNSET = 0, OPT_KARG_MEM, OPT_KARG_BYTES, OPT_KARG_LOCAL, OPT_KARG_SVM };

enum { OPT_OBJ_OTHER = 0, OPT_OBJ_MEM, OPT_OBJ_QUEUE, OPT_OBJ_PROGRAM, OPT_OBJ_KERNEL };

typedef struct opt_obj {
    uint64_t id;
    uint8_t kind;             /* OPT_OBJ_* */
    uint8_t image;            /* an image (its bytes have no tracked layout) */
    uint8_t visible;          /* the host can see its bytes outside the API
                                 (USE_HOST_PTR, shared with an image or a GL object, pipes) */
    uint8_t in_order;         /* queues */
    uint8_t has_src;          /* programs: src is known */
    uint8_t has_sub;          /* roots: a sub-buffer was made of it */
    uint8_t writes;           /* memory roots: commands that may have written its bytes,
                                 up to 2 (2 also: made with contents, or an unknown
                                 command ran) */
    uint32_t ordinal;         /* memory objects: creation order, from 1 */
    uint64_t size, flags;     /* memory objects (images: size 0) */
    uint64_t root, origin;    /* memory objects: the object holding the bytes, offset */
    uint8_t src[16];          /* programs: XXH3-128 of the source */
    char *name;               /* kernels: function name (malloc'ed) */
    uint64_t program;         /* kernels */
    opt_karg *args;           /* kernels: current arguments */
    unsigned nargs;
    const opt_kernel_facts *facts;   /* kernels: resolved once, NULL unknown */
    int facts_looked;
    opt_content *segs;        /* roots: byte ranges of known contents */
    unsigned nsegs, capsegs;
    char *role;               /* its role in patterns, made at first use (what it is made
                                 of is set when it is created); malloc'ed */
    uint32_t nrole;
} opt_obj;

/* What happened to a call the tracker is told about. */
typedef enum opt_fate {
    OPT_FATE_RUN = 0,         /* executed as recorded */
    OPT_FATE_DEAD,            /* not executed: its outputs are dead (they become unknown) */
    OPT_FATE_REDUNDANT        /* not executed: the memory already holds its bytes */
} opt_fate;

#define OPT_PSIG_SLOTS 256   /* signature ids: the recorder's are below 256 */

typedef struct opt_track {
    opt_map objs;             /* id -> opt_obj* */
    struct opt_psig *psig[OPT_PSIG_SLOTS];   /* the members of each function's patterns, by
                                 signature id (opt_pattern_build.c); malloc'ed */
    opt_obj **all;            /* every object, for freeing */
    size_t nall, capall;
    uint32_t next_ordinal;
    const opt_plan *facts;    /* kernel facts (a plan), or NULL */
    /* fingerprint of the structure (opt_track_call with fp on) */
    int fp_on;
    uint64_t fp_state;
    uint64_t fp_calls, calls;
} opt_track;

/*! opt_track_init() : an empty tracker using the kernel facts of @p facts
 *  (may be NULL: every launch writes every memory argument). */
void opt_track_init(opt_track *t, const opt_plan *facts);
void opt_track_free(opt_track *t);

/*! opt_droppable() : 1 when function @p fn is one a plan may drop
 *  (launches, writes, fills, copies). */
int opt_droppable(const char *fn);

/*! opt_track_pattern() : the pattern of call @p c (made before the call is
 *  applied: kernel arguments as set): *canon (malloc'ed) and *key. @p shape:
 *  leave out scalar values (the fingerprint's form). @return OPT_OK or an
 *  error. */
opt_status opt_track_pattern(opt_track *t, const tf_call *c, int shape, char **canon, uint64_t *key);

/*! opt_track_redundant() : for a write or fill @p c about to run, 1 when
 *  the memory it writes already holds exactly its bytes (set *holds_seq to
 *  the call that left them), else 0. */
int opt_track_redundant(opt_track *t, const tf_call *c, uint64_t *holds_seq);

/*! opt_track_call() : applies call @p c with fate @p fate: objects,
 *  kernel arguments, known contents, fingerprint. Calls that failed when
 *  recorded change nothing. @return OPT_OK or OPT_ERR_NOMEM. */
opt_status opt_track_call(opt_track *t, const tf_call *c, opt_fate fate);
/*! opt_track_karg() : argument @p idx of kernel @p kid is now @p v (@p size
 *  bytes; @p svm: clSetKernelArgSVMPointer's pointer), as a successful
 *  clSetKernelArg(SVMPointer) call sets it. */
opt_status opt_track_karg(opt_track *t, uint64_t kid, uint64_t idx, uint64_t size, const tf_value *v, int svm);
/*! opt_track_enqueue() : the memory effects of enqueue @p c (opt_track_mem.c). */
opt_status opt_track_enqueue(opt_track *t, const tf_call *c, const char *fn, opt_fate fate);
/*! opt_track_access() : how kernel @p k accesses argument @p arg
 *  (OPT_ACC_*; OPT_ACC_UNKNOWN without kernel facts). */
uint8_t opt_track_access(opt_track *t, opt_obj *k, unsigned arg);
/*! opt_track_data() : a DATA item (late read-back bytes). */
void opt_track_data(opt_track *t, const tf_data *d);

/*! opt_track_fingerprint() : the fingerprint so far (fp_on). */
uint64_t opt_track_fingerprint(const opt_track *t);

/* opt_hold.c */
/*! opt_key_combine() : the key of data with hash @p h laid out by geometry key @p g
 *  (@p out may be @p g). */
void opt_key_combine(const uint8_t h[16], const uint8_t g[16], uint8_t out[16]);
void opt_hold_kill(opt_obj *root, uint64_t lo, uint64_t hi);
void opt_hold_kill_all(opt_track *t);
opt_status opt_hold_add(opt_obj *root, const opt_content *c);
/*! opt_hold_find() : a known content with @p key and @p origin covering
 *  [lo, hi) that a command on @p queue may rely on (settled, or from the
 *  same in-order queue); NULL when none. */
const opt_content *opt_hold_find(const opt_track *t, const opt_obj *root, const uint8_t key[16], uint64_t origin,
                                 uint64_t lo, uint64_t hi, uint64_t queue);
/*! opt_hold_data() : the late data of call @p seq: pending contents get
 *  their key (@p key combined as each content's kind requires). */
void opt_hold_data(opt_track *t, uint64_t seq, const uint8_t hash[16]);
/*! opt_hold_settle() : every content left by a command of @p queue (0: all
 *  queues) is known complete. */
void opt_hold_settle(opt_track *t, uint64_t queue);

/* opt_track.c helpers shared with opt_hold.c / opt_pattern.c */
opt_obj *opt_track_obj(const opt_track *t, uint64_t id);
/* Root @p r may have been written by one more command. */
static inline void opt_obj_written(opt_obj *r)
{
    if (r && r->writes < 2)
        r->writes++;
}

/*! opt_track_fresh_once() : 1 when memory object @p id is a buffer of its
 *  own (no sub-buffers, not visible to the host, made without contents)
 *  that at most one command may have written since it was made. */
int opt_track_fresh_once(opt_track *t, uint64_t id);

/*! opt_mem_range() : the bytes of memory object @p o in its root. */
opt_obj *opt_mem_range(const opt_track *t, const opt_obj *o, uint64_t *lo, uint64_t *hi);

/*! opt_occurrence_next() : the next occurrence (from 0) of pattern @p key in
 *  @p occ (opt_util.c; the passes and the matcher count the same way). */
uint64_t opt_occurrence_next(opt_map *occ, uint64_t key, int *nomem);
/*! opt_occurrence_count() : how many calls with pattern @p key @p occ has seen. */
uint64_t opt_occurrence_count(const opt_map *occ, uint64_t key);

/* opt_dead.c: the dead command pass on the analyzer's model. */
typedef struct ana_model ana_model;
typedef struct opt_dead_cmd {
    uint64_t seq;
    const char *reason;       /* malloc'ed */
} opt_dead_cmd;
/*! opt_dead_find() : the commands of @p m whose results are never
 *  observed; *out (malloc'ed, sorted by seq) with reasons. */
opt_status opt_dead_find(const ana_model *m, opt_dead_cmd **out, size_t *n, char *err, size_t err_cap);

/* ------------------------------------------------------------ the matcher */

#define OPT_MAX_FALLBACKS 64

/* A call a live run keeps (OPT_DEFER, or a held launch whose fusion does
 * not store its output): the roots of the memory it may read, then of the
 * memory it may write. */
/* A launch's identity for the live rule "the same kernel over the same
 * range writes the same elements again": kernel name (the tracker's
 * string) and program source hash, work_dim, global sizes, offsets and
 * local sizes. name NULL: not a launch, or not known. */
typedef struct opt_launch_id {
    const char *name;
    uint8_t program[16];
    uint64_t range[10];
} opt_launch_id;

typedef struct opt_kept {
    uint64_t seq;
    uint32_t xform;               /* the transformation that kept it */
    uint64_t *roots;              /* nr read, then nw written (malloc'ed) */
    uint32_t nr, nw;
    int all;                      /* may touch any memory (unknown command) */
    uint64_t full;                /* a root it overwrites in full for sure, else 0 */
    opt_launch_id launch;         /* launches */
    uint64_t *ro;                 /* held launches: per kernel argument, the memory object
                                     the kernel only reads through it, else 0; then per
                                     argument the memory object it passes, else 0 (2 nro,
                                     malloc'ed) */
    uint32_t nro;
    int gone;                     /* held launches: what it writes was released meanwhile */
} opt_kept;

enum { OPT_X_PENDING = 0, OPT_X_APPLIED, OPT_X_FELL_BACK };

struct opt_exec {
    const opt_plan *p;
    opt_track t;
    opt_map occ;
    const opt_xform **by_key;     /* sorted by (key, occurrence) */
    const opt_xform **by_seq;     /* sorted by seq */
    size_t n;
    uint8_t *state;               /* per transformation (index id - 1) */
    int same_trace;
    uint64_t fp, drops, fusions, splits, specs;
    size_t nspec_xf;          /* specialize transformations (shape patterns are looked up too) */
    const opt_xform *held[OPT_CHAIN_MAX];   /* holds whose launches the run keeps, waiting for
                                     their fuse (a pair's producer, or a chain's launches) */
    unsigned nheld;
    const opt_xform *hold_new;    /* opt_exec_decide: a hold that starts a new pair or chain */
    const opt_fused *fused;       /* the last OPT_FUSE answer's kernel */
    const opt_split *split;       /* the last OPT_SPLIT answer's split */
    struct opt_rpl_conv *conv;    /* opt_exec_split_rpl's storage */
    opt_fallback fb[OPT_MAX_FALLBACKS];
    size_t nfb, nfb_calls;        /* listed; of which met during the run */
    /* live runs (opt_live.c) */
    int live;
    const opt_xform *deferred;    /* the transformation of the last OPT_DEFER */
    opt_kept *kept, held_sets[OPT_CHAIN_MAX];   /* kept calls; the held launches' memory */
    size_t nkept, capkept;
    uint64_t *force, *discard;    /* the answer being built */
    size_t nforce, capforce, ndiscard, capdiscard;
    struct opt_begun { uint64_t seq; uint8_t fate; } *begun;   /* calls begun, not ended */
    size_t nbegun, capbegun;
    uint64_t nkept_total, nforced, nfreed;
    uint32_t *fz_forced;          /* per fused kernel: held producers that had to run after all */
    uint64_t steady;              /* calls past the recording given its last transformation */
    char **fns, **knames;         /* live: the plan's functions, launched kernels' names */
    size_t nfns, nknames;
    int any_kernel;               /* live: a launch pattern without a kernel name */
};

/* opt_exec.c, shared with opt_live.c */
void opt_exec_fell_back(opt_exec *x, const opt_xform *f, uint64_t seq, const char *why);
int opt_exec_decide(opt_exec *x, const tf_call *c, opt_fate *fate);
/* After opt_exec_decide: the held launches that do not go on run first
 * (listed as fallen back; the caller runs them), and a new hold starts.
 * @return how many held launches must run first (x->held[0..n) then). */
unsigned opt_exec_unhold(opt_exec *x, int v, const char *fn);
int opt_exec_passive(const char *fn);
/* opt_live.c */
void opt_live_free(opt_exec *x);
/*! opt_live_item() : the END of a live call: tracked with the fate its
 *  begin got. */
int opt_live_item(opt_exec *x, const tf_item *it);


#endif /* CLRR_OPT_INT_H */
