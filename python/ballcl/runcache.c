/*
 * ballcl.run's process-wide contexts: one ballcl.Context per (device,
 * model), so that a later call costs a frame and a returned array passed
 * back is not uploaded (docs/PYTHON.md, "Frame loops"). The registry
 * changes only with the GIL held.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

/* (Context, kernel folder) pairs: a context made under another
 * $BALLCL_KERNEL_DIR holds another program. */
static PyObject *registry;

static const char *kernel_dir(void)
{
    const char *d = getenv("BALLCL_KERNEL_DIR");
    return d ? d : "";
}

static PyObject *context_of(PyObject *entry)
{
    return PyTuple_GET_ITEM(entry, 0);
}

static PyObject *find(const bcl_device_info *dev, const bcl_model *m)
{
    Py_ssize_t n = registry ? PyList_GET_SIZE(registry) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry = PyList_GET_ITEM(registry, i);
        bpy_context_info info;
        bpy_context_info_get(context_of(entry), &info);
        const char *dir = PyBytes_AS_STRING(PyTuple_GET_ITEM(entry, 1));
        if (info.dev == dev && info.model == m && !info.closed && strcmp(dir, kernel_dir()) == 0)
            return context_of(entry);
    }
    return NULL;
}

/* The cached context of (device di, a's model): a new reference; NULL with
 * an exception set. */
static PyObject *get(size_t di, const bpy_args *a)
{
    const bcl_device_info *dev = &bpy_devices()->dev[di];
    PyObject *c = find(dev, a->model);
    if (c)
        return Py_NewRef(c);
    /* Opening releases the GIL: another thread may have opened one
     * meanwhile, or a close() emptied the registry. */
    PyObject *fresh = bpy_context_open(di, a);
    if (!fresh)
        return NULL;
    if ((c = find(dev, a->model))) {
        bpy_context_close(fresh, true);
        Py_DECREF(fresh);
        return Py_NewRef(c);
    }
    PyObject *entry = Py_BuildValue("(Oy)", fresh, kernel_dir());
    if (!entry || (!registry && !(registry = PyList_New(0))) ||
        PyList_Append(registry, entry) < 0) {
        Py_XDECREF(entry);
        Py_DECREF(fresh);
        return NULL;
    }
    Py_DECREF(entry);
    return fresh;
}

PyObject *bpy_run_cached(const bpy_args *a, size_t di, PyArrayObject *in, PyObject *out_o)
{
    /* A close() from another thread between finding the context and taking
     * its lock closes it under this call: then once more with a new one. */
    for (int attempt = 0; attempt < 2; attempt++) {
        PyObject *c = get(di, a);
        if (!c)
            return NULL;
        PyObject *r = bpy_context_frame(c, a, in, out_o);
        bpy_context_info info;
        bpy_context_info_get(c, &info);
        Py_DECREF(c);
        if (r || !info.closed)
            return r;
        PyErr_Clear();
    }
    return bpy_input_error("ballcl.run: the cached context was closed during the call");
}

PyObject *bpy_cached_py(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *list = PyList_New(0);
    Py_ssize_t n = registry ? PyList_GET_SIZE(registry) : 0;
    for (Py_ssize_t i = 0; list && i < n; i++) {
        bpy_context_info info;
        bpy_context_info_get(context_of(PyList_GET_ITEM(registry, i)), &info);
        if (info.closed)
            continue;
        char sel[32];
        snprintf(sel, sizeof sel, "%u:%u", info.dev->platform_index, info.dev->device_index);
        PyObject *d = Py_BuildValue(
            "{s:s, s:N, s:s, s:n, s:K, s:K, s:K, s:K, s:K}", "device", sel, "name",
            bpy_text(info.dev->name), "model", info.model->name, "balls", (Py_ssize_t)info.capacity,
            "device_bytes", (unsigned long long)info.capacity * 4 * sizeof(float),
            "pinned_host_bytes", (unsigned long long)info.pinned_bytes, "calls", info.calls,
            "builds", info.builds, "uploads", info.uploads);
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

/* Empties the registry, then closes each context (wait: for a call in it). */
static void close_all(bool wait)
{
    PyObject *old = registry;
    registry = NULL;
    Py_ssize_t n = old ? PyList_GET_SIZE(old) : 0;
    for (Py_ssize_t i = 0; i < n; i++)
        bpy_context_close(context_of(PyList_GET_ITEM(old, i)), wait);
    Py_XDECREF(old);
}

PyObject *bpy_close_py(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    close_all(true);
    Py_RETURN_NONE;
}

PyObject *bpy_close_at_exit_py(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    /* A daemon thread may still be inside a call: its context is left to
     * the process's end rather than waited for. */
    close_all(false);
    Py_RETURN_NONE;
}
