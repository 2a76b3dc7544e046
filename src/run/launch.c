/*
 * Work-group sizing (docs/BENCHMARK.md). The automatic rule uses only device
 * and kernel queries, so it can be reasoned about and unit-tested: the
 * largest multiple of the preferred multiple up to 256 (or one multiple
 * where that is wider) within the kernel's and the device's limits, shrunk
 * when N is small to give every compute unit a group, and evened out when
 * the groups do not divide over the units.
 *
 * 256 is a size every GPU vendor runs at full occupancy for a kernel this
 * light; the preferred multiple (warp or wavefront width, or the CPU
 * vectoriser's width) keeps every lane of a group busy. Local = 1, the seed's
 * mistake, is never chosen.
 */
#include "run/run.h"

#include <stdio.h>
#include <string.h>

size_t bcl_round_up(size_t n, size_t multiple)
{
    return multiple ? (n + multiple - 1) / multiple * multiple : n;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

size_t bcl_local_auto(size_t kernel_wg, size_t pref_multiple, size_t dev_max, size_t item_max0,
                      cl_uint compute_units, size_t n, char *why, size_t why_size)
{
    size_t limit = kernel_wg ? kernel_wg : 1;
    if (dev_max)
        limit = min_size(limit, dev_max);
    if (item_max0)
        limit = min_size(limit, item_max0);
    size_t pm = pref_multiple ? pref_multiple : 1;
    if (pm > limit)
        pm = 1;
    /* 256, or one preferred multiple where that is wider. */
    size_t target = pm > 256 ? pm : 256;
    size_t local = min_size(target, limit) / pm * pm;
    if (local == 0)
        local = min_size(target, limit);
    /* Small N: one group per compute unit beats full groups on few units. */
    size_t cus = compute_units ? compute_units : 1;
    size_t per_cu = bcl_round_up((n + cus - 1) / cus, pm);
    /* Never below one preferred multiple; a driver that reports a multiple
     * of 1 gives no width, so shrink no further than 32 (the narrowest SIMD
     * group of the GPU vendors: a smaller group wastes lanes, and 1 is the
     * seed's mistake). */
    size_t least = pm > 1 ? pm : min_size(local, 32);
    if (per_cu < least)
        per_cu = least;
    bool shrunk = false;
    if (per_cu < local) {
        local = per_cu;
        shrunk = true;
    }
    /* Few groups that do not divide evenly: the last round of groups runs
     * on some units while the others wait. With g groups on u units, g
     * rounded up to a multiple of u and local shrunk to match spreads the
     * same work over every unit (a large g loses at most 1/g: unchanged in
     * effect, and local then only shrinks by rounding). */
    size_t groups = (n + local - 1) / (local ? local : 1);
    bool evened = false;
    if (n && groups % cus) {
        size_t want = bcl_round_up(groups, cus);
        size_t even = bcl_round_up((n + want - 1) / want, pm);
        if (even >= least && even < local) {
            local = even;
            evened = true;
        }
    }
    if (why)
        snprintf(why, why_size,
                 "%s multiple of the preferred %zu up to min(256, kernel limit %zu)%s%s", "largest",
                 pm, limit, shrunk ? ", shrunk to give every compute unit a group" : "",
                 evened ? ", evened out over the compute units" : "");
    return local;
}

int bcl_local_parse(const char *text, bcl_launch *l, bcl_error *e)
{
    static const struct {
        const char *name;
        bcl_local_mode mode;
    } modes[] = {
        {"auto", BCL_LOCAL_AUTO}, {"driver", BCL_LOCAL_DRIVER}, {"tuned", BCL_LOCAL_TUNED}};
    memset(l, 0, sizeof *l);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (!text || strcmp(text, modes[i].name) == 0) { /* none: auto, the first */
            l->mode = modes[i].mode;
            return BCL_OK;
        }
    uint64_t v;
    bcl_error sub = {0};
    if (bcl_parse_u64(text, "--local", 1, 1u << 20, &v, &sub) != BCL_OK)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--local: '%s' is not valid: expected auto, driver, tuned or a work-group "
                        "size from 1 to %u",
                        text, 1u << 20);
    l->mode = BCL_LOCAL_FIXED;
    l->local = (size_t)v;
    return BCL_OK;
}
