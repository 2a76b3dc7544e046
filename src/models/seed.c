/*
 * The seed model (docs/MODELS.md): the update of the program ballcl grew from.
 */
#include "model_impl.h"

/* PRNG draws per ball: two bcl_rng_below, or four bcl_rng_mixed of two each. */
#define DRAWS_SEED   2
#define DRAWS_RANDOM 8

static void seed_init(float *s, size_t first, size_t n, bcl_init how, uint64_t seed, const float *p)
{
    (void)p;
    bcl_rng r;
    bcl_rng_seed_at(&r, seed, (uint64_t)first * (how == BCL_INIT_SEED ? DRAWS_SEED : DRAWS_RANDOM));
    for (size_t i = 0; i < n; i++) {
        float *b = s + 4 * i;
        if (how == BCL_INIT_SEED) {
            /* The seed's data: integer grid positions in an 800x600 window. */
            b[0] = (float)bcl_rng_below(&r, 100) * 800.0f;
            b[1] = (float)bcl_rng_below(&r, 100) * 600.0f;
            b[2] = 1.0f;
            b[3] = 0.0f;
        } else {
            /* Mixed sign and magnitude, w never zero: a kernel that drops a
             * term or uses the new z for x gives different bits. */
            for (int c = 0; c < 4; c++)
                b[c] = bcl_rng_mixed(&r, -6, 14);
        }
    }
}

/* The reference, as plainly as it can be written. */
static void seed_reference(float *s, size_t n, uint64_t steps, const float *p)
{
    (void)p;
    for (size_t i = 0; i < n; i++) {
        float x = s[4 * i], y = s[4 * i + 1], z = s[4 * i + 2], w = s[4 * i + 3];
        for (uint64_t k = 0; k < steps; k++) {
            x = x + z;
            y = y + w;
            z = z + w;
        }
        s[4 * i] = x;
        s[4 * i + 1] = y;
        s[4 * i + 2] = z;
    }
}

const bcl_model bcl_model_seed = {
    .name = "seed",
    .summary = "x += z; y += w; z += w (the seed's update)",
    .kernel_file = "seed.cl",
    .flops_per_step = 3,
    .ops_per_step = 3,
    /* A step of a set is one add deep: four sets give 12 adds in flight,
     * where two pipes of latency 3 or 4 need 6 to 8 (cl/seed.cl). */
    .cpu_sets = 4,
    .init = seed_init,
    .reference = seed_reference,
};
