/*
 * The tuner (docs/BENCHMARK.md): measure instead of guessing. Three sweeps,
 * each candidate validated bit for bit before it is timed: 1. the one-step
 * kernel, every variant x every local size (the preferred multiple times 1,
 * 2, 4, ... up to the kernel's limit) and the driver's choice; 2. the same
 * for the k-step kernel at the device's default K (bcl_default_k); 3. K, for
 * the winner of 2, every K and that winner timed with their repeats
 * interleaved. The winner of 1 and 2 is the lowest median; of K the smallest
 * within 3% of the fastest: once the launch cost is paid off, a larger K
 * only delays the results.
 */
#include "measure/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LOCALS 24
#define K_WITHIN   1.03

static const unsigned default_ks[] = {4, 16, 64, 100, 256, 1024};

size_t bcl_tune_local_sizes(size_t pm, size_t limit, size_t items, size_t *out, size_t cap)
{
    if (pm == 0)
        pm = 1;
    if (limit == 0)
        limit = 1;
    if (pm > limit)
        pm = 1;
    size_t top = bcl_round_up(items ? items : 1, pm);
    size_t count = 0;
    for (size_t l = pm; l <= limit && count < cap; l *= 2) {
        if (l > top && count > 0)
            break;
        out[count++] = l;
    }
    return count;
}

typedef struct tuner {
    bcl_context *c;
    const bcl_tune_opts *o;
    bcl_sim *sim;
    float *init, *scratch;
    bcl_tune_result *r;
    size_t cap;
    unsigned done, total;
} tuner;

static int add_candidate(tuner *t, bool fused, const char *variant, size_t local, unsigned k,
                         bcl_error *e)
{
    if (t->r->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        bcl_tune_candidate *grown = realloc(t->r->cand, cap * sizeof *grown);
        if (!grown)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
        t->r->cand = grown;
        t->cap = cap;
    }
    bcl_tune_candidate *c = &t->r->cand[t->r->count++];
    *c = (bcl_tune_candidate){.fused = fused, .local = local, .steps_per_launch = k};
    snprintf(c->variant, sizeof c->variant, "%s", variant);
    return BCL_OK;
}

/* The plan of a candidate: everything given, nothing left to the rules. */
static int plan_of(const tuner *t, const bcl_tune_candidate *c, bcl_plan *p, bcl_error *e)
{
    bcl_plan_request r = {
        .params = t->o->params,
        .balls = t->o->balls,
        .steps_per_launch = c->steps_per_launch,
        .sync = BCL_SYNC_END,
        .variant = c->variant,
        .fused = c->fused,
        .launch = {.mode = c->local ? BCL_LOCAL_FIXED : BCL_LOCAL_DRIVER, .local = c->local}};
    return bcl_plan_resolve(t->c, &r, p, e);
}

/* Validates candidate i and, when it gave the reference's bits, makes its
 * timer (*timer stays NULL otherwise). */
static int prepare(tuner *t, size_t i, bcl_timer **timer, bcl_error *e)
{
    bcl_tune_candidate *c = &t->r->cand[i];
    char what[96], local[24] = "driver";
    if (c->local)
        snprintf(local, sizeof local, "%zu", c->local);
    snprintf(what, sizeof what, "%s %s%s local %s K %u", c->fused ? "k-step" : "one-step",
             c->variant[0] ? "variant " : "base", c->variant, local, c->steps_per_launch);
    if (t->o->progress)
        t->o->progress(t->o->progress_arg, t->done, t->total, what);
    t->done++;
    bcl_plan plan;
    bcl_validation v;
    int rc = plan_of(t, c, &plan, e);
    if (rc == BCL_OK)
        rc = bcl_check_sim(t->sim, &plan, t->init, 0, t->scratch, &v, e);
    if (rc)
        return rc;
    c->validated = v.mismatches == 0;
    *timer = NULL;
    if (!c->validated)
        return BCL_OK; /* shown as failed, never timed */
    return bcl_timer_sim(t->sim, &plan, &t->o->measure, timer, e);
}

/* Validates and times the candidates idx[0..n) with their repeats
 * interleaved (repeat 1 of each, then repeat 2, ...), so that a busy
 * moment of a shared machine weighs on all of them alike: the K sweep
 * compares candidates whose times differ by a few percent. */
static int evaluate(tuner *t, const size_t *idx, size_t n, bcl_error *e)
{
    bcl_timer **timers = calloc(n, sizeof *timers);
    if (!timers)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    int rc = BCL_OK;
    for (size_t i = 0; i < n && rc == BCL_OK; i++)
        rc = prepare(t, idx[i], &timers[i], e);
    unsigned repeats = t->o->measure.repeats ? t->o->measure.repeats : 1;
    for (unsigned k = 0; k < repeats && rc == BCL_OK; k++)
        for (size_t i = 0; i < n && rc == BCL_OK; i++)
            if (timers[i])
                rc = bcl_timer_repeat(timers[i], e);
    for (size_t i = 0; i < n; i++) {
        if (rc == BCL_OK && timers[i])
            bcl_timer_result(timers[i], &t->r->cand[idx[i]].m);
        bcl_timer_free(timers[i]);
    }
    free(timers);
    return rc;
}

int bcl_tune_locals(bcl_context *c, const bcl_plan *p, size_t balls, size_t *out, size_t cap,
                    size_t *count, size_t *pm_out, bcl_error *e)
{
    *count = 0;
    const bcl_device_info *d = bcl_context_device(c);
    cl_kernel kern;
    unsigned b = p->balls_per_item;
    int rc = bcl_context_kernel(c, p->kernel, &kern, e);
    size_t kwg, limit, pm;
    if (rc == BCL_OK)
        rc = bcl_kernel_groups(d, kern, &kwg, &limit, &pm, e);
    if (rc)
        return rc;
    if (pm_out)
        *pm_out = pm;
    if (cap == 0)
        return BCL_OK;
    size_t items = (balls + b - 1) / b;
    size_t n = bcl_tune_local_sizes(pm, limit, items, out, cap - 1);
    /* The automatic choice is always a candidate, so the winner is never
     * one that measured slower than it. */
    size_t la = bcl_local_auto(kwg, pm, d->max_work_group, d->max_item_sizes[0], d->compute_units,
                               items, NULL, 0);
    bool have = false;
    for (size_t i = 0; i < n; i++)
        have = have || out[i] == la;
    if (!have && la >= 1 && la <= limit)
        out[n++] = la;
    *count = n;
    return BCL_OK;
}

/* Adds one candidate per variant x local size (and the driver's choice). */
static int add_sweep(tuner *t, bool fused, unsigned k, bcl_error *e)
{
    bcl_variant vars[BCL_MAX_VARIANTS];
    size_t nv;
    int rc = bcl_variants_list(t->c, fused, vars, BCL_MAX_VARIANTS, &nv, e);
    for (size_t v = 0; v < nv && rc == BCL_OK; v++) {
        bcl_plan_request req = {.params = t->o->params,
                                .balls = t->o->balls,
                                .steps_per_launch = k,
                                .variant = vars[v].name,
                                .fused = fused};
        bcl_plan plan;
        size_t locals[MAX_LOCALS], nl;
        if ((rc = bcl_plan_resolve(t->c, &req, &plan, e)) ||
            (rc = bcl_tune_locals(t->c, &plan, t->o->balls, locals, MAX_LOCALS, &nl, NULL, e)))
            break;
        for (size_t i = 0; i < nl && rc == BCL_OK; i++)
            rc = add_candidate(t, fused, vars[v].name, locals[i], k, e);
        if (rc == BCL_OK)
            rc = add_candidate(t, fused, vars[v].name, 0, k, e);
    }
    return rc;
}

/* Index of the validated candidate in [from, to) with the lowest median. */
static size_t fastest(const bcl_tune_result *r, size_t from, size_t to)
{
    size_t best = SIZE_MAX;
    for (size_t i = from; i < to; i++)
        if (r->cand[i].validated &&
            (best == SIZE_MAX || r->cand[i].m.device_us.median < r->cand[best].m.device_us.median))
            best = i;
    return best;
}

static void set_entry(bcl_tuned_entry *t, const bcl_tune_candidate *c)
{
    t->found = true;
    snprintf(t->variant, sizeof t->variant, "%s", c->variant);
    t->local = c->local;
    t->steps_per_launch = c->steps_per_launch;
    t->us_per_step = c->m.device_us.median;
}

static int run_tune(tuner *t, bcl_error *e)
{
    const bcl_tune_opts *o = t->o;
    bcl_tune_result *r = t->r;
    const unsigned *ks = o->ks ? o->ks : default_ks;
    size_t nks = o->ks ? o->nks : sizeof default_ks / sizeof default_ks[0];
    /* Sweep 2 at the device's default K (docs/BENCHMARK.md): on a CPU a
     * K of 100 would rank variants and local sizes by their loads and
     * stores as much as by their steps. */
    unsigned k0 = bcl_default_k(bcl_context_device(t->c)->type);
    int rc = add_sweep(t, false, 1, e);
    size_t single_end = r->count;
    if (rc == BCL_OK)
        rc = add_sweep(t, true, k0, e);
    size_t fused_end = r->count;
    if (rc)
        return rc;
    /* The K sweep is known only later; count it now. */
    t->total = (unsigned)(fused_end + nks);
    for (size_t i = 0; i < fused_end && rc == BCL_OK; i++)
        rc = evaluate(t, &i, 1, e);
    if (rc)
        return rc;

    size_t bs = fastest(r, 0, single_end);
    if (bs != SIZE_MAX)
        set_entry(&r->best.single, &r->cand[bs]);
    size_t bf = fastest(r, single_end, fused_end);
    if (bf != SIZE_MAX) {
        bcl_tune_candidate base = r->cand[bf];
        size_t *idx = malloc((nks + 2) * sizeof *idx), n = 0;
        if (!idx)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
        /* The winner of sweep 2 is timed again beside the other K, and so
         * is the untuned default plan of a plain run. */
        idx[n++] = bf;
        size_t di = SIZE_MAX;
        bcl_plan dp;
        bcl_plan_request dreq = {.params = o->params,
                                 .balls = o->balls,
                                 .fused = true,
                                 .launch = {.mode = BCL_LOCAL_AUTO},
                                 .launch_budget_ms = o->launch_budget_ms};
        if ((rc = bcl_plan_resolve(t->c, &dreq, &dp, e)) == BCL_OK && dp.fused &&
            (rc = add_candidate(t, true, dp.variant, dp.launch.local, dp.steps_per_launch, e)) ==
                BCL_OK) {
            di = r->count - 1;
            idx[n++] = di;
        }
        for (size_t i = 0; i < nks && rc == BCL_OK; i++) {
            if (ks[i] == k0)
                continue; /* measured in sweep 2 */
            if ((rc = add_candidate(t, true, base.variant, base.local, ks[i], e)) == BCL_OK)
                idx[n++] = r->count - 1;
        }
        if (rc == BCL_OK && t->o->progress)
            t->o->progress(t->o->progress_arg, t->done, t->total, "k-step, every K side by side");
        t->done += (unsigned)(n - 1);
        if (rc == BCL_OK)
            rc = evaluate(t, idx, n, e);
        free(idx);
        if (rc)
            return rc;
        /* The smallest K within K_WITHIN of the fastest, among sweep 3
         * and the winner of sweep 2. */
        size_t best = fastest(r, fused_end, r->count);
        if (best == SIZE_MAX || r->cand[bf].m.device_us.median <= r->cand[best].m.device_us.median)
            best = bf;
        double bar = r->cand[best].m.device_us.median * K_WITHIN;
        size_t pick = best;
        for (size_t i = fused_end; i < r->count; i++)
            if (r->cand[i].validated && r->cand[i].m.device_us.median <= bar &&
                r->cand[i].steps_per_launch < r->cand[pick].steps_per_launch)
                pick = i;
        if (r->cand[bf].m.device_us.median <= bar &&
            r->cand[bf].steps_per_launch < r->cand[pick].steps_per_launch)
            pick = bf;
        /* Never a configuration slower than the default measured in the
         * same run: then the default's is stored, and how close it was. */
        if (di != SIZE_MAX && r->cand[di].validated) {
            double dus = r->cand[di].m.device_us.median;
            r->default_us = dus;
            double fast = r->cand[best].m.device_us.median;
            if (dus < fast)
                fast = dus;
            r->default_within = fast > 0 ? dus / fast - 1 : 0;
            if (dus <= r->cand[pick].m.device_us.median) {
                pick = di;
                r->default_kept = true;
            }
        }
        set_entry(&r->best.fused, &r->cand[pick]);
    }

    /* The automatic choice, for comparison: sweep 1 measured it (its local
     * size is always a candidate), in the same conditions as the winner. */
    bcl_plan_request req = {
        .params = o->params, .balls = o->balls, .steps_per_launch = 1, .variant = ""};
    bcl_plan plan;
    if ((rc = bcl_plan_resolve(t->c, &req, &plan, e)))
        return rc;
    for (size_t i = 0; i < single_end; i++)
        if (r->cand[i].validated && r->cand[i].variant[0] == '\0' &&
            r->cand[i].local == plan.launch.local)
            r->auto_us = r->cand[i].m.device_us.median;
    return BCL_OK;
}

int bcl_tune(bcl_context *c, const bcl_tune_opts *o, bcl_tune_result *r, bcl_error *e)
{
    memset(r, 0, sizeof *r);
    const bcl_model *m = bcl_context_model(c);
    size_t n = o->balls;
    if (n == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "no balls to tune with");
    tuner t = {.c = c, .o = o, .r = r};
    t.init = malloc(n * 4 * sizeof(float));
    t.scratch = malloc(n * 4 * sizeof(float));
    int rc = BCL_OK;
    if (!t.init || !t.scratch) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", n);
        goto out;
    }
    m->init(t.init, 0, n, o->init, o->seed, o->params);
    if ((rc = bcl_sim_create(c, t.init, n, &t.sim, e)))
        goto out;
    rc = run_tune(&t, e);
    if (rc == BCL_OK) {
        r->best.balls = n;
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(r->best.date, sizeof r->best.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
        if (!r->best.single.found && !r->best.fused.found)
            rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                          "no launch configuration gave the C reference's bits on '%s'",
                          bcl_context_device(c)->name);
    }
out:
    bcl_sim_destroy(t.sim);
    free(t.init);
    free(t.scratch);
    /* With no valid configuration the candidates still say what failed. */
    if (rc && rc != BCL_EXIT_MISMATCH)
        bcl_tune_result_free(r);
    return rc;
}

void bcl_tune_result_free(bcl_tune_result *r)
{
    free(r->cand);
    r->cand = NULL;
    r->count = 0;
}
