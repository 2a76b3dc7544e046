/*
 * The seed model (docs/MODELS.md): x' = x + z, y' = y + w, z' = z + w, w' = w.
 * x' uses the old z. Only float32 additions, so every IEEE-754 device gives
 * the C reference's bits; contraction is off so nothing is fused.
 *
 * Every kernel of every model takes (state, n, k, params...): n balls, k steps
 * (ignored by the one-step kernel). Work-items past n return at once, so the
 * global size may be rounded up to any local size.
 *
 * Kernels named <model>_step_<variant> and <model>_steps_<variant> are
 * variants of the same update (docs/BENCHMARK.md). A variant whose name ends
 * in x<B> handles B consecutive balls per work-item: work-item i owns balls
 * [i*B, i*B + B) that are < n. The host finds variants by name, validates
 * each bit for bit and picks one by measurement (ballcl tune) or by the
 * documented rule.
 */
#pragma OPENCL FP_CONTRACT OFF

__kernel void seed_step(__global float4 *restrict s, uint n, uint k)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float4 b = s[i];
    b.x = b.x + b.z;
    b.y = b.y + b.w;
    b.z = b.z + b.w;
    s[i] = b;
}

/* One step, in the reference's order (x' uses the old z). A comma
 * expression: its parts are evaluated in order, and it reads as one
 * statement wherever it is used. */
#define SEED_STEP(x, y, z, w) (x = x + z, y = y + w, z = z + w)
#define SEED_STEP4(x, y, z, w)                                                                     \
    (SEED_STEP(x, y, z, w), SEED_STEP(x, y, z, w), SEED_STEP(x, y, z, w), SEED_STEP(x, y, z, w))

/* k steps in registers: one read and one write of the ball per launch. The
 * loop is unrolled by hand (by 16) so that a GPU spends its issue slots on
 * the additions rather than on the loop counter: at 3 additions per step the
 * counter would otherwise cost a fifth of them. The order of the additions
 * is that of k single steps. */
__kernel void seed_steps(__global float4 *restrict s, uint n, uint k)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float x = s[i].x, y = s[i].y, z = s[i].z, w = s[i].w;
    uint j = 0;
    for (; j + 16 <= k; j += 16) {
        SEED_STEP4(x, y, z, w);
        SEED_STEP4(x, y, z, w);
        SEED_STEP4(x, y, z, w);
        SEED_STEP4(x, y, z, w);
    }
    for (; j < k; j++)
        SEED_STEP(x, y, z, w);
    s[i] = (float4)(x, y, z, w);
}

/* ---- wide variants for CPUs ---------------------------------------------
 *
 * PoCL runs a work-group as a loop over its work-items and vectorises that
 * loop only when it can see through the kernel body; the k loop of
 * seed_steps stops it, leaving one scalar ball per iteration whose three
 * additions wait on each other. These variants give each work-item B
 * consecutive balls held as floatB vectors in structure-of-arrays form
 * (x, y, z, w of B balls), so every step is three independent B-wide vector
 * additions and the CPU keeps several of them in flight. Each set of W balls
 * (W the unit's float lanes) gives three independent W-wide additions per
 * step, and its next step waits one add latency; a core with two add pipes
 * of latency 3 or 4 needs 6 to 8 additions in flight, so four sets of W are
 * what the default rule picks (bcl_variant_default, docs/BENCHMARK.md):
 * x32 on 8-wide AVX2 (12 additions in flight, the 16 registers exactly),
 * x64 on 16-wide AVX-512. x8 and x16 leave the adders idle part of the time
 * on such cores; they remain for tune to measure.
 *
 * Balls past n (the last work-item of a size that is not a multiple of B)
 * take the scalar path, which performs the same additions in the same order.
 */

/* The scalar path for balls [first, end): k steps each. */
static void seed_scalar_run(__global float4 *restrict s, size_t first, size_t end, uint k)
{
    for (size_t i = first; i < end; i++) {
        float x = s[i].x, y = s[i].y, z = s[i].z, w = s[i].w;
        for (uint j = 0; j < k; j++)
            SEED_STEP(x, y, z, w);
        s[i] = (float4)(x, y, z, w);
    }
}

/* Two balls as one float8 (x0 y0 z0 w0 x1 y1 z1 w1) from their components.
 * Loads and stores go through float8, the widest vector an AVX2 CPU passes
 * in a register, so no call needs a wider type. */
static float8 seed_join2(float2 x, float2 y, float2 z, float2 w)
{
    return (float8)(x.s0, y.s0, z.s0, w.s0, x.s1, y.s1, z.s1, w.s1);
}

/* The k-step loop on structure-of-arrays vectors of any width. */
#define SEED_LOOP(x, y, z, w, k)                                                                   \
    for (uint j = 0; j < (k); j++)                                                                 \
    SEED_STEP(x, y, z, w)

/* B = 8: four float8 loads give x, y, z, w as float8. */
static void seed_run_x8(__global float4 *restrict s, uint n, uint k)
{
    size_t first = get_global_id(0) * 8;
    if (first >= n)
        return;
    if (first + 8 > n) {
        seed_scalar_run(s, first, n, k);
        return;
    }
    __global float *p = (__global float *)(s + first);
    float8 a0 = vload8(0, p), a1 = vload8(1, p), a2 = vload8(2, p), a3 = vload8(3, p);
    float8 x = (float8)(a0.s04, a1.s04, a2.s04, a3.s04);
    float8 y = (float8)(a0.s15, a1.s15, a2.s15, a3.s15);
    float8 z = (float8)(a0.s26, a1.s26, a2.s26, a3.s26);
    float8 w = (float8)(a0.s37, a1.s37, a2.s37, a3.s37);
    SEED_LOOP(x, y, z, w, k);
    vstore8(seed_join2(x.s01, y.s01, z.s01, w.s01), 0, p);
    vstore8(seed_join2(x.s23, y.s23, z.s23, w.s23), 1, p);
    vstore8(seed_join2(x.s45, y.s45, z.s45, w.s45), 2, p);
    vstore8(seed_join2(x.s67, y.s67, z.s67, w.s67), 3, p);
}

/* B = 16: eight float8 loads give x, y, z, w as float16. */
static void seed_run_x16(__global float4 *restrict s, uint n, uint k)
{
    size_t first = get_global_id(0) * 16;
    if (first >= n)
        return;
    if (first + 16 > n) {
        seed_scalar_run(s, first, n, k);
        return;
    }
    __global float *p = (__global float *)(s + first);
    float8 a0 = vload8(0, p), a1 = vload8(1, p), a2 = vload8(2, p), a3 = vload8(3, p);
    float8 a4 = vload8(4, p), a5 = vload8(5, p), a6 = vload8(6, p), a7 = vload8(7, p);
    float16 x = (float16)(a0.s04, a1.s04, a2.s04, a3.s04, a4.s04, a5.s04, a6.s04, a7.s04);
    float16 y = (float16)(a0.s15, a1.s15, a2.s15, a3.s15, a4.s15, a5.s15, a6.s15, a7.s15);
    float16 z = (float16)(a0.s26, a1.s26, a2.s26, a3.s26, a4.s26, a5.s26, a6.s26, a7.s26);
    float16 w = (float16)(a0.s37, a1.s37, a2.s37, a3.s37, a4.s37, a5.s37, a6.s37, a7.s37);
    SEED_LOOP(x, y, z, w, k);
    vstore8(seed_join2(x.s01, y.s01, z.s01, w.s01), 0, p);
    vstore8(seed_join2(x.s23, y.s23, z.s23, w.s23), 1, p);
    vstore8(seed_join2(x.s45, y.s45, z.s45, w.s45), 2, p);
    vstore8(seed_join2(x.s67, y.s67, z.s67, w.s67), 3, p);
    vstore8(seed_join2(x.s89, y.s89, z.s89, w.s89), 4, p);
    vstore8(seed_join2(x.sab, y.sab, z.sab, w.sab), 5, p);
    vstore8(seed_join2(x.scd, y.scd, z.scd, w.scd), 6, p);
    vstore8(seed_join2(x.sef, y.sef, z.sef, w.sef), 7, p);
}

/* One set of 16 balls held as float16 components: loads of eight float8
 * (two balls each) from p + 16 * set balls, and the matching stores. */
#define SEED_LOAD16(x, y, z, w, p, set)                                                            \
    float16 x, y, z, w;                                                                            \
    {                                                                                              \
        __global const float *q_ = (p) + 64 * (set);                                               \
        float8 a0 = vload8(0, q_), a1 = vload8(1, q_), a2 = vload8(2, q_), a3 = vload8(3, q_);     \
        float8 a4 = vload8(4, q_), a5 = vload8(5, q_), a6 = vload8(6, q_), a7 = vload8(7, q_);     \
        x = (float16)(a0.s04, a1.s04, a2.s04, a3.s04, a4.s04, a5.s04, a6.s04, a7.s04);             \
        y = (float16)(a0.s15, a1.s15, a2.s15, a3.s15, a4.s15, a5.s15, a6.s15, a7.s15);             \
        z = (float16)(a0.s26, a1.s26, a2.s26, a3.s26, a4.s26, a5.s26, a6.s26, a7.s26);             \
        w = (float16)(a0.s37, a1.s37, a2.s37, a3.s37, a4.s37, a5.s37, a6.s37, a7.s37);             \
    }
#define SEED_STORE16(x, y, z, w, p, set)                                                           \
    {                                                                                              \
        __global float *q_ = (p) + 64 * (set);                                                     \
        vstore8(seed_join2(x.s01, y.s01, z.s01, w.s01), 0, q_);                                    \
        vstore8(seed_join2(x.s23, y.s23, z.s23, w.s23), 1, q_);                                    \
        vstore8(seed_join2(x.s45, y.s45, z.s45, w.s45), 2, q_);                                    \
        vstore8(seed_join2(x.s67, y.s67, z.s67, w.s67), 3, q_);                                    \
        vstore8(seed_join2(x.s89, y.s89, z.s89, w.s89), 4, q_);                                    \
        vstore8(seed_join2(x.sab, y.sab, z.sab, w.sab), 5, q_);                                    \
        vstore8(seed_join2(x.scd, y.scd, z.scd, w.scd), 6, q_);                                    \
        vstore8(seed_join2(x.sef, y.sef, z.sef, w.sef), 7, q_);                                    \
    }

/* B = 32: two independent float16 sets, twelve additions in flight per
 * step on 8-wide units (AVX2: 16 registers, all of them). */
static void seed_run_x32(__global float4 *restrict s, uint n, uint k)
{
    size_t first = get_global_id(0) * 32;
    if (first >= n)
        return;
    if (first + 32 > n) {
        seed_scalar_run(s, first, n, k);
        return;
    }
    __global float *p = (__global float *)(s + first);
    SEED_LOAD16(x0, y0, z0, w0, p, 0);
    SEED_LOAD16(x1, y1, z1, w1, p, 1);
    /* The sets are independent: the compiler interleaves their additions. */
    for (uint j = 0; j < k; j++) {
        SEED_STEP(x0, y0, z0, w0);
        SEED_STEP(x1, y1, z1, w1);
    }
    SEED_STORE16(x0, y0, z0, w0, p, 0);
    SEED_STORE16(x1, y1, z1, w1, p, 1);
}

/* B = 64: four independent float16 sets, for 16-wide units (AVX-512):
 * twelve 16-wide additions in flight per step, in 16 of the 32 registers. */
static void seed_run_x64(__global float4 *restrict s, uint n, uint k)
{
    size_t first = get_global_id(0) * 64;
    if (first >= n)
        return;
    if (first + 64 > n) {
        seed_scalar_run(s, first, n, k);
        return;
    }
    __global float *p = (__global float *)(s + first);
    SEED_LOAD16(x0, y0, z0, w0, p, 0);
    SEED_LOAD16(x1, y1, z1, w1, p, 1);
    SEED_LOAD16(x2, y2, z2, w2, p, 2);
    SEED_LOAD16(x3, y3, z3, w3, p, 3);
    for (uint j = 0; j < k; j++) {
        SEED_STEP(x0, y0, z0, w0);
        SEED_STEP(x1, y1, z1, w1);
        SEED_STEP(x2, y2, z2, w2);
        SEED_STEP(x3, y3, z3, w3);
    }
    SEED_STORE16(x0, y0, z0, w0, p, 0);
    SEED_STORE16(x1, y1, z1, w1, p, 1);
    SEED_STORE16(x2, y2, z2, w2, p, 2);
    SEED_STORE16(x3, y3, z3, w3, p, 3);
}

__kernel void seed_steps_x8(__global float4 *restrict s, uint n, uint k)
{
    seed_run_x8(s, n, k);
}

__kernel void seed_steps_x16(__global float4 *restrict s, uint n, uint k)
{
    seed_run_x16(s, n, k);
}

__kernel void seed_steps_x32(__global float4 *restrict s, uint n, uint k)
{
    seed_run_x32(s, n, k);
}

__kernel void seed_steps_x64(__global float4 *restrict s, uint n, uint k)
{
    seed_run_x64(s, n, k);
}

/* One step with B balls per work-item: the same code with k = 1. */
__kernel void seed_step_x8(__global float4 *restrict s, uint n, uint k)
{
    seed_run_x8(s, n, 1);
}

__kernel void seed_step_x16(__global float4 *restrict s, uint n, uint k)
{
    seed_run_x16(s, n, 1);
}
