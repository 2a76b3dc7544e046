/*
 * The seed model (docs/MODELS.md): x' = x + z, y' = y + w, z' = z + w, w' = w,
 * where x' uses the old z. Only float32 additions, so every IEEE-754 device
 * gives the C reference's bits (src/models/seed.c). The kernels around the
 * update are generated (cl/kernels.cl), as for a model file.
 */
float4 update(float4 b)
{
    b.x = b.x + b.z;
    b.y = b.y + b.w;
    b.z = b.z + b.w;
    return b;
}
