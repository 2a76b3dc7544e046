/*
 * Kernel sources (docs/DESIGN.md): from BALLCL_KERNEL_DIR if set (only
 * there: a wrong setting is an error), else cl/ beside the file holding
 * this code (the Python extension carries its kernels), else cl/ beside
 * the executable's folder (the build tree), else the installed data folder.
 */
#define _GNU_SOURCE /* dladdr */
#include "ocl/ocl.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Our kernels are a few KiB: a larger file is not one of them. */
#define MAX_KERNEL_BYTES ((uint64_t)1 << 20)

#ifndef BALLCL_DATADIR
#define BALLCL_DATADIR "/usr/local/share/ballcl"
#endif

/* Takes path as the kernel folder if it is a folder. */
static bool use_dir(char *out, size_t size, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    snprintf(out, size, "%s", path);
    return true;
}

int bcl_kernel_dir(char *out, size_t size, bcl_error *e)
{
    const char *env = getenv("BALLCL_KERNEL_DIR");
    if (env && *env)
        return use_dir(out, size, env)
                   ? BCL_OK
                   : bcl_fail(e, BCL_EXIT_INPUT, "BALLCL_KERNEL_DIR '%s' is not a folder", env);
    /* A folder named cl beside this code's file counts only when it holds
     * our kernels (seed.cl): /usr/lib/cl could be anyone's. */
    Dl_info self;
    const char *sep;
    if (dladdr((void *)bcl_kernel_dir, &self) && self.dli_fname &&
        (sep = strrchr(self.dli_fname, '/'))) {
        char cand[PATH_MAX + 16];
        snprintf(cand, sizeof cand, "%.*s/cl/seed.cl", (int)(sep - self.dli_fname), self.dli_fname);
        if (access(cand, R_OK) == 0) {
            cand[strlen(cand) - strlen("/seed.cl")] = '\0';
            snprintf(out, size, "%s", cand);
            return BCL_OK;
        }
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char cand[PATH_MAX + 8];
            snprintf(cand, sizeof cand, "%s/../cl", exe);
            if (use_dir(out, size, cand))
                return BCL_OK;
        }
    }
    if (use_dir(out, size, BALLCL_DATADIR "/cl"))
        return BCL_OK;
    return bcl_fail(e, BCL_EXIT_INPUT,
                    "cannot find the kernel folder: looked beside the executable and in '%s'; "
                    "set BALLCL_KERNEL_DIR",
                    BALLCL_DATADIR "/cl");
}

int bcl_kernel_source(const char *file, char **text, size_t *len, bcl_error *e)
{
    char dir[PATH_MAX];
    int rc = bcl_kernel_dir(dir, sizeof dir, e);
    if (rc)
        return rc;
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *buf;
    size_t used;
    int err = bcl_read_file(path, MAX_KERNEL_BYTES, &buf, &used, NULL);
    if (err == ENOMEM)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory reading '%s'", path);
    if (err)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read kernel '%s': %s", path,
                        bcl_read_error(err));
    if (used == 0) {
        free(buf);
        return bcl_fail(e, BCL_EXIT_INPUT, "kernel '%s' is empty", path);
    }
    *text = buf;
    *len = used;
    return BCL_OK;
}

const char *bcl_build_options(void)
{
    /* OpenCL C 1.2, no fast math, no mad, denormals kept (and FP_CONTRACT
     * OFF in the sources). */
    return "-cl-std=CL1.2";
}
