/*
 * How a run's balls are cut among devices (docs/DESIGN.md, "Several
 * devices"). Shares are in proportion to the devices' rates r_i
 * (ball-steps/s), so that all finish together at T = n * S / sum r_i.
 *
 * A device's fixed cost f_i per run (its launches times its per-launch
 * overhead) slows the run only when its share would end later than the
 * others end with its balls too:  f_i + T > n * S / (sum r - r_i) + max f_others.
 * Such a device gets no balls (the worst first, then the test again). The
 * fixed costs, noisy host-clock figures, decide who takes part, never the
 * shares. A share under half a block is dropped the same way, and one under
 * min_share of the balls (BCL_SPLIT_MIN_SHARE for devices, 0 for ranks):
 * its gain is within the error of rates measured one device at a time, and
 * running beside a faster device is not running alone (on the GPU host a
 * CPU device's 4% share made a 1M-ball run 5.3 times slower than the GPU
 * alone).
 */
#include "job/job.h"

#include <math.h>
#include <stdlib.h>

size_t bcl_split(size_t n, size_t count, const double *rate, const double *fixed_s, double steps,
                 unsigned block, double min_share, bcl_shard *out, bcl_split_why *why)
{
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
    size_t active = 0;
    for (size_t i = 0; i < count; i++) {
        why[i] = rate[i] > 0 && isfinite(rate[i]) ? BCL_SPLIT_USED : BCL_SPLIT_NO_RATE;
        active += why[i] == BCL_SPLIT_USED;
    }
    bool none = active == 0;
    for (size_t i = 0; i < count && none; i++, active++)
        why[i] = BCL_SPLIT_USED;
#define RATE(i) (none ? 1.0 : rate[i])
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
