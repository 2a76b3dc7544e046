/*
 * Device test: every kernel variant of every model gives the bits of single
 * steps of the base kernel and of the C reference. The k-step kernels run
 * with K in {1, 2, 7, 64} over 2K+3 steps (full launches and a partial
 * one), N is 1, a prime and a size that is no multiple of the work-group
 * size or of the balls per work-item, and the local size is both the
 * automatic one and an odd one. Exits 77 (skipped) without a device.
 */
#include "run/run.h"
#include "measure/timing.h"
#include "models/rng.h"
#include "files/files.h"
#define TESTUTIL_DEVICE
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs `steps` steps of what r asks for on a copy of init and returns the
 * final state. */
static float *run(bcl_context *c, const float *init, size_t n, bcl_plan_request r, uint64_t steps)
{
    bcl_error e = {0};
    bcl_sim *s = NULL;
    float *out = malloc(n * 4 * sizeof(float));
    r.balls = n;
    r.steps = steps;
    bcl_plan p;
    bcl_sim_timing t;
    if (!out || bcl_plan_resolve(c, &r, &p, &e) || bcl_sim_create(c, init, n, &s, &e) ||
        bcl_sim_warmup(s, &p, NULL, &e) || bcl_sim_run(s, &p, steps, &t, &e) ||
        bcl_sim_read(s, out, &e)) {
        fprintf(stderr, "FAIL: %s\n", e.msg);
        failures++;
        free(out);
        out = NULL;
    }
    bcl_sim_destroy(s);
    bcl_error_clear(&e);
    return out;
}

static void check_model(const bcl_device_info *d, const bcl_model *m)
{
    bcl_error e = {0};
    bcl_context *c = NULL;
    bcl_context_opts co = {.use_cache = false};
    if (bcl_context_create(d, m, &co, &c, NULL, &e)) {
        fprintf(stderr, "FAIL: model %s: %s\n", m->name, e.msg);
        failures++;
        return;
    }
    float p[BCL_MAX_PARAMS] = {0};
    bcl_model_param_defaults(m, p);
    bcl_variant fused[BCL_MAX_VARIANTS], single[BCL_MAX_VARIANTS];
    size_t nf = 0, ns = 0;
    CHECK(bcl_variants_list(c, true, fused, BCL_MAX_VARIANTS, &nf, &e) == BCL_OK, "%s", e.msg);
    CHECK(bcl_variants_list(c, false, single, BCL_MAX_VARIANTS, &ns, &e) == BCL_OK, "%s", e.msg);
    CHECK(nf >= 1 && fused[0].name[0] == '\0', "the base k-step kernel comes first");
    const size_t sizes[] = {1, 1031, 4099};
    const unsigned ks[] = {1, 2, 7, 64};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        float *init = malloc(n * 4 * sizeof(float));
        if (!init)
            abort();
        m->init(init, 0, n, BCL_INIT_RANDOM, 7 + si, p);
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            unsigned k = ks[ki];
            uint64_t steps = 2 * (uint64_t)k + 3;
            bcl_plan_request base = {
                .params = p, .steps_per_launch = 1, .sync = BCL_SYNC_END, .variant = ""};
            bcl_local_parse("auto", &base.launch, &e);
            float *want = run(c, init, n, base, steps);
            float *ref = malloc(n * 4 * sizeof(float));
            if (!want || !ref)
                abort();
            memcpy(ref, init, n * 4 * sizeof(float));
            m->reference(ref, n, steps, p);
            CHECK(memcmp(want, ref, n * 4 * sizeof(float)) == 0,
                  "%s: single steps differ from the reference (N %zu, %llu steps)", m->name, n,
                  (unsigned long long)steps);
            for (size_t vi = 0; vi < nf; vi++) {
                for (int odd = 0; odd < 2; odd++) {
                    bcl_plan_request o = {.params = p,
                                          .steps_per_launch = k,
                                          .sync = BCL_SYNC_END,
                                          .variant = fused[vi].name,
                                          .fused = true};
                    bcl_local_parse(odd ? "3" : "auto", &o.launch, &e);
                    float *got = run(c, init, n, o, steps);
                    CHECK(got && memcmp(got, want, n * 4 * sizeof(float)) == 0,
                          "%s_steps%s%s: K %u, N %zu, local %s: not the bits of single steps",
                          m->name, fused[vi].name[0] ? "_" : "", fused[vi].name, k, n,
                          odd ? "3" : "auto");
                    free(got);
                }
            }
            free(want);
            free(ref);
        }
        /* One-step variants against the base one-step kernel. */
        bcl_plan_request base = {
            .params = p, .steps_per_launch = 1, .sync = BCL_SYNC_END, .variant = ""};
        bcl_local_parse("auto", &base.launch, &e);
        float *want = run(c, init, n, base, 5);
        for (size_t vi = 1; vi < ns && want; vi++) {
            bcl_plan_request o = base;
            o.variant = single[vi].name;
            bcl_local_parse("3", &o.launch, &e);
            float *got = run(c, init, n, o, 5);
            CHECK(got && memcmp(got, want, n * 4 * sizeof(float)) == 0,
                  "%s_step_%s: N %zu: not the bits of the base kernel", m->name, single[vi].name,
                  n);
            free(got);
        }
        free(want);
        free(init);
    }
    printf("model %s: %zu k-step and %zu one-step kernels checked\n", m->name, nf, ns);
    bcl_context_destroy(c);
}

int main(void)
{
    bcl_device_list list;
    const bcl_device_info *dev = test_device(&list);
    for (size_t i = 0; i < bcl_model_count; i++)
        check_model(dev, bcl_models[i]);
    bcl_devices_free(&list);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
