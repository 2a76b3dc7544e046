/*
 * ballcl survey check (docs/SURVEY.md, "The node health check"): a survey
 * (a file, or a fresh --quick one) against the database's surveys of the
 * same device, driver and kind; the database is only read.
 */
#include "cmd_survey_db.h"
#include "survey_db.h"
#include "survey_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check_help(void)
{
    printf("usage: ballcl survey check [--db FILE] [--json] [SURVEY.json]\n\n"
           "The node health check: compares a survey (SURVEY.json, or, without one, a\n"
           "fresh --quick survey of every device of this machine, not recorded) with\n"
           "the database's surveys of the same device (platform, vendor, name, type,\n"
           "compute units), the same driver and the same kind (quick with quick).\n"
           "A figure fails when it is worse than the fleet's range in its own direction\n"
           "(a bandwidth or rate when it falls, a latency when it rises) by more than\n"
           "the fleet's spread of it (the median absolute deviation of its values).\n"
           "The database is only read.\n\n"
           "  --db FILE    the database (default as for 'survey import')\n"
           "  --json       the verdict as JSON on stdout\n"
           "  -h, --help   this help\n\n"
           "Exit status: 0 every figure within the fleet's range, 1 a figure worse\n"
           "(one line per figure), 2 bad input or nothing to compare with.\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The fleet's values of one figure for the device; *n their count. */
static int fleet_values(sqlite3 *db, const char *path, const json_t *dev, bool quick,
                        const char *model, const char *key, double **vals, size_t *n, bcl_error *e)
{
    const json_t *id = json_object_get(dev, "identity");
    const char *f[5] = {"platform", "vendor", "name", "type", "driver"};
    for (int i = 0; i < 5; i++) {
        const char *v = json_string_value(json_object_get(id, f[i]));
        f[i] = v ? v : "";
    }
    *vals = NULL;
    *n = 0;
    json_t *rows, *row;
    int rc = survey_db_rows(
        db, path, e,
        "SELECT CAST(f.value AS REAL) AS v FROM runs r JOIN devices d ON d.id = r.device_id"
        " JOIN surveys s ON s.id = r.survey_id JOIN figures f ON f.run_id = r.id"
        " WHERE d.platform = ?1 AND d.vendor = ?2 AND d.name = ?3 AND d.type = ?4"
        " AND r.driver = ?5 AND d.compute_units = ?6 AND s.quick = ?7 AND f.model = ?8"
        " AND f.key = ?9 AND f.value IS NOT NULL",
        &rows, "sssssiiss", f[0], f[1], f[2], f[3], f[4],
        (long long)json_integer_value(
            json_object_get(json_object_get(dev, "limits"), "compute_units")),
        (long long)quick, model, key);
    size_t i;
    if (rc == BCL_OK && json_array_size(rows) &&
        !(*vals = malloc(json_array_size(rows) * sizeof **vals)))
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    json_array_foreach(*vals ? rows : NULL, i, row)(*vals)[(*n)++] =
        json_number_value(json_object_get(row, "v"));
    json_decref(rows);
    return rc;
}

/* Checks every device of doc; *compared counts the figures that had a
 * fleet. Each verdict goes into out, each worse one's line into lines. */
static int check_doc(sqlite3 *db, const char *path, const json_t *doc, json_t *out, json_t *lines,
                     size_t *compared, size_t *worse, bcl_error *e)
{
    bool quick = json_is_true(json_object_get(doc, "quick"));
    size_t i;
    json_t *dev;
    json_array_foreach(json_object_get(doc, "devices"), i, dev)
    {
        const json_t *id = json_object_get(dev, "identity");
        const char *model =
            json_string_value(json_object_get(json_object_get(dev, "measured"), "model"));
        /* The figures marked for the check; a model's: the default model's. */
        for (bcl_fig k = 0; k < BCL_FIG_COUNT; k++) {
            const bcl_survey_figure *g = &bcl_survey_figures[k];
            const json_t *fig = survey_at(json_object_get(dev, "measured"), g->key);
            double v = json_number_value(fig), *vals;
            size_t n;
            if (!(g->flags & BCL_FIG_CHECK) || !json_is_number(fig))
                continue;
            const char *fm = g->flags & BCL_FIG_MODEL ? (model ? model : bcl_models[0]->name) : "";
            int rc = fleet_values(db, path, dev, quick, fm, g->key, &vals, &n, e);
            if (rc)
                return rc;
            if (n == 0) /* vals is NULL: nothing was read */
                continue;
            qsort(vals, n, sizeof *vals, cmp_double);
            double lo = vals[0], hi = vals[n - 1], med = vals[n / 2];
            for (size_t j = 0; j < n; j++)
                vals[j] = fabs(vals[j] - med);
            qsort(vals, n, sizeof *vals, cmp_double);
            double spread = vals[n / 2];
            free(vals);
            int dir = g->better;
            bool bad = dir > 0 ? v < lo - spread : v > hi + spread;
            (*compared)++;
            *worse += bad;
            const char *name = json_string_value(json_object_get(id, "name"));
            const char *host = json_string_value(json_object_get(id, "host"));
            const char *driver = json_string_value(json_object_get(id, "driver"));
            json_array_append_new(
                out, json_pack("{s:s?, s:s?, s:s?, s:s, s:f, s:f, s:f, s:f, s:I, s:s, s:b}",
                               "device", name, "host", host, "driver", driver, "figure", g->key,
                               "value", v, "fleet_min", lo, "fleet_max", hi, "spread", spread,
                               "surveys", (json_int_t)n, "direction",
                               dir > 0 ? "higher is better" : "lower is better", "worse", bad));
            if (!bad)
                continue;
            char line[2048];
            snprintf(line, sizeof line,
                     "check: %s (%s%s%s): %s %.4g is %s the fleet's range %.4g to %.4g by more "
                     "than its spread %.3g (%lld surveys)",
                     name, driver, host ? ", " : "", host ? host : "", g->key, v,
                     dir > 0 ? "below" : "above", lo, hi, spread, (long long)n);
            json_array_append_new(lines, json_string_nocheck(line));
        }
    }
    return BCL_OK;
}

/* A fresh --quick survey of every device of this machine, not recorded. */
static int fresh_survey(json_t **doc, bcl_error *e)
{
    bcl_device_list list = {0};
    bcl_survey_opts o;
    bcl_survey_opts_default(&o, true);
    char caches[256], host[256] = "";
    bcl_survey_driver_caches_off(caches, sizeof caches);
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    o.driver_caches = caches;
    o.host = host;
    o.command = "ballcl survey check";
    char *text = NULL;
    int status;
    int rc = cli_enumerate(&list, e);
    if (rc == BCL_OK)
        rc = bcl_survey_run(list.dev, list.count, &o, &text, &status, e);
    if (rc == BCL_OK)
        rc = bcl_survey_read(text, strlen(text), "the fresh survey", doc, e);
    free(text);
    bcl_devices_free(&list);
    return rc;
}

int cmd_survey_check(int argc, char **argv)
{
    survey_db_args a;
    int rc = survey_db_args_parse("survey check", argc, argv, NULL, &a, check_help);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.first_arg + 1 < argc)
        return cli_usage_error("survey check", "one survey file at most, found '%s' after '%s'",
                               argv[a.first_arg + 1], argv[a.first_arg]);
    bcl_error e = {0};
    char path[4096];
    sqlite3 *db = NULL;
    json_t *doc = NULL, *out = json_array(), *lines = json_array();
    char *text = NULL;
    const char *file = a.first_arg < argc ? argv[a.first_arg] : NULL;
    /* The database first: a bad one fails before a survey is measured. */
    if (!out || !lines)
        rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory");
    if (rc == BCL_OK)
        rc = survey_db_open(a.db, false, path, sizeof path, &db, &e);
    if (rc == BCL_OK && file && (rc = bcl_survey_load(file, &text, &e)) == BCL_OK)
        rc = bcl_survey_read(text, strlen(text), file, &doc, &e);
    else if (rc == BCL_OK && !file)
        rc = fresh_survey(&doc, &e);
    size_t compared = 0, worse = 0;
    if (rc == BCL_OK)
        rc = check_doc(db, path, doc, out, lines, &compared, &worse, &e);
    char shown[4200];
    bcl_escape(file ? file : "the fresh survey", shown, sizeof shown);
    if (rc == BCL_OK && compared == 0)
        rc = bcl_fail(&e, BCL_EXIT_INPUT,
                      "survey check: nothing to compare '%s' with: no survey in the database "
                      "has its device with the same driver and kind (quick or not)",
                      shown);
    if (rc == BCL_OK && a.json) {
        json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:o}", "survey", file ? file : "fresh",
                              "verdict", worse ? "worse" : "ok", "compared", (json_int_t)compared,
                              "worse", (json_int_t)worse, "figures", out);
        out = NULL;
        cli_print_json(j);
        json_decref(j);
    } else if (rc == BCL_OK) {
        size_t i;
        json_t *line;
        json_array_foreach(lines, i, line)
        {
            char esc[2048];
            bcl_escape(json_string_value(line), esc, sizeof esc);
            printf("%s\n", esc);
        }
        printf("check: %zu figure%s of '%s' compared, %zu worse than the fleet\n", compared,
               compared == 1 ? "" : "s", shown, worse);
    }
    if (rc)
        cli_report(&e);
    bcl_error_clear(&e);
    json_decref(out);
    json_decref(lines);
    json_decref(doc);
    free(text);
    sqlite3_close(db);
    return rc ? rc : worse ? 1 : 0;
}
