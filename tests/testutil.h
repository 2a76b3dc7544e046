/*
 * What several C tests share: float bits, a CHECK that counts failures for
 * the tests that do not use cmocka, and the set-up of the tests that make a
 * temporary folder or run themselves as a child. Header only: each test
 * is one program.
 */
#ifndef BALLCL_TESTUTIL_H
#define BALLCL_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* For the tests without cmocka: a failed check is printed and counted in
 * `failures`, and the test goes on. */
static int failures __attribute__((unused));

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* A fresh folder NAME.XXXXXX under $TMPDIR (else /tmp) into dir; 0, or -1
 * with the reason printed. Needs _GNU_SOURCE for mkdtemp. */
static inline int test_tmpdir(char *dir, size_t size, const char *name)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, size, "%s/%s.XXXXXX", base && *base ? base : "/tmp", name);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return -1;
    }
    return 0;
}

/* The running program's path into exe, for a test that runs itself as a
 * child; 0, or -1 with the reason printed. */
static inline int test_self_exe(char *exe, size_t size)
{
    ssize_t l = readlink("/proc/self/exe", exe, size - 1);
    if (l <= 0) {
        fprintf(stderr, "cannot find /proc/self/exe\n");
        return -1;
    }
    exe[l] = '\0';
    return 0;
}

/* Removes path and, for a folder, all in it (made writable first): 0 when
 * the last removal worked. */
static inline int remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return unlink(path);
    chmod(path, 0700);
    DIR *d = opendir(path);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            char sub[4096];
            if (snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) < (int)sizeof sub)
                remove_tree(sub);
        }
        closedir(d);
    }
    return rmdir(path);
}

#ifdef BALLCL_BALLCL_H
/* A device as its driver would describe it, for the tests that need none:
 * the identity a cache key or a tuned file is made of, 64-bit. */
static inline bcl_device_info test_device_info(const char *platform_name,
                                               const char *platform_version, const char *name,
                                               const char *vendor, const char *version,
                                               const char *driver)
{
    bcl_device_info d;
    memset(&d, 0, sizeof d);
    strcpy(d.platform_name, platform_name);
    strcpy(d.platform_version, platform_version);
    strcpy(d.name, name);
    strcpy(d.vendor, vendor);
    strcpy(d.version, version);
    strcpy(d.driver, driver);
    d.address_bits = 64;
    return d;
}
#endif

#ifdef cmocka_unit_test
/* A file of exactly these bytes (cmocka tests). */
static inline void write_raw(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Removes the test's folder after the tests: returns failed. */
static inline int removed_after(int failed, const char *dir)
{
    remove_tree(dir);
    return failed;
}
#endif

#ifdef TESTUTIL_DEVICE
/* For the device tests: the device of list that BALLCL_DEVICE selects (else
 * the default one). Exits 77 (skipped) when there is no device, 1 when the
 * selector fails. */
static const bcl_device_info *test_device(bcl_device_list *list)
{
    bcl_error e = {0};
    if (bcl_devices_enumerate(list, &e) != BCL_OK) {
        printf("no OpenCL device: %s\n", e.msg);
        exit(77);
    }
    bcl_selector sel;
    size_t di;
    if (bcl_selector_parse(getenv("BALLCL_DEVICE"), &sel, &e) ||
        bcl_selector_match(&sel, list, &di, &e)) {
        fprintf(stderr, "FAIL: %s\n", e.msg);
        bcl_devices_free(list);
        exit(1);
    }
    return &list->dev[di];
}
#endif

#endif
