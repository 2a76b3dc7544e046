/* What the report page's parts share (survey_page.c, used by survey_html.c,
 * survey_html_charts.c and survey_page_devices.c):
 * the text buffer the page grows in, the data loaded from the database, and
 * the helpers that read it. Internal to the report. */
#ifndef BALLCL_SURVEY_PAGE_H
#define BALLCL_SURVEY_PAGE_H

#include "cli.h"

#include <sqlite3.h>
#include <stdbool.h>

typedef struct sbuf {
    char *s;
    size_t len, cap;
    bool oom;
} sbuf;

void sb_add(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text from a survey file, for HTML: control characters shown as \xNN,
 * markup characters as entities. */
void sb_html(sbuf *b, const char *text);
/* A label for gnuplot's data file: printable ASCII without quotes or
 * backslashes (a data file has no escapes), at most 30 characters. */
void page_plot_label(const char *text, char *out, size_t size);
/* 4 significant digits, with k/M/G/T from a million on. */
void page_num(double v, char *out, size_t size);

typedef struct report {
    sqlite3 *db;
    const char *path;
    bcl_error *e;
    json_t *devices; /* each at its latest survey: see load_run */
    json_t *models;  /* the models with figures, default first */
    json_t *runs;    /* every run of every device, loaded, by device and date */
    unsigned charts; /* for the ids of the charts' SVG */
} report;
/* Rows of sql (at most one integer parameter) as an array of objects named
 * by the columns. */
int page_query(report *r, const char *sql, long long param, json_t **out);
/* Into run (a row with run_id): "facts" {key: value} with booleans as JSON
 * booleans, "figures" {key or model:key: value}, "extensions". */
int page_load_run(report *r, json_t *run);
/* A string of d ("" when absent); a figure or fact as a number, NAN when
 * absent or null. */
const char *page_str(const json_t *d, const char *key);
/* The strings of d at parts[0], parts[2], ... escaped, each followed by
 * the markup parts[1], parts[3], ...; NULL ends. */
void page_fields(sbuf *b, const json_t *d, const char *const *parts);
double page_figure(const json_t *d, const char *key);
/* The rule for every figure and fact the page shows or draws: a number of
 * magnitude 1e-30 to 1e30, or 0. Anything else (1e308, 5e-324, an
 * infinity) is implausible: page_figure and page_fact give NAN for it, the
 * table shows it as "invalid" and the charts leave it out. page_raw is the
 * number as stored (set: "figures" or "facts"; NAN when not a number). */
bool page_plausible(double v);
double page_raw(const json_t *d, const char *set, const char *key);
double page_fact(const json_t *d, const char *key);

/* The page's key of figure f (src/survey/figures.c): its key, or
 * "model:key" for a model's (model set). */
void page_figure_key(bcl_fig f, const char *model, char *out, size_t size);

/* The section of bar charts, one per figure group and per model. */
int survey_page_charts(report *r, sbuf *page);
/* A section (anchor dev-N) per device, with its history drawn inline
 * (survey_page_devices.c). */
void survey_page_devices(report *r, sbuf *page);
/* The device's name with what tells it apart from others of that name:
 * compute units, host, UUID or PCI bus (escaped for HTML). */
void page_label(sbuf *b, const json_t *d);
/* Host, UUID and PCI bus of d where its survey has them (escaped). */
void page_where(sbuf *b, const json_t *d);

#endif
