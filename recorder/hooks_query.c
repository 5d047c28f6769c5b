/* hooks_query.c — queries whose answers are OpenCL objects: the raw bytes
 * (pointers) mean nothing in another process, so the objects are also
 * recorded as ids ("post" map, key "handles"). Also extension entry points,
 * which must be ours so that extension calls are recorded. */
#include "recorder/rec_int.h"

#include <stdlib.h>

/* Query codes answering objects; the codes are distinct across queries. */
static const cl_uint rec_handle_queries[] = {
    CL_DEVICE_PLATFORM, CL_DEVICE_PARENT_DEVICE, CL_CONTEXT_DEVICES, CL_QUEUE_CONTEXT,
    CL_QUEUE_DEVICE, CL_QUEUE_DEVICE_DEFAULT, CL_MEM_CONTEXT, CL_MEM_ASSOCIATED_MEMOBJECT,
    CL_IMAGE_BUFFER, CL_PROGRAM_CONTEXT, CL_PROGRAM_DEVICES, CL_KERNEL_CONTEXT,
    CL_KERNEL_PROGRAM, CL_EVENT_COMMAND_QUEUE, CL_EVENT_CONTEXT};

void rec_query_handles(rec_call *c, int ok, cl_uint param_name, const void *value,
                       const size_t *size_ret)
{
    if (!ok || !value || !size_ret)
        return;
    int yes = 0;
    for (size_t i = 0; i < sizeof rec_handle_queries / sizeof rec_handle_queries[0]; i++)
        yes |= rec_handle_queries[i] == param_name;
    if (!yes)
        return;
    size_t n = *size_ret / sizeof(void *);
    if (n > 256)
        n = 256;
    rec_extra *x = rec_extra_add(c, 1, "handles");
    if (!x || !(x->uints = malloc((n ? n : 1) * sizeof *x->uints)))
        return;
    const void *const *h = value;
    for (size_t i = 0; i < n; i++)
        x->uints[i] = rec_obj_id(h[i]);
    x->slot.n = (uint32_t)n;
}

#define REC_QUERY_HOOK(fn, objtype, objname, infotype) \
    void rec_post_##fn(rec_call *c, int ok, cl_int *ret, objtype objname, infotype a_param_name, \
                       size_t a_param_value_size, void *a_param_value, size_t *a_param_value_size_ret) \
    { \
        (void)ret; \
        (void)objname; \
        (void)a_param_value_size; \
        rec_query_handles(c, ok, a_param_name, a_param_value, a_param_value_size_ret); \
    }

REC_QUERY_HOOK(clGetDeviceInfo, cl_device_id, a_device, cl_device_info)
REC_QUERY_HOOK(clGetContextInfo, cl_context, a_context, cl_context_info)
REC_QUERY_HOOK(clGetMemObjectInfo, cl_mem, a_memobj, cl_mem_info)
REC_QUERY_HOOK(clGetImageInfo, cl_mem, a_image, cl_image_info)
/* CL_PROGRAM_BINARIES: the binaries themselves, as blobs ("post" map, key
 * "binaries"; the answer's bytes are pointers). An application that builds
 * from source, fetches the binary and later creates a program from it
 * stores it once (blobs are content-addressed), and a replay on another
 * device can build that program from the source the binary came from. */
static void rec_program_binaries(rec_call *c, cl_program program, size_t value_size, void *value)
{
    size_t n = value_size / sizeof(unsigned char *);
    if (!value || !n || n > 1024 || !rec_next.clGetProgramInfo)
        return;
    size_t *sizes = calloc(n, sizeof *sizes);
    tf_blobref *refs = sizes ? calloc(n, sizeof *refs) : NULL;
    if (!refs || rec_next.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, n * sizeof *sizes, sizes, NULL)
                     != CL_SUCCESS) {
        free(sizes);
        free(refs);
        return;
    }
    unsigned char *const *bin = value;
    for (size_t i = 0; i < n; i++)
        if (bin[i] && sizes[i])
            tf_writer_blob(rec_g.w, bin[i], sizes[i], &refs[i]);
    free(sizes);
    rec_extra *x = rec_extra_add(c, 1, "binaries");
    if (!x) {
        free(refs);
        return;
    }
    x->slot.state = REC_SLOT_BLOBS;
    x->slot.n = (uint32_t)n;
    x->slot.v.blobs = refs;
}

void rec_post_clGetProgramInfo(rec_call *c, int ok, cl_int *ret, cl_program a_program, cl_program_info a_param_name,
                               size_t a_param_value_size, void *a_param_value, size_t *a_param_value_size_ret)
{
    (void)ret;
    rec_query_handles(c, ok, a_param_name, a_param_value, a_param_value_size_ret);
    if (ok && c->capture && a_param_name == CL_PROGRAM_BINARIES)
        rec_program_binaries(c, a_program, a_param_value_size, a_param_value);
}
REC_QUERY_HOOK(clGetKernelInfo, cl_kernel, a_kernel, cl_kernel_info)

void rec_post_clGetEventInfo(rec_call *c, int ok, cl_int *ret, cl_event a_event,
                             cl_event_info a_param_name, size_t a_param_value_size,
                             void *a_param_value, size_t *a_param_value_size_ret)
{
    (void)ret;
    rec_query_handles(c, ok, a_param_name, a_param_value, a_param_value_size_ret);
    /* plan mode: a marker standing for a command says the command's type */
    if (ok && a_param_name == CL_EVENT_COMMAND_TYPE && a_param_value && a_param_value_size >= sizeof(cl_command_type))
        rec_plan_event_type(a_event, (cl_command_type *)a_param_value);
    /* the application learns that a command completed: capture its data now */
    if (ok && a_param_name == CL_EVENT_COMMAND_EXECUTION_STATUS && a_param_value
        && a_param_value_size >= sizeof(cl_int) && *(cl_int *)a_param_value <= CL_COMPLETE)
        rec_events_poll(0);
}

void rec_post_clGetExtensionFunctionAddressForPlatform(rec_call *c, int ok, void **ret,
                                                       cl_platform_id a_platform,
                                                       const char *a_func_name)
{
    (void)c;
    (void)ok;
    (void)a_platform;
    *ret = rec_gen_ext_wrap(a_func_name, *ret);
}

void rec_post_clGetExtensionFunctionAddress(rec_call *c, int ok, void **ret, const char *a_func_name)
{
    (void)c;
    (void)ok;
    *ret = rec_gen_ext_wrap(a_func_name, *ret);
}
