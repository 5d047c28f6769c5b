/* layer.c — the OpenCL layer entry points (cl_loader_layers, supported by
 * ocl-icd >= 2.3 and the Khronos loader) and extension binding. */
#include "recorder/rec_int.h"

#include <CL/cl_layer.h>
#include <string.h>

void rec_layer_init(struct _cl_icd_dispatch *ours, const struct _cl_icd_dispatch *next);

static struct _cl_icd_dispatch rec_layer_dispatch;

REC_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name, size_t param_value_size,
                                             void *param_value, size_t *param_value_size_ret)
{
    static const char name[] = "clrr recorder";
    const void *src;
    size_t size;
    cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    switch (param_name) {
    case CL_LAYER_API_VERSION:
        src = &version;
        size = sizeof version;
        break;
    case CL_LAYER_NAME:
        src = name;
        size = sizeof name;
        break;
    default:
        return CL_INVALID_VALUE;
    }
    if (param_value && param_value_size < size)
        return CL_INVALID_VALUE;
    if (param_value)
        memcpy(param_value, src, size);
    if (param_value_size_ret)
        *param_value_size_ret = size;
    return CL_SUCCESS;
}

/* The loader's table may be shorter than the headers' struct (Ubuntu 24.04's
 * ocl-icd 2.3.2 passes fewer entries than Debian 12's headers declare):
 * the entries it has are copied into a zeroed table of ours, the rest stay
 * NULL (the loader never dispatches them to us), and we say we fill as many
 * as it has. */
static struct _cl_icd_dispatch rec_target_copy;

REC_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const struct _cl_icd_dispatch *target_dispatch,
                                          cl_uint *num_entries_out,
                                          const struct _cl_icd_dispatch **layer_dispatch_ret)
{
    const cl_uint ours = sizeof(struct _cl_icd_dispatch) / sizeof(void *);
    if (!target_dispatch || !layer_dispatch_ret || !num_entries_out || !num_entries)
        return CL_INVALID_VALUE;
    cl_uint n = num_entries < ours ? num_entries : ours;
    memset(&rec_target_copy, 0, sizeof rec_target_copy);
    memcpy(&rec_target_copy, target_dispatch, n * sizeof(void *));
    rec_layer_init(&rec_layer_dispatch, &rec_target_copy);
    *layer_dispatch_ret = &rec_layer_dispatch;
    *num_entries_out = n;
    return CL_SUCCESS;
}

/* An extension entry point's next implementation. One per name: a second
 * platform handing out a different implementation is not wrapped. */
int rec_ext_bind(void **slot, void *next_fn)
{
    void *expected = NULL;
    if (__atomic_compare_exchange_n(slot, &expected, next_fn, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return 1;
    return expected == next_fn;
}
