/*
 * The report's charts: gnuplot draws them (its SVG terminal), in a
 * temporary folder of their own, and the SVG is taken into the page with
 * its ids made unique (every gnuplot SVG defines the same "gpPt0" ...).
 */
#include "survey_html.h"
#include "util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The whole of a small file, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *path)
{
    char *buf = NULL;
    size_t len;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int err = fd < 0 ? errno : bcl_read_fd(fd, 1u << 30, &buf, &len);
    if (fd >= 0)
        close(fd);
    return err ? NULL : buf;
}

static int __attribute__((format(printf, 3, 4)))
write_text(const char *path, bcl_error *e, const char *fmt, ...)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot write '%s': %s", path, strerror(errno));
    va_list ap;
    va_start(ap, fmt);
    bool ok = vfprintf(f, fmt, ap) >= 0;
    va_end(ap);
    ok = (fclose(f) == 0) && ok;
    if (!ok)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot write '%s'", path);
    return BCL_OK;
}

/* How long one chart may take: gnuplot draws one in well under a second. */
#define GNUPLOT_LIMIT_S 20

/* Runs gnuplot on script, its messages to errpath, in a process group of its own (killed
 * with the temporaries on SIGINT, SIGTERM and SIGHUP, and when it runs
 * past GNUPLOT_LIMIT_S); BCL_OK when it exited 0. */
static int run_gnuplot(const char *script, const char *errpath, bcl_error *e)
{
    const char *prog = getenv("BALLCL_GNUPLOT");
    if (!prog || !*prog)
        prog = "gnuplot";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    char *argv[] = {(char *)prog, (char *)script, NULL};
    pid_t pid;
    /* The group is known to the signal handler as soon as it exists. */
    sigset_t old;
    bcl_cleanup_block(&old);
    int err = posix_spawnp(&pid, prog, &fa, &at, argv, environ);
    if (!err)
        bcl_cleanup_child(pid);
    bcl_cleanup_unblock(&old);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (err == ENOENT)
        return bcl_fail(e, BCL_EXIT_RUNTIME,
                        "'%s' not found: the report's charts are drawn by gnuplot (Debian: "
                        "apt-get install gnuplot-nox; BALLCL_GNUPLOT names another program)",
                        prog);
    if (err)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot run '%s': %s", prog, strerror(err));
    int status = 0, werr = 0;
    struct timespec t0, now, nap = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool late = false;
    pid_t got;
    while ((got = waitpid(pid, &status, WNOHANG)) != pid) {
        if (got < 0 && errno != EINTR) {
            werr = errno;
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!late && now.tv_sec - t0.tv_sec >= GNUPLOT_LIMIT_S) {
            late = true;
            kill(-pid, SIGKILL);
        }
        nanosleep(&nap, NULL);
    }
    /* Anything it started goes with it. */
    kill(-pid, SIGKILL);
    bcl_cleanup_child(0);
    if (werr)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "waiting for '%s': %s", prog, strerror(werr));
    if (late)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "'%s' drew no chart within %d s: stopped", prog,
                        GNUPLOT_LIMIT_S);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return BCL_OK;
    /* The first line of its messages: gnuplot echoes the failing line, then
     * "line N: message". */
    char *text = slurp(errpath);
    const char *from = !text ? "" : strstr(text, "line ") ? strstr(text, "line ") : text;
    int n = (int)strcspn(from, "\n");
    bcl_fail(e, BCL_EXIT_RUNTIME, "'%s' failed drawing a chart (%s %d)%s%.*s", prog,
             WIFEXITED(status) ? "exit status" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), n ? ": " : "",
             n < 300 ? n : 300, from);
    free(text);
    return BCL_EXIT_RUNTIME;
}

/* svg with every id, reference to one and url(#...) prefixed. */
static char *prefix_ids(const char *svg, const char *prefix)
{
    static const char *const marks[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
    sbuf out = {0};
    for (const char *p = svg; *p;) {
        size_t m = 0;
        while (m < 5 && strncmp(p, marks[m], strlen(marks[m])) != 0)
            m++;
        size_t n = m < 5 ? strlen(marks[m]) : 1;
        sb_add(&out, p, n);
        sb_puts(&out, m < 5 ? prefix : "");
        p += n;
    }
    if (out.oom)
        free(out.s);
    return out.oom ? NULL : out.s;
}

int survey_chart_svg(const char *script, const char *data, unsigned width, unsigned height,
                     const char *id_prefix, char **svg, bcl_error *e)
{
    *svg = NULL;
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ballcl-chart-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    /* The folder's name goes into gnuplot's script between quotes. */
    if (strchr(dir, '\'') || strchr(dir, '\n'))
        snprintf(dir, sizeof dir, "/tmp/ballcl-chart-XXXXXX");
    /* The folder and its files are removed on SIGINT, SIGTERM and SIGHUP:
     * registered, with the signals held, as the folder comes into being. */
    static const char *const name[5] = {"", "/data.txt", "/chart.gp", "/chart.svg",
                                        "/messages.txt"};
    char path[5][4200];
    sigset_t old;
    int slot[5] = {-1, -1, -1, -1, -1};
    bcl_cleanup_block(&old);
    bool made = mkdtemp(dir) != NULL;
    int err = errno;
    for (int i = 0; made && i < 5; i++) {
        snprintf(path[i], sizeof path[i], "%s%s", dir, name[i]);
        slot[i] = bcl_cleanup_register(path[i]);
    }
    bcl_cleanup_unblock(&old);
    if (!made)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot create a temporary folder '%s': %s", dir,
                        strerror(err));
    int rc = write_text(path[1], e, "%s", data);
    /* noenhanced: device names are text, not gnuplot's markup. */
    if (rc == BCL_OK)
        rc = write_text(path[2], e,
                        "cd '%s'\n"
                        "set terminal svg size %u,%u noenhanced font 'sans,11' background rgb "
                        "'white'\n"
                        "set output 'chart.svg'\n"
                        "set datafile missing 'NaN'\n"
                        "%s\n"
                        "unset output\n",
                        dir, width, height, script);
    if (rc == BCL_OK)
        rc = run_gnuplot(path[2], path[4], e);
    char *text = NULL;
    if (rc == BCL_OK && !(text = slurp(path[3])))
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "gnuplot wrote no chart ('%s' unreadable)", path[3]);
    const char *start = text ? strstr(text, "<svg") : NULL;
    if (rc == BCL_OK && !start)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "gnuplot's chart holds no <svg> element");
    if (rc == BCL_OK && !(*svg = prefix_ids(start, id_prefix)))
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    free(text);
    for (int i = 4; i >= 0; i--) {
        remove(path[i]); /* the files, then the folder */
        bcl_cleanup_unregister(slot[i]);
    }
    return rc;
}
