/* The one run path, internal side (docs/DESIGN.md, "One run path"): a
 * group of devices (one or several) running a range of balls, its split,
 * and the phases bcl_group_exec runs. The group's public side is in
 * ballcl/ballcl.h. */
#ifndef BALLCL_JOB_H
#define BALLCL_JOB_H

#include "run/run.h"

/* ---- the split of a run over several devices or ranks (group_split.c) ---- */

/* Cuts n balls into contiguous shards, one per part (device or rank) in the
 * given order, in proportion to rate[i] (ball-steps/s) so that all finish
 * together. A part whose fixed cost fixed_s[i] (seconds per run whatever
 * its balls: its launches times its per-launch overhead) would make its
 * share end later than the others could end with its balls too gets none;
 * so does one whose share is under half a block, or under min_share of the
 * balls (devices: BCL_SPLIT_MIN_SHARE; ranks: 0, docs/SCALING.md); why[i]
 * says which. Shards are whole blocks but the last part's with balls, which
 * also takes n % block; count 0 for a part without balls. Returns the
 * number of parts with balls (>= 1 when n >= 1 and one rate > 0; when no
 * rate is positive every part counts as equal). */
size_t bcl_split(size_t n, size_t count, const double *rate, const double *fixed_s, double steps,
                 unsigned block, double min_share, bcl_shard *out, bcl_split_why *why);

/* ---- the phases of a group (group.c) ---- */

/* Weighs every device for the split: the rate 'ballcl tune' stored for the
 * kernel its plan uses, else a short calibration, one device at a time, on
 * the first balls of state (the group's range), or with state NULL on the
 * model's random fill (an MPI rank weighs before it holds balls). A group
 * of one is weighed only when always (a rank's one device: the ranks'
 * split needs its rate); else it takes its range whole. */
int bcl_group_weigh(bcl_group *g, const float *state, bool always, bcl_error *e);
/* The sum of the weighed rates, ball-steps/s: what a rank offers the split
 * of the ranks. */
double bcl_group_rate(const bcl_group *g);
/* Sets the group's range [first, first + balls) and cuts it among the
 * devices by their weighed rates (bcl_split, BCL_SPLIT_MIN_SHARE: inside
 * an MPI rank as in one process); a group of one takes it whole. Plans are
 * resolved again for the new shards at the next load or exec. */
int bcl_group_cut(bcl_group *g, size_t first, size_t balls, bcl_error *e);

/* Host memory of the first device's runtime for reading the group's state
 * into (bcl_host_buffer_create on its context: pinned on GPU drivers). */
int bcl_group_host_buffer(bcl_group *g, size_t bytes, bcl_host_buffer **out, bcl_error *e);
/* Writes the launch costs measured in this process beside the binary cache
 * (bcl_context_keep_launch_costs of every device): call it after the run's
 * own files; the first failure is the error. */
int bcl_group_keep_launch_costs(bcl_group *g, bcl_error *e);

/* ---- the one run (group_exec.c) ---- */

/* What bcl_group_exec does: the run of every caller (the CLI on one device
 * or several, under MPI, Python's run and Context). Zero fields are off. */
typedef struct bcl_exec {
    uint64_t steps;
    /* A new request for this run (steps, K, local size, variant, sync), the
     * parameters and range staying the group's; NULL: the group's with
     * `steps`. Plans are resolved again only when it differs. */
    const bcl_plan_request *req;
    /* Uploaded before the steps (load_balls balls from ball `first` of the
     * range; a new count cuts the range again); NULL: the devices continue
     * from the state they hold. load_async: the upload is queued, and
     * `load` must stay put until the call returns; load_check: the device
     * checks it for NaN and infinity (bcl_exec_result.input_bad). */
    const float *load;
    size_t load_balls;
    bool load_async, load_check;
    /* The state after the steps is read into out (the range), queued
     * behind the last launch so that the host waits once; NULL: it stays on
     * the devices. */
    float *out;
    bool read_apart; /* read back after the steps' timing ends (a report that
                        times the steps alone), not queued behind them */
    /* The state before the steps (the range), for validation and for the
     * step of an overflow; NULL: neither. */
    const float *init;
    bool validate;
    uint64_t tol_ulp;
    /* A state from finite input that ends non-finite is an input error
     * naming the ball and step (the devices check it on the way back);
     * overflow_note is added to the message ("; output not written"). */
    bool check_overflow;
    const char *overflow_note;
    /* Steps in chunks of launches, each chunk twice the last until one
     * lasts chunk_ms (0: one chunk); between(arg) runs after each chunk but
     * the last and after each slice of the validation: non-zero stops the
     * run (bcl_group_exec returns BCL_EXEC_STOPPED). */
    double chunk_ms;
    int (*between)(void *arg);
    /* After the steps and before the read-back, always, with the run's
     * status; returns the status to go on with (MPI: a barrier and the
     * ranks' verdict). */
    int (*ran)(void *arg, int rc, bcl_error *e);
    void *arg;
} bcl_exec;

/* bcl_group_exec's return when between() stopped it. */
#define BCL_EXEC_STOPPED (-1)

typedef struct bcl_exec_result {
    double wall_ms;         /* the steps: first device's start to the last one's end,
                               summed over the chunks */
    double device_ms;       /* the slowest member's device time (profiling) */
    uint64_t launches;      /* the most launches of a member */
    bool host_clock;        /* a member's profiling failed its check */
    double max_launch_ms;   /* the longest launch of any member */
    double first_launch_ms; /* the longest warm-up launch (0: none needed) */
    bool plan_reused;       /* every member ran the plan of the previous exec */
    bool input_bad;         /* load_check: the devices found NaN or infinity in the load
                               (the steps ran; nothing was validated) */
    bcl_validation v;       /* all members' (ball indices of the whole state) */
} bcl_exec_result;

/* Runs x on the group, loaded (bcl_group_load) or loading x->load: the one
 * run path. Members' timing, validation and plans say what each did. */
int bcl_group_exec(bcl_group *g, const bcl_exec *x, bcl_exec_result *r, bcl_error *e);
/* Merges part (one shard's comparison) into total: sums, the largest
 * distance, the first mismatches in order. */
void bcl_validation_merge(bcl_validation *total, const bcl_validation *part);
/* The input error for the overflow o of a run of `steps` steps, as every
 * caller words it; note is added to the message. */
int bcl_overflow_fail(const bcl_overflow *o, uint64_t steps, const char *note, bcl_error *e);

#endif
