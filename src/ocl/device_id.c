/*
 * The identity of a device as one digest: what tells one driver build of
 * one device from every other. The binary cache key and the tuned file's
 * device key both derive from it, so "the same device" means one thing; the
 * tuned key adds what sets the device's speed (bcl_device_speed_identity).
 */
#include "ocl/ocl.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* SHA-256 of the parts, each followed by its terminating NUL, which
 * separates the fields unambiguously. */
static int digest(const char *const *parts, size_t count, unsigned char out[32], bcl_error *e)
{
    unsigned len = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    for (size_t i = 0; ok && i < count; i++)
        ok = EVP_DigestUpdate(ctx, parts[i], strlen(parts[i]) + 1);
    ok = ok && EVP_DigestFinal_ex(ctx, out, &len) && len == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "sha-256 failed in libcrypto");
    return BCL_OK;
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

int bcl_device_speed_identity(const bcl_device_info *d, unsigned char out[32], bcl_error *e)
{
    return identity(d, true, out, e);
}
