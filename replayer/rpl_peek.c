/* rpl_peek.c — the contents of one memory object after a given call,
 * computed by replaying the trace up to that call (rpl_peek, rpl.h;
 * `clrr show TRACE ID --at SEQ`), and a program's build log as the driver
 * here gives it after such a replay (rpl_peek_build_log; `clrr show TRACE
 * ID --log --replay`).
 *
 * The session replays unverified up to the first call numbered above SEQ
 * (the trim's pause: that call is not executed), waits for every queue it
 * made, and reads the object back whole on a queue of its context: a
 * buffer or sub-buffer with a blocking clEnqueueReadBuffer, an image with
 * clEnqueueReadImage of its whole region (rows packed: no pitch), an SVM
 * range with a blocking clEnqueueSVMMemcpy. */
#include "replayer/rpl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A live queue of @p ctx (NULL: any), or NULL. */
static cl_command_queue rpl_peek_queue(rpl_session *s, cl_context ctx)
{
    const rpl_api_table *a = &s->api;
    for (size_t i = 0; i < s->cap; i++) {
        rpl_obj *o = s->by_id[i];
        if (!o || (uintptr_t)o == 1 || o->kind != RPL_OBJ_QUEUE || !o->live)
            continue;
        cl_context qc = NULL;
        if (!ctx || (a->clGetCommandQueueInfo(o->live, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL) == CL_SUCCESS &&
                     qc == ctx))
            return o->live;
    }
    return NULL;
}

static void rpl_peek_finish_all(rpl_session *s)
{
    for (size_t i = 0; i < s->cap; i++) {
        rpl_obj *o = s->by_id[i];
        if (o && (uintptr_t)o != 1 && o->kind == RPL_OBJ_QUEUE && o->live)
            s->api.clFinish(o->live);
    }
}

static rpl_status rpl_peek_fail(char *err, size_t cap, rpl_status st, const char *fmt, const char *a)
{
    snprintf(err, cap, fmt, a);
    return st;
}

static rpl_status rpl_peek_read(rpl_session *s, uint64_t id, uint64_t svm_size, rpl_peek_result *out, char *err,
                                size_t cap)
{
    const rpl_api_table *a = &s->api;
    char idb[32];
    snprintf(idb, sizeof idb, "#%llu", (unsigned long long)id);
    rpl_obj *o = rpl_obj_find(s, id);
    cl_command_queue q;
    size_t n;
    if (svm_size) {   /* an SVM range: id is its recorded address */
        void *live = rpl_addr_span(s, id, svm_size);
        if (!live)
            return rpl_peek_fail(err, cap, RPL_ERR_ARG, "%s is not an SVM range of the replay at that call", idb);
        q = rpl_peek_queue(s, NULL);
        if (!q)
            return rpl_peek_fail(err, cap, RPL_ERR_ARG, "%s: no command queue to read it with", idb);
        n = (size_t)svm_size;
        if (n > s->o.max_memory)
            return rpl_peek_fail(err, cap, RPL_ERR_LIMIT, "%s is larger than the memory limit", idb);
        out->data = malloc(n ? n : 1);
        if (!out->data)
            return rpl_peek_fail(err, cap, RPL_ERR_NOMEM, "%s", "out of memory");
        cl_int e = a->clEnqueueSVMMemcpy(q, CL_TRUE, out->data, live, n, 0, NULL, NULL);
        if (e != CL_SUCCESS)
            return rpl_peek_fail(err, cap, RPL_ERR_CL, "reading the SVM range back failed (%s)",
                                 rpl_cl_error_name(e) ? rpl_cl_error_name(e) : "error");
        out->size = n;
        return RPL_OK;
    }
    if (!o || !o->live || o->kind != RPL_OBJ_MEM)
        return rpl_peek_fail(err, cap, RPL_ERR_ARG, "%s is not a memory object alive in the replay at that call",
                             idb);
    cl_context ctx = NULL;
    cl_mem_object_type type = 0;
    size_t size = 0;
    a->clGetMemObjectInfo(o->live, CL_MEM_CONTEXT, sizeof ctx, &ctx, NULL);
    a->clGetMemObjectInfo(o->live, CL_MEM_TYPE, sizeof type, &type, NULL);
    a->clGetMemObjectInfo(o->live, CL_MEM_SIZE, sizeof size, &size, NULL);
    q = rpl_peek_queue(s, ctx);
    if (!q)
        return rpl_peek_fail(err, cap, RPL_ERR_ARG, "%s: no command queue of its context to read it with", idb);
    size_t origin[3] = {0, 0, 0}, region[3] = {size, 1, 1};
    if (type == CL_MEM_OBJECT_PIPE)
        return rpl_peek_fail(err, cap, RPL_ERR_UNSUPPORTED, "%s is a pipe: its contents cannot be read", idb);
    if (type != CL_MEM_OBJECT_BUFFER) {
        size_t w = 0, h = 0, d = 0, arr = 0, es = 0;
        cl_image_format fmt = {0, 0};
        a->clGetImageInfo(o->live, CL_IMAGE_WIDTH, sizeof w, &w, NULL);
        a->clGetImageInfo(o->live, CL_IMAGE_HEIGHT, sizeof h, &h, NULL);
        a->clGetImageInfo(o->live, CL_IMAGE_DEPTH, sizeof d, &d, NULL);
        a->clGetImageInfo(o->live, CL_IMAGE_ARRAY_SIZE, sizeof arr, &arr, NULL);
        a->clGetImageInfo(o->live, CL_IMAGE_ELEMENT_SIZE, sizeof es, &es, NULL);
        a->clGetImageInfo(o->live, CL_IMAGE_FORMAT, sizeof fmt, &fmt, NULL);
        region[0] = w;
        region[1] = type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? arr : h ? h : 1;
        region[2] = type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? arr : d ? d : 1;
        out->image = 1;
        out->elem_size = es;
        out->channel_order = fmt.image_channel_order;
        out->channel_type = fmt.image_channel_data_type;
        for (int i = 0; i < 3; i++)
            out->region[i] = region[i];
        if (!es || region[0] > SIZE_MAX / es || region[0] * es > SIZE_MAX / region[1] ||
            region[0] * es * region[1] > SIZE_MAX / region[2])
            return rpl_peek_fail(err, cap, RPL_ERR_LIMIT, "%s: the image's size is out of range", idb);
        size = region[0] * es * region[1] * region[2];
    }
    n = size;
    if (n > s->o.max_memory)
        return rpl_peek_fail(err, cap, RPL_ERR_LIMIT, "%s is larger than the memory limit", idb);
    out->data = malloc(n ? n : 1);
    if (!out->data)
        return rpl_peek_fail(err, cap, RPL_ERR_NOMEM, "%s", "out of memory");
    cl_int e = out->image ? a->clEnqueueReadImage(q, o->live, CL_TRUE, origin, region, 0, 0, out->data, 0, NULL, NULL)
                          : a->clEnqueueReadBuffer(q, o->live, CL_TRUE, 0, n, out->data, 0, NULL, NULL);
    if (e != CL_SUCCESS)
        return rpl_peek_fail(err, cap, RPL_ERR_CL, "reading the object back failed (%s)",
                             rpl_cl_error_name(e) ? rpl_cl_error_name(e) : "error");
    out->size = n;
    return RPL_OK;
}

/* A session replayed unverified up to and including call @p at, every queue
 * finished; NULL with @p err set. */
static rpl_session *rpl_peek_run(const char *path, const rpl_opts *o, uint64_t at, rpl_status *st, char *err,
                                 size_t err_cap)
{
    rpl_opts so = *o;
    so.first = so.last = so.kernel = 0;
    so.verify = 0;
    so.loop = 1;
    so.exact_calls = 0;
    so.timing = 0;
    so.plan = NULL;
    so.profile = NULL;
    so.on_mismatch = NULL;
    so.on_time = NULL;
    rpl_session *s = NULL;
    *st = rpl_open(&s, path, &so);
    if (*st != RPL_OK) {
        snprintf(err, err_cap, "%s", rpl_open_error());
        return NULL;
    }
    s->pause_at = at + 1;
    while (!s->paused && (*st = rpl_step(s, NULL, NULL)) == RPL_OK)
        ;
    if (*st < 0) {
        snprintf(err, err_cap, "%s", rpl_error(s));
        rpl_close(s);
        return NULL;
    }
    *st = RPL_OK;
    rpl_peek_finish_all(s);
    return s;
}

rpl_status rpl_peek(const char *path, const rpl_opts *o, uint64_t at, uint64_t id, uint64_t svm_size,
                    rpl_peek_result *out, char *err, size_t err_cap)
{
    memset(out, 0, sizeof *out);
    err[0] = 0;
    if (!at || !id || at == UINT64_MAX)
        return rpl_peek_fail(err, err_cap, RPL_ERR_ARG, "%s", "no call or object given");
    rpl_status st;
    rpl_session *s = rpl_peek_run(path, o, at, &st, err, err_cap);
    if (!s)
        return st;
    rpl_summary sum;
    rpl_get_summary(s, &sum);
    snprintf(out->device, sizeof out->device, "%s", sum.device);
    st = rpl_peek_read(s, id, svm_size, out, err, err_cap);
    if (st != RPL_OK) {
        free(out->data);
        out->data = NULL;
        out->size = 0;
    }
    rpl_close(s);
    return st;
}

#define RPL_PEEK_LOG_MAX ((size_t)16 << 20)

rpl_status rpl_peek_build_log(const char *path, const rpl_opts *o, uint64_t at, uint64_t id, char **log, char *err,
                              size_t err_cap)
{
    *log = NULL;
    err[0] = 0;
    if (!at || !id || at == UINT64_MAX)
        return rpl_peek_fail(err, err_cap, RPL_ERR_ARG, "%s", "no call or program given");
    rpl_status st;
    rpl_session *s = rpl_peek_run(path, o, at, &st, err, err_cap);
    if (!s)
        return st;
    const rpl_api_table *a = &s->api;
    rpl_obj *p = rpl_obj_find(s, id);
    cl_device_id devs[64];
    size_t nb = 0;
    char idb[32];
    snprintf(idb, sizeof idb, "#%llu", (unsigned long long)id);
    if (!p || !p->live || p->kind != RPL_OBJ_PROGRAM) {
        st = rpl_peek_fail(err, err_cap, RPL_ERR_ARG, "%s is not a program alive in the replay at that call", idb);
    } else if (a->clGetProgramInfo(p->live, CL_PROGRAM_DEVICES, sizeof devs, devs, &nb) != CL_SUCCESS ||
               nb < sizeof devs[0]) {
        st = rpl_peek_fail(err, err_cap, RPL_ERR_CL, "%s: its devices cannot be asked", idb);
    }
    size_t len = 0, cap = 0;
    char *txt = NULL;
    for (size_t i = 0; st == RPL_OK && i < nb / sizeof devs[0]; i++) {
        char name[256] = "";
        size_t n = 0;
        a->clGetDeviceInfo(devs[i], CL_DEVICE_NAME, sizeof name - 1, name, NULL);
        if (a->clGetProgramBuildInfo(p->live, devs[i], CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS)
            n = 0;
        if (n > RPL_PEEK_LOG_MAX)
            n = RPL_PEEK_LOG_MAX;
        size_t need = len + strlen(name) + n + 32;
        if (need > cap) {
            char *t = realloc(txt, need);
            if (!t) {
                st = rpl_peek_fail(err, err_cap, RPL_ERR_NOMEM, "%s", "out of memory");
                break;
            }
            txt = t;
            cap = need;
        }
        len += (size_t)sprintf(txt + len, "-- %s --\n", name);
        if (n && a->clGetProgramBuildInfo(p->live, devs[i], CL_PROGRAM_BUILD_LOG, n, txt + len, NULL) == CL_SUCCESS) {
            txt[len + n - 1] = 0;
            len += strlen(txt + len);
        }
        if (!len || txt[len - 1] != '\n')
            txt[len++] = '\n';
        txt[len] = 0;
    }
    rpl_close(s);
    if (st != RPL_OK) {
        free(txt);
        return st;
    }
    *log = txt ? txt : strdup("");
    return *log ? RPL_OK : RPL_ERR_NOMEM;
}
