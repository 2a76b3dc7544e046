/*
 * Profiling is checked before it is believed (docs/BENCHMARK.md, "Clocks"):
 * every figure from profiling events passes bcl_profiling_plausible with
 * the host's time of the same work. Some timestamps measure nothing: Mesa's
 * rusticl 22.3 numbers every event's four 0, 1, 2, 3 (ns), which made a
 * 100000-ball step look like 10 femtoseconds. The first failure marks the
 * device, not the context (survey and bench open several on one device),
 * for the rest of the process: its figures then come from the host clock,
 * and bcl_profiling_unusable says why. Devices of one run measure from a
 * thread each, so the table is behind a lock.
 */
#include "ocl/clock.h"
#include "ocl/ocl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slack of "device time not above host time": a driver may convert its
 * clock with some jitter. */
#define HOST_SLACK_REL 0.02
#define HOST_SLACK_NS  5000.0

bool bcl_profiling_plausible(const bcl_span_check *s, char *why, size_t size)
{
    char scratch[8];
    if (!why) {
        why = scratch;
        size = sizeof scratch;
    }
    why[0] = '\0';
    if (s->end_ns <= s->start_ns)
        return bcl_why(why, size, "an event ends at %llu ns, not after its start at %llu ns",
                       (unsigned long long)s->end_ns, (unsigned long long)s->start_ns);
    double dev_ns = (double)(s->end_ns - s->start_ns);
    double host_ns = s->host_ms * 1e6;
    if (s->host_ms > 0 && dev_ns > host_ns * (1 + HOST_SLACK_REL) + HOST_SLACK_NS)
        return bcl_why(why, size,
                       "the device took %.0f ns by its clock for work the host saw done in %.0f ns",
                       dev_ns, host_ns);
    uint64_t launches = s->launches ? s->launches : 1;
    if (dev_ns < BCL_CLOCK_MIN_LAUNCH_NS * (double)launches)
        return bcl_why(
            why, size,
            "%llu command%s took %.0f ns by the device's clock: under %.0f ns per command, "
            "which no device does",
            (unsigned long long)launches, launches == 1 ? "" : "s", dev_ns,
            BCL_CLOCK_MIN_LAUNCH_NS);
    /* The device's own peak (bytes per second = per ns * 1e9). */
    double peak = (double)s->compute_units * s->clock_mhz * 1e6 * BCL_CLOCK_PER_CU_CYCLE;
    double max_bytes =
        peak > 0 && peak < BCL_CLOCK_MAX_BYTES_PER_S ? peak : BCL_CLOCK_MAX_BYTES_PER_S;
    if (s->bytes > 0 && s->bytes / (dev_ns * 1e-9) > max_bytes)
        return bcl_why(
            why, size,
            "%.0f bytes moved in %.0f ns by the device's clock: %.3g GB/s, above the %.0f "
            "GB/s that %s",
            s->bytes, dev_ns, s->bytes / dev_ns, max_bytes / 1e9,
            max_bytes < BCL_CLOCK_MAX_BYTES_PER_S
                ? "its compute units and clock can move (256 bytes per unit and cycle)"
                : "no memory reaches");
    double ops = peak;
    if (s->cpu_vector_width)
        ops = (double)s->compute_units * s->clock_mhz * 1e6 * s->cpu_vector_width *
              BCL_CLOCK_CPU_OPS_PER_LANE;
    if (s->flops > 0 && ops > 0 && s->flops / (dev_ns * 1e-9) > ops)
        return bcl_why(
            why, size,
            "%.3g float32 operations in %.0f ns by the device's clock: %.3g GFLOP/s, above "
            "the %.0f GFLOP/s its compute units and clock can do (%s)",
            s->flops, dev_ns, s->flops / dev_ns, ops / 1e9,
            s->cpu_vector_width ? "two vector FMAs per core and cycle, 1.5 times the clock"
                                : "256 per unit and cycle");
    return true;
}

#define MAX_DEVICES 64

static struct {
    cl_device_id device;
    char why[256];
} rejected[MAX_DEVICES];
static size_t nrejected;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* A reason, once written, stays put: usable after the lock is released. */
static const char *verdict(cl_device_id d)
{
    const char *forced = getenv("BALLCL_TEST_PROFILING");
    if (forced && strcmp(forced, "unusable") == 0)
        return "BALLCL_TEST_PROFILING=unusable (a test setting)";
    const char *why = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nrejected && !why; i++)
        if (rejected[i].device == d)
            why = rejected[i].why;
    pthread_mutex_unlock(&lock);
    return why;
}

const char *bcl_profiling_unusable(const bcl_device_info *d)
{
    return verdict(d->device);
}

void bcl_profiling_reject(cl_device_id d, const char *why)
{
    if (verdict(d))
        return;
    pthread_mutex_lock(&lock);
    bool known = false;
    for (size_t i = 0; i < nrejected; i++)
        known = known || rejected[i].device == d;
    /* A full table marks no more: their spans are still checked one by one. */
    if (!known && nrejected < MAX_DEVICES) {
        rejected[nrejected].device = d;
        snprintf(rejected[nrejected].why, sizeof rejected[nrejected].why, "%s", why);
        nrejected++;
    }
    pthread_mutex_unlock(&lock);
}

bool bcl_profiling_check(cl_device_id d, const bcl_span_check *s)
{
    if (verdict(d))
        return false;
    char why[256];
    if (bcl_profiling_plausible(s, why, sizeof why))
        return true;
    bcl_profiling_reject(d, why);
    return false;
}
