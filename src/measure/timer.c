/*
 * Measurement (docs/BENCHMARK.md) for bench, tune and survey: timing one
 * configuration or the host loops, and the copy bandwidth that bounds a
 * one-step kernel. One rule for every figure: warm-up and calibration never
 * count; a figure is the median (with min and max) of repeats of the same
 * steps; device time from profiling events, host time from the monotonic
 * clock.
 */
#include "measure/timing.h"
#include "models/rng.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_STEPS 1000000

/* One way to advance the state by some steps and say how long it took. */
typedef int (*run_fn)(void *arg, uint64_t steps, double *device_ms, double *wall_ms,
                      uint64_t *launches, bcl_error *e);

typedef struct sim_arg {
    bcl_sim *s;
    bcl_plan o;
} sim_arg;

typedef struct host_arg {
    const bcl_model *m;
    const float *p;
    float *state;
    size_t n;
    bool openmp;
} host_arg;

static int run_sim(void *arg, uint64_t steps, double *device_ms, double *wall_ms,
                   uint64_t *launches, bcl_error *e);

struct bcl_timer {
    run_fn run;
    union {
        sim_arg sim;
        host_arg host;
    } arg;
    uint64_t granule; /* steps are multiples of this (K) */
    uint64_t steps;   /* per repeat */
    uint64_t launches;
    unsigned repeats, done;
    double *dev, *wall; /* us per step of each repeat done */
};

static uint64_t clamp_steps(double want, uint64_t granule, uint64_t max)
{
    if (!(want >= 1))
        want = 1;
    if (want > (double)max)
        want = (double)max;
    uint64_t s = (uint64_t)want;
    s = (s + granule - 1) / granule * granule;
    return s ? s : granule;
}

/* Chooses the steps per repeat with two untimed calibration runs (which
 * also warm caches and clocks up): one launch, then about a tenth of the
 * target. With fixed steps, still one untimed run. */
static int calibrate(bcl_timer *t, const bcl_measure_opts *mo, bcl_error *e)
{
    uint64_t g = t->granule;
    uint64_t max = mo->max_steps ? mo->max_steps : DEFAULT_MAX_STEPS;
    if (max < g)
        max = g;
    double dev, wall;
    uint64_t launches;
    void *arg = &t->arg;
    if (mo->steps) {
        t->steps = mo->steps;
        return t->run(arg, t->steps, &dev, &wall, &launches, e);
    }
    double target = mo->repeat_ms > 0 ? mo->repeat_ms : 100;
    int rc = t->run(arg, g, &dev, &wall, &launches, e);
    if (rc)
        return rc;
    uint64_t s2 = clamp_steps(target / 10 / (wall > 1e-6 ? wall / (double)g : 1e-6), g, max);
    if (s2 > g) {
        if ((rc = t->run(arg, s2, &dev, &wall, &launches, e)))
            return rc;
    } else {
        s2 = g;
    }
    t->steps = clamp_steps(target / (wall > 1e-6 ? wall / (double)s2 : 1e-6), g, max);
    return BCL_OK;
}

/* A timer of run on arg (arg_size bytes, copied), warmed up (a plan's first
 * launch) and calibrated. */
static int timer_new(run_fn run, uint64_t granule, const void *arg, size_t arg_size,
                     const bcl_measure_opts *mo, bcl_timer **out, bcl_error *e)
{
    *out = NULL;
    unsigned repeats = bcl_repeats(mo->repeats);
    bcl_timer *t = calloc(1, sizeof *t);
    double *x = calloc(2 * (size_t)repeats, sizeof *x);
    if (!t || !x) {
        free(t);
        free(x);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    t->run = run;
    t->granule = granule ? granule : 1;
    t->repeats = repeats;
    t->dev = x;
    t->wall = x + repeats;
    memcpy(&t->arg, arg, arg_size);
    int rc = run == run_sim ? bcl_sim_warmup(t->arg.sim.s, &t->arg.sim.o, NULL, e) : BCL_OK;
    if (rc == BCL_OK)
        rc = calibrate(t, mo, e);
    if (rc)
        bcl_timer_free(t);
    else
        *out = t;
    return rc;
}

int bcl_timer_repeat(bcl_timer *t, bcl_error *e)
{
    if (t->done == t->repeats)
        return BCL_OK;
    double dev, wall;
    int rc = t->run(&t->arg, t->steps, &dev, &wall, &t->launches, e);
    if (rc)
        return rc;
    t->dev[t->done] = dev * 1e3 / (double)t->steps;
    t->wall[t->done] = wall * 1e3 / (double)t->steps;
    t->done++;
    return BCL_OK;
}

void bcl_timer_result(const bcl_timer *t, bcl_measurement *out)
{
    memset(out, 0, sizeof *out);
    /* The statistics sort their input: work on copies. */
    double *x = malloc(2 * (size_t)t->repeats * sizeof *x);
    if (x && t->done) {
        memcpy(x, t->dev, t->done * sizeof *x);
        memcpy(x + t->repeats, t->wall, t->done * sizeof *x);
        bcl_stats_compute(x, t->done, &out->device_us);
        bcl_stats_compute(x + t->repeats, t->done, &out->wall_us);
    }
    free(x);
    out->steps = t->steps;
    out->launches = t->launches;
    /* A device whose profiling failed its check, in any repeat or in any
     * other measurement of this process: every repeat of the figure comes
     * from the host clock, not a mix. */
    if (t->run == run_sim &&
        bcl_profiling_unusable(bcl_context_device(bcl_sim_context(t->arg.sim.s)))) {
        out->device_us = out->wall_us;
        out->host_clock = true;
    }
}

void bcl_timer_free(bcl_timer *t)
{
    if (!t)
        return;
    free(t->dev);
    free(t);
}

/* All the repeats of a new timer in a row. */
static int measure_all(bcl_timer *t, bcl_measurement *out, bcl_error *e)
{
    int rc = BCL_OK;
    for (unsigned i = 0; i < t->repeats && rc == BCL_OK; i++)
        rc = bcl_timer_repeat(t, e);
    if (rc == BCL_OK)
        bcl_timer_result(t, out);
    bcl_timer_free(t);
    return rc;
}

/* ---- a configuration on the device ---------------------------------------- */

static int run_sim(void *arg, uint64_t steps, double *device_ms, double *wall_ms,
                   uint64_t *launches, bcl_error *e)
{
    sim_arg *a = arg;
    bcl_sim_timing t;
    int rc = bcl_sim_run(a->s, &a->o, steps, &t, e);
    *device_ms = t.device_ms;
    *wall_ms = t.wall_ms;
    *launches = t.launches;
    return rc;
}

int bcl_timer_sim(bcl_sim *s, const bcl_plan *o, const bcl_measure_opts *mo, bcl_timer **out,
                  bcl_error *e)
{
    sim_arg a = {.s = s, .o = *o};
    return timer_new(run_sim, o->steps_per_launch, &a, sizeof a, mo, out, e);
}

int bcl_measure_sim(bcl_sim *s, const bcl_plan *o, const bcl_measure_opts *mo, bcl_measurement *out,
                    bcl_error *e)
{
    bcl_timer *t;
    int rc = bcl_timer_sim(s, o, mo, &t, e);
    return rc ? rc : measure_all(t, out, e);
}

int bcl_check_sim(bcl_sim *s, const bcl_plan *o, const float *init, uint64_t tol_ulp,
                  float *scratch, bcl_validation *v, bcl_error *e)
{
    bcl_context *c = bcl_sim_context(s);
    size_t n = bcl_sim_balls(s);
    uint64_t steps = o->check_steps;
    memset(v, 0, sizeof *v);
    bcl_sim_timing t;
    int rc = bcl_sim_write(s, init, e);
    if (rc == BCL_OK)
        rc = bcl_sim_run(s, o, steps, &t, e);
    if (rc == BCL_OK)
        rc = bcl_sim_read(s, scratch, e);
    if (rc == BCL_OK)
        rc = bcl_validate(bcl_context_model(c), o->params, init, scratch, n, steps, tol_ulp, v, e);
    return rc;
}

/* ---- copy bandwidth --------------------------------------------------------- */

/* Fills buf (bytes, a multiple of 16) with pseudo-random bytes from a fixed
 * seed: a block of up to RANDOM_BLOCK bytes written over and over. The
 * block is far larger than any compression unit, so the repetition gives a
 * compressor nothing to work with. Waits until the writes are done. */
#define RANDOM_BLOCK ((size_t)4 << 20)
static int fill_random(bcl_context *c, cl_mem buf, size_t bytes, bcl_error *e)
{
    size_t block = bytes < RANDOM_BLOCK ? bytes : RANDOM_BLOCK;
    uint64_t *host = malloc(block);
    if (!host)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    bcl_rng_fill(0x5eed5eedu, host, block);
    cl_command_queue q = bcl_context_queue(c);
    cl_int st = CL_SUCCESS;
    for (size_t off = 0; off < bytes && st == CL_SUCCESS; off += block) {
        size_t len = bytes - off < block ? bytes - off : block;
        st = BCL_CL(clEnqueueWriteBuffer, q, buf, CL_FALSE, off, len, host, 0, NULL, NULL);
    }
    /* The host block must outlive the non-blocking writes. */
    cl_int fin = BCL_CL(clFinish, q);
    free(host);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clEnqueueWriteBuffer", bcl_context_device(c)->name);
    if (fin != CL_SUCCESS)
        return bcl_cl_fail(e, fin, "clFinish", bcl_context_device(c)->name);
    return BCL_OK;
}

const bcl_device_info *bcl_bandwidth_begin(bcl_context *c, size_t *bytes, unsigned *repeats,
                                           bcl_stats *gb, bcl_stats *gb2)
{
    const bcl_device_info *d = bcl_context_device(c);
    memset(gb, 0, sizeof *gb);
    if (gb2)
        memset(gb2, 0, sizeof *gb2);
    size_t b = d->max_alloc && *bytes > d->max_alloc ? (size_t)d->max_alloc : *bytes;
    *bytes = b / 16 ? b / 16 * 16 : 16;
    *repeats = bcl_repeats(*repeats);
    return d;
}

int bcl_measure_copy(bcl_context *c, size_t bytes, unsigned repeats, bcl_stats *gb_per_s,
                     bcl_error *e)
{
    const bcl_device_info *d = bcl_bandwidth_begin(c, &bytes, &repeats, gb_per_s, NULL);
    cl_command_queue q = bcl_context_queue(c);
    cl_int st;
    int rc = BCL_OK;
    cl_mem src = NULL, dst = NULL;
    double *x = malloc(2 * (size_t)repeats * sizeof *x);
    if (!x)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    double *host = x + repeats; /* ns of the host clock per copy */
    src = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c), CL_MEM_READ_WRITE, bytes, NULL);
    if (st == CL_SUCCESS)
        dst = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c), CL_MEM_READ_WRITE, bytes, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clCreateBuffer", d->name);
        goto out;
    }
    /* Touch both buffers first, so page faults and lazy allocation are
     * not timed. The source holds pseudo-random bytes: some GPUs compress
     * memory, and a buffer of zeros would copy faster than any real data. */
    if ((rc = fill_random(c, src, bytes, e)))
        goto out;
    float zero = 0;
    st = BCL_CL(clEnqueueFillBuffer, q, dst, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
    if (st == CL_SUCCESS)
        st = BCL_CL(clEnqueueCopyBuffer, q, src, dst, 0, 0, bytes, 0, NULL, NULL);
    if (st == CL_SUCCESS)
        st = BCL_CL(clFinish, q);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clEnqueueCopyBuffer", d->name);
        goto out;
    }
    for (unsigned i = 0; i < repeats; i++) {
        cl_event ev = NULL;
        double t0 = bcl_now_ms();
        st = BCL_CL(clEnqueueCopyBuffer, q, src, dst, 0, 0, bytes, 0, NULL, &ev);
        if (st != CL_SUCCESS) {
            rc = bcl_cl_fail(e, st, "clEnqueueCopyBuffer", d->name);
            goto out;
        }
        bcl_span_check span = {.bytes = 2.0 * (double)bytes};
        bool believed;
        if ((rc = bcl_event_span(d, ev, t0, &span, &believed, e)))
            goto out;
        host[i] = span.host_ms * 1e6;
        x[i] = believed ? span.bytes / (double)(span.end_ns - span.start_ns) : 0;
    }
    /* Once the device's profiling failed a check, every copy is timed by
     * the host clock (bytes per ns = GB/s). */
    if (bcl_profiling_unusable(d))
        for (unsigned i = 0; i < repeats; i++)
            x[i] = host[i] > 0 ? 2.0 * (double)bytes / host[i] : 0;
    bcl_stats_compute(x, repeats, gb_per_s);
out:
    bcl_release_buffers(src, dst);
    free(x);
    return rc;
}

/* ---- host rows --------------------------------------------------------------- */

static int run_host(void *arg, uint64_t steps, double *device_ms, double *wall_ms,
                    uint64_t *launches, bcl_error *e)
{
    (void)e;
    host_arg *a = arg;
    double t0 = bcl_now_ms();
    bcl_host_steps(a->m, a->p, a->state, a->n, steps, a->openmp);
    *wall_ms = *device_ms = bcl_now_ms() - t0;
    *launches = 0;
    return BCL_OK;
}

int bcl_timer_host(const bcl_model *m, const float *p, float *state, size_t n, bool openmp,
                   const bcl_measure_opts *mo, bcl_timer **out, bcl_error *e)
{
    host_arg a = {.m = m, .p = p, .state = state, .n = n, .openmp = openmp};
    return timer_new(run_host, 1, &a, sizeof a, mo, out, e);
}

int bcl_measure_host(const bcl_model *m, const float *p, float *state, size_t n, bool openmp,
                     const bcl_measure_opts *mo, bcl_measurement *out, bcl_error *e)
{
    bcl_timer *t;
    int rc = bcl_timer_host(m, p, state, n, openmp, mo, &t, e);
    return rc ? rc : measure_all(t, out, e);
}
