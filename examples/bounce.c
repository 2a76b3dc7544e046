/*
 * The C reference of examples/bounce.cl: the bounce model's step as
 * docs/MODELS.md writes it (src/models/bounce.c's reference, one ball at a
 * time), with `if`s where the kernel has `?:`. ballcl defines float4 as a
 * struct of x, y, z, w before this text and compiles it with
 * -ffp-contract=off, so each operator is one rounded float32 operation;
 * -b.z * e is (-b.z) * e, and 2.0f * w is exact.
 */
float4 update(float4 b, float dt, float g, float w, float h, float e)
{
    b.w = b.w + g * dt;
    b.x = b.x + b.z * dt;
    b.y = b.y + b.w * dt;
    if (b.x < 0.0f) {
        b.x = -b.x;
        b.z = -b.z * e;
    }
    if (b.x > w) {
        b.x = 2.0f * w - b.x;
        b.z = -b.z * e;
    }
    if (b.y < 0.0f) {
        b.y = -b.y;
        b.w = -b.w * e;
    }
    if (b.y > h) {
        b.y = 2.0f * h - b.y;
        b.w = -b.w * e;
    }
    if (b.x < 0.0f)
        b.x = 0.0f;
    if (b.x > w)
        b.x = w;
    if (b.y < 0.0f)
        b.y = 0.0f;
    if (b.y > h)
        b.y = h;
    return b;
}
