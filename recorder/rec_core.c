/* rec_core.c — recorder life cycle and the record protocol used by every
 * generated entry point: initialization (layer or preload), the environment
 * record, BEGIN/END records and exit (fatal signals: rec_signals.c). */
#include "recorder/rec_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

rec_state rec_g;
rec_next_table rec_next;

static pthread_once_t rec_init_once = PTHREAD_ONCE_INIT;
static pthread_once_t rec_env_once = PTHREAD_ONCE_INIT;
static pthread_once_t rec_preload_flag = PTHREAD_ONCE_INIT;
_Atomic uint8_t rec_sig_written[REC_FN_COUNT];
static _Atomic uint64_t rec_tid_next;
__thread uint64_t rec_tid;
static _Atomic int64_t rec_last_flush;   /* rec_sync_flush: the last sync-point flush */
_Atomic int rec_env_written;

static const char *rec_host_clock = "monotonic";   /* rec_clock_init's answer, for ENV */

void rec_report_writer_error(void)
{
    if (!rec_g.w || tf_writer_status(rec_g.w) == TF_OK)
        return;
    if (atomic_exchange(&rec_g.error_reported, 1))
        return;
    fprintf(stderr, "clrr: recording stopped: %s (the trace keeps the calls before; the "
            "application goes on)\n", tf_writer_errmsg(rec_g.w));
}

/* --------------------------------------------------------------- life */
static void rec_shutdown(void)
{
    if (!rec_g.active)
        return;
    rec_events_stop();
    rec_plan_end();
    rec_g.active = 0;
    char msg[600];
    tf_status st = tf_writer_close_msg(rec_g.w, msg, sizeof msg);
    if (st != TF_OK && !atomic_exchange(&rec_g.error_reported, 1))
        fprintf(stderr, "clrr: trace incomplete: %s\n", msg);
}

static void rec_init(void)
{
    char err[256];
    if (rec_controls_from_env(&rec_g.ctl, err, sizeof err)) {
        fprintf(stderr, "clrr: %s; not recording\n", err);
        return;
    }
    tf_writer_opts o = {.level = rec_g.ctl.level, .memory_budget = rec_g.ctl.memory,
                        .flush_ms = (unsigned)rec_g.ctl.flush_ms,
                        .threads = rec_g.ctl.compress_threads > 64 ? 64 : (unsigned)rec_g.ctl.compress_threads};
    int plan = rec_plan_init(&o);
    if (plan < 0)
        return;
    if (plan) { /* device times are of no use to the plan; its events would be ours to poll */
        rec_g.ctl.device_timing = 0;
        if (!rec_plan_needs_data())
            rec_g.ctl.capture_data = 0;   /* nothing to hash: sources and kernel arguments only */
    }
    tf_status st = tf_writer_open(&rec_g.w, plan ? NULL : rec_g.ctl.output, &o);
    if (st != TF_OK) {
        /* the application runs as if the recorder were not there */
        int e = errno;
        fprintf(stderr, "clrr: cannot create trace %s: %s; the application goes on unrecorded\n",
                rec_g.ctl.output, st == TF_ERR_IO && e ? strerror(e) : tf_strerror(st));
        rec_g.w = NULL;
        return;
    }
    rec_g.seq_at_enter = plan || rec_g.ctl.first_call || rec_g.ctl.last_call;
    rec_host_clock = rec_clock_init(rec_g.ctl.tsc_clock);
    rec_g.active = 1;
    rec_signals_install();
    rec_events_start();
    atexit(rec_shutdown);
}

/* Layer mode: called from clInitLayer with the next layer's table. */
void rec_layer_init(struct _cl_icd_dispatch *ours, const struct _cl_icd_dispatch *next)
{
    rec_gen_fill_dispatch(ours, next);
    rec_g.layer_mode = 1;
    pthread_once(&rec_init_once, rec_init);
}

static void rec_preload_init(void)
{
    rec_gen_fill_next_dlsym();
    pthread_once(&rec_init_once, rec_init);
}

void rec_preload_once(void)
{
    pthread_once(&rec_preload_flag, rec_preload_init);
}

/* -------------------------------------------------------- environment */
static void rec_env_str(tf_enc *e, const char *key, const char *val)
{
    tf_enc_cstr(e, key);
    tf_enc_cstr(e, val ? val : "");
}

static void rec_env_uint(tf_enc *e, const char *key, uint64_t v)
{
    tf_enc_cstr(e, key);
    tf_enc_uint(e, v);
}

/* Reads /proc/self/cmdline into an encoded array of strings. */
static void rec_env_cmdline(tf_enc *e)
{
    static char buf[16384];
    size_t n = 0;
    FILE *fp = fopen("/proc/self/cmdline", "r");
    if (fp) {
        n = fread(buf, 1, sizeof buf - 1, fp);
        fclose(fp);
    }
    buf[n] = 0;
    uint32_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += buf[i] == 0;
    tf_enc_cstr(e, "cmdline");
    tf_enc_array(e, count);
    for (size_t i = 0, k = 0; k < count; k++) {
        tf_enc_cstr(e, buf + i);
        i += strlen(buf + i) + 1;
    }
}

static char *rec_query_str(cl_platform_id p, cl_device_id d, cl_uint what)
{
    size_t n = 0;
    cl_int err = p ? rec_next.clGetPlatformInfo(p, what, 0, NULL, &n)
                   : rec_next.clGetDeviceInfo(d, what, 0, NULL, &n);
    if (err || !n || n > (1u << 20))
        return NULL;
    char *s = calloc(1, n + 1);
    if (!s)
        return NULL;
    err = p ? rec_next.clGetPlatformInfo(p, what, n, s, NULL)
            : rec_next.clGetDeviceInfo(d, what, n, s, NULL);
    if (err) {
        free(s);
        return NULL;
    }
    return s;
}

static uint64_t rec_query_u(cl_device_id d, cl_uint what, size_t size)
{
    uint64_t v = 0;
    if (rec_next.clGetDeviceInfo(d, what, size, &v, NULL))
        return 0;
    return v;
}

static void rec_env_device(tf_enc *e, cl_device_id d)
{
    static const struct { const char *key; cl_uint what; } strs[] = {
        {"name", CL_DEVICE_NAME}, {"vendor", CL_DEVICE_VENDOR}, {"version", CL_DEVICE_VERSION},
        {"driver_version", CL_DRIVER_VERSION}, {"opencl_c_version", CL_DEVICE_OPENCL_C_VERSION},
        {"extensions", CL_DEVICE_EXTENSIONS}};
    tf_enc_map(e, 6 + 5);
    rec_env_uint(e, "id", rec_obj_id(d));
    for (size_t i = 0; i < 6; i++) {
        char *s = rec_query_str(NULL, d, strs[i].what);
        rec_env_str(e, strs[i].key, s);
        free(s);
    }
    rec_env_uint(e, "type", rec_query_u(d, CL_DEVICE_TYPE, sizeof(cl_device_type)));
    rec_env_uint(e, "compute_units", rec_query_u(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint)));
    rec_env_uint(e, "global_mem", rec_query_u(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(cl_ulong)));
    rec_env_uint(e, "max_wg_size", rec_query_u(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t)));
}

static void rec_env_platforms(tf_enc *e)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (!rec_next.clGetPlatformIDs || rec_next.clGetPlatformIDs(16, plats, &np) || np > 16)
        np = 0;
    tf_enc_cstr(e, "platforms");
    tf_enc_array(e, np);
    for (cl_uint i = 0; i < np; i++) {
        static const struct { const char *key; cl_uint what; } strs[] = {
            {"name", CL_PLATFORM_NAME}, {"vendor", CL_PLATFORM_VENDOR},
            {"version", CL_PLATFORM_VERSION}, {"profile", CL_PLATFORM_PROFILE},
            {"extensions", CL_PLATFORM_EXTENSIONS}};
        tf_enc_map(e, 6);
        rec_env_uint(e, "id", rec_obj_id(plats[i]));
        for (size_t k = 0; k < 5; k++) {
            char *s = rec_query_str(plats[i], NULL, strs[k].what);
            rec_env_str(e, strs[k].key, s);
            free(s);
        }
    }
}

/* Devices are described per platform when the application first reaches
 * them (clGetDeviceIDs, clCreateContextFromType), not in ENV: asking a
 * platform for its devices starts its driver (PoCL's starts LLVM, which
 * installs signal handlers), which the application may never do. */
static pthread_mutex_t rec_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static cl_platform_id rec_dev_done[32];
static unsigned rec_ndev_done;

static void rec_describe_platform(cl_platform_id p)
{
    if (!p || !rec_g.active || !rec_next.clGetDeviceIDs)
        return;
    pthread_mutex_lock(&rec_dev_lock);
    for (unsigned i = 0; i < rec_ndev_done; i++)
        if (rec_dev_done[i] == p) {
            pthread_mutex_unlock(&rec_dev_lock);
            return;
        }
    if (rec_ndev_done < sizeof rec_dev_done / sizeof rec_dev_done[0])
        rec_dev_done[rec_ndev_done++] = p;
    pthread_mutex_unlock(&rec_dev_lock);
    cl_device_id devs[64];
    cl_uint nd = 0;
    if (rec_next.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 64, devs, &nd) || nd > 64)
        nd = 0;
    for (cl_uint k = 0; k < nd; k++)   /* ids before the record lock */
        rec_obj_created(devs[k], REC_OBJ_DEVICE);
    uint64_t pid = rec_obj_id(p);
    tf_enc *e = tf_writer_lock(rec_g.w);
    tf_wrec_devices_head(e, pid, nd);   /* then the nd device maps */
    for (cl_uint k = 0; k < nd; k++)
        rec_env_device(e, devs[k]);
    tf_writer_unlock(rec_g.w);
}

void rec_post_clGetDeviceIDs(rec_call *c, int ok, cl_int *ret, cl_platform_id a_platform, cl_device_type a_device_type,
                             cl_uint a_num_entries, cl_device_id *a_devices, cl_uint *a_num_devices)
{
    (void)c;
    (void)ret;
    (void)a_device_type;
    (void)a_num_devices;
    cl_platform_id p = a_platform;
    if (!p && ok && a_devices && a_num_entries
        && rec_next.clGetDeviceInfo(a_devices[0], CL_DEVICE_PLATFORM, sizeof p, &p, NULL))
        p = NULL;
    rec_describe_platform(p);
}

void rec_post_clCreateContextFromType(rec_call *c, int ok, cl_context *ret, const cl_context_properties *a_properties,
                                      cl_device_type a_device_type,
                                      void (*a_pfn_notify)(const char *, const void *, size_t, void *),
                                      void *a_user_data, cl_int *a_errcode_ret)
{
    (void)c;
    (void)a_properties;
    (void)a_device_type;
    (void)a_pfn_notify;
    (void)a_user_data;
    (void)a_errcode_ret;
    cl_device_id d = NULL;
    cl_platform_id p = NULL;
    if (ok && *ret && !rec_next.clGetContextInfo(*ret, CL_CONTEXT_DEVICES, sizeof d, &d, NULL) && d
        && !rec_next.clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL))
        rec_describe_platform(p);
}

static void rec_write_env(void)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* register platforms and devices before taking the record lock */
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (rec_next.clGetPlatformIDs && !rec_next.clGetPlatformIDs(16, plats, &np))
        for (cl_uint i = 0; i < np && i < 16; i++)
            rec_obj_created(plats[i], REC_OBJ_PLATFORM);
    tf_enc *e = tf_writer_lock(rec_g.w);
    tf_wrec_env_head(e);   /* then the environment map */
    tf_enc_map(e, 11);
    rec_env_str(e, "recorder", "clrr " CLRR_VERSION);
    rec_env_cmdline(e);
    rec_env_uint(e, "pid", (uint64_t)getpid());
    rec_env_uint(e, "start_unix_ns", (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    rec_env_str(e, "hostname", host);
    rec_env_str(e, "layer_mode", rec_g.layer_mode ? "layer" : "preload");
    rec_env_uint(e, "capture_data", (uint64_t)rec_g.ctl.capture_data);
    rec_env_uint(e, "device_timing", (uint64_t)rec_g.ctl.device_timing);
    rec_env_uint(e, "timing_interval_us", rec_g.ctl.timing_interval_us);
    rec_env_str(e, "host_clock", rec_host_clock);
    rec_env_platforms(e);
    tf_writer_unlock(rec_g.w);
    rec_signals_check(rec_now_ns(), 1);   /* the driver is initialized now */
    atomic_store_explicit(&rec_env_written, 1, memory_order_release);
}

/* --------------------------------------------------------- call records
 * The path itself is inline in every entry point (rec_int.h); these are
 * its cold parts. */
void rec_enter_slow(void)
{
    pthread_once(&rec_env_once, rec_write_env);
    if (!rec_tid)
        rec_tid = atomic_fetch_add(&rec_tid_next, 1) + 1;
}

void rec_enc_extras_(tf_enc *e, rec_extra *x, int n)
{
    tf_enc_map(e, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        tf_enc_cstr(e, x[i].key);
        if (x[i].val) {
            tf_enc_value(e, x[i].val);
        } else if (x[i].uints) {
            tf_enc_array(e, x[i].slot.n);
            for (uint32_t k = 0; k < x[i].slot.n; k++)
                tf_enc_uint(e, x[i].uints[k]);
        } else {
            rec_enc_slot(e, &x[i].slot);
        }
    }
}

static void rec_free_slot(rec_slot *s)
{
    if (s->state == REC_SLOT_BLOBS)
        free(s->v.blobs);
    s->state = REC_SLOT_NONE;
}

static void rec_free_extras(rec_extra *x, int n)
{
    for (int i = 0; i < n; i++) {
        free(x[i].uints);
        free(x[i].val);
        rec_free_slot(&x[i].slot);
    }
}

void rec_end_free(rec_call *c)
{
    for (uint32_t b = c->heap; b; b &= b - 1)
        rec_free_slot(&c->in[__builtin_ctz(b)]);
    if (c->npre)
        rec_free_extras(c->pre, c->npre);
    if (c->npost)
        rec_free_extras(c->post, c->npost);
}

void rec_sync_flush(int64_t now)
{
    if (now - atomic_load(&rec_last_flush) > 50000000) {
        atomic_store(&rec_last_flush, now);
        tf_writer_flush(rec_g.w, 0);
    }
}

void rec_note(uint64_t seq, const void *obj, const char *fmt, ...)
{
    if (!rec_g.active)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    uint64_t id = rec_obj_id(obj);
    tf_wrec_note(tf_writer_lock(rec_g.w), seq, id, text);
    tf_writer_unlock(rec_g.w);
}

/* Room for @p need elements of @p elem bytes in *arr (capacity *cap,
 * doubled). @return 0, or -1 out of memory (*arr unchanged). */
int rec_grow(void *arr, size_t *cap, size_t need, size_t elem)
{
    void **a = arr;
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    void *n = realloc(*a, c * elem);
    if (!n)
        return -1;
    *a = n;
    *cap = c;
    return 0;
}
