/* stub_xfer.c — commands on buffers: read, write, copy, their rectangle
 * forms, fill, map and unmap (of buffers and images), migrate. Each moves
 * the bytes at once (see stub_event.c for the events). */
#include "tests/stub-icd/stub_int.h"

#include <stdlib.h>
#include <string.h>

static cl_int stub_check_buffer(cl_command_queue q, cl_mem m)
{
    cl_int err = stub_check_mem(q, m);
    if (err == CL_SUCCESS && m->type != CL_MEM_OBJECT_BUFFER)
        err = CL_INVALID_MEM_OBJECT;
    return err;
}

static int stub_range_ok(cl_mem m, size_t offset, size_t size)
{
    return size && offset <= m->size && size <= m->size - offset;
}

static cl_int stub_rw(cl_command_queue q, cl_mem m, int write, cl_bool blocking, size_t offset, size_t size,
                      void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_buffer(q, m);
    if (err != CL_SUCCESS)
        return err;
    if (!ptr || !stub_range_ok(m, offset, size))
        return CL_INVALID_VALUE;
    if ((err = stub_check_host_access(m, !write, write)) != CL_SUCCESS)
        return err;
    if (write)
        memmove(m->data + offset, ptr, size);
    else
        memmove(ptr, m->data + offset, size);
    return stub_cmd(q, write ? CL_COMMAND_WRITE_BUFFER : CL_COMMAND_READ_BUFFER, nwait, wait, event, blocking);
}

/* CLRR_STUB_REFUSE_NB_READ=N: the N-th non-blocking clEnqueueReadBuffer
 * (from 1) is refused with CL_OUT_OF_RESOURCES, nothing done (the
 * recorder's pipelined reads, tests/e2e/record_pipeline.sh). */
static unsigned stub_nb_reads;   /* (under the stub's lock) */

cl_int CL_API_CALL stub_clEnqueueReadBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking_read,
                                            size_t offset, size_t size, void *ptr, cl_uint nwait,
                                            const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    const char *refuse = getenv("CLRR_STUB_REFUSE_NB_READ");
    if (!blocking_read && refuse && ++stub_nb_reads == (unsigned)atoi(refuse)) {
        stub_leave();
        return CL_OUT_OF_RESOURCES;
    }
    cl_int err = stub_rw(q, buffer, 0, blocking_read, offset, size, ptr, nwait, wait, event);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueWriteBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking_write,
                                             size_t offset, size_t size, const void *ptr, cl_uint nwait,
                                             const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_rw(q, buffer, 1, blocking_write, offset, size, (void *)ptr, nwait, wait, event);
    stub_leave();
    return err;
}

/* Whether [a, a+n) and [b, b+n) of the same memory overlap. */
static int stub_overlap(const unsigned char *a, const unsigned char *b, size_t n)
{
    return a < b + n && b < a + n;
}

cl_int CL_API_CALL stub_clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                            size_t dst_offset, size_t size, cl_uint nwait,
                                            const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_buffer(q, src);
    if (err == CL_SUCCESS)
        err = stub_check_buffer(q, dst);
    if (err != CL_SUCCESS)
        goto out;
    if (!stub_range_ok(src, src_offset, size) || !stub_range_ok(dst, dst_offset, size)) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    if (stub_overlap(src->data + src_offset, dst->data + dst_offset, size)) {
        err = CL_MEM_COPY_OVERLAP;
        goto out;
    }
    memmove(dst->data + dst_offset, src->data + src_offset, size);
    err = stub_cmd(q, CL_COMMAND_COPY_BUFFER, nwait, wait, event, 0);
out:
    stub_leave();
    return err;
}

/* Fills in default pitches and checks them (CL_INVALID_VALUE). */
static int stub_pitches(const size_t region[3], size_t *row, size_t *slice)
{
    if (!region[0] || !region[1] || !region[2])
        return 0;
    if (!*row)
        *row = region[0];
    if (!*slice)
        *slice = region[1] * *row;
    return *row >= region[0] && *slice >= region[1] * *row && *slice % *row == 0;
}

static cl_int stub_rw_rect(cl_command_queue q, cl_mem m, int write, cl_bool blocking,
                           const size_t *buffer_origin, const size_t *host_origin, const size_t *region,
                           size_t buffer_row, size_t buffer_slice, size_t host_row, size_t host_slice,
                           void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_buffer(q, m);
    if (err != CL_SUCCESS)
        return err;
    if (!ptr || !buffer_origin || !host_origin || !region ||
        !stub_pitches(region, &buffer_row, &buffer_slice) || !stub_pitches(region, &host_row, &host_slice) ||
        !stub_box_fits(buffer_origin, region, buffer_row, buffer_slice, m->size))
        return CL_INVALID_VALUE;
    if ((err = stub_check_host_access(m, !write, write)) != CL_SUCCESS)
        return err;
    if (write)
        stub_copy_box(m->data, buffer_origin, buffer_row, buffer_slice, ptr, host_origin, host_row, host_slice,
                      region);
    else
        stub_copy_box(ptr, host_origin, host_row, host_slice, m->data, buffer_origin, buffer_row, buffer_slice,
                      region);
    return stub_cmd(q, write ? CL_COMMAND_WRITE_BUFFER_RECT : CL_COMMAND_READ_BUFFER_RECT, nwait, wait,
                    event, blocking);
}

cl_int CL_API_CALL stub_clEnqueueReadBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking_read,
                                                const size_t *buffer_origin, const size_t *host_origin,
                                                const size_t *region, size_t buffer_row_pitch,
                                                size_t buffer_slice_pitch, size_t host_row_pitch,
                                                size_t host_slice_pitch, void *ptr, cl_uint nwait,
                                                const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_rw_rect(q, buffer, 0, blocking_read, buffer_origin, host_origin, region, buffer_row_pitch,
                              buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, nwait, wait, event);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking_write,
                                                 const size_t *buffer_origin, const size_t *host_origin,
                                                 const size_t *region, size_t buffer_row_pitch,
                                                 size_t buffer_slice_pitch, size_t host_row_pitch,
                                                 size_t host_slice_pitch, const void *ptr, cl_uint nwait,
                                                 const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_rw_rect(q, buffer, 1, blocking_write, buffer_origin, host_origin, region,
                              buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch,
                              (void *)ptr, nwait, wait, event);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst,
                                                const size_t *src_origin, const size_t *dst_origin,
                                                const size_t *region, size_t src_row, size_t src_slice,
                                                size_t dst_row, size_t dst_slice, cl_uint nwait,
                                                const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_buffer(q, src);
    if (err == CL_SUCCESS)
        err = stub_check_buffer(q, dst);
    if (err != CL_SUCCESS)
        goto out;
    if (!src_origin || !dst_origin || !region || !stub_pitches(region, &src_row, &src_slice) ||
        !stub_pitches(region, &dst_row, &dst_slice) ||
        !stub_box_fits(src_origin, region, src_row, src_slice, src->size) ||
        !stub_box_fits(dst_origin, region, dst_row, dst_slice, dst->size) ||
        (src == dst && (src_row != dst_row || src_slice != dst_slice))) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    if (src->data == dst->data) {   /* same memory: boxes must not intersect */
        int apart = 0;
        for (int i = 0; i < 3; i++) {
            size_t s = src_origin[i], d = dst_origin[i];
            apart |= s + region[i] <= d || d + region[i] <= s;
        }
        if (!apart) {
            err = CL_MEM_COPY_OVERLAP;
            goto out;
        }
    }
    stub_copy_box(dst->data, dst_origin, dst_row, dst_slice, src->data, src_origin, src_row, src_slice, region);
    err = stub_cmd(q, CL_COMMAND_COPY_BUFFER_RECT, nwait, wait, event, 0);
out:
    stub_leave();
    return err;
}

static int stub_pattern_size_ok(size_t n)
{
    return n && n <= 128 && (n & (n - 1)) == 0;
}

cl_int CL_API_CALL stub_clEnqueueFillBuffer(cl_command_queue q, cl_mem buffer, const void *pattern,
                                            size_t pattern_size, size_t offset, size_t size, cl_uint nwait,
                                            const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_buffer(q, buffer);
    if (err != CL_SUCCESS)
        goto out;
    if (!pattern || !stub_pattern_size_ok(pattern_size) || offset % pattern_size || size % pattern_size ||
        !stub_range_ok(buffer, offset, size)) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    for (size_t i = 0; i < size; i += pattern_size)
        memcpy(buffer->data + offset + i, pattern, pattern_size);
    err = stub_cmd(q, CL_COMMAND_FILL_BUFFER, nwait, wait, event, 0);
out:
    stub_leave();
    return err;
}

void *CL_API_CALL stub_clEnqueueMapBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking_map,
                                          cl_map_flags map_flags, size_t offset, size_t size, cl_uint nwait,
                                          const cl_event *wait, cl_event *event, cl_int *errcode_ret)
{
    STUB_ENTER();
    void *ptr = NULL;
    const cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_buffer(q, buffer);
    if (err != CL_SUCCESS)
        goto out;
    if ((map_flags & ~known) ||
        ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && (map_flags & (CL_MAP_READ | CL_MAP_WRITE))) ||
        !stub_range_ok(buffer, offset, size)) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    err = stub_check_host_access(buffer, (map_flags & CL_MAP_READ) != 0,
                                 (map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0);
    if (err != CL_SUCCESS)
        goto out;
    if (stub_map_add(buffer, buffer->data + offset) < 0) {
        err = CL_OUT_OF_HOST_MEMORY;
        goto out;
    }
    err = stub_cmd(q, CL_COMMAND_MAP_BUFFER, nwait, wait, event, blocking_map);
    if (err == CL_SUCCESS)
        ptr = buffer->data + offset;
    else
        stub_map_remove(buffer, buffer->data + offset);
out:
    stub_set_err(errcode_ret, err);
    stub_leave();
    return ptr;
}

cl_int CL_API_CALL stub_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *mapped_ptr, cl_uint nwait,
                                                const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_mem(q, m);
    if (err != CL_SUCCESS)
        goto out;
    if (!mapped_ptr || stub_map_remove(m, mapped_ptr) < 0) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    err = stub_cmd(q, CL_COMMAND_UNMAP_MEM_OBJECT, nwait, wait, event, 0);
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint num_mem_objects,
                                                   const cl_mem *mem_objects, cl_mem_migration_flags flags,
                                                   cl_uint nwait, const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err != CL_SUCCESS)
        goto out;
    if (!num_mem_objects || !mem_objects ||
        (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    for (cl_uint i = 0; i < num_mem_objects && err == CL_SUCCESS; i++)
        err = stub_check_mem(q, mem_objects[i]);
    if (err == CL_SUCCESS)
        err = stub_cmd(q, CL_COMMAND_MIGRATE_MEM_OBJECTS, nwait, wait, event, 0);
out:
    stub_leave();
    return err;
}
