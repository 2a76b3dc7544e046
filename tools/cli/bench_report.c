/*
 * ballcl bench output: the human table with the seed's story in its footer,
 * the JSON object (docs/BENCHMARK.md) and the CSV lines for the plot script.
 */
#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const bench_row_names[ROW_COUNT] = {
    "reference",   "openmp",          "local=1", "local=driver", "local=auto",
    "local=tuned", "sync-every-step", "batched", "fused",
};

const bcl_stats *bench_row_us(const bench_row *r)
{
    return r->host_clock ? &r->m.wall_us : &r->m.device_us;
}

double bench_row_bytes_per_ball_step(const bench_row *r)
{
    /* The reference keeps a ball in registers for all the steps of a call. */
    double k = r->host ? (!r->openmp && r->m.steps ? (double)r->m.steps : 1)
                       : (double)r->so.steps_per_launch;
    return 32.0 / (k > 0 ? k : 1);
}

static double rate(const bench_row *r, size_t n)
{
    double us = bench_row_us(r)->median;
    return us > 0 ? (double)n / (us * 1e-6) : 0;
}

static double speedup(const bench_result *res, const bench_row *r)
{
    const bench_row *ref = &res->rows[ROW_REFERENCE];
    double a = bench_row_us(ref)->median, b = bench_row_us(r)->median;
    return ref->validated && r->validated && b > 0 ? a / b : 0;
}

static void config_text(const bench_row *r, char *out, size_t size)
{
    if (r->host) {
        snprintf(out, size, "host, %u thread%s", r->threads, r->threads == 1 ? "" : "s");
        return;
    }
    char local[32];
    if (r->so.launch.local)
        snprintf(local, sizeof local, "local %zu", r->so.launch.local);
    else
        snprintf(local, sizeof local, "local driver");
    char k[24] = "";
    if (r->so.steps_per_launch > 1 || r->so.fused)
        snprintf(k, sizeof k, ", K=%u", r->so.steps_per_launch);
    const char *v = r->so.variant && *r->so.variant ? r->so.variant : NULL;
    snprintf(out, size, "%s%s%s%s%s", v ? v : "", v ? ", " : "", local, k,
             strcmp(r->so.launch.how, "tuned") == 0 ? " (tuned)"
             : r->tuned_missing                     ? " (not tuned)"
                                                    : "");
}

static const bench_row *row(const bench_result *res, int i)
{
    return &res->rows[i];
}

/* us/step median of a validated row, or NAN. */
static double us_of(const bench_result *res, int i)
{
    return row(res, i)->validated ? bench_row_us(row(res, i))->median : NAN;
}

static void print_footer(const bench_result *res)
{
    double l1 = us_of(res, ROW_LOCAL_1), la = us_of(res, ROW_LOCAL_AUTO);
    double ld = us_of(res, ROW_LOCAL_DRIVER), lt = us_of(res, ROW_LOCAL_TUNED);
    double se = us_of(res, ROW_SYNC_EVERY), ba = us_of(res, ROW_BATCHED);
    double fu = us_of(res, ROW_FUSED);
    printf("\nThe seed's three mistakes, measured here:\n");
    if (isnan(l1) || isnan(la))
        printf("  1. N work-groups of one work-item (local=1): n/a (a row failed validation)\n");
    else
        printf("  1. N work-groups of one work-item (local=1): %.1f us/step, %.2fx the time of "
               "local=auto (%.1f us/step)\n",
               l1, l1 / la, la);
    if (isnan(l1) || isnan(ld) || isnan(lt))
        printf("  2. a hand-written launch where the library's would do: n/a (a row failed "
               "validation)\n");
    else
        printf("  2. a hand-written launch where the library's would do: the runtime's own choice "
               "(local=driver) is %.2fx faster than local=1 and %.2fx the time of local=tuned\n",
               l1 / ld, ld / lt);
    if (isnan(se) || isnan(ba))
        printf("  3. a wait (and print) after every step: n/a (a row failed validation)\n");
    else
        printf("  3. a wait (and print) after every step: sync-every-step %.1f us/step against "
               "batched %.1f us/step, %+.1f us (%.2fx) per step\n",
               se, ba, se - ba, se / ba);
    if (!isnan(fu))
        printf("Best: fused, K=%u steps per launch: %.3g ball-steps/s, %.1fx the C reference, "
               "%.1fx batched single steps.\n",
               row(res, ROW_FUSED)->so.steps_per_launch, rate(row(res, ROW_FUSED), res->balls),
               speedup(res, row(res, ROW_FUSED)), isnan(ba) ? 0 : ba / fu);
    if (row(res, ROW_LOCAL_TUNED)->tuned_missing)
        printf("Note: nothing is tuned for this device and model; local=tuned ran local=auto "
               "(run 'ballcl tune').\n");
}

void bench_print_table(const bench_info *info, const bench_result *res)
{
    const bcl_device_info *d = info->dev;
    printf("bench: model %s, N = %zu balls, device '%s' (%s, %u:%u)\n", info->model->name,
           res->balls, d->name, d->platform_name, d->platform_index, d->device_index);
    printf("%s, %u repeats per row, median (min..max); copy bandwidth %.1f GB/s "
           "(clEnqueueCopyBuffer of %.1f MB%s)\n\n",
           info->date, info->repeats, res->copy_gb_per_s.median, (double)res->copy_bytes / 1e6,
           res->copy_host_clock ? ", host clock" : "");
    printf("%-16s %-32s %-6s %-30s %12s %8s %8s  %s\n", "row", "config", "clock",
           "us/step median (min..max)", "ball-steps/s", "GB/s", "vs ref", "validated");
    for (int i = 0; i < ROW_COUNT; i++) {
        const bench_row *r = row(res, i);
        char cfg[96], t[64];
        config_text(r, cfg, sizeof cfg);
        if (!r->validated) {
            snprintf(t, sizeof t, "not timed");
            printf("%-16s %-32s %-6s %-30s %12s %8s %8s  FAILED (%llu of %llu floats differ)\n",
                   r->name, cfg, r->host_clock ? "host" : "device", t, "-", "-", "-",
                   (unsigned long long)r->v.mismatches, (unsigned long long)r->v.compared);
            continue;
        }
        const bcl_stats *us = bench_row_us(r);
        snprintf(t, sizeof t, "%.2f (%.2f..%.2f)", us->median, us->min, us->max);
        double bs = rate(r, res->balls);
        printf("%-16s %-32s %-6s %-30s %12.3g %8.2f %7.2fx  yes\n", r->name, cfg,
               r->host_clock ? "host" : "device", t, bs,
               bs * bench_row_bytes_per_ball_step(r) / 1e9, speedup(res, r));
    }
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

static json_t *number_or_null(bool ok, double x)
{
    return ok && isfinite(x) ? json_real(x) : json_null();
}

static json_t *row_json(const bench_result *res, const bench_row *r)
{
    bool ok = r->validated;
    double bs = rate(r, res->balls);
    json_t *cfg;
    if (r->host) {
        cfg = json_pack("{s:s, s:i}", "where", "host", "threads", (int)r->threads);
    } else {
        const char *v = r->so.variant ? r->so.variant : "";
        cfg = json_pack("{s:s, s:s, s:i, s:o, s:s, s:I, s:i, s:s}", "where", "device", "variant", v,
                        "balls_per_item", (int)bcl_variant_balls(v), "local",
                        r->so.launch.local ? json_integer((json_int_t)r->so.launch.local)
                                           : json_string("driver"),
                        "local_how", r->so.launch.how ? r->so.launch.how : "", "global",
                        (json_int_t)r->global, "steps_per_launch", (int)r->so.steps_per_launch,
                        "sync", r->so.sync == BCL_SYNC_EVERY ? "every" : "end");
    }
    return json_pack(
        "{s:s, s:b, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:{s:I, s:I}}", "name",
        r->name, "validated", ok, "clock", r->host_clock ? "host" : "device", "us_per_step",
        ok ? stats_json(bench_row_us(r)) : json_null(), "device_us_per_step",
        ok && !r->host && !r->m.host_clock ? stats_json(&r->m.device_us) : json_null(),
        "wall_us_per_step", ok ? stats_json(&r->m.wall_us) : json_null(), "ball_steps_per_s",
        number_or_null(ok, bs), "gb_per_s",
        number_or_null(ok, bs * bench_row_bytes_per_ball_step(r) / 1e9), "speedup_vs_reference",
        number_or_null(ok, speedup(res, r)), "config", cfg, "steps_per_repeat",
        (json_int_t)r->m.steps, "launches_per_repeat", (json_int_t)r->m.launches, "validation",
        "compared", (json_int_t)r->v.compared, "mismatches", (json_int_t)r->v.mismatches);
}

json_t *bench_result_json(const bench_result *res)
{
    json_t *rows = json_array();
    for (int i = 0; i < ROW_COUNT; i++)
        json_array_append_new(rows, row_json(res, row(res, i)));
    return json_pack("{s:I, s:f, s:{s:I, s:o, s:s}, s:o, s:o}", "balls", (json_int_t)res->balls,
                     "copy_gb_per_s", res->copy_gb_per_s.median, "copy", "bytes",
                     (json_int_t)res->copy_bytes, "gb_per_s", stats_json(&res->copy_gb_per_s),
                     "clock", res->copy_host_clock ? "host" : "device", "clock_note",
                     res->clock_note ? json_string(res->clock_note) : json_null(), "rows", rows);
}

json_t *bench_info_json(const bench_info *info)
{
    const bcl_device_info *d = info->dev;
    char sel[32];
    snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
    json_t *params = json_array();
    for (unsigned i = 0; i < info->nparams; i++)
        json_array_append_new(params, json_real(info->params[i]));
    return json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:s, s:o, s:s, s:I, s:i, s:i}", "schema",
        "ballcl-bench/1", "date", info->date, "device", "name", d->name, "platform",
        d->platform_name, "selector", sel, "type", bcl_device_type_name(d->type), "version",
        d->version, "driver", d->driver, "model", info->model->name, "params", params, "init",
        info->init == BCL_INIT_SEED ? "seed" : "random", "seed", (json_int_t)info->seed, "repeats",
        (int)info->repeats, "host_threads", (int)bcl_host_threads());
}

/* Appends printf output to a growing buffer. */
static int append(char **buf, size_t *len, bcl_error *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int append(char **buf, size_t *len, bcl_error *e, const char *fmt, ...)
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
                    "local,steps_per_launch,copy_gb_per_s\n");
    for (int i = 0; i < ROW_COUNT && rc == BCL_OK; i++) {
        const bench_row *r = row(res, i);
        char local[24] = "";
        if (!r->host) {
            if (r->so.launch.local)
                snprintf(local, sizeof local, "%zu", r->so.launch.local);
            else
                snprintf(local, sizeof local, "driver");
        }
        const char *variant = !r->host && r->so.variant ? r->so.variant : "";
        unsigned k = r->host ? 1 : r->so.steps_per_launch;
        if (r->validated) {
            const bcl_stats *us = bench_row_us(r);
            double bs = rate(r, res->balls);
            rc = append(buf, len, e, "%zu,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,yes,%s,%s,%s,%u,%.6g\n",
                        res->balls, r->name, us->median, us->min, us->max, bs,
                        bs * bench_row_bytes_per_ball_step(r) / 1e9, speedup(res, r),
                        r->host_clock ? "host" : "device", variant, local, k,
                        res->copy_gb_per_s.median);
        } else {
            rc = append(buf, len, e, "%zu,%s,,,,,,,no,%s,%s,%s,%u,%.6g\n", res->balls, r->name,
                        r->host_clock ? "host" : "device", variant, local, k,
                        res->copy_gb_per_s.median);
        }
    }
    return rc;
}
