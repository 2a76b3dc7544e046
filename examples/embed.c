/*
 * A program that embeds ballcl through its public API and nothing else:
 * N balls of the bounce model for S steps on one device, the state read
 * back and compared bit for bit with the model's C reference.
 *
 *   cc embed.c $(pkg-config --cflags --libs ballcl) -o embed
 *   ./embed [SELECTOR [N [S]]]
 *
 * Exit status: 0 the device gave the reference's bits, 1 it did not, 2 bad
 * arguments, 3 an OpenCL or runtime error, 77 no OpenCL device at all.
 */
#include <ballcl/ballcl.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(bcl_error *e)
{
    fprintf(stderr, "embed: %s\n", e->msg);
    int code = e->code ? e->code : BCL_EXIT_RUNTIME;
    bcl_error_clear(e);
    return code;
}

int main(int argc, char **argv)
{
    const char *selector = argc > 1 ? argv[1] : NULL;
    uint64_t n = 10007, steps = 250;
    bcl_error e = {0};
    if ((argc > 2 && bcl_parse_u64(argv[2], "N", 1, 1u << 26, &n, &e)) ||
        (argc > 3 && bcl_parse_u64(argv[3], "S", 0, 1u << 20, &steps, &e)))
        return fail(&e);

    /* Lifetimes: the device list outlives the context, the context the
     * simulation; the plan is plain data. */
    bcl_device_list list = {0};
    if (bcl_devices_enumerate(&list, &e) != BCL_OK) {
        fprintf(stderr, "embed: skipped: %s\n", e.msg);
        bcl_error_clear(&e);
        return 77;
    }
    size_t di;
    const bcl_model *m = bcl_model_find("bounce");
    float params[BCL_MAX_PARAMS];
    bcl_model_param_defaults(m, params);
    bcl_context *ctx = NULL;
    bcl_sim *sim = NULL;
    float *init = NULL, *state = NULL;
    int rc = bcl_device_select(&list, selector, &di, &e);
    const bcl_device_info *dev = rc == BCL_OK ? &list.dev[di] : NULL;
    /* Two host copies: the initial state and the result. */
    if (rc == BCL_OK)
        rc = bcl_memory_fit(dev, n, 2, "N", &e);
    if (rc == BCL_OK) {
        init = malloc(n * 4 * sizeof(float));
        state = malloc(n * 4 * sizeof(float));
        if (!init || !state)
            rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory");
    }
    if (rc == BCL_OK) {
        bcl_model_fill(m, init, 0, n, BCL_INIT_RANDOM, 42, params);
        bcl_context_opts opts = {.use_cache = true};
        rc = bcl_context_create(dev, m, &opts, &ctx, NULL, &e);
    }
    /* Everything left open is chosen by the plan: K, variant, local size. */
    bcl_plan_request req = {.params = params, .balls = n, .steps = steps};
    bcl_plan plan;
    if (rc == BCL_OK)
        rc = bcl_plan_resolve(ctx, &req, &plan, &e);
    bcl_sim_timing t;
    if (rc == BCL_OK)
        rc = bcl_sim_create(ctx, init, n, &sim, &e);
    if (rc == BCL_OK)
        rc = bcl_sim_warmup(sim, &plan, NULL, &e);
    if (rc == BCL_OK)
        rc = bcl_sim_run(sim, &plan, steps, &t, &e);
    if (rc == BCL_OK)
        rc = bcl_sim_read(sim, state, &e);
    bcl_validation v;
    if (rc == BCL_OK)
        rc = bcl_validate(m, params, init, state, n, steps, 0, &v, &e);
    if (rc == BCL_OK) {
        printf("%s: %llu balls, %llu steps of %s_%s (K %u, local %zu), %.3f ms on the device: "
               "%s\n",
               dev->name, (unsigned long long)n, (unsigned long long)steps, m->name, plan.kernel,
               plan.steps_per_launch, plan.launch.local, t.device_ms,
               v.mismatches ? "DIFFERS from the C reference" : "bit-identical to the C reference");
        rc = v.mismatches ? BCL_EXIT_MISMATCH : BCL_OK;
    } else {
        rc = fail(&e);
    }
    bcl_sim_destroy(sim);
    bcl_context_destroy(ctx);
    bcl_devices_free(&list);
    free(init);
    free(state);
    return rc;
}
