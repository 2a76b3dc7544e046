/*
 * The kernels of every model (docs/MODELS.md), generated around the model's
 * update, `float4 update(float4 b, float p0, ...)`: the step of one ball.
 * The host puts before this file the model's source and
 *   BCL_NAME(suffix)  <name>##suffix: the kernels are <name>_step, <name>_steps,
 *               <name>_steps_x8, ...
 *   BCL_PARAMS  the parameters as kernel arguments: ", float p0, float p1"
 *   BCL_ARGS    the same as update's arguments: ", p0, p1"
 *   BCL_WIDE    defined when the update also compiled on structure-of-arrays
 *               vectors: bcl_update8 takes bcl_soa8 (x, y, z, w of 8 balls,
 *               each a float8), bcl_update16 bcl_soa16 (docs/MODELS.md says
 *               which updates do).
 * Every kernel takes (state, n, k, params...): n balls, k steps (ignored by
 * the one-step kernels). Work-items past n return at once, so the global
 * size may be rounded up to any local size. Contraction is off (the host's
 * prelude): no operation of the update is fused into another.
 *
 * Kernels named <name>_step_<v> and <name>_steps_<v> are variants of the
 * same update (docs/BENCHMARK.md). A variant whose name ends in x<B> handles
 * B consecutive balls per work-item: work-item i owns balls [i*B, i*B + B)
 * that are < n. The host finds variants by name, validates each bit for bit
 * and picks one by measurement (ballcl tune) or by the documented rule.
 */
/* The host defines BCL_NAME(suffix) as <name>##suffix, the model's name
 * written out, and the suffix is pasted to its '_' here: nothing is expanded
 * before the pasting, so a driver's headers that define a builtin's name as
 * a macro (PoCL: #define step _cl_step, and sin, nan...) rename neither a
 * model called sin nor its kernels. */
#define BCL_KERNEL(suffix)                                                                         \
    __kernel void BCL_NAME(_##suffix)(__global float4 *restrict s, uint n, uint k BCL_PARAMS)

BCL_KERNEL(step)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    s[i] = update(s[i] BCL_ARGS);
}

#define BCL_STEP(b) b = update(b BCL_ARGS)
#define BCL_STEP4(b)                                                                               \
    BCL_STEP(b);                                                                                   \
    BCL_STEP(b);                                                                                   \
    BCL_STEP(b);                                                                                   \
    BCL_STEP(b)

/* k steps in registers: one read and one write of the ball per launch. The
 * loop is unrolled by hand (by 16) so that a GPU spends its issue slots on
 * the update rather than on the loop counter: at 3 additions a step (the
 * seed's) the counter would otherwise cost a fifth of them. The steps are
 * those of k single steps, in order. */
BCL_KERNEL(steps)
{
    size_t i = get_global_id(0);
    if (i >= n)
        return;
    float4 b = s[i];
    uint j = 0;
    for (; j + 16 <= k; j += 16) {
        BCL_STEP4(b);
        BCL_STEP4(b);
        BCL_STEP4(b);
        BCL_STEP4(b);
    }
    for (; j < k; j++)
        BCL_STEP(b);
    s[i] = b;
}

#ifdef BCL_WIDE
/* ---- wide variants for CPUs ---------------------------------------------
 *
 * PoCL runs a work-group as a loop over its work-items and vectorises that
 * loop only when it can see through the kernel body; the k loop of the
 * steps kernel stops it, leaving one scalar ball per iteration whose
 * operations wait on each other. These variants give each work-item B
 * consecutive balls held as vectors in structure-of-arrays form (x, y, z, w
 * of B balls), the update applied to all of them at once: its float
 * parameters and literals widen to the vectors, `?:` picks lane by lane.
 * Each set of W balls (W the unit's float lanes) is independent of the
 * others, so the CPU keeps several sets' operations in flight: as many sets
 * as the model's cpu_sets are what the default rule picks
 * (bcl_variant_default, docs/BENCHMARK.md). x8 is one float8 set, x16 one
 * float16, x32 two, x64 four. Loads and stores go through float8, the
 * widest vector an AVX2 CPU passes in a register.
 *
 * Balls past n (the last work-item of a size that is not a multiple of B)
 * take the scalar path, the same operations in the same order.
 */

/* k steps of the balls [first, end), one at a time. */
static void bcl_scalar_run(__global float4 *restrict s, size_t first, size_t end,
                           uint k BCL_PARAMS)
{
    for (size_t i = first; i < end; i++) {
        float4 b = s[i];
        for (uint j = 0; j < k; j++)
            BCL_STEP(b);
        s[i] = b;
    }
}

/* Two balls as one float8 (x0 y0 z0 w0 x1 y1 z1 w1) from their components. */
static float8 bcl_join2(float2 x, float2 y, float2 z, float2 w)
{
    return (float8)(x.s0, y.s0, z.s0, w.s0, x.s1, y.s1, z.s1, w.s1);
}

/* Eight balls (p: their 32 floats) as one bcl_soa8, and back. The loads
 * write through a pointer rather than return the struct: a returned struct
 * is a noalias pointer in LLVM, and inlining it leaves an
 * llvm.experimental.noalias.scope.decl that Oclgrind 21.10 cannot run
 * (its kernels then fail at clCreateKernel; tests/test_oclgrind.py). */
static void bcl_load8(__global const float *p, bcl_soa8 *out)
{
    float8 a0 = vload8(0, p), a1 = vload8(1, p), a2 = vload8(2, p), a3 = vload8(3, p);
    bcl_soa8 b;
    b.x = (float8)(a0.s04, a1.s04, a2.s04, a3.s04);
    b.y = (float8)(a0.s15, a1.s15, a2.s15, a3.s15);
    b.z = (float8)(a0.s26, a1.s26, a2.s26, a3.s26);
    b.w = (float8)(a0.s37, a1.s37, a2.s37, a3.s37);
    *out = b;
}

static void bcl_store8(bcl_soa8 b, __global float *p)
{
    vstore8(bcl_join2(b.x.s01, b.y.s01, b.z.s01, b.w.s01), 0, p);
    vstore8(bcl_join2(b.x.s23, b.y.s23, b.z.s23, b.w.s23), 1, p);
    vstore8(bcl_join2(b.x.s45, b.y.s45, b.z.s45, b.w.s45), 2, p);
    vstore8(bcl_join2(b.x.s67, b.y.s67, b.z.s67, b.w.s67), 3, p);
}

/* Sixteen balls (p: their 64 floats) as one bcl_soa16, and back. */
static void bcl_load16(__global const float *p, bcl_soa16 *out)
{
    float8 a0 = vload8(0, p), a1 = vload8(1, p), a2 = vload8(2, p), a3 = vload8(3, p);
    float8 a4 = vload8(4, p), a5 = vload8(5, p), a6 = vload8(6, p), a7 = vload8(7, p);
    bcl_soa16 b;
    b.x = (float16)(a0.s04, a1.s04, a2.s04, a3.s04, a4.s04, a5.s04, a6.s04, a7.s04);
    b.y = (float16)(a0.s15, a1.s15, a2.s15, a3.s15, a4.s15, a5.s15, a6.s15, a7.s15);
    b.z = (float16)(a0.s26, a1.s26, a2.s26, a3.s26, a4.s26, a5.s26, a6.s26, a7.s26);
    b.w = (float16)(a0.s37, a1.s37, a2.s37, a3.s37, a4.s37, a5.s37, a6.s37, a7.s37);
    *out = b;
}

static void bcl_store16(bcl_soa16 b, __global float *p)
{
    vstore8(bcl_join2(b.x.s01, b.y.s01, b.z.s01, b.w.s01), 0, p);
    vstore8(bcl_join2(b.x.s23, b.y.s23, b.z.s23, b.w.s23), 1, p);
    vstore8(bcl_join2(b.x.s45, b.y.s45, b.z.s45, b.w.s45), 2, p);
    vstore8(bcl_join2(b.x.s67, b.y.s67, b.z.s67, b.w.s67), 3, p);
    vstore8(bcl_join2(b.x.s89, b.y.s89, b.z.s89, b.w.s89), 4, p);
    vstore8(bcl_join2(b.x.sab, b.y.sab, b.z.sab, b.w.sab), 5, p);
    vstore8(bcl_join2(b.x.scd, b.y.scd, b.z.scd, b.w.scd), 6, p);
    vstore8(bcl_join2(b.x.sef, b.y.sef, b.z.sef, b.w.sef), 7, p);
}

/* The work-item's first ball, or a return after the scalar path when its B
 * balls run past n. Declares p, the balls' floats. */
#define BCL_WIDE_PROLOGUE(B)                                                                       \
    size_t first = get_global_id(0) * (B);                                                         \
    if (first >= n)                                                                                \
        return;                                                                                    \
    if (first + (B) > n) {                                                                         \
        bcl_scalar_run(s, first, n, k BCL_ARGS);                                                   \
        return;                                                                                    \
    }                                                                                              \
    __global float *p = (__global float *)(s + first)

static void bcl_run_x8(__global float4 *restrict s, uint n, uint k BCL_PARAMS)
{
    BCL_WIDE_PROLOGUE(8);
    bcl_soa8 b;
    bcl_load8(p, &b);
    for (uint j = 0; j < k; j++)
        b = bcl_update8(b BCL_ARGS);
    bcl_store8(b, p);
}

static void bcl_run_x16(__global float4 *restrict s, uint n, uint k BCL_PARAMS)
{
    BCL_WIDE_PROLOGUE(16);
    bcl_soa16 b;
    bcl_load16(p, &b);
    for (uint j = 0; j < k; j++)
        b = bcl_update16(b BCL_ARGS);
    bcl_store16(b, p);
}

/* The sets are independent: the compiler interleaves their operations. */
static void bcl_run_x32(__global float4 *restrict s, uint n, uint k BCL_PARAMS)
{
    BCL_WIDE_PROLOGUE(32);
    bcl_soa16 b0, b1;
    bcl_load16(p, &b0);
    bcl_load16(p + 64, &b1);
    for (uint j = 0; j < k; j++) {
        b0 = bcl_update16(b0 BCL_ARGS);
        b1 = bcl_update16(b1 BCL_ARGS);
    }
    bcl_store16(b0, p);
    bcl_store16(b1, p + 64);
}

static void bcl_run_x64(__global float4 *restrict s, uint n, uint k BCL_PARAMS)
{
    BCL_WIDE_PROLOGUE(64);
    bcl_soa16 b0, b1;
    bcl_load16(p, &b0);
    bcl_load16(p + 64, &b1);
    bcl_soa16 b2, b3;
    bcl_load16(p + 128, &b2);
    bcl_load16(p + 192, &b3);
    for (uint j = 0; j < k; j++) {
        b0 = bcl_update16(b0 BCL_ARGS);
        b1 = bcl_update16(b1 BCL_ARGS);
        b2 = bcl_update16(b2 BCL_ARGS);
        b3 = bcl_update16(b3 BCL_ARGS);
    }
    bcl_store16(b0, p);
    bcl_store16(b1, p + 64);
    bcl_store16(b2, p + 128);
    bcl_store16(b3, p + 192);
}

BCL_KERNEL(steps_x8)
{
    bcl_run_x8(s, n, k BCL_ARGS);
}

BCL_KERNEL(steps_x16)
{
    bcl_run_x16(s, n, k BCL_ARGS);
}

BCL_KERNEL(steps_x32)
{
    bcl_run_x32(s, n, k BCL_ARGS);
}

BCL_KERNEL(steps_x64)
{
    bcl_run_x64(s, n, k BCL_ARGS);
}

/* One step with B balls per work-item: the same code with k = 1. */
BCL_KERNEL(step_x8)
{
    bcl_run_x8(s, n, 1 BCL_ARGS);
}

BCL_KERNEL(step_x16)
{
    bcl_run_x16(s, n, 1 BCL_ARGS);
}
#endif
