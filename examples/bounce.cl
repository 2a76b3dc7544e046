/*
 * The bounce model as a model file (docs/MODELS.md): balls (x, y, vx, vy) in
 * the box [0, w] x [0, h] under gravity g along +y, reflected at the walls
 * with restitution e, then clamped into the box. It is cl/bounce.cl's update
 * with its parameters declared, so with the defaults and the same --init it
 * gives `ballcl run --model bounce`'s bits:
 *   ballcl run --model-file examples/bounce.cl --reference examples/bounce.c
 *
 * Every `if` of the C reference (examples/bounce.c) is written here as `?:`
 * on the ball's components: the same text then also compiles on vectors of
 * balls (the wide CPU variants), and a GPU's work-items do not diverge. At a
 * wall the velocity is reflected first, from the condition on the position
 * before its own reflection (the reference tests it once for both).
 * (-v) * e is written v * (-e), the same rounded product (rounding to
 * nearest is symmetric in sign). The clamps are comparisons, not fmin/fmax,
 * whose result for a signed zero is unspecified.
 */
#pragma ballcl param dt 0.016666668
#pragma ballcl param g 980
#pragma ballcl param w 800
#pragma ballcl param h 600
#pragma ballcl param e 0.9
#pragma ballcl flops 6
#pragma ballcl ops 33
#pragma ballcl sets 2

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
