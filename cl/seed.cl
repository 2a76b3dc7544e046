/*
 * The seed model (SPEC §2.1): x' = x + z, y' = y + w, z' = z + w, w' = w.
 * x' uses the old z. Only float32 additions, so every IEEE-754 device gives
 * the C reference's bits; contraction is off so nothing is fused.
 *
 * Every kernel of every model takes (state, n, k, params...): n balls, k steps
 * (ignored by the one-step kernel). Work-items past n return at once, so the
 * global size may be rounded up to any local size.
 */
#pragma OPENCL FP_CONTRACT OFF

__kernel void seed_step(__global float4 *restrict s, uint n, uint k)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float4 b = s[i];
    b.x = b.x + b.z;
    b.y = b.y + b.w;
    b.z = b.z + b.w;
    s[i] = b;
}

/* k steps in registers: one read and one write of the ball per launch. */
__kernel void seed_steps(__global float4 *restrict s, uint n, uint k)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float x = s[i].x, y = s[i].y, z = s[i].z, w = s[i].w;
    for (uint j = 0; j < k; j++) {
        x = x + z;
        y = y + w;
        z = z + w;
    }
    s[i] = (float4)(x, y, z, w);
}
