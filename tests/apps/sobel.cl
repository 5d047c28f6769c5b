float px(__global const float *img, int x, int y, int w, int h)
{
    x = clamp(x, 0, w - 1);
    y = clamp(y, 0, h - 1);
    return img[(size_t)y * w + x];
}

__kernel void sobel_gx(__global const float *img, __global float *gx, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    float right = px(img, x + 1, y - 1, w, h) + 2.0f * px(img, x + 1, y, w, h)
                + px(img, x + 1, y + 1, w, h);
    float left = px(img, x - 1, y - 1, w, h) + 2.0f * px(img, x - 1, y, w, h)
               + px(img, x - 1, y + 1, w, h);
    gx[(size_t)y * w + x] = right - left;
}

__kernel void sobel_gy(__global const float *img, __global float *gy, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    float down = px(img, x - 1, y + 1, w, h) + 2.0f * px(img, x, y + 1, w, h)
               + px(img, x + 1, y + 1, w, h);
    float up = px(img, x - 1, y - 1, w, h) + 2.0f * px(img, x, y - 1, w, h)
             + px(img, x + 1, y - 1, w, h);
    gy[(size_t)y * w + x] = down - up;
}

__kernel void sobel_magnitude(__global const float *gx, __global const float *gy,
                              __global float *mag, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    size_t i = (size_t)y * w + x;
    mag[i] = sqrt(gx[i] * gx[i] + gy[i] * gy[i]);
}
