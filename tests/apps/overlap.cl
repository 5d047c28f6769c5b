__kernel void combine(__global const float *a, __global const float *b,
                      __global float *c, uint rounds, ulong n)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float x = a[i], y = b[i], acc = 0.0f;
    for (uint r = 0; r < rounds; r++) {
        acc = acc * 0.5f + x * y;
        float t = x * 0.8f - y * 0.6f; /* rotation: no growth, no decay */
        y = x * 0.6f + y * 0.8f;
        x = t;
    }
    c[i] = acc;
}
