/*
 * The state check's kernel, appended to every model's source (context.c):
 * built and cached with the model's kernels, no second program. Not in cl/,
 * so a kernel folder holding only a model's file stays valid.
 *
 * bcl_nonfinite sets flag[0] to 1 when a float is NaN or infinite: the
 * masked exponent plus one at its lowest bit carries into the (masked off)
 * sign bit exactly then, so a ball costs a load, an and, an add and an or,
 * no per-lane test. Racing writes of the same value need no atomics (the
 * host zeroes the flag, bcl_sim_check_finite); a work-item reads every
 * get_global_size(0)-th ball, so a GPU's loads coalesce.
 *
 * The lanes are joined by any(), not acc.x | acc.y | ..., which clang folds
 * into shufflevectors with undef lanes that crash Oclgrind 21.10's
 * uninitialised-value plugin: every run ends with this kernel
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
