/*
 * The identity of a device as one digest: what tells one driver build of
 * one device from every other. The binary cache key and the tuned file's
 * device key both derive from it, so "the same device" means one thing.
 */
#include "ocl/ocl.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

int bcl_device_identity(const bcl_device_info *d, unsigned char out[32], bcl_error *e)
{
    char bits[16];
    snprintf(bits, sizeof bits, "%u", (unsigned)d->address_bits);
    const char *parts[] = {d->platform_name, d->platform_version, d->name, d->vendor,
                           d->version,       d->driver,           bits};
    unsigned len = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    for (size_t i = 0; ok && i < sizeof parts / sizeof parts[0]; i++)
        /* The terminating NUL separates the fields unambiguously. */
        ok = EVP_DigestUpdate(ctx, parts[i], strlen(parts[i]) + 1);
    ok = ok && EVP_DigestFinal_ex(ctx, out, &len) && len == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "sha-256 failed in libcrypto");
    return BCL_OK;
}
