/* stub_icd.c — a stub OpenCL driver (an ICD) for the tests of clrr.
 *
 * What it is for
 *   The replayer's test oracle. Replaying a trace onto this driver must make
 *   exactly the calls that were recorded, in the same order: set
 *   CLRR_STUB_LOG=FILE and every OpenCL call the stub receives from the
 *   application (through the ICD loader) appends one line to FILE holding
 *   the function's name and nothing else, e.g. "clEnqueueWriteBuffer".
 *   Lines are whole write(2)s to a file opened O_APPEND, so several threads
 *   and processes may share one log.
 *
 * How to use it
 *   make builds build/lib/libclrrstub.so and build/stub-vendors/clrrstub.icd;
 *   `OCL_ICD_VENDORS=$PWD/build/stub-vendors ./app` makes ocl-icd (libOpenCL)
 *   see this driver and nothing else: one platform "clrr stub" (suffix STUB)
 *   with one CPU device "clrr stub device".
 *
 * What it does
 *   Objects are real (reference counted, freed at zero, checked on every
 *   call), and so is memory: buffers, sub-buffers, images and SVM live in
 *   host memory, and reads, writes, copies, fills, rectangles and maps move
 *   real bytes. Every command completes at once, on the calling thread,
 *   unless it waits for a user event that is not set yet; its event then
 *   completes when the user event is set (its work was done at enqueue).
 *   Programs always build; kernels are those named `__kernel void NAME(` in
 *   the source (not through macros), with their arguments parsed roughly;
 *   a program's binary is its source. It EXECUTES NO KERNEL:
 *   clEnqueueNDRangeKernel checks its arguments and does nothing to memory.
 *   Profiling times come from a fake nanosecond clock that only increases.
 *   One mutex serializes all calls; callbacks run without it, on the thread
 *   whose call made them due, before that call returns.
 *   Not supported (answered with the error the specification gives for a
 *   device without the feature): IL programs, built-in kernels, pipes,
 *   native kernels, sub-devices, device-side queues, sub-groups, GL and EGL
 *   sharing.
 *
 * What the loader calls on its own (not logged)
 *   ocl-icd 2.3.1, loading a vendor, dlopens it, calls the exported
 *   clGetExtensionFunctionAddress for "clIcdGetPlatformIDsKHR" and for
 *   "clGetPlatformInfo", calls clIcdGetPlatformIDsKHR twice (count, then
 *   handles), and the exported clGetPlatformInfo four times
 *   (CL_PLATFORM_EXTENSIONS then CL_PLATFORM_ICD_SUFFIX_KHR, each size then
 *   value); observed with CLRR_STUB_LOG_LOADER=1, which adds these to the
 *   log as "loader ..." lines. The application's calls reach the stub
 *   through the dispatch table instead: the dispatch entries always log,
 *   the exported symbols only for what the loader forwards from the
 *   application (clGetExtensionFunctionAddress of a "...STUB" name). Some of the application's calls
 *   never reach any driver, and a replay's expected log leaves them out:
 *   ocl-icd answers clGetPlatformIDs and clUnloadCompiler itself;
 *   clGetExtensionFunctionAddress too unless the name ends in the platform
 *   suffix ("...STUB"), and clGetExtensionFunctionAddressForPlatform for
 *   the KHR and EXT names of its own table (clGetKernelSubGroupInfoKHR).
 *   With several vendors in the folder ocl-icd also counts each platform's
 *   devices through the dispatch table (three clGetDeviceIDs), which the
 *   stub cannot tell from the application's. */
#include "tests/stub-icd/stub_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STUB_EXPORT __attribute__((visibility("default")))

#define STUB_SLOT(name) .name = stub_##name,
struct _cl_icd_dispatch stub_dispatch = { STUB_FUNCS(STUB_SLOT) };
#undef STUB_SLOT

struct _cl_platform_id stub_platform = { { &stub_dispatch, STUB_PLATFORM, 1 } };
struct _cl_device_id stub_device = { { &stub_dispatch, STUB_DEVICE, 1 } };

/* ------------------------------------------------------------ lock and log */
static pthread_mutex_t stub_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stub_cond = PTHREAD_COND_INITIALIZER;
static int stub_log_fd = -2;          /* -2: not opened yet, -1: no log */
static int stub_log_loader_on;
static struct stub_cb *stub_due, *stub_due_tail;
static cl_ulong stub_clock = 1000000000ull;

static void stub_log_open(void)
{
    const char *path = getenv("CLRR_STUB_LOG");
    const char *loader = getenv("CLRR_STUB_LOG_LOADER");
    stub_log_fd = -1;
    stub_log_loader_on = loader && strcmp(loader, "1") == 0;
    if (!path || !*path)
        return;
    stub_log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (stub_log_fd < 0)
        fprintf(stderr, "clrr stub: cannot open CLRR_STUB_LOG %s: %s\n", path, strerror(errno));
}

static void stub_log_line(const char *prefix, const char *name)
{
    char line[256];
    if (stub_log_fd == -2)
        stub_log_open();
    if (stub_log_fd < 0)
        return;
    int n = snprintf(line, sizeof line, "%s%s\n", prefix, name);
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    ssize_t w = write(stub_log_fd, line, (size_t)n);
    (void)w;
}

void stub_enter(const char *fn)
{
    pthread_mutex_lock(&stub_mutex);
    stub_log_line("", fn);
}

void stub_enter_quiet(void)
{
    pthread_mutex_lock(&stub_mutex);
}

void stub_log_loader(const char *what)
{
    if (stub_log_fd == -2)
        stub_log_open();
    if (stub_log_loader_on)
        stub_log_line("loader ", what);
}

void stub_defer(struct stub_cb *cb)
{
    cb->next = NULL;
    if (stub_due_tail)
        stub_due_tail->next = cb;
    else
        stub_due = cb;
    stub_due_tail = cb;
}

static void stub_run(struct stub_cb *cb)
{
    switch (cb->kind) {
    case STUB_CB_EVENT:
        ((void (CL_CALLBACK *)(cl_event, cl_int, void *))cb->fn)(cb->obj, cb->status, cb->user);
        break;
    case STUB_CB_MEM:
        ((void (CL_CALLBACK *)(cl_mem, void *))cb->fn)(cb->obj, cb->user);
        break;
    case STUB_CB_CONTEXT:
        ((void (CL_CALLBACK *)(cl_context, void *))cb->fn)(cb->obj, cb->user);
        break;
    case STUB_CB_PROGRAM:
        ((void (CL_CALLBACK *)(cl_program, void *))cb->fn)(cb->obj, cb->user);
        break;
    case STUB_CB_SVM_FREE:
        ((void (CL_CALLBACK *)(cl_command_queue, cl_uint, void **, void *))cb->fn)(
            cb->obj, cb->nptrs, cb->ptrs, cb->user);
        break;
    }
}

/* Runs the callbacks that became due, each without the lock (they may call
 * OpenCL), then releases the lock. */
void stub_leave(void)
{
    while (stub_due) {
        struct stub_cb *cb = stub_due;
        stub_due = cb->next;
        if (!stub_due)
            stub_due_tail = NULL;
        pthread_mutex_unlock(&stub_mutex);
        stub_run(cb);
        pthread_mutex_lock(&stub_mutex);
        if (cb->kind == STUB_CB_EVENT)
            stub_event_release(cb->obj);
        else if (cb->kind == STUB_CB_SVM_FREE)
            stub_queue_release(cb->obj);
        else if (cb->kind == STUB_CB_PROGRAM)
            stub_program_release(cb->obj);
        free(cb->ptrs);
        free(cb);
    }
    pthread_mutex_unlock(&stub_mutex);
}

void stub_wait(void)
{
    pthread_cond_wait(&stub_cond, &stub_mutex);
}

void stub_broadcast(void)
{
    pthread_cond_broadcast(&stub_cond);
}

cl_ulong stub_now(cl_ulong advance)
{
    stub_clock += advance;
    return stub_clock;
}

/* ------------------------------------------------------------ helpers */
int stub_valid(const void *obj, uint32_t kind)
{
    return obj && ((const struct stub_head *)obj)->kind == kind;
}

void *stub_obj_new(size_t size, uint32_t kind)
{
    struct stub_head *h = calloc(1, size);
    if (!h)
        return NULL;
    h->dispatch = &stub_dispatch;
    h->kind = kind;
    h->refs = 1;
    return h;
}

void stub_set_err(cl_int *errcode_ret, cl_int err)
{
    if (errcode_ret)
        *errcode_ret = err;
}

cl_int stub_info(const void *src, size_t size, size_t value_size, void *value, size_t *size_ret)
{
    if (value) {
        if (value_size < size)
            return CL_INVALID_VALUE;
        if (size)
            memcpy(value, src, size);
    }
    if (size_ret)
        *size_ret = size;
    return CL_SUCCESS;
}

char *stub_strdup(const char *s)
{
    return stub_memdup(s, strlen(s) + 1);
}

void *stub_memdup(const void *p, size_t n)
{
    void *q = malloc(n ? n : 1);
    if (q && n)
        memcpy(q, p, n);
    return q;
}

void *stub_props_dup(const void *in, size_t *n, int *oom)
{
    const uint64_t *p = in;
    *n = 0;
    if (!p)
        return NULL;
    size_t k = 0;
    while (p[k])
        k += 2;
    void *out = stub_memdup(p, (k + 1) * sizeof *p);
    if (!out)
        *oom = 1;
    else
        *n = k + 1;
    return out;
}

/* ------------------------------------------------------------ the platform */
static cl_int stub_platform_info(cl_platform_id platform, cl_platform_info param_name,
                                 size_t value_size, void *value, size_t *size_ret)
{
    if (platform && platform != &stub_platform)
        return CL_INVALID_PLATFORM;
    switch (param_name) {
    case CL_PLATFORM_PROFILE:
        STUB_INFO_STR("FULL_PROFILE");
    case CL_PLATFORM_VERSION:
        STUB_INFO_STR("OpenCL 3.0 clrr-stub");
    case CL_PLATFORM_NAME:
        STUB_INFO_STR("clrr stub");
    case CL_PLATFORM_VENDOR:
        STUB_INFO_STR("clrr");
    case CL_PLATFORM_EXTENSIONS:
        STUB_INFO_STR("cl_khr_icd");
    case CL_PLATFORM_ICD_SUFFIX_KHR:
        STUB_INFO_STR("STUB");
    case CL_PLATFORM_HOST_TIMER_RESOLUTION:
        STUB_INFO_VAL(cl_ulong, 1);
    case CL_PLATFORM_NUMERIC_VERSION:
        STUB_INFO_VAL(cl_version, CL_MAKE_VERSION(3, 0, 0));
    case CL_PLATFORM_EXTENSIONS_WITH_VERSION: {
        cl_name_version v = { CL_MAKE_VERSION(1, 0, 0), "cl_khr_icd" };
        return stub_info(&v, sizeof v, value_size, value, size_ret);
    }
    default:
        return CL_INVALID_VALUE;
    }
}

static cl_int stub_platform_ids(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
{
    if ((!platforms && !num_platforms) || (platforms && num_entries == 0))
        return CL_INVALID_VALUE;
    if (platforms)
        platforms[0] = &stub_platform;
    if (num_platforms)
        *num_platforms = 1;
    return CL_SUCCESS;
}

cl_int CL_API_CALL stub_clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms,
                                         cl_uint *num_platforms)
{
    STUB_ENTER();
    cl_int err = stub_platform_ids(num_entries, platforms, num_platforms);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                          size_t value_size, void *value, size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = stub_platform_info(platform, param_name, value_size, value, size_ret);
    stub_leave();
    return err;
}

void *CL_API_CALL stub_clGetExtensionFunctionAddress(const char *func_name)
{
    (void)func_name;
    STUB_ENTER();
    stub_leave();
    return NULL;
}

void *CL_API_CALL stub_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                               const char *func_name)
{
    (void)platform;
    (void)func_name;
    STUB_ENTER();
    stub_leave();
    return NULL;   /* the stub has no extension functions */
}

cl_int CL_API_CALL stub_clUnloadCompiler(void)
{
    STUB_ENTER();
    stub_leave();
    return CL_SUCCESS;
}

cl_int CL_API_CALL stub_clUnloadPlatformCompiler(cl_platform_id platform)
{
    STUB_ENTER();
    cl_int err = platform == &stub_platform ? CL_SUCCESS : CL_INVALID_PLATFORM;
    stub_leave();
    return err;
}

/* ------------------------------------------------------------ exported symbols
 * Only the loader uses these (the application reaches the dispatch table):
 * they do not log, except with CLRR_STUB_LOG_LOADER=1. The addresses that
 * clGetExtensionFunctionAddress hands out are of the hidden functions, not
 * of the exported names: inside this library a reference to the name
 * clGetPlatformInfo would bind to the loader's own clGetPlatformInfo
 * (ELF interposition), which goes through the dispatch table and logs. */
static cl_int CL_API_CALL stub_loader_platform_ids(cl_uint num_entries, cl_platform_id *platforms,
                                                   cl_uint *num_platforms)
{
    stub_enter_quiet();
    stub_log_loader("clIcdGetPlatformIDsKHR");
    cl_int err = stub_platform_ids(num_entries, platforms, num_platforms);
    stub_leave();
    return err;
}

static cl_int CL_API_CALL stub_loader_platform_info(cl_platform_id platform, cl_platform_info param_name,
                                                    size_t value_size, void *value, size_t *size_ret)
{
    char what[64];
    stub_enter_quiet();
    snprintf(what, sizeof what, "clGetPlatformInfo 0x%x", (unsigned)param_name);
    stub_log_loader(what);
    cl_int err = stub_platform_info(platform, param_name, value_size, value, size_ret);
    stub_leave();
    return err;
}

static void *stub_export_lookup(const char *name)
{
    if (!name)
        return NULL;
    if (strcmp(name, "clIcdGetPlatformIDsKHR") == 0)
        return (void *)(uintptr_t)&stub_loader_platform_ids;
    if (strcmp(name, "clGetPlatformInfo") == 0)
        return (void *)(uintptr_t)&stub_loader_platform_info;
    return NULL;
}

STUB_EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                      cl_uint *num_platforms)
{
    return stub_loader_platform_ids(num_entries, platforms, num_platforms);
}

STUB_EXPORT cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                                 size_t value_size, void *value, size_t *size_ret)
{
    return stub_loader_platform_info(platform, param_name, value_size, value, size_ret);
}

STUB_EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *func_name)
{
    char what[160];
    void *fn = stub_export_lookup(func_name);
    stub_enter_quiet();
    snprintf(what, sizeof what, "clGetExtensionFunctionAddress %s", func_name ? func_name : "(null)");
    if (fn)
        stub_log_loader(what);
    else
        stub_log_line("", "clGetExtensionFunctionAddress");  /* forwarded "...STUB" names */
    stub_leave();
    return fn;
}

STUB_EXPORT void *CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                                      const char *func_name)
{
    char what[160];
    stub_enter_quiet();
    snprintf(what, sizeof what, "clGetExtensionFunctionAddressForPlatform %s",
             func_name ? func_name : "(null)");
    stub_log_loader(what);
    void *fn = platform == &stub_platform || !platform ? stub_export_lookup(func_name) : NULL;
    stub_leave();
    return fn;
}
