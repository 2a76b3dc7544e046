/*
 * Program building. bcl_program_get is the one entry point: it is where the
 * binary cache slots in, so callers never know whether a program came from
 * source or from a cached binary.
 */
#include "program.h"
#include "clcall.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double bcl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void attach_build_log(cl_program prog, const bcl_device_info *dev, bcl_error *e)
{
    size_t size = 0;
    if (BCL_CL(clGetProgramBuildInfo, prog, dev->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) !=
            CL_SUCCESS ||
        size == 0)
        return;
    char *log = malloc(size + 1);
    if (!log)
        return;
    if (BCL_CL(clGetProgramBuildInfo, prog, dev->device, CL_PROGRAM_BUILD_LOG, size, log, NULL) ==
        CL_SUCCESS) {
        log[size] = '\0';
        bcl_error_set_detail(e, log);
    }
    free(log);
}

int bcl_program_from_source(cl_context ctx, const bcl_device_info *dev, const char *src, size_t len,
                            const char *options, cl_program *out, bcl_error *e)
{
    cl_int st;
    cl_program prog = BCL_CL_CREATE(&st, clCreateProgramWithSource, ctx, 1, &src, &len);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateProgramWithSource", dev->name);
    st = BCL_CL(clBuildProgram, prog, 1, &dev->device, options, NULL, NULL);
    if (st != CL_SUCCESS) {
        int rc = bcl_cl_fail(e, st, "clBuildProgram", dev->name);
        attach_build_log(prog, dev, e);
        clReleaseProgram(prog);
        return rc;
    }
    *out = prog;
    return BCL_OK;
}

int bcl_program_get(cl_context ctx, const bcl_device_info *dev, const char *src, size_t len,
                    bool use_cache, cl_program *out, bcl_build_report *rep, bcl_error *e)
{
    memset(rep, 0, sizeof *rep);
    double t0 = bcl_now_ms();
    (void)use_cache;
    strcpy(rep->note, "built from source");
    int rc = bcl_program_from_source(ctx, dev, src, len, bcl_build_options(), out, e);
    rep->program_ms = bcl_now_ms() - t0;
    return rc;
}
