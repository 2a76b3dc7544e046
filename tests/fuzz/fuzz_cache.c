/*
 * Fuzz target: the binary-cache entry parser (bcl_cache_entry_decode,
 * src/cache/cache_entry.c) on arbitrary bytes, as it would find them in a damaged
 * or hostile cache folder.
 *
 * A checksum guards every entry, so random bytes almost never pass; to reach
 * the code behind it, each input is decoded twice: as it is, and "resealed"
 * (payload length and SHA-256 set to match whatever follows the header).
 * Invariants (abort on violation):
 *   - a refusal says why, in one non-empty line;
 *   - an accepted entry's payload is exactly the bytes after the 512-byte
 *     header, non-empty, and its checksum is right (recomputed here); the
 *     labels are printable and NUL-terminated;
 *   - decoding with the header's own key accepts it, with any other key
 *     refuses it as "wrong key";
 *   - encoding the accepted key, labels and payload and decoding that gives
 *     the same payload and labels back.
 */
#include "run/run.h"
#include "measure/timing.h"
#include "models/rng.h"
#include "files/files.h"
#include "cache/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok, const char *what, const char *why)
{
    if (!ok) {
        fprintf(stderr, "fuzz_cache: invariant broken: %s (why \"%s\")\n", what, why);
        abort();
    }
}

static void check_label(const char *s, size_t size)
{
    size_t n = strnlen(s, size);
    check(n < size, "label not NUL-terminated", "");
    for (size_t i = 0; i < n; i++)
        check(s[i] >= 0x20 && s[i] < 0x7f, "label not printable", s);
}

static void decode_one(const unsigned char *buf, size_t size)
{
    const unsigned char *payload = NULL;
    size_t plen = 0;
    bcl_cache_labels labels;
    char why[256] = "";
    bool ok = bcl_cache_entry_decode(buf, size, NULL, &payload, &plen, &labels, why, sizeof why);
    if (!ok) {
        check(why[0] != '\0' && strchr(why, '\n') == NULL, "refusal without a one-line reason",
              why);
        return;
    }
    check(size > BCL_CACHE_HEADER_SIZE && payload == buf + BCL_CACHE_HEADER_SIZE &&
              plen == size - BCL_CACHE_HEADER_SIZE,
          "payload is not the bytes after the header", why);
    unsigned char sum[32];
    bcl_error e = {0};
    check(bcl_sha256(payload, plen, sum, &e) == BCL_OK && memcmp(sum, buf + 56, 32) == 0,
          "accepted a payload whose checksum is wrong", why);
    check_label(labels.device, sizeof labels.device);
    check_label(labels.platform, sizeof labels.platform);
    check_label(labels.source, sizeof labels.source);

    bcl_cache_key key, other;
    memcpy(key.b, buf + 16, sizeof key.b);
    other = key;
    other.b[0] ^= 1;
    const unsigned char *p2;
    size_t l2;
    check(bcl_cache_entry_decode(buf, size, &key, &p2, &l2, NULL, why, sizeof why),
          "refused with its own key", why);
    check(!bcl_cache_entry_decode(buf, size, &other, &p2, &l2, NULL, why, sizeof why) &&
              strstr(why, "wrong key"),
          "accepted with another key", why);

    unsigned char *again = NULL;
    size_t again_len = 0;
    check(bcl_cache_entry_encode(&key, &labels, payload, plen, &again, &again_len, &e) == BCL_OK,
          "cannot encode what was decoded", e.msg);
    bcl_cache_labels labels2;
    check(bcl_cache_entry_decode(again, again_len, &key, &p2, &l2, &labels2, why, sizeof why),
          "re-encoded entry refused", why);
    check(l2 == plen && memcmp(p2, payload, plen) == 0, "re-encoded payload differs", why);
    check(strcmp(labels.device, labels2.device) == 0 &&
              strcmp(labels.platform, labels2.platform) == 0 &&
              strcmp(labels.source, labels2.source) == 0,
          "re-encoded labels differ", why);
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    decode_one(data, size);
    if (size <= BCL_CACHE_HEADER_SIZE || size - BCL_CACHE_HEADER_SIZE > BCL_CACHE_MAX_PAYLOAD)
        return 0;
    /* Resealed: the length and checksum made to fit the payload. */
    unsigned char *copy = malloc(size);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    uint64_t len = size - BCL_CACHE_HEADER_SIZE;
    for (int i = 0; i < 8; i++)
        copy[48 + i] = (unsigned char)(len >> (8 * i));
    bcl_error e = {0};
    if (bcl_sha256(copy + BCL_CACHE_HEADER_SIZE, (size_t)len, copy + 56, &e) == BCL_OK)
        decode_one(copy, size);
    free(copy);
    return 0;
}
