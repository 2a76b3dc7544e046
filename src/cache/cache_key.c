/*
 * The binary cache key: a SHA-256 of all that can change the binary a driver
 * makes of our source, so no entry reaches another device, driver or source.
 */
#include "cache/cache.h"

#include <stdio.h>
#include <string.h>

/* Each field goes in as its length (8 bytes, little-endian) and its bytes:
 * without the length, "ab"+"c" and "a"+"bc" would hash alike. */
#define KEY_FIELDS 5

int bcl_cache_key_make(const unsigned char identity[32], const char *src, size_t len,
                       const char *options, bcl_cache_key *key, bcl_error *e)
{
    char format[32];
    snprintf(format, sizeof format, "format %d", BCL_CACHE_FORMAT);
    static const char magic[] = "ballcl program cache";
    const void *field[KEY_FIELDS] = {magic, format, src, options, identity};
    size_t field_len[KEY_FIELDS] = {strlen(magic), strlen(format), len, strlen(options), 32};
    unsigned char prefix[KEY_FIELDS][8];
    const void *parts[2 * KEY_FIELDS];
    size_t lens[2 * KEY_FIELDS];
    for (int f = 0; f < KEY_FIELDS; f++) {
        for (int i = 0; i < 8; i++)
            prefix[f][i] = (unsigned char)((uint64_t)field_len[f] >> (8 * i));
        parts[2 * f] = prefix[f];
        lens[2 * f] = 8;
        parts[2 * f + 1] = field[f];
        lens[2 * f + 1] = field_len[f];
    }
    return bcl_sha256_parts(parts, lens, 2 * KEY_FIELDS, key->b, e);
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
