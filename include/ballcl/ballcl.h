/*
 * ballcl — the public API: run N balls for S steps on an OpenCL device and
 * check the result bit for bit against the model's C reference.
 *
 * A program embedding ballcl finds devices, opens a context (a device with
 * the model's built program), resolves a launch plan, creates a simulation
 * from a state, runs it, reads the state back and validates it. The
 * measuring side (timers, the tuner, the survey) is in ballcl/measure.h.
 *
 * Errors: every function that can fail takes a bcl_error and returns one of
 * the BCL_EXIT_* classes (0 on success) with a one-line message in it. The
 * library never prints and never exits.
 *
 * Lifetimes (what must outlive what):
 *   bcl_device_list  outlives every context made from one of its devices
 *                    (a context copies the device's description, but its
 *                    OpenCL handles belong to the list's platforms);
 *   bcl_context      outlives its plans' use and every simulation made on it;
 *   bcl_sim          is destroyed before its context;
 *   bcl_plan         is plain data: copy it, keep it, use it with any
 *                    simulation of the context it was resolved for.
 * Nothing here is thread-safe on one object; separate contexts may be used
 * from separate threads.
 *
 * This header needs neither the OpenCL nor any JSON headers.
 */
#ifndef BALLCL_BALLCL_H
#define BALLCL_BALLCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BALLCL_VERSION "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------ */

enum {
    BCL_OK = 0,
    BCL_EXIT_MISMATCH = 1, /* validation found differing results */
    BCL_EXIT_INPUT = 2,    /* usage or input error */
    BCL_EXIT_RUNTIME = 3,  /* OpenCL or other runtime failure */
};

typedef struct bcl_error {
    int code;       /* one of BCL_EXIT_*, 0 when no error was set */
    char msg[1024]; /* one line, lower case, no full stop */
    char *detail;   /* optional multi-line text (a build log); owned, may be NULL */
    /* For a failed OpenCL call (msg names them too): the function
     * ("clFinish") and the status's name ("CL_OUT_OF_RESOURCES"); empty
     * for any other error. Set with the message, by the first error. */
    char cl_call[64];
    char cl_status[64];
} bcl_error;

/* Sets the error (the first error wins) and returns its code. */
int bcl_fail(bcl_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Frees the detail and resets e for reuse. */
void bcl_error_clear(bcl_error *e);
/* Copies in to out (size bytes, NUL-terminated) for a terminal: each
 * control character (C0 below 0x20, DEL 0x7f, and the C1 controls U+0080
 * to U+009F) and each byte that is not part of well-formed UTF-8 is written
 * as \xNN, byte by byte; printable UTF-8 is kept. Text from users, files
 * and drivers shown on a terminal goes through it (bcl_fail does it to
 * every message). Never cuts a character in half. Returns the length
 * written. */
size_t bcl_escape(const char *in, char *out, size_t size);

/* Parses a whole decimal number in [min, max] for the option `what`:
 * BCL_OK, or BCL_EXIT_INPUT with a message naming `what`. */
int bcl_parse_u64(const char *text, const char *what, uint64_t min, uint64_t max, uint64_t *out,
                  bcl_error *e);

/* ---- devices ------------------------------------------------------------ */

/* Device type bits, as CL_DEVICE_TYPE_* */
#define BCL_DEVICE_CPU         (1u << 1)
#define BCL_DEVICE_GPU         (1u << 2)
#define BCL_DEVICE_ACCELERATOR (1u << 3)

typedef struct bcl_device_info {
    void *platform, *device; /* the cl_platform_id and cl_device_id, for callers using OpenCL */
    unsigned platform_index, device_index; /* the selector "P:D" */
    char platform_name[256];
    char platform_version[256];
    char name[256];
    char vendor[256];
    char version[256];
    char driver[256];
    char c_version[256];
    uint64_t type; /* BCL_DEVICE_* bits */
    uint32_t compute_units;
    uint32_t clock_mhz;
    uint32_t address_bits;
    size_t max_work_group;
    size_t max_item_sizes[3];
    uint64_t global_mem;
    uint64_t local_mem;
    uint64_t max_alloc;
    bool fp64, fp16;
    size_t preferred_multiple;          /* CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
                                           (OpenCL 3.0); 0 when the driver lacks it */
    uint32_t native_vector_width_float; /* CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT */
} bcl_device_info;

typedef struct bcl_device_list {
    bcl_device_info *dev;
    size_t count;
    /* One line per platform whose devices could not be listed ("clGetDeviceIDs
     * failed on platform 'X': CL_STATUS (hint); its devices are left out"),
     * separated by newlines; empty when every platform answered. */
    char warnings[1024];
} bcl_device_list;

/* Enumerates every device of every platform. No platform at all is an error
 * (BCL_EXIT_RUNTIME) that says how to install one. A platform whose devices
 * cannot be listed is left out with a line in list->warnings for the caller
 * to print, so that one broken driver does not hide the others; when no
 * platform gives a device, its failure is the error. */
int bcl_devices_enumerate(bcl_device_list *list, bcl_error *e);
void bcl_devices_free(bcl_device_list *list);
/* Picks one device of list by selector text: "P:D", cpu, gpu,
 * accelerator, or part of a device or platform name; NULL or "" is the
 * first GPU, accelerator, then CPU. Unknown or ambiguous selectors are
 * input errors listing the candidates. With list NULL only the text is
 * checked, so that a malformed selector is refused before any device is
 * opened. */
int bcl_device_select(const bcl_device_list *list, const char *selector, size_t *index,
                      bcl_error *e);
/* Most devices one run uses. */
#define BCL_MAX_DEVICES 64
/* Picks several devices: a comma-separated list of selectors ("0:0,0:1",
 * "gpu,cpu"), each as bcl_device_select takes it, or "all" (every device
 * of every platform), into index[] (at most cap, in the order given). One
 * selector, NULL or "" is bcl_device_select's single device; an empty
 * item, or a device named twice, is an input error. With list NULL only
 * the text is checked (nothing is written to index), as for
 * bcl_device_select. */
int bcl_device_select_list(const bcl_device_list *list, const char *selectors, size_t *index,
                           size_t cap, size_t *count, bcl_error *e);
/* "cpu", "gpu", "accelerator" or "other". */
const char *bcl_device_type_name(uint64_t type);
/* The device's CL_DEVICE_EXTENSIONS text, malloc'ed (the caller frees it),
 * or NULL with e set (the query failed, or out of memory). */
char *bcl_device_extensions(const bcl_device_info *d, bcl_error *e);
/* The device as the JSON object `ballcl devices --json` lists (selector,
 * default, names, type, limits, versions, extensions, ...; is_default sets
 * "default"), as compact UTF-8 JSON text, malloc'ed (the caller frees it);
 * NULL with e set when out of memory. Every field a device has is here. */
char *bcl_device_json(const bcl_device_info *d, bool is_default, bcl_error *e);

/* ---- models ------------------------------------------------------------- */

#define BCL_MAX_PARAMS 8

typedef enum { BCL_INIT_SEED, BCL_INIT_RANDOM } bcl_init;

/* One named parameter of a model: an option --opt taking `count` floats
 * separated by commas. */
typedef struct bcl_param {
    const char *opt;      /* long option name, e.g. "gravity" */
    const char *help;     /* one line */
    unsigned count;       /* floats taken, 1 or 2 */
    const char *defaults; /* default value as text, parsed like user input */
} bcl_param;

typedef struct bcl_model {
    const char *name;
    const char *summary;
    const char *kernel_file; /* file name under cl/ */
    /* kernels "<name>_step" (one step) and "<name>_steps" (k steps) take
     * (global float4 *s, uint n, uint k, float p0, float p1, ...). */
    const bcl_param *params;
    unsigned nparams;
    /* float32 adds/muls etc. per ball-step, for rate figures */
    unsigned flops_per_step;
    /* Every float32 operation of a branch-free step (comparisons and
     * selections too): what a vectorised kernel must issue per ball-step,
     * the operation count its bound is figured from (docs/PERFORMANCE.md). */
    unsigned ops_per_step;
    /* Independent sets of the native float width a CPU work-item of the
     * k-step kernel should hold (the variant rule, docs/BENCHMARK.md):
     * enough to cover the latency of a step, few enough for the registers. */
    unsigned cpu_sets;
    /* Checks parameter values (floats in declaration order). */
    int (*check)(const float *p, bcl_error *e);
    /* Fills n balls (4 floats each) deterministically from seed: state[0]
     * is ball `first` of the whole state, and ball i depends only on seed
     * and i (each ball takes a fixed number of PRNG draws and the
     * generator jumps ahead), so any cut of a run into slices, filled
     * apart, gives the bits of one fill from ball 0. */
    void (*init)(float *state, size_t first, size_t n, bcl_init how, uint64_t seed, const float *p);
    /* The scalar C reference: applies `steps` steps to each of n balls. */
    void (*reference)(float *state, size_t n, uint64_t steps, const float *p);
    /* The rectangle (x0, y0, x1, y1) the model keeps every ball in, for
     * pictures; NULL when balls are free (the picture then frames them). */
    void (*box)(const float *p, float box[4]);
} bcl_model;

extern const bcl_model *const bcl_models[];
extern const size_t bcl_model_count;
const bcl_model *bcl_model_find(const char *name);
/* Number of floats a model's parameters take. */
unsigned bcl_model_param_floats(const bcl_model *m);
/* m->init of balls [first, first + n) into state, in slices on every host
 * core (OpenMP): the same bits as one call, as ball i depends on seed and i
 * only. */
void bcl_model_fill(const bcl_model *m, float *state, size_t first, size_t n, bcl_init how,
                    uint64_t seed, const float *p);
/* Parses the defaults into p. */
void bcl_model_param_defaults(const bcl_model *m, float *p);
/* Parses text for parameter i into p (at the parameter's float offset). */
int bcl_model_param_parse(const bcl_model *m, unsigned i, const char *text, float *p, bcl_error *e);

/* ---- the device context ------------------------------------------------- */

typedef struct bcl_context bcl_context;

typedef struct bcl_context_opts {
    bool use_cache;        /* load and store built programs in the binary cache */
    const char *cache_dir; /* an existing folder instead of bcl_cache_dir()'s; NULL: that */
} bcl_context_opts;

typedef struct bcl_build_report {
    bool cache_hit;    /* the program came from the cache */
    double program_ms; /* from creating the program to a built one */
    char note[256];    /* why the cache missed, or was skipped */
    bool cache_stored; /* bcl_context_cache_store wrote an entry */
    double store_ms;   /* time bcl_context_cache_store took (0 when nothing was stored) */
    char warning[512]; /* something the user should see (an unwritable cache folder);
                          empty when all went well */
} bcl_build_report;

/* Creates a context, a profiling queue and the model's built program on
 * dev (rep, optional, says how the program was obtained). dev is copied. */
int bcl_context_create(const bcl_device_info *dev, const bcl_model *m, const bcl_context_opts *opts,
                       bcl_context **out, bcl_build_report *rep, bcl_error *e);
/* Stores the built program in the binary cache (once; a no-op when it came
 * from the cache or the cache is off). Call it after the first launch:
 * PoCL adds the code it compiles at a launch to the binary. A failure to
 * write is no error: it goes into rep->warning (rep may be NULL).
 * bcl_context_destroy stores too if this was never called. */
void bcl_context_cache_store(bcl_context *c, bcl_build_report *rep);
void bcl_context_destroy(bcl_context *c);
/* Writes the launch costs this context measured for the K rule beside the
 * binary cache (docs/PERFORMANCE.md), once; a no-op when they were read
 * from there, or the cache is off. Call it after the run's own files are
 * written, to warn when it fails (failing is harmless: the next process
 * measures again); bcl_context_destroy does it, silently, if never called. */
int bcl_context_keep_launch_costs(bcl_context *c, bcl_error *e);
/* The options every kernel is built with. */
const char *bcl_build_options(void);

/* ---- the launch plan (docs/DESIGN.md, "The launch plan") ------------------ */

typedef enum { BCL_SYNC_END, BCL_SYNC_EVERY } bcl_sync;
typedef enum { BCL_LOCAL_AUTO, BCL_LOCAL_DRIVER, BCL_LOCAL_TUNED, BCL_LOCAL_FIXED } bcl_local_mode;

#define BCL_VARIANT_NAME 24
/* K when the launch costs of the device could not be measured (the rule
 * below falls back to it, bounded by S): 100 on a GPU, 1000 on a CPU
 * (bcl_default_k in src/run/run.h says why). */
#define BCL_DEFAULT_K     100
#define BCL_DEFAULT_K_CPU 1000
/* The longest a launch of the default plan should take, in milliseconds
 * (docs/PERFORMANCE.md, "Steps per launch"): short enough for progress,
 * Ctrl-C and display watchdogs, long enough that a launch's fixed cost is
 * paid off. --launch-budget-ms or $BALLCL_LAUNCH_BUDGET_MS change it. */
#define BCL_LAUNCH_BUDGET_MS 50.0
/* The share of a launch its fixed cost (launch overhead, loading and
 * storing every ball once) may take: K is the smallest that keeps it
 * under this. */
#define BCL_LAUNCH_OVERHEAD_SHARE 0.02

/* What the K rule knows of a device for one model: measured once (at most
 * about 50 ms) and kept beside the binary cache
 * (<cache>/launch/<model>-<device key>.json), so repeated runs get the
 * same plan. Times are from the host clock around enqueue and wait. */
typedef struct bcl_launch_costs {
    bool known;              /* measured or read: the rule can use it */
    double launch_us;        /* fixed cost of one launch among back-to-back launches */
    double io_ns_per_ball;   /* loading and storing one ball, once per launch */
    double step_ns_per_ball; /* one step of one ball with the device full */
    double step_floor_us;    /* one step of a launch over few balls: the latency floor */
    size_t fill_balls;       /* the balls of the full-device measurement */
    const char *source;      /* "measured", "stored" or "none" (a static string) */
    double measure_ms;       /* what measuring cost in this process; 0 when stored */
    char note[200];          /* why they were not read or cannot be kept; empty when all
                                is well */
    bool warn;               /* note says why a kept file could not be used: the plan
                                passes it on as its warning */
    bool unsaved;            /* measured here, not yet written (bcl_context_destroy
                                writes them) */
} bcl_launch_costs;

/* The K rule (pure; docs/PERFORMANCE.md): for a launch whose fixed cost
 * is fixed_us (the launch overhead plus loading and storing its balls) and
 * whose steps cost step_us each, the smallest K with
 * fixed_us <= share * K * step_us, lowered so that
 * fixed_us + K * step_us <= budget_ms, and at most steps (0: open). Never
 * below 1. *reason gets "overhead" (the smallest K that pays off the fixed
 * cost), "budget" (lowered to the budget) or "steps" (the whole run in
 * one launch); *launch_ms (optional) the launch time it expects. */
unsigned bcl_k_rule(double fixed_us, double step_us, uint64_t steps, double budget_ms, double share,
                    const char **reason, double *launch_ms);
/* The budget from $BALLCL_LAUNCH_BUDGET_MS, else BCL_LAUNCH_BUDGET_MS. A
 * value that is not a number of milliseconds from 0.1 to 600000 is an
 * input error naming the variable. */
int bcl_launch_budget_env(double *ms, bcl_error *e);
/* Parses a --launch-budget-ms value (what names the option or variable). */
int bcl_launch_budget_parse(const char *text, const char *what, double *ms, bcl_error *e);

typedef struct bcl_launch {
    bcl_local_mode mode;
    size_t local;    /* 0 when the driver chooses */
    const char *how; /* resolved: "auto", "driver", "tuned", "user" (a static string) */
    char why[160];   /* resolved: how the local size was derived */
} bcl_launch;

/* Parses --local: auto|driver|tuned|<n>. */
int bcl_local_parse(const char *text, bcl_launch *l, bcl_error *e);

/* What a caller asks for. Zero and NULL fields mean "choose": the plan then
 * takes what 'ballcl tune' stored for the device, else the documented
 * rules. */
typedef struct bcl_plan_request {
    const float *params;       /* the model's parameters (bcl_model_param_floats of them) */
    size_t first;              /* index of the first ball of this plan in the whole state */
    size_t balls;              /* N: balls of this plan */
    uint64_t steps;            /* S; 0 with fused: the caller chooses the steps per run */
    bcl_sync sync;             /* wait after every launch, or once at the end */
    unsigned steps_per_launch; /* K; 0: tuned when stored, else the rule */
    bool fused;                /* the k-step kernel even when K is 1 */
    const char *variant;       /* NULL: tuned (with local tuned), else the rule; "" or
                                  "base": the base kernel; else a variant of the program */
    bcl_launch launch;         /* from bcl_local_parse: auto, driver, tuned or a size */
    bool local_given;          /* launch was chosen (--local, even auto): with K and
                                  variant, what the tuned rule looks at */
    bool take_tuned;           /* the tuned record whole, when stored: what
                                  bcl_plan_tuned_rule says for a run (a group sets it);
                                  the measuring code sets it as it needs */
    double launch_budget_ms;   /* the K rule's budget; 0: BCL_LAUNCH_BUDGET_MS */
} bcl_plan_request;

/*
 * A launch plan: everything a run on one device needs, resolved once by
 * bcl_plan_resolve for one context, and never changed by the functions that
 * take it (bcl_sim_run, bcl_sim_warmup, bcl_check_sim, the timers).
 *
 * Contract:
 *  - A plan is plain data (no pointers into the request; k_how, variant_how
 *    and launch.how are static strings): it may be copied, kept after the
 *    request is gone, and passed to any simulation of the context it was
 *    resolved for, of any size (kernel, K, variant and local size do not
 *    depend on the balls; global is for `balls`).
 *  - It describes the balls [first, first + balls) of a larger state. A
 *    caller splitting one run over several devices (a bcl_group does)
 *    cuts N into contiguous shards, each a whole number of `block` balls but
 *    the last, and resolves one plan per shard on that shard's own context: the
 *    devices may differ, so may their kernels and local sizes, never the
 *    bits (balls are independent).
 *  - Steps are not part of what is resolved: S only bounds K; each run says
 *    how many steps it applies.
 */
typedef struct bcl_plan {
    float params[BCL_MAX_PARAMS];
    size_t first, balls;
    uint64_t steps;
    bcl_sync sync;
    unsigned steps_per_launch;      /* K, >= 1 */
    const char *k_how;              /* "given", "tuned", "default rule", "1 with --sync every" */
    const char *k_reason;           /* why this K, in one word: "given", "tuned", "sync",
                                       "seed-launch", "overhead", "budget", "steps" (the
                                       rule: docs/PERFORMANCE.md) */
    double launch_budget_ms;        /* the budget the rule kept launches under */
    double launch_expect_ms;        /* the launch time the rule expects; 0 unless the rule chose */
    bcl_launch_costs costs;         /* what the rule used (known false when it was not needed) */
    bool fused;                     /* the k-step kernel (K > 1, or asked for) */
    char variant[BCL_VARIANT_NAME]; /* "" for the base kernel */
    const char *variant_how;        /* "given", "tuned" or "rule" */
    unsigned balls_per_item;        /* of the variant */
    unsigned block;                 /* shards other than the last hold a multiple of this */
    char kernel[64];                /* the kernel's name after "<model>_": "steps_x16" */
    bcl_launch launch;              /* resolved: local (0: the driver's), how, why */
    size_t global;                  /* global size for `balls` balls */
    uint64_t check_steps;           /* validation schedule: steps of the check that runs
                                       before a configuration is timed (bench, tune,
                                       survey): a full and a partial launch of K */
    char warning[1024];             /* the tuned file was consulted and could not be used;
                                       empty otherwise */
    bool tuned_used;                /* K, variant and local size came from the tuned
                                       record (those the request left open) */
    bool untimed_launches;          /* bcl_sim_run reads no per-launch events
                                       (max_launch_ms stays 0): set by the launch-cost
                                       measurement, whose figure is the host clock */
} bcl_plan;

/* Resolves r on context c into *p: K, variant, kernel and local size. An
 * unknown variant, or a local size beyond the kernel's limit, is an input
 * error. The tuned file is read once per context, at the first plan that
 * consults it. */
int bcl_plan_resolve(bcl_context *c, const bcl_plan_request *r, bcl_plan *p, bcl_error *e);

/* A contiguous part of a run's balls. */
typedef struct bcl_shard {
    size_t first, count;
} bcl_shard;

/* The one check that n balls fit, done before anything is allocated for
 * them: n >= 1, the state fits the device's memory, and host_copies copies
 * of the state on the host (the state, a reference copy, a scratch copy...)
 * plus the device's own copy when the device is a CPU (its buffers live in
 * host memory) fit the memory this process may use. BCL_EXIT_INPUT naming
 * `what` and both sizes when they do not. */
int bcl_memory_fit(const bcl_device_info *dev, size_t n, unsigned host_copies, const char *what,
                   bcl_error *e);
/* The memory this process may use on the host, in bytes: the machine's, or
 * its cgroup's limit when lower (0: unknown). What bcl_memory_fit checks
 * host copies against; an embedding program checks its own copies too. */
uint64_t bcl_host_memory_bytes(void);

/* ---- a simulation on the device ------------------------------------------ */

typedef struct bcl_sim bcl_sim;

typedef struct bcl_sim_timing {
    double device_ms; /* first launch start to last launch end (profiling); wall_ms when
                         host_clock */
    double wall_ms;   /* host clock around the enqueues and the final wait */
    uint64_t launches;
    bool host_clock;      /* the device's profiling failed its check (bcl_profiling_unusable
                             says why): device_ms is the host's time */
    double max_launch_ms; /* the longest kernel launch of the run, from its profiling event */
} bcl_sim_timing;

/* Allocates device buffers for n balls (split into several when one
 * allocation is too small) and uploads state (4 floats a ball, copied). n
 * is checked once, by bcl_memory_fit, before the caller allocates anything
 * for it; here a count the device cannot hold fails as the allocation does. */
int bcl_sim_create(bcl_context *c, const float *state, size_t n, bcl_sim **out, bcl_error *e);
/* One launch of p's kernel over no balls, so that work a driver defers to
 * the first launch (PoCL compiles per local size) is not timed as a step.
 * *ms (optional) is its wall time. */
int bcl_sim_warmup(bcl_sim *s, const bcl_plan *p, double *ms, bcl_error *e);
/* Applies `steps` steps as plan p says; the state stays on the device. */
int bcl_sim_run(bcl_sim *s, const bcl_plan *p, uint64_t steps, bcl_sim_timing *t, bcl_error *e);
/* bcl_sim_run, then the state read back into state (n balls), queued
 * behind the last launch so that the host waits once for both: one round
 * trip to the device fewer. t->wall_ms then includes the read-back;
 * device_ms, from the launches' events, does not. */
int bcl_sim_run_read(bcl_sim *s, const bcl_plan *p, uint64_t steps, float *state, bcl_sim_timing *t,
                     bcl_error *e);
/* The state check on the device (src/ocl/state_check.c): queues, behind what
 * is queued, a scan of the state the simulation holds for NaN and infinity
 * and the non-blocking read-back of its verdict into *flag (1: some float
 * is not finite; 0: all are). *flag holds the verdict once a call that
 * waits for the device (bcl_sim_run, bcl_sim_read, bcl_sim_finish)
 * returns, and must stay valid until then. It says whether, not where: a
 * caller that needs the ball scans the state on the host. */
int bcl_sim_check_finite(bcl_sim *s, uint32_t *flag, bcl_error *e);
/* bcl_sim_run_read with bcl_sim_check_finite (when flag is not NULL)
 * queued between the last launch and the read-back: the host still waits
 * once, for the steps, the verdict and the state. */
int bcl_sim_run_read_check(bcl_sim *s, const bcl_plan *p, uint64_t steps, float *state,
                           uint32_t *flag, bcl_sim_timing *t, bcl_error *e);
/* Reads the state back into state (n balls). */
int bcl_sim_read(bcl_sim *s, float *state, bcl_error *e);
/* Uploads state again (to repeat a run from the same start). */
int bcl_sim_write(bcl_sim *s, const float *state, bcl_error *e);
/* Puts a state of n balls (any n >= 1) on the simulation and uploads it:
 * the buffers are kept when they hold n balls, else replaced by buffers for
 * n (the old ones freed first). The buffers are thus sized to the largest
 * state loaded (bcl_sim_capacity); runs and reads cover the n balls. After
 * a failure the simulation holds no balls until a load succeeds. */
int bcl_sim_load(bcl_sim *s, const float *state, size_t n, bcl_error *e);
/* bcl_sim_load with the upload queued, not waited for: the host may work
 * meanwhile (the Python module checks the state for NaN then). state must
 * stay allocated and unchanged until a call that waits for the device
 * (bcl_sim_run, bcl_sim_read, bcl_sim_finish) returns. */
int bcl_sim_load_async(bcl_sim *s, const float *state, size_t n, bcl_error *e);
/* Waits until everything queued for the simulation is done. */
int bcl_sim_finish(bcl_sim *s, bcl_error *e);
/* The balls the device buffers can hold (16 bytes each). */
size_t bcl_sim_capacity(const bcl_sim *s);
/* The number of device buffers the state is split into. */
size_t bcl_sim_buffers(const bcl_sim *s);
void bcl_sim_destroy(bcl_sim *s);

/* ---- host memory for reading back ---------------------------------------- */

/* Host memory the device's runtime allocates (a CL_MEM_ALLOC_HOST_PTR
 * buffer, mapped once for the buffer's life): page-locked on GPU drivers,
 * so that bcl_sim_read into it is a direct copy by the device's copy engine
 * (the survey's "pinned" transfer) rather than a copy through the driver's
 * own staging memory. On a CPU device it is ordinary host memory.
 *
 * A host buffer keeps what it needs of its context (the OpenCL queue and
 * context, retained), so it may outlive the bcl_context it was made from;
 * bcl_host_buffer_destroy unmaps and releases it. Not thread-safe: one
 * thread uses a buffer at a time. bytes must not exceed the device's
 * largest allocation (bcl_device_info.max_alloc). */
typedef struct bcl_host_buffer bcl_host_buffer;
int bcl_host_buffer_create(bcl_context *c, size_t bytes, bcl_host_buffer **out, bcl_error *e);
void *bcl_host_buffer_data(const bcl_host_buffer *b);
size_t bcl_host_buffer_bytes(const bcl_host_buffer *b);
void bcl_host_buffer_destroy(bcl_host_buffer *b);

/* ---- validation --------------------------------------------------------- */

#define BCL_MAX_REPORTED_MISMATCHES 5

typedef struct bcl_mismatch {
    size_t ball;
    float want[4], got[4];
} bcl_mismatch;

typedef struct bcl_validation {
    uint64_t compared;   /* floats compared */
    uint64_t mismatches; /* floats beyond tolerance */
    uint64_t max_ulp;    /* largest ULP distance seen (UINT64_MAX for NaN) */
    size_t nreported;
    bcl_mismatch first[BCL_MAX_REPORTED_MISMATCHES];
} bcl_validation;

/* Runs the model's reference on a copy of init (n balls, `steps` steps, on
 * all host cores) and compares it with result, bit for bit when tol_ulp is
 * 0. A mismatch is no error: v says so. init is left unchanged. */
int bcl_validate(const bcl_model *m, const float *p, const float *init, const float *result,
                 size_t n, uint64_t steps, uint64_t tol_ulp, bcl_validation *v, bcl_error *e);
/* Uploads init (all the simulation's balls), runs o->check_steps steps of
 * plan o, reads the result into scratch (as many balls) and validates it
 * into v. */
int bcl_check_sim(bcl_sim *s, const bcl_plan *o, const float *init, uint64_t tol_ulp,
                  float *scratch, bcl_validation *v, bcl_error *e);
/* Where a state from finite input stopped being finite. */
typedef struct bcl_overflow {
    size_t ball;   /* the first ball with a non-finite value */
    uint64_t step; /* the step that made it non-finite (from 1); 0 if unknown */
    int component; /* 0..3: x, y, z, w */
    float value;   /* inf, -inf or NaN */
} bcl_overflow;
/* Finds the first non-finite value of state (n balls after `steps` steps
 * of model m from init); false when all are finite. With init, it also
 * finds the step at which that ball overflowed by running the reference on
 * it step by step (init NULL: step 0, unknown). */
bool bcl_find_overflow(const bcl_model *m, const float *p, const float *init, const float *state,
                       size_t n, uint64_t steps, bcl_overflow *o);

/* ---- state files and pictures ------------------------------------------- */

/* Reads an (N, 4) little-endian float32 C-order .npy v1.0 file. *state is
 * malloc'ed; the caller frees it. Every header defect and every non-finite
 * value is an input error naming the file. */
int bcl_npy_read(const char *path, float **state, size_t *n, bcl_error *e);
/* The pieces of a state file for those who read and write it in slices
 * (an MPI run, each rank its own balls): the header of path checked as
 * bcl_npy_read checks it (and the file's size against the shape), giving
 * the ball count and the byte offset of the data, ball i at offset + 16 i;
 * the finite-value check of bcl_npy_read for balls [first, first + n)
 * held in state; and the header of a state file of n balls, copied
 * into out when size allows, its length returned either way. */
int bcl_npy_read_header(const char *path, size_t *n, uint64_t *data_offset, bcl_error *e);
int bcl_npy_check_finite(const char *path, const float *state, size_t n, size_t first,
                         bcl_error *e);
size_t bcl_npy_header(size_t n, unsigned char *out, size_t size);

/* The outputs of one command (docs/RELIABILITY.md, "Outputs"): each is
 * checked and gets its temporary file in its folder before any work
 * (bcl_outputs_add), the data goes to the temporaries (bcl_outputs_write,
 * bcl_npy_write_to), and bcl_outputs_commit replaces every destination or
 * none. An existing destination must be a regular file; a symbolic link is
 * followed and its target replaced. The temporaries are removed on any
 * failure, by bcl_outputs_discard, and on SIGINT, SIGTERM and SIGHUP once a
 * program called bcl_cleanup_install. The set, and every path given to it,
 * must outlive the commit or discard. */
#define BCL_OUTPUTS_MAX 4
typedef struct bcl_output {
    const char *path; /* as given */
    const char *what; /* the option, for messages ("--output"); may be NULL */
    char *target;     /* the file replaced: path, or a symbolic link's target */
    char *tmp;        /* the temporary beside target */
    int fd;           /* open on tmp until the commit */
    int slot;         /* in the signal clean-up registry, -1 when none */
} bcl_output;
typedef struct bcl_outputs {
    bcl_output out[BCL_OUTPUTS_MAX];
    size_t count;
} bcl_outputs;

/* Checks path as the next output (index count) and creates its temporary:
 * BCL_EXIT_INPUT naming what and path when it cannot be written. */
int bcl_outputs_add(bcl_outputs *s, const char *path, const char *what, bcl_error *e);
/* Appends len bytes to output i's temporary. */
int bcl_outputs_write(bcl_outputs *s, size_t i, const void *data, size_t len, bcl_error *e);
/* Flushes every temporary, then replaces every destination, or none (a
 * failed rename is undone). The set is empty afterwards, either way. */
int bcl_outputs_commit(bcl_outputs *s, bcl_error *e);
/* Removes every temporary; the destinations are untouched. Idempotent. */
void bcl_outputs_discard(bcl_outputs *s);
/* Writes n balls as a .npy file into output i of s. */
int bcl_npy_write_to(bcl_outputs *s, size_t i, const float *state, size_t n, bcl_error *e);
/* Installs the SIGINT/SIGTERM/SIGHUP handler that removes the temporaries
 * of unfinished outputs and exits with 128 + the signal (130, 143, 129). For
 * programs: the library never installs it itself. */
void bcl_cleanup_install(void);

#define BCL_SNAPSHOT_MAX_SIDE 4096

typedef struct bcl_snapshot_opts {
    unsigned width, height; /* pixels; 0 and 0: the longer side 800, the other by aspect */
    bool has_box;           /* box is the model's box; else the balls' bounding box */
    float box[4];           /* x0, y0, x1, y1 */
} bcl_snapshot_opts;

/* A PNG picture of the (x, y) of n balls into output i of an output set
 * (bcl_outputs_add): the box outlined, each ball a dot, darker where more
 * balls share a pixel. */
int bcl_snapshot_write_to(bcl_outputs *s, size_t i, const float *state, size_t n,
                          const bcl_snapshot_opts *o, bcl_error *e);
/* Parses "WxH" (each 16 to BCL_SNAPSHOT_MAX_SIDE) for the option `what`. */
int bcl_snapshot_size_parse(const char *text, const char *what, unsigned *w, unsigned *h,
                            bcl_error *e);

/* ---- the binary cache folder (docs/cache.md) ----------------------------- */

/* The cache folder: $BALLCL_CACHE_DIR, else $XDG_CACHE_HOME/ballcl (an
 * absolute XDG_CACHE_HOME only), else $HOME/.cache/ballcl. Nothing is
 * created. Program entries are "program-<key>.bin"; tuned launch
 * configurations live in its tuned/ folder. */
int bcl_cache_dir(char *out, size_t size, bcl_error *e);

/* One program entry of the cache folder, as `ballcl cache list` shows it. */
typedef struct bcl_cache_entry_info {
    char file[128];     /* file name in the folder */
    char key[65];       /* hex key from the file name */
    char device[160];   /* from the header, printable characters only */
    char platform[128]; /* idem */
    char source[64];    /* kernel file the entry was built from */
    uint64_t bytes;     /* file size */
    int64_t mtime;      /* seconds since the epoch */
    bool valid;         /* header, key and checksum check out */
    char problem[128];  /* why not, when !valid */
} bcl_cache_entry_info;

/* Lists the program entries of dir (no other files), sorted by file name;
 * *entries is malloc'ed (NULL when empty). A missing folder is an empty
 * list. */
int bcl_cache_list(const char *dir, bcl_cache_entry_info **entries, size_t *count, bcl_error *e);
/* Removes the program entries of dir, and temporaries that writers killed
 * mid-write left behind (older than ten minutes: a younger one may belong
 * to a running process). Every other file stays. Counts are optional. */
int bcl_cache_clear(const char *dir, size_t *entries, uint64_t *bytes, size_t *temporaries,
                    bcl_error *e);

#ifdef __cplusplus
}
#endif

/* ---- several devices in one run (docs/DESIGN.md, "Several devices") ------------ */

/* Why a device of a split got no balls. */
typedef enum {
    BCL_SPLIT_USED = 0,
    BCL_SPLIT_SLOWER,      /* its fixed cost alone exceeds the others' time for all balls */
    BCL_SPLIT_UNDER_BLOCK, /* its share would be under one block */
    BCL_SPLIT_NO_RATE,     /* no rate (0): nothing to weigh it by */
    BCL_SPLIT_MINOR,       /* its share would be under BCL_SPLIT_MIN_SHARE of the balls */
} bcl_split_why;

/* The least share of the balls a device of a split takes: below it the
 * run gains less than the error of calibrating each device alone. */
#define BCL_SPLIT_MIN_SHARE 0.10

/*
 * A group: several devices running one range of balls [first, first +
 * balls) of a state together (a whole run, or an MPI rank's part of one).
 * Each device has its own context (hence its own program, from the binary
 * cache), queue, launch plan and simulation of its shard; the state stays on
 * each device between steps. Every phase that touches the devices runs on
 * one host thread per device at once, so the devices work together and a
 * slow build or upload on one does not hold the others back; a thread tags
 * its calls with the device's position (bcl_fault_device) so that the
 * fault injection can target one device.
 *
 * Order: bcl_group_open, bcl_group_split, bcl_group_load, then any number
 * of bcl_group_run (and bcl_group_read / bcl_group_validate), then
 * bcl_group_close. An error of one device ends the phase for all and names
 * the device ("device 0:1 'name': ..."), with that device's exit class.
 */
typedef struct bcl_group bcl_group;

typedef struct bcl_group_opts {
    const bcl_model *model;
    bcl_context_opts ctx;
    /* What every device's plan asks for (params, steps, K, variant, local);
     * first and balls are the group's range. Pointers in it must outlive
     * the group. */
    bcl_plan_request req;
    /* Target length of one timed calibration repeat (0: 30 ms). */
    double calibrate_ms;
} bcl_group_opts;

/* One device of a group, as the report shows it. */
typedef struct bcl_group_member {
    const bcl_device_info *dev;
    int index;         /* position in the device list (the fault target) */
    char selector[24]; /* "P:D" */
    bcl_build_report build;
    bcl_plan plan;        /* for its shard once split */
    bcl_shard shard;      /* balls of the whole state; count 0: none */
    double share;         /* shard.count / the group's balls */
    double rate;          /* ball-steps/s the split weighed it by */
    double launch_ms;     /* overhead per launch the split counted (0 when tuned) */
    const char *rate_how; /* "tuned", "calibrated", "only device" */
    double calibrate_ms;  /* what measuring it cost (0: not measured) */
    bcl_split_why why;    /* BCL_SPLIT_USED, or why it got no balls */
    char excluded[256];   /* that reason in words; "" when it has balls */
    size_t buffers;       /* device buffers of its shard */
    double first_launch_ms; /* the warm-up launch of its plan; 0 when none was needed */
    char tuned_note[200];   /* whether the stored tuned record was used, and why not
                               (bcl_plan_tuned_note); "" when none is stored */
    unsigned long plan_gen; /* counts the plans resolved for it: unchanged, the plan is
                               the previous run's */
    bcl_sim_timing timing;  /* of the last bcl_group_run, or summed over bcl_group_exec */
    double wait_ms;        /* from its end to the slowest device's end */
    bcl_validation v;      /* of its shard (ball indices of the whole state) */
} bcl_group_member;

typedef struct bcl_group_timing {
    double wall_ms; /* first device's start to the last one's end */
    uint64_t steps;
} bcl_group_timing;

/* Whether n balls can run on devs together, checked before anything is
 * allocated for them: the devices' memories together hold the state, and
 * the host holds host_copies copies of it plus the CPU devices' buffers.
 * BCL_EXIT_INPUT naming `what` when not (each shard is checked against its
 * own device by bcl_group_split). */
int bcl_group_memory_fit(const bcl_device_info *const *devs, size_t count, size_t n,
                         unsigned host_copies, const char *what, bcl_error *e);
/* Creates one context per device (programs built or loaded at once, one
 * thread each) and resolves each device's plan for the whole range. devs
 * must outlive the group. */
int bcl_group_open(const bcl_device_info *const *devs, size_t count, const bcl_group_opts *o,
                   bcl_group **out, bcl_error *e);
/* Weighs every device (the tuned rate of its plan when 'ballcl tune'
 * stored one, else a short calibration on the first balls of state, the
 * group's range, one device at a time so each is measured alone) and cuts
 * the range (bcl_split). A shard beyond a device's memory is an input
 * error. */
int bcl_group_split(bcl_group *g, const float *state, bcl_error *e);
/* The split given instead of measured (tests, MPI): shard counts per
 * device in order, summing to the group's balls. */
int bcl_group_split_given(bcl_group *g, const size_t *counts, bcl_error *e);
/* Total time the calibrations of bcl_group_split took (0: none ran). */
double bcl_group_calibrate_ms(const bcl_group *g);
/* Resolves each plan for its shard, uploads the shard from state (the
 * group's range) and does the warm-up launch, one thread per device. */
int bcl_group_load(bcl_group *g, const float *state, bcl_error *e);
/* Applies steps steps on every device at once; waits for all. */
int bcl_group_run(bcl_group *g, uint64_t steps, bcl_group_timing *t, bcl_error *e);
/* Reads every shard back into state (the group's range, original order). */
int bcl_group_read(bcl_group *g, float *state, bcl_error *e);
/* Compares every shard of result with the C reference run from init (both
 * the group's range) into each member's v, and all of them into *total. */
int bcl_group_validate(bcl_group *g, const float *init, const float *result, uint64_t steps,
                       uint64_t tol_ulp, bcl_validation *total, bcl_error *e);
size_t bcl_group_size(const bcl_group *g);
const bcl_group_member *bcl_group_member_at(const bcl_group *g, size_t i);
/* The simulation of member i's shard once loaded (NULL without balls), for
 * timing it alone. */
bcl_sim *bcl_group_sim(bcl_group *g, size_t i);
void bcl_group_close(bcl_group *g);

#endif
