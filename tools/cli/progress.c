/*
 * Progress of long work (bench, tune) on stderr, only when stderr is a
 * terminal (README.md): one line rewritten in place, erased at the end, so a
 * log or a pipe gets nothing extra.
 */
#include "cli.h"

#include <unistd.h>

static int shown = -1; /* -1: not yet asked */

static bool enabled(void)
{
    if (shown < 0)
        shown = isatty(STDERR_FILENO) ? 1 : 0;
    return shown == 1;
}

void cli_progress(void *arg, unsigned done, unsigned total, const char *what)
{
    if (!enabled())
        return;
    const char *prefix = arg ? arg : "ballcl";
    if (total)
        fprintf(stderr, "\r\033[K%s: [%u/%u] %s", prefix, done + 1, total, what);
    else
        fprintf(stderr, "\r\033[K%s: %s", prefix, what);
    fflush(stderr);
}

void cli_progress_end(void)
{
    if (!enabled())
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
}
