/*
 * The survey's peaks beside the add rate (docs/SURVEY.md; the kinds are
 * bcl_peak_kind's), measured on the device by cl/peak.cl as the add rate is
 * (src/measure/addrate.c): vectors of the device's native width for the
 * type, bcl_chain_shape's launch shape, 8 and 16 chains per work-item (the
 * best median counts), warm-up and calibration never counted, repeats of
 * ten launches back to back timed by checked profiling events
 * (src/ocl/clock_check.c). Every chain's final value is compared bit for
 * bit with the same operations done on the host (C's fmaf and fma, and a
 * by-hand half for half), so a compiler that dropped or folded work is caught.
 */
#include "measure/timing.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNROLL     4 /* operations per chain per loop iteration (cl/peak.cl) */
#define MAX_W      16
#define MAX_CHAINS 16
#define LAUNCHES   10
#define DEFAULT_MS 50.0

static const unsigned chain_counts[] = {8, 16};
#define NSETS (sizeof chain_counts / sizeof chain_counts[0])

/* m and c of a = fma(a, m, c): exact in half, float and double; the
 * chains converge to c / (1 - m) = 1 from 1 + j/128, far from overflow and
 * denormals for any number of operations. */
#define FMA_M (1.0 - 1.0 / 256)
#define FMA_C (1.0 / 256)

/* For messages, by bcl_peak_kind. */
static const char *const peak_names[] = {"?", "float FMA", "int32 add", "double FMA", "half FMA"};

static size_t scalar_size(bcl_peak_kind k)
{
    return k == BCL_PEAK_FMA64 ? 8 : k == BCL_PEAK_FMA16 ? 2 : 4;
}

/* Operations of one chain step counted in the figure: an FMA is 2. */
static double ops_per_step(bcl_peak_kind k)
{
    return k == BCL_PEAK_INT32 ? 1.0 : 2.0;
}

static unsigned native_width(const bcl_device_info *d, bcl_peak_kind k)
{
    cl_device_info q = k == BCL_PEAK_FMA64   ? CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE
                       : k == BCL_PEAK_FMA16 ? CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF
                       : k == BCL_PEAK_INT32 ? CL_DEVICE_NATIVE_VECTOR_WIDTH_INT
                                             : CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT;
    cl_uint w = 0;
    if (BCL_CL(clGetDeviceInfo, (cl_device_id)d->device, q, sizeof w, &w, NULL) != CL_SUCCESS)
        w = 1;
    return bcl_chain_width(w);
}

/* ---- host values ------------------------------------------------------------ */

/* The host's copy of chain values, as doubles for the float kinds and as
 * uint32 for int32; converted to the device's type to compare. */
typedef union host_value {
    double f;
    uint32_t u;
} host_value;

static host_value start_value(bcl_peak_kind k, unsigned j)
{
    host_value v;
    if (k == BCL_PEAK_INT32)
        v.u = 0x9e3779b9u * (j + 1); /* distinct, odd and even mixed */
    else
        v.f = 1.0 + (double)j / 128; /* exact in half for j < 256 */
    return v;
}

/* IEEE half precision by hand, rounding to nearest even: not every C
 * compiler has _Float16 on x86-64 (clang 14 has not), and the reference
 * must be the same bits whatever compiled it. Scaling by powers of two is
 * exact, so rint() (the default rounding mode) rounds once. */
static uint16_t half_from_double(double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (isnan(x))
        return sign | 0x7e00;
    if (a >= 65520.0) /* 65504 is the largest half; from 65520 on, RNE gives inf */
        return sign | 0x7c00;
    if (a < 0x1p-14) /* subnormal (or zero): multiples of 2^-24 */
        return sign | (uint16_t)rint(a * 0x1p24);
    int ex;
    double f = frexp(a, &ex); /* a = f * 2^ex, f in [0.5, 1) */
    int e = ex - 1;
    double q = rint((f * 2.0 - 1.0) * 1024.0);
    if (q >= 1024.0) {
        q = 0;
        e++;
    }
    if (e > 15)
        return sign | 0x7c00;
    return sign | (uint16_t)((e + 15) << 10) | (uint16_t)q;
}

static double double_from_half(uint16_t h)
{
    double sign = (h & 0x8000) ? -1.0 : 1.0;
    int e = (h >> 10) & 31, m = h & 1023;
    if (e == 0)
        return sign * ldexp(m, -24);
    if (e == 31)
        return m ? NAN : sign * INFINITY;
    return sign * ldexp(1024 + m, e - 25);
}

/* Writes v as the device's scalar type into p. */
static void store(bcl_peak_kind k, host_value v, void *p)
{
    switch (k) {
    case BCL_PEAK_FMA32: {
        float f = (float)v.f;
        memcpy(p, &f, 4);
        break;
    }
    case BCL_PEAK_FMA64:
        memcpy(p, &v.f, 8);
        break;
    case BCL_PEAK_FMA16: {
        uint16_t h = half_from_double(v.f);
        memcpy(p, &h, 2);
        break;
    }
    case BCL_PEAK_INT32:
        memcpy(p, &v.u, 4);
        break;
    }
}

static double load_double(bcl_peak_kind k, const void *p)
{
    if (k == BCL_PEAK_FMA32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    if (k == BCL_PEAK_FMA16) {
        uint16_t h;
        memcpy(&h, p, 2);
        return double_from_half(h);
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

/* One fma of the kind on the host, correctly rounded like OpenCL's fma():
 * for half, the product of two halves and the sum with c are exact in
 * double (22 + 9 bits), so one rounding to half is the fma. */
static double host_fma(bcl_peak_kind k, double a, double m, double c)
{
    if (k == BCL_PEAK_FMA32)
        return (double)fmaf((float)a, (float)m, (float)c);
    if (k == BCL_PEAK_FMA16)
        return double_from_half(half_from_double(a * m + c));
    return fma(a, m, c);
}

/* The FMA chains' values after `steps` operations each, into want[0..per). */
static void host_chains(bcl_peak_kind k, unsigned per, uint64_t steps, host_value *want)
{
    for (unsigned j = 0; j < per; j++)
        want[j] = start_value(k, j);
    for (uint64_t s = 0; s < steps; s++)
        for (unsigned j = 0; j < per; j++)
            want[j].f = host_fma(k, want[j].f, FMA_M, FMA_C);
}

/* The int32 chains: element j is lane j % w of chain j / w; chain 2p and
 * 2p + 1 update each other, one step of each per pair step. */
static void host_int_chains(unsigned chains, unsigned w, uint64_t steps, host_value *want)
{
    for (unsigned j = 0; j < chains * w; j++)
        want[j] = start_value(BCL_PEAK_INT32, j);
    for (uint64_t s = 0; s < steps; s++)
        for (unsigned p = 0; p < chains; p += 2)
            for (unsigned l = 0; l < w; l++) {
                uint32_t *x = &want[p * w + l].u, *y = &want[(p + 1) * w + l].u;
                *x += *y;
                *y += *x;
            }
}

/* ---- the rate timer ------------------------------------------------------------ */

typedef struct chain_set {
    unsigned chains;
    cl_kernel k;
    cl_mem out;
    unsigned iters; /* per timed launch */
    unsigned checked_iters;
    double ops; /* per timed repeat (LAUNCHES launches) */
    double x[BCL_MAX_REPEATS];
} chain_set;

typedef struct peak_timer {
    bcl_context *c;
    const bcl_device_info *d;
    bcl_peak_kind kind;
    cl_program prog;
    cl_mem start, params;
    bcl_chain_size sh;
    unsigned w, repeats;
    chain_set set[NSETS];
} peak_timer;

static double ops_of(const peak_timer *t, const chain_set *cs, unsigned iters)
{
    return (double)t->sh.global * cs->chains * t->w * UNROLL * iters * ops_per_step(t->kind);
}

/* The float32 operations of a launch for the profiling check: a half FMA
 * may run two to a float32 lane (packed), so half counts as half. */
static double check_ops(const peak_timer *t, const chain_set *cs, unsigned iters)
{
    return ops_of(t, cs, iters) / (t->kind == BCL_PEAK_FMA16 ? 2 : 1);
}

/* Reads cs's chains back and compares every value with the host's
 * (cs->checked_iters rounds of UNROLL steps). */
static int check(peak_timer *t, chain_set *cs, bcl_error *e)
{
    unsigned per = cs->chains * t->w;
    size_t ss = scalar_size(t->kind), n = t->sh.global * per;
    unsigned char *got = malloc(n * ss);
    host_value want[MAX_CHAINS * MAX_W];
    if (!got)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    cl_int st = BCL_CL(clEnqueueReadBuffer, bcl_context_queue(t->c), cs->out, CL_TRUE, 0, n * ss,
                       got, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        free(got);
        return bcl_cl_fail(e, st, "clEnqueueReadBuffer", t->d->name);
    }
    uint64_t steps = (uint64_t)cs->checked_iters * UNROLL;
    if (t->kind == BCL_PEAK_INT32)
        host_int_chains(cs->chains, t->w, steps, want);
    else
        host_chains(t->kind, per, steps, want);
    unsigned char w_bytes[MAX_CHAINS * MAX_W * 8];
    for (unsigned j = 0; j < per; j++)
        store(t->kind, want[j], w_bytes + j * ss);
    uint64_t bad = 0;
    size_t first = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp(got + i * ss, w_bytes + (i % per) * ss, ss) != 0 && bad++ == 0)
            first = i;
    int rc = BCL_OK;
    if (bad) {
        char g[48], w[48];
        if (t->kind == BCL_PEAK_INT32) {
            uint32_t a, b;
            memcpy(&a, got + first * ss, 4);
            memcpy(&b, w_bytes + (first % per) * ss, 4);
            snprintf(g, sizeof g, "%u", a);
            snprintf(w, sizeof w, "%u", b);
        } else {
            snprintf(g, sizeof g, "%.17g", load_double(t->kind, got + first * ss));
            snprintf(w, sizeof w, "%.17g", load_double(t->kind, w_bytes + (first % per) * ss));
        }
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "%s rate kernel on '%s': %llu of %zu chain values differ from the host's "
                      "(first: work-item %zu, got %s, want %s)",
                      peak_names[t->kind], t->d->name, (unsigned long long)bad, n, first / per, g,
                      w);
    }
    free(got);
    return rc;
}

static int prepare(peak_timer *t, chain_set *cs, double target, bcl_error *e)
{
    char name[32];
    snprintf(name, sizeof name, "peak_c%u", cs->chains);
    int rc = bcl_chain_kernel(t->c, t->prog, name, t->start, sizeof t->params, &t->params,
                              t->sh.global * cs->chains * t->w * scalar_size(t->kind), &cs->k,
                              &cs->out, e);
    if (rc == BCL_OK)
        rc = bcl_chain_calibrate(t->c, cs->k, &t->sh, check_ops(t, cs, 1), target,
                                 &cs->checked_iters, e);
    if (rc == BCL_OK)
        rc = check(t, cs, e);
    unsigned it = cs->checked_iters;
    cs->iters = it / LAUNCHES ? it / LAUNCHES : 1;
    cs->ops = ops_of(t, cs, cs->iters) * LAUNCHES;
    return rc;
}

static void timer_free(peak_timer *t)
{
    for (size_t i = 0; i < NSETS; i++) {
        if (t->set[i].k)
            clReleaseKernel(t->set[i].k);
        if (t->set[i].out)
            clReleaseMemObject(t->set[i].out);
    }
    if (t->start)
        clReleaseMemObject(t->start);
    if (t->params)
        clReleaseMemObject(t->params);
    if (t->prog)
        clReleaseProgram(t->prog);
    free(t);
}

int bcl_measure_peak_rate(bcl_context *c, bcl_peak_kind kind, const bcl_measure_opts *mo,
                          bcl_stats *rate, bcl_error *e)
{
    memset(rate, 0, sizeof *rate);
    peak_timer *t = calloc(1, sizeof *t);
    if (!t)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    t->c = c;
    t->d = bcl_context_device(c);
    t->kind = kind;
    t->w = native_width(t->d, kind);
    t->repeats = bcl_repeats(mo && mo->repeats ? mo->repeats : 5);
    double target = mo && mo->repeat_ms > 0 ? mo->repeat_ms : DEFAULT_MS;
    size_t ss = scalar_size(kind);
    unsigned char start[MAX_CHAINS * MAX_W * 8], params[2 * 8];
    for (unsigned j = 0; j < MAX_CHAINS * MAX_W; j++)
        store(kind, start_value(kind, j), start + j * ss);
    store(kind, (host_value){.f = FMA_M}, params);
    store(kind, (host_value){.f = FMA_C}, params + ss);
    if (kind == BCL_PEAK_INT32)
        memset(params, 0, sizeof params);
    char defines[64];
    snprintf(defines, sizeof defines, "-DBCL_KIND=%d -DBCL_W=%u", (int)kind, t->w);
    int rc = bcl_chain_build(c, "peak.cl", defines, &t->prog, e);
    if (rc == BCL_OK)
        rc = bcl_chain_shape(t->d, t->prog, t->w == 1 ? "peak_c16" : NULL, &t->sh, e);
    if (rc == BCL_OK)
        rc = bcl_chain_input(c, start, MAX_CHAINS * MAX_W * ss, &t->start, e);
    if (rc == BCL_OK)
        rc = bcl_chain_input(c, params, 2 * ss, &t->params, e);
    for (size_t i = 0; i < NSETS && rc == BCL_OK; i++) {
        t->set[i].chains = chain_counts[i];
        rc = prepare(t, &t->set[i], target, e);
    }
    /* Repeats interleaved over the chain counts (a busy moment weighs on
     * both alike). */
    for (unsigned r = 0; r < t->repeats && rc == BCL_OK; r++)
        for (size_t i = 0; i < NSETS && rc == BCL_OK; i++) {
            chain_set *cs = &t->set[i];
            double ms = 0;
            rc = bcl_chain_launch(c, cs->k, &t->sh, cs->iters, LAUNCHES,
                                  check_ops(t, cs, cs->iters), &ms, e);
            cs->x[r] = ms > 0 ? cs->ops / (ms * 1e6) : 0; /* per ns = G per s */
        }
    /* What was timed is what is checked: the last launches' chains. */
    for (size_t i = 0; i < NSETS && rc == BCL_OK; i++) {
        chain_set *cs = &t->set[i];
        cs->checked_iters = cs->iters;
        if ((rc = check(t, cs, e)))
            break;
        bcl_stats st;
        bcl_stats_compute(cs->x, t->repeats, &st);
        if (i == 0 || st.median > rate->median)
            *rate = st;
    }
    timer_free(t);
    return rc;
}
