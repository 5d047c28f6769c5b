/* rpl_hooks_queue.c — replay hooks for devices, contexts, queues and
 * synchronization: remapped devices asked for by type ALL, profiling for
 * --timing, queue order remembered, completion points for read-backs.
 * (Listed with `replay` in recorder/api.overlay.) */
#include "replayer/rpl_int.h"

#include <string.h>

int rpl_pre_clGetDeviceIDs(rpl_cx *x_, cl_platform_id *platform, cl_device_type *device_type, cl_uint *num_entries,
                           cl_device_id **devices, cl_uint **num_devices)
{
    (void)platform;
    (void)num_entries;
    (void)devices;
    (void)num_devices;
    if (rpl_devmap_remapped(x_->s))
        *device_type = CL_DEVICE_TYPE_ALL;
    return 0;
}

int rpl_pre_clCreateContextFromType(rpl_cx *x_, const cl_context_properties **properties, cl_device_type *device_type,
                                    void (**pfn_notify)(const char *, const void *, size_t, void *), void **user_data,
                                    cl_int **errcode_ret)
{
    (void)pfn_notify;
    (void)user_data;
    (void)errcode_ret;
    if (rpl_devmap_remapped(x_->s))
        *device_type = CL_DEVICE_TYPE_ALL;
    /* no platform property: the platform the context got when recorded
     * (post.platform; the loader's default there, or `clrr record
     * --device`'s), not this loader's default */
    const tf_value *pv = x_->c->post ? tf_map_get(x_->c->post, "platform") : NULL;
    uint64_t pid = 0;
    size_t n = 0;
    int has = 0;
    for (const cl_context_properties *p = *properties; p && p[n] && n < 64; n += 2)
        has |= p[n] == CL_CONTEXT_PLATFORM;
    rpl_obj *o = !has && pv && tf_value_u64(pv, &pid) && pid ? rpl_obj_find(x_->s, pid) : NULL;
    if (o && o->live) {
        cl_context_properties *np = rpl_scratch(x_, (n + 3) * sizeof *np);
        if (!np)
            return RPL_ERR_NOMEM;   /* the error is set */
        np[0] = CL_CONTEXT_PLATFORM;
        np[1] = (cl_context_properties)o->live;
        if (n)
            memcpy(np + 2, *properties, n * sizeof *np);
        *properties = np;
    }
    return 0;
}

static void rpl_queue_order(rpl_cx *x, int ok, cl_command_queue q, cl_command_queue_properties props,
                            cl_device_id dev)
{
    rpl_obj *o = ok ? rpl_obj_by_live(x->s, q) : NULL;
    if (o)
        o->in_order = !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    if (ok)
        rpl_devmap_note_queue(x->s, rpl_arg_id(x, 1), dev);
}

/* The queue counts in creation order for a plan's schedule; a failed
 * create counts too when it failed when recorded (the recording's count). */
static int rpl_queue_made(rpl_cx *x, int ok, cl_command_queue q)
{
    return ok || x->recorded_ok ? rpl_sched_queue_created(x->s, ok ? q : NULL) : RPL_OK;
}

int rpl_pre_clCreateCommandQueue(rpl_cx *x_, cl_context *context, cl_device_id *device,
                                 cl_command_queue_properties *properties, cl_int **errcode_ret)
{
    (void)context;
    (void)device;
    (void)errcode_ret;
    if (rpl_profiling(x_->s))
        *properties |= CL_QUEUE_PROFILING_ENABLE;
    return 0;
}

int rpl_post_clCreateCommandQueue(rpl_cx *x_, int ok, cl_command_queue *ret, cl_context context, cl_device_id device,
                                  cl_command_queue_properties properties, cl_int *errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    rpl_queue_order(x_, ok, *ret, properties, device);
    return rpl_queue_made(x_, ok, *ret);
}

/* Devices older than OpenCL 2.0 (Oclgrind) have no
 * clCreateCommandQueueWithProperties; the ICD loader may not even return
 * from it. A trace recorded elsewhere gets clCreateCommandQueue there. */
static int rpl_device_below_2(rpl_cx *x, cl_device_id dev)
{
    char v[64] = "";
    if (rpl_session_opts(x->s)->exact_calls || !x->api->clGetDeviceInfo
        || x->api->clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof v - 1, v, NULL) != CL_SUCCESS)
        return 0;
    return !strncmp(v, "OpenCL 1.", 9);
}

/* --timing: the property list gets CL_QUEUE_PROFILING_ENABLE (added when absent). */
int rpl_pre_clCreateCommandQueueWithProperties(rpl_cx *x_, cl_context *context, cl_device_id *device,
                                               const cl_queue_properties **properties, cl_int **errcode_ret)
{
    if (rpl_device_below_2(x_, *device) && x_->api->clCreateCommandQueue) {
        cl_command_queue_properties props = rpl_profiling(x_->s) ? CL_QUEUE_PROFILING_ENABLE : 0;
        for (size_t i = 0; *properties && (*properties)[i] && i < 254; i += 2)
            if ((*properties)[i] == CL_QUEUE_PROPERTIES)
                props |= (*properties)[i + 1];
        cl_int err = CL_SUCCESS;
        x_->ret_handle = x_->api->clCreateCommandQueue(*context, *device, props, &err);
        if (*errcode_ret)
            **errcode_ret = err;
        return 1;
    }
    if (!rpl_profiling(x_->s))
        return 0;
    const cl_queue_properties *p = *properties;
    size_t n = 0;
    while (p && p[n] && n < 254)
        n += 2;
    cl_queue_properties *q = rpl_scratch(x_, (n + 3) * sizeof *q);
    if (!q)
        return RPL_ERR_NOMEM;
    int found = 0;
    for (size_t i = 0; i < n; i += 2) {
        q[i] = p[i];
        q[i + 1] = p[i + 1];
        if (p[i] == CL_QUEUE_PROPERTIES) {
            q[i + 1] |= CL_QUEUE_PROFILING_ENABLE;
            found = 1;
        }
    }
    if (!found) {
        q[n++] = CL_QUEUE_PROPERTIES;
        q[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    q[n] = 0;
    *properties = q;
    return 0;
}

int rpl_post_clCreateCommandQueueWithProperties(rpl_cx *x_, int ok, cl_command_queue *ret, cl_context context,
                                                cl_device_id device, const cl_queue_properties *properties,
                                                cl_int *errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    cl_command_queue_properties props = 0;
    for (size_t i = 0; properties && properties[i] && i < 254; i += 2)
        if (properties[i] == CL_QUEUE_PROPERTIES)
            props = properties[i + 1];
    rpl_queue_order(x_, ok, *ret, props, device);
    return rpl_queue_made(x_, ok, *ret);
}

int rpl_post_clFinish(rpl_cx *x_, int ok, cl_int *ret, cl_command_queue command_queue)
{
    (void)ret;
    return ok ? rpl_verify_queue_done(x_->s, command_queue) : RPL_OK;
}

int rpl_post_clWaitForEvents(rpl_cx *x_, int ok, cl_int *ret, cl_uint num_events, const cl_event *event_list)
{
    (void)ret;
    return ok && event_list ? rpl_verify_events_done(x_->s, event_list, num_events) : RPL_OK;
}
