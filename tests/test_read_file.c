/*
 * Unit tests of the one whole-file reader (src/util/read_file.c): what it
 * refuses before reading (folders, pipes, files above the bound), what it
 * gives back (every byte and a NUL after them), and that it never blocks on
 * a FIFO without a writer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/util.h"
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/ballcl-read-file.XXXXXX";

static void path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static void write_bytes(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_reads_every_byte(void **state)
{
    (void)state;
    char path[256];
    path_of(path, sizeof path, "ok");
    const char data[] = "abc\0def";
    write_bytes(path, data, sizeof data - 1);
    char *buf;
    size_t len;
    bool opened;
    assert_int_equal(bcl_read_file(path, 100, &buf, &len, &opened), 0);
    assert_true(opened);
    assert_int_equal(len, sizeof data - 1);
    assert_memory_equal(buf, data, len);
    assert_int_equal(buf[len], '\0');
    free(buf);
    /* Exactly at the bound is allowed, one byte above is not. */
    assert_int_equal(bcl_read_file(path, len, &buf, &len, NULL), 0);
    free(buf);
    assert_int_equal(bcl_read_file(path, sizeof data - 2, &buf, &len, NULL), EFBIG);
    assert_null(buf);
}

static void test_empty_file(void **state)
{
    (void)state;
    char path[256];
    path_of(path, sizeof path, "empty");
    write_bytes(path, "", 0);
    char *buf;
    size_t len = 1;
    assert_int_equal(bcl_read_file(path, 0, &buf, &len, NULL), 0);
    assert_int_equal(len, 0);
    assert_int_equal(buf[0], '\0');
    free(buf);
}

static void test_refuses_what_is_not_a_regular_file(void **state)
{
    (void)state;
    char *buf;
    size_t len;
    bool opened = true;
    char path[256];
    path_of(path, sizeof path, "missing");
    assert_int_equal(bcl_read_file(path, 100, &buf, &len, &opened), ENOENT);
    assert_false(opened);
    assert_int_equal(bcl_read_file(dir, 100, &buf, &len, &opened), EISDIR);
    assert_true(opened);
    /* A FIFO without a writer: refused at once, never waited on. */
    path_of(path, sizeof path, "fifo");
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(bcl_read_file(path, 100, &buf, &len, NULL), BCL_READ_NOT_REGULAR);
    assert_string_equal(bcl_read_error(BCL_READ_NOT_REGULAR), "not a regular file");
    assert_int_equal(bcl_read_file("/dev/null", 100, &buf, &len, NULL), BCL_READ_NOT_REGULAR);
    assert_null(buf);
}

/* /proc files report size 0: read to their end, and still bounded. */
static void test_size_unknown_to_the_kernel(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(bcl_read_file("/proc/self/status", 1 << 20, &buf, &len, NULL), 0);
    assert_true(len > 0);
    assert_int_equal(strncmp(buf, "Name:", 5), 0);
    assert_int_equal(buf[len], '\0');
    free(buf);
    assert_int_equal(bcl_read_file("/proc/self/status", 10, &buf, &len, NULL), EFBIG);
    assert_null(buf);
}

static void test_fault_point(void **state)
{
    (void)state;
    char path[256];
    path_of(path, sizeof path, "faulted");
    write_bytes(path, "x", 1);
    /* main set BALLCL_FAULT=read:1 and runs this test first: the first
     * read of the process fails, the next one does not. */
    char *buf;
    size_t len;
    bool opened;
    assert_int_equal(bcl_read_file(path, 100, &buf, &len, &opened), EIO);
    assert_true(opened);
    assert_null(buf);
    assert_int_equal(bcl_read_file(path, 100, &buf, &len, NULL), 0);
    free(buf);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    /* Read once, at the first fault point of the process. */
    setenv("BALLCL_FAULT", "read:1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_point),
        cmocka_unit_test(test_reads_every_byte),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_size_unknown_to_the_kernel),
        cmocka_unit_test(test_refuses_what_is_not_a_regular_file),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (remove_tree(dir))
        rc = 1;
    return rc;
}
