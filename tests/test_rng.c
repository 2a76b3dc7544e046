/*
 * Unit tests of the project's PRNG (SplitMix64, src/models/rng.c) and of the seed
 * model's initial states built from it (docs/MODELS.md: the same bits on every
 * machine). The golden values were computed outside this project, with
 * Python's arbitrary-precision integers reduced mod 2^64, from the published
 * algorithm (Steele, Lea, Flood 2014); the seed 0 and 1234567 sequences also
 * match the test vectors published with other SplitMix64 implementations.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "run/run.h"
#include "measure/timing.h"
#include "models/rng.h"
#include "files/files.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

static void test_splitmix64_golden(void **unused)
{
    (void)unused;
    static const uint64_t seed0[] = {0xe220a8397b1dcdafull, 0x6e789e6aa1b965f4ull,
                                     0x06c45d188009454full, 0xf88bb8a8724c81ecull,
                                     0x1b39896a51a8749bull};
    static const uint64_t seed1234567[] = {6457827717110365317ull, 3203168211198807973ull,
                                           9817491932198370423ull, 4593380528125082431ull,
                                           16408922859458223821ull};
    bcl_rng r;
    bcl_rng_seed(&r, 0);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(bcl_rng_next(&r), seed0[i]);
    bcl_rng_seed(&r, 1234567);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(bcl_rng_next(&r), seed1234567[i]);
    /* Seeding again restarts the sequence. */
    bcl_rng_seed(&r, 0);
    assert_int_equal(bcl_rng_next(&r), seed0[0]);
}

static void test_below_golden(void **unused)
{
    (void)unused;
    /* (next >> 32) * bound >> 32, computed in Python. */
    static const uint32_t b100_seed1[] = {56, 74, 97, 44, 44, 76, 87, 52};
    static const uint32_t b7_seed42[] = {5, 1, 1, 2, 0, 6, 1, 5};
    bcl_rng r;
    bcl_rng_seed(&r, 1);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(bcl_rng_below(&r, 100), b100_seed1[i]);
    bcl_rng_seed(&r, 42);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(bcl_rng_below(&r, 7), b7_seed42[i]);
}

static void test_below_range(void **unused)
{
    (void)unused;
    static const uint32_t bounds[] = {1, 2, 3, 7, 100, 65537, 0x80000001u, UINT32_MAX};
    bcl_rng r;
    bcl_rng_seed(&r, 99);
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
        uint32_t hi = 0;
        for (int i = 0; i < 20000; i++) {
            uint32_t v = bcl_rng_below(&r, bounds[b]);
            if (v >= bounds[b])
                fail_msg("bcl_rng_below(%u) gave %u", bounds[b], v);
            if (v > hi)
                hi = v;
        }
        if (bounds[b] == 1)
            assert_int_equal(hi, 0);
        else /* the top of the range is reached (or nearly, for huge bounds) */
            assert_true(hi >= bounds[b] - 1 - bounds[b] / 1000);
    }
    /* Every value of a small range, close to evenly: 100000 draws over 10
     * values is 10000 each, binomial sd ~95; the sequence is fixed, so this
     * cannot flake. */
    unsigned count[10] = {0};
    bcl_rng_seed(&r, 5);
    for (int i = 0; i < 100000; i++)
        count[bcl_rng_below(&r, 10)]++;
    for (int v = 0; v < 10; v++)
        assert_in_range(count[v], 9500, 10500);
}

static void test_uniform(void **unused)
{
    (void)unused;
    bcl_rng r;
    bcl_rng_seed(&r, 3);
    float lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < 100000; i++) {
        float v = bcl_rng_uniform(&r, -200.0f, 200.0f);
        assert_true(v >= -200.0f && v < 200.0f);
        lo = fminf(lo, v);
        hi = fmaxf(hi, v);
    }
    assert_true(lo < -199.0f && hi > 199.0f);
}

static void test_mixed_golden(void **unused)
{
    (void)unused;
    /* sign from bit 63, mantissa from bits 20..42, exponent from the next
     * draw: below(emax - emin + 1). */
    static const uint32_t seed1[] = {0xc45ec890, 0xc12eefb3, 0x44cd8d10, 0xc1c6cd73,
                                     0x448de357, 0x42c77015, 0x4278a4ba, 0x3e5ae6f4};
    static const uint32_t seed7_full[] = {0x029e4593, 0xca880bab, 0x203666a1, 0x2a4a133c};
    bcl_rng r;
    bcl_rng_seed(&r, 1);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(bits(bcl_rng_mixed(&r, -6, 14)), seed1[i]);
    bcl_rng_seed(&r, 7);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(bits(bcl_rng_mixed(&r, -126, 127)), seed7_full[i]);
}

static void test_mixed_finite_normal(void **unused)
{
    (void)unused;
    static const int ranges[][2] = {{-6, 14}, {-126, 127}, {0, 0}, {-126, -126}, {127, 127}};
    bcl_rng r;
    bcl_rng_seed(&r, 11);
    for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
        int emin = ranges[k][0], emax = ranges[k][1];
        unsigned neg = 0, seen_lo = 0, seen_hi = 0;
        for (int i = 0; i < 20000; i++) {
            float v = bcl_rng_mixed(&r, emin, emax);
            if (!isfinite(v) || !isnormal(v))
                fail_msg("mixed(%d, %d) gave %a", emin, emax, (double)v);
            int e;
            frexpf(v, &e); /* v = m * 2^e with 0.5 <= |m| < 1 */
            int exp = e - 1;
            if (exp < emin || exp > emax)
                fail_msg("mixed(%d, %d) gave %a, exponent %d", emin, emax, (double)v, exp);
            neg += v < 0;
            seen_lo += exp == emin;
            seen_hi += exp == emax;
        }
        /* Both signs, and both ends of the exponent range, occur. */
        assert_in_range(neg, 9000, 11000);
        assert_true(seen_lo > 0 && seen_hi > 0);
    }
}

static void test_seed_model_init(void **unused)
{
    (void)unused;
    const bcl_model *m = bcl_model_find("seed");
    assert_non_null(m);
    assert_ptr_equal(bcl_models[0], m); /* the default is first in the table */
    assert_null(bcl_model_find("nope"));
    assert_null(bcl_model_find("Seed"));
    assert_int_equal(bcl_model_param_floats(m), 0);

    /* --init seed --seed 1: x = below(100) * 800, y = below(100) * 600,
     * z = 1, w = 0 (golden values from the Python SplitMix64). */
    enum { N = 3000 };
    static float s[N * 4], again[N * 4];
    m->init(s, 0, N, BCL_INIT_SEED, 1, NULL);
    static const float first[3][4] = {
        {44800, 44400, 1, 0}, {77600, 26400, 1, 0}, {35200, 45600, 1, 0}};
    assert_memory_equal(s, first, sizeof first);
    for (size_t i = 0; i < N; i++) {
        float x = s[4 * i], y = s[4 * i + 1];
        assert_true(x >= 0 && x <= 99 * 800 && fmodf(x, 800.0f) == 0);
        assert_true(y >= 0 && y <= 99 * 600 && fmodf(y, 600.0f) == 0);
        assert_int_equal(bits(s[4 * i + 2]), bits(1.0f));
        assert_int_equal(bits(s[4 * i + 3]), bits(0.0f));
    }
    /* Deterministic from the seed; another seed gives another state. */
    m->init(again, 0, N, BCL_INIT_SEED, 1, NULL);
    assert_memory_equal(s, again, sizeof s);
    m->init(again, 0, N, BCL_INIT_SEED, 2, NULL);
    assert_memory_not_equal(s, again, sizeof s);

    /* --init random: four mixed(-6, 14) draws per ball, w never zero. */
    static const uint32_t rnd[8] = {0xc45ec890, 0xc12eefb3, 0x44cd8d10, 0xc1c6cd73,
                                    0x448de357, 0x42c77015, 0x4278a4ba, 0x3e5ae6f4};
    m->init(s, 0, N, BCL_INIT_RANDOM, 1, NULL);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(bits(s[i]), rnd[i]);
    unsigned neg_w = 0;
    for (size_t i = 0; i < N * 4; i++)
        assert_true(isnormal(s[i]));
    for (size_t i = 0; i < N; i++)
        neg_w += s[4 * i + 3] < 0;
    assert_in_range(neg_w, N / 2 - 150, N / 2 + 150);
    m->init(again, 0, N, BCL_INIT_RANDOM, 1, NULL);
    assert_memory_equal(s, again, sizeof s);
}

/* A slice filled on its own (first > 0) has the bits of the same balls of
 * one fill from ball 0, for every model and init: a run split over devices
 * (or ranks) gives a single run's initial state. */
static void test_init_slices(void **unused)
{
    (void)unused;
    enum { N = 1001 };
    static float whole[N * 4], part[N * 4];
    static const size_t cuts[] = {0, 1, 16, 333, 1000};
    bcl_rng a, b;
    bcl_rng_seed(&a, 9);
    for (int i = 0; i < 77; i++)
        bcl_rng_next(&a);
    bcl_rng_seed_at(&b, 9, 77);
    assert_true(bcl_rng_next(&a) == bcl_rng_next(&b));
    for (size_t mi = 0; mi < bcl_model_count; mi++) {
        const bcl_model *m = bcl_models[mi];
        float p[BCL_MAX_PARAMS];
        bcl_model_param_defaults(m, p);
        for (int how = 0; how < 2; how++) {
            bcl_init init = how ? BCL_INIT_RANDOM : BCL_INIT_SEED;
            m->init(whole, 0, N, init, 12345, p);
            for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
                size_t first = cuts[c];
                memset(part, 0, sizeof part);
                m->init(part + 4 * first, first, N - first, init, 12345, p);
                assert_memory_equal(part + 4 * first, whole + 4 * first,
                                    (N - first) * 4 * sizeof(float));
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_splitmix64_golden), cmocka_unit_test(test_below_golden),
        cmocka_unit_test(test_below_range),       cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_mixed_golden),      cmocka_unit_test(test_mixed_finite_normal),
        cmocka_unit_test(test_seed_model_init),   cmocka_unit_test(test_init_slices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
