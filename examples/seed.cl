/*
 * The seed's update as a model file (docs/MODELS.md): x += z; y += w; z += w,
 * where x takes the old z. No parameters. Run it with
 *   ballcl run --model-file examples/seed.cl --reference examples/seed.c
 */
#pragma ballcl flops 3
#pragma ballcl ops 3
#pragma ballcl sets 4

float4 update(float4 b)
{
    b.x = b.x + b.z;
    b.y = b.y + b.w;
    b.z = b.z + b.w;
    return b;
}
