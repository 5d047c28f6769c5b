/* rpl_int.h — replayer internals shared by the generated call table
 * (build/gen/rpl_gen.c) and the hand-written engine (replayer/rpl_*.c).
 * Not a public header. */
#ifndef CLRR_RPL_INT_H
#define CLRR_RPL_INT_H

#include <stdint.h>
#include <stddef.h>

#include "replayer/rpl.h"
#include "trace-format/tf.h"
#include "rpl_gen.h"

/* Object kinds, named as in the generator's handle kinds. */
enum rpl_obj_kind {
    RPL_OBJ_UNKNOWN = 0, RPL_OBJ_PLATFORM, RPL_OBJ_DEVICE, RPL_OBJ_CONTEXT, RPL_OBJ_QUEUE,
    RPL_OBJ_MEM, RPL_OBJ_PROGRAM, RPL_OBJ_KERNEL, RPL_OBJ_EVENT, RPL_OBJ_SAMPLER,
    RPL_OBJ_COMMAND_BUFFER, RPL_OBJ_SEMAPHORE, RPL_OBJ_MUTABLE_COMMAND, RPL_OBJ_ACCELERATOR
};

/* Array element kinds for rpl_in_array(). */
enum rpl_el { RPL_EL_VALUE, RPL_EL_HANDLE, RPL_EL_STRING, RPL_EL_PTR };
/* Property list flavours (as the recorder's). */
enum rpl_props { RPL_PROPS_plain, RPL_PROPS_context, RPL_PROPS_queue, RPL_PROPS_mem,
                 RPL_PROPS_pipe, RPL_PROPS_partition, RPL_PROPS_sampler };

#define RPL_CL_UNKNOWN (-9999)  /* failure without an error code (no errcode_ret) */
#define RPL_MAX_KARGS 64

/* ------------------------------------------------------------ objects */
typedef struct rpl_obj {
    uint64_t id;              /* recorded id */
    void *live;               /* live handle */
    uint8_t kind;
    uint8_t created;          /* created by a replayed call (reference counted) */
    uint8_t in_order;         /* queues */
    uint8_t user_unset;       /* a user event no replayed call has set */
    uint8_t user_early;       /* ... set early by the replay (rpl_events.c) */
    int32_t refs;             /* application references (created objects) */
    /* memory objects */
    void *host;               /* USE_HOST_PTR memory (owned when host_owned) */
    size_t host_size;
    uint8_t host_owned;
    size_t elem_size;         /* images: bytes per pixel */
    uint64_t writer_seq;      /* last launch that may have written it */
    uint64_t writer_kernel;   /* ... and its kernel id */
    /* kernels */
    char *name;
    uint64_t args[RPL_MAX_KARGS];   /* memory object id per argument, 0 if none */
    struct rpl_kargs *kargs;  /* the values last set, as handed to the runtime
                               * (kept while a plan may fuse: rpl_plan.c) */
    /* what the driver says the object allows (rpl_guard.c, asked once):
     * memory objects: size in bytes and image dimensions; kernels: the
     * size each argument takes (RPL_ARGSZ_*) */
    uint8_t guard_asked;
    uint64_t guard_size;      /* 0 unknown */
    uint64_t guard_dims[3];   /* images: width, height (or array size), depth (or array size); 0 unknown */
    uint32_t *guard_args;     /* kernels: [0] the count, then one per argument (malloc'ed) */
    /* rpl_defined.c: buffers: the bytes defined so far (NULL: all of them);
     * kernels: per argument, the scalar size of the 3-component vector a
     * pointer argument stores through ([0] the count; asked once) */
    struct rpl_def *def;
    uint8_t *pad3;
    uint8_t pad3_asked;
    /* queues, contexts: the plan's staging on their device (rpl_args.c; asked once) */
    uint8_t stage_asked;
    uint64_t stage_min;
    void *stage_dev;          /* contexts: the device it stages on */
} rpl_obj;
#define RPL_ARGSZ_UNKNOWN 0u
#define RPL_ARGSZ_LOCAL 0xFFFFFFFFu

/* rpl_guard.c: before call @p x is handed to the driver, what the trace
 * passes is checked against what the recorded objects allow (counts against
 * arrays, ranges against object sizes, launch sizes, kernel arguments,
 * objects alive). @return 0 go on; 1 the call failed when recorded and is
 * not made (its recorded error stands); negative: refused, the session
 * error names the call and the value. */
int rpl_guard(rpl_cx *x);
/* Frees what rpl_guard cached on @p o. */
void rpl_guard_forget(rpl_obj *o);
/* rpl_defined.c: defined bytes of buffers (the verifier skips the others).
 * rpl_defined_after: call @p x was executed (or a plan dropped it): its
 * memory effects define bytes. rpl_defined_readback: the undefined bytes of
 * the read-back of @p len bytes of @p mem that call @p x makes, as they are
 * now (*out NULL when every byte is defined; freed by rpl_undef_free).
 * rpl_undef_apply: copies the undefined bytes of @p actual over
 * @p expected (so that they compare equal; @p expected NULL: none),
 * @return their count.
 * rpl_defined_forget: frees what @p o holds; rpl_defined_free: what the
 * session holds (at close). */
struct rpl_undef;
void rpl_defined_after(rpl_cx *x);
int rpl_defined_readback(rpl_cx *x, uint64_t mem, size_t len, struct rpl_undef **out);
uint64_t rpl_undef_apply(const struct rpl_undef *u, void *expected, const void *actual, size_t n);
void rpl_undef_free(struct rpl_undef *u);
void rpl_defined_forget(rpl_obj *o);
void rpl_defined_free(rpl_session *s);
/* rpl_watchdog.c: the replay's time budget (rpl_opts.timeout_s).
 * rpl_watchdog_start at open (no thread when the budget is off);
 * rpl_watchdog_call before each call, rpl_watchdog_end before the final
 * waits; rpl_watchdog_stop at close. */
int rpl_watchdog_start(rpl_session *s);
void rpl_watchdog_call(rpl_session *s, const tf_call *c);
void rpl_watchdog_end(rpl_session *s);
void rpl_watchdog_stop(rpl_session *s);

rpl_obj *rpl_obj_find(rpl_session *s, uint64_t id);
rpl_obj *rpl_obj_by_live(rpl_session *s, const void *live);
/* Binds recorded @p id to @p live (replacing an earlier binding). NULL on ENOMEM. */
rpl_obj *rpl_obj_bind(rpl_session *s, uint64_t id, void *live, unsigned kind, int created);
void rpl_obj_unbind(rpl_session *s, rpl_obj *o);
/* The application released its last reference: forget the id (host memory
 * of USE_HOST_PTR buffers is kept until the session closes). */
void rpl_obj_retire(rpl_session *s, rpl_obj *o);
void rpl_objs_free(rpl_session *s);
/* Releases every object the replay still holds references to (close). */
void rpl_objs_release_all(rpl_session *s);
/* Sets every user event the replay made and no replayed call set to an
 * error status: at the end nothing else will, and the commands waiting for
 * it would keep the queues from finishing (a trace that stops, or fails,
 * before the application set it). No call when there is none. */
void rpl_user_events_abort(rpl_session *s);

/* Address maps: mapped regions and SVM allocations, recorded -> live. */
enum rpl_region_kind { RPL_REGION_MAP = 1, RPL_REGION_SVM = 2 };
/* A block of rows (row_bytes each, rows per slice, slices) laid out with
 * the recorded pitches in the trace and with other pitches in a live image
 * mapping: the recorded bytes of an image map are in the recorded layout. */
typedef struct rpl_pitched {
    size_t row_bytes, rows, slices;
    size_t rec_row, rec_slice;    /* recorded pitches */
    size_t live_row, live_slice;  /* live pitches */
} rpl_pitched;
/* bytes of the block in a layout with the given pitches */
size_t rpl_pitched_len(const rpl_pitched *g, size_t row, size_t slice);
/* copies the block: to_rec 1 live -> recorded layout, 0 recorded -> live */
void rpl_pitched_copy(const rpl_pitched *g, void *dst, const void *src, int to_rec);

typedef struct rpl_region {
    uint64_t rec;             /* recorded address */
    char *live;
    size_t size;
    uint64_t flags;           /* map flags */
    uint64_t mem;             /* memory object id (maps) */
    int kind;
    int pitched;              /* an image map whose live pitches differ */
    rpl_pitched geom;
} rpl_region;
int rpl_region_add(rpl_session *s, int kind, uint64_t rec, void *live, size_t size, uint64_t flags,
                   uint64_t mem);
rpl_region *rpl_region_find(rpl_session *s, int kind, uint64_t rec);   /* exact start */
void rpl_region_remove(rpl_session *s, rpl_region *r);
/* Translates a recorded address inside a map or SVM allocation; NULL if none. */
void *rpl_addr(rpl_session *s, uint64_t rec);
/* Like rpl_addr, when all of [rec, rec + len) lies in that one region;
 * NULL otherwise. */
void *rpl_addr_span(rpl_session *s, uint64_t rec, uint64_t len);

/* Every device here (rpl_devices.c), in `clrr devices` order. */
typedef struct rpl_live_dev {
    cl_platform_id plat;
    cl_device_id dev;
    cl_device_type type;
    char name[256], vendor[256], pname[256];
} rpl_live_dev;
/* Every platform's devices into *out (malloc'ed, *n of them): RPL_OK, or
 * an error with why in @p err. */
int rpl_devices_enumerate(const rpl_api_table *a, rpl_live_dev **out, unsigned *n, char *err, size_t cap);
/* The index in @p live of the device of @p spec (--device's rules), or -1
 * with "--device SPEC: why" in @p err. */
int rpl_devices_pick(const rpl_live_dev *live, unsigned n, const char *spec, char *err, size_t cap);
/* Device @p dev's identity (cdb_identity) into @p id, and its name,
 * platform name and type (rpl_cl.c). */
/* rpl_device_names: @p dev's CL_DEVICE_NAME and CL_DRIVER_VERSION ("" when
 * the driver does not say); rpl_queue_device: the same of queue @p q's
 * device, into *dev too (NULL when not known). @return 1 when both are
 * known. */
int rpl_device_names(const rpl_api_table *a, cl_device_id dev, char *name, size_t name_cap, char *drv, size_t drv_cap);
int rpl_queue_device(const rpl_api_table *a, cl_command_queue q, cl_device_id *dev, char *name, size_t name_cap,
                     char *drv, size_t drv_cap);
void rpl_device_describe(const rpl_api_table *a, cl_device_id dev, cl_platform_id plat, char *id, size_t id_cap,
                         char name[256], char pname[256], cl_device_type *type);
void rpl_device_identity_of(const rpl_api_table *a, cl_device_id dev, char *id, size_t cap);

/* ------------------------------------------------------------ one call */
struct rpl_cx {
    rpl_session *s;
    const tf_call *c;
    unsigned fn;
    const rpl_api_table *api;
    int recorded_ok;          /* the call succeeded when recorded */
    int64_t recorded_code;    /* its error code (cl_int), RPL_CL_UNKNOWN if none */
    int64_t host_ns;          /* wall time of the runtime call */
    cl_int ret_override;      /* a pre hook that answered the call itself */
    void *ret_handle;
    void *scratch;            /* allocations freed after the call */
    void *readback;           /* the read-back buffer (handed to the verifier) */
    cl_event cmd_event;       /* the command's event (app's or own) */
    int cmd_event_own;
    int no_verify;            /* read-backs of this call are not compared */
    int live_ok;              /* the call succeeded here (set by rpl_result) */
    void *host_pending;       /* USE_HOST_PTR memory no object owns yet (freed
                               * with the scratch when the create fails) */
    const rpl_pitched *pitched;   /* set around rpl_readback_submit: the live bytes
                                   * are repacked into the recorded layout */
    rpl_lanes *lanes;         /* the command was routed over these lanes (rpl_sched.c) */
    rpl_lane_cmd lane_cmd;
    int64_t stage_ns;         /* a staged write's copy into pinned memory (counted in host_ns) */
    size_t stage_out;         /* a staged read: bytes to copy out after the call (rpl_stage_out) */
    int stage_block;          /* a staged non-blocking read: made blocking (the generated call
                                 sets its blocking argument), as the layer's stager makes it */
};

#define RPL_TRY(expr)                          \
    do {                                       \
        int rpl_st_ = (expr);                  \
        if (rpl_st_ < 0)                       \
            return rpl_st_;                    \
    } while (0)

/* rpl_args.c: decoding of recorded arguments (the generated code's helpers).
 * Each returns RPL_OK or a negative status with the session error set. */
int rpl_in_isnil(rpl_cx *x, unsigned i);
int rpl_in_present(rpl_cx *x, unsigned i);    /* BEGIN true: the app passed a pointer */
int rpl_in_u64(rpl_cx *x, unsigned i, uint64_t *v);
int rpl_in_f64(rpl_cx *x, unsigned i, double *v);
int rpl_in_handle(rpl_cx *x, unsigned i, void **h);
int rpl_in_str(rpl_cx *x, unsigned i, const char **s);
int rpl_in_array(rpl_cx *x, unsigned i, int el, size_t elem_size, int elem_signed, void **arr);
/* Checks that input array @p i, when recorded, holds at least @p count
 * elements (the count the call passes along with it). */
int rpl_in_count(rpl_cx *x, unsigned i, uint64_t count);
int rpl_in_blob(rpl_cx *x, unsigned i, size_t len, const void **p);
int rpl_in_props(rpl_cx *x, unsigned i, int flavour, void **p);
int rpl_in_ptr(rpl_cx *x, unsigned i, void **p);
int rpl_in_struct_cl_image_format(rpl_cx *x, unsigned i, cl_image_format *f);
int rpl_in_struct_cl_image_desc(rpl_cx *x, unsigned i, cl_image_desc *d);
int rpl_in_struct_cl_buffer_region(rpl_cx *x, unsigned i, cl_buffer_region *r);
int rpl_out_alloc(rpl_cx *x, size_t n, size_t elem_size, void **p);
int rpl_readback_alloc(rpl_cx *x, size_t len, void **p);
int rpl_out_handle(rpl_cx *x, unsigned i, void *live, unsigned kind);
int rpl_out_handles(rpl_cx *x, unsigned i, void *const *live, size_t n, unsigned kind);
int rpl_out_query(rpl_cx *x, unsigned i, const void *value, size_t len);
int rpl_ret_handle(rpl_cx *x, void *live, unsigned kind);
int rpl_result(rpl_cx *x, int ok, cl_int code);
int rpl_need(rpl_cx *x, unsigned fn);
int rpl_want_event(rpl_cx *x);
int rpl_command_event(rpl_cx *x, cl_event ev, int own);
void rpl_obj_retained(rpl_cx *x, unsigned i);
void rpl_obj_released(rpl_cx *x, unsigned i);
int rpl_fail(rpl_cx *x, int status);
void rpl_noop_callback(void);
size_t rpl_len_rect(const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch);
size_t rpl_len_image(rpl_cx *x, cl_mem image, const size_t *region, size_t row_pitch, size_t slice_pitch);
size_t rpl_image_elem_size(const cl_image_format *f);
void *rpl_scratch(rpl_cx *x, size_t n);       /* zeroed, freed after the call; NULL: error set */
void rpl_scratch_free(rpl_cx *x);
/* Fetches a recorded data value (bin or blob) into new memory of @p len
 * bytes (malloc'd, zero-padded, caller frees). 0 when absent ("not
 * captured" / nil); negative on error. */
int rpl_fetch(rpl_session *s, const tf_value *v, size_t len, void **out, size_t *got);
int64_t rpl_clock_ns(void);
/* The recorded id of argument @p i (0 when nil). */
uint64_t rpl_arg_id(rpl_cx *x, unsigned i);

/* ------------------------------------------------------------ session */
typedef struct rpl_pending rpl_pending;
typedef struct rpl_devmap rpl_devmap;
typedef struct rpl_timed {
    uint64_t seq;
    unsigned fn, loop;
    char kernel[64];          /* kernel name for launches, "" otherwise */
    cl_event ev;              /* a reference we hold */
    int64_t host_ns;
} rpl_timed;

struct rpl_session {
    rpl_opts o;
    char path[1024];
    tf_reader *r;
    void *libcl;              /* dlopen handle of the ICD loader */
    rpl_api_table api;
    /* objects: open addressing on recorded id and on live handle */
    rpl_obj **by_id, **by_live;
    size_t cap, n, n_live;
    rpl_region *regions;
    size_t nregions, cap_regions;
    rpl_devmap *dm;
    /* signature id -> function (RPL_FN_*), -1 unknown, -2 not yet looked up */
    int *sig_fn;
    uint32_t nsig;
    /* verification */
    rpl_pending *pending;
    struct rpl_held *held;
    size_t nheld, cap_held;
    size_t npending;
    size_t pending_bytes;
    /* read-backs settled but not yet handed to rpl_step's caller (several
     * may settle in one step: two reads completed by one clFinish) */
    int want_rb;              /* the caller of rpl_step takes read-backs */
    struct rpl_settled *rbq;
    size_t rbq_head, rbq_n, rbq_cap;
    rpl_readback rb;          /* the one handed out last ... */
    void *rb_buf;             /* ... its bytes, freed at the next step */
    struct rpl_undef *rb_undef;   /* ... its undefined bytes, the same */
    char rb_what[16];
    int finished;             /* the end was reached and reported */
    /* programs from source and the binaries fetched from them (rpl_progsrc.c) */
    struct rpl_progsrc *psrc;
    size_t npsrc;
    /* phases: range [first, last]; kernel mode stops after the launch at the
     * first command that may modify memory */
    uint64_t first, last;
    int after;                /* past the measured part */
    int kernel_done;          /* kernel mode: the launch ran */
    unsigned iter;            /* loop iteration */
    int64_t iter_exec;        /* exec time of this iteration */
    int64_t *loop_exec;
    uint64_t *deferred;       /* loop mode: releases postponed to the end */
    size_t ndeferred, cap_deferred;
    /* timing */
    rpl_timed *timed;
    size_t ntimed, cap_timed;
    uint64_t *devtime_seq;
    int64_t *devtime_ns;
    size_t ndevtime, cap_devtime;
    /* trim: stop before the first call at or after pause_at (not executed) */
    uint64_t pause_at;
    int paused;
    tf_call paused_call;      /* valid until the next rpl_step */
    /* a launch a plan holds for fusion (rpl_plan.c) */
    struct rpl_held_launch *fuse_held[RPL_MAX_CHAIN];   /* held for a fusion, in order */
    unsigned nfuse_held;
    struct rpl_fused_build *fbuilds;
    rpl_splitter *split;      /* split launches' engine (rpl_splitter.c), made on first use */
    struct rpl_profile_state *prof;  /* cost learning (rpl_profile.c), NULL when off */
    size_t nfbuilds;
    /* user events blocking calls may wait for (rpl_events.c) */
    struct rpl_uev *uev;
    size_t nuev, cap_uev;
    /* queues with lanes (a plan's schedule, rpl_sched.c) */
    struct rpl_sched_q *sq;
    size_t nsq;
    struct rpl_pins *pins;    /* pinned memory for their transfers (rpl_pin.c), and for a plan's staging */
    unsigned char *stage_sink;   /* where a staged read's bytes are copied out (rpl_stage_out) */
    size_t stage_sink_cap;
    int made_user_event;      /* a clCreateUserEvent replayed: non-blocking reads are not staged
                                 (the layer's rule: such a read might wait for a later call) */
    uint64_t nqueues;         /* command queues created so far */
    size_t *uev_index;
    size_t cap_uev_index;
    struct rpl_watchdog *wd;  /* the time budget (rpl_watchdog.c), NULL when off */
    int def_off;              /* a call of unknown effects ran: every byte counts as defined */
    struct rpl_svmdef *svmdefs;   /* coarse-grained SVM allocations' defined bytes (rpl_defined.c) */
    size_t nsvmdefs, cap_svmdefs;
    int plan_local_pending;   /* the plan answered RPL_PLAN_LOCAL for the launch about to run */
    size_t local_buf[3];      /* the local size a launch runs with instead (rpl_tune.c) */
    size_t coarse_gsz[3];     /* the global size a coarsened launch runs with (rpl_tune.c) */
    struct rpl_tune_state *tune;   /* rpl_tune_* sessions (rpl_tune.c), NULL otherwise */
    /* state */
    int failed;
    int ended;
    int64_t t_open;
    rpl_summary sum;
    char err[2048];
};

/* Sets the session error: "call #N FUNC: message". @return status. */
int rpl_set_error(rpl_session *s, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int rpl_call_error(rpl_cx *x, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const rpl_opts *rpl_session_opts(rpl_session *s);
void rpl_count_bytes_in(rpl_session *s, uint64_t n);
void rpl_count_call_diff(rpl_session *s);
int rpl_measuring(rpl_session *s);            /* inside the range: timing and verification on */
int rpl_profiling(rpl_session *s);            /* queues get CL_QUEUE_PROFILING_ENABLE */
/* rpl_session.c, shared with rpl_trim.c */
int rpl_sig_fn(rpl_session *s, const tf_sig *sig);    /* RPL_FN_*, -1 unknown */
int rpl_is_cat(unsigned fn, unsigned cats);   /* any of API_CAT_* @p cats */
int rpl_modifies(unsigned fn, const tf_call *c);      /* may change device memory */
int rpl_exec(rpl_session *s, const tf_call *c, unsigned fn, int measure, int verify);
/* A call's context for executing @p c as function @p fn (verify 0: its
 * read-backs are not compared). */
void rpl_cx_init(rpl_cx *x, rpl_session *s, const tf_call *c, unsigned fn, int verify);

/* rpl_events.c: user events a blocking call waits for, set early when the
 * recording shows the call returned before their set came (threads).
 * rpl_uev_created: user event @p id was made; rpl_uev_before: right before
 * the runtime call; rpl_uev_after: the call succeeded. */
int rpl_uev_created(rpl_cx *x, uint64_t id);
int rpl_uev_before(rpl_cx *x);
int rpl_uev_after(rpl_cx *x);
void rpl_uev_free(rpl_session *s);

/* A launch's NDRange (rpl_plan.c): decoded from a clEnqueueNDRangeKernel. */
typedef struct rpl_launch {
    cl_command_queue q;
    cl_kernel k;
    uint64_t kernel_id;
    cl_uint dim;
    size_t off[3], gsz[3], lsz[3];   /* off 0 and lsz 0 when not given */
    int has_off, has_lsz;
} rpl_launch;
/* Decodes launch x->c; *wait points into x's scratch. */
int rpl_launch_decode(rpl_cx *x, rpl_launch *h, cl_uint *nwait, const cl_event **wait);
/* Builds @p source with @p options for @p dev in @p ctx and makes kernel
 * @p name: 0, or -1 with why in @p err (nothing is left). */
int rpl_build_kernel(const rpl_api_table *api, cl_context ctx, cl_device_id dev, const char *source, const char *options,
                     const char *name, cl_program *prog, cl_kernel *k, char *err, size_t cap);
/* rpl_split.c: a plan's split launch; *done 0 when it cannot run split here
 * (the session then runs the call as recorded). */
int rpl_split_run(rpl_session *s, const tf_call *c, const rpl_split *sp, int measure, int *done);
/* After call @p c ran: the versions of the memory it may have written move. */
void rpl_split_touch(rpl_session *s, const tf_call *c, unsigned fn);
/* A program was built: the partition-ready kernels of the plan's splits
 * made from it are built now (rpl_plan_hook.split_of). */
int rpl_split_prepare(rpl_session *s, cl_program prog);
void rpl_split_free(rpl_session *s);
/* rpl_devices.c: the live devices, in `clrr devices` order (0 when not
 * enumerated: exact-calls), and device @p i with its platform (-1 past the end). */
unsigned rpl_devmap_count(rpl_session *s);
int rpl_devmap_at(rpl_session *s, unsigned i, cl_device_id *dev, cl_platform_id *plat);
/* rpl_profile.c (rpl_opts.profile): rpl_profile_open at rpl_open (devices,
 * snapshot, transfers; RPL_ERR_ARG with a message in @p err when a spec
 * names no device); rpl_profile_kernel from clEnqueueNDRangeKernel's pre
 * hook, before the launch runs (RPL_OK, or RPL_ERR_NOMEM: nothing else
 * fails the replay); rpl_profile_free at close. */
int rpl_profile_open(rpl_session *s, char *err, size_t cap);
int rpl_profile_kernel(rpl_cx *x);
void rpl_profile_free(rpl_session *s);
/* rpl_devices.c: the live device @p spec names (as --device), and its platform. */
int rpl_devmap_resolve(rpl_session *s, const char *spec, cl_device_id *dev, cl_platform_id *plat, char *err,
                       size_t cap);

/* rpl_tune.c: from clEnqueueNDRangeKernel's pre hook: a plan's tuned
 * local size (rpl_plan_hook.local_size) or a tuning session's candidate
 * replaces *lsz when legal on the queue's device; the post hook hashes a
 * tuning session's outputs. RPL_OK or an error. */
int rpl_local_pre(rpl_cx *x, cl_command_queue q, cl_kernel *k, cl_uint dim, const size_t **gsz, const size_t **lsz);
/* rpl_plan.c: the coarsened kernel @p co built for queue @p q's context
 * (cached by id), with the arguments of kernel object @p ko set on it.
 * NULL with why in @p err. */
cl_kernel rpl_coarse_kernel(rpl_session *s, cl_command_queue q, const rpl_coarse *co, const rpl_obj *ko, char *err,
                            size_t cap);
int rpl_local_post(rpl_cx *x, int ok, cl_command_queue q, cl_int ret);

/* Kernel argument values as set (rpl_plan.c). */
typedef struct rpl_karg {
    size_t size;
    uint8_t set, has_value;
    uint8_t obj;              /* an object's handle: its RPL_OBJ_* kind; 0 for bytes */
    uint8_t *value;           /* size bytes (a memory object: its live handle) */
} rpl_karg;
typedef struct rpl_kargs {
    unsigned n;
    rpl_karg a[RPL_MAX_KARGS];
} rpl_kargs;
/* clSetKernelArg is about to set argument @p i of kernel object @p k
 * (recorded) to these bytes: remembered when the plan may fuse or split,
 * and when profiling. */
int rpl_kargs_note(rpl_session *s, rpl_obj *k, unsigned i, size_t size, const void *value);
void rpl_kargs_free(rpl_obj *o);
/* rpl_sched.c: a plan's schedule (1.8). The queue-th queue created gets
 * the lanes the plan asks for (rpl_sched_queue_created, from the create
 * hooks); each command the generated code enqueues on it is routed
 * (rpl_lane_pre before the call, rpl_lane_post after it), an enqueue
 * without a wait list bracketed (rpl_sched_join, _joined), clFinish
 * and clFlush cover the lanes (rpl_sched_sync). The plan's own enqueues
 * on such a queue are bracketed by rpl_sched_join and rpl_sched_joined. */
int rpl_sched_queue_created(rpl_session *s, cl_command_queue q);
void rpl_sched_queue_released(rpl_session *s, cl_command_queue q);
rpl_lanes *rpl_sched_lanes(rpl_session *s, cl_command_queue q);
void rpl_sched_free(rpl_session *s);
void rpl_sched_summary(const rpl_session *s, rpl_summary *out);   /* adds the live lanes' counts */
int rpl_lane_pre(rpl_cx *x, cl_command_queue *q, cl_uint *nwait, const cl_event **wait);
int rpl_lane_post(rpl_cx *x, int ok, cl_event ev);
int rpl_sched_join(rpl_session *s, cl_command_queue q);
int rpl_sched_joined(rpl_session *s, cl_command_queue q);
int rpl_sched_sync(rpl_cx *x, cl_command_queue q, int finish);
/* rpl_pin.c: pinned host memory for the transfers of queues with lanes.
 * rpl_pin_take: a block of at least @p size bytes in @p q's context, *pin
 * its handle for rpl_pin_give; NULL when there is none (ordinary memory
 * then). rpl_pin_free: at the session's end, after every chunk. */
void *rpl_pin_take(rpl_session *s, cl_command_queue q, size_t size, void **pin);
/* rpl_pin_take_staged: the same for a plan's staged transfer of @p len
 * bytes behind a chunk header of @p hdr: a block of the layer's size for
 * @p len (a power of two from RPL_STAGE_BLOCK_MIN) and the header, the
 * staging's blocks within the layer's RPL_STAGE_CAP. rpl_pin_ahead: a
 * buffer of @p len bytes, whose transfers take such blocks, was made in
 * @p ctx: for the first RPL_PIN_PREPARE such buffers per context and
 * block size, blocks of that size are made (mapped through a queue on
 * @p dev) until there is one per buffer and one more, as the layer's
 * stager makes them ahead (live/live_stage.c live_stage_buffer). Both add
 * the data bytes of the blocks they make to plan_stage_block_bytes.
 * @return the blocks made, or -1 (out of memory). */
void *rpl_pin_take_staged(rpl_session *s, cl_command_queue q, size_t hdr, size_t len, void **pin);
int rpl_pin_ahead(rpl_session *s, cl_context ctx, cl_device_id dev, size_t hdr, size_t len);
#define RPL_PIN_PREPARE 8u   /* the layer's RS_PREPARE */
void rpl_pin_give(void *pin);
void rpl_pin_stats(const rpl_session *s, uint64_t *taken, uint64_t *fallbacks, uint64_t *evicted);
void rpl_pin_free(rpl_session *s);

/* The held launch (if any) runs as recorded now. */
int rpl_plan_flush(rpl_session *s, int measure);
/* Releases the fused programs and a launch still held (close). */
void rpl_plan_free(rpl_session *s);

/* rpl_plan.c: a plan's hook (rpl_opts.plan). rpl_plan_call: before call @p c
 * executes; *dropped 1 when the plan dropped it (then it was handled here). */
int rpl_plan_call(rpl_session *s, const tf_call *c, unsigned fn, int measure, int *dropped);
int rpl_plan_data(rpl_session *s, const tf_data *d);
void rpl_plan_rewind(rpl_session *s);

/* rpl_devices.c: recorded devices and platforms -> live ones. */
int rpl_devmap_build(rpl_session *s, const tf_value *env, const char *spec, int exact, char *err, size_t cap);
/* a DEVICES item: the platform's recorded devices are bound (format 1.1) */
int rpl_devmap_devices(rpl_session *s, const tf_devices *d);
int rpl_devmap_remapped(rpl_session *s);      /* a recorded device is replayed on another */
void rpl_devmap_names(rpl_session *s, char *rec, size_t rec_cap, char *live, size_t live_cap);
/* rpl_progsrc.c: a device binary fetched from a program built from source
 * is rebuilt from that source on another device */
int rpl_progsrc_source(rpl_session *s, uint64_t prog, const char *src, size_t len);
int rpl_progsrc_built(rpl_session *s, uint64_t prog, const char *opts);
int rpl_progsrc_binaries(rpl_session *s, uint64_t prog, const tf_value *bins);
/* 1 with *out a program created from the source @p bins came from; 0 when
 * none is known (or it cannot be created: the binary goes on as recorded) */
int rpl_progsrc_substitute(rpl_cx *x, cl_context ctx, const tf_value *bins, cl_program *out);
/* the build options of a substituted program, or NULL */
const char *rpl_progsrc_options(rpl_session *s, uint64_t prog);
/* program @p prog (from source) was built here as live @p live */
void rpl_progsrc_live(rpl_session *s, uint64_t prog, void *live);
/* the program from source last built as live @p live: its source
 * (NUL-terminated), the options it was built with and tf_hash of its
 * recorded source bytes (when profiling); 0 when none is known */
int rpl_progsrc_of_live(rpl_session *s, const void *live, const char **src, const char **opts,
                        const uint8_t **hash);
/* before a build or compile of a program from source: the recorded headers
 * (and a compile's input headers: @p inames, @p iprogs, its recorded
 * header_include_names and input_headers, or NULL) inlined (a new live
 * program bound to its id, *program replaced), build options that name a
 * host file refused (rpl_progsrc.c); RPL_OK or an error */
int rpl_progsrc_prepare_build(rpl_cx *x, cl_program *program, const char **options, const tf_value *inames,
                              const tf_value *iprogs);
void rpl_progsrc_free(rpl_session *s);

/* the first queue names the devices of the summary (the one the application used) */
void rpl_devmap_note_queue(rpl_session *s, uint64_t rec_dev, cl_device_id live);
void rpl_devmap_free(rpl_session *s);

/* rpl_verify.c: read-backs, pending until complete and recorded. */
/* The call fails after the runtime made its event @p ev, before anything
 * (rpl_out_handle, rpl_command_event) took it over: rpl_exec releases it.
 * @return @p st. */
int rpl_event_orphaned(rpl_cx *x, cl_event ev, int st);
int rpl_readback_submit(rpl_cx *x, const char *what, uint64_t mem, void *buf, size_t len, int blocking,
                        cl_event ev, cl_command_queue q, const tf_value *expected);
/* The generated code's read-back: parameter @p i of an enqueue (queue is
 * argument 0, the memory object argument 1). Takes x->readback. */
int rpl_readback_out(rpl_cx *x, unsigned i, void *buf, size_t len, cl_bool blocking, cl_event ev);
int rpl_verify_data(rpl_session *s, const tf_data *d);      /* a DATA item */
int rpl_verify_queue_done(rpl_session *s, cl_command_queue q);
int rpl_verify_events_done(rpl_session *s, const cl_event *evs, size_t n);
int rpl_verify_flush(rpl_session *s, int wait);             /* end: everything left */
void rpl_verify_free(rpl_session *s);
/* Keeps @p chunks (a scratch list) until the command with event @p ev on
 * queue @p q is known complete (same triggers as read-backs). */
int rpl_hold(rpl_session *s, void *chunks, cl_command_queue q, cl_event ev);
void rpl_scratch_list_free(void *chunks);
/* Read-back buffers (rpl_args.c): a block can join a call's scratch list. */
void *rpl_block_alloc(size_t len);
void rpl_block_free(void *data);
void rpl_block_to_scratch(rpl_cx *x, void *data);
/* After a staged read (x->stage_out bytes in pinned memory; a non-blocking
 * one made blocking, x->stage_block, while no user event was made): the
 * copy out that the layer's stager makes into the application's memory,
 * timed into x->host_ns. RPL_OK or RPL_ERR_NOMEM. */
int rpl_stage_out(rpl_cx *x);
/* After a clCreateBuffer of @p size bytes in @p ctx: when the plan stages
 * on the context's device, the blocks the layer's stager makes ahead for
 * it (rpl_pin_ahead, within RPL_STAGE_CAP), their time in x->stage_ns
 * (rpl_exec counts it as OpenCL time: the live run pays it). RPL_OK or
 * RPL_ERR_NOMEM. */
int rpl_stage_buffer(rpl_cx *x, cl_context ctx, size_t size);
#define RPL_STAGE_CAP ((size_t)256 << 20)   /* the layer's CLRR_STAGE_CAP default */
#define RPL_STAGE_BLOCK_MIN ((size_t)1 << 20)   /* the layer's least block (RS_BLOCK_MIN) */
/* Notes that launch @p seq of kernel @p kernel_id may write its memory arguments. */
void rpl_note_launch(rpl_session *s, uint64_t seq, rpl_obj *kernel);
/* The last read-back this step produced (for rpl_step's rb). */
int rpl_take_readback(rpl_session *s, rpl_readback *rb);   /* 1: one was queued */
void rpl_readbacks_free(rpl_session *s);

#endif
