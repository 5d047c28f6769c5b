/* opt.h — the clrr optimizer: passes over a trace that produce a plan
 * (plan/plan.h, plan/PLAN.md).
 *
 * Passes (opt_optimize): dead command elimination, redundant transfer
 * elimination, fusion, splitting over devices, specialization and
 * scheduling, on the analyzer's model of the trace (analyzer/ana.h) and
 * one more stream of the trace for data hashes. Applying a plan to a run
 * is live/live.h's (the matcher).
 *
 * Error convention: plan/plan.h's (plan_status). Nothing here is
 * thread-safe; use one object per thread.
 */
#ifndef CLRR_OPT_H
#define CLRR_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plan/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

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
                                 costs do not cover the launch: even shares; why says), or
                                 "model" (not covered: the device-selection model picked
                                 devices[best_single] for the whole launch; why says) */
    const char *why;          /* "even": why ("no costs for this launch on gpu1 ...") */
    double predicted_ns;      /* the launch, as decided */
    double alone_ns;          /* the queue's device alone */
    double best_single_ns;    /* the fastest single device (transfers included) */
    unsigned best_single;     /* ... its index in devices */
    double solve_ns;          /* what the partitioner took */
} opt_partition_info;

typedef struct opt_options {
    unsigned passes;          /* bit mask of plan_pass; 0 = none */
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
    /* Calls (by sequence number, sorted ascending) that no pass may change:
     * they run as recorded, and a fused group, split or specialization
     * that would take one of them is not made for it (what a plan's
     * verification removes, `clrr optimize`); NULL: none. */
    const uint64_t *keep;
    size_t nkeep;
    char *limit_note;         /* when not NULL: set (if still "") to one line when a pass was
                                 left out because its plan would pass the reader's limits
                                 (PLAN_MAX_BYTES, PLAN_MAX_XFORMS); the caller clears it;
                                 limit_note_cap bytes */
    size_t limit_note_cap;
    int no_repeat;            /* write every drop on its own (plan 1.11 repeat unused), and
                                 skip the limits: the verifier lists the calls of a pass so */
    struct model *model;      /* split pass with costs: the device-selection model
                                 (model/model.h) for launches the costs do not cover:
                                 all their work-groups on the device it picks (verdict
                                 "model"); NULL: those launches run as recorded */
} opt_options;

/*! opt_optimize() : reads trace @p path, runs the passes of @p o and
 *  builds the plan (*out, caller frees). The kernel analysis runs when it
 *  is available (without it, launches count as reading and writing their
 *  memory arguments in full). A plan that would be over the reader's
 *  limits (file size, transformations) is made again without the pass with
 *  the most transformations, until it is not (o->limit_note says which):
 *  it never returns a plan clrr would refuse to read. @return PLAN_OK; PLAN_ERR_TRACE with one line
 *  in @p err; PLAN_ERR_NOMEM. */
plan_status opt_optimize(const char *path, const opt_options *o, plan_file **out, char *err, size_t err_cap);

/* ================================================================ verified plans */

/* How opt_optimize_verified() replays a candidate plan: the caller's
 * replayer (the optimizer does not link one). */
/* What the last replay of opt_verify moved (opt_verify.replay_info): its
 * buffer writes and blocking reads of at least min_bytes (those a staging
 * would take) and the device of the first one's queue. */
typedef struct opt_replay_info {
    uint64_t min_bytes, transfers, bytes;
    char device[257], driver[257];   /* CL_DEVICE_NAME, CL_DRIVER_VERSION; "" when none */
    int unified;              /* CL_DEVICE_HOST_UNIFIED_MEMORY */
} opt_replay_info;
#define OPT_STAGE_OFF 0
#define OPT_STAGE_AUTO 1      /* devices without host-unified memory */
#define OPT_STAGE_ALL 2
#define OPT_STAGE_DEFAULT 3   /* auto, not asked for: no line where it is not tried */

typedef struct opt_verify {
    /* Replays the trace with plan @p p (owned by the caller of the hook,
     * valid during the call). @return 0 every read-back matched the
     * recording, 1 some mismatched, 2 some mismatched on a device other
     * than the recorded one (one line in err says which), -1 the replay
     * could not run here (one line in err). Called on the caller's thread. */
    int (*replay)(void *user, const plan_file *p, char *err, size_t err_cap);
    /* One line per group of transformations removed (static line, valid
     * during the call); may be NULL. */
    void (*on_removed)(void *user, const char *line);
    void *user;
    unsigned max_replays;     /* the search's bound (the first replay included) */
    /* May be NULL. Replays the trace with @p p, verified, and gives the
     * time its OpenCL calls took (*ns). @return 0, or nonzero when the
     * replay did not run or mismatched (one line in err): the passes are
     * then not measured. */
    int (*time)(void *user, const plan_file *p, double *ns, char *err, size_t err_cap);
    unsigned reps;            /* timed replays per plan (3..OPT_VERIFY_MAX_REPS) */
    /* With time: when the measuring must end (CLOCK_MONOTONIC seconds, as
     * opt_now() gives; 0: unbounded). Each stage (the passes' timings, the
     * tuning, the final check) gets what is left, the final check's timed
     * replays reserved first; a stage that cannot run its minimum (3
     * alternated pairs of whole replays, as long as the replays took so
     * far) within it stops, and what it would have measured is removed
     * ("not measured within --budget"). */
    double end_s;
    /* May be NULL. Called once the plan is verified (and, with time, its
     * passes measured), before the final check: adds to *p what the
     * caller measures itself (`clrr optimize --tune`: opt_tune_plan),
     * within @p budget_s seconds (with end_s: what is left less the final
     * check's reserve and one replay; never called with less than 1 s: one
     * line says it did not run). @return PLAN_OK, or an error that ends
     * opt_optimize_verified (one line in err). */
    plan_status (*after)(void *user, plan_file *p, double budget_s, char *err, size_t err_cap);
    double after_budget_s;    /* without end_s: the budget after gets */
    /* May be NULL. Before each timed replay: the stage (a pass's name, or
     * "final"), the replay's number from 1 of @p total, the seconds left
     * of end_s (-1: unbounded), for a progress line. */
    void (*on_stage)(void *user, const char *stage, unsigned done, unsigned total, double left_s);
    /* With time and replay_info: after the final check, a staging decision
     * (plan 1.13, PLAN.md "Staging") for the device of the trace's large
     * transfers, OPT_STAGE_AUTO where it has no host-unified memory,
     * OPT_STAGE_ALL on any: the plan with it timed against the plan without
     * it (alternated pairs, as a pass), kept only when faster beyond the
     * noise, its medians and pairs in the decision; measured and not
     * kept, the same in `unstaged` (1.14: a live run does not stage there
     * by the layer's rule). OPT_STAGE_OFF: none. */
    int stage;
    /* The last replay's large transfers (may be NULL: no staging). */
    void (*replay_info)(void *user, opt_replay_info *out);
} opt_verify;

/*! opt_now() : CLOCK_MONOTONIC in seconds (for opt_verify.end_s). Thread-safe. */
double opt_now(void);
#define OPT_VERIFY_MAX_REPS 15

typedef struct opt_verify_result {
    unsigned replays;         /* replays run (the first included) */
    uint64_t removed;         /* transformations (or whole passes) removed */
    unsigned slower;          /* passes removed because they were not measured faster */
    unsigned timed;           /* timed replays (opt_verify.time) */
    int baseline;             /* the trace mismatches here even without a plan: the
                                 plan has no transformation */
    int unverified;           /* the replay could not run here, or the trace was
                                 recorded on another device and mismatches here
                                 even without a plan: the plan is opt_optimize()'s,
                                 not verified; why says why */
    char why[256];
    double gain_ns;           /* with opt_verify.time: what the passes kept gained, measured
                                 (the medians without each less with it, summed) */
    int measured;             /* the passes were measured (opt_verify.time ran) */
    double pass_gain_ns[PLAN_PASS_COUNT];   /* per pass kept: its measured gain (median
                                 without it less with it) */
    unsigned unmeasured;      /* passes removed because their timing could not run (a timed
                                 replay mismatched or failed) or did not fit in end_s */
    double replay_s;          /* the budget's unit: a replay without the plan once the programs were
                                 built (the first replay builds them cold), or the longest
                                 since (s) */
    int final_checked;        /* the final check measured the whole plan against no plan */
    int final_kept;           /* ... and kept it (what is left of it), faster beyond the noise */
    double final_gain_ns;     /* ... its measured gain (median without less with the plan) */
    unsigned final_removed;   /* classes (a pass, or the tuning's local sizes and coarsenings)
                                 the final check removed, or every one when it emptied the plan */
    int final_empty;          /* the final check emptied the plan (not faster, not measured,
                                 or not within end_s) */
    int stage_timed;          /* a staging decision was timed (opt_verify.stage) */
    int stage_kept;           /* ... and kept */
    double stage_gain_ns;     /* ... its measured gain (median without less with it) */
} opt_verify_result;

/*! opt_optimize_verified() : opt_optimize(), then @p v's replay of the
 *  trace with the plan; when it mismatches, the transformations that make
 *  it mismatch are found (each pass alone, then bisection over the calls
 *  of a pass that mismatches alone, then passes left out from the last
 *  until the whole verifies; optimizer/README.md) and their calls run as
 *  recorded, so *out (caller frees) replays verified here. At most
 *  v->max_replays replays: a group still in doubt when they run out is
 *  removed whole. A trace that mismatches without a plan gets a plan with
 *  no transformation (on another device than recorded: the unverified
 *  plan, res->unverified). @return as opt_optimize(); PLAN_ERR_TRACE when a
 *  later replay fails to run (one line in @p err). With v->time, each
 *  pass of the verified plan is then kept only where the replay with it
 *  is measured faster than without it beyond the noise (one line per pass
 *  through v->on_removed); a pass whose timing cannot run (a timed replay
 *  mismatches or fails, or v->end_s leaves no time for it) is removed with
 *  the passes not yet measured: nothing of a measured plan is kept unless
 *  measured. Then v->after, and, with v->time, the final check: the whole
 *  plan against no plan, alternated (the same noise rule); when it is not
 *  faster beyond the noise, the class (a pass, or the tuning's local sizes
 *  and coarsenings) of least measured gain is removed and the check runs
 *  again, until one class is left: not faster, the plan loses every
 *  transformation. A final check that cannot be timed (a timed replay
 *  mismatched, or not within v->end_s) empties the plan too. One line per
 *  decision through v->on_removed. */
plan_status opt_optimize_verified(const char *path, const opt_options *o, const opt_verify *v, plan_file **out,
                                  opt_verify_result *res, char *err, size_t err_cap);

/* ================================================================ never slower live */

/* What opt_live_check decided (optimizer/opt_verify.c). */
typedef struct opt_live_result {
    int checked;              /* the plan's gain was measured, so it was weighed */
    int dropped;              /* every transformation removed: the layer would cost more */
    double gain_ns;           /* the measured gain of the plan's transformations */
    double cost_ns;           /* what the layer costs a run of the trace (calls x per call + per run) */
    uint64_t calls;           /* the trace's calls */
    unsigned layer_runs;      /* `l` records the cost is the median of (0: the defaults) */
} opt_live_result;
#define OPT_LIVE_MARGIN 1.5   /* the gain must exceed the layer's cost this many times over */

/*! opt_live_check() : weighs plan *p of trace @p path against what
 *  applying it live costs (`clrr run --plan` loads the layer only when
 *  something of the plan applies; the layer then costs every call of the
 *  run and its set-up: cdb_get_layer of @p costs, NULL for the defaults).
 *  The plan's gain is what was measured: its parts, @p vr's passes
 *  (vr->gain_ns, when vr->measured) plus its tuned local sizes (before less
 *  after, times the launches of their shape), or the final check's
 *  whole-plan gain (vr->final_gain_ns, when vr->final_checked) where that
 *  is smaller. When that gain is not above OPT_LIVE_MARGIN
 *  times the cost, every transformation is removed (*p replaced by the
 *  plan of @p o with no pass, o's passes listed) and one line goes to
 *  @p say. Plans whose passes were not measured (no vr->measured) and that
 *  tuned nothing are left as they are (res->checked 0). @return PLAN_OK,
 *  or opt_optimize()'s error. */
plan_status opt_live_check(const char *path, const opt_options *o, const opt_verify_result *vr, const struct cdb *costs,
                           void (*say)(void *user, const char *line), void *user, plan_file **p,
                           opt_live_result *res, char *err, size_t err_cap);

/* ================================================================ work-group sizes */

/* The wgsize pass (opt_wg.c, `clrr optimize --tune`): for every distinct
 * launch shape (kernel, program, global size, recorded local size) that
 * no other pass of the plan took, the local sizes legal there are measured
 * by replaying the shape's first launch with its recorded inputs, and the
 * fastest one that wins beyond the noise and leaves every memory argument
 * bit-identical to the recorded local size's run becomes a local_size
 * transformation (plan 1.10). The measuring is the caller's (the optimizer
 * links no replayer): the hooks below. */

/* What a launch may use on the device that runs it (from the replayer's
 * rpl_tune_limits). */
typedef struct opt_wg_limits {
    unsigned dim;             /* 1..3 */
    uint64_t global[3];
    int has_local;            /* the recording gave a local size */
    uint64_t local[3];
    uint64_t dev_max_wg;      /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    uint64_t dev_max_items[3];   /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
    uint64_t kernel_wg;       /* CL_KERNEL_WORK_GROUP_SIZE */
    uint64_t pref_multiple;   /* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE (0: unknown) */
    uint64_t reqd[3];         /* reqd_work_group_size (0,0,0: none) */
    int hashable;             /* every memory argument is a buffer */
    char device[256], driver[128];   /* CL_DEVICE_NAME, CL_DRIVER_VERSION */
    char identity[512];       /* the device in the cost database (cdb_identity) */
} opt_wg_limits;

/* Search modes (as ARM Compute Library's CLTuner): how many candidates. */
typedef enum opt_tune_mode { OPT_TUNE_RAPID = 0, OPT_TUNE_NORMAL = 1, OPT_TUNE_EXHAUSTIVE = 2 } opt_tune_mode;
#define OPT_TUNE_RAPID_MAX 6u
#define OPT_TUNE_NORMAL_MAX 16u
#define OPT_TUNE_EXHAUSTIVE_MAX 128u

/*! opt_tune_mode_parse() : "rapid", "normal" or "exhaustive". @return 0, or
 *  -1 for another string. */
int opt_tune_mode_parse(const char *s, opt_tune_mode *m);

/*! opt_wg_candidates() : the local sizes the search measures for launch
 *  limits @p l in mode @p mode, at most @p cap rows into @p out (dim
 *  entries each, 1 beyond): per dimension the powers of two, the preferred
 *  multiple and the global size that divide the global size and fit the
 *  device's item sizes; the product within the device's and the kernel's
 *  work-group size (and PLAN_LOCAL_MAX_ITEMS); the recorded local size
 *  left out (it is the baseline); the mode's best-ranked first (work-groups
 *  of 64 to 256 work-items, the widest first dimension). None for a kernel
 *  with reqd_work_group_size. @return the number of rows. Thread-safe. */
unsigned opt_wg_candidates(const opt_wg_limits *l, opt_tune_mode mode, uint64_t (*out)[3], unsigned cap);

/* A coarsening candidate (rewriter/rw.h rw_coarsen): the program with the
 * coarsened kernel `name`, run with the launch's arguments over its global
 * size divided by `factor` in dimension `dim`, with local size `local`
 * (has_local 0: the driver's). */
typedef struct opt_coarse_cand {
    const char *source;       /* NUL-terminated */
    size_t len;
    const char *options;
    const char *name;
    unsigned dim, factor, form;
    int has_local;
    uint64_t local[3];
} opt_coarse_cand;

/* In opt_tune.force_factor: force the vector form of coarsening. */
#define OPT_TUNE_FORCE_VECTOR 0x100u

typedef struct opt_tune {
    opt_tune_mode mode;
    double budget_s;          /* the search's time bound, in seconds (> 0) */
    unsigned reps;            /* timed runs per candidate (5..OPT_VERIFY_MAX_REPS) */
    /* Launch @p seq's limits on the device the replay runs on. @return 0,
     * or -1 with one line in err (the shape is skipped). */
    int (*probe)(void *user, uint64_t seq, opt_wg_limits *out, char *err, size_t err_cap);
    /* Launch @p seq run with each of the @p n local sizes @p cands (row 0:
     * {0}: the recorded one), alternated, @p reps timed runs each:
     * ns[r * n + i] device nanoseconds (-1 unknown). @return 0 or -1 (err). */
    int (*time)(void *user, uint64_t seq, const uint64_t (*cands)[3], unsigned n, unsigned reps, int64_t *ns,
                char *err, size_t err_cap);
    /* Launch @p seq run once with local size @p lsz (NULL: the recorded
     * one): XXH3-128 of its memory arguments afterwards. @return 0, or -1
     * (err). */
    int (*hash)(void *user, uint64_t seq, const uint64_t *lsz, uint8_t h[16], char *err, size_t err_cap);
    /* The whole trace replayed with plan @p p, verified, as opt_verify's
     * replay (0 verified). May be NULL (not replayed). */
    int (*replay)(void *user, const plan_file *p, char *err, size_t err_cap);
    /* One line per shape measured or left alone; may be NULL. */
    void (*on_line)(void *user, const char *line);
    /* Progress: @p done of @p total shapes, @p elapsed seconds; may be NULL. */
    void (*on_progress)(void *user, unsigned done, unsigned total, double elapsed);
    void *user;
    struct cdb *costs;        /* when not NULL: each tuned shape is added (cdb_add_tuned; the
                                 caller flushes) */
    /* Coarsening (1.12; NULL: not searched). Launch @p seq run once as
     * coarsened kernel @p c: XXH3-128 of its memory arguments afterwards,
     * as hash's. @return 0 or -1 (err). */
    int (*co_hash)(void *user, uint64_t seq, const opt_coarse_cand *c, uint8_t h[16], char *err,
                   size_t err_cap);
    /* Launch @p seq run as recorded (i = 0) and as @p c (i = 1),
     * alternated, @p reps timed runs each: ns[r * 2 + i]. @return 0 or -1. */
    int (*co_time)(void *user, uint64_t seq, const opt_coarse_cand *c, unsigned reps, int64_t *ns,
                   char *err, size_t err_cap);
    unsigned force_factor;    /* testing (--tune-force=coarsen:F): only factor F along dimension 0
                                 is tried, and kept where its outputs are identical, faster or not;
                                 F | OPT_TUNE_FORCE_VECTOR (--tune-force=vector:F): the vector form */
} opt_tune;



typedef struct opt_tune_result {
    unsigned shapes;          /* distinct launch shapes of the trace */
    unsigned taken;           /* ... that another pass of the plan took (not tuned) */
    unsigned measured;        /* ... measured */
    unsigned tuned;           /* ... given a local_size transformation */
    unsigned differ;          /* ... whose fastest local size changed the outputs (kept) */
    unsigned skipped;         /* ... not measured: reqd_work_group_size, images, no candidate,
                                 could not run */
    unsigned left;            /* ... not measured: out of budget */
    int removed;              /* the plan with them did not replay verified: all removed */
    unsigned recorded;        /* tuned shapes added to opt_tune.costs */
    unsigned coarsened;       /* ... given a coarsen transformation (1.12) */
    unsigned co_measured;     /* ... whose coarsenings were measured */
    unsigned co_differ;       /* ... where a coarsening changed the outputs (not kept) */
    unsigned co_refused;      /* ... where the rewriter refused every coarsening (why: on_line) */
    double seconds;           /* the search took */
} opt_tune_result;

/*! opt_coarsen_regenerate() : for `clrr plan verify`: for each coarsened
 *  kernel of @p want (1.12), the rewriter's coarsening of the same kernel
 *  (its program found by source hash in trace @p path; the same
 *  dimension, factor, form and name), added to @p got, which
 *  plan_compare_generated() then compares. One the trace has no source
 *  for, or that the rewriter refuses, is not added (the comparison names
 *  it). @return PLAN_OK; PLAN_ERR_TRACE (one line in @p err);
 *  PLAN_ERR_NOMEM. */
plan_status opt_coarsen_regenerate(const char *path, size_t max_memory, const plan_file *want, plan_file *got,
                                   char *err, size_t err_cap);

/*! opt_tune_plan() : the wgsize pass over trace @p path, adding its
 *  transformations and tuned shapes to @p p (made by opt_optimize*; launches
 *  it transformed are left alone) and enabling the pass. With t->replay,
 *  the plan is replayed once more at the end and, when it does not verify,
 *  loses every local_size (res->removed). @return PLAN_OK; PLAN_ERR_TRACE
 *  (one line in @p err); PLAN_ERR_NOMEM. */
plan_status opt_tune_plan(const char *path, plan_file *p, const opt_tune *t, size_t max_memory, opt_tune_result *res,
                          char *err, size_t err_cap);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_OPT_H */
