/*
 * The extension module ballcl._core: module table and initialisation.
 * ballcl/__init__.py re-exports it with the Result class.
 */
#define BALLCL_PY_MODULE_C
#include "core.h"

static PyObject *set_result_type(PyObject *self, PyObject *type)
{
    (void)self;
    if (!PyCallable_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "_set_result_type: expected a class");
        return NULL;
    }
    Py_XSETREF(bpy_result_type, Py_NewRef(type));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"devices", bpy_devices_py, METH_NOARGS,
     "devices()\n--\n\n"
     "Every OpenCL device of every platform, as a list of dicts: every field of\n"
     "`ballcl devices --json` (selector, default, platform, name, vendor, type, ...)."},
    {"run", (PyCFunction)(void (*)(void))bpy_run_py, METH_VARARGS | METH_KEYWORDS,
     "run(state, steps, *, device=None, model='seed', params=None, steps_per_launch=None,\n"
     "    local=None, validate=True, out=None, cache=True)\n--\n\n"
     "Applies `steps` steps of the model to state, an (N, 4) float32 array (left\n"
     "unchanged), on one device or several. Returns (new_state, Result); new_state is\n"
     "read-only (numpy.array(new_state) is a writable copy), or out when given. On one\n"
     "device the context of (device, model) is kept for the process (ballcl.cached(),\n"
     "ballcl.close()), and passing new_state back continues on the device with no\n"
     "upload; cache=False opens and closes one for this call."},
    {"survey", (PyCFunction)(void (*)(void))bpy_survey_py, METH_VARARGS | METH_KEYWORDS,
     "survey(device=None, *, quick=False)\n--\n\n"
     "The device capability survey of every device (or those `device` selects), as\n"
     "the dict of the document `ballcl survey --json` writes (docs/SURVEY.md). A\n"
     "figure that could not be measured is None, with its error under \"errors\"."},
    {"cached", bpy_cached_py, METH_NOARGS,
     "cached()\n--\n\n"
     "The contexts ballcl.run keeps, one dict each: device, name, model, balls and\n"
     "device_bytes of its device buffers, pinned_host_bytes, calls, builds, uploads."},
    {"close", bpy_close_py, METH_NOARGS,
     "close()\n--\n\n"
     "Frees the contexts ballcl.run keeps (waiting for calls in progress); arrays\n"
     "already returned stay valid. The next call opens a new one. Also done at exit."},
    {"_set_result_type", set_result_type, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ballcl._core",
    .m_doc = "The C part of ballcl: the library's public API over NumPy arrays.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (bpy_errors_init(m) < 0 || bpy_fork_init() < 0 || PyType_Ready(&bpy_ContextType) < 0 ||
        bpy_readback_init() < 0 || bpy_runcache_init(m) < 0 ||
        PyModule_AddObjectRef(m, "Context", (PyObject *)&bpy_ContextType) < 0 ||
        PyModule_AddStringConstant(m, "__version__", BALLCL_VERSION) < 0 ||
        PyModule_AddStringConstant(m, "version", BALLCL_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
