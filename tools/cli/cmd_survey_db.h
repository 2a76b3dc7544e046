/* ballcl survey import | list | report, and the recording of a new survey
 * (cmd_survey_db.c). */
#ifndef BALLCL_CMD_SURVEY_DB_H
#define BALLCL_CMD_SURVEY_DB_H

#include "cli.h"

#include <stdbool.h>

/* ballcl survey import, list and report: their exit status. */
int cmd_survey_import(int argc, char **argv);
int cmd_survey_list(int argc, char **argv);
int cmd_survey_report(int argc, char **argv);

/* Options shared by the database's subcommands: --db FILE, --json, -h, and
 * own, the command's other option with a value (NULL: none). Options stand
 * anywhere, '--' ends them; the operands move, in order, to the end of
 * argv from first_arg. Returns -1 for help printed, BCL_OK, or an exit
 * class (message printed). */
typedef struct survey_db_args {
    const char *db;
    const char *own_value;
    bool json;     /* --json: the answer as one JSON document on stdout */
    int first_arg; /* index of the first operand */
} survey_db_args;
int survey_db_args_parse(const char *cmd, int argc, char **argv, const char *own, survey_db_args *a,
                         void (*help)(void));

/* ballcl survey check (cmd_survey_check.c). */
int cmd_survey_check(int argc, char **argv);

/* The database of 'ballcl survey' (given: --db, or NULL for the default):
 * with check_only, opened (created when missing) so that a bad path fails
 * before the survey runs; else text, the document, is recorded, and where
 * says where ("recorded in 'PATH' as survey N"). */
int survey_db_record(const char *given, bool check_only, const char *text, char *where, size_t size,
                     bcl_error *e);

#endif
