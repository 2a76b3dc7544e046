/*
 * ballcl-addpeak: the float32 add rate this host's cores can sustain, the
 * bound for any fused kernel of the seed model on a CPU (3 adds per
 * ball-step). Each thread runs 16 independent chains of 8-wide vector adds
 * (enough to hide the add latency on any x86 core), so the figure is the
 * throughput of the add units, not their latency. Built with the same
 * -ffp-contract=off as the rest; the adds cannot be folded because each
 * chain's increment is unknown to the compiler.
 *
 * usage: ballcl-addpeak [SECONDS]   prints GFLOP/s and the implied
 *        ball-steps/s bound (adds / 3); --help says more
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef float v8 __attribute__((vector_size(32)));

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 16 chains x 8 lanes x iters adds; returns a value so nothing is dead. */
static float chains(long iters, float seed)
{
    v8 acc[16], inc = {seed, seed, seed, seed, seed, seed, seed, seed};
    for (int c = 0; c < 16; c++)
        acc[c] = inc * (float)c;
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
        for (int c = 0; c < 16; c++)
            acc[c] = acc[c] + inc;
    }
    float s = 0;
    for (int c = 0; c < 16; c++)
        for (int l = 0; l < 8; l++)
            s += acc[c][l];
    return s;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ballcl-addpeak [SECONDS]\n\n"
               "Measures the float32 add rate the host's cores sustain (16 independent\n"
               "chains of 8-wide vector adds per OpenMP thread), for SECONDS in all\n"
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
    long iters = 1000000;
    int threads = omp_get_max_threads();
    double best = 0;
    volatile float sink = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        long done = 0;
        while (now() - t0 < seconds / 5) {
            float s = 0;
#pragma omp parallel reduction(+ : s)
            s += chains(iters, 1e-7f + (float)omp_get_thread_num() * 1e-9f);
            sink += s;
            done += iters;
        }
        double t = now() - t0;
        double flops = (double)done * 16 * 8 * threads / t;
        if (flops > best)
            best = flops;
    }
    printf("threads %d\nadd_gflop_per_s %.2f\nseed_ball_steps_per_s_bound %.3e\n", threads,
           best / 1e9, best / 3);
    return sink == 12345.0f;
}
