/*
 * Error values: the first failure sets a one-line message and an exit class;
 * later failures (during clean-up) never overwrite it, so the user sees the
 * cause rather than a consequence.
 */
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t bcl_utf8_length(const unsigned char *p)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong below */
        if (c == 0xED)
            hi = 0x9F; /* surrogates above */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

size_t bcl_escape(const char *in, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 1 < size;) {
        size_t len = bcl_utf8_length(p);
        /* As \xNN: C0 and DEL; C1 (U+0080 to U+009F: 0xC2 0x9B is CSI to some
         * terminals), bytes that are no UTF-8 (a lone 0x9B too), and the
         * bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E,
         * U+2066 to U+2069), which reorder what follows them. */
        bool bidi =
            (len == 2 && p[0] == 0xD8 && p[1] == 0x9C) ||
            (len == 3 && p[0] == 0xE2 &&
             ((p[1] == 0x80 && (p[2] == 0x8E || p[2] == 0x8F || (p[2] >= 0xAA && p[2] <= 0xAE))) ||
              (p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9)));
        bool control = len == 0 || (len == 1 && (*p < 0x20 || *p == 0x7f)) ||
                       (len == 2 && p[0] == 0xC2 && p[1] <= 0x9F) || bidi;
        if (!control) {
            if (o + len >= size)
                break; /* never half a character */
            memcpy(out + o, p, len);
            o += len;
            p += len;
            continue;
        }
        size_t n = len ? len : 1;
        if (o + 4 * n >= size)
            break;
        for (size_t i = 0; i < n; i++, p++) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    if (size)
        out[o] = '\0';
    return o;
}

int bcl_fail(bcl_error *e, int code, const char *fmt, ...)
{
    if (!e || e->code != 0)
        return e && e->code ? e->code : code;
    char raw[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* One line: a control character from an argument is shown as \xNN. */
    bcl_escape(raw, e->msg, sizeof e->msg);
    e->code = code;
    return code;
}

bool bcl_why(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return false;
}

void bcl_error_set_detail(bcl_error *e, const char *text)
{
    if (!e || !text)
        return;
    free(e->detail);
    e->detail = strdup(text);
}

void bcl_error_set_cl(bcl_error *e, const char *call, const char *status)
{
    if (!e)
        return;
    snprintf(e->cl_call, sizeof e->cl_call, "%.*s", (int)strcspn(call, "( "), call);
    snprintf(e->cl_status, sizeof e->cl_status, "%s", status);
}

void bcl_error_clear(bcl_error *e)
{
    if (!e)
        return;
    free(e->detail);
    memset(e, 0, sizeof *e);
}
