/*
 * The report of `ballcl run`, text and JSON, for a run on one device or
 * several (docs/DESIGN.md, "Report and JSON"); the MPI report
 * (run_ranks_report.c) reuses its pieces.
 */
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Why the timing is the host clock's: d's verdict, or (in a run over
 * several devices, where d is the first) another device's. */
const char *run_clock_note(const bcl_device_info *d)
{
    const char *why = bcl_profiling_unusable(d);
    return why ? why : "the profiling of one of the devices failed its check";
}

static void print_single(const run_args *a, const bcl_device_info *d, size_t n,
                         const bcl_build_report *br, const bcl_plan *p, size_t chunks,
                         double first_ms, const bcl_sim_timing *t, const bcl_validation *v)
{
    const bcl_launch *l = &p->launch;
    const bcl_model *m = a->o.model.model;
    double steps = (double)a->o.steps;
    double us_dev = steps ? t->device_ms * 1e3 / steps : 0;
    double us_wall = steps ? t->wall_ms * 1e3 / steps : 0;
    double rate = us_dev > 0 ? (double)n / (us_dev * 1e-6) : 0;
    double bytes_per_ball_step = 32.0 / (double)p->steps_per_launch;
    char name[1024], plat[1024];
    bcl_escape(d->name, name, sizeof name);
    bcl_escape(d->platform_name, plat, sizeof plat);
    printf("device      %s (%s, selector %u:%u)\n", name, plat, d->platform_index, d->device_index);
    printf("model       %s, %s\n", m->name,
           a->input ? a->input : (a->o.init == BCL_INIT_SEED ? "init seed" : "init random"));
    printf("balls       %zu%s\n", n, chunks > 1 ? " (split over several buffers)" : "");
    printf("steps       %llu (%llu per launch: %s; %llu launch%s, sync %s)\n",
           (unsigned long long)a->o.steps, (unsigned long long)p->steps_per_launch, p->k_how,
           (unsigned long long)t->launches, t->launches == 1 ? "" : "es",
           a->sync == BCL_SYNC_EVERY ? "every launch" : "at end");
    run_print_k_reason(p, t, "");
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
               run_clock_note(d));
    printf("rate        %.3g ball-steps/s, %.1f GB/s effective\n", rate,
           rate * bytes_per_ball_step / 1e9);
    run_print_validation(a, v, "");
}

void run_print_k_reason(const bcl_plan *p, const bcl_sim_timing *t, const char *indent)
{
    const bcl_launch_costs *k = &p->costs;
    if (k->known)
        printf("%sK rule      %s: expected %.3g ms a launch, budget %g ms (launch costs %s%s%s)\n",
               indent, p->k_reason, p->launch_expect_ms, p->launch_budget_ms, k->source,
               k->note[0] ? "; " : "", k->note);
    else
        printf("%sK           %s\n", indent, p->k_reason);
    printf("%slongest     launch %.3f ms (profiling)\n", indent, t->max_launch_ms);
}

json_t *run_k_json(const bcl_plan *p)
{
    const bcl_launch_costs *k = &p->costs;
    json_t *costs = k->known
                        ? json_pack("{s:s, s:f, s:f, s:f, s:f, s:I, s:f, s:s}", "source", k->source,
                                    "launch_us", k->launch_us, "io_ns_per_ball", k->io_ns_per_ball,
                                    "step_ns_per_ball", k->step_ns_per_ball, "step_floor_us",
                                    k->step_floor_us, "fill_balls", (json_int_t)k->fill_balls,
                                    "measure_ms", k->measure_ms, "note", k->note)
                        : json_null();
    return json_pack(
        "{s:s, s:o, s:o, s:o}", "k_reason", p->k_reason ? p->k_reason : "", "launch_budget_ms",
        p->launch_budget_ms > 0 ? json_real(p->launch_budget_ms) : json_null(), "launch_expect_ms",
        p->launch_expect_ms > 0 ? json_real(p->launch_expect_ms) : json_null(), "launch_costs",
        costs);
}

void run_print_validation(const run_args *a, const bcl_validation *v, const char *scope)
{
    if (!a->validate) {
        printf("validation  skipped (--no-validate)\n");
        return;
    }
    if (v->mismatches == 0) {
        printf("validation  passed: %llu floats %s the C reference (max %llu ULP)%s\n",
               (unsigned long long)v->compared,
               a->tol_ulp ? "within tolerance of" : "bit-identical to",
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

json_t *run_validation_json(const run_args *a, const bcl_validation *v)
{
    json_t *mism = json_array();
    for (size_t i = 0; i < v->nreported; i++) {
        const bcl_mismatch *mm = &v->first[i];
        json_array_append_new(mism, json_pack("{s:I, s:[f,f,f,f], s:[f,f,f,f]}", "ball",
                                              (json_int_t)mm->ball, "want", mm->want[0],
                                              mm->want[1], mm->want[2], mm->want[3], "got",
                                              mm->got[0], mm->got[1], mm->got[2], mm->got[3]));
    }
    return a->validate
               ? json_pack("{s:b, s:b, s:I, s:I, s:o, s:I, s:o}", "performed", 1, "passed",
                           v->mismatches == 0, "compared", (json_int_t)v->compared, "mismatches",
                           (json_int_t)v->mismatches, "max_ulp",
                           v->max_ulp == UINT64_MAX ? json_null()
                                                    : json_integer((json_int_t)v->max_ulp),
                           "tolerance_ulp", (json_int_t)a->tol_ulp, "first_mismatches", mism)
               : json_pack("{s:b, s:b, s:I, s:I, s:n, s:o}", "performed", 0, "passed", 0,
                           "compared", (json_int_t)0, "mismatches", (json_int_t)0, "max_ulp",
                           "first_mismatches", mism);
}

/* The model's parameters by name: a number for a one-float parameter, a
 * list for one of several (--box W,H), in the order the model declares. */
static json_t *run_params_json(const bcl_model *m, const float *values)
{
    json_t *params = json_object();
    unsigned at = 0;
    for (unsigned i = 0; i < m->nparams; i++) {
        const bcl_param *p = &m->params[i];
        json_t *v;
        if (p->count == 1) {
            v = json_real(values[at]);
        } else {
            v = json_array();
            for (unsigned c = 0; c < p->count; c++)
                json_array_append_new(v, json_real(values[at + c]));
        }
        json_object_set_new(params, p->opt, v);
        at += p->count;
    }
    return params;
}

json_t *run_report_json(const run_args *a, const bcl_device_info *d, size_t n,
                        const bcl_build_report *br, const bcl_plan *p, size_t chunks,
                        double first_ms, const bcl_sim_timing *t, const bcl_validation *v)
{
    const bcl_launch *l = &p->launch;
    double steps = (double)a->o.steps;
    double us_dev = steps ? t->device_ms * 1e3 / steps : 0;
    double us_wall = steps ? t->wall_ms * 1e3 / steps : 0;
    double rate = us_dev > 0 ? (double)n / (us_dev * 1e-6) : 0;
    char sel[32];
    snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
    json_t *params = run_params_json(a->o.model.model, a->o.model.params);
    json_t *validation = run_validation_json(a, v);
    json_t *root = json_pack(
        "{s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:o, s:s, s:I, s:I, s:I, s:I,"
        " s:{s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:s, s:s}, s:{s:b, s:f, s:s, s:b, s:f, s:f},"
        " s:{s:b, s:b, s:s}, s:{s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:o}, s:o}",
        "device", "name", d->name, "platform", d->platform_name, "selector", sel, "type",
        bcl_device_type_name(d->type), "driver", d->driver, "model", a->o.model.model->name,
        "params", params, "init",
        a->input ? "file" : (a->o.init == BCL_INIT_SEED ? "seed" : "random"), "seed",
        (json_int_t)a->o.seed, "balls", (json_int_t)n, "steps", (json_int_t)a->o.steps, "buffers",
        (json_int_t)chunks, "launch", "local", (json_int_t)l->local, "global",
        (json_int_t)p->global, "how", l->how, "why", l->why, "variant", p->variant,
        "balls_per_item", (json_int_t)p->balls_per_item, "steps_per_launch",
        (json_int_t)p->steps_per_launch, "steps_per_launch_how", p->k_how, "sync",
        a->sync == BCL_SYNC_EVERY ? "every" : "end", "cache", "hit", br->cache_hit, "program_ms",
        br->program_ms, "note", br->note, "stored", br->cache_stored, "store_ms", br->store_ms,
        "first_launch_ms", first_ms, "tuned", "stored", a->tuned_note[0] != '\0', "used",
        p->tuned_used, "note", a->tuned_note, "timing", "device_ms", t->device_ms, "wall_ms",
        t->wall_ms, "us_per_step", us_dev, "wall_us_per_step", us_wall, "ball_steps_per_s", rate,
        "gb_per_s", rate * 32.0 / (double)p->steps_per_launch / 1e9, "clock",
        t->host_clock ? "host" : "device", "clock_note",
        t->host_clock ? json_string(run_clock_note(d)) : json_null(), "validation", validation);
    /* Why this K (docs/PERFORMANCE.md) and the longest launch measured. */
    json_t *why = run_k_json(p);
    json_object_update(json_object_get(root, "launch"), why);
    json_decref(why);
    json_object_set_new(json_object_get(root, "timing"), "max_launch_ms",
                        json_real(t->max_launch_ms));
    return root;
}

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

static void print_multi(const run_args *a, bcl_group *g, size_t n, const bcl_exec_result *t,
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

static json_t *multi_json(const run_args *a, bcl_group *g, size_t n, const bcl_exec_result *t,
                          const bcl_validation *v)
{
    /* Today's fields: the device and launch of the first device with balls,
     * the timing of the whole run as bcl_group_exec gives it (device_ms:
     * the slowest device's, or the wall time on the host clock). */
    size_t nd = bcl_group_size(g), lead = 0;
    for (size_t i = nd; i-- > 0;)
        if (bcl_group_member_at(g, i)->shard.count)
            lead = i;
    const bcl_group_member *l = bcl_group_member_at(g, lead);
    bcl_sim_timing all = {.device_ms = t->device_ms,
                          .wall_ms = t->wall_ms,
                          .launches = l->timing.launches,
                          .host_clock = t->host_clock,
                          .max_launch_ms = t->max_launch_ms};
    size_t buffers = 0;
    for (size_t i = 0; i < nd; i++)
        buffers += bcl_group_member_at(g, i)->buffers;
    json_t *j =
        run_report_json(a, l->dev, n, &l->build, &l->plan, buffers, l->first_launch_ms, &all, v);
    json_t *devices = json_array();
    for (size_t i = 0; i < nd; i++)
        json_array_append_new(devices, run_member_json(a, bcl_group_member_at(g, i)));
    json_object_set_new(j, "devices", devices);
    if (nd == 1)
        return j; /* one device: the run's own fields are its */
    double rate = t->wall_ms > 0 ? (double)n * (double)a->o.steps / (t->wall_ms * 1e-3) : 0;
    json_object_set_new(j, "aggregate",
                        json_pack("{s:I, s:f, s:f, s:f}", "devices", (json_int_t)nd, "wall_ms",
                                  t->wall_ms, "ball_steps_per_s", rate, "calibrate_ms",
                                  bcl_group_calibrate_ms(g)));
    return j;
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
    return multi_json(a, g, n, r, &r->v);
}
