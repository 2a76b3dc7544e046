/*
 * The survey's peaks beside the add rate (docs/SURVEY.md, bcl_peak_kind),
 * by cl/peak.cl and the chain timer as the add rate is (addrate.c): the
 * type's native vector width, 8 and 16 chains per work-item (the best
 * median counts). Every chain is compared bit for bit with the host's
 * operations (fmaf, fma, and a by-hand half), so a compiler that dropped or
 * folded work is caught.
 */
#include "measure/timing.h"
#include "ocl/clcall.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* m and c of a = fma(a, m, c): exact in half, float and double; the
 * chains converge to c / (1 - m) = 1 from 1 + j/128, far from overflow and
 * denormals for any number of operations. */
#define FMA_M (1.0 - 1.0 / 256)
#define FMA_C (1.0 / 256)

/* By bcl_peak_kind: the name for messages, the bytes of a value, the
 * operations of one chain step counted in the figure (an FMA is 2) and the
 * query of the native vector width. */
static const struct {
    const char *name;
    size_t scalar;
    double step_ops;
    cl_device_info width;
} kinds[] = {
    [BCL_PEAK_FMA32] = {"float FMA rate", 4, 2, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT},
    [BCL_PEAK_INT32] = {"int32 add rate", 4, 1, CL_DEVICE_NATIVE_VECTOR_WIDTH_INT},
    [BCL_PEAK_FMA64] = {"double FMA rate", 8, 2, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE},
    [BCL_PEAK_FMA16] = {"half FMA rate", 2, 2, CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF},
};

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
    float f = k == BCL_PEAK_FMA32 ? (float)v.f : 0;
    uint16_t h = k == BCL_PEAK_FMA16 ? half_from_double(v.f) : 0;
    memcpy(p,
           k == BCL_PEAK_FMA32   ? (const void *)&f
           : k == BCL_PEAK_FMA16 ? (const void *)&h
           : k == BCL_PEAK_INT32 ? (const void *)&v.u
                                 : (const void *)&v.f,
           kinds[k].scalar);
}

static double load_double(bcl_peak_kind k, const void *p)
{
    float f;
    uint16_t h;
    double d;
    memcpy(k == BCL_PEAK_FMA32   ? (void *)&f
           : k == BCL_PEAK_FMA16 ? (void *)&h
                                 : (void *)&d,
           p, kinds[k].scalar);
    return k == BCL_PEAK_FMA32 ? f : k == BCL_PEAK_FMA16 ? double_from_half(h) : d;
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

/* The host's chains after `steps` operations each, stored as the device
 * stores them. FMA chains each on their own; int32 chains: element j is
 * lane j % w of chain j / w, chain 2p and 2p + 1 update each other, one
 * step of each per pair step. */
static void want_chains(const bcl_chain_timer *t, unsigned chains, uint64_t steps,
                        unsigned char *out)
{
    bcl_peak_kind k = (bcl_peak_kind)t->kind;
    unsigned w = t->w, per = chains * w;
    host_value want[BCL_CHAIN_VALUES];
    for (unsigned j = 0; j < per; j++)
        want[j] = start_value(k, j);
    for (uint64_t s = 0; s < steps; s++) {
        if (k != BCL_PEAK_INT32)
            for (unsigned j = 0; j < per; j++)
                want[j].f = host_fma(k, want[j].f, FMA_M, FMA_C);
        else
            for (unsigned p = 0; p < chains; p += 2)
                for (unsigned l = 0; l < w; l++) {
                    uint32_t *x = &want[p * w + l].u, *y = &want[(p + 1) * w + l].u;
                    *x += *y;
                    *y += *x;
                }
    }
    for (unsigned j = 0; j < per; j++)
        store(k, want[j], out + j * t->scalar);
}

static void show_value(const bcl_chain_timer *t, const unsigned char *value, char *text, size_t n)
{
    uint32_t u;
    if (t->kind == BCL_PEAK_INT32) {
        memcpy(&u, value, sizeof u);
        snprintf(text, n, "%u", u);
    } else
        snprintf(text, n, "%.17g", load_double((bcl_peak_kind)t->kind, value));
}

int bcl_measure_peak_rate(bcl_context *c, bcl_peak_kind kind, const bcl_measure_opts *mo,
                          bcl_stats *rate, bcl_error *e)
{
    memset(rate, 0, sizeof *rate);
    bcl_chain_timer *t = calloc(1, sizeof *t);
    if (!t)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    size_t ss = kinds[kind].scalar;
    unsigned char start[BCL_CHAIN_VALUES * 8], params[2 * 8] = {0};
    for (unsigned j = 0; j < BCL_CHAIN_VALUES; j++)
        store(kind, start_value(kind, j), start + j * ss);
    if (kind != BCL_PEAK_INT32) {
        store(kind, (host_value){.f = FMA_M}, params);
        store(kind, (host_value){.f = FMA_C}, params + ss);
    }
    t->c = c;
    t->kernel = "peak";
    t->what = kinds[kind].name;
    t->ops_name = "operations";
    cl_uint w = 0;
    if (BCL_CL(clGetDeviceInfo, (cl_device_id)bcl_context_device(c)->device, kinds[kind].width,
               sizeof w, &w, NULL) != CL_SUCCESS)
        w = 1;
    t->w = bcl_chain_width(w);
    t->nsets = 2; /* 8 and 16 chains */
    t->set[0].chains = 8;
    t->set[1].chains = 16;
    t->scalar = ss;
    t->step_ops = kinds[kind].step_ops;
    /* A half FMA may run two to a float32 lane (packed), so for the
     * profiling check half counts as half. */
    t->check_share = kind == BCL_PEAK_FMA16 ? 0.5 : 1;
    t->arg = params;
    t->arg_size = 2 * ss;
    t->arg_buffer = true;
    t->kind = kind;
    t->want = want_chains;
    t->show = show_value;
    char defines[64];
    snprintf(defines, sizeof defines, "-DBCL_KIND=%d -DBCL_W=%u", (int)kind, t->w);
    int rc = bcl_chain_timer_start(t, "peak.cl", defines, start, mo, e);
    while (rc == BCL_OK && t->done < t->repeats)
        rc = bcl_chain_timer_repeat(t, e);
    const bcl_chain_set *best;
    if (rc == BCL_OK)
        rc = bcl_chain_timer_best(t, rate, &best, e);
    bcl_chain_timer_end(t);
    free(t);
    return rc;
}
