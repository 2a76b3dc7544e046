/*
 * The one run (docs/DESIGN.md, "One run path"): every run of a group, the
 * CLI's (under MPI too, through the `ran` hook) and the Python module's. A
 * group of one costs nothing beside its simulation: no thread, allocation
 * or copy; the plan is resolved again only when the request or the shard
 * changed, the warm-up once per kernel and local size.
 */
#include "job/group_impl.h"
#include "ocl/program.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Ball-steps of the C reference per validation slice between two calls of
 * between() (0.1-0.3 s), in no fewer balls than its parallel chunks share. */
#define SLICE_BALL_STEPS 250000000.0
#define SLICE_MIN_BALLS  (1u << 17)

/* Whether a request asks for another plan than the group's. */
static bool same_request(const bcl_plan_request *a, const bcl_plan_request *b)
{
    bool va = a->variant != NULL, vb = b->variant != NULL;
    return a->steps == b->steps && a->steps_per_launch == b->steps_per_launch &&
           a->sync == b->sync && a->fused == b->fused && a->launch.mode == b->launch.mode &&
           a->launch.local == b->launch.local && a->local_given == b->local_given &&
           a->launch_budget_ms == b->launch_budget_ms && va == vb &&
           (!va || strcmp(a->variant, b->variant) == 0);
}

/* The request of this run into the group: its plans stay while it is the same. */
static void take_request(bcl_group *g, const bcl_exec *x)
{
    bcl_plan_request r = x->req ? *x->req : g->o.req;
    r.params = g->o.req.params;
    r.first = g->o.req.first;
    r.balls = g->o.req.balls;
    r.steps = x->steps;
    size_t pb = bcl_model_param_floats(g->o.model) * sizeof(float);
    bool same_params = !x->req || !x->req->params || memcmp(x->req->params, g->params, pb) == 0;
    if (!same_params)
        memcpy(g->params, x->req->params, pb);
    if (same_params && same_request(&r, &g->o.req))
        return;
    r.take_tuned = bcl_plan_tuned_rule(&r);
    g->o.req = r;
    for (size_t i = 0; i < g->count; i++)
        g->m[i].planned = false;
}

static int run_chunk_one(member *m, bcl_error *e)
{
    bcl_sim_timing t;
    m->t0 = bcl_now_ms();
    int rc = m->out ? bcl_sim_run_read_check(m->sim, &m->pub.plan, m->steps,
                                             m->out + 4 * (m->pub.shard.first - m->g->o.req.first),
                                             &m->out_bad, &t, e)
                    : bcl_sim_run(m->sim, &m->pub.plan, m->steps, &t, e);
    m->t1 = bcl_now_ms();
    if (rc)
        return rc;
    bcl_sim_timing *s = &m->pub.timing;
    s->device_ms += t.device_ms;
    s->wall_ms += t.wall_ms;
    s->launches += t.launches;
    s->host_clock = s->host_clock || t.host_clock;
    /* Once a chunk is on the host clock the member's figure is the host's
     * for all (docs/BENCHMARK.md, "Clocks"), not a mix of both clocks. */
    if (s->host_clock)
        s->device_ms = s->wall_ms;
    s->max_launch_ms = fmax(s->max_launch_ms, t.max_launch_ms);
    return BCL_OK;
}

/* The shard read back into m->out, with the device's finite check. */
static int read_check_one(member *m, bcl_error *e)
{
    float *to = m->out + 4 * (m->pub.shard.first - m->g->o.req.first);
    bcl_sim_timing none;
    return bcl_sim_run_read_check(m->sim, &m->pub.plan, 0, to, &m->out_bad, &none, e);
}

/* fn on every member with balls, for `steps` steps that end in out (the
 * range; NULL: no read-back). */
static int each_out(bcl_group *g, member_fn fn, uint64_t steps, float *out, bcl_error *e)
{
    for (size_t i = 0; i < g->count; i++) {
        g->m[i].steps = steps;
        g->m[i].out = out;
    }
    return group_each(g, fn, true, e);
}

/* One chunk on every member with balls; its wall time (first start to
 * last end) into *wall_ms, each member's wait for the slowest added. */
static int run_chunk(bcl_group *g, uint64_t steps, float *out, double *wall_ms, bcl_error *e)
{
    int rc = each_out(g, run_chunk_one, steps, out, e);
    if (rc)
        return rc;
    double start = INFINITY, end = 0; /* a group at work has a member with balls */
    for (size_t i = 0; i < g->count; i++)
        if (g->m[i].pub.shard.count) {
            start = fmin(start, g->m[i].t0);
            end = fmax(end, g->m[i].t1);
        }
    for (size_t i = 0; i < g->count; i++)
        if (g->m[i].pub.shard.count)
            g->m[i].pub.wait_ms += end - g->m[i].t1;
    *wall_ms = end - start;
    return BCL_OK;
}

static int steps_in_chunks(bcl_group *g, const bcl_exec *x, float *out, bcl_exec_result *r,
                           bcl_error *e)
{
    unsigned k = 1;
    for (size_t i = 0; i < g->count; i++) {
        const bcl_group_member *m = &g->m[i].pub;
        if (m->shard.count && m->plan.steps_per_launch > k)
            k = m->plan.steps_per_launch;
    }
    uint64_t left = x->steps, per = 1;
    /* Chunks start at the length the last chunked run reached, scaled to
     * its balls, not at one launch: every chunk ends in a wait, which a
     * frame then pays a few times, not once per doubling (docs/PERFORMANCE.md,
     * "The host's cost per launch"). */
    if (x->chunk_ms > 0 && g->chunk_ball_ms > 0 && g->o.req.balls) {
        double fit = x->chunk_ms / (g->chunk_ball_ms * (double)g->o.req.balls);
        per = fit >= (double)((uint64_t)1 << 40) ? (uint64_t)1 << 40 : fit >= 1 ? (uint64_t)fit : 1;
    }
    if (left == 0 && out)
        return each_out(g, read_check_one, 0, out, e);
    while (left) {
        uint64_t chunk = x->chunk_ms > 0 && per <= left / k ? per * k : left;
        double wall = 0;
        int rc = run_chunk(g, chunk, chunk == left ? out : NULL, &wall, e);
        if (rc)
            return rc;
        r->wall_ms += wall;
        if (x->chunk_ms > 0 && chunk >= k && g->o.req.balls)
            g->chunk_ball_ms = wall / ((double)(chunk / k) * (double)g->o.req.balls);
        left -= chunk;
        if (left && x->between && x->between(x->arg))
            return BCL_EXEC_STOPPED;
        if (wall < x->chunk_ms && per < ((uint64_t)1 << 40))
            per *= 2;
    }
    return BCL_OK;
}

/* Each member's shard of x->out against the C reference from x->init, in
 * slices with between() after each. */
static int validate(bcl_group *g, const bcl_exec *x, bcl_exec_result *r, bcl_error *e)
{
    double per = SLICE_BALL_STEPS / (x->steps ? (double)x->steps : 1.0);
    for (size_t i = 0; i < g->count; i++) {
        bcl_group_member *p = &g->m[i].pub;
        memset(&p->v, 0, sizeof p->v);
        if (!p->shard.count)
            continue;
        size_t off = p->shard.first - g->o.req.first, n = p->shard.count;
        size_t slice = x->between ? (per < SLICE_MIN_BALLS ? SLICE_MIN_BALLS
                                     : per > (double)n     ? n
                                                           : (size_t)per)
                                  : n;
        for (size_t at = 0; at < n; at += slice) {
            size_t c = n - at < slice ? n - at : slice;
            bcl_validation part;
            int rc = bcl_validate(g->o.model, g->params, x->init + 4 * (off + at),
                                  x->out + 4 * (off + at), c, x->steps, x->tol_ulp, &part, e);
            if (rc)
                return rc;
            for (size_t k = 0; k < part.nreported; k++)
                part.first[k].ball += p->shard.first + at;
            bcl_validation_merge(&p->v, &part);
            if (at + c < n && x->between && x->between(x->arg))
                return BCL_EXEC_STOPPED;
        }
        bcl_validation_merge(&r->v, &p->v);
    }
    return BCL_OK;
}

/* With a tolerance (docs/MODELS.md): rounding that OpenCL leaves open
 * (sin, exp, ...) compounds over S steps, so the final state says nothing
 * of a tolerance. Each member's device instead takes one step from the
 * states of sampled steps, the run's start (x->init) and its end (x->out),
 * and that step is compared with the reference's one step from the same
 * state; the device then holds x->out again, as after the run. */
static int validate_per_step(bcl_group *g, const bcl_exec *x, bcl_exec_result *r, bcl_error *e)
{
    for (size_t i = 0; i < g->count; i++) {
        member *m = &g->m[i];
        bcl_group_member *p = &m->pub;
        memset(&p->v, 0, sizeof p->v);
        if (!p->shard.count)
            continue;
        size_t off = p->shard.first - g->o.req.first, n = p->shard.count;
        float *step = malloc(n * 4 * sizeof(float));
        if (!step)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory for validation");
        bcl_plan one = p->plan;
        one.sync = BCL_SYNC_END;
        int rc = BCL_OK;
        const float *from[2] = {x->init + 4 * off, x->out + 4 * off};
        for (int s = 0; s < 2 && rc == BCL_OK; s++) {
            bcl_sim_timing t;
            bcl_validation part;
            rc = bcl_sim_write(m->sim, from[s], e);
            if (rc == BCL_OK)
                rc = bcl_sim_run(m->sim, &one, 1, &t, e);
            if (rc == BCL_OK)
                rc = bcl_sim_read(m->sim, step, e);
            if (rc == BCL_OK)
                rc = bcl_validate(g->o.model, g->params, from[s], step, n, 1, x->tol_ulp, &part, e);
            for (size_t k = 0; rc == BCL_OK && k < part.nreported; k++)
                part.first[k].ball += p->shard.first;
            if (rc == BCL_OK)
                bcl_validation_merge(&p->v, &part);
        }
        if (rc == BCL_OK)
            rc = bcl_sim_write(m->sim, from[1], e);
        free(step);
        if (rc)
            return rc;
        bcl_validation_merge(&r->v, &p->v);
    }
    return BCL_OK;
}

/* The run's figures from its members with balls: whether each kept its plan
 * (gen: their plan generations before) and whether a device refused the
 * input x checked; returns whether any found its result not finite. */
static bool sum_up(bcl_group *g, const bcl_exec *x, const unsigned long *gen, bcl_exec_result *r)
{
    bool out_bad = false;
    r->plan_reused = true;
    for (size_t i = 0; i < g->count; i++) {
        const bcl_group_member *m = &g->m[i].pub;
        if (!m->shard.count)
            continue;
        r->plan_reused = r->plan_reused && m->plan_gen == gen[i];
        r->input_bad = r->input_bad || (x->load && x->load_check && g->m[i].in_bad);
        out_bad = out_bad || g->m[i].out_bad;
        r->device_ms = fmax(r->device_ms, m->timing.device_ms);
        if (m->timing.launches > r->launches)
            r->launches = m->timing.launches;
        r->max_launch_ms = fmax(r->max_launch_ms, m->timing.max_launch_ms);
        r->first_launch_ms = fmax(r->first_launch_ms, g->m[i].warm_ms_now);
        r->host_clock = r->host_clock || m->timing.host_clock;
    }
    /* On the host clock the run's figure is the wall time of its steps
     * (every chunk, first start to last end), not a member's own span. */
    if (r->host_clock)
        r->device_ms = r->wall_ms;
    return out_bad;
}

static int finish_one(member *m, bcl_error *e)
{
    return m->sim ? bcl_sim_finish(m->sim, e) : BCL_OK; /* none made: nothing queued */
}

/* The run; bcl_group_exec adds the wait a failure owes an asynchronous load. */
static int exec_body(bcl_group *g, const bcl_exec *x, bcl_exec_result *r, bcl_error *e)
{
    memset(r, 0, sizeof *r);
    take_request(g, x);
    int rc = BCL_OK;
    if (!x->load && g->o.req.balls == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "no state on the devices: load one first");
    if (x->load && x->load_balls != g->o.req.balls)
        rc = bcl_group_cut(g, g->o.req.first, x->load_balls, e);
    if (rc == BCL_OK && x->load)
        rc = group_upload(g, x->load, x->load_async, x->load_check, e);
    unsigned long gen[BCL_MAX_DEVICES]; /* a group has at most that many (bcl_group_open) */
    for (size_t i = 0; i < g->count; i++) {
        member *m = &g->m[i];
        gen[i] = m->pub.plan_gen;
        memset(&m->pub.timing, 0, sizeof m->pub.timing);
        m->pub.wait_ms = 0;
        m->out_bad = 0;
    }
    if (rc == BCL_OK)
        rc = group_each(g, group_prepare, true, e);
    /* With a hook after the steps (MPI's barrier), or read_apart, the
     * read-back is not queued behind them: the steps are timed alone. */
    float *fused_out = x->ran || x->read_apart ? NULL : x->out;
    if (rc == BCL_OK)
        rc = steps_in_chunks(g, x, fused_out, r, e);
    if (rc == BCL_EXEC_STOPPED)
        return rc;
    if (x->ran)
        rc = x->ran(x->arg, rc, e);
    if (rc)
        return rc;
    if (x->out && !fused_out && (rc = each_out(g, read_check_one, 0, x->out, e)))
        return rc;
    bool bad = sum_up(g, x, gen, r);
    /* A refused input is not worth the reference replay. */
    if (r->input_bad)
        return BCL_OK;
    if (x->validate && x->init && x->out &&
        (rc = (x->tol_ulp ? validate_per_step : validate)(g, x, r, e)))
        return rc;
    if (!x->check_overflow || !x->out || r->v.mismatches)
        return BCL_OK;
    bcl_overflow o;
    /* The device's check said whether; the host finds where, and the step
     * by replaying that ball from the start. */
    if (!bad ||
        !bcl_find_overflow(g->o.model, g->params, x->init, x->out, g->o.req.balls, x->steps, &o))
        return BCL_OK;
    char at[64] = "";
    if (o.step)
        snprintf(at, sizeof at, " at step %llu", (unsigned long long)o.step);
    return bcl_fail(e, BCL_EXIT_INPUT,
                    "ball %zu overflowed%s: its %c became %s (beyond float32): expected input "
                    "whose state stays finite for %llu steps%s",
                    o.ball + g->o.req.first, at, "xyzw"[o.component],
                    isnan(o.value) ? "nan" : (o.value > 0 ? "inf" : "-inf"),
                    (unsigned long long)x->steps, x->overflow_note ? x->overflow_note : "");
}

int bcl_group_exec(bcl_group *g, const bcl_exec *x, bcl_exec_result *r, bcl_error *e)
{
    int rc = exec_body(g, x, r, e);
    /* The caller may free x->load once this returns: a failure before the
     * steps waited must not leave the upload reading it. */
    if (rc && x->load && x->load_async) {
        bcl_error ignored = {0};
        group_each(g, finish_one, true, &ignored);
        bcl_error_clear(&ignored);
    }
    return rc;
}
