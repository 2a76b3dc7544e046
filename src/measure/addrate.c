/*
 * The add-rate bound (docs/PERFORMANCE.md): float32 adds per second the
 * device retires (cl/addrate.cl), so N * steps * ops / rate is the least
 * time any kernel can take; bench and survey report fused rates against it.
 *
 * Chains of the native float width (bcl_chain_timer), the count with the
 * best median kept: the units' throughput, not their latency. A repeat is
 * ten launches back to back, as a simulation's are: a busy CPU's fair-share
 * scheduler favours the runtime's threads that sleep between short
 * launches, so one long launch could time a bound below a kernel of many
 * short ones. Every chain is compared bit for bit with the host's adds: a
 * compiler that folded or dropped adds is caught rather than believed.
 */
#include "measure/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned chain_counts[] = {4, 8, 12, 16};

/* The increment and start values: exact in float, far from overflow and
 * denormals for any number of adds the calibration can choose. */
#define INC 0.0009765625f /* 2^-10 */
static float start_value(unsigned j)
{
    return 1.0f + (float)j * 0.0078125f; /* 1 + j/128, j < 256 */
}

/* The host's chains after `steps` adds each. Chain-major inner loop: the
 * host's adds are independent too, so this takes milliseconds even for the
 * millions of adds of a chain. */
static void want_chains(const bcl_chain_timer *t, unsigned chains, uint64_t steps,
                        unsigned char *out)
{
    size_t per = (size_t)chains * t->w;
    float want[BCL_CHAIN_VALUES];
    for (size_t j = 0; j < per; j++)
        want[j] = start_value((unsigned)j);
    for (uint64_t i = 0; i < steps; i++)
        for (size_t j = 0; j < per; j++)
            want[j] = want[j] + INC;
    memcpy(out, want, per * sizeof *want);
}

static void show_value(const bcl_chain_timer *t, const unsigned char *value, char *text, size_t n)
{
    (void)t;
    float f;
    memcpy(&f, value, sizeof f);
    snprintf(text, n, "%.9g", (double)f);
}

struct bcl_add_timer {
    bcl_chain_timer t;
};

void bcl_add_timer_free(bcl_add_timer *t)
{
    if (!t)
        return;
    bcl_chain_timer_end(&t->t);
    free(t);
}

int bcl_add_timer_create(bcl_context *c, const bcl_measure_opts *mo, bcl_add_timer **out,
                         bcl_error *e)
{
    *out = NULL;
    bcl_add_timer *t = calloc(1, sizeof *t);
    if (!t)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    static const float inc = INC;
    bcl_chain_timer *ct = &t->t;
    ct->c = c;
    ct->kernel = "addrate";
    ct->what = "add-rate";
    ct->ops_name = "adds";
    ct->w = bcl_chain_width(bcl_context_device(c)->native_vector_width_float);
    ct->nsets = sizeof chain_counts / sizeof chain_counts[0];
    for (unsigned i = 0; i < ct->nsets; i++)
        ct->set[i].chains = chain_counts[i];
    ct->scalar = sizeof(float);
    ct->step_ops = ct->check_share = 1;
    ct->arg = &inc;
    ct->arg_size = sizeof inc;
    ct->want = want_chains;
    ct->show = show_value;
    float start[BCL_CHAIN_VALUES];
    for (unsigned j = 0; j < BCL_CHAIN_VALUES; j++)
        start[j] = start_value(j);
    char defines[32];
    snprintf(defines, sizeof defines, "-DBCL_W=%u", ct->w);
    int rc = bcl_chain_timer_start(ct, "addrate.cl", defines, start, mo, e);
    if (rc)
        bcl_add_timer_free(t);
    else
        *out = t;
    return rc;
}

int bcl_add_timer_repeat(bcl_add_timer *t, bcl_error *e)
{
    return bcl_chain_timer_repeat(&t->t, e);
}

int bcl_add_timer_result(bcl_add_timer *t, bcl_add_rate *out, bcl_error *e)
{
    memset(out, 0, sizeof *out);
    out->width = t->t.w;
    out->global = t->t.sh.global;
    out->local = t->t.sh.local;
    const bcl_chain_set *best = NULL;
    int rc = bcl_chain_timer_best(&t->t, &out->gflop_per_s, &best, e);
    if (rc)
        return rc;
    out->chains = best->chains;
    out->adds_per_repeat = (uint64_t)best->ops;
    out->compared = t->t.compared;
    return BCL_OK;
}

int bcl_measure_add_rate(bcl_context *c, const bcl_measure_opts *mo, bcl_add_rate *out,
                         bcl_error *e)
{
    memset(out, 0, sizeof *out);
    bcl_add_timer *t;
    int rc = bcl_add_timer_create(c, mo, &t, e);
    if (rc)
        return rc;
    while (rc == BCL_OK && t->t.done < t->t.repeats)
        rc = bcl_add_timer_repeat(t, e);
    if (rc == BCL_OK)
        rc = bcl_add_timer_result(t, out, e);
    bcl_add_timer_free(t);
    return rc;
}
