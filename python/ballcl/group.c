/*
 * ballcl.run from a state on a group of its own (ballcl/ballcl.h, "A
 * group"): several devices (device="all" or "0:0,0:1"), weighed and cut by
 * rate, or one with cache=False. It runs the state through the one run
 * path (bpy_exec_run), then it is closed.
 */
#include "core.h"

PyObject *bpy_run_group(PyArrayObject *in, const bpy_args *a, const size_t *idx, size_t count,
                        PyObject *out_o)
{
    const bcl_device_list *list = bpy_devices();
    const bcl_device_info *devs[BCL_MAX_DEVICES];
    for (size_t i = 0; i < count; i++)
        devs[i] = &list->dev[idx[i]];
    size_t n = (size_t)PyArray_DIM(in, 0);
    PyObject *out = NULL, *ret = NULL;
    Py_INCREF(in);
    bcl_error e = {0};
    /* The output array is the one host copy this call adds. */
    if (bcl_group_memory_fit(devs, count, n, 1, "state", &e)) {
        bpy_raise(&e);
        goto done;
    }
    if (out_o && out_o != Py_None) {
        if (!(out = (PyObject *)bpy_out_arg(out_o, &in, a->validate)))
            goto done;
    } else {
        float *ignored;
        bool pinned;
        if (!(out = bpy_state_array(NULL, NULL, NULL, n, &ignored, &pinned)))
            goto done;
    }
    float *data = PyArray_DATA((PyArrayObject *)out);
    const float *init = PyArray_DATA(in);
    bpy_exec x = {
        .args = a,
        .balls = n,
        .load = init,
        /* out= the input itself: an overflow is named without its step. */
        .init = data == init ? NULL : init,
        .out = data,
        .readback = "pageable",
    };
    PyThreadState *ts = PyEval_SaveThread();
    int rc = bpy_group_open(a, devs, count, n, &x.g, &e);
    if (rc == BCL_OK && count > 1)
        rc = bcl_group_split(x.g, init, &e);
    if (rc == BCL_OK)
        rc = bpy_exec_run(&x, &e, &ts);
    PyEval_RestoreThread(ts);
    if (rc && rc != BPY_PENDING)
        bpy_raise(&e);
    else if (rc == BCL_OK && bpy_warn(&x, &x.lead->build) == 0)
        ret = bpy_result_pair(&x, NULL, out);
    Py_BEGIN_ALLOW_THREADS;
    bcl_group_close(x.g);
    Py_END_ALLOW_THREADS;
done:
    bcl_error_clear(&e);
    Py_DECREF(in);
    Py_XDECREF(out);
    return ret;
}
