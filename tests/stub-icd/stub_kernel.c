/* stub_kernel.c — kernels: creation by name from a built program, their
 * arguments (checked against the parsed declaration and kept), queries, and
 * launches. A launch checks its arguments and work sizes and completes; no
 * kernel code runs and no memory changes. */
#include "tests/stub-icd/stub_int.h"

#include <stdlib.h>
#include <string.h>

static cl_kernel stub_kernel_new(cl_program p, const struct stub_kdecl *decl)
{
    cl_kernel k = stub_obj_new(sizeof *k, STUB_KERNEL);
    if (!k)
        return NULL;
    if (decl->nargs && !(k->args = calloc(decl->nargs, sizeof *k->args))) {
        free(k);
        return NULL;
    }
    k->prog = p;
    k->decl = decl;
    p->h.refs++;
    p->live_kernels++;
    return k;
}

static void stub_kernel_release(cl_kernel k)
{
    if (--k->h.refs)
        return;
    for (cl_uint i = 0; i < k->decl->nargs; i++)
        free(k->args[i].value);
    free(k->args);
    cl_program p = k->prog;
    k->h.kind = 0;
    free(k);
    p->live_kernels--;
    stub_program_release(p);
}

cl_kernel CL_API_CALL stub_clCreateKernel(cl_program p, const char *kernel_name, cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_KERNEL_NAME;
    cl_kernel k = NULL;
    if (!stub_valid(p, STUB_PROGRAM))
        err = CL_INVALID_PROGRAM;
    else if (!kernel_name)
        err = CL_INVALID_VALUE;
    else if (!stub_program_executable(p))
        err = CL_INVALID_PROGRAM_EXECUTABLE;
    else
        for (cl_uint i = 0; i < p->nkernels; i++)
            if (strcmp(p->kernels[i].name, kernel_name) == 0) {
                k = stub_kernel_new(p, &p->kernels[i]);
                err = k ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
                break;
            }
    stub_set_err(errcode_ret, err);
    stub_leave();
    return k;
}

cl_int CL_API_CALL stub_clCreateKernelsInProgram(cl_program p, cl_uint num_kernels, cl_kernel *kernels,
                                                 cl_uint *num_kernels_ret)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    if (!stub_valid(p, STUB_PROGRAM))
        err = CL_INVALID_PROGRAM;
    else if (!stub_program_executable(p))
        err = CL_INVALID_PROGRAM_EXECUTABLE;
    else if (kernels && num_kernels < p->nkernels)
        err = CL_INVALID_VALUE;
    else {
        for (cl_uint i = 0; kernels && i < p->nkernels; i++)
            if (!(kernels[i] = stub_kernel_new(p, &p->kernels[i]))) {
                while (i--)
                    stub_kernel_release(kernels[i]);
                err = CL_OUT_OF_HOST_MEMORY;
                goto out;
            }
        if (num_kernels_ret)
            *num_kernels_ret = p->nkernels;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clRetainKernel(cl_kernel k)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_KERNEL;
    if (stub_valid(k, STUB_KERNEL)) {
        k->h.refs++;
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clReleaseKernel(cl_kernel k)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_KERNEL;
    if (stub_valid(k, STUB_KERNEL)) {
        stub_kernel_release(k);
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_kernel CL_API_CALL stub_clCloneKernel(cl_kernel source_kernel, cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    cl_kernel k = NULL;
    if (!stub_valid(source_kernel, STUB_KERNEL)) {
        err = CL_INVALID_KERNEL;
        goto out;
    }
    if (!(k = stub_kernel_new(source_kernel->prog, source_kernel->decl))) {
        err = CL_OUT_OF_HOST_MEMORY;
        goto out;
    }
    for (cl_uint i = 0; i < k->decl->nargs; i++) {
        struct stub_arg *a = &source_kernel->args[i];
        k->args[i] = *a;
        k->args[i].value = NULL;
        if (a->value && !(k->args[i].value = stub_memdup(a->value, a->size))) {
            stub_kernel_release(k);
            k = NULL;
            err = CL_OUT_OF_HOST_MEMORY;
            goto out;
        }
    }
out:
    stub_set_err(errcode_ret, err);
    stub_leave();
    return k;
}

static cl_int stub_check_arg(const struct stub_argdecl *d, size_t size, const void *value)
{
    if (d->addr == CL_KERNEL_ARG_ADDRESS_LOCAL) {
        if (value)
            return CL_INVALID_ARG_VALUE;
        return size ? CL_SUCCESS : CL_INVALID_ARG_SIZE;
    }
    if (d->is_sampler) {
        if (size != sizeof(cl_sampler))
            return CL_INVALID_ARG_SIZE;
        return value && stub_valid(*(const cl_sampler *)value, STUB_SAMPLER) ? CL_SUCCESS : CL_INVALID_SAMPLER;
    }
    if (d->addr == CL_KERNEL_ARG_ADDRESS_GLOBAL || d->addr == CL_KERNEL_ARG_ADDRESS_CONSTANT || d->is_image) {
        if (size != sizeof(cl_mem))
            return CL_INVALID_ARG_SIZE;
        cl_mem m = value ? *(const cl_mem *)value : NULL;
        if (!m)
            return d->is_image ? CL_INVALID_ARG_VALUE : CL_SUCCESS;
        return stub_valid(m, STUB_MEM) ? CL_SUCCESS : CL_INVALID_MEM_OBJECT;
    }
    if (!value)
        return CL_INVALID_ARG_VALUE;
    if (!size || (d->scalar_size && size != d->scalar_size))
        return CL_INVALID_ARG_SIZE;
    return CL_SUCCESS;
}

static cl_int stub_store_arg(struct stub_arg *a, size_t size, const void *value)
{
    void *copy = NULL;
    if (value && !(copy = stub_memdup(value, size)))
        return CL_OUT_OF_HOST_MEMORY;
    free(a->value);
    a->value = copy;
    a->size = size;
    a->set = 1;
    return CL_SUCCESS;
}

cl_int CL_API_CALL stub_clSetKernelArg(cl_kernel k, cl_uint arg_index, size_t arg_size, const void *arg_value)
{
    STUB_ENTER();
    cl_int err;
    if (!stub_valid(k, STUB_KERNEL))
        err = CL_INVALID_KERNEL;
    else if (arg_index >= k->decl->nargs)
        err = CL_INVALID_ARG_INDEX;
    else if ((err = stub_check_arg(&k->decl->args[arg_index], arg_size, arg_value)) == CL_SUCCESS)
        err = stub_store_arg(&k->args[arg_index], arg_size, arg_value);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clSetKernelArgSVMPointer(cl_kernel k, cl_uint arg_index, const void *arg_value)
{
    STUB_ENTER();
    cl_int err;
    if (!stub_valid(k, STUB_KERNEL))
        err = CL_INVALID_KERNEL;
    else if (arg_index >= k->decl->nargs)
        err = CL_INVALID_ARG_INDEX;
    else if (k->decl->args[arg_index].addr != CL_KERNEL_ARG_ADDRESS_GLOBAL &&
             k->decl->args[arg_index].addr != CL_KERNEL_ARG_ADDRESS_CONSTANT)
        err = CL_INVALID_ARG_VALUE;
    else
        err = stub_store_arg(&k->args[arg_index], sizeof arg_value, &arg_value);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clSetKernelExecInfo(cl_kernel k, cl_kernel_exec_info param_name, size_t param_value_size,
                                            const void *param_value)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    if (!stub_valid(k, STUB_KERNEL))
        err = CL_INVALID_KERNEL;
    else if (!param_value)
        err = CL_INVALID_VALUE;
    else if (param_name == CL_KERNEL_EXEC_INFO_SVM_PTRS)
        err = param_value_size % sizeof(void *) ? CL_INVALID_VALUE : CL_SUCCESS;
    else if (param_name == CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM)
        err = param_value_size != sizeof(cl_bool) ? CL_INVALID_VALUE
              : *(const cl_bool *)param_value ? CL_INVALID_OPERATION : CL_SUCCESS;
    else
        err = CL_INVALID_VALUE;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetKernelInfo(cl_kernel k, cl_kernel_info param_name, size_t value_size, void *value,
                                        size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_KERNEL;
    if (!stub_valid(k, STUB_KERNEL))
        goto out;
    switch (param_name) {
    case CL_KERNEL_FUNCTION_NAME:
        err = stub_info(k->decl->name, strlen(k->decl->name) + 1, value_size, value, size_ret);
        break;
    case CL_KERNEL_NUM_ARGS:
        err = stub_info(&k->decl->nargs, sizeof k->decl->nargs, value_size, value, size_ret);
        break;
    case CL_KERNEL_REFERENCE_COUNT:
        err = stub_info(&k->h.refs, sizeof k->h.refs, value_size, value, size_ret);
        break;
    case CL_KERNEL_CONTEXT:
        err = stub_info(&k->prog->ctx, sizeof k->prog->ctx, value_size, value, size_ret);
        break;
    case CL_KERNEL_PROGRAM:
        err = stub_info(&k->prog, sizeof k->prog, value_size, value, size_ret);
        break;
    case CL_KERNEL_ATTRIBUTES:
        err = stub_info("", 1, value_size, value, size_ret);
        break;
    default:
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetKernelArgInfo(cl_kernel k, cl_uint arg_indx, cl_kernel_arg_info param_name,
                                           size_t value_size, void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_KERNEL;
    if (!stub_valid(k, STUB_KERNEL))
        goto out;
    if (arg_indx >= k->decl->nargs) {
        err = CL_INVALID_ARG_INDEX;
        goto out;
    }
    const struct stub_argdecl *d = &k->decl->args[arg_indx];
    switch (param_name) {
    case CL_KERNEL_ARG_ADDRESS_QUALIFIER:
        err = stub_info(&d->addr, sizeof d->addr, value_size, value, size_ret);
        break;
    case CL_KERNEL_ARG_ACCESS_QUALIFIER:
        err = stub_info(&d->access, sizeof d->access, value_size, value, size_ret);
        break;
    case CL_KERNEL_ARG_TYPE_NAME:
        err = stub_info(d->type_name, strlen(d->type_name) + 1, value_size, value, size_ret);
        break;
    case CL_KERNEL_ARG_TYPE_QUALIFIER:
        err = stub_info(&d->tq, sizeof d->tq, value_size, value, size_ret);
        break;
    case CL_KERNEL_ARG_NAME:
        err = stub_info(d->name, strlen(d->name) + 1, value_size, value, size_ret);
        break;
    default:
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetKernelWorkGroupInfo(cl_kernel k, cl_device_id device,
                                                 cl_kernel_work_group_info param_name, size_t value_size,
                                                 void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_KERNEL;
    if (!stub_valid(k, STUB_KERNEL))
        goto out;
    if (device && device != &stub_device) {
        err = CL_INVALID_DEVICE;
        goto out;
    }
    switch (param_name) {
    case CL_KERNEL_WORK_GROUP_SIZE: {
        size_t n = STUB_MAX_WG;
        err = stub_info(&n, sizeof n, value_size, value, size_ret);
        break;
    }
    case CL_KERNEL_COMPILE_WORK_GROUP_SIZE: {
        size_t s[3] = { 0, 0, 0 };
        err = stub_info(s, sizeof s, value_size, value, size_ret);
        break;
    }
    case CL_KERNEL_LOCAL_MEM_SIZE: {
        cl_ulong n = 0;
        for (cl_uint i = 0; i < k->decl->nargs; i++)
            if (k->decl->args[i].addr == CL_KERNEL_ARG_ADDRESS_LOCAL && k->args[i].set)
                n += k->args[i].size;
        err = stub_info(&n, sizeof n, value_size, value, size_ret);
        break;
    }
    case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: {
        size_t n = 8;
        err = stub_info(&n, sizeof n, value_size, value, size_ret);
        break;
    }
    case CL_KERNEL_PRIVATE_MEM_SIZE: {
        cl_ulong n = 0;
        err = stub_info(&n, sizeof n, value_size, value, size_ret);
        break;
    }
    default:   /* CL_KERNEL_GLOBAL_WORK_SIZE: only for custom devices and built-in kernels */
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetKernelSubGroupInfo(cl_kernel k, cl_device_id device, cl_kernel_sub_group_info param_name,
                                                size_t input_value_size, const void *input_value,
                                                size_t value_size, void *value, size_t *size_ret)
{
    (void)device;
    (void)param_name;
    (void)input_value_size;
    (void)input_value;
    (void)value_size;
    (void)value;
    (void)size_ret;
    STUB_ENTER();
    /* CL_DEVICE_MAX_NUM_SUB_GROUPS is 0 */
    cl_int err = stub_valid(k, STUB_KERNEL) ? CL_INVALID_OPERATION : CL_INVALID_KERNEL;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetKernelSubGroupInfoKHR(cl_kernel k, cl_device_id device,
                                                   cl_kernel_sub_group_info param_name, size_t input_value_size,
                                                   const void *input_value, size_t value_size, void *value,
                                                   size_t *size_ret)
{
    (void)device;
    (void)param_name;
    (void)input_value_size;
    (void)input_value;
    (void)value_size;
    (void)value;
    (void)size_ret;
    STUB_ENTER();
    cl_int err = stub_valid(k, STUB_KERNEL) ? CL_INVALID_OPERATION : CL_INVALID_KERNEL;
    stub_leave();
    return err;
}

static cl_int stub_launch(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *gws, const size_t *lws,
                          cl_command_type type, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err != CL_SUCCESS)
        return err;
    if (!stub_valid(k, STUB_KERNEL))
        return CL_INVALID_KERNEL;
    if (k->prog->ctx != q->ctx)
        return CL_INVALID_CONTEXT;
    for (cl_uint i = 0; i < k->decl->nargs; i++)
        if (!k->args[i].set)
            return CL_INVALID_KERNEL_ARGS;
    if (dim < 1 || dim > 3)
        return CL_INVALID_WORK_DIMENSION;
    if (!gws)
        return CL_INVALID_VALUE;
    if (lws) {
        size_t total = 1;
        for (cl_uint i = 0; i < dim; i++) {
            if (!lws[i] || lws[i] > STUB_MAX_WG)
                return CL_INVALID_WORK_ITEM_SIZE;
            total *= lws[i];
            if (total > STUB_MAX_WG)
                return CL_INVALID_WORK_GROUP_SIZE;
        }
    }
    cl_event e = stub_cmd_begin(q, type, STUB_CMD_PLAIN, nwait, wait);
    if (!e)
        return CL_OUT_OF_HOST_MEMORY;
    return stub_cmd_end(e, event, 0);
}

cl_int CL_API_CALL stub_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint work_dim,
                                               const size_t *global_work_offset, const size_t *global_work_size,
                                               const size_t *local_work_size, cl_uint nwait, const cl_event *wait,
                                               cl_event *event)
{
    (void)global_work_offset;
    STUB_ENTER();
    cl_int err = stub_launch(q, k, work_dim, global_work_size, local_work_size, CL_COMMAND_NDRANGE_KERNEL, nwait,
                             wait, event);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nwait, const cl_event *wait,
                                      cl_event *event)
{
    STUB_ENTER();
    size_t one = 1;
    cl_int err = stub_launch(q, k, 1, &one, &one, CL_COMMAND_TASK, nwait, wait, event);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK *user_func)(void *), void *args,
                                              size_t cb_args, cl_uint num_mem_objects, const cl_mem *mem_list,
                                              const void **args_mem_loc, cl_uint nwait, const cl_event *wait,
                                              cl_event *event)
{
    (void)user_func;
    (void)args;
    (void)cb_args;
    (void)num_mem_objects;
    (void)mem_list;
    (void)args_mem_loc;
    (void)event;
    STUB_ENTER();
    /* CL_DEVICE_EXECUTION_CAPABILITIES lacks CL_EXEC_NATIVE_KERNEL */
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = CL_INVALID_OPERATION;
    stub_leave();
    return err;
}
