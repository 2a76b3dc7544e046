/*
 * A device's identity as one digest, telling one driver build of one device
 * from every other: the cache key and the tuned files' device key (which
 * adds the speed, bcl_device_key) both derive from it.
 */
#include "ocl/ocl.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* SHA-256 of the parts, each with its NUL, which separates them. */
static int digest(const char *const *parts, size_t count, unsigned char out[32], bcl_error *e)
{
    const void *p[16];
    size_t lens[16];
    for (size_t i = 0; i < count; i++) {
        p[i] = parts[i];
        lens[i] = strlen(parts[i]) + 1;
    }
    return bcl_sha256_parts(p, lens, count, out, e);
}

/* The identity's fields, and with speed the compute units and clock too. */
static int identity(const bcl_device_info *d, bool speed, unsigned char out[32], bcl_error *e)
{
    char bits[16], units[16], clock[16];
    snprintf(bits, sizeof bits, "%u", (unsigned)d->address_bits);
    snprintf(units, sizeof units, "%u", (unsigned)d->compute_units);
    snprintf(clock, sizeof clock, "%u", (unsigned)d->clock_mhz);
    const char *parts[] = {d->platform_name,
                           d->platform_version,
                           d->name,
                           d->vendor,
                           d->version,
                           d->driver,
                           bits,
                           units,
                           clock};
    size_t count = sizeof parts / sizeof parts[0];
    return digest(parts, speed ? count : count - 2, out, e);
}

int bcl_device_identity(const bcl_device_info *d, unsigned char out[32], bcl_error *e)
{
    return identity(d, false, out, e);
}

int bcl_device_key(const bcl_device_info *d, char out[33], bcl_error *e)
{
    unsigned char id[32];
    int rc = identity(d, true, id, e);
    if (rc)
        return rc;
    for (unsigned i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    return BCL_OK;
}
