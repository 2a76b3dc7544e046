/*
 * `python -m ballcl devices|survey|version` (ballcl/__main__.py): the
 * program's own commands and dispatcher (tools/cli, linked in), so that the
 * module prints what the program prints: no second parser.
 */
#include "core.h"

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

/* The program's commands a pip user has without the C build. */
static const cli_command commands[] = {
    {"devices", cmd_devices, CLI_SUMMARY_DEVICES},
    {"survey", cmd_survey, CLI_SUMMARY_SURVEY},
    {"version", cmd_version, CLI_SUMMARY_VERSION},
};

PyObject *bpy_cli_py(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "_cli: expected a list of str (argv)");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(arg);
    char **argv = calloc((size_t)n + 1, sizeof *argv);
    if (!argv)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(arg, i);
        const char *text = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
        if (!text) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "_cli: expected a list of str (argv)");
            free(argv);
            return NULL;
        }
        argv[i] = (char *)text; /* kept alive by the list */
    }
    /* What Python wrote so far comes first; the command writes through C's
     * stdout, which the dispatcher flushes and checks. */
    PyObject *r = PyObject_CallMethod(PySys_GetObject("stdout"), "flush", NULL);
    Py_XDECREF(r);
    PyErr_Clear();
    int rc = cli_dispatch(commands, sizeof commands / sizeof commands[0], (int)n, argv);
    fflush(stderr);
    free(argv);
    return PyLong_FromLong(rc);
}
