/*
 * Every OpenCL call goes through these macros: they give tests a place to
 * inject a failure (bcl_fault_take) before the real call is made, so an
 * injected failure never leaks the object the call would have created.
 */
#ifndef BALLCL_CLCALL_H
#define BALLCL_CLCALL_H

#include "ocl/ocl.h"

/* For functions that return a cl_int status. */
#define BCL_CL(fn, ...) (bcl_fault_take(#fn) ?: fn(__VA_ARGS__))

/* For creators whose last argument is cl_int *errcode_ret. */
#define BCL_CL_CREATE(stp, fn, ...) ((*(stp) = bcl_fault_take(#fn)) ? NULL : fn(__VA_ARGS__, stp))

/* Sets e from a failed status: "clFoo failed on 'device': CL_BAR (hint)". */
int bcl_cl_fail(bcl_error *e, cl_int status, const char *call, const char *device);

#endif
