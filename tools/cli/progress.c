/*
 * Progress of long work (bench, tune, survey, run) on stderr (README.md). On a
 * terminal: one line rewritten in place, erased at the end. Otherwise (a log,
 * a pipe, CI): a whole line at most every CLI_PROGRESS_SECONDS, so a job
 * that runs for minutes shows it is alive, and one of a few seconds prints
 * nothing. stdout never gets progress.
 */
#include "cli.h"

#include "ocl/program.h"

#include <stdlib.h>
#include <unistd.h>

static int tty = -1;         /* -1: not yet asked */
static double interval = -1; /* seconds between lines off a terminal */
static double last = -1;     /* when the last line was printed (or the work began) */
static bool given;           /* BALLCL_PROGRESS_SECONDS set */

static void init(void)
{
    if (tty >= 0)
        return;
    tty = isatty(STDERR_FILENO) ? 1 : 0;
    interval = CLI_PROGRESS_SECONDS;
    const char *env = getenv("BALLCL_PROGRESS_SECONDS");
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        if (*end == '\0' && v >= 0 && v <= 86400)
            interval = v, given = true;
        else
            fprintf(stderr,
                    "ballcl: warning: BALLCL_PROGRESS_SECONDS: '%s' is not valid: expected "
                    "seconds from 0 to 86400; using %d\n",
                    env, CLI_PROGRESS_SECONDS);
    }
    last = bcl_now_ms() / 1e3;
}

void cli_progress(void *arg, unsigned done, unsigned total, const char *what)
{
    init();
    const char *prefix = arg ? arg : "ballcl";
    if (!tty) {
        double t = bcl_now_ms() / 1e3;
        if (t - last < interval)
            return;
        last = t;
    }
    fprintf(stderr, "%s%s: ", tty ? "\r\033[K" : "", prefix);
    if (total)
        fprintf(stderr, "[%u/%u] ", done + 1, total);
    fprintf(stderr, "%s%s", what, tty ? "" : "\n");
    fflush(stderr);
}

double cli_progress_paced(double seconds)
{
    init();
    double was = given ? interval : seconds;
    interval = 0;
    return was;
}

void cli_progress_end(void)
{
    init();
    if (!tty)
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
}
