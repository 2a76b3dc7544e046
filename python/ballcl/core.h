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
#include "ballcl/measure.h"

/* A return code of the run functions beyond the BCL_EXIT_* classes: a
 * Python exception (KeyboardInterrupt, from a signal) is pending. */
#define BPY_PENDING (-1)

/* ---- errors.c: bcl_error to Python exceptions -------------------------- */

extern PyObject *bpy_Error, *bpy_DeviceError, *bpy_InputError, *bpy_MismatchError;
/* Creates the exception classes and adds them to the module; -1 on failure. */
int bpy_errors_init(PyObject *module);
/* Raises the ballcl.Error subclass of e's class with e's message; for an
 * OpenCL failure also .call and .status. Returns NULL. */
PyObject *bpy_raise(const bcl_error *e);
/* Raises InputError (a ValueError) with a formatted message; returns NULL. */
PyObject *bpy_input_error(const char *fmt, ...);

/* ---- devices.c: the process's device list ----------------------------- */

/* The devices of every platform, enumerated at the first call (GIL held)
 * and kept for the life of the process; NULL with an exception set. */
const bcl_device_list *bpy_devices(void);
/* Index of the device selector `sel` picks (NULL: $BALLCL_DEVICE, else the
 * default rule); -1 with an exception set. */
int bpy_device_pick(const char *sel, size_t *index);
/* A str from C text; bytes that are not UTF-8 become U+FFFD. */
PyObject *bpy_text(const char *s);
/* The `ballcl devices --json` fields of d, as a dict. */
PyObject *bpy_device_dict(const bcl_device_info *d);
/* Whether sel names several devices ("all", or a comma-separated list). */
bool bpy_is_device_list(const char *sel);
/* The devices sel names, in order, into idx (at most BCL_MAX_DEVICES); -1
 * with an exception set. */
int bpy_device_pick_list(const char *sel, size_t *idx, size_t *count);
/* ballcl.devices() */
PyObject *bpy_devices_py(PyObject *self, PyObject *unused);

/* ---- args.c: Python arguments to library values ----------------------- */

typedef struct bpy_args {
    const bcl_model *model;
    float params[BCL_MAX_PARAMS];
    uint64_t steps;
    unsigned steps_per_launch; /* 0: the plan chooses */
    bcl_launch launch;
    bool local_given; /* local was not None */
    bool validate;
} bpy_args;

/* Each returns 0, or -1 with TypeError or InputError set. */
int bpy_model_arg(PyObject *model, PyObject *params, bpy_args *a);
int bpy_steps_arg(PyObject *steps, bpy_args *a);
int bpy_spl_arg(PyObject *spl, bpy_args *a);
int bpy_local_arg(PyObject *local, bpy_args *a);
/* The device selector text of `device` (None or str) into *sel (NULL for
 * None); the pointer lives as long as `device`. */
int bpy_device_arg(PyObject *device, const char **sel);
/* `state` as a C-contiguous, aligned float32 (N, 4) array of finite values
 * (a new reference: `state` itself, or a copy when it was not contiguous
 * or aligned); NULL with TypeError or InputError set. */
PyArrayObject *bpy_state_arg(PyObject *state);

/* ---- exec.c: one run on a context, GIL released ------------------------ */

/* The (kernel, local size) pairs a context has launched: a warm-up launch
 * is needed only for a new pair (PoCL compiles per local size). */
#define BPY_WARM_MAX 16
typedef struct bpy_warm_set {
    char kernel[BPY_WARM_MAX][64];
    size_t local[BPY_WARM_MAX];
    size_t count;
} bpy_warm_set;

typedef struct bpy_exec {
    /* in */
    bcl_context *ctx;
    bcl_sim *sim;
    const bpy_args *args;
    size_t balls;
    const float *init;       /* the state before the steps, for validation */
    float *out;              /* receives the state after them */
    bpy_warm_set *warmed;    /* NULL: always warm up */
    bcl_build_report *build; /* stored in the binary cache after the first launch */
    bool *stored;            /* ...once: set when done */
    /* out */
    bcl_plan plan;
    bool plan_ok;
    char tuned_note[200]; /* whether the tuned record was used, and why not */
    size_t buffers;       /* device buffers the state is split into */
    double first_ms;      /* the warm-up launch; 0 when none was needed */
    bcl_sim_timing t;
    bcl_validation v;
} bpy_exec;

/* Resolves the plan, warms up, applies the steps, reads the state into
 * x->out and validates it. Called with the GIL released (*ts is the saved
 * thread state); between chunks of about 50 ms it takes the GIL back to
 * run Python's signal handlers. Returns BCL_OK, a BCL_EXIT_* class with e
 * set, or BPY_PENDING with a Python exception pending. */
int bpy_exec_run(bpy_exec *x, bcl_error *e, PyThreadState **ts);

/* ---- result.c: the result object ---------------------------------------- */

/* Extra fields of a Context call. */
typedef struct bpy_ctx_report {
    bool uploaded;
    unsigned long long calls, builds, uploads;
} bpy_ctx_report;

/* The ballcl.Result class, registered by __init__.py (borrowed). */
extern PyObject *bpy_result_type;
/* A Result holding the `run --json` fields of x (ctx: NULL for ballcl.run). */
PyObject *bpy_result(const bpy_exec *x, const bcl_device_info *dev, const bcl_build_report *build,
                     const bpy_ctx_report *ctx);
/* One device's part of a run, as an entry of the result's "devices". */
typedef struct bpy_member {
    const bcl_device_info *dev;
    const char *selector; /* "P:D" */
    size_t first, balls;  /* its shard */
    double share, rate, launch_ms;
    const char *rate_how;
    double device_ms, wall_ms, wait_ms; /* over the whole run */
    double max_launch_ms;               /* its longest launch */
    uint64_t steps;
    const bcl_plan *plan; /* NULL when it got no balls */
    size_t buffers;
    const bcl_build_report *build;
    const bcl_validation *v;
    bool validate;
    const char *excluded; /* why it got no balls */
} bpy_member;
PyObject *bpy_member_dict(const bpy_member *m);

/* The same fields as a dict, and a dict made a Result (steals it). */
PyObject *bpy_result_dict(const bpy_exec *x, const bcl_device_info *dev,
                          const bcl_build_report *build, const bpy_ctx_report *ctx);
PyObject *bpy_result_wrap(PyObject *dict);
/* The "validation" fields of v (done: validation was asked for). */
PyObject *bpy_validation_dict(const bcl_validation *v, bool done);
/* Raises MismatchError for x's failed validation, with .result and .state. */
PyObject *bpy_raise_mismatch(PyObject *result, PyObject *state, const bpy_exec *x);
/* Issues the plan's and the build's warnings as RuntimeWarnings; -1 when a
 * warning filter turned one into an exception. */
int bpy_warn(const bpy_exec *x, const bcl_build_report *build);

/* ---- group.c: one run over several devices ------------------------------- */

/* ballcl.run's work when the device selector names several devices: the
 * balls split by rate, one shard per device, all at once (ballcl/ballcl.h,
 * "A group"). Returns (new_state, Result) or NULL with an exception set. */
PyObject *bpy_run_group(PyArrayObject *in, const bpy_args *a, const size_t *idx, size_t count);

/* ---- run.c and pycontext.c ------------------------------------------- */

PyObject *bpy_run_py(PyObject *self, PyObject *args, PyObject *kw);
extern PyTypeObject bpy_ContextType;

#endif
