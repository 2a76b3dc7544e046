/*
 * ballcl.Model: a model file (docs/MODELS.md) from Python, OpenCL C text or
 * a .cl file, loaded by the public bcl_model_load, with the user's NumPy
 * reference of one step instead of a C one. The library validates nothing
 * for it (it has no reference of its own): after the run the reference
 * goes `steps` steps in a child process (ballcl/_reference.py, with a time
 * limit) and the device's bits are compared here, as bcl_validate does.
 */
#include "core.h"

#include "run/run.h" /* bcl_compare, bcl_validation_merge: the library's comparison */

#include <stdint.h>
#include <string.h>

typedef struct {
    PyObject_HEAD bcl_model *m;
    PyObject *reference; /* callable(state, *params) -> state, or None */
    PyObject *limit;     /* the reference's time limit in seconds (float), or None */
    PyObject *path;      /* the file read, or None for text */
} bpy_model;

/* Whether source names a file: a path object, or a str ending in ".cl"
 * that holds no newline (source text always has one before its update). */
static int names_file(PyObject *source)
{
    if (!PyUnicode_Check(source))
        return PyObject_HasAttrString(source, "__fspath__");
    Py_ssize_t len = PyUnicode_GetLength(source);
    PyObject *nl = PyUnicode_FromString("\n"), *cl = PyUnicode_FromString(".cl");
    Py_ssize_t at = nl && cl ? PyUnicode_Find(source, nl, 0, len, 1) : -2;
    Py_ssize_t tail = at == -1 ? PyUnicode_Tailmatch(source, cl, 0, len, 1) : 0;
    Py_XDECREF(nl);
    Py_XDECREF(cl);
    return at == -2 || tail < 0 ? -1 : at == -1 && tail == 1;
}

static int model_init(PyObject *self, PyObject *args, PyObject *kw)
{
    bpy_model *o = (bpy_model *)self;
    static char *names[] = {"source", "reference", "name", "reference_limit_s", NULL};
    PyObject *source, *reference = Py_None, *name = Py_None, *limit = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$OO:Model", names, &source, &reference, &name,
                                     &limit))
        return -1;
    if (o->m) {
        PyErr_SetString(PyExc_RuntimeError, "Model.__init__ called twice");
        return -1;
    }
    if (reference != Py_None && !PyCallable_Check(reference)) {
        PyErr_Format(PyExc_TypeError,
                     "reference: expected a callable step(state, *params) -> new_state or None, "
                     "got %.80s",
                     Py_TYPE(reference)->tp_name);
        return -1;
    }
    if (name != Py_None && !PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "name: expected a str or None, got %.80s",
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    if (limit != Py_None) {
        double s = PyFloat_AsDouble(limit);
        if (s == -1.0 && PyErr_Occurred())
            return -1;
        if (!(s > 0 && s < 1e9)) {
            bpy_input_error("reference_limit_s: %g: expected seconds above 0 (None: 60 s plus 1 s "
                            "per 10 million ball-steps)",
                            s);
            return -1;
        }
        if (!(limit = PyFloat_FromDouble(s)))
            return -1;
    } else {
        Py_INCREF(limit);
    }
    Py_XSETREF(o->limit, limit);
    int file = names_file(source);
    if (file < 0)
        return -1;
    if (!file && !PyUnicode_Check(source)) {
        PyErr_Format(PyExc_TypeError,
                     "source: expected OpenCL C text (str) or a path to a .cl file, got %.80s",
                     Py_TYPE(source)->tp_name);
        return -1;
    }
    if (file && name != Py_None) {
        bpy_input_error("name: a model file is named after its file: expected name=None with a "
                        "path (or pass the file's text)");
        return -1;
    }
    /* The library reads a file itself (its messages name the path); text
     * is named NAME.cl in messages, "model.cl" without a name. */
    PyObject *fs = NULL, *label = NULL;
    bcl_model_spec spec = {0};
    if (file) {
        if (!PyUnicode_FSConverter(source, &fs))
            return -1;
        spec.path = PyBytes_AS_STRING(fs);
        if (!(label = PyOS_FSPath(source)))
            goto fail;
    } else {
        Py_ssize_t len;
        if (!(spec.text = PyUnicode_AsUTF8AndSize(source, &len)))
            goto fail;
        spec.len = (size_t)len;
        label = name == Py_None ? Py_NewRef(Py_None) : PyUnicode_FromFormat("%U.cl", name);
        if (!label || (label != Py_None && !(spec.path = PyUnicode_AsUTF8(label))))
            goto fail;
    }
    bcl_error e = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS;
    rc = bcl_model_load(&spec, &o->m, &e);
    Py_END_ALLOW_THREADS;
    if (rc) {
        bpy_raise(&e);
        goto fail;
    }
    Py_XSETREF(o->reference, Py_NewRef(reference));
    Py_XSETREF(o->path, file ? Py_NewRef(label) : Py_NewRef(Py_None));
    Py_XDECREF(fs);
    Py_XDECREF(label);
    return 0;
fail:
    Py_XDECREF(fs);
    Py_XDECREF(label);
    return -1;
}

static void model_dealloc(PyObject *self)
{
    bpy_model *o = (bpy_model *)self;
    /* Contexts and ballcl.run's cached ones hold the Model: none uses m now. */
    bcl_model_free(o->m);
    Py_CLEAR(o->reference);
    Py_CLEAR(o->limit);
    Py_CLEAR(o->path);
    PyTypeObject *type = Py_TYPE(self);
    type->tp_free(self);
    Py_DECREF(type); /* a heap type's instances hold it */
}

/* What a getter of model_getset gives (its closure). */
enum { F_NAME, F_SHA256, F_SOURCE, F_PARAMS, F_REFERENCE, F_LIMIT, F_PATH };

/* {name: default} in declaration order (each a float32's value). */
static PyObject *params_of(const bcl_model *m)
{
    float p[BCL_MAX_PARAMS];
    bcl_model_param_defaults(m, p);
    PyObject *d = PyDict_New();
    for (unsigned i = 0; d && i < m->nparams; i++) {
        PyObject *v = PyFloat_FromDouble(p[i]);
        if (!v || PyDict_SetItemString(d, m->params[i].opt, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyObject *get_field(PyObject *self, void *closure)
{
    bpy_model *o = (bpy_model *)self;
    const bcl_model *m = o->m;
    if (!m)
        return bpy_input_error("Model: not initialised (Model.__init__ failed or was not called)");
    switch ((int)(intptr_t)closure) {
    case F_NAME:
        return PyUnicode_FromString(m->name);
    case F_SHA256:
        return PyUnicode_FromString(m->digest);
    case F_SOURCE:
        return bpy_text(m->source);
    case F_PARAMS:
        return params_of(m);
    case F_REFERENCE:
        return Py_NewRef(o->reference);
    case F_LIMIT:
        return Py_NewRef(o->limit);
    default:
        return Py_NewRef(o->path);
    }
}

static PyObject *model_repr(PyObject *self)
{
    bpy_model *o = (bpy_model *)self;
    if (!o->m)
        return PyUnicode_FromString("<ballcl.Model (not initialised)>");
    return PyUnicode_FromFormat("<ballcl.Model %s: %u parameter%s, sha256 %.12s..., %s>",
                                o->m->name, o->m->nparams, o->m->nparams == 1 ? "" : "s",
                                o->m->digest,
                                o->reference == Py_None ? "no reference" : "NumPy reference");
}

#define FIELD(name, f, doc)                                                                        \
    {                                                                                              \
        name, get_field, NULL, doc, (void *)(intptr_t)(f)                                          \
    }
static PyGetSetDef model_getset[] = {
    FIELD("name", F_NAME, "The model's name: the file's name without .cl, or name=."),
    FIELD("params", F_PARAMS,
          "The parameters' defaults by name, in the order update takes them (a new dict)."),
    FIELD("sha256", F_SHA256, "The hex SHA-256 of the source text."),
    FIELD("source", F_SOURCE, "The OpenCL C source text."),
    FIELD("reference", F_REFERENCE, "The NumPy step(state, *params) -> new_state, or None."),
    FIELD("reference_limit_s", F_LIMIT,
          "The reference's time limit in seconds, or None: 60 s plus 1 s per 10 million "
          "ball-steps."),
    FIELD("path", F_PATH, "The file the source was read from, or None for text."),
    {NULL, NULL, NULL, NULL, NULL},
};
#undef FIELD

static const char model_doc[] =
    "Model(source, reference=None, *, name=None, reference_limit_s=None)\n"
    "--\n\n"
    "A model file (docs/MODELS.md): your update of one ball in OpenCL C, run by\n"
    "ballcl.run(model=m) and ballcl.Context(model=m) like a built-in model.\n\n"
    "Parameters:\n"
    "    source: str or os.PathLike: a path (a path object, or a str ending in\n"
    "        '.cl' with no newline) is read; any other str is the source text,\n"
    "        '#pragma ballcl param NAME DEFAULT' lines and\n"
    "        float4 update(float4 b, float NAME, ...).\n"
    "    reference: callable or None: step(state, *params) -> new_state, one step\n"
    "        in NumPy on the (N, 4) float32 state, the parameters numpy.float32\n"
    "        scalars in declaration order; runs are validated against it bit for\n"
    "        bit (in a child process). None: runs are not validated.\n"
    "    name: str or None: the name of text's model (in messages, kernels and\n"
    "        results); None: 'model'. A file's model is named after the file.\n"
    "    reference_limit_s: float or None: the reference's time limit per\n"
    "        validation; None: 60 s plus 1 s per 10 million ball-steps.\n\n"
    "Raises:\n"
    "    TypeError: an argument of the wrong type.\n"
    "    InputError: a file that cannot be read, a bad pragma, an unsuffixed\n"
    "        floating literal, an update of another shape (FILE:LINE named).\n";

static PyType_Slot model_slots[] = {
    {Py_tp_doc, (void *)model_doc},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, model_init},
    {Py_tp_dealloc, model_dealloc},
    {Py_tp_repr, model_repr},
    {Py_tp_getset, model_getset},
    {0, NULL},
};

static PyType_Spec model_spec = {
    .name = "ballcl.Model",
    .basicsize = sizeof(bpy_model),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = model_slots,
};

PyObject *bpy_model_type;

int bpy_model_type_init(PyObject *module)
{
    bpy_model_type = PyType_FromSpec(&model_spec);
    return bpy_model_type ? PyModule_AddObjectRef(module, "Model", bpy_model_type) : -1;
}

const bcl_model *bpy_model_of(PyObject *o)
{
    if (!PyObject_TypeCheck(o, (PyTypeObject *)bpy_model_type))
        return NULL;
    const bcl_model *m = ((bpy_model *)o)->m;
    if (!m)
        bpy_input_error("model: the ballcl.Model is not initialised (its __init__ failed)");
    return m;
}

bool bpy_model_path_known(PyObject *o)
{
    return ((bpy_model *)o)->path != Py_None;
}

bool bpy_model_has_numpy_reference(PyObject *o)
{
    return o && ((bpy_model *)o)->reference != Py_None;
}

unsigned bpy_model_host_copies(PyObject *o)
{
    /* The start handed to the reference, the result it shares, and the
     * child's state (its step's temporaries are the user's). */
    return bpy_model_has_numpy_reference(o) ? 3 : 0;
}

/* The reference's states after x's steps from x->init, from
 * ballcl._reference.run: a new float32 (N, 4) array; NULL with an
 * exception set (InputError naming what went wrong). */
static PyArrayObject *reference_states(const bpy_exec *x)
{
    const bpy_args *a = x->args;
    bpy_model *o = (bpy_model *)a->model_obj;
    npy_intp dims[2] = {(npy_intp)x->balls, 4};
    /* A copy: the child and a traceback may outlive the caller's array. */
    PyObject *init = PyArray_SimpleNew(2, dims, NPY_FLOAT32);
    PyObject *params = PyTuple_New(o->m->nparams);
    PyObject *mod = init && params ? PyImport_ImportModule("ballcl._reference") : NULL;
    PyObject *got = NULL;
    if (mod) {
        memcpy(PyArray_DATA((PyArrayObject *)init), x->init, x->balls * 4 * sizeof(float));
        bool ok = true;
        for (unsigned i = 0; ok && i < o->m->nparams; i++) {
            PyObject *v = PyFloat_FromDouble(a->params[i]);
            ok = v && PyTuple_SetItem(params, i, v) == 0;
        }
        if (ok)
            got = PyObject_CallMethod(mod, "run", "OOKOOs", o->reference, init,
                                      (unsigned long long)a->steps, params, o->limit, o->m->name);
    }
    Py_XDECREF(mod);
    Py_XDECREF(init);
    Py_XDECREF(params);
    if (!got)
        return NULL;
    /* ballcl._reference checked every step's array: this is its promise. */
    if (!PyArray_Check(got) || PyArray_TYPE((PyArrayObject *)got) != NPY_FLOAT32 ||
        PyArray_SIZE((PyArrayObject *)got) != (npy_intp)x->balls * 4 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)got)) {
        Py_DECREF(got);
        return (PyArrayObject *)bpy_input_error(
            "model '%s': ballcl._reference returned no contiguous (N, 4) float32 array",
            o->m->name);
    }
    return (PyArrayObject *)got;
}

int bpy_model_validate(bpy_exec *x)
{
    PyArrayObject *want = reference_states(x);
    if (!want)
        return -1;
    const float *w = PyArray_DATA(want);
    memset(&x->r.v, 0, sizeof x->r.v);
    /* Each member's shard apart, as the library validates a group. */
    for (size_t i = 0; i < bcl_group_size(x->g) && i < BCL_MAX_DEVICES; i++) {
        const bcl_shard *s = &bcl_group_member_at(x->g, i)->shard;
        bcl_validation *v = &x->mv[i];
        memset(v, 0, sizeof *v);
        if (s->count)
            bcl_compare(w + 4 * s->first, x->out + 4 * s->first, s->count, s->first, 0, v);
        bcl_validation_merge(&x->r.v, v);
    }
    Py_DECREF(want);
    x->numpy_validated = true;
    return 0;
}
