/*
 * The report page's section per device (docs/SURVEY.md, "The report
 * page"): an anchor the device table links to, the device's full label
 * (compute units, host, UUID or PCI bus tell apart devices sharing a name)
 * and, for a device surveyed more than once, a small chart per figure over
 * its surveys. These charts are drawn here as inline SVG, not by gnuplot:
 * at 250 devices a gnuplot chart each would cost seconds and megabytes.
 * Each chart's axis starts at zero, so that a few per cent of noise looks
 * like a few per cent, and a grey band shows the range of the device's
 * surveys.
 */
#include "survey_page.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct history_figure {
    char key[160];     /* the figure's key (model:key for a model's) */
    const char *title; /* escaped for HTML */
} history_figure;

void page_where(sbuf *b, const json_t *d)
{
    static const char *const place[][2] = {
        {"identity.host", "host "}, {"identity.uuid", "UUID "}, {"identity.pci_bus", "PCI "}};
    const json_t *facts = json_object_get(d, "facts");
    bool any = false;
    for (size_t i = 0; i < sizeof place / sizeof place[0]; i++) {
        const char *v = json_string_value(json_object_get(facts, place[i][0]));
        if (!v || !*v)
            continue;
        sb_puts(b, any ? ", " : "");
        sb_puts(b, place[i][1]);
        sb_html(b, v);
        any = true;
    }
}

void page_label(sbuf *b, const json_t *d)
{
    sb_html(b, page_str(d, "name"));
    double cu = page_fact(d, "limits.compute_units");
    if (!isnan(cu))
        sb_printf(b, " · %.0f CUs", cu);
    size_t before = b->len;
    sb_puts(b, " · ");
    size_t mark = b->len;
    page_where(b, d);
    if (b->len == mark && !b->oom)
        b->len = before, b->s[before] = '\0';
}

/* One small chart of figure f over runs: the axis from zero to above the
 * highest value, the range of the values as a grey band, the values as a
 * line with a dot each (its title: date, driver, value). */
static void small_chart(sbuf *p, const json_t *runs, const history_figure *f)
{
    size_t n = json_array_size(runs), have = 0;
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++) {
        double v = page_figure(json_array_get(runs, i), f->key);
        if (isnan(v) || v < 0)
            continue;
        lo = v < lo ? v : lo, hi = v > hi ? v : hi, have++;
    }
    if (have < 2)
        return;
    const double w = 200, h = 70, left = 4, top = 16, bottom = 62;
    double top_v = hi > 0 ? hi * 1.15 : 1;
    char a[32], b[32];
    page_num(lo, a, sizeof a), page_num(hi, b, sizeof b);
    sb_printf(p,
              "<svg class=\"spark\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
              "role=\"img\"><title>%s: %s to %s over %zu surveys, axis from 0</title>"
              "<text x=\"2\" y=\"11\">%s</text>"
              "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" class=\"axis\"/>"
              "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" class=\"band\"/>"
              "<polyline points=\"",
              w, h, w, h, f->title, a, b, have, f->title, left, bottom, w - 2, bottom, left,
              bottom - (bottom - top) * hi / top_v, w - left - 2,
              (bottom - top) * (hi - lo) / top_v + 0.5);
    double step = (w - left - 10) / (double)(n > 1 ? n - 1 : 1);
    for (size_t i = 0; i < n; i++) {
        double v = page_figure(json_array_get(runs, i), f->key);
        if (!isnan(v) && v >= 0)
            sb_printf(p, "%.0f,%.1f ", left + 4 + step * (double)i,
                      bottom - (bottom - top) * v / top_v);
    }
    sb_printf(p, "\"/><text x=\"%.0f\" y=\"%.0f\" class=\"r\">%s</text></svg>", w - 4, 11.0, b);
}

/* For a device with several surveys: a small chart per figure of the
 * table marked for a history (src/survey/figures.c) that it has, a
 * model's for each model. */
static void history(sbuf *p, const json_t *dev, const json_t *models)
{
    const json_t *runs = json_object_get(dev, "runs");
    size_t n = json_array_size(runs);
    if (n < 2)
        return;
    sb_printf(p,
              "<figure class=\"history\"><figcaption>%zu surveys, oldest to newest; "
              "each axis from 0, the grey band the range of the device's surveys</figcaption>",
              n);
    for (bcl_fig f = 0; f < BCL_FIG_COUNT; f++) {
        const bcl_survey_figure *g = &bcl_survey_figures[f];
        bool per_model = g->flags & BCL_FIG_MODEL;
        for (size_t m = 0;
             (g->flags & BCL_FIG_HISTORY) && m < (per_model ? json_array_size(models) : 1); m++) {
            const char *model = NULL;
            if (per_model)
                model = json_string_value(json_object_get(json_array_get(models, m), "model"));
            history_figure hf;
            sbuf title = {0};
            page_figure_key(f, model, hf.key, sizeof hf.key);
            if (model) {
                sb_html(&title, model);
                sb_puts(&title, " ");
            }
            sb_printf(&title, "%s (%s)", g->title, g->unit);
            hf.title = title.oom ? "?" : title.s;
            small_chart(p, runs, &hf);
            free(title.s);
        }
    }
    sb_puts(p, "<p class=\"drivers\">Drivers: ");
    const char *last = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *drv = page_str(json_array_get(runs, i), "driver");
        if (last && strcmp(last, drv) == 0)
            continue;
        sb_puts(p, last ? " → " : "");
        sb_html(p, drv);
        last = drv;
    }
    sb_puts(p, "</p></figure>\n");
}

void survey_page_devices(report *r, sbuf *p)
{
    sb_puts(p, "<h2 id=\"history\">Each device</h2>\n<p>A section per device, linked from the "
               "device table; a device surveyed more than once shows each figure over its "
               "surveys.</p>\n");
    size_t i;
    json_t *d;
    json_array_foreach(r->devices, i, d)
    {
        sb_printf(p, "<section class=\"device\" id=\"dev-%zu\"><h3>%zu. ", i + 1, i + 1);
        page_label(p, d);
        sb_puts(p, "</h3><p>");
        page_fields(p, d,
                    (const char *const[]){"platform", ", ", "type", "; latest driver ", "driver",
                                          " on ", "date", "", NULL});
        sb_printf(p, "; %zu extensions.</p>\n", json_array_size(json_object_get(d, "extensions")));
        history(p, d, r->models);
        sb_puts(p, "</section>\n");
    }
}
