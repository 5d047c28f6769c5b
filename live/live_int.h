/* live_int.h — internals of live/: the matcher's state (live_match.c,
 * live_defer.c). Not a public header (the layer's own internals:
 * live/live_layer_int.h). */
#ifndef CLRR_LIVE_INT_H
#define CLRR_LIVE_INT_H

#include "live/live.h"
#include "plan/plan.h"
#include "trace-format/tf.h"

/* ------------------------------------------------------------ the matcher */

#define LIVE_MAX_FALLBACKS 64

/* A call a live run keeps (LIVE_DEFER, or a held launch whose fusion does
 * not store its output): the roots of the memory it may read, then of the
 * memory it may write. */
/* A launch's identity for the live rule "the same kernel over the same
 * range writes the same elements again": kernel name (the tracker's
 * string) and program source hash, work_dim, global sizes, offsets and
 * local sizes. name NULL: not a launch, or not known. */
typedef struct live_launch_id {
    const char *name;
    uint8_t program[16];
    uint64_t range[10];
} live_launch_id;

typedef struct live_kept {
    uint64_t seq;
    uint32_t xform;               /* the transformation that kept it */
    uint64_t *roots;              /* nr read, then nw written (malloc'ed) */
    uint32_t nr, nw;
    int all;                      /* may touch any memory (unknown command) */
    uint64_t full;                /* a root it overwrites in full for sure, else 0 */
    live_launch_id launch;         /* launches */
    uint64_t *ro;                 /* held launches: per kernel argument, the memory object
                                     the kernel only reads through it, else 0; then per
                                     argument the memory object it passes, else 0 (2 nro,
                                     malloc'ed) */
    uint32_t nro;
    int gone;                     /* held launches: what it writes was released meanwhile */
} live_kept;

enum { LIVE_X_PENDING = 0, LIVE_X_APPLIED, LIVE_X_FELL_BACK };

struct live_exec {
    const plan_file *p;
    plan_track t;
    plan_map occ;
    const plan_xform **by_key;     /* sorted by (key, occurrence) */
    const plan_xform **by_seq;     /* sorted by seq */
    size_t n;
    uint8_t *state;               /* per transformation (index id - 1) */
    int same_trace;
    uint64_t fp, drops, fusions, splits, specs, locals;
    size_t nspec_xf;          /* specialize transformations (shape patterns are looked up too) */
    const plan_xform **local_xf;   /* per tuned shape (1.10): its transformation */
    const plan_local *local;   /* the last LIVE_LOCAL answer's tuned shape */
    const plan_xform *held[PLAN_CHAIN_MAX];   /* holds whose launches the run keeps, waiting for
                                     their fuse (a pair's producer, or a chain's launches) */
    unsigned nheld;
    const plan_xform *hold_new;    /* live_exec_decide: a hold that starts a new pair or chain */
    const plan_fused *fused;       /* the last LIVE_FUSE answer's kernel */
    const plan_split *split;       /* the last LIVE_SPLIT answer's split */
    struct live_rpl_conv *conv;    /* live_exec_split_rpl's storage */
    live_fallback fb[LIVE_MAX_FALLBACKS];
    size_t nfb, nfb_calls;        /* listed; of which met during the run */
    /* live runs (live_defer.c) */
    int live;
    const plan_xform *deferred;    /* the transformation of the last LIVE_DEFER */
    live_kept *kept, held_sets[PLAN_CHAIN_MAX];   /* kept calls; the held launches' memory */
    size_t nkept, capkept;
    uint64_t *force, *discard;    /* the answer being built */
    size_t nforce, capforce, ndiscard, capdiscard;
    struct live_begun { uint64_t seq; uint8_t fate; } *begun;   /* calls begun, not ended */
    size_t nbegun, capbegun;
    uint64_t nkept_total, nforced, nfreed;
    uint32_t *fz_forced;          /* per fused kernel: held producers that had to run after all */
    uint64_t steady;              /* calls past the recording given its last transformation */
    char **fns, **knames;         /* live: the plan's functions, launched kernels' names */
    size_t nfns, nknames;
    int any_kernel;               /* live: a launch pattern without a kernel name */
};

/* live_match.c, shared with live_defer.c */
void live_exec_fell_back(live_exec *x, const plan_xform *f, uint64_t seq, const char *why);
int live_exec_decide(live_exec *x, const tf_call *c, plan_fate *fate);
/* After live_exec_decide: the held launches that do not go on run first
 * (listed as fallen back; the caller runs them), and a new hold starts.
 * @return how many held launches must run first (x->held[0..n) then). */
unsigned live_exec_unhold(live_exec *x, int v, const char *fn);
int live_exec_passive(const char *fn);
/* live_defer.c */
void live_free(live_exec *x);
/*! live_item() : the END of a live call: tracked with the fate its
 *  begin got. */
int live_item(live_exec *x, const tf_item *it);

#endif /* CLRR_LIVE_INT_H */
