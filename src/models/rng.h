/* The deterministic PRNG of the models' initial states and of the tests. */
#ifndef BALLCL_RNG_H
#define BALLCL_RNG_H

#include <stddef.h>
#include <stdint.h>

/* SplitMix64 (Steele, Lea, Flood 2014): same sequence on every machine. */
typedef struct bcl_rng {
    uint64_t s;
} bcl_rng;
void bcl_rng_seed(bcl_rng *r, uint64_t seed);
/* The generator seeded with seed after `draws` calls of bcl_rng_next, in
 * O(1): SplitMix64's state after d draws is seed + d * gamma. */
void bcl_rng_seed_at(bcl_rng *r, uint64_t seed, uint64_t draws);
uint64_t bcl_rng_next(bcl_rng *r);
/* Fills the whole 8-byte words of buf (bytes long) with draws of the
 * generator seeded with seed: the pseudo-random bits of the bandwidth
 * figures, which a GPU that compresses memory cannot squeeze. */
void bcl_rng_fill(uint64_t seed, void *buf, size_t bytes);
/* Uniform integer in [0, bound), by the multiply-shift of the top 32 bits. */
uint32_t bcl_rng_below(bcl_rng *r, uint32_t bound);
/* Uniform float in [lo, hi) built from 24 random bits. */
float bcl_rng_uniform(bcl_rng *r, float lo, float hi);
/* Finite, normal float of random sign with exponent in [emin, emax]. */
float bcl_rng_mixed(bcl_rng *r, int emin, int emax);

#endif
