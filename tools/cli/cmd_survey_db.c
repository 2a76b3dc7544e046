/*
 * ballcl survey import | list | report (docs/SURVEY.md, "The survey
 * database"): options and printing; the tables are survey_db.c's, the page
 * survey_html.c's.
 */
#include "cmd_survey_db.h"
#include "survey_db.h"
#include "survey_html.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int survey_db_args_parse(const char *cmd, int argc, char **argv, const char *own, survey_db_args *a,
                         void (*help)(void))
{
    memset(a, 0, sizeof *a);
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    if (!ops)
        return cli_usage_error(cmd, "out of memory");
    int nops = 0, rc = BCL_OK;
    bool ended = false;
    for (int i = 1; i < argc && rc == BCL_OK; i++) {
        const char *s = argv[i];
        size_t n = strcspn(s, "=");
        const char *name = n == 4 && strncmp(s, "--db", 4) == 0                 ? "--db"
                           : own && n == strlen(own) && strncmp(s, own, n) == 0 ? own
                                                                                : NULL;
        const char **to = name == own ? &a->own_value : &a->db;
        if (!ended && strcmp(s, "--") == 0)
            ended = true;
        else if (ended || s[0] != '-' || !s[1])
            ops[nops++] = argv[i];
        else if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
            help();
            free(ops);
            return -1;
        } else if (strcmp(s, "--json") == 0)
            a->json = true;
        else if (!name)
            rc = cli_usage_error(cmd, "unknown option '%s'", s);
        else if (*to)
            rc = cli_usage_error(cmd, "%s given twice", name);
        else if (s[n] == '=')
            *to = s + n + 1;
        else if (i + 1 < argc)
            *to = argv[++i];
        else
            rc = cli_usage_error(cmd, "%s needs a value", name);
    }
    a->first_arg = argc - nops;
    memcpy(argv + a->first_arg, ops, (size_t)nops * sizeof *ops);
    free(ops);
    return rc;
}

static void import_help(void)
{
    printf("usage: ballcl survey import [--db FILE] [--json] [--] FILE.json|DIR|- ...\n\n"
           "A folder stands for its *.json files (in name order); '-' reads one document\n"
           "from stdin.\n"
           "Options may also follow the file names; '--' ends them.\n"
           "Adds survey documents to the survey database, each in one transaction\n"
           "(every schema ballcl wrote: %s).\n"
           "Each file is checked as 'survey compare' checks it; a bad one is reported\n"
           "in one line naming it, nothing of it is written, and the others are still\n"
           "imported (exit 2 at the end). A document already in the database (the\n"
           "same content) is not added twice. Prints one line per file: added or\n"
           "already there, with the survey's id, then a summary line; --json prints\n"
           "one JSON document instead.\n\n"
           "  --db FILE    the database (default: $BALLCL_SURVEY_DB, else\n"
           "               $XDG_DATA_HOME/ballcl/surveys.db, else\n"
           "               ~/.local/share/ballcl/surveys.db); created when missing\n"
           "  -h, --help   this help\n",
           BCL_SURVEY_SCHEMAS_READ);
}

/* The text of a file, or "-" for stdin, checked as 'survey compare' does. */
static int load_source(const char *src, char **text, bcl_error *e)
{
    if (strcmp(src, "-") != 0)
        return bcl_survey_load(src, text, e);
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap + 1);
    while (buf && (len += fread(buf + len, 1, cap - len, stdin)) == cap) {
        char *grown = realloc(buf, (cap *= 2) + 1);
        if (!grown)
            free(buf);
        buf = grown;
    }
    if (!buf)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory reading stdin");
    buf[len] = '\0';
    json_t *doc = NULL;
    int rc = ferror(stdin) ? bcl_fail(e, BCL_EXIT_INPUT, "cannot read stdin")
                           : bcl_survey_read(buf, len, "-", &doc, e);
    json_decref(doc);
    if (rc)
        free(buf);
    else
        *text = buf;
    return rc;
}

static int json_name(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

/* One file into the database; its outcome into files (JSON) or a line,
 * its exit class into *worst (input 2 < runtime 3: the worst wins). */
static void import_one(sqlite3 *db, const char *path, const char *src, bool json, json_t *files,
                       size_t counts[3], int *worst)
{
    char *text = NULL;
    long long id = 0;
    bool added = false;
    bcl_error fe = {0};
    int rc = load_source(src, &text, &fe);
    if (rc == BCL_OK)
        rc = survey_db_import(db, path, text, strcmp(src, "-") ? src : "stdin", &id, &added, &fe);
    free(text);
    counts[rc ? 2 : added ? 0 : 1]++;
    if (rc && json)
        json_array_append_new(files, json_pack("{s:s, s:s}", "file", src, "error", fe.msg));
    else if (rc)
        cli_report(&fe);
    else if (json)
        json_array_append_new(
            files, json_pack("{s:s, s:I, s:b}", "file", src, "id", (json_int_t)id, "added", added));
    else
        printf("%s: %s survey %lld\n", cli_shown(src), added ? "added as" : "already there as", id);
    bcl_error_clear(&fe);
    if (rc > *worst)
        *worst = rc;
}

int cmd_survey_import(int argc, char **argv)
{
    survey_db_args a;
    int rc = survey_db_args_parse("survey import", argc, argv, NULL, &a, import_help);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.first_arg >= argc)
        return cli_usage_error("survey import", "no survey file given");
    bcl_error e = {0};
    char path[4096];
    sqlite3 *db = NULL;
    if ((rc = survey_db_open(a.db, true, path, sizeof path, &db, &e)))
        return cli_report(&e);
    int worst = BCL_OK;
    size_t counts[3] = {0}; /* added, already there, refused */
    json_t *files = json_array();
    for (int i = a.first_arg; i < argc; i++) {
        struct stat sb;
        struct dirent **names = NULL;
        int n = strcmp(argv[i], "-") != 0 && stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)
                    ? scandir(argv[i], &names, json_name, alphasort)
                    : -2;
        if (n == -1) {
            bcl_fail(&e, BCL_EXIT_INPUT, "cannot read the folder '%s': %s", argv[i],
                     strerror(errno));
            if ((rc = cli_report(&e)) > worst)
                worst = rc;
            bcl_error_clear(&e);
            counts[2]++;
        } else if (n == -2)
            import_one(db, path, argv[i], a.json, files, counts, &worst);
        /* A folder: its *.json files, in name order. */
        for (int j = 0; j < n; j++) {
            char file[8192];
            snprintf(file, sizeof file, "%s/%s", argv[i], names[j]->d_name);
            import_one(db, path, file, a.json, files, counts, &worst);
            free(names[j]);
        }
        free(names);
    }
    char shown[4200];
    bcl_escape(path, shown, sizeof shown);
    if (a.json) {
        json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:o}", "database", path, "added",
                              (json_int_t)counts[0], "already_there", (json_int_t)counts[1],
                              "refused", (json_int_t)counts[2], "files", files);
        files = NULL;
        cli_print_json(j);
        json_decref(j);
    } else
        printf("import: %zu added, %zu already there, %zu refused, into '%s'\n", counts[0],
               counts[1], counts[2], shown);
    json_decref(files);
    sqlite3_close(db);
    return worst;
}

static void list_help(void)
{
    printf("usage: ballcl survey list [--db FILE] [--json] [devices|surveys|drivers]\n\n"
           "Prints what the survey database holds: every device (with how many surveys\n"
           "have it and its latest driver), every survey, and every driver seen per\n"
           "device (first and last survey with it). One section when named, else all\n"
           "three. Text from survey files is printed with control characters as \\xNN.\n"
           "For anything else, query the database with SQL (docs/SURVEY.md).\n\n"
           "  --db FILE    the database (default as for 'survey import')\n"
           "  --json       the sections as one JSON object on stdout\n"
           "  -h, --help   this help\n");
}

/* One row as aligned columns; widths[i] 0: the rest of the line. */
static void print_cells(const char *const *cells, const size_t *widths, int ncol)
{
    char cell[1024];
    for (int c = 0; c < ncol; c++) {
        if (widths[c]) {
            cli_field(cells[c], widths[c], cell, sizeof cell);
            printf("%s  ", cell);
        } else
            printf("%s", cells[c]);
    }
    printf("\n");
}

/* The sections of 'survey list': a query each, a heading and width a column. */
typedef struct section {
    const char *title, *sql;
    const char *heads[8];
    size_t widths[8];
} section;
static const section sections[] = {
    {"devices:",
     "SELECT d.id, d.type, d.name, d.platform, d.compute_units,"
     " (SELECT count(DISTINCT r.survey_id) FROM runs r WHERE r.device_id = d.id), l.driver,"
     " l.date"
     " FROM devices d JOIN latest_runs l ON l.device_id = d.id ORDER BY d.id",
     {"id", "type", "name", "platform", "cu", "surveys", "driver", "last survey"},
     {4, 11, 34, 28, 4, 7, 16, 0}},
    {"surveys:",
     "SELECT s.id, s.date, s.schema, s.ballcl_version,"
     " (SELECT count(*) FROM runs r WHERE r.survey_id = s.id),"
     " CASE s.quick WHEN 1 THEN 'yes' ELSE 'no' END, s.source"
     " FROM surveys s ORDER BY s.date, s.id",
     {"id", "date", "schema", "ballcl", "devices", "quick", "source"},
     {4, 20, 15, 7, 7, 5, 0}},
    {"drivers:",
     "SELECT platform, driver, count(DISTINCT survey_id), min(date), max(date), name"
     " FROM device_runs GROUP BY device_id, driver"
     " ORDER BY platform, name, min(date)",
     {"platform", "driver", "surveys", "first", "last", "device"},
     {28, 16, 7, 20, 20, 0}},
};
#define NSECTIONS (sizeof sections / sizeof sections[0])

/* A query's rows as aligned columns under the title and headings; with
 * into (--json), there instead, under the title without its colon, each an
 * object keyed by the headings (spaces as '_'). */
static int print_query(sqlite3 *db, const char *path, const section *q, json_t *into, bcl_error *e)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, q->sql, -1, &st, NULL) != SQLITE_OK)
        return survey_db_fail(db, path, "cannot read it", e);
    json_t *rows = into ? json_array() : NULL;
    int ncol = sqlite3_column_count(st);
    if (!into) {
        printf("%s\n", q->title);
        print_cells(q->heads, q->widths, ncol);
    }
    char key[64], esc[8][1024];
    int s, n = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *row = into ? json_object() : NULL;
        const char *cells[8];
        for (int c = 0; c < ncol; c++) {
            int t = sqlite3_column_type(st, c);
            const char *txt = (const char *)sqlite3_column_text(st, c);
            bcl_escape(txt ? txt : "-", esc[c], sizeof esc[c]);
            cells[c] = esc[c];
            if (!into)
                continue;
            snprintf(key, sizeof key, "%s", q->heads[c]);
            for (char *p = key; *p; p++)
                *p = *p == ' ' ? '_' : *p;
            json_object_set_new(row, key,
                                t == SQLITE_INTEGER ? json_integer(sqlite3_column_int64(st, c))
                                : t == SQLITE_FLOAT ? json_real(sqlite3_column_double(st, c))
                                : txt               ? bcl_survey_text(txt)
                                                    : json_null());
        }
        if (into)
            json_array_append_new(rows, row);
        else
            print_cells(cells, q->widths, ncol);
        n++;
    }
    sqlite3_finalize(st);
    snprintf(key, sizeof key, "%.*s", (int)strlen(q->title) - 1, q->title);
    if (into)
        json_object_set_new(into, key, rows);
    if (s != SQLITE_DONE)
        return survey_db_fail(db, path, "cannot read it", e);
    if (!n && !into)
        printf("(none)\n");
    return BCL_OK;
}

/* Whether section i is what (a name without the colon; NULL: every one). */
static bool section_is(size_t i, const char *what)
{
    return !what || (strncmp(sections[i].title, what, strlen(what)) == 0 &&
                     strcmp(sections[i].title + strlen(what), ":") == 0);
}

int cmd_survey_list(int argc, char **argv)
{
    survey_db_args a;
    int rc = survey_db_args_parse("survey list", argc, argv, NULL, &a, list_help);
    if (rc)
        return rc < 0 ? 0 : rc;
    const char *what = a.first_arg < argc ? argv[a.first_arg] : NULL;
    if (a.first_arg + 1 < argc)
        return cli_usage_error("survey list", "one section at most, found '%s' after '%s'",
                               argv[a.first_arg + 1], what);
    size_t known = 0;
    for (size_t i = 0; i < NSECTIONS; i++)
        known += section_is(i, what);
    if (!known)
        return cli_usage_error("survey list",
                               "unknown section '%s': expected devices, "
                               "surveys or drivers",
                               what);
    bcl_error e = {0};
    char path[4096];
    sqlite3 *db = NULL;
    if ((rc = survey_db_open(a.db, false, path, sizeof path, &db, &e)))
        return cli_report(&e);
    bool gap = !what && !a.json;
    json_t *into = a.json ? json_object() : NULL;
    for (size_t i = 0; rc == BCL_OK && i < NSECTIONS; i++) {
        if (!section_is(i, what))
            continue;
        if (gap && i)
            printf("\n");
        rc = print_query(db, path, &sections[i], into, &e);
    }
    if (rc == BCL_OK && into)
        cli_print_json(into);
    json_decref(into);
    sqlite3_close(db);
    if (rc)
        cli_report(&e);
    bcl_error_clear(&e);
    return rc;
}

static void report_help(void)
{
    printf("usage: ballcl survey report --html OUT.html [--db FILE]\n\n"
           "Writes one self-contained HTML page (no network access when opened: styles,\n"
           "script and charts are inside it) from the survey database: a sortable table\n"
           "of the devices (each at its latest survey) with a search box, bar charts of\n"
           "the main figures for the top 30 devices (bandwidths, add and FMA rates,\n"
           "launch latency, the local = 1 penalty and the fused rate of each model), any\n"
           "two surveys side by side, how many devices have each extension and\n"
           "capability, and a section per device (compute units, host, UUID or PCI bus)\n"
           "with, for a device surveyed more than once, each figure over its surveys\n"
           "from 0 with their range. The bar charts are drawn by gnuplot (its SVG\n"
           "terminal; BALLCL_GNUPLOT names another program). The page is written\n"
           "atomically.\n\n"
           "  --html FILE  the page to write\n"
           "  --db FILE    the database (default as for 'survey import')\n"
           "  -h, --help   this help\n");
}

int cmd_survey_report(int argc, char **argv)
{
    survey_db_args a;
    int rc = survey_db_args_parse("survey report", argc, argv, "--html", &a, report_help);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.first_arg < argc)
        return cli_usage_error("survey report", "unexpected argument '%s'", argv[a.first_arg]);
    if (!a.own_value)
        return cli_usage_error("survey report", "--html OUT.html is required");
    if (a.json)
        return cli_usage_error("survey report", "--json: not an option of survey report");
    bcl_error e = {0};
    char path[4096];
    sqlite3 *db = NULL;
    bcl_outputs outs = {0};
    /* The page's folder is checked before any work, as every output is. */
    if ((rc = bcl_outputs_add(&outs, a.own_value, "--html", &e)) ||
        (rc = survey_db_open(a.db, false, path, sizeof path, &db, &e))) {
        bcl_outputs_discard(&outs);
        return cli_report(&e);
    }
    char *html = NULL;
    size_t len = 0;
    rc = survey_html_page(db, path, &html, &len, &e);
    if (rc == BCL_OK && (rc = bcl_outputs_write(&outs, 0, html, len, &e)) == BCL_OK)
        rc = bcl_outputs_commit(&outs, &e);
    if (rc == BCL_OK) {
        char shown[4200];
        bcl_escape(a.own_value, shown, sizeof shown);
        printf("report: '%s' written, %.1f MB\n", shown, (double)len / 1e6);
    }
    bcl_outputs_discard(&outs);
    free(html);
    sqlite3_close(db);
    if (rc)
        cli_report(&e);
    bcl_error_clear(&e);
    return rc;
}

int survey_db_record(const char *given, bool check_only, const char *text, char *where, size_t size,
                     bcl_error *e)
{
    char path[4096];
    sqlite3 *db = NULL;
    int rc = survey_db_open(given, true, path, sizeof path, &db, e);
    if (rc == BCL_OK && !check_only) {
        long long id;
        bool added;
        rc = survey_db_import(db, path, text, "ballcl survey", &id, &added, e);
        char shown[4200];
        bcl_escape(path, shown, sizeof shown);
        if (rc == BCL_OK)
            snprintf(where, size, "recorded in '%s' as survey %lld", shown, id);
    }
    sqlite3_close(db);
    return rc;
}
