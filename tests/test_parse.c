/*
 * Unit tests of the strict option parsers (README.md, docs/RELIABILITY.md): a count is the
 * whole text, decimal, in range; a float is the whole text, finite in
 * float32. Every rejection is BCL_EXIT_INPUT with a message naming the
 * option and saying what was expected.
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
#include <string.h>

/* Parses text as a count in [min, max] and asserts the error message holds
 * `want` (and the option's name). */
static void expect_u64_error(const char *text, uint64_t min, uint64_t max, const char *want)
{
    bcl_error e = {0};
    uint64_t out = 12345;
    int rc = bcl_parse_u64(text, "--balls", min, max, &out, &e);
    if (rc != BCL_EXIT_INPUT)
        fail_msg("'%s': expected BCL_EXIT_INPUT, got %d", text ? text : "(null)", rc);
    if (!strstr(e.msg, want) || strncmp(e.msg, "--balls: ", 9) != 0)
        fail_msg("'%s': message \"%s\" lacks \"%s\"", text ? text : "(null)", e.msg, want);
    assert_null(strchr(e.msg, '\n'));
    assert_int_equal(out, 12345); /* untouched on failure */
    bcl_error_clear(&e);
}

static uint64_t expect_u64(const char *text, uint64_t min, uint64_t max)
{
    bcl_error e = {0};
    uint64_t out = 0;
    int rc = bcl_parse_u64(text, "--balls", min, max, &out, &e);
    if (rc != BCL_OK)
        fail_msg("'%s': unexpected error %d: %s", text, rc, e.msg);
    return out;
}

static void test_u64_rejects_non_numbers(void **unused)
{
    (void)unused;
    expect_u64_error("10x", 0, 100, "'10x' is not a non-negative integer");
    expect_u64_error("", 0, 100, "empty value: expected an integer");
    expect_u64_error(NULL, 0, 100, "empty value");
    expect_u64_error("-3", 0, 100, "'-3' is not a non-negative integer");
    /* strtoull would skip the space and wrap "-0" around: both refused. */
    expect_u64_error(" 5", 0, 100, "' 5' is not a non-negative integer");
    expect_u64_error("5 ", 0, 100, "'5 ' is not a non-negative integer");
    expect_u64_error("+5", 0, 100, "'+5' is not a non-negative integer");
    expect_u64_error("-0", 0, 100, "'-0' is not a non-negative integer");
    expect_u64_error("1e99", 0, 100, "'1e99' is not a non-negative integer");
    expect_u64_error("1.0", 0, 100, "'1.0' is not a non-negative integer");
    expect_u64_error("0x10", 0, 100, "'0x10' is not a non-negative integer");
    expect_u64_error("abc", 0, 100, "'abc' is not a non-negative integer");
}

static void test_u64_range(void **unused)
{
    (void)unused;
    /* Overflowing 64 bits is out of range, not a silent UINT64_MAX. */
    expect_u64_error("99999999999999999999", 0, UINT64_MAX,
                     "'99999999999999999999' is out of range: expected 0 to "
                     "18446744073709551615");
    expect_u64_error("18446744073709551616", 0, UINT64_MAX, "is out of range");
    assert_int_equal(expect_u64("18446744073709551615", 0, UINT64_MAX), UINT64_MAX);

    /* Both bounds are inclusive. */
    expect_u64_error("0", 1, 10, "'0' is out of range: expected 1 to 10");
    expect_u64_error("11", 1, 10, "'11' is out of range: expected 1 to 10");
    assert_int_equal(expect_u64("1", 1, 10), 1);
    assert_int_equal(expect_u64("10", 1, 10), 10);
    assert_int_equal(expect_u64("7", 1, 10), 7);
    assert_int_equal(expect_u64("0", 0, 0), 0);
    /* Decimal, even with a leading zero (never octal). */
    assert_int_equal(expect_u64("010", 0, 100), 10);
}

static void expect_float_error(const char *text, const char *want)
{
    bcl_error e = {0};
    float out = 42.0f;
    int rc = bcl_parse_float(text, "--gravity", &out, &e);
    if (rc != BCL_EXIT_INPUT)
        fail_msg("'%s': expected BCL_EXIT_INPUT, got %d (value %a)", text ? text : "(null)", rc,
                 (double)out);
    if (!strstr(e.msg, want) || strncmp(e.msg, "--gravity: ", 11) != 0)
        fail_msg("'%s': message \"%s\" lacks \"%s\"", text ? text : "(null)", e.msg, want);
    assert_float_equal(out, 42.0f, 0.0f);
    bcl_error_clear(&e);
}

static float expect_float(const char *text)
{
    bcl_error e = {0};
    float out = 0;
    int rc = bcl_parse_float(text, "--gravity", &out, &e);
    if (rc != BCL_OK)
        fail_msg("'%s': unexpected error %d: %s", text, rc, e.msg);
    return out;
}

static void test_float_rejects(void **unused)
{
    (void)unused;
    expect_float_error("", "empty value: expected a number");
    expect_float_error(NULL, "empty value");
    expect_float_error("10x", "'10x' is not a number");
    expect_float_error(" 5", "' 5' is not a number");
    expect_float_error("5 ", "'5 ' is not a number");
    expect_float_error("abc", "'abc' is not a number");
    expect_float_error("1,5", "'1,5' is not a number");
    expect_float_error("1e99", "'1e99' is out of range: expected a finite float32");
    expect_float_error("-1e99", "out of range");
    expect_float_error("3.5e38", "out of range"); /* beyond FLT_MAX, below DBL_MAX */
    expect_float_error("nan", "expected a finite float32");
    expect_float_error("-nan", "expected a finite float32");
    expect_float_error("inf", "expected a finite float32");
    expect_float_error("-inf", "expected a finite float32");
    expect_float_error("infinity", "expected a finite float32");
    /* A non-zero value too small for float32 must not silently become 0 (a
     * time step of 0) or a denormal that devices may flush: out of range. */
    expect_float_error("1e-50", "out of range");
    expect_float_error("1e-40", "out of range");
}

static void test_float_values(void **unused)
{
    (void)unused;
    /* Parsed straight to float (strtof): correctly rounded float32 bits. */
    assert_int_equal(bits(expect_float("0.1")), bits(0.1f));
    assert_int_equal(bits(expect_float("980")), bits(980.0f));
    assert_int_equal(bits(expect_float("-2.5")), bits(-2.5f));
    assert_int_equal(bits(expect_float("1e-3")), bits(1e-3f));
    assert_int_equal(bits(expect_float("0x1p-3")), bits(0.125f));
    assert_int_equal(bits(expect_float("3.4028235e38")), bits(FLT_MAX));
    assert_int_equal(bits(expect_float("1.1754944e-38")), bits(FLT_MIN));
    assert_int_equal(bits(expect_float("0")), 0u);
    assert_int_equal(bits(expect_float("-0")), 0x80000000u);
    /* 0.01666666753590107 is the float nearest 1/60 (docs/MODELS.md). */
    assert_int_equal(bits(expect_float("0.016666668")), bits((float)(1.0 / 60.0)));
}

static void test_first_error_wins(void **unused)
{
    (void)unused;
    /* A later failure never overwrites the first message (error.c). */
    bcl_error e = {0};
    uint64_t v;
    assert_int_equal(bcl_parse_u64("x", "--steps", 0, 9, &v, &e), BCL_EXIT_INPUT);
    assert_int_equal(bcl_parse_u64("y", "--seed", 0, 9, &v, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "--steps: 'x'"));
    bcl_error_clear(&e);
    assert_int_equal(e.code, 0);
    assert_string_equal(e.msg, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64_rejects_non_numbers), cmocka_unit_test(test_u64_range),
        cmocka_unit_test(test_float_rejects),           cmocka_unit_test(test_float_values),
        cmocka_unit_test(test_first_error_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
