/*
 * The survey database: where it lives, opening it safely, and recording a
 * survey document as rows (the tables are documented in docs/SURVEY.md, "The
 * survey database"). The document itself is kept whole beside its rows, so
 * nothing a later schema adds is lost.
 */
#include "survey_db.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The wait for another writer: an import takes milliseconds, so only a
 * stuck process reaches it. */
#define BUSY_TIMEOUT_MS 30000

static const char *const schema_sql =
    "CREATE TABLE surveys ( id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE,"
    " date TEXT NOT NULL, schema TEXT NOT NULL, ballcl_version TEXT NOT NULL,"
    " command TEXT NOT NULL, quick INTEGER NOT NULL, source TEXT NOT NULL,"
    " imported TEXT NOT NULL, document TEXT NOT NULL);"
    "CREATE TABLE devices ( id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,"
    " platform TEXT NOT NULL, vendor TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL,"
    " compute_units INTEGER NOT NULL);"
    "CREATE TABLE runs ( id INTEGER PRIMARY KEY,"
    " survey_id INTEGER NOT NULL REFERENCES surveys(id),"
    " device_id INTEGER NOT NULL REFERENCES devices(id), position INTEGER NOT NULL,"
    " selector TEXT, driver TEXT NOT NULL, platform_version TEXT, opencl_version TEXT,"
    " UNIQUE (survey_id, position));"
    "CREATE TABLE facts ( run_id INTEGER NOT NULL REFERENCES runs(id), key TEXT NOT NULL,"
    " type TEXT NOT NULL, value, PRIMARY KEY (run_id, key));"
    "CREATE TABLE extensions ( run_id INTEGER NOT NULL REFERENCES runs(id),"
    " name TEXT NOT NULL, PRIMARY KEY (run_id, name));"
    "CREATE TABLE figures ( run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL,"
    " key TEXT NOT NULL, value, PRIMARY KEY (run_id, model, key));"
    "CREATE TABLE errors ( run_id INTEGER NOT NULL REFERENCES runs(id), figure TEXT NOT NULL,"
    " message TEXT NOT NULL);"
    "CREATE TABLE flags ( run_id INTEGER NOT NULL REFERENCES runs(id), figure TEXT NOT NULL,"
    " value REAL, limit_value REAL, rule TEXT);"
    "CREATE TABLE platforms ( survey_id INTEGER NOT NULL REFERENCES surveys(id),"
    " position INTEGER NOT NULL, name TEXT, status TEXT, document TEXT NOT NULL,"
    " PRIMARY KEY (survey_id, position));"
    "CREATE INDEX runs_device ON runs(device_id);"
    "CREATE INDEX figures_key ON figures(key, model);"
    /* Every run with its device and survey, and each device's latest. */
    "CREATE VIEW device_runs AS SELECT r.id AS run_id, r.survey_id, s.date, r.device_id,"
    " d.name, d.platform, d.vendor, d.type, r.driver, r.selector, s.schema,"
    " s.source FROM runs r JOIN devices d ON d.id = r.device_id"
    " JOIN surveys s ON s.id = r.survey_id;"
    "CREATE VIEW latest_runs AS SELECT * FROM device_runs x WHERE x.run_id ="
    " (SELECT y.run_id FROM device_runs y WHERE y.device_id = x.device_id ORDER BY y.date DESC,"
    " y.run_id DESC LIMIT 1);";

int survey_db_fail(sqlite3 *db, const char *path, const char *what, bcl_error *e)
{
    int code = sqlite3_errcode(db);
    /* Not a database, or one we cannot open or write: the user's input. */
    bool input = code == SQLITE_NOTADB || code == SQLITE_CANTOPEN || code == SQLITE_READONLY ||
                 code == SQLITE_PERM || code == SQLITE_AUTH;
    return bcl_fail(e, input ? BCL_EXIT_INPUT : BCL_EXIT_RUNTIME, "survey database '%s': %s: %s",
                    path, what, db ? sqlite3_errmsg(db) : "out of memory");
}

/* *is_default: the path is one of the last two, whose folder may be made. */
static int db_path(const char *given, char *out, size_t size, bool *is_default, bcl_error *e)
{
    *is_default = false;
    const char *env = getenv("BALLCL_SURVEY_DB");
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    int n;
    if (given)
        n = snprintf(out, size, "%s", given);
    else if (env && *env)
        n = snprintf(out, size, "%s", env);
    else if (xdg && xdg[0] == '/')
        n = snprintf(out, size, "%s/ballcl/surveys.db", xdg), *is_default = true;
    else if (home && *home)
        n = snprintf(out, size, "%s/.local/share/ballcl/surveys.db", home), *is_default = true;
    else
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "no survey database: HOME is not set; give one with --db FILE");
    if (n < 0 || (size_t)n >= size)
        return bcl_fail(e, BCL_EXIT_INPUT, "survey database path too long: '%.80s...'", out);
    if (!*out)
        return bcl_fail(e, BCL_EXIT_INPUT, "--db: expected a file name, found nothing");
    /* A database is a file: SQLite's in-memory and URI names would keep
     * nothing, or name another file than the one later commands look for. */
    if (strcmp(out, ":memory:") == 0 || strncmp(out, "file:", 5) == 0)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "survey database '%s': in-memory and URI names are not accepted; give "
                        "a file name (./%s for a file of that name)",
                        out, out);
    return BCL_OK;
}

/* mkdir -p of the folder holding path (the default location only). */
static int make_parent(const char *path, bcl_error *e)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return BCL_OK;
    *slash = '\0';
    /* Each folder from the first below the root, the last at the end. */
    for (char *p = dir + 1;; p++) {
        if (*p && *p != '/')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return bcl_fail(e, BCL_EXIT_INPUT, "cannot create the folder '%s': %s", dir,
                            strerror(errno));
        if (!c)
            return BCL_OK;
        *p = c;
    }
}

static int exec_sql(sqlite3 *db, const char *path, const char *sql, const char *what, bcl_error *e)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return survey_db_fail(db, path, what, e);
    return BCL_OK;
}

/* Ends the transaction: committed when rc is BCL_OK, else rolled back. */
static int end_transaction(sqlite3 *db, const char *path, int rc, bcl_error *e)
{
    if (rc == BCL_OK)
        return exec_sql(db, path, "COMMIT", "cannot commit", e);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Checks that the file is ours (or, when create, new: its tables made, in
 * one write transaction so that two processes create them once; reading,
 * in none, so that a writer never holds a reader up). */
static int check_or_create(sqlite3 *db, const char *path, bool create, bcl_error *e)
{
    int rc =
        create ? exec_sql(db, path, "BEGIN IMMEDIATE", "cannot start a transaction", e) : BCL_OK;
    if (rc)
        return rc;
    sqlite3_stmt *st = NULL;
    long long app = 0, ver = 0, tables = 0;
    int src = sqlite3_prepare_v2(db,
                                 "SELECT (SELECT * FROM pragma_application_id),"
                                 " (SELECT * FROM pragma_user_version),"
                                 " (SELECT count(*) FROM sqlite_schema)",
                                 -1, &st, NULL);
    if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        app = sqlite3_column_int64(st, 0);
        ver = sqlite3_column_int64(st, 1);
        tables = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (src != SQLITE_ROW)
        rc = survey_db_fail(db, path, "cannot read it", e);
    else if (app == 0 && tables == 0 && !create)
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "survey database '%s' is empty: fill it with 'ballcl survey import "
                      "FILE.json' or 'ballcl survey'",
                      path);
    else if (app == 0 && tables == 0) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
                 SURVEY_DB_APP_ID, SURVEY_DB_VERSION);
        rc = exec_sql(db, path, schema_sql, "cannot create its tables", e);
        if (rc == BCL_OK)
            rc = exec_sql(db, path, sql, "cannot mark it", e);
    } else if (app != SURVEY_DB_APP_ID)
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "'%s' is not a ballcl survey database (an SQLite file of another program)",
                      path);
    else if (ver > SURVEY_DB_VERSION)
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "survey database '%s' has tables of version %lld; this ballcl knows %d", path,
                      ver, SURVEY_DB_VERSION);
    return create ? end_transaction(db, path, rc, e) : rc;
}

/* Opens path as a plain file name, whatever SQLite's URI setting;
 * immutable: read-only and sure that no one writes it (the one URI made). */
static int open_file(const char *path, int flags, bool immutable, sqlite3 **db)
{
    char name[4200];
    if (immutable) {
        /* A URI's path: '?' and '#' (and '%') escaped. */
        size_t o = (size_t)snprintf(name, sizeof name, "file:");
        for (const char *p = path; *p && o + 4 < sizeof name; p++)
            o += strchr("?#%", *p) ? (size_t)snprintf(name + o, sizeof name - o, "%%%02X", *p)
                                   : (size_t)snprintf(name + o, sizeof name - o, "%c", *p);
        snprintf(name + o, sizeof name - o, "?immutable=1");
        flags |= SQLITE_OPEN_URI;
    } else {
        snprintf(name, sizeof name, "%s%s", path[0] == '/' ? "" : "./", path);
    }
    return sqlite3_open_v2(name, db, flags, NULL);
}

/* Whether the file and its folder (SQLite's WAL files) can be written. */
static bool writable(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    return access(path, W_OK) == 0 && access(slash ? dir : ".", W_OK | X_OK) == 0;
}

int survey_db_open(const char *given, bool create, char *path, size_t size, sqlite3 **out,
                   bcl_error *e)
{
    *out = NULL;
    bool make_folder;
    int rc = db_path(given, path, size, &make_folder, e);
    if (rc)
        return rc;
    struct stat sb;
    bool existed = stat(path, &sb) == 0;
    if (existed && S_ISDIR(sb.st_mode))
        return bcl_fail(e, BCL_EXIT_INPUT, "survey database '%s' is a folder; expected a file",
                        path);
    if (existed && !S_ISREG(sb.st_mode))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "survey database '%s' is not a regular file (a pipe, device or socket); "
                        "expected a database file",
                        path);
    if (!create && !existed)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "no survey database at '%s': fill one with 'ballcl survey import "
                        "FILE.json' or 'ballcl survey'",
                        path);
    if (create && make_folder && (rc = make_parent(path, e)))
        return rc;
    sqlite3 *db = NULL;
    /* Only read: where the file and its folder can be written, opened with
     * query_only (SQLite still removes its WAL files when done); else
     * read-only, and when even that needs a write (the WAL's shared memory
     * cannot be made, so no one can be writing), immutable. */
    bool ro = !create && !writable(path);
    int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                       : (ro ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE);
    if (open_file(path, flags, false, &db) != SQLITE_OK)
        rc = survey_db_fail(db, path, "cannot open it", e);
    if (rc == BCL_OK && !create &&
        sqlite3_exec(db, "PRAGMA query_only = 1; SELECT count(*) FROM sqlite_schema", NULL, NULL,
                     NULL) != SQLITE_OK) {
        char wal[4200];
        snprintf(wal, sizeof wal, "%s-wal", path);
        if (ro && access(wal, F_OK) != 0) {
            sqlite3_close(db);
            db = NULL;
            if (open_file(path, SQLITE_OPEN_READONLY, true, &db) != SQLITE_OK)
                rc = survey_db_fail(db, path, "cannot open it", e);
        }
    }
    if (rc == BCL_OK) {
        sqlite3_extended_result_codes(db, 0);
        sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
        /* Checked to be ours (or new) before anything is written; then
         * WAL: readers never block the writer, and a crash mid-import
         * leaves the last committed state. */
        rc = check_or_create(db, path, create, e);
    }
    if (rc == BCL_OK && create)
        rc = exec_sql(db, path, "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL;",
                      "cannot open it", e);
    if (rc) {
        sqlite3_close(db);
        /* A file this call created and could not fill (a full disk) goes. */
        if (create && !existed && stat(path, &sb) == 0 && sb.st_size == 0)
            unlink(path);
        return rc;
    }
    *out = db;
    return BCL_OK;
}

/* ---- recording a document ------------------------------------------------ */

/* The statements of an import, prepared once each; what names a failure. */
enum { Q_FIND, Q_SURVEY, Q_PLATFORM, Q_DEVICE, Q_RUN, Q_FACT, Q_EXT, Q_FIG, Q_ERROR, Q_FLAG, NQ };
static const struct {
    const char *sql, *what;
} queries[NQ] = {
    {"SELECT id FROM surveys WHERE digest = ?", "cannot read it"},
    {"INSERT INTO surveys (digest, date, schema, ballcl_version, command,"
     " quick, source, imported, document) VALUES (?,?,?,?,?,?,?,?,?)",
     "cannot record the survey"},
    {"INSERT INTO platforms (survey_id, position, name, status, document) VALUES (?,?,?,?,?)",
     "cannot record a platform"},
    /* A device already known keeps its row: the update only makes
     * RETURNING give its id. */
    {"INSERT INTO devices (key, platform, vendor, name, type, compute_units)"
     " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (key) DO UPDATE SET"
     " key = excluded.key RETURNING id",
     "cannot record a device"},
    {"INSERT INTO runs (survey_id, device_id, position, selector, driver,"
     " platform_version, opencl_version) VALUES (?1,?2,?3,?4,?5,?6,?7)",
     "cannot record a device's survey"},
    {"INSERT OR REPLACE INTO facts (run_id, key, type, value) VALUES (?1,?2,?3,?4)",
     "cannot record a fact"},
    {"INSERT OR IGNORE INTO extensions (run_id, name) VALUES (?1,?2)",
     "cannot record an extension"},
    {"INSERT OR REPLACE INTO figures (run_id, model, key, value) VALUES (?1,?2,?3,?4)",
     "cannot record a figure"},
    {"INSERT INTO errors (run_id, figure, message) VALUES (?,?,?)", "cannot record an error"},
    {"INSERT INTO flags (run_id, figure, value, limit_value, rule) VALUES (?,?,?,?,?)",
     "cannot record a flag"},
};

typedef struct importer {
    sqlite3 *db;
    const char *path;
    bcl_error *e;
    sqlite3_stmt *st[NQ];
    long long run;
} importer;

/* SHA-256 of the document's content in one canonical form (sorted keys, no
 * spaces): the same survey reformatted is still the same survey. */
static int digest_of(const json_t *doc, char hex[65])
{
    char *canon = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!canon)
        return -1;
    unsigned char md[32];
    bcl_error e = {0};
    int rc = bcl_sha256(canon, strlen(canon), md, &e);
    free(canon);
    bcl_error_clear(&e);
    if (rc != BCL_OK)
        return -1;
    for (unsigned i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return 0;
}

static const char *str_or(const json_t *obj, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : dflt;
}

/* A JSON value's type as the facts table names it, by json_typeof. */
static const char *type_name(const json_t *v)
{
    static const char *const names[] = {"json", "json", "text", "integer",
                                        "real", "bool", "bool", "null"};
    return names[json_typeof(v)];
}

/* Binds a JSON value: booleans as 0/1, arrays and objects as JSON text. */
static void bind_json(sqlite3_stmt *st, int col, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_TRUE:
    case JSON_FALSE:
        sqlite3_bind_int(st, col, json_is_true(v));
        return;
    case JSON_INTEGER:
        sqlite3_bind_int64(st, col, (sqlite3_int64)json_integer_value(v));
        return;
    case JSON_REAL:
        sqlite3_bind_double(st, col, json_real_value(v));
        return;
    case JSON_STRING:
        sqlite3_bind_text(st, col, json_string_value(v), (int)json_string_length(v),
                          SQLITE_TRANSIENT);
        return;
    case JSON_NULL:
        sqlite3_bind_null(st, col);
        return;
    default: {
        char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
        sqlite3_bind_text(st, col, t ? t : "null", -1, SQLITE_TRANSIENT);
        free(t);
    }
    }
}

/* Binds ap's values, a letter each of fmt: 'i' long long, 's' text, 'j' JSON. */
static void bind_args(sqlite3_stmt *st, const char *fmt, va_list ap)
{
    for (int c = 1; fmt[c - 1]; c++) {
        if (fmt[c - 1] == 'i')
            sqlite3_bind_int64(st, c, va_arg(ap, long long));
        else if (fmt[c - 1] == 's')
            sqlite3_bind_text(st, c, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
        else
            bind_json(st, c, va_arg(ap, const json_t *));
    }
}

/* Runs query q with its parameters from fmt (bind_args). *id, when given,
 * gets the first column of the row the query returns (it keeps its value
 * when none). */
static int put(importer *im, int q, long long *id, const char *fmt, ...)
{
    sqlite3_stmt *st = im->st[q];
    va_list ap;
    va_start(ap, fmt);
    bind_args(st, fmt, ap);
    va_end(ap);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && id)
        *id = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return survey_db_fail(im->db, im->path, queries[q].what, im->e);
    return BCL_OK;
}

/* The value of column c as JSON. */
static json_t *column_json(sqlite3_stmt *st, int c)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER:
        return json_integer((json_int_t)sqlite3_column_int64(st, c));
    case SQLITE_FLOAT:
        return json_real(sqlite3_column_double(st, c));
    case SQLITE_NULL:
        return json_null();
    default: {
        /* Text, and a BLOB where text belongs (a database changed by hand):
         * always a string, bytes that are no UTF-8 (and NUL) as U+FFFD. */
        const unsigned char *t = sqlite3_column_text(st, c);
        size_t n = (size_t)sqlite3_column_bytes(st, c);
        json_t *j = t ? json_stringn((const char *)t, n) : NULL;
        char *fixed = t && !j ? malloc(3 * n + 1) : NULL;
        size_t o = 0;
        for (size_t i = 0, k; fixed && i < n; i += k) {
            k = t[i] < 0x80 ? 1 : t[i] >= 0xf0 ? 4 : t[i] >= 0xe0 ? 3 : t[i] >= 0xc2 ? 2 : 0;
            json_t *one = k > 1 && i + k <= n ? json_stringn((const char *)t + i, k) : NULL;
            bool good = (k == 1 && t[i]) || one;
            memcpy(fixed + o, good ? (const char *)t + i : "\xef\xbf\xbd", good ? k : 3);
            o += good ? k : 3;
            k = good ? k : 1;
            json_decref(one);
        }
        if (fixed)
            j = json_stringn(fixed, o);
        free(fixed);
        return j ? j : json_string("");
    }
    }
}

int survey_db_rows(sqlite3 *db, const char *path, bcl_error *e, const char *sql, json_t **out,
                   const char *fmt, ...)
{
    *out = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return survey_db_fail(db, path, "cannot read it", e);
    va_list ap;
    va_start(ap, fmt);
    bind_args(st, fmt, ap);
    va_end(ap);
    json_t *rows = json_array();
    int s;
    while (rows && (s = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *row = json_object();
        for (int c = 0; row && c < sqlite3_column_count(st); c++)
            json_object_set_new(row, sqlite3_column_name(st, c), column_json(st, c));
        json_array_append_new(rows, row);
    }
    sqlite3_finalize(st);
    if (!rows)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    if (s != SQLITE_DONE) {
        json_decref(rows);
        return survey_db_fail(db, path, "cannot read it", e);
    }
    *out = rows;
    return BCL_OK;
}

/* The keys of a model's figures (at the top of "measured": the default's). */
static bool is_model_key(const char *k)
{
    static const char *const parts[] = {"small", "large", "local_sweep", "fused", NULL};
    for (size_t i = 0; parts[i]; i++)
        if (strcmp(k, parts[i]) == 0)
            return true;
    for (bcl_fig f = 0; f < BCL_FIG_COUNT; f++)
        if ((bcl_survey_figures[f].flags & BCL_FIG_MODEL) && strcmp(k, bcl_survey_key(f)) == 0)
            return true;
    return false;
}

/* A figure of a device's "model_file" (its errors and flags are named
 * "model_file.<figure>"). */
static bool is_model_file(const char *figure)
{
    return strncmp(figure, "model_file.", strlen("model_file.")) == 0;
}

/* Every value of obj under its dotted path: with model NULL a fact (arrays
 * as JSON text; extensions have their table), else a scalar figure of
 * model, the sweep's points as local_sweep.us_per_step.<local>. which: 0
 * the device's own figures, 1 the model keys at the top of "measured", 2 a
 * model of "models". */
static int add_values(importer *im, const json_t *obj, const char *model, const char *prefix,
                      int which)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (model && !*prefix && which < 2 &&
            (strcmp(k, "models") == 0 || strcmp(k, "model") == 0 ||
             is_model_key(k) != (which == 1)))
            continue;
        char key[512];
        snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", k);
        int rc = BCL_OK;
        size_t i;
        json_t *x;
        if (json_is_object(v))
            rc = add_values(im, v, model, key, 2);
        else if (!model && strcmp(key, "limits.extensions") == 0 && json_is_array(v)) {
            json_array_foreach(v, i, x)
            {
                if (json_is_string(x) &&
                    (rc = put(im, Q_EXT, NULL, "is", im->run, json_string_value(x))))
                    return rc;
            }
        } else if (!model)
            rc = put(im, Q_FACT, NULL, "issj", im->run, key, type_name(v), v);
        else if (json_is_array(v) && strcmp(k, "points") == 0) {
            json_array_foreach(v, i, x)
            {
                const json_t *local = json_object_get(x, "local");
                char pk[600], num[24];
                snprintf(num, sizeof num, "%lld", (long long)json_integer_value(local));
                snprintf(pk, sizeof pk, "%s.us_per_step.%s", prefix,
                         json_is_integer(local)  ? num
                         : json_is_string(local) ? json_string_value(local)
                                                 : "?");
                if ((rc = put(im, Q_FIG, NULL, "issj", im->run, model, pk,
                              json_object_get(x, "us_per_step"))))
                    return rc;
            }
        } else if (!json_is_array(v))
            rc = put(im, Q_FIG, NULL, "issj", im->run, model, key, v);
        if (rc)
            return rc;
    }
    return BCL_OK;
}

/* The device's row, found by its key or added: its identity without the
 * driver (a new driver is a new run) plus the compute units (a CPU model in
 * a machine of another size is another device), host and UUID or PCI bus. */
static int device_id(importer *im, const json_t *dev, long long *id)
{
    const json_t *ident = json_object_get(dev, "identity");
    long long cu =
        json_integer_value(json_object_get(json_object_get(dev, "limits"), "compute_units"));
    const char *f[4] = {str_or(ident, "platform", ""), str_or(ident, "vendor", ""),
                        str_or(ident, "name", ""), str_or(ident, "type", "")};
    json_t *k = json_pack("[s,s,s,s,I]", f[0], f[1], f[2], f[3], (json_int_t)cu);
    /* Where the survey says where the device is (schema 3), identical nodes
     * and GPUs are devices of their own; one without keeps its old key. */
    static const char *const place[] = {"host", "uuid", "pci_bus"};
    for (size_t i = 0; k && i < sizeof place / sizeof place[0]; i++) {
        const char *v = str_or(ident, place[i], NULL);
        if (v && *v)
            json_array_append_new(k, json_pack("[s,s]", place[i], v));
    }
    char hex[65];
    int bad = !k || digest_of(k, hex) != 0;
    json_decref(k);
    if (bad)
        return bcl_fail(im->e, BCL_EXIT_RUNTIME, "out of memory");
    hex[16] = '\0'; /* 64 bits tell a fleet's devices apart */
    return put(im, Q_DEVICE, id, "sssssi", hex, f[0], f[1], f[2], f[3], cu);
}

static int add_device(importer *im, long long survey, size_t pos, const json_t *dev)
{
    long long dev_id = 0;
    const json_t *ident = json_object_get(dev, "identity");
    int rc = device_id(im, dev, &dev_id);
    if (rc ||
        (rc = put(im, Q_RUN, NULL, "iiissss", survey, dev_id, (long long)pos,
                  str_or(dev, "selector", ""), str_or(ident, "driver", ""),
                  str_or(ident, "platform_version", ""), str_or(ident, "opencl_version", ""))))
        return rc;
    im->run = sqlite3_last_insert_rowid(im->db);

    json_t *top = json_pack("{s:O?,s:O?,s:O?}", "selector", json_object_get(dev, "selector"),
                            "profiling_usable", json_object_get(dev, "profiling_usable"),
                            "profiling_note", json_object_get(dev, "profiling_note"));
    if (!top)
        return bcl_fail(im->e, BCL_EXIT_RUNTIME, "out of memory");
    rc = add_values(im, top, NULL, "", 0);
    json_decref(top);
    if (rc || (rc = add_values(im, ident, NULL, "identity", 0)) ||
        (rc = add_values(im, json_object_get(dev, "limits"), NULL, "limits", 0)) ||
        (rc = add_values(im, json_object_get(dev, "capabilities"), NULL, "capabilities", 0)))
        return rc;
    const json_t *m = json_object_get(dev, "measured");
    const char *dflt = str_or(m, "model", bcl_models[0]->name);
    if ((rc = add_values(im, m, "", "", 0)) || (rc = add_values(im, m, dflt, "", 1)))
        return rc;
    const char *name;
    json_t *v;
    json_object_foreach(json_object_get(m, "models"), name, v)
    {
        if ((rc = add_values(im, v, name, "", 2)))
            return rc;
    }
    /* What the survey could not measure, and what it found implausible;
     * not a model file's (a device's "model_file", docs/SURVEY.md): the
     * database holds the fleet's figures, and those of one user's model
     * stay in its survey file. */
    json_object_foreach(json_object_get(dev, "errors"), name, v)
    {
        if (is_model_file(name))
            continue;
        if ((rc = put(im, Q_ERROR, NULL, "iss", im->run, name,
                      json_is_string(v) ? json_string_value(v) : "")))
            return rc;
    }
    size_t i;
    json_array_foreach(json_object_get(dev, "flags"), i, v)
    {
        if (is_model_file(str_or(v, "figure", "")))
            continue;
        if ((rc = put(im, Q_FLAG, NULL, "isjjs", im->run, str_or(v, "figure", ""),
                      json_object_get(v, "value"), json_object_get(v, "limit"),
                      str_or(v, "rule", ""))))
            return rc;
    }
    return BCL_OK;
}

static int import_rows(importer *im, const json_t *doc, const char *text, const char *source,
                       const char *digest, long long *id)
{
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    int rc = put(im, Q_SURVEY, NULL, "sssssisss", digest, str_or(doc, "date", ""),
                 str_or(doc, "schema", ""), str_or(doc, "ballcl_version", ""),
                 str_or(doc, "command", ""), (long long)json_is_true(json_object_get(doc, "quick")),
                 source, now, text);
    if (rc)
        return rc;
    *id = sqlite3_last_insert_rowid(im->db);
    /* Schema 3's platforms, whatever each entry holds: its name and status
     * (or error) when it has them, and the entry. */
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(doc, "platforms"), i, p)
    {
        const json_t *name = json_object_get(p, "name");
        const json_t *status = json_object_get(p, "status");
        if ((rc = put(im, Q_PLATFORM, NULL, "iijjj", *id, (long long)i,
                      name ? name : json_object_get(p, "platform"),
                      status ? status : json_object_get(p, "error"), p)))
            return rc;
    }
    json_array_foreach(json_object_get(doc, "devices"), i, p)
    {
        if ((rc = add_device(im, *id, i, p)))
            return rc;
    }
    return BCL_OK;
}

int survey_db_import(sqlite3 *db, const char *path, const char *text, const char *source,
                     long long *id, bool *added, bcl_error *e)
{
    *added = false;
    *id = 0;
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': not valid JSON: %s", source, je.text);
    char digest[65];
    if (digest_of(doc, digest) != 0) {
        json_decref(doc);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    importer im = {.db = db, .path = path, .e = e};
    int rc = exec_sql(db, path, "BEGIN IMMEDIATE", "cannot start a transaction", e);
    for (int q = 0; rc == BCL_OK && q < NQ; q++)
        if (sqlite3_prepare_v2(db, queries[q].sql, -1, &im.st[q], NULL) != SQLITE_OK)
            rc = survey_db_fail(db, path, "cannot prepare", e);
    if (rc == BCL_OK)
        rc = put(&im, Q_FIND, id, "s", digest);
    if (rc == BCL_OK && *id == 0) {
        rc = import_rows(&im, doc, text, source, digest, id);
        *added = rc == BCL_OK;
    }
    for (int q = 0; q < NQ; q++)
        sqlite3_finalize(im.st[q]);
    json_decref(doc);
    if ((rc = end_transaction(db, path, rc, e)))
        *added = false;
    return rc;
}
