/* rec.h — the recorder: an OpenCL layer (OPENCL_LAYERS) or preload library
 * (LD_PRELOAD), built as libclrr.so, that records every OpenCL call and the
 * data it moves into a trace (trace-format/tf.h).
 *
 * The layer reads its settings from CLRR_* environment variables; `clrr
 * record` translates its options into them. Both come from the one table
 * below, so the struct, the environment parsing and the help text agree.
 */
#ifndef CLRR_REC_H
#define CLRR_REC_H

#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

#include "trace-format/tf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* REC_CONTROL(type, field, ENV suffix, long option, default, "doc")
 * type is one of: str, bool, int, u64, size (size accepts K/M/G suffixes),
 * stage (auto, writes, all or off).
 * The environment variable is "CLRR_" ENV; the option is "--" option. */
#define REC_CONTROLS(X) \
    X(str,  output,       OUTPUT,       "output",        "clrr.trace", \
      "trace file to write") \
    X(bool, capture_data, CAPTURE_DATA, "capture-data",  1, \
      "record buffer, image and SVM contents (0: calls only; replays cannot feed or verify data)") \
    X(int,  level,        LEVEL,        "level",         1, \
      "zstd compression level (1 fast ... 19 small; negative: faster still)") \
    X(bool, hash_reads,   HASH_READS,   "hash-reads",    0, \
      "record every read-back (reads, read maps) as its hash and length, not its bytes: a replay verifies it exactly (no tolerance, no byte diff)") \
    X(size, hash_reads_over, HASH_READS_OVER, "hash-reads-over", 0, \
      "record read-backs larger than this many bytes as hashes (e.g. 1M; 0: none)") \
    X(u64,  first_call,   FIRST_CALL,   "first-call",    0, \
      "first call number whose data is captured (0: from the start)") \
    X(u64,  last_call,    LAST_CALL,    "last-call",     0, \
      "last call number whose data is captured (0: to the end)") \
    X(size, memory,       MEMORY,       "memory",        268435456, \
      "memory the recorder may hold before the application waits (e.g. 256M)") \
    X(bool, device_timing, DEVICE_TIMING, "device-timing", 1, \
      "record the device time of enqueued commands (invisible to the application)") \
    X(u64,  timing_interval_us, TIMING_INTERVAL_US, "timing-interval-us", 10000, \
      "device timing: past a command kind's first 16 (a kernel's launches, one buffer's transfers), time at most one every N microseconds (0: every command)") \
    X(bool, tsc_clock,    TSC_CLOCK,    "tsc-clock",     1, \
      "read host times from the CPU's time-stamp counter, calibrated against CLOCK_MONOTONIC, where the kernel keeps time with it (0: clock_gettime at every call)") \
    X(int,  flush_ms,     FLUSH_MS,     "flush-ms",      200, \
      "periodic flush interval in milliseconds") \
    X(u64,  compress_threads, COMPRESS_THREADS, "compress-threads", 0, \
      "threads that compress the trace (0: three quarters of the online CPUs, at most 16)") \
    X(bool, quiet,        QUIET,        "quiet",         0, \
      "no recorder messages on stderr except errors") \
    X(str,  device,       DEVICE,       "device",        NULL, \
      "present this device as the application's first platform and device: an index of `clrr devices`, cpu, gpu, gpu1, or part of a device or platform name (docs/recording.md)") \
    X(stage, stage,       STAGE,        "stage",         "auto", \
      "buffer writes and reads of at least 512 KiB go through pinned memory of the layer's, copied by several threads (half the processors, at most 8; the driver's own staging of pageable memory copies on one core), while the recorder captures their bytes: auto (on devices without host-unified memory, with 2 or more copy threads), writes (reads run as made), all (every device), off (docs/recording.md)")

typedef struct rec_controls {
#define REC_CTL_FIELD_str  const char *
#define REC_CTL_FIELD_bool int
#define REC_CTL_FIELD_int  int
#define REC_CTL_FIELD_u64  uint64_t
#define REC_CTL_FIELD_size size_t
#define REC_CTL_FIELD_stage const char *
#define REC_CTL_DECLARE(type, field, env, opt, def, doc) REC_CTL_FIELD_##type field;
    REC_CONTROLS(REC_CTL_DECLARE)
#undef REC_CTL_DECLARE
} rec_controls;

/* Describes one control, for option parsing and help text. */
typedef struct rec_control_desc {
    const char *type;     /* "str", "bool", "int", "u64", "size" */
    const char *env;      /* full variable name, e.g. "CLRR_OUTPUT" */
    const char *option;   /* long option without dashes, e.g. "output" */
    const char *def;      /* default, as text */
    const char *doc;
} rec_control_desc;

/*! rec_control_table() : the controls, *n set to their count. Static data. */
const rec_control_desc *rec_control_table(size_t *n);

/*! rec_controls_defaults() : fills @p c with the defaults. */
void rec_controls_defaults(rec_controls *c);

/*! rec_controls_from_env() : defaults overridden by CLRR_* variables.
 *  @return 0, or -1 with a message in @p err (capacity @p errcap) naming the
 *  variable whose value is invalid. Strings point into the environment. */
int rec_controls_from_env(rec_controls *c, char *err, size_t errcap);

/*! rec_control_parse() : validates @p value for the control @p d.
 *  @return 0 when valid, -1 otherwise. Used by `clrr record` options. */
int rec_control_parse(const rec_control_desc *d, const char *value);

/* ================================================================ hooks
 *
 * The recorder's interface to plan mode (`clrr run --plan`, CLRR_PLAN).
 * The recorder knows nothing of plans: the module above it that runs them
 * in the application's process (live/, live/live.h) fills this table and
 * registers it with rec_hooks_set() from a constructor of libclrr.so,
 * before any OpenCL call. The recorder calls init once; only when it
 * answered 1 (plan mode) are the other hooks called, and none after the
 * hooks called rec_hooks_stop(). Without a registered table (a build of
 * the recorder alone) no run is in plan mode. Every pointer must be set.
 *
 * Locks: the recorder's record lock (tf_writer_lock) is never held when a
 * hook is called, except by the writer's sink (tf_writer_opts.sink, which
 * init sets): the sink runs under it, so a hook that takes a lock of its
 * own must never wait for the record lock while holding it (the order is:
 * the record lock, then the hooks' lock). */

/* A call as the apply hook sees it. */
typedef struct rec_hook_call {
    uint32_t fn;              /* REC_FN_* (build/gen/rec_gen.h) */
    uint64_t seq;             /* the call's number (its BEGIN record's) */
    int32_t ret_override;     /* apply answering skip 1: the call's result (cl_int) */
} rec_hook_call;

typedef struct rec_hooks {
    /* Once, at the recorder's initialization (under its pthread_once: the
     * thread of the application's first OpenCL call, or clInitLayer's), no
     * lock held, before any call is recorded. When it takes the run (plan
     * mode) it sets the writer's sink in @p o (tf_writer_opts: the writer
     * then writes no file) and *call_times (1: the time hook is called at
     * the end of every call). @return 1 (plan mode), 0 (no plan asked) or
     * -1 (the plan cannot be used: one line on stderr, and the application
     * runs as without clrr). */
    int (*init)(tf_writer_opts *o, int *call_times);
    /* Once, after init answered 1: whether transfers' data must be
     * captured (hashed); 0 turns capture off. */
    int (*needs_data)(void);
    /* Every call in plan mode, on the calling thread, right after its BEGIN
     * record, no lock held: 1 when the matcher asked this thread for
     * something (the generated entry point then calls apply); consumes the
     * request. Must be cheap. */
    int (*take)(void);
    /* Between the BEGIN record and the driver call of a call for which take
     * (or stage_on, for buffer writes and reads) answered 1, on the calling
     * thread, no lock held: runs or frees kept commands, then drops,
     * defers, holds, fuses, splits or stages the call. @p pa: the addresses
     * of the call's parameters (the generated a_ locals) in signature
     * order, or NULL for a call the generator gives none (then only kept
     * commands run). @p skip: the recorder's skip so far; @p can_skip: the
     * call returns a cl_int the hook may answer. @return the new skip (1:
     * the driver is not called, c->ret_override is the result). The hook
     * owns nothing of @p pa after it returns. */
    int (*apply)(rec_hook_call *c, void **pa, int skip, int can_skip);
    /* A clSetKernelArg that succeeded, on the calling thread, no lock held
     * (in plan mode such calls make no records): @p id is the handle id
     * the recorder gave the value (rec_handle_id), or 0 for bytes; @p value
     * is the application's and is read before the hook returns. */
    void (*karg)(cl_kernel kernel, cl_uint index, size_t size, const void *value, uint64_t id);
    /* Kernel @p kernel got an SVM pointer argument or exec info (calling
     * thread, no lock held). */
    void (*karg_opaque)(cl_kernel kernel);
    /* The application released its last reference to memory object @p id
     * (the releasing thread, no lock held). */
    void (*released)(uint64_t id);
    /* clGetEventInfo(CL_EVENT_COMMAND_TYPE) answered *type for @p event:
     * the hook may replace it (a marker standing for a command). Calling
     * thread, no lock held. */
    void (*event_type)(cl_event event, cl_command_type *type);
    /* The application released its last reference to @p event. */
    void (*event_released)(cl_event event);
    /* The application built @p program (calling thread, no lock held). */
    void (*program)(cl_program program);
    /* At process exit (atexit, before the writer closes), no lock held. */
    void (*end)(void);
    /* When init set *call_times: one call of @p fn took @p ns in the layer
     * (the driver included). Any thread, no lock held; must be cheap. */
    void (*time)(uint32_t fn, int64_t ns);
    /* Staged transfers: 0 when no transfer is ever staged (then apply is
     * not called for writes and reads that take did not ask for). Every
     * buffer write and read, calling thread, no lock held; must be cheap. */
    int (*stage_on)(void);
    /* The application made a user event / is about to wait (clFinish,
     * clWaitForEvents) / made a buffer of @p size bytes in @p context.
     * Calling thread, no lock held. */
    void (*stage_user_event)(void);
    void (*stage_wait)(void);
    void (*stage_buffer)(cl_context context, size_t size);
    /* A non-blocking read into host memory that the hooks did not make
     * (clEnqueueReadBufferRect, clEnqueueReadImage; clEnqueueReadBuffer in
     * record mode) fills [p, p + n) until event @p e completes (NULL: not
     * known): no write may be staged from there meanwhile. Calling thread,
     * no lock held. */
    void (*stage_filling)(const void *p, size_t n, cl_event e);
    /* Record mode (init answered 0), once, right after init: reads the
     * staging settings (CLRR_STAGE*); 1: buffer writes and reads may be
     * staged, and stage_write, stage_read, stage_buffer, stage_user_event
     * and stage_wait are then called as in plan mode. */
    int (*stage_record)(void);
    /* Record mode: a clEnqueueWriteBuffer / clEnqueueReadBuffer the
     * application made (its parameters), calling thread, no lock held,
     * the recorder's capture of a write's bytes possibly running beside it:
     * 1 when the hook made the transfer (staged), its status in *ret; 0:
     * nothing was enqueued, the recorder calls the driver. */
    int (*stage_write)(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size,
                       const void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event, cl_int *ret);
    /* The read's: with @p hold not NULL, the hook may keep the block the
     * bytes went through, setting *hold (else NULL) and *bytes (the
     * read-back's @p size bytes, unchanged until stage_release(*hold),
     * which any thread may call). */
    int (*stage_read)(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size,
                      void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event, cl_int *ret,
                      const void **bytes, void **hold);
    void (*stage_release)(void *hold);
} rec_hooks;

/*! rec_hooks_set() : registers @p h (static storage: the recorder keeps
 *  the pointer). Call from a constructor, before the recorder initializes;
 *  the last registration wins. Not thread-safe. */
void rec_hooks_set(const rec_hooks *h);
/*! rec_hooks_stop() : plan mode ends (called by the end hook): the
 *  recorder calls no hook after this. Any thread. */
void rec_hooks_stop(void);

/* What the hooks may use of the recorder. All thread-safe. */
struct rec_next_table;
/*! rec_next_layer() : the next layer's entry points (the loader's, or the
 *  library's under LD_PRELOAD; the type: build/gen/rec_gen.h), set before
 *  init is called; static storage. Calls through it are not recorded. */
const struct rec_next_table *rec_next_layer(void);
/*! rec_next_fn() : the next layer's entry point named @p name (an
 *  extension's too), or NULL. */
void *rec_next_fn(const char *name);
/*! rec_fn_sig() : the signature of function @p fn (REC_FN_*): its name and
 *  parameters as the trace records them; static storage. NULL out of range. */
const tf_sig *rec_fn_sig(uint32_t fn);
/*! rec_time_ns() : the recorder's clock (CLOCK_MONOTONIC nanoseconds, the
 *  times of the trace). */
int64_t rec_time_ns(void);
/*! rec_handle_id() : the trace id the recorder gave handle @p h (0 for
 *  NULL); rec_handle_mem_id() : the same when @p h is a memory object the
 *  recorder knows, else 0. */
uint64_t rec_handle_id(const void *h);
uint64_t rec_handle_mem_id(const void *h);
/* Kernel argument values up to this many bytes are recorded inline
 * (TF_BIN), longer ones as a blob reference (TF_BLOB). */
#define REC_KARG_INLINE_MAX 64

#ifdef __cplusplus
}
#endif
#endif /* CLRR_REC_H */
