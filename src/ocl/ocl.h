/* OpenCL plumbing, internal side. The OpenCL target version is set here
 * (and by the build), never in the public header. */
#ifndef BALLCL_OCL_H
#define BALLCL_OCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include "ballcl/ballcl.h"
#include "util/util.h"

/* ---- the tuned record a context keeps (read by src/run/tuned_read.c) ---- */

/* One tuned launch configuration. */
typedef struct bcl_tuned_entry {
    bool found;
    char variant[BCL_VARIANT_NAME];
    size_t local;              /* 0: the driver chooses */
    unsigned steps_per_launch; /* K (1 for the one-step entry) */
    double us_per_step;        /* median device time when tuned */
} bcl_tuned_entry;

/* What 'ballcl tune' stores per device and model. */
typedef struct bcl_tuned {
    bcl_tuned_entry single; /* best one-step kernel launch */
    bcl_tuned_entry fused;  /* best k-step kernel launch and K */
    uint64_t balls;         /* N it was tuned at */
    char date[32];          /* UTC, ISO 8601 */
    /* Why an entry was dropped as damaged (a time per step not positive and
     * finite, no positive N, a rate beyond the device's bound); "" when none.
     * The other entry stays, and the dropped one's rate is calibrated. */
    char damaged[640];
} bcl_tuned;

/* A parsed device selector (docs/DESIGN.md, "Devices"). */
typedef enum { BCL_SEL_DEFAULT, BCL_SEL_INDEX, BCL_SEL_TYPE, BCL_SEL_NAME } bcl_sel_kind;
typedef struct bcl_selector {
    bcl_sel_kind kind;
    unsigned platform, device; /* BCL_SEL_INDEX */
    cl_device_type type;       /* BCL_SEL_TYPE */
    char name[256];            /* BCL_SEL_NAME, as given */
} bcl_selector;

/* The OpenCL version ballcl may use with d, 10 * major + minor (src/ocl/version.c). */
int bcl_opencl_version(const bcl_device_info *d);

/* The devices of an MPI node (docs/SCALING.md): as bcl_device_select_list,
 * but a type word or "all" names every device it matches, one named twice
 * is taken once, and NULL or "" is every GPU, else accelerator, else CPU. */
int bcl_device_select_every(const bcl_device_list *list, const char *text, size_t *index,
                            size_t cap, size_t *count, bcl_error *e);
/* Parses SEL; NULL or "" means default. "a:b" must be two decimal indices. */
int bcl_selector_parse(const char *text, bcl_selector *sel, bcl_error *e);
/* Picks one device of list; unknown or ambiguous selectors are input errors
 * listing the candidates. */
int bcl_selector_match(const bcl_selector *sel, const bcl_device_list *list, size_t *index,
                       bcl_error *e);

/* SHA-256 of the device's identity (src/ocl/device_id.c). */
int bcl_device_identity(const bcl_device_info *d, unsigned char out[32], bcl_error *e);
/* The device key of the tuned and launch-cost files: 32 hex digits of the
 * identity with the compute units and clock too. A binary fits any device
 * of one identity, but a tuned figure is a speed: a PoCL device limited to
 * fewer threads, or a GPU at another clock, has never been measured. */
int bcl_device_key(const bcl_device_info *d, char out[33], bcl_error *e);

const bcl_device_info *bcl_context_device(const bcl_context *c);
const bcl_model *bcl_context_model(const bcl_context *c);
cl_context bcl_context_cl(const bcl_context *c);
cl_command_queue bcl_context_queue(const bcl_context *c);
cl_program bcl_context_program(const bcl_context *c);
/* The launch costs of c's device and model, kept for its life (filled by
 * src/run/launch_costs.c); the cache folder (NULL: bcl_cache_dir's). */
bcl_launch_costs *bcl_context_costs(bcl_context *c);
/* What 'ballcl tune' stored for c, kept for its life (src/run/tuned_read.c). */
typedef struct bcl_tuned_memo {
    bool read;
    bcl_tuned tuned;
    char problem[sizeof((bcl_error *)0)->msg];
} bcl_tuned_memo;
bcl_tuned_memo *bcl_context_tuned_memo(bcl_context *c);
const char *bcl_context_cache_dir(const bcl_context *c);
/* Whether the context may read and write the cache folder at all. */
bool bcl_context_uses_cache(const bcl_context *c);
/* fn runs when c is destroyed, after its cache entry is stored: how a
 * folder above keeps what it learnt (the launch costs) without ocl/ calling
 * up. One slot: a second call replaces the first. */
void bcl_context_on_destroy(bcl_context *c, void (*fn)(bcl_context *c));
/* The kernel "<model>_<suffix>", created once and kept. */
int bcl_context_kernel(bcl_context *c, const char *suffix, cl_kernel *k, bcl_error *e);
/* A kernel of the context's program by its whole name (bcl_nonfinite of
 * state_check.c), created once and kept. */
int bcl_context_kernel_named(bcl_context *c, const char *name, cl_kernel *k, bcl_error *e);
/* Releases buffers a and b, each only when it was made. */
void bcl_release_buffers(cl_mem a, cl_mem b);
/* Kernel k's work-group limit on d (*kwg), that within the device's first
 * item size (*limit) and its preferred multiple (*pm). */
int bcl_kernel_groups(const bcl_device_info *d, cl_kernel k, size_t *kwg, size_t *limit, size_t *pm,
                      bcl_error *e);
/* The state check's OpenCL source, appended to every model's (state_check.c). */
extern const char bcl_state_check_source[];

/* The kernel folder (src/ocl/kernel_source.c). */
int bcl_kernel_dir(char *out, size_t size, bcl_error *e);
/* Reads cl/<file> into a malloc'ed NUL-terminated string. */
int bcl_kernel_source(const char *file, char **text, size_t *len, bcl_error *e);

/* CL_DEVICE_EXTENSIONS, malloc'ed, or NULL with e set. */
char *bcl_device_extensions(const bcl_device_info *d, bcl_error *e);
/* Creates a context, a profiling queue and the model's built program on
 * dev (rep, optional, says how the program was obtained). dev is copied. */
int bcl_context_create(const bcl_device_info *dev, const bcl_model *m, const bcl_context_opts *opts,
                       bcl_context **out, bcl_build_report *rep, bcl_error *e);
/* Stores the built program in the binary cache, once, after the first
 * launch (PoCL adds the code it compiles then); a failure is a warning in
 * rep (may be NULL). bcl_context_destroy stores if this never ran. */
void bcl_context_cache_store(bcl_context *c, bcl_build_report *rep);
void bcl_context_destroy(bcl_context *c);
/* The options every kernel is built for device d with (d NULL: those of
 * any device). */
const char *bcl_build_options(const bcl_device_info *d);
/* Model m's program (docs/MODELS.md): its update, once more on vectors of
 * balls when wide (the CPU variants), the kernels of cl/kernels.cl around
 * it and the state check; malloc'ed, NUL-terminated. */
int bcl_model_program_source(const bcl_model *m, bool wide, char **src, size_t *len, bcl_error *e);

#endif
