/* stub_program.c — programs. Every build, compile and link succeeds; the
 * kernels are those stub_parse.c finds in the source. A program's "binary"
 * is its source bytes, and clCreateProgramWithBinary takes such bytes back
 * as source. IL and built-in kernels are not supported. */
#include "tests/stub-icd/stub_int.h"

#include <stdlib.h>
#include <string.h>

void stub_program_release(cl_program p)
{
    if (--p->h.refs)
        return;
    cl_context ctx = p->ctx;
    stub_free_kernels(p->kernels, p->nkernels);
    free(p->source);
    free(p->options);
    free(p->kernel_names);
    p->h.kind = 0;
    free(p);
    stub_context_release(ctx);
}

/* A program holding src (taken over) and its kernels; NULL when out of memory. */
static cl_program stub_program_new(cl_context ctx, char *src, size_t len)
{
    cl_program p = stub_obj_new(sizeof *p, STUB_PROGRAM);
    if (!p || !(p->options = stub_strdup("")) || stub_parse_kernels(src, &p->kernels, &p->nkernels) < 0)
        goto oom;
    size_t n = 1;
    for (cl_uint i = 0; i < p->nkernels; i++)
        n += strlen(p->kernels[i].name) + 1;
    if (!(p->kernel_names = calloc(1, n)))
        goto oom;
    for (cl_uint i = 0; i < p->nkernels; i++) {
        if (i)
            strcat(p->kernel_names, ";");
        strcat(p->kernel_names, p->kernels[i].name);
    }
    p->ctx = ctx;
    p->source = src;
    p->source_len = len;
    p->status = CL_BUILD_NONE;
    p->bintype = CL_PROGRAM_BINARY_TYPE_NONE;
    stub_context_retain(ctx);
    return p;
oom:
    if (p) {
        stub_free_kernels(p->kernels, p->nkernels);
        free(p->options);
    }
    free(p);
    free(src);
    return NULL;
}

static cl_int stub_check_devices(cl_uint n, const cl_device_id *devs, int required)
{
    if ((required && (!n || !devs)) || (n && !devs) || (!n && devs))
        return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < n; i++)
        if (devs[i] != &stub_device)
            return CL_INVALID_DEVICE;
    return CL_SUCCESS;
}

cl_program CL_API_CALL stub_clCreateProgramWithSource(cl_context context, cl_uint count, const char **strings,
                                                      const size_t *lengths, cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    cl_program p = NULL;
    size_t total = 0;
    if (!stub_valid(context, STUB_CONTEXT)) {
        err = CL_INVALID_CONTEXT;
        goto out;
    }
    if (!count || !strings) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    for (cl_uint i = 0; i < count; i++) {
        if (!strings[i]) {
            err = CL_INVALID_VALUE;
            goto out;
        }
        total += lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
    }
    char *src = malloc(total + 1);
    if (!src) {
        err = CL_OUT_OF_HOST_MEMORY;
        goto out;
    }
    size_t at = 0;
    for (cl_uint i = 0; i < count; i++) {
        size_t n = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
        memcpy(src + at, strings[i], n);
        at += n;
    }
    src[total] = '\0';
    if (!(p = stub_program_new(context, src, total)))
        err = CL_OUT_OF_HOST_MEMORY;
out:
    stub_set_err(errcode_ret, err);
    stub_leave();
    return p;
}

cl_program CL_API_CALL stub_clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                      const cl_device_id *device_list, const size_t *lengths,
                                                      const unsigned char **binaries, cl_int *binary_status,
                                                      cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    cl_program p = NULL;
    if (!stub_valid(context, STUB_CONTEXT)) {
        err = CL_INVALID_CONTEXT;
        goto out;
    }
    if ((err = stub_check_devices(num_devices, device_list, 1)) != CL_SUCCESS)
        goto out;
    if (!lengths || !binaries) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    for (cl_uint i = 0; i < num_devices; i++)
        if (!lengths[i] || !binaries[i]) {
            if (binary_status)
                binary_status[i] = CL_INVALID_VALUE;
            err = CL_INVALID_VALUE;
        }
    if (err != CL_SUCCESS)
        goto out;
    char *src = malloc(lengths[0] + 1);
    if (!src) {
        err = CL_OUT_OF_HOST_MEMORY;
        goto out;
    }
    memcpy(src, binaries[0], lengths[0]);
    src[lengths[0]] = '\0';
    if (!(p = stub_program_new(context, src, lengths[0]))) {
        err = CL_OUT_OF_HOST_MEMORY;
        goto out;
    }
    p->from_binary = 1;
    p->bintype = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
    for (cl_uint i = 0; binary_status && i < num_devices; i++)
        binary_status[i] = CL_SUCCESS;
out:
    stub_set_err(errcode_ret, err);
    stub_leave();
    return p;
}

cl_program CL_API_CALL stub_clCreateProgramWithBuiltInKernels(cl_context context, cl_uint num_devices,
                                                              const cl_device_id *device_list,
                                                              const char *kernel_names, cl_int *errcode_ret)
{
    (void)kernel_names;
    STUB_ENTER();
    cl_int err = CL_INVALID_VALUE;   /* the device has no built-in kernels */
    if (!stub_valid(context, STUB_CONTEXT))
        err = CL_INVALID_CONTEXT;
    else if (stub_check_devices(num_devices, device_list, 1) == CL_INVALID_DEVICE)
        err = CL_INVALID_DEVICE;
    stub_set_err(errcode_ret, err);
    stub_leave();
    return NULL;
}

cl_program CL_API_CALL stub_clCreateProgramWithIL(cl_context context, const void *il, size_t length,
                                                  cl_int *errcode_ret)
{
    (void)il;
    (void)length;
    STUB_ENTER();
    /* CL_DEVICE_IL_VERSION is empty */
    stub_set_err(errcode_ret, stub_valid(context, STUB_CONTEXT) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
    stub_leave();
    return NULL;
}

cl_int CL_API_CALL stub_clRetainProgram(cl_program p)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_PROGRAM;
    if (stub_valid(p, STUB_PROGRAM)) {
        p->h.refs++;
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clReleaseProgram(cl_program p)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_PROGRAM;
    if (stub_valid(p, STUB_PROGRAM)) {
        stub_program_release(p);
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

/* Queues the build/compile/link notification (the program is held until it ran). */
static cl_int stub_notify(cl_program p, void(CL_CALLBACK *fn)(cl_program, void *), void *user)
{
    if (!fn)
        return CL_SUCCESS;
    struct stub_cb *cb = calloc(1, sizeof *cb);
    if (!cb)
        return CL_OUT_OF_HOST_MEMORY;
    cb->kind = STUB_CB_PROGRAM;
    cb->fn = (void (*)(void))fn;
    cb->obj = p;
    cb->user = user;
    p->h.refs++;
    stub_defer(cb);
    return CL_SUCCESS;
}

static cl_int stub_build(cl_program p, cl_uint ndev, const cl_device_id *devs, const char *options,
                         void(CL_CALLBACK *fn)(cl_program, void *), void *user, cl_program_binary_type type)
{
    cl_int err;
    if (!stub_valid(p, STUB_PROGRAM))
        return CL_INVALID_PROGRAM;
    if ((err = stub_check_devices(ndev, devs, 0)) != CL_SUCCESS)
        return err;
    if (!fn && user)
        return CL_INVALID_VALUE;
    if (p->live_kernels || (type == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT && p->from_binary))
        return CL_INVALID_OPERATION;
    char *o = stub_strdup(options ? options : "");
    if (!o)
        return CL_OUT_OF_HOST_MEMORY;
    free(p->options);
    p->options = o;
    p->status = CL_BUILD_SUCCESS;
    p->bintype = type;
    return stub_notify(p, fn, user);
}

cl_int CL_API_CALL stub_clBuildProgram(cl_program p, cl_uint num_devices, const cl_device_id *device_list,
                                       const char *options, void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                       void *user_data)
{
    STUB_ENTER();
    cl_int err = stub_build(p, num_devices, device_list, options, pfn_notify, user_data,
                            CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clCompileProgram(cl_program p, cl_uint num_devices, const cl_device_id *device_list,
                                         const char *options, cl_uint num_input_headers,
                                         const cl_program *input_headers, const char **header_include_names,
                                         void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data)
{
    STUB_ENTER();
    cl_int err;
    if ((num_input_headers && (!input_headers || !header_include_names)) ||
        (!num_input_headers && (input_headers || header_include_names)))
        err = stub_valid(p, STUB_PROGRAM) ? CL_INVALID_VALUE : CL_INVALID_PROGRAM;
    else
        err = stub_build(p, num_devices, device_list, options, pfn_notify, user_data,
                         CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    stub_leave();
    return err;
}

cl_program CL_API_CALL stub_clLinkProgram(cl_context context, cl_uint num_devices, const cl_device_id *device_list,
                                          const char *options, cl_uint num_input_programs,
                                          const cl_program *input_programs,
                                          void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data,
                                          cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_program p = NULL;
    cl_int err = CL_SUCCESS;
    size_t total = 0;
    if (!stub_valid(context, STUB_CONTEXT)) {
        err = CL_INVALID_CONTEXT;
        goto out;
    }
    if ((err = stub_check_devices(num_devices, device_list, 0)) != CL_SUCCESS)
        goto out;
    if (!num_input_programs || !input_programs || (!pfn_notify && user_data)) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    for (cl_uint i = 0; i < num_input_programs; i++) {
        cl_program in = input_programs[i];
        if (!stub_valid(in, STUB_PROGRAM)) {
            err = CL_INVALID_PROGRAM;
            goto out;
        }
        if (in->status != CL_BUILD_SUCCESS && !in->from_binary) {
            err = CL_INVALID_OPERATION;
            goto out;
        }
        total += in->source_len + 1;
    }
    char *src = malloc(total + 1);
    if (!src) {
        err = CL_OUT_OF_HOST_MEMORY;
        goto out;
    }
    size_t at = 0;
    for (cl_uint i = 0; i < num_input_programs; i++) {
        memcpy(src + at, input_programs[i]->source, input_programs[i]->source_len);
        at += input_programs[i]->source_len;
        src[at++] = '\n';
    }
    src[at] = '\0';
    char *o = stub_strdup(options ? options : "");
    if (!o)
        free(src);
    if (!o || !(p = stub_program_new(context, src, at))) {   /* src is taken over */
        free(o);
        err = CL_OUT_OF_HOST_MEMORY;
        goto out;
    }
    free(p->options);
    p->options = o;
    p->from_binary = 1;   /* no source of its own */
    p->status = CL_BUILD_SUCCESS;
    p->bintype = options && strstr(options, "-create-library") ? CL_PROGRAM_BINARY_TYPE_LIBRARY
                                                               : CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
    err = stub_notify(p, pfn_notify, user_data);
out:
    stub_set_err(errcode_ret, err);
    stub_leave();
    return p;
}

int stub_program_executable(cl_program p)
{
    return p->status == CL_BUILD_SUCCESS && p->bintype == CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
}

cl_int CL_API_CALL stub_clGetProgramInfo(cl_program p, cl_program_info param_name, size_t value_size, void *value,
                                         size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_PROGRAM;
    cl_device_id dev = &stub_device;
    size_t binsize;
    if (!stub_valid(p, STUB_PROGRAM))
        goto out;
    binsize = p->status == CL_BUILD_SUCCESS || p->from_binary ? p->source_len : 0;
    switch (param_name) {
    case CL_PROGRAM_REFERENCE_COUNT:
        err = stub_info(&p->h.refs, sizeof p->h.refs, value_size, value, size_ret);
        break;
    case CL_PROGRAM_CONTEXT:
        err = stub_info(&p->ctx, sizeof p->ctx, value_size, value, size_ret);
        break;
    case CL_PROGRAM_NUM_DEVICES: {
        cl_uint n = 1;
        err = stub_info(&n, sizeof n, value_size, value, size_ret);
        break;
    }
    case CL_PROGRAM_DEVICES:
        err = stub_info(&dev, sizeof dev, value_size, value, size_ret);
        break;
    case CL_PROGRAM_SOURCE:
        /* CLRR_STUB_BINARY_SOURCE=1: a binary program reports its source (the
         * binary's bytes), as a driver that keeps it would */
        err = p->from_binary && !getenv("CLRR_STUB_BINARY_SOURCE") ? stub_info("", 1, value_size, value, size_ret)
                             : stub_info(p->source, p->source_len + 1, value_size, value, size_ret);
        break;
    case CL_PROGRAM_IL:
        err = stub_info(NULL, 0, value_size, value, size_ret);
        break;
    case CL_PROGRAM_BINARY_SIZES:
        err = stub_info(&binsize, sizeof binsize, value_size, value, size_ret);
        break;
    case CL_PROGRAM_BINARIES: {
        unsigned char **bins = value;
        err = stub_info(NULL, sizeof(unsigned char *), value_size, NULL, size_ret);
        if (err == CL_SUCCESS && bins) {
            if (value_size < sizeof *bins)
                err = CL_INVALID_VALUE;
            else if (bins[0] && binsize)
                memcpy(bins[0], p->source, binsize);
        }
        break;
    }
    case CL_PROGRAM_NUM_KERNELS: {
        size_t n = p->nkernels;
        err = stub_program_executable(p) ? stub_info(&n, sizeof n, value_size, value, size_ret)
                                 : CL_INVALID_PROGRAM_EXECUTABLE;
        break;
    }
    case CL_PROGRAM_KERNEL_NAMES:
        err = stub_program_executable(p) ? stub_info(p->kernel_names, strlen(p->kernel_names) + 1, value_size, value,
                                             size_ret)
                                 : CL_INVALID_PROGRAM_EXECUTABLE;
        break;
    case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT: case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT: {
        cl_bool no = CL_FALSE;
        err = stub_info(&no, sizeof no, value_size, value, size_ret);
        break;
    }
    default:
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetProgramBuildInfo(cl_program p, cl_device_id device, cl_program_build_info param_name,
                                              size_t value_size, void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_PROGRAM;
    if (!stub_valid(p, STUB_PROGRAM))
        goto out;
    if (device != &stub_device) {
        err = CL_INVALID_DEVICE;
        goto out;
    }
    switch (param_name) {
    case CL_PROGRAM_BUILD_STATUS:
        err = stub_info(&p->status, sizeof p->status, value_size, value, size_ret);
        break;
    case CL_PROGRAM_BUILD_OPTIONS:
        err = stub_info(p->options, strlen(p->options) + 1, value_size, value, size_ret);
        break;
    case CL_PROGRAM_BUILD_LOG:
        err = stub_info("", 1, value_size, value, size_ret);
        break;
    case CL_PROGRAM_BINARY_TYPE:
        err = stub_info(&p->bintype, sizeof p->bintype, value_size, value, size_ret);
        break;
    case CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE: {
        size_t zero = 0;
        err = stub_info(&zero, sizeof zero, value_size, value, size_ret);
        break;
    }
    default:
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clSetProgramReleaseCallback(cl_program p, void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                                    void *user_data)
{
    (void)pfn_notify;
    (void)user_data;
    STUB_ENTER();
    /* no program-scope global constructors or destructors */
    cl_int err = stub_valid(p, STUB_PROGRAM) ? CL_INVALID_OPERATION : CL_INVALID_PROGRAM;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clSetProgramSpecializationConstant(cl_program p, cl_uint spec_id, size_t spec_size,
                                                           const void *spec_value)
{
    (void)p;
    (void)spec_id;
    (void)spec_size;
    (void)spec_value;
    STUB_ENTER();
    stub_leave();
    return CL_INVALID_PROGRAM;   /* no program comes from IL */
}
