/* rpl_cl.c — what the replay engine does with OpenCL outside a session
 * (the layer's split engine links it): the clock, every device here and
 * devices by spec (--device's rules), building a program's kernel, a
 * device's identity in the cost database (costs/cdb.h). */
#include "replayer/rpl_int.h"
#include "costs/cdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t rpl_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int rpl_devices_enumerate(const rpl_api_table *a, rpl_live_dev **out, unsigned *nout, char *err, size_t cap)
{
    rpl_live_dev *live = NULL;
    unsigned nlive = 0;
    int st = RPL_OK;
    *out = NULL;
    *nout = 0;
    cl_uint np = 0;
    if (!a->clGetPlatformIDs || a->clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || !np) {
        snprintf(err, cap, "no OpenCL platform found here (check /etc/OpenCL/vendors or OCL_ICD_VENDORS)");
        return RPL_ERR_DEVICE;
    }
    if (np > 64)
        np = 64;
    cl_platform_id plats[64];
    if (a->clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS) {
        snprintf(err, cap, "clGetPlatformIDs failed");
        return RPL_ERR_DEVICE;
    }
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (a->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || !nd)
            continue;
        if (nd > 64)
            nd = 64;
        cl_device_id devs[64];
        if (a->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL) != CL_SUCCESS)
            continue;
        rpl_live_dev *l = realloc(live, (nlive + nd) * sizeof *l);
        if (!l) {
            snprintf(err, cap, "out of memory");
            st = RPL_ERR_NOMEM;
            break;
        }
        live = l;
        for (cl_uint d = 0; d < nd; d++) {
            rpl_live_dev *x = &live[nlive++];
            memset(x, 0, sizeof *x);
            x->plat = plats[p];
            x->dev = devs[d];
            a->clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof x->type, &x->type, NULL);
            a->clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof x->name - 1, x->name, NULL);
            a->clGetDeviceInfo(devs[d], CL_DEVICE_VENDOR, sizeof x->vendor - 1, x->vendor, NULL);
            a->clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof x->pname - 1, x->pname, NULL);
        }
    }
    if (st == RPL_OK && !nlive) {
        snprintf(err, cap, "no OpenCL device found here");
        st = RPL_ERR_DEVICE;
    }
    if (st != RPL_OK) {
        free(live);
        return st;
    }
    *out = live;
    *nout = nlive;
    return RPL_OK;
}

int rpl_devices_pick(const rpl_live_dev *live, unsigned nlive, const char *spec, char *err, size_t cap)
{
    /* the rules are trace-format's (tf_devspec_pick), shared with the layer */
    tf_devspec_dev *d = nlive ? calloc(nlive, sizeof *d) : NULL;
    if (nlive && !d) {
        snprintf(err, cap, "--device %s: out of memory", spec);
        return -1;
    }
    for (unsigned i = 0; i < nlive; i++)
        d[i] = (tf_devspec_dev){live[i].name, live[i].pname, (uint64_t)live[i].type};
    int i = tf_devspec_pick(d, nlive, spec, err, cap);
    free(d);
    return i;
}

int rpl_device_pick(void *(*lookup)(void *user, const char *name), void *user, const char *spec, cl_device_id *dev,
                    cl_platform_id *plat, char *err, size_t cap)
{
    rpl_api_table a;
    memset(&a, 0, sizeof a);
    rpl_gen_fill_api(&a, lookup, user);
    rpl_live_dev *live = NULL;
    unsigned n = 0;
    int st = rpl_devices_enumerate(&a, &live, &n, err, cap) == RPL_OK ? 0 : -1;
    int i = st ? -1 : rpl_devices_pick(live, n, spec, err, cap);
    if (i >= 0) {
        *dev = live[i].dev;
        *plat = live[i].plat;
    } else if (!strncmp(err, "--device ", 9)) {
        memmove(err, err + 9, strlen(err + 9) + 1);
    }
    free(live);
    return i >= 0 ? 0 : -1;
}

int rpl_build_kernel(const rpl_api_table *api, cl_context ctx, cl_device_id dev, const char *source, const char *options,
                     const char *name, cl_program *prog_out, cl_kernel *k_out, char *err, size_t cap)
{
    *prog_out = NULL;
    *k_out = NULL;
    cl_int e = CL_SUCCESS;
    cl_program prog = api->clCreateProgramWithSource(ctx, 1, &source, NULL, &e);
    if (!prog || e != CL_SUCCESS) {
        snprintf(err, cap, "clCreateProgramWithSource: error %d", (int)e);
        return -1;
    }
    e = api->clBuildProgram(prog, 1, &dev, options ? options : "", NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[512] = "";
        api->clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        for (char *p = log; *p; p++)
            if (*p == '\n')
                *p = ' ';
        snprintf(err, cap, "building it failed (error %d): %.300s", (int)e, log);
        api->clReleaseProgram(prog);
        return -1;
    }
    cl_kernel k = api->clCreateKernel(prog, name, &e);
    if (!k || e != CL_SUCCESS) {
        snprintf(err, cap, "clCreateKernel %.64s: error %d", name, (int)e);
        api->clReleaseProgram(prog);
        return -1;
    }
    *prog_out = prog;
    *k_out = k;
    return 0;
}

static void rpl_dev_str(const rpl_api_table *a, cl_device_id d, cl_device_info what, char *dst, size_t cap)
{
    dst[0] = 0;
    if (a->clGetDeviceInfo(d, what, cap - 1, dst, NULL) != CL_SUCCESS)
        dst[0] = 0;
    dst[cap - 1] = 0;
}

int rpl_device_names(const rpl_api_table *a, cl_device_id dev, char *name, size_t name_cap, char *drv, size_t drv_cap)
{
    rpl_dev_str(a, dev, CL_DEVICE_NAME, name, name_cap);
    rpl_dev_str(a, dev, CL_DRIVER_VERSION, drv, drv_cap);
    return name[0] && drv[0];
}

int rpl_queue_device(const rpl_api_table *a, cl_command_queue q, cl_device_id *dev, char *name, size_t name_cap,
                     char *drv, size_t drv_cap)
{
    name[0] = drv[0] = 0;
    if (a->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof *dev, dev, NULL) != CL_SUCCESS) {
        *dev = NULL;
        return 0;
    }
    return rpl_device_names(a, *dev, name, name_cap, drv, drv_cap);
}

/* A device's identity string (cdb_identity) and what a snapshot lists. */
void rpl_device_describe(const rpl_api_table *a, cl_device_id dev, cl_platform_id plat, char *id, size_t id_cap,
                         char name[256], char pname[256], cl_device_type *type)
{
    char driver[256];
    cl_uint cu = 0;
    rpl_dev_str(a, dev, CL_DEVICE_NAME, name, 256);
    rpl_dev_str(a, dev, CL_DRIVER_VERSION, driver, sizeof driver);
    pname[0] = 0;
    if (a->clGetPlatformInfo(plat, CL_PLATFORM_NAME, 255, pname, NULL) != CL_SUCCESS)
        pname[0] = 0;
    pname[255] = 0;
    if (a->clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL) != CL_SUCCESS)
        cu = 0;
    *type = 0;
    if (a->clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof *type, type, NULL) != CL_SUCCESS)
        *type = 0;
    cdb_identity(id, id_cap, name, pname, driver, cu);
}

void rpl_device_identity_of(const rpl_api_table *a, cl_device_id dev, char *id, size_t cap)
{
    cl_platform_id plat = NULL;
    char name[256], pname[256];
    cl_device_type type;
    if (a->clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL) != CL_SUCCESS)
        plat = NULL;
    rpl_device_describe(a, dev, plat, id, cap, name, pname, &type);
}
