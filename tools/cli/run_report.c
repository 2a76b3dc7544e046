/*
 * The report of `ballcl run`, text and JSON, for a run on one device or
 * several (docs/DESIGN.md, "Report and JSON"); the MPI report
 * (run_ranks_report.c) reuses its pieces.
 */
#include "run.h"
#include "models/models.h"

#include <string.h>

/* The lines on why K is what it is and the longest launch (their JSON:
 * bcl_k_json). */
static void print_k_reason(const bcl_plan *p, const bcl_sim_timing *t)
{
    const bcl_launch_costs *k = &p->costs;
    if (k->known)
        printf("K rule      %s: expected %.3g ms a launch, budget %g ms (launch costs %s%s%s)\n",
               p->k_reason, p->launch_expect_ms, p->launch_budget_ms, k->source,
               k->note[0] ? "; " : "", k->note);
    else
        printf("K           %s\n", p->k_reason);
    printf("longest     launch %.3f ms (profiling)\n", t->max_launch_ms);
}

static void print_single(const run_args *a, const bcl_device_info *d, size_t n,
                         const bcl_build_report *br, const bcl_plan *p, size_t chunks,
                         double first_ms, const bcl_sim_timing *t, const bcl_validation *v)
{
    const bcl_launch *l = &p->launch;
    const bcl_model *m = a->o.model.model;
    double us_dev = bcl_us_per_step(t->device_ms, a->o.steps);
    double us_wall = bcl_us_per_step(t->wall_ms, a->o.steps);
    double rate = bcl_ball_steps_per_s(n, us_dev);
    double bytes_per_ball_step = 32.0 / (double)p->steps_per_launch;
    printf("device      %s (%s, selector %u:%u)\n", cli_shown(d->name), cli_shown(d->platform_name),
           d->platform_index, d->device_index);
    run_print_model(a);
    printf("balls       %zu%s\n", n, chunks > 1 ? " (split over several buffers)" : "");
    printf("steps       %llu (%llu per launch: %s; %llu launch%s, sync %s)\n",
           (unsigned long long)a->o.steps, (unsigned long long)p->steps_per_launch, p->k_how,
           (unsigned long long)t->launches, t->launches == 1 ? "" : "es",
           a->sync == BCL_SYNC_EVERY ? "every launch" : "at end");
    print_k_reason(p, t);
    printf("kernel      %s_%s (%u ball%s per work-item)\n", m->name, p->kernel, p->balls_per_item,
           p->balls_per_item == 1 ? "" : "s");
    if (l->local)
        printf("launch      local %zu, global %zu (%s: %s)\n", l->local, p->global, l->how, l->why);
    else
        printf("launch      local chosen by the driver, global %zu (%s)\n", p->global, l->how);
    if (a->tuned_note[0])
        printf("tuned       %s\n", cli_shown(a->tuned_note));
    printf("program     %.1f ms (%s), first launch %.1f ms\n", br->program_ms, br->note, first_ms);
    printf("time        %.3f us/step %s, %.3f us/step wall\n", us_dev,
           t->host_clock ? "host clock" : "device", us_wall);
    if (t->host_clock)
        printf("clock       host: the device's profiling failed its check: %s\n",
               bcl_clock_note(d));
    printf("rate        %.3g ball-steps/s, %.1f GB/s effective\n", rate,
           rate * bytes_per_ball_step / 1e9);
    run_print_validation(a, v, "");
    /* docs/MODELS.md: the C reference keeps denormals; such a device gives
     * zero where the reference has a denormal, and says so here. */
    if (a->validate && !(d->single_fp_config & CL_FP_DENORM))
        printf("denormals   the device flushes float denormals to zero and the C reference does "
               "not: a result with denormals differs\n");
    if (a->validate && !(d->single_fp_config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT))
        printf("division    the device cannot round float division and square root correctly, "
               "as C does: an update that uses them may differ\n");
}

void run_print_model(const run_args *a)
{
    const bcl_model *m = a->o.model.model;
    printf("model       %s%s%s%s, %s\n", m->name, m->digest ? " (file " : "",
           m->digest ? cli_shown(m->kernel_file) : "", m->digest ? ")" : "",
           a->input ? a->input : (a->o.init == BCL_INIT_SEED ? "init seed" : "init random"));
}

const char *run_not_validated(const run_args *a)
{
    return bcl_model_has_reference(a->o.model.model)
               ? "skipped (--no-validate)"
               : "not validated: no reference (--reference FILE.c gives one)";
}

void run_print_validation(const run_args *a, const bcl_validation *v, const char *scope)
{
    if (!a->validate) {
        printf("validation  %s\n", run_not_validated(a));
        return;
    }
    if (v->mismatches == 0) {
        printf("validation  passed: %llu floats %s the C reference (max %llu ULP)%s\n",
               (unsigned long long)v->compared,
               a->tol_ulp ? "within tolerance, one step from the first and the last state, of"
                          : "bit-identical to",
               (unsigned long long)v->max_ulp, scope);
        return;
    }
    printf("validation  FAILED: %llu of %llu floats differ, max %s%llu ULP\n",
           (unsigned long long)v->mismatches, (unsigned long long)v->compared,
           v->max_ulp == UINT64_MAX ? "NaN " : "",
           (unsigned long long)(v->max_ulp == UINT64_MAX ? 0 : v->max_ulp));
    for (size_t i = 0; i < v->nreported; i++) {
        const bcl_mismatch *mm = &v->first[i];
        printf("  ball %zu: want (%.9g, %.9g, %.9g, %.9g) got (%.9g, %.9g, %.9g, %.9g)\n", mm->ball,
               mm->want[0], mm->want[1], mm->want[2], mm->want[3], mm->got[0], mm->got[1],
               mm->got[2], mm->got[3]);
    }
}

static void print_member(const run_args *a, const bcl_group_member *m)
{
    const bcl_device_info *d = m->dev;
    printf("device %-5s %s (%s)\n", m->selector, cli_shown(d->name), cli_shown(d->platform_name));
    if (!m->shard.count) {
        printf("  %s\n", m->excluded);
        return;
    }
    double us = bcl_us_per_step(m->timing.device_ms, a->o.steps);
    double us_wall = bcl_us_per_step(m->timing.wall_ms, a->o.steps);
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
        printf("  validation %s\n", run_not_validated(a));
    else if (m->v.mismatches == 0)
        printf("  validation passed: %llu floats %s\n", (unsigned long long)m->v.compared,
               a->tol_ulp ? "within tolerance" : "bit-identical");
    else
        printf("  validation FAILED: %llu of %llu floats differ\n",
               (unsigned long long)m->v.mismatches, (unsigned long long)m->v.compared);
}

static void print_multi(const run_args *a, bcl_group *g, size_t n, const bcl_exec_result *t,
                        const bcl_validation *v)
{
    size_t nd = bcl_group_size(g);
    double cal = bcl_group_calibrate_ms(g);
    printf("devices     %zu, balls split by rate", nd);
    if (cal > 0)
        printf(" (calibration %.1f ms)", cal);
    printf("\n");
    run_print_model(a);
    printf("balls       %zu\n", n);
    printf("steps       %llu (sync %s)\n", (unsigned long long)a->o.steps,
           a->sync == BCL_SYNC_EVERY ? "every launch" : "at end");
    for (size_t i = 0; i < nd; i++)
        print_member(a, bcl_group_member_at(g, i));
    double rate = bcl_ball_steps_per_s(n, bcl_us_per_step(t->wall_ms, a->o.steps));
    printf("aggregate   %.3f ms wall for all devices, %.3g ball-steps/s\n", t->wall_ms, rate);
    run_print_validation(a, v, "");
}

void run_print_report(const run_args *a, bcl_group *g, size_t n, const bcl_exec_result *r)
{
    if (bcl_group_size(g) > 1) {
        print_multi(a, g, n, r, &r->v);
        return;
    }
    const bcl_group_member *m = bcl_group_member_at(g, 0);
    bcl_sim_timing t = {.device_ms = r->device_ms,
                        .wall_ms = r->wall_ms,
                        .launches = r->launches,
                        .host_clock = r->host_clock,
                        .max_launch_ms = r->max_launch_ms};
    print_single(a, m->dev, n, &m->build, &m->plan, m->buffers, m->first_launch_ms, &t, &r->v);
}

json_t *run_group_json(const run_args *a, bcl_group *g, size_t n, const bcl_exec_result *r)
{
    bcl_exec x = {.steps = a->o.steps,
                  .validate = a->validate,
                  .tol_ulp = a->tol_ulp,
                  .no_reference = !bcl_model_has_reference(a->o.model.model)};
    json_t *j = bcl_run_json(g, &x, r, n);
    /* Where the state came from: the CLI's own keys (docs/DESIGN.md,
     * "Report and JSON"). */
    json_object_set_new(
        j, cli_option_find("init")->json,
        json_string(a->input ? "file" : (a->o.init == BCL_INIT_SEED ? "seed" : "random")));
    json_object_set_new(j, cli_option_find("seed")->json, json_integer((json_int_t)a->o.seed));
    return j;
}
