/*
 * Host <-> device transfer bandwidth (docs/SURVEY.md), clpeak's "transfer
 * bandwidth". Pageable memory (malloc) is what most programs hand the runtime: a GPU
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

int bcl_measure_transfer(bcl_context *c, size_t bytes, unsigned repeats, bcl_transfer_way way,
                         bcl_stats *write_gb, bcl_stats *read_gb, bcl_error *e)
{
    const bcl_device_info *d = bcl_bandwidth_begin(c, &bytes, &repeats, write_gb, read_gb);
    cl_command_queue q = bcl_context_queue(c);
    bool pinned = way == BCL_TRANSFER_PINNED, by_map = way == BCL_TRANSFER_MAPPED;
    const char *alloc_host = "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)";
    /* other: pinned, the mapped buffer that is the host memory; mapped, the
     * target of a device-side copy that checks the bytes */
    cl_mem dev = NULL, other = NULL;
    unsigned char *host = NULL, *back = NULL;
    cl_int st;
    int rc = BCL_OK;
    dev = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c),
                        CL_MEM_READ_WRITE | (by_map ? CL_MEM_ALLOC_HOST_PTR : 0), bytes, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, by_map ? alloc_host : "clCreateBuffer", d->name);
        goto out;
    }
    if (pinned || by_map) {
        other =
            BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c),
                          CL_MEM_READ_WRITE | (pinned ? CL_MEM_ALLOC_HOST_PTR : 0), bytes, NULL);
        if (st != CL_SUCCESS) {
            rc = bcl_cl_fail(e, st, alloc_host, d->name);
            goto out;
        }
    }
    if (pinned) {
        host = BCL_CL_CREATE(&st, clEnqueueMapBuffer, q, other, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                             0, bytes, 0, NULL, NULL);
        if (st != CL_SUCCESS) {
            host = NULL;
            rc = bcl_cl_fail(e, st, "clEnqueueMapBuffer", d->name);
            goto out;
        }
    } else if (!(host = malloc(bytes)) || (by_map && !(back = calloc(1, bytes)))) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu bytes", bytes);
        goto out;
    }
    /* Pseudo-random bytes: a GPU that compresses would move zeros faster
     * than any real data. Writing them also touches every host page, so
     * no page fault is timed. */
    bcl_rng_fill(by_map ? 0x3a9f0c17u : 0x7a5f3e11u, host, bytes);
    rc = alternate(c, by_map ? mapped : timed, dev, host, by_map ? back : host, bytes, repeats,
                   write_gb, read_gb, e);
    if (rc || !by_map)
        goto out;
    /* Validated: what the host wrote through the mapping is in the device
     * buffer (a device-side copy to another buffer, read back) and came
     * back through the read mapping, byte for byte. */
    st = BCL_CL(clEnqueueCopyBuffer, q, dev, other, 0, 0, bytes, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clEnqueueCopyBuffer", d->name);
        goto out;
    }
    bool back_ok = memcmp(host, back, bytes) == 0;
    memset(back, 0, bytes);
    st = BCL_CL(clEnqueueReadBuffer, q, other, CL_TRUE, 0, bytes, back, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clEnqueueReadBuffer", d->name);
        goto out;
    }
    if (!back_ok || memcmp(host, back, bytes) != 0)
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "mapped transfers on '%s': the bytes %s differ from those written", d->name,
                      back_ok ? "copied on the device" : "read back through the map");
out:
    if (pinned && host) {
        st = BCL_CL(clEnqueueUnmapMemObject, q, other, host, 0, NULL, NULL);
        if (st == CL_SUCCESS)
            st = BCL_CL(clFinish, q);
        if (st != CL_SUCCESS && rc == BCL_OK)
            rc = bcl_cl_fail(e, st, "clEnqueueUnmapMemObject", d->name);
    } else if (!pinned) {
        free(host);
    }
    free(back);
    bcl_release_buffers(other, dev);
    return rc;
}
