/* stub_context.c — contexts, command queues (host queues, in-order or
 * out-of-order, with or without profiling) and samplers. */
#include "tests/stub-icd/stub_int.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ contexts */
void stub_context_retain(cl_context c)
{
    c->h.refs++;
}

void stub_context_release(cl_context c)
{
    if (--c->h.refs)
        return;
    struct stub_cb *cb = c->destructors;
    while (cb) {   /* registered last, called first */
        struct stub_cb *next = cb->next;
        cb->obj = c;
        stub_defer(cb);
        cb = next;
    }
    free(c->props);
    c->h.kind = 0;
    free(c);
}

static cl_context stub_context_new(const cl_context_properties *props, cl_int *err)
{
    int have_platform = 0, have_sync = 0;
    for (size_t i = 0; props && props[i]; i += 2) {
        switch (props[i]) {
        case CL_CONTEXT_PLATFORM:
            if (have_platform++) {
                *err = CL_INVALID_PROPERTY;
                return NULL;
            }
            if ((cl_platform_id)props[i + 1] != &stub_platform) {
                *err = CL_INVALID_PLATFORM;
                return NULL;
            }
            break;
        case CL_CONTEXT_INTEROP_USER_SYNC:
            if (have_sync++) {
                *err = CL_INVALID_PROPERTY;
                return NULL;
            }
            break;
        default:
            *err = CL_INVALID_PROPERTY;
            return NULL;
        }
    }
    int oom = 0;
    cl_context c = stub_obj_new(sizeof *c, STUB_CONTEXT);
    if (c)
        c->props = stub_props_dup(props, &c->nprops, &oom);
    if (!c || oom) {
        free(c);
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    *err = CL_SUCCESS;
    return c;
}

cl_context CL_API_CALL stub_clCreateContext(const cl_context_properties *properties, cl_uint num_devices,
                                            const cl_device_id *devices,
                                            void(CL_CALLBACK *pfn_notify)(const char *, const void *,
                                                                          size_t, void *),
                                            void *user_data, cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_context c = NULL;
    cl_int err = CL_SUCCESS;
    if (!devices || num_devices == 0 || (!pfn_notify && user_data)) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    for (cl_uint i = 0; i < num_devices; i++)
        if (devices[i] != &stub_device) {
            err = CL_INVALID_DEVICE;
            goto out;
        }
    c = stub_context_new(properties, &err);
out:
    stub_set_err(errcode_ret, err);
    stub_leave();
    return c;
}

cl_context CL_API_CALL stub_clCreateContextFromType(const cl_context_properties *properties,
                                                    cl_device_type device_type,
                                                    void(CL_CALLBACK *pfn_notify)(const char *,
                                                                                  const void *,
                                                                                  size_t, void *),
                                                    void *user_data, cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_context c = NULL;
    cl_int err = CL_SUCCESS;
    const cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU |
                                 CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM;
    if (!pfn_notify && user_data)
        err = CL_INVALID_VALUE;
    else if (device_type != CL_DEVICE_TYPE_ALL && (device_type & ~known))
        err = CL_INVALID_DEVICE_TYPE;
    else if (!(device_type & (CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU)))
        err = CL_DEVICE_NOT_FOUND;
    else
        c = stub_context_new(properties, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return c;
}

cl_int CL_API_CALL stub_clRetainContext(cl_context context)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_CONTEXT;
    if (stub_valid(context, STUB_CONTEXT)) {
        stub_context_retain(context);
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clReleaseContext(cl_context context)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_CONTEXT;
    if (stub_valid(context, STUB_CONTEXT)) {
        stub_context_release(context);
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetContextInfo(cl_context c, cl_context_info param_name, size_t value_size,
                                         void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_CONTEXT;
    cl_device_id dev = &stub_device;
    if (!stub_valid(c, STUB_CONTEXT))
        goto out;
    switch (param_name) {
    case CL_CONTEXT_REFERENCE_COUNT:
        err = stub_info(&c->h.refs, sizeof c->h.refs, value_size, value, size_ret);
        break;
    case CL_CONTEXT_NUM_DEVICES: {
        cl_uint n = 1;
        err = stub_info(&n, sizeof n, value_size, value, size_ret);
        break;
    }
    case CL_CONTEXT_DEVICES:
        err = stub_info(&dev, sizeof dev, value_size, value, size_ret);
        break;
    case CL_CONTEXT_PROPERTIES:
        err = stub_info(c->props, c->nprops * sizeof *c->props, value_size, value, size_ret);
        break;
    default:
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clSetContextDestructorCallback(cl_context c,
                                                       void(CL_CALLBACK *pfn_notify)(cl_context, void *),
                                                       void *user_data)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    struct stub_cb *cb;
    if (!stub_valid(c, STUB_CONTEXT))
        err = CL_INVALID_CONTEXT;
    else if (!pfn_notify)
        err = CL_INVALID_VALUE;
    else if (!(cb = calloc(1, sizeof *cb)))
        err = CL_OUT_OF_HOST_MEMORY;
    else {
        cb->kind = STUB_CB_CONTEXT;
        cb->fn = (void (*)(void))pfn_notify;
        cb->user = user_data;
        cb->next = c->destructors;
        c->destructors = cb;
    }
    stub_leave();
    return err;
}

/* ------------------------------------------------------------ queues */
void stub_queue_release(cl_command_queue q)
{
    if (--q->h.refs)
        return;
    cl_context ctx = q->ctx;
    free(q->props_array);
    q->h.kind = 0;
    free(q);
    stub_context_release(ctx);
}

static cl_command_queue stub_queue_new(cl_context ctx, cl_device_id dev, cl_command_queue_properties props,
                                       const cl_queue_properties *array, cl_int *err)
{
    const cl_command_queue_properties known = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                              CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_ON_DEVICE |
                                              CL_QUEUE_ON_DEVICE_DEFAULT;
    if (!stub_valid(ctx, STUB_CONTEXT)) {
        *err = CL_INVALID_CONTEXT;
        return NULL;
    }
    if (dev != &stub_device) {
        *err = CL_INVALID_DEVICE;
        return NULL;
    }
    if (props & ~known) {
        *err = CL_INVALID_VALUE;
        return NULL;
    }
    if (props & (CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT)) {
        *err = CL_INVALID_QUEUE_PROPERTIES;   /* no device-side enqueue */
        return NULL;
    }
    int oom = 0;
    cl_command_queue q = stub_obj_new(sizeof *q, STUB_QUEUE);
    if (q)
        q->props_array = stub_props_dup(array, &q->nprops_array, &oom);
    if (!q || oom) {
        free(q);
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    q->ctx = ctx;
    q->props = props;
    stub_context_retain(ctx);
    *err = CL_SUCCESS;
    return q;
}

cl_command_queue CL_API_CALL stub_clCreateCommandQueue(cl_context context, cl_device_id device,
                                                       cl_command_queue_properties properties,
                                                       cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err;
    cl_command_queue q = stub_queue_new(context, device, properties, NULL, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return q;
}

cl_command_queue CL_API_CALL stub_clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                                                     const cl_queue_properties *properties,
                                                                     cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    cl_command_queue q = NULL;
    cl_command_queue_properties props = 0;
    for (size_t i = 0; properties && properties[i]; i += 2) {
        if (properties[i] == CL_QUEUE_PROPERTIES)
            props = (cl_command_queue_properties)properties[i + 1];
        else if (properties[i] != CL_QUEUE_SIZE)
            err = CL_INVALID_VALUE;
    }
    if (err == CL_SUCCESS)
        q = stub_queue_new(context, device, props, properties, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return q;
}

cl_int CL_API_CALL stub_clRetainCommandQueue(cl_command_queue q)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_COMMAND_QUEUE;
    if (stub_valid(q, STUB_QUEUE)) {
        q->h.refs++;
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clReleaseCommandQueue(cl_command_queue q)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_COMMAND_QUEUE;
    if (stub_valid(q, STUB_QUEUE)) {
        stub_queue_release(q);
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info param_name,
                                              size_t value_size, void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_COMMAND_QUEUE;
    cl_device_id dev = &stub_device;
    cl_command_queue none = NULL;
    if (!stub_valid(q, STUB_QUEUE))
        goto out;
    switch (param_name) {
    case CL_QUEUE_CONTEXT:
        err = stub_info(&q->ctx, sizeof q->ctx, value_size, value, size_ret);
        break;
    case CL_QUEUE_DEVICE:
        err = stub_info(&dev, sizeof dev, value_size, value, size_ret);
        break;
    case CL_QUEUE_REFERENCE_COUNT:
        err = stub_info(&q->h.refs, sizeof q->h.refs, value_size, value, size_ret);
        break;
    case CL_QUEUE_PROPERTIES:
        err = stub_info(&q->props, sizeof q->props, value_size, value, size_ret);
        break;
    case CL_QUEUE_PROPERTIES_ARRAY:
        err = stub_info(q->props_array, q->nprops_array * sizeof *q->props_array, value_size, value,
                        size_ret);
        break;
    case CL_QUEUE_DEVICE_DEFAULT:
        err = stub_info(&none, sizeof none, value_size, value, size_ret);
        break;
    case CL_QUEUE_SIZE:   /* only for device queues */
        err = CL_INVALID_COMMAND_QUEUE;
        break;
    default:
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clSetCommandQueueProperty(cl_command_queue q, cl_command_queue_properties properties,
                                                  cl_bool enable, cl_command_queue_properties *old_properties)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    if (!stub_valid(q, STUB_QUEUE))
        err = CL_INVALID_COMMAND_QUEUE;
    else if (properties & ~(cl_command_queue_properties)(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                                         CL_QUEUE_PROFILING_ENABLE))
        err = CL_INVALID_VALUE;
    else {
        if (old_properties)
            *old_properties = q->props;
        q->props = enable ? q->props | properties : q->props & ~properties;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clSetDefaultDeviceCommandQueue(cl_context context, cl_device_id device,
                                                       cl_command_queue command_queue)
{
    (void)command_queue;
    STUB_ENTER();
    cl_int err = CL_INVALID_OPERATION;   /* no device-side queues */
    if (!stub_valid(context, STUB_CONTEXT))
        err = CL_INVALID_CONTEXT;
    else if (device != &stub_device)
        err = CL_INVALID_DEVICE;
    stub_leave();
    return err;
}

/* ------------------------------------------------------------ samplers */
static cl_sampler stub_sampler_new(cl_context ctx, cl_bool norm, cl_addressing_mode am, cl_filter_mode fm,
                                   const cl_sampler_properties *props, cl_int *err)
{
    if (!stub_valid(ctx, STUB_CONTEXT)) {
        *err = CL_INVALID_CONTEXT;
        return NULL;
    }
    if ((am < CL_ADDRESS_NONE || am > CL_ADDRESS_MIRRORED_REPEAT) ||
        (fm != CL_FILTER_NEAREST && fm != CL_FILTER_LINEAR) || (norm != CL_TRUE && norm != CL_FALSE)) {
        *err = CL_INVALID_VALUE;
        return NULL;
    }
    int oom = 0;
    cl_sampler s = stub_obj_new(sizeof *s, STUB_SAMPLER);
    if (s)
        s->props = stub_props_dup(props, &s->nprops, &oom);
    if (!s || oom) {
        free(s);
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    s->ctx = ctx;
    s->normalized = norm;
    s->addressing = am;
    s->filter = fm;
    stub_context_retain(ctx);
    *err = CL_SUCCESS;
    return s;
}

cl_sampler CL_API_CALL stub_clCreateSampler(cl_context context, cl_bool normalized_coords,
                                            cl_addressing_mode addressing_mode, cl_filter_mode filter_mode,
                                            cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err;
    cl_sampler s = stub_sampler_new(context, normalized_coords, addressing_mode, filter_mode, NULL, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return s;
}

cl_sampler CL_API_CALL stub_clCreateSamplerWithProperties(cl_context context,
                                                          const cl_sampler_properties *props,
                                                          cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    cl_sampler s = NULL;
    cl_bool norm = CL_TRUE;
    cl_addressing_mode am = CL_ADDRESS_CLAMP;
    cl_filter_mode fm = CL_FILTER_NEAREST;
    for (size_t i = 0; props && props[i]; i += 2) {
        switch (props[i]) {
        case CL_SAMPLER_NORMALIZED_COORDS:
            norm = (cl_bool)props[i + 1];
            break;
        case CL_SAMPLER_ADDRESSING_MODE:
            am = (cl_addressing_mode)props[i + 1];
            break;
        case CL_SAMPLER_FILTER_MODE:
            fm = (cl_filter_mode)props[i + 1];
            break;
        default:
            err = CL_INVALID_VALUE;
        }
    }
    if (err == CL_SUCCESS)
        s = stub_sampler_new(context, norm, am, fm, props, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return s;
}

cl_int CL_API_CALL stub_clRetainSampler(cl_sampler s)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_SAMPLER;
    if (stub_valid(s, STUB_SAMPLER)) {
        s->h.refs++;
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clReleaseSampler(cl_sampler s)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_SAMPLER;
    if (stub_valid(s, STUB_SAMPLER)) {
        err = CL_SUCCESS;
        if (--s->h.refs == 0) {
            cl_context ctx = s->ctx;
            free(s->props);
            s->h.kind = 0;
            free(s);
            stub_context_release(ctx);
        }
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetSamplerInfo(cl_sampler s, cl_sampler_info param_name, size_t value_size,
                                         void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_SAMPLER;
    if (!stub_valid(s, STUB_SAMPLER))
        goto out;
    switch (param_name) {
    case CL_SAMPLER_REFERENCE_COUNT:
        err = stub_info(&s->h.refs, sizeof s->h.refs, value_size, value, size_ret);
        break;
    case CL_SAMPLER_CONTEXT:
        err = stub_info(&s->ctx, sizeof s->ctx, value_size, value, size_ret);
        break;
    case CL_SAMPLER_NORMALIZED_COORDS:
        err = stub_info(&s->normalized, sizeof s->normalized, value_size, value, size_ret);
        break;
    case CL_SAMPLER_ADDRESSING_MODE:
        err = stub_info(&s->addressing, sizeof s->addressing, value_size, value, size_ret);
        break;
    case CL_SAMPLER_FILTER_MODE:
        err = stub_info(&s->filter, sizeof s->filter, value_size, value, size_ret);
        break;
    case CL_SAMPLER_PROPERTIES:
        err = stub_info(s->props, s->nprops * sizeof *s->props, value_size, value, size_ret);
        break;
    default:
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}
