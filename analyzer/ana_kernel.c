/* ana_kernel.c — kernel analysis, plain-C side: loads the LLVM part
 * (libclrr-ana.so) on first use and gives access to its summaries.
 *
 * `clrr` must run on machines without LLVM, so it never links LLVM: the
 * library is found next to the executable (or through CLRR_ANA_LIB) and
 * opened with dlopen only when a kernel is analyzed. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/ana.h"
#include "analyzer/ana_kernel_int.h"

#define ANA_SO_NAME "libclrr-ana.so"

static pthread_mutex_t ana_load_lock = PTHREAD_MUTEX_INITIALIZER;
static ana_llvm_analyze_fn ana_entry;   /* set once loaded; the library stays open */

static void ana_seterr(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    if (!err || cap == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

/* Appends "; " (when not first) and @p s to the error being built. */
static void ana_err_append(char *err, size_t cap, const char *s)
{
    size_t n;
    if (!err || cap == 0)
        return;
    n = strnlen(err, cap);
    if (n + 1 >= cap)
        return;
    snprintf(err + n, cap - n, "%s%s", n ? "; " : "", s);
}

/* The directory of the running executable (malloc'ed), or NULL. */
static char *ana_exe_dir(void)
{
    size_t cap = 256;
    char *buf = NULL, *slash;

    for (;;) {
        char *nb = realloc(buf, cap);
        ssize_t n;
        if (!nb) {
            free(buf);
            return NULL;
        }
        buf = nb;
        n = readlink("/proc/self/exe", buf, cap);
        if (n < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            break;
        }
        if (cap > (size_t)1 << 20) {
            free(buf);
            return NULL;
        }
        cap *= 2;
    }
    slash = strrchr(buf, '/');
    if (!slash) {
        free(buf);
        return NULL;
    }
    *slash = '\0';
    return buf;
}

/* Tries dlopen(@p path); on success sets ana_entry. Appends failures. */
static int ana_try_open(const char *path, char *err, size_t cap)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *sym;
    if (!h) {
        const char *e = dlerror();
        ana_err_append(err, cap, e ? e : path);
        return 0;
    }
    sym = dlsym(h, ANA_LLVM_ENTRY);
    if (!sym) {
        ana_err_append(err, cap, path);
        ana_err_append(err, cap, "no " ANA_LLVM_ENTRY " in it");
        dlclose(h);
        return 0;
    }
    /* POSIX guarantees the object/function pointer conversion for dlsym. */
    memcpy(&ana_entry, &sym, sizeof ana_entry);
    return 1;
}

/* Loads the LLVM part once (a failure is retried on the next call).
 * Returns ANA_OK or ANA_ERR_UNAVAILABLE / ANA_ERR_NOMEM with err set. */
static ana_status ana_load(char *err, size_t cap)
{
    ana_status st = ANA_OK;
    const char *env;
    char *dir = NULL, *path = NULL;
    static const char *const rel[] = { "/../lib/" ANA_SO_NAME, "/../lib/clrr/" ANA_SO_NAME };
    size_t i;

    pthread_mutex_lock(&ana_load_lock);
    if (ana_entry)
        goto out;
    if (err && cap)
        err[0] = '\0';
    env = getenv("CLRR_ANA_LIB");
    if (env && *env) {
        if (!ana_try_open(env, err, cap))
            st = ANA_ERR_UNAVAILABLE;
        goto out;
    }
    dir = ana_exe_dir();
    if (!dir) {
        ana_seterr(err, cap, "cannot locate " ANA_SO_NAME ": /proc/self/exe unreadable");
        st = ANA_ERR_UNAVAILABLE;
        goto out;
    }
    for (i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        size_t n = strlen(dir) + strlen(rel[i]) + 1;
        free(path);
        path = malloc(n);
        if (!path) {
            st = ANA_ERR_NOMEM;
            goto out;
        }
        snprintf(path, n, "%s%s", dir, rel[i]);
        if (ana_try_open(path, err, cap))
            goto out;
    }
    st = ANA_ERR_UNAVAILABLE;
out:
    if (st == ANA_OK && err && cap)
        err[0] = '\0';
    pthread_mutex_unlock(&ana_load_lock);
    free(dir);
    free(path);
    return st;
}

ana_status ana_program_analyze(const char *source, size_t len, const char *options,
                               ana_program **out, char *err, size_t err_cap)
{
    ana_llvm_request req;
    ana_status st;

    if (err && err_cap)
        err[0] = '\0';
    if (!out || (!source && len)) {
        ana_seterr(err, err_cap, "ana_program_analyze: no source or no output");
        return ANA_ERR_ARG;
    }
    *out = NULL;
    st = ana_load(err, err_cap);
    if (st != ANA_OK)
        return st;
    req.abi = ANA_LLVM_ABI_VERSION;
    req.source = source ? source : "";
    req.len = len;
    req.options = options;
    return ana_entry(&req, out, err, err_cap);
}

void ana_program_free(ana_program *p)
{
    if (!p)
        return;
    ana_arena_release(&p->arena);
    free(p);
}

const char *ana_program_notes(const ana_program *p)
{
    return p && p->notes ? p->notes : "";
}

unsigned ana_program_kernel_count(const ana_program *p)
{
    return p ? p->nkernels : 0;
}

const ana_kernel *ana_program_kernel(const ana_program *p, unsigned i)
{
    return p && i < p->nkernels ? &p->kernels[i] : NULL;
}

const ana_kernel *ana_program_find(const ana_program *p, const char *name)
{
    unsigned i;
    if (!p || !name)
        return NULL;
    for (i = 0; i < p->nkernels; i++)
        if (p->kernels[i].name && !strcmp(p->kernels[i].name, name))
            return &p->kernels[i];
    return NULL;
}
