/*
 * Unit tests of the .npy reader and writer and of the atomic writer (docs/DESIGN.md):
 * bit-exact round trips, one test per class of malformed file (each checks
 * the exit class and the words of the message), and failure injection
 * showing that a failed write leaves neither a temporary file nor a damaged
 * target behind.
 */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "run/run.h"
#include "measure/timing.h"
#include "models/rng.h"
#include "files/files.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];
static char self_exe[4096];

/* ---- helpers ------------------------------------------------------------- */

static void path_in_tmp(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", tmpdir, name);
}

/* Writes a .npy file with the given version and header dict (padded the way
 * NumPy pads), followed by `data_len` bytes of `data`. */
static void write_npy(const char *path, unsigned major, unsigned minor, const char *dict,
                      const void *data, size_t data_len)
{
    size_t dl = strlen(dict);
    size_t hlen = dl + 1;
    hlen += (64 - (10 + hlen) % 64) % 64;
    unsigned char *buf = malloc(10 + hlen + data_len);
    assert_non_null(buf);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = (unsigned char)minor;
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, dict, dl);
    memset(buf + 10 + dl, ' ', hlen - dl - 1);
    buf[10 + hlen - 1] = '\n';
    if (data_len)
        memcpy(buf + 10 + hlen, data, data_len);
    write_raw(path, buf, 10 + hlen + data_len);
    free(buf);
}

/* Writes a string literal's bytes, without its final NUL. */
#define WRITE_LIT(path, lit) write_raw(path, lit, sizeof lit - 1)

#define GOOD_DICT(n) "{'descr': '<f4', 'fortran_order': False, 'shape': (" #n ", 4), }"

/* Expects bcl_npy_read to fail with BCL_EXIT_INPUT and `want` in the
 * message, which must also name the file, be one line and leave the outputs
 * alone. */
static void expect_read_error(const char *path, const char *want)
{
    bcl_error e = {0};
    float *state = (float *)(uintptr_t)0x1;
    size_t n = 77;
    int rc = bcl_npy_read(path, &state, &n, &e);
    if (rc != BCL_EXIT_INPUT || !strstr(e.msg, want))
        fail_msg("rc %d, message \"%s\": wanted rc %d and \"%s\"", rc, e.msg, BCL_EXIT_INPUT, want);
    assert_int_equal(e.code, BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, path));
    assert_null(strchr(e.msg, '\n'));
    assert_true(state == (float *)(uintptr_t)0x1);
    assert_int_equal(n, 77);
    bcl_error_clear(&e);
    /* The header alone (what an MPI run's rank 0 checks) fails the same
     * way, for everything but the values and the read faults. */
    if (strstr(want, "non-finite") || strstr(want, "cannot read"))
        return;
    uint64_t offset = 5;
    rc = bcl_npy_read_header(path, &n, &offset, &e);
    if (rc != BCL_EXIT_INPUT || !strstr(e.msg, want))
        fail_msg("header only: rc %d, message \"%s\": wanted \"%s\"", rc, e.msg, want);
    assert_int_equal(n, 77);
    assert_int_equal(offset, 5);
    bcl_error_clear(&e);
}

/* Writes a dict with good data for `balls` balls and expects `want`. */
static void expect_dict_error(const char *dict, size_t balls, const char *want)
{
    char path[512];
    path_in_tmp(path, sizeof path, "bad.npy");
    float *data = calloc(balls ? balls * 4 : 1, sizeof(float));
    assert_non_null(data);
    write_npy(path, 1, 0, dict, data, balls * 4 * sizeof(float));
    free(data);
    expect_read_error(path, want);
}

/* Names in tmpdir other than the expected ones: leftover temporaries. */
static int count_entries(const char *prefix)
{
    DIR *d = opendir(tmpdir);
    assert_non_null(d);
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
            count++;
    closedir(d);
    return count;
}

static int setup(void **state)
{
    (void)state;
    remove_tree(tmpdir);
    return mkdir(tmpdir, 0700);
}

/* ---- round trips ------------------------------------------------------------ */

static void round_trip(const float *src, size_t n)
{
    char path[512];
    path_in_tmp(path, sizeof path, "rt.npy");
    bcl_error e = {0};
    assert_int_equal(bcl_npy_write(path, src, n, &e), BCL_OK);
    assert_int_equal(e.code, 0);

    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((st.st_size - (off_t)(n * 16)) % 64, 0); /* data is 64-byte aligned */

    float *got = NULL;
    size_t got_n = 0;
    int rc = bcl_npy_read(path, &got, &got_n, &e);
    if (rc != BCL_OK)
        fail_msg("read back: %s", e.msg);
    assert_int_equal(got_n, n);
    assert_memory_equal(got, src, n * 16);
    free(got);
    assert_int_equal(count_entries(".rt.npy."), 0);
}

static void test_round_trip_special_values(void **unused)
{
    (void)unused;
    float s[] = {
        0.0f,      -0.0f,    FLT_MIN,          -FLT_MIN,       /* ball 0 */
        FLT_MAX,   -FLT_MAX, FLT_TRUE_MIN,     -FLT_TRUE_MIN,  /* ball 1 */
        1.0f / 3,  3.5e-39f, 0x1.fffffcp-127f, 0x1.000002p+0f, /* ball 2: denormals */
        -123.456f, 1e30f,    -1e-30f,          (float)M_PI,    /* ball 3 */
    };
    assert_true(fpclassify(s[9]) == FP_SUBNORMAL);
    assert_true(signbit(s[1]));
    round_trip(s, 4);
}

static void test_round_trip_sizes(void **unused)
{
    (void)unused;
    /* 1 ball; and counts whose digits move the header padding around. */
    size_t sizes[] = {1, 2, 9, 10, 99999, 100000, 262145};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        float *s = malloc(n * 16);
        assert_non_null(s);
        uint32_t x = 12345;
        for (size_t i = 0; i < n * 4; i++) {
            /* Random finite bit patterns: every exponent but all-ones. */
            do {
                x = x * 1664525u + 1013904223u;
                memcpy(&s[i], &x, 4);
            } while (!isfinite(s[i]));
        }
        round_trip(s, n);
        free(s);
    }
}

static void test_writer_header_exact(void **unused)
{
    (void)unused;
    /* Byte for byte what np.save writes for np.zeros((3, 4), np.float32). */
    static const char want[] =
        "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"
        "                                                          \n";
    assert_int_equal(sizeof want - 1, 128);
    char path[512];
    path_in_tmp(path, sizeof path, "h.npy");
    float z[12] = {0};
    bcl_error e = {0};
    assert_int_equal(bcl_npy_write(path, z, 3, &e), BCL_OK);
    unsigned char buf[256];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(buf, 1, sizeof buf, f), 128 + 48);
    fclose(f);
    assert_memory_equal(buf, want, 128);

    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    mode_t mask = umask(022);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0644 & ~mask);
}

static void test_reader_tolerates_layout(void **unused)
{
    (void)unused;
    /* Keys in any order, double quotes, odd spacing, no trailing comma,
     * "(2, 4,)": all valid Python that np.load accepts. */
    const char *dicts[] = {
        "{'shape': (2, 4), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,4)}",
        "  {  'fortran_order' : False ,'shape':( 2 , 4 , ) , 'descr' : '<f4' ,  }  ",
    };
    float s[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    char path[512];
    path_in_tmp(path, sizeof path, "ok.npy");
    for (size_t k = 0; k < sizeof dicts / sizeof dicts[0]; k++) {
        write_npy(path, 1, 0, dicts[k], s, sizeof s);
        bcl_error e = {0};
        float *got = NULL;
        size_t n = 0;
        if (bcl_npy_read(path, &got, &n, &e) != BCL_OK)
            fail_msg("%s: %s", dicts[k], e.msg);
        assert_int_equal(n, 2);
        assert_memory_equal(got, s, sizeof s);
        free(got);
    }
}

/* ---- malformed files ------------------------------------------------------ */

static void test_bad_magic(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "magic.npy");
    WRITE_LIT(path, "\x93NUMPX\x01\x00\x10\x00{}              \n");
    expect_read_error(path, "bad magic string");
    WRITE_LIT(path, "PK\x03\x04"); /* an .npz, say */
    expect_read_error(path, "not a .npy file");
    WRITE_LIT(path, "");
    expect_read_error(path, "file is empty");
    WRITE_LIT(path, "\x93NUMPY\x01");
    expect_read_error(path, "ends inside the .npy preamble");
}

static void test_bad_version(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "v2.npy");
    float s[4] = {0};
    write_npy(path, 2, 0, GOOD_DICT(1), s, sizeof s);
    expect_read_error(path, ".npy version 2.0: expected .npy version 1.0");
    write_npy(path, 1, 1, GOOD_DICT(1), s, sizeof s);
    expect_read_error(path, ".npy version 1.1: expected .npy version 1.0");
}

static void test_header_longer_than_file(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "hlen.npy");
    /* Claims 0x1000 bytes of header; 30 follow. */
    WRITE_LIT(path, "\x93NUMPY\x01\x00\x00\x10{'descr': '<f4', 'fortr");
    expect_read_error(path, "header length 4096 runs past the end of the file");
}

static void test_header_without_newline(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "nl.npy");
    /* A 64-byte header that is all dict and spaces, with no final '\n'. */
    char buf[10 + 64];
    memcpy(buf, "\x93NUMPY\x01\x00\x40\x00", 10);
    memset(buf + 10, ' ', 64);
    memcpy(buf + 10, GOOD_DICT(1), strlen(GOOD_DICT(1)));
    write_raw(path, buf, sizeof buf);
    expect_read_error(path, "does not end with a newline");
}

static void test_bad_descr(void **unused)
{
    (void)unused;
    expect_dict_error("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 4), }", 2,
                      "dtype '<f8' is not supported: expected '<f4' (float32, little-endian)");
    expect_dict_error("{'descr': '>f4', 'fortran_order': False, 'shape': (1, 4), }", 1,
                      "dtype '>f4' is not supported");
    expect_dict_error("{'descr': '|u1', 'fortran_order': False, 'shape': (16, 4), }", 0,
                      "dtype '|u1' is not supported");
    expect_dict_error("{'descr': '=f4', 'fortran_order': False, 'shape': (1, 4), }", 1,
                      "dtype '=f4' is not supported");
    expect_dict_error("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (1, 4), }", 1,
                      "structured dtype is not supported");
    expect_dict_error("{'descr': 5, 'fortran_order': False, 'shape': (1, 4), }", 1,
                      "malformed .npy header at byte 20: expected a quoted string");
}

static void test_fortran_order(void **unused)
{
    (void)unused;
    expect_dict_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 4), }", 2,
                      "fortran_order is True (column-major data): expected False");
    expect_dict_error("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 4), }", 2,
                      "expected True or False for 'fortran_order'");
    expect_dict_error("{'descr': '<f4', 'fortran_order': false, 'shape': (2, 4), }", 2,
                      "expected True or False for 'fortran_order'");
}

static void test_bad_shape(void **unused)
{
    (void)unused;
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }", 3,
                      "shape (4, 3) is not supported: expected (N, 4)");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (16,), }", 4,
                      "shape (16,) is not supported: expected (N, 4)");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4, 1), }", 4,
                      "shape (4, 4, 1) is not supported: expected (N, 4)");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0,
                      "shape () is not supported");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }", 0,
                      "shape (0, 4) holds no balls: expected (N, 4), N >= 1");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (16), }", 4,
                      "expected a tuple for 'shape'");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': [4, 4], }", 4,
                      "expected a tuple of integers for 'shape'");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4), }", 1,
                      "expected a non-negative integer in 'shape'");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (01, 4), }", 1,
                      "without leading zeros");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1 4), }", 1,
                      "expected ',' or ')' in 'shape'");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4)", 1,
                      "expected ',' or '}' after a value");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (99999999999999999999999, 4), }",
                      1, "exceeds 64 bits");
}

static void test_missing_and_unknown_keys(void **unused)
{
    (void)unused;
    expect_dict_error("{'descr': '<f4', 'shape': (1, 4), }", 1,
                      ".npy header has no 'fortran_order' key");
    expect_dict_error("{'fortran_order': False, 'shape': (1, 4), }", 1,
                      ".npy header has no 'descr' key");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False}", 0,
                      ".npy header has no 'shape' key");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), 'units': 'm'}", 1,
                      "unknown key 'units' in the .npy header: expected only 'descr', "
                      "'fortran_order' and 'shape'");
    expect_dict_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                      "'shape': (1, 4)}",
                      1, "key 'descr' appears twice");
    expect_dict_error("'descr': '<f4', 'fortran_order': False, 'shape': (1, 4)", 1,
                      "expected a dict literal starting with '{'");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4)} x", 1,
                      "expected only spaces after the header dict");
}

static void test_data_length(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "len.npy");
    float s[12] = {0};
    write_npy(path, 1, 0, GOOD_DICT(3), s, sizeof s - 1);
    expect_read_error(path, "data is truncated: shape (3, 4) needs 3 balls");
    write_npy(path, 1, 0, GOOD_DICT(3), s, 0);
    expect_read_error(path, "data is truncated");
    write_npy(path, 1, 0, GOOD_DICT(2), s, sizeof s);
    expect_read_error(path, "16 bytes of extra data after the array of shape (2, 4)");
    write_npy(path, 1, 0, GOOD_DICT(2), s, 8 * 4 + 1);
    expect_read_error(path, "1 bytes of extra data");
}

/* The pieces an MPI run reads and writes a state file with, in slices. */
static void test_slices(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "slices.npy");
    float s[1000 * 4];
    for (size_t i = 0; i < 1000 * 4; i++)
        s[i] = (float)i;
    bcl_error e = {0};
    assert_int_equal(bcl_npy_write(path, s, 1000, &e), BCL_OK);
    size_t n = 0;
    uint64_t offset = 0;
    assert_int_equal(bcl_npy_read_header(path, &n, &offset, &e), BCL_OK);
    assert_int_equal(n, 1000);
    assert_int_equal(offset, 128);
    /* The header bytes are the file's first bytes; too small a buffer only
     * gets the length. */
    unsigned char header[256], file[128];
    assert_int_equal(bcl_npy_header(1000, NULL, 0), 128);
    assert_int_equal(bcl_npy_header(1000, header, sizeof header), 128);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(file, 1, sizeof file, f), sizeof file);
    fclose(f);
    assert_memory_equal(header, file, 128);
    /* Ball numbers of the whole file in the values check of a slice. */
    s[3 * 4 + 1] = NAN;
    assert_int_equal(bcl_npy_check_finite(path, s, 10, 500, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "ball 503 has a non-finite value (nan) in component y"));
    bcl_error_clear(&e);
    assert_int_equal(bcl_npy_check_finite(path, s + 4 * 4, 10, 4, &e), BCL_OK);
}

static void test_huge_declared_shape(void **unused)
{
    (void)unused;
    /* Must fail from the file size, before any allocation of N*16 bytes; a
     * reader that trusted the header would abort or take minutes here. */
    float s[4] = {0};
    expect_dict_error(GOOD_DICT(1000000000000000), 1,
                      "shape (1000000000000000, 4) needs 1000000000000000 balls");
    char path[512];
    path_in_tmp(path, sizeof path, "huge.npy");
    /* N*16 overflows 64 bits. */
    write_npy(path, 1, 0, GOOD_DICT(18446744073709551615), s, sizeof s);
    expect_read_error(path, "data is truncated");
    write_npy(path, 1, 0, GOOD_DICT(1152921504606846976), s, sizeof s); /* 2**60 */
    expect_read_error(path, "data is truncated");
}

static void test_non_finite(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "nan.npy");
    float s[13 * 4];
    for (size_t i = 0; i < 13 * 4; i++)
        s[i] = (float)i;
    s[12 * 4 + 2] = NAN;
    s[12 * 4 + 3] = INFINITY; /* not reported: the first one is */
    write_npy(path, 1, 0, GOOD_DICT(13), s, sizeof s);
    expect_read_error(path, "ball 12 has a non-finite value (nan) in component z");

    s[12 * 4 + 2] = 0;
    s[5 * 4 + 0] = -INFINITY;
    write_npy(path, 1, 0, GOOD_DICT(13), s, sizeof s);
    expect_read_error(path, "ball 5 has a non-finite value (-inf) in component x");

    s[5 * 4 + 0] = 0;
    write_npy(path, 1, 0, GOOD_DICT(13), s, sizeof s);
    expect_read_error(path, "ball 12 has a non-finite value (inf) in component w");

    /* A NaN with a payload and the sign bit set is still a NaN. */
    uint32_t bits = 0xffc00123u;
    memcpy(&s[12 * 4 + 3], &bits, 4);
    write_npy(path, 1, 0, GOOD_DICT(13), s, sizeof s);
    expect_read_error(path, "ball 12 has a non-finite value (nan) in component w");
}

static void test_missing_file(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "no-such-file.npy");
    expect_read_error(path, "cannot open: No such file or directory");
    expect_read_error(tmpdir, "is a folder");
}

static void test_write_into_missing_folder(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "no-such-folder/out.npy");
    float s[4] = {1, 2, 3, 4};
    bcl_error e = {0};
    assert_int_equal(bcl_npy_write(path, s, 1, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "cannot write '"));
    assert_non_null(strstr(e.msg, "no-such-folder/out.npy': No such file or directory"));
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    bcl_error_clear(&e);

    /* A path naming a folder is refused, and nothing is left in it. */
    char dir[512];
    path_in_tmp(dir, sizeof dir, "sub/");
    mkdir(dir, 0755);
    assert_int_equal(bcl_write_file_atomic(dir, "x", 1, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "Is a directory"));
    bcl_error_clear(&e);
    dir[strlen(dir) - 1] = '\0';
    assert_int_equal(bcl_write_file_atomic(dir, "x", 1, &e), BCL_EXIT_INPUT);
    bcl_error_clear(&e);
    assert_int_equal(count_entries("."), 2); /* ".", ".." and "sub" remain */
    assert_int_equal(count_entries("sub"), 1);

    assert_int_equal(bcl_npy_write("x.npy", s, 0, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "no balls to write"));
    bcl_error_clear(&e);
}

static void test_write_replaces_and_relative(void **unused)
{
    (void)unused;
    /* A relative name (no '/') puts the temporary in the working folder. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    bcl_error e = {0};
    assert_int_equal(bcl_write_file_atomic("plain.bin", "old contents", 12, &e), BCL_OK);
    assert_int_equal(bcl_write_file_atomic("plain.bin", "new", 3, &e), BCL_OK);
    char buf[32] = {0};
    FILE *f = fopen("plain.bin", "rb");
    assert_non_null(f);
    assert_int_equal(fread(buf, 1, sizeof buf, f), 3);
    fclose(f);
    assert_string_equal(buf, "new");
    assert_int_equal(count_entries(".plain.bin."), 0);
    assert_int_equal(chdir(cwd), 0);
}

/* ---- failure injection -------------------------------------------------------
 *
 * BALLCL_FAULT is read once per process, at the first I/O call, so each case
 * runs in a fresh copy of this program (see child_main).
 */

static int run_child(const char *fault, const char *mode, const char *path, const char *want)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("BALLCL_FAULT", fault, 1);
        execl(self_exe, self_exe, "--child", mode, path, want, (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* In the child: does one operation and exits with its code, or with 99 when
 * it failed with a message that lacks `want`. */
static int child_main(const char *mode, const char *path, const char *want)
{
    bcl_error e = {0};
    int rc;
    if (strcmp(mode, "write") == 0) {
        float s[8] = {9, 9, 9, 9, 9, 9, 9, 9};
        rc = bcl_npy_write(path, s, 2, &e);
    } else {
        float *s = NULL;
        size_t n = 0;
        rc = bcl_npy_read(path, &s, &n, &e);
        free(s);
    }
    if (rc && !strstr(e.msg, want)) {
        fprintf(stderr, "child: \"%s\" lacks \"%s\"\n", e.msg, want);
        rc = 99;
    }
    return rc;
}

static void test_failed_write_leaves_nothing(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "ckpt.npy");
    char want[600];
    snprintf(want, sizeof want, "cannot write '%s': Input/output error", path);
    float old[4] = {1, 2, 3, 4};
    const char *faults[] = {"open:1", "write:1", "fsync:1", "rename:1", "rename:1:ENOSPC"};
    for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) {
        bcl_error e = {0};
        assert_int_equal(bcl_npy_write(path, old, 1, &e), BCL_OK);
        /* The status given in BALLCL_FAULT is what the message reports. */
        const char *w = k == 4 ? "': No space left on device" : want;
        int rc = run_child(faults[k], "write", path, w);
        if (rc != BCL_EXIT_INPUT)
            fail_msg("fault %s: child exit %d", faults[k], rc);
        /* The old checkpoint is intact and no temporary is left. */
        float *got = NULL;
        size_t n = 0;
        if (bcl_npy_read(path, &got, &n, &e) != BCL_OK)
            fail_msg("fault %s: %s", faults[k], e.msg);
        assert_int_equal(n, 1);
        assert_memory_equal(got, old, sizeof old);
        free(got);
        assert_int_equal(count_entries(".ckpt.npy."), 0);
        assert_int_equal(count_entries("."), 2);
    }
    /* A fault on a call that never comes (two write()s suffice: the header,
     * then the state as it is) is harmless. */
    assert_int_equal(run_child("write:3", "write", path, ""), BCL_OK);
    assert_int_equal(count_entries(".ckpt.npy."), 0);
}

static void test_failed_read(void **unused)
{
    (void)unused;
    char path[512];
    path_in_tmp(path, sizeof path, "in.npy");
    float s[4] = {1, 2, 3, 4};
    bcl_error e = {0};
    assert_int_equal(bcl_npy_write(path, s, 1, &e), BCL_OK);
    assert_int_equal(run_child("read:1", "read", path, "in.npy': cannot read: Input/output error"),
                     BCL_EXIT_INPUT);
    assert_int_equal(run_child("read:9", "read", path, ""), BCL_OK);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--child") == 0)
        return child_main(argv[2], argv[3], argv[4]);

    if (test_self_exe(self_exe, sizeof self_exe))
        return 1;
    unsetenv("BALLCL_FAULT");

    if (test_tmpdir(tmpdir, sizeof tmpdir, "test_npy"))
        return 1;

    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_round_trip_special_values, setup),
        cmocka_unit_test_setup(test_round_trip_sizes, setup),
        cmocka_unit_test_setup(test_writer_header_exact, setup),
        cmocka_unit_test_setup(test_reader_tolerates_layout, setup),
        cmocka_unit_test_setup(test_bad_magic, setup),
        cmocka_unit_test_setup(test_bad_version, setup),
        cmocka_unit_test_setup(test_header_longer_than_file, setup),
        cmocka_unit_test_setup(test_header_without_newline, setup),
        cmocka_unit_test_setup(test_bad_descr, setup),
        cmocka_unit_test_setup(test_fortran_order, setup),
        cmocka_unit_test_setup(test_bad_shape, setup),
        cmocka_unit_test_setup(test_missing_and_unknown_keys, setup),
        cmocka_unit_test_setup(test_data_length, setup),
        cmocka_unit_test_setup(test_slices, setup),
        cmocka_unit_test_setup(test_huge_declared_shape, setup),
        cmocka_unit_test_setup(test_non_finite, setup),
        cmocka_unit_test_setup(test_missing_file, setup),
        cmocka_unit_test_setup(test_write_into_missing_folder, setup),
        cmocka_unit_test_setup(test_write_replaces_and_relative, setup),
        cmocka_unit_test_setup(test_failed_write_leaves_nothing, setup),
        cmocka_unit_test_setup(test_failed_read, setup),
    };
    return removed_after(cmocka_run_group_tests(tests, NULL, NULL), tmpdir);
}
