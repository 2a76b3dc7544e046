/*
 * The binary cache key: a SHA-256 (OpenSSL EVP, not a hand-written hash) of
 * everything that can change the binary a driver makes from our source. Two
 * keys are equal only if every field is, so an entry can never be handed to
 * another device, driver or source.
 */
#include "cache/cache.h"
#include "ocl/ocl.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

int bcl_sha256(const void *data, size_t len, unsigned char out[32], bcl_error *e)
{
    unsigned int outlen = 0;
    if (EVP_Digest(data, len, out, &outlen, EVP_sha256(), NULL) != 1 || outlen != 32)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "sha-256 failed in libcrypto");
    return BCL_OK;
}

/* Each field goes in as its length (8 bytes, little-endian) and its bytes:
 * without the length, "ab"+"c" and "a"+"bc" would hash alike. */
static int add_field(EVP_MD_CTX *md, const void *data, size_t len)
{
    unsigned char n[8];
    for (int i = 0; i < 8; i++)
        n[i] = (unsigned char)((uint64_t)len >> (8 * i));
    return EVP_DigestUpdate(md, n, sizeof n) == 1 && EVP_DigestUpdate(md, data, len) == 1;
}

static int add_string(EVP_MD_CTX *md, const char *s)
{
    return add_field(md, s, strlen(s));
}

int bcl_cache_key_make(const bcl_device_info *dev, const char *src, size_t len, const char *options,
                       bcl_cache_key *key, bcl_error *e)
{
    unsigned char id[32];
    int rc = bcl_device_identity(dev, id, e);
    if (rc)
        return rc;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "sha-256 failed in libcrypto: out of memory");
    char format[32];
    snprintf(format, sizeof format, "format %d", BCL_CACHE_FORMAT);
    unsigned int outlen = 0;
    int ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
             add_string(md, "ballcl program cache") && add_string(md, format) &&
             add_field(md, src, len) && add_string(md, options) && add_field(md, id, sizeof id) &&
             EVP_DigestFinal_ex(md, key->b, &outlen) == 1 && outlen == sizeof key->b;
    EVP_MD_CTX_free(md);
    if (!ok)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "sha-256 failed in libcrypto");
    return BCL_OK;
}

void bcl_cache_key_hex(const bcl_cache_key *key, char out[2 * BCL_CACHE_KEY_BYTES + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < BCL_CACHE_KEY_BYTES; i++) {
        out[2 * i] = digits[key->b[i] >> 4];
        out[2 * i + 1] = digits[key->b[i] & 15];
    }
    out[2 * BCL_CACHE_KEY_BYTES] = '\0';
}

int bcl_cache_entry_path(const char *dir, const bcl_cache_key *key, char *out, size_t size,
                         bcl_error *e)
{
    char hex[2 * BCL_CACHE_KEY_BYTES + 1];
    bcl_cache_key_hex(key, hex);
    int n = snprintf(out, size, "%s/" BCL_CACHE_ENTRY_PREFIX "%s" BCL_CACHE_ENTRY_SUFFIX, dir, hex);
    if (n < 0 || (size_t)n >= size)
        return bcl_fail(e, BCL_EXIT_INPUT, "cache folder path '%s' is too long", dir);
    return BCL_OK;
}
