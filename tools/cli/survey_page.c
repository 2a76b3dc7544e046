/*
 * What the report page's parts share (survey_page.h): the text buffer the
 * page grows in and the readers of the data loaded from the database. Below
 * survey_html.c, survey_html_charts.c and survey_page_devices.c, which call
 * it and nothing of one another's but the sections.
 */
#include "survey_db.h"
#include "survey_page.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *m = realloc(b->s, cap);
        if (!m) {
            b->oom = true;
            return;
        }
        b->s = m, b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void sb_puts(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

void sb_printf(sbuf *b, const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sb_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_add(b, big, (size_t)n);
    free(big);
}

/* Text from a survey file, for HTML: control characters shown as \xNN,
 * markup characters as entities. */
void sb_html(sbuf *b, const char *text)
{
    char esc[2048];
    bcl_escape(text ? text : "", esc, sizeof esc);
    static const char *const entity[][2] = {
        {"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}};
    for (const char *p = esc; *p; p++) {
        size_t i = 0;
        while (i < 5 && *p != entity[i][0][0])
            i++;
        if (i < 5)
            sb_puts(b, entity[i][1]);
        else
            sb_add(b, p, 1);
    }
}

/* A label for gnuplot's data file: printable ASCII without quotes or
 * backslashes (a data file has no escapes), at most 30 characters. */
void page_plot_label(const char *text, char *out, size_t size)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)(text ? text : "");
         *p && o + 1 < size && o < 30; p++) {
        if ((*p & 0xC0) == 0x80)
            continue; /* one '?' per UTF-8 character */
        out[o++] =
            (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' && *p != '\'') ? (char)*p : '?';
    }
    out[o] = '\0';
}

/* 4 significant digits, with k/M/G/T from a million on. */
void page_num(double v, char *out, size_t size)
{
    static const char *const si[] = {"", "k", "M", "G", "T", "P"};
    int i = 0;
    double a = fabs(v);
    if (a >= 1e6)
        while (a >= 1000 && i < 5)
            a /= 1000, v /= 1000, i++;
    /* 32847, not 3.285e+04: whole numbers below a million. */
    snprintf(out, size, a >= 1e4 && !i ? "%.0f%s%s" : "%.4g%s%s", v, i ? " " : "", si[i]);
}

const char *page_str(const json_t *d, const char *key)
{
    const char *s = json_string_value(key ? json_object_get(d, key) : d);
    return s ? s : "";
}

void page_fields(sbuf *b, const json_t *d, const char *const *parts)
{
    for (size_t i = 0; parts[i]; i += 2) {
        sb_html(b, page_str(d, parts[i]));
        sb_puts(b, parts[i + 1]);
    }
}

/* A figure of d as a number, NAN when absent or null. */
double page_raw(const json_t *d, const char *set, const char *key)
{
    const json_t *v = json_object_get(json_object_get(d, set), key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

bool page_plausible(double v)
{
    return v == 0 || (fabs(v) >= 1e-30 && fabs(v) <= 1e30);
}

double page_figure(const json_t *d, const char *key)
{
    double v = page_raw(d, "figures", key);
    return page_plausible(v) ? v : NAN;
}

void page_figure_key(bcl_fig f, const char *model, char *out, size_t size)
{
    snprintf(out, size, "%s%s%s", model ? model : "", model ? ":" : "", bcl_survey_key(f));
}

double page_fact(const json_t *d, const char *key)
{
    double v = page_raw(d, "facts", key);
    return page_plausible(v) ? v : NAN;
}
