/* rpl_split.c — a plan's split launch in a replay session (RPL_PLAN_SPLIT):
 * the launch's recorded arguments and objects go to the split engine
 * (rpl_splitter.c), memory named by recorded ids; every command's possible
 * writes move the engine's versions (rpl_split_touch); each part's time is
 * learned into rpl_opts.learn; the engine's counts go to the summary. */
#include "replayer/rpl_int.h"
#include "costs/cdb.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *rpl_split_lookup(void *user, const char *name)
{
    return dlsym(((rpl_session *)user)->libcl, name);
}

/* Devices by the session's own map (the devices --device sees). */
static int rpl_split_resolve(void *user, const char *spec, cl_device_id *dev, cl_platform_id *plat, char *err,
                             size_t cap)
{
    return rpl_devmap_resolve(user, spec, dev, plat, err, cap);
}

/* Every optimized run adds its own measurements: each part's kernel time
 * (rpl_splitter_opts.learn). */
static int rpl_split_learn(void *user, const char *identity, const cdb_key *key, uint64_t groups, uint64_t ns)
{
    rpl_session *s = user;
    return cdb_add_kernel(s->o.learn, identity, key, groups, ns) == CDB_OK;
}

void rpl_split_free(rpl_session *s)
{
    rpl_splitter_free(s->split);
    s->split = NULL;
}

/* A command may have written memory: the versions of what it names move
 * (a launch: its kernel's memory arguments). */
void rpl_split_touch(rpl_session *s, const tf_call *c, unsigned fn)
{
    if (!s->split)
        return;
    if (fn == RPL_FN_clEnqueueNDRangeKernel || fn == RPL_FN_clEnqueueTask) {
        uint64_t kid = 0;
        rpl_obj *k = tf_value_u64(&c->args[1], &kid) ? rpl_obj_find(s, kid) : NULL;
        rpl_splitter_call(s->split, c, k ? k->args : NULL, k ? RPL_MAX_KARGS : 0);
        return;
    }
    rpl_splitter_call(s->split, c, NULL, 0);
}

/* The summary's split counts: the engine's. */
static void rpl_split_sum(rpl_session *s)
{
    s->sum.split = *rpl_splitter_stats(s->split);
}

/* The session's engine, made on first use; NULL out of memory. */
static rpl_splitter *rpl_split_engine(rpl_session *s)
{
    if (!s->split) {
        rpl_splitter_opts o = {.fixed = s->o.split_fixed, .method = s->o.split_method, .user = s,
                               .lookup = rpl_split_lookup,
                               .resolve = rpl_split_resolve, .learn = s->o.learn ? rpl_split_learn : NULL};
        s->split = rpl_splitter_new(&o);
    }
    return s->split;
}

int rpl_split_prepare(rpl_session *s, cl_program prog)
{
    const rpl_plan_hook *h = s->o.plan;
    const char *src = NULL, *opts = NULL;
    const uint8_t *hash = NULL;
    cl_context ctx = NULL;
    rpl_split sp;
    if (!h || !h->split_of || !rpl_progsrc_of_live(s, prog, &src, &opts, &hash) || !hash ||
        s->api.clGetProgramInfo(prog, CL_PROGRAM_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS)
        return RPL_OK;
    for (size_t i = 0; h->split_of(h->user, hash, i, &sp) == 0; i++) {
        if (!rpl_split_engine(s))
            return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
        rpl_splitter_prepare(s->split, &sp, ctx);
    }
    if (s->split)
        rpl_split_sum(s);
    return RPL_OK;
}

int rpl_split_run(rpl_session *s, const tf_call *c, const rpl_split *sp, int measure, int *done)
{
    *done = 0;
    if (!rpl_split_engine(s))
        return rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
    rpl_cx x;
    rpl_cx_init(&x, s, c, RPL_FN_clEnqueueNDRangeKernel, 0);
    rpl_launch h;
    cl_uint nwait = 0;
    const cl_event *wait = NULL;
    int st = rpl_launch_decode(&x, &h, &nwait, &wait);
    if (st < 0) {
        rpl_scratch_free(&x);
        return st;
    }
    rpl_obj *ko = rpl_obj_find(s, h.kernel_id);
    rpl_split_arg args[RPL_MAX_KARGS];
    unsigned nargs = ko && ko->kargs ? ko->kargs->n : 0;
    for (unsigned i = 0; i < nargs && i < RPL_MAX_KARGS; i++) {
        const rpl_karg *g = &ko->kargs->a[i];
        args[i] = (rpl_split_arg){g->set, g->size, g->has_value ? g->value : NULL, ko->args[i]};
    }
    rpl_split_launch l = {h.q, h.dim, {0}, {0}, {0}, h.has_lsz, nwait, wait, nargs, args, NULL};
    memcpy(l.off, h.off, sizeof l.off);
    memcpy(l.gsz, h.gsz, sizeof l.gsz);
    memcpy(l.lsz, h.lsz, sizeof l.lsz);
    cl_event ev = NULL;
    if (rpl_in_present(&x, 8))
        l.event = &ev;
    char err[512] = "a barrier or marker between the queue and its lanes failed";
    int64_t t0 = rpl_clock_ns();
    int r = rpl_sched_join(s, h.q) < 0 ? -1 : rpl_splitter_run(s->split, sp, &l, done, err, sizeof err);
    if (r >= 0 && rpl_sched_joined(s, h.q) < 0)
        r = -1;
    rpl_split_sum(s);
    if (r == -2)
        st = rpl_set_error(s, RPL_ERR_NOMEM, "out of memory");
    else if (r < 0)
        st = rpl_call_error(&x, RPL_ERR_CL, "%s", err);
    else if (*done) {
        uint64_t id = 0;
        if (ev && c->outs && tf_value_u64(&c->outs[8], &id) && id)
            st = rpl_out_handle(&x, 8, ev, RPL_OBJ_EVENT);
        else if (ev)
            s->api.clReleaseEvent(ev);
        x.host_ns = rpl_clock_ns() - t0;
        s->sum.calls++;
        s->sum.commands++;
        s->sum.kernels++;
        if (measure) {
            s->sum.exec_ns += x.host_ns;
            s->iter_exec += x.host_ns;
        }
    }
    rpl_scratch_free(&x);
    return st;
}
