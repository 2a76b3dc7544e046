/*
 * Unit tests of the bounce model's C side (docs/MODELS.md), no device needed:
 * hand-computed steps for every wall, every corner, a ball that crosses the
 * box in one step and signed zeros; the parameter checks; balls staying in
 * the box with finite velocities for parameters at every limit and states of
 * any magnitude; K steps at once equal to K single steps; the initialisers.
 *
 * The hand cases use dt = 0.5, g = 2, W = 10, H = 8, e = 0.5: every value is
 * exact in binary, so the expected numbers are worked out on paper.
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
#include <string.h>

static const bcl_model *bounce(void)
{
    const bcl_model *m = bcl_model_find("bounce");
    assert_non_null(m);
    return m;
}

typedef struct hand_case {
    const char *what;
    float in[4], want[4];
} hand_case;

/* dt = 0.5, g = 2, W = 10, H = 8, e = 0.5: vy += 1, then x += vx/2, y += vy/2. */
static const float HAND_P[5] = {0.5f, 2.0f, 10.0f, 8.0f, 0.5f};

static const hand_case HAND[] = {
    {"free flight", {5, 4, 2, -4}, {6, 2.5f, 2, -3}},
    /* x = 1 - 3 = -2: x = 2, vx = 6 * 0.5 */
    {"left wall", {1, 4, -6, -1}, {2, 4, 3, 0}},
    /* x = 9 + 3 = 12: x = 20 - 12, vx = -6 * 0.5 */
    {"right wall", {9, 4, 6, -1}, {8, 4, -3, 0}},
    /* vy = -7, y = 1 - 3.5 = -2.5: y = 2.5, vy = 3.5 */
    {"top wall (y < 0)", {5, 1, 0, -8}, {5, 2.5f, 0, 3.5f}},
    /* vy = 5, y = 7 + 2.5 = 9.5: y = 16 - 9.5, vy = -2.5 */
    {"bottom wall (y > H)", {5, 7, 0, 4}, {5, 6.5f, 0, -2.5f}},
    {"top-left corner", {1, 1, -6, -8}, {2, 2.5f, 3, 3.5f}},
    {"top-right corner", {9, 1, 6, -8}, {8, 2.5f, -3, 3.5f}},
    {"bottom-left corner", {1, 7, -6, 4}, {2, 6.5f, 3, -2.5f}},
    {"bottom-right corner", {9, 7, 6, 4}, {8, 6.5f, -3, -2.5f}},
    /* x = -19: x = 19, vx = 20; then x = 20 - 19 = 1, vx = -10 */
    {"both side walls in one step", {1, 4, -40, -1}, {1, 4, -10, 0}},
    /* x = -29: x = 29, vx = 30; then x = 20 - 29 = -9, vx = -15; clamp x = 0 */
    {"both side walls, clamped", {1, 4, -60, -1}, {0, 4, -15, 0}},
    /* vy = 31, y = 22.5: y = 16 - 22.5 = -6.5, vy = -15.5; clamp y = 0 */
    {"floor then clamp at the top", {5, 7, 0, 30}, {5, 0, 0, -15.5f}},
    /* vy = -39, y = -18.5: y = 18.5, vy = 19.5; y = -2.5, vy = -9.75; clamp */
    {"top wall, floor, clamp", {5, 1, 0, -40}, {5, 0, 0, -9.75f}},
    /* Exactly on a wall is inside: nothing is reflected. */
    {"on the far walls", {10, 8, 0, -1}, {10, 8, 0, 0}},
    {"on the near walls", {0, 0, 0, -1}, {0, 0, 0, 0}},
    /* Far outside, at rest: x = 1000, 20 - 1000 = -980, clamp 0; same for y.
     * vx = (-0) * 0.5 = -0, then (-(-0)) * 0.5 = +0: signed zeros checked. */
    {"far outside", {-1000, 5000, 0, -1}, {0, 0, 0, -0.0f}},
};

static void test_hand_cases(void **state)
{
    (void)state;
    const bcl_model *m = bounce();
    for (size_t i = 0; i < sizeof HAND / sizeof HAND[0]; i++) {
        float s[4];
        memcpy(s, HAND[i].in, sizeof s);
        m->reference(s, 1, 1, HAND_P);
        for (int c = 0; c < 4; c++) {
            if (bits(s[c]) != bits(HAND[i].want[c]))
                fail_msg("%s: component %d: want %.9g (0x%08x) got %.9g (0x%08x)", HAND[i].what, c,
                         (double)HAND[i].want[c], bits(HAND[i].want[c]), (double)s[c], bits(s[c]));
        }
    }
}

/* Restitution 0: a reflected velocity is a zero whose sign is that of -v. */
static void test_restitution_zero_signs(void **state)
{
    (void)state;
    const float p[5] = {0.5f, 2.0f, 10.0f, 8.0f, 0.0f};
    float s[8] = {1, 4, -6, -1, 9, 4, 6, -1};
    bounce()->reference(s, 2, 1, p);
    assert_int_equal(bits(s[0]), bits(2.0f));
    assert_int_equal(bits(s[2]), bits(0.0f)); /* (-(-6)) * 0 = +0 */
    assert_int_equal(bits(s[4]), bits(8.0f));
    assert_int_equal(bits(s[6]), bits(-0.0f)); /* (-6) * 0 = -0 */
}

/* A position that overflows to +-inf is reflected to -inf and clamped to 0:
 * 2*W - inf is -inf, never NaN, because 2*W is finite. */
static void test_position_overflow(void **state)
{
    (void)state;
    const float p[5] = {1.0f, 0.0f, 10.0f, 8.0f, 1.0f};
    float s[8] = {FLT_MAX, 4, FLT_MAX, 0, -FLT_MAX, 4, -FLT_MAX, 0};
    bounce()->reference(s, 2, 1, p);
    /* +inf: one reflection; -inf: two (x = inf, then 2W - inf = -inf). */
    assert_int_equal(bits(s[0]), bits(0.0f));
    assert_int_equal(bits(s[2]), bits(-FLT_MAX));
    assert_int_equal(bits(s[4]), bits(0.0f));
    assert_int_equal(bits(s[6]), bits(-FLT_MAX));
}

static void expect_check_fails(const float *p, const char *words)
{
    bcl_error e = {0};
    int rc = bounce()->check(p, &e);
    if (rc != BCL_EXIT_INPUT || !strstr(e.msg, words))
        fail_msg("check of (%g, %g, %g, %g, %g): rc %d, message '%s', expected '%s'", (double)p[0],
                 (double)p[1], (double)p[2], (double)p[3], (double)p[4], rc, e.msg, words);
}

static void test_check(void **state)
{
    (void)state;
    const bcl_model *m = bounce();
    float p[5];
    bcl_model_param_defaults(m, p);
    bcl_error e = {0};
    assert_int_equal(m->check(p, &e), BCL_OK);
    const float nan = NAN, inf = INFINITY;
    struct {
        int index;
        float value;
        const char *words;
    } bad[] = {
        {0, 0.0f, "--dt"},
        {0, -1.0f, "--dt"},
        {0, nan, "--dt"},
        {0, inf, "--dt"},
        {1, nan, "--gravity"},
        {1, -inf, "--gravity"},
        {2, 0.0f, "--box"},
        {2, -800.0f, "--box"},
        {3, -600.0f, "--box"},
        {3, nan, "--box"},
        {2, 2e38f, "--box"},
        {3, inf, "--box"},
        {4, -0.1f, "--restitution"},
        {4, 1.01f, "--restitution"},
        {4, nan, "--restitution"},
        {1, 1e33f, "g*dt"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        float q[5];
        memcpy(q, p, sizeof q);
        q[bad[i].index] = bad[i].value;
        expect_check_fails(q, bad[i].words);
    }
    /* The edges themselves are accepted. */
    const float edges[][5] = {
        {1e30f, 1.0f, 1e38f, 1e38f, 1.0f},
        {1e10f, -1e20f, 1e-30f, 1e-30f, 0.0f},
        {FLT_MIN, 0.0f, 1.0f, 1.0f, 0.0f},
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        bcl_error_clear(&e);
        assert_int_equal(m->check(edges[i], &e), BCL_OK);
    }
}

static void test_defaults(void **state)
{
    (void)state;
    const bcl_model *m = bounce();
    assert_int_equal(bcl_model_param_floats(m), 5);
    float p[5];
    bcl_model_param_defaults(m, p);
    /* docs/MODELS.md: dt is (float)(1.0 / 60.0), parsed to float directly. */
    assert_int_equal(bits(p[0]), bits((float)(1.0 / 60.0)));
    assert_true(p[1] == 980.0f && p[2] == 800.0f && p[3] == 600.0f && p[4] == 0.9f);
    float box[4];
    m->box(p, box);
    assert_true(box[0] == 0.0f && box[1] == 0.0f && box[2] == 800.0f && box[3] == 600.0f);
}

/* Any finite float: random sign, exponent and mantissa (denormals too). */
static float any_float(bcl_rng *r)
{
    uint32_t u = (uint32_t)bcl_rng_next(r);
    if (((u >> 23) & 0xff) == 0xff)
        u &= ~(1u << 30); /* not inf or NaN */
    return from_bits(u);
}

/* Parameters at every limit, states of any magnitude (inside and far
 * outside the box, speeds up to FLT_MAX): after every step each ball is in
 * the box and its velocity finite. */
static void test_never_leaves_box(void **state)
{
    (void)state;
    const bcl_model *m = bounce();
    const float dts[] = {1e-30f, 1.0f / 60.0f, 1.0f, 1e10f, 1e30f};
    const float boxes[][2] = {{1e-30f, 1e-30f}, {800.0f, 600.0f}, {1e38f, 1e38f}, {1e38f, 1e-30f}};
    const float es[] = {0.0f, 0.9f, 1.0f};
    enum { N = 257, STEPS = 30 };
    static float s[4 * N];
    bcl_rng r;
    bcl_rng_seed(&r, 12345);
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        /* |g*dt| as large as allowed, both ways, and ordinary gravity. */
        float gmax = fminf(1e30f / dts[d], FLT_MAX);
        while (!(fabsf(gmax * dts[d]) <= 1e30f))
            gmax = nextafterf(gmax, 0.0f);
        const float gs[] = {gmax, -gmax, 980.0f};
        for (size_t gi = 0; gi < 3; gi++) {
            for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; b++) {
                for (size_t ei = 0; ei < sizeof es / sizeof es[0]; ei++) {
                    const float p[5] = {dts[d], gs[gi], boxes[b][0], boxes[b][1], es[ei]};
                    bcl_error e = {0};
                    if (m->check(p, &e) != BCL_OK) {
                        /* Only 980 * 1e30 is beyond the limit. */
                        assert_true(gi == 2 && dts[d] == 1e30f);
                        continue;
                    }
                    for (size_t i = 0; i < 4 * N; i++)
                        s[i] = any_float(&r);
                    s[0] = s[1] = s[2] = s[3] = FLT_MAX;
                    s[4] = s[5] = s[6] = s[7] = -FLT_MAX;
                    for (int k = 0; k < STEPS; k++) {
                        m->reference(s, N, 1, p);
                        for (size_t i = 0; i < N; i++) {
                            const float *q = s + 4 * i;
                            if (!(q[0] >= 0.0f && q[0] <= p[2] && q[1] >= 0.0f && q[1] <= p[3] &&
                                  isfinite(q[2]) && isfinite(q[3])))
                                fail_msg("dt %g g %g box %g,%g e %g step %d: ball %zu at "
                                         "(%g, %g, %g, %g)",
                                         (double)p[0], (double)p[1], (double)p[2], (double)p[3],
                                         (double)p[4], k + 1, i, (double)q[0], (double)q[1],
                                         (double)q[2], (double)q[3]);
                        }
                    }
                }
            }
        }
    }
}

/* K steps in one call give the bits of K single calls (what the fused
 * kernel must match too). */
static void test_steps_compose(void **state)
{
    (void)state;
    const bcl_model *m = bounce();
    float p[5];
    bcl_model_param_defaults(m, p);
    enum { N = 500 };
    static float a[4 * N], b[4 * N];
    m->init(a, 0, N, BCL_INIT_RANDOM, 7, p);
    memcpy(b, a, sizeof a);
    m->reference(a, N, 37, p);
    for (int k = 0; k < 37; k++)
        m->reference(b, N, 1, p);
    assert_memory_equal(a, b, sizeof a);
}

static void test_init(void **state)
{
    (void)state;
    const bcl_model *m = bounce();
    float p[5];
    bcl_model_param_defaults(m, p);
    enum { N = 4000 };
    static float s[4 * N], t[4 * N];
    m->init(s, 0, N, BCL_INIT_SEED, 3, p);
    for (size_t i = 0; i < N; i++) {
        const float *q = s + 4 * i;
        assert_true(q[0] >= 0.0f && q[0] <= 800.0f && q[1] >= 0.0f && q[1] <= 600.0f);
        assert_true(q[2] >= -200.0f && q[2] < 200.0f && q[3] >= -200.0f && q[3] < 200.0f);
    }
    m->init(t, 0, N, BCL_INIT_SEED, 3, p);
    assert_memory_equal(s, t, sizeof s); /* deterministic */
    /* Random: positions on both sides of every wall, velocities of both signs. */
    m->init(s, 0, N, BCL_INIT_RANDOM, 3, p);
    int left = 0, right = 0, top = 0, bottom = 0, neg = 0, pos = 0, fast = 0;
    for (size_t i = 0; i < N; i++) {
        const float *q = s + 4 * i;
        assert_true(isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2]) && isfinite(q[3]));
        left += q[0] < 0.0f;
        right += q[0] > 800.0f;
        top += q[1] < 0.0f;
        bottom += q[1] > 600.0f;
        neg += q[2] < 0.0f;
        pos += q[3] > 0.0f;
        fast += fabsf(q[2]) * (1.0f / 60.0f) > 800.0f;
    }
    assert_true(left > 0 && right > 0 && top > 0 && bottom > 0 && neg > 0 && pos > 0 && fast > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),        cmocka_unit_test(test_restitution_zero_signs),
        cmocka_unit_test(test_position_overflow), cmocka_unit_test(test_check),
        cmocka_unit_test(test_defaults),          cmocka_unit_test(test_never_leaves_box),
        cmocka_unit_test(test_steps_compose),     cmocka_unit_test(test_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
