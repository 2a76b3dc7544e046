/*
 * One run from Python: the library's one run path (bcl_group_exec, as the
 * CLI runs it), with the GIL released. The steps go to the devices in
 * chunks of launches, each twice the last until one lasts CHUNK_MS, and the
 * validation in slices; between them the GIL is taken back for
 * PyErr_CheckSignals, so Ctrl-C stops a long run within about one chunk
 * while a short run is one chunk.
 */
#include "core.h"

#include <string.h>

#define CHUNK_MS 50.0

/* Takes the GIL back, runs Python's signal handlers, releases it again.
 * Non-zero when a handler raised (the exception stays pending). */
static int signalled(void *arg)
{
    bpy_exec *x = arg;
    PyEval_RestoreThread(*x->ts);
    int rc = PyErr_CheckSignals();
    *x->ts = PyEval_SaveThread();
    return rc < 0;
}

int bpy_group_open(const bpy_args *a, const size_t *idx, size_t count, size_t balls, bcl_group **g,
                   bcl_error *e)
{
    const bcl_device_list *list = bpy_devices();
    const bcl_device_info *devs[BCL_MAX_DEVICES];
    for (size_t i = 0; i < count && i < BCL_MAX_DEVICES; i++)
        devs[i] = &list->dev[idx[i]];
    bcl_group_opts o = {
        .model = a->model,
        .ctx = {.use_cache = true},
        /* The request of bpy_exec_run, which the weighing of several
         * devices plans with. */
        .req = bpy_request(a, balls),
    };
    return bcl_group_open(devs, count, &o, g, e);
}

/* The Result's figures: the first member with balls leads (plan, tuned
 * note, build), as `ballcl run` reports a group. */
static void gather(bpy_exec *x)
{
    size_t nd = bcl_group_size(x->g);
    x->lead = bcl_group_member_at(x->g, 0);
    for (size_t i = nd; i-- > 0;)
        if (bcl_group_member_at(x->g, i)->shard.count)
            x->lead = bcl_group_member_at(x->g, i);
    x->plan = x->lead->plan;
    x->plan_ok = true;
    x->plan_gen = x->lead->plan_gen;
    x->plan_reused = x->r.plan_reused;
    x->tuned_note = x->lead->tuned_note;
    x->first_ms = x->r.first_launch_ms;
    x->v = x->r.v;
    x->input_bad = x->r.input_bad;
    x->buffers = 0;
    for (size_t i = 0; i < nd; i++)
        x->buffers += bcl_group_member_at(x->g, i)->buffers;
    if (nd == 1) {
        x->t = x->lead->timing;
    } else {
        memset(&x->t, 0, sizeof x->t);
        x->t.device_ms = x->r.device_ms;
        x->t.wall_ms = x->r.wall_ms;
        x->t.launches = x->lead->timing.launches;
        x->t.host_clock = x->r.host_clock;
        x->t.max_launch_ms = x->r.max_launch_ms;
    }
}

int bpy_exec_run(bpy_exec *x, bcl_error *e, PyThreadState **ts)
{
    const bpy_args *a = x->args;
    /* What the call chose; what it left open the plan chooses, the tuned
     * record whole or not at all (the library's one tuned rule). */
    bcl_plan_request req = bpy_request(a, 0);
    bcl_exec ex = {
        .steps = a->steps,
        .req = &req,
        .load = x->load,
        .load_balls = x->balls,
        .load_async = x->load_async,
        .load_check = x->load_check,
        .out = x->out,
        .init = x->init,
        .validate = a->validate && x->init,
        .check_overflow = true,
        .chunk_ms = CHUNK_MS,
        .between = signalled,
        .arg = x,
    };
    x->ts = ts;
    x->plan_ok = false;
    int rc = bcl_group_exec(x->g, &ex, &x->r, e);
    if (rc == BCL_EXEC_STOPPED)
        return BPY_PENDING;
    if (rc == BCL_OK)
        gather(x);
    return rc;
}
