/*
 * The report page's drawings (docs/SURVEY.md, "The report page"): the
 * fleet's bar charts, drawn by gnuplot (SVG) in a temporary folder and
 * taken in with their ids made unique (every gnuplot SVG defines "gpPt0"),
 * and a section per device with, for one surveyed more than once, a small
 * inline SVG chart per figure (a gnuplot chart each would cost seconds and
 * megabytes at 250 devices), its axis from zero so that a few per cent of
 * noise looks like a few per cent.
 */
#include "survey_html.h"
#include "util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* A figure of the table (src/survey/figures.c), for one model if a model's. */
typedef struct series {
    char key[160]; /* the figure's key (model:key for a model's) */
    const bcl_survey_figure *g;
    const char *model; /* NULL for a figure of no model */
    const char *title; /* the model's name, else the figure's title */
} series;

/* Every figure of the table, a model's once per model of r: *n, malloc'ed. */
static series *all_series(const report *r, size_t *n)
{
    size_t nm = json_array_size(r->models);
    series *all = calloc(BCL_FIG_COUNT * (nm + 1), sizeof *all);
    *n = 0;
    for (bcl_fig f = 0; all && f < BCL_FIG_COUNT; f++) {
        const bcl_survey_figure *g = &bcl_survey_figures[f];
        for (size_t m = 0; m < (g->flags & BCL_FIG_MODEL ? nm : 1); m++) {
            series *s = &all[(*n)++];
            s->g = g;
            if (g->flags & BCL_FIG_MODEL)
                s->model =
                    json_string_value(json_object_get(json_array_get(r->models, m), "model"));
            s->title = s->model ? s->model : g->title;
            page_figure_key(f, s->model, s->key, sizeof s->key);
        }
    }
    return all;
}

/* The whole of a small file, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *path)
{
    char *buf = NULL;
    size_t len;
    return bcl_read_file(path, 1u << 30, &buf, &len, NULL) ? NULL : buf;
}

/* How long one chart may take: gnuplot draws one in well under a second. */
#define GNUPLOT_LIMIT_S 20

/* Runs gnuplot on script, its messages to errpath, in a process group of
 * its own (killed on SIGINT, SIGTERM and SIGHUP, and past GNUPLOT_LIMIT_S). */
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

/* svg into out with every id and reference to one prefixed "c<chart>_". */
static void prefix_ids(sbuf *out, const char *svg, unsigned chart)
{
    static const char *const marks[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
    for (const char *p = svg; *p;) {
        size_t m = 0;
        while (m < 5 && strncmp(p, marks[m], strlen(marks[m])) != 0)
            m++;
        size_t n = m < 5 ? strlen(marks[m]) : 1;
        sb_add(out, p, n);
        if (m < 5)
            sb_printf(out, "c%u_", chart);
        p += n;
    }
}

/* One chart: gnuplot runs script (which leaves the terminal and output to
 * this: SVG of width x height) with `data` beside it as "data.txt", and the
 * <svg> element goes into page, its ids prefixed (prefix_ids). */
static int chart_svg(const char *script, const char *data, unsigned width, unsigned height,
                     unsigned chart, sbuf *page, bcl_error *e)
{
    /* The folder's name goes into gnuplot's script between quotes. */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strpbrk(tmp, "'\n"))
        tmp = "/tmp";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ballcl-chart-XXXXXX", tmp);
    /* Removed on SIGINT, SIGTERM and SIGHUP: registered, with the signals
     * held, as the folder comes into being. */
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
    sbuf gp = {0};
    /* noenhanced: device names are text, not gnuplot's markup. */
    sb_printf(&gp,
              "cd '%s'\n"
              "set terminal svg size %u,%u noenhanced font 'sans,11' background rgb 'white'\n"
              "set output 'chart.svg'\n"
              "set datafile missing 'NaN'\n"
              "%s\n"
              "unset output\n",
              dir, width, height, script);
    int rc = gp.oom ? bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory")
                    : bcl_write_file_atomic(path[1], data, strlen(data), e);
    if (rc == BCL_OK)
        rc = bcl_write_file_atomic(path[2], gp.s, gp.len, e);
    free(gp.s);
    if (rc == BCL_OK)
        rc = run_gnuplot(path[2], path[4], e);
    char *text = NULL;
    if (rc == BCL_OK && !(text = slurp(path[3])))
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "gnuplot wrote no chart ('%s' unreadable)", path[3]);
    const char *start = text ? strstr(text, "<svg") : NULL;
    if (rc == BCL_OK && !start)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "gnuplot's chart holds no <svg> element");
    if (rc == BCL_OK)
        prefix_ids(page, start, chart);
    free(text);
    for (int i = 4; i >= 0; i--) {
        remove(path[i]); /* the files, then the folder */
        bcl_cleanup_unregister(slot[i]);
    }
    return rc;
}

/* A label for gnuplot's data file: printable ASCII without quotes or
 * backslashes (a data file has no escapes), at most 30 characters. */
static void page_plot_label(const char *text, char *out, size_t size)
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

/* At most this many devices per bar chart: beyond about 70 the bars and
 * their labels cannot be read, and every bar costs the page's size. */
#define TOP_N 30

typedef struct ranked {
    size_t index; /* in r->devices, numbered from 1 in the table */
    double v;     /* the chart's first series, -INFINITY when absent */
} ranked;

/* Highest first, absent last; ties by table order (a stable chart). */
static int by_value(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* One grouped bar chart, a bar per series for each of the top TOP_N
 * devices by the first series (its better end first); series no device
 * has are left out (of ser too). */
static int bar_chart(report *r, sbuf *page, const char *title, const char *ylabel, bool logscale,
                     series *ser, size_t nser)
{
    size_t n = json_array_size(r->devices);
    size_t used = 0;
    for (size_t s = 0; s < nser; s++) {
        bool any = false;
        for (size_t i = 0; i < n && !any; i++)
            any = !isnan(page_value(json_array_get(r->devices, i), "figures", ser[s].key));
        if (any)
            ser[used++] = ser[s];
    }
    sb_printf(page, "<figure class=\"chart\"><figcaption>%s", title);
    if (!used) {
        sb_puts(page, "</figcaption>\n<p class=\"none\">No device of the database has these "
                      "figures (surveys of an older schema lack some).</p></figure>\n");
        return BCL_OK;
    }
    ranked *order = calloc(n ? n : 1, sizeof *order);
    if (!order)
        return bcl_fail(r->e, BCL_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < n; i++) {
        double v = page_value(json_array_get(r->devices, i), "figures", ser[0].key);
        order[i] = (ranked){i, isnan(v) ? -INFINITY : ser[0].g->better < 0 ? -v : v};
    }
    qsort(order, n, sizeof *order, by_value);
    size_t shown = n < TOP_N ? n : TOP_N;
    if (shown < n)
        sb_printf(page, " (top %zu of %zu by %s; every device in the table)", shown, n,
                  ser[0].title);
    sb_puts(page, "</figcaption>\n");
    sbuf data = {0}, script = {0};
    double lo = INFINITY, hi = 0;
    for (size_t k = 0; k < shown; k++) {
        size_t i = order[k].index;
        const json_t *d = json_array_get(r->devices, i);
        char label[64];
        page_plot_label(page_str(d, "name"), label, sizeof label);
        /* The compute units too: one name may be CPUs of several sizes. */
        double cu = page_value(d, "facts", "limits.compute_units");
        if (isnan(cu))
            sb_printf(&data, "\"%zu. %s\"", i + 1, label);
        else
            sb_printf(&data, "\"%zu. %s, %.0f CU\"", i + 1, label, cu);
        for (size_t s = 0; s < used; s++) {
            double v = page_value(d, "figures", ser[s].key);
            if (isnan(v) || (logscale && v <= 0))
                v = NAN;
            else
                lo = v < lo ? v : lo, hi = v > hi ? v : hi;
            sb_printf(&data, " %.9g", v);
        }
        sb_puts(&data, "\n");
    }
    free(order);
    /* A log axis from well below the smallest bar, so that it shows. */
    char range[80] = "0:*";
    if (logscale && hi > 0)
        snprintf(range, sizeof range, "%.3g:%.3g", pow(10, floor(log10(lo)) - 0.3), hi * 2);
    sb_printf(&script,
              "set style data histograms\n"
              "set style histogram clustered gap 1\n"
              "set style fill solid 0.85 border -1\n"
              "set boxwidth 0.9\n"
              "set key outside right top vertical\n"
              "set grid ytics\n"
              "set xtics rotate by %d left nomirror\n"
              "set bmargin %d\n"
              "set ylabel '%s'\n"
              "set yrange [%s]\n"
              "%s\n"
              "plot ",
              /* Steeper labels for many bars, so that they do not overlap. */
              shown > 12 ? -60 : -20, shown > 12 ? 12 : 7, ylabel, range,
              logscale ? "set logscale y" : "");
    for (size_t s = 0; s < used; s++) {
        char t[64];
        page_plot_label(ser[s].title, t, sizeof t);
        sb_printf(&script, "%s'data.txt' using %zu%s title '%s'", s ? ", " : "", s + 2,
                  s ? "" : ":xtic(1)", t);
    }
    sb_puts(&script, "\n");
    int rc = data.oom || script.oom ? bcl_fail(r->e, BCL_EXIT_RUNTIME, "out of memory")
                                    : chart_svg(script.s, data.s, 960, shown > 12 ? 460 : 380,
                                                r->charts++, page, r->e);
    if (rc == BCL_OK)
        sb_puts(page, "</figure>\n");
    free(data.s);
    free(script.s);
    return rc;
}

/* The charts, each of one group of the table (src/survey/figures.c). */
static const struct {
    const char *group, *title, *ylabel;
    bool log;
} charts[] = {
    {"bandwidth", "Device memory bandwidth", "GB/s (log)", true},
    {"transfer", "Host to device and back", "GB/s (log)", true},
    {"rates", "Arithmetic rates", "10^9 operations/s (log)", true},
    {"latency", "Launch latency", "µs", false},
    {"build", "Program build", "ms (log)", true},
    {"penalty", "The cost of local = 1: time / best time", "times slower", false},
    {"fused", "Fused rate: K steps per launch in registers", "ball-steps/s (log)", true},
};

int survey_page_charts(report *r, sbuf *p)
{
    sb_puts(p, "<h2 id=\"charts\">Figures per device</h2>\n<p>Bars are numbered as the "
               "device table; each chart shows at most the top 30 devices; a missing bar is a "
               "figure the survey lacks (an older schema, "
               "or a figure it could not measure).</p>\n");
    size_t nall;
    series *all = all_series(r, &nall), *ser = calloc(nall + 1, sizeof *ser);
    int rc = all && ser ? BCL_OK : bcl_fail(r->e, BCL_EXIT_RUNTIME, "out of memory");
    for (size_t c = 0; rc == BCL_OK && c < sizeof charts / sizeof charts[0]; c++) {
        size_t n = 0;
        for (size_t s = 0; s < nall; s++)
            if (all[s].g->group && strcmp(all[s].g->group, charts[c].group) == 0)
                ser[n++] = all[s];
        rc = bar_chart(r, p, charts[c].title, charts[c].ylabel, charts[c].log, ser, n);
    }
    free(all);
    free(ser);
    return rc;
}

void page_where(sbuf *b, const json_t *d, const char *lead, bool html)
{
    static const char *const place[][2] = {
        {"identity.host", "host "}, {"identity.uuid", "UUID "}, {"identity.pci_bus", "PCI "}};
    for (size_t i = 0; i < sizeof place / sizeof place[0]; i++) {
        const char *v =
            json_string_value(json_object_get(json_object_get(d, "facts"), place[i][0]));
        if (!v || !*v)
            continue;
        sb_puts(b, lead);
        sb_puts(b, place[i][1]);
        (html ? sb_html : sb_puts)(b, v);
        lead = ", ";
    }
}

/* The device's name and what tells it apart from others of it, for HTML. */
static void page_label(sbuf *b, const json_t *d)
{
    sb_html(b, page_str(d, "name"));
    double cu = page_value(d, "facts", "limits.compute_units");
    if (!isnan(cu))
        sb_printf(b, " · %.0f CUs", cu);
    page_where(b, d, " · ", true);
}

/* One small chart of the figure at key over runs (title escaped): the axis
 * from zero, the values' range as a grey band, the values as a line. */
static void small_chart(sbuf *p, const json_t *runs, const char *key, const char *title)
{
    size_t n = json_array_size(runs), have = 0;
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++) {
        double v = page_value(json_array_get(runs, i), "figures", key);
        if (isnan(v) || v < 0)
            continue;
        lo = v < lo ? v : lo, hi = v > hi ? v : hi, have++;
    }
    if (have < 2)
        return;
    const double w = 200, h = 70, left = 4, top = 16, bottom = 62;
    double top_v = hi > 0 ? hi * 1.15 : 1;
    char a[32], b[32];
    page_num(lo, a, sizeof a), page_num(hi, b, sizeof b);
    sb_printf(p,
              "<svg class=\"spark\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
              "role=\"img\"><title>%s: %s to %s over %zu surveys, axis from 0</title>"
              "<text x=\"2\" y=\"11\">%s</text>"
              "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" class=\"axis\"/>"
              "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" class=\"band\"/>"
              "<polyline points=\"",
              w, h, w, h, title, a, b, have, title, left, bottom, w - 2, bottom, left,
              bottom - (bottom - top) * hi / top_v, w - left - 2,
              (bottom - top) * (hi - lo) / top_v + 0.5);
    double step = (w - left - 10) / (double)(n > 1 ? n - 1 : 1);
    for (size_t i = 0; i < n; i++) {
        double v = page_value(json_array_get(runs, i), "figures", key);
        if (!isnan(v) && v >= 0)
            sb_printf(p, "%.0f,%.1f ", left + 4 + step * (double)i,
                      bottom - (bottom - top) * v / top_v);
    }
    sb_printf(p, "\"/><text x=\"%.0f\" y=\"%.0f\" class=\"r\">%s</text></svg>", w - 4, 11.0, b);
}

/* For a device with several surveys: a small chart per history series. */
static void history(sbuf *p, const json_t *dev, const series *all, size_t nall)
{
    const json_t *runs = json_object_get(dev, "runs");
    size_t n = json_array_size(runs);
    if (n < 2)
        return;
    sb_printf(p,
              "<figure class=\"history\"><figcaption>%zu surveys, oldest to newest; "
              "each axis from 0, the grey band the range of the device's surveys</figcaption>",
              n);
    for (size_t s = 0; s < nall; s++) {
        if (!(all[s].g->flags & BCL_FIG_HISTORY))
            continue;
        sbuf title = {0};
        sb_html(&title, all[s].model ? all[s].model : "");
        sb_printf(&title, "%s%s (%s)", all[s].model ? " " : "", all[s].g->title, all[s].g->unit);
        small_chart(p, runs, all[s].key, title.oom ? "?" : title.s);
        free(title.s);
    }
    sb_puts(p, "<p class=\"drivers\">Drivers: ");
    const char *last = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *drv = page_str(json_array_get(runs, i), "driver");
        if (last && strcmp(last, drv) == 0)
            continue;
        sb_puts(p, last ? " → " : "");
        sb_html(p, drv);
        last = drv;
    }
    sb_puts(p, "</p></figure>\n");
}

void survey_page_devices(report *r, sbuf *p)
{
    sb_puts(p, "<h2 id=\"history\">Each device</h2>\n<p>A section per device, linked from the "
               "device table; a device surveyed more than once shows each figure over its "
               "surveys.</p>\n");
    size_t i, nall;
    json_t *d;
    series *all = all_series(r, &nall);
    p->oom |= !all;
    json_array_foreach(r->devices, i, d)
    {
        sb_printf(p, "<section class=\"device\" id=\"dev-%zu\"><h3>%zu. ", i + 1, i + 1);
        page_label(p, d);
        sb_puts(p, "</h3><p>");
        page_fields(p, d,
                    (const char *const[]){"platform", ", ", "type", "; latest driver ", "driver",
                                          " on ", "date", "", NULL});
        sb_printf(p, "; %zu extensions.</p>\n", json_array_size(json_object_get(d, "extensions")));
        history(p, d, all, nall);
        sb_puts(p, "</section>\n");
    }
    free(all);
}
