/*
 * ballcl tune: sweep launch configurations on one device (docs/BENCHMARK.md), show
 * every candidate, and store the winners for 'run --local tuned', 'run's
 * default steps per launch and bench's local=tuned and fused rows.
 */
#include "options.h"
#include "models/models.h"

#include <string.h>

#define MAX_KS 16

typedef struct tune_args {
    cli_options o; /* the shared options */
    unsigned ks[MAX_KS];
    size_t nks;
    bool show;               /* print the stored record, measure nothing */
    const char *sweep_given; /* the first option that only a sweep uses */
} tune_args;

static void help(void)
{
    printf("usage: ballcl tune [options]\n"
           "       ballcl tune --show [-d SEL] [--model M | --model-file F.cl] [--json]\n\n"
           "Measures launch configurations of the model's kernels on one device and stores\n"
           "the fastest per device and model in the cache folder, where 'run --local tuned',\n"
           "'run' (steps per launch) and 'bench' find it. Sweeps, each candidate validated\n"
           "bit for bit before it is timed (median of repeats, device time from profiling\n"
           "events, warm-up excluded):\n"
           "  1. one-step kernel: every variant x local sizes (the preferred multiple times\n"
           "     1, 2, 4, ... up to the kernel's limit) and the driver's choice\n"
           "  2. k-step kernel at K = %u (%u on a CPU): the same\n"
           "  3. K for the best of 2, every K timed side by side with the untuned default\n"
           "     plan of a plain run (K from the launch budget): the smallest K within 3%%\n"
           "     of the fastest wins, unless the default is no slower: then the default's\n"
           "     configuration is stored, and the report says how close it was\n"
           "A model file (--model-file) needs --reference FILE.c; its record is keyed by\n"
           "its text's digest, so that an edited file is not run with the old one's.\n\n"
           "  -d, --device SEL       device (as for 'ballcl run'); a list or all tunes each\n"
           "                         device in turn, alone\n"
           "  -n, --balls N          balls to tune with (default 100000)\n",
           BCL_DEFAULT_K, BCL_DEFAULT_K_CPU);
    cli_print_model_help(stdout);
    cli_print_option_help("init seed no-cache");
    printf("  -r, --repeats R        timed repeats per candidate (default 5)\n"
           "  --repeat-ms MS         target length of one repeat (default 40)\n"
           "  -s, --steps S          fixed steps per repeat instead of --repeat-ms\n"
           "  --k K[,K...]           steps per launch for sweep 3 (default 4,16,64,100,256,1024)\n"
           "  --launch-budget-ms MS  the launch budget of the default plan timed beside\n"
           "                         sweep 3 (default 50; $BALLCL_LAUNCH_BUDGET_MS)\n"
           "  --json                 the stored record (with its path) as JSON on stdout\n"
           "                         instead of the table\n"
           "  --show                 print the record stored for the device and model\n"
           "                         without measuring anything (with --json: the file)\n"
           "  -h, --help             this help\n\n"
           "Progress goes to stderr: a line rewritten in place on a terminal, else a line\n"
           "every %u s (BALLCL_PROGRESS_SECONDS sets the interval).\n"
           "Exit status: 0 stored (or shown), 1 no configuration validated, 2 usage or\n"
           "input error (--show: nothing stored), 3 OpenCL error.\n",
           CLI_PROGRESS_SECONDS);
}

enum { OPT_K = CLI_OWN_OPT_BASE, OPT_SHOW };

static int parse_args(int argc, char **argv, tune_args *a, bcl_error *e)
{
    static const struct option own[] = {
        {"k", required_argument, NULL, OPT_K},
        {"show", no_argument, NULL, OPT_SHOW},
        {0},
    };
    memset(a, 0, sizeof *a);
    cli_options_init(&a->o, "tune", help, CLI_MEASURING | CLI_BALLS, own, "");
    a->o.measure.repeats = 5;
    a->o.measure.repeat_ms = 40;
    int c, rc = BCL_OK;
    uint64_t list[MAX_KS];
    while (rc == BCL_OK && (c = cli_options_next(&a->o, argc, argv, &rc, e)) != -1) {
        switch (c) {
        case OPT_K:
            rc = cli_parse_u64_list(optarg, "--k", 1, 1u << 24, list, MAX_KS, &a->nks, e);
            for (size_t i = 0; i < a->nks; i++)
                a->ks[i] = (unsigned)list[i];
            break;
        case OPT_SHOW:
            a->show = true;
            break;
        }
    }
    if (rc || (rc = cli_options_finish(&a->o, argc, argv, e)) ||
        (!a->show && (rc = cli_model_needs_reference(&a->o, "every candidate", e))))
        return rc;
    a->o.measure.steps = a->o.steps;
    /* Options that only a sweep uses, named for --show's message. */
    static const char *const not_sweep[] = {"device",    "model",           "model-file", "param",
                                            "reference", "reference-limit", "json",       "show"};
    for (size_t i = 0; i < a->o.nseen && !a->sweep_given; i++) {
        bool other = false;
        for (size_t j = 0; j < sizeof not_sweep / sizeof not_sweep[0]; j++)
            other = other || strcmp(a->o.seen[i], not_sweep[j]) == 0;
        for (unsigned m = 0; m < bcl_model_count && !other; m++)
            for (unsigned p = 0; p < bcl_models[m]->nparams; p++)
                other = other || strcmp(a->o.seen[i], bcl_models[m]->params[p].opt) == 0;
        if (!other)
            a->sweep_given = a->o.seen[i];
    }
    if (a->show && a->sweep_given)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--show prints the stored record and measures nothing: --%s does not go "
                        "with it",
                        a->sweep_given);
    return BCL_OK;
}

static bool is_winner(const bcl_tuned_entry *t, const bcl_tune_candidate *c)
{
    return t->found && strcmp(t->variant, c->variant) == 0 && t->local == c->local &&
           t->steps_per_launch == c->steps_per_launch;
}

/* A tuned entry after its label (width columns), or the text none. */
static void print_entry(int width, const char *what, const bcl_tuned_entry *t, const char *none)
{
    char text[96];
    if (t->found)
        printf("%-*s %s: %.3f us/step\n", width, what,
               cli_shown(cli_tuned_text(t, text, sizeof text)), t->us_per_step);
    else
        printf("%-*s %s\n", width, what, none);
}

static void print_table(const tune_args *a, const bcl_device_info *d, const bcl_tune_result *r,
                        const char *path)
{
    printf("tune: model %s, N = %llu, device '%s' (%s, %u:%u)\n", bcl_model_key(a->o.model.model),
           (unsigned long long)a->o.balls[0], d->name, d->platform_name, d->platform_index,
           d->device_index);
    const char *clock_note = bcl_profiling_unusable(d);
    printf("%u repeats per candidate; us/step: median (min..max) of %s time\n",
           a->o.measure.repeats, clock_note ? "host clock" : "device");
    if (clock_note)
        printf("clock: host: this device's profiling failed its check: %s\n", clock_note);
    printf("\n");
    printf("  %-9s %-8s %7s %6s  %-34s %s\n", "kernel", "variant", "local", "K",
           "us/step median (min..max)", "validated");
    for (size_t i = 0; i < r->count; i++) {
        const bcl_tune_candidate *c = &r->cand[i];
        char loc[24], t[64];
        cli_local_text(c->local, loc, sizeof loc);
        if (c->validated)
            snprintf(t, sizeof t, "%.3f (%.3f..%.3f)", c->m.device_us.median, c->m.device_us.min,
                     c->m.device_us.max);
        else
            snprintf(t, sizeof t, "-");
        bool win = is_winner(c->fused ? &r->best.fused : &r->best.single, c);
        printf("%c %-9s %-8s %7s %6u  %-34s %s\n", win ? '*' : ' ',
               c->fused ? "k-step" : "one-step", c->variant[0] ? c->variant : "base", loc,
               c->steps_per_launch, t, c->validated ? "yes" : "FAILED");
    }
    printf("\n");
    const bcl_tuned_entry *s = &r->best.single, *f = &r->best.fused;
    char loc[24];
    if (s->found)
        printf("best one-step: %s, local %s: %.3f us/step (local=auto: %.3f us/step, %.2fx)\n",
               s->variant[0] ? s->variant : "base", cli_local_text(s->local, loc, sizeof loc),
               s->us_per_step, r->auto_us, s->us_per_step > 0 ? r->auto_us / s->us_per_step : 0);
    else
        printf("best one-step: none validated\n");
    print_entry(14, "best k-step:", f, "none validated");
    /* The default is compared with the K values timed beside it (the last
     * sweep), not with rows timed apart, which may show a faster figure. */
    if (r->default_us > 0 && r->default_kept && r->default_within <= 0)
        printf("the default is the fastest of the K values timed beside it (%.3f us/step): its "
               "configuration is stored\n",
               r->default_us);
    else if (r->default_us > 0 && r->default_kept)
        printf("the default is within %.1f%% of the fastest K timed beside it: its configuration "
               "is stored\n",
               r->default_within * 100);
    else if (r->default_us > 0)
        printf("the default (K from the launch budget) is %.1f%% slower than the best found: "
               "%.3f us/step\n",
               r->default_within * 100, r->default_us);
    if (path)
        printf("stored in %s\n", path);
}

/* The tuned file at path, with its path added, for --json; NULL with e
 * filled when it is no JSON (stored: this process has just written it). */
static json_t *record_json(const char *path, bool stored, bcl_error *e)
{
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    if (j)
        json_object_set_new(j, "path", json_string(path));
    else if (stored)
        bcl_fail(e, BCL_EXIT_RUNTIME, "cannot read back '%s': %s", path, jerr.text);
    else
        bcl_fail(e, BCL_EXIT_INPUT, "tuned file '%s' is not valid JSON: %s", path, jerr.text);
    return j;
}

/* tune --show: the stored record, as text or as the file itself. */
static int show(const tune_args *a, const bcl_device_info *d, bcl_error *e)
{
    char path[4096];
    bcl_tuned t;
    int rc = bcl_tuned_path(d, a->o.model.model, path, sizeof path, e);
    if (rc == BCL_OK)
        rc = bcl_tuned_load(d, a->o.model.model, &t, e);
    if (rc)
        return rc;
    const cli_model_args *ma = &a->o.model;
    /* A model file's record is its text's (bcl_model_key): an edited
     * file has none until tuned again. */
    if (!t.single.found && !t.fused.found)
        return bcl_fail(
            e, BCL_EXIT_INPUT,
            "nothing is tuned for model '%s' on '%s' (%u:%u): 'ballcl tune -d %u:%u%s%s%s' "
            "measures and stores it",
            bcl_model_key(ma->model), d->name, d->platform_index, d->device_index,
            d->platform_index, d->device_index,
            ma->file         ? " --model-file "
            : ma->model_name ? " --model "
                             : "",
            ma->file         ? ma->file
            : ma->model_name ? ma->model_name
                             : "",
            ma->file ? " --reference FILE.c" : "");
    if (a->o.json) {
        json_t *j = record_json(path, false, e);
        if (j)
            cli_print_json(j);
        json_decref(j);
        return j ? BCL_OK : e->code;
    }
    printf("tuned: model %s, device '%s' (%s, %u:%u)\n", bcl_model_key(a->o.model.model), d->name,
           d->platform_name, d->platform_index, d->device_index);
    printf("%-12s %s\n", "file", path);
    printf("%-12s %s, N = %llu\n", "tuned", t.date, (unsigned long long)t.balls);
    print_entry(12, "one-step", &t.single, "none stored");
    print_entry(12, "k-step", &t.fused, "none stored");
    printf("A plain 'ballcl run' takes the k-step entry whole (K, variant, local size);\n"
           "'ballcl tune --show --json' prints the file with every candidate measured.\n");
    return BCL_OK;
}

/* Tunes d and stores its record; the JSON of the stored file goes to
 * *json (with --json), else the table is printed. */
static int tune_device(const tune_args *a, const bcl_device_info *d, json_t **json, bcl_error *e)
{
    bcl_context *ctx = NULL;
    bcl_tune_result r = {0};
    char path[4096] = "";
    bcl_outputs outs = {0};
    int rc;
    if (a->show)
        return show(a, d, e);
    /* Fail on an unusable cache folder before the long sweep, not after:
     * the tuned file gets its temporary file now. */
    if ((rc = bcl_tuned_open(d, a->o.model.model, &outs, path, sizeof path, e)))
        goto out;
    if ((rc = bcl_memory_fit(d, (size_t)a->o.balls[0], 2, "--balls", e)))
        goto out;
    bcl_context_opts copts = {.use_cache = a->o.use_cache};
    bcl_build_report br;
    if ((rc = bcl_context_create(d, a->o.model.model, &copts, &ctx, &br, e)))
        goto out;
    /* An unusable cache folder: said once, the program built from source. */
    if (br.warning[0])
        cli_warn("%s", br.warning);
    bcl_tune_opts to = {
        .params = a->o.model.params,
        .balls = (size_t)a->o.balls[0],
        .init = a->o.init,
        .seed = a->o.seed,
        .measure = a->o.measure,
        .ks = a->nks ? a->ks : NULL,
        .launch_budget_ms = a->o.launch_budget_ms,
        .nks = a->nks,
        .progress = cli_progress,
        .progress_arg = "tune",
    };
    rc = bcl_tune(ctx, &to, &r, e);
    cli_progress_end();
    if (rc && rc != BCL_EXIT_MISMATCH)
        goto out;
    if (rc == BCL_OK && (rc = bcl_tuned_save(d, a->o.model.model, &r, &outs, e)))
        goto out;
    bool stored = rc == BCL_OK;
    if (a->o.json && stored) {
        if (!(*json = record_json(path, true, e)))
            rc = e->code;
    } else if (!a->o.json) {
        print_table(a, d, &r, stored ? path : NULL);
    }
out:
    bcl_outputs_discard(&outs);
    bcl_tune_result_free(&r);
    bcl_context_destroy(ctx);
    return rc;
}

int cmd_tune(int argc, char **argv)
{
    bcl_error e = {0};
    tune_args a;
    int rc = parse_args(argc, argv, &a, &e);
    if (rc)
        return rc < 0 ? 0 : cli_report(&e);
    bcl_device_list list = {0};
    size_t picked[BCL_MAX_DEVICES], ndev = 0;
    json_t *all = json_array();
    if ((rc = cli_pick_devices(a.o.device, &list, picked, BCL_MAX_DEVICES, &ndev, &e)))
        goto out;
    /* Several devices: each tuned alone, one after the other, so that no
     * device's figures carry another's load (docs/DESIGN.md). */
    for (size_t i = 0; i < ndev && rc == BCL_OK; i++) {
        json_t *j = NULL;
        if (i && !a.o.json)
            printf("\n");
        rc = tune_device(&a, &list.dev[picked[i]], &j, &e);
        if (j)
            json_array_append_new(all, j);
        fflush(stdout);
    }
    if (rc == BCL_OK && a.o.json && !a.show) {
        if (ndev == 1) {
            cli_print_json(json_array_get(all, 0));
        } else {
            json_t *root = json_pack("{s:O}", "devices", all);
            cli_print_json(root);
            json_decref(root);
        }
    }
out:
    json_decref(all);
    bcl_devices_free(&list);
    if (rc)
        cli_report(&e);
    bcl_error_clear(&e);
    return rc;
}
