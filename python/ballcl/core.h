/*
 * The ballcl Python module (_core): what its C files share.
 *
 * The module is an embedding program of the public API (ballcl/ballcl.h)
 * and nothing else. Arrays come and go through NumPy's C API; the device
 * work runs with the GIL released, taking it back between chunks of
 * launches to let Python handle signals (Ctrl-C).
 */
#ifndef BALLCL_PY_CORE_H
#define BALLCL_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API  NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL ballcl_py_ARRAY_API
#ifndef BALLCL_PY_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "ballcl/ballcl.h"

/* The float32 dtype of this machine's byte order, and the other one, as
 * NumPy writes them (for the messages that refuse the other). */
#if NPY_BYTE_ORDER == NPY_BIG_ENDIAN
#define BPY_NATIVE_F4  "big-endian, '>f4'"
#define BPY_SWAPPED_F4 "little-endian float32 ('<f4')"
#else
#define BPY_NATIVE_F4  "little-endian, '<f4'"
#define BPY_SWAPPED_F4 "big-endian float32 ('>f4')"
#endif

/* A return code of the run functions beyond the BCL_EXIT_* classes: a
 * Python exception (KeyboardInterrupt, from a signal) is pending. */
#define BPY_PENDING (-1)

/* ---- errors.c: bcl_error to Python exceptions -------------------------- */

extern PyObject *bpy_Error, *bpy_DeviceError, *bpy_InputError, *bpy_MismatchError;
/* Creates the exception classes and adds them to the module; -1 on failure. */
int bpy_errors_init(PyObject *module);
/* The ballcl.Error subclass of e's class with e's message; for an OpenCL
 * failure also .call and .status. Clears e; NULL with an exception set. */
PyObject *bpy_exception(bcl_error *e);
/* Raises bpy_exception(e); returns NULL. */
PyObject *bpy_raise(bcl_error *e);
/* Raises InputError (a ValueError) with a formatted message; returns NULL. */
PyObject *bpy_input_error(const char *fmt, ...);
/* A str from C text; bytes that are not UTF-8 become U+FFFD. */
PyObject *bpy_text(const char *s);

/* ---- devices.c: the process's device list ----------------------------- */

/* The devices, enumerated at the first call and kept; NULL with an
 * exception set. */
const bcl_device_list *bpy_devices(void);
/* A child forked after OpenCL was used is marked (bpy_forked: release
 * nothing); bpy_fork_refused: in one, DeviceError raised and true. */
int bpy_fork_init(void);
bool bpy_forked(void);
bool bpy_fork_refused(void);
/* The device `sel` picks (NULL: $BALLCL_DEVICE, else the default), or with
 * several the *count it names, into index; -1 with an exception set. */
int bpy_device_pick(const char *sel, size_t *index, size_t *count, bool several);
/* Every field `ballcl devices --json` gives for d, a device of bpy_devices(). */
PyObject *bpy_device_full(const bcl_device_info *d);
/* json.loads(text), the module's one JSON reader; NULL with an exception. */
PyObject *bpy_json_loads(const char *text);
/* Whether sel names several devices ("all", or a comma-separated list). */
bool bpy_is_device_list(const char *sel);

/* ---- args.c: Python arguments to library values ----------------------- */

typedef struct bpy_args {
    const bcl_model *model;
    PyObject *model_obj; /* the ballcl.Model of a model file (borrowed), or NULL */
    float params[BCL_MAX_PARAMS];
    uint64_t steps;
    unsigned steps_per_launch; /* 0: the plan chooses */
    bcl_launch launch;
    bool local_given; /* local was not None */
    bool validate;
} bpy_args;

/* A function's arguments: its own (own, NULL ended: npos positional, then
 * keyword-only) and, keyword-only, the options table's for `which` (CLI_PY_*). */
#define BPY_MAX_KW 24
typedef struct bpy_kwlist {
    unsigned which;
    const char *const *own;
    size_t npos;
    char *names[BPY_MAX_KW + 1];
    char format[BPY_MAX_KW + 40];
    size_t n;
} bpy_kwlist;
/* Parses a run method's args and kw into v (BPY_MAX_KW of them, NULL: not
 * given); -1 with TypeError set. */
int bpy_kw_parse(bpy_kwlist *k, PyObject *args, PyObject *kw, PyObject **v);
/* The value of keyword name, dflt when it was not given or k has none. */
PyObject *bpy_kw(const bpy_kwlist *k, PyObject *const *v, const char *name, PyObject *dflt);
/* The run options among v into a (the model and params unless a has one),
 * in the table's ranges; 0, or -1 with TypeError or InputError set. */
int bpy_run_options(const bpy_kwlist *k, PyObject *const *v, bpy_args *a);

/* Each returns 0, or -1 with TypeError or InputError set. */
int bpy_model_arg(PyObject *model, PyObject *params, bpy_args *a);
/* The device selector text of `device` (None or str) into *sel (NULL for
 * None); the pointer lives as long as `device`. A NUL inside is refused. */
int bpy_device_arg(PyObject *device, const char **sel);
/* `state` as a C-contiguous, aligned float32 (N, 4) array (a new
 * reference, copied if need be); NULL with TypeError or InputError set.
 * The caller scans it for NaN and infinity (bpy_finite). */
PyArrayObject *bpy_state_arg_unscanned(PyObject *state);
/* Whether the count floats at f are all finite; else *bad is the first
 * that is not. Needs no GIL. */
bool bpy_finite(const float *f, size_t count, size_t *bad);
/* The InputError for the non-finite float f[i]; returns NULL. */
PyObject *bpy_nonfinite_error(const float *f, size_t i);

/* ---- exec.c: one run on a group, GIL released --------------------------- */

/* A run of bcl_group_exec from Python: what it asks, what the Result shows. */
typedef struct bpy_exec {
    /* in */
    bcl_group *g;
    const bpy_args *args;
    size_t balls;         /* of the range */
    const float *load;    /* uploaded before the steps; NULL: the state the devices hold */
    bool load_async;      /* the upload only queued (load stays put until the call returns) */
    bool load_check;      /* the devices check the load for NaN and infinity (input_bad) */
    const float *init;    /* the start, for validation and an overflow's step; NULL: neither */
    float *out;           /* receives the state after them */
    const char *readback; /* "pinned" or "pageable": the memory read into */
    struct json_t **tree; /* a Context's last result tree (bcl_run_json_again), or NULL */
    /* out */
    bcl_exec_result r;
    const bcl_group_member *lead; /* the first member with balls (NULL until a run) */
    PyThreadState **ts;
    bool validated;       /* a validation was performed (the library's or the module's) */
    bool no_reference;    /* not validated for want of a reference (a Model without one) */
    bool numpy_validated; /* by a Model's NumPy reference (model.c): each member's in mv */
    bcl_validation mv[BCL_MAX_DEVICES];
} bpy_exec;

/* Runs x with the GIL released (*ts: the saved thread state). BCL_OK, a
 * BCL_EXIT_* class with e set, or BPY_PENDING (an exception pending). */
int bpy_exec_run(bpy_exec *x, bcl_error *e, PyThreadState **ts);

/* A group of devs[0..count) for a's model, parameters and steps, over
 * `balls` balls (0: set by the first load); called without the GIL. */
int bpy_group_open(const bpy_args *a, const bcl_device_info *const *devs, size_t count,
                   size_t balls, bcl_group **g, bcl_error *e);

/* ---- model.c: ballcl.Model, a model file with a NumPy reference ------- */

/* The class ballcl.Model (borrowed), made and added to module by
 * bpy_model_type_init (-1 with an exception set). */
extern PyObject *bpy_model_type;
int bpy_model_type_init(PyObject *module);
/* The model of a ballcl.Model, or NULL: o is none (no exception), or one
 * not initialised (InputError set). */
const bcl_model *bpy_model_of(PyObject *o);
/* Whether the Model o was read from a file (its path is the result's). */
bool bpy_model_path_known(PyObject *o);
/* Whether the Model o (or NULL) has a NumPy reference. */
bool bpy_model_has_numpy_reference(PyObject *o);
/* Copies of the state a validation by o's NumPy reference holds on the
 * host (0 for none), for the memory checks before a run. */
unsigned bpy_model_host_copies(PyObject *o);
/* Validates x's run (done, x->out read back) against its Model's NumPy
 * reference in a child process, with the GIL: x->r.v and x->mv filled;
 * -1 with an exception set (InputError: the reference raised, crashed,
 * ran past its limit or returned another shape or dtype). */
int bpy_model_validate(bpy_exec *x);

/* ---- result.c: the result object ---------------------------------------- */

/* Extra fields of a Context call. */
typedef struct bpy_ctx_report {
    bool uploaded;
    unsigned long long calls, builds, uploads;
} bpy_ctx_report;

/* The ballcl.Result class, registered by __init__.py (borrowed). */
extern PyObject *bpy_result_type;
/* (state, its Result); NULL with an exception set: MismatchError (with
 * .result and .state) when x's validation failed. */
PyObject *bpy_result_pair(const bpy_exec *x, const bpy_ctx_report *cr, PyObject *state);
/* The plan's and the build's warnings as RuntimeWarnings (every device's,
 * named, on several); -1 when a filter made one an exception. */
int bpy_warn(const bpy_exec *x, const bcl_build_report *build);

/* ---- readback.c: where a call's new state lives ------------------------ */

int bpy_readback_init(void);
/* A pool of pinned blocks for one context's returned arrays. */
PyObject *bpy_pool_create(void);
/* Frees the idle blocks; blocks still under arrays are freed with them. */
void bpy_pool_close(PyObject *pool);
/* Pinned bytes the pool holds (idle and under live arrays). */
size_t bpy_pool_bytes(PyObject *pool);
/* A new read-only float32 (n, 4) array (*data: its memory) over a pinned
 * block of pool (*pinned) or ordinary memory, neither with a writable
 * buffer (pycontext.c); pool NULL: ordinary. NULL with an exception set. */
PyObject *bpy_state_array(PyObject *pool, bcl_group *g, const bcl_device_info *d, size_t n,
                          float **data, bool *pinned);
/* `out` checked as a writable, C-contiguous, aligned float32 array of
 * *in's shape (a new reference); NULL with an exception set. With
 * validate, an out overlapping *in replaces *in by a copy. */
PyArrayObject *bpy_out_arg(PyObject *out, PyArrayObject **in, bool validate);
/* Whether two ranges of bytes overlap. */
bool bpy_overlaps(const void *a, const void *b, size_t bytes);

/* ---- runcache.c: ballcl.run's process-wide contexts ---------------------- */

/* ballcl.run through the cached context of (device, model). */
PyObject *bpy_run_cached(const bpy_args *a, size_t dev_index, PyArrayObject *in, PyObject *out_o);

/* ---- pycontext.c: the frame shared by Context.run and ballcl.run -------- */

typedef struct bpy_context bpy_context;
/* A new Context of device di and a's model; NULL with an exception set. */
PyObject *bpy_context_open(size_t di, const bpy_args *a);
/* ballcl.run's frame on c: state (from bpy_state_arg_unscanned) is
 * uploaded, read back into a new array or out_o (None or an array). */
PyObject *bpy_context_frame(PyObject *c, const bpy_args *a, PyArrayObject *state, PyObject *out_o);
/* What the context holds (runcache.c). */
typedef struct bpy_context_info {
    const bcl_device_info *dev;
    const bcl_model *model;
    size_t capacity;
    size_t pinned_bytes;
    unsigned long long calls, builds, uploads;
    bool closed;
} bpy_context_info;
void bpy_context_info_get(PyObject *c, bpy_context_info *info);
/* close() of the context; with wait false, a context in use is left open
 * (at exit: a daemon thread may hold it). */
void bpy_context_close(PyObject *c, bool wait);

/* ---- the module's functions and type (module.c's table) ------------- */

PyObject *bpy_devices_py(PyObject *self, PyObject *unused);            /* devices.c */
PyObject *bpy_survey_py(PyObject *self, PyObject *args, PyObject *kw); /* survey.c */
PyObject *bpy_run_py(PyObject *self, PyObject *args, PyObject *kw);    /* run.c */
PyObject *bpy_cached_py(PyObject *self, PyObject *unused);             /* runcache.c */
PyObject *bpy_close_py(PyObject *self, PyObject *unused);
PyObject *bpy_close_at_exit_py(PyObject *self, PyObject *unused); /* close(), not waiting */
PyObject *bpy_result_fields(PyObject *self, PyObject *tree);      /* result.c */
PyObject *bpy_cli_py(PyObject *self, PyObject *arg);              /* cli.c: python -m ballcl */
extern PyTypeObject bpy_ContextType;                              /* pycontext.c */

#endif
