/*
 * The devices: enumerated once per process (PoCL and the ICD loader take
 * tens of milliseconds to start) and kept, so that a ballcl.run call costs
 * no enumeration. Contexts keep pointers into the list: it is never freed.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

static bcl_device_list g_list;
static bool g_have_list;

const bcl_device_list *bpy_devices(void)
{
    /* The GIL is held from here to the end: one thread enumerates. */
    if (g_have_list)
        return &g_list;
    bcl_error e = {0};
    if (bcl_devices_enumerate(&g_list, &e)) {
        bpy_raise(&e);
        bcl_error_clear(&e);
        return NULL;
    }
    g_have_list = true;
    return &g_list;
}

int bpy_device_pick(const char *sel, size_t *index)
{
    const bcl_device_list *list = bpy_devices();
    if (!list)
        return -1;
    if (!sel)
        sel = getenv("BALLCL_DEVICE");
    bcl_error e = {0};
    if (bcl_device_select(list, sel, index, &e)) {
        bpy_raise(&e);
        bcl_error_clear(&e);
        return -1;
    }
    return 0;
}

PyObject *bpy_text(const char *s)
{
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

PyObject *bpy_device_dict(const bcl_device_info *d)
{
    char sel[32];
    snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
    /* Driver strings are not always UTF-8: bad bytes become U+FFFD. */
    return Py_BuildValue("{s:s, s:N, s:N, s:N, s:s, s:K, s:K, s:K, s:N, s:N, s:N, s:K}", "selector",
                         sel, "platform", bpy_text(d->platform_name), "name", bpy_text(d->name),
                         "vendor", bpy_text(d->vendor), "type", bcl_device_type_name(d->type),
                         "compute_units", (unsigned long long)d->compute_units, "global_mem_bytes",
                         (unsigned long long)d->global_mem, "max_alloc_bytes",
                         (unsigned long long)d->max_alloc, "version", bpy_text(d->version),
                         "opencl_c_version", bpy_text(d->c_version), "driver", bpy_text(d->driver),
                         "max_work_group", (unsigned long long)d->max_work_group);
}

PyObject *bpy_devices_py(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    const bcl_device_list *list = bpy_devices();
    if (!list)
        return NULL;
    PyObject *out = PyList_New((Py_ssize_t)list->count);
    for (size_t i = 0; out && i < list->count; i++) {
        PyObject *d = bpy_device_dict(&list->dev[i]);
        if (!d) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, d);
    }
    return out;
}

bool bpy_is_device_list(const char *sel)
{
    return sel && (strchr(sel, ',') || strcmp(sel, "all") == 0);
}

int bpy_device_pick_list(const char *sel, size_t *idx, size_t *count)
{
    const bcl_device_list *list = bpy_devices();
    if (!list)
        return -1;
    bcl_error e = {0};
    if (bcl_device_select_list(list, sel, idx, BCL_MAX_DEVICES, count, &e)) {
        bpy_raise(&e);
        bcl_error_clear(&e);
        return -1;
    }
    return 0;
}
