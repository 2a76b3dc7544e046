/*
 * Finding and reading kernel sources (docs/DESIGN.md): BALLCL_KERNEL_DIR if set
 * (and then only there, so a wrong setting is an error, not a silent
 * fallback), else cl/ beside the executable's folder (the build tree), else
 * the installed data folder.
 */
#include "ocl/ocl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef BALLCL_DATADIR
#define BALLCL_DATADIR "/usr/local/share/ballcl"
#endif

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int bcl_kernel_dir(char *out, size_t size, bcl_error *e)
{
    const char *env = getenv("BALLCL_KERNEL_DIR");
    if (env && *env) {
        if (!is_dir(env))
            return bcl_fail(e, BCL_EXIT_INPUT, "BALLCL_KERNEL_DIR '%s' is not a folder", env);
        snprintf(out, size, "%s", env);
        return BCL_OK;
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
            if (is_dir(cand)) {
                snprintf(out, size, "%s", cand);
                return BCL_OK;
            }
        }
    }
    if (is_dir(BALLCL_DATADIR "/cl")) {
        snprintf(out, size, "%s", BALLCL_DATADIR "/cl");
        return BCL_OK;
    }
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
    FILE *f = fopen(path, "rb");
    if (!f)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read kernel '%s': %s", path, strerror(errno));
    char *buf = NULL;
    size_t used = 0, cap = 0;
    for (;;) {
        if (used + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 16384;
            char *grown = realloc(buf, cap);
            if (!grown) {
                free(buf);
                fclose(f);
                return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory reading '%s'", path);
            }
            buf = grown;
        }
        errno = 0;
        size_t got = fread(buf + used, 1, cap - used - 1, f);
        used += got;
        if (got == 0)
            break;
    }
    /* fopen succeeds on a folder; the read then fails with EISDIR. */
    int bad = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (bad) {
        free(buf);
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read kernel '%s': %s", path, strerror(bad));
    }
    if (used == 0) {
        free(buf);
        return bcl_fail(e, BCL_EXIT_INPUT, "kernel '%s' is empty", path);
    }
    buf[used] = '\0';
    *text = buf;
    *len = used;
    return BCL_OK;
}

const char *bcl_build_options(void)
{
    /* Explicit and minimal: OpenCL C 1.2 (every driver of interest has it),
     * no -cl-fast-relaxed-math, no -cl-mad-enable, denormals kept. The sources
     * also say FP_CONTRACT OFF. */
    return "-cl-std=CL1.2";
}
