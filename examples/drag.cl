/*
 * Balls under gravity with linear air drag (docs/MODELS.md): the state is
 * (x, y, vx, vy), gravity pulls along +y, drag slows both velocities in
 * proportion to them. Semi-implicit Euler: the velocities first, then the
 * positions from the new velocities. Run it with
 *   ballcl run --model-file examples/drag.cl --reference examples/drag.c
 * (--param drag=0.25 and the like change a parameter); examples/drag.py is
 * the same step in NumPy, for the Python module.
 */
#pragma ballcl param dt 0.016666668
#pragma ballcl param gravity 980
#pragma ballcl param drag 0.5
/* Per step: 3 operations for vx, 4 for vy, 2 for each position. */
#pragma ballcl flops 11
#pragma ballcl ops 11

float4 update(float4 b, float dt, float gravity, float drag)
{
    b.z = b.z - drag * b.z * dt;
    b.w = b.w + (gravity - drag * b.w) * dt;
    b.x = b.x + b.z * dt;
    b.y = b.y + b.w * dt;
    return b;
}
