/*
 * ballcl bench over several devices (docs/BENCHMARK.md, "Several devices").
 * For each N the balls are split as 'ballcl run' splits them (bcl_group),
 * every shard is validated bit for bit, then the repeats interleave: each
 * device timed alone on its shard, one after the other, then the row
 * all-devices with every device at once. The rows share the host clock
 * (what a run waits for), so the scaling efficiency, the aggregate over the
 * sum of the devices' rates alone, compares like with like.
 */
#include "bench.h"

#include "job/job.h"
#include "measure/timing.h"

#include <stdlib.h>
#include <string.h>

typedef struct multi_row {
    char name[48];
    const bcl_group_member *m; /* NULL for all-devices, else the group's, then member */
    bcl_group_member member;   /* a copy of it: the report outlives the group */
    bcl_measurement meas;      /* wall_us per step */
    double rate;               /* ball-steps/s, median */
} multi_row;

typedef struct multi_result {
    size_t balls, nrows;
    double calibrate_ms, sum_alone, efficiency, fastest_alone;
    bool validated;
    multi_row *rows; /* one per device with balls, then all-devices */
} multi_result;

static int validate_shards(bcl_group *g, const float *init, float *scratch, bool *all_ok,
                           bcl_error *e)
{
    *all_ok = true;
    for (size_t i = 0; i < bcl_group_size(g); i++) {
        const bcl_group_member *m = bcl_group_member_at(g, i);
        if (!m->shard.count)
            continue;
        bcl_validation v = {0};
        int rc = bcl_check_sim(bcl_group_sim(g, i), &m->plan, init + 4 * m->shard.first, 0,
                               scratch + 4 * m->shard.first, &v, e);
        if (rc)
            return rc;
        *all_ok &= v.mismatches == 0;
    }
    return BCL_OK;
}

static int bench_n(const bench_args *a, const bcl_device_info *const *devs, size_t ndev, size_t n,
                   multi_result *res, bcl_error *e)
{
    memset(res, 0, sizeof *res);
    res->balls = n;
    const bcl_model *m = a->o.model.model;
    /* The initial state, then a scratch copy for validation. */
    float *init = malloc(2 * n * 4 * sizeof(float));
    bcl_group *g = NULL;
    bcl_timer **timers = calloc(ndev, sizeof *timers);
    res->rows = calloc(ndev + 1, sizeof *res->rows);
    double *wall = calloc(a->o.measure.repeats ? a->o.measure.repeats : 1, sizeof *wall);
    int rc = BCL_OK;
    if (!init || !timers || !res->rows || !wall) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", n);
        goto out;
    }
    bcl_model_fill(m, init, 0, n, a->o.init, a->o.seed, a->o.model.params);
    /* The fused row's request: the tuned K, variant and local size when
     * stored and K is not given (the group applies the one tuned rule),
     * else the rule; the measurement chooses the steps. */
    bcl_group_opts o = {
        .model = m,
        .ctx = {.use_cache = a->o.use_cache},
        .req = {.params = a->o.model.params,
                .balls = n,
                .fused = true,
                .steps_per_launch = (unsigned)a->o.steps_per_launch,
                .launch_budget_ms = a->o.launch_budget_ms,
                .launch = {.mode = BCL_LOCAL_AUTO}},
    };
    cli_progress("bench", 0, 0, "opening the devices");
    if ((rc = bcl_group_open(devs, ndev, &o, &g, e)))
        goto out;
    cli_progress("bench", 0, 0, "splitting by rate");
    /* Loaded with no steps: the plans and warm-up launches, nothing timed. */
    bcl_exec x = {.load = init, .load_balls = n};
    bcl_exec_result t;
    if ((rc = bcl_group_split(g, init, e)) || (rc = bcl_group_exec(g, &x, &t, e)))
        goto out;
    res->calibrate_ms = bcl_group_calibrate_ms(g);
    cli_progress("bench", 0, 0, "validating every shard");
    if ((rc = validate_shards(g, init, init + 4 * n, &res->validated, e)))
        goto out;
    if (!res->validated)
        goto out; /* never timed */
    double agg_rate = 0;
    unsigned k = 1;
    for (size_t i = 0; i < ndev; i++) {
        const bcl_group_member *gm = bcl_group_member_at(g, i);
        if (!gm->shard.count)
            continue;
        multi_row *r = &res->rows[res->nrows++];
        r->m = gm;
        snprintf(r->name, sizeof r->name, "%s alone", gm->selector);
        cli_progress("bench", 0, 0, "calibrating each device alone");
        if ((rc = bcl_timer_sim(bcl_group_sim(g, i), &gm->plan, &a->o.measure, &timers[i], e)))
            goto out;
        agg_rate += gm->rate;
        if (gm->plan.steps_per_launch > k)
            k = gm->plan.steps_per_launch;
    }
    /* all-devices: steps for about one repeat's length at the split's rates,
     * a multiple of the largest K. */
    uint64_t steps = a->o.measure.steps;
    if (!steps) {
        double ms = a->o.measure.repeat_ms > 0 ? a->o.measure.repeat_ms : 100;
        double want = agg_rate > 0 ? ms * 1e-3 * agg_rate / (double)n : k;
        steps = want < k ? k : ((uint64_t)want + k - 1) / k * k;
    }
    x = (bcl_exec){.steps = steps};
    if ((rc = bcl_group_exec(g, &x, &t, e))) /* untimed: the first pass at this size */
        goto out;
    unsigned repeats = a->o.measure.repeats ? a->o.measure.repeats : 1;
    char line[96];
    for (unsigned rep = 0; rep < repeats; rep++) {
        snprintf(line, sizeof line, "N=%zu timing, repeat %u of %u", n, rep + 1, repeats);
        cli_progress("bench", 0, 0, line);
        for (size_t i = 0; i < ndev; i++)
            if (timers[i] && (rc = bcl_timer_repeat(timers[i], e)))
                goto out;
        if ((rc = bcl_group_exec(g, &x, &t, e)))
            goto out;
        wall[rep] = t.wall_ms * 1e3 / (double)steps;
    }
    for (size_t i = 0, row = 0; i < ndev; i++) {
        if (!timers[i])
            continue;
        multi_row *r = &res->rows[row++];
        bcl_timer_result(timers[i], &r->meas);
        r->rate = (double)r->m->shard.count / (r->meas.wall_us.median * 1e-6);
        res->sum_alone += r->rate;
        if (r->rate > res->fastest_alone)
            res->fastest_alone = r->rate;
    }
    multi_row *all = &res->rows[res->nrows++];
    snprintf(all->name, sizeof all->name, "all-devices");
    bcl_stats_compute(wall, repeats, &all->meas.wall_us);
    all->meas.steps = steps;
    all->rate = (double)n / (all->meas.wall_us.median * 1e-6);
    res->efficiency = res->sum_alone > 0 ? all->rate / res->sum_alone : 0;
out:
    cli_progress_end();
    for (size_t i = 0; i < ndev; i++)
        bcl_timer_free(timers[i]);
    /* The rows point into the group's members: copied before closing. */
    for (size_t r = 0; r < res->nrows; r++) {
        if (res->rows[r].m) {
            res->rows[r].member = *res->rows[r].m;
            res->rows[r].m = &res->rows[r].member;
        }
    }
    bcl_group_close(g);
    free(timers);
    free(wall);
    free(init);
    return rc;
}

static void print_table(const bench_args *a, const bcl_device_info *const *devs, size_t ndev,
                        const multi_result *res, const char *date)
{
    printf("bench: model %s, N = %zu, %zu devices, %s\n", a->o.model.model->name, res->balls, ndev,
           date);
    for (size_t i = 0; i < ndev; i++)
        printf("  %u:%u %s (%s)\n", devs[i]->platform_index, devs[i]->device_index,
               cli_shown(devs[i]->name), cli_shown(devs[i]->platform_name));
    if (!res->validated) {
        printf("validation FAILED on a shard: nothing timed\n");
        return;
    }
    printf("split by rate%s; every shard validated bit for bit; host clock, median (min..max) "
           "of %u repeats\n\n",
           res->calibrate_ms > 0 ? " (calibrated)" : "", a->o.measure.repeats);
    printf("  %-14s %10s %6s %-9s %4s  %-30s %s\n", "row", "balls", "share", "kernel", "K",
           "us/step median (min..max)", "ball-steps/s");
    for (size_t r = 0; r < res->nrows; r++) {
        const multi_row *row = &res->rows[r];
        char t[64];
        snprintf(t, sizeof t, "%.3f (%.3f..%.3f)", row->meas.wall_us.median, row->meas.wall_us.min,
                 row->meas.wall_us.max);
        printf("  %-14s %10zu ", row->name, row->m ? row->m->shard.count : res->balls);
        if (row->m)
            printf("%5.1f%% %-9s %4u", 100 * row->m->share, row->m->plan.kernel,
                   row->m->plan.steps_per_launch);
        else
            printf("%6s %-9s %4s", "100%", "", "");
        printf("  %-30s %.3g\n", t, row->rate);
    }
    printf("\nall-devices: %.3g ball-steps/s = %.2f x the sum of the devices alone (%.3g); "
           "%.2f x the fastest alone\n",
           res->rows[res->nrows - 1].rate, res->efficiency, res->sum_alone,
           res->fastest_alone > 0 ? res->rows[res->nrows - 1].rate / res->fastest_alone : 0);
    if (res->calibrate_ms > 0)
        printf("calibration before the split: %.1f ms\n", res->calibrate_ms);
}

static json_t *result_json(const multi_result *res)
{
    json_t *rows = json_array();
    for (size_t r = 0; r < res->nrows; r++) {
        const multi_row *row = &res->rows[r];
        json_t *j = json_pack("{s:s, s:{s:f, s:f, s:f, s:i}, s:I, s:f}", "name", row->name,
                              "wall_us_per_step", "median", row->meas.wall_us.median, "min",
                              row->meas.wall_us.min, "max", row->meas.wall_us.max, "count",
                              (int)row->meas.wall_us.count, "steps", (json_int_t)row->meas.steps,
                              "ball_steps_per_s", row->rate);
        const bcl_group_member *m = row->m;
        json_t *more =
            m ? json_pack("{s:s, s:s, s:I, s:f, s:s, s:I, s:s}", "selector", m->selector, "device",
                          m->dev->name, "balls", (json_int_t)m->shard.count, "share", m->share,
                          "kernel", m->plan.kernel, "steps_per_launch",
                          (json_int_t)m->plan.steps_per_launch, "split_rate_how", m->rate_how)
              : json_pack("{s:I, s:f, s:f, s:f}", "balls", (json_int_t)res->balls, "efficiency",
                          res->efficiency, "sum_alone_ball_steps_per_s", res->sum_alone,
                          "fastest_alone_ball_steps_per_s", res->fastest_alone);
        json_object_update(j, more);
        json_decref(more);
        json_array_append_new(rows, j);
    }
    return json_pack("{s:I, s:b, s:f, s:o}", "balls", (json_int_t)res->balls, "validated",
                     res->validated, "calibrate_ms", res->calibrate_ms, "rows", rows);
}

int bench_multi(const bench_args *a, const bcl_device_info *const *devs, size_t ndev,
                const char *date, bcl_error *e)
{
    if (a->csv)
        return bcl_fail(e, BCL_EXIT_INPUT, "--csv: one device only (several give the JSON)");
    json_t *sweep = json_array();
    int rc = BCL_OK;
    size_t failed = 0;
    for (size_t i = 0; i < a->o.nballs && rc == BCL_OK; i++) {
        size_t n = (size_t)a->o.balls[i];
        multi_result res;
        rc = bench_n(a, devs, ndev, n, &res, e);
        if (rc == BCL_OK) {
            failed += !res.validated;
            if (!a->o.json) {
                if (i)
                    printf("\n");
                print_table(a, devs, ndev, &res, date);
                fflush(stdout);
            }
            json_array_append_new(sweep, result_json(&res));
        }
        free(res.rows);
    }
    if (rc == BCL_OK && a->o.json) {
        json_t *devices = json_array();
        for (size_t i = 0; i < ndev; i++) {
            char sel[24];
            snprintf(sel, sizeof sel, "%u:%u", devs[i]->platform_index, devs[i]->device_index);
            json_array_append_new(devices,
                                  json_pack("{s:s, s:s, s:s}", "selector", sel, "name",
                                            devs[i]->name, "platform", devs[i]->platform_name));
        }
        json_t *root =
            json_pack("{s:s, s:s, s:o, s:i, s:O}", "model", a->o.model.model->name, "date", date,
                      "devices", devices, "repeats", (int)a->o.measure.repeats, "sweep", sweep);
        cli_print_json(root);
        json_decref(root);
    }
    json_decref(sweep);
    if (rc == BCL_OK && failed)
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "validation failed: a shard gave other bits than the C reference; "
                      "nothing was timed");
    return rc;
}
