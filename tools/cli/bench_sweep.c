/*
 * ballcl bench --sweep (docs/PERFORMANCE.md, "Defaults against the best"):
 * for each N, the untuned default plan of a plain run, the tuned one when
 * stored, and the best of a sweep of K x local size x variant, side by side,
 * all timed in this one process (bcl_sweep).
 */
#include "bench.h"
#include "run.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void print_row(const char *name, const bcl_sweep_config *x)
{
    char local[24];
    cli_local_text(x->plan.launch.local, local, sizeof local);
    printf("  %-8s %-18s %8u %7s  ", name, x->plan.kernel, x->plan.steps_per_launch, local);
    if (!x->validated)
        printf("FAILED validation\n");
    else if (!x->timed)
        printf("not timed: expected launch over the budget\n");
    else
        printf("%10.5f (%.5f-%.5f)  %9.3f  %s%s\n", x->us.median, x->us.min, x->us.max,
               x->max_launch_ms, x->plan.k_reason ? x->plan.k_reason : "",
               x->over_budget ? ", OVER BUDGET" : "");
}

static json_t *config_json(const bcl_sweep_config *x)
{
    return json_pack(
        "{s:s, s:s, s:s, s:I, s:o, s:s, s:s, s:b, s:b, s:b, s:o, s:o, s:o, s:f}", "role", x->role,
        "kernel", x->plan.kernel, "variant", x->plan.variant, "steps_per_launch",
        (json_int_t)x->plan.steps_per_launch, "local", cli_local_json(x->plan.launch.local),
        "local_how", x->plan.launch.how, "k_reason", x->plan.k_reason ? x->plan.k_reason : "",
        "validated", x->validated, "timed", x->timed, "over_budget", x->over_budget, "us_per_step",
        x->timed ? json_real(x->us.median) : json_null(), "us_per_step_min",
        x->timed ? json_real(x->us.min) : json_null(), "us_per_step_max",
        x->timed ? json_real(x->us.max) : json_null(), "max_launch_ms", x->max_launch_ms);
}

int bench_sweep(const bench_args *a, bcl_context *ctx, const bench_info *info, bcl_error *e)
{
    json_t *root = bench_info_json(info), *list = json_array();
    int rc = BCL_OK;
    size_t failed = 0;
    for (size_t i = 0; i < a->o.nballs && rc == BCL_OK; i++) {
        size_t n = (size_t)a->o.balls[i];
        bcl_sweep_opts so = {.params = a->o.model.params,
                             .balls = n,
                             /* The method's S (docs/PERFORMANCE.md) unless -s
                              * gives it. */
                             .steps = a->o.steps_given ? a->o.steps
                                      : n <= 1000000   ? 10000
                                                       : 2000,
                             .init = a->o.init,
                             .seed = a->o.seed,
                             .repeats = a->o.measure.repeats,
                             .launch_budget_ms = a->o.launch_budget_ms,
                             .ks = a->nsweep_ks ? a->sweep_ks : NULL,
                             .nks = a->nsweep_ks,
                             .locals = a->nsweep_locals ? a->sweep_locals : NULL,
                             .nlocals = a->nsweep_locals,
                             .progress = cli_progress,
                             .progress_arg = "bench"};
        bcl_sweep_result r;
        rc = bcl_sweep(ctx, &so, &r, e);
        cli_progress_end();
        if (rc)
            break;
        const bcl_sweep_config *def = &r.cfg[0];
        const bcl_sweep_config *best = r.best != SIZE_MAX ? &r.cfg[r.best] : NULL;
        double ratio =
            best && def->timed && best->us.median > 0 ? def->us.median / best->us.median : 0;
        const bcl_sweep_config *tuned = NULL;
        size_t timed = 0, over = 0;
        for (size_t c = 0; c < r.count; c++) {
            timed += r.cfg[c].timed;
            over += r.cfg[c].over_budget;
            failed += !r.cfg[c].validated;
            if (strcmp(r.cfg[c].role, "tuned") == 0)
                tuned = &r.cfg[c];
        }
        double budget = def->plan.launch_budget_ms;
        if (!a->o.json) {
            if (i)
                printf("\n");
            printf("N=%zu S=%llu: %s %s, budget %g ms, %s per step, median of %u runs after a "
                   "warm run\n",
                   n, (unsigned long long)so.steps, a->o.model.model->name, info->dev->name, budget,
                   r.host_clock ? "host us" : "device us", so.repeats ? so.repeats : 5);
            printf("  %-8s %-18s %8s %7s  %-28s  %9s  %s\n", "row", "kernel", "K", "local",
                   "us/step (min-max)", "longest", "K because");
            print_row("default", def);
            if (tuned)
                print_row("tuned", tuned);
            if (best)
                print_row("best", best);
            printf("  default / best = %.3f; %zu configurations timed, %zu over the budget\n",
                   ratio, timed, over);
            fflush(stdout);
        }
        json_t *one = json_pack(
            "{s:I, s:I, s:f, s:b, s:o, s:o, s:o, s:o}", "balls", (json_int_t)n, "steps",
            (json_int_t)so.steps, "launch_budget_ms", budget, "host_clock", r.host_clock, "default",
            config_json(def), "best", best ? config_json(best) : json_null(), "default_over_best",
            ratio > 0 ? json_real(ratio) : json_null(), "configs", json_array());
        json_t *cfgs = json_object_get(one, "configs");
        for (size_t c = 0; c < r.count; c++)
            json_array_append_new(cfgs, config_json(&r.cfg[c]));
        json_object_set_new(one, "tuned", tuned ? config_json(tuned) : json_null());
        json_object_set_new(one, "launch_costs", bcl_k_json(&def->plan));
        json_array_append_new(list, one);
        bcl_sweep_result_free(&r);
    }
    if (rc == BCL_OK && a->o.json) {
        json_object_set(root, "defaults_sweep", list);
        cli_print_json(root);
    }
    json_decref(list);
    json_decref(root);
    if (rc == BCL_OK && failed)
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "validation failed: %zu configuration%s gave other bits than the C "
                      "reference and %s not timed",
                      failed, failed == 1 ? "" : "s", failed == 1 ? "was" : "were");
    return rc;
}
