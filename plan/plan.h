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
 * Error convention: functions returning plan_status return PLAN_OK (0) or a
 * negative PLAN_ERR_*; those that take (err, err_cap) write a one-line
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

typedef enum plan_status {
    PLAN_OK = 0,
    PLAN_ERR_NOMEM = -1,
    PLAN_ERR_ARG = -2,        /* bad argument from the caller (pass list, NULL) */
    PLAN_ERR_TRACE = -3,      /* the trace cannot be read or modelled */
    PLAN_ERR_PLAN = -4,       /* the plan is malformed: syntax, types, counts */
    PLAN_ERR_VERSION = -5,    /* a plan format or major version this build cannot read */
    PLAN_ERR_LIMIT = -6,      /* a plan over the reader's limits (size, counts) */
    PLAN_ERR_IO = -7          /* a file cannot be read or written */
} plan_status;

/*! plan_strerror() : @return a static string naming @p s. Thread-safe. */
const char *plan_strerror(plan_status s);

/* The plan format this build writes; it reads every 1.x (PLAN.md,
 * "Versions"). */
#define PLAN_FORMAT "clrr-plan"
#define PLAN_MAJOR 1
#define PLAN_MINOR 14

/* Reader limits (PLAN.md, "Limits"). */
#define PLAN_MAX_BYTES ((size_t)64 << 20)    /* plan file */
#define PLAN_MAX_XFORMS 1000000u             /* transformations */
#define PLAN_MAX_KERNELS 65536u              /* kernel facts */
#define PLAN_PATTERN_MAX 16384u                   /* canonical pattern text */

/* ================================================================ passes */

typedef enum plan_pass {
    PLAN_PASS_DEAD = 0,        /* dead command elimination */
    PLAN_PASS_REDUNDANT = 1,   /* redundant transfer elimination */
    PLAN_PASS_FUSE = 2,        /* vertical fusion of producer -> consumer launches (1.1) */
    PLAN_PASS_SPLIT = 3,       /* one launch split over several devices (1.4; runs only when
                                 opt_options.split names the devices) */
    PLAN_PASS_SPECIALIZE = 4,  /* scalar arguments constant across the recording that bound
                                 loops become compile-time constants (1.7) */
    PLAN_PASS_SCHEDULE = 5,    /* an in-order queue's transfers on lanes of their own, so that
                                 copies overlap compute (1.8) */
    PLAN_PASS_WGSIZE = 6,      /* measured work-group sizes per launch shape and device (1.10;
                                 runs only with measurement: `clrr optimize --tune`) */
    PLAN_PASS_COUNT
} plan_pass;

/* "all": the passes that need no option (split is asked for with its devices). */
#define PLAN_PASSES_ALL (((1u << PLAN_PASS_SPLIT) - 1) | 1u << PLAN_PASS_SPECIALIZE | 1u << PLAN_PASS_SCHEDULE)
/* `clrr optimize` without --passes: all of them (the schedule's lanes,
 * their copies pinned, took overlap's replay from 2.25 to 1.16 ms a loop
 * on an H200, bench/results/nvidia-h200-sched.md). */
#define PLAN_PASSES_DEFAULT PLAN_PASSES_ALL

/*! plan_pass_name() : "dead", "redundant", "fuse", "split", "specialize",
 *  "schedule", "wgsize" (static); NULL when out of range. */
const char *plan_pass_name(plan_pass p);

/*! plan_passes_parse() : a comma-separated list of pass names, "all" or
 *  "none", into a bit mask (bit p = pass p). @return 0, or -1 with a
 *  one-line reason in @p err ("unknown pass 'fuse' (passes: dead,
 *  redundant)"). */
int plan_passes_parse(const char *list, unsigned *mask, char *err, size_t err_cap);

/* What a pass (or a transformation) is expected to save, from the
 * recording. */
typedef struct plan_effect {
    uint64_t commands;        /* commands not executed */
    uint64_t kernels;         /* ... of which kernel launches */
    uint64_t bytes;           /* bytes no longer transferred, filled or copied */
    uint64_t device_ns;       /* recorded device time of those commands */
    uint64_t timed;           /* commands whose device time was recorded */
} plan_effect;

/* ================================================================ plans */

typedef struct plan_file plan_file;

/* What a transformation does. drop: the command is not executed (an event
 * it produced is still signalled, by a marker). Fusion (1.1): hold: the
 * producer launch is taken by the fused launch that follows (run as
 * recorded if that does not come); fuse: the consumer launch runs the
 * fused kernel instead, with the held launch's arguments and its own. */
typedef enum plan_action { PLAN_ACT_DROP = 0, PLAN_ACT_HOLD = 1, PLAN_ACT_FUSE = 2, PLAN_ACT_SPLIT = 3,
                          PLAN_ACT_SPECIALIZE = 4, PLAN_ACT_LOCAL_SIZE = 5, PLAN_ACT_COARSEN = 6,
                          PLAN_ACT_COUNT } plan_action;

/*! plan_action_name() : "drop", "hold", "fuse", "split", "specialize",
 *  "local_size", "coarsen" (static). */
const char *plan_action_name(plan_action a);

typedef struct plan_xform {
    uint32_t id;              /* 1, 2, ... in plan order */
    uint8_t pass;             /* plan_pass */
    uint8_t action;           /* plan_action */
    uint64_t seq;             /* the call in the recording */
    const char *function;     /* its function */
    const char *pattern;      /* canonical pattern (PLAN.md, "Patterns"): compact JSON,
                                 keys sorted; owned by the plan */
    uint64_t key;             /* XXH64 of pattern */
    uint64_t occurrence;      /* the call is the occurrence-th (from 0) with this pattern */
    uint64_t occurrences;     /* 1.3: calls of the recording with this pattern (0: not said) */
    uint64_t repeat;          /* 1.11, drops: the decision is the same for occurrences
                                 occurrence .. occurrence + repeat - 1 of the pattern (0 or
                                 1: this one alone); seq, holds and reason are the first's,
                                 effect their sum */
    uint64_t holds_seq;       /* redundant: the call that left the same bytes, else 0 */
    plan_effect effect;
    const char *reason;       /* one line: why it is safe */
    uint32_t fused;           /* hold, fuse: the fused kernel's id (1, 2, ...), else 0 */
    uint32_t split;           /* split (1.4): the split's id (1, 2, ...), else 0 */
    uint32_t spec;            /* specialize (1.7): the specialization's id (1, 2, ...), else 0 */
    uint32_t local;           /* local_size (1.10), coarsen (1.12): the tuned shape's id (1, 2,
                                 ...), else 0 */
} plan_xform;

/* The most launches one fused kernel does (a chain, plan 1.5). */
#define PLAN_CHAIN_MAX 16

/* A generated kernel (1.1): a fusion of a producer and a consumer kernel of
 * one program, as OpenCL C source (the program's source with the fused
 * kernel appended, rewriter/rw.h); from 1.5 possibly of a chain of
 * launches, each consuming what the one before it produced; from 1.6 of a
 * group whose launches each feed a later one (into[]). Parameter i
 * of the fused kernel is argument params[i].index of launch params[i].from
 * of the chain (0: the first held launch; launches - 1: the consumer), as
 * set when each launched. */
typedef struct plan_fused {
    uint32_t id;              /* 1, 2, ... in plan order */
    const char *name;         /* the fused kernel's name */
    const char *producer, *consumer;   /* the kernels it fuses (the chain's first and last) */
    unsigned launches;        /* 2 (a pair) .. PLAN_CHAIN_MAX: the launches it does (1.5) */
    int gather;               /* 1.6: into[] is not a chain's */
    int horizontal;           /* 1.7: independent launches, no intermediate (keep_store 1) */
    uint8_t into[PLAN_CHAIN_MAX];   /* into[i] (i < launches - 1): the launch that reads launch i's
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
} plan_fused;

/* The most scalar parameters one specialization makes constant (as rw.h's
 * RW_MAX_CONSTS). */
#define PLAN_SPEC_MAX_CONSTS 16

/* One constant of a specialization: parameter index, and the argument's
 * bytes as every launch of the recording set them. */
typedef struct plan_const {
    unsigned index;
    unsigned size;            /* 1, 2, 4 or 8 */
    uint8_t value[8];
} plan_const;

/* A specialized kernel (1.7): kernel `kernel` of a program with scalar
 * parameters consts[] turned into compile-time constants (rewriter/rw.h
 * rw_specialize): the same parameters, so a launch runs it with its own
 * arguments. `as` is the same kernel in the shape execution runs fused
 * kernels in (launches 1, every parameter from the launch itself, id
 * PLAN_SPEC_ID_BASE + id so that caches keyed by id tell it from a fused
 * kernel). */
#define PLAN_SPEC_ID_BASE 0x100000u
typedef struct plan_spec {
    uint32_t id;              /* 1, 2, ... in plan order */
    const char *name;         /* the specialized kernel's name */
    const char *kernel;       /* the kernel it specializes */
    uint8_t program[16];      /* XXH3-128 of the original program source */
    const char *source;       /* the program to build */
    const char *options;      /* its build options (the original program's) */
    unsigned nargs;           /* the kernel's parameters (1..128) */
    unsigned nconsts;         /* 1..PLAN_SPEC_MAX_CONSTS */
    const plan_const *consts;
    plan_fused as;
} plan_spec;

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
typedef struct plan_sched {
    uint32_t id;              /* 1, 2, ... in plan order */
    uint64_t queue;           /* the queue-th command queue created (from 0), in order */
    unsigned lanes;           /* 2 or 3 */
    uint64_t commands;        /* its commands in the recording */
    uint64_t uploads, downloads;   /* of which go to lane 1, lane 2 */
    uint64_t recorded_ns;     /* its commands' device time as recorded (one after another) */
    uint64_t predicted_ns;    /* the same commands over the lanes (predicted; < recorded_ns) */
    const char *reason;       /* one line: what overlaps */
} plan_sched;

/* A tuned launch shape (1.10, PLAN.md "Local sizes"): launches of kernel
 * `kernel` (program source hash `program`) over `global` with the
 * recorded local size `recorded` (has_recorded 0: NULL, left to the
 * driver) run, on a device the plan measured (name and driver version
 * equal), with that device's tuned local size. Per device: the medians of
 * the launch's device time with the recorded and the tuned local size
 * over `reps` alternated runs, and the noise (the larger spread). */
#define PLAN_LOCAL_MAX_TUNED 16u    /* devices per shape */
#define PLAN_LOCAL_MAX_ITEMS 4096u  /* work-items in one work-group, at most */
typedef struct plan_tuned {
    const char *device;       /* CL_DEVICE_NAME */
    const char *driver;       /* CL_DRIVER_VERSION */
    uint64_t local[3];        /* dim entries, each >= 1, product <= PLAN_LOCAL_MAX_ITEMS */
    uint64_t before_ns, after_ns, noise_ns;
    unsigned reps;
    uint32_t coarsen;         /* 1.12: 0, or the coarsening (coarsenings[coarsen - 1]) the
                                 launch runs instead, over its global size divided by the
                                 factor in that dimension, with local size `local`, or
                                 with none (local all 0) */
} plan_tuned;
typedef struct plan_local {
    uint32_t id;              /* 1, 2, ... in plan order */
    const char *kernel;
    uint8_t program[16];
    unsigned dim;             /* 1..3 */
    uint64_t global[3];
    int has_recorded;
    uint64_t recorded[3];
    unsigned ntuned;          /* 1..PLAN_LOCAL_MAX_TUNED */
    const plan_tuned *tuned;
} plan_local;
#define PLAN_MAX_LOCALS 65536u

/* A coarsened kernel (1.12, PLAN.md "Coarsenings"): kernel `kernel` of a
 * program rewritten (rewriter/rw.h rw_coarsen) so that each work-item
 * does the work of `factor` work-items along dimension `dim`, `form`
 * RW_COARSEN_BLOCKED (0) or RW_COARSEN_STRIDED (1); the same parameters,
 * so a launch runs it with its own arguments over a global size `factor`
 * times smaller in `dim`. Named by tuned shapes' per-device decisions.
 * Forms 3 and 4 (group-blocked, group-strided) coarsen inside each
 * work-group: the launch's local size in `dim` is divided by `factor`
 * too, so a tuned shape naming one must have its recorded local size and
 * use exactly that divided (plan_add_local refuses anything else). */
#define PLAN_COARSE_ID_BASE 0x200000u   /* its id in build caches shared with fused kernels */
#define PLAN_MAX_COARSE 65536u
typedef struct plan_coarse {
    uint32_t id;              /* 1, 2, ... in plan order */
    const char *name;         /* the coarsened kernel's name */
    const char *kernel;       /* the kernel it coarsens */
    uint8_t program[16];      /* XXH3-128 of the original program source */
    const char *source;       /* the program to build */
    const char *options;      /* its build options (the original program's) */
    unsigned dim;             /* 0..2 */
    unsigned factor;          /* 2, 4 or 8; also 16 for the vector form */
    unsigned form;            /* 0 blocked, 1 strided, 2 vector (dim 0 only), 3 group-blocked, 4 group-strided */
    unsigned nargs;           /* the kernel's parameters (1..128) */
} plan_coarse;
#define PLAN_COARSE_FORMS 5u
/*! plan_coarse_form_name() : "blocked", "strided", "vector", "group-blocked"
 *  or "group-strided" for forms 0..4, NULL otherwise (static). */
const char *plan_coarse_form_name(unsigned form);
/*! plan_coarse_count() / plan_get_coarse() : the coarsened kernels
 *  (1.12); by index from 0 (NULL out of range). */
size_t plan_coarse_count(const plan_file *p);
const plan_coarse *plan_get_coarse(const plan_file *p, size_t i);
/*! plan_add_coarse() : appends a copy of @p c (its id assigned; *id may
 *  be NULL). @return PLAN_OK, PLAN_ERR_ARG (dim, factor or form out of
 *  range), PLAN_ERR_NOMEM or PLAN_ERR_LIMIT. */
plan_status plan_add_coarse(plan_file *p, const plan_coarse *c, uint32_t *id);
/*! plan_local_count() / plan_get_local() : the tuned shapes (1.10); by
 *  index from 0 (NULL out of range). */
size_t plan_local_count(const plan_file *p);
const plan_local *plan_get_local(const plan_file *p, size_t i);
/*! plan_add_local() : appends a copy of @p l (its id assigned; *id may be
 *  NULL). @return PLAN_OK, PLAN_ERR_ARG (a local size out of range),
 *  PLAN_ERR_NOMEM or PLAN_ERR_LIMIT. */
plan_status plan_add_local(plan_file *p, const plan_local *l, uint32_t *id);
/*! plan_remove_locals() : removes every local_size and coarsen
 *  transformation, tuned shape and coarsened kernel (the others keep
 *  their order; ids renumbered). */
void plan_remove_locals(plan_file *p);
/* A measured staging decision (1.13, PLAN.md "Staging"): on the device
 * named (CL_DEVICE_NAME, CL_DRIVER_VERSION), buffer writes and blocking
 * reads of at least min_bytes go through pinned memory of clrr's (live:
 * the layer's stager, live/live_stage.c; replay: the replayer's pinned
 * blocks, the bytes copied in or out as the stager does). Measured by
 * whole replays of the trace with and without it, alternated. */
#define PLAN_MAX_STAGES 16u
#define PLAN_STAGE_MIN_BYTES 4096u
typedef struct plan_stage {
    const char *device;       /* CL_DEVICE_NAME */
    const char *driver;       /* CL_DRIVER_VERSION */
    uint64_t min_bytes;       /* >= PLAN_STAGE_MIN_BYTES */
    uint64_t transfers;       /* the replay's transfers it staged */
    uint64_t bytes;           /* ... their bytes */
    uint64_t before_ns, after_ns, noise_ns;   /* medians of whole replays' OpenCL time: without, with */
    unsigned reps;            /* alternated pairs, 1..1000 */
} plan_stage;
/*! plan_stage_count() / plan_get_stage() : the staging decisions (1.13);
 *  by index from 0 (NULL out of range). */
size_t plan_stage_count(const plan_file *p);
const plan_stage *plan_get_stage(const plan_file *p, size_t i);
/*! plan_stage_for() : the decision for the device named @p device with
 *  driver @p driver, or NULL. */
const plan_stage *plan_stage_for(const plan_file *p, const char *device, const char *driver);
/*! plan_add_stage() : appends a copy of @p s. @return PLAN_OK,
 *  PLAN_ERR_ARG (min_bytes below PLAN_STAGE_MIN_BYTES, reps out of range,
 *  after_ns above before_ns, a device and driver already decided),
 *  PLAN_ERR_NOMEM or PLAN_ERR_LIMIT. */
plan_status plan_add_stage(plan_file *p, const plan_stage *s);
/*! plan_remove_stages() : removes every staging decision, kept or not. */
void plan_remove_stages(plan_file *p);
/*! plan_unstaged_count() / plan_get_unstaged() / plan_unstaged_for() :
 *  the devices where a staging was measured and not kept (1.14, PLAN.md
 *  "Staging"; the same members, after_ns any): a live run under the plan
 *  does not stage there by the layer's rule. */
size_t plan_unstaged_count(const plan_file *p);
const plan_stage *plan_get_unstaged(const plan_file *p, size_t i);
const plan_stage *plan_unstaged_for(const plan_file *p, const char *device, const char *driver);
/*! plan_add_unstaged() : appends a copy of @p s. @return PLAN_OK,
 *  PLAN_ERR_ARG (as plan_add_stage, but after_ns may be above before_ns;
 *  a device and driver already decided either way), PLAN_ERR_NOMEM or
 *  PLAN_ERR_LIMIT. */
plan_status plan_add_unstaged(plan_file *p, const plan_stage *s);
/* A launch as tuned shapes name it (1.10): kernel, program, NDRange. */
typedef struct plan_shape {
    const char *kernel;       /* the tracker's string */
    uint8_t program[16];
    unsigned dim;
    uint64_t global[3];       /* 1 beyond dim */
    int has_local;
    uint64_t local[3];        /* 0 beyond dim, and without a local size */
} plan_shape;
struct plan_track;
/*! plan_launch_shape() : the shape of clEnqueueNDRangeKernel call @p c
 *  (its kernel as tracker @p t knows it, before the call is applied).
 *  @return 1, or 0 when not known (no kernel name, a program without
 *  source, no global size). */
int plan_launch_shape(struct plan_track *t, const tf_call *c, plan_shape *out);
/*! plan_local_match() : the tuned shape of @p p that launches of shape
 *  @p s take (kernel, program, dim, global and recorded local size equal),
 *  or NULL. */
const plan_local *plan_local_match(const plan_file *p, const plan_shape *s);
/*! plan_local_for() : the decision of @p l for the device named @p device
 *  with driver version @p driver (both compared whole), or NULL when the
 *  plan did not measure that device. Thread-safe. */
const plan_tuned *plan_local_for(const plan_local *l, const char *device, const char *driver);

/* A split launch (1.4): the launch runs as parts, each a range of
 * work-groups along one dimension on one device, through a partition-ready
 * variant of its kernel (rewriter/rw.h rw_partition: the original kernel's
 * parameters, then RW_PART_EXTRA ulongs that say what the whole launch
 * was). Each part sends a device only the bytes its range reads (and the
 * previous contents of what it may write), and brings back what it writes:
 * concatenated when the parts' write regions are disjoint, merged by
 * comparison with the previous contents otherwise (PLAN.md, "Splits"). */
enum { PLAN_SPLIT_ARG_VALUE = 0,   /* set as the launch set it (scalars) */
       PLAN_SPLIT_ARG_MEM = 1,     /* a buffer: per part, its regions */
       PLAN_SPLIT_ARG_LOCAL = 2 }; /* __local: its size */
enum { PLAN_MERGE_NONE = 0, PLAN_MERGE_CONCAT = 1, PLAN_MERGE_DIFF = 2 };
typedef struct plan_split_region {
    uint8_t read, write;      /* the part reads / writes the argument */
    uint64_t rlo, rhi;        /* bytes [rlo, rhi) it may read (read) */
    uint64_t wlo, whi;        /* bytes [wlo, whi) it may write (write) */
} plan_split_region;
/* Where a part's bytes are for any range of work-groups [lo, hi) (1.4,
 * for proportions adapted while the application runs): bytes
 * [r[0] + r[1]*lo, r[2] + r[3]*hi), clamped to the buffer (r[1], r[3] >= 0). */
typedef struct plan_split_model {
    uint8_t read, write;
    int64_t r[4], w[4];
} plan_split_model;
typedef struct plan_split_part {
    const char *device;       /* a device spec as `clrr devices` / --device take */
    uint64_t lo, hi;          /* work-groups [lo, hi) along the split dimension */
    const plan_split_region *regions;   /* per argument (nargs; VALUE/LOCAL: empty) */
} plan_split_part;
typedef struct plan_split {
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
    const uint8_t *args;      /* per argument: PLAN_SPLIT_ARG_* */
    const uint8_t *merge;     /* per argument: PLAN_MERGE_* */
    unsigned nparts;
    const plan_split_part *parts;
    int adaptive;             /* models hold for every range: proportions may change */
    const plan_split_model *models;   /* per argument when adaptive, else NULL */
} plan_split;
#define PLAN_SPLIT_MAX_PARTS 16u

/* Per kernel: how it accesses its arguments, from the kernel analysis (the
 * plan carries them so that its execution needs no analysis). */
typedef struct plan_kernel_facts {
    const char *name;
    uint8_t program[16];      /* XXH3-128 of the program source */
    unsigned nargs;
    const uint8_t *access;    /* per argument: PLAN_ACC_* */
} plan_kernel_facts;

#define PLAN_ACC_NONE 0        /* not memory, or never accessed */
#define PLAN_ACC_READ 1
#define PLAN_ACC_WRITE 2
#define PLAN_ACC_RW 3
#define PLAN_ACC_UNKNOWN 4     /* counts as read and written in full */

typedef struct plan_pass_result {
    uint8_t pass;             /* plan_pass */
    int enabled;
    uint64_t transformations;
    plan_effect effect;
} plan_pass_result;

typedef struct plan_info {
    unsigned major, minor;    /* format version of the file */
    const char *generator;    /* "clrr 0.1.0" */
    const char *trace_file;   /* the trace it was made from (as named to optimize) */
    uint64_t trace_calls;     /* calls in that trace */
    uint64_t fingerprint;     /* structure of that trace (live_trace_fingerprint) */
    unsigned nprograms;       /* program source hashes of that trace */
    const uint8_t (*programs)[16];
    unsigned requires;        /* 1.9: the features its `requires` names (bit f = plan_feature f) */
} plan_info;

/* Features a plan may require (1.9, PLAN.md "Requires"): what a reader must
 * know to execute the plan rightly. A reader refuses a plan whose
 * `requires` names a feature it does not know, whatever its minor version. */
typedef enum plan_feature {
    PLAN_FEAT_FUSE = 0,        /* actions hold and fuse, fused kernels (1.1) */
    PLAN_FEAT_SPLIT = 1,       /* action split, splits (1.4) */
    PLAN_FEAT_CHAIN = 2,       /* fused kernels of more than two launches (1.5) */
    PLAN_FEAT_SPECIALIZE = 3,  /* action specialize, specializations (1.7) */
    PLAN_FEAT_SCHEDULE = 4,    /* scheduled queues (1.8) */
    PLAN_FEAT_LOCAL_SIZE = 5,  /* action local_size, section local_sizes (1.10) */
    PLAN_FEAT_COARSEN = 6,     /* action coarsen, section coarsenings (1.12) */
    PLAN_FEAT_COUNT
} plan_feature;
#define PLAN_MAX_REQUIRES 64u   /* names in `requires` */

/*! plan_feature_name() : "fuse", "split", "chain", "specialize",
 *  "schedule", "local_size", "coarsen" (static); NULL out of range. Thread-safe. */
const char *plan_feature_name(plan_feature f);
/*! plan_features() : the features plan @p p uses (bit f = feature f),
 *  from its contents: what the writer puts in `requires`. */
unsigned plan_features(const plan_file *p);

/*! plan_read() : reads and validates the plan file @p path. On success
 *  *out owns the plan (plan_free). @return PLAN_OK; PLAN_ERR_IO (cannot
 *  read); PLAN_ERR_PLAN / PLAN_ERR_VERSION / PLAN_ERR_LIMIT with one line in
 *  @p err ("transformations[3].pattern.global_work_size: expected an array
 *  of at most 3 integers"); PLAN_ERR_NOMEM. */
plan_status plan_read(const char *path, plan_file **out, char *err, size_t err_cap);
/*! plan_parse() : the same from @p len bytes at @p text (not
 *  necessarily NUL-terminated). */
plan_status plan_parse(const char *text, size_t len, plan_file **out, char *err, size_t err_cap);
/*! plan_write() : writes @p p as JSON (the format of PLAN.md) to @p f.
 *  @return PLAN_OK, PLAN_ERR_NOMEM or PLAN_ERR_IO. */
plan_status plan_write(const plan_file *p, FILE *f);
/*! plan_free() : accepts NULL. */
void plan_free(plan_file *p);

/* ---------------------------------------------------------------- trust
 * A plan is data from someone else (PLAN.md, "Trust"): `clrr run --plan`
 * applies only a plan verified on this machine, by `clrr plan verify` or
 * by the `clrr optimize` that wrote it. The record of that verification
 * lives on this machine, never in the plan (a plan's author could forge
 * anything in it): a file named by the plan's trust key, XXH3-128 of the
 * plan file's bytes, in the trust directory, listing the devices the
 * verification ran on. */
#define PLAN_TRUST_KEY_CAP 33   /* 32 lower-case hex digits and a NUL */

/*! plan_read_keyed() : plan_read(), and on success the trust key of the
 *  bytes it parsed into @p key (may be NULL: plain plan_read). */
plan_status plan_read_keyed(const char *path, plan_file **out, char key[PLAN_TRUST_KEY_CAP], char *err,
                            size_t err_cap);
/*! plan_trust_key() : the trust key of @p len bytes at @p bytes (a plan
 *  file's whole contents) into @p key. Thread-safe. */
void plan_trust_key(const void *bytes, size_t len, char key[PLAN_TRUST_KEY_CAP]);
/*! plan_trust_dir() : the trust directory into @p buf (@p cap bytes):
 *  $CLRR_VERIFIED, else $XDG_CACHE_HOME/clrr/verified (an absolute
 *  XDG_CACHE_HOME), else $HOME/.cache/clrr/verified. @return buf, or NULL
 *  when none can be named or it does not fit. Thread-safe (reads the
 *  environment). */
const char *plan_trust_dir(char *buf, size_t cap);
/*! plan_trust_record() : records that the plan of trust key @p key
 *  verified on device @p device (a name as CL_DEVICE_NAME gives it; one
 *  line, at most 255 bytes kept), adding it to the devices already
 *  recorded: the record is written beside itself and renamed into place
 *  (the directory made when missing). @return PLAN_OK; PLAN_ERR_IO or
 *  PLAN_ERR_ARG with one line in @p err. Not thread-safe against another
 *  process recording the same key (the last rename wins; both verified). */
plan_status plan_trust_record(const char *key, const char *device, char *err, size_t err_cap);
/*! plan_trust_lookup() : whether the plan of trust key @p key verified
 *  here: 1 on device @p device (NULL: on any device), 0 not (no record, a
 *  record that is not one, or another device). With @p devices (may be
 *  NULL), the devices recorded, "A, B" (at most @p cap bytes). Thread-safe. */
int plan_trust_lookup(const char *key, const char *device, char *devices, size_t cap);
/*! plan_compare_generated() : whether everything plan @p want executes
 *  that is not checked as it runs — kernel facts, fused kernels,
 *  specializations, splits (source, parameters, constants, models and
 *  regions), coarsened kernels — is what @p got (the same trace's plan, regenerated by the
 *  optimizer) has: each of want's entries equal to one of got's (the
 *  generated kernel's name aside). @return PLAN_OK, or PLAN_ERR_PLAN with
 *  one line in @p err naming the first entry that differs and how
 *  ("specializations[0] (__clrr_spec_1): its source differs from the
 *  rewriter's at line 31"). */
plan_status plan_compare_generated(const plan_file *want, const plan_file *got, char *err, size_t err_cap);

/*! plan_get_info() / plan_xform_count() / plan_get_xform() /
 *  plan_kernel_count() / plan_kernel() : the plan's header,
 *  transformations (in plan order) and kernel facts; NULL for an index out
 *  of range. Everything returned lives until plan_free(). */
const plan_info *plan_get_info(const plan_file *p);
size_t plan_xform_count(const plan_file *p);
const plan_xform *plan_get_xform(const plan_file *p, size_t i);
size_t plan_kernel_count(const plan_file *p);
const plan_kernel_facts *plan_kernel(const plan_file *p, size_t i);
/*! plan_fused_count() / plan_get_fused() : the generated kernels; by
 *  index from 0 (NULL out of range). */
size_t plan_fused_count(const plan_file *p);
const plan_fused *plan_get_fused(const plan_file *p, size_t i);
/*! plan_spec_count() / plan_get_spec() : the specializations (1.7);
 *  by index from 0 (NULL out of range). */
size_t plan_spec_count(const plan_file *p);
const plan_spec *plan_get_spec(const plan_file *p, size_t i);
/*! plan_split_count() / plan_get_split() : the splits (1.4); by index
 *  from 0 (NULL out of range). */
size_t plan_split_count(const plan_file *p);
const plan_split *plan_get_split(const plan_file *p, size_t i);
/*! plan_sched_count() / plan_get_sched() : the scheduled queues (1.8);
 *  by index from 0 (NULL out of range). */
size_t plan_sched_count(const plan_file *p);
const plan_sched *plan_get_sched(const plan_file *p, size_t i);
/*! plan_get_pass() : the result of pass @p pass (enabled 0 when it did not run). */
const plan_pass_result *plan_get_pass(const plan_file *p, plan_pass pass);

/*! plan_pattern_format() : a readable one-line form of canonical pattern
 *  @p pattern ("clEnqueueNDRangeKernel stats@1f2e… global [1024] local [64]
 *  args (mem#3 4096 B, bytes 00040000)") into @p dst (NUL-terminated when
 *  dst_cap > 0). @return the length it needed, like snprintf. */
int plan_pattern_format(const char *pattern, char *dst, size_t dst_cap);

/* ================================================================ building
 * What the optimizer's passes use to make a plan. */

#define PLAN_MAX_FUSED 65536u
#define PLAN_FUSED_MAX_PARAMS 128u
#define PLAN_FUSED_MAX_SOURCE ((size_t)4 << 20)

/*! plan_add_fused() : appends a copy of @p f; *id (may be NULL) gets its id. */
plan_status plan_add_fused(plan_file *p, const plan_fused *f, uint32_t *id);

#define PLAN_MAX_SPLITS 65536u
#define PLAN_SPLIT_MAX_ARGS 128u
/*! plan_add_split() : appends a copy of @p sp (its id assigned; *id may
 *  be NULL). @return PLAN_OK, PLAN_ERR_NOMEM or PLAN_ERR_LIMIT. */
plan_status plan_add_split(plan_file *p, const plan_split *sp, uint32_t *id);
#define PLAN_MAX_SPECS 65536u
/*! plan_add_spec() : appends a copy of @p z (its id and execution view
 *  `as` assigned; *id may be NULL). @return PLAN_OK, PLAN_ERR_NOMEM or
 *  PLAN_ERR_LIMIT. */
plan_status plan_add_spec(plan_file *p, const plan_spec *z, uint32_t *id);
#define PLAN_MAX_SCHEDS 65536u
/*! plan_add_sched() : appends a copy of @p s (its id assigned).
 *  @return PLAN_OK, PLAN_ERR_NOMEM or PLAN_ERR_LIMIT. */
plan_status plan_add_sched(plan_file *p, const plan_sched *s);
/*! plan_split_same() : 1 when @p a and @p b do the same thing (ids aside). */
int plan_split_same(const plan_split *a, const plan_split *b);

/*! plan_new() : an empty plan of this build's version. NULL on ENOMEM. */
plan_file *plan_new(void);
/*! plan_add_xform() : appends a copy of @p x (strings copied into the
 *  plan); the id is assigned. @return PLAN_OK or PLAN_ERR_NOMEM/LIMIT. */
plan_status plan_add_xform(plan_file *p, const plan_xform *x);
plan_status plan_add_kernel(plan_file *p, const char *name, const uint8_t program[16], unsigned nargs,
                               const uint8_t *access);
plan_status plan_add_program(plan_file *p, const uint8_t hash[16]);
plan_status plan_set_strings(plan_file *p, const char *generator, const char *trace_file);
/*! plan_info_mut() / plan_pass_mut() / plan_xform_mut() : the
 *  header, pass @p pass's result and transformation @p i (from 0; NULL out
 *  of range) of a plan being built, to fill in. */
plan_info *plan_info_mut(plan_file *p);
plan_pass_result *plan_pass_mut(plan_file *p, plan_pass pass);
plan_xform *plan_xform_mut(plan_file *p, size_t i);
/*! plan_find_kernel() : facts for kernel @p name of the program with
 *  source hash @p program, or NULL. */
const plan_kernel_facts *plan_find_kernel(const plan_file *p, const char *name, const uint8_t program[16]);

/* ================================================================ helpers */

/* ------------------------------------------------------------ arena */

/* Bump allocator: everything freed at once (plans, tracker strings). */
typedef struct plan_arena_chunk plan_arena_chunk;
typedef struct plan_arena {
    plan_arena_chunk *head;
} plan_arena;

/*! plan_arena_alloc() : @p n zeroed bytes, aligned for any object, or NULL. */
void *plan_arena_alloc(plan_arena *a, size_t n);
/*! plan_arena_strdup() : NUL-terminated copy of @p n bytes at @p s, or NULL. */
char *plan_arena_strndup(plan_arena *a, const char *s, size_t n);
void plan_arena_free(plan_arena *a);

/* ------------------------------------------------------------ id map */

/* Open addressing u64 -> pointer (key 0 is never stored: ids are non-zero). */
typedef struct plan_map {
    uint64_t *keys;
    void **vals;
    size_t n, cap;
} plan_map;

int plan_map_put(plan_map *m, uint64_t key, void *val);   /* 0, or -1 out of memory */
void *plan_map_get(const plan_map *m, uint64_t key);
void plan_map_free(plan_map *m);

/* ------------------------------------------------------------ helpers */

/*! plan_hex() : @p n bytes as lower-case hex into @p dst (2n+1 bytes). */
void plan_hex(const uint8_t *src, size_t n, char *dst);
/*! plan_unhex() : exactly 2n hex digits at @p s into @p dst. @return 0 or -1. */
int plan_unhex(const char *s, uint8_t *dst, size_t n);
/*! plan_grow() : room for @p need elements in *arr (capacity *cap). 0 or -1. */
int plan_grow(void **arr, size_t *cap, size_t need, size_t elem);
/*! plan_seterr() : formats a one-line message into (err, cap). @return st. */
plan_status plan_seterr(char *err, size_t cap, plan_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*! plan_open_trace() : opens trace @p path for reading (reader limit
 *  @p max_memory, 0 = default). @return PLAN_OK, or PLAN_ERR_TRACE with the
 *  reader's reason (without the path) in @p err. */
plan_status plan_open_trace(const char *path, size_t max_memory, tf_reader **r, char *err, size_t err_cap);

/* Trace calls. */
int plan_param(const tf_call *c, const char *name);              /* index or -1 */
const tf_value *plan_arg(const tf_call *c, const char *name);     /* input or NULL */
const tf_value *plan_out(const tf_call *c, const char *name);     /* output or NULL */
int plan_arg_u64(const tf_call *c, const char *name, uint64_t *v);   /* 1 when an integer */
/*! plan_call_ok() : 1 when @p c returned and succeeded (cl_int 0, errcode_ret
 *  0, or a non-NULL handle / pointer). */
int plan_call_ok(const tf_call *c);
/*! plan_value_hash() : the content hash of a data value (blob: its
 *  reference; bin/str: XXH3-128 of its bytes) into @p h. @return 1, or 0
 *  when @p v carries no data (nil: not captured). */
int plan_value_hash(const tf_value *v, uint8_t h[16]);

/* ================================================================ the tracker */

/* Known contents of a root: bytes [lo, hi) equal the content named by key,
 * whose first byte sits at origin (plan_hold.c). */
typedef struct plan_content {
    uint8_t key[16];          /* what the bytes are (data hash, or a fill/rect key) */
    uint64_t origin;          /* position of the content's first byte in the root */
    uint64_t lo, hi;          /* the bytes it covers, in the root */
    uint64_t seq;             /* the call that left them */
    uint64_t queue;           /* its queue */
    int settled;              /* known complete (blocking, or a creation) */
    int pending;              /* the key comes later (a DATA item of seq) */
} plan_content;

/* A kernel argument as last set. */
typedef struct plan_karg {
    uint8_t kind;             /* PLAN_KARG_* */
    uint32_t size;            /* arg_size */
    uint64_t id;              /* MEM: the object; SVM: the address */
    char *bytes;              /* BYTES: hex of the value (malloc'ed), or "xxh:<hash>" */
} plan_karg;
enum { PLAN_KARG_UNSET = 0, PLAN_KARG_MEM, PLAN_KARG_BYTES, PLAN_KARG_LOCAL, PLAN_KARG_SVM };

enum { PLAN_OBJ_OTHER = 0, PLAN_OBJ_MEM, PLAN_OBJ_QUEUE, PLAN_OBJ_PROGRAM, PLAN_OBJ_KERNEL };

typedef struct plan_obj {
    uint64_t id;
    uint8_t kind;             /* PLAN_OBJ_* */
    uint8_t image;            /* an image (its bytes have no tracked layout) */
    uint8_t visible;          /* the host can see its bytes outside the API
                                 (USE_HOST_PTR, shared with an image or a GL object, pipes) */
    uint8_t in_order;         /* queues */
    uint8_t has_src;          /* programs: src is known */
    uint8_t has_sub;          /* roots: a sub-buffer was made of it */
    uint8_t open;             /* roots: in plan_track.open (may hold a content not known
                                 complete) */
    uint8_t pend;             /* roots: in plan_track.pend (may hold a content whose key
                                 comes later) */
    uint8_t writes;           /* memory roots: commands that may have written its bytes,
                                 up to 2 (2 also: made with contents, or an unknown
                                 command ran) */
    uint32_t ordinal;         /* memory objects: creation order, from 1 */
    uint64_t size, flags;     /* memory objects (images: size 0) */
    uint64_t root, origin;    /* memory objects: the object holding the bytes, offset */
    uint8_t src[16];          /* programs: XXH3-128 of the source */
    char *name;               /* kernels: function name (malloc'ed) */
    uint64_t program;         /* kernels */
    plan_karg *args;           /* kernels: current arguments */
    unsigned nargs;
    const plan_kernel_facts *facts;   /* kernels: resolved once, NULL unknown */
    int facts_looked;
    plan_content *segs;        /* roots: byte ranges of known contents */
    unsigned nsegs, capsegs;
    char *role;               /* its role in patterns, made at first use (what it is made
                                 of is set when it is created); malloc'ed */
    uint32_t nrole;
} plan_obj;

/* What happened to a call the tracker is told about. */
typedef enum plan_fate {
    PLAN_FATE_RUN = 0,         /* executed as recorded */
    PLAN_FATE_DEAD,            /* not executed: its outputs are dead (they become unknown) */
    PLAN_FATE_REDUNDANT        /* not executed: the memory already holds its bytes */
} plan_fate;

#define PLAN_PSIG_SLOTS 256   /* signature ids: the recorder's are below 256 */

typedef struct plan_track {
    plan_map objs;             /* id -> plan_obj* */
    struct plan_psig *psig[PLAN_PSIG_SLOTS];   /* the members of each function's patterns, by
                                 signature id (plan_pattern_build.c); malloc'ed */
    plan_obj **all;            /* every object, for freeing */
    size_t nall, capall;
    plan_obj **open;           /* the roots that may hold a content not settled: all that
                                 settling looks at (a run creates and releases objects by
                                 the hundred thousand) */
    size_t nopen, capopen;
    plan_obj **pend;           /* ... a content whose key comes later: all late data look at */
    size_t npend, cappend;
    uint32_t next_ordinal;
    const plan_file *facts;    /* kernel facts (a plan), or NULL */
    /* fingerprint of the structure (plan_track_call with fp on) */
    int fp_on;
    uint64_t fp_state;
    uint64_t fp_calls, calls;
} plan_track;

/*! plan_track_init() : an empty tracker using the kernel facts of @p facts
 *  (may be NULL: every launch writes every memory argument). */
void plan_track_init(plan_track *t, const plan_file *facts);
void plan_track_free(plan_track *t);

/*! plan_droppable() : 1 when function @p fn is one a plan may drop
 *  (launches, writes, fills, copies). */
int plan_droppable(const char *fn);

/*! plan_track_pattern() : the pattern of call @p c (made before the call is
 *  applied: kernel arguments as set): *canon (malloc'ed) and *key. @p shape:
 *  leave out scalar values (the fingerprint's form). @return PLAN_OK or an
 *  error. */
plan_status plan_track_pattern(plan_track *t, const tf_call *c, int shape, char **canon, uint64_t *key);

/*! plan_track_redundant() : for a write or fill @p c about to run, 1 when
 *  the memory it writes already holds exactly its bytes (set *holds_seq to
 *  the call that left them), else 0. */
int plan_track_redundant(plan_track *t, const tf_call *c, uint64_t *holds_seq);

/*! plan_track_call() : applies call @p c with fate @p fate: objects,
 *  kernel arguments, known contents, fingerprint. Calls that failed when
 *  recorded change nothing. @return PLAN_OK or PLAN_ERR_NOMEM. */
plan_status plan_track_call(plan_track *t, const tf_call *c, plan_fate fate);
/*! plan_track_karg() : argument @p idx of kernel @p kid is now @p v (@p size
 *  bytes; @p svm: clSetKernelArgSVMPointer's pointer), as a successful
 *  clSetKernelArg(SVMPointer) call sets it. */
plan_status plan_track_karg(plan_track *t, uint64_t kid, uint64_t idx, uint64_t size, const tf_value *v, int svm);
/*! plan_track_enqueue() : the memory effects of enqueue @p c (plan_track_mem.c). */
plan_status plan_track_enqueue(plan_track *t, const tf_call *c, const char *fn, plan_fate fate);
/*! plan_track_access() : how kernel @p k accesses argument @p arg
 *  (PLAN_ACC_*; PLAN_ACC_UNKNOWN without kernel facts). */
uint8_t plan_track_access(plan_track *t, plan_obj *k, unsigned arg);
/*! plan_track_data() : a DATA item (late read-back bytes). */
void plan_track_data(plan_track *t, const tf_data *d);

/*! plan_track_fingerprint() : the fingerprint so far (fp_on). */
uint64_t plan_track_fingerprint(const plan_track *t);

/*! plan_track_obj() : the tracked object @p id, or NULL. */
plan_obj *plan_track_obj(const plan_track *t, uint64_t id);

/*! plan_track_fresh_once() : 1 when memory object @p id is a buffer of its
 *  own (no sub-buffers, not visible to the host, made without contents)
 *  that at most one command may have written since it was made. */
int plan_track_fresh_once(plan_track *t, uint64_t id);

/*! plan_occurrence_next() : the next occurrence (from 0) of pattern @p key in
 *  @p occ (plan_util.c; the passes and the matcher count the same way). */
uint64_t plan_occurrence_next(plan_map *occ, uint64_t key, int *nomem);
/*! plan_occurrence_count() : how many calls with pattern @p key @p occ has seen. */
uint64_t plan_occurrence_count(const plan_map *occ, uint64_t key);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_PLAN_H */
