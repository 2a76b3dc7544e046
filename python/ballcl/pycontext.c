/*
 * ballcl.Context: a device, its built program and a resident state kept
 * between calls, for a Python loop of many short runs.
 *
 * The state stays on the device. ctx.run(steps) continues it; so does
 * ctx.run(steps, state=s) when s is the array the context returned last.
 * Those arrays are read-only over an immutable buffer (NumPy cannot make
 * them writable), so "the array returned last" also means "the state on
 * the device": no upload is needed. Any other array is uploaded. After an
 * error or an interrupt the device's state is unknown; the next call
 * uploads the last returned state (ctx.state) again.
 *
 * One call at a time: a lock, waited for without the GIL, serialises
 * calls from several threads.
 */
#include "core.h"

#include <pythread.h>
#include <stdlib.h>
#include <string.h>

typedef struct bpy_context {
    PyObject_HEAD PyThread_type_lock lock;
    const bcl_device_info *dev;
    bpy_args base;    /* model and parameters, fixed for the context */
    bcl_context *ctx; /* NULL once closed */
    bcl_build_report build;
    bool stored;
    bpy_warm_set warmed;
    bcl_sim *sim;
    size_t balls;
    PyObject *state; /* the read-only array returned last, or NULL */
    bool synced;     /* the device holds exactly `state` */
    unsigned long long calls, builds, uploads;
} bpy_context;

static void close_locked(bpy_context *c)
{
    bcl_sim *sim = c->sim;
    bcl_context *ctx = c->ctx;
    c->sim = NULL;
    c->ctx = NULL;
    c->synced = false;
    Py_BEGIN_ALLOW_THREADS;
    bcl_sim_destroy(sim);
    bcl_context_destroy(ctx);
    Py_END_ALLOW_THREADS;
}

static void take_lock(bpy_context *c)
{
    if (!PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS;
        PyThread_acquire_lock(c->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS;
    }
}

static int ctx_init(PyObject *self, PyObject *args, PyObject *kw)
{
    bpy_context *c = (bpy_context *)self;
    static char *names[] = {"device", "model", "params", NULL};
    PyObject *device_o = Py_None, *model_o = Py_None, *params_o = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOO:Context", names, &device_o, &model_o,
                                     &params_o))
        return -1;
    if (c->ctx) {
        PyErr_SetString(PyExc_RuntimeError, "Context.__init__ called twice");
        return -1;
    }
    const char *sel;
    size_t di;
    if (bpy_model_arg(model_o, params_o, &c->base) || bpy_device_arg(device_o, &sel))
        return -1;
    if (bpy_is_device_list(sel ? sel : getenv("BALLCL_DEVICE"))) {
        bpy_input_error("Context: device '%s' names several devices: a Context holds one "
                        "(ballcl.run takes several)",
                        sel ? sel : getenv("BALLCL_DEVICE"));
        return -1;
    }
    if (bpy_device_pick(sel, &di))
        return -1;
    c->dev = &bpy_devices()->dev[di];
    bcl_error e = {0};
    bcl_context_opts copts = {.use_cache = true};
    int rc;
    Py_BEGIN_ALLOW_THREADS;
    rc = bcl_context_create(c->dev, c->base.model, &copts, &c->ctx, &c->build, &e);
    Py_END_ALLOW_THREADS;
    if (rc) {
        bpy_raise(&e);
        bcl_error_clear(&e);
        return -1;
    }
    c->builds++;
    if (c->build.warning[0] &&
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "ballcl: %s", c->build.warning) < 0)
        return -1;
    c->build.warning[0] = '\0';
    return 0;
}

static PyObject *ctx_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args;
    (void)kw;
    bpy_context *c = (bpy_context *)type->tp_alloc(type, 0);
    if (!c)
        return NULL;
    c->lock = PyThread_allocate_lock();
    if (!c->lock) {
        Py_DECREF(c);
        return PyErr_NoMemory();
    }
    return (PyObject *)c;
}

static void ctx_dealloc(PyObject *self)
{
    bpy_context *c = (bpy_context *)self;
    /* Nobody else holds a reference, so nobody holds the lock. */
    close_locked(c);
    Py_CLEAR(c->state);
    if (c->lock)
        PyThread_free_lock(c->lock);
    Py_TYPE(self)->tp_free(self);
}

/* A read-only float32 (n, 4) array over a new bytes object of n balls
 * (data receives its buffer); NULL with an exception set. */
static PyObject *frozen_array(size_t n, float **data)
{
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 4 * sizeof(float)));
    if (!bytes)
        return NULL;
    npy_intp dims[2] = {(npy_intp)n, 4};
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, PyArray_DescrFromType(NPY_FLOAT32), 2, dims,
                                         NULL, PyBytes_AS_STRING(bytes), NPY_ARRAY_CARRAY_RO, NULL);
    if (!arr || PyArray_SetBaseObject((PyArrayObject *)arr, bytes) < 0) {
        Py_XDECREF(arr);
        if (!arr)
            Py_DECREF(bytes);
        return NULL;
    }
    *data = (float *)PyBytes_AS_STRING(bytes);
    return arr;
}

/* Puts `state` on the device (a new simulation when the count changes). */
static int upload(bpy_context *c, const float *state, size_t n, bcl_error *e)
{
    int rc;
    Py_BEGIN_ALLOW_THREADS;
    if (c->sim && c->balls == n) {
        rc = bcl_sim_write(c->sim, state, e);
    } else {
        bcl_sim_destroy(c->sim);
        c->sim = NULL;
        rc = bcl_sim_create(c->ctx, state, n, &c->sim, e);
    }
    Py_END_ALLOW_THREADS;
    if (rc == BCL_OK) {
        c->balls = n;
        c->uploads++;
    }
    return rc;
}

static PyObject *run_locked(bpy_context *c, PyObject *steps_o, PyObject *state_o, PyObject *spl_o,
                            PyObject *local_o, PyObject *validate_o)
{
    if (!c->ctx)
        return bpy_input_error("Context.run: the context is closed");
    bpy_args a = c->base;
    if (bpy_steps_arg(steps_o, &a) || bpy_spl_arg(spl_o, &a) || bpy_local_arg(local_o, &a) ||
        bpy_validate_arg(validate_o, &a))
        return NULL;
    PyArrayObject *in = NULL; /* the state to start from */
    PyObject *out = NULL, *ret = NULL;
    bcl_error e = {0};
    bool uploaded = false;
    if (state_o == Py_None || state_o == c->state) {
        if (!c->state)
            return bpy_input_error("Context.run: no state yet: pass state= (an (N, 4) float32 "
                                   "array) on the first call");
        in = (PyArrayObject *)Py_NewRef(c->state);
        if (!c->synced) {
            if (upload(c, PyArray_DATA(in), (size_t)PyArray_DIM(in, 0), &e))
                goto fail;
            uploaded = true;
        }
    } else {
        if (!(in = bpy_state_arg(state_o)))
            return NULL;
        size_t n = (size_t)PyArray_DIM(in, 0);
        c->synced = false;
        if (bcl_memory_fit(c->dev, n, 2, "state", &e) || upload(c, PyArray_DATA(in), n, &e))
            goto fail;
        uploaded = true;
    }
    /* From here the device's state moves away from c->state. */
    c->synced = false;
    float *data;
    if (!(out = frozen_array(c->balls, &data)))
        goto done;
    bpy_exec x = {
        .ctx = c->ctx,
        .sim = c->sim,
        .args = &a,
        .balls = c->balls,
        .init = PyArray_DATA(in),
        .out = data,
        .warmed = &c->warmed,
        .build = &c->build,
        .stored = &c->stored,
    };
    PyThreadState *ts = PyEval_SaveThread();
    int rc = bpy_exec_run(&x, &e, &ts);
    PyEval_RestoreThread(ts);
    if (rc == BPY_PENDING)
        goto done;
    if (rc)
        goto fail;
    c->calls++;
    if (bpy_warn(&x, &c->build) < 0)
        goto done;
    c->build.warning[0] = '\0';
    bpy_ctx_report cr = {uploaded, c->calls, c->builds, c->uploads};
    PyObject *result = bpy_result(&x, c->dev, &c->build, &cr);
    if (!result)
        goto done;
    if (a.validate && x.v.mismatches) {
        bpy_raise_mismatch(result, out, &x);
        Py_DECREF(result);
        goto done;
    }
    /* As `ballcl run`; the device's state stays unsynced: the next call
     * starts again from ctx.state. */
    if (bpy_check_overflow(&a, x.init, x.out, c->balls)) {
        Py_DECREF(result);
        goto done;
    }
    Py_XSETREF(c->state, Py_NewRef(out));
    c->synced = true;
    ret = PyTuple_Pack(2, out, result);
    Py_DECREF(result);
    goto done;
fail:
    bpy_raise(&e);
done:
    bcl_error_clear(&e);
    Py_XDECREF(in);
    Py_XDECREF(out);
    return ret;
}

static PyObject *ctx_run(PyObject *self, PyObject *args, PyObject *kw)
{
    bpy_context *c = (bpy_context *)self;
    static char *names[] = {"steps", "state", "steps_per_launch", "local", "validate", NULL};
    PyObject *steps_o, *state_o = Py_None, *spl_o = Py_None, *local_o = Py_None;
    PyObject *validate_o = NULL;
    /* Everything after steps is keyword-only: ctx.run(steps, state) would
     * read as the reverse of ballcl.run(state, steps). */
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOO:run", names, &steps_o, &state_o, &spl_o,
                                     &local_o, &validate_o))
        return NULL;
    take_lock(c);
    PyObject *r = run_locked(c, steps_o, state_o, spl_o, local_o, validate_o);
    PyThread_release_lock(c->lock);
    return r;
}

static PyObject *ctx_close(PyObject *self, PyObject *unused)
{
    (void)unused;
    bpy_context *c = (bpy_context *)self;
    take_lock(c);
    close_locked(c);
    PyThread_release_lock(c->lock);
    Py_RETURN_NONE;
}

static PyObject *ctx_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *ctx_exit(PyObject *self, PyObject *args)
{
    (void)args;
    PyObject *r = ctx_close(self, NULL);
    Py_XDECREF(r);
    return r ? Py_NewRef(Py_False) : NULL;
}

static PyObject *get_state(PyObject *self, void *closure)
{
    (void)closure;
    bpy_context *c = (bpy_context *)self;
    return Py_NewRef(c->state ? c->state : Py_None);
}

static PyObject *get_device(PyObject *self, void *closure)
{
    (void)closure;
    bpy_context *c = (bpy_context *)self;
    return c->dev ? bpy_device_full(c->dev) : Py_NewRef(Py_None);
}

static PyObject *get_counter(PyObject *self, void *closure)
{
    bpy_context *c = (bpy_context *)self;
    const char *which = closure;
    return PyLong_FromUnsignedLongLong(which[0] == 'c'   ? c->calls
                                       : which[0] == 'b' ? c->builds
                                                         : c->uploads);
}

static PyObject *get_closed(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((bpy_context *)self)->ctx == NULL);
}

static PyMethodDef ctx_methods[] = {
    {"run", (PyCFunction)(void (*)(void))ctx_run, METH_VARARGS | METH_KEYWORDS,
     "run($self, steps, *, state=None, steps_per_launch=None, local=None, validate=True)\n"
     "--\n\n"
     "Applies steps to the resident state (state None, or the array this context\n"
     "returned last: no upload) or to a new state (uploaded). Returns (state, Result);\n"
     "the state is a read-only array: numpy.array(state) is a writable copy."},
    {"close", ctx_close, METH_NOARGS, "Frees the device's buffers and program."},
    {"__enter__", ctx_enter, METH_NOARGS, NULL},
    {"__exit__", ctx_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ctx_getset[] = {
    {"state", get_state, NULL, "The state returned last (read-only), or None.", NULL},
    {"device", get_device, NULL, "The device, as a dict of ballcl.devices().", NULL},
    {"calls", get_counter, NULL, "Completed run calls.", "calls"},
    {"builds", get_counter, NULL, "Programs built or loaded: 1 for the context's life.", "builds"},
    {"uploads", get_counter, NULL, "States uploaded to the device.", "uploads"},
    {"closed", get_closed, NULL, "True after close().", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject bpy_ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ballcl.Context",
    .tp_basicsize = sizeof(bpy_context),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Context(device=None, model='seed', params=None)\n"
              "--\n\n"
              "A device with the model's built program and a resident state, kept between\n"
              "run calls. Use as a context manager, or call close().",
    .tp_new = ctx_new,
    .tp_init = ctx_init,
    .tp_dealloc = ctx_dealloc,
    .tp_methods = ctx_methods,
    .tp_getset = ctx_getset,
};
