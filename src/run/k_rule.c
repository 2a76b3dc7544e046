/*
 * Steps per launch from a time budget (docs/PERFORMANCE.md, "Steps per
 * launch"). A launch of K steps over N balls costs about
 *
 *     fixed + K * step      fixed = the launch's own cost + loading and
 *                                   storing every ball once
 *                           step  = one step of N balls
 *
 * K pays off the fixed cost when fixed <= share * K * step: the smallest
 * such K is the rule's, for beyond it a larger K gains at most `share` and
 * only delays progress, Ctrl-C and the next launch of a display GPU. The
 * budget (aiming at BUDGET_AIM of it) and S bound K. Pure, so that it can be
 * unit-tested: the measured figures are src/run/launch_costs.c's.
 */
#include "run/run.h"

#include <math.h>
#include <stdlib.h>

/* The kernels take K as a uint; --steps-per-launch stops at 2^24 too. */
#define K_MAX (1u << 24)
/* The rule aims a launch at this share of the budget: the expected time is
 * a model of the device, and the room keeps a launch that runs some 20%
 * longer than expected within the budget (through PoCL at 10^6 balls an
 * aim of the whole 50 ms ran 51.1 ms). */
#define BUDGET_AIM 0.8

unsigned bcl_k_rule(double fixed_us, double step_us, uint64_t steps, double budget_ms, double share,
                    const char **reason, double *launch_ms)
{
    if (!(fixed_us >= 0))
        fixed_us = 0;
    if (!(step_us > 0))
        step_us = 1e-6; /* a step too fast to measure: the fixed cost decides */
    if (!(share > 0))
        share = BCL_LAUNCH_OVERHEAD_SHARE;
    if (!(budget_ms > 0))
        budget_ms = BCL_LAUNCH_BUDGET_MS;
    double need = ceil(fixed_us / (share * step_us));
    double cap = floor((BUDGET_AIM * budget_ms * 1e3 - fixed_us) / step_us);
    double k = need < 1 ? 1 : need;
    const char *why = "overhead";
    if (k > cap) {
        k = cap < 1 ? 1 : cap;
        why = "budget";
    }
    if (k > K_MAX) {
        k = K_MAX;
        why = "budget";
    }
    if (steps && k >= (double)steps) {
        k = (double)steps;
        why = "steps";
    }
    if (reason)
        *reason = why;
    if (launch_ms)
        *launch_ms = (fixed_us + k * step_us) / 1e3;
    return (unsigned)k;
}

int bcl_launch_budget_parse(const char *text, const char *what, double *ms, bcl_error *e)
{
    char *end = NULL;
    double v = text ? strtod(text, &end) : NAN;
    if (!text || !*text || end == text || *end || !(v >= 0.1 && v <= 600000))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s: '%s' is not valid: expected milliseconds from 0.1 to 600000", what,
                        text ? text : "");
    *ms = v;
    return BCL_OK;
}

int bcl_launch_budget_env(double *ms, bcl_error *e)
{
    const char *env = getenv("BALLCL_LAUNCH_BUDGET_MS");
    *ms = BCL_LAUNCH_BUDGET_MS;
    if (!env || !*env)
        return BCL_OK;
    return bcl_launch_budget_parse(env, "BALLCL_LAUNCH_BUDGET_MS", ms, e);
}
