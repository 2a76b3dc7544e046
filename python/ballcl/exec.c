/*
 * One run from Python (bcl_group_exec), the GIL released. The steps go in
 * chunks of launches growing to CHUNK_MS, the validation in slices; between
 * them the GIL is taken back for PyErr_CheckSignals: Ctrl-C stops a long
 * run within about one chunk.
 */
#include "core.h"

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

/* The request of a run of `balls` (0: the group's range) from a. */
static bcl_plan_request bpy_request(const bpy_args *a, size_t balls)
{
    return (bcl_plan_request){
        .params = a->params,
        .balls = balls,
        .steps = a->steps,
        .steps_per_launch = a->steps_per_launch,
        .sync = BCL_SYNC_END,
        .launch = a->launch,
        .local_given = a->local_given,
    };
}

int bpy_group_open(const bpy_args *a, const bcl_device_info *const *devs, size_t count,
                   size_t balls, bcl_group **g, bcl_error *e)
{
    bcl_group_opts o = {
        .model = a->model,
        .ctx = {.use_cache = true},
        /* bpy_exec_run's request: several devices are weighed with it. */
        .req = bpy_request(a, balls),
    };
    return bcl_group_open(devs, count, &o, g, e);
}

int bpy_exec_run(bpy_exec *x, bcl_error *e, PyThreadState **ts)
{
    const bpy_args *a = x->args;
    /* What the call chose; what it left open the plan chooses, the tuned
     * record whole or not at all (the library's one tuned rule). */
    bcl_plan_request req = bpy_request(a, 0);
    /* A Model has no reference the library knows: a NumPy one is run here
     * after the steps (model.c); without one the run says so. */
    bool numpy_ref = bpy_model_has_numpy_reference(a->model_obj);
    x->no_reference = a->model_obj && !numpy_ref;
    x->validated = a->validate && x->init && !x->no_reference;
    x->numpy_validated = false;
    bcl_exec ex = {
        .steps = a->steps,
        .req = &req,
        .load = x->load,
        .load_balls = x->balls,
        .load_async = x->load_async,
        .load_check = x->load_check,
        .out = x->out,
        .init = x->init,
        .validate = x->validated && !numpy_ref,
        .no_reference = x->no_reference,
        .check_overflow = true,
        .chunk_ms = CHUNK_MS,
        .between = signalled,
        .arg = x,
    };
    x->ts = ts;
    x->lead = NULL;
    int rc = bcl_group_exec(x->g, &ex, &x->r, e);
    if (rc == BCL_EXEC_STOPPED)
        return BPY_PENDING;
    /* The reference runs in a child process while this thread waits with
     * the GIL (Ctrl-C reaches the wait); an input the devices refused
     * was not run. */
    if (rc == BCL_OK && numpy_ref && x->validated && !x->r.input_bad) {
        PyEval_RestoreThread(*ts);
        rc = bpy_model_validate(x) ? BPY_PENDING : BCL_OK;
        *ts = PyEval_SaveThread();
    }
    /* The first member with balls leads, as `ballcl run` reports a group. */
    for (size_t i = 0; rc == BCL_OK && i < bcl_group_size(x->g); i++) {
        const bcl_group_member *m = bcl_group_member_at(x->g, i);
        if (!x->lead || (!x->lead->shard.count && m->shard.count))
            x->lead = m;
    }
    return rc;
}
