/*
 * ballcl.Context: a device, its built program and a resident state kept
 * between calls, for a Python loop of many short runs.
 *
 * ctx.run(steps), or state= the array it returned last, continues on the
 * device: that array is read-only over memory with no writable buffer
 * (readback.c). An alias NumPy does not see can still write it: a digest
 * of its bytes tells, and it is then uploaded as any other array. After an
 * error or an interrupt the next call uploads ctx.state again.
 *
 * One call at a time (a lock, waited for without the GIL); each frame is
 * one bcl_group_exec on a group of one, costing only what must happen per
 * call (docs/PYTHON.md, "Frame loops"); a state that fitted the memory
 * once is not checked again (the check reads the cgroup's files).
 * ballcl.run's contexts (runcache.c) run through bpy_context_frame.
 */
#include "core.h"

#include "options.h" /* cli_selector, the run options declared once */

#include <jansson.h>
#include <pythread.h>
#include <stddef.h>
#include <structmember.h>
#include <string.h>

struct bpy_context {
    PyObject_HEAD PyThread_type_lock lock;
    const bcl_device_info *dev;
    bpy_args base;    /* model and parameters, fixed for the context */
    bcl_group *g;     /* the device, a group of one; NULL once closed */
    bool build_told;  /* the build's warning went out */
    size_t capacity;  /* balls its buffers hold: they grow to the largest state loaded */
    PyObject *state;  /* the array returned last, or NULL */
    bool frozen;      /* `state` is read-only: the identity means "unchanged" */
    uint64_t digest;  /* of `state`'s bytes when returned (frozen only) */
    bool synced;      /* the device holds exactly the state returned last */
    size_t fit_balls; /* the largest state bcl_memory_fit accepted */
    PyObject *pool;   /* pinned blocks for the returned arrays */
    json_t *tree;     /* the result tree of the last call that made one */
    unsigned long long calls, builds, uploads;
};

/* A digest of the state's bytes (64-bit words mixed in, at memory speed):
 * tells a state changed through an alias from the one returned. */
static uint64_t state_digest(PyObject *state)
{
    const unsigned char *p = PyArray_DATA((PyArrayObject *)state);
    size_t bytes = (size_t)PyArray_NBYTES((PyArrayObject *)state);
    uint64_t h = 0x9e3779b97f4a7c15ull ^ bytes;
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

static void close_locked(bpy_context *c)
{
    bcl_group *g = c->g;
    c->g = NULL;
    c->synced = false;
    c->capacity = c->fit_balls = 0;
    json_decref(c->tree);
    c->tree = NULL;
    /* Arrays over its blocks stay valid: each block keeps what it needs. */
    bpy_pool_close(c->pool);
    if (bpy_forked())
        return;
    Py_BEGIN_ALLOW_THREADS;
    bcl_group_close(g);
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

/* Opens device di as a group of one, and the pool; -1 with an exception. */
static int open_group(bpy_context *c, size_t di)
{
    c->dev = &bpy_devices()->dev[di];
    bcl_error e = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS;
    rc = bpy_group_open(&c->base, &c->dev, 1, 0, &c->g, &e);
    Py_END_ALLOW_THREADS;
    if (rc) {
        bpy_raise(&e);
        return -1;
    }
    c->builds++;
    return !c->pool && !(c->pool = bpy_pool_create()) ? -1 : 0;
}

static int ctx_init(PyObject *self, PyObject *args, PyObject *kw)
{
    bpy_context *c = (bpy_context *)self;
    static char *names[] = {"device", "model", "params", NULL};
    PyObject *device_o = Py_None, *model_o = Py_None, *params_o = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOO:Context", names, &device_o, &model_o,
                                     &params_o))
        return -1;
    if (c->g) {
        PyErr_SetString(PyExc_RuntimeError, "Context.__init__ called twice");
        return -1;
    }
    const char *sel;
    size_t di;
    Py_CLEAR(c->base.model_obj); /* an __init__ that failed before */
    int bad = bpy_model_arg(model_o, params_o, &c->base);
    /* A Model is the context's until it goes (its program runs m's update). */
    Py_XINCREF(c->base.model_obj);
    if (bad || bpy_device_arg(device_o, &sel))
        return -1;
    if (bpy_is_device_list(cli_selector(sel))) {
        bpy_input_error("Context: device '%s' names several devices: a Context holds one "
                        "(ballcl.run takes several)",
                        cli_selector(sel));
        return -1;
    }
    if (bpy_device_pick(sel, &di, NULL, false))
        return -1;
    if (open_group(c, di))
        return -1;
    c->build_told = true;
    bpy_exec x = {.g = c->g}; /* no plan yet: the build's warning alone */
    return bpy_warn(&x, &bcl_group_member_at(c->g, 0)->build);
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
    Py_CLEAR(c->base.model_obj);
    Py_CLEAR(c->state);
    Py_CLEAR(c->pool);
    if (c->lock)
        PyThread_free_lock(c->lock);
    Py_TYPE(self)->tp_free(self);
}

/* One frame, the lock held. */
static PyObject *frame_locked(bpy_context *c, const bpy_args *a, PyObject *state_o, PyObject *out_o,
                              bool report, bool checked)
{
    if (bpy_fork_refused())
        return NULL;
    if (!c->g)
        return bpy_input_error("Context.run: the context is closed");
    PyArrayObject *in = NULL; /* the state to start from */
    PyObject *out = NULL, *ret = NULL;
    bcl_error e = {0};
    /* load: uploaded first (NULL: the device holds it); queued: the
     * device checks it for NaN and infinity. */
    const float *load = NULL;
    bool queued = false;
    size_t n;
    /* The array returned last, changed through an alias: checked as any. */
    bool changed = c->state && c->frozen && state_digest(c->state) != c->digest;
    if (changed) {
        c->synced = false;
        state_o = state_o == Py_None ? c->state : state_o;
    }
    if (state_o == Py_None || (state_o == c->state && c->frozen && !changed)) {
        if (!c->state)
            return bpy_input_error("Context.run: no state yet: pass state= (an (N, 4) float32 "
                                   "array) on the first call");
        in = (PyArrayObject *)Py_NewRef(c->state);
        n = (size_t)PyArray_DIM(in, 0);
        if (!c->synced)
            load = PyArray_DATA(in);
    } else {
        /* Checked here unless ballcl.run did; NaN and infinity on the device. */
        in = checked ? (PyArrayObject *)Py_NewRef(state_o) : bpy_state_arg_unscanned(state_o);
        if (!in)
            return NULL;
        n = (size_t)PyArray_DIM(in, 0);
        c->synced = false;
        if (n > c->fit_balls) {
            const bcl_device_info *devs[1] = {c->dev};
            /* A NumPy reference's copies whether or not this call validates:
             * the check is made once per size. */
            if (bcl_group_memory_fit(devs, 1, n, 2 + bpy_model_host_copies(c->base.model_obj),
                                     "state", &e))
                goto fail;
            c->fit_balls = n;
        }
        load = PyArray_DATA(in);
        queued = true;
    }
    /* From here the device's state moves away from c->state. */
    c->synced = false;
    float *data;
    bool pinned = false;
    size_t bytes = n * 4 * sizeof(float);
    if (out_o && out_o != Py_None) {
        if (!(out = (PyObject *)bpy_out_arg(out_o, &in, a->validate)))
            goto done;
        data = PyArray_DATA((PyArrayObject *)out);
    } else if (!(out = bpy_state_array(c->pool, c->g, c->dev, n, &data, &pinned))) {
        goto done;
    }
    bpy_exec x = {
        .g = c->g,
        .args = a,
        .balls = n,
        .load = load,
        .load_async = queued,
        .load_check = queued,
        /* out= the input: an overflow is named without its step. */
        .init = bpy_overlaps(data, PyArray_DATA(in), bytes) ? NULL : PyArray_DATA(in),
        .out = data,
        .readback = pinned ? "pinned" : "pageable",
        .tree = &c->tree,
    };
    PyThreadState *ts = PyEval_SaveThread();
    int rc = bpy_exec_run(&x, &e, &ts);
    PyEval_RestoreThread(ts);
    /* The upload is done whatever the outcome (bcl_group_exec waits for it). */
    if (load && (rc == BCL_OK || rc == BPY_PENDING)) {
        c->capacity = n > c->capacity ? n : c->capacity;
        c->uploads++;
    }
    /* A failed call may have written into out=, the state returned last. */
    if (rc && out == c->state)
        Py_CLEAR(c->state);
    if (rc == BPY_PENDING)
        goto done;
    if (rc)
        goto fail;
    /* A NaN or infinity in the input: the host names the ball and the
     * call is refused as before the run. */
    if (x.r.input_bad) {
        size_t bad = 0;
        bool finite;
        Py_BEGIN_ALLOW_THREADS;
        finite = bpy_finite(PyArray_DATA(in), n * 4, &bad);
        Py_END_ALLOW_THREADS;
        if (finite) /* the device and the host disagree: say so, never pass it */
            bpy_input_error("state: the device found NaN or infinity the host scan does not "
                            "find (a device fault?)");
        else
            bpy_nonfinite_error(PyArray_DATA(in), bad);
        if (out == c->state)
            Py_CLEAR(c->state);
        goto done;
    }
    c->calls++;
    if (bpy_warn(&x, c->build_told ? NULL : &x.lead->build) < 0)
        goto done;
    c->build_told = true;
    bpy_ctx_report cr = {load != NULL, c->calls, c->builds, c->uploads};
    if (!(ret = bpy_result_pair(&x, report ? &cr : NULL, out))) {
        if (a->validate && x.r.v.mismatches && out == c->state)
            Py_CLEAR(c->state);
        goto done;
    }
    /* Passed back, it continues with no upload (ballcl.run's too). */
    Py_XSETREF(c->state, Py_NewRef(out));
    c->frozen = !PyArray_ISWRITEABLE((PyArrayObject *)out);
    c->digest = c->frozen ? state_digest(out) : 0;
    c->synced = true;
    goto done;
fail:
    bpy_raise(&e);
done:
    bcl_error_clear(&e);
    Py_XDECREF(in);
    Py_XDECREF(out);
    return ret;
}

PyObject *bpy_context_frame(PyObject *self, const bpy_args *a, PyArrayObject *state,
                            PyObject *out_o)
{
    bpy_context *c = (bpy_context *)self;
    take_lock(c);
    PyObject *r = frame_locked(c, a, (PyObject *)state, out_o, false, true);
    PyThread_release_lock(c->lock);
    return r;
}

static PyObject *ctx_run(PyObject *self, PyObject *args, PyObject *kw)
{
    bpy_context *c = (bpy_context *)self;
    /* state keyword-only: ctx.run(steps, state) would read as the
     * reverse of ballcl.run(state, steps). */
    static const char *const own[] = {"steps", "state", "out", NULL};
    static bpy_kwlist k = {CLI_PY_CONTEXT, own, 1};
    PyObject *v[BPY_MAX_KW], *r = NULL;
    if (bpy_kw_parse(&k, args, kw, v))
        return NULL;
    take_lock(c);
    bpy_args a = c->base;
    if (!c->g)
        bpy_input_error("Context.run: the context is closed");
    else if (bpy_run_options(&k, v, &a) == 0)
        r = frame_locked(c, &a, bpy_kw(&k, v, "state", Py_None), bpy_kw(&k, v, "out", Py_None),
                         true, false);
    PyThread_release_lock(c->lock);
    return r;
}

static PyObject *ctx_close(PyObject *self, PyObject *unused)
{
    (void)unused;
    bpy_context_close(self, true);
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
    bpy_context_close(self, true);
    return Py_NewRef(Py_False);
}

static PyObject *get_device(PyObject *self, void *closure)
{
    (void)closure;
    bpy_context *c = (bpy_context *)self;
    return c->dev ? bpy_device_full(c->dev) : Py_NewRef(Py_None);
}

static PyObject *get_closed(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((bpy_context *)self)->g == NULL);
}

static PyMethodDef ctx_methods[] = {
    {"run", (PyCFunction)(void (*)(void))ctx_run, METH_VARARGS | METH_KEYWORDS,
     "run($self, steps, *, state=None, steps_per_launch=None, local=None, validate=True,\n"
     "    out=None)\n"
     "--\n\n"
     "Applies steps to the resident state, or to a new state (uploaded).\n\n"
     "Parameters:\n"
     "    steps: int, 0 to 2**40.\n"
     "    state: numpy.ndarray or None: a float32 (N, 4) state to upload; None, or\n"
     "        the array this context returned last, continues on the device.\n"
     "    steps_per_launch: int or None: steps per kernel launch (K); None lets\n"
     "        the launch plan choose.\n"
     "    local: 'auto', 'driver', 'tuned', an int work-group size, or None.\n"
     "    validate: bool: compare the result with the model's reference (C, or a\n"
     "        Model's NumPy step), bit for bit.\n"
     "    out: numpy.ndarray or None: a writable C-contiguous float32 (N, 4)\n"
     "        array the state is read into.\n\n"
     "Returns:\n"
     "    (state, Result): the state a read-only array (numpy.array(state) is a\n"
     "    writable copy), or out when given.\n\n"
     "Raises:\n"
     "    TypeError: an argument of the wrong type or dtype.\n"
     "    InputError: a bad value (no state yet, a bad shape, NaN or infinity, a\n"
     "        closed context, steps out of range).\n"
     "    DeviceError: OpenCL or the runtime failed.\n"
     "    MismatchError: the result differs from the reference.\n"
     "    KeyboardInterrupt: Ctrl-C during the run.\n"},
    {"close", ctx_close, METH_NOARGS,
     "close($self)\n--\n\n"
     "Frees the device's buffers and program; later run calls are refused.\n"
     "Closing twice is harmless.\n\n"
     "Returns:\n"
     "    None.\n"},
    {"__enter__", ctx_enter, METH_NOARGS,
     "__enter__($self)\n--\n\nReturns:\n    the Context itself.\n"},
    {"__exit__", ctx_exit, METH_VARARGS,
     "__exit__($self, exc_type, exc, tb, /)\n--\n\n"
     "Closes the Context.\n\n"
     "Returns:\n"
     "    None: an exception inside the with block propagates.\n"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ctx_getset[] = {
    {"device", get_device, NULL, "The device, as a dict of ballcl.devices(), or None once closed.",
     NULL},
    {"closed", get_closed, NULL, "True after close().", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef ctx_members[] = {
    {"state", T_OBJECT, offsetof(bpy_context, state), READONLY,
     "The state returned last (read-only), or None."},
    {"calls", T_ULONGLONG, offsetof(bpy_context, calls), READONLY, "Completed run calls."},
    {"builds", T_ULONGLONG, offsetof(bpy_context, builds), READONLY,
     "Programs built or loaded: 1 for the context's life."},
    {"uploads", T_ULONGLONG, offsetof(bpy_context, uploads), READONLY,
     "States uploaded to the device."},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject bpy_ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ballcl.Context",
    .tp_basicsize = sizeof(bpy_context),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Context(device=None, model='seed', params=None)\n"
              "--\n\n"
              "A device with the model's built program and a resident state, kept between\n"
              "run calls. Use as a context manager (`with ballcl.Context() as ctx:`; the\n"
              "with statement closes it), or call close().\n\n"
              "Parameters:\n"
              "    device: str or None: one selector, as for ballcl.run ('all' or a list\n"
              "        is refused: use ballcl.run); None: $BALLCL_DEVICE, else the first\n"
              "        GPU, accelerator, CPU.\n"
              "    model: str or ballcl.Model: 'seed' (the default), 'bounce', or a model\n"
              "        file (the context keeps the Model).\n"
              "    params: dict or None: the model's parameters by name.\n\n"
              "Raises:\n"
              "    TypeError: an argument of the wrong type.\n"
              "    InputError: an unknown device, model or parameter, several devices, or a\n"
              "        model file whose update does not compile.\n"
              "    DeviceError: OpenCL failed, or the program did not build.\n",
    .tp_new = ctx_new,
    .tp_init = ctx_init,
    .tp_dealloc = ctx_dealloc,
    .tp_methods = ctx_methods,
    .tp_members = ctx_members,
    .tp_getset = ctx_getset,
};

PyObject *bpy_context_open(size_t di, const bpy_args *a)
{
    bpy_context *c = (bpy_context *)ctx_new(&bpy_ContextType, NULL, NULL);
    if (!c)
        return NULL;
    c->base = *a;
    Py_XINCREF(c->base.model_obj);
    if (open_group(c, di)) {
        Py_DECREF(c);
        return NULL;
    }
    /* The build's warning goes with the first call's Result (bpy_warn). */
    return (PyObject *)c;
}

void bpy_context_info_get(PyObject *self, bpy_context_info *info)
{
    bpy_context *c = (bpy_context *)self;
    info->dev = c->dev;
    info->model = c->base.model;
    info->capacity = c->g ? c->capacity : 0;
    info->pinned_bytes = bpy_pool_bytes(c->pool);
    info->calls = c->calls;
    info->builds = c->builds;
    info->uploads = c->uploads;
    info->closed = c->g == NULL;
}

void bpy_context_close(PyObject *self, bool wait)
{
    bpy_context *c = (bpy_context *)self;
    if (wait)
        take_lock(c);
    else if (!PyThread_acquire_lock(c->lock, NOWAIT_LOCK))
        return;
    close_locked(c);
    PyThread_release_lock(c->lock);
}
