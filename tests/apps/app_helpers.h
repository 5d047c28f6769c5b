/* app_helpers.h — the helpers of the workload programs aes, ep, exposure,
 * geomatrix, jacobi, overlap and sobel: OpenCL error checks, allocation,
 * timing, seeds, device listing and selection by --device SPEC, program
 * builds with their log (the same in each). Included once, by the
 * program's .c file, after it defines APP, MAX_DEVICES and its option
 * parsing's die(). */
#ifndef CLRR_APP_HELPERS_H
#define CLRR_APP_HELPERS_H

#include <CL/cl.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#if !defined(APP) || !defined(MAX_DEVICES)
#error "define APP and MAX_DEVICES first"
#endif

/* ------------------------------------------------------------- helpers */

static void check(cl_int err, const char *fn)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, APP ": %s failed: %d\n", fn, err);
        exit(2);
    }
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of host memory (%zu bytes)", n);
    return p;
}

static size_t mul_size(size_t a, size_t b)
{
    if (b && a > SIZE_MAX / b)
        die("size overflow (%zu * %zu)", a, b);
    return a * b;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t splitmix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Seed of one host-loop iteration, derived from (--seed, iteration). */
static uint64_t iter_seed(uint64_t seed, unsigned iter)
{
    return splitmix64(seed ^ splitmix64(iter));
}

/* ---------------------------------------------------------- devices */

/* Device or platform string property, malloc'ed. */
static char *info_string(cl_device_id dev, cl_platform_id plat, cl_uint param)
{
    size_t n = 0;
    if (dev)
        check(clGetDeviceInfo(dev, param, 0, NULL, &n), "clGetDeviceInfo");
    else
        check(clGetPlatformInfo(plat, param, 0, NULL, &n), "clGetPlatformInfo");
    char *s = xmalloc(n + 1);
    if (dev)
        check(clGetDeviceInfo(dev, param, n, s, NULL), "clGetDeviceInfo");
    else
        check(clGetPlatformInfo(plat, param, n, s, NULL), "clGetPlatformInfo");
    s[n] = '\0';
    return s;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return n == 0;
}

#define TYPE_MASK \
    (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM)

static cl_device_type device_type(cl_device_id dev)
{
    cl_device_type type;
    check(clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL), "clGetDeviceInfo");
    return type & TYPE_MASK;
}

/* The device type SPEC names, or 0 when SPEC is not a type. */
static cl_device_type spec_type(const char *spec)
{
    if (!strcasecmp(spec, "cpu"))
        return CL_DEVICE_TYPE_CPU;
    if (!strcasecmp(spec, "gpu"))
        return CL_DEVICE_TYPE_GPU;
    if (!strcasecmp(spec, "accelerator"))
        return CL_DEVICE_TYPE_ACCELERATOR;
    return 0;
}

static int name_matches(cl_device_id dev, cl_platform_id plat, const char *spec)
{
    char *dname = info_string(dev, NULL, CL_DEVICE_NAME);
    char *pname = info_string(NULL, plat, CL_PLATFORM_NAME);
    int hit = contains_nocase(dname, spec) || contains_nocase(pname, spec);
    free(dname);
    free(pname);
    return hit;
}

static int is_index(const char *spec)
{
    if (!*spec)
        return 0;
    for (const char *p = spec; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    return 1;
}

/* Every device of every platform, in order, with its platform; returns the count. */
static unsigned list_devices(cl_device_id *all, cl_platform_id *owner, unsigned cap)
{
    cl_uint nplat = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &nplat);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && nplat == 0))
        die("no OpenCL platform found");
    check(err, "clGetPlatformIDs");
    cl_platform_id *plats = xmalloc(nplat * sizeof *plats);
    check(clGetPlatformIDs(nplat, plats, NULL), "clGetPlatformIDs");
    unsigned nall = 0;
    for (cl_uint p = 0; p < nplat && nall < cap; p++) {
        cl_uint nd = 0;
        err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (err == CL_DEVICE_NOT_FOUND || nd == 0)
            continue;
        check(err, "clGetDeviceIDs");
        if (nd > cap - nall)
            nd = cap - nall;
        check(clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, all + nall, NULL), "clGetDeviceIDs");
        for (cl_uint d = 0; d < nd; d++)
            owner[nall + d] = plats[p];
        nall += nd;
    }
    free(plats);
    if (nall == 0)
        die("no OpenCL device found");
    return nall;
}

/*
 * Picks `want` devices for SPEC into devs[]: the device SPEC designates (an
 * index; the first of a type; the first whose device or platform name
 * contains SPEC; by default the first GPU, else device 0), then the next
 * devices, in order and wrapping around, that match too (for an index or the
 * default: those of the same type). Returns their platform; they must all
 * belong to it, since they share one context.
 */
static cl_platform_id select_devices(const char *spec, unsigned want, cl_device_id *devs)
{
    cl_device_id all[256];
    cl_platform_id owner[256], chosen[MAX_DEVICES];
    unsigned nall = list_devices(all, owner, 256), first = 0;
    cl_device_type type = 0;
    if (!spec) {
        first = nall;
        for (unsigned i = 0; i < nall && first == nall; i++)
            if (device_type(all[i]) & CL_DEVICE_TYPE_GPU)
                first = i;
        if (first == nall)
            first = 0;
        type = device_type(all[first]);
    } else if (is_index(spec)) {
        unsigned long idx = strtoul(spec, NULL, 10);
        if (idx >= nall)
            die("no device with index %s (%u devices)", spec, nall);
        first = (unsigned)idx;
        type = device_type(all[first]);
    } else {
        type = spec_type(spec); /* 0: match by name */
    }
    unsigned n = 0;
    for (unsigned k = 0; k < nall && n < want; k++) {
        unsigned i = (first + k) % nall;
        if (type ? (device_type(all[i]) & type) != 0 : name_matches(all[i], owner[i], spec)) {
            chosen[n] = owner[i];
            devs[n++] = all[i];
        }
    }
    if (n == 0)
        die("no device matches '%s'", spec ? spec : "(default)");
    if (n < want)
        die("only %u device(s) match '%s', %u requested with --devices", n,
            spec ? spec : "(default)", want);
    for (unsigned d = 1; d < n; d++)
        if (chosen[d] != chosen[0])
            die("the selected devices belong to several platforms; pick devices of one");
    return chosen[0];
}

/* Names of the devices joined with " + ", malloc'ed. */
static char *device_label(const cl_device_id *devs, unsigned n)
{
    size_t len = 1;
    char *names[MAX_DEVICES];
    for (unsigned i = 0; i < n; i++) {
        names[i] = info_string(devs[i], NULL, CL_DEVICE_NAME);
        len += strlen(names[i]) + 3;
        memmove(names[i], names[i] + strspn(names[i], " "), strlen(names[i]) + 1);
    }
    char *s = xmalloc(len);
    s[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        if (i)
            strcat(s, " + ");
        strcat(s, names[i]);
        free(names[i]);
    }
    return s;
}

static cl_program build_program(cl_context ctx, unsigned ndev, const cl_device_id *devs,
                                const char *src)
{
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(prog, ndev, devs, "-cl-std=CL1.2", NULL, NULL);
    if (err == CL_BUILD_PROGRAM_FAILURE) {
        for (unsigned i = 0; i < ndev; i++) {
            size_t n = 0;
            check(clGetProgramBuildInfo(prog, devs[i], CL_PROGRAM_BUILD_LOG, 0, NULL, &n),
                  "clGetProgramBuildInfo");
            char *log = xmalloc(n + 1);
            check(clGetProgramBuildInfo(prog, devs[i], CL_PROGRAM_BUILD_LOG, n, log, NULL),
                  "clGetProgramBuildInfo");
            log[n] = '\0';
            fprintf(stderr, APP ": build log (device %u):\n%s\n", i, log);
            free(log);
        }
    }
    check(err, "clBuildProgram");
    return prog;
}

#endif /* CLRR_APP_HELPERS_H */
