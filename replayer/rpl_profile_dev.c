/* rpl_profile_dev.c — cost learning's devices (rpl_opts.profile): the
 * devices to measure on, each with a context and a profiling queue of the
 * session's own; the cost database's snapshot of every device here; each
 * device's host <-> device transfer cost; programs built from their
 * recorded sources per device. The launches themselves: rpl_profile.c. */
#include "replayer/rpl_profile_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rpl_prof_note(rpl_session *s, const char *fmt, ...)
{
    struct rpl_profile_state *t = s->prof;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    t->sum.notes++;
    if (t->o.on_note)
        t->o.on_note(t->o.user, line);
}

static const char *rpl_prof_type(cl_device_type ty)
{
    return ty & CL_DEVICE_TYPE_GPU ? "gpu" : ty & CL_DEVICE_TYPE_CPU ? "cpu"
           : ty & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator" : "custom";
}

/* The snapshot: every device here, in `clrr devices` order. */
static int rpl_prof_snapshot(rpl_session *s, char *err, size_t cap)
{
    struct rpl_profile_state *t = s->prof;
    unsigned n = rpl_devmap_count(s);
    if (n > RPL_PROF_MAX_SNAPSHOT)
        n = RPL_PROF_MAX_SNAPSHOT;
    struct snap { char id[RPL_PROF_ID_CAP], name[256], pname[256]; } *sn = calloc(n ? n : 1, sizeof *sn);
    cdb_device *cd = calloc(n ? n : 1, sizeof *cd);
    int st = RPL_OK;
    if (!sn || !cd) {
        snprintf(err, cap, "out of memory");
        st = RPL_ERR_NOMEM;
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        cl_device_id dev = NULL;
        cl_platform_id plat = NULL;
        cl_device_type ty = 0;
        rpl_devmap_at(s, i, &dev, &plat);
        rpl_device_describe(&s->api, dev, plat, sn[i].id, sizeof sn[i].id, sn[i].name, sn[i].pname, &ty);
        cd[i] = (cdb_device){sn[i].id, rpl_prof_type(ty), sn[i].name, sn[i].pname};
    }
    cdb_status cs = cdb_set_devices(t->db, cd, n);
    if (cs != CDB_OK) {
        snprintf(err, cap, "the cost database's device snapshot: %s", cdb_strerror(cs));
        st = cs == CDB_ERR_NOMEM ? RPL_ERR_NOMEM : RPL_ERR_ARG;
    }
out:
    free(sn);
    free(cd);
    return st;
}

/* Adds live device @p dev (selected by @p spec) unless it is there already. */
static int rpl_prof_add_dev(rpl_session *s, const char *spec, cl_device_id dev, cl_platform_id plat)
{
    struct rpl_profile_state *t = s->prof;
    for (unsigned i = 0; i < t->ndevs; i++)
        if (t->devs[i].dev == dev) {
            if (!strcmp(spec, t->devs[i].spec))
                rpl_prof_note(s, "device %s is listed twice: profiled once", spec);
            else
                rpl_prof_note(s, "device %s is device %s: profiled once", spec, t->devs[i].spec);
            return 0;
        }
    if (t->ndevs == RPL_PROF_MAX_DEVS)
        return -1;
    rpl_prof_dev *d = &t->devs[t->ndevs++];
    memset(d, 0, sizeof *d);
    snprintf(d->spec, sizeof d->spec, "%s", spec);
    d->dev = dev;
    d->plat = plat;
    char name[256], pname[256];
    cl_device_type ty;
    rpl_device_describe(&s->api, dev, plat, d->identity, sizeof d->identity, name, pname, &ty);
    /* a context of our own, the queue's own device included: nothing of
     * the application is touched */
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    cl_int e = CL_SUCCESS;
    d->ctx = s->api.clCreateContext(props, 1, &dev, NULL, NULL, &e);
    if (!d->ctx || e != CL_SUCCESS) {
        rpl_prof_note(s, "device %s (%s): clCreateContext failed (error %d): not profiled", spec, name, (int)e);
        d->ctx = NULL;
        return 0;
    }
    d->q = s->api.clCreateCommandQueue(d->ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
    if (!d->q || e != CL_SUCCESS) {
        rpl_prof_note(s, "device %s (%s): clCreateCommandQueue failed (error %d): not profiled", spec, name, (int)e);
        s->api.clReleaseContext(d->ctx);
        d->ctx = NULL;
        d->q = NULL;
    }
    return 0;
}

/* Host <-> device transfers of pinned memory (a mapped
 * CL_MEM_ALLOC_HOST_PTR buffer) to and from a device buffer, blocking,
 * wall time, sizes 4 KiB to 64 MiB (at most a quarter of the device's
 * largest allocation). */
static void rpl_prof_xfer(rpl_session *s, rpl_prof_dev *d)
{
    struct rpl_profile_state *t = s->prof;
    static const size_t sizes[] = {(size_t)4 << 10, (size_t)64 << 10, (size_t)1 << 20, (size_t)16 << 20,
                                   (size_t)64 << 20};
    cl_ulong max_alloc = 0;
    if (s->api.clGetDeviceInfo(d->dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL) != CL_SUCCESS)
        max_alloc = 0;
    size_t top = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] <= max_alloc / 4)
            top = sizes[i];
    if (!top) {
        rpl_prof_note(s, "device %s: its largest allocation is too small to measure transfers", d->spec);
        return;
    }
    cl_int e = CL_SUCCESS;
    const char *what = "clCreateBuffer";
    void *host = NULL;
    cl_mem dbuf = NULL, pin = s->api.clCreateBuffer(d->ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, top, NULL, &e);
    if (pin && e == CL_SUCCESS) {
        what = "clEnqueueMapBuffer";
        host = s->api.clEnqueueMapBuffer(d->q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, top, 0, NULL, NULL, &e);
    }
    if (host && e == CL_SUCCESS) {
        what = "clCreateBuffer";
        dbuf = s->api.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, top, NULL, &e);
    }
    if (dbuf && e == CL_SUCCESS) {
        memset(host, 0x5a, top);
        /* the first touch of either side's pages is not a transfer's cost */
        what = "a warm-up transfer";
        e = s->api.clEnqueueWriteBuffer(d->q, dbuf, CL_TRUE, 0, top, host, 0, NULL, NULL);
        if (e == CL_SUCCESS)
            e = s->api.clEnqueueReadBuffer(d->q, dbuf, CL_TRUE, 0, top, host, 0, NULL, NULL);
    }
    for (size_t i = 0; e == CL_SUCCESS && i < sizeof sizes / sizeof sizes[0] && sizes[i] <= top; i++)
        for (int dir = CDB_H2D; dir <= CDB_D2H && e == CL_SUCCESS; dir++)
            for (unsigned r = 0; r <= t->o.reps && e == CL_SUCCESS; r++) {   /* r 0: untimed */
                what = dir == CDB_H2D ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer";
                int64_t t0 = rpl_clock_ns();
                e = dir == CDB_H2D ? s->api.clEnqueueWriteBuffer(d->q, dbuf, CL_TRUE, 0, sizes[i], host, 0, NULL, NULL)
                                   : s->api.clEnqueueReadBuffer(d->q, dbuf, CL_TRUE, 0, sizes[i], host, 0, NULL, NULL);
                uint64_t ns = (uint64_t)(rpl_clock_ns() - t0);
                if (e == CL_SUCCESS && r && cdb_add_xfer(t->db, d->identity, dir, sizes[i], ns ? ns : 1) == CDB_OK)
                    t->sum.xfer_samples++;
            }
    if (e != CL_SUCCESS)
        rpl_prof_note(s, "device %s: transfers not measured: %s failed (error %d)", d->spec, what, (int)e);
    if (host)
        s->api.clEnqueueUnmapMemObject(d->q, pin, host, 0, NULL, NULL);
    s->api.clFinish(d->q);
    if (dbuf)
        s->api.clReleaseMemObject(dbuf);
    if (pin)
        s->api.clReleaseMemObject(pin);
}

int rpl_profile_open(rpl_session *s, char *err, size_t cap)
{
    const rpl_profile_opts *po = s->o.profile;
    if (s->o.exact_calls) {
        snprintf(err, cap, "profiling makes calls of its own: it cannot take --exact-calls");
        return RPL_ERR_ARG;
    }
    if (!po->costs || (po->ndevices && !po->devices) || po->ndevices > RPL_PROF_MAX_DEVS) {
        snprintf(err, cap, po->costs ? "more than %d devices to profile" : "profiling needs a cost database",
                 RPL_PROF_MAX_DEVS);
        return RPL_ERR_ARG;
    }
    struct rpl_profile_state *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, cap, "out of memory");
        return RPL_ERR_NOMEM;
    }
    s->prof = t;
    t->o = *po;
    t->db = po->costs;
    if (!t->o.reps)
        t->o.reps = 5;
    if (!t->o.launches)
        t->o.launches = 1;
    if (!(t->o.max_seconds > 0))
        t->o.max_seconds = 10;
    unsigned n = rpl_devmap_count(s);
    if (!n) {
        snprintf(err, cap, "no OpenCL device found here");
        return RPL_ERR_DEVICE;
    }
    int st = rpl_prof_snapshot(s, err, cap);
    if (st < 0)
        return st;
    for (unsigned i = 0; i < (po->ndevices ? po->ndevices : n) && i < RPL_PROF_MAX_SNAPSHOT; i++) {
        cl_device_id dev = NULL;
        cl_platform_id plat = NULL;
        char spec[32], e2[256];
        snprintf(spec, sizeof spec, "%u", i);
        const char *sp = po->ndevices ? po->devices[i] : spec;
        int bad = po->ndevices ? rpl_devmap_resolve(s, sp, &dev, &plat, e2, sizeof e2) < 0
                               : rpl_devmap_at(s, i, &dev, &plat) < 0;
        if (bad) {
            snprintf(err, cap, "--devices %s", po->ndevices ? e2 : spec);
            return RPL_ERR_ARG;
        }
        if (rpl_prof_add_dev(s, sp, dev, plat) < 0) {
            snprintf(err, cap, "more than %d devices to profile", RPL_PROF_MAX_DEVS);
            return RPL_ERR_ARG;
        }
    }
    for (unsigned i = 0; i < t->ndevs; i++) {
        t->specs[i] = t->devs[i].spec;
        t->ids[i] = t->devs[i].identity;
        if (t->devs[i].ctx)
            rpl_prof_xfer(s, &t->devs[i]);
    }
    t->sum.ndevices = t->ndevs;
    t->sum.specs = t->specs;
    t->sum.identities = t->ids;
    return RPL_OK;
}

cl_program rpl_prof_program(rpl_session *s, unsigned di, const uint8_t hash[16], const char *src, const char *opts,
                            const char *kernel)
{
    struct rpl_profile_state *t = s->prof;
    rpl_prof_dev *d = &t->devs[di];
    for (size_t i = 0; i < t->nbuilds; i++) {
        rpl_prof_build *b = &t->builds[i];
        if (b->dev == di && !memcmp(b->hash, hash, 16) && !strcmp(b->opts, opts))
            return b->prog;   /* NULL: it failed, and was said so */
    }
    rpl_prof_build *a = realloc(t->builds, (t->nbuilds + 1) * sizeof *a);
    char *o = strdup(opts);
    if (!a || !o) {
        if (a)
            t->builds = a;
        free(o);
        return NULL;
    }
    t->builds = a;
    rpl_prof_build *b = &t->builds[t->nbuilds++];
    memset(b, 0, sizeof *b);
    memcpy(b->hash, hash, 16);
    b->opts = o;
    b->dev = di;
    cl_kernel k = NULL;
    char why[400];
    if (rpl_build_kernel(&s->api, d->ctx, d->dev, src, opts, kernel, &b->prog, &k, why, sizeof why) < 0) {
        rpl_prof_note(s, "device %s: the program of kernel %s does not build there: %s", d->spec, kernel, why);
        b->prog = NULL;
        return NULL;
    }
    s->api.clReleaseKernel(k);
    return b->prog;
}

void rpl_profile_free(rpl_session *s)
{
    struct rpl_profile_state *t = s->prof;
    if (!t)
        return;
    for (size_t i = 0; i < t->nbuilds; i++) {
        if (t->builds[i].prog)
            s->api.clReleaseProgram(t->builds[i].prog);
        free(t->builds[i].opts);
    }
    for (unsigned i = 0; i < t->ndevs; i++) {
        if (t->devs[i].q)
            s->api.clReleaseCommandQueue(t->devs[i].q);
        if (t->devs[i].ctx)
            s->api.clReleaseContext(t->devs[i].ctx);
    }
    for (size_t i = 0; i < t->nkeys; i++)
        free((char *)t->keys[i].k.kernel);
    free(t->keys);
    free(t->noted);
    free(t->builds);
    free(t);
    s->prof = NULL;
}

void rpl_profile_get(const rpl_session *s, rpl_profile_summary *out)
{
    memset(out, 0, sizeof *out);
    if (s && s->prof)
        *out = s->prof->sum;
}
