/*
 * Library errors as Python exceptions. Each BCL_EXIT_* class has its
 * subclass of ballcl.Error (exit_code says which, as the CLI's exit status
 * would); an OpenCL failure also names the call and the status, from the
 * library's error (bcl_error's cl_call and cl_status), never from its text.
 */
#include "core.h"

#include <stdarg.h>
#include <string.h>

PyObject *bpy_Error, *bpy_DeviceError, *bpy_InputError, *bpy_MismatchError;

int bpy_errors_init(PyObject *module)
{
    bpy_Error = PyErr_NewExceptionWithDoc(
        "ballcl.Error",
        "Any error ballcl reports: catch it for all of them. Attributes: exit_code, the\n"
        "ballcl program's exit status for the same error (1, 2 or 3); detail, more text\n"
        "(a build log) or None. The subclasses are DeviceError, InputError, MismatchError;\n"
        "they pickle, so a worker process's error reaches the parent whole.",
        NULL, NULL);
    if (!bpy_Error)
        return -1;
    bpy_DeviceError = PyErr_NewExceptionWithDoc(
        "ballcl.DeviceError",
        "An OpenCL or other runtime failure (the CLI's exit status 3). .call and .status name\n"
        "the OpenCL function and its status (e.g. 'CL_OUT_OF_RESOURCES') when one failed,\n"
        "else they are None.",
        bpy_Error, NULL);
    PyObject *input_bases = PyTuple_Pack(2, bpy_Error, PyExc_ValueError);
    if (!input_bases)
        return -1;
    bpy_InputError = PyErr_NewExceptionWithDoc(
        "ballcl.InputError",
        "A bad argument or input (the CLI's exit status 2); also a ValueError.", input_bases, NULL);
    Py_DECREF(input_bases);
    bpy_MismatchError = PyErr_NewExceptionWithDoc(
        "ballcl.MismatchError",
        "The device's result differs from the C reference (the CLI's exit status 1).\n"
        ".result is the run's Result and .state the state the device computed.",
        bpy_Error, NULL);
    if (!bpy_DeviceError || !bpy_InputError || !bpy_MismatchError)
        return -1;
    if (PyModule_AddObjectRef(module, "Error", bpy_Error) < 0 ||
        PyModule_AddObjectRef(module, "DeviceError", bpy_DeviceError) < 0 ||
        PyModule_AddObjectRef(module, "InputError", bpy_InputError) < 0 ||
        PyModule_AddObjectRef(module, "MismatchError", bpy_MismatchError) < 0)
        return -1;
    return 0;
}

static int set_attr_str(PyObject *obj, const char *name, const char *value)
{
    PyObject *v = value && *value ? PyUnicode_DecodeUTF8(value, strlen(value), "replace")
                                  : Py_NewRef(Py_None);
    if (!v)
        return -1;
    int rc = PyObject_SetAttrString(obj, name, v);
    Py_DECREF(v);
    return rc;
}

PyObject *bpy_raise(const bcl_error *e)
{
    PyObject *type = e->code == BCL_EXIT_INPUT      ? bpy_InputError
                     : e->code == BCL_EXIT_MISMATCH ? bpy_MismatchError
                                                    : bpy_DeviceError;
    PyObject *exc = PyObject_CallFunction(type, "s", e->msg[0] ? e->msg : "unknown error");
    if (!exc)
        return NULL;
    PyObject *code = PyLong_FromLong(e->code ? e->code : BCL_EXIT_RUNTIME);
    int rc = code ? PyObject_SetAttrString(exc, "exit_code", code) : -1;
    Py_XDECREF(code);
    if (rc == 0)
        rc = set_attr_str(exc, "detail", e->detail);
    if (rc == 0 && type == bpy_DeviceError)
        rc = set_attr_str(exc, "call", e->cl_call);
    if (rc == 0 && type == bpy_DeviceError)
        rc = set_attr_str(exc, "status", e->cl_status);
    if (rc == 0)
        PyErr_SetObject(type, exc);
    Py_DECREF(exc);
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
