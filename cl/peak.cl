/*
 * The peaks of a survey beside the add rate (cl/addrate.cl), measured by the
 * device itself (src/measure/peak.c, docs/SURVEY.md): read-only global
 * bandwidth, and the rates of float FMA, int32 add, double FMA and half FMA.
 * The host picks one with -DBCL_KIND and the vector width with -DBCL_W.
 *
 * Rates: each work-item runs C independent chains of BCL_W-wide vectors in
 * pairs. An FMA chain is a = fma(a, m, c): fma() is one correctly rounded
 * operation, so the host checks every chain bit for bit against C's fma;
 * contraction is off, and m and c come from the host at run time, so
 * nothing can be folded. An int32 chain pair is x = x + y; y = y + x (a
 * Fibonacci recurrence modulo 2^32): a loop of a = a + c alone would be
 * replaced by its closed form (a + n * c) by any optimising compiler.
 *
 * Read-only bandwidth: every float4 of a buffer is read once per launch and
 * summed as integers (as_uint4: any bits are valid, and integer sums are
 * exact in any order), one sum per work-item written out, and the host
 * checks each sum.
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef BCL_KIND
#define BCL_KIND 0
#endif
#ifndef BCL_W
#define BCL_W 1
#endif

#define BCL_READ  0
#define BCL_FMA32 1
#define BCL_INT32 2
#define BCL_FMA64 3
#define BCL_FMA16 4

#if BCL_KIND == BCL_READ

/* GPUs: work-item g reads float4s g, g + G, g + 2G, ... (G the global size),
 * so that the work-items of a warp read consecutive addresses; four loads
 * in flight per iteration. */
__kernel void readonly_strided(__global const float4 *restrict in, ulong n4,
                               __global uint *restrict out)
{
    size_t g = get_global_id(0), gs = get_global_size(0);
    uint4 acc = (uint4)(0);
    size_t i = g;
    for (; i + 3 * gs < n4; i += 4 * gs)
        acc += (as_uint4(in[i]) + as_uint4(in[i + gs])) +
               (as_uint4(in[i + 2 * gs]) + as_uint4(in[i + 3 * gs]));
    for (; i < n4; i += gs)
        acc += as_uint4(in[i]);
    out[g] = acc.x + acc.y + acc.z + acc.w;
}

/* CPUs: work-item g reads one contiguous block of `per` float4s, which a
 * core's prefetcher streams. */
__kernel void readonly_blocked(__global const float4 *restrict in, ulong n4, ulong per,
                               __global uint *restrict out)
{
    size_t g = get_global_id(0);
    ulong lo = g * per, hi = lo + per < n4 ? lo + per : n4;
    uint4 acc = (uint4)(0);
    for (ulong i = lo; i < hi; i++)
        acc += as_uint4(in[i]);
    out[g] = acc.x + acc.y + acc.z + acc.w;
}

#else

/* A macro, not a typedef: the vector type's name is built from it. */
#if BCL_KIND == BCL_FMA64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define scalar double
#elif BCL_KIND == BCL_FMA16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define scalar half
#elif BCL_KIND == BCL_INT32
#define scalar uint
#else
#define scalar float
#endif

#define CAT_(a, b) a##b
#define CAT(a, b)  CAT_(a, b)
#if BCL_W == 1
typedef scalar vec;
#define LOADV(i, p)     (p)[i]
#define STOREV(v, i, p) ((p)[i] = (v))
#else
typedef CAT(scalar, BCL_W) vec;
#define LOADV(i, p)     CAT(vload, BCL_W)(i, p)
#define STOREV(v, i, p) CAT(vstore, BCL_W)(v, i, p)
#endif

#define DECL(i)  vec a##i = LOADV(i, start);
#define STORE(i) STOREV(a##i, base + (i), out);
#if BCL_KIND == BCL_INT32
#define OP(i, j)                                                                                   \
    a##i = a##i + a##j;                                                                            \
    a##j = a##j + a##i;
#else
#define OP(i, j)                                                                                   \
    a##i = fma(a##i, m, c);                                                                        \
    a##j = fma(a##j, m, c);
#endif

#define CHAINS8(M)  M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define CHAINS16(M) CHAINS8(M) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#define PAIRS8      OP(0, 1) OP(2, 3) OP(4, 5) OP(6, 7)
#define PAIRS16     PAIRS8 OP(8, 9) OP(10, 11) OP(12, 13) OP(14, 15)
/* One round: 4 operations per chain. */
#define ROUND(C)    PAIRS##C PAIRS##C PAIRS##C PAIRS##C

/* params[0] is m, params[1] is c (unused by the int32 chains). */
#define PEAK(C)                                                                                    \
    __kernel void peak_c##C(__global const scalar *restrict start,                                 \
                            __global const scalar *restrict params, uint iters,                    \
                            __global scalar *restrict out)                                         \
    {                                                                                              \
        size_t base = get_global_id(0) * C;                                                        \
        vec m = (vec)(params[0]), c = (vec)(params[1]);                                            \
        CHAINS##C(DECL);                                                                           \
        for (uint i = 0; i < iters; i++) {                                                         \
            ROUND(C);                                                                              \
        }                                                                                          \
        CHAINS##C(STORE);                                                                          \
    }

PEAK(8)
PEAK(16)

#endif
