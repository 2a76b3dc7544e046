/*
 * Python arguments to library values. Wrong types are TypeErrors; wrong
 * values are InputErrors (a ValueError too) naming the argument and what
 * was expected, as the CLI's options do.
 */
#include "core.h"

#include "options.h" /* the run options' names and ranges, declared once */

#include <stdint.h>

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* The TypeError "<fmt, as PyUnicode_FromFormat>, got <got's type>"; -1. */
static int bpy_type_error(PyObject *got, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    PyObject *what = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (what) {
        PyErr_Format(PyExc_TypeError, "%U, got %.80s", what, Py_TYPE(got)->tp_name);
        Py_DECREF(what);
    }
    return -1;
}

/* A whole number (an __index__, not bool) in the range of option `opt`. */
static int option_arg(PyObject *o, const char *opt, uint64_t *out)
{
    const cli_option_decl *d = cli_option_find(opt);
    if (PyBool_Check(o) || !PyIndex_Check(o)) {
        bpy_type_error(o, "%s: expected an int", d->py);
        return -1; /* here, so that the compiler sees *out set on 0 */
    }
    PyObject *i = PyNumber_Index(o);
    if (!i)
        return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < 0 || (uint64_t)v < d->min || (uint64_t)v > d->max) {
        PyObject *r = PyObject_Repr(o);
        bpy_input_error("%s: %s is out of range: expected a whole number from %llu to %llu", d->py,
                        r ? PyUnicode_AsUTF8(r) : "?", (unsigned long long)d->min,
                        (unsigned long long)d->max);
        Py_XDECREF(r);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

/* local: None, 'auto', 'driver', 'tuned' or a work-group size. */
static int local_arg(PyObject *local, bpy_args *a)
{
    bcl_error e = {0};
    bcl_local_parse(NULL, &a->launch, &e); /* auto */
    a->local_given = local != Py_None;
    if (!a->local_given)
        return 0;
    if (PyUnicode_Check(local)) {
        const char *s = PyUnicode_AsUTF8(local);
        if (!s)
            return -1;
        if (bcl_local_parse(s, &a->launch, &e) == BCL_OK && a->launch.mode != BCL_LOCAL_FIXED)
            return 0;
        bcl_error_clear(&e);
        bpy_input_error("local: '%.60s': expected 'auto', 'driver', 'tuned' or a work-group "
                        "size from 1 to %u",
                        s, (unsigned)cli_option_find("local")->max);
        return -1;
    }
    uint64_t v;
    if (option_arg(local, "local", &v))
        return -1;
    a->launch = (bcl_launch){.mode = BCL_LOCAL_FIXED, .local = (size_t)v};
    return 0;
}

int bpy_device_arg(PyObject *device, const char **sel)
{
    *sel = NULL;
    if (!device || device == Py_None)
        return 0;
    if (!PyUnicode_Check(device))
        return bpy_type_error(device, "device: expected a str selector or None");
    Py_ssize_t len;
    *sel = PyUnicode_AsUTF8AndSize(device, &len);
    if (!*sel)
        return -1;
    /* C sees the text up to a NUL: "0:0\x00junk" would select 0:0. */
    if (strlen(*sel) != (size_t)len) {
        PyObject *r = PyObject_Repr(device);
        const char *rs = r ? PyUnicode_AsUTF8(r) : NULL;
        PyErr_Clear();
        bpy_input_error("device: %.80s holds a NUL character: expected a selector ('P:D', a "
                        "type, a part of a device or platform name, a comma-separated list, or "
                        "'all')",
                        rs ? rs : "the selector");
        Py_XDECREF(r);
        *sel = NULL;
        return -1;
    }
    return 0;
}

static int validate_arg(PyObject *validate, bpy_args *a)
{
    /* Only a bool: "no" or 0.5 taken for true would skip nothing silently,
     * and a NumPy bool is a bool to the user too. */
    if (!validate || validate == Py_True || validate == Py_False) {
        a->validate = !validate || validate == Py_True;
        return 0;
    }
    if (PyArray_IsScalar(validate, Bool)) {
        int yes = PyObject_IsTrue(validate);
        if (yes < 0)
            return -1;
        a->validate = yes != 0;
        return 0;
    }
    return bpy_type_error(validate, "validate: expected a bool (True or False)");
}

/* One float32 parameter value: finite, and finite once rounded to float32. */
static int param_float(PyObject *o, const char *name, float *out)
{
    if (PyBool_Check(o) || !(PyFloat_Check(o) || PyLong_Check(o) || PyNumber_Check(o)))
        return bpy_type_error(o, "params['%s']: expected a number", name);
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred())
        return -1;
    float f = (float)d;
    if (!isfinite(f)) {
        bpy_input_error("params['%s']: %g is not a finite float32", name, d);
        return -1;
    }
    *out = f;
    return 0;
}

/* params[name] for parameter i of m: a number, or a sequence of `count`. */
static int param_value(const bcl_model *m, unsigned i, PyObject *v, float *dst)
{
    const bcl_param *par = &m->params[i];
    if (PyUnicode_Check(v) || PyBytes_Check(v))
        return bpy_type_error(v, "params['%s']: expected a number%s", par->opt,
                              par->count > 1 ? " pair" : "");
    if (par->count == 1 && !PySequence_Check(v))
        return param_float(v, par->opt, dst);
    if (!PySequence_Check(v) || PyUnicode_Check(v) ||
        PySequence_Size(v) != (Py_ssize_t)par->count) {
        PyErr_Clear();
        bpy_input_error("params['%s']: expected %u number%s (%s)", par->opt, par->count,
                        par->count == 1 ? "" : "s", par->help);
        return -1;
    }
    for (unsigned c = 0; c < par->count; c++) {
        PyObject *item = PySequence_GetItem(v, c);
        if (!item)
            return -1;
        int rc = param_float(item, par->opt, &dst[c]);
        Py_DECREF(item);
        if (rc)
            return -1;
    }
    return 0;
}

/* Comma-separated: the models' names (m NULL), or m's parameters' ("none"). */
static void names_of(const bcl_model *m, char *out, size_t size)
{
    size_t n = m ? m->nparams : bcl_model_count;
    snprintf(out, size, "%s", n ? "" : "none");
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? ", " : "",
                 m ? m->params[i].opt : bcl_models[i]->name);
}

int bpy_model_arg(PyObject *model, PyObject *params, bpy_args *a)
{
    char names[256];
    const char *name = "seed";
    const bcl_model *m = model ? bpy_model_of(model) : NULL;
    a->model_obj = m ? model : NULL;
    if (!m && PyErr_Occurred())
        return -1;
    if (!m && model && model != Py_None) {
        if (!PyUnicode_Check(model))
            return bpy_type_error(model, "model: expected a str (a built-in model's name) or a "
                                         "ballcl.Model");
        if (!(name = PyUnicode_AsUTF8(model)))
            return -1;
    }
    if (!m && !(m = bcl_model_find(name))) {
        names_of(NULL, names, sizeof names);
        bpy_input_error("model: unknown model '%.60s': expected one of %s", name, names);
        return -1;
    }
    a->model = m;
    memset(a->params, 0, sizeof a->params);
    bcl_model_param_defaults(m, a->params);
    if (!params || params == Py_None)
        return 0;
    if (!PyDict_Check(params))
        return bpy_type_error(params, "params: expected a dict of parameter values");
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(params, &pos, &key, &value)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!k) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "params: keys must be parameter names (str)");
            return -1;
        }
        unsigned i = 0, off = 0;
        while (i < m->nparams && strcmp(m->params[i].opt, k) != 0)
            off += m->params[i++].count;
        if (i == m->nparams) {
            names_of(m, names, sizeof names);
            bpy_input_error("params: model '%s' has no parameter '%.60s': its parameters are %s",
                            m->name, k, names);
            return -1;
        }
        if (param_value(m, i, value, a->params + off))
            return -1;
    }
    bcl_error e = {0};
    if (m->check && m->check(a->params, &e)) {
        bpy_raise(&e);
        return -1;
    }
    return 0;
}

PyArrayObject *bpy_state_arg_unscanned(PyObject *state)
{
    if (!PyArray_Check(state)) {
        PyErr_Format(PyExc_TypeError,
                     "state: expected a numpy.ndarray of shape (N, 4) and dtype float32, got %.80s",
                     Py_TYPE(state)->tp_name);
        return NULL;
    }
    PyArrayObject *arr = (PyArrayObject *)state;
    PyArray_Descr *d = PyArray_DESCR(arr);
    if (PyArray_TYPE(arr) == NPY_FLOAT32 && !PyArray_ISNBO(d->byteorder)) {
        /* The same values in the other byte order: nothing is rounded. */
        PyErr_SetString(PyExc_TypeError,
                        "state: expected float32 in the machine's byte order (" BPY_NATIVE_F4
                        "), got " BPY_SWAPPED_F4 ": convert with state.astype(numpy.float32), "
                        "which swaps the bytes and keeps every value");
        return NULL;
    }
    if (PyArray_TYPE(arr) != NPY_FLOAT32) {
        PyObject *s = PyObject_Str((PyObject *)d);
        PyErr_Format(PyExc_TypeError,
                     "state: expected dtype float32 (native byte order), got %s: convert with "
                     "state.astype(numpy.float32) if rounding is meant",
                     s ? PyUnicode_AsUTF8(s) : "?");
        Py_XDECREF(s);
        return NULL;
    }
    int nd = PyArray_NDIM(arr);
    if (nd != 2 || PyArray_DIM(arr, 1) != 4) {
        char shape[128] = "(";
        for (int i = 0; i < nd && strlen(shape) < 100; i++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? ", " : "",
                     (long long)PyArray_DIM(arr, i));
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s)", nd == 1 ? "," : "");
        return (PyArrayObject *)bpy_input_error(
            "state: expected shape (N, 4) (x, y, z, w per ball), got %s", shape);
    }
    if (PyArray_DIM(arr, 0) < 1)
        return (PyArrayObject *)bpy_input_error(
            "state: no balls: expected shape (N, 4) with N >= 1");
    /* A strided or misaligned array is copied once. A broadcast view can
     * stand for far more memory than it holds: the copy and the output must
     * fit the host's memory first (malloc succeeds under overcommit, and
     * filling it would get the interpreter killed). Only a copy asks: that
     * reads /proc and the cgroup's files, too slow for every frame. */
    size_t n = (size_t)PyArray_DIM(arr, 0);
    bool copy = !PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISALIGNED(arr);
    double host = copy ? (double)bcl_host_memory_bytes() : 0, bytes = (double)n * 4 * sizeof(float);
    if (copy && host > 0 && 2 * bytes > host) {
        bpy_input_error("state: %zu balls need %.1f MiB of host memory for a contiguous copy and "
                        "the result, more than the %.1f MiB this process may use (the machine's "
                        "memory or its cgroup limit)",
                        n, 2 * bytes / 1048576.0, host / 1048576.0);
        return NULL;
    }
    return (PyArrayObject *)PyArray_FromArray(arr, NULL,
                                              NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
}

bool bpy_finite(const float *f, size_t count, size_t *bad)
{
    /* NaN and infinity have all exponent bits set. Two floats per 64-bit
     * word: adding 1 at the exponent's lowest bit to the masked exponent
     * carries into the lane's sign bit exactly when all eight are set, and
     * never across lanes. Branch-free per block (fast even at -O0); the
     * ball is searched for only in a block that failed. */
    const uint64_t mask = 0x7f8000007f800000u, one = 0x0080000000800000u,
                   sign = 0x8000000080000000u;
    for (size_t b = 0; b < count; b += 4096) {
        size_t end = count - b < 4096 ? count : b + 4096;
        uint64_t any = 0;
        size_t i = b;
        for (; i + 2 <= end; i += 2) {
            uint64_t w;
            memcpy(&w, f + i, sizeof w); /* no aliasing or alignment assumed */
            any |= ((w & mask) + one) & sign;
        }
        for (; i < end; i++) {
            uint32_t u;
            memcpy(&u, f + i, sizeof u);
            any |= (u & 0x7f800000u) == 0x7f800000u;
        }
        for (size_t k = b; any && k < end; k++) {
            if (!isfinite(f[k])) {
                *bad = k;
                return false;
            }
        }
    }
    return true;
}

PyObject *bpy_nonfinite_error(const float *f, size_t i)
{
    return bpy_input_error("state: ball %zu holds %s: expected finite values (as in .npy input)",
                           i / 4, isnan(f[i]) ? "NaN" : "an infinity");
}

/* The index of keyword name in k, or -1. */
static int kw_index(const bpy_kwlist *k, const char *name)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->names[i], name) == 0)
            return (int)i;
    return -1;
}

int bpy_kw_parse(bpy_kwlist *k, PyObject *args, PyObject *kw, PyObject **v)
{
    if (!k->n) {
        const char *table[BPY_MAX_KW];
        size_t nt = cli_option_keywords(k->which, table, BPY_MAX_KW / 2);
        for (size_t i = 0; i < k->npos; i++)
            k->names[k->n++] = (char *)k->own[i];
        for (size_t i = 0; i < nt; i++)
            if (kw_index(k, table[i]) < 0)
                k->names[k->n++] = (char *)table[i];
        for (size_t i = k->npos; k->own[i] && k->n < BPY_MAX_KW; i++)
            k->names[k->n++] = (char *)k->own[i];
        static const char os[BPY_MAX_KW + 1] = "OOOOOOOOOOOOOOOOOOOOOOOO";
        snprintf(k->format, sizeof k->format, "%.*s|$%.*s:run", (int)k->npos, os,
                 (int)(k->n - k->npos), os);
    }
    memset(v, 0, BPY_MAX_KW * sizeof *v);
    return PyArg_ParseTupleAndKeywords(args, kw, k->format, k->names, &v[0], &v[1], &v[2], &v[3],
                                       &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11],
                                       &v[12], &v[13], &v[14], &v[15], &v[16], &v[17], &v[18],
                                       &v[19], &v[20], &v[21], &v[22], &v[23])
               ? 0
               : -1;
}

PyObject *bpy_kw(const bpy_kwlist *k, PyObject *const *v, const char *name, PyObject *dflt)
{
    int i = kw_index(k, name);
    return i >= 0 && v[i] ? v[i] : dflt;
}

int bpy_run_options(const bpy_kwlist *k, PyObject *const *v, bpy_args *a)
{
    if (!a->model &&
        bpy_model_arg(bpy_kw(k, v, "model", Py_None), bpy_kw(k, v, "params", Py_None), a))
        return -1;
    PyObject *spl = bpy_kw(k, v, "steps_per_launch", Py_None);
    uint64_t spl_v = 0;
    if (option_arg(bpy_kw(k, v, "steps", NULL), "steps", &a->steps) ||
        (spl != Py_None && option_arg(spl, "steps-per-launch", &spl_v)) ||
        local_arg(bpy_kw(k, v, "local", Py_None), a) ||
        validate_arg(bpy_kw(k, v, "validate", NULL), a))
        return -1;
    a->steps_per_launch = (unsigned)spl_v;
    return 0;
}
