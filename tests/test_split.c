/*
 * The split of a run's balls among devices (bcl_split, docs/DESIGN.md,
 * "Several devices"), and device lists (bcl_device_select_list): no
 * device needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "job/job.h"

#include <string.h>

static void check_cover(const bcl_shard *s, size_t count, size_t n, unsigned block)
{
    size_t next = 0, last = count;
    for (size_t i = 0; i < count; i++)
        if (s[i].count)
            last = i;
    for (size_t i = 0; i < count; i++) {
        if (!s[i].count)
            continue;
        assert_int_equal(s[i].first, next);
        if (i != last)
            assert_int_equal(s[i].count % block, 0);
        next += s[i].count;
    }
    assert_int_equal(next, n);
}

static void test_proportional(void **unused)
{
    (void)unused;
    bcl_shard s[3];
    bcl_split_why why[3];
    /* Equal rates: equal shares of whole blocks; the tail to the last. */
    double r2[] = {1e10, 1e10}, f2[] = {0, 0};
    assert_int_equal(bcl_split(4000000, 2, r2, f2, 1000, 16, BCL_SPLIT_MIN_SHARE, s, why), 2);
    assert_int_equal(s[0].count, 2000000);
    assert_int_equal(s[1].count, 2000000);
    check_cover(s, 2, 4000000, 16);
    assert_int_equal(bcl_split(100003, 2, r2, f2, 10, 16, BCL_SPLIT_MIN_SHARE, s, why), 2);
    check_cover(s, 2, 100003, 16);
    assert_true(s[1].count % 16 == 3);
    /* One three times faster: three quarters, within a block. */
    double r3[] = {1e9, 3e9}, f3[] = {0.001, 0.001};
    assert_int_equal(bcl_split(1 << 20, 2, r3, f3, 100, 16, BCL_SPLIT_MIN_SHARE, s, why), 2);
    assert_true(s[1].count > s[0].count);
    assert_in_range(s[1].count, (3u << 18) - 16, (3u << 18) + 16);
    check_cover(s, 2, 1 << 20, 16);
    /* Three devices, the middle one without a rate. */
    double r4[] = {2e9, 0, 2e9}, f4[] = {0, 0, 0};
    assert_int_equal(bcl_split(1000, 3, r4, f4, 100, 1, BCL_SPLIT_MIN_SHARE, s, why), 2);
    assert_int_equal(why[1], BCL_SPLIT_NO_RATE);
    assert_int_equal(s[1].count, 0);
    check_cover(s, 3, 1000, 1);
}

static void test_exclusions(void **unused)
{
    (void)unused;
    bcl_shard s[2];
    bcl_split_why why[2];
    /* A device whose fixed cost (1 s) dwarfs the run (1e6 balls x 100
     * steps at 1e10 ball-steps/s: 10 ms) gets nothing. */
    double r[] = {1e10, 1e10}, f[] = {1.0, 0.0};
    assert_int_equal(bcl_split(1000000, 2, r, f, 100, 16, BCL_SPLIT_MIN_SHARE, s, why), 1);
    assert_int_equal(why[0], BCL_SPLIT_SLOWER);
    assert_int_equal(s[0].count, 0);
    assert_int_equal(s[1].first, 0);
    assert_int_equal(s[1].count, 1000000);
    /* The same cost beside a run of minutes is worth taking part. */
    assert_int_equal(bcl_split(1000000, 2, r, f, 1e6, 16, BCL_SPLIT_MIN_SHARE, s, why), 2);
    /* Fewer balls than one block each: one device takes them. */
    double f0[] = {0, 0};
    assert_int_equal(bcl_split(16, 2, r, f0, 100, 16, BCL_SPLIT_MIN_SHARE, s, why), 1);
    assert_int_equal(s[0].count + s[1].count, 16);
    assert_true(why[0] == BCL_SPLIT_UNDER_BLOCK || why[1] == BCL_SPLIT_UNDER_BLOCK);
    /* A very slow device's share under half a block is dropped. */
    double rs[] = {1e12, 1e6};
    assert_int_equal(bcl_split(100000, 2, rs, f0, 100, 16, BCL_SPLIT_MIN_SHARE, s, why), 1);
    assert_int_equal(why[1], BCL_SPLIT_UNDER_BLOCK);
    assert_int_equal(s[0].count, 100000);
    /* A share under a tenth (the H200 beside 16 CPU cores: 3%) is left
     * out; one just above it takes part. */
    double rg[] = {8e12, 2.3e11};
    assert_int_equal(bcl_split(268435456, 2, rg, f0, 1000, 64, BCL_SPLIT_MIN_SHARE, s, why), 1);
    assert_int_equal(why[1], BCL_SPLIT_MINOR);
    assert_int_equal(s[0].count, 268435456);
    double rt[] = {8e9, 1e9};
    assert_int_equal(bcl_split(1000000, 2, rt, f0, 1000, 16, BCL_SPLIT_MIN_SHARE, s, why), 2);
    assert_in_range(s[1].count, 111111 - 16, 111111 + 16);
    /* Three devices: only the minor one goes. */
    bcl_shard s3[3];
    bcl_split_why why3[3];
    double r3[] = {5e9, 4e9, 2e8}, f3[] = {0, 0, 0};
    assert_int_equal(bcl_split(900000, 3, r3, f3, 100, 16, BCL_SPLIT_MIN_SHARE, s3, why3), 2);
    assert_int_equal(why3[2], BCL_SPLIT_MINOR);
    check_cover(s3, 3, 900000, 16);
}

/* The ranks' split (docs/SCALING.md) has no least share: the rank that the
 * devices' rule would leave out takes its part; with no rate at all the
 * parts are equal. */
static void test_ranks(void **unused)
{
    (void)unused;
    bcl_shard s[3];
    bcl_split_why why[3];
    double rg[] = {8e12, 2.3e11}, f0[] = {0, 0, 0};
    assert_int_equal(bcl_split(268435456, 2, rg, f0, 1000, 64, 0.0, s, why), 2);
    assert_int_equal(why[1], BCL_SPLIT_USED);
    assert_in_range(s[1].count, 7501841 - 64, 7501841 + 64);
    check_cover(s, 2, 268435456, 64);
    double none[] = {0, 0, 0};
    assert_int_equal(bcl_split(3000, 3, none, f0, 100, 8, 0.0, s, why), 3);
    check_cover(s, 3, 3000, 8);
    for (int i = 0; i < 3; i++)
        assert_in_range(s[i].count, 1000 - 8, 1000 + 8);
}

static bcl_device_info fake[3];

static void test_lists(void **unused)
{
    (void)unused;
    bcl_device_list list = {fake, 3};
    const char *names[] = {"pthread-cpu", "pthread-cpu", "llvmpipe"};
    for (unsigned i = 0; i < 3; i++) {
        memset(&fake[i], 0, sizeof fake[i]);
        fake[i].platform_index = i == 2;
        fake[i].device_index = i == 2 ? 0 : i;
        fake[i].type = BCL_DEVICE_CPU;
        strcpy(fake[i].name, names[i]);
        strcpy(fake[i].platform_name, i == 2 ? "rusticl" : "Portable Computing Language");
    }
    size_t idx[8], count;
    bcl_error e = {0};
    assert_int_equal(bcl_device_select_list(&list, "all", idx, 8, &count, &e), 0);
    assert_int_equal(count, 3);
    assert_int_equal(bcl_device_select_list(&list, "1:0,0:1", idx, 8, &count, &e), 0);
    assert_int_equal(count, 2);
    assert_int_equal(idx[0], 2);
    assert_int_equal(idx[1], 1);
    assert_int_equal(bcl_device_select_list(&list, "0:0", idx, 8, &count, &e), 0);
    assert_int_equal(count, 1);
    assert_int_equal(bcl_device_select_list(&list, NULL, idx, 8, &count, &e), 0);
    assert_int_equal(count, 1);
    assert_int_equal(bcl_device_select_list(&list, "rusticl,0:0", idx, 8, &count, &e), 0);
    assert_int_equal(idx[0], 2);
    const char *bad[] = {"0:0,", ",0:0", "0:0,,0:1", "0:0,0:0", "0:0,9:9", "pthread"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bcl_error_clear(&e);
        assert_int_equal(bcl_device_select_list(&list, bad[i], idx, 8, &count, &e), BCL_EXIT_INPUT);
        assert_true(e.msg[0] != '\0');
    }
    bcl_error_clear(&e);
    assert_int_equal(bcl_device_select_list(&list, "0:0,0:1,1:0", idx, 2, &count, &e),
                     BCL_EXIT_INPUT);
    bcl_error_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proportional),
        cmocka_unit_test(test_exclusions),
        cmocka_unit_test(test_ranks),
        cmocka_unit_test(test_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
