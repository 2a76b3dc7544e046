/*
 * Validation (docs/DESIGN.md): the model's scalar C reference applied to the same
 * initial state, compared float by float with the device's result.
 *
 * The reference runs on a bounded chunk at a time (a private copy per host
 * thread), so validation needs no second full copy of the state, and chunks
 * run on all host cores: balls are independent, so the bits are those of
 * the plain loop over all balls (a test checks this).
 */
#include "run/run.h"
#include "models/models.h"
#include "ocl/program.h" /* bcl_now_ms */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BALLS 65536
/* Ball-steps of the reference between two looks at the clock for progress
 * (a few tens of ms of one core). */
#define SLICE_BALL_STEPS (1u << 24)

static struct hook {
    bcl_steps_fn fn;
    void *arg;
    double every_ms;
} progress;

void bcl_validate_progress(bcl_steps_fn fn, void *arg, double every_ms)
{
    progress = (struct hook){fn, arg, every_ms};
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

uint64_t bcl_ulp_distance(float a, float b)
{
    /* The same bits are never a difference, nor two NaNs. */
    if (float_bits(a) == float_bits(b) || (isnan(a) && isnan(b)))
        return 0;
    if (isnan(a) || isnan(b))
        return UINT64_MAX;
    /* Map the sign-magnitude bit patterns onto one ordered integer line. */
    uint32_t ua = float_bits(a), ub = float_bits(b);
    int64_t ia = (ua & 0x80000000u) ? -(int64_t)(ua & 0x7fffffffu) : (int64_t)ua;
    int64_t ib = (ub & 0x80000000u) ? -(int64_t)(ub & 0x7fffffffu) : (int64_t)ub;
    return (uint64_t)(ia > ib ? ia - ib : ib - ia);
}

void bcl_compare(const float *want, const float *got, size_t n, size_t first_ball, uint64_t tol_ulp,
                 bcl_validation *v)
{
    for (size_t i = 0; i < n; i++) {
        bool bad_ball = false;
        for (int c = 0; c < 4; c++) {
            float a = want[4 * i + c], b = got[4 * i + c];
            uint64_t d = bcl_ulp_distance(a, b);
            /* Bitwise by default: +0 and -0 differ although 0 ULP apart.
             * A NaN equals any NaN: OpenCL leaves a NaN's payload (and
             * sign) to the implementation (docs/MODELS.md). */
            bool bad = float_bits(a) != float_bits(b) && !(isnan(a) && isnan(b)) &&
                       (tol_ulp == 0 || isnan(a) || isnan(b) || d > tol_ulp);
            if (d > v->max_ulp)
                v->max_ulp = d;
            if (bad) {
                v->mismatches++;
                bad_ball = true;
            }
        }
        v->compared += 4;
        if (bad_ball && v->nreported < BCL_MAX_REPORTED_MISMATCHES) {
            bcl_mismatch *mm = &v->first[v->nreported++];
            mm->ball = first_ball + i;
            memcpy(mm->want, want + 4 * i, sizeof mm->want);
            memcpy(mm->got, got + 4 * i, sizeof mm->got);
        }
    }
}

void bcl_validation_merge(bcl_validation *into, const bcl_validation *part)
{
    into->compared += part->compared;
    into->mismatches += part->mismatches;
    if (part->max_ulp > into->max_ulp)
        into->max_ulp = part->max_ulp;
    for (size_t i = 0; i < part->nreported && into->nreported < BCL_MAX_REPORTED_MISMATCHES; i++)
        into->first[into->nreported++] = part->first[i];
}

/* A chunk's slice of `now` steps is done: a report when one is due, from
 * one thread at a time. */
static void tell(uint64_t now, size_t nchunks, uint64_t steps, uint64_t *done, double *next)
{
#pragma omp critical(bcl_validate_progress)
    {
        *done += now;
        double t = bcl_now_ms();
        if (t >= *next && *done < steps * nchunks) {
            progress.fn(progress.arg, *done / nchunks, steps);
            *next = t + progress.every_ms;
        }
    }
}

/* A model file's reference runs in its child process, all balls at once
 * (it uses every host core itself). */
static int validate_apart(const bcl_model *m, const float *p, const float *init,
                          const float *result, size_t n, uint64_t steps, uint64_t tol_ulp,
                          bcl_validation *v, bcl_error *e)
{
    float *work = malloc(n * 4 * sizeof(float) + 1);
    if (!work)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory for validation");
    memcpy(work, init, n * 4 * sizeof(float));
    int rc = bcl_model_reference(m, work, n, steps, p, false, e);
    if (rc == BCL_OK)
        bcl_compare(work, result, n, 0, tol_ulp, v);
    free(work);
    return rc;
}

int bcl_validate(const bcl_model *m, const float *p, const float *init, const float *result,
                 size_t n, uint64_t steps, uint64_t tol_ulp, bcl_validation *v, bcl_error *e)
{
    memset(v, 0, sizeof *v);
    if (!m->reference)
        return validate_apart(m, p, init, result, n, steps, tol_ulp, v, e);
    size_t nchunks = (n + CHUNK_BALLS - 1) / CHUNK_BALLS;
    int failed = 0;
    /* With progress, the reference goes a slice of steps at a time (the
     * same bits: a ball's steps depend on its four floats alone); the steps
     * done are those of all chunks together, over the chunk count. */
    uint64_t slice = steps, done = 0;
    if (progress.fn && n) {
        uint64_t per = SLICE_BALL_STEPS / (n < CHUNK_BALLS ? n : CHUNK_BALLS);
        slice = per < 1 ? 1 : per;
    }
    double next = bcl_now_ms() + progress.every_ms;
#pragma omp parallel
    {
        float *work = malloc(CHUNK_BALLS * 4 * sizeof(float));
        if (!work) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1) ordered
        for (size_t ci = 0; ci < nchunks; ci++) {
            size_t first = ci * CHUNK_BALLS;
            size_t cnt = n - first < CHUNK_BALLS ? n - first : CHUNK_BALLS;
            bcl_validation part;
            memset(&part, 0, sizeof part);
            if (work) {
                memcpy(work, init + 4 * first, cnt * 4 * sizeof(float));
                for (uint64_t k = 0; k < steps; k += slice) {
                    uint64_t now = steps - k < slice ? steps - k : slice;
                    m->reference(work, cnt, now, p);
                    if (progress.fn)
                        tell(now, nchunks, steps, &done, &next);
                }
                bcl_compare(work, result + 4 * first, cnt, first, tol_ulp, &part);
            }
            /* In ball order, so the first mismatches reported are the first. */
#pragma omp ordered
            bcl_validation_merge(v, &part);
        }
        free(work);
    }
    if (progress.fn)
        progress.fn(progress.arg, steps, steps);
    if (failed)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory for validation");
    return BCL_OK;
}

bool bcl_find_overflow(const bcl_model *m, const float *p, const float *init, const float *state,
                       size_t n, uint64_t steps, bcl_overflow *o)
{
    memset(o, 0, sizeof *o);
    size_t i = 0;
    for (; i < 4 * n && isfinite(state[i]); i++)
        ;
    if (i == 4 * n)
        return false;
    o->ball = i / 4;
    o->component = (int)(i % 4);
    o->value = state[i];
    /* A model file's reference runs in a child process: no step by step. */
    if (!init || !m->reference)
        return true;
    /* The ball again from its initial state, one step at a time (the same
     * bits as all steps at once), until a value is not finite: at most S
     * steps of one ball, against the S steps of all N that validation ran. */
    float b[4];
    memcpy(b, init + 4 * o->ball, sizeof b);
    for (uint64_t s = 1; s <= steps; s++) {
        m->reference(b, 1, 1, p);
        for (int c = 0; c < 4; c++) {
            if (!isfinite(b[c])) {
                o->step = s;
                o->component = c;
                o->value = b[c];
                return true;
            }
        }
    }
    return true;
}
