/*
 * The defaults against a sweep (docs/PERFORMANCE.md): is the untuned plan of
 * a plain run as fast as the best K x local size x variant? All in one
 * process on one simulation (a sweep over N = 10^3 ... 10^8 costs seconds,
 * not a start-up per configuration), the repeats interleaved so that a busy
 * moment weighs on every configuration alike.
 */
#include "measure/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Validation on at most this many balls with K at most VALIDATE_K: the
 * bits of a ball depend neither on N nor on K beyond the loop. */
#define VALIDATE_BALLS 16384
#define VALIDATE_K     100
#define MAX_CONFIGS    512
/* A configuration expected to take more than this many budgets a launch is
 * not run (a display GPU's watchdog may end it); the others are, and only
 * their measured longest launch decides whether they are within the budget:
 * the expectation is a model, and a sweep that trusted it could never find
 * a K the model underrates. */
#define SKIP_OVER_BUDGETS 4.0

static const unsigned default_ks[] = {10, 100, 1000, 10000};
/* 0: the driver's choice; SIZE_MAX: the automatic rule. */
static const size_t default_locals[] = {0, SIZE_MAX, 32, 64, 128, 256, 512, 1024};

typedef struct sweeper {
    bcl_context *c;
    const bcl_sweep_opts *o;
    bcl_sweep_result *r;
    double budget_ms;
    bcl_launch_costs costs;
} sweeper;

static int add(sweeper *s, const char *role, const bcl_plan_request *req, bcl_error *e)
{
    if (s->r->count == MAX_CONFIGS)
        return BCL_OK;
    bcl_sweep_config *x = &s->r->cfg[s->r->count];
    memset(x, 0, sizeof *x);
    x->role = role;
    int rc = bcl_plan_resolve(s->c, req, &x->plan, e);
    if (rc)
        return rc;
    /* The same configuration twice (the automatic size among the sizes)
     * is timed once. */
    for (size_t i = 1; i < s->r->count; i++) {
        const bcl_plan *p = &s->r->cfg[i].plan;
        if (strcmp(role, "sweep") == 0 && strcmp(s->r->cfg[i].role, "sweep") == 0 &&
            p->steps_per_launch == x->plan.steps_per_launch &&
            strcmp(p->kernel, x->plan.kernel) == 0 && p->launch.local == x->plan.launch.local &&
            strcmp(p->launch.how, "driver") == strcmp(x->plan.launch.how, "driver"))
            return BCL_OK;
    }
    double fixed_us, step_us;
    bcl_launch_costs_estimate(&s->costs, s->o->balls, &fixed_us, &step_us);
    double expect_ms = (fixed_us + x->plan.steps_per_launch * step_us) / 1e3;
    x->over_budget = expect_ms > SKIP_OVER_BUDGETS * s->budget_ms;
    x->timed = !x->over_budget;
    s->r->count++;
    return BCL_OK;
}

/* The configurations: the untuned default of a plain run, the tuned one,
 * then every variant x local size x K. */
static int configure(sweeper *s, bcl_error *e)
{
    const bcl_sweep_opts *o = s->o;
    bcl_plan_request base = {.params = o->params,
                             .balls = o->balls,
                             .steps = o->steps,
                             .launch = {.mode = BCL_LOCAL_AUTO},
                             .launch_budget_ms = s->budget_ms};
    int rc = add(s, "default", &base, e);
    const bcl_tuned *t = bcl_context_tuned(s->c, NULL);
    if (rc == BCL_OK && t->fused.found) {
        bcl_plan_request tuned = base;
        tuned.take_tuned = true;
        rc = add(s, "tuned", &tuned, e);
    }
    if (rc)
        return rc;
    bcl_variant vars[BCL_MAX_VARIANTS];
    size_t nv;
    if ((rc = bcl_variants_list(s->c, true, vars, BCL_MAX_VARIANTS, &nv, e)))
        return rc;
    unsigned ks[16];
    size_t nk = 0;
    const unsigned *kl = o->ks ? o->ks : default_ks;
    size_t nkl = o->ks ? o->nks : sizeof default_ks / sizeof default_ks[0];
    bool has_s = false;
    for (size_t i = 0; i < nkl && nk < 15; i++)
        if (kl[i] >= 1 && kl[i] <= o->steps) {
            ks[nk++] = kl[i];
            has_s = has_s || kl[i] == o->steps;
        }
    if (!has_s && o->steps <= (1u << 24))
        ks[nk++] = (unsigned)o->steps; /* the whole run in one launch, always */
    const size_t *locals = o->locals ? o->locals : default_locals;
    size_t nl = o->locals ? o->nlocals : sizeof default_locals / sizeof default_locals[0];
    if (nl > 32)
        nl = 32;
    for (size_t v = 0; v < nv && rc == BCL_OK; v++) {
        for (size_t l = 0; l < nl && rc == BCL_OK; l++) {
            for (size_t k = 0; k < nk && rc == BCL_OK; k++) {
                bcl_plan_request q = base;
                q.variant = vars[v].name;
                q.steps_per_launch = ks[k];
                q.fused = true;
                if (locals[l] != SIZE_MAX) /* else the base's automatic rule */
                    q.launch = (bcl_launch){.mode = locals[l] ? BCL_LOCAL_FIXED : BCL_LOCAL_DRIVER,
                                            .local = locals[l]};
                bcl_error sub = {0};
                rc = add(s, "sweep", &q, &sub);
                /* A size beyond this kernel's limit is not a configuration. */
                if (rc == BCL_EXIT_INPUT && q.launch.mode == BCL_LOCAL_FIXED)
                    rc = BCL_OK;
                if (rc)
                    *e = sub; /* the caller's now */
                else
                    bcl_error_clear(&sub);
            }
        }
    }
    return rc;
}

/* Validates every configuration on the first balls, K at most VALIDATE_K. */
static int validate(sweeper *s, const float *init, bcl_error *e)
{
    size_t n = s->o->balls < VALIDATE_BALLS ? s->o->balls : VALIDATE_BALLS;
    float *scratch = malloc(n * 4 * sizeof(float));
    if (!scratch)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory");
    bcl_sim *sim = NULL;
    int rc = bcl_sim_create(s->c, init, n, &sim, e);
    for (size_t i = 0; i < s->r->count && rc == BCL_OK; i++) {
        bcl_sweep_config *x = &s->r->cfg[i];
        bcl_plan p = x->plan;
        if (p.steps_per_launch > VALIDATE_K)
            p.steps_per_launch = VALIDATE_K;
        p.check_steps = bcl_check_steps(p.steps_per_launch);
        bcl_validation v;
        rc = bcl_check_sim(sim, &p, init, 0, scratch, &v, e);
        x->validated = rc == BCL_OK && v.mismatches == 0;
        if (!x->validated)
            x->timed = false;
    }
    bcl_sim_destroy(sim);
    free(scratch);
    return rc;
}

int bcl_sweep(bcl_context *c, const bcl_sweep_opts *o, bcl_sweep_result *r, bcl_error *e)
{
    memset(r, 0, sizeof *r);
    r->best = SIZE_MAX;
    if (o->balls == 0 || o->steps == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "a sweep needs balls and steps");
    sweeper s = {.c = c, .o = o, .r = r, .budget_ms = o->launch_budget_ms};
    int rc = s.budget_ms > 0 ? BCL_OK : bcl_launch_budget_env(&s.budget_ms, e);
    if (rc == BCL_OK)
        rc = bcl_launch_costs_get(c, o->params, &s.costs, e);
    if (rc)
        return rc;
    r->cfg = calloc(MAX_CONFIGS, sizeof *r->cfg);
    size_t n = o->balls;
    float *init = malloc(n * 4 * sizeof(float));
    double *samples = NULL;
    bcl_sim *sim = NULL;
    unsigned repeats = o->repeats ? o->repeats : 5;
    if (!r->cfg || !init) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", n);
        goto out;
    }
    bcl_model_fill(bcl_context_model(c), init, 0, n, o->init, o->seed, o->params);
    if ((rc = configure(&s, e)) || (rc = validate(&s, init, e)))
        goto out;
    samples = calloc(r->count * repeats, sizeof *samples);
    if (!samples) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
        goto out;
    }
    if ((rc = bcl_sim_create(c, init, n, &sim, e)))
        goto out;
    unsigned total = (unsigned)(r->count * (repeats + 1)), done = 0;
    /* Round 0 is the warm run of each configuration, untimed. */
    for (unsigned k = 0; k <= repeats && rc == BCL_OK; k++) {
        for (size_t i = 0; i < r->count && rc == BCL_OK; i++, done++) {
            bcl_sweep_config *x = &r->cfg[i];
            if (!x->timed)
                continue;
            if (o->progress) {
                char what[128];
                snprintf(what, sizeof what, "%s %s K %u local %zu, %s %u of %u", x->role,
                         x->plan.kernel, x->plan.steps_per_launch, x->plan.launch.local,
                         k ? "run" : "warm run", k, repeats);
                o->progress(o->progress_arg, done, total, what);
            }
            bcl_sim_timing t;
            /* A warm launch before every timed run, not only the first: the
             * configurations take turns, and the first launch of a kernel
             * after another kernel ran is slower on some GPUs (seen on the
             * H200: the untuned default, first in each round, timed 13% over
             * the same configuration later in the round). */
            rc = bcl_sim_warmup(sim, &x->plan, NULL, e);
            if (rc == BCL_OK)
                rc = bcl_sim_run(sim, &x->plan, o->steps, &t, e);
            if (rc || k == 0)
                continue;
            samples[i * repeats + k - 1] = t.device_ms * 1e3 / (double)o->steps;
            r->host_clock |= t.host_clock;
            if (t.max_launch_ms > x->max_launch_ms)
                x->max_launch_ms = t.max_launch_ms;
        }
    }
    if (rc)
        goto out;
    for (size_t i = 0; i < r->count; i++) {
        bcl_sweep_config *x = &r->cfg[i];
        if (!x->timed)
            continue;
        bcl_stats_compute(samples + i * repeats, repeats, &x->us);
        if (x->max_launch_ms > s.budget_ms)
            x->over_budget = true;
        if (!x->over_budget && (r->best == SIZE_MAX || x->us.median < r->cfg[r->best].us.median))
            r->best = i;
    }
out:
    bcl_sim_destroy(sim);
    free(samples);
    free(init);
    if (rc)
        bcl_sweep_result_free(r);
    return rc;
}

void bcl_sweep_result_free(bcl_sweep_result *r)
{
    free(r->cfg);
    r->cfg = NULL;
    r->count = 0;
}
