/*
 * The host-memory limit (src/run/memory_fit.c): the smallest cgroup limit
 * of the process's cgroups and their ancestors, v2 and v1, read from fake
 * cgroup trees; and bcl_memory_fit counting every copy against it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ballcl/ballcl.h"
#include "run/run.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

static void put(const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tmp, rel);
    /* mkdir -p of the folders in rel */
    for (char *p = path + strlen(tmp) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static uint64_t limit(const char *proc)
{
    char p[512], fs[512];
    snprintf(p, sizeof p, "%s/%s", tmp, proc);
    snprintf(fs, sizeof fs, "%s/fs", tmp);
    return bcl_cgroup_memory_limit(p, fs);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/ballcl-test-memory.XXXXXX");
    assert_non_null(mkdtemp(tmp));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(tmp) == 0 ? 0 : -1;
}

static void test_v2(void **state)
{
    (void)state;
    /* The process's own cgroup has no limit; its parent has 1 GiB, the
     * grandparent 2 GiB: the smallest applies. */
    put("proc-v2", "0::/a/b/c\n");
    put("fs/a/memory.max", "2147483648\n");
    put("fs/a/b/memory.max", "1073741824\n");
    put("fs/a/b/c/memory.max", "max\n");
    assert_int_equal(limit("proc-v2"), 1073741824);
    /* No limit anywhere. */
    put("proc-free", "0::/free\n");
    put("fs/free/memory.max", "max\n");
    assert_int_equal(limit("proc-free"), 0);
    /* A path that the namespace hides: the ancestors that exist count. */
    put("proc-hidden", "0::/a/not-here\n");
    assert_int_equal(limit("proc-hidden"), 2147483648u);
    /* No such file at all. */
    assert_int_equal(limit("nope"), 0);
}

static void test_v1_and_hybrid(void **state)
{
    (void)state;
    put("proc-v1", "4:memory:/ctr\n3:cpu,cpuacct:/ctr\n0::/\n");
    put("fs/memory/ctr/memory.limit_in_bytes", "536870912\n");
    put("fs/memory/memory.limit_in_bytes", "9223372036854771712\n"); /* v1's "none" */
    assert_int_equal(limit("proc-v1"), 536870912);
    put("proc-v1-free", "4:memory:/other\n");
    put("fs/memory/other/memory.limit_in_bytes", "9223372036854771712\n");
    assert_int_equal(limit("proc-v1-free"), 0);
    /* v1 memory with v2 also mounted under unified: the smaller wins. */
    put("proc-hybrid", "5:cpuset,memory:/h\n0::/h\n");
    put("fs/memory/h/memory.limit_in_bytes", "3000000000\n");
    put("fs/unified/h/memory.max", "1500000000\n");
    assert_int_equal(limit("proc-hybrid"), 1500000000);
}

static void test_fit_counts_every_copy(void **state)
{
    (void)state;
    /* 1 MiB of cgroup limit: 32768 balls (512 KiB) fit once with one host
     * copy on a GPU, not with the CPU device's copy added. */
    put("proc-small", "0::/small\n");
    put("fs/small/memory.max", "1048576\n");
    char p[512], fs[512];
    snprintf(p, sizeof p, "%s/proc-small", tmp);
    snprintf(fs, sizeof fs, "%s/fs", tmp);
    setenv("BALLCL_TEST_PROC_CGROUP", p, 1);
    setenv("BALLCL_TEST_CGROUP_FS", fs, 1);
    assert_int_equal(bcl_host_memory_bytes(), 1048576);
    bcl_device_info d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "fake");
    d.global_mem = (uint64_t)1 << 30;
    d.type = BCL_DEVICE_GPU;
    bcl_error e = {0};
    assert_int_equal(bcl_memory_fit(&d, 32768, 2, "--balls", &e), BCL_OK);
    assert_int_equal(bcl_memory_fit(&d, 32768, 3, "--balls", &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "3 copies"));
    assert_non_null(strstr(e.msg, "cgroup"));
    bcl_error_clear(&e);
    d.type = BCL_DEVICE_CPU;
    assert_int_equal(bcl_memory_fit(&d, 32768, 2, "--balls", &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "3 copies")); /* the CPU device's buffer is the third */
    bcl_error_clear(&e);
    unsetenv("BALLCL_TEST_PROC_CGROUP");
    unsetenv("BALLCL_TEST_CGROUP_FS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v2),
        cmocka_unit_test(test_v1_and_hybrid),
        cmocka_unit_test(test_fit_counts_every_copy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
