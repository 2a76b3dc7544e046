/*
 * Whether N balls fit, checked once before anything is allocated for them:
 * malloc succeeds on an overcommitting kernel, and the process would be
 * killed while filling gigabytes it cannot have; a device allocation
 * beyond the device's memory fails late, after the host work.
 */
#include "run/run.h"

#define BALL_BYTES (4 * sizeof(float))

int bcl_memory_fit(const bcl_device_info *d, size_t n, unsigned host_copies, const char *what,
                   bcl_error *e)
{
    if (n == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: no balls to simulate", what);
    double bytes = (double)n * BALL_BYTES;
    if (n > SIZE_MAX / BALL_BYTES || (d->global_mem && bytes > (double)d->global_mem))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s: %zu balls need %.1f MiB, more than the %.1f MiB of memory of '%s'",
                        what, n, bytes / 1048576.0, (double)d->global_mem / 1048576.0, d->name);
    /* A CPU device's buffers live in host memory too. */
    unsigned copies = host_copies + ((d->type & CL_DEVICE_TYPE_CPU) ? 1 : 0);
    return bcl_host_memory_fit(n, copies, what, e);
}
