/*
 * Launch latency (docs/SURVEY.md): what one tiny launch costs, apart from
 * its work. Dispatch, CL_PROFILING_COMMAND_QUEUED to _START by the device's
 * clock, is how long a command waits in the runtime before it runs; the
 * round trip, the host's clock around the enqueue and clFinish, is what a
 * program that waits after every launch (the seed's mistake) pays per
 * launch. Warm-up never counted, median of repeats (src/measure/timer.c).
 */
#include "measure/timing.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <stdlib.h>
#include <string.h>

#define UNTIMED     3
#define MAX_REPEATS 10000

static int finish(bcl_sim *s, bcl_error *e)
{
    bcl_context *c = bcl_sim_context(s);
    cl_int st = BCL_CL(clFinish, bcl_context_queue(c));
    return st == CL_SUCCESS ? BCL_OK : bcl_cl_fail(e, st, "clFinish", bcl_context_device(c)->name);
}

/* One round trip, in microseconds of the host clock. */
static int round_trip(bcl_sim *s, const bcl_plan *o, double *us, bcl_error *e)
{
    double t0 = bcl_now_ms();
    int rc = bcl_sim_enqueue(s, o, NULL, e);
    if (rc == BCL_OK)
        rc = finish(s, e);
    *us = (bcl_now_ms() - t0) * 1e3;
    return rc;
}

/* The dispatch figure has no host-clock equivalent: on a device whose
 * profiling failed its check it is an error that says why. */
static int profiling_needed(const bcl_device_info *d, bcl_error *e)
{
    const char *why = bcl_profiling_unusable(d);
    if (!why)
        return BCL_OK;
    return bcl_fail(
        e, BCL_EXIT_RUNTIME,
        "not measured: it needs the device's profiling clock, which failed its check on "
        "'%s': %s",
        d->name, why);
}

/* One launch with an event: queued to start, in microseconds. The launch's
 * own start and end are checked against the host's time for it first. */
static int dispatch(bcl_sim *s, const bcl_plan *o, double *us, bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(bcl_sim_context(s));
    const char *dev = d->name;
    cl_event ev = NULL;
    double t0 = bcl_now_ms();
    int rc = bcl_sim_enqueue(s, o, &ev, e);
    if (rc == BCL_OK)
        rc = finish(s, e);
    double host_ms = bcl_now_ms() - t0;
    if (rc == BCL_OK) {
        static const cl_profiling_info when[3] = {
            CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
        cl_ulong t[3] = {0}; /* queued, start, end */
        cl_int st = CL_SUCCESS;
        for (int i = 0; i < 3 && st == CL_SUCCESS; i++)
            st = BCL_CL(clGetEventProfilingInfo, ev, when[i], sizeof t[i], &t[i], NULL);
        if (st != CL_SUCCESS) {
            rc = bcl_cl_fail(e, st, "clGetEventProfilingInfo", dev);
        } else {
            bcl_span_check span = {
                .start_ns = t[1], .end_ns = t[2], .host_ms = host_ms, .launches = 1};
            bcl_profiling_check(d->device, &span);
            rc = profiling_needed(d, e);
        }
        /* A runtime whose clocks disagree must not give a huge unsigned
         * difference: a start before queued counts as no wait. */
        *us = t[1] > t[0] ? (double)(t[1] - t[0]) / 1e3 : 0;
    }
    if (ev)
        clReleaseEvent(ev);
    return rc;
}

/* Warms up, then takes `repeats` samples. */
static int sample(bcl_sim *s, const bcl_plan *o, unsigned repeats,
                  int (*one)(bcl_sim *, const bcl_plan *, double *, bcl_error *), bcl_stats *us,
                  bcl_error *e)
{
    memset(us, 0, sizeof *us);
    repeats = repeats == 0 ? 1 : repeats > MAX_REPEATS ? MAX_REPEATS : repeats;
    double *x = malloc(repeats * sizeof *x), ignored;
    if (!x)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    /* Work the driver defers to the first launch, then a few untimed ones
     * (caches, clocks, the runtime's threads waking up). */
    int rc = bcl_sim_warmup(s, o, NULL, e);
    for (unsigned i = 0; i < UNTIMED && rc == BCL_OK; i++)
        rc = one(s, o, &ignored, e);
    for (unsigned i = 0; i < repeats && rc == BCL_OK; i++)
        rc = one(s, o, &x[i], e);
    if (rc == BCL_OK)
        bcl_stats_compute(x, repeats, us);
    free(x);
    return rc;
}

int bcl_measure_dispatch(bcl_sim *s, const bcl_plan *o, unsigned repeats, bcl_stats *us,
                         bcl_error *e)
{
    memset(us, 0, sizeof *us);
    if (profiling_needed(bcl_context_device(bcl_sim_context(s)), e))
        return BCL_EXIT_RUNTIME;
    return sample(s, o, repeats, dispatch, us, e);
}

int bcl_measure_roundtrip(bcl_sim *s, const bcl_plan *o, unsigned repeats, bcl_stats *us,
                          bcl_error *e)
{
    return sample(s, o, repeats, round_trip, us, e);
}
