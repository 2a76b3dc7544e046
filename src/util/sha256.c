/*
 * The one SHA-256 of the library (OpenSSL EVP, not a hand-written hash):
 * the binary cache's key and checksums, and the device identity behind the
 * cache key and the tuned files' device key.
 */
#include "util/util.h"

#include <openssl/evp.h>

int bcl_sha256_parts(const void *const *parts, const size_t *lens, size_t count,
                     unsigned char out[32], bcl_error *e)
{
    unsigned int outlen = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "sha-256 failed in libcrypto: out of memory");
    bool ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
    for (size_t i = 0; ok && i < count; i++)
        ok = EVP_DigestUpdate(md, parts[i], lens[i]) == 1;
    ok = ok && EVP_DigestFinal_ex(md, out, &outlen) == 1 && outlen == 32;
    EVP_MD_CTX_free(md);
    if (!ok)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "sha-256 failed in libcrypto");
    return BCL_OK;
}

int bcl_sha256(const void *data, size_t len, unsigned char out[32], bcl_error *e)
{
    return bcl_sha256_parts(&data, &len, 1, out, e);
}
