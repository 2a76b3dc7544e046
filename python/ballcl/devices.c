/*
 * The devices: enumerated once per process (PoCL and the ICD loader take
 * tens of milliseconds to start) and kept, so that a ballcl.run call costs
 * no enumeration. Contexts keep pointers into the list: it is never freed.
 */
#include "core.h"

#include "cli.h" /* cli_selector: $BALLCL_DEVICE, read in one place */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static bcl_device_list g_list;
static bool g_have_list, g_used;

/* A process forked after OpenCL was used in it (os.fork, multiprocessing's
 * default on Linux) lacks the runtime's threads and locks: an OpenCL call
 * may wait for ever. The child refuses every call and releases nothing of
 * the parent's OpenCL objects (bpy_forked). */
static volatile bool g_forked;

static void fork_child(void)
{
    if (g_used)
        g_forked = true;
}

int bpy_fork_init(void)
{
    return pthread_atfork(NULL, NULL, fork_child) == 0 ? 0 : -1;
}

bool bpy_forked(void)
{
    return g_forked;
}

bool bpy_fork_refused(void)
{
    if (!g_forked)
        return false;
    bcl_error e = {.code = BCL_EXIT_RUNTIME};
    snprintf(e.msg, sizeof e.msg, "%s",
             "this process was forked after ballcl used OpenCL in it, and OpenCL does not "
             "survive fork: use multiprocessing's 'spawn' or 'forkserver' start method, or "
             "use ballcl only after the fork");
    bpy_raise(&e);
    return true;
}

const bcl_device_list *bpy_devices(void)
{
    if (bpy_fork_refused())
        return NULL;
    /* The GIL is held from here to the end: one thread enumerates. */
    if (g_have_list)
        return &g_list;
    g_used = true;
    bcl_error e = {0};
    if (bcl_devices_enumerate(&g_list, &e)) {
        bpy_raise(&e);
        return NULL;
    }
    g_have_list = true;
    return &g_list;
}

PyObject *bpy_json_loads(const char *text)
{
    PyObject *json = PyImport_ImportModule("json");
    if (!json)
        return NULL;
    PyObject *out = PyObject_CallMethod(json, "loads", "s", text);
    Py_DECREF(json);
    return out;
}

/* Whether list->dev[i] is the device a run takes without a selector
 * ($BALLCL_DEVICE, else the default rule); none when that selects nothing. */
static bool is_default(const bcl_device_list *list, size_t i)
{
    size_t def;
    bcl_error e = {0};
    bool yes = bcl_device_select(list, cli_selector(NULL), &def, &e) == BCL_OK && def == i;
    bcl_error_clear(&e);
    return yes;
}

PyObject *bpy_device_full(const bcl_device_info *d)
{
    const bcl_device_list *list = bpy_devices();
    if (!list)
        return NULL;
    size_t i = (size_t)(d - list->dev);
    bcl_error e = {0};
    char *text = bcl_device_json(d, i < list->count && is_default(list, i), &e);
    if (!text)
        return bpy_raise(&e);
    PyObject *out = bpy_json_loads(text);
    free(text);
    return out;
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
        PyObject *d = bpy_device_full(&list->dev[i]);
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

int bpy_device_pick(const char *sel, size_t *index, size_t *count, bool several)
{
    const bcl_device_list *list = bpy_devices();
    if (!list)
        return -1;
    bcl_error e = {0};
    if (several ? bcl_device_select_list(list, sel, index, BCL_MAX_DEVICES, count, &e)
                : bcl_device_select(list, cli_selector(sel), index, &e)) {
        bpy_raise(&e);
        return -1;
    }
    return 0;
}
