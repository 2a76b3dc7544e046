/*
 * A device context: the OpenCL context, one in-order profiling queue, the
 * model's program and its kernels (created once, kept until destroy).
 */
#include "ocl/ocl.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Base kernels and their variants, one-step and k-step. */
#define MAX_KERNELS 32

struct bcl_context {
    bcl_device_info dev;
    const bcl_model *model;
    cl_context ctx;
    cl_command_queue queue;
    cl_program program;
    bcl_cache_slot cache; /* the entry to write once the program has run */
    struct {
        char name[64];
        cl_kernel k;
    } kernels[MAX_KERNELS];
    unsigned nkernels;
    char *cache_dir; /* the folder opts named, NULL: bcl_cache_dir's */
    /* 'ballcl tune''s record, read at the first plan that asks (tuned_read.c). */
    bcl_tuned_memo tuned;
    bcl_launch_costs costs; /* the K rule's figures, once known */
    bool use_cache;         /* the cache folder may be read and written */
    void (*on_destroy)(bcl_context *c);
};

/* The profiling queue; *call names the OpenCL call used, for the message. */
static cl_command_queue create_queue(bcl_context *c, cl_int *st, const char **call)
{
    /* 2.0 deprecates clCreateCommandQueue; 1.x lacks the replacement. */
    if (bcl_opencl_version(&c->dev) >= 20) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        *call = "clCreateCommandQueueWithProperties";
        return BCL_CL_CREATE(st, clCreateCommandQueueWithProperties, c->ctx, c->dev.device, props);
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    *call = "clCreateCommandQueue";
    return BCL_CL_CREATE(st, clCreateCommandQueue, c->ctx, c->dev.device,
                         CL_QUEUE_PROFILING_ENABLE);
#pragma GCC diagnostic pop
}

int bcl_context_create(const bcl_device_info *dev, const bcl_model *m, const bcl_context_opts *opts,
                       bcl_context **out, bcl_build_report *rep, bcl_error *e)
{
    *out = NULL;
    bcl_context *c = calloc(1, sizeof *c);
    if (!c)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    c->dev = *dev;
    c->model = m;
    c->use_cache = opts && opts->use_cache;
    char *src = NULL;
    size_t len = 0;
    int rc = BCL_OK;
    /* The folder of the binary cache is also the tuned files'. */
    if (opts && opts->cache_dir && !(c->cache_dir = strdup(opts->cache_dir))) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
        goto fail;
    }
    rc = bcl_model_program_source(m, true, &src, &len, e);
    if (rc)
        goto fail;
    cl_int st;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)dev->platform, 0};
    cl_device_id id = dev->device;
    c->ctx = BCL_CL_CREATE(&st, clCreateContext, props, 1, &id, NULL, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clCreateContext", dev->name);
        goto fail;
    }
    const char *queue_call = "clCreateCommandQueue";
    c->queue = create_queue(c, &st, &queue_call);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, queue_call, dev->name);
        goto fail;
    }
    bcl_build_report scratch;
    rc = bcl_program_get(c->ctx, dev, m, src, len, c->use_cache, c->cache_dir, &c->program,
                         rep ? rep : &scratch, &c->cache, e);
    if (rc)
        goto fail;
    free(src);
    *out = c;
    return BCL_OK;
fail:
    free(src);
    bcl_context_destroy(c);
    return rc;
}

void bcl_context_cache_store(bcl_context *c, bcl_build_report *rep)
{
    if (c && c->program)
        bcl_program_cache_store(c->program, &c->dev, &c->cache, rep);
}

void bcl_context_destroy(bcl_context *c)
{
    if (!c)
        return;
    /* For callers that never stored: a program that ran is worth keeping. */
    bcl_context_cache_store(c, NULL);
    /* What a layer above keeps, last: after the run's own files (the
     * launch costs measured here, src/run/launch_costs.c). */
    if (c->on_destroy)
        c->on_destroy(c);
    /* Work an error left queued must end before the objects go: releasing
     * only flushes, and a process that exits while the runtime's threads
     * still run that work can crash in the runtime's teardown (Mesa's
     * rusticl: "pure virtual method called", or a fault in LLVM's JIT). A
     * marker's event is waited for, not clFinish alone: Mesa 22's rusticl
     * returns from clFinish at once when all work was flushed before it (by
     * a clWaitForEvents, say), finished or not. Statuses are of no use
     * here: after a lost device they are the loss already reported. */
    if (c->queue) {
        cl_event end = NULL;
        if (clEnqueueMarkerWithWaitList(c->queue, 0, NULL, &end) == CL_SUCCESS) {
            clWaitForEvents(1, &end);
            clReleaseEvent(end);
        } else {
            clFinish(c->queue);
        }
    }
    for (unsigned i = 0; i < c->nkernels; i++)
        clReleaseKernel(c->kernels[i].k);
    if (c->program)
        clReleaseProgram(c->program);
    if (c->queue)
        clReleaseCommandQueue(c->queue);
    if (c->ctx)
        clReleaseContext(c->ctx);
    free(c->cache_dir);
    free(c);
}

const bcl_device_info *bcl_context_device(const bcl_context *c)
{
    return &c->dev;
}

cl_context bcl_context_cl(const bcl_context *c)
{
    return c->ctx;
}

cl_command_queue bcl_context_queue(const bcl_context *c)
{
    return c->queue;
}

cl_program bcl_context_program(const bcl_context *c)
{
    return c->program;
}

const bcl_model *bcl_context_model(const bcl_context *c)
{
    return c->model;
}

bcl_tuned_memo *bcl_context_tuned_memo(bcl_context *c)
{
    return &c->tuned;
}

bcl_launch_costs *bcl_context_costs(bcl_context *c)
{
    return &c->costs;
}

const char *bcl_context_cache_dir(const bcl_context *c)
{
    return c->cache_dir;
}

void bcl_context_on_destroy(bcl_context *c, void (*fn)(bcl_context *c))
{
    c->on_destroy = fn;
}

bool bcl_context_uses_cache(const bcl_context *c)
{
    return c->use_cache;
}

int bcl_context_kernel(bcl_context *c, const char *suffix, cl_kernel *k, bcl_error *e)
{
    char name[64];
    snprintf(name, sizeof name, "%s_%s", c->model->name, suffix);
    return bcl_context_kernel_named(c, name, k, e);
}

int bcl_context_kernel_named(bcl_context *c, const char *name, cl_kernel *k, bcl_error *e)
{
    for (unsigned i = 0; i < c->nkernels; i++) {
        if (strcmp(c->kernels[i].name, name) == 0) {
            *k = c->kernels[i].k;
            return BCL_OK;
        }
    }
    if (c->nkernels == MAX_KERNELS)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "too many kernels in one context");
    cl_int st;
    cl_kernel kern = BCL_CL_CREATE(&st, clCreateKernel, c->program, name);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateKernel", c->dev.name);
    snprintf(c->kernels[c->nkernels].name, sizeof c->kernels[0].name, "%s", name);
    c->kernels[c->nkernels++].k = kern;
    *k = kern;
    return BCL_OK;
}

int bcl_kernel_groups(const bcl_device_info *d, cl_kernel k, size_t *kwg, size_t *limit, size_t *pm,
                      bcl_error *e)
{
    *kwg = *pm = 0;
    cl_int st = BCL_CL(clGetKernelWorkGroupInfo, k, d->device, CL_KERNEL_WORK_GROUP_SIZE,
                       sizeof *kwg, kwg, NULL);
    if (st == CL_SUCCESS)
        st = BCL_CL(clGetKernelWorkGroupInfo, k, d->device,
                    CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof *pm, pm, NULL);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clGetKernelWorkGroupInfo", d->name);
    size_t item = d->max_item_sizes[0];
    *limit = item && item < *kwg ? item : *kwg;
    return BCL_OK;
}

void bcl_release_buffers(cl_mem a, cl_mem b)
{
    if (a)
        clReleaseMemObject(a);
    if (b)
        clReleaseMemObject(b);
}
