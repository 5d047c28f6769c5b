/* rpl.h — the clrr replay engine: re-executes a trace against the OpenCL
 * runtime present here and verifies every read-back against the recording.
 *
 * A session reads the trace item by item (calls in completion order, late
 * data, device times), rebuilds every object with a map from recorded ids to
 * live handles, feeds the recorded data at the moment the application fed
 * it, and compares every read-back (reads, read maps, SVM copies to the host)
 * with the recorded bytes, exactly or within a tolerance.
 *
 * Error convention: functions returning rpl_status return RPL_OK (0),
 * RPL_END (1) at the end of the trace, or a negative RPL_ERR_*; the session's
 * message (rpl_error()) says what and where ("call #23 clEnqueueNDRangeKernel:
 * ..."). A read-back that differs is not an error of the session: it is
 * reported through rpl_opts.on_mismatch and counted in the summary.
 *
 * Sessions are not thread-safe; use one per thread. Several sessions may be
 * open at once (replay --compare steps two of them side by side).
 */
#ifndef CLRR_RPL_H
#define CLRR_RPL_H

#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

#include "trace-format/tf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rpl_status {
    RPL_OK = 0,
    RPL_END = 1,              /* no more items */
    RPL_ERR_TRACE = -1,       /* the trace cannot be read (corrupt, truncated header, I/O) */
    RPL_ERR_NOMEM = -2,
    RPL_ERR_ARG = -3,         /* bad option or argument from the caller */
    RPL_ERR_DEVICE = -4,      /* no device matches, or a device binary cannot run here */
    RPL_ERR_CL = -5,          /* a call failed in the replay that succeeded when recorded */
    RPL_ERR_UNSUPPORTED = -6, /* the trace needs what replay cannot do (native kernels, GL) */
    RPL_ERR_INVALID = -7,     /* the trace is inconsistent: unknown id, bad argument encoding */
    RPL_ERR_LIMIT = -8        /* a size or count beyond the session's limits */
} rpl_status;

/*! rpl_strerror() : @return a static string naming @p s. Thread-safe. */
const char *rpl_strerror(rpl_status s);

/* ------------------------------------------------------------- comparison */

/* How read-back bytes are compared. All zero: exact (byte for byte). With a
 * tolerance, the bytes are read as elements of @c elem and two elements are
 * equal when they are bit-identical, both NaN, |a-b| <= abs, |a-b| <=
 * rel*max(|a|,|b|), or at most @c ulp units in the last place apart (any of
 * the given criteria suffices). A trailing part shorter than one element is
 * compared exactly. */
typedef enum rpl_elem { RPL_ELEM_F32 = 0, RPL_ELEM_F64 = 1 } rpl_elem;
typedef struct rpl_tolerance {
    double rel, abs;
    uint64_t ulp;
    rpl_elem elem;
} rpl_tolerance;

/*! rpl_tolerance_parse() : parses "exact", or a comma-separated list of
 *  rel=X, abs=X, ulp=N, f32, f64 (e.g. "rel=1e-5,abs=1e-7", "ulp=4,f64")
 *  into *out. @return 0, or -1 with a one-line reason in @p err. */
int rpl_tolerance_parse(const char *spec, rpl_tolerance *out, char *err, size_t err_cap);
/*! rpl_tolerance_is_exact() : 1 when @p t compares byte for byte. */
int rpl_tolerance_is_exact(const rpl_tolerance *t);

typedef struct rpl_cmp {
    uint64_t elems;           /* elements compared (bytes when exact) */
    uint64_t differ;          /* elements outside the tolerance */
    uint64_t first;           /* byte offset of the first differing element */
    uint64_t elem_size;       /* 1 when exact, else 4 or 8 */
    double max_abs;           /* largest absolute difference (tolerance mode) */
} rpl_cmp;

/*! rpl_compare() : compares @p len bytes of @p expected and @p actual under
 *  @p t (NULL: exact), filling *out (may be NULL). @return 1 when equal
 *  within the tolerance, 0 otherwise. Thread-safe. */
int rpl_compare(const void *expected, const void *actual, size_t len, const rpl_tolerance *t,
                rpl_cmp *out);

/* ---------------------------------------------------------------- session */

typedef struct rpl_session rpl_session;

/* A read-back that differs from the recording. Strings live until the
 * callback returns. */
typedef struct rpl_mismatch {
    uint64_t seq;             /* the call that read the data back */
    const char *function;     /* e.g. "clEnqueueReadBuffer" */
    const char *what;         /* e.g. "ptr", "data" (map), "dst_ptr" */
    uint64_t object;          /* recorded id of the buffer/image/SVM area, 0 if none */
    const char *writers;      /* the kernels that last wrote that object, e.g.
                               * "sobel (#41)", or "" when none is known */
    uint64_t size;            /* bytes compared */
    rpl_cmp cmp;
    int by_hash;              /* recorded as a hash (--hash-reads): cmp holds no
                               * difference count, only that the bytes differ */
    uint64_t undefined;       /* ... and that many of its bytes were undefined (a hash
                               * cannot skip them) */
} rpl_mismatch;

/* One executed command, for --timing (host and device times). */
typedef struct rpl_cmd_time {
    uint64_t seq;
    const char *function;
    const char *kernel;       /* kernel name for launches, else NULL */
    int64_t host_ns;          /* wall time of the call itself */
    int64_t device_ns;        /* END - START from profiling; -1 when unknown */
    int64_t recorded_device_ns;  /* from the trace's DEVTIME; -1 when absent */
    unsigned loop;            /* iteration, from 0 */
} rpl_cmd_time;

/* A verified (or compared) read-back, for replay --compare: the bytes the
 * live run produced. */
typedef struct rpl_readback {
    uint64_t seq;
    const char *function, *what;
    uint64_t object;
    const void *data;         /* live bytes, valid until the next rpl_step() */
    uint64_t size;
    int verified;             /* compared with the recording */
    int matched;              /* ... and equal within the tolerance */
    const struct rpl_undef *undef;   /* its bytes nothing defined (rpl_readback_undefined);
                                      * NULL: every byte is defined */
} rpl_readback;

/*! rpl_readback_undefined() : copies the bytes of @p rb that nothing
 *  defined (docs/replay.md, "Undefined bytes") from @p src to @p dst (both
 *  rb->size bytes), so that a comparison of @p src and @p dst skips them
 *  (replay --compare). @return their count: 0 when every byte is defined
 *  (or with rpl_opts.strict). Thread-safe. */
uint64_t rpl_readback_undefined(const rpl_readback *rb, void *dst, const void *src);

/* ------------------------------------------------------------------ plans */

typedef struct tf_item tf_item;   /* trace-format/tf.h */

/* A plan's say over the calls of a session. The replayer knows no plan
 * format: a matcher (live/live.h's live_exec, for clrr replay --plan)
 * is told every item the session executes and answers, for a call, whether
 * it runs. Only launches, writes, fills and copies (clEnqueueNDRangeKernel,
 * clEnqueueTask, clEnqueue{Write,Fill,Copy}*) may be dropped: the command is
 * not executed, and when the application asked for its event, a marker
 * with the command's wait list takes its place, so that everything that
 * waits for the event (wait lists, clWaitForEvents, queries, releases)
 * still works. Read-backs are verified exactly as without a plan. */
#define RPL_PLAN_RUN 0
#define RPL_PLAN_DROP 1
/* Vertical fusion: HOLD (a clEnqueueNDRangeKernel) keeps the launch, with
 * its kernel's arguments as set then; the session runs it as recorded
 * before the next call other than clSetKernelArg, unless that call is a
 * launch the plan answers FUSE: then the fused kernel (the hook's fused())
 * runs in its place, its parameters taken from the held launch's
 * arguments and the consumer's, with the consumer's NDRange, wait list and
 * event. The fused program is built once per session and context. A
 * chain (plan 1.5) holds several launches: HOLD the first, LINK each
 * after it (held too; the held ones do not run first), FUSE the last. */
#define RPL_MAX_CHAIN 16
#define RPL_PLAN_HOLD 2
#define RPL_PLAN_FUSE 3
#define RPL_PLAN_LINK 5        /* hold this launch too, after the held ones (a chain) */

/* Multi-device split: SPLIT (a clEnqueueNDRangeKernel) runs the launch as
 * parts (the hook's split()), each a range of work-groups along one
 * dimension on one device, through a partition-ready kernel (its
 * parameters are the original kernel's, then 9 ulongs: the whole launch's
 * global sizes, offsets and local sizes). A part on the queue's own device
 * runs there, on the application's buffers; a part on another device runs
 * in a context of the session's own, on copies of the bytes its regions
 * name (kept there, and not sent again, while the buffer is not written
 * meanwhile). Each part's written bytes come back: concatenated, or merged
 * by comparison with what the bytes held before the launch. The whole
 * launch is complete when the call returns; the application's event is a
 * marker after it. */
#define RPL_PLAN_SPLIT 4
#define RPL_SPLIT_LAUNCH_TIMES 32
/* Tuned local size (plan 1.10): LOCAL (a clEnqueueNDRangeKernel) runs the
 * launch as recorded but with the local size the hook's local_size()
 * gives for the queue's device, when that size is legal there (the
 * device's and the kernel's limits, the global size divisible); else, or
 * when the plan did not measure that device, with the recorded one
 * (counted in rpl_summary). Nothing else about the launch changes. */
#define RPL_PLAN_LOCAL 6

enum { RPL_SPLIT_ARG_VALUE = 0, RPL_SPLIT_ARG_MEM = 1, RPL_SPLIT_ARG_LOCAL = 2 };
enum { RPL_MERGE_NONE = 0, RPL_MERGE_CONCAT = 1, RPL_MERGE_DIFF = 2 };
typedef struct rpl_split_region {
    uint8_t read, write;
    uint64_t rlo, rhi, wlo, whi;   /* bytes [lo, hi) of the argument */
} rpl_split_region;
typedef struct rpl_split_model {
    uint8_t read, write;
    int64_t r[4], w[4];       /* bytes [r[0] + r[1]*lo, r[2] + r[3]*hi) of a range [lo, hi) */
} rpl_split_model;
typedef struct rpl_split_part {
    const char *device;       /* device spec, as --device takes */
    uint64_t lo, hi;          /* work-groups [lo, hi) along the dimension */
    const rpl_split_region *regions;   /* per argument */
} rpl_split_part;
typedef struct rpl_split {
    uint32_t id;              /* names the split across calls (builds are cached) */
    const char *kernel;       /* the original kernel (for messages and costs) */
    uint8_t program[16];      /* tf_hash of its program's source (the costs' key) */
    const char *name, *source, *options;   /* the partition-ready kernel */
    unsigned dim;
    uint64_t groups;          /* work-groups along dim (work-items when the launch
                                 leaves the local size to the driver) */
    unsigned nargs;
    const uint8_t *args;      /* per argument: RPL_SPLIT_ARG_* */
    const uint8_t *merge;     /* per argument: RPL_MERGE_* */
    unsigned nparts;
    const rpl_split_part *parts;
    int adaptive;             /* models hold for every range: the session refines the
                               * proportions launch by launch (rpl_opts.split_fixed off) */
    const rpl_split_model *models;   /* per argument when adaptive */
} rpl_split;

/* The split engine behind RPL_PLAN_SPLIT, usable without a replay session:
 * `clrr run --plan` (the layer in plan mode) runs a plan's split launches
 * on the application's own objects through it. Not thread-safe: one
 * caller at a time per engine.
 *
 * Each memory argument is named by a key that the caller keeps unique to
 * one object while it lives (a recorded or layer object id). The engine
 * remembers which bytes of each key its mirrors on other devices hold, and
 * of which version: the caller tells it of every command that may write
 * memory (rpl_splitter_call, or rpl_splitter_wrote / rpl_splitter_touch),
 * and of every object released (rpl_splitter_forget). */
struct cdb_key;
typedef struct rpl_splitter rpl_splitter;
typedef struct rpl_split_arg {
    int set;                  /* the argument was set (else the launch runs whole) */
    size_t size;              /* as given to clSetKernelArg */
    const void *value;        /* as given to clSetKernelArg (NULL: __local) */
    uint64_t key;             /* memory arguments: the object's key (see above) */
} rpl_split_arg;
typedef struct rpl_split_launch {
    cl_command_queue q;       /* the application's queue */
    cl_uint dim;
    size_t off[3], gsz[3], lsz[3];   /* off 0 when not given */
    int has_lsz;              /* 0: the launch leaves the local size to the driver */
    cl_uint nwait;
    const cl_event *wait;
    unsigned nargs;           /* the kernel's arguments as set */
    const rpl_split_arg *args;
    cl_event *event;          /* when not NULL: a marker on q, complete with the launch */
} rpl_split_launch;
typedef struct rpl_split_stats {
    uint64_t launches;        /* launches run in parts */
    uint64_t parts;           /* parts run (on the queue's device and others) */
    uint64_t bytes_out, bytes_in, resident;   /* sent, brought back, already there */
    uint64_t fallback;        /* launches run whole: a part cannot run here (note) */
    uint64_t declined;        /* launches run whole: measured, the queue's device alone
                               * was faster (tried again every 16th launch) */
    uint64_t adapted;         /* launches whose proportions came from earlier ones */
    uint64_t learned;         /* parts' times the learn callback took */
    uint64_t built_ahead;     /* partition-ready kernels built by rpl_splitter_prepare */
    uint64_t built_late;      /* ... built at a launch (their time is in the launch's) */
    uint64_t programs;        /* programs built for them: one per source, options,
                               * kernel and device (splits of one kernel share it) */
    int64_t wait_ns;          /* split launches' wall time: waiting for earlier work, */
    int64_t send_ns;          /* ... sending other devices their bytes, */
    int64_t parts_ns;         /* ... from the first launch until the other devices'
                               * parts and their read-backs are done, */
    int64_t merge_ns;         /* ... then writing their results back, the queue's own
                               * parts done */
    int64_t launch_ns[RPL_SPLIT_LAUNCH_TIMES];   /* the first split launches' own wall
                               * times, from their inputs ready to their results back
                               * (how fast adaptive proportions settle) */
    unsigned nlaunch_ns;
    char note[320];           /* why the first launch run whole ran whole ("" when none) */
    char shares[320];         /* the last adapted proportions ("" when none) */
} rpl_split_stats;
/* How adaptive proportions are refined (rpl_splitter.c says more). */
enum { RPL_SPLIT_FIXED_POINT = 0,   /* each part's share in proportion to its measured rate */
       RPL_SPLIT_BROYDEN = 1 };     /* Newton steps with a Jacobian learned by secants */
typedef struct rpl_splitter_opts {
    int fixed;                /* keep the plan's proportions (no adaptation) */
    int method;               /* RPL_SPLIT_FIXED_POINT or RPL_SPLIT_BROYDEN */
    void *user;
    /* Every platform's functions by name (the ICD loader's, or the next
     * layer's). */
    void *(*lookup)(void *user, const char *name);
    /* Device of a spec (as --device takes it); NULL: rpl_device_pick. */
    int (*resolve)(void *user, const char *spec, cl_device_id *dev, cl_platform_id *plat, char *err, size_t cap);
    /* When not NULL: each part's kernel time, timed by its device (of
     * cost-database identity @p identity), over @p groups work-groups of
     * the launch @p key names (`clrr profile`'s key). @return 1 when it
     * was kept. */
    int (*learn)(void *user, const char *identity, const struct cdb_key *key, uint64_t groups, uint64_t ns);
} rpl_splitter_opts;

/*! rpl_splitter_new() : an engine; NULL out of memory. Creates nothing
 * until a launch needs it. */
rpl_splitter *rpl_splitter_new(const rpl_splitter_opts *o);
/*! rpl_splitter_free() : releases every context, queue, mirror and build. */
void rpl_splitter_free(rpl_splitter *x);
/*! rpl_splitter_run() : runs launch @p l as split @p sp. @return 0 with
 * *done 1: it ran, complete (every part's results in the application's
 * buffers); 0 with *done 0: nothing ran, the caller runs the launch as it
 * is (a part cannot run here: stats' note; or measured slower than the
 * queue's device alone); -1: an OpenCL call failed midway, why in @p err
 * (the launch's results are undefined); -2: out of memory. */
int rpl_splitter_run(rpl_splitter *x, const rpl_split *sp, const rpl_split_launch *l, int *done, char *err,
                     size_t cap);
/*! rpl_splitter_prepare() : builds split @p sp's partition-ready kernel
 * ahead, for its devices: in @p ctx for those of its devices that are
 * @p ctx's, in the engine's own contexts for the others (an application's
 * set-up, not its first split launch, pays for the builds). What fails is
 * said by the launch that needs it. */
void rpl_splitter_prepare(rpl_splitter *x, const rpl_split *sp, cl_context ctx);
/*! rpl_splitter_call() : call @p c (a recorded or live record: memory
 * objects by key) may have written memory: the versions of what it names
 * move (reads, maps, markers and barriers change nothing; a map's writes
 * come with its unmap). A kernel launch moves the keys @p kmems (its
 * memory arguments), or, with @p kmems NULL, every version. */
void rpl_splitter_call(rpl_splitter *x, const tf_call *c, const uint64_t *kmems, unsigned nkmems);
/*! rpl_splitter_wrote() : the object of @p key may have been written. */
void rpl_splitter_wrote(rpl_splitter *x, uint64_t key);
/*! rpl_splitter_touch() : any memory may have been written. */
void rpl_splitter_touch(rpl_splitter *x);
/*! rpl_splitter_forget() : the object of @p key is gone: its mirrors go. */
void rpl_splitter_forget(rpl_splitter *x, uint64_t key);
/*! rpl_splitter_stats() : counts since rpl_splitter_new. */
const rpl_split_stats *rpl_splitter_stats(const rpl_splitter *x);
/* Adaptive proportions: each part's last share and time (rpl_split_refine). */
#define RPL_SPLIT_MAX_PARTS 16
typedef struct rpl_split_history {
    int have;                 /* a launch was measured */
    uint64_t n[RPL_SPLIT_MAX_PARTS];   /* its parts' work-groups */
    double ns[RPL_SPLIT_MAX_PARTS];    /* and times */
} rpl_split_history;
/*! rpl_split_refine() : the proportions for the next launch of a split of
 * @p nparts parts (2..RPL_SPLIT_MAX_PARTS) over @p groups work-groups,
 * from the time @p ns each part took at the proportions in @p bound (part
 * p: work-groups [bound[p], bound[p+1]), bound[nparts] == groups), by
 * @p method; updates @p bound and @p h (zeroed before the first launch).
 * Unchanged while the parts took within 5% of each other; every part
 * keeps at least one work-group. Pure arithmetic (the engine's, exposed
 * for tests). */
void rpl_split_refine(uint64_t *bound, unsigned nparts, uint64_t groups, const double *ns, int method,
                      rpl_split_history *h);
/*! rpl_device_pick() : the device of @p spec (an index as `clrr devices`
 * numbers them, a type, "gpu1"/"cpu0", or part of a device or platform
 * name) among every platform's devices, through @p lookup. 0, or -1 with
 * why in @p err. */
int rpl_device_pick(void *(*lookup)(void *user, const char *name), void *user, const char *spec, cl_device_id *dev,
                    cl_platform_id *plat, char *err, size_t cap);

/* ---------------------------------------------------------------- lanes */

/* An in-order queue's commands over lanes (plan 1.8, "schedule";
 * plan/PLAN.md, "Schedules"): lane 0 is the queue itself, lane 1
 * (uploads) and lane 2 (downloads; with 2 lanes, downloads go to lane 1)
 * are queues of the engine's on the same context and device. The caller
 * routes each command (rpl_lanes_route), enqueues it on the queue and with
 * the wait list the route gives, and reports its event (rpl_lanes_done):
 * a command waits for the newest command of each other lane whose memory
 * it conflicts with, so every conflicting pair runs in the order enqueued.
 * A command enqueued on the queue without a route (a fused launch, a
 * split) is bracketed by rpl_lanes_join and rpl_lanes_joined. clFinish and
 * clFlush of the queue must be preceded by rpl_lanes_finish / _flush.
 * Used by the replay session and by the layer (`clrr run --plan`). Not
 * thread-safe: the caller serializes the calls of one queue's lanes. */
typedef struct rpl_lanes rpl_lanes;
#define RPL_LANES_MAX 3
/* Memory a command reads or writes: bytes [lo, hi) of @c root (a live
 * buffer as rpl_lanes_mem resolves it, or RPL_LANE_HOST: host addresses);
 * root NULL: everything. */
#define RPL_LANE_HOST ((const void *)1)
typedef struct rpl_access {
    const void *root;
    uint64_t lo, hi;
    uint8_t write;
} rpl_access;
/* A routed command: enqueue it on q with (nwait, wait). The rest is the
 * engine's, released by rpl_lanes_done. */
typedef struct rpl_lane_cmd {
    cl_command_queue q;
    cl_uint nwait;
    const cl_event *wait;     /* the command's own wait list, then the conflicts' events */
    unsigned lane;
    unsigned nacc;
    rpl_access *acc;
    cl_event *buf;
} rpl_lane_cmd;
typedef struct rpl_lanes_stats {
    uint64_t moved;           /* commands run on lanes 1 and 2 */
    uint64_t waits;           /* conflicts waited for across lanes */
    uint64_t joins;           /* unrouted commands of the queue that waited for the lanes */
    uint64_t folded;          /* times a lane's oldest commands were folded into one */
} rpl_lanes_stats;
/*! rpl_lanes_new() : lanes (2 or 3) for in-order queue @p q: creates the
 *  lanes' queues through @p lookup (the functions of the platform, or of the
 *  next layer), profiling when q profiles. NULL with why in @p err (q out
 *  of order, a queue that cannot be made, out of memory). */
rpl_lanes *rpl_lanes_new(void *(*lookup)(void *user, const char *name), void *user, cl_command_queue q,
                         unsigned nlanes, char *err, size_t cap);
/*! rpl_lanes_free() : waits for the lanes' queues and releases them (not
 *  q). Accepts NULL. */
void rpl_lanes_free(rpl_lanes *L);
/*! rpl_lanes_mem() : the access to bytes [lo, hi) of memory object @p m:
 *  a sub-buffer's bytes in its buffer's, an image of a buffer as any of
 *  the buffer's bytes (hi UINT64_MAX: to the end). */
void rpl_lanes_mem(rpl_lanes *L, cl_mem m, uint64_t lo, uint64_t hi, int write, rpl_access *out);
/*! rpl_lanes_route() : the queue and wait list of a command for @p lane
 *  that accesses @p acc (nacc 0: everything: markers, barriers, commands
 *  of unknown effect) and waits for @p wait. 0, or -1 out of memory. */
int rpl_lanes_route(rpl_lanes *L, unsigned lane, const rpl_access *acc, unsigned nacc, cl_uint nwait,
                    const cl_event *wait, rpl_lane_cmd *c);
/*! rpl_lanes_done() : the routed command was enqueued with event @p ev
 *  (retained while needed), or failed (ev NULL). 0, or -1 out of memory
 *  (the lane then forgets it: the caller must fail). */
int rpl_lanes_done(rpl_lanes *L, rpl_lane_cmd *c, cl_event ev);
/*! rpl_lanes_join() : before a command enqueued on q without a route: q
 *  waits for every lane's newest command (a barrier). 0, or -1. */
int rpl_lanes_join(rpl_lanes *L);
/*! rpl_lanes_joined() : after it: a marker on q stands for it, so that
 *  later lane commands wait for it. 0, or -1. */
int rpl_lanes_joined(rpl_lanes *L);
/*! rpl_lanes_flush() : flushes the lanes' queues (before q's clFlush). */
int rpl_lanes_flush(rpl_lanes *L);
/*! rpl_lanes_finish() : flushes q, waits for the lanes' queues, and
 *  forgets every command (before q's clFinish, which the caller makes). */
int rpl_lanes_finish(rpl_lanes *L);
/*! rpl_lanes_get_stats() : counts since rpl_lanes_new. */
const rpl_lanes_stats *rpl_lanes_get_stats(const rpl_lanes *L);

/* A coarsened kernel (plan 1.12, rewriter/rw.h rw_coarsen): it takes the
 * launch's own arguments and runs over its global size divided by
 * `factor` in dimension `dim`, with local size `local` (has_local 0: the
 * driver's). Built once per context (the cache of fused kernels, by id). */
typedef struct rpl_coarse {
    uint32_t id;              /* names the kernel across calls (a fused kernel's id never) */
    const char *name;         /* kernel name in source */
    const char *source;       /* the program (NUL-terminated) */
    const char *options;      /* build options */
    unsigned dim, factor;
    int has_local;
    size_t local[3];
} rpl_coarse;

typedef struct rpl_fused_kernel {
    uint32_t id;              /* names the kernel across calls (the build is cached) */
    const char *name;         /* kernel name in source */
    const char *source;       /* the program (NUL-terminated) */
    const char *options;      /* build options */
    unsigned nparams;
    const uint8_t (*params)[2];   /* per parameter: (held launch k / k = the number held: this
                                     launch, argument index) */
    unsigned launches;        /* the launches it does: the held ones and this one */
} rpl_fused_kernel;
typedef struct rpl_plan_hook {
    void *user;
    /* Called on the session's thread with each call right before it is
     * executed (every loop iteration), and with each late-data item (DATA)
     * the first iteration reads. @return RPL_PLAN_RUN, RPL_PLAN_DROP (calls
     * only), or a negative value: the session fails with "plan: out of
     * memory". The item is valid during the call. */
    int (*on_item)(void *user, const tf_item *it);
    /* Called when --loop starts another iteration from the top. May be NULL. */
    void (*on_rewind)(void *user);
    /* After on_item answered RPL_PLAN_FUSE: the kernel to run. 0, or -1
     * (the session fails). May be NULL when on_item never answers FUSE. */
    int (*fused)(void *user, rpl_fused_kernel *out);
    /* After on_item answered RPL_PLAN_SPLIT: the split. 0, or -1 (the
     * session fails). May be NULL when on_item never answers SPLIT. */
    int (*split)(void *user, rpl_split *out);
    /* The i-th split of the program whose source hashes to @p program
     * (0, or -1 when there is none): its partition-ready kernel is built
     * when the replay builds that program, outside the measured calls. May
     * be NULL. */
    int (*split_of)(void *user, const uint8_t program[16], size_t i, rpl_split *out);
    /* The lanes (2 or 3) the plan's schedule gives the @p queue-th command
     * queue the trace creates (from 0), 0 when none (rpl_lanes). May be
     * NULL. */
    unsigned (*lanes_of)(void *user, uint64_t queue);
    /* After on_item answered RPL_PLAN_LOCAL: the local size (work_dim
     * entries into @p lsz) the plan gives the launch on the device named
     * @p device (CL_DEVICE_NAME) with driver @p driver (CL_DRIVER_VERSION).
     * @return 1 with *lsz set, 0 when the plan did not measure that device
     * (the launch runs as recorded). May be NULL. */
    int (*local_size)(void *user, const char *device, const char *driver, size_t lsz[3]);
    /* After on_item answered RPL_PLAN_LOCAL, first: the coarsened kernel
     * (plan 1.12) the plan gives the launch on that device. @return 1 with
     * *out set, 0 when the plan does not coarsen it there (local_size is
     * asked then). May be NULL. */
    int (*coarsen)(void *user, const char *device, const char *driver, rpl_coarse *out);
    /* The staging the plan gives the transfers of queues on the device
     * named @p device with driver @p driver (plan 1.13): the least bytes of
     * a clEnqueueWriteBuffer, or of a blocking clEnqueueReadBuffer, whose
     * bytes go through pinned memory of the replay's (copied in before the
     * call, out after it, the copies counted in the call's time, as the
     * layer's stager copies them); 0: none. Asked once per queue, and once
     * per context for the blocks made ahead at its buffers' creation. May
     * be NULL. */
    uint64_t (*stage_min)(void *user, const char *device, const char *driver);
} rpl_plan_hook;
#define RPL_STAGE_PROBE ((uint64_t)512 << 10)   /* rpl_summary.large_transfers' least bytes: the layer's
                                                    staging's default (live/live_stage.c) */



/* ---------------------------------------------------------------- profile */

/* Cost learning (`clrr profile`, rpl_profile.c): while the trace replays as
 * usual (verified), the first launches of each distinct launch key
 * (program source hash, kernel name, dim, global size, local size) of
 * clEnqueueNDRangeKernel are measured on every selected device, on copies:
 * the application's queue is waited for, every memory argument is read
 * whole from the application's buffer, and the original program, built
 * from its recorded source and options, runs in a context and profiling
 * queue of the session's own per device (the queue's own device too) on
 * mirror buffers filled with those bytes. One warm-up launch at full size,
 * then a ladder of work-group counts along the highest dimension with at
 * least two work-groups (all, 3/4, 1/2, 1/4, ... down to 1), each run
 * `reps` times, timed by the device (CL_PROFILING_COMMAND_START/END);
 * every run is a sample of the cost database (costs/cdb.h). Each device's
 * host <-> device transfer cost is measured once, at rpl_open (pinned
 * host memory, sizes 4 KiB to 64 MiB). The database's device snapshot is
 * set to every device here, in `clrr devices` order. Launches that cannot
 * be measured (images, samplers, pipes, SVM pointers or device queues as
 * arguments, programs not made from source, a build that fails on a
 * device) are skipped, with a note. What the replay does and verifies does
 * not change. Not with exact_calls. */
struct cdb;
struct cdb_key;

/* One launch measured on one device (on_launch). Strings and the key live
 * until the callback returns. */
typedef struct rpl_profile_launch {
    uint64_t seq;             /* the clEnqueueNDRangeKernel call */
    const struct cdb_key *key;
    const char *device;       /* the spec that selected the device */
    const char *identity;     /* cdb_identity() of the device */
    uint64_t groups;          /* work-groups of the whole launch (work-items when
                               * the launch leaves the local size to the driver) */
    unsigned points;          /* work-group counts measured */
    unsigned samples;         /* samples added */
    int64_t full_ns;          /* median device time at full size; -1 when not measured */
    int stopped;              /* the ladder stopped at max_seconds */
} rpl_profile_launch;

typedef struct rpl_profile_opts {
    const char *const *devices;   /* device specs, as --device takes; NULL or 0:
                                   * every device here */
    unsigned ndevices;
    unsigned reps;            /* runs per work-group count (0 = 5) */
    unsigned launches;        /* launches measured per distinct key (0 = 1) */
    double max_seconds;       /* per launch and device, warm-up included (0 = 10):
                               * past it the ladder stops (fewer points or runs) */
    struct cdb *costs;        /* samples are added to it (required; the caller
                               * flushes and closes it, after rpl_close) */
    double timeout_s;         /* time budget (rpl_watchdog.c): 0 none (the default);
                               * > 0 the whole replay, open to close, in seconds;
                               * RPL_TIMEOUT_AUTO each call 60 s (builds 600 s) plus 20
                               * times as long as it took when recorded (100 on another
                               * device; the final waits: 60 s plus that many times the
                               * recorded span: rpl_watchdog.c). Past it, a thread of the
                               * session calls on_timeout, or prints the message on
                               * stderr, and ends the process with _exit(3): a driver
                               * call cannot be interrupted. */
    void *user;               /* passed to the callbacks */
    /* A one-line note ("launch #17 (nbody): skipped: image argument"), on
     * the session's thread; the string lives until it returns. May be NULL. */
    void (*on_note)(void *user, const char *line);
    /* A launch measured on a device. May be NULL. */
    void (*on_launch)(void *user, const rpl_profile_launch *l);
} rpl_profile_opts;

typedef struct rpl_profile_summary {
    unsigned ndevices;        /* devices profiled */
    const char *const *specs;       /* per device: its spec ("0", "1", ... by default) */
    const char *const *identities;  /* per device: cdb_identity() (owned by the session) */
    uint64_t launches;        /* launches measured (on at least one device) */
    uint64_t skipped;         /* launches among the first of their key not measured */
    uint64_t kernel_samples;  /* samples added: kernel times, */
    uint64_t xfer_samples;    /* ... transfers */
    uint64_t notes;           /* notes given */
} rpl_profile_summary;

/*! rpl_profile_get() : what profiling did so far (zeros when the session
 *  does not profile). Pointers are owned by @p s, valid until rpl_close. */
void rpl_profile_get(const rpl_session *s, rpl_profile_summary *out);

/* ------------------------------------------------------- defined bytes */

/* The verifier compares only the bytes of a read-back that something
 * defined (rpl_defined.c; docs/replay.md, "Undefined bytes"): for buffers
 * made without host data, what writes, fills, copies from defined bytes,
 * maps for writing and kernel launches defined before the read. A launch
 * defines, in each buffer set as its argument, the bytes a hint names, else
 * the whole buffer; padding of 3-component vectors it stores through a
 * `T3 *` argument stays undefined (the hint says so, else the driver's
 * argument info, which PoCL gives only with -cl-kernel-arg-info). Hints come from an analysis the replayer
 * does not link (clrr replay: the kernel analysis, analyzer/ana.h). */
typedef struct rpl_write_hint {
    uint64_t seq;             /* the launch (clEnqueueNDRangeKernel, clEnqueueTask) */
    uint64_t mem;             /* recorded id of a buffer among its arguments */
    uint64_t lo, hi;          /* the bytes [lo, hi) of it the launch may write;
                               * lo >= hi: none */
    uint32_t pad3;            /* it stores through a pointer to a 3-component vector
                               * of scalars of this size (the 4th is padding); 0 none */
} rpl_write_hint;

enum { RPL_LANES_AUTO = 0, RPL_LANES_ALWAYS = 1, RPL_LANES_OFF = 2 };
typedef struct rpl_opts {
    const char *device;       /* device spec: NULL = the recorded device, else the
                               * closest; "cpu"/"gpu"/"accelerator", an index into
                               * `clrr devices`, or a name substring */
    uint64_t first, last;     /* --range A:B (call sequence numbers, inclusive);
                               * 0,0 = the whole trace */
    uint64_t kernel;          /* --kernel: sequence number of a launch; 0 = none */
    unsigned loop;            /* run the range (or kernel) this many times; 0 = 1 */
    int timing;               /* profile queues; report every command through on_time */
    int exact_calls;          /* make exactly the recorded calls, nothing else:
                               * no own events, no device discovery (the recorded
                               * devices are bound positionally) */
    int verify;               /* compare read-backs (default 1; 0 = just execute) */
    rpl_tolerance tol;
    int strict;               /* compare every byte of every read-back, defined or not */
    const rpl_write_hint *write_hints;   /* sorted by seq, then mem (must outlive the
                                          * session); NULL: launches define their
                                          * buffers whole */
    size_t nwrite_hints;
    size_t max_memory;        /* bound on data held at once; 0 = 1 GiB */
    const rpl_plan_hook *plan;   /* a plan's matcher, or NULL (must outlive the session) */
    int lanes;                /* a plan's scheduled queues get lanes: RPL_LANES_AUTO (on
                               * devices without host-unified memory), _ALWAYS or _OFF */
    int probe_stage;          /* the summary's large_device, large_driver, large_unified
                               * asked of the driver (calls the trace does not hold;
                               * not with exact_calls): `clrr optimize --stage` */
    size_t pin_max;           /* pinned memory the lanes' transfers may hold (rpl_pin.c);
                               * 0 = 1 GiB; never more than max_memory */
    int split_fixed;          /* split launches keep the plan's proportions (no adaptation) */
    int split_method;         /* adaptive proportions: RPL_SPLIT_FIXED_POINT (default) or
                               * RPL_SPLIT_BROYDEN */
    struct cdb *learn;        /* when not NULL: each part of a split launch adds its measured
                               * kernel time there (costs/cdb.h; the caller flushes) */
    const rpl_profile_opts *profile;   /* measure launches into a cost database, or NULL
                                        * (must outlive the session); rpl_open fails with
                                        * RPL_ERR_ARG on a device spec that names no device */
    double timeout_s;         /* time budget (rpl_watchdog.c): 0 none (the default);
                               * > 0 the whole replay, open to close, in seconds;
                               * RPL_TIMEOUT_AUTO each call 60 s (builds 600 s) plus 20
                               * times as long as it took when recorded (100 on another
                               * device; the final waits: 60 s plus that many times the
                               * recorded span: rpl_watchdog.c). Past it, a thread of the
                               * session calls on_timeout, or prints the message on
                               * stderr, and ends the process with _exit(3): a driver
                               * call cannot be interrupted. */
    void *user;               /* passed to the callbacks */
    void (*on_mismatch)(void *user, const rpl_mismatch *m);
    void (*on_time)(void *user, const rpl_cmd_time *t);
    void (*on_progress)(void *user, uint64_t seq, uint64_t last_seq);
    /* the time budget ran out: called from the watchdog thread with one line
     * (no newline) just before _exit(3); it must only print */
    void (*on_timeout)(void *user, const char *msg);
} rpl_opts;
#define RPL_TIMEOUT_AUTO (-1.0)
#define RPL_TIMEOUT_EXIT 3

/* Where this process's replays are, for a supervisor in another process
 * (clrr's guard, tools/clrr/cli_guard.c, which maps it shared before it
 * forks the process that replays): stored before each call, so that when
 * the process dies (a driver fault, a trace's kernel writing outside its
 * buffers on a CPU device) the supervisor can say where. */
typedef struct rpl_where {
    volatile uint64_t seq;      /* the call started last (0: none yet) */
    volatile uint64_t launch;   /* the launch (NDRange, Task) started last (0: none) */
    char fn[64];                /* the function of seq */
    char launch_fn[32];         /* the function of launch */
    char kernel[128];           /* the kernel of launch (its recorded name) */
} rpl_where;
/*! rpl_set_where() : every replay session of this process stores where it
 *  is into @p w from now on (NULL: stop). @p w stays the caller's. Not
 *  thread-safe against running sessions: call it before any. */
void rpl_set_where(rpl_where *w);

/*! rpl_opts_init() : defaults (verify on, exact comparison, whole trace). */
void rpl_opts_init(rpl_opts *o);

/*! rpl_open() : opens the trace @p path and maps its devices onto the ones
 *  here (reading the ENV record). @p o is copied. On success *out owns the
 *  session (close it with rpl_close()). On failure *out is NULL and
 *  rpl_open_error() gives the message. */
rpl_status rpl_open(rpl_session **out, const char *path, const rpl_opts *o);
/*! rpl_open_error() : message of the last failed rpl_open() in this thread. */
const char *rpl_open_error(void);

/*! rpl_step() : executes the next item of the trace. When it produced a
 *  read-back, *rb (may be NULL) is filled and 1 is returned through
 *  *has_rb (may be NULL). @return RPL_OK, RPL_END, or an error (the session
 *  is then unusable except for rpl_error/rpl_summary/rpl_close). */
rpl_status rpl_step(rpl_session *s, rpl_readback *rb, int *has_rb);

/*! rpl_run() : rpl_step() until the end (all loops). @return RPL_OK or an error. */
rpl_status rpl_run(rpl_session *s);

/*! rpl_error() : message of the session's last error, "" if none. */
const char *rpl_error(const rpl_session *s);

typedef struct rpl_summary {
    uint64_t calls;           /* calls executed (all loops) */
    uint64_t commands;        /* enqueued commands executed */
    uint64_t kernels;         /* kernel launches executed */
    uint64_t bytes_in;        /* recorded data fed to the device */
    uint64_t bytes_out;       /* bytes read back */
    uint64_t readbacks;       /* read-backs compared with the recording */
    uint64_t mismatches;      /* ... that differed */
    uint64_t unverified;      /* read-backs with no recorded data to compare */
    uint64_t undefined_bytes; /* bytes of compared read-backs not compared: nothing
                               * defined them (rpl_write_hint; 0 with strict) */
    uint64_t undefined_readbacks;   /* ... read-backs with such bytes */
    uint64_t hashed;          /* read-backs recorded as hashes (--hash-reads), compared
                               * by hashing the live bytes: exact, whatever the tolerance */
    uint64_t skipped;         /* calls not executed (outside the range, unsupported notes) */
    uint64_t call_diffs;      /* queries and discovery calls whose result differed
                               * from the recording (not an error) */
    uint64_t user_events_early;   /* user events set before the call that set them
                                   * when recorded: a blocking call waited for them
                                   * (threads; replayer/rpl_events.c) */
    uint64_t plan_dropped;    /* commands a plan dropped (not counted in calls) */
    uint64_t plan_markers;    /* ... replaced by a marker for their event */
    uint64_t plan_fused;      /* launches a plan ran as a fused kernel (with the held one) */
    uint64_t plan_specialized;   /* launches a plan ran as a specialized kernel (1.7) */
    uint64_t plan_local;      /* launches a plan ran with a tuned local size (1.10) */
    uint64_t plan_local_unmeasured;   /* ... not: the plan did not measure this device */
    uint64_t plan_local_refused;      /* ... not: the tuned size is not legal here */
    uint64_t plan_coarsened;  /* launches a plan ran as a coarsened kernel (1.12) */
    uint64_t plan_coarsen_fallback;   /* ... not: it did not build, or its sizes do not fit
                                       * the launch here (run as recorded) */
    uint64_t plan_unheld;     /* held launches run as recorded (no fusion followed,
                               * or the fused kernel cannot be built here) */
    uint64_t plan_lane_queues;   /* queues run over lanes (a plan's schedule, 1.8) */
    uint64_t plan_lane_moved;    /* ... commands run on their upload and download lanes */
    uint64_t plan_lane_waits;    /* ... conflicts waited for across lanes */
    uint64_t plan_lane_joins;    /* ... other commands that waited for the lanes */
    uint64_t plan_lane_pinned;   /* ... transfers from and to pinned memory (rpl_pin.c) */
    uint64_t plan_lane_unpinned; /* ... large transfers that found no pinned block (ordinary memory) */
    uint64_t plan_lane_pin_evicted; /* ... free pinned blocks released to make room for another size */
    uint64_t plan_staged;        /* transfers a plan staged through pinned memory (1.13) */
    uint64_t plan_staged_bytes;  /* ... their bytes */
    uint64_t plan_stage_unpinned;   /* ... transfers it would stage that found no pinned block */
    uint64_t plan_stage_ahead;   /* ... blocks made ahead at buffer creation, as the layer makes them */
    uint64_t plan_stage_block_bytes;   /* ... the data bytes of the blocks made (ahead or at a transfer;
                                          the layer's stage_block_bytes) */
    /* the transfers a staging would take (buffer writes and blocking reads
     * of at least RPL_STAGE_PROBE bytes), and the device of the first one's
     * queue (what `clrr optimize` decides a staging for) */
    uint64_t large_transfers, large_bytes;
    char large_device[257], large_driver[257];   /* CL_DEVICE_NAME, CL_DRIVER_VERSION */
    int large_unified;        /* ... CL_DEVICE_HOST_UNIFIED_MEMORY */
    char plan_lane_note[320];    /* why a queue the schedule names runs without lanes ("" when none) */
    char plan_unbuilt[320];   /* "NAME: why" of the first fused kernel that could
                               * not be built here ("" when none) */
    rpl_split_stats split;    /* launches a plan ran in parts over several devices
                               * (split.launches), as the split engine counts them */
    int64_t wall_ns;          /* the whole session so far */
    int64_t exec_ns;          /* wall time inside enqueue/map/sync calls in the
                               * measured part (range/kernel; all loops) */
    int64_t exec_ns_loop_median;  /* median over loops of the per-loop exec time */
    int64_t device_ns;        /* summed device time (timing on) */
    unsigned loops;
    int truncated;            /* the trace ends in an incomplete chunk (a crashed
                               * or killed recording): only its complete part
                               * was replayed (known once the end is reached) */
    uint64_t valid_bytes, file_bytes;   /* the complete part, the whole file */
    char recorded_device[256];  /* "NAME (TYPE)" of the first recorded device */
    char device[256];         /* the device it was mapped to here */
} rpl_summary;

/*! rpl_summary() : counts and times so far. */
void rpl_get_summary(const rpl_session *s, rpl_summary *out);

/*! rpl_close() : releases every live object the session created, frees it.
 *  Accepts NULL. */
void rpl_close(rpl_session *s);

/* ------------------------------------------------------------------ tuning */

/* Work-group size tuning (rpl_tune.c, `clrr optimize --tune`): one launch
 * of a trace (call @p seq, a clEnqueueNDRangeKernel) replayed with its
 * exact recorded inputs (rpl_opts.kernel mode: everything before it runs
 * as recorded), on the device rpl_opts.device maps to. */
typedef struct rpl_tune_limits {
    char device[256];         /* CL_DEVICE_NAME of the queue's device */
    char driver[128];         /* CL_DRIVER_VERSION */
    char version[128];        /* CL_DEVICE_VERSION */
    char identity[512];       /* cdb_identity() of the device (costs/cdb.h) */
    char kernel[128];         /* the kernel's name */
    unsigned dim;             /* work_dim (1..3) */
    size_t global[3];
    int has_local;            /* the recording gave a local size */
    size_t local[3];          /* ... that one */
    size_t dev_max_wg;        /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    size_t dev_max_items[3];  /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
    size_t kernel_wg;         /* CL_KERNEL_WORK_GROUP_SIZE on that device */
    size_t pref_multiple;     /* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE */
    size_t reqd[3];           /* CL_KERNEL_COMPILE_WORK_GROUP_SIZE (0,0,0: none) */
    int hashable;             /* every memory argument is a buffer (outputs can be hashed) */
} rpl_tune_limits;

/*! rpl_tune_probe() : replays trace @p path up to launch @p seq (options
 *  @p o copied; kernel, loop, timing, verify and plan are set by it) and
 *  fills @p out with what the device and the kernel allow there. The
 *  launch itself runs as recorded. @return RPL_OK, or an error with one
 *  line in @p err. Thread-safe on different sessions. */
rpl_status rpl_tune_probe(const char *path, const rpl_opts *o, uint64_t seq, rpl_tune_limits *out, char *err,
                          size_t cap);
/*! rpl_tune_time() : replays up to launch @p seq, then runs it @p n x
 *  (1 + @p reps) more times in one session, candidate i = iteration % n
 *  (round robin: the candidates alternate), with local size @p cands[i]
 *  (a row whose first entry is 0: the recorded local size); the first
 *  round warms up (a driver may build per local size), the next @p reps
 *  rounds are timed by the device (profiling): ns[r * n + i] (-1 when a
 *  run has no device time). A candidate the driver refuses fails the
 *  call. @return RPL_OK, or an error with one line in @p err. */
rpl_status rpl_tune_time(const char *path, const rpl_opts *o, uint64_t seq, const size_t (*cands)[3], unsigned n,
                         unsigned reps, int64_t *ns, char *err, size_t cap);
/*! rpl_tune_hash() : replays up to launch @p seq, runs it once with local
 *  size @p lsz (NULL: the recorded one), waits, and hashes (XXH3-128) the
 *  contents of every memory argument of the launch afterwards into @p h.
 *  @return RPL_OK; RPL_ERR_UNSUPPORTED when an argument is not a buffer;
 *  another error; one line in @p err. */
rpl_status rpl_tune_hash(const char *path, const rpl_opts *o, uint64_t seq, const size_t *lsz, uint8_t h[16],
                         char *err, size_t cap);

/*! rpl_tune_coarse_hash() : rpl_tune_hash() with the launch run as the
 *  coarsened kernel @p co instead (its own program built in the launch's
 *  context, the launch's arguments, the global size divided). */
rpl_status rpl_tune_coarse_hash(const char *path, const rpl_opts *o, uint64_t seq, const rpl_coarse *co,
                                uint8_t h[16], char *err, size_t cap);
/*! rpl_tune_coarse_time() : rpl_tune_time() with two candidates: the
 *  launch as recorded (i = 0) and as the coarsened kernel @p co (i = 1),
 *  alternated; ns[r * 2 + i]. */
rpl_status rpl_tune_coarse_time(const char *path, const rpl_opts *o, uint64_t seq, const rpl_coarse *co,
                                unsigned reps, int64_t *ns, char *err, size_t cap);

/* ------------------------------------------------------------------- trim */

typedef struct rpl_trim_result {
    uint64_t calls_in;        /* calls in the input */
    uint64_t calls_out;       /* calls written (renumbered from 1) */
    uint64_t first_out;       /* number of the range's first call in the output */
    uint64_t kernel_out;      /* --kernel: number of the launch in the output */
    uint64_t state_objects;   /* memory objects whose contents were written at the start */
    uint64_t state_bytes;     /* ... and their bytes */
    uint64_t file_bytes;      /* size of the output */
} rpl_trim_result;

/*! rpl_trim() : writes to @p out_path a trace that replays on its own the
 *  calls @p o->first..@p o->last of @p in_path, or (@p o->kernel) one
 *  launch and the read-backs that follow it up to the next command that may
 *  change memory. It holds the calls before the range that build the
 *  objects the range uses (commands before the range, and objects released
 *  before it, are left out), then, for every memory object the range uses,
 *  its contents at the range start as computed by replaying up to it here,
 *  then the range. For --kernel, blocking reads of the kernel's memory
 *  arguments follow the launch, with the contents this replay produced, so
 *  that the trimmed trace verifies the kernel's outputs. Calls are
 *  renumbered from 1; a NOTE says where they came from. @p o->device picks
 *  the device used for the replay. @p out_path is created or truncated
 *  (removed on failure); it must not be @p in_path's file (RPL_ERR_ARG).
 *  Callers that want it whole or not at all pass a temporary (clrr trim
 *  does). @return RPL_OK or an error with a one-line message in @p err.
 *  Not thread-safe. */
rpl_status rpl_trim(const char *in_path, const char *out_path, const rpl_opts *o, rpl_trim_result *res,
                    char *err, size_t err_cap);

/* ------------------------------------------------------------------- peek */

/* A memory object's contents, as a replay computed them (rpl_peek). */
typedef struct rpl_peek_result {
    void *data;               /* malloc'ed: the caller frees it */
    size_t size;              /* bytes at data */
    int image;                /* an image: data is its whole region, rows and
                               * slices packed (no pitch) */
    size_t region[3];         /* images: width, height (or array size), depth (or
                               * array size); 1 for unused dimensions */
    size_t elem_size;         /* images: bytes per pixel */
    uint32_t channel_order, channel_type;   /* images: the format the driver reports */
    char device[256];         /* the device the replay ran on, "NAME (TYPE)" */
} rpl_peek_result;

/*! rpl_peek() : replays trace @p in_path (unverified, on @p o->device;
 *  @p o's range, kernel, loop, plan, profiling and callbacks are ignored)
 *  up to and including call @p at (calls in the order the trace holds
 *  them: the first call numbered above @p at is not executed), waits for
 *  every queue, and reads memory object @p id back whole: a buffer or
 *  sub-buffer, an image (every pixel, packed), or, with @p svm_size
 *  non-zero, the @p svm_size bytes of SVM at recorded address @p id.
 *  On RPL_OK *out holds the bytes (the caller frees out->data); on error
 *  out->data is NULL and @p err (capacity @p err_cap) holds one line:
 *  RPL_ERR_ARG when @p id is no such object alive at that point, the
 *  session's errors otherwise. Not thread-safe (one session). */
rpl_status rpl_peek(const char *in_path, const rpl_opts *o, uint64_t at, uint64_t id, uint64_t svm_size,
                    rpl_peek_result *out, char *err, size_t err_cap);
/*! rpl_peek_build_log() : replays @p in_path up to and including call
 *  @p at as rpl_peek() does, then asks the driver for the build log of
 *  program @p id on each of its devices here: "-- DEVICE NAME --\n" and the
 *  log, for each, as one NUL-terminated text in *log (malloc'ed: the caller
 *  frees it; a log is cut at 16 MiB). @return RPL_OK; RPL_ERR_ARG (one line
 *  in @p err) when @p id is no program alive at that point; the session's
 *  errors otherwise (*log NULL). Not thread-safe. */
rpl_status rpl_peek_build_log(const char *in_path, const rpl_opts *o, uint64_t at, uint64_t id, char **log, char *err,
                              size_t err_cap);

#ifdef __cplusplus
}
#endif
#endif /* CLRR_RPL_H */
