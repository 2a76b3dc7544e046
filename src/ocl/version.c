/*
 * The OpenCL version a device is spoken to in (docs/IMPLEMENTATIONS.md): the
 * lower of its platform's and its own, so a call newer than 1.2 is made
 * only where both have it, each with its 1.2 path. BALLCL_TEST_OPENCL_VERSION
 * =M.m (tests) lowers it, so the 1.2 paths run anywhere.
 */
#include "ocl/ocl.h"

#include <stdio.h>
#include <stdlib.h>

/* "OpenCL M.m ..." as CL_PLATFORM_VERSION and CL_DEVICE_VERSION give it;
 * 10 * M + m, or 12 (the oldest ballcl supports) when it does not parse. */
static int parse(const char *text)
{
    int major, minor;
    if (!text || sscanf(text, "OpenCL %d.%d", &major, &minor) != 2 || major < 1 || minor < 0 ||
        minor > 9)
        return 12;
    return 10 * major + minor;
}

int bcl_opencl_version(const bcl_device_info *d)
{
    int platform = parse(d->platform_version), device = parse(d->version);
    int v = platform < device ? platform : device;
    const char *pretend = getenv("BALLCL_TEST_OPENCL_VERSION");
    if (pretend && *pretend) {
        char text[64];
        snprintf(text, sizeof text, "OpenCL %s", pretend);
        int p = parse(text);
        if (p < v)
            v = p;
    }
    return v;
}
