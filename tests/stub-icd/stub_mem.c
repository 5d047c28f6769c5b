/* stub_mem.c — memory objects in host memory: buffers, sub-buffers, the
 * parts every memory object shares (flags, reference counts, destructor
 * callbacks, mappings, clGetMemObjectInfo), pipes (none) and the box copy
 * behind rectangles and images. */
#include "tests/stub-icd/stub_int.h"

#include <stdlib.h>
#include <string.h>

#define STUB_ACCESS_FLAGS (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)
#define STUB_HOSTPTR_FLAGS (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)
#define STUB_HOSTACC_FLAGS (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)

static int stub_more_than_one(cl_mem_flags f)
{
    return (f & (f - 1)) != 0;
}

static cl_int stub_check_flags(cl_mem_flags flags)
{
    const cl_mem_flags known = STUB_ACCESS_FLAGS | STUB_HOSTPTR_FLAGS | STUB_HOSTACC_FLAGS |
                               CL_MEM_KERNEL_READ_AND_WRITE;
    if ((flags & ~known) || stub_more_than_one(flags & STUB_ACCESS_FLAGS) ||
        stub_more_than_one(flags & STUB_HOSTACC_FLAGS) ||
        ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))))
        return CL_INVALID_VALUE;
    return CL_SUCCESS;
}

cl_mem stub_mem_new(cl_context ctx, cl_mem_object_type type, cl_mem_flags flags, size_t size,
                    void *host_ptr, const cl_mem_properties *props, cl_int *err)
{
    int oom = 0;
    if (!stub_valid(ctx, STUB_CONTEXT)) {
        *err = CL_INVALID_CONTEXT;
        return NULL;
    }
    if ((*err = stub_check_flags(flags)) != CL_SUCCESS)
        return NULL;
    if (props && props[0]) {   /* no memory property is supported */
        *err = CL_INVALID_PROPERTY;
        return NULL;
    }
    if (!!host_ptr != !!(flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR))) {
        *err = CL_INVALID_HOST_PTR;
        return NULL;
    }
    if (size == 0 || size > STUB_MAX_ALLOC) {
        *err = type == CL_MEM_OBJECT_BUFFER ? CL_INVALID_BUFFER_SIZE : CL_INVALID_IMAGE_SIZE;
        return NULL;
    }
    cl_mem m = stub_obj_new(sizeof *m, STUB_MEM);
    if (!m)
        goto oom;
    m->props = stub_props_dup(props, &m->nprops, &oom);
    if (oom)
        goto oom;
    if (flags & CL_MEM_USE_HOST_PTR) {
        m->data = host_ptr;
        m->host_ptr = host_ptr;
        m->uses_svm = stub_svm_find(host_ptr, NULL) != NULL;
    } else {
        if (!(m->data = calloc(1, size)))
            goto oom;
        m->owns_data = 1;
        if (flags & CL_MEM_COPY_HOST_PTR && type == CL_MEM_OBJECT_BUFFER)
            memcpy(m->data, host_ptr, size);
    }
    m->ctx = ctx;
    m->type = type;
    m->flags = flags;
    m->size = size;
    stub_context_retain(ctx);
    *err = CL_SUCCESS;
    return m;
oom:
    if (m)
        free(m->props);
    free(m);
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
}

void stub_mem_release(cl_mem m)
{
    if (--m->h.refs)
        return;
    struct stub_cb *cb = m->destructors;
    while (cb) {   /* registered last, called first */
        struct stub_cb *next = cb->next;
        cb->obj = m;
        stub_defer(cb);
        cb = next;
    }
    for (struct stub_map *p = m->maps, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    if (m->owns_data)
        free(m->data);
    free(m->props);
    cl_context ctx = m->ctx;
    cl_mem parent = m->parent;
    m->h.kind = 0;
    free(m);
    if (parent)
        stub_mem_release(parent);
    stub_context_release(ctx);
}

cl_int stub_check_mem(cl_command_queue q, cl_mem m)
{
    if (!stub_valid(m, STUB_MEM))
        return CL_INVALID_MEM_OBJECT;
    return m->ctx == q->ctx ? CL_SUCCESS : CL_INVALID_CONTEXT;
}

cl_int stub_check_host_access(cl_mem m, int read, int write)
{
    if ((read && (m->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS))) ||
        (write && (m->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS))))
        return CL_INVALID_OPERATION;
    return CL_SUCCESS;
}

int stub_map_add(cl_mem m, void *ptr)
{
    struct stub_map *p;
    for (p = m->maps; p && p->ptr != ptr; p = p->next)
        ;
    if (!p) {
        if (!(p = calloc(1, sizeof *p)))
            return -1;
        p->ptr = ptr;
        p->next = m->maps;
        m->maps = p;
    }
    p->count++;
    m->map_count++;
    return 0;
}

int stub_map_remove(cl_mem m, void *ptr)
{
    for (struct stub_map **pp = &m->maps; *pp; pp = &(*pp)->next) {
        struct stub_map *p = *pp;
        if (p->ptr != ptr)
            continue;
        if (--p->count == 0) {
            *pp = p->next;
            free(p);
        }
        m->map_count--;
        return 0;
    }
    return -1;
}

void stub_copy_box(unsigned char *dst, const size_t dst_origin[3], size_t dst_row, size_t dst_slice,
                   const unsigned char *src, const size_t src_origin[3], size_t src_row,
                   size_t src_slice, const size_t region[3])
{
    size_t d0 = dst_origin[0] + dst_origin[1] * dst_row + dst_origin[2] * dst_slice;
    size_t s0 = src_origin[0] + src_origin[1] * src_row + src_origin[2] * src_slice;
    for (size_t z = 0; z < region[2]; z++)
        for (size_t y = 0; y < region[1]; y++)
            memmove(dst + d0 + y * dst_row + z * dst_slice, src + s0 + y * src_row + z * src_slice,
                    region[0]);
}

int stub_box_fits(const size_t origin[3], const size_t region[3], size_t row, size_t slice, size_t size)
{
    size_t a, b, c, d, last;
    if (!region[0] || !region[1] || !region[2])
        return 0;
    if (__builtin_mul_overflow(origin[1] + region[1] - 1, row, &a) ||
        __builtin_mul_overflow(origin[2] + region[2] - 1, slice, &b) ||
        __builtin_add_overflow(a, b, &c) || __builtin_add_overflow(c, origin[0] + region[0] - 1, &d))
        return 0;
    last = d;
    return last < size;
}

/* ------------------------------------------------------------ entry points */
cl_mem CL_API_CALL stub_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                                       cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err;
    cl_mem m = stub_mem_new(context, CL_MEM_OBJECT_BUFFER, flags, size, host_ptr, NULL, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return m;
}

cl_mem CL_API_CALL stub_clCreateBufferWithProperties(cl_context context, const cl_mem_properties *properties,
                                                     cl_mem_flags flags, size_t size, void *host_ptr,
                                                     cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err;
    cl_mem m = stub_mem_new(context, CL_MEM_OBJECT_BUFFER, flags, size, host_ptr, properties, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return m;
}

cl_mem CL_API_CALL stub_clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                                          cl_buffer_create_type create_type, const void *info,
                                          cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    cl_mem m = NULL;
    const cl_buffer_region *r = info;
    if (!stub_valid(buffer, STUB_MEM) || buffer->type != CL_MEM_OBJECT_BUFFER || buffer->parent) {
        err = CL_INVALID_MEM_OBJECT;
        goto out;
    }
    cl_mem_flags pf = buffer->flags;
    if (create_type != CL_BUFFER_CREATE_TYPE_REGION || !r || (flags & STUB_HOSTPTR_FLAGS) ||
        stub_check_flags(flags) != CL_SUCCESS ||
        ((pf & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) ||
        ((pf & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))) ||
        ((pf & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY)) ||
        ((pf & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY)) ||
        ((pf & CL_MEM_HOST_NO_ACCESS) && (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)))) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    if (r->size == 0) {
        err = CL_INVALID_BUFFER_SIZE;
        goto out;
    }
    if (r->origin > buffer->size || r->size > buffer->size - r->origin) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    if (r->origin % STUB_BASE_ALIGN) {
        err = CL_MISALIGNED_SUB_BUFFER_OFFSET;
        goto out;
    }
    if (!(m = stub_obj_new(sizeof *m, STUB_MEM))) {
        err = CL_OUT_OF_HOST_MEMORY;
        goto out;
    }
    if (!(flags & STUB_ACCESS_FLAGS))
        flags |= pf & STUB_ACCESS_FLAGS;
    if (!(flags & STUB_HOSTACC_FLAGS))
        flags |= pf & STUB_HOSTACC_FLAGS;
    flags |= pf & STUB_HOSTPTR_FLAGS;
    m->ctx = buffer->ctx;
    m->type = CL_MEM_OBJECT_BUFFER;
    m->flags = flags;
    m->size = r->size;
    m->data = buffer->data + r->origin;
    m->host_ptr = buffer->host_ptr ? (unsigned char *)buffer->host_ptr + r->origin : NULL;
    m->uses_svm = buffer->uses_svm;
    m->parent = buffer;
    m->offset = r->origin;
    buffer->h.refs++;
    stub_context_retain(m->ctx);
out:
    stub_set_err(errcode_ret, err);
    stub_leave();
    return m;
}

cl_int CL_API_CALL stub_clRetainMemObject(cl_mem m)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_MEM_OBJECT;
    if (stub_valid(m, STUB_MEM)) {
        m->h.refs++;
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clReleaseMemObject(cl_mem m)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_MEM_OBJECT;
    if (stub_valid(m, STUB_MEM)) {
        stub_mem_release(m);
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetMemObjectInfo(cl_mem m, cl_mem_info param_name, size_t value_size,
                                           void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_MEM_OBJECT;
    if (!stub_valid(m, STUB_MEM))
        goto out;
    switch (param_name) {
    case CL_MEM_TYPE:
        err = stub_info(&m->type, sizeof m->type, value_size, value, size_ret);
        break;
    case CL_MEM_FLAGS:
        err = stub_info(&m->flags, sizeof m->flags, value_size, value, size_ret);
        break;
    case CL_MEM_SIZE:
        err = stub_info(&m->size, sizeof m->size, value_size, value, size_ret);
        break;
    case CL_MEM_HOST_PTR:
        err = stub_info(&m->host_ptr, sizeof m->host_ptr, value_size, value, size_ret);
        break;
    case CL_MEM_MAP_COUNT:
        err = stub_info(&m->map_count, sizeof m->map_count, value_size, value, size_ret);
        break;
    case CL_MEM_REFERENCE_COUNT:
        err = stub_info(&m->h.refs, sizeof m->h.refs, value_size, value, size_ret);
        break;
    case CL_MEM_CONTEXT:
        err = stub_info(&m->ctx, sizeof m->ctx, value_size, value, size_ret);
        break;
    case CL_MEM_ASSOCIATED_MEMOBJECT:
        err = stub_info(&m->parent, sizeof m->parent, value_size, value, size_ret);
        break;
    case CL_MEM_OFFSET:
        err = stub_info(&m->offset, sizeof m->offset, value_size, value, size_ret);
        break;
    case CL_MEM_USES_SVM_POINTER: {
        cl_bool b = m->uses_svm ? CL_TRUE : CL_FALSE;
        err = stub_info(&b, sizeof b, value_size, value, size_ret);
        break;
    }
    case CL_MEM_PROPERTIES:
        err = stub_info(m->props, m->nprops * sizeof *m->props, value_size, value, size_ret);
        break;
    default:
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clSetMemObjectDestructorCallback(cl_mem m,
                                                         void(CL_CALLBACK *pfn_notify)(cl_mem, void *),
                                                         void *user_data)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    struct stub_cb *cb;
    if (!stub_valid(m, STUB_MEM))
        err = CL_INVALID_MEM_OBJECT;
    else if (!pfn_notify)
        err = CL_INVALID_VALUE;
    else if (!(cb = calloc(1, sizeof *cb)))
        err = CL_OUT_OF_HOST_MEMORY;
    else {
        cb->kind = STUB_CB_MEM;
        cb->fn = (void (*)(void))pfn_notify;
        cb->user = user_data;
        cb->next = m->destructors;
        m->destructors = cb;
    }
    stub_leave();
    return err;
}

cl_mem CL_API_CALL stub_clCreatePipe(cl_context context, cl_mem_flags flags, cl_uint pipe_packet_size,
                                     cl_uint pipe_max_packets, const cl_pipe_properties *properties,
                                     cl_int *errcode_ret)
{
    (void)flags;
    (void)pipe_packet_size;
    (void)pipe_max_packets;
    (void)properties;
    STUB_ENTER();
    /* CL_DEVICE_PIPE_SUPPORT is false */
    stub_set_err(errcode_ret, stub_valid(context, STUB_CONTEXT) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
    stub_leave();
    return NULL;
}

cl_int CL_API_CALL stub_clGetPipeInfo(cl_mem pipe, cl_pipe_info param_name, size_t value_size,
                                      void *value, size_t *size_ret)
{
    (void)pipe;
    (void)param_name;
    (void)value_size;
    (void)value;
    (void)size_ret;
    STUB_ENTER();
    stub_leave();
    return CL_INVALID_MEM_OBJECT;   /* there are no pipes */
}
