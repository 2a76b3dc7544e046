/*
 * Fault injection for tests. BALLCL_FAULT="name:n[:STATUS]" fails the n-th
 * call (from 1) of the named OpenCL or I/O function as if it returned
 * STATUS (default CL_OUT_OF_RESOURCES or EIO), or with "crash" kills the
 * process there. Every OpenCL call goes through BCL_CL (src/ocl/clcall.h)
 * and every file write through the atomic writer, so a test can walk n up
 * through a whole run. "@D" counts only the calls made for device D (its
 * position in the -d list) whatever the others do meanwhile.
 *
 * BALLCL_FAULT_TRACE=1 prints "ballcl: fault point NAME" at every such call,
 * so a test learns a run's sequence (tests/test_fault_walk.py). Both are test
 * hooks: the one place where the library writes to stderr.
 */
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The STATUS "crash": the process is killed at that call. */
#define FAULT_CRASH INT_MIN

static struct {
    bool trace;
    char name[64];
    unsigned long nth;
    int status;
    int device;         /* -1: any thread */
    unsigned long seen; /* atomic: devices call from their own threads */
} fault = {.device = -1};

static pthread_once_t parse_once = PTHREAD_ONCE_INIT;
static _Thread_local int this_device = -1;

void bcl_fault_device(int index)
{
    this_device = index;
}

/* A spec that does not parse would pass a fault test without a fault. */
static void bad_spec(const char *spec, const char *why)
{
    fprintf(stderr, "ballcl: BALLCL_FAULT='%s': %s: expected name:n[:STATUS][@DEVICE]\n", spec,
            why);
    abort();
}

static void parse_spec(void)
{
    const char *trace = getenv("BALLCL_FAULT_TRACE");
    fault.trace = trace && *trace && strcmp(trace, "0") != 0;
    const char *full = getenv("BALLCL_FAULT");
    if (!full || !*full)
        return;
    char spec[256];
    if (strlen(full) >= sizeof spec)
        bad_spec(full, "too long");
    strcpy(spec, full);
    char *at = strchr(spec, '@');
    if (at) {
        char *end;
        *at = '\0';
        long d = strtol(at + 1, &end, 10);
        if (end == at + 1 || *end != '\0' || d < 0 || d >= BCL_MAX_DEVICES)
            bad_spec(full, "@DEVICE must be a device's position in the list, from 0");
        fault.device = (int)d;
    }
    const char *colon = strchr(spec, ':');
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof fault.name)
        bad_spec(full, "no function name");
    memcpy(fault.name, spec, (size_t)(colon - spec));
    fault.name[colon - spec] = '\0';
    char *end;
    fault.nth = strtoul(colon + 1, &end, 10);
    /* strtoul takes "-1" (as ULONG_MAX) and " 1": a call number is digits. */
    if (colon[1] < '0' || colon[1] > '9' || fault.nth == 0 || (*end != '\0' && *end != ':'))
        bad_spec(full, "n must be a call number from 1");
    fault.status = EIO;
    if (strncmp(fault.name, "cl", 2) == 0)
        bcl_cl_status_parse("CL_OUT_OF_RESOURCES", &fault.status);
    if (*end == ':') {
        static const struct {
            const char *name;
            int value;
        } errnos[] = {{"EIO", EIO},     {"ENOSPC", ENOSPC}, {"EACCES", EACCES},
                      {"EROFS", EROFS}, {"EDQUOT", EDQUOT}, {"ENOMEM", ENOMEM}};
        const char *s = end + 1;
        bool known = strcmp(s, "crash") == 0;
        if (known)
            fault.status = FAULT_CRASH;
        else
            known = bcl_cl_status_parse(s, &fault.status); /* writes only what it knows */
        for (size_t i = 0; !known && i < sizeof errnos / sizeof errnos[0]; i++) {
            if (strcmp(s, errnos[i].name) == 0) {
                fault.status = errnos[i].value;
                known = true;
            }
        }
        if (!known) {
            long v = strtol(s, &end, 10);
            if (end == s || *end != '\0' || v == 0)
                bad_spec(full, "unknown STATUS (a CL_ name, an errno name or a non-zero number)");
            fault.status = (int)v;
        }
    }
}

void bcl_fault_devices(size_t count)
{
    pthread_once(&parse_once, parse_spec);
    if (fault.device < 0 || (size_t)fault.device < count)
        return;
    fprintf(stderr,
            "ballcl: BALLCL_FAULT='%s': device %d does not exist: the run has %zu device%s "
            "(@0 to @%zu)\n",
            getenv("BALLCL_FAULT"), fault.device, count, count == 1 ? "" : "s", count - 1);
    abort();
}

int bcl_fault_take(const char *name)
{
    pthread_once(&parse_once, parse_spec);
    if (fault.trace)
        fprintf(stderr, "ballcl: fault point %s\n", name);
    if (!fault.name[0] || strcmp(name, fault.name) != 0)
        return 0;
    if (fault.device >= 0 && this_device != fault.device)
        return 0;
    if (__atomic_add_fetch(&fault.seen, 1, __ATOMIC_RELAXED) != fault.nth)
        return 0;
    /* A driver's crash, as the cache's in-use marker must survive it:
     * SIGKILL, so no handler or sanitizer blurs it. */
    if (fault.status == FAULT_CRASH)
        raise(SIGKILL);
    return fault.status;
}
