/* tf_len.h — byte lengths of the host memory of rect and image transfers:
 * how many bytes from the host pointer a recorded `ptr` blob of
 * clEnqueue{Read,Write}BufferRect and clEnqueue{Read,Write}Image holds
 * (the `len=` of those parameters in recorder/api.overlay). The length is
 * part of how trace-format encodes those arguments, so it lives here, beside
 * the format, where the recorder (which writes the blobs) and the replayer
 * (which sizes its buffers from them) both include it without reaching
 * above their layer. Header-only, no OpenCL types, no state: thread-safe.
 * Every length is overflow-checked: TF_LEN_OVERFLOW (SIZE_MAX) when the
 * arithmetic does not fit a size_t (absurd pitches or origins). */
#ifndef CLRR_TF_LEN_H
#define CLRR_TF_LEN_H

#include <stddef.h>
#include <stdint.h>

#define TF_LEN_OVERFLOW SIZE_MAX

/*! tf_len_3d() : (z - 1) * slice + (y - 1) * row + x for z, y >= 1: the end of
 * the last row of a 3-D region; TF_LEN_OVERFLOW when it overflows. */
static inline size_t tf_len_3d(size_t x, size_t y, size_t z, size_t row, size_t slice)
{
    size_t a, b, n;
    if (__builtin_mul_overflow(z - 1, slice, &a) || __builtin_mul_overflow(y - 1, row, &b) ||
        __builtin_add_overflow(a, b, &n) || __builtin_add_overflow(n, x, &n))
        return TF_LEN_OVERFLOW;
    return n;
}

/*! tf_len_rect() : bytes of host memory a buffer-rect transfer touches from
 * the host pointer: origin and region (3 elements each, region[0] in bytes),
 * pitches 0 = tight. 0 when an argument is NULL or the region empty. */
static inline size_t tf_len_rect(const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch)
{
    size_t x, y, z;
    if (!origin || !region || !region[0] || !region[1] || !region[2])
        return 0;
    if (!row_pitch)
        row_pitch = region[0];
    if (!slice_pitch && __builtin_mul_overflow(row_pitch, region[1], &slice_pitch))
        return TF_LEN_OVERFLOW;
    if (__builtin_add_overflow(origin[0], region[0], &x) || __builtin_add_overflow(origin[1], region[1], &y) ||
        __builtin_add_overflow(origin[2], region[2], &z))
        return TF_LEN_OVERFLOW;
    return tf_len_3d(x, y, z, row_pitch, slice_pitch);
}

/*! tf_len_image() : bytes of host memory an image transfer of @p region
 * (in pixels) touches, pixels of @p elem_size bytes, pitches 0 = tight.
 * 0 when region is NULL or empty or elem_size 0. */
static inline size_t tf_len_image(size_t elem_size, const size_t *region, size_t row_pitch, size_t slice_pitch)
{
    size_t w;
    if (!region || !elem_size || !region[0] || !region[1] || !region[2])
        return 0;
    if (__builtin_mul_overflow(region[0], elem_size, &w))
        return TF_LEN_OVERFLOW;
    if (!row_pitch)
        row_pitch = w;
    if (!slice_pitch && __builtin_mul_overflow(row_pitch, region[1], &slice_pitch))
        return TF_LEN_OVERFLOW;
    return tf_len_3d(w, region[1], region[2], row_pitch, slice_pitch);
}

#endif
