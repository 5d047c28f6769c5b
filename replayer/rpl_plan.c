/* rpl_plan.c — a plan's hook in the session (rpl_opts.plan): before a call
 * executes, the plan's matcher may drop it. A dropped command is not
 * executed; when the application asked for its event, a marker with the
 * command's wait list is enqueued on its queue in its place and bound to
 * the recorded event, so that every later use of the event (wait lists,
 * clWaitForEvents, queries, release) still works. */
#include "replayer/rpl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Executes a dropped command: nothing, or the marker for its event. */
static int rpl_plan_drop(rpl_session *s, const tf_call *c, unsigned fn, int measure)
{
    rpl_cx x;
    rpl_cx_init(&x, s, c, fn, 0);
    /* what a plan may drop, and where its wait list is: the API description
     * (`drop` in recorder/api.overlay; the generator checks the queue comes
     * first and the wait list last) */
    const api_sem *a = rpl_gen_table[fn].sem;
    unsigned np = c->sig->nparams;
    if (!(a->flags & API_F_DROP) || np != a->nparams)
        return rpl_call_error(&x, RPL_ERR_ARG, "the plan drops a call that cannot be dropped");
    s->sum.plan_dropped++;
    if (!rpl_in_present(&x, (unsigned)a->event))   /* no event asked for: nothing to stand in for */
        return RPL_OK;
    cl_command_queue q = NULL;
    cl_event *list = NULL, ev = NULL;
    uint64_t n = 0;
    int st = rpl_in_handle(&x, (unsigned)a->queue, (void **)&q);
    if (st >= 0)
        st = rpl_in_u64(&x, (unsigned)a->nwait, &n);
    if (st >= 0)
        st = rpl_in_array(&x, (unsigned)a->wait, RPL_EL_HANDLE, sizeof *list, 0, (void **)&list);
    if (st >= 0)
        st = rpl_in_count(&x, (unsigned)a->wait, n);
    if (st >= 0)
        st = rpl_need(&x, RPL_FN_clEnqueueMarkerWithWaitList);
    if (st < 0)
        goto out;
    if ((st = rpl_sched_join(s, q)) < 0)
        goto out;
    int64_t t0 = rpl_clock_ns();
    cl_int ret = s->api.clEnqueueMarkerWithWaitList(q, (cl_uint)n, n ? list : NULL, &ev);
    x.host_ns = rpl_clock_ns() - t0;
    if (ret == CL_SUCCESS && (st = rpl_sched_joined(s, q)) < 0)
        goto out;
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
    } else if (c->outs && tf_value_u64(&c->outs[a->event], &id) && id)
        st = rpl_out_handle(&x, (unsigned)a->event, ev, RPL_OBJ_EVENT);
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

/* ------------------------------------------------------------ fusion */

void rpl_kargs_free(rpl_obj *o)
{
    if (!o->kargs)
        return;
    for (unsigned i = 0; i < RPL_MAX_KARGS; i++)
        free(o->kargs->a[i].value);
    free(o->kargs);
    o->kargs = NULL;
}

static int rpl_karg_copy(rpl_karg *d, size_t size, const void *value)
{
    uint8_t *v = NULL;
    if (value && size) {
        if (size > (1u << 16) || !(v = malloc(size)))
            return -1;
        memcpy(v, value, size);
    }
    free(d->value);
    *d = (rpl_karg){.size = size, .set = 1, .has_value = value != NULL, .value = v};
    return 0;
}

int rpl_kargs_note(rpl_session *s, rpl_obj *k, unsigned i, size_t size, const void *value)
{
    if (i >= RPL_MAX_KARGS)
        return RPL_OK;
    if (!k->kargs && !(k->kargs = calloc(1, sizeof *k->kargs)))
        return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
    if (rpl_karg_copy(&k->kargs->a[i], size, value))
        return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory (a kernel argument of %zu bytes)", size);
    if (i >= k->kargs->n)
        k->kargs->n = i + 1;
    return RPL_OK;
}

static void rpl_kargs_clear(rpl_kargs *a);

/* A launch held for fusion: its NDRange and its kernel's arguments then. */
struct rpl_held_launch {
    uint64_t seq;
    rpl_launch l;
    rpl_kargs args;
    cl_mem mems[RPL_MAX_KARGS];   /* retained while held: the application may release them */
    unsigned nmems;
    int k_retained;
};

/* Drops what a held launch retained and frees it. */
static void rpl_held_free(rpl_session *s, struct rpl_held_launch *h)
{
    for (unsigned i = 0; i < h->nmems; i++)
        if (s->api.clReleaseMemObject)
            s->api.clReleaseMemObject(h->mems[i]);
    if (h->k_retained && s->api.clReleaseKernel)
        s->api.clReleaseKernel(h->l.k);
    rpl_kargs_clear(&h->args);
    free(h);
}

/* A fused program built for one context. */
struct rpl_fused_build {
    uint32_t id;
    cl_context ctx;
    cl_program prog;
    cl_kernel k;
};

int rpl_launch_decode(rpl_cx *x, rpl_launch *h, cl_uint *nwait, const cl_event **wait)
{
    uint64_t u = 0;
    size_t *off = NULL, *gsz = NULL, *lsz = NULL;
    RPL_TRY(rpl_in_handle(x, 0, (void **)&h->q));
    RPL_TRY(rpl_in_handle(x, 1, (void **)&h->k));
    RPL_TRY(rpl_in_u64(x, 2, &u));
    if (u < 1 || u > 3)
        return rpl_call_error(x, RPL_ERR_INVALID, "work_dim %llu", (unsigned long long)u);
    h->dim = (cl_uint)u;
    RPL_TRY(rpl_in_array(x, 3, RPL_EL_VALUE, sizeof(size_t), 0, (void **)&off));
    RPL_TRY(rpl_in_count(x, 3, u));
    RPL_TRY(rpl_in_array(x, 4, RPL_EL_VALUE, sizeof(size_t), 0, (void **)&gsz));
    RPL_TRY(rpl_in_count(x, 4, u));
    RPL_TRY(rpl_in_array(x, 5, RPL_EL_VALUE, sizeof(size_t), 0, (void **)&lsz));
    RPL_TRY(rpl_in_count(x, 5, u));
    if (!gsz)
        return rpl_call_error(x, RPL_ERR_INVALID, "no global work size");
    for (unsigned d = 0; d < h->dim; d++) {
        h->off[d] = off ? off[d] : 0;
        h->gsz[d] = gsz[d];
        h->lsz[d] = lsz ? lsz[d] : 0;
    }
    h->has_off = off != NULL;
    h->has_lsz = lsz != NULL;
    h->kernel_id = rpl_arg_id(x, 1);
    uint64_t n = 0;
    RPL_TRY(rpl_in_u64(x, 6, &n));
    cl_event *list = NULL;
    RPL_TRY(rpl_in_array(x, 7, RPL_EL_HANDLE, sizeof *list, 0, (void **)&list));
    RPL_TRY(rpl_in_count(x, 7, n));
    *nwait = (cl_uint)n;
    *wait = n ? list : NULL;
    return RPL_OK;
}

static void rpl_kargs_clear(rpl_kargs *a)
{
    for (unsigned i = 0; i < RPL_MAX_KARGS; i++)
        free(a->a[i].value);
    memset(a, 0, sizeof *a);
}

static int rpl_kargs_dup(rpl_kargs *d, const rpl_kargs *src)
{
    memset(d, 0, sizeof *d);
    for (unsigned i = 0; src && i < src->n; i++)
        if (src->a[i].set && rpl_karg_copy(&d->a[i], src->a[i].size, src->a[i].has_value ? src->a[i].value : NULL))
            return -1;
    d->n = src ? src->n : 0;
    return 0;
}

/* Sets the arguments @p a on live kernel @p k. */
static cl_int rpl_kargs_apply(rpl_session *s, cl_kernel k, const rpl_kargs *a)
{
    for (unsigned i = 0; a && i < a->n; i++)
        if (a->a[i].set) {
            cl_int e = s->api.clSetKernelArg(k, i, a->a[i].size, a->a[i].has_value ? a->a[i].value : NULL);
            if (e != CL_SUCCESS)
                return e;
        }
    return CL_SUCCESS;
}

static void rpl_count_launch(rpl_session *s, int measure, int64_t ns)
{
    s->sum.calls++;
    s->sum.commands++;
    s->sum.kernels++;
    if (measure) {
        s->sum.exec_ns += ns;
        s->iter_exec += ns;
    }
}

/* Runs held launch @p h as recorded and frees it. */
static int rpl_plan_unhold(rpl_session *s, struct rpl_held_launch *h, int measure)
{
    int st = RPL_OK;
    /* the held arguments, the launch, then the arguments as the
     * application set them since (clSetKernelArg calls in between) */
    rpl_obj *ko = rpl_obj_find(s, h->l.kernel_id);
    int64_t t0 = rpl_clock_ns();
    cl_int e = rpl_kargs_apply(s, h->l.k, &h->args);
    if (e == CL_SUCCESS && rpl_sched_join(s, h->l.q) < 0)
        e = CL_OUT_OF_RESOURCES;
    if (e == CL_SUCCESS)
        e = s->api.clEnqueueNDRangeKernel(h->l.q, h->l.k, h->l.dim, h->l.has_off ? h->l.off : NULL, h->l.gsz,
                                          h->l.has_lsz ? h->l.lsz : NULL, 0, NULL, NULL);
    if (e == CL_SUCCESS && rpl_sched_joined(s, h->l.q) < 0)
        e = CL_OUT_OF_RESOURCES;
    int64_t ns = rpl_clock_ns() - t0;
    if (e == CL_SUCCESS && ko && ko->kargs)
        e = rpl_kargs_apply(s, h->l.k, ko->kargs);
    if (e != CL_SUCCESS)
        st = rpl_set_error(s, RPL_ERR_CL, "call #%llu clEnqueueNDRangeKernel (held for fusion, run as recorded): "
                           "error %d", (unsigned long long)h->seq, (int)e);
    else {
        rpl_count_launch(s, measure, ns);
        s->sum.plan_unheld++;
    }
    rpl_held_free(s, h);
    return st;
}

int rpl_plan_flush(rpl_session *s, int measure)
{
    int st = RPL_OK;
    for (unsigned i = 0; i < s->nfuse_held; i++) {
        int r = st >= 0 ? rpl_plan_unhold(s, s->fuse_held[i], measure) : (rpl_held_free(s, s->fuse_held[i]), RPL_OK);
        if (st >= 0)
            st = r;
        s->fuse_held[i] = NULL;
    }
    s->nfuse_held = 0;
    return st;
}

/* Holds launch @p c; 0 when it cannot be held (it then runs now). */
static int rpl_plan_hold(rpl_session *s, const tf_call *c, int *held)
{
    rpl_cx x;
    rpl_cx_init(&x, s, c, RPL_FN_clEnqueueNDRangeKernel, 1);
    *held = 0;
    struct rpl_held_launch *h = calloc(1, sizeof *h);
    if (!h)
        return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
    cl_uint nwait = 0;
    const cl_event *wait = NULL;
    int st = rpl_launch_decode(&x, &h->l, &nwait, &wait);
    rpl_obj *ko = st >= 0 ? rpl_obj_find(s, h->l.kernel_id) : NULL;
    /* only a launch nothing else can observe: no wait list, no event */
    if (st >= 0 && s->nfuse_held < RPL_MAX_CHAIN && !nwait && !rpl_in_present(&x, 8) && ko && ko->kargs) {
        if (rpl_kargs_dup(&h->args, ko->kargs)) {
            st = rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
        } else {
            /* the kernel and its memory stay alive while held, as an
             * enqueued command keeps them */
            h->k_retained = s->api.clRetainKernel(h->l.k) == CL_SUCCESS;
            for (unsigned i = 0; i < ko->kargs->n && i < RPL_MAX_KARGS; i++) {
                rpl_obj *m = ko->args[i] ? rpl_obj_find(s, ko->args[i]) : NULL;
                if (m && m->live && s->api.clRetainMemObject((cl_mem)m->live) == CL_SUCCESS)
                    h->mems[h->nmems++] = (cl_mem)m->live;
            }
            h->seq = c->seq;
            s->fuse_held[s->nfuse_held++] = h;
            h = NULL;
            *held = 1;
        }
    }
    rpl_scratch_free(&x);
    if (h) {
        rpl_kargs_clear(&h->args);
        free(h);
    }
    return st;
}

static struct rpl_fused_build *rpl_fused_get(rpl_session *s, const rpl_fused_kernel *f, cl_command_queue q, char *err,
                                              size_t cap)
{
    cl_context ctx = NULL;
    cl_device_id dev = NULL;
    if (s->api.clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS ||
        s->api.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS) {
        snprintf(err, cap, "the queue's context or device cannot be queried");
        return NULL;
    }
    for (size_t i = 0; i < s->nfbuilds; i++)
        if (s->fbuilds[i].id == f->id && s->fbuilds[i].ctx == ctx) {
            if (!s->fbuilds[i].k)
                snprintf(err, cap, "it failed to build before");
            return s->fbuilds[i].k ? &s->fbuilds[i] : NULL;
        }
    struct rpl_fused_build *b = realloc(s->fbuilds, (s->nfbuilds + 1) * sizeof *b);
    if (!b) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    s->fbuilds = b;
    /* a failure is remembered (an entry without a kernel) and not retried */
    s->fbuilds[s->nfbuilds] = (struct rpl_fused_build){f->id, ctx, NULL, NULL};
    cl_program prog = NULL;
    cl_kernel k = NULL;
    if (rpl_build_kernel(&s->api, ctx, dev, f->source, f->options, f->name, &prog, &k, err, cap) < 0) {
        s->nfbuilds++;
        return NULL;
    }
    b = &s->fbuilds[s->nfbuilds++];
    *b = (struct rpl_fused_build){f->id, ctx, prog, k};
    return b;
}

cl_kernel rpl_coarse_kernel(rpl_session *s, cl_command_queue q, const rpl_coarse *co, const rpl_obj *ko, char *err,
                            size_t cap)
{
    rpl_fused_kernel f;
    memset(&f, 0, sizeof f);
    f.id = co->id;
    f.name = co->name;
    f.source = co->source;
    f.options = co->options;
    f.launches = 1;
    struct rpl_fused_build *b = rpl_fused_get(s, &f, q, err, cap);
    if (!b)
        return NULL;
    if (!ko || !ko->kargs) {
        snprintf(err, cap, "the launch's arguments are not known");
        return NULL;
    }
    cl_int e = rpl_kargs_apply(s, b->k, ko->kargs);
    if (e != CL_SUCCESS) {
        snprintf(err, cap, "clSetKernelArg failed (error %d)", (int)e);
        return NULL;
    }
    return b->k;
}

/* Runs the fused kernel in place of consumer launch @p c, with the held one.
 * *done 0: the fused kernel cannot be built here (the held launch ran as
 * recorded, and so must c; the first reason is kept for the summary). */
static int rpl_plan_fused(rpl_session *s, const tf_call *c, const rpl_fused_kernel *f, int measure, int *done)
{
    *done = 1;
    rpl_cx x;
    rpl_cx_init(&x, s, c, RPL_FN_clEnqueueNDRangeKernel, 0);
    rpl_launch cl;
    memset(&cl, 0, sizeof cl);
    cl_uint nwait = 0;
    const cl_event *wait = NULL;
    char err[512];
    int st = rpl_launch_decode(&x, &cl, &nwait, &wait);
    rpl_obj *ko = st >= 0 ? rpl_obj_find(s, cl.kernel_id) : NULL;
    struct rpl_fused_build *b = NULL;
    if (st >= 0 && !(b = rpl_fused_get(s, f, cl.q, err, sizeof err))) {
        if (!s->sum.plan_unbuilt[0])
            snprintf(s->sum.plan_unbuilt, sizeof s->sum.plan_unbuilt, "%.64s: %.250s", f->name, err);
        rpl_scratch_free(&x);
        *done = 0;
        return rpl_plan_flush(s, measure);
    }
    cl_int e = CL_SUCCESS;
    for (unsigned i = 0; st >= 0 && i < f->nparams && e == CL_SUCCESS; i++) {
        unsigned k = f->params[i][0], j = f->params[i][1];
        const rpl_kargs *from = k < s->nfuse_held ? &s->fuse_held[k]->args : k == s->nfuse_held && ko ? ko->kargs : NULL;
        if (!from || j >= from->n || !from->a[j].set)
            st = rpl_call_error(&x, RPL_ERR_ARG, "the plan's fused kernel %s: parameter %u comes from argument %u "
                                "of launch %u of %u, which was not set", f->name, i, j, k + 1, s->nfuse_held + 1);
        else
            e = s->api.clSetKernelArg(b->k, i, from->a[j].size, from->a[j].has_value ? from->a[j].value : NULL);
    }
    if (st >= 0 && e != CL_SUCCESS)
        st = rpl_call_error(&x, RPL_ERR_CL, "the plan's fused kernel %s: clSetKernelArg failed (error %d)",
                            f->name, (int)e);
    cl_event ev = NULL;
    if (st >= 0) {
        /* an event: the application's, or our own for --timing */
        int app_ev = rpl_in_present(&x, 8), own_ev = !app_ev && s->o.timing && !s->o.exact_calls;
        int64_t t0 = rpl_clock_ns();
        e = rpl_sched_join(s, cl.q) < 0 ? CL_OUT_OF_RESOURCES : CL_SUCCESS;
        if (e == CL_SUCCESS)
            e = s->api.clEnqueueNDRangeKernel(cl.q, b->k, cl.dim, cl.has_off ? cl.off : NULL, cl.gsz,
                                              cl.has_lsz ? cl.lsz : NULL, nwait, wait, app_ev || own_ev ? &ev : NULL);
        if (e == CL_SUCCESS && rpl_sched_joined(s, cl.q) < 0)
            e = CL_OUT_OF_RESOURCES;
        int64_t ns = rpl_clock_ns() - t0;
        x.host_ns = ns;
        if (e != CL_SUCCESS) {
            st = rpl_call_error(&x, RPL_ERR_CL, "the plan's fused kernel %s: clEnqueueNDRangeKernel failed (error %d)",
                                f->name, (int)e);
        } else {
            rpl_count_launch(s, measure, ns);
            if (f->launches == 1)
                s->sum.plan_specialized++;
            else
                s->sum.plan_fused++;
            uint64_t id = 0;
            size_t timed = s->ntimed;
            if (ev && app_ev && c->outs && tf_value_u64(&c->outs[8], &id) && id) {
                st = rpl_out_handle(&x, 8, ev, RPL_OBJ_EVENT);
                if (st >= 0)
                    st = rpl_command_event(&x, ev, 0);
            } else if (ev) {
                if (own_ev)
                    st = rpl_command_event(&x, ev, 1);   /* timed under the fused kernel's name */
                if (s->api.clReleaseEvent)
                    s->api.clReleaseEvent(ev);
            }
            if (s->ntimed > timed)
                snprintf(s->timed[s->ntimed - 1].kernel, sizeof s->timed[0].kernel, "%s", f->name);
        }
    }
    rpl_scratch_free(&x);
    for (unsigned i = 0; i < s->nfuse_held; i++) {
        rpl_held_free(s, s->fuse_held[i]);
        s->fuse_held[i] = NULL;
    }
    s->nfuse_held = 0;
    return st;
}

void rpl_plan_free(rpl_session *s)
{
    for (unsigned i = 0; i < s->nfuse_held; i++) {
        rpl_held_free(s, s->fuse_held[i]);
        s->fuse_held[i] = NULL;
    }
    s->nfuse_held = 0;
    for (size_t i = 0; i < s->nfbuilds; i++) {
        if (s->fbuilds[i].k && s->api.clReleaseKernel)
            s->api.clReleaseKernel(s->fbuilds[i].k);
        if (s->fbuilds[i].prog && s->api.clReleaseProgram)
            s->api.clReleaseProgram(s->fbuilds[i].prog);
    }
    free(s->fbuilds);
    s->fbuilds = NULL;
    s->nfbuilds = 0;
    rpl_split_free(s);
}

/* Calls that may come between a held launch and its fusion: they enqueue
 * nothing (creates, queries, retains, kernel arguments) or release memory
 * the held launch keeps alive (rpl_plan_hold retains it). The matcher (live/live_match.c) keeps the same list. */
static int rpl_plan_passive(unsigned fn)
{
    const char *n = rpl_gen_table[fn].name;
    return !strncmp(n, "clCreate", 8) || !strncmp(n, "clGet", 5) || !strncmp(n, "clRetain", 8) ||
           !strcmp(n, "clReleaseMemObject") || !strcmp(n, "clSetKernelArg");
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
    /* a held launch runs first unless this call is its fusion or cannot
     * change what it does (rpl_plan_passive) */
    int is_launch = fn == RPL_FN_clEnqueueNDRangeKernel;
    if (s->nfuse_held && !((v == RPL_PLAN_FUSE || v == RPL_PLAN_LINK) && is_launch) && !rpl_plan_passive(fn))
        RPL_TRY(rpl_plan_flush(s, measure));
    if ((v == RPL_PLAN_HOLD || v == RPL_PLAN_LINK) && is_launch && s->o.plan->fused) {
        int held = 0;
        RPL_TRY(rpl_plan_hold(s, c, &held));
        if (!held)   /* it runs now: what was held before it runs first */
            RPL_TRY(rpl_plan_flush(s, measure));
        *dropped = held;
        return RPL_OK;
    }
    if (v == RPL_PLAN_FUSE && is_launch && s->o.plan->fused) {
        rpl_fused_kernel f;
        memset(&f, 0, sizeof f);
        if (s->o.plan->fused(s->o.plan->user, &f) < 0 || !f.source || !f.name)
            return rpl_set_error(s, RPL_ERR_ARG, "call #%llu: the plan names no fused kernel",
                                 (unsigned long long)c->seq);
        /* a launch of the chain could not be held (a specialized kernel,
         * launches 1, holds none) */
        if (f.launches ? s->nfuse_held + 1 != f.launches : !s->nfuse_held)
            return rpl_plan_flush(s, measure);
        int done = 0;
        int st = rpl_plan_fused(s, c, &f, measure, &done);
        *dropped = done;
        return st;
    }
    if (v == RPL_PLAN_SPLIT && fn == RPL_FN_clEnqueueNDRangeKernel && s->o.plan->split) {
        rpl_split sp;
        memset(&sp, 0, sizeof sp);
        if (s->o.plan->split(s->o.plan->user, &sp) < 0 || !sp.source || !sp.name || !sp.nparts)
            return rpl_set_error(s, RPL_ERR_ARG, "call #%llu: the plan names no split", (unsigned long long)c->seq);
        int done = 0;
        int st = rpl_split_run(s, c, &sp, measure, &done);
        *dropped = done;
        return st;
    }
    if (v == RPL_PLAN_LOCAL && is_launch && s->o.plan->local_size) {
        s->plan_local_pending = 1;   /* rpl_local_pre, from the launch's pre hook */
        return RPL_OK;
    }
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
