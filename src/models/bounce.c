/*
 * The bounce model (docs/MODELS.md): balls in a W x H box under gravity g (along
 * +y), reflected at the walls with restitution e, then clamped into the box.
 * State per ball (x, y, vx, vy); parameters p = {dt, g, W, H, e}.
 *
 * Every operation is one separately rounded float32 operation, in the order
 * docs/MODELS.md writes them, so the kernel (cl/bounce.cl) gives the same bits on
 * every IEEE-754 device. The parameter limits of bounce_check are what keep
 * every state finite: see docs/MODELS.md for the argument.
 */
#include "model_impl.h"

#include <math.h>

enum { P_DT, P_G, P_W, P_H, P_E };

/* |g*dt| at most this: velocities then never overflow (docs/MODELS.md). */
#define BOUNCE_MAX_GDT 1e30f
/* W and H at most this: 2*W and 2*H stay finite. */
#define BOUNCE_MAX_BOX 1e38f

static const bcl_param bounce_params[] = {
    {"dt", "time step, > 0; the default is float32(1/60)", 1, "0.016666668"},
    {"gravity", "acceleration along +y (down)", 1, "980"},
    {"box", "box width and height, > 0", 2, "800,600"},
    {"restitution", "fraction of speed kept at a wall, 0 to 1", 1, "0.9"},
};

/* The limits are stated as comparisons that NaN fails, so a NaN parameter
 * from a library caller is refused too (the option parser refuses it first). */
static int bounce_check(const float *p, bcl_error *e)
{
    if (!(p[P_DT] > 0.0f && isfinite(p[P_DT])))
        return bcl_fail(e, BCL_EXIT_INPUT, "--dt: %.9g is out of range: expected a number > 0",
                        (double)p[P_DT]);
    if (!isfinite(p[P_G]))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--gravity: %.9g is out of range: expected a finite "
                        "number",
                        (double)p[P_G]);
    for (int i = P_W; i <= P_H; i++)
        if (!(p[i] > 0.0f && p[i] <= BOUNCE_MAX_BOX))
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "--box: %.9g,%.9g is out of range: expected a width and a height, "
                            "each > 0 and <= 1e38",
                            (double)p[P_W], (double)p[P_H]);
    if (!(p[P_E] >= 0.0f && p[P_E] <= 1.0f))
        return bcl_fail(e, BCL_EXIT_INPUT, "--restitution: %.9g is out of range: expected 0 to 1",
                        (double)p[P_E]);
    float gdt = p[P_G] * p[P_DT]; /* the float32 product the step adds */
    if (!(fabsf(gdt) <= BOUNCE_MAX_GDT))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--gravity, --dt: g*dt = %.9g is too large: expected |g*dt| <= 1e30, so "
                        "that velocities stay finite",
                        (double)gdt);
    return BCL_OK;
}

/* PRNG draws per ball: four bcl_rng_uniform, or four bcl_rng_mixed of two each. */
#define DRAWS_SEED   4
#define DRAWS_RANDOM 8

static void bounce_init(float *s, size_t first, size_t n, bcl_init how, uint64_t seed,
                        const float *p)
{
    bcl_rng r;
    bcl_rng_seed_at(&r, seed, (uint64_t)first * (how == BCL_INIT_SEED ? DRAWS_SEED : DRAWS_RANDOM));
    for (size_t i = 0; i < n; i++) {
        float *b = s + 4 * i;
        if (how == BCL_INIT_SEED) {
            /* Uniform in the box, velocities uniform in [-200, 200). */
            b[0] = bcl_rng_uniform(&r, 0.0f, p[P_W]);
            b[1] = bcl_rng_uniform(&r, 0.0f, p[P_H]);
            b[2] = bcl_rng_uniform(&r, -200.0f, 200.0f);
            b[3] = bcl_rng_uniform(&r, -200.0f, 200.0f);
        } else {
            /* Positions of both signs up to 4096 (inside and outside the
             * default box), speeds up to 2^20 (a ball may cross the box
             * several times in a step): every branch is taken, in every
             * combination. */
            b[0] = bcl_rng_mixed(&r, -8, 12);
            b[1] = bcl_rng_mixed(&r, -8, 12);
            b[2] = bcl_rng_mixed(&r, -8, 20);
            b[3] = bcl_rng_mixed(&r, -8, 20);
        }
    }
}

/* The reference, written exactly as docs/MODELS.md. With FLT_EVAL_METHOD == 0 and
 * -ffp-contract=off each operator is one rounded float32 operation;
 * -vx * e is (-vx) * e, 2.0f * w is exact, and the clamps are comparisons. */
static void bounce_reference(float *s, size_t n, uint64_t steps, const float *p)
{
    const float dt = p[P_DT], g = p[P_G], w = p[P_W], h = p[P_H], e = p[P_E];
    for (size_t i = 0; i < n; i++) {
        float x = s[4 * i], y = s[4 * i + 1], vx = s[4 * i + 2], vy = s[4 * i + 3];
        for (uint64_t k = 0; k < steps; k++) {
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
        }
        s[4 * i] = x;
        s[4 * i + 1] = y;
        s[4 * i + 2] = vx;
        s[4 * i + 3] = vy;
    }
}

static void bounce_box(const float *p, float box[4])
{
    box[0] = 0.0f;
    box[1] = 0.0f;
    box[2] = p[P_W];
    box[3] = p[P_H];
}

const bcl_model bcl_model_bounce = {
    .name = "bounce",
    .summary = "balls in a box under gravity, reflected at the walls",
    .kernel_file = "bounce.cl",
    .params = bounce_params,
    .nparams = sizeof bounce_params / sizeof bounce_params[0],
    /* g*dt, vx*dt, vy*dt and their three additions; the eight comparisons
     * and the taken reflections are not counted. */
    .flops_per_step = 6,
    /* The branch-free step of cl/bounce.cl's wide variants: 3 adds, 2
     * multiplies by dt; per wall a comparison, the reflected position (a
     * negation or a subtraction), the reflected velocity (a multiply) and
     * two selections (4 x 5); per clamp a comparison and a selection
     * (4 x 2). */
    .ops_per_step = 33,
    /* A step is a chain some 20 operations deep, and a set needs 4
     * registers beside 9 constants: two sets fill AVX2's 16 registers. */
    .cpu_sets = 2,
    .check = bounce_check,
    .init = bounce_init,
    .reference = bounce_reference,
    .box = bounce_box,
};
