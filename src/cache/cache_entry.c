/*
 * One binary cache entry: a fixed header (layout in cache.h) and the
 * driver's binary. Decoding trusts nothing in the file: every length is
 * checked against the bytes actually present before it is used, so a
 * truncated or garbage file is a clean "bad entry", never a crash.
 */
#include "files/files.h"
#include "cache/cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char magic[8] = {'B', 'C', 'L', 'C', 'A', 'C', 'H', 'E'};

enum {
    OFF_MAGIC = 0,
    OFF_FORMAT = 8,
    OFF_HEADER_SIZE = 12,
    OFF_KEY = 16,
    OFF_LENGTH = 48,
    OFF_CHECKSUM = 56,
    OFF_DEVICE = 88,
    OFF_PLATFORM = 248,
    OFF_SOURCE = 376,
    OFF_END = 440,
};

/* The header's integers: little-endian, n bytes. */
static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* A NUL-padded field, printable ASCII only: labels reach a terminal. */
static void get_label(const unsigned char *p, size_t field, char *out, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; i < field && p[i] && o + 1 < size; i++)
        out[o++] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
    out[o] = '\0';
}

static void put_label(unsigned char *p, size_t field, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n < field - 1 ? n : field - 1);
}

int bcl_cache_entry_encode(const bcl_cache_key *key, const bcl_cache_labels *labels,
                           const void *payload, size_t len, unsigned char **out, size_t *out_len,
                           bcl_error *e)
{
    if ((uint64_t)len > BCL_CACHE_MAX_PAYLOAD)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "program binary of %zu bytes is too large to cache",
                        len);
    unsigned char *buf = calloc(1, BCL_CACHE_HEADER_SIZE + len);
    if (!buf)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory for a cache entry");
    memcpy(buf + OFF_MAGIC, magic, sizeof magic);
    put_le(buf + OFF_FORMAT, BCL_CACHE_FORMAT, 4);
    put_le(buf + OFF_HEADER_SIZE, BCL_CACHE_HEADER_SIZE, 4);
    memcpy(buf + OFF_KEY, key->b, BCL_CACHE_KEY_BYTES);
    put_le(buf + OFF_LENGTH, len, 8);
    int rc = bcl_sha256(payload, len, buf + OFF_CHECKSUM, e);
    if (rc) {
        free(buf);
        return rc;
    }
    put_label(buf + OFF_DEVICE, OFF_PLATFORM - OFF_DEVICE, labels->device);
    put_label(buf + OFF_PLATFORM, OFF_SOURCE - OFF_PLATFORM, labels->platform);
    put_label(buf + OFF_SOURCE, OFF_END - OFF_SOURCE, labels->source);
    memcpy(buf + BCL_CACHE_HEADER_SIZE, payload, len);
    *out = buf;
    *out_len = BCL_CACHE_HEADER_SIZE + len;
    return BCL_OK;
}

bool bcl_cache_entry_decode(const unsigned char *buf, size_t size, const bcl_cache_key *key,
                            const unsigned char **payload, size_t *payload_len,
                            bcl_cache_labels *labels, char *why, size_t why_size)
{
    if (size < BCL_CACHE_HEADER_SIZE)
        return bcl_why(why, why_size, "truncated header (%zu of %d bytes)", size,
                       BCL_CACHE_HEADER_SIZE);
    if (memcmp(buf + OFF_MAGIC, magic, sizeof magic) != 0)
        return bcl_why(why, why_size, "not a ballcl cache entry (bad magic)");
    uint32_t format = (uint32_t)get_le(buf + OFF_FORMAT, 4);
    if (format != BCL_CACHE_FORMAT)
        return bcl_why(why, why_size, "format version %u, expected %d", (unsigned)format,
                       BCL_CACHE_FORMAT);
    if (get_le(buf + OFF_HEADER_SIZE, 4) != BCL_CACHE_HEADER_SIZE)
        return bcl_why(why, why_size, "header size %u, expected %d",
                       (unsigned)get_le(buf + OFF_HEADER_SIZE, 4), BCL_CACHE_HEADER_SIZE);
    if (key && memcmp(buf + OFF_KEY, key->b, BCL_CACHE_KEY_BYTES) != 0)
        return bcl_why(why, why_size, "wrong key (the entry is for another program or device)");
    uint64_t len = get_le(buf + OFF_LENGTH, 8);
    uint64_t have = size - BCL_CACHE_HEADER_SIZE;
    if (len > BCL_CACHE_MAX_PAYLOAD || len > have)
        return bcl_why(why, why_size, "truncated payload (%llu of %llu bytes)",
                       (unsigned long long)have, (unsigned long long)len);
    if (len < have)
        return bcl_why(why, why_size, "%llu bytes after the payload",
                       (unsigned long long)(have - len));
    if (len == 0)
        return bcl_why(why, why_size, "empty payload");
    unsigned char sum[32];
    bcl_error e = {0};
    if (bcl_sha256(buf + BCL_CACHE_HEADER_SIZE, (size_t)len, sum, &e) != BCL_OK)
        return bcl_why(why, why_size, "%s", e.msg);
    if (memcmp(sum, buf + OFF_CHECKSUM, sizeof sum) != 0)
        return bcl_why(why, why_size, "checksum mismatch");
    if (labels) {
        get_label(buf + OFF_DEVICE, OFF_PLATFORM - OFF_DEVICE, labels->device,
                  sizeof labels->device);
        get_label(buf + OFF_PLATFORM, OFF_SOURCE - OFF_PLATFORM, labels->platform,
                  sizeof labels->platform);
        get_label(buf + OFF_SOURCE, OFF_END - OFF_SOURCE, labels->source, sizeof labels->source);
    }
    *payload = buf + BCL_CACHE_HEADER_SIZE;
    *payload_len = (size_t)len;
    return true;
}

/* A whole regular file of at most limit bytes, never through a link: 0, an
 * errno value, or -1 with why for what is not a plain file of the user's. */
static int read_whole(const char *path, uint64_t limit, unsigned char **out, size_t *len, char *why,
                      size_t why_size)
{
    int f = bcl_fault_take("read");
    if (f != 0)
        return f;
    unsigned mode = 0;
    int fd = bcl_open_regular(path, true, &mode);
    if (fd == -1 && errno == ELOOP) {
        snprintf(why, why_size, "a symbolic link, not a file");
        return -1;
    }
    if (fd == -2) {
        snprintf(why, why_size, "%s, not a regular file", bcl_file_type_name(mode));
        return -1;
    }
    if (fd < 0)
        return errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return err;
    }
    /* Only the user (or root) may have made what the driver loads. */
    if (!bcl_cache_owner_ok(&st, why, why_size)) {
        close(fd);
        return -1;
    }
    char *buf = NULL;
    int err = bcl_read_fd(fd, limit, &buf, len);
    close(fd);
    *out = (unsigned char *)buf;
    return err;
}

bcl_cache_lookup bcl_cache_entry_read(const char *path, const bcl_cache_key *key,
                                      unsigned char **file, const unsigned char **payload,
                                      size_t *payload_len, bcl_cache_labels *labels, char *why,
                                      size_t why_size)
{
    *file = NULL;
    unsigned char *buf = NULL;
    size_t size = 0;
    int err =
        read_whole(path, BCL_CACHE_HEADER_SIZE + BCL_CACHE_MAX_PAYLOAD, &buf, &size, why, why_size);
    if (err == -1)
        return BCL_CACHE_BAD;
    if (err == ENOENT) {
        snprintf(why, why_size, "no entry");
        return BCL_CACHE_ABSENT;
    }
    if (err) {
        snprintf(why, why_size, "cannot read: %s", strerror(err));
        return BCL_CACHE_BAD;
    }
    if (!bcl_cache_entry_decode(buf, size, key, payload, payload_len, labels, why, why_size)) {
        free(buf);
        return BCL_CACHE_BAD;
    }
    *file = buf;
    return BCL_CACHE_FOUND;
}

int bcl_cache_entry_write(const char *path, const bcl_cache_key *key,
                          const bcl_cache_labels *labels, const void *payload, size_t len,
                          bcl_error *e)
{
    unsigned char *buf = NULL;
    size_t size = 0;
    int rc = bcl_cache_entry_encode(key, labels, payload, len, &buf, &size, e);
    if (rc)
        return rc;
    /* The name is ballcl's, in the user's folder: a FIFO, socket or link
     * there is removed (not followed, not refused) to be replaced. */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        (void)unlink(path);
    rc = bcl_write_file_atomic(path, buf, size, e);
    free(buf);
    return rc;
}
