/* hooks_program.c — program sources and binaries, kernel arguments. */
#include "recorder/rec_int.h"

#include <stdlib.h>
#include <string.h>

/* clCreateProgramWithSource: the strings, joined, become one blob (the
 * exact source the compiler sees). Sources are always captured: without
 * them nothing can be replayed or analyzed. */
int rec_pre_clCreateProgramWithSource(rec_call *c, cl_context *a_context, cl_uint *a_count,
                                      const char ***a_strings, const size_t **a_lengths,
                                      cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_errcode_ret;
    const char **s = *a_strings;
    const size_t *len = *a_lengths;
    int null_entry = 0;   /* CL_INVALID_VALUE: recorded as no strings, which the replay's runtime refuses too */
    for (cl_uint i = 0; s && i < *a_count; i++)
        null_entry |= !s[i];
    if (!s || !*a_count || null_entry) {
        c->in[2].state = REC_SLOT_NULL;
        return 0;
    }
    size_t total = 0;
    for (cl_uint i = 0; i < *a_count; i++)
        total += !s[i] ? 0 : (len && len[i]) ? len[i] : strlen(s[i]);
    char *joined = malloc(total ? total : 1);
    if (!joined) {
        c->in[2].state = REC_SLOT_SKIPPED;
        return 0;
    }
    size_t off = 0;
    for (cl_uint i = 0; i < *a_count; i++) {
        if (!s[i])
            continue;
        size_t n = (len && len[i]) ? len[i] : strlen(s[i]);
        memcpy(joined + off, s[i], n);
        off += n;
    }
    int cap = c->capture;
    c->capture = 1;
    rec_slot_fill(c, &c->in[2], joined, total);
    c->capture = cap;
    free(joined);
    return 0;
}

/* clCreateProgramWithBinary: one blob per device binary. */
int rec_pre_clCreateProgramWithBinary(rec_call *c, cl_context *a_context, cl_uint *a_num_devices,
                                      const cl_device_id **a_device_list, const size_t **a_lengths,
                                      const unsigned char ***a_binaries, cl_int **a_binary_status,
                                      cl_int **a_errcode_ret)
{
    (void)a_context;
    (void)a_device_list;
    (void)a_binary_status;
    (void)a_errcode_ret;
    cl_uint n = *a_num_devices;
    const unsigned char **bin = *a_binaries;
    if (!bin || !*a_lengths || !n || n > 1024) {
        c->in[4].state = REC_SLOT_NULL;
        return 0;
    }
    tf_blobref *refs = calloc(n, sizeof *refs);
    if (!refs) {
        c->in[4].state = REC_SLOT_SKIPPED;
        return 0;
    }
    for (cl_uint i = 0; i < n; i++)
        if (bin[i])
            tf_writer_blob(rec_g.w, bin[i], (*a_lengths)[i], &refs[i]);
    c->in[4].state = REC_SLOT_BLOBS;
    c->heap |= 1u << 4;
    c->in[4].n = n;
    c->in[4].v.blobs = refs;
    return 0;
}

/* clBuildProgram, plan mode: the plan's fused kernels made from this
 * program are built now (rec_plan_program). */
void rec_post_clBuildProgram(rec_call *c, int ok, cl_int *ret, cl_program a_program, cl_uint a_num_devices,
                             const cl_device_id *a_device_list, const char *a_options,
                             void(CL_CALLBACK *a_pfn_notify)(cl_program, void *), void *a_user_data)
{
    (void)c;
    (void)ret;
    (void)a_num_devices;
    (void)a_device_list;
    (void)a_options;
    (void)a_pfn_notify;
    (void)a_user_data;
    if (ok && rec_g.plan)
        rec_plan_program(a_program);
}

/* clSetKernelArgSVMPointer, clSetKernelExecInfo, plan mode: the layer does
 * not track these, so the kernel's launches are not kept. */
void rec_post_clSetKernelArgSVMPointer(rec_call *c, int ok, cl_int *ret, cl_kernel a_kernel, cl_uint a_arg_index,
                                       const void *a_arg_value)
{
    (void)c;
    (void)ret;
    (void)a_arg_index;
    (void)a_arg_value;
    if (ok && rec_g.plan)
        rec_plan_karg_opaque(a_kernel);
}

void rec_post_clSetKernelExecInfo(rec_call *c, int ok, cl_int *ret, cl_kernel a_kernel,
                                  cl_kernel_exec_info a_param_name, size_t a_param_value_size,
                                  const void *a_param_value)
{
    (void)c;
    (void)ret;
    (void)a_param_name;
    (void)a_param_value_size;
    (void)a_param_value;
    if (ok && rec_g.plan)
        rec_plan_karg_opaque(a_kernel);
}

/* clSetKernelArg: an argument that is a memory object, sampler or queue is
 * recorded as its id (uint); anything else as its bytes (bin); a NULL value
 * (local memory) as nil. Argument values are always captured. */
int rec_pre_clSetKernelArg(rec_call *c, cl_kernel *a_kernel, cl_uint *a_arg_index,
                           size_t *a_arg_size, const void **a_arg_value)
{
    const void *v = *a_arg_value;
    const void *obj = NULL;
    if (v && *a_arg_size == sizeof(void *))
        memcpy(&obj, v, sizeof obj);
    uint64_t id = rec_kernel_set_arg(*a_kernel, *a_arg_index, obj);
    if (rec_g.plan) {   /* no records: rec_post_clSetKernelArg tells the matcher */
        c->direct = 1;
        c->hook_u = id;
        return 0;
    }
    if (id) {
        c->in[3].state = REC_SLOT_UINT;
        c->in[3].v.u = id;
        return 0;
    }
    int cap = c->capture;
    c->capture = 1;
    rec_slot_fill(c, &c->in[3], v, *a_arg_size);
    c->capture = cap;
    return 0;
}

void rec_post_clSetKernelArg(rec_call *c, int ok, cl_int *ret, cl_kernel a_kernel, cl_uint a_arg_index,
                             size_t a_arg_size, const void *a_arg_value)
{
    (void)ret;
    if (c->direct && ok)
        rec_plan_karg(a_kernel, a_arg_index, a_arg_size, a_arg_value, c->hook_u);
}
