/*
 * The add-rate bound (docs/PERFORMANCE.md): how many float32 additions a
 * second the device can retire, measured by the device itself. Every ball
 * model here is a chain of float additions (and a few other operations) per
 * ball-step, so this rate bounds every fused kernel: a kernel measured above
 * it means the bound is wrong.
 *
 * Each work-item runs C independent chains a = a + inc of BCL_W-wide vectors
 * (BCL_W is the device's native float vector width, given as a build
 * option). A chain's next add waits for its previous one, so C chains keep
 * up to C adds of every work-item in flight; the host measures several C and
 * keeps the fastest, so "enough in flight" is measured rather than assumed.
 *
 * Nothing can be folded: contraction is off and float addition is not
 * associative, so the compiler must perform every add in order; the start
 * values and the increment come from the host at run time; and every
 * chain's final value is written out, where the host checks it bit for bit
 * against the same adds done in C.
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef BCL_W
#define BCL_W 1
#endif

#define CAT_(a, b) a##b
#define CAT(a, b)  CAT_(a, b)
#if BCL_W == 1
typedef float vec;
#define LOADV(i, p)     (p)[i]
#define STOREV(v, i, p) ((p)[i] = (v))
#else
typedef CAT(float, BCL_W) vec;
#define LOADV(i, p)     CAT(vload, BCL_W)(i, p)
#define STOREV(v, i, p) CAT(vstore, BCL_W)(v, i, p)
#endif

/* Declares chain a<i> from start vector i, adds, stores. */
#define DECL(i)  vec a##i = LOADV(i, start);
#define ADD(i)   a##i = a##i + d;
#define STORE(i) STOREV(a##i, base + (i), out);

#define CHAINS4(M)  M(0) M(1) M(2) M(3)
#define CHAINS8(M)  CHAINS4(M) M(4) M(5) M(6) M(7)
#define CHAINS12(M) CHAINS8(M) M(8) M(9) M(10) M(11)
#define CHAINS16(M) CHAINS12(M) M(12) M(13) M(14) M(15)

/* One round: 4 adds per chain, unrolled so that the loop counter costs a
 * GPU few issue slots. */
#define ROUND(C) CHAINS##C(ADD) CHAINS##C(ADD) CHAINS##C(ADD) CHAINS##C(ADD)

/* `iters` rounds; out gets C vectors per work-item. */
#define ADDRATE(C)                                                                                 \
    __kernel void addrate_c##C(__global const float *restrict start, float inc, uint iters,        \
                               __global float *restrict out)                                       \
    {                                                                                              \
        size_t base = get_global_id(0) * C;                                                        \
        vec d = (vec)(inc);                                                                        \
        CHAINS##C(DECL);                                                                           \
        for (uint i = 0; i < iters; i++) {                                                         \
            ROUND(C);                                                                              \
        }                                                                                          \
        CHAINS##C(STORE);                                                                          \
    }

ADDRATE(4)
ADDRATE(8)
ADDRATE(12)
ADDRATE(16)
