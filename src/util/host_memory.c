/*
 * How much memory this process may use on the host, and the one check of
 * host copies of a state against it: a tighter limit (a container's) is
 * learnt once for all, and refused with one message.
 */
#include "util/util.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The smallest limit in file `name` of dir and each folder above it up to
 * root (a cgroup's limit binds those below), 0 when none ("max", huge). */
static uint64_t smallest_limit(const char *root, const char *dir, const char *name)
{
    char path[PATH_MAX];
    uint64_t best = 0;
    size_t rootlen = strlen(root);
    if (snprintf(path, sizeof path, "%s%s", root, dir) >= (int)sizeof path)
        return 0;
    for (;;) {
        char file[PATH_MAX + 64];
        snprintf(file, sizeof file, "%s/%s", path, name);
        FILE *f = fopen(file, "re");
        if (f) {
            char buf[64] = "";
            if (fgets(buf, sizeof buf, f) && strncmp(buf, "max", 3) != 0) {
                char *end;
                unsigned long long v = strtoull(buf, &end, 10);
                /* cgroup v1 says "no limit" with a page-rounded LLONG_MAX. */
                if (end != buf && v > 0 && v < ((uint64_t)1 << 62) && (best == 0 || v < best))
                    best = v;
            }
            fclose(f);
        }
        char *slash = strrchr(path, '/');
        if (!slash || (size_t)(slash - path) < rootlen)
            break;
        *slash = '\0';
    }
    return best;
}

uint64_t bcl_cgroup_memory_limit(const char *proc_cgroup, const char *fs)
{
    FILE *f = fopen(proc_cgroup, "re");
    if (!f)
        return 0;
    uint64_t best = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "hierarchy:controllers:path": v2 is "0::/path", v1 names
         * "memory" among its controllers. */
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = '\0';
        *c2 = '\0';
        const char *controllers = c1 + 1, *path = c2 + 1;
        uint64_t v = 0;
        char root[PATH_MAX];
        if (strcmp(line, "0") == 0 && *controllers == '\0') {
            snprintf(root, sizeof root, "%s", fs);
            v = smallest_limit(root, path, "memory.max");
            snprintf(root, sizeof root, "%s/unified", fs);
            uint64_t u = smallest_limit(root, path, "memory.max");
            if (u && (!v || u < v))
                v = u;
        } else {
            bool memory = false;
            for (char *t = strtok((char *)controllers, ","); t; t = strtok(NULL, ","))
                memory = memory || strcmp(t, "memory") == 0;
            if (!memory)
                continue;
            snprintf(root, sizeof root, "%s/memory", fs);
            v = smallest_limit(root, path, "memory.limit_in_bytes");
        }
        if (v && (!best || v < best))
            best = v;
    }
    fclose(f);
    return best;
}

uint64_t bcl_host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    /* A container's limit kills long before the machine runs out. The paths
     * can be moved for tests. */
    const char *proc = getenv("BALLCL_TEST_PROC_CGROUP");
    const char *fs = getenv("BALLCL_TEST_CGROUP_FS");
    uint64_t cg = bcl_cgroup_memory_limit(proc && *proc ? proc : "/proc/self/cgroup",
                                          fs && *fs ? fs : "/sys/fs/cgroup");
    return cg && (!phys || cg < phys) ? cg : phys;
}

/* A ball is four float32 (x, y, vx, vy). */
#define BALL_BYTES (4 * sizeof(float))

int bcl_host_memory_fit(uint64_t n, unsigned copies, const char *what, bcl_error *e)
{
    double bytes = (double)n * BALL_BYTES * copies, host = (double)bcl_host_memory_bytes();
    if (n <= SIZE_MAX / BALL_BYTES / (copies ? copies : 1) && (host <= 0 || bytes <= host))
        return BCL_OK;
    return bcl_fail(e, BCL_EXIT_INPUT,
                    "%s: %llu balls need %.1f MiB of host memory (%u %s of the state), more than "
                    "the %.1f MiB this process may use (the machine's memory or its cgroup limit)",
                    what, (unsigned long long)n, bytes / 1048576.0, copies,
                    copies == 1 ? "copy" : "copies", host / 1048576.0);
}
