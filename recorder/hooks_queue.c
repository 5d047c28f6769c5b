/* hooks_queue.c — queues, events and synchronization.
 *
 * For device times the recorder creates every queue with
 * CL_QUEUE_PROFILING_ENABLE; these hooks keep that invisible: queue queries
 * answer what the application asked for, and profiling queries on events of
 * queues the application did not profile answer
 * CL_PROFILING_INFO_NOT_AVAILABLE, as they would without clrr. */
#include "recorder/rec_int.h"

#include <string.h>

int rec_pre_clCreateCommandQueue(rec_call *c, cl_context *a_context, cl_device_id *a_device,
                                 cl_command_queue_properties *a_properties, cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_device;
    (void)a_errcode_ret;
    c->hook_u = *a_properties;
    if (rec_g.ctl.device_timing)
        *a_properties |= CL_QUEUE_PROFILING_ENABLE;
    return 0;
}

void rec_post_clCreateCommandQueue(rec_call *c, int ok, cl_command_queue *ret, cl_context a_context,
                                   cl_device_id a_device, cl_command_queue_properties a_properties,
                                   cl_int *a_errcode_ret)
{
    (void)a_context;
    (void)a_device;
    (void)a_errcode_ret;
    if (!ok)
        return;
    rec_obj_info info = {.kind = REC_OBJ_QUEUE, .nprops = -1};
    info.app_profiling = !!(c->hook_u & CL_QUEUE_PROFILING_ENABLE);
    info.profiling = !!(a_properties & CL_QUEUE_PROFILING_ENABLE);
    rec_obj_set(*ret, &info);
}

int rec_pre_clCreateCommandQueueWithProperties(rec_call *c, cl_context *a_context,
                                               cl_device_id *a_device,
                                               const cl_queue_properties **a_properties,
                                               cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_device;
    (void)a_errcode_ret;
    const cl_queue_properties *app = *a_properties;
    c->hook_p = app;
    if (!rec_g.ctl.device_timing)
        return 0;
    /* copy the list, with CL_QUEUE_PROFILING_ENABLE added */
    size_t n = 0;
    int found = 0;
    while (app && app[n] && n + 4 < 60) {
        c->scratch[n] = app[n];
        c->scratch[n + 1] = app[n + 1];
        if (app[n] == CL_QUEUE_PROPERTIES) {
            found = 1;
            c->scratch[n + 1] |= CL_QUEUE_PROFILING_ENABLE;
        }
        n += 2;
    }
    if (app && app[n])
        return 0;   /* longer than we handle: leave it as it is */
    if (!found) {
        c->scratch[n++] = CL_QUEUE_PROPERTIES;
        c->scratch[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    c->scratch[n] = 0;
    *a_properties = (const cl_queue_properties *)c->scratch;
    return 0;
}

void rec_post_clCreateCommandQueueWithProperties(rec_call *c, int ok, cl_command_queue *ret,
                                                 cl_context a_context, cl_device_id a_device,
                                                 const cl_queue_properties *a_properties,
                                                 cl_int *a_errcode_ret)
{
    (void)a_context;
    (void)a_device;
    (void)a_errcode_ret;
    if (!ok)
        return;
    rec_obj_info info = {.kind = REC_OBJ_QUEUE, .nprops = 0};
    const cl_queue_properties *app = c->hook_p;
    for (int i = 0; app && app[i] && i + 2 < 16; i += 2) {
        info.props[i] = app[i];
        info.props[i + 1] = app[i + 1];
        info.nprops = i + 2;
        if (app[i] == CL_QUEUE_PROPERTIES)
            info.app_profiling = !!(app[i + 1] & CL_QUEUE_PROFILING_ENABLE);
    }
    if (app)
        info.props[info.nprops++] = 0;   /* the terminator is part of the answer */
    for (int i = 0; a_properties && a_properties[i]; i += 2)
        if (a_properties[i] == CL_QUEUE_PROPERTIES)
            info.profiling = !!(a_properties[i + 1] & CL_QUEUE_PROFILING_ENABLE);
    rec_obj_set(*ret, &info);
}

int rec_pre_clGetCommandQueueInfo(rec_call *c, cl_command_queue *a_command_queue,
                                  cl_command_queue_info *a_param_name, size_t *a_param_value_size,
                                  void **a_param_value, size_t **a_param_value_size_ret)
{
    rec_obj_info info;
    if (*a_param_name != CL_QUEUE_PROPERTIES_ARRAY || !rec_obj_get(*a_command_queue, &info)
        || info.kind != REC_OBJ_QUEUE || info.nprops < 0 || info.profiling == info.app_profiling)
        return 0;
    /* answer with the list the application gave, not the one we passed */
    size_t size = (size_t)info.nprops * sizeof(cl_queue_properties);
    if (*a_param_value && *a_param_value_size < size) {
        c->ret_override = CL_INVALID_VALUE;
        return 1;
    }
    if (*a_param_value)
        memcpy(*a_param_value, info.props, size);
    **a_param_value_size_ret = size;
    c->ret_override = CL_SUCCESS;
    return 1;
}

void rec_post_clGetCommandQueueInfo(rec_call *c, int ok, cl_int *ret, cl_command_queue a_command_queue,
                                    cl_command_queue_info a_param_name, size_t a_param_value_size,
                                    void *a_param_value, size_t *a_param_value_size_ret)
{
    (void)ret;
    rec_query_handles(c, ok, a_param_name, a_param_value, a_param_value_size_ret);
    rec_obj_info info;
    if (!ok || a_param_name != CL_QUEUE_PROPERTIES || !a_param_value
        || a_param_value_size < sizeof(cl_command_queue_properties)
        || !rec_obj_get(a_command_queue, &info) || info.kind != REC_OBJ_QUEUE)
        return;
    if (info.profiling && !info.app_profiling)
        *(cl_command_queue_properties *)a_param_value &= ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
}

int rec_pre_clGetEventProfilingInfo(rec_call *c, cl_event *a_event, cl_profiling_info *a_param_name,
                                    size_t *a_param_value_size, void **a_param_value,
                                    size_t **a_param_value_size_ret)
{
    (void)a_param_name;
    (void)a_param_value_size;
    (void)a_param_value;
    (void)a_param_value_size_ret;
    cl_command_queue q = NULL;
    rec_obj_info info;
    if (rec_next.clGetEventInfo(*a_event, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) != CL_SUCCESS
        || !q || !rec_obj_get(q, &info) || info.kind != REC_OBJ_QUEUE)
        return 0;
    if (info.profiling && !info.app_profiling) {
        c->ret_override = CL_PROFILING_INFO_NOT_AVAILABLE;
        return 1;
    }
    return 0;
}

void rec_post_clFinish(rec_call *c, int ok, cl_int *ret, cl_command_queue a_command_queue)
{
    (void)c;
    (void)ok;
    (void)ret;
    (void)a_command_queue;
    rec_events_poll(0);
}

void rec_post_clWaitForEvents(rec_call *c, int ok, cl_int *ret, cl_uint a_num_events,
                              const cl_event *a_event_list)
{
    (void)c;
    (void)ok;
    (void)ret;
    (void)a_num_events;
    (void)a_event_list;
    rec_events_poll(0);
}

/* clCreateUserEvent, plan mode: staged reads block inside the layer, which
 * a read waiting for a user event must not (live_stage.c). */
void rec_post_clCreateUserEvent(rec_call *c, int ok, cl_event *ret, cl_context a_context, cl_int *a_errcode_ret)
{
    (void)c;
    (void)ret;
    (void)a_context;
    (void)a_errcode_ret;
    if (ok)
        rec_host_user_event();
    if (ok)
        rec_stage_user_event();   /* plan mode, and record mode's staging (it checks) */
}
