/*
 * Several devices running one range of balls together (docs/DESIGN.md,
 * "Several devices"). One context per device, not per platform: each builds
 * its own program and the shards never move, so a shared context would only
 * tie their lifetimes and failures. A phase runs one host thread per device
 * (one queue's blocking waits never hold back another's), for that phase.
 */
#include "job/group_impl.h"
#include "measure/timing.h"
#include "ocl/program.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BALL_BYTES (4 * sizeof(float))

static void *thread_main(void *arg)
{
    member *m = arg;
    bcl_fault_device(m->pub.index);
    m->rc = m->fn(m, &m->err);
    bcl_fault_device(-1);
    return NULL;
}

/* The first failing device, in list order, gives the group's error. */
static int member_failed(bcl_group *g, bcl_error *e)
{
    for (size_t i = 0; i < g->count; i++) {
        member *m = &g->m[i];
        if (!m->rc)
            continue;
        int code = m->err.code ? m->err.code : m->rc, rc;
        /* A group of one: the error as it is. Else the selector tells apart
         * two devices of one name (most messages name the device). */
        if (g->count == 1)
            rc = bcl_fail(e, code, "%s", m->err.msg);
        else if (strstr(m->err.msg, m->pub.dev->name))
            rc = bcl_fail(e, code, "device %s: %s", m->pub.selector, m->err.msg);
        else
            rc = bcl_fail(e, code, "device %s '%s': %s", m->pub.selector, m->pub.dev->name,
                          m->err.msg);
        if (m->err.detail)
            bcl_error_set_detail(e, m->err.detail);
        if (m->err.cl_call[0] && !e->cl_call[0])
            bcl_error_set_cl(e, m->err.cl_call, m->err.cl_status);
        return rc;
    }
    return BCL_OK;
}

int group_each(bcl_group *g, member_fn fn, bool busy_only, bcl_error *e)
{
    /* One member at work runs on the calling thread: a thread would add
     * tens of microseconds to every phase, which a short GPU run shows. */
    size_t working = 0;
    for (size_t i = 0; i < g->count; i++)
        working += !(busy_only && g->m[i].pub.shard.count == 0);
    bool parallel = working > 1;
    pthread_t th[BCL_MAX_DEVICES];
    bool started[BCL_MAX_DEVICES] = {false};
    for (size_t i = 0; i < g->count; i++) {
        member *m = &g->m[i];
        if (m->err.code || m->err.detail)
            bcl_error_clear(&m->err);
        m->rc = BCL_OK;
        m->fn = fn;
        if (busy_only && m->pub.shard.count == 0)
            continue;
        /* Without a thread (none to be had) the phase still runs, in turn. */
        started[i] = parallel && pthread_create(&th[i], NULL, thread_main, m) == 0;
        if (!started[i])
            thread_main(m);
    }
    for (size_t i = 0; parallel && i < g->count; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    return member_failed(g, e);
}

int bcl_group_memory_fit(const bcl_device_info *const *devs, size_t count, size_t n,
                         unsigned host_copies, const char *what, bcl_error *e)
{
    if (count == 1)
        return bcl_memory_fit(devs[0], n, host_copies, what, e);
    /* Every CPU device's buffers live in host memory: at most one more
     * state, whatever the split. */
    bool cpu = false;
    double bytes = (double)n * BALL_BYTES, dev_total = 0;
    for (size_t i = 0; i < count; i++) {
        cpu = cpu || (devs[i]->type & BCL_DEVICE_CPU);
        dev_total += (double)devs[i]->global_mem;
    }
    if (n == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: no balls to simulate", what);
    int rc = bcl_host_memory_fit(n, host_copies + cpu, what, e);
    if (rc)
        return rc;
    if (bytes > dev_total)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s: %zu balls need %.1f MiB, more than the %.1f MiB of memory of the %zu "
                        "devices together",
                        what, n, bytes / 1048576.0, dev_total / 1048576.0, count);
    return BCL_OK;
}

size_t bcl_group_size(const bcl_group *g)
{
    return g->count;
}

const bcl_group_member *bcl_group_member_at(const bcl_group *g, size_t i)
{
    return &g->m[i].pub;
}

bcl_sim *bcl_group_sim(bcl_group *g, size_t i)
{
    return g->m[i].sim;
}

double bcl_group_calibrate_ms(const bcl_group *g)
{
    return g->calibrate_ms;
}

/* The plan of m for balls [first, first + balls). */
static int resolve(member *m, size_t first, size_t balls, bcl_error *e)
{
    bcl_plan_request r = m->g->o.req;
    r.params = m->g->params;
    r.first = first;
    r.balls = balls ? balls : 1;
    return bcl_plan_resolve(m->ctx, &r, &m->pub.plan, e);
}

static int open_one(member *m, bcl_error *e)
{
    int rc = bcl_context_create(m->pub.dev, m->g->o.model, &m->g->o.ctx, &m->ctx, &m->pub.build, e);
    /* Several devices are weighed with the plan of the whole range (its
     * block cuts the shards); a group of one resolves it when it first runs. */
    if (rc == BCL_OK && m->g->count > 1)
        rc = resolve(m, m->g->o.req.first, m->g->o.req.balls, e);
    return rc;
}

int bcl_group_open(const bcl_device_info *const *devs, size_t count, const bcl_group_opts *o,
                   bcl_group **out, bcl_error *e)
{
    *out = NULL;
    if (count == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "no device to run on");
    if (count > BCL_MAX_DEVICES)
        return bcl_fail(e, BCL_EXIT_INPUT, "%zu devices: a run uses at most %d", count,
                        BCL_MAX_DEVICES);
    /* A fault aimed at a device beyond the list is a mistake in a test of
     * several devices; a run on one device ignores one aimed elsewhere. */
    if (count > 1)
        bcl_fault_devices(count);
    bcl_group *g = calloc(1, sizeof *g);
    if (!g || !(g->m = calloc(count, sizeof *g->m))) {
        free(g);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    g->o = *o;
    /* The tuned rule, for every run (docs/PERFORMANCE.md). */
    g->o.req.take_tuned = bcl_plan_tuned_rule(&o->req);
    g->count = count;
    if (o->req.params)
        memcpy(g->params, o->req.params, bcl_model_param_floats(o->model) * sizeof(float));
    for (size_t i = 0; i < count; i++) {
        member *m = &g->m[i];
        m->g = g;
        m->pub.dev = devs[i];
        m->pub.index = (int)i;
        snprintf(m->pub.selector, sizeof m->pub.selector, "%u:%u", devs[i]->platform_index,
                 devs[i]->device_index);
        m->pub.shard.first = o->req.first;
        m->pub.shard.count = i == 0 ? o->req.balls : 0;
        m->pub.rate_how = "";
    }
    int rc = group_each(g, open_one, false, e);
    if (rc)
        bcl_group_close(g);
    else
        *out = g;
    return rc;
}

/* The balls a calibration runs: enough to fill the device (a GPU needs
 * millions in flight), few enough to take a fraction of a second. */
static size_t calibration_balls(const bcl_device_info *d, size_t range)
{
    size_t n = (d->type & BCL_DEVICE_CPU) ? (size_t)1 << 20 : (size_t)1 << 24;
    cl_ulong per_alloc = d->max_alloc / BALL_BYTES;
    if (per_alloc && n > per_alloc)
        n = (size_t)per_alloc;
    return n < range ? n : range;
}

/* Measures m alone on the first balls of the range with its own plan. The
 * rate is the host clock's, what a run waits for (a CPU device on a busy
 * host computes in bursts its profiling clock does not show). The fixed
 * cost of a launch is the round trip over one block, measured apart: the
 * gap between the big launches' host and device clocks would count a busy
 * host's delays as overhead. */
static int calibrate_one(member *m, bcl_error *e)
{
    bcl_group *g = m->g;
    double t0 = bcl_now_ms();
    size_t n = calibration_balls(m->pub.dev, g->o.req.balls);
    bcl_sim *sim = NULL, *tiny = NULL;
    bcl_plan saved = m->pub.plan;
    /* Without the state (an MPI rank weighs before it holds balls) the
     * model's random fill stands in: a step's rate does not depend on it. */
    float *own = NULL;
    if (!m->in) {
        own = malloc(n * BALL_BYTES);
        if (!own)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu calibration balls", n);
        bcl_model_fill(g->o.model, own, 0, n, BCL_INIT_RANDOM, 1, g->params);
    }
    const float *in = own ? own : m->in;
    int rc = resolve(m, g->o.req.first, n, e);
    /* The rate is the host clock's: no launch's own time is read. */
    m->pub.plan.untimed_launches = true;
    rc = rc ? rc : bcl_sim_create(m->ctx, in, n, &sim, e);
    rc = rc ? rc : bcl_sim_warmup(sim, &m->pub.plan, NULL, e);
    bcl_measurement ms;
    bcl_measure_opts mo = {.repeats = 3,
                           .repeat_ms = g->o.calibrate_ms > 0 ? g->o.calibrate_ms : 30,
                           .max_steps = 1000000};
    /* At most one queue window of launches per timed run, so that it waits
     * on no event (bcl_sim_run does from the second window on): else a
     * calibration would wait, and meet a fault injected there
     * (BALLCL_FAULT=clWaitForEvents:1@0), on a fast host only. */
    if (rc == BCL_OK) {
        uint64_t window = BCL_QUEUE_WINDOW / bcl_sim_buffers(sim);
        uint64_t cap = (uint64_t)m->pub.plan.steps_per_launch * (window ? window : 1);
        if (cap < mo.max_steps)
            mo.max_steps = cap;
        rc = bcl_measure_sim(sim, &m->pub.plan, &mo, &ms, e);
    }
    bcl_sim_destroy(sim);
    size_t few = m->pub.plan.block < n ? m->pub.plan.block : n;
    bcl_stats trip = {0};
    rc = rc ? rc : resolve(m, g->o.req.first, few, e);
    rc = rc ? rc : bcl_sim_create(m->ctx, in, few, &tiny, e);
    rc = rc ? rc : bcl_measure_roundtrip(tiny, &m->pub.plan, 5, &trip, e);
    bcl_sim_destroy(tiny);
    free(own);
    m->pub.plan = saved;
    if (rc)
        return rc;
    m->pub.rate = ms.wall_us.median > 0 ? (double)n / (ms.wall_us.median * 1e-6) : 0;
    m->pub.launch_ms = trip.median / 1e3;
    m->pub.rate_how = "calibrated";
    m->pub.calibrate_ms = bcl_now_ms() - t0;
    return BCL_OK;
}

/* The rate 'ballcl tune' stored for the kernel kind m's plan uses, or 0. */
static double tuned_rate(member *m)
{
    const bcl_tuned *t = bcl_context_tuned(m->ctx, NULL);
    const bcl_tuned_entry *en = m->pub.plan.fused ? &t->fused : &t->single;
    if (!en->found || !(en->us_per_step > 0) || t->balls == 0)
        return 0;
    return (double)t->balls / (en->us_per_step * 1e-6);
}

/* Two devices of one make, model, driver and size: the same hardware. */
static bool same_device(const bcl_device_info *a, const bcl_device_info *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->platform_name, b->platform_name) == 0 &&
           strcmp(a->version, b->version) == 0 && strcmp(a->driver, b->driver) == 0 &&
           a->compute_units == b->compute_units && a->clock_mhz == b->clock_mhz &&
           a->global_mem == b->global_mem;
}

/* Identical devices calibrated apart get the mean of their measurements: a
 * busy moment during one device's 100 ms must not tilt an even split. */
static void pool_identical(bcl_group *g)
{
    for (size_t i = 0; i < g->count; i++) {
        bcl_group_member *a = &g->m[i].pub, *same[BCL_MAX_DEVICES];
        double rate = 0, launch = 0;
        size_t k = 0;
        for (size_t j = 0; j < g->count && strcmp(a->rate_how, "calibrated") == 0; j++) {
            bcl_group_member *b = &g->m[j].pub;
            if (strcmp(b->rate_how, "calibrated") == 0 && same_device(a->dev, b->dev)) {
                rate += b->rate;
                launch += b->launch_ms;
                same[k++] = b;
            }
        }
        for (size_t j = 0; j < k && k > 1; j++) {
            same[j]->rate = rate / (double)k;
            same[j]->launch_ms = launch / (double)k;
            same[j]->rate_how = "calibrated, pooled";
        }
    }
}

static unsigned group_block(const bcl_group *g)
{
    unsigned b = 1;
    for (size_t i = 0; i < g->count; i++)
        if (g->m[i].pub.plan.block > b)
            b = g->m[i].pub.plan.block; /* powers of two: the largest is a multiple of all */
    return b;
}

static int apply_split(bcl_group *g, const bcl_shard *sh, const bcl_split_why *why, bcl_error *e)
{
    const size_t first = g->o.req.first, balls = g->o.req.balls;
    /* What the devices with balls need for all of them, for the report. */
    double sr = 0, s = g->o.req.steps ? (double)g->o.req.steps : 1;
    for (size_t i = 0; i < g->count; i++)
        if (sh[i].count)
            sr += g->m[i].pub.rate;
    double t_others = sr > 0 ? (double)balls * s / sr * 1e3 : 0;
    unsigned block = group_block(g);
    for (size_t i = 0; i < g->count; i++) {
        bcl_group_member *p = &g->m[i].pub;
        p->shard.first = first + sh[i].first;
        p->shard.count = sh[i].count;
        p->share = (double)sh[i].count / (double)balls;
        p->why = why[i];
        p->excluded[0] = '\0';
        if (why[i] == BCL_SPLIT_SLOWER)
            snprintf(p->excluded, sizeof p->excluded,
                     "no balls: with its overhead of %.3f ms per launch it would end later than "
                     "the other devices end with all %zu balls (%.1f ms)",
                     p->launch_ms, balls, t_others);
        else if (why[i] == BCL_SPLIT_UNDER_BLOCK)
            snprintf(p->excluded, sizeof p->excluded,
                     "no balls: its share by rate would be under one block of %u balls", block);
        else if (why[i] == BCL_SPLIT_MINOR)
            snprintf(p->excluded, sizeof p->excluded,
                     "no balls: its share by rate would be under %.0f%% of them, a gain within "
                     "the error of calibrating each device alone",
                     100 * BCL_SPLIT_MIN_SHARE);
        else if (why[i] == BCL_SPLIT_NO_RATE)
            snprintf(p->excluded, sizeof p->excluded, "no balls: no rate to weigh it by");
        if (p->shard.count) {
            char what[64];
            snprintf(what, sizeof what, "device %s", p->selector);
            int rc = bcl_memory_fit(p->dev, p->shard.count, 0, what, e);
            if (rc)
                return rc;
        }
    }
    return BCL_OK;
}

int bcl_group_split_given(bcl_group *g, const size_t *counts, bcl_error *e)
{
    size_t sum = 0;
    bcl_shard sh[BCL_MAX_DEVICES];
    bcl_split_why why[BCL_MAX_DEVICES];
    for (size_t i = 0; i < g->count; i++) {
        sh[i].first = sum;
        sh[i].count = counts[i];
        sum += counts[i];
        why[i] = counts[i] ? BCL_SPLIT_USED : BCL_SPLIT_NO_RATE;
        g->m[i].pub.rate_how = "given";
    }
    if (sum != g->o.req.balls)
        return bcl_fail(e, BCL_EXIT_INPUT, "the shards hold %zu balls, the group %zu", sum,
                        g->o.req.balls);
    return apply_split(g, sh, why, e);
}

/* BALLCL_TEST_SPLIT="c0,c1,...": the shard counts, so that a test can make
 * every device take part however fast each is on a busy machine; -1 when
 * it is not set. */
static int test_split(const bcl_group *g, size_t *counts, bcl_error *e)
{
    const char *env = getenv("BALLCL_TEST_SPLIT");
    if (!env || !*env)
        return -1;
    const char *p = env;
    for (size_t i = 0; i < g->count; i++) {
        char *end;
        counts[i] = (size_t)strtoull(p, &end, 10);
        bool last = i + 1 == g->count;
        if (end == p || *end != (last ? '\0' : ','))
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "BALLCL_TEST_SPLIT='%s': expected %zu comma-separated ball counts", env,
                            g->count);
        p = end + 1;
    }
    return BCL_OK;
}

/* The launch costs of the K rule, one device at a time in -d order, once
 * per kind of device: identical devices take the first one's figures, else
 * each would keep its own in the one file they share. */
static int share_costs(bcl_group *g, bcl_error *e)
{
    for (size_t i = 0; i < g->count && g->count > 1 && !g->o.req.steps_per_launch; i++) {
        member *m = &g->m[i];
        size_t j = 0;
        while (j < i &&
               !(bcl_context_costs(g->m[j].ctx)->known && same_device(g->m[j].pub.dev, m->pub.dev)))
            j++;
        bcl_launch_costs k;
        if (j < i) {
            *bcl_context_costs(m->ctx) = *bcl_context_costs(g->m[j].ctx);
            continue;
        }
        bcl_fault_device((int)i);
        int rc = bcl_launch_costs_get(m->ctx, g->params, &k, e);
        bcl_fault_device(-1);
        if (rc)
            return rc;
    }
    return BCL_OK;
}

int bcl_group_weigh(bcl_group *g, const float *state, bool always, bcl_error *e)
{
    size_t c = g->count;
    /* A group of one takes its range whole: nothing to weigh. */
    if ((g->weighed = c == 1 && !always)) {
        g->m[0].pub.rate_how = "only device";
        g->m[0].pub.rate = 1;
        return BCL_OK;
    }
    int rc = share_costs(g, e);
    if (rc)
        return rc;
    double t0 = bcl_now_ms();
    bool measured = false;
    for (size_t i = 0; i < c && rc == BCL_OK; i++) {
        member *m = &g->m[i];
        if ((m->pub.rate = tuned_rate(m)) > 0) {
            m->pub.rate_how = "tuned";
            m->pub.launch_ms = 0;
        } else {
            /* One device at a time: each is measured alone. */
            m->in = state;
            m->fn = calibrate_one;
            thread_main(m);
            rc = m->rc ? member_failed(g, e) : BCL_OK;
            measured = true;
        }
    }
    if (measured)
        g->calibrate_ms = bcl_now_ms() - t0;
    if (rc == BCL_OK)
        pool_identical(g);
    g->weighed = rc == BCL_OK;
    return rc;
}

double bcl_group_rate(const bcl_group *g)
{
    double sum = 0;
    for (size_t i = 0; i < g->count; i++)
        sum += g->m[i].pub.rate;
    return sum;
}

int bcl_group_cut(bcl_group *g, size_t first, size_t balls, bcl_error *e)
{
    if (balls == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "no balls to simulate");
    /* The new range: every plan is resolved again for its shard. */
    g->o.req.first = first;
    g->o.req.balls = balls;
    size_t c = g->count;
    for (size_t i = 0; i < c; i++)
        g->m[i].planned = false;
    if (c == 1) {
        const bcl_shard whole = {.count = balls};
        const bcl_split_why used = BCL_SPLIT_USED;
        return apply_split(g, &whole, &used, e);
    }
    /* A group holds at most BCL_MAX_DEVICES (bcl_group_open). */
    size_t counts[BCL_MAX_DEVICES];
    int rc = test_split(g, counts, e);
    if (rc >= 0)
        return rc ? rc : bcl_group_split_given(g, counts, e);
    if (!g->weighed)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "the devices were not weighed before the split");
    double rate[BCL_MAX_DEVICES], fixed[BCL_MAX_DEVICES];
    bcl_shard sh[BCL_MAX_DEVICES];
    bcl_split_why why[BCL_MAX_DEVICES];
    uint64_t k = 0;
    for (size_t i = 0; i < c; i++) {
        rate[i] = g->m[i].pub.rate;
        k = g->m[i].pub.plan.steps_per_launch;
        uint64_t s = g->o.req.steps ? g->o.req.steps : k;
        uint64_t launches = (s + k - 1) / k;
        fixed[i] = g->m[i].pub.launch_ms * 1e-3 * (double)launches;
    }
    double steps = g->o.req.steps ? (double)g->o.req.steps : (double)(k ? k : 1);
    if (bcl_split(balls, c, rate, fixed, steps, group_block(g), BCL_SPLIT_MIN_SHARE, sh, why) == 0)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "no device has a usable rate to split the balls by");
    return apply_split(g, sh, why, e);
}

int bcl_group_split(bcl_group *g, const float *state, bcl_error *e)
{
    /* BALLCL_TEST_SPLIT gives the counts: nothing to weigh. */
    const char *given = getenv("BALLCL_TEST_SPLIT");
    int rc = given && *given && g->count > 1 ? BCL_OK : bcl_group_weigh(g, state, false, e);
    return rc ? rc : bcl_group_cut(g, g->o.req.first, g->o.req.balls, e);
}

/* Puts the member's shard of m->in on its device: the simulation's
 * buffers are kept while they hold the shard (bcl_sim_load), else made. */
static int upload_one(member *m, bcl_error *e)
{
    const bcl_shard *s = &m->pub.shard;
    const float *from = m->in + 4 * (s->first - m->g->o.req.first);
    int rc = !m->sim    ? bcl_sim_create(m->ctx, from, s->count, &m->sim, e)
             : m->async ? bcl_sim_load_async(m->sim, from, s->count, e)
                        : bcl_sim_load(m->sim, from, s->count, e);
    if (rc == BCL_OK && m->check)
        rc = bcl_sim_check_finite(m->sim, &m->in_bad, e);
    if (rc == BCL_OK)
        m->pub.buffers = bcl_sim_buffers(m->sim);
    return rc;
}

static bool warmed(const member *m, const bcl_plan *p)
{
    for (size_t i = 0; i < m->nwarm; i++)
        if (m->warm[i].local == p->launch.local && strcmp(m->warm[i].kernel, p->kernel) == 0)
            return true;
    return false;
}

int group_prepare(member *m, bcl_error *e)
{
    int rc = BCL_OK;
    if (!m->planned) {
        if ((rc = resolve(m, m->pub.shard.first, m->pub.shard.count, e)))
            return rc;
        bcl_plan_tuned_note(m->ctx, &m->g->o.req, &m->pub.plan, m->pub.tuned_note,
                            sizeof m->pub.tuned_note);
        m->planned = true;
        m->pub.plan_gen++;
    }
    m->warm_ms_now = 0;
    if (!warmed(m, &m->pub.plan)) {
        if ((rc = bcl_sim_warmup(m->sim, &m->pub.plan, &m->warm_ms_now, e)))
            return rc;
        m->pub.first_launch_ms = m->warm_ms_now;
        size_t i = m->nwarm < GROUP_WARM_MAX ? m->nwarm++ : GROUP_WARM_MAX - 1;
        snprintf(m->warm[i].kernel, sizeof m->warm[i].kernel, "%s", m->pub.plan.kernel);
        m->warm[i].local = m->pub.plan.launch.local;
    }
    /* After the first launch: the entry holds what the driver compiled for
     * it (PoCL: the work-group function for this local size). */
    if (!m->stored) {
        bcl_context_cache_store(m->ctx, &m->pub.build);
        m->stored = true;
    }
    return BCL_OK;
}

static int load_one(member *m, bcl_error *e)
{
    int rc = upload_one(m, e);
    return rc ? rc : group_prepare(m, e);
}

/* fn (an upload) on every member with balls, each taking its shard of state. */
static int each_input(bcl_group *g, member_fn fn, const float *state, bool async, bool check,
                      bcl_error *e)
{
    for (size_t i = 0; i < g->count; i++) {
        g->m[i].in = state;
        g->m[i].async = async;
        g->m[i].check = check;
        g->m[i].in_bad = 0;
    }
    return group_each(g, fn, true, e);
}

int bcl_group_load(bcl_group *g, const float *state, bcl_error *e)
{
    return each_input(g, load_one, state, false, false, e);
}

int group_upload(bcl_group *g, const float *state, bool async, bool check, bcl_error *e)
{
    return each_input(g, upload_one, state, async, check, e);
}

void bcl_group_close(bcl_group *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->count; i++) {
        member *m = &g->m[i];
        bcl_fault_device(m->pub.index);
        bcl_sim_destroy(m->sim);
        bcl_context_destroy(m->ctx);
        bcl_fault_device(-1);
        bcl_error_clear(&m->err);
    }
    free(g->m);
    free(g);
}

int bcl_group_host_buffer(bcl_group *g, size_t bytes, bcl_host_buffer **out, bcl_error *e)
{
    return bcl_host_buffer_create(g->m[0].ctx, bytes, out, e);
}

int bcl_group_keep_launch_costs(bcl_group *g, bcl_error *e)
{
    int rc = BCL_OK;
    for (size_t i = 0; i < g->count; i++) {
        bcl_error one = {0};
        int r = bcl_context_keep_launch_costs(g->m[i].ctx, &one);
        if (r && !rc)
            rc = bcl_fail(e, r, "%s", one.msg);
        bcl_error_clear(&one);
    }
    return rc;
}
