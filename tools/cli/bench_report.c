/*
 * ballcl bench output: the human table with the seed's story in its footer,
 * the JSON object (docs/BENCHMARK.md) and the CSV lines for the plot script.
 */
#include "bench.h"
#include "survey/survey.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The row's figure: device or host time per step, per its clock. */
static const bcl_stats *row_us(const bench_row *r)
{
    return r->host_clock ? &r->m.wall_us : &r->m.device_us;
}

/* Bytes moved per ball-step: 32 (read and write a float4) divided by the
 * steps a ball stays in registers per pass over memory (the reference: all
 * the steps of a call). */
static double bytes_per_ball_step(const bench_row *r)
{
    double k = r->host ? (!r->openmp && r->m.steps ? (double)r->m.steps : 1)
                       : (double)r->plan.steps_per_launch;
    return 32.0 / (k > 0 ? k : 1);
}

static double rate(const bench_result *res, const bench_row *r)
{
    double us = row_us(r)->median;
    return us > 0 ? (double)res->balls / (us * 1e-6) : 0;
}

static double gb_per_s(const bench_result *res, const bench_row *r)
{
    return rate(res, r) * bytes_per_ball_step(r) / 1e9;
}

/* A row's ball-step rate as a fraction of the add-rate bound of the same
 * run (the model's float operations per ball-step at the measured add
 * rate); NAN when either is unknown (a model file need not count its
 * operations). */
static double bound_fraction(const bench_result *res, const bench_row *r)
{
    double bound = res->add.gflop_per_s.median * 1e9;
    return r->validated && bound > 0 && res->ops_per_step ? rate(res, r) * res->ops_per_step / bound
                                                          : NAN;
}

/* The ball-step rate the add-rate bound allows; NAN when the model's
 * operations per ball-step are unknown. */
static double bound_rate(const bench_result *res)
{
    return res->ops_per_step ? res->add.gflop_per_s.median * 1e9 / res->ops_per_step : NAN;
}

/* The row against the reference row; NAN when either did not run (a
 * model file has no reference row). */
static double speedup(const bench_result *res, const bench_row *r)
{
    const bench_row *ref = &res->rows[ROW_REFERENCE];
    double a = row_us(ref)->median, b = row_us(r)->median;
    return ref->validated && r->validated && b > 0 ? a / b : NAN;
}

static void config_text(const bench_row *r, char *out, size_t size)
{
    if (r->host) {
        snprintf(out, size, "host, %u thread%s", r->threads, r->threads == 1 ? "" : "s");
        return;
    }
    char local[24], k[24] = "";
    if (r->plan.steps_per_launch > 1 || r->plan.fused)
        snprintf(k, sizeof k, ", K=%u", r->plan.steps_per_launch);
    const char *v = r->plan.variant[0] ? r->plan.variant : NULL;
    snprintf(out, size, "%s%slocal %s%s%s", v ? v : "", v ? ", " : "",
             cli_local_text(r->plan.launch.local, local, sizeof local), k,
             strcmp(r->plan.launch.how, "tuned") == 0 ? " (tuned)"
             : r->tuned_missing                       ? " (not tuned)"
                                                      : "");
}

/* us/step median of a validated row, or NAN. */
static double us_of(const bench_result *res, int i)
{
    return res->rows[i].validated ? row_us(&res->rows[i])->median : NAN;
}

static json_t *number_or_null(bool ok, double x)
{
    return ok && isfinite(x) ? json_real(x) : json_null();
}

/* Whether a comparison of two rows means anything (docs/BENCHMARK.md): two
 * device rows that ran the same launch (variant, local size, K, waiting)
 * are one configuration measured twice, and two rows whose min..max ranges
 * overlap differ by less than the noise of this machine at this moment. */
typedef enum { CMP_NA, CMP_SAME_CONFIG, CMP_NOISE, CMP_DIFFERENT } cmp_kind;

static const char *const cmp_names[] = {"n/a", "same configuration", "within noise", "different"};

/* Two device rows that ran the same launch: variant, local size, K, waiting. */
static bool same_launch(const bench_row *a, const bench_row *b)
{
    const bcl_plan *x = &a->plan, *y = &b->plan;
    return !a->host && !b->host && strcmp(x->variant, y->variant) == 0 &&
           x->launch.local == y->launch.local && x->steps_per_launch == y->steps_per_launch &&
           x->sync == y->sync;
}

static bool same_config(const bench_row *a, const bench_row *b)
{
    if (a->host || b->host)
        return a->host == b->host && a->openmp == b->openmp;
    return same_launch(a, b) && a->plan.fused == b->plan.fused && a->host_clock == b->host_clock;
}

static cmp_kind compare(const bench_result *res, int i, int j)
{
    const bench_row *a = &res->rows[i], *b = &res->rows[j];
    if (!a->validated || !b->validated)
        return CMP_NA;
    if (same_config(a, b))
        return CMP_SAME_CONFIG;
    const bcl_stats *x = row_us(a), *y = row_us(b);
    if (x->min <= y->max && y->min <= x->max)
        return CMP_NOISE;
    return CMP_DIFFERENT;
}

/* The rows that ran the floor's launch (kernel variant, local size, K,
 * waiting) with the library's bookkeeping: what they take over the floor is
 * the library's own cost per launch. */
static const int own_cost_rows[] = {ROW_LOCAL_DRIVER, ROW_LOCAL_AUTO, ROW_LOCAL_TUNED, ROW_BATCHED};
#define OWN_COST_LIMIT 1.10 /* a row more than 10% above the floor is said */

/* The row's time over the floor's, or NAN when it ran another launch (a
 * fused row never runs the floor's). */
static double over_floor(const bench_result *res, int i)
{
    const bench_row *f = &res->rows[ROW_FLOOR], *r = &res->rows[i];
    double fl = us_of(res, ROW_FLOOR), x = us_of(res, i);
    bool same = same_launch(r, f) && !r->plan.fused && !f->plan.fused;
    return same && fl > 0 && !isnan(x) ? x / fl : NAN;
}

static void print_own_cost(const bench_result *res)
{
    double fl = us_of(res, ROW_FLOOR);
    if (isnan(fl))
        return;
    printf("ballcl's own cost per launch, against the floor (the same launches enqueued bare, "
           "%.2f us/step):",
           fl);
    int shown = 0, over = 0;
    for (size_t i = 0; i < sizeof own_cost_rows / sizeof own_cost_rows[0]; i++) {
        double r = over_floor(res, own_cost_rows[i]);
        if (isnan(r))
            continue;
        printf("%s %s %.2fx", shown++ ? "," : "", res->rows[own_cost_rows[i]].name, r);
        over += r > OWN_COST_LIMIT;
    }
    if (!shown)
        printf(" no row ran the same launch\n");
    else if (over)
        printf(": more than 10%% above the floor, the library's own work per launch shows\n");
    else
        printf(": within 10%%\n");
}

static void print_footer(const bench_result *res)
{
    double l1 = us_of(res, ROW_LOCAL_1), la = us_of(res, ROW_LOCAL_AUTO);
    double ld = us_of(res, ROW_LOCAL_DRIVER), lt = us_of(res, ROW_LOCAL_TUNED);
    double se = us_of(res, ROW_SYNC_EVERY), ba = us_of(res, ROW_BATCHED);
    double fu = us_of(res, ROW_FUSED);
    const char *noise = "within the noise (their min..max ranges overlap)";
    const char *na = "n/a (a row failed validation)\n";
    printf("\nThe seed's three mistakes, measured here:\n");
    printf("  1. N work-groups of one work-item (local=1): ");
    cmp_kind c1 = compare(res, ROW_LOCAL_1, ROW_LOCAL_AUTO);
    if (c1 == CMP_NA)
        printf("%s", na);
    else if (c1 == CMP_SAME_CONFIG)
        printf("local=auto ran local 1 too: nothing to compare\n");
    else if (c1 == CMP_NOISE)
        printf("%.1f us/step against local=auto's %.1f: %s, no cost measured\n", l1, la, noise);
    else
        printf("%.1f us/step, %.2fx the time of local=auto (%.1f us/step)\n", l1, l1 / la, la);
    printf("  2. a hand-written launch where the library's would do: ");
    cmp_kind d1 = compare(res, ROW_LOCAL_DRIVER, ROW_LOCAL_1);
    cmp_kind dt = compare(res, ROW_LOCAL_DRIVER, ROW_LOCAL_TUNED);
    if (d1 == CMP_NA || dt == CMP_NA) {
        printf("%s", na);
    } else {
        printf("the runtime's own choice (local=driver) ");
        if (d1 == CMP_DIFFERENT)
            printf("is %.2fx %s than local=1", l1 > ld ? l1 / ld : ld / l1,
                   l1 > ld ? "faster" : "slower");
        else
            printf("and local=1 are %s", noise);
        if (dt == CMP_SAME_CONFIG)
            printf("; local=tuned is the driver's choice too (the same configuration, so no "
                   "comparison)\n");
        else if (dt == CMP_NOISE)
            printf("; against local=tuned: %s\n", noise);
        else
            printf(", and %.2fx the time of local=tuned\n", ld / lt);
    }
    printf("  3. a wait (and print) after every step: ");
    cmp_kind c3 = compare(res, ROW_SYNC_EVERY, ROW_BATCHED);
    if (c3 == CMP_NA)
        printf("%s", na);
    else if (c3 != CMP_DIFFERENT)
        printf("sync-every-step %.1f us/step against batched %.1f: %s, no cost measured at this "
               "N\n",
               se, ba, noise);
    else if (se > ba)
        printf("sync-every-step %.1f us/step against batched %.1f us/step, %+.1f us (%.2fx) "
               "per step\n",
               se, ba, se - ba, se / ba);
    else
        printf("sync-every-step %.1f us/step was faster than batched %.1f us/step here: no "
               "cost measured at this N\n",
               se, ba);
    print_own_cost(res);
    if (!isnan(fu)) {
        const bench_row *f = &res->rows[ROW_FUSED];
        printf("Best: fused, K=%u steps per launch: %.3g ball-steps/s", f->plan.steps_per_launch,
               rate(res, f));
        if (isfinite(bound_fraction(res, f)))
            printf(" (%.1f%% of the add-rate bound, %.3g)", 100 * bound_fraction(res, f),
                   bound_rate(res));
        else
            printf(" (add-rate bound n/a)");
        if (isfinite(speedup(res, f)))
            printf(", %.1fx the C reference", speedup(res, f));
        cmp_kind fb = compare(res, ROW_FUSED, ROW_BATCHED);
        if (fb == CMP_DIFFERENT)
            printf(", %.1fx batched single steps.\n", ba / fu);
        else if (fb == CMP_NOISE)
            printf("; against batched single steps: %s.\n", noise);
        else
            printf(".\n");
    }
    if (res->rows[ROW_LOCAL_TUNED].tuned_missing)
        printf("Note: nothing is tuned for this device and model; local=tuned ran local=auto "
               "(run 'ballcl tune').\n");
}

/* The comparisons of the footer, for --json. */
static json_t *conclusions_json(const bench_result *res)
{
    static const struct {
        int mistake, a, b;
    } pairs[] = {
        {1, ROW_LOCAL_1, ROW_LOCAL_AUTO},
        {2, ROW_LOCAL_DRIVER, ROW_LOCAL_1},
        {2, ROW_LOCAL_DRIVER, ROW_LOCAL_TUNED},
        {3, ROW_SYNC_EVERY, ROW_BATCHED},
        {0, ROW_FUSED, ROW_BATCHED},
    };
    json_t *arr = json_array();
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        cmp_kind k = compare(res, pairs[i].a, pairs[i].b);
        double x = us_of(res, pairs[i].a), y = us_of(res, pairs[i].b);
        json_array_append_new(arr, json_pack("{s:i, s:s, s:s, s:o, s:s}", "mistake",
                                             pairs[i].mistake, "row", res->rows[pairs[i].a].name,
                                             "against", res->rows[pairs[i].b].name, "time_ratio",
                                             number_or_null(k != CMP_NA && y > 0, x / y), "verdict",
                                             cmp_names[k]));
    }
    return arr;
}

void bench_print_table(const bench_info *info, const bench_result *res)
{
    const bcl_device_info *d = info->dev;
    const cli_options *o = &info->a->o;
    const bcl_model *m = o->model.model;
    printf("bench: model %s%s%s%s, N = %zu balls, device '%s' (%s, %u:%u)\n", m->name,
           m->digest ? " (file " : "", m->digest ? cli_shown(m->kernel_file) : "",
           m->digest ? ")" : "", res->balls, cli_shown(d->name), cli_shown(d->platform_name),
           d->platform_index, d->device_index);
    printf("%s, %u repeats per row, median (min..max); copy bandwidth %.1f GB/s "
           "(clEnqueueCopyBuffer of %.1f MB%s)\n",
           info->date, o->measure.repeats, res->copy_rate.median, (double)res->copy_bytes / 1e6,
           res->copy_host_clock ? ", host clock" : "");
    printf("add-rate bound %.1f GFLOP/s (%.1f..%.1f; %u chains of %u-wide float adds per "
           "work-item, %zu work-items), ",
           res->add.gflop_per_s.median, res->add.gflop_per_s.min, res->add.gflop_per_s.max,
           res->add.chains, res->add.width, res->add.global);
    if (res->ops_per_step)
        printf("%u float operations per ball-step: at most %.3g ball-steps/s\n\n",
               res->ops_per_step, bound_rate(res));
    else
        printf("float operations per ball-step unknown (no #pragma ballcl ops in the model "
               "file): bound n/a\n\n");
    printf("%-16s %-32s %-6s %-30s %12s %8s %8s  %s\n", "row", "config", "clock",
           "us/step median (min..max)", "ball-steps/s", "GB/s", "vs ref", "validated");
    for (int i = 0; i < ROW_COUNT; i++) {
        const bench_row *r = &res->rows[i];
        if (r->na)
            continue;
        const bcl_stats *us = row_us(r);
        char cfg[96], t[64] = "not timed", bs[24] = "-", gb[24] = "-", vs[24] = "-", ok[64];
        config_text(r, cfg, sizeof cfg);
        snprintf(ok, sizeof ok, "FAILED (%llu of %llu floats differ)",
                 (unsigned long long)r->v.mismatches, (unsigned long long)r->v.compared);
        if (r->validated) {
            snprintf(t, sizeof t, "%.2f (%.2f..%.2f)", us->median, us->min, us->max);
            snprintf(bs, sizeof bs, "%.3g", rate(res, r));
            snprintf(gb, sizeof gb, "%.2f", gb_per_s(res, r));
            if (isfinite(speedup(res, r)))
                snprintf(vs, sizeof vs, "%.2fx", speedup(res, r));
            snprintf(ok, sizeof ok, "yes");
        }
        printf("%-16s %-32s %-6s %-30s %12s %8s %8s  %s\n", r->name, cfg,
               r->host_clock ? "host" : "device", t, bs, gb, vs, ok);
    }
    if (res->rows[ROW_REFERENCE].na)
        printf("host rows (reference, openmp): %s; vs ref: n/a\n", res->rows[ROW_REFERENCE].na);
    print_footer(res);
    if (res->clock_note)
        printf("Clock: this device's profiling failed its check (%s); its figures from then on "
               "are timed by the host clock (column clock).\n",
               res->clock_note);
}

static json_t *stats_json(const bcl_stats *s)
{
    return json_pack("{s:f, s:f, s:f}", "median", s->median, "min", s->min, "max", s->max);
}

static json_t *row_json(const bench_result *res, const bench_row *r)
{
    bool ok = r->validated;
    json_t *cfg;
    if (r->host) {
        cfg = json_pack("{s:s, s:i}", "where", "host", "threads", (int)r->threads);
    } else {
        const char *v = r->plan.variant;
        cfg =
            json_pack("{s:s, s:s, s:i, s:o, s:s, s:I, s:i, s:s}", "where", "device", "variant", v,
                      "balls_per_item", (int)r->plan.balls_per_item, "local",
                      cli_local_json(r->plan.launch.local), "local_how",
                      r->plan.launch.how ? r->plan.launch.how : "", "global",
                      (json_int_t)r->plan.global, "steps_per_launch", (int)r->plan.steps_per_launch,
                      "sync", r->plan.sync == BCL_SYNC_EVERY ? "every" : "end");
    }
    return json_pack(
        "{s:s, s:b, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:{s:I, s:I}, s:o}", "name",
        r->name, "validated", ok, "clock", r->host_clock ? "host" : "device", "us_per_step",
        ok ? stats_json(row_us(r)) : json_null(), "device_us_per_step",
        ok && !r->host && !r->m.host_clock ? stats_json(&r->m.device_us) : json_null(),
        "wall_us_per_step", ok ? stats_json(&r->m.wall_us) : json_null(), "ball_steps_per_s",
        number_or_null(ok, rate(res, r)), "gb_per_s", number_or_null(ok, gb_per_s(res, r)),
        "speedup_vs_reference", number_or_null(ok, speedup(res, r)), "config", cfg,
        "steps_per_repeat", (json_int_t)r->m.steps, "launches_per_repeat",
        (json_int_t)r->m.launches, "validation", "compared", (json_int_t)r->v.compared,
        "mismatches", (json_int_t)r->v.mismatches, "add_bound_fraction",
        number_or_null(ok && res->add.gflop_per_s.median > 0, bound_fraction(res, r)));
}

/* The footer's own-cost line, for --json. */
static json_t *own_cost_json(const bench_result *res)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < sizeof own_cost_rows / sizeof own_cost_rows[0]; i++) {
        double r = over_floor(res, own_cost_rows[i]);
        if (!isnan(r))
            json_array_append_new(arr, json_pack("{s:s, s:s, s:f, s:b}", "row",
                                                 res->rows[own_cost_rows[i]].name, "against",
                                                 "floor", "time_ratio", r, "over_10_percent",
                                                 r > OWN_COST_LIMIT));
    }
    return arr;
}

json_t *bench_result_json(const bench_result *res)
{
    json_t *rows = json_array();
    for (int i = 0; i < ROW_COUNT; i++)
        if (!res->rows[i].na)
            json_array_append_new(rows, row_json(res, &res->rows[i]));
    const bcl_add_rate *a = &res->add;
    /* The copy bandwidth and the add rate are the survey's figures too:
     * their keys are the figure table's. */
    return json_pack(
        "{s:I, s:f, s:{s:I, s:o, s:s}, s:f, s:{s:o, s:i, s:i, s:I, s:I, s:I, s:I, s:o, "
        "s:o}, s:o, s:o, s:s?, s:o, s:s?}",
        "balls", (json_int_t)res->balls, bcl_survey_key(BCL_FIG_COPY), res->copy_rate.median,
        "copy", "bytes", (json_int_t)res->copy_bytes, "gb_per_s", stats_json(&res->copy_rate),
        "clock", res->copy_host_clock ? "host" : "device", bcl_survey_key(BCL_FIG_ADD),
        a->gflop_per_s.median, "add_rate", "gflop_per_s", stats_json(&a->gflop_per_s), "width",
        (int)a->width, "chains", (int)a->chains, "global", (json_int_t)a->global, "local",
        (json_int_t)a->local, "adds_per_repeat", (json_int_t)a->adds_per_repeat, "compared",
        (json_int_t)a->compared, "ops_per_ball_step",
        res->ops_per_step ? json_integer(res->ops_per_step) : json_null(), "ball_steps_per_s_bound",
        number_or_null(true, bound_rate(res)), "rows", rows, "conclusions", conclusions_json(res),
        "clock_note", res->clock_note, "own_cost", own_cost_json(res), "host_rows_na",
        res->rows[ROW_REFERENCE].na);
}

json_t *bench_info_json(const bench_info *info)
{
    const bcl_device_info *d = info->dev;
    char sel[32];
    snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
    json_t *params = json_array();
    const cli_options *o = &info->a->o;
    for (unsigned i = 0; i < bcl_model_param_floats(o->model.model); i++)
        json_array_append_new(params, json_real(o->model.params[i]));
    /* A model file: where it was read from and the digest its tuned
     * records are keyed by (as 'ballcl run --json' gives them). */
    const bcl_model *m = o->model.model;
    json_t *model_file = m->digest
                             ? json_pack("{s:s, s:s}", "path", m->kernel_file, "sha256", m->digest)
                             : json_null();
    return json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i}, s:s, s:o, s:o, s:s, s:I, s:i, "
        "s:i}",
        "schema", "ballcl-bench/1", "date", info->date, "device", "name", d->name, "platform",
        d->platform_name, "selector", sel, "type", bcl_device_type_name(d->type), "version",
        d->version, "driver", d->driver, "compute_units", (int)d->compute_units, "clock_mhz",
        (int)d->clock_mhz, "native_vector_width_float", (int)d->native_vector_width_float, "model",
        o->model.model->name, "model_file", model_file, "params", params, "init",
        o->init == BCL_INIT_SEED ? "seed" : "random", "seed", (json_int_t)o->seed, "repeats",
        (int)o->measure.repeats, "host_threads", (int)bcl_host_threads());
}

/* Appends printf output to a growing buffer. */
__attribute__((format(printf, 4, 5))) static int append(char **buf, size_t *len, bcl_error *e,
                                                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char line[512];
    int w = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= sizeof line)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "CSV line too long");
    char *grown = realloc(*buf, *len + (size_t)w + 1);
    if (!grown)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    memcpy(grown + *len, line, (size_t)w + 1);
    *buf = grown;
    *len += (size_t)w;
    return BCL_OK;
}

int bench_csv_append(char **buf, size_t *len, const bench_result *res, bool header, bcl_error *e)
{
    int rc = BCL_OK;
    if (header)
        rc = append(buf, len, e,
                    "balls,row,us_per_step_median,us_per_step_min,us_per_step_max,"
                    "ball_steps_per_s,gb_per_s,speedup_vs_reference,validated,clock,variant,"
                    "local,steps_per_launch,%s\n",
                    bcl_survey_key(BCL_FIG_COPY));
    for (int i = 0; i < ROW_COUNT && rc == BCL_OK; i++) {
        const bench_row *r = &res->rows[i];
        if (r->na)
            continue;
        const bcl_stats *us = row_us(r);
        char local[24] = "", figures[160] = ",,,,,"; /* six empty fields when not timed */
        if (!r->host)
            cli_local_text(r->plan.launch.local, local, sizeof local);
        /* speedup_vs_reference: empty without a reference row */
        char vs[24] = "";
        if (isfinite(speedup(res, r)))
            snprintf(vs, sizeof vs, "%.6g", speedup(res, r));
        if (r->validated)
            snprintf(figures, sizeof figures, "%.6g,%.6g,%.6g,%.6g,%.6g,%s", us->median, us->min,
                     us->max, rate(res, r), gb_per_s(res, r), vs);
        rc = append(buf, len, e, "%zu,%s,%s,%s,%s,%s,%s,%u,%.6g\n", res->balls, r->name, figures,
                    r->validated ? "yes" : "no", r->host_clock ? "host" : "device",
                    r->host ? "" : r->plan.variant, local, r->host ? 1 : r->plan.steps_per_launch,
                    res->copy_rate.median);
    }
    return rc;
}
