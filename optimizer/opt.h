/* opt.h — the clrr optimizer: passes over a trace that produce a plan, the
 * plan file (reader and writer), and the matcher that applies a plan to a
 * run of the application's calls (a replay today, the live layer later).
 *
 * Three parts, one header:
 *
 *  1. Plans. A plan (optimizer/PLAN.md, format "clrr-plan" 1.0, JSON) says
 *     what to change in which recorded calls, each change with a pattern
 *     that names the call without sequence numbers or pointers (function,
 *     kernel name and program source hash, launch shape, argument roles and
 *     scalar values), its expected effect and how it is verified. The
 *     reader treats every plan as untrusted input: strict types, every
 *     count and size checked, bounded memory, one-line errors.
 *  2. Passes (opt_optimize): dead command elimination and redundant
 *     transfer elimination, on the analyzer's model of the trace
 *     (analyzer/ana.h) and one more stream of the trace for data hashes.
 *  3. Execution (opt_exec): fed every call of a run in order, decides which
 *     ones the plan drops, after checking each against its pattern and, for
 *     redundant transfers, that the memory really holds the bytes.
 *
 * Error convention: functions returning opt_status return OPT_OK (0) or a
 * negative OPT_ERR_*; those that take (err, err_cap) write a one-line
 * reason there. Nothing here is thread-safe; use one object per thread.
 */
#ifndef CLRR_OPT_H
#define CLRR_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
#define OPT_PLAN_MINOR 8

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
} opt_plan_info;

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

/* ================================================================ optimize */

/* What the partitioner decided for a launch (opt_options.on_partition). */
typedef struct opt_partition_info {
    const char *kernel;
    uint64_t seq;             /* the first launch of its kind */
    unsigned dim;             /* the dimension split */
    uint64_t slices;          /* work-groups along it */
    unsigned ndevs;
    const char *const *devices;   /* the split list's specs */
    const uint64_t *count;    /* per device: its work-groups (0: not used) */
    const char *verdict;      /* "split", "device" (all on one other device), "whole"
                                 (the queue's device alone; not split), or "even" (the
                                 costs do not cover the launch: even shares; why says) */
    const char *why;          /* "even": why ("no costs for this launch on gpu1 ...") */
    double predicted_ns;      /* the launch, as decided */
    double alone_ns;          /* the queue's device alone */
    double best_single_ns;    /* the fastest single device (transfers included) */
    unsigned best_single;     /* ... its index in devices */
    double solve_ns;          /* what the partitioner took */
} opt_partition_info;

typedef struct opt_options {
    unsigned passes;          /* bit mask of opt_pass; 0 = none */
    const char *trace_name;   /* recorded in the plan; NULL: the path */
    size_t max_memory;        /* the reader's limit; 0 = its default */
    const char *split;        /* split pass: "SPEC[:WEIGHT],SPEC[:WEIGHT],..." (devices as
                                 `clrr devices` names them, relative shares of the
                                 work-groups); NULL: the pass does not run */
    const char *split_kernel; /* split only launches of this kernel; NULL: every one */
    char *note;               /* when not NULL: why the first launch the split pass left
                                 alone was left alone ("" when none), note_cap bytes */
    size_t note_cap;
    struct cdb *costs;        /* split pass: measured costs (costs/cdb.h); with a list
                                 without weights, the partitioner picks each launch's
                                 devices and shares from them; NULL: even shares */
    const char *device;       /* the device the queues will run on (a spec); NULL: the
                                 first of the split list */
    /* Called once per distinct launch (program, kernel, shape) the
     * partitioner decided; may be NULL. */
    void (*on_partition)(void *user, const opt_partition_info *info);
    void *user;
    int horizontal;           /* fuse pass: also group independent launches that read the
                                 same memory (off by default: on an H100 the live run's
                                 holding of the launches costs more than it saves on
                                 exposure's element-wise kernels) */
    char *rw_note;            /* when not NULL: the first fusion and the first specialization
                                 the rewriter refused, and why ("" when none), rw_note_cap
                                 bytes */
    size_t rw_note_cap;
} opt_options;

/*! opt_optimize() : reads trace @p path, runs the passes of @p o and
 *  builds the plan (*out, caller frees). The kernel analysis runs when it
 *  is available (without it, launches count as reading and writing their
 *  memory arguments in full). @return OPT_OK; OPT_ERR_TRACE with one line
 *  in @p err; OPT_ERR_NOMEM. */
opt_status opt_optimize(const char *path, const opt_options *o, opt_plan **out, char *err, size_t err_cap);

/* ================================================================ execute */

typedef struct tf_item tf_item;   /* trace-format/tf.h */
typedef struct tf_call tf_call;
typedef struct tf_value tf_value;
typedef struct opt_exec opt_exec;

/* What opt_exec_item() says about a call. */
#define OPT_RUN 0             /* execute it as recorded */
#define OPT_DROP 1            /* do not execute it (signal its event with a marker) */
#define OPT_HOLD 2            /* a producer launch: keep it (its kernel's arguments as
                                 set now); run it as recorded before any call but
                                 clSetKernelArg, unless the next launch is OPT_FUSE */
#define OPT_FUSE 3            /* run opt_exec_fused() instead, with the held launches; a
                                 specialized kernel (1.7) is a fused kernel of one launch
                                 (launches 1), answered with none held */
#define OPT_SPLIT 5           /* run opt_exec_split() instead: the launch in parts */
#define OPT_LINK 6            /* a launch of a chain (plan 1.5) after the held ones: hold
                                 it too, after them (they do not run first) */
#define OPT_DEFER 4           /* live runs: do not execute it now; keep it (its arguments,
                                 data and objects as they are now) until the matcher says
                                 to run it (opt_live_answer.force) or to free it */

/*! opt_exec_open() : prepares to apply @p p (which must outlive the
 *  matcher) to the calls of trace @p path, which it streams once to
 *  compute its fingerprint: a plan made from a trace of another structure
 *  applies only the transformations whose safety is checked as the calls
 *  run (redundant transfers), the others fall back. @return OPT_OK;
 *  OPT_ERR_TRACE (message in @p err); OPT_ERR_NOMEM. */
opt_status opt_exec_open(const opt_plan *p, const char *path, size_t max_memory, opt_exec **out, char *err,
                         size_t err_cap);
/*! opt_exec_item() : the next item of the run (calls and late data, in
 *  trace order, each once per execution). @return OPT_RUN or OPT_DROP for a
 *  call that is about to execute, OPT_RUN for other items, or
 *  OPT_ERR_NOMEM. A call that was dropped is not executed by the caller. */
int opt_exec_item(opt_exec *x, const tf_item *it);
/*! opt_exec_fused() : the fused kernel of the last OPT_FUSE answer. */
const opt_fused *opt_exec_fused(const opt_exec *x);
/*! opt_exec_split() : the split of the last OPT_SPLIT answer. */
const opt_split *opt_exec_split(const opt_exec *x);
/*! opt_exec_lanes() : the lanes (2 or 3) the plan's schedule (1.8) gives
 *  the @p queue-th command queue created (from 0); 0 when none. */
unsigned opt_exec_lanes(const opt_exec *x, uint64_t queue);
struct rpl_split;
/*! opt_exec_split_rpl() : the same split in the split engine's terms
 * (replayer/rpl.h), valid until the next call or opt_exec_close. 0, or -1
 * (no split, too many parts, out of memory). */
int opt_exec_split_rpl(opt_exec *x, struct rpl_split *out);
/*! opt_exec_split_conv() : likewise for split @p z of the plan. */
int opt_exec_split_conv(opt_exec *x, const opt_split *z, struct rpl_split *out);
/*! opt_exec_split_of() : likewise for the @p i-th split of the plan made
 * from the program whose source hashes to @p program; -1 when none. */
int opt_exec_split_of(opt_exec *x, const uint8_t program[16], size_t i, struct rpl_split *out);
/*! opt_exec_rewind() : the run starts over (replay --loop): occurrences
 *  are counted from the start again; memory contents stay tracked. */
void opt_exec_rewind(opt_exec *x);

/* ---------------------------------------------------------------- live
 *
 * A live run (`clrr run --plan`, the layer in plan mode) cannot know what
 * the application will do next, so work the plan says is dead is deferred,
 * not dropped: the layer keeps the command, and the matcher, which sees
 * every later call before it runs, says to run it first when that call may
 * read what it writes or overwrite what it reads (a buffer the plan
 * thought dead is read after all), and to free it when what it writes is
 * overwritten in full or released. The same holds for the producer launch
 * of a fusion that does not store the intermediate buffer. So a live run
 * needs no fingerprint: every transformation is safe whatever the run
 * does, and the run is as correct as without a plan. */

/* The matcher's answer for a call about to run. */
typedef struct opt_live_answer {
    int verdict;              /* OPT_RUN, OPT_DROP, OPT_DEFER, OPT_HOLD, OPT_LINK, OPT_FUSE, OPT_SPLIT */
    const uint64_t *force;    /* kept calls (their seqs) to run before this one, in order */
    size_t nforce;
    const uint64_t *discard;  /* kept calls to free without running them */
    size_t ndiscard;
    uint32_t keep_held;       /* OPT_FUSE whose fused kernel does not store the intermediate
                                 buffers: bit i set, held launch i (in order) becomes a kept
                                 call; the others are freed (their output was released while
                                 they were held, or the kernel stores it) */
    uint32_t nfresh;          /* OPT_FUSE: the fused kernel's parameters (fresh[i], from 0) that
                                 may take any buffer of at least fresh_size bytes that nothing
                                 has written (the layer's own) instead of an intermediate
                                 buffer. Each intermediate was made without contents and only
                                 its held producer may have written it, so the elements the
                                 fused kernel loads from it (those the producer did not store)
                                 hold what a never-written buffer holds, and a new buffer need
                                 not be allocated for the launch */
    uint8_t fresh[OPT_CHAIN_MAX];
    uint64_t fresh_size;
} opt_live_answer;

/*! opt_exec_open_live() : prepares to apply @p p (which must outlive the
 *  matcher) to a live run. @return OPT_OK or OPT_ERR_NOMEM. */
opt_status opt_exec_open_live(const opt_plan *p, opt_exec **out, char *err, size_t err_cap);
/*! opt_exec_begin() : a live call about to run (a TF_ITEM_BEGIN of
 *  tf_reader_feed: its inputs); fills *a (valid until the next call of
 *  the matcher). The caller runs a->force in order, frees a->discard, then
 *  acts on the verdict; the call's END (and DATA items) then go to
 *  opt_exec_item(). @return OPT_OK or OPT_ERR_NOMEM. */
opt_status opt_exec_begin(opt_exec *x, const tf_call *c, opt_live_answer *a);
/*! opt_exec_karg() : a live run's successful clSetKernelArg, handed over
 *  as its values instead of as a call (plan mode neither encodes nor
 *  decodes these: most calls of a launch-heavy application are kernel
 *  arguments): argument @p index of kernel @p kernel (id) is @p size bytes,
 *  @p value as the recorder records it (TF_UINT: the id of a memory
 *  object, sampler or queue; TF_BIN of at most 64 bytes, else TF_BLOB with
 *  the bytes' hash; TF_NIL for __local). The same as the call through
 *  opt_exec_begin() and opt_exec_item(). @return OPT_OK or OPT_ERR_NOMEM. */
opt_status opt_exec_karg(opt_exec *x, uint64_t kernel, uint32_t index, uint64_t size, const tf_value *value);
/*! opt_exec_released() : the application released its last reference to
 *  memory object @p id: kept calls that write only it are freed (a->discard). */
void opt_exec_released(opt_exec *x, uint64_t id, opt_live_answer *a);
/*! opt_exec_live_end() : the run ends: every kept call is freed (a->discard). */
void opt_exec_live_end(opt_exec *x, opt_live_answer *a);
/*! opt_exec_unkept() : the caller could not keep call @p seq (it ran it
 *  as recorded instead). */
void opt_exec_unkept(opt_exec *x, uint64_t seq);

typedef struct opt_exec_stats {
    int same_trace;           /* the trace's fingerprint is the plan's */
    uint64_t fingerprint;     /* of the trace being run */
    uint64_t transformations; /* in the plan */
    uint64_t applied;         /* transformations applied (at least once) */
    uint64_t fell_back;       /* matched a call but ran it unoptimized */
    uint64_t unmatched;       /* never met a call with their pattern */
    uint64_t drops;           /* calls dropped (all loop iterations) */
    uint64_t fusions;         /* fused launches (all loop iterations) */
    uint64_t splits;          /* split launches (all loop iterations) */
    uint64_t specs;           /* specialized launches (all loop iterations; answered as OPT_FUSE) */
    uint64_t kept;            /* live: calls deferred (dead work, unstored producers) */
    uint64_t forced;          /* ... of which run after all, because something read their results */
    uint64_t freed;           /* ... of which freed unrun (overwritten, released, or at the end) */
    uint64_t steady;          /* live: calls past the recording's last transformed occurrence
                                 of their pattern, given that transformation (a longer run) */
    opt_effect effect;        /* recorded effect of the applied ones */
} opt_exec_stats;

/*! opt_exec_get_stats() : counts so far (unmatched: known at the end). */
void opt_exec_get_stats(const opt_exec *x, opt_exec_stats *out);

typedef struct opt_fallback {
    uint32_t xform;           /* transformation id */
    uint64_t seq;             /* the call it met (0: none) */
    const char *reason;       /* static */
} opt_fallback;

/*! opt_exec_fallback_count() / opt_exec_fallback() : the first fallbacks
 *  (at most 64 are kept; unmatched transformations come last, listed at
 *  the end of the run). Valid until the next opt_exec_item(). */
size_t opt_exec_fallback_count(opt_exec *x);
const opt_fallback *opt_exec_fallback(opt_exec *x, size_t i);

/*! opt_exec_close() : accepts NULL. */
void opt_exec_close(opt_exec *x);

/*! opt_trace_fingerprint() : the structure fingerprint of trace @p path
 *  (PLAN.md, "Fingerprint"): the same for runs of one program that differ
 *  only in data. @return OPT_OK or OPT_ERR_TRACE / OPT_ERR_NOMEM. */
opt_status opt_trace_fingerprint(const char *path, size_t max_memory, uint64_t *fp, uint64_t *calls, char *err,
                                 size_t err_cap);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_OPT_H */
