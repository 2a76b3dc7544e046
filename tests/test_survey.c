/*
 * Unit tests (no device) of the survey's pure parts: the reader (every
 * class of bad input, and every required key of the committed surveys),
 * strings that are not UTF-8, the extension list, the N rules, the
 * plausibility flags and the drivers' cache switches.
 *
 * Argument 1: the folder of committed surveys (docs/surveys); argument 2
 * (optional): a folder of more surveys, the fuzz corpus's, whose *.json
 * files include a schema 3 survey of every figure.
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
#include "survey/survey.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *surveys_dir, *more_dir;

/* Reads buf (len bytes) and expects an input error holding want. */
static void expect_reject(const char *buf, size_t len, const char *want)
{
    bcl_error e = {0};
    json_t *doc = (json_t *)1;
    int rc = bcl_survey_read(buf, len, "t.json", &doc, &e);
    if (rc != BCL_EXIT_INPUT || !strstr(e.msg, want))
        fail_msg("read of %zu bytes: rc %d, message '%s', wanted '%s'", len, rc, e.msg, want);
    assert_null(doc);
    assert_non_null(strstr(e.msg, "'t.json'"));
    bcl_error_clear(&e);
}

static void expect_reject_text(const char *text, const char *want)
{
    expect_reject(text, strlen(text), want);
}

static void test_read_rejects(void **state)
{
    (void)state;
    expect_reject_text("", "not valid JSON");
    expect_reject_text("{", "not valid JSON");
    expect_reject_text("{\"schema\": \"ballcl-survey/1\",}", "not valid JSON");
    expect_reject_text("{\"schema\": \"ballcl-survey/1\", \"schema\": \"ballcl-survey/1\"}",
                       "not valid JSON");
    expect_reject("{\"schema\"\0: 1}", 14, "not valid JSON");
    expect_reject_text("[1, 2]", "not a ballcl survey");
    expect_reject_text("{\"schema\": 1}", "not a ballcl survey");
    expect_reject_text("{\"devices\": []}", "not a ballcl survey");
    expect_reject_text("{\"schema\": \"ballcl-survey/4\"}",
                       "schema 'ballcl-survey/4' is not supported: expected ballcl-survey/1, "
                       "ballcl-survey/2 and ballcl-survey/3");
    expect_reject_text("{\"schema\": \"ballcl-bench/1\"}", "is not supported");
    expect_reject_text("{\"schema\": \"ballcl-survey/1\"}", "missing key 'ballcl_version'");
    /* Nesting far deeper than any survey: refused, not a stack overflow. */
    size_t depth = 100000;
    char *deep = malloc(2 * depth);
    assert_non_null(deep);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    expect_reject(deep, 2 * depth, "not valid JSON");
    free(deep);
}

static void test_load_errors(void **state)
{
    (void)state;
    bcl_error e = {0};
    char *doc;
    assert_int_equal(bcl_survey_load("/nonexistent/survey.json", &doc, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "cannot read '/nonexistent/survey.json'"));
    bcl_error_clear(&e);
    assert_int_equal(bcl_survey_load("/", &doc, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "'/'"));
    bcl_error_clear(&e);
}

/* Calls fn(path) for every survey file of dir. Returns the count. */
static size_t each_in(const char *dir, void (*fn)(const char *path))
{
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("cannot open '%s'", dir);
    size_t count = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        fn(path);
        count++;
    }
    closedir(d);
    return count;
}

/* Every committed survey, and those of the second folder when given. */
static size_t each_survey(void (*fn)(const char *path))
{
    return each_in(surveys_dir, fn) + (more_dir ? each_in(more_dir, fn) : 0);
}

static void load_ok(const char *path)
{
    bcl_error e = {0};
    char *doc;
    if (bcl_survey_load(path, &doc, &e) != BCL_OK)
        fail_msg("'%s' is refused: %s", path, e.msg);
    free(doc);
}

static void test_committed_surveys_read(void **state)
{
    (void)state;
    assert_true(each_survey(load_ok) >= 1);
}

/* A schema 3 survey has the version 3 keys: deleting one from a version 3
 * document is refused, and the same document labelled version 2 without
 * them is read. */
static size_t v3_seen;

static void version3_keys(const char *path)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    assert_non_null(doc);
    if (strcmp(json_string_value(json_object_get(doc, "schema")), BCL_SURVEY_SCHEMA) != 0) {
        json_decref(doc);
        return;
    }
    v3_seen++;
    json_t *dev = json_array_get(json_object_get(doc, "devices"), 0);
    json_t *m = json_object_get(dev, "measured");
    static const char *const keys[] = {"read_only_gb_per_s", "fma_gflop_per_s",
                                       "int_add_gop_per_s"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_non_null(json_object_get(m, keys[i]));
    assert_non_null(json_object_get(json_object_get(m, "transfer"), "mapped_write_gb_per_s"));
    assert_true(json_is_object(json_object_get(dev, "capabilities")));
    assert_true(json_is_array(json_object_get(doc, "platforms")));
    json_t *caps = json_incref(json_object_get(dev, "capabilities"));
    json_object_del(dev, "capabilities");
    char *text = json_dumps(doc, 0);
    expect_reject_text(text, "missing key 'capabilities'");
    free(text);
    /* Version 2 lacks them all. */
    json_object_set_new(doc, "schema", json_string(BCL_SURVEY_SCHEMA_V2));
    json_object_del(doc, "platforms");
    json_object_del(json_object_get(m, "transfer"), "mapped_write_gb_per_s");
    json_object_del(json_object_get(m, "transfer"), "mapped_read_gb_per_s");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        json_object_del(m, keys[i]);
    text = json_dumps(doc, 0);
    json_t *back = NULL;
    bcl_error e = {0};
    if (bcl_survey_read(text, strlen(text), "v2", &back, &e) != BCL_OK)
        fail_msg("a version 2 document without the version 3 keys is refused: %s", e.msg);
    json_decref(back);
    free(text);
    json_decref(caps);
    json_decref(doc);
}

static void test_version3_keys(void **state)
{
    (void)state;
    v3_seen = 0;
    each_survey(version3_keys);
    if (more_dir)
        assert_true(v3_seen >= 1);
}

/* Deletes, one at a time, every key of every object below node (except the
 * entries of the free-form maps "errors" and "models", which may be empty)
 * and checks that the reader refuses the result, naming the key. */
static json_t *whole;
static size_t deletions;

static void delete_each(json_t *node)
{
    if (json_is_array(node)) {
        /* The first element stands for all: they share one description. */
        if (json_array_size(node))
            delete_each(json_array_get(node, 0));
        return;
    }
    if (!json_is_object(node))
        return;
    /* The keys first: a key deleted and set again moves to the end of the
     * object's order, so iterating while doing so would never end. */
    size_t nkeys = json_object_size(node), i = 0;
    char **keys = calloc(nkeys, sizeof *keys);
    assert_non_null(keys);
    const char *key;
    json_t *v;
    json_object_foreach(node, key, v)
    {
        keys[i++] = strdup(key);
    }
    for (i = 0; i < nkeys; i++) {
        const char *name = keys[i];
        bool is_map = strcmp(name, "errors") == 0 || strcmp(name, "models") == 0;
        /* Keys added within a version (docs/SURVEY.md) may be missing. */
        if (strcmp(name, "profiling_usable") == 0 || strcmp(name, "profiling_note") == 0 ||
            strcmp(name, "add_gflop_per_s") == 0 || strcmp(name, "fp64_gflop_per_s") == 0 ||
            strcmp(name, "half_gflop_per_s") == 0) {
            v = json_incref(json_object_get(node, name));
            json_object_del(node, name);
            char *text = json_dumps(whole, 0);
            json_t *doc = NULL;
            bcl_error e = {0};
            assert_int_equal(bcl_survey_read(text, strlen(text), "t", &doc, &e), BCL_OK);
            json_decref(doc);
            free(text);
            json_object_set_new(node, name, v);
            continue;
        }
        v = json_incref(json_object_get(node, name));
        json_object_del(node, name);
        char *text = json_dumps(whole, 0);
        char want[160];
        /* Without "schema" the file is not a survey at all. */
        if (strcmp(name, "schema") == 0)
            snprintf(want, sizeof want, "not a ballcl survey");
        else
            snprintf(want, sizeof want, "missing key '%s'", name);
        expect_reject_text(text, want);
        free(text);
        deletions++;
        json_object_set_new(node, name, v);
        if (is_map) {
            json_t *entry;
            const char *k;
            json_object_foreach(v, k, entry)
            {
                delete_each(entry);
            }
        } else {
            delete_each(v);
        }
    }
    for (i = 0; i < nkeys; i++)
        free(keys[i]);
    free(keys);
}

static void required_keys(const char *path)
{
    json_error_t je;
    whole = json_load_file(path, 0, &je);
    assert_non_null(whole);
    deletions = 0;
    delete_each(whole);
    /* At least the documented keys of one device and one model. */
    assert_true(deletions > 60);
    json_decref(whole);
}

static void test_every_required_key(void **state)
{
    (void)state;
    each_survey(required_keys);
}

/* Wrong types are refused with what was expected and found. */
static void wrong_types(const char *path)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    assert_non_null(doc);
    json_t *dev = json_array_get(json_object_get(doc, "devices"), 0);
    json_t *measured = json_object_get(dev, "measured");
    json_t *small = json_object_get(measured, "small");
    static const struct {
        const char *key;
        const char *value;
        const char *want;
    } cases[] = {
        {"n", "\"1024\"", "devices[0].measured.small.n: expected an integer >= 0, found a string"},
        {"us_per_step", "-1.5",
         "small.us_per_step: expected a number >= 0 or null, found a "
         "negative number"},
        {"local", "\"auto\"", "small.local: expected an integer >= 0, \"driver\" or null"},
        {"validated", "1", "small.validated: expected true or false or null, found an integer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *old = json_incref(json_object_get(small, cases[i].key));
        json_object_set_new(small, cases[i].key, json_loads(cases[i].value, JSON_DECODE_ANY, &je));
        char *text = json_dumps(doc, 0);
        expect_reject_text(text, cases[i].want);
        free(text);
        json_object_set_new(small, cases[i].key, old);
    }
    json_array_clear(json_object_get(doc, "devices"));
    char *text = json_dumps(doc, 0);
    expect_reject_text(text, "devices: expected at least one device");
    free(text);
    json_decref(doc);
}

static void test_wrong_types(void **state)
{
    (void)state;
    each_survey(wrong_types);
}

static bcl_device_info fake_device(cl_device_type type)
{
    bcl_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.platform_name, sizeof d.platform_name, "Test Platform");
    snprintf(d.name, sizeof d.name, "Test Device");
    snprintf(d.vendor, sizeof d.vendor, "Test Vendor");
    snprintf(d.version, sizeof d.version, "OpenCL 3.0");
    snprintf(d.driver, sizeof d.driver, "1.0");
    snprintf(d.c_version, sizeof d.c_version, "OpenCL C 1.2");
    d.type = type;
    d.compute_units = 2;
    d.clock_mhz = 1000;
    d.max_work_group = 1024;
    d.max_item_sizes[0] = d.max_item_sizes[1] = 1024;
    d.max_item_sizes[2] = 64;
    d.global_mem = (cl_ulong)16 << 30;
    d.max_alloc = (cl_ulong)4 << 30;
    d.local_mem = 65536;
    return d;
}

static void test_text_not_utf8(void **state)
{
    (void)state;
    bcl_device_info d = fake_device(CL_DEVICE_TYPE_GPU);
    /* Invalid start bytes, an overlong '/', a surrogate, a truncated
     * sequence; then valid two- and three-byte characters, kept. */
    snprintf(d.name, sizeof d.name,
             "\xff\xfe"
             "GPU \xc0\xaf \xed\xa0\x80 \xc3");
    snprintf(d.vendor, sizeof d.vendor, "\xc3\x9cml\xc3\xa4ut \xe2\x82\xac");
    snprintf(d.driver, sizeof d.driver, "tab\there \"quoted\" \x01");
    json_t *dev = bcl_survey_device_info(&d, NULL, 0);
    assert_non_null(dev);
    json_t *id = json_object_get(dev, "identity");
    assert_string_equal(json_string_value(json_object_get(id, "name")), "??GPU ?? ??? ?");
    assert_string_equal(json_string_value(json_object_get(id, "vendor")),
                        "\xc3\x9cml\xc3\xa4ut \xe2\x82\xac");
    /* Control characters are escaped by jansson, so the text reads back. */
    char *text = json_dumps(dev, 0);
    assert_non_null(text);
    json_error_t je;
    json_t *back = json_loads(text, 0, &je);
    assert_non_null(back);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(back, "identity"), "driver")),
        "tab\there \"quoted\" \x01");
    json_decref(back);
    free(text);
    json_decref(dev);
}

static void test_limits(void **state)
{
    (void)state;
    bcl_device_info d = fake_device(CL_DEVICE_TYPE_CPU);
    d.platform_index = 1;
    d.device_index = 2;
    d.fp64 = true;
    json_t *dev = bcl_survey_device_info(
        &d, "cl_khr_fp64_extra cl_khr_fp16 cl_vendor_thing  cl_khr_fp64 cl_khr_subgroups", 8);
    assert_non_null(dev);
    assert_string_equal(json_string_value(json_object_get(dev, "selector")), "1:2");
    json_t *lim = json_object_get(dev, "limits");
    json_t *ext = json_object_get(lim, "extensions");
    /* In the order of interest, whole words only. */
    assert_int_equal(json_array_size(ext), 3);
    assert_string_equal(json_string_value(json_array_get(ext, 0)), "cl_khr_fp64");
    assert_string_equal(json_string_value(json_array_get(ext, 1)), "cl_khr_fp16");
    assert_string_equal(json_string_value(json_array_get(ext, 2)), "cl_khr_subgroups");
    assert_int_equal(json_integer_value(json_object_get(lim, "extensions_total")), 5);
    assert_int_equal(json_integer_value(json_object_get(lim, "preferred_work_group_multiple")), 8);
    assert_int_equal(
        json_integer_value(json_array_get(json_object_get(lim, "max_work_item_sizes"), 2)), 64);
    assert_true(json_is_true(json_object_get(lim, "fp64")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(dev, "identity"), "type")), "cpu");
    json_decref(dev);
    dev = bcl_survey_device_info(&d, NULL, 0);
    lim = json_object_get(dev, "limits");
    assert_true(json_is_null(json_object_get(lim, "preferred_work_group_multiple")));
    assert_int_equal(json_array_size(json_object_get(lim, "extensions")), 0);
    json_decref(dev);
}

static void test_n_rules(void **state)
{
    (void)state;
    bcl_survey_opts o;
    bcl_survey_opts_default(&o, false);
    bcl_device_info gpu = fake_device(CL_DEVICE_TYPE_GPU);
    bcl_device_info cpu = fake_device(CL_DEVICE_TYPE_CPU);
    assert_int_equal(bcl_survey_large_n(&gpu, &o), 1 << 24);
    assert_int_equal(bcl_survey_large_n(&cpu, &o), 1 << 22);
    /* One allocation, and a quarter of the memory, bound it. */
    gpu.max_alloc = 1 << 20;
    assert_int_equal(bcl_survey_large_n(&gpu, &o), (1 << 20) / 16);
    gpu.max_alloc = (cl_ulong)4 << 30;
    gpu.global_mem = (cl_ulong)64 << 20;
    assert_int_equal(bcl_survey_large_n(&gpu, &o), (64 << 20) / 64);
    /* Never below the small N. */
    gpu.global_mem = 1024;
    assert_int_equal(bcl_survey_large_n(&gpu, &o), o.small_n);
    o.large_n = 12345;
    assert_int_equal(bcl_survey_large_n(&cpu, &o), 12345);
    bcl_survey_opts q;
    bcl_survey_opts_default(&q, true);
    assert_int_equal(bcl_survey_large_n(&cpu, &q), 65536);
    assert_true(q.measure.repeats < o.measure.repeats && q.small_n < 1024);
    /* Fused: 65536 balls per compute unit, at least the sweep's N, at most
     * the large N. */
    bcl_survey_opts_default(&o, false);
    cpu.compute_units = 2;
    assert_int_equal(bcl_survey_fused_n(&cpu, &o), 131072);
    cpu.compute_units = 1;
    assert_int_equal(bcl_survey_fused_n(&cpu, &o), 100000 > 65536 ? 100000 : 65536);
    cpu.compute_units = 1000;
    assert_int_equal(bcl_survey_fused_n(&cpu, &o), 1 << 22);
}

static json_t *ballstep(double gb, double rate)
{
    return json_pack("{s:I, s:f, s:f, s:f}", "n", (json_int_t)1000, "us_per_step", 1.0, "gb_per_s",
                     gb, "ball_steps_per_s", rate);
}

static void test_flags(void **state)
{
    (void)state;
    bcl_device_info d = fake_device(CL_DEVICE_TYPE_GPU);
    json_t *dev = bcl_survey_device_info(&d, NULL, 0);
    /* 2 compute units x 1000 MHz x 256 = 5.12e11 operations/s: the seed
     * (3 per ball-step) can do at most 1.7e11 ball-steps/s. */
    json_t *m =
        json_pack("{s:s, s:f, s:o, s:o, s:f, s:{s:{s:o, s:o, s:n}}}", "model", "seed",
                  "copy_gb_per_s", 20000.0, "small", ballstep(50, 1e9), "large",
                  ballstep(10001, 2e11), "fused_ball_steps_per_s", 1.6e11, "models", "bounce",
                  "small", ballstep(1, 1), "large", ballstep(1, 1e13), "fused_ball_steps_per_s");
    json_object_set_new(dev, "measured", m);
    /* The peaks: 512 GFLOP/s at most (1024 for half, two per float32
     * lane), 10000 GB/s at most, a mapped transfer as any other. */
    json_object_set_new(m, "read_only_gb_per_s", json_real(10001));
    json_object_set_new(m, "fma_gflop_per_s", json_real(513));
    json_object_set_new(m, "int_add_gop_per_s", json_real(511));
    json_object_set_new(m, "half_gflop_per_s", json_real(1000));
    json_object_set_new(m, "transfer", json_pack("{s:f}", "mapped_read_gb_per_s", 10001.0));
    assert_int_equal(bcl_survey_flag(dev), 7);
    json_t *flags = json_object_get(dev, "flags");
    const char *want[] = {"measured.copy_gb_per_s",
                          "measured.read_only_gb_per_s",
                          "measured.fma_gflop_per_s",
                          "measured.transfer.mapped_read_gb_per_s",
                          "measured.large.gb_per_s",
                          "measured.large.ball_steps_per_s",
                          "measured.models.bounce.large.ball_steps_per_s"};
    for (size_t i = 0; i < 7; i++) {
        json_t *f = json_array_get(flags, i);
        assert_string_equal(json_string_value(json_object_get(f, "figure")), want[i]);
        assert_true(json_number_value(json_object_get(f, "value")) >
                    json_number_value(json_object_get(f, "limit")));
        assert_non_null(json_string_value(json_object_get(f, "rule")));
    }
    /* A device that reports no clock gives no rate bound: nothing flagged
     * for rates, and null figures are never flagged. */
    json_t *lim = json_object_get(dev, "limits");
    json_object_set_new(lim, "clock_mhz", json_integer(0));
    json_object_set_new(dev, "flags", json_array());
    json_object_set_new(m, "copy_gb_per_s", json_null());
    /* large.gb_per_s, read_only_gb_per_s and the mapped read. */
    assert_int_equal(bcl_survey_flag(dev), 3);
    json_decref(dev);
}

static void test_driver_caches(void **state)
{
    (void)state;
    char note[256];
    unsetenv("POCL_KERNEL_CACHE");
    unsetenv("CUDA_CACHE_DISABLE");
    bcl_survey_driver_caches_off(note, sizeof note);
    assert_string_equal(getenv("POCL_KERNEL_CACHE"), "0");
    assert_string_equal(getenv("CUDA_CACHE_DISABLE"), "1");
    assert_non_null(strstr(note, "POCL_KERNEL_CACHE=0"));
    assert_non_null(strstr(note, "CUDA_CACHE_DISABLE=1"));
    assert_null(strstr(note, "user"));
    /* A value the user chose stays, and the note says the cache is on. */
    setenv("POCL_KERNEL_CACHE", "1", 1);
    bcl_survey_driver_caches_off(note, sizeof note);
    assert_string_equal(getenv("POCL_KERNEL_CACHE"), "1");
    assert_non_null(strstr(note, "POCL_KERNEL_CACHE=1 (PoCL's kernel cache, left on by the user)"));
    unsetenv("POCL_KERNEL_CACHE");
    unsetenv("CUDA_CACHE_DISABLE");
}

static void test_document(void **state)
{
    (void)state;
    bcl_survey_opts o;
    bcl_survey_opts_default(&o, true);
    o.command = "ballcl survey --quick";
    json_t *doc = bcl_survey_document(&o);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "schema")), BCL_SURVEY_SCHEMA);
    assert_string_equal(json_string_value(json_object_get(doc, "command")), o.command);
    assert_true(json_is_true(json_object_get(doc, "quick")));
    json_t *set = json_object_get(doc, "settings");
    assert_int_equal(json_integer_value(json_object_get(set, "small_n")), 256);
    assert_string_equal(json_string_value(json_object_get(set, "driver_caches")), "not changed");
    assert_int_equal(json_array_size(json_object_get(doc, "devices")), 0);
    json_decref(doc);
}

int main(int argc, char **argv)
{
    surveys_dir = argc > 1 ? argv[1] : "docs/surveys";
    more_dir = argc > 2 ? argv[2] : NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_rejects),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_committed_surveys_read),
        cmocka_unit_test(test_version3_keys),
        cmocka_unit_test(test_every_required_key),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_text_not_utf8),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_n_rules),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_driver_caches),
        cmocka_unit_test(test_document),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
