/*
 * Library errors as Python exceptions: a subclass of ballcl.Error per
 * BCL_EXIT_* class (exit_code, as the CLI's status); an OpenCL failure's
 * call and status come from bcl_error's fields, never from its text.
 */
#include "core.h"

#include <stdarg.h>
#include <string.h>

PyObject *bpy_Error, *bpy_DeviceError, *bpy_InputError, *bpy_MismatchError;

int bpy_errors_init(PyObject *module)
{
    static const struct {
        PyObject **type;
        const char *name, *doc;
    } classes[] = {
        {&bpy_Error, "Error",
         "Any error ballcl reports: catch it for all of them. Attributes: exit_code, the\n"
         "ballcl program's exit status for the same error (1, 2 or 3); detail, more text\n"
         "(a build log) or None. The subclasses are DeviceError, InputError, MismatchError;\n"
         "they pickle, so a worker process's error reaches the parent whole."},
        {&bpy_DeviceError, "DeviceError",
         "An OpenCL or other runtime failure (the CLI's exit status 3). .call and .status name\n"
         "the OpenCL function and its status (e.g. 'CL_OUT_OF_RESOURCES') when one failed,\n"
         "else they are None."},
        {&bpy_InputError, "InputError",
         "A bad argument or input (the CLI's exit status 2); also a ValueError."},
        {&bpy_MismatchError, "MismatchError",
         "The device's result differs from the C reference (the CLI's exit status 1).\n"
         ".result is the run's Result and .state the state the device computed."},
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        char name[40];
        snprintf(name, sizeof name, "ballcl.%s", classes[i].name);
        /* Error first, the base of the others; InputError is a ValueError too. */
        PyObject *bases = i == 0 ? NULL
                          : classes[i].type == &bpy_InputError
                              ? PyTuple_Pack(2, bpy_Error, PyExc_ValueError)
                              : Py_NewRef(bpy_Error);
        if (i && !bases)
            return -1;
        *classes[i].type = PyErr_NewExceptionWithDoc(name, classes[i].doc, bases, NULL);
        Py_XDECREF(bases);
        if (!*classes[i].type ||
            PyModule_AddObjectRef(module, classes[i].name, *classes[i].type) < 0)
            return -1;
    }
    return 0;
}

PyObject *bpy_text(const char *s)
{
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

static int set_attr_str(PyObject *obj, const char *name, const char *value)
{
    PyObject *v = value && *value ? bpy_text(value) : Py_NewRef(Py_None);
    if (!v)
        return -1;
    int rc = PyObject_SetAttrString(obj, name, v);
    Py_DECREF(v);
    return rc;
}

PyObject *bpy_exception(bcl_error *e)
{
    PyObject *type = e->code == BCL_EXIT_INPUT      ? bpy_InputError
                     : e->code == BCL_EXIT_MISMATCH ? bpy_MismatchError
                                                    : bpy_DeviceError;
    PyObject *exc = PyObject_CallFunction(type, "s", e->msg[0] ? e->msg : "unknown error");
    PyObject *code = exc ? PyLong_FromLong(e->code ? e->code : BCL_EXIT_RUNTIME) : NULL;
    int rc = code ? PyObject_SetAttrString(exc, "exit_code", code) : -1;
    Py_XDECREF(code);
    if (rc == 0)
        rc = set_attr_str(exc, "detail", e->detail);
    if (rc == 0 && type == bpy_DeviceError)
        rc = set_attr_str(exc, "call", e->cl_call);
    if (rc == 0 && type == bpy_DeviceError)
        rc = set_attr_str(exc, "status", e->cl_status);
    if (rc)
        Py_CLEAR(exc);
    bcl_error_clear(e);
    return exc;
}

PyObject *bpy_raise(bcl_error *e)
{
    PyObject *exc = bpy_exception(e);
    if (exc)
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_XDECREF(exc);
    return NULL;
}

PyObject *bpy_input_error(const char *fmt, ...)
{
    bcl_error e = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    va_end(ap);
    e.code = BCL_EXIT_INPUT;
    return bpy_raise(&e);
}
