/* opt_rw.c — the rewriter (rewriter/rw.h) for the fuse, split, specialize and coarsening passes, loaded on
 * first use from libclrr-rw.so next to the executable (or CLRR_RW_LIB):
 * it holds libclang's LLVM, which must never be in a process that runs an
 * OpenCL driver built on another LLVM (PoCL), so `clrr` does not link it. */
#include "optimizer/opt_int.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPT_RW_SO "libclrr-rw.so"

static pthread_mutex_t opt_rw_lock = PTHREAD_MUTEX_INITIALIZER;
static rw_status (*opt_rw_fuse_fn)(const rw_fuse_req *, rw_fuse_out *, char *, size_t);
static void (*opt_rw_free_fn)(rw_fuse_out *);
static rw_status (*opt_rw_part_fn)(const rw_part_req *, rw_part_out *, char *, size_t);
static void (*opt_rw_part_free_fn)(rw_part_out *);
static rw_status (*opt_rw_spec_fn)(const rw_spec_req *, rw_spec_out *, char *, size_t);
static void (*opt_rw_spec_free_fn)(rw_spec_out *);
static rw_status (*opt_rw_co_fn)(const rw_coarsen_req *, rw_coarsen_out *, char *, size_t);
static void (*opt_rw_co_free_fn)(rw_coarsen_out *);

static int opt_rw_try(const char *path, char *err, size_t cap)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, cap, "%s", e ? e : path);
        return 0;
    }
    void *f = dlsym(h, "rw_fuse"), *g = dlsym(h, "rw_fuse_free"), *pf = dlsym(h, "rw_partition"),
         *pg = dlsym(h, "rw_partition_free"), *sf = dlsym(h, "rw_specialize"), *sg = dlsym(h, "rw_specialize_free"),
         *cf = dlsym(h, "rw_coarsen"), *cg = dlsym(h, "rw_coarsen_free");
    if (!f || !g || !pf || !pg || !sf || !sg || !cf || !cg) {
        snprintf(err, cap, "%s: no rw_fuse, rw_partition, rw_specialize or rw_coarsen in it", path);
        dlclose(h);
        return 0;
    }
    memcpy(&opt_rw_fuse_fn, &f, sizeof f);   /* POSIX: dlsym's object/function conversion */
    memcpy(&opt_rw_free_fn, &g, sizeof g);
    memcpy(&opt_rw_part_fn, &pf, sizeof pf);
    memcpy(&opt_rw_part_free_fn, &pg, sizeof pg);
    memcpy(&opt_rw_spec_fn, &sf, sizeof sf);
    memcpy(&opt_rw_spec_free_fn, &sg, sizeof sg);
    memcpy(&opt_rw_co_fn, &cf, sizeof cf);
    memcpy(&opt_rw_co_free_fn, &cg, sizeof cg);
    return 1;
}

/* Loads the rewriter once. @return 1, or 0 with the reason in @p err. */
static int opt_rw_load(char *err, size_t cap)
{
    int ok = 1;
    pthread_mutex_lock(&opt_rw_lock);
    if (!opt_rw_fuse_fn) {
        const char *env = getenv("CLRR_RW_LIB");
        if (env && *env) {
            ok = opt_rw_try(env, err, cap);
        } else {
            char exe[PATH_MAX], path[PATH_MAX + 32];
            ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
            char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
            if (!slash) {
                snprintf(err, cap, "cannot locate " OPT_RW_SO ": /proc/self/exe unreadable");
                ok = 0;
            } else {
                *slash = 0;
                snprintf(path, sizeof path, "%s/../lib/" OPT_RW_SO, exe);
                ok = opt_rw_try(path, err, cap);
            }
        }
    }
    pthread_mutex_unlock(&opt_rw_lock);
    return ok;
}

rw_status opt_rw_fuse(const rw_fuse_req *req, rw_fuse_out *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (!opt_rw_load(err, cap))
        return RW_ERR_INTERNAL;
    return opt_rw_fuse_fn(req, out, err, cap);
}

void opt_rw_fuse_free(rw_fuse_out *out)
{
    if (opt_rw_free_fn)
        opt_rw_free_fn(out);
}

rw_status opt_rw_partition(const rw_part_req *req, rw_part_out *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (!opt_rw_load(err, cap))
        return RW_ERR_INTERNAL;
    return opt_rw_part_fn(req, out, err, cap);
}

void opt_rw_partition_free(rw_part_out *out)
{
    if (opt_rw_part_free_fn)
        opt_rw_part_free_fn(out);
}

rw_status opt_rw_specialize(const rw_spec_req *req, rw_spec_out *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (!opt_rw_load(err, cap))
        return RW_ERR_INTERNAL;
    return opt_rw_spec_fn(req, out, err, cap);
}

void opt_rw_specialize_free(rw_spec_out *out)
{
    if (opt_rw_spec_free_fn)
        opt_rw_spec_free_fn(out);
}

rw_status opt_rw_coarsen(const rw_coarsen_req *req, rw_coarsen_out *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (!opt_rw_load(err, cap))
        return RW_ERR_INTERNAL;
    return opt_rw_co_fn(req, out, err, cap);
}

void opt_rw_coarsen_free(rw_coarsen_out *out)
{
    if (opt_rw_co_free_fn)
        opt_rw_co_free_fn(out);
}
