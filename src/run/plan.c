/*
 * The launch plan (docs/DESIGN.md): the one place that turns what a caller
 * asks for into what runs, for every command and the survey:
 *
 *   tuned    the record 'ballcl tune' stored is taken whole (K, variant and
 *            local size of one entry, whose best values depend on K) or not
 *            at all: when the request leaves all three open (take_tuned), or
 *            with --local tuned for what it leaves open;
 *   K        the caller's; 1 with --sync every, or with --local 1 and no
 *            variant (the seed's own launch, whose cost a fused launch would
 *            hide); the tuned K (at most S); else k_rule.c's rule from the
 *            device's launch costs (launch_costs.c);
 *   variant  the caller's (checked against the program); the tuned one;
 *            else the widest up to BALLCL_FORCE_BALLS_PER_ITEM (a test
 *            setting) for a k-step kernel; else bcl_variant_default;
 *   local    the caller's size (checked against the kernel's limit), the
 *            driver's choice, the tuned size for this very kernel, or the
 *            automatic rule of launch.c.
 */
#include "run/run.h"
#include "ocl/program.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t bcl_check_steps(unsigned k)
{
    return k > 1 ? (uint64_t)k + k / 2 + 1 : 5;
}

/* Whether the request takes what the tuned record says. */
static bool wants_tuned(const bcl_plan_request *r)
{
    return r->take_tuned || r->launch.mode == BCL_LOCAL_TUNED;
}

bool bcl_plan_tuned_rule(const bcl_plan_request *r)
{
    return !r->steps_per_launch && !(r->variant && *r->variant) && !r->local_given;
}

void bcl_plan_tuned_note(bcl_context *c, const bcl_plan_request *r, const bcl_plan *p, char *out,
                         size_t size)
{
    const bcl_tuned *t = bcl_context_tuned(c, NULL);
    const char *kind = p->fused ? "k-step" : "one-step";
    out[0] = '\0';
    if (!t->single.found && !t->fused.found)
        return;
    if (p->tuned_used)
        snprintf(out, size,
                 "used%s: K, variant and local size of the %s entry stored by 'ballcl tune' "
                 "(%s, N = %llu)%s",
                 r->take_tuned ? "" : " (--local tuned, local='tuned')", kind, t->date,
                 (unsigned long long)t->balls, r->take_tuned ? "" : ", where not given");
    else if (wants_tuned(r))
        snprintf(out, size, "not used: no %s entry stored", kind);
    else
        snprintf(out, size,
                 "not used: %s given (the stored configuration is taken whole or not at all)",
                 r->steps_per_launch ? "K (--steps-per-launch, steps_per_launch)"
                 : r->variant        ? "the variant (--variant)"
                                     : "the local size (--local, local)");
}

/* K and where it came from. */
static void set_k(bcl_plan *p, unsigned k, const char *how, const char *reason)
{
    p->steps_per_launch = k;
    p->k_how = how;
    p->k_reason = reason;
}

/* K by the rule of k_rule.c within budget (ms), from the device's launch
 * costs for this plan's balls; 1 when S is 1. */
static int rule_k(bcl_context *c, const bcl_plan_request *r, double budget, bcl_plan *p,
                  bcl_error *e)
{
    set_k(p, 1, "default rule", "steps");
    if (r->steps == 1 || (r->steps == 0 && !r->fused))
        return BCL_OK;
    p->launch_budget_ms = budget;
    int rc = bcl_launch_costs_get(c, r->params, &p->costs, e);
    if (rc)
        return rc;
    if (p->costs.warn && !p->warning[0])
        snprintf(p->warning, sizeof p->warning, "launch costs: %.200s; measured again",
                 p->costs.note);
    double fixed_us, step_us;
    bcl_launch_costs_estimate(&p->costs, r->balls ? r->balls : 1, &fixed_us, &step_us);
    p->steps_per_launch = bcl_k_rule(fixed_us, step_us, r->steps, budget, BCL_LAUNCH_OVERHEAD_SHARE,
                                     &p->k_reason, &p->launch_expect_ms);
    return BCL_OK;
}

static int choose_k(bcl_context *c, const bcl_plan_request *r, const bcl_tuned *t, double budget,
                    bcl_plan *p, bcl_error *e)
{
    unsigned tk = t->fused.steps_per_launch;
    if (r->steps_per_launch)
        set_k(p, r->steps_per_launch, "given", "given");
    else if (r->sync == BCL_SYNC_EVERY)
        set_k(p, 1, "1 with --sync every", "sync");
    else if (r->launch.mode == BCL_LOCAL_FIXED && r->launch.local == 1 && !r->variant && !r->fused)
        set_k(p, 1, "1 with --local 1, the seed's launch", "seed-launch");
    else if (wants_tuned(r) && t->fused.found && (r->steps > 1 || (r->steps == 0 && r->fused)))
        set_k(p, r->steps && r->steps < tk ? (unsigned)r->steps : tk, "tuned", "tuned");
    else
        return rule_k(c, r, budget, p, e);
    return BCL_OK;
}

/* The variant: the caller's (one of the program's), the tuned one, else the rule. */
static int choose_variant(bcl_context *c, const bcl_plan_request *r, const bcl_tuned_entry *tuned,
                          bcl_plan *p, bcl_error *e)
{
    const char *want = r->variant;
    p->variant_how = want ? "given" : "rule";
    /* "" or "base": the base kernel, p->variant left empty (p is cleared). */
    if (want && (!*want || strcmp(want, "base") == 0))
        return BCL_OK;
    if (!want && wants_tuned(r) && tuned->found) {
        snprintf(p->variant, sizeof p->variant, "%s", tuned->variant);
        p->variant_how = "tuned";
        return BCL_OK;
    }
    bcl_variant vars[BCL_MAX_VARIANTS];
    size_t nv;
    int rc = bcl_variants_list(c, p->fused, vars, BCL_MAX_VARIANTS, &nv, e);
    if (rc)
        return rc;
    if (!want) {
        const bcl_device_info *d = bcl_context_device(c);
        unsigned forced;
        if ((rc = bcl_variant_forced(&forced, e)))
            return rc;
        if (forced && p->fused) {
            snprintf(p->variant, sizeof p->variant, "%s",
                     bcl_variant_widest(forced, vars, nv, 0, 0));
            p->variant_how = "forced by BALLCL_FORCE_BALLS_PER_ITEM";
            return BCL_OK;
        }
        snprintf(p->variant, sizeof p->variant, "%s",
                 bcl_variant_default_for(d->type, d->native_vector_width_float,
                                         bcl_context_model(c)->cpu_sets, p->fused, vars, nv,
                                         p->balls, d->compute_units));
        return BCL_OK;
    }
    char names[256] = "base";
    for (size_t i = 0; i < nv; i++) {
        if (strcmp(vars[i].name, want) == 0) {
            snprintf(p->variant, sizeof p->variant, "%s", want);
            return BCL_OK;
        }
        if (i > 0) {
            strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, vars[i].name, sizeof names - strlen(names) - 1);
        }
    }
    return bcl_fail(
        e, BCL_EXIT_INPUT,
        "--variant: the %s kernel of model '%s' has no variant '%s': expected one of %s",
        p->fused ? "k-step" : "one-step", bcl_context_model(c)->name, r->variant, names);
}

/* The local size of kernel k over `items` work-items. tuned is the entry
 * stored for this very kernel (NULL when none). */
static int choose_local(bcl_context *c, cl_kernel k, size_t items, const bcl_tuned_entry *tuned,
                        bcl_launch *l, bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(c);
    size_t kwg, limit, pm;
    int rc = bcl_kernel_groups(d, k, &kwg, &limit, &pm, e);
    if (rc)
        return rc;
    if (l->mode == BCL_LOCAL_DRIVER) {
        l->local = 0;
        l->how = "driver";
        snprintf(l->why, sizeof l->why, "NULL local size: the runtime chooses");
        return BCL_OK;
    }
    if (l->mode == BCL_LOCAL_FIXED) {
        if (l->local > limit)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "--local %zu: exceeds the limit of %zu work-items for this kernel on "
                            "'%s'",
                            l->local, limit, d->name);
        l->how = "user";
        snprintf(l->why, sizeof l->why, "given with --local");
        return BCL_OK;
    }
    /* 0 in the tuned file is the driver's choice; none stored for this
     * kernel: the automatic rule, which says so. */
    if (l->mode == BCL_LOCAL_TUNED && tuned && tuned->local <= limit) {
        l->local = tuned->local;
        l->how = "tuned";
        snprintf(l->why, sizeof l->why, "stored by 'ballcl tune' for this device%s",
                 tuned->local ? "" : ": NULL local size, the runtime chooses");
        return BCL_OK;
    }
    char why[sizeof l->why];
    l->local = bcl_local_auto(kwg, pm, d->max_work_group, d->max_item_sizes[0], d->compute_units,
                              items, why, sizeof why);
    l->how = "auto";
    snprintf(l->why, sizeof l->why,
             l->mode == BCL_LOCAL_TUNED ? "no tuned size stored; %.130s" : "%s", why);
    return BCL_OK;
}

int bcl_plan_resolve(bcl_context *c, const bcl_plan_request *r, bcl_plan *p, bcl_error *e)
{
    memset(p, 0, sizeof *p);
    const bcl_model *m = bcl_context_model(c);
    unsigned np = bcl_model_param_floats(m);
    if (r->params)
        memcpy(p->params, r->params, np * sizeof(float));
    p->first = r->first;
    p->balls = r->balls;
    p->steps = r->steps;
    p->sync = r->sync;
    p->launch = r->launch;
    /* The tuned file is read only when the plan leaves something to it; one
     * that cannot be used is a warning. */
    static const bcl_tuned none;
    const bcl_tuned *t = &none;
    if (!r->steps_per_launch || wants_tuned(r)) {
        const char *problem;
        t = bcl_context_tuned(c, &problem);
        if (problem)
            snprintf(p->warning, sizeof p->warning, "%s; ignoring it", problem);
    }
    /* $BALLCL_LAUNCH_BUDGET_MS is checked whether or not the rule uses it:
     * a bad value is an input error, not one a tuned record hides. */
    double budget = r->launch_budget_ms;
    int rc = budget > 0 ? BCL_OK : bcl_launch_budget_env(&budget, e);
    if (rc == BCL_OK)
        rc = choose_k(c, r, t, budget, p, e);
    if (rc)
        return rc;
    p->fused = p->steps_per_launch > 1 || r->fused;
    const bcl_tuned_entry *entry = p->fused ? &t->fused : &t->single;
    rc = choose_variant(c, r, entry, p, e);
    if (rc)
        return rc;
    p->balls_per_item = bcl_variant_balls(p->variant);
    p->block = p->balls_per_item;
    bcl_kernel_suffix(p->fused, p->variant, p->kernel, sizeof p->kernel);
    cl_kernel k;
    if ((rc = bcl_context_kernel(c, p->kernel, &k, e)))
        return rc;
    /* The tuned local size belongs to the kernel it was measured with. A
     * plain request takes it as --local tuned would. */
    bool same_kernel = entry->found && strcmp(entry->variant, p->variant) == 0;
    if (r->take_tuned && entry->found)
        p->launch.mode = BCL_LOCAL_TUNED;
    p->tuned_used = wants_tuned(r) && entry->found;
    size_t items = (p->balls + p->balls_per_item - 1) / p->balls_per_item;
    if ((rc = choose_local(c, k, items, same_kernel ? entry : NULL, &p->launch, e)))
        return rc;
    p->global = p->launch.local ? bcl_round_up(items, p->launch.local) : items;
    p->check_steps = bcl_check_steps(p->steps_per_launch);
    return BCL_OK;
}

/* ---- the launch costs the K rule needs: kept ones (launch_costs.c), else
 * measured here in about 50 ms with the model's default variant and local
 * size: the fixed cost from single-step launches at two sizes, the steps
 * from the slope of longer launches. Times are the host clock's (what a run
 * waits for, whatever the profiling's check), each the least of its repeats
 * (a busy moment only ever adds time). ---- */

/* The measurement stops adding launches after this much time. */
#define MEASURE_MS 40.0
/* A timed launch long enough for its slope to stand out of the noise. */
#define LONG_LAUNCH_MS 2.0

/* Host time of `launches` launches of K steps each, queued back to back
 * with one wait at the end: the least of two. */
static int time_launches(bcl_sim *s, const bcl_plan *base, unsigned k, unsigned launches,
                         double *ms, bcl_error *e)
{
    bcl_plan p = *base;
    p.steps_per_launch = k;
    p.untimed_launches = true; /* the host clock is the figure here */
    *ms = INFINITY;
    for (unsigned r = 0; r < 2; r++) {
        bcl_sim_timing t;
        int rc = bcl_sim_run(s, &p, (uint64_t)k * launches, &t, e);
        if (rc)
            return rc;
        if (t.wall_ms < *ms)
            *ms = t.wall_ms;
    }
    return BCL_OK;
}

/* Grows K from k0 until one launch takes LONG_LAUNCH_MS or the time is
 * spent: by what the last launch says is enough, from 2 to 8 times, so that
 * the last launch stays near LONG_LAUNCH_MS. The last two points give the
 * time per step (*slope_ms). */
static int fit_steps(bcl_sim *s, const bcl_plan *p, unsigned k0, double t0, double *slope_ms,
                     bcl_error *e)
{
    unsigned k = k0, kprev = k0;
    double prev = 0, now = 0;
    int rc = time_launches(s, p, k, 1, &prev, e);
    while (rc == BCL_OK) {
        double grow = prev > 0 ? ceil(LONG_LAUNCH_MS / prev) : 8;
        grow = grow > 8 ? 8 : grow < 2 ? 2 : grow;
        kprev = k;
        k = (unsigned)(k * grow);
        rc = time_launches(s, p, k, 1, &now, e);
        if (rc || now >= LONG_LAUNCH_MS || bcl_now_ms() - t0 > MEASURE_MS || k >= (1u << 21))
            break;
        prev = now;
    }
    if (rc)
        return rc;
    double slope = (now - prev) / (double)(k - kprev);
    if (!(slope > 0))
        slope = now / k; /* noise: the whole launch as steps, an upper bound */
    *slope_ms = slope;
    return BCL_OK;
}

/* Balls that fill the device: 32768 per compute unit, more than a GPU holds
 * at once and beyond its last-level cache (on the H200 2048 a unit sat in
 * its L2 and showed a tenth of the loading and storing), from 64 Ki to 16 Mi
 * balls, within one allocation and a sixty-fourth of the device's memory. */
static size_t fill_balls(const bcl_device_info *d)
{
    size_t n = (size_t)(d->compute_units ? d->compute_units : 1) * 32768;
    n = n < ((size_t)1 << 16) ? (size_t)1 << 16 : n > ((size_t)1 << 24) ? (size_t)1 << 24 : n;
    if (d->max_alloc && n > d->max_alloc / 16)
        n = (size_t)(d->max_alloc / 16);
    if (d->global_mem && n > d->global_mem / 64 / 16)
        n = (size_t)(d->global_mem / 64 / 16);
    return n ? n : 1;
}

/* Random balls of the model, drawn for the first FILL_DRAWN and repeated
 * after (bcl_sim_create_tiled): drawing millions would cost more than the
 * measurement, and the timing depends on the mix of balls, not on which. */
#define FILL_DRAWN ((size_t)1 << 16)

static int costs_measure(bcl_context *c, const float *params, bcl_launch_costs *k, bcl_error *e)
{
    double t0 = bcl_now_ms();
    const bcl_device_info *d = bcl_context_device(c);
    const bcl_model *m = bcl_context_model(c);
    size_t nfill = fill_balls(d);
    /* The default variant and local size at the fill; K set per launch. */
    float defaults[BCL_MAX_PARAMS];
    if (!params) {
        bcl_model_param_defaults(m, defaults);
        params = defaults;
    }
    bcl_plan_request req = {.params = params,
                            .balls = nfill,
                            .steps_per_launch = 2,
                            .fused = true,
                            .launch = {.mode = BCL_LOCAL_AUTO}};
    bcl_plan p[2]; /* [0] the few balls, [1] the full device */
    int rc = bcl_plan_resolve(c, &req, &p[1], e);
    if (rc)
        return rc;
    /* One work-item's balls per compute unit: a step's latency when nothing
     * overlaps, and a launch that wakes every unit (a CPU's threads). */
    size_t units = d->compute_units ? d->compute_units : 1;
    req.balls = p[1].balls_per_item * units < nfill ? p[1].balls_per_item * units : nfill;
    if ((rc = bcl_plan_resolve(c, &req, &p[0], e)))
        return rc;
    size_t drawn = nfill < FILL_DRAWN ? nfill : FILL_DRAWN;
    float *state = malloc(drawn * 4 * sizeof(float));
    if (!state)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", drawn);
    bcl_model_fill(m, state, 0, drawn, BCL_INIT_RANDOM, 1, params);
    /* For each size: the fixed cost, 16 single-step launches back to back
     * (fixed16); less one step each, the rest is the launch and the loading
     * and storing of every ball once: a line in N (launch, io), measured
     * directly rather than as the intercept of the step fits (step_ms: the
     * floor of the few balls, the slope of the full device), which carry the
     * long launches' noise. */
    bcl_sim *s[2] = {NULL, NULL};
    double fixed16[2] = {0, 0}, step_ms[2] = {0, 0};
    static const unsigned k0[2] = {512, 16};
    for (int i = 0; i < 2 && rc == BCL_OK; i++)
        rc = bcl_sim_create_tiled(c, state, drawn, p[i].balls, &s[i], e);
    free(state);
    for (int i = 0; i < 2 && rc == BCL_OK; i++)
        rc = bcl_sim_warmup(s[i], &p[i], NULL, e);
    for (int i = 0; i < 2 && rc == BCL_OK; i++)
        rc = time_launches(s[i], &p[i], 1, 16, &fixed16[i], e);
    for (int i = 0; i < 2 && rc == BCL_OK; i++)
        rc = fit_steps(s[i], &p[i], k0[i], t0, &step_ms[i], e);
    for (int i = 0; i < 2; i++)
        bcl_sim_destroy(s[i]);
    if (rc)
        return rc;
    k->step_floor_us = step_ms[0] * 1e3;
    k->step_ns_per_ball = step_ms[1] * 1e6 / (double)nfill;
    double small_us = fixed16[0] * 1e3 / 16 - k->step_floor_us;
    double full_us = fixed16[1] * 1e3 / 16 - step_ms[1] * 1e3;
    k->launch_us = small_us > 0 ? small_us : 0;
    double io =
        nfill > p[0].balls ? (full_us - k->launch_us) * 1e3 / (double)(nfill - p[0].balls) : 0;
    k->io_ns_per_ball = io > 0 ? io : 0;
    k->fill_balls = nfill;
    k->measure_ms = bcl_now_ms() - t0;
    return BCL_OK;
}

int bcl_launch_costs_get(bcl_context *c, const float *params, bcl_launch_costs *out, bcl_error *e)
{
    bcl_launch_costs *k = bcl_context_costs(c);
    bool keep;
    if (k->known || bcl_launch_costs_read(c, k, &keep)) {
        *out = *k;
        return BCL_OK;
    }
    /* The measurement sets the figures alone: note and warn stay as read. */
    int rc = costs_measure(c, params, k, e);
    if (rc) {
        memset(k, 0, sizeof *k);
        return rc;
    }
    k->known = true;
    k->source = "measured";
    /* Kept when the context is destroyed (bcl_launch_costs_keep), after the
     * run's own files: ours must not come between a run and its outputs. */
    k->unsaved = keep;
    if (keep)
        bcl_context_on_destroy(c, bcl_launch_costs_keep);
    *out = *k;
    return BCL_OK;
}
