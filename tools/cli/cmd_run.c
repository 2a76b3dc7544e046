/*
 * ballcl run: the main job. N balls, S steps on one device or several, the state kept
 * on the device between steps, then validated against the C reference.
 */
#include "ranks.h"
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void help(void)
{
    printf("usage: ballcl run [options]\n\n"
           "Runs N balls for S steps on one device, or split over several (-d A,B or all),\n"
           "keeping the state on the device, and compares the final state bit for bit with\n"
           "the scalar C reference.\n\n"
           "  -d, --device SEL       P:D, gpu, cpu, accelerator, or part of a device or\n"
           "                         platform name (default: $BALLCL_DEVICE, else the first\n"
           "                         GPU, accelerator, CPU); a comma-separated list of them,\n"
           "                         or all, runs on several devices at once, the balls\n"
           "                         split by each one's measured rate (docs/DESIGN.md)\n"
           "  -n, --balls N          number of balls (default 100000)\n"
           "  -s, --steps S          number of steps (default 1000)\n");
    cli_print_model_help(stdout);
    printf("  --init seed|random     initial state (default seed: the seed's data)\n"
           "  --seed S               PRNG seed for --init (default 1)\n"
           "  --input FILE.npy       initial state from an (N, 4) float32 .npy file\n"
           "  --output FILE.npy      save the final state (written atomically)\n"
           "  --snapshot FILE.png    save a PNG picture of the final state: the box, each\n"
           "                         ball a dot, darker where many overlap (written\n"
           "                         atomically; the name must end in .png)\n"
           "  --snapshot-size WxH    picture size in pixels (default: 800 on the longer side)\n"
           "  --local L              work-group size: auto, driver, tuned, or a number;\n"
           "                         --local 1 alone runs the seed's launch: single steps\n"
           "                         of the base kernel, one ball per work-group\n"
           "  --steps-per-launch K   steps applied per kernel launch (default: see below)\n"
           "  --launch-budget-ms MS  the longest a launch of the default K should take\n"
           "                         (default %g; $BALLCL_LAUNCH_BUDGET_MS)\n"
           "  --variant V            kernel variant: base, or one the model's .cl file defines\n"
           "  --sync every|end       wait for the device after every launch, or only at the\n"
           "                         end (default end)\n"
           "  --no-validate          skip the comparison with the C reference\n"
           "  --tolerance-ulp U      accept differences up to U ULP (default 0: bitwise)\n"
           "  --no-cache             build from source, bypassing the binary cache\n"
           "  --json                 one JSON object on stdout instead of the report\n"
           "  -v, --verbose          more detail\n"
           "  -h, --help             this help\n\n"
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
           "Exit status: 0 validated, 1 mismatch, 2 usage or input error, 3 OpenCL error.\n",
           BCL_LAUNCH_BUDGET_MS);
}

enum {
    OPT_INPUT = CLI_OWN_OPT_BASE,
    OPT_OUTPUT,
    OPT_SPL,
    OPT_SYNC,
    OPT_NO_VALIDATE,
    OPT_TOL,
    OPT_SNAPSHOT,
    OPT_SNAPSHOT_SIZE,
    OPT_VARIANT,
};

static int parse_args(int argc, char **argv, run_args *a, bcl_error *e)
{
    static const struct option own[] = {
        {"input", required_argument, NULL, OPT_INPUT},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {"steps-per-launch", required_argument, NULL, OPT_SPL},
        {"sync", required_argument, NULL, OPT_SYNC},
        {"variant", required_argument, NULL, OPT_VARIANT},
        {"no-validate", no_argument, NULL, OPT_NO_VALIDATE},
        {"tolerance-ulp", required_argument, NULL, OPT_TOL},
        {"verbose", no_argument, NULL, 'v'},
        {"snapshot", required_argument, NULL, OPT_SNAPSHOT},
        {"snapshot-size", required_argument, NULL, OPT_SNAPSHOT_SIZE},
        {0},
    };
    memset(a, 0, sizeof *a);
    cli_options_init(&a->o, "run", help,
                     CLI_DEVICE | CLI_BALLS | CLI_STEPS | CLI_MODEL | CLI_INIT | CLI_SEED |
                         CLI_LOCAL | CLI_CACHE | CLI_JSON | CLI_BUDGET,
                     own, "v");
    /* The kernels index balls with a uint per buffer; more than 2^32 balls
     * would need 64 GiB of state anyway. */
    a->o.balls_max = (uint64_t)1 << 40;
    a->o.steps = 1000;
    a->o.steps_min = 0;
    a->o.steps_max = (uint64_t)1 << 40;
    a->validate = true;
    int c, rc = BCL_OK;
    while (rc == BCL_OK && (c = cli_options_next(&a->o, argc, argv, &rc, e)) != -1) {
        switch (c) {
        case OPT_INPUT:
            a->input = optarg;
            break;
        case OPT_OUTPUT:
            a->output = optarg;
            break;
        case OPT_SPL:
            rc = bcl_parse_u64(optarg, "--steps-per-launch", 1, 1u << 24, &a->steps_per_launch, e);
            break;
        case OPT_SYNC:
            if (strcmp(optarg, "every") == 0)
                a->sync = BCL_SYNC_EVERY;
            else if (strcmp(optarg, "end") == 0)
                a->sync = BCL_SYNC_END;
            else
                rc = bcl_fail(e, BCL_EXIT_INPUT, "--sync: '%s': expected every or end", optarg);
            break;
        case OPT_SNAPSHOT:
            a->snapshot = optarg;
            break;
        case OPT_SNAPSHOT_SIZE:
            rc = bcl_snapshot_size_parse(optarg, "--snapshot-size", &a->snap_w, &a->snap_h, e);
            break;
        case OPT_VARIANT:
            a->variant = optarg;
            break;
        case OPT_NO_VALIDATE:
            a->validate = false;
            break;
        case OPT_TOL:
            rc = bcl_parse_u64(optarg, "--tolerance-ulp", 0, 1u << 30, &a->tol_ulp, e);
            break;
        case 'v':
            a->verbose = true;
            break;
        }
    }
    if (rc || (rc = cli_options_finish(&a->o, argc, argv, e)))
        return rc;
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

/* Why the timing is the host clock's: d's verdict, or (in a run over
 * several devices, where d is the first) another device's. */
static const char *clock_note(const bcl_device_info *d)
{
    const char *why = bcl_profiling_unusable(d);
    return why ? why : "the profiling of one of the devices failed its check";
}

static void print_report(const run_args *a, const bcl_device_info *d, size_t n,
                         const bcl_build_report *br, const bcl_plan *p, size_t chunks,
                         double first_ms, const bcl_sim_timing *t, const bcl_validation *v)
{
    const bcl_launch *l = &p->launch;
    const bcl_model *m = a->o.model.model;
    double steps = (double)a->o.steps;
    double us_dev = steps ? t->device_ms * 1e3 / steps : 0;
    double us_wall = steps ? t->wall_ms * 1e3 / steps : 0;
    double rate = us_dev > 0 ? (double)n / (us_dev * 1e-6) : 0;
    double bytes_per_ball_step = 32.0 / (double)p->steps_per_launch;
    char name[1024], plat[1024];
    bcl_escape(d->name, name, sizeof name);
    bcl_escape(d->platform_name, plat, sizeof plat);
    printf("device      %s (%s, selector %u:%u)\n", name, plat, d->platform_index, d->device_index);
    printf("model       %s, %s\n", m->name,
           a->input ? a->input : (a->o.init == BCL_INIT_SEED ? "init seed" : "init random"));
    printf("balls       %zu%s\n", n, chunks > 1 ? " (split over several buffers)" : "");
    printf("steps       %llu (%llu per launch: %s; %llu launch%s, sync %s)\n",
           (unsigned long long)a->o.steps, (unsigned long long)p->steps_per_launch, p->k_how,
           (unsigned long long)t->launches, t->launches == 1 ? "" : "es",
           a->sync == BCL_SYNC_EVERY ? "every launch" : "at end");
    run_print_k_reason(p, t, "");
    printf("kernel      %s_%s (%u ball%s per work-item)\n", m->name, p->kernel, p->balls_per_item,
           p->balls_per_item == 1 ? "" : "s");
    if (l->local)
        printf("launch      local %zu, global %zu (%s: %s)\n", l->local, p->global, l->how, l->why);
    else
        printf("launch      local chosen by the driver, global %zu (%s)\n", p->global, l->how);
    if (a->tuned_note[0])
        printf("tuned       %s\n", cli_shown(a->tuned_note));
    printf("program     %.1f ms (%s), first launch %.1f ms\n", br->program_ms, br->note, first_ms);
    printf("time        %.3f us/step %s, %.3f us/step wall\n", us_dev,
           t->host_clock ? "host clock" : "device", us_wall);
    if (t->host_clock)
        printf("clock       host: the device's profiling failed its check: %s\n", clock_note(d));
    printf("rate        %.3g ball-steps/s, %.1f GB/s effective\n", rate,
           rate * bytes_per_ball_step / 1e9);
    run_print_validation(a, v, "");
}

void run_print_k_reason(const bcl_plan *p, const bcl_sim_timing *t, const char *indent)
{
    const bcl_launch_costs *k = &p->costs;
    if (k->known)
        printf("%sK rule      %s: expected %.3g ms a launch, budget %g ms (launch costs %s%s%s)\n",
               indent, p->k_reason, p->launch_expect_ms, p->launch_budget_ms, k->source,
               k->note[0] ? "; " : "", k->note);
    else
        printf("%sK           %s\n", indent, p->k_reason);
    printf("%slongest     launch %.3f ms (profiling)\n", indent, t->max_launch_ms);
}

json_t *run_k_json(const bcl_plan *p)
{
    const bcl_launch_costs *k = &p->costs;
    json_t *costs = k->known
                        ? json_pack("{s:s, s:f, s:f, s:f, s:f, s:I, s:f, s:s}", "source", k->source,
                                    "launch_us", k->launch_us, "io_ns_per_ball", k->io_ns_per_ball,
                                    "step_ns_per_ball", k->step_ns_per_ball, "step_floor_us",
                                    k->step_floor_us, "fill_balls", (json_int_t)k->fill_balls,
                                    "measure_ms", k->measure_ms, "note", k->note)
                        : json_null();
    return json_pack(
        "{s:s, s:o, s:o, s:o}", "k_reason", p->k_reason ? p->k_reason : "", "launch_budget_ms",
        p->launch_budget_ms > 0 ? json_real(p->launch_budget_ms) : json_null(), "launch_expect_ms",
        p->launch_expect_ms > 0 ? json_real(p->launch_expect_ms) : json_null(), "launch_costs",
        costs);
}

void run_print_validation(const run_args *a, const bcl_validation *v, const char *scope)
{
    if (!a->validate) {
        printf("validation  skipped (--no-validate)\n");
        return;
    }
    if (v->mismatches == 0) {
        printf("validation  passed: %llu floats %s the C reference (max %llu ULP)%s\n",
               (unsigned long long)v->compared,
               a->tol_ulp ? "within tolerance of" : "bit-identical to",
               (unsigned long long)v->max_ulp, scope);
        return;
    }
    printf("validation  FAILED: %llu of %llu floats differ, max %s%llu ULP\n",
           (unsigned long long)v->mismatches, (unsigned long long)v->compared,
           v->max_ulp == UINT64_MAX ? "NaN " : "",
           (unsigned long long)(v->max_ulp == UINT64_MAX ? 0 : v->max_ulp));
    for (size_t i = 0; i < v->nreported; i++) {
        const bcl_mismatch *mm = &v->first[i];
        printf("  ball %zu: want (%.9g, %.9g, %.9g, %.9g) got (%.9g, %.9g, %.9g, %.9g)\n", mm->ball,
               mm->want[0], mm->want[1], mm->want[2], mm->want[3], mm->got[0], mm->got[1],
               mm->got[2], mm->got[3]);
    }
}

json_t *run_validation_json(const run_args *a, const bcl_validation *v)
{
    json_t *mism = json_array();
    for (size_t i = 0; i < v->nreported; i++) {
        const bcl_mismatch *mm = &v->first[i];
        json_array_append_new(mism, json_pack("{s:I, s:[f,f,f,f], s:[f,f,f,f]}", "ball",
                                              (json_int_t)mm->ball, "want", mm->want[0],
                                              mm->want[1], mm->want[2], mm->want[3], "got",
                                              mm->got[0], mm->got[1], mm->got[2], mm->got[3]));
    }
    return a->validate
               ? json_pack("{s:b, s:b, s:I, s:I, s:o, s:I, s:o}", "performed", 1, "passed",
                           v->mismatches == 0, "compared", (json_int_t)v->compared, "mismatches",
                           (json_int_t)v->mismatches, "max_ulp",
                           v->max_ulp == UINT64_MAX ? json_null()
                                                    : json_integer((json_int_t)v->max_ulp),
                           "tolerance_ulp", (json_int_t)a->tol_ulp, "first_mismatches", mism)
               : json_pack("{s:b, s:b, s:I, s:I, s:n, s:o}", "performed", 0, "passed", 0,
                           "compared", (json_int_t)0, "mismatches", (json_int_t)0, "max_ulp",
                           "first_mismatches", mism);
}

/* The model's parameters by name: a number for a one-float parameter, a
 * list for one of several (--box W,H), in the order the model declares. */
static json_t *run_params_json(const bcl_model *m, const float *values)
{
    json_t *params = json_object();
    unsigned at = 0;
    for (unsigned i = 0; i < m->nparams; i++) {
        const bcl_param *p = &m->params[i];
        json_t *v;
        if (p->count == 1) {
            v = json_real(values[at]);
        } else {
            v = json_array();
            for (unsigned c = 0; c < p->count; c++)
                json_array_append_new(v, json_real(values[at + c]));
        }
        json_object_set_new(params, p->opt, v);
        at += p->count;
    }
    return params;
}

json_t *run_report_json(const run_args *a, const bcl_device_info *d, size_t n,
                        const bcl_build_report *br, const bcl_plan *p, size_t chunks,
                        double first_ms, const bcl_sim_timing *t, const bcl_validation *v)
{
    const bcl_launch *l = &p->launch;
    double steps = (double)a->o.steps;
    double us_dev = steps ? t->device_ms * 1e3 / steps : 0;
    double us_wall = steps ? t->wall_ms * 1e3 / steps : 0;
    double rate = us_dev > 0 ? (double)n / (us_dev * 1e-6) : 0;
    char sel[32];
    snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
    json_t *params = run_params_json(a->o.model.model, a->o.model.params);
    json_t *validation = run_validation_json(a, v);
    json_t *root = json_pack(
        "{s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:o, s:s, s:I, s:I, s:I, s:I,"
        " s:{s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:s, s:s}, s:{s:b, s:f, s:s, s:b, s:f, s:f},"
        " s:{s:b, s:b, s:s}, s:{s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:o}, s:o}",
        "device", "name", d->name, "platform", d->platform_name, "selector", sel, "type",
        bcl_device_type_name(d->type), "driver", d->driver, "model", a->o.model.model->name,
        "params", params, "init",
        a->input ? "file" : (a->o.init == BCL_INIT_SEED ? "seed" : "random"), "seed",
        (json_int_t)a->o.seed, "balls", (json_int_t)n, "steps", (json_int_t)a->o.steps, "buffers",
        (json_int_t)chunks, "launch", "local", (json_int_t)l->local, "global",
        (json_int_t)p->global, "how", l->how, "why", l->why, "variant", p->variant,
        "balls_per_item", (json_int_t)p->balls_per_item, "steps_per_launch",
        (json_int_t)p->steps_per_launch, "steps_per_launch_how", p->k_how, "sync",
        a->sync == BCL_SYNC_EVERY ? "every" : "end", "cache", "hit", br->cache_hit, "program_ms",
        br->program_ms, "note", br->note, "stored", br->cache_stored, "store_ms", br->store_ms,
        "first_launch_ms", first_ms, "tuned", "stored", a->tuned_note[0] != '\0', "used",
        p->tuned_used, "note", a->tuned_note, "timing", "device_ms", t->device_ms, "wall_ms",
        t->wall_ms, "us_per_step", us_dev, "wall_us_per_step", us_wall, "ball_steps_per_s", rate,
        "gb_per_s", rate * 32.0 / (double)p->steps_per_launch / 1e9, "clock",
        t->host_clock ? "host" : "device", "clock_note",
        t->host_clock ? json_string(clock_note(d)) : json_null(), "validation", validation);
    /* Why this K (docs/PERFORMANCE.md) and the longest launch measured. */
    json_t *why = run_k_json(p);
    json_object_update(json_object_get(root, "launch"), why);
    json_decref(why);
    json_object_set_new(json_object_get(root, "timing"), "max_launch_ms",
                        json_real(t->max_launch_ms));
    return root;
}

/* The picture frames the model's box when it has one, else the balls. */
int run_write_outputs(const run_args *a, bcl_outputs *outs, const float *state, size_t n,
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

/* Finite input that ends non-finite (values near FLT_MAX overflow): the
 * device and the reference agree bit for bit, but the state is no result,
 * and no file ballcl reads back. Say which ball and step. */
int run_check_overflow(const run_args *a, const float *init, const float *state, size_t n,
                       bcl_error *e)
{
    bcl_overflow ov;
    if (!bcl_find_overflow(a->o.model.model, a->o.model.params, init, state, n, a->o.steps, &ov))
        return BCL_OK;
    char at[64] = "";
    if (ov.step)
        snprintf(at, sizeof at, " at step %llu", (unsigned long long)ov.step);
    return bcl_fail(e, BCL_EXIT_INPUT,
                    "ball %zu overflowed%s: its %c became %s (beyond float32): expected input "
                    "whose state stays finite for %llu steps%s",
                    ov.ball, at, "xyzw"[ov.component],
                    isnan(ov.value) ? "nan" : (ov.value > 0 ? "inf" : "-inf"),
                    (unsigned long long)a->o.steps,
                    a->output || a->snapshot ? "; output not written" : "");
}

/* Whether the tuned record was used, and why not, for the report. Empty
 * when nothing is stored for the device and model. */
static void tuned_note(run_args *a, bcl_context *ctx, const bcl_plan_request *req,
                       const bcl_plan *p)
{
    const bcl_tuned *t = bcl_context_tuned(ctx, NULL);
    const char *kind = p->fused ? "k-step" : "one-step";
    a->tuned_note[0] = '\0';
    if (!t->single.found && !t->fused.found)
        return;
    if (p->tuned_used)
        snprintf(a->tuned_note, sizeof a->tuned_note,
                 "used%s: K, variant and local size of the %s entry stored by 'ballcl tune' "
                 "(%s, N = %llu)%s",
                 req->take_tuned ? "" : " (--local tuned)", kind, t->date,
                 (unsigned long long)t->balls, req->take_tuned ? "" : ", where not given");
    else if (req->take_tuned || req->launch.mode == BCL_LOCAL_TUNED)
        snprintf(a->tuned_note, sizeof a->tuned_note, "not used: no %s entry stored", kind);
    else
        snprintf(a->tuned_note, sizeof a->tuned_note,
                 "not used: %s given (the stored configuration is taken whole or not at all)",
                 a->steps_per_launch ? "--steps-per-launch"
                 : a->variant        ? "--variant"
                                     : "--local");
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

    float *state = NULL, *init = NULL;
    size_t n = 0;
    bcl_device_list list = {0};
    bcl_context *ctx = NULL;
    bcl_sim *sim = NULL;
    size_t di, picked[BCL_MAX_DEVICES], ndev = 0;
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
    if (ndev > 1) {
        const bcl_device_info *devs[BCL_MAX_DEVICES];
        for (size_t i = 0; i < ndev; i++)
            devs[i] = &list.dev[picked[i]];
        rc = run_multi(&a, devs, ndev, &state, n, &outs, &e);
        goto out;
    }
    di = picked[0];
    const bcl_device_info *dev = &list.dev[di];
    /* A count too large for the device or the host is an input error,
     * found before gigabytes of host memory are allocated and filled for
     * it: the state, and for validation the initial state. */
    if ((rc = bcl_memory_fit(dev, n, a.validate ? 2 : 1, a.input ? a.input : "--balls", &e)))
        goto out;
    if (!a.input) {
        state = malloc(n * 4 * sizeof(float));
        if (!state) {
            rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", n);
            goto out;
        }
        bcl_model_fill(a.o.model.model, state, 0, n, a.o.init, a.o.seed, a.o.model.params);
    }
    if (a.verbose)
        fprintf(stderr, "ballcl: device %u:%u '%s', build options '%s'\n", dev->platform_index,
                dev->device_index, cli_shown(dev->name), bcl_build_options());
    bcl_context_opts copts = {.use_cache = a.o.use_cache};
    bcl_build_report br;
    if ((rc = bcl_context_create(dev, a.o.model.model, &copts, &ctx, &br, &e)))
        goto out;
    if (a.verbose)
        fprintf(stderr, "ballcl: program ready in %.1f ms (%s)\n", br.program_ms, br.note);
    if (br.warning[0])
        cli_warn("%s", br.warning);
    /* The cache folder's trouble is said once, not again for the launch
     * costs kept there. */
    bool cache_warned = br.warning[0] != '\0';
    br.warning[0] = '\0';
    if ((rc = bcl_sim_create(ctx, state, n, &sim, &e)))
        goto out;
    bcl_plan_request req = {
        .params = a.o.model.params,
        .balls = n,
        .steps = a.o.steps,
        .steps_per_launch = (unsigned)a.steps_per_launch,
        .sync = a.sync,
        .launch = a.o.launch,
        .variant = a.variant,
        /* The rule of 'run --help': the tuned record whole, or not at all. */
        .take_tuned = !a.steps_per_launch && !a.variant && !a.o.local_given,
        .launch_budget_ms = a.o.launch_budget_ms,
    };
    bcl_plan plan;
    rc = bcl_plan_resolve(ctx, &req, &plan, &e);
    if (plan.warning[0])
        cli_warn("%s", plan.warning);
    if (rc)
        goto out;
    tuned_note(&a, ctx, &req, &plan);
    /* Validation needs the initial state; keep a copy only when it will run. */
    if (a.validate) {
        init = malloc(n * 4 * sizeof(float));
        if (!init) {
            rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of host memory for validation");
            goto out;
        }
        memcpy(init, state, n * 4 * sizeof(float));
    }
    bcl_sim_timing t;
    double first_ms = 0;
    if ((rc = bcl_sim_warmup(sim, &plan, &first_ms, &e)))
        goto out;
    /* After the first launch, so the entry holds what the driver compiled
     * for it (PoCL: the work-group function for this local size). */
    bcl_context_cache_store(ctx, &br);
    if (br.warning[0])
        cli_warn("%s", br.warning);
    else if (a.verbose && br.cache_stored)
        fprintf(stderr, "ballcl: program stored in the binary cache in %.1f ms\n", br.store_ms);
    if ((rc = bcl_sim_run(sim, &plan, a.o.steps, &t, &e)))
        goto out;
    if ((rc = bcl_sim_read(sim, state, &e)))
        goto out;
    bcl_validation v = {0};
    if (a.validate && (rc = bcl_validate(a.o.model.model, a.o.model.params, init, state, n,
                                         a.o.steps, a.tol_ulp, &v, &e)))
        goto out;
    /* The files are written before the report: a run whose result could not
     * be saved ends with that error alone, never with a "validation passed"
     * report followed by a failure. A mismatching state is never saved. */
    if (v.mismatches == 0 && (rc = run_check_overflow(&a, init, state, n, &e)))
        goto out;
    if (v.mismatches == 0 && (rc = run_write_outputs(&a, &outs, state, n, &e)))
        goto out;
    /* The launch costs measured here, after the run's own files. */
    bcl_error ke = {0};
    if (bcl_context_keep_launch_costs(ctx, &ke) != BCL_OK && !cache_warned && !br.warning[0])
        cli_warn("launch costs not kept (the next run measures them again): %s", ke.msg);
    bcl_error_clear(&ke);
    if (a.o.json) {
        json_t *j = run_report_json(&a, dev, n, &br, &plan, bcl_sim_buffers(sim), first_ms, &t, &v);
        /* The same "devices" array as a run over several devices: one entry. */
        bcl_group_member only = {.dev = dev,
                                 .build = br,
                                 .plan = plan,
                                 .shard = {0, n},
                                 .share = 1,
                                 .rate_how = "only device",
                                 .buffers = bcl_sim_buffers(sim),
                                 .first_launch_ms = first_ms,
                                 .timing = t,
                                 .v = v};
        snprintf(only.selector, sizeof only.selector, "%u:%u", dev->platform_index,
                 dev->device_index);
        json_t *devices = json_array();
        json_array_append_new(devices, run_member_json(&a, &only));
        json_object_set_new(j, "devices", devices);
        cli_print_json(j);
        json_decref(j);
    } else {
        print_report(&a, dev, n, &br, &plan, bcl_sim_buffers(sim), first_ms, &t, &v);
    }
    if (v.mismatches) {
        /* A wrong state is never saved as if it were a result. */
        rc = bcl_fail(&e, BCL_EXIT_MISMATCH,
                      "validation failed: %llu of %llu floats differ from the C reference%s",
                      (unsigned long long)v.mismatches, (unsigned long long)v.compared,
                      a.output || a.snapshot ? "; output not written" : "");
        goto out;
    }
out:
    bcl_outputs_discard(&outs);
    bcl_sim_destroy(sim);
    bcl_context_destroy(ctx);
    bcl_devices_free(&list);
    free(state);
    free(init);
    if (rc)
        cli_report(&e);
    bcl_error_clear(&e);
    return rc;
}
