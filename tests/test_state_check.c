/*
 * Device test: the state check (src/ocl/state_check.c, bcl_sim_check_finite)
 * against a host scan. States of several sizes, clean and with NaN, +inf or
 * -inf at the first, the middle and the last float, in one buffer and split
 * over several (BALLCL_TEST_MAX_ALLOC); values next to the edge (FLT_MAX,
 * denormals, -0) count as finite; the flag is zeroed before each check. And
 * bcl_sim_run_read_check: a state that overflows at step 3 passes after 2
 * steps and fails after 3, with the state read back as bcl_sim_run_read_check
 * reads it. And bcl_sim_create_tiled: a block repeated over a state of
 * several sizes, in one buffer and split, read back ball for ball. Exits 77
 * (skipped) without a device.
 */
#include "run/run.h"
#include "models/rng.h"
#define TESTUTIL_DEVICE
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The host's answer: does any float fail isfinite? */
static uint32_t host_scan(const float *f, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!isfinite(f[i]))
            return 1;
    return 0;
}

/* Loads f (n balls) and returns the device's verdict, or 2 on an error. */
static uint32_t device_scan(bcl_sim *s, const float *f, size_t n)
{
    bcl_error e = {0};
    uint32_t flag = 7; /* neither verdict: the check must write it */
    int rc = bcl_sim_load(s, f, n, &e);
    if (rc == BCL_OK)
        rc = bcl_sim_check_finite(s, &flag, &e);
    if (rc == BCL_OK)
        rc = bcl_sim_finish(s, &e);
    if (rc) {
        fprintf(stderr, "FAIL: %s\n", e.msg);
        failures++;
        flag = 2;
    }
    bcl_error_clear(&e);
    return flag;
}

static void check_states(bcl_context *c, const char *how)
{
    bcl_error e = {0};
    const size_t sizes[] = {1, 2, 1031, 4099, 100003};
    const float bad[] = {NAN, INFINITY, -INFINITY};
    const char *bad_name[] = {"NaN", "inf", "-inf"};
    float seed[4] = {0}; /* one ball: x, y, z, w */
    bcl_sim *s = NULL;
    if (bcl_sim_create(c, seed, 1, &s, &e)) {
        fprintf(stderr, "FAIL: %s: %s\n", how, e.msg);
        failures++;
        bcl_error_clear(&e);
        return;
    }
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si], count = 4 * n;
        float *f = malloc(count * sizeof(float));
        if (!f)
            abort();
        bcl_rng r;
        bcl_rng_seed(&r, 11 + si);
        for (size_t i = 0; i < count; i++)
            f[i] = bcl_rng_uniform(&r, -1e3f, 1e3f);
        /* Finite, at the edge: the largest float, a denormal, -0. */
        f[count / 3] = FLT_MAX;
        f[count / 5] = -FLT_MAX;
        f[count - 1] = 1e-45f;
        f[0] = -0.0f;
        uint32_t clean = device_scan(s, f, n);
        CHECK(clean == 0 && host_scan(f, count) == 0, "%s: N %zu clean: device says %u", how, n,
              clean);
        const size_t where[] = {0, count / 2, count - 1};
        for (size_t wi = 0; wi < 3; wi++) {
            for (size_t bi = 0; bi < 3; bi++) {
                float keep = f[where[wi]];
                f[where[wi]] = bad[bi];
                uint32_t got = device_scan(s, f, n);
                CHECK(got == 1 && host_scan(f, count) == 1,
                      "%s: N %zu, %s at float %zu: device says %u", how, n, bad_name[bi], where[wi],
                      got);
                f[where[wi]] = keep;
                /* The flag starts at zero each time: clean again after. */
                got = device_scan(s, f, n);
                CHECK(got == 0, "%s: N %zu clean after %s at %zu: device says %u", how, n,
                      bad_name[bi], where[wi], got);
            }
        }
        free(f);
    }
    printf("%s: %zu buffer(s) for the largest state\n", how, bcl_sim_buffers(s));
    bcl_sim_destroy(s);
}

/* The seed model: z and w grow each step (tests/python/test_refusals.py),
 * so 1e38 overflows to inf at step 3. */
static void check_run(bcl_context *c, const bcl_model *m)
{
    bcl_error e = {0};
    size_t n = 300;
    float p[BCL_MAX_PARAMS] = {0};
    bcl_model_param_defaults(m, p);
    float *init = calloc(4 * n, sizeof(float)), *out = malloc(4 * n * sizeof(float)),
          *want = malloc(4 * n * sizeof(float));
    if (!init || !out || !want)
        abort();
    m->init(init, 0, n, BCL_INIT_RANDOM, 5, p);
    init[4 * 123 + 2] = 1e38f;
    init[4 * 123 + 3] = 1e38f;
    for (uint64_t steps = 0; steps <= 3; steps++) {
        bcl_plan_request r = {.params = p,
                              .steps_per_launch = 1,
                              .sync = BCL_SYNC_END,
                              .variant = "",
                              .balls = n,
                              .steps = steps ? steps : 1};
        bcl_local_parse("auto", &r.launch, &e);
        bcl_plan pl;
        bcl_sim *s = NULL;
        bcl_sim_timing t;
        uint32_t flag = 7;
        if (bcl_plan_resolve(c, &r, &pl, &e) || bcl_sim_create(c, init, n, &s, &e) ||
            bcl_sim_run_read_check(s, &pl, steps, out, &flag, &t, &e)) {
            fprintf(stderr, "FAIL: %llu steps: %s\n", (unsigned long long)steps, e.msg);
            failures++;
        } else {
            memcpy(want, init, 4 * n * sizeof(float));
            m->reference(want, n, steps, p);
            CHECK(memcmp(out, want, 4 * n * sizeof(float)) == 0,
                  "%llu steps: the state read back is not the reference's",
                  (unsigned long long)steps);
            uint32_t host = host_scan(want, 4 * n);
            CHECK(flag == host, "%llu steps: device says %u, the host %u",
                  (unsigned long long)steps, flag, host);
            CHECK(host == (steps == 3), "%llu steps: the reference overflows at step 3, not %s",
                  (unsigned long long)steps, host ? "here" : "by here");
        }
        bcl_sim_destroy(s);
        bcl_error_clear(&e);
    }
    free(init);
    free(out);
    free(want);
}

/* A state of n balls tiled from a block of 7: each buffer starts the block
 * anew, so with buffers of `per` balls ball i is block ball (i % per) % 7. */
static void check_tiled(bcl_context *c, size_t per, const char *how)
{
    float block[7 * 4];
    for (size_t i = 0; i < 7 * 4; i++)
        block[i] = (float)i + 0.5f;
    size_t sizes[] = {1, 5, 7, 8, 1000, 2500, 3001};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        bcl_error e = {0};
        bcl_sim *s = NULL;
        float *got = malloc(n * 4 * sizeof(float));
        if (!got || bcl_sim_create_tiled(c, block, 7, n, &s, &e) || bcl_sim_read(s, got, &e)) {
            CHECK(0, "%s: tiled %zu balls: %s", how, n, e.msg);
        } else {
            size_t bad = SIZE_MAX;
            for (size_t i = 0; i < n && bad == SIZE_MAX; i++)
                if (memcmp(got + 4 * i, block + 4 * ((i % per) % 7), 4 * sizeof(float)))
                    bad = i;
            CHECK(bad == SIZE_MAX, "%s: tiled %zu balls: ball %zu is not block ball %zu", how, n,
                  bad, bad == SIZE_MAX ? 0 : (bad % per) % 7);
            CHECK(bcl_sim_balls(s) == n, "%s: tiled %zu balls holds %zu", how, n, bcl_sim_balls(s));
        }
        bcl_sim_destroy(s);
        free(got);
        bcl_error_clear(&e);
    }
    bcl_error e = {0};
    bcl_sim *s = NULL;
    CHECK(bcl_sim_create_tiled(c, block, 7, 0, &s, &e) != 0 && !s, "%s: tiled 0 balls taken", how);
    bcl_error_clear(&e);
}

int main(void)
{
    bcl_device_list list;
    const bcl_device_info *dev = test_device(&list);
    bcl_error e = {0};
    for (size_t i = 0; i < bcl_model_count; i++) {
        const bcl_model *m = bcl_models[i];
        bcl_context *c = NULL;
        bcl_context_opts co = {.use_cache = false};
        if (bcl_context_create(dev, m, &co, &c, NULL, &e)) {
            fprintf(stderr, "FAIL: model %s: %s\n", m->name, e.msg);
            failures++;
            bcl_error_clear(&e);
            continue;
        }
        check_states(c, m->name);
        if (strcmp(m->name, "seed") == 0) {
            check_run(c, m);
            /* Split over buffers of 1000 balls: one launch per buffer. */
            check_tiled(c, SIZE_MAX, "seed");
            setenv("BALLCL_TEST_MAX_ALLOC", "16000", 1);
            check_states(c, "seed, split");
            check_tiled(c, 1000, "seed, split");
            unsetenv("BALLCL_TEST_MAX_ALLOC");
        }
        bcl_context_destroy(c);
    }
    bcl_devices_free(&list);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
