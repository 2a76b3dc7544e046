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

/* A parsed device selector (SPEC §5). */
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
    const char *opt;  /* long option name, e.g. "gravity" */
    const char *help; /* one line */
    unsigned count;   /* floats taken, 1 or 2 */
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
    /* Fills n balls (4 floats each) deterministically from seed. */
    void (*init)(float *state, size_t n, bcl_init how, uint64_t seed, const float *p);
    /* The scalar C reference: applies `steps` steps to each of n balls. */
    void (*reference)(float *state, size_t n, uint64_t steps, const float *p);
} bcl_model;

extern const bcl_model *const bcl_models[];
extern const size_t bcl_model_count;
const bcl_model *bcl_model_find(const char *name);
/* Number of floats a model's parameters take. */
unsigned bcl_model_param_floats(const bcl_model *m);
/* Parses defaults into p. */
void bcl_model_param_defaults(const bcl_model *m, float *p);
/* Parses text for parameter i into p (at the parameter's float offset). */
int bcl_model_param_parse(const bcl_model *m, unsigned i, const char *text, float *p,
                          bcl_error *e);

/* ---- deterministic random numbers -------------------------------------- */

/* SplitMix64 (Steele, Lea, Flood 2014): same sequence on every machine. */
typedef struct bcl_rng {
    uint64_t s;
} bcl_rng;
void bcl_rng_seed(bcl_rng *r, uint64_t seed);
uint64_t bcl_rng_next(bcl_rng *r);
/* Uniform integer in [0, bound), by the multiply-shift of the top 32 bits. */
uint32_t bcl_rng_below(bcl_rng *r, uint32_t bound);
/* Uniform float in [lo, hi) built from 24 random bits. */
float bcl_rng_uniform(bcl_rng *r, float lo, float hi);
/* Finite, normal float of random sign with exponent in [emin, emax]. */
float bcl_rng_mixed(bcl_rng *r, int emin, int emax);

/* ---- state files (.npy, SPEC §3) ---------------------------------------- */

/* Reads an (N, 4) little-endian float32 C-order .npy v1.0 file. *state is
 * malloc'ed; the caller frees it. Every header defect and every non-finite
 * value is an input error naming the file. */
int bcl_npy_read(const char *path, float **state, size_t *n, bcl_error *e);
/* Writes atomically: a temporary file in the same folder, then rename. */
int bcl_npy_write(const char *path, const float *state, size_t n, bcl_error *e);

/* Writes `len` bytes to path atomically (temporary file + fsync + rename). */
int bcl_write_file_atomic(const char *path, const void *data, size_t len, bcl_error *e);

/* ---- validation (SPEC §7) ----------------------------------------------- */

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
} bcl_build_report;

typedef struct bcl_context_opts {
    bool use_cache;
    bool verbose; /* the library keeps notes; the caller prints them */
} bcl_context_opts;

/* Creates a context, profiling queue and the model's built program on dev. */
int bcl_context_create(const bcl_device_info *dev, const bcl_model *m,
                       const bcl_context_opts *opts, bcl_context **out, bcl_build_report *rep,
                       bcl_error *e);
void bcl_context_destroy(bcl_context *c);
const bcl_device_info *bcl_context_device(const bcl_context *c);
const bcl_model *bcl_context_model(const bcl_context *c);
cl_context bcl_context_cl(const bcl_context *c);
cl_command_queue bcl_context_queue(const bcl_context *c);
/* The kernel "<model>_<suffix>", created once and kept. */
int bcl_context_kernel(bcl_context *c, const char *suffix, cl_kernel *k, bcl_error *e);

/* Where kernel sources are found: BALLCL_KERNEL_DIR, ../cl next to the
 * executable, or the installed data folder. */
int bcl_kernel_dir(char *out, size_t size, bcl_error *e);
/* Reads cl/<file> into a malloc'ed NUL-terminated string. */
int bcl_kernel_source(const char *file, char **text, size_t *len, bcl_error *e);
/* The options every kernel is built with. */
const char *bcl_build_options(void);

/* ---- launch configuration (SPEC §6) ------------------------------------ */

typedef enum { BCL_LOCAL_AUTO, BCL_LOCAL_DRIVER, BCL_LOCAL_TUNED, BCL_LOCAL_FIXED } bcl_local_mode;

typedef struct bcl_launch {
    bcl_local_mode mode;
    size_t local;     /* 0 when the driver chooses */
    const char *how;  /* "auto", "driver", "tuned", "user" */
    char why[160];    /* how the local size was derived */
} bcl_launch;

/* Parses --local: auto|driver|tuned|<n>. */
int bcl_local_parse(const char *text, bcl_launch *l, bcl_error *e);
/* Resolves the local size for kernel k over n work-items. */
int bcl_launch_resolve(bcl_context *c, cl_kernel k, size_t n, bcl_launch *l, bcl_error *e);
/* The local size from device and kernel queries alone (pure, testable). */
size_t bcl_local_auto(size_t kernel_wg, size_t pref_multiple, size_t dev_max, size_t item_max0,
                      cl_uint compute_units, cl_device_type type, size_t n, char *why,
                      size_t why_size);
size_t bcl_round_up(size_t n, size_t multiple);

/* ---- a simulation on the device ------------------------------------------ */

typedef enum { BCL_SYNC_END, BCL_SYNC_EVERY } bcl_sync;

typedef struct bcl_sim_opts {
    const float *params;
    uint64_t steps;
    unsigned steps_per_launch; /* K: 1 uses the one-step kernel */
    bcl_sync sync;
    bcl_launch launch;
} bcl_sim_opts;

typedef struct bcl_sim_timing {
    double device_ms; /* first launch start to last launch end (profiling) */
    double wall_ms;   /* host clock around the enqueues and the final wait */
    uint64_t launches;
} bcl_sim_timing;

typedef struct bcl_sim bcl_sim;

/* Allocates device buffers for n balls (split when one allocation is too
 * small) and uploads state. Fails before any work if n does not fit. */
int bcl_sim_create(bcl_context *c, const float *state, size_t n, bcl_sim **out, bcl_error *e);
/* BCL_OK if n balls fit in dev's global memory, else BCL_EXIT_INPUT naming
 * both sizes: callers check before making the host state, so that a huge N
 * is an error at once rather than gigabytes of host work first. */
int bcl_sim_check_fits(const bcl_device_info *dev, size_t n, bcl_error *e);
/* Runs opts->steps steps; state stays on the device. */
int bcl_sim_run(bcl_sim *s, const bcl_sim_opts *opts, bcl_sim_timing *t, bcl_error *e);
/* One launch of o's kernel with no balls, so that work a driver defers to
 * the first launch (PoCL compiles per local size) is not timed as a step.
 * *ms is its wall time. */
int bcl_sim_warmup(bcl_sim *s, const bcl_sim_opts *o, double *ms, bcl_error *e);
/* Reads the state back into state (n balls). */
int bcl_sim_read(bcl_sim *s, float *state, bcl_error *e);
/* Uploads state again (to repeat a measurement from the same start). */
int bcl_sim_write(bcl_sim *s, const float *state, bcl_error *e);
size_t bcl_sim_chunks(const bcl_sim *s);
void bcl_sim_destroy(bcl_sim *s);

/* ---- test hooks ----------------------------------------------------------- */

/* Fault injection: BALLCL_FAULT="name:n[:STATUS]" makes the n-th call (from
 * 1) of the OpenCL or I/O function `name` fail with STATUS (default
 * CL_OUT_OF_RESOURCES for OpenCL calls, EIO for I/O). Returns the status
 * to fail with, or 0 to go on. */
int bcl_fault_take(const char *name);

#endif
