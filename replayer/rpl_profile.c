/* rpl_profile.c — cost learning (rpl_opts.profile, `clrr profile`): a
 * kernel launch measured on every selected device, on copies, right before
 * the replay runs it.
 *
 * Only the first `launches` launches of each distinct key (program source
 * hash, kernel name, dim, global and local size) are measured. The
 * application's queue (and the launch's wait list) is waited for, then
 * every memory argument is read whole from the application's buffer, on
 * its queue. On each device (rpl_profile_dev.c: a context and profiling
 * queue of our own, the program built from its recorded source and
 * options), buffers of our own receive those bytes and stand for the
 * application's in the kernel's arguments; one warm-up launch at full
 * size, then the ladder: along the highest dimension with at least two
 * work-groups, n of its G work-groups for n in {G, 3G/4, G/2, G/4, G/8,
 * G/16, G/32, 1}, each `reps` times; every run's device time is a sample
 * for n times the other dimensions' work-groups. The mirrors are not
 * restored between runs (a kernel that updates its input in place runs
 * on its own results: the same work). The program hash is tf_hash of the
 * recorded source bytes, as the analyzer and `clrr optimize` compute it
 * (rpl_progsrc.c). */
#include "replayer/rpl_profile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RPL_PROF_VALUE = 0, RPL_PROF_MEM = 1, RPL_PROF_LOCAL = 2 };

typedef struct rpl_prof_arg {
    uint8_t kind;             /* RPL_PROF_* */
    size_t size;
    const void *value;        /* VALUE: its bytes (the kernel's, until the launch runs) */
    unsigned mem;             /* MEM: index into the launch's memory objects */
} rpl_prof_arg;

/* The launch being measured. */
typedef struct rpl_prof_launch {
    uint64_t seq;
    rpl_launch h;
    cdb_key key;
    char kname[256];
    const char *src, *opts;
    unsigned nargs;
    rpl_prof_arg args[RPL_MAX_KARGS];
    unsigned nmems;           /* distinct memory objects, their sizes and contents */
    cl_mem app[RPL_MAX_KARGS];
    size_t size[RPL_MAX_KARGS];
    void *bytes[RPL_MAX_KARGS];
    unsigned sdim;            /* the dimension the ladder shrinks */
    uint64_t G, other;        /* work-groups along it, and across the others */
    size_t unit;              /* work-items per work-group along it (1: no local size) */
} rpl_prof_launch;

/* Counts a launch of key @p k. @return how often it was seen, or 0 when
 * out of memory. */
static uint64_t rpl_prof_seen(struct rpl_profile_state *t, const cdb_key *k)
{
    for (size_t i = 0; i < t->nkeys; i++) {
        const cdb_key *a = &t->keys[i].k;
        if (!memcmp(a->program, k->program, 16) && a->dim == k->dim && !strcmp(a->kernel, k->kernel) &&
            !memcmp(a->gsz, k->gsz, sizeof a->gsz) && !memcmp(a->lsz, k->lsz, sizeof a->lsz))
            return ++t->keys[i].seen;
    }
    rpl_prof_key *p = realloc(t->keys, (t->nkeys + 1) * sizeof *p);
    if (!p)
        return 0;
    t->keys = p;
    char *name = strdup(k->kernel);
    if (!name)
        return 0;
    p[t->nkeys] = (rpl_prof_key){*k, 1};
    p[t->nkeys++].k.kernel = name;
    return 1;
}

/* Notes once per kernel that its launches cannot be measured. */
static int rpl_prof_once(rpl_session *s, uint64_t kernel_id)
{
    struct rpl_profile_state *t = s->prof;
    for (size_t i = 0; i < t->nnoted; i++)
        if (t->noted[i] == kernel_id)
            return 0;
    uint64_t *p = realloc(t->noted, (t->nnoted + 1) * sizeof *p);
    if (!p)
        return 0;
    t->noted = p;
    p[t->nnoted++] = kernel_id;
    return 1;
}

/* The launch's shape and key. @return 1: to be measured; 0: not (said so
 * when it is among the first of its key); < 0: out of memory. */
static int rpl_prof_key_of(rpl_cx *x, rpl_prof_launch *L, cl_uint *nwait, const cl_event **wait)
{
    rpl_session *s = x->s;
    struct rpl_profile_state *t = s->prof;
    RPL_TRY(rpl_launch_decode(x, &L->h, nwait, wait));
    L->seq = x->c->seq;
    if (s->api.clGetKernelInfo(L->h.k, CL_KERNEL_FUNCTION_NAME, sizeof L->kname - 1, L->kname, NULL) != CL_SUCCESS)
        snprintf(L->kname, sizeof L->kname, "kernel #%llu", (unsigned long long)L->h.kernel_id);
    cl_program prog = NULL;
    const uint8_t *hash = NULL;
    if (s->api.clGetKernelInfo(L->h.k, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL) != CL_SUCCESS ||
        !rpl_progsrc_of_live(s, prog, &L->src, &L->opts, &hash)) {
        if (rpl_prof_once(s, L->h.kernel_id))
            rpl_prof_note(s, "launch #%llu (%s): skipped: its program was not made from source (a binary, IL "
                          "or a link), so it has no key", (unsigned long long)L->seq, L->kname);
        return 0;
    }
    cdb_key *k = &L->key;
    memcpy(k->program, hash, 16);
    k->kernel = L->kname;
    k->dim = L->h.dim;
    uint64_t groups[3] = {1, 1, 1};
    for (unsigned d = 0; d < 3; d++) {
        k->gsz[d] = d < L->h.dim ? L->h.gsz[d] : 1;
        k->lsz[d] = !L->h.has_lsz ? 0 : d < L->h.dim ? L->h.lsz[d] : 1;
        groups[d] = k->lsz[d] ? (k->gsz[d] + k->lsz[d] - 1) / k->lsz[d] : k->gsz[d];
    }
    L->sdim = 0;
    for (unsigned d = L->h.dim; d-- > 0;)
        if (groups[d] >= 2) {
            L->sdim = d;
            break;
        }
    L->G = groups[L->sdim];
    L->other = 1;
    for (unsigned d = 0; d < L->h.dim; d++)
        if (d != L->sdim)
            L->other *= groups[d];
    L->unit = L->h.has_lsz ? L->h.lsz[L->sdim] : 1;
    uint64_t seen = rpl_prof_seen(t, k);
    if (!seen)
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    return seen <= t->o.launches && L->G && L->other;
}

/* The kernel's arguments as set. @return 1, or 0 with why in @p why. */
static int rpl_prof_args(rpl_session *s, rpl_prof_launch *L, char *why, size_t cap)
{
    cl_uint n = 0;
    if (s->api.clGetKernelInfo(L->h.k, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL) != CL_SUCCESS) {
        snprintf(why, cap, "its number of arguments cannot be queried");
        return 0;
    }
    if (n > RPL_MAX_KARGS) {
        snprintf(why, cap, "more than %d arguments", RPL_MAX_KARGS);
        return 0;
    }
    rpl_obj *ko = rpl_obj_find(s, L->h.kernel_id);
    const rpl_kargs *ka = ko ? ko->kargs : NULL;
    L->nargs = n;
    for (unsigned i = 0; i < n; i++) {
        const rpl_karg *g = ka && i < ka->n ? &ka->a[i] : NULL;
        rpl_prof_arg *a = &L->args[i];
        if (!g || !g->set) {
            snprintf(why, cap, "argument %u was not set with clSetKernelArg (an SVM pointer?)", i);
            return 0;
        }
        a->size = g->size;
        a->value = g->value;
        if (!g->obj) {
            a->kind = g->has_value ? RPL_PROF_VALUE : RPL_PROF_LOCAL;
            continue;
        }
        if (g->obj != RPL_OBJ_MEM || !g->has_value || g->size != sizeof(cl_mem)) {
            snprintf(why, cap, "argument %u is %s", i, g->obj == RPL_OBJ_SAMPLER ? "a sampler"
                     : g->obj == RPL_OBJ_QUEUE ? "a device queue" : "an object other than a buffer");
            return 0;
        }
        cl_mem m;
        memcpy(&m, g->value, sizeof m);
        cl_mem_object_type ty = 0;
        size_t size = 0;
        if (s->api.clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof ty, &ty, NULL) != CL_SUCCESS ||
            s->api.clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS || !size) {
            snprintf(why, cap, "argument %u: its memory object cannot be queried", i);
            return 0;
        }
        if (ty != CL_MEM_OBJECT_BUFFER) {
            snprintf(why, cap, "argument %u is %s", i, ty == CL_MEM_OBJECT_PIPE ? "a pipe" : "an image");
            return 0;
        }
        a->kind = RPL_PROF_MEM;
        unsigned j = 0;
        while (j < L->nmems && L->app[j] != m)
            j++;
        if (j == L->nmems) {   /* one mirror per object: arguments that alias still do */
            L->app[j] = m;
            L->size[j] = size;
            L->nmems++;
        }
        a->mem = j;
    }
    return 1;
}

/* Reads every memory argument whole, the application's queue finished.
 * @return 1, or 0 with why in @p why. */
static int rpl_prof_inputs(rpl_session *s, rpl_prof_launch *L, cl_uint nwait, const cl_event *wait, char *why,
                           size_t cap)
{
    if (s->nuev) {   /* the queue may wait for a user event no replayed call has set yet */
        snprintf(why, cap, "user events are pending");
        return 0;
    }
    uint64_t total = 0;
    for (unsigned j = 0; j < L->nmems; j++)
        total += L->size[j];
    if (total > s->o.max_memory) {
        snprintf(why, cap, "its buffers hold %llu bytes, over the memory limit", (unsigned long long)total);
        return 0;
    }
    cl_int e = s->api.clFinish(L->h.q);
    if (e == CL_SUCCESS && nwait)
        e = s->api.clWaitForEvents(nwait, wait);
    if (e != CL_SUCCESS) {
        snprintf(why, cap, "waiting for the commands before it failed (error %d)", (int)e);
        return 0;
    }
    for (unsigned j = 0; j < L->nmems; j++) {
        if (!(L->bytes[j] = malloc(L->size[j]))) {
            snprintf(why, cap, "no memory for a copy of %zu bytes", L->size[j]);
            return 0;
        }
        e = s->api.clEnqueueReadBuffer(L->h.q, L->app[j], CL_TRUE, 0, L->size[j], L->bytes[j], 0, NULL, NULL);
        if (e != CL_SUCCESS) {
            snprintf(why, cap, "a buffer of %zu bytes cannot be read (error %d)", L->size[j], (int)e);
            return 0;
        }
    }
    return 1;
}

/* One run of @p k on @p d's queue with global size @p g: its device time. */
static cl_int rpl_prof_run(rpl_session *s, rpl_prof_dev *d, cl_kernel k, const rpl_prof_launch *L, const size_t *g,
                           uint64_t *ns)
{
    cl_event ev = NULL;
    cl_int e = s->api.clEnqueueNDRangeKernel(d->q, k, L->h.dim, L->h.has_off ? L->h.off : NULL, g,
                                             L->h.has_lsz ? L->h.lsz : NULL, 0, NULL, &ev);
    if (e == CL_SUCCESS)
        e = s->api.clWaitForEvents(1, &ev);
    cl_ulong b = 0, f = 0;
    if (e == CL_SUCCESS && (e = s->api.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof b, &b, NULL)) ==
        CL_SUCCESS)
        e = s->api.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof f, &f, NULL);
    if (ev)
        s->api.clReleaseEvent(ev);
    *ns = f > b ? f - b : 1;   /* a time of 0 is not a sample */
    return e;
}

static int rpl_prof_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The ladder on device @p d with kernel @p k, its arguments set. */
static void rpl_prof_ladder(rpl_session *s, rpl_prof_dev *d, cl_kernel k, const rpl_prof_launch *L,
                            rpl_profile_launch *out)
{
    struct rpl_profile_state *t = s->prof;
    uint64_t pts[8] = {L->G, 3 * L->G / 4, L->G / 2, L->G / 4, L->G / 8, L->G / 16, L->G / 32, 1};
    uint64_t *full = calloc(t->o.reps, sizeof *full);
    unsigned nfull = 0, runs = 0;
    int64_t t0 = rpl_clock_ns(), limit = (int64_t)(t->o.max_seconds * 1e9);
    uint64_t ns = 0;
    size_t g[3];
    memcpy(g, L->h.gsz, sizeof g);
    cl_int e = full ? rpl_prof_run(s, d, k, L, g, &ns) : CL_OUT_OF_HOST_MEMORY;   /* the warm-up */
    for (unsigned p = 0, last = 0; p < 8 && e == CL_SUCCESS && !out->stopped; p++) {
        if (!pts[p] || (p && pts[p] >= pts[last]))
            continue;   /* counts repeat for small G */
        last = p;
        uint64_t want = pts[p] * L->unit;
        g[L->sdim] = want < L->h.gsz[L->sdim] ? (size_t)want : L->h.gsz[L->sdim];
        unsigned r = 0;
        for (; r < t->o.reps && e == CL_SUCCESS; r++) {
            if (rpl_clock_ns() - t0 > limit) {
                out->stopped = 1;
                break;
            }
            if ((e = rpl_prof_run(s, d, k, L, g, &ns)) != CL_SUCCESS)
                break;
            runs++;
            if (cdb_add_kernel(t->db, d->identity, &L->key, pts[p] * L->other, ns) == CDB_OK) {
                out->samples++;
                t->sum.kernel_samples++;
            }
            if (!p)
                full[nfull++] = ns;
        }
        if (r)
            out->points++;
    }
    if (e != CL_SUCCESS)
        rpl_prof_note(s, "launch #%llu (%s) on device %s: %s (error %d)%s", (unsigned long long)L->seq, L->kname,
                      d->spec, full ? "clEnqueueNDRangeKernel failed" : "out of memory", (int)e,
                      out->samples ? ": measured in part" : "");
    else if (out->stopped)
        rpl_prof_note(s, "launch #%llu (%s) on device %s: stopped at %.3g s: %u work-group counts, %u runs",
                      (unsigned long long)L->seq, L->kname, d->spec, t->o.max_seconds, out->points, runs);
    if (nfull) {
        qsort(full, nfull, sizeof *full, rpl_prof_cmp_u64);
        out->full_ns = (int64_t)(nfull % 2 ? full[nfull / 2] : (full[nfull / 2 - 1] + full[nfull / 2]) / 2);
    }
    free(full);
}

/* Launch @p L on device @p di: mirrors, arguments, the ladder. @return 1
 * when samples were added. */
static int rpl_prof_on(rpl_session *s, const rpl_prof_launch *L, unsigned di)
{
    struct rpl_profile_state *t = s->prof;
    rpl_prof_dev *d = &t->devs[di];
    if (!d->ctx)
        return 0;
    cl_program prog = rpl_prof_program(s, di, L->key.program, L->src, L->opts, L->kname);
    if (!prog)
        return 0;
    cl_mem mir[RPL_MAX_KARGS] = {0};
    cl_int e = CL_SUCCESS;
    const char *what = "clCreateKernel";
    cl_kernel k = s->api.clCreateKernel(prog, L->kname, &e);
    for (unsigned j = 0; k && e == CL_SUCCESS && j < L->nmems; j++) {
        what = "a mirror buffer";
        mir[j] = s->api.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, L->size[j], L->bytes[j], &e);
    }
    for (unsigned i = 0; k && e == CL_SUCCESS && i < L->nargs; i++) {
        const rpl_prof_arg *a = &L->args[i];
        what = "clSetKernelArg";
        e = s->api.clSetKernelArg(k, i, a->size, a->kind == RPL_PROF_MEM ? (const void *)&mir[a->mem]
                                                 : a->kind == RPL_PROF_LOCAL ? NULL : a->value);
    }
    rpl_profile_launch out = {L->seq, &L->key, d->spec, d->identity, L->G * L->other, 0, 0, -1, 0};
    if (!k || e != CL_SUCCESS)
        rpl_prof_note(s, "launch #%llu (%s) on device %s: %s failed (error %d)", (unsigned long long)L->seq, L->kname,
                      d->spec, what, (int)e);
    else
        rpl_prof_ladder(s, d, k, L, &out);
    for (unsigned j = 0; j < L->nmems; j++)
        if (mir[j])
            s->api.clReleaseMemObject(mir[j]);
    if (k)
        s->api.clReleaseKernel(k);
    if (out.samples && t->o.on_launch)
        t->o.on_launch(t->o.user, &out);
    return out.samples > 0;
}

int rpl_profile_kernel(rpl_cx *x)
{
    rpl_session *s = x->s;
    struct rpl_profile_state *t = s->prof;
    if (!t || s->iter || s->after || !x->recorded_ok)
        return RPL_OK;
    rpl_prof_launch *L = calloc(1, sizeof *L);
    if (!L)
        return rpl_call_error(x, RPL_ERR_NOMEM, "out of memory");
    cl_uint nwait = 0;
    const cl_event *wait = NULL;
    char why[400] = "";
    int st = rpl_prof_key_of(x, L, &nwait, &wait);
    if (st > 0 && rpl_prof_args(s, L, why, sizeof why) && rpl_prof_inputs(s, L, nwait, wait, why, sizeof why)) {
        int any = 0;
        for (unsigned di = 0; di < t->ndevs; di++)
            any |= rpl_prof_on(s, L, di);
        if (any)
            t->sum.launches++;
        else
            t->sum.skipped++;
    } else if (st > 0) {
        rpl_prof_note(s, "launch #%llu (%s): skipped: %s", (unsigned long long)L->seq, L->kname, why);
        t->sum.skipped++;
    }
    for (unsigned j = 0; j < L->nmems; j++)
        free(L->bytes[j]);
    free(L);
    return st < 0 ? st : RPL_OK;
}
