/*
 * ballcl survey (docs/SURVEY.md): what each device is and what it does, measured,
 * as a table on stdout and a versioned JSON file (docs/SURVEY.md); and
 * 'ballcl survey compare' to put the devices of several files side by side.
 * The measuring is the library's (src/survey/survey.c); this file parses options,
 * picks devices, prints and writes.
 */
#include "cmd_survey_db.h"
#include "options.h"
#include "ranks.h"
#include "survey_report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct survey_args {
    const char *device; /* NULL: every device */
    const char *json;   /* file, "-" for stdout, NULL for none */
    const char *db;     /* --db, NULL for the default database */
    bool no_db;         /* --no-db */
    bool quick;
    const char *label; /* --label, NULL: the host name */
    char host[256];
    bcl_survey_opts o;
} survey_args;

static void help(void)
{
    printf("usage: ballcl survey [-d SEL] [--json FILE] [--quick] [options]\n"
           "       ballcl survey compare A.json [B.json ...]\n"
           "       ballcl survey import [--db FILE] FILE.json ...\n"
           "       ballcl survey list [--db FILE] [devices|surveys|drivers]\n"
           "       ballcl survey report --html OUT.html [--db FILE]\n\n"
           "Surveys every OpenCL device (or the one -d selects): identity, limits and\n"
           "measured figures: build time cold and from the binary cache, launch latency\n"
           "(queued to start) and round trip (enqueue + finish), copy bandwidth, host to\n"
           "device and device to host transfer bandwidth (pinned host memory where the\n"
           "platform gives it, else pageable; the JSON names the method), and for\n"
           "every model the ball-step time at a small and a large N, the best local size\n"
           "and the cost of local = 1, and fused throughput. Every ball-step figure is\n"
           "validated bit for bit against the model's C reference before it is timed.\n"
           "A figure that fails is null, with its error; the survey goes on. Figures above\n"
           "a plausible peak are flagged. Prints a table (Markdown) on stdout.\n\n"
           "  -d, --device SEL       survey this device only (as for 'ballcl run';\n"
           "                         BALLCL_DEVICE is not used: the default is every device)\n"
           "  --json FILE            also write the survey as JSON (schema %s,\n"
           "                         docs/SURVEY.md) to FILE, atomically; '-' prints the\n"
           "                         JSON on stdout instead of the table\n"
           "  --db FILE              record the survey in this survey database (default:\n"
           "                         $BALLCL_SURVEY_DB, else $XDG_DATA_HOME/ballcl/surveys.db,\n"
           "                         else ~/.local/share/ballcl/surveys.db; under mpirun\n"
           "                         rank 0 records); checked before the survey starts\n"
           "  --no-db                do not record the survey in a database\n"
           "  --label NAME           the host recorded with each device (default: the host\n"
           "                         name; '' records none)\n"
           "  --quick                small N and few repeats: seconds, for tests; not\n"
           "                         recorded in a database unless --db is given\n"
           "  --small N              balls of the small figure (default 1024)\n"
           "  --large N              balls of the large, copy and fused figures (default\n"
           "                         by device type: 16777216 on a GPU, 4194304 on a CPU)\n"
           "  --sweep N              balls of the local size sweep (default 100000)\n"
           "  -r, --repeats R        timed repeats per figure (default 7)\n"
           "  --repeat-ms MS         target length of one repeat (default 100)\n"
           "  --seed S               PRNG seed of the random initial states (default 1)\n"
           "  --model-file FILE.cl   also survey your own model, at its defaults, into\n"
           "                         each device's \"model_file\" (keyed by its digest),\n"
           "                         apart from the built-in models: the database and\n"
           "                         its pages leave it out; needs --reference FILE.c\n"
           "  --reference FILE.c     the model file's C reference\n"
           "  -h, --help             this help\n\n"
           "'compare' reads survey files (any number of devices each) and prints one\n"
           "Markdown table, one column per device. Files of another schema version, or\n"
           "that are not valid JSON or lack a required key, are refused (exit 2).\n"
           "'import', 'list' and 'report' work on the survey database; each has --help.\n\n"
           "The drivers' own program caches are turned off for the process (PoCL:\n"
           "POCL_KERNEL_CACHE=0, NVIDIA: CUDA_CACHE_DISABLE=1) unless you set them, so\n"
           "that the cold build is cold. Progress goes to stderr: a line rewritten in place\n"
           "on a terminal, else a line every %u s (BALLCL_PROGRESS_SECONDS sets it).\n"
           "Exit status: 0 every figure measured, 1 a figure failed validation, 2 usage or\n"
           "input error, 3 OpenCL error or a figure that could not be measured (the\n"
           "survey is still printed and written, with that figure null).\n",
           BCL_SURVEY_SCHEMA, CLI_PROGRESS_SECONDS);
}

enum {
    OPT_JSON = CLI_OWN_OPT_BASE,
    OPT_QUICK,
    OPT_SMALL,
    OPT_LARGE,
    OPT_SWEEP,
    OPT_DB,
    OPT_NO_DB,
    OPT_LABEL
};

static int parse_args(int argc, char **argv, survey_args *a, bcl_error *e)
{
    static const struct option own[] = {
        {"json", required_argument, NULL, OPT_JSON},
        {"quick", no_argument, NULL, OPT_QUICK},
        {"small", required_argument, NULL, OPT_SMALL},
        {"large", required_argument, NULL, OPT_LARGE},
        {"sweep", required_argument, NULL, OPT_SWEEP},
        {"db", required_argument, NULL, OPT_DB},
        {"no-db", no_argument, NULL, OPT_NO_DB},
        {"label", required_argument, NULL, OPT_LABEL},
        {0},
    };
    memset(a, 0, sizeof *a);
    /* --quick changes the defaults, whatever its place among the options:
     * a first, silent pass of the same parser finds it (not the value of
     * another option); the second reports what is wrong. */
    cli_options opt;
    int c, rc = BCL_OK;
    cli_options_init(&opt, "survey", NULL, CLI_DEVICE | CLI_SEED | CLI_MEASURE | CLI_MODEL, own,
                     "");
    while ((c = cli_options_next(&opt, argc, argv, &rc, e)) != -1)
        a->quick = a->quick || c == OPT_QUICK;
    bcl_error_clear(e);
    rc = BCL_OK;
    bcl_survey_opts_default(&a->o, a->quick);
    cli_options_init(&opt, "survey", help, CLI_DEVICE | CLI_SEED | CLI_MEASURE | CLI_MODEL, own,
                     "");
    /* The document records the seed as a JSON integer. */
    opt.seed_max = INT64_MAX;
    opt.seed = a->o.seed;
    opt.measure = a->o.measure;
    opt.stray_hint = "; to compare files: 'ballcl survey compare A.json B.json'";
    uint64_t v;
    while (rc == BCL_OK && (c = cli_options_next(&opt, argc, argv, &rc, e)) != -1) {
        switch (c) {
        case OPT_JSON:
        case OPT_DB:
        case OPT_LABEL:
            *(c == OPT_JSON ? &a->json : c == OPT_DB ? &a->db : &a->label) = optarg;
            break;
        case OPT_NO_DB:
            a->no_db = true;
            break;
        case OPT_SMALL:
        case OPT_LARGE:
        case OPT_SWEEP: {
            const char *what = c == OPT_SMALL ? "--small" : c == OPT_LARGE ? "--large" : "--sweep";
            rc = bcl_parse_u64(optarg, what, 1, (uint64_t)1 << 32, &v, e);
            size_t *to = c == OPT_SMALL   ? &a->o.small_n
                         : c == OPT_LARGE ? &a->o.large_n
                                          : &a->o.sweep_n;
            *to = (size_t)v;
            break;
        }
        }
    }
    if (rc || (rc = cli_options_finish(&opt, argc, argv, e)))
        return rc;
    /* Every built-in model is surveyed at its defaults, and a model file
     * at its own (#pragma ballcl param): what a survey holds is comparable
     * between devices. */
    if (opt.model.model_name || opt.model.ngiven)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "survey: --%s: the survey measures every model at its defaults (a model "
                        "file at its #pragma ballcl param values); --model-file FILE.cl adds "
                        "your own",
                        opt.model.model_name ? "model" : opt.model.given[0].opt);
    if (opt.model.file && (rc = cli_model_needs_reference(&opt, "every figure", e)))
        return rc;
    a->o.model_file = opt.model.file ? opt.model.model : NULL;
    if (a->db && a->no_db)
        return bcl_fail(e, BCL_EXIT_INPUT, "survey: --db and --no-db exclude each other");
    /* A quick survey's figures are not worth keeping: recorded only when
     * asked for by name. */
    if (a->quick && !a->db)
        a->no_db = true;
    if (a->label && strlen(a->label) >= sizeof a->host)
        return bcl_fail(e, BCL_EXIT_INPUT, "survey: --label '%.40s...': longer than %zu bytes",
                        a->label, sizeof a->host - 1);
    if (a->label)
        snprintf(a->host, sizeof a->host, "%s", a->label);
    else if (gethostname(a->host, sizeof a->host) != 0)
        a->host[0] = '\0';
    a->host[sizeof a->host - 1] = '\0';
    a->o.host = a->host;
    a->device = opt.device;
    a->o.seed = opt.seed;
    a->o.measure = opt.measure;
    return BCL_OK;
}

/* "ballcl survey -d cpu --json s.json": recorded in the document. */
static char *command_line(int argc, char **argv)
{
    size_t len = strlen("ballcl") + 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    for (int i = 0, o = s ? snprintf(s, len, "ballcl") : 0; s && i < argc; i++)
        o += snprintf(s + o, len - (size_t)o, " %s", argv[i]);
    return s;
}

/* A line on stderr for a device whose survey is incomplete, and one for a
 * device with flagged figures. */
static void report_device(const json_t *dev)
{
    const json_t *errors = json_object_get(dev, "errors");
    size_t n = json_object_size(errors), nflags = json_array_size(json_object_get(dev, "flags"));
    const char *name = json_string_value(survey_at(dev, "identity.name"));
    if (n) {
        void *it = json_object_iter((json_t *)errors);
        /* Driver strings: escaped by cli_warn's rule (bcl_escape). */
        char line[2048], shown[2048];
        snprintf(line, sizeof line,
                 "survey of '%s': %zu figure%s not measured (null in the survey), first %s: %s",
                 name ? name : "?", n, n == 1 ? "" : "s", json_object_iter_key(it),
                 json_string_value(json_object_iter_value(it)));
        bcl_escape(line, shown, sizeof shown);
        fprintf(stderr, "ballcl: %s\n", shown);
    }
    if (nflags)
        cli_warn("%zu figure%s of '%s' above a plausible peak (flagged in the survey)", nflags,
                 nflags == 1 ? "" : "s", name);
}

/* A figure of a model file's object as text: "n/a" when null. */
static const char *rate_text(const json_t *v, char *out, size_t size)
{
    if (json_is_number(v))
        snprintf(out, size, "%.3g", json_number_value(v));
    else
        snprintf(out, size, "n/a");
    return out;
}

/* Under the table (which holds the built-in models only): each device's
 * figures of a model file, said to be kept apart. */
static void print_model_file(const json_t *devices)
{
    size_t i;
    const json_t *dev;
    json_array_foreach(devices, i, dev)
    {
        const json_t *mf = json_object_get(dev, "model_file");
        if (!json_is_object(mf))
            continue;
        char sm[24], lg[24], fu[24];
        printf("\nmodel file %s (%s) on '%s', ball-steps/s: small %s, large %s, fused %s; in the "
               "survey's JSON under model_file, never in the database\n",
               cli_shown(json_string_value(json_object_get(mf, "path"))),
               json_string_value(json_object_get(mf, "key")),
               cli_shown(json_string_value(survey_at(dev, "identity.name"))),
               rate_text(survey_at(mf, "small.ball_steps_per_s"), sm, sizeof sm),
               rate_text(survey_at(mf, "large.ball_steps_per_s"), lg, sizeof lg),
               rate_text(json_object_get(mf, "fused_ball_steps_per_s"), fu, sizeof fu));
    }
}

/* A document the library produced or checked: parsing fails only when
 * out of memory. */
static json_t *parse_json(const char *text, const char *what, bcl_error *e)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    if (!doc)
        bcl_fail(e, BCL_EXIT_RUNTIME, "%s: cannot parse its JSON: %s", what, jerr.text);
    return doc;
}

/* Writes the survey into the output prepared before the survey ran (when
 * outs has one) and records it in the database (when a records): the text
 * a survey file holds (six significant digits, indented, with a final
 * newline), so that importing that file later finds it there. */
static int save(bcl_outputs *outs, const survey_args *a, bool records, const json_t *doc,
                bcl_error *e)
{
    if (!outs->count && !records)
        return BCL_OK;
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    if (!text)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot encode the survey as JSON");
    char where[4200];
    size_t len = strlen(text);
    text[len] = '\n'; /* json_dumps leaves room for the NUL we overwrite */
    int rc = outs->count ? bcl_outputs_write(outs, 0, text, len + 1, e) : BCL_OK;
    if (rc == BCL_OK && outs->count)
        rc = bcl_outputs_commit(outs, e);
    text[len] = '\0';
    if (rc == BCL_OK && records &&
        (rc = survey_db_record(a->db, false, text, where, sizeof where, e)) == BCL_OK)
        fprintf(stderr, "ballcl: survey %s\n", where);
    free(text);
    return rc;
}

static int cmd_survey_devices(int argc, char **argv)
{
    bcl_error e = {0};
    survey_args a;
    int rc = parse_args(argc, argv, &a, &e);
    if (rc)
        return rc < 0 ? 0 : cli_report(&e);
    bool json_stdout = a.json && strcmp(a.json, "-") == 0;
    /* Checked, with its temporary file, before the long survey. */
    bcl_outputs outs = {0};
    if (a.json && !json_stdout && (rc = bcl_outputs_add(&outs, a.json, "--json", &e)))
        return cli_report(&e);
    /* The database too, by the process that will record (rank 0). */
    bool records = !a.no_db;
#ifdef BALLCL_HAVE_MPI
    records = records && (!ranks_active() || ranks_rank() == 0);
#endif
    int db_rc = records ? survey_db_record(a.db, true, NULL, NULL, 0, &e) : BCL_OK;
#ifdef BALLCL_HAVE_MPI
    /* Rank 0's outcome is every rank's, printed once by ranks_verdict. */
    if (ranks_active() && (db_rc = ranks_verdict(ranks_share(db_rc, &e), &e)))
        bcl_error_clear(&e);
#endif
    if (db_rc) {
        bcl_outputs_discard(&outs);
        return e.code ? cli_report(&e) : db_rc;
    }
    /* Before any OpenCL call: drivers read these once, at start. */
    char caches[256];
    bcl_survey_driver_caches_off(caches, sizeof caches);
    a.o.driver_caches = caches;
    a.o.progress = cli_progress;
    a.o.progress_arg = "survey";
    char *command = command_line(argc, argv);
    a.o.command = command;

    bcl_device_list list = {0};
    json_t *doc = NULL;
    int status = BCL_OK;
    size_t first = 0, count = 0;
    bcl_device_info *mine = NULL; /* under mpirun: this rank's devices */
    const bcl_device_info *devs = NULL;
#ifdef BALLCL_HAVE_MPI
    if (ranks_active()) {
        /* Each rank surveys its share of its node's devices (every device
         * once without -d); rank 0 gathers them into one document. */
        size_t idx[64];
        rc = bcl_devices_enumerate(&list, &e);
        if (rc == BCL_OK)
            rc = ranks_node_devices(&list, a.device, !a.device, idx, 64, &count, &e);
        if (rc == BCL_OK && !(mine = calloc(count + 1, sizeof *mine)))
            rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory");
        for (size_t i = 0; rc == BCL_OK && i < count; i++)
            mine[i] = list.dev[idx[i]];
        if ((rc = ranks_verdict(rc, &e))) {
            e.code = 0; /* printed once, by rank 0 */
            goto out;
        }
        devs = mine;
    }
#endif
    if (!devs && a.device) {
        if ((rc = cli_pick_device(a.device, &list, &first, &e)))
            goto out;
        count = 1;
    } else if (!devs) {
        if ((rc = cli_enumerate(&list, &e)))
            goto out;
        count = list.count;
    }
    if (!devs)
        devs = &list.dev[first];
    char *text = NULL;
#ifdef BALLCL_HAVE_MPI
    /* The ranks of a node take turns: a survey times its device, and two
     * at once on one host would disturb each other's figures (and PoCL's
     * cold builds, with its cache off, share one folder). */
    for (int turn = 0; ranks_active() && turn < ranks_node_size(); turn++) {
        if (turn == ranks_node_rank())
            rc = bcl_survey_run(devs, count, &a.o, &text, &status, &e);
        ranks_node_barrier();
    }
    if (!ranks_active())
#endif
        rc = bcl_survey_run(devs, count, &a.o, &text, &status, &e);
    if (rc == BCL_OK && !(doc = parse_json(text, "the survey", &e)))
        rc = e.code;
#ifdef BALLCL_HAVE_MPI
    if (ranks_active()) {
        /* Every rank's document to rank 0, its devices appended in rank
         * order; one status for all. */
        char **all = ranks_gather_text(rc == BCL_OK ? text : "");
        json_t *into = json_object_get(doc, "devices");
        for (int r = 1; all && r < ranks_size(); r++) {
            json_t *other = rc == BCL_OK && all[r][0] ? json_loads(all[r], 0, NULL) : NULL;
            json_array_extend(into, json_object_get(other, "devices"));
            json_decref(other);
            free(all[r]);
        }
        if (all)
            free(all[0]);
        free(all);
        count = json_array_size(into);
        status = ranks_worst(rc ? rc : status);
        if ((rc = ranks_verdict(rc, &e))) {
            e.code = 0;
            free(text);
            goto out;
        }
        if (ranks_rank() != 0) {
            free(text);
            rc = status;
            goto out;
        }
    }
#endif
    free(text);
    if (rc)
        goto out;
    json_t *devices = json_object_get(doc, "devices");
    cli_progress_end();
    /* What was printed is what is written: the table comes from the JSON. */
    if (json_stdout) {
        cli_print_json(doc);
    } else {
        printf("survey: %zu device%s, %s, ballcl %s\n\n", count, count == 1 ? "" : "s",
               json_string_value(json_object_get(doc, "date")), BALLCL_VERSION);
        json_t *docs[1] = {doc};
        if (survey_print_table(docs, NULL, 1) != 0) {
            rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory");
            goto out;
        }
        print_model_file(devices);
    }
    if ((rc = save(&outs, &a, records, doc, &e)))
        goto out;
    size_t i;
    json_t *dev;
    json_array_foreach(devices, i, dev) report_device(dev);
    rc = status;
out:
    bcl_outputs_discard(&outs);
    cli_progress_end();
    if (rc && e.code)
        cli_report(&e);
    bcl_error_clear(&e);
    json_decref(doc);
    bcl_devices_free(&list);
    free(mine);
    free(command);
    return rc;
}

static void compare_help(void)
{
    printf("usage: ballcl survey compare [--json] A.json [B.json ...]\n\n"
           "Reads survey files written by 'ballcl survey --json' (schemas %s), each\n"
           "with one or more devices, and prints one Markdown table: one column per device,\n"
           "headed by the device and the file name, one row per figure; '-' where a file\n"
           "lacks a figure (an older schema, a model it did not survey), 'n/a' where the\n"
           "survey could not measure it. A file that is not valid JSON, is of another\n"
           "schema or lacks a required key is refused with one line naming it (exit 2),\n"
           "and nothing is printed. '--' before the files ends the options.\n\n"
           "  --json       every device of every file, with its file, as JSON (first)\n"
           "  -h, --help   this help\n",
           BCL_SURVEY_SCHEMAS_READ);
}

static int cmd_survey_compare(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            compare_help();
            return 0;
        }
    }
    /* Files and --json; "--" ends options for a file named like one. */
    bool json = false;
    int first = 1;
    for (; first < argc && strcmp(argv[first], "--json") == 0; first++)
        json = true;
    if (first < argc && strcmp(argv[first], "--") == 0)
        first++;
    else
        for (int i = first; i < argc; i++)
            if (argv[i][0] == '-' && argv[i][1])
                return cli_usage_error("survey compare", "unknown option '%s'%s", argv[i],
                                       strcmp(argv[i], "--json") == 0 ? ": put it first" : "");
    int n = argc - first;
    if (n < 1)
        return cli_usage_error("survey compare", "no survey file given");
    bcl_error e = {0};
    json_t **docs = calloc((size_t)n, sizeof *docs);
    const char **labels = calloc((size_t)n, sizeof *labels);
    int rc = BCL_OK;
    if (!docs || !labels)
        rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory");
    for (int i = 0; i < n && rc == BCL_OK; i++) {
        char *text = NULL;
        rc = bcl_survey_load(argv[first + i], &text, &e);
        if (rc == BCL_OK && !(docs[i] = parse_json(text, argv[first + i], &e)))
            rc = e.code;
        free(text);
        const char *slash = strrchr(argv[first + i], '/');
        labels[i] = slash ? slash + 1 : argv[first + i];
    }
    if (rc == BCL_OK && json) {
        /* Every device of every file, in order, with its file's name. */
        json_t *all = json_array();
        for (int i = 0; i < n; i++) {
            size_t k;
            json_t *dev;
            json_array_foreach(json_object_get(docs[i], "devices"), k, dev) json_array_append_new(
                all, json_pack("{s:s, s:O}", "file", labels[i], "device", dev));
        }
        json_t *j = json_pack("{s:o}", "devices", all);
        cli_print_json(j);
        json_decref(j);
    } else if (rc == BCL_OK && survey_print_table(docs, labels, (size_t)n) != 0)
        rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory");
    if (rc)
        cli_report(&e);
    for (int i = 0; docs && i < n; i++)
        json_decref(docs[i]);
    free(docs);
    free(labels);
    bcl_error_clear(&e);
    return rc;
}

/* The subcommands; any other first argument is a survey of devices. */
static const struct {
    const char *name;
    int (*fn)(int, char **);
} subcommands[] = {
    {"check", cmd_survey_check}, {"compare", cmd_survey_compare}, {"import", cmd_survey_import},
    {"list", cmd_survey_list},   {"report", cmd_survey_report},
};

int cmd_survey(int argc, char **argv)
{
    for (size_t i = 0; argc >= 2 && i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].fn(argc - 1, argv + 1);
    return cmd_survey_devices(argc, argv);
}
