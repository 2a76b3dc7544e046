/* ballcl survey report --html (survey_html.c), and what its parts share
 * (survey_page.c, below survey_html.c and survey_html_charts.c): the text
 * buffer, the data loaded from the database and the helpers that read it. */
#ifndef BALLCL_SURVEY_HTML_H
#define BALLCL_SURVEY_HTML_H

#include "cli.h"

#include <sqlite3.h>
#include <stdbool.h>

/* The page from db (path names it in messages): *html, malloc'ed, *len bytes. */
int survey_html_page(sqlite3 *db, const char *path, char **html, size_t *len, bcl_error *e);

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
/* 4 significant digits, with k/M/G/T from a million on. */
void page_num(double v, char *out, size_t size);

typedef struct report {
    sqlite3 *db;
    const char *path;
    bcl_error *e;
    json_t *devices; /* each at its latest survey: see load */
    json_t *models;  /* the models with figures, default first */
    json_t *runs;    /* every run of every device, loaded, by device and date */
    json_t *totals;  /* [{surveys, first, last}] */
    unsigned charts; /* for the ids of the charts' SVG */
} report;
/* A string of d ("" when absent). */
const char *page_str(const json_t *d, const char *key);
/* The strings of d at parts[0], parts[2], ... escaped, each followed by
 * the markup parts[1], parts[3], ...; NULL ends. */
void page_fields(sbuf *b, const json_t *d, const char *const *parts);
/* The rule for every figure and fact the page shows: a number of magnitude
 * 1e-30 to 1e30, or 0; else (1e308, an infinity) page_value gives NAN, the
 * table shows "invalid" and the charts leave it out. page_raw: the number
 * as stored (set: "figures" or "facts"; NAN when absent or no number). */
bool page_plausible(double v);
double page_raw(const json_t *d, const char *set, const char *key);
double page_value(const json_t *d, const char *set, const char *key);

/* The page's key of figure f (src/survey/figures.c): its key, or
 * "model:key" for a model's (model set). */
void page_figure_key(bcl_fig f, const char *model, char *out, size_t size);

/* The bar charts, drawn by gnuplot (survey_html_charts.c, as the two below). */
int survey_page_charts(report *r, sbuf *page);
/* A section (anchor dev-N) per device, with its history drawn inline. */
void survey_page_devices(report *r, sbuf *page);
/* Host, UUID and PCI bus of d where its survey has them, the first after
 * lead, escaped for HTML with html. */
void page_where(sbuf *b, const json_t *d, const char *lead, bool html);

#endif
