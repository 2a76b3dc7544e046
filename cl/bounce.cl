/*
 * The bounce model (docs/MODELS.md): balls (x, y, vx, vy) in a box [0, W] x [0, H]
 * under gravity g along +y, reflected at the walls with restitution e, then
 * clamped into the box. The step is written exactly as the C reference
 * (src/models/bounce.c) writes it: every operator one rounded float32
 * operation, contraction off, so nothing is fused into an FMA. (-vx) * e and
 * (2 * W) - x are the spec's groupings; the clamps are comparisons, not
 * fmin/fmax, whose result for a signed zero is unspecified.
 *
 * The branches depend on each ball's data, so work-items of one group
 * diverge: the cost `ballcl bench --model bounce` shows next to the seed.
 */
#pragma OPENCL FP_CONTRACT OFF

/* One step of one ball, in registers. */
void bounce_one(float *px, float *py, float *pvx, float *pvy, float dt, float g, float w, float h,
                float e)
{
    float x = *px, y = *py, vx = *pvx, vy = *pvy;
    vy = vy + g * dt;
    x = x + vx * dt;
    y = y + vy * dt;
    if (x < 0.0f) {
        x = -x;
        vx = -vx * e;
    }
    if (x > w) {
        x = 2.0f * w - x;
        vx = -vx * e;
    }
    if (y < 0.0f) {
        y = -y;
        vy = -vy * e;
    }
    if (y > h) {
        y = 2.0f * h - y;
        vy = -vy * e;
    }
    if (x < 0.0f)
        x = 0.0f;
    if (x > w)
        x = w;
    if (y < 0.0f)
        y = 0.0f;
    if (y > h)
        y = h;
    *px = x;
    *py = y;
    *pvx = vx;
    *pvy = vy;
}

__kernel void bounce_step(__global float4 *restrict s, uint n, uint k, float dt, float g, float w,
                          float h, float e)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float4 b = s[i];
    float x = b.x, y = b.y, vx = b.z, vy = b.w;
    bounce_one(&x, &y, &vx, &vy, dt, g, w, h, e);
    s[i] = (float4)(x, y, vx, vy);
}

/* k steps in registers: one read and one write of the ball per launch. */
__kernel void bounce_steps(__global float4 *restrict s, uint n, uint k, float dt, float g, float w,
                           float h, float e)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float4 b = s[i];
    float x = b.x, y = b.y, vx = b.z, vy = b.w;
    for (uint j = 0; j < k; j++)
        bounce_one(&x, &y, &vx, &vy, dt, g, w, h, e);
    s[i] = (float4)(x, y, vx, vy);
}

/* ---- wide variants for CPUs ---------------------------------------------
 *
 * As for the seed (cl/seed.cl): PoCL does not vectorise across work-items
 * through the k loop, so bounce_steps runs one ball per work-item in scalar
 * code, its branches taken one ball at a time. These variants hold B
 * consecutive balls as float vectors in structure-of-arrays form and take
 * every branch for all of them at once: each `if` becomes a comparison and
 * a vector `?:`, which picks, lane by lane, the value the branch would have
 * left (both sides are computed; the unselected lanes are thrown away, and
 * no float operation traps). The operator rather than select(): PoCL calls
 * its library for a float16 select(), and the operator is one blend. The selected values are the
 * very operations of bounce_one in the same order, so the bits are those of the reference. g * dt
 * and 2 * w, 2 * h are computed once: the same rounded products the scalar code forms every step;
 * (-v) * e is written v * (-e), the same rounded product (rounding to nearest is symmetric in
 * sign), one negation per step fewer.
 *
 * A step of one set is a long dependent chain (add, multiply, add, then
 * compare and select after compare and select), so independent sets keep
 * the units busy: x8 is one set of 8, x16 two of 8 (one float16), x32 four
 * (two float16). Balls past n take the scalar path.
 */

/* One step of a set of balls held in vectors of type T (compare type M). */
#define BOUNCE_VSTEP(T, M, x, y, vx, vy)                                                           \
    do {                                                                                           \
        vy = vy + gdt;                                                                             \
        x = x + vx * dt;                                                                           \
        y = y + vy * dt;                                                                           \
        M m_ = x < 0.0f;                                                                           \
        x = m_ ? -x : x;                                                                           \
        vx = m_ ? vx * ne : vx;                                                                    \
        m_ = x > w;                                                                                \
        x = m_ ? w2 - x : x;                                                                       \
        vx = m_ ? vx * ne : vx;                                                                    \
        m_ = y < 0.0f;                                                                             \
        y = m_ ? -y : y;                                                                           \
        vy = m_ ? vy * ne : vy;                                                                    \
        m_ = y > h;                                                                                \
        y = m_ ? h2 - y : y;                                                                       \
        vy = m_ ? vy * ne : vy;                                                                    \
        x = x < 0.0f ? (T)(0.0f) : x;                                                              \
        x = x > w ? (T)(w) : x;                                                                    \
        y = y < 0.0f ? (T)(0.0f) : y;                                                              \
        y = y > h ? (T)(h) : y;                                                                    \
    } while (0)

/* k steps of the balls [first, end) one at a time. */
static void bounce_scalar_run(__global float4 *restrict s, size_t first, size_t end, uint k,
                              float dt, float g, float w, float h, float e)
{
    for (size_t i = first; i < end; i++) {
        float4 b = s[i];
        float x = b.x, y = b.y, vx = b.z, vy = b.w;
        for (uint j = 0; j < k; j++)
            bounce_one(&x, &y, &vx, &vy, dt, g, w, h, e);
        s[i] = (float4)(x, y, vx, vy);
    }
}

/* Eight balls (p: their 32 floats) as float8 components, and back. */
#define BOUNCE_LOAD8(x, y, vx, vy, p)                                                              \
    float8 x, y, vx, vy;                                                                           \
    {                                                                                              \
        float8 a0 = vload8(0, p), a1 = vload8(1, p), a2 = vload8(2, p), a3 = vload8(3, p);         \
        x = (float8)(a0.s04, a1.s04, a2.s04, a3.s04);                                              \
        y = (float8)(a0.s15, a1.s15, a2.s15, a3.s15);                                              \
        vx = (float8)(a0.s26, a1.s26, a2.s26, a3.s26);                                             \
        vy = (float8)(a0.s37, a1.s37, a2.s37, a3.s37);                                             \
    }
#define BOUNCE_STORE8(x, y, vx, vy, p)                                                             \
    {                                                                                              \
        vstore8((float8)(x.s0, y.s0, vx.s0, vy.s0, x.s1, y.s1, vx.s1, vy.s1), 0, p);               \
        vstore8((float8)(x.s2, y.s2, vx.s2, vy.s2, x.s3, y.s3, vx.s3, vy.s3), 1, p);               \
        vstore8((float8)(x.s4, y.s4, vx.s4, vy.s4, x.s5, y.s5, vx.s5, vy.s5), 2, p);               \
        vstore8((float8)(x.s6, y.s6, vx.s6, vy.s6, x.s7, y.s7, vx.s7, vy.s7), 3, p);               \
    }
/* Sixteen balls as float16 components: two sets of eight. */
#define BOUNCE_LOAD16(x, y, vx, vy, p)                                                             \
    float16 x, y, vx, vy;                                                                          \
    {                                                                                              \
        BOUNCE_LOAD8(x0_, y0_, vx0_, vy0_, p);                                                     \
        BOUNCE_LOAD8(x1_, y1_, vx1_, vy1_, (p) + 32);                                              \
        x = (float16)(x0_, x1_);                                                                   \
        y = (float16)(y0_, y1_);                                                                   \
        vx = (float16)(vx0_, vx1_);                                                                \
        vy = (float16)(vy0_, vy1_);                                                                \
    }
#define BOUNCE_STORE16(x, y, vx, vy, p)                                                            \
    {                                                                                              \
        float8 x0_ = x.lo, y0_ = y.lo, vx0_ = vx.lo, vy0_ = vy.lo;                                 \
        float8 x1_ = x.hi, y1_ = y.hi, vx1_ = vx.hi, vy1_ = vy.hi;                                 \
        BOUNCE_STORE8(x0_, y0_, vx0_, vy0_, p);                                                    \
        BOUNCE_STORE8(x1_, y1_, vx1_, vy1_, (p) + 32);                                             \
    }

/* The work-item's first ball, or returns after the scalar path when its B
 * balls run past n. Declares p (the balls' floats) and the step's constants. */
#define BOUNCE_PROLOGUE(B)                                                                         \
    size_t first = get_global_id(0) * (B);                                                         \
    if (first >= n)                                                                                \
        return;                                                                                    \
    if (first + (B) > n) {                                                                         \
        bounce_scalar_run(s, first, n, k, dt, g, w, h, e);                                         \
        return;                                                                                    \
    }                                                                                              \
    __global float *p = (__global float *)(s + first);                                             \
    const float gdt = g * dt, w2 = 2.0f * w, h2 = 2.0f * h, ne = -e

static void bounce_run_x8(__global float4 *restrict s, uint n, uint k, float dt, float g, float w,
                          float h, float e)
{
    BOUNCE_PROLOGUE(8);
    BOUNCE_LOAD8(x, y, vx, vy, p);
    for (uint j = 0; j < k; j++)
        BOUNCE_VSTEP(float8, int8, x, y, vx, vy);
    BOUNCE_STORE8(x, y, vx, vy, p);
}

static void bounce_run_x16(__global float4 *restrict s, uint n, uint k, float dt, float g, float w,
                           float h, float e)
{
    BOUNCE_PROLOGUE(16);
    BOUNCE_LOAD16(x, y, vx, vy, p);
    for (uint j = 0; j < k; j++)
        BOUNCE_VSTEP(float16, int16, x, y, vx, vy);
    BOUNCE_STORE16(x, y, vx, vy, p);
}

static void bounce_run_x32(__global float4 *restrict s, uint n, uint k, float dt, float g, float w,
                           float h, float e)
{
    BOUNCE_PROLOGUE(32);
    BOUNCE_LOAD16(x0, y0, vx0, vy0, p);
    BOUNCE_LOAD16(x1, y1, vx1, vy1, p + 64);
    for (uint j = 0; j < k; j++) {
        BOUNCE_VSTEP(float16, int16, x0, y0, vx0, vy0);
        BOUNCE_VSTEP(float16, int16, x1, y1, vx1, vy1);
    }
    BOUNCE_STORE16(x0, y0, vx0, vy0, p);
    BOUNCE_STORE16(x1, y1, vx1, vy1, p + 64);
}

__kernel void bounce_steps_x8(__global float4 *restrict s, uint n, uint k, float dt, float g,
                              float w, float h, float e)
{
    bounce_run_x8(s, n, k, dt, g, w, h, e);
}

/* One step with 8 balls per work-item: the same code with k = 1. */
__kernel void bounce_step_x8(__global float4 *restrict s, uint n, uint k, float dt, float g,
                             float w, float h, float e)
{
    bounce_run_x8(s, n, 1, dt, g, w, h, e);
}

__kernel void bounce_steps_x16(__global float4 *restrict s, uint n, uint k, float dt, float g,
                               float w, float h, float e)
{
    bounce_run_x16(s, n, k, dt, g, w, h, e);
}

/* One step with 16 balls per work-item: the same code with k = 1. */
__kernel void bounce_step_x16(__global float4 *restrict s, uint n, uint k, float dt, float g,
                              float w, float h, float e)
{
    bounce_run_x16(s, n, 1, dt, g, w, h, e);
}

__kernel void bounce_steps_x32(__global float4 *restrict s, uint n, uint k, float dt, float g,
                               float w, float h, float e)
{
    bounce_run_x32(s, n, k, dt, g, w, h, e);
}

/* One step with 32 balls per work-item: the same code with k = 1. */
__kernel void bounce_step_x32(__global float4 *restrict s, uint n, uint k, float dt, float g,
                              float w, float h, float e)
{
    bounce_run_x32(s, n, 1, dt, g, w, h, e);
}
