/*
 * Unit tests of the binary cache (docs/cache.md) that need no device: the key
 * (every input changes it), the entry format (a round trip, and every kind
 * of damage is refused with its reason, random garbage included), the
 * folder (where it is, created 0700, unusable paths are clean errors), list
 * and clear (only program entries, stale temporaries only), and failure
 * injection showing that a failed rename leaves no entry and no temporary.
 */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cache/cache.h"
#include "ocl/program.h"
#include "models/rng.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

static char tmpdir[256];
static char self_exe[4096];

/* ---- helpers ------------------------------------------------------------- */

static void fresh_dir(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", tmpdir, name);
    remove_tree(out);
    assert_int_equal(mkdir(out, 0700), 0);
}

static size_t count_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static bcl_device_info sample_device(void)
{
    return test_device_info("Portable Computing Language", "OpenCL 3.0 PoCL 3.1 LLVM 15",
                            "pthread-haswell", "AuthenticAMD", "OpenCL 3.0 PoCL", "3.1+debian");
}

static const char sample_src[] = "__kernel void k(__global float *x) { x[0] = 1.0f; }\n";

static bcl_cache_key key_of(const bcl_device_info *d, const char *src, const char *opts)
{
    bcl_cache_key k;
    bcl_error e = {0};
    unsigned char id[32];
    assert_int_equal(bcl_device_identity(d, id, &e), BCL_OK);
    assert_int_equal(bcl_cache_key_make(id, src, strlen(src), opts, &k, &e), BCL_OK);
    return k;
}

static const bcl_cache_labels sample_labels = {"pthread-haswell", "PoCL", "seed.cl"};

/* A whole encoded entry with a payload of `len` bytes i*7+3. */
static unsigned char *sample_entry(const bcl_cache_key *k, size_t len, size_t *size)
{
    unsigned char *payload = malloc(len ? len : 1);
    assert_non_null(payload);
    for (size_t i = 0; i < len; i++)
        payload[i] = (unsigned char)(i * 7 + 3);
    unsigned char *buf;
    bcl_error e = {0};
    assert_int_equal(bcl_cache_entry_encode(k, &sample_labels, payload, len, &buf, size, &e),
                     BCL_OK);
    free(payload);
    return buf;
}

/* Decoding must fail and give a reason containing want. */
static void expect_bad_at(int line, const unsigned char *buf, size_t size, const bcl_cache_key *k,
                          const char *want)
{
    const unsigned char *p = NULL;
    size_t plen = 0;
    char why[160] = "";
    if (bcl_cache_entry_decode(buf, size, k, &p, &plen, NULL, why, sizeof why))
        fail_msg("line %d: a damaged entry decoded", line);
    if (!strstr(why, want))
        fail_msg("line %d: reason '%s' lacks '%s'", line, why, want);
    assert_null(p);
}
#define expect_bad(...) expect_bad_at(__LINE__, __VA_ARGS__)

/* ---- the key ------------------------------------------------------------- */

static void test_key_deterministic_hex(void **state)
{
    (void)state;
    bcl_device_info d = sample_device();
    bcl_cache_key a = key_of(&d, sample_src, "-cl-std=CL1.2");
    bcl_cache_key b = key_of(&d, sample_src, "-cl-std=CL1.2");
    assert_memory_equal(a.b, b.b, sizeof a.b);
    char hex[65];
    bcl_cache_key_hex(&a, hex);
    assert_int_equal(strlen(hex), 64);
    assert_int_equal(strspn(hex, "0123456789abcdef"), 64);
    char path[512];
    bcl_error e = {0};
    assert_int_equal(bcl_cache_entry_path("/x/y", &a, path, sizeof path, &e), BCL_OK);
    char want[512];
    snprintf(want, sizeof want, "/x/y/program-%s.bin", hex);
    assert_string_equal(path, want);
    /* A path that does not fit is an error, not a cut name. */
    assert_int_equal(bcl_cache_entry_path("/x/y", &a, path, 40, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "too long"));
}

/* Every input of the key changes it: a different source, option, platform,
 * device, vendor, version, driver or address width can never share an
 * entry. */
static void test_key_covers_every_field(void **state)
{
    (void)state;
    bcl_device_info base = sample_device();
    bcl_cache_key k0 = key_of(&base, sample_src, "-cl-std=CL1.2");
    bcl_cache_key seen[16];
    size_t nseen = 0;
    seen[nseen++] = k0;
#define VARIANT(field, value)                                                                      \
    do {                                                                                           \
        bcl_device_info d = base;                                                                  \
        snprintf(d.field, sizeof d.field, "%s", value);                                            \
        seen[nseen++] = key_of(&d, sample_src, "-cl-std=CL1.2");                                   \
    } while (0)
    VARIANT(platform_name, "NVIDIA CUDA");
    VARIANT(platform_version, "OpenCL 3.0 PoCL 3.1 LLVM 16");
    VARIANT(name, "NVIDIA H200");
    VARIANT(vendor, "NVIDIA Corporation");
    VARIANT(version, "OpenCL 3.0 CUDA");
    VARIANT(driver, "580.95");
#undef VARIANT
    bcl_device_info d32 = base;
    d32.address_bits = 32;
    seen[nseen++] = key_of(&d32, sample_src, "-cl-std=CL1.2");
    /* One more space in the source, another option. */
    seen[nseen++] =
        key_of(&base, "__kernel void k(__global float *x) { x[0] = 1.0f;  }\n", "-cl-std=CL1.2");
    seen[nseen++] = key_of(&base, sample_src, "-cl-std=CL1.2 -cl-mad-enable");
    seen[nseen++] = key_of(&base, sample_src, "");
    /* Moving bytes from one field to the next must not collide either. */
    bcl_device_info shifted = base;
    strcpy(shifted.name, "pthread-haswel");
    strcpy(shifted.vendor, "lAuthenticAMD");
    seen[nseen++] = key_of(&shifted, sample_src, "-cl-std=CL1.2");
    for (size_t i = 0; i < nseen; i++)
        for (size_t j = i + 1; j < nseen; j++)
            if (memcmp(seen[i].b, seen[j].b, sizeof seen[i].b) == 0)
                fail_msg("keys %zu and %zu are equal", i, j);
}

/* ---- the entry format ------------------------------------------------------ */

static void test_entry_round_trip(void **state)
{
    (void)state;
    bcl_device_info d = sample_device();
    bcl_cache_key k = key_of(&d, sample_src, "");
    size_t size;
    unsigned char *buf = sample_entry(&k, 5000, &size);
    assert_int_equal(size, BCL_CACHE_HEADER_SIZE + 5000);
    assert_memory_equal(buf, "BCLCACHE", 8);
    const unsigned char *p;
    size_t plen;
    bcl_cache_labels labels;
    char why[160];
    assert_true(bcl_cache_entry_decode(buf, size, &k, &p, &plen, &labels, why, sizeof why));
    assert_int_equal(plen, 5000);
    assert_ptr_equal(p, buf + BCL_CACHE_HEADER_SIZE);
    for (size_t i = 0; i < plen; i++)
        assert_int_equal(p[i], (unsigned char)(i * 7 + 3));
    assert_string_equal(labels.device, "pthread-haswell");
    assert_string_equal(labels.platform, "PoCL");
    assert_string_equal(labels.source, "seed.cl");
    /* Without an expected key (listing), any key is accepted. */
    assert_true(bcl_cache_entry_decode(buf, size, NULL, &p, &plen, NULL, why, sizeof why));
    free(buf);
}

static void test_entry_damage_refused(void **state)
{
    (void)state;
    bcl_device_info d = sample_device();
    bcl_cache_key k = key_of(&d, sample_src, "");
    size_t size;
    unsigned char *good = sample_entry(&k, 300, &size);
    unsigned char *buf = malloc(size + 16);
    assert_non_null(buf);

    /* Truncated anywhere: in the header, or in the payload. */
    expect_bad(good, 0, &k, "truncated header");
    expect_bad(good, 100, &k, "truncated header");
    expect_bad(good, BCL_CACHE_HEADER_SIZE - 1, &k, "truncated header");
    expect_bad(good, BCL_CACHE_HEADER_SIZE, &k, "truncated payload");
    expect_bad(good, size - 1, &k, "truncated payload");

    memcpy(buf, good, size);
    buf[3] ^= 0x20;
    expect_bad(buf, size, &k, "bad magic");

    memcpy(buf, good, size);
    buf[8] = 2; /* format version 2 */
    expect_bad(buf, size, &k, "format version 2");

    memcpy(buf, good, size);
    buf[13] = 0; /* header size 512 -> 0 */
    expect_bad(buf, size, &k, "header size");

    /* Another program's key: in the header, or expected by the reader. */
    memcpy(buf, good, size);
    buf[16 + 31] ^= 1;
    expect_bad(buf, size, &k, "wrong key");
    bcl_cache_key other = key_of(&d, sample_src, "-cl-std=CL1.2");
    expect_bad(good, size, &other, "wrong key");

    /* A length that claims more than the file, or far more than any binary. */
    memcpy(buf, good, size);
    buf[48 + 7] = 0xff;
    expect_bad(buf, size, &k, "truncated payload");
    memcpy(buf, good, size);
    buf[48] = 0;
    buf[49] = 0; /* 300 -> 0 bytes, 300 left over */
    expect_bad(buf, size, &k, "after the payload");
    memcpy(buf, good, size);
    memset(buf + size, 0, 16);
    expect_bad(buf, size + 16, &k, "16 bytes after the payload");

    /* Every single flipped payload byte, and a flipped checksum byte. */
    for (size_t i = BCL_CACHE_HEADER_SIZE; i < size; i++) {
        memcpy(buf, good, size);
        buf[i] ^= 0x40;
        expect_bad(buf, size, &k, "checksum mismatch");
    }
    memcpy(buf, good, size);
    buf[56] ^= 1;
    expect_bad(buf, size, &k, "checksum mismatch");

    /* The labels are not trusted, but they are cleaned for the terminal. */
    memcpy(buf, good, size);
    buf[88] = 0x1b;
    bcl_cache_labels labels;
    const unsigned char *p;
    size_t plen;
    char why[160];
    assert_true(bcl_cache_entry_decode(buf, size, &k, &p, &plen, &labels, why, sizeof why));
    assert_string_equal(labels.device, "?thread-haswell");
    free(buf);
    free(good);
}

/* Random bytes of random lengths, and random bytes behind a good magic,
 * never decode and never read out of bounds (the sanitizer build checks
 * the latter). */
static void test_entry_garbage_refused(void **state)
{
    (void)state;
    bcl_device_info d = sample_device();
    bcl_cache_key k = key_of(&d, sample_src, "");
    bcl_rng r;
    bcl_rng_seed(&r, 12345);
    for (int round = 0; round < 400; round++) {
        size_t len = bcl_rng_below(&r, 2000);
        unsigned char *buf = malloc(len ? len : 1);
        assert_non_null(buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)bcl_rng_next(&r);
        if (round % 2 && len >= 16) {
            memcpy(buf, "BCLCACHE\x01\x00\x00\x00\x00\x02\x00\x00", 16);
        }
        const unsigned char *p = NULL;
        size_t plen = 0;
        char why[160];
        assert_false(bcl_cache_entry_decode(buf, len, &k, &p, &plen, NULL, why, sizeof why));
        assert_true(why[0] != '\0');
        free(buf);
    }
}

/* ---- reading and writing files ------------------------------------------- */

static void test_entry_files(void **state)
{
    (void)state;
    char dir[512], path[600];
    fresh_dir(dir, sizeof dir, "files");
    bcl_device_info d = sample_device();
    bcl_cache_key k = key_of(&d, sample_src, "");
    bcl_error e = {0};
    assert_int_equal(bcl_cache_entry_path(dir, &k, path, sizeof path, &e), BCL_OK);

    unsigned char *file = (unsigned char *)"x";
    const unsigned char *p;
    size_t plen;
    char why[160];
    assert_int_equal(bcl_cache_entry_read(path, &k, &file, &p, &plen, NULL, why, sizeof why),
                     BCL_CACHE_ABSENT);
    assert_null(file);

    unsigned char payload[1000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (unsigned char)(i ^ 0x5a);
    assert_int_equal(bcl_cache_entry_write(path, &k, &sample_labels, payload, sizeof payload, &e),
                     BCL_OK);
    bcl_cache_labels labels;
    assert_int_equal(bcl_cache_entry_read(path, &k, &file, &p, &plen, &labels, why, sizeof why),
                     BCL_CACHE_FOUND);
    assert_int_equal(plen, sizeof payload);
    assert_memory_equal(p, payload, sizeof payload);
    assert_string_equal(labels.source, "seed.cl");
    free(file);
    /* Only the entry is there: the temporary was renamed, not copied. */
    assert_int_equal(count_files(dir), 1);

    /* A damaged file on disk is BAD with the reason; so is a folder. */
    assert_int_equal(truncate(path, 700), 0);
    assert_int_equal(bcl_cache_entry_read(path, &k, &file, &p, &plen, NULL, why, sizeof why),
                     BCL_CACHE_BAD);
    assert_non_null(strstr(why, "truncated payload"));
    assert_null(file);
    unlink(path);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(bcl_cache_entry_read(path, &k, &file, &p, &plen, NULL, why, sizeof why),
                     BCL_CACHE_BAD);
    assert_non_null(strstr(why, "a folder, not a regular file"));
    rmdir(path);
}

/* ---- the folder ------------------------------------------------------------ */

static void test_dir_location(void **state)
{
    (void)state;
    char out[512];
    bcl_error e = {0};
    setenv("BALLCL_CACHE_DIR", "/a/b/", 1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    setenv("HOME", "/home/u", 1);
    assert_int_equal(bcl_cache_dir(out, sizeof out, &e), BCL_OK);
    assert_string_equal(out, "/a/b");
    setenv("BALLCL_CACHE_DIR", "", 1);
    assert_int_equal(bcl_cache_dir(out, sizeof out, &e), BCL_OK);
    assert_string_equal(out, "/xdg/ballcl");
    unsetenv("BALLCL_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "relative/path", 1); /* ignored, as the XDG spec says */
    assert_int_equal(bcl_cache_dir(out, sizeof out, &e), BCL_OK);
    assert_string_equal(out, "/home/u/.cache/ballcl");
    unsetenv("XDG_CACHE_HOME");
    assert_int_equal(bcl_cache_dir(out, sizeof out, &e), BCL_OK);
    assert_string_equal(out, "/home/u/.cache/ballcl");
    unsetenv("HOME");
    assert_int_equal(bcl_cache_dir(out, sizeof out, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "BALLCL_CACHE_DIR"));
    bcl_error_clear(&e);
    setenv("BALLCL_CACHE_DIR", "/a", 1);
    assert_int_equal(bcl_cache_dir(out, 2, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "too long"));
}

static void test_dir_created_private(void **state)
{
    (void)state;
    char base[512], want[600], out[600];
    fresh_dir(base, sizeof base, "mode");
    snprintf(want, sizeof want, "%s/one/two/ballcl", base);
    setenv("BALLCL_CACHE_DIR", want, 1);
    /* Even a permissive umask gives 0700: the folder holds the user's binaries. */
    mode_t old = umask(0);
    bcl_error e = {0};
    int rc = bcl_cache_dir_create(out, sizeof out, &e);
    umask(old);
    assert_int_equal(rc, BCL_OK);
    assert_string_equal(out, want);
    struct stat st;
    assert_int_equal(stat(want, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0700);
    snprintf(out, sizeof out, "%s/one", base);
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    /* There already: fine, and its mode is the user's. */
    chmod(want, 0750);
    assert_int_equal(bcl_cache_dir_create(out, sizeof out, &e), BCL_OK);
    assert_int_equal(stat(want, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0750);

    /* Under a plain file: a clean error naming the path (root cannot
     * write there either, unlike a read-only folder). */
    snprintf(want, sizeof want, "%s/file", base);
    write_raw(want, "x", 1);
    snprintf(out, sizeof out, "%s/file/ballcl", base);
    setenv("BALLCL_CACHE_DIR", out, 1);
    assert_int_equal(bcl_cache_dir_create(out, sizeof out, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "cannot create cache folder"));
    assert_non_null(strstr(e.msg, "file"));
    bcl_error_clear(&e);
    setenv("BALLCL_CACHE_DIR", want, 1);
    assert_int_equal(bcl_cache_dir_create(out, sizeof out, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "not a folder"));
    bcl_error_clear(&e);
}

/* ---- list and clear ------------------------------------------------------ */

static void test_list_and_clear(void **state)
{
    (void)state;
    char dir[512], path[700];
    fresh_dir(dir, sizeof dir, "list");
    bcl_device_info d = sample_device();
    bcl_cache_key k1 = key_of(&d, sample_src, "a"), k2 = key_of(&d, sample_src, "b");
    bcl_cache_key k3 = key_of(&d, sample_src, "c");
    bcl_error e = {0};
    unsigned char payload[64] = {1, 2, 3};
    assert_int_equal(bcl_cache_entry_path(dir, &k1, path, sizeof path, &e), BCL_OK);
    assert_int_equal(bcl_cache_entry_write(path, &k1, &sample_labels, payload, 64, &e), BCL_OK);
    assert_int_equal(bcl_cache_entry_path(dir, &k2, path, sizeof path, &e), BCL_OK);
    write_raw(path, "garbage", 7);
    /* k1's entry under k3's name: the header's key is not the name's. */
    char p1[700];
    assert_int_equal(bcl_cache_entry_path(dir, &k1, p1, sizeof p1, &e), BCL_OK);
    assert_int_equal(bcl_cache_entry_path(dir, &k3, path, sizeof path, &e), BCL_OK);
    size_t size;
    unsigned char *ent = sample_entry(&k1, 10, &size);
    write_raw(path, ent, size);
    free(ent);
    /* Files that are not program entries. */
    snprintf(path, sizeof path, "%s/tune-seed-abc.json", dir);
    write_raw(path, "{}", 2);
    snprintf(path, sizeof path, "%s/program-notakey.bin", dir);
    write_raw(path, "x", 1);
    /* Temporaries of interrupted writes: one old, one that may be live. */
    char hex[65];
    bcl_cache_key_hex(&k1, hex);
    snprintf(path, sizeof path, "%s/.program-%s.bin.AbC123", dir, hex);
    write_raw(path, "partial", 7);
    struct utimbuf old = {.actime = time(NULL) - 3600, .modtime = time(NULL) - 3600};
    assert_int_equal(utime(path, &old), 0);
    snprintf(path, sizeof path, "%s/.program-%s.bin.XyZ789", dir, hex);
    write_raw(path, "partial", 7);

    bcl_cache_entry_info *list;
    size_t n;
    assert_int_equal(bcl_cache_list(dir, &list, &n, &e), BCL_OK);
    assert_int_equal(n, 3);
    size_t valid = 0;
    for (size_t i = 0; i < n; i++) {
        assert_non_null(strstr(list[i].file, list[i].key));
        if (list[i].valid) {
            valid++;
            assert_memory_equal(list[i].key, hex, 64);
            assert_string_equal(list[i].device, "pthread-haswell");
            assert_int_equal(list[i].bytes, BCL_CACHE_HEADER_SIZE + 64);
        } else {
            assert_true(strstr(list[i].problem, "bad magic") ||
                        strstr(list[i].problem, "truncated") ||
                        strstr(list[i].problem, "wrong key"));
        }
    }
    assert_int_equal(valid, 1);
    free(list);

    size_t entries, temps;
    uint64_t bytes;
    assert_int_equal(bcl_cache_clear(dir, &entries, &bytes, &temps, &e), BCL_OK);
    assert_int_equal(entries, 3);
    assert_int_equal(temps, 1);
    assert_int_equal(bytes, (BCL_CACHE_HEADER_SIZE + 64) + 7 + (BCL_CACHE_HEADER_SIZE + 10));
    /* Left: the tune file, the odd name, the young temporary. */
    assert_int_equal(count_files(dir), 3);
    snprintf(path, sizeof path, "%s/tune-seed-abc.json", dir);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(bcl_cache_list(dir, &list, &n, &e), BCL_OK);
    assert_int_equal(n, 0);
    assert_null(list);

    /* A missing folder lists and clears as empty. */
    snprintf(path, sizeof path, "%s/none", dir);
    assert_int_equal(bcl_cache_list(path, &list, &n, &e), BCL_OK);
    assert_int_equal(n, 0);
    assert_int_equal(bcl_cache_clear(path, &entries, NULL, NULL, &e), BCL_OK);
    assert_int_equal(entries, 0);
}

/* ---- failure injection --------------------------------------------------- */

/* BALLCL_FAULT is read once per process, so each case runs in a child. */
static int run_child(const char *fault, const char *mode, const char *arg)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("BALLCL_FAULT", fault, 1);
        execl(self_exe, self_exe, "--child", mode, arg, (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int child_main(const char *mode, const char *arg)
{
    bcl_device_info d = sample_device();
    bcl_cache_key k;
    bcl_error e = {0};
    unsigned char id[32];
    if (bcl_device_identity(&d, id, &e) ||
        bcl_cache_key_make(id, sample_src, strlen(sample_src), "", &k, &e))
        return 100;
    if (strcmp(mode, "write") == 0) {
        char path[700];
        if (bcl_cache_entry_path(arg, &k, path, sizeof path, &e))
            return 101;
        unsigned char payload[4096] = {7};
        int rc = bcl_cache_entry_write(path, &k, &sample_labels, payload, sizeof payload, &e);
        if (rc && !strstr(e.msg, "cannot write"))
            return 102;
        return rc;
    }
    if (strcmp(mode, "mkdir") == 0) {
        setenv("BALLCL_CACHE_DIR", arg, 1);
        char out[700];
        int rc = bcl_cache_dir_create(out, sizeof out, &e);
        if (rc && !strstr(e.msg, "cannot create cache folder"))
            return 102;
        return rc;
    }
    return 103;
}

/* Every step of a write that can fail (open, each write, fsync, rename)
 * fails cleanly: an error, no entry, no temporary, and an older entry
 * left as it was. */
static void test_failed_write_leaves_nothing(void **state)
{
    (void)state;
    char dir[512];
    fresh_dir(dir, sizeof dir, "fault");
    const char *faults[] = {"rename:1", "rename:1:ENOSPC", "fsync:1", "write:1", "open:1:EACCES"};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        assert_int_equal(run_child(faults[i], "write", dir), BCL_EXIT_INPUT);
        assert_int_equal(count_files(dir), 0);
    }
    assert_int_equal(run_child("", "write", dir), BCL_OK);
    assert_int_equal(count_files(dir), 1);
    assert_int_equal(run_child("rename:1", "write", dir), BCL_EXIT_INPUT);
    assert_int_equal(count_files(dir), 1); /* the old entry, and nothing else */
    bcl_cache_entry_info *list;
    size_t n;
    bcl_error e = {0};
    assert_int_equal(bcl_cache_list(dir, &list, &n, &e), BCL_OK);
    assert_int_equal(n, 1);
    assert_true(list[0].valid);
    free(list);

    char sub[600];
    snprintf(sub, sizeof sub, "%s/new/ballcl", dir);
    assert_int_equal(run_child("mkdir:1:EACCES", "mkdir", sub), BCL_EXIT_INPUT);
    assert_int_equal(run_child("mkdir:2", "mkdir", sub), BCL_EXIT_INPUT);
    assert_int_equal(run_child("", "mkdir", sub), BCL_OK);
}

static int setup(void **state)
{
    (void)state;
    unsetenv("BALLCL_FAULT");
    return 0;
}

/* Binaries of a driver that would crash on a foreign one (rusticl 22.3
 * aborts the process) are checked before the driver sees them; other
 * drivers refuse foreign bytes themselves, so anything passes. */
static void test_binary_format(void **state)
{
    (void)state;
    bcl_device_info rusticl = {0}, pocl = {0};
    strcpy(rusticl.platform_name, "rusticl");
    strcpy(pocl.platform_name, "Portable Computing Language");
    /* version 1, 8 bytes of SPIR-V, executable, the SPIR-V magic. */
    unsigned char good[20] = {1, 0, 0, 0, 8, 0, 0, 0, 4, 0, 0, 0, 0x03, 0x02, 0x23, 0x07};
    char why[160];
    assert_true(bcl_binary_plausible(&rusticl, good, sizeof good, why, sizeof why));
    unsigned char bad[20];
    memcpy(bad, good, sizeof bad);
    bad[0] = 2;
    assert_false(bcl_binary_plausible(&rusticl, bad, sizeof bad, why, sizeof why));
    assert_non_null(strstr(why, "rusticl binary format 2, expected 1"));
    assert_true(bcl_binary_plausible(&pocl, bad, sizeof bad, why, sizeof why));
    memcpy(bad, good, sizeof bad);
    bad[4] = 9;
    assert_false(bcl_binary_plausible(&rusticl, bad, sizeof bad, why, sizeof why));
    assert_non_null(strstr(why, "9 bytes of SPIR-V, the entry holds 8"));
    memcpy(bad, good, sizeof bad);
    bad[8] = 3;
    assert_false(bcl_binary_plausible(&rusticl, bad, sizeof bad, why, sizeof why));
    memcpy(bad, good, sizeof bad);
    bad[12] = 0;
    assert_false(bcl_binary_plausible(&rusticl, bad, sizeof bad, why, sizeof why));
    assert_non_null(strstr(why, "no SPIR-V module"));
    assert_false(bcl_binary_plausible(&rusticl, good, 10, why, sizeof why));
}

/* The cache keys and checksums are SHA-256: known digests (FIPS 180-2's
 * examples, and the same text given in parts), so that a change of the
 * implementation behind bcl_sha256 cannot change a key. */
static void hex32(const unsigned char md[32], char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void test_sha256_known_digests(void **state)
{
    (void)state;
    static const struct {
        const char *text, *hex;
    } known[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    unsigned char md[32];
    char hex[65];
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        bcl_error e = {0};
        assert_int_equal(bcl_sha256(known[i].text, strlen(known[i].text), md, &e), BCL_OK);
        hex32(md, hex);
        assert_string_equal(hex, known[i].hex);
    }
    /* A million 'a's, in parts of uneven lengths. */
    static char a[1000000];
    memset(a, 'a', sizeof a);
    const void *parts[3] = {a, a + 1, a + 64};
    size_t lens[3] = {1, 63, sizeof a - 64};
    bcl_error e = {0};
    assert_int_equal(bcl_sha256_parts(parts, lens, 3, md, &e), BCL_OK);
    hex32(md, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child") == 0)
        return child_main(argv[2], argv[3]);

    if (test_self_exe(self_exe, sizeof self_exe))
        return 1;
    unsetenv("BALLCL_FAULT");
    if (test_tmpdir(tmpdir, sizeof tmpdir, "test_cache"))
        return 1;

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_known_digests),
        cmocka_unit_test_setup(test_key_deterministic_hex, setup),
        cmocka_unit_test_setup(test_key_covers_every_field, setup),
        cmocka_unit_test_setup(test_entry_round_trip, setup),
        cmocka_unit_test_setup(test_entry_damage_refused, setup),
        cmocka_unit_test_setup(test_entry_garbage_refused, setup),
        cmocka_unit_test_setup(test_entry_files, setup),
        cmocka_unit_test_setup(test_dir_location, setup),
        cmocka_unit_test_setup(test_dir_created_private, setup),
        cmocka_unit_test_setup(test_list_and_clear, setup),
        cmocka_unit_test_setup(test_failed_write_leaves_nothing, setup),
        cmocka_unit_test(test_binary_format),
    };
    return removed_after(cmocka_run_group_tests(tests, NULL, NULL), tmpdir);
}
