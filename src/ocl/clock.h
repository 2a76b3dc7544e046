/* Profiling checked before it is believed (src/ocl/clock_check.c): the
 * one check every figure from profiling events passes, in the simulation
 * (src/run/sim.c) and in every measurement. */
#ifndef BALLCL_CLOCK_H
#define BALLCL_CLOCK_H

#include "ocl/ocl.h"

#include <CL/cl.h>

/* No device starts and ends a kernel launch or a copy in less: a runtime
 * reads a clock at each end (some 20 ns on a CPU), and a GPU's command
 * processor takes longer. PoCL's span of a launch of 301 balls can be under
 * 100 ns, so the floor is low; rusticl's placeholders give 1 ns for a whole
 * run. */
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

/* Per compute unit and clock cycle, no device moves more bytes through its
 * caches or does more float32 operations: an NVIDIA SM's L1 gives 128
 * bytes and 128 lanes, a CPU core with two 512-bit units 192 bytes and 64
 * operations (the survey's flag rule, docs/SURVEY.md, uses the same 256). */
#define BCL_CLOCK_PER_CU_CYCLE 256.0
/* A CPU core issues at most two vector FMAs a cycle (2 x 2 operations per
 * lane of its native float vector), at up to 1.5 times the clock it reports
 * (turbo). */
#define BCL_CLOCK_CPU_OPS_PER_LANE 6.0

/* True when the span is believable: it ends after it starts, takes no
 * longer than the host saw (within 2% + 5 us), at least
 * BCL_CLOCK_MIN_LAUNCH_NS per launch, moves at most BCL_CLOCK_MAX_BYTES_PER_S
 * and, where the device's compute units and clock are known, at most
 * BCL_CLOCK_PER_CU_CYCLE bytes and float32 operations per compute unit and
 * cycle. Otherwise false, with the reason in why (optional). Pure: no
 * device calls. */
bool bcl_profiling_plausible(const bcl_span_check *s, char *why, size_t size);
/* bcl_profiling_plausible, and on failure marks device d as having unusable
 * profiling for the rest of the process (bcl_profiling_unusable). False also
 * when d was marked before. */
bool bcl_profiling_check(cl_device_id d, const bcl_span_check *s);
/* Marks d: its figures come from the host clock from now on. The first
 * reason is kept. */
void bcl_profiling_reject(cl_device_id d, const char *why);

/* bcl_profiling_unusable is public (ballcl/ballcl.h). */

#endif
