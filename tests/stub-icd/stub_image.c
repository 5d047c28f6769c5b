/* stub_image.c — images in host memory: supported formats, creation (all
 * image types; a 1D image buffer shares its buffer's memory; USE_HOST_PTR
 * images live in the application's memory with its pitches) and
 * clGetImageInfo. The commands on images are in stub_imgxfer.c. */
#include "tests/stub-icd/stub_int.h"

#include <stdlib.h>
#include <string.h>

static const cl_channel_type stub_all_types[] = {
    CL_SNORM_INT8, CL_SNORM_INT16, CL_UNORM_INT8, CL_UNORM_INT16, CL_SIGNED_INT8, CL_SIGNED_INT16,
    CL_SIGNED_INT32, CL_UNSIGNED_INT8, CL_UNSIGNED_INT16, CL_UNSIGNED_INT32, CL_HALF_FLOAT, CL_FLOAT,
};
static const cl_channel_type stub_norm_float_types[] = {
    CL_SNORM_INT8, CL_SNORM_INT16, CL_UNORM_INT8, CL_UNORM_INT16, CL_HALF_FLOAT, CL_FLOAT,
};
static const cl_channel_type stub_8bit_types[] = {
    CL_SNORM_INT8, CL_UNORM_INT8, CL_SIGNED_INT8, CL_UNSIGNED_INT8,
};

/* The supported formats, in a fixed order; returns how many (<= cap written). */
static cl_uint stub_formats(cl_image_format *out, cl_uint cap)
{
    static const struct { cl_channel_order order; const cl_channel_type *types; size_t n; } rows[] = {
        { CL_R, stub_all_types, sizeof stub_all_types / sizeof *stub_all_types },
        { CL_A, stub_all_types, sizeof stub_all_types / sizeof *stub_all_types },
        { CL_RG, stub_all_types, sizeof stub_all_types / sizeof *stub_all_types },
        { CL_RA, stub_all_types, sizeof stub_all_types / sizeof *stub_all_types },
        { CL_RGBA, stub_all_types, sizeof stub_all_types / sizeof *stub_all_types },
        { CL_BGRA, stub_8bit_types, sizeof stub_8bit_types / sizeof *stub_8bit_types },
        { CL_ARGB, stub_8bit_types, sizeof stub_8bit_types / sizeof *stub_8bit_types },
        { CL_INTENSITY, stub_norm_float_types, sizeof stub_norm_float_types / sizeof *stub_norm_float_types },
        { CL_LUMINANCE, stub_norm_float_types, sizeof stub_norm_float_types / sizeof *stub_norm_float_types },
    };
    cl_uint n = 0;
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++)
        for (size_t t = 0; t < rows[r].n; t++, n++)
            if (out && n < cap) {
                out[n].image_channel_order = rows[r].order;
                out[n].image_channel_data_type = rows[r].types[t];
            }
    return n;
}

static int stub_format_supported(const cl_image_format *fmt)
{
    cl_image_format all[128];
    cl_uint n = stub_formats(all, 128);
    for (cl_uint i = 0; i < n; i++)
        if (all[i].image_channel_order == fmt->image_channel_order &&
            all[i].image_channel_data_type == fmt->image_channel_data_type)
            return 1;
    return 0;
}

size_t stub_image_elem_size(const cl_image_format *fmt)
{
    size_t channels, size;
    switch (fmt->image_channel_order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE:
        channels = 1;
        break;
    case CL_RG: case CL_RA:
        channels = 2;
        break;
    case CL_RGBA: case CL_BGRA: case CL_ARGB:
        channels = 4;
        break;
    default:
        return 0;
    }
    switch (fmt->image_channel_data_type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8:
        size = 1;
        break;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16:
    case CL_HALF_FLOAT:
        size = 2;
        break;
    case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT:
        size = 4;
        break;
    default:
        return 0;
    }
    return channels * size;
}

cl_int CL_API_CALL stub_clGetSupportedImageFormats(cl_context context, cl_mem_flags flags,
                                                   cl_mem_object_type image_type, cl_uint num_entries,
                                                   cl_image_format *image_formats, cl_uint *num_image_formats)
{
    (void)flags;
    STUB_ENTER();
    cl_int err = CL_SUCCESS;
    if (!stub_valid(context, STUB_CONTEXT))
        err = CL_INVALID_CONTEXT;
    else if ((num_entries == 0 && image_formats) || image_type < CL_MEM_OBJECT_IMAGE2D ||
             image_type > CL_MEM_OBJECT_IMAGE1D_BUFFER)
        err = CL_INVALID_VALUE;
    else {
        cl_uint n = stub_formats(image_formats, image_formats ? num_entries : 0);
        if (num_image_formats)
            *num_image_formats = n;
    }
    stub_leave();
    return err;
}

/* Sizes in the API's coordinates: 1D arrays count layers in y. */
static cl_mem stub_image_new(cl_context ctx, const cl_mem_properties *props, cl_mem_flags flags,
                             const cl_image_format *fmt, const cl_image_desc *desc, void *host_ptr,
                             cl_int *err)
{
    if (!stub_valid(ctx, STUB_CONTEXT)) {
        *err = CL_INVALID_CONTEXT;
        return NULL;
    }
    if (!fmt || !stub_image_elem_size(fmt)) {
        *err = CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
        return NULL;
    }
    if (!desc || desc->num_mip_levels || desc->num_samples) {
        *err = CL_INVALID_IMAGE_DESCRIPTOR;
        return NULL;
    }
    size_t elem = stub_image_elem_size(fmt), w = desc->image_width, h = 1, layers = 1, lim_w, lim_h = 1;
    size_t lim_l = 1;
    cl_mem buffer = desc->buffer;
    switch (desc->image_type) {
    case CL_MEM_OBJECT_IMAGE1D: lim_w = STUB_IMAGE2D_MAX; break;
    case CL_MEM_OBJECT_IMAGE1D_BUFFER: lim_w = STUB_IMAGE_BUFFER_MAX; break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        lim_w = STUB_IMAGE2D_MAX, layers = desc->image_array_size, lim_l = STUB_IMAGE_ARRAY_MAX;
        break;
    case CL_MEM_OBJECT_IMAGE2D:
        lim_w = lim_h = STUB_IMAGE2D_MAX, h = desc->image_height;
        break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        lim_w = lim_h = STUB_IMAGE2D_MAX, h = desc->image_height, layers = desc->image_array_size;
        lim_l = STUB_IMAGE_ARRAY_MAX;
        break;
    case CL_MEM_OBJECT_IMAGE3D:
        lim_w = lim_h = lim_l = STUB_IMAGE3D_MAX, h = desc->image_height, layers = desc->image_depth;
        break;
    default:
        *err = CL_INVALID_IMAGE_DESCRIPTOR;
        return NULL;
    }
    if ((buffer != NULL) != (desc->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) ||
        (buffer && (!stub_valid(buffer, STUB_MEM) || buffer->type != CL_MEM_OBJECT_BUFFER ||
                    buffer->ctx != ctx || w * elem > buffer->size))) {
        *err = CL_INVALID_IMAGE_DESCRIPTOR;
        return NULL;
    }
    if (!w || !h || !layers) {
        *err = CL_INVALID_IMAGE_DESCRIPTOR;
        return NULL;
    }
    if (w > lim_w || h > lim_h || layers > lim_l) {
        *err = CL_INVALID_IMAGE_SIZE;
        return NULL;
    }
    if (!stub_format_supported(fmt)) {
        *err = CL_IMAGE_FORMAT_NOT_SUPPORTED;
        return NULL;
    }
    /* the host memory's pitches (given with a host pointer) and ours; with
     * CLRR_STUB_IMAGE_ROW_PAD=N our rows are N bytes longer than their pixels,
     * as on GPUs that align image rows (tests of replay across pitches) */
    const char *pad_env = getenv("CLRR_STUB_IMAGE_ROW_PAD");
    size_t pad = pad_env ? strtoul(pad_env, NULL, 10) : 0;
    if (pad > 4096)
        pad = 4096;
    size_t row = w * elem + pad, slice = desc->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? row : row * h;
    size_t hrow = desc->image_row_pitch ? desc->image_row_pitch : w * elem;
    size_t hslice = desc->image_slice_pitch ? desc->image_slice_pitch
                                            : (desc->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? hrow : hrow * h);
    if ((!host_ptr && (desc->image_row_pitch || desc->image_slice_pitch)) || hrow < w * elem || hrow % elem ||
        hslice < (desc->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? hrow : hrow * h) || hslice % hrow) {
        *err = CL_INVALID_IMAGE_DESCRIPTOR;
        return NULL;
    }
    cl_mem m;
    if (buffer) {
        const cl_mem_flags hostptr = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
        if (host_ptr || (flags & hostptr)) {
            *err = host_ptr ? CL_INVALID_HOST_PTR : CL_INVALID_VALUE;
            return NULL;
        }
        m = stub_mem_new(ctx, desc->image_type, flags, 1, NULL, props, err);
        if (!m)
            return NULL;
        free(m->data);
        m->owns_data = 0;
        m->data = buffer->data;
        m->size = w * elem;
        m->parent = buffer;
        buffer->h.refs++;
        row = slice = w * elem;
    } else if (flags & CL_MEM_USE_HOST_PTR) {
        m = stub_mem_new(ctx, desc->image_type, flags, hslice * layers, host_ptr, props, err);
        row = hrow, slice = hslice;
    } else {
        m = stub_mem_new(ctx, desc->image_type, flags, slice * layers, host_ptr, props, err);
        if (m && host_ptr) {
            size_t o[3] = { 0, 0, 0 }, r[3] = { w * elem, desc->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : h,
                                                layers };
            stub_copy_box(m->data, o, row, slice, host_ptr, o, hrow, hslice, r);
        }
    }
    if (!m)
        return NULL;
    m->fmt = *fmt;
    m->desc = *desc;
    m->elem = elem;
    m->row_pitch = row;
    m->slice_pitch = slice;
    return m;
}

cl_mem CL_API_CALL stub_clCreateImage(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                                      const cl_image_desc *image_desc, void *host_ptr, cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err;
    cl_mem m = stub_image_new(context, NULL, flags, image_format, image_desc, host_ptr, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return m;
}

cl_mem CL_API_CALL stub_clCreateImageWithProperties(cl_context context, const cl_mem_properties *properties,
                                                    cl_mem_flags flags, const cl_image_format *image_format,
                                                    const cl_image_desc *image_desc, void *host_ptr,
                                                    cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err;
    cl_mem m = stub_image_new(context, properties, flags, image_format, image_desc, host_ptr, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return m;
}

cl_mem CL_API_CALL stub_clCreateImage2D(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                                        size_t image_width, size_t image_height, size_t image_row_pitch,
                                        void *host_ptr, cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err;
    cl_image_desc d = { .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = image_width,
                        .image_height = image_height, .image_row_pitch = image_row_pitch };
    cl_mem m = stub_image_new(context, NULL, flags, image_format, &d, host_ptr, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return m;
}

cl_mem CL_API_CALL stub_clCreateImage3D(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                                        size_t image_width, size_t image_height, size_t image_depth,
                                        size_t image_row_pitch, size_t image_slice_pitch, void *host_ptr,
                                        cl_int *errcode_ret)
{
    STUB_ENTER();
    cl_int err;
    cl_image_desc d = { .image_type = CL_MEM_OBJECT_IMAGE3D, .image_width = image_width,
                        .image_height = image_height, .image_depth = image_depth,
                        .image_row_pitch = image_row_pitch, .image_slice_pitch = image_slice_pitch };
    cl_mem m = stub_image_new(context, NULL, flags, image_format, &d, host_ptr, &err);
    stub_set_err(errcode_ret, err);
    stub_leave();
    return m;
}

cl_int CL_API_CALL stub_clGetImageInfo(cl_mem m, cl_image_info param_name, size_t value_size, void *value,
                                       size_t *size_ret)
{
    STUB_ENTER();
    cl_int err = CL_INVALID_MEM_OBJECT;
    size_t v;
    if (!stub_valid(m, STUB_MEM) || m->type == CL_MEM_OBJECT_BUFFER || m->type == CL_MEM_OBJECT_PIPE)
        goto out;
    cl_mem_object_type t = m->type;
    switch (param_name) {
    case CL_IMAGE_FORMAT:
        err = stub_info(&m->fmt, sizeof m->fmt, value_size, value, size_ret);
        goto out;
    case CL_IMAGE_ELEMENT_SIZE:
        v = m->elem;
        break;
    case CL_IMAGE_ROW_PITCH:
        v = m->row_pitch;
        break;
    case CL_IMAGE_SLICE_PITCH:
        v = t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY || t == CL_MEM_OBJECT_IMAGE3D
                ? m->slice_pitch : 0;
        break;
    case CL_IMAGE_WIDTH:
        v = m->desc.image_width;
        break;
    case CL_IMAGE_HEIGHT:
        v = t == CL_MEM_OBJECT_IMAGE2D || t == CL_MEM_OBJECT_IMAGE2D_ARRAY || t == CL_MEM_OBJECT_IMAGE3D
                ? m->desc.image_height : 0;
        break;
    case CL_IMAGE_DEPTH:
        v = t == CL_MEM_OBJECT_IMAGE3D ? m->desc.image_depth : 0;
        break;
    case CL_IMAGE_ARRAY_SIZE:
        v = t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ? m->desc.image_array_size : 0;
        break;
    case CL_IMAGE_BUFFER:
        err = stub_info(&m->desc.buffer, sizeof m->desc.buffer, value_size, value, size_ret);
        goto out;
    case CL_IMAGE_NUM_MIP_LEVELS: case CL_IMAGE_NUM_SAMPLES: {
        cl_uint zero = 0;
        err = stub_info(&zero, sizeof zero, value_size, value, size_ret);
        goto out;
    }
    default:
        err = CL_INVALID_VALUE;
        goto out;
    }
    err = stub_info(&v, sizeof v, value_size, value, size_ret);
out:
    stub_leave();
    return err;
}
