__kernel void mul(__global const float *a, __global const float *b,
                  __global float *c, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        c[i] = a[i] * b[i];
}

__kernel void pow_scalar(__global const float *a, float p, __global float *c, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        c[i] = pow(a[i], p);
}
