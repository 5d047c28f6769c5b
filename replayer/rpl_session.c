/* rpl_session.c — the replay loop: opens a trace, walks its items, decides
 * per call whether it runs (prefix, measured range, loop repeats, after the
 * range), runs it through the generated call table, and keeps the summary.
 *
 * Phases: calls before the range run without verification (they build the
 * state the range starts from); calls in the range run with verification
 * and timing; after the range only releases run. In loop mode the range's
 * commands (enqueues, maps, syncs, kernel arguments) run again for each
 * further iteration; releases inside the range wait until the last one. */
#include "replayer/rpl_int.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char rpl_open_msg[1024];

const char *rpl_strerror(rpl_status s)
{
    switch (s) {
    case RPL_OK: return "ok";
    case RPL_END: return "end of trace";
    case RPL_ERR_TRACE: return "unreadable trace";
    case RPL_ERR_NOMEM: return "out of memory";
    case RPL_ERR_ARG: return "bad argument";
    case RPL_ERR_DEVICE: return "no usable device";
    case RPL_ERR_CL: return "OpenCL call failed";
    case RPL_ERR_UNSUPPORTED: return "not supported";
    case RPL_ERR_INVALID: return "inconsistent trace";
    case RPL_ERR_LIMIT: return "over a limit";
    }
    return "unknown status";
}

const char *rpl_open_error(void)
{
    return rpl_open_msg;
}

void rpl_opts_init(rpl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->verify = 1;
}

int rpl_set_error(rpl_session *s, int status, const char *fmt, ...)
{
    if (s->err[0])   /* keep the first, most specific message */
        return status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return status;
}

int rpl_call_error(rpl_cx *x, int status, const char *fmt, ...)
{
    rpl_session *s = x->s;
    if (s->err[0])
        return status;
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(s->err, sizeof s->err, "call #%llu %s: %s", (unsigned long long)x->c->seq, x->c->sig->name, msg);
    return status;
}

const char *rpl_error(const rpl_session *s)
{
    return s->err;
}

const rpl_opts *rpl_session_opts(rpl_session *s)
{
    return &s->o;
}

void rpl_count_bytes_in(rpl_session *s, uint64_t n)
{
    s->sum.bytes_in += n;
}

void rpl_count_call_diff(rpl_session *s)
{
    s->sum.call_diffs++;
}

int rpl_measuring(rpl_session *s)
{
    return !s->after && s->iter == 0;
}

int rpl_profiling(rpl_session *s)
{
    return s->o.timing && !s->o.exact_calls;
}

/* The loader's functions; but where something loaded before it defines the
 * OpenCL API itself (LD_PRELOAD: `oclgrind clrr replay`), that one's, as a
 * program's calls would reach them (clrr's own calls do: mixing the two
 * hands one implementation the other's objects). */
static void *rpl_dl_lookup(void *user, const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    return f ? f : dlsym(user, name);
}

rpl_status rpl_open(rpl_session **out, const char *path, const rpl_opts *o)
{
    *out = NULL;
    rpl_open_msg[0] = 0;
    rpl_session *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(rpl_open_msg, sizeof rpl_open_msg, "out of memory");
        return RPL_ERR_NOMEM;
    }
    s->o = *o;
    s->t_open = rpl_clock_ns();
    if (!s->o.max_memory)
        s->o.max_memory = (size_t)1 << 30;
    if (!s->o.loop)
        s->o.loop = 1;
    snprintf(s->path, sizeof s->path, "%s", path);
    rpl_status st = RPL_OK;
    if (rpl_watchdog_start(s) < 0) {   /* opening can hang too (a driver's set-up) */
        snprintf(rpl_open_msg, sizeof rpl_open_msg, "cannot start the watchdog thread");
        st = RPL_ERR_NOMEM;
        goto out;
    }
    if (o->kernel && (o->first || o->last)) {
        snprintf(rpl_open_msg, sizeof rpl_open_msg, "--kernel and --range cannot be combined");
        st = RPL_ERR_ARG;
        goto out;
    }
    if (o->first > o->last && o->last) {
        snprintf(rpl_open_msg, sizeof rpl_open_msg, "empty range %llu:%llu", (unsigned long long)o->first,
                 (unsigned long long)o->last);
        st = RPL_ERR_ARG;
        goto out;
    }
    s->first = o->kernel ? o->kernel : o->first ? o->first : 1;
    s->last = o->kernel ? UINT64_MAX : o->last ? o->last : UINT64_MAX;

    tf_reader_opts ro = {.max_memory = s->o.max_memory};   /* the reader's own, as large again */
    tf_status ts = tf_reader_open(&s->r, path, &ro);
    if (ts != TF_OK) {
        /* the reader's message starts with the path; the caller names the file */
        const char *m = tf_reader_open_error();
        size_t pl = strlen(path);
        if (!strncmp(m, path, pl) && !strncmp(m + pl, ": ", 2))
            m += pl + 2;
        snprintf(rpl_open_msg, sizeof rpl_open_msg, "%s", m[0] ? m : tf_strerror(ts));
        st = RPL_ERR_TRACE;
        goto out;
    }
    s->libcl = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!s->libcl)
        s->libcl = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!s->libcl) {
        snprintf(rpl_open_msg, sizeof rpl_open_msg, "cannot load the OpenCL ICD loader (libOpenCL.so.1): %s",
                 dlerror());
        st = RPL_ERR_DEVICE;
        goto out;
    }
    rpl_gen_fill_api(&s->api, rpl_dl_lookup, s->libcl);
    char err[512] = "";
    int dst = rpl_devmap_build(s, tf_reader_env(s->r), o->device, o->exact_calls, err, sizeof err);
    if (dst < 0) {
        snprintf(rpl_open_msg, sizeof rpl_open_msg, "%s", err);
        st = (rpl_status)dst;
        goto out;
    }
    rpl_devmap_names(s, s->sum.recorded_device, sizeof s->sum.recorded_device, s->sum.device,
                     sizeof s->sum.device);
    if (o->profile && (dst = rpl_profile_open(s, err, sizeof err)) < 0) {   /* rpl_profile_dev.c */
        snprintf(rpl_open_msg, sizeof rpl_open_msg, "%s", err);
        st = (rpl_status)dst;
        goto out;
    }
    s->loop_exec = calloc(s->o.loop, sizeof *s->loop_exec);
    if (!s->loop_exec) {
        snprintf(rpl_open_msg, sizeof rpl_open_msg, "out of memory");
        st = RPL_ERR_NOMEM;
        goto out;
    }
    *out = s;
    return RPL_OK;
out:
    rpl_close(s);
    return st;
}

/* ------------------------------------------------------------ timing */
static void rpl_devtime_add(rpl_session *s, const tf_devtime *d)
{
    if (!s->o.on_time || d->end < d->start)
        return;
    if (s->ndevtime == s->cap_devtime) {
        size_t cap = s->cap_devtime ? s->cap_devtime * 2 : 1024;
        uint64_t *a = realloc(s->devtime_seq, cap * sizeof *a);
        if (!a)
            return;
        s->devtime_seq = a;
        int64_t *b = realloc(s->devtime_ns, cap * sizeof *b);
        if (!b)
            return;
        s->devtime_ns = b;
        s->cap_devtime = cap;
    }
    s->devtime_seq[s->ndevtime] = d->seq;
    s->devtime_ns[s->ndevtime++] = (int64_t)(d->end - d->start);
}

static int64_t rpl_devtime_of(rpl_session *s, uint64_t seq)
{
    for (size_t i = s->ndevtime; i-- > 0;)
        if (s->devtime_seq[i] == seq)
            return s->devtime_ns[i];
    return -1;
}

static void rpl_harvest(rpl_session *s)
{
    for (size_t i = 0; i < s->ntimed; i++) {
        rpl_timed *t = &s->timed[i];
        int64_t dev = -1;
        cl_ulong a = 0, b = 0;
        if (s->api.clWaitForEvents && s->api.clWaitForEvents(1, &t->ev) == CL_SUCCESS && s->api.clGetEventProfilingInfo
            && s->api.clGetEventProfilingInfo(t->ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL) == CL_SUCCESS
            && s->api.clGetEventProfilingInfo(t->ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL) == CL_SUCCESS
            && b >= a)
            dev = (int64_t)(b - a);
        if (dev >= 0)
            s->sum.device_ns += dev;
        if (s->o.on_time) {
            rpl_cmd_time ct = {t->seq, rpl_gen_table[t->fn].name, t->kernel[0] ? t->kernel : NULL, t->host_ns, dev,
                               rpl_devtime_of(s, t->seq), t->loop};
            s->o.on_time(s->o.user, &ct);
        }
        if (s->api.clReleaseEvent)
            s->api.clReleaseEvent(t->ev);
    }
    s->ntimed = 0;
}

/* The command's event: kept for --timing; the replay's own events are
 * released once nothing needs them (rpl_exec). */
int rpl_command_event(rpl_cx *x, cl_event ev, int own)
{
    rpl_session *s = x->s;
    x->cmd_event = ev;
    x->cmd_event_own = own && ev;
    int keep = ev && s->o.timing && !s->after && !s->o.exact_calls;
    if (keep && s->ntimed == s->cap_timed) {
        size_t cap = s->cap_timed ? s->cap_timed * 2 : 256;
        rpl_timed *t = realloc(s->timed, cap * sizeof *t);
        if (!t)
            keep = 0;
        else
            s->timed = t, s->cap_timed = cap;
    }
    if (keep) {
        if (s->api.clRetainEvent)
            s->api.clRetainEvent(ev);
        rpl_timed *t = &s->timed[s->ntimed++];
        *t = (rpl_timed){.seq = x->c->seq, .fn = x->fn, .loop = s->iter, .ev = ev, .host_ns = x->host_ns};
        if (x->fn == RPL_FN_clEnqueueNDRangeKernel || x->fn == RPL_FN_clEnqueueTask) {
            rpl_obj *k = rpl_obj_find(s, rpl_arg_id(x, 1));
            snprintf(t->kernel, sizeof t->kernel, "%s", k && k->name ? k->name : "(unnamed kernel)");
        }
        if (s->ntimed >= 8192)
            rpl_harvest(s);
    }
    return RPL_OK;
}

/* ------------------------------------------------------------ calls */
int rpl_sig_fn(rpl_session *s, const tf_sig *sig)
{
    if (sig->id >= s->nsig) {
        uint32_t n = sig->id + 64;
        if (n > (1u << 20))
            return -1;
        int *a = realloc(s->sig_fn, n * sizeof *a);
        if (!a)
            return -1;
        for (uint32_t i = s->nsig; i < n; i++)
            a[i] = -2;
        s->sig_fn = a;
        s->nsig = n;
    }
    if (s->sig_fn[sig->id] == -2) {
        s->sig_fn[sig->id] = -1;
        for (unsigned f = 0; f < RPL_FN_COUNT; f++)
            if (!strcmp(rpl_gen_table[f].name, sig->name) && rpl_gen_table[f].nparams == sig->nparams)
                s->sig_fn[sig->id] = (int)f;
    }
    return s->sig_fn[sig->id];
}

int rpl_is_cat(unsigned fn, unsigned cats)
{
    return (rpl_gen_table[fn].sem->cat & cats) != 0;
}

/* Commands repeated by --loop: what the application does per iteration. */
static int rpl_repeatable(unsigned fn)
{
    return rpl_is_cat(fn, API_CAT_ENQUEUE | API_CAT_MAP | API_CAT_SYNC)
           || fn == RPL_FN_clSetKernelArg || fn == RPL_FN_clSetKernelArgSVMPointer
           || fn == RPL_FN_clSetKernelExecInfo;
}

/* Kernel mode ends at the first command after the launch that may change
 * device memory; reads, maps for reading and synchronization go on. From
 * the API description's effects (api_sem.h): an enqueue of unknown effects,
 * or one that writes (a migration may); an unmap writes when the host wrote
 * into the mapping (its bytes were recorded), an SVM write to host memory
 * (its bytes recorded as the call's output) is a read-back. Maps write
 * nothing until their unmap. */
int rpl_modifies(unsigned fn, const tf_call *c)
{
    const api_sem *a = rpl_gen_table[fn].sem;
    if (!(a->cat & API_CAT_ENQUEUE))
        return 0;
    if (a->flags & API_F_UNKNOWN)
        return 1;
    for (unsigned i = 0; i < a->neffects; i++) {
        const api_effect *e = &a->eff[i];
        if (e->access & API_ACC_MAPPED) {
            if (c->pre && tf_map_get(c->pre, "data") != NULL)
                return 1;
        } else if (e->access & (API_ACC_WRITE | API_ACC_MIGRATE)) {
            if (!(e->range == API_RANGE_SVM && c->outs && e->obj < (int)c->sig->nparams &&
                  c->outs[e->obj].type != TF_NIL))
                return 1;
        }
    }
    return 0;
}

static int rpl_recorded_outcome(rpl_cx *x)
{
    const tf_call *c = x->c;
    const tf_sig *sig = c->sig;
    x->recorded_code = RPL_CL_UNKNOWN;
    if (!c->complete) {
        x->recorded_ok = 1;
        return 0;
    }
    if (!strcmp(sig->ret_type, "cl_int")) {
        int64_t v = 0;
        tf_value_i64(&c->ret, &v);
        x->recorded_code = v;
        x->recorded_ok = v == 0;
        return 0;
    }
    for (uint32_t i = 0; i < sig->nparams; i++)
        if (!strcmp(sig->params[i].name, "errcode_ret") && c->outs && c->outs[i].type != TF_NIL) {
            int64_t v = 0;
            tf_value_i64(&c->outs[i], &v);
            x->recorded_code = v;
            x->recorded_ok = v == 0;
            return 0;
        }
    if (!strcmp(sig->ret_type, "void")) {
        x->recorded_ok = 1;
        return 0;
    }
    uint64_t u = 0;
    tf_value_u64(&c->ret, &u);
    x->recorded_ok = u != 0;
    if (x->recorded_ok)
        x->recorded_code = 0;
    return 0;
}

void rpl_cx_init(rpl_cx *x, rpl_session *s, const tf_call *c, unsigned fn, int verify)
{
    memset(x, 0, sizeof *x);
    x->s = s;
    x->c = c;
    x->fn = fn;
    x->api = &s->api;
    x->no_verify = !verify;
}

int rpl_exec(rpl_session *s, const tf_call *c, unsigned fn, int measure, int verify)
{
    rpl_cx x;
    rpl_cx_init(&x, s, c, fn, verify);
    rpl_recorded_outcome(&x);
    if (s->wd)
        rpl_watchdog_call(s, c);
    /* what the trace passes, against what its objects allow (rpl_guard.c):
     * refused, or a call that failed when recorded not made */
    int gst = rpl_guard(&x);
    if (gst)
        return gst < 0 ? gst : RPL_OK;
    int dropped = 0;
    int pst = rpl_plan_call(s, c, fn, measure, &dropped);   /* a plan may drop it (rpl_plan.c) */
    if (pst >= 0 && dropped)
        rpl_defined_after(&x);   /* as if it ran: a byte it would define is compared */
    if (pst < 0 || dropped)
        return pst;
    int st = rpl_gen_table[fn].replay(&x);
    if (st >= 0 && x.stage_out)
        st = rpl_stage_out(&x);
    /* data handed to a command may be read by the device until it completes */
    if (st >= 0 && x.scratch && rpl_is_cat(fn, API_CAT_ENQUEUE)) {
        rpl_obj *q = rpl_obj_find(s, rpl_arg_id(&x, 0));
        st = rpl_hold(s, x.scratch, q ? q->live : NULL, x.cmd_event);
        x.scratch = NULL;
    }
    if (x.cmd_event_own && s->api.clReleaseEvent)
        s->api.clReleaseEvent(x.cmd_event);
    rpl_scratch_free(&x);
    if (st < 0) {
        if (!s->err[0])
            rpl_call_error(&x, st, "%s", rpl_strerror((rpl_status)st));
        return st;
    }
    s->sum.calls++;
    rpl_defined_after(&x);
    if (s->split)
        rpl_split_touch(s, c, fn);
    if (rpl_is_cat(fn, API_CAT_ENQUEUE | API_CAT_MAP)) {
        s->sum.commands++;
        if (fn == RPL_FN_clEnqueueNDRangeKernel || fn == RPL_FN_clEnqueueTask)
            s->sum.kernels++;
    }
    if (measure && (rpl_is_cat(fn, API_CAT_ENQUEUE | API_CAT_MAP | API_CAT_SYNC))) {
        s->sum.exec_ns += x.host_ns;
        s->iter_exec += x.host_ns;
    } else if (measure && x.stage_ns) {   /* a staging's blocks made ahead (rpl_stage_buffer) */
        s->sum.exec_ns += x.stage_ns;
        s->iter_exec += x.stage_ns;
    }
    return RPL_OK;
}

/* Calls that end an object's life: clRelease* and clSVMFree. In loop mode
 * they wait for the last iteration. */
static int rpl_is_release(unsigned fn)
{
    return rpl_is_cat(fn, API_CAT_RELEASE) || fn == RPL_FN_clSVMFree;
}

/* A release of an object that no replayed call created (one created past a
 * --range or --kernel, or by a create that failed and still returned a
 * handle): outside exact-calls mode there is nothing to release, and the
 * call is skipped rather than made with NULL. Releases take at least one
 * parameter, clSVMFree two. */
static int rpl_release_is_moot(rpl_session *s, unsigned fn, const tf_call *c)
{
    if (s->o.exact_calls || !rpl_is_release(fn) || c->sig->nparams < (fn == RPL_FN_clSVMFree ? 2u : 1u))
        return 0;
    uint64_t id = 0;
    if (fn == RPL_FN_clSVMFree)   /* (context, svm_pointer): an allocation no replayed call made */
        return tf_value_u64(&c->args[1], &id) && id && !rpl_addr(s, id);
    if (!tf_value_u64(&c->args[0], &id) || !id)
        return 0;
    rpl_obj *o = rpl_obj_find(s, id);
    return !o || !o->live;
}

static int rpl_defer_release(rpl_session *s, uint64_t seq)
{
    if (s->ndeferred == s->cap_deferred) {
        size_t cap = s->cap_deferred ? s->cap_deferred * 2 : 64;
        uint64_t *a = realloc(s->deferred, cap * sizeof *a);
        if (!a)
            return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
        s->deferred = a;
        s->cap_deferred = cap;
    }
    s->deferred[s->ndeferred++] = seq;
    return RPL_OK;
}

static int rpl_is_deferred(rpl_session *s, uint64_t seq)
{
    for (size_t i = 0; i < s->ndeferred; i++)
        if (s->deferred[i] == seq)
            return 1;
    return 0;
}

/* Ends one loop iteration; starts the next by rewinding the trace. */
static int rpl_next_iteration(rpl_session *s)
{
    int st = rpl_verify_flush(s, 1);
    rpl_harvest(s);
    s->loop_exec[s->iter] = s->iter_exec;
    s->iter_exec = 0;
    s->sum.loops = s->iter + 1;
    if (st < 0)
        return st;
    if (s->iter + 1 >= s->o.loop) {
        s->iter++;   /* past the last: the final pass only releases */
        return RPL_OK;
    }
    s->iter++;
    tf_status ts = tf_reader_rewind(s->r);
    if (ts != TF_OK)
        return rpl_set_error(s, RPL_ERR_TRACE, "rewinding: %s", tf_strerror(ts));
    rpl_plan_rewind(s);
    return RPL_OK;
}

static rpl_where *rpl_where_at;

void rpl_set_where(rpl_where *w)
{
    rpl_where_at = w;
}

/* Stores where the replay is (rpl_where), before the call is made. */
static void rpl_where_store(rpl_session *s, const tf_call *c, int fn)
{
    rpl_where *w = rpl_where_at;
    uint64_t kid = 0;

    w->seq = c->seq;
    snprintf(w->fn, sizeof w->fn, "%s", c->sig->name);
    if (fn != RPL_FN_clEnqueueNDRangeKernel && fn != RPL_FN_clEnqueueTask)
        return;
    w->launch = c->seq;
    snprintf(w->launch_fn, sizeof w->launch_fn, "%s", c->sig->name);
    const rpl_obj *k = c->sig->nparams > 1 && tf_value_u64(&c->args[1], &kid) && kid ? rpl_obj_find(s, kid) : NULL;
    snprintf(w->kernel, sizeof w->kernel, "%s", k && k->name ? k->name : "");
}

static int rpl_call(rpl_session *s, const tf_call *c)
{
    int fn = rpl_sig_fn(s, c->sig);
    if (fn < 0)
        return rpl_set_error(s, RPL_ERR_UNSUPPORTED, "call #%llu: %s (%u parameters) is not known to this build",
                             (unsigned long long)c->seq, c->sig->name, c->sig->nparams);
    if (rpl_where_at)
        rpl_where_store(s, c, fn);
    if (s->o.on_progress)
        s->o.on_progress(s->o.user, c->seq, 0);
    if (s->pause_at && c->seq >= s->pause_at && !s->paused) {   /* clrr trim: stop before it */
        s->paused = 1;
        s->paused_call = *c;
        return RPL_OK;
    }
    unsigned loops = s->o.loop;
    int repeat_pass = s->iter > 0 && s->iter < loops;
    uint64_t last = s->o.kernel && s->iter > 0 ? s->o.kernel : s->last;

    if (repeat_pass) {   /* loop iterations after the first: the range's commands again */
        if (c->seq < s->first)
            return RPL_OK;
        if (c->seq > last || (s->o.kernel && c->seq > s->o.kernel))
            return rpl_next_iteration(s) < 0 ? RPL_ERR_TRACE : RPL_OK;
        if (!rpl_repeatable((unsigned)fn) || (s->o.kernel && c->seq != s->o.kernel))
            return RPL_OK;
        return rpl_exec(s, c, (unsigned)fn, 1, 0);
    }
    if (s->iter >= loops && loops > 1) {   /* after the last iteration */
        if (c->seq <= last && c->seq >= s->first && !rpl_is_deferred(s, c->seq))
            return RPL_OK;
        s->after = 1;
    }
    if (!s->after && s->iter == 0) {
        if (c->seq > last) {
            if (loops > 1) {
                int st = rpl_next_iteration(s);
                if (st < 0 || s->iter < loops)
                    return st;
            }
            s->after = 1;
        } else if (s->o.kernel && s->kernel_done && rpl_modifies((unsigned)fn, c)) {
            if (loops > 1) {
                s->last = c->seq - 1;
                int st = rpl_next_iteration(s);
                if (st < 0 || s->iter < loops)
                    return st;
            }
            s->after = 1;
        }
    }
    if (rpl_release_is_moot(s, (unsigned)fn, c)) {
        s->sum.skipped++;
        return RPL_OK;
    }
    if (s->after) {
        if (rpl_is_release((unsigned)fn) && (c->seq > last || rpl_is_deferred(s, c->seq) || loops == 1))
            return rpl_exec(s, c, (unsigned)fn, 0, 0);
        s->sum.skipped++;
        return RPL_OK;
    }
    int measure = c->seq >= s->first;
    if (s->o.kernel && c->seq == s->o.kernel) {
        if (fn != RPL_FN_clEnqueueNDRangeKernel && fn != RPL_FN_clEnqueueTask)
            return rpl_set_error(s, RPL_ERR_ARG, "call #%llu is %s, not a kernel launch",
                                 (unsigned long long)c->seq, c->sig->name);
    }
    if (measure && loops > 1 && rpl_is_release((unsigned)fn))
        return rpl_defer_release(s, c->seq);
    int st = rpl_exec(s, c, (unsigned)fn, measure, measure && s->o.verify);
    if (st >= 0 && s->o.kernel && c->seq == s->o.kernel)
        s->kernel_done = 1;
    if (st >= 0 && !c->complete)
        s->ended = 1;   /* the recording stopped inside this call */
    return st;
}

rpl_status rpl_step(rpl_session *s, rpl_readback *rb, int *has_rb)
{
    if (has_rb)
        *has_rb = 0;
    if (s->failed)
        return (rpl_status)s->failed;
    if (rpl_take_readback(s, rb)) {   /* one settled in an earlier step */
        if (has_rb)
            *has_rb = 1;
        return RPL_OK;
    }
    if (s->finished)
        return RPL_END;
    s->want_rb = rb || has_rb;
    tf_item it;
    tf_status ts = s->ended ? TF_END : tf_reader_next(s->r, &it);
    int st = RPL_OK;
    if (ts == TF_END) {
        if (!s->ended)
            st = rpl_plan_flush(s, rpl_measuring(s));   /* a launch held to the end runs now */
        if (st >= 0 && s->iter < s->o.loop && s->o.loop > 1 && !s->ended) {
            st = rpl_next_iteration(s);
            if (st >= 0 && s->iter < s->o.loop)
                return RPL_OK;
        }
        if (s->o.kernel && !s->kernel_done && st >= 0)
            st = rpl_set_error(s, RPL_ERR_ARG, "the trace has no call #%llu", (unsigned long long)s->o.kernel);
        rpl_user_events_abort(s);   /* nothing sets them now: wait for no one forever */
        rpl_watchdog_end(s);
        if (st >= 0)
            st = rpl_verify_flush(s, !s->o.exact_calls);
        if (st >= 0 && s->o.loop == 1)
            s->loop_exec[0] = s->iter_exec, s->sum.loops = 1;
        rpl_harvest(s);
        s->ended = 1;
        if (st < 0) {
            s->failed = st;
            return (rpl_status)st;
        }
        s->finished = 1;
        if (rpl_take_readback(s, rb)) {   /* settled by the final flush */
            if (has_rb)
                *has_rb = 1;
            return RPL_OK;
        }
        return RPL_END;
    }
    if (ts != TF_OK) {
        s->failed = RPL_ERR_TRACE;
        rpl_set_error(s, RPL_ERR_TRACE, "%s%s%s", tf_strerror(ts), tf_reader_error(s->r)[0] ? ": " : "",
                      tf_reader_error(s->r));
        return RPL_ERR_TRACE;
    }
    switch (it.type) {
    case TF_ITEM_CALL:
        st = rpl_call(s, &it.u.call);
        break;
    case TF_ITEM_DATA:
        if (s->iter == 0 && (st = rpl_plan_data(s, &it.u.data)) >= 0)
            st = rpl_verify_data(s, &it.u.data);
        break;
    case TF_ITEM_DEVTIME:
        if (s->iter == 0)
            rpl_devtime_add(s, &it.u.devtime);
        break;
    case TF_ITEM_DEVICES:
        st = rpl_devmap_devices(s, &it.u.devices);
        break;
    default:
        break;
    }
    if (st < 0) {
        s->failed = st;
        return (rpl_status)st;
    }
    if (rpl_take_readback(s, rb) && has_rb)
        *has_rb = 1;
    return RPL_OK;
}

rpl_status rpl_run(rpl_session *s)
{
    rpl_status st;
    while ((st = rpl_step(s, NULL, NULL)) == RPL_OK)
        ;
    return st == RPL_END ? RPL_OK : st;
}

static int rpl_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void rpl_get_summary(const rpl_session *s, rpl_summary *out)
{
    *out = s->sum;
    rpl_sched_summary(s, out);
    out->wall_ns = rpl_clock_ns() - s->t_open;
    const tf_reader_info *ri = tf_reader_get_info(s->r);
    out->truncated = ri->truncated;
    out->valid_bytes = ri->truncated ? ri->valid_bytes : ri->file_bytes;
    out->file_bytes = ri->file_bytes;
    unsigned n = s->sum.loops ? s->sum.loops : 0;
    if (n) {
        int64_t *v = malloc(n * sizeof *v);
        if (v) {
            memcpy(v, s->loop_exec, n * sizeof *v);
            qsort(v, n, sizeof *v, rpl_cmp_i64);
            out->exec_ns_loop_median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
            free(v);
        }
    } else {
        out->exec_ns_loop_median = s->iter_exec;
    }
}

void rpl_close(rpl_session *s)
{
    if (!s)
        return;
    rpl_watchdog_end(s);   /* closing waits for what still runs */
    if (s->libcl) {
        rpl_user_events_abort(s);
        rpl_harvest(s);
        rpl_verify_free(s);
        rpl_sched_free(s);
        rpl_objs_release_all(s);
    }
    rpl_uev_free(s);
    rpl_plan_free(s);
    rpl_profile_free(s);
    rpl_objs_free(s);
    rpl_defined_free(s);
    rpl_devmap_free(s);
    tf_reader_close(s->r);
    /* the loader stays loaded: drivers (PoCL) do not survive being unloaded */
    free(s->sig_fn);
    free(s->loop_exec);
    free(s->deferred);
    free(s->timed);
    free(s->devtime_seq);
    free(s->devtime_ns);
    rpl_readbacks_free(s);
    rpl_pin_free(s);   /* after every chunk that may lie in a pinned block */
    free(s->stage_sink);
    rpl_progsrc_free(s);
    rpl_watchdog_stop(s);
    free(s);
}
