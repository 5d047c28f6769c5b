/* rpl_pin.c — pinned host memory for the transfers of queues with lanes
 * (a plan's schedule, rpl_sched.c).
 *
 * Lanes overlap uploads, downloads and kernels only where the driver copies
 * asynchronously. NVIDIA's copies pageable memory on the calling thread
 * (bench/xfer.c: a pageable write and read on two queues move hardly more
 * together than a write alone), so a replay's uploads and downloads, from
 * and to malloc'ed memory, run one after another whatever the lanes
 * (bench/results/README.md, "Replay with plans"). From pinned memory the
 * device's copy engines move them while the host goes on. So the data of a
 * clEnqueueWriteBuffer, and the read-back buffer of a clEnqueueReadBuffer,
 * on a queue with lanes come from here: blocks of CL_MEM_ALLOC_HOST_PTR
 * buffers, mapped once by a queue of the pool's own in their context, kept
 * and reused for the session (making one pins memory: milliseconds).
 *
 * A block holds one call's chunk (rpl_args.c: its header, then its bytes);
 * the chunk's owner gives it back when the chunk is freed (a write's data
 * once its command completed, a read-back once it was compared), and the
 * pool releases every block at the session's end, after every chunk.
 * Blocks come in power-of-two sizes from 64 KiB, at most RPL_PIN_CAP bytes
 * in all (`clrr replay --pinned`, rpl_opts.pin_max, less), and no more
 * than the session's --max-memory (the data it may hold at once): past
 * that a free block of another size is released to make room (counted,
 * `evicted`), else the call uses ordinary memory (counted, `fallbacks`).
 * The session's thread alone takes and gives blocks. */
#include "replayer/rpl_int.h"

#include <stdlib.h>
#include <string.h>

#define RPL_PIN_MIN ((size_t)64 << 10)
#define RPL_PIN_CAP ((size_t)1 << 30)

typedef struct rpl_pin {
    cl_context ctx;
    cl_mem mem;
    void *p;
    size_t size;
    int busy;
} rpl_pin;

typedef struct rpl_pin_ctx {
    cl_context ctx;
    cl_command_queue q;       /* maps and unmaps the context's blocks */
} rpl_pin_ctx;

/* Buffers made in a context whose transfers take blocks of one size
 * (rpl_pin_ahead). */
typedef struct rpl_pin_bufs {
    cl_context ctx;
    size_t size;
    unsigned count;
} rpl_pin_bufs;

struct rpl_pins {
    rpl_pin **b;
    size_t nb, bytes;
    rpl_pin_bufs *bufs;
    size_t nbufs;
    rpl_pin_ctx *c;
    size_t nc;
    uint64_t taken, fallbacks;   /* chunks given a block; large ones that found none */
    uint64_t evicted;            /* free blocks released to make room for another size */
};

/* The pool's bound: --pinned (RPL_PIN_CAP by default), at most --max-memory. */
static size_t rpl_pin_cap(const rpl_session *s)
{
    size_t cap = s->o.pin_max ? s->o.pin_max : RPL_PIN_CAP;
    return s->o.max_memory && s->o.max_memory < cap ? s->o.max_memory : cap;
}

/* The pool's queue in context @p ctx, on @p dev (made at the first block). */
static cl_command_queue rpl_pin_ctx_queue(rpl_session *s, struct rpl_pins *P, cl_context ctx, cl_device_id dev)
{
    for (size_t i = 0; i < P->nc; i++)
        if (P->c[i].ctx == ctx)
            return P->c[i].q;
    rpl_pin_ctx *a = realloc(P->c, (P->nc + 1) * sizeof *a);
    if (!a)
        return NULL;
    P->c = a;
    cl_int e = CL_SUCCESS;
    cl_command_queue mq = s->api.clCreateCommandQueueWithProperties
                              ? s->api.clCreateCommandQueueWithProperties(ctx, dev, NULL, &e)
                              : NULL;
    if (!mq || e != CL_SUCCESS)
        return NULL;
    P->c[P->nc++] = (rpl_pin_ctx){ctx, mq};
    return mq;
}

/* The pool's queue in @p q's context (made at the first block). */
static cl_command_queue rpl_pin_queue(rpl_session *s, struct rpl_pins *P, cl_command_queue q, cl_context *ctx)
{
    cl_device_id dev = NULL;
    if (s->api.clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof *ctx, ctx, NULL) != CL_SUCCESS ||
        s->api.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS)
        return NULL;
    return rpl_pin_ctx_queue(s, P, *ctx, dev);
}

static void rpl_pin_release(rpl_session *s, struct rpl_pins *P, size_t i)
{
    rpl_pin *b = P->b[i];
    for (size_t k = 0; k < P->nc; k++)
        if (P->c[k].ctx == b->ctx) {
            s->api.clEnqueueUnmapMemObject(P->c[k].q, b->mem, b->p, 0, NULL, NULL);
            s->api.clFinish(P->c[k].q);
        }
    s->api.clReleaseMemObject(b->mem);
    P->bytes -= b->size;
    free(b);
    P->b[i] = P->b[--P->nb];
}

/* A new free block of @p cls bytes in @p ctx, mapped by @p mq, room made
 * within @p cap by releasing free blocks; NULL when there is none. */
static rpl_pin *rpl_pin_make(rpl_session *s, struct rpl_pins *P, cl_context ctx, cl_command_queue mq, size_t cls,
                             size_t cap)
{
    for (size_t i = P->nb; i-- > 0 && P->bytes + cls > cap;)
        if (!P->b[i]->busy) {
            rpl_pin_release(s, P, i);   /* a free block of another size or context */
            P->evicted++;
        }
    rpl_pin *b = P->bytes + cls <= cap ? calloc(1, sizeof *b) : NULL;
    rpl_pin **a = b ? realloc(P->b, (P->nb + 1) * sizeof *a) : NULL;
    cl_int e = CL_SUCCESS;
    if (a) {
        P->b = a;
        b->mem = s->api.clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, cls, NULL, &e);
    }
    if (b && a && b->mem && e == CL_SUCCESS)
        b->p = s->api.clEnqueueMapBuffer(mq, b->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, cls, 0, NULL, NULL, &e);
    if (!b || !a || !b->mem || !b->p || e != CL_SUCCESS) {
        if (b && b->mem)
            s->api.clReleaseMemObject(b->mem);
        free(b);
        return NULL;
    }
    b->ctx = ctx;
    b->size = cls;
    P->b[P->nb++] = b;
    P->bytes += cls;
    return b;
}

/* The class of @p size: a power of two from @p least, 0 past @p cap. */
static size_t rpl_pin_class(size_t size, size_t least, size_t cap)
{
    size_t cls = least;
    while (cls < size && cls <= cap / 2)
        cls *= 2;
    return cls >= size && cls <= cap ? cls : 0;
}

/* The block of a staged transfer of @p len bytes behind a chunk header of
 * @p hdr bytes: the layer's block for it (live/live_stage.c rs_class: a
 * power of two from 1 MiB) and the header, so that the replay pins what
 * the layer pins; 0 when that data would pass RPL_STAGE_CAP. */
static size_t rpl_pin_stage_class(size_t hdr, size_t len)
{
    size_t cls = rpl_pin_class(len, RPL_STAGE_BLOCK_MIN, RPL_STAGE_CAP);
    return cls ? cls + hdr : 0;
}

/* The staging's bound, in the pool's bytes: RPL_STAGE_CAP of the layer's
 * data (its cap counts its blocks' bytes), each block here also holding
 * one header (at most one per RPL_STAGE_BLOCK_MIN), within the pool's. */
static size_t rpl_pin_stage_cap(const rpl_session *s, size_t hdr)
{
    size_t cap = RPL_STAGE_CAP + RPL_STAGE_CAP / RPL_STAGE_BLOCK_MIN * hdr;
    return cap < rpl_pin_cap(s) ? cap : rpl_pin_cap(s);
}

static struct rpl_pins *rpl_pins_of(rpl_session *s)
{
    if (!s->pins)
        s->pins = calloc(1, sizeof *s->pins);
    return s->pins;
}

/* A free block of @p cls bytes in @p q's context, made within @p cap when
 * there is none (*made set then); NULL when it cannot be had. */
static rpl_pin *rpl_pin_get(rpl_session *s, struct rpl_pins *P, cl_command_queue q, size_t cls, size_t cap, int *made)
{
    cl_context ctx = NULL;
    cl_command_queue mq = cls ? rpl_pin_queue(s, P, q, &ctx) : NULL;
    if (!mq) {
        P->fallbacks++;
        return NULL;
    }
    rpl_pin *b = NULL;
    for (size_t i = 0; i < P->nb && !b; i++)
        if (!P->b[i]->busy && P->b[i]->ctx == ctx && P->b[i]->size == cls)
            b = P->b[i];
    if (!b) {
        *made = 1;
        if (!(b = rpl_pin_make(s, P, ctx, mq, cls, cap))) {
            P->fallbacks++;
            return NULL;
        }
    }
    b->busy = 1;
    P->taken++;
    return b;
}

void *rpl_pin_take(rpl_session *s, cl_command_queue q, size_t size, void **pin)
{
    struct rpl_pins *P = rpl_pins_of(s);
    int made = 0;
    rpl_pin *b = P ? rpl_pin_get(s, P, q, rpl_pin_class(size, RPL_PIN_MIN, rpl_pin_cap(s)), rpl_pin_cap(s), &made) : NULL;
    *pin = b;
    return b ? b->p : NULL;
}

void *rpl_pin_take_staged(rpl_session *s, cl_command_queue q, size_t hdr, size_t len, void **pin)
{
    struct rpl_pins *P = rpl_pins_of(s);
    size_t cap = rpl_pin_stage_cap(s, hdr), cls = rpl_pin_stage_class(hdr, len);
    int made = 0;
    rpl_pin *b = P ? rpl_pin_get(s, P, q, cls, cap, &made) : NULL;
    if (b && made)
        s->sum.plan_stage_block_bytes += cls - hdr;
    *pin = b;
    return b ? b->p : NULL;
}

int rpl_pin_ahead(rpl_session *s, cl_context ctx, cl_device_id dev, size_t hdr, size_t len)
{
    struct rpl_pins *P = rpl_pins_of(s);
    if (!P)
        return -1;
    size_t cap = rpl_pin_stage_cap(s, hdr), cls = rpl_pin_stage_class(hdr, len), i = 0;
    if (!cls)
        return 0;
    while (i < P->nbufs && (P->bufs[i].ctx != ctx || P->bufs[i].size != cls))
        i++;
    if (i == P->nbufs) {
        rpl_pin_bufs *a = realloc(P->bufs, (i + 1) * sizeof *a);
        if (!a)
            return -1;
        P->bufs = a;
        P->bufs[P->nbufs++] = (rpl_pin_bufs){ctx, cls, 0};
    }
    if (P->bufs[i].count >= RPL_PIN_PREPARE)
        return 0;
    unsigned want = ++P->bufs[i].count + 1;   /* one per buffer and one more */
    cl_command_queue mq = rpl_pin_ctx_queue(s, P, ctx, dev);
    if (!mq)
        return 0;
    unsigned have = 0;
    int made = 0;
    for (size_t k = 0; k < P->nb; k++)
        have += P->b[k]->ctx == ctx && P->b[k]->size == cls;
    while (have < want && rpl_pin_make(s, P, ctx, mq, cls, cap)) {
        have++;
        made++;
        s->sum.plan_stage_block_bytes += cls - hdr;
    }
    return made;
}

void rpl_pin_give(void *pin)
{
    if (pin)
        ((rpl_pin *)pin)->busy = 0;
}

void rpl_pin_stats(const rpl_session *s, uint64_t *taken, uint64_t *fallbacks, uint64_t *evicted)
{
    const struct rpl_pins *P = s->pins;
    *taken = P ? P->taken : 0;
    *fallbacks = P ? P->fallbacks : 0;
    *evicted = P ? P->evicted : 0;
}

void rpl_pin_free(rpl_session *s)
{
    struct rpl_pins *P = s->pins;
    if (!P)
        return;
    while (P->nb)
        rpl_pin_release(s, P, P->nb - 1);
    for (size_t i = 0; i < P->nc; i++)
        s->api.clReleaseCommandQueue(P->c[i].q);
    free(P->b);
    free(P->c);
    free(P->bufs);
    free(P);
    s->pins = NULL;
}
