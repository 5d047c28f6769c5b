/* live.h — the matcher that applies a plan (plan/plan.h) to a run of the
 * application's calls: a replay (`clrr replay --plan`) or a live run in
 * the application's own process (`clrr run --plan`, the layer in plan
 * mode: live_layer.c, live_stage.c).
 *
 * The matcher, fed every call of a run in order, decides which ones the
 * plan drops, holds, fuses, splits or defers, after checking each against
 * its pattern and, for redundant transfers, that the memory really holds
 * the bytes. Nothing here is thread-safe: one matcher per run, its calls
 * serialized by the caller (the layer: under its plan lock).
 *
 * In the layer, live/ registers with the recorder through the recorder's
 * hook table (recorder/rec.h, rec_hooks_set, called from a constructor of
 * live_layer.c); the contracts of every hook (which thread, which lock,
 * who frees what) are written beside its pointer there.
 */
#ifndef CLRR_LIVE_H
#define CLRR_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================ execute */

typedef struct tf_item tf_item;   /* trace-format/tf.h */
typedef struct tf_call tf_call;
typedef struct tf_value tf_value;
typedef struct live_exec live_exec;

/* What live_exec_item() says about a call. */
#define LIVE_RUN 0             /* execute it as recorded */
#define LIVE_DROP 1            /* do not execute it (signal its event with a marker) */
#define LIVE_HOLD 2            /* a producer launch: keep it (its kernel's arguments as
                                 set now); run it as recorded before any call but
                                 clSetKernelArg, unless the next launch is LIVE_FUSE */
#define LIVE_FUSE 3            /* run live_exec_fused() instead, with the held launches; a
                                 specialized kernel (1.7) is a fused kernel of one launch
                                 (launches 1), answered with none held */
#define LIVE_SPLIT 5           /* run live_exec_split() instead: the launch in parts */
#define LIVE_LINK 6            /* a launch of a chain (plan 1.5) after the held ones: hold
                                 it too, after them (they do not run first) */
#define LIVE_LOCAL 7           /* run it as made, with the tuned local size of
                                 live_exec_local() on a device it measured (plan 1.10) */
#define LIVE_DEFER 4           /* live runs: do not execute it now; keep it (its arguments,
                                 data and objects as they are now) until the matcher says
                                 to run it (live_answer.force) or to free it */

/*! live_exec_open() : prepares to apply @p p (which must outlive the
 *  matcher) to the calls of trace @p path, which it streams once to
 *  compute its fingerprint: a plan made from a trace of another structure
 *  applies only the transformations whose safety is checked as the calls
 *  run (redundant transfers), the others fall back. @return PLAN_OK;
 *  PLAN_ERR_TRACE (message in @p err); PLAN_ERR_NOMEM. */
plan_status live_exec_open(const plan_file *p, const char *path, size_t max_memory, live_exec **out, char *err,
                         size_t err_cap);
/*! live_exec_item() : the next item of the run (calls and late data, in
 *  trace order, each once per execution). @return LIVE_RUN or LIVE_DROP for a
 *  call that is about to execute, LIVE_RUN for other items, or
 *  PLAN_ERR_NOMEM. A call that was dropped is not executed by the caller. */
int live_exec_item(live_exec *x, const tf_item *it);
/*! live_exec_fused() : the fused kernel of the last LIVE_FUSE answer. */
const plan_fused *live_exec_fused(const live_exec *x);
/*! live_exec_local() : the tuned shape of the last LIVE_LOCAL answer
 *  (plan_local_for() picks the device's decision). */
const plan_local *live_exec_local(const live_exec *x);
/*! live_exec_split() : the split of the last LIVE_SPLIT answer. */
const plan_split *live_exec_split(const live_exec *x);
/*! live_exec_lanes() : the lanes (2 or 3) the plan's schedule (1.8) gives
 *  the @p queue-th command queue created (from 0); 0 when none. */
unsigned live_exec_lanes(const live_exec *x, uint64_t queue);
struct rpl_split;
/*! live_exec_split_rpl() : the same split in the split engine's terms
 * (replayer/rpl.h), valid until the next call or live_exec_close. 0, or -1
 * (no split, too many parts, out of memory). */
int live_exec_split_rpl(live_exec *x, struct rpl_split *out);
/*! live_exec_split_conv() : likewise for split @p z of the plan. */
int live_exec_split_conv(live_exec *x, const plan_split *z, struct rpl_split *out);
/*! live_exec_split_of() : likewise for the @p i-th split of the plan made
 * from the program whose source hashes to @p program; -1 when none. */
int live_exec_split_of(live_exec *x, const uint8_t program[16], size_t i, struct rpl_split *out);
struct rpl_plan_hook;
/*! live_exec_replay_hook() : @p x as a replay session's plan hook
 * (replayer/rpl.h): every answer of the matcher in the replayer's terms,
 * tuned local sizes picked for the replay's device. *out borrows @p x,
 * which must outlive the session. */
void live_exec_replay_hook(live_exec *x, struct rpl_plan_hook *out);
/*! live_exec_rewind() : the run starts over (replay --loop): occurrences
 *  are counted from the start again; memory contents stay tracked. */
void live_exec_rewind(live_exec *x);

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
typedef struct live_answer {
    int verdict;              /* LIVE_RUN, LIVE_DROP, LIVE_DEFER, LIVE_HOLD, LIVE_LINK, LIVE_FUSE, LIVE_SPLIT */
    const uint64_t *force;    /* kept calls (their seqs) to run before this one, in order */
    size_t nforce;
    const uint64_t *discard;  /* kept calls to free without running them */
    size_t ndiscard;
    uint32_t keep_held;       /* LIVE_FUSE whose fused kernel does not store the intermediate
                                 buffers: bit i set, held launch i (in order) becomes a kept
                                 call; the others are freed (their output was released while
                                 they were held, or the kernel stores it) */
    uint32_t nfresh;          /* LIVE_FUSE: the fused kernel's parameters (fresh[i], from 0) that
                                 may take any buffer of at least fresh_size bytes that nothing
                                 has written (the layer's own) instead of an intermediate
                                 buffer. Each intermediate was made without contents and only
                                 its held producer may have written it, so the elements the
                                 fused kernel loads from it (those the producer did not store)
                                 hold what a never-written buffer holds, and a new buffer need
                                 not be allocated for the launch */
    uint8_t fresh[PLAN_CHAIN_MAX];
    uint64_t fresh_size;
} live_answer;

/*! live_exec_open_live() : prepares to apply @p p (which must outlive the
 *  matcher) to a live run. @return PLAN_OK or PLAN_ERR_NOMEM. */
plan_status live_exec_open_live(const plan_file *p, live_exec **out, char *err, size_t err_cap);
/*! live_exec_begin() : a live call about to run (a TF_ITEM_BEGIN of
 *  tf_reader_feed: its inputs); fills *a (valid until the next call of
 *  the matcher). The caller runs a->force in order, frees a->discard, then
 *  acts on the verdict; the call's END (and DATA items) then go to
 *  live_exec_item(). @return PLAN_OK or PLAN_ERR_NOMEM. */
plan_status live_exec_begin(live_exec *x, const tf_call *c, live_answer *a);
/*! live_exec_karg() : a live run's successful clSetKernelArg, handed over
 *  as its values instead of as a call (plan mode neither encodes nor
 *  decodes these: most calls of a launch-heavy application are kernel
 *  arguments): argument @p index of kernel @p kernel (id) is @p size bytes,
 *  @p value as the recorder records it (TF_UINT: the id of a memory
 *  object, sampler or queue; TF_BIN of at most 64 bytes, else TF_BLOB with
 *  the bytes' hash; TF_NIL for __local). The same as the call through
 *  live_exec_begin() and live_exec_item(). @return PLAN_OK or PLAN_ERR_NOMEM. */
plan_status live_exec_karg(live_exec *x, uint64_t kernel, uint32_t index, uint64_t size, const tf_value *value);
/*! live_exec_released() : the application released its last reference to
 *  memory object @p id: kept calls that write only it are freed (a->discard). */
void live_exec_released(live_exec *x, uint64_t id, live_answer *a);
/*! live_exec_live_end() : the run ends: every kept call is freed (a->discard). */
void live_exec_live_end(live_exec *x, live_answer *a);
/*! live_exec_unkept() : the caller could not keep call @p seq (it ran it
 *  as recorded instead). */
void live_exec_unkept(live_exec *x, uint64_t seq);

typedef struct live_exec_stats {
    int same_trace;           /* the trace's fingerprint is the plan's */
    uint64_t fingerprint;     /* of the trace being run */
    uint64_t transformations; /* in the plan */
    uint64_t applied;         /* transformations applied (at least once) */
    uint64_t fell_back;       /* matched a call but ran it unoptimized */
    uint64_t unmatched;       /* never met a call with their pattern */
    uint64_t drops;           /* calls dropped (all loop iterations) */
    uint64_t fusions;         /* fused launches (all loop iterations) */
    uint64_t splits;          /* split launches (all loop iterations) */
    uint64_t specs;           /* specialized launches (all loop iterations; answered as LIVE_FUSE) */
    uint64_t locals;          /* launches answered LIVE_LOCAL (whether their device was measured
                                 is the caller's to count) */
    uint64_t kept;            /* live: calls deferred (dead work, unstored producers) */
    uint64_t forced;          /* ... of which run after all, because something read their results */
    uint64_t freed;           /* ... of which freed unrun (overwritten, released, or at the end) */
    uint64_t steady;          /* live: calls past the recording's last transformed occurrence
                                 of their pattern, given that transformation (a longer run) */
    plan_effect effect;        /* recorded effect of the applied ones */
} live_exec_stats;

/*! live_exec_get_stats() : counts so far (unmatched: known at the end). */
void live_exec_get_stats(const live_exec *x, live_exec_stats *out);

typedef struct live_fallback {
    uint32_t xform;           /* transformation id */
    uint64_t seq;             /* the call it met (0: none) */
    const char *reason;       /* static */
} live_fallback;

/*! live_exec_fallback_count() / live_exec_fallback() : the first fallbacks
 *  (at most 64 are kept; unmatched transformations come last, listed at
 *  the end of the run). Valid until the next live_exec_item(). */
size_t live_exec_fallback_count(live_exec *x);
const live_fallback *live_exec_fallback(live_exec *x, size_t i);

/*! live_exec_close() : accepts NULL. */
void live_exec_close(live_exec *x);

/*! live_trace_fingerprint() : the structure fingerprint of trace @p path
 *  (PLAN.md, "Fingerprint"): the same for runs of one program that differ
 *  only in data. @return PLAN_OK or PLAN_ERR_TRACE / PLAN_ERR_NOMEM. */
plan_status live_trace_fingerprint(const char *path, size_t max_memory, uint64_t *fp, uint64_t *calls, char *err,
                                 size_t err_cap);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_LIVE_H */
