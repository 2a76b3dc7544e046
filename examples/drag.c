/* The C reference of examples/drag.cl: the same update, in C (ballcl defines
 * float4 as a struct of x, y, z, w for it). */
float4 update(float4 b, float dt, float gravity, float drag)
{
    b.z = b.z - drag * b.z * dt;
    b.w = b.w + (gravity - drag * b.w) * dt;
    b.x = b.x + b.z * dt;
    b.y = b.y + b.w * dt;
    return b;
}
