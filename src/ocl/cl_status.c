/*
 * A failed OpenCL call as an error: "clFoo failed on 'dev': CL_BAR (hint)",
 * with the names and hints of src/util/status_names.c.
 */
#include "ocl/ocl.h"
#include "ocl/clcall.h"

int bcl_cl_fail(bcl_error *e, cl_int status, const char *call, const char *device)
{
    bool first = e && e->code == 0;
    int rc = bcl_fail(e, BCL_EXIT_RUNTIME, "%s failed%s%s%s: %s", call, device ? " on '" : "",
                      device ? device : "", device ? "'" : "", bcl_cl_status_text(status));
    /* The function alone ("clGetDeviceInfo", not the query in brackets):
     * what a program that catches the error compares with. */
    if (first)
        bcl_error_set_cl(e, call, bcl_cl_status_name(status));
    return rc;
}
