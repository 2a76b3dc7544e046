/* Running on a device, internal side: work-group sizing, kernel variants,
 * the rules the launch plan applies, and what the measuring code needs of
 * a simulation. The plan and the simulation's public side are in
 * ballcl/ballcl.h. */
#ifndef BALLCL_RUN_H
#define BALLCL_RUN_H

#include "ocl/ocl.h"

/* ---- work-group sizing (launch.c) ---- */

/* The local size from device and kernel queries alone (pure, testable). */
size_t bcl_local_auto(size_t kernel_wg, size_t pref_multiple, size_t dev_max, size_t item_max0,
                      cl_uint compute_units, size_t n, char *why, size_t why_size);
size_t bcl_round_up(size_t n, size_t multiple);

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
/* Lists the variants of the one-step (fused false) or k-step kernel of the
 * context's model, found in the built program by name: the base kernel
 * first, then the others in the program's order. */
int bcl_variants_list(bcl_context *c, bool fused, bcl_variant *out, size_t cap, size_t *count,
                      bcl_error *e);
/* The documented default variant (docs/BENCHMARK.md): on a CPU device the
 * k-step kernel uses the available variant with the most balls per
 * work-item up to sets times the native float width (native_width, from
 * CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT; 0 when unknown counts as 4; sets is
 * the model's cpu_sets, 0 counts as 1): for the seed (4 sets) x32 on AVX2,
 * x64 on AVX-512. Everything else uses the base kernel. Returns a name from
 * list (or ""). */
const char *bcl_variant_default(uint64_t type, unsigned native_width, unsigned sets, bool fused,
                                const bcl_variant *list, size_t count);
/* The variant with the most balls per work-item up to limit ("" when none
 * is wider than one). */
const char *bcl_variant_widest(unsigned limit, const bcl_variant *list, size_t count);
/* The same, keeping a work-item for each of compute_units units when the
 * plan has `balls` balls (0 balls: no such limit). */
const char *bcl_variant_widest_filling(unsigned limit, const bcl_variant *list, size_t count,
                                       size_t balls, unsigned compute_units);
/* The test setting BALLCL_FORCE_BALLS_PER_ITEM (docs/testing.md): *balls is
 * its value, 0 when unset; an input error when it is no count. When set,
 * the k-step kernel's default variant on every device is the widest up to
 * it, in place of bcl_variant_default. */
int bcl_variant_forced(unsigned *balls, bcl_error *e);
/* The same for a plan of `balls` balls on compute_units units: the widest
 * such variant that still gives every compute unit a work-item (0 balls:
 * no such limit). */
const char *bcl_variant_default_for(uint64_t type, unsigned native_width, unsigned sets, bool fused,
                                    const bcl_variant *list, size_t count, size_t balls,
                                    unsigned compute_units);
/* K where a fixed K is wanted (the tuner's variant sweep, the survey's
 * fused figure): BCL_DEFAULT_K, or BCL_DEFAULT_K_CPU on a CPU. A GPU
 * overlaps the loads and stores of some work-items with the additions of
 * others; a CPU work-item loads, steps and stores in turn, and the 32
 * bytes a ball moves per launch cost as much as about 70 steps of
 * additions (docs/BENCHMARK.md). A plain run's K is the budget rule's
 * (k_rule.c). */
unsigned bcl_default_k(uint64_t type);

/* ---- the launch costs the K rule needs (src/run/launch_costs.c) ---- */

/* The launch costs of the context's device and model: kept in the context
 * once known, else read from <cache>/launch/<model>-<device key>.json,
 * else measured (about 50 ms at most, with the model's default variant and
 * local size, params its parameters) and kept there; out->source says
 * which, out->note why they were not kept. An OpenCL failure while
 * measuring is an error. */
int bcl_launch_costs_get(bcl_context *c, const float *params, bcl_launch_costs *out, bcl_error *e);
/* Writes launch costs measured in this process beside the binary cache
 * (once; failing to is no error). bcl_context_destroy calls it, so that
 * the file comes after the run's own outputs. */
void bcl_launch_costs_keep(bcl_context *c);
/* What a launch over `balls` balls costs by k: its fixed part (the launch,
 * loading and storing every ball once) and one step (the full-device rate,
 * never below the latency floor), in microseconds. */
void bcl_launch_costs_estimate(const bcl_launch_costs *k, size_t balls, double *fixed_us,
                               double *step_us);

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

/* Launches queued at most between two waits of bcl_sim_run (host memory
 * stays flat whatever the step count). */
#define BCL_QUEUE_WINDOW 1024

/* ---- the tuned file, read for a plan (src/run/tuned_read.c) ---- */
#define BCL_TUNED_FORMAT "ballcl-tuned/1"
/* A tuned file lists a few hundred candidates at most: a larger one is an
 * input error, never read. */
#define BCL_MAX_TUNED_BYTES ((uint64_t)16 << 20)
/* The tuned file of (d, m) under cache_dir (NULL: bcl_cache_dir's). */
int bcl_tuned_path_in(const char *cache_dir, const bcl_device_info *d, const bcl_model *m,
                      char *out, size_t size, bcl_error *e);
/* bcl_tuned_load from the cache folder cache_dir (NULL: bcl_cache_dir's),
 * for a context given its own folder. */
int bcl_tuned_load_in(const char *cache_dir, const bcl_device_info *d, const bcl_model *m,
                      bcl_tuned *t, bcl_error *e);
/* Reads one entry of a tuned file (what, the entry's name, and path for
 * messages); a missing or null entry is "not found". */
struct json_t;
int bcl_tuned_entry_parse(struct json_t *j, const char *what, const char *path, bool fused,
                          bcl_tuned_entry *t, bcl_error *e);
/* Forgets every entry of t whose variant the kernels of c's model do not
 * define (a tuned file from other kernels): the default rule then
 * decides. warning gets a line naming the file, or "" when all is well.
 * bcl_context_tuned applies it. */
void bcl_tuned_check(bcl_context *c, bcl_tuned *t, char *warning, size_t size);

/* ---- validation (validate.c) ---- */

/* ULP distance between two floats: 0 for the same bits (NaN included),
 * UINT64_MAX for a NaN against anything else. */
uint64_t bcl_ulp_distance(float a, float b);
/* Compares got against want (n balls), accumulating into v. */
void bcl_compare(const float *want, const float *got, size_t n, size_t first_ball, uint64_t tol_ulp,
                 bcl_validation *v);

/* ---- the split of a run over several devices (group_split.c) ---- */

/* Cuts n balls into contiguous shards, one per device in the given order,
 * in proportion to rate[i] (ball-steps/s) so that all finish together. A
 * device whose fixed cost fixed_s[i] (seconds per run whatever its balls:
 * its launches times its per-launch overhead) would make its share end
 * later than the others could end with its balls too gets none; so does one
 * whose share is under half a block; why[i] says which. Shards are whole
 * blocks but the last device's with balls, which also takes n % block;
 * count 0 for a device without balls. Returns the number of devices with
 * balls (>= 1 when n >= 1 and one rate > 0). */
size_t bcl_split(size_t n, size_t count, const double *rate, const double *fixed_s, double steps,
                 unsigned block, bcl_shard *out, bcl_split_why *why);

#endif
