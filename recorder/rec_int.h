/* rec_int.h — recorder internals shared by the generated entry points
 * (build/gen/rec_gen.c) and the hand-written runtime (recorder/rec_*.c,
 * recorder/hooks_*.c). Not a public header. */
#ifndef CLRR_REC_INT_H
#define CLRR_REC_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#include "recorder/rec.h"
#include "recorder/rec_clock.h"
#include "trace-format/tf_hot.h"
#include "rec_gen.h"
#include "api_sem.h"

#define REC_EXPORT __attribute__((visibility("default")))
#define REC_MAX_COUNT 65536u   /* longest array recorded element by element */
#define REC_INLINE_MAX 64      /* data up to this size is stored inline (bin), not as a blob */

/* Object kinds (handle types). */
enum rec_obj_kind {
    REC_OBJ_UNKNOWN = 0, REC_OBJ_PLATFORM, REC_OBJ_DEVICE, REC_OBJ_CONTEXT, REC_OBJ_QUEUE,
    REC_OBJ_MEM, REC_OBJ_PROGRAM, REC_OBJ_KERNEL, REC_OBJ_EVENT, REC_OBJ_SAMPLER,
    REC_OBJ_COMMAND_BUFFER, REC_OBJ_SEMAPHORE, REC_OBJ_MUTABLE_COMMAND, REC_OBJ_ACCELERATOR
};

/* Property list flavours for rec_enc_props(). */
enum rec_props { REC_PROPS_plain, REC_PROPS_context, REC_PROPS_queue, REC_PROPS_mem,
                 REC_PROPS_pipe, REC_PROPS_partition, REC_PROPS_sampler };

/* What one parameter's data slot holds (rec_call.in / .out). */
enum rec_slot_state {
    REC_SLOT_NONE = 0,     /* nothing set: encodes nil */
    REC_SLOT_NULL,         /* NULL pointer: nil */
    REC_SLOT_SKIPPED,      /* data exists but was not captured: false */
    REC_SLOT_BLOB,         /* blob store reference */
    REC_SLOT_INLINE,       /* small data copied into the slot: bin */
    REC_SLOT_UINT,         /* an integer (a handle id, an address): uint */
    REC_SLOT_BLOBS,        /* an array of blob references (heap, freed by rec_end_done) */
    REC_SLOT_DEFERRED,     /* captured later as a DATA record: nil */
    REC_SLOT_HASH          /* a read-back recorded as its hash and length (v.blob) */
};

typedef struct rec_slot {
    uint8_t state;
    uint32_t n;                     /* REC_SLOT_INLINE: bytes; REC_SLOT_BLOBS: count */
    union {
        tf_blobref blob;
        uint64_t u;
        uint8_t bytes[REC_INLINE_MAX];
        tf_blobref *blobs;
    } v;
} rec_slot;

/* Extra named data attached to a call (BEGIN "pre" / END "post" maps). */
#define REC_MAX_EXTRA 8
typedef struct rec_extra {
    char key[32];
    rec_slot slot;
    uint64_t *uints;                /* when set: an array of n uints (heap, freed) */
    tf_value *val;                  /* when set: this value tree, encoded as it is (one heap
                                       block holding the tree and its strings, freed) */
} rec_extra;

struct rec_call {
    uint32_t fn;
    int capture;                    /* data capture on for this call */
    uint64_t seq, tid;
    int64_t t0, t1;                 /* host times at BEGIN and END */
    int32_t ret_override;           /* answer of a pre hook that returned 1 */
    rec_slot in[16], out[16];       /* by parameter index */
    rec_extra pre[REC_MAX_EXTRA], post[REC_MAX_EXTRA];
    int npre, npost;
    tf_enc *e;                      /* the encoder while the record lock is held */
    uint64_t hook_u;                /* scratch for a pre hook to tell its post hook */
    const void *hook_p;
    tf_wticket *pend;               /* an input's capture running during the driver's call
                                       (rec_slot_fill_ov); set only by the entry points
                                       that call rec_cap_join */
    uint64_t scratch[64];           /* storage a pre hook hands to the driver */
    int plan;                       /* plan mode: the matcher asked for something (rec_plan_apply) */
    int timed;                      /* enqueue: its device time is recorded (rec_time_decide) */
    int own_event;                  /* enqueue: the application passed no event (set by
                                       rec_time_decide and rec_want_event) */
    uint32_t heap;                  /* bit i: in[i] holds heap memory (REC_SLOT_BLOBS), freed by rec_end_done */
    int direct;                     /* plan mode: the call reaches the matcher through its hooks,
                                       not as records (rec_begin and rec_end hand out a
                                       discarding encoder and take no lock) */
    tf_enc discard;
    uint8_t drop[128];              /* where the discarding encoder writes what it drops */
};

/* ----------------------------------------------------------- rec_core.c */
extern rec_next_table rec_next;
extern const tf_sig rec_gen_sigs[REC_FN_COUNT];

/* Recording state. Set once at initialization. */
typedef struct rec_state {
    rec_controls ctl;
    tf_writer *w;
    int active;                     /* recording */
    int layer_mode;
    int plan;                       /* plan mode (rec_hooks.c): a flag, so that a recording
                                       pays one load per call for it, not a call */
    int call_times;                 /* plan mode with a report: each call's time is summed
                                       per function (rec_plan_time) */
    int stage;                      /* record mode: buffer writes and reads may go through
                                       the layer's pinned blocks (rec_stage_record_init) */
    _Atomic uint64_t seq;           /* the last call number given */
    int seq_at_enter;               /* numbers are taken at entry, atomically (plan mode, a
                                       capture range); else under the record lock (rec_begin) */
    _Atomic int error_reported;
} rec_state;
extern rec_state rec_g;

/* The call path, in every generated entry point (inline, below):
 *   rec_enter       0: not recording, call through
 *   rec_begin       takes the record lock; writes SIG when first, the BEGIN head
 *   rec_begin_done  "pre" map, releases the lock
 *   rec_after       right after the driver returned
 *   rec_end
 *   rec_end_done    "post" map, releases the lock, frees slots */
void rec_preload_once(void);

/* ---------------------------------------------------------- rec_clock.c
 * The host clock of every recorded time: CLOCK_MONOTONIC nanoseconds, read
 * from the time-stamp counter where the kernel keeps time with it
 * (rec_clock.h, rec_clock.c). rec_clock_init(): at start, before any call
 * is recorded; @return the clock's name for the ENV record ("tsc",
 * "monotonic"). */
enum { REC_CLOCK_GETTIME = 0, REC_CLOCK_PENDING, REC_CLOCK_TSC };
typedef struct rec_clock_state {
    _Alignas(64) _Atomic uint32_t sq;   /* odd while a segment is written */
    _Atomic int mode;
    _Atomic uint64_t c0, mul, c1, rate, next;   /* the segment (rec_clock_seg), valid up to counter next */
    _Atomic int64_t n0;
} rec_clock_state;
extern rec_clock_state rec_clock;
const char *rec_clock_init(int want_tsc);
int64_t rec_clock_slow(void);

/* The current segment and the counter it holds up to, read under the
 * sequence count: 0 when an update overlapped (read again). */
static inline int rec_clock_snap(rec_clock_seg *s, uint64_t *next)
{
    uint32_t sq = atomic_load_explicit(&rec_clock.sq, memory_order_acquire);
    s->c0 = atomic_load_explicit(&rec_clock.c0, memory_order_relaxed);
    s->n0 = atomic_load_explicit(&rec_clock.n0, memory_order_relaxed);
    s->mul = atomic_load_explicit(&rec_clock.mul, memory_order_relaxed);
    s->c1 = atomic_load_explicit(&rec_clock.c1, memory_order_relaxed);
    s->rate = atomic_load_explicit(&rec_clock.rate, memory_order_relaxed);
    *next = atomic_load_explicit(&rec_clock.next, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return !(sq & 1) && atomic_load_explicit(&rec_clock.sq, memory_order_relaxed) == sq;
}

static inline int64_t rec_now_ns(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(atomic_load_explicit(&rec_clock.mode, memory_order_relaxed) == REC_CLOCK_TSC, 1)) {
        uint64_t c = __builtin_ia32_rdtsc(), next;
        rec_clock_seg s;
        if (rec_clock_snap(&s, &next) && (int64_t)(c - next) < 0)
            return rec_clock_at(&s, c);   /* a counter read before an update: continuous */
    }
#endif
    return rec_clock_slow();
}
/* Room for @p need elements of @p elem bytes in *arr (capacity *cap,
 * doubled). @return 0, or -1 out of memory (*arr unchanged). */
int rec_grow(void *arr, size_t *cap, size_t need, size_t elem);
void rec_report_writer_error(void);          /* one line on stderr, once */

/* Writes a NOTE record. */
void rec_note(uint64_t seq, const void *obj, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ----------------------------------------------------------- rec_hooks.c */
/* Plan mode, through the hook table a module above registers (rec.h,
 * "hooks"; live/ in libclrr.so): each of these calls the hook of the same
 * name, and the ones the hand-written hooks call only while rec_g.plan is
 * set. rec_plan_init(): @return 1 (plan mode: the sink set in @p o,
 * rec_g.plan and rec_g.call_times set), 0 (no plan, or no table) or -1
 * (the plan cannot be used: the recorder stays off). */
int rec_plan_init(tf_writer_opts *o);
int rec_plan_take(void);
int rec_plan_needs_data(void);
int rec_plan_apply(rec_call *c, void **pa, int skip, int can_skip);
void rec_plan_karg(cl_kernel k, cl_uint index, size_t size, const void *value, uint64_t id);
void rec_plan_karg_opaque(cl_kernel k);
void rec_plan_released(uint64_t id);
void rec_plan_event_type(cl_event ev, cl_command_type *type);
void rec_plan_event_released(cl_event ev);
void rec_plan_program(cl_program prog);
void rec_plan_end(void);
void rec_plan_time(uint32_t fn, int64_t ns);
int rec_stage_on(void);
void rec_stage_user_event(void);
void rec_stage_filling(const void *p, size_t n, cl_event e);   /* rec_hooks.stage_filling */
void rec_stage_wait(void);
void rec_stage_buffer(cl_context ctx, size_t size);
/* Record mode's staged transfers (rec_hooks.c): rec_stage_record_init()
 * sets rec_g.stage once, after rec_plan_init answered 0. The generated
 * clEnqueueWriteBuffer calls the driver through rec_xfer_clEnqueueWriteBuffer
 * (api.overlay `stage`), while its capture runs; rec_stage_read_call() is
 * the read's (rec_data.c rec_read_stage): 1 when it made the read, its
 * status in *ret, the bytes in @p ptr when it returns; with @p hold, the
 * layer may keep the block they came through (*hold, its bytes at *bytes)
 * until rec_stage_release(*hold). */
void rec_stage_record_init(void);
cl_int rec_xfer_clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size,
                                     const void *ptr, cl_uint nw, const cl_event *wl, cl_event *ev);
int rec_stage_read_call(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size, void *ptr,
                        cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *ret, const void **bytes, void **hold);
void rec_stage_release(void *hold);   /* a block rec_stage_read_call kept (NULL: nothing) */
extern _Atomic uint64_t rec_n_staged;   /* transfers staged (CLRR_REC_COUNTS) */

/* --------------------------------------------------------- rec_device.c */
/* The device override (CLRR_DEVICE; rec_device.c says what it answers).
 * rec_device_setup(): at initialization, after rec_next is filled and
 * before any call: with a spec, rec_next's clGetPlatformIDs,
 * clGetDeviceIDs and clCreateContextFromType become the override's (the
 * spec is resolved at the first of them). rec_device_real_fn(): the next
 * layer's own function of that name while overridden, else NULL.
 * rec_device_on(): 1 when a spec is set (resolving it now: call it
 * outside the record lock); rec_device_env(): then writes the ENV entry
 * "device_override". Thread-safe. */
void rec_device_setup(const char *spec);
void *rec_device_real_fn(const char *name);
int rec_device_on(void);
void rec_device_env(tf_enc *e);

/* -------------------------------------------------------- rec_signals.c */
/* Our handler for fatal signals (flush, then chain to the action it
 * replaced): installed at start, and again on top of a handler installed
 * later, found by rec_signals_check() at the end of calls: at most every
 * 100 ms, or now when @p force. Thread-safe. */
void rec_signals_install(void);
void rec_signals_check(int64_t now, int force);

/* ----------------------------------------------------------- rec_objs.c */
/* Handles become stable ids: a new id on first sight, dropped when the
 * application's reference count reaches zero. Thread-safe. */
/* Each thread keeps the ids it looked up last (rec_objs.c says why); the
 * lookup is inline, its miss is not. */
#define REC_IDC_BITS 4
#define REC_IDC (1u << REC_IDC_BITS)
typedef struct rec_idc {
    const void *h;
    uint64_t id, gen;
} rec_idc;
extern __thread rec_idc rec_idcache[REC_IDC];
extern _Atomic uint64_t rec_obj_gen;
uint64_t rec_obj_id_slow(const void *h, rec_idc *c, uint64_t gen);

static inline uint64_t rec_obj_id(const void *h)                /* 0 for NULL */
{
    if (!h)
        return 0;
    rec_idc *c = &rec_idcache[((uint64_t)(uintptr_t)h * 0x9E3779B97F4A7C15ull) >> (64 - REC_IDC_BITS)];
    uint64_t gen = atomic_load_explicit(&rec_obj_gen, memory_order_acquire);
    if (c->h == h && c->gen == gen)
        return c->id;
    return rec_obj_id_slow(h, c, gen);
}
uint64_t rec_obj_created(const void *h, unsigned kind);      /* a fresh object: new id */
/* A retain (+1) or release (-1) by the application (the generated
 * clRetain and clRelease entry points), counted before the driver call and
 * undone after it when the driver refused: once the driver frees an object,
 * another thread may get the same pointer from a create, which must get a
 * new id, and a release counted after the call would drop that new
 * object's entry instead. A release to zero unlinks the entry at begin (its
 * id is in the BEGIN record already written). */
typedef struct rec_obj_change {
    const void *h;
    int delta;                      /* 0: not counted (unknown, platform, root device) */
    void *detached;                 /* the unlinked entry, freed or restored at end */
} rec_obj_change;
void rec_obj_change_begin(rec_obj_change *ch, const void *h, int delta);
void rec_obj_change_end(rec_obj_change *ch, int ok);

/* Per-object facts hooks keep (all under the table's lock, copied out). */
typedef struct rec_obj_info {
    unsigned kind;
    uint64_t id;
    /* memory objects */
    size_t size;                    /* bytes (buffers), 0 if unknown */
    uint64_t flags;
    void *host_ptr;                 /* USE_HOST_PTR: the application's memory */
    size_t elem_size;               /* images: bytes per pixel */
    uint8_t host_hash[16];          /* last captured contents of host_ptr */
    int host_hash_valid;
    const void *host_queue;         /* USE_HOST_PTR: the queue of the last launch that had it
                                       as an argument, not known finished (hooks_mem.c) */
    /* queues */
    int app_profiling;              /* the application asked for profiling */
    int profiling;                  /* the queue has profiling (ours or theirs) */
    uint64_t props[16];             /* the application's property list (queues) */
    int nprops;                     /* -1: created without a list */
    /* events */
    const void *queue;
} rec_obj_info;
int rec_obj_get(const void *h, rec_obj_info *out);           /* 1 when known */
void rec_obj_set(const void *h, const rec_obj_info *in);     /* replaces (keeps id/kind) */
/* Kernel arguments. rec_kernel_set_arg(): @p arg, the value of argument
 * @p index when it is pointer-sized (else NULL); @return its id when it is
 * a live memory object, sampler or queue (recorded as a handle), else 0.
 * The kernel remembers its arguments that are host-pointer buffers, which
 * rec_kernel_host_mems() lists for the snapshots before a launch. */
uint64_t rec_kernel_set_arg(const void *kernel, unsigned index, const void *arg);
int rec_kernel_host_mems(const void *kernel, const void **mems, int max);
/* hooks_mem.c: the application made a user event (hooks_queue.c calls it):
 * from then on a snapshot of host-pointer memory never waits for a queue
 * (a command behind an unset user event would never finish). */
void rec_host_user_event(void);

/* ----------------------------------------------------------- rec_data.c */
size_t rec_cap_count(size_t n);
void rec_cap_in(rec_call *c, unsigned i, const void *p, size_t len);
void rec_cap_out(rec_call *c, unsigned i, const void *p, size_t len);
void rec_cap_complete(rec_call *c, unsigned i, const void *p, size_t len, cl_bool blocking,
                      cl_event ev);
/* Fills a slot from memory: inline, blob, or skipped when capture is off. */
void rec_slot_fill(rec_call *c, rec_slot *s, const void *p, size_t len);
/* Overlapped capture, for the host memory a call reads, in the entry points
 * of api.overlay's `overlap` lines (generated to set c->pend to NULL first): a blob of more than 1 MiB is copied and hashed by the
 * writer's workers while the driver runs (tf_writer_blob_begin), and
 * rec_cap_join, called after the driver returned and before the BEGIN
 * record is encoded, waits for it and fills the slot. Without a ticket
 * (small data, CLRR_REC_OVERLAP=0, plan mode, a capture range, a ticket
 * already pending in this call) the slot is filled at once
 * (rec_slot_fill). Same thread as the call. */
void rec_slot_fill_ov(rec_call *c, rec_slot *s, const void *p, size_t len);
void rec_cap_in_ov(rec_call *c, unsigned i, const void *p, size_t len);
void rec_cap_join(rec_call *c);
/* A blocking clEnqueueReadBuffer (the pre hook, hooks_mem.c) of at least
 * 8 MiB whose bytes are captured (not hashed), on an in-order queue, with
 * no event asked and none of ours (not timed), not in plan mode nor with a
 * capture range, CLRR_REC_PIPELINE_READS not 0: issued to the driver as
 * pieces of 4 MiB (at most 16; larger reads, larger pieces), non-blocking,
 * each with an event of ours, the application's wait list on the first;
 * as each completes its capture is started on the writer's workers (one
 * ticket, tf_writer_blob_open/avail), joined after the last. @return 1
 * when it made the call (the answer in c->ret_override: CL_SUCCESS, a
 * failed wait's status, or, when a later piece was refused, that of the
 * rest read at once in one blocking read; c->out[5] holds the read-back,
 * so that rec_cap_complete does not capture it again), 0 when the call
 * goes the plain way (nothing issued: also when the first piece is
 * refused). Same thread as the call; any number of threads at once. */
int rec_read_pipe(rec_call *c, cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size,
                  void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event);
/* rec_read_stage(): a clEnqueueReadBuffer staged in record mode
 * (rec_stage_read_call): 1 when the layer made it (its status in
 * c->ret_override; the bytes are in @p ptr, so rec_cap_complete captures
 * them at once, a non-blocking read's too: from the layer's block, kept
 * for it, by the background thread, rec_defer_held; from @p ptr when the
 * layer kept none), 0: not staged, nothing issued. */
int rec_read_stage(rec_call *c, cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size,
                   void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event);
/* CLRR_REC_COUNTS=FILE: at exit (rec_core.c's shutdown) appends a line
 * "overlapped_captures N pipelined_reads M staged_transfers S" to FILE,
 * how many captures overlapped the driver's call, how many reads went in
 * pieces and how many writes and reads were staged (for the tests and
 * benchmarks to see the paths ran). */
void rec_data_counts(void);
/* The same for a read-back: its hash when --hash-reads (or
 * --hash-reads-over, past the size) says so. */
void rec_slot_fill_read(rec_call *c, rec_slot *s, const void *p, size_t len);
/* The trace's optional feature bits the settings make it use (rec_open_writer). */
uint32_t rec_data_features(void);
void rec_enc_in(tf_enc *e, rec_call *c, unsigned i);
void rec_enc_out(tf_enc *e, rec_call *c, unsigned i);
void rec_enc_slot(tf_enc *e, const rec_slot *s);
static inline void rec_enc_handle(tf_enc *e, const void *h)
{
    tf_enc_uint(e, rec_obj_id(h));
}
void rec_enc_handle_new(tf_enc *e, const void *h, unsigned kind);
void rec_enc_props(tf_enc *e, const void *p, unsigned flavour);
void rec_enc_struct_cl_image_format(tf_enc *e, const cl_image_format *f);
void rec_enc_struct_cl_image_desc(tf_enc *e, const cl_image_desc *d);
void rec_enc_struct_cl_buffer_region(tf_enc *e, const cl_buffer_region *r);
/* Adds a named entry to the call's pre or post map. */
rec_extra *rec_extra_add(rec_call *c, int post, const char *key);
size_t rec_len_rect(const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch);
size_t rec_len_image(cl_mem image, const size_t *region, size_t row_pitch, size_t slice_pitch);
size_t rec_image_elem_size(const cl_image_format *f);

/* --------------------------------------------------------- rec_events.c */
/* rec_time_decide(): whether the command of @p c gets a device time (set
 * in c->timed; c->own_event cleared), from its kind: c->fn and @p key, its first object after
 * the queue (NULL when none). Called by every enqueue before the two below. */
void rec_time_decide(rec_call *c, const void *key);
/* Whether the recorder needs an event for this command when the
 * application passed none (device timing, or a non-blocking read-back);
 * called only then, it sets c->own_event. */
int rec_want_event(rec_call *c, cl_bool blocking);
/* Tracks an enqueued command's event: device times once complete, and the
 * release of a stand-in event (@p owned). */
void rec_track_event(rec_call *c, cl_event ev, int owned);
/* A read-back to capture when @p ev completes (non-blocking reads, maps). */
void rec_defer_capture(uint64_t seq, const char *key, cl_event ev, const void *p, size_t len);
/* rec_defer_held(): the read-back of call @p seq is the @p len bytes at
 * @p p, a staged read's block (rec_read_stage), which nothing changes
 * until rec_stage_release(@p hold): captured by the background thread (a
 * DATA record), not on the application's, which does not see the block;
 * then the block is released. */
void rec_defer_held(uint64_t seq, const char *key, const void *p, size_t len, void *hold);
/* Captures every completed deferred read-back and device time now. */
void rec_events_poll(int wait_all);
/* rec_reads_settle(): host memory [@p p, +@p len) that a call is about to
 * read (a write's source) may still be the target of a non-blocking read
 * or read map the application enqueued earlier: the command that reads it
 * runs after that read (the queue's order, or the application's events),
 * so its bytes are those the read brings. Waits for every such pending
 * read-back (unseen by the application: time only) and captures them, so
 * that the caller then captures the bytes the command will read. Once the
 * application has made a user event (a read waiting for one it sets after
 * this call would never complete) it only looks: reads still running are
 * left, and one warning says the bytes are recorded as they are. Nothing
 * pending: one atomic load. Thread-safe. */
void rec_reads_settle(const void *p, size_t len);
/* Whether the application has made a user event (hooks_mem.c). */
int rec_user_events_made(void);
void rec_events_start(void);
void rec_events_stop(void);
/* Fork (rec_core.c's pthread_atfork handlers): PREPARE takes the module's
 * locks (events: the poll lock, then the queue lock; objects: the table's),
 * PARENT and CHILD release them (the forking thread holds them in both
 * processes), so that the child never finds one held by a thread that was
 * not forked. Order: rec_core's device lock, events, objects, mapped
 * regions (hooks_map.c's table of live maps and SVM allocations). */
enum { REC_FORK_PREPARE, REC_FORK_PARENT, REC_FORK_CHILD };
void rec_events_atfork(int phase);
void rec_objs_atfork(int phase);
void rec_maps_atfork(int phase);

/* -------------------------------------------------------- hooks_query.c */
/* Query answers that are objects (CL_CONTEXT_DEVICES, CL_KERNEL_PROGRAM…)
 * are recorded as ids in the call's "post" map under "handles". */
void rec_query_handles(rec_call *c, int ok, cl_uint param_name, const void *value,
                       const size_t *size_ret);

/* -------------------------------------------------------- rec_gen.c glue */
void rec_gen_fill_dispatch(struct _cl_icd_dispatch *ours, const struct _cl_icd_dispatch *next);
void rec_gen_fill_next_dlsym(void);
void *rec_gen_ext_wrap(const char *name, void *next_fn);
/* The next implementation of @p name (NULL when none): unrecorded calls of our own. */
void *rec_gen_next_fn(const char *name);
int rec_ext_bind(void **slot, void *next_fn);

/* ------------------------------------------------ the call path, inline
 * Each generated entry point runs these once per call (rec_core.c has
 * their cold parts): inline, the call-heavy loop's setarg + launch costs
 * the layer fewer instructions than as calls into rec_core.c. */
extern _Atomic int rec_env_written;          /* rec_enter_slow ran (the environment record) */
extern __thread uint64_t rec_tid;            /* this thread's number, 0 before its first call */
extern _Atomic uint8_t rec_sig_written[REC_FN_COUNT];
extern _Atomic int64_t rec_sig_checked;      /* rec_signals.c: when the handlers were last looked at */
#define REC_SIG_CHECK_NS 100000000           /* 100 ms between looks (rec_signals.c) */
void rec_enter_slow(void);                   /* the environment record, once; this thread's number */
void rec_enc_extras_(tf_enc *e, rec_extra *x, int n);
void rec_end_free(rec_call *c);              /* heap slots and extras */
void rec_sync_flush(int64_t now);            /* a "sync" call: make the trace durable soon */

static inline int rec_enter(rec_call *c, unsigned fn)
{
    if (!rec_g.active)
        return 0;
    if (!atomic_load_explicit(&rec_env_written, memory_order_acquire) || !rec_tid)
        rec_enter_slow();
    c->fn = fn;
    c->tid = rec_tid;
    /* the call's number: here only when it is needed before the BEGIN
     * record (rec_begin says why) */
    c->seq = rec_g.seq_at_enter ? atomic_fetch_add(&rec_g.seq, 1) + 1 : 0;
    /* once the writer failed (disk full, file size limit) records are
     * dropped: data is not even hashed */
    c->capture = rec_g.ctl.capture_data
                 && (!rec_g.ctl.first_call || c->seq >= rec_g.ctl.first_call)
                 && (!rec_g.ctl.last_call || c->seq <= rec_g.ctl.last_call)
                 && tf_writer_status(rec_g.w) == TF_OK;
    c->npre = c->npost = 0;
    c->ret_override = 0;
    c->plan = 0;
    c->timed = 0;
    c->heap = 0;
    c->direct = 0;
    c->t0 = rec_now_ns();
    return 1;
}

static inline void rec_after(rec_call *c)
{
    (void)c;
    if (rec_g.w && tf_writer_status(rec_g.w) != TF_OK)
        rec_report_writer_error();
}

static inline tf_enc *rec_begin(rec_call *c)
{
    if (c->direct) {
        tf_enc_discard(&c->discard, c->drop, sizeof c->drop);
        return c->e = &c->discard;
    }
    tf_enc *e = tf_writer_lock(rec_g.w);
    /* Numbered under the record lock: every BEGIN is written under it, so
     * numbers are given in file order, and without a locked instruction of
     * their own (a full barrier on x86, which a GPU host measured as a
     * share of the layer's cost per call: bench/results/nvidia-h200-s20.md).
     * Hooks read c->seq only after this. */
    if (!c->seq) {
        c->seq = atomic_load_explicit(&rec_g.seq, memory_order_relaxed) + 1;
        atomic_store_explicit(&rec_g.seq, c->seq, memory_order_relaxed);
    }
    if (!atomic_load_explicit(&rec_sig_written[c->fn], memory_order_relaxed)) {
        tf_wrec_sig(e, &rec_gen_sigs[c->fn]);
        atomic_store(&rec_sig_written[c->fn], 1);
    }
    /* the head in one room check; then args (generated) and pre */
    uint8_t *p = tf_enc_reserve(e, TF_WREC_BEGIN_HEAD_MAX);
    if (p)
        e->p = tf_wrec_begin_put(p, c->seq, c->tid, rec_gen_sigs[c->fn].id, c->t0);
    return c->e = e;
}

/* Most calls have no extras: nil. */
static inline void rec_enc_extras(tf_enc *e, rec_extra *x, int n)
{
    if (!n)
        tf_enc_nil(e);
    else
        rec_enc_extras_(e, x, n);
}

static inline void rec_begin_done(rec_call *c)
{
    tf_enc *e = c->e;
    if (c->direct)
        return;   /* nothing asked: the matcher has not seen it yet (rec_plan_karg, post hook) */
    rec_enc_extras(e, c->pre, c->npre);
    tf_writer_unlock(rec_g.w);
    if (rec_g.plan) {
        c->plan = rec_plan_take() |
                  ((c->fn == REC_FN_clEnqueueWriteBuffer || c->fn == REC_FN_clEnqueueReadBuffer) && rec_stage_on());
        if (c->fn == REC_FN_clFinish || c->fn == REC_FN_clWaitForEvents)
            rec_stage_wait();
    } else if ((c->fn == REC_FN_clFinish || c->fn == REC_FN_clWaitForEvents) && rec_g.stage) {
        rec_stage_wait();
    }
}

static inline tf_enc *rec_end(rec_call *c)
{
    c->t1 = rec_now_ns();
    if (c->direct) {
        tf_enc_discard(&c->discard, c->drop, sizeof c->drop);
        return c->e = &c->discard;
    }
    tf_enc *e = tf_writer_lock(rec_g.w);
    uint8_t *p = tf_enc_reserve(e, TF_WREC_END_HEAD_MAX);   /* then ret, outs (generated), post */
    if (p)
        e->p = tf_wrec_end_put(p, c->seq, c->t1);
    return c->e = e;
}

static inline void rec_end_done(rec_call *c)
{
    tf_enc *e = c->e;
    if (!c->direct) {
        rec_enc_extras(e, c->post, c->npost);
        tf_writer_unlock(rec_g.w);
    }
    if (c->heap | c->npre | c->npost)
        rec_end_free(c);
    int64_t now = c->t1;   /* the call's end: a clock read fewer */
    if (rec_g.call_times)
        rec_plan_time(c->fn, now - c->t0);
    /* a slow call may have loaded code that installs signal handlers (PoCL
     * sets up LLVM's when it initializes): look again at once */
    int slow = now - c->t0 > 1000000;
    if (slow || now - atomic_load_explicit(&rec_sig_checked, memory_order_relaxed) >= REC_SIG_CHECK_NS)
        rec_signals_check(now, slow);
    if (api_sem_table[c->fn].cat & API_CAT_SYNC)   /* the application waited; make it durable soon */
        rec_sync_flush(now);
}

#endif
