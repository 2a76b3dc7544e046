/*
 * Host memory for reading a simulation back (ballcl/ballcl.h): a
 * CL_MEM_ALLOC_HOST_PTR buffer mapped once, as the survey's "pinned"
 * transfers use. A GPU driver page-locks it, so a read into it is one DMA
 * copy at the bus's speed; memory from malloc goes through the driver's
 * staging buffers at a fraction of that.
 *
 * The buffer retains its queue (and so the OpenCL context): it may outlive
 * the bcl_context, as the NumPy arrays the Python module hands it to do.
 */
#include "ocl/clcall.h"
#include "ocl/ocl.h"

#include <stdlib.h>

struct bcl_host_buffer {
    cl_command_queue q;
    cl_mem mem;
    void *data;
    size_t bytes;
};

int bcl_host_buffer_create(bcl_context *c, size_t bytes, bcl_host_buffer **out, bcl_error *e)
{
    *out = NULL;
    const bcl_device_info *d = bcl_context_device(c);
    if (bytes == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "a host buffer of no bytes");
    bcl_host_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    cl_int st;
    b->mem = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c),
                           CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL);
    if (st != CL_SUCCESS) {
        free(b);
        return bcl_cl_fail(e, st, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", d->name);
    }
    b->q = bcl_context_queue(c);
    b->data = BCL_CL_CREATE(&st, clEnqueueMapBuffer, b->q, b->mem, CL_TRUE,
                            CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        clReleaseMemObject(b->mem);
        free(b);
        return bcl_cl_fail(e, st, "clEnqueueMapBuffer", d->name);
    }
    clRetainCommandQueue(b->q);
    b->bytes = bytes;
    *out = b;
    return BCL_OK;
}

void *bcl_host_buffer_data(const bcl_host_buffer *b)
{
    return b->data;
}

size_t bcl_host_buffer_bytes(const bcl_host_buffer *b)
{
    return b->bytes;
}

void bcl_host_buffer_destroy(bcl_host_buffer *b)
{
    if (!b)
        return;
    /* The unmap is queued; the release waits for it (OpenCL frees a memory
     * object once the commands using it are done). Failures here leave
     * nothing the caller could act on. */
    clEnqueueUnmapMemObject(b->q, b->mem, b->data, 0, NULL, NULL);
    clFlush(b->q);
    clReleaseMemObject(b->mem);
    clReleaseCommandQueue(b->q);
    free(b);
}
