/*
 * `count` launches of one kernel back to back, timed by the profiling clock
 * once bcl_profiling_check believes it, else the host's: how the add rate,
 * the peaks and the read-only bandwidth time their kernels; the chain
 * kernels of the first two also share their whole timer (bcl_chain_timer).
 */
#include "measure/timing.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU_ITEMS_PER 16 /* work-items (= work-groups) per compute unit on a CPU */
#define GPU_ITEMS_PER 2048
#define GPU_LOCAL     256
#define MAX_W         16 /* widest vector OpenCL has */
/* Mesa's llvmpipe (rusticl) ends any loop after 65535 trips (gallivm's
 * guard against shaders that never end), so a launch of more iterations
 * would silently do fewer operations; more work comes from more launches. */
#define MAX_ITERS    65535u
#define CHAIN_UNROLL 4 /* operations per chain per loop iteration (cl/addrate.cl, cl/peak.cl) */

/* The median, min and max of repeats (sorts x). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void bcl_stats_compute(double *x, unsigned n, bcl_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    qsort(x, n, sizeof *x, cmp_double);
    out->count = n;
    out->min = x[0];
    out->max = x[n - 1];
    out->median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

unsigned bcl_repeats(unsigned repeats)
{
    return repeats == 0 ? 1 : repeats > BCL_MAX_REPEATS ? BCL_MAX_REPEATS : repeats;
}

/* Waits for last, reads the profiling clock from first's start to last's
 * end into span (with the host's time since t0 and the device's figures)
 * and releases both events (one when they are the same). */
static int events_span(const bcl_device_info *d, cl_event first, cl_event last, unsigned launches,
                       double t0, bcl_span_check *span, bcl_error *e)
{
    const char *call = "clWaitForEvents";
    cl_int st = BCL_CL(clWaitForEvents, 1, &last);
    span->host_ms = bcl_now_ms() - t0;
    span->start_ns = span->end_ns = 0;
    if (st == CL_SUCCESS) {
        call = "clGetEventProfilingInfo";
        st = BCL_CL(clGetEventProfilingInfo, first, CL_PROFILING_COMMAND_START,
                    sizeof span->start_ns, &span->start_ns, NULL);
    }
    if (st == CL_SUCCESS)
        st = BCL_CL(clGetEventProfilingInfo, last, CL_PROFILING_COMMAND_END, sizeof span->end_ns,
                    &span->end_ns, NULL);
    if (last != first)
        clReleaseEvent(last);
    clReleaseEvent(first);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, call, d->name);
    span->launches = launches;
    span->compute_units = d->compute_units;
    span->clock_mhz = d->clock_mhz;
    return BCL_OK;
}

int bcl_launch_span(const bcl_device_info *d, cl_command_queue q, cl_kernel k, size_t global,
                    size_t local, unsigned count, double t0, bcl_span_check *span, double *ms,
                    bcl_error *e)
{
    cl_int st = CL_SUCCESS;
    cl_event first = NULL, last = NULL;
    /* Events on the first and the last launch only: per launch, an enqueue
     * (docs/PERFORMANCE.md, "The host's cost per launch"). */
    for (unsigned i = 0; i < count && st == CL_SUCCESS; i++) {
        cl_event *ev = i == 0 ? &first : i + 1 == count ? &last : NULL;
        st = BCL_CL(clEnqueueNDRangeKernel, q, k, 1, NULL, &global, &local, 0, NULL, ev);
    }
    int rc = st != CL_SUCCESS ? bcl_cl_fail(e, st, "clEnqueueNDRangeKernel", d->name) : BCL_OK;
    if (rc == BCL_OK)
        rc = events_span(d, first, last ? last : first, count, t0, span, e);
    else if (first)
        clReleaseEvent(first);
    if (rc) {
        BCL_CL(clFinish, q);
        return rc;
    }
    *ms = bcl_profiling_check(d->device, span) ? (double)(span->end_ns - span->start_ns) / 1e6
                                               : span->host_ms;
    return BCL_OK;
}

int bcl_event_span(const bcl_device_info *d, cl_event ev, double t0, bcl_span_check *span,
                   bool *believed, bcl_error *e)
{
    int rc = events_span(d, ev, ev, 1, t0, span, e);
    if (rc == BCL_OK)
        *believed = bcl_profiling_check(d->device, span);
    return rc;
}

unsigned bcl_chain_width(unsigned w)
{
    /* OpenCL's vector widths are 2, 3, 4, 8, 16; a driver that says 0
     * (query failed) or something odd gets the widest power of two below. */
    unsigned p = 1;
    while (p * 2 <= w && p * 2 <= MAX_W)
        p *= 2;
    return p;
}

int bcl_chain_build(bcl_context *c, const char *file, const char *defines, cl_program *prog,
                    bcl_error *e)
{
    char *src = NULL;
    size_t len = 0;
    int rc = bcl_kernel_source(file, &src, &len, e);
    if (rc)
        return rc;
    char opts[320];
    snprintf(opts, sizeof opts, "%s %s", bcl_build_options(NULL), defines);
    rc = bcl_program_from_source(bcl_context_cl(c), bcl_context_device(c), src, len, opts, prog, e);
    free(src);
    return rc;
}

/* A CPU runtime such as PoCL runs each work-item's chains as written, in
 * vector registers: one work-item per group, 16 per compute unit; but a
 * chain kernel of native width 1 (kernel given) gets groups as wide as its
 * preferred multiple, of which such a driver (Mesa's llvmpipe) makes its
 * SIMD lanes. Other devices: groups of up to 256, 2048 work-items per
 * compute unit, enough to fill a GPU's multiprocessor. */
int bcl_chain_shape(const bcl_device_info *d, cl_program prog, const char *kernel,
                    bcl_chain_size *sh, bcl_error *e)
{
    size_t *global = &sh->global, *local = &sh->local;
    unsigned cu = d->compute_units ? d->compute_units : 1;
    if (d->type & BCL_DEVICE_CPU) {
        *local = 1;
        if (kernel) {
            cl_int st;
            cl_kernel k = BCL_CL_CREATE(&st, clCreateKernel, prog, kernel);
            if (st != CL_SUCCESS)
                return bcl_cl_fail(e, st, "clCreateKernel", d->name);
            size_t lim, item_lim, pref;
            int rc = bcl_kernel_groups(d, k, &lim, &item_lim, &pref, e);
            clReleaseKernel(k);
            if (rc)
                return rc;
            *local = pref > 1 && pref <= lim ? pref : 1;
        }
        *global = (size_t)cu * CPU_ITEMS_PER * *local;
        return BCL_OK;
    }
    size_t lim = d->max_work_group ? d->max_work_group : 1;
    if (d->max_item_sizes[0] && d->max_item_sizes[0] < lim)
        lim = d->max_item_sizes[0];
    *local = lim < GPU_LOCAL ? lim : GPU_LOCAL;
    *global = bcl_round_up((size_t)cu * GPU_ITEMS_PER, *local);
    return BCL_OK;
}

int bcl_chain_input(bcl_context *c, const void *host, size_t size, cl_mem *mem, bcl_error *e)
{
    cl_int st;
    *mem = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c),
                         CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, size, (void *)host);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateBuffer", bcl_context_device(c)->name);
    return BCL_OK;
}

/* Kernel "<t->kernel>_c<chains>" of t's program and its output buffer:
 * argument 0 is the start values, 1 the value or buffer of t->arg, 3 the
 * output (2 is the loop count). */
static int chain_kernel(bcl_chain_timer *t, bcl_chain_set *cs, bcl_error *e)
{
    char name[32];
    snprintf(name, sizeof name, "%s_c%u", t->kernel, cs->chains);
    size_t out_bytes = t->sh.global * cs->chains * t->w * t->scalar;
    bool buf = t->arg_mem != NULL;
    cl_int st;
    cs->k = BCL_CL_CREATE(&st, clCreateKernel, t->prog, name);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateKernel", t->d->name);
    cs->out = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(t->c), CL_MEM_WRITE_ONLY, out_bytes,
                            NULL);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateBuffer", t->d->name);
    st = BCL_CL(clSetKernelArg, cs->k, 0, sizeof t->start_mem, &t->start_mem);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, cs->k, 1, buf ? sizeof t->arg_mem : t->arg_size,
                    buf ? (const void *)&t->arg_mem : t->arg);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, cs->k, 3, sizeof cs->out, &cs->out);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clSetKernelArg", t->d->name);
    return BCL_OK;
}

/* The operations of a launch of iters rounds counted in the figure. */
static double chain_ops(const bcl_chain_timer *t, const bcl_chain_set *cs, unsigned iters)
{
    return (double)t->sh.global * cs->chains * t->w * CHAIN_UNROLL * iters * t->step_ops;
}

/* `count` launches of cs with iters rounds each (bcl_launch_span), checked
 * against their float32 operations (t->check_share of the figure's). */
static int chain_launch(bcl_chain_timer *t, bcl_chain_set *cs, unsigned iters, unsigned count,
                        double *ms, bcl_error *e)
{
    const bcl_device_info *d = t->d;
    double t0 = bcl_now_ms();
    cl_int st = BCL_CL(clSetKernelArg, cs->k, 2, sizeof iters, &iters);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clSetKernelArg", d->name);
    /* Believed only after the check (src/ocl/clock_check.c); a device
     * whose clock fails it is timed by the host, like every other figure. */
    bcl_span_check span = {.flops = chain_ops(t, cs, iters) * t->check_share * count,
                           .cpu_vector_width =
                               (d->type & BCL_DEVICE_CPU) ? d->native_vector_width_float : 0};
    return bcl_launch_span(d, bcl_context_queue(t->c), cs->k, t->sh.global, t->sh.local, count, t0,
                           &span, ms, e);
}

/* Iterations for a launch of about target ms, from one that took ms. */
static unsigned scale_iters(unsigned iters, double ms, double target)
{
    double want = ms > 1e-3 ? (double)iters * target / ms : (double)iters * 1000;
    if (want > MAX_ITERS)
        want = MAX_ITERS;
    if (want < 1)
        want = 1;
    return (unsigned)want;
}

/* Reads cs's chains back and compares every value with the host's after
 * iters rounds (t->want). */
static int chain_check(bcl_chain_timer *t, bcl_chain_set *cs, unsigned iters, bcl_error *e)
{
    size_t ss = t->scalar, per = (size_t)cs->chains * t->w, n = t->sh.global * per;
    unsigned char *got = malloc(n * ss), want[BCL_CHAIN_VALUES * 8];
    if (!got)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    cl_int st = BCL_CL(clEnqueueReadBuffer, bcl_context_queue(t->c), cs->out, CL_TRUE, 0, n * ss,
                       got, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        free(got);
        return bcl_cl_fail(e, st, "clEnqueueReadBuffer", t->d->name);
    }
    t->want(t, cs->chains, (uint64_t)iters * CHAIN_UNROLL, want);
    uint64_t bad = 0;
    size_t first = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp(got + i * ss, want + (i % per) * ss, ss) != 0 && bad++ == 0)
            first = i;
    int rc = BCL_OK;
    if (bad) {
        char g[48], w[48];
        t->show(t, got + first * ss, g, sizeof g);
        t->show(t, want + (first % per) * ss, w, sizeof w);
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "%s kernel on '%s': %llu of %zu chain values differ from the host's %s "
                      "(first: work-item %zu, got %s, want %s)",
                      t->what, t->d->name, (unsigned long long)bad, n, t->ops_name, first / per, g,
                      w);
    }
    t->compared += n;
    free(got);
    return rc;
}

/* Makes cs's kernel and buffer and sizes it: a warm-up launch (PoCL
 * compiles the work-group function at the first launch), one of a tenth of
 * target ms, then one of target ms (at most 65535 rounds: llvmpipe ends
 * longer loops), whose chains are checked. A timed repeat is
 * BCL_CHAIN_LAUNCHES launches of a tenth of that each, queued back to back
 * like the launches of a simulation. */
static int chain_prepare(bcl_chain_timer *t, bcl_chain_set *cs, double target, bcl_error *e)
{
    unsigned it = 16;
    double ms = 0;
    int rc = chain_kernel(t, cs, e);
    for (int i = 0; i < 3 && rc == BCL_OK; i++) {
        if (i)
            it = scale_iters(it, ms, i == 1 ? target / 10 : target);
        rc = chain_launch(t, cs, it, 1, &ms, e);
    }
    if (rc == BCL_OK)
        rc = chain_check(t, cs, it, e);
    cs->iters = it / BCL_CHAIN_LAUNCHES ? it / BCL_CHAIN_LAUNCHES : 1;
    cs->ops = chain_ops(t, cs, cs->iters) * BCL_CHAIN_LAUNCHES;
    return rc;
}

int bcl_chain_timer_start(bcl_chain_timer *t, const char *file, const char *defines,
                          const void *start, const bcl_measure_opts *mo, bcl_error *e)
{
    t->d = bcl_context_device(t->c);
    t->repeats = bcl_repeats(mo && mo->repeats ? mo->repeats : 5);
    double target = mo && mo->repeat_ms > 0 ? mo->repeat_ms : 50; /* ms per timed repeat */
    char wide[32];
    snprintf(wide, sizeof wide, "%s_c16", t->kernel);
    int rc = bcl_chain_build(t->c, file, defines, &t->prog, e);
    if (rc == BCL_OK)
        rc = bcl_chain_shape(t->d, t->prog, t->w == 1 ? wide : NULL, &t->sh, e);
    if (rc == BCL_OK)
        rc = bcl_chain_input(t->c, start, BCL_CHAIN_VALUES * t->scalar, &t->start_mem, e);
    if (rc == BCL_OK && t->arg_buffer)
        rc = bcl_chain_input(t->c, t->arg, t->arg_size, &t->arg_mem, e);
    for (unsigned i = 0; i < t->nsets && rc == BCL_OK; i++)
        rc = chain_prepare(t, &t->set[i], target, e);
    return rc;
}

int bcl_chain_timer_repeat(bcl_chain_timer *t, bcl_error *e)
{
    if (t->done == t->repeats)
        return BCL_OK;
    for (unsigned i = 0; i < t->nsets; i++) {
        bcl_chain_set *cs = &t->set[i];
        double ms = 0;
        int rc = chain_launch(t, cs, cs->iters, BCL_CHAIN_LAUNCHES, &ms, e);
        if (rc)
            return rc;
        cs->x[t->done] = ms > 0 ? cs->ops / (ms * 1e6) : 0; /* per ns = G per s */
    }
    t->done++;
    return BCL_OK;
}

int bcl_chain_timer_best(bcl_chain_timer *t, bcl_stats *rate, const bcl_chain_set **best,
                         bcl_error *e)
{
    memset(rate, 0, sizeof *rate);
    for (unsigned i = 0; i < t->nsets; i++) {
        bcl_chain_set *cs = &t->set[i];
        /* What was timed is what is checked: the last launch's chains. */
        int rc = t->done ? chain_check(t, cs, cs->iters, e) : BCL_OK;
        if (rc)
            return rc;
        bcl_stats st = {0};
        if (t->done)
            bcl_stats_compute(cs->x, t->done, &st);
        if (i == 0 || st.median > rate->median) {
            *rate = st;
            *best = cs;
        }
    }
    return BCL_OK;
}

void bcl_chain_timer_end(bcl_chain_timer *t)
{
    for (unsigned i = 0; i < t->nsets; i++) {
        if (t->set[i].k)
            clReleaseKernel(t->set[i].k);
        if (t->set[i].out)
            clReleaseMemObject(t->set[i].out);
    }
    bcl_release_buffers(t->start_mem, t->arg_mem);
    if (t->prog)
        clReleaseProgram(t->prog);
}
