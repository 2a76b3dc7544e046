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

int bcl_fail(bcl_error *e, int code, const char *fmt, ...)
{
    if (!e || e->code != 0)
        return e && e->code ? e->code : code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    /* Messages are one line: a newline from a driver string would break that. */
    for (char *p = e->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
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

void bcl_error_clear(bcl_error *e)
{
    if (!e)
        return;
    free(e->detail);
    memset(e, 0, sizeof *e);
}
