#define BINS 256
#define ITEMS 64

/* Work-group g counts bytes [g * lsize * ITEMS, (g + 1) * lsize * ITEMS)
 * of data (n bytes) into row g of partial (BINS counts per row). */
__kernel void hist_local(__global const uchar *data, const uint n,
                         __global uint *partial)
{
    __local uint h[BINS];
    const uint lid = get_local_id(0), lsize = get_local_size(0);
    const size_t base = get_group_id(0) * (size_t)lsize * ITEMS;

    for (uint b = lid; b < BINS; b += lsize)
        h[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < ITEMS; ++k) {
        size_t i = base + (size_t)k * lsize + lid;
        if (i < n)
            atomic_inc(&h[data[i]]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = lid; b < BINS; b += lsize)
        partial[get_group_id(0) * BINS + b] = h[b];
}

/* Work-item b sums column b of the groups x BINS partial counts. */
__kernel void hist_merge(__global const uint *partial, const uint groups,
                         __global uint *hist)
{
    const uint b = get_global_id(0);
    uint sum = 0;
    for (uint g = 0; g < groups; ++g)
        sum += partial[(size_t)g * BINS + b];
    hist[b] = sum;
}
