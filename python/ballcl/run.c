/*
 * ballcl.run(state, steps, ...): one run from a state, on a context of its
 * own (the program from the binary cache), destroyed at the end; separate
 * calls may run in separate threads at once.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

PyObject *bpy_run_py(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"state", "steps",    "device", "model", "params", "steps_per_launch",
                            "local", "validate", NULL};
    PyObject *state_o, *steps_o, *device_o = Py_None, *model_o = Py_None, *params_o = Py_None;
    PyObject *spl_o = Py_None, *local_o = Py_None, *validate_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$OOOOOO:run", names, &state_o, &steps_o,
                                     &device_o, &model_o, &params_o, &spl_o, &local_o, &validate_o))
        return NULL;
    bpy_args a = {0};
    const char *sel;
    if (bpy_model_arg(model_o, params_o, &a) || bpy_steps_arg(steps_o, &a) ||
        bpy_spl_arg(spl_o, &a) || bpy_local_arg(local_o, &a) || bpy_validate_arg(validate_o, &a) ||
        bpy_device_arg(device_o, &sel))
        return NULL;
    PyArrayObject *in = bpy_state_arg(state_o);
    if (!in)
        return NULL;
    size_t n = (size_t)PyArray_DIM(in, 0), di;
    PyObject *out = NULL, *ret = NULL;
    bcl_error e = {0};
    const char *eff = sel ? sel : getenv("BALLCL_DEVICE");
    if (bpy_is_device_list(eff)) {
        size_t idx[BCL_MAX_DEVICES], count;
        if (bpy_device_pick_list(eff, idx, &count) == 0)
            ret = bpy_run_group(in, &a, idx, count);
        goto done;
    }
    if (bpy_device_pick(sel, &di))
        goto done;
    const bcl_device_info *dev = &bpy_devices()->dev[di];
    /* The output array is the one host copy this call adds. */
    if (bcl_memory_fit(dev, n, 1, "state", &e)) {
        bpy_raise(&e);
        goto done;
    }
    npy_intp dims[2] = {(npy_intp)n, 4};
    if (!(out = PyArray_SimpleNew(2, dims, NPY_FLOAT32)))
        goto done;

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
    if (bpy_check_overflow(&a, x.init, x.out, n)) {
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
