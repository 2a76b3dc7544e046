/*
 * ballcl.run(state, steps, ...): one run from a state. On one device it
 * runs on the process-wide context of the device and model (runcache.c);
 * with cache=False, or on several devices, on a group of its own (the
 * programs from the binary cache), closed at the end (group.c). Every one
 * of them is the library's one run path (exec.c).
 */
#include "core.h"

#include "cli.h" /* cli_selector: $BALLCL_DEVICE, read in one place */

#include <stdlib.h>
#include <string.h>

PyObject *bpy_run_py(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"state", "steps",    "device", "model", "params", "steps_per_launch",
                            "local", "validate", "out",    "cache", NULL};
    PyObject *state_o, *steps_o, *device_o = Py_None, *model_o = Py_None, *params_o = Py_None;
    PyObject *spl_o = Py_None, *local_o = Py_None, *validate_o = NULL, *out_o = Py_None;
    int cache = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$OOOOOOOp:run", names, &state_o, &steps_o,
                                     &device_o, &model_o, &params_o, &spl_o, &local_o, &validate_o,
                                     &out_o, &cache))
        return NULL;
    bpy_args a = {0};
    const char *sel;
    if (bpy_model_arg(model_o, params_o, &a) || bpy_steps_arg(steps_o, &a) ||
        bpy_spl_arg(spl_o, &a) || bpy_local_arg(local_o, &a) || bpy_validate_arg(validate_o, &a) ||
        bpy_device_arg(device_o, &sel))
        return NULL;
    /* Scanned for NaN below: the cached path scans while the upload runs. */
    PyArrayObject *in = bpy_state_arg_unscanned(state_o);
    if (!in)
        return NULL;
    size_t di;
    PyObject *ret = NULL;
    const char *eff = cli_selector(sel);
    size_t bad;
    if (!(cache && !bpy_is_device_list(eff)) &&
        !bpy_finite(PyArray_DATA(in), (size_t)PyArray_SIZE(in), &bad)) {
        bpy_nonfinite_error(PyArray_DATA(in), bad);
        goto done;
    }
    if (bpy_is_device_list(eff)) {
        size_t idx[BCL_MAX_DEVICES], count;
        if (out_o != Py_None) {
            bpy_input_error("out: not taken with several devices ('%s')", eff);
            goto done;
        }
        if (bpy_device_pick_list(eff, idx, &count) == 0)
            ret = bpy_run_group(in, &a, idx, count, Py_None);
        goto done;
    }
    if (bpy_device_pick(sel, &di))
        goto done;
    /* One device: its process-wide context, or (cache=False) a group of
     * its own for this call. */
    ret = cache ? bpy_run_cached(&a, di, in, out_o) : bpy_run_group(in, &a, &di, 1, out_o);
done:
    Py_XDECREF(in);
    return ret;
}
