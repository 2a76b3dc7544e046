/*
 * ballcl run: the main job. N balls, S steps on one device or several, the state kept
 * on the device between steps, then validated against the C reference.
 */
#include "ranks.h"
#include "run.h"
#include "models/models.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The shared options a run takes (options.h). */
#define TAKES                                                                                      \
    (CLI_DEVICE | CLI_BALLS | CLI_STEPS | CLI_MODEL | CLI_INIT | CLI_SEED | CLI_LOCAL |            \
     CLI_CACHE | CLI_JSON | CLI_BUDGET)

static void help(void)
{
    printf("usage: ballcl run [options]\n\n"
           "Runs N balls for S steps on one device, or split over several (-d A,B or all),\n"
           "keeping the state on the device, and compares the final state bit for bit with\n"
           "the scalar C reference.\n\n");
    cli_print_options_help("run", TAKES);
    cli_print_model_help(stdout);
    cli_print_option_help("input output snapshot snapshot-size");
    printf("  --launch-budget-ms MS  the longest a launch of the default K should take\n"
           "                         (default %g; $BALLCL_LAUNCH_BUDGET_MS)\n",
           BCL_LAUNCH_BUDGET_MS);
    cli_print_option_help("variant sync no-validate tolerance-ulp verbose");
    printf("  -h, --help             this help\n\n"
           "Launch configuration (K, variant and local size are taken together, never mixed):\n"
           "  - none of --steps-per-launch, --variant, --local given: the whole configuration\n"
           "    'ballcl tune' stored for this device and model (its k-step entry; its one-step\n"
           "    entry when K must be 1: S = 1 or --sync every); with nothing stored, the\n"
           "    defaults: K from the launch budget (1 with --sync every): the smallest K\n"
           "    that pays off a launch's fixed cost, within the budget, at most S, from\n"
           "    the device's launch costs, measured once and kept beside the binary cache\n"
           "    (docs/PERFORMANCE.md); the variant rule of docs/BENCHMARK.md, local auto\n"
           "  - any of them given: what you give, the defaults for the rest; nothing from\n"
           "    the tuned record, except with --local tuned, which asks for it: the stored\n"
           "    K (unless given), and the variant and local size of the stored entry for\n"
           "    the kernel that runs\n"
           "  - --local 1 without --steps-per-launch or --variant: K = 1 on the base kernel\n"
           "    (the seed's launch, to see its cost)\n"
           "The report's 'tuned' line says whether the stored record was used, and why.\n\n"
           "Exit status: 0 validated, 1 mismatch, 2 usage or input error, 3 OpenCL error.\n");
}

static int parse_args(int argc, char **argv, run_args *a, bcl_error *e)
{
    int rc = cli_options_only(&a->o, "run", help, TAKES | CLI_RUN, argc, argv, e);
    if (rc || (rc = cli_options_finish(&a->o, argc, argv, e)))
        return rc;
    /* A model file without --reference runs unvalidated, and says so. */
    if (!bcl_model_has_reference(a->o.model.model))
        a->validate = false;
    if (a->input && (a->o.balls_given || a->o.init_given))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--input gives the balls: it cannot be combined with --balls or --init");
    if (a->snap_w && !a->snapshot)
        return bcl_fail(e, BCL_EXIT_INPUT, "--snapshot-size needs --snapshot FILE.png");
    /* Only PNG is written: a name that promises another format would get
     * PNG bytes under it. */
    size_t sl = a->snapshot ? strlen(a->snapshot) : 0;
    if (a->snapshot && (sl < 4 || strcasecmp(a->snapshot + sl - 4, ".png") != 0))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--snapshot: '%s': the picture is a PNG: expected a name ending in .png",
                        a->snapshot);
    return BCL_OK;
}

bcl_group_opts run_group_opts(const run_args *a, size_t n)
{
    return (bcl_group_opts){
        .model = a->o.model.model,
        .ctx = {.use_cache = a->o.use_cache},
        .req = {.params = a->o.model.params,
                .balls = n,
                .steps = a->o.steps,
                .steps_per_launch = (unsigned)a->o.steps_per_launch,
                .sync = a->sync,
                .launch = a->o.launch,
                .local_given = a->o.local_given,
                .variant = a->variant,
                .launch_budget_ms = a->o.launch_budget_ms},
    };
}

/* Writes the final state into the outputs prepared before the run (--output
 * first, then --snapshot) and commits them, all or none. The picture frames
 * the model's box when it has one, else the balls. */
static int write_outputs(const run_args *a, bcl_outputs *outs, const float *state, size_t n,
                         bcl_error *e)
{
    int rc = BCL_OK;
    if (a->output)
        rc = bcl_npy_write_to(outs, 0, state, n, e);
    if (rc == BCL_OK && a->snapshot) {
        const bcl_model *m = a->o.model.model;
        bcl_snapshot_opts so = {.width = a->snap_w, .height = a->snap_h, .has_box = m->box != NULL};
        if (m->box)
            m->box(a->o.model.params, so.box);
        rc = bcl_snapshot_write_to(outs, a->output ? 1 : 0, state, n, &so, e);
    }
    if (rc == BCL_OK)
        rc = bcl_outputs_commit(outs, e);
    return rc;
}

/* Every device's warnings, once each: the build's (an unwritable cache
 * folder) and the plan's (a tuned file that cannot be used), which devices
 * of one make share: said once, with the devices it concerns. */
static void warn_members(bcl_group *g)
{
    size_t nd = bcl_group_size(g);
    for (size_t i = 0; i < nd; i++) {
        const bcl_group_member *m = bcl_group_member_at(g, i);
        if (m->build.warning[0])
            cli_warn(nd > 1 ? "device %s: %s" : "%.0s%s", m->selector, m->build.warning);
        bool said = false;
        for (size_t k = 0; k < i && !said; k++)
            said = strcmp(bcl_group_member_at(g, k)->plan.warning, m->plan.warning) == 0;
        if (!m->plan.warning[0] || said)
            continue;
        if (nd == 1) {
            cli_warn("%s", m->plan.warning);
            continue;
        }
        char who[256] = "";
        for (size_t k = i; k < nd; k++) {
            const bcl_group_member *o = bcl_group_member_at(g, k);
            if (strcmp(o->plan.warning, m->plan.warning) == 0)
                snprintf(who + strlen(who), sizeof who - strlen(who), "%s%s", who[0] ? ", " : "",
                         o->selector);
        }
        cli_warn("device%s %s: %s", strchr(who, ',') ? "s" : "", who, m->plan.warning);
    }
}

/* The run on the picked devices, one or several: the library's one run
 * path (bcl_group_exec), then the files and the report. */
static int run_group(run_args *a, const bcl_device_info *const *devs, size_t ndev, float **state,
                     size_t n, bcl_outputs *outs, bcl_error *e)
{
    bcl_group *g = NULL;
    float *init = NULL;
    /* A count too large for the devices or the host is an input error,
     * found before gigabytes of host memory are allocated and filled for
     * it: the state, and for validation the initial state. */
    int rc = bcl_group_memory_fit(devs, ndev, n, a->validate ? 2 : 1,
                                  a->input ? a->input : "--balls", e);
    if (rc)
        return rc;
    if (!*state) {
        *state = malloc(n * 4 * sizeof(float));
        if (!*state)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", n);
        bcl_model_fill(a->o.model.model, *state, 0, n, a->o.init, a->o.seed, a->o.model.params);
    }
    if (a->verbose)
        for (size_t i = 0; i < ndev; i++)
            fprintf(stderr, "ballcl: device %u:%u '%s', build options '%s'\n",
                    devs[i]->platform_index, devs[i]->device_index, cli_shown(devs[i]->name),
                    bcl_build_options(devs[i]));
    bcl_group_opts o = run_group_opts(a, n);
    if ((rc = bcl_group_open(devs, ndev, &o, &g, e)))
        goto out;
    if ((rc = bcl_group_split(g, *state, e)))
        goto out;
    /* Validation needs the initial state; keep a copy only when it will run. */
    if (a->validate) {
        init = malloc(n * 4 * sizeof(float));
        if (!init) {
            rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for validation");
            goto out;
        }
        memcpy(init, *state, n * 4 * sizeof(float));
    }
    bool files = a->output || a->snapshot;
    bcl_exec x = {
        .steps = a->o.steps,
        .load = *state,
        .load_balls = n,
        .out = *state,
        .read_apart = true,
        .init = init,
        .validate = a->validate,
        .tol_ulp = a->tol_ulp,
        .no_reference = !bcl_model_has_reference(a->o.model.model),
        .check_overflow = true,
        .overflow_note = files ? "; output not written" : "",
    };
    bcl_exec_result r;
    rc = bcl_group_exec(g, &x, &r, e);
    warn_members(g);
    if (rc)
        goto out;
    for (size_t i = 0; a->verbose && i < ndev; i++) {
        const bcl_group_member *m = bcl_group_member_at(g, i);
        char who[40] = "";
        if (ndev > 1)
            snprintf(who, sizeof who, "device %s: ", m->selector);
        fprintf(stderr, "ballcl: %sprogram ready in %.1f ms (%s)\n", who, m->build.program_ms,
                m->build.note);
        if (m->build.cache_stored)
            fprintf(stderr, "ballcl: %sprogram stored in the binary cache in %.1f ms\n", who,
                    m->build.store_ms);
    }
    /* The files are written before the report: a run whose result could not
     * be saved ends with that error alone, never with a "validation passed"
     * report followed by a failure. A mismatching state is never saved. */
    if (r.v.mismatches == 0 && (rc = write_outputs(a, outs, *state, n, e)))
        goto out;
    /* The launch costs measured here, after the run's own files. */
    bool cache_warned = false;
    for (size_t i = 0; i < ndev; i++)
        cache_warned = cache_warned || bcl_group_member_at(g, i)->build.warning[0];
    bcl_error ke = {0};
    if (bcl_group_keep_launch_costs(g, &ke) != BCL_OK && !cache_warned)
        cli_warn("launch costs not kept (the next run measures them again): %s", ke.msg);
    bcl_error_clear(&ke);
    /* The report's 'tuned' line: the first device with balls. */
    for (size_t i = ndev; i-- > 0;)
        if (bcl_group_member_at(g, i)->shard.count)
            snprintf(a->tuned_note, sizeof a->tuned_note, "%s",
                     bcl_group_member_at(g, i)->tuned_note);
    if (a->o.json) {
        json_t *j = run_group_json(a, g, n, &r);
        cli_print_json(j);
        json_decref(j);
    } else {
        run_print_report(a, g, n, &r);
    }
    if (r.v.mismatches)
        /* A wrong state is never saved as if it were a result. */
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "validation failed: %llu of %llu floats differ from the C reference%s",
                      (unsigned long long)r.v.mismatches, (unsigned long long)r.v.compared,
                      files ? "; output not written" : "");
out:
    bcl_group_close(g);
    free(init);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    bcl_error e = {0};
    run_args a;
    int rc = parse_args(argc, argv, &a, &e);
    if (rc < 0)
        return 0; /* --help */
#ifdef BALLCL_HAVE_MPI
    /* Under mpirun the ranks first agree on the job (or on the refusal of
     * an option: one message), before any other collective. */
    if (ranks_active()) {
        if ((rc = run_agree(&a, rc, &e)))
            return rc;
        return run_ranks(&a);
    }
#endif
    if (rc)
        return cli_report(&e);

    float *state = NULL;
    size_t n = 0;
    bcl_device_list list = {0};
    size_t picked[BCL_MAX_DEVICES], ndev = 0;
    const bcl_device_info *devs[BCL_MAX_DEVICES];
    /* Every output is checked, and has its temporary file, before any
     * work; they are all committed at the end, or none. */
    bcl_outputs outs = {0};
    if (a.output && (rc = bcl_outputs_add(&outs, a.output, "--output", &e)))
        goto out;
    if (a.snapshot && (rc = bcl_outputs_add(&outs, a.snapshot, "--snapshot", &e)))
        goto out;
    if (a.input && (rc = bcl_npy_read(a.input, &state, &n, &e)))
        goto out;
    if (!a.input)
        n = (size_t)a.o.balls[0];
    if ((rc = cli_pick_devices(a.o.device, &list, picked, BCL_MAX_DEVICES, &ndev, &e)))
        goto out;
    for (size_t i = 0; i < ndev; i++)
        devs[i] = &list.dev[picked[i]];
    rc = run_group(&a, devs, ndev, &state, n, &outs, &e);
out:
    bcl_outputs_discard(&outs);
    bcl_devices_free(&list);
    free(state);
    if (rc)
        cli_report(&e);
    bcl_error_clear(&e);
    return rc;
}
