/*
 * The bounce model (docs/MODELS.md): balls (x, y, vx, vy) in a box [0, W] x [0, H]
 * under gravity g along +y, reflected at the walls with restitution e, then
 * clamped into the box; the parameters are (dt, g, W, H, e). The kernels
 * around the update are generated (cl/kernels.cl), as for a model file.
 *
 * The step gives the bits of the C reference (src/models/bounce.c): every
 * operator one rounded float32 operation, contraction off. Each of the
 * reference's `if`s is written as `?:` on the ball's components, so the same
 * text also runs on vectors of balls (the wide CPU variants) and a GPU's
 * work-items do not diverge. At a wall the velocity is reflected first, from
 * the condition on the position before its own reflection (the reference
 * tests it once for both). (-v) * e is written v * (-e), the same rounded
 * product (rounding to nearest is symmetric in sign); g * dt, 2 * W and
 * 2 * H are the very products the reference forms every step. The clamps
 * are comparisons, not fmin/fmax, whose result for a signed zero is
 * unspecified.
 */
float4 update(float4 b, float dt, float g, float w, float h, float e)
{
    const float gdt = g * dt, ne = -e, w2 = 2.0f * w, h2 = 2.0f * h;
    b.w = b.w + gdt;
    b.x = b.x + b.z * dt;
    b.y = b.y + b.w * dt;
    b.z = b.x < 0.0f ? b.z * ne : b.z;
    b.x = b.x < 0.0f ? -b.x : b.x;
    b.z = b.x > w ? b.z * ne : b.z;
    b.x = b.x > w ? w2 - b.x : b.x;
    b.w = b.y < 0.0f ? b.w * ne : b.w;
    b.y = b.y < 0.0f ? -b.y : b.y;
    b.w = b.y > h ? b.w * ne : b.w;
    b.y = b.y > h ? h2 - b.y : b.y;
    b.x = b.x < 0.0f ? 0.0f : b.x;
    b.x = b.x > w ? w : b.x;
    b.y = b.y < 0.0f ? 0.0f : b.y;
    b.y = b.y > h ? h : b.y;
    return b;
}
