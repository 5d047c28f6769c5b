/* stub_svm.c — coarse-grained shared virtual memory in host memory: the
 * allocations (kept in a list, so that a USE_HOST_PTR buffer can tell it
 * uses one) and the SVM commands. */
#include "tests/stub-icd/stub_int.h"

#include <stdlib.h>
#include <string.h>

struct stub_svm {
    struct stub_svm *next;
    unsigned char *ptr;
    size_t size;
};
static struct stub_svm *stub_svms;   /* under the lock */

void *stub_svm_find(const void *ptr, size_t *size_ret)
{
    const unsigned char *p = ptr;
    for (struct stub_svm *s = stub_svms; s; s = s->next)
        if (p >= s->ptr && p < s->ptr + s->size) {
            if (size_ret)
                *size_ret = s->size;
            return s->ptr;
        }
    return NULL;
}

static void stub_svm_free(void *ptr)
{
    for (struct stub_svm **pp = &stub_svms; *pp; pp = &(*pp)->next)
        if ((*pp)->ptr == ptr) {
            struct stub_svm *s = *pp;
            *pp = s->next;
            free(s->ptr);
            free(s);
            return;
        }
}

void *CL_API_CALL stub_clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment)
{
    STUB_ENTER();
    void *p = NULL;
    struct stub_svm *s = NULL;
    const cl_svm_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
    /* fine-grained and atomic SVM are not supported */
    if (!stub_valid(context, STUB_CONTEXT) || (flags & ~access) || (flags & (flags - 1)) || !size ||
        size > STUB_MAX_ALLOC || (alignment & (alignment - 1)) || alignment > 4096)
        goto out;
    if (alignment < 128)
        alignment = 128;
    if (posix_memalign(&p, alignment, size) != 0) {
        p = NULL;
        goto out;
    }
    if (!(s = calloc(1, sizeof *s))) {
        free(p);
        p = NULL;
        goto out;
    }
    memset(p, 0, size);
    s->ptr = p;
    s->size = size;
    s->next = stub_svms;
    stub_svms = s;
out:
    stub_leave();
    return p;
}

void CL_API_CALL stub_clSVMFree(cl_context context, void *svm_pointer)
{
    STUB_ENTER();
    if (stub_valid(context, STUB_CONTEXT) && svm_pointer)
        stub_svm_free(svm_pointer);
    stub_leave();
}

cl_int CL_API_CALL stub_clEnqueueSVMFree(cl_command_queue q, cl_uint num_svm_pointers, void *svm_pointers[],
                                         void(CL_CALLBACK *pfn_free_func)(cl_command_queue, cl_uint, void *[],
                                                                          void *),
                                         void *user_data, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err != CL_SUCCESS)
        goto out;
    if ((num_svm_pointers && !svm_pointers) || (!num_svm_pointers && svm_pointers)) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    for (cl_uint i = 0; i < num_svm_pointers; i++)
        if (!svm_pointers[i]) {
            err = CL_INVALID_VALUE;
            goto out;
        }
    if (pfn_free_func) {
        struct stub_cb *cb = calloc(1, sizeof *cb);
        void **copy = stub_memdup(svm_pointers, num_svm_pointers * sizeof *svm_pointers);
        if (!cb || !copy) {
            free(cb);
            free(copy);
            err = CL_OUT_OF_HOST_MEMORY;
            goto out;
        }
        cb->kind = STUB_CB_SVM_FREE;
        cb->fn = (void (*)(void))pfn_free_func;
        cb->obj = q;
        cb->user = user_data;
        cb->ptrs = copy;
        cb->nptrs = num_svm_pointers;
        q->h.refs++;
        stub_defer(cb);
    } else {
        for (cl_uint i = 0; i < num_svm_pointers; i++)
            stub_svm_free(svm_pointers[i]);
    }
    err = stub_cmd(q, CL_COMMAND_SVM_FREE, nwait, wait, event, 0);
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking_copy, void *dst_ptr,
                                           const void *src_ptr, size_t size, cl_uint nwait, const cl_event *wait,
                                           cl_event *event)
{
    STUB_ENTER();
    const unsigned char *s = src_ptr, *d = dst_ptr;
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err != CL_SUCCESS)
        goto out;
    if (!dst_ptr || !src_ptr) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    if (s < d + size && d < s + size) {
        err = CL_MEM_COPY_OVERLAP;
        goto out;
    }
    if (size)
        memcpy(dst_ptr, src_ptr, size);
    err = stub_cmd(q, CL_COMMAND_SVM_MEMCPY, nwait, wait, event, blocking_copy);
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueSVMMemFill(cl_command_queue q, void *svm_ptr, const void *pattern,
                                            size_t pattern_size, size_t size, cl_uint nwait, const cl_event *wait,
                                            cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err != CL_SUCCESS)
        goto out;
    if (!svm_ptr || !pattern || !pattern_size || pattern_size > 128 || (pattern_size & (pattern_size - 1)) ||
        (uintptr_t)svm_ptr % pattern_size || size % pattern_size) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    for (size_t i = 0; i < size; i += pattern_size)
        memcpy((unsigned char *)svm_ptr + i, pattern, pattern_size);
    err = stub_cmd(q, CL_COMMAND_SVM_MEMFILL, nwait, wait, event, 0);
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueSVMMap(cl_command_queue q, cl_bool blocking_map, cl_map_flags flags,
                                        void *svm_ptr, size_t size, cl_uint nwait, const cl_event *wait,
                                        cl_event *event)
{
    STUB_ENTER();
    const cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS && (!svm_ptr || !size || (flags & ~known)))
        err = CL_INVALID_VALUE;
    if (err == CL_SUCCESS)
        err = stub_cmd(q, CL_COMMAND_SVM_MAP, nwait, wait, event, blocking_map);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueSVMUnmap(cl_command_queue q, void *svm_ptr, cl_uint nwait, const cl_event *wait,
                                          cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS && !svm_ptr)
        err = CL_INVALID_VALUE;
    if (err == CL_SUCCESS)
        err = stub_cmd(q, CL_COMMAND_SVM_UNMAP, nwait, wait, event, 0);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueSVMMigrateMem(cl_command_queue q, cl_uint num_svm_pointers,
                                               const void **svm_pointers, const size_t *sizes,
                                               cl_mem_migration_flags flags, cl_uint nwait, const cl_event *wait,
                                               cl_event *event)
{
    (void)sizes;
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS &&
        (!num_svm_pointers || !svm_pointers ||
         (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))))
        err = CL_INVALID_VALUE;
    if (err == CL_SUCCESS)
        err = stub_cmd(q, CL_COMMAND_SVM_MIGRATE_MEM, nwait, wait, event, 0);
    stub_leave();
    return err;
}
