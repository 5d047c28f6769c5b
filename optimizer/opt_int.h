/* opt_int.h — optimizer internals shared by optimizer/opt_*.c: the
 * passes' searches (fusion, specialization, schedule, split, dead
 * commands), the partitioner and the rewriter's entry points. Not a
 * public header. */
#ifndef CLRR_OPT_INT_H
#define CLRR_OPT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "costs/cdb.h"
#include "optimizer/opt.h"
#include "plan/plan.h"
#include "rewriter/rw.h"
#include "trace-format/tf.h"

/* ------------------------------------------------------------ fusion */

/* A producer -> consumer pair the fuse pass may merge (opt_fuse.c), or a
 * group of launches: every launch but the last writes one intermediate
 * that exactly one later launch of the group reads (a chain: the next
 * one; a gather: several producers, one consumer). */
typedef struct opt_fuse_pair {
    unsigned n;               /* launches: 2 (a pair) .. PLAN_CHAIN_MAX (a group) */
    uint64_t seq[PLAN_CHAIN_MAX];      /* the launches, in order */
    uint64_t kernel[PLAN_CHAIN_MAX];   /* their kernel objects */
    unsigned out[PLAN_CHAIN_MAX];      /* out[i] (i < n - 1): launch i's intermediate buffer argument */
    unsigned to[PLAN_CHAIN_MAX];       /* to[i] (i < n - 1): the launch that reads it (i < to[i] < n) */
    unsigned in[PLAN_CHAIN_MAX];       /* in[i] (i < n - 1): the argument launch to[i] reads it through */
    int keep_store;           /* a pair whose intermediate is read later: still written
                                 (a group's intermediates never are) */
    int horizontal;           /* independent launches that share inputs: no intermediate
                                 (out, to, in unused), every store kept (keep_store 1) */
} opt_fuse_pair;

typedef struct ana_model ana_model;
/*! opt_fuse_find() : every qualifying pair, chain or gather of the model,
 *  in trace order, then (@p horizontal) the horizontal groups among the
 *  launches left (*out malloc'ed). @return PLAN_OK or PLAN_ERR_NOMEM. */
plan_status opt_fuse_find(const ana_model *m, int horizontal, opt_fuse_pair **out, size_t *nout);

/* The specialize pass's search (opt_spec.c): a kernel object whose
 * launches (those no other pass took) all set the same bytes for scalar
 * arguments that bound its loops. */
typedef struct opt_spec_cand {
    uint64_t kernel;          /* the kernel object */
    unsigned nconsts;
    plan_const consts[PLAN_SPEC_MAX_CONSTS];
    char why[320];            /* "n (argument 4) = 0x400 bounds the loop over j" */
} opt_spec_cand;
/*! opt_spec_find() : the candidates of @p m, launches that @p taken claims
 *  left out (*out malloc'ed). @return PLAN_OK or PLAN_ERR_NOMEM. */
plan_status opt_spec_find(const ana_model *m, int (*taken)(void *user, uint64_t seq), void *user,
                         opt_spec_cand **out, size_t *nout);

/*! opt_sched_plan() : the schedule pass (opt_sched.c): each in-order queue
 *  of @p m whose transfers, on lanes of their own, are predicted from the
 *  recorded device times to take at least 5% less, as an entry of @p p's
 *  schedule. @return PLAN_OK or PLAN_ERR_NOMEM. */
plan_status opt_sched_plan(const ana_model *m, plan_file *p);

/* The split pass (opt_split.c): a launch it splits, and the split. */
typedef struct opt_split_role {
    uint64_t seq;
    uint32_t split;
} opt_split_role;
/*! opt_split_plan() : splits every launch of @p m (commands in seq order, so
 *  *roles comes sorted) that @p taken does not claim, over the devices of
 *  o->split; adds the splits to @p p. The first launch left alone and why
 *  go to @p note. @return PLAN_OK, PLAN_ERR_ARG (a bad device list, message
 *  in @p err) or PLAN_ERR_NOMEM. */
plan_status opt_split_plan(const ana_model *m, plan_file *p, const opt_options *o,
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
 *  PLAN_SPLIT_MAX_PARTS devices. */
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
    const uint8_t *args;      /* per argument: PLAN_SPLIT_ARG_* */
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
rw_status opt_rw_coarsen(const rw_coarsen_req *req, rw_coarsen_out *out, char *err, size_t cap);
void opt_rw_coarsen_free(rw_coarsen_out *out);

/* opt_coarsen.c: the coarsening half of the wgsize pass (opt_wg.c). The
 * program sources of a trace, by source hash, for the rewriter. */
typedef struct opt_co_progs opt_co_progs;
/*! opt_co_progs_open() : the programs made from source in trace @p path.
 *  NULL with why in @p err. */
opt_co_progs *opt_co_progs_open(const char *path, size_t max_memory, char *err, size_t err_cap);
void opt_co_progs_close(opt_co_progs *g);
/*! opt_co_shape() : coarsening candidates for the launch shape whose
 *  first launch is @p seq (kernel @p kernel of program @p program, canon
 *  pattern @p canon of key @p key, @p count launches, recorded device time
 *  @p rec_ns), measured and maybe added to @p p as a coarsen
 *  transformation (1.12). @return PLAN_OK or PLAN_ERR_NOMEM. */
plan_status opt_co_shape(const opt_tune *t, plan_file *p, opt_co_progs *g, uint64_t seq, const char *kernel,
                         const uint8_t program[16], const char *canon, uint64_t key, uint64_t count, uint64_t rec_ns,
                         double deadline, opt_tune_result *res);

/* opt_dead.c: the dead command pass on the analyzer's model. */
typedef struct ana_model ana_model;
typedef struct opt_dead_cmd {
    uint64_t seq;
    const char *reason;       /* malloc'ed */
} opt_dead_cmd;
/*! opt_dead_find() : the commands of @p m whose results are never
 *  observed; *out (malloc'ed, sorted by seq) with reasons. Commands that
 *  @p excluded (may be NULL) claims are kept, and what they read is live. */
plan_status opt_dead_find(const ana_model *m, int (*excluded)(void *user, uint64_t seq), void *user,
                          opt_dead_cmd **out, size_t *n, char *err, size_t err_cap);

#endif /* CLRR_OPT_INT_H */
