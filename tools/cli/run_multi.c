/*
 * ballcl run over several devices (docs/DESIGN.md, "Several devices"): the
 * balls cut into one contiguous shard per device by measured rate, every
 * device running its shard at once with the state kept on it, each shard
 * validated against the C reference, and one output in the original order.
 */
#include "run.h"

#include <stdlib.h>
#include <string.h>

json_t *run_member_json(const run_args *a, const bcl_group_member *m)
{
    const bcl_device_info *d = m->dev;
    double steps = (double)a->o.steps;
    double us_dev = steps ? m->timing.device_ms * 1e3 / steps : 0;
    double us_wall = steps ? m->timing.wall_ms * 1e3 / steps : 0;
    double rate = us_dev > 0 ? (double)m->shard.count / (us_dev * 1e-6) : 0;
    json_t *j = json_pack(
        "{s:s, s:s, s:s, s:s, s:I, s:I, s:f, s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "selector",
        m->selector, "name", d->name, "platform", d->platform_name, "type",
        bcl_device_type_name(d->type), "first_ball", (json_int_t)m->shard.first, "balls",
        (json_int_t)m->shard.count, "share", m->share, "rate_how", m->rate_how,
        "split_rate_ball_steps_per_s", m->rate, "launch_overhead_ms", m->launch_ms, "us_per_step",
        us_dev, "wall_us_per_step", us_wall, "ball_steps_per_s", rate, "wait_ms", m->wait_ms);
    if (m->shard.count) {
        json_object_set_new(
            j, "launch",
            json_pack("{s:s, s:I, s:I, s:s, s:I, s:s, s:I, s:I}", "variant", m->plan.variant,
                      "balls_per_item", (json_int_t)m->plan.balls_per_item, "steps_per_launch",
                      (json_int_t)m->plan.steps_per_launch, "steps_per_launch_how", m->plan.k_how,
                      "local", (json_int_t)m->plan.launch.local, "how", m->plan.launch.how,
                      "global", (json_int_t)m->plan.global, "buffers", (json_int_t)m->buffers));
        json_t *why = run_k_json(&m->plan);
        json_object_update(json_object_get(j, "launch"), why);
        json_decref(why);
        json_object_set_new(j, "max_launch_ms", json_real(m->timing.max_launch_ms));
        json_object_set_new(j, "cache",
                            json_pack("{s:b, s:f, s:s}", "hit", m->build.cache_hit, "program_ms",
                                      m->build.program_ms, "note", m->build.note));
        json_object_set_new(j, "validation", run_validation_json(a, &m->v));
    } else {
        json_object_set_new(j, "excluded", json_string(m->excluded));
        json_object_set_new(j, "validation", json_null());
    }
    return j;
}

static void print_member(const run_args *a, const bcl_group_member *m)
{
    const bcl_device_info *d = m->dev;
    printf("device %-5s %s (%s)\n", m->selector, cli_shown(d->name), cli_shown(d->platform_name));
    if (!m->shard.count) {
        printf("  %s\n", m->excluded);
        return;
    }
    double steps = (double)a->o.steps;
    double us = steps ? m->timing.device_ms * 1e3 / steps : 0;
    double us_wall = steps ? m->timing.wall_ms * 1e3 / steps : 0;
    if (strcmp(m->rate_how, "given") == 0)
        printf("  balls     %zu from ball %zu (%.1f%%, as given)\n", m->shard.count, m->shard.first,
               100.0 * m->share);
    else
        printf("  balls     %zu from ball %zu (%.1f%%; weighed by %s rate %.3g ball-steps/s)\n",
               m->shard.count, m->shard.first, 100.0 * m->share, m->rate_how, m->rate);
    printf("  kernel    %s_%s, %u per launch, local %zu (%s)%s\n", a->o.model.model->name,
           m->plan.kernel, m->plan.steps_per_launch, m->plan.launch.local, m->plan.launch.how,
           m->buffers > 1 ? ", several buffers" : "");
    /* Each device has its own program, from the cache or built: as the
     * "program" line of a run on one device. */
    printf("  program   %.1f ms (%s), first launch %.1f ms\n", m->build.program_ms,
           cli_shown(m->build.note), m->first_launch_ms);
    printf("  time      %.3f us/step %s, %.3f us/step wall, waited %.1f ms for the slowest\n", us,
           m->timing.host_clock ? "host clock" : "device", us_wall, m->wait_ms);
    if (m->timing.host_clock)
        printf("  clock     host: the device's profiling failed its check: %s\n",
               bcl_profiling_unusable(d));
    if (!a->validate)
        printf("  validation skipped\n");
    else if (m->v.mismatches == 0)
        printf("  validation passed: %llu floats %s\n", (unsigned long long)m->v.compared,
               a->tol_ulp ? "within tolerance" : "bit-identical");
    else
        printf("  validation FAILED: %llu of %llu floats differ\n",
               (unsigned long long)m->v.mismatches, (unsigned long long)m->v.compared);
}

static void print_report(const run_args *a, bcl_group *g, size_t n, const bcl_group_timing *t,
                         const bcl_validation *v)
{
    const bcl_model *m = a->o.model.model;
    size_t nd = bcl_group_size(g);
    double cal = bcl_group_calibrate_ms(g);
    printf("devices     %zu, balls split by rate", nd);
    if (cal > 0)
        printf(" (calibration %.1f ms)", cal);
    printf("\n");
    printf("model       %s, %s\n", m->name,
           a->input ? a->input : (a->o.init == BCL_INIT_SEED ? "init seed" : "init random"));
    printf("balls       %zu\n", n);
    printf("steps       %llu (sync %s)\n", (unsigned long long)a->o.steps,
           a->sync == BCL_SYNC_EVERY ? "every launch" : "at end");
    for (size_t i = 0; i < nd; i++)
        print_member(a, bcl_group_member_at(g, i));
    double rate = t->wall_ms > 0 ? (double)n * (double)a->o.steps / (t->wall_ms * 1e-3) : 0;
    printf("aggregate   %.3f ms wall for all devices, %.3g ball-steps/s\n", t->wall_ms, rate);
    run_print_validation(a, v, "");
}

static json_t *report_json(const run_args *a, bcl_group *g, size_t n, const bcl_group_timing *t,
                           const bcl_validation *v)
{
    /* Today's fields: the device and launch of the first device with balls,
     * the timing of the whole run (device_ms: the slowest device's). */
    size_t nd = bcl_group_size(g), lead = 0;
    for (size_t i = nd; i-- > 0;)
        if (bcl_group_member_at(g, i)->shard.count)
            lead = i;
    const bcl_group_member *l = bcl_group_member_at(g, lead);
    bcl_sim_timing all = {.wall_ms = t->wall_ms, .launches = l->timing.launches};
    size_t buffers = 0;
    for (size_t i = 0; i < nd; i++) {
        const bcl_group_member *m = bcl_group_member_at(g, i);
        if (m->timing.device_ms > all.device_ms)
            all.device_ms = m->timing.device_ms;
        all.host_clock = all.host_clock || m->timing.host_clock;
        buffers += m->buffers;
    }
    json_t *j =
        run_report_json(a, l->dev, n, &l->build, &l->plan, buffers, l->first_launch_ms, &all, v);
    json_t *devices = json_array();
    for (size_t i = 0; i < nd; i++)
        json_array_append_new(devices, run_member_json(a, bcl_group_member_at(g, i)));
    json_object_set_new(j, "devices", devices);
    double rate = t->wall_ms > 0 ? (double)n * (double)a->o.steps / (t->wall_ms * 1e-3) : 0;
    json_object_set_new(j, "aggregate",
                        json_pack("{s:I, s:f, s:f, s:f}", "devices", (json_int_t)nd, "wall_ms",
                                  t->wall_ms, "ball_steps_per_s", rate, "calibrate_ms",
                                  bcl_group_calibrate_ms(g)));
    return j;
}

int run_multi(const run_args *a, const bcl_device_info *const *devs, size_t ndev, float **state,
              size_t n, bcl_outputs *outs, bcl_error *e)
{
    bcl_group *g = NULL;
    float *init = NULL;
    /* The state, and for validation the initial state. */
    int rc = bcl_group_memory_fit(devs, ndev, n, a->validate ? 2 : 1,
                                  a->input ? a->input : "--balls", e);
    if (rc)
        return rc;
    if (!*state) {
        *state = malloc(n * 4 * sizeof(float));
        if (!*state)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", n);
        bcl_model_fill(a->o.model.model, *state, 0, n, a->o.init, a->o.seed, a->o.model.params);
    }
    if (a->verbose)
        for (size_t i = 0; i < ndev; i++)
            fprintf(stderr, "ballcl: device %zu: %u:%u '%s', build options '%s'\n", i,
                    devs[i]->platform_index, devs[i]->device_index, devs[i]->name,
                    bcl_build_options());
    bcl_group_opts o = {
        .model = a->o.model.model,
        .ctx = {.use_cache = a->o.use_cache},
        .req =
            {
                .params = a->o.model.params,
                .balls = n,
                .steps = a->o.steps,
                .steps_per_launch = (unsigned)a->steps_per_launch,
                .sync = a->sync,
                .launch = a->o.launch,
                .variant = a->variant,
                /* As on one device: a plain run takes what 'ballcl tune'
                 * stored for each device. */
                .take_tuned = !a->steps_per_launch && !a->variant && !a->o.local_given,
                .launch_budget_ms = a->o.launch_budget_ms,
            },
    };
    if ((rc = bcl_group_open(devs, ndev, &o, &g, e)))
        goto out;
    for (size_t i = 0; i < ndev; i++) {
        const bcl_group_member *m = bcl_group_member_at(g, i);
        if (m->build.warning[0])
            cli_warn("device %s: %s", m->selector, m->build.warning);
        /* Devices of one make share one tuned file: its warning names the
         * file and is said once, with the devices it concerns. */
        bool said = false;
        for (size_t k = 0; k < i && !said; k++)
            said = strcmp(bcl_group_member_at(g, k)->plan.warning, m->plan.warning) == 0;
        if (m->plan.warning[0] && !said) {
            char who[256] = "";
            for (size_t k = i; k < ndev; k++) {
                const bcl_group_member *o2 = bcl_group_member_at(g, k);
                if (strcmp(o2->plan.warning, m->plan.warning) == 0)
                    snprintf(who + strlen(who), sizeof who - strlen(who), "%s%s",
                             who[0] ? ", " : "", o2->selector);
            }
            cli_warn("device%s %s: %s", strchr(who, ',') ? "s" : "", who, m->plan.warning);
        }
    }
    if ((rc = bcl_group_split(g, *state, e)))
        goto out;
    if (a->validate) {
        init = malloc(n * 4 * sizeof(float));
        if (!init) {
            rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for validation");
            goto out;
        }
        memcpy(init, *state, n * 4 * sizeof(float));
    }
    if ((rc = bcl_group_load(g, *state, e)))
        goto out;
    bcl_group_timing t;
    if ((rc = bcl_group_run(g, a->o.steps, &t, e)))
        goto out;
    if ((rc = bcl_group_read(g, *state, e)))
        goto out;
    bcl_validation v = {0};
    if (a->validate && (rc = bcl_group_validate(g, init, *state, a->o.steps, a->tol_ulp, &v, e)))
        goto out;
    /* As on one device: files before the report, never a mismatching state. */
    if (v.mismatches == 0 && (rc = run_check_overflow(a, init, *state, n, e)))
        goto out;
    if (v.mismatches == 0 && (rc = run_write_outputs(a, outs, *state, n, e)))
        goto out;
    if (a->o.json) {
        json_t *j = report_json(a, g, n, &t, &v);
        cli_print_json(j);
        json_decref(j);
    } else {
        print_report(a, g, n, &t, &v);
    }
    if (v.mismatches)
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "validation failed: %llu of %llu floats differ from the C reference%s",
                      (unsigned long long)v.mismatches, (unsigned long long)v.compared,
                      a->output || a->snapshot ? "; output not written" : "");
out:
    bcl_group_close(g);
    free(init);
    return rc;
}
