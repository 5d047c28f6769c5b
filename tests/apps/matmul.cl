#define TS 16

/* One work-group computes one TS x TS tile of c (n x n, row-major,
 * rows counted from the start of this device's band). */
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void matmul(__global const float *a, __global const float *b,
            __global float *c, const uint n)
{
    __local float ta[TS][TS];
    __local float tb[TS][TS];
    const uint lx = get_local_id(0), ly = get_local_id(1);
    const size_t col = get_global_id(0), row = get_global_id(1);
    float sum = 0.0f;

    for (uint t = 0; t < n; t += TS) {
        ta[ly][lx] = a[row * n + t + lx];
        tb[ly][lx] = b[(size_t)(t + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < TS; ++k)
            sum += ta[ly][k] * tb[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = sum;
}
