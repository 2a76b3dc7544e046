/*
 * The project's documented PRNG: SplitMix64 (Steele, Lea and Flood, "Fast
 * splittable pseudorandom number generators", OOPSLA 2014). It is a few
 * integer operations, so every machine produces the same sequence, and the
 * floats built from it are assembled from bits, never from libm.
 */
#include "models/rng.h"

#include <string.h>

void bcl_rng_seed(bcl_rng *r, uint64_t seed)
{
    r->s = seed;
}

/* The Weyl sequence's increment (the golden ratio in 64 bits). */
#define GAMMA 0x9e3779b97f4a7c15ull

void bcl_rng_seed_at(bcl_rng *r, uint64_t seed, uint64_t draws)
{
    /* Unsigned arithmetic wraps modulo 2^64, as the state does. */
    r->s = seed + draws * GAMMA;
}

uint64_t bcl_rng_next(bcl_rng *r)
{
    uint64_t z = (r->s += GAMMA);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint32_t bcl_rng_below(bcl_rng *r, uint32_t bound)
{
    /* Lemire's multiply-shift: the bias is below bound / 2^32, far under
     * anything a ball state could show. */
    return (uint32_t)(((bcl_rng_next(r) >> 32) * (uint64_t)bound) >> 32);
}

float bcl_rng_uniform(bcl_rng *r, float lo, float hi)
{
    /* 24 random bits are exactly representable, so u is exact in [0, 1). */
    float u = (float)(bcl_rng_next(r) >> 40) * 0x1.0p-24f;
    return lo + (hi - lo) * u;
}

float bcl_rng_mixed(bcl_rng *r, int emin, int emax)
{
    uint64_t bits = bcl_rng_next(r);
    uint32_t sign = (uint32_t)(bits >> 63) << 31;
    uint32_t mant = (uint32_t)(bits >> 20) & 0x7fffffu;
    int span = emax - emin + 1;
    int exp = emin + (int)bcl_rng_below(r, (uint32_t)span);
    uint32_t word = sign | ((uint32_t)(exp + 127) << 23) | mant;
    float f;
    memcpy(&f, &word, sizeof f);
    return f;
}

void bcl_rng_fill(uint64_t seed, void *buf, size_t bytes)
{
    bcl_rng r;
    bcl_rng_seed(&r, seed);
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        uint64_t x = bcl_rng_next(&r);
        memcpy((char *)buf + i, &x, 8);
    }
}
