/* What the report page's parts share (survey_html.h): the text buffer the
 * page grows in and the readers of the data loaded from the database. */
#include "survey_db.h"
#include "survey_html.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the NUL; false when there is none. */
static bool sb_room(sbuf *b, size_t n)
{
    if (!b->oom && b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *m = realloc(b->s, cap);
        if (m)
            b->s = m, b->cap = cap;
        b->oom = !m;
    }
    return !b->oom;
}

void sb_add(sbuf *b, const char *s, size_t n)
{
    if (!sb_room(b, n))
        return;
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
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n >= 0 && sb_room(b, (size_t)n))
        b->len += (size_t)vsnprintf(b->s + b->len, (size_t)n + 1, fmt, again);
    va_end(ap);
    va_end(again);
}

void sb_html(sbuf *b, const char *text)
{
    char esc[2048];
    bcl_escape(text ? text : "", esc, sizeof esc);
    static const char mark[] = "&<>\"'";
    static const char *const entity[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
    for (const char *p = esc; *p; p++) {
        const char *m = strchr(mark, *p);
        if (m)
            sb_puts(b, entity[m - mark]);
        else
            sb_add(b, p, 1);
    }
}

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

double page_raw(const json_t *d, const char *set, const char *key)
{
    const json_t *v = json_object_get(json_object_get(d, set), key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

bool page_plausible(double v)
{
    return v == 0 || (fabs(v) >= 1e-30 && fabs(v) <= 1e30);
}

double page_value(const json_t *d, const char *set, const char *key)
{
    double v = page_raw(d, set, key);
    return page_plausible(v) ? v : NAN;
}

void page_figure_key(bcl_fig f, const char *model, char *out, size_t size)
{
    snprintf(out, size, "%s%s%s", model ? model : "", model ? ":" : "", bcl_survey_key(f));
}
