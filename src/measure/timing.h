/* Measurement and tuning, internal side (what tools/ uses is in
 * measure/measure.h): statistics, whole measurements, launch latency, the
 * tuner's local-size lists and the tuned record's file. */
#ifndef BALLCL_TIMING_H
#define BALLCL_TIMING_H

#include "measure/measure.h"
#include "run/run.h"
#include "ocl/clock.h"

/* Median, minimum and maximum of x[0..n) (n >= 1); sorts x in place. The
 * median of an even count is the mean of the two middle values. */
void bcl_stats_compute(double *x, unsigned n, bcl_stats *out);
/* The most repeats of a figure (bcl_repeats caps them). */
#define BCL_MAX_REPEATS 1000

/* Times plan p on s: warm-up and calibration, then mo->repeats runs. */
int bcl_measure_sim(bcl_sim *s, const bcl_plan *p, const bcl_measure_opts *mo, bcl_measurement *out,
                    bcl_error *e);
/* Times bcl_host_steps on state like bcl_measure_sim (host clock only; the
 * result is in wall_us and device_us alike). */
int bcl_measure_host(const bcl_model *m, const float *p, float *state, size_t n, bool openmp,
                     const bcl_measure_opts *mo, bcl_measurement *out, bcl_error *e);

/* Latency of a tiny launch of p's kernel on s, in us (latency.c); two
 * functions so that one can fail alone. */
int bcl_measure_dispatch(bcl_sim *s, const bcl_plan *p, unsigned repeats, bcl_stats *us,
                         bcl_error *e);
int bcl_measure_roundtrip(bcl_sim *s, const bcl_plan *p, unsigned repeats, bcl_stats *us,
                          bcl_error *e);

/* The start of a bandwidth figure: *gb and *gb2 (when given) zeroed,
 * *bytes made whole balls within one allocation (at least one), *repeats
 * capped (bcl_repeats). Returns c's device. */
const bcl_device_info *bcl_bandwidth_begin(bcl_context *c, size_t *bytes, unsigned *repeats,
                                           bcl_stats *gb, bcl_stats *gb2);

/* Host <-> device transfer bandwidth one way (transfer.c), GB/s to the
 * device and back: one untimed move each way, then `repeats` of each,
 * alternating. The mapped way checks the bytes (else BCL_EXIT_MISMATCH). */
typedef enum { BCL_TRANSFER_PINNED, BCL_TRANSFER_PAGEABLE, BCL_TRANSFER_MAPPED } bcl_transfer_way;
int bcl_measure_transfer(bcl_context *c, size_t bytes, unsigned repeats, bcl_transfer_way way,
                         bcl_stats *write_gb, bcl_stats *read_gb, bcl_error *e);

/* The local sizes a sweep tries for a kernel: the preferred multiple pm
 * times 1, 2, 4, ... up to limit, and no larger than the work-items rounded
 * up to pm (at least one size). Returns the count written (cap at most). */
size_t bcl_tune_local_sizes(size_t pm, size_t limit, size_t items, size_t *out, size_t cap);
/* The local sizes the tuner tries for p's kernel over `balls` balls (at
 * most cap >= 2): bcl_tune_local_sizes within the kernel's limits and the
 * automatic choice, not the driver's; *pm_out (optional) its multiple. */
int bcl_tune_locals(bcl_context *c, const bcl_plan *p, size_t balls, size_t *out, size_t cap,
                    size_t *count, size_t *pm_out, bcl_error *e);

/* The add-rate bound in one call: every repeat of bcl_add_timer_*. */
int bcl_measure_add_rate(bcl_context *c, const bcl_measure_opts *mo, bcl_add_rate *out,
                         bcl_error *e);

/* The survey's peaks (peak.c), validated bit for bit against the host. */
typedef enum bcl_peak_kind {
    BCL_PEAK_FMA32 = 1, /* float fma(): GFLOP/s, an FMA counted as 2 */
    BCL_PEAK_INT32 = 2, /* int32 adds: GOP/s */
    BCL_PEAK_FMA64 = 3, /* double fma(): GFLOP/s (needs fp64) */
    BCL_PEAK_FMA16 = 4, /* half fma(): GFLOP/s (needs cl_khr_fp16) */
} bcl_peak_kind;
int bcl_measure_peak_rate(bcl_context *c, bcl_peak_kind kind, const bcl_measure_opts *mo,
                          bcl_stats *rate, bcl_error *e);
/* Read-only global bandwidth over `bytes` (readonly.c). */
int bcl_measure_read_only(bcl_context *c, size_t bytes, unsigned repeats, bcl_stats *gb_per_s,
                          bcl_error *e);

/* `count` launches of k (1-D) queued back to back, waited for; *ms the
 * time they took, by the profiling clock once bcl_profiling_check believes
 * it, else the host's since t0 (launch_span.c). The caller sets span's
 * bytes, flops and cpu_vector_width. */
int bcl_launch_span(const bcl_device_info *d, cl_command_queue q, cl_kernel k, size_t global,
                    size_t local, unsigned count, double t0, bcl_span_check *span, double *ms,
                    bcl_error *e);

/* Waits for ev, one command enqueued at t0 (bcl_now_ms), and releases it;
 * span as bcl_launch_span's, *believed whether bcl_profiling_check is. */
int bcl_event_span(const bcl_device_info *d, cl_event ev, double t0, bcl_span_check *span,
                   bool *believed, bcl_error *e);
/* Repeats asked for, 0 counting as 1, at most 1000. */
unsigned bcl_repeats(unsigned repeats);

/* ---- the chain kernels of the add rate and the peaks (launch_span.c) ----- */

/* The widest power of two from 1 to 16 not above a native vector width w. */
unsigned bcl_chain_width(unsigned w);
/* Builds cl/<file> for c's device with the build options and defines. */
int bcl_chain_build(bcl_context *c, const char *file, const char *defines, cl_program *prog,
                    bcl_error *e);
/* The launch shape from device queries (launch_span.c says why): on a CPU
 * one work-item per group, or with kernel given the width of its preferred
 * multiple; elsewhere groups of up to 256. */
typedef struct bcl_chain_size {
    size_t global, local;
} bcl_chain_size;
int bcl_chain_shape(const bcl_device_info *d, cl_program prog, const char *kernel,
                    bcl_chain_size *sh, bcl_error *e);
/* A read-only buffer holding the size bytes at host. */
int bcl_chain_input(bcl_context *c, const void *host, size_t size, cl_mem *mem, bcl_error *e);

/* The chain timer of the add rate and the peaks: several chain counts per
 * work-item, their repeats interleaved so that a busy moment weighs on all
 * alike, the best median kept; a repeat is BCL_CHAIN_LAUNCHES launches back
 * to back (bcl_launch_span); every chain's final value is compared bit for
 * bit with the host's (a difference is BCL_EXIT_MISMATCH). */
#define BCL_CHAIN_LAUNCHES 10
#define BCL_CHAIN_VALUES   256 /* start values: 16 chains of 16 lanes */
#define BCL_CHAIN_SETS     4
typedef struct bcl_chain_set {
    unsigned chains, iters; /* iters: rounds per timed launch */
    cl_kernel k;
    cl_mem out;
    double ops;                /* per timed repeat */
    double x[BCL_MAX_REPEATS]; /* G per s of each repeat */
} bcl_chain_set;
typedef struct bcl_chain_timer bcl_chain_timer;
struct bcl_chain_timer {
    /* Set by the caller: */
    bcl_context *c;
    const char *kernel;          /* kernels are named <kernel>_c<chains> */
    const char *what, *ops_name; /* for the mismatch message */
    unsigned w, nsets;           /* set[i].chains given for i < nsets */
    size_t scalar;               /* bytes of a chain value */
    double step_ops;             /* operations of a chain step in the figure */
    double check_share;          /* of those, float32 ones for the profiling check */
    const void *arg;             /* kernel argument 1: a value, or with */
    size_t arg_size;             /* arg_buffer a read-only buffer of it */
    bool arg_buffer;
    int kind; /* the caller's */
    /* The host's chain values after `steps` steps, as the device stores them. */
    void (*want)(const bcl_chain_timer *t, unsigned chains, uint64_t steps, unsigned char *out);
    void (*show)(const bcl_chain_timer *t, const unsigned char *value, char *text, size_t n);
    /* Filled here: */
    const bcl_device_info *d;
    cl_program prog;
    cl_mem start_mem, arg_mem;
    bcl_chain_size sh;
    unsigned repeats, done;
    uint64_t compared;
    bcl_chain_set set[BCL_CHAIN_SETS];
};
/* Builds cl/<file>, sizes the launch, and makes, calibrates (mo->repeat_ms
 * a repeat, default 50) and checks every chain count; start holds
 * BCL_CHAIN_VALUES values; mo->repeats repeats (default 5). */
int bcl_chain_timer_start(bcl_chain_timer *t, const char *file, const char *defines,
                          const void *start, const bcl_measure_opts *mo, bcl_error *e);
/* One timed repeat of every chain count (t->repeats at most). */
int bcl_chain_timer_repeat(bcl_chain_timer *t, bcl_error *e);
/* Checks the last launches' chains; *rate and *best of the best median. */
int bcl_chain_timer_best(bcl_chain_timer *t, bcl_stats *rate, const bcl_chain_set **best,
                         bcl_error *e);
/* Releases what start made. */
void bcl_chain_timer_end(bcl_chain_timer *t);

#endif
