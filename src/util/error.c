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

size_t bcl_escape(const char *in, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 1 < size; p++) {
        if (*p >= 0x20 && *p != 0x7f) {
            out[o++] = (char)*p;
        } else if (o + 4 < size) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        } else {
            break;
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
    /* Messages are one line of text: a newline, an escape sequence or any
     * other control character from an argument, a file name or a driver
     * string is shown as \xNN, never sent to the terminal. */
    bcl_escape(raw, e->msg, sizeof e->msg);
    e->code = code;
    return code;
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
