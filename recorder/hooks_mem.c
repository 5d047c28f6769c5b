/* hooks_mem.c — memory objects: contents at creation, host-pointer
 * buffers, mapped regions, SVM. */
#include "recorder/rec_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ reads */
/* A large read: staged through the layer's pinned memory where record
 * mode stages (rec_read_stage), else, blocking, in pieces, each captured
 * while the driver reads the next (rec_data.c rec_read_pipe says when). */
int rec_pre_clEnqueueReadBuffer(rec_call *c, cl_command_queue *a_command_queue, cl_mem *a_buffer,
                                cl_bool *a_blocking_read, size_t *a_offset, size_t *a_size, void **a_ptr,
                                cl_uint *a_num_events_in_wait_list, const cl_event **a_event_wait_list,
                                cl_event **a_event)
{
    return rec_read_stage(c, *a_command_queue, *a_buffer, *a_blocking_read, *a_offset, *a_size, *a_ptr,
                          *a_num_events_in_wait_list, *a_event_wait_list, *a_event) ||
           rec_read_pipe(c, *a_command_queue, *a_buffer, *a_blocking_read, *a_offset, *a_size, *a_ptr,
                         *a_num_events_in_wait_list, *a_event_wait_list, *a_event);
}

/* ------------------------------------------------------------ creation */
static int rec_host_ptr_used(cl_mem_flags flags)
{
    return !!(flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR));
}

int rec_host_ptr_in_svm(const void *p);   /* hooks_map.c */

/* host_ptr: its contents with COPY/USE_HOST_PTR, else its address. A
 * USE_HOST_PTR buffer over SVM memory (pyopencl's SVM.as_buffer) is
 * recorded by address too: it is that allocation, which the replay maps
 * (FORMAT: a uint host_ptr with USE_HOST_PTR is an SVM address). */
static void rec_cap_host(rec_call *c, unsigned i, cl_mem_flags flags, const void *p, size_t size)
{
    if (p && rec_host_ptr_used(flags) && !((flags & CL_MEM_USE_HOST_PTR) && rec_host_ptr_in_svm(p))) {
        rec_slot_fill_ov(c, &c->in[i], p, size);   /* during the driver's call */
    } else {
        c->in[i].state = REC_SLOT_UINT;   /* no contents: the address, for the record */
        c->in[i].v.u = (uint64_t)(uintptr_t)p;
    }
    c->hook_u = size;
}

static void rec_mem_created(cl_mem m, cl_mem_flags flags, size_t size, void *host,
                            size_t elem)
{
    rec_obj_info info = {.kind = REC_OBJ_MEM, .size = size, .flags = flags, .elem_size = elem,
                         .nprops = -1};
    if (host && (flags & CL_MEM_USE_HOST_PTR) && !rec_host_ptr_in_svm(host)) {   /* SVM: its maps say it */
        info.host_ptr = host;
        tf_blobref r;   /* what the creation recorded: later kernels record changes */
        tf_hash(host, size, &r);
        memcpy(info.host_hash, r.hash, 16);
        info.host_hash_valid = 1;
    }
    rec_obj_set(m, &info);
}

int rec_pre_clCreateBuffer(rec_call *c, cl_context *a_context, cl_mem_flags *a_flags, size_t *a_size,
                           void **a_host_ptr, cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_errcode_ret;
    rec_cap_host(c, 3, *a_flags, *a_host_ptr, *a_size);
    return 0;
}

void rec_post_clCreateBuffer(rec_call *c, int ok, cl_mem *ret, cl_context a_context, cl_mem_flags a_flags,
                             size_t a_size, void *a_host_ptr, cl_int *a_errcode_ret)
{
    (void)c;
    (void)a_errcode_ret;
    if (ok)
        rec_mem_created(*ret, a_flags, a_size, a_host_ptr, 0);
    if (ok && rec_g.plan)
        rec_stage_buffer(a_context, a_size);   /* its staging block now, at set-up */
}

int rec_pre_clCreateBufferWithProperties(rec_call *c, cl_context *a_context,
                                         const cl_mem_properties **a_properties, cl_mem_flags *a_flags,
                                         size_t *a_size, void **a_host_ptr, cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_properties;
    (void)a_errcode_ret;
    rec_cap_host(c, 4, *a_flags, *a_host_ptr, *a_size);
    return 0;
}

void rec_post_clCreateBufferWithProperties(rec_call *c, int ok, cl_mem *ret, cl_context a_context,
                                           const cl_mem_properties *a_properties, cl_mem_flags a_flags,
                                           size_t a_size, void *a_host_ptr, cl_int *a_errcode_ret)
{
    (void)c;
    (void)a_properties;
    (void)a_errcode_ret;
    if (ok)
        rec_mem_created(*ret, a_flags, a_size, a_host_ptr, 0);
    if (ok && rec_g.plan)
        rec_stage_buffer(a_context, a_size);   /* its staging block now, at set-up */
}

/* Host bytes of an image's initial contents. */
static size_t rec_image_host_size(const cl_image_format *f, const cl_image_desc *d)
{
    if (!f || !d)
        return 0;
    size_t elem = rec_image_elem_size(f);
    size_t row = d->image_row_pitch ? d->image_row_pitch : d->image_width * elem;
    size_t h = d->image_height ? d->image_height : 1;
    size_t slice = d->image_slice_pitch ? d->image_slice_pitch : row * h;
    switch (d->image_type) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
        return row;
    case CL_MEM_OBJECT_IMAGE2D:
        return row * h;
    case CL_MEM_OBJECT_IMAGE3D:
        return slice * (d->image_depth ? d->image_depth : 1);
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        return (d->image_slice_pitch ? d->image_slice_pitch : row) * d->image_array_size;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        return slice * d->image_array_size;
    default:
        return 0;
    }
}

int rec_pre_clCreateImage(rec_call *c, cl_context *a_context, cl_mem_flags *a_flags,
                          const cl_image_format **a_image_format, const cl_image_desc **a_image_desc,
                          void **a_host_ptr, cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_errcode_ret;
    rec_cap_host(c, 4, *a_flags, *a_host_ptr, rec_image_host_size(*a_image_format, *a_image_desc));
    return 0;
}

void rec_post_clCreateImage(rec_call *c, int ok, cl_mem *ret, cl_context a_context, cl_mem_flags a_flags,
                            const cl_image_format *a_image_format, const cl_image_desc *a_image_desc,
                            void *a_host_ptr, cl_int *a_errcode_ret)
{
    (void)a_context;
    (void)a_image_desc;
    (void)a_errcode_ret;
    if (ok)
        rec_mem_created(*ret, a_flags, c->hook_u, a_host_ptr, rec_image_elem_size(a_image_format));
}

int rec_pre_clCreateImageWithProperties(rec_call *c, cl_context *a_context,
                                        const cl_mem_properties **a_properties, cl_mem_flags *a_flags,
                                        const cl_image_format **a_image_format,
                                        const cl_image_desc **a_image_desc, void **a_host_ptr,
                                        cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_properties;
    (void)a_errcode_ret;
    rec_cap_host(c, 5, *a_flags, *a_host_ptr, rec_image_host_size(*a_image_format, *a_image_desc));
    return 0;
}

void rec_post_clCreateImageWithProperties(rec_call *c, int ok, cl_mem *ret, cl_context a_context,
                                          const cl_mem_properties *a_properties, cl_mem_flags a_flags,
                                          const cl_image_format *a_image_format,
                                          const cl_image_desc *a_image_desc, void *a_host_ptr,
                                          cl_int *a_errcode_ret)
{
    (void)a_context;
    (void)a_properties;
    (void)a_image_desc;
    (void)a_errcode_ret;
    if (ok)
        rec_mem_created(*ret, a_flags, c->hook_u, a_host_ptr, rec_image_elem_size(a_image_format));
}

int rec_pre_clCreateImage2D(rec_call *c, cl_context *a_context, cl_mem_flags *a_flags,
                            const cl_image_format **a_image_format, size_t *a_image_width,
                            size_t *a_image_height, size_t *a_image_row_pitch, void **a_host_ptr,
                            cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_errcode_ret;
    cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = *a_image_width,
                       .image_height = *a_image_height, .image_row_pitch = *a_image_row_pitch};
    rec_cap_host(c, 6, *a_flags, *a_host_ptr, rec_image_host_size(*a_image_format, &d));
    return 0;
}

void rec_post_clCreateImage2D(rec_call *c, int ok, cl_mem *ret, cl_context a_context, cl_mem_flags a_flags,
                              const cl_image_format *a_image_format, size_t a_image_width,
                              size_t a_image_height, size_t a_image_row_pitch, void *a_host_ptr,
                              cl_int *a_errcode_ret)
{
    (void)a_context;
    (void)a_image_width;
    (void)a_image_height;
    (void)a_image_row_pitch;
    (void)a_errcode_ret;
    if (ok)
        rec_mem_created(*ret, a_flags, c->hook_u, a_host_ptr, rec_image_elem_size(a_image_format));
}

int rec_pre_clCreateImage3D(rec_call *c, cl_context *a_context, cl_mem_flags *a_flags,
                            const cl_image_format **a_image_format, size_t *a_image_width,
                            size_t *a_image_height, size_t *a_image_depth, size_t *a_image_row_pitch,
                            size_t *a_image_slice_pitch, void **a_host_ptr, cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_errcode_ret;
    cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE3D, .image_width = *a_image_width,
                       .image_height = *a_image_height, .image_depth = *a_image_depth,
                       .image_row_pitch = *a_image_row_pitch, .image_slice_pitch = *a_image_slice_pitch};
    rec_cap_host(c, 8, *a_flags, *a_host_ptr, rec_image_host_size(*a_image_format, &d));
    return 0;
}

void rec_post_clCreateImage3D(rec_call *c, int ok, cl_mem *ret, cl_context a_context, cl_mem_flags a_flags,
                              const cl_image_format *a_image_format, size_t a_image_width,
                              size_t a_image_height, size_t a_image_depth, size_t a_image_row_pitch,
                              size_t a_image_slice_pitch, void *a_host_ptr, cl_int *a_errcode_ret)
{
    (void)a_context;
    (void)a_image_width;
    (void)a_image_height;
    (void)a_image_depth;
    (void)a_image_row_pitch;
    (void)a_image_slice_pitch;
    (void)a_errcode_ret;
    if (ok)
        rec_mem_created(*ret, a_flags, c->hook_u, a_host_ptr, rec_image_elem_size(a_image_format));
}

void rec_post_clCreateSubBuffer(rec_call *c, int ok, cl_mem *ret, cl_mem a_buffer, cl_mem_flags a_flags,
                                cl_buffer_create_type a_buffer_create_type,
                                const void *a_buffer_create_info, cl_int *a_errcode_ret)
{
    (void)c;
    (void)a_errcode_ret;
    rec_obj_info parent;
    if (!ok || a_buffer_create_type != CL_BUFFER_CREATE_TYPE_REGION || !a_buffer_create_info
        || !rec_obj_get(a_buffer, &parent))
        return;
    const cl_buffer_region *r = a_buffer_create_info;
    rec_obj_info info = {.kind = REC_OBJ_MEM, .size = r->size, .flags = a_flags | parent.flags,
                         .nprops = -1};
    if (parent.host_ptr) {
        info.host_ptr = (char *)parent.host_ptr + r->origin;
        info.flags |= CL_MEM_USE_HOST_PTR;
    }
    rec_obj_set(*ret, &info);
}

/* ------------------------------------------------- host-pointer buffers */
/* Before a kernel runs, the host memory behind its USE_HOST_PTR buffers is
 * what the device reads: record it whenever it changed since last seen.
 *
 * The snapshot is taken when the launch is enqueued, not when it runs: a
 * launch enqueued before it (non-blocking, flushed or not) that has the
 * same memory as an argument may still be writing it, and a snapshot then
 * holds part of that launch's output and part of what was there before (a
 * torn snapshot: tests/progs/usehost_pingpong.c showed it in every
 * recording). The application cannot have written that memory meanwhile
 * (a host write racing a command that uses it is undefined), so what the
 * device reads when this launch starts is what the earlier launches leave:
 * the queue of the last launch that had the buffer as an argument is
 * finished first (a call to the driver the application does not see; it
 * costs time only). Not once the application has made a user event (a
 * command waiting for one that the application sets later would never
 * finish: the snapshot is then taken as it is, and may be torn), nor in
 * plan mode, nor when data is not captured. */
static _Atomic int rec_host_no_wait;

void rec_host_user_event(void)
{
    atomic_store(&rec_host_no_wait, 1);
}

int rec_user_events_made(void)
{
    return atomic_load(&rec_host_no_wait);
}

/* Finishes @p q once per launch (@p done lists the queues finished so far). */
static void rec_host_finish(const void *q, const void *cur, const void **done, int *ndone)
{
    for (int i = 0; i < *ndone; i++)
        if (done[i] == q)
            return;
    rec_obj_info qi;
    /* a queue the application released is no longer in the table */
    if (q != cur && (!rec_obj_get(q, &qi) || qi.kind != REC_OBJ_QUEUE))
        return;
    if (rec_next.clFinish)
        rec_next.clFinish((cl_command_queue)q);
    if (*ndone < 8)
        done[(*ndone)++] = q;
}

static void rec_snapshot_kernel_mems(rec_call *c, cl_command_queue queue, cl_kernel k)
{
    const void *mems[64];
    int n = rec_kernel_host_mems(k, mems, 64);
    if (c->capture && !rec_g.plan && !atomic_load(&rec_host_no_wait)) {
        const void *done[8];
        int ndone = 0;
        for (int i = 0; i < n; i++) {
            rec_obj_info info;
            if (rec_obj_get(mems[i], &info) && info.host_ptr && info.host_queue)
                rec_host_finish(info.host_queue, queue, done, &ndone);
        }
    }
    for (int i = 0; i < n; i++) {
        rec_obj_info info;
        if (!rec_obj_get(mems[i], &info) || !info.host_ptr || !info.size)
            continue;
        info.host_queue = queue;   /* this launch may write it */
        tf_blobref r;
        if (c->npre < REC_MAX_EXTRA) {
            tf_hash(info.host_ptr, info.size, &r);
            if (!info.host_hash_valid || memcmp(r.hash, info.host_hash, 16)) {
                char key[32];
                snprintf(key, sizeof key, "host.%llu", (unsigned long long)info.id);
                rec_extra *x = rec_extra_add(c, 0, key);
                if (x) {
                    rec_slot_fill(c, &x->slot, info.host_ptr, info.size);
                    memcpy(info.host_hash, r.hash, 16);
                    info.host_hash_valid = 1;
                }
            }
        }
        rec_obj_set(mems[i], &info);
    }
}

int rec_pre_clEnqueueNDRangeKernel(rec_call *c, cl_command_queue *a_command_queue, cl_kernel *a_kernel,
                                   cl_uint *a_work_dim, const size_t **a_global_work_offset,
                                   const size_t **a_global_work_size, const size_t **a_local_work_size,
                                   cl_uint *a_num_events_in_wait_list, const cl_event **a_event_wait_list,
                                   cl_event **a_event)
{
    (void)a_work_dim;
    (void)a_global_work_offset;
    (void)a_global_work_size;
    (void)a_local_work_size;
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    (void)a_event;
    rec_snapshot_kernel_mems(c, *a_command_queue, *a_kernel);
    return 0;
}

int rec_pre_clEnqueueTask(rec_call *c, cl_command_queue *a_command_queue, cl_kernel *a_kernel,
                          cl_uint *a_num_events_in_wait_list, const cl_event **a_event_wait_list,
                          cl_event **a_event)
{
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    (void)a_event;
    rec_snapshot_kernel_mems(c, *a_command_queue, *a_kernel);
    return 0;
}
