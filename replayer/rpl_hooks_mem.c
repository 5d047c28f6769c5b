/* rpl_hooks_mem.c — replay hooks for memory: buffers and images created
 * from host memory, sub-buffers, maps and unmaps, SVM. (Listed with
 * `replay` in recorder/api.overlay.) */
#include "replayer/rpl_int.h"

#include <stdlib.h>
#include <string.h>

/* host_ptr of a create call: recorded bytes (COPY_HOST_PTR / USE_HOST_PTR)
 * or an address (nothing to copy). USE_HOST_PTR memory must outlive the
 * object, so it is not scratch: the object keeps it. */
static int rpl_host_ptr(rpl_cx *x, unsigned i, cl_mem_flags flags, size_t min_len, void **host_ptr)
{
    const tf_value *v = &x->c->args[i];
    *host_ptr = NULL;
    if (v->type != TF_BIN && v->type != TF_BLOB) {
        if (v->type == TF_BOOL && (flags & CL_MEM_USE_HOST_PTR)) {
            *host_ptr = x->host_pending = calloc(1, min_len ? min_len : 1);   /* not captured: zeros, kept */
            return *host_ptr ? RPL_OK : RPL_ERR_NOMEM;
        }
        if (v->type == TF_BOOL && (flags & CL_MEM_COPY_HOST_PTR)) {
            *host_ptr = rpl_scratch(x, min_len);   /* not captured: zeros */
            return *host_ptr ? RPL_OK : RPL_ERR_NOMEM;
        }
        /* An address, no contents: NULL stays NULL (with COPY/USE_HOST_PTR
         * the runtime refuses it, CL_INVALID_HOST_PTR, as it did when
         * recorded); with USE_HOST_PTR it is memory of an SVM allocation
         * (pyopencl's SVM.as_buffer), the live one here; a pointer without
         * those flags is refused, so a few bytes stand in for it (piglit's
         * cl-api-create-buffer). */
        uint64_t addr = 0;
        if (tf_value_u64(v, &addr) && addr && (flags & CL_MEM_USE_HOST_PTR)) {
            *host_ptr = rpl_addr_span(x->s, addr, min_len);
            if (!*host_ptr)
                return rpl_call_error(x, RPL_ERR_INVALID,
                                      "host_ptr 0x%llx (%zu bytes) lies in no SVM allocation the replay made",
                                      (unsigned long long)addr, min_len);
            return RPL_OK;
        }
        if (addr) {
            *host_ptr = rpl_scratch(x, 64);
            return *host_ptr ? RPL_OK : RPL_ERR_NOMEM;
        }
        return RPL_OK;
    }
    void *p;
    size_t got;
    int st = rpl_fetch(x->s, v, min_len, &p, &got);
    if (st < 0)
        return rpl_fail(x, st);
    rpl_count_bytes_in(x->s, got);
    if (flags & CL_MEM_USE_HOST_PTR) {
        *host_ptr = x->host_pending = p;   /* handed to the object in the post hook */
        return RPL_OK;
    }
    char *d = rpl_scratch(x, got > min_len ? got : min_len);
    if (d)
        memcpy(d, p, got);
    free(p);
    *host_ptr = d;
    return d ? RPL_OK : RPL_ERR_NOMEM;
}

/* After the create: the object owns its USE_HOST_PTR memory. */
static int rpl_mem_created(rpl_cx *x, int ok, cl_mem m, cl_mem_flags flags, void *host, size_t size,
                           size_t elem)
{
    rpl_obj *o = ok ? rpl_obj_by_live(x->s, m) : NULL;
    int owned = host && (flags & CL_MEM_USE_HOST_PTR) && host == x->host_pending;   /* not SVM memory */
    if (host && host == x->host_pending)
        x->host_pending = NULL;   /* freed or owned below */
    if (!o) {
        if (owned)
            free(host);
        return RPL_OK;
    }
    o->elem_size = elem;
    if (owned) {
        o->host = host;
        o->host_size = size;
        o->host_owned = 1;
    }
    return RPL_OK;
}

int rpl_pre_clCreateBuffer(rpl_cx *x_, cl_context *context, cl_mem_flags *flags, size_t *size, void **host_ptr,
                           cl_int **errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    return rpl_host_ptr(x_, 3, *flags, *size, host_ptr);
}

int rpl_post_clCreateBuffer(rpl_cx *x_, int ok, cl_mem *ret, cl_context context, cl_mem_flags flags, size_t size,
                            void *host_ptr, cl_int *errcode_ret)
{
    (void)errcode_ret;
    int st = rpl_mem_created(x_, ok, *ret, flags, host_ptr, size, 0);
    return st >= 0 && ok ? rpl_stage_buffer(x_, context, size) : st;
}

int rpl_pre_clCreateBufferWithProperties(rpl_cx *x_, cl_context *context, const cl_mem_properties **properties,
                                         cl_mem_flags *flags, size_t *size, void **host_ptr, cl_int **errcode_ret)
{
    (void)context;
    (void)properties;
    (void)errcode_ret;
    return rpl_host_ptr(x_, 4, *flags, *size, host_ptr);
}

int rpl_post_clCreateBufferWithProperties(rpl_cx *x_, int ok, cl_mem *ret, cl_context context,
                                          const cl_mem_properties *properties, cl_mem_flags flags, size_t size,
                                          void *host_ptr, cl_int *errcode_ret)
{
    (void)properties;
    (void)errcode_ret;
    int st = rpl_mem_created(x_, ok, *ret, flags, host_ptr, size, 0);
    return st >= 0 && ok ? rpl_stage_buffer(x_, context, size) : st;
}

int rpl_post_clCreateSubBuffer(rpl_cx *x_, int ok, cl_mem *ret, cl_mem buffer, cl_mem_flags flags,
                               cl_buffer_create_type buffer_create_type, const void *buffer_create_info,
                               cl_int *errcode_ret)
{
    (void)flags;
    (void)errcode_ret;
    rpl_obj *parent = rpl_obj_by_live(x_->s, buffer), *o = ok ? rpl_obj_by_live(x_->s, *ret) : NULL;
    if (o && parent && parent->host && buffer_create_type == CL_BUFFER_CREATE_TYPE_REGION && buffer_create_info) {
        const cl_buffer_region *r = buffer_create_info;
        if (r->origin <= parent->host_size && r->size <= parent->host_size - r->origin) {
            o->host = (char *)parent->host + r->origin;   /* the parent's memory: not owned */
            o->host_size = r->size;
        }
    }
    return RPL_OK;
}

/* Images: the recorded bytes are the host memory as the application laid it out. */
static size_t rpl_image_bytes(const cl_image_format *f, const cl_image_desc *d)
{
    if (!f || !d)
        return 0;
    size_t e = rpl_image_elem_size(f);
    size_t row = d->image_row_pitch ? d->image_row_pitch : d->image_width * e;
    size_t h = d->image_height ? d->image_height : 1, depth = d->image_depth ? d->image_depth : 1;
    if (d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        h = d->image_array_size;
    if (d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
        depth = d->image_array_size;
    size_t slice = d->image_slice_pitch ? d->image_slice_pitch : row * h;
    return slice * depth;
}

int rpl_pre_clCreateImage(rpl_cx *x_, cl_context *context, cl_mem_flags *flags, const cl_image_format **image_format,
                          const cl_image_desc **image_desc, void **host_ptr, cl_int **errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    return rpl_host_ptr(x_, 4, *flags, rpl_image_bytes(*image_format, *image_desc), host_ptr);
}

int rpl_post_clCreateImage(rpl_cx *x_, int ok, cl_mem *ret, cl_context context, cl_mem_flags flags,
                           const cl_image_format *image_format, const cl_image_desc *image_desc, void *host_ptr,
                           cl_int *errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    return rpl_mem_created(x_, ok, *ret, flags, host_ptr, rpl_image_bytes(image_format, image_desc),
                           image_format ? rpl_image_elem_size(image_format) : 0);
}

int rpl_pre_clCreateImageWithProperties(rpl_cx *x_, cl_context *context, const cl_mem_properties **properties,
                                        cl_mem_flags *flags, const cl_image_format **image_format,
                                        const cl_image_desc **image_desc, void **host_ptr, cl_int **errcode_ret)
{
    (void)context;
    (void)properties;
    (void)errcode_ret;
    return rpl_host_ptr(x_, 5, *flags, rpl_image_bytes(*image_format, *image_desc), host_ptr);
}

int rpl_post_clCreateImageWithProperties(rpl_cx *x_, int ok, cl_mem *ret, cl_context context,
                                         const cl_mem_properties *properties, cl_mem_flags flags,
                                         const cl_image_format *image_format, const cl_image_desc *image_desc,
                                         void *host_ptr, cl_int *errcode_ret)
{
    (void)context;
    (void)properties;
    (void)errcode_ret;
    return rpl_mem_created(x_, ok, *ret, flags, host_ptr, rpl_image_bytes(image_format, image_desc),
                           image_format ? rpl_image_elem_size(image_format) : 0);
}

static size_t rpl_image2d_bytes(const cl_image_format *f, size_t w, size_t h, size_t row, size_t depth,
                                size_t slice)
{
    if (!f)
        return 0;
    size_t r = row ? row : w * rpl_image_elem_size(f);
    size_t s = slice ? slice : r * h;
    return s * (depth ? depth : 1);
}

int rpl_pre_clCreateImage2D(rpl_cx *x_, cl_context *context, cl_mem_flags *flags, const cl_image_format **image_format,
                            size_t *image_width, size_t *image_height, size_t *image_row_pitch, void **host_ptr,
                            cl_int **errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    return rpl_host_ptr(x_, 6, *flags,
                        rpl_image2d_bytes(*image_format, *image_width, *image_height, *image_row_pitch, 1, 0),
                        host_ptr);
}

int rpl_post_clCreateImage2D(rpl_cx *x_, int ok, cl_mem *ret, cl_context context, cl_mem_flags flags,
                             const cl_image_format *image_format, size_t image_width, size_t image_height,
                             size_t image_row_pitch, void *host_ptr, cl_int *errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    return rpl_mem_created(x_, ok, *ret, flags, host_ptr,
                           rpl_image2d_bytes(image_format, image_width, image_height, image_row_pitch, 1, 0),
                           image_format ? rpl_image_elem_size(image_format) : 0);
}

int rpl_pre_clCreateImage3D(rpl_cx *x_, cl_context *context, cl_mem_flags *flags, const cl_image_format **image_format,
                            size_t *image_width, size_t *image_height, size_t *image_depth, size_t *image_row_pitch,
                            size_t *image_slice_pitch, void **host_ptr, cl_int **errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    return rpl_host_ptr(x_, 8, *flags,
                        rpl_image2d_bytes(*image_format, *image_width, *image_height, *image_row_pitch,
                                          *image_depth, *image_slice_pitch),
                        host_ptr);
}

int rpl_post_clCreateImage3D(rpl_cx *x_, int ok, cl_mem *ret, cl_context context, cl_mem_flags flags,
                             const cl_image_format *image_format, size_t image_width, size_t image_height,
                             size_t image_depth, size_t image_row_pitch, size_t image_slice_pitch, void *host_ptr,
                             cl_int *errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    return rpl_mem_created(x_, ok, *ret, flags, host_ptr,
                           rpl_image2d_bytes(image_format, image_width, image_height, image_row_pitch, image_depth,
                                             image_slice_pitch),
                           image_format ? rpl_image_elem_size(image_format) : 0);
}

/* ------------------------------------------------------------ maps */
/* A map: the recorded address is bound to the live one; a read map's
 * contents are verified (post.data now, or a DATA record later). */
static int rpl_mapped(rpl_cx *x, void *live, size_t size, cl_map_flags flags, cl_bool blocking, cl_event *ev,
                      uint64_t mem)
{
    uint64_t rec = 0;
    tf_value_u64(&x->c->ret, &rec);
    if (!rec)
        return RPL_OK;
    if (rpl_region_add(x->s, RPL_REGION_MAP, rec, live, size, flags, mem) < 0)
        return rpl_event_orphaned(x, ev ? *ev : NULL, rpl_call_error(x, RPL_ERR_NOMEM, "out of memory"));
    if (!(flags & CL_MAP_READ) || !size)
        return RPL_OK;
    const tf_value *d = x->c->post ? tf_map_get(x->c->post, "data") : NULL;
    rpl_obj *q = rpl_obj_find(x->s, rpl_arg_id(x, 0));
    if (x->pitched)   /* compared in the recorded layout */
        size = rpl_pitched_len(x->pitched, x->pitched->rec_row, x->pitched->rec_slice);
    return rpl_readback_submit(x, "data", mem, live, size, blocking, ev ? *ev : NULL, q ? q->live : NULL, d);
}

int rpl_post_clEnqueueMapBuffer(rpl_cx *x_, int ok, void **ret, cl_command_queue command_queue, cl_mem buffer,
                                cl_bool blocking_map, cl_map_flags map_flags, size_t offset, size_t size,
                                cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event,
                                cl_int *errcode_ret)
{
    (void)command_queue;
    (void)buffer;
    (void)offset;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)errcode_ret;
    if (!ok || !*ret)
        return RPL_OK;
    return rpl_mapped(x_, *ret, size, map_flags, blocking_map, event, rpl_arg_id(x_, 1));
}

int rpl_post_clEnqueueMapImage(rpl_cx *x_, int ok, void **ret, cl_command_queue command_queue, cl_mem image,
                               cl_bool blocking_map, cl_map_flags map_flags, const size_t *origin,
                               const size_t *region, size_t *image_row_pitch, size_t *image_slice_pitch,
                               cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event,
                               cl_int *errcode_ret)
{
    (void)command_queue;
    (void)origin;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)errcode_ret;
    if (!ok || !*ret)
        return RPL_OK;
    size_t size = rpl_len_image(x_, image, region, image_row_pitch ? *image_row_pitch : 0,
                                image_slice_pitch ? *image_slice_pitch : 0);
    /* the live pitches may differ from the recorded ones, in which the
     * recorded bytes (read maps) and the host's writes (write maps) are laid out */
    uint64_t rrow = 0, rslice = 0;
    rpl_obj *o = rpl_obj_by_live(x_->s, image);
    int st;
    if (x_->c->outs) {
        tf_value_u64(&x_->c->outs[6], &rrow);
        tf_value_u64(&x_->c->outs[7], &rslice);
    }
    if (o && o->elem_size && region && region[0] && region[1] && region[2] && image_row_pitch && rrow
        && (*image_row_pitch != rrow || (image_slice_pitch && rslice && rslice != *image_slice_pitch))) {
        rpl_pitched g = {region[0] * o->elem_size, region[1], region[2], rrow, rslice,
                         *image_row_pitch, image_slice_pitch ? *image_slice_pitch : 0};
        if (!g.rec_slice)
            g.rec_slice = g.rec_row * g.rows;
        if (!g.live_slice)
            g.live_slice = g.live_row * g.rows;
        if (g.rec_row < g.row_bytes || g.rec_slice < g.rec_row * g.rows) {
            st = rpl_call_error(x_, RPL_ERR_INVALID, "recorded image pitches (%llu, %llu) are too small",
                                (unsigned long long)g.rec_row, (unsigned long long)g.rec_slice);
            return rpl_event_orphaned(x_, event ? *event : NULL, st);
        }
        x_->pitched = &g;
        st = rpl_mapped(x_, *ret, size, map_flags, blocking_map, event, rpl_arg_id(x_, 1));
        x_->pitched = NULL;
        if (st >= 0) {
            uint64_t rec = 0;
            tf_value_u64(&x_->c->ret, &rec);
            rpl_region *r = rec ? rpl_region_find(x_->s, RPL_REGION_MAP, rec) : NULL;
            if (r) {
                r->pitched = 1;
                r->geom = g;
            }
        }
        return st;
    }
    return rpl_mapped(x_, *ret, size, map_flags, blocking_map, event, rpl_arg_id(x_, 1));
}

size_t rpl_pitched_len(const rpl_pitched *g, size_t row, size_t slice)
{
    return (g->slices - 1) * slice + (g->rows - 1) * row + g->row_bytes;
}

void rpl_pitched_copy(const rpl_pitched *g, void *dst, const void *src, int to_rec)
{
    size_t drow = to_rec ? g->rec_row : g->live_row, dslice = to_rec ? g->rec_slice : g->live_slice;
    size_t srow = to_rec ? g->live_row : g->rec_row, sslice = to_rec ? g->live_slice : g->rec_slice;
    for (size_t z = 0; z < g->slices; z++)
        for (size_t y = 0; y < g->rows; y++)
            memcpy((char *)dst + z * dslice + y * drow, (const char *)src + z * sslice + y * srow, g->row_bytes);
}

/* Unmap: what the host wrote into a write map goes into the live mapping
 * first; for an image map with other pitches (@p g), row by row from the
 * recorded layout into the live one. */
static int rpl_unmap_data(rpl_cx *x, void *live, size_t cap, const rpl_pitched *g)
{
    const tf_value *d = x->c->pre ? tf_map_get(x->c->pre, "data") : NULL;
    if (!d || !live)
        return RPL_OK;
    void *p;
    size_t got;
    int st = rpl_fetch(x->s, d, 0, &p, &got);
    if (st < 0)
        return rpl_fail(x, st);
    if (st == 0)
        return RPL_OK;
    if (g && (got < rpl_pitched_len(g, g->rec_row, g->rec_slice)
              || cap < rpl_pitched_len(g, g->live_row, g->live_slice))) {
        free(p);
        return rpl_call_error(x, RPL_ERR_INVALID, "the recorded bytes of the image map (%zu) do not cover its region",
                              got);
    }
    if (got > cap)
        got = cap;
    if (g)
        rpl_pitched_copy(g, live, p, 0);
    else
        memcpy(live, p, got);
    free(p);
    rpl_count_bytes_in(x->s, got);
    return RPL_OK;
}

int rpl_pre_clEnqueueUnmapMemObject(rpl_cx *x_, cl_command_queue *command_queue, cl_mem *memobj, void **mapped_ptr,
                                    cl_uint *num_events_in_wait_list, const cl_event **event_wait_list,
                                    cl_event **event)
{
    (void)command_queue;
    (void)memobj;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    uint64_t rec = rpl_arg_id(x_, 2);
    rpl_region *r = rpl_region_find(x_->s, RPL_REGION_MAP, rec);
    if (!r)
        return RPL_OK;   /* the generic decoding already rejected unknown addresses */
    *mapped_ptr = r->live;
    return rpl_unmap_data(x_, r->live, r->size, r->pitched ? &r->geom : NULL);
}

int rpl_post_clEnqueueUnmapMemObject(rpl_cx *x_, int ok, cl_int *ret, cl_command_queue command_queue, cl_mem memobj,
                                     void *mapped_ptr, cl_uint num_events_in_wait_list,
                                     const cl_event *event_wait_list, cl_event *event)
{
    (void)ret;
    (void)command_queue;
    (void)memobj;
    (void)mapped_ptr;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    rpl_region *r = rpl_region_find(x_->s, RPL_REGION_MAP, rpl_arg_id(x_, 2));
    if (ok && r)
        rpl_region_remove(x_->s, r);
    return RPL_OK;
}

/* ------------------------------------------------------------ SVM */
int rpl_post_clSVMAlloc(rpl_cx *x_, int ok, void **ret, cl_context context, cl_svm_mem_flags flags, size_t size,
                        cl_uint alignment)
{
    (void)context;
    (void)flags;
    (void)alignment;
    uint64_t rec = 0;
    tf_value_u64(&x_->c->ret, &rec);
    if (!ok || !rec || !*ret)
        return RPL_OK;
    if (rpl_region_add(x_->s, RPL_REGION_SVM, rec, *ret, size, 0, 0) < 0)
        return rpl_call_error(x_, RPL_ERR_NOMEM, "out of memory");
    return RPL_OK;
}

int rpl_post_clSVMFree(rpl_cx *x_, int ok, cl_context context, void *svm_pointer)
{
    (void)ok;
    (void)context;
    (void)svm_pointer;
    rpl_region *r = rpl_region_find(x_->s, RPL_REGION_SVM, rpl_arg_id(x_, 1));
    if (r)
        rpl_region_remove(x_->s, r);
    return RPL_OK;
}

/* An SVM free enqueued: the recorded addresses may come back from later
 * clSVMAlloc calls (pyopencl's SVM pools), bound to new allocations. */
int rpl_post_clEnqueueSVMFree(rpl_cx *x_, int ok, cl_int *ret, cl_command_queue command_queue,
                              cl_uint num_svm_pointers, void **svm_pointers,
                              void (*pfn_free_func)(cl_command_queue, cl_uint, void **, void *), void *user_data,
                              cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
{
    (void)ret;
    (void)command_queue;
    (void)svm_pointers;
    (void)pfn_free_func;
    (void)user_data;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    const tf_value *a = &x_->c->args[2];
    if (!ok || a->type != TF_ARRAY)
        return RPL_OK;
    for (uint32_t i = 0; i < a->v.arr.n && i < num_svm_pointers; i++) {
        uint64_t rec = 0;
        rpl_region *r = tf_value_u64(&a->v.arr.items[i], &rec) && rec ? rpl_region_find(x_->s, RPL_REGION_SVM, rec)
                                                                      : NULL;
        if (r)
            rpl_region_remove(x_->s, r);
    }
    return RPL_OK;
}

/* SVM memcpy: host source bytes were recorded; a host destination is a read-back. */
int rpl_pre_clEnqueueSVMMemcpy(rpl_cx *x_, cl_command_queue *command_queue, cl_bool *blocking_copy, void **dst_ptr,
                               const void **src_ptr, size_t *size, cl_uint *num_events_in_wait_list,
                               const cl_event **event_wait_list, cl_event **event)
{
    (void)command_queue;
    (void)blocking_copy;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    const tf_value *src = &x_->c->args[3];
    if (src->type == TF_BIN || src->type == TF_BLOB || src->type == TF_BOOL) {
        RPL_TRY(rpl_in_blob(x_, 3, *size, src_ptr));
    } else {
        RPL_TRY(rpl_in_ptr(x_, 3, (void **)src_ptr));
    }
    uint64_t dst = rpl_arg_id(x_, 2);
    void *live = dst ? rpl_addr(x_->s, dst) : NULL;
    if (live) {
        if (!rpl_addr_span(x_->s, dst, *size))
            return rpl_call_error(x_, RPL_ERR_INVALID,
                                  "argument 'dst_ptr': %zu bytes from address 0x%llx run past its SVM allocation",
                                  *size, (unsigned long long)dst);
        *dst_ptr = live;
        return RPL_OK;
    }
    /* host memory: the replay's own buffer, verified at completion */
    return rpl_readback_alloc(x_, *size, dst_ptr);
}

int rpl_post_clEnqueueSVMMemcpy(rpl_cx *x_, int ok, cl_int *ret, cl_command_queue command_queue, cl_bool blocking_copy,
                                void *dst_ptr, const void *src_ptr, size_t size, cl_uint num_events_in_wait_list,
                                const cl_event *event_wait_list, cl_event *event)
{
    (void)ret;
    (void)src_ptr;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    if (!ok || dst_ptr != x_->readback)
        return RPL_OK;
    const tf_value *exp = x_->c->outs && x_->c->outs[2].type != TF_NIL ? &x_->c->outs[2] : NULL;
    return rpl_readback_submit(x_, "dst_ptr", 0, dst_ptr, size, blocking_copy, event ? *event : NULL, command_queue,
                               exp);
}

int rpl_post_clEnqueueSVMMap(rpl_cx *x_, int ok, cl_int *ret, cl_command_queue command_queue, cl_bool blocking_map,
                             cl_map_flags flags, void *svm_ptr, size_t size, cl_uint num_events_in_wait_list,
                             const cl_event *event_wait_list, cl_event *event)
{
    (void)ret;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    if (!ok || !(flags & CL_MAP_READ) || !svm_ptr)
        return RPL_OK;
    const tf_value *d = x_->c->post ? tf_map_get(x_->c->post, "data") : NULL;
    return rpl_readback_submit(x_, "data", 0, svm_ptr, size, blocking_map, event ? *event : NULL, command_queue, d);
}

int rpl_pre_clEnqueueSVMUnmap(rpl_cx *x_, cl_command_queue *command_queue, void **svm_ptr,
                              cl_uint *num_events_in_wait_list, const cl_event **event_wait_list, cl_event **event)
{
    (void)command_queue;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    /* the size of the write: the rest of the allocation at most */
    uint64_t rec = rpl_arg_id(x_, 1);
    size_t cap = 0;
    for (size_t i = 0; i < x_->s->nregions; i++) {
        rpl_region *r = &x_->s->regions[i];
        if (r->kind == RPL_REGION_SVM && rec >= r->rec && rec - r->rec < r->size)
            cap = r->size - (size_t)(rec - r->rec);
    }
    return rpl_unmap_data(x_, *svm_ptr, cap, NULL);
}
