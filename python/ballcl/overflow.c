/*
 * A state that left float32 on the way: finite input whose values near
 * FLT_MAX overflow to inf or nan. The device and the C reference agree bit
 * for bit, so validation passes, but the state is no result: `ballcl run`
 * exits 2 naming the ball and step (tools/cli/cmd_run.c,
 * run_check_overflow), and ballcl.run and Context.run raise InputError
 * with the same words.
 */
#include "core.h"

#include <math.h>

int bpy_check_overflow(const bpy_args *a, const float *init, const float *state, size_t n)
{
    bcl_overflow ov;
    bool found;
    Py_BEGIN_ALLOW_THREADS;
    found = bcl_find_overflow(a->model, a->params, init, state, n, a->steps, &ov);
    Py_END_ALLOW_THREADS;
    if (!found)
        return 0;
    char at[64] = "";
    if (ov.step)
        snprintf(at, sizeof at, " at step %llu", (unsigned long long)ov.step);
    bpy_input_error("ball %zu overflowed%s: its %c became %s (beyond float32): expected input "
                    "whose state stays finite for %llu steps",
                    ov.ball, at, "xyzw"[ov.component],
                    isnan(ov.value) ? "nan" : (ov.value > 0 ? "inf" : "-inf"),
                    (unsigned long long)a->steps);
    return -1;
}
