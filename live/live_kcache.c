/* live_kcache.c — the layer's programs of generated kernels (fused,
 * specialized, ...) built through the kernel binary cache (costs/cdb.h,
 * COSTS.md "The kernel binary cache"): a program of one device whose
 * binary a previous run kept is made from it (clCreateProgramWithBinary,
 * clBuildProgram), else from its source, and its binary kept for the next
 * run. An entry that is not one, or that the driver refuses, is removed
 * and the program built from source (counted `rebuilt`); a folder that
 * cannot be written leaves every build from source, with one line on
 * stderr per process. Contexts of several devices build from source.
 * Called under rp.mu (live_layer.c); the counters are read at exit. */
#include "live/live_layer_int.h"

#include <stdlib.h>
#include <string.h>

#include "costs/cdb.h"

static live_kc_stats kc;
static int kc_warned;

/* The folder's bound: CDB_KC_CAP, or CLRR_KERNEL_CACHE_MAX bytes. */
static uint64_t kc_cap(void)
{
    const char *v = getenv("CLRR_KERNEL_CACHE_MAX");
    char *end;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    return v && *v && !*end && n ? (uint64_t)n : CDB_KC_CAP;
}

const live_kc_stats *live_kc_get(void)
{
    return &kc;
}

/* One device's info string into @p buf ("" when it cannot be asked). */
static void kc_info(cl_device_id d, cl_device_info what, char *buf, size_t cap)
{
    buf[0] = 0;
    if (live_next->clGetDeviceInfo(d, what, cap - 1, buf, NULL) != CL_SUCCESS)
        buf[0] = 0;
    buf[cap - 1] = 0;
}

/* Kernel @p name of program @p p (released when it has none). */
static cl_kernel kc_kernel(cl_program *p, const char *name)
{
    cl_int e = CL_SUCCESS;
    cl_kernel k = *p ? live_next->clCreateKernel(*p, name, &e) : NULL;
    if (*p && (!k || e != CL_SUCCESS)) {
        live_next->clReleaseProgram(*p);
        *p = NULL;
        k = NULL;
    }
    return k;
}

static cl_program kc_from_source(cl_context ctx, cl_device_id *dev, const char *src, const char *options,
                                 const char *name, cl_kernel *k, int64_t *ns)
{
    int64_t t0 = rec_time_ns();
    cl_int e = CL_SUCCESS;
    cl_program p = live_next->clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    if (p && e == CL_SUCCESS && live_next->clBuildProgram(p, dev ? 1 : 0, dev, options, NULL, NULL) != CL_SUCCESS) {
        live_next->clReleaseProgram(p);
        p = NULL;
    }
    if (e != CL_SUCCESS)
        p = NULL;
    *k = kc_kernel(&p, name);   /* (some drivers compile for the device here: timed with the build) */
    *ns = rec_time_ns() - t0;
    return p;
}

cl_program live_kc_build(cl_context ctx, const char *src, const char *options, const char *name, cl_kernel *k)
{
    *k = NULL;
    cl_device_id dev = NULL;
    size_t sz = 0;
    char dir[4096];
    int64_t ns = 0;
    if (live_next->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, NULL, &sz) != CL_SUCCESS ||
        sz != sizeof dev ||
        live_next->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL) != CL_SUCCESS ||
        !cdb_kc_dir(dir, sizeof dir)) {
        kc.uncached++;
        cl_program p = kc_from_source(ctx, NULL, src, options, name, k, &ns);
        kc.build_ns += ns;
        return p;
    }
    char dname[512], driver[256], plat[512];
    cl_platform_id pid = NULL;
    kc_info(dev, CL_DEVICE_NAME, dname, sizeof dname);
    kc_info(dev, CL_DRIVER_VERSION, driver, sizeof driver);
    plat[0] = 0;
    if (live_next->clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof pid, &pid, NULL) != CL_SUCCESS ||
        live_next->clGetPlatformInfo(pid, CL_PLATFORM_NAME, sizeof plat - 1, plat, NULL) != CL_SUCCESS)
        plat[0] = 0;
    plat[sizeof plat - 1] = 0;
    uint8_t key[16];
    cdb_kc_key(key, src, options, dname, driver, plat);
    void *bin = NULL;
    size_t len = 0;
    uint64_t saved = 0;
    int64_t t0 = rec_time_ns();
    int r = cdb_kc_load(dir, key, CDB_KC_CAP, &bin, &len, &saved);
    if (r > 0) {
        cl_int e = CL_SUCCESS, bs = CL_SUCCESS;
        const unsigned char *b = bin;
        cl_program p = live_next->clCreateProgramWithBinary(ctx, 1, &dev, &len, &b, &bs, &e);
        free(bin);
        if (p && (e != CL_SUCCESS || bs != CL_SUCCESS ||
                  live_next->clBuildProgram(p, 1, &dev, options, NULL, NULL) != CL_SUCCESS)) {
            live_next->clReleaseProgram(p);
            p = NULL;
        }
        if (p && e == CL_SUCCESS)
            *k = kc_kernel(&p, name);
        if (p && e == CL_SUCCESS) {
            int64_t took = rec_time_ns() - t0;
            kc.hits++;
            kc.load_ns += took;
            kc.saved_ns += (int64_t)saved > took ? (int64_t)saved - took : 0;
            return p;
        }
        cdb_kc_forget(dir, key);   /* the driver refused it: rebuilt below */
        r = -1;
    }
    if (r < 0)
        kc.rebuilt++;
    else
        kc.misses++;
    cl_program p = kc_from_source(ctx, &dev, src, options, name, k, &ns);
    kc.build_ns += ns;
    if (!p)
        return NULL;
    /* kept for the next run */
    size_t blen = 0;
    unsigned char *out = NULL;
    char err[512] = "";
    if (live_next->clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof blen, &blen, NULL) == CL_SUCCESS && blen &&
        (out = malloc(blen)) != NULL &&
        live_next->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof out, &out, NULL) == CL_SUCCESS) {
        if (cdb_kc_store(dir, key, out, blen, (uint64_t)ns, kc_cap(), err, sizeof err) == CDB_OK) {
            kc.stored++;
        } else {
            kc.store_errors++;
            if (!kc_warned++)
                fprintf(stderr, "clrr: plan mode: the kernel binary cache is not written (%s); generated kernels "
                        "are built from source\n", err);
        }
    }
    free(out);
    return p;
}
