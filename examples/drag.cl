/*
 * Balls under gravity with linear air drag (docs/MODELS.md): the state is
 * (x, y, vx, vy), gravity pulls along +y, drag slows both velocities in
 * proportion to them. Semi-implicit Euler: the velocities first, then the
 * positions from the new velocities.
 */
#pragma ballcl param dt 0.016666668
#pragma ballcl param gravity 980
#pragma ballcl param drag 0.5
#pragma ballcl flops 10

float4 update(float4 b, float dt, float gravity, float drag)
{
    b.z = b.z - drag * b.z * dt;
    b.w = b.w + (gravity - drag * b.w) * dt;
    b.x = b.x + b.z * dt;
    b.y = b.y + b.w * dt;
    return b;
}
