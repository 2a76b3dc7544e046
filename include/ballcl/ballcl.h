/*
 * ballcl — public API of the core library.
 *
 * The library never prints: every function that can fail takes a bcl_error and
 * returns one of the BCL_EXIT_* classes (0 on success), with a one-line message
 * in the error. The command-line program turns that class into its exit status.
 */
#ifndef BALLCL_BALLCL_H
#define BALLCL_BALLCL_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BALLCL_VERSION "0.1.0"

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
} bcl_error;

/* Sets the error (first error wins) and returns its code. */
int bcl_fail(bcl_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Attaches a copy of text (e.g. a build log) to an error that is already set. */
void bcl_error_set_detail(bcl_error *e, const char *text);
void bcl_error_clear(bcl_error *e);

/* Name of an OpenCL status ("CL_OUT_OF_RESOURCES"), or "CL_UNKNOWN_ERROR(-n)"
 * written into a static per-thread buffer for unknown codes. */
const char *bcl_cl_status_name(cl_int status);
/* A short hint for a status (may be ""). */
const char *bcl_cl_status_hint(cl_int status);
/* Parses a status name back to its value; false if unknown. */
bool bcl_cl_status_parse(const char *name, cl_int *out);

/* ---- strict number parsing (for options) ----------------------------- */

/* Each returns BCL_OK or BCL_EXIT_INPUT with a message naming `what`. */
int bcl_parse_u64(const char *text, const char *what, uint64_t min, uint64_t max, uint64_t *out,
                  bcl_error *e);
int bcl_parse_float(const char *text, const char *what, float *out, bcl_error *e);

/* ---- devices ------------------------------------------------------------ */

typedef struct bcl_device_info {
    cl_platform_id platform;
    cl_device_id device;
    unsigned platform_index, device_index;
    char platform_name[256];
    char platform_version[256];
    char name[256];
    char vendor[256];
    char version[256];
    char driver[256];
    char c_version[256];
    cl_device_type type;
    cl_uint compute_units;
    cl_uint clock_mhz;
    cl_uint address_bits;
    size_t max_work_group;
    size_t max_item_sizes[3];
    cl_ulong global_mem;
    cl_ulong local_mem;
    cl_ulong max_alloc;
    bool fp64, fp16;
} bcl_device_info;

typedef struct bcl_device_list {
    bcl_device_info *dev;
    size_t count;
} bcl_device_list;

/* Enumerates every device of every platform. No platform at all is an error
 * (BCL_EXIT_RUNTIME) that says how to install one. */
int bcl_devices_enumerate(bcl_device_list *list, bcl_error *e);
void bcl_devices_free(bcl_device_list *list);
const char *bcl_device_type_name(cl_device_type t);

/* A parsed device selector (docs/DESIGN.md). */
typedef enum { BCL_SEL_DEFAULT, BCL_SEL_INDEX, BCL_SEL_TYPE, BCL_SEL_NAME } bcl_sel_kind;
typedef struct bcl_selector {
    bcl_sel_kind kind;
    unsigned platform, device; /* BCL_SEL_INDEX */
    cl_device_type type;       /* BCL_SEL_TYPE */
    char name[256];            /* BCL_SEL_NAME, as given */
} bcl_selector;

/* Parses SEL; NULL or "" means default. "a:b" must be two decimal indices. */
int bcl_selector_parse(const char *text, bcl_selector *sel, bcl_error *e);
/* Picks one device of list; unknown or ambiguous selectors are input errors
 * listing the candidates. */
int bcl_selector_match(const bcl_selector *sel, const bcl_device_list *list, size_t *index,
                       bcl_error *e);

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
    /* Checks parameter values (floats in declaration order). */
    int (*check)(const float *p, bcl_error *e);
    /* Fills n balls (4 floats each) deterministically from seed: state[0]
     * is ball `first` of the whole state, and ball i depends only on seed
     * and i (each ball takes a fixed number of PRNG draws, so a slice
     * starts with bcl_rng_seed_at), so any cut of a run into slices,
     * filled apart, gives the bits of one fill from ball 0. */
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
/* Parses defaults into p. */
void bcl_model_param_defaults(const bcl_model *m, float *p);
/* Parses text for parameter i into p (at the parameter's float offset). */
int bcl_model_param_parse(const bcl_model *m, unsigned i, const char *text, float *p, bcl_error *e);

/* ---- deterministic random numbers -------------------------------------- */

/* SplitMix64 (Steele, Lea, Flood 2014): same sequence on every machine. */
typedef struct bcl_rng {
    uint64_t s;
} bcl_rng;
void bcl_rng_seed(bcl_rng *r, uint64_t seed);
/* The generator seeded with seed after `draws` calls of bcl_rng_next, in
 * O(1): SplitMix64's state after d draws is seed + d * gamma. */
void bcl_rng_seed_at(bcl_rng *r, uint64_t seed, uint64_t draws);
uint64_t bcl_rng_next(bcl_rng *r);
/* Uniform integer in [0, bound), by the multiply-shift of the top 32 bits. */
uint32_t bcl_rng_below(bcl_rng *r, uint32_t bound);
/* Uniform float in [lo, hi) built from 24 random bits. */
float bcl_rng_uniform(bcl_rng *r, float lo, float hi);
/* Finite, normal float of random sign with exponent in [emin, emax]. */
float bcl_rng_mixed(bcl_rng *r, int emin, int emax);

/* ---- state files (.npy, docs/DESIGN.md) ---------------------------------------- */

/* Reads an (N, 4) little-endian float32 C-order .npy v1.0 file. *state is
 * malloc'ed; the caller frees it. Every header defect and every non-finite
 * value is an input error naming the file. */
int bcl_npy_read(const char *path, float **state, size_t *n, bcl_error *e);
/* The pieces of a state file for those who read and write it in slices
 * (an MPI run, each rank its own balls): the header of path checked as
 * bcl_npy_read checks it (and the file's size against the shape), giving
 * the ball count and the byte offset of the data, ball i at offset + 16 i;
 * the finite-value check of bcl_npy_read for balls [first, first + n)
 * held in state; and the header bcl_npy_write writes for n balls, copied
 * into out when size allows, its length returned either way. */
int bcl_npy_read_header(const char *path, size_t *n, uint64_t *data_offset, bcl_error *e);
int bcl_npy_check_finite(const char *path, const float *state, size_t n, size_t first,
                         bcl_error *e);
size_t bcl_npy_header(size_t n, unsigned char *out, size_t size);
/* Writes atomically: a temporary file in the same folder, then rename. */
int bcl_npy_write(const char *path, const float *state, size_t n, bcl_error *e);

/* Writes `len` bytes to path atomically (temporary file + fsync + rename). */
int bcl_write_file_atomic(const char *path, const void *data, size_t len, bcl_error *e);

/* ---- pictures of a state -------------------------------------------------- */

#define BCL_SNAPSHOT_MAX_SIDE 4096

typedef struct bcl_snapshot_opts {
    unsigned width, height; /* pixels; 0 and 0: the longer side 800, the other by aspect */
    bool has_box;           /* box is the model's box; else the balls' bounding box */
    float box[4];           /* x0, y0, x1, y1 */
} bcl_snapshot_opts;

/* Parses "WxH" (each 16 to BCL_SNAPSHOT_MAX_SIDE) for the option `what`. */
int bcl_snapshot_size_parse(const char *text, const char *what, unsigned *w, unsigned *h,
                            bcl_error *e);
/* Renders the (x, y) of n balls as an RGB PNG in memory: the box outlined,
 * each ball a dot, colour darker where more balls share a pixel (log scale);
 * non-finite balls are left out. y grows downwards, as on a screen. *png is
 * malloc'ed; the caller frees it. */
int bcl_snapshot_encode(const float *state, size_t n, const bcl_snapshot_opts *o, void **png,
                        size_t *len, bcl_error *e);
/* bcl_snapshot_encode, then bcl_write_file_atomic to path. */
int bcl_snapshot_write(const char *path, const float *state, size_t n, const bcl_snapshot_opts *o,
                       bcl_error *e);

/* ---- validation (docs/DESIGN.md) ----------------------------------------------- */

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

/* ULP distance between two floats; UINT64_MAX if either is NaN. */
uint64_t bcl_ulp_distance(float a, float b);
/* Compares got against want (n balls), accumulating into v. */
void bcl_compare(const float *want, const float *got, size_t n, size_t first_ball, uint64_t tol_ulp,
                 bcl_validation *v);
/* Runs the model's reference on a copy of init chunk by chunk (on all host
 * cores) and compares with result. init is left unchanged. */
int bcl_validate(const bcl_model *m, const float *p, const float *init, const float *result,
                 size_t n, uint64_t steps, uint64_t tol_ulp, bcl_validation *v, bcl_error *e);

/* ---- the device context: queue, program, kernels ------------------------- */

typedef struct bcl_context bcl_context;

typedef struct bcl_build_report {
    bool cache_used;   /* the binary cache was consulted */
    bool cache_hit;    /* the program came from the cache */
    double program_ms; /* from creating the program to a built one */
    char note[256];    /* why the cache missed, or was skipped */
    bool cache_stored; /* bcl_context_cache_store wrote an entry */
    double store_ms;   /* time bcl_context_cache_store took (0 when nothing was stored) */
    char warning[512]; /* something the user should see even without -v (an unwritable
                          cache folder); empty when all went well */
} bcl_build_report;

typedef struct bcl_context_opts {
    bool use_cache;
    const char *cache_dir; /* an existing folder to use instead of bcl_cache_dir(); NULL: that */
} bcl_context_opts;

/* Creates a context, profiling queue and the model's built program on dev. */
int bcl_context_create(const bcl_device_info *dev, const bcl_model *m, const bcl_context_opts *opts,
                       bcl_context **out, bcl_build_report *rep, bcl_error *e);
void bcl_context_destroy(bcl_context *c);
const bcl_device_info *bcl_context_device(const bcl_context *c);
const bcl_model *bcl_context_model(const bcl_context *c);
cl_context bcl_context_cl(const bcl_context *c);
cl_command_queue bcl_context_queue(const bcl_context *c);
cl_program bcl_context_program(const bcl_context *c);
/* The kernel "<model>_<suffix>", created once and kept. */
int bcl_context_kernel(bcl_context *c, const char *suffix, cl_kernel *k, bcl_error *e);
/* Stores the program in the binary cache when this context built it from
 * source with the cache in use (at most once; a no-op otherwise). Call it
 * after the first launch: PoCL serialises its binary once, at the first
 * query, and only then does it carry the work-group code PoCL compiles at the
 * first launch of each local size. A failure to write is no error: it goes
 * into rep->warning (rep may be NULL). bcl_context_destroy stores too if this
 * was never called. */
void bcl_context_cache_store(bcl_context *c, bcl_build_report *rep);

/* Where kernel sources are found: BALLCL_KERNEL_DIR, ../cl next to the
 * executable, or the installed data folder. */
int bcl_kernel_dir(char *out, size_t size, bcl_error *e);
/* Reads cl/<file> into a malloc'ed NUL-terminated string. */
int bcl_kernel_source(const char *file, char **text, size_t *len, bcl_error *e);
/* The options every kernel is built with. */
const char *bcl_build_options(void);

/* ---- launch configuration (docs/BENCHMARK.md) ------------------------------------ */

typedef enum { BCL_LOCAL_AUTO, BCL_LOCAL_DRIVER, BCL_LOCAL_TUNED, BCL_LOCAL_FIXED } bcl_local_mode;

typedef struct bcl_launch {
    bcl_local_mode mode;
    size_t local;    /* 0 when the driver chooses */
    const char *how; /* "auto", "driver", "tuned", "user" */
    char why[160];   /* how the local size was derived */
} bcl_launch;

/* Parses --local: auto|driver|tuned|<n>. */
int bcl_local_parse(const char *text, bcl_launch *l, bcl_error *e);
/* The local size from device and kernel queries alone (pure, testable). */
size_t bcl_local_auto(size_t kernel_wg, size_t pref_multiple, size_t dev_max, size_t item_max0,
                      cl_uint compute_units, size_t n, char *why, size_t why_size);
size_t bcl_round_up(size_t n, size_t multiple);

/* ---- a simulation on the device ------------------------------------------ */

typedef enum { BCL_SYNC_END, BCL_SYNC_EVERY } bcl_sync;

typedef struct bcl_sim_timing {
    double device_ms; /* first launch start to last launch end (profiling) */
    double wall_ms;   /* host clock around the enqueues and the final wait */
    uint64_t launches;
} bcl_sim_timing;

typedef struct bcl_sim bcl_sim;
typedef struct bcl_plan bcl_plan; /* below, "the launch plan" */

/* Allocates device buffers for n balls (split when one allocation is too
 * small) and uploads state. n is checked once, by bcl_memory_fit, before
 * the caller allocates anything for it; here a count the device cannot
 * hold fails as the allocation does. */
int bcl_sim_create(bcl_context *c, const float *state, size_t n, bcl_sim **out, bcl_error *e);
/* The one check that n balls fit, done before anything is allocated for
 * them: n >= 1, the state fits the device's memory, and host_copies
 * copies of the state on the host (the state, a reference copy, a
 * scratch copy...) plus the device's own copy when the device is a CPU
 * (its buffers live in host memory) fit the host's memory
 * (bcl_host_memory_bytes). BCL_EXIT_INPUT naming `what` and both sizes
 * when they do not. */
int bcl_memory_fit(const bcl_device_info *dev, size_t n, unsigned host_copies, const char *what,
                   bcl_error *e);
/* The memory this process may use on the host, in bytes (0: unknown). */
uint64_t bcl_host_memory_bytes(void);
/* Applies `steps` steps as plan p says; the state stays on the device. */
int bcl_sim_run(bcl_sim *s, const bcl_plan *p, uint64_t steps, bcl_sim_timing *t, bcl_error *e);
/* One launch of o's kernel with no balls, so that work a driver defers to
 * the first launch (PoCL compiles per local size) is not timed as a step.
 * *ms is its wall time. */
int bcl_sim_warmup(bcl_sim *s, const bcl_plan *o, double *ms, bcl_error *e);
/* Reads the state back into state (n balls). */
int bcl_sim_read(bcl_sim *s, float *state, bcl_error *e);
/* Uploads state again (to repeat a measurement from the same start). */
int bcl_sim_write(bcl_sim *s, const float *state, bcl_error *e);
size_t bcl_sim_chunks(const bcl_sim *s);
/* The context and ball count the simulation was created with. */
bcl_context *bcl_sim_context(const bcl_sim *s);
size_t bcl_sim_balls(const bcl_sim *s);
void bcl_sim_destroy(bcl_sim *s);

/* ---- binary cache folder (docs/cache.md) ------------------------------------- */

/* The cache folder: $BALLCL_CACHE_DIR, else $XDG_CACHE_HOME/ballcl (an
 * absolute XDG_CACHE_HOME only, as the XDG spec says), else
 * $HOME/.cache/ballcl. Nothing is created. Other parts keep their own files
 * there too (tune-*.json); program entries are "program-<key>.bin". */
int bcl_cache_dir(char *out, size_t size, bcl_error *e);
/* Like bcl_cache_dir, and creates the folder (and missing parents) with mode
 * 0700. BCL_EXIT_INPUT with the path and the reason when it cannot. */
int bcl_cache_dir_create(char *out, size_t size, bcl_error *e);

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

/* Lists the program entries of dir (not tune-*.json or other files), sorted
 * by file name; *entries is malloc'ed (NULL when empty). A missing folder is
 * an empty list. */
int bcl_cache_list(const char *dir, bcl_cache_entry_info **entries, size_t *count, bcl_error *e);
/* Removes the program entries of dir, and temporaries that writers killed
 * mid-write left behind (older than ten minutes: a younger one may belong to
 * a running process). Every other file stays. Counts are optional. */
int bcl_cache_clear(const char *dir, size_t *entries, uint64_t *bytes, size_t *temporaries,
                    bcl_error *e);
/* ---- kernel variants (docs/BENCHMARK.md) ------------------------------------------ */

/* A model's kernels are "<model>_step" (one step) and "<model>_steps" (k
 * steps in registers); "<model>_step_<v>" and "<model>_steps_<v>" are
 * variants <v> of them. A variant name ending in x<B> (e.g. "x16") handles B
 * consecutive balls per work-item; any other name handles one. */
#define BCL_VARIANT_NAME 24
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
 * work-item up to 16; everything else uses the base kernel. Returns a name
 * from list (or ""). */
const char *bcl_variant_default(cl_device_type type, bool fused, const bcl_variant *list,
                                size_t count);

/* The default steps per launch (K) when the user gives none and nothing is
 * tuned: 1 when the host waits after every launch (the intermediate states
 * are wanted), else min(steps, BCL_DEFAULT_K). */
#define BCL_DEFAULT_K 100
unsigned bcl_default_steps_per_launch(uint64_t steps, bcl_sync sync);

/* ---- the launch plan ------------------------------------------------------ */

/* What a caller asks for. Zero and NULL fields mean "choose": the plan then
 * takes what 'ballcl tune' stored for the device, else the documented rules
 * (docs/DESIGN.md, "The launch plan"). */
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
} bcl_plan_request;

/*
 * A launch plan: everything a run on one device needs, resolved once by
 * bcl_plan_resolve for one context, and never changed by the functions that
 * take it (bcl_sim_run, bcl_sim_warmup, the timers, bcl_check_sim).
 *
 * Contract:
 *  - A plan is plain data (no pointers into the request): it may be copied,
 *    kept after the request is gone, and passed to any simulation of the
 *    context it was resolved for, of any size (the kernel, K, variant and
 *    local size do not depend on the balls; global is for `balls`).
 *  - It describes the balls [first, first + balls) of a larger state. A
 *    caller splitting one run over several devices cuts N into contiguous
 *    shards (bcl_plan_shards), each a whole number of `block` balls but the
 *    last, and resolves one plan per shard on that shard's own context: the
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
    bool fused;                     /* the k-step kernel (K > 1, or asked for) */
    char variant[BCL_VARIANT_NAME]; /* "" for the base kernel */
    unsigned balls_per_item;        /* of the variant */
    unsigned block;                 /* shards other than the last hold a multiple of this */
    char kernel[64];                /* suffix for bcl_context_kernel: "steps_x16" */
    bcl_launch launch;              /* resolved: local (0: the driver's), how, why */
    size_t global;                  /* global size for `balls` balls */
    uint64_t check_steps;           /* validation schedule: steps of the check that runs
                                       before a configuration is timed (bench, tune,
                                       survey): a full and a partial launch of K */
    char warning[256];              /* the tuned file was consulted and could not be used;
                                       empty otherwise */
} bcl_plan;

/* Resolves r on context c into *p: K, variant, kernel and local size. An
 * unknown variant, or a local size beyond the kernel's limit, is an input
 * error. Reads the tuned file only through bcl_context_tuned (once per
 * context). */
int bcl_plan_resolve(bcl_context *c, const bcl_plan_request *r, bcl_plan *p, bcl_error *e);
/* Steps of the validation that precedes a timing, for K steps per launch:
 * a few single steps, or one full and one partial launch. */
uint64_t bcl_check_steps(unsigned k);

/* A contiguous part of a run's balls. */
typedef struct bcl_shard {
    size_t first, count;
} bcl_shard;
/* Cuts n balls into at most `parts` contiguous shards whose sizes are
 * multiples of block (but the last) and differ by at most one block;
 * shards are never empty. Returns the number written to out. */
size_t bcl_plan_shards(size_t n, size_t parts, unsigned block, bcl_shard *out);

/* ---- measurement (docs/BENCHMARK.md; shared by bench, tune and survey) ------------- */

typedef struct bcl_stats {
    double median, min, max;
    unsigned count;
} bcl_stats;

/* Median, minimum and maximum of x[0..n) (n >= 1); sorts x in place. The
 * median of an even count is the mean of the two middle values. */
void bcl_stats_compute(double *x, unsigned n, bcl_stats *out);

typedef struct bcl_measure_opts {
    unsigned repeats;   /* timed repeats (>= 1) */
    uint64_t steps;     /* steps per repeat; 0: chosen so a repeat takes about repeat_ms */
    double repeat_ms;   /* target duration of one repeat when steps is 0 */
    uint64_t max_steps; /* cap on the chosen steps (0: 1000000) */
} bcl_measure_opts;

typedef struct bcl_measurement {
    bcl_stats device_us; /* per step, from profiling events (first start to last end) */
    bcl_stats wall_us;   /* per step, host monotonic clock around enqueue and wait */
    uint64_t steps;      /* steps per repeat */
    uint64_t launches;   /* launches per repeat */
} bcl_measurement;

/* Times configuration o on s: one warm-up launch and untimed calibration runs
 * first, then mo->repeats runs of the same number of steps. The state on the
 * device keeps evolving; it is not validated here (see bcl_check_sim). */
int bcl_measure_sim(bcl_sim *s, const bcl_plan *o, const bcl_measure_opts *mo, bcl_measurement *out,
                    bcl_error *e);

/* A configuration being timed one repeat at a time, so that a caller can
 * interleave the repeats of several configurations (bench does: a noisy
 * moment on a shared machine then hits every row alike). Creating one does
 * the warm-up and calibration; each bcl_timer_repeat adds one timed repeat
 * (mo->repeats at most); bcl_timer_result gives the statistics so far. */
typedef struct bcl_timer bcl_timer;
int bcl_timer_sim(bcl_sim *s, const bcl_plan *o, const bcl_measure_opts *mo, bcl_timer **out,
                  bcl_error *e);
int bcl_timer_host(const bcl_model *m, const float *p, float *state, size_t n, bool openmp,
                   const bcl_measure_opts *mo, bcl_timer **out, bcl_error *e);
int bcl_timer_repeat(bcl_timer *t, bcl_error *e);
void bcl_timer_result(const bcl_timer *t, bcl_measurement *out);
void bcl_timer_free(bcl_timer *t);

/* Uploads init (all the simulation's balls), runs o->check_steps steps of
 * plan o, reads the result into scratch (as many balls) and
 * compares it with the model's C reference (bit for bit when tol_ulp is 0)
 * into v. A mismatch is not an error: v says so. */
int bcl_check_sim(bcl_sim *s, const bcl_plan *o, const float *init, uint64_t tol_ulp,
                  float *scratch, bcl_validation *v, bcl_error *e);

/* Read+write bandwidth of clEnqueueCopyBuffer between two device buffers of
 * `bytes` bytes (capped at the device's allocation limit), the source filled
 * with pseudo-random bytes (memory compression would inflate the figure for
 * zeros): one warm-up copy, then `repeats` copies timed by profiling events;
 * GB/s = 2 * bytes / time. */
int bcl_measure_copy(bcl_context *c, size_t bytes, unsigned repeats, bcl_stats *gb_per_s,
                     bcl_error *e);

/* The host rows: the model's scalar C reference on one thread (openmp
 * false), or the OpenMP host loop (one step over all balls per iteration,
 * balls shared among threads). Both apply `steps` steps to state in place. */
void bcl_host_steps(const bcl_model *m, const float *p, float *state, size_t n, uint64_t steps,
                    bool openmp);
/* Number of threads the OpenMP host loop uses. */
unsigned bcl_host_threads(void);
/* Times bcl_host_steps on state like bcl_measure_sim (host clock only; the
 * result is in wall_us and device_us alike). */
int bcl_measure_host(const bcl_model *m, const float *p, float *state, size_t n, bool openmp,
                     const bcl_measure_opts *mo, bcl_measurement *out, bcl_error *e);

/* ---- tuning (docs/BENCHMARK.md) ----------------------------------------------------- */

/* One tuned launch configuration. */
typedef struct bcl_tuned_entry {
    bool found;
    char variant[BCL_VARIANT_NAME];
    size_t local;              /* 0: the driver chooses */
    unsigned steps_per_launch; /* K (1 for the one-step entry) */
    double us_per_step;        /* median device time when tuned */
} bcl_tuned_entry;

/* What 'ballcl tune' stores per device key and model. */
typedef struct bcl_tuned {
    bcl_tuned_entry single; /* best one-step kernel launch */
    bcl_tuned_entry fused;  /* best k-step kernel launch and K */
    uint64_t balls;         /* N it was tuned at */
    char date[32];          /* UTC, ISO 8601 */
} bcl_tuned;

/* The device key: SHA-256 (hex, first 32 digits) of the platform name and
 * version, device name, vendor and version, driver version and address
 * bits, so a driver update invalidates tuned results. */
int bcl_device_key(const bcl_device_info *d, char out[33], bcl_error *e);
/* Path of the tuned file of (d, m): <cache>/tuned/<model>-<key>.json, where
 * <cache> is BALLCL_CACHE_DIR, else $XDG_CACHE_HOME/ballcl, else
 * ~/.cache/ballcl. */
int bcl_tuned_path(const bcl_device_info *d, const bcl_model *m, char *out, size_t size,
                   bcl_error *e);
/* Loads the tuned file of (d, m). No file: BCL_OK with both entries not
 * found. A file that does not parse, is of another format version or names
 * another device or model is an input error naming the file. */
int bcl_tuned_load(const bcl_device_info *d, const bcl_model *m, bcl_tuned *t, bcl_error *e);
/* The tuned record of the context's device and model, read from its file
 * at the first call and kept (all entries not found when nothing is
 * stored). A file that cannot be used counts as nothing tuned; *problem
 * (optional) then says why, else it is NULL. */
const bcl_tuned *bcl_context_tuned(bcl_context *c, const char **problem);

/* Progress of long work, for the caller to show; the library never prints. */
typedef void (*bcl_progress_fn)(void *arg, unsigned done, unsigned total, const char *what);

typedef struct bcl_tune_opts {
    const float *params;
    size_t balls;
    bcl_init init;
    uint64_t seed;
    bcl_measure_opts measure;
    const unsigned *ks; /* K values for the fused sweep (NULL: the default list) */
    size_t nks;
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
} bcl_tune_result;

/* The local sizes a sweep tries for a kernel: the preferred multiple pm
 * times 1, 2, 4, ... up to limit, and no larger than the work-items rounded
 * up to pm (at least one size). Returns the count written (cap at most). */
size_t bcl_tune_local_sizes(size_t pm, size_t limit, size_t items, size_t *out, size_t cap);
/* The local sizes the tuner tries for the kernel of o over `balls` balls:
 * bcl_tune_local_sizes from the kernel's preferred multiple up to its
 * work-group limit (and the device's first item size), plus the automatic
 * choice when the list lacks it; at most cap (>= 2) sizes. The driver's
 * choice (NULL) is not in the list. *pm_out (optional) gets the kernel's
 * preferred work-group size multiple. */
int bcl_tune_locals(bcl_context *c, const bcl_plan *o, size_t balls, size_t *out, size_t cap,
                    size_t *count, size_t *pm_out, bcl_error *e);
/* Sweeps local sizes (and the driver's choice) for every variant of the
 * one-step kernel, then for every variant of the k-step kernel at K =
 * BCL_DEFAULT_K, then K for the best of those; every candidate is validated
 * bit for bit before it is timed. The winner of each is the fastest
 * median; for K the smallest within 3% of the fastest. r->cand is
 * malloc'ed: free with bcl_tune_result_free. Does not store anything. */
int bcl_tune(bcl_context *c, const bcl_tune_opts *o, bcl_tune_result *r, bcl_error *e);
void bcl_tune_result_free(bcl_tune_result *r);
/* Stores r->best (with the device's identity, the date and every candidate
 * of r) atomically as the tuned file of (d, m), creating the folders with
 * mode 0700; the path is written to path_out. */
int bcl_tuned_save(const bcl_device_info *d, const bcl_model *m, const bcl_tune_result *r,
                   char *path_out, size_t path_size, bcl_error *e);

/* ---- test hooks ----------------------------------------------------------- */

/* Fault injection: BALLCL_FAULT="name:n[:STATUS]" makes the n-th call (from
 * 1) of the OpenCL or I/O function `name` fail with STATUS (default
 * CL_OUT_OF_RESOURCES for OpenCL calls, EIO for I/O). Returns the status
 * to fail with, or 0 to go on. */
int bcl_fault_take(const char *name);

/* ---- launch latency (docs/SURVEY.md; shared by survey) -------------------------- */

/* One launch of o's kernel (o->steps_per_launch steps) over every chunk of
 * s, queued and not waited for; *ev (optional) is the event of the last
 * chunk's launch, which the caller releases. */
int bcl_sim_enqueue(bcl_sim *s, const bcl_plan *o, cl_event *ev, bcl_error *e);

/* Latency of a tiny launch of o's kernel on s (a simulation of a few
 * balls), two figures measured apart so that one can fail alone. Each does
 * a warm-up launch and a few untimed ones, then `repeats` samples (median,
 * min, max, in microseconds); the state evolves.
 * Dispatch: CL_PROFILING_COMMAND_QUEUED to _START of the launch's event. */
int bcl_measure_dispatch(bcl_sim *s, const bcl_plan *o, unsigned repeats, bcl_stats *us,
                         bcl_error *e);
/* Round trip: the host's monotonic clock around the enqueue and clFinish. */
int bcl_measure_roundtrip(bcl_sim *s, const bcl_plan *o, unsigned repeats, bcl_stats *us,
                          bcl_error *e);

/* ---- device capability survey (docs/SURVEY.md; docs/SURVEY.md) ----------------- */

/* The schema version every survey file carries; readers refuse others. */
#define BCL_SURVEY_SCHEMA "ballcl-survey/1"

/* jansson's type; the survey functions hand JSON documents in and out. */
struct json_t;

typedef struct bcl_survey_opts {
    bool quick;                /* smaller N, fewer repeats (for CI) */
    size_t small_n;            /* balls of the "small" ball-step figure */
    size_t sweep_n;            /* balls of the local size sweep */
    size_t large_n;            /* balls of "large", copy and fused; 0: bcl_survey_large_n */
    unsigned fused_k;          /* steps per launch of the fused figure */
    unsigned build_repeats;    /* builds timed per build figure */
    unsigned latency_repeats;  /* samples per latency figure */
    bcl_measure_opts measure;  /* repeats and repeat length of every ball-step figure */
    uint64_t seed;             /* PRNG seed of the random initial states */
    const char *command;       /* the command line, recorded in the document */
    const char *driver_caches; /* what bcl_survey_driver_caches_off said */
    bcl_progress_fn progress;
    void *progress_arg;
} bcl_survey_opts;

/* The documented defaults (docs/SURVEY.md), or the --quick ones. */
void bcl_survey_opts_default(bcl_survey_opts *o, bool quick);
/* The "large" N for d: 16M balls (256 MiB) on a GPU or accelerator, 4M
 * (64 MiB) on a CPU, 64K with quick; never more than one allocation
 * (max_alloc) or a quarter of the device's memory holds, at least small_n. */
size_t bcl_survey_large_n(const bcl_device_info *d, const bcl_survey_opts *o);
/* The N of the fused figure: enough balls to fill the device (65536 per
 * compute unit), at least sweep_n, at most the large N. A k-step launch
 * costs K times a one-step one, so N = large would take minutes on a CPU
 * for a rate that no longer changes with N once the device is full. */
size_t bcl_survey_fused_n(const bcl_device_info *d, const bcl_survey_opts *o);
/* Turns the drivers' own program caches off for this process
 * (POCL_KERNEL_CACHE=0, CUDA_CACHE_DISABLE=1), leaving any value the user
 * set, and writes what holds into note. Must run before the first OpenCL
 * call: drivers read these once, when they start. */
void bcl_survey_driver_caches_off(char *note, size_t size);

/* The document without devices: schema, version, date, command, settings
 * and an empty "devices" array. NULL when out of memory. */
struct json_t *bcl_survey_document(const bcl_survey_opts *o);
/* Identity and limits of d as the survey's "identity" and "limits"
 * objects, in a new device object (no device calls: extensions is the
 * CL_DEVICE_EXTENSIONS text or NULL, pm the preferred multiple or 0 when
 * unknown). Strings that are not valid UTF-8 have their bad bytes replaced
 * by '?', so the JSON is always valid. NULL when out of memory. */
struct json_t *bcl_survey_device_info(const bcl_device_info *d, const char *extensions, size_t pm);
/* Surveys one device into a new device object (*out): identity, limits and
 * every measured figure, each ball-step figure validated bit for bit
 * against the model's C reference before it is timed, for every model of
 * the table. A figure that cannot be measured is null, with its error under
 * "errors"; the others go on. *status is the worst outcome: BCL_OK,
 * BCL_EXIT_MISMATCH (a figure failed validation) or BCL_EXIT_RUNTIME (a
 * figure failed). Returns non-zero only when out of memory. */
int bcl_survey_device(const bcl_device_info *d, const bcl_survey_opts *o, struct json_t **out,
                      int *status, bcl_error *e);
/* Adds to dev's "flags" every figure above a plausible peak (the rules of
 * docs/SURVEY.md); returns the number of flags. */
size_t bcl_survey_flag(struct json_t *dev);

/* Parses and checks a survey held in buf (len bytes, no NUL needed): valid
 * JSON, schema BCL_SURVEY_SCHEMA, every required key with its type. name
 * labels the messages. BCL_EXIT_INPUT with a one-line message on any
 * defect; else *out is the document (the caller decrefs it). */
int bcl_survey_read(const char *buf, size_t len, const char *name, struct json_t **out,
                    bcl_error *e);
/* Reads the file at path and checks it with bcl_survey_read. */
int bcl_survey_load(const char *path, struct json_t **out, bcl_error *e);
/* Writes doc atomically (bcl_write_file_atomic) as indented JSON. */
int bcl_survey_save(const char *path, const struct json_t *doc, bcl_error *e);

#endif
