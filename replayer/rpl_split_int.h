/* rpl_split_int.h — the split engine's own types (rpl_splitter.c: one
 * launch; rpl_split_dev.c: the engine, its devices, staging, builds,
 * mirrors and versions; rpl_split_adapt.c: adaptive proportions). Not a
 * public header: the engine's interface is rpl.h's "split engine". */
#ifndef CLRR_RPL_SPLIT_INT_H
#define CLRR_RPL_SPLIT_INT_H

#include "replayer/rpl_int.h"

#define RPL_SPLIT_MAX_DEVS 16
#define RPL_SPLIT_MAX_COPIES 512
#define RPL_SPLIT_MAX_ARGS 128

typedef struct rpl_split_dev {
    char spec[257];
    cl_device_id dev;
    cl_platform_id plat;
    cl_context ctx;           /* NULL until a part that is not on a queue's device needs it */
    cl_command_queue q;
    cl_mem pin;               /* pinned staging: a mapped CL_MEM_ALLOC_HOST_PTR buffer */
    uint8_t *pin_ptr;
    size_t pin_size;
    size_t pin_used;          /* taken by the parts of launch pin_launch */
    uint64_t pin_launch;
} rpl_split_dev;

typedef struct rpl_split_copy {
    uint64_t key;             /* the object mirrored */
    cl_device_id dev;
    cl_mem buf;
    uint64_t size;
    uint64_t epoch, gen;      /* the version of the object the valid bytes are of */
    uint64_t vlo, vhi;        /* the valid bytes */
    uint64_t used;            /* last launch that used it (for eviction) */
} rpl_split_copy;

typedef struct rpl_split_build {
    uint32_t id;
    cl_context ctx;
    cl_device_id dev;         /* built for this device of ctx */
    uint8_t src[16];          /* tf_hash of the source: splits of the same source, */
    char *opts, *name;        /* options and kernel share prog (built once) */
    cl_program prog;
    cl_kernel k;              /* NULL: it failed to build (not retried) */
    char why[256];
} rpl_split_build;

/* The proportions of an adaptive split, refined launch by launch. */
typedef struct rpl_split_adapt {
    uint32_t id;
    unsigned nparts;
    uint64_t bound[RPL_SPLIT_MAX_PARTS + 1];   /* part p: work-groups [bound[p], bound[p+1]) */
    uint64_t launches;
    uint64_t whole_left;      /* launches to run whole before trying the split again */
    rpl_split_history hist;   /* the last measured launch (Broyden's secants) */
} rpl_split_adapt;

/* An object's version: moved by every command that may write it. */
typedef struct rpl_split_epoch {
    uint64_t key, epoch;
} rpl_split_epoch;

/* Launches a split predicted slower than its queue's device alone runs
 * whole before it is measured again (the load may have moved). */
#define RPL_SPLIT_REPROBE 15
/* Parts whose times are within this ratio are balanced: the proportions stay. */
#define RPL_SPLIT_SETTLED 1.05
/* Sub-buffers' keys: their parent's writes do not move their versions, so
 * their mirrors are never trusted (keyed by handle, within one launch). */
#define RPL_SPLIT_KEY_UNTRUSTED (1ull << 63)

struct rpl_splitter {
    rpl_splitter_opts o;
    rpl_api_table api;
    rpl_split_adapt *adapt;
    size_t nadapt;
    rpl_split_dev devs[RPL_SPLIT_MAX_DEVS];
    unsigned ndevs;
    /* the queues' own devices: their pinned staging, through a queue of
     * ours in the application's context (the context is not ours) */
    rpl_split_dev prims[RPL_SPLIT_MAX_DEVS];
    unsigned nprims;
    rpl_split_copy *copies;   /* RPL_SPLIT_MAX_COPIES, allocated once: jobs point into it */
    size_t ncopies;
    rpl_split_build *builds;
    size_t nbuilds;
    rpl_split_epoch *epochs;  /* the keys some mirror holds */
    size_t nepochs, capepochs;
    uint64_t gen;             /* moved when a command may write memory no key names */
    uint64_t launches;
    rpl_split_stats st;
};

/* rpl_split_dev.c */
void rpl_split_unpin(rpl_splitter *x, rpl_split_dev *d);
rpl_split_epoch *rpl_split_epoch_of(rpl_splitter *x, uint64_t key);
/* The engine's device for @p spec, its context and queue made when it is
 * not @p qdev; *primary 1 when it is. 0, or -1 with why in @p err. */
int rpl_split_dev_of(rpl_splitter *x, const char *spec, cl_device_id qdev, rpl_split_dev **out, int *primary,
                     char *err, size_t cap);
/* @p need bytes of @p d's pinned staging for the current launch; NULL when
 * there is none (the caller mallocs). */
uint8_t *rpl_split_pinned(rpl_splitter *x, rpl_split_dev *d, size_t need);
/* The staging of a queue's device in the application's context; NULL when none. */
rpl_split_dev *rpl_split_prim(rpl_splitter *x, cl_context ctx, cl_device_id dev);
/* Split @p sp's partition-ready kernel for @p dev in @p ctx (built once;
 * @p ahead: by rpl_splitter_prepare). NULL with why in @p err. */
cl_kernel rpl_split_kernel(rpl_splitter *x, const rpl_split *sp, cl_context ctx, cl_device_id dev, int ahead,
                           char *err, size_t cap);
/* The mirror of the object of @p key (@p size bytes) on @p d. */
rpl_split_copy *rpl_split_copy_of(rpl_splitter *x, rpl_split_dev *d, uint64_t key, uint64_t size, char *err,
                                  size_t cap);
/* The bytes region @p r may read or write, together: [*lo, *hi) (*lo >=
 * *hi when none). */
void rpl_split_span(const rpl_split_region *r, uint64_t *lo, uint64_t *hi);
/* The staging part @p part needs on another device: what it is sent and
 * (three times: before, after, its merge) what it writes. */
size_t rpl_split_stage_need(const rpl_split *sp, const rpl_split_part *part);
/* rpl_split_adapt.c */
rpl_split_adapt *rpl_split_adapt_of(rpl_splitter *x, const rpl_split *sp);
/* The regions of the parts [bound[p], bound[p+1]) from the split's models
 * (@p sizes: each argument's buffer size) into @p rg (nparts x nargs). */
void rpl_split_regions(const rpl_split *sp, const uint64_t *bound, const uint64_t *sizes, rpl_split_region *rg);

#endif
