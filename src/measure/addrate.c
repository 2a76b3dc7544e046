/*
 * The add-rate bound (docs/PERFORMANCE.md): float32 additions per second the
 * device retires, measured on the device by cl/addrate.cl. Each ball-step of
 * a model costs at least its float operations, so N * steps * ops / rate is
 * the least time any kernel can take; bench and survey report fused rates
 * against it.
 *
 * Sized from device queries: the chains are vectors of the device's native
 * float width, the launch shape is bcl_chain_shape's (src/measure/timing.h).
 * Several chain counts are measured, their repeats interleaved (repeat 1 of
 * every count, then repeat 2, ...) so that a busy moment weighs on all
 * alike, and the count with the best median counts: the figure is the
 * units' throughput rather than their latency.
 *
 * Same rules as every other figure (src/measure/timer.c): warm-up and
 * calibration never counted, device time from profiling events, median of
 * repeats. A repeat is ten launches queued back to back and timed from the
 * first one's start to the last one's end, as the launches of a simulation
 * are: on a CPU shared with other work, the runtime's worker threads that
 * wait between short launches get scheduled sooner than threads that run
 * without a pause (the kernel's fair-share scheduler rewards sleepers), so a
 * bound timed with one long launch could fall below a kernel of many short
 * ones on a busy machine. The result is validated: every chain's final value is compared
 * bit for bit with the same adds done on the host, so a compiler that folded
 * or dropped adds would be caught rather than believed.
 */
#include "measure/timing.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNROLL         4 /* adds per chain per loop iteration (cl/addrate.cl) */
#define MAX_W          16
#define MAX_CHAINS     16
#define LAUNCHES       10
#define DEFAULT_TARGET 50.0 /* ms per timed launch */

static const unsigned chain_counts[] = {4, 8, 12, 16};

/* The increment and start values: exact in float, far from overflow and
 * denormals for any number of adds the calibration can choose. */
#define INC 0.0009765625f /* 2^-10 */
static float start_value(unsigned j)
{
    return 1.0f + (float)j * 0.0078125f; /* 1 + j/128, j < 256 */
}

unsigned bcl_add_rate_width(const bcl_device_info *d)
{
    return bcl_chain_width(d->native_vector_width_float);
}

/* One chain count: its kernel, output buffer, launch size and repeats. */
typedef struct chain_set {
    unsigned chains;
    cl_kernel k;
    cl_mem out;
    unsigned iters;
    uint64_t adds; /* per launch */
    double *x;     /* GFLOP/s of each repeat */
} chain_set;

#define NSETS (sizeof chain_counts / sizeof chain_counts[0])

struct bcl_add_timer {
    bcl_context *c;
    const bcl_device_info *d;
    cl_program prog;
    cl_mem start;
    bcl_chain_size sh;
    unsigned w, repeats, done;
    uint64_t compared;
    chain_set set[NSETS];
};

static uint64_t adds_of(const bcl_add_timer *t, const chain_set *cs, unsigned iters)
{
    return (uint64_t)t->sh.global * cs->chains * t->w * UNROLL * iters;
}

/* `count` launches of cs with iters rounds each, queued back to back;
 * *ms is the checked time from the first one's start to the last one's
 * end. */
static int launch_n(bcl_add_timer *t, chain_set *cs, unsigned iters, unsigned count, double *ms,
                    bcl_error *e)
{
    return bcl_chain_launch(t->c, cs->k, &t->sh, iters, count, (double)adds_of(t, cs, iters), ms,
                            e);
}

/* Reads cs's chains back and compares every value with the host's adds
 * (cs->iters rounds). */
static int check(bcl_add_timer *t, chain_set *cs, bcl_error *e)
{
    size_t per = (size_t)cs->chains * t->w, n = t->sh.global * per;
    float *got = malloc(n * sizeof *got), want[MAX_CHAINS * MAX_W];
    if (!got)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    cl_int st = BCL_CL(clEnqueueReadBuffer, bcl_context_queue(t->c), cs->out, CL_TRUE, 0,
                       n * sizeof *got, got, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        free(got);
        return bcl_cl_fail(e, st, "clEnqueueReadBuffer", t->d->name);
    }
    for (size_t j = 0; j < per; j++)
        want[j] = start_value((unsigned)j);
    /* Chain-major inner loop: the host's adds are independent too, so this
     * takes milliseconds even for the millions of adds of a chain. */
    for (uint64_t i = 0; i < (uint64_t)cs->iters * UNROLL; i++)
        for (size_t j = 0; j < per; j++)
            want[j] = want[j] + INC;
    uint64_t bad = 0;
    size_t first = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i % per], sizeof(float)) != 0 && bad++ == 0)
            first = i;
    int rc = BCL_OK;
    if (bad)
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "add-rate kernel on '%s': %llu of %zu chain values differ from the host's "
                      "adds (first: work-item %zu, got %.9g, want %.9g)",
                      t->d->name, (unsigned long long)bad, n, first / per, (double)got[first],
                      (double)want[first % per]);
    t->compared += n;
    free(got);
    return rc;
}

/* Makes cs's kernel and buffer, then sizes it (bcl_chain_calibrate); the
 * chains of the target-sized launch are checked. */
static int prepare(bcl_add_timer *t, chain_set *cs, double target, bcl_error *e)
{
    char name[32];
    snprintf(name, sizeof name, "addrate_c%u", cs->chains);
    float inc = INC;
    int rc =
        bcl_chain_kernel(t->c, t->prog, name, t->start, sizeof inc, &inc,
                         t->sh.global * cs->chains * t->w * sizeof(float), &cs->k, &cs->out, e);
    if (rc)
        return rc;
    cs->x = calloc(t->repeats, sizeof *cs->x);
    if (!cs->x)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    rc = bcl_chain_calibrate(t->c, cs->k, &t->sh, (double)adds_of(t, cs, 1), target, &cs->iters, e);
    if (rc == BCL_OK)
        rc = check(t, cs, e);
    /* A timed repeat is LAUNCHES launches of a tenth each, queued back to
     * back like the launches of a simulation (see the top of this file). */
    cs->iters = cs->iters / LAUNCHES ? cs->iters / LAUNCHES : 1;
    cs->adds = adds_of(t, cs, cs->iters) * LAUNCHES;
    return rc;
}

void bcl_add_timer_free(bcl_add_timer *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < NSETS; i++) {
        if (t->set[i].k)
            clReleaseKernel(t->set[i].k);
        if (t->set[i].out)
            clReleaseMemObject(t->set[i].out);
        free(t->set[i].x);
    }
    if (t->start)
        clReleaseMemObject(t->start);
    if (t->prog)
        clReleaseProgram(t->prog);
    free(t);
}

int bcl_add_timer_create(bcl_context *c, const bcl_measure_opts *mo, bcl_add_timer **out,
                         bcl_error *e)
{
    *out = NULL;
    bcl_add_timer *t = calloc(1, sizeof *t);
    if (!t)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    t->c = c;
    t->d = bcl_context_device(c);
    t->w = bcl_add_rate_width(t->d);
    t->repeats = bcl_repeats(mo && mo->repeats ? mo->repeats : 5);
    double target = mo && mo->repeat_ms > 0 ? mo->repeat_ms : DEFAULT_TARGET;
    float start[MAX_CHAINS * MAX_W];
    for (unsigned j = 0; j < MAX_CHAINS * MAX_W; j++)
        start[j] = start_value(j);
    char defines[32];
    snprintf(defines, sizeof defines, "-DBCL_W=%u", t->w);
    int rc = bcl_chain_build(c, "addrate.cl", defines, &t->prog, e);
    if (rc == BCL_OK)
        rc = bcl_chain_shape(t->d, t->prog, t->w == 1 ? "addrate_c16" : NULL, &t->sh, e);
    if (rc == BCL_OK)
        rc = bcl_chain_input(c, start, sizeof start, &t->start, e);
    for (size_t i = 0; i < NSETS && rc == BCL_OK; i++) {
        t->set[i].chains = chain_counts[i];
        rc = prepare(t, &t->set[i], target, e);
    }
    if (rc) {
        bcl_add_timer_free(t);
        return rc;
    }
    *out = t;
    return BCL_OK;
}

int bcl_add_timer_repeat(bcl_add_timer *t, bcl_error *e)
{
    if (t->done == t->repeats)
        return BCL_OK;
    for (size_t i = 0; i < NSETS; i++) {
        chain_set *cs = &t->set[i];
        double ms = 0;
        int rc = launch_n(t, cs, cs->iters, LAUNCHES, &ms, e);
        if (rc)
            return rc;
        cs->x[t->done] = ms > 0 ? (double)cs->adds / (ms * 1e6) : 0; /* adds per ns */
    }
    t->done++;
    return BCL_OK;
}

int bcl_add_timer_result(bcl_add_timer *t, bcl_add_rate *out, bcl_error *e)
{
    memset(out, 0, sizeof *out);
    out->width = t->w;
    out->global = t->sh.global;
    out->local = t->sh.local;
    double x[BCL_MAX_REPEATS];
    for (size_t i = 0; i < NSETS; i++) {
        chain_set *cs = &t->set[i];
        /* What was timed is what is checked: the last launch's chains. */
        int rc = t->done ? check(t, cs, e) : BCL_OK;
        if (rc)
            return rc;
        bcl_stats st = {0};
        if (t->done) {
            memcpy(x, cs->x, t->done * sizeof *x);
            bcl_stats_compute(x, t->done, &st);
        }
        if (i == 0 || st.median > out->gflop_per_s.median) {
            out->gflop_per_s = st;
            out->chains = cs->chains;
            out->adds_per_repeat = cs->adds;
        }
    }
    out->compared = t->compared;
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
    while (rc == BCL_OK && t->done < t->repeats)
        rc = bcl_add_timer_repeat(t, e);
    if (rc == BCL_OK)
        rc = bcl_add_timer_result(t, out, e);
    bcl_add_timer_free(t);
    return rc;
}
