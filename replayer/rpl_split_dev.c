/* rpl_split_dev.c — the split engine itself (rpl.h, "split engine"): made
 * and freed; the objects' versions (which bytes a mirror holds are of
 * which version of the object); devices by spec, with a context and queue
 * of the engine's own; pinned staging; partition-ready kernels, built
 * once per context and device; mirrors of the application's buffers; what
 * rpl_splitter_prepare makes ahead. One launch: rpl_splitter.c. */
#include "replayer/rpl_split_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rpl_splitter *rpl_splitter_new(const rpl_splitter_opts *o)
{
    rpl_splitter *x = calloc(1, sizeof *x);
    if (!x || !(x->copies = calloc(RPL_SPLIT_MAX_COPIES, sizeof *x->copies))) {
        free(x);
        return NULL;
    }
    x->o = *o;
    rpl_gen_fill_api(&x->api, o->lookup, o->user);
    return x;
}

void rpl_split_unpin(rpl_splitter *x, rpl_split_dev *d)
{
    if (!d->pin)
        return;
    x->api.clEnqueueUnmapMemObject(d->q, d->pin, d->pin_ptr, 0, NULL, NULL);
    x->api.clFinish(d->q);
    x->api.clReleaseMemObject(d->pin);
    d->pin = NULL;
    d->pin_ptr = NULL;
    d->pin_size = 0;
}

void rpl_splitter_free(rpl_splitter *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->ncopies; i++)
        if (x->copies[i].buf)
            x->api.clReleaseMemObject(x->copies[i].buf);
    for (size_t i = 0; i < x->nbuilds; i++) {
        if (x->builds[i].k)
            x->api.clReleaseKernel(x->builds[i].k);
        if (x->builds[i].prog)
            x->api.clReleaseProgram(x->builds[i].prog);
        free(x->builds[i].opts);
        free(x->builds[i].name);
    }
    for (unsigned i = 0; i < x->nprims; i++) {
        rpl_split_unpin(x, &x->prims[i]);
        if (x->prims[i].q)
            x->api.clReleaseCommandQueue(x->prims[i].q);
    }
    for (unsigned i = 0; i < x->ndevs; i++) {
        rpl_split_unpin(x, &x->devs[i]);
        if (x->devs[i].q)
            x->api.clReleaseCommandQueue(x->devs[i].q);
        if (x->devs[i].ctx)
            x->api.clReleaseContext(x->devs[i].ctx);
    }
    free(x->copies);
    free(x->builds);
    free(x->adapt);
    free(x->epochs);
    free(x);
}

const rpl_split_stats *rpl_splitter_stats(const rpl_splitter *x)
{
    return &x->st;
}

/* ------------------------------------------------------------ versions */

rpl_split_epoch *rpl_split_epoch_of(rpl_splitter *x, uint64_t key)
{
    for (size_t i = 0; i < x->nepochs; i++)
        if (x->epochs[i].key == key)
            return &x->epochs[i];
    return NULL;
}

void rpl_splitter_wrote(rpl_splitter *x, uint64_t key)
{
    rpl_split_epoch *e = x ? rpl_split_epoch_of(x, key) : NULL;
    if (e)
        e->epoch++;
}

void rpl_splitter_touch(rpl_splitter *x)
{
    if (x)
        x->gen++;
}

void rpl_splitter_forget(rpl_splitter *x, uint64_t key)
{
    if (!x || !key)
        return;
    for (size_t i = 0; i < x->ncopies;) {
        if (x->copies[i].key == key) {
            x->api.clReleaseMemObject(x->copies[i].buf);
            x->copies[i] = x->copies[--x->ncopies];
        } else {
            i++;
        }
    }
    rpl_split_epoch *e = rpl_split_epoch_of(x, key);
    if (e)
        *e = x->epochs[--x->nepochs];
}

void rpl_splitter_call(rpl_splitter *x, const tf_call *c, const uint64_t *kmems, unsigned nkmems)
{
    const char *n = c->sig->name;
    if (!x || strncmp(n, "clEnqueue", 9) || !strncmp(n, "clEnqueueRead", 13) || !strncmp(n, "clEnqueueMap", 12) ||
        !strncmp(n, "clEnqueueSVM", 12) || !strcmp(n, "clEnqueueMarker") || !strcmp(n, "clEnqueueBarrier") ||
        !strncmp(n, "clEnqueueMarkerWith", 19) || !strncmp(n, "clEnqueueBarrierWith", 20) ||
        !strcmp(n, "clEnqueueWaitForEvents") || !strcmp(n, "clEnqueueMigrateMemObjects"))
        return;
    if (!strcmp(n, "clEnqueueNDRangeKernel") || !strcmp(n, "clEnqueueTask")) {
        if (!kmems) {
            x->gen++;
            return;
        }
        for (unsigned i = 0; i < nkmems; i++)
            rpl_splitter_wrote(x, kmems[i]);
        return;
    }
    for (uint32_t i = 0; i < c->sig->nparams; i++) {
        const tf_param *p = &c->sig->params[i];
        if (strstr(p->type, "cl_mem") && strcmp(p->type, "cl_mem")) {
            x->gen++;   /* an array of memory objects (GL/EGL acquire, native kernels) */
            return;
        }
        uint64_t id = 0;
        if (strcmp(p->type, "cl_mem") || !strncmp(p->name, "src", 3) || !tf_value_u64(&c->args[i], &id) || !id)
            continue;
        rpl_splitter_wrote(x, id);
    }
}

/* ------------------------------------------------------------ devices, staging, builds, mirrors */

/* The engine's device for @p spec; *primary 1 when it is @p qdev. */
int rpl_split_dev_of(rpl_splitter *x, const char *spec, cl_device_id qdev, rpl_split_dev **out, int *primary,
                            char *err, size_t cap)
{
    rpl_split_dev *d = NULL;
    for (unsigned i = 0; i < x->ndevs && !d; i++)
        if (!strcmp(x->devs[i].spec, spec))
            d = &x->devs[i];
    if (!d) {
        if (x->ndevs == RPL_SPLIT_MAX_DEVS) {
            snprintf(err, cap, "more than %d devices", RPL_SPLIT_MAX_DEVS);
            return -1;
        }
        cl_device_id dev = NULL;
        cl_platform_id plat = NULL;
        if (x->o.resolve ? x->o.resolve(x->o.user, spec, &dev, &plat, err, cap) < 0
                         : rpl_device_pick(x->o.lookup, x->o.user, spec, &dev, &plat, err, cap) < 0)
            return -1;
        d = &x->devs[x->ndevs++];
        memset(d, 0, sizeof *d);
        snprintf(d->spec, sizeof d->spec, "%s", spec);
        d->dev = dev;
        d->plat = plat;
    }
    *out = d;
    *primary = d->dev == qdev;
    if (*primary || d->ctx)
        return 0;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->plat, 0};
    cl_int e = CL_SUCCESS;
    d->ctx = x->api.clCreateContext(props, 1, &d->dev, NULL, NULL, &e);
    if (!d->ctx || e != CL_SUCCESS) {
        snprintf(err, cap, "device %.64s: clCreateContext failed (error %d)", spec, (int)e);
        d->ctx = NULL;
        return -1;
    }
    d->q = x->api.clCreateCommandQueue(d->ctx, d->dev, CL_QUEUE_PROFILING_ENABLE, &e);
    if (!d->q || e != CL_SUCCESS) {
        snprintf(err, cap, "device %.64s: clCreateCommandQueue failed (error %d)", spec, (int)e);
        x->api.clReleaseContext(d->ctx);
        d->ctx = NULL;
        d->q = NULL;
        return -1;
    }
    return 0;
}

/* Host memory that @p d's transfers reach at full speed (pageable memory
 * goes through the driver's own staging, several times slower): a mapped
 * CL_MEM_ALLOC_HOST_PTR buffer of at least @p need bytes, grown when a
 * launch needs more. NULL when the device cannot give one (then malloc). */
uint8_t *rpl_split_pinned(rpl_splitter *x, rpl_split_dev *d, size_t need)
{
    if (d->pin_launch != x->launches) {   /* a new launch: all of it is free */
        d->pin_launch = x->launches;
        d->pin_used = 0;
    }
    if (d->pin && d->pin_size - d->pin_used >= need) {
        d->pin_used += need;
        return d->pin_ptr + d->pin_used - need;
    }
    if (d->pin_used)   /* another part of this launch holds it */
        return NULL;
    rpl_split_unpin(x, d);
    /* a quarter more than asked: adapted proportions grow a part by a few
     * groups at a time, and making pinned memory costs milliseconds */
    size_t size = (need + need / 4 + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    cl_int e = CL_SUCCESS;
    cl_mem b = x->api.clCreateBuffer(d->ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, size, NULL, &e);
    if (!b || e != CL_SUCCESS)
        return NULL;
    void *p = x->api.clEnqueueMapBuffer(d->q, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL, NULL, &e);
    if (!p || e != CL_SUCCESS) {
        x->api.clReleaseMemObject(b);
        return NULL;
    }
    d->pin = b;
    d->pin_ptr = p;
    d->pin_size = size;
    d->pin_used = need;
    return d->pin_ptr;
}

/* The staging of a queue's device @p dev in the application's context
 * @p ctx (made on first use); NULL when there is none. */
rpl_split_dev *rpl_split_prim(rpl_splitter *x, cl_context ctx, cl_device_id dev)
{
    for (unsigned i = 0; i < x->nprims; i++)
        if (x->prims[i].ctx == ctx && x->prims[i].dev == dev)
            return x->prims[i].q ? &x->prims[i] : NULL;
    if (x->nprims == RPL_SPLIT_MAX_DEVS)
        return NULL;
    rpl_split_dev *d = &x->prims[x->nprims++];
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->dev = dev;
    cl_int e = CL_SUCCESS;
    d->q = x->api.clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS)
        d->q = NULL;
    return d->q ? d : NULL;
}

/* The partition-ready kernel of split @p sp in context @p ctx (built
 * once; the program once for the splits that share its source, options
 * and kernel: a plan splits every launch of a kernel, and each build, even
 * one PoCL finds in its cache, preprocesses the source again: exposure's
 * 34 splits of 13 kernels on two devices were 68 builds, now 26). */
cl_kernel rpl_split_kernel(rpl_splitter *x, const rpl_split *sp, cl_context ctx, cl_device_id dev, int ahead,
                                  char *err, size_t cap)
{
    for (size_t i = 0; i < x->nbuilds; i++)
        if (x->builds[i].id == sp->id && x->builds[i].ctx == ctx && x->builds[i].dev == dev) {
            if (!x->builds[i].k)
                snprintf(err, cap, "%.150s", x->builds[i].why);
            return x->builds[i].k;
        }
    rpl_split_build *b = realloc(x->builds, (x->nbuilds + 1) * sizeof *b);
    if (!b) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    x->builds = b;
    b = &x->builds[x->nbuilds++];
    memset(b, 0, sizeof *b);
    b->id = sp->id;
    b->ctx = ctx;
    b->dev = dev;
    if (ahead)
        x->st.built_ahead++;
    else
        x->st.built_late++;
    tf_blobref h;
    const char *opts = sp->options ? sp->options : "";
    tf_hash(sp->source, strlen(sp->source), &h);
    memcpy(b->src, h.hash, 16);
    b->opts = strdup(opts);
    b->name = strdup(sp->name);
    for (size_t i = 0; b->opts && b->name && i + 1 < x->nbuilds; i++) {
        rpl_split_build *o = &x->builds[i];
        if (o->prog && o->opts && o->name && o->ctx == ctx && o->dev == dev && !memcmp(o->src, b->src, 16) &&
            !strcmp(o->opts, opts) && !strcmp(o->name, sp->name)) {
            cl_int e = CL_SUCCESS;
            b->k = x->api.clCreateKernel(o->prog, sp->name, &e);
            if (b->k && e == CL_SUCCESS && x->api.clRetainProgram && x->api.clRetainProgram(o->prog) == CL_SUCCESS) {
                b->prog = o->prog;
                return b->k;
            }
            if (b->k)
                x->api.clReleaseKernel(b->k);
            b->k = NULL;
            break;   /* built on its own below */
        }
    }
    x->st.programs++;
    if (rpl_build_kernel(&x->api, ctx, dev, sp->source, sp->options, sp->name, &b->prog, &b->k, b->why,
                         sizeof b->why) < 0)
        snprintf(err, cap, "%.150s", b->why);
    return b->k;
}

/* The mirror of the object of @p key (@p size bytes) on @p d. */
rpl_split_copy *rpl_split_copy_of(rpl_splitter *x, rpl_split_dev *d, uint64_t key, uint64_t size, char *err,
                                         size_t cap)
{
    for (size_t i = 0; i < x->ncopies; i++)
        if (x->copies[i].key == key && x->copies[i].dev == d->dev && x->copies[i].size == size) {
            x->copies[i].used = x->launches;
            return &x->copies[i];
        }
    if (!(key & RPL_SPLIT_KEY_UNTRUSTED) && !rpl_split_epoch_of(x, key)) {
        if (x->nepochs == x->capepochs) {
            size_t n = x->capepochs ? 2 * x->capepochs : 16;
            rpl_split_epoch *e = realloc(x->epochs, n * sizeof *e);
            if (!e) {
                snprintf(err, cap, "out of memory");
                return NULL;
            }
            x->epochs = e;
            x->capepochs = n;
        }
        x->epochs[x->nepochs++] = (rpl_split_epoch){key, 1};
    }
    rpl_split_copy *c = NULL;
    if (x->ncopies == RPL_SPLIT_MAX_COPIES) {   /* the least recently used one goes */
        c = &x->copies[0];
        for (size_t i = 1; i < x->ncopies; i++)
            if (x->copies[i].used < c->used)
                c = &x->copies[i];
        if (c->used == x->launches) {
            snprintf(err, cap, "more than %d buffers on other devices in one launch", RPL_SPLIT_MAX_COPIES);
            return NULL;
        }
        x->api.clReleaseMemObject(c->buf);
    } else {
        c = &x->copies[x->ncopies++];
    }
    memset(c, 0, sizeof *c);
    cl_int e = CL_SUCCESS;
    c->buf = x->api.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, size ? (size_t)size : 1, NULL, &e);
    if (!c->buf || e != CL_SUCCESS) {
        snprintf(err, cap, "device %.64s: a buffer of %llu bytes: clCreateBuffer failed (error %d)", d->spec,
                 (unsigned long long)size, (int)e);
        *c = x->copies[--x->ncopies];
        return NULL;
    }
    c->key = key;
    c->dev = d->dev;
    c->size = size;
    c->used = x->launches;
    return c;
}

void rpl_split_span(const rpl_split_region *r, uint64_t *lo, uint64_t *hi)
{
    *lo = r->read ? r->rlo : UINT64_MAX;
    *hi = r->read ? r->rhi : 0;
    if (r->write) {
        *lo = r->wlo < *lo ? r->wlo : *lo;
        *hi = r->whi > *hi ? r->whi : *hi;
    }
}

size_t rpl_split_stage_need(const rpl_split *sp, const rpl_split_part *part)
{
    size_t need = 0;
    for (unsigned a = 0; a < sp->nargs; a++) {
        const rpl_split_region *r = &part->regions[a];
        if (sp->args[a] == RPL_SPLIT_ARG_MEM)
            need += (size_t)((r->read ? r->rhi - r->rlo : 0) + (r->write ? 3 * (r->whi - r->wlo) : 0)) + 192;
    }
    return need;
}

/* Pinned staging as large as the plan's parts need, made now: pinning
 * tens of MiB costs milliseconds, which the first launch should not pay.
 * Per other device: what its parts are sent and bring back (as a launch
 * takes it); on the queue's device (one of @p in): the bytes read for the
 * others and their results written back. */
static void rpl_split_stage_ahead(rpl_splitter *x, const rpl_split *sp, cl_context ctx, const cl_device_id *in,
                                  size_t nin)
{
    size_t need[RPL_SPLIT_MAX_DEVS] = {0}, prim_need = 0;
    cl_device_id qdev = NULL;
    for (unsigned p = 0; p < sp->nparts && sp->nargs <= RPL_SPLIT_MAX_ARGS; p++) {
        rpl_split_dev *d = NULL;
        for (unsigned i = 0; i < x->ndevs && !d; i++)
            if (!strcmp(x->devs[i].spec, sp->parts[p].device))
                d = &x->devs[i];
        if (!d)
            continue;
        int primary = 0;
        for (size_t i = 0; i < nin; i++)
            primary |= in[i] == d->dev;
        if (primary) {
            qdev = d->dev;
            continue;
        }
        if (!d->ctx)
            continue;
        need[d - x->devs] += rpl_split_stage_need(sp, &sp->parts[p]);
        for (unsigned a = 0; a < sp->nargs; a++) {   /* on the queue's device: read for it, written back */
            const rpl_split_region *r = &sp->parts[p].regions[a];
            uint64_t lo, hi;
            rpl_split_span(r, &lo, &hi);
            if (sp->args[a] == RPL_SPLIT_ARG_MEM)
                prim_need += (size_t)(lo < hi ? hi - lo : 0) + (size_t)(r->write ? r->whi - r->wlo : 0);
        }
    }
    for (unsigned i = 0; i < x->ndevs; i++)
        if (need[i] && rpl_split_pinned(x, &x->devs[i], need[i]))
            x->devs[i].pin_used = 0;
    rpl_split_dev *prim = qdev && prim_need ? rpl_split_prim(x, ctx, qdev) : NULL;
    if (prim && rpl_split_pinned(x, prim, prim_need))
        prim->pin_used = 0;
}

void rpl_splitter_prepare(rpl_splitter *x, const rpl_split *sp, cl_context ctx)
{
    cl_device_id in[64];
    size_t n = 0;
    if (!x || !ctx || x->api.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof in, in, &n) != CL_SUCCESS)
        return;
    n /= sizeof in[0];
    for (unsigned p = 0; p < sp->nparts; p++) {
        rpl_split_dev *d = NULL;
        char err[256];
        int primary = 0;
        for (size_t i = 0; i < n; i++)   /* one of the context's devices: the queue's, likely */
            if (rpl_split_dev_of(x, sp->parts[p].device, in[i], &d, &primary, err, sizeof err) == 0 && primary) {
                rpl_split_kernel(x, sp, ctx, in[i], 1, err, sizeof err);
                break;
            }
        if (d && !primary)
            rpl_split_kernel(x, sp, d->ctx, d->dev, 1, err, sizeof err);
    }
    rpl_split_stage_ahead(x, sp, ctx, in, n);
}
