/* rec_data.c — capturing data (inline bytes or blobs) and encoding the
 * values generated entry points cannot encode alone: handles, data slots,
 * property lists, structs; and the length helpers named in api.overlay. */
#include "recorder/rec_int.h"
#include "trace-format/tf_len.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

size_t rec_cap_count(size_t n)
{
    return n > REC_MAX_COUNT ? REC_MAX_COUNT : n;
}

void rec_slot_fill(rec_call *c, rec_slot *s, const void *p, size_t len)
{
    if (!p) {
        s->state = REC_SLOT_NULL;
    } else if (!c->capture) {
        s->state = REC_SLOT_SKIPPED;
    } else if (len <= REC_INLINE_MAX) {
        s->state = REC_SLOT_INLINE;
        s->n = (uint32_t)len;
        memcpy(s->v.bytes, p, len);
    } else {
        s->state = REC_SLOT_BLOB;
        tf_writer_blob(rec_g.w, p, len, &s->v.blob);
    }
}

/* A capture path's switch for measuring one path against another: 1
 * unless variable @p name is "0", read once into @p cache (-1: not yet). */
static int rec_env_on(_Atomic int *cache, const char *name)
{
    int on = atomic_load_explicit(cache, memory_order_relaxed);
    if (on < 0) {
        const char *v = getenv(name);
        on = !(v && !strcmp(v, "0"));
        atomic_store_explicit(cache, on, memory_order_relaxed);
    }
    return on;
}

/* CLRR_REC_OVERLAP=0: inputs are captured before the driver's call, as
 * before the overlap (for measuring one against the other). */
static _Atomic int rec_overlap_on = -1;

static int rec_overlap(void)
{
    return rec_env_on(&rec_overlap_on, "CLRR_REC_OVERLAP");
}

/* Why the ticket is safe: the application's memory is valid and unchanged
 * for the whole call (the driver reads it; a non-blocking write's pointer
 * may be freed right after the return, hence the join before it). Not in
 * plan mode (the plan may change the call, or skip it) nor with numbers
 * taken at entry (a capture range: the BEGIN written after the driver's
 * call would come after later numbers). */
static _Atomic uint64_t rec_n_overlap, rec_n_pipe;   /* CLRR_REC_COUNTS */

void rec_slot_fill_ov(rec_call *c, rec_slot *s, const void *p, size_t len)
{
    tf_status st;

    if (p && c->capture)
        rec_reads_settle(p, len);   /* a pending read into it: its bytes first */
    if (!p || !c->capture || len <= TF_BLOB_PIECE || c->pend || rec_g.plan || rec_g.seq_at_enter ||
        !rec_overlap()) {
        rec_slot_fill(c, s, p, len);
        return;
    }
    s->state = REC_SLOT_BLOB;
    c->pend = tf_writer_blob_begin(rec_g.w, p, len, &s->v.blob, &st);
    if (c->pend)
        atomic_fetch_add_explicit(&rec_n_overlap, 1, memory_order_relaxed);
}

void rec_cap_in_ov(rec_call *c, unsigned i, const void *p, size_t len)
{
    rec_slot_fill_ov(c, &c->in[i], p, len);
}

void rec_cap_join(rec_call *c)
{
    if (c->pend) {
        tf_writer_blob_join(rec_g.w, c->pend);
        c->pend = NULL;
    }
}

static int rec_hashes(size_t len)
{
    return rec_g.ctl.hash_reads || (rec_g.ctl.hash_reads_over && len > rec_g.ctl.hash_reads_over);
}

uint32_t rec_data_features(void)
{
    return rec_g.ctl.hash_reads || rec_g.ctl.hash_reads_over ? TF_FEATURE_HASHED_READS : 0;
}

/* Pipelined blocking reads ----------------------------------------------
 * What is left of a large blocking read's cost on the application's thread
 * is the capture of its read-back, which can start only once the bytes are
 * there: on the H200, `micro data 20 random`'s 20 blocking reads of 16 MiB
 * waited about 0.8 ms each for it after the driver returned. Issued as
 * pieces, the capture of each (by the writer's workers, one ticket:
 * tf_writer_blob_open/avail/join) runs while the driver reads the next,
 * and only the last piece's is left after the data is all there. */
#define REC_PIPE_MIN   ((size_t)8 << 20)   /* smallest read issued in pieces: two of 4 MiB */
#define REC_PIPE_PIECE ((size_t)4 << 20)   /* a piece (a multiple of TF_BLOB_PIECE) */
#define REC_PIPE_MAXK  16                  /* most pieces; larger reads get larger pieces */

static _Atomic int rec_pipe_on = -1;   /* CLRR_REC_PIPELINE_READS=0: off */

static int rec_pipe_enabled(void)
{
    return rec_env_on(&rec_pipe_on, "CLRR_REC_PIPELINE_READS");
}

static int rec_hashes(size_t len);
static const char rec_pipe_mark;   /* c->hook_p: the read went in pieces */

/* Whether the read can go in pieces with nothing the application sees
 * changed: an in-order queue (its pieces then run in order, after the
 * application's wait list, which the first one gets), a buffer that is not
 * a sub-buffer, the range within it. Anything odd goes the plain way, and
 * the driver answers it. */
static int rec_pipe_ok(cl_command_queue q, cl_mem buf, size_t off, size_t size)
{
    cl_command_queue_properties props = 0;
    cl_mem_object_type type = 0;
    cl_mem parent = NULL;
    size_t msize = 0;

    return rec_next.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL) == CL_SUCCESS &&
           !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) &&
           rec_next.clGetMemObjectInfo(buf, CL_MEM_TYPE, sizeof type, &type, NULL) == CL_SUCCESS &&
           type == CL_MEM_OBJECT_BUFFER &&
           rec_next.clGetMemObjectInfo(buf, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) ==
               CL_SUCCESS &&
           parent == NULL &&
           rec_next.clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof msize, &msize, NULL) == CL_SUCCESS &&
           off <= msize && size <= msize - off;
}

int rec_read_pipe(rec_call *c, cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size,
                  void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    cl_event ev[REC_PIPE_MAXK];
    size_t end[REC_PIPE_MAXK];   /* bytes of ptr complete once piece i is */
    size_t piece = REC_PIPE_PIECE;
    unsigned k, n, i;
    cl_int ret = CL_SUCCESS, r;
    tf_wticket *t;
    int rest = 0;   /* a piece was refused: the rest was read in one blocking read */

    c->hook_p = NULL;
    /* an event the application asked for must be one command's: plain; a
     * timed call's event is ours (the stand-in), left unset: the pieces
     * give the device time */
    if (!blocking || (event && !(c->timed && c->own_event)) || !ptr || size < REC_PIPE_MIN || !c->capture ||
        rec_g.plan || rec_g.seq_at_enter || rec_hashes(size) || !rec_pipe_enabled() ||
        !rec_pipe_ok(q, buf, off, size))
        return 0;
    if ((size + piece - 1) / piece > REC_PIPE_MAXK)
        piece = ((size + REC_PIPE_MAXK - 1) / REC_PIPE_MAXK + TF_BLOB_PIECE - 1) / TF_BLOB_PIECE * TF_BLOB_PIECE;
    k = (unsigned)((size + piece - 1) / piece);
    for (i = 0; i < k; i++)
        end[i] = i + 1 < k ? (size_t)(i + 1) * piece : size;
    /* the first piece, with the application's wait list: refused, nothing
     * was issued, and the plain call gets the driver's own answer */
    ev[0] = NULL;
    if (rec_next.clEnqueueReadBuffer(q, buf, CL_FALSE, off, end[0], ptr, nwait, wait, &ev[0]) != CL_SUCCESS ||
        !ev[0]) {
        if (ev[0])
            rec_next.clReleaseEvent(ev[0]);
        return 0;
    }
    atomic_fetch_add_explicit(&rec_n_pipe, 1, memory_order_relaxed);
    c->hook_p = &rec_pipe_mark;
    c->scratch[0] = c->scratch[1] = 0;   /* device time: the first piece's start, the last's end */
    t = tf_writer_blob_open(rec_g.w, ptr, size, &c->out[5].v.blob);   /* NULL: captured at the end */
    for (n = 1, i = 0; n < k; n++) {
        /* a driver that reads into pageable memory before a non-blocking
         * read returns (as CUDA does) has the last piece there: its capture
         * then runs during the next one's read (one look, no wait) */
        cl_int st = CL_QUEUED;
        for (; t && i < n && rec_next.clGetEventInfo(ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                                                     NULL) == CL_SUCCESS && st == CL_COMPLETE; i++)
            tf_writer_blob_avail(rec_g.w, t, end[i]);
        ev[n] = NULL;
        r = rec_next.clEnqueueReadBuffer(q, buf, CL_FALSE, off + end[n - 1], end[n] - end[n - 1],
                                         (uint8_t *)ptr + end[n - 1], 0, NULL, &ev[n]);
        if (r != CL_SUCCESS || !ev[n]) {
            if (ev[n])
                rec_next.clReleaseEvent(ev[n]);
            /* the rest in one blocking read (after the pieces, in order): its answer is the call's */
            ret = rec_next.clEnqueueReadBuffer(q, buf, CL_TRUE, off + end[n - 1], size - end[n - 1],
                                               (uint8_t *)ptr + end[n - 1], 0, NULL, NULL);
            rest = 1;
            break;
        }
    }
    if (!rest)
        rec_next.clFlush(q);
    for (i = 0; i < n; i++) {
        r = rec_next.clWaitForEvents(1, &ev[i]);
        if (r != CL_SUCCESS && ret == CL_SUCCESS)
            ret = r;   /* a blocking read's answer when its wait list failed */
        if (t && ret == CL_SUCCESS)
            tf_writer_blob_avail(rec_g.w, t, end[i]);
    }
    if (c->timed && ret == CL_SUCCESS && !rest) {   /* (after a refusal: no device time) */
        cl_ulong start = 0, stop = 0;
        if (rec_next.clGetEventProfilingInfo(ev[n - 1], CL_PROFILING_COMMAND_END, sizeof stop, &stop, NULL) ==
                CL_SUCCESS &&
            rec_next.clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) !=
                CL_SUCCESS)
            start = 0;
        c->scratch[0] = start;
        c->scratch[1] = stop;
    }
    for (i = 0; i < n; i++)
        rec_next.clReleaseEvent(ev[i]);
    if (t) {
        c->out[5].state = REC_SLOT_BLOB;   /* rec_cap_complete: captured */
        tf_writer_blob_join(rec_g.w, t);
    }
    c->ret_override = ret;
    return 1;
}

static const char rec_stage_mark;   /* c->hook_p: the layer staged the read */
static _Atomic int rec_hold_on = -1;  /* CLRR_REC_STAGE_HOLD=0: staged read-backs captured at the call */

static int rec_hold_enabled(void)
{
    return rec_env_on(&rec_hold_on, "CLRR_REC_STAGE_HOLD");
}

int rec_read_stage(rec_call *c, cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t size,
                   void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    cl_int r;
    const void *bytes = NULL;
    void *hold = NULL;
    /* the capture from the block, later, where it would copy the bytes
     * (no capture range: numbers given at entry order DATA records too) */
    int later = ptr && c->capture && !rec_g.seq_at_enter && rec_hold_enabled();
    if (!rec_g.stage ||
        !rec_stage_read_call(q, buf, blocking, off, size, ptr, nwait, wait, event, &r, &bytes, later ? &hold : NULL))
        return 0;
    c->hook_p = &rec_stage_mark;
    c->ret_override = r;
    c->scratch[0] = (uintptr_t)bytes;
    c->scratch[1] = (uintptr_t)hold;
    return 1;
}

void rec_data_counts(void)
{
    const char *path = getenv("CLRR_REC_COUNTS");
    FILE *fp;

    if (!path || !*path || !(fp = fopen(path, "a")))
        return;
    fprintf(fp, "overlapped_captures %llu pipelined_reads %llu staged_transfers %llu\n",
            (unsigned long long)atomic_load(&rec_n_overlap), (unsigned long long)atomic_load(&rec_n_pipe),
            (unsigned long long)atomic_load(&rec_n_staged));
    fclose(fp);
}

void rec_slot_fill_read(rec_call *c, rec_slot *s, const void *p, size_t len)
{
    if (!p || !c->capture || !rec_hashes(len)) {
        rec_slot_fill(c, s, p, len);
        return;
    }
    s->state = REC_SLOT_HASH;
    tf_hash(p, len, &s->v.blob);
}

void rec_cap_in(rec_call *c, unsigned i, const void *p, size_t len)
{
    rec_slot_fill(c, &c->in[i], p, len);
}

void rec_cap_out(rec_call *c, unsigned i, const void *p, size_t len)
{
    rec_slot_fill(c, &c->out[i], p, len);
}

void rec_cap_complete(rec_call *c, unsigned i, const void *p, size_t len, cl_bool blocking,
                      cl_event ev)
{
    int staged = c->fn == REC_FN_clEnqueueReadBuffer && c->hook_p == &rec_stage_mark;
    /* a non-blocking read the stager did not make (in plan mode it makes
       every clEnqueueReadBuffer it sees, live_stage_read): no write is
       staged from its memory until it completes */
    if (!blocking && p && !staged && !(c->plan && c->fn == REC_FN_clEnqueueReadBuffer))
        rec_stage_filling(p, len, ev);
    if (staged && c->scratch[1]) {   /* rec_read_stage kept the block: captured from it, later */
        if (p && c->capture) {
            c->out[i].state = REC_SLOT_DEFERRED;
            rec_defer_held(c->seq, rec_gen_sigs[c->fn].params[i].name, (const void *)(uintptr_t)c->scratch[0], len,
                           (void *)(uintptr_t)c->scratch[1]);
        } else {
            rec_stage_release((void *)(uintptr_t)c->scratch[1]);
        }
        c->scratch[1] = 0;
        if (blocking)
            rec_events_poll(0);
        return;
    }
    if (!p || !c->capture || blocking || staged) {   /* (staged: the bytes are there) */
        if (c->fn == REC_FN_clEnqueueReadBuffer && c->hook_p == &rec_pipe_mark) {   /* rec_read_pipe's */
            if (c->out[i].state == REC_SLOT_NONE)
                rec_slot_fill_read(c, &c->out[i], p, len);   /* no ticket: captured now */
            if (c->scratch[1]) {   /* timed: the span of its pieces (it is after BEGIN: FORMAT.md 4) */
                tf_wrec_devtime(tf_writer_lock(rec_g.w), c->seq, 0, 0, c->scratch[0], c->scratch[1]);
                tf_writer_unlock(rec_g.w);
            }
        } else {
            rec_slot_fill_read(c, &c->out[i], p, len);
        }
        /* A blocking command returned: on an in-order queue every command
         * before it has completed, and the application may now reuse or
         * free the memory of their non-blocking reads (Parboil's
         * mri-gridding frees it before any clFinish). Capture them now, not
         * at the background poll, which could read overwritten or unmapped
         * memory. Nothing pending: one atomic load. */
        if (blocking)
            rec_events_poll(0);
        return;
    }
    if (!ev) {
        /* no event to learn completion from (device timing and the stand-in
         * event are both off): say so rather than record wrong data */
        c->out[i].state = REC_SLOT_SKIPPED;
        return;
    }
    c->out[i].state = REC_SLOT_DEFERRED;
    rec_defer_capture(c->seq, rec_gen_sigs[c->fn].params[i].name, ev, p, len);
}

void rec_enc_slot(tf_enc *e, const rec_slot *s)
{
    switch (s->state) {
    case REC_SLOT_SKIPPED:
        tf_enc_bool(e, 0);
        break;
    case REC_SLOT_BLOB:
        tf_enc_blobref(e, &s->v.blob);
        break;
    case REC_SLOT_HASH:
        tf_enc_hashref(e, &s->v.blob);
        break;
    case REC_SLOT_INLINE:
        tf_enc_bin(e, s->v.bytes, s->n);
        break;
    case REC_SLOT_UINT:
        tf_enc_uint(e, s->v.u);
        break;
    case REC_SLOT_BLOBS:
        tf_enc_array(e, s->n);
        for (uint32_t k = 0; k < s->n; k++)
            tf_enc_blobref(e, &s->v.blobs[k]);
        break;
    default:
        tf_enc_nil(e);
    }
}

void rec_enc_in(tf_enc *e, rec_call *c, unsigned i)
{
    rec_enc_slot(e, &c->in[i]);
}

void rec_enc_out(tf_enc *e, rec_call *c, unsigned i)
{
    rec_enc_slot(e, &c->out[i]);
}

void rec_enc_handle_new(tf_enc *e, const void *h, unsigned kind)
{
    tf_enc_uint(e, rec_obj_created(h, kind));
}

rec_extra *rec_extra_add(rec_call *c, int post, const char *key)
{
    int *n = post ? &c->npost : &c->npre;
    if (*n >= REC_MAX_EXTRA)
        return NULL;
    rec_extra *x = &(post ? c->post : c->pre)[(*n)++];
    memset(x, 0, sizeof *x);
    snprintf(x->key, sizeof x->key, "%s", key);
    return x;
}

/* Property lists are 0-terminated key/value pairs of 64-bit integers (all
 * flavours are intptr_t or cl_ulong sized on the platforms we support).
 * Values that are objects (CL_CONTEXT_PLATFORM) are recorded as ids. */
void rec_enc_props(tf_enc *e, const void *p, unsigned flavour)
{
    _Static_assert(sizeof(cl_context_properties) == 8 && sizeof(cl_queue_properties) == 8,
                   "64-bit property lists");
    if (!p) {
        tf_enc_nil(e);
        return;
    }
    const uint64_t *v = p;
    uint32_t n = 0;
    while (n < 128 && v[n])
        n += 2;
    tf_enc_array(e, n + 1);
    for (uint32_t i = 0; i < n; i += 2) {
        tf_enc_uint(e, v[i]);
        if (flavour == REC_PROPS_context && v[i] == CL_CONTEXT_PLATFORM)
            tf_enc_uint(e, rec_obj_id((const void *)(uintptr_t)v[i + 1]));
        else
            tf_enc_uint(e, v[i + 1]);
    }
    tf_enc_uint(e, 0);
}

void rec_enc_struct_cl_image_format(tf_enc *e, const cl_image_format *f)
{
    tf_enc_array(e, 2);
    tf_enc_uint(e, f->image_channel_order);
    tf_enc_uint(e, f->image_channel_data_type);
}

void rec_enc_struct_cl_image_desc(tf_enc *e, const cl_image_desc *d)
{
    tf_enc_array(e, 10);
    tf_enc_uint(e, d->image_type);
    tf_enc_uint(e, d->image_width);
    tf_enc_uint(e, d->image_height);
    tf_enc_uint(e, d->image_depth);
    tf_enc_uint(e, d->image_array_size);
    tf_enc_uint(e, d->image_row_pitch);
    tf_enc_uint(e, d->image_slice_pitch);
    tf_enc_uint(e, d->num_mip_levels);
    tf_enc_uint(e, d->num_samples);
    rec_enc_handle(e, d->mem_object);
}

void rec_enc_struct_cl_buffer_region(tf_enc *e, const cl_buffer_region *r)
{
    tf_enc_array(e, 2);
    tf_enc_uint(e, r->origin);
    tf_enc_uint(e, r->size);
}

/* Bytes of host memory a rect transfer touches, from the host pointer
 * (trace-format/tf_len.h). A length that overflows is no host buffer the
 * driver accepts: nothing is captured (0), and the replayer, computing the
 * same length, refuses the call. */
size_t rec_len_rect(const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch)
{
    size_t n = tf_len_rect(origin, region, row_pitch, slice_pitch);
    return n == TF_LEN_OVERFLOW ? 0 : n;
}

size_t rec_image_elem_size(const cl_image_format *f)
{
    size_t ch;
    switch (f->image_channel_order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH: case CL_Rx:
        ch = 1;
        break;
    case CL_RG: case CL_RA: case CL_RGx:
        ch = 2;
        break;
    case CL_RGB: case CL_RGBx:
        ch = 3;
        break;
    default:
        ch = 4;
    }
    switch (f->image_channel_data_type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8:
        return ch;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16:
    case CL_HALF_FLOAT:
        return 2 * ch;
    case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555:
        return 2;
    case CL_UNORM_INT_101010:
        return 4;
    default:
        return 4 * ch;
    }
}

/* Bytes of host memory an image transfer touches (pitches 0 = tight;
 * trace-format/tf_len.h; an overflow captures nothing, as rec_len_rect). */
size_t rec_len_image(cl_mem image, const size_t *region, size_t row_pitch, size_t slice_pitch)
{
    rec_obj_info info;
    if (!region || !rec_obj_get(image, &info) || !info.elem_size)
        return 0;
    size_t n = tf_len_image(info.elem_size, region, row_pitch, slice_pitch);
    return n == TF_LEN_OVERFLOW ? 0 : n;
}
