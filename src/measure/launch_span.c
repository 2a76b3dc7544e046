/*
 * `count` launches of one kernel queued back to back, and the span they
 * took: the host's time, and the profiling clock's from the first launch's
 * start to the last one's end (to be believed only after
 * bcl_profiling_check). The add-rate bound, the survey's peaks and the
 * read-only bandwidth all time their kernels this way.
 */
#include "measure/timing.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

int bcl_launch_span(const bcl_device_info *d, cl_command_queue q, cl_kernel k, size_t global,
                    size_t local, unsigned count, double t0, bcl_launch_times *out, bcl_error *e)
{
    cl_int st = CL_SUCCESS;
    cl_event first = NULL, last = NULL;
    /* Events on the first and the last launch only: per launch, an enqueue
     * (docs/PERFORMANCE.md, "The host's cost per launch"). */
    for (unsigned i = 0; i < count && st == CL_SUCCESS; i++) {
        cl_event *ev = i == 0 ? &first : i + 1 == count ? &last : NULL;
        st = BCL_CL(clEnqueueNDRangeKernel, q, k, 1, NULL, &global, &local, 0, NULL, ev);
    }
    if (!last)
        last = first;
    const char *call = "clEnqueueNDRangeKernel";
    if (st == CL_SUCCESS) {
        call = "clWaitForEvents";
        st = BCL_CL(clWaitForEvents, 1, &last);
    }
    out->host_ms = bcl_now_ms() - t0;
    out->start_ns = out->end_ns = 0;
    if (st == CL_SUCCESS) {
        call = "clGetEventProfilingInfo";
        st = BCL_CL(clGetEventProfilingInfo, first, CL_PROFILING_COMMAND_START,
                    sizeof out->start_ns, &out->start_ns, NULL);
    }
    if (st == CL_SUCCESS)
        st = BCL_CL(clGetEventProfilingInfo, last, CL_PROFILING_COMMAND_END, sizeof out->end_ns,
                    &out->end_ns, NULL);
    if (st != CL_SUCCESS)
        BCL_CL(clFinish, q);
    if (last && last != first)
        clReleaseEvent(last);
    if (first)
        clReleaseEvent(first);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, call, d->name);
    return BCL_OK;
}

int bcl_launch_span_iters(const bcl_device_info *d, cl_command_queue q, cl_kernel k,
                          cl_uint iters_arg, unsigned iters, size_t global, size_t local,
                          unsigned count, bcl_launch_times *out, bcl_error *e)
{
    double t0 = bcl_now_ms();
    cl_int st = BCL_CL(clSetKernelArg, k, iters_arg, sizeof iters, &iters);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clSetKernelArg", d->name);
    return bcl_launch_span(d, q, k, global, local, count, t0, out, e);
}
