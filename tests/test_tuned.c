/*
 * Unit tests (no device) of the tuned file: where it goes, that it round
 * trips, that the device key follows the driver, and that every kind of
 * damaged or foreign file is refused with a message naming it, so that
 * 'run --local tuned' falls back to auto instead of using a wrong entry.
 */
#define _GNU_SOURCE /* mkdtemp, setenv */
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char tmpdir[256];

static bcl_device_info fake_device(void)
{
    bcl_device_info d = test_device_info("Test Platform", "OpenCL 3.0 test", "Test Device",
                                         "Test Vendor", "OpenCL 3.0", "1.0");
    d.type = CL_DEVICE_TYPE_GPU;
    return d;
}

static bcl_tune_result fake_result(bcl_tune_candidate *cand)
{
    memset(cand, 0, 2 * sizeof *cand);
    cand[0].local = 64;
    cand[0].steps_per_launch = 1;
    cand[0].validated = true;
    cand[0].m.device_us = (bcl_stats){.median = 2.5, .min = 2, .max = 3, .count = 3};
    cand[1].fused = true;
    strcpy(cand[1].variant, "x16");
    cand[1].local = 0;
    cand[1].steps_per_launch = 64;
    cand[1].validated = false;
    bcl_tune_result r;
    memset(&r, 0, sizeof r);
    r.cand = cand;
    r.count = 2;
    r.best.single =
        (bcl_tuned_entry){.found = true, .local = 64, .steps_per_launch = 1, .us_per_step = 2.5};
    r.best.fused = (bcl_tuned_entry){
        .found = true, .variant = "x16", .local = 0, .steps_per_launch = 64, .us_per_step = 0.25};
    r.best.balls = 1234;
    strcpy(r.best.date, "2026-12-02T00:00:00Z");
    r.auto_us = 3.0;
    return r;
}

static int setup(void **state)
{
    (void)state;
    setenv("BALLCL_CACHE_DIR", tmpdir, 1);
    return 0;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_path_and_key(void **state)
{
    (void)state;
    bcl_device_info d = fake_device();
    const bcl_model *m = bcl_models[0];
    char path[4096], key[33], key2[33];
    bcl_error e = {0};
    assert_int_equal(bcl_tuned_path(&d, m, path, sizeof path, &e), BCL_OK);
    assert_int_equal(bcl_device_key(&d, key, &e), BCL_OK);
    assert_int_equal(strlen(key), 32);
    char want[4096];
    snprintf(want, sizeof want, "%s/tuned/%s-%s.json", tmpdir, m->name, key);
    assert_string_equal(path, want);
    /* A new driver is a new key: its figures were never measured. */
    strcpy(d.driver, "1.1");
    assert_int_equal(bcl_device_key(&d, key2, &e), BCL_OK);
    assert_string_not_equal(key, key2);
    /* Fewer compute units (a thread-limited PoCL device, a partitioned
     * GPU): another speed, another key. */
    d = fake_device();
    d.compute_units = d.compute_units > 1 ? d.compute_units / 2 : 2;
    assert_int_equal(bcl_device_key(&d, key2, &e), BCL_OK);
    assert_string_not_equal(key, key2);
    d = fake_device();
    d.clock_mhz += 100;
    assert_int_equal(bcl_device_key(&d, key2, &e), BCL_OK);
    assert_string_not_equal(key, key2);
    /* Without BALLCL_CACHE_DIR: XDG_CACHE_HOME. */
    unsetenv("BALLCL_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/x/y", 1);
    assert_int_equal(bcl_tuned_path(&d, m, path, sizeof path, &e), BCL_OK);
    assert_true(strncmp(path, "/x/y/ballcl/tuned/", 18) == 0);
}

static void test_missing_is_not_found(void **state)
{
    (void)state;
    bcl_device_info d = fake_device();
    strcpy(d.name, "Never Tuned");
    bcl_tuned t;
    bcl_error e = {0};
    assert_int_equal(bcl_tuned_load(&d, bcl_models[0], &t, &e), BCL_OK);
    assert_false(t.single.found);
    assert_false(t.fused.found);
}

static void test_round_trip(void **state)
{
    (void)state;
    bcl_device_info d = fake_device();
    const bcl_model *m = bcl_models[0];
    bcl_tune_candidate cand[2];
    bcl_tune_result r = fake_result(cand);
    char path[4096];
    bcl_error e = {0};
    bcl_outputs o = {0};
    assert_int_equal(bcl_tuned_open(&d, m, &o, path, sizeof path, &e), BCL_OK);
    assert_int_equal(bcl_tuned_save(&d, m, &r, &o, &e), BCL_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tuned", tmpdir);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    bcl_tuned t;
    assert_int_equal(bcl_tuned_load(&d, m, &t, &e), BCL_OK);
    assert_true(t.single.found && t.fused.found);
    assert_string_equal(t.single.variant, "");
    assert_int_equal(t.single.local, 64);
    assert_int_equal(t.single.steps_per_launch, 1);
    assert_string_equal(t.fused.variant, "x16");
    assert_int_equal(t.fused.local, 0);
    assert_int_equal(t.fused.steps_per_launch, 64);
    assert_true(t.fused.us_per_step > 0.24 && t.fused.us_per_step < 0.26);
    assert_int_equal(t.balls, 1234);
    assert_string_equal(t.date, "2026-12-02T00:00:00Z");
    /* The file says which device it is for, in clear. */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[8192];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    assert_non_null(strstr(buf, "\"Test Device\""));
    assert_non_null(strstr(buf, "\"ballcl-tuned/1\""));
    assert_non_null(strstr(buf, "\"candidates\""));
}

/* Writes text as the tuned file of the fake device and expects an input
 * error that names the file and contains want. */
static void expect_refused(const char *text, const char *want)
{
    bcl_device_info d = fake_device();
    const bcl_model *m = bcl_models[0];
    char path[4096], dir[4096];
    bcl_error e = {0};
    assert_int_equal(bcl_tuned_path(&d, m, path, sizeof path, &e), BCL_OK);
    snprintf(dir, sizeof dir, "%s/tuned", tmpdir);
    mkdir(dir, 0700);
    write_text(path, text);
    bcl_tuned t;
    memset(&t, 0x55, sizeof t);
    int rc = bcl_tuned_load(&d, m, &t, &e);
    if (rc != BCL_EXIT_INPUT || !strstr(e.msg, want))
        fail_msg("rc %d, message \"%s\": wanted \"%s\"", rc, e.msg, want);
    assert_non_null(strstr(e.msg, path));
    assert_null(strchr(e.msg, '\n'));
    assert_false(t.single.found);
    assert_false(t.fused.found);
    bcl_error_clear(&e);
}

static void test_refuses_damaged_files(void **state)
{
    (void)state;
    char key[33], text[1024];
    bcl_device_info d = fake_device();
    bcl_error e = {0};
    assert_int_equal(bcl_device_key(&d, key, &e), BCL_OK);
    const char *mname = bcl_models[0]->name;
    expect_refused("{ not json", "not valid JSON");
    expect_refused("", "not valid JSON");
    expect_refused("[]", "expected format");
    snprintf(text, sizeof text,
             "{\"format\": \"ballcl-tuned/9\", \"model\": \"%s\", "
             "\"device\": {\"key\": \"%s\"}}",
             mname, key);
    expect_refused(text, "format 'ballcl-tuned/9'");
    snprintf(text, sizeof text,
             "{\"format\": \"ballcl-tuned/1\", \"model\": \"%s\", "
             "\"device\": {\"key\": \"0123\"}}",
             mname);
    expect_refused(text, "belongs to");
    snprintf(text, sizeof text,
             "{\"format\": \"ballcl-tuned/1\", \"model\": \"other\", "
             "\"device\": {\"key\": \"%s\"}}",
             key);
    expect_refused(text, "belongs to");
    snprintf(text, sizeof text,
             "{\"format\": \"ballcl-tuned/1\", \"model\": \"%s\", \"device\": {\"key\": \"%s\"}, "
             "\"single\": {\"variant\": \"\", \"local\": -4, \"steps_per_launch\": 1}}",
             mname, key);
    expect_refused(text, "local that is not a size");
    snprintf(text, sizeof text,
             "{\"format\": \"ballcl-tuned/1\", \"model\": \"%s\", \"device\": {\"key\": \"%s\"}, "
             "\"single\": {\"variant\": \"\", \"local\": 8, \"steps_per_launch\": 5}}",
             mname, key);
    expect_refused(text, "entry 'single' is malformed");
    snprintf(text, sizeof text,
             "{\"format\": \"ballcl-tuned/1\", \"model\": \"%s\", \"device\": {\"key\": \"%s\"}, "
             "\"fused\": {\"local\": 8, \"steps_per_launch\": 5}}",
             mname, key);
    expect_refused(text, "entry 'fused' is malformed");
    /* Past BCL_MAX_TUNED_BYTES the file is refused before it is read: a
     * valid start followed by 16 MiB of spaces. */
    size_t big = (size_t)(16 << 20) + 64;
    char *huge = malloc(big + 1);
    assert_non_null(huge);
    int head = snprintf(huge, big + 1, "{\"format\": \"ballcl-tuned/1\"");
    memset(huge + head, ' ', big - (size_t)head - 1);
    huge[big - 1] = '}';
    huge[big] = '\0';
    expect_refused(huge, "is larger than 16 MiB");
    free(huge);
    /* A file with no entries at all is valid and tunes nothing. */
    snprintf(text, sizeof text,
             "{\"format\": \"ballcl-tuned/1\", \"model\": \"%s\", \"device\": {\"key\": \"%s\"}, "
             "\"single\": null}",
             mname, key);
    char path[4096];
    assert_int_equal(bcl_tuned_path(&d, bcl_models[0], path, sizeof path, &e), BCL_OK);
    write_text(path, text);
    bcl_tuned t;
    assert_int_equal(bcl_tuned_load(&d, bcl_models[0], &t, &e), BCL_OK);
    assert_false(t.single.found || t.fused.found);
}

/* A cache path through a plain file cannot be created, even by root: the
 * save fails with a message naming the folder and writes nothing. */
static void test_unwritable_folder(void **state)
{
    (void)state;
    char file[512];
    snprintf(file, sizeof file, "%s/plain-file", tmpdir);
    write_text(file, "x");
    char sub[600];
    snprintf(sub, sizeof sub, "%s/cache", file);
    setenv("BALLCL_CACHE_DIR", sub, 1);
    bcl_device_info d = fake_device();
    bcl_tune_candidate cand[2];
    bcl_tune_result r = fake_result(cand);
    bcl_error e = {0};
    char path[4096] = "";
    bcl_outputs o = {0};
    (void)r;
    assert_int_equal(bcl_tuned_open(&d, bcl_models[0], &o, path, sizeof path, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "cannot create cache folder"));
    assert_non_null(strstr(e.msg, file)); /* the component that is not a folder */
    assert_string_equal(path, "");
}

int main(void)
{
    if (test_tmpdir(tmpdir, sizeof tmpdir, "test_tuned"))
        return 1;
    unsetenv("BALLCL_FAULT");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_path_and_key, setup),
        cmocka_unit_test_setup(test_missing_is_not_found, setup),
        cmocka_unit_test_setup(test_round_trip, setup),
        cmocka_unit_test_setup(test_refuses_damaged_files, setup),
        cmocka_unit_test_setup(test_unwritable_folder, setup),
    };
    return removed_after(cmocka_run_group_tests(tests, NULL, NULL), tmpdir);
}
