/* The options (options.h): one table, one handler, one message each. */
#include "options.h"

#include "ranks.h"
#include "models/models.h"

#include <pthread.h>
#include <string.h>

enum {
    OPT_MODEL = 260,
    OPT_INIT,
    OPT_SEED,
    OPT_LOCAL,
    OPT_NO_CACHE,
    OPT_JSON,
    OPT_REPEAT_MS,
    OPT_BUDGET,
    OPT_SPL,
    OPT_INPUT,
    OPT_OUTPUT,
    OPT_SNAPSHOT,
    OPT_SNAPSHOT_SIZE,
    OPT_NO_VALIDATE,
    OPT_TOL,
    OPT_SYNC,
    OPT_VARIANT,
    OPT_MODEL_FILE,
    OPT_PARAM,
    OPT_REFERENCE,
    OPT_REFERENCE_LIMIT,
};

#define MORE    "\n                         "
#define PY_BOTH (CLI_PY_RUN | CLI_PY_CONTEXT)
/* Every option, once. A run's ranges are Python's too: steps from 0 (the
 * state read back unchanged) to 2^40, K up to 2^24 (the kernels' step
 * counter), a work-group of at most 2^20 (src/run/launch.c). The rows the
 * ranks agree on are in the order they compare them. One option a row, as
 * written: */
/* clang-format off */
static const cli_option_decl shared[] = {
    {CLI_DEVICE, NULL, {"device", required_argument, NULL, 'd'}, "d:", "device", NULL, 0, 0,
     "-d, --device SEL",
     "P:D, gpu, cpu, accelerator, or part of a device or" MORE
     "platform name (default: $BALLCL_DEVICE, else the first" MORE
     "GPU, accelerator, CPU); a comma-separated list of them," MORE
     "or all, runs on several devices at once, the balls" MORE
     "split by each one's measured rate (docs/DESIGN.md)", CLI_PY_RUN},
    {CLI_RUN, NULL, {"input", required_argument, NULL, OPT_INPUT}, "", NULL, NULL, 0, 0,
     "--input FILE.npy", "initial state from an (N, 4) float32 .npy file", CLI_AGREE},
    {CLI_BALLS | CLI_BALLS_LIST, NULL, {"balls", required_argument, NULL, 'n'}, "n:", NULL, "balls",
     1, (uint64_t)1 << 40, "-n, --balls N", "number of balls (default 100000)",
     CLI_AGREE | CLI_FROM_INPUT},
    {CLI_STEPS, NULL, {"steps", required_argument, NULL, 's'}, "s:", "steps", "steps", 0,
     (uint64_t)1 << 40, "-s, --steps S", "number of steps (default 1000)", CLI_AGREE | PY_BOTH},
    {CLI_MODEL, NULL, {"model", required_argument, NULL, OPT_MODEL}, "", "model", "model", 0, 0,
     NULL, NULL, CLI_PY_RUN},
    {CLI_MODEL, NULL, {"model-file", required_argument, NULL, OPT_MODEL_FILE}, "", NULL,
     NULL, 0, 0, "--model-file FILE.cl",
     "your own update of one ball, in OpenCL C, instead of" MORE
     "--model (docs/MODELS.md)", CLI_AGREE},
    {CLI_MODEL, NULL, {"param", required_argument, NULL, OPT_PARAM}, "", NULL, NULL, 0, 0,
     "--param NAME=VALUE", "set a model parameter (repeatable)"},
    {CLI_MODEL, NULL, {"reference", required_argument, NULL, OPT_REFERENCE}, "", NULL, NULL, 0, 0,
     "--reference FILE.c",
     "the model file's update in C, to validate against" MORE
     "(without: not validated)", CLI_AGREE},
    {CLI_MODEL, NULL, {"reference-limit", required_argument, NULL, OPT_REFERENCE_LIMIT}, "", NULL,
     NULL, 1, 86400, "--reference-limit S",
     "time limit of the reference's run, in seconds" MORE
     "(default: 60 + 1 per 10^8 ball-steps)"},
    {CLI_INIT, NULL, {"init", required_argument, NULL, OPT_INIT}, "", NULL, "init", 0, 0,
     "--init seed|random", "initial state (default seed: the seed's data)",
     CLI_AGREE | CLI_FROM_INPUT},
    {CLI_SEED, NULL, {"seed", required_argument, NULL, OPT_SEED}, "", NULL, "seed", 0, UINT64_MAX,
     "--seed S", "PRNG seed for --init (default 1)", CLI_AGREE | CLI_FROM_INPUT},
    {CLI_LOCAL, NULL, {"local", required_argument, NULL, OPT_LOCAL}, "", "local", "launch.local", 1,
     1u << 20, "--local L",
     "work-group size: auto, driver, tuned, or a number;" MORE
     "--local 1 alone runs the seed's launch: single steps" MORE
     "of the base kernel, one ball per work-group", PY_BOTH},
    {0, "run bench", {"steps-per-launch", required_argument, NULL, OPT_SPL}, "",
     "steps_per_launch", "launch.steps_per_launch", 1, 1u << 24, "--steps-per-launch K",
     "steps applied per kernel launch (default: see below)", PY_BOTH},
    {0, "run", {"quiet", no_argument, NULL, 'q'}, "q", "progress", NULL, 0, 0, "-q, --quiet",
     "no progress line on stderr (without -q: after the first" MORE
     "2 s of steps or of validation, one every 2 s; rank 0" MORE
     "alone)", CLI_PY_RUN},
    {CLI_CACHE, NULL, {"no-cache", no_argument, NULL, OPT_NO_CACHE}, "", "cache", NULL, 0, 0,
     "--no-cache", "build from source, bypassing the binary cache", CLI_PY_RUN},
    {CLI_JSON, NULL, {"json", no_argument, NULL, OPT_JSON}, "", NULL, NULL, 0, 0, "--json",
     "one JSON object on stdout instead of the report", CLI_AGREE},
    {CLI_RUN, NULL, {"output", required_argument, NULL, OPT_OUTPUT}, "", NULL, NULL, 0, 0,
     "--output FILE.npy", "save the final state (written atomically)", CLI_AGREE},
    {CLI_RUN, NULL, {"snapshot", required_argument, NULL, OPT_SNAPSHOT}, "", NULL, NULL, 0, 0,
     "--snapshot FILE.png",
     "save a PNG picture of the final state: the box, each" MORE
     "ball a dot, darker where many overlap (written" MORE
     "atomically; the name must end in .png)", CLI_AGREE},
    {CLI_RUN, NULL, {"snapshot-size", required_argument, NULL, OPT_SNAPSHOT_SIZE}, "", NULL, NULL,
     0, 0, "--snapshot-size WxH", "picture size in pixels (default: 800 on the longer side)",
     CLI_AGREE},
    {CLI_RUN, NULL, {"no-validate", no_argument, NULL, OPT_NO_VALIDATE}, "", "validate",
     "validation.performed", 0, 0, "--no-validate", "skip the comparison with the C reference",
     CLI_AGREE | PY_BOTH},
    {CLI_RUN, NULL, {"tolerance-ulp", required_argument, NULL, OPT_TOL}, "", NULL,
     "validation.tolerance_ulp", 0, 1u << 30, "--tolerance-ulp U",
     "accept differences up to U ULP (default 0: bitwise)", CLI_AGREE},
    {CLI_RUN, NULL, {"sync", required_argument, NULL, OPT_SYNC}, "", NULL, "launch.sync", 0, 0,
     "--sync every|end",
     "wait for the device after every launch, or only at the" MORE
     "end (default end)", CLI_AGREE},
    {CLI_RUN, NULL, {"variant", required_argument, NULL, OPT_VARIANT}, "", NULL, "launch.variant",
     0, 0, "--variant V", "kernel variant: base, or one the model's .cl file defines"},
    {CLI_RUN, NULL, {"verbose", no_argument, NULL, 'v'}, "v", NULL, NULL, 0, 0, "-v, --verbose",
     "more detail"},
    {CLI_MEASURE, NULL, {"repeats", required_argument, NULL, 'r'}, "r:", NULL, NULL, 1, 1000, NULL,
     NULL},
    {CLI_MEASURE, NULL, {"repeat-ms", required_argument, NULL, OPT_REPEAT_MS}, "", NULL, NULL, 1,
     600000, NULL, NULL},
    {CLI_BUDGET, NULL, {"launch-budget-ms", required_argument, NULL, OPT_BUDGET}, "", NULL,
     "launch.launch_budget_ms", 0, 0, NULL, NULL},
};
/* clang-format on */
#define NSHARED (sizeof shared / sizeof shared[0])

/* Whether command cmd (with `takes`) takes shared option i. */
static bool takes_option(const char *cmd, unsigned takes, size_t i)
{
    for (const char *c = shared[i].cmds; c && *c; c += strspn(c, " ")) {
        size_t w = strcspn(c, " ");
        if (w == strlen(cmd) && strncmp(c, cmd, w) == 0)
            return true;
        c += w;
    }
    return (shared[i].flag & takes) != 0;
}

const cli_option_decl *cli_option_find(const char *name)
{
    for (size_t i = 0; i < NSHARED; i++)
        if (strcmp(shared[i].opt.name, name) == 0)
            return &shared[i];
    return NULL;
}

size_t cli_option_keywords(unsigned which, const char **kw, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < NSHARED && n < cap; i++)
        if (shared[i].flags & which)
            kw[n++] = shared[i].py;
    return n;
}

#ifdef BALLCL_HAVE_MPI
void cli_options_agree(const cli_options *o, ranks_job *j)
{
    const run_args *r = (const run_args *)o; /* run's own options (CLI_RUN) only */
    for (size_t i = 0; i < NSHARED; i++) {
        const cli_option_decl *d = &shared[i];
        if (!(d->flags & CLI_AGREE) || !takes_option(o->cmd, o->takes, i))
            continue;
        char name[40];
        snprintf(name, sizeof name, *d->letter ? "-%.1s" : "--%s",
                 *d->letter ? d->letter : d->opt.name);
        int v = d->opt.val;
        if ((d->flags & CLI_FROM_INPUT) && (o->takes & CLI_RUN) && r->input)
            ranks_job_add(j, name, "from --input");
        else if (v == 'n' || v == 's' || v == OPT_SEED || v == OPT_TOL)
            ranks_job_add(j, name, "%llu",
                          (unsigned long long)(v == 'n'       ? o->balls[0]
                                               : v == 's'     ? o->steps
                                               : v == OPT_TOL ? r->tol_ulp
                                                              : o->seed));
        else if (v == OPT_INIT)
            ranks_job_add(j, name, "%s", o->init == BCL_INIT_SEED ? "seed" : "random");
        else if (v == OPT_INPUT || v == OPT_OUTPUT || v == OPT_SNAPSHOT)
            ranks_job_add_path(j, name,
                               v == OPT_INPUT    ? r->input
                               : v == OPT_OUTPUT ? r->output
                                                 : r->snapshot);
        else if (v == OPT_MODEL_FILE || v == OPT_REFERENCE) /* contents: run_agree.c */
            ranks_job_add_path(j, name, v == OPT_MODEL_FILE ? o->model.file : o->model.reference);
        else if (v == OPT_SNAPSHOT_SIZE)
            ranks_job_add(j, name, "%ux%u", r->snap_w, r->snap_h);
        else if (v == OPT_SYNC)
            ranks_job_add(j, name, "%s", r->sync == BCL_SYNC_EVERY ? "every" : "end");
        else
            ranks_job_add(j, name, "%s",
                          (v == OPT_JSON ? o->json : !r->validate) ? "given" : "not given");
    }
}
#endif

void cli_print_option_help(const char *names)
{
    char name[32];
    for (const char *c = names; *c; c += strspn(c, " ")) {
        size_t w = strcspn(c, " ");
        snprintf(name, sizeof name, "%.*s", (int)w, c);
        const cli_option_decl *d = cli_option_find(name);
        printf("  %-22s %s\n", d->usage, d->help);
        c += w;
    }
}

void cli_print_options_help(const char *cmd, unsigned takes)
{
    for (size_t i = 0; i < NSHARED; i++)
        if (shared[i].help && takes_option(cmd, takes, i))
            printf("  %-22s %s\n", shared[i].usage, shared[i].help);
}

/* A number for the option of long name `name`, in its declared range. */
static int number(const char *name, const char *arg, uint64_t *v, bcl_error *e)
{
    const cli_option_decl *d = cli_option_find(name);
    char opt[40];
    snprintf(opt, sizeof opt, "--%s", name);
    return bcl_parse_u64(arg, opt, d->min, d->max, v, e);
}

/* Appends every model parameter option (deduplicated) to opts, which has
 * room for `cap` entries, ending with the zero entry. */
static void add_param_options(struct option *opts, size_t used, size_t cap)
{
    int id = CLI_PARAM_OPT_BASE;
    for (size_t m = 0; m < bcl_model_count; m++) {
        for (unsigned i = 0; i < bcl_models[m]->nparams; i++, id++) {
            const char *name = bcl_models[m]->params[i].opt;
            bool dup = false;
            for (size_t j = 0; j < used; j++)
                if (strcmp(opts[j].name, name) == 0)
                    dup = true;
            if (dup || used + 1 >= cap)
                continue;
            opts[used++] = (struct option){name, required_argument, NULL, id};
        }
    }
    opts[used] = (struct option){0};
}

/* Records parameter `name` given `text` (the last one wins, as usual). */
static int param_given(cli_model_args *a, const char *name, size_t len, const char *text,
                       bcl_error *e)
{
    unsigned g = 0;
    while (g < a->ngiven &&
           !(strlen(a->given[g].opt) == len && !strncmp(a->given[g].opt, name, len)))
        g++;
    if (g == CLI_MAX_PARAM_OPTS)
        return bcl_fail(e, BCL_EXIT_INPUT, "too many model options");
    if (len >= sizeof a->given[g].name)
        return bcl_fail(e, BCL_EXIT_INPUT, "--param '%s': parameter name too long", name);
    memcpy(a->given[g].name, name, len);
    a->given[g].name[len] = '\0';
    a->given[g].opt = a->given[g].name;
    a->given[g].text = text;
    a->ngiven += g == a->ngiven;
    return BCL_OK;
}

/* Records a parameter option seen by getopt_long. */
static int model_param_seen(cli_model_args *a, const struct option *opts, int id, const char *text,
                            bcl_error *e)
{
    for (size_t j = 0; opts[j].name; j++)
        if (opts[j].val == id)
            return param_given(a, opts[j].name, strlen(opts[j].name), text, e);
    return bcl_fail(e, BCL_EXIT_INPUT, "unknown option");
}

/* --param NAME=VALUE. */
static int param_option(cli_model_args *a, const char *arg, bcl_error *e)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return bcl_fail(e, BCL_EXIT_INPUT, "--param '%s': expected NAME=VALUE", arg);
    return param_given(a, arg, (size_t)(eq - arg), eq + 1, e);
}

/* The model file of this process (one a process): reachable, so a leak
 * checker sees no leak; it lives as long as the options do. */
static bcl_model *model_file;

/* --model-file with its --reference. */
static int load_model_file(cli_model_args *a, bool use_cache, bcl_error *e)
{
    if (a->model_name)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--model and --model-file: give one (a built-in model, or your own)");
    bcl_model_free(model_file);
    /* The compiled reference is kept beside the binary cache; without a
     * usable folder it is compiled again each run (no error). */
    char dir[4096];
    bcl_error ignore = {0};
    bool keep = use_cache && a->reference && bcl_cache_dir(dir, sizeof dir, &ignore) == BCL_OK;
    bcl_error_clear(&ignore);
    bcl_model_spec spec = {.path = a->file,
                           .reference = a->reference,
                           .cache_dir = keep ? dir : NULL,
                           .use_cache = keep,
                           .reference_limit_s = a->reference_limit_s};
    int rc = bcl_model_load(&spec, &model_file, e);
    a->model = model_file;
    return rc;
}

/* Resolves the model and parses and checks its parameters. */
static int model_resolve(cli_model_args *a, bool use_cache, bcl_error *e)
{
    const char *name = a->model_name ? a->model_name : "seed";
    if (a->reference && !a->file)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--reference: only with --model-file (a built-in model has its own)");
    if (a->file) {
        int rc = load_model_file(a, use_cache, e);
        if (rc)
            return rc;
    } else {
        a->model = bcl_model_find(name);
    }
    if (!a->model) {
        char names[256] = "";
        for (size_t m = 0; m < bcl_model_count; m++) {
            strncat(names, m ? ", " : "", sizeof names - strlen(names) - 1);
            strncat(names, bcl_models[m]->name, sizeof names - strlen(names) - 1);
        }
        return bcl_fail(e, BCL_EXIT_INPUT, "--model: unknown model '%s': expected one of %s", name,
                        names);
    }
    memset(a->params, 0, sizeof a->params);
    bcl_model_param_defaults(a->model, a->params);
    for (unsigned g = 0; g < a->ngiven; g++) {
        unsigned i;
        for (i = 0; i < a->model->nparams; i++)
            if (strcmp(a->model->params[i].opt, a->given[g].opt) == 0)
                break;
        if (i == a->model->nparams) {
            char names[BCL_MAX_PARAMS * 34] = "";
            for (unsigned k = 0; k < a->model->nparams; k++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "",
                         a->model->params[k].opt);
            return bcl_fail(e, BCL_EXIT_INPUT, "parameter '%s' does not apply to model '%s': %s%s",
                            a->given[g].opt, a->model->name,
                            a->model->nparams ? "expected one of " : "it takes none", names);
        }
        int rc = bcl_model_param_parse(a->model, i, a->given[g].text, a->params, e);
        if (rc)
            return rc;
    }
    if (a->model->check)
        return a->model->check(a->params, e);
    return BCL_OK;
}

/* The error for what getopt_long returned as ':' (a value missing) or '?'
 * (an unknown option, or a flag given "=value"). */
static int option_error(const char *cmd, int c, char **argv, bcl_error *e)
{
    const char *arg = argv[optind - 1];
    if (c == ':')
        return bcl_fail(e, BCL_EXIT_INPUT, "option '%s' needs a value (see 'ballcl %s --help')",
                        arg, cmd);
    /* getopt sets optopt for a known flag given "=value". */
    if (optopt != 0 && strncmp(arg, "--", 2) == 0 && strchr(arg, '='))
        return bcl_fail(e, BCL_EXIT_INPUT, "option '%s' takes no value (see 'ballcl %s --help')",
                        arg, cmd);
    return bcl_fail(e, BCL_EXIT_INPUT, "unknown option '%s' (see 'ballcl %s --help')", arg, cmd);
}

void cli_options_init(cli_options *o, const char *cmd, void (*help)(void), unsigned takes,
                      const struct option *own, const char *own_short)
{
    bool run = takes & CLI_RUN;
    memset(o, 0, run ? sizeof(run_args) : sizeof *o);
    o->cmd = cmd;
    o->help_fn = help;
    o->takes = takes;
    /* The measuring commands' ranges; a run's are the table's (the
     * kernels index balls with a uint per buffer: more than 2^32 balls
     * would need 64 GiB of state anyway). */
    o->balls_max = run ? cli_option_find("balls")->max : (uint64_t)1 << 32;
    o->steps_min = run ? cli_option_find("steps")->min : 1;
    o->steps_max = run ? cli_option_find("steps")->max : (uint64_t)1 << 32;
    o->steps = run ? 1000 : 0;
    if (run)
        ((run_args *)o)->validate = true;
    o->seed_max = UINT64_MAX;
    o->balls[0] = 100000;
    o->nballs = 1;
    o->init = BCL_INIT_SEED;
    o->seed = 1;
    o->use_cache = true;
    bcl_error ignore = {0};
    bcl_local_parse("auto", &o->launch, &ignore);
    size_t n = 0;
    /* ':' first: a missing value is reported as such, not as unknown. */
    strcpy(o->shortopts, ":");
    for (size_t i = 0; i < NSHARED; i++) {
        if (!takes_option(cmd, takes, i))
            continue;
        o->longopts[n++] = shared[i].opt;
        strcat(o->shortopts, shared[i].letter);
    }
    for (size_t i = 0; own && own[i].name && n + 2 < CLI_MAX_OPTIONS; i++)
        o->longopts[n++] = own[i];
    o->longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    strncat(o->shortopts, own_short, sizeof o->shortopts - strlen(o->shortopts) - 3);
    strcat(o->shortopts, "h");
    if (takes & CLI_MODEL)
        add_param_options(o->longopts, n, CLI_MAX_OPTIONS);
    else
        o->longopts[n] = (struct option){0};
}

/* The long name of option value c, for o->seen. */
static const char *name_of(const cli_options *o, int c)
{
    for (size_t i = 0; o->longopts[i].name; i++)
        if (o->longopts[i].val == c)
            return o->longopts[i].name;
    return "?";
}

/* Handles shared option c; false when c is not one. */
static bool shared_option(cli_options *o, int c, const char *arg, int *rc, bcl_error *e)
{
    uint64_t v;
    run_args *r = (run_args *)o; /* run's own options (CLI_RUN) only */
    /* A letter of the command's own (devices' -v) is not the table's. */
    bool taken = c >= CLI_PARAM_OPT_BASE;
    for (size_t i = 0; i < NSHARED && !taken; i++)
        taken = shared[i].opt.val == c && takes_option(o->cmd, o->takes, i);
    if (!taken)
        return false;
    switch (c) {
    case 'd':
        o->device = arg;
        return true;
    case 'n':
        o->balls_given = true;
        if (o->takes & CLI_BALLS_LIST)
            *rc = cli_parse_u64_list(arg, "--balls", 1, o->balls_max, o->balls, CLI_MAX_BALLS,
                                     &o->nballs, e);
        else
            *rc = bcl_parse_u64(arg, "--balls", 1, o->balls_max, &o->balls[0], e);
        return true;
    case 's':
        o->steps_given = true;
        *rc = bcl_parse_u64(arg, "--steps", o->steps_min, o->steps_max, &o->steps, e);
        return true;
    case OPT_MODEL:
        o->model.model_name = arg;
        return true;
    case OPT_MODEL_FILE:
        o->model.file = arg;
        return true;
    case OPT_REFERENCE:
        o->model.reference = arg;
        return true;
    case OPT_PARAM:
        *rc = param_option(&o->model, arg, e);
        return true;
    case OPT_REFERENCE_LIMIT:
        *rc = number("reference-limit", arg, &v, e);
        o->model.reference_limit_s = (double)v;
        return true;
    case OPT_INIT:
        o->init_given = true;
        if (strcmp(arg, "seed") == 0)
            o->init = BCL_INIT_SEED;
        else if (strcmp(arg, "random") == 0)
            o->init = BCL_INIT_RANDOM;
        else
            *rc = bcl_fail(e, BCL_EXIT_INPUT, "--init: unknown '%s': expected seed or random", arg);
        return true;
    case OPT_SEED:
        *rc = bcl_parse_u64(arg, "--seed", 0, o->seed_max, &o->seed, e);
        return true;
    case OPT_LOCAL:
        o->local_given = true;
        *rc = bcl_local_parse(arg, &o->launch, e);
        return true;
    case OPT_NO_CACHE:
        o->use_cache = false;
        return true;
    case 'q':
        r->quiet = true;
        return true;
    case OPT_JSON:
        o->json = true;
        return true;
    case 'r':
        *rc = number("repeats", arg, &v, e);
        o->measure.repeats = (unsigned)v;
        return true;
    case OPT_REPEAT_MS:
        *rc = number("repeat-ms", arg, &v, e);
        o->measure.repeat_ms = (double)v;
        return true;
    case OPT_SPL:
        *rc = number("steps-per-launch", arg, &o->steps_per_launch, e);
        return true;
    case OPT_BUDGET:
        *rc = bcl_launch_budget_parse(arg, "--launch-budget-ms", &o->launch_budget_ms, e);
        return true;
    case OPT_INPUT:
    case OPT_OUTPUT:
    case OPT_SNAPSHOT: /* files, checked where they are opened */
        *(c == OPT_INPUT ? &r->input : c == OPT_OUTPUT ? &r->output : &r->snapshot) = arg;
        return true;
    case OPT_SNAPSHOT_SIZE:
        *rc = bcl_snapshot_size_parse(arg, "--snapshot-size", &r->snap_w, &r->snap_h, e);
        return true;
    case OPT_SYNC:
        if (strcmp(arg, "every") == 0)
            r->sync = BCL_SYNC_EVERY;
        else if (strcmp(arg, "end") == 0)
            r->sync = BCL_SYNC_END;
        else
            *rc = bcl_fail(e, BCL_EXIT_INPUT, "--sync: '%s': expected every or end", arg);
        return true;
    case OPT_VARIANT:
        r->variant = arg;
        if (!*arg)
            *rc = bcl_fail(e, BCL_EXIT_INPUT,
                           "--variant: empty value: expected base, or a variant the model's .cl "
                           "file defines");
        return true;
    case OPT_NO_VALIDATE:
        r->validate = false;
        return true;
    case OPT_TOL:
        *rc = number("tolerance-ulp", arg, &r->tol_ulp, e);
        return true;
    case 'v':
        r->verbose = true;
        return true;
    default:
        if (c >= CLI_PARAM_OPT_BASE && (o->takes & CLI_MODEL)) {
            *rc = model_param_seen(&o->model, o->longopts, c, arg, e);
            return true;
        }
        return false;
    }
}

int cli_options_next(cli_options *o, int argc, char **argv, int *rc, bcl_error *e)
{
    if (!o->started) {
        opterr = 0;
        optind = 1;
        o->started = true;
    }
    *rc = BCL_OK;
    int c;
    while ((c = getopt_long(argc, argv, o->shortopts, o->longopts, NULL)) != -1) {
        if (c == ':' || c == '?') {
            *rc = option_error(o->cmd, c, argv, e);
            return -1;
        }
        if (c == 'h') {
            o->help = true;
            if (o->help_fn)
                o->help_fn();
            return -1;
        }
        if (o->nseen < CLI_MAX_OPTIONS)
            o->seen[o->nseen++] = name_of(o, c);
        if (!shared_option(o, c, optarg, rc, e))
            return c;
        if (*rc)
            return -1;
    }
    return -1;
}

int cli_options_only(cli_options *o, const char *cmd, void (*help)(void), unsigned takes, int argc,
                     char **argv, bcl_error *e)
{
    cli_options_init(o, cmd, help, takes, NULL, "");
    int rc = BCL_OK;
    while (rc == BCL_OK && cli_options_next(o, argc, argv, &rc, e) != -1)
        ;
    return rc;
}

/* The steps of a run (bcl_sim_progress) and of its validation
 * (bcl_validate_progress; arg: what the line says first), a line at most
 * every 2 s, the first after 2 s; each device of a group reports, one line
 * at a time. */
static void run_progress(void *arg, uint64_t done, uint64_t steps)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static bool shown;
    char line[96];
    snprintf(line, sizeof line, "%sstep %llu of %llu (%.0f%%)", (const char *)arg,
             (unsigned long long)done, (unsigned long long)steps,
             100.0 * (double)done / (double)steps);
    pthread_mutex_lock(&lock);
    if (done < steps)
        cli_progress("run", 0, 0, line);
    else if (shown)
        cli_progress_end();
    shown = done < steps;
    pthread_mutex_unlock(&lock);
}

int cli_options_finish(cli_options *o, int argc, char **argv, bcl_error *e)
{
    if (o->help)
        return -1;
    /* run: progress unless -q, from rank 0 alone under MPI. */
    bool quiet = !(o->takes & CLI_RUN) || ((run_args *)o)->quiet;
#ifdef BALLCL_HAVE_MPI
    quiet = quiet || (ranks_active() && ranks_rank() != 0);
#endif
    if (!quiet) {
        double every_ms = 1000 * cli_progress_paced(2);
        bcl_sim_progress(run_progress, (void *)"", every_ms);
        bcl_validate_progress(run_progress, (void *)"validating: ", every_ms);
    }
    if (optind < argc)
        return bcl_fail(e, BCL_EXIT_INPUT, "unexpected argument '%s' (see 'ballcl %s --help'%s)",
                        argv[optind], o->cmd, o->stray_hint ? o->stray_hint : "");
    return (o->takes & CLI_MODEL) ? model_resolve(&o->model, o->use_cache, e) : BCL_OK;
}

int cli_model_needs_reference(const cli_options *o, const char *what, bcl_error *e)
{
    if (!o->model.model || bcl_model_has_reference(o->model.model))
        return BCL_OK;
    return bcl_fail(e, BCL_EXIT_INPUT,
                    "%s --model-file needs --reference FILE.c: %s is validated before it is timed",
                    o->cmd, what);
}
