/*
 * The report page's charts (docs/SURVEY.md, "The report page"): the data of
 * each chart as gnuplot's data file and its script, drawn by gnuplot into SVG
 * (survey_chart.c) and put into the page. Labels from survey files are made
 * safe for gnuplot's data file (plot_label); the titles are ours.
 */
#include "survey_chart.h"
#include "survey_page.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct series {
    char key[160]; /* the figure's key (model:key for a model's) */
    const char *title;
} series;

/* At most this many devices per bar chart: beyond about 70 the bars and
 * their labels cannot be read, and every bar costs the page's size. */
#define TOP_N 30

typedef struct ranked {
    size_t index; /* in r->devices, numbered from 1 in the table */
    double v;     /* the chart's first series, NAN when absent */
} ranked;

/* Highest first, absent last; ties by table order (a stable chart). */
static int by_value(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (isnan(x->v) != isnan(y->v))
        return isnan(x->v) ? 1 : -1;
    if (!isnan(x->v) && x->v != y->v)
        return x->v < y->v ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* One grouped bar chart, a bar per series for each of the top TOP_N
 * devices by the first series (the lowest first where lower is better);
 * series that no device has are left out, and a chart with none says so. */
static int bar_chart(report *r, sbuf *page, const char *title, const char *ylabel, bool logscale,
                     bool lower_better, const series *ser, size_t nser)
{
    size_t n = json_array_size(r->devices);
    bool *used = calloc(nser ? nser : 1, sizeof *used);
    ranked *order = calloc(n ? n : 1, sizeof *order);
    if (!used || !order) {
        free(used), free(order);
        return bcl_fail(r->e, BCL_EXIT_RUNTIME, "out of memory");
    }
    size_t nused = 0, first = nser;
    for (size_t s = 0; s < nser; s++) {
        for (size_t i = 0; i < n && !used[s]; i++)
            used[s] = !isnan(page_figure(json_array_get(r->devices, i), ser[s].key));
        nused += used[s];
        first = used[s] && first == nser ? s : first;
    }
    sb_printf(page, "<figure class=\"chart\"><figcaption>%s", title);
    if (!nused) {
        sb_puts(page, "</figcaption>\n<p class=\"none\">No device of the database has these "
                      "figures (surveys of an older schema lack some).</p></figure>\n");
        free(used), free(order);
        return BCL_OK;
    }
    for (size_t i = 0; i < n; i++) {
        double v = page_figure(json_array_get(r->devices, i), ser[first].key);
        order[i] = (ranked){i, lower_better && !isnan(v) ? -v : v};
    }
    qsort(order, n, sizeof *order, by_value);
    size_t shown = n < TOP_N ? n : TOP_N;
    if (shown < n)
        sb_printf(page, " (top %zu of %zu by %s; every device in the table)", shown, n,
                  ser[first].title);
    sb_puts(page, "</figcaption>\n");
    sbuf data = {0}, script = {0};
    double lo = INFINITY, hi = 0;
    for (size_t k = 0; k < shown; k++) {
        size_t i = order[k].index;
        const json_t *d = json_array_get(r->devices, i);
        char label[64];
        page_plot_label(page_str(d, "name"), label, sizeof label);
        /* The compute units too: one name may be CPUs of several sizes. */
        double cu = page_fact(d, "limits.compute_units");
        if (isnan(cu))
            sb_printf(&data, "\"%zu. %s\"", i + 1, label);
        else
            sb_printf(&data, "\"%zu. %s, %.0f CU\"", i + 1, label, cu);
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
    free(order);
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
              "set xtics rotate by %d left nomirror\n"
              "set bmargin %d\n"
              "set ylabel '%s'\n"
              "set yrange [%s]\n"
              "%s\n"
              "plot ",
              /* Steeper labels for many bars, so that they do not overlap. */
              shown > 12 ? -60 : -20, shown > 12 ? 12 : 7, ylabel, range,
              logscale ? "set logscale y" : "");
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
        rc = survey_chart_svg(script.s, data.s, 960, shown > 12 ? 460 : 380, prefix, &svg, r->e);
    if (rc == BCL_OK) {
        sb_puts(page, svg);
        sb_puts(page, "</figure>\n");
    }
    free(svg);
    free(data.s);
    free(script.s);
    return rc;
}

/* The charts, each of the figures of one group of the table
 * (src/survey/figures.c); a model's figure gets a bar per model. */
static const struct {
    const char *group, *title, *ylabel;
    bool log;
} charts[] = {
    {"bandwidth", "Device memory bandwidth", "GB/s (log)", true},
    {"transfer", "Host to device and back", "GB/s (log)", true},
    {"rates", "Arithmetic rates", "10^9 operations/s (log)", true},
    {"latency", "Launch latency", "µs", false},
    {"build", "Program build", "ms (log)", true},
    {"penalty", "The cost of local = 1: time / best time", "times slower", false},
    {"fused", "Fused rate: K steps per launch in registers", "ball-steps/s (log)", true},
};

int survey_page_charts(report *r, sbuf *p)
{
    sb_puts(p, "<h2 id=\"charts\">Figures per device</h2>\n<p>Bars are numbered as the "
               "device table; each chart shows at most the top 30 devices; a missing bar is a "
               "figure the survey lacks (an older schema, "
               "or a figure it could not measure).</p>\n");
    size_t nm = json_array_size(r->models);
    series *ser = calloc(BCL_FIG_COUNT + nm, sizeof *ser);
    int rc = ser ? BCL_OK : bcl_fail(r->e, BCL_EXIT_RUNTIME, "out of memory");
    for (size_t c = 0; rc == BCL_OK && c < sizeof charts / sizeof charts[0]; c++) {
        size_t n = 0;
        bool lower_better = false;
        for (bcl_fig f = 0; f < BCL_FIG_COUNT; f++) {
            const bcl_survey_figure *g = &bcl_survey_figures[f];
            if (!g->group || strcmp(g->group, charts[c].group) != 0)
                continue;
            lower_better = g->better < 0;
            for (size_t m = 0; m < (g->flags & BCL_FIG_MODEL ? nm : 1); m++) {
                const char *name = NULL;
                if (g->flags & BCL_FIG_MODEL)
                    name =
                        json_string_value(json_object_get(json_array_get(r->models, m), "model"));
                page_figure_key(f, name, ser[n].key, sizeof ser[n].key);
                ser[n++].title = name ? name : g->title;
            }
        }
        rc =
            bar_chart(r, p, charts[c].title, charts[c].ylabel, charts[c].log, lower_better, ser, n);
    }
    free(ser);
    return rc;
}

/* Every boolean fact and extension: how many of the devices have it. */
