/* live_layer.c — the layer in plan mode (`clrr run --plan`, CLRR_PLAN).
 *
 * The application's calls go through the same generated entry points as
 * when recording, and are encoded as the same records; but the writer is
 * in sink mode (trace-format/tf.h): each record is decoded at once by a
 * feed reader and given to the plan matcher (live/live.h, "live"),
 * which sees every call as it begins, with its inputs, and again when it
 * ends. So the patterns, occurrences and memory facts of a live run are
 * computed by the code that made the plan from the recording.
 *
 * For a call about to run the matcher answers run, drop (a redundant
 * transfer), defer (dead work: kept here, with its arguments, data and
 * objects, until the matcher says to run it or to free it), hold (the
 * producer of a fusion) or fuse (run the plan's fused kernel with the held
 * producer's arguments and the consumer's), or split (run the launch in
 * parts over several devices through the replay engine's split engine,
 * replayer/rpl.h, on the application's own buffers; the engine learns
 * from every call seen here which memory may have changed, so that what
 * another device still holds is not sent again). The generated entry points
 * call live_plan_apply() between the BEGIN record and the driver call when
 * the matcher asked for anything (c->plan). Everything the application
 * observes is what a run without the plan gives: a dropped or kept
 * command's event is a marker with its wait list; a kept command runs
 * before anything that may read its results.
 *
 * Locking: the matcher, the feed reader and the tables here are under
 * rp.mu; the sink runs under the writer's record mutex (lock order: the
 * record mutex, then rp.mu). The matcher's answer goes to the calling
 * thread through thread-local storage. */
#include "live/live_layer_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "costs/cdb.h"
#include "live/live.h"
#include "plan/plan.h"
#include "recorder/rec.h"
#include "replayer/rpl.h"

const rec_next_table *live_next;   /* the recorder's next layer (rec_next_layer) */
static int rp_on;                  /* plan mode (init succeeded; end not reached) */
static int rp_call_times;          /* each call's time is summed (CLRR_PLAN_REPORT) */

/* A command the plan says to defer, or a held producer launch. */
typedef struct rp_arg {
    size_t size;
    int null;                 /* arg_value was NULL (__local) */
    uint8_t *bytes;
    size_t cap;               /* bytes' allocation, kept for the kernel's next value */
} rp_arg;

typedef struct rp_kept {
    uint64_t seq;
    unsigned fn;              /* REC_FN_* */
    cl_command_queue q;
    cl_kernel k;              /* launches: the kernel, retained; it runs as a clone
                                 with the arguments as set then (args) */
    cl_uint dim;
    size_t gwo[3], gws[3], lws[3];
    int has_gwo, has_lws;
    cl_mem a, b;              /* writes/fills: a; copies: a = src, b = dst */
    size_t off, off2, size, psize;
    void *data;               /* writes: the bytes; fills: the pattern */
    cl_event *wait;
    cl_uint nwait;
    rp_arg *args;             /* launches: the arguments as set then */
    unsigned nargs;
    cl_mem *mems;             /* launches: the memory arguments, retained (the application
                                 may release them before the launch runs) */
    unsigned nmems;
} rp_kept;

typedef struct rp_kargs {
    cl_kernel k;
    unsigned n;
    rp_arg *a;
    cl_uint total;            /* CL_KERNEL_NUM_ARGS (0: not asked yet) */
    int opaque;               /* SVM pointer arguments or exec info: not kept */
} rp_kargs;

typedef struct rp_blank {   /* a buffer of the layer's that nothing writes */
    cl_context ctx;
    cl_mem mem;
    size_t size;
} rp_blank;

typedef struct rp_fused {
    cl_context ctx;
    uint32_t id;
    cl_program prog;
    cl_kernel k;              /* NULL: it did not build here */
} rp_fused;

#define RP_MAX_BLANK 16             /* blank buffers (rp_blank_get), at most */
#define RP_BLANK_CAP ((size_t)256 << 20)   /* and their bytes, at most */

static struct {
    pthread_mutex_t mu;
    int broken;
    plan_file *plan;
    live_exec *x;
    tf_reader *feed;
    const char *report;
    rp_kept *kept;
    size_t nkept, capkept;
    rp_kept held[PLAN_CHAIN_MAX];   /* launches held for a fusion, in order */
    unsigned nheld;
    rp_kargs *kargs;
    size_t nkargs, capkargs;
    rp_fused *fused;
    size_t nfused, capfused;
    rp_blank blank[RP_MAX_BLANK];
    unsigned nblank;
    size_t blank_bytes;
    uint64_t blank_launches;   /* fused launches given a blank buffer for an intermediate */
    uint64_t blank_params;     /* and their parameters given it */
    uint64_t dropped, deferred, fused_launches, spec_launches, unbuilt, unkept;
    uint64_t local_launches;   /* launches run with a tuned local size (plan 1.10) */
    uint64_t local_unmeasured; /* ... not: the plan did not measure their device */
    uint64_t local_refused;    /* ... not: the driver refused the tuned size (ran as made) */
    uint64_t co_launches;      /* launches run as a coarsened kernel (plan 1.12) */
    uint64_t co_fallback;      /* ... not: it did not build or the driver refused it (ran as made) */
    plan_fused *co_views;      /* per coarsened kernel: it as a fused launch of one (made on first use) */
    cl_device_id local_dev;    /* the last device looked up, and whether the plan's */
    char local_name[256], local_driver[128];
    int64_t build_ns, match_ns;   /* building fused kernels; decoding and matching calls */
    int64_t hold_ns, fuse_ns;     /* keeping held launches; running fused launches (their
                                     arguments, the enqueue, freeing what was held) */
    int64_t unhold_ns;            /* ... of which freeing the held launches (the last
                                     references to what the application released: on an
                                     H200 geomatrix's 7 temporaries, 36-70 us an iteration;
                                     freed by another thread they cost the run as much) */
    int64_t init_ns, end_ns;  /* the layer's set-up (reading and checking the plan) and exit */
    int no_learn;             /* CLRR_NO_LEARN: nothing goes to the cost database */
    int needs_data;           /* the plan drops redundant transfers: data is hashed */
    int has_splits, split_fixed;   /* the plan splits launches; keep its proportions */
    int split_method;         /* RPL_SPLIT_FIXED_POINT, or RPL_SPLIT_BROYDEN (CLRR_SPLIT_METHOD=broyden) */
    rpl_splitter *sx;         /* split launches' engine, made at the first one */
    uint64_t split_errors;    /* split launches that failed midway (run again as made) */
    int64_t split_build_ns;   /* building partition-ready kernels (at the application's builds) */
    cdb *learn;               /* split parts' times go to this machine's cost database */
    struct rp_standin { cl_event ev; cl_command_type type; } *standins;   /* markers standing for
                                 commands, and the command each stands for */
    size_t nstandins, capstandins;
    /* the trust gate (plan/PLAN.md, "Trust"): the plan verified here, on these devices */
    int gate;                 /* 1: generated kernels run only on a device the record names */
    char key[PLAN_TRUST_KEY_CAP];
    char verified_on[512];    /* the record's devices, for the line that says why not */
    struct rp_trusted { cl_device_id dev; int ok; } trusted[16];   /* devices asked, and the answer */
    unsigned ntrusted;
    uint64_t untrusted;       /* generated kernels not used: their device is not verified */
} rp = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Whether plan kernels may run on device @p d: no gate (--trust-plan), or
 * the record names its CL_DEVICE_NAME (caller holds rp.mu). */
static int rp_dev_trusted(cl_device_id d)
{
    if (!rp.gate)
        return 1;
    for (unsigned i = 0; i < rp.ntrusted; i++)
        if (rp.trusted[i].dev == d)
            return rp.trusted[i].ok;
    char name[256] = "";
    int ok = live_next->clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, NULL) == CL_SUCCESS &&
             (plan_trust_lookup(rp.key, name, NULL, 0) || plan_trust_lookup(rp.key, "*", NULL, 0));
    if (!ok)
        fprintf(stderr, "clrr: plan mode: the plan was verified on %s, not on %s: its generated kernels run as "
                "the application's (clrr plan verify PLAN TRACE --device ..., or --trust-plan)\n",
                rp.verified_on, name[0] ? name : "this device");
    if (rp.ntrusted < sizeof rp.trusted / sizeof rp.trusted[0])
        rp.trusted[rp.ntrusted++] = (struct rp_trusted){d, ok};
    return ok;
}

/* Whether every device of context @p ctx may run plan kernels (caller holds rp.mu). */
static int rp_ctx_trusted(cl_context ctx)
{
    cl_device_id devs[16];
    size_t n = 0;
    if (!rp.gate)
        return 1;
    if (live_next->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs, &n) != CL_SUCCESS || !n ||
        n > sizeof devs)
        return 0;
    for (size_t i = 0; i < n / sizeof devs[0]; i++)
        if (!rp_dev_trusted(devs[i]))
            return 0;
    return 1;
}

static rpl_splitter *rp_engine(void);

/* A buffer of at least @p size bytes in @p ctx that nothing ever writes
 * (made the first time; kept for the process's life), or NULL. It stands
 * for an intermediate buffer a fused kernel does not store (fresh_param of
 * live_answer): the elements the kernel loads from it hold what a
 * buffer nobody wrote holds, on whatever driver, and the launch does not
 * make the driver allocate the intermediate. Caller holds rp.mu. */
static cl_mem rp_blank_get(cl_context ctx, size_t size)
{
    rp_blank *best = NULL;
    for (unsigned i = 0; i < rp.nblank; i++)
        if (rp.blank[i].ctx == ctx && rp.blank[i].size >= size && (!best || rp.blank[i].size < best->size))
            best = &rp.blank[i];
    if (best)
        return best->mem;
    if (rp.nblank == RP_MAX_BLANK || size > RP_BLANK_CAP - rp.blank_bytes)
        return NULL;   /* (the application's own buffer then, as without) */
    cl_int e = CL_SUCCESS;
    cl_mem m = live_next->clCreateBuffer(ctx, CL_MEM_READ_ONLY, size, NULL, &e);
    if (!m || e != CL_SUCCESS)
        return NULL;
    rp.blank[rp.nblank++] = (rp_blank){ctx, m, size};
    rp.blank_bytes += size;
    return m;
}

/* Where a reported run spends its time: per function, its calls and their
 * time in the layer, the driver included (live_plan_time). */
static _Atomic uint64_t rp_time_n[REC_FN_COUNT];
static _Atomic int64_t rp_time_ns[REC_FN_COUNT];

void live_plan_time(uint32_t fn, int64_t ns)
{
    if (fn >= REC_FN_COUNT)
        return;
    atomic_fetch_add_explicit(&rp_time_n[fn], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&rp_time_ns[fn], ns, memory_order_relaxed);
}

static void rp_time_report(FILE *f)
{
    fputs(", \"call_us\": {", f);
    int first = 1;
    for (uint32_t fn = 0; fn < REC_FN_COUNT; fn++) {
        uint64_t n = atomic_load(&rp_time_n[fn]);
        if (!n)
            continue;
        fprintf(f, "%s\"%s\": [%llu, %lld]", first ? "" : ", ", rec_fn_sig(fn)->name, (unsigned long long)n,
                (long long)(atomic_load(&rp_time_ns[fn]) / 1000));
        first = 0;
    }
    fputc('}', f);
}

/* The answer for the calling thread. */
static __thread struct {
    int pending;
    int verdict;
    uint64_t *force, *discard;
    size_t nforce, ndiscard, capforce, capdiscard;
    uint32_t keep_held;       /* live_answer's */
    uint32_t nfresh;
    uint8_t fresh[PLAN_CHAIN_MAX];
    uint64_t fresh_size;
} rp_tls;

static void rp_broken(const char *what)
{
    if (!rp.broken)
        fprintf(stderr, "clrr: plan mode stops (%s); the application goes on without the plan\n", what);
    rp.broken = 1;
}

static int rp_copy_list(uint64_t **dst, size_t *n, size_t *cap, const uint64_t *src, size_t k)
{
    if (plan_grow((void **)dst, cap, k, sizeof **dst))
        return -1;
    if (k)
        memcpy(*dst, src, k * sizeof *src);
    *n = k;
    return 0;
}

static void rp_take_answer(const live_answer *a)
{
    if (rp_copy_list(&rp_tls.force, &rp_tls.nforce, &rp_tls.capforce, a->force, a->nforce) ||
        rp_copy_list(&rp_tls.discard, &rp_tls.ndiscard, &rp_tls.capdiscard, a->discard, a->ndiscard)) {
        rp_broken("out of memory");
        return;
    }
    rp_tls.verdict = a->verdict;
    rp_tls.keep_held = a->keep_held;
    rp_tls.nfresh = a->nfresh;
    memcpy(rp_tls.fresh, a->fresh, sizeof rp_tls.fresh);
    rp_tls.fresh_size = a->fresh_size;
    rp_tls.pending = a->verdict != LIVE_RUN || a->nforce || a->ndiscard || a->keep_held;
}

/* The writer's sink: every record of the run, in order. */
static void rp_sink(void *ctx, const void *rec, size_t len)
{
    (void)ctx;
    tf_item it;
    pthread_mutex_lock(&rp.mu);
    if (rp.broken) {
        pthread_mutex_unlock(&rp.mu);
        return;
    }
    int64_t t0 = rec_time_ns();
    const uint8_t *p = rec, *end = p + len;
    while (p < end && !rp.broken) {
        size_t used = 0;
        tf_status st = tf_reader_feed(rp.feed, p, (size_t)(end - p), &used, &it);
        p += used;
        if (st == TF_OK && it.type == TF_ITEM_BEGIN) {
            live_answer a;
            if (live_exec_begin(rp.x, &it.u.call, &a) != PLAN_OK) {
                rp_broken("out of memory");
            } else {
                rp_take_answer(&a);
                /* what it may write is no longer what other devices hold
                 * (a launch split here moves its own versions) */
                if (a.verdict != LIVE_SPLIT)
                    rpl_splitter_call(rp.sx, &it.u.call, NULL, 0);
            }
        } else if (st == TF_OK) {
            if (live_exec_item(rp.x, &it) < 0)
                rp_broken("out of memory");
        } else if (st != TF_END) {
            rp_broken(tf_reader_error(rp.feed));
        }
    }
    rp.match_ns += rec_time_ns() - t0;
    pthread_mutex_unlock(&rp.mu);
}

int live_plan_take(void)
{
    int p = rp_tls.pending;
    rp_tls.pending = 0;
    if (!p) {   /* nothing asked for this call: live_plan_apply may still run it (staged) */
        rp_tls.verdict = LIVE_RUN;
        rp_tls.nforce = rp_tls.ndiscard = 0;
        rp_tls.keep_held = 0;
        rp_tls.nfresh = 0;
    }
    return p;
}

/* ------------------------------------------------------------ set-up */

int live_plan_needs_data(void)
{
    return rp.needs_data;
}

int live_plan_init(tf_writer_opts *o, int *call_times)
{
    live_next = rec_next_layer();
    const char *path = getenv("CLRR_PLAN");
    if (!path || !*path)
        return 0;
    int64_t init_t0 = rec_time_ns();
    char err[512];
    plan_status st = plan_read_keyed(path, &rp.plan, rp.key, err, sizeof err);
    if (st != PLAN_OK) {
        fprintf(stderr, "clrr: cannot use plan %s: %s; the application runs without it\n", path,
                st == PLAN_ERR_IO ? "cannot read it" : err);
        return -1;
    }
    /* the trust gate: by the bytes read here (whatever `clrr run` checked) */
    const char *trust = getenv("CLRR_TRUST_PLAN");
    rp.gate = !(trust && *trust && strcmp(trust, "0"));
    if (rp.gate && !plan_trust_lookup(rp.key, NULL, rp.verified_on, sizeof rp.verified_on)) {
        fprintf(stderr, "clrr: plan %s not verified here: run clrr plan verify %s TRACE, or pass --trust-plan; "
                "the application runs without it\n", path, path);
        plan_free(rp.plan);
        rp.plan = NULL;
        return -1;
    }
    tf_reader_opts fo = {.trusted_feed = 1};   /* our own writer's records */
    if (live_exec_open_live(rp.plan, &rp.x, err, sizeof err) != PLAN_OK || tf_reader_open_feed(&rp.feed, &fo) != TF_OK) {
        fprintf(stderr, "clrr: plan mode: out of memory; the application runs without the plan\n");
        live_exec_close(rp.x);
        plan_free(rp.plan);
        return -1;
    }
    const plan_pass_result *red = plan_get_pass(rp.plan, PLAN_PASS_REDUNDANT);
    rp.needs_data = red && red->transformations;
    rp.has_splits = plan_split_count(rp.plan) > 0;
    const char *fixed = getenv("CLRR_SPLIT_FIXED"), *nolearn = getenv("CLRR_NO_LEARN");
    rp.split_fixed = fixed && *fixed && strcmp(fixed, "0");
    rp.no_learn = nolearn && *nolearn && strcmp(nolearn, "0");
    const char *method = getenv("CLRR_SPLIT_METHOD");
    rp.split_method = method && !strcmp(method, "broyden") ? RPL_SPLIT_BROYDEN : RPL_SPLIT_FIXED_POINT;
    /* every optimized run adds its own measurements (as `clrr replay --plan`) */
    char cpath[1024];
    if (rp.has_splits && !(nolearn && *nolearn && strcmp(nolearn, "0")) && cdb_default_path(cpath, sizeof cpath) &&
        cdb_open(cpath, &rp.learn, err, sizeof err) != CDB_OK) {
        fprintf(stderr, "clrr: plan mode: %s; split launches' times are not kept\n", err);
        rp.learn = NULL;
    }
    rp.report = getenv("CLRR_PLAN_REPORT");
    rp_call_times = *call_times = rp.report && *rp.report;
    o->sink = rp_sink;
    o->sink_ctx = NULL;
    live_stage_init();
    live_stage_plan(rp.plan);
    rp.init_ns = rec_time_ns() - init_t0;
    rp_on = 1;
    return 1;
}

/* ------------------------------------------------------------ kernel arguments */

static rp_kargs *rp_kargs_of(cl_kernel k, int make)
{
    for (size_t i = 0; i < rp.nkargs; i++)
        if (rp.kargs[i].k == k)
            return &rp.kargs[i];
    if (!make)
        return NULL;
    if (plan_grow((void **)&rp.kargs, &rp.capkargs, rp.nkargs + 1, sizeof *rp.kargs))
        return NULL;
    rp_kargs *a = &rp.kargs[rp.nkargs++];
    memset(a, 0, sizeof *a);
    a->k = k;
    return a;
}

static void rp_arg_free(rp_arg *a)
{
    free(a->bytes);
    memset(a, 0, sizeof *a);
}

/* The layer's copy of kernel @p k's argument (what a kept or held launch
 * runs with). Under rp.mu. */
static void rp_karg_keep(cl_kernel k, cl_uint index, size_t size, const void *value)
{
    if (index >= 4096 || size > (1u << 20))
        return;
    rp_kargs *a = rp_kargs_of(k, 1);
    if (a && index >= a->n) {
        rp_arg *n = realloc(a->a, (index + 1) * sizeof *n);
        if (n) {
            memset(n + a->n, 0, (index + 1 - a->n) * sizeof *n);
            a->a = n;
            a->n = index + 1;
        }
    }
    if (a && index < a->n) {
        rp_arg *x = &a->a[index];
        if (!value || !size || size > x->cap)
            rp_arg_free(x);
        x->size = size;
        x->null = value == NULL;
        if (value && size && !x->bytes && (x->bytes = malloc(size)) != NULL)
            x->cap = size;
        if (x->bytes)
            memcpy(x->bytes, value, size);
        else if (value && size)
            x->size = 0;   /* unknown: a fusion with it falls back */
    }
}

void live_plan_karg(cl_kernel k, cl_uint index, size_t size, const void *value, uint64_t id)
{
    /* the value as rec_pre_clSetKernelArg would have recorded it (data
       always captured), so that patterns made from a recording match */
    tf_value v;
    memset(&v, 0, sizeof v);
    if (id) {
        v.type = TF_UINT;
        v.v.u = id;
    } else if (!value) {
        v.type = TF_NIL;
    } else if (size <= REC_KARG_INLINE_MAX) {
        v.type = TF_BIN;
        v.v.str.ptr = size ? value : "";
        v.v.str.len = (uint32_t)size;
    } else {
        v.type = TF_BLOB;
        tf_hash(value, size, &v.v.blob);
    }
    pthread_mutex_lock(&rp.mu);
    rp_karg_keep(k, index, size, value);
    if (!rp.broken) {
        int64_t t0 = rec_time_ns();
        if (live_exec_karg(rp.x, rec_handle_id(k), index, size, &v) != PLAN_OK)
            rp_broken("out of memory");
        rp.match_ns += rec_time_ns() - t0;
    }
    pthread_mutex_unlock(&rp.mu);
}

void live_plan_karg_opaque(cl_kernel k)
{
    if (!rp_on)
        return;
    pthread_mutex_lock(&rp.mu);
    rp_kargs *a = rp_kargs_of(k, 1);
    if (a)
        a->opaque = 1;
    pthread_mutex_unlock(&rp.mu);
}

/* ------------------------------------------------------------ kept commands */

static void rp_kept_release(rp_kept *k)
{
    if (k->k)
        live_next->clReleaseKernel(k->k);
    if (k->a)
        live_next->clReleaseMemObject(k->a);
    if (k->b)
        live_next->clReleaseMemObject(k->b);
    for (cl_uint i = 0; i < k->nwait; i++)
        live_next->clReleaseEvent(k->wait[i]);
    if (k->q)
        live_next->clReleaseCommandQueue(k->q);
    for (unsigned i = 0; i < k->nargs; i++)
        rp_arg_free(&k->args[i]);
    for (unsigned i = 0; i < k->nmems; i++)
        live_next->clReleaseMemObject(k->mems[i]);
    free(k->mems);
    free(k->args);
    free(k->wait);
    free(k->data);
    memset(k, 0, sizeof *k);
}

/* Runs kept command @p k on its queue; waits for it unless the next
 * command goes to the same queue. */
static void rp_kept_run(rp_kept *k, cl_command_queue next_q)
{
    cl_int e = CL_SUCCESS;
    switch (k->fn) {
    case REC_FN_clEnqueueNDRangeKernel:
    case REC_FN_clEnqueueTask: {
        cl_kernel cl = live_next->clCloneKernel(k->k, &e);
        for (unsigned i = 0; cl && e == CL_SUCCESS && i < k->nargs; i++)
            e = live_next->clSetKernelArg(cl, i, k->args[i].size, k->args[i].null ? NULL : k->args[i].bytes);
        if (cl && e == CL_SUCCESS)
            e = live_next->clEnqueueNDRangeKernel(k->q, cl, k->dim, k->has_gwo ? k->gwo : NULL, k->gws,
                                                k->has_lws ? k->lws : NULL, k->nwait, k->nwait ? k->wait : NULL, NULL);
        if (cl)
            live_next->clReleaseKernel(cl);
        break;
    }
    case REC_FN_clEnqueueWriteBuffer:
        e = live_next->clEnqueueWriteBuffer(k->q, k->a, CL_TRUE, k->off, k->size, k->data, k->nwait,
                                          k->nwait ? k->wait : NULL, NULL);
        break;
    case REC_FN_clEnqueueFillBuffer:
        e = live_next->clEnqueueFillBuffer(k->q, k->a, k->data, k->psize, k->off, k->size, k->nwait,
                                         k->nwait ? k->wait : NULL, NULL);
        break;
    case REC_FN_clEnqueueCopyBuffer:
        e = live_next->clEnqueueCopyBuffer(k->q, k->a, k->b, k->off, k->off2, k->size, k->nwait,
                                         k->nwait ? k->wait : NULL, NULL);
        break;
    default:
        break;
    }
    if (e != CL_SUCCESS)
        fprintf(stderr, "clrr: plan mode: a deferred command (call %llu) failed to run (%d)\n",
                (unsigned long long)k->seq, (int)e);
    if (k->q != next_q)
        live_next->clFinish(k->q);
}

/* The parameter @p name of the call, through the generated pointer table. */
static void *rp_param(const rec_hook_call *c, void **pa, const char *name)
{
    const tf_sig *s = rec_fn_sig(c->fn);
    for (uint32_t i = 0; i < s->nparams; i++)   /* the first letters tell most names apart */
        if (s->params[i].name[0] == name[0] && !strcmp(s->params[i].name, name))
            return pa[i];
    return NULL;
}

#define RP_VAL(type, c, pa, name) \
    __extension__({ void *p_ = rp_param(c, pa, name); p_ ? *(type *)p_ : (type)0; })

static int rp_keep_wait(rp_kept *k, cl_uint n, const cl_event *wl)
{
    if (!n || !wl)
        return 0;
    if (!(k->wait = malloc(n * sizeof *k->wait)))
        return -1;
    for (cl_uint i = 0; i < n; i++) {
        k->wait[i] = wl[i];
        live_next->clRetainEvent(wl[i]);
    }
    k->nwait = n;
    return 0;
}

static void rp_dims(rp_kept *k, cl_uint dim, const size_t *gwo, const size_t *gws, const size_t *lws)
{
    k->dim = dim > 3 ? 3 : dim;
    for (cl_uint i = 0; i < k->dim; i++) {
        k->gwo[i] = gwo ? gwo[i] : 0;
        k->gws[i] = gws ? gws[i] : 1;
        k->lws[i] = lws ? lws[i] : 0;
    }
    k->has_gwo = gwo != NULL;
    k->has_lws = lws != NULL;
}

/* Undoes a keep that failed before its queue and buffers were retained.
 * @return -1. */
static int rp_keep_fail(rp_kept *k)
{
    k->q = NULL;
    k->a = k->b = NULL;
    rp_kept_release(k);
    return -1;
}

/* Builds the kept form of the call (its objects retained). @return 0, or
 * -1 when it cannot be kept (then it runs now). */
/* The largest dead buffer write a live run keeps (copies) to run later if
 * needed; larger ones run as made (counted in not_kept): a copy of them
 * costs about what the write does (a CPU device's write is a copy; a
 * discrete GPU's pageable write is staged through one), and one that runs
 * after all would pay both (shoc-busspeeddownload's 512 MiB writes: 2.2x
 * slower live than plain). */
#define RP_DEFER_COPY_MAX ((size_t)1 << 20)

static int rp_keep(rec_hook_call *c, void **pa, rp_kept *k)
{
    memset(k, 0, sizeof *k);
    k->seq = c->seq;
    k->fn = c->fn;
    k->q = RP_VAL(cl_command_queue, c, pa, "command_queue");
    cl_uint nw = RP_VAL(cl_uint, c, pa, "num_events_in_wait_list");
    const cl_event *wl = RP_VAL(const cl_event *, c, pa, "event_wait_list");
    if (c->fn == REC_FN_clEnqueueNDRangeKernel || c->fn == REC_FN_clEnqueueTask) {
        cl_kernel kern = RP_VAL(cl_kernel, c, pa, "kernel");
        rp_kargs *a = rp_kargs_of(kern, 0);
        if (!live_next->clCloneKernel || !kern || !a || a->opaque)
            return -1;   /* it may have to run after all as a clone with these arguments */
        if (!a->total &&
            live_next->clGetKernelInfo(kern, CL_KERNEL_NUM_ARGS, sizeof a->total, &a->total, NULL) != CL_SUCCESS)
            return -1;
        if (a->n < a->total)
            return -1;
        for (unsigned i = 0; i < a->total; i++)
            if (!a->a[i].null && !a->a[i].bytes)
                return -1;   /* an argument we do not know */
        /* no clone now: most kept launches never run */
        if (live_next->clRetainKernel(kern) != CL_SUCCESS)
            return -1;
        k->k = kern;
        if (c->fn == REC_FN_clEnqueueTask) {
            size_t one = 1;
            rp_dims(k, 1, NULL, &one, &one);
        } else {
            rp_dims(k, RP_VAL(cl_uint, c, pa, "work_dim"), RP_VAL(const size_t *, c, pa, "global_work_offset"),
                    RP_VAL(const size_t *, c, pa, "global_work_size"), RP_VAL(const size_t *, c, pa, "local_work_size"));
        }
        if ((k->args = calloc(a->total ? a->total : 1, sizeof *k->args)) == NULL ||
            (k->mems = calloc(a->total ? a->total : 1, sizeof *k->mems)) == NULL)
            return rp_keep_fail(k);
        k->nargs = a->total;
        for (unsigned i = 0; i < a->total; i++) {
            k->args[i] = a->a[i];
            k->args[i].bytes = NULL;
            k->args[i].cap = a->a[i].bytes ? a->a[i].size : 0;
            if (a->a[i].bytes && (k->args[i].bytes = malloc(a->a[i].size)) == NULL)
                return rp_keep_fail(k);
            if (a->a[i].bytes)
                memcpy(k->args[i].bytes, a->a[i].bytes, a->a[i].size);
            cl_mem m = NULL;
            if (a->a[i].bytes && a->a[i].size == sizeof m)
                memcpy(&m, a->a[i].bytes, sizeof m);
            if (m && rec_handle_mem_id(m) && live_next->clRetainMemObject(m) == CL_SUCCESS)
                k->mems[k->nmems++] = m;
        }
    } else if (c->fn == REC_FN_clEnqueueWriteBuffer) {
        k->a = RP_VAL(cl_mem, c, pa, "buffer");
        k->off = RP_VAL(size_t, c, pa, "offset");
        k->size = RP_VAL(size_t, c, pa, "size");
        const void *p = RP_VAL(const void *, c, pa, "ptr");
        /* keeping the data is a copy as long as the write; past a size
         * where the write costs no more than that copy, it runs now */
        if (!p || k->size > RP_DEFER_COPY_MAX || !(k->data = malloc(k->size ? k->size : 1)))
            return -1;
        memcpy(k->data, p, k->size);
    } else if (c->fn == REC_FN_clEnqueueFillBuffer) {
        k->a = RP_VAL(cl_mem, c, pa, "buffer");
        k->off = RP_VAL(size_t, c, pa, "offset");
        k->size = RP_VAL(size_t, c, pa, "size");
        k->psize = RP_VAL(size_t, c, pa, "pattern_size");
        const void *p = RP_VAL(const void *, c, pa, "pattern");
        if (!p || !k->psize || k->psize > 128 || !(k->data = malloc(k->psize)))
            return -1;
        memcpy(k->data, p, k->psize);
    } else if (c->fn == REC_FN_clEnqueueCopyBuffer) {
        k->a = RP_VAL(cl_mem, c, pa, "src_buffer");
        k->b = RP_VAL(cl_mem, c, pa, "dst_buffer");
        k->off = RP_VAL(size_t, c, pa, "src_offset");
        k->off2 = RP_VAL(size_t, c, pa, "dst_offset");
        k->size = RP_VAL(size_t, c, pa, "size");
    } else {
        return -1;
    }
    if (rp_keep_wait(k, nw, wl))
        return rp_keep_fail(k);
    live_next->clRetainCommandQueue(k->q);
    if (k->a)
        live_next->clRetainMemObject(k->a);
    if (k->b)
        live_next->clRetainMemObject(k->b);
    return 0;
}

static int rp_kept_add(const rp_kept *k)
{
    if (plan_grow((void **)&rp.kept, &rp.capkept, rp.nkept + 1, sizeof *rp.kept))
        return -1;
    rp.kept[rp.nkept++] = *k;
    return 0;
}

/* Takes kept command @p seq out of the table into *out. @return 1 when found. */
static int rp_kept_take(uint64_t seq, rp_kept *out)
{
    for (unsigned i = 0; i < rp.nheld; i++)
        if (rp.held[i].seq == seq) {
            *out = rp.held[i];
            memmove(&rp.held[i], &rp.held[i + 1], (rp.nheld - i - 1) * sizeof *rp.held);
            memset(&rp.held[--rp.nheld], 0, sizeof *rp.held);
            return 1;
        }
    for (size_t i = 0; i < rp.nkept; i++)
        if (rp.kept[i].seq == seq) {
            *out = rp.kept[i];
            rp.kept[i] = rp.kept[--rp.nkept];
            return 1;
        }
    return 0;
}

/* The command type of function @p fn's command (CL_COMMAND_*; 0 none). */
static cl_command_type rp_command_type(unsigned fn)
{
    switch (fn) {
    case REC_FN_clEnqueueNDRangeKernel: return CL_COMMAND_NDRANGE_KERNEL;
    case REC_FN_clEnqueueTask: return CL_COMMAND_TASK;
    case REC_FN_clEnqueueWriteBuffer: return CL_COMMAND_WRITE_BUFFER;
    case REC_FN_clEnqueueWriteBufferRect: return CL_COMMAND_WRITE_BUFFER_RECT;
    case REC_FN_clEnqueueFillBuffer: return CL_COMMAND_FILL_BUFFER;
    case REC_FN_clEnqueueCopyBuffer: return CL_COMMAND_COPY_BUFFER;
    case REC_FN_clEnqueueCopyBufferRect: return CL_COMMAND_COPY_BUFFER_RECT;
    case REC_FN_clEnqueueReadBuffer: return CL_COMMAND_READ_BUFFER;
    default: return 0;
    }
}

/* Marker @p ev stands for a command of function @p fn (caller holds
 * rp.mu): queries of its command type answer the command's. */
static void rp_standin(cl_event ev, unsigned fn)
{
    cl_command_type t = rp_command_type(fn);
    if (!ev || !t || plan_grow((void **)&rp.standins, &rp.capstandins, rp.nstandins + 1, sizeof *rp.standins))
        return;
    rp.standins[rp.nstandins++] = (struct rp_standin){ev, t};
}

void live_plan_event_type(cl_event ev, cl_command_type *type)
{
    if (!rp_on)
        return;
    pthread_mutex_lock(&rp.mu);
    for (size_t i = 0; i < rp.nstandins; i++)
        if (rp.standins[i].ev == ev)
            *type = rp.standins[i].type;
    pthread_mutex_unlock(&rp.mu);
}

void live_plan_event_released(cl_event ev)
{
    if (!rp_on)
        return;
    pthread_mutex_lock(&rp.mu);
    for (size_t i = 0; i < rp.nstandins;)
        if (rp.standins[i].ev == ev)
            rp.standins[i] = rp.standins[--rp.nstandins];
        else
            i++;
    pthread_mutex_unlock(&rp.mu);
}

/* A marker standing for a command not run now, when its event was asked for. */
static void rp_marker(rec_hook_call *c, void **pa)
{
    cl_event *ev = RP_VAL(cl_event *, c, pa, "event");
    if (!ev)
        return;
    cl_command_queue q = RP_VAL(cl_command_queue, c, pa, "command_queue");
    cl_uint nw = RP_VAL(cl_uint, c, pa, "num_events_in_wait_list");
    const cl_event *wl = RP_VAL(const cl_event *, c, pa, "event_wait_list");
    if (live_next->clEnqueueMarkerWithWaitList(q, nw, nw ? wl : NULL, ev) == CL_SUCCESS)
        rp_standin(*ev, c->fn);
}

/* ------------------------------------------------------------ fused launches */

/* Fused kernel @p z in context @p ctx, built the first time (caller holds
 * rp.mu). NULL out of memory; a kernel that does not build has k NULL. */
static rp_fused *rp_fused_in(cl_context ctx, const plan_fused *z)
{
    for (size_t i = 0; i < rp.nfused; i++)
        if (rp.fused[i].ctx == ctx && rp.fused[i].id == z->id)
            return &rp.fused[i];
    if (plan_grow((void **)&rp.fused, &rp.capfused, rp.nfused + 1, sizeof *rp.fused))
        return NULL;
    rp_fused *f = &rp.fused[rp.nfused++];
    memset(f, 0, sizeof *f);
    f->ctx = ctx;
    f->id = z->id;
    if (!rp_ctx_trusted(ctx)) {   /* as a kernel that does not build: its launches run as made */
        rp.untrusted++;
        return f;
    }
    const char *src = z->source;
    int64_t t0 = rec_time_ns();
    f->prog = live_kc_build(ctx, src, z->options, z->name, &f->k);   /* through the kernel binary cache */
    rp.build_ns += rec_time_ns() - t0;
    if (!f->k) {
        rp.unbuilt++;
        fprintf(stderr, "clrr: plan mode: fused kernel %s does not build here; its launches run as recorded\n",
                z->name);
    }
    return f;
}

static rp_fused *rp_fused_get(cl_command_queue q, const plan_fused *z)
{
    cl_context ctx = NULL;
    if (live_next->clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS)
        return NULL;
    return rp_fused_in(ctx, z);
}

void live_plan_program(cl_program prog)
{
    cl_context ctx = NULL;
    size_t len = 0;
    if ((!plan_fused_count(rp.plan) && !plan_spec_count(rp.plan) && !rp.has_splits) ||
        /* (the plan is not changed after live_plan_init) */
        live_next->clGetProgramInfo(prog, CL_PROGRAM_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS ||
        live_next->clGetProgramInfo(prog, CL_PROGRAM_SOURCE, 0, NULL, &len) != CL_SUCCESS || len < 2)
        return;   /* (a program from binaries or IL has no source) */
    char *src = malloc(len);
    if (!src || live_next->clGetProgramInfo(prog, CL_PROGRAM_SOURCE, len, src, NULL) != CL_SUCCESS) {
        free(src);
        return;
    }
    tf_blobref h;
    tf_hash(src, strnlen(src, len), &h);
    free(src);
    pthread_mutex_lock(&rp.mu);
    for (size_t i = 0; i < plan_fused_count(rp.plan); i++) {
        const plan_fused *z = plan_get_fused(rp.plan, i);
        if (!memcmp(z->program, h.hash, sizeof z->program))
            rp_fused_in(ctx, z);
    }
    for (size_t i = 0; i < plan_spec_count(rp.plan); i++) {   /* the specialized kernels too */
        const plan_spec *z = plan_get_spec(rp.plan, i);
        if (!memcmp(z->program, h.hash, sizeof z->program))
            rp_fused_in(ctx, &z->as);
    }
    /* the partition-ready kernels of the splits made from it, on every
       device their parts run on */
    for (size_t i = 0; i < plan_split_count(rp.plan); i++) {
        const plan_split *z = plan_get_split(rp.plan, i);
        rpl_split sp;
        int64_t t0 = rec_time_ns();
        if (!memcmp(z->program, h.hash, sizeof z->program) && rp_ctx_trusted(ctx) && rp_engine() &&
            live_exec_split_conv(rp.x, z, &sp) == 0)
            rpl_splitter_prepare(rp.sx, &sp, ctx);
        rp.split_build_ns += rec_time_ns() - t0;
    }
    pthread_mutex_unlock(&rp.mu);
}

/* 1 when parameter @p i of the fused launch may take the blank buffer. */
static int rp_fresh(unsigned i)
{
    for (unsigned j = 0; j < rp_tls.nfresh; j++)
        if (rp_tls.fresh[j] == i)
            return 1;
    return 0;
}

/* Runs the fused kernel for consumer call @p c with the held launches.
 * @return 1 when it ran (CL_SUCCESS in c->ret_override), 0 when the pair
 * (chain) must run as recorded. */
static int rp_fuse(rec_hook_call *c, void **pa, const plan_fused *z)
{
    if (!z || (z->launches > 1 ? !rp.nheld || rp.nheld + 1 != z->launches : rp.nheld != 0))
        return 0;   /* (a specialized kernel, launches 1, holds none) */
    cl_command_queue q = RP_VAL(cl_command_queue, c, pa, "command_queue");
    cl_kernel ck = RP_VAL(cl_kernel, c, pa, "kernel");
    rp_fused *f = rp_fused_get(q, z);
    rp_kargs *ca = rp_kargs_of(ck, 0);
    if (!f || !f->k)
        return 0;
    cl_mem blank = rp_tls.nfresh ? rp_blank_get(f->ctx, rp_tls.fresh_size) : NULL;
    unsigned blanks = 0;
    for (unsigned i = 0; i < z->nparams; i++) {
        unsigned from = z->params[i][0], idx = z->params[i][1];
        const rp_kept *h = from < rp.nheld ? &rp.held[from] : NULL;
        const rp_arg *a = h ? (idx < h->nargs ? &h->args[idx] : NULL) : (ca && idx < ca->n ? &ca->a[idx] : NULL);
        if (!a || (!a->null && !a->bytes))
            return 0;
        int b = blank && a->size == sizeof blank && rp_fresh(i);
        cl_int e = b ? live_next->clSetKernelArg(f->k, i, sizeof blank, &blank)
                     : live_next->clSetKernelArg(f->k, i, a->size, a->null ? NULL : a->bytes);
        if (e != CL_SUCCESS)
            return 0;
        blanks += b;
    }
    cl_uint dim = RP_VAL(cl_uint, c, pa, "work_dim");
    cl_uint nw = RP_VAL(cl_uint, c, pa, "num_events_in_wait_list");
    cl_int e = live_next->clEnqueueNDRangeKernel(q, f->k, dim, RP_VAL(const size_t *, c, pa, "global_work_offset"),
                                               RP_VAL(const size_t *, c, pa, "global_work_size"),
                                               RP_VAL(const size_t *, c, pa, "local_work_size"), nw,
                                               nw ? RP_VAL(const cl_event *, c, pa, "event_wait_list") : NULL,
                                               RP_VAL(cl_event *, c, pa, "event"));
    if (e != CL_SUCCESS)
        return 0;
    c->ret_override = CL_SUCCESS;
    if (z->launches == 1)
        rp.spec_launches++;
    else
        rp.fused_launches++;
    rp.blank_launches += blanks != 0;
    rp.blank_params += blanks;
    return 1;
}

/* Runs the held launches as recorded, in order, and frees them. */
static void rp_held_run(cl_command_queue q)
{
    for (unsigned i = 0; i < rp.nheld; i++) {
        rp_kept_run(&rp.held[i], q);
        rp_kept_release(&rp.held[i]);
    }
    rp.nheld = 0;
}

/* ------------------------------------------------------------ split launches */

static void *rp_next_lookup(void *user, const char *name)
{
    (void)user;
    return rec_next_fn(name);
}

/* Each split part's kernel time, into the cost database (caller holds rp.mu). */
static int rp_learn(void *user, const char *identity, const cdb_key *key, uint64_t groups, uint64_t ns)
{
    (void)user;
    return rp.learn && cdb_add_kernel(rp.learn, identity, key, groups, ns) == CDB_OK;
}

/* The split engine, made on first use (caller holds rp.mu); NULL out of memory. */
static rpl_splitter *rp_engine(void)
{
    if (!rp.sx) {
        rpl_splitter_opts o = {.fixed = rp.split_fixed, .method = rp.split_method, .lookup = rp_next_lookup,
                               .learn = rp.learn ? rp_learn : NULL};
        rp.sx = rpl_splitter_new(&o);
    }
    return rp.sx;
}

/* Runs launch @p c as the plan's split (caller holds rp.mu). @return 1
 * when it ran (CL_SUCCESS in c->ret_override), 0 when the launch must run
 * as the application made it. */
static int rp_split(rec_hook_call *c, void **pa)
{
    rpl_split sp;
    if (live_exec_split_rpl(rp.x, &sp) < 0)
        return 0;
    cl_device_id qd = NULL;
    if (rp.gate && (live_next->clGetCommandQueueInfo(RP_VAL(cl_command_queue, c, pa, "command_queue"),
                                                     CL_QUEUE_DEVICE, sizeof qd, &qd, NULL) != CL_SUCCESS ||
                    !rp_dev_trusted(qd))) {
        rp.untrusted++;
        return 0;
    }
    if (!rp_engine())
        return 0;
    cl_kernel k = RP_VAL(cl_kernel, c, pa, "kernel");
    const size_t *gwo = RP_VAL(const size_t *, c, pa, "global_work_offset");
    const size_t *gws = RP_VAL(const size_t *, c, pa, "global_work_size");
    const size_t *lws = RP_VAL(const size_t *, c, pa, "local_work_size");
    rp_kargs *ka = rp_kargs_of(k, 0);
    unsigned n = ka && !ka->opaque ? ka->n : 0;
    rpl_split_arg *args = calloc(n ? n : 1, sizeof *args);
    if (!args)
        return 0;
    for (unsigned i = 0; i < n; i++) {
        const rp_arg *g = &ka->a[i];
        args[i] = (rpl_split_arg){g->null || g->bytes, g->size, g->null ? NULL : g->bytes, 0};
        if (i < sp.nargs && sp.args[i] == RPL_SPLIT_ARG_MEM && g->bytes && g->size == sizeof(cl_mem) &&
            rec_handle_mem_id(*(void **)g->bytes))
            args[i].key = rec_handle_mem_id(*(void **)g->bytes);
    }
    rpl_split_launch l = {RP_VAL(cl_command_queue, c, pa, "command_queue"), RP_VAL(cl_uint, c, pa, "work_dim"),
                          {0}, {0}, {0}, lws != NULL, RP_VAL(cl_uint, c, pa, "num_events_in_wait_list"),
                          RP_VAL(const cl_event *, c, pa, "event_wait_list"), n, args,
                          RP_VAL(cl_event *, c, pa, "event")};
    for (cl_uint d = 0; d < l.dim && d < 3; d++) {
        l.off[d] = gwo ? gwo[d] : 0;
        l.gsz[d] = gws ? gws[d] : 0;
        l.lsz[d] = lws ? lws[d] : 0;
    }
    if (!l.nwait)
        l.wait = NULL;
    int done = 0;
    char err[512];
    int r = l.dim >= 1 && l.dim <= 3 && gws ? rpl_splitter_run(rp.sx, &sp, &l, &done, err, sizeof err) : 0;
    free(args);
    if (r < 0) {
        /* the application's buffers may hold part of the parts' results:
         * the launch runs whole, as made (it rewrites all it writes) */
        rp.split_errors++;
        fprintf(stderr, "clrr: plan mode: %s; the launch runs as the application made it\n", err);
        done = 0;
    }
    if (!done) {   /* it runs as made: its writes are not what other devices hold */
        rpl_splitter_touch(rp.sx);
        return 0;
    }
    if (l.event)
        rp_standin(*l.event, REC_FN_clEnqueueNDRangeKernel);
    c->ret_override = CL_SUCCESS;
    return 1;
}

/* ------------------------------------------------------------ the gate */

/* The clock of the report's times (hold_us, fuse_us): read only when a
 * report is asked for, like call_us. */
static int64_t rp_clock(void)
{
    return rp_call_times ? rec_time_ns() : 0;
}

/* A launch of a coarsened shape (plan 1.12): the coarsened kernel, built
 * by the layer in the launch's context (once), with the arguments the
 * application set on its kernel, over the global size divided, with local
 * size @p tl (t->local all 0: none), the application's queue, offsets,
 * wait list and event. @return 1 when the driver took it (*ret), 0 when
 * the launch must run as made (nothing was enqueued). */
static int rp_coarse_launch(rec_hook_call *c, void **pa, cl_command_queue q, const plan_local *l,
                            const plan_tuned *t, const size_t *tl, cl_int *ret)
{
    const plan_coarse *co = plan_get_coarse(rp.plan, t->coarsen - 1);
    cl_kernel k = RP_VAL(cl_kernel, c, pa, "kernel");
    cl_uint dim = RP_VAL(cl_uint, c, pa, "work_dim");
    const size_t *gsz = RP_VAL(const size_t *, c, pa, "global_work_size");
    if (!co || co->dim >= dim || !gsz || gsz[co->dim] % co->factor)
        return 0;
    if (!rp.co_views) {
        size_t n = plan_coarse_count(rp.plan);
        rp.co_views = calloc(n ? n : 1, sizeof *rp.co_views);
        uint8_t(*pr)[2] = rp.co_views ? calloc((size_t)n * PLAN_FUSED_MAX_PARAMS, sizeof *pr) : NULL;
        if (!pr) {
            free(rp.co_views);
            rp.co_views = NULL;
            return 0;
        }
        for (size_t i = 0; i < n; i++) {
            const plan_coarse *z = plan_get_coarse(rp.plan, i);
            uint8_t(*p)[2] = pr + i * PLAN_FUSED_MAX_PARAMS;
            for (unsigned a = 0; a < z->nargs && a < PLAN_FUSED_MAX_PARAMS; a++)
                p[a][1] = (uint8_t)a;
            rp.co_views[i] = (plan_fused){.id = PLAN_COARSE_ID_BASE + z->id, .name = z->name, .producer = z->kernel,
                                          .consumer = z->kernel, .launches = 1, .source = z->source,
                                          .options = z->options, .keep_store = 1, .nparams = z->nargs,
                                          .params = (const uint8_t(*)[2])p};
            memcpy(rp.co_views[i].program, z->program, 16);
        }
    }
    rp_fused *f = rp_fused_get(q, &rp.co_views[co->id - 1]);
    rp_kargs *ca = rp_kargs_of(k, 0);
    if (!f || !f->k || !ca || ca->n < co->nargs)
        return 0;
    for (unsigned i = 0; i < co->nargs; i++) {
        const rp_arg *a = &ca->a[i];
        if ((!a->null && !a->bytes) ||
            live_next->clSetKernelArg(f->k, i, a->size, a->null ? NULL : a->bytes) != CL_SUCCESS)
            return 0;
    }
    size_t g[3] = {1, 1, 1};
    for (cl_uint d = 0; d < dim && d < 3; d++)
        g[d] = gsz[d];
    g[co->dim] /= co->factor;
    cl_uint nw = RP_VAL(cl_uint, c, pa, "num_events_in_wait_list");
    cl_int e = live_next->clEnqueueNDRangeKernel(q, f->k, dim, RP_VAL(const size_t *, c, pa, "global_work_offset"), g,
                                               t->local[0] ? tl : NULL, nw,
                                               nw ? RP_VAL(const cl_event *, c, pa, "event_wait_list") : NULL,
                                               RP_VAL(cl_event *, c, pa, "event"));
    (void)l;
    if (e != CL_SUCCESS)
        return 0;
    *ret = e;
    return 1;
}

/* A launch of a tuned shape (plan 1.10): run here with the local size the
 * plan measured for the queue's device, as the application asked
 * otherwise (the same queue, offsets, wait list, event); when the driver
 * refuses it, as made, so that the application sees exactly what it
 * would have. A device the plan did not measure runs it as made.
 * @return 1 when it ran here (c->ret_override set), 0 to run it as made. */
static int rp_local(rec_hook_call *c, void **pa, cl_command_queue q, const plan_local *l)
{
    cl_kernel k = RP_VAL(cl_kernel, c, pa, "kernel");
    cl_uint dim = RP_VAL(cl_uint, c, pa, "work_dim");
    const size_t *off = RP_VAL(const size_t *, c, pa, "global_work_offset");
    const size_t *gsz = RP_VAL(const size_t *, c, pa, "global_work_size");
    const size_t *lsz = RP_VAL(const size_t *, c, pa, "local_work_size");
    cl_uint nw = RP_VAL(cl_uint, c, pa, "num_events_in_wait_list");
    const cl_event *wl = RP_VAL(const cl_event *, c, pa, "event_wait_list");
    cl_event *ev = RP_VAL(cl_event *, c, pa, "event");
    cl_device_id dev = NULL;
    if (!l || !q || !gsz || dim != l->dim ||
        live_next->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS)
        return 0;
    if (dev != rp.local_dev) {
        rp.local_name[0] = rp.local_driver[0] = 0;
        if (live_next->clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof rp.local_name, rp.local_name, NULL) != CL_SUCCESS ||
            live_next->clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof rp.local_driver, rp.local_driver, NULL) !=
                CL_SUCCESS)
            rp.local_name[0] = rp.local_driver[0] = 0;
        rp.local_name[sizeof rp.local_name - 1] = rp.local_driver[sizeof rp.local_driver - 1] = 0;
        rp.local_dev = dev;
    }
    const plan_tuned *t = plan_local_for(l, rp.local_name, rp.local_driver);
    if (!t) {
        rp.local_unmeasured++;
        return 0;
    }
    size_t tl[3] = {1, 1, 1};
    for (unsigned d = 0; d < dim && d < 3; d++)
        tl[d] = (size_t)t->local[d];
    if (t->coarsen) {   /* 1.12: the coarsened kernel, or the launch as made */
        cl_int cr;
        if (rp_coarse_launch(c, pa, q, l, t, tl, &cr)) {
            rp.co_launches++;
            c->ret_override = cr;
            return 1;
        }
        rp.co_fallback++;
        return 0;
    }
    cl_int r = live_next->clEnqueueNDRangeKernel(q, k, dim, off, gsz, tl, nw, wl, ev);
    if (r != CL_SUCCESS) {   /* refused here: as the application made it */
        rp.local_refused++;
        r = live_next->clEnqueueNDRangeKernel(q, k, dim, off, gsz, lsz, nw, wl, ev);
    } else {
        rp.local_launches++;
    }
    c->ret_override = r;
    return 1;
}

int live_plan_apply(rec_hook_call *c, void **pa, int skip, int can_skip)
{
    cl_command_queue q = pa ? RP_VAL(cl_command_queue, c, pa, "command_queue") : NULL;
    rp_kept k;
    pthread_mutex_lock(&rp.mu);
    for (size_t i = 0; i < rp_tls.ndiscard; i++)
        if (rp_kept_take(rp_tls.discard[i], &k))
            rp_kept_release(&k);
    for (size_t i = 0; i < rp_tls.nforce; i++)
        if (rp_kept_take(rp_tls.force[i], &k)) {
            rp_kept_run(&k, q);
            rp_kept_release(&k);
        }
    int v = can_skip && pa && !skip ? rp_tls.verdict : LIVE_RUN;
    if (v == LIVE_DROP) {
        rp_marker(c, pa);
        c->ret_override = CL_SUCCESS;
        rp.dropped++;
        skip = 1;
    } else if (v == LIVE_DEFER) {
        if (rp_keep(c, pa, &k) == 0 && rp_kept_add(&k) == 0) {
            rp_marker(c, pa);
            c->ret_override = CL_SUCCESS;
            rp.deferred++;
            skip = 1;
        } else {
            rp.unkept++;
            live_exec_unkept(rp.x, c->seq);   /* it runs now */
        }
    } else if (v == LIVE_HOLD || v == LIVE_LINK) {
        int64_t t0 = rp_clock();
        if (v == LIVE_HOLD)   /* (a chain that did not go on ran first, through force) */
            rp_held_run(q);
        if (rp.nheld < PLAN_CHAIN_MAX && rp_keep(c, pa, &rp.held[rp.nheld]) == 0) {
            rp.nheld++;
            c->ret_override = CL_SUCCESS;
            skip = 1;
        } else {   /* it runs now, so what was held before it runs first */
            if (rp.nheld < PLAN_CHAIN_MAX)
                memset(&rp.held[rp.nheld], 0, sizeof *rp.held);
            rp_held_run(q);
        }
        rp.hold_ns += rp_clock() - t0;
    } else if (v == LIVE_LOCAL && c->fn == REC_FN_clEnqueueNDRangeKernel) {
        skip = rp_local(c, pa, q, live_exec_local(rp.x));
    } else if (v == LIVE_SPLIT) {
        skip = rp_split(c, pa);
    } else if (v == LIVE_FUSE) {
        int64_t t0 = rp_clock();
        if (rp_fuse(c, pa, live_exec_fused(rp.x))) {
            skip = 1;
            /* those the matcher keeps run if their output is read after
               all; the others are freed */
            int64_t t1 = rp_clock();
            for (unsigned i = 0; i < rp.nheld; i++) {
                if (!(rp_tls.keep_held >> i & 1))
                    rp_kept_release(&rp.held[i]);
                else if (rp_kept_add(&rp.held[i]) != 0) {
                    live_exec_unkept(rp.x, rp.held[i].seq);   /* (only out of memory) */
                    rp_kept_release(&rp.held[i]);
                }
                memset(&rp.held[i], 0, sizeof *rp.held);
            }
            rp.nheld = 0;
            rp.unhold_ns += rp_clock() - t1;
        } else {   /* the pair (chain) runs as recorded (what the matcher keeps: not) */
            for (unsigned i = 0; rp_tls.keep_held && i < rp.nheld; i++)
                live_exec_unkept(rp.x, rp.held[i].seq);
            rp_held_run(q);
        }
        rp.fuse_ns += rp_clock() - t0;
    }
    pthread_mutex_unlock(&rp.mu);
    if (!skip && pa && (c->fn == REC_FN_clEnqueueWriteBuffer || c->fn == REC_FN_clEnqueueReadBuffer)) {
        /* what runs as the application made it may still move its bytes faster
           (pa: both functions' parameters, in the API's order) */
        cl_int r;
        cl_bool blocking = *(cl_bool *)pa[2];
        size_t off = *(size_t *)pa[3], size = *(size_t *)pa[4];
        cl_uint nw = *(cl_uint *)pa[6];
        const cl_event *wl = *(const cl_event **)pa[7];
        cl_event *ev = *(cl_event **)pa[8];
        if (c->fn == REC_FN_clEnqueueWriteBuffer
                ? live_stage_write(q, *(cl_mem *)pa[1], blocking, off, size, *(const void **)pa[5], nw, wl, ev, &r)
                : live_stage_read(q, *(cl_mem *)pa[1], blocking, off, size, *(void **)pa[5], nw, wl, ev, &r)) {
            c->ret_override = r;
            skip = 1;
        }
    }
    return skip;
}

void live_plan_released(uint64_t id)
{
    if (!rp_on)
        return;
    live_answer a;
    rp_kept k;
    pthread_mutex_lock(&rp.mu);
    if (!rp.broken) {
        rpl_splitter_forget(rp.sx, id);
        live_exec_released(rp.x, id, &a);
        for (size_t i = 0; i < a.ndiscard; i++)
            if (rp_kept_take(a.discard[i], &k))
                rp_kept_release(&k);
    }
    pthread_mutex_unlock(&rp.mu);
}

/* ------------------------------------------------------------ the end */

/* A JSON string, written by jansson as clrr's own outputs are; bytes that
 * are not UTF-8 (a path) become '?'. */
static void rp_json_str(FILE *f, const char *s)
{
    json_t *v = json_string(s ? s : "");
    if (!v) {
        char *c = strdup(s);
        for (char *p = c; p && *p; p++)
            if ((unsigned char)*p >= 0x80)
                *p = '?';
        v = c ? json_string(c) : NULL;
        free(c);
    }
    if (!v || json_dumpf(v, f, JSON_ENCODE_ANY) < 0)
        fputs("null", f);
    json_decref(v);
}

/* The split launches' counts, as `clrr replay --json` gives them. */
static void rp_split_report(FILE *f)
{
    rpl_split_stats none;
    memset(&none, 0, sizeof none);
    const rpl_split_stats *t = rp.sx ? rpl_splitter_stats(rp.sx) : &none;
    fprintf(f,
            ", \"split\": %llu, \"split_parts\": %llu, \"split_bytes_out\": %llu, \"split_bytes_in\": %llu, "
            "\"split_resident\": %llu, \"split_fallback\": %llu, \"split_declined\": %llu, \"split_adapted\": %llu, "
            "\"split_errors\": %llu, \"split_build_us\": %lld, \"split_built_ahead\": %llu, "
            "\"split_built_late\": %llu, \"split_programs\": %llu, \"split_ns\": {\"wait\": %lld, \"send\": %lld, \"parts\": %lld, \"merge\": %lld}, "
            "\"split_launch_ns\": [",
            (unsigned long long)t->launches, (unsigned long long)t->parts, (unsigned long long)t->bytes_out,
            (unsigned long long)t->bytes_in, (unsigned long long)t->resident, (unsigned long long)t->fallback,
            (unsigned long long)t->declined, (unsigned long long)t->adapted, (unsigned long long)rp.split_errors,
            (long long)(rp.split_build_ns / 1000), (unsigned long long)t->built_ahead,
            (unsigned long long)t->built_late, (unsigned long long)t->programs, (long long)t->wait_ns, (long long)t->send_ns, (long long)t->parts_ns, (long long)t->merge_ns);
    for (unsigned i = 0; i < t->nlaunch_ns; i++)
        fprintf(f, "%s%lld", i ? ", " : "", (long long)t->launch_ns[i]);
    fprintf(f, "], \"split_learned\": %llu, \"costs\": ", (unsigned long long)t->learned);
    rp_json_str(f, rp.learn ? cdb_path(rp.learn) : "");
    fputs(", \"split_note\": ", f);
    rp_json_str(f, t->note);
    fputs(", \"split_shares\": ", f);
    rp_json_str(f, t->shares);
}

/* What the layer's own work per call cost: decoding and matching, timed
 * (match_ns), twice over for the entry points' encoding and the hooks,
 * which are not timed (no clock on the recorder's hot path; under
 * callgrind they are about as much again, live/README.md). */
static int64_t rp_layer_ns(void)
{
    return 2 * rp.match_ns;
}

/* The application's OpenCL time (its calls, the driver's work and the
 * layer's), the layer's own, and the kernel binary cache (live_kcache.c). */
static void rp_whole_report(FILE *f)
{
    int64_t ocl = 0;
    uint64_t calls = 0;
    for (uint32_t fn = 0; fn < REC_FN_COUNT; fn++) {
        ocl += atomic_load(&rp_time_ns[fn]);
        calls += atomic_load(&rp_time_n[fn]);
    }
    const live_kc_stats *k = live_kc_get();
    fprintf(f, ", \"ocl_calls\": %llu, \"ocl_us\": %lld, \"layer_init_us\": %lld, \"layer_us\": %lld, "
            "\"kernel_cache\": {\"hits\": %llu, \"misses\": %llu, \"rebuilt\": %llu, \"stored\": %llu, "
            "\"store_errors\": %llu, \"uncached\": %llu, \"build_us\": %lld, \"load_us\": %lld, \"saved_us\": %lld}",
            (unsigned long long)calls, (long long)(ocl / 1000), (long long)(rp.init_ns / 1000),
            (long long)(rp_layer_ns() / 1000), (unsigned long long)k->hits, (unsigned long long)k->misses,
            (unsigned long long)k->rebuilt, (unsigned long long)k->stored, (unsigned long long)k->store_errors,
            (unsigned long long)k->uncached, (long long)(k->build_ns / 1000), (long long)(k->load_ns / 1000),
            (long long)(k->saved_ns / 1000));
}

/* One `l` record (costs/COSTS.md): what the layer cost this run, for
 * `clrr optimize --measure`'s live-cost rule; kept until the machine has
 * RP_LAYER_RUNS of them (the figure is the host's, measured once). */
#define RP_LAYER_RUNS 5
static void rp_learn_layer(void)
{
    uint64_t calls = 0;
    for (uint32_t fn = 0; fn < REC_FN_COUNT; fn++)
        calls += atomic_load(&rp_time_n[fn]);
    char path[1024], err[512], host[256] = "host";
    cdb *db = NULL;
    if (rp.no_learn || !rp_call_times || calls < 100 || !cdb_default_path(path, sizeof path) ||
        cdb_open(path, &db, err, sizeof err) != CDB_OK)
        return;
    cdb_layer_cost lc;
    cdb_get_layer(db, &lc);
    if (gethostname(host, sizeof host - 1) || !host[0])
        strcpy(host, "host");
    host[sizeof host - 1] = 0;
    /* clrr run's own start before the application (CLRR_RUN_PRE_NS: its
       main() to the fork), which a plain run does not pay either */
    const char *pv = getenv("CLRR_RUN_PRE_NS");
    char *pe = NULL;
    long long pre = pv && *pv ? strtoll(pv, &pe, 10) : 0;
    if (!pe || *pe || pre < 0 || pre > 10000000000LL)
        pre = 0;
    if (lc.runs < RP_LAYER_RUNS &&
        cdb_add_layer(db, host, calls, (uint64_t)rp_layer_ns(), (uint64_t)(rp.init_ns + rp.end_ns + pre)) == CDB_OK)
        cdb_flush(db, err, sizeof err);   /* (not kept: the next run measures again) */
    cdb_close(db);
}

void live_plan_end(void)
{
    if (!rp_on)
        return;
    int64_t end_t0 = rec_time_ns();
    pthread_mutex_lock(&rp.mu);
    live_answer a;
    live_exec_live_end(rp.x, &a);   /* what is still kept was dead indeed (its objects go with the process) */
    live_exec_stats s;
    live_exec_get_stats(rp.x, &s);
    char err[512];
    if (rp.learn && cdb_flush(rp.learn, err, sizeof err) != CDB_OK)
        fprintf(stderr, "clrr: plan mode: %s; split launches' times are not kept\n", err);
    FILE *f = rp.report ? fopen(rp.report, "w") : NULL;
    if (f) {
        fprintf(f,
                "{\"schema\": \"clrr-run-report/1\", \"transformations\": %llu, \"applied\": %llu, \"fell_back\": %llu, \"unmatched\": %llu, "
                "\"dropped\": %llu, \"deferred\": %llu, \"ran_after_all\": %llu, \"never_ran\": %llu, "
                "\"fused_launches\": %llu, \"fused_blank\": %llu, \"fused_blank_params\": %llu, \"fused_unbuilt\": %llu, \"not_kept\": %llu, "
                "\"specialized_launches\": %llu, \"schedules_not_applied\": %llu, "
                "\"local_size_launches\": %llu, \"local_size_unmeasured\": %llu, \"local_size_refused\": %llu, "
                "\"stopped\": %s, "
                "\"fused_build_us\": %lld, \"match_us\": %lld, \"hold_us\": %lld, \"fuse_us\": %lld, \"unhold_us\": %lld, "
                "\"data_hashed\": %s, \"steady\": %llu, \"trusted\": %s, \"untrusted\": %llu, ",
                (unsigned long long)s.transformations, (unsigned long long)s.applied,
                (unsigned long long)s.fell_back, (unsigned long long)s.unmatched, (unsigned long long)rp.dropped,
                (unsigned long long)s.kept, (unsigned long long)s.forced, (unsigned long long)s.freed,
                (unsigned long long)rp.fused_launches, (unsigned long long)rp.blank_launches,
                (unsigned long long)rp.blank_params,
                (unsigned long long)rp.unbuilt, (unsigned long long)rp.unkept, (unsigned long long)rp.spec_launches,
                (unsigned long long)plan_sched_count(rp.plan), (unsigned long long)rp.local_launches,
                (unsigned long long)rp.local_unmeasured, (unsigned long long)rp.local_refused, rp.broken ? "true" : "false", (long long)(rp.build_ns / 1000), (long long)(rp.match_ns / 1000),
                (long long)(rp.hold_ns / 1000), (long long)(rp.fuse_ns / 1000), (long long)(rp.unhold_ns / 1000),
                rp.needs_data ? "true" : "false", (unsigned long long)s.steady, rp.gate ? "false" : "true",
                (unsigned long long)rp.untrusted);
        live_stage_report(f);
        fprintf(f, ", \"coarsened_launches\": %llu, \"coarsen_fallback\": %llu", (unsigned long long)rp.co_launches,
                (unsigned long long)rp.co_fallback);
        rp_split_report(f);
        rp_time_report(f);
        rp_whole_report(f);
        fputs(", \"fallbacks\": [", f);
        size_t n = live_exec_fallback_count(rp.x);
        for (size_t i = 0; i < n; i++) {
            const live_fallback *b = live_exec_fallback(rp.x, i);
            fprintf(f, "%s{\"id\": %u, \"seq\": %llu, \"reason\": ", i ? ", " : "", b->xform,
                    (unsigned long long)b->seq);
            rp_json_str(f, b->reason);
            fputc('}', f);
        }
        fputs("]}\n", f);
        fclose(f);
    }
    rp.end_ns = rec_time_ns() - end_t0;
    rp_learn_layer();
    rp_on = 0;
    rec_hooks_stop();
    cdb_close(rp.learn);
    rp.learn = NULL;
    pthread_mutex_unlock(&rp.mu);
}

/* ------------------------------------------------------------ registration */

/* The recorder calls plan mode through this table (recorder/rec.h,
 * "hooks", for each hook's thread and locks). */
static const rec_hooks live_hooks = {
    .init = live_plan_init,
    .needs_data = live_plan_needs_data,
    .take = live_plan_take,
    .apply = live_plan_apply,
    .karg = live_plan_karg,
    .karg_opaque = live_plan_karg_opaque,
    .released = live_plan_released,
    .event_type = live_plan_event_type,
    .event_released = live_plan_event_released,
    .program = live_plan_program,
    .end = live_plan_end,
    .time = live_plan_time,
    .stage_on = live_stage_on,
    .stage_user_event = live_stage_user_event,
    .stage_wait = live_stage_wait,
    .stage_buffer = live_stage_buffer,
    .stage_filling = live_stage_filling,
    .stage_record = live_stage_record,
    .stage_write = live_stage_write,
    .stage_read = live_stage_read_held,
    .stage_release = live_stage_release,
};

/* At load of libclrr.so, before the application's first OpenCL call (the
 * recorder initializes at that call, or at clInitLayer). */
__attribute__((constructor)) static void live_register(void)
{
    rec_hooks_set(&live_hooks);
}
