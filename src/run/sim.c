/*
 * A simulation on the device. The state stays on the device for the whole
 * run: launches are queued back to back on one in-order queue and the host
 * waits once at the end (unless --sync every asks for the seed's mistake).
 *
 * The state may be larger than one allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE):
 * it is then split into chunks of whole balls, one buffer each, and every
 * step launches the kernel once per chunk. Balls are independent, so the
 * split changes no bits.
 */
#include "ballcl/ballcl.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BALL_BYTES (4 * sizeof(float))

typedef struct chunk {
    cl_mem buf;
    size_t first; /* index of the first ball */
    size_t n;     /* balls in this chunk */
} chunk;

struct bcl_sim {
    bcl_context *c;
    size_t n;
    chunk *chunks;
    size_t nchunks;
};

/* The allocation limit, lowered by BALLCL_TEST_MAX_ALLOC (bytes) so tests can
 * exercise the split on any device. */
static cl_ulong alloc_limit(const bcl_device_info *d)
{
    cl_ulong lim = d->max_alloc ? d->max_alloc : (cl_ulong)1 << 27;
    const char *env = getenv("BALLCL_TEST_MAX_ALLOC");
    if (env && *env) {
        unsigned long long v = strtoull(env, NULL, 10);
        if (v >= BALL_BYTES && v < lim)
            lim = v;
    }
    return lim;
}

size_t bcl_sim_chunks(const bcl_sim *s)
{
    return s->nchunks;
}

bcl_context *bcl_sim_context(const bcl_sim *s)
{
    return s->c;
}

size_t bcl_sim_balls(const bcl_sim *s)
{
    return s->n;
}

int bcl_sim_check_size(const bcl_device_info *d, size_t n, bcl_error *e)
{
    if (n == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "no balls to simulate");
    if (n > SIZE_MAX / BALL_BYTES || (d->global_mem && (cl_ulong)n * BALL_BYTES > d->global_mem))
        return bcl_fail(
            e, BCL_EXIT_INPUT, "%zu balls need %.1f MiB, more than the %.1f MiB of memory of '%s'",
            n, (double)n * BALL_BYTES / 1048576.0, (double)d->global_mem / 1048576.0, d->name);
    return BCL_OK;
}

int bcl_sim_create(bcl_context *c, const float *state, size_t n, bcl_sim **out, bcl_error *e)
{
    *out = NULL;
    const bcl_device_info *d = bcl_context_device(c);
    int size_rc = bcl_sim_check_size(d, n, e);
    if (size_rc)
        return size_rc;
    /* Whole balls per chunk, and n must fit the kernels' uint argument. */
    size_t per = (size_t)(alloc_limit(d) / BALL_BYTES);
    if (per > UINT32_MAX)
        per = UINT32_MAX;
    bcl_sim *s = calloc(1, sizeof *s);
    if (!s)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    s->c = c;
    s->n = n;
    s->nchunks = (n + per - 1) / per;
    s->chunks = calloc(s->nchunks, sizeof *s->chunks);
    if (!s->chunks) {
        free(s);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    int rc = BCL_OK;
    for (size_t i = 0; i < s->nchunks && rc == BCL_OK; i++) {
        chunk *ch = &s->chunks[i];
        ch->first = i * per;
        ch->n = n - ch->first < per ? n - ch->first : per;
        cl_int st;
        ch->buf = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c), CL_MEM_READ_WRITE,
                                ch->n * BALL_BYTES, NULL);
        if (st != CL_SUCCESS)
            rc = bcl_cl_fail(e, st, "clCreateBuffer", d->name);
    }
    if (rc == BCL_OK)
        rc = bcl_sim_write(s, state, e);
    if (rc != BCL_OK) {
        bcl_sim_destroy(s);
        return rc;
    }
    *out = s;
    return BCL_OK;
}

void bcl_sim_destroy(bcl_sim *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nchunks; i++)
        if (s->chunks[i].buf)
            clReleaseMemObject(s->chunks[i].buf);
    free(s->chunks);
    free(s);
}

int bcl_sim_write(bcl_sim *s, const float *state, bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(s->c);
    for (size_t i = 0; i < s->nchunks; i++) {
        chunk *ch = &s->chunks[i];
        cl_int st = BCL_CL(clEnqueueWriteBuffer, bcl_context_queue(s->c), ch->buf, CL_TRUE, 0,
                           ch->n * BALL_BYTES, state + 4 * ch->first, 0, NULL, NULL);
        if (st != CL_SUCCESS)
            return bcl_cl_fail(e, st, "clEnqueueWriteBuffer", d->name);
    }
    return BCL_OK;
}

int bcl_sim_read(bcl_sim *s, float *state, bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(s->c);
    for (size_t i = 0; i < s->nchunks; i++) {
        chunk *ch = &s->chunks[i];
        cl_int st = BCL_CL(clEnqueueReadBuffer, bcl_context_queue(s->c), ch->buf, CL_TRUE, 0,
                           ch->n * BALL_BYTES, state + 4 * ch->first, 0, NULL, NULL);
        if (st != CL_SUCCESS)
            return bcl_cl_fail(e, st, "clEnqueueReadBuffer", d->name);
    }
    return BCL_OK;
}

static int set_args(bcl_sim *s, cl_kernel k, const chunk *ch, cl_uint steps, const float *params,
                    bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(s->c);
    const bcl_model *m = bcl_context_model(s->c);
    cl_uint n32 = (cl_uint)ch->n;
    cl_int st = BCL_CL(clSetKernelArg, k, 0, sizeof(cl_mem), &ch->buf);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, k, 1, sizeof n32, &n32);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, k, 2, sizeof steps, &steps);
    unsigned np = bcl_model_param_floats(m);
    for (unsigned i = 0; i < np && st == CL_SUCCESS; i++)
        st = BCL_CL(clSetKernelArg, k, 3 + i, sizeof(float), &params[i]);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clSetKernelArg", d->name);
    return BCL_OK;
}

static cl_ulong event_ns(cl_event ev, cl_profiling_info what, cl_int *st)
{
    cl_ulong t = 0;
    *st = BCL_CL(clGetEventProfilingInfo, ev, what, sizeof t, &t, NULL);
    return t;
}

/* Launches the kernel for o over every chunk with n = 0: no work-item
 * touches the state, but the driver finishes whatever it defers to the
 * first launch (PoCL compiles once per local size). */
int bcl_sim_kernel(bcl_context *c, const bcl_sim_opts *o, cl_kernel *k, unsigned *balls_per_item,
                   bcl_error *e)
{
    unsigned kper = o->steps_per_launch ? o->steps_per_launch : 1;
    char suffix[64];
    bcl_kernel_suffix(kper > 1 || o->fused, o->variant, suffix, sizeof suffix);
    if (balls_per_item)
        *balls_per_item = bcl_variant_balls(o->variant);
    return bcl_context_kernel(c, suffix, k, e);
}

/* Work-items for n balls of a kernel handling b balls per work-item. */
static size_t items_for(size_t n, unsigned b)
{
    return (n + b - 1) / b;
}

int bcl_sim_resolve(bcl_context *c, bcl_sim_opts *o, size_t n, size_t *global, bcl_error *e)
{
    cl_kernel k;
    unsigned b;
    int rc = bcl_sim_kernel(c, o, &k, &b, e);
    if (rc)
        return rc;
    size_t items = items_for(n, b);
    if ((rc = bcl_launch_resolve(c, k, items, &o->launch, e)))
        return rc;
    if (global)
        *global = o->launch.local ? bcl_round_up(items, o->launch.local) : items;
    return BCL_OK;
}

/* Launches the kernel for o over every chunk with n = 0: no work-item
 * touches the state, but the driver finishes whatever it defers to the
 * first launch (PoCL compiles once per local size). */
int bcl_sim_warmup(bcl_sim *s, const bcl_sim_opts *o, double *ms, bcl_error *e)
{
    const bcl_device_info *d = bcl_context_device(s->c);
    cl_command_queue q = bcl_context_queue(s->c);
    unsigned kper = o->steps_per_launch ? o->steps_per_launch : 1;
    cl_kernel k;
    unsigned b;
    double t0 = bcl_now_ms();
    int rc = bcl_sim_kernel(s->c, o, &k, &b, e);
    if (rc)
        return rc;
    bcl_launch l = o->launch;
    if (l.how == NULL && (rc = bcl_launch_resolve(s->c, k, items_for(s->chunks[0].n, b), &l, e)))
        return rc;
    for (size_t c = 0; c < s->nchunks && rc == BCL_OK; c++) {
        chunk empty = s->chunks[c];
        size_t items = items_for(empty.n, b);
        size_t global = l.local ? bcl_round_up(items, l.local) : items;
        empty.n = 0;
        if ((rc = set_args(s, k, &empty, kper, o->params, e)))
            break;
        cl_int st = BCL_CL(clEnqueueNDRangeKernel, q, k, 1, NULL, &global,
                           l.local ? &l.local : NULL, 0, NULL, NULL);
        if (st != CL_SUCCESS)
            rc = bcl_cl_fail(e, st, "clEnqueueNDRangeKernel", d->name);
    }
    if (rc == BCL_OK) {
        cl_int st = BCL_CL(clFinish, q);
        if (st != CL_SUCCESS)
            rc = bcl_cl_fail(e, st, "clFinish", d->name);
    }
    if (ms)
        *ms = bcl_now_ms() - t0;
    return rc;
}

int bcl_sim_run(bcl_sim *s, const bcl_sim_opts *o, bcl_sim_timing *t, bcl_error *e)
{
    memset(t, 0, sizeof *t);
    const bcl_device_info *d = bcl_context_device(s->c);
    cl_command_queue q = bcl_context_queue(s->c);
    unsigned kper = o->steps_per_launch ? o->steps_per_launch : 1;
    cl_kernel k;
    unsigned b;
    int rc = bcl_sim_kernel(s->c, o, &k, &b, e);
    if (rc)
        return rc;
    if (o->steps == 0)
        return BCL_OK;
    bcl_launch l = o->launch;
    if (l.how == NULL) {
        rc = bcl_launch_resolve(s->c, k, items_for(s->chunks[0].n, b), &l, e);
        if (rc)
            return rc;
    }
    uint64_t launches = (o->steps + kper - 1) / kper;
    cl_event first = NULL, last = NULL;
    cl_uint cur_k = 0;
    size_t cur_chunk = SIZE_MAX;
    double w0 = bcl_now_ms();
    for (uint64_t i = 0; i < launches && rc == BCL_OK; i++) {
        uint64_t done = i * kper;
        cl_uint ksteps = (cl_uint)(o->steps - done < kper ? o->steps - done : kper);
        for (size_t c = 0; c < s->nchunks && rc == BCL_OK; c++) {
            const chunk *ch = &s->chunks[c];
            /* Arguments persist on the kernel: set them only when they change. */
            if (c != cur_chunk || ksteps != cur_k) {
                rc = set_args(s, k, ch, ksteps, o->params, e);
                cur_chunk = c;
                cur_k = ksteps;
                if (rc)
                    break;
            }
            size_t items = items_for(ch->n, b);
            size_t global = l.local ? bcl_round_up(items, l.local) : items;
            bool is_first = i == 0 && c == 0;
            bool is_last = i + 1 == launches && c + 1 == s->nchunks;
            cl_event *evp = is_first ? &first : (is_last ? &last : NULL);
            cl_int st = BCL_CL(clEnqueueNDRangeKernel, q, k, 1, NULL, &global,
                               l.local ? &l.local : NULL, 0, NULL, evp);
            if (st != CL_SUCCESS)
                rc = bcl_cl_fail(e, st, "clEnqueueNDRangeKernel", d->name);
        }
        if (rc == BCL_OK && o->sync == BCL_SYNC_EVERY) {
            cl_int st = BCL_CL(clFinish, q);
            if (st != CL_SUCCESS)
                rc = bcl_cl_fail(e, st, "clFinish", d->name);
        }
    }
    if (rc == BCL_OK) {
        cl_int st = BCL_CL(clFinish, q);
        if (st != CL_SUCCESS)
            rc = bcl_cl_fail(e, st, "clFinish", d->name);
    }
    t->wall_ms = bcl_now_ms() - w0;
    t->launches = launches;
    /* Some drivers let clFinish succeed after a launch that died (a lost
     * device, a faulting kernel) and report it only in the event. */
    cl_event ends[2] = {first, last};
    for (int i = 0; i < 2 && rc == BCL_OK; i++) {
        cl_int exec = CL_COMPLETE;
        if (!ends[i])
            continue;
        cl_int st = BCL_CL(clGetEventInfo, ends[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec,
                           &exec, NULL);
        if (st != CL_SUCCESS)
            rc = bcl_cl_fail(e, st, "clGetEventInfo", d->name);
        else if (exec < 0)
            rc = bcl_cl_fail(e, exec, "a kernel launch (event status)", d->name);
    }
    if (rc == BCL_OK && first) {
        cl_event end = last ? last : first;
        cl_int st1, st2;
        cl_ulong start = event_ns(first, CL_PROFILING_COMMAND_START, &st1);
        cl_ulong stop = event_ns(end, CL_PROFILING_COMMAND_END, &st2);
        if (st1 != CL_SUCCESS || st2 != CL_SUCCESS) {
            rc = bcl_cl_fail(e, st1 != CL_SUCCESS ? st1 : st2, "clGetEventProfilingInfo", d->name);
        } else {
            /* Believed only after the check (src/measure/clock_check.c):
             * every launch reads and writes each ball of its chunk once. */
            bcl_span_check span = {.start_ns = start,
                                   .end_ns = stop,
                                   .host_ms = t->wall_ms,
                                   .launches = launches * s->nchunks,
                                   .bytes = (double)launches * (double)s->n * 2 * BALL_BYTES};
            if (bcl_profiling_check(d->device, &span)) {
                t->device_ms = (double)(stop - start) / 1e6;
            } else {
                t->device_ms = t->wall_ms;
                t->host_clock = true;
            }
        }
    }
    if (first)
        clReleaseEvent(first);
    if (last)
        clReleaseEvent(last);
    return rc;
}

int bcl_sim_enqueue(bcl_sim *s, const bcl_sim_opts *o, cl_event *ev, bcl_error *e)
{
    if (ev)
        *ev = NULL;
    const bcl_device_info *d = bcl_context_device(s->c);
    cl_command_queue q = bcl_context_queue(s->c);
    unsigned kper = o->steps_per_launch ? o->steps_per_launch : 1;
    cl_kernel k;
    unsigned b;
    int rc = bcl_sim_kernel(s->c, o, &k, &b, e);
    if (rc)
        return rc;
    bcl_launch l = o->launch;
    if (l.how == NULL && (rc = bcl_launch_resolve(s->c, k, items_for(s->chunks[0].n, b), &l, e)))
        return rc;
    for (size_t c = 0; c < s->nchunks && rc == BCL_OK; c++) {
        const chunk *ch = &s->chunks[c];
        if ((rc = set_args(s, k, ch, kper, o->params, e)))
            break;
        size_t items = items_for(ch->n, b);
        size_t global = l.local ? bcl_round_up(items, l.local) : items;
        cl_event *evp = ev && c + 1 == s->nchunks ? ev : NULL;
        cl_int st = BCL_CL(clEnqueueNDRangeKernel, q, k, 1, NULL, &global,
                           l.local ? &l.local : NULL, 0, NULL, evp);
        if (st != CL_SUCCESS)
            rc = bcl_cl_fail(e, st, "clEnqueueNDRangeKernel", d->name);
    }
    return rc;
}
