/*
 * ballcl-addpeak: the float32 add rate of this host's cores measured by a
 * plain C program, no OpenCL: a cross-check of the add-rate bound that
 * ballcl measures on the device itself (cl/addrate.cl, docs/PERFORMANCE.md).
 *
 * Each thread runs independent chains a = a + inc of the widest vectors the
 * host has, chosen at run time: 16 chains of 512 bits with AVX-512 (32
 * registers), 12 of 256 bits with AVX2 and 12 of 128 bits otherwise (16
 * registers: 12 chains and the increment fit without spilling). Twelve
 * chains cover an add latency of up to 6 cycles on two pipes. Built with
 * -ffp-contract=off; the adds cannot be folded (float addition does not
 * associate and the increment is only known at run time), and every chain's
 * final value is checked against the same adds done one lane at a time.
 *
 * usage: ballcl-addpeak [SECONDS]   prints the vector width used, GFLOP/s
 *        (best of 5 rounds) and the implied seed ball-steps/s (adds / 3);
 *        --help says more
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LANES  16
#define MAX_CHAINS 16

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One kernel per vector width: C chains of L-lane vectors, iters rounds of
 * one add per chain; the final chains go to out[C * L]. */
#define CHAINS_FN(NAME, ATTR, L, C)                                                                \
    ATTR static void NAME(long iters, float inc, const float *start, float *out)                   \
    {                                                                                              \
        typedef float v __attribute__((vector_size(4 * (L))));                                     \
        v a[C], d;                                                                                 \
        for (int l = 0; l < (L); l++)                                                              \
            d[l] = inc;                                                                            \
        for (int c = 0; c < (C); c++)                                                              \
            memcpy(&a[c], start + c * (L), sizeof a[c]);                                           \
        for (long i = 0; i < iters; i++) {                                                         \
            _Pragma("GCC unroll 16") for (int c = 0; c < (C); c++) a[c] = a[c] + d;                \
        }                                                                                          \
        memcpy(out, a, sizeof a);                                                                  \
    }

CHAINS_FN(chains_128, , 4, 12)
#if defined(__x86_64__) || defined(__i386__)
CHAINS_FN(chains_256, __attribute__((target("avx2"))), 8, 12)
CHAINS_FN(chains_512, __attribute__((target("avx512f"))), 16, 16)
#endif

typedef void (*chains_fn)(long, float, const float *, float *);

/* The widest kernel this CPU runs, with its lanes and chains. */
static chains_fn pick(int *lanes, int *chains, const char **isa)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        *lanes = 16, *chains = 16, *isa = "avx512f";
        return chains_512;
    }
    if (__builtin_cpu_supports("avx2")) {
        *lanes = 8, *chains = 12, *isa = "avx2";
        return chains_256;
    }
#endif
    *lanes = 4, *chains = 12, *isa = "128-bit";
    return chains_128;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ballcl-addpeak [SECONDS]\n\n"
               "Measures the float32 add rate the host's cores sustain (independent\n"
               "chains of the widest vectors the CPU has, chosen at run time: 16 of\n"
               "512 bits with AVX-512, 12 of 256 bits with AVX2, else 12 of 128 bits,\n"
               "per OpenMP thread), for SECONDS in all\n"
               "(default 2, at most 3600): prints GFLOP/s and the bound it sets on the\n"
               "seed model's fused kernel on a CPU (3 adds per ball-step).\n"
               "OMP_NUM_THREADS sets the threads (default: every core).\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return 0;
    }
    char *end = NULL;
    double seconds = argc > 1 ? strtod(argv[1], &end) : 2.0;
    if (argc > 2 || (argc > 1 && (end == argv[1] || *end || !(seconds > 0 && seconds <= 3600)))) {
        fprintf(stderr, "ballcl-addpeak: '%s': expected SECONDS, a number from 0 to 3600\n",
                argv[argc > 2 ? 2 : 1]);
        usage(stderr);
        return 2;
    }
    int lanes, chains;
    const char *isa;
    chains_fn fn = pick(&lanes, &chains, &isa);
    const float inc = 0x1p-10f;
    float start[MAX_LANES * MAX_CHAINS];
    for (int j = 0; j < MAX_LANES * MAX_CHAINS; j++)
        start[j] = 1.0f + (float)j * 0x1p-7f;
    long iters = 1000000;
    int threads = omp_get_max_threads();
    double best = 0;
    int bad = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        long done = 0;
        while (now() - t0 < seconds / 5) {
#pragma omp parallel reduction(+ : bad)
            {
                float out[MAX_LANES * MAX_CHAINS];
                fn(iters, inc, start, out);
                /* Every lane against the same adds done one at a time. */
                if (omp_get_thread_num() == 0 && rep == 0 && done == 0)
                    for (int j = 0; j < lanes * chains; j++) {
                        float want = start[j];
                        for (long i = 0; i < iters; i++)
                            want = want + inc;
                        bad += memcmp(&want, &out[j], sizeof want) != 0;
                    }
            }
            done += iters;
        }
        double t = now() - t0;
        double flops = (double)done * chains * lanes * threads / t;
        if (flops > best)
            best = flops;
    }
    if (bad) {
        fprintf(stderr, "ballcl-addpeak: %d chain values differ from the scalar adds\n", bad);
        return 1;
    }
    printf("isa %s\nlanes %d\nchains %d\nthreads %d\nadd_gflop_per_s %.2f\n"
           "seed_ball_steps_per_s_bound %.3e\n",
           isa, lanes, chains, threads, best / 1e9, best / 3);
    return 0;
}
