/*
 * `count` launches of one kernel queued back to back, and the time they
 * took: the profiling clock's span from the first launch's start to the
 * last one's end once bcl_profiling_check believes it, the host's
 * otherwise. The add-rate bound, the survey's peaks and the read-only
 * bandwidth all time their kernels this way; the chain kernels of the first
 * two (cl/addrate.cl, cl/peak.cl) also share their shape, build and
 * calibration here.
 */
#include "measure/timing.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <stdio.h>
#include <stdlib.h>

#define CPU_ITEMS_PER 16 /* work-items (= work-groups) per compute unit on a CPU */
#define GPU_ITEMS_PER 2048
#define GPU_LOCAL     256
#define MAX_W         16 /* widest vector OpenCL has */
/* Mesa's llvmpipe (rusticl) ends any loop after 65535 trips (gallivm's
 * guard against shaders that never end), so a launch of more iterations
 * would silently do fewer operations; more work comes from more launches. */
#define MAX_ITERS 65535u

int bcl_launch_span(const bcl_device_info *d, cl_command_queue q, cl_kernel k, size_t global,
                    size_t local, unsigned count, double t0, bcl_span_check *span, double *ms,
                    bcl_error *e)
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
    span->host_ms = bcl_now_ms() - t0;
    span->start_ns = span->end_ns = 0;
    if (st == CL_SUCCESS) {
        call = "clGetEventProfilingInfo";
        st = BCL_CL(clGetEventProfilingInfo, first, CL_PROFILING_COMMAND_START,
                    sizeof span->start_ns, &span->start_ns, NULL);
    }
    if (st == CL_SUCCESS)
        st = BCL_CL(clGetEventProfilingInfo, last, CL_PROFILING_COMMAND_END, sizeof span->end_ns,
                    &span->end_ns, NULL);
    if (st != CL_SUCCESS)
        BCL_CL(clFinish, q);
    if (last && last != first)
        clReleaseEvent(last);
    if (first)
        clReleaseEvent(first);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, call, d->name);
    span->launches = count;
    span->compute_units = d->compute_units;
    span->clock_mhz = d->clock_mhz;
    *ms = bcl_profiling_check(d->device, span) ? (double)(span->end_ns - span->start_ns) / 1e6
                                               : span->host_ms;
    return BCL_OK;
}

int bcl_event_span(const bcl_device_info *d, cl_event ev, double t0, bcl_span_check *span,
                   bool *believed, bcl_error *e)
{
    const char *call = "clWaitForEvents";
    cl_int st = BCL_CL(clWaitForEvents, 1, &ev);
    span->host_ms = bcl_now_ms() - t0;
    span->start_ns = span->end_ns = 0;
    if (st == CL_SUCCESS) {
        call = "clGetEventProfilingInfo";
        st = BCL_CL(clGetEventProfilingInfo, ev, CL_PROFILING_COMMAND_START, sizeof span->start_ns,
                    &span->start_ns, NULL);
    }
    if (st == CL_SUCCESS)
        st = BCL_CL(clGetEventProfilingInfo, ev, CL_PROFILING_COMMAND_END, sizeof span->end_ns,
                    &span->end_ns, NULL);
    clReleaseEvent(ev);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, call, d->name);
    span->launches = 1;
    span->compute_units = d->compute_units;
    span->clock_mhz = d->clock_mhz;
    *believed = bcl_profiling_check(d->device, span);
    return BCL_OK;
}

unsigned bcl_chain_width(unsigned w)
{
    /* OpenCL's vector widths are 2, 3, 4, 8, 16; a driver that says 0
     * (query failed) or something odd gets the widest power of two below. */
    unsigned p = 1;
    while (p * 2 <= w && p * 2 <= MAX_W)
        p *= 2;
    return p;
}

int bcl_chain_build(bcl_context *c, const char *file, const char *defines, cl_program *prog,
                    bcl_error *e)
{
    char *src = NULL;
    size_t len = 0;
    int rc = bcl_kernel_source(file, &src, &len, e);
    if (rc)
        return rc;
    char opts[320];
    snprintf(opts, sizeof opts, "%s %s", bcl_build_options(), defines);
    rc = bcl_program_from_source(bcl_context_cl(c), bcl_context_device(c), src, len, opts, prog, e);
    free(src);
    return rc;
}

int bcl_chain_shape(const bcl_device_info *d, cl_program prog, const char *kernel,
                    bcl_chain_size *sh, bcl_error *e)
{
    size_t *global = &sh->global, *local = &sh->local;
    unsigned cu = d->compute_units ? d->compute_units : 1;
    if (d->type & BCL_DEVICE_CPU) {
        *local = 1;
        if (kernel) {
            cl_int st;
            cl_kernel k = BCL_CL_CREATE(&st, clCreateKernel, prog, kernel);
            if (st != CL_SUCCESS)
                return bcl_cl_fail(e, st, "clCreateKernel", d->name);
            size_t pref = 1, lim = 1;
            st = BCL_CL(clGetKernelWorkGroupInfo, k, d->device,
                        CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof pref, &pref, NULL);
            if (st == CL_SUCCESS)
                st = BCL_CL(clGetKernelWorkGroupInfo, k, d->device, CL_KERNEL_WORK_GROUP_SIZE,
                            sizeof lim, &lim, NULL);
            clReleaseKernel(k);
            if (st != CL_SUCCESS)
                return bcl_cl_fail(e, st, "clGetKernelWorkGroupInfo", d->name);
            *local = pref > 1 && pref <= lim ? pref : 1;
        }
        *global = (size_t)cu * CPU_ITEMS_PER * *local;
        return BCL_OK;
    }
    size_t lim = d->max_work_group ? d->max_work_group : 1;
    if (d->max_item_sizes[0] && d->max_item_sizes[0] < lim)
        lim = d->max_item_sizes[0];
    *local = lim < GPU_LOCAL ? lim : GPU_LOCAL;
    *global = bcl_round_up((size_t)cu * GPU_ITEMS_PER, *local);
    return BCL_OK;
}

int bcl_chain_input(bcl_context *c, const void *host, size_t size, cl_mem *mem, bcl_error *e)
{
    cl_int st;
    *mem = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c),
                         CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, size, (void *)host);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateBuffer", bcl_context_device(c)->name);
    return BCL_OK;
}

int bcl_chain_kernel(bcl_context *c, cl_program prog, const char *name, cl_mem start,
                     size_t arg1_size, const void *arg1, size_t out_bytes, cl_kernel *k,
                     cl_mem *out, bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(c);
    cl_int st;
    *k = BCL_CL_CREATE(&st, clCreateKernel, prog, name);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateKernel", d->name);
    *out =
        BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c), CL_MEM_WRITE_ONLY, out_bytes, NULL);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateBuffer", d->name);
    st = BCL_CL(clSetKernelArg, *k, 0, sizeof start, &start);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, *k, 1, arg1_size, arg1);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, *k, 3, sizeof *out, out);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clSetKernelArg", d->name);
    return BCL_OK;
}

int bcl_chain_launch(bcl_context *c, cl_kernel k, const bcl_chain_size *sh, unsigned iters,
                     unsigned count, double flops, double *ms, bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(c);
    double t0 = bcl_now_ms();
    cl_int st = BCL_CL(clSetKernelArg, k, 2, sizeof iters, &iters);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clSetKernelArg", d->name);
    /* Believed only after the check (src/ocl/clock_check.c); a device
     * whose clock fails it is timed by the host, like every other figure. */
    bcl_span_check span = {.flops = flops * count,
                           .cpu_vector_width =
                               (d->type & BCL_DEVICE_CPU) ? d->native_vector_width_float : 0};
    return bcl_launch_span(d, bcl_context_queue(c), k, sh->global, sh->local, count, t0, &span, ms,
                           e);
}

/* Iterations for a launch of about target ms, from one that took ms. */
static unsigned scale_iters(unsigned iters, double ms, double target)
{
    double want = ms > 1e-3 ? (double)iters * target / ms : (double)iters * 1000;
    if (want > MAX_ITERS)
        want = MAX_ITERS;
    if (want < 1)
        want = 1;
    return (unsigned)want;
}

int bcl_chain_calibrate(bcl_context *c, cl_kernel k, const bcl_chain_size *sh,
                        double flops_per_iter, double target, unsigned *iters, bcl_error *e)
{
    unsigned it = 16;
    double ms = 0;
    int rc = bcl_chain_launch(c, k, sh, it, 1, flops_per_iter * it, &ms, e);
    if (rc == BCL_OK) {
        it = scale_iters(it, ms, target / 10);
        rc = bcl_chain_launch(c, k, sh, it, 1, flops_per_iter * it, &ms, e);
    }
    if (rc == BCL_OK) {
        it = scale_iters(it, ms, target);
        rc = bcl_chain_launch(c, k, sh, it, 1, flops_per_iter * it, &ms, e);
    }
    *iters = it;
    return rc;
}
