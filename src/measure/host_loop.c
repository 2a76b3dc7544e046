/*
 * The host rows of the benchmark (docs/BENCHMARK.md). "reference" is the model's
 * scalar C reference on one thread. "openmp" is the host alternative a user
 * would write: step after step, each step shared among all host threads.
 * This file is always compiled with -O3 and OpenMP (src/meson.build), and
 * like the whole project with -ffp-contract=off, so each ball sees the very
 * additions of the reference, in the same order: the same bits, which bench
 * checks before it times the row.
 */
#include "measure/timing.h"

#include <omp.h>

/* Balls per work share: big enough that the call per share is free, small
 * enough that both threads of a small N get work. */
#define SHARE 2048

void bcl_host_steps(const bcl_model *m, const float *p, float *state, size_t n, uint64_t steps,
                    bool openmp)
{
    if (!openmp) {
        m->reference(state, n, steps, p);
        return;
    }
    size_t shares = (n + SHARE - 1) / SHARE;
#pragma omp parallel
    for (uint64_t s = 0; s < steps; s++) {
        /* The implicit barrier at the end of each for is the step boundary. */
#pragma omp for schedule(static)
        for (size_t i = 0; i < shares; i++) {
            size_t first = i * SHARE;
            size_t cnt = n - first < SHARE ? n - first : SHARE;
            m->reference(state + 4 * first, cnt, 1, p);
        }
    }
}

unsigned bcl_host_threads(void)
{
    return (unsigned)omp_get_max_threads();
}
