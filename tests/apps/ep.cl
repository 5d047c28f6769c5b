#define NQ 10

/* splitmix64 finalizer: decorrelates the per-item LCG seeds */
ulong mix64(ulong z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return z ^ (z >> 31);
}

/* 64-bit LCG step; top 24 bits, odd, scaled into (0,1) exactly */
float next_uniform(ulong *s)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return (float)((uint)(*s >> 40) | 1u) * (1.0f / 16777216.0f);
}

__kernel void ep(ulong seed, uint pairs, ulong n,
                 __global float2 *sums, __global uint *counts)
{
    size_t gid = get_global_id(0);
    if (gid >= n)
        return;
    size_t slot = gid - get_global_offset(0);
    ulong s = mix64(seed + (ulong)gid * 0x9E3779B97F4A7C15UL);
    uint q[NQ];
    for (int l = 0; l < NQ; l++)
        q[l] = 0;
    float sx = 0.0f, sy = 0.0f;
    for (uint p = 0; p < pairs; p++) {
        float u1 = next_uniform(&s);
        float u2 = next_uniform(&s);
        float r = sqrt(-2.0f * log(u1));
        float t = 6.28318530718f * u2;
        float x = r * cos(t);
        float y = r * sin(t);
        sx += x;
        sy += y;
        uint l = (uint)fmax(fabs(x), fabs(y));
        if (l < NQ)
            q[l]++;
    }
    sums[slot] = (float2)(sx, sy);
    for (int l = 0; l < NQ; l++)
        counts[slot * NQ + l] = q[l];
}
