/* rpl_hooks_prog.c — replay hooks for programs and kernels: sources and
 * binaries from the blob store, build failures with their log, kernel
 * arguments that are objects, host-pointer snapshots before launches.
 * (Listed with `replay` in recorder/api.overlay.) */
#include "replayer/rpl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rpl_pre_clCreateProgramWithSource(rpl_cx *x_, cl_context *context, cl_uint *count, const char ***strings,
                                      const size_t **lengths, cl_int **errcode_ret)
{
    (void)context;
    (void)errcode_ret;
    const tf_value *v = &x_->c->args[2];
    *strings = NULL;
    *lengths = NULL;
    if (v->type != TF_BIN && v->type != TF_BLOB) {
        *count = 0;
        return RPL_OK;
    }
    void *p;
    size_t got;
    int st = rpl_fetch(x_->s, v, 0, &p, &got);
    if (st < 0)
        return rpl_fail(x_, st);
    char *src = rpl_scratch(x_, got + 1);
    const char **arr = src ? rpl_scratch(x_, sizeof *arr) : NULL;
    if (!arr) {
        free(p);
        return RPL_ERR_NOMEM;
    }
    memcpy(src, p, got);
    free(p);
    arr[0] = src;
    *strings = arr;
    *count = 1;
    uint64_t id = 0;
    if (!rpl_session_opts(x_->s)->exact_calls && tf_value_u64(&x_->c->ret, &id) && id
        && rpl_progsrc_source(x_->s, id, src, got) < 0)
        return rpl_call_error(x_, RPL_ERR_NOMEM, "out of memory");
    return RPL_OK;
}

int rpl_pre_clCreateProgramWithBinary(rpl_cx *x_, cl_context *context, cl_uint *num_devices,
                                      const cl_device_id **device_list, const size_t **lengths,
                                      const unsigned char ***binaries, cl_int **binary_status, cl_int **errcode_ret)
{
    (void)device_list;
    const tf_value *v = &x_->c->args[4];
    *binaries = NULL;
    if (v->type != TF_ARRAY)
        return RPL_OK;
    uint32_t n = v->v.arr.n;
    if (n != *num_devices)
        return rpl_call_error(x_, RPL_ERR_INVALID, "%u binaries for %u devices", n, *num_devices);
    /* on another device, a binary fetched from a program built from source
     * is that source, built with that program's options (rpl_progsrc.c) */
    cl_program p = NULL;
    int sub = !rpl_session_opts(x_->s)->exact_calls && rpl_devmap_remapped(x_->s)
                  ? rpl_progsrc_substitute(x_, *context, v, &p) : 0;
    if (sub < 0)
        return rpl_call_error(x_, RPL_ERR_NOMEM, "out of memory");
    if (sub) {
        for (uint32_t i = 0; *binary_status && i < n; i++)
            (*binary_status)[i] = CL_SUCCESS;
        if (*errcode_ret)
            **errcode_ret = CL_SUCCESS;
        x_->ret_handle = p;
        return 1;
    }
    size_t *len = rpl_scratch(x_, (n ? n : 1) * sizeof *len);
    const unsigned char **bin = len ? rpl_scratch(x_, (n ? n : 1) * sizeof *bin) : NULL;
    if (!bin)
        return RPL_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        void *p;
        size_t got;
        int st = rpl_fetch(x_->s, &v->v.arr.items[i], 0, &p, &got);
        if (st < 0)
            return rpl_fail(x_, st);
        if (st == 0)
            continue;
        unsigned char *d = rpl_scratch(x_, got);
        if (!d) {
            free(p);
            return RPL_ERR_NOMEM;
        }
        memcpy(d, p, got);
        free(p);
        bin[i] = d;
        len[i] = got;
    }
    *lengths = len;
    *binaries = bin;
    return RPL_OK;
}

/* A program created from source in place of a binary is built with the
 * options its source was built with; a program from source, with the
 * headers recorded with it and none of this machine's (rpl_progsrc.c). */
int rpl_pre_clBuildProgram(rpl_cx *x_, cl_program *program, cl_uint *num_devices, const cl_device_id **device_list,
                           const char **options, void (**pfn_notify)(cl_program, void *), void **user_data)
{
    (void)num_devices;
    (void)device_list;
    (void)pfn_notify;
    (void)user_data;
    const char *o = rpl_progsrc_options(x_->s, rpl_arg_id(x_, 0));
    if (o)
        *options = o;
    if (rpl_session_opts(x_->s)->exact_calls)
        return 0;
    return rpl_progsrc_prepare_build(x_, program, options, NULL, NULL);
}

/* clCompileProgram: with the headers recorded with it, its input headers
 * inlined too (rpl_progsrc.c); none of this machine's. */
int rpl_pre_clCompileProgram(rpl_cx *x_, cl_program *program, cl_uint *num_devices, const cl_device_id **device_list,
                             const char **options, cl_uint *num_input_headers, const cl_program **input_headers,
                             const char ***header_include_names, void (**pfn_notify)(cl_program, void *),
                             void **user_data)
{
    (void)num_devices;
    (void)device_list;
    (void)num_input_headers;
    (void)input_headers;
    (void)header_include_names;
    (void)pfn_notify;
    (void)user_data;
    if (rpl_session_opts(x_->s)->exact_calls)
        return 0;
    return rpl_progsrc_prepare_build(x_, program, options, &x_->c->args[6], &x_->c->args[5]);
}

/* A build that succeeded when recorded and fails here: the log says why.
 * A successful one is remembered for rpl_progsrc. */
int rpl_post_clBuildProgram(rpl_cx *x_, int ok, cl_int *ret, cl_program program, cl_uint num_devices,
                            const cl_device_id *device_list, const char *options, void (*pfn_notify)(cl_program, void *),
                            void *user_data)
{
    (void)pfn_notify;
    (void)user_data;
    if (ok && !rpl_session_opts(x_->s)->exact_calls) {
        if (rpl_progsrc_built(x_->s, rpl_arg_id(x_, 0), options) < 0)
            return rpl_call_error(x_, RPL_ERR_NOMEM, "out of memory");
        rpl_progsrc_live(x_->s, rpl_arg_id(x_, 0), program);   /* profiling finds kernels' sources */
        int st = rpl_split_prepare(x_->s, program);   /* a plan's splits: their kernels, built now */
        if (st < 0)
            return st;
    }
    if (ok || !x_->recorded_ok || !x_->c->complete)
        return RPL_OK;
    char log[1024] = "";
    const rpl_api_table *a = x_->api;
    if (!rpl_session_opts(x_->s)->exact_calls && a->clGetProgramBuildInfo) {
        cl_device_id dev = num_devices && device_list ? device_list[0] : NULL;
        cl_device_id devs[8];
        if (!dev && a->clGetProgramInfo
            && a->clGetProgramInfo(program, CL_PROGRAM_DEVICES, sizeof devs, devs, NULL) == CL_SUCCESS)
            dev = devs[0];
        size_t n = 0;
        if (dev && a->clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &n) != CL_SUCCESS)
            log[0] = 0;
        for (char *p = log; *p; p++)
            if (*p == '\n' || *p == '\r' || *p == '\t')
                *p = ' ';
    }
    const char *name = rpl_cl_error_name(*ret);
    return rpl_call_error(x_, RPL_ERR_CL, "program #%llu failed to build here (%s) with options \"%s\"%s%.700s",
                          (unsigned long long)rpl_arg_id(x_, 0), name ? name : "error", options ? options : "",
                          log[0] ? ": " : "", log);
}

/* Object arguments were recorded as ids; bytes as bytes; local memory as nil. */
int rpl_pre_clSetKernelArg(rpl_cx *x_, cl_kernel *kernel, cl_uint *arg_index, size_t *arg_size,
                           const void **arg_value)
{
    (void)kernel;
    const tf_value *v = &x_->c->args[3];
    rpl_obj *k = rpl_obj_find(x_->s, rpl_arg_id(x_, 0));
    uint64_t mem = 0;
    unsigned kind = 0;
    *arg_value = NULL;
    if (v->type == TF_UINT) {
        rpl_obj *o = rpl_obj_find(x_->s, v->v.u);
        if (!o || !o->live)
            return rpl_call_error(x_, RPL_ERR_INVALID, "argument %u refers to #%llu, which no replayed call created",
                                  *arg_index, (unsigned long long)v->v.u);
        void **slot = rpl_scratch(x_, sizeof *slot);
        if (!slot)
            return RPL_ERR_NOMEM;
        *slot = o->live;
        *arg_value = slot;
        if (o->kind == RPL_OBJ_MEM || o->kind == RPL_OBJ_UNKNOWN)
            mem = o->id;
        kind = o->kind ? o->kind : RPL_OBJ_MEM;
    } else if (v->type == TF_BIN || v->type == TF_BLOB) {
        RPL_TRY(rpl_in_blob(x_, 3, *arg_size, arg_value));
    } else if (v->type != TF_NIL) {
        return rpl_call_error(x_, RPL_ERR_INVALID, "argument value of an unexpected type");
    }
    if (k && *arg_index < RPL_MAX_KARGS)
        k->args[*arg_index] = mem;
    if (k && ((x_->s->o.plan && (x_->s->o.plan->fused || x_->s->o.plan->split || x_->s->o.plan->coarsen)) ||
              x_->s->prof || x_->s->tune)) {
        RPL_TRY(rpl_kargs_note(x_->s, k, *arg_index, *arg_size, *arg_value));
        if (k->kargs && *arg_index < RPL_MAX_KARGS)
            k->kargs->a[*arg_index].obj = (uint8_t)kind;
    }
    return RPL_OK;
}

/* Before a snapshot is written into host memory: the launches enqueued
 * before it (the replay's own, non-blocking) may still read or write that
 * memory, so every queue is finished first, as the recorder finished the
 * queue of the last launch that used the buffer before taking the
 * snapshot (recorder/hooks_mem.c). Not in exact-calls mode (no call of
 * the replay's own), nor while a user event is unset (a command waiting
 * for it would never finish). */
static int rpl_host_quiet(rpl_cx *x)
{
    rpl_session *s = x->s;
    if (s->o.exact_calls || !s->api.clFinish)
        return RPL_OK;
    for (size_t i = 0; i < s->cap; i++) {
        rpl_obj *o = s->by_id[i];
        if (o && (uintptr_t)o > 1 && o->kind == RPL_OBJ_EVENT && o->user_unset && o->live)
            return RPL_OK;
    }
    for (size_t i = 0; i < s->cap; i++) {
        rpl_obj *o = s->by_id[i];
        if (!o || (uintptr_t)o <= 1 || o->kind != RPL_OBJ_QUEUE || !o->live)
            continue;
        RPL_TRY(rpl_sched_sync(x, o->live, 1));
        s->api.clFinish(o->live);
    }
    return RPL_OK;
}

/* Host memory behind USE_HOST_PTR buffers, as the kernel was about to read it. */
static int rpl_host_snapshots(rpl_cx *x)
{
    int quiet = 0;
    const tf_value *pre = x->c->pre;
    if (!pre || pre->type != TF_MAP)
        return RPL_OK;
    for (uint32_t i = 0; i < pre->v.map.n; i++) {
        const tf_value *k = &pre->v.map.keys[i];
        if (k->type != TF_STR || k->v.str.len < 6 || memcmp(k->v.str.ptr, "host.", 5))
            continue;
        char num[32];
        snprintf(num, sizeof num, "%.*s", (int)(k->v.str.len - 5), k->v.str.ptr + 5);
        rpl_obj *o = rpl_obj_find(x->s, strtoull(num, NULL, 10));
        if (!o || !o->host)
            continue;
        void *p;
        size_t got;
        int st = rpl_fetch(x->s, &pre->v.map.vals[i], 0, &p, &got);
        if (st < 0)
            return rpl_fail(x, st);
        if (st == 0)
            continue;
        if (!quiet++ && (st = rpl_host_quiet(x)) < 0) {
            free(p);
            return st;
        }
        memcpy(o->host, p, got < o->host_size ? got : o->host_size);
        free(p);
        rpl_count_bytes_in(x->s, got);
    }
    return RPL_OK;
}

int rpl_pre_clEnqueueNDRangeKernel(rpl_cx *x_, cl_command_queue *command_queue, cl_kernel *kernel, cl_uint *work_dim,
                                   const size_t **global_work_offset, const size_t **global_work_size,
                                   const size_t **local_work_size, cl_uint *num_events_in_wait_list,
                                   const cl_event **event_wait_list, cl_event **event)
{
    (void)global_work_offset;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    RPL_TRY(rpl_host_snapshots(x_));
    RPL_TRY(rpl_local_pre(x_, *command_queue, kernel, *work_dim, global_work_size, local_work_size));
    /* cost learning measures the launch on copies of its inputs, as they
     * are now (host-pointer snapshots written) */
    return x_->s->prof ? rpl_profile_kernel(x_) : RPL_OK;
}

int rpl_post_clEnqueueNDRangeKernel(rpl_cx *x_, int ok, cl_int *ret, cl_command_queue command_queue, cl_kernel kernel,
                                    cl_uint work_dim, const size_t *global_work_offset, const size_t *global_work_size,
                                    const size_t *local_work_size, cl_uint num_events_in_wait_list,
                                    const cl_event *event_wait_list, cl_event *event)
{
    (void)kernel;
    (void)work_dim;
    (void)global_work_offset;
    (void)global_work_size;
    (void)local_work_size;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    if (ok)
        rpl_note_launch(x_->s, x_->c->seq, rpl_obj_find(x_->s, rpl_arg_id(x_, 1)));
    return rpl_local_post(x_, ok, command_queue, ret ? *ret : CL_SUCCESS);
}

int rpl_pre_clEnqueueTask(rpl_cx *x_, cl_command_queue *command_queue, cl_kernel *kernel,
                          cl_uint *num_events_in_wait_list, const cl_event **event_wait_list, cl_event **event)
{
    (void)command_queue;
    (void)kernel;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    return rpl_host_snapshots(x_);
}

int rpl_post_clEnqueueTask(rpl_cx *x_, int ok, cl_int *ret, cl_command_queue command_queue, cl_kernel kernel,
                           cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
{
    (void)ret;
    (void)command_queue;
    (void)kernel;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    if (ok)
        rpl_note_launch(x_->s, x_->c->seq, rpl_obj_find(x_->s, rpl_arg_id(x_, 1)));
    return RPL_OK;
}

int rpl_pre_clEnqueueNativeKernel(rpl_cx *x_, cl_command_queue *command_queue, void (**user_func)(void *),
                                  void **args, size_t *cb_args, cl_uint *num_mem_objects, const cl_mem **mem_list,
                                  const void ***args_mem_loc, cl_uint *num_events_in_wait_list,
                                  const cl_event **event_wait_list, cl_event **event)
{
    (void)command_queue;
    (void)user_func;
    (void)args;
    (void)cb_args;
    (void)num_mem_objects;
    (void)mem_list;
    (void)args_mem_loc;
    (void)num_events_in_wait_list;
    (void)event_wait_list;
    (void)event;
    if (!x_->recorded_ok) {   /* it failed when recorded: answer with the same error */
        x_->ret_override = (cl_int)x_->recorded_code;
        return 1;
    }
    return rpl_call_error(x_, RPL_ERR_UNSUPPORTED, "a native kernel is a host function of the application; "
                          "it cannot be replayed");
}

/* CL_PROGRAM_BINARIES: param_value is an array of pointers to the caller's
 * buffers, sized from CL_PROGRAM_BINARY_SIZES (the recorded pointers mean
 * nothing in this process). In exact-calls mode no call of our own may be
 * made: the sizes are those this runtime answered to the application's own
 * CL_PROGRAM_BINARY_SIZES query of the program (an application must ask
 * them before it can fetch the binaries), kept for that purpose in the
 * program's rpl_obj (host/host_size, owned: freed with the object; the
 * field is otherwise used by memory objects only). Without such a query
 * they are asked here, in any mode. */
int rpl_pre_clGetProgramInfo(rpl_cx *x_, cl_program *program, cl_program_info *param_name, size_t *param_value_size,
                             void **param_value, size_t **param_value_size_ret)
{
    (void)param_value_size_ret;
    int exact = rpl_session_opts(x_->s)->exact_calls;
    rpl_obj *po = rpl_obj_find(x_->s, rpl_arg_id(x_, 0));
    if (exact && *param_name == CL_PROGRAM_BINARY_SIZES && *param_value && po && po->kind == RPL_OBJ_PROGRAM) {
        /* the runtime writes the sizes straight into memory that outlives the call */
        void *keep = calloc(1, *param_value_size ? *param_value_size : 1);
        if (!keep)
            return rpl_call_error(x_, RPL_ERR_NOMEM, "out of memory");
        if (po->host_owned)
            free(po->host);
        po->host = keep;
        po->host_size = *param_value_size;
        po->host_owned = 1;
        *param_value = keep;
        return 0;
    }
    if (*param_name != CL_PROGRAM_BINARIES || !*param_value)
        return 0;
    if (!exact && x_->c->post && rpl_progsrc_binaries(x_->s, rpl_arg_id(x_, 0), tf_map_get(x_->c->post, "binaries")) < 0)
        return rpl_call_error(x_, RPL_ERR_NOMEM, "out of memory");
    size_t n = *param_value_size / sizeof(unsigned char *);
    size_t *sizes = rpl_scratch(x_, (n ? n : 1) * sizeof *sizes);
    if (!sizes)
        return RPL_ERR_NOMEM;
    if (exact && po && po->kind == RPL_OBJ_PROGRAM && po->host_owned && po->host_size >= n * sizeof *sizes)
        memcpy(sizes, po->host, n * sizeof *sizes);
    else if (!x_->api->clGetProgramInfo
        || x_->api->clGetProgramInfo(*program, CL_PROGRAM_BINARY_SIZES, n * sizeof *sizes, sizes, NULL) != CL_SUCCESS)
        memset(sizes, 0, n * sizeof *sizes);
    unsigned char **bins = *param_value;
    for (size_t i = 0; i < n; i++) {
        bins[i] = sizes[i] ? rpl_scratch(x_, sizes[i]) : NULL;
        if (sizes[i] && !bins[i])
            return RPL_ERR_NOMEM;
    }
    return 0;
}
