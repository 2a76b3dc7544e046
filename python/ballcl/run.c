/*
 * ballcl.run(state, steps, ...): one run from a state, on the process-wide
 * context of the device and model (runcache.c), or with cache=False or on
 * several devices on a group of its own; each the library's one run path
 * (exec.c).
 */
#include "core.h"

#include "options.h"     /* cli_selector, the run options declared once */
#include "ocl/program.h" /* bcl_now_ms */

/* progress=: the steps done, from the run loop's waits (bcl_sim_progress),
 * to a callable or to stderr as `ballcl run` shows them. */
typedef struct progress {
    PyObject *fn;     /* the callable, or Py_True: stderr */
    uint64_t total;   /* the call's steps */
    uint64_t ended;   /* steps of the chunks ended, summed over the devices */
    size_t ndev;      /* devices that each report every chunk */
    uint64_t shown;   /* the steps told last */
    double line_ms;   /* when stderr got its last line (or the run began) */
    double every_ms;  /* between stderr's lines: `ballcl run`'s pace */
    PyObject *exc[3]; /* what the callable raised, raised after the run */
} progress;

#define PROGRESS_MS 2000.0

/* Each device reports each chunk's end (done == steps, exec.c) and its
 * waits within a long chunk. */
static void progress_hook(void *arg, uint64_t done, uint64_t steps)
{
    progress *p = arg;
    PyGILState_STATE gil = PyGILState_Ensure();
    p->ended += done == steps ? steps : 0;
    uint64_t now = (p->ended + (done < steps ? done : 0)) / p->ndev;
    now = now < p->total ? now : p->total;
    if (now > p->shown && !p->exc[0] && p->fn != Py_True) {
        p->shown = now;
        PyObject *r = PyObject_CallFunction(p->fn, "KK", (unsigned long long)now,
                                            (unsigned long long)p->total);
        if (!r)
            PyErr_Fetch(&p->exc[0], &p->exc[1], &p->exc[2]);
        Py_XDECREF(r);
    } else if (now > p->shown && p->fn == Py_True && bcl_now_ms() - p->line_ms >= p->every_ms) {
        char line[96];
        snprintf(line, sizeof line, "step %llu of %llu (%.0f%%)", (unsigned long long)now,
                 (unsigned long long)p->total, 100.0 * (double)now / (double)p->total);
        cli_progress("run", 0, 0, line);
        p->shown = now;
        p->line_ms = bcl_now_ms();
    }
    PyGILState_Release(gil);
}

/* Several devices (weighed and cut by rate), or one with cache=False: a
 * group of its own, closed after the run; in is checked finite. */
static PyObject *run_group(PyArrayObject *in, const bpy_args *a, const size_t *idx, size_t count,
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
    /* The output array is the one host copy this call adds, but for a
     * validation by a Model's NumPy reference. */
    unsigned copies = 1 + (a->validate ? bpy_model_host_copies(a->model_obj) : 0);
    if (bcl_group_memory_fit(devs, count, n, copies, "state", &e)) {
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

PyObject *bpy_run_py(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static const char *const own[] = {"state", "steps", "params", "out", NULL};
    static bpy_kwlist k = {CLI_PY_RUN, own, 2};
    PyObject *v[BPY_MAX_KW];
    if (bpy_kw_parse(&k, args, kw, v))
        return NULL;
    PyObject *out_o = bpy_kw(&k, v, "out", Py_None);
    PyObject *progress_o = bpy_kw(&k, v, "progress", Py_False);
    PyObject *cache_o = bpy_kw(&k, v, "cache", NULL);
    int cache = cache_o ? PyObject_IsTrue(cache_o) : 1;
    if (cache < 0)
        return NULL;
    if (progress_o != Py_False && progress_o != Py_True && !PyCallable_Check(progress_o))
        return PyErr_Format(PyExc_TypeError,
                            "progress: expected False, True (stderr) or a callable "
                            "(steps_done, steps_total), got %.80s",
                            Py_TYPE(progress_o)->tp_name);
    bpy_args a = {0};
    const char *sel;
    if (bpy_run_options(&k, v, &a) || bpy_device_arg(bpy_kw(&k, v, "device", NULL), &sel))
        return NULL;
    /* Scanned for NaN below: the cached path scans while the upload runs. */
    PyArrayObject *in = bpy_state_arg_unscanned(v[0]);
    if (!in)
        return NULL;
    PyObject *ret = NULL;
    const char *eff = cli_selector(sel);
    bool list = bpy_is_device_list(eff);
    size_t bad, idx[BCL_MAX_DEVICES], count = 1;
    if ((list || !cache) && !bpy_finite(PyArray_DATA(in), (size_t)PyArray_SIZE(in), &bad)) {
        bpy_nonfinite_error(PyArray_DATA(in), bad);
        goto done;
    }
    if (list && out_o != Py_None) {
        bpy_input_error("out: not taken with several devices ('%s')", eff);
        goto done;
    }
    if (bpy_device_pick(eff, idx, &count, list))
        goto done;
    progress p = {.fn = progress_o, .total = a.steps, .ndev = count, .line_ms = bcl_now_ms()};
    if (progress_o == Py_True)
        p.every_ms = 1000 * cli_progress_paced(PROGRESS_MS / 1000);
    if (progress_o != Py_False)
        bcl_sim_progress(progress_hook, &p, PROGRESS_MS);
    if (list || !cache)
        ret = run_group(in, &a, idx, count, out_o);
    else
        ret = bpy_run_cached(&a, idx[0], in, out_o);
    bcl_sim_progress(NULL, NULL, 0);
    if (p.fn == Py_True && p.shown)
        cli_progress_end();
    if (p.exc[0]) {
        Py_CLEAR(ret);
        PyErr_Restore(p.exc[0], p.exc[1], p.exc[2]);
    }
done:
    Py_XDECREF(in);
    return ret;
}
