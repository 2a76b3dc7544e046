/*
 * ballcl.run over several devices (device="all" or "0:0,0:1"): a group of
 * the library (ballcl/ballcl.h, "A group") cuts the balls into one shard
 * per device by measured rate, runs every shard at once with its state kept
 * on its device, and validates each shard. As for one device, the steps go
 * in chunks with the GIL taken back between them for Ctrl-C.
 */
#include "core.h"

#include <string.h>

#define CHUNK_MS 50.0

typedef struct group_job {
    const bpy_args *a;
    bcl_group *g;
    const float *init;
    float *out;
    size_t n;
    double wall_ms;                     /* all chunks, all devices */
    double device_ms[BCL_MAX_DEVICES];  /* per member, all chunks */
    double wall_ms_m[BCL_MAX_DEVICES];  /* per member, all chunks */
    double wait_ms[BCL_MAX_DEVICES];    /* per member, all chunks */
    uint64_t launches[BCL_MAX_DEVICES]; /* per member, all chunks */
    bool host_clock;                    /* a device's profiling failed its check */
    bcl_validation total;
} group_job;

static bool signalled(PyThreadState **ts)
{
    PyEval_RestoreThread(*ts);
    int rc = PyErr_CheckSignals();
    *ts = PyEval_SaveThread();
    return rc < 0;
}

static int run_chunks(group_job *j, bcl_error *e, PyThreadState **ts)
{
    size_t nd = bcl_group_size(j->g);
    unsigned k = 1;
    for (size_t i = 0; i < nd; i++) {
        const bcl_group_member *m = bcl_group_member_at(j->g, i);
        if (m->shard.count && m->plan.steps_per_launch > k)
            k = m->plan.steps_per_launch;
    }
    uint64_t left = j->a->steps, per = 1;
    while (left) {
        uint64_t chunk = per <= left / k ? per * k : left;
        bcl_group_timing t;
        int rc = bcl_group_run(j->g, chunk, &t, e);
        if (rc)
            return rc;
        j->wall_ms += t.wall_ms;
        for (size_t i = 0; i < nd; i++) {
            const bcl_group_member *m = bcl_group_member_at(j->g, i);
            j->device_ms[i] += m->timing.device_ms;
            j->wall_ms_m[i] += m->timing.wall_ms;
            j->wait_ms[i] += m->wait_ms;
            j->launches[i] += m->timing.launches;
            j->host_clock = j->host_clock || m->timing.host_clock;
        }
        left -= chunk;
        if (left && signalled(ts))
            return BPY_PENDING;
        if (t.wall_ms < CHUNK_MS && per < ((uint64_t)1 << 40))
            per *= 2;
    }
    return BCL_OK;
}

static int work(group_job *j, const bcl_device_info *const *devs, size_t count, bcl_error *e,
                PyThreadState **ts)
{
    const bpy_args *a = j->a;
    bcl_group_opts o = {
        .model = a->model,
        .ctx = {.use_cache = true},
        .req =
            {
                .params = a->params,
                .balls = j->n,
                .steps = a->steps,
                .steps_per_launch = a->steps_per_launch,
                .sync = BCL_SYNC_END,
                .launch = a->launch,
                .take_tuned = !a->steps_per_launch && !a->local_given,
            },
    };
    int rc = bcl_group_open(devs, count, &o, &j->g, e);
    if (rc == BCL_OK)
        rc = bcl_group_split(j->g, j->init, e);
    if (rc == BCL_OK)
        rc = bcl_group_load(j->g, j->init, e);
    if (rc == BCL_OK)
        rc = run_chunks(j, e, ts);
    if (rc == BCL_OK)
        rc = bcl_group_read(j->g, j->out, e);
    if (rc == BCL_OK && a->validate)
        rc = bcl_group_validate(j->g, j->init, j->out, a->steps, 0, &j->total, e);
    return rc;
}

static PyObject *member_dict(const group_job *j, size_t i)
{
    const bcl_group_member *gm = bcl_group_member_at(j->g, i);
    bpy_member m = {
        .dev = gm->dev,
        .selector = gm->selector,
        .first = gm->shard.first,
        .balls = gm->shard.count,
        .share = gm->share,
        .rate = gm->rate,
        .launch_ms = gm->launch_ms,
        .rate_how = gm->rate_how,
        .device_ms = j->device_ms[i],
        .wall_ms = j->wall_ms_m[i],
        .wait_ms = j->wait_ms[i],
        .steps = j->a->steps,
        .plan = gm->shard.count ? &gm->plan : NULL,
        .buffers = gm->buffers,
        .build = &gm->build,
        .v = &gm->v,
        .validate = j->a->validate,
        .excluded = gm->excluded,
    };
    return bpy_member_dict(&m);
}

/* The one-device fields (of the first device with balls; device_ms the
 * slowest device's), plus "devices" and "aggregate", as `ballcl run --json`
 * gives them for several devices. */
static PyObject *group_result(group_job *j)
{
    size_t nd = bcl_group_size(j->g), lead = 0;
    for (size_t i = nd; i-- > 0;)
        if (bcl_group_member_at(j->g, i)->shard.count)
            lead = i;
    const bcl_group_member *l = bcl_group_member_at(j->g, lead);
    bpy_exec x = {.args = j->a, .balls = j->n, .plan = l->plan, .plan_ok = true};
    x.first_ms = l->first_launch_ms;
    x.t.wall_ms = j->wall_ms;
    x.t.launches = j->launches[lead];
    x.t.host_clock = j->host_clock;
    x.v = j->total;
    for (size_t i = 0; i < nd; i++) {
        if (j->device_ms[i] > x.t.device_ms)
            x.t.device_ms = j->device_ms[i];
        x.buffers += bcl_group_member_at(j->g, i)->buffers;
    }
    PyObject *dict = bpy_result_dict(&x, l->dev, &l->build, NULL);
    /* "devices" lists every device of the group, not the lead alone. */
    PyObject *devices = dict ? PyList_New((Py_ssize_t)nd) : NULL;
    for (size_t i = 0; devices && i < nd; i++) {
        PyObject *md = member_dict(j, i);
        if (!md)
            Py_CLEAR(devices);
        else
            PyList_SET_ITEM(devices, (Py_ssize_t)i, md);
    }
    double steps = (double)j->a->steps;
    PyObject *agg =
        devices ? Py_BuildValue("{s:n, s:d, s:d, s:d}", "devices", (Py_ssize_t)nd, "wall_ms",
                                j->wall_ms, "ball_steps_per_s",
                                j->wall_ms > 0 ? (double)j->n * steps / (j->wall_ms * 1e-3) : 0.0,
                                "calibrate_ms", bcl_group_calibrate_ms(j->g))
                : NULL;
    if (!agg || PyDict_SetItemString(dict, "devices", devices) < 0 ||
        PyDict_SetItemString(dict, "aggregate", agg) < 0)
        Py_CLEAR(dict);
    Py_XDECREF(devices);
    Py_XDECREF(agg);
    if (!dict)
        return NULL;
    /* Warnings of every device, as the CLI prints them. */
    for (size_t i = 0; i < nd; i++) {
        const bcl_group_member *m = bcl_group_member_at(j->g, i);
        const char *w[2] = {m->build.warning, m->plan.warning};
        for (int k = 0; k < 2; k++)
            if (w[k][0] && PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "ballcl: device %s: %s",
                                            m->selector, w[k]) < 0) {
                Py_DECREF(dict);
                return NULL;
            }
    }
    return bpy_result_wrap(dict);
}

PyObject *bpy_run_group(PyArrayObject *in, const bpy_args *a, const size_t *idx, size_t count)
{
    const bcl_device_list *list = bpy_devices();
    const bcl_device_info *devs[BCL_MAX_DEVICES];
    for (size_t i = 0; i < count; i++)
        devs[i] = &list->dev[idx[i]];
    size_t n = (size_t)PyArray_DIM(in, 0);
    bcl_error e = {0};
    if (bcl_group_memory_fit(devs, count, n, 1, "state", &e)) {
        bpy_raise(&e);
        bcl_error_clear(&e);
        return NULL;
    }
    float *data;
    PyObject *out = bpy_plain_state_array(n, &data);
    if (!out)
        return NULL;
    group_job j = {
        .a = a,
        .init = PyArray_DATA(in),
        .out = data,
        .n = n,
    };
    PyThreadState *ts = PyEval_SaveThread();
    int rc = work(&j, devs, count, &e, &ts);
    PyEval_RestoreThread(ts);
    PyObject *ret = NULL;
    if (rc && rc != BPY_PENDING) {
        bpy_raise(&e);
    } else if (rc == BCL_OK) {
        PyObject *result = group_result(&j);
        if (result && a->validate && j.total.mismatches) {
            bpy_exec x = {.args = a, .v = j.total};
            bpy_raise_mismatch(result, out, &x);
        } else if (result && bpy_check_overflow(a, j.init, j.out, n) == 0) {
            ret = PyTuple_Pack(2, out, result);
        }
        Py_XDECREF(result);
    }
    Py_BEGIN_ALLOW_THREADS;
    bcl_group_close(j.g);
    Py_END_ALLOW_THREADS;
    bcl_error_clear(&e);
    Py_DECREF(out);
    return ret;
}
