/* live_stage.c — staged transfers (`clrr run --plan` and `clrr record`,
 * CLRR_STAGE).
 *
 * A discrete GPU moves pageable (malloc'd) host memory through the driver's
 * own staging, which copies on one CPU core: on the H100 machine about
 * 10 GB/s each way, where pinned memory moves at about 50 GB/s
 * (bench/xfer.c). In plan mode the layer moves an application's large
 * clEnqueueWriteBuffer/clEnqueueReadBuffer through pinned blocks of its own
 * (CL_MEM_ALLOC_HOST_PTR buffers, mapped once), copying between the
 * application's memory and the block with several threads:
 *
 *   write: the bytes are copied into a free block, and the driver writes
 *          from the block with the application's wait list and event. A
 *          blocking write copies first. A non-blocking one (whose bytes the
 *          application may not change until the write completes) is
 *          enqueued at once, also waiting for a user event of the layer's,
 *          and the copy is left to the layer's copy thread, which completes
 *          the user event when the bytes are in the block: the application
 *          goes on enqueueing while its bytes are copied (until that is
 *          seen not to pay, rs_async_sync; CLRR_STAGE_ASYNC=0: every write
 *          copies first; 2: every non-blocking write defers its copy). The block is free again when
 *          that write completes (its event polled when a block is next
 *          wanted, or, when the event is the application's, an event
 *          callback, so that its reference count stays the application's);
 *   read:  the driver reads into a block, blocking, then the bytes are
 *          copied to the application's memory before the call returns. A
 *          non-blocking read becomes blocking inside the layer (the
 *          application sees the same event and the same bytes, earlier), so
 *          non-blocking reads are staged only while the application has
 *          made no user event: a read that waited for one would wait for a
 *          call the application makes after this one returns. Where the
 *          application asked for no event, a large read goes in pieces,
 *          each copied out while the device reads the next
 *          (rs_read_pieces; CLRR_STAGE_READ_PIECE).
 *
 * Only transfers of at least CLRR_STAGE_MIN bytes, on devices without
 * memory shared with the host (CL_DEVICE_HOST_UNIFIED_MEMORY false), are
 * staged (CLRR_STAGE=auto; CLRR_STAGE_READS=0 stages only writes, for a
 * program that overlaps its own work with non-blocking reads, which
 * staging makes blocking); CLRR_STAGE=all stages on every device (how the
 * tests run this path on PoCL's CPU device), off never. With fewer than two
 * copy threads (CLRR_STAGE_THREADS, default half the processors, at most
 * 8) auto stages nothing: one core copies no faster than the driver does.
 * A transfer that cannot get a block (CLRR_STAGE_CAP bytes of blocks in
 * use) runs as the application made it. Making a block pins memory, about
 * 2 ms for 4 MiB on the H100 machine, so blocks are made ahead when the
 * application creates a large buffer in a context whose device stages (one
 * per buffer and one more, for the first RS_PREPARE buffers per context and
 * block size): at its set-up,
 * not in its loop, as the plan's fused kernels are built.
 *
 * The layer's own objects (one queue per context, used only to map the
 * blocks, and the blocks) hold a reference to the context; they live until
 * the process ends. Locking: rs.mu guards the tables (and is held across
 * the driver calls that make a block); a block is freed without it (an
 * event callback); the copy pool runs one job at a time (pool_mu; a thread
 * that finds it busy copies alone). */
#include "live/live_layer_int.h"
#include "live/live_stage_vote.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#define RS_MAX_THREADS 16
#define RS_BLOCK_MIN ((size_t)1 << 20)
#define RS_PIECE_MIN ((size_t)64 << 10)   /* a copy thread's least share */
#define RS_SPIN_NS 200000                  /* a copy thread watches for the next job this long */
#define RS_PREPARE 8                        /* blocks made ahead per context and size */

typedef struct rs_block {
    cl_context ctx;
    cl_mem mem;               /* CL_MEM_ALLOC_HOST_PTR */
    void *p;                  /* its mapping, for the process's life */
    size_t size;
    _Atomic int busy;         /* taken, or a write from it still pending; freed without
                                 rs.mu (by the driver's callback), taken under it */
    cl_event pending;         /* a write from it whose event the application did not
                                 ask for: the block is free once it completes */
    uint64_t used;            /* when last taken (eviction order) */
} rs_block;

typedef struct rs_dev {
    cl_device_id d;
    size_t min;               /* transfers of at least this many bytes are staged; 0: none */
} rs_dev;

typedef struct rs_bufs {     /* large buffers the application made, per context and class */
    cl_context ctx;
    size_t size;
    unsigned count;
} rs_bufs;

/* A non-blocking read the stager did not stage, still filling the
 * application's memory [p, p + n): a write staged from there would copy
 * bytes the read has not written yet (made as the application made it,
 * the write reads them when it runs, after the read on an in-order
 * queue). Set done by the read's event's callback; one whose completion
 * cannot be learned stays. */
typedef struct rs_fill {
    const unsigned char *p;
    size_t n;
    _Atomic int done;
} rs_fill;
#define RS_FILL_MAX 4096        /* more pending at once: no write is staged again (one read untracked) */

typedef struct rs_ctx {
    cl_context ctx;
    cl_command_queue q;       /* maps this context's blocks */
} rs_ctx;

static struct {
    pthread_mutex_t mu;
    int mode;                 /* 0 off, 1 auto, 2 all devices */
    int rule_off;             /* auto's rule stages nothing (one copy thread): only the plan's decisions */
    const plan_file *plan;    /* its staging decisions, where CLRR_STAGE is not set (live_stage_plan) */
    size_t rule_min;          /* CLRR_STAGE_MIN: the rule's least bytes (min_bytes: the least of all) */
    unsigned plan_kept, plan_unstaged;   /* devices the plan decided, as seen */
    rs_fill **fill;           /* pending non-blocking reads into the application's memory */
    size_t nfill, capfill;
    int fill_full;            /* a read could not be tracked (RS_FILL_MAX, memory): no write is staged again */
    uint64_t fill_kept;       /* writes not staged: a pending read still fills their bytes */
    int writes_only;          /* CLRR_STAGE_READS=0: reads run as made */
    unsigned threads;
    size_t min_bytes, cap, total;
    rs_block **b;
    size_t nb, capb;
    rs_dev *dev;
    size_t ndev, capdev;
    rs_ctx *ctx;
    size_t nctx, capctx;
    rs_bufs *buf;
    size_t nbuf, capbuf;
    int user_events;
    uint64_t tick, writes, reads, bytes, no_block, made, ahead;   /* blocks made; of which ahead */
    int64_t alloc_ns, copy_ns;    /* making blocks; copying to and from them */
    /* the copy pool (below) */
    pthread_mutex_t pool_mu;  /* one job at a time */
    pthread_mutex_t job_mu;   /* sleeping threads wait on job_cv under it */
    pthread_cond_t job_cv;
    unsigned started;
    _Atomic unsigned sleepers;
    _Atomic uint64_t ticket;  /* generation, pieces, next piece (RS_T_*) */
    _Atomic unsigned done;    /* pieces of the job copied */
    pid_t pid;
    int nt;                   /* CLRR_STAGE_NT: copies into blocks with streaming stores */
    size_t piece;             /* CLRR_STAGE_READ_PIECE: a read of 2 pieces or more is read
                                 and copied out piece by piece (rs_read_pieces); 0: whole */
    uint64_t piecewise;       /* reads done so */
    _Atomic int job_nt;       /* the job's copy streams (rs_stream) */
    unsigned char *_Atomic dst;   /* the job (written before its ticket) */
    const unsigned char *_Atomic src;
    _Atomic size_t n, per;
    /* deferred copies of non-blocking writes (below) */
    _Atomic int async;        /* CLRR_STAGE_ASYNC; off once deferring did not pay (rs_async_sync),
                                 unless 2 (always) */
    pthread_mutex_t async_mu;
    pthread_cond_t async_cv;
    struct rs_job *head, *tail;
    pid_t async_pid;          /* the process whose thread runs the jobs */
    unsigned inflight;        /* jobs posted whose user event is not complete yet */
    int posted;               /* a job was posted since the last blocking transfer */
    int64_t first_post_ns;    /* when the first of those was posted */
    uint64_t early, late;     /* blocking transfers that found the copies done (or
                                 overlapped with enough of the application's work), or not */
    int waited;               /* the first such transfer came */
    int uncounted;            /* ... and was not counted (live_stage_vote) */
    int64_t first_gap_ns;     /* ... so long after its first copy was posted */
    uint64_t deferred;        /* writes whose copy was deferred */
} rs = {.mu = PTHREAD_MUTEX_INITIALIZER,
        .pool_mu = PTHREAD_MUTEX_INITIALIZER,
        .job_mu = PTHREAD_MUTEX_INITIALIZER,
        .job_cv = PTHREAD_COND_INITIALIZER,
        .async_mu = PTHREAD_MUTEX_INITIALIZER,
        .async_cv = PTHREAD_COND_INITIALIZER};

/* ------------------------------------------------------------ settings */

static unsigned long long rs_env_num(const char *name, unsigned long long dflt, unsigned long long max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || x > max) {
        fprintf(stderr, "clrr: %s=%s is not a number up to %llu; using %llu\n", name, v, max, dflt);
        return dflt;
    }
    return x;
}

void live_stage_init(void)
{
    const char *m = getenv("CLRR_STAGE");
    int writes = m && !strcmp(m, "writes");   /* auto, reads as made */
    rs.mode = !m || !*m || !strcmp(m, "auto") || writes ? 1 : !strcmp(m, "all") ? 2 : 0;
    if (m && *m && strcmp(m, "auto") && !writes && strcmp(m, "all") && strcmp(m, "off"))
        fprintf(stderr, "clrr: CLRR_STAGE=%s is not auto, writes, all or off; transfers are not staged\n", m);
    rs.writes_only = writes || rs_env_num("CLRR_STAGE_READS", 1, 1) == 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned dflt = cpus >= 4 ? (unsigned)(cpus / 2) : 1;
    rs.threads = (unsigned)rs_env_num("CLRR_STAGE_THREADS", dflt > 8 ? 8 : dflt, RS_MAX_THREADS);
    rs.min_bytes = rs.rule_min = (size_t)rs_env_num("CLRR_STAGE_MIN", (size_t)512 << 10, (size_t)1 << 40);
    rs.cap = (size_t)rs_env_num("CLRR_STAGE_CAP", (size_t)256 << 20, (size_t)1 << 40);
    if (rs.mode == 1 && rs.threads < 2)
        rs.mode = 0;
    rs.async = (int)rs_env_num("CLRR_STAGE_ASYNC", 1, 2);
    rs.nt = rs_env_num("CLRR_STAGE_NT", 1, 1) != 0;
    rs.piece = (size_t)rs_env_num("CLRR_STAGE_READ_PIECE", (size_t)1 << 20, (size_t)1 << 40);
    rs.pid = getpid();
}

void live_stage_plan(const plan_file *p)
{
    const char *m = getenv("CLRR_STAGE");
    if ((m && *m) || !p || (!plan_stage_count(p) && !plan_unstaged_count(p)))
        return;   /* asked for (clrr run --stage), or nothing measured: the rule alone */
    rs.plan = p;
    for (size_t i = 0; i < plan_stage_count(p); i++) {
        uint64_t b = plan_get_stage(p, i)->min_bytes;
        if (b < rs.min_bytes)
            rs.min_bytes = (size_t)b;
    }
    if (!rs.mode && plan_stage_count(p)) {   /* auto turned off for one copy thread */
        rs.mode = 1;
        rs.rule_off = 1;
    }
}

int live_stage_on(void)
{
    return rs.mode != 0;
}

int live_stage_record(void)
{
    live_next = rec_next_layer();
    live_stage_init();
    return rs.mode != 0;
}

void live_stage_user_event(void)
{
    pthread_mutex_lock(&rs.mu);
    rs.user_events = 1;
    pthread_mutex_unlock(&rs.mu);
}

/* ------------------------------------------------------------ the copy pool
 *
 * A copy is cut into pieces of at least RS_PIECE_MIN bytes, about four per
 * thread; the caller and the pool's threads take pieces from one ticket,
 * an atomic word holding the job's generation, its number of pieces and
 * the next piece (RS_T_*), so that a thread that wakes late takes fewer
 * pieces and the caller never waits for one that has not started. A thread
 * that finished a job watches the ticket for RS_SPIN_NS before it sleeps:
 * a program that writes several buffers in a row finds its threads awake.
 * (Woken through a condition variable and its mutex each, seven threads
 * took longer to start than a 1 MiB copy takes: 160 us per MiB on the H200
 * machine, slower than one core's memcpy.) A piece taken under generation
 * g was taken before job g's last piece was done, and the next job is
 * posted only once every piece of g is done: so the job's fields, read
 * before the piece was taken, are g's. */

#define RS_T_GEN(t) ((uint32_t)((t) >> 40))                 /* 24 bits */
#define RS_T_PIECES(t) ((uint32_t)((t) >> 20) & 0xfffffu)   /* 20 bits */
#define RS_T_NEXT(t) ((uint32_t)(t) & 0xfffffu)             /* 20 bits */
#define RS_T_MAKE(g, pieces) ((uint64_t)((g) & 0xffffffu) << 40 | (uint64_t)(pieces) << 20)
#define RS_MAX_PIECES 0xfffffu

static void rs_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* memcpy into a staging block with streaming (non-temporal) stores: the
 * block's lines go to memory without being read first, and the device's
 * DMA then reads them from memory, not from a core's cache. Falls back to
 * memcpy off x86-64 or for a destination not 16-byte aligned (a block's
 * pieces are 64-byte multiples from a page boundary). */
static void rs_stream(unsigned char *d, const unsigned char *s, size_t n)
{
    size_t i = 0;
#if defined(__x86_64__)
    if (!((uintptr_t)d & 15)) {
        for (; i + 64 <= n; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
            _mm_stream_si128((__m128i *)(d + i), a);
            _mm_stream_si128((__m128i *)(d + i + 16), b);
            _mm_stream_si128((__m128i *)(d + i + 32), c);
            _mm_stream_si128((__m128i *)(d + i + 48), e);
        }
        _mm_sfence();   /* visible before the piece is counted done */
    }
#endif
    memcpy(d + i, s + i, n - i);
}

/* Takes and copies pieces of job @p g until none is left (or the job is
 * another one). */
static void rs_run(uint32_t g)
{
    for (;;) {
        uint64_t t = atomic_load_explicit(&rs.ticket, memory_order_acquire);
        if (RS_T_GEN(t) != g || RS_T_NEXT(t) >= RS_T_PIECES(t))
            return;
        size_t per = atomic_load_explicit(&rs.per, memory_order_relaxed);
        size_t n = atomic_load_explicit(&rs.n, memory_order_relaxed);
        unsigned char *dst = atomic_load_explicit(&rs.dst, memory_order_relaxed);
        const unsigned char *src = atomic_load_explicit(&rs.src, memory_order_relaxed);
        int nt = atomic_load_explicit(&rs.job_nt, memory_order_relaxed);
        if (!atomic_compare_exchange_weak(&rs.ticket, &t, t + 1))
            continue;
        size_t off = per * RS_T_NEXT(t);
        if (off < n && nt)
            rs_stream(dst + off, src + off, n - off < per ? n - off : per);
        else if (off < n)
            memcpy(dst + off, src + off, n - off < per ? n - off : per);
        atomic_fetch_add_explicit(&rs.done, 1, memory_order_release);
    }
}

static void *rs_worker(void *arg)
{
    uint32_t seen = (uint32_t)(uintptr_t)arg;
    for (;;) {
        uint32_t g = RS_T_GEN(atomic_load(&rs.ticket));
        if (g != seen) {
            seen = g;
            rs_run(g);
            continue;
        }
        /* watch for the next job a while, then sleep */
        int64_t until = rec_time_ns() + RS_SPIN_NS;
        for (unsigned spin = 1; RS_T_GEN(atomic_load(&rs.ticket)) == seen; spin++) {
            rs_pause();
            if (!(spin & 255) && rec_time_ns() > until) {
                pthread_mutex_lock(&rs.job_mu);
                atomic_fetch_add(&rs.sleepers, 1);
                while (RS_T_GEN(atomic_load(&rs.ticket)) == seen)
                    pthread_cond_wait(&rs.job_cv, &rs.job_mu);
                atomic_fetch_sub(&rs.sleepers, 1);
                pthread_mutex_unlock(&rs.job_mu);
            }
        }
    }
    return NULL;
}

/* Starts the pool's threads (the caller takes pieces too), with every
 * signal blocked so that the application's handlers run on its own
 * threads. */
static void rs_pool_start(void)
{
    sigset_t all, old;
    uint32_t g = RS_T_GEN(atomic_load(&rs.ticket));
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (unsigned i = 1; i < rs.threads; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, rs_worker, (void *)(uintptr_t)g) != 0)
            break;
        pthread_detach(th);
        rs.started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* memcpy, in pieces copied by up to rs.threads threads at once; @p nt:
 * into a block (rs_stream, unless CLRR_STAGE_NT=0). Thread-safe. */
static void rs_copy(void *dst, const void *src, size_t n, int nt)
{
    nt = nt && rs.nt;
    if (rs.threads < 2 || n < 2 * RS_PIECE_MIN || getpid() != rs.pid || pthread_mutex_trylock(&rs.pool_mu)) {
        if (nt)
            rs_stream(dst, src, n);
        else
            memcpy(dst, src, n);
        return;
    }
    if (!rs.started)
        rs_pool_start();
    size_t per = n / (4 * (size_t)(rs.started + 1));
    if (per < n / RS_MAX_PIECES + 1)
        per = n / RS_MAX_PIECES + 1;
    per = (per < RS_PIECE_MIN ? RS_PIECE_MIN : per + 63) & ~(size_t)63;
    unsigned pieces = (unsigned)((n + per - 1) / per);
    atomic_store_explicit(&rs.dst, (unsigned char *)dst, memory_order_relaxed);
    atomic_store_explicit(&rs.src, (const unsigned char *)src, memory_order_relaxed);
    atomic_store_explicit(&rs.n, n, memory_order_relaxed);
    atomic_store_explicit(&rs.per, per, memory_order_relaxed);
    atomic_store_explicit(&rs.job_nt, nt, memory_order_relaxed);
    atomic_store_explicit(&rs.done, 0, memory_order_relaxed);
    uint32_t g = (RS_T_GEN(atomic_load(&rs.ticket)) + 1) & 0xffffffu;
    atomic_store(&rs.ticket, RS_T_MAKE(g, pieces));   /* publishes the job */
    if (atomic_load(&rs.sleepers)) {
        pthread_mutex_lock(&rs.job_mu);
        pthread_cond_broadcast(&rs.job_cv);
        pthread_mutex_unlock(&rs.job_mu);
    }
    rs_run(g);
    /* every piece is taken: wait for the pieces other threads are still copying */
    for (unsigned spin = 1; atomic_load_explicit(&rs.done, memory_order_acquire) < pieces; spin++) {
        rs_pause();
        if (!(spin & 1023))
            sched_yield();
    }
    pthread_mutex_unlock(&rs.pool_mu);
}

/* ------------------------------------------------------------ blocks */

/* The least bytes of a transfer to or from @p d that is staged, 0 when
 * none is (asked once): the plan's measured decision for the device (its
 * name and driver), where it has one (live_stage_plan), else the rule
 * (auto: a device without host-unified memory; all: every device). Under
 * rs.mu. */
static size_t rs_dev_stages(cl_device_id d)
{
    for (size_t i = 0; i < rs.ndev; i++)
        if (rs.dev[i].d == d)
            return rs.dev[i].min;
    cl_bool unified = CL_TRUE;
    if (live_next->clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) != CL_SUCCESS)
        unified = CL_TRUE;
    /* (CLRR_STAGE_MIN=0: every transfer, as 1 byte here, 0 meaning none) */
    size_t min = rs.mode == 2 || (rs.mode == 1 && !rs.rule_off && !unified) ? (rs.rule_min ? rs.rule_min : 1) : 0;
    char name[257] = "", drv[257] = "";
    if (rs.plan && live_next->clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, NULL) == CL_SUCCESS &&
        live_next->clGetDeviceInfo(d, CL_DRIVER_VERSION, sizeof drv - 1, drv, NULL) == CL_SUCCESS) {
        const plan_stage *s = plan_stage_for(rs.plan, name, drv);
        if (s) {
            min = (size_t)s->min_bytes;
            rs.plan_kept++;
        } else if (plan_unstaged_for(rs.plan, name, drv)) {
            min = 0;
            rs.plan_unstaged++;
        }
    }
    if (plan_grow((void **)&rs.dev, &rs.capdev, rs.ndev + 1, sizeof *rs.dev) == 0)
        rs.dev[rs.ndev++] = (rs_dev){d, min};
    return min;
}

/* The least bytes staged on @p q's device (0: none); its context and
 * device in *ctx, *dev. Under rs.mu. */
static size_t rs_queue_stages(cl_command_queue q, cl_context *ctx, cl_device_id *dev)
{
    if (live_next->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof *dev, dev, NULL) != CL_SUCCESS ||
        live_next->clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof *ctx, ctx, NULL) != CL_SUCCESS)
        return 0;
    return rs_dev_stages(*dev);
}

/* The layer's mapping queue of @p ctx (made on @p dev). Under rs.mu. */
static cl_command_queue rs_ctx_queue(cl_context ctx, cl_device_id dev)
{
    for (size_t i = 0; i < rs.nctx; i++)
        if (rs.ctx[i].ctx == ctx)
            return rs.ctx[i].q;
    cl_int err;
    cl_command_queue q = live_next->clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    if (!q)
        return NULL;
    if (plan_grow((void **)&rs.ctx, &rs.capctx, rs.nctx + 1, sizeof *rs.ctx)) {
        live_next->clReleaseCommandQueue(q);
        return NULL;
    }
    rs.ctx[rs.nctx++] = (rs_ctx){ctx, q};
    return q;
}

static void rs_block_free(size_t i)
{
    rs_block *b = rs.b[i];
    for (size_t k = 0; k < rs.nctx; k++)
        if (rs.ctx[k].ctx == b->ctx)
            live_next->clEnqueueUnmapMemObject(rs.ctx[k].q, b->mem, b->p, 0, NULL, NULL);
    live_next->clReleaseMemObject(b->mem);   /* deleted once the unmap is done */
    rs.total -= b->size;
    free(b);
    rs.b[i] = rs.b[--rs.nb];
}

/* Whether @p b is free, once its pending write (if any) is complete. Under rs.mu. */
static int rs_block_free_now(rs_block *b)
{
    if (b->pending) {
        cl_int st = CL_QUEUED;
        if (live_next->clGetEventInfo(b->pending, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) !=
                CL_SUCCESS ||
            st <= CL_COMPLETE) {   /* complete, or failed: the block is not read any more */
            live_next->clReleaseEvent(b->pending);
            b->pending = NULL;
            atomic_store(&b->busy, 0);
        }
    }
    return !b->busy;
}

/* A free block of @p ctx of at least @p n bytes, taken (busy); NULL when
 * none can be had within the cap. Under rs.mu. */
/* The block size for @p n bytes: a power of two, at least RS_BLOCK_MIN. */
static size_t rs_class(size_t n)
{
    size_t size = RS_BLOCK_MIN;
    while (size < n && size < ((size_t)1 << 40))
        size *= 2;
    return size;
}

/* A new free block of @p size bytes in @p ctx (mapped through a queue on
 * @p dev), room made within the cap by freeing the least recently used
 * free blocks; NULL when there is none. Under rs.mu. */
static rs_block *rs_block_make(cl_context ctx, cl_device_id dev, size_t size)
{
    while (rs.total + size > rs.cap) {
        size_t victim = rs.nb;
        for (size_t i = 0; i < rs.nb; i++)
            if (!rs.b[i]->busy && (victim == rs.nb || rs.b[i]->used < rs.b[victim]->used))
                victim = i;
        if (victim == rs.nb)
            return NULL;
        rs_block_free(victim);
    }
    int64_t t0 = rec_time_ns();
    cl_command_queue q = rs_ctx_queue(ctx, dev);
    if (!q || plan_grow((void **)&rs.b, &rs.capb, rs.nb + 1, sizeof *rs.b))
        return NULL;
    rs_block *b = calloc(1, sizeof *b);
    cl_int err = CL_SUCCESS;
    cl_mem m = b ? live_next->clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, size, NULL, &err) : NULL;
    void *p = m ? live_next->clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL, NULL, &err)
                : NULL;
    if (!p) {
        if (m)
            live_next->clReleaseMemObject(m);
        free(b);
        return NULL;
    }
    b->ctx = ctx, b->mem = m, b->p = p, b->size = size;
    rs.b[rs.nb++] = b;
    rs.total += size;
    rs.alloc_ns += rec_time_ns() - t0;
    rs.made++;
    return b;
}

/* A free block of @p ctx of at least @p n bytes, taken (busy); NULL when
 * none can be had within the cap. Under rs.mu. */
static rs_block *rs_block_take(cl_context ctx, cl_device_id dev, size_t n)
{
    rs_block *best = NULL;
    for (size_t i = 0; i < rs.nb; i++)
        rs_block_free_now(rs.b[i]);
    for (size_t i = 0; i < rs.nb; i++) {
        rs_block *b = rs.b[i];
        if (b->ctx == ctx && !b->busy && b->size >= n && (!best || b->size < best->size))
            best = b;
    }
    if (!best && !(best = rs_block_make(ctx, dev, rs_class(n))))
        return NULL;
    best->busy = 1;
    best->used = ++rs.tick;
    return best;
}

/* live_stage_buffer(): the context's first device that stages a buffer
 * of @p size bytes, or NULL. Under rs.mu. */
static cl_device_id rs_ctx_device(cl_context ctx, size_t size)
{
    cl_device_id devs[16];
    size_t bytes = 0;
    if (live_next->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs, &bytes) != CL_SUCCESS)
        return NULL;
    for (size_t i = 0; i < bytes / sizeof *devs; i++) {
        size_t min = rs_dev_stages(devs[i]);
        if (min && size >= min)
            return devs[i];
    }
    return NULL;
}

void live_stage_buffer(cl_context ctx, size_t size)
{
    if (!rs.mode || size < rs.min_bytes)
        return;
    size_t cls = rs_class(size);
    pthread_mutex_lock(&rs.mu);
    size_t i = 0, have = 0;
    while (i < rs.nbuf && (rs.buf[i].ctx != ctx || rs.buf[i].size != cls))
        i++;
    if (i == rs.nbuf && plan_grow((void **)&rs.buf, &rs.capbuf, rs.nbuf + 1, sizeof *rs.buf) == 0)
        rs.buf[rs.nbuf++] = (rs_bufs){ctx, cls, 0};
    if (i < rs.nbuf && rs.buf[i].count < RS_PREPARE) {
        rs.buf[i].count++;
        for (size_t k = 0; k < rs.nb; k++)
            have += rs.b[k]->ctx == ctx && rs.b[k]->size == cls;
        /* one per buffer and one more: a read finds a free block while
           every buffer's write is still pending (deferred copies) */
        cl_device_id dev = have <= rs.buf[i].count ? rs_ctx_device(ctx, size) : NULL;
        while (dev && have <= rs.buf[i].count && rs_block_make(ctx, dev, cls)) {
            rs.ahead++;
            have++;
        }
    }
    pthread_mutex_unlock(&rs.mu);
}

/* Frees a block. Takes no lock: the driver's callback thread calls it, and
 * the driver may be waiting (a map in rs_block_take) while rs.mu is held. */
static void rs_block_put(rs_block *b)
{
    atomic_store(&b->busy, 0);
}

static void CL_CALLBACK rs_written(cl_event e, cl_int status, void *user)
{
    (void)e;
    (void)status;   /* complete or failed: the block is not read any more */
    rs_block_put(user);
}

/* Whether a pending read (rs_fill) still fills some of [p, p + n); the
 * completed ones are forgotten. Under rs.mu. */
static int rs_filling(const void *p, size_t n)
{
    const unsigned char *a = p;
    int hit = 0;
    size_t k = 0;
    for (size_t i = 0; i < rs.nfill; i++) {
        rs_fill *f = rs.fill[i];
        if (atomic_load(&f->done)) {
            free(f);
            continue;
        }
        hit |= a < f->p + f->n && f->p < a + n;
        rs.fill[k++] = f;
    }
    rs.nfill = k;
    return hit || rs.fill_full;
}

static void CL_CALLBACK rs_filled(cl_event e, cl_int status, void *user)
{
    (void)e;
    (void)status;   /* complete or failed: the read writes no more */
    atomic_store(&((rs_fill *)user)->done, 1);
}

void live_stage_filling(const void *p, size_t n, cl_event e)
{
    if (!rs.mode || !p || !n)
        return;
    rs_fill *f = calloc(1, sizeof *f);
    pthread_mutex_lock(&rs.mu);
    if (!f || rs.nfill >= RS_FILL_MAX ||
        plan_grow((void **)&rs.fill, &rs.capfill, rs.nfill + 1, sizeof *rs.fill)) {
        rs.fill_full = 1;   /* not tracked, so any write's bytes may be its: none is staged again */
        pthread_mutex_unlock(&rs.mu);
        free(f);
        return;
    }
    f->p = p;
    f->n = n;
    rs.fill[rs.nfill++] = f;
    pthread_mutex_unlock(&rs.mu);
    /* no event, or no callback: its completion is never learned, and the
       range is never staged from again */
    if (e)
        live_next->clSetEventCallback(e, CL_COMPLETE, rs_filled, f);
}

/* A block for a transfer of @p size bytes on @p q, or NULL: not staged. */
static rs_block *rs_begin(cl_command_queue q, size_t size, const void *ptr, int read, cl_bool blocking)
{
    if (!rs.mode || size < rs.min_bytes || !ptr || (read && rs.writes_only))
        return NULL;
    cl_context ctx;
    cl_device_id dev;
    rs_block *b = NULL;
    pthread_mutex_lock(&rs.mu);
    size_t min;
    if (!read && (rs.nfill || rs.fill_full) && rs_filling(ptr, size)) {
        rs.fill_kept++;   /* a pending read fills these bytes: the driver reads them when the write runs */
        pthread_mutex_unlock(&rs.mu);
        return NULL;
    }
    if ((!read || blocking || !rs.user_events) && (min = rs_queue_stages(q, &ctx, &dev)) && size >= min) {
        b = rs_block_take(ctx, dev, size);
        if (!b)
            rs.no_block++;
    }
    pthread_mutex_unlock(&rs.mu);
    return b;
}

static void rs_count(int read, size_t size, int64_t copy_ns)
{
    pthread_mutex_lock(&rs.mu);
    rs.copy_ns += copy_ns;
    if (read)
        rs.reads++;
    else
        rs.writes++;
    rs.bytes += size;
    pthread_mutex_unlock(&rs.mu);
}

/* ------------------------------------------------------------ deferred copies
 *
 * A non-blocking staged write is enqueued before its bytes are in the
 * block: its wait list also holds a user event of the layer's, which the
 * copy thread completes once it has copied them (through the pool, as the
 * caller of rs_copy). Jobs run in the order they were posted. The driver
 * may not start the write, nor, on an in-order queue, anything after it,
 * before the copy is done: a clFinish or blocking call of the application
 * waits for the copy thread, which waits for nothing of the application's.
 * A process forked after the thread started has no such thread: its writes
 * copy first. */
typedef struct rs_job {
    struct rs_job *next;
    void *dst;
    const void *src;
    size_t n;
    cl_event done;            /* the user event the write waits for */
} rs_job;

static void *rs_async_worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&rs.async_mu);
        while (!rs.head)
            pthread_cond_wait(&rs.async_cv, &rs.async_mu);
        rs_job *j = rs.head;
        rs.head = j->next;
        if (!rs.head)
            rs.tail = NULL;
        pthread_mutex_unlock(&rs.async_mu);
        int64_t t0 = rec_time_ns();
        rs_copy(j->dst, j->src, j->n, 1);
        int64_t ns = rec_time_ns() - t0;
        live_next->clSetUserEventStatus(j->done, CL_COMPLETE);
        live_next->clReleaseEvent(j->done);
        free(j);
        pthread_mutex_lock(&rs.async_mu);
        rs.inflight--;
        pthread_mutex_unlock(&rs.async_mu);
        pthread_mutex_lock(&rs.mu);
        rs.copy_ns += ns;
        pthread_mutex_unlock(&rs.mu);
    }
    return NULL;
}

/* Whether this process has the copy thread (started now if not yet). */
static int rs_async_ready(void)
{
    pid_t me = getpid();
    pthread_mutex_lock(&rs.async_mu);
    if (!rs.async_pid && me == rs.pid) {
        sigset_t all, old;
        pthread_t th;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        if (pthread_create(&th, NULL, rs_async_worker, NULL) == 0) {
            pthread_detach(th);
            rs.async_pid = me;
        } else {
            rs.async = 0;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    int ok = rs.async_pid == me;
    pthread_mutex_unlock(&rs.async_mu);
    return ok;
}

static void rs_async_post(rs_job *j)
{
    pthread_mutex_lock(&rs.async_mu);
    if (rs.tail)
        rs.tail->next = j;
    else
        rs.head = j;
    rs.tail = j;
    rs.inflight++;
    if (!rs.posted)
        rs.first_post_ns = rec_time_ns();
    rs.posted = 1;
    pthread_cond_signal(&rs.async_cv);
    pthread_mutex_unlock(&rs.async_mu);
}

/* A blocking staged transfer, clFinish or clWaitForEvents is about to
 * wait (live_stage_wait). Deferring a copy pays for itself when the
 * application goes on enqueueing while it is copied (a loop of launches
 * after its writes, a chain of launches held for fusion), not when it
 * waits for the copy at once (a write, a few launches, a blocking read:
 * the user event only adds the driver's latency in releasing what waits
 * for it). So: whether the copies posted since the last such transfer are
 * done, or the application spent at least LIVE_STAGE_OVERLAP_NS since the
 * first of them before waiting (that much of its work overlapped the
 * copies); once more of those transfers found neither than either, the
 * run's non-blocking writes copy first again (unless CLRR_STAGE_ASYNC=2).
 * The run's first wait may not count (live_stage_vote). */
static void rs_async_sync(void)
{
    pthread_mutex_lock(&rs.async_mu);
    if (rs.posted) {
        rs.posted = 0;
        int64_t gap = rec_time_ns() - rs.first_post_ns;
        int v = live_stage_vote(!rs.waited, rs.inflight > 0, gap);
        if (!rs.waited) {
            rs.waited = 1;
            rs.first_gap_ns = gap;
        }
        if (v == LIVE_STAGE_UNCOUNTED)
            rs.uncounted = 1;
        else if (v == LIVE_STAGE_LATE)
            rs.late++;
        else
            rs.early++;
        if (rs.late > rs.early && rs.async == 1)
            rs.async = 0;
    }
    pthread_mutex_unlock(&rs.async_mu);
}

void live_stage_wait(void)
{
    if (rs.mode)
        rs_async_sync();
}

/* Enqueues the write from block @p b, waiting for the application's list
 * and for the copy, then posts the copy. @return 1 with *r the driver's
 * answer (the copy posted only when it succeeded), 0 when it could not be
 * set up (the caller copies first). */
static int rs_write_deferred(cl_command_queue q, cl_mem buf, size_t off, size_t size, const void *ptr, cl_uint nw,
                             const cl_event *wl, cl_event *e, rs_block *b, cl_int *r)
{
    cl_event small[16], *all = small;
    if (nw > 4096)
        return 0;   /* copied first; the driver judges such a list */
    rs_job *j = malloc(sizeof *j);
    cl_int err = CL_SUCCESS;
    cl_event u = j ? live_next->clCreateUserEvent(b->ctx, &err) : NULL;
    if (!u || err != CL_SUCCESS || (nw + 1 > 16 && !(all = malloc((nw + 1) * sizeof *all)))) {
        if (u)
            live_next->clReleaseEvent(u);
        free(j);
        return 0;
    }
    for (cl_uint i = 0; i < nw; i++)
        all[i] = wl[i];
    all[nw] = u;
    *r = live_next->clEnqueueWriteBuffer(q, buf, CL_FALSE, off, size, b->p, nw + 1, all, e);
    if (all != small)
        free(all);
    if (*r != CL_SUCCESS) {
        live_next->clSetUserEventStatus(u, CL_COMPLETE);
        live_next->clReleaseEvent(u);
        free(j);
        return 1;
    }
    *j = (rs_job){.dst = b->p, .src = ptr, .n = size, .done = u};
    rs_async_post(j);
    return 1;
}

/* ------------------------------------------------------------ transfers */

int live_stage_write(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size, const void *ptr,
                    cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *ret)
{
    if ((nw > 0) != (wl != NULL))
        return 0;   /* the driver's own answer (an error) */
    rs_block *b = rs_begin(q, size, ptr, 0, blocking);
    if (!b)
        return 0;
    cl_event e = NULL;
    cl_int r;
    int64_t copy_ns = 0;
    if (blocking)
        rs_async_sync();
    int deferred = !blocking && rs.async && rs_async_ready() && rs_write_deferred(q, buf, off, size, ptr, nw, wl, &e, b, &r);
    if (!deferred) {
        int64_t t0 = rec_time_ns();
        rs_copy(b->p, ptr, size, 1);
        copy_ns = rec_time_ns() - t0;
        r = live_next->clEnqueueWriteBuffer(q, buf, blocking, off, size, b->p, nw, wl, &e);
    } else if (r == CL_SUCCESS) {
        pthread_mutex_lock(&rs.mu);
        rs.deferred++;
        pthread_mutex_unlock(&rs.mu);
    }
    if (r != CL_SUCCESS) {
        rs_block_put(b);
    } else if (!ev) {   /* ours: polled when a block is next wanted */
        pthread_mutex_lock(&rs.mu);
        b->pending = e;
        pthread_mutex_unlock(&rs.mu);
        rs_count(0, size, copy_ns);
    } else {   /* the application's, with its one reference: a callback frees the block */
        if (live_next->clSetEventCallback(e, CL_COMPLETE, rs_written, b) != CL_SUCCESS) {
            live_next->clWaitForEvents(1, &e);   /* the block must outlive the write */
            rs_block_put(b);
        }
        *ev = e;
        rs_count(0, size, copy_ns);
    }
    *ret = r;
    return 1;
}

/* The most pieces one read is cut into. */
#define RS_READ_PIECES 16

/* Reads @p size bytes of @p buf into block @p b and copies them to @p ptr
 * piece by piece: every piece's read is enqueued at once (each with the
 * application's wait list), then each piece is copied out as soon as its
 * read is done, while the device reads the next ones. Only where the
 * application asked for no event (one command would stand for the read).
 * @return 1 with the read's status in *ret (as one blocking read would
 * have returned it); 0: nothing was enqueued, read it whole. */
static int rs_read_pieces(cl_command_queue q, cl_mem buf, size_t off, size_t size, void *ptr, rs_block *b,
                          cl_uint nw, const cl_event *wl, cl_int *ret)
{
    size_t piece = rs.piece;
    if (!piece || size < 2 * piece)
        return 0;
    if (size > RS_READ_PIECES * piece)
        piece = (size + RS_READ_PIECES - 1) / RS_READ_PIECES;
    cl_event e[RS_READ_PIECES];
    unsigned n = 0;
    size_t at = 0;
    cl_int r = CL_SUCCESS;
    for (; at < size && n < RS_READ_PIECES; n++, at += piece) {
        size_t len = size - at < piece ? size - at : piece;
        if (live_next->clEnqueueReadBuffer(q, buf, CL_FALSE, off + at, len, (unsigned char *)b->p + at, nw, wl,
                                         &e[n]) != CL_SUCCESS)
            break;
    }
    if (!n)
        return 0;
    live_next->clFlush(q);
    int64_t copy_ns = 0;
    for (unsigned i = 0; i < n; i++) {
        size_t lo = i * piece, len = size - lo < piece ? size - lo : piece;
        cl_int w = live_next->clWaitForEvents(1, &e[i]);
        if (w == CL_SUCCESS && r == CL_SUCCESS) {
            int64_t t0 = rec_time_ns();
            rs_copy((unsigned char *)ptr + lo, (unsigned char *)b->p + lo, len, 0);
            copy_ns += rec_time_ns() - t0;
        } else if (r == CL_SUCCESS) {
            r = w;   /* (what the blocking read would have returned) */
        }
        live_next->clReleaseEvent(e[i]);
    }
    if (r == CL_SUCCESS && at < size) {   /* a piece's read could not be enqueued: the rest whole */
        r = live_next->clEnqueueReadBuffer(q, buf, CL_TRUE, off + at, size - at, (unsigned char *)b->p + at, nw, wl,
                                         NULL);
        if (r == CL_SUCCESS)
            rs_copy((unsigned char *)ptr + at, (unsigned char *)b->p + at, size - at, 0);
    }
    rs_count(1, size, copy_ns);
    pthread_mutex_lock(&rs.mu);
    rs.piecewise++;
    pthread_mutex_unlock(&rs.mu);
    *ret = r;
    return 1;
}

/* The staged read, its block kept (record mode: the recorder captures the
 * read-back from the block after the call returns, then releases it). */
static int rs_read(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size, void *ptr,
                   cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *ret, rs_block **held)
{
    if ((nw > 0) != (wl != NULL))
        return 0;
    rs_block *b = rs_begin(q, size, ptr, 1, blocking);
    if (!b)
        return 0;
    rs_async_sync();
    cl_int r = CL_SUCCESS;
    if (ev || !rs_read_pieces(q, buf, off, size, ptr, b, nw, wl, &r)) {
        r = live_next->clEnqueueReadBuffer(q, buf, CL_TRUE, off, size, b->p, nw, wl, ev);
        if (r == CL_SUCCESS) {
            int64_t t0 = rec_time_ns();
            rs_copy(ptr, b->p, size, 0);
            rs_count(1, size, rec_time_ns() - t0);
        }
    }
    if (held && r == CL_SUCCESS)
        *held = b;
    else
        rs_block_put(b);
    *ret = r;
    return 1;
}

int live_stage_read(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size, void *ptr,
                    cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *ret)
{
    if (rs_read(q, buf, blocking, off, size, ptr, nw, wl, ev, ret, NULL))
        return 1;
    if (blocking || !rs.mode || !ptr || !size || (nw > 0) != (wl != NULL))
        return 0;
    /* not staged and non-blocking: made here as the application made it,
       with an event (ours where it asked none, released at once: the
       callback still comes) to learn when its bytes are in */
    cl_event mine = NULL;
    cl_int r = live_next->clEnqueueReadBuffer(q, buf, CL_FALSE, off, size, ptr, nw, wl, ev ? ev : &mine);
    if (r == CL_SUCCESS)
        live_stage_filling(ptr, size, ev ? *ev : mine);
    if (mine)
        live_next->clReleaseEvent(mine);
    *ret = r;
    return 1;
}

int live_stage_read_held(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size, void *ptr,
                         cl_uint nw, const cl_event *wl, cl_event *ev, cl_int *ret, const void **bytes,
                         void **hold)
{
    rs_block *b = NULL;
    if (!rs_read(q, buf, blocking, off, size, ptr, nw, wl, ev, ret, hold ? &b : NULL))
        return 0;
    if (hold) {
        *hold = b;
        *bytes = b ? b->p : NULL;
    }
    return 1;
}

void live_stage_release(void *hold)
{
    if (hold)
        rs_block_put(hold);
}

void live_stage_report(FILE *f)
{
    pthread_mutex_lock(&rs.async_mu);
    unsigned long long early = rs.early, late = rs.late;
    int uncounted = rs.uncounted;
    long long first_us = rs.waited ? (long long)(rs.first_gap_ns / 1000) : -1;
    pthread_mutex_unlock(&rs.async_mu);
    pthread_mutex_lock(&rs.mu);
    fprintf(f,
            "\"stage\": \"%s\", \"stage_reads\": %s, \"stage_threads\": %u, \"staged_writes\": %llu, \"staged_reads\": %llu, "
            "\"staged_bytes\": %llu, \"stage_no_block\": %llu, \"stage_block_bytes\": %llu, \"stage_alloc_us\": %lld, "
            "\"stage_copy_us\": %lld, \"stage_blocks\": %llu, \"stage_blocks_ahead\": %llu, \"stage_deferred\": %llu, "
            "\"stage_deferred_early\": %llu, \"stage_deferred_late\": %llu, \"stage_deferred_uncounted\": %d, "
            "\"stage_deferred_first_us\": %lld, \"stage_read_pieces\": %llu, \"stage_plan\": %s, "
            "\"stage_plan_kept\": %u, \"stage_plan_unstaged\": %u, \"stage_fill_kept\": %llu",
            rs.mode == 2 ? "all" : rs.mode == 1 ? "auto" : "off", rs.writes_only ? "false" : "true",
            rs.mode ? rs.threads : 0,
            (unsigned long long)rs.writes, (unsigned long long)rs.reads, (unsigned long long)rs.bytes,
            (unsigned long long)rs.no_block, (unsigned long long)rs.total, (long long)(rs.alloc_ns / 1000),
            (long long)(rs.copy_ns / 1000), (unsigned long long)rs.made, (unsigned long long)rs.ahead,
            (unsigned long long)rs.deferred, early, late, uncounted, first_us, (unsigned long long)rs.piecewise,
            rs.plan ? "true" : "false", rs.plan_kept, rs.plan_unstaged, (unsigned long long)rs.fill_kept);
    pthread_mutex_unlock(&rs.mu);
}
