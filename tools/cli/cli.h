/*
 * What the subcommands share: the command table entry, device opening,
 * model selection with its parameter options, and output helpers.
 */
#ifndef BALLCL_CLI_H
#define BALLCL_CLI_H

#include "ballcl/ballcl.h"
/* The library's internal side the program uses (never installed): errors
 * and parsing, contexts, plans and simulations, state files and outputs,
 * the measuring engine, the survey's extras. */
#include "files/files.h"
#include "measure/measure.h"
#include "ocl/clock.h"
#include "ocl/ocl.h"
#include "run/run.h"
#include "survey/survey.h"
#include "util/cleanup.h"
#include "util/util.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>

typedef struct cli_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} cli_command;

/* Prints "ballcl: <message>" (and any detail, then freed) on stderr;
 * returns e->code. */
int cli_report(bcl_error *e);
/* Usage error for a subcommand: one line, and a pointer to --help. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "ballcl: warning: <text>" on stderr, control characters escaped. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* bcl_devices_enumerate, printing each of list->warnings as a line
 * "ballcl: warning: ..." on stderr when it succeeds. */
int cli_enumerate(bcl_device_list *list, bcl_error *e);
/* The selector a device is picked by: sel when given, else $BALLCL_DEVICE
 * (empty counts as unset), else NULL (the default rule). The one place the
 * variable is read, for the program and the Python module alike. */
const char *cli_selector(const char *sel);
/* Enumerates devices and picks one by selector text (NULL: BALLCL_DEVICE,
 * then the default). list stays owned by the caller. */
int cli_pick_device(const char *sel_text, bcl_device_list *list, size_t *index, bcl_error *e);
/* The same for a list of selectors or "all" (bcl_device_select_list):
 * index[] gets at most cap devices, *count how many. */
int cli_pick_devices(const char *sel_text, bcl_device_list *list, size_t *index, size_t cap,
                     size_t *count, bcl_error *e);

/* Model choice plus its parameters, gathered while options are parsed and
 * checked once the model is known. */
#define CLI_MAX_PARAM_OPTS 16
typedef struct cli_model_args {
    const char *model_name;
    const char *file;      /* --model-file */
    const char *reference; /* --reference */
    double reference_limit_s;
    struct {
        const char *opt;
        const char *text;
        char name[32]; /* --param's NAME (opt points here) */
    } given[CLI_MAX_PARAM_OPTS];
    unsigned ngiven;
    const bcl_model *model;
    float params[BCL_MAX_PARAMS];
} cli_model_args;

/* Option ids from CLI_PARAM_OPT_BASE on are model parameters. */
#define CLI_PARAM_OPT_BASE 1000
/* Help lines for the model options. */
void cli_print_model_help(FILE *f);

/* A launch's local size as the outputs give it: the number, or "driver"
 * for 0 (the runtime's choice); the text is written into out. */
const char *cli_local_text(size_t local, char *out, size_t size);
json_t *cli_local_json(size_t local);
/* A tuned entry as "variant, local L, K k" ("base" for no variant). */
const char *cli_tuned_text(const bcl_tuned_entry *t, char *out, size_t size);

/* Writes JSON to stdout with a newline. */
void cli_print_json(json_t *j);

/* Parses "a,b,c" into out (at most cap values, each in [min, max]). */
int cli_parse_u64_list(const char *text, const char *what, uint64_t min, uint64_t max,
                       uint64_t *out, size_t cap, size_t *count, bcl_error *e);

/* Seconds between progress lines when stderr is not a terminal. */
#define CLI_PROGRESS_SECONDS 10
/* Progress of long work on stderr (README.md), matching bcl_progress_fn
 * (arg: the prefix, e.g. "tune"): on a terminal one line rewritten in
 * place; otherwise a whole line at most every CLI_PROGRESS_SECONDS
 * (BALLCL_PROGRESS_SECONDS overrides it; 0: every update), so a log shows
 * that the work goes on without filling up. */
void cli_progress(void *arg, unsigned done, unsigned total, const char *what);
/* Erases the progress line. */
void cli_progress_end(void);
/* From now on, a line each time cli_progress is called, on a terminal or
 * not: the caller paces them. Returns the seconds between its lines:
 * BALLCL_PROGRESS_SECONDS when set, else `seconds` (run's 2). */
double cli_progress_paced(double seconds);

/* text from a file or a driver, ready for a terminal (bcl_escape: control
 * characters and bytes that are no UTF-8 as \xNN), in one of a few
 * rotating buffers of this thread: valid until several more calls, enough
 * for the arguments of one printf. */
const char *cli_shown(const char *text);

/* text cut to at most width display columns for a table: when it is
 * longer, at a word boundary (before a space, after a '-') with an
 * ellipsis, never silently mid-word. */
void cli_ellipsize(const char *text, size_t width, char *out, size_t size);
/* cli_ellipsize, then padded with spaces to exactly width columns (printf's
 * %-Ns counts bytes, not columns, so the ellipsis would misalign it). */
void cli_field(const char *text, size_t width, char *out, size_t size);

/* Runs the command argv[1] of the table (argv[0] is the program) with its
 * arguments, or prints the usage or the version; returns the exit status.
 * A result that did not reach stdout is exit status 3. */
int cli_dispatch(const cli_command *commands, size_t n, int argc, char **argv);

/* The summaries of the commands `python -m ballcl` also has (one text for
 * both tables). */
#define CLI_SUMMARY_DEVICES "list every OpenCL platform and device with its selector"
#define CLI_SUMMARY_SURVEY  "device capability survey (docs/SURVEY.md); 'survey compare' for files"
#define CLI_SUMMARY_VERSION "the version of ballcl (--json too)"

/* Commands */
int cmd_devices(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_survey(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif
