/* rpl_tune.c — local sizes other than the recorded one: a plan's tuned
 * local size (plan 1.10, rpl_plan_hook.local_size) applied to a launch
 * where it is legal, and the single-launch sessions of work-group size
 * tuning (rpl_tune_probe, rpl_tune_time, rpl_tune_hash: rpl.h), which
 * replay a trace up to one launch and run that launch with candidate
 * local sizes on its exact recorded inputs. */
#include "replayer/rpl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef struct rpl_tune_state rpl_tune_state_t;
enum { RPL_TUNE_PROBE = 0, RPL_TUNE_TIME = 1, RPL_TUNE_HASH = 2, RPL_TUNE_CO_HASH = 3, RPL_TUNE_CO_TIME = 4 };

struct rpl_tune_state {
    uint64_t seq;
    int mode;
    rpl_tune_limits *lim;     /* PROBE */
    const size_t (*cands)[3]; /* TIME */
    unsigned n, reps;
    int64_t *ns;
    const size_t *lsz;        /* HASH: NULL the recorded */
    const rpl_coarse *co;     /* CO_HASH, CO_TIME: the coarsened kernel */
    uint8_t *hash;
    int hashed, unhashable;
    unsigned launches;        /* launches of seq run so far */
    int cur;                  /* the candidate the running launch has (-1: recorded) */
};

/* 1 when local size @p l (dim entries) is legal for kernel @p k over
 * @p gsz on @p dev: each dimension within the device's item sizes and
 * dividing the global size, the product within the device's and the
 * kernel's work-group size, the kernel's required size kept. */
static int rpl_local_legal(const rpl_api_table *api, cl_device_id dev, cl_kernel k, cl_uint dim, const size_t *gsz,
                           const size_t *l)
{
    size_t dmax = 0, kmax = 0, items[3] = {0, 0, 0}, reqd[3] = {0, 0, 0};
    if (!dev || dim < 1 || dim > 3 || !gsz ||
        api->clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof dmax, &dmax, NULL) != CL_SUCCESS ||
        api->clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL) != CL_SUCCESS)
        return 0;
    size_t got = 0;
    if (api->clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, &got) != CL_SUCCESS)
        return 0;
    if (api->clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof reqd, reqd, NULL) !=
        CL_SUCCESS)
        reqd[0] = reqd[1] = reqd[2] = 0;
    if (reqd[0] || reqd[1] || reqd[2])
        return 0;   /* reqd_work_group_size: never retuned */
    size_t prod = 1;
    for (cl_uint d = 0; d < dim; d++) {
        if (!l[d] || (items[d] && l[d] > items[d]) || gsz[d] % l[d])
            return 0;
        prod *= l[d];
    }
    return prod <= dmax && prod <= kmax;
}

/* Launch @p *k over @p *gsz becomes coarsened kernel @p co over the
 * global size divided (its local size, or none): 1 when it does, 0 when
 * it cannot here (why in err; the launch is left as it was). */
static int rpl_coarse_swap(rpl_cx *x, cl_command_queue q, cl_kernel *k, cl_uint dim, const size_t **gsz,
                           const size_t **lsz, const rpl_coarse *co, char *err, size_t cap)
{
    rpl_session *s = x->s;
    if (co->dim >= dim || co->factor < 2 || !*gsz || (*gsz)[co->dim] % co->factor) {
        snprintf(err, cap, "coarsening by %u along dimension %u does not fit this launch", co->factor, co->dim);
        return 0;
    }
    size_t g[3] = {1, 1, 1};
    for (cl_uint d = 0; d < dim && d < 3; d++)
        g[d] = (*gsz)[d];
    g[co->dim] /= co->factor;
    rpl_obj *ko = rpl_obj_find(s, rpl_arg_id(x, 1));
    cl_kernel ck = rpl_coarse_kernel(s, q, co, ko, err, cap);
    if (!ck)
        return 0;
    if (co->has_local) {
        cl_device_id dev;
        char name[256], drv[128];
        rpl_queue_device(x->api, q, &dev, name, sizeof name, drv, sizeof drv);
        if (!rpl_local_legal(x->api, dev, ck, dim, g, co->local)) {
            snprintf(err, cap, "its local size is not legal here");
            return 0;
        }
        memcpy(s->local_buf, co->local, sizeof s->local_buf);
        *lsz = s->local_buf;
    } else {
        *lsz = NULL;
    }
    memcpy(s->coarse_gsz, g, sizeof g);
    *gsz = s->coarse_gsz;
    *k = ck;
    return 1;
}

int rpl_local_pre(rpl_cx *x, cl_command_queue q, cl_kernel *kp, cl_uint dim, const size_t **gszp, const size_t **lsz)
{
    rpl_session *s = x->s;
    rpl_tune_state_t *t = s->tune;
    const size_t *want = NULL, *gsz = *gszp;
    cl_kernel k = *kp;
    if (t && x->c->seq == t->seq && (t->mode == RPL_TUNE_CO_HASH || t->mode == RPL_TUNE_CO_TIME)) {
        unsigned i = t->launches++;
        t->cur = -1;
        if (t->mode == RPL_TUNE_CO_TIME && (i < 1 || (i - 1) % 2 == 0))
            return RPL_OK;   /* the recorded launch (warm-up and baseline) */
        char err[320];
        if (!rpl_coarse_swap(x, q, kp, dim, gszp, lsz, t->co, err, sizeof err))
            return rpl_call_error(x, RPL_ERR_ARG, "tuning: the coarsened kernel %s: %s", t->co->name, err);
        return RPL_OK;
    }
    if (t && x->c->seq == t->seq) {
        unsigned i = t->launches++;
        t->cur = -1;
        if (t->mode == RPL_TUNE_PROBE) {
            rpl_tune_limits *L = t->lim;
            cl_device_id dev;
            rpl_queue_device(x->api, q, &dev, L->device, sizeof L->device, L->driver, sizeof L->driver);
            L->dim = dim;
            for (cl_uint d = 0; d < dim && d < 3 && gsz; d++)
                L->global[d] = gsz[d];
            L->has_local = *lsz != NULL;
            for (cl_uint d = 0; d < dim && d < 3 && *lsz; d++)
                L->local[d] = (*lsz)[d];
            if (dev) {
                rpl_device_identity_of(x->api, dev, L->identity, sizeof L->identity);
                x->api->clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof L->version, L->version, NULL);
                L->version[sizeof L->version - 1] = 0;
                x->api->clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof L->dev_max_wg, &L->dev_max_wg,
                                        NULL);
                x->api->clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof L->dev_max_items,
                                        L->dev_max_items, NULL);
                x->api->clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof L->kernel_wg,
                                                 &L->kernel_wg, NULL);
                x->api->clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                                 sizeof L->pref_multiple, &L->pref_multiple, NULL);
                if (x->api->clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof L->reqd,
                                                     L->reqd, NULL) != CL_SUCCESS)
                    memset(L->reqd, 0, sizeof L->reqd);
            }
            rpl_obj *ko = rpl_obj_find(s, rpl_arg_id(x, 1));
            if (ko && ko->name)
                snprintf(L->kernel, sizeof L->kernel, "%s", ko->name);
            L->hashable = 1;
            for (unsigned a = 0; ko && a < RPL_MAX_KARGS; a++) {
                rpl_obj *m = ko->args[a] ? rpl_obj_find(s, ko->args[a]) : NULL;
                cl_mem_object_type ty = 0;
                if (m && m->live &&
                    (x->api->clGetMemObjectInfo((cl_mem)m->live, CL_MEM_TYPE, sizeof ty, &ty, NULL) != CL_SUCCESS ||
                     ty != CL_MEM_OBJECT_BUFFER))
                    L->hashable = 0;
            }
            return RPL_OK;
        }
        if (t->mode == RPL_TUNE_TIME && i >= 1) {
            t->cur = (int)((i - 1) % t->n);
            if (t->cands[t->cur][0])
                want = t->cands[t->cur];
        }
        if (t->mode == RPL_TUNE_HASH && t->lsz)
            want = t->lsz;
        if (!want)
            return RPL_OK;
        cl_device_id dev;
        char name[256], drv[128];
        rpl_queue_device(x->api, q, &dev, name, sizeof name, drv, sizeof drv);
        if (!rpl_local_legal(x->api, dev, k, dim, gsz, want))
            return rpl_call_error(x, RPL_ERR_ARG, "tuning: local size %zu,%zu,%zu is not legal for this launch here",
                                  want[0], dim > 1 ? want[1] : 1, dim > 2 ? want[2] : 1);
    } else if (s->plan_local_pending) {
        s->plan_local_pending = 0;
        cl_device_id dev;
        char name[256], drv[128];
        size_t l[3] = {1, 1, 1};
        rpl_queue_device(x->api, q, &dev, name, sizeof name, drv, sizeof drv);
        rpl_coarse co;
        memset(&co, 0, sizeof co);
        if (s->o.plan && s->o.plan->coarsen && s->o.plan->coarsen(s->o.plan->user, name, drv, &co) == 1) {
            char err[320];
            if (rpl_coarse_swap(x, q, kp, dim, gszp, lsz, &co, err, sizeof err)) {
                s->sum.plan_coarsened++;
            } else {
                if (!s->sum.plan_coarsen_fallback++ && !s->sum.plan_unbuilt[0])
                    snprintf(s->sum.plan_unbuilt, sizeof s->sum.plan_unbuilt, "%.64s: %.250s", co.name, err);
            }
            return RPL_OK;
        }
        if (!s->o.plan || !s->o.plan->local_size || s->o.plan->local_size(s->o.plan->user, name, drv, l) != 1) {
            s->sum.plan_local_unmeasured++;
            return RPL_OK;
        }
        if (!rpl_local_legal(x->api, dev, k, dim, gsz, l)) {
            s->sum.plan_local_refused++;
            return RPL_OK;
        }
        memcpy(s->local_buf, l, sizeof l);
        want = s->local_buf;
        s->sum.plan_local++;
    } else {
        return RPL_OK;
    }
    if (want != s->local_buf)
        memcpy(s->local_buf, want, 3 * sizeof *want);
    *lsz = s->local_buf;
    return RPL_OK;
}

int rpl_local_post(rpl_cx *x, int ok, cl_command_queue q, cl_int ret)
{
    rpl_session *s = x->s;
    rpl_tune_state_t *t = s->tune;
    if (!t || x->c->seq != t->seq || (t->mode != RPL_TUNE_HASH && t->mode != RPL_TUNE_CO_HASH) || t->hashed)
        return RPL_OK;
    if (!ok)
        return rpl_call_error(x, RPL_ERR_CL, "tuning: the launch failed (error %d)", (int)ret);
    t->hashed = 1;
    if (x->api->clFinish(q) != CL_SUCCESS)
        return rpl_call_error(x, RPL_ERR_CL, "tuning: clFinish failed after the launch");
    rpl_obj *ko = rpl_obj_find(s, rpl_arg_id(x, 1));
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return rpl_set_error(s, RPL_ERR_NOMEM, "tuning: out of memory");
    XXH3_128bits_reset(st);
    int rc = RPL_OK;
    for (unsigned a = 0; ko && a < RPL_MAX_KARGS && rc == RPL_OK; a++) {
        rpl_obj *m = ko->args[a] ? rpl_obj_find(s, ko->args[a]) : NULL;
        if (!m || !m->live)
            continue;
        cl_mem mem = (cl_mem)m->live;
        cl_mem_object_type ty = 0;
        size_t size = 0;
        if (x->api->clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof ty, &ty, NULL) != CL_SUCCESS ||
            ty != CL_MEM_OBJECT_BUFFER ||
            x->api->clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS) {
            t->unhashable = 1;
            break;
        }
        void *buf = malloc(size ? size : 1);
        if (!buf) {
            rc = rpl_set_error(s, RPL_ERR_NOMEM, "tuning: out of memory (%zu bytes)", size);
            break;
        }
        if (x->api->clEnqueueReadBuffer(q, mem, CL_TRUE, 0, size, buf, 0, NULL, NULL) != CL_SUCCESS)
            rc = rpl_call_error(x, RPL_ERR_CL, "tuning: reading argument %u back failed", a);
        else {
            XXH3_128bits_update(st, &a, sizeof a);
            XXH3_128bits_update(st, buf, size);
        }
        free(buf);
    }
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
    memcpy(t->hash, c.digest, 16);
    XXH3_freeState(st);
    return rc;
}

/* on_time: the device time of each timed run of the launch. */
static void rpl_tune_on_time(void *user, const rpl_cmd_time *ct)
{
    rpl_tune_state_t *t = user;
    if (ct->seq != t->seq || (t->mode != RPL_TUNE_TIME && t->mode != RPL_TUNE_CO_TIME) || ct->loop < 1 + t->n)
        return;
    unsigned i = ct->loop - 1 - t->n;   /* the timed runs, from 0 */
    if (i < t->n * t->reps)
        t->ns[i] = ct->device_ns;
}

/* One single-launch session of mode t->mode; RPL_OK or an error with err. */
static rpl_status rpl_tune_session(const char *path, const rpl_opts *base, rpl_tune_state_t *t, unsigned loops,
                                   char *err, size_t cap)
{
    rpl_opts o = *base;
    o.kernel = t->seq;
    o.first = o.last = 0;
    o.loop = loops;
    o.timing = t->mode == RPL_TUNE_TIME || t->mode == RPL_TUNE_CO_TIME;
    o.verify = 0;
    o.plan = NULL;
    o.profile = NULL;
    o.learn = NULL;
    o.user = t;
    o.on_time = rpl_tune_on_time;
    o.on_mismatch = NULL;
    o.on_progress = NULL;
    rpl_session *s = NULL;
    rpl_status st = rpl_open(&s, path, &o);
    if (st != RPL_OK) {
        snprintf(err, cap, "%s", rpl_open_error());
        return st;
    }
    s->tune = t;
    st = rpl_run(s);
    if (st != RPL_OK)
        snprintf(err, cap, "%s", rpl_error(s));
    else if (!t->launches) {
        snprintf(err, cap, "call #%llu did not run", (unsigned long long)t->seq);
        st = RPL_ERR_ARG;
    }
    rpl_close(s);
    return st;
}

rpl_status rpl_tune_probe(const char *path, const rpl_opts *o, uint64_t seq, rpl_tune_limits *out, char *err,
                          size_t cap)
{
    rpl_tune_state_t t;
    memset(&t, 0, sizeof t);
    memset(out, 0, sizeof *out);
    t.seq = seq;
    t.mode = RPL_TUNE_PROBE;
    t.lim = out;
    return rpl_tune_session(path, o, &t, 1, err, cap);
}

rpl_status rpl_tune_time(const char *path, const rpl_opts *o, uint64_t seq, const size_t (*cands)[3], unsigned n,
                         unsigned reps, int64_t *ns, char *err, size_t cap)
{
    if (!n || !reps || n > 4096 || reps > 1000) {
        snprintf(err, cap, "tuning: %u candidates, %u repetitions", n, reps);
        return RPL_ERR_ARG;
    }
    rpl_tune_state_t t;
    memset(&t, 0, sizeof t);
    t.seq = seq;
    t.mode = RPL_TUNE_TIME;
    t.cands = cands;
    t.n = n;
    t.reps = reps;
    t.ns = ns;
    for (unsigned i = 0; i < n * reps; i++)
        ns[i] = -1;
    return rpl_tune_session(path, o, &t, 1 + n + n * reps, err, cap);
}

rpl_status rpl_tune_hash(const char *path, const rpl_opts *o, uint64_t seq, const size_t *lsz, uint8_t h[16],
                         char *err, size_t cap)
{
    rpl_tune_state_t t;
    memset(&t, 0, sizeof t);
    t.seq = seq;
    t.mode = RPL_TUNE_HASH;
    t.lsz = lsz;
    t.hash = h;
    rpl_status st = rpl_tune_session(path, o, &t, 1, err, cap);
    if (st == RPL_OK && t.unhashable) {
        snprintf(err, cap, "an argument of the launch is not a buffer");
        return RPL_ERR_UNSUPPORTED;
    }
    return st;
}

rpl_status rpl_tune_coarse_hash(const char *path, const rpl_opts *o, uint64_t seq, const rpl_coarse *co,
                                uint8_t h[16], char *err, size_t cap)
{
    rpl_tune_state_t t;
    memset(&t, 0, sizeof t);
    t.seq = seq;
    t.mode = RPL_TUNE_CO_HASH;
    t.co = co;
    t.hash = h;
    rpl_status st = rpl_tune_session(path, o, &t, 1, err, cap);
    if (st == RPL_OK && t.unhashable) {
        snprintf(err, cap, "an argument of the launch is not a buffer");
        return RPL_ERR_UNSUPPORTED;
    }
    return st;
}

rpl_status rpl_tune_coarse_time(const char *path, const rpl_opts *o, uint64_t seq, const rpl_coarse *co,
                                unsigned reps, int64_t *ns, char *err, size_t cap)
{
    if (!reps || reps > 1000) {
        snprintf(err, cap, "tuning: %u repetitions", reps);
        return RPL_ERR_ARG;
    }
    rpl_tune_state_t t;
    memset(&t, 0, sizeof t);
    t.seq = seq;
    t.mode = RPL_TUNE_CO_TIME;
    t.co = co;
    t.n = 2;
    t.reps = reps;
    t.ns = ns;
    for (unsigned i = 0; i < 2 * reps; i++)
        ns[i] = -1;
    return rpl_tune_session(path, o, &t, 1 + 2 + 2 * reps, err, cap);
}
