/*
 * The launch plan (docs/DESIGN.md): one place that turns what a caller asks
 * for into what runs. Every command and the survey resolve their
 * configurations here, so the rules below exist once:
 *
 *   tuned    the record 'ballcl tune' stored is taken whole (K, variant
 *            and local size of one entry) or not at all: when the request
 *            leaves all three open (take_tuned, which bcl_plan_tuned_rule
 *            sets for every run), or asks for it with
 *            --local tuned (then for what it leaves open). Never a tuned K
 *            with an untuned variant or local size: their best values
 *            depend on K (docs/BENCHMARK.md);
 *   K        the caller's; 1 with --sync every; 1 with --local 1 and no
 *            variant (the seed's own launch, whose cost a fused launch
 *            would hide); the tuned K (never more than S); else the rule
 *            of k_rule.c: the smallest K that pays off a launch's fixed
 *            cost, within the launch budget, at most S, from the device's
 *            launch costs (measured once and kept: launch_costs.c);
 *   variant  the caller's (checked against the program); the tuned one;
 *            else the widest up to BALLCL_FORCE_BALLS_PER_ITEM (a test
 *            setting) for a k-step kernel; else bcl_variant_default;
 *   local    the caller's size (checked against the kernel's limit), the
 *            driver's choice, the tuned size for this very kernel, or the
 *            automatic rule of launch.c.
 */
#include "run/run.h"
#include "ocl/clcall.h"

#include <stdio.h>
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
    else if (r->take_tuned || r->launch.mode == BCL_LOCAL_TUNED)
        snprintf(out, size, "not used: no %s entry stored", kind);
    else
        snprintf(out, size,
                 "not used: %s given (the stored configuration is taken whole or not at all)",
                 r->steps_per_launch ? "K (--steps-per-launch, steps_per_launch)"
                 : r->variant        ? "the variant (--variant)"
                                     : "the local size (--local, local)");
}

/* K by the rule of k_rule.c, from the device's launch costs (measured once
 * and kept) for this plan's balls; the old constants only when S is 1. */
static int rule_k(bcl_context *c, const bcl_plan_request *r, bcl_plan *p, bcl_error *e)
{
    p->k_how = "default rule";
    if (r->steps == 1 || (r->steps == 0 && !r->fused)) {
        p->steps_per_launch = 1;
        p->k_reason = "steps";
        return BCL_OK;
    }
    double budget = r->launch_budget_ms;
    int rc = budget > 0 ? BCL_OK : bcl_launch_budget_env(&budget, e);
    if (rc)
        return rc;
    p->launch_budget_ms = budget;
    if ((rc = bcl_launch_costs_get(c, r->params, &p->costs, e)))
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

/* K and where it came from. */
static int choose_k(bcl_context *c, const bcl_plan_request *r, const bcl_tuned *t, bcl_plan *p,
                    bcl_error *e)
{
    if (r->steps_per_launch) {
        p->steps_per_launch = r->steps_per_launch;
        p->k_how = p->k_reason = "given";
    } else if (r->sync == BCL_SYNC_EVERY) {
        p->steps_per_launch = 1;
        p->k_how = "1 with --sync every";
        p->k_reason = "sync";
    } else if (r->launch.mode == BCL_LOCAL_FIXED && r->launch.local == 1 && !r->variant &&
               !r->fused) {
        p->steps_per_launch = 1;
        p->k_how = "1 with --local 1, the seed's launch";
        p->k_reason = "seed-launch";
    } else if (wants_tuned(r) && t->fused.found && (r->steps > 1 || (r->steps == 0 && r->fused))) {
        unsigned k = t->fused.steps_per_launch;
        p->steps_per_launch = r->steps && r->steps < k ? (unsigned)r->steps : k;
        p->k_how = p->k_reason = "tuned";
    } else {
        return rule_k(c, r, p, e);
    }
    return BCL_OK;
}

/* The variant: the caller's when it names one of the program's, the tuned
 * one with --local tuned, else the rule. */
static int choose_variant(bcl_context *c, const bcl_plan_request *r, const bcl_tuned_entry *tuned,
                          bcl_plan *p, bcl_error *e)
{
    const char *want = r->variant;
    if (want && strcmp(want, "base") == 0)
        want = "";
    p->variant_how = want ? "given" : "rule";
    if (want && !*want) {
        p->variant[0] = '\0';
        return BCL_OK;
    }
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
            snprintf(p->variant, sizeof p->variant, "%s", bcl_variant_widest(forced, vars, nv));
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
    switch (l->mode) {
    case BCL_LOCAL_DRIVER:
        l->local = 0;
        l->how = "driver";
        snprintf(l->why, sizeof l->why, "NULL local size: the runtime chooses");
        return BCL_OK;
    case BCL_LOCAL_FIXED:
        if (l->local > limit)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "--local %zu: exceeds the limit of %zu work-items for this kernel on "
                            "'%s'",
                            l->local, limit, d->name);
        l->how = "user";
        snprintf(l->why, sizeof l->why, "given with --local");
        return BCL_OK;
    case BCL_LOCAL_TUNED:
        /* 0 in the tuned file is the driver's choice. */
        if (tuned && tuned->local <= limit) {
            l->local = tuned->local;
            l->how = "tuned";
            snprintf(l->why, sizeof l->why, "stored by 'ballcl tune' for this device%s",
                     tuned->local ? "" : ": NULL local size, the runtime chooses");
            return BCL_OK;
        }
        l->local = bcl_local_auto(kwg, pm, d->max_work_group, d->max_item_sizes[0],
                                  d->compute_units, items, l->why, sizeof l->why);
        l->how = "auto";
        char tmp[sizeof l->why];
        memcpy(tmp, l->why, sizeof tmp);
        snprintf(l->why, sizeof l->why, "no tuned size stored; %.130s", tmp);
        return BCL_OK;
    case BCL_LOCAL_AUTO:
    default:
        l->local = bcl_local_auto(kwg, pm, d->max_work_group, d->max_item_sizes[0],
                                  d->compute_units, items, l->why, sizeof l->why);
        l->how = "auto";
        return BCL_OK;
    }
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
    /* The tuned file is consulted only when the plan leaves something to
     * it; a file that cannot be used is a warning, not an error. */
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
    double budget;
    int rc = r->launch_budget_ms > 0 ? BCL_OK : bcl_launch_budget_env(&budget, e);
    if (rc == BCL_OK)
        rc = choose_k(c, r, t, p, e);
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
