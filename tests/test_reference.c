/*
 * Unit tests of the seed model's C reference (docs/MODELS.md) on hand-computed
 * cases, of the chunked parallel validation (docs/DESIGN.md) against the plain
 * reference over the whole array, and of the comparison rules: bitwise by
 * default, ULP distances, tolerance, a NaN equal to any NaN and to no number, first mismatches
 * reported in ball order.
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

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static const bcl_model *seed_model(void)
{
    const bcl_model *m = bcl_model_find("seed");
    assert_non_null(m);
    return m;
}

/* Asserts ball i of s has exactly the bits of want. */
static void expect_ball(const float *s, size_t i, float x, float y, float z, float w)
{
    const float want[4] = {x, y, z, w};
    for (int c = 0; c < 4; c++)
        if (bits(s[4 * i + c]) != bits(want[c]))
            fail_msg("ball %zu component %d: got %a, want %a", i, c, (double)s[4 * i + c],
                     (double)want[c]);
}

/* ---- the reference ------------------------------------------------------- */

static void test_reference_hand_computed(void **unused)
{
    (void)unused;
    const bcl_model *m = seed_model();
    float s[] = {
        /* (1, 2, 3, 4): by hand, one step (4, 6, 7, 4), two (11, 10, 11, 4),
         * three (22, 14, 15, 4). Using the new z for x would give x = 8 after
         * one step and 8 + 11 = 19 after two. */
        1,
        2,
        3,
        4,
        /* The seed's data: w = 0, so y and z never move; x += 1. */
        800,
        600,
        1,
        0,
        /* float32 rounding: 2^24 + 1 is a tie and rounds to even (2^24), so x
         * sticks at 2^24, where exact (or double) arithmetic would reach
         * 2^24 + 3. */
        16777216.0f,
        0,
        1,
        0,
        /* Signed zeros: -0 + -0 = -0, and -0 + +0 = +0 (round to nearest). */
        -0.0f,
        -0.0f,
        -0.0f,
        -0.0f,
        -0.0f,
        0.0f,
        0.0f,
        -0.0f,
        /* Fractions: each sum is rounded to float32 (worked out by hand and
         * checked with numpy.float32). */
        0.5f,
        -3.0f,
        0.1f,
        0.2f,
    };
    enum { N = sizeof s / sizeof s[0] / 4 };
    float orig[N * 4];
    memcpy(orig, s, sizeof s);

    m->reference(s, N, 0, NULL);
    assert_memory_equal(s, orig, sizeof s); /* zero steps change nothing */

    m->reference(s, N, 1, NULL);
    expect_ball(s, 0, 4, 6, 7, 4);
    expect_ball(s, 1, 801, 600, 1, 0);
    expect_ball(s, 2, 16777216.0f, 0, 1, 0);
    expect_ball(s, 3, -0.0f, -0.0f, -0.0f, -0.0f);
    expect_ball(s, 4, 0.0f, 0.0f, 0.0f, -0.0f);
    /* 0.1f = 0x1.99999ap-4 and 0.2f = 0x1.99999ap-3, so x = 0.5 + 0.1f =
     * 0x1.333334p-1 (0x1.3333334p-1 rounded), y = -3 + 0.2f = -0x1.666666p+1
     * (-0x1.6666666p+1 rounded), z = 0.1f + 0.2f = 0x1.333334p-2 (from
     * 0x1.3333338p-2 rounded up). */
    expect_ball(s, 5, 0x1.333334p-1f, -0x1.666666p+1f, 0x1.333334p-2f, 0.2f);

    m->reference(s, N, 1, NULL);
    expect_ball(s, 0, 11, 10, 11, 4);
    expect_ball(s, 1, 802, 600, 1, 0);
    expect_ball(s, 2, 16777216.0f, 0, 1, 0);

    /* Steps compose: 3 at once equals 1 then 2. */
    float t[N * 4];
    memcpy(t, orig, sizeof t);
    m->reference(t, N, 3, NULL);
    m->reference(s, N, 1, NULL);
    assert_memory_equal(s, t, sizeof s);
    expect_ball(t, 0, 22, 14, 15, 4);
    expect_ball(t, 2, 16777216.0f, 0, 1, 0);
}

/* An independent step-major formulation (all balls one step, then the next),
 * written from docs/MODELS.md rather than copied from the model. */
static void step_major(float *s, size_t n, uint64_t steps)
{
    for (uint64_t k = 0; k < steps; k++) {
        for (size_t i = 0; i < n; i++) {
            float *b = s + 4 * i;
            float x = b[0], y = b[1], z = b[2], w = b[3];
            b[0] = x + z;
            b[1] = y + w;
            b[2] = z + w;
        }
    }
}

static void test_reference_matches_step_major(void **unused)
{
    (void)unused;
    const bcl_model *m = seed_model();
    enum { N = 5000, STEPS = 37 };
    float *a = malloc(N * 4 * sizeof(float)), *b = malloc(N * 4 * sizeof(float));
    assert_non_null(a);
    assert_non_null(b);
    m->init(a, 0, N, BCL_INIT_RANDOM, 77, NULL);
    memcpy(b, a, N * 4 * sizeof(float));
    m->reference(a, N, STEPS, NULL);
    step_major(b, N, STEPS);
    assert_memory_equal(a, b, N * 4 * sizeof(float));
    /* Random data really moves: x, y and z change, w does not. */
    float *c = malloc(N * 4 * sizeof(float));
    assert_non_null(c);
    m->init(c, 0, N, BCL_INIT_RANDOM, 77, NULL);
    size_t moved = 0;
    for (size_t i = 0; i < N; i++) {
        moved += bits(a[4 * i]) != bits(c[4 * i]);
        assert_int_equal(bits(a[4 * i + 3]), bits(c[4 * i + 3]));
    }
    assert_true(moved > N / 2);
    free(a);
    free(b);
    free(c);
}

/* ---- validation ---------------------------------------------------------- */

enum { BIG_N = 3 * 65536 + 4321, BIG_STEPS = 9 };

static void test_validate_chunked_equals_plain(void **unused)
{
    (void)unused;
    const bcl_model *m = seed_model();
    /* Several host threads even on a one-core machine, so that chunks finish
     * out of order and the ordered merge is exercised. */
    omp_set_num_threads(4);
    size_t bytes = (size_t)BIG_N * 4 * sizeof(float);
    float *init = malloc(bytes), *want = malloc(bytes), *keep = malloc(bytes);
    assert_non_null(init);
    assert_non_null(want);
    assert_non_null(keep);
    m->init(init, 0, BIG_N, BCL_INIT_RANDOM, 2024, NULL);
    memcpy(keep, init, bytes);
    memcpy(want, init, bytes);
    m->reference(want, BIG_N, BIG_STEPS, NULL); /* plain, one pass, whole array */

    bcl_validation v;
    bcl_error e = {0};
    assert_int_equal(bcl_validate(m, NULL, init, want, BIG_N, BIG_STEPS, 0, &v, &e), BCL_OK);
    assert_int_equal(v.compared, (uint64_t)BIG_N * 4);
    assert_int_equal(v.mismatches, 0);
    assert_int_equal(v.max_ulp, 0);
    assert_int_equal(v.nreported, 0);
    assert_memory_equal(init, keep, bytes); /* init is left unchanged */

    /* Wrong step count: almost everything differs. */
    assert_int_equal(bcl_validate(m, NULL, init, want, BIG_N, BIG_STEPS - 1, 0, &v, &e), BCL_OK);
    assert_true(v.mismatches > (uint64_t)BIG_N);
    assert_int_equal(v.nreported, BCL_MAX_REPORTED_MISMATCHES);
    for (size_t i = 0; i < v.nreported; i++)
        assert_int_equal(v.first[i].ball, i); /* ball 0, 1, 2, ... in order */

    /* Seven damaged balls spread over the chunks, in a shuffled order of
     * damage: the five reported are the five lowest, in ball order, with
     * both values. */
    static const size_t bad[] = {150000, 3, 65536, 200000, 65535, 131072, 70000};
    for (size_t k = 0; k < 7; k++)
        want[4 * bad[k] + (k % 3)] = nextafterf(want[4 * bad[k] + (k % 3)], INFINITY);
    assert_int_equal(bcl_validate(m, NULL, init, want, BIG_N, BIG_STEPS, 0, &v, &e), BCL_OK);
    assert_int_equal(v.mismatches, 7);
    assert_int_equal(v.max_ulp, 1);
    assert_int_equal(v.nreported, 5);
    static const size_t order[] = {3, 65535, 65536, 70000, 131072};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(v.first[i].ball, order[i]);
        assert_memory_equal(v.first[i].got, want + 4 * order[i], sizeof v.first[i].got);
        assert_memory_not_equal(v.first[i].want, v.first[i].got, sizeof v.first[i].got);
    }
    /* With a 1-ULP tolerance they all pass. */
    assert_int_equal(bcl_validate(m, NULL, init, want, BIG_N, BIG_STEPS, 1, &v, &e), BCL_OK);
    assert_int_equal(v.mismatches, 0);
    assert_int_equal(v.max_ulp, 1);
    assert_memory_equal(init, keep, bytes);
    free(init);
    free(want);
    free(keep);
}

typedef struct {
    uint64_t done[64];
    size_t n;
} steps_seen;

static void note_steps(void *arg, uint64_t done, uint64_t steps)
{
    steps_seen *s = arg;
    assert_int_equal(steps, 600);
    if (s->n < 64)
        s->done[s->n++] = done;
}

/* With a progress hook the reference goes a slice of steps at a time: the
 * same verdict, and steps done that grow to the total, the end once. */
static void test_validate_progress(void **unused)
{
    (void)unused;
    const bcl_model *m = seed_model();
    omp_set_num_threads(2);
    size_t n = 2 * 65536 + 100, bytes = n * 4 * sizeof(float);
    float *init = malloc(bytes), *want = malloc(bytes);
    assert_non_null(init);
    assert_non_null(want);
    m->init(init, 0, n, BCL_INIT_RANDOM, 7, NULL);
    memcpy(want, init, bytes);
    m->reference(want, n, 600, NULL);
    steps_seen seen = {0};
    bcl_validate_progress(note_steps, &seen, 0);
    bcl_validation v;
    bcl_error e = {0};
    assert_int_equal(bcl_validate(m, NULL, init, want, n, 600, 0, &v, &e), BCL_OK);
    bcl_validate_progress(NULL, NULL, 0);
    assert_int_equal(v.mismatches, 0);
    assert_int_equal(v.compared, (uint64_t)n * 4);
    assert_true(seen.n > 2);
    for (size_t i = 1; i < seen.n; i++)
        assert_true(seen.done[i] > seen.done[i - 1]);
    assert_int_equal(seen.done[seen.n - 1], 600);
    free(init);
    free(want);
}

/* ---- comparison rules ------------------------------------------------------ */

static void test_ulp_distance(void **unused)
{
    (void)unused;
    assert_int_equal(bcl_ulp_distance(1.0f, 1.0f), 0);
    assert_int_equal(bcl_ulp_distance(1.0f, nextafterf(1.0f, 2.0f)), 1);
    assert_int_equal(bcl_ulp_distance(nextafterf(1.0f, 0.0f), 1.0f), 1);
    assert_int_equal(bcl_ulp_distance(-1.0f, nextafterf(-1.0f, -2.0f)), 1);
    assert_int_equal(bcl_ulp_distance(1.0f, 2.0f), 1u << 23);
    /* +0 and -0 are the same point of the line. */
    assert_int_equal(bcl_ulp_distance(0.0f, -0.0f), 0);
    /* Across zero: the smallest denormals of either sign are 2 apart. */
    float tiny = from_bits(1);
    assert_int_equal(bcl_ulp_distance(0.0f, tiny), 1);
    assert_int_equal(bcl_ulp_distance(-tiny, tiny), 2);
    assert_int_equal(bcl_ulp_distance(-0.0f, tiny), 1);
    /* FLT_MAX to infinity is one step; the far ends of the line are far. */
    assert_int_equal(bcl_ulp_distance(FLT_MAX, INFINITY), 1);
    assert_int_equal(bcl_ulp_distance(-INFINITY, INFINITY), 2 * (uint64_t)0x7f800000);
    /* The same bits are never apart, nor two NaNs of any payload or sign;
     * a NaN and a number are as far apart as can be. */
    assert_int_equal(bcl_ulp_distance(NAN, NAN), 0);
    assert_int_equal(bcl_ulp_distance(NAN, -NAN), 0);
    assert_int_equal(bcl_ulp_distance(NAN, from_bits(0x7f800001u)), 0);
    assert_int_equal(bcl_ulp_distance(NAN, 1.0f), UINT64_MAX);
    assert_int_equal(bcl_ulp_distance(1.0f, -NAN), UINT64_MAX);
}

/* Compares one ball (want, got) with tolerance tol and returns the result. */
static bcl_validation compare1(const float want[4], const float got[4], uint64_t tol)
{
    bcl_validation v;
    memset(&v, 0, sizeof v);
    bcl_compare(want, got, 1, 0, tol, &v);
    assert_int_equal(v.compared, 4);
    return v;
}

static void test_compare_rules(void **unused)
{
    (void)unused;
    const float a[4] = {1, 2, 3, 4};
    bcl_validation v = compare1(a, a, 0);
    assert_int_equal(v.mismatches, 0);
    assert_int_equal(v.nreported, 0);

    /* +0 against -0: 0 ULP apart, yet a bitwise mismatch. */
    const float pz[4] = {0.0f, 1, 1, 1}, nz[4] = {-0.0f, 1, 1, 1};
    v = compare1(pz, nz, 0);
    assert_int_equal(v.mismatches, 1);
    assert_int_equal(v.max_ulp, 0);
    assert_int_equal(v.nreported, 1);
    v = compare1(pz, nz, 1); /* a tolerance accepts it */
    assert_int_equal(v.mismatches, 0);

    /* A NaN equals any NaN, whatever its payload and sign (OpenCL leaves
     * them to the implementation; an overflow the device and the reference
     * both reach is no mismatch, 'ballcl run' reports it as an overflow).
     * A NaN against a number never passes, with any tolerance; the largest
     * distance says NaN (UINT64_MAX). */
    const float qn[4] = {NAN, 1, 1, 1}, nqn[4] = {-NAN, 1, 1, 1};
    const float pn[4] = {from_bits(0x7fc00123u), 1, 1, 1};
    v = compare1(qn, qn, 0);
    assert_int_equal(v.mismatches, 0);
    assert_int_equal(v.max_ulp, 0);
    v = compare1(qn, nqn, 0);
    assert_int_equal(v.mismatches, 0);
    v = compare1(pn, qn, 0);
    assert_int_equal(v.mismatches, 0);
    assert_int_equal(v.max_ulp, 0);
    v = compare1(a, qn, 1u << 30);
    assert_int_equal(v.mismatches, 1);
    v = compare1(qn, a, 1u << 30);
    assert_int_equal(v.mismatches, 1);

    /* Adjacent floats: 1 ULP, a mismatch bitwise, accepted from tol 1. */
    float adj[4] = {1, 2, 3, 4};
    adj[2] = nextafterf(3.0f, 4.0f);
    v = compare1(a, adj, 0);
    assert_int_equal(v.mismatches, 1);
    assert_int_equal(v.max_ulp, 1);
    v = compare1(a, adj, 1);
    assert_int_equal(v.mismatches, 0);
    assert_int_equal(v.max_ulp, 1);

    /* Tolerance is inclusive: 3 ULP fails at 2, passes at 3. */
    float far[4] = {1, 2, 3, 4};
    far[0] = from_bits(bits(1.0f) + 3);
    far[3] = from_bits(bits(4.0f) - 2);
    v = compare1(a, far, 2);
    assert_int_equal(v.mismatches, 1);
    assert_int_equal(v.max_ulp, 3);
    v = compare1(a, far, 3);
    assert_int_equal(v.mismatches, 0);
    v = compare1(a, far, 0);
    assert_int_equal(v.mismatches, 2); /* floats, not balls, are counted */
    assert_int_equal(v.nreported, 1);
}

static void test_compare_reports_in_order(void **unused)
{
    (void)unused;
    enum { N = 20 };
    float want[N * 4], got[N * 4];
    for (size_t i = 0; i < N * 4; i++)
        want[i] = got[i] = (float)i;
    static const size_t bad[] = {2, 5, 6, 11, 13, 17, 19};
    for (size_t k = 0; k < 7; k++)
        got[4 * bad[k] + 1] += 1.0f;
    bcl_validation v;
    memset(&v, 0, sizeof v);
    /* As bcl_validate does: chunks accumulate into one report, and the ball
     * numbers carry the chunk's offset. */
    bcl_compare(want, got, 10, 1000, 0, &v);
    bcl_compare(want + 40, got + 40, 10, 1010, 0, &v);
    assert_int_equal(v.compared, N * 4);
    assert_int_equal(v.mismatches, 7);
    assert_int_equal(v.nreported, BCL_MAX_REPORTED_MISMATCHES);
    for (size_t i = 0; i < BCL_MAX_REPORTED_MISMATCHES; i++) {
        assert_int_equal(v.first[i].ball, 1000 + bad[i]);
        assert_memory_equal(v.first[i].want, want + 4 * bad[i], sizeof v.first[i].want);
        assert_memory_equal(v.first[i].got, got + 4 * bad[i], sizeof v.first[i].got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_hand_computed),
        cmocka_unit_test(test_reference_matches_step_major),
        cmocka_unit_test(test_validate_chunked_equals_plain),
        cmocka_unit_test(test_validate_progress),
        cmocka_unit_test(test_ulp_distance),
        cmocka_unit_test(test_compare_rules),
        cmocka_unit_test(test_compare_reports_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
