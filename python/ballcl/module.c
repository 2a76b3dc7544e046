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
     "Every OpenCL device of every platform.\n\n"
     "Returns:\n"
     "    list of dict: one per device, with every field of `ballcl devices --json`\n"
     "    (selector, default, platform, name, vendor, type, compute_units, ...,\n"
     "    identity, limits, capabilities). Enumerated once per process.\n\n"
     "Raises:\n"
     "    DeviceError: the OpenCL loader or a driver failed (no platform at all).\n"},
    {"run", (PyCFunction)(void (*)(void))bpy_run_py, METH_VARARGS | METH_KEYWORDS,
     "run(state, steps, *, device=None, model='seed', params=None, steps_per_launch=None,\n"
     "    local=None, validate=True, out=None, cache=True, progress=False)\n--\n\n"
     "Applies `steps` steps of the model to state on one device or several.\n\n"
     "Parameters:\n"
     "    state: numpy.ndarray of shape (N, 4), N >= 1, dtype float32 in the\n"
     "        machine's byte order, finite; left unchanged. Strided or misaligned\n"
     "        arrays are copied once.\n"
     "    steps: int, 0 to 2**40.\n"
     "    device: str or None: a selector as for `ballcl run -d` ('cpu', 'gpu', '0:1',\n"
     "        part of a name), 'all' or a comma-separated list for several devices;\n"
     "        None: $BALLCL_DEVICE, else the first GPU, accelerator, CPU.\n"
     "    model: str or ballcl.Model: 'seed' (the default), 'bounce', or a model\n"
     "        file (ballcl.Model; its context is kept with it, as for a name).\n"
     "    params: dict or None: the model's parameters by name (numbers, pairs as\n"
     "        sequences), e.g. {'gravity': 9.8, 'box': (800, 600)}.\n"
     "    steps_per_launch: int or None: steps per kernel launch (K); None lets the\n"
     "        launch plan choose.\n"
     "    local: 'auto', 'driver', 'tuned', an int work-group size, or None.\n"
     "    validate: bool: compare the result with the model's reference (C, or a\n"
     "        Model's NumPy step in a child process), bit for bit.\n"
     "    out: numpy.ndarray or None: a writable C-contiguous float32 (N, 4) array to\n"
     "        read the new state into (it may be state itself); one device only.\n"
     "    cache: bool: keep the context of (device, model) for the process (True) or\n"
     "        open and close one for this call (False).\n"
     "    progress: False; True: a line on stderr as `ballcl run` prints (the first\n"
     "        after 2 s of steps); or a callable(steps_done, steps_total), called\n"
     "        as the steps go, steps_done increasing to steps_total (what it raises\n"
     "        is raised once the run is over).\n\n"
     "Returns:\n"
     "    (new_state, Result): new_state is a new read-only float32 (N, 4) array\n"
     "    (numpy.array(new_state) is a writable copy), or out when given; passing it\n"
     "    back continues on the device with no upload. Result holds the fields of\n"
     "    `ballcl run --json`.\n\n"
     "Raises:\n"
     "    TypeError: state or out is not a float32 ndarray in the machine's byte\n"
     "        order, or an argument has the wrong type (validate must be a bool).\n"
     "    InputError: a bad value (also a ValueError): shape, N = 0, NaN or infinity\n"
     "        in the state, a state that leaves float32, steps out of range, an\n"
     "        unknown device, model or parameter, out of the wrong shape.\n"
     "    DeviceError: OpenCL or the runtime failed (.call and .status say where).\n"
     "    InputError also: a Model's NumPy reference raised, crashed, ran past its\n"
     "        time limit or returned no (N, 4) float32 array.\n"
     "    MismatchError: the device's state differs from the reference (.result,\n"
     "        .state).\n"
     "    KeyboardInterrupt: Ctrl-C during the run.\n"},
    {"survey", (PyCFunction)(void (*)(void))bpy_survey_py, METH_VARARGS | METH_KEYWORDS,
     "survey(device=None, *, quick=False)\n--\n\n"
     "The device capability survey (docs/SURVEY.md), measured by the same code as\n"
     "`ballcl survey`.\n\n"
     "Parameters:\n"
     "    device: str or None: one selector, a comma-separated list or 'all'; None:\n"
     "        every device ($BALLCL_DEVICE is not used, as in the command).\n"
     "    quick: bool: the small settings of `ballcl survey --quick` (seconds).\n\n"
     "Returns:\n"
     "    dict: the document `ballcl survey --json` writes. A figure that could not\n"
     "    be measured is None, with its error under the device's \"errors\".\n\n"
     "Raises:\n"
     "    TypeError: quick is not a bool, or device not a str.\n"
     "    InputError: no device matches the selector.\n"
     "    DeviceError: OpenCL failed before any figure could be measured.\n"
     "    KeyboardInterrupt: Ctrl-C during the survey.\n"},
    {"cached", bpy_cached_py, METH_NOARGS,
     "cached()\n--\n\n"
     "The contexts ballcl.run keeps for the process.\n\n"
     "Returns:\n"
     "    list of dict: one per context: device ('P:D'), name, model, balls and\n"
     "    device_bytes of its device buffers, pinned_host_bytes, calls, builds,\n"
     "    uploads.\n\n"
     "Raises:\n"
     "    Nothing but MemoryError.\n"},
    {"close", bpy_close_py, METH_NOARGS,
     "close()\n--\n\n"
     "Frees the contexts ballcl.run keeps, waiting for calls in progress; arrays\n"
     "already returned stay valid and the next call opens a new context. Also\n"
     "done at interpreter exit.\n\n"
     "Returns:\n"
     "    None.\n\n"
     "Raises:\n"
     "    Nothing.\n"},
    {"_close_at_exit", bpy_close_at_exit_py, METH_NOARGS, NULL},
    {"_set_result_type", set_result_type, METH_O, NULL},
    {"_result_fields", bpy_result_fields, METH_O, NULL},
    {"_cli", bpy_cli_py, METH_O,
     "_cli(argv, /)\n--\n\nRuns `ballcl argv[1] ...` (devices, survey, version) as the program\n"
     "does, printing on stdout and stderr. Returns its exit status."},
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
        bpy_model_type_init(m) < 0 || bpy_readback_init() < 0 ||
        PyModule_AddObjectRef(m, "Context", (PyObject *)&bpy_ContextType) < 0 ||
        PyModule_AddStringConstant(m, "__version__", BALLCL_VERSION) < 0 ||
        PyModule_AddStringConstant(m, "version", BALLCL_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
