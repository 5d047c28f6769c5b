/* Work-item r computes y[r], the dot product of CSR row r with x. */
__kernel void spmv_csr(const uint rows, __global const uint *row_ptr,
                       __global const uint *col, __global const float *val,
                       __global const float *x, __global float *y)
{
    size_t r = get_global_id(0);
    if (r >= rows)
        return;
    float sum = 0.0f;
    for (uint k = row_ptr[r]; k < row_ptr[r + 1]; ++k)
        sum += val[k] * x[col[k]];
    y[r] = sum;
}
