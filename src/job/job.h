/* The one run path, internal side (docs/DESIGN.md, "One run path"): a
 * group of devices running a range of balls, its split, and the phases
 * bcl_group_exec runs. Its public side is in ballcl/ballcl.h. */
#ifndef BALLCL_JOB_H
#define BALLCL_JOB_H

#include "run/run.h"

#include <jansson.h>

/* ---- the split of a run over several devices or ranks (group_split.c) ---- */

/* Cuts n balls into contiguous shards, one per part (device or rank) in
 * order, by rate[i] (ball-steps/s) and fixed_s[i] (seconds per run), as
 * group_split.c says: a part left out gets count 0 and why[i] says why;
 * min_share is BCL_SPLIT_MIN_SHARE for devices, 0 for ranks. Shards are
 * whole blocks but the last part's with balls, which takes n % block too.
 * Returns the number of parts with balls (with no positive rate every part
 * counts as equal). */
size_t bcl_split(size_t n, size_t count, const double *rate, const double *fixed_s, double steps,
                 unsigned block, double min_share, bcl_shard *out, bcl_split_why *why);

/* ---- the phases of a group (group.c) ---- */

/* Weighs every device for the split: the rate 'ballcl tune' stored for the
 * kernel its plan uses, else a short calibration, one device at a time, on
 * the first balls of state (the group's range), or with state NULL on the
 * model's random fill (an MPI rank weighs before it holds balls). A group
 * of one is weighed only when always (the ranks' split needs its rate). */
int bcl_group_weigh(bcl_group *g, const float *state, bool always, bcl_error *e);
/* The sum of the weighed rates (ball-steps/s): a rank's in the ranks' split. */
double bcl_group_rate(const bcl_group *g);
/* Sets the group's range [first, first + balls) and cuts it among the
 * devices by their weighed rates (bcl_split, BCL_SPLIT_MIN_SHARE); a group
 * of one takes it whole. Plans are resolved again at the next load or exec. */
int bcl_group_cut(bcl_group *g, size_t first, size_t balls, bcl_error *e);

/* Resolves each plan for its shard, uploads the shard from state (the
 * group's range) and does the warm-up launch, one thread per device: what
 * an MPI rank does before its timed exec. */
int bcl_group_load(bcl_group *g, const float *state, bcl_error *e);
/* The simulation of member i's shard once loaded (NULL without balls), for
 * timing it alone (bench). */
bcl_sim *bcl_group_sim(bcl_group *g, size_t i);
/* Writes the launch costs measured in this process beside the binary cache
 * (bcl_context_keep_launch_costs of every device): call it after the run's
 * own files; the first failure is the error. */
int bcl_group_keep_launch_costs(bcl_group *g, bcl_error *e);

/* ---- the result of a run (result.c) ---- */

/* The result of the run x on g that returned r, over `balls` balls: the one
 * JSON tree of `ballcl run --json`, Python's Result and the MPI report
 * (docs/DESIGN.md, "Report and JSON"). The first device with balls leads
 * (device, launch, cache, tuned); "devices" has an entry per member,
 * "aggregate" is there with several. NULL when out of memory. */
json_t *bcl_run_json(const bcl_group *g, const bcl_exec *x, const bcl_exec_result *r, size_t balls);
/* The tree of a run on a group of one, m, that ran the plan of the run
 * whose tree is `last` (left as it is), over as many balls and steps:
 * last's unchanged parts shared (json_copy), what a run changes made anew. */
json_t *bcl_run_json_again(const json_t *last, const bcl_group_member *m, const bcl_exec *x,
                           const bcl_exec_result *r, size_t balls);
/* Why a plan's K (docs/PERFORMANCE.md): k_reason, the launch budget, the
 * expected launch, the launch costs, as the launch object has them. */
json_t *bcl_k_json(const bcl_plan *p);
/* Microseconds a step, from ms over `steps` steps (0 without steps), and
 * the ball-steps a second of `balls` balls at that (0 without time). */
double bcl_us_per_step(double ms, uint64_t steps);
double bcl_ball_steps_per_s(size_t balls, double us_per_step);
/* Why a run's timing is the host clock's: d's verdict, or (in a run over
 * several devices, where d leads) another device's. */
const char *bcl_clock_note(const bcl_device_info *d);

#endif
