/* The C reference of examples/seed.cl: the same update, in C (ballcl defines
 * float4 as a struct of x, y, z, w for it). */
float4 update(float4 b)
{
    b.x = b.x + b.z;
    b.y = b.y + b.w;
    b.z = b.z + b.w;
    return b;
}
