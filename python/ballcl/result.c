/*
 * The result of a run: the library's one tree of it (bcl_run_json, the
 * fields of `ballcl run --json`; docs: PYTHON.md lists them) as Python
 * values, with Python's own keys, held by a ballcl.Result, the class
 * __init__.py registers.
 */
#include "core.h"

#include "job/job.h"

PyObject *bpy_result_type;

/* The Python value of a JSON value: dict, list, str, int, float, bool or
 * None. */
static PyObject *py_of(json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        PyObject *d = PyDict_New();
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
        {
            PyObject *pk = d ? PyUnicode_FromString(k) : NULL;
            PyObject *pv = pk ? py_of(v) : NULL;
            if (!pv || PyDict_SetItem(d, pk, pv) < 0) {
                Py_XDECREF(pk);
                Py_XDECREF(pv);
                Py_CLEAR(d);
                break;
            }
            Py_DECREF(pk);
            Py_DECREF(pv);
        }
        return d;
    }
    case JSON_ARRAY: {
        PyObject *l = PyList_New((Py_ssize_t)json_array_size(j));
        for (size_t i = 0; l && i < json_array_size(j); i++) {
            PyObject *pv = py_of(json_array_get(j, i));
            if (!pv)
                Py_CLEAR(l);
            else
                PyList_SET_ITEM(l, (Py_ssize_t)i, pv);
        }
        return l;
    }
    case JSON_STRING:
        return bpy_text(json_string_value(j));
    case JSON_INTEGER:
        return PyLong_FromLongLong(json_integer_value(j));
    case JSON_REAL:
        return PyFloat_FromDouble(json_real_value(j));
    case JSON_TRUE:
        return Py_NewRef(Py_True);
    case JSON_FALSE:
        return Py_NewRef(Py_False);
    default:
        return Py_NewRef(Py_None);
    }
}

PyObject *bpy_result(const bpy_exec *x, const bpy_ctx_report *cr)
{
    bcl_exec ex = {.steps = x->args->steps, .validate = x->args->validate && x->init};
    json_t *root = bcl_run_json(x->g, &ex, &x->r, x->balls);
    /* Python's own keys: the Context's counters, where the state was read
     * into and whether the plan was reused (docs/PYTHON.md). */
    if (root) {
        json_object_set_new(root, "context",
                            cr ? json_pack("{s:b, s:I, s:I, s:I}", "uploaded", cr->uploaded,
                                           "calls", (json_int_t)cr->calls, "builds",
                                           (json_int_t)cr->builds, "uploads",
                                           (json_int_t)cr->uploads)
                               : json_null());
        json_object_set_new(root, "readback",
                            json_pack("{s:s, s:b}", "memory",
                                      x->readback ? x->readback : "pageable", "plan_reused",
                                      x->r.plan_reused));
    }
    PyObject *dict = root ? py_of(root) : PyErr_NoMemory();
    json_decref(root);
    if (!dict)
        return NULL;
    PyObject *r = PyObject_CallOneArg(bpy_result_type, dict);
    Py_DECREF(dict);
    return r;
}

PyObject *bpy_raise_mismatch(PyObject *result, PyObject *state, const bpy_exec *x)
{
    char msg[256];
    snprintf(msg, sizeof msg, "validation failed: %llu of %llu floats differ from the C reference",
             (unsigned long long)x->r.v.mismatches, (unsigned long long)x->r.v.compared);
    PyObject *exc = PyObject_CallFunction(bpy_MismatchError, "s", msg);
    if (!exc)
        return NULL;
    PyObject *code = PyLong_FromLong(BCL_EXIT_MISMATCH);
    if (code && PyObject_SetAttrString(exc, "exit_code", code) == 0 &&
        PyObject_SetAttrString(exc, "result", result) == 0 &&
        PyObject_SetAttrString(exc, "state", state) == 0 &&
        PyObject_SetAttrString(exc, "detail", Py_None) == 0)
        PyErr_SetObject(bpy_MismatchError, exc);
    Py_XDECREF(code);
    Py_DECREF(exc);
    return NULL;
}

int bpy_warn(const bpy_exec *x, const bcl_build_report *build)
{
    if (build && build->warning[0] &&
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "ballcl: %s", build->warning) < 0)
        return -1;
    if (x->lead && x->lead->plan.warning[0] &&
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "ballcl: %s", x->lead->plan.warning) < 0)
        return -1;
    return 0;
}
