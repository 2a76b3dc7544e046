/* ballcl survey import | list | report, and the recording of a new survey
 * (cmd_survey_db.c). */
#ifndef BALLCL_CMD_SURVEY_DB_H
#define BALLCL_CMD_SURVEY_DB_H

#include "cli.h"

#include <stdbool.h>

/* Runs the subcommand argv[1] names when it is one of the database's
 * (*handled true), returning its exit status. */
int cmd_survey_db(int argc, char **argv, bool *handled);

/* The database of 'ballcl survey' (given: --db, or NULL for the default):
 * with check_only, opened (created when missing) before the survey runs,
 * so that a bad path fails before the long work; else text, the survey
 * document as written, is recorded, and where says where ("recorded in
 * 'PATH' as survey N"). */
int survey_db_record(const char *given, bool check_only, const char *text, char *where,
                     size_t size, bcl_error *e);

#endif
