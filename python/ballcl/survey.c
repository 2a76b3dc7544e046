/*
 * ballcl.survey(device=None, *, quick=False): the device capability survey
 * (docs/SURVEY.md) as the dict of `ballcl survey --json`'s document, by the
 * same library code (bcl_survey_run), the GIL released. The command turns
 * the drivers' program caches off before its first OpenCL call; a module
 * cannot promise to be first and must not change the environment, so it
 * leaves them, and the document says so ("driver_caches").
 */
#include "core.h"

#include <stdlib.h>

PyObject *bpy_survey_py(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"device", "quick", NULL};
    PyObject *device_o = Py_None, *quick_o = Py_False;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$O:survey", names, &device_o, &quick_o))
        return NULL;
    if (quick_o != Py_True && quick_o != Py_False) {
        PyErr_Format(PyExc_TypeError, "quick: expected a bool (True or False), got %.80s",
                     Py_TYPE(quick_o)->tp_name);
        return NULL;
    }
    const char *sel;
    if (bpy_device_arg(device_o, &sel))
        return NULL;
    const bcl_device_list *list = bpy_devices();
    if (!list)
        return NULL;
    /* As `ballcl survey`: every device, or the devices the selector names
     * (BALLCL_DEVICE is not used). */
    size_t idx[BCL_MAX_DEVICES], count = 0;
    if (!sel) {
        for (; count < list->count && count < BCL_MAX_DEVICES; count++)
            idx[count] = count;
    } else if (bpy_device_pick(sel, idx, &count, true)) {
        return NULL;
    }
    bcl_device_info *devs = calloc(count ? count : 1, sizeof *devs);
    if (!devs)
        return PyErr_NoMemory();
    for (size_t i = 0; i < count; i++)
        devs[i] = list->dev[idx[i]];

    bcl_survey_opts o;
    bcl_survey_opts_default(&o, quick_o == Py_True);
    char command[160];
    snprintf(command, sizeof command, "ballcl.survey(device=%s%s%s, quick=%s)", sel ? "'" : "",
             sel ? sel : "None", sel ? "'" : "", quick_o == Py_True ? "True" : "False");
    o.command = command;
    o.driver_caches = "not changed (ballcl.survey from Python leaves the drivers' program "
                      "caches as the process has them)";
    char *text = NULL;
    int status = BCL_OK, rc;
    bcl_error e = {0};
    Py_BEGIN_ALLOW_THREADS;
    rc = bcl_survey_run(devs, count, &o, &text, &status, &e);
    Py_END_ALLOW_THREADS;
    free(devs);
    PyObject *doc = NULL;
    if (rc)
        bpy_raise(&e);
    else
        doc = bpy_json_loads(text);
    free(text);
    return doc;
}
