/*
 * Host <-> device transfer bandwidth (docs/SURVEY.md), what clpeak calls
 * "transfer bandwidth"; src/measure/timing.h says what each figure times.
 * Pageable memory (malloc) is what most programs hand the runtime: a GPU
 * driver copies it through a pinned staging buffer of its own. Pinned
 * memory (a mapped CL_MEM_ALLOC_HOST_PTR buffer) is page-locked on GPU
 * drivers, so the copy engine reads and writes it directly, the fastest
 * path OpenCL offers; mapping the device buffer itself spares a CPU device,
 * or one sharing the host's memory, any copy by the runtime. A CPU device
 * has no bus between host and device: both are memory copies.
 */
#include "measure/timing.h"
#include "models/rng.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <stdlib.h>
#include <string.h>

/* One timed transfer of bytes between host and dev; GB/s into *gb. The
 * profiling span is checked against the host's time for the transfer
 * (src/ocl/clock_check.c); on a device whose profiling failed the
 * check, the host's time is the figure. */
static int timed(bcl_context *c, bool write, cl_mem dev, void *host, size_t bytes, double *gb,
                 bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(c);
    cl_command_queue q = bcl_context_queue(c);
    cl_event ev = NULL;
    const char *call = write ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer";
    double t0 = bcl_now_ms();
    cl_int st = write ? BCL_CL(clEnqueueWriteBuffer, q, dev, CL_FALSE, 0, bytes, host, 0, NULL, &ev)
                      : BCL_CL(clEnqueueReadBuffer, q, dev, CL_FALSE, 0, bytes, host, 0, NULL, &ev);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, call, d->name);
    bcl_span_check sc = {.bytes = (double)bytes};
    bool believed;
    int rc = bcl_event_span(d, ev, t0, &sc, &believed, e);
    if (rc)
        return rc;
    double ns = believed ? (double)(sc.end_ns - sc.start_ns) : sc.host_ms * 1e6;
    *gb = ns > 0 ? (double)bytes / ns : 0; /* bytes per ns = GB/s */
    return BCL_OK;
}

/* One way of moving bytes between host and dev, timed: GB/s into *gb. */
typedef int (*move_fn)(bcl_context *c, bool write, cl_mem dev, void *host, size_t bytes, double *gb,
                       bcl_error *e);

/* One untimed move each way (first-touch of the device buffer and any lazy
 * set-up in the driver), then `repeats` of each: writes from src and reads
 * into dst alternate, so a busy moment weighs on both. Their statistics
 * into *write_gb and *read_gb. */
static int alternate(bcl_context *c, move_fn move, cl_mem dev, void *src, void *dst, size_t bytes,
                     unsigned repeats, bcl_stats *write_gb, bcl_stats *read_gb, bcl_error *e)
{
    double ignore, *w = malloc(2 * repeats * sizeof *w), *r = w + repeats;
    if (!w)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    int rc = BCL_OK;
    for (unsigned i = 0; i <= repeats && rc == BCL_OK; i++)
        if ((rc = move(c, true, dev, src, bytes, i ? &w[i - 1] : &ignore, e)) == BCL_OK)
            rc = move(c, false, dev, dst, bytes, i ? &r[i - 1] : &ignore, e);
    if (rc == BCL_OK) {
        bcl_stats_compute(w, repeats, write_gb);
        bcl_stats_compute(r, repeats, read_gb);
    }
    free(w);
    return rc;
}

int bcl_measure_transfer(bcl_context *c, size_t bytes, unsigned repeats, bool pinned,
                         bcl_stats *write_gb, bcl_stats *read_gb, bcl_error *e)
{
    const bcl_device_info *d = bcl_bandwidth_begin(c, &bytes, &repeats, write_gb, read_gb);
    cl_command_queue q = bcl_context_queue(c);
    cl_mem dev = NULL, staging = NULL;
    void *host = NULL;
    cl_int st;
    int rc = BCL_OK;
    dev = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c), CL_MEM_READ_WRITE, bytes, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clCreateBuffer", d->name);
        goto out;
    }
    if (pinned) {
        staging = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c),
                                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL);
        if (st != CL_SUCCESS) {
            rc = bcl_cl_fail(e, st, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", d->name);
            goto out;
        }
        host = BCL_CL_CREATE(&st, clEnqueueMapBuffer, q, staging, CL_TRUE,
                             CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL);
        if (st != CL_SUCCESS) {
            host = NULL;
            rc = bcl_cl_fail(e, st, "clEnqueueMapBuffer", d->name);
            goto out;
        }
    } else {
        host = malloc(bytes);
        if (!host) {
            rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu bytes", bytes);
            goto out;
        }
    }
    /* Pseudo-random bytes: a GPU that compresses would move zeros faster
     * than any real data. Writing them also touches every host page, so
     * no page fault is timed. */
    bcl_rng_fill(0x7a5f3e11u, host, bytes);
    rc = alternate(c, timed, dev, host, host, bytes, repeats, write_gb, read_gb, e);
out:
    if (pinned && host) {
        st = BCL_CL(clEnqueueUnmapMemObject, q, staging, host, 0, NULL, NULL);
        if (st == CL_SUCCESS)
            st = BCL_CL(clFinish, q);
        if (st != CL_SUCCESS && rc == BCL_OK)
            rc = bcl_cl_fail(e, st, "clEnqueueUnmapMemObject", d->name);
    } else if (!pinned) {
        free(host);
    }
    bcl_release_buffers(staging, dev);
    return rc;
}

/* One mapped transfer: map buf (blocking), memcpy between the mapping and
 * host, unmap, finish; the host clock from the map's enqueue to the end of
 * the unmap, GB/s into *gb (no profiling event spans the host's memcpy). */
static int mapped(bcl_context *c, bool write, cl_mem buf, void *host, size_t bytes, double *gb,
                  bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(c);
    cl_command_queue q = bcl_context_queue(c);
    cl_int st;
    double t0 = bcl_now_ms();
    void *p = BCL_CL_CREATE(&st, clEnqueueMapBuffer, q, buf, CL_TRUE,
                            write ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ, 0, bytes, 0, NULL,
                            NULL);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clEnqueueMapBuffer", d->name);
    if (write)
        memcpy(p, host, bytes);
    else
        memcpy(host, p, bytes);
    st = BCL_CL(clEnqueueUnmapMemObject, q, buf, p, 0, NULL, NULL);
    if (st == CL_SUCCESS)
        st = BCL_CL(clFinish, q);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clEnqueueUnmapMemObject", d->name);
    double ms = bcl_now_ms() - t0;
    *gb = ms > 0 ? (double)bytes / (ms * 1e6) : 0;
    return BCL_OK;
}

int bcl_measure_transfer_mapped(bcl_context *c, size_t bytes, unsigned repeats, bcl_stats *write_gb,
                                bcl_stats *read_gb, bcl_error *e)
{
    const bcl_device_info *d = bcl_bandwidth_begin(c, &bytes, &repeats, write_gb, read_gb);
    cl_command_queue q = bcl_context_queue(c);
    unsigned char *src = malloc(bytes), *dst = malloc(bytes);
    cl_mem buf = NULL, other = NULL;
    cl_int st;
    int rc = BCL_OK;
    if (!src || !dst) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu bytes", bytes);
        goto out;
    }
    buf = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c),
                        CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL);
    if (st == CL_SUCCESS)
        other =
            BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c), CL_MEM_READ_WRITE, bytes, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", d->name);
        goto out;
    }
    bcl_rng_fill(0x3a9f0c17u, src, bytes);
    memset(dst, 0, bytes);
    if ((rc = alternate(c, mapped, buf, src, dst, bytes, repeats, write_gb, read_gb, e)))
        goto out;
    /* Validated: what the host wrote through the mapping is in the device
     * buffer (a device-side copy to another buffer, read back) and came
     * back through the read mapping, byte for byte. */
    st = BCL_CL(clEnqueueCopyBuffer, q, buf, other, 0, 0, bytes, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clEnqueueCopyBuffer", d->name);
        goto out;
    }
    bool back_ok = memcmp(src, dst, bytes) == 0;
    memset(dst, 0, bytes);
    st = BCL_CL(clEnqueueReadBuffer, q, other, CL_TRUE, 0, bytes, dst, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clEnqueueReadBuffer", d->name);
        goto out;
    }
    if (!back_ok || memcmp(src, dst, bytes) != 0)
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "mapped transfers on '%s': the bytes %s differ from those written", d->name,
                      back_ok ? "copied on the device" : "read back through the map");
out:
    bcl_release_buffers(buf, other);
    free(src);
    free(dst);
    return rc;
}
