/* plan.h — the plan module: the plan file (format "clrr-plan", plan/PLAN.md;
 * reader and writer), the plan's contents as a program reads them and as
 * the optimizer builds them, and the call tracker with its patterns, which
 * the optimizer's passes (offline) and the matcher (live/, while a run
 * executes) feed with the same calls, so that patterns, occurrences and
 * "this memory already holds these bytes" are computed by one piece of
 * code on both sides. Plain C on trace-format/ and jansson: no OpenCL, no
 * LLVM, so the layer (live/) links it.
 *
 * A plan says what to change in which recorded calls, each change with a
 * pattern that names the call without sequence numbers or pointers
 * (function, kernel name and program source hash, launch shape, argument
 * roles and scalar values), its expected effect and how it is verified.
 * The reader treats every plan as untrusted input: strict types, every
 * count and size checked, bounded memory, one-line errors.
 *
 * Error convention: functions returning opt_status return OPT_OK (0) or a
 * negative OPT_ERR_*; those that take (err, err_cap) write a one-line
 * reason there. A plan, once read or built, is read-only and may be read
 * by several threads at once; nothing else here is thread-safe (one
 * tracker, map or arena per thread, or the caller's lock).
 */
#ifndef CLRR_PLAN_H
#define CLRR_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace-format/tf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opt_status {
    OPT_OK = 0,
    OPT_ERR_NOMEM = -1,
    OPT_ERR_ARG = -2,        /* bad argument from the caller (pass list, NULL) */
    OPT_ERR_TRACE = -3,      /* the trace cannot be read or modelled */
    OPT_ERR_PLAN = -4,       /* the plan is malformed: syntax, types, counts */
    OPT_ERR_VERSION = -5,    /* a plan format or major version this build cannot read */
    OPT_ERR_LIMIT = -6,      /* a plan over the reader's limits (size, counts) */
    OPT_ERR_IO = -7          /* a file cannot be read or written */
} opt_status;

/*! opt_strerror() : @return a static string naming @p s. Thread-safe. */
const char *opt_strerror(opt_status s);

/* The plan format this build writes; it reads every 1.x (PLAN.md,
 * "Versions"). */
#define OPT_PLAN_FORMAT "clrr-plan"
#define OPT_PLAN_MAJOR 1
#define OPT_PLAN_MINOR 9

/* Reader limits (PLAN.md, "Limits"). */
#define OPT_PLAN_MAX_BYTES ((size_t)64 << 20)    /* plan file */
#define OPT_PLAN_MAX_XFORMS 1000000u             /* transformations */
#define OPT_PLAN_MAX_KERNELS 65536u              /* kernel facts */
#define OPT_PATTERN_MAX 16384u                   /* canonical pattern text */

/* ================================================================ passes */

typedef enum opt_pass {
    OPT_PASS_DEAD = 0,        /* dead command elimination */
    OPT_PASS_REDUNDANT = 1,   /* redundant transfer elimination */
    OPT_PASS_FUSE = 2,        /* vertical fusion of producer -> consumer launches (1.1) */
    OPT_PASS_SPLIT = 3,       /* one launch split over several devices (1.4; runs only when
                                 opt_options.split names the devices) */
    OPT_PASS_SPECIALIZE = 4,  /* scalar arguments constant across the recording that bound
                                 loops become compile-time constants (1.7) */
    OPT_PASS_SCHEDULE = 5,    /* an in-order queue's transfers on lanes of their own, so that
                                 copies overlap compute (1.8) */
    OPT_PASS_COUNT
} opt_pass;

/* "all": the passes that need no option (split is asked for with its devices). */
#define OPT_PASSES_ALL (((1u << OPT_PASS_SPLIT) - 1) | 1u << OPT_PASS_SPECIALIZE | 1u << OPT_PASS_SCHEDULE)
/* `clrr optimize` without --passes: all of them (the schedule's lanes,
 * their copies pinned, took overlap's replay from 2.25 to 1.16 ms a loop
 * on an H200, bench/results/nvidia-h200-sched.md). */
#define OPT_PASSES_DEFAULT OPT_PASSES_ALL

/*! opt_pass_name() : "dead", "redundant", "fuse", "split", "specialize",
 *  "schedule" (static); NULL when out of range. */
const char *opt_pass_name(opt_pass p);

/*! opt_passes_parse() : a comma-separated list of pass names, "all" or
 *  "none", into a bit mask (bit p = pass p). @return 0, or -1 with a
 *  one-line reason in @p err ("unknown pass 'fuse' (passes: dead,
 *  redundant)"). */
int opt_passes_parse(const char *list, unsigned *mask, char *err, size_t err_cap);

/* What a pass (or a transformation) is expected to save, from the
 * recording. */
typedef struct opt_effect {
    uint64_t commands;        /* commands not executed */
    uint64_t kernels;         /* ... of which kernel launches */
    uint64_t bytes;           /* bytes no longer transferred, filled or copied */
    uint64_t device_ns;       /* recorded device time of those commands */
    uint64_t timed;           /* commands whose device time was recorded */
} opt_effect;

/* ================================================================ plans */

typedef struct opt_plan opt_plan;

/* What a transformation does. drop: the command is not executed (an event
 * it produced is still signalled, by a marker). Fusion (1.1): hold: the
 * producer launch is taken by the fused launch that follows (run as
 * recorded if that does not come); fuse: the consumer launch runs the
 * fused kernel instead, with the held launch's arguments and its own. */
typedef enum opt_action { OPT_ACT_DROP = 0, OPT_ACT_HOLD = 1, OPT_ACT_FUSE = 2, OPT_ACT_SPLIT = 3,
                          OPT_ACT_SPECIALIZE = 4, OPT_ACT_COUNT } opt_action;

/*! opt_action_name() : "drop", "hold", "fuse", "split", "specialize" (static). */
const char *opt_action_name(opt_action a);

typedef struct opt_xform {
    uint32_t id;              /* 1, 2, ... in plan order */
    uint8_t pass;             /* opt_pass */
    uint8_t action;           /* opt_action */
    uint64_t seq;             /* the call in the recording */
    const char *function;     /* its function */
    const char *pattern;      /* canonical pattern (PLAN.md, "Patterns"): compact JSON,
                                 keys sorted; owned by the plan */
    uint64_t key;             /* XXH64 of pattern */
    uint64_t occurrence;      /* the call is the occurrence-th (from 0) with this pattern */
    uint64_t occurrences;     /* 1.3: calls of the recording with this pattern (0: not said) */
    uint64_t holds_seq;       /* redundant: the call that left the same bytes, else 0 */
    opt_effect effect;
    const char *reason;       /* one line: why it is safe */
    uint32_t fused;           /* hold, fuse: the fused kernel's id (1, 2, ...), else 0 */
    uint32_t split;           /* split (1.4): the split's id (1, 2, ...), else 0 */
    uint32_t spec;            /* specialize (1.7): the specialization's id (1, 2, ...), else 0 */
} opt_xform;

/* The most launches one fused kernel does (a chain, plan 1.5). */
#define OPT_CHAIN_MAX 16

/* A generated kernel (1.1): a fusion of a producer and a consumer kernel of
 * one program, as OpenCL C source (the program's source with the fused
 * kernel appended, rewriter/rw.h); from 1.5 possibly of a chain of
 * launches, each consuming what the one before it produced; from 1.6 of a
 * group whose launches each feed a later one (into[]). Parameter i
 * of the fused kernel is argument params[i].index of launch params[i].from
 * of the chain (0: the first held launch; launches - 1: the consumer), as
 * set when each launched. */
typedef struct opt_fused {
    uint32_t id;              /* 1, 2, ... in plan order */
    const char *name;         /* the fused kernel's name */
    const char *producer, *consumer;   /* the kernels it fuses (the chain's first and last) */
    unsigned launches;        /* 2 (a pair) .. OPT_CHAIN_MAX: the launches it does (1.5) */
    int gather;               /* 1.6: into[] is not a chain's */
    int horizontal;           /* 1.7: independent launches, no intermediate (keep_store 1) */
    uint8_t into[OPT_CHAIN_MAX];   /* into[i] (i < launches - 1): the launch that reads launch i's
                                    * intermediate (i < into[i] < launches); a chain's: i + 1 */
    uint8_t program[16];      /* XXH3-128 of the original program source */
    const char *source;       /* the program to build */
    const char *options;      /* its build options (the original program's) */
    int keep_store;           /* the intermediate buffer is still written */
    unsigned nparams;
    const uint8_t (*params)[2];   /* (from, index) */
    uint32_t storing;         /* !keep_store: the id of the same fusion that still
                               * stores the buffer (0: none), for live runs that
                               * read it after all (plan 1.2) */
} opt_fused;

/* The most scalar parameters one specialization makes constant (as rw.h's
 * RW_MAX_CONSTS). */
#define OPT_SPEC_MAX_CONSTS 16

/* One constant of a specialization: parameter index, and the argument's
 * bytes as every launch of the recording set them. */
typedef struct opt_const {
    unsigned index;
    unsigned size;            /* 1, 2, 4 or 8 */
    uint8_t value[8];
} opt_const;

/* A specialized kernel (1.7): kernel `kernel` of a program with scalar
 * parameters consts[] turned into compile-time constants (rewriter/rw.h
 * rw_specialize): the same parameters, so a launch runs it with its own
 * arguments. `as` is the same kernel in the shape execution runs fused
 * kernels in (launches 1, every parameter from the launch itself, id
 * OPT_SPEC_ID_BASE + id so that caches keyed by id tell it from a fused
 * kernel). */
#define OPT_SPEC_ID_BASE 0x100000u
typedef struct opt_spec {
    uint32_t id;              /* 1, 2, ... in plan order */
    const char *name;         /* the specialized kernel's name */
    const char *kernel;       /* the kernel it specializes */
    uint8_t program[16];      /* XXH3-128 of the original program source */
    const char *source;       /* the program to build */
    const char *options;      /* its build options (the original program's) */
    unsigned nargs;           /* the kernel's parameters (1..128) */
    unsigned nconsts;         /* 1..OPT_SPEC_MAX_CONSTS */
    const opt_const *consts;
    opt_fused as;
} opt_spec;

/* A scheduled queue (1.8): the commands of an in-order command queue run
 * over lanes, queues of the executor's on the same device and context:
 * lane 0 is the queue itself (kernels and every other command), lane 1
 * takes the writes from host memory (uploads), lane 2 the reads into host
 * memory (downloads; with lanes 2, downloads share lane 1). A command waits
 * for the last command of each other lane whose memory it conflicts with
 * (same root object, overlapping bytes, one of them writes), computed as
 * the run goes (replayer/rpl.h, rpl_lanes), so the order of every
 * conflicting pair is the queue's. The queue is named by creation order:
 * the queue-th command queue the application creates (from 0). */
typedef struct opt_sched {
    uint32_t id;              /* 1, 2, ... in plan order */
    uint64_t queue;           /* the queue-th command queue created (from 0), in order */
    unsigned lanes;           /* 2 or 3 */
    uint64_t commands;        /* its commands in the recording */
    uint64_t uploads, downloads;   /* of which go to lane 1, lane 2 */
    uint64_t recorded_ns;     /* its commands' device time as recorded (one after another) */
    uint64_t predicted_ns;    /* the same commands over the lanes (predicted; < recorded_ns) */
    const char *reason;       /* one line: what overlaps */
} opt_sched;

/* A split launch (1.4): the launch runs as parts, each a range of
 * work-groups along one dimension on one device, through a partition-ready
 * variant of its kernel (rewriter/rw.h rw_partition: the original kernel's
 * parameters, then RW_PART_EXTRA ulongs that say what the whole launch
 * was). Each part sends a device only the bytes its range reads (and the
 * previous contents of what it may write), and brings back what it writes:
 * concatenated when the parts' write regions are disjoint, merged by
 * comparison with the previous contents otherwise (PLAN.md, "Splits"). */
enum { OPT_SPLIT_ARG_VALUE = 0,   /* set as the launch set it (scalars) */
       OPT_SPLIT_ARG_MEM = 1,     /* a buffer: per part, its regions */
       OPT_SPLIT_ARG_LOCAL = 2 }; /* __local: its size */
enum { OPT_MERGE_NONE = 0, OPT_MERGE_CONCAT = 1, OPT_MERGE_DIFF = 2 };
typedef struct opt_split_region {
    uint8_t read, write;      /* the part reads / writes the argument */
    uint64_t rlo, rhi;        /* bytes [rlo, rhi) it may read (read) */
    uint64_t wlo, whi;        /* bytes [wlo, whi) it may write (write) */
} opt_split_region;
/* Where a part's bytes are for any range of work-groups [lo, hi) (1.4,
 * for proportions adapted while the application runs): bytes
 * [r[0] + r[1]*lo, r[2] + r[3]*hi), clamped to the buffer (r[1], r[3] >= 0). */
typedef struct opt_split_model {
    uint8_t read, write;
    int64_t r[4], w[4];
} opt_split_model;
typedef struct opt_split_part {
    const char *device;       /* a device spec as `clrr devices` / --device take */
    uint64_t lo, hi;          /* work-groups [lo, hi) along the split dimension */
    const opt_split_region *regions;   /* per argument (nargs; VALUE/LOCAL: empty) */
} opt_split_part;
typedef struct opt_split {
    uint32_t id;              /* 1, 2, ... in plan order */
    const char *kernel;       /* the kernel split */
    uint8_t program[16];      /* XXH3-128 of its program's source */
    const char *name;         /* the partition-ready kernel in source */
    const char *source;       /* the program to build (original + that kernel) */
    const char *options;      /* its build options (the original program's) */
    unsigned dim;             /* the dimension split (0..2) */
    uint64_t groups;          /* work-groups along it (work-items when the launch
                                 left the local size to the driver) */
    unsigned nargs;
    const uint8_t *args;      /* per argument: OPT_SPLIT_ARG_* */
    const uint8_t *merge;     /* per argument: OPT_MERGE_* */
    unsigned nparts;
    const opt_split_part *parts;
    int adaptive;             /* models hold for every range: proportions may change */
    const opt_split_model *models;   /* per argument when adaptive, else NULL */
} opt_split;
#define OPT_SPLIT_MAX_PARTS 16u

/* Per kernel: how it accesses its arguments, from the kernel analysis (the
 * plan carries them so that its execution needs no analysis). */
typedef struct opt_kernel_facts {
    const char *name;
    uint8_t program[16];      /* XXH3-128 of the program source */
    unsigned nargs;
    const uint8_t *access;    /* per argument: OPT_ACC_* */
} opt_kernel_facts;

#define OPT_ACC_NONE 0        /* not memory, or never accessed */
#define OPT_ACC_READ 1
#define OPT_ACC_WRITE 2
#define OPT_ACC_RW 3
#define OPT_ACC_UNKNOWN 4     /* counts as read and written in full */

typedef struct opt_pass_result {
    uint8_t pass;             /* opt_pass */
    int enabled;
    uint64_t transformations;
    opt_effect effect;
} opt_pass_result;

typedef struct opt_plan_info {
    unsigned major, minor;    /* format version of the file */
    const char *generator;    /* "clrr 0.1.0" */
    const char *trace_file;   /* the trace it was made from (as named to optimize) */
    uint64_t trace_calls;     /* calls in that trace */
    uint64_t fingerprint;     /* structure of that trace (opt_trace_fingerprint) */
    unsigned nprograms;       /* program source hashes of that trace */
    const uint8_t (*programs)[16];
    unsigned requires;        /* 1.9: the features its `requires` names (bit f = opt_feature f) */
} opt_plan_info;

/* Features a plan may require (1.9, PLAN.md "Requires"): what a reader must
 * know to execute the plan rightly. A reader refuses a plan whose
 * `requires` names a feature it does not know, whatever its minor version. */
typedef enum opt_feature {
    OPT_FEAT_FUSE = 0,        /* actions hold and fuse, fused kernels (1.1) */
    OPT_FEAT_SPLIT = 1,       /* action split, splits (1.4) */
    OPT_FEAT_CHAIN = 2,       /* fused kernels of more than two launches (1.5) */
    OPT_FEAT_SPECIALIZE = 3,  /* action specialize, specializations (1.7) */
    OPT_FEAT_SCHEDULE = 4,    /* scheduled queues (1.8) */
    OPT_FEAT_COUNT
} opt_feature;
#define OPT_PLAN_MAX_REQUIRES 64u   /* names in `requires` */

/*! opt_feature_name() : "fuse", "split", "chain", "specialize",
 *  "schedule" (static); NULL out of range. Thread-safe. */
const char *opt_feature_name(opt_feature f);
/*! opt_plan_features() : the features plan @p p uses (bit f = feature f),
 *  from its contents: what the writer puts in `requires`. */
unsigned opt_plan_features(const opt_plan *p);

/*! opt_plan_read() : reads and validates the plan file @p path. On success
 *  *out owns the plan (opt_plan_free). @return OPT_OK; OPT_ERR_IO (cannot
 *  read); OPT_ERR_PLAN / OPT_ERR_VERSION / OPT_ERR_LIMIT with one line in
 *  @p err ("transformations[3].pattern.global_work_size: expected an array
 *  of at most 3 integers"); OPT_ERR_NOMEM. */
opt_status opt_plan_read(const char *path, opt_plan **out, char *err, size_t err_cap);
/*! opt_plan_parse() : the same from @p len bytes at @p text (not
 *  necessarily NUL-terminated). */
opt_status opt_plan_parse(const char *text, size_t len, opt_plan **out, char *err, size_t err_cap);
/*! opt_plan_write() : writes @p p as JSON (the format of PLAN.md) to @p f.
 *  @return OPT_OK, OPT_ERR_NOMEM or OPT_ERR_IO. */
opt_status opt_plan_write(const opt_plan *p, FILE *f);
/*! opt_plan_free() : accepts NULL. */
void opt_plan_free(opt_plan *p);

/*! opt_plan_get_info() / opt_plan_xform_count() / opt_plan_xform() /
 *  opt_plan_kernel_count() / opt_plan_kernel() : the plan's header,
 *  transformations (in plan order) and kernel facts; NULL for an index out
 *  of range. Everything returned lives until opt_plan_free(). */
const opt_plan_info *opt_plan_get_info(const opt_plan *p);
size_t opt_plan_xform_count(const opt_plan *p);
const opt_xform *opt_plan_xform(const opt_plan *p, size_t i);
size_t opt_plan_kernel_count(const opt_plan *p);
const opt_kernel_facts *opt_plan_kernel(const opt_plan *p, size_t i);
/*! opt_plan_fused_count() / opt_plan_fused() : the generated kernels; by
 *  index from 0 (NULL out of range). */
size_t opt_plan_fused_count(const opt_plan *p);
const opt_fused *opt_plan_fused(const opt_plan *p, size_t i);
/*! opt_plan_spec_count() / opt_plan_spec() : the specializations (1.7);
 *  by index from 0 (NULL out of range). */
size_t opt_plan_spec_count(const opt_plan *p);
const opt_spec *opt_plan_spec(const opt_plan *p, size_t i);
/*! opt_plan_split_count() / opt_plan_split() : the splits (1.4); by index
 *  from 0 (NULL out of range). */
size_t opt_plan_split_count(const opt_plan *p);
const opt_split *opt_plan_split(const opt_plan *p, size_t i);
/*! opt_plan_sched_count() / opt_plan_sched() : the scheduled queues (1.8);
 *  by index from 0 (NULL out of range). */
size_t opt_plan_sched_count(const opt_plan *p);
const opt_sched *opt_plan_sched(const opt_plan *p, size_t i);
/*! opt_plan_pass() : the result of pass @p pass (enabled 0 when it did not run). */
const opt_pass_result *opt_plan_pass(const opt_plan *p, opt_pass pass);

/*! opt_pattern_format() : a readable one-line form of canonical pattern
 *  @p pattern ("clEnqueueNDRangeKernel stats@1f2e… global [1024] local [64]
 *  args (mem#3 4096 B, bytes 00040000)") into @p dst (NUL-terminated when
 *  dst_cap > 0). @return the length it needed, like snprintf. */
int opt_pattern_format(const char *pattern, char *dst, size_t dst_cap);

/* ================================================================ building
 * What the optimizer's passes use to make a plan. */

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

/*! opt_plan_new() : an empty plan of this build's version. NULL on ENOMEM. */
opt_plan *opt_plan_new(void);
/*! opt_plan_add_xform() : appends a copy of @p x (strings copied into the
 *  plan); the id is assigned. @return OPT_OK or OPT_ERR_NOMEM/LIMIT. */
opt_status opt_plan_add_xform(opt_plan *p, const opt_xform *x);
opt_status opt_plan_add_kernel(opt_plan *p, const char *name, const uint8_t program[16], unsigned nargs,
                               const uint8_t *access);
opt_status opt_plan_add_program(opt_plan *p, const uint8_t hash[16]);
opt_status opt_plan_set_strings(opt_plan *p, const char *generator, const char *trace_file);
/*! opt_plan_info_mut() / opt_plan_pass_mut() / opt_plan_xform_mut() : the
 *  header, pass @p pass's result and transformation @p i (from 0; NULL out
 *  of range) of a plan being built, to fill in. */
opt_plan_info *opt_plan_info_mut(opt_plan *p);
opt_pass_result *opt_plan_pass_mut(opt_plan *p, opt_pass pass);
opt_xform *opt_plan_xform_mut(opt_plan *p, size_t i);
/*! opt_plan_find_kernel() : facts for kernel @p name of the program with
 *  source hash @p program, or NULL. */
const opt_kernel_facts *opt_plan_find_kernel(const opt_plan *p, const char *name, const uint8_t program[16]);

/* ================================================================ helpers */

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

/* ================================================================ the tracker */

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

/*! opt_track_obj() : the tracked object @p id, or NULL. */
opt_obj *opt_track_obj(const opt_track *t, uint64_t id);

/*! opt_track_fresh_once() : 1 when memory object @p id is a buffer of its
 *  own (no sub-buffers, not visible to the host, made without contents)
 *  that at most one command may have written since it was made. */
int opt_track_fresh_once(opt_track *t, uint64_t id);

/*! opt_occurrence_next() : the next occurrence (from 0) of pattern @p key in
 *  @p occ (opt_util.c; the passes and the matcher count the same way). */
uint64_t opt_occurrence_next(opt_map *occ, uint64_t key, int *nomem);
/*! opt_occurrence_count() : how many calls with pattern @p key @p occ has seen. */
uint64_t opt_occurrence_count(const opt_map *occ, uint64_t key);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_PLAN_H */
