/*
 * Every run option and the options several commands share (-d, -n, -s,
 * --model and its parameters, --init, --seed, --local, --no-cache, --json,
 * -r, --repeat-ms, --steps-per-launch, ...), declared once in options.c's
 * table (name, letter, range, help line, Python keyword, JSON name, MPI
 * agreement) and parsed in one place: each means the same and fails with
 * the same message in every command, under MPI (run_agree.c) and in the
 * Python module (the keywords and ranges of ballcl.run and Context.run).
 * A command names those it takes (CLI_*), sets its defaults and ranges,
 * adds its own options and handles only those:
 *
 *   cli_options o;
 *   cli_options_init(&o, "tune", help, CLI_DEVICE | CLI_BALLS | ..., own, "v");
 *   int c;
 *   while (rc == BCL_OK && (c = cli_options_next(&o, argc, argv, &rc, e)) != -1)
 *       switch (c) { ...the command's own options... }
 *   rc = rc ? rc : cli_options_finish(&o, argc, argv, e);   (-1: --help)
 */
#ifndef BALLCL_OPTIONS_H
#define BALLCL_OPTIONS_H

#include "cli.h"

enum {
    CLI_DEVICE = 1 << 0,     /* -d, --device */
    CLI_BALLS = 1 << 1,      /* -n, --balls N */
    CLI_BALLS_LIST = 1 << 2, /* -n, --balls N[,N...] */
    CLI_STEPS = 1 << 3,      /* -s, --steps */
    CLI_MODEL = 1 << 4,      /* --model and the models' parameters */
    CLI_INIT = 1 << 5,       /* --init */
    CLI_SEED = 1 << 6,       /* --seed */
    CLI_LOCAL = 1 << 7,      /* --local */
    CLI_CACHE = 1 << 8,      /* --no-cache */
    CLI_JSON = 1 << 9,       /* --json (a flag) */
    CLI_MEASURE = 1 << 10,   /* -r, --repeats and --repeat-ms */
    CLI_BUDGET = 1 << 11,    /* --launch-budget-ms */
    CLI_RUN = 1 << 12,       /* run's own (--input, --sync, ...): o is a run_args' (run.h) */
    /* What bench and tune both take, with their own -n. */
    CLI_MEASURING = CLI_DEVICE | CLI_STEPS | CLI_MODEL | CLI_INIT | CLI_SEED | CLI_CACHE |
                    CLI_JSON | CLI_MEASURE | CLI_BUDGET,
};

/* One option: taken by the commands whose `takes` has flag, or named in
 * cmds; min and max bound a number; py: its Python keyword, of the
 * functions flags names (CLI_PY_*); json: the key (a dotted path) of its
 * value in `run --json`; usage and help make its help line (help NULL:
 * the command says it in its own words). */
typedef struct cli_option_decl {
    unsigned flag;
    const char *cmds;
    struct option opt;
    const char *letter; /* its getopt letters, or "" */
    const char *py, *json;
    uint64_t min, max;
    const char *usage, *help;
    unsigned flags;
} cli_option_decl;
enum {
    CLI_AGREE = 1,      /* the same on every MPI rank (run_agree.c) */
    CLI_FROM_INPUT = 2, /* "from --input" when the run reads one */
    CLI_PY_RUN = 4,     /* a keyword of ballcl.run */
    CLI_PY_CONTEXT = 8, /* a keyword of Context.run */
};

/* The declaration of the option of long name `name` (NULL: none). */
const cli_option_decl *cli_option_find(const char *name);
/* The Python keywords of the table's options of function `which`
 * (CLI_PY_*), in its order, into kw (at most cap); their count. */
size_t cli_option_keywords(unsigned which, const char **kw, size_t cap);
/* The help lines of the shared options named in names (long names, space
 * separated), in that order. */
void cli_print_option_help(const char *names);
/* The help lines of the shared options command cmd takes (with `takes`)
 * that have their own text, in the table's order. */
void cli_print_options_help(const char *cmd, unsigned takes);

/* Option values from this on are the command's own long options. */
#define CLI_OWN_OPT_BASE 300
#define CLI_MAX_BALLS    32
#define CLI_MAX_OPTIONS  64

typedef struct cli_options {
    const char *cmd;
    unsigned takes;
    /* Ranges, set by cli_options_init, changed by the command before the
     * first cli_options_next where its ranges differ. */
    uint64_t balls_max, steps_min, steps_max, seed_max;
    /* The values, with their defaults. */
    const char *device;            /* NULL: BALLCL_DEVICE, else the default rule */
    uint64_t balls[CLI_MAX_BALLS]; /* default 100000 */
    size_t nballs;                 /* 1 unless a list was given */
    bool balls_given;
    uint64_t steps; /* 0 unless given */
    bool steps_given;
    cli_model_args model; /* resolved by cli_options_finish */
    bcl_init init;        /* default seed */
    bool init_given;
    uint64_t seed;     /* default 1 */
    bcl_launch launch; /* default auto */
    bool local_given;
    uint64_t steps_per_launch; /* --steps-per-launch; 0: not given */
    bool use_cache;            /* false with --no-cache */
    bool json;
    double launch_budget_ms;  /* --launch-budget-ms; 0: not given (the environment's or
                                 the default, resolved by the plan) */
    void (*help_fn)(void);    /* prints the command's help, on -h */
    bool help;                /* -h was given (and the help printed) */
    bcl_measure_opts measure; /* repeats and repeat_ms, defaults the command's */
    const char *stray_hint;   /* added to the stray-argument message (may be NULL) */
    /* The long names of the options given, in order (for rules such as
     * "--show goes with no sweep option"). */
    const char *seen[CLI_MAX_OPTIONS];
    size_t nseen;
    /* getopt_long's tables, and whether its scan has begun. */
    bool started;
    struct option longopts[CLI_MAX_OPTIONS];
    char shortopts[32];
} cli_options;

/* What the options give `ballcl run` (run.h): the shared ones, then run's
 * own (CLI_RUN), which the table's handler writes through o. */
typedef struct run_args {
    cli_options o; /* first: the table's handler reaches the rest from it */
    const char *input, *output;
    const char *snapshot;
    unsigned snap_w, snap_h; /* 0: from the box's aspect */
    const char *variant;     /* --variant, NULL when not given */
    char tuned_note[200];    /* the report's 'tuned' line: used or not, and why */
    bcl_sync sync;
    bool validate, verbose, quiet;
    uint64_t tol_ulp;
} run_args;

/* Sets the defaults and builds the option tables: the shared options in
 * `takes`, then own (the command's long options, values from
 * CLI_OWN_OPT_BASE or a short letter, ending in a zero entry; may be NULL)
 * with own_short (their getopt letters, e.g. "v"; may be ""). */
void cli_options_init(cli_options *o, const char *cmd, void (*help)(void), unsigned takes,
                      const struct option *own, const char *own_short);
/* Handles every shared option itself and returns the next option of the
 * command's own (getopt_long's value, optarg set); -1 at the end, on an
 * error (*rc set, e filled) or on -h (the help printed, o->help set). */
int cli_options_next(cli_options *o, int argc, char **argv, int *rc, bcl_error *e);
/* cli_options_init and the loop of a command with no options of its own
 * (takes only); returns the status (e filled on an error). */
int cli_options_only(cli_options *o, const char *cmd, void (*help)(void), unsigned takes, int argc,
                     char **argv, bcl_error *e);
/* After the loop: -1 when the help was printed (the command then ends
 * with status 0), else refuses a stray argument and resolves the model and
 * its parameters. */
int cli_options_finish(cli_options *o, int argc, char **argv, bcl_error *e);
/* bench, tune and survey validate all they time against the model's
 * reference: a model file given no --reference has none, so they refuse
 * it (exit 2) rather than time bits nothing has checked. what: "every
 * row", "every candidate"... */
int cli_model_needs_reference(const cli_options *o, const char *what, bcl_error *e);
/* Adds to j (ranks.h) each option of o's command that the ranks must
 * agree on, with its value ("from --input" where the run reads one and
 * the option says so). */
struct ranks_job;
void cli_options_agree(const cli_options *o, struct ranks_job *j);

#endif
