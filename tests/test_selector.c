/*
 * Unit tests of the device selector (docs/DESIGN.md) over hand-built device lists,
 * so every rule is checked without a device: P:D indices, types, and
 * case-insensitive name substrings of device or platform; an unknown or
 * ambiguous selector is an input error listing the candidates; the default
 * is the first GPU, else accelerator, else CPU.
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

/* ---- parsing --------------------------------------------------------------- */

static bcl_selector parse_ok(const char *text)
{
    bcl_selector sel;
    bcl_error e = {0};
    int rc = bcl_selector_parse(text, &sel, &e);
    if (rc != BCL_OK)
        fail_msg("'%s': unexpected error %d: %s", text ? text : "(null)", rc, e.msg);
    return sel;
}

static void test_parse_index(void **unused)
{
    (void)unused;
    bcl_selector s = parse_ok("0:1");
    assert_int_equal(s.kind, BCL_SEL_INDEX);
    assert_int_equal(s.platform, 0);
    assert_int_equal(s.device, 1);
    s = parse_ok("12:345");
    assert_int_equal(s.kind, BCL_SEL_INDEX);
    assert_int_equal(s.platform, 12);
    assert_int_equal(s.device, 345);
}

static void test_parse_type(void **unused)
{
    (void)unused;
    bcl_selector s = parse_ok("gpu");
    assert_int_equal(s.kind, BCL_SEL_TYPE);
    assert_int_equal(s.type, CL_DEVICE_TYPE_GPU);
    s = parse_ok("CPU");
    assert_int_equal(s.kind, BCL_SEL_TYPE);
    assert_int_equal(s.type, CL_DEVICE_TYPE_CPU);
    s = parse_ok("Accelerator");
    assert_int_equal(s.kind, BCL_SEL_TYPE);
    assert_int_equal(s.type, CL_DEVICE_TYPE_ACCELERATOR);
}

static void test_parse_name_and_default(void **unused)
{
    (void)unused;
    bcl_selector s = parse_ok("pocl");
    assert_int_equal(s.kind, BCL_SEL_NAME);
    assert_string_equal(s.name, "pocl");
    /* Not two indices: a name (AMD device names hold colons, "gfx90a:xnack-"). */
    s = parse_ok("a:b");
    assert_int_equal(s.kind, BCL_SEL_NAME);
    assert_string_equal(s.name, "a:b");
    s = parse_ok(":2");
    assert_int_equal(s.kind, BCL_SEL_NAME);
    s = parse_ok("gpus"); /* a type word only when it is the whole text */
    assert_int_equal(s.kind, BCL_SEL_NAME);
    assert_int_equal(parse_ok(NULL).kind, BCL_SEL_DEFAULT);
}

static void test_parse_errors(void **unused)
{
    (void)unused;
    bcl_selector s;
    bcl_error e = {0};
    assert_int_equal(bcl_selector_parse("1:", &s, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "device selector '1:': expected P:D with two indices"));
    bcl_error_clear(&e);
    assert_int_equal(bcl_selector_parse("0:x", &s, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "'0:x'"));
    bcl_error_clear(&e);
    char longname[400];
    memset(longname, 'q', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(bcl_selector_parse(longname, &s, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "too long"));
    assert_true(strlen(e.msg) < 120);
    bcl_error_clear(&e);
    /* An empty selector is an error, not the default (which is NULL). */
    assert_int_equal(bcl_selector_parse("", &s, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "device selector '' is empty"));
    bcl_error_clear(&e);
}

/* ---- matching ---------------------------------------------------------------- */

static bcl_device_info fake(unsigned p, unsigned d, const char *platform, const char *name,
                            cl_device_type type)
{
    bcl_device_info di;
    memset(&di, 0, sizeof di);
    di.platform_index = p;
    di.device_index = d;
    snprintf(di.platform_name, sizeof di.platform_name, "%s", platform);
    snprintf(di.name, sizeof di.name, "%s", name);
    di.type = type;
    return di;
}

/* A machine with a CPU platform, two identical GPUs and an FPGA emulator. */
static bcl_device_info machine[] = {
    {0},
    {0},
    {0},
    {0},
};
static bcl_device_list machine_list = {machine, 4};

static int setup_machine(void **unused)
{
    (void)unused;
    machine[0] = fake(0, 0, "Portable Computing Language", "pthread-haswell-AMD EPYC 7763",
                      CL_DEVICE_TYPE_CPU);
    machine[1] = fake(1, 0, "NVIDIA CUDA", "NVIDIA H200", CL_DEVICE_TYPE_GPU);
    machine[2] = fake(1, 1, "NVIDIA CUDA", "NVIDIA H200", CL_DEVICE_TYPE_GPU);
    machine[3] = fake(2, 0, "Intel(R) FPGA Emulation Platform", "Intel(R) FPGA Emulation Device",
                      CL_DEVICE_TYPE_ACCELERATOR);
    return 0;
}

/* Selects with text over list and returns the chosen index. */
static size_t match_ok(const char *text, const bcl_device_list *list)
{
    bcl_selector sel = parse_ok(text);
    bcl_error e = {0};
    size_t idx = 999;
    int rc = bcl_selector_match(&sel, list, &idx, &e);
    if (rc != BCL_OK)
        fail_msg("'%s': unexpected error %d: %s", text ? text : "(null)", rc, e.msg);
    assert_true(idx < list->count);
    return idx;
}

/* Selects with text and asserts an error of class code whose message holds
 * each of the NULL-terminated strings. */
static void match_error(const char *text, const bcl_device_list *list, int code, ...)
{
    bcl_selector sel = parse_ok(text);
    bcl_error e = {0};
    size_t idx = 999;
    int rc = bcl_selector_match(&sel, list, &idx, &e);
    if (rc != code)
        fail_msg("'%s': expected error %d, got %d (%s)", text, code, rc, e.msg);
    assert_int_equal(idx, 999);
    assert_null(strchr(e.msg, '\n'));
    va_list ap;
    va_start(ap, code);
    for (const char *want; (want = va_arg(ap, const char *));)
        if (!strstr(e.msg, want))
            fail_msg("'%s': message \"%s\" lacks \"%s\"", text, e.msg, want);
    va_end(ap);
    bcl_error_clear(&e);
}

static void test_match_index(void **unused)
{
    (void)unused;
    assert_int_equal(match_ok("0:0", &machine_list), 0);
    assert_int_equal(match_ok("1:1", &machine_list), 2);
    assert_int_equal(match_ok("2:0", &machine_list), 3);
    /* Out of range on either index: the error lists every device. */
    match_error("9:9", &machine_list, BCL_EXIT_INPUT, "no device matches '9:9'",
                "candidates are 0:0 pthread-haswell-AMD EPYC 7763, 1:0 NVIDIA H200, "
                "1:1 NVIDIA H200, 2:0 Intel(R) FPGA Emulation Device",
                NULL);
    match_error("1:2", &machine_list, BCL_EXIT_INPUT, "no device matches '1:2'", NULL);
    match_error("3:0", &machine_list, BCL_EXIT_INPUT, "no device matches '3:0'", NULL);
}

static void test_match_type(void **unused)
{
    (void)unused;
    /* A type means "a device of that type": the first one, not ambiguous. */
    assert_int_equal(match_ok("gpu", &machine_list), 1);
    assert_int_equal(match_ok("CPU", &machine_list), 0);
    assert_int_equal(match_ok("accelerator", &machine_list), 3);
    bcl_device_list cpu_only = {machine, 1};
    match_error("gpu", &cpu_only, BCL_EXIT_INPUT, "no device matches 'gpu'",
                "candidates are 0:0 pthread-haswell-AMD EPYC 7763", NULL);
}

static void test_match_name(void **unused)
{
    (void)unused;
    /* Case-insensitive substring of the device name ... */
    assert_int_equal(match_ok("epyc", &machine_list), 0);
    assert_int_equal(match_ok("HASWELL", &machine_list), 0);
    assert_int_equal(match_ok("fpga emulation device", &machine_list), 3);
    /* ... or of the platform name. */
    assert_int_equal(match_ok("pOrTaBlE", &machine_list), 0);
    assert_int_equal(match_ok("computing language", &machine_list), 0);
    /* No match: every device is listed. */
    match_error("radeon", &machine_list, BCL_EXIT_INPUT, "no device matches 'radeon'",
                "0:0 pthread-haswell-AMD EPYC 7763", "2:0 Intel(R) FPGA Emulation Device", NULL);
    match_error(":2", &machine_list, BCL_EXIT_INPUT, "no device matches ':2'", NULL);
}

static void test_match_ambiguous(void **unused)
{
    (void)unused;
    /* Both candidates are named, and only they, with the way out (P:D). */
    match_error("h200", &machine_list, BCL_EXIT_INPUT, "device selector 'h200' is ambiguous",
                "it matches 1:0 NVIDIA H200, 1:1 NVIDIA H200; use P:D", NULL);
    match_error("nvidia cuda", &machine_list, BCL_EXIT_INPUT, "1:0 NVIDIA H200, 1:1 NVIDIA H200",
                NULL);
    /* "Intel" is in device and platform name of one device, and in no other. */
    assert_int_equal(match_ok("intel", &machine_list), 3);
    bcl_selector sel = parse_ok("AMD");
    bcl_error e = {0};
    size_t idx;
    assert_int_equal(bcl_selector_match(&sel, &machine_list, &idx, &e), BCL_OK);
    assert_int_equal(idx, 0);
    /* "i" is in a name of every device: all four are candidates. */
    match_error("I", &machine_list, BCL_EXIT_INPUT, "0:0 pthread-haswell-AMD EPYC 7763",
                "1:0 NVIDIA H200", "1:1 NVIDIA H200", "2:0 Intel(R) FPGA Emulation Device", NULL);
}

static void test_default_order(void **unused)
{
    (void)unused;
    /* GPU first wherever it is in the list. */
    assert_int_equal(match_ok(NULL, &machine_list), 1);
    bcl_device_info order[] = {machine[3], machine[0], machine[2]};
    bcl_device_list l = {order, 3};
    assert_int_equal(match_ok(NULL, &l), 2);
    /* No GPU: the accelerator, though the CPU comes first. */
    bcl_device_info no_gpu[] = {machine[0], machine[3]};
    l = (bcl_device_list){no_gpu, 2};
    assert_int_equal(match_ok(NULL, &l), 1);
    /* Only a CPU. */
    l = (bcl_device_list){machine, 1};
    assert_int_equal(match_ok(NULL, &l), 0);
    /* A device of another type is still better than none. */
    bcl_device_info custom[] = {fake(0, 0, "P", "D", CL_DEVICE_TYPE_CUSTOM)};
    l = (bcl_device_list){custom, 1};
    assert_int_equal(match_ok(NULL, &l), 0);
    /* An empty list is a runtime error, not an input error. */
    l = (bcl_device_list){NULL, 0};
    match_error(NULL, &l, BCL_EXIT_RUNTIME, "no OpenCL device found", NULL);
}

static void test_type_names(void **unused)
{
    (void)unused;
    assert_string_equal(bcl_device_type_name(CL_DEVICE_TYPE_GPU), "gpu");
    assert_string_equal(bcl_device_type_name(CL_DEVICE_TYPE_CPU), "cpu");
    assert_string_equal(bcl_device_type_name(CL_DEVICE_TYPE_ACCELERATOR), "accelerator");
    assert_string_equal(bcl_device_type_name(CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT), "gpu");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_index),
        cmocka_unit_test(test_parse_type),
        cmocka_unit_test(test_parse_name_and_default),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test_setup(test_match_index, setup_machine),
        cmocka_unit_test_setup(test_match_type, setup_machine),
        cmocka_unit_test_setup(test_match_name, setup_machine),
        cmocka_unit_test_setup(test_match_ambiguous, setup_machine),
        cmocka_unit_test_setup(test_default_order, setup_machine),
        cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
