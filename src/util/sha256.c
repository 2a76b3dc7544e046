/*
 * The one SHA-256 of the library: libmd's, linked statically, so no wheel
 * carries a crypto library for one hash (docs/DESIGN.md). tests/test_cache.c
 * checks known digests.
 */
#include "util/util.h"

#include <sys/types.h>

#include <sha2.h>

int bcl_sha256_parts(const void *const *parts, const size_t *lens, size_t count,
                     unsigned char out[32], bcl_error *e)
{
    (void)e; /* libmd's SHA-256 cannot fail: it allocates nothing */
    SHA2_CTX md;
    SHA256Init(&md);
    for (size_t i = 0; i < count; i++)
        SHA256Update(&md, parts[i], lens[i]);
    SHA256Final(out, &md);
    return BCL_OK;
}

int bcl_sha256(const void *data, size_t len, unsigned char out[32], bcl_error *e)
{
    return bcl_sha256_parts(&data, &len, 1, out, e);
}
