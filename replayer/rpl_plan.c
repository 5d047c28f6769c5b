/* rpl_plan.c — a plan's hook in the session (rpl_opts.plan): before a call
 * executes, the plan's matcher may drop it. A dropped command is not
 * executed; when the application asked for its event, a marker with the
 * command's wait list is enqueued on its queue in its place and bound to
 * the recorded event, so that every later use of the event (wait lists,
 * clWaitForEvents, queries, release) still works. */
#include "replayer/rpl_int.h"

#include <string.h>

/* The functions a plan may drop: each ends with (num_events_in_wait_list,
 * event_wait_list, event) and has its queue first. */
static int rpl_plan_droppable(unsigned fn)
{
    switch (fn) {
    case RPL_FN_clEnqueueNDRangeKernel: case RPL_FN_clEnqueueTask:
    case RPL_FN_clEnqueueWriteBuffer: case RPL_FN_clEnqueueWriteBufferRect: case RPL_FN_clEnqueueWriteImage:
    case RPL_FN_clEnqueueFillBuffer: case RPL_FN_clEnqueueFillImage:
    case RPL_FN_clEnqueueCopyBuffer: case RPL_FN_clEnqueueCopyBufferRect: case RPL_FN_clEnqueueCopyImage:
    case RPL_FN_clEnqueueCopyImageToBuffer: case RPL_FN_clEnqueueCopyBufferToImage:
        return 1;
    default:
        return 0;
    }
}

/* Executes a dropped command: nothing, or the marker for its event. */
static int rpl_plan_drop(rpl_session *s, const tf_call *c, unsigned fn, int measure)
{
    rpl_cx x;
    memset(&x, 0, sizeof x);
    x.s = s;
    x.c = c;
    x.fn = fn;
    x.api = &s->api;
    x.no_verify = 1;
    const tf_sig *sig = c->sig;
    unsigned np = sig->nparams;
    if (!rpl_plan_droppable(fn) || np < 4 || strcmp(sig->params[np - 1].name, "event") ||
        strcmp(sig->params[np - 2].name, "event_wait_list") || strcmp(sig->params[np - 3].name, "num_events_in_wait_list"))
        return rpl_call_error(&x, RPL_ERR_ARG, "the plan drops a call that cannot be dropped");
    s->sum.plan_dropped++;
    if (!rpl_in_present(&x, np - 1))   /* no event asked for: nothing to stand in for */
        return RPL_OK;
    cl_command_queue q = NULL;
    cl_event *list = NULL, ev = NULL;
    uint64_t n = 0;
    int st = rpl_in_handle(&x, 0, (void **)&q);
    if (st >= 0)
        st = rpl_in_u64(&x, np - 3, &n);
    if (st >= 0)
        st = rpl_in_array(&x, np - 2, RPL_EL_HANDLE, sizeof *list, 0, (void **)&list);
    if (st >= 0)
        st = rpl_in_count(&x, np - 2, n);
    if (st >= 0)
        st = rpl_need(&x, RPL_FN_clEnqueueMarkerWithWaitList);
    if (st < 0)
        goto out;
    int64_t t0 = rpl_clock_ns();
    cl_int ret = s->api.clEnqueueMarkerWithWaitList(q, (cl_uint)n, n ? list : NULL, &ev);
    x.host_ns = rpl_clock_ns() - t0;
    if (ret != CL_SUCCESS) {
        st = rpl_call_error(&x, RPL_ERR_CL, "the marker in place of the command the plan dropped failed (error %d)",
                            (int)ret);
        goto out;
    }
    if (s->nuev)   /* the marker's event waits for what the command's would have */
        st = rpl_uev_after(&x);
    uint64_t id = 0;
    if (st < 0) {
        if (s->api.clReleaseEvent)
            s->api.clReleaseEvent(ev);
    } else if (c->outs && tf_value_u64(&c->outs[np - 1], &id) && id)
        st = rpl_out_handle(&x, np - 1, ev, RPL_OBJ_EVENT);
    else if (s->api.clReleaseEvent)   /* no recorded event to bind it to */
        s->api.clReleaseEvent(ev);
    s->sum.plan_markers++;
    if (measure) {
        s->sum.exec_ns += x.host_ns;
        s->iter_exec += x.host_ns;
    }
out:
    rpl_scratch_free(&x);
    return st;
}

int rpl_plan_call(rpl_session *s, const tf_call *c, unsigned fn, int measure, int *dropped)
{
    *dropped = 0;
    if (!s->o.plan || !s->o.plan->on_item)
        return RPL_OK;
    tf_item it;
    memset(&it, 0, sizeof it);
    it.type = TF_ITEM_CALL;
    it.u.call = *c;
    int v = s->o.plan->on_item(s->o.plan->user, &it);
    if (v < 0)
        return rpl_set_error(s, RPL_ERR_NOMEM, "call #%llu %s: plan: out of memory", (unsigned long long)c->seq,
                             c->sig->name);
    if (v != RPL_PLAN_DROP)
        return RPL_OK;
    *dropped = 1;
    return rpl_plan_drop(s, c, fn, measure);
}

int rpl_plan_data(rpl_session *s, const tf_data *d)
{
    if (!s->o.plan || !s->o.plan->on_item)
        return RPL_OK;
    tf_item it;
    memset(&it, 0, sizeof it);
    it.type = TF_ITEM_DATA;
    it.u.data = *d;
    if (s->o.plan->on_item(s->o.plan->user, &it) < 0)
        return rpl_set_error(s, RPL_ERR_NOMEM, "call #%llu: plan: out of memory", (unsigned long long)d->seq);
    return RPL_OK;
}

void rpl_plan_rewind(rpl_session *s)
{
    if (s->o.plan && s->o.plan->on_rewind)
        s->o.plan->on_rewind(s->o.plan->user);
}
