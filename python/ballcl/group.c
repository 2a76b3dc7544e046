/*
 * ballcl.run from a state on a group of its own: several devices
 * (device="all" or "0:0,0:1"), or one with cache=False. The group (the
 * library's, ballcl/ballcl.h, "A group") is opened, weighed and cut by
 * rate when it has several devices, and runs the state through the one run
 * path (bpy_exec_run: the steps in chunks with the GIL taken back between
 * them for Ctrl-C, validation, the overflow check); then it is closed.
 */
#include "core.h"

#include <string.h>

static PyObject *member_dict(const bpy_exec *x, size_t i)
{
    const bcl_group_member *gm = bcl_group_member_at(x->g, i);
    bpy_member m = {
        .dev = gm->dev,
        .selector = gm->selector,
        .first = gm->shard.first,
        .balls = gm->shard.count,
        .share = gm->share,
        .rate = gm->rate,
        .launch_ms = gm->launch_ms,
        .rate_how = gm->rate_how,
        .device_ms = gm->timing.device_ms,
        .wall_ms = gm->timing.wall_ms,
        .wait_ms = gm->wait_ms,
        .max_launch_ms = gm->timing.max_launch_ms,
        .steps = x->args->steps,
        .plan = gm->shard.count ? &gm->plan : NULL,
        .buffers = gm->buffers,
        .build = &gm->build,
        .v = &gm->v,
        .validate = x->args->validate,
        .excluded = gm->excluded,
    };
    return bpy_member_dict(&m);
}

/* The one-device fields (of the first device with balls; device_ms the
 * slowest device's), plus "devices" and "aggregate", as `ballcl run --json`
 * gives them for several devices. */
static PyObject *group_result(const bpy_exec *x)
{
    size_t nd = bcl_group_size(x->g);
    PyObject *dict = bpy_result_dict(x, x->lead->dev, &x->lead->build, NULL);
    /* "devices" lists every device of the group, not the lead alone. */
    PyObject *devices = dict ? PyList_New((Py_ssize_t)nd) : NULL;
    for (size_t i = 0; devices && i < nd; i++) {
        PyObject *md = member_dict(x, i);
        if (!md)
            Py_CLEAR(devices);
        else
            PyList_SET_ITEM(devices, (Py_ssize_t)i, md);
    }
    double steps = (double)x->args->steps, wall = x->r.wall_ms;
    PyObject *agg = devices
                        ? Py_BuildValue("{s:n, s:d, s:d, s:d}", "devices", (Py_ssize_t)nd,
                                        "wall_ms", wall, "ball_steps_per_s",
                                        wall > 0 ? (double)x->balls * steps / (wall * 1e-3) : 0.0,
                                        "calibrate_ms", bcl_group_calibrate_ms(x->g))
                        : NULL;
    if (!agg || PyDict_SetItemString(dict, "devices", devices) < 0 ||
        PyDict_SetItemString(dict, "aggregate", agg) < 0)
        Py_CLEAR(dict);
    Py_XDECREF(devices);
    Py_XDECREF(agg);
    if (!dict)
        return NULL;
    /* Warnings of every device, as the CLI prints them. */
    for (size_t i = 0; i < nd; i++) {
        const bcl_group_member *m = bcl_group_member_at(x->g, i);
        const char *w[2] = {m->build.warning, m->plan.warning};
        for (int k = 0; k < 2; k++)
            if (w[k][0] && PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "ballcl: device %s: %s",
                                            m->selector, w[k]) < 0) {
                Py_DECREF(dict);
                return NULL;
            }
    }
    return bpy_result_wrap(dict);
}

/* The Result of x: one device's fields, or a group's. */
static PyObject *result_of(const bpy_exec *x)
{
    if (bcl_group_size(x->g) > 1)
        return group_result(x);
    if (bpy_warn(x, &x->lead->build) < 0)
        return NULL;
    return bpy_result(x, x->lead->dev, &x->lead->build, NULL);
}

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
        if (!(out = (PyObject *)bpy_out_arg(out_o, n)))
            goto done;
        /* The check compares with the start: keep it apart from out. */
        if (a->validate && bpy_overlaps(PyArray_DATA((PyArrayObject *)out), PyArray_DATA(in),
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
    int rc = bpy_group_open(a, idx, count, n, &x.g, &e);
    if (rc == BCL_OK && count > 1)
        rc = bcl_group_split(x.g, init, &e);
    if (rc == BCL_OK)
        rc = bpy_exec_run(&x, &e, &ts);
    PyEval_RestoreThread(ts);
    if (rc && rc != BPY_PENDING) {
        bpy_raise(&e);
    } else if (rc == BCL_OK) {
        PyObject *result = result_of(&x);
        if (result && a->validate && x.v.mismatches)
            bpy_raise_mismatch(result, out, &x);
        else if (result)
            ret = PyTuple_Pack(2, out, result);
        Py_XDECREF(result);
    }
    Py_BEGIN_ALLOW_THREADS;
    bcl_group_close(x.g);
    Py_END_ALLOW_THREADS;
done:
    bcl_error_clear(&e);
    Py_DECREF(in);
    Py_XDECREF(out);
    return ret;
}
