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
#include <string.h>
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

#endif
