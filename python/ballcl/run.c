/*
 * ballcl.run(state, steps, ...): one run from a state. On one device it
 * runs on the process-wide context of the device and model (runcache.c);
 * with cache=False on a context of its own (the program from the binary
 * cache), destroyed at the end; several devices run as a group (group.c).
 */
#include "core.h"

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
    size_t n = (size_t)PyArray_DIM(in, 0), di;
    PyObject *out = NULL, *ret = NULL;
    bcl_error e = {0};
    const char *eff = sel ? sel : getenv("BALLCL_DEVICE");
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
            ret = bpy_run_group(in, &a, idx, count);
        goto done;
    }
    if (bpy_device_pick(sel, &di))
        goto done;
    if (cache) {
        ret = bpy_run_cached(&a, di, in, out_o);
        goto done;
    }
    const bcl_device_info *dev = &bpy_devices()->dev[di];
    /* The output array is the one host copy this call adds. */
    if (bcl_memory_fit(dev, n, 1, "state", &e)) {
        bpy_raise(&e);
        goto done;
    }
    if (out_o != Py_None) {
        if (!(out = (PyObject *)bpy_out_arg(out_o, n)))
            goto done;
        /* The check compares with the start: keep it apart from out. */
        if (a.validate && bpy_overlaps(PyArray_DATA((PyArrayObject *)out), PyArray_DATA(in),
                                       n * 4 * sizeof(float))) {
            PyObject *copy = PyArray_NewCopy(in, NPY_CORDER);
            if (!copy)
                goto done;
            Py_SETREF(in, (PyArrayObject *)copy);
        }
    } else {
        float *ignored;
        if (!(out = bpy_plain_state_array(n, &ignored)))
            goto done;
    }

    bcl_build_report br;
    memset(&br, 0, sizeof br);
    bool stored = false;
    bpy_exec x = {
        .args = &a,
        .balls = n,
        .init = PyArray_DATA(in),
        .out = PyArray_DATA((PyArrayObject *)out),
        .build = &br,
        .stored = &stored,
        .readback = "pageable",
    };
    bcl_context_opts copts = {.use_cache = true};
    PyThreadState *ts = PyEval_SaveThread();
    int rc = bcl_context_create(dev, a.model, &copts, &x.ctx, &br, &e);
    if (rc == BCL_OK)
        rc = bcl_sim_create(x.ctx, x.init, n, &x.sim, &e);
    if (rc == BCL_OK)
        rc = bpy_exec_run(&x, &e, &ts);
    bcl_sim_destroy(x.sim);
    bcl_context_destroy(x.ctx);
    PyEval_RestoreThread(ts);
    if (rc != BCL_OK && rc != BPY_PENDING) {
        bpy_raise(&e);
        goto done;
    }
    if (rc == BPY_PENDING || bpy_warn(&x, &br) < 0)
        goto done;
    PyObject *result = bpy_result(&x, dev, &br, NULL);
    if (!result)
        goto done;
    if (a.validate && x.v.mismatches) {
        bpy_raise_mismatch(result, out, &x);
        Py_DECREF(result);
        goto done;
    }
    if (bpy_check_overflow(&a, x.init == x.out ? NULL : x.init, x.out, n)) {
        Py_DECREF(result);
        goto done;
    }
    ret = PyTuple_Pack(2, out, result);
    Py_DECREF(result);
done:
    bcl_error_clear(&e);
    Py_XDECREF(in);
    Py_XDECREF(out);
    return ret;
}
