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
                                 costs do not cover the launch: even shares; why says) */
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
} opt_options;

/*! opt_optimize() : reads trace @p path, runs the passes of @p o and
 *  builds the plan (*out, caller frees). The kernel analysis runs when it
 *  is available (without it, launches count as reading and writing their
 *  memory arguments in full). @return PLAN_OK; PLAN_ERR_TRACE with one line
 *  in @p err; PLAN_ERR_NOMEM. */
plan_status opt_optimize(const char *path, const opt_options *o, plan_file **out, char *err, size_t err_cap);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_OPT_H */
