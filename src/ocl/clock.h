/* Profiling checked before it is believed (src/ocl/clock_check.c): the
 * one check every figure from profiling events passes, in the simulation
 * (src/run/sim.c) and in every measurement. */
#ifndef BALLCL_CLOCK_H
#define BALLCL_CLOCK_H

#include "ocl/ocl.h"

#include <CL/cl.h>

/* No device starts and ends a launch or a copy in less (PoCL's launch of
 * 301 balls can take under 100 ns; rusticl's placeholders 1 ns a run). */
#define BCL_CLOCK_MIN_LAUNCH_NS 10.0
/* No memory moves more (bytes/s): 20 times an H200's 4.8 TB/s. */
#define BCL_CLOCK_MAX_BYTES_PER_S 1e14

/* One span of device work as the profiling events and the host saw it. */
typedef struct bcl_span_check {
    cl_ulong start_ns, end_ns;         /* START of the first command, END of the last */
    double host_ms;                    /* host clock from before the first enqueue to after the
                                          wait; 0: unknown */
    uint64_t launches;                 /* commands in the span (0 counts as 1) */
    double bytes;                      /* bytes the work must move at least; 0: unknown */
    double flops;                      /* float32 operations the work does at least; 0: unknown */
    uint32_t compute_units, clock_mhz; /* the device's, for its own peaks; 0: unknown */
    uint32_t cpu_vector_width;         /* a CPU device's CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT;
                                          0: not a CPU, or unknown */
} bcl_span_check;

/* Per compute unit and cycle, no device moves more bytes or does more
 * float32 operations: an NVIDIA SM's L1 gives 128 bytes and 128 lanes, a
 * CPU core with two 512-bit units 192 bytes and 64 (docs/SURVEY.md too). */
#define BCL_CLOCK_PER_CU_CYCLE 256.0
/* A CPU core: two vector FMAs a cycle per lane, at up to 1.5 times its clock. */
#define BCL_CLOCK_CPU_OPS_PER_LANE 6.0

/* True when the span ends after it starts, takes no longer than the host
 * saw (within 2% + 5 us; the host waited for it), and no rate above the
 * bounds above; else false, with why (optional). No device calls. */
bool bcl_profiling_plausible(const bcl_span_check *s, char *why, size_t size);
/* bcl_profiling_plausible; a failure marks d (bcl_profiling_reject). False
 * also when d was marked before. */
bool bcl_profiling_check(cl_device_id d, const bcl_span_check *s);
/* Marks d: its figures come from the host clock from now on. The first
 * reason is kept. */
void bcl_profiling_reject(cl_device_id d, const char *why);

#endif
