/* stub_event.c — events, commands and synchronization. A command's work is
 * done when it is enqueued; its event is CL_COMPLETE at once unless it
 * waits for an incomplete event (a user event not set yet, or a command
 * that waits for one): it then stays CL_SUBMITTED and completes, or fails
 * with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, when what it waits for
 * does. In-order queues chain every command to the previous one; in
 * out-of-order queues only barriers do, and markers and barriers without a
 * wait list wait for every incomplete command of the queue. */
#include "tests/stub-icd/stub_int.h"

#include <stdlib.h>

void stub_event_retain(cl_event e)
{
    e->h.refs++;
}

void stub_event_release(cl_event e)
{
    if (--e->h.refs)
        return;
    struct stub_cb *cb = e->callbacks;
    while (cb) {   /* never due: the event was released before it got there */
        struct stub_cb *next = cb->next;
        free(cb);
        cb = next;
    }
    for (cl_uint i = 0; i < e->ndependents; i++)
        stub_event_release(e->dependents[i]);
    free(e->dependents);
    cl_context ctx = e->ctx;
    cl_command_queue q = e->q;
    e->h.kind = 0;
    free(e);
    if (q)
        stub_queue_release(q);
    stub_context_release(ctx);
}

static cl_event stub_event_new(cl_context ctx, cl_command_queue q, cl_command_type type)
{
    cl_event e = stub_obj_new(sizeof *e, STUB_EVENT);
    if (!e)
        return NULL;
    e->ctx = ctx;
    e->q = q;
    e->type = type;
    e->status = CL_SUBMITTED;
    stub_context_retain(ctx);
    if (q)
        q->h.refs++;
    return e;
}

/* e waits for w (w incomplete). */
static int stub_event_depend(cl_event e, cl_event w)
{
    if (w->ndependents == w->capdependents) {
        cl_uint cap = w->capdependents ? 2 * w->capdependents : 4;
        cl_event *d = realloc(w->dependents, cap * sizeof *d);
        if (!d)
            return -1;
        w->dependents = d;
        w->capdependents = cap;
    }
    w->dependents[w->ndependents++] = e;
    stub_event_retain(e);
    e->waiting++;
    return 0;
}

/* Moves e to a final status (CL_COMPLETE or an error), runs what that makes due. */
static void stub_event_finish(cl_event e, cl_int status)
{
    if (e->status <= CL_COMPLETE)
        return;
    stub_event_retain(e);
    e->status = status;
    if (!e->t_start)
        e->t_start = stub_now(100);
    e->t_end = stub_now(1000);
    for (struct stub_cb *cb = e->callbacks, *next; cb; cb = next) {
        next = cb->next;
        cb->obj = e;
        cb->status = status < 0 ? status : cb->type;
        stub_event_retain(e);
        stub_defer(cb);
    }
    e->callbacks = NULL;
    cl_command_queue q = e->q;
    if (q && q->last == e)
        q->last = NULL;
    if (e->in_pending) {
        if (e->qprev)
            e->qprev->qnext = e->qnext;
        else
            q->pending = e->qnext;
        if (e->qnext)
            e->qnext->qprev = e->qprev;
        e->qnext = e->qprev = NULL;
        e->in_pending = 0;
        stub_event_release(e);
    }
    cl_event *deps = e->dependents;
    cl_uint n = e->ndependents;
    e->dependents = NULL;
    e->ndependents = e->capdependents = 0;
    for (cl_uint i = 0; i < n; i++) {
        cl_event d = deps[i];
        if (status < 0)
            stub_event_finish(d, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        else if (d->waiting && --d->waiting == 0)
            stub_event_finish(d, CL_COMPLETE);
        stub_event_release(d);
    }
    free(deps);
    stub_broadcast();
    stub_event_release(e);
}

cl_int stub_check_wait_list(cl_context ctx, cl_uint n, const cl_event *list)
{
    if ((n && !list) || (!n && list))
        return CL_INVALID_EVENT_WAIT_LIST;
    for (cl_uint i = 0; i < n; i++) {
        if (!stub_valid(list[i], STUB_EVENT))
            return CL_INVALID_EVENT_WAIT_LIST;
        if (list[i]->ctx != ctx)
            return CL_INVALID_CONTEXT;
    }
    return CL_SUCCESS;
}

cl_int stub_check_enqueue(cl_command_queue q, cl_uint nwait, const cl_event *wait)
{
    if (!stub_valid(q, STUB_QUEUE))
        return CL_INVALID_COMMAND_QUEUE;
    return stub_check_wait_list(q->ctx, nwait, wait);
}

cl_event stub_cmd_begin(cl_command_queue q, cl_command_type type, int how, cl_uint nwait,
                        const cl_event *wait)
{
    cl_event e = stub_event_new(q->ctx, q, type);
    if (!e)
        return NULL;
    e->profiled = (q->props & CL_QUEUE_PROFILING_ENABLE) != 0;
    e->t_queued = stub_now(100);
    e->t_submit = stub_now(100);
    int failed = 0, oom = 0;
    for (cl_uint i = 0; i < nwait; i++) {
        if (wait[i]->status < 0)
            failed = 1;
        else if (wait[i]->status > CL_COMPLETE)
            oom |= stub_event_depend(e, wait[i]);
    }
    if (q->last)
        oom |= stub_event_depend(e, q->last);
    if (how != STUB_CMD_PLAIN && nwait == 0)
        for (cl_event p = q->pending; p; p = p->qnext)
            if (p != q->last)
                oom |= stub_event_depend(e, p);
    if (failed || oom) {
        stub_event_finish(e, failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_OUT_OF_HOST_MEMORY);
        return e;
    }
    if (!e->waiting) {
        e->t_start = stub_now(100);
        e->t_end = stub_now(1000);
        e->status = CL_COMPLETE;
        return e;
    }
    e->in_pending = 1;
    stub_event_retain(e);
    e->qnext = q->pending;
    if (q->pending)
        q->pending->qprev = e;
    q->pending = e;
    if (!(q->props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) || how == STUB_CMD_BARRIER)
        q->last = e;
    return e;
}

cl_int stub_cmd_end(cl_event e, cl_event *event_ret, int blocking)
{
    cl_int err = CL_SUCCESS;
    if (blocking) {
        while (e->status > CL_COMPLETE)
            stub_wait();
        if (e->status < 0)
            err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    if (event_ret)
        *event_ret = e;
    else
        stub_event_release(e);
    return err;
}

cl_int stub_cmd(cl_command_queue q, cl_command_type type, cl_uint nwait, const cl_event *wait, cl_event *event,
                int blocking)
{
    cl_event e = stub_cmd_begin(q, type, STUB_CMD_PLAIN, nwait, wait);
    if (!e)
        return CL_OUT_OF_HOST_MEMORY;
    return stub_cmd_end(e, event, blocking);
}

/* ------------------------------------------------------------ entry points */
cl_int CL_API_CALL stub_clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    if (!num_events || !event_list) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    for (cl_uint i = 0; i < num_events; i++) {
        if (!stub_valid(event_list[i], STUB_EVENT)) {
            err = CL_INVALID_EVENT;
            goto out;
        }
        if (event_list[i]->ctx != event_list[0]->ctx) {
            err = CL_INVALID_CONTEXT;
            goto out;
        }
    }
    for (cl_uint i = 0; i < num_events; i++) {
        while (event_list[i]->status > CL_COMPLETE)
            stub_wait();
        if (event_list[i]->status < 0)
            err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetEventInfo(cl_event e, cl_event_info param_name, size_t value_size,
                                       void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_EVENT;
    if (!stub_valid(e, STUB_EVENT))
        goto out;
    switch (param_name) {
    case CL_EVENT_COMMAND_QUEUE:
        err = stub_info(&e->q, sizeof e->q, value_size, value, size_ret);
        break;
    case CL_EVENT_CONTEXT:
        err = stub_info(&e->ctx, sizeof e->ctx, value_size, value, size_ret);
        break;
    case CL_EVENT_COMMAND_TYPE:
        err = stub_info(&e->type, sizeof e->type, value_size, value, size_ret);
        break;
    case CL_EVENT_COMMAND_EXECUTION_STATUS:
        err = stub_info(&e->status, sizeof e->status, value_size, value, size_ret);
        break;
    case CL_EVENT_REFERENCE_COUNT:
        err = stub_info(&e->h.refs, sizeof e->h.refs, value_size, value, size_ret);
        break;
    default:
        err = CL_INVALID_VALUE;
    }
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clRetainEvent(cl_event e)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_EVENT;
    if (stub_valid(e, STUB_EVENT)) {
        stub_event_retain(e);
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clReleaseEvent(cl_event e)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_EVENT;
    if (stub_valid(e, STUB_EVENT)) {
        stub_event_release(e);
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetEventProfilingInfo(cl_event e, cl_profiling_info param_name,
                                                size_t value_size, void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_EVENT;
    cl_ulong t;
    if (!stub_valid(e, STUB_EVENT))
        goto out;
    err = CL_PROFILING_INFO_NOT_AVAILABLE;
    if (!e->q || !e->profiled || e->status != CL_COMPLETE)
        goto out;
    switch (param_name) {
    case CL_PROFILING_COMMAND_QUEUED:
        t = e->t_queued;
        break;
    case CL_PROFILING_COMMAND_SUBMIT:
        t = e->t_submit;
        break;
    case CL_PROFILING_COMMAND_START:
        t = e->t_start;
        break;
    case CL_PROFILING_COMMAND_END: case CL_PROFILING_COMMAND_COMPLETE:
        t = e->t_end;
        break;
    default:
        err = CL_INVALID_VALUE;
        goto out;
    }
    err = stub_info(&t, sizeof t, value_size, value, size_ret);
out:
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clFlush(cl_command_queue q)
{
    STUB_ENTER();
    cl_int err = stub_valid(q, STUB_QUEUE) ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clFinish(cl_command_queue q)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_COMMAND_QUEUE;
    if (stub_valid(q, STUB_QUEUE)) {
        while (q->pending)
            stub_wait();
        err = CL_SUCCESS;
    }
    stub_leave();
    return err;
}

cl_event CL_API_CALL stub_clCreateUserEvent(cl_context context, cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_CONTEXT;
    cl_event e = NULL;
    if (stub_valid(context, STUB_CONTEXT)) {
        e = stub_event_new(context, NULL, CL_COMMAND_USER);
        err = e ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    }
    stub_set_err(errcode_ret, err);
    stub_leave();
    return e;
}

cl_int CL_API_CALL stub_clSetUserEventStatus(cl_event e, cl_int execution_status)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    if (!stub_valid(e, STUB_EVENT) || e->type != CL_COMMAND_USER || e->q)
        err = CL_INVALID_EVENT;
    else if (execution_status > CL_COMPLETE)
        err = CL_INVALID_VALUE;
    else if (e->status <= CL_COMPLETE)
        err = CL_INVALID_OPERATION;
    else
        stub_event_finish(e, execution_status);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clSetEventCallback(cl_event e, cl_int type,
                                           void(CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *),
                                           void *user_data)
{
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    struct stub_cb *cb;
    if (!stub_valid(e, STUB_EVENT))
        err = CL_INVALID_EVENT;
    else if (!pfn_notify || (type != CL_SUBMITTED && type != CL_RUNNING && type != CL_COMPLETE))
        err = CL_INVALID_VALUE;
    else if (!(cb = calloc(1, sizeof *cb)))
        err = CL_OUT_OF_HOST_MEMORY;
    else {
        cb->kind = STUB_CB_EVENT;
        cb->fn = (void (*)(void))pfn_notify;
        cb->user = user_data;
        cb->type = type;
        if (e->status <= type) {   /* reached already: call it now */
            cb->obj = e;
            cb->status = e->status < 0 ? e->status : type;
            stub_event_retain(e);
            stub_defer(cb);
        } else {
            cb->next = e->callbacks;
            e->callbacks = cb;
        }
    }
    stub_leave();
    return err;
}

static cl_int stub_sync_cmd(cl_command_queue q, cl_command_type type, int how, cl_uint n,
                            const cl_event *list, cl_event *event)
{
    cl_int err = stub_check_enqueue(q, n, list);
    if (err != CL_SUCCESS)
        return err;
    cl_event e = stub_cmd_begin(q, type, how, n, list);
    if (!e)
        return CL_OUT_OF_HOST_MEMORY;
    return stub_cmd_end(e, event, 0);
}

cl_int CL_API_CALL stub_clEnqueueMarker(cl_command_queue q, cl_event *event)
{
    STUB_ENTER();
    cl_int err = event ? stub_sync_cmd(q, CL_COMMAND_MARKER, STUB_CMD_MARKER, 0, NULL, event)
                       : CL_INVALID_VALUE;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueWaitForEvents(cl_command_queue q, cl_uint num_events,
                                               const cl_event *event_list)
{
    STUB_ENTER();
    cl_int err = num_events && event_list
                     ? stub_sync_cmd(q, CL_COMMAND_BARRIER, STUB_CMD_BARRIER, num_events, event_list, NULL)
                     : CL_INVALID_VALUE;
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueBarrier(cl_command_queue q)
{
    STUB_ENTER();
    cl_int err = stub_sync_cmd(q, CL_COMMAND_BARRIER, STUB_CMD_BARRIER, 0, NULL, NULL);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint num_events,
                                                    const cl_event *event_wait_list, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_sync_cmd(q, CL_COMMAND_MARKER, STUB_CMD_MARKER, num_events, event_wait_list, event);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint num_events,
                                                     const cl_event *event_wait_list, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_sync_cmd(q, CL_COMMAND_BARRIER, STUB_CMD_BARRIER, num_events, event_wait_list, event);
    stub_leave();
    return err;
}
