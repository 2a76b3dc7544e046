/* The survey database (docs/SURVEY.md, "The survey database"): every survey
 * document, and its devices, figures, facts and extensions as rows an SQL
 * query reaches directly. SQLite, WAL mode, one transaction per document:
 * several writers on one host are safe together. */
#ifndef BALLCL_SURVEY_DB_H
#define BALLCL_SURVEY_DB_H

#include "cli.h"

#include <sqlite3.h>
#include <stdbool.h>

/* The tables' version (user_version) and the file's mark (application_id,
 * "bcls"): a database of another program is refused, never written into. */
#define SURVEY_DB_VERSION 1
#define SURVEY_DB_APP_ID  0x62636c73

/* Opens the database (WAL, a busy timeout, the tables made when new) at
 * given (--db), else $BALLCL_SURVEY_DB, else $XDG_DATA_HOME/ballcl/surveys.db,
 * else ~/.local/share/ballcl/surveys.db, that path written into path.
 * create: a missing file is created (at those last two, its folder too),
 * else it is an input error telling how to fill it. */
int survey_db_open(const char *given, bool create, char *path, size_t size, sqlite3 **db,
                   bcl_error *e);

/* Records one checked survey document (text) in one transaction; source
 * names where it came from. One already recorded (the same digest of its
 * content) is not added again: *added is false, *id the existing survey's. */
int survey_db_import(sqlite3 *db, const char *path, const char *text, const char *source,
                     long long *id, bool *added, bcl_error *e);

/* The rows of sql as objects named by its columns (text always a string,
 * bytes that are no UTF-8 as U+FFFD), its parameters from fmt (a letter
 * each: 'i' a long long, 's' a string, 'j' a JSON value). */
int survey_db_rows(sqlite3 *db, const char *path, bcl_error *e, const char *sql, json_t **out,
                   const char *fmt, ...);

/* An input or runtime error from SQLite's last message on db. */
int survey_db_fail(sqlite3 *db, const char *path, const char *what, bcl_error *e);

#endif
