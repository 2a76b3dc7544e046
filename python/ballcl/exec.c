/*
 * One run on a context, with the GIL released. The steps go to the device
 * in chunks of launches (bcl_sim_run queues a chunk back to back and waits
 * once); between chunks the GIL is taken back for PyErr_CheckSignals, so
 * Ctrl-C stops a long run within about one chunk. Chunks start at one
 * launch and double until one lasts CHUNK_MS: a short run is one chunk, a
 * long one waits for the device a few dozen times, not once per launch.
 * The validation is cut into slices of balls for the same reason.
 */
#include "core.h"

#include <string.h>

#define CHUNK_MS 50.0
/* Ball-steps of the C reference per validation slice: ~0.1-0.3 s on the
 * host; never fewer balls than the library's parallel chunks can share. */
#define SLICE_BALL_STEPS 250000000.0
#define SLICE_MIN_BALLS  (1u << 17)

/* Takes the GIL back, runs Python's signal handlers, releases it again.
 * True when a handler raised (the exception stays pending). */
static bool signalled(PyThreadState **ts)
{
    PyEval_RestoreThread(*ts);
    int rc = PyErr_CheckSignals();
    *ts = PyEval_SaveThread();
    return rc < 0;
}

static bool warm_has(const bpy_warm_set *w, const bcl_plan *p)
{
    for (size_t i = 0; i < w->count; i++)
        if (w->local[i] == p->launch.local && strcmp(w->kernel[i], p->kernel) == 0)
            return true;
    return false;
}

static void warm_add(bpy_warm_set *w, const bcl_plan *p)
{
    size_t i = w->count < BPY_WARM_MAX ? w->count++ : BPY_WARM_MAX - 1;
    snprintf(w->kernel[i], sizeof w->kernel[i], "%s", p->kernel);
    w->local[i] = p->launch.local;
}

/* The steps, then the read-back into x->out, which goes with the last
 * chunk (bcl_sim_run_read: one wait for both). */
static int run_steps(bpy_exec *x, bcl_error *e, PyThreadState **ts)
{
    memset(&x->t, 0, sizeof x->t);
    uint64_t k = x->plan.steps_per_launch, left = x->args->steps, per = 1;
    if (left == 0)
        return bcl_sim_run_read_check(x->sim, &x->plan, 0, x->out, x->out_bad, &x->t, e);
    while (left) {
        uint64_t chunk = per <= left / k ? per * k : left;
        bcl_sim_timing ct;
        int rc = chunk == left
                     ? bcl_sim_run_read_check(x->sim, &x->plan, chunk, x->out, x->out_bad, &ct, e)
                     : bcl_sim_run(x->sim, &x->plan, chunk, &ct, e);
        if (rc)
            return rc;
        x->t.device_ms += ct.device_ms;
        x->t.wall_ms += ct.wall_ms;
        x->t.launches += ct.launches;
        x->t.host_clock = x->t.host_clock || ct.host_clock;
        if (ct.max_launch_ms > x->t.max_launch_ms)
            x->t.max_launch_ms = ct.max_launch_ms;
        left -= chunk;
        if (left && signalled(ts))
            return BPY_PENDING;
        if (ct.wall_ms < CHUNK_MS && per < ((uint64_t)1 << 40))
            per *= 2;
    }
    return BCL_OK;
}

static void merge(bcl_validation *into, const bcl_validation *part, size_t first)
{
    into->compared += part->compared;
    into->mismatches += part->mismatches;
    if (part->max_ulp > into->max_ulp)
        into->max_ulp = part->max_ulp;
    for (size_t i = 0; i < part->nreported && into->nreported < BCL_MAX_REPORTED_MISMATCHES; i++) {
        into->first[into->nreported] = part->first[i];
        into->first[into->nreported++].ball += first;
    }
}

static int validate(bpy_exec *x, bcl_error *e, PyThreadState **ts)
{
    const bpy_args *a = x->args;
    double per = SLICE_BALL_STEPS / (a->steps ? (double)a->steps : 1.0);
    size_t slice = per < SLICE_MIN_BALLS    ? SLICE_MIN_BALLS
                   : per > (double)x->balls ? x->balls
                                            : (size_t)per;
    memset(&x->v, 0, sizeof x->v);
    for (size_t first = 0; first < x->balls; first += slice) {
        size_t n = x->balls - first < slice ? x->balls - first : slice;
        bcl_validation part;
        int rc = bcl_validate(a->model, a->params, x->init + 4 * first, x->out + 4 * first, n,
                              a->steps, 0, &part, e);
        if (rc)
            return rc;
        merge(&x->v, &part, first);
        if (first + n < x->balls && signalled(ts))
            return BPY_PENDING;
    }
    return BCL_OK;
}

/* The report's "tuned" note, worded as `ballcl run` words it. */
static void tuned_note(bpy_exec *x, const bcl_plan_request *req)
{
    const bcl_tuned *t = bcl_context_tuned(x->ctx, NULL);
    const char *kind = x->plan.fused ? "k-step" : "one-step";
    x->tuned_note[0] = '\0';
    if (!t->single.found && !t->fused.found)
        return;
    if (x->plan.tuned_used)
        snprintf(x->tuned_note, sizeof x->tuned_note,
                 "used%s: K, variant and local size of the %s entry stored by 'ballcl tune' "
                 "(%s, N = %llu)%s",
                 req->take_tuned ? "" : " (local='tuned')", kind, t->date,
                 (unsigned long long)t->balls, req->take_tuned ? "" : ", where not given");
    else if (req->take_tuned || req->launch.mode == BCL_LOCAL_TUNED)
        snprintf(x->tuned_note, sizeof x->tuned_note, "not used: no %s entry stored", kind);
    else
        snprintf(x->tuned_note, sizeof x->tuned_note,
                 "not used: %s given (the stored configuration is taken whole or not at all)",
                 x->args->steps_per_launch ? "steps_per_launch" : "local");
}

int bpy_exec_run(bpy_exec *x, bcl_error *e, PyThreadState **ts)
{
    const bpy_args *a = x->args;
    bcl_plan_request req = {
        .params = a->params,
        .balls = x->balls,
        .steps = a->steps,
        .steps_per_launch = a->steps_per_launch,
        .sync = BCL_SYNC_END,
        .launch = a->launch,
        /* As `ballcl run`: the tuned record whole, or not at all. */
        .take_tuned = !a->steps_per_launch && !a->local_given,
    };
    x->first_ms = 0;
    x->buffers = bcl_sim_buffers(x->sim);
    int rc;
    bpy_plan_memo *m = x->memo;
    unsigned np = bcl_model_param_floats(a->model);
    if (m && m->valid && m->req.launch.mode == req.launch.mode &&
        m->req.launch.local == req.launch.local && m->req.balls == req.balls &&
        m->req.steps == req.steps && m->req.steps_per_launch == req.steps_per_launch &&
        m->req.take_tuned == req.take_tuned &&
        memcmp(m->params, a->params, np * sizeof(float)) == 0) {
        /* The same request on the same context resolves to the same plan:
         * skip the kernel queries and the variant list. */
        x->plan = m->plan;
        memcpy(x->tuned_note, m->tuned_note, sizeof x->tuned_note);
        x->plan_reused = true;
    } else {
        if (m)
            m->valid = false;
        if ((rc = bcl_plan_resolve(x->ctx, &req, &x->plan, e)))
            return rc;
        tuned_note(x, &req);
        if (m) {
            m->gen++;
            m->req = req;
            m->req.params = NULL;
            memcpy(m->params, a->params, np * sizeof(float));
            m->plan = x->plan;
            memcpy(m->tuned_note, x->tuned_note, sizeof m->tuned_note);
            m->valid = true;
        }
    }
    x->plan_ok = true;
    if (!x->warmed || !warm_has(x->warmed, &x->plan)) {
        if ((rc = bcl_sim_warmup(x->sim, &x->plan, &x->first_ms, e)))
            return rc;
        if (x->warmed)
            warm_add(x->warmed, &x->plan);
    }
    /* After the first launch, so that the entry holds what the driver
     * compiled for it (docs/cache.md). */
    if (x->build && x->stored && !*x->stored) {
        bcl_context_cache_store(x->ctx, x->build);
        *x->stored = true;
    }
    if ((rc = run_steps(x, e, ts)))
        return rc;
    /* The steps waited for the device: the input's verdict is in. A
     * refused input is not worth the reference replay. */
    if (x->in_bad && *x->in_bad)
        return BCL_OK;
    if (a->validate && (rc = validate(x, e, ts)))
        return rc;
    return BCL_OK;
}
