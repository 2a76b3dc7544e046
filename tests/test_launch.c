/*
 * Unit tests of work-group sizing (docs/BENCHMARK.md) from device and kernel figures
 * alone: the automatic local size over a grid of real and awkward devices,
 * the --local parser, and bcl_round_up.
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

#include <stdio.h>
#include <string.h>
#include <string.h>

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

static size_t local_auto(size_t kwg, size_t pm, size_t dev_max, size_t item0, cl_uint cus, size_t n)
{
    char why[160] = "";
    size_t l = bcl_local_auto(kwg, pm, dev_max, item0, cus, n, why, sizeof why);
    assert_true(strlen(why) > 10); /* always says how it was derived */
    return l;
}

static void test_auto_real_devices(void **unused)
{
    (void)unused;
    /* An H200-like GPU (warp 32, 132 SMs, limit 1024): 256 for large N. */
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 132, 100000), 256);
    /* Small N: shrunk so all 132 SMs get a group, in whole warps. */
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 132, 10000), 96); /* ceil(75.8) -> 96 */
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 132, 1000), 32);
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 132, 1), 32);
    /* An AMD GPU (wavefront 64). */
    assert_int_equal(local_auto(256, 64, 1024, 1024, 104, 1000000), 256);
    assert_int_equal(local_auto(256, 64, 1024, 1024, 104, 7), 64);
    /* PoCL on this machine's CPU: multiple 8, limit 4096, 2 cores. */
    assert_int_equal(local_auto(4096, 8, 4096, 4096, 2, 100003), 256);
    assert_int_equal(local_auto(4096, 8, 4096, 4096, 2, 100), 56); /* ceil(50 / 8) * 8 */
    assert_int_equal(local_auto(4096, 8, 4096, 4096, 2, 1), 8);
    /* A small kernel limit that is no multiple of the preferred width. */
    assert_int_equal(local_auto(100, 32, 1024, 1024, 1, 100000), 96);
    /* The limit is the least of kernel, device and item-size limits. */
    assert_int_equal(local_auto(1024, 16, 128, 1024, 1, 100000), 128);
    assert_int_equal(local_auto(1024, 16, 1024, 64, 1, 100000), 64);
    /* A preferred multiple wider than 256 is honoured in full. */
    assert_int_equal(local_auto(1024, 512, 1024, 1024, 1, 100000), 512);
    /* A multiple wider than the limit cannot be honoured: the limit. */
    assert_int_equal(local_auto(16, 32, 1024, 1024, 1, 100000), 16);
    /* Limit 1 (some drivers for some kernels): 1 is then the only choice. */
    assert_int_equal(local_auto(1, 32, 1024, 1024, 8, 100000), 1);
    assert_int_equal(local_auto(1, 1, 1, 1, 1, 1), 1);
    /* Zeros from failed queries are survivable. */
    assert_int_equal(local_auto(256, 0, 0, 0, 0, 100000), 256);
}

/* Properties over a grid of device figures and ball counts: a multiple of
 * the preferred multiple (where that fits the limit), within the limit,
 * never 1 unless the limit is 1, no larger for smaller N. */
static void test_auto_properties(void **unused)
{
    (void)unused;
    static const size_t kwgs[] = {1, 2, 3, 16, 64, 100, 256, 1000, 1024, 4096, 8192};
    static const size_t pms[] = {0, 1, 4, 8, 16, 32, 64, 128};
    static const size_t devs[] = {0, 64, 256, 1024, 8192};
    static const size_t items[] = {0, 32, 512, 1024, 4096};
    static const cl_uint cuss[] = {0, 1, 2, 7, 16, 132, 1024};
    static const size_t ns[] = {1, 2, 3, 7, 31, 100, 1000, 4099, 100003, 10000000};
    size_t cases = 0;
    for (size_t a = 0; a < sizeof kwgs / sizeof kwgs[0]; a++)
        for (size_t b = 0; b < sizeof pms / sizeof pms[0]; b++)
            for (size_t c = 0; c < sizeof devs / sizeof devs[0]; c++)
                for (size_t d = 0; d < sizeof items / sizeof items[0]; d++)
                    for (size_t u = 0; u < sizeof cuss / sizeof cuss[0]; u++) {
                        size_t limit = min3(kwgs[a], devs[c] ? devs[c] : SIZE_MAX,
                                            items[d] ? items[d] : SIZE_MAX);
                        size_t prev = 0;
                        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
                            char why[256];
                            size_t l = bcl_local_auto(kwgs[a], pms[b], devs[c], items[d], cuss[u],
                                                      ns[k], why, sizeof why);
                            /* Evening the groups out over the units may
                             * shrink local below a smaller N's. */
                            bool evened = strstr(why, "evened out") != NULL;
                            char ctx[160];
                            snprintf(ctx, sizeof ctx,
                                     "kwg %zu pm %zu dev %zu item %zu cus %u n %zu -> %zu", kwgs[a],
                                     pms[b], devs[c], items[d], cuss[u], ns[k], l);
                            if (l < 1 || l > limit)
                                fail_msg("%s: outside [1, limit %zu]", ctx, limit);
                            if (pms[b] > 1 && pms[b] <= limit && l % pms[b] != 0)
                                fail_msg("%s: not a multiple of %zu", ctx, pms[b]);
                            if (l == 1 && limit != 1)
                                fail_msg("%s: local 1 with limit %zu", ctx, limit);
                            if (!evened && l < prev)
                                fail_msg("%s: smaller than for fewer balls (%zu)", ctx, prev);
                            size_t u1 = cuss[u] ? cuss[u] : 1, g = (ns[k] + l - 1) / l;
                            if (evened && g > u1 * ((ns[k] + prev - 1) / (prev ? prev : 1) + 1))
                                fail_msg("%s: evened into %zu groups", ctx, g);
                            if (l > 256 && l > pms[b])
                                fail_msg("%s: beyond 256", ctx);
                            if (!evened)
                                prev = l;
                            cases++;
                        }
                    }
    assert_true(cases > 100000);
}

static void test_auto_evens_groups_out(void **unused)
{
    (void)unused;
    /* 625 work-items (10000 balls, 16 per work-item) on two CPU cores with
     * multiple 8: local 256 would make 3 groups, one core idle for the
     * last; 160 makes 4, two per core. */
    char why[256];
    size_t l = bcl_local_auto(4096, 8, 4096, 4096, 2, 625, why, sizeof why);
    assert_int_equal(l, 160);
    assert_non_null(strstr(why, "evened out"));
    /* Groups that already divide evenly are left alone. */
    assert_int_equal(bcl_local_auto(4096, 8, 4096, 4096, 2, 1024, NULL, 0), 256);
    /* Many groups: at most rounding. */
    assert_int_equal(bcl_local_auto(4096, 8, 4096, 4096, 2, 62500, NULL, 0), 256);
}

static void test_auto_shrinks_for_small_n(void **unused)
{
    (void)unused;
    /* With 16 compute units and multiple 32, the size follows N/16 rounded
     * up to 32 until it reaches 256. */
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 16, 16 * 256), 256);
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 16, 16 * 256 - 1), 256);
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 16, 16 * 224), 224);
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 16, 16 * 200), 224);
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 16, 16 * 32 + 1), 64);
    assert_int_equal(local_auto(1024, 32, 1024, 1024, 16, 100), 32);
    /* The reason says so. */
    char why[160];
    bcl_local_auto(1024, 32, 1024, 1024, 16, 100, why, sizeof why);
    assert_non_null(strstr(why, "shrunk"));
    bcl_local_auto(1024, 32, 1024, 1024, 16, 1000000, why, sizeof why);
    assert_null(strstr(why, "shrunk"));
    assert_non_null(strstr(why, "preferred 32"));
    /* A driver reporting multiple 1 still never gets groups of 1. */
    assert_int_equal(local_auto(1024, 1, 1024, 1024, 64, 7), 32);
    assert_int_equal(local_auto(1024, 1, 1024, 1024, 2, 100), 50);
    assert_int_equal(local_auto(8, 1, 1024, 1024, 64, 7), 8);
}

static void expect_local(const char *text, bcl_local_mode mode, size_t local)
{
    bcl_launch l;
    bcl_error e = {0};
    if (bcl_local_parse(text, &l, &e) != BCL_OK)
        fail_msg("'%s': %s", text ? text : "(null)", e.msg);
    assert_int_equal(l.mode, mode);
    assert_int_equal(l.local, local);
}

static void expect_local_error(const char *text)
{
    bcl_launch l;
    bcl_error e = {0};
    assert_int_equal(bcl_local_parse(text, &l, &e), BCL_EXIT_INPUT);
    char want[64];
    snprintf(want, sizeof want, "--local: '%s' is not valid", text);
    if (!strstr(e.msg, want) || !strstr(e.msg, "expected auto, driver, tuned or a work-group size"))
        fail_msg("'%s': message \"%s\"", text, e.msg);
    bcl_error_clear(&e);
}

static void test_local_parse(void **unused)
{
    (void)unused;
    expect_local("auto", BCL_LOCAL_AUTO, 0);
    expect_local(NULL, BCL_LOCAL_AUTO, 0);
    expect_local("driver", BCL_LOCAL_DRIVER, 0);
    expect_local("tuned", BCL_LOCAL_TUNED, 0);
    expect_local("1", BCL_LOCAL_FIXED, 1);
    expect_local("24", BCL_LOCAL_FIXED, 24);
    expect_local("1048576", BCL_LOCAL_FIXED, 1048576);
    expect_local_error("0");
    expect_local_error("abc");
    expect_local_error("");
    expect_local_error("-1");
    expect_local_error("24x");
    expect_local_error(" 24");
    expect_local_error("1048577");
    expect_local_error("99999999999999999999");
    expect_local_error("Auto"); /* words are exact */
    expect_local_error("null");
}

static void test_round_up(void **unused)
{
    (void)unused;
    assert_int_equal(bcl_round_up(0, 8), 0);
    assert_int_equal(bcl_round_up(1, 8), 8);
    assert_int_equal(bcl_round_up(8, 8), 8);
    assert_int_equal(bcl_round_up(9, 8), 16);
    assert_int_equal(bcl_round_up(100003, 256), 100096);
    assert_int_equal(bcl_round_up(100003, 24), 100008);
    assert_int_equal(bcl_round_up(100003, 1), 100003);
    assert_int_equal(bcl_round_up(7, 0), 7); /* no multiple: unchanged */
}

static void test_check_steps(void **unused)
{
    (void)unused;
    /* A few single steps; for K > 1 a full launch and a partial one. */
    assert_int_equal(bcl_check_steps(1), 5);
    assert_int_equal(bcl_check_steps(2), 4); /* two full launches: no partial one at K = 2 */
    assert_int_equal(bcl_check_steps(100), 151);
    for (unsigned k = 3; k < 5000; k++) {
        uint64_t s = bcl_check_steps(k);
        assert_true(s > k && s % k != 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_real_devices),
        cmocka_unit_test(test_auto_properties),
        cmocka_unit_test(test_auto_shrinks_for_small_n),
        cmocka_unit_test(test_auto_evens_groups_out),
        cmocka_unit_test(test_local_parse),
        cmocka_unit_test(test_round_up),
        cmocka_unit_test(test_check_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
