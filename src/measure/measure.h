/* Measurement and tuning for tools/ (bench, tune, survey), not installed:
 * timing a plan or the host loops, the add-rate bound, the tuner and its
 * record, the sweep of the defaults; every figure validated bit for bit
 * first (docs/BENCHMARK.md). Internal side: measure/timing.h. */
#ifndef BALLCL_MEASURE_MEASURE_H
#define BALLCL_MEASURE_MEASURE_H

#include "ballcl/ballcl.h"
#include "files/files.h"
#include "run/run.h"

/* ---- timing (docs/BENCHMARK.md) ------------------------------------------ */

typedef struct bcl_stats {
    double median, min, max;
    unsigned count;
} bcl_stats;

typedef struct bcl_measurement {
    bcl_stats device_us; /* per step, from profiling events (first start to last end) */
    bcl_stats wall_us;   /* per step, host monotonic clock around enqueue and wait */
    uint64_t steps;      /* steps per repeat */
    uint64_t launches;   /* launches per repeat */
    bool host_clock;     /* device_us holds the host clock's figures: the device's profiling
                            failed its check (bcl_profiling_unusable says why) */
} bcl_measurement;

/* A configuration timed one repeat at a time, so that a caller can
 * interleave several (a noisy moment then hits every row alike). Creating
 * one warms up and calibrates; each bcl_timer_repeat adds a timed repeat
 * (mo->repeats at most). The state evolves, unvalidated (bcl_check_sim). A
 * bcl_timer is freed before the simulation (or host state) it times. */
typedef struct bcl_timer bcl_timer;
int bcl_timer_sim(bcl_sim *s, const bcl_plan *p, const bcl_measure_opts *mo, bcl_timer **out,
                  bcl_error *e);
/* The host rows: the model's scalar C reference on one thread (openmp
 * false), or the OpenMP host loop, applied to state in place. */
int bcl_timer_host(const bcl_model *m, const float *p, float *state, size_t n, bool openmp,
                   const bcl_measure_opts *mo, bcl_timer **out, bcl_error *e);
int bcl_timer_repeat(bcl_timer *t, bcl_error *e);
void bcl_timer_result(const bcl_timer *t, bcl_measurement *out);
void bcl_timer_free(bcl_timer *t);

/* Applies `steps` steps of the host rows' loops to state in place. */
void bcl_host_steps(const bcl_model *m, const float *p, float *state, size_t n, uint64_t steps,
                    bool openmp);
/* Number of threads the OpenMP host loop uses. */
unsigned bcl_host_threads(void);

/* Read+write bandwidth of a copy between two device buffers of `bytes`
 * (within one allocation), the source pseudo-random: one warm-up copy, then
 * `repeats` timed; GB/s = 2 * bytes / time. */
int bcl_measure_copy(bcl_context *c, size_t bytes, unsigned repeats, bcl_stats *gb_per_s,
                     bcl_error *e);

/* The add-rate bound (docs/PERFORMANCE.md, src/measure/addrate.c): float32
 * adds per second, 4, 8, 12 and 16 chains, mo->repeats repeats (default 5)
 * of ten launches of about mo->repeat_ms / 10 (default 50) each. */
typedef struct bcl_add_rate {
    bcl_stats gflop_per_s;    /* of the fastest chain count: median, min, max */
    unsigned width;           /* float lanes per chain (native, bcl_chain_width) */
    unsigned chains;          /* independent chains per work-item of the fastest */
    size_t global, local;     /* work-items and work-group size of each launch */
    uint64_t adds_per_repeat; /* of the fastest: ten launches back to back */
    uint64_t compared;        /* chain values checked against the host */
} bcl_add_rate;

/* The same one repeat at a time, interleaved as bcl_timer: create builds,
 * sizes and checks every chain count, a repeat times each once, the result
 * checks the last chains and gives the count with the best median. */
typedef struct bcl_add_timer bcl_add_timer;
int bcl_add_timer_create(bcl_context *c, const bcl_measure_opts *mo, bcl_add_timer **out,
                         bcl_error *e);
int bcl_add_timer_repeat(bcl_add_timer *t, bcl_error *e);
int bcl_add_timer_result(bcl_add_timer *t, bcl_add_rate *out, bcl_error *e);
void bcl_add_timer_free(bcl_add_timer *t);

/* ---- the defaults against a sweep (docs/PERFORMANCE.md) ------------------ */

/* The untuned default plan, the tuned one when stored, and K x local size
 * x variant of the k-step kernel (sweep.c): one warm run each, then
 * `repeats` runs of S steps, interleaved; each validated bit for bit
 * first. Those expected over the launch budget are not timed; those
 * measured over it are not candidates for the best. */
typedef struct bcl_sweep_opts {
    const float *params;
    size_t balls;   /* N */
    uint64_t steps; /* S of every run */
    bcl_init init;
    uint64_t seed;
    unsigned repeats;        /* timed runs of each configuration (0: 5) */
    double launch_budget_ms; /* 0: $BALLCL_LAUNCH_BUDGET_MS, else BCL_LAUNCH_BUDGET_MS */
    const unsigned *ks;      /* K values <= S (NULL: sweep.c's), and always S */
    size_t nks;
    const size_t *locals; /* local sizes, 0: the driver's (NULL: sweep.c's) */
    size_t nlocals;
    bcl_progress_fn progress;
    void *progress_arg;
} bcl_sweep_opts;

typedef struct bcl_sweep_config {
    const char *role; /* "default" (untuned), "tuned" or "sweep" (static strings) */
    bcl_plan plan;
    bool validated;       /* same bits as the C reference */
    bool timed;           /* within the budget by the launch costs: timed */
    bool over_budget;     /* expected or measured launch longer than the budget */
    bcl_stats us;         /* device microseconds per step (median, min, max) */
    double max_launch_ms; /* the longest launch of all its runs */
} bcl_sweep_config;

typedef struct bcl_sweep_result {
    bcl_sweep_config *cfg; /* [0] the default, then the tuned one (when stored), the sweep */
    size_t count;
    size_t best;     /* the fastest timed configuration within the budget (SIZE_MAX: none) */
    bool host_clock; /* the device's profiling failed its check: host times */
} bcl_sweep_result;

/* Runs the sweep of o on c; r->cfg is malloc'ed (bcl_sweep_result_free). */
int bcl_sweep(bcl_context *c, const bcl_sweep_opts *o, bcl_sweep_result *r, bcl_error *e);
void bcl_sweep_result_free(bcl_sweep_result *r);

/* ---- tuning (docs/BENCHMARK.md) ------------------------------------------ */

typedef struct bcl_tune_opts {
    const float *params;
    size_t balls;
    bcl_init init;
    uint64_t seed;
    bcl_measure_opts measure;
    const unsigned *ks; /* K values for the fused sweep (NULL: the default list) */
    size_t nks;
    double launch_budget_ms; /* of the default plan beside the K sweep (0: as a run's) */
    bcl_progress_fn progress;
    void *progress_arg;
} bcl_tune_opts;

typedef struct bcl_tune_candidate {
    bool fused;
    char variant[BCL_VARIANT_NAME];
    size_t local; /* 0: driver */
    unsigned steps_per_launch;
    bool validated;
    bcl_measurement m;
} bcl_tune_candidate;

typedef struct bcl_tune_result {
    bcl_tune_candidate *cand;
    size_t count;
    bcl_tuned best;
    double auto_us; /* the one-step kernel with --local auto, for comparison */
    /* The untuned default plan of a plain run (K from the launch budget,
     * S open), timed beside the K sweep: the stored k-step entry is never
     * slower than it. default_us 0: not measured. */
    double default_us;
    bool default_kept;     /* nothing was faster: the stored k-step entry is the default's */
    double default_within; /* default_us / fastest - 1 (0 when the default was fastest) */
} bcl_tune_result;

/* The three sweeps of tune.c, every candidate validated bit for bit
 * before it is timed (default_kept above). r->cand is malloc'ed
 * (bcl_tune_result_free). Stores nothing. */
int bcl_tune(bcl_context *c, const bcl_tune_opts *o, bcl_tune_result *r, bcl_error *e);
void bcl_tune_result_free(bcl_tune_result *r);
/* Before a sweep, so that nothing stops its result from being stored: the
 * tuned file's folders made (0700) and checked to be the user's
 * (docs/cache.md), the file added to o; path_out must outlive o. */
int bcl_tuned_open(const bcl_device_info *d, const bcl_model *m, bcl_outputs *o, char *path_out,
                   size_t path_size, bcl_error *e);
/* Stores r (best, identity, date, every candidate) as the tuned file of
 * (d, m) through o (bcl_tuned_open), atomically. */
int bcl_tuned_save(const bcl_device_info *d, const bcl_model *m, const bcl_tune_result *r,
                   bcl_outputs *o, bcl_error *e);

/* One tuned file of a cache folder, as `ballcl cache list` shows it. */
typedef struct bcl_tuned_file_info {
    char file[160];     /* file name under <cache>/tuned */
    char model[32];     /* from the file (valid only) */
    char device[256];   /* device name, from the file */
    char platform[256]; /* platform name, from the file */
    bcl_tuned tuned;    /* its entries, date and N */
    uint64_t bytes;     /* file size */
    int64_t mtime;      /* seconds since the epoch */
    bool valid;         /* it parses as a tuned file */
    char problem[128];  /* why not, when !valid */
} bcl_tuned_file_info;

/* The tuned files of <cache_dir>/tuned (none without the folder), sorted by
 * name, one that does not parse with its problem; *files is malloc'ed. */
int bcl_tuned_list(const char *cache_dir, bcl_tuned_file_info **files, size_t *count, bcl_error *e);

/* Uploads init (all of s's balls), runs o->check_steps steps of plan o,
 * reads the result into scratch and validates it into v. */
int bcl_check_sim(bcl_sim *s, const bcl_plan *o, const float *init, uint64_t tol_ulp,
                  float *scratch, bcl_validation *v, bcl_error *e);

#endif
