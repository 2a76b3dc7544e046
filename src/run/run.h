/* Running on a device, internal side: work-group sizing, kernel variants,
 * the launch plan and its rules, and what the measuring code needs of a
 * simulation. The plan and the simulation's public side are in
 * ballcl/ballcl.h. */
#ifndef BALLCL_RUN_H
#define BALLCL_RUN_H

#include "ocl/ocl.h"

/* ---- work-group sizing (launch.c) ---- */

/* The local size from device and kernel queries alone (pure, testable). */
size_t bcl_local_auto(size_t kernel_wg, size_t pref_multiple, size_t dev_max, size_t item_max0,
                      cl_uint compute_units, size_t n, char *why, size_t why_size);
size_t bcl_round_up(size_t n, size_t multiple);
/* Parses --local: auto|driver|tuned|<n>. */
int bcl_local_parse(const char *text, bcl_launch *l, bcl_error *e);

/* ---- kernel variants (variant.c, docs/BENCHMARK.md) ---- */

/* A model's kernels are "<model>_step" (one step) and "<model>_steps" (k
 * steps in registers); "<model>_step_<v>" and "<model>_steps_<v>" are
 * variants <v> of them. A variant name ending in x<B> (e.g. "x16") handles
 * B consecutive balls per work-item; any other name handles one. */
#define BCL_MAX_VARIANTS 8

typedef struct bcl_variant {
    char name[BCL_VARIANT_NAME]; /* "" for the base kernel */
    unsigned balls_per_item;
} bcl_variant;

/* Balls per work-item of a variant name (1 for NULL, "" and names without a
 * trailing x<B>). */
unsigned bcl_variant_balls(const char *variant);
/* The kernel suffix for bcl_context_kernel: "step", "steps", "steps_x16". */
void bcl_kernel_suffix(bool fused, const char *variant, char *out, size_t size);
/* The variants of the context's one-step (fused false) or k-step kernel in
 * the built program: the base kernel first, then the program's order. */
int bcl_variants_list(bcl_context *c, bool fused, bcl_variant *out, size_t cap, size_t *count,
                      bcl_error *e);
/* The documented default variant (docs/BENCHMARK.md): for the k-step kernel
 * on a CPU the widest up to sets (the model's cpu_sets, 0 counts as 1)
 * times native_width (CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, 0 counts as 4),
 * else the base kernel (""). _for keeps a work-item for each of
 * compute_units units for a plan of `balls` balls (0 balls: no such limit). */
const char *bcl_variant_default(uint64_t type, unsigned native_width, unsigned sets, bool fused,
                                const bcl_variant *list, size_t count);
const char *bcl_variant_default_for(uint64_t type, unsigned native_width, unsigned sets, bool fused,
                                    const bcl_variant *list, size_t count, size_t balls,
                                    unsigned compute_units);
/* The variant with the most balls per work-item up to limit ("" when none
 * is wider than one), keeping a work-item per unit as above. */
const char *bcl_variant_widest(unsigned limit, const bcl_variant *list, size_t count, size_t balls,
                               unsigned compute_units);
/* The test setting BALLCL_FORCE_BALLS_PER_ITEM (docs/testing.md): *balls is
 * its value, 0 when unset; an input error when it is no count. When set,
 * the k-step kernel's default variant on every device is the widest up to
 * it, in place of bcl_variant_default. */
int bcl_variant_forced(unsigned *balls, bcl_error *e);
/* A fixed K (the tuner's variant sweep, the survey's fused figure):
 * BCL_DEFAULT_K_CPU on a CPU, whose work-item loads, steps and stores in
 * turn where a GPU overlaps them (docs/BENCHMARK.md), else BCL_DEFAULT_K. */
unsigned bcl_default_k(uint64_t type);

/* ---- the launch plan (plan.c) and its K rule (k_rule.c) ---- */

/* Resolves r on c into *p: K, variant, kernel and local size. An unknown
 * variant, or a local size beyond the kernel's limit, is an input error. */
int bcl_plan_resolve(bcl_context *c, const bcl_plan_request *r, bcl_plan *p, bcl_error *e);
/* The tuned rule of every run (docs/PERFORMANCE.md): the record 'ballcl
 * tune' stored is taken whole when r chooses none of K, variant and local
 * size. bcl_group_open applies it; nothing else restates it. */
bool bcl_plan_tuned_rule(const bcl_plan_request *r);
/* Whether plan p of r used the tuned record, and why not ("": none). */
void bcl_plan_tuned_note(bcl_context *c, const bcl_plan_request *r, const bcl_plan *p, char *out,
                         size_t size);
/* Steps of the validation that precedes a timing, for K steps per launch:
 * a few single steps, or one full and one partial launch. */
uint64_t bcl_check_steps(unsigned k);
/* The K rule (pure; docs/PERFORMANCE.md): the smallest K with
 * fixed_us <= share * K * step_us (fixed_us: the launch and loading and
 * storing its balls; step_us: a step), lowered so that
 * fixed_us + K * step_us <= budget_ms, at most steps (0: open), at least 1.
 * *reason gets "overhead", "budget" or "steps" (the whole run in one
 * launch); *launch_ms (optional) the launch time it expects. */
unsigned bcl_k_rule(double fixed_us, double step_us, uint64_t steps, double budget_ms, double share,
                    const char **reason, double *launch_ms);
/* The budget from $BALLCL_LAUNCH_BUDGET_MS, else BCL_LAUNCH_BUDGET_MS; a
 * value that is not 0.1 to 600000 ms is an input error naming the variable
 * (for a --launch-budget-ms value, what names the option). */
int bcl_launch_budget_env(double *ms, bcl_error *e);
int bcl_launch_budget_parse(const char *text, const char *what, double *ms, bcl_error *e);

/* ---- the launch costs the K rule needs (kept: launch_costs.c; measured:
 * plan.c, which resolves the plans the measurement runs) ---- */

/* The launch costs of c's device and model: kept in c, else read from
 * <cache>/launch/<model>-<device key>.json, else measured (50 ms at most,
 * default variant and local size) and kept there; out->source says which,
 * out->note why not kept. An OpenCL failure measuring is an error. */
int bcl_launch_costs_get(bcl_context *c, const float *params, bcl_launch_costs *out, bcl_error *e);
/* The kept file's figures into k (zeroed first; known, source "stored")
 * when they can be used; else false with k->note saying why (empty: no
 * file) and k->warn when a file is there but unusable. *keep: a measurement
 * may be kept in that file. */
bool bcl_launch_costs_read(bcl_context *c, bcl_launch_costs *k, bool *keep);
/* Writes the launch costs c measured beside the binary cache, once (no-op
 * when read from there or the cache is off); called after the run's own
 * files, to warn on failure (harmless: the next process measures again).
 * bcl_context_destroy runs bcl_launch_costs_keep, the same silently. */
int bcl_context_keep_launch_costs(bcl_context *c, bcl_error *e);
void bcl_launch_costs_keep(bcl_context *c);
/* What a launch over `balls` balls costs by k: its fixed part (the launch,
 * loading and storing every ball once) and one step (the full-device rate,
 * never below the latency floor), in microseconds. */
void bcl_launch_costs_estimate(const bcl_launch_costs *k, size_t balls, double *fixed_us,
                               double *step_us);

/* ---- the tuned file, read for a plan (tuned_read.c) ---- */

/* <cache_dir>/<folder>/<model>-<device key>.json, kept by 'ballcl tune'
 * ("tuned") or the launch costs ("launch"); cache_dir NULL: bcl_cache_dir's;
 * `what` names it when too long. bcl_tuned_path is the tuned file's. */
int bcl_cache_file_path(const char *cache_dir, const char *folder, const char *what,
                        const bcl_device_info *d, const bcl_model *m, char *out, size_t size,
                        bcl_error *e);
int bcl_tuned_path(const bcl_device_info *d, const bcl_model *m, char *out, size_t size,
                   bcl_error *e);
#define BCL_TUNED_FORMAT "ballcl-tuned/1"
/* A tuned file lists a few hundred candidates at most: a larger one is an
 * input error, never read. */
#define BCL_MAX_TUNED_BYTES ((uint64_t)16 << 20)
/* Loads the tuned file of (d, m); none: BCL_OK, both entries not found. One
 * that does not parse, or of another version, device or model, is an input
 * error naming the file. */
int bcl_tuned_load(const bcl_device_info *d, const bcl_model *m, bcl_tuned *t, bcl_error *e);
/* Reads one entry of a tuned file (what, the entry's name, and path for
 * messages); a missing or null entry is "not found". */
struct json_t;
int bcl_tuned_entry_parse(struct json_t *j, const char *what, const char *path, bool fused,
                          bcl_tuned_entry *t, bcl_error *e);
/* c's tuned record, read at the first call and kept with c; an unusable
 * file counts as nothing tuned, *problem (optional) saying why, else NULL. */
const bcl_tuned *bcl_context_tuned(bcl_context *c, const char **problem);

/* ---- host memory for reading back (host_buffer.c) ---- */

/* A host buffer of c's device (ballcl/ballcl.h, bcl_group_host_buffer). */
int bcl_host_buffer_create(bcl_context *c, size_t bytes, bcl_host_buffer **out, bcl_error *e);

/* ---- validation (validate.c) ---- */

/* ULP distance between two floats: 0 for the same bits (NaN included),
 * UINT64_MAX for a NaN against anything else. */
uint64_t bcl_ulp_distance(float a, float b);
/* Merges part (one slice's or shard's comparison) into total: sums, the
 * largest distance, the first mismatches in order. */
void bcl_validation_merge(bcl_validation *total, const bcl_validation *part);
/* Compares got against want (n balls), accumulating into v. */
void bcl_compare(const float *want, const float *got, size_t n, size_t first_ball, uint64_t tol_ulp,
                 bcl_validation *v);

/* ---- the simulation (sim.c) ---- */

/* A simulation of n balls whose state is `block` (nblock balls) repeated:
 * the block is written once per buffer and copied on the device, so that a
 * large state costs neither host memory nor a transfer of its size (the
 * launch-cost measurement's full device). */
int bcl_sim_create_tiled(bcl_context *c, const float *block, size_t nblock, size_t n, bcl_sim **out,
                         bcl_error *e);

/* One launch of p's kernel (p->steps_per_launch steps) over every buffer
 * of s, queued and not waited for; *ev (optional) is the event of the last
 * buffer's launch, which the caller releases. */
int bcl_sim_enqueue(bcl_sim *s, const bcl_plan *p, cl_event *ev, bcl_error *e);
/* The context and ball count the simulation was created with. */
bcl_context *bcl_sim_context(const bcl_sim *s);
size_t bcl_sim_balls(const bcl_sim *s);

/* Progress of long runs (`ballcl run`, ballcl.run(progress=)): bcl_sim_run
 * calls fn(arg, done, steps) at most every every_ms, from the events the run
 * waits on anyway (a queue window's; once all is queued, a sampled launch's,
 * at most LAUNCH_SAMPLES), and at the end; not in calibrations.
 * Process-wide, from each device's thread. NULL: none, no added calls. */
typedef void (*bcl_steps_fn)(void *arg, uint64_t done, uint64_t steps);
void bcl_sim_progress(bcl_steps_fn fn, void *arg, double every_ms);
/* The same for bcl_validate's C reference (steps done over all balls, the
 * first report after every_ms, the last with done == steps). NULL: none. */
void bcl_validate_progress(bcl_steps_fn fn, void *arg, double every_ms);

/* Launches queued at most between two waits of bcl_sim_run (host memory
 * stays flat whatever the step count). */
#define BCL_QUEUE_WINDOW 1024

/* The one check that n balls fit, before anything is allocated: n >= 1,
 * the state fits the device, and host_copies copies of it (plus a CPU
 * device's own, in host memory) fit what this process may use; else
 * BCL_EXIT_INPUT naming `what` and both sizes. */
int bcl_memory_fit(const bcl_device_info *dev, size_t n, unsigned host_copies, const char *what,
                   bcl_error *e);
/* Allocates device buffers for n balls (several when one allocation is too
 * small) and uploads state (4 floats a ball). n was checked by
 * bcl_memory_fit; a count the device cannot hold fails as allocation does. */
int bcl_sim_create(bcl_context *c, const float *state, size_t n, bcl_sim **out, bcl_error *e);
/* One launch of p's kernel over no balls, so that work a driver defers to
 * the first launch (PoCL compiles per local size) is not timed as a step.
 * *ms (optional) is its wall time. */
int bcl_sim_warmup(bcl_sim *s, const bcl_plan *p, double *ms, bcl_error *e);
/* Applies `steps` steps as plan p says; the state stays on the device. */
int bcl_sim_run(bcl_sim *s, const bcl_plan *p, uint64_t steps, bcl_sim_timing *t, bcl_error *e);
/* Queues a scan of the state for NaN and infinity (src/ocl/state_check.c)
 * and the read-back of its verdict into *flag (1: some float is not
 * finite), valid once a call that waits (bcl_sim_run, _read, _finish)
 * returns. Whether, not where: the host scans for the ball. */
int bcl_sim_check_finite(bcl_sim *s, uint32_t *flag, bcl_error *e);
/* bcl_sim_run, then the read-back into state queued behind it, so the host
 * waits once (one round trip fewer); with flag, bcl_sim_check_finite queued
 * between. t->wall_ms includes the read-back; device_ms does not. */
int bcl_sim_run_read_check(bcl_sim *s, const bcl_plan *p, uint64_t steps, float *state,
                           uint32_t *flag, bcl_sim_timing *t, bcl_error *e);
/* Reads the state back into state (n balls). */
int bcl_sim_read(bcl_sim *s, float *state, bcl_error *e);
/* Uploads state again (to repeat a run from the same start). */
int bcl_sim_write(bcl_sim *s, const float *state, bcl_error *e);
/* Uploads a state of n >= 1 balls, keeping the buffers when they hold n,
 * else replacing them (old ones freed first). After a failure the
 * simulation holds no balls until a load succeeds. */
int bcl_sim_load(bcl_sim *s, const float *state, size_t n, bcl_error *e);
/* bcl_sim_load, the upload not waited for (the Python module checks for
 * NaN meanwhile): state stays unchanged until a call that waits returns. */
int bcl_sim_load_async(bcl_sim *s, const float *state, size_t n, bcl_error *e);
/* Waits until everything queued for the simulation is done. */
int bcl_sim_finish(bcl_sim *s, bcl_error *e);
/* The number of device buffers the state is split into. */
size_t bcl_sim_buffers(const bcl_sim *s);
void bcl_sim_destroy(bcl_sim *s);

#endif
