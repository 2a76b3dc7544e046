/*
 * The state check's kernel, appended to every model's program source
 * (context.c), so it is built and cached with the model's kernels and a
 * context needs no second program. It lives here, not in cl/: a kernel
 * folder (BALLCL_KERNEL_DIR) holds the models' files, and one holding only
 * a model's file stays valid.
 *
 * bcl_nonfinite sets flag[0] to 1 when any float of the state is NaN or an
 * infinity (all exponent bits set): the masked exponent plus one at its
 * lowest bit carries into the sign bit (cleared by the mask) exactly then,
 * so the loop is a load, an and, an add and an or per ball, with no
 * per-lane test (cheap where the device is the CPU, as on PoCL). Every work-item that finds one
 * writes the same value, so the racing writes need no atomics; the host zeroes the flag first
 * (bcl_sim_check_finite). Each work-item reads every get_global_size(0)-th ball: neighbours read
 * neighbours, so a GPU's loads coalesce.
 *
 * The lanes are joined by any(), which tests the sign bit of each: not by
 * acc.x | acc.y | acc.z | acc.w, which clang folds into shufflevectors
 * with undef mask lanes, on which Oclgrind 21.10's uninitialised-value
 * plugin crashes (in a memcpy): every `ballcl run` ends with this
 * kernel, so each run under `oclgrind --uninitialized` died there
 * (tests/test_oclgrind.py).
 */
#include "ocl/ocl.h"

const char bcl_state_check_source[] =
    "\n/* The state check (src/ocl/state_check.c). */\n"
    "kernel void bcl_nonfinite(global const uint4 *s, uint n4, global uint *flag)\n"
    "{\n"
    "    size_t items = get_global_size(0);\n"
    "    uint4 acc = 0;\n"
    "    for (size_t i = get_global_id(0); i < n4; i += items)\n"
    "        acc |= (s[i] & 0x7f800000u) + 0x00800000u;\n"
    "    if (any(as_int4(acc)))\n"
    "        flag[0] = 1u;\n"
    "}\n";
