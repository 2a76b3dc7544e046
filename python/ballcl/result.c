/*
 * The result of a run: the library's one tree of it (bcl_run_json, the
 * fields of `ballcl run --json`) with Python's own keys, held by a
 * ballcl.Result (the class __init__.py registers).
 */
#include "core.h"

#include "job/job.h"

PyObject *bpy_result_type;

/* What a Result keeps until its fields are first asked for: the run's
 * tree, or the last call's and what makes this one's (bcl_run_json_again). */
typedef struct snap {
    json_t *tree;
    bool again;
    bcl_group_member m;
    bcl_exec x;
    bcl_exec_result r;
    size_t balls;
    bool has_cr;
    bpy_ctx_report cr;
    const char *readback;
} snap;

static void snap_free(PyObject *capsule)
{
    snap *s = PyCapsule_GetPointer(capsule, "ballcl.snap");
    json_decref(s->tree);
    free(s);
}

PyObject *bpy_result_fields(PyObject *self, PyObject *capsule)
{
    (void)self;
    const snap *s = PyCapsule_GetPointer(capsule, "ballcl.snap");
    if (!s)
        return NULL;
    json_t *root =
        s->again ? bcl_run_json_again(s->tree, &s->m, &s->x, &s->r, s->balls) : json_copy(s->tree);
    /* Python's own keys (docs/PYTHON.md): context and readback. */
    const bpy_ctx_report *cr = &s->cr;
    if (root) {
        json_object_set_new(root, "context",
                            s->has_cr ? json_pack("{s:b, s:I, s:I, s:I}", "uploaded", cr->uploaded,
                                                  "calls", (json_int_t)cr->calls, "builds",
                                                  (json_int_t)cr->builds, "uploads",
                                                  (json_int_t)cr->uploads)
                                      : json_null());
        json_object_set_new(
            root, "readback",
            json_pack("{s:s, s:b}", "memory", s->readback, "plan_reused", s->r.plan_reused));
    }
    /* As `run --json` prints it, read by the module's one JSON reader. */
    char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    PyObject *dict = text ? bpy_json_loads(text) : PyErr_NoMemory();
    free(text);
    return dict;
}

/* What the module knows and the library's tree does not (docs/PYTHON.md,
 * "Model"): a Model's NumPy validation in each device's entry (the whole
 * run's is r's already), and no path for a Model made from text. Each
 * entry is the library's, of the member with its validation (the one-member
 * tree of bcl_run_json_again). Non-zero: out of memory. */
static int python_fields(json_t *root, const bpy_exec *x, const bcl_exec *ex)
{
    json_t *devices = json_object_get(root, "devices");
    for (size_t i = 0; x->numpy_validated && i < json_array_size(devices); i++) {
        bcl_group_member m = *bcl_group_member_at(x->g, i);
        m.v = x->mv[i];
        json_t *one = bcl_run_json_again(root, &m, ex, &x->r, x->balls);
        json_t *entry = json_array_get(json_object_get(one, "devices"), 0);
        int rc = entry ? json_array_set(devices, i, entry) : -1;
        json_decref(one);
        if (rc)
            return -1;
    }
    json_t *file = json_object_get(root, "model_file");
    if (x->args->model_obj && !bpy_model_path_known(x->args->model_obj) && json_is_object(file))
        json_object_set_new(file, "path", json_null());
    return 0;
}

/* A Result of x, with "context" from cr (None for ballcl.run); its tree
 * becomes dicts when first asked (bpy_result_fields). */
static PyObject *result_of(const bpy_exec *x, const bpy_ctx_report *cr)
{
    snap *s = malloc(sizeof *s);
    if (!s)
        return PyErr_NoMemory();
    *s = (snap){
        .x = {.steps = x->args->steps, .validate = x->validated, .no_reference = x->no_reference},
        .r = x->r,
        .balls = x->balls,
        .has_cr = cr != NULL,
        .cr = cr ? *cr : (bpy_ctx_report){0},
        .readback = x->readback ? x->readback : "pageable"};
    /* A Context's call of its last plan (plan_reused): the whole tree was
     * most of a frame's host instructions. */
    json_t **last = x->tree;
    s->again = last && *last && x->r.plan_reused;
    if (s->again) {
        s->tree = json_incref(*last);
        s->m = *x->lead;
        if (x->numpy_validated) /* a Context: one member */
            s->m.v = x->mv[0];
    } else {
        s->tree = bcl_run_json(x->g, &s->x, &x->r, x->balls);
        if (s->tree && python_fields(s->tree, x, &s->x)) {
            json_decref(s->tree);
            s->tree = NULL;
        }
        if (s->tree && last) {
            json_decref(*last);
            *last = json_incref(s->tree);
        }
    }
    PyObject *capsule = s->tree ? PyCapsule_New(s, "ballcl.snap", snap_free) : PyErr_NoMemory();
    if (!capsule) {
        json_decref(s->tree);
        free(s);
        return NULL;
    }
    PyObject *r = PyObject_CallOneArg(bpy_result_type, capsule);
    Py_DECREF(capsule);
    return r;
}

/* Raises MismatchError for x's failed validation, with .result and .state. */
static PyObject *raise_mismatch(PyObject *result, PyObject *state, const bpy_exec *x)
{
    bcl_error e = {.code = BCL_EXIT_MISMATCH};
    snprintf(e.msg, sizeof e.msg, "validation failed: %llu of %llu floats differ from the %s",
             (unsigned long long)x->r.v.mismatches, (unsigned long long)x->r.v.compared,
             x->numpy_validated ? "NumPy reference" : "C reference");
    PyObject *exc = bpy_exception(&e);
    if (exc && PyObject_SetAttrString(exc, "result", result) == 0 &&
        PyObject_SetAttrString(exc, "state", state) == 0)
        PyErr_SetObject(bpy_MismatchError, exc);
    Py_XDECREF(exc);
    return NULL;
}

PyObject *bpy_result_pair(const bpy_exec *x, const bpy_ctx_report *cr, PyObject *state)
{
    PyObject *result = result_of(x, cr), *ret = NULL;
    if (result && x->validated && x->r.v.mismatches)
        raise_mismatch(result, state, x);
    else if (result)
        ret = PyTuple_Pack(2, state, result);
    Py_XDECREF(result);
    return ret;
}

int bpy_warn(const bpy_exec *x, const bcl_build_report *build)
{
    /* One device: build's and the lead's plan's; several: every device's,
     * named, as the CLI prints them. */
    size_t nd = bcl_group_size(x->g);
    for (size_t i = 0; i < nd; i++) {
        const bcl_group_member *m = bcl_group_member_at(x->g, i);
        const char *w[2] = {m->build.warning, m->plan.warning};
        char who[48] = ""; /* "device P:D: " */
        if (nd > 1) {
            snprintf(who, sizeof who, "device %s: ", m->selector);
        } else {
            w[0] = build ? build->warning : "";
            w[1] = x->lead ? x->lead->plan.warning : "";
        }
        for (int k = 0; k < 2; k++)
            if (w[k][0] && PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "ballcl: %s%s", who, w[k]) < 0)
                return -1;
    }
    return 0;
}
