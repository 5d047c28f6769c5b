/* live_layer_int.h — internals of the layer's plan mode (live_layer.c,
 * live_stage.c): what the two files share, and the functions the
 * recorder's hook table points to. Not a public header. */
#ifndef CLRR_LIVE_LAYER_INT_H
#define CLRR_LIVE_LAYER_INT_H

#include <stdio.h>

#include "live/live.h"
#include "recorder/rec.h"
#include "trace-format/tf.h"
#include "rec_gen.h"   /* the recorder's generated interface: REC_FN_*, rec_next_table */

/* ------------------------------------------------------------ the layer
 * Plan mode in the application's process (live_layer.c, live_stage.c).
 * The recorder calls these through its hook table (recorder/rec.h,
 * "hooks": which thread, which lock, who frees what); live_layer.c
 * registers it from a constructor. */

/* The next layer's entry points (the recorder's rec_next_layer), set by
 * live_plan_init before anything else runs. */
extern const rec_next_table *live_next;

/* live_layer.c: the matcher in the layer. Its tables, the matcher and the
 * feed reader are under its mutex (rp.mu); the writer's sink runs under
 * the record mutex (lock order: the record mutex, then rp.mu); the
 * matcher's answer goes to the calling thread through thread-local
 * storage. */
int live_plan_init(tf_writer_opts *o, int *call_times);
int live_plan_take(void);
int live_plan_needs_data(void);
int live_plan_apply(rec_hook_call *c, void **pa, int skip, int can_skip);
void live_plan_karg(cl_kernel k, cl_uint index, size_t size, const void *value, uint64_t id);
void live_plan_karg_opaque(cl_kernel k);
void live_plan_released(uint64_t id);
void live_plan_event_type(cl_event ev, cl_command_type *type);
void live_plan_event_released(cl_event ev);
void live_plan_program(cl_program prog);
void live_plan_end(void);
void live_plan_time(uint32_t fn, int64_t ns);

/* live_kcache.c: programs of the plan's generated kernels, built through
 * the kernel binary cache (costs/cdb.h). Called under rp.mu. */
typedef struct live_kc_stats {
    uint64_t hits;            /* made from a kept binary */
    uint64_t misses;          /* no entry: built from source (and kept) */
    uint64_t rebuilt;         /* an entry that was not one, or that the driver refused: built from source */
    uint64_t stored;          /* binaries kept */
    uint64_t store_errors;    /* binaries that could not be kept (the folder cannot be written) */
    uint64_t uncached;        /* contexts of several devices (or no cache folder): from source */
    int64_t build_ns;         /* building from source */
    int64_t load_ns;          /* making programs from kept binaries */
    int64_t saved_ns;         /* what the hits' builds took when they were made, less their loads */
} live_kc_stats;
/* The program of @p src built with @p options for every device of
 * @p ctx, through the cache, and its kernel @p name in *k (the caller
 * releases both); NULL (and *k NULL) when it does not build. */
cl_program live_kc_build(cl_context ctx, const char *src, const char *options, const char *name, cl_kernel *k);
const live_kc_stats *live_kc_get(void);

/* live_stage.c: staged transfers. Large buffer writes and reads on devices
 * without host-unified memory go through pinned blocks of the layer's,
 * copied by several threads (live_stage.c says how and when). Thread-safe
 * (its own mutex, rs.mu, taken after rp.mu when both are). */
void live_stage_init(void);                   /* reads CLRR_STAGE* */
/* plan mode, after live_stage_init: where CLRR_STAGE is not set, the
 * plan's measured decisions (staging, unstaged; @p p outlives the run)
 * decide for the devices they name, the rule for the others */
void live_stage_plan(const plan_file *p);
/* a non-blocking read that was not staged fills [p, p + n) until event
 * @p e completes (NULL: never learned): no write is staged from there
 * meanwhile (its early copy would miss the read's bytes) */
void live_stage_filling(const void *p, size_t n, cl_event e);
int live_stage_record(void);                  /* record mode: live_stage_init; 1 when staging is on */
int live_stage_on(void);                      /* 0: nothing is ever staged */
void live_stage_user_event(void);             /* the application made a user event */
void live_stage_wait(void);                   /* the application is about to wait (clFinish,
                                                 clWaitForEvents): are deferred copies done? */
/* The transfer, staged: @return 1 when it was done here (*ret: the driver's
 * answer, the application's event in *ev when ev), 0 when the caller must
 * make the call as the application made it. */
int live_stage_write(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size, const void *ptr,
                     cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *ret);
int live_stage_read(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size, void *ptr,
                    cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *ret);
/* live_stage_read with the block kept where *hold is not NULL on return
 * (the read succeeded): its bytes at *bytes, the read-back's, until
 * live_stage_release(*hold) (record mode's deferred capture). */
int live_stage_read_held(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size, void *ptr,
                         cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *ret, const void **bytes,
                         void **hold);
void live_stage_release(void *hold);
/* The application made a buffer of @p size bytes in @p ctx: where its
 * transfers will be staged, a block is made now, at set-up rather than in
 * the application's loop (up to 8 per context and block size, within the
 * cap). */
void live_stage_buffer(cl_context ctx, size_t size);
/* The report's members (JSON, no braces). */
void live_stage_report(FILE *f);

#endif /* CLRR_LIVE_LAYER_INT_H */
