/*
 * Kernel variants (docs/BENCHMARK.md): <model>_step_<v> and <model>_steps_<v>
 * beside the base kernels, the same update written for some kind of device.
 * Found by name in the built program, so adding one changes nothing here or
 * in the model table; x<B> at the end of the name (B balls a work-item) is
 * all the host must know to size the launch. Every variant is validated bit
 * for bit before use and chosen by measurement or by the rule below.
 */
#include "run/run.h"
#include "ocl/clcall.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned bcl_variant_balls(const char *variant)
{
    if (!variant || !*variant)
        return 1;
    const char *x = strrchr(variant, 'x');
    if (!x || !x[1])
        return 1;
    for (const char *p = x + 1; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 1;
    unsigned long b = strtoul(x + 1, NULL, 10);
    return b >= 1 && b <= 4096 ? (unsigned)b : 1;
}

void bcl_kernel_suffix(bool fused, const char *variant, char *out, size_t size)
{
    if (variant && *variant)
        snprintf(out, size, "%s_%s", fused ? "steps" : "step", variant);
    else
        snprintf(out, size, "%s", fused ? "steps" : "step");
}

int bcl_variants_list(bcl_context *c, bool fused, bcl_variant *out, size_t cap, size_t *count,
                      bcl_error *e)
{
    *count = 0;
    if (cap == 0)
        return BCL_OK;
    const bcl_device_info *d = bcl_context_device(c);
    const bcl_model *m = bcl_context_model(c);
    size_t size = 0;
    cl_program prog = bcl_context_program(c);
    cl_int st = BCL_CL(clGetProgramInfo, prog, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clGetProgramInfo", d->name);
    char *names = malloc(size + 1);
    if (!names)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    st = BCL_CL(clGetProgramInfo, prog, CL_PROGRAM_KERNEL_NAMES, size, names, NULL);
    if (st != CL_SUCCESS) {
        free(names);
        return bcl_cl_fail(e, st, "clGetProgramInfo", d->name);
    }
    names[size] = '\0';
    /* The base kernel always exists (the model's contract); it comes first. */
    out[0].name[0] = '\0';
    out[0].balls_per_item = 1;
    *count = 1;
    char prefix[96];
    snprintf(prefix, sizeof prefix, "%s_%s_", m->name, fused ? "steps" : "step");
    size_t plen = strlen(prefix);
    /* CL_PROGRAM_KERNEL_NAMES is a ';'-separated list; a variant is a name
     * "<model>_<base>_<v>" with a non-empty v. */
    for (char *p = names; *p && *count < cap;) {
        char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > plen && len - plen < BCL_VARIANT_NAME && strncmp(p, prefix, plen) == 0) {
            bcl_variant *v = &out[(*count)++];
            memcpy(v->name, p + plen, len - plen);
            v->name[len - plen] = '\0';
            v->balls_per_item = bcl_variant_balls(v->name);
        }
        if (!end)
            break;
        p = end + 1;
    }
    free(names);
    return BCL_OK;
}

const char *bcl_variant_default(uint64_t type, unsigned native_width, unsigned sets, bool fused,
                                const bcl_variant *list, size_t count)
{
    return bcl_variant_default_for(type, native_width, sets, fused, list, count, 0, 0);
}

const char *bcl_variant_default_for(uint64_t type, unsigned native_width, unsigned sets, bool fused,
                                    const bcl_variant *list, size_t count, size_t balls,
                                    unsigned compute_units)
{
    /* Why (docs/BENCHMARK.md): a CPU runtime such as PoCL vectorises a
     * one-step kernel across work-items, but not the k-step loop; there a
     * work-item holds sets of W balls (W the native float width), one vector
     * per component, and as many independent sets as the model asks, so
     * that a step need not wait for the last. GPUs want one ball per
     * work-item so that loads coalesce, and so does a CPU driver whose
     * native float vector is 1 wide (Mesa's llvmpipe), which makes its SIMD
     * lanes of a group's work-items as a GPU does. */
    if (!(type & BCL_DEVICE_CPU) || !fused || native_width == 1)
        return "";
    unsigned want = (sets ? sets : 1) * (native_width ? native_width : 4);
    return bcl_variant_widest(want, list, count, balls, compute_units);
}

/* BALLCL_FORCE_BALLS_PER_ITEM=B, a test setting (docs/testing.md): the
 * widest balls per work-item a machine's rule picks depends on its CPU (x32
 * with AVX2, x64 with AVX-512), and with it the block a multi-device split
 * rounds to. Forcing the widest variant up to B on every device lets one
 * machine run its tests in the shapes another machine would choose. */
int bcl_variant_forced(unsigned *balls, bcl_error *e)
{
    *balls = 0;
    const char *env = getenv("BALLCL_FORCE_BALLS_PER_ITEM");
    if (!env || !*env)
        return BCL_OK;
    char *end;
    unsigned long b = strtoul(env, &end, 10);
    if (*end || !isdigit((unsigned char)env[0]) || b < 1 || b > 4096)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "BALLCL_FORCE_BALLS_PER_ITEM='%s': expected a ball count from 1 to 4096",
                        env);
    *balls = (unsigned)b;
    return BCL_OK;
}

const char *bcl_variant_widest(unsigned limit, const bcl_variant *list, size_t count, size_t balls,
                               unsigned compute_units)
{
    const char *best = "";
    unsigned best_b = 1;
    /* Underfilled (few balls for many cores): a wide work-item that
     * leaves cores without one is slower than narrower ones that reach
     * them all, so B also keeps at least one work-item per compute unit. */
    size_t cus = compute_units ? compute_units : 1;
    for (size_t i = 0; i < count; i++) {
        unsigned b = list[i].balls_per_item;
        bool fills = !balls || (balls + b - 1) / b >= cus;
        if (b > best_b && b <= limit && fills) {
            best = list[i].name;
            best_b = b;
        }
    }
    return best;
}

unsigned bcl_default_k(uint64_t type)
{
    return type & BCL_DEVICE_CPU ? BCL_DEFAULT_K_CPU : BCL_DEFAULT_K;
}
