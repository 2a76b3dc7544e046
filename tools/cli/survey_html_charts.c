/*
 * The report page's charts (docs/SURVEY.md, "The report page"): the data of
 * each chart as gnuplot's data file and its script, drawn by gnuplot into SVG
 * (survey_chart.c) and put into the page. Labels from survey files are made
 * safe for gnuplot's data file (plot_label); the titles are ours.
 */
#define _GNU_SOURCE /* strptime, timegm */
#include "survey_chart.h"
#include "survey_page.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct series {
    const char *key; /* the figure's key (model:key for a model's) */
    const char *title;
} series;

/* One grouped bar chart, a bar per series for every device; series that
 * no device has are left out, and a chart with none says so. */
static int bar_chart(report *r, sbuf *page, const char *title, const char *ylabel, bool logscale,
                     const series *ser, size_t nser)
{
    size_t n = json_array_size(r->devices);
    bool *used = calloc(nser ? nser : 1, sizeof *used);
    if (!used)
        return bcl_fail(r->e, BCL_EXIT_RUNTIME, "out of memory");
    size_t nused = 0;
    for (size_t s = 0; s < nser; s++) {
        for (size_t i = 0; i < n && !used[s]; i++)
            used[s] = !isnan(page_figure(json_array_get(r->devices, i), ser[s].key));
        nused += used[s];
    }
    sb_printf(page, "<figure class=\"chart\"><figcaption>%s</figcaption>\n", title);
    if (!nused) {
        sb_puts(page, "<p class=\"none\">No device of the database has these figures "
                      "(surveys of an older schema lack some).</p></figure>\n");
        free(used);
        return BCL_OK;
    }
    sbuf data = {0}, script = {0};
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *d = json_array_get(r->devices, i);
        char label[64];
        page_plot_label(page_str(d, "name"), label, sizeof label);
        sb_printf(&data, "\"%zu. %s\"", i + 1, label);
        for (size_t s = 0; s < nser; s++) {
            double v = page_figure(d, ser[s].key);
            if (!used[s])
                continue;
            if (isnan(v) || (logscale && v <= 0))
                v = NAN;
            else
                lo = v < lo ? v : lo, hi = v > hi ? v : hi;
            sb_printf(&data, " %.9g", v);
        }
        sb_puts(&data, "\n");
    }
    /* A log axis from well below the smallest bar, so that it shows. */
    char range[80] = "0:*";
    if (logscale && hi > 0)
        snprintf(range, sizeof range, "%.3g:%.3g", pow(10, floor(log10(lo)) - 0.3), hi * 2);
    sb_printf(&script,
              "set style data histograms\n"
              "set style histogram clustered gap 1\n"
              "set style fill solid 0.85 border -1\n"
              "set boxwidth 0.9\n"
              "set key outside right top vertical\n"
              "set grid ytics\n"
              "set xtics rotate by -20 left nomirror\n"
              "set bmargin 7\n"
              "set ylabel '%s'\n"
              "set yrange [%s]\n"
              "%s\n"
              "plot ",
              ylabel, range, logscale ? "set logscale y" : "");
    unsigned col = 2;
    for (size_t s = 0; s < nser; s++) {
        if (!used[s])
            continue;
        char t[64];
        page_plot_label(ser[s].title, t, sizeof t);
        sb_printf(&script, "%s'data.txt' using %u%s title '%s'", col == 2 ? "" : ", ", col,
                  col == 2 ? ":xtic(1)" : "", t);
        col++;
    }
    sb_puts(&script, "\n");
    free(used);
    int rc = BCL_OK;
    char *svg = NULL;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "c%u_", r->charts++);
    if (data.oom || script.oom)
        rc = bcl_fail(r->e, BCL_EXIT_RUNTIME, "out of memory");
    else
        rc = survey_chart_svg(script.s, data.s, 960, 380, prefix, &svg, r->e);
    if (rc == BCL_OK) {
        sb_puts(page, svg);
        sb_puts(page, "</figure>\n");
    }
    free(svg);
    free(data.s);
    free(script.s);
    return rc;
}

/* The figures a history panel shows, when the device has them. */
static const series history_figures[] = {
    {"launch_latency_us", "launch latency (us)"},
    {"roundtrip_us", "round trip (us)"},
    {"copy_gb_per_s", "copy (GB/s)"},
    {"read_only_gb_per_s", "read-only (GB/s)"},
    {"add_gflop_per_s", "add (GFLOP/s)"},
    {"fma_gflop_per_s", "FMA (GFLOP/s)"},
    {"write_gb_per_s", "host to device (GB/s)"},
    {"read_gb_per_s", "device to host (GB/s)"},
    {"build_ms_cold", "cold build (ms)"},
    {"seed:fused_ball_steps_per_s", "seed fused (ball-steps/s)"},
    {"seed:local1_penalty", "seed local = 1 penalty"},
    {"bounce:fused_ball_steps_per_s", "bounce fused (ball-steps/s)"},
};
#define NHISTORY (sizeof history_figures / sizeof history_figures[0])

/* For a device with several surveys: each figure over time, a panel each,
 * every point labelled with the driver it ran on. */
int survey_page_history(report *r, sbuf *page, const json_t *dev)
{
    json_t *runs;
    int rc = page_query(r,
                        "SELECT run_id, date, driver FROM device_runs WHERE device_id = ?"
                        " ORDER BY date, run_id",
                        json_integer_value(json_object_get(dev, "device_id")), &runs);
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run)
    {
        if (rc == BCL_OK)
            rc = page_load_run(r, run);
    }
    if (rc) {
        json_decref(runs);
        return rc;
    }
    /* A run whose date is not a time gnuplot reads (a file changed by hand)
     * is left out of the panels, and the caption says so. */
    size_t undated = 0;
    for (i = 0; i < json_array_size(runs);) {
        struct tm tm = {0};
        const char *end =
            strptime(page_str(json_array_get(runs, i), "date"), "%Y-%m-%dT%H:%M:%SZ", &tm);
        if (end && !*end && tm.tm_year >= 0 && tm.tm_year < 8000) {
            i++;
        } else {
            json_array_remove(runs, i);
            undated++;
        }
    }
    bool used[NHISTORY] = {0};
    size_t panels = 0;
    for (size_t f = 0; f < NHISTORY; f++) {
        json_array_foreach(runs, i, run) used[f] |=
            !isnan(page_figure(run, history_figures[f].key));
        panels += used[f];
    }
    sb_puts(page, "<figure class=\"chart history\"><figcaption>");
    sb_html(page, page_str(dev, "name"));
    sb_puts(page, " (");
    sb_html(page, page_str(dev, "platform"));
    sb_printf(page, "): %zu surveys; each point is labelled with its driver",
              json_array_size(runs));
    if (undated)
        sb_printf(page, " (%zu more left out: a date that is no time)", undated);
    sb_puts(page, "</figcaption>\n");
    sbuf data = {0}, script = {0};
    json_array_foreach(runs, i, run)
    {
        char driver[64], date[64];
        page_plot_label(page_str(run, "driver"), driver, sizeof driver);
        page_plot_label(page_str(run, "date"), date, sizeof date);
        sb_printf(&data, "%s \"%s\"", date, driver);
        for (size_t f = 0; f < NHISTORY; f++)
            if (used[f])
                sb_printf(&data, " %.9g", page_figure(run, history_figures[f].key));
        sb_puts(&data, "\n");
    }
    /* Three ticks over the span, with the time of day when it is short. */
    double t0 = 0, t1 = 0;
    json_array_foreach(runs, i, run)
    {
        struct tm tm = {0};
        const char *end = strptime(page_str(run, "date"), "%Y-%m-%dT%H:%M:%S", &tm);
        double t = end ? (double)timegm(&tm) : 0;
        t0 = i == 0 || t < t0 ? t : t0;
        t1 = i == 0 || t > t1 ? t : t1;
    }
    double step = (t1 - t0) / 3 > 60 ? (t1 - t0) / 3 : 60;
    bool short_span = t1 - t0 < 2 * 86400;
    unsigned cols = panels < 3 ? (unsigned)panels : 3;
    unsigned rows = (unsigned)((panels + cols - 1) / (cols ? cols : 1));
    sb_printf(&script,
              "set xdata time\n"
              "set timefmt '%%Y-%%m-%%dT%%H:%%M:%%SZ'\n"
              "set format x '%s'\n"
              "set xtics %.0f rotate by -20 left\n"
              "set offsets graph 0.1, graph 0.1, graph 0.25, graph 0.1\n"
              "set grid\n"
              "unset key\n"
              "set multiplot layout %u,%u\n",
              short_span ? "%m-%d %H:%M" : "%Y-%m-%d", step, rows ? rows : 1, cols ? cols : 1);
    unsigned col = 3;
    for (size_t f = 0; f < NHISTORY; f++) {
        if (!used[f])
            continue;
        sb_printf(&script,
                  "set title '%s'\n"
                  "plot 'data.txt' using 1:%u with steps lw 2, '' using 1:%u with points pt 7,"
                  " '' using 1:%u:2 with labels offset 0,1 font ',9'\n",
                  history_figures[f].title, col, col, col);
        col++;
    }
    sb_puts(&script, "unset multiplot\n");
    json_decref(runs);
    char *svg = NULL;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "c%u_", r->charts++);
    if (data.oom || script.oom)
        rc = bcl_fail(r->e, BCL_EXIT_RUNTIME, "out of memory");
    else if (panels)
        rc = survey_chart_svg(script.s, data.s, 960, 260 * (rows ? rows : 1), prefix, &svg, r->e);
    if (rc == BCL_OK) {
        sb_puts(page, svg ? svg : "<p class=\"none\">No figure in common.</p>");
        sb_puts(page, "</figure>\n");
    }
    free(svg);
    free(data.s);
    free(script.s);
    return rc;
}

int survey_page_charts(report *r, sbuf *p)
{
    static const series bandwidth[] = {
        {"copy_gb_per_s", "copy"},
        {"read_only_gb_per_s", "read-only"},
    };
    static const series transfer[] = {
        {"transfer.pinned_write_gb_per_s", "pinned to device"},
        {"transfer.pinned_read_gb_per_s", "pinned from device"},
        {"transfer.pageable_write_gb_per_s", "pageable to device"},
        {"transfer.pageable_read_gb_per_s", "pageable from device"},
        {"transfer.mapped_write_gb_per_s", "mapped to device"},
        {"transfer.mapped_read_gb_per_s", "mapped from device"},
    };
    static const series rates[] = {
        {"add_gflop_per_s", "float add"},   {"fma_gflop_per_s", "float FMA (2 FLOP)"},
        {"int_add_gop_per_s", "int32 add"}, {"fp64_gflop_per_s", "fp64"},
        {"half_gflop_per_s", "half"},
    };
    static const series latency[] = {
        {"launch_latency_us", "launch latency (queued to start)"},
        {"roundtrip_us", "round trip (enqueue + finish)"},
    };
    static const series build[] = {
        {"build_ms_cold", "cold build"},
        {"build_ms_cached", "from the binary cache"},
    };
    sb_puts(p, "<h2 id=\"charts\">Figures per device</h2>\n<p>Bars are numbered as the "
               "device table; a missing bar is a figure the survey lacks (an older schema, "
               "or a figure it could not measure).</p>\n");
    int rc = bar_chart(r, p, "Device memory bandwidth", "GB/s (log)", true, bandwidth, 2);
    if (rc == BCL_OK)
        rc = bar_chart(r, p, "Host to device and back", "GB/s (log)", true, transfer, 6);
    if (rc == BCL_OK)
        rc = bar_chart(r, p, "Arithmetic rates", "10^9 operations/s (log)", true, rates, 5);
    if (rc == BCL_OK)
        rc = bar_chart(r, p, "Launch latency", "µs", false, latency, 2);
    if (rc == BCL_OK)
        rc = bar_chart(r, p, "Program build", "ms (log)", true, build, 2);
    /* Per model, from whatever models the surveys have. */
    size_t nm = json_array_size(r->models);
    series *pen = calloc(nm + 1, sizeof *pen), *fused = calloc(nm + 1, sizeof *fused);
    char(*keys)[2][160] = calloc(nm + 1, sizeof *keys);
    if (!pen || !fused || !keys)
        rc = bcl_fail(r->e, BCL_EXIT_RUNTIME, "out of memory");
    for (size_t m = 0; rc == BCL_OK && m < nm; m++) {
        const char *name =
            json_string_value(json_object_get(json_array_get(r->models, m), "model"));
        snprintf(keys[m][0], sizeof keys[m][0], "%s:local1_penalty", name);
        snprintf(keys[m][1], sizeof keys[m][1], "%s:fused_ball_steps_per_s", name);
        pen[m] = (series){keys[m][0], name};
        fused[m] = (series){keys[m][1], name};
    }
    if (rc == BCL_OK)
        rc = bar_chart(r, p, "The cost of local = 1 (the seed's launch): time / best time",
                       "times slower", false, pen, nm);
    if (rc == BCL_OK)
        rc = bar_chart(r, p, "Fused rate: K steps per launch in registers", "ball-steps/s (log)",
                       true, fused, nm);
    free(pen);
    free(fused);
    free(keys);
    return rc;
}

/* Every boolean fact and extension: how many of the devices have it. */
