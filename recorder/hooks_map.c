/* hooks_map.c — mapped regions (buffers, images, SVM) and SVM transfers.
 * A map for reading records what the host then sees (for verification); a
 * map for writing records, at unmap, what the host wrote. */
#include "recorder/rec_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct rec_region {
    const void *ptr;
    size_t size;
    cl_map_flags flags;
} rec_region;

/* Live maps and SVM allocations: small tables, one lock. */
typedef struct rec_regions {
    rec_region *r;
    size_t n, cap;
} rec_regions;
static rec_regions rec_maps, rec_svm;
static pthread_mutex_t rec_region_lock = PTHREAD_MUTEX_INITIALIZER;

void rec_maps_atfork(int phase)
{
    if (phase == REC_FORK_PREPARE)
        pthread_mutex_lock(&rec_region_lock);
    else
        pthread_mutex_unlock(&rec_region_lock);   /* the forking thread holds it */
}

static void rec_region_add(rec_regions *t, const void *p, size_t size, cl_map_flags flags)
{
    pthread_mutex_lock(&rec_region_lock);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        rec_region *r = realloc(t->r, cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&rec_region_lock);
            return;
        }
        t->r = r;
        t->cap = cap;
    }
    t->r[t->n++] = (rec_region){p, size, flags};
    pthread_mutex_unlock(&rec_region_lock);
}

/* Removes the region starting at @p p (the newest one), copying it out. */
static int rec_region_take(rec_regions *t, const void *p, rec_region *out)
{
    int found = 0;
    pthread_mutex_lock(&rec_region_lock);
    for (size_t i = t->n; i-- > 0;) {
        if (t->r[i].ptr == p) {
            *out = t->r[i];
            t->r[i] = t->r[--t->n];
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&rec_region_lock);
    return found;
}

/* Is [p, p+1) inside an SVM allocation? */
static int rec_in_svm(const void *p)
{
    int in = 0;
    pthread_mutex_lock(&rec_region_lock);
    for (size_t i = 0; i < rec_svm.n && !in; i++)
        in = (const char *)p >= (const char *)rec_svm.r[i].ptr
             && (const char *)p < (const char *)rec_svm.r[i].ptr + rec_svm.r[i].size;
    pthread_mutex_unlock(&rec_region_lock);
    return in;
}

/* For hooks_mem.c: a USE_HOST_PTR buffer whose host memory is an SVM
 * allocation is recorded by address (its contents are the allocation's). */
int rec_host_ptr_in_svm(const void *p)
{
    return p && rec_in_svm(p);
}

/* A read map: the mapped bytes now (blocking) or when the command completes.
 * Any blocking map (read or write) first captures the read-backs whose
 * commands have completed, as a blocking read does (rec_cap_complete). */
static void rec_map_read(rec_call *c, const void *p, size_t size, cl_map_flags flags, cl_bool blocking,
                         cl_event *ev)
{
    if (blocking)
        rec_events_poll(0);   /* earlier commands completed too: rec_cap_complete */
    if (!(flags & CL_MAP_READ) || !p)
        return;
    if (blocking) {
        rec_extra *x = rec_extra_add(c, 1, "data");
        if (x)
            rec_slot_fill_read(c, &x->slot, p, size);
    } else if (ev && *ev && c->capture) {
        rec_defer_capture(c->seq, "data", *ev, p, size);
    } else if (c->capture) {
        rec_note(c->seq, NULL, "non-blocking read map without an event: contents not captured");
    }
}

void rec_post_clEnqueueMapBuffer(rec_call *c, int ok, void **ret, cl_command_queue a_command_queue,
                                 cl_mem a_buffer, cl_bool a_blocking_map, cl_map_flags a_map_flags,
                                 size_t a_offset, size_t a_size, cl_uint a_num_events_in_wait_list,
                                 const cl_event *a_event_wait_list, cl_event *a_event,
                                 cl_int *a_errcode_ret)
{
    (void)a_command_queue;
    (void)a_buffer;
    (void)a_offset;
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    (void)a_errcode_ret;
    if (!ok)
        return;
    rec_region_add(&rec_maps, *ret, a_size, a_map_flags);
    rec_map_read(c, *ret, a_size, a_map_flags, a_blocking_map, a_event);
}

void rec_post_clEnqueueMapImage(rec_call *c, int ok, void **ret, cl_command_queue a_command_queue,
                                cl_mem a_image, cl_bool a_blocking_map, cl_map_flags a_map_flags,
                                const size_t *a_origin, const size_t *a_region, size_t *a_image_row_pitch,
                                size_t *a_image_slice_pitch, cl_uint a_num_events_in_wait_list,
                                const cl_event *a_event_wait_list, cl_event *a_event, cl_int *a_errcode_ret)
{
    (void)a_command_queue;
    (void)a_origin;
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    (void)a_errcode_ret;
    if (!ok)
        return;
    size_t size = rec_len_image(a_image, a_region, a_image_row_pitch ? *a_image_row_pitch : 0,
                                a_image_slice_pitch ? *a_image_slice_pitch : 0);
    rec_region_add(&rec_maps, *ret, size, a_map_flags);
    rec_map_read(c, *ret, size, a_map_flags, a_blocking_map, a_event);
}

static void rec_unmap_write(rec_call *c, rec_regions *t, const void *p)
{
    rec_region r;
    if (!rec_region_take(t, p, &r))
        return;
    if (!(r.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)))
        return;
    rec_extra *x = rec_extra_add(c, 0, "data");
    if (x)
        rec_slot_fill(c, &x->slot, r.ptr, r.size);
}

int rec_pre_clEnqueueUnmapMemObject(rec_call *c, cl_command_queue *a_command_queue, cl_mem *a_memobj,
                                    void **a_mapped_ptr, cl_uint *a_num_events_in_wait_list,
                                    const cl_event **a_event_wait_list, cl_event **a_event)
{
    (void)a_command_queue;
    (void)a_memobj;
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    (void)a_event;
    rec_unmap_write(c, &rec_maps, *a_mapped_ptr);
    return 0;
}

/* ------------------------------------------------------------------ SVM */
void rec_post_clSVMAlloc(rec_call *c, int ok, void **ret, cl_context a_context, cl_svm_mem_flags a_flags,
                         size_t a_size, cl_uint a_alignment)
{
    (void)a_context;
    (void)a_alignment;
    if (!ok)
        return;
    rec_region_add(&rec_svm, *ret, a_size, 0);
    if (a_flags & (CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS))
        rec_note(c->seq, NULL, "fine-grained SVM at 0x%llx (%zu bytes): host writes outside "
                 "the API are not captured", (unsigned long long)(uintptr_t)*ret, a_size);
}

int rec_pre_clSVMFree(rec_call *c, cl_context *a_context, void **a_svm_pointer)
{
    (void)c;
    (void)a_context;
    rec_region r;
    rec_region_take(&rec_svm, *a_svm_pointer, &r);
    return 0;
}

/* An SVM free enqueued: the application may not use the memory any more,
 * and the runtime may hand its address out again (pyopencl's SVM pools). */
void rec_post_clEnqueueSVMFree(rec_call *c, int ok, cl_int *ret, cl_command_queue a_command_queue,
                               cl_uint a_num_svm_pointers, void **a_svm_pointers,
                               void (*a_pfn_free_func)(cl_command_queue, cl_uint, void **, void *), void *a_user_data,
                               cl_uint a_num_events_in_wait_list, const cl_event *a_event_wait_list, cl_event *a_event)
{
    (void)c;
    (void)ret;
    (void)a_command_queue;
    (void)a_pfn_free_func;
    (void)a_user_data;
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    (void)a_event;
    rec_region r;
    for (cl_uint i = 0; ok && a_svm_pointers && i < a_num_svm_pointers; i++)
        rec_region_take(&rec_svm, a_svm_pointers[i], &r);
}

int rec_pre_clEnqueueSVMMemcpy(rec_call *c, cl_command_queue *a_command_queue, cl_bool *a_blocking_copy,
                               void **a_dst_ptr, const void **a_src_ptr, size_t *a_size,
                               cl_uint *a_num_events_in_wait_list, const cl_event **a_event_wait_list,
                               cl_event **a_event)
{
    (void)a_command_queue;
    (void)a_blocking_copy;
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    (void)a_event;
    c->in[2].state = REC_SLOT_UINT;
    c->in[2].v.u = (uint64_t)(uintptr_t)*a_dst_ptr;
    if (*a_src_ptr && !rec_in_svm(*a_src_ptr)) {
        rec_slot_fill_ov(c, &c->in[3], *a_src_ptr, *a_size);   /* host memory: its bytes */
    } else {
        c->in[3].state = REC_SLOT_UINT;
        c->in[3].v.u = (uint64_t)(uintptr_t)*a_src_ptr;
    }
    return 0;
}

void rec_post_clEnqueueSVMMemcpy(rec_call *c, int ok, cl_int *ret, cl_command_queue a_command_queue,
                                 cl_bool a_blocking_copy, void *a_dst_ptr, const void *a_src_ptr,
                                 size_t a_size, cl_uint a_num_events_in_wait_list,
                                 const cl_event *a_event_wait_list, cl_event *a_event)
{
    (void)ret;
    (void)a_command_queue;
    (void)a_src_ptr;
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    if (ok && a_dst_ptr && !rec_in_svm(a_dst_ptr))   /* a read-back into host memory */
        rec_cap_complete(c, 2, a_dst_ptr, a_size, a_blocking_copy, a_event ? *a_event : NULL);
}

void rec_post_clEnqueueSVMMap(rec_call *c, int ok, cl_int *ret, cl_command_queue a_command_queue,
                              cl_bool a_blocking_map, cl_map_flags a_flags, void *a_svm_ptr, size_t a_size,
                              cl_uint a_num_events_in_wait_list, const cl_event *a_event_wait_list,
                              cl_event *a_event)
{
    (void)ret;
    (void)a_command_queue;
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    if (!ok)
        return;
    rec_region_add(&rec_maps, a_svm_ptr, a_size, a_flags);
    rec_map_read(c, a_svm_ptr, a_size, a_flags, a_blocking_map, a_event);
}

int rec_pre_clEnqueueSVMUnmap(rec_call *c, cl_command_queue *a_command_queue, void **a_svm_ptr,
                              cl_uint *a_num_events_in_wait_list, const cl_event **a_event_wait_list,
                              cl_event **a_event)
{
    (void)a_command_queue;
    (void)a_num_events_in_wait_list;
    (void)a_event_wait_list;
    (void)a_event;
    rec_unmap_write(c, &rec_maps, *a_svm_ptr);
    return 0;
}
