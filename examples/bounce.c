/*
 * The C reference of examples/bounce.cl: the bounce model's step as
 * docs/MODELS.md writes it (src/models/bounce.c's reference, one ball at a
 * time), with `if`s where the kernel has `?:`, and a helper for the two
 * axes, which are independent once the velocities have moved the ball (a
 * reference is plain C: it may be written any way that gives the same
 * operations). ballcl defines float4 as a struct of x, y, z, w before this
 * text and compiles it with -ffp-contract=off, so each operator is one
 * rounded float32 operation; -*v * e is (-*v) * e, and 2.0f * hi is exact.
 */

/* One axis: position *p and velocity *v reflected at the walls 0 and hi,
 * then the position clamped into [0, hi]. */
static void axis(float *p, float *v, float hi, float e)
{
    if (*p < 0.0f) {
        *p = -*p;
        *v = -*v * e;
    }
    if (*p > hi) {
        *p = 2.0f * hi - *p;
        *v = -*v * e;
    }
    if (*p < 0.0f)
        *p = 0.0f;
    if (*p > hi)
        *p = hi;
}

float4 update(float4 b, float dt, float g, float w, float h, float e)
{
    b.w = b.w + g * dt;
    b.x = b.x + b.z * dt;
    b.y = b.y + b.w * dt;
    axis(&b.x, &b.z, w, e);
    axis(&b.y, &b.w, h, e);
    return b;
}
