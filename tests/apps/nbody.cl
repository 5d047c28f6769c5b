/* Whether body j belongs to the cluster [win, win + len) (mod n). */
int in_window(uint j, uint n, uint win, uint len)
{
    uint d = j >= win ? j - win : j + n - win;
    return d < len;
}

/* Acceleration of a body at pi due to a body at pj of mass mj. */
float4 pull(float4 pi, float4 pj, float mj, float eps2)
{
    float4 d = pj - pi;
    d.w = 0.0f;
    float r2 = d.x * d.x + d.y * d.y + d.z * d.z + eps2;
    float inv = 1.0f / sqrt(r2);
    return d * (mj * inv * inv * inv);
}

/* One step for bodies [first, end): heavy bodies (in the window)
 * feel all n bodies, light ones only the heavy ones. */
__kernel void nbody_step(__global const float4 *pos_in,
                         __global const float4 *vel_in,
                         __global float4 *pos_out, __global float4 *vel_out,
                         const uint n, const uint first, const uint end,
                         const uint win, const uint win_len,
                         const float heavy, const float eps2, const float dt)
{
    const uint i = first + get_global_id(0);
    if (i >= end)
        return;
    const float4 pi = pos_in[i];
    float4 acc = (float4)(0.0f);
    if (in_window(i, n, win, win_len)) {
        for (uint j = 0; j < n; ++j) {
            float4 pj = pos_in[j];
            float mj = in_window(j, n, win, win_len) ? pj.w * heavy : pj.w;
            acc += pull(pi, pj, mj, eps2);
        }
    } else {
        for (uint t = 0; t < win_len; ++t) {
            uint j = win + t < n ? win + t : win + t - n;
            float4 pj = pos_in[j];
            acc += pull(pi, pj, pj.w * heavy, eps2);
        }
    }
    float4 v = vel_in[i] + acc * dt;
    float4 p = pi + v * dt;
    p.w = pi.w;
    pos_out[i] = p;
    vel_out[i] = v;
}
