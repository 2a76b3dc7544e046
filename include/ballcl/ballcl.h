/*
 * ballcl — the installed API: run N balls for S steps on OpenCL devices and
 * check the result bit for bit against the model's C reference. This one
 * header is what a program embedding ballcl needs; it needs neither the
 * OpenCL nor any JSON headers, and compiles as C (C99 or later) and as C++.
 *
 * A program finds devices (bcl_devices_enumerate, bcl_device_select), picks
 * a model (bcl_model_find) and its parameters, fills a state
 * (bcl_model_fill), opens a group of one or more devices on it
 * (bcl_group_open), splits it (bcl_group_split) and runs it
 * (bcl_group_exec: load, steps, read-back and validation in one call;
 * bcl_validate checks any state).
 * bcl_survey_run measures devices and returns the survey as its JSON
 * document; bcl_version says which library was loaded.
 *
 * Errors: every function that can fail takes a bcl_error and returns one of
 * the BCL_EXIT_* classes (0 on success) with a one-line message in it; a
 * failed OpenCL call is named in its cl_call and cl_status fields. The
 * library never prints and never exits.
 *
 * Lifetimes (what must outlive what):
 *   bcl_device_list  outlives every group made from its devices (a group
 *                    keeps pointers to them, and their OpenCL handles
 *                    belong to the list's platforms);
 *   bcl_group        is closed before its device list is freed;
 *   bcl_plan         is plain data: copy it, keep it.
 * Nothing here is thread-safe on one object; separate groups may be used
 * from separate threads.
 *
 * Growing without an ABI break (libballcl.so.2): every public struct ends
 * in `unsigned char reserved[N]`, which a caller must leave zero (zero the
 * whole struct: `bcl_error e = {0};`, memset). A field added later takes
 * its bytes from the front of the reserve, so the size of the struct and
 * the offset of every existing field stay as they are; a field is never
 * moved, resized or removed without a new soname. The size of each struct
 * on LP64 platforms is pinned by a static assertion at the end of this
 * header: a change that grows a struct past its reserve does not compile.
 * Opaque handles (bcl_group, bcl_sim, bcl_context, bcl_host_buffer) are
 * only ever used through pointers.
 */
#ifndef BALLCL_BALLCL_H
#define BALLCL_BALLCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The version of this header; bcl_version() is the library's. */
#define BALLCL_VERSION "1.0.0"

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
    unsigned char reserved[64]; /* zero (the top of this header says why) */
} bcl_error;
/* Frees the detail and resets e for reuse. */
void bcl_error_clear(bcl_error *e);
/* The library's version, BALLCL_VERSION of the header it was built with:
 * a program compares it with its own BALLCL_VERSION. */
const char *bcl_version(void);

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
    uint64_t single_fp_config;          /* CL_DEVICE_SINGLE_FP_CONFIG (CL_FP_* bits) */
    unsigned char reserved[248];        /* zero (the top of this header says why) */
} bcl_device_info;

typedef struct bcl_device_list {
    bcl_device_info *dev;
    size_t count;
    /* One line per platform whose devices could not be listed ("clGetDeviceIDs
     * failed on platform 'X': CL_STATUS (hint); its devices are left out"),
     * separated by newlines; empty when every platform answered. */
    char warnings[1024];
    unsigned char reserved[64]; /* zero (the top of this header says why) */
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
/* The type bits as one word: "gpu", "accelerator", "cpu", "custom" or
 * "other" (the first that type has, in that order). */
const char *bcl_device_type_name(uint64_t type);
/* The memory this process may use on the host, in bytes: the machine's, or
 * its cgroup's limit when lower (0: unknown). What bcl_group_memory_fit
 * checks host copies against. */
uint64_t bcl_host_memory_bytes(void);
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
    const char *opt;            /* long option name, e.g. "gravity" */
    const char *help;           /* one line */
    unsigned count;             /* floats taken, 1 or 2 */
    const char *defaults;       /* default value as text, parsed like user input */
    unsigned char reserved[32]; /* zero (the top of this header says why) */
} bcl_param;

typedef struct bcl_model {
    const char *name;
    const char *summary;
    /* The update's file: a name under cl/ for a built-in model, the path
     * given for a model file (bcl_model_file_load). It holds
     * `float4 update(float4 b, float p0, ...)`, the step of one ball; the
     * kernels are generated around it (cl/kernels.cl, docs/MODELS.md):
     * "<name>_step" (one step) and "<name>_steps" (k steps) take
     * (global float4 *s, uint n, uint k, float p0, float p1, ...). */
    const char *kernel_file;
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
    /* A model file's: its source text (kernel_file is then the path it
     * was read from), the hex SHA-256 of that text (what tuned records,
     * launch costs and surveys of the model are keyed by) and its C
     * reference when one was given; NULL for
     * a built-in model. */
    const char *source;
    const char *digest;
    struct bcl_model_file *file;
    unsigned char reserved[40]; /* zero (the top of this header says why) */
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

/* A model file (docs/MODELS.md): OpenCL C whose `#pragma ballcl param
 * NAME DEFAULT` lines declare the parameters and whose
 * `float4 update(float4 b, float NAME, ...)` is the step of one ball; its
 * balls start as the bounce model's (--init seed) or the seed model's
 * (--init random). With a reference, the same update in C, compiled by the
 * system's C compiler (cached like a kernel) and run in a child process
 * with a time limit when a run is validated. */
typedef struct bcl_model_spec {
    const char *path; /* the model file; with text, only its name in messages */
    const char *text; /* the source itself (len bytes), or NULL: read from path */
    size_t len;
    const char *reference;      /* the C reference's file, or NULL: none ("not validated") */
    const char *cache_dir;      /* the cache folder (bcl_cache_dir) the compiled reference is
                                   kept in, under reference/; NULL: not kept */
    bool use_cache;             /* keep and reuse the compiled reference */
    double reference_limit_s;   /* the reference's time limit; 0: the default */
    unsigned char reserved[64]; /* zero (the top of this header says why) */
} bcl_model_spec;
/* The model of spec, malloc'ed (bcl_model_free). A file that cannot be
 * read, a bad pragma, an unsuffixed floating literal, an update of another
 * shape, or a reference that does not compile is BCL_EXIT_INPUT naming the
 * file and line. */
int bcl_model_load(const bcl_model_spec *spec, bcl_model **out, bcl_error *e);
/* Frees a model from bcl_model_load (NULL and built-in models: nothing). */
void bcl_model_free(bcl_model *m);

/* ---- the device context ------------------------------------------------- */

typedef struct bcl_context bcl_context;

typedef struct bcl_context_opts {
    bool use_cache;             /* load and store built programs in the binary cache */
    const char *cache_dir;      /* an existing folder instead of bcl_cache_dir()'s; NULL: that */
    unsigned char reserved[48]; /* zero (the top of this header says why) */
} bcl_context_opts;

typedef struct bcl_build_report {
    bool cache_hit;             /* the program came from the cache */
    double program_ms;          /* from creating the program to a built one */
    char note[256];             /* why the cache missed, or was skipped */
    bool cache_stored;          /* bcl_context_cache_store wrote an entry */
    double store_ms;            /* time bcl_context_cache_store took (0 when nothing was stored) */
    char warning[512];          /* something the user should see (an unwritable cache folder);
                                   empty when all went well */
    unsigned char reserved[64]; /* zero (the top of this header says why) */
} bcl_build_report;

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
    bool known;                 /* measured or read: the rule can use it */
    double launch_us;           /* fixed cost of one launch among back-to-back launches */
    double io_ns_per_ball;      /* loading and storing one ball, once per launch */
    double step_ns_per_ball;    /* one step of one ball with the device full */
    double step_floor_us;       /* one step of a launch over few balls: the latency floor */
    size_t fill_balls;          /* the balls of the full-device measurement */
    const char *source;         /* "measured", "stored" or "none" (a static string) */
    double measure_ms;          /* what measuring cost in this process; 0 when stored */
    char note[200];             /* why they were not read or cannot be kept; empty when all
                                   is well */
    bool warn;                  /* note says why a kept file could not be used: the plan
                                   passes it on as its warning */
    bool unsaved;               /* measured here, not yet written (bcl_context_destroy
                                   writes them) */
    unsigned char reserved[64]; /* zero (the top of this header says why) */
} bcl_launch_costs;

typedef struct bcl_launch {
    bcl_local_mode mode;
    size_t local;               /* 0 when the driver chooses */
    const char *how;            /* resolved: "auto", "driver", "tuned", "user" (a static string) */
    char why[160];              /* resolved: how the local size was derived */
    unsigned char reserved[32]; /* zero (the top of this header says why) */
} bcl_launch;

/* What a caller asks for. Zero and NULL fields mean "choose": the plan then
 * takes what 'ballcl tune' stored for the device, else the documented
 * rules. */
typedef struct bcl_plan_request {
    const float *params;        /* the model's parameters (bcl_model_param_floats of them) */
    size_t first;               /* index of the first ball of this plan in the whole state */
    size_t balls;               /* N: balls of this plan */
    uint64_t steps;             /* S; 0 with fused: the caller chooses the steps per run */
    bcl_sync sync;              /* wait after every launch, or once at the end */
    unsigned steps_per_launch;  /* K; 0: tuned when stored, else the rule */
    bool fused;                 /* the k-step kernel even when K is 1 */
    const char *variant;        /* NULL: tuned (with local tuned), else the rule; "" or
                                   "base": the base kernel; else a variant of the program */
    bcl_launch launch;          /* from bcl_local_parse: auto, driver, tuned or a size */
    bool local_given;           /* launch was chosen (--local, even auto): with K and
                                   variant, what the tuned rule looks at */
    bool take_tuned;            /* the tuned record whole, when stored: what
                                   bcl_plan_tuned_rule says for a run (a group sets it);
                                   the measuring code sets it as it needs */
    double launch_budget_ms;    /* the K rule's budget; 0: BCL_LAUNCH_BUDGET_MS */
    unsigned char reserved[64]; /* zero (the top of this header says why) */
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
    bool untimed_launches;          /* bcl_sim_run reads no launch's own times
                                       (max_launch_ms stays 0): set where the figure is
                                       the host clock (launch costs, calibration) */
    bool bare;                      /* bcl_sim_run enqueues the launches with no event
                                       and no queue window, and waits once: bench's
                                       floor row; timed by the host clock */
    unsigned char reserved[127];    /* zero (the top of this header says why) */
} bcl_plan;

/* A contiguous part of a run's balls. */
typedef struct bcl_shard {
    size_t first, count;
    unsigned char reserved[16]; /* zero (the top of this header says why) */
} bcl_shard;

/* ---- a simulation on the device ------------------------------------------ */

typedef struct bcl_sim bcl_sim;

typedef struct bcl_sim_timing {
    double device_ms; /* first launch start to last launch end (profiling); wall_ms when
                         host_clock */
    double wall_ms;   /* host clock around the enqueues and the final wait */
    uint64_t launches;
    bool host_clock;            /* the device's profiling failed its check (bcl_profiling_unusable
                                   says why): device_ms is the host's time */
    double max_launch_ms;       /* the longest kernel launch of the run, from its profiling event */
    unsigned char reserved[32]; /* zero (the top of this header says why) */
} bcl_sim_timing;

/* Profiling is checked before it is believed (docs/BENCHMARK.md, "Clocks"):
 * every span of device time is compared with the host's time for the same
 * work and with what hardware can do. NULL while the profiling of device d
 * has passed every check in this process, else why it failed; from then on
 * d's figures come from the host clock (bcl_sim_timing.host_clock). */
const char *bcl_profiling_unusable(const bcl_device_info *d);

/* ---- host memory for reading back ---------------------------------------- */

/* Host memory the device's runtime allocates (bcl_group_host_buffer: a
 * CL_MEM_ALLOC_HOST_PTR buffer, mapped once for the buffer's life):
 * page-locked on GPU drivers, so that a read-back into it is a direct copy
 * by the device's copy engine (the survey's "pinned" transfer) rather than
 * a copy through the driver's own staging memory. On a CPU device it is
 * ordinary host memory.
 *
 * A host buffer keeps what it needs of its device (the OpenCL queue and
 * context, retained), so it may outlive the group it was made from;
 * bcl_host_buffer_destroy unmaps and releases it. Not thread-safe: one
 * thread uses a buffer at a time. bytes must not exceed the device's
 * largest allocation (bcl_device_info.max_alloc). */
typedef struct bcl_host_buffer bcl_host_buffer;
void *bcl_host_buffer_data(const bcl_host_buffer *b);
size_t bcl_host_buffer_bytes(const bcl_host_buffer *b);
void bcl_host_buffer_destroy(bcl_host_buffer *b);

/* ---- validation --------------------------------------------------------- */

#define BCL_MAX_REPORTED_MISMATCHES 5

typedef struct bcl_mismatch {
    size_t ball;
    float want[4], got[4];
    unsigned char reserved[16]; /* zero (the top of this header says why) */
} bcl_mismatch;

typedef struct bcl_validation {
    uint64_t compared;   /* floats compared */
    uint64_t mismatches; /* floats beyond tolerance */
    uint64_t max_ulp;    /* largest ULP distance seen (UINT64_MAX for NaN) */
    size_t nreported;
    bcl_mismatch first[BCL_MAX_REPORTED_MISMATCHES];
    unsigned char reserved[64]; /* zero (the top of this header says why) */
} bcl_validation;

/* Runs the model's reference on a copy of init (n balls, `steps` steps, on
 * all host cores) and compares it with result, bit for bit when tol_ulp is
 * 0. A mismatch is no error: v says so. init is left unchanged. */
int bcl_validate(const bcl_model *m, const float *p, const float *init, const float *result,
                 size_t n, uint64_t steps, uint64_t tol_ulp, bcl_validation *v, bcl_error *e);
/* Where a state from finite input stopped being finite. */
typedef struct bcl_overflow {
    size_t ball;                /* the first ball with a non-finite value */
    uint64_t step;              /* the step that made it non-finite (from 1); 0 if unknown */
    int component;              /* 0..3: x, y, z, w */
    float value;                /* inf, -inf or NaN */
    unsigned char reserved[32]; /* zero (the top of this header says why) */
} bcl_overflow;
/* Finds the first non-finite value of state (n balls after `steps` steps
 * of model m from init); false when all are finite. With init, it also
 * finds the step at which that ball overflowed by running the reference on
 * it step by step (init NULL: step 0, unknown). */
bool bcl_find_overflow(const bcl_model *m, const float *p, const float *init, const float *state,
                       size_t n, uint64_t steps, bcl_overflow *o);

/* ---- the binary cache folder (docs/cache.md) ----------------------------- */

/* The cache folder: $BALLCL_CACHE_DIR, else $XDG_CACHE_HOME/ballcl (an
 * absolute XDG_CACHE_HOME only), else $HOME/.cache/ballcl. Nothing is
 * created. Program entries are "program-<key>.bin"; tuned launch
 * configurations live in its tuned/ folder. */
int bcl_cache_dir(char *out, size_t size, bcl_error *e);

/* One program entry of the cache folder, as `ballcl cache list` shows it. */
typedef struct bcl_cache_entry_info {
    char file[128];             /* file name in the folder */
    char key[65];               /* hex key from the file name */
    char device[160];           /* from the header, printable characters only */
    char platform[128];         /* idem */
    char source[64];            /* kernel file the entry was built from */
    uint64_t bytes;             /* file size */
    int64_t mtime;              /* seconds since the epoch */
    bool valid;                 /* header, key and checksum check out */
    char problem[128];          /* why not, when !valid */
    unsigned char reserved[64]; /* zero (the top of this header says why) */
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

/* ---- device capability survey (docs/SURVEY.md) ---------------------------- */

typedef struct bcl_measure_opts {
    unsigned repeats;           /* timed repeats (>= 1) */
    uint64_t steps;             /* steps per repeat; 0: chosen so a repeat takes about repeat_ms */
    double repeat_ms;           /* target duration of one repeat when steps is 0 */
    uint64_t max_steps;         /* cap on the chosen steps (0: 1000000) */
    unsigned char reserved[32]; /* zero (the top of this header says why) */
} bcl_measure_opts;

/* Progress of long work, for the caller to show; the library never prints. */
typedef void (*bcl_progress_fn)(void *arg, unsigned done, unsigned total, const char *what);

/* The schema version this program writes. The reader also reads the older
 * versions named in BCL_SURVEY_SCHEMAS_READ (docs/SURVEY.md: a figure a
 * version lacks is shown as absent) and refuses any other. */
#define BCL_SURVEY_SCHEMA       "ballcl-survey/3"
#define BCL_SURVEY_SCHEMA_V2    "ballcl-survey/2"
#define BCL_SURVEY_SCHEMA_V1    "ballcl-survey/1"
#define BCL_SURVEY_SCHEMAS_READ "ballcl-survey/1, ballcl-survey/2 and ballcl-survey/3"

typedef struct bcl_survey_opts {
    bool quick;                /* smaller N, fewer repeats (for CI) */
    size_t small_n;            /* balls of the "small" ball-step figure */
    size_t sweep_n;            /* balls of the local size sweep */
    size_t large_n;            /* balls of "large", copy and fused; 0: by device */
    unsigned fused_k;          /* steps per launch of the fused figure */
    unsigned build_repeats;    /* builds timed per build figure */
    unsigned latency_repeats;  /* samples per latency figure */
    bcl_measure_opts measure;  /* repeats and repeat length of every ball-step figure */
    uint64_t seed;             /* PRNG seed of the random initial states */
    const char *command;       /* the command line, recorded in the document */
    const char *driver_caches; /* what bcl_survey_driver_caches_off said */
    bcl_progress_fn progress;
    void *progress_arg;
    const char *host; /* identity.host of every device; NULL or "": none */
    /* A model file surveyed besides the built-in models, at its defaults,
     * into each device's "model_file" (keyed by bcl_model_key, never among
     * "measured.models": docs/SURVEY.md); NULL: none. It needs its C
     * reference (every figure is validated). */
    const bcl_model *model_file;
    /* zero (the top of this header says why) */
    unsigned char reserved[64 - 2 * sizeof(const char *)];
} bcl_survey_opts;

/* The documented defaults (docs/SURVEY.md), or the --quick ones. */
void bcl_survey_opts_default(bcl_survey_opts *o, bool quick);
/* Surveys the devices devs[0..n) into one survey document (schema
 * BCL_SURVEY_SCHEMA), returned as indented JSON text in *json (malloc'ed,
 * NUL-terminated): identity, limits and every measured figure of each
 * device, each ball-step figure validated bit for bit before it is timed,
 * for every model. A figure that cannot be measured is null with its error
 * under "errors"; the others go on. *status is the worst outcome: BCL_OK,
 * BCL_EXIT_MISMATCH or BCL_EXIT_RUNTIME. Returns non-zero only when out of
 * memory. */
int bcl_survey_run(const bcl_device_info *devs, size_t n, const bcl_survey_opts *o, char **json,
                   int *status, bcl_error *e);

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
 * Order: bcl_group_open, bcl_group_split, then any number of
 * bcl_group_exec (the first one loads a state), then bcl_group_close. An
 * error of one device ends the phase for all and names the device
 * ("device 0:1 'name': ..."), with that device's exit class.
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
    unsigned char reserved[64]; /* zero (the top of this header says why) */
} bcl_group_opts;

/* One device of a group, as the report shows it. */
typedef struct bcl_group_member {
    const bcl_device_info *dev;
    int index;         /* position in the device list (the fault target) */
    char selector[24]; /* "P:D" */
    bcl_build_report build;
    bcl_plan plan;               /* for its shard once split */
    bcl_shard shard;             /* balls of the whole state; count 0: none */
    double share;                /* shard.count / the group's balls */
    double rate;                 /* ball-steps/s the split weighed it by */
    double launch_ms;            /* overhead per launch the split counted (0 when tuned) */
    const char *rate_how;        /* "tuned", "calibrated", "only device" */
    double calibrate_ms;         /* what measuring it cost (0: not measured) */
    bcl_split_why why;           /* BCL_SPLIT_USED, or why it got no balls */
    char excluded[256];          /* that reason in words; "" when it has balls */
    size_t buffers;              /* device buffers of its shard */
    double first_launch_ms;      /* the warm-up launch of its plan; 0 when none was needed */
    char tuned_note[200];        /* whether the stored tuned record was used, and why not
                                    (bcl_plan_tuned_note); "" when none is stored */
    unsigned long plan_gen;      /* counts the plans resolved for it: unchanged, the plan is
                                    the previous run's */
    bcl_sim_timing timing;       /* summed over the chunks of the last bcl_group_exec */
    double wait_ms;              /* from its end to the slowest device's end */
    bcl_validation v;            /* of its shard (ball indices of the whole state) */
    unsigned char reserved[128]; /* zero (the top of this header says why) */
} bcl_group_member;

/* Whether n balls can run on devs together, checked before anything is
 * allocated for them: the devices' memories together hold the state, and
 * the host holds host_copies copies of it plus the CPU devices' buffers.
 * BCL_EXIT_INPUT naming `what` when not (each shard is checked against its
 * own device by bcl_group_split). */
int bcl_group_memory_fit(const bcl_device_info *const *devs, size_t count, size_t n,
                         unsigned host_copies, const char *what, bcl_error *e);
/* Creates one context per device (programs built or loaded at once, one
 * thread each) and resolves each device's plan for the whole range. devs
 * must outlive the group. The range may be empty (req.balls 0): the first
 * bcl_group_exec then loads a state, which sets it (a Python Context opens
 * its device before it is given a state). */
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
size_t bcl_group_size(const bcl_group *g);
const bcl_group_member *bcl_group_member_at(const bcl_group *g, size_t i);
void bcl_group_close(bcl_group *g);
/* Host memory of the group's first device's runtime to read its state
 * into (a CL_MEM_ALLOC_HOST_PTR buffer, mapped for its life): page-locked
 * on GPU drivers, so that the read-back is a direct copy by the device's
 * copy engine. It may outlive the group. */
int bcl_group_host_buffer(bcl_group *g, size_t bytes, bcl_host_buffer **out, bcl_error *e);

/* ---- the one run (docs/DESIGN.md, "One run path") ------------------------- */

/* What bcl_group_exec does: the run of every caller (the CLI on one device
 * or several, under MPI, Python's run and Context). Zero fields are off. */
typedef struct bcl_exec {
    uint64_t steps;
    /* A new request for this run (steps, K, local size, variant, sync, and
     * the parameters unless NULL), the range staying the group's; NULL: the
     * group's with `steps`. Plans are resolved again only when it differs. */
    const bcl_plan_request *req;
    /* Uploaded before the steps (load_balls balls from ball `first` of the
     * range; a new count cuts the range again); NULL: the devices continue
     * from the state they hold. load_async: the upload is queued, and
     * `load` must stay put until the call returns (a failure waits for it
     * before returning); load_check: the device
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
    /* validate is false for want of a reference (a model file given none):
     * the result says "not validated: no reference". */
    bool no_reference;
    unsigned char reserved[63]; /* zero (the top of this header says why) */
} bcl_exec;

/* bcl_group_exec's return when between() stopped it. */
#define BCL_EXEC_STOPPED (-1)

typedef struct bcl_exec_result {
    double wall_ms;             /* the steps: first device's start to the last one's end,
                                   summed over the chunks */
    double device_ms;           /* the slowest member's device time (profiling); wall_ms when
                                   host_clock */
    uint64_t launches;          /* the most launches of a member */
    bool host_clock;            /* a member's profiling failed its check */
    double max_launch_ms;       /* the longest launch of any member */
    double first_launch_ms;     /* the longest warm-up launch (0: none needed) */
    bool plan_reused;           /* every member ran the plan of the previous exec */
    bool input_bad;             /* load_check: the devices found NaN or infinity in the load
                                   (the steps ran; nothing was validated) */
    bcl_validation v;           /* all members' (ball indices of the whole state) */
    unsigned char reserved[64]; /* zero (the top of this header says why) */
} bcl_exec_result;

/* Runs x on the group, loading x->load first (the first call must), else
 * on the state the devices hold: the one run path. Members' timing,
 * validation and plans say what each did. */
int bcl_group_exec(bcl_group *g, const bcl_exec *x, bcl_exec_result *r, bcl_error *e);

/* ---- the sizes the reserves keep (see the top) ---------------------------- */

#ifdef __cplusplus
#define BCL_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define BCL_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
/* Pinned where pointers and size_t are 8 bytes (LP64: Linux and macOS on
 * x86-64 and arm64); other data models have their own sizes, not pinned. */
#if UINTPTR_MAX == 0xffffffffffffffffu && SIZE_MAX == 0xffffffffffffffffu
#define BCL_SIZE(type, bytes)                                                                      \
    BCL_STATIC_ASSERT(sizeof(type) == (bytes), #type " changed size: take new fields from "        \
                                                     "its reserve")
BCL_SIZE(bcl_error, 1232);
BCL_SIZE(bcl_device_info, 2176);
BCL_SIZE(bcl_device_list, 1104);
BCL_SIZE(bcl_param, 64);
BCL_SIZE(bcl_model, 144);
BCL_SIZE(bcl_model_spec, 120);
BCL_SIZE(bcl_context_opts, 64);
BCL_SIZE(bcl_build_report, 864);
BCL_SIZE(bcl_launch_costs, 336);
BCL_SIZE(bcl_launch, 216);
BCL_SIZE(bcl_plan_request, 352);
BCL_SIZE(bcl_plan, 1936);
BCL_SIZE(bcl_shard, 32);
BCL_SIZE(bcl_sim_timing, 72);
BCL_SIZE(bcl_mismatch, 56);
BCL_SIZE(bcl_validation, 376);
BCL_SIZE(bcl_overflow, 56);
BCL_SIZE(bcl_cache_entry_info, 768);
BCL_SIZE(bcl_measure_opts, 64);
BCL_SIZE(bcl_survey_opts, 216);
BCL_SIZE(bcl_group_opts, 496);
BCL_SIZE(bcl_group_member, 3984);
BCL_SIZE(bcl_exec, 192);
BCL_SIZE(bcl_exec_result, 496);
#undef BCL_SIZE
#endif
#undef BCL_STATIC_ASSERT

#ifdef __cplusplus
}
#endif

#endif
