/*
 * Unit tests (no device) of the pure parts of measuring and tuning: the
 * statistics, variant names, the default variant and K rules, the local
 * sizes a sweep tries, and the OpenMP host loop, which must give the C
 * reference's bits for every model.
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

#include <stdlib.h>
#include <string.h>

static void test_stats(void **state)
{
    (void)state;
    bcl_stats s;
    double odd[] = {5, 1, 3};
    bcl_stats_compute(odd, 3, &s);
    assert_true(s.median == 3 && s.min == 1 && s.max == 5 && s.count == 3);
    double even[] = {4, 1, 3, 10};
    bcl_stats_compute(even, 4, &s);
    assert_true(s.median == 3.5 && s.min == 1 && s.max == 10 && s.count == 4);
    double one[] = {7};
    bcl_stats_compute(one, 1, &s);
    assert_true(s.median == 7 && s.min == 7 && s.max == 7);
    bcl_stats_compute(one, 0, &s);
    assert_int_equal(s.count, 0);
}

static void test_variant_names(void **state)
{
    (void)state;
    assert_int_equal(bcl_variant_balls(NULL), 1);
    assert_int_equal(bcl_variant_balls(""), 1);
    assert_int_equal(bcl_variant_balls("x8"), 8);
    assert_int_equal(bcl_variant_balls("x16"), 16);
    assert_int_equal(bcl_variant_balls("wide_x32"), 32);
    assert_int_equal(bcl_variant_balls("wide"), 1);
    assert_int_equal(bcl_variant_balls("x"), 1);
    assert_int_equal(bcl_variant_balls("x0"), 1);
    assert_int_equal(bcl_variant_balls("x12a"), 1);
    char buf[64];
    bcl_kernel_suffix(false, NULL, buf, sizeof buf);
    assert_string_equal(buf, "step");
    bcl_kernel_suffix(true, "", buf, sizeof buf);
    assert_string_equal(buf, "steps");
    bcl_kernel_suffix(true, "x16", buf, sizeof buf);
    assert_string_equal(buf, "steps_x16");
    bcl_kernel_suffix(false, "x8", buf, sizeof buf);
    assert_string_equal(buf, "step_x8");
}

static void test_variant_rule(void **state)
{
    (void)state;
    bcl_variant list[] = {{"", 1}, {"x8", 8}, {"x16", 16}, {"x32", 32}, {"x64", 64}};
    /* Four sets of the native width: x32 on 8-wide AVX2, x64 on AVX-512. */
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 8, 4, true, list, 5), "x32");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 16, 4, true, list, 5), "x64");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 4, 4, true, list, 5), "x16");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 0, 4, true, list, 5), "x16");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 1, 4, true, list, 5), "");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 16, 4, false, list, 5), "");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_GPU, 8, 4, true, list, 5), "");
    /* Two sets (the bounce model): x16 on AVX2, x32 on AVX-512; no sets
     * given counts as one. */
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 8, 2, true, list, 5), "x16");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 16, 2, true, list, 5), "x32");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 8, 0, true, list, 5), "x8");
    /* The largest there is when the wanted one is missing. */
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 16, 4, true, list, 3), "x16");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 8, 4, true, list, 2), "x8");
    assert_string_equal(bcl_variant_default(BCL_DEVICE_CPU, 8, 4, true, list, 1), "");
    /* Underfilled: every compute unit gets a work-item. 1000 balls on 64
     * units: x32 gives 32 items, x16 63, x8 125. */
    assert_string_equal(bcl_variant_default_for(BCL_DEVICE_CPU, 8, 4, true, list, 5, 1000, 64),
                        "x8");
    assert_string_equal(bcl_variant_default_for(BCL_DEVICE_CPU, 8, 4, true, list, 5, 1000, 2),
                        "x32");
    assert_string_equal(bcl_variant_default_for(BCL_DEVICE_CPU, 8, 4, true, list, 5, 10, 64), "");
    assert_string_equal(bcl_variant_default_for(BCL_DEVICE_CPU, 8, 4, true, list, 5, 0, 64), "x32");
}

static void test_k_rule(void **state)
{
    (void)state;
    const char *why = NULL;
    double ms = 0;
    /* The smallest K whose fixed cost is at most 2% of its steps:
     * 10 us / (0.02 * 1 us) = 500 steps, 0.51 ms. */
    assert_int_equal(bcl_k_rule(10, 1, 0, 50, 0.02, &why, &ms), 500);
    assert_string_equal(why, "overhead");
    assert_true(ms > 0.509 && ms < 0.511);
    /* S bounds it: the whole run in one launch. */
    assert_int_equal(bcl_k_rule(10, 1, 300, 50, 0.02, &why, NULL), 300);
    assert_string_equal(why, "steps");
    assert_int_equal(bcl_k_rule(10, 1, 500, 50, 0.02, &why, NULL), 500);
    assert_string_equal(why, "steps");
    assert_int_equal(bcl_k_rule(10, 1, 501, 50, 0.02, &why, NULL), 500);
    assert_string_equal(why, "overhead");
    /* The budget bounds it, aimed at 80% of it: 1 ms fixed, 10 us a step:
     * 5000 wanted, but (0.8 * 50 ms - 1 ms) / 10 us = 3900 fit. */
    assert_int_equal(bcl_k_rule(1000, 10, 0, 50, 0.02, &why, &ms), 3900);
    assert_string_equal(why, "budget");
    assert_true(ms <= 40.0 + 1e-9);
    /* A smaller budget, a smaller K; S below both wins. */
    assert_int_equal(bcl_k_rule(1000, 10, 0, 5, 0.02, &why, NULL), 300);
    assert_string_equal(why, "budget");
    assert_int_equal(bcl_k_rule(1000, 10, 100, 5, 0.02, &why, NULL), 100);
    assert_string_equal(why, "steps");
    /* One step longer than the budget: still one step a launch. */
    assert_int_equal(bcl_k_rule(10, 60000, 0, 50, 0.02, &why, NULL), 1);
    assert_string_equal(why, "budget");
    /* Nothing to pay off: one step a launch is enough. */
    assert_int_equal(bcl_k_rule(0, 5, 0, 50, 0.02, &why, NULL), 1);
    assert_string_equal(why, "overhead");
    /* Over a grid of costs: K >= 1, K <= S, and a launch within the
     * budget whenever one step with the fixed cost fits in it. */
    double fixed[] = {0, 0.5, 5, 50, 500, 5000, 40000};
    double step[] = {1e-4, 0.003, 0.1, 1, 30, 1000, 20000};
    uint64_t steps[] = {0, 1, 2, 999, 10000, 2000000000ull};
    double budgets[] = {0.1, 1, 50, 1000};
    for (size_t a = 0; a < sizeof fixed / sizeof *fixed; a++)
        for (size_t b = 0; b < sizeof step / sizeof *step; b++)
            for (size_t c = 0; c < sizeof steps / sizeof *steps; c++)
                for (size_t d = 0; d < sizeof budgets / sizeof *budgets; d++) {
                    unsigned k =
                        bcl_k_rule(fixed[a], step[b], steps[c], budgets[d], 0.02, &why, &ms);
                    assert_true(k >= 1);
                    assert_true(steps[c] == 0 || k <= steps[c]);
                    assert_true(k <= (1u << 24));
                    if (fixed[a] + step[b] <= budgets[d] * 1e3)
                        assert_true(ms <= budgets[d] * (1 + 1e-12));
                    assert_true(strcmp(why, "overhead") == 0 || strcmp(why, "budget") == 0 ||
                                strcmp(why, "steps") == 0);
                }
    assert_int_equal(bcl_default_k(BCL_DEVICE_ACCELERATOR), BCL_DEFAULT_K);
    assert_int_equal(bcl_default_k(BCL_DEVICE_CPU), BCL_DEFAULT_K_CPU);
}

static void test_launch_budget_parse(void **state)
{
    (void)state;
    bcl_error e = {0};
    double ms = 0;
    assert_int_equal(bcl_launch_budget_parse("0.5", "--launch-budget-ms", &ms, &e), BCL_OK);
    assert_true(ms == 0.5);
    assert_int_equal(bcl_launch_budget_parse("100", "--launch-budget-ms", &ms, &e), BCL_OK);
    assert_true(ms == 100);
    const char *bad[] = {"0", "-1", "abc", "", "5ms", "1e9", "nan", "inf", "0.01"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(bcl_launch_budget_parse(bad[i], "--launch-budget-ms", &ms, &e),
                         BCL_EXIT_INPUT);
        assert_non_null(strstr(e.msg, "--launch-budget-ms"));
        assert_non_null(strstr(e.msg, "expected milliseconds"));
        bcl_error_clear(&e);
    }
    setenv("BALLCL_LAUNCH_BUDGET_MS", "20", 1);
    assert_int_equal(bcl_launch_budget_env(&ms, &e), BCL_OK);
    assert_true(ms == 20);
    setenv("BALLCL_LAUNCH_BUDGET_MS", "soon", 1);
    assert_int_equal(bcl_launch_budget_env(&ms, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "BALLCL_LAUNCH_BUDGET_MS"));
    bcl_error_clear(&e);
    unsetenv("BALLCL_LAUNCH_BUDGET_MS");
    assert_int_equal(bcl_launch_budget_env(&ms, &e), BCL_OK);
    assert_true(ms == BCL_LAUNCH_BUDGET_MS);
}

static void test_launch_costs_estimate(void **state)
{
    (void)state;
    bcl_launch_costs k = {.known = true,
                          .launch_us = 5,
                          .io_ns_per_ball = 2,
                          .step_ns_per_ball = 0.1,
                          .step_floor_us = 0.5};
    double fixed, step;
    /* Few balls: the latency floor. */
    bcl_launch_costs_estimate(&k, 1000, &fixed, &step);
    assert_true(step == 0.5);
    assert_true(fixed > 6.999 && fixed < 7.001);
    /* Many: the rate. */
    bcl_launch_costs_estimate(&k, 1000000, &fixed, &step);
    assert_true(step > 99.99 && step < 100.01);
    assert_true(fixed > 2004.99 && fixed < 2005.01);
}

static void test_local_sizes(void **state)
{
    (void)state;
    size_t l[32];
    size_t n = bcl_tune_local_sizes(32, 1024, 100000, l, 32);
    size_t want[] = {32, 64, 128, 256, 512, 1024};
    assert_int_equal(n, 6);
    assert_memory_equal(l, want, sizeof want);
    /* Few work-items: nothing much larger than they are. */
    n = bcl_tune_local_sizes(8, 4096, 20, l, 32);
    assert_int_equal(n, 2);
    assert_int_equal(l[0], 8);
    assert_int_equal(l[1], 16);
    /* Always at least one size. */
    n = bcl_tune_local_sizes(64, 1024, 1, l, 32);
    assert_int_equal(n, 1);
    assert_int_equal(l[0], 64);
    /* A preferred multiple above the limit falls back to 1. */
    n = bcl_tune_local_sizes(64, 16, 1000, l, 32);
    assert_int_equal(n, 5);
    assert_int_equal(l[0], 1);
    assert_int_equal(l[4], 16);
    /* The cap is respected. */
    n = bcl_tune_local_sizes(1, 4096, 100000, l, 3);
    assert_int_equal(n, 3);
}

/* The OpenMP host loop and the reference give the same bits, for every
 * model, an N that is no multiple of anything and random data. */
static void test_openmp_matches_reference(void **state)
{
    (void)state;
    const size_t n = 5003;
    const uint64_t steps = 9;
    for (size_t mi = 0; mi < bcl_model_count; mi++) {
        const bcl_model *m = bcl_models[mi];
        float p[BCL_MAX_PARAMS] = {0};
        bcl_model_param_defaults(m, p);
        float *a = malloc(n * 4 * sizeof(float)), *b = malloc(n * 4 * sizeof(float));
        assert_non_null(a);
        assert_non_null(b);
        m->init(a, 0, n, BCL_INIT_RANDOM, 42, p);
        memcpy(b, a, n * 4 * sizeof(float));
        bcl_host_steps(m, p, a, n, steps, false);
        bcl_host_steps(m, p, b, n, steps, true);
        assert_memory_equal(a, b, n * 4 * sizeof(float));
        free(a);
        free(b);
    }
    assert_true(bcl_host_threads() >= 1);
}

/* Host measurement: positive, ordered figures and the steps asked for. */
static void test_measure_host(void **state)
{
    (void)state;
    const bcl_model *m = bcl_models[0];
    float p[BCL_MAX_PARAMS] = {0};
    bcl_model_param_defaults(m, p);
    const size_t n = 1000;
    float *s = malloc(n * 4 * sizeof(float));
    assert_non_null(s);
    m->init(s, 0, n, BCL_INIT_SEED, 1, p);
    bcl_measure_opts mo = {.repeats = 3, .steps = 20};
    bcl_measurement out;
    bcl_error e = {0};
    assert_int_equal(bcl_measure_host(m, p, s, n, false, &mo, &out, &e), BCL_OK);
    assert_int_equal(out.steps, 20);
    assert_int_equal(out.wall_us.count, 3);
    assert_true(out.wall_us.min <= out.wall_us.median && out.wall_us.median <= out.wall_us.max);
    assert_true(out.wall_us.min >= 0);
    /* Adaptive steps stay within the cap. */
    bcl_measure_opts ad = {.repeats = 2, .repeat_ms = 1, .max_steps = 50};
    assert_int_equal(bcl_measure_host(m, p, s, n, true, &ad, &out, &e), BCL_OK);
    assert_true(out.steps >= 1 && out.steps <= 50);
    free(s);
}

/* The profiling check (src/ocl/clock_check.c) on synthetic timestamps:
 * what rusticl 22.3 gives (0, 1, 2, 3 ns for every event), an end before
 * the start, a device slower than the host saw, a rate no memory has, and
 * ordinary good spans, including ones at the edge of the slack. */
static void test_profiling_check(void **state)
{
    (void)state;
    char why[256];
    /* rusticl: 10 launches of 100000 balls from start 2 to end 3. */
    bcl_span_check rusticl = {
        .start_ns = 2, .end_ns = 3, .host_ms = 1.2, .launches = 10, .bytes = 10 * 100000.0 * 32};
    assert_false(bcl_profiling_plausible(&rusticl, why, sizeof why));
    assert_non_null(strstr(why, "10 commands took 1 ns"));
    assert_non_null(strstr(why, "under 10 ns per command"));
    /* Zero timestamps (a runtime that fills nothing in). */
    bcl_span_check zero = {.start_ns = 0, .end_ns = 0, .host_ms = 1, .launches = 1};
    assert_false(bcl_profiling_plausible(&zero, why, sizeof why));
    assert_non_null(strstr(why, "not after its start"));
    /* End before start (an unsigned difference would be 584 years). */
    bcl_span_check backwards = {
        .start_ns = 5000000, .end_ns = 4000000, .host_ms = 2, .launches = 1};
    assert_false(bcl_profiling_plausible(&backwards, why, sizeof why));
    assert_non_null(strstr(why, "ends at 4000000 ns, not after its start at 5000000 ns"));
    /* 3 ms on the device for work the host saw done in 1 ms. */
    bcl_span_check slow = {.start_ns = 1000, .end_ns = 3001000, .host_ms = 1.0, .launches = 1};
    assert_false(bcl_profiling_plausible(&slow, why, sizeof why));
    assert_non_null(strstr(why, "the device took 3000000 ns by its clock for work the host saw"));
    /* Within the slack (2% + 5 us): believed; just beyond it: not. */
    bcl_span_check edge = {.start_ns = 0, .end_ns = 1025000, .host_ms = 1.0, .launches = 1};
    edge.start_ns = 1;
    edge.end_ns = 1 + 1025000;
    assert_true(bcl_profiling_plausible(&edge, why, sizeof why));
    assert_string_equal(why, "");
    edge.end_ns = 1 + 1025001;
    assert_false(bcl_profiling_plausible(&edge, NULL, 0));
    /* 64 MiB copied in 1 us: 134 TB/s, above the ceiling. */
    bcl_span_check copy = {.start_ns = 100,
                           .end_ns = 1100,
                           .host_ms = 0.5,
                           .launches = 1,
                           .bytes = 2.0 * 64 * 1048576};
    assert_false(bcl_profiling_plausible(&copy, why, sizeof why));
    assert_non_null(strstr(why, "above the 100000 GB/s"));
    /* An H200-like span: 16M balls in 130 us per step (4.1 TB/s), 100
     * launches, host a little longer. */
    bcl_span_check h200 = {.start_ns = 1000000,
                           .end_ns = 1000000 + 13000000,
                           .host_ms = 13.2,
                           .launches = 100,
                           .bytes = 100 * 16777216.0 * 32};
    assert_true(bcl_profiling_plausible(&h200, why, sizeof why));
    /* What PoCL 3.1 reported here for 143 launches of 1024 balls: 21 ns each,
     * 1.5 TB/s on two 2 GHz cores. Under the 100 TB/s of any memory, above
     * what two cores can move (256 bytes per unit and cycle: 1 TB/s). */
    bcl_span_check pocl_small = {.start_ns = 1000,
                                 .end_ns = 1000 + 3115,
                                 .host_ms = 0.8,
                                 .launches = 143,
                                 .bytes = 143 * 1024.0 * 32,
                                 .flops = 143 * 1024.0 * 3,
                                 .compute_units = 2,
                                 .clock_mhz = 1996};
    assert_false(bcl_profiling_plausible(&pocl_small, why, sizeof why));
    assert_non_null(strstr(why, "its compute units and clock can move"));
    pocl_small.compute_units = 0; /* unknown: the general ceiling only */
    assert_true(bcl_profiling_plausible(&pocl_small, NULL, 0));
    /* K = 1000 steps of 1024 balls in 1 us: 3 TFLOP/s, above two cores. */
    bcl_span_check fused = {.start_ns = 0,
                            .end_ns = 1000,
                            .host_ms = 0.1,
                            .launches = 1,
                            .bytes = 1024.0 * 32,
                            .flops = 1000 * 1024.0 * 3,
                            .compute_units = 2,
                            .clock_mhz = 1996};
    fused.start_ns = 5;
    fused.end_ns = 1005;
    assert_false(bcl_profiling_plausible(&fused, why, sizeof why));
    assert_non_null(strstr(why, "GFLOP/s"));
    h200.compute_units = 132;
    h200.clock_mhz = 1980;
    h200.flops = 100 * 16777216.0 * 3;
    assert_true(bcl_profiling_plausible(&h200, why, sizeof why));
    /* What PoCL reported on this loaded machine for 10 launches of K = 100
     * steps of 100000 balls: 1.1 us a step, 272 GFLOP/s of adds on two
     * AVX2 cores (8 lanes) at 2445 MHz, whose peak is at most 235. */
    bcl_span_check loaded = {.start_ns = 7,
                             .end_ns = 7 + 1103000,
                             .host_ms = 67.9,
                             .launches = 10,
                             .bytes = 10 * 100000.0 * 32,
                             .flops = 1000 * 100000.0 * 3,
                             .compute_units = 2,
                             .clock_mhz = 2445,
                             .cpu_vector_width = 8};
    assert_false(bcl_profiling_plausible(&loaded, why, sizeof why));
    assert_non_null(strstr(why, "two vector FMAs per core"));
    loaded.end_ns = 7 + 16214000; /* the idle machine's 16.2 us a step */
    assert_true(bcl_profiling_plausible(&loaded, why, sizeof why));
    /* A PoCL-like span with no host time known (0): only the other rules. */
    bcl_span_check pocl = {.start_ns = 500, .end_ns = 500 + 16000, .launches = 1, .bytes = 32000};
    assert_true(bcl_profiling_plausible(&pocl, NULL, 0));
}

/* The verdict is per device, keeps the first reason, and a device once
 * marked stays marked even for a good span. */
static void test_profiling_verdict(void **state)
{
    (void)state;
    bcl_device_info a = {.device = (void *)(uintptr_t)0x1000},
                    b = {.device = (void *)(uintptr_t)0x2000};
    bcl_span_check good = {.start_ns = 1000, .end_ns = 21000, .host_ms = 0.03, .launches = 1};
    bcl_span_check bad = {.start_ns = 2, .end_ns = 3, .host_ms = 1, .launches = 1};
    assert_null(bcl_profiling_unusable(&a));
    assert_true(bcl_profiling_check(a.device, &good));
    assert_null(bcl_profiling_unusable(&a));
    assert_false(bcl_profiling_check(a.device, &bad));
    const char *why = bcl_profiling_unusable(&a);
    assert_non_null(why);
    assert_non_null(strstr(why, "1 command took 1 ns"));
    assert_false(bcl_profiling_check(a.device, &good));
    bcl_profiling_reject(a.device, "another reason");
    assert_string_equal(bcl_profiling_unusable(&a), why);
    assert_null(bcl_profiling_unusable(&b));
    assert_true(bcl_profiling_check(b.device, &good));
    setenv("BALLCL_TEST_PROFILING", "unusable", 1);
    assert_non_null(bcl_profiling_unusable(&b));
    unsetenv("BALLCL_TEST_PROFILING");
    assert_null(bcl_profiling_unusable(&b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_variant_names),
        cmocka_unit_test(test_variant_rule),
        cmocka_unit_test(test_k_rule),
        cmocka_unit_test(test_launch_budget_parse),
        cmocka_unit_test(test_launch_costs_estimate),
        cmocka_unit_test(test_local_sizes),
        cmocka_unit_test(test_openmp_matches_reference),
        cmocka_unit_test(test_measure_host),
        cmocka_unit_test(test_profiling_check),
        cmocka_unit_test(test_profiling_verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
