/*
 * Read-only global bandwidth (docs/SURVEY.md), clpeak's global memory
 * bandwidth: cl/peak.cl (BCL_KIND 0) reads every float4 of a buffer of
 * pseudo-random bits once per launch and sums each work-item's share as
 * integers (exact in any order), each sum checked against the host's. A
 * GPU's work-items read with a stride of the global size (neighbours read
 * neighbouring addresses), a CPU's each a contiguous block. A warm-up
 * launch, then repeats of ten launches back to back (bcl_launch_span).
 */
#include "measure/timing.h"
#include "models/rng.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <stdlib.h>

int bcl_measure_read_only(bcl_context *c, size_t bytes, unsigned repeats, bcl_stats *gb_per_s,
                          bcl_error *e)
{
    const bcl_device_info *d = bcl_bandwidth_begin(c, &bytes, &repeats, gb_per_s, NULL);
    cl_command_queue q = bcl_context_queue(c);
    bool cpu = (d->type & BCL_DEVICE_CPU) != 0;
    uint64_t n4 = bytes / 16;
    bcl_chain_size sh; /* one work-item per group on a CPU: no kernel to ask */
    int rc = bcl_chain_shape(d, NULL, NULL, &sh, e);
    if (rc)
        return rc;
    size_t local = sh.local, global = sh.global;
    if (global > n4)
        global = bcl_round_up((size_t)n4, local);
    uint64_t per = (n4 + global - 1) / global;
    uint32_t *host = malloc(bytes), *got = malloc(global * 4), *want = calloc(global, 4);
    double *x = malloc(repeats * sizeof *x);
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_mem in = NULL, out = NULL;
    cl_int st = CL_SUCCESS;
    if (!host || !got || !want || !x) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu bytes", bytes);
        goto out;
    }
    /* Pseudo-random bits: a GPU that compresses memory finds nothing. */
    bcl_rng_fill(0x0dd5eedu, host, bytes);
    /* Each work-item's sum, as the kernel groups the float4s. */
    for (uint64_t i = 0; i < n4; i++) {
        uint32_t s = host[4 * i] + host[4 * i + 1] + host[4 * i + 2] + host[4 * i + 3];
        want[cpu ? i / per : i % global] += s;
    }
    if ((rc = bcl_chain_build(c, "peak.cl", "-DBCL_KIND=0", &prog, e)))
        goto out;
    k = BCL_CL_CREATE(&st, clCreateKernel, prog, cpu ? "readonly_blocked" : "readonly_strided");
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clCreateKernel", d->name);
        goto out;
    }
    if ((rc = bcl_chain_input(c, host, bytes, &in, e)))
        goto out;
    out =
        BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(c), CL_MEM_WRITE_ONLY, global * 4, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clCreateBuffer", d->name);
        goto out;
    }
    cl_ulong n4_arg = n4, per_arg = per;
    unsigned a = 0;
    st = BCL_CL(clSetKernelArg, k, a++, sizeof in, &in);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, k, a++, sizeof n4_arg, &n4_arg);
    if (st == CL_SUCCESS && cpu)
        st = BCL_CL(clSetKernelArg, k, a++, sizeof per_arg, &per_arg);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, k, a++, sizeof out, &out);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clSetKernelArg", d->name);
        goto out;
    }
    /* One warm-up launch (first-touch, a runtime's first-launch compile),
     * then each repeat: BCL_CHAIN_LAUNCHES launches back to back, checked span. */
    for (unsigned r = 0; r <= repeats; r++) {
        unsigned count = r ? BCL_CHAIN_LAUNCHES : 1;
        bcl_span_check span = {.bytes = (double)n4 * 16 * count};
        double ms = 0;
        if ((rc = bcl_launch_span(d, q, k, global, local, count, bcl_now_ms(), &span, &ms, e)))
            goto out;
        if (r)
            x[r - 1] = ms > 0 ? span.bytes / (ms * 1e6) : 0; /* bytes per ns = GB/s */
    }
    st = BCL_CL(clEnqueueReadBuffer, q, out, CL_TRUE, 0, global * 4, got, 0, NULL, NULL);
    if (st != CL_SUCCESS) {
        rc = bcl_cl_fail(e, st, "clEnqueueReadBuffer", d->name);
        goto out;
    }
    uint64_t bad = 0;
    size_t firstbad = 0;
    for (size_t i = 0; i < global; i++)
        if (got[i] != want[i] && bad++ == 0)
            firstbad = i;
    if (bad) {
        rc = bcl_fail(e, BCL_EXIT_MISMATCH,
                      "read-only bandwidth kernel on '%s': %llu of %zu work-item sums differ from "
                      "the host's (first: work-item %zu, got %u, want %u)",
                      d->name, (unsigned long long)bad, global, firstbad, got[firstbad],
                      want[firstbad]);
        goto out;
    }
    bcl_stats_compute(x, repeats, gb_per_s);
out:
    if (k)
        clReleaseKernel(k);
    if (prog)
        clReleaseProgram(prog);
    bcl_release_buffers(in, out);
    free(host);
    free(got);
    free(want);
    free(x);
    return rc;
}
