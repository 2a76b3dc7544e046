/*
 * The bounce model (docs/MODELS.md): balls (x, y, vx, vy) in a box [0, W] x [0, H]
 * under gravity g along +y, reflected at the walls with restitution e, then
 * clamped into the box. The step is written exactly as the C reference
 * (src/models/bounce.c) writes it: every operator one rounded float32
 * operation, contraction off, so nothing is fused into an FMA. (-vx) * e and
 * (2 * W) - x are the spec's groupings; the clamps are comparisons, not
 * fmin/fmax, whose result for a signed zero is unspecified.
 *
 * The branches depend on each ball's data, so work-items of one group
 * diverge: the cost `ballcl bench --model bounce` shows next to the seed.
 */
#pragma OPENCL FP_CONTRACT OFF

/* One step of one ball, in registers. */
void bounce_one(float *px, float *py, float *pvx, float *pvy, float dt, float g, float w, float h,
                float e)
{
    float x = *px, y = *py, vx = *pvx, vy = *pvy;
    vy = vy + g * dt;
    x = x + vx * dt;
    y = y + vy * dt;
    if (x < 0.0f) {
        x = -x;
        vx = -vx * e;
    }
    if (x > w) {
        x = 2.0f * w - x;
        vx = -vx * e;
    }
    if (y < 0.0f) {
        y = -y;
        vy = -vy * e;
    }
    if (y > h) {
        y = 2.0f * h - y;
        vy = -vy * e;
    }
    if (x < 0.0f)
        x = 0.0f;
    if (x > w)
        x = w;
    if (y < 0.0f)
        y = 0.0f;
    if (y > h)
        y = h;
    *px = x;
    *py = y;
    *pvx = vx;
    *pvy = vy;
}

__kernel void bounce_step(__global float4 *restrict s, uint n, uint k, float dt, float g, float w,
                          float h, float e)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float4 b = s[i];
    float x = b.x, y = b.y, vx = b.z, vy = b.w;
    bounce_one(&x, &y, &vx, &vy, dt, g, w, h, e);
    s[i] = (float4)(x, y, vx, vy);
}

/* k steps in registers: one read and one write of the ball per launch. */
__kernel void bounce_steps(__global float4 *restrict s, uint n, uint k, float dt, float g, float w,
                           float h, float e)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float4 b = s[i];
    float x = b.x, y = b.y, vx = b.z, vy = b.w;
    for (uint j = 0; j < k; j++)
        bounce_one(&x, &y, &vx, &vy, dt, g, w, h, e);
    s[i] = (float4)(x, y, vx, vy);
}
