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
 * compute unit; any other device gets work-groups of up to 256 and 2048
 * work-items per compute unit, enough to fill a GPU's multiprocessor.
 * Several chain counts are measured, and the fastest counts, so that the
 * figure is the units' throughput rather than their latency.
 *
 * Same rules as every other figure (src/measure/measure.c): warm-up and
 * calibration never counted, device time from profiling events, median of
 * repeats. The result is validated: every chain's final value is compared
 * bit for bit with the same adds done on the host, so a compiler that folded
 * or dropped adds would be caught rather than believed.
 */
#include "ballcl/ballcl.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNROLL         4  /* adds per chain per loop iteration (cl/addrate.cl) */
#define MAX_W          16 /* widest float vector OpenCL has */
#define MAX_CHAINS     16
#define CPU_ITEMS_PER  16 /* work-items (= work-groups) per compute unit on a CPU */
#define GPU_ITEMS_PER  2048
#define GPU_LOCAL      256
#define MAX_ITERS      (1u << 28)
#define MAX_REPEATS    1000
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
    unsigned w = d->native_float_width;
    /* OpenCL's vector widths are 2, 3, 4, 8, 16; a driver that says 0
     * (query failed) or something odd gets the widest power of two below. */
    unsigned p = 1;
    while (p * 2 <= w && p * 2 <= MAX_W)
        p *= 2;
    return p;
}

typedef struct probe {
    bcl_context *c;
    const bcl_device_info *d;
    cl_kernel k;
    cl_mem start, out;
    size_t global, local;
    unsigned w, chains;
} probe;

static int launch(probe *p, unsigned iters, double *ms, bcl_error *e)
{
    cl_command_queue q = bcl_context_queue(p->c);
    cl_int st = BCL_CL(clSetKernelArg, p->k, 2, sizeof iters, &iters);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clSetKernelArg", p->d->name);
    cl_event ev = NULL;
    st = BCL_CL(clEnqueueNDRangeKernel, q, p->k, 1, NULL, &p->global, &p->local, 0, NULL, &ev);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clEnqueueNDRangeKernel", p->d->name);
    st = BCL_CL(clWaitForEvents, 1, &ev);
    if (st != CL_SUCCESS) {
        clReleaseEvent(ev);
        return bcl_cl_fail(e, st, "clWaitForEvents", p->d->name);
    }
    cl_ulong a = 0, b = 0;
    st = BCL_CL(clGetEventProfilingInfo, ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
    if (st == CL_SUCCESS)
        st = BCL_CL(clGetEventProfilingInfo, ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
    clReleaseEvent(ev);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clGetEventProfilingInfo", p->d->name);
    *ms = b > a ? (double)(b - a) / 1e6 : 0;
    return BCL_OK;
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

static uint64_t adds_of(const probe *p, unsigned iters)
{
    return (uint64_t)p->global * p->chains * p->w * UNROLL * iters;
}

/* Reads the chains back and compares every value with the host's adds. */
static int check(probe *p, unsigned iters, uint64_t *compared, bcl_error *e)
{
    size_t per = (size_t)p->chains * p->w, n = p->global * per;
    float *got = malloc(n * sizeof *got), want[MAX_CHAINS * MAX_W];
    if (!got)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    cl_int st = BCL_CL(clEnqueueReadBuffer, bcl_context_queue(p->c), p->out, CL_TRUE, 0,
                       n * sizeof *got, got, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        free(got);
        return bcl_cl_fail(e, st, "clEnqueueReadBuffer", p->d->name);
    }
    for (size_t j = 0; j < per; j++)
        want[j] = start_value((unsigned)j);
    /* Chain-major inner loop: the host's adds are independent too, so this
     * takes milliseconds even for the millions of adds of a chain. */
    for (uint64_t i = 0; i < (uint64_t)iters * UNROLL; i++)
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
                      p->d->name, (unsigned long long)bad, n, first / per, (double)got[first],
                      (double)want[first % per]);
    *compared += n;
    free(got);
    return rc;
}

/* Sets the arguments of p->k, and the chain count it was made for. */
static int set_args(probe *p, bcl_error *e)
{
    float inc = INC;
    cl_int st = BCL_CL(clSetKernelArg, p->k, 0, sizeof p->start, &p->start);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, p->k, 1, sizeof inc, &inc);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, p->k, 3, sizeof p->out, &p->out);
    return st == CL_SUCCESS ? BCL_OK : bcl_cl_fail(e, st, "clSetKernelArg", p->d->name);
}

/* Warm-up (PoCL compiles the work-group function at the first launch),
 * then a tenth of the target, then one launch of the target's size, whose
 * chains are checked; *rate is that launch's GFLOP/s. */
static int size_chains(probe *p, double target, unsigned *iters, double *rate, uint64_t *compared,
                       bcl_error *e)
{
    unsigned it = 16;
    double ms;
    int rc = set_args(p, e);
    if (rc == BCL_OK)
        rc = launch(p, it, &ms, e);
    if (rc == BCL_OK) {
        it = scale_iters(it, ms, target / 10);
        rc = launch(p, it, &ms, e);
    }
    if (rc == BCL_OK) {
        it = scale_iters(it, ms, target);
        rc = launch(p, it, &ms, e);
    }
    if (rc == BCL_OK)
        rc = check(p, it, compared, e);
    *iters = it;
    *rate = ms > 0 ? (double)adds_of(p, it) / (ms * 1e6) : 0;
    return rc;
}

/* Builds cl/addrate.cl for width w into *prog. */
static int build(bcl_context *c, unsigned w, cl_program *prog, bcl_error *e)
{
    char *src = NULL;
    size_t len = 0;
    int rc = bcl_kernel_source("addrate.cl", &src, &len, e);
    if (rc)
        return rc;
    char opts[256];
    snprintf(opts, sizeof opts, "%s -DBCL_W=%u", bcl_build_options(), w);
    rc = bcl_program_from_source(bcl_context_cl(c), bcl_context_device(c), src, len, opts, prog, e);
    free(src);
    return rc;
}

struct bcl_add_timer {
    probe p;
    cl_program prog;
    unsigned iters, repeats, done;
    double *x; /* GFLOP/s of each repeat */
    bcl_add_rate r;
};

void bcl_add_timer_free(bcl_add_timer *t)
{
    if (!t)
        return;
    if (t->p.k)
        clReleaseKernel(t->p.k);
    if (t->p.start)
        clReleaseMemObject(t->p.start);
    if (t->p.out)
        clReleaseMemObject(t->p.out);
    if (t->prog)
        clReleaseProgram(t->prog);
    free(t->x);
    free(t);
}

/* The launch shape from device queries (see the top of this file). */
static void shape(probe *p)
{
    const bcl_device_info *d = p->d;
    unsigned cu = d->compute_units ? d->compute_units : 1;
    if (d->type & CL_DEVICE_TYPE_CPU) {
        p->local = 1;
        p->global = (size_t)cu * CPU_ITEMS_PER;
        return;
    }
    size_t lim = d->max_work_group ? d->max_work_group : 1;
    if (d->max_item_sizes[0] && d->max_item_sizes[0] < lim)
        lim = d->max_item_sizes[0];
    p->local = lim < GPU_LOCAL ? lim : GPU_LOCAL;
    p->global = bcl_round_up((size_t)cu * GPU_ITEMS_PER, p->local);
}

/* Buffers: the start values, and room for the widest chain count's output. */
static int buffers(probe *p, bcl_error *e)
{
    float start[MAX_CHAINS * MAX_W];
    for (unsigned j = 0; j < MAX_CHAINS * MAX_W; j++)
        start[j] = start_value(j);
    cl_int st;
    cl_context ctx = bcl_context_cl(p->c);
    p->start = BCL_CL_CREATE(&st, clCreateBuffer, ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             sizeof start, start);
    if (st == CL_SUCCESS)
        p->out = BCL_CL_CREATE(&st, clCreateBuffer, ctx, CL_MEM_WRITE_ONLY,
                               p->global * MAX_CHAINS * p->w * sizeof(float), NULL);
    return st == CL_SUCCESS ? BCL_OK : bcl_cl_fail(e, st, "clCreateBuffer", p->d->name);
}

int bcl_add_timer_create(bcl_context *c, const bcl_measure_opts *mo, bcl_add_timer **out,
                         bcl_error *e)
{
    *out = NULL;
    bcl_add_timer *t = calloc(1, sizeof *t);
    if (!t)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    t->repeats = mo && mo->repeats ? mo->repeats : 5;
    if (t->repeats > MAX_REPEATS)
        t->repeats = MAX_REPEATS;
    t->x = calloc(t->repeats, sizeof *t->x);
    if (!t->x) {
        free(t);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    double target = mo && mo->repeat_ms > 0 ? mo->repeat_ms : DEFAULT_TARGET;
    probe *p = &t->p;
    *p =
        (probe){.c = c, .d = bcl_context_device(c), .w = bcl_add_rate_width(bcl_context_device(c))};
    shape(p);
    int rc = build(c, p->w, &t->prog, e);
    if (rc == BCL_OK)
        rc = buffers(p, e);
    /* Every chain count, sized and checked; the fastest is kept. */
    double best = -1;
    for (size_t i = 0; i < sizeof chain_counts / sizeof chain_counts[0] && rc == BCL_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "addrate_c%u", chain_counts[i]);
        cl_int st;
        cl_kernel k = BCL_CL_CREATE(&st, clCreateKernel, t->prog, name);
        if (st != CL_SUCCESS) {
            rc = bcl_cl_fail(e, st, "clCreateKernel", p->d->name);
            break;
        }
        cl_kernel keep = p->k;
        unsigned keep_chains = p->chains;
        p->k = k;
        p->chains = chain_counts[i];
        unsigned iters = 0;
        double rate = 0;
        rc = size_chains(p, target, &iters, &rate, &t->r.compared, e);
        if (rc == BCL_OK && rate > best) {
            best = rate;
            t->iters = iters;
            if (keep)
                clReleaseKernel(keep);
        } else {
            clReleaseKernel(k);
            p->k = keep;
            p->chains = keep_chains;
        }
    }
    if (rc == BCL_OK)
        rc = set_args(p, e);
    if (rc) {
        bcl_add_timer_free(t);
        return rc;
    }
    t->r.width = p->w;
    t->r.chains = p->chains;
    t->r.global = p->global;
    t->r.local = p->local;
    t->r.adds_per_launch = adds_of(p, t->iters);
    *out = t;
    return BCL_OK;
}

int bcl_add_timer_repeat(bcl_add_timer *t, bcl_error *e)
{
    if (t->done == t->repeats)
        return BCL_OK;
    double ms = 0;
    int rc = launch(&t->p, t->iters, &ms, e);
    if (rc)
        return rc;
    t->x[t->done++] = ms > 0 ? (double)t->r.adds_per_launch / (ms * 1e6) : 0;
    return BCL_OK;
}

int bcl_add_timer_result(bcl_add_timer *t, bcl_add_rate *out, bcl_error *e)
{
    /* The last launch's chains too: what was timed is what was checked. */
    int rc = t->done ? check(&t->p, t->iters, &t->r.compared, e) : BCL_OK;
    *out = t->r;
    if (rc == BCL_OK && t->done) {
        double *x = malloc(t->done * sizeof *x);
        if (!x)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
        memcpy(x, t->x, t->done * sizeof *x);
        bcl_stats_compute(x, t->done, &out->gflop_per_s);
        free(x);
    }
    return rc;
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
