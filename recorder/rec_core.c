/* rec_core.c — recorder life cycle and the record protocol used by every
 * generated entry point: initialization (layer or preload), the environment
 * record, BEGIN/END records and exit (fatal signals: rec_signals.c). */
#include "recorder/rec_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
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
static void rec_forget_platforms(void);

void rec_report_writer_error(void)
{
    if (!rec_g.active || !rec_g.w || tf_writer_status(rec_g.w) == TF_OK)
        return;   /* not active: the exit closed it (a late thread's call) */
    if (atomic_exchange(&rec_g.error_reported, 1))
        return;
    fprintf(stderr, "clrr: recording stopped: %s (the trace keeps the calls before; the "
            "application goes on)\n", tf_writer_errmsg(rec_g.w));
}

/* ------------------------------------------------------- the trace name
 * One trace per process (docs/recording.md, "Several processes"). The
 * output CLRR_OUTPUT names is claimed by the first process that records;
 * every other one writes the sibling NAME.PID.clrr (the pid before the
 * last extension). How "first" is decided:
 * - CLRR_CLAIM=1 (set by `clrr record`, which removed or refused an older
 *   set before the run): the name is created with O_CREAT|O_EXCL; a process
 *   that finds it existing takes the sibling. Sequential and concurrent
 *   processes never share a file.
 * - without it (the layer used directly): an earlier run's trace is
 *   replaced as before, but the name is held with flock() for the life of
 *   the process, so a second process running at the same time takes the
 *   sibling instead of truncating a trace in progress.
 * - CLRR_OUTPUT ending in '/': a directory; each process writes
 *   DIR/COMM.PID.clrr.
 * - a path that exists and is not a regular file (/dev/null) is opened as
 *   it is, by every process.
 * - the child of a fork (rec_atfork_child) always takes the sibling: the
 *   parent's file is the parent's. */
static int rec_lock_fd = -1;              /* flock on the output (direct mode) */
static char rec_path[PATH_MAX];           /* the trace this process writes */
static int rec_forked;                    /* the child of a fork of a recording process */
static tf_writer *rec_null_w;             /* drops records: a forked child whose trace
                                             cannot be created ends its call on it */

/* NAME.PID.EXT for @p out (NAME.PID without an extension) into @p dst. */
static void rec_sibling(const char *out, char *dst, size_t cap)
{
    const char *slash = strrchr(out, '/');
    const char *dot = strrchr(slash ? slash + 1 : out, '.');
    if (!dot || dot == (slash ? slash + 1 : out))
        snprintf(dst, cap, "%s.%ld", out, (long)getpid());
    else
        snprintf(dst, cap, "%.*s.%ld%s", (int)(dot - out), out, (long)getpid(), dot);
}

/* Creates @p path with O_EXCL. @return 0 (created, empty), or errno. */
static int rec_create_excl(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

/* Decides the trace of this process into rec_path (see above). @return 0,
 * or an errno value (rec_path names what failed). */
static int rec_claim_output(void)
{
    const char *out = rec_g.ctl.output;
    size_t n = strlen(out);
    struct stat st;
    if (n && out[n - 1] == '/') {
        char comm[64] = "proc";
        FILE *fp = fopen("/proc/self/comm", "r");
        if (fp) {
            if (fgets(comm, sizeof comm, fp))
                comm[strcspn(comm, "\n/")] = 0;
            fclose(fp);
        }
        snprintf(rec_path, sizeof rec_path, "%s%s.%ld.clrr", out, comm[0] ? comm : "proc", (long)getpid());
        int e = rec_create_excl(rec_path);
        for (int k = 1; e == EEXIST && k < 100; k++) {   /* a stale file of a recycled pid */
            snprintf(rec_path, sizeof rec_path, "%s%s.%ld.%d.clrr", out, comm[0] ? comm : "proc",
                     (long)getpid(), k);
            e = rec_create_excl(rec_path);
        }
        return e;
    }
    snprintf(rec_path, sizeof rec_path, "%s", out);
    if (stat(out, &st) == 0 && !S_ISREG(st.st_mode))
        return 0;   /* a device: opened as it is */
    const char *claim = getenv("CLRR_CLAIM");
    if (!rec_forked && claim && !strcmp(claim, "1")) {
        int e = rec_create_excl(out);
        if (e != EEXIST)
            return e;
    } else if (!rec_forked) {
        int fd = open(out, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return errno;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            rec_lock_fd = fd;   /* held until exit */
            return 0;
        }
        close(fd);
    }
    rec_sibling(out, rec_path, sizeof rec_path);
    return 0;   /* a stale sibling (a recycled pid) is replaced */
}

/* Opens the writer on this process's trace. @return 0, or -1 (one line
 * said why; rec_g.w stays NULL). */
static int rec_open_writer(void)
{
    tf_writer_opts o = {.level = rec_g.ctl.level, .memory_budget = rec_g.ctl.memory,
                        .flush_ms = (unsigned)rec_g.ctl.flush_ms,
                        .threads = rec_g.ctl.compress_threads > 64 ? 64 : (unsigned)rec_g.ctl.compress_threads,
                        .features_optional = rec_data_features()};
    int e = rec_claim_output();
    tf_status st = e ? TF_ERR_IO : tf_writer_open(&rec_g.w, rec_path, &o);
    if (st != TF_OK) {
        /* the application runs as if the recorder were not there */
        if (!e)
            e = errno;
        fprintf(stderr, "clrr: cannot create trace %s: %s; the application goes on unrecorded\n",
                rec_path, st == TF_ERR_IO && e ? strerror(e) : tf_strerror(st));
        rec_g.w = NULL;
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- life */
static void rec_shutdown(void)
{
    /* a forked child that made no OpenCL call since: nothing of its own to
     * close (the parent's writer and its threads are the parent's) */
    if (!rec_g.active || !rec_g.w)
        return;
    rec_events_stop();
    rec_plan_end();
    rec_g.active = 0;
    rec_data_counts();
    char msg[600];
    /* not freed: another application thread may still be in a call */
    tf_status st = tf_writer_close_shared(rec_g.w, msg, sizeof msg);
    if (st != TF_OK && !atomic_exchange(&rec_g.error_reported, 1))
        fprintf(stderr, "clrr: trace incomplete: %s\n", msg);
}

static void rec_discard_sink(void *ctx, const void *rec, size_t len)
{
    (void)ctx;
    (void)rec;
    (void)len;
}

/* Fork: the child has only the forking thread. The parent's writer (its
 * workers, its file, its locks) stays the parent's: the child forgets it
 * and starts a writer of its own, on NAME.PID.clrr, at its next OpenCL
 * call (rec_write_env); a child that makes none writes nothing and its
 * exit() does not wait for threads that were not forked. Plan mode: the
 * child runs the application's calls as they are (no plan, no trace). */
static int rec_fork_held;   /* rec_atfork_prepare took the locks (the recorder was set up) */
static pthread_mutex_t rec_dev_lock;   /* (defined below, with the platforms it guards) */

/* Before fork: every lock of the recorder that the child uses, in one
 * order (the device lock, the events' poll and queue locks, the object
 * table's, the mapped regions'), so that no other thread holds one when the process is copied;
 * a thread inside one finishes first. The writer's locks (the record lock,
 * the queue's) need none of this: the child never touches the parent's
 * writer and starts its own. */
static void rec_atfork_prepare(void)
{
    rec_fork_held = rec_g.active;
    if (!rec_fork_held)
        return;
    pthread_mutex_lock(&rec_dev_lock);
    rec_events_atfork(REC_FORK_PREPARE);
    rec_objs_atfork(REC_FORK_PREPARE);
    rec_maps_atfork(REC_FORK_PREPARE);
}

static void rec_atfork_release(int phase)
{
    if (!rec_fork_held)
        return;
    rec_maps_atfork(phase);
    rec_objs_atfork(phase);
    rec_events_atfork(phase);
    pthread_mutex_unlock(&rec_dev_lock);
}

static void rec_atfork_parent(void)
{
    rec_atfork_release(REC_FORK_PARENT);
}

static void rec_atfork_child(void)
{
    rec_atfork_release(REC_FORK_CHILD);
    if (rec_lock_fd >= 0) {
        close(rec_lock_fd);   /* the parent's description keeps the lock */
        rec_lock_fd = -1;
    }
    if (!rec_g.active)
        return;
    rec_g.w = NULL;
    if (rec_g.plan || !rec_null_w) {
        rec_g.active = 0;
        return;
    }
    rec_forked = 1;
    rec_env_once = (pthread_once_t)PTHREAD_ONCE_INIT;
    atomic_store(&rec_env_written, 0);
    atomic_store(&rec_g.seq, 0);
    atomic_store(&rec_g.error_reported, 0);
    atomic_store(&rec_last_flush, 0);
    for (size_t i = 0; i < REC_FN_COUNT; i++)
        atomic_store(&rec_sig_written[i], 0);
    rec_forget_platforms();
}

static void rec_init(void)
{
    char err[256];
    if (rec_controls_from_env(&rec_g.ctl, err, sizeof err)) {
        fprintf(stderr, "clrr: %s; not recording\n", err);
        return;
    }
    rec_device_setup(rec_g.ctl.device);
    const char *only = getenv("CLRR_DEVICE_ONLY");
    if (only && !strcmp(only, "1"))
        return;   /* `clrr run --device` alone: the override, no trace, no plan */
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
        if (tf_writer_open(&rec_g.w, NULL, &o) != TF_OK) {
            fprintf(stderr, "clrr: cannot start the plan's writer: out of memory; the application goes on "
                    "without the plan\n");
            rec_g.w = NULL;
            return;
        }
    } else if (rec_open_writer()) {
        return;
    } else {
        rec_stage_record_init();
        tf_writer_opts no = {.sink = rec_discard_sink};
        if (tf_writer_open(&rec_null_w, NULL, &no) != TF_OK)
            rec_null_w = NULL;
    }
    rec_g.seq_at_enter = plan || rec_g.ctl.first_call || rec_g.ctl.last_call;
    rec_host_clock = rec_clock_init(rec_g.ctl.tsc_clock);
    rec_g.active = 1;
    rec_signals_install();
    rec_events_start();
    pthread_atfork(rec_atfork_prepare, rec_atfork_parent, rec_atfork_child);
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

/* A forked child's trace describes its platforms again (rec_atfork_child). */
static void rec_forget_platforms(void)
{
    pthread_mutex_init(&rec_dev_lock, NULL);
    rec_ndev_done = 0;
}

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
    (void)a_properties;
    (void)a_device_type;
    (void)a_pfn_notify;
    (void)a_user_data;
    (void)a_errcode_ret;
    cl_device_id d = NULL;
    cl_platform_id p = NULL;
    if (ok && *ret && !rec_next.clGetContextInfo(*ret, CL_CONTEXT_DEVICES, sizeof d, &d, NULL) && d
        && !rec_next.clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL)) {
        rec_describe_platform(p);
        /* the platform the context got (post.platform): with no platform
         * property it is the loader's choice, or the device override's,
         * which a replay must not leave to its own loader */
        rec_extra *x = rec_extra_add(c, 1, "platform");
        if (x) {
            x->slot.state = REC_SLOT_UINT;
            x->slot.v.u = rec_obj_id(p);
        }
    }
}

static void rec_write_env(void)
{
    if (!rec_g.w) {
        /* the child of a fork, at its first OpenCL call: a writer of its own */
        if (rec_open_writer()) {
            /* unrecorded from now on; this call ends on a writer that drops
             * what it is given */
            rec_g.w = rec_null_w;
            rec_g.ctl.capture_data = 0;
            rec_g.active = 0;
            return;
        }
        rec_events_start();
    }
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
    int dev = rec_device_on();
    tf_enc *e = tf_writer_lock(rec_g.w);
    tf_wrec_env_head(e);   /* then the environment map */
    tf_enc_map(e, 13 + (uint32_t)dev);
    rec_env_str(e, "recorder", "clrr " CLRR_VERSION);
    rec_env_cmdline(e);
    rec_env_uint(e, "pid", (uint64_t)getpid());
    rec_env_uint(e, "ppid", (uint64_t)getppid());
    rec_env_str(e, "trace", rec_path);
    rec_env_uint(e, "start_unix_ns", (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    rec_env_str(e, "hostname", host);
    rec_env_str(e, "layer_mode", rec_g.layer_mode ? "layer" : "preload");
    rec_env_uint(e, "capture_data", (uint64_t)rec_g.ctl.capture_data);
    rec_env_uint(e, "device_timing", (uint64_t)rec_g.ctl.device_timing);
    rec_env_uint(e, "timing_interval_us", rec_g.ctl.timing_interval_us);
    rec_env_str(e, "host_clock", rec_host_clock);
    rec_env_platforms(e);
    if (dev)
        rec_device_env(e);
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
