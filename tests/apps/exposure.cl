#define IDX(x, y, w) ((size_t)(y) * (w) + (x))

/* 5-tap binomial filter (1 4 6 4 1) / 16 along x, clamped borders */
__kernel void blur_h(__global const float *src, __global float *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    __global const float *row = src + IDX(0, y, w);
    float l2 = row[max(x - 2, 0)], l1 = row[max(x - 1, 0)], c = row[x];
    float r1 = row[min(x + 1, w - 1)], r2 = row[min(x + 2, w - 1)];
    dst[IDX(x, y, w)] = 0.375f * c + 0.25f * (l1 + r1) + 0.0625f * (l2 + r2);
}

/* the same filter along y */
__kernel void blur_v(__global const float *src, __global float *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    float u2 = src[IDX(x, max(y - 2, 0), w)], u1 = src[IDX(x, max(y - 1, 0), w)];
    float c = src[IDX(x, y, w)];
    float d1 = src[IDX(x, min(y + 1, h - 1), w)], d2 = src[IDX(x, min(y + 2, h - 1), w)];
    dst[IDX(x, y, w)] = 0.375f * c + 0.25f * (u1 + d1) + 0.0625f * (u2 + d2);
}

/* src is w x h, dst is (w+1)/2 x (h+1)/2: keep even pixels */
__kernel void decimate(__global const float *src, __global float *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int w2 = (w + 1) / 2, h2 = (h + 1) / 2;
    if (x >= w2 || y >= h2)
        return;
    dst[IDX(x, y, w2)] = src[IDX(2 * x, 2 * y, w)];
}

/* dst is w x h, src is (w+1)/2 x (h+1)/2: zero insertion, gain 4 */
__kernel void expand(__global const float *src, __global float *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    int w2 = (w + 1) / 2;
    dst[IDX(x, y, w)] = ((x | y) & 1) ? 0.0f : 4.0f * src[IDX(x / 2, y / 2, w2)];
}

__kernel void contrast(__global const float *src, __global float *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    float c = src[IDX(x, y, w)];
    float l = src[IDX(max(x - 1, 0), y, w)], r = src[IDX(min(x + 1, w - 1), y, w)];
    float u = src[IDX(x, max(y - 1, 0), w)], d = src[IDX(x, min(y + 1, h - 1), w)];
    dst[IDX(x, y, w)] = fabs(4.0f * c - l - r - u - d);
}

__kernel void well_exposed(__global const float *src, __global float *dst, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        dst[i] = exp(-12.5f * (src[i] - 0.5f) * (src[i] - 0.5f));
}

__kernel void weight(__global const float *c, __global const float *e,
                     __global float *w, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        w[i] = c[i] * e[i] + 1e-6f;
}

__kernel void copy(__global const float *src, __global float *dst, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        dst[i] = src[i];
}

__kernel void accumulate(__global float *acc, __global const float *b, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        acc[i] += b[i];
}

__kernel void divide_by(__global float *x, __global const float *s, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        x[i] /= s[i];
}

__kernel void subtract(__global const float *a, __global const float *b,
                       __global float *c, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        c[i] = a[i] - b[i];
}

__kernel void mul(__global const float *a, __global const float *b,
                  __global float *c, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        c[i] = a[i] * b[i];
}

__kernel void madd(__global float *acc, __global const float *a,
                   __global const float *b, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        acc[i] += a[i] * b[i];
}
