/*
 * ballcl bench (docs/BENCHMARK.md): the seed's lessons measured side by side
 * on one device, each row validated bit for bit before it is timed.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void help(void)
{
    printf("usage: ballcl bench [options]\n\n"
           "The seed's lessons on one device, side by side (docs/BENCHMARK.md). Rows: reference "
           "(the C\n"
           "reference, one host thread), openmp (host loop on all threads), local=1 (the\n"
           "seed's mistake), local=driver, local=auto, local=tuned, sync-every-step (host\n"
           "waits after every launch), batched (one wait at the end), floor (batched's\n"
           "launches enqueued bare: no events, no checks), fused (K steps per launch).\n"
           "Every row is validated bit for bit before it is timed. Times: median (min,\n"
           "max) of repeats, warm-up excluded; device rows from profiling events, host\n"
           "rows, sync-every-step, batched and floor from the host clock. A model file\n"
           "(--model-file) needs --reference FILE.c, and has no host rows: its C reference\n"
           "runs in a child process.\n\n"
           "  -d, --device SEL       device (as for 'ballcl run')\n"
           "  -n, --balls N[,N...]   balls, one table per N (default 100000)\n");
    cli_print_model_help(stdout);
    cli_print_option_help("init seed no-cache");
    printf("  -r, --repeats R        timed repeats per row (default 9)\n"
           "  --repeat-ms MS         target length of one repeat (default 200)\n"
           "  -s, --steps S          fixed steps per repeat instead of --repeat-ms\n"
           "  --steps-per-launch K   K of the fused row (default: tuned, else the K rule of\n"
           "                         a plain run, from the launch budget)\n"
           "  --launch-budget-ms MS  the launch budget of the default K (default %g)\n"
           "  --sweep                instead of the rows: the untuned default plan of a plain\n"
           "                         run, the tuned one and the best of K x local size x\n"
           "                         variant, side by side (docs/PERFORMANCE.md); S per run\n"
           "                         is -s, else 10000 up to 10^6 balls and 2000 above;\n"
           "                         -r runs each (default 5) after a warm run\n"
           "  --sweep-k K[,K...]     the sweep's K up to S, and S (default 10,100,1000,10000)\n"
           "  --sweep-local L[,L...] the sweep's local sizes, 0 for the driver's (default: the\n"
           "                         driver's, auto, 32, 64, ... 1024 within the limit)\n"
           "  --json                 JSON on stdout instead of the table\n"
           "  --csv FILE             also write one CSV line per N and row (for\n"
           "                         tools/plot_bench.sh)\n"
           "  -h, --help             this help\n\n"
           "Progress goes to stderr: a line rewritten in place on a terminal, else a line\n"
           "every %u s (BALLCL_PROGRESS_SECONDS sets the interval).\n"
           "Exit status: 0 all rows validated, 1 a row failed validation, 2 usage or input\n"
           "error, 3 OpenCL error.\n",
           BCL_LAUNCH_BUDGET_MS, CLI_PROGRESS_SECONDS);
}

enum { OPT_CSV = CLI_OWN_OPT_BASE, OPT_SWEEP, OPT_SWEEP_K, OPT_SWEEP_LOCAL };

static int parse_args(int argc, char **argv, bench_args *a, bcl_error *e)
{
    static const struct option own[] = {
        {"csv", required_argument, NULL, OPT_CSV},
        {"sweep", no_argument, NULL, OPT_SWEEP},
        {"sweep-k", required_argument, NULL, OPT_SWEEP_K},
        {"sweep-local", required_argument, NULL, OPT_SWEEP_LOCAL},
        {0},
    };
    memset(a, 0, sizeof *a);
    cli_options_init(&a->o, "bench", help, CLI_MEASURING | CLI_BALLS_LIST, own, "");
    /* About half a minute for the ten rows on two CPU cores. */
    a->o.measure.repeats = 9;
    a->o.measure.repeat_ms = 200;
    int c, rc = BCL_OK;
    uint64_t list[16];
    while (rc == BCL_OK && (c = cli_options_next(&a->o, argc, argv, &rc, e)) != -1) {
        switch (c) {
        case OPT_CSV:
            a->csv = optarg;
            break;
        case OPT_SWEEP:
            a->sweep = true;
            break;
        case OPT_SWEEP_K:
            rc = cli_parse_u64_list(optarg, "--sweep-k", 1, 1u << 24, list, 16, &a->nsweep_ks, e);
            for (size_t i = 0; i < a->nsweep_ks; i++)
                a->sweep_ks[i] = (unsigned)list[i];
            break;
        case OPT_SWEEP_LOCAL:
            rc = cli_parse_u64_list(optarg, "--sweep-local", 0, 1u << 20, list, 16,
                                    &a->nsweep_locals, e);
            for (size_t i = 0; i < a->nsweep_locals; i++)
                a->sweep_locals[i] = (size_t)list[i];
            break;
        }
    }
    if (rc || (rc = cli_options_finish(&a->o, argc, argv, e)) ||
        (rc = cli_model_needs_reference(&a->o, "every row", e)))
        return rc;
    if (!a->sweep && (a->nsweep_ks || a->nsweep_locals))
        return bcl_fail(e, BCL_EXIT_INPUT, "--sweep-k and --sweep-local need --sweep");
    if (a->sweep && (a->csv || a->o.steps_per_launch))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--sweep times the default plan against a sweep: it takes neither --csv "
                        "nor --steps-per-launch");
    /* --sweep: 5 runs of each configuration unless -r says otherwise. */
    bool repeats_given = false;
    for (size_t i = 0; i < a->o.nseen; i++)
        repeats_given = repeats_given || strcmp(a->o.seen[i], "repeats") == 0;
    if (a->sweep && !repeats_given)
        a->o.measure.repeats = 5;
    /* -s fixes the steps of every repeat. */
    a->o.measure.steps = a->o.steps;
    return BCL_OK;
}

/* What each row asks for (bcl_plan_resolve turns it into what runs).
 * sync-every-step and batched take the best one-step launch known (the
 * tuned variant and local size; a NULL variant goes with local tuned), so
 * that they differ only in the waiting; the floor is batched enqueued bare
 * (docs/PERFORMANCE.md, "The host's cost per launch"); fused takes the
 * tuned K, variant and local size, the best known for this device (auto
 * when nothing is tuned: see device_row). */
static const bench_row rows[ROW_COUNT] = {
    [ROW_REFERENCE] = {.name = "reference", .host = true, .host_clock = true, .threads = 1},
    [ROW_OPENMP] = {.name = "openmp", .host = true, .openmp = true, .host_clock = true},
    [ROW_LOCAL_1] = {.name = "local=1", .req.launch = {.mode = BCL_LOCAL_FIXED, .local = 1}},
    [ROW_LOCAL_DRIVER] = {.name = "local=driver", .req.launch.mode = BCL_LOCAL_DRIVER},
    [ROW_LOCAL_AUTO] = {.name = "local=auto", .req.launch.mode = BCL_LOCAL_AUTO},
    [ROW_LOCAL_TUNED] = {.name = "local=tuned", .req.launch.mode = BCL_LOCAL_TUNED},
    [ROW_SYNC_EVERY] = {.name = "sync-every-step",
                        .host_clock = true,
                        .req = {.sync = BCL_SYNC_EVERY, .launch.mode = BCL_LOCAL_TUNED}},
    [ROW_BATCHED] = {.name = "batched", .host_clock = true, .req.launch.mode = BCL_LOCAL_TUNED},
    [ROW_FLOOR] = {.name = "floor",
                   .host_clock = true,
                   .bare = true,
                   .req.launch.mode = BCL_LOCAL_TUNED},
    [ROW_FUSED] = {.name = "fused", .req = {.fused = true, .launch.mode = BCL_LOCAL_TUNED}},
};

/* The host rows run the model's C function in this process; a model
 * file's C reference runs in a child process (src/models/cref.c), all
 * steps at once, so there is no host loop of it to time. */
static const char host_rows_na[] =
    "n/a for a model file: its C reference runs in a child process, not in this one";

static void setup_rows(const bench_args *a, size_t n, bench_result *res)
{
    for (int i = 0; i < ROW_COUNT; i++) {
        bench_row *r = &res->rows[i];
        *r = rows[i];
        if (r->host && !a->o.model.model->reference)
            r->na = host_rows_na;
        r->req.params = a->o.model.params;
        r->req.balls = n;
        r->req.variant = r->req.launch.mode == BCL_LOCAL_TUNED ? NULL : "";
        /* The fused row's K: the given one, else (0) the tuned one, else
         * the device's rule (bcl_default_k). */
        r->req.steps_per_launch = r->req.fused ? (unsigned)a->o.steps_per_launch : 1;
        r->req.launch_budget_ms = a->o.launch_budget_ms;
    }
    res->rows[ROW_OPENMP].threads = bcl_host_threads();
}

/* Validates a host row (the reference defines the bits) and prepares its
 * timer on `state`, the host rows' own copy of the balls. */
static int host_row(bench_row *r, const bench_args *a, const float *init, float *state, size_t n,
                    bcl_timer **timer, bcl_error *e)
{
    const bcl_model *m = a->o.model.model;
    memcpy(state, init, n * 4 * sizeof(float));
    if (r->openmp) {
        uint64_t steps = bcl_check_steps(1);
        bcl_host_steps(m, a->o.model.params, state, n, steps, true);
        int rc = bcl_validate(m, a->o.model.params, init, state, n, steps, 0, &r->v, e);
        if (rc)
            return rc;
        r->validated = r->v.mismatches == 0;
        if (!r->validated)
            return BCL_OK;
    } else {
        r->validated = true;
    }
    return bcl_timer_host(m, a->o.model.params, state, n, r->openmp, &a->o.measure, timer, e);
}

/* Resolves and validates a device row and, if it gave the reference's
 * bits, prepares its timer. */
static int device_row(bench_row *r, bcl_context *ctx, bcl_sim *sim, const bench_args *a,
                      const float *init, float *scratch, bcl_timer **timer, bcl_error *e)
{
    int rc = bcl_plan_resolve(ctx, &r->req, &r->plan, e);
    /* A fused row with nothing tuned for the k-step kernel is the rule's
     * variant at the automatic local size, not a tuned row that fell back. */
    if (rc == BCL_OK && r->req.fused && strcmp(r->plan.variant_how, "tuned") != 0) {
        r->req.launch.mode = BCL_LOCAL_AUTO;
        rc = bcl_plan_resolve(ctx, &r->req, &r->plan, e);
    }
    if (rc)
        return rc;
    r->plan.bare = r->bare;
    /* The tuned file is read once; say once that it was of no use. */
    static bool warned;
    if (r->plan.warning[0] && !warned) {
        cli_warn("%s", r->plan.warning);
        warned = true;
    }
    r->tuned_missing =
        r->req.launch.mode == BCL_LOCAL_TUNED && strcmp(r->plan.launch.how, "tuned") != 0;
    rc = bcl_check_sim(sim, &r->plan, init, 0, scratch, &r->v, e);
    if (rc)
        return rc;
    r->validated = r->v.mismatches == 0;
    if (!r->validated)
        return BCL_OK; /* failed rows are shown as failed, never timed */
    return bcl_timer_sim(sim, &r->plan, &a->o.measure, timer, e);
}

/* One N: copy bandwidth, the add-rate bound sized, then every row validated
 * and calibrated, then the repeats of all rows and of the bound interleaved
 * (repeat 1 of every row, repeat 2, ...), so that a busy moment of a shared
 * machine weighs on all rows and on the bound alike. */
static int bench_one(bcl_context *ctx, const bcl_device_info *d, const bench_args *a, size_t n,
                     bench_result *res, bcl_error *e)
{
    memset(res, 0, sizeof *res);
    res->balls = n;
    const bcl_model *m = a->o.model.model;
    /* The initial state, a scratch copy for validation and the host rows'
     * own copy of the balls, in one block. */
    float *init = malloc(3 * n * 4 * sizeof(float));
    bcl_timer *timers[ROW_COUNT] = {0};
    bcl_add_timer *add = NULL;
    bcl_sim *sim = NULL;
    int rc = BCL_OK;
    if (!init) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", n);
        goto out;
    }
    float *scratch = init + 4 * n, *host = init + 8 * n;
    m->init(init, 0, n, a->o.init, a->o.seed, a->o.model.params);
    if ((rc = bcl_sim_create(ctx, init, n, &sim, e)))
        goto out;
    setup_rows(a, n, res);
    char line[128];
    snprintf(line, sizeof line, "N=%zu copy bandwidth", n);
    cli_progress("bench", 0, 0, line);
    res->copy_bytes = n * 4 * sizeof(float);
    if ((rc = bcl_measure_copy(ctx, res->copy_bytes, a->o.measure.repeats, &res->copy_rate, e)))
        goto out;
    res->copy_host_clock = bcl_profiling_unusable(d) != NULL;
    snprintf(line, sizeof line, "N=%zu add-rate bound", n);
    cli_progress("bench", 0, 0, line);
    res->ops_per_step = m->ops_per_step;
    /* The bound's own launch length (50 ms), whatever the rows' is: long
     * enough for any launch cost to vanish, short enough for a quick bench. */
    bcl_measure_opts amo = {.repeats = a->o.measure.repeats};
    if ((rc = bcl_add_timer_create(ctx, &amo, &add, e)))
        goto out;
    for (int i = 0; i < ROW_COUNT && rc == BCL_OK; i++) {
        bench_row *r = &res->rows[i];
        snprintf(line, sizeof line, "N=%zu validating %s", n, r->name);
        cli_progress("bench", (unsigned)i, ROW_COUNT, line);
        if (r->na)
            continue;
        rc = r->host ? host_row(r, a, init, host, n, &timers[i], e)
                     : device_row(r, ctx, sim, a, init, scratch, &timers[i], e);
    }
    unsigned repeats = a->o.measure.repeats ? a->o.measure.repeats : 1;
    for (unsigned k = 0; k < repeats && rc == BCL_OK; k++) {
        snprintf(line, sizeof line, "N=%zu timing, repeat %u of %u", n, k + 1, repeats);
        cli_progress("bench", 0, 0, line);
        for (int i = 0; i < ROW_COUNT && rc == BCL_OK; i++)
            if (timers[i])
                rc = bcl_timer_repeat(timers[i], e);
        if (rc == BCL_OK)
            rc = bcl_add_timer_repeat(add, e);
    }
    for (int i = 0; i < ROW_COUNT && rc == BCL_OK; i++) {
        if (timers[i]) {
            bcl_timer_result(timers[i], &res->rows[i].m);
            /* The device's profiling failed its check: the row's figure is
             * the host clock's, and says so. */
            res->rows[i].host_clock |= res->rows[i].m.host_clock;
        }
    }
    res->clock_note = bcl_profiling_unusable(d);
    if (rc == BCL_OK)
        rc = bcl_add_timer_result(add, &res->add, e);
out:
    cli_progress_end();
    bcl_add_timer_free(add);
    for (int i = 0; i < ROW_COUNT; i++)
        bcl_timer_free(timers[i]);
    bcl_sim_destroy(sim);
    free(init);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    bcl_error e = {0};
    bench_args a;
    int rc = parse_args(argc, argv, &a, &e);
    if (rc)
        return rc < 0 ? 0 : cli_report(&e);
    bcl_device_list list = {0};
    bcl_context *ctx = NULL;
    bench_result *res = calloc(a.o.nballs, sizeof *res);
    json_t *root = NULL, *sweep = json_array();
    char *csv = NULL;
    size_t csv_len = 0, failed = 0;
    bcl_outputs outs = {0};
    if (!res) {
        rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory");
        goto out;
    }
    /* Checked, with its temporary file, before the long measurement. */
    if (a.csv && (rc = bcl_outputs_add(&outs, a.csv, "--csv", &e)))
        goto out;
    size_t picked[BCL_MAX_DEVICES], ndev = 0;
    if ((rc = cli_pick_devices(a.o.device, &list, picked, BCL_MAX_DEVICES, &ndev, &e)))
        goto out;
    bench_info info = {.a = &a, .dev = &list.dev[picked[0]]};
    time_t now = time(NULL);
    struct tm tm;
    strftime(info.date, sizeof info.date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    if (ndev > 1) {
        const bcl_device_info *devs[BCL_MAX_DEVICES];
        for (size_t i = 0; i < ndev; i++)
            devs[i] = &list.dev[picked[i]];
        rc = bench_multi(&a, devs, ndev, info.date, &e);
        goto out;
    }
    const bcl_device_info *d = info.dev;
    bcl_context_opts copts = {.use_cache = a.o.use_cache};
    bcl_build_report br;
    if ((rc = bcl_context_create(d, a.o.model.model, &copts, &ctx, &br, &e)))
        goto out;
    /* An unusable cache folder: said once, the program built from source. */
    if (br.warning[0])
        cli_warn("%s", br.warning);
    /* Every N fits, or nothing runs: the initial state, the host rows'
     * state and a scratch copy for validation. */
    for (size_t i = 0; i < a.o.nballs; i++)
        if ((rc = bcl_memory_fit(d, (size_t)a.o.balls[i], 3, "--balls", &e)))
            goto out;
    if (a.sweep) {
        rc = bench_sweep(&a, ctx, &info, &e);
        goto out;
    }
    for (size_t i = 0; i < a.o.nballs; i++) {
        if ((rc = bench_one(ctx, d, &a, (size_t)a.o.balls[i], &res[i], &e)))
            goto out;
        for (int r = 0; r < ROW_COUNT; r++)
            failed += !res[i].rows[r].validated && !res[i].rows[r].na;
        if (!a.o.json) {
            if (i)
                printf("\n");
            bench_print_table(&info, &res[i]);
            fflush(stdout);
        }
        json_array_append_new(sweep, bench_result_json(&res[i]));
        if (a.csv && (rc = bench_csv_append(&csv, &csv_len, &res[i], i == 0, &e)))
            goto out;
    }
    root = bench_info_json(&info);
    if (a.o.nballs == 1)
        json_object_update(root, json_array_get(sweep, 0));
    else
        json_object_set(root, "sweep", sweep);
    if (a.o.json)
        cli_print_json(root);
    if (a.csv && ((rc = bcl_outputs_write(&outs, 0, csv, csv_len, &e)) ||
                  (rc = bcl_outputs_commit(&outs, &e))))
        goto out;
    if (failed)
        rc = bcl_fail(&e, BCL_EXIT_MISMATCH,
                      "validation failed: %zu row%s gave other bits than the C reference and "
                      "%s not timed",
                      failed, failed == 1 ? "" : "s", failed == 1 ? "was" : "were");
out:
    bcl_outputs_discard(&outs);
    json_decref(root);
    json_decref(sweep);
    free(csv);
    free(res);
    bcl_context_destroy(ctx);
    bcl_devices_free(&list);
    if (rc)
        cli_report(&e);
    bcl_error_clear(&e);
    return rc;
}
