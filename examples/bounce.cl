/*
 * The bounce model as a model file (docs/MODELS.md): balls (x, y, vx, vy) in
 * the box [0, w] x [0, h] under gravity g along +y, reflected at the walls
 * with restitution e, then clamped into the box. With the defaults and the
 * same --init it gives `ballcl run --model bounce`'s bits:
 *   ballcl run --model-file examples/bounce.cl --reference examples/bounce.c
 *
 * It is docs/MODELS.md's step, operation for operation, with each `if` of
 * the C reference (examples/bounce.c) written as `?:` on the ball's
 * components: the same text then also compiles on vectors of balls (the
 * wide CPU variants), and a GPU's work-items do not diverge. At a wall the
 * velocity is reflected first, from the condition on the position before
 * its own reflection (the reference tests it once for both). The clamps are
 * comparisons, not fmin/fmax, whose result for a signed zero is
 * unspecified. cl/bounce.cl, the built-in model's update, computes the same
 * bits with g * dt, -e, 2 * w and 2 * h formed once a step.
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
    b.w = b.w + g * dt;
    b.x = b.x + b.z * dt;
    b.y = b.y + b.w * dt;
    b.z = b.x < 0.0f ? -b.z * e : b.z;
    b.x = b.x < 0.0f ? -b.x : b.x;
    b.z = b.x > w ? -b.z * e : b.z;
    b.x = b.x > w ? 2.0f * w - b.x : b.x;
    b.w = b.y < 0.0f ? -b.w * e : b.w;
    b.y = b.y < 0.0f ? -b.y : b.y;
    b.w = b.y > h ? -b.w * e : b.w;
    b.y = b.y > h ? 2.0f * h - b.y : b.y;
    b.x = b.x < 0.0f ? 0.0f : b.x;
    b.x = b.x > w ? w : b.x;
    b.y = b.y < 0.0f ? 0.0f : b.y;
    b.y = b.y > h ? h : b.y;
    return b;
}
