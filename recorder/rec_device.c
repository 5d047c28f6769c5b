/* rec_device.c — the device override (CLRR_DEVICE, `clrr record --device`,
 * `clrr run --device`; docs/recording.md, "The device you choose").
 *
 * Many applications take the first platform and its first device. With a
 * spec (as `clrr replay --device` takes it: an index of `clrr devices`, a
 * type, "gpu1", part of a name; trace-format's tf_devspec_pick), the layer
 * presents the device it names as the application's first platform and
 * first device, as CLIntercept's device override does:
 * - clGetPlatformIDs lists the chosen device's platform first, then the
 *   others in the loader's order (the same count);
 * - clGetDeviceIDs on that platform (or on NULL) of type DEFAULT answers
 *   the chosen device alone; of a type that includes the chosen device's
 *   (ALL among them) the same devices as without, the chosen one first;
 * - clCreateContextFromType on that platform (or with none) of such a type
 *   makes the context of those devices (clCreateContext), chosen first.
 * Anything else goes to the driver as it is. The override sits below the
 * recording: the three functions of rec_next are replaced by ours, which
 * call the next layer's (kept here), so the trace records what the
 * application saw, also when the recorder is inactive (`clrr run --device`
 * alone: CLRR_DEVICE_ONLY). The spec is resolved at the first of these
 * calls (never in clInitLayer, which must not call the loader back), over
 * every platform's devices in the loader's order: `clrr devices` order. */
#include "recorder/rec_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REC_DEV_MAX 256   /* devices the spec is matched against */

static struct {
    __typeof__(&clGetPlatformIDs) platforms;
    __typeof__(&clGetDeviceIDs) devices;
    __typeof__(&clCreateContextFromType) from_type;
} rec_real;

static const char *rec_dev_spec;           /* CLRR_DEVICE (the environment's) */
static pthread_once_t rec_dev_once = PTHREAD_ONCE_INIT;
static cl_platform_id rec_dev_plat;        /* set once resolved */
static cl_device_id rec_dev_dev;
static cl_device_type rec_dev_type;
static unsigned rec_dev_index;
static char rec_dev_name[256], rec_dev_pname[256], rec_dev_err[320], rec_dev_seen[512];

static void rec_dev_str(cl_platform_id p, cl_device_id d, cl_uint what, char *dst, size_t cap)
{
    dst[0] = 0;
    cl_int e = p ? rec_next.clGetPlatformInfo(p, what, cap - 1, dst, NULL)
                 : rec_next.clGetDeviceInfo(d, what, cap - 1, dst, NULL);
    if (e != CL_SUCCESS)
        dst[0] = 0;
    dst[cap - 1] = 0;
}

/* Every platform's devices, `clrr devices` order, then the spec. */
static void rec_dev_resolve(void)
{
    struct rec_dev_cand { cl_platform_id p; cl_device_id d; cl_device_type t; char name[256], pname[256]; } *c =
        calloc(REC_DEV_MAX, sizeof *c);
    tf_devspec_dev *m = calloc(REC_DEV_MAX, sizeof *m);
    cl_platform_id plats[64];
    cl_uint np = 0;
    unsigned n = 0;
    if (!c || !m) {
        snprintf(rec_dev_err, sizeof rec_dev_err, "--device %s: out of memory", rec_dev_spec);
        goto out;
    }
    cl_int pe = rec_real.platforms(64, plats, &np);
    size_t seen = (size_t)snprintf(rec_dev_seen, sizeof rec_dev_seen, "%u platform%s", pe == CL_SUCCESS ? np : 0,
                                   pe == CL_SUCCESS && np == 1 ? "" : "s");
    if (pe != CL_SUCCESS) {
        seen += (size_t)snprintf(rec_dev_seen + seen, sizeof rec_dev_seen - seen, " (error %d)", pe);
        np = 0;
    }
    for (cl_uint p = 0; p < np && p < 64; p++) {
        cl_device_id devs[64];
        cl_uint nd = 0;
        char pn[64];
        rec_dev_str(plats[p], NULL, CL_PLATFORM_NAME, pn, sizeof pn);
        cl_int de = rec_real.devices(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd);
        if (seen < sizeof rec_dev_seen)
            seen += (size_t)snprintf(rec_dev_seen + seen, sizeof rec_dev_seen - seen, "%s %s: %u device%s", p ? ";" : ":",
                                     pn, de == CL_SUCCESS ? nd : 0, de == CL_SUCCESS && nd == 1 ? "" : "s");
        if (de != CL_SUCCESS) {
            if (seen < sizeof rec_dev_seen)
                seen += (size_t)snprintf(rec_dev_seen + seen, sizeof rec_dev_seen - seen, " (error %d)", de);
            continue;
        }
        for (cl_uint d = 0; d < nd && d < 64 && n < REC_DEV_MAX; d++, n++) {
            c[n].p = plats[p];
            c[n].d = devs[d];
            if (rec_next.clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof c[n].t, &c[n].t, NULL) != CL_SUCCESS)
                c[n].t = 0;
            rec_dev_str(NULL, devs[d], CL_DEVICE_NAME, c[n].name, sizeof c[n].name);
            rec_dev_str(plats[p], NULL, CL_PLATFORM_NAME, c[n].pname, sizeof c[n].pname);
            m[n] = (tf_devspec_dev){c[n].name, c[n].pname, (uint64_t)c[n].t};
        }
    }
    int i = tf_devspec_pick(m, n, rec_dev_spec, rec_dev_err, sizeof rec_dev_err);
    if (i >= 0) {
        rec_dev_index = (unsigned)i;
        rec_dev_type = c[i].t;
        snprintf(rec_dev_name, sizeof rec_dev_name, "%s", c[i].name);
        snprintf(rec_dev_pname, sizeof rec_dev_pname, "%s", c[i].pname);
        rec_dev_plat = c[i].p;
        rec_dev_dev = c[i].d;
        rec_obj_created(rec_dev_dev, REC_OBJ_DEVICE);   /* its id, for ENV */
    }
out:
    if (!rec_dev_dev)   /* one line, then the application chooses as without clrr */
        fprintf(stderr, "clrr: %s; the application chooses its devices itself (the layer sees %s)\n", rec_dev_err,
                rec_dev_seen);
    free(c);
    free(m);
}

static int rec_dev_ready(void)
{
    pthread_once(&rec_dev_once, rec_dev_resolve);
    return rec_dev_dev != NULL;
}

/* Moves @p first to the front of @p v (@p n entries), keeping the others' order. */
static void rec_dev_front(void **v, cl_uint n, void *first)
{
    for (cl_uint i = 0; i < n; i++)
        if (v[i] == first) {
            memmove(v + 1, v, i * sizeof *v);
            v[0] = first;
            return;
        }
}

static cl_int CL_API_CALL rec_dev_platforms(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
{
    cl_int e = rec_real.platforms(num_entries, platforms, num_platforms);
    if (e != CL_SUCCESS || !platforms || !num_entries || !rec_dev_ready())
        return e;
    cl_platform_id all[64];
    cl_uint n = 0;
    if (rec_real.platforms(64, all, &n) != CL_SUCCESS)
        return e;
    if (n > 64)
        n = 64;
    rec_dev_front((void **)all, n, rec_dev_plat);
    memcpy(platforms, all, (num_entries < n ? num_entries : n) * sizeof *all);
    return e;
}

/* Whether a request of @p type on @p platform is one the override answers. */
static int rec_dev_takes(cl_platform_id platform, cl_device_type type)
{
    return rec_dev_ready() && platform == rec_dev_plat && (type & (rec_dev_type | CL_DEVICE_TYPE_DEFAULT));
}

static cl_int CL_API_CALL rec_dev_devices(cl_platform_id platform, cl_device_type type, cl_uint num_entries,
                                          cl_device_id *devices, cl_uint *num_devices)
{
    if (!platform && rec_dev_ready())
        platform = rec_dev_plat;   /* no platform: the first one */
    cl_int e = rec_real.devices(platform, type, num_entries, devices, num_devices);
    if (e != CL_SUCCESS || !rec_dev_takes(platform, type))
        return e;
    if (type == CL_DEVICE_TYPE_DEFAULT) {
        if (devices && num_entries)
            devices[0] = rec_dev_dev;
        if (num_devices)
            *num_devices = 1;
        return e;
    }
    if (!devices || !num_entries)
        return e;
    cl_device_id all[64];
    cl_uint n = 0;
    if (rec_real.devices(platform, type, 64, all, &n) != CL_SUCCESS)
        return e;
    if (n > 64)
        n = 64;
    rec_dev_front((void **)all, n, rec_dev_dev);
    memcpy(devices, all, (num_entries < n ? num_entries : n) * sizeof *all);
    return e;
}

static cl_context CL_API_CALL rec_dev_from_type(const cl_context_properties *props, cl_device_type type,
                                                void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                void *user_data, cl_int *errcode_ret)
{
    cl_platform_id p = NULL;
    for (size_t i = 0; props && props[i] && i < 64; i += 2)
        if (props[i] == CL_CONTEXT_PLATFORM)
            p = (cl_platform_id)props[i + 1];
    cl_device_id devs[64];
    cl_uint n = 0;
    if (!rec_next.clCreateContext || !rec_dev_ready() || !rec_dev_takes(p ? p : rec_dev_plat, type)
        || rec_dev_devices(rec_dev_plat, type, 64, devs, &n) != CL_SUCCESS || !n)
        return rec_real.from_type(props, type, notify, user_data, errcode_ret);
    return rec_next.clCreateContext(props, n < 64 ? n : 64, devs, notify, user_data, errcode_ret);
}

void rec_device_setup(const char *spec)
{
    if (!spec || !*spec || !rec_next.clGetPlatformIDs || !rec_next.clGetDeviceIDs || rec_dev_spec)
        return;
    rec_dev_spec = spec;
    rec_real.platforms = rec_next.clGetPlatformIDs;
    rec_real.devices = rec_next.clGetDeviceIDs;
    rec_real.from_type = rec_next.clCreateContextFromType;
    rec_next.clGetPlatformIDs = rec_dev_platforms;
    rec_next.clGetDeviceIDs = rec_dev_devices;
    if (rec_real.from_type)
        rec_next.clCreateContextFromType = rec_dev_from_type;
}

void *rec_device_real_fn(const char *name)
{
    if (!rec_dev_spec || !name)
        return NULL;
    if (!strcmp(name, "clGetPlatformIDs"))
        return (void *)rec_real.platforms;
    if (!strcmp(name, "clGetDeviceIDs"))
        return (void *)rec_real.devices;
    if (!strcmp(name, "clCreateContextFromType"))
        return (void *)rec_real.from_type;
    return NULL;
}

int rec_device_on(void)
{
    if (!rec_dev_spec)
        return 0;
    rec_dev_ready();
    return 1;
}

void rec_device_env(tf_enc *e)
{
    tf_enc_cstr(e, "device_override");
    if (!rec_dev_dev) {
        tf_enc_map(e, 2);
        tf_enc_cstr(e, "spec");
        tf_enc_cstr(e, rec_dev_spec);
        tf_enc_cstr(e, "error");
        tf_enc_cstr(e, rec_dev_err);
        return;
    }
    tf_enc_map(e, 5);
    tf_enc_cstr(e, "spec");
    tf_enc_cstr(e, rec_dev_spec);
    tf_enc_cstr(e, "device");
    tf_enc_cstr(e, rec_dev_name);
    tf_enc_cstr(e, "platform");
    tf_enc_cstr(e, rec_dev_pname);
    tf_enc_cstr(e, "index");
    tf_enc_uint(e, rec_dev_index);
    tf_enc_cstr(e, "device_id");
    tf_enc_uint(e, rec_obj_id(rec_dev_dev));
}
