/*
 * How a run's balls are cut among devices (docs/DESIGN.md, "Several
 * devices"). Shares are in proportion to the devices' rates r_i
 * (ball-steps/s), so that all finish together at T = n * S / sum r_i.
 *
 * A device also has a fixed cost f_i per run whatever its share (its
 * launches times its per-launch overhead). It only slows the run when its
 * share would end later than the others end if they take its balls too:
 *
 *   f_i + T  >  n * S / (sum r - r_i) + max f_others
 *
 * Such a device gets no balls (the worst first, then the test again
 * without it). The fixed costs decide who takes part, not the shares: they
 * are measured from the host clock and are noisy on a busy machine, and a
 * few milliseconds of noise must not tilt an even split. A share under
 * half a block rounds to nothing and is dropped the same way.
 *
 * And a device whose share would be under min_share of the balls
 * (BCL_SPLIT_MIN_SHARE for the devices of a process or rank; ranks use 0)
 * gets none: taking part, it can shorten the run by its share at most, which
 * is then within the error of rates measured one device at a time. Running
 * beside a faster device is not running alone (on the GPU host a CPU device
 * beside the H200's driver thread ran 34% slower than calibrated, and a 4%
 * share made a 1M-ball run 5.3 times slower than the GPU alone), so a gain
 * that small is a risk rather than a gain.
 */
#include "job/job.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t bcl_split(size_t n, size_t count, const double *rate, const double *fixed_s, double steps,
                 unsigned block, double min_share, bcl_shard *out, bcl_split_why *why)
{
    if (count == 0)
        return 0;
    size_t b = block ? block : 1;
    double s = steps > 0 ? steps : 1;
    double *x = calloc(count, sizeof *x);
    size_t *nb = calloc(count, sizeof *nb);
    if (!x || !nb) {
        free(x);
        free(nb);
        return 0;
    }
    /* No usable rate at all (ranks that could not be weighed): equal parts. */
    bool none = true;
    for (size_t i = 0; i < count; i++)
        none = none && !(rate[i] > 0 && isfinite(rate[i]));
    static const double one = 1;
    size_t active = 0;
    for (size_t i = 0; i < count; i++) {
        why[i] = none || (rate[i] > 0 && isfinite(rate[i])) ? BCL_SPLIT_USED : BCL_SPLIT_NO_RATE;
        active += why[i] == BCL_SPLIT_USED;
    }
#define RATE(i) (none ? one : rate[i])
    while (active > 1) {
        double sr = 0;
        for (size_t i = 0; i < count; i++)
            if (why[i] == BCL_SPLIT_USED)
                sr += RATE(i);
        double t = (double)n * s / sr;
        size_t worst = count, least = count;
        double worst_by = 0;
        for (size_t i = 0; i < count; i++) {
            if (why[i] != BCL_SPLIT_USED)
                continue;
            double f_others = 0;
            for (size_t j = 0; j < count; j++)
                if (j != i && why[j] == BCL_SPLIT_USED && fixed_s[j] > f_others)
                    f_others = fixed_s[j];
            double by = fixed_s[i] + t - ((double)n * s / (sr - RATE(i)) + f_others);
            if (by > worst_by) {
                worst_by = by;
                worst = i;
            }
            x[i] = (double)n * RATE(i) / sr;
            if (least == count || x[i] < x[least])
                least = i;
        }
        bcl_split_why drop = worst < count                      ? BCL_SPLIT_SLOWER
                             : x[least] < (double)b / 2         ? BCL_SPLIT_UNDER_BLOCK
                             : x[least] < min_share * (double)n ? BCL_SPLIT_MINOR
                                                                : BCL_SPLIT_USED;
        if (drop == BCL_SPLIT_USED)
            break;
        why[worst < count ? worst : least] = drop;
        active--;
    }
    if (active == 1)
        for (size_t i = 0; i < count; i++)
            if (why[i] == BCL_SPLIT_USED)
                x[i] = (double)n;
    /* Whole blocks: the floor of each share, then the blocks left over to
     * the largest remainders; the n % b balls past the last whole block go
     * to the last device with balls. */
    size_t blocks = n / b, given = 0, last = count;
    for (size_t i = 0; i < count; i++) {
        if (why[i] != BCL_SPLIT_USED)
            continue;
        double q = x[i] / (double)b;
        nb[i] = q > 0 ? (size_t)floor(q) : 0;
        if (nb[i] > blocks - given)
            nb[i] = blocks - given;
        given += nb[i];
        x[i] = q - floor(q);
        last = i;
    }
    while (given < blocks) {
        size_t best = count;
        for (size_t i = 0; i < count; i++)
            if (why[i] == BCL_SPLIT_USED && (best == count || x[i] > x[best]))
                best = i;
        if (best == count)
            break;
        nb[best]++;
        x[best] = -1; /* one extra block each, then round again */
        given++;
        bool any = false;
        for (size_t i = 0; i < count; i++)
            any |= why[i] == BCL_SPLIT_USED && x[i] >= 0;
        if (!any)
            for (size_t i = 0; i < count; i++)
                if (why[i] == BCL_SPLIT_USED)
                    x[i] = 0;
    }
    size_t first = 0, used = 0;
    for (size_t i = 0; i < count; i++) {
        size_t c = nb[i] * b + (i == last ? n % b : 0);
        if (why[i] == BCL_SPLIT_USED && c == 0)
            why[i] = BCL_SPLIT_UNDER_BLOCK;
        out[i].first = first;
        out[i].count = why[i] == BCL_SPLIT_USED ? c : 0;
        first += out[i].count;
        used += out[i].count > 0;
    }
    free(nb);
    free(x);
    return used;
#undef RATE
}
