/*
 * Unit tests of the C reference of a user model (src/models/cref.c): a
 * reference compiled with the system compiler and run in a child matches,
 * bit for bit, the same update stepped here; what does not compile, faults
 * or loops gives one line naming the file; the cache folder spares the
 * second compile; a million balls pass through the pipes. Skipped (77)
 * only when no C compiler is found.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "models/models.h"
#include "util/util.h"
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static char dir[4096];

/* The seed model's update, and the drag-gravity one, in C: what the
 * references compile, stepped here for the comparison. */
#define SEED_UPDATE                                                                                \
    "float4 update(float4 b)\n"                                                                    \
    "{\n"                                                                                          \
    "    b.x = b.x + b.z;\n"                                                                       \
    "    b.y = b.y + b.w;\n"                                                                       \
    "    b.z = b.z + b.w;\n"                                                                       \
    "    return b;\n"                                                                              \
    "}\n"
#define DRAG_UPDATE                                                                                \
    "/* Balls under gravity with linear drag. */\n"                                                \
    "#pragma ballcl param dt 0.016666668\n"                                                        \
    "#pragma ballcl param gravity 980\n"                                                           \
    "#pragma ballcl param drag 0.5\n"                                                              \
    "float4 update(float4 b, float dt, float gravity, float drag)\n"                               \
    "{\n"                                                                                          \
    "    b.z = b.z - drag * b.z * dt;\n"                                                           \
    "    b.w = b.w + (gravity - drag * b.w) * dt;\n"                                               \
    "    b.x = b.x + b.z * dt;\n"                                                                  \
    "    b.y = b.y + b.w * dt;\n"                                                                  \
    "    return b;\n"                                                                              \
    "}\n"

static const char *const drag_names[] = {"dt", "gravity", "drag"};

/* Writes text to <dir>/name; its path into path. */
static void put(const char *name, const char *text, char *path, size_t size)
{
    assert_true(snprintf(path, size, "%s/%s", dir, name) < (int)size);
    write_raw(path, text, strlen(text));
}

/* Opens the reference name (text) without a cache: asserts it opens. */
static bcl_cref *open_ok(const char *name, const char *text, unsigned nparams,
                         const char *const *names)
{
    char path[4096];
    put(name, text, path, sizeof path);
    bcl_error e = {0};
    bcl_cref *r = NULL;
    if (bcl_cref_open(path, nparams, names, NULL, false, &r, &e) != BCL_OK)
        fail_msg("open %s: %s", name, e.msg);
    return r;
}

static void fill(float *s, size_t n)
{
    for (size_t i = 0; i < 4 * n; i++)
        s[i] = (float)((i * 7919) % 1000) * 0.37f - 150.0f;
}

static void expect_same_bits(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < 4 * n; i++)
        if (bits(a[i]) != bits(b[i]))
            fail_msg("float %zu: %a, expected %a", i, (double)a[i], (double)b[i]);
}

/* One step of a ball here, as the references do it in their child. */
static void seed_step(float *b, const float *p)
{
    (void)p;
    b[0] = b[0] + b[2];
    b[1] = b[1] + b[3];
    b[2] = b[2] + b[3];
}

static void drag_step(float *b, const float *p)
{
    float dt = p[0], gravity = p[1], drag = p[2];
    b[2] = b[2] - drag * b[2] * dt;
    b[3] = b[3] + (gravity - drag * b[3]) * dt;
    b[0] = b[0] + b[2] * dt;
    b[1] = b[1] + b[3] * dt;
}

/* Runs r on n balls for steps steps with p, and step as many times on a
 * copy here: the bits must agree. The state the run left, malloc'ed. */
static float *expect_matches(bcl_cref *r, size_t n, unsigned steps, const float *p,
                             void (*step)(float *, const float *))
{
    float *s = malloc(16 * n + 16), *want = malloc(16 * n + 16);
    assert_non_null(s);
    assert_non_null(want);
    fill(s, n);
    memcpy(want, s, 16 * n);
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < steps; k++)
            step(want + 4 * i, p);
    bcl_error e = {0};
    if (bcl_cref_run(r, s, n, steps, p, 30, false, &e) != BCL_OK)
        fail_msg("run: %s", e.msg);
    expect_same_bits(s, want, n);
    free(want);
    return s;
}

static void test_seed_matches(void **state)
{
    (void)state;
    bcl_cref *r = open_ok("seed.c", SEED_UPDATE, 0, NULL);
    enum { N = 37 };
    float *s = expect_matches(r, N, 25, NULL, seed_step);
    /* Zero steps gives the state back; zero balls is fine too. */
    float again[4 * N];
    memcpy(again, s, sizeof again);
    bcl_error e = {0};
    assert_int_equal(bcl_cref_run(r, s, N, 0, NULL, 0, false, &e), BCL_OK);
    expect_same_bits(s, again, N);
    assert_int_equal(bcl_cref_run(r, s, 0, 5, NULL, 0, false, &e), BCL_OK);
    free(s);
    bcl_cref_close(r);
}

static void test_drag_params_in_order(void **state)
{
    (void)state;
    bcl_cref *r = open_ok("drag.c", DRAG_UPDATE, 3, drag_names);
    enum { N = 16, STEPS = 40 };
    const float p[3] = {0.016666668f, 980.0f, 0.5f};
    float *want = expect_matches(r, N, STEPS, p, drag_step);
    float s[4 * N];
    bcl_error e = {0};
    /* The parameters reach update in order: swapping two changes the result. */
    const float swapped[3] = {0.016666668f, 0.5f, 980.0f};
    fill(s, N);
    assert_int_equal(bcl_cref_run(r, s, N, STEPS, swapped, 0, false, &e), BCL_OK);
    assert_true(memcmp(s, want, sizeof s) != 0);
    free(want);
    bcl_cref_close(r);
}

static void test_eight_params_in_order(void **state)
{
    (void)state;
    /* Base-16 digits, exact in float: each parameter's place is seen. */
    static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    bcl_cref *r = open_ok("eight.c",
                          "float4 update(float4 s, float a, float b, float c, float d, float e,\n"
                          "              float f, float g, float h)\n"
                          "{\n"
                          "    s.x = ((a * 16.0f + b) * 16.0f + c) * 16.0f + d;\n"
                          "    s.y = ((e * 16.0f + f) * 16.0f + g) * 16.0f + h;\n"
                          "    return s;\n"
                          "}\n",
                          BCL_MAX_PARAMS, names);
    const float p[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float s[4] = {0, 0, 9, 10};
    bcl_error e = {0};
    assert_int_equal(bcl_cref_run(r, s, 1, 1, p, 0, false, &e), BCL_OK);
    assert_true(s[0] == (float)0x1234 && s[1] == (float)0x5678 && s[2] == 9 && s[3] == 10);
    bcl_cref_close(r);
    /* One more than the driver can call is refused. */
    bcl_cref *more = NULL;
    assert_int_equal(bcl_cref_open("eight.c", BCL_MAX_PARAMS + 1, names, NULL, false, &more, &e),
                     BCL_EXIT_INPUT);
    assert_null(more);
}

static void test_flush_denormals(void **state)
{
    (void)state;
    /* A denormal times one: kept as it is, or zero with the flush modes. */
    bcl_cref *r =
        open_ok("denormal.c", "float4 update(float4 b, float one) { b.x = b.x * one; return b; }\n",
                1, (const char *const[]){"one"});
    const float one = 1.0f;
    float s[4] = {1e-40f, 0, 0, 0};
    bcl_error e = {0};
    assert_int_equal(bcl_cref_run(r, s, 1, 1, &one, 0, false, &e), BCL_OK);
    assert_int_equal(bits(s[0]), bits(1e-40f));
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
    assert_int_equal(bcl_cref_run(r, s, 1, 1, &one, 0, true, &e), BCL_OK);
    assert_int_equal(bits(s[0]), 0);
#endif
    bcl_cref_close(r);
}

static void test_syntax_error_names_the_line(void **state)
{
    (void)state;
    char path[4096];
    put("broken.c", "float4 update(float4 b)\n{\n    b.x = b.x + ;\n    return b;\n}\n", path,
        sizeof path);
    bcl_error e = {0};
    bcl_cref *r = NULL;
    assert_int_equal(bcl_cref_open(path, 0, NULL, NULL, false, &r, &e), BCL_EXIT_INPUT);
    assert_null(r);
    char want[4200];
    snprintf(want, sizeof want, "reference '%s' does not compile: ", path);
    assert_non_null(strstr(e.msg, want));
    snprintf(want, sizeof want, "%s:3:", path);
    if (!strstr(e.msg, want))
        fail_msg("no %s in: %s", want, e.msg);
    assert_null(strchr(e.msg, '\n'));
    assert_non_null(e.detail);
    bcl_error_clear(&e);
    /* The scan comes first: a double literal never reaches the compiler. */
    put("double.c", "float4 update(float4 b)\n{\n    b.x = b.x * 0.5;\n    return b;\n}\n", path,
        sizeof path);
    assert_int_equal(bcl_cref_open(path, 0, NULL, NULL, false, &r, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, ":3:17: '0.5' is a double literal"));
    bcl_error_clear(&e);
    /* And the signature against the pragmas. */
    assert_int_equal(bcl_cref_open(path, 3, drag_names, NULL, false, &r, &e), BCL_EXIT_INPUT);
    bcl_error_clear(&e);
}

/* Opens the reference name (text), runs one step of a ball with time
 * limit limit_s, and expects BCL_EXIT_INPUT with want in the message;
 * returns how long the run took, in seconds. */
static double expect_run_fails(const char *name, const char *text, double limit_s, const char *want)
{
    bcl_cref *r = open_ok(name, text, 0, NULL);
    float s[4] = {0};
    bcl_error e = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(bcl_cref_run(r, s, 1, 1, NULL, limit_s, false, &e), BCL_EXIT_INPUT);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!strstr(e.msg, want))
        fail_msg("got \"%s\", expected \"%s\" in it", e.msg, want);
    assert_null(strchr(e.msg, '\n'));
    bcl_cref_close(r);
    return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

static void test_segfault_names_the_signal(void **state)
{
    (void)state;
    expect_run_fails("fault.c",
                     "float4 update(float4 b)\n{\n    *(volatile int *)0 = 0;\n    return b;\n}\n",
                     0, "fault.c' was killed by signal 11 (Segmentation fault)");
}

static void test_exit_and_time_limit(void **state)
{
    (void)state;
    expect_run_fails("exits.c",
                     "#include <stdio.h>\n#include <stdlib.h>\n"
                     "float4 update(float4 b)\n{\n    fprintf(stderr, \"no luck\\n\");\n"
                     "    exit(5);\n}\n",
                     0, "exits.c' exited with status 5: no luck");
    double took = expect_run_fails("loops.c",
                                   "float4 update(float4 b)\n{\n"
                                   "    for (volatile int i = 0; i >= 0; i = 1)\n"
                                   "        ;\n    return b;\n}\n",
                                   1, "loops.c' ran past its time limit of 1 s");
    assert_true(took >= 0.9 && took < 5);
}

static void test_child_that_stops_reading(void **state)
{
    (void)state;
    /* It exits before main, so the parent's writes of a large state meet a
     * closed pipe: an error naming the status, and no SIGPIPE here. */
    bcl_cref *r = open_ok("early.c",
                          "#include <unistd.h>\n"
                          "__attribute__((constructor)) static void quit(void) { _exit(3); }\n"
                          "float4 update(float4 b) { return b; }\n",
                          0, NULL);
    size_t n = (size_t)1 << 20;
    float *s = calloc(4 * n, sizeof *s);
    assert_non_null(s);
    bcl_error e = {0};
    assert_int_equal(bcl_cref_run(r, s, n, 1, NULL, 0, false, &e), BCL_EXIT_INPUT);
    if (!strstr(e.msg, "early.c' exited with status 3"))
        fail_msg("got: %s", e.msg);
    free(s);
    bcl_cref_close(r);
}

/* The one file in folder, its path into out: false when not exactly one. */
static bool only_file(const char *folder, char *out, size_t size)
{
    DIR *d = opendir(folder);
    if (!d)
        return false;
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.' && count++ == 0 &&
            snprintf(out, size, "%s/%s", folder, de->d_name) >= (int)size)
            count = -1000; /* never "one" */
    closedir(d);
    return count == 1;
}

static void test_cache_reuses_the_executable(void **state)
{
    (void)state;
    char path[4096], cache[4200], folder[4300], exe[4400];
    put("cached.c", DRAG_UPDATE, path, sizeof path);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    assert_int_equal(mkdir(cache, 0700), 0);
    bcl_error e = {0};
    bcl_cref *r = NULL;
    assert_int_equal(bcl_cref_open(path, 3, drag_names, cache, true, &r, &e), BCL_OK);
    bcl_cref_close(r);
    snprintf(folder, sizeof folder, "%s/reference", cache);
    assert_true(only_file(folder, exe, sizeof exe));
    /* Back-dated: a compile would give a new file, with the time of now. */
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    assert_int_equal(utimensat(AT_FDCWD, exe, old, 0), 0);
    assert_int_equal(bcl_cref_open(path, 3, drag_names, cache, true, &r, &e), BCL_OK);
    struct stat st;
    assert_int_equal(stat(exe, &st), 0);
    assert_int_equal(st.st_mtime, 1000000000);
    const float p[3] = {0.016666668f, 980.0f, 0.5f};
    float s[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(bcl_cref_run(r, s, 2, 3, p, 0, false, &e), BCL_OK);
    bcl_cref_close(r);
    /* Another text is another executable. */
    put("cached.c", SEED_UPDATE, path, sizeof path);
    assert_int_equal(bcl_cref_open(path, 0, NULL, cache, true, &r, &e), BCL_OK);
    bcl_cref_close(r);
    assert_false(only_file(folder, exe, sizeof exe));
    /* Without the cache, the private folder is gone once open returns,
     * and the executable still runs. */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    assert_int_equal(mkdir(tmp, 0700), 0);
    char *saved = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", tmp, 1);
    assert_int_equal(bcl_cref_open(path, 0, NULL, cache, false, &r, &e), BCL_OK);
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    assert_false(only_file(tmp, exe, sizeof exe));
    assert_int_equal(rmdir(tmp), 0); /* empty */
    assert_int_equal(bcl_cref_run(r, s, 2, 3, NULL, 0, false, &e), BCL_OK);
    bcl_cref_close(r);
}

static void test_million_balls_stream(void **state)
{
    (void)state;
    bcl_cref *r = open_ok("big.c", SEED_UPDATE, 0, NULL);
    free(expect_matches(r, (size_t)1 << 20, 2, NULL, seed_step));
    bcl_cref_close(r);
}

int main(void)
{
    /* The one reason to skip: no compiler to build a reference with. */
    bcl_error e = {0};
    char probe[4096];
    if (test_tmpdir(dir, sizeof dir, "ballcl-cref") != 0)
        return 1;
    put("probe.c", SEED_UPDATE, probe, sizeof probe);
    bcl_cref *r = NULL;
    int rc = bcl_cref_open(probe, 0, NULL, NULL, false, &r, &e);
    bcl_cref_close(r);
    if (rc != BCL_OK && strstr(e.msg, "no C compiler")) {
        printf("skipped: %s\n", e.msg);
        remove_tree(dir);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_matches),
        cmocka_unit_test(test_drag_params_in_order),
        cmocka_unit_test(test_eight_params_in_order),
        cmocka_unit_test(test_flush_denormals),
        cmocka_unit_test(test_syntax_error_names_the_line),
        cmocka_unit_test(test_segfault_names_the_signal),
        cmocka_unit_test(test_exit_and_time_limit),
        cmocka_unit_test(test_child_that_stops_reading),
        cmocka_unit_test(test_cache_reuses_the_executable),
        cmocka_unit_test(test_million_balls_stream),
    };
    return removed_after(cmocka_run_group_tests(tests, NULL, NULL), dir);
}
