/* stub_imgxfer.c — commands on images: read, write, copy, fill (the fill
 * color converted to the image's format), copies between images and
 * buffers, map. Coordinates are the API's: a 1D image array counts its
 * layers in y. */
#include "tests/stub-icd/stub_int.h"

#include <string.h>

static int stub_is_image(cl_mem m)
{
    return m->type != CL_MEM_OBJECT_BUFFER && m->type != CL_MEM_OBJECT_PIPE;
}

static cl_int stub_check_image(cl_command_queue q, cl_mem m)
{
    cl_int err = stub_check_mem(q, m);
    if (err == CL_SUCCESS && !stub_is_image(m))
        err = CL_INVALID_MEM_OBJECT;
    return err;
}

static void stub_img_dims(cl_mem m, size_t d[3])
{
    d[0] = m->desc.image_width;
    d[1] = d[2] = 1;
    switch (m->type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        d[1] = m->desc.image_array_size;
        break;
    case CL_MEM_OBJECT_IMAGE2D:
        d[1] = m->desc.image_height;
        break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        d[1] = m->desc.image_height;
        d[2] = m->desc.image_array_size;
        break;
    case CL_MEM_OBJECT_IMAGE3D:
        d[1] = m->desc.image_height;
        d[2] = m->desc.image_depth;
        break;
    default:
        break;
    }
}

static int stub_img_box_ok(cl_mem m, const size_t *origin, const size_t *region)
{
    size_t d[3];
    if (!origin || !region)
        return 0;
    stub_img_dims(m, d);
    for (int i = 0; i < 3; i++)
        if (!region[i] || origin[i] > d[i] || region[i] > d[i] - origin[i])
            return 0;
    return 1;
}

static size_t stub_img_off(cl_mem m, size_t x, size_t y, size_t z)
{
    if (m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        return x * m->elem + y * m->slice_pitch;
    return x * m->elem + y * m->row_pitch + z * m->slice_pitch;
}

static cl_int stub_img_rw(cl_command_queue q, cl_mem m, int write, cl_bool blocking, const size_t *origin,
                          const size_t *region, size_t hrow, size_t hslice, void *ptr, cl_uint nwait,
                          const cl_event *wait, cl_event *event)
{
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_image(q, m);
    if (err != CL_SUCCESS)
        return err;
    if (!ptr || !stub_img_box_ok(m, origin, region))
        return CL_INVALID_VALUE;
    int arr1d = m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    size_t line = region[0] * m->elem;
    if (!hrow)
        hrow = line;
    if (!hslice)
        hslice = arr1d ? hrow : hrow * region[1];
    if (hrow < line || hslice < (arr1d ? hrow : hrow * region[1]))
        return CL_INVALID_VALUE;
    if ((err = stub_check_host_access(m, !write, write)) != CL_SUCCESS)
        return err;
    unsigned char *host = ptr;
    for (size_t z = 0; z < region[2]; z++)
        for (size_t y = 0; y < region[1]; y++) {
            unsigned char *img = m->data + stub_img_off(m, origin[0], origin[1] + y, origin[2] + z);
            unsigned char *h = host + (arr1d ? y * hslice : y * hrow + z * hslice);
            if (write)
                memmove(img, h, line);
            else
                memmove(h, img, line);
        }
    return stub_cmd(q, write ? CL_COMMAND_WRITE_IMAGE : CL_COMMAND_READ_IMAGE, nwait, wait, event, blocking);
}

cl_int CL_API_CALL stub_clEnqueueReadImage(cl_command_queue q, cl_mem image, cl_bool blocking_read,
                                           const size_t *origin, const size_t *region, size_t row_pitch,
                                           size_t slice_pitch, void *ptr, cl_uint nwait, const cl_event *wait,
                                           cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_img_rw(q, image, 0, blocking_read, origin, region, row_pitch, slice_pitch, ptr, nwait,
                             wait, event);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueWriteImage(cl_command_queue q, cl_mem image, cl_bool blocking_write,
                                            const size_t *origin, const size_t *region, size_t input_row_pitch,
                                            size_t input_slice_pitch, const void *ptr, cl_uint nwait,
                                            const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_img_rw(q, image, 1, blocking_write, origin, region, input_row_pitch, input_slice_pitch,
                             (void *)ptr, nwait, wait, event);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                                           const size_t *dst_origin, const size_t *region, cl_uint nwait,
                                           const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_image(q, src);
    if (err == CL_SUCCESS)
        err = stub_check_image(q, dst);
    if (err != CL_SUCCESS)
        goto out;
    if (src->fmt.image_channel_order != dst->fmt.image_channel_order ||
        src->fmt.image_channel_data_type != dst->fmt.image_channel_data_type) {
        err = CL_IMAGE_FORMAT_MISMATCH;
        goto out;
    }
    if (!stub_img_box_ok(src, src_origin, region) || !stub_img_box_ok(dst, dst_origin, region)) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    if (src->data == dst->data) {
        int apart = 0;
        for (int i = 0; i < 3; i++)
            apart |= src_origin[i] + region[i] <= dst_origin[i] || dst_origin[i] + region[i] <= src_origin[i];
        if (!apart) {
            err = CL_MEM_COPY_OVERLAP;
            goto out;
        }
    }
    for (size_t z = 0; z < region[2]; z++)
        for (size_t y = 0; y < region[1]; y++)
            memmove(dst->data + stub_img_off(dst, dst_origin[0], dst_origin[1] + y, dst_origin[2] + z),
                    src->data + stub_img_off(src, src_origin[0], src_origin[1] + y, src_origin[2] + z),
                    region[0] * src->elem);
    err = stub_cmd(q, CL_COMMAND_COPY_IMAGE, nwait, wait, event, 0);
out:
    stub_leave();
    return err;
}

/* float to IEEE half, rounding to nearest even */
static cl_ushort stub_half(float f)
{
    cl_uint x;
    memcpy(&x, &f, sizeof x);
    cl_uint sign = (x >> 16) & 0x8000, mant = x & 0x7fffff;
    int e = (int)((x >> 23) & 0xff);
    if (e == 0xff)
        return (cl_ushort)(sign | 0x7c00 | (mant ? 0x200 : 0));
    int exp = e - 127 + 15;
    if (exp >= 31)
        return (cl_ushort)(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10)
            return (cl_ushort)sign;
        mant |= 0x800000;
        cl_uint shift = (cl_uint)(14 - exp), h = mant >> shift;
        cl_uint rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (cl_ushort)(sign | h);
    }
    cl_uint h = ((cl_uint)exp << 10) | (mant >> 13), rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (cl_ushort)(sign | h);
}

static long stub_round(float v, float lo, float hi, float scale)
{
    if (!(v >= lo))   /* NaN too */
        v = lo;
    if (v > hi)
        v = hi;
    v *= scale;
    return (long)(v >= 0 ? v + 0.5f : v - 0.5f);
}

static long long stub_clamp(long long v, long long lo, long long hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* One pixel of the image's format from a fill color (float[4], int[4] or uint[4] RGBA). */
static void stub_pixel(const cl_image_format *f, const void *color, unsigned char *out)
{
    static const int r[] = { 0 }, a[] = { 3 }, rg[] = { 0, 1 }, ra[] = { 0, 3 }, rgba[] = { 0, 1, 2, 3 },
                     bgra[] = { 2, 1, 0, 3 }, argb[] = { 3, 0, 1, 2 };
    const int *idx = r;
    int n = 1;
    switch (f->image_channel_order) {
    case CL_A: idx = a; break;
    case CL_RG: idx = rg, n = 2; break;
    case CL_RA: idx = ra, n = 2; break;
    case CL_RGBA: idx = rgba, n = 4; break;
    case CL_BGRA: idx = bgra, n = 4; break;
    case CL_ARGB: idx = argb, n = 4; break;
    default: break;   /* R, INTENSITY, LUMINANCE */
    }
    size_t cs = stub_image_elem_size(f) / (size_t)n;
    const float *fc = color;
    const cl_int *ic = color;
    const cl_uint *uc = color;
    for (int i = 0; i < n; i++) {
        int c = idx[i];
        union { cl_uchar u8; cl_char s8; cl_ushort u16; cl_short s16; cl_uint u32; cl_int s32; float f; } v;
        switch (f->image_channel_data_type) {
        case CL_UNORM_INT8: v.u8 = (cl_uchar)stub_round(fc[c], 0, 1, 255); break;
        case CL_UNORM_INT16: v.u16 = (cl_ushort)stub_round(fc[c], 0, 1, 65535); break;
        case CL_SNORM_INT8: v.s8 = (cl_char)stub_round(fc[c], -1, 1, 127); break;
        case CL_SNORM_INT16: v.s16 = (cl_short)stub_round(fc[c], -1, 1, 32767); break;
        case CL_SIGNED_INT8: v.s8 = (cl_char)stub_clamp(ic[c], -128, 127); break;
        case CL_SIGNED_INT16: v.s16 = (cl_short)stub_clamp(ic[c], -32768, 32767); break;
        case CL_SIGNED_INT32: v.s32 = ic[c]; break;
        case CL_UNSIGNED_INT8: v.u8 = (cl_uchar)stub_clamp(uc[c], 0, 255); break;
        case CL_UNSIGNED_INT16: v.u16 = (cl_ushort)stub_clamp(uc[c], 0, 65535); break;
        case CL_UNSIGNED_INT32: v.u32 = uc[c]; break;
        case CL_HALF_FLOAT: v.u16 = stub_half(fc[c]); break;
        default: v.f = fc[c]; break;
        }
        memcpy(out + (size_t)i * cs, &v, cs);
    }
}

cl_int CL_API_CALL stub_clEnqueueFillImage(cl_command_queue q, cl_mem image, const void *fill_color,
                                           const size_t *origin, const size_t *region, cl_uint nwait,
                                           const cl_event *wait, cl_event *event)
{
    STUB_ENTER();
    unsigned char px[16];
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_image(q, image);
    if (err != CL_SUCCESS)
        goto out;
    if (!fill_color || !stub_img_box_ok(image, origin, region)) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    stub_pixel(&image->fmt, fill_color, px);
    for (size_t z = 0; z < region[2]; z++)
        for (size_t y = 0; y < region[1]; y++) {
            unsigned char *p = image->data + stub_img_off(image, origin[0], origin[1] + y, origin[2] + z);
            for (size_t x = 0; x < region[0]; x++)
                memcpy(p + x * image->elem, px, image->elem);
        }
    err = stub_cmd(q, CL_COMMAND_FILL_IMAGE, nwait, wait, event, 0);
out:
    stub_leave();
    return err;
}

/* image <-> tightly packed buffer bytes at offset */
static cl_int stub_img_buf(cl_command_queue q, cl_mem image, cl_mem buffer, int to_buffer, const size_t *origin,
                           const size_t *region, size_t offset, cl_uint nwait, const cl_event *wait,
                           cl_event *event)
{
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_image(q, image);
    if (err == CL_SUCCESS)
        err = stub_check_mem(q, buffer);
    if (err == CL_SUCCESS && buffer->type != CL_MEM_OBJECT_BUFFER)
        err = CL_INVALID_MEM_OBJECT;
    if (err != CL_SUCCESS)
        return err;
    if (!stub_img_box_ok(image, origin, region))
        return CL_INVALID_VALUE;
    size_t line = region[0] * image->elem, total = line * region[1] * region[2];
    if (offset > buffer->size || total > buffer->size - offset)
        return CL_INVALID_VALUE;
    for (size_t z = 0; z < region[2]; z++)
        for (size_t y = 0; y < region[1]; y++) {
            unsigned char *img = image->data + stub_img_off(image, origin[0], origin[1] + y, origin[2] + z);
            unsigned char *buf = buffer->data + offset + (z * region[1] + y) * line;
            if (to_buffer)
                memmove(buf, img, line);
            else
                memmove(img, buf, line);
        }
    return stub_cmd(q, to_buffer ? CL_COMMAND_COPY_IMAGE_TO_BUFFER : CL_COMMAND_COPY_BUFFER_TO_IMAGE, nwait,
                    wait, event, 0);
}

cl_int CL_API_CALL stub_clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src_image, cl_mem dst_buffer,
                                                   const size_t *src_origin, const size_t *region,
                                                   size_t dst_offset, cl_uint nwait, const cl_event *wait,
                                                   cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_img_buf(q, src_image, dst_buffer, 1, src_origin, region, dst_offset, nwait, wait, event);
    stub_leave();
    return err;
}

cl_int CL_API_CALL stub_clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src_buffer, cl_mem dst_image,
                                                   size_t src_offset, const size_t *dst_origin,
                                                   const size_t *region, cl_uint nwait, const cl_event *wait,
                                                   cl_event *event)
{
    STUB_ENTER();
    cl_int err = stub_img_buf(q, dst_image, src_buffer, 0, dst_origin, region, src_offset, nwait, wait, event);
    stub_leave();
    return err;
}

void *CL_API_CALL stub_clEnqueueMapImage(cl_command_queue q, cl_mem image, cl_bool blocking_map,
                                         cl_map_flags map_flags, const size_t *origin, const size_t *region,
                                         size_t *image_row_pitch, size_t *image_slice_pitch, cl_uint nwait,
                                         const cl_event *wait, cl_event *event, cl_int *errcode_ret)
{
    STUB_ENTER();
    void *ptr = NULL;
    const cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
    cl_int err = stub_check_enqueue(q, nwait, wait);
    if (err == CL_SUCCESS)
        err = stub_check_image(q, image);
    if (err != CL_SUCCESS)
        goto out;
    cl_mem_object_type t = image->type;
    int layered = t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY || t == CL_MEM_OBJECT_IMAGE3D;
    if ((map_flags & ~known) ||
        ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && (map_flags & (CL_MAP_READ | CL_MAP_WRITE))) ||
        !stub_img_box_ok(image, origin, region) || !image_row_pitch || (layered && !image_slice_pitch)) {
        err = CL_INVALID_VALUE;
        goto out;
    }
    err = stub_check_host_access(image, (map_flags & CL_MAP_READ) != 0,
                                 (map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0);
    if (err != CL_SUCCESS)
        goto out;
    unsigned char *p = image->data + stub_img_off(image, origin[0], origin[1], origin[2]);
    if (stub_map_add(image, p) < 0) {
        err = CL_OUT_OF_HOST_MEMORY;
        goto out;
    }
    err = stub_cmd(q, CL_COMMAND_MAP_IMAGE, nwait, wait, event, blocking_map);
    if (err != CL_SUCCESS) {
        stub_map_remove(image, p);
        goto out;
    }
    ptr = p;
    *image_row_pitch = image->row_pitch;
    if (image_slice_pitch)
        *image_slice_pitch = layered ? image->slice_pitch : 0;
out:
    stub_set_err(errcode_ret, err);
    stub_leave();
    return ptr;
}
