/*
 * The add-rate bound (docs/PERFORMANCE.md): float32 additions per second the
 * device retires, measured on the device by cl/addrate.cl. Each ball-step of
 * a model costs at least its float operations, so N * steps * ops / rate is
 * the least time any kernel can take; bench and survey report fused rates
 * against it.
 *
 * Sized from device queries: the chains are vectors of the device's native
 * float width (CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT); a CPU gets one
 * work-item per work-group (a runtime such as PoCL then runs each work-item's
 * chains as they are written, in vector registers) and 16 work-groups per
 * compute unit (see shape() for a driver that makes lanes of work-items);
 * any other device gets work-groups of up to 256 and 2048
 * work-items per compute unit, enough to fill a GPU's multiprocessor.
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

#define UNROLL        4  /* adds per chain per loop iteration (cl/addrate.cl) */
#define MAX_W         16 /* widest float vector OpenCL has */
#define MAX_CHAINS    16
#define CPU_ITEMS_PER 16 /* work-items (= work-groups) per compute unit on a CPU */
#define GPU_ITEMS_PER 2048
#define GPU_LOCAL     256
/* Mesa's llvmpipe (rusticl) ends any loop after 65535 trips (gallivm's
 * guard against shaders that never end), so a launch of more iterations
 * would silently do fewer adds; more work comes from more launches. */
#define MAX_ITERS      65535u
#define MAX_REPEATS    1000
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
    unsigned w = d->native_vector_width_float;
    /* OpenCL's vector widths are 2, 3, 4, 8, 16; a driver that says 0
     * (query failed) or something odd gets the widest power of two below. */
    unsigned p = 1;
    while (p * 2 <= w && p * 2 <= MAX_W)
        p *= 2;
    return p;
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
    size_t global, local;
    unsigned w, repeats, done;
    uint64_t compared;
    chain_set set[NSETS];
};

static uint64_t adds_of(const bcl_add_timer *t, const chain_set *cs, unsigned iters)
{
    return (uint64_t)t->global * cs->chains * t->w * UNROLL * iters;
}

/* `count` launches of cs with iters rounds each, queued back to back;
 * *ms is the profiling time from the first one's start to the last one's
 * end. */
static int launch_n(bcl_add_timer *t, chain_set *cs, unsigned iters, unsigned count, double *ms,
                    bcl_error *e)
{
    cl_command_queue q = bcl_context_queue(t->c);
    bcl_launch_times lt;
    int rc = bcl_launch_span_iters(t->d, q, cs->k, 2, iters, t->global, t->local, count, &lt, e);
    if (rc)
        return rc;
    double host_ms = lt.host_ms;
    cl_ulong a = lt.start_ns, b = lt.end_ns;
    /* Believed only after the check (src/ocl/clock_check.c); a device
     * whose clock fails it is timed by the host, like every other figure. */
    const bcl_device_info *d = t->d;
    bcl_span_check span = {.start_ns = a,
                           .end_ns = b,
                           .host_ms = host_ms,
                           .launches = count,
                           .flops = (double)adds_of(t, cs, iters) * count,
                           .compute_units = d->compute_units,
                           .clock_mhz = d->clock_mhz,
                           .cpu_vector_width =
                               (d->type & BCL_DEVICE_CPU) ? d->native_vector_width_float : 0};
    *ms = bcl_profiling_check(d->device, &span) ? (double)(b - a) / 1e6 : host_ms;
    return BCL_OK;
}

static int launch(bcl_add_timer *t, chain_set *cs, unsigned iters, double *ms, bcl_error *e)
{
    return launch_n(t, cs, iters, 1, ms, e);
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

/* Reads cs's chains back and compares every value with the host's adds
 * (cs->iters rounds). */
static int check(bcl_add_timer *t, chain_set *cs, bcl_error *e)
{
    size_t per = (size_t)cs->chains * t->w, n = t->global * per;
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

/* Makes cs's kernel and buffer, then sizes it: a warm-up launch (PoCL
 * compiles the work-group function at the first launch), a tenth of the
 * target, then one of the target's size, whose chains are checked. */
static int prepare(bcl_add_timer *t, chain_set *cs, double target, bcl_error *e)
{
    char name[32];
    snprintf(name, sizeof name, "addrate_c%u", cs->chains);
    cl_int st;
    cs->k = BCL_CL_CREATE(&st, clCreateKernel, t->prog, name);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateKernel", t->d->name);
    cs->out = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(t->c), CL_MEM_WRITE_ONLY,
                            t->global * cs->chains * t->w * sizeof(float), NULL);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateBuffer", t->d->name);
    float inc = INC;
    st = BCL_CL(clSetKernelArg, cs->k, 0, sizeof t->start, &t->start);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, cs->k, 1, sizeof inc, &inc);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, cs->k, 3, sizeof cs->out, &cs->out);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clSetKernelArg", t->d->name);
    cs->x = calloc(t->repeats, sizeof *cs->x);
    if (!cs->x)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    unsigned it = 16;
    double ms = 0;
    int rc = launch(t, cs, it, &ms, e);
    if (rc == BCL_OK) {
        it = scale_iters(it, ms, target / 10);
        rc = launch(t, cs, it, &ms, e);
    }
    if (rc == BCL_OK) {
        it = scale_iters(it, ms, target);
        rc = launch(t, cs, it, &ms, e);
    }
    cs->iters = it;
    if (rc == BCL_OK)
        rc = check(t, cs, e);
    /* A timed repeat is LAUNCHES launches of a tenth each, queued back to
     * back like the launches of a simulation (see the top of this file). */
    cs->iters = it / LAUNCHES ? it / LAUNCHES : 1;
    cs->adds = adds_of(t, cs, cs->iters) * LAUNCHES;
    return rc;
}

/* Builds cl/addrate.cl for the chains' width. */
static int build(bcl_add_timer *t, bcl_error *e)
{
    char *src = NULL;
    size_t len = 0;
    int rc = bcl_kernel_source("addrate.cl", &src, &len, e);
    if (rc)
        return rc;
    char opts[256];
    snprintf(opts, sizeof opts, "%s -DBCL_W=%u", bcl_build_options(), t->w);
    rc = bcl_program_from_source(bcl_context_cl(t->c), t->d, src, len, opts, &t->prog, e);
    free(src);
    return rc;
}

/* The launch shape from device queries (see the top of this file). A CPU
 * gets one work-item per group and its lanes from the vectors, except a
 * driver that says its native float vector is 1 wide: such a driver
 * (Mesa's llvmpipe) makes its SIMD lanes of the work-items of a group, so
 * the group is as wide as the kernel's preferred multiple. */
static int shape(bcl_add_timer *t, bcl_error *e)
{
    const bcl_device_info *d = t->d;
    unsigned cu = d->compute_units ? d->compute_units : 1;
    if (d->type & BCL_DEVICE_CPU) {
        t->local = 1;
        if (t->w == 1) {
            cl_int st;
            cl_kernel k = BCL_CL_CREATE(&st, clCreateKernel, t->prog, "addrate_c16");
            if (st != CL_SUCCESS)
                return bcl_cl_fail(e, st, "clCreateKernel", d->name);
            size_t pref = 1, lim = 1;
            st = BCL_CL(clGetKernelWorkGroupInfo, k, d->device,
                        CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof pref, &pref, NULL);
            if (st == CL_SUCCESS)
                st = BCL_CL(clGetKernelWorkGroupInfo, k, d->device, CL_KERNEL_WORK_GROUP_SIZE,
                            sizeof lim, &lim, NULL);
            clReleaseKernel(k);
            if (st != CL_SUCCESS)
                return bcl_cl_fail(e, st, "clGetKernelWorkGroupInfo", d->name);
            t->local = pref > 1 && pref <= lim ? pref : 1;
        }
        t->global = (size_t)cu * CPU_ITEMS_PER * t->local;
        return BCL_OK;
    }
    size_t lim = d->max_work_group ? d->max_work_group : 1;
    if (d->max_item_sizes[0] && d->max_item_sizes[0] < lim)
        lim = d->max_item_sizes[0];
    t->local = lim < GPU_LOCAL ? lim : GPU_LOCAL;
    t->global = bcl_round_up((size_t)cu * GPU_ITEMS_PER, t->local);
    return BCL_OK;
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
    t->repeats = mo && mo->repeats ? mo->repeats : 5;
    if (t->repeats > MAX_REPEATS)
        t->repeats = MAX_REPEATS;
    double target = mo && mo->repeat_ms > 0 ? mo->repeat_ms : DEFAULT_TARGET;
    float start[MAX_CHAINS * MAX_W];
    for (unsigned j = 0; j < MAX_CHAINS * MAX_W; j++)
        start[j] = start_value(j);
    int rc = build(t, e);
    if (rc == BCL_OK)
        rc = shape(t, e);
    if (rc == BCL_OK) {
        cl_int st;
        t->start = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c),
                                 CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof start, start);
        if (st != CL_SUCCESS)
            rc = bcl_cl_fail(e, st, "clCreateBuffer", t->d->name);
    }
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
    out->global = t->global;
    out->local = t->local;
    double x[MAX_REPEATS];
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
