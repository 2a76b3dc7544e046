/*
 * Fault injection for tests. BALLCL_FAULT="name:n[:STATUS]" makes the n-th
 * call (counting from 1) of the named OpenCL or I/O function fail as if it
 * had returned STATUS. Every OpenCL call in the library goes through the
 * BCL_CL / BCL_CL_CREATE macros (src/clcall.h), and every file write through
 * the atomic writer, so a test can walk n upward through a whole run and see
 * each failure handled. Without the variable this costs one branch per call.
 */
#include "ballcl/ballcl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int parsed;
    char name[64];
    unsigned long nth;
    int status;
    unsigned long seen;
} fault;

static void parse_spec(void)
{
    fault.parsed = 1;
    const char *spec = getenv("BALLCL_FAULT");
    if (!spec || !*spec)
        return;
    const char *colon = strchr(spec, ':');
    if (!colon || (size_t)(colon - spec) >= sizeof fault.name)
        return;
    memcpy(fault.name, spec, (size_t)(colon - spec));
    fault.name[colon - spec] = '\0';
    char *end;
    fault.nth = strtoul(colon + 1, &end, 10);
    bool is_cl = strncmp(fault.name, "cl", 2) == 0;
    fault.status = is_cl ? CL_OUT_OF_RESOURCES : EIO;
    if (*end == ':') {
        cl_int st;
        if (bcl_cl_status_parse(end + 1, &st))
            fault.status = st;
        else if (strcmp(end + 1, "ENOSPC") == 0)
            fault.status = ENOSPC;
        else if (strcmp(end + 1, "EACCES") == 0)
            fault.status = EACCES;
        else
            fault.status = atoi(end + 1);
    }
}

int bcl_fault_take(const char *name)
{
    if (!fault.parsed)
        parse_spec();
    if (!fault.name[0] || strcmp(name, fault.name) != 0)
        return 0;
    return ++fault.seen == fault.nth ? fault.status : 0;
}
